/*
 * DSP path of mcu_cmsis_dwconv2d_s8 for one input channel (sweep MCU_CMSIS_DW_SWEEP_ONE_INPUT: the
 * depth multiplier is out_c; any filter, stride, dilation and padding).
 *
 * Every output channel reads the same k_h * k_w input values of a window, so the layer is a dot
 * product of taps per output pixel and channel: per pixel, the taps are paired once into int16
 * words (x[2j], x[2j + 1]; a tap outside the input is the zero point, whose x * w the folded bias
 * cancels; an odd last tap pairs with 0); per group of four channels, one SMLAD per tap pair and
 * channel with the weights paired the same way (w[2j][c], w[2j + 1][c]), widened once per call
 * into scratch in the order the loop reads them (pair by pair, four channels a pair). With the fast
 * requantization the weights and folded bias are doubled (2 * acc, as mcu_cmsis_dwconv_dsp.h).
 *
 * Scratch (words): the pixel's tap pairs, per group of four channels their folded biases and paired
 * weights, the taps' offsets in a window: MCU_CMSIS_DWCONV2D_S8_ONE_SCRATCH_BYTES.
 */
#ifndef MCU_CMSIS_DWCONV_IN1_DSP_H
#define MCU_CMSIS_DWCONV_IN1_DSP_H

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_dwconv_pixel.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)

/** Group by group of four channels, the folded biases then the paired weights, pair by pair (zero
    past out_c and past the last tap), doubled when `twice`. */
static void mcu_cmsis_dw_in1_weights(const mcu_cmsis_dw_conv_params *p, const int8_t *weights,
                                     const int32_t *folded_bias, int twice, int32_t *wp)
{
    const int32_t taps = p->k_h * p->k_w, pairs = (taps + 1) / 2, out_c = p->out_c, k = twice ? 2 : 1;
    for (int32_t c0 = 0; c0 < out_c; c0 += 4) {
        for (int32_t i = 0; i < 4; i++) {
            *wp++ = c0 + i < out_c ? (int32_t)((uint32_t)folded_bias[c0 + i] << twice) : 0;
        }
        for (int32_t j = 0; j < pairs; j++) {
            for (int32_t i = 0; i < 4; i++, wp++) {
                const int32_t c = c0 + i, t = 2 * j;
                const int32_t w0 = c < out_c ? k * weights[t * out_c + c] : 0;
                const int32_t w1 = c < out_c && t + 1 < taps ? k * weights[(t + 1) * out_c + c] : 0;
                *wp = mcu_pkhbt16(w0, w1);
            }
        }
    }
}

/** The tap pairs of a pixel whose window starts at input (iy0, ix0) into xp, a window on a border
    tap by tap (the zero point outside). */
static void mcu_cmsis_dw_in1_border(const mcu_cmsis_dw_conv_params *p, const int8_t *input, int32_t iy0, int32_t ix0,
                                    int32_t *xp)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, k_h = p->k_h, k_w = p->k_w, taps = k_h * k_w;
    const int32_t zp = -p->input_offset;
    int32_t prev = 0;
    for (int32_t ky = 0, t = 0; ky < k_h; ky++) {
        const int32_t iy = iy0 + ky * p->dil_h;
        for (int32_t kx = 0, ix = ix0; kx < k_w; kx++, t++, ix += p->dil_w) {
            const int32_t x = iy >= 0 && iy < in_h && ix >= 0 && ix < in_w ? input[iy * in_w + ix] : zp;
            if (t & 1) {
                xp[t >> 1] = mcu_pkhbt16(prev, x);
            }
            prev = x;
        }
    }
    if (taps & 1) {
        xp[taps >> 1] = mcu_pkhbt16(prev, 0);
    }
}

/** Every pixel; fast: rq given and the clamp the whole int8 range. The parameters are read into
    locals once: an int8 store may alias the parameter struct, so reads through it would repeat. */
