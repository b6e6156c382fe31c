/* Portable int16 ADD and SUB with broadcasting: TFLM's general quantized path (AddElementwise /
   BroadcastAdd6DSlow, and Sub likewise) with a left shift of 15: inputs moved onto a common scale
   2^15 finer than twice the larger input scale, added or subtracted, rescaled to the output. */
#include "mcu_kernels_c.h"

static void add_sub_s16(const mcu_add_params *p, const int16_t *input1, const int16_t *input2, int32_t sign,
                        int16_t *output)
{
    const int32_t rows = mcu_broadcast_rows(&p->shape);
    const int32_t cols = p->shape.dims[MCU_BROADCAST_RANK - 1];
    const int32_t step1 = p->shape.stride1[MCU_BROADCAST_RANK - 1];
    const int32_t step2 = p->shape.stride2[MCU_BROADCAST_RANK - 1];
    const int32_t scale_up = (int32_t)1 << p->left_shift;

    for (int32_t r = 0; r < rows; r++) {
        int32_t off1;
        int32_t off2;
        mcu_broadcast_row(&p->shape, r, &off1, &off2);
        const int16_t *x1 = input1 + off1;
        const int16_t *x2 = input2 + off2;
        for (int32_t c = 0; c < cols; c++) {
            /* |x + offset| <= 65535, so the values shifted by 15 fit in int32 */
            const int32_t a = mcu_requantize(((int32_t)x1[c * step1] + p->input1_offset) * scale_up,
                                             p->input1_multiplier, p->input1_shift);
            const int32_t b = mcu_requantize(((int32_t)x2[c * step2] + p->input2_offset) * scale_up,
                                             p->input2_multiplier, p->input2_shift);
            int32_t out = mcu_requantize(a + sign * b, p->output_multiplier, p->output_shift) + p->output_offset;
            out = out < p->act_min ? p->act_min : out;
            out = out > p->act_max ? p->act_max : out;
            *output++ = (int16_t)out;
        }
    }
}

void mcu_add_s16(const mcu_add_params *p, const int16_t *input1, const int16_t *input2, int16_t *output)
{
    add_sub_s16(p, input1, input2, 1, output);
}

void mcu_sub_s16(const mcu_sub_params *p, const int16_t *input1, const int16_t *input2, int16_t *output)
{
    add_sub_s16(p, input1, input2, -1, output);
}
