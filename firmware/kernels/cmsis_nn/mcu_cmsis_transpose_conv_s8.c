/*
 * int8 transposed convolution, output-stationary per stride phase (see mcu_cmsis_transpose_conv_s8.h).
 * Output pixels of one row and phase are taken two at a time (ox, ox + stride_w): their columns are
 * built once and multiplied with every channel's phase row.
 */
#include "mcu_cmsis_transpose_conv_s8.h"

#include <string.h>

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_mve.h"
#include "mcuforge_fixedpoint.h"

/** One phase: its weight rows, folded bias, taps along y and x, and row length. */
typedef struct {
    const int8_t *w;
    const int32_t *bias;
    int32_t ty, tx, depth;
} tconv_phase;

/** Taps of phase r along an axis: kernel offsets r, r + s, ... below k. */
static int32_t tconv_taps(int32_t r, int32_t k, int32_t s)
{
    return r < k ? (k - r + s - 1) / s : 0;
}

static tconv_phase tconv_phase_of(const mcu_cmsis_tconv_params *p, const int8_t *weights, const int32_t *bias,
                                  int32_t ry, int32_t rx)
{
    int32_t offset = 0;
    for (int32_t qy = 0; qy < p->stride_h; qy++) {
        for (int32_t qx = 0; qx < p->stride_w; qx++) {
            const int32_t depth = tconv_taps(qy, p->k_h, p->stride_h) * tconv_taps(qx, p->k_w, p->stride_w) * p->in_c_pad;
            if (qy == ry && qx == rx) {
                const tconv_phase ph = {weights + offset, bias + (ry * p->stride_w + rx) * p->out_c,
                                        tconv_taps(ry, p->k_h, p->stride_h), tconv_taps(rx, p->k_w, p->stride_w),
                                        depth};
                return ph;
            }
            offset += depth * p->out_c;
        }
    }
    return (tconv_phase){weights, bias, 0, 0, 0}; /* not reached: ry < stride_h, rx < stride_w */
}

/** TFLM's requantization of channel c plus the output offset, clamped (the DSP records when proven). */
static inline int8_t tconv_out(int32_t acc, const mcu_cmsis_tconv_params *p, const int32_t *mult,
                               const int32_t *shift, const int32_t *rq, int32_t c)
{
#if defined(MCU_CMSIS_USE_DSP)
    if (rq != NULL) {
        return (int8_t)mcu_cmsis_rq_clamp(acc, rq + 3 * c, p->act_min, p->act_max);
    }
#else
    (void)rq;
#endif
    int32_t v = mcu_requantize(acc, mult[c], shift[c]) + p->output_offset;
    v = v < p->act_min ? p->act_min : v;
    return (int8_t)(v > p->act_max ? p->act_max : v);
}

/** The input pixel feeding tap (j, i) of the output whose base input position is (by, bx), or NULL
    outside the input. */
static inline const int8_t *tconv_src(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t iy, int32_t ix)
{
    return iy >= 0 && iy < p->in_h && ix >= 0 && ix < p->in_w ? img + (iy * p->in_w + ix) * p->in_c : NULL;
}

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)

/** Bytes 0 .. n - 1 of src (n < 4) in a word, the others zero. */
static inline int32_t tconv_read_tail(const int8_t *src, int32_t n)
{
    uint32_t x = (uint8_t)src[0];
    if (n > 1) {
        x |= (uint32_t)(uint8_t)src[1] << 8;
    }
    if (n > 2) {
        x |= (uint32_t)(uint8_t)src[2] << 16;
    }
    return (int32_t)x;
}

/** One pixel's column widened: per group of four values the words (x0, x2), (x1, x3) at col[0],
    col[1], the next group 4 words on (the pair's other pixel fills col[2], col[3]). */
