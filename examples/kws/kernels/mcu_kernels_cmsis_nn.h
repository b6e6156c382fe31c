/*
 * mcuforge optimized int8 kernels (target "cmsis-nn"), bit-exact with the TensorFlow Lite Micro
 * reference kernels. Our own code in the style of Arm's CMSIS-NN.
 *
 * Conventions: mcu_cmsis_<op>_s8(params, inputs..., constants..., [scratch,] output). Parameters
 * are a const struct the code generator fills at compile time; constants are precomputed offline
 * (planner/targets/cmsis_nn.py):
 *   - multiplier/shift: per output channel, TFLM's QuantizeMultiplier of in * w / out scales;
 *   - bias: for convolutions and fully connected layers, folded with the input zero point,
 *     bias' = bias + input_offset * sum(w), so the inner loops multiply raw int8 values (an im2col
 *     padded tap reads the zero point and adds nothing); depthwise kernels take the layer's bias
 *     (their plain C path skips padded taps) and the folded one (their SIMD paths);
 *   - weights: the matrix products' rows (convolutions' OHWI rows, fully connected [units][depth])
 *     in the pair layout below, which every path reads (the same generated C serves every core);
 *     depthwise taps [k_h * k_w][out_c] in natural order (the DSP and Helium paths widen or
 *     reorder them in scratch themselves);
 *   - rq: per output channel {m, add, right} for the DSP paths' fast requantization (mcu_cmsis_rq in
 *     mcu_cmsis_dsp.h), or NULL when the planner could not prove it exact for the layer (the
 *     plain and MVE paths ignore it);
 * Each kernel has a plain C path (the readable reference, any C compiler) and SIMD paths:
 * MCU_CMSIS_USE_DSP (mcu_cmsis_dsp.h, __ARM_FEATURE_DSP: Cortex-M4/M7/M33/M55) uses the Armv7E-M
 * DSP instructions, MCU_CMSIS_USE_MVE (mcu_cmsis_mve.h, __ARM_FEATURE_MVE: Cortex-M55/M85) uses
 * Helium and takes precedence. All compute exactly the same integers.
 *
 * Value ranges: input_offset = -input zero point in [-127, 128]; output_offset = output zero
 * point in [-128, 127]; act_min <= act_max in [-128, 127]; shift in [-31, 30].
 */
#ifndef MCU_KERNELS_CMSIS_NN_H
#define MCU_KERNELS_CMSIS_NN_H

#include <stdint.h>

#include "mcu_cmsis_paths.h"
#include "mcuforge_fixedpoint.h"

/** Parameters of the convolutions (mcu_cmsis_conv2d_s8, mcu_cmsis_conv2d_1x1_s8). Batch 1, NHWC.
    pad_top/pad_left: padding before the first row/column (TFLite's SAME placement); mcu_cmsis_conv2d_s8
    also takes negative values (a window origin inside the input: a part of a larger output).
    pair_offset: the weights' layout (below): MCU_CMSIS_PAIR_PLAIN (0), _OFFSET (1) or _WIDE (2). chunk (1x1,
    stride 1): 0, or the plain C and Helium paths copy `chunk` input pixels at a time to scratch
    before writing their outputs, so that the output may lie over the input (the DSP path widens
    its three pixels into scratch first anyway). first/count (mcu_cmsis_conv2d_s8 only): count > 0
    computes the output pixels [first, first + count) alone (raster order), pixel first written at
    output[0]; count 0 (a static initializer that omits them): every pixel. */
typedef struct {
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t input_offset, output_offset, act_min, act_max, pair_offset, chunk;
    int32_t first, count;
} mcu_cmsis_conv_params;

/** How the DSP path of mcu_cmsis_dwconv2d_s8 goes over the output (the planner's choice by shape;
    the output is the same either way): row by row, column by column (narrow maps), pixel by pixel
    (small maps; 3x3 filters, depth multiplier 1, no dilation), or pixel by pixel as dot products of
    tap pairs (one input channel). ONE_TABLE (one input channel, lowered for Helium): `rq` points to
    the Helium path's tables laid out offline (mcu_cmsis_dw_mve_in1_mode), which leave it only the
    band in scratch; the other paths then take the plain C loop, which needs no scratch. */
