/*
 * DSP path of mcu_cmsis_dwconv2d_s8 for small maps (sweep MCU_CMSIS_DW_SWEEP_PIXELS: 3x3 filters,
 * depth multiplier 1, no dilation, any stride and padding; the planner's own choice with the fast
 * requantization proven and the clamp the whole int8 range, any requantization where an overlap
 * needs the pixel order, planner/overlap.py): pixel by pixel, every channel of a
 * pixel before the next, so its set-up is paid once for all channels (the line sweep of
 * mcu_cmsis_dwconv_dsp.h pays per group of four channels and output line, too much on a few
 * pixels).
 *
 * TFLM's acc = bias + sum over the taps inside the input of (x + input_offset) * w, computed as
 * the folded bias (bias + input_offset * sum(w), offline) + sum over all nine taps of x * w. Every
 * output pixel gets nine tap pointers; a padded tap points at a row of the input zero point in
 * scratch, whose x * w the fold cancels, so border and interior pixels run the same unrolled nine
 * taps with no bounds checks in the channel loop. Four channels per step: taps 0..7 in pairs, the
 * two input words interleaved by PKHBT / PKHTB and widened by SXTB16 into one word per channel
 * holding both taps (int16), one SMLAD each with the channel's two weights; tap 8 widened into
 * lanes 0, 2 and 1, 3, four SMLABB / SMLATT.
 *
 * Scratch: the pad row (out_c bytes, rounded up to a word), then per group of four channels its
 * weights (18 words): per tap pair four words (w[a][c + k], w[b][c + k]), then tap 8 as
 * (w[c], w[c + 2]) and (w[c + 1], w[c + 3]): MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES; with
 * p->lag, the ring after it (mcu_cmsis_dw_lag_out).
 *
 * The group sweep (mcu_cmsis_dw3x3_groups, taken at run time where it can run: fast requantization,
 * stride 1, whole groups of four channels, 4 to 14 output pixels a row, the output clear of the input
 * or exactly over it): per group of four channels, the padded rows of a band of output rows widened
 * once into the same scratch (pair words: per two padded columns and channel one int16 pair), then
 * channel by channel in assembly with the channel's six weight pair words in registers, blocks of
 * two pixels in two output rows (each of four input rows two loads, eight multiply-accumulates
 * between them; the first multiply-accumulates of a block start from the bias in one accumulator,
 * one load of it per two). The band's rows are built in the pair layout of the line sweep (one
 * plan a layer; in assembly all of a band's rows, edge pairs included, in one routine), the
 * records straight from each channel's nine weights. On VWW's 6x6x128 layers: 208,040 -> 169,249 -> 143,979 -> 138,528 estimated M4
 * cycles; stride 2 and
 * 3-pixel rows stay pixel by pixel (measured slower so: their widening and per-channel set-up
 * outweigh the cheaper steps; tried again with blocks of three pixels of a row in assembly, 25
 * cycles an output against the pixel sweep's 42: VWW's 3x3/2 ->6x6x64, 3x3/2 ->3x3x128 and 3x3/1
 * 3x3x256 layers 106,944 / 54,614 / 107,090 -> 122,843 / 74,258 / 118,417, the band's widening
 * and the records 10 to 20 cycles an output).
 *
 * 3x3 output maps (mcu_cmsis_dw3x3_map3, before the group sweep: stride 1 over a 3x3 map padded one
 * line on each side, path DW_MAP3; stride 2 over a 6x6 map padded one line after it, DW_MAP3_S2):
 * per group of four channels every tap inside the input once, none outside (x + input_offset
 * against TFLM's own bias), each channel's nine outputs in assembly: VWW's 3x3x256 and 6x6 ->
 * 3x3x128 layers 107,389 / 54,779 -> 56,449 / 38,687 estimated M4 cycles, +1.0 / +1.1 KB code (a
 * path each: mcu_cmsis_paths.h). No scratch.
 */
#ifndef MCU_CMSIS_DW3X3_DSP_H
#define MCU_CMSIS_DW3X3_DSP_H

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_dwconv_pixel.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)

#if defined(__OPTIMIZE__) && !defined(MCU_CMSIS_DSP_EMULATE)
#define MCU_CMSIS_DW_ASM 1 /* the inline assembly of the DSP depthwise paths; without it, its C models */
#endif

/* ---- The pair layout (here and the line sweep of mcu_cmsis_dwconv_dsp.h): per two input positions
   2j, 2j + 1 of a group of four channels (depth multiplier 1), one word per channel holding both as
   an int16 pair, position 2j in the bottom lane ------------------------------------------------------ */

/** The four channels of input positions 2j, 2j + 1 (q0, q1: their four bytes) in the pair layout:
    per channel one word, position 2j in the bottom lane. */
static inline void mcu_cmsis_dw_pack_pairs(int32_t q0, int32_t q1, int32_t *out)
{
    const int32_t lo = mcu_pkhbt16(q0, q1), hi = mcu_pkhtb16(q1, q0); /* channels 0, 1 / 2, 3 of both */
    out[0] = mcu_sxtb16(lo);
    out[1] = mcu_sxtb16_ror8(lo);
    out[2] = mcu_sxtb16(hi);
    out[3] = mcu_sxtb16_ror8(hi);
}

/** How a group's input lines go into the pair layout (the same for every line): line r's
    position `first` (the first inside the input) at base + r * in_line, positions [first, last)
    inside, pairs [lo, hi) both inside (the first of them at `inner` bytes from position first),
    pairs [elo, lo) and [hi, ehi) partly (the zero point zq, four bytes, where outside: at most one
    pair each, (outside, first) and (last - 1 at `rear` bytes from position first, outside)); the
    pairs outside the input hold the zero point from the start (mcu_cmsis_dw_dsp_pairs), never built. */
struct mcu_cmsis_dw_pair_plan {
    const int8_t *base;
    int32_t in_line, step, first, last, lo, hi, elo, ehi, inner, rear, zq;
};
typedef struct mcu_cmsis_dw_pair_plan mcu_cmsis_dw_pair_plan; /* not a parameter struct */

/** The plan of channels [c0, c0 + 4) (depth multiplier 1) for lines of `span` positions, in_pos of
    them inside the input after `pad` (step: bytes between input positions, in_line: between lines;
    zp: the input zero point). */
static inline mcu_cmsis_dw_pair_plan mcu_cmsis_dw_pair_plan_at(const int8_t *input, int32_t in_pos, int32_t pad,
                                                               int32_t step, int32_t in_line, int32_t span,
                                                               int32_t c0, int32_t zp)
{
    mcu_cmsis_dw_pair_plan pl;
    pl.first = pad < span ? pad : span;
    pl.last = in_pos + pad < span ? in_pos + pad : span;
    pl.lo = (pl.first + 1) / 2;
    pl.hi = pl.last / 2 > pl.lo ? pl.last / 2 : pl.lo;
    pl.elo = pl.first / 2;
    pl.ehi = (pl.last + 1) / 2;
    pl.step = step;
    pl.in_line = in_line;
    pl.inner = (2 * pl.lo - pl.first) * step;
    pl.rear = (2 * pl.hi - pl.first) * step;
    pl.base = input + c0 + (pl.first - pad) * step; /* inside the input whenever a position is */
    pl.zq = mcu_splat_s8x4((int8_t)zp);
    return pl;
}

/** The edge pairs of a line (x: its position `first`), each one input word and the zero point's. */
static inline void mcu_cmsis_dw_pair_edges(const mcu_cmsis_dw_pair_plan *pl, const int8_t *x, int32_t *line)
{
    if (pl->elo < pl->lo) { /* first odd: (first - 1, first), first inside unless no position is */
        mcu_cmsis_dw_pack_pairs(pl->zq, pl->first < pl->last ? mcu_read_s8x4(x) : pl->zq, line + 4 * pl->elo);
    }
    if (pl->hi < pl->ehi) { /* last odd: (last - 1, last), last - 1 inside */
        mcu_cmsis_dw_pack_pairs(mcu_read_s8x4(x + pl->rear), pl->zq, line + 4 * pl->hi);
    }
}

/** Taps a and b of four channels: acc[k] += x_a[k] * w_a[k] + x_b[k] * w_b[k] (w: the four weight
    pair words). */
static inline void mcu_cmsis_dw3x3_pair(const int8_t *xa, const int8_t *xb, const int32_t *w, int32_t *a0,
                                        int32_t *a1, int32_t *a2, int32_t *a3)
{
    const int32_t ta = mcu_read_s8x4(xa), tb = mcu_read_s8x4(xb);
    const int32_t lo = mcu_pkhbt16(ta, tb), hi = mcu_pkhtb16(tb, ta); /* channels 0, 1 / 2, 3 of both taps */
    *a0 = mcu_smlad(mcu_sxtb16(lo), w[0], *a0);
    *a1 = mcu_smlad(mcu_sxtb16_ror8(lo), w[1], *a1);
    *a2 = mcu_smlad(mcu_sxtb16(hi), w[2], *a2);
    *a3 = mcu_smlad(mcu_sxtb16_ror8(hi), w[3], *a3);
    mcu_schedule_barrier(); /* one pair at a time: hoisting the loads of all spills registers */
}

