/*
 * int8 BATCH_MATMUL (mcu_cmsis_batch_matmul_s8.h): per output batch, the activations stored the
 * other way are transposed into scratch (once for a run of batches reading the same matrix), then
 * the [rows][depth] x [cols][depth]^T product goes through the plain, DSP or Helium path.
 */
#include "mcu_cmsis_batch_matmul_s8.h"

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_gemm_mve.h"
#include "mcu_cmsis_mve.h"
#include "mcuforge_fixedpoint.h"

typedef mcu_cmsis_batch_matmul_params bmm_params;

/** TFLM's requantization of acc, plus the output offset, clamped to int8. */
static int8_t bmm_requantize(const bmm_params *p, uint32_t acc)
{
    int32_t v = mcu_requantize((int32_t)acc, p->multiplier, p->shift) + p->output_offset;
    v = v < -128 ? -128 : v;
    return (int8_t)(v > 127 ? 127 : v);
}

/** dst[c][r] = src[r][c] for an n x m matrix src. */
static void bmm_transpose_plain(const int8_t *src, int32_t n, int32_t m, int8_t *dst)
{
    for (int32_t r = 0; r < n; r++, src += m) {
        int8_t *d = dst + r;
        for (int32_t c = 0; c < m; c++, d += n) {
            *d = src[c];
        }
    }
}

#if defined(MCU_CMSIS_USE_MVE)

/** sum_{k<n} x[k] (n >= 1). */
static inline __attribute__((always_inline)) int32_t bmm_mve_sum(const int8_t *x, int32_t n)
{
    int32_t s = 0;
    __asm__ volatile("dlstp.8 lr, %[n]\n"
                     "1:\n\t"
                     "vldrb.8 q0, [%[x]], #16\n\t"
                     "vaddva.s8 %[s], q0\n\t"
                     "letp lr, 1b\n"
                     : [s] "+Te"(s), [x] "+r"(x)
                     : [n] "r"(n)
                     : "q0", "lr", "memory");
    return s;
}

/** dst[c][r] = src[r][c] for an n x m matrix src (15 * m < 2^16): sixteen values of a column per pair
    of gathers (the even and the odd rows, 16-bit offsets) narrowed into one vector. */
static void bmm_transpose_mve(const int8_t *src, int32_t n, int32_t m, int8_t *dst)
{
    const uint16x8_t even = vmulq_n_u16(vmulq_n_u16(vidupq_n_u16(0, 1), 2), (uint16_t)m);
    const uint16x8_t odd = vaddq_n_u16(even, (uint16_t)m);
    const int32_t full = n & ~15;
    for (int32_t c = 0; c < m; c++, dst += n) {
        const uint8_t *col = (const uint8_t *)src + c;
        int32_t r = 0;
        for (; r < full; r += 16, col += 16 * m) {
            uint8x16_t v = vuninitializedq_u8();
            v = vmovnbq_u16(v, vldrbq_gather_offset_u16(col, even));
            v = vmovntq_u16(v, vldrbq_gather_offset_u16(col, odd));
            vstrbq_u8((uint8_t *)dst + r, v);
        }
        for (; r < n; r++, col += m) {
            dst[r] = (int8_t)*col;
        }
    }
}

