/*
 * int8 convolution through im2col (any filter, stride, dilation, padding).
 *
 * For each output pixel, its receptive field is copied into a column of K = k_h * k_w * in_c values
 * (padding taps read the input zero point, which adds nothing once the bias is folded), then every
 * output channel's filter row (OHWI weights in the pair layout) is multiplied with it.
 *
 * DSP path: three pixels' columns widened into scratch (mcu_cmsis_pair_dsp.h: interleaved int16
 * pairs, straight from the input when in_c % 4 == 0 or, for 3x3 windows over three channels (the
 * first layers; their weights in the wide layout), when the block's three windows lie wholly inside
 * the input; else through one int8 column), then two output channels x three pixels per step. With
 * the wide layout the columns are put in its order (mcu_pair_put4_lanes, or mcu_pair_wide_order
 * after the common widening). Scratch: the widened block (6 * K4
 * bytes), then the int8 column (K4 and 4 bytes of slack).
 *
 * MVE path: mcu_cmsis_gemm_mve.h (int8 columns, VMLADAVA over sixteen values; with K >= 16 two
 * pixels' columns one after the other and two pixels x four output channels per step).
 */
#define MCU_PAIR_CONV_DEFS /* this kernel may take the wide and offset pair layouts: mcu_cmsis_pair_dsp.h */
#include <string.h>

#include "mcu_cmsis_conv3_dsp.h"
#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_gemm_mve.h"
#include "mcu_cmsis_mve.h"
#include "mcu_cmsis_pair_dsp.h"
#include "mcu_kernels_cmsis_nn.h"


#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
/** n int8 values: two words at a time, then a word, then the last n % 4 bytes. */
static inline void copy_s8(const int8_t *src, int8_t *dst, int32_t n)
{
    for (; n >= 8; n -= 8, src += 8, dst += 8) {
        const int32_t a = mcu_read_s8x4(src), b = mcu_read_s8x4(src + 4);
        mcu_write_s8x4(dst, a);
        mcu_write_s8x4(dst + 4, b);
    }
    if (n >= 4) {
        mcu_write_s8x4(dst, mcu_read_s8x4(src));
        src += 4, dst += 4, n -= 4;
    }
    for (; n > 0; n--) {
        *dst++ = *src++;
    }
}

/** n int8 values v: a word at a time, then the last n % 4 bytes (no memset call: the rows are short,
    four bytes for a 10x4 one-channel filter). */
static inline void fill_s8(int8_t *dst, int8_t v, int32_t n)
{
    const int32_t v4 = (int32_t)((uint32_t)(uint8_t)v * 0x01010101u);
    for (; n >= 4; n -= 4, dst += 4) {
        mcu_write_s8x4(dst, v4);
    }
    if (n & 2) {
        dst[0] = v, dst[1] = v, dst += 2;
    }
    if (n & 1) {
        dst[0] = v;
    }
}

/** The receptive field of output pixel (oy, ox) as int8 values in [k_h][k_w][in_c] order, padded
    taps holding the input zero point (widened by widen_run); a window wholly inside the input
    without horizontal dilation is k_h copied rows. */
static __attribute__((noinline)) void im2col_s8(const mcu_cmsis_conv_params *p, const int8_t *input, int32_t oy,
                                               int32_t ox, int8_t *col)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c, k_h = p->k_h, k_w = p->k_w, dil_w = p->dil_w;
    const int8_t pad_value = (int8_t)(-p->input_offset);
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    const int32_t row = k_w * in_c;
    const int whole = dil_w == 1 && ix0 >= 0 && ix0 + k_w <= in_w; /* each filter row: one run of input */
    if (whole && iy0 >= 0 && iy0 + (k_h - 1) * p->dil_h < in_h) {
        const int32_t step = p->dil_h * in_w * in_c;
        const int8_t *src = input + (iy0 * in_w + ix0) * in_c;
        for (int32_t ky = 0; ky < k_h; ky++, col += row, src += step) {
            copy_s8(src, col, row);
        }
        return;
    }
    /* without horizontal dilation the taps inside a row are one run [lo, hi): the row padded (unless
       whole), that run copied over it */
    const int32_t lo = ix0 < 0 ? -ix0 : 0, hi = ix0 + k_w > in_w ? in_w - ix0 : k_w;
    for (int32_t ky = 0; ky < k_h; ky++, col += row) {
        const int32_t iy = iy0 + ky * p->dil_h;
        if (iy < 0 || iy >= in_h || !whole) {
            fill_s8(col, pad_value, row);
        }
        if (iy < 0 || iy >= in_h) {
            continue;
        }
        if (dil_w == 1) {
            if (lo < hi) {
                copy_s8(input + (iy * in_w + ix0 + lo) * in_c, col + lo * in_c, (hi - lo) * in_c);
            }
            continue;
        }
        for (int32_t kx = 0; kx < k_w; kx++) {
            const int32_t ix = ix0 + kx * dil_w;
            if (ix >= 0 && ix < in_w) {
                copy_s8(input + (iy * in_w + ix) * in_c, col + kx * in_c, in_c);
            }
        }
    }
}

