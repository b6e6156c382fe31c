/*
 * DSP path of the matrix products (mcu_cmsis_conv2d_s8, mcu_cmsis_conv2d_1x1_s8,
 * mcu_cmsis_fully_connected_s8): three columns (output pixels, or input rows) times the weight rows
 * in the pair layout (mcu_kernels_cmsis_nn.h), one pair of rows (output channels) per step.
 *
 * The columns are widened once into scratch, each interleaved with the other two: for every two
 * values (k = 2s, 2s + 1) of K4 (K rounded up to a multiple of four, zero padded), the three words
 * (x_p[2s], x_p[2s + 1]) of pixels p = 0, 1, 2 as int16 lanes, at words 3s, 3s + 1, 3s + 2. A
 * weight word a[2s] b[2s] a[2s+1] b[2s+1] splits by SXTB16 / SXTB16 ROR #8 into (a[2s], a[2s+1])
 * and (b[2s], b[2s+1]): each SMLAD is two multiply-accumulates, and one loaded weight word feeds six
 * SMLAD (two rows x three columns). One step of two values: four loads back to back (the Cortex-M4
 * pipelines them: 5 cycles), two SXTB16, six SMLAD: 13 cycles for 12 multiply-accumulates; eight
 * steps per loop iteration, the pointers advanced by the last loads' writeback. The offset layout
 * (below) takes one SXTB16 instead of two; the wide layout (the convolutions with small
 * K, mcu_kernels_cmsis_nn.h) none: five loads back to back (6 cycles) and six SMLAD, 12 cycles.
 *
 * The loop is inline assembly (mcu_pair_dot3): the six accumulators, the three column words, the
 * two halves of the weight word and the three pointers are every register the core has, which gcc
 * 12 cannot allocate around a compiled loop without spilling. -DMCU_CMSIS_DSP_EMULATE builds the
 * same loop in C from the instruction models (the host tests), and so does a build without
 * optimization (MCU_PAIR_ASM 0: at -O0 the frame pointer takes r7 and the loop's operands no longer
 * fit in the rest).
 *
 * The requantization after each pair comes in two instances (not inlined, each with every register
 * to itself): the fast form with SSAT alone (rq proven, whole int8 clamp), and everything else.
 */
#ifndef MCU_CMSIS_PAIR_DSP_H
#define MCU_CMSIS_PAIR_DSP_H

#include "mcu_cmsis_dsp.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)

/** 1 where the loops below are inline assembly (see above), 0 where they are C. */
#if defined(MCU_CMSIS_DSP_EMULATE) || !defined(__OPTIMIZE__)
#define MCU_PAIR_ASM 0
#else
#define MCU_PAIR_ASM 1
#endif

/** Columns per block: pixels (or rows) multiplied together with each pair of weight rows. */
#define MCU_PAIR_COLUMNS 3

/** The output stage of a matrix product: its row count (output channels or units), offset and
    clamp, and its weights' pair layout (MCU_CMSIS_PAIR_*, mcu_kernels_cmsis_nn.h). */
typedef struct {
    int32_t rows, offset, act_min, act_max, pair_offset;
} mcu_pair_out;

/** K rounded up to whole groups of four (the widened columns' length). */
static inline int32_t mcu_pair_k4(int32_t k)
{
    return (k + 3) & ~3;
}

/** Bytes from one pair of rows of K values to the next in the pair layout `layout`. */
static inline int32_t mcu_pair_stride(int32_t k, int32_t layout)
{
    return layout == MCU_CMSIS_PAIR_WIDE ? MCU_CMSIS_PAIR_WIDE_BYTES(k) : 2 * MCU_CMSIS_PAIR_DEPTH(k);
}

/** The records of pairs 0 .. j - 1 of rows in `rq` (fast requantization, mcu_cmsis_rq), pair j's
    after them: in the wide layout each pair's two biases doubled, then its rows' records (conv.py
    wide_records: mcu_pair_rows3_asm_wide reads them from one pointer, the biases as its
    accumulators' start), else the rows' records one after the other. */
static inline const int32_t *mcu_pair_rq_pairs(const int32_t *rq, int32_t j, int32_t layout)
{
    return rq + (layout == MCU_CMSIS_PAIR_WIDE ? 8 : 6) * j;
}

/** Row r's record {m, add, right} in `rq` (mcu_pair_rq_pairs). */
static inline const int32_t *mcu_pair_rq(const int32_t *rq, int32_t r, int32_t layout)
{
    return layout == MCU_CMSIS_PAIR_WIDE ? mcu_pair_rq_pairs(rq, r >> 1, layout) + 2 + 3 * (r & 1) : rq + 3 * r;
}

/** Weight bytes per step (two values of each row) in the pair layout `layout`. */
static inline int32_t mcu_pair_step_bytes(int32_t layout)
{
    return layout == MCU_CMSIS_PAIR_WIDE ? 8 : 4;
}

/** Four int8 values x (values 4g .. 4g + 3 of a column) into their two words (x0, x1) and (x2, x3)
    at slot and slot + cols (cols: the columns interleaved in the block); sum (NULL, or the column's
    running sum, for the offset layout) += x0 + x1 + x2 + x3. */
static inline __attribute__((always_inline)) void mcu_pair_put4(int32_t *slot, int32_t x, const int32_t cols,
                                                                int32_t *sum)
{
    const int32_t x02 = mcu_sxtb16(x), x13 = mcu_sxtb16_ror8(x);
    const int32_t lo = mcu_pkhbt16(x02, x13), hi = mcu_pkhtb16(x13, x02);
    slot[0] = lo;
    slot[cols] = hi;
    if (sum != NULL) {
        *sum = mcu_smlad(lo, 0x00010001, mcu_smlad(hi, 0x00010001, *sum));
    }
}

/** The wide layout's order (its weights stored so, mcu_kernels_cmsis_nn.h): four int8 values x into
    the words (x0, x2) and (x1, x3) at slot and slot + cols, as SXTB16 / SXTB16 ROR #8 give them (no
    PKHBT / PKHTB). */
static inline __attribute__((always_inline)) void mcu_pair_put4_lanes(int32_t *slot, int32_t x, const int32_t cols)
{
    slot[0] = mcu_sxtb16(x);
    slot[cols] = mcu_sxtb16_ror8(x);
}

/** mcu_pair_put4, or with `lanes` (the wide layout, which sums nothing) mcu_pair_put4_lanes. */
static inline __attribute__((always_inline)) void mcu_pair_put4_of(int32_t *slot, int32_t x, const int32_t cols,
                                                                   int32_t *sum, const int lanes)
{
    if (lanes) {
        mcu_pair_put4_lanes(slot, x, cols);
    } else {
        mcu_pair_put4(slot, x, cols, sum);
    }
}

/** Column slot `slot` of the three-column block (K4 values, widened by mcu_pair_put4) put in the
    wide layout's order (mcu_pair_put4_lanes): per four values the words (x0, x1), (x2, x3) into
    (x0, x2), (x1, x3). For the paths off the fast ones, which widen one way for every layout. */
static inline void mcu_pair_wide_order(int32_t *slot, int32_t k4)
{
    for (int32_t i = 0; i < k4; i += 4, slot += 2 * MCU_PAIR_COLUMNS) {
        const int32_t lo = slot[0], hi = slot[MCU_PAIR_COLUMNS];
        slot[0] = mcu_pkhbt16(lo, hi);
        slot[MCU_PAIR_COLUMNS] = mcu_pkhtb16(hi, lo);
    }
}

/** n int8 values (any n) into the column at slot of a block of `cols` interleaved columns, zero
    padded to whole groups of four; sum as mcu_pair_put4. */
static inline __attribute__((always_inline)) void mcu_pair_column_of(const int8_t *x, int32_t n, int32_t *slot,
                                                                     const int32_t cols, int32_t *sum)
{
    int32_t i = 0;
    for (; i + 4 <= n; i += 4, slot += 2 * cols) {
        mcu_pair_put4(slot, mcu_read_s8x4(x + i), cols, sum);
    }
    if (i < n) {
        int8_t tail[4] = {0, 0, 0, 0};
        for (int32_t j = 0; i + j < n; j++) {
            tail[j] = x[i + j];
        }
        mcu_pair_put4(slot, mcu_read_s8x4(tail), cols, sum);
    }
}

/** n values into column slot `slot` (the block + p) of the three-column block; sum as
    mcu_pair_put4. */
static inline __attribute__((always_inline)) void mcu_pair_column(const int8_t *x, int32_t n, int32_t *slot,
                                                                  int32_t *sum)
{
    mcu_pair_column_of(x, n, slot, MCU_PAIR_COLUMNS, sum);
}

/** n values as one column alone (word s: values 2s, 2s + 1). */
static inline void mcu_pair_column_dense(const int8_t *x, int32_t n, int32_t *col)
{
    mcu_pair_column_of(x, n, col, 1, NULL);
}

