/*
 * Helium (MVE) path of mcu_cmsis_dwconv2d_s8: any depth multiplier (but for a rare few, see
 * mcu_cmsis_dw_mve_gather_recip, which take the plain C path), filter, stride, dilation and
 * padding. One input channel (up to 48 taps, filters up to 17 rows): mcu_cmsis_dw_mve_in1_mode below
 * (the rows an output row reads copied into a band, transposed so that each window is one run of
 * bytes; per channel a VMLADAV dot product of the window with the channel's weights).
 *
 * Line path (K x 1 and 1 x K filters, mcu_cmsis_dw_mve_lines_fit): one channel at a time, four output
 * pixels a vector, per tap a gather of their input bytes and a VMLA by the tap's weight
 * (mcu_cmsis_dw_mve_lines, below).
 *
 * Pixel path (every other layer it takes): output pixel by pixel, its taps at fixed offsets from its
 * window's first input byte (a border pixel's own offsets, a tap outside the input reaching a pad
 * row of the input zero point in scratch), then its channels sixteen (then twelve with a
 * multiple-of-four depth multiplier, or eight, then four) at a time in vectors of four 32-bit
 * lanes: per tap a widening load of the four channels' inputs (or, with a multiple-of-four depth
 * multiplier, one input byte broadcast by VMLA; with another one
 * above 1, eight channels at a time, each lane's input byte gathered) and of their weights, VMUL
 * and VADD (Helium has no vector-by-vector multiply-accumulate), from the bias folded with the
 * input zero point (folded_bias: a padded tap's x * w cancels), in assembly for sixteen and eight
 * channels with depth multiplier 1;
 * the requantization is TFLM's, four lanes at once (mcu_cmsis_mve.h).
 *
 * Column path (3x3 filters, depth multiplier 1, the rows whose windows lie inside the input
 * vertically, when there are many of them (16 or more), or at least eight on a map at least eight
 * wide with few channels (up to 32), where it beats the pixel path): one channel at a time, four
 * output pixels of a column (consecutive rows) per vector: each tap is one gather load of the four
 * input bytes (VLDRB.S32 with a vector of row offsets) and one VMLA by the tap's weight as a
 * scalar, so the 32-bit lanes accumulate four pixels of the same channel and the requantization
 * takes the channel's multiplier and shift as scalars; a scatter store writes the four bytes. The input
 * offset is folded per column into the bias: a column at the left or right edge drops the taps
 * outside the input (their weight set to zero, their address moved inside). The rows above take
 * the pixel path first, then the column rows go top to bottom, in one band or (p->band_rows) in
 * bands of four, then band_rows rows, then the rows below pixel by pixel: the order
 * planner/overlap.py models, in which the output may overlap the input. With a lag (p->lag) the
 * pixel path takes every row, through the ring (mcu_cmsis_dw_lag_out): the output exactly over the
 * input.
 */
#ifndef MCU_CMSIS_DWCONV_MVE_H
#define MCU_CMSIS_DWCONV_MVE_H

#include <string.h>

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
    at the left or right edge with its outside taps weighing zero). Not inlined: gcc allocates the
    assembly's registers better in a function of its own. */
__attribute__((noinline)) static void mcu_cmsis_dw_mve_rows3x3(const mcu_cmsis_dw_conv_params *p,
                                                               const int8_t *input, const int8_t *weights,
                                                               const int32_t *bias, const int32_t *multiplier,
                                                               const int32_t *shift, int32_t oy0, int32_t rows,
                                                               int8_t *output)
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

/** Helium pixel path: its scratch (every MCU_CMSIS_DWCONV2D_S8_*_SCRATCH_BYTES covers it): the
    k_h * k_w taps' offsets in a window inside the input, a border pixel's offsets, then a pad row
    of the input zero point (in_c bytes). */
struct mcu_cmsis_dw_mve_scratch {
    int32_t *off; /* the taps' offsets from a window's first input byte */
    int32_t *rel; /* a border pixel's: to its taps inside, or to the pad row */
    int8_t *pad;
    int8_t *ring; /* with a lag (p->lag): mcu_cmsis_dw_lag_out, after the pad row */
    uint32_t recip; /* MCU_DW_GATHER: ceil(2^16 / depth multiplier) */
};
typedef struct mcu_cmsis_dw_mve_scratch mcu_cmsis_dw_mve_scratch; /* not a parameter struct */

enum { MCU_DW_M1, MCU_DW_M4, MCU_DW_GATHER }; /* mcu_cmsis_dw_mve_channels' modes: see there */

/** Requantization of four lanes of channels [c, c + 4) (TFLM's), plus the output offset, clamped;
    predicated loads of the multipliers and shifts (p: the lanes in the layer). */
static inline int32x4_t mcu_cmsis_dw_mve_requantize(int32x4_t x, const int32_t *multiplier, const int32_t *shift,
                                                    mve_pred16_t p, int32_t out_offset, int32_t act_min,
                                                    int32_t act_max)
{
    const int32x4_t s = vldrwq_z_s32(shift, p);
    const int32x4_t right = vminq_s32(s, vdupq_n_s32(0)); /* -exponent: VRSHL shifts right */
    x = vshlq_s32(x, vmaxq_s32(s, vdupq_n_s32(0)));
    x = vqrdmulhq_s32(x, vldrwq_z_s32(multiplier, p));
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31)); /* -1 for negative x when exponent > 0 */
    x = vaddq_n_s32(vrshlq_s32(x, right), out_offset);
    return vminq_s32(vmaxq_s32(x, vdupq_n_s32(act_min)), vdupq_n_s32(act_max));
}

/** N (compile time: 16, 12 (MCU_DW_M4) or 8, or 4 for the last channels, predicated by pred) output channels from c
    of the pixel whose taps are at the addresses base + off[0..taps), in vectors of four channels;
    MODE (compile time): MCU_DW_M1, depth multiplier 1 (a vector reads four input channels),
    MCU_DW_M4, a multiple of four (a vector's channels read one input channel, broadcast),
    MCU_DW_GATHER, any other (each lane's input channel gathered, VLDRB.S32 at a vector of offsets:
    ch / mult for the lane's channel ch, from recip). Full vectors are not predicated: Helium has
    one predicate register, and each predicated load needs its VPST. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_mve_channels(
    const mcu_cmsis_dw_conv_params *p, uintptr_t base, const int32_t *off, int32_t taps, const int8_t *weights,
    const int32_t *folded_bias, const int32_t *multiplier, const int32_t *shift, int32_t c, mve_pred16_t pred,
    int8_t *out, uint32_t recip, const int N, const int MODE)
{
    const int32_t out_c = p->out_c, mult = p->depth_multiplier;
    int32x4_t a[4];
    int32_t in[4] = {0, 0, 0, 0}; /* MCU_DW_M4: each vector's input channel */
    uint32x4_t g[4];              /* MCU_DW_GATHER: each vector's lanes' input channels */
    MCU_CMSIS_DW_UNROLL
    for (int v = 0; v < N / 4; v++) {
        a[v] = N >= 8 ? vldrwq_s32(folded_bias + c + 4 * v) : vldrwq_z_s32(folded_bias + c, pred);
        in[v] = MODE == MCU_DW_M4 ? (c + 4 * v) / mult : 0;
        if (MODE == MCU_DW_GATHER) { /* ch / mult as (ch * recip) >> 16 (mcu_cmsis_dw_mve_gather_recip) */
            g[v] = vshrq_n_u32(vmulq_n_u32(vidupq_n_u32((uint32_t)(c + 4 * v), 1), recip), 16);
        }
    }
    const int8_t *w = weights + c;
