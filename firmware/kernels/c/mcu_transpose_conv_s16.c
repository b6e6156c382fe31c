/* Portable 16x8 transposed convolution: TFLM's reference TransposeConv for int16 activations
   (scatter into int64 accumulators, then the bias, the int64 requantization and the clamp). The
   accumulators go through memcpy: the arena only guarantees 4-byte alignment. */
#include <string.h>

#include "mcu_kernels_c.h"

static int64_t load64(const int64_t *p)
{
    int64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void store64(int64_t *p, int64_t v)
{
    memcpy(p, &v, sizeof v);
}

void mcu_transpose_conv_s16(const mcu_transpose_conv_params *p, const int16_t *input, const int8_t *weights,
                            const int64_t *bias, const int32_t *multiplier, const int32_t *shift, int64_t *scratch,
                            int16_t *output)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c;
    const int32_t out_h = p->out_h, out_w = p->out_w, out_c = p->out_c, k_h = p->k_h, k_w = p->k_w;
    const int32_t count = p->batches * out_h * out_w * out_c;
    memset(scratch, 0, (size_t)count * sizeof(int64_t));
    for (int32_t b = 0; b < p->batches; b++) {
        for (int32_t iy = 0; iy < in_h; iy++) {
            const int32_t out_y0 = iy * p->stride_h - p->pad_top;
            for (int32_t ix = 0; ix < in_w; ix++) {
                const int32_t out_x0 = ix * p->stride_w - p->pad_left;
                const int16_t *in = input + ((b * in_h + iy) * in_w + ix) * in_c;
                for (int32_t ky = 0; ky < k_h; ky++) {
                    const int32_t oy = out_y0 + ky;
                    if (oy < 0 || oy >= out_h) {
                        continue; /* outside the output: dropped */
                    }
                    for (int32_t kx = 0; kx < k_w; kx++) {
                        const int32_t ox = out_x0 + kx;
                        if (ox < 0 || ox >= out_w) {
                            continue;
                        }
                        int64_t *acc = scratch + ((b * out_h + oy) * out_w + ox) * out_c;
                        for (int32_t oc = 0; oc < out_c; oc++) {
                            const int8_t *w = weights + ((oc * k_h + ky) * k_w + kx) * in_c;
                            int64_t sum = 0;
                            for (int32_t ic = 0; ic < in_c; ic++) {
                                sum += (int32_t)in[ic] * (int32_t)w[ic];
                            }
                            store64(acc + oc, load64(acc + oc) + sum);
                        }
                    }
                }
            }
        }
    }
    for (int32_t i = 0; i < count; i++) {
        const int32_t oc = i % out_c;
        output[i] = mcu_s16_output(load64(scratch + i), bias, 0, oc, multiplier[oc], shift[oc], p->act_min,
                                   p->act_max);
    }
}
