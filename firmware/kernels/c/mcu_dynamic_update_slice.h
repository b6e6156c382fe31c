/*
 * Portable DYNAMIC_UPDATE_SLICE (TFLM's dynamic_update_slice.cc): the operand copied to the output,
 * then the update written over it at start indices read at run time, each clamped to
 * [0, operand dim - update dim]. Elements are copied as stored (any element size). The output may
 * be the operand itself (in place); the update must not overlap the output.
 */
#ifndef MCU_DYNAMIC_UPDATE_SLICE_H
#define MCU_DYNAMIC_UPDATE_SLICE_H

#include <stdint.h>

#define MCU_DYNAMIC_UPDATE_SLICE_RANK 6

/** whole: the update has as many elements as the operand and is copied as the output (size
    elements); otherwise operand_dims and update_dims are the shapes left-padded with 1 to rank 6
    (update_dims[k] <= operand_dims[k]) and the indices hold `rank` entries of index_size bytes
    (4: int32, 8: int64), one per operand axis. */
typedef struct {
    int32_t elem_size;  /**< 1 or 4 */
    int32_t rank;       /**< the operand's rank, 0 to 6 */
    int32_t index_size; /**< 4 or 8 */
    int32_t whole;      /**< 0 or 1 */
    int32_t size;       /**< operand elements */
    int32_t operand_dims[MCU_DYNAMIC_UPDATE_SLICE_RANK];
    int32_t update_dims[MCU_DYNAMIC_UPDATE_SLICE_RANK];
} mcu_dynamic_update_slice_params;

void mcu_dynamic_update_slice(const mcu_dynamic_update_slice_params *p, const void *operand, const void *update,
                              const void *indices, void *output);

#endif /* MCU_DYNAMIC_UPDATE_SLICE_H */
