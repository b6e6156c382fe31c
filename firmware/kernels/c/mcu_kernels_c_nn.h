/*
 * Portable kernels: the nn family (declarations and parameter structs).
 *
 * Depthwise convolution, fully connected, transpose convolution, average and max pooling, mean.
 * Every kernel is bit-exact with the TensorFlow Lite Micro reference kernel of its op. Tensors are
 * NHWC int8; per-channel requantization through mcu_requantize (multiplier a Q0.31 value in
 * [0, 2^31), shift in [-31, 30]). The parameter structs are filled at compile time by the code
 * generator (planner/targets/c_lowerings/nn.py).
 */
#ifndef MCU_KERNELS_C_NN_H
#define MCU_KERNELS_C_NN_H

#include <stdint.h>

#include "mcuforge_fixedpoint.h"

/* ---- DEPTHWISE_CONV_2D ------------------------------------------------------------------------ */

/** Parameters of mcu_depthwise_conv_2d_s8. out_c = in_c * ch_mult; output channel ic * ch_mult + m
    reads input channel ic. input_offset is the negated input zero point, in [-127, 128];
    output_offset the output zero point, in [-128, 127]; act_min <= act_max in [-128, 127] the fused
    activation clamp. pad_top/pad_left >= 0: padding before the first row/column (taps that fall in
    the padding contribute 0). Strides and dilations >= 1. */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c, ch_mult;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t input_offset, output_offset, act_min, act_max;
} mcu_depthwise_conv_2d_params;

/** int8 NHWC depthwise convolution. weights [1, k_h, k_w, out_c] (symmetric, per channel or per
    tensor), bias int32 [out_c] or NULL, multiplier/shift [out_c]; output [batches, out_h, out_w, out_c]. */
void mcu_depthwise_conv_2d_s8(const mcu_depthwise_conv_2d_params *p, const int8_t *input, const int8_t *weights,
                              const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                              int8_t *output);

/* ---- FULLY_CONNECTED ------------------------------------------------------------------------- */

/** Parameters of mcu_fully_connected_s8: the input is read as `rows` rows of `depth` values.
    input_offset = -input zero point, in [-127, 128]; weight_offset = -weight zero point, in
    [-127, 128] (always 0 with per-unit weight scales, as TFLM applies it only per tensor);
    output_offset in [-128, 127]; act_min <= act_max in [-128, 127]. */
typedef struct {
    int32_t rows, depth, units;
    int32_t input_offset, weight_offset, output_offset, act_min, act_max;
} mcu_fully_connected_params;

/** int8 fully connected layer: output[r, u] = requantize(sum_d (x[r, d] + input_offset) *
    (w[u, d] + weight_offset) + bias[u]). weights [units, depth], bias int32 [units] or NULL,
    multiplier/shift [units] (the per-tensor multiplier repeated when the weights have one scale);
    output [rows, units]. */
void mcu_fully_connected_s8(const mcu_fully_connected_params *p, const int8_t *input, const int8_t *weights,
                            const int32_t *bias, const int32_t *multiplier, const int32_t *shift, int8_t *output);

/* ---- TRANSPOSE_CONV -------------------------------------------------------------------------- */

/** Parameters of mcu_transpose_conv_s8. Input element (y, x) scatters into the output at
    (y * stride_h - pad_top + ky, x * stride_w - pad_left + kx); contributions outside the output are
    dropped. pad_top/pad_left >= 0, strides >= 1. Offsets and clamp as mcu_depthwise_conv_2d_params. */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
    int32_t input_offset, output_offset, act_min, act_max;
} mcu_transpose_conv_params;

/** Scratch bytes of mcu_transpose_conv_s8: one int32 accumulator per output element. */
#define MCU_TRANSPOSE_CONV_S8_SCRATCH_BYTES(batches, out_h, out_w, out_c) (4 * (batches) * (out_h) * (out_w) * (out_c))

/** int8 NHWC transposed convolution. weights [out_c, k_h, k_w, in_c] (symmetric), bias int32 [out_c]
    or NULL, multiplier/shift [out_c]. scratch: MCU_TRANSPOSE_CONV_S8_SCRATCH_BYTES(batches, out_h,
    out_w, out_c) bytes of int32 accumulators, 4-byte aligned, provided by the caller. output
    [batches, out_h, out_w, out_c]. */
void mcu_transpose_conv_s8(const mcu_transpose_conv_params *p, const int8_t *input, const int8_t *weights,
                           const int32_t *bias, const int32_t *multiplier, const int32_t *shift, int32_t *scratch,
                           int8_t *output);

/* ---- AVERAGE_POOL_2D, MAX_POOL_2D ------------------------------------------------------------ */

/** Parameters of the pooling kernels. Input and output share their quantization, so no rescale:
    windows are clipped to the input (padding is never read), act_min <= act_max in [-128, 127]
    is the fused activation clamp. pad_top/pad_left >= 0, filter sizes and strides >= 1. */
typedef struct {
    int32_t batches, in_h, in_w, channels, out_h, out_w;
    int32_t filter_h, filter_w, stride_h, stride_w, pad_top, pad_left;
    int32_t act_min, act_max;
} mcu_pool_2d_params;

/** int8 NHWC average pooling: the sum over the window's valid elements divided by their count,
    rounding half away from zero, then clamped. */
void mcu_average_pool_2d_s8(const mcu_pool_2d_params *p, const int8_t *input, int8_t *output);

/** int8 NHWC max pooling: the largest valid element of each window, then clamped. */
void mcu_max_pool_2d_s8(const mcu_pool_2d_params *p, const int8_t *input, int8_t *output);

/* ---- MEAN ------------------------------------------------------------------------------------ */

/** Parameters of mcu_mean_s8. The input is seen as [outer, reduce_outer, middle, reduce_inner,
    inner] (consecutive dimensions merged; at most two runs of reduced axes), the output as
    [outer, middle, inner]. count = reduce_outer * reduce_inner summed elements; sum_offset =
    -input_zero_point * count (wrapped to int32); multiplier/shift the input/output rescale with 1/count
    folded in (multiplier in [0, 2^31), shift in [-31, 30]); output_offset in [-128, 127]. */
typedef struct {
    int32_t outer, reduce_outer, middle, reduce_inner, inner;
    int32_t sum_offset, multiplier, shift, output_offset;
} mcu_mean_params;

/** int8 mean over the reduced dimensions (TFLM's integer mean): requantize(sum + sum_offset) +
    output_offset, clamped to [-128, 127]. */
void mcu_mean_s8(const mcu_mean_params *p, const int8_t *input, int8_t *output);

#endif /* MCU_KERNELS_C_NN_H */
