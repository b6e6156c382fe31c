/*
 * Float <-> quantized values as TFLite Micro's QUANTIZE (AffineQuantize) and DEQUANTIZE compute
 * them, for the generated <prefix>_quantize_input<i>() and <prefix>_dequantize_output<i>().
 */
#ifndef MCUFORGE_QUANTIZE_H
#define MCUFORGE_QUANTIZE_H

#include <math.h>
#include <stdint.h>

/** round(x / scale) + zero_point saturated to [lo, hi]: the division in float32 (not a multiplication
    by 1/scale), halves rounded away from zero (std::round) without libm, NaN to the zero point. Beyond
    2^20 in magnitude every quotient saturates any 8- or 16-bit type, whatever the zero point. */
static inline int32_t mcu_affine_quantize(float x, float scale, int32_t zero_point, int32_t lo, int32_t hi)
{
    const float r = x / scale;
    int32_t q = 0;
    if (r >= 1048576.0f) {
        q = 1048576;
    } else if (r <= -1048576.0f) {
        q = -1048576;
    } else if (!isnan(r)) {
        q = (int32_t)r;                      /* toward zero; exact below 2^20 */
        const float fraction = r - (float)q; /* exact: the bits of r below its units */
        q += (fraction >= 0.5f) - (fraction <= -0.5f);
    }
    q += zero_point;
    return q < lo ? lo : (q > hi ? hi : q);
}

/** scale * (q - zero_point) in float32: both factors are exact float32 values and the product has at
    most 24 + 17 significant bits, so this rounds the same real number once, as TFLM's double product
    converted to float does. */
static inline float mcu_affine_dequantize(int32_t q, float scale, int32_t zero_point)
{
    return scale * (float)(q - zero_point);
}

#endif /* MCUFORGE_QUANTIZE_H */
