/*
 * Helium (MVE) depthwise convolution, depth multiplier 1, any filter, stride, dilation and
 * padding; included by the depthwise kernel files when MCU_CMSIS_USE_MVE is set.
 *
 * One channel at a time, four output pixels of a column (consecutive rows) per vector: each tap is
 * one gather load of the four input bytes (VLDRB.S32 with a vector of row offsets) and one VMLA by
 * the tap's weight as a scalar, so the 32-bit lanes accumulate four pixels of the same channel and
 * the requantization takes the channel's multiplier and shift as scalars; a scatter store writes
 * the four bytes. The input offset is folded per column into the bias: a column at the left or
 * right edge drops the taps outside the input (their weight set to zero, their address moved
 * inside). The rows whose windows lie inside vertically go in one band or, with p->band_rows, in
 * bands of four, then band_rows rows, top to bottom; the rows above and below them pixel by pixel
 * (mcu_cmsis_dw_pixel), in their place in that order (with bands an output may overlap its input:
 * planner/overlap.py). Used for
 * 3x3 filters on maps with at least eight such rows; smaller maps keep the kernels' pixel-by-pixel
 * path (four channels per vector), which has no per-column set-up.
 */
#ifndef MCU_CMSIS_DWCONV_MVE_H
#define MCU_CMSIS_DWCONV_MVE_H

#include "mcu_cmsis_dwconv_pixel.h"

#if defined(MCU_CMSIS_USE_MVE)

#if !defined(__NO_INLINE__)
/** Rows oy0 + [0, n) of one column of a 3x3 filter (n >= 1), in assembly (a tail-predicated loop,
    four rows per iteration). x0 / x1 / x2: the first row's taps of the filter's three columns;
    off[j]: the lanes' input offsets plus filter row j's; t[0..8]: the taps' weights times 2^left
    (the requantization's left shift done by the multiply-accumulates, wrapping like TFLM's), t[9] /
    t[10]: bytes from one group of four rows to the next in the input / output, t[11]: -1 when the
    requantization divides (the fix-up's factor), else 0, t[12]: the folded bias times 2^left,
    t[13]: the output offset (in memory, not registers: at -O0 / -Og gcc keeps a frame pointer). */
static inline __attribute__((always_inline)) void mcu_cmsis_dw_mve_col3x3(const int8_t *x0, const int8_t *x1,
                                                                          const int8_t *x2, int8_t *out, int32_t n,
                                                                          const int32_t t[14], int32_t m,
                                                                          int32_t neg_right, const uint32x4_t off[3],
                                                                          uint32x4_t out_offsets, int32x4_t lo,
                                                                          int32x4_t hi)
{
    int32x4_t acc, v;
    int32_t tmp;
    __asm__ volatile("dlstp.32 lr, %[n]\n"
                     "1:\n\t"
                     "ldr %[tmp], [%[t], #48]\n\t"
                     "vdup.32 %q[acc], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #0]\n\t"
                     "vldrb.s32 %q[v], [%[x0], %q[o0]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #4]\n\t"
                     "vldrb.s32 %q[v], [%[x1], %q[o0]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #8]\n\t"
                     "vldrb.s32 %q[v], [%[x2], %q[o0]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #12]\n\t"
                     "vldrb.s32 %q[v], [%[x0], %q[o1]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #16]\n\t"
                     "vldrb.s32 %q[v], [%[x1], %q[o1]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #20]\n\t"
                     "vldrb.s32 %q[v], [%[x2], %q[o1]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #24]\n\t"
                     "vldrb.s32 %q[v], [%[x0], %q[o2]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #28]\n\t"
                     "vldrb.s32 %q[v], [%[x1], %q[o2]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #32]\n\t"
                     "vldrb.s32 %q[v], [%[x2], %q[o2]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "vqrdmulh.s32 %q[acc], %q[acc], %[m]\n\t"
                     "ldr %[tmp], [%[t], #44]\n\t"
                     "vshr.u32 %q[v], %q[acc], #31\n\t"
                     "vmla.s32 %q[acc], %q[v], %[tmp]\n\t"
                     "vrshl.s32 %q[acc], %[nr]\n\t"
                     "ldr %[tmp], [%[t], #52]\n\t"
                     "vadd.i32 %q[acc], %q[acc], %[tmp]\n\t"
                     "vmax.s32 %q[acc], %q[acc], %q[lo]\n\t"
                     "vmin.s32 %q[acc], %q[acc], %q[hi]\n\t"
                     "vstrb.32 %q[acc], [%[out], %q[ooff]]\n\t"
                     "ldr %[tmp], [%[t], #36]\n\t"
                     "add %[x0], %[x0], %[tmp]\n\t"
                     "add %[x1], %[x1], %[tmp]\n\t"
                     "add %[x2], %[x2], %[tmp]\n\t"
                     "ldr %[tmp], [%[t], #40]\n\t"
                     "add %[out], %[out], %[tmp]\n\t"
                     "letp lr, 1b\n"
                     : [acc] "=&w"(acc), [v] "=&w"(v), [tmp] "=&r"(tmp), [x0] "+r"(x0), [x1] "+r"(x1), [x2] "+r"(x2),
                       [out] "+r"(out)
                     : [n] "r"(n), [t] "r"(t), [m] "r"(m), [nr] "r"(neg_right), [o0] "w"(off[0]),
                       [o1] "w"(off[1]), [o2] "w"(off[2]),
                       [ooff] "w"(out_offsets), [lo] "w"(lo), [hi] "w"(hi)
                     : "lr", "memory");
}

