/*
 * 16x8 LSTM (see mcu_cmsis_lstm_s16.h). Per time step:
 *
 *   1. the frame and the hidden state, zero-padded, each into a one-column tile;
 *   2. pre[r] = sat16(requantize64(input_bias[r] + W[r] . x, gate of r))          r < 4 * units
 *      pre[r] = sat16(pre[r] + sat16(requantize64(recurrent_bias[r] + R[r] . h, gate of r)))
 *   3. per unit: sigmoid / tanh of its four gates, the new cell state, the new hidden value (written
 *      over h: step 1 has copied all of it).
 */
#include "mcu_cmsis_lstm_s16.h"

#include <string.h>

#include "mcu_cmsis_s16.h"

/** `src` (n values) zero-padded to depth8 in `row`, then as a one-column tile in `tile`. */
static void lstm_s16_column(const int16_t *src, int32_t n, int32_t depth8, int16_t *row, int16_t *tile)
{
    memcpy(row, src, (size_t)n * sizeof(int16_t));
    memset(row + n, 0, (size_t)(depth8 - n) * sizeof(int16_t));
    mcu_cmsis_s16_put_column(row, depth8, 1, 0, tile);
}

/** The 4 * units rows of a gate matrix (tiles of four rows) times one column into pre: each row's
    exact sum plus its int64 bias, requantized by its gate's (multiplier, shift), saturated to int16;
    with `add`, saturated-added to what pre holds. */
static void lstm_s16_gates(const int16_t *tile, const int8_t *w, int32_t depth8, int32_t chunk, const int64_t *bias,
                           int32_t units, const int32_t *multiplier, const int32_t *shift, int16_t *pre, int add)
{
    const int32_t rows = 4 * units;
    for (int32_t r = 0; r < rows; r += 4, w += 4 * depth8) {
        int32_t s32[4];
        int64_t s64[4];
        const int32_t one = mcu_cmsis_s16_tile1x4(tile, w, depth8, chunk, s32, s64);
        for (int32_t i = 0; i < 4 && r + i < rows; i++) {
            const int32_t g = (r + i) / units;
            const int64_t acc = (one ? (int64_t)s32[i] : s64[i]) + bias[r + i];
            const int32_t v = mcu_sat16(mcu_requantize_s64(acc, multiplier[g], shift[g]));
            pre[r + i] = (int16_t)(add ? mcu_sat16(pre[r + i] + v) : v);
        }
    }
}

void mcu_cmsis_lstm_s16(const mcu_cmsis_lstm_s16_params *cp, const int16_t *input, int16_t *hidden, int16_t *cell,
                        const int64_t *input_bias, const int64_t *recurrent_bias, const int8_t *input_weights,
                        const int8_t *recurrent_weights, const uint16_t *sigmoid_table, void *scratch,
                        int16_t *output)
{
    const mcu_lstm_params *p = &cp->lstm;
    const int32_t batches = p->batches, steps = p->steps, inputs = p->inputs, units = p->units;
    const int32_t xd = cp->input_depth8, hd = cp->recurrent_depth8;
    int16_t *pre = (int16_t *)scratch;
    int16_t *x_row = pre + 4 * units, *x_tile = x_row + xd;
    int16_t *h_row = x_tile + xd, *h_tile = h_row + hd;

    for (int32_t b = 0; b < batches; b++) {
        int16_t *h = hidden + b * units;
        int16_t *c = cell + b * units;
        for (int32_t t = 0; t < steps; t++) {
            const int32_t row = p->time_major ? t * batches + b : b * steps + t;
            lstm_s16_column(input + row * inputs, inputs, xd, x_row, x_tile);
            lstm_s16_column(h, units, hd, h_row, h_tile);
            lstm_s16_gates(x_tile, input_weights, xd, cp->input_chunk, input_bias, units, p->input_multiplier,
                           p->input_shift, pre, 0);
            lstm_s16_gates(h_tile, recurrent_weights, hd, cp->recurrent_chunk, recurrent_bias, units,
                           p->recurrent_multiplier, p->recurrent_shift, pre, 1);
            int16_t *out = output + row * units;
            for (int32_t u = 0; u < units; u++) {
                const int32_t i = mcu_lstm_sigmoid(pre[u], sigmoid_table);
                const int32_t f = mcu_lstm_sigmoid(pre[units + u], sigmoid_table);
                const int32_t g = mcu_lstm_tanh(pre[2 * units + u], 3, 0, sigmoid_table);
                const int32_t o = mcu_lstm_sigmoid(pre[3 * units + u], sigmoid_table);
                const int32_t c_new = mcu_lstm_cell(p, f, c[u], i, g);
                c[u] = (int16_t)c_new;
                h[u] = (int16_t)mcu_lstm_hidden(p, c_new, o, sigmoid_table, INT16_MIN, INT16_MAX);
                out[u] = h[u];
            }
        }
    }
}
