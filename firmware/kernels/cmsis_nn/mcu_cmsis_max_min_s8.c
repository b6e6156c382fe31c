/*
 * int8 MAXIMUM / MINIMUM (mcu_cmsis_max_min_s8.h). One worker for both, the comparison a
 * compile-time constant; a scalar operand is splatted once, so the loops see two vectors (or a
 * vector and a constant) and integer max/min do not depend on the operand order.
 */
#include "mcu_cmsis_max_min_s8.h"

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_mve.h"

static inline __attribute__((always_inline)) int8_t pick(int8_t a, int8_t b, const int is_max)
{
    return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

static inline __attribute__((always_inline)) void max_min(const mcu_cmsis_max_min_params *p, const int8_t *input1,
                                                          const int8_t *input2, int8_t *output, const int is_max)
{
    int32_t n = p->size;
    /* the vector operand, and the other one: a vector (step 1) or one element (step 0) */
    const int8_t *x = p->scalar == 1 ? input2 : input1;
    const int8_t *y = p->scalar == 1 ? input1 : input2;
    const int8_t y0 = y[0]; /* read before any output is written (the output may be over it) */
#if defined(MCU_CMSIS_USE_MVE)
    const int8x16_t ys = vdupq_n_s8(y0);
    while (n > 0) {
        const mve_pred16_t pred = vctp8q((uint32_t)n);
        const int8x16_t a = vldrbq_z_s8(x, pred);
        const int8x16_t b = p->scalar ? ys : vldrbq_z_s8(y, pred);
        vstrbq_p_s8(output, is_max ? vmaxq_s8(a, b) : vminq_s8(a, b), pred);
        x += 16;
        y += 16;
        output += 16;
        n -= 16;
    }
#else
#if defined(MCU_CMSIS_USE_DSP)
    const int32_t ys = mcu_splat_s8x4(y0);
    for (; n >= 4; n -= 4) {
        const int32_t a = mcu_read_s8x4(x);
        const int32_t b = p->scalar ? ys : mcu_read_s8x4(y);
        mcu_write_s8x4(output, is_max ? mcu_max_s8x4(a, b) : mcu_min_s8x4(a, b));
        x += 4;
        y += 4;
        output += 4;
    }
#endif
    for (; n > 0; n--) {
        *output++ = pick(*x++, p->scalar ? y0 : *y, is_max);
        y++;
    }
#endif
}

void mcu_cmsis_maximum_s8(const mcu_cmsis_max_min_params *p, const int8_t *input1, const int8_t *input2,
                          int8_t *output)
{
    max_min(p, input1, input2, output, 1);
}

void mcu_cmsis_minimum_s8(const mcu_cmsis_max_min_params *p, const int8_t *input1, const int8_t *input2,
                          int8_t *output)
{
    max_min(p, input1, input2, output, 0);
}
