/*
 * DSP path of mcu_cmsis_dwconv2d_s8 (Armv7E-M / Armv8-M DSP, without Helium): any filter, stride,
 * dilation, padding and depth multiplier.
 *
 * TFLM's acc = bias + sum over the taps inside the input of (x + input_offset) * w is computed as
 * folded_bias + sum over all taps of x * w (folded_bias = bias + input_offset * sum(w), offline),
 * every tap outside the input reading the input zero point (-input_offset), whose x * w the fold
 * cancels: the same integer (mod 2^32, where the sums wrap like TFLM's). With the fast
 * requantization (rq) the weights and folded bias are doubled, so the accumulators hold the
 * 2 * acc it starts from.
 *
 * Lines: the kernel sweeps the map along rows, or along columns when the planner says so (sweep
 * MCU_CMSIS_DW_SWEEP_COLUMNS, narrow maps: fewer, longer lines); a "line" below is a row of the
 * input or output in the first case, a column in the second, and the filter is read in the same
 * orientation.
 *
 * Output channels go four at a time (a group); the group's input lines go through a small line
 * cache in scratch: a cached line holds, for every input position the windows span (padding
 * included, as the zero point), the group's four input values sign-extended into two words,
 * channels (0, 2) and (1, 3) as int16 pairs (a lane pair: SXTB16 and SXTB16 ROR #8 of the four
 * bytes; with a depth multiplier, each output channel's own input channel). A line is built once
 * per group and read by every output line whose windows cover it; a line above or below the input
 * is a cached line of the zero point (filled again only where a line of the input evicted it). The group's weights are widened
 * the same way once.
 *
 * Output pixels go four along a line at a time (a block), one lane pair at a time: eight
 * accumulators (four pixels x two channels) take each tap with SMLABB / SMLATT from one weight
 * word and four cached words, so a weight word is loaded once per four pixels and the cache is
 * read at constant offsets (3x3 filters with stride 1 or 2: inline assembly, the loads paired).
 * A channel's requantization record is read once per block. Two or three pixels past a line's
 * last block of four take a block of four overlapping it, one pixel a block of one.
 *
 * 3x3 filters with stride 1 or 2 along the lines cache full groups in the pair layout instead
 * (mcu_cmsis_dw_dsp_pairs below): a word per channel and two positions, one SMLAD and one
 * SMLABT / SMLATB per filter line and pixel.
 *
 * Scratch (words): one cached line per input line a window spans (2 words per
 * spanned position each), per lane pair the current output line's k cached-line offsets (`use`)
 * followed by its widened weights, then the cached lines' input line numbers:
 * MCU_CMSIS_DWCONV2D_S8_LINES_SCRATCH_BYTES.
 */
#ifndef MCU_CMSIS_DWCONV_DSP_H
#define MCU_CMSIS_DWCONV_DSP_H

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_dw3x3_dsp.h"
#include "mcu_cmsis_dwconv_in1_dsp.h"
#include "mcu_cmsis_dwconv_pixel.h"
#include "mcu_kernels_cmsis_nn.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)

/** The layer in the sweep's orientation: lines (input and output rows, or columns when
    transposed), positions along a line, the filter's extent k_l across lines and k_p along them,
    and the byte steps between input / output pixels along a line and between lines. */
struct mcu_cmsis_dw_view {
    int32_t in_lines, in_pos, out_lines, out_pos, k_l, k_p, stride_l, stride_p, dil_l, dil_p, pad_l, pad_p;
    int32_t in_step, in_line, out_step, out_line;
};
typedef struct mcu_cmsis_dw_view mcu_cmsis_dw_view; /* not a parameter struct */

/* Not inlined: gcc would otherwise duplicate each caller once per orientation. */
__attribute__((noinline)) static void mcu_cmsis_dw_view_of(const mcu_cmsis_dw_conv_params *p, mcu_cmsis_dw_view *v)
{
    const int32_t in_c = p->in_c, out_c = p->out_c;
    if (p->sweep == MCU_CMSIS_DW_SWEEP_COLUMNS) {
        const mcu_cmsis_dw_view t = {p->in_w, p->in_h, p->out_w, p->out_h, p->k_w, p->k_h, p->stride_w,
                                     p->stride_h, p->dil_w, p->dil_h, p->pad_left, p->pad_top, p->in_w * in_c,
                                     in_c, p->out_w * out_c, out_c};
        *v = t;
    } else {
        const mcu_cmsis_dw_view t = {p->in_h, p->in_w, p->out_h, p->out_w, p->k_h, p->k_w, p->stride_h,
                                     p->stride_w, p->dil_h, p->dil_w, p->pad_top, p->pad_left, in_c,
                                     p->in_w * in_c, out_c, p->out_w * out_c};
        *v = t;
    }
}

/** Words before each lane pair's `use` for the assembly's job (mcu_cmsis_dw_lane_asm): reserved
    in every build. */
#define MCU_CMSIS_DW_JOB_WORDS 9

/** The pieces of the scratch (word pointers into it) and the geometry they share. */
struct mcu_cmsis_dw_cache {
    int32_t *lines, *lane[2], *tag;
    int32_t span, words, slots;
};
typedef struct mcu_cmsis_dw_cache mcu_cmsis_dw_cache; /* not a parameter struct */

static inline mcu_cmsis_dw_cache mcu_cmsis_dw_cache_at(const mcu_cmsis_dw_view *v, int32_t *scratch)
{
    const int32_t k = v->k_l, taps = v->k_l * v->k_p;
    mcu_cmsis_dw_cache c;
    c.span = MCU_CMSIS_DW_SPAN(v->out_pos, v->stride_p, v->k_p, v->dil_p);
    c.words = 2 * c.span;
    c.slots = MCU_CMSIS_DW_SPAN(1, 1, k, v->dil_l); /* the input lines one output line's windows span */
    c.lines = scratch;                               /* the cached lines */
    c.lane[0] = c.lines + c.slots * c.words + MCU_CMSIS_DW_JOB_WORDS + k; /* after its job and `use` */
    c.lane[1] = c.lane[0] + taps + MCU_CMSIS_DW_JOB_WORDS + k;
    c.tag = c.lane[1] + taps;
    return c;
}

/** Positions [from, to) of a cached line: the zero point in every lane. */
static inline void mcu_cmsis_dw_fill(int32_t *line, int32_t from, int32_t to, int32_t zp2)
{
    for (int32_t i = from; i < to; i++) {
        line[2 * i] = zp2;
        line[2 * i + 1] = zp2;
    }
}

/** Builds input line r of the group of output channels [c0, c0 + n) into `line`. */
static void mcu_cmsis_dw_build_line(const mcu_cmsis_dw_view *v, const int8_t *input, int32_t mult, int32_t span,
                                    int32_t r, int32_t c0, int32_t n, int32_t zp2, int32_t *line)
{
    const int32_t pad = v->pad_p, step = v->in_step;
    const int32_t first = pad < span ? pad : span; /* positions [first, last) lie inside */
    const int32_t last = v->in_pos + pad < span ? v->in_pos + pad : span;
    mcu_cmsis_dw_fill(line, 0, first, zp2);
    const int8_t *x = input + r * v->in_line + (first - pad) * step;
    int32_t i = first;
    if (mult == 1 && n == 4) {
        for (x += c0; i < last; i++, x += step) {
            const int32_t q = mcu_read_s8x4(x);
            line[2 * i] = mcu_sxtb16(q);
            line[2 * i + 1] = mcu_sxtb16_ror8(q);
        }
    } else {
        int32_t src[4]; /* each lane's input channel; lanes past n (weight 0) read channel c0 / mult */
        for (int32_t j = 0; j < 4; j++) {
            src[j] = (j < n ? c0 + j : c0) / mult;
        }
        for (; i < last; i++, x += step) {
            line[2 * i] = mcu_pkhbt16(x[src[0]], x[src[2]]);
            line[2 * i + 1] = mcu_pkhbt16(x[src[1]], x[src[3]]);
        }
    }
    mcu_cmsis_dw_fill(line, i, span, zp2);
}

/** The plan of channels [c0, c0 + 4) of the view's input lines, `span` positions. */
static inline mcu_cmsis_dw_pair_plan mcu_cmsis_dw_pair_plan_of(const mcu_cmsis_dw_view *v, const int8_t *input,
                                                               int32_t span, int32_t c0, int32_t zp)
{
    return mcu_cmsis_dw_pair_plan_at(input, v->in_pos, v->pad_p, v->in_step, v->in_line, span, c0, zp);
}

/** n pairs of positions inside the input (in: the first's group, step: bytes between positions)
    into out: four at a time in assembly (two groups of four loads back to back, the stores after
    each pair's packing; two pairs left over enter the loop at its second half), else one at a time. */
static inline void mcu_cmsis_dw_pairs_inside(const int8_t *in, int32_t step, int32_t *out, int32_t n)
{
#if defined(MCU_CMSIS_DW_ASM)
    if (n & 1) {
        mcu_cmsis_dw_pack_pairs(mcu_read_s8x4(in), mcu_read_s8x4(in + step), out);
        in += 2 * step;
        out += 4;
    }
    if (n > 1) {
        const int32_t *const end = out + 4 * (n & ~1);
        int32_t a, b, c, d, t, u;
        __asm__ volatile("sub %[t], %[end], %[o]\n\t"
                         "tst %[t], #32\n\t" /* (n & 2): into the second half, out 32 bytes back */
                         "itt ne\n\t"
                         "subne %[o], %[o], #32\n\t"
                         "bne 2f\n\t"
                         "1:\n\t"
                         "ldr %[a], [%[in]]\n\t"
                         "ldr %[b], [%[in], %[s1]]\n\t"
                         "ldr %[c], [%[in], %[s2]]\n\t"
                         "ldr %[d], [%[in], %[s3]]\n\t"
                         "add %[in], %[in], %[s1], lsl #2\n\t"
                         MCU_CMSIS_DW_PACK_ASM("a", "b", "o", 0) MCU_CMSIS_DW_PACK_ASM("c", "d", "o", 16)
                         "2:\n\t"
                         "ldr %[a], [%[in]]\n\t"
                         "ldr %[b], [%[in], %[s1]]\n\t"
                         "ldr %[c], [%[in], %[s2]]\n\t"
                         "ldr %[d], [%[in], %[s3]]\n\t"
                         "add %[in], %[in], %[s1], lsl #2\n\t"
                         MCU_CMSIS_DW_PACK_ASM("a", "b", "o", 32) MCU_CMSIS_DW_PACK_ASM("c", "d", "o", 48)
                         "add %[o], %[o], #64\n\t"
                         "cmp %[o], %[end]\n\t"
                         "bne 1b\n\t"
                         : [a] "=&r"(a), [b] "=&r"(b), [c] "=&r"(c), [d] "=&r"(d), [t] "=&r"(t), [u] "=&r"(u),
                           [in] "+&r"(in), [o] "+&r"(out)
                         : [s1] "r"(step), [s2] "r"(2 * step), [s3] "r"(3 * step), [end] "r"(end)
                         : "memory", "cc");
    }
#else
    for (int32_t j = 0; j < n; j++, in += 2 * step, out += 4) {
        mcu_cmsis_dw_pack_pairs(mcu_read_s8x4(in), mcu_read_s8x4(in + step), out);
    }
#endif
}

/** Builds input line r into `line` in the pair layout (mcu_cmsis_dw_pair_plan). */
__attribute__((noinline)) static void mcu_cmsis_dw_build_pairs(const mcu_cmsis_dw_pair_plan *pl, int32_t r,
                                                               int32_t *line)
{
    const int8_t *const x = pl->base + r * pl->in_line;
    const int32_t lo = pl->lo, hi = pl->hi;
    mcu_cmsis_dw_pairs_inside(x + pl->inner, pl->step, line + 4 * lo, hi - lo);
    mcu_cmsis_dw_pair_edges(pl, x, line);
}

