/*
 * Helium (MVE) matrix-vector core of the convolutions and the fully connected layer, included by
 * their kernel files when MCU_CMSIS_USE_MVE is set.
 *
 * The inner loops are inline assembly, because gcc 12 compiles the equivalent intrinsics with
 * spills and a predicate round trip per iteration:
 *   - DLSTP.8 / LETP: a tail-predicated low-overhead loop over the k values of a row, sixteen per
 *     iteration; the last iteration's inactive lanes are neither loaded nor added, so rows of any
 *     length need no scalar tail and no padding;
 *   - the weights are in the pair layout (mcu_kernels_cmsis_nn.h): VLD20 / VLD21 load 32 bytes of
 *     a pair and deinterleave them into sixteen values of each of its two rows (the pair is padded
 *     to whole vectors, so these unpredicated loads stay inside it; the tail-predicated VMLADAVA
 *     ignores the lanes past k);
 *   - one input vector (post-incremented load) feeds the rows of four output channels: two pair
 *     loads and four VMLADAVA (sixteen multiply-accumulates into a 32-bit scalar each) per sixteen
 *     values. VMLADAVA's accumulator must be an even register: gcc's "Te" constraint.
 * The four accumulators start at the (input-offset-folded) bias, are moved into one vector by two
 * VMOVs and requantized together (mcu_cmsis_mve_requantize_vec).
 *
 * Two pixels at a time, each weight vector into two VMLADAVA (eight accumulators: every even
 * register, named in the assembly; they start at zero, the first step's VMLADAV, and the bias is
 * added as a vector), when every shift is <= 0, out_c % 4 == 0 and the weights are in the plain
 * pair layout (the offset one, C lowered for the DSP ISA, goes one pixel at a time):
 *   - 1x1 convolutions with in_c 16, 32, 64, 128 or 256: the channel loop unrolled at compile time
 *     (mcu_cmsis_mve_dot2x4_k); in_c 8: the pixels widened once, every group of four channels and
 *     its requantization one assembly block (mcu_cmsis_mve_matvec2_k8); any other in_c > 16: a loop of sixteen values a step, the last
 *     in_c % 16 under a VCTP predicate, the whole channel loop and its requantization one assembly
 *     block (mcu_cmsis_mve_matvec2_any; 16 < in_c <= 32: one step and the rest, the inputs read at
 *     fixed offsets, mcu_cmsis_mve_matvec2_k32);
 *   - convolutions through im2col with k >= 16: the two pixels' columns one after the other in
 *     scratch, through the same loop (mcu_cmsis_mve_matvec2_any).
 */
#ifndef MCU_CMSIS_GEMM_MVE_H
#define MCU_CMSIS_GEMM_MVE_H

#include "mcu_cmsis_mve.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_MVE)

#if !defined(__OPTIMIZE__)
/* The offset pair layout's choice is an immediate of the assembly ("i", `offset` below): without
   optimization GCC propagates no constant into an inlined function, so this file's functions are
   optimized regardless. */
#pragma GCC push_options
#pragma GCC optimize("O1")
#endif

/** The output stage of a layer: offset and clamp. */
typedef struct {
    int32_t offset, act_min, act_max;
} mcu_cmsis_mve_out;

/** bias[0..3] + sum_{i<k} x[i] * w[j * k + i] for the rows j = 0..3 (k >= 1) of natural-layout
    weights (the LSTM's, SVDF's and batch matmul's), as one vector. */
static inline __attribute__((always_inline)) int32x4_t mcu_cmsis_mve_dot4_rows(const int8_t *x, const int8_t *w,
                                                                               int32_t k, const int32_t *bias)
{
    int32_t a0 = bias[0], a1 = bias[1], a2 = bias[2], a3 = bias[3];
    const int8_t *w1 = w + k;
    const int8_t *w2 = w1 + k;
    const int8_t *w3 = w2 + k;
    int32x4_t v;
    __asm__ volatile("dlstp.8 lr, %[k]\n"
                     "1:\n\t"
                     "vldrb.8 q0, [%[x]], #16\n\t"
                     "vldrb.8 q1, [%[w0]], #16\n\t"
                     "vmladava.s8 %[a0], q0, q1\n\t"
                     "vldrb.8 q2, [%[w1]], #16\n\t"
                     "vmladava.s8 %[a1], q0, q2\n\t"
                     "vldrb.8 q3, [%[w2]], #16\n\t"
                     "vmladava.s8 %[a2], q0, q3\n\t"
                     "vldrb.8 q1, [%[w3]], #16\n\t"
                     "vmladava.s8 %[a3], q0, q1\n\t"
                     "letp lr, 1b\n"
                     : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3), [x] "+r"(x), [w0] "+r"(w),
                       [w1] "+r"(w1), [w2] "+r"(w2), [w3] "+r"(w3)
                     : [k] "r"(k)
                     : "q0", "q1", "q2", "q3", "lr", "memory");
    __asm__("vmov %q[v][2], %q[v][0], %[a0], %[a2]\n\t"
            "vmov %q[v][3], %q[v][1], %[a1], %[a3]"
            : [v] "=&w"(v)
            : [a0] "r"(a0), [a1] "r"(a1), [a2] "r"(a2), [a3] "r"(a3));
    return v;
}

/** bias + sum_{i<k} x[i] * w[i] (k >= 1) of one natural-layout row (the batch matmul's). */
static inline __attribute__((always_inline)) int32_t mcu_cmsis_mve_dot1_row(const int8_t *x, const int8_t *w,
                                                                            int32_t k, int32_t bias)
{
    int32_t a = bias;
    __asm__ volatile("dlstp.8 lr, %[k]\n"
                     "1:\n\t"
                     "vldrb.8 q0, [%[x]], #16\n\t"
                     "vldrb.8 q1, [%[w]], #16\n\t"
                     "vmladava.s8 %[a], q0, q1\n\t"
                     "letp lr, 1b\n"
                     : [a] "+Te"(a), [x] "+r"(x), [w] "+r"(w)
                     : [k] "r"(k)
                     : "q0", "q1", "lr", "memory");
    return a;
}

/** Bytes from one weight pair to the next in the pair layout of rows of k values. */
static inline int32_t mcu_cmsis_mve_pair_stride(int32_t k)
{
    return 2 * MCU_CMSIS_PAIR_DEPTH(k);
}

/** bias[0..3] + sum_{i<k} x[i] * w_j[i] for the rows j = 0..3 (k >= 1) of the two weight pairs at w
    and w + stride, as one vector; offset (a compile-time constant): the offset pair layout, each
    pair's first row's sign bit added back to its second row (VSHR, VADD: pair_rows stores b - 1
    where a < 0; here and in the kernels below). */
