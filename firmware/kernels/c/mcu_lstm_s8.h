/*
 * Portable int8 LSTM: TFLM's integer UNIDIRECTIONAL_SEQUENCE_LSTM (lstm_eval.h, EvalLstm<int8_t,
 * int8_t, int16_t, int32_t>): int8 input, output and hidden state, int8 weights, int16 gates
 * (Q3.12 in, Q0.15 out) and cell state. The hidden and cell states are read and updated in place.
 *
 * The weights are [4][units][inputs] and [4][units][units] in the gate order input, forget, cell,
 * output; the biases [4][units] fold in the zero points: input_bias = bias - input_zp * sum(row),
 * recurrent_bias = -hidden_zp * sum(row). Parameters and the shared arithmetic: mcuforge_lstm.h.
 *
 * mcu_lstm_s16: the 16x8 LSTM (EvalLstm<int16_t, int8_t, int16_t, int64_t>): int16 input, output and
 * hidden state, int64 biases (folded as above), int64 accumulators requantized by TFLM's int64
 * MultiplyByQuantizedMultiplier (mcu_requantize_s64).
 */
#ifndef MCU_LSTM_S8_H
#define MCU_LSTM_S8_H

#include <stdint.h>

#include "mcuforge_lstm.h"

/** Scratch: the new hidden state of one step (the gates of every unit read the old one). */
#define MCU_LSTM_S8_SCRATCH_BYTES(units) (((units) + 3) / 4 * 4)
#define MCU_LSTM_S16_SCRATCH_BYTES(units) ((2 * (units) + 3) / 4 * 4)

void mcu_lstm_s8(const mcu_lstm_params *p, const int8_t *input, int8_t *hidden, int16_t *cell,
                 const int32_t *input_bias, const int32_t *recurrent_bias, const int8_t *input_weights,
                 const int8_t *recurrent_weights, const uint16_t *sigmoid_table, void *scratch, int8_t *output);

void mcu_lstm_s16(const mcu_lstm_params *p, const int16_t *input, int16_t *hidden, int16_t *cell,
                  const int64_t *input_bias, const int64_t *recurrent_bias, const int8_t *input_weights,
                  const int8_t *recurrent_weights, const uint16_t *sigmoid_table, void *scratch, int16_t *output);

#endif /* MCU_LSTM_S8_H */
