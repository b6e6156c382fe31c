/*
 * int8 fully connected layer: each input row times the [units][depth] weights.
 *
 * One input row (rows == 1): the group layout (mcu_cmsis_fc_weight below: units four at a time, per
 * sixteen inputs the group's units' sixteen weights one after the other; a last group of one to three
 * units holds only those, no padding unit), read with no scratch, and the call made cheap for tiny
 * heads (the exported function a frameless dispatcher, the other paths in fc_rows):
 *   - DSP: per four inputs the input word is split once by SXTB16 / SXTB16 ROR #8 into (x0, x2) and
 *     (x1, x3), each unit's word likewise into (w0, w2) and (w1, w3), two SMLAD per unit. Where the
 *     records are proven and the depth is a multiple of sixteen (or at most 64: the row copied to the
 *     stack, zero-padded to whole chunks), every whole group of four runs in one assembly loop (fc_groups: biases, sixteen inputs per iteration, the four records' LSL,
 *     SMMLAR, ADD, ASR, SSAT, the clamp only where it is not the whole int8 range, the stores; the
 *     accumulators never leave registers); else, and for a short last group, fc_dot: two units then
 *     one per assembly loop, the last depth % 16 inputs in C (a tail of depth % 4 read byte by byte,
 *     never past the row), requantized in C;
 *   - Helium: every whole group of four in one assembly loop (fc_groups_mve: per sixteen inputs one
 *     VLDRB, then each unit's sixteen weights and its VMLADAVA; the four sums requantized as one
 *     vector, as mcu_cmsis_mve_requantize_vec, the offset and clamp read from the parameters); a short
 *     last group the same in C, its lanes past the units off.
 * More rows: the pair layout, as the convolutions (mcu_kernels_cmsis_nn.h); DSP: the rows widened
 * into scratch as int16 pairs, three at a time through the block product (mcu_cmsis_pair_matmul3);
 * Helium: mcu_cmsis_gemm_mve.h.
 */
#include <stddef.h>

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_gemm_mve.h"
#include "mcu_cmsis_mve.h"
#include "mcu_cmsis_pair_dsp.h"
#include "mcu_kernels_cmsis_nn.h"

/** The units of the group from unit u0 (a multiple of four): four, or the one to three left. */
static inline int32_t mcu_cmsis_fc_group_units(int32_t units, int32_t u0)
{
    return units - u0 < 4 ? units - u0 : 4;
}

/** Weight (u, d) in the group layout of one input row: the n units 4g .. 4g + n - 1 of group g
    (mcu_cmsis_fc_group_units) take n * MCU_CMSIS_PAIR_DEPTH(depth) bytes from byte
    4g * MCU_CMSIS_PAIR_DEPTH(depth); in them, per sixteen inputs 16c .. 16c + 15, the n units'
    sixteen weights (16n bytes from byte 16nc), zeros past depth. */
static inline int32_t mcu_cmsis_fc_weight(const int8_t *w, int32_t depth, int32_t units, int32_t u, int32_t d)
{
    const int32_t n = mcu_cmsis_fc_group_units(units, u & ~3);
    return w[(u >> 2) * 4 * MCU_CMSIS_PAIR_DEPTH(depth) + (d >> 4) * 16 * n + (u & 3) * 16 + (d & 15)];
}

#if defined(MCU_CMSIS_USE_MVE)
/* Sixteen inputs per iteration (tail-predicated to k: the weights past k are zeros, their lanes off
   as the input's), then each unit's sixteen weights and its VMLADAVA. */
#define FC_MVE_HEAD "dlstp.8 lr, %[k]\n1:\n\tvldrb.8 q0, [%[x]], #16\n\t"
#define FC_MVE_UNIT(A, Q) "vldrb.8 " Q ", [%[w]], #16\n\tvmladava.s8 %[" A "], q0, " Q "\n\t"
#define FC_MVE_LOOP(UNITS)                                                                                         \
    __asm__ volatile(FC_MVE_HEAD UNITS "letp lr, 1b\n"                                                            \
                     : [a0] "+Te"(a[0]), [a1] "+Te"(a[1]), [a2] "+Te"(a[2]), [a3] "+Te"(a[3]), [x] "+r"(x),       \
                       [w] "+r"(w)                                                                                 \
                     : [k] "r"(k)                                                                                  \
                     : "q0", "q1", "q2", "q3", "q4", "lr", "memory")