static inline __attribute__((always_inline)) int32x4_t mcu_cmsis_mve_dot4(const int8_t *x, const int8_t *w,
                                                                          int32_t k, const int32_t *bias,
                                                                          const int offset)
{
    int32_t a0 = bias[0], a1 = bias[1], a2 = bias[2], a3 = bias[3];
    const int8_t *w1 = w + mcu_cmsis_mve_pair_stride(k);
    int32x4_t v;
    /* the first pair's next vectors are loaded one iteration ahead, so loads alternate with
       VMLADAVA (the last iteration's early load reads the second pair, inside the weights) */
    __asm__ volatile("vld20.8 {q1, q2}, [%[w0]]\n\t"
                     "vld21.8 {q1, q2}, [%[w0]]!\n\t"
                     ".if %c[off]\n\tvshr.u8 q5, q1, #7\n\tvadd.i8 q2, q2, q5\n\t.endif\n\t"
                     "dlstp.8 lr, %[k]\n"
                     "1:\n\t"
                     "vldrb.8 q0, [%[x]], #16\n\t"
                     "vld20.8 {q3, q4}, [%[w1]]\n\t"
                     "vmladava.s8 %[a0], q0, q1\n\t"
                     "vld21.8 {q3, q4}, [%[w1]]!\n\t"
                     "vmladava.s8 %[a1], q0, q2\n\t"
                     ".if %c[off]\n\tvshr.u8 q5, q3, #7\n\tvadd.i8 q4, q4, q5\n\t.endif\n\t"
                     "vld20.8 {q1, q2}, [%[w0]]\n\t"
                     "vmladava.s8 %[a2], q0, q3\n\t"
                     "vld21.8 {q1, q2}, [%[w0]]!\n\t"
                     "vmladava.s8 %[a3], q0, q4\n\t"
                     ".if %c[off]\n\tvshr.u8 q5, q1, #7\n\tvadd.i8 q2, q2, q5\n\t.endif\n\t"
                     "letp lr, 1b\n"
                     : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3), [x] "+r"(x), [w0] "+r"(w),
                       [w1] "+r"(w1)
                     : [k] "r"(k), [off] "i"(offset)
                     : "q0", "q1", "q2", "q3", "q4", "q5", "lr", "memory");
    __asm__("vmov %q[v][2], %q[v][0], %[a0], %[a2]\n\t"
            "vmov %q[v][3], %q[v][1], %[a1], %[a3]"
            : [v] "=&w"(v)
            : [a0] "r"(a0), [a1] "r"(a1), [a2] "r"(a2), [a3] "r"(a3));
    return v;
}

/** bias + sum_{i<k} x[i] * w_r[i] (k >= 1) for the row r (0 or 1) of the weight pair at w. */
static inline __attribute__((always_inline)) int32_t mcu_cmsis_mve_dot1(const int8_t *x, const int8_t *w, int32_t k,
                                                                        int32_t bias, int32_t r, const int offset)
{
    int32_t a = bias;
    if (r == 0) {
        __asm__ volatile("dlstp.8 lr, %[k]\n"
                         "1:\n\t"
                         "vldrb.8 q0, [%[x]], #16\n\t"
                         "vld20.8 {q1, q2}, [%[w]]\n\t"
                         "vld21.8 {q1, q2}, [%[w]]!\n\t"
                         "vmladava.s8 %[a], q0, q1\n\t"
                         "letp lr, 1b\n"
                         : [a] "+Te"(a), [x] "+r"(x), [w] "+r"(w)
                         : [k] "r"(k)
                         : "q0", "q1", "q2", "lr", "memory");
    } else {
        __asm__ volatile("dlstp.8 lr, %[k]\n"
                         "1:\n\t"
                         "vldrb.8 q0, [%[x]], #16\n\t"
                         "vld20.8 {q1, q2}, [%[w]]\n\t"
                         "vld21.8 {q1, q2}, [%[w]]!\n\t"
                         ".if %c[off]\n\tvshr.u8 q1, q1, #7\n\tvadd.i8 q2, q2, q1\n\t.endif\n\t"
                         "vmladava.s8 %[a], q0, q2\n\t"
                         "letp lr, 1b\n"
                         : [a] "+Te"(a), [x] "+r"(x), [w] "+r"(w)
                         : [k] "r"(k), [off] "i"(offset)
                         : "q0", "q1", "q2", "lr", "memory");
    }
    return a;
}

/** Four accumulators requantized when every shift is <= 0 (the usual case): the shift vector is
    then VRSHL's (negative) right shift as it is, and its sign bit the fix-up's mask. */
static inline __attribute__((always_inline)) int32x4_t mcu_cmsis_mve_requantize_right(int32x4_t x,
                                                                                      const int32_t *multiplier,
                                                                                      const int32_t *shift,
                                                                                      int32_t out_offset, int32x4_t lo,
                                                                                      int32x4_t hi)
{
    const int32x4_t s = vldrwq_s32(shift);
    x = vqrdmulhq_s32(x, vldrwq_s32(multiplier));
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, s), 31));
    x = vrshlq_s32(x, s);
    return vminq_s32(vmaxq_s32(vaddq_n_s32(x, out_offset), lo), hi);
}

/** 1 when every one of the n shifts is <= 0. */
static inline int mcu_cmsis_mve_shifts_right(const int32_t *shift, int32_t n)
{
    int32_t m = INT32_MIN; /* the largest shift, four at a time (tail-predicated: only the n read) */
    __asm__("wlstp.32 lr, %[n], 2f\n"
            "1:\n\t"
            "vldrw.32 q0, [%[s]], #16\n\t"
            "vmaxv.s32 %[m], q0\n\t"
            "letp lr, 1b\n"
            "2:\n"
            : [m] "+r"(m), [s] "+r"(shift)
            : [n] "r"(n)
            : "q0", "lr", "memory");
    return m <= 0;
}

/** out[j] = requantize(bias[j] + sum_{i<k} x[i] * w_j[i]) for the n rows w_j of the pair-layout
    weights (k >= 1); right_only (a compile-time constant): every shift is <= 0; layout (also): 1 for
    the offset pair layout. */
static inline __attribute__((always_inline)) void mcu_cmsis_mve_matvec(const int8_t *x, const int8_t *weights,
                                                                       int32_t k, int32_t n, const int32_t *bias,
                                                                       const int32_t *multiplier,
                                                                       const int32_t *shift,
                                                                       const mcu_cmsis_mve_out *o, int8_t *out,
                                                                       const int right_only, const int layout)
{
    const int32_t offset = o->offset, act_min = o->act_min, act_max = o->act_max;
    const int32x4_t lo = vdupq_n_s32(act_min), hi = vdupq_n_s32(act_max);
    const int32_t stride = mcu_cmsis_mve_pair_stride(k);
    int32_t j = 0;
    for (; j + 4 <= n; j += 4) {
        const int32x4_t acc = mcu_cmsis_mve_dot4(x, weights + (j >> 1) * stride, k, bias + j, layout);
        if (right_only) {
            vstrbq_s32(out + j, mcu_cmsis_mve_requantize_right(acc, multiplier + j, shift + j, offset, lo, hi));
        } else {
            vstrbq_s32(out + j, mcu_cmsis_mve_requantize_vec(acc, multiplier + j, shift + j, offset, act_min, act_max));
        }
    }
    for (; j < n; j++) {
        const int32_t acc = mcu_cmsis_mve_dot1(x, weights + (j >> 1) * stride, k, bias[j], j & 1, layout);
        out[j] = mcu_cmsis_requantize_s8(acc, multiplier[j], shift[j], offset, act_min, act_max);
    }
}

/** n bytes from src to dst (n >= 0), sixteen at a time. */
static inline __attribute__((always_inline)) void mcu_cmsis_mve_copy(int8_t *dst, const int8_t *src, int32_t n)
{
    __asm__ volatile("wlstp.8 lr, %[n], 2f\n"
                     "1:\n\t"
                     "vldrb.8 q0, [%[s]], #16\n\t"
                     "vstrb.8 q0, [%[d]], #16\n\t"
                     "letp lr, 1b\n"
                     "2:\n"
                     : [s] "+r"(src), [d] "+r"(dst)
                     : [n] "r"(n)
                     : "q0", "lr", "memory");
}

/** n bytes of value v at dst (n >= 0), sixteen at a time. */
static inline __attribute__((always_inline)) void mcu_cmsis_mve_fill(int8_t *dst, int32_t v, int32_t n)
{
    __asm__ volatile("vdup.8 q0, %[v]\n\t"
                     "wlstp.8 lr, %[n], 2f\n"
                     "1:\n\t"
                     "vstrb.8 q0, [%[d]], #16\n\t"
                     "letp lr, 1b\n"
                     "2:\n"
                     : [d] "+r"(dst)
                     : [n] "r"(n), [v] "r"(v)
                     : "q0", "lr", "memory");
}