/** The rows of the Helium path; left_shift (a compile-time constant): the shift is positive. */
static inline __attribute__((always_inline)) void bmm_rows_mve(const bmm_params *p, const int8_t *lhs,
                                                               const int8_t *rhs, const int32_t *colsum, int8_t *out,
                                                               const int left_shift)
{
    const int32_t rows = p->rows, cols = p->cols, depth = p->depth, ro = p->rhs_offset, offset = p->output_offset;
    const int32x4_t mult = vdupq_n_s32(p->multiplier);
    const int32x4_t left = vdupq_n_s32(left_shift ? p->shift : 0), right = vdupq_n_s32(left_shift ? 0 : p->shift);
    for (int32_t i = 0; i < rows; i++, lhs += depth, out += cols) {
        const int32_t row_term = (int32_t)((uint32_t)ro * (uint32_t)bmm_mve_sum(lhs, depth));
        int32_t j = 0;
        for (; j + 4 <= cols; j += 4) {
            int32x4_t x = vaddq_n_s32(mcu_cmsis_mve_dot4(lhs, rhs + j * depth, depth, colsum + j), row_term);
            if (left_shift) { /* TFLM's requantization (mcu_cmsis_mve.h) */
                x = vqrdmulhq_s32(vshlq_s32(x, left), mult);
            } else {
                x = vqrdmulhq_s32(x, mult);
                x = vrshlq_s32(vqaddq_s32(x, vshrq_n_s32(vandq_s32(x, right), 31)), right);
            }
            x = vminq_s32(vmaxq_s32(vaddq_n_s32(x, offset), vdupq_n_s32(-128)), vdupq_n_s32(127));
            vstrbq_s32(out + j, x);
        }
        for (; j < cols; j++) {
            const int32_t acc = mcu_cmsis_mve_dot1(lhs, rhs + j * depth, depth, colsum[j]);
            out[j] = bmm_requantize(p, (uint32_t)acc + (uint32_t)row_term);
        }
    }
}

/** Raw int8 products (mcu_cmsis_mve_dot4 starting from the column sums), the offsets through the row
    sum and the column sums (colsum[j] = lhs_offset * sum(rhs row j) + depth * lhs_offset * rhs_offset);
    four columns requantized as one vector. */
static void bmm_matrix_mve(const bmm_params *p, const int8_t *lhs, const int8_t *rhs, int32_t *colsum, int8_t *out)
{
    const int32_t cols = p->cols, depth = p->depth, lo = p->lhs_offset;
    const uint32_t both = (uint32_t)depth * (uint32_t)lo * (uint32_t)p->rhs_offset;
    for (int32_t j = 0; j < cols; j++) {
        colsum[j] = (int32_t)((uint32_t)lo * (uint32_t)bmm_mve_sum(rhs + j * depth, depth) + both);
    }
    if (p->shift > 0) {
        bmm_rows_mve(p, lhs, rhs, colsum, out, 1);
    } else {
        bmm_rows_mve(p, lhs, rhs, colsum, out, 0);
    }
}

#elif defined(MCU_CMSIS_USE_DSP)

/** The requantization of the DSP paths: the proven record when there is one. */
static inline int8_t bmm_out(const bmm_params *p, int32_t acc)
{
    if (p->rq_right != 0) {
        return (int8_t)mcu_ssat8(mcu_cmsis_rq3(acc, p->rq_m, p->rq_add, p->rq_right));
    }
    return bmm_requantize(p, (uint32_t)acc);
}

/** The DSP path reads a transposed rhs in place (its widening takes the steps). */
#define BMM_RHS_IN_PLACE(p) ((p)->rows >= 3)

/** The last n (1..3) bytes of a row as a word, the missing bytes 0. */
static inline int32_t bmm_tail_word(const int8_t *x, int32_t n)
{
    uint32_t w = 0;
    for (int32_t q = 0; q < n; q++) {
        w |= (uint32_t)(uint8_t)x[q] << (8 * q);
    }
    return (int32_t)w;
}

/** The n (0..4) values at r, step apart, plus ro as one widened group at d (missing values 0). */
static void bmm_widen_tail(const int8_t *r, int32_t step, int32_t n, int32_t ro, int32_t *d)
{
    if (n == 0) {
        return;
    }
    int32_t v[4] = {0, 0, 0, 0};
    for (int32_t q = 0; q < n; q++) {
        v[q] = r[q * step] + ro;
    }
    d[0] = mcu_pkhbt16(v[0], v[2]);
    d[1] = mcu_pkhbt16(v[1], v[3]);
}

/** The full groups of four adjacent columns of a [depth][cols] rhs (r: the first column, depth values
    `step` apart) widened: a 4x4 byte transpose per group, each depth's word split by SXTAB16 into
    columns (0, 2) and (1, 3), the depth pairs packed by PKHBT / PKHTB. */
