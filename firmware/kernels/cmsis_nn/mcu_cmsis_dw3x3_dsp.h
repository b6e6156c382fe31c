/*
 * DSP path of mcu_cmsis_dwconv2d_s8 for small maps (sweep MCU_CMSIS_DW_SWEEP_PIXELS: 3x3 filters,
 * depth multiplier 1, no dilation, any stride and padding; the planner's own choice with the fast
 * requantization proven and the clamp the whole int8 range, any requantization where an overlap
 * needs the pixel order, planner/overlap.py): pixel by pixel, every channel of a
 * pixel before the next, so its set-up is paid once for all channels (the line sweep of
 * mcu_cmsis_dwconv_dsp.h pays per group of four channels and output line, too much on a few
 * pixels).
 *
 * TFLM's acc = bias + sum over the taps inside the input of (x + input_offset) * w, computed as
 * the folded bias (bias + input_offset * sum(w), offline) + sum over all nine taps of x * w. Every
 * output pixel gets nine tap pointers; a padded tap points at a row of the input zero point in
 * scratch, whose x * w the fold cancels, so border and interior pixels run the same unrolled nine
 * taps with no bounds checks in the channel loop. Four channels per step: taps 0..7 in pairs, the
 * two input words interleaved by PKHBT / PKHTB and widened by SXTB16 into one word per channel
 * holding both taps (int16), one SMLAD each with the channel's two weights; tap 8 widened into
 * lanes 0, 2 and 1, 3, four SMLABB / SMLATT.
 *
 * Scratch: the pad row (out_c bytes, rounded up to a word), then per group of four channels its
 * weights (18 words): per tap pair four words (w[a][c + k], w[b][c + k]), then tap 8 as
 * (w[c], w[c + 2]) and (w[c + 1], w[c + 3]): MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES; with
 * p->lag, the ring after it (mcu_cmsis_dw_lag_out).
 */
#ifndef MCU_CMSIS_DW3X3_DSP_H
#define MCU_CMSIS_DW3X3_DSP_H

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_dwconv_pixel.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)

/** Taps a and b of four channels: acc[k] += x_a[k] * w_a[k] + x_b[k] * w_b[k] (w: the four weight
    pair words). */
static inline void mcu_cmsis_dw3x3_pair(const int8_t *xa, const int8_t *xb, const int32_t *w, int32_t *a0,
                                        int32_t *a1, int32_t *a2, int32_t *a3)
{
    const int32_t ta = mcu_read_s8x4(xa), tb = mcu_read_s8x4(xb);
    const int32_t lo = mcu_pkhbt16(ta, tb), hi = mcu_pkhtb16(tb, ta); /* channels 0, 1 / 2, 3 of both taps */
    *a0 = mcu_smlad(mcu_sxtb16(lo), w[0], *a0);
    *a1 = mcu_smlad(mcu_sxtb16_ror8(lo), w[1], *a1);
    *a2 = mcu_smlad(mcu_sxtb16(hi), w[2], *a2);
    *a3 = mcu_smlad(mcu_sxtb16_ror8(hi), w[3], *a3);
    mcu_schedule_barrier(); /* one pair at a time: hoisting the loads of all spills registers */
}

/** One tap of four channels: acc[j] += x[j] * w[j] (w2: the two int16 weight words). */
static inline void mcu_cmsis_dw3x3_tap(const int8_t *x, const int32_t *w2, int32_t *a0, int32_t *a1, int32_t *a2,
                                       int32_t *a3)
{
    const int32_t word = mcu_read_s8x4(x);
    const int32_t x02 = mcu_sxtb16(word), x13 = mcu_sxtb16_ror8(word);
    const int32_t w02 = w2[0], w13 = w2[1];
    mcu_smlabb_acc(a0, x02, w02);
    mcu_smlatt_acc(a2, x02, w02);
    mcu_smlabb_acc(a1, x13, w13);
    mcu_smlatt_acc(a3, x13, w13);
}

/** The nine tap pointers of a window at input row/column (iy, ix) that crosses the border: a tap
    outside the input points at the pad row. Not inlined: the channel loop keeps its registers. */