/** One tap of four channels: acc[j] += x[j] * w[j] (w2: the two int16 weight words). */
static inline void mcu_cmsis_dw3x3_tap(const int8_t *x, const int32_t *w2, int32_t *a0, int32_t *a1, int32_t *a2,
                                       int32_t *a3)
{
    const int32_t word = mcu_read_s8x4(x);
    const int32_t x02 = mcu_sxtb16(word), x13 = mcu_sxtb16_ror8(word);
    const int32_t w02 = w2[0], w13 = w2[1];
    mcu_smlabb_acc(a0, x02, w02);
    mcu_smlatt_acc(a2, x02, w02);
    mcu_smlabb_acc(a1, x13, w13);
    mcu_smlatt_acc(a3, x13, w13);
}

/** The nine tap pointers of a window at input row/column (iy, ix) that crosses the border: a tap
    outside the input points at the pad row. Not inlined: the channel loop keeps its registers. */
__attribute__((noinline)) static void mcu_cmsis_dw3x3_border_taps(const int8_t *input, const int8_t *pad,
                                                                  int32_t in_h, int32_t in_w, int32_t ch,
                                                                  int32_t iy, int32_t ix, const int8_t **tap)
{
    const int x0 = ix >= 0 && ix < in_w, x1 = ix + 1 >= 0 && ix + 1 < in_w, x2 = ix + 2 >= 0 && ix + 2 < in_w;
    for (int32_t dy = 0; dy < 3; dy++, tap += 3) {
        const int32_t y = iy + dy, at = (y * in_w + ix) * ch;
        const int in = y >= 0 && y < in_h;
        tap[0] = in && x0 ? input + at : pad;
        tap[1] = in && x1 ? input + at + ch : pad;
        tap[2] = in && x2 ? input + at + 2 * ch : pad;
    }
}

/** What every pixel of one call shares (one pointer instead of ten arguments per pixel). */
struct mcu_cmsis_dw3x3_args {
    const mcu_cmsis_dw_conv_params *p;
    const int8_t *input, *pad, *weights;
    const int32_t *wq, *bias, *folded, *multiplier, *shift, *rq;
};

/** Output pixel `out`, whose window starts at input row/column (iy, ix); `fast`: a constant in
    each instance below, rq proven and the clamp the whole int8 range (SSAT alone); `relu` (with
    fast): without the rounding correction of negative accumulators (mcu_cmsis_rq3_relu). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw3x3_pixel_mode(const struct mcu_cmsis_dw3x3_args *k,
                                                                         int32_t iy, int32_t ix, int8_t *out,
                                                                         int fast, int relu)
{
    const mcu_cmsis_dw_conv_params *p = k->p;
    const int8_t *input = k->input, *pad = k->pad, *weights = k->weights;
    const int32_t *wq = k->wq, *bias = k->bias, *folded = k->folded, *multiplier = k->multiplier;
    const int32_t *shift = k->shift, *rq = k->rq;
    const int32_t in_h = p->in_h, in_w = p->in_w, ch = p->out_c, input_offset = p->input_offset;
    const int32_t out_offset = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int8_t *tap[9];
    if (iy >= 0 && iy + 3 <= in_h && ix >= 0 && ix + 3 <= in_w) {
        const int32_t row = in_w * ch;
        tap[0] = input + (iy * in_w + ix) * ch;
        tap[1] = tap[0] + ch;
        tap[2] = tap[1] + ch;
        tap[3] = tap[0] + row;
        tap[4] = tap[3] + ch;
        tap[5] = tap[4] + ch;
        tap[6] = tap[3] + row;
        tap[7] = tap[6] + ch;
        tap[8] = tap[7] + ch;
    } else {
        mcu_cmsis_dw3x3_border_taps(input, pad, in_h, in_w, ch, iy, ix, tap);
    }
    const int32_t full = ch & ~3;
    int32_t c = 0;
    for (; c < full; c += 4, wq += 18) {
        int32_t a0 = folded[c], a1 = folded[c + 1], a2 = folded[c + 2], a3 = folded[c + 3];
        mcu_cmsis_dw3x3_pair(tap[0] + c, tap[1] + c, wq, &a0, &a1, &a2, &a3);
        mcu_cmsis_dw3x3_pair(tap[2] + c, tap[3] + c, wq + 4, &a0, &a1, &a2, &a3);
        mcu_cmsis_dw3x3_pair(tap[4] + c, tap[5] + c, wq + 8, &a0, &a1, &a2, &a3);
        mcu_cmsis_dw3x3_pair(tap[6] + c, tap[7] + c, wq + 12, &a0, &a1, &a2, &a3);
        mcu_cmsis_dw3x3_tap(tap[8] + c, wq + 16, &a0, &a1, &a2, &a3);
        if (fast) { /* the four values before the stores: an int8 store may alias the records */
            const int32_t *r = rq + 3 * c;
            const int32_t v0 = mcu_ssat8(relu ? mcu_cmsis_rq3_relu(a0, r[0], r[1], r[2]) : mcu_cmsis_rq(a0, r));
            const int32_t v1 = mcu_ssat8(relu ? mcu_cmsis_rq3_relu(a1, r[3], r[4], r[5]) : mcu_cmsis_rq(a1, r + 3));
            const int32_t v2 = mcu_ssat8(relu ? mcu_cmsis_rq3_relu(a2, r[6], r[7], r[8]) : mcu_cmsis_rq(a2, r + 6));
            const int32_t v3 = mcu_ssat8(relu ? mcu_cmsis_rq3_relu(a3, r[9], r[10], r[11]) : mcu_cmsis_rq(a3, r + 9));
            out[c] = (int8_t)v0;
            out[c + 1] = (int8_t)v1;
            out[c + 2] = (int8_t)v2;
            out[c + 3] = (int8_t)v3;
            continue;
        }
        if (rq != NULL) {
            const int32_t *r = rq + 3 * c;
            out[c] = (int8_t)mcu_cmsis_rq_clamp(a0, r, act_min, act_max);
            out[c + 1] = (int8_t)mcu_cmsis_rq_clamp(a1, r + 3, act_min, act_max);
            out[c + 2] = (int8_t)mcu_cmsis_rq_clamp(a2, r + 6, act_min, act_max);
            out[c + 3] = (int8_t)mcu_cmsis_rq_clamp(a3, r + 9, act_min, act_max);
            continue;
        }
        const int32_t acc[4] = {a0, a1, a2, a3};
        for (int32_t j = 0; j < 4; j++) {
            out[c + j] = mcu_cmsis_requantize_s8(acc[j], multiplier[c + j], shift[c + j], out_offset, act_min,
                                                 act_max);
        }
    }
    for (; c < ch; c++) {
        int32_t acc = bias[c];
        for (int32_t t = 0; t < 9; t++) {
            acc += (tap[t][c] + input_offset) * weights[t * ch + c];
        }
        out[c] = mcu_cmsis_requantize_s8(acc, multiplier[c], shift[c], out_offset, act_min, act_max);
    }
}

/* Not inlined: the channel loop needs every register, none held by the pixel loops around it
   (and the tap pointers live in the instance's own frame). */
__attribute__((noinline)) static void mcu_cmsis_dw3x3_pixel_fast(const struct mcu_cmsis_dw3x3_args *k, int32_t iy,
                                                                 int32_t ix, int8_t *out)
{
    mcu_cmsis_dw3x3_pixel_mode(k, iy, ix, out, 1, 0);
}

/** The same for ReLU-like layers (output offset at or below the clamp's minimum: PAIR_RELU). */
__attribute__((noinline)) static void mcu_cmsis_dw3x3_pixel_fast_relu(const struct mcu_cmsis_dw3x3_args *k,
                                                                      int32_t iy, int32_t ix, int8_t *out)
{
    mcu_cmsis_dw3x3_pixel_mode(k, iy, ix, out, 1, 1);
}

/** The same with a clamp inside the int8 range, or without rq (the general requantization). */
__attribute__((noinline)) static void mcu_cmsis_dw3x3_pixel_any(const struct mcu_cmsis_dw3x3_args *k, int32_t iy,
                                                                int32_t ix, int8_t *out)
{
    mcu_cmsis_dw3x3_pixel_mode(k, iy, ix, out, 0, 0);
}