#define MCU_CMSIS_DW_SWEEP_ROWS 0
#define MCU_CMSIS_DW_SWEEP_COLUMNS 1
#define MCU_CMSIS_DW_SWEEP_PIXELS 2
#define MCU_CMSIS_DW_SWEEP_ONE_INPUT 3
#define MCU_CMSIS_DW_SWEEP_ONE_TABLE 4

/** Parameters of the depthwise convolutions: out_c = in_c * depth_multiplier; output channel c
    reads input channel c / depth_multiplier. sweep: MCU_CMSIS_DW_SWEEP_*. band_rows: the Helium
    column path's rows per band after a first band of four (0: all its rows in one band); bands let
    the output overlap the input (planner/overlap.py). lag: 0, or the pixel paths (plain C, the DSP
    pixel sweep, Helium's pixels, which then takes every row) keep the last `lag` output pixels in a
    ring in scratch and write each to its place `lag` pixels later, so that the output may lie
    exactly over the input (mcu_cmsis_dw_lag_out); the DSP line sweeps need no ring for that. */
typedef struct {
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, depth_multiplier, sweep;
    int32_t input_offset, output_offset, act_min, act_max, band_rows, lag;
} mcu_cmsis_dw_conv_params;

/** Parameters of mcu_cmsis_fully_connected_s8: `rows` input vectors of `depth` values, `units`
    outputs each (the input offset is folded into the bias). */
typedef struct {
    int32_t rows, depth, units;
    int32_t output_offset, act_min, act_max;
} mcu_cmsis_fc_params;

/** Parameters of the pools: a k_h x k_w window clipped to the input (padding is never read). */
typedef struct {
    int32_t in_h, in_w, channels, out_h, out_w;
    int32_t k_h, k_w, stride_h, stride_w, pad_top, pad_left;
    int32_t act_min, act_max;
} mcu_cmsis_pool_params;

/** Parameters of mcu_cmsis_add_s8 (TFLM's AddFunc): each input, offset and shifted left by
    left_shift (20), is rescaled by (multiplier, shift <= 0); their sum by the output pair. */
typedef struct {
    int32_t size, input1_offset, input2_offset, left_shift;
    int32_t input1_multiplier, input1_shift, input2_multiplier, input2_shift;
    int32_t output_multiplier, output_shift, output_offset, act_min, act_max;
} mcu_cmsis_add_params;

/** Parameters of mcu_cmsis_mul_s8: (x1 + offset1) * (x2 + offset2) rescaled by (multiplier, shift). */
typedef struct {
    int32_t size, input1_offset, input2_offset;
    int32_t output_multiplier, output_shift, output_offset, act_min, act_max;
} mcu_cmsis_mul_params;

/** Parameters of mcu_cmsis_softmax_s8 (TFLM's CalculateSoftmaxParams): input_multiplier and
    input_left_shift >= 0 scale beta * input_scale into Q5.26; differences to the row maximum below
    diff_min (< 0) give the minimum output. Output scale 1/256, zero point -128. */
typedef struct {
    int32_t rows, depth;
    int32_t input_multiplier, input_left_shift, diff_min;
} mcu_cmsis_softmax_params;

