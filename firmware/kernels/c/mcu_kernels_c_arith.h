/*
 * Portable kernels: the arith family (declarations and parameter structs).
 *
 * ADD, SUB, MUL (int8, numpy broadcasting up to rank 6), SOFTMAX (int8 in, int8 or int16 out), the
 * int8 activations RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH, and
 * QUANTIZE / DEQUANTIZE. Every kernel is bit-exact with the TensorFlow Lite Micro reference kernel
 * of its op (the numpy references in ir/ops/ define the arithmetic). The parameter structs are
 * filled at compile time by the code generator (planner/targets/c_lowerings/arith.py).
 *
 * Unary int8 ops whose output depends on one int8 value (all activations but RELU6, and int8
 * QUANTIZE) read a 256-entry table precomputed by the code generator with the op's reference:
 * table[x + 128] is the output for input x.
 *
 * Element-wise kernels (all but ADD/SUB/MUL and SOFTMAX) also work in place, the output starting at
 * the input's first byte: each reads an element before writing over it, and kernels whose output
 * elements are wider than their input ones walk from the last element down.
 */
#ifndef MCU_KERNELS_C_ARITH_H
#define MCU_KERNELS_C_ARITH_H

#include <stdint.h>

#include "mcuforge_fixedpoint.h"

/* ---- ADD, SUB, MUL: broadcast walk ----------------------------------------------------------- */

#define MCU_BROADCAST_RANK 6

/** How two inputs broadcast to the output: the output is the row-major walk over dims[]; along
    axis k, input 1 moves stride1[k] elements and input 2 stride2[k] (0 where it is broadcast).
    The output is dims[0] * .. * dims[4] rows of dims[5] elements. */
typedef struct {
    int32_t dims[MCU_BROADCAST_RANK];     /**< >= 1 */
    int32_t stride1[MCU_BROADCAST_RANK];  /**< >= 0 */
    int32_t stride2[MCU_BROADCAST_RANK];  /**< >= 0 */
} mcu_broadcast_params;

/** Number of rows (all output axes but the last) of a broadcast walk. */
static inline int32_t mcu_broadcast_rows(const mcu_broadcast_params *b)
{
    int32_t rows = 1;
    for (int32_t k = 0; k < MCU_BROADCAST_RANK - 1; k++) {
        rows *= b->dims[k];
    }
    return rows;
}

/** Steps (*offset1, *offset2), the offsets in input 1 and input 2 of an output row's first element,
    to the next row's; idx[] is the row's index along the outer axes (all zero for row 0, offsets 0):
    an odometer, no division. */
static inline void mcu_broadcast_next(const mcu_broadcast_params *b, int32_t *idx, int32_t *offset1,
                                      int32_t *offset2)
{
    for (int32_t k = MCU_BROADCAST_RANK - 2; k >= 0; k--) {
        *offset1 += b->stride1[k];
        *offset2 += b->stride2[k];
        if (++idx[k] < b->dims[k]) {
            return;
        }
        *offset1 -= b->dims[k] * b->stride1[k];
        *offset2 -= b->dims[k] * b->stride2[k];
        idx[k] = 0;
    }
}

/** Runs the statements after the first three arguments once per output element of the broadcast
    walk *b, in output order, with OFF1 and OFF2 (declared here, int32_t) the element's offsets in
    input 1 and input 2. */
#define MCU_BROADCAST_FOR_EACH(b, OFF1, OFF2, ...)                                      \
    do {                                                                                \
        const int32_t mcu_rows_ = mcu_broadcast_rows(b);                                \
        const int32_t mcu_cols_ = (b)->dims[MCU_BROADCAST_RANK - 1];                    \
        const int32_t mcu_step1_ = (b)->stride1[MCU_BROADCAST_RANK - 1];                \
        const int32_t mcu_step2_ = (b)->stride2[MCU_BROADCAST_RANK - 1];                \
        int32_t mcu_idx_[MCU_BROADCAST_RANK - 1] = {0};                                 \
        int32_t mcu_row1_ = 0;                                                          \
        int32_t mcu_row2_ = 0;                                                          \
        for (int32_t mcu_r_ = 0; mcu_r_ < mcu_rows_; mcu_r_++) {                        \
            for (int32_t mcu_c_ = 0; mcu_c_ < mcu_cols_; mcu_c_++) {                    \
                const int32_t OFF1 = mcu_row1_ + mcu_c_ * mcu_step1_;                   \
                const int32_t OFF2 = mcu_row2_ + mcu_c_ * mcu_step2_;                   \
                __VA_ARGS__                                                             \
            }                                                                           \
            mcu_broadcast_next(b, mcu_idx_, &mcu_row1_, &mcu_row2_);                    \
        }                                                                               \
    } while (0)