__attribute__((noinline)) static void mcu_cmsis_dw3x3_border_taps(const int8_t *input, const int8_t *pad,
                                                                  int32_t in_h, int32_t in_w, int32_t ch,
                                                                  int32_t iy, int32_t ix, const int8_t **tap)
{
    const int x0 = ix >= 0 && ix < in_w, x1 = ix + 1 >= 0 && ix + 1 < in_w, x2 = ix + 2 >= 0 && ix + 2 < in_w;
    for (int32_t dy = 0; dy < 3; dy++, tap += 3) {
        const int32_t y = iy + dy, at = (y * in_w + ix) * ch;
        const int in = y >= 0 && y < in_h;
        tap[0] = in && x0 ? input + at : pad;
        tap[1] = in && x1 ? input + at + ch : pad;
        tap[2] = in && x2 ? input + at + 2 * ch : pad;
    }
}

/** What every pixel of one call shares (one pointer instead of ten arguments per pixel). */
struct mcu_cmsis_dw3x3_args {
    const mcu_cmsis_dw_conv_params *p;
    const int8_t *input, *pad, *weights;
    const int32_t *wq, *bias, *folded, *multiplier, *shift, *rq;
};

/** Output pixel `out`, whose window starts at input row/column (iy, ix); `fast`: a constant in
    each instance below, rq proven and the clamp the whole int8 range (SSAT alone). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw3x3_pixel_mode(const struct mcu_cmsis_dw3x3_args *k,
                                                                         int32_t iy, int32_t ix, int8_t *out,
                                                                         int fast)
{
    const mcu_cmsis_dw_conv_params *p = k->p;
    const int8_t *input = k->input, *pad = k->pad, *weights = k->weights;
    const int32_t *wq = k->wq, *bias = k->bias, *folded = k->folded, *multiplier = k->multiplier;
    const int32_t *shift = k->shift, *rq = k->rq;
    const int32_t in_h = p->in_h, in_w = p->in_w, ch = p->out_c, input_offset = p->input_offset;
    const int32_t out_offset = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int8_t *tap[9];
    if (iy >= 0 && iy + 3 <= in_h && ix >= 0 && ix + 3 <= in_w) {
        const int32_t row = in_w * ch;
        tap[0] = input + (iy * in_w + ix) * ch;
        tap[1] = tap[0] + ch;
        tap[2] = tap[1] + ch;
        tap[3] = tap[0] + row;
        tap[4] = tap[3] + ch;
        tap[5] = tap[4] + ch;
        tap[6] = tap[3] + row;
        tap[7] = tap[6] + ch;
        tap[8] = tap[7] + ch;
    } else {
        mcu_cmsis_dw3x3_border_taps(input, pad, in_h, in_w, ch, iy, ix, tap);
    }
    const int32_t full = ch & ~3;
    int32_t c = 0;
    for (; c < full; c += 4, wq += 18) {
        int32_t a0 = folded[c], a1 = folded[c + 1], a2 = folded[c + 2], a3 = folded[c + 3];
        mcu_cmsis_dw3x3_pair(tap[0] + c, tap[1] + c, wq, &a0, &a1, &a2, &a3);
        mcu_cmsis_dw3x3_pair(tap[2] + c, tap[3] + c, wq + 4, &a0, &a1, &a2, &a3);
        mcu_cmsis_dw3x3_pair(tap[4] + c, tap[5] + c, wq + 8, &a0, &a1, &a2, &a3);
        mcu_cmsis_dw3x3_pair(tap[6] + c, tap[7] + c, wq + 12, &a0, &a1, &a2, &a3);
        mcu_cmsis_dw3x3_tap(tap[8] + c, wq + 16, &a0, &a1, &a2, &a3);
        if (fast) { /* the four values before the stores: an int8 store may alias the records */
            const int32_t *r = rq + 3 * c;
            const int32_t v0 = mcu_ssat8(mcu_cmsis_rq(a0, r)), v1 = mcu_ssat8(mcu_cmsis_rq(a1, r + 3));
            const int32_t v2 = mcu_ssat8(mcu_cmsis_rq(a2, r + 6)), v3 = mcu_ssat8(mcu_cmsis_rq(a3, r + 9));
            out[c] = (int8_t)v0;
            out[c + 1] = (int8_t)v1;
            out[c + 2] = (int8_t)v2;
            out[c + 3] = (int8_t)v3;
            continue;
        }
        if (rq != NULL) {
            const int32_t *r = rq + 3 * c;
            out[c] = (int8_t)mcu_cmsis_rq_clamp(a0, r, act_min, act_max);
            out[c + 1] = (int8_t)mcu_cmsis_rq_clamp(a1, r + 3, act_min, act_max);
            out[c + 2] = (int8_t)mcu_cmsis_rq_clamp(a2, r + 6, act_min, act_max);
            out[c + 3] = (int8_t)mcu_cmsis_rq_clamp(a3, r + 9, act_min, act_max);
            continue;
        }
        const int32_t acc[4] = {a0, a1, a2, a3};
        for (int32_t j = 0; j < 4; j++) {
            out[c + j] = mcu_cmsis_requantize_s8(acc[j], multiplier[c + j], shift[c + j], out_offset, act_min,
                                                 act_max);
        }
    }
    for (; c < ch; c++) {
        int32_t acc = bias[c];
        for (int32_t t = 0; t < 9; t++) {
            acc += (tap[t][c] + input_offset) * weights[t * ch + c];
        }
        out[c] = mcu_cmsis_requantize_s8(acc, multiplier[c], shift[c], out_offset, act_min, act_max);
    }
}

