/* Portable int16 LOGISTIC and TANH: TFLM's reference_integer_ops::Logistic / Tanh on int16, the input
   scaled onto the sigmoid table, then a lookup with linear interpolation (mcuforge_int16_lut.h). Each
   element is read before it is written: works in place. */
#include "mcu_kernels_c.h"
#include "mcuforge_int16_lut.h"

void mcu_logistic_s16(const mcu_logistic_tanh_s16_params *p, const int16_t *input, const uint16_t *table,
                      int16_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        const int32_t v = mcu_lut_input(input[i], p->input_multiplier, p->input_shift);
        output[i] = (int16_t)mcu_sigmoid_lut_s16(v, table);
    }
}

void mcu_tanh_s16(const mcu_logistic_tanh_s16_params *p, const int16_t *input, const uint16_t *table,
                  int16_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        const int32_t v = mcu_lut_input(input[i], p->input_multiplier, p->input_shift);
        output[i] = (int16_t)mcu_tanh_lut_s16(v, table);
    }
}