/** The receptive field of output pixel (oy, ox) as one column of k_h * k_w * in_c int8 values in
    [k_h][k_w][in_c] order; padded taps hold the input zero point (adds nothing: the bias is
    folded). A filter row wholly inside the input (no dilation across it) is one copy. */
static inline __attribute__((always_inline)) void mcu_cmsis_mve_im2col(const mcu_cmsis_conv_params *p,
                                                                       const int8_t *input, int32_t oy, int32_t ox,
                                                                       int8_t *col)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c;
    const int32_t k_h = p->k_h, k_w = p->k_w, dil_h = p->dil_h, dil_w = p->dil_w;
    const int32_t pad_value = -p->input_offset;
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    const int32_t row_len = k_w * in_c;
    const int row_inside = ix0 >= 0 && ix0 + (k_w - 1) * dil_w < in_w;
    if (row_inside && dil_w == 1 && iy0 >= 0 && iy0 + (k_h - 1) * dil_h < in_h) { /* inside: a copy a row */
        const int8_t *src = input + (iy0 * in_w + ix0) * in_c;
        for (int32_t ky = 0; ky < k_h; ky++, col += row_len, src += dil_h * in_w * in_c) {
            mcu_cmsis_mve_copy(col, src, row_len);
        }
        return;
    }
    for (int32_t ky = 0; ky < k_h; ky++, col += row_len) {
        const int32_t iy = iy0 + ky * dil_h;
        if (iy < 0 || iy >= in_h) {
            mcu_cmsis_mve_fill(col, pad_value, row_len);
            continue;
        }
        const int8_t *src = input + (iy * in_w + ix0) * in_c;
        if (row_inside && dil_w == 1) {
            mcu_cmsis_mve_copy(col, src, row_len);
            continue;
        }
        for (int32_t kx = 0; kx < k_w; kx++) {
            const int32_t ix = ix0 + kx * dil_w;
            if (ix < 0 || ix >= in_w) {
                mcu_cmsis_mve_fill(col + kx * in_c, pad_value, in_c);
            } else {
                mcu_cmsis_mve_copy(col + kx * in_c, src + kx * dil_w * in_c, in_c);
            }
        }
    }
}

/** The columns of two output pixels of one row whose windows lie wholly inside the input (no
    dilation across a filter row): per filter row, row_len bytes from src to col and from src +
    pix_step to col + k (src walks row_step a filter row). */
static inline __attribute__((always_inline)) void mcu_cmsis_mve_im2col_pair(const int8_t *src, int32_t row_step,
                                                                            int32_t pix_step, int32_t k_h,
                                                                            int32_t row_len, int32_t k, int8_t *col)
{
    for (int32_t ky = 0; ky < k_h; ky++, src += row_step, col += row_len) {
        const int8_t *s0 = src, *s1 = src + pix_step;
        int8_t *c0 = col, *c1 = col + k;
        __asm__ volatile("dlstp.8 lr, %[n]\n" /* row_len >= 1 */
                         "1:\n\t"
                         "vldrb.8 q0, [%[s0]], #16\n\t"
                         "vldrb.8 q1, [%[s1]], #16\n\t"
                         "vstrb.8 q0, [%[c0]], #16\n\t"
                         "vstrb.8 q1, [%[c1]], #16\n\t"
                         "letp lr, 1b\n"
                         : [s0] "+r"(s0), [s1] "+r"(s1), [c0] "+r"(c0), [c1] "+r"(c1)
                         : [n] "r"(row_len)
                         : "q0", "q1", "lr", "memory");
    }
}

/** One filter row of a window (no dilation across it) whose first tap is input column ix of the row
    at `row`: the taps left of the input and right of it filled with pad, those inside copied. */
static inline __attribute__((always_inline)) void mcu_cmsis_mve_im2col_row(int8_t *col, const int8_t *row, int32_t ix,
                                                                           int32_t in_w, int32_t k_w, int32_t in_c,
                                                                           int32_t pad)
{
    const int32_t a = ix >= 0 ? 0 : -ix < k_w ? -ix : k_w;
    const int32_t b = in_w - ix >= k_w ? k_w : in_w - ix > a ? in_w - ix : a;
    mcu_cmsis_mve_fill(col, pad, a * in_c);
    mcu_cmsis_mve_copy(col + a * in_c, row + (ix + a) * in_c, (b - a) * in_c);
    mcu_cmsis_mve_fill(col + b * in_c, pad, (k_w - b) * in_c);
}

/** The column of the window whose first tap is input (iy0, ix0) (no dilation across a filter row):
    per filter row the taps left of the input, inside and right of it as a fill, a copy and a fill. */
static __attribute__((noinline, unused)) void mcu_cmsis_mve_im2col_rows(const mcu_cmsis_conv_params *p,
                                                                       const int8_t *input, int32_t iy0, int32_t ix0,
                                                                       int8_t *col)
{
    const int32_t in_w = p->in_w, in_c = p->in_c, k_w = p->k_w, row_len = k_w * in_c, pad = -p->input_offset;
    for (int32_t ky = 0, iy = iy0; ky < p->k_h; ky++, iy += p->dil_h, col += row_len) {
        if ((uint32_t)iy >= (uint32_t)p->in_h) {
            mcu_cmsis_mve_fill(col, pad, row_len);
        } else {
            mcu_cmsis_mve_im2col_row(col, input + iy * in_w * in_c, ix0, in_w, k_w, in_c, pad);
        }
    }
}

/** The columns of two output pixels of one row (no dilation across a filter row) whose first taps
    are input columns ix and ix + step_x, at col and col + k, the padding filled. */
static __attribute__((noinline, unused)) void mcu_cmsis_mve_im2col_pair_border(
    const mcu_cmsis_conv_params *p, const int8_t *input, int32_t iy0, int32_t ix, int32_t step_x, int32_t k,
    int8_t *col)
{
    const int32_t in_w = p->in_w, in_c = p->in_c, k_w = p->k_w, row_len = k_w * in_c, pad = -p->input_offset;
    for (int32_t ky = 0, iy = iy0; ky < p->k_h; ky++, iy += p->dil_h, col += row_len) {
        if ((uint32_t)iy >= (uint32_t)p->in_h) {
            mcu_cmsis_mve_fill(col, pad, row_len);
            mcu_cmsis_mve_fill(col + k, pad, row_len);
            continue;
        }
        const int8_t *row = input + iy * in_w * in_c;
        mcu_cmsis_mve_im2col_row(col, row, ix, in_w, k_w, in_c, pad);
        mcu_cmsis_mve_im2col_row(col + k, row, ix + step_x, in_w, k_w, in_c, pad);
    }
}

/** mcu_cmsis_mve_im2col, not inlined: the one-pixel paths' copy. */
static __attribute__((noinline)) void mcu_cmsis_mve_im2col_call(const mcu_cmsis_conv_params *p, const int8_t *input,
                                                                int32_t oy, int32_t ox, int8_t *col)
{
    mcu_cmsis_mve_im2col(p, input, oy, ox, col);
}

/** Convolution through im2col, output pixels [first, end) (raster order) one at a time: its column
    (in scratch) times the [out_c][k] weights; pixel n written at output + (n - first) * out_c. */
static inline __attribute__((always_inline)) void mcu_cmsis_conv2d_mve_pixels(
    const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
    const int32_t *multiplier, const int32_t *shift, int8_t *scratch, int8_t *output, int32_t first, int32_t end,
    const int right_only, const int offset)
{
    const int32_t k = p->k_h * p->k_w * p->in_c;
    const int32_t out_w = p->out_w, out_c = p->out_c;
    const mcu_cmsis_mve_out o = {p->output_offset, p->act_min, p->act_max};
    const int32_t y0 = first / out_w, y1 = (end - 1) / out_w; /* rows [y0, y1], the first and last partly */
    for (int32_t oy = y0; oy <= y1; oy++) {
        const int32_t x1 = oy == y1 ? end - y1 * out_w : out_w;
        for (int32_t ox = oy == y0 ? first - y0 * out_w : 0; ox < x1; ox++, output += out_c) {
            mcu_cmsis_mve_im2col_call(p, input, oy, ox, scratch);
            mcu_cmsis_mve_matvec(scratch, weights, k, out_c, bias, multiplier, shift, &o, output, right_only, offset);
        }
    }
}

