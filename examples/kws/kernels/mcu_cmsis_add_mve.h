/*
 * Helium (MVE) element-wise addition, included by mcu_cmsis_add_s8.c when MCU_CMSIS_USE_MVE is set.
 *
 * TFLM's AddFunc on four elements per vector (widening byte loads): (x + offset) << left_shift, the
 * saturating rounding doubling high multiply (VQRDMULH by a scalar), the rounding divide by a power
 * of two (VRSHL by a scalar after the -1 fix-up of negative values, see mcu_cmsis_mve.h), the sum,
 * the output rescale, offset and clamp, and a narrowing byte store. Sixteen elements per loop
 * iteration; the last one tail-predicated. Inputs are read before the output is written, element by
 * element in the same positions, so the output may be either input.
 */
#ifndef MCU_CMSIS_ADD_MVE_H
#define MCU_CMSIS_ADD_MVE_H

#include "mcu_cmsis_mve.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_MVE)

/** TFLM's rescale of x: x * 2^left, VQRDMULH by m, the rounding divide by 2^right (right >= 0):
    `fix` is all ones when right > 0, else zero, so the -1 fix-up of negative values only applies
    to a real division. */
static inline __attribute__((always_inline)) int32x4_t mcu_cmsis_mve_rescale_n(int32x4_t x, int32_t left, int32_t m,
                                                                               int32_t right, int32x4_t fix)
{
    x = vshlq_r_s32(x, left);
    x = vqrdmulhq_n_s32(x, m);
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, fix), 31));
    return vrshlq_n_s32(x, -right);
}

/** VQRDMULH by m, then (when `divide`: right > 0, a compile-time constant) the rounding divide by
    2^right, neg_right = -right. */
static inline __attribute__((always_inline)) int32x4_t mcu_cmsis_mve_rescale_down(int32x4_t x, int32_t m,
                                                                                  int32_t neg_right, const int divide)
{
    x = vqrdmulhq_n_s32(x, m);
    if (divide) {
        x = vqaddq_s32(x, vshrq_n_s32(x, 31));
        x = vrshlq_n_s32(x, neg_right);
    }
    return x;
}

/** The common cases: input shifts <= 0 (each divides when < 0: d1, d2 compile-time constants) and
    an output shift < 0. Four elements per iteration, the last partial group through a VCTP
    predicate. */
static inline __attribute__((always_inline)) void mcu_cmsis_add_s8_mve_fast(const mcu_cmsis_add_params *p,
                                                                            const int8_t *input1,
                                                                            const int8_t *input2, int8_t *output,
                                                                            const int d1, const int d2)
{
    const int32_t size = p->size;
    /* (x + offset) << left_shift == x * scale + (offset << left_shift): one VMLAS (x * vector +
       scalar) */
    const int32x4_t scale = vdupq_n_s32((int32_t)1 << p->left_shift);
    const int32_t c1 = (int32_t)((uint32_t)p->input1_offset << p->left_shift);
    const int32_t c2 = (int32_t)((uint32_t)p->input2_offset << p->left_shift);
    const int32_t m1 = p->input1_multiplier, s1 = p->input1_shift;
    const int32_t m2 = p->input2_multiplier, s2 = p->input2_shift;
    const int32_t om = p->output_multiplier, os = p->output_shift, out_offset = p->output_offset;
    const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
    int32_t n = size >> 2;
    while (n-- > 0) {
        const int32x4_t a = mcu_cmsis_mve_rescale_down(vmlasq_n_s32(vldrbq_s32(input1), scale, c1), m1, s1, d1);
        const int32x4_t b = mcu_cmsis_mve_rescale_down(vmlasq_n_s32(vldrbq_s32(input2), scale, c2), m2, s2, d2);
        input1 += 4;
        input2 += 4;
        int32x4_t y = mcu_cmsis_mve_rescale_down(vaddq_s32(a, b), om, os, 1);
        y = vminq_s32(vmaxq_s32(vaddq_n_s32(y, out_offset), lo), hi);
        vstrbq_s32(output, y);
        output += 4;
    }
    if (size & 3) {
        const mve_pred16_t pred = vctp32q((uint32_t)(size & 3));
        const int32x4_t x1 = vmlasq_n_s32(vldrbq_z_s32(input1, pred), scale, c1);
        const int32x4_t x2 = vmlasq_n_s32(vldrbq_z_s32(input2, pred), scale, c2);
        const int32x4_t a = mcu_cmsis_mve_rescale_down(x1, m1, s1, d1);
        const int32x4_t b = mcu_cmsis_mve_rescale_down(x2, m2, s2, d2);
        int32x4_t y = mcu_cmsis_mve_rescale_down(vaddq_s32(a, b), om, os, 1);
        y = vminq_s32(vmaxq_s32(vaddq_n_s32(y, out_offset), lo), hi);
        vstrbq_p_s32(output, y, pred);
    }
}