static void tconv_column(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by, int32_t bx,
                         const tconv_phase *ph, int32_t *col)
{
    const int32_t ic = p->in_c, in_h = p->in_h, in_w = p->in_w, ty = ph->ty, tx = ph->tx;
    const int32_t full = ic / 4, rest = ic % 4, groups = p->in_c_pad / 4;
    const uint32_t zp = (uint16_t)(int16_t)(-p->input_offset);
    const int32_t zz = (int32_t)(zp | (zp << 16));
    for (int32_t j = 0; j < ty; j++) {
        const int32_t iy = by - j;
        const int row_inside = iy >= 0 && iy < in_h;
        const int8_t *row = img + iy * in_w * ic;
        for (int32_t i = 0; i < tx; i++) {
            const int32_t ix = bx - i;
            if (row_inside && ix >= 0 && ix < in_w) {
                const int8_t *src = row + ix * ic;
                const int32_t *const end = col + 4 * full;
                while (col != end) {
                    const int32_t x = mcu_read_s8x4(src);
                    col[0] = mcu_sxtb16(x);
                    col[1] = mcu_sxtb16_ror8(x);
                    col += 4, src += 4;
                }
                if (rest) {
                    const int32_t x = tconv_read_tail(src, rest);
                    col[0] = mcu_sxtb16(x);
                    col[1] = mcu_sxtb16_ror8(x);
                    col += 4;
                }
            } else {
                const int32_t *const end = col + 4 * groups;
                while (col != end) {
                    col[0] = zz;
                    col[1] = zz;
                    col += 4;
                }
            }
        }
    }
}

/** acc[0..3] += (row w0, pixel A), (w0, B), (w1, A), (w1, B) over `groups` groups of four. */
static inline void tconv_dot2x2(const int32_t *col, const int8_t *w0, const int8_t *w1, int32_t groups, int32_t *acc)
{
    int32_t s0 = acc[0], s1 = acc[1], s2 = acc[2], s3 = acc[3];
    const int32_t *const end = col + 4 * groups;
    while (col != end) {
        const int32_t r0 = mcu_read_s8x4(w0), r1 = mcu_read_s8x4(w1);
        const int32_t r0e = mcu_sxtb16(r0), r0o = mcu_sxtb16_ror8(r0);
        const int32_t r1e = mcu_sxtb16(r1), r1o = mcu_sxtb16_ror8(r1);
        s0 = mcu_smlad(col[0], r0e, s0);
        s0 = mcu_smlad(col[1], r0o, s0);
        s1 = mcu_smlad(col[2], r0e, s1);
        s1 = mcu_smlad(col[3], r0o, s1);
        s2 = mcu_smlad(col[0], r1e, s2);
        s2 = mcu_smlad(col[1], r1o, s2);
        s3 = mcu_smlad(col[2], r1e, s3);
        s3 = mcu_smlad(col[3], r1o, s3);
        col += 4, w0 += 4, w1 += 4;
    }
    acc[0] = s0, acc[1] = s1, acc[2] = s2, acc[3] = s3;
}

/** Outputs of the pixel pair (a, b; b NULL when the row has no second pixel), every channel. */
static void tconv_pair(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by, int32_t bx,
                       const tconv_phase *ph, const int32_t *mult, const int32_t *shift, const int32_t *rq,
                       int32_t *col, int8_t *a, int8_t *b)
{
    const int32_t oc = p->out_c, depth = ph->depth, groups = depth / 4, lo = p->act_min, hi = p->act_max;
    const int8_t *const w = ph->w;
    const int32_t *const bias = ph->bias;
    tconv_column(p, img, by, bx, ph, col);
    tconv_column(p, img, by, b != NULL ? bx + 1 : bx, ph, col + 2);
    for (int32_t c = 0; c < oc; c += 2) {
        const int32_t c1 = c + 1 < oc ? c + 1 : c; /* an odd last channel: its row twice */
        int32_t acc[4] = {bias[c], bias[c], bias[c1], bias[c1]};
        tconv_dot2x2(col, w + c * depth, w + c1 * depth, groups, acc);
        int32_t v[4];
        if (rq != NULL) {
            v[0] = mcu_cmsis_rq_clamp(acc[0], rq + 3 * c, lo, hi);
            v[1] = mcu_cmsis_rq_clamp(acc[1], rq + 3 * c, lo, hi);
            v[2] = mcu_cmsis_rq_clamp(acc[2], rq + 3 * c1, lo, hi);
            v[3] = mcu_cmsis_rq_clamp(acc[3], rq + 3 * c1, lo, hi);
        } else {
            for (int32_t j = 0; j < 4; j++) {
                v[j] = tconv_out(acc[j], p, mult, shift, NULL, j < 2 ? c : c1);
            }
        }
        a[c] = (int8_t)v[0];
        a[c1] = (int8_t)v[2];
        if (b != NULL) {
            b[c] = (int8_t)v[1];
            b[c1] = (int8_t)v[3];
        }
    }
}