/** Two pixels x four output channels with k (16, 32, 64, 128 or 256: a compile-time constant) fully
    unrolled: bias[0..3] + x0 . w_j and bias[0..3] + x1 . w_j for the rows w_j of the weight pairs at
    w and w + stride, as two vectors. Eight accumulators (every even register but SP) take each
    deinterleaved weight vector into two VMLADAVA; the inputs are read by immediate offsets from x0
    and x1, the pairs by post-incremented VLD2. */
static inline __attribute__((always_inline)) void mcu_cmsis_mve_dot2x4_k(const int8_t *x0, const int8_t *x1,
                                                                         const int8_t *w, const int32_t *bias,
                                                                         int32x4_t *out0, int32x4_t *out1,
                                                                         const int32_t k)
{
    /* the accumulators in the even registers VMLADAVA needs, each pixel's four starting at zero (the
       first step's VMLADAV: mcu_mve_mla; the bias added as a vector after); b walks the second pair.
       Software pipelined: the next sixteen values' inputs and first pair
       are loaded among this step's VMLADAVA, so loads and multiply-accumulates alternate; the
       results are moved into q2 / q3 as the last step completes them */
    register int32x4_t r0 __asm__("q2"), r1 __asm__("q3"); /* the results: the first pair's registers */
    const int8_t *b; /* the second pair's weights */
    /* HALF: a step's second pair loaded among the first pair's four VMLADAVA */
#define MCU_MVE_DOT2X4_K_HALF \
    "vld20.8 {q4, q5}, [%[b]]\n\t" \
    "mcu_mve_mla r0, q0, q2\n\t" \
    "vld21.8 {q4, q5}, [%[b]]!\n\t" \
    "mcu_mve_mla r8, q1, q2\n\t" \
    "mcu_mve_mla r2, q0, q3\n\t" \
    "mcu_mve_mla r10, q1, q3\n\t"
#define MCU_MVE_DOT2X4_K_ASM \
    ".macro mcu_mve_mla rd, qa, qb\n\t" \
    ".if mcu_mve_acc\n\tvmladava.s8 \\rd, \\qa, \\qb\n\t.else\n\tvmladav.s8 \\rd, \\qa, \\qb\n\t.endif\n\t" \
    ".endm\n\t" \
    ".set mcu_mve_acc, 0\n\t" \
    "add %[b], %[w], #%c[stride]\n\t" \
    "vldrb.8 q0, [%[x0]]\n\t" \
    "vld20.8 {q2, q3}, [%[w]]\n\t" \
    "vldrb.8 q1, [%[x1]]\n\t" \
    "vld21.8 {q2, q3}, [%[w]]!\n\t" \
    ".set mcu_mve_off, 16\n\t" \
    ".rept (%c[n] - 1)\n\t" \
    MCU_MVE_DOT2X4_K_HALF \
    "vld20.8 {q2, q3}, [%[w]]\n\t" \
    "mcu_mve_mla r4, q0, q4\n\t" \
    "vld21.8 {q2, q3}, [%[w]]!\n\t" \
    "mcu_mve_mla r12, q1, q4\n\t" \
    "mcu_mve_mla r6, q0, q5\n\t" \
    ".if %c[n] > 8\n\tvldrb.8 q0, [%[x0], #16]!\n\t.else\n\tvldrb.8 q0, [%[x0], #mcu_mve_off]\n\t.endif\n\t" \
    "mcu_mve_mla lr, q1, q5\n\t" \
    ".if %c[n] > 8\n\tvldrb.8 q1, [%[x1], #16]!\n\t.else\n\tvldrb.8 q1, [%[x1], #mcu_mve_off]\n\t.endif\n\t" \
    ".set mcu_mve_off, mcu_mve_off + 16\n\t" \
    ".set mcu_mve_acc, 1\n\t" \
    ".endr\n\t" \
    /* the last sixteen values, the results moved into q2 / q3 as they complete */ \
    MCU_MVE_DOT2X4_K_HALF \
    "mcu_mve_mla r4, q0, q4\n\t" \
    "vmov q2[2], q2[0], r0, r4\n\t" \
    "mcu_mve_mla r12, q1, q4\n\t" \
    "vmov q3[2], q3[0], r8, r12\n\t" \
    "mcu_mve_mla r6, q0, q5\n\t" \
    "vmov q2[3], q2[1], r2, r6\n\t" \
    "mcu_mve_mla lr, q1, q5\n\t" \
    "vmov q3[3], q3[1], r10, lr\n\t" \
    /* the pointers as they came (inputs: distinct registers, distinct values; the \
    inputs walked by writeback past the immediate offsets' reach, k = 256) */ \
    "sub %[w], %[w], #(32 * %c[n])\n\t" \
    ".if %c[n] > 8\n\t" \
    "sub %[x0], %[x0], #(16 * %c[n] - 16)\n\t" \
    "sub %[x1], %[x1], #(16 * %c[n] - 16)\n\t" \
    ".endif\n\t" \
    ".purgem mcu_mve_mla\n\t"
    __asm__ volatile(MCU_MVE_DOT2X4_K_ASM
                     : "=&w"(r0), "=&w"(r1), [b] "=&r"(b)
                     : [w] "r"(w), [x0] "r"(x0), [x1] "r"(x1), [n] "i"(k / 16), [stride] "i"(2 * MCU_CMSIS_PAIR_DEPTH(k))
                     : "r0", "r2", "r4", "r6", "r8", "r10", "r12", "lr", "q0", "q1", "q4", "q5", "memory");
#undef MCU_MVE_DOT2X4_K_HALF
#undef MCU_MVE_DOT2X4_K_ASM
    const int32x4_t bv = vldrwq_s32(bias);
    *out0 = vaddq_s32(r0, bv);
    *out1 = vaddq_s32(r1, bv);
}

/** The layer's constants mcu_cmsis_mve_matvec2_any reads, at these word offsets: 0 bias, 1
    multiplier, 2 shift, 3 the groups of four rows (n / 4), 4 out_offset, 5 k - 16, 6 n (from one
    pixel's outputs to the other's), 7 the weights, 8 the pair stride, 9 / 10 act_min / act_max. */
static inline void mcu_cmsis_mve_any_layer(int32_t st[11], const int8_t *w, int32_t k, int32_t n,
                                           const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                           const mcu_cmsis_mve_out *o)
{
    st[0] = (int32_t)(intptr_t)bias, st[1] = (int32_t)(intptr_t)multiplier, st[2] = (int32_t)(intptr_t)shift;
    st[3] = n / 4, st[4] = o->offset, st[5] = k - 16, st[6] = n;
    st[7] = (int32_t)(intptr_t)w, st[8] = mcu_cmsis_mve_pair_stride(k), st[9] = o->act_min, st[10] = o->act_max;
}

/* The parts of the two-pixel assemblies below (mcu_cmsis_mve_matvec2_any / _k8), which keep their
   state in a frame on the stack, words 0-5 written back per group of four rows: 0 bias, 1
   multiplier, 2 / 3 the outputs (VSTRB.32 takes a low register: r4, r6), 4 shift, 5 groups left, 6
   out_offset; 7 / 8 the columns and 9 k - 16 to restart them. w0 / w1 come in as out0 / st
   (mcu_cmsis_mve_any_layer) and leave as the first two weight pairs; q6 / q7: the clamp. */
