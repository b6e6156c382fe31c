/*
 * 16x8 depthwise convolution (depth multiplier 1): per output pixel, the channels over the taps of
 * the window clipped to the input (padding contributes 0, as TFLM skips it). Weights: int16, blocks of
 * eight channels [taps][8] (the last one zero-padded when channels % 8 == 4).
 * DSP: four channels per pass, one LDRD of their inputs and one of their weights per tap, SMLABB /
 * SMLATT into four accumulators. Helium: sixteen channels per pass (two blocks of eight; then one
 * block, then the four), per tap one VLDRH of eight inputs and one of eight weights, VMULLB / VMULLT
 * into even and odd channels; ROUND records eight channels at a time (VQRDMULH, VMAX / VMIN, the even
 * and odd lanes narrowed into one vector by VMOVNB / VMOVNT, one store). The sums (one int32 chunk) go
 * through the channels' records (mcu_cmsis_s16.h).
 */
#include "mcu_cmsis_dwconv2d_s16.h"
#include "mcu_cmsis_s16.h"

/** The part [start, end) of a window axis that lies inside the input. */
static inline void clip_taps(int32_t origin, int32_t size, int32_t taps, int32_t dil, int32_t *start, int32_t *end)
{
    int32_t s = 0;
    while (s < taps && origin + s * dil < 0) {
        s++;
    }
    int32_t e = taps;
    while (e > s && origin + (e - 1) * dil >= size) {
        e--;
    }
    *start = s;
    *end = e;
}

/** A pixel's window clipped to the input: `rows` rows of `cols` taps from input element `first`
    (rows `row_step`, taps `col_step` elements apart), their weights from tap `w_first` with
    `w_skip` taps skipped at each row's end. */
typedef struct {
    int32_t rows, cols, first, row_step, col_step, w_first, w_skip;
} window_t;

#if defined(MCU_CMSIS_USE_MVE)
/** One tap of eight channels: even += x * w (channels 0, 2, 4, 6), odd += (1, 3, 5, 7). */
static inline void dw_tap8(int32x4_t *even, int32x4_t *odd, const int16_t *x, const int16_t *w)
{
    const int16x8_t xv = vld1q_s16(x), wv = vld1q_s16(w);
    *even = vaddq_s32(*even, vmullbq_int_s16(xv, wv));
    *odd = vaddq_s32(*odd, vmulltq_int_s16(xv, wv));
}

/** Sums of `blocks` (1 or 2) blocks of eight channels (weights of block b at w + b * bstride) over the
    window: acc[2b] the even channels of block b, acc[2b + 1] the odd ones. */
static inline __attribute__((always_inline)) void dw_sum8(const window_t *win, const int16_t *input,
                                                          const int16_t *w, int32_t bstride, int32_t blocks,
                                                          int32x4_t acc[4])
{
    int32x4_t e0 = vdupq_n_s32(0), o0 = e0, e1 = e0, o1 = e0;
    const int16_t *row = input + win->first;
    const int16_t *w0 = w + 8 * win->w_first;
    const int16_t *w1 = w0 + bstride;
    const int32_t skip = 8 * win->w_skip;
    for (int32_t r = win->rows; r > 0; r--, row += win->row_step, w0 += skip, w1 += skip) {
        const int16_t *xp = row;
        for (int32_t k = win->cols; k > 0; k--, xp += win->col_step, w0 += 8, w1 += 8) {
            dw_tap8(&e0, &o0, xp, w0);
            if (blocks == 2) {
                dw_tap8(&e1, &o1, xp + 8, w1);
            }
        }
    }
    acc[0] = e0, acc[1] = o0, acc[2] = e1, acc[3] = o1;
}

/** Sums of the last four channels (the first half of a block) over the window. */
static inline int32x4_t dw_sum4(const window_t *win, const int16_t *input, const int16_t *w)
{
    int32x4_t sum = vdupq_n_s32(0);
    const int16_t *row = input + win->first;
    const int16_t *wp = w + 8 * win->w_first;
    for (int32_t r = win->rows; r > 0; r--, row += win->row_step, wp += 8 * win->w_skip) {
        const int16_t *xp = row;
        for (int32_t k = win->cols; k > 0; k--, xp += win->col_step, wp += 8) {
            sum = vaddq_s32(sum, vmulq_s32(vldrhq_s32(xp), vldrhq_s32(wp)));
        }
    }
    return sum;
}