/* ---- The group sweep: a group of four channels' map widened once, each channel over it ----------------- */

/** Pair words per padded input row in the group sweep's scratch (a constant: the assembly's offsets). */
#define MCU_CMSIS_DW3X3_ROW_WORDS 8

/** Where the group sweep puts a band: `rows` padded input rows of MCU_CMSIS_DW3X3_ROW_WORDS pair
    words, the first `wpr` used, pair word k of a row the int16 pairs of padded columns (2k, 2k + 1)
    of the group's four channels, one word each (scratch word 4 * (8 * row + k) + channel). */
struct mcu_cmsis_dw3x3_band {
    int32_t *plane;    /* scratch */
    int32_t wpr, rows; /* pair words per row used, rows */
    int32_t first;     /* the band's first padded input row (padded row 0: input row -pad_top) */
    int32_t fill;      /* 0: its pairs outside the input already hold the zero point's pairs */
};

#if defined(MCU_CMSIS_DW_ASM)
/* mcu_cmsis_dw_pack_pairs in assembly: the words of positions 2j, 2j + 1 in registers a, b into the
   four pair words at byte `off` from register o (temporaries t, u; a and b overwritten); the
   registers as the assembler reads them (named operands: MCU_CMSIS_DW_PACK_ASM) */
#define MCU_CMSIS_DW_PACK_REGS(a, b, t, u, o, off)                                                                \
    "pkhbt " t ", " a ", " b ", lsl #16\n\t"                                                                       \
    "pkhtb " u ", " b ", " a ", asr #16\n\t"                                                                       \
    "sxtb16 " a ", " t "\n\t"                                                                                      \
    "sxtb16 " t ", " t ", ror #8\n\t"                                                                              \
    "sxtb16 " b ", " u "\n\t"                                                                                      \
    "sxtb16 " u ", " u ", ror #8\n\t"                                                                              \
    "str " a ", [" o ", #" #off "]\n\t"                                                                            \
    "str " t ", [" o ", #" #off "+4]\n\t"                                                                          \
    "str " b ", [" o ", #" #off "+8]\n\t"                                                                          \
    "str " u ", [" o ", #" #off "+12]\n\t"
/* the same on named operands a, b, o (temporaries %[t], %[u]) */
#define MCU_CMSIS_DW_PACK_ASM(a, b, o, off) MCU_CMSIS_DW_PACK_REGS("%[" a "]", "%[" b "]", "%[t]", "%[u]", "%[" o "]", off)

/** The band's rows inside the input in assembly (mcu_cmsis_dw3x3_widen's plan): per row an edge pair
    before (flags bit 0: the zero point and the first position), n inside pairs, an edge pair after
    (bit 1: the last position and the zero point), the pair words one after the other from w, the
    positions from x; then x and w advance by xadv and wadv bytes to the next row. */
struct mcu_cmsis_dw3x3_rows {
    const int8_t *x;
    int32_t *w;
    int32_t step, xadv, zq, rows, n, flags, wadv;
};

/* r1 x, r2 w, r3 step, r4 xadv, r5 zq, r6 rows left, r7 n, r8 flags, r9 wadv; r10, r11 a pair's two
   words, r12 and r0 the packing's temporaries, lr the pairs left */
__attribute__((naked, noinline)) static void mcu_cmsis_dw3x3_rows_asm(const struct mcu_cmsis_dw3x3_rows *job)
{
    (void)job;
    __asm__ volatile("push {r4-r11, lr}\n\t"
                     "ldm r0, {r1-r9}\n\t"
                     "1:\n\t" /* a row */
                     "tst r8, #1\n\t"
                     "beq 2f\n\t"
                     "ldr r11, [r1]\n\t"
                     "add r1, r1, r3\n\t"
                     "mov r10, r5\n\t"
                     MCU_CMSIS_DW_PACK_REGS("r10", "r11", "r12", "r0", "r2", 0)
                     "add r2, r2, #16\n\t"
                     "2:\n\t"
                     "movs lr, r7\n\t"
                     "beq 4f\n\t"
                     "3:\n\t" /* the inside pairs */
                     "ldr r10, [r1]\n\t"
                     "ldr r11, [r1, r3]\n\t"
                     "add r1, r1, r3, lsl #1\n\t"
                     MCU_CMSIS_DW_PACK_REGS("r10", "r11", "r12", "r0", "r2", 0)
                     "add r2, r2, #16\n\t"
                     "subs lr, lr, #1\n\t"
                     "bne 3b\n\t"
                     "4:\n\t"
                     "tst r8, #2\n\t"
                     "beq 5f\n\t"
                     "ldr r10, [r1]\n\t"
                     "mov r11, r5\n\t"
                     MCU_CMSIS_DW_PACK_REGS("r10", "r11", "r12", "r0", "r2", 0)
                     "add r2, r2, #16\n\t"
                     "5:\n\t"
                     "add r1, r1, r4\n\t"
                     "add r2, r2, r9\n\t"
                     "subs r6, r6, #1\n\t"
                     "bne 1b\n\t"
                     "pop {r4-r11, pc}\n\t");
}
#endif

/** n (at least one) pairs of input columns inside the input (in: the first's group, step: bytes
    between columns) into the band's row at w: one pair a step. */
static inline void mcu_cmsis_dw3x3_pairs(const int8_t *in, int32_t step, int32_t *w, int32_t n)
{
    for (; n > 0; n--, in += 2 * step, w += 4) {
        mcu_cmsis_dw_pack_pairs(mcu_read_s8x4(in), mcu_read_s8x4(in + step), w);
    }
}

/** Padded input rows [b->first, b->first + b->rows) of channels c0..c0 + 3 widened into the band,
    padding (and the columns past the input) the input zero point: the rows inside the input in the
    pair layout (pl: the layer's plan, channel 0's, every group's but for its base; the inside pairs
    by mcu_cmsis_dw3x3_pairs, the edge pairs from one input word each, or in assembly every row's
    pairs by mcu_cmsis_dw3x3_rows_asm), the pairs wholly outside the input and the rows outside it
    filled only when b->fill. */
__attribute__((noinline)) static void mcu_cmsis_dw3x3_widen(const mcu_cmsis_dw_conv_params *p,
                                                            const mcu_cmsis_dw_pair_plan *pl, int32_t c0,
                                                            const struct mcu_cmsis_dw3x3_band *b)
{
    const int32_t ch = p->out_c, wpr = b->wpr, in_line = pl->in_line, zpair = mcu_sxtb16(pl->zq);
    const int32_t y0 = b->first - p->pad_top, y1 = y0 + b->rows;
    if (b->fill) { /* a row outside the input whole, else the pairs before elo and from ehi */
        for (int32_t y = y0; y < y1; y++) {
            int32_t *const w = b->plane + 4 * MCU_CMSIS_DW3X3_ROW_WORDS * (y - y0);
            const int inside = y >= 0 && y < p->in_h;
            const int32_t lo = inside ? 4 * pl->elo : 4 * wpr, hi = inside ? 4 * pl->ehi : 4 * wpr;
            for (int32_t k = 0; k < lo; k++) {
                w[k] = zpair;
            }
            for (int32_t k = hi; k < 4 * wpr; k++) {
                w[k] = zpair;
            }
        }
    }
    const int32_t from = y0 > 0 ? y0 : 0, to = y1 < p->in_h ? y1 : p->in_h;
    int32_t *w = b->plane + 4 * MCU_CMSIS_DW3X3_ROW_WORDS * (from - y0);
    const int8_t *x = pl->base + c0 + from * in_line;
#if defined(MCU_CMSIS_DW_ASM)
    if (to > from && pl->first < pl->last) { /* (a row with a position inside: the group sweep's always do) */
        const int32_t front = pl->elo < pl->lo, back = pl->hi < pl->ehi, n = pl->hi - pl->lo;
        const struct mcu_cmsis_dw3x3_rows job = {
            x, w + 4 * pl->elo, ch, in_line - (front + 2 * n) * ch, pl->zq, to - from, n, front | back << 1,
            4 * 4 * MCU_CMSIS_DW3X3_ROW_WORDS - 16 * (front + n + back)};
        mcu_cmsis_dw3x3_rows_asm(&job);
        return;
    }
#endif
    for (int32_t y = from; y < to; y++, w += 4 * MCU_CMSIS_DW3X3_ROW_WORDS, x += in_line) {
        if (pl->hi > pl->lo) {
            mcu_cmsis_dw3x3_pairs(x + pl->inner, ch, w + 4 * pl->lo, pl->hi - pl->lo);
        }
        mcu_cmsis_dw_pair_edges(pl, x, w);
    }
}

/** A channel's record: its doubled folded bias and fast requantization record, then per filter row
    the doubled weights as int16 pairs (w0, w1) and (w1, w2). */
