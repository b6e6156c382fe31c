/*
 * mcuforge fixed-point primitives: TensorFlow Lite Micro's integer requantization semantics in C.
 *
 * Double rounding, as TFLM: a saturating rounding doubling high multiply, then a rounding right
 * shift (halves away from zero). Bit-exact with mcuforge/ir/quant.py, which tests compare against.
 */
#ifndef MCUFORGE_FIXEDPOINT_H
#define MCUFORGE_FIXEDPOINT_H

#include <stdint.h>

/** round(a * b / 2^31), saturating the single overflow case a == b == INT32_MIN. */
static inline int32_t mcu_srdhm(int32_t a, int32_t b)
{
    if (a == INT32_MIN && b == INT32_MIN) {
        return INT32_MAX;
    }
    const int64_t ab = (int64_t)a * (int64_t)b;
    const int64_t nudge = ab >= 0 ? (1LL << 30) : (1 - (1LL << 30));
    return (int32_t)((ab + nudge) / (1LL << 31));
}

/** x / 2^exponent, rounded half away from zero; exponent in [0, 31]. */
static inline int32_t mcu_rdbpot(int32_t x, int exponent)
{
    const int32_t mask = (int32_t)((1LL << exponent) - 1);
    const int32_t remainder = x & mask;
    const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/** TFLM's MultiplyByQuantizedMultiplier: x * multiplier * 2^(shift - 31); shift in [-31, 30]. */
static inline int32_t mcu_requantize(int32_t x, int32_t multiplier, int shift)
{
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    return mcu_rdbpot(mcu_srdhm((int32_t)((uint32_t)x << left), multiplier), right);
}

/**
 * mcu_requantize for a multiplier in [0, 2^31) (every multiplier QuantizeMultiplier gives for a
 * positive scale), bit-exact with it but cheaper: with a non-negative multiplier the saturating
 * rounding doubling high multiply never saturates and equals (x * multiplier + 2^30) >> 31 (halves
 * of negative products round up in both forms), one SMLAL on Cortex-M; the rounding divide by
 * 2^right follows with 32-bit masks. Assumes arithmetic right shifts of negative values.
 */
static inline int32_t mcu_requantize_q31(int32_t x, int32_t multiplier, int32_t shift)
{
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    const int32_t scaled = (int32_t)((uint32_t)x << left);
    const int32_t high = (int32_t)(((int64_t)scaled * multiplier + ((int64_t)1 << 30)) >> 31);
    const int32_t mask = (int32_t)(((uint32_t)1 << right) - 1u);
    const int32_t threshold = (mask >> 1) + (high < 0 ? 1 : 0);
    return (high >> right) + ((high & mask) > threshold ? 1 : 0);
}

/** TFLM's MultiplyByQuantizedMultiplier for an int64 accumulator (16x8 layers): the multiplier rounded
    to Q0.15 (0x7FFF from 0x7FFF0000 up), one rounding shift by 15 - shift (halves up), the result
    truncated to int32 as TFLM's cast. |x| < 2^47, shift in [-31, 14]. */
static inline int32_t mcu_requantize_s64(int64_t x, int32_t multiplier, int shift)
{
    const int64_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const int total = 15 - shift;
    return (int32_t)((x * reduced + ((int64_t)1 << (total - 1))) >> total);
}

#endif /* MCUFORGE_FIXEDPOINT_H */