/** n int8 values (a multiple of four) at src widened into column slot `slot` of the block, sixteen
    at a time, then eight, then four; sum: NULL or the column's running sum, lanes: the wide
    layout's order (mcu_pair_put4_of). */
static inline __attribute__((always_inline)) void widen_run_of(const int8_t *src, int32_t n, int32_t *slot,
                                                               int32_t *sum, const int lanes)
{
    for (; n >= 16; n -= 16, src += 16, slot += 8 * MCU_PAIR_COLUMNS) {
        const int32_t x0 = mcu_read_s8x4(src), x1 = mcu_read_s8x4(src + 4);
        const int32_t x2 = mcu_read_s8x4(src + 8), x3 = mcu_read_s8x4(src + 12);
        mcu_pair_put4_of(slot, x0, MCU_PAIR_COLUMNS, sum, lanes);
        mcu_pair_put4_of(slot + 2 * MCU_PAIR_COLUMNS, x1, MCU_PAIR_COLUMNS, sum, lanes);
        mcu_pair_put4_of(slot + 4 * MCU_PAIR_COLUMNS, x2, MCU_PAIR_COLUMNS, sum, lanes);
        mcu_pair_put4_of(slot + 6 * MCU_PAIR_COLUMNS, x3, MCU_PAIR_COLUMNS, sum, lanes);
    }
    if (n & 8) {
        const int32_t x0 = mcu_read_s8x4(src), x1 = mcu_read_s8x4(src + 4);
        mcu_pair_put4_of(slot, x0, MCU_PAIR_COLUMNS, sum, lanes);
        mcu_pair_put4_of(slot + 2 * MCU_PAIR_COLUMNS, x1, MCU_PAIR_COLUMNS, sum, lanes);
        src += 8, slot += 4 * MCU_PAIR_COLUMNS;
    }
    if (n & 4) {
        mcu_pair_put4_of(slot, mcu_read_s8x4(src), MCU_PAIR_COLUMNS, sum, lanes);
    }
}

/** widen_run_of in the order of the plain and offset layouts. */
static inline __attribute__((always_inline)) void widen_run(const int8_t *src, int32_t n, int32_t *slot,
                                                            int32_t *sum)
{
    widen_run_of(src, n, slot, sum, 0);
}

/** n values (a multiple of four) of the input zero point into column slot `slot`; sum as widen_run. */
static inline __attribute__((always_inline)) void widen_pad(int32_t pad4, int32_t n, int32_t *slot, int32_t *sum)
{
    for (int32_t i = 0; i < n; i += 4, slot += 2 * MCU_PAIR_COLUMNS) {
        mcu_pair_put4(slot, pad4, MCU_PAIR_COLUMNS, sum);
    }
}

/** What a 3x3 three-channel window's rows read of the layer, in locals (the int8 stores may alias
    the parameters): the input's size and the zero point in four lanes. */
struct window3 {
    int32_t in_w, in_h, dil_h, pad4;
};

static inline struct window3 window3_of(const mcu_cmsis_conv_params *p)
{
    const struct window3 w = {p->in_w, p->in_h, p->dil_h, mcu_splat_s8x4((int8_t)(-p->input_offset))};
    return w;
}

/** The 3x3 window over three channels (no horizontal dilation) at input row iy0, column ix0, across
    the input's left or right border: its 27 int8 values at d, [ky][kx][c], its rows `pitch` bytes
    apart, the taps outside the input holding the input zero point (each row filled with it, the
    run of taps inside copied over). */
static __attribute__((noinline)) void window_across(const struct window3 w, const int8_t *input, int32_t iy0,
                                                    int32_t ix0, int8_t *d, int32_t pitch)
{
    const int32_t lo = ix0 < 0 ? -ix0 : 0, hi = ix0 + 3 > w.in_w ? w.in_w - ix0 : 3;
    for (int32_t ky = 0, iy = iy0; ky < 3; ky++, iy += w.dil_h, d += pitch) {
        mcu_write_s8x4(d, w.pad4);
        mcu_write_s8x4(d + 4, w.pad4);
        d[8] = (int8_t)w.pad4;
        if ((uint32_t)iy < (uint32_t)w.in_h && lo < hi) { /* one to three taps of three bytes: LDRH / LDRB */
            const int8_t *const src = input + (iy * w.in_w + ix0 + lo) * 3;
            int8_t *const t = d + 3 * lo;
            memcpy(t, src, 3);
            if (lo + 1 < hi) {
                memcpy(t + 3, src + 3, 3);
            }
            if (lo + 2 < hi) {
                memcpy(t + 6, src + 6, 3);
            }
        }
    }
}

/** The 3x3 window over three channels (no horizontal dilation) at input row iy0, column ix0: its 27
    int8 values at d, [ky][kx][c], its rows `pitch` bytes apart, the taps outside the input holding
    the input zero point: with its three columns inside, each row inside copied as two words and a
    byte, each row outside filled with the zero point; else window_across. */
