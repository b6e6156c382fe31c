/*
 * Helium (MVE, Armv8.1-M: Cortex-M55, M85) building blocks of the cmsis-nn kernels.
 *
 * MCU_CMSIS_USE_MVE is defined when the compiler targets integer MVE (__ARM_FEATURE_MVE bit 0);
 * the kernels then take their MVE path in preference to the DSP one. Everything here is exact
 * TFLM arithmetic:
 *   - the matrix products are in mcu_cmsis_gemm_mve.h, the depthwise convolution in
 *     mcu_cmsis_dwconv_mve.h, the addition in mcu_cmsis_add_mve.h;
 *   - requantization of four accumulators at once: VQRDMULH is gemmlowp's saturating rounding
 *     doubling high multiply bit for bit, and RoundingDivideByPOT is VRSHL after subtracting one from
 *     negative values (gemmlowp's vector fix-up), which turns VRSHL's round-half-up into TFLM's
 *     round-half-away-from-zero.
 */
#ifndef MCU_CMSIS_MVE_H
#define MCU_CMSIS_MVE_H

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && !defined(__ARM_BIG_ENDIAN)
#define MCU_CMSIS_USE_MVE 1

#include <arm_mve.h>
#include <stdint.h>

/** TFLM's requantization of four accumulators (channels with their own multiplier and shift),
    plus the output offset, clamped: the result as four int32 lanes. */
static inline int32x4_t mcu_cmsis_mve_requantize_vec(int32x4_t x, const int32_t *multiplier, const int32_t *shift,
                                                     int32_t out_offset, int32_t act_min, int32_t act_max)
{
    const int32x4_t s = vldrwq_s32(shift);
    const int32x4_t left = vmaxq_s32(s, vdupq_n_s32(0));
    const int32x4_t right = vminq_s32(s, vdupq_n_s32(0)); /* -exponent: VRSHL shifts right */
    x = vshlq_s32(x, left);
    x = vqrdmulhq_s32(x, vldrwq_s32(multiplier));
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31)); /* -1 for negative x when exponent > 0 */
    x = vrshlq_s32(x, right);
    x = vaddq_n_s32(x, out_offset);
    x = vmaxq_s32(x, vdupq_n_s32(act_min));
    return vminq_s32(x, vdupq_n_s32(act_max));
}

#endif /* __ARM_FEATURE_MVE */
#endif /* MCU_CMSIS_MVE_H */
