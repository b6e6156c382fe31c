/* Portable float32 L2 pooling: TFLM's loop order and float operations. */
#include "mcu_l2_pool_2d_f32.h"

#include <math.h>
#include <stddef.h>

static int32_t max_i32(int32_t a, int32_t b)
{
    return a > b ? a : b;
}

static int32_t min_i32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

void mcu_l2_pool_2d_f32(const mcu_l2_pool_2d_params *p, const float *input, float *output)
{
    const int32_t ch = p->channels;
    for (int32_t b = 0; b < p->batches; b++) {
        const float *in = input + (size_t)b * (size_t)(p->in_h * p->in_w * ch);
        for (int32_t oy = 0; oy < p->out_h; oy++) {
            const int32_t y0 = oy * p->stride_h - p->pad_top;
            const int32_t fy0 = max_i32(0, -y0);
            const int32_t fy1 = min_i32(p->filter_h, p->in_h - y0);
            for (int32_t ox = 0; ox < p->out_w; ox++) {
                const int32_t x0 = ox * p->stride_w - p->pad_left;
                const int32_t fx0 = max_i32(0, -x0);
                const int32_t fx1 = min_i32(p->filter_w, p->in_w - x0);
                for (int32_t c = 0; c < ch; c++) {
                    float sum = 0.0f;
                    int32_t count = 0;
                    for (int32_t fy = fy0; fy < fy1; fy++) {
                        for (int32_t fx = fx0; fx < fx1; fx++) {
                            const float v = in[((y0 + fy) * p->in_w + (x0 + fx)) * ch + c];
                            sum += v * v;
                            count++;
                        }
                    }
                    float r = sqrtf(sum / (float)count);
                    r = r < p->act_min ? p->act_min : r;
                    r = p->act_max < r ? p->act_max : r;
                    *output++ = r;
                }
            }
        }
    }
}