/**
 * The pair layout of the weights of the matrix products (convolutions, fully connected): rows
 * [rows][K] (output channels or units) taken two at a time, rows 2j and 2j + 1 byte interleaved,
 * a[0] b[0] a[1] b[1] ... a[K-1] b[K-1], then zeros up to MCU_CMSIS_PAIR_DEPTH(K) columns; pair j
 * starts at byte 2 * j * MCU_CMSIS_PAIR_DEPTH(K); an odd last row is paired with a row of zeros.
 * One word holds two columns of two rows: SXTB16 / SXTB16 ROR #8 split it into the int16 pairs
 * (a[k], a[k+1]) and (b[k], b[k+1]) (the DSP paths), Helium's VLD20 / VLD21 into sixteen columns of
 * each row (the pair padded to whole 32-byte vectors). planner/targets/cmsis_nn/common.py
 * (pair_rows) builds it, evaluating this macro.
 *
 * The offset pair layout (a convolution's pair_offset) stores row 2j + 1's values less 1 where row
 * 2j's is negative (b - [a < 0]; the planner takes it only where no such b is -128). A weight word
 * then reads, as two int16 lanes, exactly (a[k] + 256 b[k], a[k+1] + 256 b[k+1]) (the low byte a,
 * read as uint8, is a + 256 when a < 0): one SMLAD of it with an input pair and one of its SXTB16
 * give sum x a + 256 sum x b and sum x a, so the DSP paths split each weight word once
 * (mcu_cmsis_pair_dsp.h); Helium adds a's sign bit back to row b's vectors (VSHR, VADD), plain C
 * its sign to each b. The planner takes it where 128 * sum|b| < 2^23 for every pair, so 256 * sum
 * x b never wraps, and (with the fast requantization, whose assembly reads 256 * (bias_b + sum x
 * b)) where each row b's accumulator is in [-2^23, 2^23) or its output constant
 * (common.offset_fits).
 */
#define MCU_CMSIS_PAIR_DEPTH(k) (((k) + 15) / 16 * 16)

/*
 * The wide pair layout (a convolution's pair_offset MCU_CMSIS_PAIR_WIDE: the DSP ISA's convolutions
 * with K below the offset layout's minimum, whose weights are few) stores the same pairs already
 * widened and doubled, int16 little-endian, the columns of K4 (K rounded up to a multiple of four,
 * zero padded) in the order 0, 2, 1, 3 within each group of four (as SXTB16 / SXTB16 ROR #8 split an
 * input word: the DSP paths widen the columns without PKH): for each two columns c, c' of that order
 * the word (2 a[c], 2 a[c']) then the word (2 b[c], 2 b[c']);
 * pair j starts at byte 4 * j * K4 (MCU_CMSIS_PAIR_WIDE_BYTES). Each word is an SMLAD operand as
 * loaded: the DSP paths' inner step is five loads and six SMLAD, no split, and their accumulators
 * (from doubled biases) hold the 2 * acc that the fast requantization multiplies, no LSL
 * (mcu_cmsis_pair_dsp.h); twice the bytes.
 */
enum { MCU_CMSIS_PAIR_PLAIN = 0, MCU_CMSIS_PAIR_OFFSET = 1, MCU_CMSIS_PAIR_WIDE = 2 };

/** Bytes of one pair of rows of K values in the wide pair layout. */
#define MCU_CMSIS_PAIR_WIDE_BYTES(k) (4 * (((k) + 3) / 4 * 4))

/** Weight (r, k) of [rows][K] weights in the pair layout `layout` (MCU_CMSIS_PAIR_*, as above; the
    plain paths). */
static inline int32_t mcu_cmsis_pair_weight(const int8_t *w, int32_t depth, int32_t r, int32_t k, int32_t layout)
{
    if (layout == MCU_CMSIS_PAIR_WIDE) {
        const int32_t q = (k & ~3) | ((k & 1) << 1) | ((k >> 1) & 1); /* its place: 0, 2, 1, 3 per four */
        const uint8_t *v = (const uint8_t *)w + (r >> 1) * MCU_CMSIS_PAIR_WIDE_BYTES(depth) + 8 * (q >> 1) +
                           4 * (r & 1) + 2 * (q & 1);
        return (int16_t)(uint16_t)(v[0] | (v[1] << 8)) / 2;
    }
    const int8_t *const v = w + (r >> 1) * 2 * MCU_CMSIS_PAIR_DEPTH(depth) + 2 * k + (r & 1);
    return layout == MCU_CMSIS_PAIR_OFFSET && (r & 1) == 1 ? v[0] + (v[-1] < 0) : v[0];
}

