/*
 * int8 fully connected layer: each input row times the [units][depth] weights.
 *
 * One input row (rows == 1): the group layout (mcu_cmsis_fc_weight below: units four at a time, per
 * sixteen inputs the group's units' sixteen weights one after the other; a last group of one to three
 * units holds only those, no padding unit), read with no scratch:
 *   - DSP: per four inputs the input word is split once by SXTB16 / SXTB16 ROR #8 into (x0, x2) and
 *     (x1, x3), each unit's word likewise into (w0, w2) and (w1, w3), two SMLAD per unit (inline
 *     assembly, sixteen inputs per iteration: the input word and two weight words loaded back to
 *     back, then the other two); the last depth % 16 inputs in C, a tail of depth % 4 read byte by
 *     byte, never past the row;
 *   - Helium: sixteen inputs per VLDRB, then each unit's sixteen weights (VLDRB) and its VMLADAVA
 *     alternating, the four units requantized as one vector;
 *   - a short last group: the same per unit, in C (its one to three units' products only).
 * More rows: the pair layout, as the convolutions (mcu_kernels_cmsis_nn.h); DSP: the rows widened
 * into scratch as int16 pairs, three at a time through the block product (mcu_cmsis_pair_matmul3);
 * Helium: mcu_cmsis_gemm_mve.h.
 */
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

/** a[0 .. n-1] += the row x (k values) times the n units of the group layout's group at w (n a
    constant: each count its own loop). */
static inline __attribute__((always_inline)) void fc_dot_mve(const int8_t *x, const int8_t *w, int32_t k,
                                                             int32_t *a, const int32_t n)
{
    if (n == 4) {
        FC_MVE_LOOP(FC_MVE_UNIT("a0", "q1") FC_MVE_UNIT("a1", "q2") FC_MVE_UNIT("a2", "q3") FC_MVE_UNIT("a3", "q4"));
    } else if (n == 3) {
        FC_MVE_LOOP(FC_MVE_UNIT("a0", "q1") FC_MVE_UNIT("a1", "q2") FC_MVE_UNIT("a2", "q3"));
    } else if (n == 2) {
        FC_MVE_LOOP(FC_MVE_UNIT("a0", "q1") FC_MVE_UNIT("a1", "q2"));
    } else {
        FC_MVE_LOOP(FC_MVE_UNIT("a0", "q1"));
    }
}

/** bias[0..3] + the row x (k values) times the four units of the group layout's group at w. */
static inline __attribute__((always_inline)) int32x4_t fc_dot4_mve(const int8_t *x, const int8_t *w, int32_t k,
                                                                   const int32_t *bias)
{
    int32_t a[4] = {bias[0], bias[1], bias[2], bias[3]};
    int32x4_t v;
    fc_dot_mve(x, w, k, a, 4);
    __asm__("vmov %q[v][2], %q[v][0], %[a0], %[a2]\n\t"
            "vmov %q[v][3], %q[v][1], %[a1], %[a3]"
            : [v] "=&w"(v)
            : [a0] "r"(a[0]), [a1] "r"(a[1]), [a2] "r"(a[2]), [a3] "r"(a[3]));
    return v;
}

/** One input row times every unit (group layout), four units per vector; a short last group's
    lanes requantized one by one (the records hold `units` entries). */
