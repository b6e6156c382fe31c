/*
 * int8 average pool (TFLM's reference AveragePool): the int32 sum of the window's elements that
 * lie inside the input, divided by their count rounding half away from zero, then clamped.
 *
 * DSP path: eight, then four channels at a time when the window holds at most 256 elements: SXTAB16 adds
 * lanes (0, 2) and (1, 3) of each input word into two 16-bit lane pairs, which cannot overflow
 * (256 * [-128, 127] fits in int16). MVE path: eight channels at a time in 16-bit lanes under the
 * same condition, the rest through the paths below.
 */
#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_mve.h"
#include "mcu_kernels_cmsis_nn.h"

static int8_t average(int32_t sum, int32_t count, int32_t act_min, int32_t act_max)
{
    int32_t avg = sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
    avg = avg < act_min ? act_min : avg;
    avg = avg > act_max ? act_max : avg;
    return (int8_t)avg;
}

#if defined(MCU_CMSIS_USE_DSP)
/** A 16-bit lane of a packed pair, sign-extended. */
static int32_t lane(int32_t packed, int top)
{
    return (int32_t)(int16_t)(uint16_t)((uint32_t)packed >> (top ? 16 : 0));
}

/** The sums over a window of 4 * words channels (words a constant, 1 or 2) from px, its first row's
    first pixel: `rows` rows `row` bytes apart of `run` pixels ch bytes apart, each word's lanes (0,
    2) and (1, 3) added by SXTAB16 (at most 256 values: no 16-bit overflow), into sums in channel
    order. */
static inline __attribute__((always_inline)) void window_sums(const int8_t *px, int32_t ch, int32_t rows,
                                                              int32_t run, int32_t row, const int words,
                                                              int32_t *sums)
{
    int32_t even[2] = {0, 0}, odd[2] = {0, 0};
    for (int32_t y = 0; y < rows; y++, px += row) {
        const int8_t *q = px;
        for (int32_t x = 0; x < run; x++, q += ch) {
            for (int w = 0; w < words; w++) {
                const int32_t v = mcu_read_s8x4(q + 4 * w);
                even[w] = mcu_sxtab16(even[w], v);
                odd[w] = mcu_sxtab16_ror8(odd[w], v);
            }
        }
    }
    for (int w = 0; w < words; w++) {
        sums[4 * w] = lane(even[w], 0), sums[4 * w + 1] = lane(odd[w], 0);
        sums[4 * w + 2] = lane(even[w], 1), sums[4 * w + 3] = lane(odd[w], 1);
    }
}
#endif

void mcu_cmsis_avg_pool2d_s8(const mcu_cmsis_pool_params *p, const int8_t *input, int8_t *output)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, ch = p->channels, out_h = p->out_h, out_w = p->out_w;
    const int32_t k_h = p->k_h, k_w = p->k_w, stride_h = p->stride_h, stride_w = p->stride_w;
    const int32_t pad_top = p->pad_top, pad_left = p->pad_left, act_min = p->act_min, act_max = p->act_max;
    for (int32_t oy = 0; oy < out_h; oy++) {
        const int32_t iy0 = oy * stride_h - pad_top;
        const int32_t y_start = iy0 < 0 ? -iy0 : 0;
        const int32_t y_end = k_h < in_h - iy0 ? k_h : in_h - iy0;
        for (int32_t ox = 0; ox < out_w; ox++) {
            const int32_t ix0 = ox * stride_w - pad_left;
            const int32_t x_start = ix0 < 0 ? -ix0 : 0;
            const int32_t x_end = k_w < in_w - ix0 ? k_w : in_w - ix0;
            const int32_t count = (y_end - y_start) * (x_end - x_start);
            const int32_t base = (iy0 * in_w + ix0) * ch; /* may be negative: indices below are not */
            int8_t *out = output + (oy * out_w + ox) * ch;
            int32_t c = 0;
#if defined(MCU_CMSIS_USE_MVE)
            if (count <= 256) {
                for (; c + 8 <= ch; c += 8) {
                    int16x8_t sum = vdupq_n_s16(0);
                    for (int32_t y = y_start; y < y_end; y++) {
                        for (int32_t x = x_start; x < x_end; x++) {
                            sum = vaddq_s16(sum, vldrbq_s16(input + (base + (y * in_w + x) * ch + c)));
                        }
                    }
                    int16_t sums[8];
                    vstrhq_s16(sums, sum);
                    for (int32_t j = 0; j < 8; j++) {
                        out[c + j] = average(sums[j], count, act_min, act_max);
                    }
                }
            }
#endif
#if defined(MCU_CMSIS_USE_DSP)
            if (count <= 256) { /* eight channels at a time (two words per pixel), then four */
                const int8_t *const first = input + base + (y_start * in_w + x_start) * ch;
                const int32_t rows = y_end - y_start, run = x_end - x_start;
                int32_t sums[8];
                for (; c + 8 <= ch; c += 8) {
                    window_sums(first + c, ch, rows, run, in_w * ch, 2, sums);
                    for (int32_t j = 0; j < 8; j++) {
                        out[c + j] = average(sums[j], count, act_min, act_max);
                    }
                }
                for (; c + 4 <= ch; c += 4) {
                    window_sums(first + c, ch, rows, run, in_w * ch, 1, sums);
                    for (int32_t j = 0; j < 4; j++) {
                        out[c + j] = average(sums[j], count, act_min, act_max);
                    }
                }
            }
#endif
            for (; c < ch; c++) {
                int32_t sum = 0;
                for (int32_t y = y_start; y < y_end; y++) {
                    for (int32_t x = x_start; x < x_end; x++) {
                        sum += input[base + (y * in_w + x) * ch + c];
                    }
                }
                out[c] = average(sum, count, act_min, act_max);
            }
        }
    }
}
