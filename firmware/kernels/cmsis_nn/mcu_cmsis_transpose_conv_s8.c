/*
 * int8 transposed convolution, output-stationary per stride phase (see mcu_cmsis_transpose_conv_s8.h).
 * Output pixels of one row and phase are taken four at a time (ox, ox + stride_w, ...): their columns
 * are built once and multiplied with every channel's phase row.
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

/** TFLM's requantization of channel c plus the output offset, clamped (the exact general path). */
static inline int8_t tconv_out(int32_t acc, const mcu_cmsis_tconv_params *p, const int32_t *mult,
                               const int32_t *shift, int32_t c)
{
    int32_t v = mcu_requantize(acc, mult[c], shift[c]) + p->output_offset;
    v = v < p->act_min ? p->act_min : v;
    return (int8_t)(v > p->act_max ? p->act_max : v);
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

/** One input pixel widened into a column slot: per group of four values the words (x0, x2), (x1, x3)
    at dst[0], dst[1], the next group 8 words on (the quad's four pixels interleave). */
static inline int32_t *tconv_widen(const int8_t *src, int32_t full, int32_t rest, int32_t *dst)
{
    const int32_t *const end = dst + 8 * full;
    while (dst != end) {
        const int32_t x = mcu_read_s8x4(src);
        dst[0] = mcu_sxtb16(x);
        dst[1] = mcu_sxtb16_ror8(x);
        dst += 8, src += 4;
    }
    if (rest) {
        const int32_t x = tconv_read_tail(src, rest);
        dst[0] = mcu_sxtb16(x);
        dst[1] = mcu_sxtb16_ror8(x);
        dst += 8;
    }
    return dst;
}

/** Four neighbouring input pixels (in_c a multiple of 4) widened into the quad's column slots. */
static inline void tconv_widen4(const int8_t *src, int32_t ic, int32_t full, int32_t *dst)
{
    const int32_t *const end = dst + 8 * full;
    while (dst != end) {
        const int32_t x0 = mcu_read_s8x4(src), x1 = mcu_read_s8x4(src + ic);
        const int32_t x2 = mcu_read_s8x4(src + 2 * ic), x3 = mcu_read_s8x4(src + 3 * ic);
        dst[0] = mcu_sxtb16(x0);
        dst[1] = mcu_sxtb16_ror8(x0);
        dst[2] = mcu_sxtb16(x1);
        dst[3] = mcu_sxtb16_ror8(x1);
        dst[4] = mcu_sxtb16(x2);
        dst[5] = mcu_sxtb16_ror8(x2);
        dst[6] = mcu_sxtb16(x3);
        dst[7] = mcu_sxtb16_ror8(x3);
        dst += 8, src += 4;
    }
}

/** The columns of the quad's pixels (bases bx + q, the last one repeated when n < 4), interleaved:
    per tap and group of four values, 8 words (pixel q's (x0, x2), (x1, x3) at 2q, 2q + 1). Taps
    outside the input read the zero point. */
static __attribute__((noinline)) void tconv_columns(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by, int32_t bx, int32_t n,
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
        for (int32_t i = 0; i < tx; i++, col += 8 * groups) {
            if (row_inside && rest == 0 && n == 4 && bx - i >= 0 && bx + 3 - i < in_w) {
                tconv_widen4(row + (bx - i) * ic, ic, full, col); /* four neighbours inside */
                continue;
            }
            for (int32_t q = 0; q < 4; q++) {
                const int32_t ix = bx + (q < n ? q : n - 1) - i;
                if (row_inside && ix >= 0 && ix < in_w) {
                    tconv_widen(row + ix * ic, full, rest, col + 2 * q);
                } else {
                    int32_t *dst = col + 2 * q;
                    for (int32_t g = 0; g < groups; g++, dst += 8) {
                        dst[0] = zz;
                        dst[1] = zz;
                    }
                }
            }
        }
    }
}