#define MCU_CMSIS_DW3X3_RECORD_WORDS 10

/** The four channels of a group over a band (the words the assembly reads, in this order): the
    current channel's first pair word, first output and record, the bytes between two channels' pair
    words (4), the band's output rows, the channels left, the output step (channels) and the output
    width. */
struct mcu_cmsis_dw3x3_job {
    const int32_t *x;
    int8_t *out;
    const int32_t *rec;
    int32_t step, rows, n, ch, out_w;
};

/** The int16 pair (2 * bottom, 2 * top): two doubled weights. */
static inline int32_t mcu_cmsis_dw_pack2x(int32_t bottom, int32_t top)
{
    return mcu_pkhbt16(2 * bottom, 2 * top); /* the doubled values' low halves */
}

/** The records of channels c0..c0 + 3, each straight from its nine weights. */
static void mcu_cmsis_dw3x3_records(const int8_t *weights, const int32_t *folded, const int32_t *rq, int32_t ch,
                                    int32_t c0, int32_t *rec)
{
    for (int32_t c = c0; c < c0 + 4; c++, rec += MCU_CMSIS_DW3X3_RECORD_WORDS) {
        const int8_t *t = weights + c;
        rec[0] = (int32_t)((uint32_t)folded[c] << 1);
        rec[1] = rq[3 * c], rec[2] = rq[3 * c + 1], rec[3] = rq[3 * c + 2];
        MCU_CMSIS_DW_UNROLL
        for (int32_t ky = 0; ky < 3; ky++, t += 3 * ch) { /* (w0, w1) and (w1, w2) of filter row ky */
            const int32_t w0 = t[0], w1 = t[ch], w2 = t[2 * ch];
            rec[4 + 2 * ky] = mcu_cmsis_dw_pack2x(w0, w1);
            rec[5 + 2 * ky] = mcu_cmsis_dw_pack2x(w1, w2);
        }
    }
}

#if defined(MCU_CMSIS_DSP_EMULATE)
/** The assembly below in C (the host tests): per channel the band's rows, two pixels a step from the
    pair words k, k + 1 of each filter row: pixel 2k SMLAD (w0, w1) + SMLABT (w1, w2), pixel 2k + 1
    SMLATB (w0, w1) + SMLAD (w1, w2); an odd last pixel's partner computed and not stored. The
    accumulators hold 2 * acc (doubled bias and weights), as the requantization takes it. */
static void mcu_cmsis_dw3x3_band_mode(const struct mcu_cmsis_dw3x3_job *j, int relu)
{
    for (int32_t c = 0; c < j->n; c++) {
        const int32_t *rec = j->rec + c * MCU_CMSIS_DW3X3_RECORD_WORDS, *w = rec + 4;
        int8_t *out = j->out + c;
        for (int32_t row = 0; row < j->rows; row++) {
            const int32_t *x = j->x + c + 4 * MCU_CMSIS_DW3X3_ROW_WORDS * row;
            for (int32_t left = j->out_w; left > 0; left -= 2, x += 4, out += 2 * j->ch) {
                int32_t a = rec[0], b = rec[0];
                for (int32_t ky = 0; ky < 3; ky++) {
                    const int32_t *q = x + 4 * MCU_CMSIS_DW3X3_ROW_WORDS * ky, w01 = w[2 * ky], w12 = w[2 * ky + 1];
                    a = mcu_smlad(q[0], w01, a), a = mcu_smlabt(q[4], w12, a);
                    b = mcu_smlatb(q[0], w01, b), b = mcu_smlad(q[4], w12, b);
                }
                a = mcu_smmlar(a, rec[1], rec[2] + (relu ? 0 : a >> 31));
                b = mcu_smmlar(b, rec[1], rec[2] + (relu ? 0 : b >> 31));
                out[0] = (int8_t)mcu_ssat8(a >> rec[3]);
                if (left >= 2) {
                    out[j->ch] = (int8_t)mcu_ssat8(b >> rec[3]);
                }
            }
            out += (j->out_w & 1) ? -j->ch : 0;
        }
    }
}

static void mcu_cmsis_dw3x3_band(const struct mcu_cmsis_dw3x3_job *j)
{
    mcu_cmsis_dw3x3_band_mode(j, 0);
}

static void mcu_cmsis_dw3x3_band_relu(const struct mcu_cmsis_dw3x3_job *j)
{
    mcu_cmsis_dw3x3_band_mode(j, 1);
}
#else
/* The channels of a band in assembly (the job in r0), as the C model above: per channel, the weights
   in r5-r10, r1 the pair word, r2 the output; two output rows at a time, a block of two pixels of
   each (accumulators r3, r4 and r11, r12) taking each of its four input rows as two loads (r0, lr);
   a last odd row two pixels at a time (r3 / r4, loads into r11 / r12, lr the pixels left). On the
   stack [sp]: bias2, m, add, right (the channel's), ch, rows left, (out_w - 1) * ch, the row pair's
   first pair word, the job, the next block's pair word, the output row's last pixel (the blocks run
   while their first pixel is at most that, their second stored where it is below it), the output
   row's bytes, out_w. */
#define MCU_CMSIS_DW3X3_MAC4(a, b, x, y, w01, w12)                                                               \
    "smlad " a ", " x ", " w01 ", " a "\n\t"                                                                        \
    "smlatb " b ", " x ", " w01 ", " b "\n\t"                                                                       \
    "smlabt " a ", " y ", " w12 ", " a "\n\t"                                                                       \
    "smlad " b ", " y ", " w12 ", " b "\n\t"
/* the same where a holds the bias and b nothing yet: b from a first */
#define MCU_CMSIS_DW3X3_MAC4_FIRST(a, b, x, y, w01, w12)                                                         \
    "smlatb " b ", " x ", " w01 ", " a "\n\t"                                                                       \
    "smlad " a ", " x ", " w01 ", " a "\n\t"                                                                        \
    "smlabt " a ", " y ", " w12 ", " a "\n\t"                                                                       \
    "smlad " b ", " y ", " w12 ", " b "\n\t"
#define MCU_CMSIS_DW3X3_LD2(ky, x, y) "ldr " x ", [r1, #(128 * " #ky ")]\n\tldr " y ", [r1, #(128 * " #ky " + 16)]\n\t"
#define MCU_CMSIS_DW3X3_RQ(a) "add r1, lr, " a ", asr #31\n\tsmmlar " a ", " a ", r0, r1\n\t"
#define MCU_CMSIS_DW3X3_SHIFT(a) "asr " a ", " a ", r0\n\tssat " a ", #8, " a "\n\t"
/* the block's four accumulators requantized (m in r0, add in lr; r1 the next block's pair word, kept
   on the stack while RQ takes it) and stored, the next block while inside the row */
#define MCU_CMSIS_DW3X3_BLOCK_STORE                                                                              \
    "str r1, [sp, #36]\n\t" MCU_CMSIS_DW3X3_RQ("r3") MCU_CMSIS_DW3X3_RQ("r4") MCU_CMSIS_DW3X3_RQ("r11")             \
        MCU_CMSIS_DW3X3_RQ("r12") "ldr r0, [sp, #12]\n\t" MCU_CMSIS_DW3X3_SHIFT("r3") MCU_CMSIS_DW3X3_SHIFT("r4")   \
            MCU_CMSIS_DW3X3_SHIFT("r11") MCU_CMSIS_DW3X3_SHIFT("r12")                                              \
    "ldr r0, [sp, #16]\n\t"                                                                                         \
    "ldr r1, [sp, #44]\n\t"                                                                                         \
    "strb r3, [r2]\n\t"                                                                                             \
    "strb r11, [r2, r1]\n\t"                                                                                        \
    "add r1, r1, r0\n\t"                                                                                            \
    "ldr lr, [sp, #40]\n\t"                                                                                         \
    "cmp r2, lr\n\t"                                                                                                \
    "itt lo\n\t" /* the block's second pixel inside the row */                                                      \
    "strblo r4, [r2, r0]\n\t"                                                                                       \
    "strblo r12, [r2, r1]\n\t"                                                                                      \
    "add r2, r2, r0, lsl #1\n\t"                                                                                    \
    "ldr r1, [sp, #36]\n\t"                                                                                         \
    "cmp r2, lr\n\t"                                                                                                \
    "bls 1b\n\t"
/* the same without the negative accumulators' rounding correction (ReLU-like layers:
   mcu_cmsis_rq3_relu): r1 untouched, so not kept on the stack, the row's bytes in lr and r3 once r3
   is stored; per block of four outputs four ADDs, a store and a load less (-7 est. M4 cycles) */
