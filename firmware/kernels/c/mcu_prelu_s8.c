/* Portable int8 PRELU: TFLM's BroadcastPrelu4DSlow per element over the broadcast walk. */
#include "mcu_prelu_s8.h"

void mcu_prelu_s8(const mcu_prelu_params *p, const int8_t *input, const int8_t *alpha, int8_t *output)
{
    const int32_t rows = mcu_broadcast_rows(&p->shape);
    const int32_t cols = p->shape.dims[MCU_BROADCAST_RANK - 1];
    const int32_t step1 = p->shape.stride1[MCU_BROADCAST_RANK - 1];
    const int32_t step2 = p->shape.stride2[MCU_BROADCAST_RANK - 1];

    for (int32_t r = 0; r < rows; r++) {
        int32_t off1;
        int32_t off2;
        mcu_broadcast_row(&p->shape, r, &off1, &off2);
        const int8_t *x = input + off1;
        const int8_t *al = alpha + off2;
        for (int32_t c = 0; c < cols; c++) {
            const int32_t a = (int32_t)x[c * step1] + p->input_offset;
            int32_t out;
            if (a >= 0) {
                out = mcu_requantize(a, p->positive_multiplier, p->positive_shift);
            } else {
                const int32_t product = a * ((int32_t)al[c * step2] + p->alpha_offset);
                out = mcu_requantize(product, p->negative_multiplier, p->negative_shift);
            }
            out += p->output_offset;
            out = out < -128 ? -128 : out;
            *output++ = (int8_t)(out > 127 ? 127 : out);
        }
    }
}
