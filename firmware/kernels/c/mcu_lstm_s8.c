/* Portable integer LSTMs (8x8->16 and 16x8->16): TFLM's integer LSTM step by step (see mcu_lstm_s8.h). */
#include "mcu_lstm_s8.h"

#include <string.h>

/* One gate's 8x8 FC into Q3.12: the folded bias plus the dot product, requantized, saturated to int16. */
static int32_t gate_fc_s8(const int8_t *w, const int8_t *v, int32_t n, int32_t bias, int32_t mult, int32_t shift)
{
    int32_t acc = bias;
    for (int32_t i = 0; i < n; i++) {
        acc += (int32_t)w[i] * (int32_t)v[i];
    }
    return mcu_sat16(mcu_requantize(acc, mult, shift));
}

/* One gate's 16x8 FC into Q3.12: the folded bias plus the dot product in int64, TFLM's int64
   requantization, saturated to int16. */
static int32_t gate_fc_s16(const int8_t *w, const int16_t *v, int32_t n, int64_t bias, int32_t mult, int32_t shift)
{
    int64_t acc = bias;
    for (int32_t i = 0; i < n; i++) {
        acc += (int32_t)w[i] * (int32_t)v[i];
    }
    return mcu_sat16(mcu_requantize_s64(acc, mult, shift));
}

/* One body for both: T is the activation (input, hidden, output) type, [T_MIN, T_MAX] its range,
   GATE_FC the FC of that type. Per batch and step, per unit: the four gates (all reading the old
   hidden state), the new cell state, the new hidden value (kept in scratch until the step ends). */
#define MCU_LSTM_BODY(T, T_MIN, T_MAX, GATE_FC)                                                           \
    const int32_t batches = p->batches, steps = p->steps, inputs = p->inputs, units = p->units;         \
    T *new_hidden = (T *)scratch;                                                                        \
    for (int32_t b = 0; b < batches; b++) {                                                              \
        T *h = hidden + b * units;                                                                       \
        int16_t *c = cell + b * units;                                                                   \
        for (int32_t t = 0; t < steps; t++) {                                                            \
            const int32_t row = p->time_major ? t * batches + b : b * steps + t;                         \
            const T *x = input + row * inputs;                                                           \
            for (int32_t u = 0; u < units; u++) {                                                        \
                int32_t gate[4];                                                                         \
                for (int32_t g = 0; g < 4; g++) {                                                        \
                    const int32_t k = g * units + u;                                                     \
                    const int32_t in = GATE_FC(input_weights + k * inputs, x, inputs, input_bias[k],     \
                                               p->input_multiplier[g], p->input_shift[g]);               \
                    const int32_t rec = GATE_FC(recurrent_weights + k * units, h, units, recurrent_bias[k], \
                                                p->recurrent_multiplier[g], p->recurrent_shift[g]);      \
                    gate[g] = mcu_sat16(in + rec);                                                       \
                }                                                                                        \
                const int32_t i = mcu_lstm_sigmoid(gate[0], sigmoid_table);                               \
                const int32_t f = mcu_lstm_sigmoid(gate[1], sigmoid_table);                               \
                const int32_t g = mcu_lstm_tanh(gate[2], 3, 0, sigmoid_table);                            \
                const int32_t o = mcu_lstm_sigmoid(gate[3], sigmoid_table);                               \
                const int32_t c_new = mcu_lstm_cell(p, f, c[u], i, g);                                   \
                c[u] = (int16_t)c_new;                                                                   \
                new_hidden[u] = (T)mcu_lstm_hidden(p, c_new, o, sigmoid_table, T_MIN, T_MAX);            \
            }                                                                                            \
            memcpy(h, new_hidden, (size_t)units * sizeof(T));                                            \
            memcpy(output + row * units, new_hidden, (size_t)units * sizeof(T));                         \
        }                                                                                                \
    }

void mcu_lstm_s8(const mcu_lstm_params *p, const int8_t *input, int8_t *hidden, int16_t *cell,
                 const int32_t *input_bias, const int32_t *recurrent_bias, const int8_t *input_weights,
                 const int8_t *recurrent_weights, const uint16_t *sigmoid_table, void *scratch, int8_t *output)
{
    MCU_LSTM_BODY(int8_t, INT8_MIN, INT8_MAX, gate_fc_s8)
}

void mcu_lstm_s16(const mcu_lstm_params *p, const int16_t *input, int16_t *hidden, int16_t *cell,
                  const int64_t *input_bias, const int64_t *recurrent_bias, const int8_t *input_weights,
                  const int8_t *recurrent_weights, const uint16_t *sigmoid_table, void *scratch, int16_t *output)
{
    MCU_LSTM_BODY(int16_t, INT16_MIN, INT16_MAX, gate_fc_s16)
}