/** Whether a cached line (its tag, its `words` words) must be built to hold input line r (inside
    the input: in_lines lines), which it is then tagged with; a line outside the input is the zero
    point throughout, filled here unless it held such a line, of any group (tag INT32_MIN:
    unknown). */
static inline int mcu_cmsis_dw_stale(int32_t *tag, int32_t *line, int32_t words, int32_t in_lines, int32_t r,
                                     int32_t zp2)
{
    const int32_t was = *tag;
    if (was == r) {
        return 0;
    }
    *tag = r;
    if (r >= 0 && r < in_lines) {
        return 1;
    }
    if (was == INT32_MIN || (was >= 0 && was < in_lines)) { /* a line of padding where it held none */
        mcu_cmsis_dw_fill(line, 0, words / 2, zp2);
    }
    return 0;
}

/** Offset (words from c->lines) of input line r in the lane pairs: cached line ((r % slots) +
    slots) % slots, built if stale (mcu_cmsis_dw_stale): the lines of one output line's windows,
    at most `slots` consecutive lines, never share a slot. */
static inline int32_t mcu_cmsis_dw_line(const mcu_cmsis_dw_view *v, const int8_t *input, int32_t mult,
                                        const mcu_cmsis_dw_cache *c, int32_t r, int32_t c0, int32_t n, int32_t zp2)
{
    const int32_t slot = (r % c->slots + c->slots) % c->slots, off = slot * c->words;
    if (mcu_cmsis_dw_stale(c->tag + slot, c->lines + off, c->words, v->in_lines, r, zp2)) {
        mcu_cmsis_dw_build_line(v, input, mult, c->span, r, c0, n, zp2, c->lines + off);
    }
    return off;
}

/** Taps of four channels as two lane-pair words (w[c0], w[c0 + 2] / w[c0 + 1], w[c0 + 3]),
    doubled when `twice`. */
static inline void mcu_cmsis_dw_widen(int32_t q, int twice, int32_t *lo, int32_t *hi)
{
    const uint32_t keep = twice ? 0xFFFEFFFFu : 0xFFFFFFFFu; /* doubling: the bottom lane's sign bit out */
    const int shift = twice ? 1 : 0;
    *lo = (int32_t)(((uint32_t)mcu_sxtb16(q) << shift) & keep);
    *hi = (int32_t)(((uint32_t)mcu_sxtb16_ror8(q) << shift) & keep);
}

/** The group's weights widened into both lane pairs, tap by tap in the view's order (zero past
    n), and its four folded biases; all doubled when `twice`. */
static void mcu_cmsis_dw_group_weights(const mcu_cmsis_dw_conv_params *p, const int8_t *weights,
                                       const int32_t *folded_bias, int32_t c0, int32_t n, int twice,
                                       const mcu_cmsis_dw_cache *c, int32_t folded[4])
{
    const int32_t k_h = p->k_h, k_w = p->k_w, out_c = p->out_c, transpose = p->sweep == MCU_CMSIS_DW_SWEEP_COLUMNS;
    const int32_t k_l = transpose ? k_w : k_h, k_p = transpose ? k_h : k_w;
    const int32_t step_l = (transpose ? 1 : k_w) * out_c, step_p = (transpose ? k_w : 1) * out_c;
    for (int32_t kl = 0, t = 0; kl < k_l; kl++) {
        const int8_t *w = weights + kl * step_l + c0;
        for (int32_t kp = 0; kp < k_p; kp++, w += step_p, t++) {
            int32_t q = 0;
            if (n == 4) {
                q = mcu_read_s8x4(w);
            } else {
                for (int32_t j = 0; j < n; j++) {
                    q |= (int32_t)((uint32_t)(uint8_t)w[j] << (8 * j));
                }
            }
            mcu_cmsis_dw_widen(q, twice, &c->lane[0][t], &c->lane[1][t]);
        }
    }
    for (int32_t j = 0; j < 4; j++) {
        folded[j] = j < n ? (int32_t)((uint32_t)folded_bias[c0 + j] << (twice ? 1 : 0)) : 0;
    }
}

/** One tap of a block of P pixels (4 or 1, `pstep` words apart from x), one lane pair:
    acc[i] / acc[4 + i] += the bottom / top lanes of x[i * pstep] times w. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_tap(const int32_t *x, int32_t pstep, int32_t w,
                                                                   int32_t acc[8], const int P)
{
    MCU_CMSIS_DW_UNROLL
    for (int i = 0; i < P; i++) {
        const int32_t q = x[i * pstep];
        mcu_smlabb_acc(&acc[i], q, w);
        mcu_smlatt_acc(&acc[4 + i], q, w);
    }
}

#if defined(MCU_CMSIS_DW_ASM)
/* Inline assembly of a whole lane pair of a block of P (4 or 1) pixels of a 3x3 filter, stride S
   (words between pixels 2 * S, between taps 2), fast requantization, all four channels of the
   group: mcu_cmsis_dw_lane for those. The lane pair's `job` words before its `use` (w[-3..-1])
   hold its folded biases, requantization records, output pointer and output step; the taps load
   one weight and the P cached words two at a time (an M4 load right after an independent load
   takes one cycle); the top accumulators wait in the job while the bottom ones are requantized.
   At most fourteen registers: 2 * P accumulators, base, w and four temporaries (gcc cannot give
   them at -O0, which takes the C path). The macros also spell blocks of two and three pixels. */
/* job words (MCU_CMSIS_DW_JOB_WORDS): spill[4], bias lo, bias hi, rq, out, step */
#define MCU_CMSIS_DW_ASM_LD(q, kx, S, i) "ldr %[" q "], [%[x], #8*(" #kx "+" #S "*" #i ")]\n\t"
#define MCU_CMSIS_DW_ASM_MAC(q, i)                                                                                    \
    "smlabb %[a" #i "], %[" q "], %[wt], %[a" #i "]\n\t"                                                              \
    "smlatt %[b" #i "], %[" q "], %[wt], %[b" #i "]\n\t"
#define MCU_CMSIS_DW_ASM_W(ky, kx) "ldr %[wt], [%[w], #4*(3*" #ky "+" #kx ")]\n\t"
#define MCU_CMSIS_DW_ASM_TAP1(ky, kx, S)                                                                              \
    MCU_CMSIS_DW_ASM_W(ky, kx) MCU_CMSIS_DW_ASM_LD("q0", kx, S, 0) MCU_CMSIS_DW_ASM_MAC("q0", 0)
#define MCU_CMSIS_DW_ASM_TAP2(ky, kx, S)                                                                              \
    MCU_CMSIS_DW_ASM_W(ky, kx) MCU_CMSIS_DW_ASM_LD("q0", kx, S, 0) MCU_CMSIS_DW_ASM_LD("q1", kx, S, 1)                \
        MCU_CMSIS_DW_ASM_MAC("q0", 0) MCU_CMSIS_DW_ASM_MAC("q1", 1)
#define MCU_CMSIS_DW_ASM_TAP3(ky, kx, S)                                                                              \
    MCU_CMSIS_DW_ASM_TAP2(ky, kx, S) MCU_CMSIS_DW_ASM_LD("q0", kx, S, 2) MCU_CMSIS_DW_ASM_MAC("q0", 2)
#define MCU_CMSIS_DW_ASM_TAP4(ky, kx, S)                                                                              \
    MCU_CMSIS_DW_ASM_TAP2(ky, kx, S) MCU_CMSIS_DW_ASM_LD("q0", kx, S, 2) MCU_CMSIS_DW_ASM_LD("q1", kx, S, 3)          \
        MCU_CMSIS_DW_ASM_MAC("q0", 2) MCU_CMSIS_DW_ASM_MAC("q1", 3)
#define MCU_CMSIS_DW_ASM_ROW(TAP, ky, S)                                                                             \
    "ldr %[x], [%[w], #4*(" #ky "-3)]\n\t"                                                                            \
    "add %[x], %[base], %[x], lsl #2\n\t" TAP(ky, 0, S) TAP(ky, 1, S) TAP(ky, 2, S)
/* job word j of the lane pair, as an offset from w */
#define MCU_CMSIS_DW_ASM_JOB(j) "#4*(" #j "-12)"
/* requantize accumulator a (doubled) with the record in q0 (m), q1 (add), wt (right); store at base */
#define MCU_CMSIS_DW_ASM_RQ(a)                                                                                       \
    "add %[b0], %[q1], %[" a "], asr #31\n\t"                                                                         \
    "smmlar %[" a "], %[" a "], %[q0], %[b0]\n\t"                                                                     \
    "asr %[" a "], %[" a "], %[wt]\n\t"                                                                               \
    "ssat %[" a "], #8, %[" a "]\n\t"                                                                                 \
    "strb %[" a "], [%[base]]\n\t"
#define MCU_CMSIS_DW_ASM_NEXT "add %[base], %[base], %[x]\n\t"
/* the channel's record (at byte `rec` from the lane's), output pointer (+ `byte`) and step */
#define MCU_CMSIS_DW_ASM_CHANNEL(rec, byte)                                                                          \
    "ldr %[x], [%[w], " MCU_CMSIS_DW_ASM_JOB(6) "]\n\t"                                                               \
    "ldr %[base], [%[w], " MCU_CMSIS_DW_ASM_JOB(7) "]\n\t"                                                            \
    "ldr %[q0], [%[x], #" #rec "]\n\t"                                                                                \
    "ldr %[q1], [%[x], #" #rec "+4]\n\t"                                                                              \
    "ldr %[wt], [%[x], #" #rec "+8]\n\t"                                                                              \
    "ldr %[x], [%[w], " MCU_CMSIS_DW_ASM_JOB(8) "]\n\t"                                                               \
    "add %[base], %[base], #" #byte "\n\t"
#define MCU_CMSIS_DW_ASM_INIT1                                                                                       \
    "ldr %[a0], [%[w], " MCU_CMSIS_DW_ASM_JOB(4) "]\n\t"                                                              \
    "ldr %[b0], [%[w], " MCU_CMSIS_DW_ASM_JOB(5) "]\n\t"
