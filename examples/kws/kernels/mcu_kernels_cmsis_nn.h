/*
 * mcuforge optimized int8 kernels (target "cmsis-nn"), bit-exact with the TensorFlow Lite Micro
 * reference kernels. Our own code in the style of Arm's CMSIS-NN.
 *
 * Conventions: mcu_cmsis_<op>_s8(params, inputs..., constants..., [scratch,] output). Parameters
 * are a const struct the code generator fills at compile time; constants are precomputed offline
 * (planner/targets/cmsis_nn.py):
 *   - multiplier/shift: per output channel, TFLM's QuantizeMultiplier of in * w / out scales;
 *   - bias: for convolutions and fully connected layers, folded with the input zero point,
 *     bias' = bias + input_offset * sum(w), so the inner loops multiply raw int8 values (an im2col
 *     padded tap reads the zero point and adds nothing); depthwise kernels take the layer's bias;
 *   - weights: natural layouts (OHWI rows, [k_h * k_w][out_c] depthwise taps, [units][depth]);
 *     any SIMD-friendly ordering is built in scratch by the kernel itself, so the same generated
 *     C serves every core.
 *   - rq: per output channel {m, add, right} for the DSP paths' fast requantization (mcu_cmsis_rq in
 *     mcu_cmsis_dsp.h), or NULL when the planner could not prove it exact for the layer (the
 *     plain and MVE paths ignore it);
 * Each kernel has a plain C path (the readable reference, any C compiler) and SIMD paths:
 * MCU_CMSIS_USE_DSP (mcu_cmsis_dsp.h, __ARM_FEATURE_DSP: Cortex-M4/M7/M33/M55) uses the Armv7E-M
 * DSP instructions, MCU_CMSIS_USE_MVE (mcu_cmsis_mve.h, __ARM_FEATURE_MVE: Cortex-M55/M85) uses
 * Helium and takes precedence. All compute exactly the same integers.
 *
 * Value ranges: input_offset = -input zero point in [-127, 128]; output_offset = output zero
 * point in [-128, 127]; act_min <= act_max in [-128, 127]; shift in [-31, 30].
 */
#ifndef MCU_KERNELS_CMSIS_NN_H
#define MCU_KERNELS_CMSIS_NN_H

#include <stdint.h>

#include "mcuforge_fixedpoint.h"

/** Parameters of the convolutions (mcu_cmsis_conv2d_s8, mcu_cmsis_conv2d_1x1_s8). Batch 1, NHWC.
    pad_top/pad_left: padding before the first row/column (TFLite's SAME placement), >= 0. */
typedef struct {
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t input_offset, output_offset, act_min, act_max;
} mcu_cmsis_conv_params;

/** Parameters of the depthwise convolutions: out_c = in_c * depth_multiplier; output channel c
    reads input channel c / depth_multiplier. band_rows: on Helium's column path, the rows of each
    band after a first band of four (0: all the rows in one band, the fastest; bands let the output
    overlap the input, planner/overlap.py). */
typedef struct {
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, depth_multiplier;
    int32_t input_offset, output_offset, act_min, act_max;
    int32_t band_rows;
} mcu_cmsis_dw_conv_params;

/** Parameters of mcu_cmsis_fully_connected_s8: `rows` input vectors of `depth` values, `units`
    outputs each (the input offset is folded into the bias). */
typedef struct {
    int32_t rows, depth, units;
    int32_t output_offset, act_min, act_max;
} mcu_cmsis_fc_params;

/** Parameters of the pools: a k_h x k_w window clipped to the input (padding is never read). */
typedef struct {
    int32_t in_h, in_w, channels, out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
    int32_t act_min, act_max;
} mcu_cmsis_pool_params;

/** Parameters of mcu_cmsis_add_s8 (TFLM's AddFunc): each input, offset and shifted left by
    left_shift (20), is rescaled by (multiplier, shift <= 0); their sum by the output pair. */
typedef struct {
    int32_t size, input1_offset, input2_offset, left_shift;
    int32_t input1_multiplier, input1_shift, input2_multiplier, input2_shift;
    int32_t output_multiplier, output_shift, output_offset, act_min, act_max;
} mcu_cmsis_add_params;

/** Parameters of mcu_cmsis_mul_s8: (x1 + offset1) * (x2 + offset2) rescaled by (multiplier, shift). */
typedef struct {
    int32_t size, input1_offset, input2_offset;
    int32_t output_multiplier, output_shift, output_offset, act_min, act_max;
} mcu_cmsis_mul_params;

/** Parameters of mcu_cmsis_softmax_s8 (TFLM's CalculateSoftmaxParams): input_multiplier and
    input_left_shift >= 0 scale beta * input_scale into Q5.26; differences to the row maximum below
    diff_min (< 0) give the minimum output. Output scale 1/256, zero point -128. */
typedef struct {
    int32_t rows, depth;
    int32_t input_multiplier, input_left_shift, diff_min;
} mcu_cmsis_softmax_params;

/** Scratch bytes of mcu_cmsis_conv2d_s8 for K = k_h * k_w * in_c: two im2col columns widened to
    int16 (4K) and, on the DSP path when in_c is not a multiple of four, the two int8 columns it
    copies first, in whole words (with in_c % 4 == 0 it widens the taps straight into the pair
    layout). The MVE path uses the int8 columns only. The code generator sizes the scratch buffer
    with this macro (mcuforge.firmware.macros evaluates it) and checks it in the generated C. */
#define MCU_CMSIS_CONV2D_S8_SCRATCH_BYTES(k, in_c) (4 * (k) + (((in_c) % 4 + 3) / 4) * ((2 * (k) + 3) / 4) * 4)

