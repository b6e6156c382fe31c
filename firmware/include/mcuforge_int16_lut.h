/*
 * TFLM's int16 sigmoid and tanh (reference_integer_ops::Logistic / Tanh for int16): a 256-entry table
 * of sigmoid(i / 24) in Q0.16 with linear interpolation, tanh(x) = 2 sigmoid(2x) - 1 read from the
 * same table with one more input bit. Used by the int16 LOGISTIC / TANH kernels and the integer LSTM's
 * gates (mcuforge_lstm.h); ir/ops/_int16_lut.py is the numpy twin and holds the table.
 */
#ifndef MCUFORGE_INT16_LUT_H
#define MCUFORGE_INT16_LUT_H

#include <stdint.h>

/** An input brought onto the table's scale: (x * multiplier + 2^(shift - 1)) >> shift, shift in
    [0, 31], the product within int32. */
static inline int32_t mcu_lut_input(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t round = shift > 0 ? (int32_t)1 << (shift - 1) : 0;
    return (x * multiplier + round) >> shift;
}

/** The table at |v| >> bits, interpolated on the low `bits` bits, in units of 2^-bits of an entry;
    `saturated` (scaled alike) from the last segment on. */
static inline uint32_t mcu_lut_interpolate(const uint16_t *table, int32_t v, int32_t bits, uint32_t saturated)
{
    const uint32_t a = (uint32_t)(v < 0 ? -v : v);
    const uint32_t h = a >> bits;
    if (h >= 255u) {
        return saturated << bits;
    }
    const uint32_t ua = table[h], ub = table[h + 1u];
    return (ua << bits) + (a & ((1u << bits) - 1u)) * (ub - ua);
}

/** sigmoid(v) in Q0.15 for v on the table's scale (steps of 2^9). */
static inline int32_t mcu_sigmoid_lut_s16(int32_t v, const uint16_t *table)
{
    uint32_t r = mcu_lut_interpolate(table, v, 9, 0x7FFFu << 1); /* saturated: 0x7FFF << 10 */
    r = v >= 0 ? r + (1u << 9) : (1u << 25) - r + (1u << 9) - 1u;
    return (int32_t)(r >> 10);
}

/** tanh(v) in Q0.15 for v on the table's scale (steps of 2^8). */
static inline int32_t mcu_tanh_lut_s16(int32_t v, const uint16_t *table)
{
    int32_t r = (int32_t)mcu_lut_interpolate(table, v, 8, 0xFFFFu);
    r = v >= 0 ? r - (1 << 23) + (1 << 7) : -r + (1 << 23) + (1 << 7) - 1;
    return r >> 8;
}

#endif /* MCUFORGE_INT16_LUT_H */