#else /* Helium and plain C: int8 columns */

/** One pixel's column: each tap's in_c values (the input zero point outside the input) at a stride of
    in_c_pad; the padding bytes stay as set at the start (zero, against zero weights). */
static void tconv_column(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by, int32_t bx,
                         const tconv_phase *ph, int8_t *col)
{
    const int32_t ic = p->in_c;
    for (int32_t j = 0; j < ph->ty; j++) {
        for (int32_t i = 0; i < ph->tx; i++, col += p->in_c_pad) {
            const int8_t *src = tconv_src(p, img, by - j, bx - i);
#if defined(MCU_CMSIS_USE_MVE)
            const int8x16_t zp = vdupq_n_s8((int8_t)(-p->input_offset));
            for (int32_t k = 0; k < ic; k += 16) {
                const mve_pred16_t pr = vctp8q((uint32_t)(ic - k));
                vstrbq_p_s8(col + k, src != NULL ? vldrbq_z_s8(src + k, pr) : zp, pr);
            }
#else
            if (src != NULL) {
                memcpy(col, src, (size_t)ic);
            } else {
                memset(col, -p->input_offset, (size_t)ic);
            }
#endif
        }
    }
}

#if defined(MCU_CMSIS_USE_MVE)
/** acc[0..3] (pixel A) and acc[4..7] (pixel B) += four rows of w (stride depth) times the columns. */
static inline void tconv_dot4x2(const int8_t *ca, const int8_t *cb, const int8_t *w, int32_t depth, int32_t *acc)
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3], b0 = acc[4], b1 = acc[5], b2 = acc[6], b3 = acc[7];
    for (int32_t k = 0; k < depth; k += 16) {
        const mve_pred16_t pr = vctp8q((uint32_t)(depth - k));
        const int8x16_t x = vldrbq_z_s8(ca + k, pr), y = vldrbq_z_s8(cb + k, pr);
        int8x16_t r = vldrbq_z_s8(w + k, pr);
        a0 = vmladavaq_s8(a0, x, r);
        b0 = vmladavaq_s8(b0, y, r);
        r = vldrbq_z_s8(w + depth + k, pr);
        a1 = vmladavaq_s8(a1, x, r);
        b1 = vmladavaq_s8(b1, y, r);
        r = vldrbq_z_s8(w + 2 * depth + k, pr);
        a2 = vmladavaq_s8(a2, x, r);
        b2 = vmladavaq_s8(b2, y, r);
        r = vldrbq_z_s8(w + 3 * depth + k, pr);
        a3 = vmladavaq_s8(a3, x, r);
        b3 = vmladavaq_s8(b3, y, r);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3;
}
#endif