#define MCU_MVE_MATVEC2_FRAME \
    "sub sp, sp, #40\n\t" \
    "ldm %[w1], {r0, r2, r8, r10, r12}\n\t" \
    "ldr r4, [%[w1], #24]\n\t" \
    "add r6, %[w0], r4\n\t" \
    "mov r4, %[w0]\n\t" \
    "stm sp, {r0, r2, r4, r6, r8, r10, r12}\n\t" \
    "strd %[x0], %[x1], [sp, #28]\n\t" \
    "ldr %[n], [%[w1], #20]\n\t" \
    "str %[n], [sp, #36]\n\t" \
    "ldrd r0, r2, [%[w1], #36]\n\t" \
    "vdup.32 q6, r0\n\t" \
    "vdup.32 q7, r2\n\t" \
    "ldrd %[w0], lr, [%[w1], #28]\n\t" \
    "add %[w1], %[w0], lr\n"
/* the fix-up and rounding shift of one accumulator vector (q4: the shifts, q5: scratch) */
#define MCU_MVE_MATVEC2_SHIFT(q) \
    "vand q5, " q ", q4\n\t" \
    "vshr.s32 q5, q5, #31\n\t" \
    "vqadd.s32 " q ", " q ", q5\n\t" \
    "vrshl.s32 " q ", " q ", q4\n\t"
/* a group's eight accumulators (r0 / r2 / r4 / r6 the first pixel's rows 0-3, r8 / r10 / r12 / lr
   the second's) plus the bias, requantized and stored; the flags: groups left */
#define MCU_MVE_MATVEC2_REQUANTIZE \
    "vmov q2[2], q2[0], r0, r4\n\t" \
    "vmov q2[3], q2[1], r2, r6\n\t" \
    "vmov q3[2], q3[0], r8, r12\n\t" \
    "vmov q3[3], q3[1], r10, lr\n\t" \
    "ldm sp, {r0, r2, r4, r6, r8, r10, r12}\n\t" \
    "vldrw.32 q4, [r0], #16\n\t" \
    "vadd.i32 q2, q2, q4\n\t" \
    "vadd.i32 q3, q3, q4\n\t" \
    "vldrw.32 q4, [r2], #16\n\t" \
    "vqrdmulh.s32 q2, q2, q4\n\t" \
    "vqrdmulh.s32 q3, q3, q4\n\t" \
    "vldrw.32 q4, [r8], #16\n\t" \
    MCU_MVE_MATVEC2_SHIFT("q2") \
    MCU_MVE_MATVEC2_SHIFT("q3") \
    "vadd.i32 q2, q2, r12\n\t" \
    "vadd.i32 q3, q3, r12\n\t" \
    "vmax.s32 q2, q2, q6\n\t" \
    "vmax.s32 q3, q3, q6\n\t" \
    "vmin.s32 q2, q2, q7\n\t" \
    "vmin.s32 q3, q3, q7\n\t" \
    "vstrb.32 q2, [r4], #4\n\t" \
    "vstrb.32 q3, [r6], #4\n\t" \
    "subs r10, r10, #1\n\t" \
    "stm sp, {r0, r2, r4, r6, r8, r10}\n\t"
#define MCU_MVE_MATVEC2_CLOBBERS \
    "r0", "r2", "r4", "r6", "r8", "r10", "r12", "lr", "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory", "cc"

/** Two pixels' outputs out0[j], out0[n + j] for the first 4 * (n / 4) rows (n >= 4, every shift <=
    0, any k >= 16: a run-time value; st: mcu_cmsis_mve_any_layer), the whole channel loop one
    assembly block that keeps its state on the stack (every register is taken in the k loop): per
    group of four rows a loop of sixteen values a step (eight accumulators, the first step's VMLADAV
    starts them at zero, k % 16 values past the steps loaded under a VCTP predicate, nothing read past
    either pixel), then the bias added and the two vectors requantized as in
    mcu_cmsis_mve_requantize_right. A function of its own: four arguments, nothing live around it. */
static __attribute__((noinline)) void mcu_cmsis_mve_matvec2_any(const int8_t *x0, const int8_t *x1, int8_t *out0,
                                                                const int32_t *st)
{
    int32_t left; /* the values left after the first step */
#define MCU_MVE_MATVEC2_ANY_STEP(acc) \
    "vld20.8 {q2, q3}, [%[w0]]\n\t" \
    "vld21.8 {q2, q3}, [%[w0]]!\n\t" \
    "vld20.8 {q4, q5}, [%[w1]]\n\t" \
    "vmladav" acc ".s8 r0, q0, q2\n\t" \
    "vld21.8 {q4, q5}, [%[w1]]!\n\t" \
    "vmladav" acc ".s8 r8, q1, q2\n\t" \
    "vmladav" acc ".s8 r2, q0, q3\n\t" \
    "vmladav" acc ".s8 r10, q1, q3\n\t" \
    "vmladav" acc ".s8 r4, q0, q4\n\t" \
    "vmladav" acc ".s8 r12, q1, q4\n\t" \
    "vmladav" acc ".s8 r6, q0, q5\n\t" \
    "vmladav" acc ".s8 lr, q1, q5\n\t"
    __asm__ volatile(MCU_MVE_MATVEC2_FRAME
                     "and r0, %[n], #15\n\t" /* the k % 16 values past the steps: P0 for every group */
                     "vctp.8 r0\n"
                     "4:\n\t"
                     "vldrb.8 q0, [%[x0]], #16\n\t"
                     "vldrb.8 q1, [%[x1]], #16\n\t"
                     MCU_MVE_MATVEC2_ANY_STEP("")
                     "subs %[n], %[n], #16\n\t"
                     "blt 2f\n"
                     "1:\n\t"
                     "vldrb.8 q0, [%[x0]], #16\n\t"
                     "vldrb.8 q1, [%[x1]], #16\n\t"
                     MCU_MVE_MATVEC2_ANY_STEP("a")
                     "subs %[n], %[n], #16\n\t"
                     "bge 1b\n"
                     "2:\n\t"
                     "adds %[n], %[n], #16\n\t" /* k % 16 */
                     "beq 3f\n\t"
                     "vpstt\n\t"
                     "vldrbt.8 q0, [%[x0]]\n\t"
                     "vldrbt.8 q1, [%[x1]]\n\t"
                     MCU_MVE_MATVEC2_ANY_STEP("a")
                     "3:\n\t"
                     MCU_MVE_MATVEC2_REQUANTIZE
                     /* the next group: its pairs follow the second pair (the pointers walked one pair each) */
                     "sub lr, %[w1], %[w0]\n\t"
                     "mov %[w0], %[w1]\n\t"
                     "add %[w1], %[w1], lr\n\t"
                     "ldrd %[x0], %[x1], [sp, #28]\n\t"
                     "ldr %[n], [sp, #36]\n\t"
                     "bne 4b\n\t"
                     "add sp, sp, #40"
                     : [x0] "+r"(x0), [x1] "+r"(x1), [w0] "+r"(out0), [w1] "+r"(st), [n] "=&r"(left)
                     :
                     : MCU_MVE_MATVEC2_CLOBBERS);
}

/** mcu_cmsis_mve_matvec2_any for k = 8: the two pixels widened once (VLDRB.S16, into q0 / q1 for
    every group), a pair's sixteen bytes split into its two rows as int16 by VMOVLB / VMOVLT,
    VMLADAV.S16 over eight lanes. */