/** Rows [oy0, oy0 + rows) (rows >= 1, their windows inside the input vertically) of a 3x3 filter:
    for each channel, the taps' weights and the folded bias once, then column by column (a column
    at the left or right edge with its outside taps weighing zero). */
static inline void mcu_cmsis_dw_mve_rows3x3(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                            const int8_t *weights, const int32_t *bias, const int32_t *multiplier,
                                            const int32_t *shift, int32_t oy0, int32_t rows, int8_t *output)
{
    const int32_t in_w = p->in_w, in_c = p->in_c, out_w = p->out_w, out_c = p->out_c;
    const int32_t dil_w = p->dil_w, sw = p->stride_w, pad_left = p->pad_left, input_offset = p->input_offset;
    const int32_t in_row = in_w * in_c, in_step = p->stride_h * in_row, out_step = out_w * out_c;
    const int32_t cstep = dil_w * in_c, out_offset = p->output_offset;
    const uint32x4_t lanes = vidupq_n_u32(0, 1);
    uint32x4_t off[3];
    off[0] = vmulq_n_u32(lanes, (uint32_t)in_step);
    off[1] = vaddq_n_u32(off[0], (uint32_t)(p->dil_h * in_row));
    off[2] = vaddq_n_u32(off[0], (uint32_t)(2 * p->dil_h * in_row));
    const uint32x4_t out_offsets = vmulq_n_u32(lanes, (uint32_t)out_step);
    const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
    int32_t full[14], edge[14]; /* weights and steps for mcu_cmsis_dw_mve_col3x3: inner / edge columns */
    full[9] = edge[9] = 4 * in_step;
    full[10] = edge[10] = 4 * out_step;
    full[13] = edge[13] = out_offset;
    const int8_t *x_top = input + (oy0 * p->stride_h - p->pad_top) * in_row - pad_left * in_c;
    for (int32_t c = 0; c < out_c; c++) {
        const int32_t s = shift[c], m = multiplier[c];
        const int32_t left = s > 0 ? s : 0, neg_right = s > 0 ? 0 : s;
        full[11] = edge[11] = neg_right < 0 ? -1 : 0;
        const int8_t *wc = weights + c;
        int32_t folded_full = bias[c];
        for (int32_t i = 0; i < 9; i++) {
            const int32_t wt = wc[i * out_c];
            full[i] = (int32_t)((uint32_t)wt << left);
            folded_full += input_offset * wt;
        }
        full[12] = (int32_t)((uint32_t)folded_full << left);
        const int8_t *x = x_top + c;
        int8_t *out = output + oy0 * out_step + c;
        for (int32_t ox = 0, ix0 = -pad_left; ox < out_w; ox++, ix0 += sw, x += sw * in_c, out += out_c) {
            if (ix0 >= 0 && ix0 + 2 * dil_w < in_w) {
                mcu_cmsis_dw_mve_col3x3(x, x + cstep, x + 2 * cstep, out, rows, full, m, neg_right, off, out_offsets,
                                        lo, hi);
                continue;
            }
            int32_t kx0, kx1;
            mcu_cmsis_dw_tap_range(ix0, in_w, 3, dil_w, &kx0, &kx1);
            if (kx1 <= kx0) { /* no tap inside: the bias alone */
                for (int32_t r = 0; r < rows; r++) {
                    out[r * out_step] = mcu_cmsis_requantize_s8(bias[c], m, s, out_offset, p->act_min, p->act_max);
                }
                continue;
            }
            /* a tap outside the input: weight 0, address of a tap inside */
            const int32_t inside_col = (kx0 + kx1 - 1) / 2 * cstep;
            const int8_t *cols[3];
            int32_t folded = bias[c];
            for (int32_t kx = 0; kx < 3; kx++) {
                const int inside = kx >= kx0 && kx < kx1;
                cols[kx] = x + (inside ? kx * cstep : inside_col);
                for (int32_t ky = 0; ky < 3; ky++) {
                    const int32_t wt = inside ? wc[(ky * 3 + kx) * out_c] : 0;
                    edge[ky * 3 + kx] = (int32_t)((uint32_t)wt << left);
                    folded += input_offset * wt;
                }
            }
            edge[12] = (int32_t)((uint32_t)folded << left);
            mcu_cmsis_dw_mve_col3x3(cols[0], cols[1], cols[2], out, rows, edge, m, neg_right, off, out_offsets, lo, hi);
        }
    }
}