/** Scratch bytes of mcu_cmsis_conv2d_s8 for K = k_h * k_w * in_c: on the DSP path three im2col
    columns widened to int16, K rounded up to a multiple of four (6 * K4), and, when in_c is not a
    multiple of four, one int8 column (K4, and 4 bytes its whole-word row copies may write past it);
    the MVE path uses two int8 columns (2K) and reads 32 bytes past them (16 more bytes when K4 is 4,
    the one K where 6 * K4 is less). The code generator sizes the scratch buffer with this macro
    (mcuforge.firmware.macros evaluates it) and checks it in the generated C. */
#define MCU_CMSIS_CONV2D_S8_SCRATCH_BYTES(k, in_c)                                                                  \
    (6 * (((k) + 3) / 4 * 4) + ((in_c) % 4 + 3) / 4 * (((k) + 3) / 4 * 4 + 4) + 16 * (8 / (((k) + 3) / 4 * 4 + 4)))

/** Convolution through im2col: any filter, stride, dilation and padding. Weights: the [out_c][k_h *
    k_w * in_c] OHWI rows in the pair layout; scratch: MCU_CMSIS_CONV2D_S8_SCRATCH_BYTES(k_h * k_w
    * in_c, in_c) bytes, word aligned. */
void mcu_cmsis_conv2d_s8(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights,
                         const int32_t *bias, const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                         int16_t *scratch, int8_t *output);

/** Parameters of mcu_cmsis_conv2d_add_s8: the convolution's (mcu_cmsis_conv_params, first to
    pair_offset), then which ADD operand it is (conv_first: input 1, else input 2), the output pixels
    per block, the stage's byte offset in scratch, and the ADD's (mcu_cmsis_add_params, size
    excepted, each prefixed add_). */
typedef struct {
    int32_t in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t input_offset, output_offset, act_min, act_max, pair_offset;
    int32_t conv_first, block, stage_offset;
    int32_t add_input1_offset, add_input2_offset, add_left_shift;
    int32_t add_input1_multiplier, add_input1_shift, add_input2_multiplier, add_input2_shift;
    int32_t add_output_multiplier, add_output_shift, add_output_offset, add_act_min, add_act_max;
} mcu_cmsis_conv_add_params;

/** A convolution through im2col (mcu_cmsis_conv2d_s8) added to `residual` (mcu_cmsis_add_s8), block
    pixels at a time through a stage in scratch: output = conv(input) + residual (or residual +
    conv(input), by conv_first). The output may be residual itself (each element read, then
    written). Constants: the convolution's, then the ADD's table and rq (NULL: none proven);
    scratch: the convolution's, then block * out_c bytes from stage_offset, word aligned. */
void mcu_cmsis_conv2d_add_s8(const mcu_cmsis_conv_add_params *p, const int8_t *residual, const int8_t *input,
                             const int8_t *weights, const int32_t *bias, const int32_t *multiplier,
                             const int32_t *shift, const int32_t *rq, const int32_t *add_table,
                             const int32_t *add_rq, int16_t *scratch, int8_t *output);

/** Scratch bytes of mcu_cmsis_conv2d_1x1_s8: three input pixels widened to int16, in_c rounded up
    to a multiple of four (the DSP path); as many as six input pixels copied (p->chunk, the other
    paths). */
#define MCU_CMSIS_CONV2D_1X1_S8_SCRATCH_BYTES(in_c) (6 * (((in_c) + 3) / 4 * 4))

/** 1x1 convolution, any stride (no padding exists): no im2col. Weights: [out_c][in_c] in the pair
    layout; scratch: MCU_CMSIS_CONV2D_1X1_S8_SCRATCH_BYTES(in_c) bytes, word aligned. */
void mcu_cmsis_conv2d_1x1_s8(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights,
                             const int32_t *bias, const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                             int16_t *scratch, int8_t *output);

