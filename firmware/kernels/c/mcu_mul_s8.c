/* Portable int8 MUL with broadcasting: TFLM's MulElementwise / BroadcastMul6DSlow per element. */
#include "mcu_kernels_c.h"

void mcu_mul_s8(const mcu_mul_params *p, const int8_t *input1, const int8_t *input2, int8_t *output)
{
    MCU_BROADCAST_FOR_EACH(&p->shape, i1, i2, {
        /* |product| <= 255 * 255 */
        const int32_t prod = ((int32_t)input1[i1] + p->input1_offset) * ((int32_t)input2[i2] + p->input2_offset);
        int32_t out = mcu_requantize_q31(prod, p->output_multiplier, p->output_shift) + p->output_offset;
        out = out < p->act_min ? p->act_min : out;
        out = out > p->act_max ? p->act_max : out;
        *output++ = (int8_t)out;
    });
}
