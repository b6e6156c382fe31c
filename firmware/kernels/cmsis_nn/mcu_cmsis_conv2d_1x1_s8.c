/*
 * int8 1x1 convolution, any stride: a matrix product of input pixels (read in place, no im2col:
 * a 1x1 filter never needs padding) with the [out_c][in_c] weights (pair layout).
 *
 * DSP path: three pixels at a time are widened once into scratch, then multiplied with the weight
 * rows two output channels per step (mcu_cmsis_pair_dsp.h); stride 1 with in_c % 4 == 0 and the
 * fast requantization: the whole blocks through dense_blocks.
 *
 * MVE path: mcu_cmsis_gemm_mve.h (VMLADAVA over sixteen input channels; with in_c 16, 32, 64,
 * 128 or 256 two pixels x four output channels per step, the channel loop unrolled; in_c 8 and any other
 * in_c > 16 of the plain layout the same in a loop); the wide pair
 * layout (C lowered for the DSP ISA, which no Helium kernel reads) through the plain loop.
 *
 * With p->chunk (stride 1, the output over the input: planner/overlap.py's conv_1x1_orders) the
 * plain C path takes the pixels in chunks copied to scratch first, and the MVE path copies each
 * pair of pixels to scratch before it computes them (its set-up done once for the layer).
 */
#include <string.h>

#define MCU_PAIR_CONV_DEFS /* this kernel may take the wide and offset pair layouts: mcu_cmsis_pair_dsp.h */
#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_gemm_mve.h"
#include "mcu_cmsis_mve.h"
#include "mcu_cmsis_pair_dsp.h"
#include "mcu_cmsis_pair_small_dsp.h"
#include "mcu_kernels_cmsis_nn.h"

/** The input pixel read by output pixel n. */
static const int8_t *pixel(const mcu_cmsis_conv_params *p, const int8_t *input, int32_t n)
{
    const int32_t oy = n / p->out_w;
    const int32_t ox = n % p->out_w;
    return input + (oy * p->stride_h * p->in_w + ox * p->stride_w) * p->in_c;
}

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
/** The three pixels' in_c values (in_c % 4 == 0) at x0, x1, x2 widened into the block `col`, a
    group of four of each at a time, side by side; s0, s1, s2: NULL, or the columns' running sums
    (the offset layout); lanes: the wide layout's order (mcu_pair_put4_of). */
static inline __attribute__((always_inline)) void widen_groups(const int8_t *x0, const int8_t *x1, const int8_t *x2,
                                                               int32_t in_c, int32_t *col, int32_t *s0, int32_t *s1,
                                                               int32_t *s2, const int lanes)
{
    for (int32_t i = 0; i < in_c; i += 4, col += 2 * MCU_PAIR_COLUMNS) {
        const int32_t a = mcu_read_s8x4(x0 + i), b = mcu_read_s8x4(x1 + i), c = mcu_read_s8x4(x2 + i);
        mcu_pair_put4_of(col, a, MCU_PAIR_COLUMNS, s0, lanes);
        mcu_pair_put4_of(col + 1, b, MCU_PAIR_COLUMNS, s1, lanes);
        mcu_pair_put4_of(col + 2, c, MCU_PAIR_COLUMNS, s2, lanes);
    }
}

/** widen_groups for any in_c: with in_c % 4 != 0 pixel by pixel (zero padded). */
static inline __attribute__((always_inline)) void widen_pixels(const int8_t *x0, const int8_t *x1, const int8_t *x2,
                                                               int32_t in_c, int32_t *col, int32_t *s0, int32_t *s1,
                                                               int32_t *s2)
{
    if (in_c & 3) {
        mcu_pair_column(x0, in_c, col, s0);
        mcu_pair_column(x1, in_c, col + 1, s1);
        mcu_pair_column(x2, in_c, col + 2, s2);
        return;
    }
    widen_groups(x0, x1, x2, in_c, col, s0, s1, s2, 0);
}
#endif

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE) && MCU_PAIR_ASM
/** The fast path's whole blocks of three consecutive pixels from x on (stride 1, in_c % 4 == 0):
    each widened, then the pair job (its outputs out_c bytes apart); the wide and offset layouts' in
    one call of their assembly, which widens (and for the offset layout sums) each block itself. Its own function: the few values it keeps stay in
    registers from block to block. */
