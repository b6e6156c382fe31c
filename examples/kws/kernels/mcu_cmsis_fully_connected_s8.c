/*
 * int8 fully connected layer: each input row times the [units][depth] weights.
 *
 * DSP path: four units per step, four inputs at a time; the input word is split once by SXTB16 /
 * SXTB16 ROR #8 into lanes (0, 2) and (1, 3) for the four units, each weight word the same way,
 * two SMLAD per four inputs and unit; four groups of four inputs per loop iteration, one pointer per
 * unit so every load in the unrolled body has an immediate offset (no depth-offset registers).
 *
 * MVE path: mcu_cmsis_gemm_mve.h (four units per step, sixteen inputs per VMLADAVA, the four units
 * requantized as one vector).
 */
#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_gemm_mve.h"
#include "mcu_cmsis_mve.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
/** acc + four inputs (SMLAD order words x02, x13) times the four weights at w. */
static inline int32_t fc_step(int32_t x02, int32_t x13, const int8_t *w, int32_t acc)
{
    const int32_t word = mcu_read_s8x4(w);
    return mcu_smlad(x13, mcu_sxtb16_ror8(word), mcu_smlad(x02, mcu_sxtb16(word), acc));
}

/** Four inputs at xp + k (widened once for the four units) times the weights at w0 + k .. w3 + k. */
static inline void fc_group(const int8_t *xp, int32_t k, const int8_t *w0, const int8_t *w1, const int8_t *w2,
                            const int8_t *w3, int32_t *a0, int32_t *a1, int32_t *a2, int32_t *a3)
{
    const int32_t word = mcu_read_s8x4(xp + k);
    const int32_t x02 = mcu_sxtb16(word), x13 = mcu_sxtb16_ror8(word);
    /* one unit at a time: no register to spare for the weights of more */
    *a0 = fc_step(x02, x13, w0 + k, *a0);
    mcu_schedule_barrier();
    *a1 = fc_step(x02, x13, w1 + k, *a1);
    mcu_schedule_barrier();
    *a2 = fc_step(x02, x13, w2 + k, *a2);
    mcu_schedule_barrier();
    *a3 = fc_step(x02, x13, w3 + k, *a3);
    mcu_schedule_barrier();
}
#endif

void mcu_cmsis_fully_connected_s8(const mcu_cmsis_fc_params *p, const int8_t *input, const int8_t *weights,
                                  const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                  const int32_t *rq, int8_t *output)
{
    const int32_t rows = p->rows;
    const int32_t depth = p->depth;
    const int32_t units = p->units;
    const int32_t out_offset = p->output_offset;
    const int32_t act_min = p->act_min;
    const int32_t act_max = p->act_max;
    (void)rq; /* read by the DSP path only */
#if defined(MCU_CMSIS_USE_MVE)
    if (depth > 0) { /* Helium: mcu_cmsis_gemm_mve.h */
        mcu_cmsis_fully_connected_s8_mve(p, input, weights, bias, multiplier, shift, output);
        return;
    }
#endif
    for (int32_t r = 0; r < rows; r++) {
        const int8_t *x = input + r * depth;
        int8_t *out = output + r * units;
        int32_t u = 0;
#if defined(MCU_CMSIS_USE_MVE)
        /* depth 0 only (see above): every unit is its bias, requantized below */
#elif defined(MCU_CMSIS_USE_DSP)
        const int32_t groups = depth >> 2;
        for (; u + 4 <= units; u += 4) {
            /* units u .. u + 3 at w0 .. w3 */
            const int8_t *w0 = weights + u * depth, *w1 = w0 + depth, *w2 = w1 + depth, *w3 = w2 + depth;
            int32_t a0 = bias[u], a1 = bias[u + 1], a2 = bias[u + 2], a3 = bias[u + 3];
            const int8_t *xp = x;
            const int8_t *const xp_end = x + 4 * groups;
            if (groups & 1) {
                fc_group(xp, 0, w0, w1, w2, w3, &a0, &a1, &a2, &a3);
                xp += 4, w0 += 4, w1 += 4, w2 += 4, w3 += 4;
            }
            if (groups & 2) {
                fc_group(xp, 0, w0, w1, w2, w3, &a0, &a1, &a2, &a3);
                fc_group(xp, 4, w0, w1, w2, w3, &a0, &a1, &a2, &a3);
                xp += 8, w0 += 8, w1 += 8, w2 += 8, w3 += 8;
            }
            while (xp != xp_end) { /* four groups per iteration */
                fc_group(xp, 0, w0, w1, w2, w3, &a0, &a1, &a2, &a3);
                fc_group(xp, 4, w0, w1, w2, w3, &a0, &a1, &a2, &a3);
                fc_group(xp, 8, w0, w1, w2, w3, &a0, &a1, &a2, &a3);
                fc_group(xp, 12, w0, w1, w2, w3, &a0, &a1, &a2, &a3);
                xp += 16, w0 += 16, w1 += 16, w2 += 16, w3 += 16;
            }
            for (int32_t d = 4 * groups; d < depth; d++, w0++, w1++, w2++, w3++) {
                a0 += x[d] * w0[0];
                a1 += x[d] * w1[0];
                a2 += x[d] * w2[0];
                a3 += x[d] * w3[0];
            }
            if (rq != NULL) {
                const int32_t *r = rq + 3 * u;
                out[u] = (int8_t)mcu_cmsis_rq_clamp(a0, r, act_min, act_max);
                out[u + 1] = (int8_t)mcu_cmsis_rq_clamp(a1, r + 3, act_min, act_max);
                out[u + 2] = (int8_t)mcu_cmsis_rq_clamp(a2, r + 6, act_min, act_max);
                out[u + 3] = (int8_t)mcu_cmsis_rq_clamp(a3, r + 9, act_min, act_max);
                continue;
            }
            const int32_t acc[4] = {a0, a1, a2, a3};
            for (int32_t j = 0; j < 4; j++) {
                out[u + j] = mcu_cmsis_requantize_s8(acc[j], multiplier[u + j], shift[u + j], out_offset, act_min,
                                                     act_max);
            }
        }
#endif
        for (; u < units; u++) {
            const int8_t *w = weights + u * depth;
            int32_t acc = bias[u];
            for (int32_t d = 0; d < depth; d++) {
                acc += x[d] * w[d];
            }
            out[u] = mcu_cmsis_requantize_s8(acc, multiplier[u], shift[u], out_offset, act_min, act_max);
        }
    }
}