/** Four channels `apart` records apart (ROUND): ((acc + bias) * R + 2^31) >> 32 by VQRDMULH with R / 2,
    the bias and R / 2 gathered from the four records, clamped. */
static inline int32x4_t dw_round4(int32x4_t acc, const int32_t *rq, uint32x4_t offsets, int32x4_t lo, int32x4_t hi)
{
    const int32x4_t bias = vldrwq_gather_offset_s32(rq, offsets);
    const int32x4_t half = vldrwq_gather_offset_s32(rq + 2, offsets);
    return vminq_s32(vmaxq_s32(vqrdmulhq_s32(vaddq_s32(acc, bias), half), lo), hi);
}

/** Channels (every `apart`-th of four, from the one of record rq) through their records, clamped,
    one by one, into out[0], out[apart], ... (the records that are not ROUND). */
static inline void dw_put_each(int32x4_t acc, const int32_t *rq, int32_t apart, const mcu_cmsis_dw_s16_params *p,
                               int16_t *out)
{
    int32_t a[4];
    vst1q_s32(a, acc);
    for (int32_t i = 0; i < 4; i++) {
        out[i * apart] = mcu_cmsis_s16_clamp(mcu_cmsis_s16_out32(a[i], rq + 4 * apart * i, p->mode), p->act_min,
                                             p->act_max);
    }
}

/** Eight channels' sums (even and odd lanes) through their records into out[0..7]. */
static inline void dw_put8(int32x4_t even, int32x4_t odd, const int32_t *rq, const mcu_cmsis_dw_s16_params *p,
                           int16_t *out)
{
    if (p->mode == MCU_CMSIS_S16_ROUND) {
        const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), 32); /* records 0, 2, 4, 6 (bytes) */
        const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
        int16x8_t v = vmovnbq_s32(vdupq_n_s16(0), dw_round4(even, rq, offsets, lo, hi));
        v = vmovntq_s32(v, dw_round4(odd, rq + 4, offsets, lo, hi));
        vst1q_s16(out, v);
        return;
    }
    dw_put_each(even, rq, 2, p, out);
    dw_put_each(odd, rq + 4, 2, p, out + 1);
}

/** All channels of one pixel: sixteen per pass, then eight, then the last four. */
static inline __attribute__((always_inline)) void dw_pixel(const window_t *win, const mcu_cmsis_dw_s16_params *p,
                                                           const int16_t *input, const int16_t *weights,
                                                           const int32_t *rq, int16_t *out)
{
    const int32_t eights = p->channels & ~7, bstride = 8 * p->taps;
    int32_t c = 0;
    int32x4_t acc[4];
    for (; c + 16 <= eights; c += 16) {
        dw_sum8(win, input + c, weights + c * p->taps, bstride, 2, acc);
        dw_put8(acc[0], acc[1], rq + 4 * c, p, out + c);
        dw_put8(acc[2], acc[3], rq + 4 * (c + 8), p, out + c + 8);
    }
    if (c < eights) {
        dw_sum8(win, input + c, weights + c * p->taps, bstride, 1, acc);
        dw_put8(acc[0], acc[1], rq + 4 * c, p, out + c);
        c += 8;
    }
    if (c < p->channels) {
        const int32x4_t sum = dw_sum4(win, input + c, weights + c * p->taps);
        if (p->mode == MCU_CMSIS_S16_ROUND) {
            const uint32x4_t offsets = vmulq_n_u32(vidupq_n_u32(0, 1), 16); /* records 0, 1, 2, 3 (bytes) */
            vstrhq_s32(out + c, dw_round4(sum, rq + 4 * c, offsets, vdupq_n_s32(p->act_min),
                                          vdupq_n_s32(p->act_max)));
        } else {
            dw_put_each(sum, rq + 4 * c, 1, p, out + c);
        }
    }
}

