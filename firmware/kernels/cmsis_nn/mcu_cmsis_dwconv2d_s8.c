/*
 * int8 depthwise convolution, any filter, stride, dilation, padding and depth multiplier: every
 * output pixel through mcu_cmsis_dw_pixel (four channels at a time on the DSP path when the depth
 * multiplier is 1); MVE, 3x3 filters with depth multiplier 1 on tall maps: mcu_cmsis_dwconv_mve.h.
 */
#include "mcu_cmsis_dwconv_mve.h"
#include "mcu_cmsis_dwconv_pixel.h"

void mcu_cmsis_dwconv2d_s8(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                           const int32_t *bias, const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                           int8_t *output)
{
#if defined(MCU_CMSIS_USE_MVE)
    if (mcu_cmsis_dwconv_s8_mve(p, input, weights, bias, multiplier, shift, rq, output)) { /* mcu_cmsis_dwconv_mve.h */
        return;
    }
#endif
    const int32_t out_h = p->out_h, out_w = p->out_w, out_c = p->out_c;
    for (int32_t oy = 0; oy < out_h; oy++) {
        for (int32_t ox = 0; ox < out_w; ox++) {
            mcu_cmsis_dw_pixel(p, input, weights, bias, multiplier, shift, rq, oy, ox,
                               output + (oy * out_w + ox) * out_c);
        }
    }
}
