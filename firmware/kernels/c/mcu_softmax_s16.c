/* Portable int16 SOFTMAX: TFLM's reference_ops::SoftmaxInt16, step for step (two interpolated
   513-entry tables: exp over [-10, 0] and 1 / (1 + x) over [0, 1], both Q0.15). */
#include "mcu_kernels_c.h"

/** TFLM's generic_int16_table_lookup: entry 256 + (v >> 7) and the next, interpolated with the low
    7 bits of v, in int16 arithmetic. */
static int16_t lut_lookup(int16_t v, const int16_t *lut)
{
    const int32_t index = 256 + (v >> 7);
    const int16_t base = lut[index];
    const int16_t slope = (int16_t)(lut[index + 1] - base);
    const int32_t delta = ((int32_t)slope * (v & 0x7F) + 64) >> 7;
    return (int16_t)(base + delta);
}

static int16_t saturate16(int32_t v)
{
    return (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
}

/** Leading zeros of a positive int32 (1 .. 31). */
static int32_t leading_zeros(int32_t v)
{
    int32_t n = 0;
    for (uint32_t u = (uint32_t)v; (u & 0x80000000u) == 0; u <<= 1) {
        n++;
    }
    return n;
}

void mcu_softmax_s16(const mcu_softmax_s16_params *p, const int16_t *input, const int16_t *exp_lut,
                     const int16_t *one_over_one_plus_x_lut, int16_t *output)
{
    for (int32_t r = 0; r < p->rows; r++) {
        const int16_t *x = input + r * p->depth;
        int16_t *out = output + r * p->depth;
        int16_t max = INT16_MIN;
        for (int32_t c = 0; c < p->depth; c++) {
            max = x[c] > max ? x[c] : max;
        }
        int32_t sum = 0; /* at most 65538 * 32767 */
        for (int32_t c = 0; c < p->depth; c++) {
            const int32_t scaled = mcu_requantize((int32_t)x[c] - max, p->input_multiplier, p->input_shift);
            out[c] = lut_lookup(saturate16(scaled + 32767), exp_lut);
            sum += out[c];
        }
        const int32_t zeros = leading_zeros(sum);
        const int32_t shifted = (int32_t)((((int64_t)sum << (zeros - 1)) + (1 << 13)) >> 14);
        const int16_t reciprocal = lut_lookup(saturate16(shifted - ((1 << 15) + (1 << 16))), one_over_one_plus_x_lut);
        const int32_t right = 31 - zeros;
        for (int32_t c = 0; c < p->depth; c++) {
            const int32_t v = (int32_t)(((int64_t)out[c] * reciprocal + ((int64_t)1 << (right - 1))) >> right);
            out[c] = (int16_t)(v < 0 ? 0 : (v > 32767 ? 32767 : v));
        }
    }
}
