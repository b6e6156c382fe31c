/*
 * DSP path of the convolutions (mcu_cmsis_conv2d_s8, mcu_cmsis_conv2d_1x1_s8): the matrix product
 * of two int16 columns (two output pixels' inputs) with the int8 OHWI weight rows, two output
 * channels per step.
 *
 * "Pair" layout of the two columns c0, c1 of k values in scratch (word aligned), built once per
 * pixel pair and read by every output channel:
 *   - for each full group g of four values: four words c0(x0, x2), c0(x1, x3), c1(x0, x2),
 *     c1(x1, x3) (int16 lanes, bottom first), the order SXTB16 / SXTB16 ROR #8 split a weight word
 *     w0 w1 w2 w3 into, so each SMLAD does two multiply-accumulates;
 *   - then each of the k % 4 remaining values as one word (c0[t], c1[t]).
 * Two LDRD bring a group's four words, each weight word is split once for both columns: 18
 * instructions per 16 multiply-accumulates (two groups per loop iteration). The channel loop comes
 * in two instances (not inlined, each with all registers to itself): the fast requantization with
 * SSAT alone (rq proven, whole int8 clamp), and everything else.
 */
#ifndef MCU_CMSIS_PAIR_DSP_H
#define MCU_CMSIS_PAIR_DSP_H

#include "mcu_cmsis_dsp.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)

/** Pair words of four values of each column (x: four int8 of pixel 0, y: of pixel 1) at dst. */
static inline void mcu_cmsis_pair_put4(int32_t *dst, int32_t x, int32_t y)
{
    dst[0] = mcu_sxtb16(x);
    dst[1] = mcu_sxtb16_ror8(x);
    dst[2] = mcu_sxtb16(y);
    dst[3] = mcu_sxtb16_ror8(y);
}

/** Two pixels' inputs in place (in_c values each, e.g. 1x1 convolution pixels) into the pair
    layout. */
static inline void mcu_cmsis_pair_pixels(const int8_t *in0, const int8_t *in1, int32_t in_c, int32_t *pair)
{
    int32_t i = 0;
    for (; i + 4 <= in_c; i += 4, pair += 4) {
        mcu_cmsis_pair_put4(pair, mcu_read_s8x4(in0 + i), mcu_read_s8x4(in1 + i));
    }
    for (; i < in_c; i++) {
        *pair++ = (int32_t)(((uint32_t)(uint16_t)in1[i] << 16) | (uint16_t)in0[i]);
    }
}

/** One group of four values: both columns' words at c times the next weight word of channels a
    and b (advancing both); returns the next group's words. */
static inline const int32_t *mcu_cmsis_pair_group(const int32_t *c, const int8_t **wa, const int8_t **wb,
                                                  int32_t *acc0a, int32_t *acc1a, int32_t *acc0b, int32_t *acc1b)
{
    int32_t col[4];
    c = mcu_ldrd_inc(c, &col[0], &col[1]);
    c = mcu_ldrd_inc(c, &col[2], &col[3]);
    const int32_t wa_word = mcu_read_s8x4(*wa);
    *wa += 4;
    const int32_t wa02 = mcu_sxtb16(wa_word), wa13 = mcu_sxtb16_ror8(wa_word);
    *acc0a = mcu_smlad(col[0], wa02, *acc0a);
    *acc0a = mcu_smlad(col[1], wa13, *acc0a);
    *acc1a = mcu_smlad(col[2], wa02, *acc1a);
    *acc1a = mcu_smlad(col[3], wa13, *acc1a);
    mcu_schedule_barrier(); /* keeps the second weight word's load here: no register to spare */
    const int32_t wb_word = mcu_read_s8x4(*wb);
    *wb += 4;
    const int32_t wb02 = mcu_sxtb16(wb_word), wb13 = mcu_sxtb16_ror8(wb_word);
    *acc0b = mcu_smlad(col[0], wb02, *acc0b);
    *acc0b = mcu_smlad(col[1], wb13, *acc0b);
    *acc1b = mcu_smlad(col[2], wb02, *acc1b);
    *acc1b = mcu_smlad(col[3], wb13, *acc1b);
    mcu_schedule_barrier();
    return c;
}

/** acc[0..3] (pixel 0 and 1 of channel a, then of channel b) += the pair columns times the weight
    rows wa and wb of k values (wb may equal wa). */
__attribute__((always_inline)) static inline void mcu_cmsis_pair_rows(const int32_t *pair, int32_t k, const int8_t *wa, const int8_t *wb,
                                       int32_t *acc0a, int32_t *acc1a, int32_t *acc0b, int32_t *acc1b)
{
    const int32_t groups = k >> 2;
    const int32_t *c = pair;
    const int8_t *const wa_end = wa + 4 * groups;
    if (groups & 1) {
        c = mcu_cmsis_pair_group(c, &wa, &wb, acc0a, acc1a, acc0b, acc1b);
    }
    while (wa != wa_end) { /* two groups per iteration */
        c = mcu_cmsis_pair_group(c, &wa, &wb, acc0a, acc1a, acc0b, acc1b);
        c = mcu_cmsis_pair_group(c, &wa, &wb, acc0a, acc1a, acc0b, acc1b);
    }
    for (int32_t t = 0; t < (k & 3); t++) { /* the tail words (c0[t], c1[t]) */
        const int32_t v = c[t];
        const int32_t v0 = (int16_t)(uint16_t)((uint32_t)v & 0xFFFFu), v1 = v >> 16;
        *acc0a += v0 * wa[t];
        *acc1a += v1 * wa[t];
        *acc0b += v0 * wb[t];
        *acc1b += v1 * wb[t];
    }
}

