/*
 * int8 depthwise 3x3 convolution, depth multiplier 1, no dilation, any stride and padding.
 *
 * DSP path: mcu_cmsis_dw3x3_dsp.h (every pixel the nine taps unrolled, padded taps reading a row
 * of the zero point). Plain and MVE paths: pixels whose window lies inside the input take the nine
 * taps unrolled with no bounds checks (MVE: four channels per vector); border pixels take
 * mcu_cmsis_dw_pixel, which skips the padded taps. MVE on maps with eight or more rows inside
 * the input vertically: mcu_cmsis_dwconv_mve.h (four rows of one channel per vector).
 */
#include "mcu_cmsis_dw3x3_dsp.h"
#include "mcu_cmsis_dwconv_mve.h"
#include "mcu_cmsis_dwconv_pixel.h"

#if !defined(MCU_CMSIS_USE_DSP) || defined(MCU_CMSIS_USE_MVE)
/** Output pixel whose 3x3 window starts at input row/column (iy, ix), all inside. */
static void interior_pixel(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                           const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                           const int32_t *rq, int32_t iy, int32_t ix, int8_t *out)
{
    (void)rq; /* read by the DSP path only */
    const int32_t ch = p->out_c;
    const int32_t row = p->in_w * ch;
    const int32_t input_offset = p->input_offset;
    const int32_t out_offset = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int8_t *r0 = input + (iy * p->in_w + ix) * ch;
    const int8_t *r1 = r0 + row;
    const int8_t *r2 = r1 + row;
    int32_t c = 0;
#if defined(MCU_CMSIS_USE_MVE)
    for (; c + 4 <= ch; c += 4) {
        const int8_t *w = weights + c;
        int32x4_t acc = vldrwq_s32(bias + c);
        for (int32_t t = 0; t < 3; t++) { /* the three taps of each row */
            acc = mcu_cmsis_dw_tap4_mve(acc, r0 + t * ch + c, w + t * ch, input_offset);
            acc = mcu_cmsis_dw_tap4_mve(acc, r1 + t * ch + c, w + (3 + t) * ch, input_offset);
            acc = mcu_cmsis_dw_tap4_mve(acc, r2 + t * ch + c, w + (6 + t) * ch, input_offset);
        }
        vstrbq_s32(out + c, mcu_cmsis_mve_requantize_vec(acc, multiplier + c, shift + c, out_offset, act_min, act_max));
    }
#endif
    for (; c < ch; c++) {
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

void mcu_cmsis_dwconv2d_3x3_s8(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                               const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                               const int32_t *rq, int16_t *scratch, int8_t *output)
{
#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
    mcu_cmsis_dw3x3_dsp(p, input, weights, bias, multiplier, shift, rq, scratch, output); /* mcu_cmsis_dw3x3_dsp.h */
#else
    (void)scratch;
#if defined(MCU_CMSIS_USE_MVE)
    if (mcu_cmsis_dwconv_s8_mve(p, input, weights, bias, multiplier, shift, rq, output)) { /* mcu_cmsis_dwconv_mve.h */
        return;
    }
#endif
    const int32_t in_h = p->in_h, in_w = p->in_w, out_h = p->out_h, out_w = p->out_w, out_c = p->out_c;
    const int32_t stride_h = p->stride_h, stride_w = p->stride_w, pad_top = p->pad_top, pad_left = p->pad_left;
    for (int32_t oy = 0; oy < out_h; oy++) {
        const int32_t iy = oy * stride_h - pad_top;
        const int rows_inside = iy >= 0 && iy + 3 <= in_h;
        for (int32_t ox = 0; ox < out_w; ox++) {
            const int32_t ix = ox * stride_w - pad_left;
            int8_t *out = output + (oy * out_w + ox) * out_c;
            if (rows_inside && ix >= 0 && ix + 3 <= in_w) {
                interior_pixel(p, input, weights, bias, multiplier, shift, rq, iy, ix, out);
            } else {
                mcu_cmsis_dw_pixel(p, input, weights, bias, multiplier, shift, rq, oy, ox, out);
            }
        }
    }
#endif
}