/** acc[4c + q] = bias[c] + the row c of w (rows `groups` groups of four long, one after the other)
    times pixel q's column, for every channel c < oc: one weight word split by SXTB16 for the four
    pixels. On the core: inline assembly, two LDM of the four pixels' words per group (15
    instructions per 16 multiply-accumulates; the LDM registers r8-r11 are fixed, which needs an
    optimizing build). Not inlined: its loop needs the registers of a function of its own. */
static __attribute__((noinline)) void tconv_dot4(const int32_t *col, const int8_t *w, int32_t groups, int32_t oc,
                                                 const int32_t *bias, int32_t *acc)
{
    const int32_t *const end = col + 8 * groups;
    for (int32_t c = 0; c < oc; c++, acc += 4) {
        int32_t s0 = bias[c], s1 = s0, s2 = s0, s3 = s0;
        const int32_t *x = col;
#if !defined(MCU_CMSIS_DSP_EMULATE) && defined(__OPTIMIZE__)
        register int32_t c0 __asm__("r8");
        register int32_t c1 __asm__("r9");
        register int32_t c2 __asm__("r10");
        register int32_t c3 __asm__("r11");
        int32_t e, o;
        if (groups > 0) {
            __asm__ volatile("1:\n\t"
                             "ldr %[o], [%[w]], #4\n\t"
                             "sxtb16 %[e], %[o]\n\t"
                             "sxtb16 %[o], %[o], ror #8\n\t"
                             "ldmia %[x]!, {%[c0], %[c1], %[c2], %[c3]}\n\t"
                             "smlad %[s0], %[c0], %[e], %[s0]\n\t"
                             "smlad %[s0], %[c1], %[o], %[s0]\n\t"
                             "smlad %[s1], %[c2], %[e], %[s1]\n\t"
                             "smlad %[s1], %[c3], %[o], %[s1]\n\t"
                             "ldmia %[x]!, {%[c0], %[c1], %[c2], %[c3]}\n\t"
                             "smlad %[s2], %[c0], %[e], %[s2]\n\t"
                             "smlad %[s2], %[c1], %[o], %[s2]\n\t"
                             "smlad %[s3], %[c2], %[e], %[s3]\n\t"
                             "smlad %[s3], %[c3], %[o], %[s3]\n\t"
                             "cmp %[x], %[end]\n\t"
                             "bne 1b\n"
                             : [s0] "+r"(s0), [s1] "+r"(s1), [s2] "+r"(s2), [s3] "+r"(s3), [x] "+r"(x), [w] "+r"(w),
                               [c0] "=&r"(c0), [c1] "=&r"(c1), [c2] "=&r"(c2), [c3] "=&r"(c3), [e] "=&r"(e),
                               [o] "=&r"(o)
                             : [end] "r"(end)
                             : "cc", "memory");
        }
#else
        for (; x != end; x += 8, w += 4) {
            const int32_t r = mcu_read_s8x4(w);
            const int32_t e = mcu_sxtb16(r), o = mcu_sxtb16_ror8(r);
            s0 = mcu_smlad(x[0], e, s0);
            s0 = mcu_smlad(x[1], o, s0);
            s1 = mcu_smlad(x[2], e, s1);
            s1 = mcu_smlad(x[3], o, s1);
            s2 = mcu_smlad(x[4], e, s2);
            s2 = mcu_smlad(x[5], o, s2);
            s3 = mcu_smlad(x[6], e, s3);
            s3 = mcu_smlad(x[7], o, s3);
        }
#endif
        acc[0] = s0, acc[1] = s1, acc[2] = s2, acc[3] = s3;
    }
}

/** The fast requantization of one accumulator (record m, add, right), clamped when `clamp`. */
static inline int8_t tconv_rq(int32_t acc, int32_t m, int32_t add, int32_t right, int clamp, int32_t lo, int32_t hi)
{
    int32_t v = mcu_ssat8(mcu_cmsis_rq3(acc, m, add, right));
    if (clamp) {
        v = v < lo ? lo : v > hi ? hi : v;
    }
    return (int8_t)v;
}

