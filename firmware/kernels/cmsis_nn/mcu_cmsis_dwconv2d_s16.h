/*
 * 16x8 depthwise convolution on the cmsis-nn target (mcu_cmsis_dwconv2d_s16.c): depth multiplier 1,
 * channels a multiple of 4, tap by tap over blocks of channels.
 */
#ifndef MCU_CMSIS_DWCONV2D_S16_H
#define MCU_CMSIS_DWCONV2D_S16_H

#include <stdint.h>

/** Parameters of mcu_cmsis_dwconv2d_s16 (batch 1, in_c = out_c = channels, a multiple of 4).
    taps = k_h * k_w; mode and the clamp as mcu_cmsis_conv_s16_params (one int32 chunk always
    suffices: taps * 127 * 32768 < 2^31 for taps < 516, which the code generator checks). */
typedef struct {
    int32_t in_h, in_w, channels, out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t taps, mode, act_min, act_max;
} mcu_cmsis_dw_s16_params;

/** weights: int16 blocks of 8 channels [ceil(channels / 8)][taps][8] (taps in row-major filter order;
    the last block zero-padded when channels % 8 == 4); rq: four int32 per channel (mcu_cmsis_s16.h);
    output [out_h, out_w, channels]. */
void mcu_cmsis_dwconv2d_s16(const mcu_cmsis_dw_s16_params *p, const int16_t *input, const int16_t *weights,
                            const int32_t *rq, int16_t *output);

#endif /* MCU_CMSIS_DWCONV2D_S16_H */