static void bmm_widen4_across(const int8_t *r, int32_t step, int32_t groups, int32_t ro2, int32_t *blk)
{
    for (int32_t g = 0; g < groups; g++, r += 4 * step, blk += 8) {
        const int32_t w0 = mcu_read_s8x4(r), w1 = mcu_read_s8x4(r + step);
        const int32_t w2 = mcu_read_s8x4(r + 2 * step), w3 = mcu_read_s8x4(r + 3 * step);
        const int32_t e0 = mcu_sxtab16(ro2, w0), e2 = mcu_sxtab16(ro2, w2); /* columns 0, 2 at depths 0, 2 */
        blk[0] = mcu_pkhbt16(e0, e2);
        blk[4] = mcu_pkhtb16(e2, e0);
        const int32_t e1 = mcu_sxtab16(ro2, w1), e3 = mcu_sxtab16(ro2, w3);
        blk[1] = mcu_pkhbt16(e1, e3);
        blk[5] = mcu_pkhtb16(e3, e1);
        const int32_t o0 = mcu_sxtab16_ror8(ro2, w0), o2 = mcu_sxtab16_ror8(ro2, w2); /* columns 1, 3 */
        blk[2] = mcu_pkhbt16(o0, o2);
        blk[6] = mcu_pkhtb16(o2, o0);
        const int32_t o1 = mcu_sxtab16_ror8(ro2, w1), o3 = mcu_sxtab16_ror8(ro2, w3);
        blk[3] = mcu_pkhbt16(o1, o3);
        blk[7] = mcu_pkhtb16(o3, o1);
    }
}

/** n rhs columns widened into blk with the offset ro (ro2: in both halves): value k of column c at
    r[c * col_step + k * depth_step]; group g of column c at blk[2 * (g * n + c)] as (r0 + ro, r2 + ro),
    (r1 + ro, r3 + ro), the missing values of a partial last group 0. */
static void bmm_widen(const int8_t *r, int32_t depth_step, int32_t col_step, int32_t depth, int32_t n, int32_t ro2,
                      int32_t *blk)
{
    const int32_t groups = depth >> 2, ro = (int16_t)ro2;
    if (n == 4 && col_step == 1 && groups > 0) { /* [depth][cols]: a word holds the four columns at one depth */
        bmm_widen4_across(r, depth_step, groups, ro2, blk);
        for (int32_t c = 0; c < 4; c++) { /* the partial last group */
            bmm_widen_tail(r + c + 4 * groups * depth_step, depth_step, depth & 3, ro, blk + 8 * groups + 2 * c);
        }
        return;
    }
    for (int32_t c = 0; c < n; c++, r += col_step) {
        int32_t *d = blk + 2 * c;
        int32_t g = 0;
        if (depth_step == 1) {
            for (; g < groups; g++, d += 2 * n) {
                const int32_t word = mcu_read_s8x4(r + 4 * g);
                d[0] = mcu_sxtab16(ro2, word);
                d[1] = mcu_sxtab16_ror8(ro2, word);
            }
        }
        for (; 4 * g < depth; g++, d += 2 * n) {
            bmm_widen_tail(r + 4 * g * depth_step, depth_step, depth - 4 * g < 4 ? depth - 4 * g : 4, ro, d);
        }
    }
}

/** One group of four lhs values (word, lo2: the offset in both halves) into the four columns'
    accumulators from their widened words b[0..7]. */
static inline void bmm_step4(int32_t word, int32_t lo2, const int32_t *b, int32_t *a0, int32_t *a1, int32_t *a2,
                             int32_t *a3)
{
    const int32_t x02 = mcu_sxtab16(lo2, word), x13 = mcu_sxtab16_ror8(lo2, word);
    *a0 = mcu_smlad(x13, b[1], mcu_smlad(x02, b[0], *a0));
    *a1 = mcu_smlad(x13, b[3], mcu_smlad(x02, b[2], *a1));
    *a2 = mcu_smlad(x13, b[5], mcu_smlad(x02, b[4], *a2));
    *a3 = mcu_smlad(x13, b[7], mcu_smlad(x02, b[6], *a3));
}