/** Outputs of up to four pixels of a row and phase (bases bx .. bx + n - 1; out[q] their channels,
    out[n - 1] repeated after them), every channel. A quad with fewer pixels repeats the last one: the
    same column, the same outputs written to the same place. acc: 4 * out_c accumulators. */
static void tconv_quad(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by, int32_t bx, int32_t n,
                       const tconv_phase *ph, const int32_t *mult, const int32_t *shift, const int32_t *rq,
                       int32_t *col, int32_t *acc, int8_t *const *out)
{
    const int32_t oc = p->out_c, lo = p->act_min, hi = p->act_max;
    const int clamp = lo != -128 || hi != 127;
    int8_t *const o0 = out[0], *const o1 = out[1], *const o2 = out[2], *const o3 = out[3];
    tconv_columns(p, img, by, bx, n, ph, col);
    tconv_dot4(col, ph->w, ph->depth / 4, oc, ph->bias, acc);
    for (int32_t c = 0; c < oc; c++, acc += 4) {
        int8_t v0, v1, v2, v3;
        if (rq != NULL) {
            const int32_t m = rq[3 * c], add = rq[3 * c + 1], right = rq[3 * c + 2];
            v0 = tconv_rq(acc[0], m, add, right, clamp, lo, hi);
            v1 = tconv_rq(acc[1], m, add, right, clamp, lo, hi);
            v2 = tconv_rq(acc[2], m, add, right, clamp, lo, hi);
            v3 = tconv_rq(acc[3], m, add, right, clamp, lo, hi);
        } else {
            v0 = tconv_out(acc[0], p, mult, shift, c);
            v1 = tconv_out(acc[1], p, mult, shift, c);
            v2 = tconv_out(acc[2], p, mult, shift, c);
            v3 = tconv_out(acc[3], p, mult, shift, c);
        }
        o0[c] = v0, o1[c] = v1, o2[c] = v2, o3[c] = v3;
    }
}

#elif defined(MCU_CMSIS_USE_MVE) /* Helium: int8 columns of four pixels, interleaved by 16 values */

/** The columns of the quad's pixels (bases bx + q, the last one repeated when n < 4), int8,
    interleaved per block of sixteen values: value k of pixel q at (k / 16) * 64 + 16 q + k % 16.
    Taps outside the input read the zero point; each tap's run is in_c_pad values (its padding
    values stay zero from the start, against zero weights). */