/** Any shifts (TFLM allows an input or output shift of 0, the output one even > 0). */
static inline void mcu_cmsis_add_s8_mve_any(const mcu_cmsis_add_params *p, const int8_t *input1,
                                            const int8_t *input2, int8_t *output)
{
    const int32_t size = p->size;
    const int32_t ls = p->left_shift;
    const int32_t off1 = p->input1_offset, m1 = p->input1_multiplier, r1 = -p->input1_shift;
    const int32_t off2 = p->input2_offset, m2 = p->input2_multiplier, r2 = -p->input2_shift;
    const int32_t om = p->output_multiplier, out_offset = p->output_offset;
    const int32_t ol = p->output_shift > 0 ? p->output_shift : 0;
    const int32_t orr = p->output_shift > 0 ? 0 : -p->output_shift;
    const int32x4_t fix1 = vdupq_n_s32(r1 > 0 ? -1 : 0);
    const int32x4_t fix2 = vdupq_n_s32(r2 > 0 ? -1 : 0);
    const int32x4_t fixo = vdupq_n_s32(orr > 0 ? -1 : 0);
    const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
    for (int32_t i = 0; i < size; i += 4) {
        const mve_pred16_t pred = vctp32q((uint32_t)(size - i));
        const int32x4_t x1 = vaddq_n_s32(vldrbq_z_s32(input1 + i, pred), off1);
        const int32x4_t x2 = vaddq_n_s32(vldrbq_z_s32(input2 + i, pred), off2);
        const int32x4_t a = mcu_cmsis_mve_rescale_n(x1, ls, m1, r1, fix1);
        const int32x4_t b = mcu_cmsis_mve_rescale_n(x2, ls, m2, r2, fix2);
        int32x4_t y = mcu_cmsis_mve_rescale_n(vaddq_s32(a, b), ol, om, orr, fixo);
        y = vminq_s32(vmaxq_s32(vaddq_n_s32(y, out_offset), lo), hi);
        vstrbq_p_s32(output + i, y, pred);
    }
}

static inline void mcu_cmsis_add_s8_mve(const mcu_cmsis_add_params *p, const int8_t *input1, const int8_t *input2,
                                        int8_t *output)
{
    const int32_t s1 = p->input1_shift, s2 = p->input2_shift;
    if (p->output_shift >= 0 || s1 > 0 || s2 > 0) {
        mcu_cmsis_add_s8_mve_any(p, input1, input2, output);
    } else if (s1 < 0 && s2 < 0) {
        mcu_cmsis_add_s8_mve_fast(p, input1, input2, output, 1, 1);
    } else if (s1 < 0) {
        mcu_cmsis_add_s8_mve_fast(p, input1, input2, output, 1, 0);
    } else if (s2 < 0) {
        mcu_cmsis_add_s8_mve_fast(p, input1, input2, output, 0, 1);
    } else {
        mcu_cmsis_add_s8_mve_fast(p, input1, input2, output, 0, 0);
    }
}

#endif /* MCU_CMSIS_USE_MVE */
#endif /* MCU_CMSIS_ADD_MVE_H */