#if !defined(MCU_CMSIS_DSP_EMULATE) && !defined(__NO_INLINE__) /* twelve registers: not at -O0 */
#define BMM_PAIRS4 1
/** pairs (>= 1) pairs of groups of x against the block from blk into a[0..3]: per group one LDR,
    two SXTAB16, four LDRD and eight SMLAD (gcc pairs neither the loads nor keeps the accumulators
    in registers). The lhs word's register takes the first block word. */
static inline void bmm_pairs4(const int8_t **x, const int32_t **blk, int32_t pairs, int32_t lo2, int32_t a[4])
{
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    const int8_t *xp = *x;
    const int32_t *bp = *blk;
    int32_t w, b, e, o;
#define BMM_GROUP                                                                                              \
    "ldr %[w], [%[x]], #4\n\t"                                                                                 \
    "sxtab16 %[e], %[lo], %[w]\n\t"                                                                            \
    "sxtab16 %[o], %[lo], %[w], ror #8\n\t"                                                                    \
    "ldrd %[w], %[b], [%[p]], #8\n\t"                                                                          \
    "smlad %[a0], %[e], %[w], %[a0]\n\t"                                                                       \
    "smlad %[a0], %[o], %[b], %[a0]\n\t"                                                                       \
    "ldrd %[w], %[b], [%[p]], #8\n\t"                                                                          \
    "smlad %[a1], %[e], %[w], %[a1]\n\t"                                                                       \
    "smlad %[a1], %[o], %[b], %[a1]\n\t"                                                                       \
    "ldrd %[w], %[b], [%[p]], #8\n\t"                                                                          \
    "smlad %[a2], %[e], %[w], %[a2]\n\t"                                                                       \
    "smlad %[a2], %[o], %[b], %[a2]\n\t"                                                                       \
    "ldrd %[w], %[b], [%[p]], #8\n\t"                                                                          \
    "smlad %[a3], %[e], %[w], %[a3]\n\t"                                                                       \
    "smlad %[a3], %[o], %[b], %[a3]\n\t"
    __asm__ volatile("1:\n\t" BMM_GROUP BMM_GROUP
                     "subs %[n], %[n], #1\n\t"
                     "bne 1b\n"
                     : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(xp), [p] "+r"(bp),
                       [n] "+r"(pairs), [w] "=&r"(w), [b] "=&r"(b), [e] "=&r"(e), [o] "=&r"(o)
                     : [lo] "r"(lo2)
                     : "memory", "cc");
#undef BMM_GROUP
    a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
    *x = xp;
    *blk = bp;
}
#endif

/** Four outputs of row x against the widened block of four columns. */
static inline __attribute__((always_inline)) void bmm_row4(const int8_t *x, const int32_t *blk, int32_t depth,
                                                           int32_t lo2,
                                               int32_t acc[4])
{
    int32_t a[4] = {0, 0, 0, 0};
    const int32_t groups = depth >> 2;
#if defined(BMM_PAIRS4)
    if (groups >= 2) {
        bmm_pairs4(&x, &blk, groups >> 1, lo2, a);
    }
#else
    for (int32_t g = 0; g + 2 <= groups; g += 2, x += 8, blk += 16) {
        bmm_step4(mcu_read_s8x4(x), lo2, blk, &a[0], &a[1], &a[2], &a[3]);
        bmm_step4(mcu_read_s8x4(x + 4), lo2, blk + 8, &a[0], &a[1], &a[2], &a[3]);
    }
#endif
    if (groups & 1) {
        bmm_step4(mcu_read_s8x4(x), lo2, blk, &a[0], &a[1], &a[2], &a[3]);
        x += 4, blk += 8;
    }
    if (depth & 3) {
        bmm_step4(bmm_tail_word(x, depth & 3), lo2, blk, &a[0], &a[1], &a[2], &a[3]);
    }
    acc[0] = a[0], acc[1] = a[1], acc[2] = a[2], acc[3] = a[3];
}