#if !defined(__NO_INLINE__)
    if (N >= 8 && MODE == MCU_DW_M1) { /* the taps in assembly: widening loads at constant offsets, no spills */
        const int32_t *tp = off;
        const int8_t *x;
        const uintptr_t bc = base + (uintptr_t)c;
        int32x4_t t0, t1;
        if (N == 8) {
            a[2] = a[3] = vdupq_n_s32(0); /* not used */
        }
        __asm__ volatile("wls lr, %[n], 2f\n"
                         "1:\n\t"
                         "ldr %[x], [%[tp]], #4\n\t"
                         "add %[x], %[x], %[c]\n\t"
                         "vldrb.s32 %q[t0], [%[x]]\n\t"
                         "vldrb.s32 %q[t1], [%[w]]\n\t"
                         "vmul.i32 %q[t0], %q[t0], %q[t1]\n\t"
                         "vldrb.s32 %q[t1], [%[x], #4]\n\t"
                         "vadd.i32 %q[a0], %q[a0], %q[t0]\n\t"
                         "vldrb.s32 %q[t0], [%[w], #4]\n\t"
                         "vmul.i32 %q[t0], %q[t0], %q[t1]\n\t"
                         ".if %c[nn] == 16\n\t"
                         "vldrb.s32 %q[t1], [%[x], #8]\n\t"
                         "vadd.i32 %q[a1], %q[a1], %q[t0]\n\t"
                         "vldrb.s32 %q[t0], [%[w], #8]\n\t"
                         "vmul.i32 %q[t0], %q[t0], %q[t1]\n\t"
                         "vldrb.s32 %q[t1], [%[x], #12]\n\t"
                         "vadd.i32 %q[a2], %q[a2], %q[t0]\n\t"
                         "vldrb.s32 %q[t0], [%[w], #12]\n\t"
                         "vmul.i32 %q[t0], %q[t0], %q[t1]\n\t"
                         "add %[w], %[w], %[oc]\n\t"
                         "vadd.i32 %q[a3], %q[a3], %q[t0]\n\t"
                         ".else\n\t"
                         "add %[w], %[w], %[oc]\n\t"
                         "vadd.i32 %q[a1], %q[a1], %q[t0]\n\t"
                         ".endif\n\t"
                         "le lr, 1b\n"
                         "2:"
                         : [a0] "+w"(a[0]), [a1] "+w"(a[1]), [a2] "+w"(a[2]), [a3] "+w"(a[3]), [t0] "=&w"(t0),
                           [t1] "=&w"(t1), [x] "=&l"(x), [tp] "+r"(tp), [w] "+l"(w)
                         : [n] "r"(taps), [c] "r"(bc), [oc] "r"(out_c), [nn] "i"(N)
                         : "lr", "memory");
        taps = 0; /* done */
    }
#endif
    for (int32_t t = 0; t < taps; t++, w += out_c) {
        const int8_t *x = (const int8_t *)(base + (uintptr_t)off[t]);
        MCU_CMSIS_DW_UNROLL
        for (int v = 0; v < N / 4; v++) {
            const int32x4_t wv = N >= 8 ? vldrbq_s32(w + 4 * v) : vldrbq_z_s32(w, pred);
            if (MODE == MCU_DW_M4) {
                a[v] = vmlaq_n_s32(a[v], wv, x[in[v]]);
            } else if (MODE == MCU_DW_GATHER) {
                const int32x4_t xv =
                    N >= 8 ? vldrbq_gather_offset_s32(x, g[v]) : vldrbq_gather_offset_z_s32(x, g[v], pred);
                a[v] = vaddq_s32(a[v], vmulq_s32(xv, wv));
            } else { /* Helium multiplies lane by lane, then adds (no vector-by-vector VMLA) */
                const int32x4_t xv = N >= 8 ? vldrbq_s32(x + c + 4 * v) : vldrbq_z_s32(x + c, pred);
                a[v] = vaddq_s32(a[v], vmulq_s32(xv, wv));
            }
        }
    }
    const int32_t oo = p->output_offset, lo = p->act_min, hi = p->act_max;
    MCU_CMSIS_DW_UNROLL
    for (int v = 0; v < N / 4; v++) {
        const int32_t k = c + 4 * v;
        if (N >= 8) {
            vstrbq_s32(out + k, mcu_cmsis_mve_requantize_vec(a[v], multiplier + k, shift + k, oo, lo, hi));
        } else {
            vstrbq_p_s32(out + k, mcu_cmsis_dw_mve_requantize(a[v], multiplier + k, shift + k, pred, oo, lo, hi), pred);
        }
    }
}