#define MCU_CMSIS_DW3X3_BLOCK_STORE_RELU                                                                         \
    "smmlar r3, r3, r0, lr\n\t"                                                                                     \
    "smmlar r4, r4, r0, lr\n\t"                                                                                     \
    "smmlar r11, r11, r0, lr\n\t"                                                                                   \
    "smmlar r12, r12, r0, lr\n\t"                                                                                   \
    "ldr r0, [sp, #12]\n\t" MCU_CMSIS_DW3X3_SHIFT("r3") MCU_CMSIS_DW3X3_SHIFT("r4") MCU_CMSIS_DW3X3_SHIFT("r11")  \
        MCU_CMSIS_DW3X3_SHIFT("r12")                                                                               \
    "ldr r0, [sp, #16]\n\t"                                                                                         \
    "ldr lr, [sp, #44]\n\t"                                                                                         \
    "strb r3, [r2]\n\t"                                                                                             \
    "strb r11, [r2, lr]\n\t"                                                                                        \
    "add r3, lr, r0\n\t"                                                                                            \
    "ldr lr, [sp, #40]\n\t"                                                                                         \
    "cmp r2, lr\n\t"                                                                                                \
    "itt lo\n\t"                                                                                                    \
    "strblo r4, [r2, r0]\n\t"                                                                                       \
    "strblo r12, [r2, r3]\n\t"                                                                                      \
    "add r2, r2, r0, lsl #1\n\t"                                                                                    \
    "cmp r2, lr\n\t"                                                                                                \
    "bls 1b\n\t"
/* the last odd row's two accumulators (m in r11, add in r12) */
#define MCU_CMSIS_DW3X3_ODD_RQ                                                                                   \
    "add r0, r12, r3, asr #31\n\t"                                                                                  \
    "smmlar r3, r3, r11, r0\n\t"                                                                                    \
    "add r0, r12, r4, asr #31\n\t"                                                                                  \
    "smmlar r4, r4, r11, r0\n\t"
#define MCU_CMSIS_DW3X3_ODD_RQ_RELU "smmlar r3, r3, r11, r12\n\tsmmlar r4, r4, r11, r12\n\t"
#define MCU_CMSIS_DW3X3_BAND(name, BLOCK_RQ_STORE, ODD_RQ)                                                            \
    __attribute__((naked, noinline)) static void name(struct mcu_cmsis_dw3x3_job *job)                                \
    {                                                                                                                 \
        (void)job;                                                                                                    \
        __asm__ volatile("push {r4-r11, lr}\n\t"                                                                      \
                         "sub sp, sp, #56\n\t"                                                                        \
                         "str r0, [sp, #32]\n\t"                                                                      \
                         "ldrd r11, r12, [r0, #24]\n\t" /* ch, out_w */                                               \
                         "str r11, [sp, #16]\n\t"                                                                     \
                         "str r12, [sp, #48]\n\t"                                                                     \
                         "sub lr, r12, #1\n\t"                                                                        \
                         "mul lr, r11, lr\n\t"                                                                        \
                         "str lr, [sp, #24]\n\t" /* (out_w - 1) * ch */                                               \
                         "mul r12, r11, r12\n\t"                                                                      \
                         "str r12, [sp, #44]\n\t"                                                                     \
                         "3:\n\t" /* a channel */                                                                     \
                         "ldr r11, [r0, #8]\n\t"                                                                      \
                         "ldm r11!, {r1-r4}\n\t"                                                                      \
                         "stm sp, {r1-r4}\n\t"                                                                        \
                         "ldm r11!, {r5-r10}\n\t"                                                                     \
                         "str r11, [r0, #8]\n\t"                                                                      \
                         "ldm r0, {r1, r2}\n\t"                                                                       \
                         "ldrd r11, r12, [r0, #12]\n\t" /* step, rows */                                              \
                         "str r12, [sp, #20]\n\t"                                                                     \
                         "add r11, r1, r11\n\t"                                                                       \
                         "add r3, r2, #1\n\t"                                                                         \
                         "strd r11, r3, [r0]\n\t" /* the next channel's pair word and output */                       \
                         "cmp r12, #1\n\t"                                                                            \
                         "beq 5f\n\t"                                                                                 \
                         "2:\n\t" /* two rows */                                                                      \
                         "str r1, [sp, #28]\n\t"                                                                      \
                         "ldr lr, [sp, #24]\n\t"                                                                      \
                         "add lr, lr, r2\n\t"                                                                         \
                         "str lr, [sp, #40]\n\t" /* the output row's last pixel */                                    \
                         "1:\n\t" /* two pixels of each */                                                            \
                         "ldr r3, [sp]\n\t"                                                                           \
                         "ldr r11, [sp]\n\t"                                                                          \
                         MCU_CMSIS_DW3X3_LD2(0, "r0", "lr")                                                           \
                         MCU_CMSIS_DW3X3_MAC4_FIRST("r3", "r4", "r0", "lr", "r5", "r6")                               \
                         MCU_CMSIS_DW3X3_LD2(1, "r0", "lr")                                                           \
                         MCU_CMSIS_DW3X3_MAC4("r3", "r4", "r0", "lr", "r7", "r8")                                     \
                         MCU_CMSIS_DW3X3_MAC4_FIRST("r11", "r12", "r0", "lr", "r5", "r6")                             \
                         MCU_CMSIS_DW3X3_LD2(2, "r0", "lr")                                                           \
                         MCU_CMSIS_DW3X3_MAC4("r3", "r4", "r0", "lr", "r9", "r10")                                    \
                         MCU_CMSIS_DW3X3_MAC4("r11", "r12", "r0", "lr", "r7", "r8")                                   \
                         MCU_CMSIS_DW3X3_LD2(3, "r0", "lr")                                                           \
                         MCU_CMSIS_DW3X3_MAC4("r11", "r12", "r0", "lr", "r9", "r10")                                  \
                         "add r1, r1, #16\n\t"                                                                        \
                         "ldr r0, [sp, #4]\n\t"                                                                       \
                         "ldr lr, [sp, #8]\n\t"                                                                       \
                         BLOCK_RQ_STORE                                                                               \
                         "add r2, lr, r0\n\t" /* the row's end */                                                     \
                         "ldr r0, [sp, #44]\n\t"                                                                      \
                         "ldr r1, [sp, #28]\n\t"                                                                      \
                         "add r2, r2, r0\n\t" /* past the second row */                                               \
                         "add r1, r1, #256\n\t"                                                                       \
                         "ldr r0, [sp, #20]\n\t"                                                                      \
                         "subs r0, r0, #2\n\t"                                                                        \
                         "str r0, [sp, #20]\n\t"                                                                      \
                         "cmp r0, #1\n\t"                                                                             \
                         "bgt 2b\n\t"                                                                                 \
                         "blt 6f\n\t"                                                                                 \
                         "5:\n\t" /* the last odd row */                                                              \
                         "ldr lr, [sp, #48]\n\t"                                                                      \
                         "4:\n\t"                                                                                     \
                         "ldr r3, [sp]\n\t"                                                                           \
                         MCU_CMSIS_DW3X3_LD2(0, "r11", "r12")                                                         \
                         MCU_CMSIS_DW3X3_MAC4_FIRST("r3", "r4", "r11", "r12", "r5", "r6")                             \
                         MCU_CMSIS_DW3X3_LD2(1, "r11", "r12")                                                         \
                         MCU_CMSIS_DW3X3_MAC4("r3", "r4", "r11", "r12", "r7", "r8")                                   \
                         MCU_CMSIS_DW3X3_LD2(2, "r11", "r12")                                                         \
                         MCU_CMSIS_DW3X3_MAC4("r3", "r4", "r11", "r12", "r9", "r10")                                  \
                         "ldr r11, [sp, #4]\n\t"                                                                      \
                         "ldr r12, [sp, #8]\n\t"                                                                      \
                         ODD_RQ                                                                                       \
                         "ldr r0, [sp, #12]\n\t"                                                                      \
                         "ldr r12, [sp, #16]\n\t"                                                                     \
                         MCU_CMSIS_DW3X3_SHIFT("r3") MCU_CMSIS_DW3X3_SHIFT("r4")                                      \
                         "strb r3, [r2]\n\t"                                                                          \
                         "cmp lr, #2\n\t"                                                                             \
                         "it ge\n\t"                                                                                  \
                         "strbge r4, [r2, r12]\n\t"                                                                   \
                         "add r2, r2, r12, lsl #1\n\t"                                                                \
                         "add r1, r1, #16\n\t"                                                                        \
                         "subs lr, lr, #2\n\t"                                                                        \
                         "bgt 4b\n\t"                                                                                 \
                         "6:\n\t" /* the next channel */                                                              \
                         "ldr r0, [sp, #32]\n\t"                                                                      \
                         "ldr r1, [r0, #20]\n\t"                                                                      \
                         "subs r1, r1, #1\n\t"                                                                        \
                         "str r1, [r0, #20]\n\t"                                                                      \
                         "bgt 3b\n\t"                                                                                 \
                         "add sp, sp, #56\n\t"                                                                        \
                         "pop {r4-r11, pc}\n\t");                                                                     \
    }