static inline __attribute__((always_inline)) void window_3x3x3_of(const struct window3 w, const int8_t *input,
                                                                  int32_t iy0, int32_t ix0, int8_t *d,
                                                                  const int32_t pitch)
{
    if (ix0 < 0 || ix0 + 3 > w.in_w) {
        window_across(w, input, iy0, ix0, d, pitch);
        return;
    }
    for (int32_t ky = 0, iy = iy0; ky < 3; ky++, iy += w.dil_h, d += pitch) {
        int32_t a = w.pad4, b = w.pad4;
        int8_t c = (int8_t)w.pad4;
        if ((uint32_t)iy < (uint32_t)w.in_h) {
            const int8_t *const src = input + (iy * w.in_w + ix0) * 3;
            a = mcu_read_s8x4(src), b = mcu_read_s8x4(src + 4), c = src[8];
        }
        mcu_write_s8x4(d, a);
        mcu_write_s8x4(d + 4, b);
        d[8] = c;
    }
}

/** window_3x3x3_of into the int8 column's stage (rows 9 bytes apart), for a window over the border. */
static __attribute__((noinline)) void window_3x3x3(const mcu_cmsis_conv_params *p, const int8_t *input, int32_t iy0,
                                                   int32_t ix0, int8_t *stage)
{
    window_3x3x3_of(window3_of(p), input, iy0, ix0, stage, 9);
}

/** The receptive field of output pixel (oy, ox) straight into column slot `slot` of the widened
    block (in_c a multiple of four: each tap fills whole groups); padded taps hold the zero point,
    a filter row wholly inside the input (no dilation across it) is one run. */
static inline __attribute__((always_inline)) void im2col_widened_body(const mcu_cmsis_conv_params *p,
                                                                      const int8_t *input, int32_t oy, int32_t ox,
                                                                      int32_t *slot, int32_t *sum)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c, k_w = p->k_w, dil_w = p->dil_w;
    const int32_t pad4 = mcu_splat_s8x4((int8_t)(-p->input_offset));
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    const int32_t row = k_w * in_c;
    const int whole = dil_w == 1 && ix0 >= 0 && ix0 + k_w <= in_w;
    for (int32_t ky = 0; ky < p->k_h; ky++, slot += row / 2 * MCU_PAIR_COLUMNS) {
        const int32_t iy = iy0 + ky * p->dil_h;
        if (iy < 0 || iy >= in_h) {
            widen_pad(pad4, row, slot, sum);
        } else if (whole) {
            widen_run(input + (iy * in_w + ix0) * in_c, row, slot, sum);
        } else {
            for (int32_t kx = 0; kx < k_w; kx++) {
                const int32_t ix = ix0 + kx * dil_w;
                int32_t *const tap = slot + kx * in_c / 2 * MCU_PAIR_COLUMNS;
                if (ix < 0 || ix >= in_w) {
                    widen_pad(pad4, in_c, tap, sum);
                } else {
                    widen_run(input + (iy * in_w + ix) * in_c, in_c, tap, sum);
                }
            }
        }
    }
}

/** What every pixel's window shares: a window starting at (iy0, ix0) with 0 <= ix0 <= x_max and 0
    <= iy0 <= y_max is wholly inside the input, its k_h filter rows runs of `row` values `step`
    bytes apart (x_max < 0 when the filter is dilated horizontally). With in_c % 4 != 0 its rows are
    copied `words` whole words each (the last word may read up to three values past the row: the
    input pixels right of the window, inside the input when ix0 <= x_max; and write them past the
    row, where the next row's copy or the column's zero-weight tail takes them). */
struct window {
    int32_t x_max, y_max, row, step, words;
};

/** k_h rows of W whole words each, `step` bytes apart at src, into the int8 column at d (`row`
    bytes apart). */
#define COPY_ROWS(W)                                                                                               \
    for (; k_h > 0; k_h--, src += step, d += row) {                                                               \
        for (int32_t i = 0; i < 4 * (W); i += 4) {                                                                \
            mcu_write_s8x4(d + i, mcu_read_s8x4(src + i));                                                        \
        }                                                                                                          \
    }

/** The k_h rows of an inside window, `words` whole words each, `step` bytes apart at src, into the
    int8 column at d (`row` bytes apart); rows of up to four words unrolled. */
static inline __attribute__((always_inline)) void copy_rows(const int8_t *src, int32_t step, int32_t k_h,
                                                            int32_t words, int32_t row, int8_t *d)
{
    switch (words) {
    case 1:
        COPY_ROWS(1)
        break;
    case 2:
        COPY_ROWS(2)
        break;
    case 3:
        COPY_ROWS(3)
        break;
    case 4:
        COPY_ROWS(4)
        break;
    default:
        COPY_ROWS(words)
        break;
    }
}

/** The 3x3 window of a three-channel input (K = 27, the usual first layer) wholly inside the input,
    its three rows of nine values `step` bytes apart at src, straight into column slot `slot` (no
    int8 stage; K4 = 28, the last value 0). Each row is read as three words, up to three values past
    its end: the pixel right of the window, inside the input (struct window's x_max). sum and
    lanes: mcu_pair_put4_of. */
