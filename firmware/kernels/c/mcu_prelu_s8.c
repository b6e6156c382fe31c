/* Portable int8 PRELU: TFLM's BroadcastPrelu4DSlow per element over the broadcast walk. */
#include "mcu_prelu_s8.h"

void mcu_prelu_s8(const mcu_prelu_params *p, const int8_t *input, const int8_t *alpha, int8_t *output)
{
    MCU_BROADCAST_FOR_EACH(&p->shape, i, k, {
        const int32_t a = (int32_t)input[i] + p->input_offset;
        int32_t out;
        if (a >= 0) {
            out = mcu_requantize(a, p->positive_multiplier, p->positive_shift);
        } else {
            const int32_t product = a * ((int32_t)alpha[k] + p->alpha_offset);
            out = mcu_requantize(product, p->negative_multiplier, p->negative_shift);
        }
        out += p->output_offset;
        out = out < -128 ? -128 : out;
        *output++ = (int8_t)(out > 127 ? 127 : out);
    });
}