#endif

/** Depthwise convolution with depth multiplier 1 and a 3x3 filter when at least two groups of four
    rows have their windows inside the input vertically: those rows by columns, the others pixel by
    pixel (mcu_cmsis_dw_pixel). Returns 0, having done nothing, for any other layer (the caller's
    pixel-by-pixel path is then cheaper). */
static inline int mcu_cmsis_dwconv_s8_mve(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                          const int8_t *weights, const int32_t *bias, const int32_t *multiplier,
                                          const int32_t *shift, const int32_t *rq, int8_t *output)
{
    const int32_t out_h = p->out_h, out_w = p->out_w, out_c = p->out_c;
    const int32_t sh = p->stride_h, pad_top = p->pad_top, span = (p->k_h - 1) * p->dil_h;
    /* rows whose window lies inside the input vertically: [oy0, oy1) */
    const int32_t oy0 = (pad_top + sh - 1) / sh;
    int32_t oy1 = p->in_h - 1 - span + pad_top >= 0 ? (p->in_h - 1 - span + pad_top) / sh + 1 : 0;
    oy1 = oy1 < out_h ? oy1 : out_h;
    /* a column pays its set-up once: worth it from two full groups of rows */
    if (p->depth_multiplier != 1 || p->k_h != 3 || p->k_w != 3 || oy1 - oy0 < 8) {
        return 0;
    }
#if defined(__NO_INLINE__) /* -O0: gcc cannot give the assembly its registers; the caller's path */
    (void)input, (void)weights, (void)bias, (void)multiplier, (void)shift, (void)rq, (void)output, (void)out_w;
    (void)out_c;
    return 0;
#else
    /* Top to bottom, so that an output may overlap its input (planner/overlap.py models this
       order): the rows above pixel by pixel, the column rows in bands (with band_rows, four rows,
       then band_rows at a time; else all in one), the rows below pixel by pixel. */
    const int32_t band_rows = p->band_rows > 0 ? p->band_rows : oy1 - oy0;
    for (int32_t oy = 0; oy < out_h; oy++) {
        if (oy == oy0) {
            for (int32_t band = p->band_rows > 0 ? 4 : band_rows; oy < oy1; band = band_rows) {
                const int32_t rows = oy1 - oy < band ? oy1 - oy : band;
                mcu_cmsis_dw_mve_rows3x3(p, input, weights, bias, multiplier, shift, oy, rows, output);
                oy += rows;
            }
            if (oy >= out_h) {
                break;
            }
        }
        for (int32_t ox = 0; ox < out_w; ox++) {
            mcu_cmsis_dw_pixel(p, input, weights, bias, multiplier, shift, rq, oy, ox,
                               output + (oy * out_w + ox) * out_c);
        }
    }
    return 1;
#endif
}

#endif /* MCU_CMSIS_USE_MVE */
#endif /* MCU_CMSIS_DWCONV_MVE_H */