/** Columns of input the windows of one output row span: (out_w - 1) * stride_w + (k_w - 1) * dil_w + 1. */
#define MCU_CMSIS_DW_SPAN(out_w, stride_w, k_w, dil_w) (((out_w) - 1) * (stride_w) + ((k_w) - 1) * (dil_w) + 1)

/** Scratch bytes of mcu_cmsis_dwconv2d_s8 by its sweep (one macro each), every one with room for
    the Helium path's tap pointers and offsets and its pad row (2 * k_l * k_p words and in_c bytes,
    mcu_cmsis_dwconv_mve.h). Sweeping lines (rows, or columns with every argument the other
    axis's): the DSP path's line cache (one line per input line a window spans, padding or not,
    MCU_CMSIS_DW_SPAN(1, 1, k_l, dil_l), of two words per input position of
    MCU_CMSIS_DW_SPAN(out_pos, stride_p, k_p, dil_p)), its widened weights (2 * k_l * k_p words)
    and bookkeeping (2 * (k_l + 9) words and a word per cached line), mcu_cmsis_dwconv_dsp.h. */
#define MCU_CMSIS_DWCONV2D_S8_LINES_SCRATCH_BYTES(k_l, k_p, dil_l, out_pos, stride_p, dil_p, in_c)                   \
    (8 * (((out_pos) - 1) * (stride_p) + ((k_p) - 1) * (dil_p) + 1) * (((k_l) - 1) * (dil_l) + 1) +                   \
     8 * (k_l) * (k_p) + 8 * (k_l) + 72 + 4 * (((k_l) - 1) * (dil_l) + 1) + 8 * (k_l) * (k_p) + (in_c))

/** Sweeping pixels (small 3x3 maps): a pad row of `channels` bytes in whole words and 72 bytes of
    widened weights per group of four channels, mcu_cmsis_dw3x3_dsp.h. */
#define MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES(k_h, k_w, channels, in_c)                                          \
    (((channels) + 3) / 4 * 4 + 72 * ((channels) / 4) + 8 * (k_h) * (k_w) + (in_c))

/** With a lag (p->lag > 0): the ring of lag pixels of out_c bytes after the bytes a pixel path uses
    itself (`path_bytes`, rounded up to a word): Helium's and the plain C path's
    8 * k_h * k_w + in_c, the DSP pixel sweep's MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES. */
#define MCU_CMSIS_DWCONV2D_S8_RING_SCRATCH_BYTES(path_bytes, lag, out_c) (((path_bytes) + 3) / 4 * 4 + (lag) * (out_c))

/** One input channel: a word per pair of taps and one more, and as many per output channel
    (rounded up to four), mcu_cmsis_dwconv_in1_dsp.h; the Helium path's 64 bytes and the taps
    rounded up to sixteen bytes per group of four channels and its band (k_h bytes per input
    column, MCU_CMSIS_DW_SPAN(out_w, stride_w, k_w, dil_w), sixteen more), mcu_cmsis_dwconv_mve.h. */
#define MCU_CMSIS_DWCONV2D_S8_ONE_SCRATCH_BYTES(k_h, k_w, out_w, stride_w, dil_w, channels)                         \
    (4 * (((k_h) * (k_w) + 1) / 2 + 1) * (1 + ((channels) + 3) / 4 * 4) +                                            \
     ((channels) + 3) / 4 * (64 + 4 * (((k_h) * (k_w) + 15) / 16 * 16)) +                                              \
     (((out_w) - 1) * (stride_w) + ((k_w) - 1) * (dil_w) + 1) * (k_h) + 16 + 8 * (k_h) * (k_w) + 1)

/** One input channel with the Helium tables given (MCU_CMSIS_DW_SWEEP_ONE_TABLE): only the band,
    k_h bytes per input column and sixteen more (a window's last vector reads past it). */
#define MCU_CMSIS_DWCONV2D_S8_BAND_SCRATCH_BYTES(k_h, k_w, out_w, stride_w, dil_w)                                   \
    ((((out_w) - 1) * (stride_w) + ((k_w) - 1) * (dil_w) + 1) * (k_h) + 16)