/** Parameters of mcu_add_s8 and mcu_sub_s8 (TFLM's AddFunc / SubFunc):
        a = requantize((x1 + input1_offset) << left_shift, input1_multiplier, input1_shift)
        b = requantize((x2 + input2_offset) << left_shift, input2_multiplier, input2_shift)
        out = clamp(requantize(a +/- b, output_multiplier, output_shift) + output_offset, act_min, act_max)
    Offsets are negated input zero points in [-127, 128]; left_shift is 20; multipliers are Q0.31
    in (0, 2^31) with shifts in [-31, 0] (all three real multipliers are below one);
    output_offset in [-128, 127]; act_min <= act_max in [-128, 127]. */
typedef struct {
    mcu_broadcast_params shape;
    int32_t input1_offset, input2_offset, left_shift;
    int32_t input1_multiplier, input1_shift, input2_multiplier, input2_shift;
    int32_t output_multiplier, output_shift, output_offset, act_min, act_max;
} mcu_add_params;

typedef mcu_add_params mcu_sub_params;

/** The body of mcu_add_s8 (sign 1) and mcu_sub_s8 (sign -1): TFLM's AddFunc / SubFunc per element
    (both inputs moved onto a common scale 2^20 finer than twice the larger input scale, added or
    subtracted, rescaled to the output). Each caller passes a constant sign, folded when inlined. */
static inline void mcu_add_sub_s8(const mcu_add_params *p, const int8_t *input1, const int8_t *input2,
                                  int8_t *output, int32_t sign)
{
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    MCU_BROADCAST_FOR_EACH(&p->shape, i1, i2, {
        /* |x + offset| <= 255, so the shifted values fit in int32 */
        const int32_t a = mcu_requantize_q31(((int32_t)input1[i1] + p->input1_offset) * scale_up,
                                             p->input1_multiplier, p->input1_shift);
        const int32_t b = mcu_requantize_q31(((int32_t)input2[i2] + p->input2_offset) * scale_up,
                                             p->input2_multiplier, p->input2_shift);
        int32_t out = mcu_requantize_q31(sign > 0 ? a + b : a - b, p->output_multiplier, p->output_shift) +
                      p->output_offset;
        out = out < p->act_min ? p->act_min : out;
        out = out > p->act_max ? p->act_max : out;
        *output++ = (int8_t)out;
    });
}

/** Parameters of mcu_mul_s8 (TFLM's MulElementwise / BroadcastMul6DSlow):
        out = clamp(requantize((x1 + input1_offset) * (x2 + input2_offset), output_multiplier,
                    output_shift) + output_offset, act_min, act_max)
    Offsets in [-127, 128]; output_shift in [-31, 30]; the rest as mcu_add_params. */
typedef struct {
    mcu_broadcast_params shape;
    int32_t input1_offset, input2_offset;
    int32_t output_multiplier, output_shift, output_offset, act_min, act_max;
} mcu_mul_params;

/** int8 x1 + x2 with broadcasting and a fused activation. */
void mcu_add_s8(const mcu_add_params *p, const int8_t *input1, const int8_t *input2, int8_t *output);

/** int8 x1 - x2 with broadcasting and a fused activation. */
void mcu_sub_s8(const mcu_sub_params *p, const int8_t *input1, const int8_t *input2, int8_t *output);

/** int8 x1 * x2 with broadcasting and a fused activation. */
void mcu_mul_s8(const mcu_mul_params *p, const int8_t *input1, const int8_t *input2, int8_t *output);

/* ---- SOFTMAX --------------------------------------------------------------------------------- */

/** Parameters of mcu_softmax_s8 / mcu_softmax_s8_s16 (TFLM's CalculateSoftmaxParams): the input is
    `rows` rows of `depth` values, each normalised on its own. A difference d = x - row max (in
    [-255, 0]) with d >= diff_min becomes the Q5.26 value (d << input_left_shift) * input_multiplier
    / 2^31; the others give the minimum output. input_multiplier is Q0.31 in [2^30, 2^31),
    input_left_shift >= 0, diff_min <= 0. depth in [1, 511] with int8 output (TFLM's limit); any
    depth >= 1 with int16 output, where rows of 4096 or more elements may wrap the int32 sum of
    exponentials as TFLM does (signed overflow there, wrapping on its targets). */
typedef struct {
    int32_t rows, depth;
    int32_t input_multiplier, input_left_shift, diff_min;
} mcu_softmax_params;

/** Softmax over the last axis: int8 input, int8 output (scale 1/256, zero point -128). */
void mcu_softmax_s8(const mcu_softmax_params *p, const int8_t *input, int8_t *output);

/** Softmax over the last axis: int8 input, int16 output (scale 1/65536, zero point -32768). */
void mcu_softmax_s8_s16(const mcu_softmax_params *p, const int8_t *input, int16_t *output);

/* ---- table-driven int8 ops: RELU, RELU_N1_TO_1, LEAKY_RELU, HARD_SWISH, LOGISTIC, TANH, QUANTIZE -- */

/** Parameters of the table-driven kernels: the number of elements. */
typedef struct {
    int32_t size; /**< >= 0 */
} mcu_table_params;