#define MCU_CMSIS_DW_ASM_INIT2 MCU_CMSIS_DW_ASM_INIT1 "mov %[a1], %[a0]\n\tmov %[b1], %[b0]\n\t"
#define MCU_CMSIS_DW_ASM_INIT3 MCU_CMSIS_DW_ASM_INIT2 "mov %[a2], %[a0]\n\tmov %[b2], %[b0]\n\t"
#define MCU_CMSIS_DW_ASM_INIT4 MCU_CMSIS_DW_ASM_INIT3 "mov %[a3], %[a0]\n\tmov %[b3], %[b0]\n\t"
#define MCU_CMSIS_DW_ASM_SPILL(i) "str %[b" #i "], [%[w], " MCU_CMSIS_DW_ASM_JOB(i) "]\n\t"
#define MCU_CMSIS_DW_ASM_FILL(i) "ldr %[a" #i "], [%[w], " MCU_CMSIS_DW_ASM_JOB(i) "]\n\t"
#define MCU_CMSIS_DW_ASM_OUT1 MCU_CMSIS_DW_ASM_RQ("a0")
#define MCU_CMSIS_DW_ASM_OUT2 MCU_CMSIS_DW_ASM_OUT1 MCU_CMSIS_DW_ASM_NEXT MCU_CMSIS_DW_ASM_RQ("a1")
#define MCU_CMSIS_DW_ASM_OUT3 MCU_CMSIS_DW_ASM_OUT2 MCU_CMSIS_DW_ASM_NEXT MCU_CMSIS_DW_ASM_RQ("a2")
#define MCU_CMSIS_DW_ASM_OUT4 MCU_CMSIS_DW_ASM_OUT3 MCU_CMSIS_DW_ASM_NEXT MCU_CMSIS_DW_ASM_RQ("a3")
#define MCU_CMSIS_DW_ASM_SPILL1 MCU_CMSIS_DW_ASM_SPILL(0)
#define MCU_CMSIS_DW_ASM_SPILL2 MCU_CMSIS_DW_ASM_SPILL1 MCU_CMSIS_DW_ASM_SPILL(1)
#define MCU_CMSIS_DW_ASM_SPILL3 MCU_CMSIS_DW_ASM_SPILL2 MCU_CMSIS_DW_ASM_SPILL(2)
#define MCU_CMSIS_DW_ASM_SPILL4 MCU_CMSIS_DW_ASM_SPILL3 MCU_CMSIS_DW_ASM_SPILL(3)
#define MCU_CMSIS_DW_ASM_FILL1 MCU_CMSIS_DW_ASM_FILL(0)
#define MCU_CMSIS_DW_ASM_FILL2 MCU_CMSIS_DW_ASM_FILL1 MCU_CMSIS_DW_ASM_FILL(1)
#define MCU_CMSIS_DW_ASM_FILL3 MCU_CMSIS_DW_ASM_FILL2 MCU_CMSIS_DW_ASM_FILL(2)
#define MCU_CMSIS_DW_ASM_FILL4 MCU_CMSIS_DW_ASM_FILL3 MCU_CMSIS_DW_ASM_FILL(3)
/* the lane pair of P pixels: channel c0 + lane at its record, channel c0 + lane + 2 six words on */
#define MCU_CMSIS_DW_ASM_LANE(P, S)                                                                                  \
    MCU_CMSIS_DW_ASM_INIT##P MCU_CMSIS_DW_ASM_ROW(MCU_CMSIS_DW_ASM_TAP##P, 0, S)                                      \
        MCU_CMSIS_DW_ASM_ROW(MCU_CMSIS_DW_ASM_TAP##P, 1, S) MCU_CMSIS_DW_ASM_ROW(MCU_CMSIS_DW_ASM_TAP##P, 2, S)       \
            MCU_CMSIS_DW_ASM_SPILL##P MCU_CMSIS_DW_ASM_CHANNEL(0, 0) MCU_CMSIS_DW_ASM_OUT##P                          \
                MCU_CMSIS_DW_ASM_FILL##P MCU_CMSIS_DW_ASM_CHANNEL(24, 2) MCU_CMSIS_DW_ASM_OUT##P
#define MCU_CMSIS_DW_ACC1 [a0] "=&r"(a[0]), [b0] "=&r"(b[0])
#define MCU_CMSIS_DW_ACC2 MCU_CMSIS_DW_ACC1, [a1] "=&r"(a[1]), [b1] "=&r"(b[1])
#define MCU_CMSIS_DW_ACC3 MCU_CMSIS_DW_ACC2, [a2] "=&r"(a[2]), [b2] "=&r"(b[2])
#define MCU_CMSIS_DW_ACC4 MCU_CMSIS_DW_ACC3, [a3] "=&r"(a[3]), [b3] "=&r"(b[3])
#define MCU_CMSIS_DW_ASM_CASE(P, S)                                                                                  \
    __asm__ volatile(MCU_CMSIS_DW_ASM_LANE(P, S)                                                                      \
                     : MCU_CMSIS_DW_ACC##P, [x] "=&r"(x), [wt] "=&r"(wt), [q0] "=&r"(q0), [q1] "=&r"(q1),             \
                       [base] "+&r"(base)                                                                             \
                     : [w] "r"(w)                                                                                     \
                     : "memory")

/** The assembly lane pair of P pixels, stride S (see above); base: the block's first position and
    lane pair in the first cached line. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_lane_asm(const int32_t *base, const int32_t *w,
                                                                        const int P, const int S)
{
    int32_t a[4], b[4], x, wt, q0, q1;
    if (S == 1 && P == 4) {
        MCU_CMSIS_DW_ASM_CASE(4, 1);
    } else if (S == 1) {
        MCU_CMSIS_DW_ASM_CASE(1, 1);
    } else if (P == 4) {
        MCU_CMSIS_DW_ASM_CASE(4, 2);
    } else {
        MCU_CMSIS_DW_ASM_CASE(1, 2);
    }
}
#endif

/** mcu_cmsis_rq from an accumulator already doubled (acc2 = 2 * acc). */
static inline int32_t mcu_cmsis_dw_rq2(int32_t acc2, const int32_t *rq)
{
    return (mcu_smmlar(acc2, rq[0], rq[1]) + (acc2 >> 31)) >> rq[2];
}

/** mcu_cmsis_dw_rq2 without the rounding correction of negative accumulators where RELU (compile
    time): a layer whose output offset is at or below the clamp's minimum, where it equals
    mcu_cmsis_dw_rq2 after the clamp (mcu_cmsis_rq3_relu). */
static inline int32_t mcu_cmsis_dw_rq2_mode(int32_t acc2, const int32_t *rq, const int RELU)
{
    return RELU ? mcu_smmlar(acc2, rq[0], rq[1]) >> rq[2] : mcu_cmsis_dw_rq2(acc2, rq);
}

#if defined(MCU_CMSIS_DW_ASM)
/* The k_p taps along one cached line of a block of four pixels, any filter width, stride 1 or 2
   (pstep 2 or 4 words), undilated: a loop of one weight load and four cached words per tap, the
   eight accumulators in registers (thirteen: those, x, w, a counter and two temporaries). */
#define MCU_CMSIS_DW_ASM_LINE_TAP(S)                                                                                 \
    "1:\n\t"                                                                                                          \
    "ldr %[wt], [%[w]], #4\n\t"                                                                                      \
    "ldr %[q0], [%[x]]\n\t" MCU_CMSIS_DW_ASM_MAC("q0", 0)                                                            \
    "ldr %[q0], [%[x], #8*" #S "]\n\t" MCU_CMSIS_DW_ASM_MAC("q0", 1)                                                 \
    "ldr %[q0], [%[x], #16*" #S "]\n\t" MCU_CMSIS_DW_ASM_MAC("q0", 2)                                                \
    "ldr %[q0], [%[x], #24*" #S "]\n\t" MCU_CMSIS_DW_ASM_MAC("q0", 3)                                                \
    "add %[x], %[x], #8\n\t"                                                                                         \
    "subs %[n], %[n], #1\n\t"                                                                                        \
    "bne 1b\n\t"
#define MCU_CMSIS_DW_ASM_LINE_CASE(S)                                                                                \
    __asm__ volatile(MCU_CMSIS_DW_ASM_LINE_TAP(S)                                                                     \
                     : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3), [b0] "+r"(b0), [b1] "+r"(b1),       \
                       [b2] "+r"(b2), [b3] "+r"(b3), [x] "+r"(x), [w] "+r"(w), [n] "+r"(n), [wt] "=&r"(wt),         \
                       [q0] "=&r"(q0)                                                                                 \
                     :                                                                                                \
                     : "cc", "memory")

/** Four pixels of one output channel (its record rq, FAST) from accumulators a0..a3 (doubled). */
static inline void mcu_cmsis_dw_store4(int32_t a0, int32_t a1, int32_t a2, int32_t a3, const int32_t *rq,
                                       int8_t *out, int32_t step)
{
    const int32_t r[3] = {rq[0], rq[1], rq[2]};
    out[0] = (int8_t)mcu_ssat8(mcu_cmsis_dw_rq2(a0, r));
    out[step] = (int8_t)mcu_ssat8(mcu_cmsis_dw_rq2(a1, r));
    out[2 * step] = (int8_t)mcu_ssat8(mcu_cmsis_dw_rq2(a2, r));
    out[3 * step] = (int8_t)mcu_ssat8(mcu_cmsis_dw_rq2(a3, r));
}

/** The taps of a lane pair of a block of four pixels, any filter, undilated along the lines, stride
    1 or 2 (pstep 2 or 4 words): the accumulators from the two folded biases, every filter line's
    taps by the loop above; then into acc, or where acc is NULL (FAST, both channels c, c + 2 of the
    lane pair: records rq) requantized straight from the registers and stored (no accumulator array
    in memory). */
__attribute__((noinline)) static void mcu_cmsis_dw_lane4(const int32_t *base, const int32_t *w, int32_t k_l,
                                                         int32_t k_p, int32_t pstep, int32_t bias_lo, int32_t bias_hi,
                                                         int32_t *acc, const int32_t *rq, int8_t *out, int32_t step)
{
    const int32_t *const use = w - k_l;
    int32_t a0 = bias_lo, a1 = bias_lo, a2 = bias_lo, a3 = bias_lo;
    int32_t b0 = bias_hi, b1 = bias_hi, b2 = bias_hi, b3 = bias_hi;
    for (const int32_t *u = use; u < use + k_l; u++) { /* a pointer: with an index, gcc -mcpu=cortex-m7 finds
                                                          no register left for the assembly */
        const int32_t *x = base + *u;
        int32_t n = k_p, wt, q0;
        if (pstep == 2) {
            MCU_CMSIS_DW_ASM_LINE_CASE(1);
        } else {
            MCU_CMSIS_DW_ASM_LINE_CASE(2);
        }
    }
    if (acc != NULL) {
        acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3, acc[4] = b0, acc[5] = b1, acc[6] = b2, acc[7] = b3;
        return;
    }
    mcu_cmsis_dw_store4(a0, a1, a2, a3, rq, out, step);
    mcu_cmsis_dw_store4(b0, b1, b2, b3, rq + 6, out + 2, step);
}
#endif

/** Every tap of a block of P pixels, one lane pair: w, the lane pair's weights, w[kl - k_l] the
    offset of filter line kl's cached line from base (the block's first position and lane pair in
    the first cached line). K3S (compile time): a 3x3 filter, undilated along lines, stride K3S along them
    (1 or 2; the specialized instances, FAST and on full groups of four channels), 0 for any filter. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_taps(const int32_t *base, const int32_t *w,
                                                                    int32_t k_l, int32_t k_p, int32_t cstep,
                                                                    int32_t pstep, int32_t acc[8], const int P,
                                                                    const int K3S)
{
    if (K3S) {
        MCU_CMSIS_DW_UNROLL
        for (int32_t kl = 0; kl < 3; kl++) {
            const int32_t *x = base + w[kl - 3];
            mcu_cmsis_dw_tap(x, pstep, w[3 * kl], acc, P);
            mcu_cmsis_dw_tap(x + cstep, pstep, w[3 * kl + 1], acc, P);
            mcu_cmsis_dw_tap(x + 2 * cstep, pstep, w[3 * kl + 2], acc, P);
            mcu_schedule_barrier();
        }
        return;
    }
    const int32_t *use = w - k_l;
#if defined(MCU_CMSIS_DW_ASM)
    if (P == 4 && cstep == 2 && (pstep == 2 || pstep == 4)) { /* undilated, stride 1 or 2: the taps in assembly */
        mcu_cmsis_dw_lane4(base, w, k_l, k_p, pstep, acc[0], acc[4], acc, NULL, NULL, 0); /* acc: the biases */
        return;
    }
#endif
    for (int32_t kl = 0; kl < k_l; kl++) {
        const int32_t *x = base + use[kl];
        for (int32_t kp = 0; kp < k_p; kp++, x += cstep) {
            mcu_cmsis_dw_tap(x, pstep, *w++, acc, P);
        }
    }
}