/** Depthwise convolution: any filter, stride, dilation, padding and depth multiplier. Weights
    [k_h * k_w][out_c]; bias: the layer's own (the plain C path skips padded taps); folded_bias:
    bias + input_offset * sum(w) per channel (the SIMD paths read padded taps as the zero point).
    Scratch: the bytes of the macro above for p->sweep (sweeping columns, the height's and width's
    arguments swapped), word aligned. */
void mcu_cmsis_dwconv2d_s8(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                           const int32_t *bias, const int32_t *folded_bias, const int32_t *multiplier,
                           const int32_t *shift, const int32_t *rq, int32_t *scratch, int8_t *output);

/** Scratch bytes of mcu_cmsis_fully_connected_s8: none for one input row (its group layout is read
    as it is); more rows: the DSP path's rows widened to int16 three at a time, depth rounded up to
    a multiple of four (6 * K4; (2 * rows) / (rows + 2) is 1 for rows > 1, else 0). */
#define MCU_CMSIS_FULLY_CONNECTED_S8_SCRATCH_BYTES(rows, depth)                                                   \
    (6 * (((depth) + 3) / 4 * 4) * ((2 * (rows)) / ((rows) + 2)))

/** Fully connected: output[r][u] = requantize(sum_d input[r][d] * weights[u][d] + bias[u]).
    Weights: [units][depth], one input row in the group layout (mcu_cmsis_fully_connected_s8.c),
    more rows in the pair layout; scratch:
    MCU_CMSIS_FULLY_CONNECTED_S8_SCRATCH_BYTES(rows, depth) bytes, word aligned. */
void mcu_cmsis_fully_connected_s8(const mcu_cmsis_fc_params *p, const int8_t *input, const int8_t *weights,
                                  const int32_t *bias, const int32_t *multiplier, const int32_t *shift,
                                  const int32_t *rq, int16_t *scratch, int8_t *output);

/** Average pool: the window's sum divided by its element count, rounding half away from zero. */
void mcu_cmsis_avg_pool2d_s8(const mcu_cmsis_pool_params *p, const int8_t *input, int8_t *output);

/** Max pool: the window's largest element. */
void mcu_cmsis_max_pool2d_s8(const mcu_cmsis_pool_params *p, const int8_t *input, int8_t *output);

/** Element-wise addition of two same-shape tensors; the output may be either input (in place).
    table: each input's rescaled value ((x + offset) << left_shift rescaled by its multiplier and
    shift) for x = -128..127, input 1 then input 2 (read by the DSP path); rq: the fast
    requantization record of the output, or NULL. */
void mcu_cmsis_add_s8(const mcu_cmsis_add_params *p, const int8_t *input1, const int8_t *input2, const int32_t *table,
                      const int32_t *rq, int8_t *output);

/** Element-wise multiplication of two same-shape tensors; the output may be either input. */
void mcu_cmsis_mul_s8(const mcu_cmsis_mul_params *p, const int8_t *input1, const int8_t *input2, int8_t *output);

/** Softmax over the last axis (rows x depth). exp_table: exp_table[-d] is the Q0.31 exponential of
    each difference d in [max(diff_min, -255), 0] (precomputed with the kernel's arithmetic), or NULL
    (each computed). */
void mcu_cmsis_softmax_s8(const mcu_cmsis_softmax_params *p, const int8_t *input, const int32_t *exp_table,
                          int8_t *output);

/** requantize(acc) + output_offset, clamped to [act_min, act_max]: the common epilogue. */
static inline int8_t mcu_cmsis_requantize_s8(int32_t acc, int32_t multiplier, int32_t shift, int32_t output_offset,
                                             int32_t act_min, int32_t act_max)
{
    int32_t v = mcu_requantize_q31(acc, multiplier, shift) + output_offset;
    v = v < act_min ? act_min : v;
    v = v > act_max ? act_max : v;
    return (int8_t)v;
}

#endif /* MCU_KERNELS_CMSIS_NN_H */