static inline __attribute__((always_inline)) void widen_3x3x3(const int8_t *src, int32_t step, int32_t *slot,
                                                              int32_t *sum, const int lanes)
{
    const int8_t *const r1 = src + step, *const r2 = r1 + step;
    const uint32_t a2 = (uint32_t)mcu_read_s8x4(src + 8), b0 = (uint32_t)mcu_read_s8x4(r1);
    const uint32_t b2 = (uint32_t)mcu_read_s8x4(r1 + 7), c0 = (uint32_t)mcu_read_s8x4(r2);
    const uint32_t c2 = (uint32_t)mcu_read_s8x4(r2 + 6);
    /* little endian: value j of a group of four in bits 8j .. 8j + 7 */
    const int32_t c = MCU_PAIR_COLUMNS;
    mcu_pair_put4_of(slot, mcu_read_s8x4(src), c, sum, lanes);             /* row 0: 0..3 */
    mcu_pair_put4_of(slot + 2 * c, mcu_read_s8x4(src + 4), c, sum, lanes); /* 4..7 */
    mcu_pair_put4_of(slot + 4 * c, (int32_t)((a2 & 0xffu) | (b0 << 8)), c, sum, lanes);
    mcu_pair_put4_of(slot + 6 * c, mcu_read_s8x4(r1 + 3), c, sum, lanes); /* row 1: 3..6 */
    mcu_pair_put4_of(slot + 8 * c, (int32_t)((b2 & 0xffffu) | (c0 << 16)), c, sum, lanes);
    mcu_pair_put4_of(slot + 10 * c, mcu_read_s8x4(r2 + 2), c, sum, lanes); /* row 2: 2..5 */
    mcu_pair_put4_of(slot + 12 * c, (int32_t)(c2 & 0xffffffu), c, sum, lanes);
}

/** Output pixel (oy, ox)'s receptive field into column slot `slot` of the widened block: straight
    from the input rows when in_c % 4 == 0 or the window is 3x3 over three channels and inside the
    input (widen_3x3x3), else through `stage` (an int8 column of K4 values and 4
    bytes of slack; the values past K are set to 0: they meet zero weights). */
static inline __attribute__((always_inline)) void im2col_column_body(const mcu_cmsis_conv_params *p,
                                                                     const struct window *g, const int8_t *input,
                                                                     int32_t oy, int32_t ox, int32_t k, int32_t k4,
                                                                     int8_t *stage, int32_t *slot, int32_t *sum)
{
    /* the sum in a local: the column's stores cannot alias it */
    int32_t acc = 0, *const s = sum != NULL ? &acc : NULL;
    const int lanes = sum == NULL && p->pair_offset == MCU_CMSIS_PAIR_WIDE; /* the wide layout's order */
    const int32_t iy0 = oy * p->stride_h - p->pad_top, ix0 = ox * p->stride_w - p->pad_left;
    const int inside = ix0 >= 0 && ix0 <= g->x_max && iy0 >= 0 && iy0 <= g->y_max;
    if ((p->in_c & 3) == 0) {
        if (!inside) {
            im2col_widened_body(p, input, oy, ox, slot, s);
            if (lanes) {
                mcu_pair_wide_order(slot, k4);
            }
            if (sum != NULL) {
                *sum = acc;
            }
            return;
        }
        int32_t *const column = slot;
        const int8_t *src = input + (iy0 * p->in_w + ix0) * p->in_c;
        const int32_t row = g->row;
        for (int32_t ky = p->k_h; ky > 0; ky--, src += g->step, slot += row / 2 * MCU_PAIR_COLUMNS) {
            widen_run(src, row, slot, s);
        }
        if (lanes) {
            mcu_pair_wide_order(column, k4);
        }
        if (sum != NULL) {
            *sum = acc;
        }
        return;
    }
    /* a 3x3 three-channel window in a block direct_blocks did not take (across two rows, or a window
       of it over the border): inside, straight from the input rows; over the border (no horizontal
       dilation), its 27 values built in the stage first (window_3x3x3) */
    if (p->in_c == 3 && p->k_h == 3 && p->k_w == 3 && (inside || p->dil_w == 1)) {
        const int8_t *src = stage;
        int32_t step = 9;
        if (inside) {
            src = input + (iy0 * p->in_w + ix0) * 3, step = g->step;
        } else {
            window_3x3x3(p, input, iy0, ix0, stage);
        }
        if (lanes) {
            widen_3x3x3(src, step, slot, NULL, 1);
        } else {
            widen_3x3x3(src, step, slot, s, 0);
        }
    } else {
        if (inside) {
            copy_rows(input + (iy0 * p->in_w + ix0) * p->in_c, g->step, p->k_h, g->words, g->row, stage);
        } else {
            im2col_s8(p, input, oy, ox, stage);
        }
        if (k < k4) { /* the 1..3 values past K (and up to 3 bytes of the slack): one word, not a memset call */
            mcu_write_s8x4(stage + k, 0);
        }
        if (lanes) {
            widen_run_of(stage, k4, slot, NULL, 1);
        } else {
            widen_run(stage, k4, slot, s);
        }
    }
    if (sum != NULL) {
        *sum = acc;
    }
}