static inline __attribute__((always_inline)) void fc_matvec_mve(const mcu_cmsis_fc_params *p, const int8_t *x,
                                                                const int8_t *weights, const int32_t *bias,
                                                                const int32_t *multiplier, const int32_t *shift,
                                                                int8_t *out, const int right_only)
{
    const int32_t depth = p->depth, units = p->units, group = 4 * MCU_CMSIS_PAIR_DEPTH(p->depth);
    const int32_t offset = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int32x4_t lo = vdupq_n_s32(act_min), hi = vdupq_n_s32(act_max);
    int32_t u = 0;
    for (; u + 4 <= units; u += 4, weights += group) {
        const int32x4_t acc = fc_dot4_mve(x, weights, depth, bias + u);
        if (right_only) {
            vstrbq_s32(out + u, mcu_cmsis_mve_requantize_right(acc, multiplier + u, shift + u, offset, lo, hi));
        } else {
            vstrbq_s32(out + u, mcu_cmsis_mve_requantize_vec(acc, multiplier + u, shift + u, offset, act_min, act_max));
        }
    }
    const int32_t n = units - u; /* a short last group: 16 n weight bytes per sixteen inputs */
    if (n > 0) {
        int32_t acc[4] = {0, 0, 0, 0};
        for (int32_t j = 0; j < n; j++) {
            acc[j] = bias[u + j];
        }
        if (n == 1) { /* each count its own loop */
            fc_dot_mve(x, weights, depth, acc, 1);
        } else if (n == 2) {
            fc_dot_mve(x, weights, depth, acc, 2);
        } else {
            fc_dot_mve(x, weights, depth, acc, 3);
        }
        for (int32_t j = 0; j < n; j++) {
            out[u + j] = mcu_cmsis_requantize_s8(acc[j], multiplier[u + j], shift[u + j], offset, act_min, act_max);
        }
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
/* Step S (inputs 4S .. 4S + 3) of sixteen, the pointers biased by -4 bytes (WB "!" on the last
   step advances them by pre-indexed writeback, 16 and 64 bytes): the input word and units 0 and
   1's words loaded back to back, then units 2 and 3's; each word split by SXTB16 / SXTB16 ROR #8. */
#define FC_HALF_(A, B)                                                                                             \
    "sxtb16 %[y], %[w0], ror #8\n\t"                                                                              \
    "sxtb16 %[w0], %[w0]\n\t"                                                                                     \
    "smlad %[" A "], %[x], %[w0], %[" A "]\n\t"                                                                   \
    "sxtb16 %[w0], %[w1], ror #8\n\t"                                                                             \
    "sxtb16 %[w1], %[w1]\n\t"                                                                                     \
    "smlad %[" A "], %[t], %[y], %[" A "]\n\t"                                                                    \
    "smlad %[" B "], %[x], %[w1], %[" B "]\n\t"                                                                   \
    "smlad %[" B "], %[t], %[w0], %[" B "]\n\t"
#define FC_STEP_(S, WB)                                                                                            \
    "ldr %[x], [%[xp], #(4 * " #S " + 4)]" WB "\n\t"                                                              \
    "ldr %[w0], [%[wp], #(4 * " #S " + 4)]\n\t"                                                                   \
    "ldr %[w1], [%[wp], #(4 * " #S " + 20)]\n\t"                                                                  \
    "sxtb16 %[t], %[x], ror #8\n\t"                                                                               \
    "sxtb16 %[x], %[x]\n\t" FC_HALF_("a0", "a1")                                                                  \
    "ldr %[w0], [%[wp], #(4 * " #S " + 36)]\n\t"                                                                  \
    "ldr %[w1], [%[wp], #(4 * " #S " + 52)]" WB "\n\t" FC_HALF_("a2", "a3")
#define FC_OPERANDS                                                                                                \
    [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [xp] "+r"(xp), [wp] "+r"(wp), [x] "=&r"(xw),     \
        [w0] "=&r"(u), [w1] "=&r"(v), [t] "=&r"(t), [y] "=&r"(y)
#endif

/** acc[0 .. n-1] += the row x (depth values) times n units of the group layout at w, whose chunks of
    sixteen inputs are `chunk` bytes apart (n a constant: 4, a whole group, or 2 or 1 units of a
    short group). */
static inline __attribute__((always_inline)) void fc_dot(const int8_t *x, int32_t depth, const int8_t *w,
                                                         int32_t *acc, const int32_t n, int32_t chunk)
{
    const int32_t chunks = depth >> 4;
    if (!MCU_PAIR_ASM || n < 4) {
        for (int32_t c = 0; c < chunks; c++, x += 16, w += chunk) {
            for (int32_t s = 0; s < 4; s++) {
                fc_step(mcu_read_s8x4(x + 4 * s), w + 4 * s, acc, n);
            }
        }
    }
#if MCU_PAIR_ASM
    else if (chunks > 0) { /* four units, sixteen inputs per iteration */
        int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
        int32_t xw, u, v, t, y;
        const int8_t *xp = x - 4, *wp = w - 4;
        const int8_t *const end = xp + 16 * chunks;
        __asm__ volatile("1:\n\t" FC_STEP_(0, "") FC_STEP_(1, "") FC_STEP_(2, "") FC_STEP_(3, "!")
                         "cmp %[xp], %[end]\n\t"
                         "bne 1b\n\t"
                         : FC_OPERANDS
                         : [end] "r"(end)
                         : "memory", "cc");
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
        x = xp + 4;
        w = wp + 4;
    }
#endif
    for (int32_t s = 0; s < ((depth & 15) >> 2); s++) { /* the last chunk's whole words */
        fc_step(mcu_read_s8x4(x + 4 * s), w + 4 * s, acc, n);
    }
    if (depth & 3) { /* the last one to three inputs, the rest of the word zeros */
        int32_t xw = 0;
        memcpy(&xw, x + (depth & 12), (size_t)(depth & 3));
        fc_step(xw, w + (depth & 12), acc, n);
    }
}

/** The short last group of fc_matvec from unit u (one to three units): two units at a time, then
    one (not inlined: the whole groups' loop keeps its registers). */
static __attribute__((noinline)) void fc_short_group(const mcu_pair_out *o, const int8_t *weights, int32_t depth,
                                                     const int32_t *bias, const int32_t *multiplier,
                                                     const int32_t *shift, const int32_t *rq, const int8_t *x,
                                                     int8_t *out, int32_t u)
{
    const int32_t units = o->rows, chunk = 16 * (units - u);
    const int mode = rq == NULL ? MCU_PAIR_GENERAL : MCU_PAIR_FAST_CLAMP;
    for (int32_t j = 0; u + j < units; j += 2) {
        int32_t acc[2] = {bias[u + j], u + j + 1 < units ? bias[u + j + 1] : 0};
        if (u + j + 1 < units) {
            fc_dot(x, depth, weights + 16 * j, acc, 2, chunk);
            out[u + j + 1] = (int8_t)mcu_pair_requant(o, multiplier, shift, rq, u + j + 1, mode, acc[1]);
        } else {
            fc_dot(x, depth, weights + 16 * j, acc, 1, chunk);
        }
        out[u + j] = (int8_t)mcu_pair_requant(o, multiplier, shift, rq, u + j, mode, acc[0]);
    }
}

/** One input row times every unit (group layout), four units per group, a short last group its
    one to three. */
static void fc_matvec(const mcu_pair_out *o, const int8_t *weights, int32_t depth, const int32_t *bias,
                      const int32_t *multiplier, const int32_t *shift, const int32_t *rq, const int8_t *x,
                      int8_t *out)
{
    const int32_t units = o->rows;
    const int32_t group = 4 * MCU_CMSIS_PAIR_DEPTH(depth);
    const int mode = rq == NULL ? MCU_PAIR_GENERAL : MCU_PAIR_FAST_CLAMP;
    int32_t u = 0;
    for (; u + 4 <= units; u += 4, weights += group) {
        int32_t acc[4] = {bias[u], bias[u + 1], bias[u + 2], bias[u + 3]};
        fc_dot(x, depth, weights, acc, 4, 64);
        for (int32_t j = 0; j < 4; j++) {
            out[u + j] = (int8_t)mcu_pair_requant(o, multiplier, shift, rq, u + j, mode, acc[j]);
        }
    }
    if (u < units) {
        fc_short_group(o, weights, depth, bias, multiplier, shift, rq, x, out, u);
    }
}
#endif

void mcu_cmsis_fully_connected_s8(const mcu_cmsis_fc_params *p, const int8_t *input, const int8_t *weights,
                                  const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                  const int32_t *rq, int16_t *scratch, int8_t *output)
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
    if (depth > 0 && rows == 1) { /* Helium, the group layout */
        if (mcu_cmsis_mve_shifts_right(shift, units)) {
            fc_matvec_mve(p, input, weights, bias, multiplier, shift, output, 1);
        } else {
            fc_matvec_mve(p, input, weights, bias, multiplier, shift, output, 0);
        }
        return;
    }
    if (depth > 0) { /* Helium, the pair layout: mcu_cmsis_gemm_mve.h */
        mcu_cmsis_fully_connected_s8_mve(p, input, weights, bias, multiplier, shift, output);
        return;
    }
#elif defined(MCU_CMSIS_USE_DSP)
    if (depth > 0) {
        const mcu_pair_out o = {units, out_offset, act_min, act_max, 0};
        int32_t *const col = (int32_t *)(void *)scratch;
        if (rows == 1) {
            fc_matvec(&o, weights, depth, bias, multiplier, shift, rq, input, output);
            return;
        }
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
    /* plain path (and depth 0: every unit is its bias) */
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