static __attribute__((noinline)) void tconv_columns(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by,
                                                    int32_t bx, int32_t n, const tconv_phase *ph, int8_t *col)
{
    const int32_t ic = p->in_c, icp = p->in_c_pad, in_h = p->in_h, in_w = p->in_w, ty = ph->ty, tx = ph->tx;
    const int32_t full = ic / 4, rest = ic % 4;
    const int32_t zz = mcu_splat_s8x4((int8_t)(-p->input_offset));
    int32_t k0 = 0;
    for (int32_t j = 0; j < ty; j++) {
        const int32_t iy = by - j;
        const int row_inside = iy >= 0 && iy < in_h;
        const int8_t *row = img + iy * in_w * ic;
        for (int32_t i = 0; i < tx; i++, k0 += icp) {
            if ((ic & 15) == 0 && row_inside && n == 4 && bx - i >= 0 && bx + 3 - i < in_w) {
                const int8_t *src = row + (bx - i) * ic; /* four neighbours inside, whole blocks */
                int8_t *d = col + (k0 >> 4) * 64;
                for (int32_t k = 0; k < ic; k += 16, d += 64, src += 16) {
                    vstrbq_s8(d, vldrbq_s8(src));
                    vstrbq_s8(d + 16, vldrbq_s8(src + ic));
                    vstrbq_s8(d + 32, vldrbq_s8(src + 2 * ic));
                    vstrbq_s8(d + 48, vldrbq_s8(src + 3 * ic));
                }
                continue;
            }
            for (int32_t q = 0; q < 4; q++) {
                const int32_t ix = bx + (q < n ? q : n - 1) - i;
                int8_t *const dst = col + 16 * q;
                const int inside = row_inside && ix >= 0 && ix < in_w;
                if ((icp & 15) == 0) { /* each tap's run is whole blocks: 16 values per VLDRB / VSTRB */
                    const int8_t *src = row + ix * ic;
                    int8_t *d = dst + (k0 >> 4) * 64;
                    for (int32_t k = 0; k < ic; k += 16, d += 64) {
                        const mve_pred16_t pr = vctp8q((uint32_t)(ic - k));
                        vstrbq_p_s8(d, inside ? vldrbq_z_s8(src + k, pr) : vdupq_n_s8((int8_t)(-p->input_offset)), pr);
                    }
                } else if (inside) {
                    const int8_t *src = row + ix * ic;
                    int32_t k = k0;
                    for (int32_t g = 0; g < full; g++, k += 4, src += 4) {
                        mcu_write_s8x4(dst + (k >> 4) * 64 + (k & 15), mcu_read_s8x4(src));
                    }
                    for (int32_t r = 0; r < rest; r++, k++) {
                        dst[(k >> 4) * 64 + (k & 15)] = src[r];
                    }
                } else {
                    int32_t k = k0;
                    for (int32_t g = 0; g < full; g++, k += 4) {
                        mcu_write_s8x4(dst + (k >> 4) * 64 + (k & 15), zz);
                    }
                    for (int32_t r = 0; r < rest; r++, k++) {
                        dst[(k >> 4) * 64 + (k & 15)] = (int8_t)(-p->input_offset);
                    }
                }
            }
        }
    }
}

/** The state the assembly loop of tconv_dot4 keeps in memory (offsets 0, 4, .., 20). */
typedef struct {
    const int8_t *col;
    int32_t blocks, depth, pairs;
    const int32_t *bias;
    int32_t *acc;
} tconv_mve_loop;

/** acc[4c + q] = bias[c] + row c of w (rows depth long, one after the other) times pixel q's column,
    every channel c < oc: two channels by four pixels per pass, VMLADAVA on sixteen values. Optimizing
    builds run the channel pairs of rows that are whole blocks as one inline-assembly loop (16
    instructions per 128 multiply-accumulates; the eight accumulators in the even registers r0 .. lr
    that VMLADAVA needs, the loop state in a tconv_mve_loop); an odd last channel, or rows with a
    tail, take the intrinsics (the tail predicated). Not inlined: the assembly needs the registers of a
    function of its own. */