/* Not inlined: one copy for every layout (the offset layout's columns are no longer summed: it
   stores row a as it is, mcu_kernels_cmsis_nn.h). */
static __attribute__((noinline)) void im2col_column(const mcu_cmsis_conv_params *p, const struct window *g,
                                                    const int8_t *input, int32_t oy, int32_t ox, int32_t k,
                                                    int32_t k4, int8_t *stage, int32_t *slot)
{
    im2col_column_body(p, g, input, oy, ox, k, k4, stage, slot, NULL);
}
/** 1 where the windows are 3x3 over three channels (K = 27) and not dilated horizontally, the
    weights in the wide layout (the DSP ISA's for that K; the others' go the general way): the
    blocks whose three windows are wholly inside the input, along a row, take direct_blocks. */
static int direct_3x3x3(const mcu_cmsis_conv_params *p, const struct window *g)
{
    return p->in_c == 3 && p->k_h == 3 && p->k_w == 3 && g->x_max >= 0 && p->pair_offset == MCU_CMSIS_PAIR_WIDE;
}

/** The whole blocks of a 3x3 three-channel layer (direct_3x3x3) along one output row, every window
    wholly inside the input, from the window at src on (`advance` bytes from one window to the
    next): each block widened straight from the input rows in the wide layout's order
    (mcu_pair_put4_lanes), then its outputs (out_c bytes apart); on the fast path all of them in one
    call of the wide layout's assembly, which widens each block itself (job->rows). Not inlined, as
    the 1x1 kernel's dense_blocks. */
static __attribute__((noinline)) void direct_blocks(struct mcu_pair_gemm *gm, const int8_t *src, int32_t step,
                                                    int32_t advance, int32_t out_c, int32_t blocks, int8_t *out)
{
    int32_t *const col = (int32_t *)(void *)gm->col;
    static const int32_t no_sums[3] = {0, 0, 0}; /* the wide layout reads none */
#if MCU_PAIR_ASM
    if (gm->fast) { /* one call: the assembly widens each block's windows itself */
        mcu_conv3_blocks(gm, src, advance, step, blocks, out_c, out);
        return;
    }
#endif
    for (; blocks > 0; blocks--, src += 3 * advance, out += 3 * out_c) {
        widen_3x3x3(src, step, col, NULL, 1);
        widen_3x3x3(src + advance, step, col + 1, NULL, 1);
        widen_3x3x3(src + 2 * advance, step, col + 2, NULL, 1);
        mcu_pair_gemm_block(gm, no_sums, out, out + out_c, out + 2 * out_c);
    }
}

/** How many whole blocks from pixel n (at (y, x); pixels up to end) direct_blocks takes: those
    within output row y whose windows are all inside the input (struct window). */
static int32_t direct_run(const mcu_cmsis_conv_params *p, const struct window *g, int32_t n, int32_t end, int32_t y,
                          int32_t x)
{
    const int32_t iy0 = y * p->stride_h - p->pad_top, ix0 = x * p->stride_w - p->pad_left;
    if (iy0 < 0 || iy0 > g->y_max || ix0 < 0 || ix0 > g->x_max) {
        return 0;
    }
    int32_t last = (g->x_max + p->pad_left) / p->stride_w; /* the last output x whose window is inside */
    last = last < p->out_w - 1 ? last : p->out_w - 1;
    const int32_t in_row = (last - x + 1) / MCU_PAIR_COLUMNS, left = (end - n) / MCU_PAIR_COLUMNS;
    return in_row < left ? in_row : left;
}
#if MCU_PAIR_ASM
/** Where a block of three 3x3 three-channel windows that direct_blocks does not take (over the
    border, or across two output rows) is staged for the wide routine (staged_blocks): in the column
    block itself (K4 = 28: 168 bytes), from byte 84 on, row ky of window j at byte 27 ky + 9 j, 82
    bytes with the routine's reads past them. The routine stores group g of the widened block (bytes
    24 g .. 24 g + 23) only after loading it, and every later group reads from byte 84 + 4 (g + 1) on
    (rows 0 and 1) or 84 + 54 + 4 (g - 4) on (row 2): nothing is overwritten before it is read.
    A block along one output row stages the input under it there instead (region_3x3x3: at most 84
    bytes, stride_w <= 3; mcu_conv3_rows_asm widens into its own frame). */
#define STAGED_3X3X3 84

