/*
 * int8 TRANSPOSE_CONV on the cmsis-nn target, output-stationary: TFLM's scatter (every input pixel
 * adds (x + input_offset) * w[oc, ky, kx, :] at output (iy * stride - pad + ky, ix * stride - pad + kx))
 * gathered per output pixel. Output (oy, ox) is reached by the taps ky = ry, ry + stride_h, ... with
 * ry = (oy + pad_top) % stride_h, from input rows iy = (oy + pad_top) / stride_h - j (likewise along
 * x), so each of the stride_h * stride_w phases (ry, rx) is a plain convolution with its own
 * sub-kernel: one im2col column per output pixel against that phase's weight rows, requantized once
 * and written; no int32 accumulator image.
 *
 * Precomputed (planner/targets/cmsis_nn/transpose_conv.py): for each phase in (ry, rx) row-major
 * order, weights [out_c][taps_y * taps_x * in_c_pad] (taps ky ascending, then kx, each run of in_c
 * values zero-padded to in_c_pad, a multiple of 4) and bias [out_c] = bias + input_offset * sum of
 * the phase's weights of the channel. Taps that fall outside the input read the input zero point
 * (x + input_offset == 0), so the folded bias is exact at every border. rq: the DSP paths' fast
 * requantization records, 3 per channel, or NULL.
 *
 * Paths, four output pixels of a row and phase per pass: Helium (their int8 columns interleaved by
 * blocks of 16, two channels per VMLADAVA loop, each channel's four outputs requantized as a vector
 * and scattered), DSP (the columns widened by SXTB16 into (x0, x2), (x1, x3) pairs, one channel's
 * weight word split once for the four pixels, SMLAD), plain C.
 */
#ifndef MCU_CMSIS_TRANSPOSE_CONV_S8_H
#define MCU_CMSIS_TRANSPOSE_CONV_S8_H

#include <stdint.h>

/** Scratch: the im2col columns of four output pixels, k_max values each (the deepest phase row; 16-bit
    values on the DSP path, blocks of 16 int8 values on Helium), then their 4 * out_c int32
    accumulators. */
#define MCU_CMSIS_TRANSPOSE_CONV_S8_SCRATCH_BYTES(k_max, out_c) (8 * (k_max) + 64 + 16 * (out_c))

typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, pad_top, pad_left; /* pads >= 0, strides >= 1 */
    int32_t in_c_pad;                                         /* in_c rounded up to a multiple of 4 */
    int32_t input_offset, output_offset, act_min, act_max;
} mcu_cmsis_tconv_params;

void mcu_cmsis_transpose_conv_s8(const mcu_cmsis_tconv_params *p, const int8_t *input, const int8_t *weights,
                                 const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                 const int32_t *rq, void *scratch, int8_t *output);

#endif /* MCU_CMSIS_TRANSPOSE_CONV_S8_H */
