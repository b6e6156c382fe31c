/* Portable float32 element-wise ops: one loop per op over TFLM's float expression. */
#include "mcu_unary_f32.h"

#include <math.h>

static float round_to_nearest(float x)
{
    const float floor_x = floorf(x);
    const float diff = x - floor_x;
    if (diff < 0.5f || (diff == 0.5f && (int32_t)floor_x % 2 == 0)) {
        return floor_x;
    }
    return floor_x + 1.0f;
}

static float elu(float x)
{
    return x < 0.0f ? expm1f(x) : x;
}

static float rsqrt(float x)
{
    return 1.0f / sqrtf(x);
}

static float neg(float x)
{
    return -x;
}

static float square(float x)
{
    return x * x;
}

#define MCU_UNARY_F32(name, fn)                                                  \
    void name(const mcu_unary_f32_params *p, const float *input, float *output) \
    {                                                                            \
        for (int32_t i = 0; i < p->size; i++) {                                  \
            output[i] = fn(input[i]);                                            \
        }                                                                        \
    }

MCU_UNARY_F32(mcu_abs_f32, fabsf)
MCU_UNARY_F32(mcu_neg_f32, neg)
MCU_UNARY_F32(mcu_sqrt_f32, sqrtf)
MCU_UNARY_F32(mcu_rsqrt_f32, rsqrt)
MCU_UNARY_F32(mcu_exp_f32, expf)
MCU_UNARY_F32(mcu_log_f32, logf)
MCU_UNARY_F32(mcu_elu_f32, elu)
MCU_UNARY_F32(mcu_floor_f32, floorf)
MCU_UNARY_F32(mcu_round_f32, round_to_nearest)
MCU_UNARY_F32(mcu_ceil_f32, ceilf)
MCU_UNARY_F32(mcu_square_f32, square)
MCU_UNARY_F32(mcu_sin_f32, sinf)
MCU_UNARY_F32(mcu_cos_f32, cosf)