/** The input under a block of three 3x3 three-channel windows along one output row (no horizontal
    dilation; staged_blocks): input rows iy0 + dil_h ky, pixels ix0 .. ix0 + width - 1 (width = 2
    stride_w + 3), at d, each row's 3 width bytes right after the previous row's, the taps outside
    the input holding the zero point; the wide routine then reads the three windows 3 stride_w bytes
    apart, their rows 3 width bytes apart, up to byte 9 width (one byte past the rows, which meets a
    zero weight). One copy of the 63 bytes a stride-2 block covers, not three windows of 27 bytes
    each (window_3x3x3_of, the right border's through window_across): VWW's layer 0 stages the
    block at each row's right border and the last row's 16. */
static inline __attribute__((always_inline)) void region_3x3x3(const struct window3 w, const int8_t *input,
                                                               int32_t iy0, int32_t ix0, int32_t width, int8_t *d)
{
    const int32_t lo = ix0 < 0 ? -ix0 : 0, hi = ix0 + width > w.in_w ? w.in_w - ix0 : width;
    const int32_t n = 3 * width, a = lo < hi ? 3 * lo : n, b = lo < hi ? 3 * hi : n;
    const int32_t pad4 = w.pad4;
    for (int32_t ky = 0, iy = iy0; ky < 3; ky++, iy += w.dil_h, d += n) {
        /* the zero point in words (up to three bytes past the row: the next row's, which its own
           stores replace, or past the region: 9 width + 3 <= 84 bytes), the taps inside over it */
        if ((uint32_t)iy >= (uint32_t)w.in_h || a == b) { /* no tap of the row inside */
            for (int32_t i = 0; i < n; i += 4) {
                mcu_write_s8x4(d + i, pad4);
            }
            continue;
        }
        for (int32_t i = 0; i < a; i += 4) {
            mcu_write_s8x4(d + i, pad4);
        }
        for (int32_t i = b; i < n; i += 4) {
            mcu_write_s8x4(d + i, pad4);
        }
        const int8_t *src = input + (iy * w.in_w + ix0 + lo) * 3;
        int8_t *t = d + a;
        if (b - a == 3) { /* one tap inside */
            memcpy(t, src, 3);
            continue;
        }
        const int8_t *const last = src + (b - a - 4); /* whole words, the last one ending at b */
        for (; src < last; src += 4, t += 4) {
            mcu_write_s8x4(t, mcu_read_s8x4(src));
        }
        mcu_write_s8x4(t - (src - last), mcu_read_s8x4(last));
    }
}

/** 1 where staged_blocks takes the layer: 3x3 windows over three channels, not dilated
    horizontally, in the wide layout, on the fast path. */
static int staged_3x3x3(const mcu_cmsis_conv_params *p, const struct mcu_pair_gemm *gm)
{
    return p->in_c == 3 && p->k_h == 3 && p->k_w == 3 && p->dil_w == 1 && p->pair_offset == MCU_CMSIS_PAIR_WIDE &&
           gm->fast;
}

/** The whole blocks of a staged_3x3x3 layer from pixel first on (pixels up to end), each into
    output + (its first pixel - first) * out_c: the runs inside the input rows as direct_blocks
    takes them, every other block's three windows built at STAGED_3X3X3 in the column block
    (window_3x3x3_of), then one call of the wide
    routine, which widens them as it does a run's. Returns the first pixel not taken (a short last
    block's). */
static __attribute__((noinline)) int32_t staged_blocks(struct mcu_pair_gemm *gm, const mcu_cmsis_conv_params *p,
                                                       const struct window *g, const int8_t *input, int32_t first,
                                                       int32_t end, int8_t *output)
{
    const int32_t stride_h = p->stride_h, stride_w = p->stride_w, pad_top = p->pad_top, pad_left = p->pad_left;
    const int32_t out_w = p->out_w, out_c = p->out_c, in_w = p->in_w, step = g->step; /* locals: the stores may
                                                                                        alias p */
    const struct window3 w = window3_of(p);
    int8_t *const staged = (int8_t *)(void *)gm->col + STAGED_3X3X3;
    int32_t n = first, oy = first / out_w, ox = first % out_w; /* pixel n */
    while (n + MCU_PAIR_COLUMNS <= end) {
        const int32_t run = direct_run(p, g, n, end, oy, ox);
        if (run > 0) {
            const int32_t ix0 = ox * stride_w - pad_left, iy0 = oy * stride_h - pad_top;
            mcu_conv3_blocks(gm, input + (iy0 * in_w + ix0) * 3, 3 * stride_w, step, run, out_c,
                             output + (n - first) * out_c);
            n += MCU_PAIR_COLUMNS * run, ox += MCU_PAIR_COLUMNS * run;
            if (ox == out_w) { /* the next row may start a run */
                ox = 0, oy++;
                continue;
            }
            if (n + MCU_PAIR_COLUMNS > end) {
                break;
            }
        } /* else, or after a run within the row (it took every whole block it could): a staged block */
        if (ox + MCU_PAIR_COLUMNS <= out_w && stride_w <= 3) { /* along one row: the input under it once */
            const int32_t width = 2 * stride_w + 3;
            region_3x3x3(w, input, oy * stride_h - pad_top, ox * stride_w - pad_left, width, staged);
            mcu_conv3_blocks(gm, staged, 3 * stride_w, 3 * width, 1, out_c, output + (n - first) * out_c);
            n += MCU_PAIR_COLUMNS, ox += MCU_PAIR_COLUMNS;
            if (ox == out_w) {
                ox = 0, oy++;
            }
            continue;
        }
        for (int32_t j = 0; j < MCU_PAIR_COLUMNS; j++) {
            window_3x3x3_of(w, input, oy * stride_h - pad_top, ox * stride_w - pad_left, staged + 9 * j, 27);
            if (++ox == out_w) {
                ox = 0, oy++;
            }
        }
        mcu_conv3_blocks(gm, staged, 9, 27, 1, out_c, output + (n - first) * out_c);
        n += MCU_PAIR_COLUMNS;
    }
    return n;
}
#endif
#else
typedef int16_t col_t; /* the plain path's im2col values */

