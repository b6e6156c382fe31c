/*
 * int8 LSTM (see mcu_cmsis_lstm_s8.h). Per time step:
 *
 *   1. pre[r] = sat16(requantize(input_bias[r] + W[r] . x, gate of r))      r < 4 * units
 *   2. pre[r] = sat16(pre[r] + sat16(requantize(recurrent_bias[r] + R[r] . h, gate of r)))
 *   3. per unit: sigmoid / tanh of its four gates, the new cell state, the new hidden value (written
 *      over h: step 2 has read all of it)
 *
 * The matrix-vector products, four rows of one gate per pass (they share the gate's requantization):
 * mcu_cmsis_rows4_dot (mcu_cmsis_rows4.h); on Helium the four rows requantized as one vector.
 */
#include "mcu_cmsis_lstm_s8.h"

#include <string.h>

#include "mcu_cmsis_rows4.h"

/** Rows [r, end) of one gate (multiplier m, shift s, fast record rq or none): pre[r] =
    sat16(requantize(bias[r] + w[r] . x)), or with `add` the saturated sum with what pre holds (the
    input FC's share). `add` and `fast` are constants where this is inlined, so each of the four
    combinations gets an epilogue without branches. */
static inline __attribute__((always_inline)) void lstm_gate_rows(const int8_t *x, int32_t k, const int8_t *w,
                                                                 const int32_t *bias, int32_t r, int32_t end,
                                                                 int32_t m, int32_t s, const int32_t *rq,
                                                                 int16_t *pre, const int add, const int fast)
{
    const int32_t rm = rq[0], radd = rq[1], rr = rq[2];
    for (; r < end; r += 4) { /* the last pass may hold fewer than four rows of the gate */
        const int32_t n = end - r < 4 ? end - r : 4;
        int32_t acc[4] = {0, 0, 0, 0};
        if (n == 4) {
            acc[0] = bias[r], acc[1] = bias[r + 1], acc[2] = bias[r + 2], acc[3] = bias[r + 3];
            mcu_cmsis_rows4_dot(x, w + r * k, k, acc);
        } else {
            for (int32_t j = 0; j < n; j++) {
                acc[j] = bias[r + j];
                for (int32_t i = 0; i < k; i++) {
                    acc[j] += x[i] * w[(r + j) * k + i];
                }
            }
        }
        for (int32_t j = 0; j < n; j++) {
#if defined(MCU_CMSIS_USE_DSP)
            int32_t v = fast ? mcu_cmsis_rq3(acc[j], rm, radd, rr) : mcu_requantize(acc[j], m, s);
#else
            int32_t v = mcu_requantize(acc[j], m, s);
            (void)rm, (void)radd, (void)rr, (void)fast;
#endif
            v = mcu_cmsis_ssat16(v);
            pre[r + j] = (int16_t)(add ? mcu_cmsis_ssat16(pre[r + j] + v) : v);
        }
    }
}

/** pre[r] = sat16(requantize(bias[r] + w[r] . x)) for the 4 * units rows of stride k (a multiple of
    4), per gate's requantization; with `add`, pre[r] = sat16(pre[r] + that). */
static void lstm_gates_fc(const int8_t *x, int32_t k, const int8_t *w, const int32_t *bias, int32_t units,
                          const int32_t *multiplier, const int32_t *shift, const int32_t *rq, int16_t *pre, int add)
{
    for (int32_t g = 0; g < 4; g++) {
        const int32_t m = multiplier[g], s = shift[g];
        const int32_t *grq = rq + 3 * g;
        const int32_t first = g * units, end = first + units;
        int32_t r = first;
#if defined(MCU_CMSIS_USE_MVE)
        if (s <= 0) { /* four rows requantized as one vector */
            const int32_t mm[4] = {m, m, m, m}, ss[4] = {s, s, s, s};
            const int32x4_t lo = vdupq_n_s32(-32768), hi = vdupq_n_s32(32767);
            for (; r + 4 <= end; r += 4) {
                const int32x4_t acc = mcu_cmsis_mve_dot4_rows(x, w + r * k, k, bias + r);
                int32x4_t v = mcu_cmsis_mve_requantize_right(acc, mm, ss, 0, lo, hi);
                if (add) {
                    v = vminq_s32(vmaxq_s32(vaddq_s32(v, vldrhq_s32(pre + r)), lo), hi);
                }
                vstrhq_s32(pre + r, v);
            }
        }
#endif
        const int fast = grq[0] != 0;
        if (add && fast) {
            lstm_gate_rows(x, k, w, bias, r, end, m, s, grq, pre, 1, 1);
        } else if (add) {
            lstm_gate_rows(x, k, w, bias, r, end, m, s, grq, pre, 1, 0);
        } else if (fast) {
            lstm_gate_rows(x, k, w, bias, r, end, m, s, grq, pre, 0, 1);
        } else {
            lstm_gate_rows(x, k, w, bias, r, end, m, s, grq, pre, 0, 0);
        }
    }
}

/** The product of two Q0.15 values requantized: TFLM's (m, s) plus offset, or the proven record. */
static inline __attribute__((always_inline)) int32_t lstm_product(int32_t prod, int32_t m, int32_t s, int32_t offset,
                                                                  const int32_t *rq, const int fast)
{
#if defined(MCU_CMSIS_USE_DSP)
    if (fast) {
        return mcu_cmsis_rq3(prod, rq[0], rq[1], rq[2]);
    }
#else
    (void)rq, (void)fast;
#endif
    return mcu_requantize(prod, m, s) + offset;
}