__attribute__((noinline)) static void mcu_cmsis_dw_in1_dsp(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                                           const int8_t *weights, const int32_t *folded_bias,
                                                           const int32_t *multiplier, const int32_t *shift,
                                                           const int32_t *rq, int32_t *scratch, int8_t *output)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, k_h = p->k_h, k_w = p->k_w, out_c = p->out_c;
    const int32_t out_h = p->out_h, out_w = p->out_w, sh = p->stride_h, sw = p->stride_w;
    const int32_t span_h = (k_h - 1) * p->dil_h, span_w = (k_w - 1) * p->dil_w, pad_top = p->pad_top;
    const int32_t pad_left = p->pad_left, taps = k_h * k_w, pairs = (taps + 1) / 2, twice = rq != NULL;
    const int32_t out_offset = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int fast = rq != NULL && act_min == -128 && act_max == 127;
    int32_t *const xp = scratch, *const wq = scratch + pairs, *const off = wq + (pairs + 1) * ((out_c + 3) / 4 * 4);
    mcu_cmsis_dw_in1_weights(p, weights, folded_bias, twice, wq);
    for (int32_t t = 0; t < taps; t++) {
        off[t] = (t / k_w) * p->dil_h * in_w + (t % k_w) * p->dil_w;
    }
    for (int32_t oy = 0, iy0 = -pad_top; oy < out_h; oy++, iy0 += sh) {
        for (int32_t ox = 0, ix0 = -pad_left; ox < out_w; ox++, ix0 += sw) {
            if (iy0 >= 0 && iy0 + span_h < in_h && ix0 >= 0 && ix0 + span_w < in_w) {
                const int8_t *const base = input + iy0 * in_w + ix0;
                int32_t t = 0;
                for (; t + 2 <= taps; t += 2) {
                    xp[t >> 1] = mcu_pkhbt16(base[off[t]], base[off[t + 1]]);
                }
                if (t < taps) {
                    xp[t >> 1] = mcu_pkhbt16(base[off[t]], 0);
                }
            } else {
                mcu_cmsis_dw_in1_border(p, input, iy0, ix0, xp);
            }
            int8_t *const out = output + (oy * out_w + ox) * out_c;
            const int32_t *wp = wq;
            for (int32_t c0 = 0; c0 < out_c; c0 += 4) {
                const int full = c0 + 4 <= out_c;
                int32_t a0, a1, a2, a3;
                wp = mcu_ldrd_inc(wp, &a0, &a1);
                wp = mcu_ldrd_inc(wp, &a2, &a3);
                const int32_t *x = xp;
                for (int32_t j = pairs; j >= 2; j -= 2) { /* two pairs an iteration */
                    int32_t w0, w1, w2, w3;
                    const int32_t xa = x[0], xb = x[1];
                    x += 2;
                    wp = mcu_ldrd_inc(wp, &w0, &w1);
                    wp = mcu_ldrd_inc(wp, &w2, &w3);
                    a0 = mcu_smlad(xa, w0, a0);
                    a1 = mcu_smlad(xa, w1, a1);
                    a2 = mcu_smlad(xa, w2, a2);
                    a3 = mcu_smlad(xa, w3, a3);
                    wp = mcu_ldrd_inc(wp, &w0, &w1);
                    wp = mcu_ldrd_inc(wp, &w2, &w3);
                    a0 = mcu_smlad(xb, w0, a0);
                    a1 = mcu_smlad(xb, w1, a1);
                    a2 = mcu_smlad(xb, w2, a2);
                    a3 = mcu_smlad(xb, w3, a3);
                }
                if (pairs & 1) {
                    int32_t w0, w1, w2, w3;
                    wp = mcu_ldrd_inc(wp, &w0, &w1);
                    wp = mcu_ldrd_inc(wp, &w2, &w3);
                    a0 = mcu_smlad(*x, w0, a0);
                    a1 = mcu_smlad(*x, w1, a1);
                    a2 = mcu_smlad(*x, w2, a2);
                    a3 = mcu_smlad(*x, w3, a3);
                }
                if (fast && full) {
                    const int32_t *r = rq + 3 * c0;
                    const int32_t v0 = mcu_ssat8((mcu_smmlar(a0, r[0], r[1]) + (a0 >> 31)) >> r[2]);
                    const int32_t v1 = mcu_ssat8((mcu_smmlar(a1, r[3], r[4]) + (a1 >> 31)) >> r[5]);
                    const int32_t v2 = mcu_ssat8((mcu_smmlar(a2, r[6], r[7]) + (a2 >> 31)) >> r[8]);
                    const int32_t v3 = mcu_ssat8((mcu_smmlar(a3, r[9], r[10]) + (a3 >> 31)) >> r[11]);
                    out[c0] = (int8_t)v0, out[c0 + 1] = (int8_t)v1, out[c0 + 2] = (int8_t)v2, out[c0 + 3] = (int8_t)v3;
                    continue;
                }
                const int32_t acc[4] = {a0, a1, a2, a3};
                for (int32_t i = 0; i < 4 && c0 + i < out_c; i++) {
                    const int32_t c = c0 + i;
                    if (rq != NULL) {
                        const int32_t *r = rq + 3 * c;
                        int32_t v = mcu_ssat8((mcu_smmlar(acc[i], r[0], r[1]) + (acc[i] >> 31)) >> r[2]);
                        v = v < act_min ? act_min : v;
                        out[c] = (int8_t)(v > act_max ? act_max : v);
                    } else {
                        out[c] = mcu_cmsis_requantize_s8(acc[i], multiplier[c], shift[c], out_offset, act_min,
                                                         act_max);
                    }
                }
            }
        }
    }
}

#endif /* MCU_CMSIS_USE_DSP && !MCU_CMSIS_USE_MVE */

#endif /* MCU_CMSIS_DWCONV_IN1_DSP_H */
