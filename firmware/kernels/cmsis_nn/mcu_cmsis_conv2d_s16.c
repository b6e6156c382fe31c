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

/** The natural-order im2col column of output pixel `px` (depth8 values, zeros outside the input). */
static const int16_t *column(const mcu_cmsis_conv_s16_params *p, const int16_t *input, int32_t px, int16_t *col)
{
    const int32_t oy = px / p->out_w, ox = px % p->out_w;
    if (p->k_h == 1 && p->k_w == 1 && p->in_c == p->depth8) {
        return input + ((oy * p->stride_h) * p->in_w + ox * p->stride_w) * p->in_c; /* never padded */
    }
    int16_t *dst = col;
    for (int32_t ky = 0; ky < p->k_h; ky++) {
        const int32_t iy = oy * p->stride_h - p->pad_top + ky * p->dil_h;
        for (int32_t kx = 0; kx < p->k_w; kx++, dst += p->in_c) {
            const int32_t ix = ox * p->stride_w - p->pad_left + kx * p->dil_w;
            if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w) {
                memset(dst, 0, (size_t)p->in_c * sizeof(int16_t));
            } else {
                memcpy(dst, input + (iy * p->in_w + ix) * p->in_c, (size_t)p->in_c * sizeof(int16_t));
            }
        }
    }
    memset(dst, 0, (size_t)(col + p->depth8 - dst) * sizeof(int16_t));
    return col;
}

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
            if (one && p->mode == MCU_CMSIS_S16_HIGH && two && ch + 1 < out_c) { /* the common case */
                out0[ch] = mcu_cmsis_s16_clamp(mcu_cmsis_s16_high(s32[0], r0), p->act_min, p->act_max);
                out1[ch] = mcu_cmsis_s16_clamp(mcu_cmsis_s16_high(s32[1], r0), p->act_min, p->act_max);
                out0[ch + 1] = mcu_cmsis_s16_clamp(mcu_cmsis_s16_high(s32[2], r0 + 4), p->act_min, p->act_max);
                out1[ch + 1] = mcu_cmsis_s16_clamp(mcu_cmsis_s16_high(s32[3], r0 + 4), p->act_min, p->act_max);
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