/** Every output pixel: its tap pointers (the pad row for taps outside the input), then its
    channels sixteen at a time. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_mve_pixels_mode(
    const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights, const int32_t *folded_bias,
    const int32_t *multiplier, const int32_t *shift, const mcu_cmsis_dw_mve_scratch *s, int8_t *output,
    const int MODE)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c, out_h = p->out_h, out_w = p->out_w;
    const int32_t out_c = p->out_c, k_h = p->k_h, k_w = p->k_w, dil_h = p->dil_h, dil_w = p->dil_w;
    const uint32_t recip = MODE == MCU_DW_GATHER ? s->recip : 0;
    for (int32_t oy = 0; oy < out_h; oy++) {
        const int32_t iy0 = oy * p->stride_h - p->pad_top;
        for (int32_t ox = 0; ox < out_w; ox++) {
            const int32_t ix0 = ox * p->stride_w - p->pad_left;
            /* the window's first input byte, an address (outside the input for a border pixel) */
            const uintptr_t base = (uintptr_t)input + (uintptr_t)((iy0 * in_w + ix0) * in_c);
            const int32_t *off = s->off; /* the window inside: the taps at fixed offsets */
            if (!(iy0 >= 0 && iy0 + (k_h - 1) * dil_h < in_h && ix0 >= 0 && ix0 + (k_w - 1) * dil_w < in_w)) {
                for (int32_t ky = 0, t = 0; ky < k_h; ky++) { /* else from the base, or to the pad row */
                    const int32_t iy = iy0 + ky * dil_h;
                    for (int32_t kx = 0, ix = ix0; kx < k_w; kx++, t++, ix += dil_w) {
                        const int inside = iy >= 0 && iy < in_h && ix >= 0 && ix < in_w;
                        s->rel[t] = inside ? s->off[t] : (int32_t)((uintptr_t)s->pad - base);
                    }
                }
                off = s->rel;
            }
            int8_t *out = mcu_cmsis_dw_lag_out(p, s->ring, output, oy * out_w + ox);
            int32_t c = 0;
            if (MODE == MCU_DW_GATHER) { /* eight at a time: the offsets take registers */
                for (; c + 8 <= out_c; c += 8) {
                    mcu_cmsis_dw_mve_channels(p, base, off, k_h * k_w, weights, folded_bias, multiplier, shift, c, 0,
                                              out, recip, 8, MODE);
                }
            } else {
                for (; c + 16 <= out_c; c += 16) {
                    mcu_cmsis_dw_mve_channels(p, base, off, k_h * k_w, weights, folded_bias, multiplier, shift, c, 0,
                                              out, recip, 16, MODE);
                }
                if (MODE == MCU_DW_M4 && c + 12 <= out_c) { /* one pass over the taps for the last twelve */
                    mcu_cmsis_dw_mve_channels(p, base, off, k_h * k_w, weights, folded_bias, multiplier, shift, c, 0,
                                              out, recip, 12, MODE);
                    c += 12;
                } else if (c + 8 <= out_c) {
                    mcu_cmsis_dw_mve_channels(p, base, off, k_h * k_w, weights, folded_bias, multiplier, shift, c, 0,
                                              out, recip, 8, MODE);
                    c += 8;
                }
            }
            for (; c < out_c; c += 4) {
                mcu_cmsis_dw_mve_channels(p, base, off, k_h * k_w, weights, folded_bias, multiplier, shift, c,
                                          vctp32q((uint32_t)(out_c - c)), out, recip, 4, MODE);
            }
        }
    }
}

__attribute__((noinline)) static void mcu_cmsis_dw_mve_pixels_m1(const mcu_cmsis_dw_conv_params *p,
                                                                 const int8_t *input, const int8_t *weights,
                                                                 const int32_t *folded_bias, const int32_t *multiplier,
                                                                 const int32_t *shift,
                                                                 const mcu_cmsis_dw_mve_scratch *s, int8_t *output)
{
    mcu_cmsis_dw_mve_pixels_mode(p, input, weights, folded_bias, multiplier, shift, s, output, MCU_DW_M1);
}

__attribute__((noinline)) static void mcu_cmsis_dw_mve_pixels_m4(const mcu_cmsis_dw_conv_params *p,
                                                                 const int8_t *input, const int8_t *weights,
                                                                 const int32_t *folded_bias, const int32_t *multiplier,
                                                                 const int32_t *shift,
                                                                 const mcu_cmsis_dw_mve_scratch *s, int8_t *output)
{
    mcu_cmsis_dw_mve_pixels_mode(p, input, weights, folded_bias, multiplier, shift, s, output, MCU_DW_M4);
}

__attribute__((noinline)) static void mcu_cmsis_dw_mve_pixels_gather(const mcu_cmsis_dw_conv_params *p,
                                                                     const int8_t *input, const int8_t *weights,
                                                                     const int32_t *folded_bias,
                                                                     const int32_t *multiplier, const int32_t *shift,
                                                                     const mcu_cmsis_dw_mve_scratch *s, int8_t *output)
{
    mcu_cmsis_dw_mve_pixels_mode(p, input, weights, folded_bias, multiplier, shift, s, output, MCU_DW_GATHER);
}

#if !defined(__NO_INLINE__) /* -O0: gcc cannot give the assembly its eight vector registers */
/** Output channels in groups of four (n groups) of one pixel with one input channel, in assembly:
    per channel the dot product of the pixel's taps (NV vectors of sixteen, x0..x2) with the
    channel's weights (w: NV * 16 bytes a channel, VMLADAV), four channels moved into one vector,
    then per group from prm the folded biases, the left shifts, the multipliers and the right shifts
    (<= 0) of its four channels (TFLM's requantization, as mcu_cmsis_mve_requantize_vec). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_mve_in1_groups(
    int8x16_t x0, int8x16_t x1, int8x16_t x2, const int8_t *w, const int32_t *prm, int8_t *out, int32_t n,
    int32_t oo, int32x4_t lo, int32x4_t hi, const int NV)
{
    int32_t a0, a1, a2, a3;
    int32x4_t acc, t, u;
    __asm__ volatile(".macro mcu_dw_in1_dot a\n\t"
                     "vldrb.u8 %q[u], [%[w]], #16\n\t"
                     "vmladav.s8 \\a, %q[x0], %q[u]\n\t"
                     ".if %c[nv] > 1\n\t"
                     "vldrb.u8 %q[u], [%[w]], #16\n\t"
                     "vmladava.s8 \\a, %q[x1], %q[u]\n\t"
                     ".endif\n\t"
                     ".if %c[nv] > 2\n\t"
                     "vldrb.u8 %q[u], [%[w]], #16\n\t"
                     "vmladava.s8 \\a, %q[x2], %q[u]\n\t"
                     ".endif\n\t"
                     ".endm\n\t"
                     "wls lr, %[n], 2f\n"
                     "1:\n\t"
                     "mcu_dw_in1_dot %[a0]\n\t"
                     "mcu_dw_in1_dot %[a1]\n\t"
                     "mcu_dw_in1_dot %[a2]\n\t"
                     "mcu_dw_in1_dot %[a3]\n\t"
                     "vmov.32 %q[acc][0], %[a0]\n\t"
                     "vmov.32 %q[acc][1], %[a1]\n\t"
                     "vmov.32 %q[acc][2], %[a2]\n\t"
                     "vmov.32 %q[acc][3], %[a3]\n\t"
                     "vldrw.u32 %q[t], [%[prm]], #16\n\t"
                     "vadd.i32 %q[acc], %q[acc], %q[t]\n\t"
                     "vldrw.u32 %q[t], [%[prm]], #16\n\t"
                     "vshl.s32 %q[acc], %q[acc], %q[t]\n\t"
                     "vldrw.u32 %q[t], [%[prm]], #16\n\t"
                     "vqrdmulh.s32 %q[acc], %q[acc], %q[t]\n\t"
                     "vldrw.u32 %q[t], [%[prm]], #16\n\t"
                     "vand %q[u], %q[acc], %q[t]\n\t"
                     "vshr.s32 %q[u], %q[u], #31\n\t"
                     "vqadd.s32 %q[acc], %q[acc], %q[u]\n\t"
                     "vrshl.s32 %q[acc], %q[acc], %q[t]\n\t"
                     "vadd.i32 %q[acc], %q[acc], %[oo]\n\t"
                     "vmax.s32 %q[acc], %q[acc], %q[lo]\n\t"
                     "vmin.s32 %q[acc], %q[acc], %q[hi]\n\t"
                     "vstrb.32 %q[acc], [%[out]], #4\n\t"
                     "le lr, 1b\n"
                     "2:\n\t"
                     ".purgem mcu_dw_in1_dot"
                     : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [acc] "=&w"(acc),
                       [t] "=&w"(t), [u] "=&w"(u), [w] "+r"(w), [prm] "+r"(prm), [out] "+r"(out)
                     : [x0] "w"(x0), [x1] "w"(x1), [x2] "w"(x2), [lo] "w"(lo), [hi] "w"(hi), [oo] "r"(oo),
                       [n] "r"(n), [nv] "i"(NV)
                     : "lr", "memory");
}

/** Input rows iy0 + ky * dil_h (ky < k_h) into the band, transposed: band column j (input column
    j - pad_left) holds the k_h bytes of its rows contiguously, so a window of consecutive columns
    is one run of bytes; rows outside the input read the zero point (the band's pad columns are
    filled once). */
