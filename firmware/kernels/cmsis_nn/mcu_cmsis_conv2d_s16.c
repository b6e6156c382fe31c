/*
 * 16x8 convolution: for each pair of output pixels, their im2col columns (zeros for padding and up to
 * depth8) go into a two-column tile; every pair of output channels then takes one pass over the
 * tile (mcu_cmsis_s16.h: DSP SMLAD on int16 pairs with the weights split by SXTB16, Helium
 * VMLADAVA.S16 on eight values), four exact sums per pass, each through its channel's record.
 * A 1x1 convolution whose in_c is a multiple of 8 puts the input pixels in the tile directly.
 */
#include <string.h>

#include "mcu_cmsis_conv2d_s16.h"
#include "mcu_cmsis_s16.h"

/** n int16 values (a short run: a loop; a long one: memcpy). */
static inline void copy16(int16_t *dst, const int16_t *src, int32_t n)
{
    if (n > 16) {
        memcpy(dst, src, (size_t)n * sizeof(int16_t));
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        dst[i] = src[i];
    }
}

static inline void zero16(int16_t *dst, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        dst[i] = 0;
    }
}

/** The natural-order im2col column of output pixel `px` (depth8 values, zeros outside the input):
    with dilation 1 across, a window row is one contiguous run of the input, clipped at its ends. */
static const int16_t *column(const mcu_cmsis_conv_s16_params *p, const int16_t *input, int32_t px, int16_t *col)
{
    const int32_t oy = px / p->out_w, ox = px % p->out_w, in_c = p->in_c;
    if (p->k_h == 1 && p->k_w == 1 && in_c == p->depth8) {
        return input + ((oy * p->stride_h) * p->in_w + ox * p->stride_w) * in_c; /* never padded */
    }
    const int32_t x0 = ox * p->stride_w - p->pad_left, row = p->k_w * in_c;
    int16_t *dst = col;
    for (int32_t ky = 0; ky < p->k_h; ky++, dst += row) {
        const int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
        if (iy < 0 || iy >= p->in_h) {
            zero16(dst, row);
        } else if (p->dil_w == 1) {
            /* taps [0, lo) lie left of the input, [hi, k_w) right of it */
            const int32_t lo = x0 < 0 ? (-x0 < p->k_w ? -x0 : p->k_w) : 0;
            int32_t hi = p->in_w - x0 < p->k_w ? p->in_w - x0 : p->k_w;
            hi = hi < lo ? lo : hi;
            zero16(dst, lo * in_c);
            if (hi > lo) {
                copy16(dst + lo * in_c, input + (iy * p->in_w + x0 + lo) * in_c, (hi - lo) * in_c);
            }
            zero16(dst + hi * in_c, (p->k_w - hi) * in_c);
        } else {
            for (int32_t kx = 0; kx < p->k_w; kx++) {
                const int32_t ix = x0 + kx * p->dil_w;
                if (ix < 0 || ix >= p->in_w) {
                    zero16(dst + kx * in_c, in_c);
                } else {
                    copy16(dst + kx * in_c, input + (iy * p->in_w + ix) * in_c, in_c);
                }
            }
        }
    }
    zero16(dst, (int32_t)(col + p->depth8 - dst));
    return col;
}

/* A full 2x2 tile's outputs through HIGH or ROUND records (`stage`), clamped. */
#define PUT_2X2(stage)                                                                         \
    do {                                                                                       \
        out0[ch] = mcu_cmsis_s16_clamp(stage(s32[0], r0), p->act_min, p->act_max);            \
        out1[ch] = mcu_cmsis_s16_clamp(stage(s32[1], r0), p->act_min, p->act_max);            \
        out0[ch + 1] = mcu_cmsis_s16_clamp(stage(s32[2], r0 + 4), p->act_min, p->act_max);    \
        out1[ch + 1] = mcu_cmsis_s16_clamp(stage(s32[3], r0 + 4), p->act_min, p->act_max);    \
    } while (0)

void mcu_cmsis_conv2d_s16(const mcu_cmsis_conv_s16_params *p, const int16_t *input, const int8_t *weights,
                          const int32_t *rq, int16_t *scratch, int16_t *output)
{
    const int32_t pixels = p->out_h * p->out_w, out_c = p->out_c, depth8 = p->depth8;
    int16_t *tile = scratch;
    int16_t *col = scratch + 2 * depth8;
    for (int32_t px = 0; px < pixels; px += 2) {
        const int32_t two = px + 1 < pixels;
        mcu_cmsis_s16_put_column(column(p, input, px, col), depth8, 2, 0, tile);
        mcu_cmsis_s16_put_column(column(p, input, px + two, col), depth8, 2, 1, tile);
        int16_t *out0 = output + px * out_c;
        int16_t *out1 = out0 + out_c;
        for (int32_t ch = 0; ch < out_c; ch += 2) {
            int32_t s32[4];
            int64_t s64[4];
            const int32_t one = mcu_cmsis_s16_tile2x2(tile, weights + ch * depth8, depth8, p->chunk, s32, s64);
            const int32_t *r0 = rq + 4 * ch;
            if (one && two && ch + 1 < out_c && p->mode >= MCU_CMSIS_S16_HIGH) { /* the common cases */
                if (p->mode == MCU_CMSIS_S16_ROUND) {
                    PUT_2X2(mcu_cmsis_s16_round);
                } else {
                    PUT_2X2(mcu_cmsis_s16_high);
                }
                continue;
            }
            out0[ch] = mcu_cmsis_s16_result(one, s32, s64, 0, r0, p->mode, p->act_min, p->act_max);
            if (two) {
                out1[ch] = mcu_cmsis_s16_result(one, s32, s64, 1, r0, p->mode, p->act_min, p->act_max);
            }
            if (ch + 1 < out_c) {
                out0[ch + 1] = mcu_cmsis_s16_result(one, s32, s64, 2, r0 + 4, p->mode, p->act_min, p->act_max);
                if (two) {
                    out1[ch + 1] = mcu_cmsis_s16_result(one, s32, s64, 3, r0 + 4, p->mode, p->act_min, p->act_max);
                }
            }
        }
    }
}