/** One output of row x against one widened column. */
static int32_t bmm_row1(const int8_t *x, const int32_t *blk, int32_t depth, int32_t lo2)
{
    int32_t a = 0;
    const int32_t groups = depth >> 2;
    for (int32_t g = 0; g < groups; g++, x += 4, blk += 2) {
        const int32_t word = mcu_read_s8x4(x);
        a = mcu_smlad(mcu_sxtab16_ror8(lo2, word), blk[1], mcu_smlad(mcu_sxtab16(lo2, word), blk[0], a));
    }
    if (depth & 3) {
        const int32_t word = bmm_tail_word(x, depth & 3);
        a = mcu_smlad(mcu_sxtab16_ror8(lo2, word), blk[1], mcu_smlad(mcu_sxtab16(lo2, word), blk[0], a));
    }
    return a;
}

/** acc requantized by the proven record (right > 0) or TFLM's general form. */
static inline int8_t bmm_out_rq(const bmm_params *p, int32_t acc, int32_t m, int32_t add, int32_t right)
{
    return right ? (int8_t)mcu_ssat8(mcu_cmsis_rq3(acc, m, add, right)) : bmm_requantize(p, (uint32_t)acc);
}

/** Three or more rows: each block of four columns widened once (read with its steps: a transposed rhs
    needs no copy), then every row against it. */
static void bmm_matrix_widened(const bmm_params *p, const int8_t *lhs, const int8_t *rhs, int32_t depth_step,
                               int32_t col_step, int32_t *blk, int8_t *out)
{
    const int32_t rows = p->rows, cols = p->cols, depth = p->depth;
    const int32_t m = p->rq_m, add = p->rq_add, right = p->rq_right;
    const int32_t lo2 = mcu_pkhbt16(p->lhs_offset, p->lhs_offset), ro2 = mcu_pkhbt16(p->rhs_offset, p->rhs_offset);
    int32_t j = 0;
    for (; j + 4 <= cols; j += 4) {
        bmm_widen(rhs + j * col_step, depth_step, col_step, depth, 4, ro2, blk);
        const int8_t *x = lhs;
        int8_t *o = out + j;
        for (int32_t i = 0; i < rows; i++, x += depth, o += cols) {
            int32_t acc[4];
            bmm_row4(x, blk, depth, lo2, acc);
            o[0] = bmm_out_rq(p, acc[0], m, add, right);
            o[1] = bmm_out_rq(p, acc[1], m, add, right);
            o[2] = bmm_out_rq(p, acc[2], m, add, right);
            o[3] = bmm_out_rq(p, acc[3], m, add, right);
        }
    }
    for (; j < cols; j++) {
        bmm_widen(rhs + j * col_step, depth_step, col_step, depth, 1, ro2, blk);
        for (int32_t i = 0; i < rows; i++) {
            out[i * cols + j] = bmm_out_rq(p, bmm_row1(lhs + i * depth, blk, depth, lo2), m, add, right);
        }
    }
}

/** acc + one widened group of lhs values (x02, x13) times the four rhs values at w (offset ro2). */
static inline int32_t bmm_direct_step(int32_t x02, int32_t x13, const int8_t *w, int32_t ro2, int32_t acc)
{
    const int32_t word = mcu_read_s8x4(w);
    return mcu_smlad(x13, mcu_sxtab16_ror8(ro2, word), mcu_smlad(x02, mcu_sxtab16(ro2, word), acc));
}

#if !defined(MCU_CMSIS_DSP_EMULATE) && !defined(__NO_INLINE__) /* every register: not at -O0 */
/** a[c] += the widened lhs groups at x times rhs rows w, w + depth, w + 2 * depth, w + 3 * depth
    (groups >= 1 groups of four): per group one LDRD, four LDR, eight SXTAB16 (the rhs offset
    added) and eight SMLAD. Thirteen register operands, the loop count in LR. */