static inline void mcu_cmsis_dw_mve_in1_band(const mcu_cmsis_dw_conv_params *p, const int8_t *input, int32_t iy0,
                                             int32_t cols, int8_t *band)
{
    const int32_t k_h = p->k_h, pl = p->pad_left;
    const int32_t n = (p->in_w < cols - pl ? p->in_w : cols - pl); /* input columns in the band */
    const uint8x16_t o = vmulq_n_u8(vidupq_n_u8(0, 1), (uint8_t)k_h);
    const int8x16_t zp = vdupq_n_s8((int8_t)-p->input_offset);
    for (int32_t ky = 0; ky < k_h; ky++) {
        const int32_t iy = iy0 + ky * p->dil_h;
        const int inside = iy >= 0 && iy < p->in_h;
        const int8_t *src = input + iy * p->in_w;
        int8_t *dst = band + pl * k_h + ky;
        if (inside) {
            for (int32_t j = 0; j < n; j += 16, dst += 16 * k_h) {
                const mve_pred16_t pred = vctp8q((uint32_t)(n - j));
                vstrbq_scatter_offset_p_s8(dst, o, vldrbq_z_s8(src + j, pred), pred);
            }
        } else {
            for (int32_t j = 0; j < n; j += 16, dst += 16 * k_h) {
                vstrbq_scatter_offset_p_s8(dst, o, zp, vctp8q((uint32_t)(n - j)));
            }
        }
    }
}

/** The one-input-channel path's tables into prm (planner/targets/cmsis_nn/depthwise.py lays the
    same out offline, MCU_CMSIS_DW_SWEEP_ONE_TABLE): per group of four channels the requantization's
    vectors (16 words: the folded biases, left shifts, multipliers and right shifts), then per
    channel its weights in the window's order, column by column (span bytes each; channels past
    out_c and bytes past the taps zero). */
static void mcu_cmsis_dw_mve_in1_tables(const mcu_cmsis_dw_conv_params *p, const int8_t *weights,
                                        const int32_t *folded_bias, const int32_t *multiplier, const int32_t *shift,
                                        int32_t span, int32_t *prm)
{
    const int32_t k_h = p->k_h, k_w = p->k_w, out_c = p->out_c, groups = (out_c + 3) / 4;
    int8_t *const wt = (int8_t *)(void *)(prm + 16 * groups);
    memset(prm, 0, (size_t)(groups * (64 + 4 * span)));
    for (int32_t c = 0; c < out_c; c++) {
        int32_t *const g = prm + 16 * (c / 4) + c % 4;
        g[0] = folded_bias[c];
        g[4] = shift[c] > 0 ? shift[c] : 0;
        g[8] = multiplier[c];
        g[12] = shift[c] < 0 ? shift[c] : 0;
        for (int32_t kx = 0; kx < k_w; kx++) {
            for (int32_t ky = 0; ky < k_h; ky++) {
                wt[c * span + kx * k_h + ky] = weights[(ky * k_w + kx) * out_c + c];
            }
        }
    }
}

/** One input channel (mcu_cmsis_dw_mve_in1_fits): every output channel reads the same taps, so
    per output row the rows its windows read are copied into a band (mcu_cmsis_dw_mve_in1_band),
    each window one run of bytes there (with dilation along the width, gathered at byte offsets),
    read as NV vectors of sixteen taps (the bytes past the window meeting zero weights); then its
    channels four at a time (mcu_cmsis_dw_mve_in1_groups) from the tables at prm
    (mcu_cmsis_dw_mve_in1_tables: NV * 16 bytes of weights a channel). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_mve_in1_mode(const mcu_cmsis_dw_conv_params *p,
                                                                           const int8_t *input, const int32_t *prm,
                                                                           int8_t *band, int8_t *output, const int NV)
{
    const int32_t k_h = p->k_h, k_w = p->k_w, dil_w = p->dil_w, out_c = p->out_c, out_w = p->out_w;
    const int32_t span = 16 * NV, groups = (out_c + 3) / 4, full = out_c / 4, step = p->stride_w * k_h;
    const int32_t cols = MCU_CMSIS_DW_SPAN(out_w, p->stride_w, k_w, dil_w);
    const int8_t *const wt = (const int8_t *)(const void *)(prm + 16 * groups);
    uint8_t offs[48];
    for (int32_t t = 0; t < span; t++) {
        offs[t] = (uint8_t)(t < k_h * k_w ? (t / k_h) * dil_w * k_h + t % k_h : 0);
    }
    memset(band, -p->input_offset, (size_t)(cols * k_h));
    const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
    const int32_t oo = p->output_offset;
    int8_t *out = output;
    for (int32_t oy = 0; oy < p->out_h; oy++) {
        mcu_cmsis_dw_mve_in1_band(p, input, oy * p->stride_h - p->pad_top, cols, band);
        for (const int8_t *x = band, *const end = band + out_w * step; x != end; x += step, out += out_c) {
            int8x16_t xv[3];
            MCU_CMSIS_DW_UNROLL
            for (int v = 0; v < NV; v++) {
                xv[v] = dil_w == 1 ? vldrbq_s8(x + 16 * v) : vldrbq_gather_offset_s8(x, vldrbq_u8(offs + 16 * v));
            }
            mcu_cmsis_dw_mve_in1_groups(xv[0], xv[NV > 1], xv[NV > 2 ? 2 : 0], wt, prm, out, full, oo, lo, hi, NV);
            if (full < groups) { /* the last channels: through a word, then their bytes */
                int8_t last[4];
                mcu_cmsis_dw_mve_in1_groups(xv[0], xv[NV > 1], xv[NV > 2 ? 2 : 0], wt + 4 * full * span,
                                            prm + 16 * full, last, 1, oo, lo, hi, NV);
                memcpy(out + 4 * full, last, (size_t)(out_c - 4 * full));
            }
        }
    }
}

#define MCU_CMSIS_DW_MVE_IN1_INSTANCE(name, NV)                                                                      \
    __attribute__((noinline)) static void name(const mcu_cmsis_dw_conv_params *p, const int8_t *input,              \
                                               const int32_t *tables, int8_t *band, int8_t *output)                  \
    {                                                                                                                 \
        mcu_cmsis_dw_mve_in1_mode(p, input, tables, band, output, NV);                                                \
    }
