/*
 * TFLM's integer LSTM, the parts every mcuforge LSTM kernel shares (the portable mcu_lstm_s8 and the
 * cmsis-nn target's mcu_cmsis_lstm_s8): the parameter struct the lowering fills
 * (ir/ops/unidirectional_sequence_lstm.py, lower_c), TFLM's int16 sigmoid and tanh
 * (reference_integer_ops::Logistic / Tanh for int16: mcuforge_int16_lut.h, shared with the int16
 * LOGISTIC / TANH kernels) and the cell and hidden state updates
 * (lstm_eval.h UpdateLstmCell / UpdateLstmHidden).
 *
 * Per-gate arrays are in TFLite's gate order: input, forget, cell, output.
 */
#ifndef MCUFORGE_LSTM_H
#define MCUFORGE_LSTM_H

#include <stdint.h>

#include "mcuforge_fixedpoint.h"
#include "mcuforge_int16_lut.h"

typedef struct {
    int32_t batches;                 /**< >= 1 */
    int32_t steps;                   /**< time steps per run, >= 1 */
    int32_t inputs;                  /**< input features, >= 1 */
    int32_t units;                   /**< state dimension, >= 1 */
    int32_t time_major;              /**< 1: input [steps][batches][inputs], 0: [batches][steps][inputs] */
    int32_t input_multiplier[4];     /**< input FC -> Q3.12, per gate, Q0.31 */
    int32_t input_shift[4];          /**< in [-31, 30] */
    int32_t recurrent_multiplier[4]; /**< recurrent FC -> Q3.12, per gate */
    int32_t recurrent_shift[4];
    int32_t forget_multiplier;       /**< forget gate * cell state -> cell state (2^-15) */
    int32_t forget_shift;
    int32_t input_gate_multiplier;   /**< input gate * cell gate -> cell state (2^-30 / cell scale) */
    int32_t input_gate_shift;
    int32_t hidden_multiplier;       /**< tanh(cell) * output gate -> hidden (2^-30 / hidden scale) */
    int32_t hidden_shift;
    int32_t hidden_zero_point;       /**< in the hidden state's range (int8 or int16) */
    int32_t cell_clip;               /**< in [0, 32767]; 0: no clipping */
    int32_t tanh_multiplier;         /**< the cell state into tanh's input: (c * m + round) >> shift */
    int32_t tanh_shift;              /**< in [0, 31]; tanh_multiplier * 32768 < 2^31 */
} mcu_lstm_params;

static inline int32_t mcu_sat16(int32_t v)
{
    return v < -32768 ? -32768 : v > 32767 ? 32767 : v;
}

/** sigmoid of a Q3.12 value as Q0.15 (TFLM's Logistic with input multiplier 0: x * 3). */
static inline int32_t mcu_lstm_sigmoid(int32_t x, const uint16_t *table)
{
    return mcu_sigmoid_lut_s16(x * 3, table);
}

/** tanh as Q0.15 of x scaled by (x * multiplier + round) >> shift into TFLM's Tanh input. */
static inline int32_t mcu_lstm_tanh(int32_t x, int32_t multiplier, int32_t shift, const uint16_t *table)
{
    return mcu_tanh_lut_s16(mcu_lut_input(x, multiplier, shift), table);
}

/** The new cell state: sat16(forget * cell + input * cell gate), clipped when cell_clip > 0. */
static inline int32_t mcu_lstm_cell(const mcu_lstm_params *p, int32_t forget, int32_t cell, int32_t input,
                                    int32_t cell_gate)
{
    const int32_t kept = mcu_sat16(mcu_requantize(forget * cell, p->forget_multiplier, p->forget_shift));
    const int32_t added = mcu_sat16(mcu_requantize(input * cell_gate, p->input_gate_multiplier,
                                                   p->input_gate_shift));
    int32_t c = mcu_sat16(kept + added);
    if (p->cell_clip > 0) {
        c = c < -p->cell_clip ? -p->cell_clip : c > p->cell_clip ? p->cell_clip : c;
    }
    return c;
}

/** The new hidden value: zero point + tanh(cell) * output gate, clamped to [lo, hi]. */
static inline int32_t mcu_lstm_hidden(const mcu_lstm_params *p, int32_t cell, int32_t output_gate,
                                      const uint16_t *table, int32_t lo, int32_t hi)
{
    const int32_t th = mcu_lstm_tanh(cell, p->tanh_multiplier, p->tanh_shift, table);
    const int32_t h = p->hidden_zero_point + mcu_requantize(th * output_gate, p->hidden_multiplier, p->hidden_shift);
    return h < lo ? lo : h > hi ? hi : h;
}

#endif /* MCUFORGE_LSTM_H */