/** mcu_cmsis_dw_store other than FAST: the clamp, or the general requantization without rq. */
__attribute__((noinline)) static void mcu_cmsis_dw_store_any(const int32_t *acc, int32_t n, int32_t ch, int8_t *out,
                                                             int32_t step, const int32_t *rq,
                                                             const int32_t *multiplier, const int32_t *shift,
                                                             int32_t out_offset, int32_t act_min, int32_t act_max)
{
    for (int32_t i = 0; i < n; i++, out += step) {
        if (rq != NULL) {
            int32_t q = mcu_ssat8(mcu_cmsis_dw_rq2(acc[i], rq + 3 * ch));
            q = q < act_min ? act_min : q;
            *out = (int8_t)(q > act_max ? act_max : q);
        } else {
            *out = mcu_cmsis_requantize_s8(acc[i], multiplier[ch], shift[ch], out_offset, act_min, act_max);
        }
    }
}

/** Output channel ch of P pixels (`step` bytes apart from out) from their accumulators, doubled
    when rq is given; FAST (compile time): rq given and the clamp the whole int8 range. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_store(const int32_t *acc, int32_t ch, int8_t *out,
                                                                     int32_t step, const int32_t *rq,
                                                                     const int32_t *multiplier, const int32_t *shift,
                                                                     int32_t out_offset, int32_t act_min,
                                                                     int32_t act_max, const int P, const int FAST)
{
    out += ch;
    if (FAST) {
        const int32_t r[3] = {rq[3 * ch], rq[3 * ch + 1], rq[3 * ch + 2]};
        MCU_CMSIS_DW_UNROLL
        for (int i = 0; i < P; i++, out += step) {
            *out = (int8_t)mcu_ssat8(mcu_cmsis_dw_rq2(acc[i], r));
        }
    } else {
        mcu_cmsis_dw_store_any(acc, P, ch, out, step, rq, multiplier, shift, out_offset, act_min, act_max);
    }
}

/** What every block of the current group and output line shares. */
struct mcu_cmsis_dw_blocks {
    const mcu_cmsis_dw_conv_params *p;
    const mcu_cmsis_dw_cache *c;
    const int32_t *folded, *multiplier, *shift, *rq;
    int32_t c0, n, out_step, pstep, cstep;
};
typedef struct mcu_cmsis_dw_blocks mcu_cmsis_dw_blocks; /* not a parameter struct */

/** Lane pair `lane` of a block of P pixels whose windows start at cached position `pos`: its
    taps, then its channels c0 + lane and, when `both`, c0 + lane + 2. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_lane(const mcu_cmsis_dw_blocks *b, int32_t pos,
                                                                    int32_t lane, int both, int8_t *out, const int P,
                                                                    const int K3S, const int FAST)
{
    const mcu_cmsis_dw_conv_params *p = b->p;
    const int32_t out_offset = p->output_offset, act_min = p->act_min, act_max = p->act_max;
    const int transpose = p->sweep == MCU_CMSIS_DW_SWEEP_COLUMNS;
    const int32_t k_l = transpose ? p->k_w : p->k_h, k_p = transpose ? p->k_h : p->k_w;
#if defined(MCU_CMSIS_DW_ASM)
    if (!K3S && FAST && P == 4 && both && b->cstep == 2 && (b->pstep == 2 || b->pstep == 4)) {
        const int32_t ch = b->c0 + lane;
        mcu_cmsis_dw_lane4(b->c->lines + 2 * pos + lane, b->c->lane[lane], k_l, k_p, b->pstep, b->folded[lane],
                           b->folded[lane + 2], NULL, b->rq + 3 * ch, out + ch, b->out_step);
        return;
    }
#endif
    int32_t acc[8];
    MCU_CMSIS_DW_UNROLL
    for (int i = 0; i < 4; i++) {
        acc[i] = b->folded[lane];
        acc[4 + i] = b->folded[lane + 2];
    }
    mcu_cmsis_dw_taps(b->c->lines + 2 * pos + lane, b->c->lane[lane], k_l, k_p, b->cstep, b->pstep, acc, P, K3S);
    mcu_cmsis_dw_store(acc, b->c0 + lane, out, b->out_step, b->rq, b->multiplier, b->shift, out_offset, act_min,
                       act_max, P, FAST);
    if (both) {
        mcu_cmsis_dw_store(acc + 4, b->c0 + lane + 2, out, b->out_step, b->rq, b->multiplier, b->shift, out_offset,
                           act_min, act_max, P, FAST);
    }
}

/** A block of P pixels whose windows start at cached position `pos`: every channel of the group. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_block(const mcu_cmsis_dw_blocks *b, int32_t pos,
                                                                     int8_t *out, const int P, const int K3S,
                                                                     const int FAST)
{
#if defined(MCU_CMSIS_DW_ASM)
    if (K3S) { /* the specialized instances are FAST and take full groups only */
        for (int32_t lane = 0; lane < b->n / 2; lane++) { /* n is 4: a bound gcc does not unroll */
            int32_t *w = b->c->lane[lane];
            w[7 - MCU_CMSIS_DW_JOB_WORDS - 3] = (int32_t)(uintptr_t)(out + b->c0 + lane);
            mcu_cmsis_dw_lane_asm(b->c->lines + 2 * pos + lane, w, P, K3S);
        }
        return;
    }
#endif
    for (int32_t lane = 0; lane < 2 && lane < b->n; lane++) {
        mcu_cmsis_dw_lane(b, pos, lane, lane + 2 < b->n, out, P, K3S, FAST);
    }
}

/* Blocks of one pixel (not inlined: the few pixels past a line's blocks of four). */
#define MCU_CMSIS_DW_SINGLE_INSTANCE(name, K3S, FAST)                                                                \
    __attribute__((noinline)) static void name(const mcu_cmsis_dw_blocks *b, int32_t pos, int8_t *out)               \
    {                                                                                                                 \
        mcu_cmsis_dw_block(b, pos, out, 1, K3S, FAST);                                                                \
    }
MCU_CMSIS_DW_SINGLE_INSTANCE(mcu_cmsis_dw_single_3x3_s1, 1, 1)
MCU_CMSIS_DW_SINGLE_INSTANCE(mcu_cmsis_dw_single_3x3_s2, 2, 1)
MCU_CMSIS_DW_SINGLE_INSTANCE(mcu_cmsis_dw_single_any_fast, 0, 1)
MCU_CMSIS_DW_SINGLE_INSTANCE(mcu_cmsis_dw_single_any, 0, 0)

/** The blocks of an output line of the current group (out: its first pixel): blocks of four
    pixels; two or three pixels left take a block of four overlapping the last (recomputing a few
    outputs), one pixel left a block of one. Its own function, called once per line: inlined, gcc
    copies the loops (and the assembly in them) for the line loop's header. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_line_blocks_mode(const mcu_cmsis_dw_blocks *b,
                                                                                int8_t *out, int32_t out_pos,
                                                                                int32_t step, const int K3S,
                                                                                const int FAST)
{
    const int32_t sp = K3S ? K3S : b->pstep / 2;
    const int overlap = out_pos % 4 >= 2 && out_pos >= 4;
    const int32_t fours = out_pos / 4 + overlap, ones = overlap ? out_pos : out_pos / 4 * 4; /* first single */
    for (int32_t i = 0, last = out_pos - 4; i < fours; i++) {
        int32_t op = 4 * i;
        op -= op > last ? op - last : 0; /* the overlapping block */
        mcu_cmsis_dw_block(b, op * sp, out + op * step, 4, K3S, FAST);
    }
    for (int32_t op = ones; op < out_pos; op++) {
        if (K3S == 1) {
            mcu_cmsis_dw_single_3x3_s1(b, op * sp, out + op * step);
        } else if (K3S == 2) {
            mcu_cmsis_dw_single_3x3_s2(b, op * sp, out + op * step);
        } else if (FAST) {
            mcu_cmsis_dw_single_any_fast(b, op * sp, out + op * step);
        } else {
            mcu_cmsis_dw_single_any(b, op * sp, out + op * step);
        }
    }
}

#define MCU_CMSIS_DW_LINE_INSTANCE(name, K3S, FAST)                                                                  \
    __attribute__((noinline)) static void name(const mcu_cmsis_dw_blocks *b, int8_t *out, int32_t out_pos,          \
                                               int32_t step)                                                          \
    {                                                                                                                 \
        mcu_cmsis_dw_line_blocks_mode(b, out, out_pos, step, K3S, FAST);                                              \
    }
MCU_CMSIS_DW_LINE_INSTANCE(mcu_cmsis_dw_line_3x3_s1, 1, 1)
MCU_CMSIS_DW_LINE_INSTANCE(mcu_cmsis_dw_line_3x3_s2, 2, 1)
MCU_CMSIS_DW_LINE_INSTANCE(mcu_cmsis_dw_line_any_fast, 0, 1)
MCU_CMSIS_DW_LINE_INSTANCE(mcu_cmsis_dw_line_any, 0, 0)

static inline void mcu_cmsis_dw_line_blocks(const mcu_cmsis_dw_blocks *b, int8_t *out, int32_t out_pos, int32_t step,
                                            const int K3S, const int FAST)
{
    if (K3S == 1) {
        mcu_cmsis_dw_line_3x3_s1(b, out, out_pos, step);
    } else if (K3S == 2) {
        mcu_cmsis_dw_line_3x3_s2(b, out, out_pos, step);
    } else if (FAST) {
        mcu_cmsis_dw_line_any_fast(b, out, out_pos, step);
    } else {
        mcu_cmsis_dw_line_any(b, out, out_pos, step);
    }
}

/** Every output line of the current group: the line cache, then its blocks. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_group_lines(const mcu_cmsis_dw_view *v,
                                                                           const int8_t *input, int8_t *output,
                                                                           const mcu_cmsis_dw_blocks *b, int32_t zp2,
                                                                           const int K3S, const int FAST)
{
    const mcu_cmsis_dw_cache *c = b->c;
    const int32_t k_l = v->k_l, out_pos = v->out_pos, step = v->out_step;
    for (int32_t s = 0; s < c->slots; s++) { /* the last group's lines are stale; lines of padding are not */
        c->tag[s] = c->tag[s] >= 0 && c->tag[s] < v->in_lines ? INT32_MIN : c->tag[s];
    }
    for (int32_t ol = 0; ol < v->out_lines; ol++) {
        const int32_t il = ol * v->stride_l - v->pad_l;
        for (int32_t kl = 0; kl < k_l; kl++) {
            const int32_t off =
                mcu_cmsis_dw_line(v, input, b->p->depth_multiplier, c, il + kl * v->dil_l, b->c0, b->n, zp2);
            c->lane[0][kl - k_l] = off;
            c->lane[1][kl - k_l] = off;
        }
        mcu_cmsis_dw_line_blocks(b, output + ol * v->out_line, out_pos, step, K3S, FAST);
    }
}

/** The lines of a group, any filter (FAST: rq given and the clamp the whole int8 range): every
    partial group (fewer than four channels) and the layers no 3x3 instance takes. */
__attribute__((noinline)) static void mcu_cmsis_dw_group_any(const mcu_cmsis_dw_view *v, const int8_t *input,
                                                             int8_t *output, const mcu_cmsis_dw_blocks *b, int32_t zp2,
                                                             int fast)
{
    mcu_cmsis_dw_blocks any = *b;
    any.pstep = 2 * v->stride_p;
    if (fast) {
        mcu_cmsis_dw_group_lines(v, input, output, &any, zp2, 0, 1);
    } else {
        mcu_cmsis_dw_group_lines(v, input, output, &any, zp2, 0, 0);
    }
}