MCU_CMSIS_DW_MVE_IN1_INSTANCE(mcu_cmsis_dw_mve_in1_16, 1)
MCU_CMSIS_DW_MVE_IN1_INSTANCE(mcu_cmsis_dw_mve_in1_32, 2)
MCU_CMSIS_DW_MVE_IN1_INSTANCE(mcu_cmsis_dw_mve_in1_48, 3)

/** The one-input-channel path: its tables at `tables` (MCU_CMSIS_DW_SWEEP_ONE_TABLE, laid out
    offline) and the band in scratch, else both in scratch, the tables built first. */
__attribute__((noinline)) static void mcu_cmsis_dw_mve_in1(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                                           const int8_t *weights, const int32_t *folded_bias,
                                                           const int32_t *multiplier, const int32_t *shift,
                                                           const int32_t *tables, int32_t *scratch, int8_t *output)
{
    const int32_t nv = (p->k_h * p->k_w + 15) / 16;
    int8_t *band = (int8_t *)(void *)scratch;
    if (p->sweep != MCU_CMSIS_DW_SWEEP_ONE_TABLE) {
        mcu_cmsis_dw_mve_in1_tables(p, weights, folded_bias, multiplier, shift, 16 * nv, scratch);
        tables = scratch;
        band += (p->out_c + 3) / 4 * (64 + 64 * nv);
    }
    (nv == 1 ? mcu_cmsis_dw_mve_in1_16 : nv == 2 ? mcu_cmsis_dw_mve_in1_32 : mcu_cmsis_dw_mve_in1_48)(p, input, tables,
                                                                                                   band, output);
}
#endif

#if !defined(__NO_INLINE__)
/** Lanes [0, n) of rows[2] rows of the line path (mcu_cmsis_dw_mve_lines), one output channel, four
    lanes a vector (tail-predicated), in assembly. TAPS (compile time) taps, tab[2k] / tab[2k + 1]:
    tap k's weight times 2^left (the requantization's left shift done by the multiply-accumulates,
    wrapping like TFLM's) and its base address; lane i of a vector reads tap k at base_k + o[i] (a
    gather), o moving by in_step per vector, and each row's o its first's (rows[4 .. 7]) plus rows[0]
    times the row (the last vector's tail-predicated VADD leaves o's lanes apart); bias: the folded
    bias times 2^left; fix: -1 when the requantization divides (the fix-up's factor), else 0; the
    lanes' outputs at out + ooff[i], out moving by out_step per vector and by rows[1] more after each
    row. */
static inline __attribute__((always_inline)) void mcu_cmsis_dw_mve_line(const int32_t *tab, int8_t *out, int32_t n,
                                                                        uint32x4_t o, int32_t in_step,
                                                                        int32_t out_step, int32_t bias, int32_t fix,
                                                                        int32_t oo, int32_t *rows, int32x4_t m,
                                                                        int32x4_t neg_right, uint32x4_t ooff,
                                                                        int32x4_t lo, int32x4_t hi, const int TAPS)
{
    int32x4_t acc, v;
    int32_t w, b;
    __asm__ volatile("2:\n\t"
                     "dlstp.32 lr, %[n]\n"
                     "1:\n\t"
                     "vdup.32 %q[acc], %[bias]\n\t"
                     ".irp k, 0, 1, 2, 3, 4, 5, 6, 7, 8\n\t"
                     ".if \\k < %c[taps]\n\t"
                     "ldrd %[w], %[b], [%[tab], #(8 * \\k)]\n\t"
                     "vldrb.s32 %q[v], [%[b], %q[o]]\n\t"
                     "vmla.s32 %q[acc], %q[v], %[w]\n\t"
                     ".endif\n\t"
                     ".endr\n\t"
                     "vqrdmulh.s32 %q[acc], %q[acc], %q[m]\n\t"
                     "vshr.u32 %q[v], %q[acc], #31\n\t"
                     "vmla.s32 %q[acc], %q[v], %[fix]\n\t"
                     "vrshl.s32 %q[acc], %q[acc], %q[nr]\n\t"
                     "vadd.i32 %q[acc], %q[acc], %[oo]\n\t"
                     "vmax.s32 %q[acc], %q[acc], %q[lo]\n\t"
                     "vmin.s32 %q[acc], %q[acc], %q[hi]\n\t"
                     "vstrb.32 %q[acc], [%[out], %q[ooff]]\n\t"
                     "vadd.i32 %q[o], %q[o], %[is]\n\t"
                     "add %[out], %[out], %[os]\n\t"
                     "letp lr, 1b\n\t"
                     "ldr %[w], [%[rows], #8]\n\t"
                     "subs %[w], %[w], #1\n\t"
                     "beq 3f\n\t"
                     "str %[w], [%[rows], #8]\n\t"
                     "ldrd %[w], %[b], [%[rows]]\n\t"
                     "vldrw.u32 %q[o], [%[rows], #16]\n\t"
                     "vadd.i32 %q[o], %q[o], %[w]\n\t"
                     "vstrw.32 %q[o], [%[rows], #16]\n\t"
                     "add %[out], %[out], %[b]\n\t"
                     "b 2b\n"
                     "3:\n"
                     : [acc] "=&w"(acc), [v] "=&w"(v), [w] "=&r"(w), [b] "=&r"(b), [o] "+w"(o), [out] "+r"(out)
                     : [n] "r"(n), [tab] "r"(tab), [bias] "r"(bias), [fix] "r"(fix), [oo] "r"(oo), [is] "r"(in_step),
                       [os] "r"(out_step), [rows] "r"(rows), [m] "w"(m), [nr] "w"(neg_right), [ooff] "w"(ooff),
                       [lo] "w"(lo), [hi] "w"(hi), [taps] "i"(TAPS)
                     : "lr", "memory", "cc");
}

#define MCU_DW_LINE_TAPS 9 /* the line path's most taps */

/** The line path's layer (mcu_cmsis_dw_mve_lines) and channel: the taps run along axis A (rows for
    a K x 1 filter, columns for 1 x K); the other axis, B, has one tap and no padding. */
struct mcu_cmsis_dw_line {
    const mcu_cmsis_dw_conv_params *p;
    int32_t taps, ntab, dil, len;       /* taps along A, rounded up to 3, 5 or 9; dilation; input length */
    int32_t a_in;                       /* input bytes from one position along A to the next */
    int32_t bias, folded, left, fix;    /* the channel's bias, folded bias times 2^left, fix-up factor */
    int32x4_t m, neg_right, lo, hi;     /* its multiplier and right shift (<= 0); the clamp */
    uintptr_t ref;                      /* input + channel */
    int32_t full[2 * MCU_DW_LINE_TAPS]; /* its taps for windows inside */
};
typedef struct mcu_cmsis_dw_line mcu_cmsis_dw_line; /* not a parameter struct */

