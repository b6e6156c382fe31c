/* Portable int8 RESIZE_BILINEAR: TFLM's integer bilinear interpolation (TFLM sums in int64). A tap
   weight w of hi lies in [-1024, 2048] (checked at compile time), so |w_lo| + |w_hi| <= 3072 per axis
   and |sum| <= 128 * 3072 * 3072 < 2^31: int32 arithmetic gives the same bits. */
#include "mcu_resize_bilinear_s8.h"

void mcu_resize_bilinear_s8(const mcu_resize_bilinear_params *p, const int8_t *input, const int32_t *rows,
                            const int32_t *cols, int8_t *output)
{
    const int32_t ch = p->channels;
    const int32_t row_elems = p->in_w * ch;
    for (int32_t b = 0; b < p->batches; b++) {
        const int8_t *image = input + b * p->in_h * row_elems;
        for (int32_t y = 0; y < p->out_h; y++) {
            const int8_t *r0 = image + rows[3 * y] * row_elems;
            const int8_t *r1 = image + rows[3 * y + 1] * row_elems;
            const int32_t wy1 = rows[3 * y + 2], wy0 = 1024 - wy1;
            for (int32_t x = 0; x < p->out_w; x++) {
                const int32_t c0 = cols[3 * x] * ch, c1 = cols[3 * x + 1] * ch;
                const int32_t wx1 = cols[3 * x + 2], wx0 = 1024 - wx1;
                const int32_t w00 = wy0 * wx0, w10 = wy1 * wx0, w01 = wy0 * wx1, w11 = wy1 * wx1;
                for (int32_t c = 0; c < ch; c++) {
                    const int32_t v = r0[c0 + c] * w00 + r1[c0 + c] * w10 + r0[c1 + c] * w01 + r1[c1 + c] * w11;
                    const int32_t round = v > 0 ? (1 << 19) : -(1 << 19);
                    *output++ = (int8_t)((v + round) / (1 << 20));
                }
            }
        }
    }
}