/* The pair layout: 3x3 filters undilated along lines, stride S (1 or 2) along them, depth
   multiplier 1, fast requantization, full groups. A cached line holds per two input positions
   (2j, 2j + 1) four words, one per channel of the group, its two values as an int16 pair (position
   2j in the bottom lane): mcu_cmsis_dw_build_pairs. A pixel whose window starts at an even
   position 2j takes a filter line's three taps as SMLAD of pair j with (w0, w1) and SMLABT of pair
   j + 1 with (w1, w2); at an odd position 2j + 1, SMLATB of pair j with (w0, w1) and SMLAD of pair
   j + 1 with (w1, w2): two instructions per filter line, pixel and channel, where the lane pairs
   take three. A block of four pixels (stride 1: at an even position) reads three pairs (stride 2:
   five) per filter line and channel; its four accumulators are requantized at once, channel by
   channel. Scratch (words): the cached lines (4 per pair, an odd span's last pair whole), the
   group's weights (mcu_cmsis_dw_pair_weights), the output step, the lines' tags: within the lane
   pairs' scratch, whose Helium room the two more words of an odd span's lines take
   (mcu_cmsis_dw_pairs_fit). The lines are built (mcu_cmsis_dw_build_pairs) from a plan made once
   per group (mcu_cmsis_dw_pair_plan), the line of each filter line found without a division. */

/** Words per channel of the pair layout's weights: the folded bias, then per filter line (w0, w1),
    then per filter line (w1, w2), all doubled, then the channel's requantization record. */
#define MCU_CMSIS_DW_PAIR_WORDS 10
/** After the four channels' words: the output step, then where the assembly's blocks end (the
    output pointer past the last, set per call). */
#define MCU_CMSIS_DW_PAIR_STEP (4 * MCU_CMSIS_DW_PAIR_WORDS)
#define MCU_CMSIS_DW_PAIR_END (4 * MCU_CMSIS_DW_PAIR_WORDS + 1)

/** The pair layout's cache: the lane pairs' geometry (c) with 4 * ceil(span / 2) words per line,
    then the weights (returned), the output step and the tags. */
static inline int32_t *mcu_cmsis_dw_pairs_at(mcu_cmsis_dw_cache *c, int32_t *scratch)
{
    c->words = 4 * ((c->span + 1) / 2);
    c->lines = scratch;
    int32_t *const w = scratch + c->slots * c->words;
    c->tag = w + MCU_CMSIS_DW_PAIR_END + 1;
    c->lane[0] = c->lane[1] = NULL;
    return w;
}

/** Whether the pair layout fits the scratch the planner gives the lane pairs (its macro). */
static inline int mcu_cmsis_dw_pairs_fit(const mcu_cmsis_dw_view *v, const mcu_cmsis_dw_cache *c, int32_t in_c)
{
    const int32_t words = c->slots * 4 * ((c->span + 1) / 2) + MCU_CMSIS_DW_PAIR_END + 1 + c->slots;
    return 4 * words <= MCU_CMSIS_DWCONV2D_S8_LINES_SCRATCH_BYTES(v->k_l, v->k_p, v->dil_l, v->out_pos, v->stride_p,
                                                                  v->dil_p, in_c);
}

/** The weights and records of channels [c0, c0 + 4) in the pair layout into w
    (MCU_CMSIS_DW_PAIR_WORDS each). */
static void mcu_cmsis_dw_pair_weights(const mcu_cmsis_dw_conv_params *p, const int8_t *weights,
                                      const int32_t *folded_bias, const int32_t *rq, int32_t c0, int32_t *w)
{
    const int32_t out_c = p->out_c, transpose = p->sweep == MCU_CMSIS_DW_SWEEP_COLUMNS;
    const int32_t step_l = (transpose ? 1 : 3) * out_c, step_p = (transpose ? 3 : 1) * out_c;
    for (int32_t j = 0; j < 4; j++, w += MCU_CMSIS_DW_PAIR_WORDS) {
        w[0] = (int32_t)((uint32_t)folded_bias[c0 + j] << 1);
        for (int32_t kl = 0; kl < 3; kl++) {
            const int8_t *t = weights + kl * step_l + c0 + j;
            w[1 + kl] = mcu_cmsis_dw_pack2x(t[0], t[step_p]);
            w[4 + kl] = mcu_cmsis_dw_pack2x(t[step_p], t[2 * step_p]);
        }
        for (int32_t k = 0; k < 3; k++) {
            w[7 + k] = rq[3 * (c0 + j) + k];
        }
    }
}

/** A filter line's taps of one channel of a pixel whose window starts at cached position `pos`
    (x: the channel's word of pair 0). */
static inline int32_t mcu_cmsis_dw_pair_tap(const int32_t *x, int32_t pos, int32_t w01, int32_t w12, int32_t acc)
{
    const int32_t *q = x + 4 * (pos >> 1);
    if (pos & 1) {
        return mcu_smlad(q[4], w12, mcu_smlatb(q[0], w01, acc));
    }
    return mcu_smlabt(q[4], w12, mcu_smlad(q[0], w01, acc));
}

/** One pixel whose window starts at cached position `pos`, every channel of the group (x0..x2:
    the filter lines' cached lines; out: the pixel's first channel): the pixels past the blocks.
    RELU (compile time): mcu_cmsis_dw_rq2_mode. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_pair_single_mode(const int32_t *x0, const int32_t *x1,
                                                                                const int32_t *x2, const int32_t *w,
                                                                                int32_t pos, int8_t *out,
                                                                                const int RELU)
{
    for (int32_t k = 0; k < 4; k++, w += MCU_CMSIS_DW_PAIR_WORDS) {
        int32_t a = mcu_cmsis_dw_pair_tap(x0 + k, pos, w[1], w[4], w[0]);
        a = mcu_cmsis_dw_pair_tap(x1 + k, pos, w[2], w[5], a);
        a = mcu_cmsis_dw_pair_tap(x2 + k, pos, w[3], w[6], a);
        out[k] = (int8_t)mcu_ssat8(mcu_cmsis_dw_rq2_mode(a, w + 7, RELU));
    }
}

__attribute__((noinline)) static void mcu_cmsis_dw_pair_single(const int32_t *x0, const int32_t *x1,
                                                               const int32_t *x2, const int32_t *w, int32_t pos,
                                                               int8_t *out)
{
    mcu_cmsis_dw_pair_single_mode(x0, x1, x2, w, pos, out, 0);
}

__attribute__((noinline)) static void mcu_cmsis_dw_pair_single_relu(const int32_t *x0, const int32_t *x1,
                                                                    const int32_t *x2, const int32_t *w, int32_t pos,
                                                                    int8_t *out)
{
    mcu_cmsis_dw_pair_single_mode(x0, x1, x2, w, pos, out, 1);
}

#if defined(MCU_CMSIS_DW_ASM)
/* The blocks of a line in inline assembly (the C below is its model), one after the other until
   out reaches w[MCU_CMSIS_DW_PAIR_END]: per channel C of the group, its accumulators from the
   folded bias, per filter line R (w0, w1), (w1, w2) and the block's pairs from x<R> (loads first:
   an M4 load right after an independent load takes one cycle); the four accumulators requantized
   and stored one pixel (the step, w[MCU_CMSIS_DW_PAIR_STEP]) apart, out walking forward for
   channels 0 and 2 and back for 1 and 3 (it ends where it started); then x0..x2 and out four
   pixels on. Fourteen registers: four accumulators, x0..x2, w, out and five temporaries. */
#define MCU_CMSIS_DW_STR2(x) #x
#define MCU_CMSIS_DW_STR(x) MCU_CMSIS_DW_STR2(x)
#define MCU_CMSIS_DW_PAIR_LOADS(C, R)                                                                                \
    "ldr %[u], [%[w], #40*" #C "+4+4*" #R "]\n\t"                                                                     \
    "ldr %[v], [%[w], #40*" #C "+16+4*" #R "]\n\t"                                                                    \
    "ldr %[p], [%[x" #R "], #4*" #C "]\n\t"                                                                           \
    "ldr %[q], [%[x" #R "], #4*" #C "+16]\n\t"                                                                        \
    "ldr %[r], [%[x" #R "], #4*" #C "+32]\n\t"
/* stride 1: pixels at pair positions 0, 0.5, 1, 1.5 */
#define MCU_CMSIS_DW_PAIR_ROW1(C, R)                                                                                 \
    MCU_CMSIS_DW_PAIR_LOADS(C, R)                                                                                     \
    "smlad %[a0], %[p], %[u], %[a0]\n\t"                                                                              \
    "smlatb %[a1], %[p], %[u], %[a1]\n\t"                                                                             \
    "smlabt %[a0], %[q], %[v], %[a0]\n\t"                                                                             \
    "smlad %[a1], %[q], %[v], %[a1]\n\t"                                                                              \
    "smlad %[a2], %[q], %[u], %[a2]\n\t"                                                                              \
    "smlatb %[a3], %[q], %[u], %[a3]\n\t"                                                                             \
    "smlabt %[a2], %[r], %[v], %[a2]\n\t"                                                                             \
    "smlad %[a3], %[r], %[v], %[a3]\n\t"
/* the same for filter line 0, every accumulator from a0 (the folded bias) */
#define MCU_CMSIS_DW_PAIR_FIRST1(C)                                                                                  \
    MCU_CMSIS_DW_PAIR_LOADS(C, 0)                                                                                     \
    "smlatb %[a1], %[p], %[u], %[a0]\n\t"                                                                             \
    "smlad %[a2], %[q], %[u], %[a0]\n\t"                                                                              \
    "smlatb %[a3], %[q], %[u], %[a0]\n\t"                                                                             \
    "smlad %[a0], %[p], %[u], %[a0]\n\t"                                                                              \
    "smlabt %[a0], %[q], %[v], %[a0]\n\t"                                                                             \
    "smlad %[a1], %[q], %[v], %[a1]\n\t"                                                                              \
    "smlabt %[a2], %[r], %[v], %[a2]\n\t"                                                                             \
    "smlad %[a3], %[r], %[v], %[a3]\n\t"
/* stride 2: pixels at pairs 0, 1, 2, 3 */
#define MCU_CMSIS_DW_PAIR_ROW2(C, R)                                                                                 \
    MCU_CMSIS_DW_PAIR_LOADS(C, R)                                                                                     \
    "smlad %[a0], %[p], %[u], %[a0]\n\t"                                                                              \
    "smlabt %[a0], %[q], %[v], %[a0]\n\t"                                                                             \
    "smlad %[a1], %[q], %[u], %[a1]\n\t"                                                                              \
    "smlabt %[a1], %[r], %[v], %[a1]\n\t"                                                                             \
    "ldr %[p], [%[x" #R "], #4*" #C "+48]\n\t"                                                                        \
    "ldr %[q], [%[x" #R "], #4*" #C "+64]\n\t"                                                                        \
    "smlad %[a2], %[r], %[u], %[a2]\n\t"                                                                              \
    "smlabt %[a2], %[p], %[v], %[a2]\n\t"                                                                             \
    "smlad %[a3], %[p], %[u], %[a3]\n\t"                                                                              \
    "smlabt %[a3], %[q], %[v], %[a3]\n\t"
#define MCU_CMSIS_DW_PAIR_FIRST2(C)                                                                                  \
    MCU_CMSIS_DW_PAIR_LOADS(C, 0)                                                                                     \
    "mov %[a3], %[a0]\n\t"                                                                                            \
    "smlad %[a1], %[q], %[u], %[a0]\n\t"                                                                              \
    "smlad %[a2], %[r], %[u], %[a0]\n\t"                                                                              \
    "smlad %[a0], %[p], %[u], %[a0]\n\t"                                                                              \
    "smlabt %[a0], %[q], %[v], %[a0]\n\t"                                                                             \
    "smlabt %[a1], %[r], %[v], %[a1]\n\t"                                                                             \
    "ldr %[p], [%[x0], #4*" #C "+48]\n\t"                                                                             \
    "ldr %[q], [%[x0], #4*" #C "+64]\n\t"                                                                             \
    "smlabt %[a2], %[p], %[v], %[a2]\n\t"                                                                             \
    "smlad %[a3], %[p], %[u], %[a3]\n\t"                                                                              \
    "smlabt %[a3], %[q], %[v], %[a3]\n\t"