/** n input values into the column (int8 -> col_t, natural order). */
static void copy_values(const int8_t *src, col_t *dst, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        dst[i] = src[i];
    }
}

/** The receptive field of output pixel (oy, ox) as a column in [k_h][k_w][in_c] order. */
static void im2col(const mcu_cmsis_conv_params *p, const int8_t *input, int32_t oy, int32_t ox, col_t *col)
{
    const int32_t in_h = p->in_h, in_w = p->in_w, in_c = p->in_c;
    const int32_t k_h = p->k_h, k_w = p->k_w, dil_h = p->dil_h, dil_w = p->dil_w;
    const col_t pad_value = (col_t)(-p->input_offset);
    const int32_t iy0 = oy * p->stride_h - p->pad_top;
    const int32_t ix0 = ox * p->stride_w - p->pad_left;
    for (int32_t ky = 0; ky < k_h; ky++) {
        const int32_t iy = iy0 + ky * dil_h;
        for (int32_t kx = 0; kx < k_w; kx++, col += in_c) {
            const int32_t ix = ix0 + kx * dil_w;
            if (iy < 0 || iy >= in_h || ix < 0 || ix >= in_w) {
                for (int32_t c = 0; c < in_c; c++) {
                    col[c] = pad_value; /* the same value everywhere: its order does not matter */
                }
                continue;
            }
            const int8_t *src = input + (iy * in_w + ix) * in_c;
            copy_values(src, col, in_c);
        }
    }
}

/** sum col[i] * w_oc[i] for the row oc of the pair-layout weights. */
static int32_t dot(const col_t *col, const int8_t *weights, int32_t k, int32_t oc, int32_t offset)
{
    int32_t acc = 0;
    for (int32_t i = 0; i < k; i++) {
        acc += col[i] * mcu_cmsis_pair_weight(weights, k, oc, i, offset);
    }
    return acc;
}

/** out0 / out1 (out_c values each) from the columns col0 / col1 of K values. */
static void mat_mult_2cols(const mcu_cmsis_conv_params *p, const int8_t *weights, const int32_t *bias,
                           const int32_t *multiplier, const int32_t *shift, const col_t *col0, const col_t *col1,
                           int32_t k, int8_t *out0, int8_t *out1)
{
    const int32_t out_c = p->out_c;
    const int32_t out_offset = p->output_offset;
    const int32_t act_min = p->act_min;
    const int32_t act_max = p->act_max;
    for (int32_t oc = 0; oc < out_c; oc++) {
        const int32_t acc0 = bias[oc] + dot(col0, weights, k, oc, p->pair_offset);
        const int32_t acc1 = bias[oc] + dot(col1, weights, k, oc, p->pair_offset);
        out0[oc] = mcu_cmsis_requantize_s8(acc0, multiplier[oc], shift[oc], out_offset, act_min, act_max);
        out1[oc] = mcu_cmsis_requantize_s8(acc1, multiplier[oc], shift[oc], out_offset, act_min, act_max);
    }
}

/** The plain path: output pixels [first, end) two at a time (on Helium, the wide pair layout's: C
    lowered for the DSP ISA). */
static void plain_range(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights,
                        const int32_t *bias, const int32_t *multiplier, const int32_t *shift, int16_t *scratch,
                        int8_t *output, int32_t first, int32_t end)
{
    const int32_t k = p->k_h * p->k_w * p->in_c;
    const int32_t out_w = p->out_w, out_c = p->out_c;
    col_t *const col0 = (col_t *)scratch;
    col_t *const col1 = col0 + k;
    int32_t n = first;
    for (; n + 2 <= end; n += 2) {
        im2col(p, input, n / out_w, n % out_w, col0);
        im2col(p, input, (n + 1) / out_w, (n + 1) % out_w, col1);
        mat_mult_2cols(p, weights, bias, multiplier, shift, col0, col1, k, output + (n - first) * out_c,
                       output + (n + 1 - first) * out_c);
    }
    if (n < end) { /* an odd last pixel: both columns the same, both results written once */
        im2col(p, input, n / out_w, n % out_w, col0);
        int8_t *const out = output + (n - first) * out_c;
        mat_mult_2cols(p, weights, bias, multiplier, shift, col0, col0, k, out, out);
    }
}
#endif /* the DSP / plain paths' helpers */