#if MCU_PAIR_ASM
/* One step (two values) of the block, the pointers biased by -4 bytes (so the last loads of a run
   of N steps can advance them by pre-indexed writeback, no separate adds): the weight word at byte
   4S + 4 of wp, the three column words at byte 12S + 4 of cp. WB is "!" on the last step of a run.
   The plain layout splits the weight word into both rows' pairs (w: row a, b: row b); the offset
   layout takes its SXTB16 (b: row a, into a0..a2) and the raw word (w, into b0..b2). */
#define MCU_PAIR_LOADS_(S, WWB, CWB)                                                                               \
    "ldr %[w], [%[wp], #(4 * " #S " + 4)]" WWB "\n\t"                                                             \
    "ldr %[c0], [%[cp], #(12 * " #S " + 4)]\n\t"                                                                  \
    "ldr %[c1], [%[cp], #(12 * " #S " + 8)]\n\t"                                                                  \
    "ldr %[c2], [%[cp], #(12 * " #S " + 12)]" CWB "\n\t"
#define MCU_PAIR_MACS                                                                                              \
    "smlad %[a0], %[c0], %[w], %[a0]\n\t"                                                                         \
    "smlad %[b0], %[c0], %[b], %[b0]\n\t"                                                                         \
    "smlad %[a1], %[c1], %[w], %[a1]\n\t"                                                                         \
    "smlad %[b1], %[c1], %[b], %[b1]\n\t"                                                                         \
    "smlad %[a2], %[c2], %[w], %[a2]\n\t"                                                                         \
    "smlad %[b2], %[c2], %[b], %[b2]\n\t"
#define MCU_PAIR_STEP_(S, WWB, CWB)                                                                                \
    MCU_PAIR_LOADS_(S, WWB, CWB) "sxtb16 %[b], %[w], ror #8\n\t"                                                  \
                                 "sxtb16 %[w], %[w]\n\t" MCU_PAIR_MACS
#define MCU_PAIR_OMACS                                                                                             \
    "smlad %[a0], %[c0], %[b], %[a0]\n\t"                                                                         \
    "smlad %[b0], %[c0], %[w], %[b0]\n\t"                                                                         \
    "smlad %[a1], %[c1], %[b], %[a1]\n\t"                                                                         \
    "smlad %[b1], %[c1], %[w], %[b1]\n\t"                                                                         \
    "smlad %[a2], %[c2], %[b], %[a2]\n\t"                                                                         \
    "smlad %[b2], %[c2], %[w], %[b2]\n\t"
#define MCU_PAIR_OSTEP_(S, WWB, CWB) MCU_PAIR_LOADS_(S, WWB, CWB) "sxtb16 %[b], %[w]\n\t" MCU_PAIR_OMACS

/* The K loop of one step kind (STEP_ is MCU_PAIR_STEP_ or MCU_PAIR_OSTEP_): two and four step
   runs for steps % 8, then eight steps per iteration. The loop's end is read from memory into the
   dead weight register: thirteen register operands leave GCC room where fourteen do not (its
   Cortex-M7 scheduling made them impossible constraints at -O2). */
#define MCU_PAIR_LOOP(STEP_)                                                                                       \
    do {                                                                                                           \
        if (steps & 2) {                                                                                           \
            __asm__ volatile(STEP_(0, "", "") STEP_(1, "!", "!") : MCU_PAIR_OPERANDS : : "memory");               \
        }                                                                                                          \
        if (steps & 4) {                                                                                           \
            __asm__ volatile(STEP_(0, "", "") STEP_(1, "", "") STEP_(2, "", "") STEP_(3, "!", "!")               \
                             : MCU_PAIR_OPERANDS                                                                   \
                             :                                                                                     \
                             : "memory");                                                                          \
        }                                                                                                          \
        if (steps >= 8) {                                                                                          \
            const int32_t *const end = cp + 3 * (steps & ~7);                                                      \
            __asm__ volatile("1:\n\t" STEP_(0, "", "") STEP_(1, "", "") STEP_(2, "", "") STEP_(3, "", "")         \
                                 STEP_(4, "", "") STEP_(5, "", "") STEP_(6, "", "") STEP_(7, "!", "!")             \
                             "ldr %[w], %[end]\n\t"                                                                \
                             "cmp %[cp], %[w]\n\t"                                                                 \
                             "bne 1b\n\t"                                                                          \
                             : MCU_PAIR_OPERANDS                                                                   \
                             : [end] "m"(end)                                                                      \
                             : "memory", "cc");                                                                    \
        }                                                                                                          \
    } while (0)

