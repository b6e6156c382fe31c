/*
 * Portable kernels: the 16x8 family (int16 activations, int8 weights), declarations.
 *
 * TFLM's int16 overloads of its convolution and fully connected kernels ignore the input and output
 * zero points (raw x * w products; the clamp bounds act_min/act_max still come from the output zero
 * point) and, by the bias type:
 *   int64 bias or none: an int64 accumulator, requantized by mcu_requantize_s64 (|acc| < 2^47,
 *                       shift in [-31, 14]);
 *   int32 bias (the *_acc32 kernels): an int32 accumulator that wraps, requantized by
 *                       mcu_requantize (double rounding), as int8 layers are.
 * The parameter structs are those of the int8 kernels (mcu_kernels_c.h, mcu_kernels_c_nn.h) with
 * input_offset and output_offset 0 (unused). act_min <= act_max in [-32768, 32767].
 */
#ifndef MCU_KERNELS_C_S16_H
#define MCU_KERNELS_C_S16_H

#include <stdint.h>

#include "mcuforge_fixedpoint.h"

/** The end of a 16x8 layer: the exact sum of x * w products plus the bias (int64 from bias64, or
    int32 wrapping from bias32; both NULL: no bias), requantized and clamped, no output offset. */
static inline int16_t mcu_s16_output(int64_t sum, const int64_t *bias64, const int32_t *bias32, int32_t channel,
                                     int32_t multiplier, int32_t shift, int32_t act_min, int32_t act_max)
{
    int32_t out;
    if (bias32 != 0) {
        const int32_t acc = (int32_t)((uint32_t)(uint64_t)sum + (uint32_t)bias32[channel]);
        out = mcu_requantize(acc, multiplier, shift);
    } else {
        out = mcu_requantize_s64(bias64 != 0 ? sum + bias64[channel] : sum, multiplier, shift);
    }
    out = out < act_min ? act_min : out;
    out = out > act_max ? act_max : out;
    return (int16_t)out;
}

/* ---- CONV_2D: weights [out_c, k_h, k_w, in_c] -------------------------------------------------- */

/** 16x8 NHWC convolution with an int64 bias [out_c] or none (NULL). */
void mcu_conv_2d_s16(const mcu_conv_2d_params *p, const int16_t *input, const int8_t *weights, const int64_t *bias,
                     const int32_t *multiplier, const int32_t *shift, int16_t *output);

/** 16x8 NHWC convolution with an int32 bias [out_c] (int32 accumulator). */
void mcu_conv_2d_s16_acc32(const mcu_conv_2d_params *p, const int16_t *input, const int8_t *weights,
                           const int32_t *bias, const int32_t *multiplier, const int32_t *shift, int16_t *output);

/* ---- DEPTHWISE_CONV_2D: weights [1, k_h, k_w, out_c] ------------------------------------------- */

/** 16x8 NHWC depthwise convolution with an int64 bias [out_c] or none (NULL). */
void mcu_depthwise_conv_2d_s16(const mcu_depthwise_conv_2d_params *p, const int16_t *input, const int8_t *weights,
                               const int64_t *bias, const int32_t *multiplier, const int32_t *shift,
                               int16_t *output);

/* ---- FULLY_CONNECTED: weights [units, depth]; weight_offset applies (per-tensor weights) ----------- */

/** 16x8 fully connected layer with an int64 bias [units] or none (NULL):
    output[r, u] = requantize(sum_d x[r, d] * (w[u, d] + weight_offset) + bias[u]). */
void mcu_fully_connected_s16(const mcu_fully_connected_params *p, const int16_t *input, const int8_t *weights,
                             const int64_t *bias, const int32_t *multiplier, const int32_t *shift, int16_t *output);

/** 16x8 fully connected layer with an int32 bias [units] (int32 accumulator). */
void mcu_fully_connected_s16_acc32(const mcu_fully_connected_params *p, const int16_t *input, const int8_t *weights,
                                   const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                   int16_t *output);

/* ---- TRANSPOSE_CONV: weights [out_c, k_h, k_w, in_c] --------------------------------------------- */

/** Scratch bytes of mcu_transpose_conv_s16: one int64 accumulator per output element. */
#define MCU_TRANSPOSE_CONV_S16_SCRATCH_BYTES(batches, out_h, out_w, out_c) (8 * (batches) * (out_h) * (out_w) * (out_c))

/** 16x8 NHWC transposed convolution with an int64 bias [out_c] or none (NULL). scratch:
    MCU_TRANSPOSE_CONV_S16_SCRATCH_BYTES(...) bytes, 8-byte aligned, provided by the caller. */
void mcu_transpose_conv_s16(const mcu_transpose_conv_params *p, const int16_t *input, const int8_t *weights,
                            const int64_t *bias, const int32_t *multiplier, const int32_t *shift, int64_t *scratch,
                            int16_t *output);

/* ---- ADD, SUB, MUL (mcu_kernels_c_arith.h's structs; offsets and clamp in the int16 range) ------- */

/** int16 x1 + x2 with broadcasting and a fused activation; left_shift is 15. */
void mcu_add_s16(const mcu_add_params *p, const int16_t *input1, const int16_t *input2, int16_t *output);

/** int16 x1 - x2 with broadcasting and a fused activation; left_shift is 15. */
void mcu_sub_s16(const mcu_sub_params *p, const int16_t *input1, const int16_t *input2, int16_t *output);