/** Convolution through im2col: any filter, stride, dilation and padding. Weights [out_c][k_h *
    k_w * in_c] (OHWI rows); scratch: MCU_CMSIS_CONV2D_S8_SCRATCH_BYTES(k_h * k_w * in_c, in_c) bytes,
    word aligned. */
void mcu_cmsis_conv2d_s8(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights,
                         const int32_t *bias, const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                         int16_t *scratch, int8_t *output);

/** Scratch bytes of mcu_cmsis_conv2d_1x1_s8: two input pixels widened to int16 (the DSP path). */
#define MCU_CMSIS_CONV2D_1X1_S8_SCRATCH_BYTES(in_c) (4 * (in_c))

/** 1x1 convolution, any stride (no padding exists): no im2col. Weights [out_c][in_c] in natural
    order; scratch: MCU_CMSIS_CONV2D_1X1_S8_SCRATCH_BYTES(in_c) bytes, word aligned. */
void mcu_cmsis_conv2d_1x1_s8(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights,
                             const int32_t *bias, const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                             int16_t *scratch, int8_t *output);

/** Depthwise convolution: any filter, stride, dilation, padding and depth multiplier. Weights
    [k_h * k_w][out_c]; bias: the layer's own (not folded: padded taps are skipped, not read). */
void mcu_cmsis_dwconv2d_s8(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                           const int32_t *bias, const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                           int8_t *output);

/** Scratch bytes of mcu_cmsis_dwconv2d_3x3_s8: the DSP path's pad row of the input zero point
    (whole words) and its weights widened to int16, 72 bytes per group of four channels
    (mcu_cmsis_dw3x3_dsp.h). */
#define MCU_CMSIS_DWCONV2D_3X3_S8_SCRATCH_BYTES(channels) ((((channels) + 3) / 4) * 4 + 72 * ((channels) / 4))

/** Depthwise 3x3 convolution, depth multiplier 1, no dilation, any stride and padding, the nine
    taps unrolled. Weights [9][out_c]; bias not folded. Scratch:
    MCU_CMSIS_DWCONV2D_3X3_S8_SCRATCH_BYTES(out_c) bytes, word aligned. */
void mcu_cmsis_dwconv2d_3x3_s8(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                               const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                               const int32_t *rq, int16_t *scratch, int8_t *output);

/** Fully connected: output[r][u] = requantize(sum_d input[r][d] * weights[u][d] + bias[u]). */
void mcu_cmsis_fully_connected_s8(const mcu_cmsis_fc_params *p, const int8_t *input, const int8_t *weights,
                                  const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                  const int32_t *rq, int8_t *output);

/** Average pool: the window's sum divided by its element count, rounding half away from zero. */
void mcu_cmsis_avg_pool2d_s8(const mcu_cmsis_pool_params *p, const int8_t *input, int8_t *output);

/** Max pool: the window's largest element. */
void mcu_cmsis_max_pool2d_s8(const mcu_cmsis_pool_params *p, const int8_t *input, int8_t *output);

/** Element-wise addition of two same-shape tensors; the output may be either input (in place).
    table: each input's rescaled value ((x + offset) << left_shift rescaled by its multiplier and
    shift) for x = -128..127, input 1 then input 2 (read by the DSP path); rq: the fast
    requantization record of the output, or NULL. */
void mcu_cmsis_add_s8(const mcu_cmsis_add_params *p, const int8_t *input1, const int8_t *input2, const int32_t *table,
                      const int32_t *rq, int8_t *output);

/** Element-wise multiplication of two same-shape tensors; the output may be either input. */
void mcu_cmsis_mul_s8(const mcu_cmsis_mul_params *p, const int8_t *input1, const int8_t *input2, int8_t *output);

/** Softmax over the last axis (rows x depth, depth < 512). */
void mcu_cmsis_softmax_s8(const mcu_cmsis_softmax_params *p, const int8_t *input, int8_t *output);

/**
 * TFLM's MultiplyByQuantizedMultiplier(x, multiplier, shift) for multiplier in [0, 2^31) (every
 * multiplier QuantizeMultiplier gives) and shift in [-31, 30], bit-exact with mcu_requantize but
 * cheaper: with a non-negative multiplier the saturating rounding doubling high multiply never
 * saturates and equals (x * multiplier + 2^30) >> 31 (halves of negative products round up in both
 * forms), one SMLAL on Cortex-M; the rounding divide by 2^right follows with 32-bit masks. Assumes
 * arithmetic right shifts of negative values (as mcuforge_fixedpoint.h does).
 */
static inline int32_t mcu_cmsis_requantize(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int32_t scaled = (int32_t)((uint32_t)x << left);
    const int32_t high = (int32_t)(((int64_t)scaled * multiplier + ((int64_t)1 << 30)) >> 31);
    const int32_t mask = (int32_t)(((uint32_t)1 << right) - 1u);
    const int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
    return (high >> right) + ((high & mask) > threshold ? 1 : 0);
}

/** requantize(acc) + output_offset, clamped to [act_min, act_max]: the common epilogue. */
static inline int8_t mcu_cmsis_requantize_s8(int32_t acc, int32_t multiplier, int32_t shift, int32_t output_offset,
                                             int32_t act_min, int32_t act_max)
{
    int32_t v = mcu_cmsis_requantize(acc, multiplier, shift) + output_offset;
    v = v < act_min ? act_min : v;
    v = v > act_max ? act_max : v;
    return (int8_t)v;
}

#endif /* MCU_KERNELS_CMSIS_NN_H */
