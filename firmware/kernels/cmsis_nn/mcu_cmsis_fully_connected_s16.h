/*
 * 16x8 fully connected layer on the cmsis-nn target (mcu_cmsis_fully_connected_s16.c): each input
 * row against the weight rows of four units at a time (mcu_cmsis_s16.h's tiles).
 */
#ifndef MCU_CMSIS_FULLY_CONNECTED_S16_H
#define MCU_CMSIS_FULLY_CONNECTED_S16_H

#include <stdint.h>

/** Parameters of mcu_cmsis_fully_connected_s16: `rows` input rows of `depth` values; depth8, chunk,
    mode and the clamp as mcu_cmsis_conv_s16_params (symmetric weights: no weight offset). */
typedef struct {
    int32_t rows, depth, units, depth8, chunk, mode, act_min, act_max;
} mcu_cmsis_fc_s16_params;

/** Scratch bytes: the one-column tile and a zero-padded copy of a row, int16. */
#define MCU_CMSIS_FULLY_CONNECTED_S16_SCRATCH_BYTES(depth8) (4 * (depth8))

/** weights: tiles of four units (mcu_cmsis_s16.h), ceil(units / 4) * 4 * depth8 bytes; rq: four
    int32 per unit; output [rows, units]. */
void mcu_cmsis_fully_connected_s16(const mcu_cmsis_fc_s16_params *p, const int16_t *input, const int8_t *weights,
                                   const int32_t *rq, int16_t *scratch, int16_t *output);

#endif /* MCU_CMSIS_FULLY_CONNECTED_S16_H */
