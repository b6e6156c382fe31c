/*
 * int8 depthwise convolution, any filter, stride, dilation, padding and depth multiplier.
 *
 * DSP path (Cortex-M4/M7/M33): mcu_cmsis_dwconv_dsp.h (a line cache of widened input in scratch,
 * blocks of four output pixels; small maps pixel by pixel, mcu_cmsis_dw3x3_dsp.h). Helium path
 * (Cortex-M55/M85): mcu_cmsis_dwconv_mve.h. Plain C path (the readable reference, and Helium
 * builds for the rare depth multipliers whose gather offsets mcu_cmsis_dw_mve_gather_recip refuses): every output pixel through
 * mcu_cmsis_dw_pixel (mcu_cmsis_dwconv_pixel.h), which skips the taps outside the input; 3x3
 * filters with depth multiplier 1 take the nine taps unrolled where the window lies inside the
 * input. A layer lowered for Helium's one-input-channel tables (MCU_CMSIS_DW_SWEEP_ONE_TABLE), its
 * scratch only Helium's band, takes mcu_cmsis_dw_pixel pixel by pixel on the DSP build. With
 * p->lag, the pixel paths write through a ring (mcu_cmsis_dw_lag_out), the output exactly over the
 * input.
 */
#include "mcu_cmsis_dwconv_dsp.h"
#include "mcu_cmsis_dwconv_mve.h"
#include "mcu_cmsis_dwconv_pixel.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
/** A layer lowered for Helium's one-input-channel tables (MCU_CMSIS_DW_SWEEP_ONE_TABLE), whose
    scratch holds only Helium's band: every pixel through the plain C path, which needs none. */
__attribute__((noinline)) static void one_table_pixels(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                                       const int8_t *weights, const int32_t *bias,
                                                       const int32_t *multiplier, const int32_t *shift, int8_t *output)
{
    for (int32_t oy = 0; oy < p->out_h; oy++) {
        for (int32_t ox = 0; ox < p->out_w; ox++) {
            mcu_cmsis_dw_pixel(p, input, weights, bias, multiplier, shift, oy, ox,
                               output + (oy * p->out_w + ox) * p->out_c);
        }
    }
}
#else
/** Output pixel of a 3x3 filter (depth multiplier 1, no dilation) whose window starts at input
    row/column (iy, ix), all inside. */
static void interior_pixel(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                           const int32_t *bias, const int32_t *multiplier, const int32_t *shift, int32_t iy,
                           int32_t ix, int8_t *out)
{
    const int32_t ch = p->out_c;
    const int32_t row = p->in_w * ch;
    const int32_t input_offset = p->input_offset;
    const int32_t out_offset = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int8_t *r0 = input + (iy * p->in_w + ix) * ch;
    const int8_t *r1 = r0 + row;
    const int8_t *r2 = r1 + row;
    for (int32_t c = 0; c < ch; c++) {
        const int8_t *w = weights + c;
        int32_t acc = bias[c];
        for (int32_t t = 0; t < 3; t++) { /* the three taps of each row */
            acc += (r0[t * ch + c] + input_offset) * w[t * ch];
            acc += (r1[t * ch + c] + input_offset) * w[(3 + t) * ch];
            acc += (r2[t * ch + c] + input_offset) * w[(6 + t) * ch];
        }
        out[c] = mcu_cmsis_requantize_s8(acc, multiplier[c], shift[c], out_offset, act_min, act_max);
    }
}
#endif

void mcu_cmsis_dwconv2d_s8(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                           const int32_t *bias, const int32_t *folded_bias, const int32_t *multiplier,
                           const int32_t *shift, const int32_t *rq, int32_t *scratch, int8_t *output)
{
#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
    if (p->sweep == MCU_CMSIS_DW_SWEEP_ONE_TABLE) {
        one_table_pixels(p, input, weights, bias, multiplier, shift, output);
        return;
    }
    mcu_cmsis_dwconv_dsp(p, input, weights, bias, folded_bias, multiplier, shift, rq, scratch, output);
#else
    (void)folded_bias, (void)rq; /* rq: the DSP path's, or Helium's one-input-channel tables */
#if defined(MCU_CMSIS_USE_MVE)
    if (mcu_cmsis_dwconv_s8_mve(p, input, weights, bias, folded_bias, multiplier, shift, rq, scratch, output)) {
        return; /* mcu_cmsis_dwconv_mve.h */
    }
#endif
    const int32_t in_h = p->in_h, in_w = p->in_w, out_h = p->out_h, out_w = p->out_w;
    const int32_t stride_h = p->stride_h, stride_w = p->stride_w, pad_top = p->pad_top, pad_left = p->pad_left;
    const int unrolled = p->k_h == 3 && p->k_w == 3 && p->dil_h == 1 && p->dil_w == 1 && p->depth_multiplier == 1;
    int8_t *const ring = mcu_cmsis_dw_ring(scratch, 8 * p->k_h * p->k_w + p->in_c); /* with a lag: after Helium's */
    for (int32_t oy = 0; oy < out_h; oy++) {
        const int32_t iy = oy * stride_h - pad_top;
        const int rows_inside = unrolled && iy >= 0 && iy + 3 <= in_h;
        for (int32_t ox = 0; ox < out_w; ox++) {
            const int32_t ix = ox * stride_w - pad_left;
            int8_t *out = mcu_cmsis_dw_lag_out(p, ring, output, oy * out_w + ox);
            if (rows_inside && ix >= 0 && ix + 3 <= in_w) {
                interior_pixel(p, input, weights, bias, multiplier, shift, iy, ix, out);
            } else {
                mcu_cmsis_dw_pixel(p, input, weights, bias, multiplier, shift, oy, ox, out);
            }
        }
    }
    if (p->lag > 0) {
        mcu_cmsis_dw_lag_flush(p, ring, output);
    }
#endif
}
