/* Portable int8 MUL with broadcasting: TFLM's MulElementwise / BroadcastMul6DSlow per element. */
#include "mcu_kernels_c.h"

void mcu_mul_s8(const mcu_mul_params *p, const int8_t *input1, const int8_t *input2, int8_t *output)
{
    const int32_t rows = mcu_broadcast_rows(&p->shape);
    const int32_t cols = p->shape.dims[MCU_BROADCAST_RANK - 1];
    const int32_t step1 = p->shape.stride1[MCU_BROADCAST_RANK - 1];
    const int32_t step2 = p->shape.stride2[MCU_BROADCAST_RANK - 1];

    int32_t idx[MCU_BROADCAST_RANK - 1] = {0};
    int32_t off1 = 0;
    int32_t off2 = 0;
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *x1 = input1 + off1;
        const int8_t *x2 = input2 + off2;
        for (int32_t c = 0; c < cols; c++) {
            /* |product| <= 255 * 255 */
            const int32_t prod = ((int32_t)x1[c * step1] + p->input1_offset) *
                                 ((int32_t)x2[c * step2] + p->input2_offset);
            int32_t out = mcu_requantize_q31(prod, p->output_multiplier, p->output_shift) + p->output_offset;
            out = out < p->act_min ? p->act_min : out;
            out = out > p->act_max ? p->act_max : out;
            *output++ = (int8_t)out;
        }
        mcu_broadcast_next(&p->shape, idx, &off1, &off2);
    }
}
