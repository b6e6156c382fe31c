/* Portable 16x8 fully connected layer: TFLM's reference FullyConnected / FullyConnectedPerChannel for
   int16 activations (raw inputs; the weight offset applies with per-tensor weights). */
#include "mcu_kernels_c.h"

static void fully_connected_s16(const mcu_fully_connected_params *p, const int16_t *input, const int8_t *weights,
                                const int64_t *bias64, const int32_t *bias32, const int32_t *multiplier,
                                const int32_t *shift, int16_t *output)
{
    const int32_t depth = p->depth, units = p->units, weight_offset = p->weight_offset;
    for (int32_t r = 0; r < p->rows; r++) {
        const int16_t *x = input + r * depth;
        for (int32_t u = 0; u < units; u++) {
            const int8_t *w = weights + u * depth;
            int64_t sum = 0;
            for (int32_t d = 0; d < depth; d++) {
                sum += (int32_t)x[d] * ((int32_t)w[d] + weight_offset);
            }
            output[r * units + u] =
                mcu_s16_output(sum, bias64, bias32, u, multiplier[u], shift[u], p->act_min, p->act_max);
        }
    }
}

void mcu_fully_connected_s16(const mcu_fully_connected_params *p, const int16_t *input, const int8_t *weights,
                             const int64_t *bias, const int32_t *multiplier, const int32_t *shift, int16_t *output)
{
    fully_connected_s16(p, input, weights, bias, 0, multiplier, shift, output);
}

void mcu_fully_connected_s16_acc32(const mcu_fully_connected_params *p, const int16_t *input, const int8_t *weights,
                                   const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                   int16_t *output)
{
    fully_connected_s16(p, input, weights, 0, bias, multiplier, shift, output);
}