/** The four gates of every unit, the new cell state and the new hidden value (into h and out). Every
    parameter is read into a local first: the int8 stores may alias anything, and would make the
    compiler read them again for each unit. `fast` (a constant where inlined): all three products
    have proven records. */
static inline __attribute__((always_inline)) void lstm_update_units(const mcu_lstm_params *p, const int16_t *pre,
                                                                    int16_t *c, int8_t *h, int8_t *out,
                                                                    const uint16_t *table, const int32_t *rq,
                                                                    const int fast)
{
    const int32_t units = p->units, clip = p->cell_clip, zp = p->hidden_zero_point;
    const int32_t fm = p->forget_multiplier, fs = p->forget_shift;
    const int32_t im = p->input_gate_multiplier, is = p->input_gate_shift;
    const int32_t hm = p->hidden_multiplier, hs = p->hidden_shift;
    const int32_t tm = p->tanh_multiplier, ts = p->tanh_shift;
    const int32_t frq[3] = {rq[3 * MCU_LSTM_RQ_FORGET], rq[3 * MCU_LSTM_RQ_FORGET + 1], rq[3 * MCU_LSTM_RQ_FORGET + 2]};
    const int32_t irq[3] = {rq[3 * MCU_LSTM_RQ_INPUT_GATE], rq[3 * MCU_LSTM_RQ_INPUT_GATE + 1],
                            rq[3 * MCU_LSTM_RQ_INPUT_GATE + 2]};
    const int32_t hrq[3] = {rq[3 * MCU_LSTM_RQ_HIDDEN], rq[3 * MCU_LSTM_RQ_HIDDEN + 1], rq[3 * MCU_LSTM_RQ_HIDDEN + 2]};
    for (int32_t u = 0; u < units; u++) {
        const int32_t i = mcu_lstm_sigmoid(pre[u], table);
        const int32_t f = mcu_lstm_sigmoid(pre[units + u], table);
        const int32_t g = mcu_lstm_tanh(pre[2 * units + u], 3, 0, table);
        const int32_t o = mcu_lstm_sigmoid(pre[3 * units + u], table);
        const int32_t kept = mcu_cmsis_ssat16(lstm_product(f * c[u], fm, fs, 0, frq, fast));
        const int32_t added = mcu_cmsis_ssat16(lstm_product(i * g, im, is, 0, irq, fast));
        int32_t cn = mcu_cmsis_ssat16(kept + added);
        if (clip > 0) {
            cn = cn < -clip ? -clip : cn > clip ? clip : cn;
        }
        c[u] = (int16_t)cn;
        int32_t hv = lstm_product(mcu_lstm_tanh(cn, tm, ts, table) * o, hm, hs, zp, hrq, fast);
        hv = hv < -128 ? -128 : hv > 127 ? 127 : hv;
        h[u] = (int8_t)hv;
        out[u] = (int8_t)hv;
    }
}

static void lstm_update(const mcu_lstm_params *p, const int16_t *pre, int16_t *c, int8_t *h, int8_t *out,
                        const uint16_t *table, const int32_t *rq)
{
    if (rq[3 * MCU_LSTM_RQ_FORGET] && rq[3 * MCU_LSTM_RQ_INPUT_GATE] && rq[3 * MCU_LSTM_RQ_HIDDEN]) {
        lstm_update_units(p, pre, c, h, out, table, rq, 1);
    } else {
        lstm_update_units(p, pre, c, h, out, table, rq, 0);
    }
}

void mcu_cmsis_lstm_s8(const mcu_cmsis_lstm_params *cp, const int8_t *input, int8_t *hidden, int16_t *cell,
                       const int32_t *input_bias, const int32_t *recurrent_bias, const int8_t *input_weights,
                       const int8_t *recurrent_weights, const uint16_t *sigmoid_table, const int32_t *rq,
                       void *scratch, int8_t *output)
{
    const mcu_lstm_params *p = &cp->lstm;
    const int32_t batches = p->batches, steps = p->steps, inputs = p->inputs, units = p->units;
    const int32_t xs = cp->input_stride, hs = cp->recurrent_stride;
    int16_t *pre = (int16_t *)scratch;
    int8_t *x_pad = (int8_t *)(pre + 4 * units);
    int8_t *h_pad = x_pad + xs;
    memset(x_pad, 0, (size_t)(xs + hs));

    for (int32_t b = 0; b < batches; b++) {
        int8_t *h = hidden + b * units;
        int16_t *c = cell + b * units;
        for (int32_t t = 0; t < steps; t++) {
            const int32_t row = p->time_major ? t * batches + b : b * steps + t;
            memcpy(x_pad, input + row * inputs, (size_t)inputs);
            memcpy(h_pad, h, (size_t)units);
            lstm_gates_fc(x_pad, xs, input_weights, input_bias, units, p->input_multiplier, p->input_shift,
                          rq + 3 * MCU_LSTM_RQ_INPUT, pre, 0);
            lstm_gates_fc(h_pad, hs, recurrent_weights, recurrent_bias, units, p->recurrent_multiplier,
                          p->recurrent_shift, rq + 3 * MCU_LSTM_RQ_RECURRENT, pre, 1);
            lstm_update(p, pre, c, h, output + row * units, sigmoid_table, rq);
        }
    }
}