static __attribute__((noinline)) void mcu_cmsis_mve_matvec2_k8(const int8_t *x0, const int8_t *x1, int8_t *out0,
                                                               const int32_t *st)
{
    int32_t left; /* unused here: the frame's word 9 */
    __asm__ volatile(MCU_MVE_MATVEC2_FRAME
                     "vldrb.s16 q0, [%[x0]]\n\t"
                     "vldrb.s16 q1, [%[x1]]\n"
                     "4:\n\t"
                     "vldrb.8 q2, [%[w0]], #32\n\t"
                     "vmovlb.s8 q3, q2\n\t"
                     "vmovlt.s8 q2, q2\n\t"
                     "vldrb.8 q4, [%[w0]], #32\n\t"
                     "vmladav.s16 r0, q0, q3\n\t"
                     "vmladav.s16 r8, q1, q3\n\t"
                     "vmovlb.s8 q5, q4\n\t"
                     "vmladav.s16 r2, q0, q2\n\t"
                     "vmladav.s16 r10, q1, q2\n\t"
                     "vmovlt.s8 q4, q4\n\t"
                     "vmladav.s16 r4, q0, q5\n\t"
                     "vmladav.s16 r12, q1, q5\n\t"
                     "vmladav.s16 r6, q0, q4\n\t"
                     "vmladav.s16 lr, q1, q4\n\t"
                     MCU_MVE_MATVEC2_REQUANTIZE
                     "bne 4b\n\t"
                     "add sp, sp, #40"
                     /* VLDRB.S16 takes a low base register: "l" for the pixels */
                     : [x0] "+l"(x0), [x1] "+l"(x1), [w0] "+r"(out0), [w1] "+r"(st), [n] "=&r"(left)
                     :
                     : MCU_MVE_MATVEC2_CLOBBERS);
}

/** mcu_cmsis_mve_matvec2_any for 16 < k <= 32: per group one step of sixteen values and one of the
    k - 16 left (under the predicate set once), the inputs read at fixed offsets (nothing restarted). */
static __attribute__((noinline)) void mcu_cmsis_mve_matvec2_k32(const int8_t *x0, const int8_t *x1, int8_t *out0,
                                                                const int32_t *st)
{
    int32_t left; /* k - 16 */
    __asm__ volatile(MCU_MVE_MATVEC2_FRAME
                     "vctp.8 %[n]\n"
                     "4:\n\t"
                     "vldrb.8 q0, [%[x0]]\n\t"
                     "vldrb.8 q1, [%[x1]]\n\t"
                     MCU_MVE_MATVEC2_ANY_STEP("")
                     "vpstt\n\t"
                     "vldrbt.8 q0, [%[x0], #16]\n\t"
                     "vldrbt.8 q1, [%[x1], #16]\n\t"
                     MCU_MVE_MATVEC2_ANY_STEP("a")
                     MCU_MVE_MATVEC2_REQUANTIZE
                     /* the next group: its pairs follow the second pair (the pointers walked one pair each) */
                     "sub lr, %[w1], %[w0]\n\t"
                     "mov %[w0], %[w1]\n\t"
                     "add %[w1], %[w1], lr\n\t"
                     "bne 4b\n\t"
                     "add sp, sp, #40"
                     : [x0] "+r"(x0), [x1] "+r"(x1), [w0] "+r"(out0), [w1] "+r"(st), [n] "=&r"(left)
                     :
                     : MCU_MVE_MATVEC2_CLOBBERS);
}
#undef MCU_MVE_MATVEC2_ANY_STEP
#undef MCU_MVE_MATVEC2_FRAME
#undef MCU_MVE_MATVEC2_SHIFT
#undef MCU_MVE_MATVEC2_REQUANTIZE
#undef MCU_MVE_MATVEC2_CLOBBERS

/** The last n (1 to 3) rows of two pixels' outputs, a weight pair at a time from w: per sixteen
    values two inputs, one pair (VLD20 / VLD21) and four VMLADAVA in a tail-predicated loop. */
static __attribute__((noinline)) void mcu_cmsis_mve_rows_tail(const int8_t *x0, const int8_t *x1, const int8_t *w,
                                                              int32_t k, int32_t n, const int32_t *bias,
                                                              const int32_t *multiplier, const int32_t *shift,
                                                              const mcu_cmsis_mve_out *o, int8_t *out0, int8_t *out1)
{
    for (int32_t j = 0; j < n; j += 2, w += mcu_cmsis_mve_pair_stride(k)) {
        const int8_t *p0 = x0, *p1 = x1, *pw = w;
        int32_t a0 = 0, a1 = 0, b0 = 0, b1 = 0; /* pixel 0 rows j, j + 1; pixel 1 */
        __asm__ volatile("dlstp.8 lr, %[k]\n"
                         "1:\n\t"
                         "vldrb.8 q0, [%[x0]], #16\n\t"
                         "vld20.8 {q2, q3}, [%[w]]\n\t"
                         "vldrb.8 q1, [%[x1]], #16\n\t"
                         "vld21.8 {q2, q3}, [%[w]]!\n\t"
                         "vmladava.s8 %[a0], q0, q2\n\t"
                         "vmladava.s8 %[b0], q1, q2\n\t"
                         "vmladava.s8 %[a1], q0, q3\n\t"
                         "vmladava.s8 %[b1], q1, q3\n\t"
                         "letp lr, 1b\n"
                         : [a0] "+Te"(a0), [a1] "+Te"(a1), [b0] "+Te"(b0), [b1] "+Te"(b1), [x0] "+r"(p0),
                           [x1] "+r"(p1), [w] "+r"(pw)
                         : [k] "r"(k)
                         : "q0", "q1", "q2", "q3", "lr", "memory");
        const int32_t r = j + 1 < n ? j + 1 : j; /* lanes 1 and 3: row j + 1, or (not stored) row j again */
        const int32_t m[4] = {multiplier[j], multiplier[r], multiplier[j], multiplier[r]};
        const int32_t e[4] = {shift[j], shift[r], shift[j], shift[r]};
        const int32_t acc[4] = {a0 + bias[j], a1 + bias[r], b0 + bias[j], b1 + bias[r]};
        const int32x4_t v = mcu_cmsis_mve_requantize_vec(vldrwq_s32(acc), m, e, o->offset, o->act_min, o->act_max);
        out0[j] = (int8_t)vgetq_lane_s32(v, 0);
        out1[j] = (int8_t)vgetq_lane_s32(v, 2);
        if (r > j) {
            out0[r] = (int8_t)vgetq_lane_s32(v, 1);
            out1[r] = (int8_t)vgetq_lane_s32(v, 3);
        }
    }
}

/** Two pixels' outputs (every shift <= 0; n a multiple of 4 and k a compile-time constant of
    mcu_cmsis_mve_dot2x4_k, or with `any` (the layer's mcu_cmsis_mve_any_layer, else NULL: a
    compile-time constant) any n and any k >= 16: mcu_cmsis_mve_matvec2_any (_k8, _k32), the last n % 4 rows by
    mcu_cmsis_mve_rows_tail; out1 is out0 + n). */
static inline __attribute__((always_inline)) void mcu_cmsis_mve_matvec2_k(const int8_t *x0, const int8_t *x1,
                                                                          const int8_t *weights, int32_t n,
                                                                          const int32_t *bias,
                                                                          const int32_t *multiplier,
                                                                          const int32_t *shift, int32_t out_offset,
                                                                          int32x4_t lo, int32x4_t hi, int8_t *out0,
                                                                          int8_t *out1, const int32_t k,
                                                                          const int32_t *any)
{
    const int32_t stride = mcu_cmsis_mve_pair_stride(k);
    int32_t j = 0;
    if (any != NULL) {
        j = n & ~3;
        if (j > 0 && __builtin_constant_p(k) && k == 8) {
            mcu_cmsis_mve_matvec2_k8(x0, x1, out0, any);
        } else if (j > 0 && (uint32_t)(k - 17) < 16) { /* 16 < k <= 32 */
            mcu_cmsis_mve_matvec2_k32(x0, x1, out0, any);
        } else if (j > 0) {
            mcu_cmsis_mve_matvec2_any(x0, x1, out0, any);
        }
        weights += (j >> 1) * stride;
    }
    for (; !any && j + 4 <= n; j += 4, weights += 2 * stride) {
        int32x4_t a0, a1;
        mcu_cmsis_mve_dot2x4_k(x0, x1, weights, bias + j, &a0, &a1, k);
        const int32x4_t s = vldrwq_s32(shift + j), m = vldrwq_s32(multiplier + j);
        a0 = vqrdmulhq_s32(a0, m);
        a1 = vqrdmulhq_s32(a1, m);
        a0 = vrshlq_s32(vqaddq_s32(a0, vshrq_n_s32(vandq_s32(a0, s), 31)), s);
        a1 = vrshlq_s32(vqaddq_s32(a1, vshrq_n_s32(vandq_s32(a1, s), 31)), s);
        vstrbq_s32(out0 + j, vminq_s32(vmaxq_s32(vaddq_n_s32(a0, out_offset), lo), hi));
        vstrbq_s32(out1 + j, vminq_s32(vmaxq_s32(vaddq_n_s32(a1, out_offset), lo), hi));
    }
    if (any && j < n) {
        const mcu_cmsis_mve_out o = {out_offset, vgetq_lane_s32(lo, 0), vgetq_lane_s32(hi, 0)};
        mcu_cmsis_mve_rows_tail(x0, x1, weights, k, n - j, bias + j, multiplier + j, shift + j, &o, out0 + j,
                                out1 + j);
    }
}