#else
/** Sums of four channels (from element c of each tap; weights at w, taps 8 int16 apart) over the
    window. */
static inline void dw_group(const window_t *win, const int16_t *input, const int16_t *w, int32_t acc[4])
{
#if defined(MCU_CMSIS_USE_DSP)
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    const int32_t step = win->col_step * (int32_t)sizeof(int16_t);
    const uint8_t *row = (const uint8_t *)(input + win->first);
    const int32_t *wp = (const int32_t *)(const void *)(w + 8 * win->w_first);
    for (int32_t r = win->rows; r > 0; r--, row += win->row_step * (int32_t)sizeof(int16_t), wp += 4 * win->w_skip) {
        const uint8_t *xp = row;
        for (int32_t k = win->cols; k > 0; k--, xp += step) { /* one tap: four inputs, four weights */
            int32_t x01, x23, w01, w23;
            mcu_cmsis_s16_ldrd(xp, &x01, &x23);
            wp = mcu_cmsis_s16_ldrd_inc16(wp, &w01, &w23);
            mcu_smlabb_acc(&a0, x01, w01);
            mcu_smlatt_acc(&a1, x01, w01);
            mcu_smlabb_acc(&a2, x23, w23);
            mcu_smlatt_acc(&a3, x23, w23);
        }
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
#else
    acc[0] = acc[1] = acc[2] = acc[3] = 0;
    const int16_t *wp = w + 8 * win->w_first;
    for (int32_t r = 0; r < win->rows; r++, wp += 8 * win->w_skip) {
        for (int32_t k = 0; k < win->cols; k++, wp += 8) {
            const int16_t *xp = input + win->first + r * win->row_step + k * win->col_step;
            for (int32_t c = 0; c < 4; c++) {
                acc[c] += xp[c] * wp[c];
            }
        }
    }
#endif
}

/** All channels of one pixel, four at a time. */
static inline __attribute__((always_inline)) void dw_pixel(const window_t *win, const mcu_cmsis_dw_s16_params *p,
                                                           const int16_t *input, const int16_t *weights,
                                                           const int32_t *rq, int16_t *out)
{
    for (int32_t c = 0; c < p->channels; c += 4) {
        int32_t acc[4];
        dw_group(win, input + c, weights + (c & ~7) * p->taps + (c & 7), acc); /* channel c's block, tap 0 */
        mcu_cmsis_s16_store4(acc, rq + 4 * c, p->mode, p->act_min, p->act_max, out + c, 1, 4);
    }
}
#endif

void mcu_cmsis_dwconv2d_s16(const mcu_cmsis_dw_s16_params *p, const int16_t *input, const int16_t *weights,
                            const int32_t *rq, int16_t *output)
{
    const int32_t ch = p->channels;
    window_t win;
    win.row_step = p->dil_h * p->in_w * ch;
    win.col_step = p->dil_w * ch;
    for (int32_t oy = 0; oy < p->out_h; oy++) {
        const int32_t y0 = oy * p->stride_h - p->pad_top;
        int32_t ky0, ky1;
        clip_taps(y0, p->in_h, p->k_h, p->dil_h, &ky0, &ky1);
        for (int32_t ox = 0; ox < p->out_w; ox++, output += ch) {
            const int32_t x0 = ox * p->stride_w - p->pad_left;
            int32_t kx0, kx1;
            clip_taps(x0, p->in_w, p->k_w, p->dil_w, &kx0, &kx1);
            win.rows = ky1 - ky0;
            win.cols = kx1 - kx0;
            win.w_first = ky0 * p->k_w + kx0;
            win.w_skip = p->k_w - win.cols;
            /* the first tap read: inside the input whenever the clipped window is not empty */
            const int32_t first = ((y0 + ky0 * p->dil_h) * p->in_w + x0 + kx0 * p->dil_w) * ch;
            win.first = (win.rows > 0 && win.cols > 0) ? first : 0;
            if (win.cols <= 0) {
                win.rows = 0;
            }
            dw_pixel(&win, p, input, weights, rq, output);
        }
    }
}
