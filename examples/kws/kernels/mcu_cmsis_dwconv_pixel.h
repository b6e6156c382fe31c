/*
 * Pieces shared by the depthwise convolutions (mcu_cmsis_dwconv2d_s8, mcu_cmsis_dwconv2d_3x3_s8).
 *
 * Depthwise kernels take the layer's own bias (not folded with the input zero point) and compute
 * TFLM's acc = bias + sum over the taps inside the input of (x + input_offset) * w: a border pixel
 * then simply skips its padded taps, with no padded copy of its window. On the DSP path the offset
 * costs nothing: SXTAB16 adds it while it sign-extends.
 *
 * DSP path (depth multiplier 1): four channels at a time. One word holds a tap's four input
 * channels, another its four weights; SXTAB16 (input, plus the offset in both lanes) and SXTB16
 * (weights) split each word into lanes (0, 2) and, rotated, (1, 3); SMLABB / SMLATT accumulate the
 * four channels separately.
 *
 * MVE path (depth multiplier 1): four channels in the 32-bit lanes of a vector (widening byte
 * loads), multiplied and accumulated lane by lane, requantized as one vector.
 */
#ifndef MCU_CMSIS_DWCONV_PIXEL_H
#define MCU_CMSIS_DWCONV_PIXEL_H

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_mve.h"
#include "mcu_kernels_cmsis_nn.h"

/** The taps [*k0, *k1) of one filter axis that land inside [0, size) for a window starting at
    `start` with `dilation` between taps. */
static inline void mcu_cmsis_dw_tap_range(int32_t start, int32_t size, int32_t k, int32_t dilation, int32_t *k0,
                                          int32_t *k1)
{
    const int32_t first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    const int32_t last = start < size ? (size - 1 - start) / dilation + 1 : 0;
    *k0 = first;
    *k1 = last < k ? last : k;
}

#if defined(MCU_CMSIS_USE_MVE)
/** acc + (x[0..3] + input_offset) * w[0..3], lane by lane. */
static inline int32x4_t mcu_cmsis_dw_tap4_mve(int32x4_t acc, const int8_t *x, const int8_t *w, int32_t input_offset)
{
    return vaddq_s32(acc, vmulq_s32(vaddq_n_s32(vldrbq_s32(x), input_offset), vldrbq_s32(w)));
}
#elif defined(MCU_CMSIS_USE_DSP)
/** acc[0..3] += (x[0..3] + offset) * w[0..3] for one tap of four channels (x and w: four int8
    lanes; offset2: the input offset in both 16-bit lanes). */
static inline void mcu_cmsis_dw_tap4(int32_t x, int32_t w, int32_t offset2, int32_t acc[4])
{
    const int32_t x02 = mcu_sxtab16(offset2, x), x13 = mcu_sxtab16_ror8(offset2, x);
    const int32_t w02 = mcu_sxtb16(w), w13 = mcu_sxtb16_ror8(w);
    acc[0] = mcu_smlabb(x02, w02, acc[0]);
    acc[1] = mcu_smlabb(x13, w13, acc[1]);
    acc[2] = mcu_smlatt(x02, w02, acc[2]);
    acc[3] = mcu_smlatt(x13, w13, acc[3]);
    mcu_schedule_barrier();
}

/** The input offset in both 16-bit lanes, for SXTAB16. */
static inline int32_t mcu_cmsis_dw_offset2(int32_t input_offset)
{
    return (int32_t)(((uint32_t)input_offset << 16) | ((uint32_t)input_offset & 0xFFFFu));
}
#endif

/** Requantize four accumulators of channels c..c+3 into out[c..c+3] (through rq when not NULL).
    The clamp values are passed as values: an int8 store may alias any object, so fields read
    through a pointer would be reloaded after every store. */