/* requantize accumulator a (doubled) with m in u, add in v, right in p; store at out + C */
#define MCU_CMSIS_DW_PAIR_RQ(a, C)                                                                                   \
    "add %[r], %[v], %[" a "], asr #31\n\t"                                                                           \
    "smmlar %[" a "], %[" a "], %[u], %[r]\n\t"                                                                       \
    "asr %[" a "], %[" a "], %[p]\n\t"                                                                                \
    "ssat %[" a "], #8, %[" a "]\n\t"                                                                                 \
    "strb %[" a "], [%[out], #" #C "]\n\t"
/* the same without the negative accumulators' rounding correction (the ADD of a's sign), for layers
   whose output offset is at or below the clamp's minimum (ReLU-like: mcu_cmsis_rq3_relu), one cycle
   an output less */
#define MCU_CMSIS_DW_PAIR_RQ_RELU(a, C)                                                                              \
    "smmlar %[" a "], %[" a "], %[u], %[v]\n\t"                                                                       \
    "asr %[" a "], %[" a "], %[p]\n\t"                                                                                \
    "ssat %[" a "], #8, %[" a "]\n\t"                                                                                 \
    "strb %[" a "], [%[out], #" #C "]\n\t"
/* channel C, its pixels stored in the order A..D, out moved by MOVE (add or sub) the step between,
   requantized by RQ */
#define MCU_CMSIS_DW_PAIR_CHANNEL(C, FIRST, ROW, RQ, A, B, D, E, MOVE)                                               \
    "ldr %[a0], [%[w], #40*" #C "]\n\t" FIRST(C) ROW(C, 1) ROW(C, 2)                                                  \
    "ldr %[u], [%[w], #40*" #C "+28]\n\t"                                                                             \
    "ldr %[v], [%[w], #40*" #C "+32]\n\t"                                                                             \
    "ldr %[p], [%[w], #40*" #C "+36]\n\t"                                                                             \
    "ldr %[q], [%[w], #4*" MCU_CMSIS_DW_STR(MCU_CMSIS_DW_PAIR_STEP) "]\n\t" RQ(A, C) MOVE RQ(B, C) MOVE RQ(D, C) MOVE \
        RQ(E, C)
#define MCU_CMSIS_DW_PAIR_FWD "add %[out], %[out], %[q]\n\t"
#define MCU_CMSIS_DW_PAIR_BACK "sub %[out], %[out], %[q]\n\t"
/* NEXT: the bytes of four pixels' pairs */
#define MCU_CMSIS_DW_PAIR_BLOCKS(FIRST, ROW, RQ, NEXT)                                                               \
    __asm__ volatile(                                                                                                 \
        "1:\n\t" MCU_CMSIS_DW_PAIR_CHANNEL(0, FIRST, ROW, RQ, "a0", "a1", "a2", "a3", MCU_CMSIS_DW_PAIR_FWD)         \
            MCU_CMSIS_DW_PAIR_CHANNEL(1, FIRST, ROW, RQ, "a3", "a2", "a1", "a0", MCU_CMSIS_DW_PAIR_BACK)             \
                MCU_CMSIS_DW_PAIR_CHANNEL(2, FIRST, ROW, RQ, "a0", "a1", "a2", "a3", MCU_CMSIS_DW_PAIR_FWD)          \
                    MCU_CMSIS_DW_PAIR_CHANNEL(3, FIRST, ROW, RQ, "a3", "a2", "a1", "a0", MCU_CMSIS_DW_PAIR_BACK)     \
        "ldr %[r], [%[w], #4*" MCU_CMSIS_DW_STR(MCU_CMSIS_DW_PAIR_END) "]\n\t"                                        \
        "add %[out], %[out], %[q], lsl #2\n\t"                                                                        \
        "add %[x0], %[x0], #" #NEXT "\n\t"                                                                             \
        "add %[x1], %[x1], #" #NEXT "\n\t"                                                                             \
        "add %[x2], %[x2], #" #NEXT "\n\t"                                                                             \
        "cmp %[out], %[r]\n\t"                                                                                        \
        "bne 1b\n\t"                                                                                                  \
        : [a0] "=&r"(a0), [a1] "=&r"(a1), [a2] "=&r"(a2), [a3] "=&r"(a3), [u] "=&r"(u), [v] "=&r"(v), [p] "=&r"(p), \
          [q] "=&r"(q), [r] "=&r"(r), [out] "+&r"(out), [x0] "+&r"(x0), [x1] "+&r"(x1), [x2] "+&r"(x2)              \
        : [w] "r"(w)                                                                                                  \
        : "memory", "cc")

/** n (at least one) blocks of four pixels, stride S (compile time; stride 1: at an even position):
    x0..x2, the filter lines' cached lines at the first block's first pair; every channel of the
    group (out: its first pixel's first channel). RELU (compile time): without the rounding
    correction of negative accumulators (mcu_cmsis_dw_rq2_mode). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_pair_blocks(const int32_t *x0, const int32_t *x1,
                                                                           const int32_t *x2, int32_t *w,
                                                                           int8_t *out, int32_t n, const int S,
                                                                           const int RELU)
{
    int32_t a0, a1, a2, a3, u, v, p, q, r;
    w[MCU_CMSIS_DW_PAIR_END] = (int32_t)(intptr_t)(out + 4 * n * w[MCU_CMSIS_DW_PAIR_STEP]); /* 32-bit pointers */
    if (S == 1 && RELU) {
        MCU_CMSIS_DW_PAIR_BLOCKS(MCU_CMSIS_DW_PAIR_FIRST1, MCU_CMSIS_DW_PAIR_ROW1, MCU_CMSIS_DW_PAIR_RQ_RELU, 32);
    } else if (S == 1) {
        MCU_CMSIS_DW_PAIR_BLOCKS(MCU_CMSIS_DW_PAIR_FIRST1, MCU_CMSIS_DW_PAIR_ROW1, MCU_CMSIS_DW_PAIR_RQ, 32);
    } else if (RELU) {
        MCU_CMSIS_DW_PAIR_BLOCKS(MCU_CMSIS_DW_PAIR_FIRST2, MCU_CMSIS_DW_PAIR_ROW2, MCU_CMSIS_DW_PAIR_RQ_RELU, 64);
    } else {
        MCU_CMSIS_DW_PAIR_BLOCKS(MCU_CMSIS_DW_PAIR_FIRST2, MCU_CMSIS_DW_PAIR_ROW2, MCU_CMSIS_DW_PAIR_RQ, 64);
    }
}
#else
/** n (at least one) blocks of four pixels, stride S (compile time; stride 1: at an even position):
    x0..x2, the filter lines' cached lines at the first block's first pair; every channel of the
    group (out: its first pixel's first channel). RELU (compile time): mcu_cmsis_dw_rq2_mode. */
static inline void mcu_cmsis_dw_pair_blocks(const int32_t *x0, const int32_t *x1, const int32_t *x2, int32_t *w,
                                            int8_t *out, int32_t n, const int S, const int RELU)
{
    const int32_t step = w[MCU_CMSIS_DW_PAIR_STEP];
    for (; n > 0; n--) {
        const int32_t *wk = w;
        for (int32_t k = 0; k < 4; k++, wk += MCU_CMSIS_DW_PAIR_WORDS) {
            int8_t *o = out + k;
            for (int32_t i = 0; i < 4; i++, o += step) {
                int32_t a = mcu_cmsis_dw_pair_tap(x0 + k, S * i, wk[1], wk[4], wk[0]);
                a = mcu_cmsis_dw_pair_tap(x1 + k, S * i, wk[2], wk[5], a);
                a = mcu_cmsis_dw_pair_tap(x2 + k, S * i, wk[3], wk[6], a);
                *o = (int8_t)mcu_ssat8(mcu_cmsis_dw_rq2_mode(a, wk + 7, RELU));
            }
        }
        out += 4 * step;
        x0 += 8 * S;
        x1 += 8 * S;
        x2 += 8 * S;
    }
}
#endif

/** The pixels of an output line, stride S (compile time): blocks of four, then the last two or
    three in a block overlapping the one before where it starts at a position the block takes
    (stride 1: even), else one by one. RELU (compile time): mcu_cmsis_dw_rq2_mode. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_pair_line_mode(const int32_t *x0, const int32_t *x1,
                                                                              const int32_t *x2, int32_t *w,
                                                                              int8_t *out, int32_t out_pos,
                                                                              const int S, const int RELU)
{
    const int32_t step = w[MCU_CMSIS_DW_PAIR_STEP], fours = out_pos / 4, last = out_pos - 4, op = 4 * fours;
    const int overlap = out_pos - op >= 2 && last >= 0 && (S == 2 || last % 2 == 0);
    for (int32_t from = 0, n = fours; n > 0; n = overlap && from != last, from = last) {
        /* the blocks of four, then the overlapping one: one copy of the assembly */
        mcu_cmsis_dw_pair_blocks(x0 + 2 * S * from, x1 + 2 * S * from, x2 + 2 * S * from, w, out + from * step, n, S,
                                 RELU);
    }
    if (overlap) {
        return;
    }
    for (int32_t o = op; o < out_pos; o++) {
        if (RELU) {
            mcu_cmsis_dw_pair_single_relu(x0, x1, x2, w, S * o, out + o * step);
        } else {
            mcu_cmsis_dw_pair_single(x0, x1, x2, w, S * o, out + o * step);
        }
    }
}

/** Every output line of a full group in the pair layout (w: its weights), stride S along the lines
    (compile time). The cached line of input line r is slot r mod slots, kept as the lines advance
    (no division). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_pairs_group_mode(const mcu_cmsis_dw_view *v,
                                                                                const int8_t *input, int8_t *output,
                                                                                const mcu_cmsis_dw_cache *c,
                                                                                int32_t *w, int32_t c0, int32_t zp2,
                                                                                const int S, const int RELU)
{
    const int32_t slots = c->slots, dil = v->dil_l, stride = v->stride_l, words = c->words, in_lines = v->in_lines;
    const int32_t out_lines = v->out_lines, out_line = v->out_line, out_pos = v->out_pos;
    int32_t *const tag = c->tag, *const lines = c->lines;
    for (int32_t s = 0; s < slots; s++) { /* as mcu_cmsis_dw_group_lines */
        tag[s] = tag[s] >= 0 && tag[s] < in_lines ? INT32_MIN : tag[s];
    }
    int32_t s0 = (-v->pad_l % slots + slots) % slots; /* the slot of the first window's first line */
    const mcu_cmsis_dw_pair_plan pl = mcu_cmsis_dw_pair_plan_of(v, input, c->span, c0, (int8_t)zp2);
    int8_t *out = output + c0;
    for (int32_t ol = 0, il = -v->pad_l; ol < out_lines; ol++, il += stride, out += out_line) {
        const int32_t *x[3];
        MCU_CMSIS_DW_UNROLL
        for (int32_t kl = 0, s = s0; kl < 3; kl++, s = s + dil >= slots ? s + dil - slots : s + dil) {
            int32_t *const line = lines + s * words;
            if (mcu_cmsis_dw_stale(tag + s, line, words, in_lines, il + kl * dil, zp2)) {
                mcu_cmsis_dw_build_pairs(&pl, il + kl * dil, line);
            }
            x[kl] = line;
        }
        mcu_cmsis_dw_pair_line_mode(x[0], x[1], x[2], w, out, out_pos, S, RELU);
        s0 += stride;
        while (s0 >= slots) {
            s0 -= slots;
        }
    }
}