static __attribute__((noinline)) void tconv_dot4(const int8_t *col, const int8_t *w, int32_t depth, int32_t oc,
                                                 const int32_t *bias, int32_t *acc)
{
    const int32_t blocks = depth / 16, rest = depth % 16;
    int32_t c = 0;
#if defined(__OPTIMIZE__)
    if (rest == 0 && blocks > 0 && oc >= 2) {
        tconv_mve_loop st = {col, blocks, depth, oc / 2, bias, acc};
        const int8_t *w0 = w, *w1, *x;
        int32_t n;
        __asm__ volatile("2:\n\t"
                         "ldr %[x], [%[st], #16]\n\t"
                         "ldr r0, [%[x]], #4\n\t"
                         "ldr r8, [%[x]], #4\n\t"
                         "str %[x], [%[st], #16]\n\t"
                         "mov r2, r0\n\t"
                         "mov r4, r0\n\t"
                         "mov r6, r0\n\t"
                         "mov r10, r8\n\t"
                         "mov r12, r8\n\t"
                         "mov lr, r8\n\t"
                         "ldr %[n], [%[st], #8]\n\t"
                         "add %[w1], %[w0], %[n]\n\t"
                         "ldr %[n], [%[st], #4]\n\t"
                         "ldr %[x], [%[st]]\n\t"
                         "1:\n\t"
                         "vldrb.8 q1, [%[w0]], #16\n\t"
                         "vldrb.8 q2, [%[w1]], #16\n\t"
                         "vldrb.8 q0, [%[x]]\n\t"
                         "vmladava.s8 r0, q0, q1\n\t"
                         "vmladava.s8 r8, q0, q2\n\t"
                         "vldrb.8 q0, [%[x], #16]\n\t"
                         "vmladava.s8 r2, q0, q1\n\t"
                         "vmladava.s8 r10, q0, q2\n\t"
                         "vldrb.8 q0, [%[x], #32]\n\t"
                         "vmladava.s8 r4, q0, q1\n\t"
                         "vmladava.s8 r12, q0, q2\n\t"
                         "vldrb.8 q0, [%[x], #48]\n\t"
                         "vmladava.s8 r6, q0, q1\n\t"
                         "vmladava.s8 lr, q0, q2\n\t"
                         "adds %[x], #64\n\t"
                         "subs %[n], %[n], #1\n\t"
                         "bne 1b\n\t"
                         "mov %[w0], %[w1]\n\t"
                         "ldr %[x], [%[st], #20]\n\t"
                         "stmia %[x]!, {r0, r2, r4, r6, r8, r10, r12, lr}\n\t"
                         "str %[x], [%[st], #20]\n\t"
                         "ldr %[n], [%[st], #12]\n\t"
                         "subs %[n], %[n], #1\n\t"
                         "str %[n], [%[st], #12]\n\t"
                         "bne 2b\n"
                         : [w0] "+r"(w0), [w1] "=&r"(w1), [x] "=&r"(x), [n] "=&r"(n)
                         : [st] "r"(&st)
                         : "r0", "r2", "r4", "r6", "r8", "r10", "r12", "lr", "q0", "q1", "q2", "cc", "memory");
        c = oc & ~1;
    }
#endif
    for (; c < oc; c += 2) {
        const int32_t c1 = c + 1 < oc ? c + 1 : c;
        const int8_t *x = col, *w0 = w + c * depth, *w1 = w + c1 * depth;
        int32_t a0 = bias[c], a1 = a0, a2 = a0, a3 = a0, b0 = bias[c1], b1 = b0, b2 = b0, b3 = b0;
        for (int32_t k = 0; k < blocks; k++, x += 64, w0 += 16, w1 += 16) {
            const int8x16_t r0 = vldrbq_s8(w0), r1 = vldrbq_s8(w1);
            a0 = vmladavaq_s8(a0, vldrbq_s8(x), r0);
            b0 = vmladavaq_s8(b0, vldrbq_s8(x), r1);
            a1 = vmladavaq_s8(a1, vldrbq_s8(x + 16), r0);
            b1 = vmladavaq_s8(b1, vldrbq_s8(x + 16), r1);
            a2 = vmladavaq_s8(a2, vldrbq_s8(x + 32), r0);
            b2 = vmladavaq_s8(b2, vldrbq_s8(x + 32), r1);
            a3 = vmladavaq_s8(a3, vldrbq_s8(x + 48), r0);
            b3 = vmladavaq_s8(b3, vldrbq_s8(x + 48), r1);
        }
        if (rest) {
            const mve_pred16_t pr = vctp8q((uint32_t)rest);
            const int8x16_t r0 = vldrbq_z_s8(w0, pr), r1 = vldrbq_z_s8(w1, pr);
            a0 = vmladavaq_s8(a0, vldrbq_z_s8(x, pr), r0);
            b0 = vmladavaq_s8(b0, vldrbq_z_s8(x, pr), r1);
            a1 = vmladavaq_s8(a1, vldrbq_z_s8(x + 16, pr), r0);
            b1 = vmladavaq_s8(b1, vldrbq_z_s8(x + 16, pr), r1);
            a2 = vmladavaq_s8(a2, vldrbq_z_s8(x + 32, pr), r0);
            b2 = vmladavaq_s8(b2, vldrbq_z_s8(x + 32, pr), r1);
            a3 = vmladavaq_s8(a3, vldrbq_z_s8(x + 48, pr), r0);
            b3 = vmladavaq_s8(b3, vldrbq_z_s8(x + 48, pr), r1);
        }
        int32_t *const r = acc + 4 * c, *const t = acc + 4 * c1; /* t == r for an odd last channel */
        t[0] = b0, t[1] = b1, t[2] = b2, t[3] = b3;
        r[0] = a0, r[1] = a1, r[2] = a2, r[3] = a3;
    }
}