/** Channel lanes [0, n) of `rows` rows, lane i of row r's window at x0 + r * row_in + i * lane_in (its
    tap 0's address; outside the input for a border window) and output at out + r * row_out + i *
    lane_out, every lane's window starting at position a0 along A: a window inside takes the
    channel's taps (l->full); else only the taps inside (the loop for 3, 5 or 9 taps by their count,
    padded with taps weighing 0), the bias folded over them. Not inlined: one copy of each assembly
    loop. */
__attribute__((noinline)) static void mcu_cmsis_dw_mve_line_run(const mcu_cmsis_dw_line *l, int32_t a0, uintptr_t x0,
                                                                int32_t n, int8_t *out, int32_t lane_in,
                                                                int32_t lane_out, int32_t rows, int32_t row_in,
                                                                int32_t row_out)
{
    int32_t edge[2 * MCU_DW_LINE_TAPS];
    const int32_t *tab = l->full;
    int32_t folded = l->folded, ntab = l->ntab;
    const int32_t dil = l->dil, taps = l->taps, last = l->len - 1;
    if (a0 < 0 || a0 + (taps - 1) * dil > last) { /* locals: the stores to edge could alias *l */
        const int32_t off = l->p->input_offset;
        const int32_t *const full = l->full;
        int32_t f = (int32_t)((uint32_t)l->bias << l->left);
        int32_t k = a0 < 0 ? (-a0 + dil - 1) / dil : 0, n = 0; /* the taps inside, in order, as in l->full */
        for (; k < taps && a0 + k * dil <= last; k++, n++) {
            edge[2 * n] = full[2 * k];
            edge[2 * n + 1] = full[2 * k + 1];
            f += off * full[2 * k];
        }
        ntab = n <= 3 ? 3 : n <= 5 ? 5 : 9;
        if (n == 0) { /* no tap inside: the padding taps read position 0 */
            edge[1] = (int32_t)(2 * l->ref - x0);
        }
        for (; n < ntab; n++) { /* the padding taps weigh 0 */
            edge[2 * n] = 0;
            edge[2 * n + 1] = edge[1];
        }
        folded = f;
        tab = edge;
    }
    const uint32x4_t lanes = vidupq_n_u32(0, 1);
    const uint32x4_t o = vaddq_n_u32(vmulq_n_u32(lanes, (uint32_t)lane_in), (uint32_t)(x0 - l->ref));
    const uint32x4_t ooff = vmulq_n_u32(lanes, (uint32_t)lane_out);
    const int32_t is = 4 * lane_in, os = 4 * lane_out, oo = l->p->output_offset, fix = l->fix;
    const int32_t vectors = (n + 3) / 4; /* each row's: out then moves on to the next row's start */
    int32_t rw[8];
    rw[2] = rows;
    if (rows > 1) {
        rw[0] = row_in, rw[1] = row_out - vectors * os;
        vst1q_u32((uint32_t *)(void *)(rw + 4), o);
    }
    if (ntab == 3) {
        mcu_cmsis_dw_mve_line(tab, out, n, o, is, os, folded, fix, oo, rw, l->m, l->neg_right, ooff, l->lo, l->hi, 3);
    } else if (ntab == 5) {
        mcu_cmsis_dw_mve_line(tab, out, n, o, is, os, folded, fix, oo, rw, l->m, l->neg_right, ooff, l->lo, l->hi, 5);
    } else {
        mcu_cmsis_dw_mve_line(tab, out, n, o, is, os, folded, fix, oo, rw, l->m, l->neg_right, ooff, l->lo, l->hi, 9);
    }
}

/** The n bytes src[i * step] to plane[i], eight at a time (a gather with 16-bit offsets), in assembly. */
static inline void mcu_cmsis_dw_mve_plane(const int8_t *src, int32_t n, int32_t step, int8_t *plane)
{
    const uint16x8_t at = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)step);
    int16x8_t v;
    __asm__ volatile("dlstp.16 lr, %[n]\n"
                     "1:\n\t"
                     "vldrb.s16 %q[v], [%[src], %q[at]]\n\t"
                     "vstrb.16 %q[v], [%[dst]], #8\n\t"
                     "add %[src], %[src], %[s8]\n\t"
                     "letp lr, 1b\n"
                     : [v] "=&w"(v), [src] "+r"(src), [dst] "+r"(plane)
                     : [n] "r"(n), [at] "w"(at), [s8] "r"(8 * step)
                     : "lr", "memory");
}

/** The n bytes src[i] to dst[i * step], eight at a time (a scatter with 16-bit offsets), in assembly. */
static inline void mcu_cmsis_dw_mve_unplane(const int8_t *src, int32_t n, int32_t step, int8_t *dst)
{
    const uint16x8_t at = vmulq_n_u16(vidupq_n_u16(0, 1), (uint16_t)step);
    int16x8_t v;
    __asm__ volatile("dlstp.16 lr, %[n]\n"
                     "1:\n\t"
                     "vldrb.s16 %q[v], [%[src]], #8\n\t"
                     "vstrb.16 %q[v], [%[dst], %q[at]]\n\t"
                     "add %[dst], %[dst], %[s8]\n\t"
                     "letp lr, 1b\n"
                     : [v] "=&w"(v), [src] "+r"(src), [dst] "+r"(dst)
                     : [n] "r"(n), [at] "w"(at), [s8] "r"(8 * step)
                     : "lr", "memory");
}

enum { MCU_DW_LINES_OUT = 1, MCU_DW_LINES_PLANE, MCU_DW_LINES_RING }; /* mcu_cmsis_dw_mve_lines' modes */

/** K x 1 and 1 x K filters (mcu_cmsis_dw_mve_lines_fit): one channel at a time, four output
    pixels a vector, each tap a gather of their four input bytes and one VMLA by the tap's weight
    (mcu_cmsis_dw_mve_line). Where the output pixels in raster order read the input at an even
    step, the windows from the first inside the input along A to the last go as one run (for 1 x K
    those of the border columns between them with the inside taps' weights, rewritten after), then
    each border line (a row for K x 1, a column for 1 x K) with its taps inside; elsewhere every
    line goes on its own. */
