/* Portable int16 RELU, RELU6 and LEAKY_RELU: TFLM's ReluQuantized, Relu6Quantized and
   QuantizeLeakyRelu instantiated for int16_t. Each element is read before it is written: all three
   work in place. */
#include "mcu_kernels_c.h"

static inline int16_t clamp16(int32_t v, int32_t lo, int32_t hi)
{
    v = v < lo ? lo : v;
    return (int16_t)(v > hi ? hi : v);
}

void mcu_relu_s16(const mcu_rescale_s16_params *p, const int16_t *input, int16_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        const int32_t v = mcu_requantize((int32_t)input[i] + p->input_offset, p->multiplier, p->shift);
        output[i] = clamp16(v + p->output_offset, p->act_min, p->act_max);
    }
}

void mcu_relu6_s16(const mcu_relu6_params *p, const int16_t *input, int16_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        output[i] = clamp16(input[i], p->act_min, p->act_max);
    }
}

void mcu_leaky_relu_s16(const mcu_leaky_relu_s16_params *p, const int16_t *input, int16_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        const int32_t d = (int32_t)input[i] + p->input_offset;
        int32_t v;
        if (d >= 0) {
            v = mcu_requantize(d, p->identity_multiplier, p->identity_shift);
        } else {
            v = mcu_requantize(d, p->alpha_multiplier, p->alpha_shift);
            v = p->alpha_negative ? -v : v;
        }
        output[i] = clamp16(p->output_offset + v, INT16_MIN, INT16_MAX);
    }
}
