/* Portable QUANTIZE from int32: TFLM's Requantize on int32 values,
   q = saturate(requantize(x - input zero point, multiplier, shift) + output zero point), the
   subtraction and the addition wrapping as TFLM's int32 arithmetic does on its targets. Narrower
   outputs: the forward walk also works in place. */
#include "mcu_kernels_c.h"

/** The requantized value as int32, before saturation. */
static inline int32_t requantize_s32_value(const mcu_requantize_params *p, int32_t x)
{
    const int32_t shifted = (int32_t)((uint32_t)x + (uint32_t)p->input_offset);
    return (int32_t)((uint32_t)mcu_requantize(shifted, p->multiplier, p->shift) + (uint32_t)p->output_offset);
}

void mcu_quantize_s32(const mcu_requantize_params *p, const int32_t *input, int8_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        const int32_t q = requantize_s32_value(p, input[i]);
        output[i] = (int8_t)(q < INT8_MIN ? INT8_MIN : (q > INT8_MAX ? INT8_MAX : q));
    }
}

void mcu_quantize_s32_s16(const mcu_requantize_params *p, const int32_t *input, int16_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        const int32_t q = requantize_s32_value(p, input[i]);
        output[i] = (int16_t)(q < INT16_MIN ? INT16_MIN : (q > INT16_MAX ? INT16_MAX : q));
    }
}