/** int16 x1 * x2 with broadcasting and a fused activation; zero points 0 (offsets unused),
    output_shift <= 0. */
void mcu_mul_s16(const mcu_mul_params *p, const int16_t *input1, const int16_t *input2, int16_t *output);

/* ---- LOGISTIC, TANH: TFLM's int16 table kernels ---------------------------------------------- */

/** Parameters of mcu_logistic_s16 / mcu_tanh_s16: v = (x * input_multiplier + 2^(input_shift - 1))
    >> input_shift brings x onto the table's scale 1 / (3 * 4096); input_multiplier in [1, 65535],
    input_shift in [0, 31] (0 when input_multiplier > 32767). */
typedef struct {
    int32_t size, input_multiplier, input_shift;
} mcu_logistic_tanh_s16_params;

/** int16 sigmoid (output scale 2^-15): table is TFLM's sigmoid(i / 24) in Q0.16, 256 entries. */
void mcu_logistic_s16(const mcu_logistic_tanh_s16_params *p, const int16_t *input, const uint16_t *table,
                      int16_t *output);

/** int16 tanh (output scale 2^-15), from the same sigmoid table. */
void mcu_tanh_s16(const mcu_logistic_tanh_s16_params *p, const int16_t *input, const uint16_t *table,
                  int16_t *output);

/* ---- RELU, RELU6, LEAKY_RELU: int16 (TFLM's templated kernels) --------------------------------- */

/** Parameters of mcu_relu_s16: out = clamp(requantize(x + input_offset, multiplier, shift) +
    output_offset, act_min, act_max); offsets are 0 (TFLM requires int16 zero points of 0), shift
    in [-31, 30], act_min <= act_max in [-32768, 32767]. */
typedef struct {
    int32_t size, input_offset, multiplier, shift, output_offset, act_min, act_max;
} mcu_rescale_s16_params;

/** int16 RELU (TFLM's ReluQuantized<int16_t>). */
void mcu_relu_s16(const mcu_rescale_s16_params *p, const int16_t *input, int16_t *output);

/** int16 RELU6 (TFLM's Relu6Quantized<int16_t>): clamp(x, act_min, act_max) in the input domain. */
void mcu_relu6_s16(const mcu_relu6_params *p, const int16_t *input, int16_t *output);

/** Parameters of mcu_leaky_relu_s16 (TFLM's QuantizeLeakyRelu<int16_t>): d = x + input_offset;
    out = output_offset + (d >= 0 ? requantize(d, identity) : +/-requantize(d, alpha)), saturated to
    int16; the alpha branch is negated when alpha_negative. Offsets in [-32767, 32768]. */
typedef struct {
    int32_t size, input_offset, output_offset;
    int32_t identity_multiplier, identity_shift, alpha_multiplier, alpha_shift, alpha_negative;
} mcu_leaky_relu_s16_params;

/** int16 LEAKY_RELU. */
void mcu_leaky_relu_s16(const mcu_leaky_relu_s16_params *p, const int16_t *input, int16_t *output);

/* ---- SOFTMAX: int16 in, int16 out (TFLM's SoftmaxInt16) ----------------------------------------- */

/** Parameters of mcu_softmax_s16: `rows` rows of `depth` values (depth in [1, 65538]); a difference
    d = x - row max in [-65535, 0] is scaled by requantize(d, input_multiplier, input_shift),
    input_shift <= 15. */
typedef struct {
    int32_t rows, depth, input_multiplier, input_shift;
} mcu_softmax_s16_params;

/** int16 softmax over the last axis (output scale 1/32768): exp_lut and one_over_one_plus_x_lut are
    TFLM's 513-entry Q0.15 tables of exp over [-10, 0] and 1 / (1 + x) over [0, 1]. The output rows
    hold the exponentials until they are normalised: the kernel reads each input element before it
    writes the same output element. */
void mcu_softmax_s16(const mcu_softmax_s16_params *p, const int16_t *input, const int16_t *exp_lut,
                     const int16_t *one_over_one_plus_x_lut, int16_t *output);

/* ---- AVERAGE_POOL_2D, MAX_POOL_2D, MEAN (mcu_kernels_c_nn.h's structs; clamps in the int16 range) - */

/** int16 NHWC average pooling (windows of at most 65536 elements). */
void mcu_average_pool_2d_s16(const mcu_pool_2d_params *p, const int16_t *input, int16_t *output);

/** int16 NHWC max pooling. */
void mcu_max_pool_2d_s16(const mcu_pool_2d_params *p, const int16_t *input, int16_t *output);

/** int16 mean over the reduced dimensions (TFLM's integer mean); output_offset in [-32768, 32767]. */
void mcu_mean_s16(const mcu_mean_params *p, const int16_t *input, int16_t *output);

/* ---- QUANTIZE between int16 and int32 (mcu_requantize_params; TFLM's Requantize) -------------------- */

/** int16 -> int32 QUANTIZE (walks backwards: works in place). */
void mcu_quantize_s16_s32(const mcu_requantize_params *p, const int16_t *input, int32_t *output);

/** int32 -> int8 QUANTIZE; x - zero point and the result + zero point wrap as TFLM's int32 do. */
void mcu_quantize_s32(const mcu_requantize_params *p, const int32_t *input, int8_t *output);

/** int32 -> int16 QUANTIZE, as mcu_quantize_s32. */
void mcu_quantize_s32_s16(const mcu_requantize_params *p, const int32_t *input, int16_t *output);

#endif /* MCU_KERNELS_C_S16_H */