static __attribute__((noinline)) void dense_blocks(struct mcu_pair_gemm *g, const int8_t *x, int32_t in_c,
                                                   int32_t out_c, int32_t blocks, int8_t *out)
{
    struct mcu_pair_job *const job = &g->job;
    mcu_pair_routine *const run = mcu_pair_routine_of(g->o.pair_offset, mcu_pair_relu(&g->o));
    int32_t *const col = (int32_t *)(void *)g->col;
    if (MCU_PAIR_SMALL_ANY && mcu_pair_small_takes(in_c, g->o.pair_offset)) { /* mcu_cmsis_pair_small_dsp.h */
        const struct mcu_pair_small_job small = {x, blocks, out, out_c, in_c, mcu_pair_small_wp(g->weights, in_c),
                                                 g->rq, mcu_pair_rq_pairs(g->rq, out_c >> 1, MCU_CMSIS_PAIR_WIDE)};
        if (mcu_pair_small_run(&small, mcu_pair_relu(&g->o) && MCU_PATH_PAIR_RELU)) {
            return;
        }
    }
    if (g->o.pair_offset != MCU_CMSIS_PAIR_PLAIN) { /* one call: the assembly widens (and sums) each block */
        mcu_pair_gemm_blocks(g, run, x, in_c, 0, blocks, out_c, out);
        return;
    }
    job->d1 = out_c, job->d2 = 2 * out_c;
    for (; blocks > 0; blocks--, x += 3 * in_c, out += 3 * out_c) {
        widen_groups(x, x + in_c, x + 2 * in_c, in_c, col, NULL, NULL, NULL, 0);
        mcu_pair_gemm_restart(g);
        job->out = out;
        run(job);
    }
}
#endif

#if !defined(MCU_CMSIS_USE_DSP) || defined(MCU_CMSIS_USE_MVE)
/** out0 / out1 (out_c values each) from the input pixels in0 / in1 (in_c values each). */
static void mat_mult_2rows(const mcu_cmsis_conv_params *p, const int8_t *weights, const int32_t *bias,
                           const int32_t *multiplier, const int32_t *shift, const int8_t *in0, const int8_t *in1,
                           int8_t *out0, int8_t *out1)
{
    const int32_t k = p->in_c;
    for (int32_t oc = 0; oc < p->out_c; oc++) {
        int32_t acc0 = bias[oc], acc1 = bias[oc];
        for (int32_t i = 0; i < k; i++) {
            const int32_t w = mcu_cmsis_pair_weight(weights, k, oc, i, p->pair_offset);
            acc0 += in0[i] * w;
            acc1 += in1[i] * w;
        }
        out0[oc] = mcu_cmsis_requantize_s8(acc0, multiplier[oc], shift[oc], p->output_offset, p->act_min, p->act_max);
        out1[oc] = mcu_cmsis_requantize_s8(acc1, multiplier[oc], shift[oc], p->output_offset, p->act_min, p->act_max);
    }
}

/** The plain loop: two pixels at a time, read in place (an odd last pixel computed twice into the
    same place); on Helium, the wide pair layout's (C lowered for the DSP ISA, which no Helium
    kernel reads). */
static void plain_pairs(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights,
                        const int32_t *bias, const int32_t *multiplier, const int32_t *shift, int8_t *output)
{
    const int32_t out_c = p->out_c, pixels = p->out_h * p->out_w;
    for (int32_t n = 0; n < pixels; n += 2) {
        const int32_t n1 = n + 1 < pixels ? n + 1 : n;
        mat_mult_2rows(p, weights, bias, multiplier, shift, pixel(p, input, n), pixel(p, input, n1),
                       output + n * out_c, output + n1 * out_c);
    }
}
#endif

