/*
 * 16x8 depthwise convolution (depth multiplier 1): per output pixel, four channels at a time, two
 * filter taps at a time. DSP: the two taps' words of four channels are repacked by PKHBT / PKHTB into
 * per-channel pairs [x(t+1) : x(t)] against the weight pairs [w(t+1) : w(t)] laid out at compile
 * time, one SMLAD per channel and pair of taps. Helium: four channels in the lanes, VMUL / VADD per
 * tap, the weights gathered from the same layout. Interior pixels read the input through the tap
 * offset table; border pixels a zero-padded copy of their window in scratch. The sums (one int32
 * chunk) go through the channels' records (mcu_cmsis_s16.h).
 */
#include <string.h>

#include "mcu_cmsis_dwconv2d_s16.h"
#include "mcu_cmsis_s16.h"

/** Sums of four channels (at x + offsets[t]) over the taps; w: the group's weights. */
static inline void dw_group(const int16_t *x, const int32_t *offsets, int32_t taps, const int16_t *w, int32_t acc[4])
{
#if defined(MCU_CMSIS_USE_MVE)
    static const uint32_t pair_lanes[4] = {0, 4, 8, 12}; /* bytes: the channels' words of a tap pair */
    static const uint32_t last_lanes[4] = {0, 2, 4, 6};  /* bytes: the odd last tap's halfwords */
    const uint32x4_t pairs = vld1q_u32(pair_lanes);
    int32x4_t sum = vdupq_n_s32(0);
    int32_t t = 0;
    for (; t + 1 < taps; t += 2, w += 8) {
        sum = vaddq_s32(sum, vmulq_s32(vldrhq_s32(x + offsets[t]), vldrhq_gather_offset_s32(w, pairs)));
        sum = vaddq_s32(sum, vmulq_s32(vldrhq_s32(x + offsets[t + 1]), vldrhq_gather_offset_s32(w + 1, pairs)));
    }
    if (t < taps) {
        sum = vaddq_s32(sum, vmulq_s32(vldrhq_s32(x + offsets[t]), vldrhq_gather_offset_s32(w, vld1q_u32(last_lanes))));
    }
    vst1q_s32(acc, sum);
#elif defined(MCU_CMSIS_USE_DSP)
    int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    int32_t t = 0;
    for (; t + 1 < taps; t += 2, w += 8) {
        const int16_t *p0 = x + offsets[t], *p1 = x + offsets[t + 1];
        const int32_t x0 = mcu_read_s16x2(p0), x1 = mcu_read_s16x2(p0 + 2); /* tap t: [c1:c0], [c3:c2] */
        const int32_t y0 = mcu_read_s16x2(p1), y1 = mcu_read_s16x2(p1 + 2); /* tap t + 1 */
        a0 = mcu_smlad(mcu_pkhbt16(x0, y0), mcu_read_s16x2(w), a0);
        a1 = mcu_smlad(mcu_pkhtb16(y0, x0), mcu_read_s16x2(w + 2), a1);
        a2 = mcu_smlad(mcu_pkhbt16(x1, y1), mcu_read_s16x2(w + 4), a2);
        a3 = mcu_smlad(mcu_pkhtb16(y1, x1), mcu_read_s16x2(w + 6), a3);
    }
    if (t < taps) {
        const int16_t *p0 = x + offsets[t];
        const int32_t x0 = mcu_read_s16x2(p0), x1 = mcu_read_s16x2(p0 + 2);
        const int32_t w0 = mcu_read_s16x2(w), w1 = mcu_read_s16x2(w + 2);
        a0 = mcu_smlabb(x0, w0, a0);
        a1 = mcu_smlatt(x0, w0, a1);
        a2 = mcu_smlabb(x1, w1, a2);
        a3 = mcu_smlatt(x1, w1, a3);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
#else
    int32_t t = 0;
    acc[0] = acc[1] = acc[2] = acc[3] = 0;
    for (; t + 1 < taps; t += 2, w += 8) {
        for (int32_t c = 0; c < 4; c++) {
            acc[c] += x[offsets[t] + c] * w[2 * c] + x[offsets[t + 1] + c] * w[2 * c + 1];
        }
    }
    if (t < taps) {
        for (int32_t c = 0; c < 4; c++) {
            acc[c] += x[offsets[t] + c] * w[c];
        }
    }
#endif
}

/** The window of output pixel (oy, ox) with zeros outside the input, [taps][channels] in scratch. */
static void border_window(const mcu_cmsis_dw_s16_params *p, const int16_t *input, int32_t y0, int32_t x0,
                          int16_t *window)
{
    const int32_t ch = p->channels;
    for (int32_t ky = 0; ky < p->k_h; ky++) {
        const int32_t iy = y0 + ky * p->dil_h;
        for (int32_t kx = 0; kx < p->k_w; kx++, window += ch) {
            const int32_t ix = x0 + kx * p->dil_w;
            if (iy < 0 || iy >= p->in_h || ix < 0 || ix >= p->in_w) {
                memset(window, 0, (size_t)ch * sizeof(int16_t));
            } else {
                memcpy(window, input + (iy * p->in_w + ix) * ch, (size_t)ch * sizeof(int16_t));
            }
        }
    }
}

void mcu_cmsis_dwconv2d_s16(const mcu_cmsis_dw_s16_params *p, const int16_t *input, const int16_t *weights,
                            const int32_t *offsets, const int32_t *rq, int16_t *scratch, int16_t *output)
{
    const int32_t ch = p->channels, taps = p->taps;
    const int32_t span_h = (p->k_h - 1) * p->dil_h, span_w = (p->k_w - 1) * p->dil_w;
    for (int32_t oy = 0; oy < p->out_h; oy++) {
        const int32_t y0 = oy * p->stride_h - p->pad_top;
        for (int32_t ox = 0; ox < p->out_w; ox++, output += ch) {
            const int32_t x0 = ox * p->stride_w - p->pad_left;
            const int16_t *base;
            const int32_t *offs;
            if (y0 >= 0 && x0 >= 0 && y0 + span_h < p->in_h && x0 + span_w < p->in_w) {
                base = input + (y0 * p->in_w + x0) * ch;
                offs = offsets;
            } else {
                border_window(p, input, y0, x0, scratch);
                base = scratch;
                offs = offsets + taps;
            }
            for (int32_t c = 0; c < ch; c += 4) {
                int32_t acc[4];
                dw_group(base + c, offs, taps, weights + c * taps, acc);
                for (int32_t i = 0; i < 4; i++) {
                    const int32_t *r = rq + 4 * (c + i);
                    output[c + i] = mcu_cmsis_s16_clamp(mcu_cmsis_s16_out32(acc[i], r, p->wide), p->act_min,
                                                        p->act_max);
                }
            }
        }
    }
}
