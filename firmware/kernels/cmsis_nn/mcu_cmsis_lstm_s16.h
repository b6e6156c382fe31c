/*
 * 16x8 LSTM on the cmsis-nn target: TFLM's integer LSTM with int16 activations and int8 weights
 * (EvalLstm<int16_t, int8_t, int16_t, int64_t>; the arithmetic of mcuforge_lstm.h, as the portable
 * mcu_lstm_s16), each time step as two matrix-vector products over all four gates at once
 * ([4 * units][inputs] by the input frame, [4 * units][units] by the hidden state) through the 16x8
 * one-column tiles of mcu_cmsis_s16.h (DSP: SMLAD on int16 pairs against SXTB16-split weight words;
 * Helium: VMLADAVA.S16), four rows per pass.
 *
 * Weights: the [4 * units][inputs] and [4 * units][units] matrices as tiles of four rows
 * (mcu_cmsis_s16.h's layout: depth zero-padded to a multiple of 8, rows to a multiple of 4). The sums
 * are exact: a tile sums `chunk` depth values in int32 (the code generator proves that 32768 times
 * the sum of |w| over any chunk of a row stays within int32) and adds chunks in int64; the folded
 * int64 bias then joins, and TFLM's int64 requantization (mcu_requantize_s64) gives the gate's
 * int16 pre-activation.
 */
#ifndef MCU_CMSIS_LSTM_S16_H
#define MCU_CMSIS_LSTM_S16_H

#include <stdint.h>

#include "mcuforge_lstm.h"

/** Scratch: the int16 pre-activations of the four gates, then for the frame and for the hidden state
    a zero-padded row and its one-column tile (depth8 int16 each). */
#define MCU_CMSIS_LSTM_S16_SCRATCH_BYTES(units, input_depth8, recurrent_depth8) \
    (8 * (units) + 4 * (input_depth8) + 4 * (recurrent_depth8))

typedef struct {
    mcu_lstm_params lstm;     /**< as the portable kernel's */
    int32_t input_depth8;     /**< inputs rounded up to a multiple of 8 */
    int32_t recurrent_depth8; /**< units rounded up to a multiple of 8 */
    int32_t input_chunk;      /**< depth values (a multiple of 8) summed in int32 before int64 */
    int32_t recurrent_chunk;
} mcu_cmsis_lstm_s16_params;

void mcu_cmsis_lstm_s16(const mcu_cmsis_lstm_s16_params *p, const int16_t *input, int16_t *hidden, int16_t *cell,
                        const int64_t *input_bias, const int64_t *recurrent_bias, const int8_t *input_weights,
                        const int8_t *recurrent_weights, const uint16_t *sigmoid_table, void *scratch,
                        int16_t *output);

#endif /* MCU_CMSIS_LSTM_S16_H */
