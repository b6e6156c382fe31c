/* Portable int8 SVDF: TFLM's EvalIntegerSvdfReference<T> for an int16 and an int8 state. */
#include "mcu_svdf_s8.h"

#include <string.h>

#include "mcuforge_fixedpoint.h"

/* One body for both state types: T is the state and time-weight type, [T_MIN, T_MAX] its range. */
#define MCU_SVDF_BODY(T, T_MIN, T_MAX)                                                                     \
    const int32_t batches = p->batches, inputs = p->inputs, filters = p->filters;                         \
    const int32_t memory = p->memory, rank = p->rank, units = p->units;                                   \
    const int32_t state_zp = p->state_zero_point;                                                         \
    const int32_t n = batches * filters * memory;                                                         \
    memmove(state, state + 1, (size_t)(n - 1) * sizeof(T)); /* age every filter's memory one frame */     \
    for (int32_t b = 0; b < batches; b++) {                                                                \
        const int8_t *x = input + b * inputs;                                                              \
        for (int32_t f = 0; f < filters; f++) {                                                            \
            const int8_t *w = feature_weights + f * inputs;                                                \
            int32_t acc = 0;                                                                               \
            for (int32_t i = 0; i < inputs; i++) {                                                         \
                acc += (int32_t)w[i] * ((int32_t)x[i] + p->input_offset);                                  \
            }                                                                                              \
            acc = mcu_requantize(acc, p->feature_multiplier, p->feature_shift);                           \
            acc = acc < (T_MIN) ? (T_MIN) : acc > (T_MAX) ? (T_MAX) : acc;                                 \
            /* + the zero point after the clamp, stored as T: an int8 state wraps, as in TFLM */           \
            state[(b * filters + f) * memory + memory - 1] = (T)(acc + state_zp);                          \
        }                                                                                                  \
    }                                                                                                      \
    for (int32_t b = 0; b < batches; b++) {                                                                \
        const T *s = state + b * filters * memory;                                                         \
        for (int32_t u = 0; u < units; u++) {                                                              \
            /* TFLM sums in int32, wrapping: unsigned arithmetic gives the same bits without UB */         \
            uint32_t acc = (uint32_t)bias[u];                                                              \
            const int32_t first = u * rank * memory, last = first + rank * memory;                         \
            for (int32_t k = first; k < last; k++) {                                                       \
                acc += (uint32_t)((int32_t)time_weights[k] * ((int32_t)s[k] - state_zp));                   \
            }                                                                                              \
            int32_t y = mcu_requantize((int32_t)acc, p->time_multiplier, p->time_shift) + p->output_offset; \
            y = y < -128 ? -128 : y > 127 ? 127 : y;                                                       \
            output[b * units + u] = (int8_t)y;                                                             \
        }                                                                                                  \
    }

void mcu_svdf_s8_s16(const mcu_svdf_params *p, const int8_t *input, const int8_t *feature_weights,
                     const int16_t *time_weights, const int32_t *bias, int16_t *state, int8_t *output)
{
    MCU_SVDF_BODY(int16_t, INT16_MIN, INT16_MAX)
}

void mcu_svdf_s8_s8(const mcu_svdf_params *p, const int8_t *input, const int8_t *feature_weights,
                    const int8_t *time_weights, const int32_t *bias, int8_t *state, int8_t *output)
{
    MCU_SVDF_BODY(int8_t, INT8_MIN, INT8_MAX)
}
