/*
 * int8 fully connected layer: each input row times the [units][depth] weights (pair layout).
 *
 * DSP path: the input rows widened into scratch as int16 pairs (mcu_cmsis_pair_dsp.h); one row:
 * two weight pairs (four units) per step, the input word and the two weight words loaded back to
 * back, each weight word split by SXTB16 / SXTB16 ROR #8 and fed to two SMLAD (12 cycles for 8
 * multiply-accumulates; inline assembly, four steps per iteration); more rows: three at a time
 * through the convolutions' block product (mcu_cmsis_pair_matmul3).
 *
 * MVE path: mcu_cmsis_gemm_mve.h (four units per step, sixteen inputs per VMLADAVA, the four units
 * requantized as one vector).
 */
#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_gemm_mve.h"
#include "mcu_cmsis_mve.h"
#include "mcu_cmsis_pair_dsp.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
#if MCU_PAIR_ASM
/* One step (two values) of the row: the input word and the two pairs' weight words loaded back to
   back (the pointers biased by -4 bytes, WB "!" on the last step of a run advances them), each
   weight word split by SXTB16 / SXTB16 ROR #8 into its two units. */
#define FC_STEP_(S, WB)                                                                                            \
    "ldr %[x], [%[xp], #(4 * " #S " + 4)]" WB "\n\t"                                                              \
    "ldr %[w0], [%[p0], #(4 * " #S " + 4)]" WB "\n\t"                                                             \
    "ldr %[w1], [%[p1], #(4 * " #S " + 4)]" WB "\n\t"                                                             \
    "sxtb16 %[t], %[w0], ror #8\n\t"                                                                              \
    "sxtb16 %[w0], %[w0]\n\t"                                                                                     \
    "smlad %[a0], %[x], %[w0], %[a0]\n\t"                                                                         \
    "smlad %[b0], %[x], %[t], %[b0]\n\t"                                                                          \
    "sxtb16 %[t], %[w1], ror #8\n\t"                                                                              \
    "sxtb16 %[w1], %[w1]\n\t"                                                                                     \
    "smlad %[a1], %[x], %[w1], %[a1]\n\t"                                                                         \
    "smlad %[b1], %[x], %[t], %[b1]\n\t"
#define FC_OPERANDS                                                                                                \
    [a0] "+r"(a0), [b0] "+r"(b0), [a1] "+r"(a1), [b1] "+r"(b1), [xp] "+r"(x), [p0] "+r"(w0), [p1] "+r"(w1),       \
        [x] "=&r"(xw), [w0] "=&r"(u), [w1] "=&r"(v), [t] "=&r"(t)
#endif

/** acc[0..3] (units of pairs w0 and w1) += the widened row x (steps words, an even count) times
    their weights. */
static inline __attribute__((always_inline)) void fc_dot2(const int32_t *x, int32_t steps, const int8_t *w0,
                                                          const int8_t *w1, int32_t *acc)
{
    int32_t a0 = acc[0], b0 = acc[1], a1 = acc[2], b1 = acc[3];
#if !MCU_PAIR_ASM
    for (int32_t s = 0; s < steps; s++, w0 += 4, w1 += 4) {
        const int32_t u = mcu_read_s8x4(w0), v = mcu_read_s8x4(w1);
        a0 = mcu_smlad(x[s], mcu_sxtb16(u), a0);
        b0 = mcu_smlad(x[s], mcu_sxtb16_ror8(u), b0);
        a1 = mcu_smlad(x[s], mcu_sxtb16(v), a1);
        b1 = mcu_smlad(x[s], mcu_sxtb16_ror8(v), b1);
    }
#else
    int32_t xw, u, v, t;
    x = (const int32_t *)(const void *)((const int8_t *)x - 4);
    w0 -= 4;
    w1 -= 4;
    if (steps & 2) {
        __asm__ volatile(FC_STEP_(0, "") FC_STEP_(1, "!") : FC_OPERANDS : : "memory");
    }
    if (steps >= 4) { /* four steps per iteration */
        const int32_t *const end = x + (steps & ~3);
        __asm__ volatile("1:\n\t" FC_STEP_(0, "") FC_STEP_(1, "") FC_STEP_(2, "") FC_STEP_(3, "!")
                         "cmp %[xp], %[end]\n\t"
                         "bne 1b\n\t"
                         : FC_OPERANDS
                         : [end] "r"(end)
                         : "memory", "cc");
    }
#endif
    acc[0] = a0, acc[1] = b0, acc[2] = a1, acc[3] = b1;
}

/** One widened input row times every unit: two weight pairs (four units) per step, then an odd last
    pair alone (its second row may be the layout's zeros). */
static void fc_matvec(const mcu_pair_out *o, const int8_t *weights, int32_t depth, const int32_t *bias,
                      const int32_t *multiplier, const int32_t *shift, const int32_t *rq, const int32_t *x,
                      int8_t *out)
{
    const int32_t units = o->rows;
    const int32_t steps = mcu_pair_k4(depth) >> 1;
    const int32_t stride = 2 * MCU_CMSIS_PAIR_DEPTH(depth);
    const int mode = rq == NULL ? MCU_PAIR_GENERAL : MCU_PAIR_FAST_CLAMP;
    int32_t u = 0;
    for (; u + 4 <= units; u += 4, weights += 2 * stride) {
        int32_t acc[4] = {bias[u], bias[u + 1], bias[u + 2], bias[u + 3]};
        fc_dot2(x, steps, weights, weights + stride, acc);
        for (int32_t j = 0; j < 4; j++) {
            out[u + j] = (int8_t)mcu_pair_requant(o, multiplier, shift, rq, u + j, mode, acc[j]);
        }
    }
    for (; u < units; u += 2, weights += stride) {
        int32_t acc[4] = {bias[u], u + 1 < units ? bias[u + 1] : 0, 0, 0};
        fc_dot2(x, steps, weights, weights, acc);
        out[u] = (int8_t)mcu_pair_requant(o, multiplier, shift, rq, u, mode, acc[0]);
        if (u + 1 < units) {
            out[u + 1] = (int8_t)mcu_pair_requant(o, multiplier, shift, rq, u + 1, mode, acc[1]);
        }
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
    if (depth > 0) { /* Helium: mcu_cmsis_gemm_mve.h */
        mcu_cmsis_fully_connected_s8_mve(p, input, weights, bias, multiplier, shift, output);
        return;
    }
#elif defined(MCU_CMSIS_USE_DSP)
    if (depth > 0) {
        const mcu_pair_out o = {units, out_offset, act_min, act_max, 0};
        int32_t *const col = (int32_t *)(void *)scratch;
        int32_t r = 0;
        if (rows == 1) {
            mcu_pair_column_dense(input, depth, col);
            fc_matvec(&o, weights, depth, bias, multiplier, shift, rq, col, output);
            return;
        }
        for (; r < rows; r += MCU_PAIR_COLUMNS) { /* a short last block: its last row again */
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
                acc += x[d] * mcu_cmsis_pair_weight(weights, depth, u, d, 0);
            }
            out[u] = mcu_cmsis_requantize_s8(acc, multiplier[u], shift[u], out_offset, act_min, act_max);
        }
    }
}
