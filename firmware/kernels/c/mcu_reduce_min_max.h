/*
 * Portable REDUCE_MAX and REDUCE_MIN (TFLM's ReduceGeneric on int8): the largest / smallest raw
 * value over the reduced axes; input and output share one quantization, nothing is requantized.
 */
#ifndef MCU_REDUCE_MIN_MAX_H
#define MCU_REDUCE_MIN_MAX_H

#include <stdint.h>

#define MCU_REDUCE_RANK 6

/** Parameters of mcu_reduce_max_s8 / mcu_reduce_min_s8: the input as dims[0] x .. x dims[5]
    (row-major; runs of kept and of reduced axes merged), and for each the output stride of its
    index: 0 along a reduced run. The innermost kept run has stride 1. */
typedef struct {
    int32_t dims[MCU_REDUCE_RANK];        /**< >= 1 */
    int32_t out_stride[MCU_REDUCE_RANK];  /**< >= 0 */
    int32_t out_size;                     /**< output elements, >= 1 */
} mcu_reduce_params;

/** output[o] = max (min) of the input elements whose index maps to o; the input is read once, in order. */
void mcu_reduce_max_s8(const mcu_reduce_params *p, const int8_t *input, int8_t *output);
void mcu_reduce_min_s8(const mcu_reduce_params *p, const int8_t *input, int8_t *output);

#endif /* MCU_REDUCE_MIN_MAX_H */
