/* Portable int8 SQUARED_DIFFERENCE: TFLM's SquaredDifference per element over the broadcast walk. */
#include "mcu_squared_difference_s8.h"

void mcu_squared_difference_s8(const mcu_squared_difference_params *p, const int8_t *input1, const int8_t *input2,
                               int8_t *output)
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
        const int8_t *x1 = input1 + off1;
        const int8_t *x2 = input2 + off2;
        for (int32_t c = 0; c < cols; c++) {
            const int32_t a = mcu_requantize(((int32_t)x1[c * step1] + p->input1_offset) * scale_up,
                                             p->input1_multiplier, p->input1_shift);
            const int32_t b = mcu_requantize(((int32_t)x2[c * step2] + p->input2_offset) * scale_up,
                                             p->input2_multiplier, p->input2_shift);
            const int32_t d = a - b;
            int32_t out = mcu_requantize(d * d, p->output_multiplier, p->output_shift) + p->output_offset;
            out = out < p->act_min ? p->act_min : out;
            out = out > p->act_max ? p->act_max : out;
            *output++ = (int8_t)out;
        }
    }
}