static inline void mcu_cmsis_dw_store4(const int32_t acc[4], const int32_t *multiplier, const int32_t *shift,
                                       const int32_t *rq, int32_t out_offset, int32_t act_min, int32_t act_max,
                                       int32_t c, int8_t *out)
{
#if defined(MCU_CMSIS_USE_DSP)
    if (rq != NULL) {
        const int32_t *r = rq + 3 * c;
        out[c] = (int8_t)mcu_cmsis_rq_clamp(acc[0], r, act_min, act_max);
        out[c + 1] = (int8_t)mcu_cmsis_rq_clamp(acc[1], r + 3, act_min, act_max);
        out[c + 2] = (int8_t)mcu_cmsis_rq_clamp(acc[2], r + 6, act_min, act_max);
        out[c + 3] = (int8_t)mcu_cmsis_rq_clamp(acc[3], r + 9, act_min, act_max);
        return;
    }
#else
    (void)rq;
#endif
    for (int32_t j = 0; j < 4; j++) {
        out[c + j] = mcu_cmsis_requantize_s8(acc[j], multiplier[c + j], shift[c + j], out_offset, act_min, act_max);
    }
}

/** Output pixel (oy, ox): out[0..out_c), any filter, dilation and depth multiplier, taps outside
    the input skipped. */
static inline void mcu_cmsis_dw_pixel(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                                      const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                      const int32_t *rq, int32_t oy, int32_t ox, int8_t *out)
{
    (void)rq; /* read by the DSP path only */
    const int32_t in_w = p->in_w, in_c = p->in_c, out_c = p->out_c, k_w = p->k_w;
    const int32_t dil_h = p->dil_h, dil_w = p->dil_w, mult = p->depth_multiplier;
    const int32_t input_offset = p->input_offset;
    const int32_t out_offset = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    int32_t ky0, ky1, kx0, kx1;
    mcu_cmsis_dw_tap_range(iy0, p->in_h, p->k_h, dil_h, &ky0, &ky1);
    mcu_cmsis_dw_tap_range(ix0, in_w, k_w, dil_w, &kx0, &kx1);
    int32_t c = 0;
#if defined(MCU_CMSIS_USE_MVE)
    if (mult == 1) {
        for (; c + 4 <= out_c; c += 4) {
            int32x4_t acc = vldrwq_s32(bias + c);
            for (int32_t ky = ky0; ky < ky1; ky++) {
                const int8_t *x = input + ((iy0 + ky * dil_h) * in_w + ix0 + kx0 * dil_w) * in_c + c;
                const int8_t *w = weights + (ky * k_w + kx0) * out_c + c;
                for (int32_t kx = kx0; kx < kx1; kx++, x += dil_w * in_c, w += out_c) {
                    acc = mcu_cmsis_dw_tap4_mve(acc, x, w, input_offset);
                }
            }
            vstrbq_s32(out + c, mcu_cmsis_mve_requantize_vec(acc, multiplier + c, shift + c, out_offset, act_min,
                                                             act_max));
        }
    }
#elif defined(MCU_CMSIS_USE_DSP)
    if (mult == 1) {
        const int32_t offset2 = mcu_cmsis_dw_offset2(input_offset);
        for (; c + 4 <= out_c; c += 4) {
            int32_t acc[4] = {bias[c], bias[c + 1], bias[c + 2], bias[c + 3]};
            for (int32_t ky = ky0; ky < ky1; ky++) {
                const int8_t *x = input + ((iy0 + ky * dil_h) * in_w + ix0 + kx0 * dil_w) * in_c + c;
                const int8_t *w = weights + (ky * k_w + kx0) * out_c + c;
                for (int32_t kx = kx0; kx < kx1; kx++, x += dil_w * in_c, w += out_c) {
                    mcu_cmsis_dw_tap4(mcu_read_s8x4(x), mcu_read_s8x4(w), offset2, acc);
                }
            }
            mcu_cmsis_dw_store4(acc, multiplier, shift, rq, out_offset, act_min, act_max, c, out);
        }
    }
#endif
    for (; c < out_c; c++) {
        int32_t acc = bias[c];
        for (int32_t ky = ky0; ky < ky1; ky++) {
            const int8_t *x = input + ((iy0 + ky * dil_h) * in_w + ix0 + kx0 * dil_w) * in_c + c / mult;
            const int8_t *w = weights + (ky * k_w + kx0) * out_c + c;
            for (int32_t kx = kx0; kx < kx1; kx++, x += dil_w * in_c, w += out_c) {
                acc += (*x + input_offset) * *w;
            }
        }
        out[c] = mcu_cmsis_requantize_s8(acc, multiplier[c], shift[c], out_offset, act_min, act_max);
    }
}

#endif /* MCU_CMSIS_DWCONV_PIXEL_H */