/** a[0 .. n-1] += the row x (k values) times the n units (1 to 3) of the group layout's short last
    group at w (n a constant: each count its own loop). */
static inline __attribute__((always_inline)) void fc_dot_mve(const int8_t *x, const int8_t *w, int32_t k,
                                                             int32_t *a, const int32_t n)
{
    if (n == 3) {
        FC_MVE_LOOP(FC_MVE_UNIT("a0", "q1") FC_MVE_UNIT("a1", "q2") FC_MVE_UNIT("a2", "q3"));
    } else if (n == 2) {
        FC_MVE_LOOP(FC_MVE_UNIT("a0", "q1") FC_MVE_UNIT("a1", "q2"));
    } else {
        FC_MVE_LOOP(FC_MVE_UNIT("a0", "q1"));
    }
}

/** Every whole group of four units (out_end = out + 4 * groups, groups >= 1) in one assembly loop:
    the four biases, the row x (FC_MVE_LOOP's, p->depth values), the four sums requantized as one
    vector (as mcu_cmsis_mve_requantize_vec: left shift, VQRDMULH, the sign fix-up, VRSHL, offset,
    clamp; the offset and clamp read from p) and stored; the clamp and zero held in q5 .. q7. Returns
    the weights past them. */
static const int8_t *fc_groups_mve(const mcu_cmsis_fc_params *p, const int8_t *x, const int8_t *w,
                                   const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                   int8_t *out, const int8_t *out_end)
{
    const int8_t *const ends[2] = {x, out_end};
    int32_t a0, a1, a2, a3;
    const int8_t *xi;
    __asm__ volatile("ldr %[a0], [%[p], %[lo]]\n\t"
                     "vdup.32 q5, %[a0]\n\t"
                     "ldr %[a0], [%[p], %[hi]]\n\t"
                     "vdup.32 q6, %[a0]\n\t"
                     "vmov.i32 q7, #0\n\t"
                     "2:\n\t"
                     "ldrd %[a0], %[a1], [%[b]], #8\n\t"
                     "ldrd %[a2], %[a3], [%[b]], #8\n\t"
                     "ldr %[x], [%[p], %[depth]]\n\t"
                     "dlstp.8 lr, %[x]\n\t"
                     "ldr %[x], [%[e]]\n"
                     "1:\n\t"
                     "vldrb.8 q0, [%[x]], #16\n\t" FC_MVE_UNIT("a0", "q1") FC_MVE_UNIT("a1", "q2")
                         FC_MVE_UNIT("a2", "q3") FC_MVE_UNIT("a3", "q4") "letp lr, 1b\n\t"
                     "vmov q1[2], q1[0], %[a0], %[a2]\n\t"
                     "vmov q1[3], q1[1], %[a1], %[a3]\n\t"
                     "vldrw.u32 q2, [%[s]], #16\n\t"
                     "vmax.s32 q3, q2, q7\n\t"
                     "vmin.s32 q2, q2, q7\n\t"
                     "vshl.s32 q1, q1, q3\n\t"
                     "vldrw.u32 q3, [%[m]], #16\n\t"
                     "vqrdmulh.s32 q1, q1, q3\n\t"
                     "vand q3, q1, q2\n\t"
                     "vshr.s32 q3, q3, #31\n\t"
                     "vqadd.s32 q1, q1, q3\n\t"
                     "vrshl.s32 q1, q1, q2\n\t"
                     "ldr %[a0], [%[p], %[offset]]\n\t"
                     "vadd.i32 q1, q1, %[a0]\n\t"
                     "vmax.s32 q1, q1, q5\n\t"
                     "vmin.s32 q1, q1, q6\n\t"
                     "vstrb.32 q1, [%[o]], #4\n\t"
                     "ldr %[a0], [%[e], #4]\n\t"
                     "cmp %[o], %[a0]\n\t"
                     "bne 2b\n\t"
                     : [a0] "=&Te"(a0), [a1] "=&Te"(a1), [a2] "=&Te"(a2), [a3] "=&Te"(a3), [x] "=&r"(xi),
                       [w] "+r"(w), [b] "+r"(bias), [m] "+r"(multiplier), [s] "+r"(shift), [o] "+r"(out)
                     : [p] "r"(p), [e] "r"(ends), [depth] "i"(offsetof(mcu_cmsis_fc_params, depth)),
                       [offset] "i"(offsetof(mcu_cmsis_fc_params, output_offset)),
                       [lo] "i"(offsetof(mcu_cmsis_fc_params, act_min)),
                       [hi] "i"(offsetof(mcu_cmsis_fc_params, act_max))
                     : "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "lr", "memory", "cc");
    return w;
}

/** The first n (1 to 3) of src[0 .. n-1] into dst[0 .. 3], zeros after them (no read past n). */
static inline __attribute__((always_inline)) void fc_first_mve(int32_t *dst, const int32_t *src, int32_t n)
{
    dst[0] = src[0], dst[1] = n > 1 ? src[1] : 0, dst[2] = n > 2 ? src[2] : 0, dst[3] = 0;
}

/** The short last group of n (1 to 3) units from unit u (16 n weight bytes per sixteen inputs at
    w): requantized as mcu_cmsis_mve_requantize_vec, its lanes past the units zero and not stored (not
    inlined: the whole groups' path keeps a small frame). */
static __attribute__((noinline)) void fc_short_mve(const mcu_cmsis_fc_params *p, const int8_t *x, const int8_t *w,
                                                   const int32_t *bias, const int32_t *multiplier,
                                                   const int32_t *shift, int8_t *out, int32_t n)
{
    int32_t acc[4], m[4], s[4];
    fc_first_mve(acc, bias, n);
    fc_first_mve(m, multiplier, n);
    fc_first_mve(s, shift, n);
    if (n == 1) { /* each count its own loop */
        fc_dot_mve(x, w, p->depth, acc, 1);
    } else if (n == 2) {
        fc_dot_mve(x, w, p->depth, acc, 2);
    } else {
        fc_dot_mve(x, w, p->depth, acc, 3);
    }
    vstrbq_p_s32(out, mcu_cmsis_mve_requantize_vec(vld1q_s32(acc), m, s, p->output_offset, p->act_min, p->act_max),
                 vctp32q((uint32_t)n));
}

/** One input row times every unit (group layout): the whole groups of four through fc_groups_mve
    (requantized as mcu_cmsis_mve_requantize_vec, cheaper per group than finding out that no shift is a
    left one), a short last group through fc_short_mve. */
static inline __attribute__((always_inline)) void fc_matvec_mve(const mcu_cmsis_fc_params *p, const int8_t *x,
                                                                const int8_t *weights, const int32_t *bias,
                                                                const int32_t *multiplier, const int32_t *shift,
                                                                const int32_t *rq, int16_t *scratch, int8_t *out)
{
    (void)rq, (void)scratch;
    const int32_t units = p->units, u = units & ~3;
    if (u > 0) {
        weights = fc_groups_mve(p, x, weights, bias, multiplier, shift, out, out + u);
    }
    if (units > u) {
        fc_short_mve(p, x, weights, bias + u, multiplier + u, shift + u, out + u, units - u);
    }
}
#endif

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
/** acc[j] += the four inputs of word xw times unit j's word at w + 16j (j = 0 .. n - 1). */
static inline __attribute__((always_inline)) void fc_step(int32_t xw, const int8_t *w, int32_t *acc, const int32_t n)
{
    const int32_t x02 = mcu_sxtb16(xw), x13 = mcu_sxtb16_ror8(xw);
    for (int32_t j = 0; j < n; j++) {
        const int32_t v = mcu_read_s8x4(w + 16 * j);
        acc[j] = mcu_smlad(x13, mcu_sxtb16_ror8(v), mcu_smlad(x02, mcu_sxtb16(v), acc[j]));
    }
}

#if MCU_PAIR_ASM
/* Step S (inputs 4S .. 4S + 3) of sixteen for a group of N units (1 to 4), the pointers biased by
   -4 bytes (WB "!" on the last step advances them by pre-indexed writeback, 16 and 16 N bytes): the
   input word and the first units' words loaded back to back, the input word split by SXTB16 /
   SXTB16 ROR #8, then each unit's word split likewise and its two SMLAD (FC_PAIR_: two units, FC_ONE_:
   one). */
#define FC_LD_(R, S, J, WB) "ldr %[" R "], [%[wp], #(4 * " #S " + 4 + 16 * " #J ")]" WB "\n\t"
#define FC_PAIR_(A, B)                                                                                             \
    "sxtb16 %[y], %[w0], ror #8\n\t"                                                                              \
    "sxtb16 %[w0], %[w0]\n\t"                                                                                     \
    "smlad %[" A "], %[x], %[w0], %[" A "]\n\t"                                                                   \
    "sxtb16 %[w0], %[w1], ror #8\n\t"                                                                             \
    "sxtb16 %[w1], %[w1]\n\t"                                                                                     \
    "smlad %[" A "], %[t], %[y], %[" A "]\n\t"                                                                    \
    "smlad %[" B "], %[x], %[w1], %[" B "]\n\t"                                                                   \
    "smlad %[" B "], %[t], %[w0], %[" B "]\n\t"
#define FC_ONE_(A)                                                                                                 \
    "sxtb16 %[y], %[w0], ror #8\n\t"                                                                              \
    "sxtb16 %[w0], %[w0]\n\t"                                                                                     \
    "smlad %[" A "], %[x], %[w0], %[" A "]\n\t"                                                                   \
    "smlad %[" A "], %[t], %[y], %[" A "]\n\t"
#define FC_LOADS4(S, WB) FC_LD_("w0", S, 0, "") FC_LD_("w1", S, 1, "")
#define FC_REST4(S, WB) FC_PAIR_("a0", "a1") FC_LD_("w0", S, 2, "") FC_LD_("w1", S, 3, WB) FC_PAIR_("a2", "a3")
#define FC_LOADS2(S, WB) FC_LD_("w0", S, 0, "") FC_LD_("w1", S, 1, "")
#define FC_REST2(S, WB) FC_PAIR_("a0", "a1")
#define FC_LOADS1(S, WB) FC_LD_("w0", S, 0, "")
#define FC_REST1(S, WB) FC_ONE_("a0")
#define FC_STEP_(S, WB, N)                                                                                         \
    "ldr %[x], [%[xp], #(4 * " #S " + 4)]" WB "\n\t" FC_LOADS##N(S, WB) "sxtb16 %[t], %[x], ror #8\n\t"           \
                                                                   "sxtb16 %[x], %[x]\n\t" FC_REST##N(S, WB)
/* Two units (N 2) or one (N 1) of a group whose chunks are `stride` bytes apart, sixteen inputs per
   iteration until xp reaches end (the weight pointer advanced by the stride). */
#define FC_LOOP_(N)                                                                                                \
    __asm__ volatile("1:\n\t" FC_STEP_(0, "", N) FC_STEP_(1, "", N) FC_STEP_(2, "", N) FC_STEP_(3, "!", N)      \
                     "add %[wp], %[wp], %[stride]\n\t"                                                            \
                     "cmp %[xp], %[end]\n\t"                                                                      \
                     "bne 1b\n\t"                                                                                 \
                     : [a0] "+r"(acc[0]), [a1] "+r"(acc[1]), [xp] "+r"(xp), [wp] "+r"(wp), [x] "=&r"(xw),         \
                       [w0] "=&r"(u), [w1] "=&r"(v), [t] "=&r"(t), [y] "=&r"(y)                                    \
                     : [end] "r"(end), [stride] "r"(stride)                                                       \
                     : "memory", "cc")
#endif

/** acc[0 .. n-1] += the first 16 * chunks inputs of the row x times units j .. j + n - 1 of a group
    whose chunks are `stride` bytes apart (per sixteen inputs, unit j's sixteen weights at w; n 2 or 1,
    a constant). */
static inline __attribute__((always_inline)) void fc_chunks(const int8_t *x, const int8_t *w, int32_t chunks,
                                                            int32_t stride, int32_t *acc, const int32_t n)
{
#if MCU_PAIR_ASM
    if (chunks > 0) {
        int32_t xw, u, v, t, y;
        const int8_t *xp = x - 4, *wp = w - 4;
        const int8_t *const end = xp + 16 * chunks;
        if (n == 2) {
            FC_LOOP_(2);
        } else {
            FC_LOOP_(1);
        }
    }
#else
    for (int32_t c = 0; c < chunks; c++, x += 16, w += stride) {
        for (int32_t s = 0; s < 4; s++) {
            fc_step(mcu_read_s8x4(x + 4 * s), w + 4 * s, acc, n);
        }
    }
#endif
}

/** acc[0 .. n-1] += the row x (depth values) times the n units (1 to 4) of the group at w: the whole
    chunks of sixteen two units at a time, then one (fc_chunks); the last depth % 16 inputs in C, a
    tail of depth % 4 read byte by byte, never past the row. */
static __attribute__((noinline)) void fc_dot(const int8_t *x, int32_t depth, const int8_t *w, int32_t *acc, int32_t n)
{
    const int32_t chunks = depth >> 4, stride = 16 * n;
    for (int32_t j = 0; j + 2 <= n; j += 2) {
        fc_chunks(x, w + 16 * j, chunks, stride, acc + j, 2);
    }
    if (n & 1) {
        fc_chunks(x, w + 16 * (n - 1), chunks, stride, acc + n - 1, 1);
    }
    x += 16 * chunks;
    w += stride * chunks;
    for (int32_t s = 0; s < ((depth & 15) >> 2); s++) { /* the last chunk's whole words */
        fc_step(mcu_read_s8x4(x + 4 * s), w + 4 * s, acc, n);
    }
    if (depth & 3) { /* the last one to three inputs, the rest of the word zeros */
        int32_t xw = 0;
        memcpy(&xw, x + (depth & 12), (size_t)(depth & 3));
        fc_step(xw, w + (depth & 12), acc, n);
    }
}

#if MCU_PAIR_ASM
/* What fc_groups' assembly reads and advances, group by group. */
typedef struct {
    const int32_t *bias, *rq;
    int8_t *out;
    const int8_t *x; /* the row, biased by -4 bytes */
    int32_t span;    /* 16 * chunks: the row's bytes */
    int32_t groups;  /* whole groups of four left */
    int32_t lo, hi;  /* the clamp */
    int32_t clamp;   /* 0 when [lo, hi] is the whole int8 range (SSAT alone) */
} fc_job;

/* Unit A of four: its record's {m, add} and right (the record pointer xp advanced by 12), then
   mcu_cmsis_rq3 and SSAT, back into A. */
#define FC_RQ_(A)                                                                                                  \
    "ldrd %[x], %[w0], [%[xp]], #12\n\t"                                                                          \
    "ldr %[w1], [%[xp], #-4]\n\t"                                                                                 \
    "lsl %[t], %[" A "], #1\n\t"                                                                                  \
    "smmlar %[t], %[t], %[x], %[w0]\n\t"                                                                          \
    "add %[t], %[t], %[" A "], asr #31\n\t"                                                                       \
    "asr %[t], %[t], %[w1]\n\t"                                                                                   \
    "ssat %[" A "], #8, %[t]\n\t"
/* A clamped to [lo, hi] (in x and w0). */
#define FC_CLAMP_(A)                                                                                               \
    "cmp %[" A "], %[x]\n\t"                                                                                      \
    "it lt\n\t"                                                                                                   \
    "movlt %[" A "], %[x]\n\t"                                                                                    \
    "cmp %[" A "], %[w0]\n\t"                                                                                     \
    "it gt\n\t"                                                                                                   \
    "movgt %[" A "], %[w0]\n\t"

/** The first `groups` (>= 1) whole groups of four units for a row of 16 * chunks values (chunks >= 1),
    requantized by the proven records (rq), clamped to [lo, hi] unless the whole int8 range: one
    assembly loop over the groups, the accumulators never leaving registers (per group: the four
    biases, the chunks (FC_STEP_), the four units requantized, clamped, stored, the job advanced).
    Returns the weights past them. */
static const int8_t *fc_groups(const int8_t *x, int32_t chunks, const int8_t *w, const int32_t *bias,
                               const int32_t *rq, int8_t *out, int32_t groups, int32_t lo, int32_t hi)
{
    fc_job job = {bias, rq, out, x - 4, 16 * chunks, groups, lo, hi, lo != -128 || hi != 127};
    int32_t a0, a1, a2, a3, xw, u, v, t, y;
    const int8_t *xp, *end, *wp = w - 4;
    __asm__ volatile("2:\n\t"
                     "ldr %[t], [%[j], #0]\n\t"
                     "ldrd %[a0], %[a1], [%[t]]\n\t"
                     "ldrd %[a2], %[a3], [%[t], #8]\n\t"
                     "add %[t], %[t], #16\n\t"
                     "str %[t], [%[j], #0]\n\t"
                     "ldrd %[xp], %[end], [%[j], #12]\n\t"
                     "add %[end], %[end], %[xp]\n\t"
                     "1:\n\t" FC_STEP_(0, "", 4) FC_STEP_(1, "", 4) FC_STEP_(2, "", 4) FC_STEP_(3, "!", 4)
                     "cmp %[xp], %[end]\n\t"
                     "bne 1b\n\t"
                     "ldrd %[xp], %[end], [%[j], #4]\n\t" FC_RQ_("a0") FC_RQ_("a1") FC_RQ_("a2") FC_RQ_("a3")
                     "str %[xp], [%[j], #4]\n\t"
                     "ldr %[t], [%[j], #32]\n\t"
                     "cmp %[t], #0\n\t"
                     "beq 3f\n\t"
                     "ldrd %[x], %[w0], [%[j], #24]\n\t" FC_CLAMP_("a0") FC_CLAMP_("a1") FC_CLAMP_("a2")
                         FC_CLAMP_("a3") "3:\n\t"
                     "strb %[a0], [%[end]], #1\n\t"
                     "strb %[a1], [%[end]], #1\n\t"
                     "strb %[a2], [%[end]], #1\n\t"
                     "strb %[a3], [%[end]], #1\n\t"
                     "str %[end], [%[j], #8]\n\t"
                     "ldr %[t], [%[j], #20]\n\t"
                     "subs %[t], %[t], #1\n\t"
                     "str %[t], [%[j], #20]\n\t"
                     "bne 2b\n\t"
                     : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [xp] "=&r"(xp),
                       [wp] "+r"(wp), [x] "=&r"(xw), [w0] "=&r"(u), [w1] "=&r"(v), [t] "=&r"(t), [y] "=&r"(y),
                       [end] "=&r"(end)
                     : [j] "r"(&job)
                     : "memory", "cc");
    return wp + 4;
}

/* The longest row fc_groups_padded copies (bytes of stack). */
#define FC_PAD_MAX 64

/** fc_groups for a row whose depth (at most FC_PAD_MAX) is not a multiple of sixteen: the row copied
    to the stack and zero-padded to whole chunks, whose weights are zeros there (the group layout's
    padding), so no input is read past the row. */
static __attribute__((noinline)) const int8_t *fc_groups_padded(const int8_t *x, int32_t depth, const int8_t *w,
                                                                const int32_t *bias, const int32_t *rq, int8_t *out,
                                                                int32_t groups, int32_t lo, int32_t hi)
{
    int32_t row[FC_PAD_MAX / 4];
    memset(row, 0, sizeof row);
    memcpy(row, x, (size_t)depth);
    return fc_groups((const int8_t *)row, (depth + 15) >> 4, w, bias, rq, out, groups, lo, hi);
}
#endif

/** One input row times every unit (group layout): where the records are proven and the depth a
    multiple of sixteen (or at most FC_PAD_MAX: fc_groups_padded), the whole groups of four through
    fc_groups; the rest (a short last group of
    one to three units, other depths, no proof) group by group through fc_dot, requantized in C. */
static inline __attribute__((always_inline)) void fc_matvec(const mcu_cmsis_fc_params *p, const int8_t *x,
                                                const int8_t *weights, const int32_t *bias,
                                                const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                                                int16_t *scratch, int8_t *out)
{
    (void)scratch;
    const mcu_pair_out o_ = {p->units, p->output_offset, p->act_min, p->act_max, 0}, *const o = &o_;
    const int32_t depth = p->depth;
    const int32_t units = o->rows;
    const int mode = rq == NULL ? MCU_PAIR_GENERAL : MCU_PAIR_FAST_CLAMP;
    int32_t u = 0;
#if MCU_PAIR_ASM
    if (rq != NULL && units >= 4 && ((depth & 15) == 0 || depth <= FC_PAD_MAX)) {
        weights = (depth & 15) == 0
                      ? fc_groups(x, depth >> 4, weights, bias, rq, out, units >> 2, o->act_min, o->act_max)
                      : fc_groups_padded(x, depth, weights, bias, rq, out, units >> 2, o->act_min, o->act_max);
        u = units & ~3;
    }
#endif
    if (u < units) {
        MCU_PATH_CHECK(MCU_PATH_FC_DOT || !MCU_PAIR_ASM); /* mcu_cmsis_paths.h */
    }
    for (; u < units; u += 4) {
        const int32_t n = mcu_cmsis_fc_group_units(units, u);
        int32_t acc[4] = {bias[u], n > 1 ? bias[u + 1] : 0, n > 2 ? bias[u + 2] : 0, n > 3 ? bias[u + 3] : 0};
        fc_dot(x, depth, weights, acc, n);
        weights += n * MCU_CMSIS_PAIR_DEPTH(depth);
        for (int32_t j = 0; j < n; j++) {
            out[u + j] = (int8_t)mcu_pair_requant(o, multiplier, shift, rq, u + j, mode, acc[j]);
        }
    }
}
#endif

/** More rows (the pair layout), and the plain path (and depth 0: every unit is its bias). */
static __attribute__((noinline, noclone)) void fc_rows(const mcu_cmsis_fc_params *p, const int8_t *input,
                                              const int8_t *weights, const int32_t *bias,
                                              const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                                              int16_t *scratch, int8_t *output)
{
    const int32_t rows = p->rows;
    const int32_t depth = p->depth;
    const int32_t units = p->units;
    const int32_t out_offset = p->output_offset;
    const int32_t act_min = p->act_min;
    const int32_t act_max = p->act_max;
    (void)rq; /* read by the DSP path only */
    (void)scratch;
#if defined(MCU_CMSIS_USE_MVE)
    if (depth > 0) { /* Helium, the pair layout: mcu_cmsis_gemm_mve.h */
        mcu_cmsis_fully_connected_s8_mve(p, input, weights, bias, multiplier, shift, output);
        return;
    }
#elif defined(MCU_CMSIS_USE_DSP)
    if (depth > 0) {
        const mcu_pair_out o = {units, out_offset, act_min, act_max, 0};
        int32_t *const col = (int32_t *)(void *)scratch;
        for (int32_t r = 0; r < rows; r += MCU_PAIR_COLUMNS) { /* a short last block: its last row again */
            const int32_t r1 = r + 1 < rows ? r + 1 : rows - 1;
            const int32_t r2 = r + 2 < rows ? r + 2 : rows - 1;
            const int32_t sums[3] = {0, 0, 0}; /* the plain pair layout: unused */
            mcu_pair_column(input + r * depth, depth, col, NULL);
            mcu_pair_column(input + r1 * depth, depth, col + 1, NULL);
            mcu_pair_column(input + r2 * depth, depth, col + 2, NULL);
            mcu_cmsis_pair_matmul3(&o, weights, depth, bias, multiplier, shift, rq, col, sums, output + r * units,
                                   output + r1 * units, output + r2 * units);
        }
        return;
    }
#endif
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *x = input + r * depth;
        int8_t *out = output + r * units;
        for (int32_t u = 0; u < units; u++) {
            int32_t acc = bias[u];
            for (int32_t d = 0; d < depth; d++) {
                const int32_t w = rows == 1 ? mcu_cmsis_fc_weight(weights, depth, units, u, d)
                                            : mcu_cmsis_pair_weight(weights, depth, u, d, 0);
                acc += x[d] * w;
            }
            out[u] = mcu_cmsis_requantize_s8(acc, multiplier[u], shift[u], out_offset, act_min, act_max);
        }
    }
}

/* More rows or depth 0 through fc_rows (not inlined: its frame is not the one-row path's, which a
   tiny head's call then pays alone). */
void mcu_cmsis_fully_connected_s8(const mcu_cmsis_fc_params *p, const int8_t *input, const int8_t *weights,
                                  const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                  const int32_t *rq, int16_t *scratch, int8_t *output)
{
    if (p->rows != 1 || p->depth <= 0) {
        MCU_PATH_CHECK(MCU_PATH_FC_ROWS); /* mcu_cmsis_paths.h */
        fc_rows(p, input, weights, bias, multiplier, shift, rq, scratch, output);
        return;
    }
#if defined(MCU_CMSIS_USE_MVE)
    fc_matvec_mve(p, input, weights, bias, multiplier, shift, rq, scratch, output);
#elif defined(MCU_CMSIS_USE_DSP)
    fc_matvec(p, input, weights, bias, multiplier, shift, rq, scratch, output);
#else
    fc_rows(p, input, weights, bias, multiplier, shift, rq, scratch, output);
#endif
}
