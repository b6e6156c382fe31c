/* Portable int16 MUL with broadcasting: TFLM's MulElementwise / BroadcastMul6DSlow on int16 (zero
   points 0, so the product of two int16 values is at most 2^30 and the multiplier's shift <= 0). */
#include "mcu_kernels_c.h"

void mcu_mul_s16(const mcu_mul_params *p, const int16_t *input1, const int16_t *input2, int16_t *output)
{
    const int32_t rows = mcu_broadcast_rows(&p->shape);
    const int32_t cols = p->shape.dims[MCU_BROADCAST_RANK - 1];
    const int32_t step1 = p->shape.stride1[MCU_BROADCAST_RANK - 1];
    const int32_t step2 = p->shape.stride2[MCU_BROADCAST_RANK - 1];

    for (int32_t r = 0; r < rows; r++) {
        int32_t off1;
        int32_t off2;
        mcu_broadcast_row(&p->shape, r, &off1, &off2);
        const int16_t *x1 = input1 + off1;
        const int16_t *x2 = input2 + off2;
        for (int32_t c = 0; c < cols; c++) {
            const int32_t prod = (int32_t)x1[c * step1] * (int32_t)x2[c * step2];
            int32_t out = mcu_requantize(prod, p->output_multiplier, p->output_shift);
            out = out < p->act_min ? p->act_min : out;
            out = out > p->act_max ? p->act_max : out;
            *output++ = (int16_t)out;
        }
    }
}
