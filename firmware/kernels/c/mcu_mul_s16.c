/* Portable int16 MUL with broadcasting: TFLM's MulElementwise / BroadcastMul6DSlow on int16 (zero
   points 0, so the product of two int16 values is at most 2^30 and the multiplier's shift <= 0). */
#include "mcu_kernels_c.h"

void mcu_mul_s16(const mcu_mul_params *p, const int16_t *input1, const int16_t *input2, int16_t *output)
{
    int16_t *out = output;
    MCU_BROADCAST_FOR_EACH(&p->shape, i1, i2, {
        const int32_t prod = (int32_t)input1[i1] * (int32_t)input2[i2];
        int32_t v = mcu_requantize(prod, p->output_multiplier, p->output_shift);
        v = v < p->act_min ? p->act_min : v;
        *out++ = (int16_t)(v > p->act_max ? p->act_max : v);
    });
}
