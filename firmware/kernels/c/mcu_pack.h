/*
 * Portable PACK (TFLM pack.cc, PackImpl): stack same-shape tensors along a new axis, a plain copy
 * of any element size, any number of inputs.
 */
#ifndef MCU_PACK_H
#define MCU_PACK_H

#include <stdint.h>

/** Parameters of mcu_pack. The output is outer_size blocks; block k holds, in input order, the k-th
    run of copy_size consecutive elements of each input. */
typedef struct {
    int32_t elem_size;  /**< element size in bytes: 1 or 4 */
    int32_t num_inputs; /**< >= 1 */
    int32_t outer_size; /**< product of the output dims before the new axis, >= 1 */
    int32_t copy_size;  /**< product of the output dims after the new axis, >= 1 */
} mcu_pack_params;

/** Stack num_inputs tensors along a new axis; inputs[i] points at input i. */
void mcu_pack(const mcu_pack_params *p, const void *const inputs[], void *output);

#endif /* MCU_PACK_H */