static inline int32_t tconv_dot(const int8_t *x, const int8_t *w, int32_t depth, int32_t acc)
{
#if defined(MCU_CMSIS_USE_MVE)
    for (int32_t k = 0; k < depth; k += 16) {
        const mve_pred16_t pr = vctp8q((uint32_t)(depth - k));
        acc = vmladavaq_s8(acc, vldrbq_z_s8(x + k, pr), vldrbq_z_s8(w + k, pr));
    }
#else
    for (int32_t k = 0; k < depth; k++) {
        acc += x[k] * w[k];
    }
#endif
    return acc;
}

static void tconv_pair(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by, int32_t bx,
                       const tconv_phase *ph, const int32_t *mult, const int32_t *shift, const int32_t *rq,
                       int8_t *col, int8_t *a, int8_t *b)
{
    const int32_t oc = p->out_c, depth = ph->depth;
    int8_t *cb = col + p->in_c_pad * tconv_taps(0, p->k_h, p->stride_h) * tconv_taps(0, p->k_w, p->stride_w);
    tconv_column(p, img, by, bx, ph, col);
    if (b != NULL) {
        tconv_column(p, img, by, bx + 1, ph, cb);
    }
    int32_t c = 0;
#if defined(MCU_CMSIS_USE_MVE)
    if (b != NULL) {
        for (; c + 4 <= oc; c += 4) {
            int32_t acc[8];
            memcpy(acc, ph->bias + c, 16);
            memcpy(acc + 4, ph->bias + c, 16);
            tconv_dot4x2(col, cb, ph->w + c * depth, depth, acc);
            const int32x4_t va = mcu_cmsis_mve_requantize_vec(vldrwq_s32(acc), mult + c, shift + c,
                                                              p->output_offset, p->act_min, p->act_max);
            vstrbq_s32(a + c, va);
            vstrbq_s32(b + c, mcu_cmsis_mve_requantize_vec(vldrwq_s32(acc + 4), mult + c, shift + c,
                                                           p->output_offset, p->act_min, p->act_max));
        }
    }
#endif
    for (; c < oc; c++) {
        const int8_t *w = ph->w + c * depth;
        a[c] = tconv_out(tconv_dot(col, w, depth, ph->bias[c]), p, mult, shift, rq, c);
        if (b != NULL) {
            b[c] = tconv_out(tconv_dot(cb, w, depth, ph->bias[c]), p, mult, shift, rq, c);
        }
    }
}

#endif

void mcu_cmsis_transpose_conv_s8(const mcu_cmsis_tconv_params *p, const int8_t *input, const int8_t *weights,
                                 const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                 const int32_t *rq, void *scratch, int8_t *output)
{
    const int32_t oh = p->out_h, ow = p->out_w, oc = p->out_c, sh = p->stride_h, sw = p->stride_w;
#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
    int32_t *col = (int32_t *)scratch;
#else
    int8_t *col = (int8_t *)scratch;
    memset(col, 0, (size_t)(2 * p->in_c_pad * tconv_taps(0, p->k_h, sh) * tconv_taps(0, p->k_w, sw)));
#endif
    for (int32_t n = 0; n < p->batches; n++) {
        const int8_t *img = input + n * p->in_h * p->in_w * p->in_c;
        int8_t *out = output + n * oh * ow * oc;
        for (int32_t oy = 0; oy < oh; oy++) {
            const int32_t ry = (oy + p->pad_top) % sh, by = (oy + p->pad_top) / sh;
            for (int32_t rx = 0; rx < sw; rx++) {
                const tconv_phase ph = tconv_phase_of(p, weights, bias, ry, rx);
                const int32_t ox0 = ((rx - p->pad_left) % sw + sw) % sw; /* (ox0 + pad_left) % sw == rx */
                for (int32_t ox = ox0; ox < ow; ox += 2 * sw) {
                    int8_t *a = out + (oy * ow + ox) * oc;
                    int8_t *b = ox + sw < ow ? a + sw * oc : NULL;
                    tconv_pair(p, img, by, (ox + p->pad_left) / sw, &ph, multiplier, shift, rq, col, a, b);
                }
            }
        }
    }
}
