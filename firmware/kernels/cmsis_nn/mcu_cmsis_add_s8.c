/*
 * int8 element-wise addition of same-shape tensors, TFLM's AddFunc for every element:
 *   a = rescale((x1 + offset1) << left_shift, m1, s1), b = rescale((x2 + offset2) << left_shift, m2, s2)
 *   out = clamp(rescale(a + b, m_out, s_out) + output_offset)
 * with rescale = MultiplyByQuantizedMultiplierSmallerThanOneExp (every shift <= 0). Each element of
 * both inputs is read before that element is written, so the output may be either input.
 *
 * DSP path (full int8 clamp, fast output requantization proven): a and b depend on one int8 each,
 * so they come from the planner's tables (256 values per input), and the sum takes mcu_cmsis_rq;
 * four elements per step, each input's four read as one word.
 */
#include "mcu_cmsis_add_mve.h"
#include "mcu_cmsis_dsp.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
/** One output element from its two inputs' rescaled values (the tables) and the sum's record. */
static inline int8_t add_tables(const int32_t *t1, const int32_t *t2, int32_t x1, int32_t x2, int32_t m, int32_t add,
                                int32_t right)
{
    return (int8_t)mcu_ssat8(mcu_cmsis_rq3(t1[x1] + t2[x2], m, add, right));
}
#endif

void mcu_cmsis_add_s8(const mcu_cmsis_add_params *p, const int8_t *input1, const int8_t *input2, const int32_t *table,
                      const int32_t *rq, int8_t *output)
{
    (void)table; /* read by the DSP path only */
    (void)rq;
#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
    if (rq != NULL && p->act_min == -128 && p->act_max == 127) { /* the rescaled inputs from the tables */
        const int32_t *t1 = table + 128, *t2 = table + 256 + 128;
        const int32_t size = p->size, m = rq[0], add = rq[1], right = rq[2]; /* before any int8 store */
        int32_t i = 0;
        for (; i + 4 <= size; i += 4) { /* four elements of each input read as a word before their stores */
            const uint32_t w1 = (uint32_t)mcu_read_s8x4(input1 + i), w2 = (uint32_t)mcu_read_s8x4(input2 + i);
            output[i] = add_tables(t1, t2, (int8_t)w1, (int8_t)w2, m, add, right);
            output[i + 1] = add_tables(t1, t2, (int8_t)(w1 >> 8), (int8_t)(w2 >> 8), m, add, right);
            output[i + 2] = add_tables(t1, t2, (int8_t)(w1 >> 16), (int8_t)(w2 >> 16), m, add, right);
            output[i + 3] = add_tables(t1, t2, (int8_t)(w1 >> 24), (int8_t)(w2 >> 24), m, add, right);
        }
        for (; i < size; i++) {
            output[i] = add_tables(t1, t2, input1[i], input2[i], m, add, right);
        }
        return;
    }
#endif
#if defined(MCU_CMSIS_USE_MVE)
    if (p->size > 0) { /* Helium: four elements per vector (mcu_cmsis_add_mve.h) */
        mcu_cmsis_add_s8_mve(p, input1, input2, output);
        return;
    }
#endif
    const int32_t size = p->size;
    const int32_t scale = (int32_t)1 << p->left_shift;
    const int32_t offset1 = p->input1_offset, mult1 = p->input1_multiplier, shift1 = p->input1_shift;
    const int32_t offset2 = p->input2_offset, mult2 = p->input2_multiplier, shift2 = p->input2_shift;
    const int32_t out_mult = p->output_multiplier, out_shift = p->output_shift, out_offset = p->output_offset;
    const int32_t act_min = p->act_min, act_max = p->act_max;
    for (int32_t i = 0; i < size; i++) {
        const int32_t a = mcu_requantize_q31((input1[i] + offset1) * scale, mult1, shift1);
        const int32_t b = mcu_requantize_q31((input2[i] + offset2) * scale, mult2, shift2);
        output[i] = mcu_cmsis_requantize_s8(a + b, out_mult, out_shift, out_offset, act_min, act_max);
    }
}