/** How the stride-1 line sweep builds a line (mcu_cmsis_dw_build_pairs_s1), from the group's plan
    (mcu_cmsis_dw_pair_plan, a position inside): bytes between positions, the inside pairs, whether
    a front (bit 0) and a back (bit 1) edge pair, the zero point's four bytes. */
struct mcu_cmsis_dw_row_job {
    int32_t step, n, flags, zq;
};

#if defined(MCU_CMSIS_DW_ASM)
/* four pixels' words (at r0, r0 + r2, r0 + 2 r2, r0 + r10; r0 advanced past them) packed into the
   pairs at r1 + LO and r1 + HI */
#define MCU_CMSIS_DW_PACK4(LO, HI)                                                                                \
    "ldr r6, [r0]\n\t"                                                                                           \
    "ldr r7, [r0, r2]\n\t"                                                                                       \
    "ldr r3, [r0, r2, lsl #1]\n\t"                                                                               \
    "ldr r9, [r0, r10]\n\t"                                                                                      \
    "add r0, r0, r2, lsl #2\n\t" MCU_CMSIS_DW_PACK_REGS("r6", "r7", "r8", "r12", "r1", LO)                       \
        MCU_CMSIS_DW_PACK_REGS("r3", "r9", "r8", "r12", "r1", HI)
/** A line inside the input into the pair layout (x: its position `first`, line: its pair elo) in one
    routine: the front edge pair (the zero point and x), the inside pairs (one, two, then four at a
    time, the loads of four positions back to back), the back edge pair (the next position and the
    zero point), the positions read one after the other: mcu_cmsis_dw_build_pairs's plan look-ups
    and calls gone. r0 x, r1 line, r2 step, r3 the pairs (then a temporary), r4 flags, r5 zq, r6 r7
    r9 a pair's words, r8 r12 the packing's temporaries, r10 3 * step, lr the loop's count. */
__attribute__((naked, noinline)) static void mcu_cmsis_dw_build_pairs_s1(const int8_t *x, int32_t *line,
                                                                         const struct mcu_cmsis_dw_row_job *job)
{
    (void)x, (void)line, (void)job;
    __asm__ volatile("push {r4-r10, lr}\n\t"
                     "ldm r2, {r2-r5}\n\t"
                     "tst r4, #1\n\t"
                     "beq 1f\n\t"
                     "ldr r7, [r0]\n\t"
                     "add r0, r0, r2\n\t"
                     "mov r6, r5\n\t"
                     MCU_CMSIS_DW_PACK_REGS("r6", "r7", "r8", "r12", "r1", 0)
                     "add r1, r1, #16\n\t"
                     "1:\n\t"
                     "add r10, r2, r2, lsl #1\n\t"
                     "lsrs lr, r3, #1\n\t" /* n / 2, carry n & 1 */
                     "bcc 2f\n\t"
                     "ldr r6, [r0]\n\t"
                     "ldr r7, [r0, r2]\n\t"
                     "add r0, r0, r2, lsl #1\n\t"
                     MCU_CMSIS_DW_PACK_REGS("r6", "r7", "r8", "r12", "r1", 0)
                     "add r1, r1, #16\n\t"
                     "2:\n\t"
                     "lsrs lr, lr, #1\n\t" /* n / 4, carry n & 2 */
                     "bcc 3f\n\t"
                     MCU_CMSIS_DW_PACK4(0, 16)
                     "add r1, r1, #32\n\t"
                     "3:\n\t"
                     "cmp lr, #0\n\t"
                     "beq 5f\n\t"
                     "4:\n\t"
                     MCU_CMSIS_DW_PACK4(0, 16)
                     MCU_CMSIS_DW_PACK4(32, 48)
                     "add r1, r1, #64\n\t"
                     "subs lr, lr, #1\n\t"
                     "bne 4b\n\t"
                     "5:\n\t"
                     "tst r4, #2\n\t"
                     "beq 6f\n\t"
                     "ldr r6, [r0]\n\t"
                     "mov r7, r5\n\t"
                     MCU_CMSIS_DW_PACK_REGS("r6", "r7", "r8", "r12", "r1", 0)
                     "6:\n\t"
                     "pop {r4-r10, pc}\n\t");
}
#else
/** The C model of the routine above. */
__attribute__((noinline)) static void mcu_cmsis_dw_build_pairs_s1(const int8_t *x, int32_t *line,
                                                                  const struct mcu_cmsis_dw_row_job *job)
{
    const int32_t step = job->step;
    if (job->flags & 1) {
        mcu_cmsis_dw_pack_pairs(job->zq, mcu_read_s8x4(x), line);
        x += step;
        line += 4;
    }
    for (int32_t j = 0; j < job->n; j++, x += 2 * step, line += 4) {
        mcu_cmsis_dw_pack_pairs(mcu_read_s8x4(x), mcu_read_s8x4(x + step), line);
    }
    if (job->flags & 2) {
        mcu_cmsis_dw_pack_pairs(mcu_read_s8x4(x), job->zq, line);
    }
}
#endif

/** What the stride-1 line sweep's lines share in a group: the cache, the plan and the builder's job. */
struct mcu_cmsis_dw_s1_lines {
    const mcu_cmsis_dw_cache *c;
    mcu_cmsis_dw_pair_plan pl;
    struct mcu_cmsis_dw_row_job job;
    int32_t in_lines, zp2, own; /* own: a position inside, mcu_cmsis_dw_build_pairs_s1 (else _build_pairs) */
};

/** The cached line of input line r (slot r mod slots), built if stale (mcu_cmsis_dw_stale). Not
    inlined: the line loop keeps its registers. */
__attribute__((noinline)) static int32_t *mcu_cmsis_dw_s1_line(const struct mcu_cmsis_dw_s1_lines *k, int32_t r)
{
    const mcu_cmsis_dw_cache *c = k->c;
    const int32_t slot = (r % c->slots + c->slots) % c->slots;
    int32_t *const line = c->lines + slot * c->words;
    if (mcu_cmsis_dw_stale(c->tag + slot, line, c->words, k->in_lines, r, k->zp2)) {
        if (k->own) {
            mcu_cmsis_dw_build_pairs_s1(k->pl.base + r * k->pl.in_line, line + 4 * k->pl.elo, &k->job);
        } else {
            mcu_cmsis_dw_build_pairs(&k->pl, r, line);
        }
    }
    return line;
}

/** Every output line of a full group in the pair layout, stride 1 along them (the cached line of
    input line r slot r mod slots, tagged, as mcu_cmsis_dw_pairs_group_mode), its lines by
    mcu_cmsis_dw_s1_line: stride 1 across the lines too and undilated (every 3x3/1 layer), the
    three cached lines rotate as the output lines advance, one new input line a line; else each
    line's three. The same reads and writes in the same order as mcu_cmsis_dw_pairs_group_mode (the
    overlaps planner/overlap.py proves hold), the line's set-up and build cheaper: VWW's 48x48x8,
    24x24x32 and 12x12x64 layers 400,777 / 432,017 / 250,441 -> 395,353 / 421,643 / 242,555
    estimated M4 cycles, KWS's 25x5x64 208,067 -> 206,035 each, +384 B code. The blocks themselves
    (18.4 cycles an output) are near what this layout allows: per channel and four pixels 24
    multiply-accumulates, 20 requantization instructions and 20 loads, each load but the first of
    a run one cycle; two output lines a pass would share a pair word between them (29 loads for
    eight outputs instead of 40) but need a fourth cached line (scratch: KWS's arena is its
    depthwise layers' 8,000 B + 964 B of it) and more registers than the M4 has (eight
    accumulators, two weights, two pair words, four line pointers, w, out). */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_pairs_group_s1_mode(
    const mcu_cmsis_dw_view *v, const int8_t *input, int8_t *output, const mcu_cmsis_dw_cache *c, int32_t *w,
    int32_t c0, int32_t zp2, const int RELU)
{
    const int32_t in_lines = v->in_lines, out_lines = v->out_lines, out_line = v->out_line, out_pos = v->out_pos;
    const int32_t dil = v->dil_l, stride = v->stride_l;
    const int rotate = stride == 1 && dil == 1;
    for (int32_t s = 0; s < c->slots; s++) { /* as mcu_cmsis_dw_group_lines */
        c->tag[s] = c->tag[s] >= 0 && c->tag[s] < in_lines ? INT32_MIN : c->tag[s];
    }
    struct mcu_cmsis_dw_s1_lines k;
    k.c = c;
    k.pl = mcu_cmsis_dw_pair_plan_of(v, input, c->span, c0, (int8_t)zp2);
    const struct mcu_cmsis_dw_row_job job = {k.pl.step, k.pl.hi - k.pl.lo,
                                             (k.pl.elo < k.pl.lo) | (k.pl.hi < k.pl.ehi) << 1, k.pl.zq};
    k.job = job;
    k.in_lines = in_lines;
    k.zp2 = zp2;
    k.own = k.pl.first < k.pl.last;
    const int32_t *x0 = NULL, *x1 = NULL, *x2 = NULL;
    int8_t *out = output + c0;
    for (int32_t ol = 0, r = -v->pad_l; ol < out_lines; ol++, r += stride, out += out_line) {
        if (rotate && ol > 0) { /* input lines r, r + 1 cached for the line before */
            x0 = x1;
            x1 = x2;
        } else {
            x0 = mcu_cmsis_dw_s1_line(&k, r);
            x1 = mcu_cmsis_dw_s1_line(&k, r + dil);
        }
        x2 = mcu_cmsis_dw_s1_line(&k, r + 2 * dil);
        mcu_cmsis_dw_pair_line_mode(x0, x1, x2, w, out, out_pos, 1, RELU);
    }
}

/* The group sweeps by stride, with the rounding correction of negative accumulators and without it
   (_relu: ReLU-like layers, mcu_cmsis_dw_rq2_mode; one cycle an output less: VWW's 48x48x8 and
   24x24x16 / 2 layers 395,353 / 293,669 -> 376,846 / 284,478 est. M4 cycles, KWS's 25x5x64 206,035 ->
   198,129 each; a build carries only the variant its layers take, mcu_cmsis_dw_pairs_built). */
#define MCU_CMSIS_DW_PAIRS_GROUP_INSTANCE(name, S, RELU)                                                             \
    __attribute__((noinline)) static void name(const mcu_cmsis_dw_view *v, const int8_t *input, int8_t *output,     \
                                               const mcu_cmsis_dw_cache *c, int32_t *w, int32_t c0, int32_t zp2)      \
    {                                                                                                                 \
        if (S == 1) {                                                                                                 \
            mcu_cmsis_dw_pairs_group_s1_mode(v, input, output, c, w, c0, zp2, RELU);                                  \
        } else {                                                                                                      \
            mcu_cmsis_dw_pairs_group_mode(v, input, output, c, w, c0, zp2, 2, RELU);                                  \
        }                                                                                                             \
    }
MCU_CMSIS_DW_PAIRS_GROUP_INSTANCE(mcu_cmsis_dw_pairs_group_s1, 1, 0)
MCU_CMSIS_DW_PAIRS_GROUP_INSTANCE(mcu_cmsis_dw_pairs_group_s2, 2, 0)
MCU_CMSIS_DW_PAIRS_GROUP_INSTANCE(mcu_cmsis_dw_pairs_group_s1_relu, 1, 1)
MCU_CMSIS_DW_PAIRS_GROUP_INSTANCE(mcu_cmsis_dw_pairs_group_s2_relu, 2, 1)

