/* Portable int8 PRELU: TFLM's BroadcastPrelu4DSlow per element over the broadcast walk (the
   multipliers are Q0.31, so the cheaper exact mcu_requantize_q31); x at or above the input zero point
   through the layer's table of their outputs. */
#include "mcu_prelu_s8.h"

void mcu_prelu_s8(const mcu_prelu_params *p, const int8_t *input, const int8_t *alpha, const int8_t *positive,
                  int8_t *output)
{
    MCU_BROADCAST_FOR_EACH(&p->shape, i, k, {
        const int32_t a = (int32_t)input[i] + p->input_offset;
        if (a >= 0) {
            *output++ = positive[input[i] + 128];
        } else {
            const int32_t product = a * ((int32_t)alpha[k] + p->alpha_offset);
            int32_t out = mcu_requantize_q31(product, p->negative_multiplier, p->negative_shift) + p->output_offset;
            out = out < -128 ? -128 : out;
            *output++ = (int8_t)(out > 127 ? 127 : out);
        }
    });
}
