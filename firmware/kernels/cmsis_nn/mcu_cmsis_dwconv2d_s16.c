/*
 * 16x8 depthwise convolution (depth multiplier 1): per output pixel, four channels at a time over the
 * taps of the window clipped to the input (padding contributes 0, as TFLM skips it). DSP: one LDRD of
 * the four channels' inputs and one of their int16 weights per tap, SMLABB / SMLATT into four
 * accumulators. Helium: four channels in the lanes, VMUL / VADD per tap. The sums (one int32 chunk)
 * go through the channels' records (mcu_cmsis_s16.h).
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

/** Sums of four channels (from element c of each tap, weights at w: [taps][4]) over the window. */
static inline void dw_group(const window_t *win, const int16_t *input, const int16_t *w, int32_t acc[4])
{
#if defined(MCU_CMSIS_USE_MVE)
    int32x4_t sum = vdupq_n_s32(0);
    const int16_t *row = input + win->first;
    const int16_t *wp = w + 4 * win->w_first;
    for (int32_t r = win->rows; r > 0; r--, row += win->row_step, wp += 4 * win->w_skip) {
        const int16_t *xp = row;
        for (int32_t k = win->cols; k > 0; k--, xp += win->col_step, wp += 4) {
            sum = vaddq_s32(sum, vmulq_s32(vldrhq_s32(xp), vldrhq_s32(wp)));
        }
    }
    vst1q_s32(acc, sum);
#elif defined(MCU_CMSIS_USE_DSP)
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    const int32_t step = win->col_step * (int32_t)sizeof(int16_t);
    const uint8_t *row = (const uint8_t *)(input + win->first);
    const int32_t *wp = (const int32_t *)(const void *)(w + 4 * win->w_first);
    for (int32_t r = win->rows; r > 0; r--, row += win->row_step * (int32_t)sizeof(int16_t), wp += 2 * win->w_skip) {
        const uint8_t *xp = row;
        for (int32_t k = win->cols; k > 0; k--, xp += step) { /* one tap: four inputs, four weights */
            int32_t x01, x23, w01, w23;
            mcu_cmsis_s16_ldrd(xp, &x01, &x23);
            wp = mcu_ldrd_inc(wp, &w01, &w23);
            mcu_smlabb_acc(&a0, x01, w01);
            mcu_smlatt_acc(&a1, x01, w01);
            mcu_smlabb_acc(&a2, x23, w23);
            mcu_smlatt_acc(&a3, x23, w23);
        }
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
#else
    acc[0] = acc[1] = acc[2] = acc[3] = 0;
    const int16_t *wp = w + 4 * win->w_first;
    for (int32_t r = 0; r < win->rows; r++, wp += 4 * win->w_skip) {
        for (int32_t k = 0; k < win->cols; k++, wp += 4) {
            const int16_t *xp = input + win->first + r * win->row_step + k * win->col_step;
            for (int32_t c = 0; c < 4; c++) {
                acc[c] += xp[c] * wp[c];
            }
        }
    }
#endif
}

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
            win.first = (win.rows > 0 && win.cols > 0) ? ((y0 + ky0 * p->dil_h) * p->in_w + x0 + kx0 * p->dil_w) * ch : 0;
            if (win.cols <= 0) {
                win.rows = 0;
            }
            for (int32_t c = 0; c < ch; c += 4) {
                int32_t acc[4];
                dw_group(&win, input + c, weights + c * p->taps, acc);
                mcu_cmsis_s16_store4(acc, rq + 4 * c, p->mode, p->act_min, p->act_max, output + c, 1, 4);
            }
        }
    }
}