/** Every pixel, read in place. */
static void all_pixels(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
                       const int32_t *multiplier, const int32_t *shift, const int32_t *rq, int16_t *scratch,
                       int8_t *output)
{
#if defined(MCU_CMSIS_USE_MVE) /* Helium: mcu_cmsis_gemm_mve.h */
    (void)rq;
    if (p->pair_offset == MCU_CMSIS_PAIR_WIDE) { /* with a chunk: in_chunks */
        MCU_PATH_CHECK(MCU_PATH_MVE_WIDE);        /* mcu_cmsis_paths.h */
        plain_pairs(p, input, weights, bias, multiplier, shift, output);
        return;
    }
    mcu_cmsis_conv2d_1x1_s8_mve(p, input, weights, bias, multiplier, shift, p->chunk > 0 ? (int8_t *)scratch : NULL,
                                output);
#elif defined(MCU_CMSIS_USE_DSP)
    const int32_t out_c = p->out_c;
    const int32_t pixels = p->out_h * p->out_w;
    int32_t n = 0;
    const int32_t in_c = p->in_c;
    const mcu_pair_out o = {out_c, p->output_offset, p->act_min, p->act_max, p->pair_offset};
    int32_t *const col = (int32_t *)(void *)scratch;
    struct mcu_pair_gemm gemm;
    mcu_pair_gemm_init(&gemm, &o, weights, in_c, bias, multiplier, shift, rq, col);
    /* stride 1: the pixels are consecutive */
    const int dense = p->stride_w == 1 && p->stride_h == 1 && p->in_w == p->out_w;
#if MCU_PAIR_ASM
    if (gemm.fast && dense && (in_c & 3) == 0 && pixels >= MCU_PAIR_COLUMNS) { /* the whole blocks, then a short last one below */
        n = pixels / MCU_PAIR_COLUMNS * MCU_PAIR_COLUMNS;
        dense_blocks(&gemm, input, in_c, out_c, pixels / MCU_PAIR_COLUMNS, output);
    }
#endif
    for (; n < pixels; n += MCU_PAIR_COLUMNS) {
        /* a short last block: its last pixel again, computed twice into the same place */
        const int32_t n1 = n + 1 < pixels ? n + 1 : pixels - 1;
        const int32_t n2 = n + 2 < pixels ? n + 2 : pixels - 1;
        const int8_t *x0 = dense ? input + n * in_c : pixel(p, input, n);
        const int8_t *x1 = dense ? input + n1 * in_c : pixel(p, input, n1);
        const int8_t *x2 = dense ? input + n2 * in_c : pixel(p, input, n2);
        int32_t sums[3] = {0, 0, 0}; /* the offset layout's column sums */
        if (p->pair_offset == MCU_CMSIS_PAIR_OFFSET) {
            int32_t s0 = 0, s1 = 0, s2 = 0; /* locals: the column's stores cannot alias them */
            widen_pixels(x0, x1, x2, in_c, col, &s0, &s1, &s2);
            sums[0] = s0, sums[1] = s1, sums[2] = s2;
        } else if (p->pair_offset == MCU_CMSIS_PAIR_WIDE && (in_c & 3) == 0) {
            widen_groups(x0, x1, x2, in_c, col, NULL, NULL, NULL, 1);
        } else {
            widen_pixels(x0, x1, x2, in_c, col, NULL, NULL, NULL);
            if (p->pair_offset == MCU_CMSIS_PAIR_WIDE) { /* in_c % 4 != 0 */
                mcu_pair_wide_order(col, mcu_pair_k4(in_c));
                mcu_pair_wide_order(col + 1, mcu_pair_k4(in_c));
                mcu_pair_wide_order(col + 2, mcu_pair_k4(in_c));
            }
        }
        mcu_pair_gemm_block(&gemm, sums, output + n * out_c, output + n1 * out_c, output + n2 * out_c);
    }
#else
    (void)rq;
    (void)scratch;
    plain_pairs(p, input, weights, bias, multiplier, shift, output);
#endif
}

#if !defined(MCU_CMSIS_USE_DSP) || defined(MCU_CMSIS_USE_MVE)
/** With p->chunk (stride 1: consecutive pixels): chunk pixels at a time copied to scratch, then
    their outputs computed from the copy (over their own input bytes at most), through a layer of
    one row of those pixels. Returns 0 (having done nothing) without a chunk. Plain C, and Helium
    with the wide layout (its other layouts copy pairs inside mcu_cmsis_conv2d_1x1_s8_mve). */
static int in_chunks(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
                     const int32_t *multiplier, const int32_t *shift, const int32_t *rq, int16_t *scratch,
                     int8_t *output)
{
    const int32_t chunk = p->chunk, pixels = p->out_h * p->out_w, in_c = p->in_c;
    if (chunk <= 0) {
        return 0;
    }
    mcu_cmsis_conv_params part = *p;
    part.chunk = 0;
    part.in_h = part.out_h = 1;
    for (int32_t n = 0; n < pixels; n += chunk) {
        const int32_t m = pixels - n < chunk ? pixels - n : chunk;
        memcpy(scratch, input + n * in_c, (size_t)(m * in_c));
        part.in_w = part.out_w = m;
        all_pixels(&part, (const int8_t *)scratch, weights, bias, multiplier, shift, rq, NULL, output + n * p->out_c);
    }
    return 1;
}
#endif

void mcu_cmsis_conv2d_1x1_s8(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights,
                             const int32_t *bias, const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                             int16_t *scratch, int8_t *output)
{
#if !defined(MCU_CMSIS_USE_DSP)
    if (in_chunks(p, input, weights, bias, multiplier, shift, rq, scratch, output)) {
        return;
    }
#elif defined(MCU_CMSIS_USE_MVE)
    if (MCU_PATH_MVE_WIDE && p->pair_offset == MCU_CMSIS_PAIR_WIDE &&
        in_chunks(p, input, weights, bias, multiplier, shift, rq, scratch, output)) {
        return;
    }
#endif
    all_pixels(p, input, weights, bias, multiplier, shift, rq, scratch, output);
}