static inline __attribute__((always_inline)) void bmm_direct4(const int32_t *x, const int8_t *w, int32_t depth,
                                                              int32_t groups, int32_t ro2, int32_t a[4])
{
    int32_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
    const int8_t *w2 = w + 2 * depth;
    int32_t xe, xo, t, u;
#define BMM_COLUMN(acc, load)                                                                                 \
    load "\n\t"                                                                                                \
    "sxtab16 %[u], %[ro], %[t]\n\t"                                                                            \
    "smlad %[" acc "], %[xe], %[u], %[" acc "]\n\t"                                                            \
    "sxtab16 %[u], %[ro], %[t], ror #8\n\t"                                                                    \
    "smlad %[" acc "], %[xo], %[u], %[" acc "]\n\t"
    __asm__ volatile("ldr lr, %[n]\n"
                     "1:\n\t"
                     "ldrd %[xe], %[xo], [%[x]], #8\n\t"
                     BMM_COLUMN("a1", "ldr %[t], [%[w], %[d]]")
                     BMM_COLUMN("a0", "ldr %[t], [%[w]], #4")
                     BMM_COLUMN("a3", "ldr %[t], [%[w2], %[d]]")
                     BMM_COLUMN("a2", "ldr %[t], [%[w2]], #4")
                     "subs lr, lr, #1\n\t"
                     "bne 1b\n"
                     : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [x] "+r"(x), [w] "+r"(w),
                       [w2] "+r"(w2), [xe] "=&r"(xe), [xo] "=&r"(xo), [t] "=&r"(t), [u] "=&r"(u)
                     : [n] "m"(groups), [d] "r"(depth), [ro] "r"(ro2)
                     : "lr", "memory", "cc");
#undef BMM_COLUMN
    a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3;
}
#define BMM_DIRECT4 1
#endif

/** One or two rows: each lhs row widened once (bmm_widen, the lhs offset added), then two rhs rows
    at a time, their words split by SXTAB16 (the rhs offset added) as they are read. */
static void bmm_matrix_direct(const bmm_params *p, const int8_t *lhs, const int8_t *rhs, int32_t *blk, int8_t *out)
{
    const int32_t rows = p->rows, cols = p->cols, depth = p->depth, groups = depth >> 2, rem = depth & 3;
    const int32_t m = p->rq_m, add = p->rq_add, right = p->rq_right;
    const int32_t ro = p->rhs_offset, ro2 = mcu_pkhbt16(ro, ro), lo = p->lhs_offset;
    for (int32_t i = 0; i < rows; i++, lhs += depth, out += cols) {
        bmm_widen(lhs, 1, depth, depth, 1, mcu_pkhbt16(lo, lo), blk);
        int32_t j = 0;
#if defined(BMM_DIRECT4)
        for (; groups > 0 && j + 4 <= cols; j += 4) {
            const int8_t *w = rhs + j * depth;
            int32_t a[4] = {0, 0, 0, 0};
            bmm_direct4(blk, w, depth, groups, ro2, a);
            for (int32_t c = 0; c < 4; c++, w += depth) {
                for (int32_t k = 4 * groups; k < depth; k++) { /* the partial last group */
                    a[c] = (int32_t)((uint32_t)a[c] + (uint32_t)((lhs[k] + lo) * (w[k] + ro)));
                }
                out[j + c] = bmm_out_rq(p, a[c], m, add, right);
            }
        }
#endif
        for (; j + 2 <= cols; j += 2) {
            const int8_t *w0 = rhs + j * depth, *w1 = w0 + depth;
            const int32_t *x = blk;
            int32_t a0 = 0, a1 = 0;
            for (int32_t g = 0; g < groups; g++, x += 2, w0 += 4, w1 += 4) {
                const int32_t x02 = x[0], x13 = x[1];
                a0 = bmm_direct_step(x02, x13, w0, ro2, a0);
                a1 = bmm_direct_step(x02, x13, w1, ro2, a1);
            }
            for (int32_t k = 0; k < rem; k++) { /* the partial last group */
                const int32_t v = lhs[4 * groups + k] + lo;
                a0 = (int32_t)((uint32_t)a0 + (uint32_t)(v * (w0[k] + ro)));
                a1 = (int32_t)((uint32_t)a1 + (uint32_t)(v * (w1[k] + ro)));
            }
            out[j] = bmm_out_rq(p, a0, m, add, right);
            out[j + 1] = bmm_out_rq(p, a1, m, add, right);
        }
        if (j < cols) {
            out[j] = bmm_out_rq(p, bmm_row1(rhs + j * depth, blk, depth, ro2), m, add, right);
        }
    }
}

#else