/** TFLM's requantization of four accumulators of one channel (multiplier m, shift sh), plus the
    offset, clamped (mcu_cmsis_mve_requantize_vec with one channel's parameters in every lane). */
static inline int32x4_t tconv_requantize4(int32x4_t x, int32_t m, int32_t sh, int32_t offset, int32_t lo, int32_t hi)
{
    const int32x4_t right = vdupq_n_s32(sh < 0 ? sh : 0);
    x = vshlq_s32(x, vdupq_n_s32(sh > 0 ? sh : 0));
    x = vqrdmulhq_n_s32(x, m);
    x = vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31));
    x = vrshlq_s32(x, right);
    x = vaddq_n_s32(x, offset);
    return vminq_s32(vmaxq_s32(x, vdupq_n_s32(lo)), vdupq_n_s32(hi));
}

/** Outputs of up to four pixels of a row and phase (out[q] their channels, out[n - 1] repeated after
    them), every channel: each channel's four accumulators requantized as one vector and scattered
    to the four pixels (a repeated pixel is written twice with the same value). */
static void tconv_quad(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by, int32_t bx, int32_t n,
                       const tconv_phase *ph, const int32_t *mult, const int32_t *shift, int8_t *col, int32_t *acc,
                       int8_t *const *out)
{
    const int32_t oc = p->out_c, offset = p->output_offset, lo = p->act_min, hi = p->act_max;
    const uint32_t to[4] = {0, (uint32_t)(out[1] - out[0]), (uint32_t)(out[2] - out[0]), (uint32_t)(out[3] - out[0])};
    const uint32x4_t offsets = vldrwq_u32(to);
    tconv_columns(p, img, by, bx, n, ph, col);
    tconv_dot4(col, ph->w, ph->depth, oc, ph->bias, acc);
    for (int32_t c = 0; c < oc; c++) {
        const int32x4_t v = tconv_requantize4(vldrwq_s32(acc + 4 * c), mult[c], shift[c], offset, lo, hi);
        vstrbq_scatter_offset_s32(out[0] + c, offsets, v);
    }
}

#else /* plain C: one int8 column per pixel */

/** The input pixel (iy, ix), or NULL outside the input. */
static inline const int8_t *tconv_src(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t iy, int32_t ix)
{
    return iy >= 0 && iy < p->in_h && ix >= 0 && ix < p->in_w ? img + (iy * p->in_w + ix) * p->in_c : NULL;
}

/** One pixel's column: each tap's in_c values (the input zero point outside the input) at a stride of
    in_c_pad; the padding bytes stay as set at the start (zero, against zero weights). */
static void tconv_column(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by, int32_t bx,
                         const tconv_phase *ph, int8_t *col)
{
    const int32_t ic = p->in_c, icp = p->in_c_pad, ty = ph->ty, tx = ph->tx;
    for (int32_t j = 0; j < ty; j++) {
        for (int32_t i = 0; i < tx; i++, col += icp) {
            const int8_t *src = tconv_src(p, img, by - j, bx - i);
            if (src != NULL) {
                memcpy(col, src, (size_t)ic);
            } else {
                memset(col, -p->input_offset, (size_t)ic);
            }
        }
    }
}

