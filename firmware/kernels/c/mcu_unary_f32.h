/*
 * Portable float32 element-wise ops, TFLM's float kernels (elementwise.cc, neg.cc, exp.cc, elu.cc,
 * floor.cc, round.cc, ceil.cc) operation for operation: fabsf, -x, sqrtf, 1.0f / sqrtf, expf, logf,
 * x < 0 ? expm1f(x) : x, floorf, TFLM's RoundToNearest, ceilf, x * x, sinf and cosf. expf, logf,
 * expm1f, sinf and cosf come from the C library (link with -lm), as in TFLM. All work in place
 * (output == input).
 */
#ifndef MCU_UNARY_F32_H
#define MCU_UNARY_F32_H

#include <stdint.h>

/** The number of elements (>= 0). */
typedef struct {
    int32_t size;
} mcu_unary_f32_params;

void mcu_abs_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_neg_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_sqrt_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_rsqrt_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_exp_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_log_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_elu_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_floor_f32(const mcu_unary_f32_params *p, const float *input, float *output);
/** TFLM's RoundToNearest: floor, then up by one when the remainder is above 1/2 or exactly 1/2 with
    an odd floor (halves to even; [-1/2, 0) gives +0.0). */
void mcu_round_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_ceil_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_square_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_sin_f32(const mcu_unary_f32_params *p, const float *input, float *output);
void mcu_cos_f32(const mcu_unary_f32_params *p, const float *input, float *output);

#endif /* MCU_UNARY_F32_H */
