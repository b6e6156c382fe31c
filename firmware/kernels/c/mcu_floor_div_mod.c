/* Portable FLOOR_DIV / FLOOR_MOD: TFLM's float expressions over the broadcast walk. */
#include "mcu_floor_div_mod.h"

#include <math.h>

static float floor_div(float a, float b)
{
    return (float)floor((double)a / (double)b);
}

static float floor_mod(float a, float b)
{
    const float t = fmodf(a, b);
    return (t != 0.0f && ((b < 0.0f) != (t < 0.0f))) ? t + b : t;
}

void mcu_floor_div_f32(const mcu_broadcast_params *p, const float *input1, const float *input2, float *output)
{
    MCU_BROADCAST_FOR_EACH(p, i1, i2, { *output++ = floor_div(input1[i1], input2[i2]); });
}

void mcu_floor_mod_f32(const mcu_broadcast_params *p, const float *input1, const float *input2, float *output)
{
    MCU_BROADCAST_FOR_EACH(p, i1, i2, { *output++ = floor_mod(input1[i1], input2[i2]); });
}
