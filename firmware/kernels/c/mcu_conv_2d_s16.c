/* Portable 16x8 convolution: TFLM's reference ConvPerChannel for int16 activations, step for step
   (raw x * w products summed exactly, then mcu_s16_output: the bias, TFLM's int64 or int32
   requantization by the bias type, the clamp). */
#include "mcu_kernels_c.h"

static void conv_2d_s16(const mcu_conv_2d_params *p, const int16_t *input, const int8_t *weights,
                        const int64_t *bias64, const int32_t *bias32, const int32_t *multiplier,
                        const int32_t *shift, int16_t *output)
{
    for (int32_t b = 0; b < p->batches; b++) {
        for (int32_t oy = 0; oy < p->out_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            for (int32_t ox = 0; ox < p->out_w; ox++) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                for (int32_t oc = 0; oc < p->out_c; oc++) {
                    int64_t sum = 0;
                    for (int32_t ky = 0; ky < p->k_h; ky++) {
                        const int32_t iy = in_y0 + ky * p->dil_h;
                        if (iy < 0 || iy >= p->in_h) {
                            continue; /* padding contributes 0 */
                        }
                        for (int32_t kx = 0; kx < p->k_w; kx++) {
                            const int32_t ix = in_x0 + kx * p->dil_w;
                            if (ix < 0 || ix >= p->in_w) {
                                continue;
                            }
                            const int16_t *in = input + ((b * p->in_h + iy) * p->in_w + ix) * p->in_c;
                            const int8_t *w = weights + ((oc * p->k_h + ky) * p->k_w + kx) * p->in_c;
                            for (int32_t ic = 0; ic < p->in_c; ic++) {
                                sum += (int32_t)in[ic] * (int32_t)w[ic];
                            }
                        }
                    }
                    output[((b * p->out_h + oy) * p->out_w + ox) * p->out_c + oc] =
                        mcu_s16_output(sum, bias64, bias32, oc, multiplier[oc], shift[oc], p->act_min, p->act_max);
                }
            }
        }
    }
}

void mcu_conv_2d_s16(const mcu_conv_2d_params *p, const int16_t *input, const int8_t *weights, const int64_t *bias,
                     const int32_t *multiplier, const int32_t *shift, int16_t *output)
{
    conv_2d_s16(p, input, weights, bias, 0, multiplier, shift, output);
}

void mcu_conv_2d_s16_acc32(const mcu_conv_2d_params *p, const int16_t *input, const int8_t *weights,
                           const int32_t *bias, const int32_t *multiplier, const int32_t *shift, int16_t *output)
{
    conv_2d_s16(p, input, weights, 0, bias, multiplier, shift, output);
}