/* with the rounding correction of negative accumulators, and without it (ReLU-like layers) */
MCU_CMSIS_DW3X3_BAND(mcu_cmsis_dw3x3_band, MCU_CMSIS_DW3X3_BLOCK_STORE, MCU_CMSIS_DW3X3_ODD_RQ)
MCU_CMSIS_DW3X3_BAND(mcu_cmsis_dw3x3_band_relu, MCU_CMSIS_DW3X3_BLOCK_STORE_RELU, MCU_CMSIS_DW3X3_ODD_RQ_RELU)
#endif

/** The group sweep: per group of four channels, their records, then per band of output rows the band
    widened and the four channels over it. Not inlined: its frame (the records) stays off the other
    sweeps' stack. */
__attribute__((noinline)) static void mcu_cmsis_dw3x3_groups_run(const mcu_cmsis_dw_conv_params *p,
                                                                 const int8_t *input, const int8_t *weights,
                                                                 const int32_t *folded, const int32_t *rq,
                                                                 int32_t *scratch, int8_t *output,
                                                                 int32_t band_out_rows, int32_t wpr)
{
    const int32_t ch = p->out_c;
    const mcu_cmsis_dw_pair_plan plan = mcu_cmsis_dw_pair_plan_at(input, p->in_w, p->pad_left, ch, p->in_w * ch,
                                                                  2 * wpr, 0, -p->input_offset);
    int32_t rec[4 * MCU_CMSIS_DW3X3_RECORD_WORDS];
    const int relu = p->output_offset <= p->act_min && MCU_PATH_PAIR_RELU; /* mcu_cmsis_dw3x3_groups */
    for (int32_t c0 = 0; c0 < ch; c0 += 4) {
        mcu_cmsis_dw3x3_records(weights, folded, rq, ch, c0, rec);
        for (int32_t oy0 = 0; oy0 < p->out_h; oy0 += band_out_rows) {
            const int32_t rows = oy0 + band_out_rows < p->out_h ? band_out_rows : p->out_h - oy0;
            /* one band: the rows outside the input stay as the first group leaves them */
            const struct mcu_cmsis_dw3x3_band b = {scratch, wpr, rows + 2, oy0, c0 == 0 || rows < p->out_h};
            mcu_cmsis_dw3x3_widen(p, &plan, c0, &b);
            struct mcu_cmsis_dw3x3_job job = {scratch, output + oy0 * p->out_w * ch + c0, rec, 4, rows, 4, ch,
                                              p->out_w};
            if (relu) { /* direct calls, each band routine only where the build carries it */
                mcu_cmsis_dw3x3_band_relu(&job);
            } else if (MCU_PATH_PAIR_SIGNED) {
                mcu_cmsis_dw3x3_band(&job);
            }
        }
    }
}

/** Where the output lies: 1 clear of the input, 2 exactly over it (the same first byte), 0 else (a
    group of four channels' whole input read before its first output is written is right only in
    the first two cases). */
static inline int mcu_cmsis_dw3x3_placed(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *output)
{
    const uintptr_t in = (uintptr_t)input, out = (uintptr_t)output;
    const uintptr_t in_end = in + (uintptr_t)(p->in_h * p->in_w * p->out_c);
    const uintptr_t out_end = out + (uintptr_t)(p->out_h * p->out_w * p->out_c);
    return out_end <= in || out >= in_end ? 1 : out == in ? 2 : 0;
}

/** The group sweep where it pays and can run: fast requantization (the caller's), stride 1, whole
    groups of four channels, output rows of 4 to 2 * MCU_CMSIS_DW3X3_ROW_WORDS - 2 pixels, at least
    one output row per band in the pixel sweep's scratch, and the output either clear of the input
    or exactly over it in one band (each group's input rows are all widened before its first write;
    the pixel order an overlap at another shift needs is the pixel sweep's). Returns 0 where not. Not
    inlined: the pixel sweep's own loop compiles as without it. */
__attribute__((noinline)) static int mcu_cmsis_dw3x3_groups(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                                            const int8_t *weights, const int32_t *folded,
                                                            const int32_t *rq, int32_t *scratch, int8_t *output)
{
    const int32_t ch = p->out_c, wpr = ((p->out_w + 1) >> 1) + 1;
    const int built = (p->output_offset <= p->act_min && MCU_PATH_PAIR_RELU) || MCU_PATH_PAIR_SIGNED;
    if (p->stride_w != 1 || p->stride_h != 1 || (ch & 3) || p->out_w < 4 || wpr > MCU_CMSIS_DW3X3_ROW_WORDS ||
        !built) { /* its band routine (ReLU-like layers: PAIR_RELU, else PAIR_SIGNED) left out of the build */
        return 0;
    }
    const int32_t band = MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES(3, 3, ch, p->in_c) /
                             (16 * MCU_CMSIS_DW3X3_ROW_WORDS) - 2; /* output rows: padded rows of 4 channels */
    const int placed = mcu_cmsis_dw3x3_placed(p, input, output);
    if (band < 1 || !(placed == 1 || (placed == 2 && band >= p->out_h))) {
        return 0;
    }
    mcu_cmsis_dw3x3_groups_run(p, input, weights, folded, rq, scratch, output, band, wpr);
    return 1;
}

/* ---- 3x3 output maps (VWW's last two depthwise layers): stride 1 over a 3x3 input padded one line on
   each side (path DW_MAP3), stride 2 over a 6x6 input padded one line after it (DW_MAP3_S2). Per group
   of four channels its input and weight words widened once, every tap inside the input taken once:
   x + input_offset against TFLM's own bias, as TFLM sums them, so no padded tap at all. Per input
   row (pair words four words apart, one per channel): stride 1 the int16 pairs (x0, x1), (x1, x2),
   stride 2 (x0, x1), (x2, x3), (x4, x5); per filter row (w0, w1), (w1, w2). ---------------------- */

/** Two positions' four channels (q0, q1: their bytes) plus `off` (an int16 pair, both lanes the
    same) as int16 pairs, one word per channel, the position of q0 in the bottom lane. */
static inline void mcu_cmsis_dw_pairs_plus(int32_t q0, int32_t q1, int32_t off, int32_t *out)
{
    const int32_t lo = mcu_pkhbt16(q0, q1), hi = mcu_pkhtb16(q1, q0); /* channels 0, 1 / 2, 3 of both */
    out[0] = mcu_sxtab16(off, lo);
    out[1] = mcu_sxtab16_ror8(off, lo);
    out[2] = mcu_sxtab16(off, hi);
    out[3] = mcu_sxtab16_ror8(off, hi);
}

#if defined(MCU_CMSIS_DW_ASM)
/* The C model below in assembly, one channel: per output row its accumulators from the bias, per
   input row inside the input its pair words and the filter row's loaded back to back, then the
   multiply-accumulates; the row's three outputs requantized (the record loaded once a row) and
   stored ch apart. */
#define MCU_CMSIS_DW_MAP3_BIAS "ldr %[a0], [%[b]]\n\tmov %[a1], %[a0]\n\tmov %[a2], %[a0]\n\t"
/* stride 1: input row r under filter row ky */
#define MCU_CMSIS_DW_MAP3_TAPS1(r, ky)                                                                             \
    "ldr %[t0], [%[x], #32*" #r "]\n\t"                                                                             \
    "ldr %[t1], [%[x], #32*" #r "+16]\n\t"                                                                          \
    "ldr %[t2], [%[w], #32*" #ky "]\n\t"                                                                            \
    "ldr %[t3], [%[w], #32*" #ky "+16]\n\t"                                                                         \
    "smlad %[a0], %[t0], %[t3], %[a0]\n\t"                                                                          \
    "smlad %[a1], %[t0], %[t2], %[a1]\n\t"                                                                          \
    "smlatt %[a1], %[t1], %[t3], %[a1]\n\t"                                                                         \
    "smlad %[a2], %[t1], %[t2], %[a2]\n\t"
