/*
 * int8 SVDF with an int16 state (see mcu_cmsis_svdf_s8.h). Per batch: age the memory one frame, the
 * feature matmul into each filter's newest slot, then per unit the time matmul of its rank's filters
 * (two int16 pairs per SMLAD on the DSP path, VMLADAVA on Helium), bias, requantization.
 */
#include "mcu_cmsis_svdf_s8.h"

#include <string.h>

#include "mcu_cmsis_rows4.h"

/** The newest slot of one filter: the feature accumulator requantized, clamped to int16, plus the
    state's zero point, stored as int16 (wrapping, as TFLM's store). */
static inline int16_t svdf_newest(int32_t acc, const mcu_cmsis_svdf_params *p, const int32_t *rq)
{
    return (int16_t)(mcu_cmsis_ssat16(mcu_cmsis_requant_rq(acc, p->feature_multiplier, p->feature_shift, 0, rq))
                     + p->state_zero_point);
}

/** sum over m of w[m] * s[m] (int32, wrapping). */
static inline int32_t svdf_time_dot(const int16_t *w, const int16_t *s, int32_t m)
{
    int32_t acc = 0, i = 0;
#if defined(MCU_CMSIS_USE_MVE)
    for (; i + 8 <= m; i += 8) {
        acc = vmladavaq_s16(acc, vldrhq_s16(w + i), vldrhq_s16(s + i));
    }
#elif defined(MCU_CMSIS_USE_DSP)
    for (; i + 2 <= m; i += 2) {
        acc = mcu_smlad(mcu_read_s16x2(w + i), mcu_read_s16x2(s + i), acc);
    }
#endif
    for (; i < m; i++) {
        acc += (int32_t)w[i] * s[i];
    }
    return acc;
}

void mcu_cmsis_svdf_s8_s16(const mcu_cmsis_svdf_params *p, const int8_t *input, const int8_t *feature_weights,
                           const int16_t *time_weights, const int32_t *bias, int16_t *state,
                           const int32_t *feature_bias, const int32_t *time_bias, const int32_t *feature_rq,
                           void *scratch, int8_t *output)
{
    const int32_t batches = p->batches, inputs = p->inputs, k = p->input_stride, filters = p->filters;
    const int32_t memory = p->memory, rank = p->rank, units = p->units;
    int8_t *x = (int8_t *)scratch;
    memset(x, 0, (size_t)k);
    memmove(state, state + 1, (size_t)(batches * filters * memory - 1) * sizeof(int16_t));
    for (int32_t b = 0; b < batches; b++) {
        int16_t *s = state + b * filters * memory;
        memcpy(x, input + b * inputs, (size_t)inputs);
        int32_t f = 0;
        for (; f + 4 <= filters; f += 4) {
            int32_t acc[4] = {feature_bias[f], feature_bias[f + 1], feature_bias[f + 2], feature_bias[f + 3]};
            mcu_cmsis_rows4_dot(x, feature_weights + f * k, k, acc);
            for (int32_t j = 0; j < 4; j++) {
                s[(f + j) * memory + memory - 1] = svdf_newest(acc[j], p, feature_rq);
            }
        }
        for (; f < filters; f++) {
            int32_t acc = feature_bias[f];
            for (int32_t i = 0; i < inputs; i++) {
                acc += x[i] * feature_weights[f * k + i];
            }
            s[f * memory + memory - 1] = svdf_newest(acc, p, feature_rq);
        }
        for (int32_t u = 0; u < units; u++) {
            uint32_t acc = (uint32_t)bias[u]; /* TFLM sums in int32, wrapping */
            for (int32_t r = 0; r < rank; r++) {
                const int32_t fr = u * rank + r;
                acc += (uint32_t)svdf_time_dot(time_weights + fr * memory, s + fr * memory, memory);
                acc += (uint32_t)time_bias[fr];
            }
            int32_t y = mcu_requantize((int32_t)acc, p->time_multiplier, p->time_shift) + p->output_offset;
            y = y < -128 ? -128 : y > 127 ? 127 : y;
            output[b * units + u] = (int8_t)y;
        }
    }
}