__attribute__((noinline)) static void mcu_cmsis_dw_mve_lines(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                                             const int8_t *weights, const int32_t *bias,
                                                             const int32_t *folded_bias, const int32_t *multiplier,
                                                             const int32_t *shift, int8_t *buf, int mode,
                                                             int8_t *output)
{
    const int vertical = p->k_w == 1; /* A: the rows (K x 1), else the columns (1 x K) */
    const int plane = mode == MCU_DW_LINES_PLANE, ring = mode == MCU_DW_LINES_RING;
    const int32_t in_c = plane ? 1 : p->in_c; /* in place: each channel's input copied into buf first */
    const int32_t in_row = p->in_w * in_c, out_row = p->out_w * p->out_c, out_c = p->out_c;
    const int32_t na = vertical ? p->out_h : p->out_w, nb = vertical ? p->out_w : p->out_h;
    const int32_t sa = vertical ? p->stride_h : p->stride_w, pad = vertical ? p->pad_top : p->pad_left;
    const int32_t a_out = vertical ? out_row : out_c, b_out = vertical ? out_c : out_row;
    const int32_t b_in = vertical ? p->stride_w * in_c : p->stride_h * in_row;
    const int32_t px_in = p->stride_w * in_c; /* raster order: from one pixel to the next */
    mcu_cmsis_dw_line l;
    l.p = p;
    l.taps = p->k_h * p->k_w;
    l.ntab = l.taps <= 3 ? 3 : l.taps <= 5 ? 5 : 9;
    l.dil = vertical ? p->dil_h : p->dil_w;
    l.len = vertical ? p->in_h : p->in_w;
    l.a_in = vertical ? in_row : in_c;
    l.lo = vdupq_n_s32(p->act_min);
    l.hi = vdupq_n_s32(p->act_max);
    /* the windows inside the input along A: [j0, j1) */
    const int32_t top = l.len - 1 - (l.taps - 1) * l.dil + pad;
    const int32_t j0 = (pad + sa - 1) / sa, j1 = top < 0 ? j0 : top / sa + 1 < na ? top / sa + 1 : na;
    /* 1 x K: the inside windows row by row; K x 1: as one raster run where the pixels read the input at
       an even step */
    const int raster = !ring && j1 > j0 && (!vertical || p->stride_h * in_row == p->out_w * px_in);
    for (int32_t c = 0; c < out_c; c++) {
        const int32_t s = shift[c];
        l.left = s > 0 ? s : 0;
        l.fix = s < 0 ? -1 : 0;
        l.m = vdupq_n_s32(multiplier[c]);
        l.neg_right = vdupq_n_s32(s > 0 ? 0 : s);
        l.bias = bias[c];
        l.folded = (int32_t)((uint32_t)folded_bias[c] << l.left);
        l.ref = (uintptr_t)input + (uintptr_t)c;
        if (plane) {
            mcu_cmsis_dw_mve_plane(input + c, p->in_h * p->in_w, p->in_c, buf);
            l.ref = (uintptr_t)buf;
        }
        for (int32_t k = 0; k < l.ntab; k++) {
            l.full[2 * k] = k < l.taps ? (int32_t)((uint32_t)weights[k * out_c + c] << l.left) : 0;
            l.full[2 * k + 1] = (int32_t)(l.ref + (uintptr_t)(k < l.taps ? k * l.dil * l.a_in : 0));
        }
        const int32_t a_first = j0 * sa - pad;
        if (raster) { /* the first window inside to the last, in raster order (1 x K: of each row) */
            const int32_t n = vertical ? (j1 - j0) * nb : j1 - j0, rows = vertical ? 1 : nb;
            mcu_cmsis_dw_mve_line_run(&l, a_first, l.ref + (uintptr_t)(a_first * l.a_in), n, output + j0 * a_out + c,
                                      px_in, out_c, rows, p->stride_h * in_row, out_row);
        }
        for (int32_t j = raster && j0 == 0 ? j1 : 0; j < na; j = raster && j + 1 == j0 ? j1 : j + 1) {
            const int32_t a0 = j * sa - pad; /* line j: its lanes across A */
            const uintptr_t x0 = l.ref + (uintptr_t)(a0 * l.a_in);
            int8_t *out = output + j * a_out + c;
            if (!ring) {
                mcu_cmsis_dw_mve_line_run(&l, a0, x0, nb, out, b_in, b_out, 1, 0, 0);
            } else { /* in place: line j into the ring, line j - pad (its input no longer read) out */
                mcu_cmsis_dw_mve_line_run(&l, a0, x0, nb, buf + j % (pad + 1) * nb, b_in, 1, 1, 0, 0);
                if (j >= pad) {
                    mcu_cmsis_dw_mve_unplane(buf + (j - pad) % (pad + 1) * nb, nb, b_out, out - pad * a_out);
                }
            }
        }
        for (int32_t j = na - pad > 0 ? na - pad : 0; ring && j < na; j++) {
            mcu_cmsis_dw_mve_unplane(buf + j % (pad + 1) * nb, nb, b_out, output + j * a_out + c);
        }
    }
}

/** How the line path (mcu_cmsis_dw_mve_lines) takes the layer, 0 if it does not: a K x 1 or 1 x K
    filter (2 <= K <= 9), depth multiplier 1, no padding across the filter and at least four
    outputs across it (1-D maps keep the pixel path, as fast there); the output apart from
    the input (MCU_DW_LINES_OUT: the path goes channel by channel over the whole map), or exactly over
    it (p->lag) with room in the ring's scratch for one channel's input, copied there first
    (MCU_DW_LINES_PLANE), or else, stride 1 along the filter and a map of the input's size, for
    pad + 1 lines of one channel's output, each written to its place once no later line reads the
    input under it (MCU_DW_LINES_RING). */
__attribute__((noinline)) static int mcu_cmsis_dw_mve_lines_fit(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                             const int8_t *output)
{
    const int32_t taps = p->k_h * p->k_w;
    if ((p->k_h != 1 && p->k_w != 1) || p->depth_multiplier != 1 || taps < 2 || taps > MCU_DW_LINE_TAPS) {
        return 0;
    }
    const int vertical = p->k_w == 1 && p->pad_left == 0 && (p->out_w - 1) * p->stride_w < p->in_w;
    const int horizontal = p->k_h == 1 && p->pad_top == 0 && (p->out_h - 1) * p->stride_h < p->in_h;
    if (!(vertical || horizontal)) {
        return 0;
    }
    const int32_t nb = vertical ? p->out_w : p->out_h, sa = vertical ? p->stride_h : p->stride_w;
    if (nb < 4) {
        return 0; /* fewer than four outputs across the filter (1-D maps): the pixel path is cheaper */
    }
    const uintptr_t in0 = (uintptr_t)input, in1 = in0 + (uintptr_t)(p->in_h * p->in_w * p->in_c);
    const uintptr_t out0 = (uintptr_t)output, out1 = out0 + (uintptr_t)(p->out_h * p->out_w * p->out_c);
    if (p->lag == 0) {
        return out1 <= in0 || in1 <= out0 ? MCU_DW_LINES_OUT : 0;
    }
    const int32_t room = MCU_CMSIS_DWCONV2D_S8_RING_SCRATCH_BYTES(8 * taps + p->in_c, p->lag, p->out_c);
    const int32_t pad = vertical ? p->pad_top : p->pad_left, b_out = vertical ? p->out_c : p->out_w * p->out_c;
    if (out0 != in0 || 7 * p->in_c >= 65536 || 7 * b_out >= 65536) { /* 16-bit gather / scatter offsets */
        return 0;
    }
    if (p->in_h * p->in_w <= room) {
        return MCU_DW_LINES_PLANE;
    }
    const int same = sa == 1 && p->in_h == p->out_h && p->in_w == p->out_w;
    return same && (pad + 1) * nb <= room ? MCU_DW_LINES_RING : 0;
}
#endif