/* stride 2 */
#define MCU_CMSIS_DW_MAP3_TAPS2(r, ky)                                                                             \
    "ldr %[t0], [%[x], #48*" #r "]\n\t"                                                                             \
    "ldr %[t1], [%[x], #48*" #r "+16]\n\t"                                                                          \
    "ldr %[t2], [%[x], #48*" #r "+32]\n\t"                                                                          \
    "ldr %[t3], [%[w], #32*" #ky "]\n\t"                                                                            \
    "ldr %[t4], [%[w], #32*" #ky "+16]\n\t"                                                                         \
    "smlad %[a0], %[t0], %[t3], %[a0]\n\t"                                                                          \
    "smlabt %[a0], %[t1], %[t4], %[a0]\n\t"                                                                         \
    "smlad %[a1], %[t1], %[t3], %[a1]\n\t"                                                                          \
    "smlabt %[a1], %[t2], %[t4], %[a1]\n\t"                                                                         \
    "smlad %[a2], %[t2], %[t3], %[a2]\n\t"
#define MCU_CMSIS_DW_MAP3_RQ(a)                                                                                    \
    "lsl %[t3], %[" a "], #1\n\t"                                                                                   \
    "smmlar %[t3], %[t3], %[t0], %[t1]\n\t"                                                                         \
    "add %[t3], %[t3], %[" a "], asr #31\n\t"                                                                       \
    "asr %[t3], %[t3], %[t2]\n\t"                                                                                   \
    "ssat %[t3], #8, %[t3]\n\t"                                                                                     \
    "strb %[t3], [%[out]]\n\t"                                                                                      \
    "add %[out], %[out], %[ch]\n\t"
/* the same without the negative accumulators' rounding correction (ReLU-like layers: mcu_cmsis_rq3_relu) */
#define MCU_CMSIS_DW_MAP3_RQ_RELU(a)                                                                               \
    "lsl %[t3], %[" a "], #1\n\t"                                                                                   \
    "smmlar %[t3], %[t3], %[t0], %[t1]\n\t"                                                                         \
    "asr %[t3], %[t3], %[t2]\n\t"                                                                                   \
    "ssat %[t3], #8, %[t3]\n\t"                                                                                     \
    "strb %[t3], [%[out]]\n\t"                                                                                      \
    "add %[out], %[out], %[ch]\n\t"
#define MCU_CMSIS_DW_MAP3_STORE(RQ)                                                                                \
    "ldr %[t0], [%[q]]\n\tldr %[t1], [%[q], #4]\n\tldr %[t2], [%[q], #8]\n\t" RQ("a0") RQ("a1") RQ("a2")
/* the three output rows: stride 1 over input rows (0, 1), (0, 1, 2), (1, 2); stride 2 over (0, 1, 2),
   (2, 3, 4), (4, 5) */
#define MCU_CMSIS_DW_MAP3_ROWS1(RQ)                                                                                \
    MCU_CMSIS_DW_MAP3_BIAS MCU_CMSIS_DW_MAP3_TAPS1(0, 1) MCU_CMSIS_DW_MAP3_TAPS1(1, 2) MCU_CMSIS_DW_MAP3_STORE(RQ)    \
    MCU_CMSIS_DW_MAP3_BIAS MCU_CMSIS_DW_MAP3_TAPS1(0, 0) MCU_CMSIS_DW_MAP3_TAPS1(1, 1) MCU_CMSIS_DW_MAP3_TAPS1(2, 2) \
    MCU_CMSIS_DW_MAP3_STORE(RQ)                                                                                      \
    MCU_CMSIS_DW_MAP3_BIAS MCU_CMSIS_DW_MAP3_TAPS1(1, 0) MCU_CMSIS_DW_MAP3_TAPS1(2, 1) MCU_CMSIS_DW_MAP3_STORE(RQ)
#define MCU_CMSIS_DW_MAP3_ROWS2(RQ)                                                                                \
    MCU_CMSIS_DW_MAP3_BIAS MCU_CMSIS_DW_MAP3_TAPS2(0, 0) MCU_CMSIS_DW_MAP3_TAPS2(1, 1) MCU_CMSIS_DW_MAP3_TAPS2(2, 2) \
    MCU_CMSIS_DW_MAP3_STORE(RQ)                                                                                      \
    MCU_CMSIS_DW_MAP3_BIAS MCU_CMSIS_DW_MAP3_TAPS2(2, 0) MCU_CMSIS_DW_MAP3_TAPS2(3, 1) MCU_CMSIS_DW_MAP3_TAPS2(4, 2) \
    MCU_CMSIS_DW_MAP3_STORE(RQ)                                                                                      \
    MCU_CMSIS_DW_MAP3_BIAS MCU_CMSIS_DW_MAP3_TAPS2(4, 0) MCU_CMSIS_DW_MAP3_TAPS2(5, 1) MCU_CMSIS_DW_MAP3_STORE(RQ)
#define MCU_CMSIS_DW_MAP3_ASM1(RQ)                                                                                 \
    __asm__ volatile(MCU_CMSIS_DW_MAP3_ROWS1(RQ)                                                                      \
                     : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [t0] "=&r"(t0), [t1] "=&r"(t1),               \
                       [t2] "=&r"(t2), [t3] "=&r"(t3), [out] "+&r"(out)                                               \
                     : [x] "r"(x), [w] "r"(w), [b] "r"(bias), [q] "r"(q), [ch] "r"(ch)                                \
                     : "memory")
#define MCU_CMSIS_DW_MAP3_ASM2(RQ)                                                                                 \
    __asm__ volatile(MCU_CMSIS_DW_MAP3_ROWS2(RQ)                                                                      \
                     : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [t0] "=&r"(t0), [t1] "=&r"(t1),               \
                       [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [out] "+&r"(out)                               \
                     : [x] "r"(x), [w] "r"(w), [b] "r"(bias), [q] "r"(q), [ch] "r"(ch)                                \
                     : "memory")
/** One channel of a 3x3 output map, stride S (compile time): x, w its first input / filter pair word
    (rows 4 * (S + 1) and 8 words apart), bias its bias, q its record, out its first output; RELU
    (compile time): without the rounding correction of negative accumulators (mcu_cmsis_rq3_relu). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw3x3_map3_channel(const int32_t *x, const int32_t *w,
                                                                               const int32_t *bias, const int32_t *q,
                                                                               int8_t *out, int32_t ch, const int S,
                                                                               const int RELU)
{
    int32_t a0, a1, a2, t0, t1, t2, t3, t4; /* t4: stride 2's fifth word */
    if (S == 1 && RELU) {
        MCU_CMSIS_DW_MAP3_ASM1(MCU_CMSIS_DW_MAP3_RQ_RELU);
    } else if (S == 1) {
        MCU_CMSIS_DW_MAP3_ASM1(MCU_CMSIS_DW_MAP3_RQ);
    } else if (RELU) {
        MCU_CMSIS_DW_MAP3_ASM2(MCU_CMSIS_DW_MAP3_RQ_RELU);
    } else {
        MCU_CMSIS_DW_MAP3_ASM2(MCU_CMSIS_DW_MAP3_RQ);
    }
    (void)t4;
}
#else
/** One filter row (w01, w12) over one input row (x: its first pair word) into a row's accumulators,
    stride S: stride 1 output 0 takes w1 x0 + w2 x1, output 1 all three taps, output 2 w0 x1 + w1 x2
    (the padded columns skipped); stride 2 output j taps x(2j) .. x(2j + 2), output 2 without x6. */
static inline void mcu_cmsis_dw3x3_row3(const int32_t *x, int32_t w01, int32_t w12, int32_t *a, int S)
{
    if (S == 1) {
        a[0] = mcu_smlad(x[0], w12, a[0]);
        a[1] = mcu_smlatt(x[4], w12, mcu_smlad(x[0], w01, a[1]));
        a[2] = mcu_smlad(x[4], w01, a[2]);
    } else {
        a[0] = mcu_smlabt(x[4], w12, mcu_smlad(x[0], w01, a[0]));
        a[1] = mcu_smlabt(x[8], w12, mcu_smlad(x[4], w01, a[1]));
        a[2] = mcu_smlad(x[8], w01, a[2]);
    }
}

/** One channel of a 3x3 output map, stride S: x, w its first input / filter pair word (rows
    4 * (S + 1) and 8 words apart), bias its bias, q its record, out its first output; RELU: without
    the rounding correction of negative accumulators (mcu_cmsis_rq3_relu). */
static inline void mcu_cmsis_dw3x3_map3_channel(const int32_t *x, const int32_t *w, const int32_t *bias,
                                                const int32_t *q, int8_t *out, int32_t ch, const int S,
                                                const int RELU)
{
    for (int32_t oy = 0; oy < 3; oy++) {
        int32_t a[3] = {*bias, *bias, *bias};
        for (int32_t ky = 0; ky < 3; ky++) {
            const int32_t r = S * oy + ky - (S == 1); /* input row; stride 1 pads one above */
            if (r >= 0 && r < 3 * S) {
                mcu_cmsis_dw3x3_row3(x + 4 * (S + 1) * r, w[8 * ky], w[8 * ky + 4], a, S);
            }
        }
        for (int32_t ox = 0; ox < 3; ox++, out += ch) {
            *out = (int8_t)mcu_ssat8(RELU ? mcu_cmsis_rq3_relu(a[ox], q[0], q[1], q[2]) : mcu_cmsis_rq(a[ox], q));
        }
    }
}
#endif

