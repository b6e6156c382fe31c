/* Portable 16x8 depthwise convolution: TFLM's reference DepthwiseConvPerChannel for int16
   activations (an int64 accumulator; the bias, when present, is int64). */
#include "mcu_kernels_c.h"

void mcu_depthwise_conv_2d_s16(const mcu_depthwise_conv_2d_params *p, const int16_t *input, const int8_t *weights,
                               const int64_t *bias, const int32_t *multiplier, const int32_t *shift,
                               int16_t *output)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c, out_c = p->out_c, ch_mult = p->ch_mult;
    for (int32_t b = 0; b < p->batches; b++) {
        for (int32_t oy = 0; oy < p->out_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            for (int32_t ox = 0; ox < p->out_w; ox++) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                int16_t *out = output + ((b * p->out_h + oy) * p->out_w + ox) * out_c;
                for (int32_t oc = 0; oc < out_c; oc++) {
                    const int32_t ic = oc / ch_mult;
                    int64_t sum = 0;
                    for (int32_t ky = 0; ky < p->k_h; ky++) {
                        const int32_t iy = in_y0 + ky * p->dil_h;
                        if (iy < 0 || iy >= in_h) {
                            continue; /* padding contributes 0 */
                        }
                        for (int32_t kx = 0; kx < p->k_w; kx++) {
                            const int32_t ix = in_x0 + kx * p->dil_w;
                            if (ix < 0 || ix >= in_w) {
                                continue;
                            }
                            const int32_t x = input[((b * in_h + iy) * in_w + ix) * in_c + ic];
                            sum += x * (int32_t)weights[(ky * p->k_w + kx) * out_c + oc];
                        }
                    }
                    out[oc] = mcu_s16_output(sum, bias, 0, oc, multiplier[oc], shift[oc], p->act_min, p->act_max);
                }
            }
        }
    }
}