#if !defined(__NO_INLINE__)
/** Convolution of output pixels [first, end), two at a time: their columns one after the other in
    scratch (k >= 16, the plain layout, every shift <= 0) through
    mcu_cmsis_mve_matvec2_any; an odd last pixel alone. */
static __attribute__((noinline)) void mcu_cmsis_conv2d_mve_pairs(const mcu_cmsis_conv_params *p, const int8_t *input,
                                                                 const int8_t *weights, const int32_t *bias,
                                                                 const int32_t *multiplier, const int32_t *shift,
                                                                 int8_t *scratch, int8_t *output, int32_t first,
                                                                 int32_t end)
{
    const int32_t k = p->k_h * p->k_w * p->in_c;
    const int32_t out_w = p->out_w, out_c = p->out_c;
    const mcu_cmsis_mve_out o = {p->output_offset, p->act_min, p->act_max};
    const int32x4_t lo = vdupq_n_s32(o.act_min), hi = vdupq_n_s32(o.act_max);
    int32_t st[11];
    mcu_cmsis_mve_any_layer(st, weights, k, out_c, bias, multiplier, shift, &o);
    int32_t oy = first / out_w, ox = first % out_w; /* pixel n */
    int32_t n = first;
    /* both windows inside the input: ix0 in [0, ix_end), iy0 in [0, iy_end) */
    const int32_t in_c = p->in_c, sw = p->stride_w, sh = p->stride_h;
    const int32_t row_len = p->k_w * in_c, row_step = p->dil_h * p->in_w * in_c;
    const int32_t ix_last = p->in_w - sw - p->k_w + 1, iy_last = p->in_h - (p->k_h - 1) * p->dil_h;
    const uint32_t ix_end = p->dil_w == 1 && ix_last > 0 ? (uint32_t)ix_last : 0;
    const uint32_t iy_end = iy_last > 0 ? (uint32_t)iy_last : 0;
    for (; n + 2 <= end; n += 2, output += 2 * out_c) {
        const int32_t iy0 = oy * sh - p->pad_top, ix0 = ox * sw - p->pad_left;
        if (ox + 1 < out_w && (uint32_t)ix0 < ix_end && (uint32_t)iy0 < iy_end) {
            mcu_cmsis_mve_im2col_pair(input + (iy0 * p->in_w + ix0) * in_c, row_step, sw * in_c, p->k_h, row_len, k,
                                      scratch);
        } else if (ox + 1 < out_w && p->dil_w == 1) {
            mcu_cmsis_mve_im2col_pair_border(p, input, iy0, ix0, sw, k, scratch);
        } else if (p->dil_w == 1) { /* across two output rows */
            mcu_cmsis_mve_im2col_rows(p, input, iy0, ix0, scratch);
            mcu_cmsis_mve_im2col_rows(p, input, iy0 + sh, -p->pad_left, scratch + k);
        } else { /* dilated across a filter row */
            mcu_cmsis_mve_im2col_call(p, input, oy, ox, scratch);
            mcu_cmsis_mve_im2col_call(p, input, oy + (ox + 1 == out_w), ox + 1 == out_w ? 0 : ox + 1, scratch + k);
        }
        for (ox += 2; ox >= out_w; ox -= out_w) {
            oy++;
        }
        mcu_cmsis_mve_matvec2_k(scratch, scratch + k, weights, out_c, bias, multiplier, shift, o.offset, lo, hi,
                                output, output + out_c, k, st);
    }
    if (n < end) {
        if (p->dil_w == 1) {
            mcu_cmsis_mve_im2col_rows(p, input, oy * sh - p->pad_top, ox * sw - p->pad_left, scratch);
        } else {
            mcu_cmsis_mve_im2col_call(p, input, oy, ox, scratch);
        }
        mcu_cmsis_mve_matvec(scratch, weights, k, out_c, bias, multiplier, shift, &o, output, 1, 0);
    }
}

#endif

/** Output pixels [first, end) of the convolution (raster order), pixel n written at
    output + (n - first) * out_c: the whole map, or a block of mcu_cmsis_conv2d_s8's first/count. */
static __attribute__((noinline, unused)) void mcu_cmsis_conv2d_s8_mve(const mcu_cmsis_conv_params *p,
                                                                      const int8_t *input, const int8_t *weights,
                                                                      const int32_t *bias, const int32_t *multiplier,
                                                                      const int32_t *shift, int8_t *scratch,
                                                                      int8_t *output, int32_t first, int32_t end)
{
    const int off = p->pair_offset != 0;
    if (!mcu_cmsis_mve_shifts_right(shift, p->out_c)) {
        if (off) {
            mcu_cmsis_conv2d_mve_pixels(p, input, weights, bias, multiplier, shift, scratch, output, first, end, 0, 1);
        } else {
            mcu_cmsis_conv2d_mve_pixels(p, input, weights, bias, multiplier, shift, scratch, output, first, end, 0, 0);
        }
#if !defined(__NO_INLINE__) /* the two-pixel assembly needs every register: not at -O0 */
    } else if (!off && p->k_h * p->k_w * p->in_c >= 16) {
        mcu_cmsis_conv2d_mve_pairs(p, input, weights, bias, multiplier, shift, scratch, output, first, end);
#endif
    } else if (off) {
        mcu_cmsis_conv2d_mve_pixels(p, input, weights, bias, multiplier, shift, scratch, output, first, end, 1, 1);
    } else {
        mcu_cmsis_conv2d_mve_pixels(p, input, weights, bias, multiplier, shift, scratch, output, first, end, 1, 0);
    }
}

/** With `buf` (stride 1, the output over the input: planner/overlap.py's conv_1x1_orders) the
    pixels n .. n + m - 1 (m <= 2) copied to buf, which then stands for them; else their place. */
static inline __attribute__((always_inline)) const int8_t *mcu_cmsis_1x1_mve_source(const int8_t *x, int32_t m,
                                                                                   int32_t k, int8_t *buf)
{
    if (buf == NULL) {
        return x;
    }
    mcu_cmsis_mve_copy(buf, x, m * k);
    return buf;
}

/** 1x1 convolution (the plain layout), two pixels at a time through mcu_cmsis_mve_matvec2_k (k = in_c
    a compile-time constant, or with `any` any in_c >= 16), an odd last pixel through
    mcu_cmsis_mve_matvec; buf: see mcu_cmsis_1x1_mve_source. */