/** output[i] = table[input[i] + 128]. */
static inline void mcu_table_lookup_s8(int32_t size, const int8_t *input, const int8_t *table, int8_t *output)
{
    for (int32_t i = 0; i < size; i++) {
        output[i] = table[(int32_t)input[i] + 128];
    }
}

/** RELU rescaled to the output quantization (TFLM's ReluQuantized), through its table. */
void mcu_relu_s8(const mcu_table_params *p, const int8_t *input, const int8_t *table, int8_t *output);

/** RELU_N1_TO_1 rescaled to the output quantization (TFLite's ReluX), through its table. */
void mcu_relu_n1_to_1_s8(const mcu_table_params *p, const int8_t *input, const int8_t *table, int8_t *output);

/** LEAKY_RELU (TFLM's QuantizeLeakyRelu), through its table. */
void mcu_leaky_relu_s8(const mcu_table_params *p, const int8_t *input, const int8_t *table, int8_t *output);

/** HARD_SWISH (TFLM's int16 fixed-point HardSwish), through its table. */
void mcu_hard_swish_s8(const mcu_table_params *p, const int8_t *input, const int8_t *table, int8_t *output);

/** LOGISTIC (gemmlowp logistic, output scale 1/256 and zero point -128), through its table. */
void mcu_logistic_s8(const mcu_table_params *p, const int8_t *input, const int8_t *table, int8_t *output);

/** TANH (gemmlowp tanh, output scale 1/128 and zero point 0), through its table. */
void mcu_tanh_s8(const mcu_table_params *p, const int8_t *input, const int8_t *table, int8_t *output);

/** int8 -> int8 QUANTIZE (TFLM's Requantize), through its table. */
void mcu_quantize_s8(const mcu_table_params *p, const int8_t *input, const int8_t *table, int8_t *output);

/** int8 -> int16 QUANTIZE, through its int16 table. */
void mcu_quantize_s8_s16(const mcu_table_params *p, const int8_t *input, const int16_t *table, int16_t *output);

/** int8 -> int32 QUANTIZE, through its int32 table. */
void mcu_quantize_s8_s32(const mcu_table_params *p, const int8_t *input, const int32_t *table, int32_t *output);

/* ---- RELU6 ----------------------------------------------------------------------------------- */

/** Parameters of mcu_relu6_s8: TFLM's Relu6Quantized clamps in the INPUT's quantized domain
    (act_min = input zero point, act_max = quantized 6.0, both in [-128, 127]) and does not
    rescale. */
typedef struct {
    int32_t size, act_min, act_max;
} mcu_relu6_params;

/** output[i] = clamp(input[i], act_min, act_max). */
void mcu_relu6_s8(const mcu_relu6_params *p, const int8_t *input, int8_t *output);

/* ---- QUANTIZE from float32 and int16 --------------------------------------------------------- */

/** Parameters of mcu_quantize_f32 / mcu_quantize_f32_s16 (TFLM's AffineQuantize):
    out = saturate(round(x / scale) + output_offset), the division in float32, rounding half away
    from zero; NaN gives output_offset. scale > 0 (the output's); output_offset the output zero point. */
typedef struct {
    int32_t size;
    float scale;
    int32_t output_offset;
} mcu_quantize_f32_params;

/** float32 -> int8 QUANTIZE. */
void mcu_quantize_f32(const mcu_quantize_f32_params *p, const float *input, int8_t *output);

/** float32 -> int16 QUANTIZE. */
void mcu_quantize_f32_s16(const mcu_quantize_f32_params *p, const float *input, int16_t *output);

/** Parameters of mcu_quantize_s16 / mcu_quantize_s16_s16 (TFLM's Requantize):
    out = saturate(requantize(x + input_offset, multiplier, shift) + output_offset).
    input_offset = -input zero point; multiplier Q0.31 in [0, 2^31), shift in [-31, 30]. */
typedef struct {
    int32_t size, input_offset, multiplier, shift, output_offset;
} mcu_requantize_params;

/** int16 -> int8 QUANTIZE. */
void mcu_quantize_s16(const mcu_requantize_params *p, const int16_t *input, int8_t *output);

/** int16 -> int16 QUANTIZE. */
void mcu_quantize_s16_s16(const mcu_requantize_params *p, const int16_t *input, int16_t *output);

/* ---- DEQUANTIZE ------------------------------------------------------------------------------ */

/** Parameters of mcu_dequantize_s8 / mcu_dequantize_s16 (TFLM's Dequantize):
    out = (float)((double)scale * (x - zero_point)). Computed as the float32 product
    scale * (float)(x - zero_point): both operands are exact and the product is rounded once, so the
    result is the same without double arithmetic. */
typedef struct {
    int32_t size, zero_point;
    float scale;
} mcu_dequantize_params;

/** int8 -> float32 DEQUANTIZE. */
void mcu_dequantize_s8(const mcu_dequantize_params *p, const int8_t *input, float *output);

/** int16 -> float32 DEQUANTIZE. */
void mcu_dequantize_s16(const mcu_dequantize_params *p, const int16_t *input, float *output);

#endif /* MCU_KERNELS_C_ARITH_H */
