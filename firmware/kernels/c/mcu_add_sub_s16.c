/* Portable int16 ADD and SUB with broadcasting: TFLM's general quantized path (AddElementwise /
   BroadcastAdd6DSlow, and Sub likewise) with a left shift of 15: inputs moved onto a common scale
   2^15 finer than twice the larger input scale, added or subtracted, rescaled to the output. */
#include "mcu_kernels_c.h"

static void add_sub_s16(const mcu_add_params *p, const int16_t *input1, const int16_t *input2, int32_t sign,
                        int16_t *output)
{
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    int16_t *out = output;
    MCU_BROADCAST_FOR_EACH(&p->shape, i1, i2, {
        /* |x + offset| <= 65535, so the values shifted by 15 fit in int32 */
        const int32_t a = mcu_requantize(((int32_t)input1[i1] + p->input1_offset) * scale_up, p->input1_multiplier,
                                         p->input1_shift);
        const int32_t b = mcu_requantize(((int32_t)input2[i2] + p->input2_offset) * scale_up, p->input2_multiplier,
                                         p->input2_shift);
        int32_t v = mcu_requantize(a + sign * b, p->output_multiplier, p->output_shift) + p->output_offset;
        v = v < p->act_min ? p->act_min : v;
        *out++ = (int16_t)(v > p->act_max ? p->act_max : v);
    });
}

void mcu_add_s16(const mcu_add_params *p, const int16_t *input1, const int16_t *input2, int16_t *output)
{
    add_sub_s16(p, input1, input2, 1, output);
}

void mcu_sub_s16(const mcu_sub_params *p, const int16_t *input1, const int16_t *input2, int16_t *output)
{
    add_sub_s16(p, input1, input2, -1, output);
}