void mcu_cmsis_conv2d_s8(const mcu_cmsis_conv_params *p, const int8_t *input, const int8_t *weights,
                         const int32_t *bias, const int32_t *multiplier, const int32_t *shift, const int32_t *rq,
                         int16_t *scratch, int8_t *output)
{
    /* pixels [first, end) of the output, pixel n written at output + (n - first) * out_c */
    const int32_t first = p->count > 0 ? p->first : 0;
    const int32_t end = p->count > 0 ? p->first + p->count : p->out_h * p->out_w;
#if defined(MCU_CMSIS_USE_MVE) /* Helium: mcu_cmsis_gemm_mve.h */
    (void)rq;
    if (p->pair_offset == MCU_CMSIS_PAIR_WIDE) { /* the DSP ISA's layout: no Helium kernel reads it */
        MCU_PATH_CHECK(MCU_PATH_MVE_WIDE);        /* mcu_cmsis_paths.h */
        plain_range(p, input, weights, bias, multiplier, shift, scratch, output, first, end);
        return;
    }
    mcu_cmsis_conv2d_s8_mve(p, input, weights, bias, multiplier, shift, (int8_t *)scratch, output, first, end);
#elif defined(MCU_CMSIS_USE_DSP)
    const int32_t k = p->k_h * p->k_w * p->in_c;
    const int32_t out_w = p->out_w;
    const int32_t out_c = p->out_c;
    int32_t n = first;
    const mcu_pair_out o = {out_c, p->output_offset, p->act_min, p->act_max, p->pair_offset};
    const int32_t k4 = mcu_pair_k4(k);
    int32_t *const col = (int32_t *)(void *)scratch; /* the widened block, then the int8 column */
    int8_t *const stage = (int8_t *)(col + 3 * k4 / 2);
    const int32_t row = p->k_w * p->in_c, words = (row + 3) / 4;
    const int32_t over = (p->in_c & 3) ? (4 * words - row + p->in_c - 1) / p->in_c : 0; /* pixels read past a row */
    const struct window g = {p->dil_w == 1 ? p->in_w - p->k_w - over : -1, p->in_h - 1 - (p->k_h - 1) * p->dil_h,
                             row, p->dil_h * p->in_w * p->in_c, words};
    const int direct = MCU_PATH_CONV_3X3X3 && direct_3x3x3(p, &g); /* mcu_cmsis_paths.h */
    struct mcu_pair_gemm gemm;
    mcu_pair_gemm_init(&gemm, &o, weights, k, bias, multiplier, shift, rq, col);
#if MCU_PAIR_ASM
    if (MCU_PATH_CONV_3X3X3 && staged_3x3x3(p, &gemm)) { /* its whole blocks in a loop of their own, any short last one below */
        n = staged_blocks(&gemm, p, &g, input, first, end, output);
    }
#endif
    int32_t oy = n / out_w, ox = n % out_w; /* pixel n */
    for (; n < end; n += MCU_PAIR_COLUMNS) {
        if (direct) {
            const int32_t run = direct_run(p, &g, n, end, oy, ox);
            if (run > 0) {
                const int32_t ix0 = ox * p->stride_w - p->pad_left, iy0 = oy * p->stride_h - p->pad_top;
                direct_blocks(&gemm, input + (iy0 * p->in_w + ix0) * 3, g.step, 3 * p->stride_w, out_c, run,
                              output + (n - first) * out_c);
                n += MCU_PAIR_COLUMNS * run;
                ox += MCU_PAIR_COLUMNS * run;
                if (ox == out_w) {
                    ox = 0, oy++;
                }
                if (n >= end) {
                    break;
                }
            }
        }
        /* a short last block: its last pixel again, computed twice into the same place */
        const int32_t n1 = n + 1 < end ? n + 1 : end - 1;
        const int32_t n2 = n + 2 < end ? n + 2 : end - 1;
        int32_t y = oy, x = ox;
        const int32_t sums[3] = {0, 0, 0}; /* unused (mcu_pair_dot3's) */
        const int offset = p->pair_offset == MCU_CMSIS_PAIR_OFFSET;
        for (int32_t j = 0; j < MCU_PAIR_COLUMNS; j++) {
            if (j > 0 && n + j < end && ++x == out_w) {
                x = 0, y++;
            }
            MCU_PATH_CHECK(offset ? MCU_PATH_CONV_OFFSET : MCU_PATH_CONV_COLUMN);
            im2col_column(p, &g, input, y, x, k, k4, stage, col + j);
        }
        if (++x == out_w) { /* the next block's first pixel */
            x = 0, y++;
        }
        oy = y, ox = x;
        mcu_pair_gemm_block(&gemm, sums, output + (n - first) * out_c, output + (n1 - first) * out_c,
                            output + (n2 - first) * out_c);
    }
#else
    (void)rq;
    plain_range(p, input, weights, bias, multiplier, shift, scratch, output, first, end);
#endif
}
