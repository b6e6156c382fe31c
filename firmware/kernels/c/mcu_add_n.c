/* Portable ADD_N: float32 sums in input order; int8 sums the inputs rescaled onto a common scale
   2^19 finer than the input scale (TFLM's accumulator starts from the rescaled offset), then
   rescales to the output. */
#include "mcu_add_n.h"

#include "mcuforge_fixedpoint.h"

void mcu_add_n_f32(const mcu_add_n_f32_params *p, const void *const inputs[], void *output)
{
    float *out = (float *)output;
    for (int32_t i = 0; i < p->size; i++) {
        float x = 0.0f;
        for (int32_t j = 0; j < p->num_inputs; j++) {
            x += ((const float *)inputs[j])[i];
        }
        out[i] = x;
    }
}

void mcu_add_n_s8(const mcu_add_n_s8_params *p, const void *const inputs[], void *output)
{
    int8_t *out = (int8_t *)output;
    const int32_t scale_up = (int32_t)1 << p->left_shift;
    const int32_t start = mcu_requantize(p->input_offset * scale_up, p->input_multiplier, p->input_shift);
    for (int32_t i = 0; i < p->size; i++) {
        int32_t acc = start;
        for (int32_t j = 0; j < p->num_inputs; j++) {
            /* |x + offset| <= 255, so the shifted value fits in int32 */
            const int32_t v = (int32_t)((const int8_t *)inputs[j])[i] + p->input_offset;
            acc += mcu_requantize(v * scale_up, p->input_multiplier, p->input_shift);
        }
        int32_t y = mcu_requantize(acc, p->output_multiplier, p->output_shift) + p->output_offset;
        y = y < -128 ? -128 : y;
        y = y > 127 ? 127 : y;
        out[i] = (int8_t)y;
    }
}
