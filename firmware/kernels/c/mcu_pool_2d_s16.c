/* Portable int16 average and max pooling: TFLM's reference AveragePool / MaxPool on int16 (windows
   clipped to the input; an int32 sum, at most 65536 elements). */
#include "mcu_kernels_c.h"

/** The part [start, end) of a window row or column that lies inside the input. */
static inline void clip_window(int32_t origin, int32_t size, int32_t filter, int32_t *start, int32_t *end)
{
    *start = origin < 0 ? -origin : 0;
    *end = size - origin < filter ? size - origin : filter;
}

static void pool_s16(const mcu_pool_2d_params *p, const int16_t *input, int32_t average, int16_t *output)
{
    for (int32_t b = 0; b < p->batches; b++) {
        for (int32_t oy = 0; oy < p->out_h; oy++) {
            const int32_t in_y0 = oy * p->stride_h - p->pad_top;
            int32_t y_start, y_end;
            clip_window(in_y0, p->in_h, p->filter_h, &y_start, &y_end);
            for (int32_t ox = 0; ox < p->out_w; ox++) {
                const int32_t in_x0 = ox * p->stride_w - p->pad_left;
                int32_t x_start, x_end;
                clip_window(in_x0, p->in_w, p->filter_w, &x_start, &x_end);
                const int32_t count = (y_end - y_start) * (x_end - x_start);
                for (int32_t c = 0; c < p->channels; c++) {
                    int32_t acc = average ? 0 : INT16_MIN;
                    for (int32_t fy = y_start; fy < y_end; fy++) {
                        const int16_t *row = input + ((b * p->in_h + in_y0 + fy) * p->in_w + in_x0) * p->channels + c;
                        for (int32_t fx = x_start; fx < x_end; fx++) {
                            const int32_t x = row[fx * p->channels];
                            acc = average ? acc + x : (x > acc ? x : acc);
                        }
                    }
                    if (average) {
                        /* C division truncates: this rounds half away from zero for either sign. */
                        acc = count <= 0 ? 0 : (acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count);
                    }
                    acc = acc < p->act_min ? p->act_min : acc;
                    acc = acc > p->act_max ? p->act_max : acc;
                    output[((b * p->out_h + oy) * p->out_w + ox) * p->channels + c] = (int16_t)acc;
                }
            }
        }
    }
}

void mcu_average_pool_2d_s16(const mcu_pool_2d_params *p, const int16_t *input, int16_t *output)
{
    pool_s16(p, input, 1, output);
}

void mcu_max_pool_2d_s16(const mcu_pool_2d_params *p, const int16_t *input, int16_t *output)
{
    pool_s16(p, input, 0, output);
}
