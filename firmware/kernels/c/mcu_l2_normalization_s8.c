/* Portable int8 L2_NORMALIZATION: TFLM's reference_integer_ops::L2Normalization row by row (the
   inverse square root in mcuforge_gemmlowp.h). */
#include "mcu_l2_normalization_s8.h"

#include <math.h>

#include "mcuforge_gemmlowp.h"

#define OUTPUT_SCALE_SHIFT 7 /* the output is in units of 1/128 */

void mcu_l2_normalization_s8(const mcu_l2_normalization_params *p, const int8_t *input, int8_t *output)
{
    for (int32_t r = 0; r < p->rows; r++) {
        const int8_t *in = input + r * p->depth;
        int8_t *out = output + r * p->depth;
        int32_t acc = 0;
        for (int32_t c = 0; c < p->depth; c++) {
            const int32_t a = (int32_t)in[c] + p->input_offset;
            acc += a * a;
        }
        int32_t multiplier;
        int shift;
        mcu_inv_sqrt_multiplier_exp(acc, -1, &multiplier, &shift);
        for (int32_t c = 0; c < p->depth; c++) {
            int32_t v = mcu_requantize((int32_t)in[c] + p->input_offset, multiplier, shift + OUTPUT_SCALE_SHIFT);
            v = v > INT8_MAX ? INT8_MAX : (v < INT8_MIN ? INT8_MIN : v);
            out[c] = (int8_t)v;
        }
    }
}

void mcu_l2_normalization_f32(const mcu_l2_normalization_params *p, const float *input, float *output)
{
    const float epsilon = 1e-6f;
    for (int32_t r = 0; r < p->rows; r++) {
        const float *in = input + r * p->depth;
        float *out = output + r * p->depth;
        float acc = 0.0f;
        for (int32_t c = 0; c < p->depth; c++) {
            const float square = in[c] * in[c];
            acc += square;
        }
        float norm = sqrtf(acc);
        if (norm < epsilon) { /* std::max(norm, epsilon): a NaN norm stays NaN */
            norm = epsilon;
        }
        for (int32_t c = 0; c < p->depth; c++) {
            out[c] = in[c] / norm;
        }
    }
}
