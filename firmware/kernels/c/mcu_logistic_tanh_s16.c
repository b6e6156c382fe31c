/* Portable int16 LOGISTIC and TANH: TFLM's reference_integer_ops::Logistic / Tanh on int16, a lookup
   in the sigmoid table with linear interpolation (tanh(x) = 2 sigmoid(2x) - 1 reads the same table
   with one more bit of the input). Each element is read before it is written: works in place. */
#include "mcu_kernels_c.h"

/** x on the table's scale: (x * multiplier + 2^(shift - 1)) >> shift, |result| < 2^31. */
static inline int32_t table_input(const mcu_logistic_tanh_s16_params *p, int16_t x)
{
    const int32_t rounding = p->input_shift > 0 ? (int32_t)1 << (p->input_shift - 1) : 0;
    return ((int32_t)x * p->input_multiplier + rounding) >> p->input_shift;
}

/** The table at |v| / 2^bits, interpolated linearly on the low `bits` bits (TFLM's int16 lookup), in
    units of 2^-bits of a table entry; `saturated` (scaled alike) from the last segment on. */
static inline uint32_t interpolate(const uint16_t *table, int32_t v, int32_t bits, uint32_t saturated)
{
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t h = a >> bits;
    if (h >= 255) {
        return saturated << bits;
    }
    const uint32_t ua = table[h];
    const uint32_t ub = table[h + 1];
    return (ua << bits) + (a & ((1u << bits) - 1)) * (ub - ua);
}

void mcu_logistic_s16(const mcu_logistic_tanh_s16_params *p, const int16_t *input, const uint16_t *table,
                      int16_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        const int32_t v = table_input(p, input[i]);
        uint32_t r = interpolate(table, v, 9, 0x7FFF << 1); /* saturated: 0x7FFF << 10 */
        r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1;
        output[i] = (int16_t)(r >> 10);
    }
}

void mcu_tanh_s16(const mcu_logistic_tanh_s16_params *p, const int16_t *input, const uint16_t *table,
                  int16_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        const int32_t v = table_input(p, input[i]);
        int32_t r = (int32_t)interpolate(table, v, 8, 0xFFFF);
        r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
        output[i] = (int16_t)(r >> 8);
    }
}