/** Plain C: both offsets added to every product, four columns per pass over the row. */
static void bmm_matrix_plain(const bmm_params *p, const int8_t *lhs, const int8_t *rhs, int8_t *out)
{
    const int32_t rows = p->rows, cols = p->cols, depth = p->depth;
    const int32_t lo = p->lhs_offset, ro = p->rhs_offset;
    for (int32_t i = 0; i < rows; i++, lhs += depth, out += cols) {
        for (int32_t j = 0; j < cols; j++) {
            const int8_t *w = rhs + j * depth;
            uint32_t a = 0;
            for (int32_t k = 0; k < depth; k++) {
                a += (uint32_t)((lhs[k] + lo) * (w[k] + ro));
            }
            out[j] = bmm_requantize(p, a);
        }
    }
}

#endif

/** dst[c][r] = src[r][c] for an n x m matrix src. */
static void bmm_transpose(const int8_t *src, int32_t n, int32_t m, int8_t *dst)
{
#if defined(MCU_CMSIS_USE_MVE)
    if (15 * m <= 65535) {
        bmm_transpose_mve(src, n, m, dst);
        return;
    }
#endif
    bmm_transpose_plain(src, n, m, dst);
}

#if !defined(BMM_RHS_IN_PLACE)
#define BMM_RHS_IN_PLACE(p) 0
#endif

/** One output matrix from lhs [rows][depth] and rhs: value (j, k) at rhs[j * col_step + k * depth_step]
    ([cols][depth] unless BMM_RHS_IN_PLACE). */
static void bmm_matrix(const bmm_params *p, const int8_t *lhs, const int8_t *rhs, int32_t depth_step, int32_t col_step,
                       int32_t *work, int8_t *out)
{
    (void)depth_step, (void)col_step;
#if defined(MCU_CMSIS_USE_MVE)
    bmm_matrix_mve(p, lhs, rhs, work + 8 * ((p->depth + 3) / 4), out);
#elif defined(MCU_CMSIS_USE_DSP)
    if (BMM_RHS_IN_PLACE(p)) {
        bmm_matrix_widened(p, lhs, rhs, depth_step, col_step, work, out);
    } else {
        bmm_matrix_direct(p, lhs, rhs, work, out);
    }
#else
    (void)work;
    bmm_matrix_plain(p, lhs, rhs, out);
#endif
}

void mcu_cmsis_batch_matmul_s8(const mcu_cmsis_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs,
                               void *scratch, int8_t *output)
{
    const int32_t rows = p->rows, cols = p->cols, depth = p->depth;
    int32_t *work = (int32_t *)scratch; /* the widened block, then the column sums */
    int8_t *rhs_t = (int8_t *)(work + 8 * ((depth + 3) / 4) + cols);
    int8_t *lhs_t = rhs_t + (p->transpose_rhs ? cols * depth : 0);
    const int8_t *last_l = NULL, *last_r = NULL; /* the matrices last transposed */
    for (int32_t b0 = 0; b0 < p->batch0; b0++) {
        for (int32_t b1 = 0; b1 < p->batch1; b1++) {
            for (int32_t b2 = 0; b2 < p->batch2; b2++, output += rows * cols) {
                const int8_t *l = lhs + b0 * p->lhs_step0 + b1 * p->lhs_step1 + b2 * p->lhs_step2;
                const int8_t *r = rhs + b0 * p->rhs_step0 + b1 * p->rhs_step1 + b2 * p->rhs_step2;
                if (p->transpose_lhs) {
                    if (l != last_l) {
                        bmm_transpose(l, depth, rows, lhs_t);
                        last_l = l;
                    }
                    l = lhs_t;
                }
                int32_t depth_step = 1, col_step = depth;
                if (p->transpose_rhs && BMM_RHS_IN_PLACE(p)) {
                    depth_step = cols, col_step = 1;
                } else if (p->transpose_rhs) {
                    if (r != last_r) {
                        bmm_transpose(r, depth, cols, rhs_t);
                        last_r = r;
                    }
                    r = rhs_t;
                }
                bmm_matrix(p, l, r, depth_step, col_step, work, output);
            }
        }
    }
}
