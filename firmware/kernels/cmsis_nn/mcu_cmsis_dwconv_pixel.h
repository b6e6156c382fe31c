/*
 * The plain C path of the depthwise convolution (mcu_cmsis_dwconv2d_s8), the readable reference:
 * TFLM's acc = bias + sum over the taps inside the input of (x + input_offset) * w, a border pixel
 * simply skipping its padded taps; and what the SIMD paths share (the taps of a window inside the
 * input, the unrolling pragma).
 */
#ifndef MCU_CMSIS_DWCONV_PIXEL_H
#define MCU_CMSIS_DWCONV_PIXEL_H

#include <string.h>

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_mve.h"
#include "mcu_kernels_cmsis_nn.h"

/* A loop of at most four iterations the SIMD paths need unrolled (its accumulators in registers). */
#if defined(__clang__)
#define MCU_CMSIS_DW_UNROLL _Pragma("clang loop unroll(full)")
#elif defined(__GNUC__)
#define MCU_CMSIS_DW_UNROLL _Pragma("GCC unroll 4")
#else
#define MCU_CMSIS_DW_UNROLL
#endif

/** The taps [*k0, *k1) of one filter axis that land inside [0, size) for a window starting at
    `start` with `dilation` between taps. */
static inline void mcu_cmsis_dw_tap_range(int32_t start, int32_t size, int32_t k, int32_t dilation, int32_t *k0,
                                          int32_t *k1)
{
    const int32_t first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    const int32_t last = start < size ? (size - 1 - start) / dilation + 1 : 0;
    *k0 = first;
    *k1 = last < k ? last : k;
}

/** Output pixel (oy, ox): out[0..out_c), any filter, dilation and depth multiplier, taps outside
    the input skipped. */
static inline void mcu_cmsis_dw_pixel(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                                      const int32_t *bias, const int32_t *multiplier, const int32_t *shift, int32_t oy,
                                      int32_t ox, int8_t *out)
{
    const int32_t in_w = p->in_w, in_c = p->in_c, out_c = p->out_c, k_w = p->k_w;
    const int32_t dil_h = p->dil_h, dil_w = p->dil_w, mult = p->depth_multiplier;
    const int32_t input_offset = p->input_offset;
    const int32_t out_offset = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    int32_t ky0, ky1, kx0, kx1;
    mcu_cmsis_dw_tap_range(iy0, p->in_h, p->k_h, dil_h, &ky0, &ky1);
    mcu_cmsis_dw_tap_range(ix0, in_w, k_w, dil_w, &kx0, &kx1);
    for (int32_t c = 0; c < out_c; c++) {
        int32_t acc = bias[c];
        for (int32_t ky = ky0; ky < ky1; ky++) {
            const int8_t *x = input + ((iy0 + ky * dil_h) * in_w + ix0 + kx0 * dil_w) * in_c + c / mult;
            const int8_t *w = weights + (ky * k_w + kx0) * out_c + c;
            for (int32_t kx = kx0; kx < kx1; kx++, x += dil_w * in_c, w += out_c) {
                acc += (*x + input_offset) * *w;
            }
        }
        out[c] = mcu_cmsis_requantize_s8(acc, multiplier[c], shift[c], out_offset, act_min, act_max);
    }
}

/** The ring of a pixel path with a lag: `path_bytes` into the scratch (rounded up to a word). */
static inline int8_t *mcu_cmsis_dw_ring(int32_t *scratch, int32_t path_bytes)
{
    return (int8_t *)scratch + (path_bytes + 3) / 4 * 4;
}

/** Where a pixel path writes output pixel q (raster order, every pixel in turn): its place without a
    lag; else ring slot q % lag, once the pixel q - lag that slot holds is copied to its place. So
    a pixel reaches the output `lag` pixels after it is computed, over input bytes the pixels in
    between no longer read (the planner sets lag so, planner/overlap.py: the row-lagged order). */
static inline int8_t *mcu_cmsis_dw_lag_out(const mcu_cmsis_dw_conv_params *p, int8_t *ring, int8_t *output, int32_t q)
{
    const int32_t lag = p->lag, c = p->out_c;
    if (lag == 0) {
        return output + q * c;
    }
    int8_t *slot = ring + q % lag * c;
    if (q >= lag) {
        memcpy(output + (q - lag) * c, slot, (size_t)c);
    }
    return slot;
}

/** After the last pixel: the pixels still in the ring to their places. */
static inline void mcu_cmsis_dw_lag_flush(const mcu_cmsis_dw_conv_params *p, const int8_t *ring, int8_t *output)
{
    const int32_t pixels = p->out_h * p->out_w, lag = p->lag, c = p->out_c;
    for (int32_t q = pixels > lag ? pixels - lag : 0; q < pixels; q++) {
        memcpy(output + q * c, ring + q % lag * c, (size_t)c);
    }
}

#endif /* MCU_CMSIS_DWCONV_PIXEL_H */