/** Outputs of up to four pixels of a row and phase (out[q] their channels), every channel. */
static void tconv_quad(const mcu_cmsis_tconv_params *p, const int8_t *img, int32_t by, int32_t bx, int32_t n,
                       const tconv_phase *ph, const int32_t *mult, const int32_t *shift, int8_t *col,
                       int8_t *const *out)
{
    const int32_t oc = p->out_c, depth = ph->depth;
    for (int32_t q = 0; q < n; q++) {
        tconv_column(p, img, by, bx + q, ph, col);
        for (int32_t c = 0; c < oc; c++) {
            const int8_t *w = ph->w + c * depth;
            int32_t acc = ph->bias[c];
            for (int32_t k = 0; k < depth; k++) {
                acc += col[k] * w[k];
            }
            out[q][c] = tconv_out(acc, p, mult, shift, c);
        }
    }
}

#endif

void mcu_cmsis_transpose_conv_s8(const mcu_cmsis_tconv_params *p, const int8_t *input, const int8_t *weights,
                                 const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                 const int32_t *rq, void *scratch, int8_t *output)
{
    const int32_t oh = p->out_h, ow = p->out_w, oc = p->out_c, sh = p->stride_h, sw = p->stride_w;
    const int32_t k_max = p->in_c_pad * tconv_taps(0, p->k_h, sh) * tconv_taps(0, p->k_w, sw);
#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
    int32_t *col = (int32_t *)scratch;                /* four 16-bit columns: 8 * k_max bytes */
    int32_t *acc = (int32_t *)scratch + 2 * k_max + 16; /* then 4 * out_c accumulators */
#elif defined(MCU_CMSIS_USE_MVE)
    int8_t *col = (int8_t *)scratch; /* four int8 columns in blocks of 16: 64 * ceil(k_max / 16) bytes */
    int32_t *acc = (int32_t *)scratch + 2 * k_max + 16;
    (void)rq;
    memset(col, 0, (size_t)(8 * k_max + 64)); /* the padding values and the last block's tail stay zero */
#else
    int8_t *col = (int8_t *)scratch;
    (void)rq;
    memset(col, 0, (size_t)k_max);
#endif
    for (int32_t n = 0; n < p->batches; n++) {
        const int8_t *img = input + n * p->in_h * p->in_w * p->in_c;
        int8_t *out = output + n * oh * ow * oc;
        for (int32_t oy = 0; oy < oh; oy++) {
            const int32_t ry = (oy + p->pad_top) % sh, by = (oy + p->pad_top) / sh;
            for (int32_t rx = 0; rx < sw; rx++) {
                const tconv_phase ph = tconv_phase_of(p, weights, bias, ry, rx);
                const int32_t ox0 = ((rx - p->pad_left) % sw + sw) % sw; /* (ox0 + pad_left) % sw == rx */
                for (int32_t ox = ox0; ox < ow; ox += 4 * sw) {
                    const int32_t count = (ow - ox + sw - 1) / sw < 4 ? (ow - ox + sw - 1) / sw : 4;
                    const int32_t bx = (ox + p->pad_left) / sw;
                    int8_t *pixels[4]; /* a short quad repeats its last pixel */
                    for (int32_t q = 0; q < 4; q++) {
                        pixels[q] = out + (oy * ow + ox + (q < count ? q : count - 1) * sw) * oc;
                    }
#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
                    tconv_quad(p, img, by, bx, count, &ph, multiplier, shift, rq, col, acc, pixels);
#elif defined(MCU_CMSIS_USE_MVE)
                    tconv_quad(p, img, by, bx, count, &ph, multiplier, shift, col, acc, pixels);
#else
                    tconv_quad(p, img, by, bx, count, &ph, multiplier, shift, col, pixels);
#endif
                }
            }
        }
    }
}
