/*
 * Four rows of an int8 matrix times an int8 vector, the core of the recurrent kernels (LSTM gates,
 * SVDF feature filters), and the requantization and saturation they share.
 *
 * mcu_cmsis_rows4_dot: on the DSP path an inline-assembly loop (four values of the vector per
 * iteration, split once by SXTB16 / SXTB16 ROR #8 for the four rows; each row's weight word the
 * same way; two SMLAD per row: 24 instructions per 16 multiply-accumulates, 13 registers, none
 * spilled), on Helium mcu_cmsis_mve_dot4_rows, else plain C. The row length k must be a multiple
 * of 4 (the lowerings zero-pad the rows, the kernels copy the vector into a zero-padded scratch row).
 */
#ifndef MCU_CMSIS_ROWS4_H
#define MCU_CMSIS_ROWS4_H

#include <stdint.h>

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_gemm_mve.h"
#include "mcu_cmsis_mve.h"
#include "mcuforge_fixedpoint.h"

/** TFLM's requantization (multiplier m, shift s) plus offset, or on the DSP path the proven record
    rq when it has one (rq[0] != 0; its `add` holds the offset): equal for every value the caller
    can pass. */
static inline int32_t mcu_cmsis_requant_rq(int32_t acc, int32_t m, int32_t s, int32_t offset, const int32_t *rq)
{
#if defined(MCU_CMSIS_USE_DSP)
    if (rq[0] != 0) {
        return mcu_cmsis_rq3(acc, rq[0], rq[1], rq[2]);
    }
#else
    (void)rq;
#endif
    return mcu_requantize(acc, m, s) + offset;
}

/** x saturated to int16 (SSAT on the DSP path). */
static inline int32_t mcu_cmsis_ssat16(int32_t x)
{
#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_DSP_EMULATE)
    int32_t r;
    __asm__("ssat %0, #16, %1" : "=r"(r) : "r"(x));
    return r;
#else
    return x < -32768 ? -32768 : x > 32767 ? 32767 : x;
#endif
}

/** acc[0..3] += the rows w, w + k, w + 2k, w + 3k times x (k values, a multiple of 4, at least 4). Not inlined:
    its loop needs 13 registers, which only a function of its own can give it (and only when
    optimizing: at -O0 the frame pointer takes one, and the plain C loop runs instead). */
static __attribute__((noinline, unused)) void mcu_cmsis_rows4_dot(const int8_t *x, const int8_t *w, int32_t k, int32_t *acc)
{
#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE) && !defined(MCU_CMSIS_DSP_EMULATE) && \
    defined(__OPTIMIZE__)
    /* Four values of x per iteration, split once by SXTB16 / SXTB16 ROR #8 into lanes (0, 2) and
       (1, 3); each row's weight word the same way; two SMLAD per row. Rows 0 and 1 through wa
       ([wa], [wa, k]), rows 2 and 3 through wb = wa + 2k: 13 registers, none spilled. */
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int8_t *wa = w, *wb = w + 2 * k;
    const int8_t *const end = x + k;
    int32_t x02, x13, t0, t1;
    __asm__ volatile("1:\n\t"
                     "ldr %[t0], [%[x]], #4\n\t"
                     "sxtb16 %[x02], %[t0]\n\t"
                     "sxtb16 %[x13], %[t0], ror #8\n\t"
                     "ldr %[t0], [%[wa], %[k]]\n\t"
                     "sxtb16 %[t1], %[t0]\n\t"
                     "sxtb16 %[t0], %[t0], ror #8\n\t"
                     "smlad %[a1], %[x02], %[t1], %[a1]\n\t"
                     "smlad %[a1], %[x13], %[t0], %[a1]\n\t"
                     "ldr %[t0], [%[wa]], #4\n\t"
                     "sxtb16 %[t1], %[t0]\n\t"
                     "sxtb16 %[t0], %[t0], ror #8\n\t"
                     "smlad %[a0], %[x02], %[t1], %[a0]\n\t"
                     "smlad %[a0], %[x13], %[t0], %[a0]\n\t"
                     "ldr %[t0], [%[wb], %[k]]\n\t"
                     "sxtb16 %[t1], %[t0]\n\t"
                     "sxtb16 %[t0], %[t0], ror #8\n\t"
                     "smlad %[a3], %[x02], %[t1], %[a3]\n\t"
                     "smlad %[a3], %[x13], %[t0], %[a3]\n\t"
                     "ldr %[t0], [%[wb]], #4\n\t"
                     "sxtb16 %[t1], %[t0]\n\t"
                     "sxtb16 %[t0], %[t0], ror #8\n\t"
                     "smlad %[a2], %[x02], %[t1], %[a2]\n\t"
                     "smlad %[a2], %[x13], %[t0], %[a2]\n\t"
                     "cmp %[x], %[end]\n\t"
                     "bne 1b\n"
                     : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [wa] "+r"(wa),
                       [wb] "+r"(wb), [x02] "=&r"(x02), [x13] "=&r"(x13), [t0] "=&r"(t0), [t1] "=&r"(t1)
                     : [k] "r"(k), [end] "r"(end)
                     : "cc", "memory");
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
#elif defined(MCU_CMSIS_USE_MVE)
    vstrwq_s32(acc, mcu_cmsis_mve_dot4_rows(x, w, k, acc));
#else
    for (int32_t j = 0; j < 4; j++) {
        int32_t a = acc[j];
        for (int32_t i = 0; i < k; i++) {
            a += x[i] * w[j * k + i];
        }
        acc[j] = a;
    }
#endif
}

#endif /* MCU_CMSIS_ROWS4_H */
