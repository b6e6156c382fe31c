/* Portable QUANTIZE from int16: TFLM's Requantize,
   q = saturate(requantize(x - input zero point, multiplier, shift) + output zero point).
   Outputs no wider than the input: the forward walk also works in place. */
#include "mcu_kernels_c.h"

/** The requantized value as int32, before saturation; |x + input_offset| <= 65535. */
static inline int32_t requantize_s16_value(const mcu_requantize_params *p, int16_t x)
{
    return mcu_requantize((int32_t)x + p->input_offset, p->multiplier, p->shift) + p->output_offset;
}

void mcu_quantize_s16(const mcu_requantize_params *p, const int16_t *input, int8_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        int32_t q = requantize_s16_value(p, input[i]);
        q = q < INT8_MIN ? INT8_MIN : q;
        q = q > INT8_MAX ? INT8_MAX : q;
        output[i] = (int8_t)q;
    }
}

void mcu_quantize_s16_s16(const mcu_requantize_params *p, const int16_t *input, int16_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        int32_t q = requantize_s16_value(p, input[i]);
        q = q < INT16_MIN ? INT16_MIN : q;
        q = q > INT16_MAX ? INT16_MAX : q;
        output[i] = (int16_t)q;
    }
}

void mcu_quantize_s16_s32(const mcu_requantize_params *p, const int16_t *input, int32_t *output)
{
    for (int32_t i = p->size - 1; i >= 0; i--) { /* wider output: backwards, so it works in place */
        output[i] = requantize_s16_value(p, input[i]);
    }
}