/** A row of four channels (in: its first position's, ch bytes between positions) plus `off` into
    its pair words at x, stride S (compile time; see above). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw3x3_map3_line(const int8_t *in, int32_t ch, int32_t off,
                                                                            int32_t *x, const int S)
{
    const int32_t q1 = mcu_read_s8x4(in + ch);
    if (S == 1) {
        mcu_cmsis_dw_pairs_plus(mcu_read_s8x4(in), q1, off, x);
        mcu_cmsis_dw_pairs_plus(q1, mcu_read_s8x4(in + 2 * ch), off, x + 4);
    } else {
        mcu_cmsis_dw_pairs_plus(mcu_read_s8x4(in), q1, off, x);
        mcu_cmsis_dw_pairs_plus(mcu_read_s8x4(in + 2 * ch), mcu_read_s8x4(in + 3 * ch), off, x + 4);
        mcu_cmsis_dw_pairs_plus(mcu_read_s8x4(in + 4 * ch), mcu_read_s8x4(in + 5 * ch), off, x + 8);
    }
}

/** Every group of four channels of a 3x3 output map, stride S (compile time; see above); x, w: a
    group's input and filter pair words (3 S rows of 4 (S + 1) words, 3 rows of 8). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw3x3_map3_run(const mcu_cmsis_dw_conv_params *p,
                                                                           const int8_t *input, const int8_t *weights,
                                                                           const int32_t *bias, const int32_t *rq,
                                                                           int8_t *output, int32_t *x, int32_t *w,
                                                                           const int S, const int RELU)
{
    const int32_t ch = p->out_c, off = mcu_pkhbt16(p->input_offset, p->input_offset);
    for (int32_t c0 = 0; c0 < ch; c0 += 4) {
        for (int32_t r = 0; r < 3 * S; r++) {
            mcu_cmsis_dw3x3_map3_line(input + 3 * S * r * ch + c0, ch, off, x + 4 * (S + 1) * r, S);
            if (r < 3) { /* a filter row: (w0, w1), (w1, w2), as a stride 1 row */
                mcu_cmsis_dw3x3_map3_line(weights + 3 * r * ch + c0, ch, 0, w + 8 * r, 1);
            }
        }
        for (int32_t k = 0; k < 4; k++) {
            mcu_cmsis_dw3x3_map3_channel(x + k, w + k, bias + c0 + k, rq + 3 * (c0 + k), output + c0 + k, ch, S,
                                         RELU);
        }
    }
}

/** A 3x3 output map (see above) at stride s, 1 or 2, where the build carries its path: whole groups
    of four channels, the output clear of the input or exactly over it (a group's input read before
    its outputs are written); a ReLU-like layer (output offset at or below the clamp's minimum)
    without the negative accumulators' rounding correction where the build carries PAIR_RELU (one
    cycle an output less), any other with it where it carries PAIR_SIGNED (mcu_cmsis_paths.h).
    Returns 0 where not. */
__attribute__((noinline)) static int mcu_cmsis_dw3x3_map3(const mcu_cmsis_dw_conv_params *p, const int8_t *input,
                                                          const int8_t *weights, const int32_t *bias,
                                                          const int32_t *rq, int8_t *output, int32_t s)
{
    const int relu = p->output_offset <= p->act_min && MCU_PATH_PAIR_RELU;
    if (p->in_h != 3 * s || p->in_w != 3 * s || p->out_h != 3 || p->out_w != 3 || p->stride_h != s ||
        p->stride_w != s || p->pad_top != 2 - s || p->pad_left != 2 - s || (p->out_c & 3) ||
        !(relu || MCU_PATH_PAIR_SIGNED) || !mcu_cmsis_dw3x3_placed(p, input, output)) {
        return 0;
    }
    int32_t w[3 * 2 * 4]; /* per filter row its two pair words, per channel */
    if (MCU_PATH_DW_MAP3 && s == 1) {
        int32_t x[3 * 2 * 4]; /* per input row its pair words, per channel */
        if (relu) {
            mcu_cmsis_dw3x3_map3_run(p, input, weights, bias, rq, output, x, w, 1, 1);
        } else if (MCU_PATH_PAIR_SIGNED) {
            mcu_cmsis_dw3x3_map3_run(p, input, weights, bias, rq, output, x, w, 1, 0);
        }
    } else if (MCU_PATH_DW_MAP3_S2) {
        int32_t x[6 * 3 * 4];
        if (relu) {
            mcu_cmsis_dw3x3_map3_run(p, input, weights, bias, rq, output, x, w, 2, 1);
        } else if (MCU_PATH_PAIR_SIGNED) {
            mcu_cmsis_dw3x3_map3_run(p, input, weights, bias, rq, output, x, w, 2, 0);
        }
    }
    return 1;
}

/** Every output pixel; fast: rq given and the clamp the whole int8 range (the planner's own pixel
    sweep), else any requantization (the pixel sweep an overlap needs). */
static inline void mcu_cmsis_dw3x3_dsp(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                                       const int32_t *bias, const int32_t *folded, const int32_t *multiplier,
                                       const int32_t *shift, const int32_t *rq, int32_t *scratch, int8_t *output,
                                       int fast)
{
    /* calls it only where it may run (and the build carries it: mcu_cmsis_paths.h) */
    const int32_t s = p->stride_w;
    const int map3 = p->out_w == 3 && ((MCU_PATH_DW_MAP3 && s == 1) || (MCU_PATH_DW_MAP3_S2 && s == 2));
    if (fast && ((map3 && mcu_cmsis_dw3x3_map3(p, input, weights, bias, rq, output, s)) ||
                 mcu_cmsis_dw3x3_groups(p, input, weights, folded, rq, scratch, output))) {
        return;
    }
    const int32_t ch = p->out_c, out_h = p->out_h, out_w = p->out_w;
    int8_t *const pad = (int8_t *)scratch;
    int32_t *const wq = (int32_t *)(void *)(pad + ((ch + 3) & ~3));
    for (int32_t c = 0; c < ch; c++) {
        pad[c] = (int8_t)(-p->input_offset); /* the zero point: the fold cancels its x * w */
    }
    int32_t *q = wq;
    for (const int8_t *w = weights, *end = weights + ch - 3; w < end; w += 4, q += 18) { /* a group */
        MCU_CMSIS_DW_UNROLL
        for (int32_t t = 0; t < 8; t += 2) { /* the tap pairs: (w[t][c], w[t + 1][c]) per channel */
            mcu_cmsis_dw_pack_pairs(mcu_read_s8x4(w + t * ch), mcu_read_s8x4(w + (t + 1) * ch), q + 2 * t);
        }
        const int32_t word = mcu_read_s8x4(w + 8 * ch); /* tap 8 */
        q[16] = mcu_sxtb16(word);
        q[17] = mcu_sxtb16_ror8(word);
    }
    const struct mcu_cmsis_dw3x3_args k = {p, input, pad, weights, wq, bias, folded, multiplier, shift, rq};
    int8_t *const ring = mcu_cmsis_dw_ring(scratch, MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES(3, 3, ch, p->in_c));
    /* the fast pixel without the rounding correction of negative accumulators for a ReLU-like layer
       (PAIR_RELU), with it for the others (PAIR_SIGNED); else (or without its path) the general one */
    const int relu = fast && p->output_offset <= p->act_min && MCU_PATH_PAIR_RELU;
    const int signed_fast = fast && !relu && MCU_PATH_PAIR_SIGNED;
    for (int32_t oy = 0; oy < out_h; oy++) {
        const int32_t iy = oy * p->stride_h - p->pad_top;
        for (int32_t ox = 0; ox < out_w; ox++) {
            const int32_t ix = ox * p->stride_w - p->pad_left;
            int8_t *const out = mcu_cmsis_dw_lag_out(p, ring, output, oy * out_w + ox);
            if (relu) { /* direct calls */
                mcu_cmsis_dw3x3_pixel_fast_relu(&k, iy, ix, out);
            } else if (signed_fast) {
                mcu_cmsis_dw3x3_pixel_fast(&k, iy, ix, out);
            } else {
                mcu_cmsis_dw3x3_pixel_any(&k, iy, ix, out);
            }
        }
    }
    if (p->lag > 0) {
        mcu_cmsis_dw_lag_flush(p, ring, output);
    }
}

#endif /* MCU_CMSIS_USE_DSP && !MCU_CMSIS_USE_MVE */

#endif /* MCU_CMSIS_DW3X3_DSP_H */