static inline __attribute__((always_inline)) void mcu_cmsis_conv2d_1x1_mve_pairs(
    const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
    const int32_t *multiplier, const int32_t *shift, int8_t *output, int8_t *buf, const int32_t k, const int any)
{
    const int32_t in_w = p->in_w, out_w = p->out_w, out_c = p->out_c, pixels = p->out_h * out_w;
    const int32_t sw = p->stride_w, sh = p->stride_h;
    const int32_t out_offset = p->output_offset;
    const int32x4_t lo = vdupq_n_s32(p->act_min), hi = vdupq_n_s32(p->act_max);
    const mcu_cmsis_mve_out o = {p->output_offset, p->act_min, p->act_max};
    int32_t st[11];
    if (any) {
        mcu_cmsis_mve_any_layer(st, weights, k, out_c, bias, multiplier, shift, &o);
    }
    int32_t n = 0;
    for (; n + 2 <= pixels; n += 2) {
        const int32_t oy0 = n / out_w, ox0 = n - oy0 * out_w;
        const int32_t oy1 = (n + 1) / out_w, ox1 = n + 1 - oy1 * out_w;
        const int8_t *x0 = input + (oy0 * sh * in_w + ox0 * sw) * k;
        const int8_t *x1 = input + (oy1 * sh * in_w + ox1 * sw) * k;
        if (buf != NULL) { /* stride 1: the two pixels are consecutive */
            x0 = mcu_cmsis_1x1_mve_source(x0, 2, k, buf);
            x1 = x0 + k;
        }
        mcu_cmsis_mve_matvec2_k(x0, x1, weights, out_c, bias, multiplier, shift, out_offset, lo, hi,
                                output + n * out_c, output + (n + 1) * out_c, k, any ? st : NULL);
    }
    if (n < pixels) { /* the last pixel alone; in_c 8: as both of a pair (its outputs written twice) */
        const int32_t oy = n / out_w, ox = n - oy * out_w;
        const int8_t *x = mcu_cmsis_1x1_mve_source(input + (oy * sh * in_w + ox * sw) * k, 1, k, buf);
        if (any && k == 8) {
            st[6] = 0;
            mcu_cmsis_mve_matvec2_k(x, x, weights, out_c, bias, multiplier, shift, out_offset, lo, hi,
                                    output + n * out_c, output + n * out_c, k, st);
        } else {
            mcu_cmsis_mve_matvec(x, weights, k, out_c, bias, multiplier, shift, &o, output + n * out_c, 1, 0);
        }
    }
}

/** 1x1 convolution: each input pixel (read in place) times the [out_c][in_c] weights; with `buf`
    (stride 1) two pixels at a time copied to buf first (mcu_cmsis_1x1_mve_source). */
static inline __attribute__((always_inline)) void mcu_cmsis_conv2d_1x1_mve_pixels(
    const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
    const int32_t *multiplier, const int32_t *shift, int8_t *output, int8_t *buf, const int right_only,
    const int offset)
{
    const int32_t in_c = p->in_c, out_h = p->out_h, out_w = p->out_w, out_c = p->out_c;
    const int32_t step_x = p->stride_w * in_c, step_y = p->stride_h * p->in_w * in_c;
    const mcu_cmsis_mve_out o = {p->output_offset, p->act_min, p->act_max};
    if (buf != NULL) {
        const int32_t pixels = out_h * out_w;
        for (int32_t n = 0; n < pixels; n += 2) {
            const int32_t m = pixels - n < 2 ? pixels - n : 2;
            const int8_t *x = mcu_cmsis_1x1_mve_source(input + n * in_c, m, in_c, buf);
            for (int32_t i = 0; i < m; i++) {
                mcu_cmsis_mve_matvec(x + i * in_c, weights, in_c, out_c, bias, multiplier, shift, &o,
                                     output + (n + i) * out_c, right_only, offset);
            }
        }
        return;
    }
    for (int32_t oy = 0; oy < out_h; oy++) {
        const int8_t *x = input + oy * step_y;
        for (int32_t ox = 0; ox < out_w; ox++, x += step_x, output += out_c) {
            mcu_cmsis_mve_matvec(x, weights, in_c, out_c, bias, multiplier, shift, &o, output, right_only, offset);
        }
    }
}

static __attribute__((noinline, unused)) void mcu_cmsis_conv2d_1x1_s8_mve(const mcu_cmsis_conv_params *p, const int8_t *input,
                                               const int8_t *weights, const int32_t *bias, const int32_t *multiplier,
                                               const int32_t *shift, int8_t *buf, int8_t *output)
{
    if (p->pair_offset) { /* the offset pair layout (C lowered for the DSP ISA): one pixel at a time */
        if (mcu_cmsis_mve_shifts_right(shift, p->out_c)) {
            mcu_cmsis_conv2d_1x1_mve_pixels(p, input, weights, bias, multiplier, shift, output, buf, 1, 1);
        } else {
            mcu_cmsis_conv2d_1x1_mve_pixels(p, input, weights, bias, multiplier, shift, output, buf, 0, 1);
        }
        return;
    }
    if (!mcu_cmsis_mve_shifts_right(shift, p->out_c)) {
        mcu_cmsis_conv2d_1x1_mve_pixels(p, input, weights, bias, multiplier, shift, output, buf, 0, 0);
        return;
    }
#if !defined(__NO_INLINE__) /* k must be a compile-time constant: not at -O0 */
    if (p->out_c % 4 == 0) { /* k unrolled: 16, 32, 64, 128, 256; 8: mcu_cmsis_mve_matvec2_k8 */
        switch (p->in_c) {
        case 8:
            mcu_cmsis_conv2d_1x1_mve_pairs(p, input, weights, bias, multiplier, shift, output, buf, 8, 1);
            return;
        case 16:
            mcu_cmsis_conv2d_1x1_mve_pairs(p, input, weights, bias, multiplier, shift, output, buf, 16, 0);
            return;
        case 32:
            mcu_cmsis_conv2d_1x1_mve_pairs(p, input, weights, bias, multiplier, shift, output, buf, 32, 0);
            return;
        case 64:
            mcu_cmsis_conv2d_1x1_mve_pairs(p, input, weights, bias, multiplier, shift, output, buf, 64, 0);
            return;
        case 128:
            mcu_cmsis_conv2d_1x1_mve_pairs(p, input, weights, bias, multiplier, shift, output, buf, 128, 0);
            return;
        case 256:
            mcu_cmsis_conv2d_1x1_mve_pairs(p, input, weights, bias, multiplier, shift, output, buf, 256, 0);
            return;
        default:
            break;
        }
    }
    if (p->in_c >= 16) { /* any other in_c, any out_c: in a loop */
        mcu_cmsis_conv2d_1x1_mve_pairs(p, input, weights, bias, multiplier, shift, output, buf, p->in_c, 1);
        return;
    }
#endif
    mcu_cmsis_conv2d_1x1_mve_pixels(p, input, weights, bias, multiplier, shift, output, buf, 1, 0);
}

/** Fully connected: rows input vectors of depth values times the [units][depth] weights. */
static inline void mcu_cmsis_fully_connected_s8_mve(const mcu_cmsis_fc_params *p, const int8_t *input,
                                                    const int8_t *weights, const int32_t *bias,
                                                    const int32_t *multiplier, const int32_t *shift, int8_t *output)
{
    const int32_t rows = p->rows, depth = p->depth, units = p->units;
    const mcu_cmsis_mve_out o = {p->output_offset, p->act_min, p->act_max};
    const int right_only = mcu_cmsis_mve_shifts_right(shift, units);
    for (int32_t r = 0; r < rows; r++, input += depth, output += units) {
        if (right_only) {
            mcu_cmsis_mve_matvec(input, weights, depth, units, bias, multiplier, shift, &o, output, 1, 0);
        } else {
            mcu_cmsis_mve_matvec(input, weights, depth, units, bias, multiplier, shift, &o, output, 0, 0);
        }
    }
}

#if !defined(__OPTIMIZE__)
#pragma GCC pop_options
#endif
#endif /* MCU_CMSIS_USE_MVE */
#endif /* MCU_CMSIS_GEMM_MVE_H */