/** Whether the pair layout's routines the layer takes are in the build (mcu_cmsis_paths.h): those
    without the rounding correction of negative accumulators for a ReLU-like layer (output offset
    at or below the clamp's minimum, PAIR_RELU; else the ones with it, PAIR_SIGNED, exact too), the
    others for any other layer (PAIR_SIGNED). */
static inline int mcu_cmsis_dw_pairs_built(const mcu_cmsis_dw_conv_params *p)
{
    return (p->output_offset <= p->act_min && MCU_PATH_PAIR_RELU) || MCU_PATH_PAIR_SIGNED;
}

/** Every group of a layer the pair layout takes (mcu_cmsis_dwconv_dsp): full groups in it, a
    partial last group in the lane pairs (mcu_cmsis_dw_group_any, with its own tags). */
__attribute__((noinline)) static void mcu_cmsis_dw_dsp_pairs(const mcu_cmsis_dw_conv_params *p,
                                                             const mcu_cmsis_dw_view *v, const int8_t *input,
                                                             const int8_t *weights, const int32_t *folded_bias,
                                                             const int32_t *rq, int32_t *scratch, int8_t *output)
{
    mcu_cmsis_dw_cache c = mcu_cmsis_dw_cache_at(v, scratch);
    int32_t *const w = mcu_cmsis_dw_pairs_at(&c, scratch);
    const int32_t out_c = p->out_c, zp = -p->input_offset, zp2 = mcu_pkhbt16(zp, zp);
    for (int32_t s = 0; s < c.slots; s++) {
        c.tag[s] = INT32_MIN;
    }
    const mcu_cmsis_dw_pair_plan pl = mcu_cmsis_dw_pair_plan_of(v, input, c.span, 0, zp);
    for (int32_t s = 0; s < c.slots; s++) { /* the pairs outside the input, once */
        mcu_cmsis_dw_fill(c.lines + s * c.words, 0, 2 * pl.elo, zp2);
        mcu_cmsis_dw_fill(c.lines + s * c.words, 2 * pl.ehi, c.words / 2, zp2);
    }
    int32_t c0 = 0;
    w[MCU_CMSIS_DW_PAIR_STEP] = v->out_step;
    const int s1 = MCU_PATH_DW_PAIRS_S1 && (!MCU_PATH_DW_PAIRS_S2 || v->stride_p == 1); /* mcu_cmsis_paths.h */
    const int relu = p->output_offset <= p->act_min && MCU_PATH_PAIR_RELU; /* mcu_cmsis_dw_pairs_built */
    for (; c0 + 4 <= out_c; c0 += 4) {
        mcu_cmsis_dw_pair_weights(p, weights, folded_bias, rq, c0, w);
        if (relu) { /* direct calls, each routine only where the build carries it */
            if (s1) {
                mcu_cmsis_dw_pairs_group_s1_relu(v, input, output, &c, w, c0, zp2);
            } else {
                mcu_cmsis_dw_pairs_group_s2_relu(v, input, output, &c, w, c0, zp2);
            }
        } else if (MCU_PATH_PAIR_SIGNED) {
            if (s1) {
                mcu_cmsis_dw_pairs_group_s1(v, input, output, &c, w, c0, zp2);
            } else {
                mcu_cmsis_dw_pairs_group_s2(v, input, output, &c, w, c0, zp2);
            }
        }
    }
    if (c0 < out_c) {
        const mcu_cmsis_dw_cache lanes = mcu_cmsis_dw_cache_at(v, scratch);
        int32_t folded[4];
        mcu_cmsis_dw_blocks b = {p, &lanes, folded, NULL, NULL, rq, c0, out_c - c0, v->out_step, 2, 2};
        for (int32_t s = 0; s < lanes.slots; s++) {
            lanes.tag[s] = INT32_MIN;
        }
        mcu_cmsis_dw_group_weights(p, weights, folded_bias, c0, b.n, 1, &lanes, folded);
        mcu_cmsis_dw_group_any(v, input, output, &b, zp2, 1);
    }
}

/** Every group. K3S (compile time): see mcu_cmsis_dw_taps. */
__attribute__((always_inline)) static inline void mcu_cmsis_dw_dsp_mode(
    const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights, const int32_t *folded_bias,
    const int32_t *multiplier, const int32_t *shift, const int32_t *rq, int32_t *scratch, int8_t *output,
    const int K3S, const int FAST)
{
    mcu_cmsis_dw_view v;
    mcu_cmsis_dw_view_of(p, &v);
    const mcu_cmsis_dw_cache c = mcu_cmsis_dw_cache_at(&v, scratch);
    const int32_t out_c = p->out_c, sp = K3S ? K3S : v.stride_p;
    const int32_t zp = -p->input_offset, zp2 = mcu_pkhbt16(zp, zp);
    mcu_cmsis_dw_blocks b = {p, &c, NULL, multiplier, shift, rq, 0, 0, v.out_step, 2 * sp, 2 * v.dil_p};
    int32_t folded[4];
    b.folded = folded;
    for (int32_t s = 0; s < c.slots; s++) {
        c.tag[s] = INT32_MIN; /* unknown (-1 is the line of padding above the input) */
    }
    for (int32_t c0 = 0; c0 < out_c; c0 += 4) {
        b.c0 = c0;
        b.n = out_c - c0 < 4 ? out_c - c0 : 4;
        mcu_cmsis_dw_group_weights(p, weights, folded_bias, c0, b.n, rq != NULL, &c, folded);
        if (K3S && b.n < 4) {
            mcu_cmsis_dw_group_any(&v, input, output, &b, zp2, FAST);
            continue;
        }
#if defined(MCU_CMSIS_DW_ASM)
        if (K3S && FAST) { /* the assembly's job: folded biases, records, output step */
            for (int32_t lane = 0; lane < 2; lane++) {
                int32_t *job = c.lane[lane] - 3 - MCU_CMSIS_DW_JOB_WORDS;
                job[4] = folded[lane];
                job[5] = folded[lane + 2];
                job[6] = (int32_t)(uintptr_t)(rq + 3 * (c0 + lane));
                job[8] = v.out_step;
            }
        }
#endif
        if (K3S) {
            mcu_cmsis_dw_group_lines(&v, input, output, &b, zp2, K3S, FAST);
        } else {
            mcu_cmsis_dw_group_any(&v, input, output, &b, zp2, FAST);
        }
    }
}

/* One instance per specialization, none inlined into another. */
#define MCU_CMSIS_DW_DSP_INSTANCE(name, K3S, FAST)                                                                   \
    __attribute__((noinline)) static void name(const mcu_cmsis_dw_conv_params *p, const int8_t *input,              \
                                               const int8_t *weights, const int32_t *folded_bias,                     \
                                               const int32_t *multiplier, const int32_t *shift, const int32_t *rq,    \
                                               int32_t *scratch, int8_t *output)                                      \
    {                                                                                                                 \
        mcu_cmsis_dw_dsp_mode(p, input, weights, folded_bias, multiplier, shift, rq, scratch, output, K3S, FAST);     \
    }
MCU_CMSIS_DW_DSP_INSTANCE(mcu_cmsis_dw_dsp_3x3_s1_fast, 1, 1)
MCU_CMSIS_DW_DSP_INSTANCE(mcu_cmsis_dw_dsp_3x3_s2_fast, 2, 1)
MCU_CMSIS_DW_DSP_INSTANCE(mcu_cmsis_dw_dsp_any_fast, 0, 1)
MCU_CMSIS_DW_DSP_INSTANCE(mcu_cmsis_dw_dsp_any, 0, 0)

static inline void mcu_cmsis_dwconv_dsp(const mcu_cmsis_dw_conv_params *p, const int8_t *input, const int8_t *weights,
                                        const int32_t *bias, const int32_t *folded_bias, const int32_t *multiplier,
                                        const int32_t *shift, const int32_t *rq, int32_t *scratch, int8_t *output)
{
    const int fast = rq != NULL && p->act_min == -128 && p->act_max == 127;
    /* each path taken only where the build carries it (mcu_cmsis_paths.h); one input channel
       without its path: the plain pixel loop (no lag on that sweep, so no ring) */
    if (p->sweep == MCU_CMSIS_DW_SWEEP_PIXELS || (!MCU_PATH_DW_IN1 && p->sweep == MCU_CMSIS_DW_SWEEP_ONE_INPUT)) {
        if (MCU_PATH_DW_PIX3 && p->sweep == MCU_CMSIS_DW_SWEEP_PIXELS && p->k_h == 3 && p->k_w == 3 &&
            p->dil_h == 1 && p->dil_w == 1 && p->depth_multiplier == 1) {
            mcu_cmsis_dw3x3_dsp(p, input, weights, bias, folded_bias, multiplier, shift, rq, scratch, output, fast);
            return; /* as the planner sets it: mcu_cmsis_dw3x3_dsp.h */
        }
        int8_t *const ring = mcu_cmsis_dw_ring(scratch, MCU_CMSIS_DWCONV2D_S8_PIXELS_SCRATCH_BYTES(
                                                           p->k_h, p->k_w, p->out_c, p->in_c)); /* with a lag */
        for (int32_t oy = 0; oy < p->out_h; oy++) { /* else the plain C path, which needs no other scratch */
            for (int32_t ox = 0; ox < p->out_w; ox++) {
                mcu_cmsis_dw_pixel(p, input, weights, bias, multiplier, shift, oy, ox,
                                   mcu_cmsis_dw_lag_out(p, ring, output, oy * p->out_w + ox));
            }
        }
        if (p->lag > 0) {
            mcu_cmsis_dw_lag_flush(p, ring, output);
        }
        return;
    }
    if (p->sweep == MCU_CMSIS_DW_SWEEP_ONE_INPUT) { /* mcu_cmsis_dwconv_in1_dsp.h */
        mcu_cmsis_dw_in1_dsp(p, input, weights, folded_bias, multiplier, shift, rq, scratch, output);
        return;
    }
    mcu_cmsis_dw_view v;
    mcu_cmsis_dw_view_of(p, &v);
    const int k3 = v.k_l == 3 && v.k_p == 3 && v.dil_p == 1;
    if (k3 && fast && ((MCU_PATH_DW_PAIRS_S1 && v.stride_p == 1) || (MCU_PATH_DW_PAIRS_S2 && v.stride_p == 2)) &&
        p->depth_multiplier == 1 && v.out_pos >= 4 && mcu_cmsis_dw_pairs_built(p)) {
        mcu_cmsis_dw_cache c = mcu_cmsis_dw_cache_at(&v, scratch);
        if (mcu_cmsis_dw_pairs_fit(&v, &c, p->in_c)) {
            mcu_cmsis_dw_dsp_pairs(p, &v, input, weights, folded_bias, rq, scratch, output); /* the pair layout */
            return;
        }
    }
    if (MCU_PATH_DW_K3S1 && k3 && fast && v.stride_p == 1) {
        mcu_cmsis_dw_dsp_3x3_s1_fast(p, input, weights, folded_bias, multiplier, shift, rq, scratch, output);
    } else if (MCU_PATH_DW_K3S2 && k3 && fast && v.stride_p == 2) {
        mcu_cmsis_dw_dsp_3x3_s2_fast(p, input, weights, folded_bias, multiplier, shift, rq, scratch, output);
    } else if (MCU_PATH_DW_ANY_FAST && fast) {
        mcu_cmsis_dw_dsp_any_fast(p, input, weights, folded_bias, multiplier, shift, rq, scratch, output);
    } else {
        mcu_cmsis_dw_dsp_any(p, input, weights, folded_bias, multiplier, shift, rq, scratch, output);
    }
}

#endif /* MCU_CMSIS_USE_DSP && !MCU_CMSIS_USE_MVE */

#endif /* MCU_CMSIS_DWCONV_DSP_H */
