/*
 * int8 LSTM on the cmsis-nn target: TFLM's integer LSTM (the arithmetic of mcuforge_lstm.h, as the
 * portable mcu_lstm_s8), each time step as two matrix-vector products over all four gates at once
 * ([4 * units][inputs] by the input frame, [4 * units][units] by the hidden state) into int16 gate
 * pre-activations, then the gates, cell and hidden updates unit by unit.
 *
 * Weights are [4 * units][stride] with each row zero-padded to a multiple of four (the frame and the
 * hidden state are copied into zero-padded scratch rows, so the products need no tail loop).
 * rq: the DSP path's fast requantization records {m, add, right} (mcu_cmsis_rq3 in mcu_cmsis_dsp.h),
 * proven at compile time for every product the step can form (planner/targets/cmsis_nn/requant.py),
 * {0, 0, 0} where there is no proof (the exact path): the four gates' input FCs, their recurrent FCs,
 * then forget * cell, input * cell gate and tanh(cell) * output (11 records).
 */
#ifndef MCU_CMSIS_LSTM_S8_H
#define MCU_CMSIS_LSTM_S8_H

#include <stdint.h>

#include "mcuforge_lstm.h"

/** Scratch: the int16 pre-activations of the four gates, then the padded frame and hidden state. */
#define MCU_CMSIS_LSTM_S8_SCRATCH_BYTES(units, input_stride, recurrent_stride) \
    (8 * (units) + (input_stride) + (recurrent_stride))

typedef struct {
    mcu_lstm_params lstm;     /**< as the portable kernel's */
    int32_t input_stride;     /**< inputs rounded up to a multiple of 4 */
    int32_t recurrent_stride; /**< units rounded up to a multiple of 4 */
} mcu_cmsis_lstm_params;

/** Indices of the records in rq (each three int32). */
enum { MCU_LSTM_RQ_INPUT = 0, MCU_LSTM_RQ_RECURRENT = 4, MCU_LSTM_RQ_FORGET = 8, MCU_LSTM_RQ_INPUT_GATE = 9,
       MCU_LSTM_RQ_HIDDEN = 10 };

void mcu_cmsis_lstm_s8(const mcu_cmsis_lstm_params *p, const int8_t *input, int8_t *hidden, int16_t *cell,
                       const int32_t *input_bias, const int32_t *recurrent_bias, const int8_t *input_weights,
                       const int8_t *recurrent_weights, const uint16_t *sigmoid_table, const int32_t *rq,
                       void *scratch, int8_t *output);

#endif /* MCU_CMSIS_LSTM_S8_H */