/* Not inlined: the channel loop needs every register, none held by the pixel loops around it
   (and the tap pointers live in the instance's own frame). */
__attribute__((noinline)) static void mcu_cmsis_dw3x3_pixel_fast(const struct mcu_cmsis_dw3x3_args *k, int32_t iy,
                                                                 int32_t ix, int8_t *out)
{
    mcu_cmsis_dw3x3_pixel_mode(k, iy, ix, out, 1);
}

/** The same with a clamp inside the int8 range, or without rq (the general requantization). */
__attribute__((noinline)) static void mcu_cmsis_dw3x3_pixel_any(const struct mcu_cmsis_dw3x3_args *k, int32_t iy,
                                                                int32_t ix, int8_t *out)
{
    mcu_cmsis_dw3x3_pixel_mode(k, iy, ix, out, 0);
}

/** Every output pixel; fast: rq given and the clamp the whole int8 range (the planner's own pixel
    sweep), else any requantization (the pixel sweep an overlap needs). */
static inline void mcu_cmsis_dw3x3_dsp(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                                       const int32_t *bias, const int32_t *folded, const int32_t *multiplier,
                                       const int32_t *shift, const int32_t *rq, int32_t *scratch, int8_t *output,
                                       int fast)
{
    const int32_t ch = p->out_c, out_h = p->out_h, out_w = p->out_w;
    int8_t *const pad = (int8_t *)scratch;
    int32_t *const wq = (int32_t *)(void *)(pad + ((ch + 3) & ~3));
    for (int32_t c = 0; c < ch; c++) {
        pad[c] = (int8_t)(-p->input_offset); /* the zero point: the fold cancels its x * w */
    }
    for (int32_t g = 0; g < (ch >> 2); g++) {
        for (int32_t t = 0; t < 8; t += 2) { /* the tap pairs: (w[t][c], w[t + 1][c]) per channel */
            const int8_t *w = weights + t * ch + 4 * g;
            const int32_t wa = mcu_read_s8x4(w), wb = mcu_read_s8x4(w + ch);
            const int32_t lo = mcu_pkhbt16(wa, wb), hi = mcu_pkhtb16(wb, wa); /* as mcu_cmsis_dw3x3_pair */
            wq[18 * g + 2 * t] = mcu_sxtb16(lo);
            wq[18 * g + 2 * t + 1] = mcu_sxtb16_ror8(lo);
            wq[18 * g + 2 * t + 2] = mcu_sxtb16(hi);
            wq[18 * g + 2 * t + 3] = mcu_sxtb16_ror8(hi);
        }
        const int32_t word = mcu_read_s8x4(weights + 8 * ch + 4 * g); /* tap 8 */
        wq[18 * g + 16] = mcu_sxtb16(word);
        wq[18 * g + 17] = mcu_sxtb16_ror8(word);
    }
    const struct mcu_cmsis_dw3x3_args k = {p, input, pad, weights, wq, bias, folded, multiplier, shift, rq};
    int8_t *const ring = mcu_cmsis_dw_ring(scratch, MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES(3, 3, ch, p->in_c));
    for (int32_t oy = 0; oy < out_h; oy++) {
        const int32_t iy = oy * p->stride_h - p->pad_top;
        for (int32_t ox = 0; ox < out_w; ox++) {
            const int32_t ix = ox * p->stride_w - p->pad_left;
            (fast ? mcu_cmsis_dw3x3_pixel_fast : mcu_cmsis_dw3x3_pixel_any)(
                &k, iy, ix, mcu_cmsis_dw_lag_out(p, ring, output, oy * out_w + ox));
        }
    }
    if (p->lag > 0) {
        mcu_cmsis_dw_lag_flush(p, ring, output);
    }
}

#endif /* MCU_CMSIS_USE_DSP && !MCU_CMSIS_USE_MVE */

#endif /* MCU_CMSIS_DW3X3_DSP_H */