/** The requantization of the four accumulators of a channel pair, in one of three forms. */
enum { MCU_PAIR_GENERAL, MCU_PAIR_FAST_FULL, MCU_PAIR_FAST_CLAMP };

static inline int32_t mcu_cmsis_pair_requant(const mcu_cmsis_conv_params *p, const int32_t *multiplier,
                                              const int32_t *shift, const int32_t *rq, int32_t oc, int mode,
                                              int32_t acc)
{
    if (mode == MCU_PAIR_FAST_FULL) {
        return mcu_ssat8(mcu_cmsis_rq(acc, rq + 3 * oc));
    }
    if (mode == MCU_PAIR_FAST_CLAMP) {
        return mcu_cmsis_rq_clamp(acc, rq + 3 * oc, p->act_min, p->act_max);
    }
    return mcu_cmsis_requantize_s8(acc, multiplier[oc], shift[oc], p->output_offset, p->act_min, p->act_max);
}

/** out0[oc] / out1[oc] for every output channel from the pair layout of k values; `mode` a
    constant in each instance below, so each has its own straight epilogue. */
__attribute__((always_inline)) static inline void mcu_cmsis_pair_matmul_mode(const mcu_cmsis_conv_params *p, const int8_t *weights,
                                              const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                              const int32_t *rq, const int32_t *pair, int32_t k, int8_t *out0,
                                              int8_t *out1, int mode)
{
    const int32_t out_c = p->out_c;
    const int8_t *wa = weights;
    int32_t oc = 0;
    for (; oc + 2 <= out_c; oc += 2, wa += 2 * k) {
        int32_t acc0a = bias[oc], acc1a = acc0a, acc0b = bias[oc + 1], acc1b = acc0b;
        mcu_cmsis_pair_rows(pair, k, wa, wa + k, &acc0a, &acc1a, &acc0b, &acc1b);
        /* all four values before the stores: an int8 store may alias the records, forcing reloads */
        const int32_t v0a = mcu_cmsis_pair_requant(p, multiplier, shift, rq, oc, mode, acc0a);
        const int32_t v1a = mcu_cmsis_pair_requant(p, multiplier, shift, rq, oc, mode, acc1a);
        const int32_t v0b = mcu_cmsis_pair_requant(p, multiplier, shift, rq, oc + 1, mode, acc0b);
        const int32_t v1b = mcu_cmsis_pair_requant(p, multiplier, shift, rq, oc + 1, mode, acc1b);
        out0[oc] = (int8_t)v0a;
        out1[oc] = (int8_t)v1a;
        out0[oc + 1] = (int8_t)v0b;
        out1[oc + 1] = (int8_t)v1b;
    }
    if (oc < out_c) { /* an odd last channel runs alone */
        int32_t acc0a = bias[oc], acc1a = acc0a, acc0b = acc0a, acc1b = acc0a;
        mcu_cmsis_pair_rows(pair, k, wa, wa, &acc0a, &acc1a, &acc0b, &acc1b);
        const int32_t v0a = mcu_cmsis_pair_requant(p, multiplier, shift, rq, oc, mode, acc0a);
        const int32_t v1a = mcu_cmsis_pair_requant(p, multiplier, shift, rq, oc, mode, acc1a);
        out0[oc] = (int8_t)v0a;
        out1[oc] = (int8_t)v1a;
    }
}

/* Not inlined: one copy of each, the channel loop with every register to itself. */
__attribute__((noinline)) static void mcu_cmsis_pair_matmul_fast(const mcu_cmsis_conv_params *p, const int8_t *weights,
                                                                 const int32_t *bias, const int32_t *rq,
                                                                 const int32_t *pair, int32_t k, int8_t *out0,
                                                                 int8_t *out1)
{
    mcu_cmsis_pair_matmul_mode(p, weights, bias, NULL, NULL, rq, pair, k, out0, out1, MCU_PAIR_FAST_FULL);
}

__attribute__((noinline)) static void mcu_cmsis_pair_matmul_other(const mcu_cmsis_conv_params *p,
                                                                  const int8_t *weights, const int32_t *bias,
                                                                  const int32_t *multiplier, const int32_t *shift,
                                                                  const int32_t *rq, const int32_t *pair, int32_t k,
                                                                  int8_t *out0, int8_t *out1)
{
    const int mode = rq == NULL ? MCU_PAIR_GENERAL : MCU_PAIR_FAST_CLAMP;
    mcu_cmsis_pair_matmul_mode(p, weights, bias, multiplier, shift, rq, pair, k, out0, out1, mode);
}

/** out0[oc] / out1[oc] for every output channel from the pair layout of k values: the fast
    requantization with SSAT alone when the activation clamp is the whole int8 range. */
static inline void mcu_cmsis_pair_matmul(const mcu_cmsis_conv_params *p, const int8_t *weights, const int32_t *bias,
                                         const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                                         const int32_t *pair, int32_t k, int8_t *out0, int8_t *out1)
{
    if (rq != NULL && p->act_min == -128 && p->act_max == 127) {
        mcu_cmsis_pair_matmul_fast(p, weights, bias, rq, pair, k, out0, out1);
    } else {
        mcu_cmsis_pair_matmul_other(p, weights, bias, multiplier, shift, rq, pair, k, out0, out1);
    }
}

#endif /* MCU_CMSIS_USE_DSP && !MCU_CMSIS_USE_MVE */

#endif /* MCU_CMSIS_PAIR_DSP_H */
