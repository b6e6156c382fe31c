/* Portable int8 SQUARED_DIFFERENCE: TFLM's SquaredDifference per element over the broadcast walk. */
#include "mcu_squared_difference_s8.h"

void mcu_squared_difference_s8(const mcu_squared_difference_params *p, const int8_t *input1, const int8_t *input2,
                               int8_t *output)
{
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    MCU_BROADCAST_FOR_EACH(&p->shape, i1, i2, {
        const int32_t a = mcu_requantize(((int32_t)input1[i1] + p->input1_offset) * scale_up, p->input1_multiplier,
                                         p->input1_shift);
        const int32_t b = mcu_requantize(((int32_t)input2[i2] + p->input2_offset) * scale_up, p->input2_multiplier,
                                         p->input2_shift);
        const int32_t d = a - b;
        int32_t out = mcu_requantize(d * d, p->output_multiplier, p->output_shift) + p->output_offset;
        out = out < p->act_min ? p->act_min : out;
        *output++ = (int8_t)(out > p->act_max ? p->act_max : out);
    });
}
