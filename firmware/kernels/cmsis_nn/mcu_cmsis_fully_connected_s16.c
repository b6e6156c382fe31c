/*
 * 16x8 fully connected layer: each input row (zero-padded to depth8) goes into a one-column tile;
 * every four units then take one pass over it (mcu_cmsis_s16.h: DSP SMLAD on int16 pairs, Helium
 * VMLADAVA.S16), four exact sums per pass, each through its unit's record.
 */
#include <string.h>

#include "mcu_cmsis_fully_connected_s16.h"
#include "mcu_cmsis_s16.h"

void mcu_cmsis_fully_connected_s16(const mcu_cmsis_fc_s16_params *p, const int16_t *input, const int8_t *weights,
                                   const int32_t *rq, int16_t *scratch, int16_t *output)
{
    const int32_t depth = p->depth, depth8 = p->depth8, units = p->units;
    int16_t *tile = scratch;
    int16_t *row = scratch + depth8;
    for (int32_t r = 0; r < p->rows; r++, input += depth, output += units) {
        const int16_t *x = input;
        if (depth != depth8) {
            memcpy(row, input, (size_t)depth * sizeof(int16_t));
            memset(row + depth, 0, (size_t)(depth8 - depth) * sizeof(int16_t));
            x = row;
        }
        mcu_cmsis_s16_put_column(x, depth8, 1, 0, tile);
        for (int32_t u = 0; u < units; u += 4) {
            int32_t s32[4];
            int64_t s64[4];
            const int32_t one = mcu_cmsis_s16_tile1x4(tile, weights + u * depth8, depth8, p->chunk, s32, s64);
            if (one) {
                mcu_cmsis_s16_store4(s32, rq + 4 * u, p->mode, p->act_min, p->act_max, output + u, 1,
                                     units - u < 4 ? units - u : 4);
                continue;
            }
            for (int32_t i = 0; i < 4 && u + i < units; i++) {
                output[u + i] = mcu_cmsis_s16_result(one, s32, s64, i, rq + 4 * (u + i), p->mode, p->act_min,
                                                     p->act_max);
            }
        }
    }
}