/** Whether the one-input-channel path takes the layer: up to 48 taps, a window's bytes within 255
    of its first in the band, and the band's scatter offsets (15 * k_h) under 256. */
static inline int mcu_cmsis_dw_mve_in1_fits(const mcu_cmsis_dw_conv_params *p)
{
    return p->in_c == 1 && p->k_h * p->k_w <= 48 && p->k_h <= 17 && (p->k_w - 1) * p->dil_w * p->k_h + p->k_h <= 256;
}

/** The gather mode's reciprocal of the depth multiplier, ceil(2^16 / mult), if (ch * it) >> 16 is
    ch / mult for every channel ch < out_c (ch * e < 2^16 for its error e = it * mult - 2^16 and the
    product within 32 bits), else 0. */
static inline uint32_t mcu_cmsis_dw_mve_gather_recip(int32_t mult, int32_t out_c)
{
    const uint32_t recip = (65536u + (uint32_t)mult - 1u) / (uint32_t)mult, e = recip * (uint32_t)mult - 65536u;
    return out_c + 3 < 65536 && (uint64_t)(out_c + 3) * e < 65536u ? recip : 0;
}

/** The Helium path, depth multiplier 1, a multiple of four or any other whose channels
    mcu_cmsis_dw_mve_gather_recip serves (else returns 0, having done nothing): the column path for
    the rows it suits (see the top of this file), the pixel path for every other row. */
static inline int mcu_cmsis_dwconv_s8_mve(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                          const int8_t *weights, const int32_t *bias, const int32_t *folded_bias,
                                          const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                                          int32_t *scratch, int8_t *output)
{
    const int32_t mult = p->depth_multiplier;
    mcu_cmsis_dw_mve_scratch s;
    s.recip = mult == 1 || mult % 4 == 0 ? 0 : mcu_cmsis_dw_mve_gather_recip(mult, p->out_c);
#if !defined(__NO_INLINE__)
    if (mcu_cmsis_dw_mve_in1_fits(p)) {
        if (!MCU_PATH_MVE_DW_IN1) { /* mcu_cmsis_paths.h: the plain C loop, which needs no scratch */
            return 0;
        }
        mcu_cmsis_dw_mve_in1(p, input, weights, folded_bias, multiplier, shift, rq, scratch, output);
        return 1;
    }
    const int lines =
        MCU_PATH_MVE_DW_LINES && (p->k_h == 1 || p->k_w == 1) ? mcu_cmsis_dw_mve_lines_fit(p, input, output) : 0;
    if (lines) {
        mcu_cmsis_dw_mve_lines(p, input, weights, bias, folded_bias, multiplier, shift, (int8_t *)(void *)scratch,
                               lines, output);
        return 1;
    }
#else
    if (p->sweep == MCU_CMSIS_DW_SWEEP_ONE_TABLE) {
        return 0; /* its scratch holds only the band (the planner lowers it so only where the path fits,
                     mcu_cmsis_dw_mve_in1_fits): without the path, the plain C loop, which needs none */
    }
#endif
    if ((mult != 1 && mult % 4 != 0 && (s.recip == 0 || !MCU_PATH_MVE_DW_GATHER)) ||
        (mult != 1 && mult % 4 == 0 && !MCU_PATH_MVE_DW_M4)) {
        return 0; /* the plain C loop (a ring after Helium's scratch, as here) */
    }
    const int32_t taps = p->k_h * p->k_w;
    s.off = scratch;
    s.rel = scratch + taps;
    s.pad = (int8_t *)(void *)(scratch + 2 * taps);
    s.ring = mcu_cmsis_dw_ring(scratch, 8 * taps + p->in_c);
    for (int32_t t = 0; t < taps; t++) {
        s.off[t] = ((t / p->k_w) * p->dil_h * p->in_w + (t % p->k_w) * p->dil_w) * p->in_c;
    }
    for (int32_t i = 0; i < p->in_c; i++) {
        s.pad[i] = (int8_t)-p->input_offset; /* x * w cancelled by the fold */
    }
    (void)bias, (void)rq;
#if !defined(__NO_INLINE__) /* -O0: gcc cannot give the column path's assembly its registers */
    const int32_t sh = p->stride_h, pad_top = p->pad_top, span = (p->k_h - 1) * p->dil_h;
    const int32_t oy0 = (pad_top + sh - 1) / sh; /* rows whose windows lie inside vertically: [oy0, oy1) */
    int32_t oy1 = p->in_h - 1 - span + pad_top >= 0 ? (p->in_h - 1 - span + pad_top) / sh + 1 : 0;
    oy1 = oy1 < p->out_h ? oy1 : p->out_h;
    const int32_t rows = oy1 - oy0;
    const int many = rows >= 16 || (rows >= 8 && p->out_c <= 32 && p->out_w >= 8); /* where columns pay */
    if (MCU_PATH_MVE_DW_COLUMNS && mult == 1 && p->k_h == 3 && p->k_w == 3 && many && p->lag == 0) {
        /* Top to bottom, so that an output may overlap its input (planner/overlap.py models this
           order): the rows above through the pixel path, the column rows in bands (with band_rows,
           four rows, then band_rows at a time; else all in one), the rows below pixel by pixel. */
        mcu_cmsis_dw_conv_params top = *p, bottom = *p;
        top.out_h = oy0;
        bottom.out_h = p->out_h - oy1;
        bottom.pad_top = p->pad_top - oy1 * sh;
        mcu_cmsis_dw_mve_pixels_m1(&top, input, weights, folded_bias, multiplier, shift, &s, output);
        const int32_t band_rows = p->band_rows > 0 ? p->band_rows : rows;
        for (int32_t oy = oy0, band = p->band_rows > 0 ? 4 : band_rows; oy < oy1; oy += band, band = band_rows) {
            const int32_t n = oy1 - oy < band ? oy1 - oy : band;
            mcu_cmsis_dw_mve_rows3x3(p, input, weights, bias, multiplier, shift, oy, n, output);
        }
        mcu_cmsis_dw_mve_pixels_m1(&bottom, input, weights, folded_bias, multiplier, shift, &s,
                                   output + oy1 * p->out_w * p->out_c);
        return 1;
    }
#endif
    if (mult == 1) {
        mcu_cmsis_dw_mve_pixels_m1(p, input, weights, folded_bias, multiplier, shift, &s, output);
    } else if (mult % 4 == 0) {
        mcu_cmsis_dw_mve_pixels_m4(p, input, weights, folded_bias, multiplier, shift, &s, output);
    } else {
        mcu_cmsis_dw_mve_pixels_gather(p, input, weights, folded_bias, multiplier, shift, &s, output);
    }
    if (p->lag > 0) {
        mcu_cmsis_dw_lag_flush(p, s.ring, output);
    }
    return 1;
}

#endif /* MCU_CMSIS_USE_MVE */
#endif /* MCU_CMSIS_DWCONV_MVE_H */
