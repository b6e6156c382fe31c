/*
 * 16x8 depthwise convolution on the cmsis-nn target (mcu_cmsis_dwconv2d_s16.c): depth multiplier 1,
 * channels a multiple of 4, four channels at a time over pairs of filter taps.
 */
#ifndef MCU_CMSIS_DWCONV2D_S16_H
#define MCU_CMSIS_DWCONV2D_S16_H

#include <stdint.h>

/** Parameters of mcu_cmsis_dwconv2d_s16 (batch 1, in_c = out_c = channels, a multiple of 4).
    taps = k_h * k_w; wide and the clamp as mcu_cmsis_conv_s16_params (one int32 chunk always
    suffices: taps * 127 * 32768 < 2^31 for taps < 516, which the code generator checks). */
typedef struct {
    int32_t in_h, in_w, channels, out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t taps, wide, act_min, act_max;
} mcu_cmsis_dw_s16_params;

/** Scratch bytes: one zero-padded window ([taps][channels] int16) for the border pixels. */
#define MCU_CMSIS_DWCONV2D_S16_SCRATCH_BYTES(taps, channels) (2 * (taps) * (channels))

/** weights: int16, per group of 4 channels, per pair of taps (t, t+1) one word per channel
    [w(t+1) : w(t)], and for an odd last tap two words [w(c+1) : w(c)], [w(c+3) : w(c+2)];
    offsets: int32 [2][taps], each tap's element offset from a window's first element in the input
    (interior pixels) and in the scratch window; rq: four int32 per channel. */
void mcu_cmsis_dwconv2d_s16(const mcu_cmsis_dw_s16_params *p, const int16_t *input, const int16_t *weights,
                            const int32_t *offsets, const int32_t *rq, int16_t *scratch, int16_t *output);

#endif /* MCU_CMSIS_DWCONV2D_S16_H */
