/*
 * Portable GATHER and GATHER_ND (any element size): slices of the params picked by int32 indices,
 * a model input, an intermediate result or a constant array. TFLM fails the invoke on an index
 * outside the params; these kernels write zero bytes for such a slice and return non-zero, and
 * the generated run stops there with <PREFIX>_ERR_INDEX.
 */
#ifndef MCU_GATHER_INDEXED_H
#define MCU_GATHER_INDEXED_H

#include <stdint.h>

/** Parameters of mcu_gather_axis: params seen as [batches, outer, axis_size, inner], indices as
    [batches, coords], the output as [batches, outer, coords, inner]. */
typedef struct {
    int32_t elem_size;                   /**< element size in bytes: 1, 2 or 4 */
    int32_t batches, outer, axis_size;   /**< >= 1 */
    int32_t coords, inner;               /**< >= 1 */
} mcu_gather_axis_params;

/** GATHER: output row (b, o, k) = params row (b, o, indices[b * coords + k]); zeros when that
    index is outside [0, axis_size). Returns 0, or 1 when an index was outside. */
int32_t mcu_gather_axis(const mcu_gather_axis_params *p, const void *params, const int32_t *indices, void *output);

#define MCU_GATHER_ND_DEPTH 5

/** Parameters of mcu_gather_nd: `slices` index vectors of `depth` int32 entries each. */
typedef struct {
    int32_t elem_size;                   /**< element size in bytes: 1, 2 or 4 */
    int32_t slices;                      /**< index vectors, >= 1 */
    int32_t depth;                       /**< entries per index vector, 1 .. MCU_GATHER_ND_DEPTH */
    int32_t slice_size;                  /**< elements per slice, >= 1 */
    int32_t params_size;                 /**< elements of the params */
    int32_t stride[MCU_GATHER_ND_DEPTH]; /**< elements below each indexed axis (0 past depth) */
} mcu_gather_nd_params;

/** GATHER_ND: slice i is the slice_size params elements from the flat position sum_j(index_j *
    stride[j]) (int32 arithmetic, wrapping as TFLM's); zeros when they do not lie in the params.
    Returns 0, or 1 when a slice did not lie in the params. */
int32_t mcu_gather_nd(const mcu_gather_nd_params *p, const void *params, const int32_t *indices, void *output);

#endif /* MCU_GATHER_INDEXED_H */