#define MCU_PAIR_OPERANDS                                                                                          \
    [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [b0] "+r"(b0), [b1] "+r"(b1), [b2] "+r"(b2), [wp] "+r"(wp),       \
        [cp] "+r"(cp), [w] "=&r"(w), [b] "=&r"(b), [c0] "=&r"(c0), [c1] "=&r"(c1), [c2] "=&r"(c2)
#endif

/** mcu_pair_dot3 in the wide layout: the doubled weights' products summed from 0, halved, added. In
    C, not inlined (small K, off the fast path, which has its own assembly: one copy of the loop).
    Defined only where MCU_PAIR_CONV_DEFS is (the convolutions, whose weights may be wide), a weak
    reference elsewhere: the fully connected kernel shares the generic pair routines below, which
    name it, but never takes the wide layout, and a firmware without a convolution links no wide
    code (an undefined weak reference pulls nothing in, and is never reached). */
__attribute__((noinline, weak)) void mcu_pair_wide_dot3(const int8_t *wp, const int32_t *cp, int32_t steps,
                                                        int32_t *acc);
#if defined(MCU_PAIR_CONV_DEFS)
__attribute__((noinline, weak)) void mcu_pair_wide_dot3(const int8_t *wp, const int32_t *cp, int32_t steps,
                                                        int32_t *acc)
{
    int32_t a0 = 0, a1 = 0, a2 = 0, b0 = 0, b1 = 0, b2 = 0;
    for (int32_t s = 0; s < steps; s++, wp += 8, cp += 3) {
        const int32_t wa = mcu_read_s8x4(wp), wb = mcu_read_s8x4(wp + 4);
        a0 = mcu_smlad(cp[0], wa, a0);
        b0 = mcu_smlad(cp[0], wb, b0);
        a1 = mcu_smlad(cp[1], wa, a1);
        b1 = mcu_smlad(cp[1], wb, b1);
        a2 = mcu_smlad(cp[2], wa, a2);
        b2 = mcu_smlad(cp[2], wb, b2);
    }
    const int32_t sum[6] = {a0 / 2, a1 / 2, a2 / 2, b0 / 2, b1 / 2, b2 / 2};
    for (int i = 0; i < 6; i++) { /* wrapping, as the SMLAD chains of the other layouts */
        acc[i] = (int32_t)((uint32_t)acc[i] + (uint32_t)sum[i]);
    }
}
#endif

/** acc[0..2] (row a, columns 0..2) and acc[3..5] (row b) += the column block (steps of two
    values, an even count) times the pair's weights at wp (the C paths' product: one copy, not
    inlined into each of them; the fast form's pairs take the assembly routines below). sums: NULL for the plain and wide pair
    layouts (wide: 1 for the wide one, mcu_pair_wide_dot3); non-NULL for the offset layout (its
    values unused: that layout once stored row a plus 128, which each column's sum undid). The
    offset layout's loop keeps row a (SXTB16) in a0..a2 and the raw words' products (the same plus
    256 * row b's sums, mcu_kernels_cmsis_nn.h) in b0..b2, then splits them. */
__attribute__((noinline, weak)) void mcu_pair_dot3(const int8_t *wp, const int32_t *cp, int32_t steps, int32_t *acc,
                                                   const int32_t *sums, const int wide)
{
    if (wide) {
        mcu_pair_wide_dot3(wp, cp, steps, acc);
        return;
    }
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], b0 = acc[3], b1 = acc[4], b2 = acc[5];
    if (sums != NULL) {
        b0 = a0, b1 = a1, b2 = a2;
    }
#if !MCU_PAIR_ASM
    for (int32_t s = 0; s < steps; s++, wp += 4, cp += 3) {
        const int32_t word = mcu_read_s8x4(wp);
        const int32_t wa = mcu_sxtb16(word);
        const int32_t wb = sums != NULL ? word : mcu_sxtb16_ror8(word);
        a0 = mcu_smlad(cp[0], wa, a0);
        b0 = mcu_smlad(cp[0], wb, b0);
        a1 = mcu_smlad(cp[1], wa, a1);
        b1 = mcu_smlad(cp[1], wb, b1);
        a2 = mcu_smlad(cp[2], wa, a2);
        b2 = mcu_smlad(cp[2], wb, b2);
    }
#else
    int32_t w, b, c0, c1, c2;
    wp -= 4; /* the biased pointers of MCU_PAIR_LOADS_ */
    cp = (const int32_t *)(const void *)((const int8_t *)cp - 4);
    if (sums != NULL) {
        MCU_PAIR_LOOP(MCU_PAIR_OSTEP_);
    } else {
        MCU_PAIR_LOOP(MCU_PAIR_STEP_);
    }
#endif
    if (sums != NULL) { /* a: row a's sums; b - a: 256 * row b's */
        b0 = acc[3] + ((int32_t)((uint32_t)b0 - (uint32_t)a0) >> 8);
        b1 = acc[4] + ((int32_t)((uint32_t)b1 - (uint32_t)a1) >> 8);
        b2 = acc[5] + ((int32_t)((uint32_t)b2 - (uint32_t)a2) >> 8);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = b0, acc[4] = b1, acc[5] = b2;
}

/** The requantization of the pair accumulators, in one of three forms. */
enum { MCU_PAIR_GENERAL, MCU_PAIR_FAST_FULL, MCU_PAIR_FAST_CLAMP };

static inline int32_t mcu_pair_requant(const mcu_pair_out *o, const int32_t *multiplier, const int32_t *shift,
                                       const int32_t *rq, int32_t r, int mode, int32_t acc)
{
    if (mode == MCU_PAIR_FAST_FULL) {
        return mcu_ssat8(mcu_cmsis_rq(acc, mcu_pair_rq(rq, r, o->pair_offset)));
    }
    if (mode == MCU_PAIR_FAST_CLAMP) {
        return mcu_cmsis_rq_clamp(acc, mcu_pair_rq(rq, r, o->pair_offset), o->act_min, o->act_max);
    }
    return mcu_cmsis_requantize_s8(acc, multiplier[r], shift[r], o->offset, o->act_min, o->act_max);
}

/** out_p[r] for every row r and the three columns p from the widened column block of k values
    (sums: 128 * each column's sum of values, read with the offset layout); `mode` a constant in each
    instance below, so each has its own straight epilogue. */
static inline __attribute__((always_inline)) void mcu_pair_matmul3_mode(
    const mcu_pair_out *o, const int8_t *weights, int32_t k, const int32_t *bias, const int32_t *multiplier,
    const int32_t *shift, const int32_t *rq, const int32_t *col, const int32_t *sums, int8_t *out0, int8_t *out1,
    int8_t *out2, int mode)
{
    const int32_t rows = o->rows;
    const int32_t steps = mcu_pair_k4(k) >> 1;
    const int32_t stride = mcu_pair_stride(k, o->pair_offset);
    const int32_t *const s = o->pair_offset == MCU_CMSIS_PAIR_OFFSET ? sums : NULL;
    const int wide = o->pair_offset == MCU_CMSIS_PAIR_WIDE;
    int32_t r = 0;
    for (; r + 2 <= rows; r += 2, weights += stride) {
        int32_t acc[6] = {bias[r], bias[r], bias[r], bias[r + 1], bias[r + 1], bias[r + 1]};
        mcu_pair_dot3(weights, col, steps, acc, s, wide);
        /* all six values before the stores: an int8 store may alias the records, forcing reloads */
        const int32_t v0a = mcu_pair_requant(o, multiplier, shift, rq, r, mode, acc[0]);
        const int32_t v1a = mcu_pair_requant(o, multiplier, shift, rq, r, mode, acc[1]);
        const int32_t v2a = mcu_pair_requant(o, multiplier, shift, rq, r, mode, acc[2]);
        const int32_t v0b = mcu_pair_requant(o, multiplier, shift, rq, r + 1, mode, acc[3]);
        const int32_t v1b = mcu_pair_requant(o, multiplier, shift, rq, r + 1, mode, acc[4]);
        const int32_t v2b = mcu_pair_requant(o, multiplier, shift, rq, r + 1, mode, acc[5]);
        out0[r] = (int8_t)v0a;
        out1[r] = (int8_t)v1a;
        out2[r] = (int8_t)v2a;
        out0[r + 1] = (int8_t)v0b;
        out1[r + 1] = (int8_t)v1b;
        out2[r + 1] = (int8_t)v2b;
    }
    if (r < rows) { /* an odd last row: its pair's second row is zeros */
        int32_t acc[6] = {bias[r], bias[r], bias[r], 0, 0, 0};
        mcu_pair_dot3(weights, col, steps, acc, s, wide);
        const int32_t v0 = mcu_pair_requant(o, multiplier, shift, rq, r, mode, acc[0]);
        const int32_t v1 = mcu_pair_requant(o, multiplier, shift, rq, r, mode, acc[1]);
        const int32_t v2 = mcu_pair_requant(o, multiplier, shift, rq, r, mode, acc[2]);
        out0[r] = (int8_t)v0;
        out1[r] = (int8_t)v1;
        out2[r] = (int8_t)v2;
    }
}

#if MCU_PAIR_ASM
/*
 * The fast form's pair loop in assembly (mcu_pair_rows3_asm, mcu_pair_rows3_asm_offset for the
 * offset layout): per pair of rows, the accumulators start at the biases, the K loop runs (eight
 * steps per iteration, the offset layout's 32, entered at step 8 - (steps % 8) (32 - (steps %
 * 32)) so any even step count needs no remainder
 * code: every step is a fixed number of 32-bit instructions), and the six results are requantized
 * (mcu_cmsis_rq + SSAT) and stored. The K loop holds every register, so the pair state lives in
 * this job record (offsets fixed: the assembly reads them). Weak, like mcu_pair_matmul3_fast below:
 * the linker keeps one copy of each, not one per kernel file that includes this header.
 */
struct mcu_pair_job {
    int32_t d2, d1;        /* 0, 4: out2 - out0, out1 - out0 */
    int8_t *out;           /* 8: out0 of the next pair */
    const int32_t *rq;     /* 12: the next pair's two records */
    const int8_t *wp;      /* 16: the first pair's weights, at its entry step, less 4 bytes (then in r1) */
    const int32_t *bias;   /* 20: the next pair's biases */
    const int8_t *col;     /* 24: the column block at the entry step, less 4 bytes */
    const int8_t *end;     /* 28: where the K loop's column pointer stops */
    int32_t skip;          /* 32: bytes from a pair's last step to the next pair's entry */
    const int32_t *rq_end; /* 36: the records after the last pair */
    uintptr_t entry;       /* 40: the K loop's entry address (set by the assembly) */
    int32_t e;             /* 44: the entry step's index in the loop body, (8 - steps % 8) % 8 (the offset
                              layout's (32 - steps % 32) % 32; the wide layout's straight steps:
                              MCU_PAIR_WIDE_STEPS - steps) */
    int32_t sums[3];       /* 48, 52, 56: unused (the offset layout's column sums, before it stored
                              row a as it is) */
    int32_t rows;          /* 60: 0 (the 3x3 three-channel windows' runs, which set it, now take
                              mcu_conv3_rows_asm, mcu_cmsis_conv3_dsp.h) */
    /* the wide layout's run of dense blocks (mcu_pair_rows3_asm_wide; the 1x1 kernel's consecutive
       pixels): */
    const int8_t *x;       /* 64: the next block's first input pixel, its three pixels widened by the
                              assembly; NULL: the caller widened its one block */
    int32_t in_c;          /* 68: values per pixel (a multiple of four; with rows, bytes from one window
                              to the next) */
    int32_t *block;        /* 72: the column block they are widened into */
    int32_t blocks;        /* 76: the blocks left, this one included (0 or 1: this one) */
    const int32_t *rq0;    /* 80: every block's first pair's rq, wp and bias */
    const int8_t *wp0;     /* 84 */
    const int32_t *bias0;  /* 88 */
};

/* Registers in the K loop: r2-r4 row a, r5-r7 row b (columns 0..2), r8 the weight word, r9 its
   split, r10-r12 the column words, r1 the weights, lr the columns, r0 their end. */
#define MCU_PAIR_ALOADS_(S, WB)                                                                                    \
    "ldr.w r8, [r1, #(4 * " #S " + 4)]" WB "\n\t"                                                                 \
    "ldr.w r10, [lr, #(12 * " #S " + 4)]\n\t"                                                                     \
    "ldr.w r11, [lr, #(12 * " #S " + 8)]\n\t"                                                                     \
    "ldr.w r12, [lr, #(12 * " #S " + 12)]" WB "\n\t"
/* plain layout: 12 instructions (48 bytes) per step */
#define MCU_PAIR_ASTEP_(S, WB)                                                                                     \
    MCU_PAIR_ALOADS_(S, WB)                                                                                        \
    "sxtb16 r9, r8, ror #8\n\t"                                                                                   \
    "sxtb16 r8, r8\n\t"                                                                                           \
    "smlad r2, r10, r8, r2\n\t"                                                                                   \
    "smlad r5, r10, r9, r5\n\t"                                                                                   \
    "smlad r3, r11, r8, r3\n\t"                                                                                   \
    "smlad r6, r11, r9, r6\n\t"                                                                                   \
    "smlad r4, r12, r8, r4\n\t"                                                                                   \
    "smlad r7, r12, r9, r7\n\t"
/* offset layout: 11 instructions (44 bytes) per step; row a into r2-r4, the raw word's products
   into r5-r7 */
#define MCU_PAIR_AOSTEP_(S, WB)                                                                                    \
    MCU_PAIR_ALOADS_(S, WB)                                                                                        \
    "sxtb16 r9, r8\n\t"                                                                                           \
    "smlad r2, r10, r9, r2\n\t"                                                                                   \
    "smlad r5, r10, r8, r5\n\t"                                                                                   \
    "smlad r3, r11, r9, r3\n\t"                                                                                   \
    "smlad r6, r11, r8, r6\n\t"                                                                                   \
    "smlad r4, r12, r9, r4\n\t"                                                                                   \
    "smlad r7, r12, r8, r7\n\t"

/* wide layout: 11 instructions (44 bytes) per step; the rows' int16 words straight into SMLAD; WB
   "!" advances the weights (the column pointer stays); the columns at r0 (lr keeps the pair's
   records, mcu_pair_rows3_asm_wide) */
#define MCU_PAIR_AWSTEP_(S, WB) MCU_PAIR_AWLOADS_(S, WB) MCU_PAIR_AWMACS
#define MCU_PAIR_AWLOADS_(S, WB)                                                                                   \
    "ldr.w r8, [r1, #(8 * " #S " + 4)]\n\t"                                                                      \
    "ldr.w r9, [r1, #(8 * " #S " + 8)]" WB "\n\t"                                                                \
    "ldr.w r10, [r0, #(12 * " #S " + 4)]\n\t"                                                                    \
    "ldr.w r11, [r0, #(12 * " #S " + 8)]\n\t"                                                                    \
    "ldr.w r12, [r0, #(12 * " #S " + 12)]\n\t"
#define MCU_PAIR_AWMACS                                                                                            \
    "smlad r2, r10, r8, r2\n\t"                                                                                  \
    "smlad r5, r10, r9, r5\n\t"                                                                                  \
    "smlad r3, r11, r8, r3\n\t"                                                                                  \
    "smlad r6, r11, r9, r6\n\t"                                                                                  \
    "smlad r4, r12, r8, r4\n\t"                                                                                  \
    "smlad r7, r12, r9, r7\n\t"

/* requantize accumulator A in place (record m, add, right in r8, r9, r10; r11 scratch) */
#define MCU_PAIR_AREQ(A)                                                                                           \
    "lsl r11, " A ", #1\n\t" MCU_PAIR_AREQ2(A, "r11")
/* the same of A = 256 * acc (the offset layout's row b): 2 * acc by an ASR #7, A's sign acc's */
#define MCU_PAIR_AREQ8(A)                                                                                          \
    "asr r11, " A ", #7\n\t" MCU_PAIR_AREQ2(A, "r11")
/* the same of A = 2 * acc (the wide layout's doubled weights and biases): no LSL */
#define MCU_PAIR_AREQW(A) MCU_PAIR_AREQ2(A, A)
#define MCU_PAIR_AREQ2(A, A2)                                                                                      \
    "smmlar r11, " A2 ", r8, r9\n\t"                                                                              \
    "add r11, r11, " A ", asr #31\n\t"                                                                            \
    "asr " A ", r11, r10\n\t"                                                                                     \
    "ssat " A ", #8, " A "\n\t"
/* The same without the negative accumulators' rounding correction (the ADD of A's sign), for
   layers whose output offset is at or below the clamp's minimum (ReLU-like: mcu_pair_relu): there
   every negative accumulator's output is the minimum either way (mcu_cmsis_rq3_relu), one cycle an
   output less. */
#define MCU_PAIR_AREQ_RELU(A) "lsl r11, " A ", #1\n\t" MCU_PAIR_AREQ2_RELU(A, "r11")
#define MCU_PAIR_AREQ8_RELU(A) "asr r11, " A ", #7\n\t" MCU_PAIR_AREQ2_RELU(A, "r11")
#define MCU_PAIR_AREQW_RELU(A) MCU_PAIR_AREQ2_RELU(A, A)
#define MCU_PAIR_AREQ2_RELU(A, A2)                                                                                 \
    "smmlar r11, " A2 ", r8, r9\n\t"                                                                              \
    "asr " A ", r11, r10\n\t"                                                                                     \
    "ssat " A ", #8, " A "\n\t"

/* r0: the job; the entry address = label 4 + e * STEP_BYTES */
#define MCU_PAIR_APROLOGUE(STEP_BYTES)                                                                             \
    "push {r4-r11, lr}\n\t"                                                                                       \
    "push {r0}\n\t" /* [sp]: the job */                                                                           \
    "adr.w r9, 4f\n\t"                                                                                            \
    "ldr r8, [r0, #44]\n\t"                                                                                       \
    "mov r10, #" #STEP_BYTES "\n\t"                                                                               \
    "mla r9, r8, r10, r9\n\t"                                                                                     \
    "orr r9, r9, #1\n\t"                                                                                          \
    "str r9, [r0, #40]\n\t"                                                                                       \
    "ldr r1, [r0, #16]\n"

/* the K loop of STEP_, at label 4: eight steps per iteration (MCU_PAIR_AKLOOP), or 32
   (MCU_PAIR_AKLOOP32: the offset layout's long K, a quarter of the loop ends for 704 bytes more
   code; two runs of sixteen steps, each advancing the pointers by its last loads' writeback, whose
   pre-indexed offset reaches 255 bytes: mcu_pair_entry_lead) */
#define MCU_PAIR_AKSTEPS8_(STEP_, LAST)                                                                            \
    STEP_(0, "") STEP_(1, "") STEP_(2, "") STEP_(3, "") STEP_(4, "") STEP_(5, "") STEP_(6, "") STEP_(7, LAST)
#define MCU_PAIR_AKSTEPS16_(STEP_)                                                                                 \
    MCU_PAIR_AKSTEPS8_(STEP_, "") STEP_(8, "") STEP_(9, "") STEP_(10, "") STEP_(11, "") STEP_(12, "")              \
        STEP_(13, "") STEP_(14, "") STEP_(15, "!")
#define MCU_PAIR_AKLOOP_(STEPS)                                                                                    \
    ".balign 4\n"                                                                                                 \
    "4:\n\t" STEPS                                                                                                \
    "cmp lr, r0\n\t"                                                                                              \
    "bne 4b\n\t"
#define MCU_PAIR_AKLOOP(STEP_) MCU_PAIR_AKLOOP_(MCU_PAIR_AKSTEPS8_(STEP_, "!"))
#define MCU_PAIR_AKLOOP32(STEP_) MCU_PAIR_AKLOOP_(MCU_PAIR_AKSTEPS16_(STEP_) MCU_PAIR_AKSTEPS16_(STEP_))

/* After a pair's K steps (r0: the job, r1: the weights after its last step): its six results
   requantized in place (r2-r7: every register the stores need stays free), then stored, the job
   advanced to the next pair and r1 to its weights; the flags eq after the last pair, then r12 the next
   out. Back to label 1 for the next pair (MCU_PAIR_APAIRS_END_), or, in the wide and offset routines,
   which place their pair start right after it, falling through into the next pair (no taken branch). */
#define MCU_PAIR_APAIRS_TAIL_(REQ, REQB)                                                                           \
    "ldr r12, [r0, #8]\n\t" /* out */                                                                            \
    "ldr lr, [r0, #12]\n\t" /* rq */                                                                             \
    MCU_PAIR_AREQ6_(REQ, REQB) MCU_PAIR_ASTORE6 "str lr, [r0, #12]\n\t" MCU_PAIR_ANEXT
/* the six results requantized in place from the records at lr (advanced past them) */
#define MCU_PAIR_AREQ6_(REQ, REQB)                                                                                 \
    "ldm lr!, {r8, r9, r10}\n\t"                                                                                  \
    REQ("r2") REQ("r3") REQ("r4")                                                                                 \
    "ldm lr!, {r8, r9, r10}\n\t"                                                                                  \
    REQB("r5") REQB("r6") REQB("r7")
/* ... stored from r12 (out) on (advanced past them); r10 the skip, r11 rq_end */
#define MCU_PAIR_ASTORE6_                                                                                          \
    "ldr r8, [r0, #4]\n\t" /* d1 */                                                                              \
    "ldr r9, [r0, #0]\n\t" /* d2 */                                                                              \
    "ldr r10, [r0, #32]\n\t" /* skip */                                                                          \
    "ldr r11, [r0, #36]\n\t" /* rq_end */                                                                        \
    "add r8, r12, r8\n\t" /* out1, out2: immediate offsets store in one cycle, register offsets in two */      \
    "add r9, r12, r9\n\t"                                                                                        \
    "strb r5, [r12, #1]\n\t"                                                                                     \
    "strb r2, [r12], #2\n\t"                                                                                     \
    "strb r6, [r8, #1]\n\t"                                                                                      \
    "strb r3, [r8]\n\t"                                                                                          \
    "strb r7, [r9, #1]\n\t"                                                                                      \
    "strb r4, [r9]\n\t"
/* the same, the job's out advanced */
#define MCU_PAIR_ASTORE6 MCU_PAIR_ASTORE6_ "str r12, [r0, #8]\n\t"
/* the flags eq after the last pair (lr at rq_end), r1 to the next pair's weights */
#define MCU_PAIR_ANEXT                                                                                             \
    "cmp lr, r11\n\t"                                                                                            \
    "add r1, r1, r10\n\t"
#define MCU_PAIR_APAIRS_END_(REQ, REQB) MCU_PAIR_APAIRS_TAIL_(REQ, REQB) "bne 1b\n\t"
#define MCU_PAIR_AEPILOGUE MCU_PAIR_APAIRS_END_(MCU_PAIR_AREQ, MCU_PAIR_AREQ) MCU_PAIR_ARETURN
#define MCU_PAIR_ARETURN                                                                                           \
    "add sp, #4\n\t"                                                                                            \
    "pop {r4-r11, pc}\n\t"

__attribute__((naked, noinline, weak)) void mcu_pair_rows3_asm(struct mcu_pair_job *job)
{
    (void)job;
    __asm__ volatile(MCU_PAIR_APROLOGUE(48)
                     "1:\n\t" /* a pair (r0: the job): the biases, then into the K loop */
                     "ldr r8, [r0, #20]\n\t"
                     "ldr lr, [r0, #24]\n\t"
                     "ldrd r2, r5, [r8], #8\n\t"
                     "str r8, [r0, #20]\n\t"
                     "mov r3, r2\n\t"
                     "mov r4, r2\n\t"
                     "mov r6, r5\n\t"
                     "mov r7, r5\n\t"
                     "ldr r9, [r0, #40]\n\t"
                     "ldr r0, [r0, #28]\n\t"
                     "bx r9\n\t"
                     MCU_PAIR_AKLOOP(MCU_PAIR_ASTEP_)
                     "ldr r0, [sp]\n\t"
                     MCU_PAIR_AEPILOGUE);
}

/* The wide layout's K loop straight (its K is below 48: at most MCU_PAIR_WIDE_STEPS steps), entered
   at step MCU_PAIR_WIDE_STEPS - steps (job->e), no loop end to compare, r0 keeping the job through
   it; the weights doubled, the biases doubled too, so the accumulators hold 2 * acc, which the
   requantization takes without its LSL (2 * acc fits: the records' proof). With job->x (the 1x1
   kernel's consecutive pixels, dense_blocks) the routine runs job->blocks blocks, widening each
   block's three pixels itself: one call for the layer, no C between blocks. */
/* The runs of dense blocks (job->x; mcu_pair_rows3_asm_wide, mcu_pair_rows3_asm_offset): at the
   routine's start, with job->x to the block's widening at label 5 (r2: its first pixel); after a
   block's last pair, another block (its outputs d2 after this one's end, the pairs from the first)
   or the return; at label 5 r3 the pixels' spacing, r4 the block, r12 the first pixel's end (the
   second pixel), job->x the next block's first pixel, and LOAD (MCU_PAIR_ABLOCKS_NEXT's argument: the
   wide routine's load of job->rows) done. */
#define MCU_PAIR_ABLOCKS_ENTRY                                                                                     \
    "ldr r2, [r0, #64]\n\t"                                                                                       \
    "cmp r2, #0\n\t"                                                                                              \
    "bne 5f\n\t"
#define MCU_PAIR_ABLOCKS_END                                                                                       \
    "ldr r8, [r0, #76]\n\t"                                                                                       \
    "subs r8, r8, #1\n\t"                                                                                         \
    "bgt 8f\n\t" MCU_PAIR_ARETURN
#define MCU_PAIR_ABLOCKS_NEXT(LOAD)                                                                                \
    "8:\n\t"                                                                                                      \
    "str r8, [r0, #76]\n\t"                                                                                       \
    "ldr r9, [r0, #0]\n\t"                                                                                        \
    "ldr r10, [r0, #80]\n\t"                                                                                      \
    "ldr r11, [r0, #88]\n\t"                                                                                      \
    "ldr r1, [r0, #84]\n\t"                                                                                       \
    "add r12, r12, r9\n\t"                                                                                        \
    "str r12, [r0, #8]\n\t"                                                                                       \
    "str r10, [r0, #12]\n\t"                                                                                      \
    "str r11, [r0, #20]\n\t"                                                                                      \
    "ldr r2, [r0, #64]\n\t"                                                                                       \
    "5:\n\t"                                                                                                      \
    "ldr r3, [r0, #68]\n\t"                                                                                       \
    "ldr r4, [r0, #72]\n\t"                                                                                       \
    LOAD                                                                                                          \
    "add r12, r2, r3\n\t"                                                                                         \
    "add r8, r12, r3, lsl #1\n\t"                                                                                 \
    "str r8, [r0, #64]\n\t"
/* The offset layout's widening of one pixel's word X (mcu_pair_put4: words (x0, x1) at byte LO of
   r4, (x2, x3) at LO + 12, WB "!" on the group's last store); r11, lr scratch. */
#define MCU_PAIR_AOPUT4_(X, LO, WB)                                                                                \
    "sxtb16 r11, " X "\n\t"                                                                                        \
    "sxtb16 " X ", " X ", ror #8\n\t"                                                                               \
    "pkhtb lr, " X ", r11, asr #16\n\t"                                                                            \
    "pkhbt r11, r11, " X ", lsl #16\n\t"                                                                           \
    "str r11, [r4, #" #LO "]\n\t"                                                                                  \
    "str lr, [r4, #(" #LO " + 12)]" WB "\n\t"
#define MCU_PAIR_WIDE_STEPS 24
/* the wide layout's widening of a group of four values of three columns, loaded into r8, r9, r10:
   split into r5-r10 in mcu_pair_put4_lanes' order (AWSPLIT3), then stored with one STM at r4 */
#define MCU_PAIR_AWSPLIT3                                                                                          \
    "sxtb16 r5, r8\n\t"                                                                                            \
    "sxtb16 r6, r9\n\t"                                                                                            \
    "sxtb16 r7, r10\n\t"                                                                                           \
    "sxtb16 r8, r8, ror #8\n\t"                                                                                    \
    "sxtb16 r9, r9, ror #8\n\t"                                                                                    \
    "sxtb16 r10, r10, ror #8\n\t"
#define MCU_PAIR_AWPUT3 MCU_PAIR_AWSPLIT3 "stm r4!, {r5-r10}\n\t"
/* MCU_PAIR_AWPUT3 with six STRs (1 cycle each, the STM 7): in the 1x1 runs' widening loop */
#define MCU_PAIR_AWPUT3_STR                                                                                        \
    MCU_PAIR_AWSPLIT3                                                                                              \
    "str r5, [r4], #24\n\t"                                                                                        \
    "str r6, [r4, #-20]\n\t"                                                                                       \
    "str r7, [r4, #-16]\n\t"                                                                                       \
    "str r8, [r4, #-12]\n\t"                                                                                       \
    "str r9, [r4, #-8]\n\t"                                                                                        \
    "str r10, [r4, #-4]\n\t"
/* a word at byte OFF of each of the three windows' rows at r2, r12, r3 into r8, r9, r10 */
#define MCU_PAIR_AW3LOADS_(OFF)                                                                                    \
    "ldr r8, [r2, #" OFF "]\n\t"                                                                                  \
    "ldr r9, [r12, #" OFF "]\n\t"                                                                                 \
    "ldr r10, [r3, #" OFF "]\n\t"
/* the wide layout's straight steps but the last, at label 4 */
#define MCU_PAIR_AWKLOOP ".balign 4\n" "4:\n\t" MCU_PAIR_AWSTEPS_0_11 MCU_PAIR_AWSTEPS_12_22
#define MCU_PAIR_AWSTEPS_0_11                                                                                      \
    MCU_PAIR_AWSTEP_(0, "") MCU_PAIR_AWSTEP_(1, "") MCU_PAIR_AWSTEP_(2, "") MCU_PAIR_AWSTEP_(3, "")                \
        MCU_PAIR_AWSTEP_(4, "") MCU_PAIR_AWSTEP_(5, "") MCU_PAIR_AWSTEP_(6, "") MCU_PAIR_AWSTEP_(7, "")            \
            MCU_PAIR_AWSTEP_(8, "") MCU_PAIR_AWSTEP_(9, "") MCU_PAIR_AWSTEP_(10, "") MCU_PAIR_AWSTEP_(11, "")
#define MCU_PAIR_AWSTEPS_12_22                                                                                     \
    MCU_PAIR_AWSTEP_(12, "") MCU_PAIR_AWSTEP_(13, "") MCU_PAIR_AWSTEP_(14, "") MCU_PAIR_AWSTEP_(15, "")            \
        MCU_PAIR_AWSTEP_(16, "") MCU_PAIR_AWSTEP_(17, "") MCU_PAIR_AWSTEP_(18, "") MCU_PAIR_AWSTEP_(19, "")        \
            MCU_PAIR_AWSTEP_(20, "") MCU_PAIR_AWSTEP_(21, "")                                                      \
                MCU_PAIR_AWLOADS_(22, "!") "ldr r0, [sp]\n\t" /* the job again, pipelined */ MCU_PAIR_AWMACS
/* Defined where MCU_PAIR_CONV_DEFS is, a weak reference elsewhere (as mcu_pair_wide_dot3). */
__attribute__((naked, noinline, weak)) void mcu_pair_rows3_asm_wide(struct mcu_pair_job *job);
#if defined(MCU_PAIR_CONV_DEFS)
__attribute__((naked, noinline, weak)) void mcu_pair_rows3_asm_wide(struct mcu_pair_job *job)
{
    (void)job;
    __asm__ volatile(MCU_PAIR_APROLOGUE(44)
                     MCU_PAIR_ABLOCKS_ENTRY
                     "ldr lr, [r0, #12]\n\t"
                     "b 1f\n\t"
                     MCU_PAIR_AWKLOOP
                     /* (r0 the job again since the last step's loads) the records at lr */
                     MCU_PAIR_AREQ6_(MCU_PAIR_AREQW, MCU_PAIR_AREQW)
                     "ldr r12, [r0, #8]\n\t"
                     MCU_PAIR_ASTORE6 MCU_PAIR_ANEXT
                     "beq 7f\n\t" /* else the next pair falls through: no taken branch */
                     "1:\n\t" /* a pair (r0: the job; lr: its doubled biases, then its records,
                                  mcu_pair_rq_pairs): the biases, then into the K steps, the columns at r0 */
                     "ldr r9, [r0, #40]\n\t"
                     "ldr r0, [r0, #24]\n\t"
                     /* the biases and the weights' last step in one run of pipelined loads (no LDRD:
                        3 cycles, never pipelined), row b's weights in r4 until its SMLADs */
                     "ldr r2, [lr], #8\n\t"
                     "ldr.w r8, [r1, #(8 * 23 + 4)]\n\t"
                     "ldr.w r10, [r0, #(12 * 23 + 4)]\n\t"
                     "ldr r5, [lr, #-4]\n\t"
                     "ldr.w r4, [r1, #(8 * 23 + 8)]\n\t"
                     "ldr.w r11, [r0, #(12 * 23 + 8)]\n\t"
                     "ldr.w r12, [r0, #(12 * 23 + 12)]\n\t"
                     /* the last step's sums from the doubled biases (no MOVs, no LSLs) */
                     "smlad r6, r11, r4, r5\n\t"
                     "smlad r7, r12, r4, r5\n\t"
                     "smlad r5, r10, r4, r5\n\t"
                     "smlad r3, r11, r8, r2\n\t"
                     "smlad r4, r12, r8, r2\n\t"
                     "smlad r2, r10, r8, r2\n\t"
                     "bx r9\n\t" /* the other steps (at least one: K4 >= 4) */
                     "7:\n\t" MCU_PAIR_ABLOCKS_END
                     MCU_PAIR_ABLOCKS_NEXT("ldr lr, [r0, #80]\n\t") /* the first pair's biases */
                     /* a block's three pixels from r2 widened, a group of four values of each per pass
                        (mcu_pair_put4_lanes' order, one STM), then its pairs (the 3x3 three-channel
                        windows: mcu_conv3_rows_asm, mcu_cmsis_conv3_dsp.h) */
                     "2:\n\t"
                     "ldr r9, [r2, r3]\n\t"
                     "ldr r10, [r2, r3, lsl #1]\n\t"
                     "ldr r8, [r2], #4\n\t"
                     MCU_PAIR_AWPUT3_STR
                     "cmp r2, r12\n\t"
                     "bne 2b\n\t"
                     "b 1b\n\t");
}
#endif

/* The offset layout: row a's accumulators start at bias_a, row b's at bias_a + 256 * bias_b, so raw
   - row a is 256 * row b's accumulator, exactly (|bias_b + sum x * b| < 2^23: common.pair_layout's
   proof), requantized from it (MCU_PAIR_AREQ8). With job->x it runs job->blocks blocks as the wide
   layout's routine does, widening each block's three pixels itself. Row a stored as it is (not plus
   128, undone by 128 times each column's sum: mcu_kernels_cmsis_nn.h), a pair's start loads no
   column sums and the widening sums nothing: est. M4 cycles per pair 76 -> 72, per block of K
   values 1.5 K fewer (VWW #10: 736,510 -> 725,153). */
__attribute__((naked, noinline, weak)) void mcu_pair_rows3_asm_offset(struct mcu_pair_job *job);
/** mcu_pair_rows3_asm_offset without the rounding correction of negative accumulators (mcu_pair_relu's
    layers; kernel path PAIR_RELU, the other PAIR_SIGNED). */
__attribute__((naked, noinline, weak)) void mcu_pair_rows3_asm_offset_relu(struct mcu_pair_job *job);
#if defined(MCU_PAIR_CONV_DEFS) /* as mcu_pair_rows3_asm_wide: only convolutions take the offset layout */
/* The offset routine's frame: [sp] the job, [sp, #4] out, [sp, #8] rq, [sp, #12] bias, the pair
   loop's three running pointers (copied from the job at the start, reset from rq0 and bias0 between
   blocks; the job's own are left as they were). After the K loop r0 is not the job, but sp is free,
   so the tail's loads of the job, out, rq and the row a records run back to back (one cycle each
   after the first) where loads of the job's fields had to wait for the job; est. M4 cycles per
   pair: 80 -> 76 (VWW #10). */
#define MCU_PAIR_OPROLOGUE                                                                                         \
    "push {r4-r11, lr}\n\t"                                                                                       \
    "ldr r2, [r0, #8]\n\t"                                                                                        \
    "ldr r3, [r0, #12]\n\t"                                                                                       \
    "ldr r4, [r0, #20]\n\t"                                                                                       \
    "push {r0, r2, r3, r4}\n\t"                                                                                   \
    "adr.w r9, 4f\n\t"                                                                                            \
    "ldr r8, [r0, #44]\n\t"                                                                                       \
    "mov r10, #44\n\t"                                                                                            \
    "mla r9, r8, r10, r9\n\t"                                                                                     \
    "orr r9, r9, #1\n\t"                                                                                          \
    "str r9, [r0, #40]\n\t"                                                                                       \
    "ldr r1, [r0, #16]\n"
#define MCU_PAIR_ORETURN                                                                                           \
    "add sp, #16\n\t"                                                                                            \
    "pop {r4-r11, pc}\n\t"
/* after a pair's K steps: r0 the job again, r12 out, lr the records (row a's loaded, lr past the
   pair's), row b's 256 * acc into r5-r7, the six requantized and stored, the frame's out and rq
   advanced; the flags eq after the last pair, r12 the next out (MCU_PAIR_APAIRS_TAIL_'s) */
#define MCU_PAIR_OPAIRS_TAIL_(REQ, REQB)                                                                           \
    "ldr r0, [sp]\n\t"                                                                                            \
    "ldr lr, [sp, #8]\n\t"                                                                                        \
    "ldr r12, [sp, #4]\n\t"                                                                                       \
    "ldr r10, [lr, #8]\n\t"                                                                                       \
    "ldr r9, [lr, #4]\n\t"                                                                                        \
    "ldr r8, [lr], #24\n\t"                                                                                       \
    "sub r5, r5, r2\n\t"                                                                                          \
    "sub r6, r6, r3\n\t"                                                                                          \
    "sub r7, r7, r4\n\t"                                                                                          \
    REQ("r2") REQ("r3") REQ("r4")                                                                                 \
    "ldr r10, [lr, #-4]\n\t"                                                                                      \
    "ldr r9, [lr, #-8]\n\t"                                                                                       \
    "ldr r8, [lr, #-12]\n\t"                                                                                      \
    REQB("r5") REQB("r6") REQB("r7")                                                                              \
    MCU_PAIR_ASTORE6_                                                                                              \
    "str r12, [sp, #4]\n\t"                                                                                      \
    "str lr, [sp, #8]\n\t" MCU_PAIR_ANEXT
/* MCU_PAIR_ABLOCKS_END / _NEXT with the frame's out, rq and bias */
#define MCU_PAIR_OBLOCKS_END                                                                                       \
    "ldr r8, [r0, #76]\n\t"                                                                                       \
    "subs r8, r8, #1\n\t"                                                                                         \
    "bgt 8f\n\t" MCU_PAIR_ORETURN
#define MCU_PAIR_OBLOCKS_NEXT                                                                                      \
    "8:\n\t"                                                                                                      \
    "str r8, [r0, #76]\n\t"                                                                                       \
    "ldr r9, [r0, #0]\n\t"                                                                                        \
    "ldr r10, [r0, #80]\n\t"                                                                                      \
    "ldr r11, [r0, #88]\n\t"                                                                                      \
    "ldr r1, [r0, #84]\n\t"                                                                                       \
    "add r12, r12, r9\n\t"                                                                                        \
    "str r12, [sp, #4]\n\t"                                                                                       \
    "str r10, [sp, #8]\n\t"                                                                                       \
    "str r11, [sp, #12]\n\t"                                                                                      \
    "ldr r2, [r0, #64]\n\t"                                                                                       \
    "5:\n\t"                                                                                                      \
    "ldr r3, [r0, #68]\n\t"                                                                                       \
    "ldr r4, [r0, #72]\n\t"                                                                                       \
    "add r12, r2, r3\n\t"                                                                                         \
    "add r8, r12, r3, lsl #1\n\t"                                                                                 \
    "str r8, [r0, #64]\n\t"
/* the offset routine, its requantization REQ (row a), REQB (row b) */
#define MCU_PAIR_OFFSET_ROUTINE(REQ, REQB)                                                                         \
    MCU_PAIR_OPROLOGUE                                                                                             \
    MCU_PAIR_ABLOCKS_ENTRY                                                                                         \
    "b 1f\n\t"                                                                                                     \
    MCU_PAIR_AKLOOP32(MCU_PAIR_AOSTEP_)                                                                            \
    MCU_PAIR_OPAIRS_TAIL_(REQ, REQB)                                                                               \
    "beq 7f\n\t" /* else the next pair falls through: no taken branch */                                           \
    "1:\n\t" /* a pair (r0: the job; its loads back to back, the biases' two LDRs among them: an LDRD              \
                costs 3 cycles, never pipelined) */                                                                \
    "ldr r8, [sp, #12]\n\t"                                                                                        \
    "ldr lr, [r0, #24]\n\t"                                                                                        \
    "ldr r2, [r8], #8\n\t"                                                                                         \
    "ldr r12, [r0, #40]\n\t"                                                                                       \
    "ldr r5, [r8, #-4]\n\t"                                                                                        \
    "ldr r0, [r0, #28]\n\t"                                                                                        \
    "str r8, [sp, #12]\n\t"                                                                                        \
    "mov r3, r2\n\t"                                                                                               \
    "mov r4, r2\n\t"                                                                                               \
    "add r5, r2, r5, lsl #8\n\t"                                                                                   \
    "mov r6, r5\n\t"                                                                                               \
    "mov r7, r5\n\t"                                                                                               \
    "bx r12\n\t"                                                                                                   \
    "7:\n\t" MCU_PAIR_OBLOCKS_END                                                                                  \
    MCU_PAIR_OBLOCKS_NEXT                                                                                          \
    /* a block's three pixels from r2 widened, a group of four values of each per pass                             \
    (mcu_pair_put4's order; r1 keeps the first pair's weights) */                                                 \
    "sub r4, r4, #4\n\t" /* the group's last store advances it by its writeback */                                 \
    "2:\n\t"                                                                                                       \
    "ldr r9, [r2, r3]\n\t"                                                                                         \
    "ldr r10, [r2, r3, lsl #1]\n\t"                                                                                \
    "ldr r8, [r2], #4\n\t"                                                                                         \
    MCU_PAIR_AOPUT4_("r8", 4, "")                                                                                  \
    MCU_PAIR_AOPUT4_("r9", 8, "")                                                                                  \
    MCU_PAIR_AOPUT4_("r10", 12, "!")                                                                               \
    "cmp r2, r12\n\t"                                                                                              \
    "bne 2b\n\t"                                                                                                   \
    "b 1b\n\t"
__attribute__((naked, noinline, weak)) void mcu_pair_rows3_asm_offset(struct mcu_pair_job *job)
{
    (void)job;
    __asm__ volatile(MCU_PAIR_OFFSET_ROUTINE(MCU_PAIR_AREQ, MCU_PAIR_AREQ8));
}
__attribute__((naked, noinline, weak)) void mcu_pair_rows3_asm_offset_relu(struct mcu_pair_job *job)
{
    (void)job;
    __asm__ volatile(MCU_PAIR_OFFSET_ROUTINE(MCU_PAIR_AREQ_RELU, MCU_PAIR_AREQ8_RELU));
}
#endif

/** Whether the assembly takes K values in the pair layout `layout` (the wide one's straight steps:
    up to 2 * MCU_PAIR_WIDE_STEPS values, every K it is picked for). */
static inline int mcu_pair_asm_takes(int32_t k, int32_t layout)
{
    return k > 0 && (layout != MCU_CMSIS_PAIR_WIDE || mcu_pair_k4(k) <= 2 * MCU_PAIR_WIDE_STEPS);
}

/** Steps by which a pair's entry pointers (weights, columns) lead where they would be for entry step
    e if the loop's steps all read from one base: the offset layout's 32 steps are two runs of 16,
    each advancing the pointers by its last loads' writeback (a pre-indexed offset reaches 255
    bytes: 16 steps of the columns, not 32), so an entry in the second run starts 16 steps on. */
static inline int32_t mcu_pair_entry_lead(int32_t layout, int32_t e)
{
    return layout == MCU_CMSIS_PAIR_OFFSET && e >= 16 ? 16 : 0;
}

/** The job of the fast form's full pairs (`pairs` >= 1) from their first pair on, the column
    block col; each run (mcu_pair_job_run) sets its outputs and starts (rq, weights, biases). */
static inline void mcu_pair_job_init(struct mcu_pair_job *job, const int8_t *weights, int32_t k, int32_t pairs,
                                     const int32_t *bias, const int32_t *rq, const int32_t *col, int32_t layout)
{
    const int32_t steps = mcu_pair_k4(k) >> 1;
    const int32_t e = layout == MCU_CMSIS_PAIR_WIDE     ? MCU_PAIR_WIDE_STEPS - steps
                      : layout == MCU_CMSIS_PAIR_OFFSET ? (32 - (steps & 31)) & 31
                                                        : (8 - (steps & 7)) & 7;
    const int32_t step = mcu_pair_step_bytes(layout), lead = mcu_pair_entry_lead(layout, e);
    const int8_t *const col_entry = (const int8_t *)col - 4 - 12 * e;
    job->rq = rq;
    job->wp = weights - 4 - step * e + step * lead;
    job->bias = bias;
    job->col = col_entry + 12 * lead;
    job->end = col_entry + 12 * (steps + e);
    /* the wide layout's last step taken first (mcu_pair_rows3_asm_wide): its run ends a step earlier */
    job->skip = mcu_pair_stride(k, layout) - step * (steps + e) + step * lead +
                (layout == MCU_CMSIS_PAIR_WIDE ? step : 0);
    job->rq_end = rq + 6 * pairs; /* the plain and offset layouts' records, the wide one's below */
    if (layout == MCU_CMSIS_PAIR_WIDE) { /* mcu_pair_rq_pairs (a branch: cheaper on the others' calls) */
        job->rq_end += 2 * pairs;
    }
    job->entry = 0;
    job->e = e;
    job->x = NULL;
    job->blocks = 0;
    job->rows = 0;
}

/** The assembly routine of the pair layout `layout`. */
typedef void mcu_pair_routine(struct mcu_pair_job *job);

/** The plain layout's routine where the build leaves it out (MCU_PATH_PAIR_PLAIN): never reached. */
static inline void mcu_pair_rows3_missing(struct mcu_pair_job *job)
{
    (void)job;
    MCU_PATH_CHECK(0);
}

/** Whether the layer's outputs may skip the rounding correction of negative accumulators: its output
    offset at or below the clamp's minimum (a ReLU or ReLU6 layer, or any whose zero point is -128),
    where a negative accumulator's output is the minimum with or without it (mcu_cmsis_rq3_relu). */
static inline int mcu_pair_relu(const mcu_pair_out *o)
{
    return o->offset <= o->act_min;
}

/** The offset layout's routine for a layer (mcu_pair_relu), of those the build carries
    (mcu_cmsis_paths.h: PAIR_RELU, PAIR_SIGNED). */
static inline mcu_pair_routine *mcu_pair_offset_routine(int relu)
{
    return relu && MCU_PATH_PAIR_RELU ? mcu_pair_rows3_asm_offset_relu
           : MCU_PATH_PAIR_SIGNED     ? mcu_pair_rows3_asm_offset
                                      : mcu_pair_rows3_missing;
}

static inline mcu_pair_routine *mcu_pair_routine_of(int32_t layout, int relu)
{
    return layout == MCU_CMSIS_PAIR_OFFSET ? mcu_pair_offset_routine(relu)
           : layout == MCU_CMSIS_PAIR_WIDE ? mcu_pair_rows3_asm_wide
           : MCU_PATH_PAIR_PLAIN           ? mcu_pair_rows3_asm
                                           : mcu_pair_rows3_missing; /* mcu_cmsis_paths.h */
}

/** The job's pairs (from the starts its rq, wp and bias hold) into out0, out1, out2, the weights
    in the pair layout `layout`; sums unused (mcu_pair_dot3's). */
static inline void mcu_pair_job_run(struct mcu_pair_job *job, int32_t layout, int relu, const int32_t *sums,
                                    int8_t *out0, int8_t *out1, int8_t *out2)
{
    (void)sums;
    job->d2 = (int32_t)(out2 - out0);
    job->d1 = (int32_t)(out1 - out0);
    job->out = out0;
    if (layout == MCU_CMSIS_PAIR_OFFSET) { /* direct calls: cheaper than through mcu_pair_routine_of */
        if (relu && MCU_PATH_PAIR_RELU) { /* direct calls: no call through a pointer for the stack bound */
            mcu_pair_rows3_asm_offset_relu(job);
        } else {
            MCU_PATH_CHECK(MCU_PATH_PAIR_SIGNED);
            mcu_pair_rows3_asm_offset(job);
        }
    } else if (layout == MCU_CMSIS_PAIR_WIDE) {
        mcu_pair_rows3_asm_wide(job);
    } else {
        MCU_PATH_CHECK(MCU_PATH_PAIR_PLAIN);
        mcu_pair_rows3_asm(job);
    }
}

/** The fast form's full pairs (`pairs` >= 1) through the assembly. */
static void mcu_pair_fast_pairs(const int8_t *weights, int32_t k, int32_t pairs, const int32_t *bias,
                                const int32_t *rq, const int32_t *col, int32_t layout, int relu,
                                const int32_t *sums, int8_t *out0, int8_t *out1, int8_t *out2)
{
    struct mcu_pair_job job;
    mcu_pair_job_init(&job, weights, k, pairs, bias, rq, col, layout);
    mcu_pair_job_run(&job, layout, relu, sums, out0, out1, out2);
}
#endif

/* Not inlined: one copy of each, the row loop with every register to itself. Weak (not static):
   the convolutions and the fully connected layer each include this header, and the linker keeps
   one copy of these (about 9 KB together) for all of them instead of one per kernel file. */
__attribute__((noinline, weak)) void mcu_pair_matmul3_fast(const mcu_pair_out *o, const int8_t *weights, int32_t k,
                                                           const int32_t *bias, const int32_t *rq,
                                                           const int32_t *col, const int32_t *sums, int8_t *out0,
                                                           int8_t *out1, int8_t *out2)
{
#if MCU_PAIR_ASM
    const int32_t pairs = o->rows >> 1;
    if (pairs > 0 && mcu_pair_asm_takes(k, o->pair_offset)) {
        mcu_pair_fast_pairs(weights, k, pairs, bias, rq, col, o->pair_offset, mcu_pair_relu(o), sums, out0, out1,
                            out2);
        if ((o->rows & 1) == 0) {
            return;
        }
        const int32_t done = 2 * pairs; /* the odd last row below */
        const mcu_pair_out last = {1, o->offset, o->act_min, o->act_max, o->pair_offset};
        mcu_pair_matmul3_mode(&last, weights + pairs * mcu_pair_stride(k, o->pair_offset), k, bias + done, NULL, NULL,
                              mcu_pair_rq_pairs(rq, pairs, o->pair_offset), col, sums, out0 + done, out1 + done,
                              out2 + done, MCU_PAIR_FAST_FULL);
        return;
    }
#endif
    mcu_pair_matmul3_mode(o, weights, k, bias, NULL, NULL, rq, col, sums, out0, out1, out2, MCU_PAIR_FAST_FULL);
}

__attribute__((noinline, weak)) void mcu_pair_matmul3_other(const mcu_pair_out *o, const int8_t *weights, int32_t k,
                                                            const int32_t *bias, const int32_t *multiplier,
                                                            const int32_t *shift, const int32_t *rq,
                                                            const int32_t *col, const int32_t *sums, int8_t *out0,
                                                            int8_t *out1, int8_t *out2)
{
    const int mode = rq == NULL ? MCU_PAIR_GENERAL : MCU_PAIR_FAST_CLAMP;
    mcu_pair_matmul3_mode(o, weights, k, bias, multiplier, shift, rq, col, sums, out0, out1, out2, mode);
}

/** out_p[r] for every row r and the three columns p of the widened block `col` of k values (sums:
    with the offset layout, each column's sum of values, else unused): the fast requantization with
    SSAT alone when the clamp is the whole int8 range. */
static inline void mcu_cmsis_pair_matmul3(const mcu_pair_out *o, const int8_t *weights, int32_t k,
                                          const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                          const int32_t *rq, const int32_t *col, const int32_t *sums, int8_t *out0,
                                          int8_t *out1, int8_t *out2)
{
    const int32_t s128[3] = {sums[0] * 128, sums[1] * 128, sums[2] * 128};
    if (rq != NULL && o->act_min == -128 && o->act_max == 127) {
        mcu_pair_matmul3_fast(o, weights, k, bias, rq, col, s128, out0, out1, out2);
    } else {
        mcu_pair_matmul3_other(o, weights, k, bias, multiplier, shift, rq, col, s128, out0, out1, out2);
    }
}

/** A convolution's matrix products, one column block at a time into the same scratch block `col`:
    what every block shares, set once (mcu_pair_gemm_init). With the fast requantization on the
    assembly's path (an even row count, K > 0) the pair job itself is kept, and each block sets only
    its outputs, column sums and the job's three starts (mcu_pair_gemm_block); otherwise each block
    is an mcu_cmsis_pair_matmul3. */
struct mcu_pair_gemm {
    mcu_pair_out o;
    const int8_t *weights;
    int32_t k;
    const int32_t *bias, *multiplier, *shift, *rq, *col;
#if MCU_PAIR_ASM
    int fast;
    const int8_t *wp; /* the job's first pair's weights at its entry step (mcu_pair_job_init) */
    struct mcu_pair_job job;
#endif
};

static inline void mcu_pair_gemm_init(struct mcu_pair_gemm *g, const mcu_pair_out *o, const int8_t *weights, int32_t k,
                                      const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                      const int32_t *rq, const int32_t *col)
{
    g->o = *o, g->weights = weights, g->k = k, g->bias = bias, g->multiplier = multiplier, g->shift = shift;
    g->rq = rq, g->col = col;
#if MCU_PAIR_ASM
    g->fast = rq != NULL && o->act_min == -128 && o->act_max == 127 && (o->rows & 1) == 0 && o->rows > 0 &&
              mcu_pair_asm_takes(k, o->pair_offset);
    if (g->fast) {
        mcu_pair_job_init(&g->job, weights, k, o->rows >> 1, bias, rq, col, o->pair_offset);
        g->wp = g->job.wp;
    }
#endif
}

#if MCU_PAIR_ASM
/** The pair job back at the first pair (for the next block). */
static inline void mcu_pair_gemm_restart(struct mcu_pair_gemm *g)
{
    g->job.rq = g->rq;
    g->job.wp = g->wp;
    g->job.bias = g->bias;
}
#endif

#if MCU_PAIR_ASM
/** `blocks` whole blocks (>= 1) in one call of the wide or offset layout's assembly `run`, which
    widens (and sums) each itself: their first columns from x on, `spacing` bytes apart (pixels of
    in_c values: in_c; with `rows`, 3x3 three-channel windows whose input rows are `rows` bytes
    apart: the windows' spacing), their outputs from out on, out_c bytes apart. */
static inline void mcu_pair_gemm_blocks(struct mcu_pair_gemm *g, mcu_pair_routine *run, const int8_t *x,
                                        int32_t spacing, int32_t rows, int32_t blocks, int32_t out_c, int8_t *out)
{
    struct mcu_pair_job *const job = &g->job;
    job->d1 = out_c, job->d2 = 2 * out_c;
    mcu_pair_gemm_restart(g);
    job->x = x, job->in_c = spacing, job->rows = rows, job->block = (int32_t *)(void *)g->col, job->blocks = blocks;
    job->rq0 = job->rq, job->wp0 = job->wp, job->bias0 = job->bias;
    job->out = out;
    run(job);
    job->x = NULL, job->rows = 0; /* a block after these: widened by the caller */
}
#endif

/** The block's outputs out_p[r] for every row r and the three columns p of the block (sums: each
    column's sum of values, read with the offset layout). */
static inline void mcu_pair_gemm_block(struct mcu_pair_gemm *g, const int32_t *sums, int8_t *out0, int8_t *out1,
                                       int8_t *out2)
{
#if MCU_PAIR_ASM
    if (g->fast) {
        mcu_pair_gemm_restart(g);
        mcu_pair_job_run(&g->job, g->o.pair_offset, mcu_pair_relu(&g->o), sums, out0, out1, out2);
        return;
    }
#endif
    MCU_PATH_CHECK(MCU_PATH_PAIR_C || !MCU_PAIR_ASM);
    mcu_cmsis_pair_matmul3(&g->o, g->weights, g->k, g->bias, g->multiplier, g->shift, g->rq, g->col, sums, out0,
                           out1, out2);
}

#endif /* MCU_CMSIS_USE_DSP && !MCU_CMSIS_USE_MVE */

#endif /* MCU_CMSIS_PAIR_DSP_H */
