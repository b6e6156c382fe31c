/*
 * What the cmsis-nn 16x8 kernels (int16 activations, int8 weights) share: the output stage, the
 * weight and column layouts and the dot-product tiles (plain C, DSP and Helium).
 *
 * Exactness (TFLM's reference_integer_ops for int16, see ir/ops/_s16.py): products x * w are summed
 * exactly. The tiles sum `chunk` depth values in int32 (SMLAD / VMLADAVA); the code generator picks
 * chunk so that no partial sum of any output channel can leave the int32 range (32768 times the sum
 * of |w| over any chunk of the channel's row below 2^31), and partial sums are then added in int64.
 * Most layers need one chunk: the int64 sum is then never formed. With an int32 bias TFLM itself
 * sums in int32 (wrapping), and so does one chunk of any length here.
 *
 * Output stage, one record of four int32 per output channel (`rq`), computed at compile time, by the
 * layer's `mode`:
 *   MCU_CMSIS_S16_WIDE (int64 bias or none): {pre low, pre high, reduced, total}: out = (acc * reduced
 *     + pre) >> total, truncated to int32, where reduced is TFLM's multiplier rounded to Q0.15,
 *     total = 15 - shift and pre = bias * reduced + 2^(total - 1): TFLM's int64 requantization;
 *   MCU_CMSIS_S16_HIGH, the same arithmetic where every channel allows it: reduced and pre scaled by
 *     2^k, k = max(0, 32 - total), so that out = high word of (acc * reduced + pre), shifted right by
 *     max(0, total - 32): one SMLAL and one ASR;
 *   MCU_CMSIS_S16_ROUND, HIGH with no shift right where the bias joins the int32 sum without
 *     overflow (32768 times the sum of |w| plus |bias| below 2^31) and reduced << k is even:
 *     {bias, R, R / 2, 0} with R = reduced << k: out = (acc + bias) * R + 2^31, high word: one
 *     SMMULR (DSP), one VQRDMULH by R / 2 for four channels (Helium);
 *   MCU_CMSIS_S16_NARROW (int32 bias): {bias, multiplier, shift, 0}: out = requantize(acc + bias) in
 *     int32 (TFLM's double rounding).
 * Then the clamp, no output offset (TFLM's 16x8 kernels ignore zero points).
 *
 * Layouts (depth8 = the depth rounded up to a multiple of 8; padding is zeros):
 *   weights, tiles of T output channels (T = 2 for the convolution, 4 for the fully connected
 *   layer; a missing last channel is zeros): for every group of 8 depth values, 8 bytes of each
 *   channel of the tile in turn, the values in their natural order;
 *   columns (scratch), tiles of 2 (convolution) or 1 (fully connected) columns: the Helium build
 *   stores, for every group of 8, 8 int16 of each column in turn; the DSP build, for every run of
 *   4, 4 int16 of each column in turn as x0 x2 x1 x3, the order in which SXTB16 / SXTB16 ROR #8
 *   split a weight word, so that the tile is read in order two words (one LDRD) at a time.
 */
#ifndef MCU_CMSIS_S16_H
#define MCU_CMSIS_S16_H

#include <stdint.h>
#include <string.h>

#include "mcu_cmsis_dsp.h"
#include "mcu_cmsis_mve.h"
#include "mcuforge_fixedpoint.h"

/* ---- the output stage ----------------------------------------------------------------------------- */

static inline int16_t mcu_cmsis_s16_clamp(int32_t v, int32_t lo, int32_t hi)
{
    v = v < lo ? lo : v;
    return (int16_t)(v > hi ? hi : v);
}

/** The wide record's pre-rounded bias term as int64. */
static inline int64_t mcu_cmsis_s16_pre(const int32_t *rq)
{
    return (int64_t)(((uint64_t)(uint32_t)rq[1] << 32) | (uint32_t)rq[0]);
}

enum { MCU_CMSIS_S16_NARROW = 0, MCU_CMSIS_S16_WIDE = 1, MCU_CMSIS_S16_HIGH = 2, MCU_CMSIS_S16_ROUND = 3 };

/** ROUND records: the rounded high word of (acc + bias) * R (one SMMULR). */
static inline int32_t mcu_cmsis_s16_round(int32_t acc, const int32_t *rq)
{
#if defined(MCU_CMSIS_USE_DSP)
    return mcu_smmulr(acc + rq[0], rq[1]);
#else
    return (int32_t)(((int64_t)(acc + rq[0]) * rq[1] + ((int64_t)1 << 31)) >> 32);
#endif
}

/** HIGH records: the high word of acc * reduced + pre (one SMLAL), shifted right. */
static inline int32_t mcu_cmsis_s16_high(int32_t acc, const int32_t *rq)
{
#if defined(__ARM_ARCH_7EM__) || defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
    uint32_t lo = (uint32_t)rq[0];
    int32_t hi = rq[1];
    __asm__("smlal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(acc), "r"(rq[2]));
    return hi >> rq[3]; /* an SMLAL and an ASR: the compiler would merge the two shifts into one */
#else
    return (int32_t)(((int64_t)acc * rq[2] + mcu_cmsis_s16_pre(rq)) >> 32) >> rq[3];
#endif
}

/** An int32 sum (one chunk) through the channel's record. */
static inline int32_t mcu_cmsis_s16_out32(int32_t acc, const int32_t *rq, int32_t mode)
{
    if (mode == MCU_CMSIS_S16_ROUND) {
        return mcu_cmsis_s16_round(acc, rq);
    }
    if (mode == MCU_CMSIS_S16_HIGH) {
        return mcu_cmsis_s16_high(acc, rq);
    }
    if (mode == MCU_CMSIS_S16_WIDE) {
        return (int32_t)(((int64_t)acc * rq[2] + mcu_cmsis_s16_pre(rq)) >> rq[3]);
    }
    return mcu_requantize((int32_t)((uint32_t)acc + (uint32_t)rq[0]), rq[1], rq[2]);
}

/** An int64 sum (several chunks: WIDE or HIGH records) through the channel's record. */
static inline int32_t mcu_cmsis_s16_out64(int64_t acc, const int32_t *rq, int32_t mode)
{
    const int64_t x = acc * rq[2] + mcu_cmsis_s16_pre(rq);
    return mode == MCU_CMSIS_S16_HIGH ? (int32_t)(x >> 32) >> rq[3] : (int32_t)(x >> rq[3]);
}

#if defined(MCU_CMSIS_USE_DSP)
/** LDRD without write-back: two words at p (word aligned) into *a, *b. */
static inline void mcu_cmsis_s16_ldrd(const void *p, int32_t *a, int32_t *b)
{
#if defined(MCU_CMSIS_DSP_EMULATE)
    int32_t v[2];
    memcpy(v, p, sizeof v);
    *a = v[0];
    *b = v[1];
#else
    int32_t lo, hi;
    __asm__("ldrd %0, %1, [%2]" : "=r"(lo), "=r"(hi) : "r"(p), "m"(*(const int32_t(*)[2])p));
    *a = lo;
    *b = hi;
#endif
}

/** LDRD with post-increment by 16 bytes: two words at p (word aligned); returns p + 4. */
static inline const int32_t *mcu_cmsis_s16_ldrd_inc16(const int32_t *p, int32_t *a, int32_t *b)
{
#if defined(MCU_CMSIS_DSP_EMULATE)
    mcu_cmsis_s16_ldrd(p, a, b);
    return p + 4;
#else
    int32_t lo, hi;
    __asm__("ldrd %0, %1, [%2], #16" : "=&r"(lo), "=&r"(hi), "+r"(p) : "m"(*(const int32_t(*)[2])p));
    *a = lo;
    *b = hi;
    return p;
#endif
}
#endif

/* ---- columns --------------------------------------------------------------------------------------- */

/** Column j of a tile of `cols` columns from a natural-order column of depth8 values. Helium: for
    each group of 8, 8 values of each column in turn. DSP: for each run of 4, 4 values of each
    column in turn, stored as x0 x2 x1 x3 (so that the tile is read in order, two words at a time). */
static inline void mcu_cmsis_s16_put_column(const int16_t *src, int32_t depth8, int32_t cols, int32_t j,
                                            int16_t *tile)
{
#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE)
    int16_t *dst = tile + 4 * j;
    for (int32_t k = 0; k < depth8; k += 4, src += 4, dst += 4 * cols) {
        const int32_t lo = mcu_read_s16x2(src), hi = mcu_read_s16x2(src + 2); /* [x1:x0], [x3:x2] */
        mcu_write_s16x2(dst, mcu_pkhbt16(lo, hi));                             /* [x2:x0] */
        mcu_write_s16x2(dst + 2, mcu_pkhtb16(hi, lo));                         /* [x3:x1] */
    }
#else
    for (int32_t k = 0; k < depth8; k += 8) {
        memcpy(tile + k * cols + 8 * j, src + k, 8 * sizeof(int16_t));
    }
#endif
}

/* ---- the dot-product tiles: `groups` groups of 8 depth values, sums added to acc ------------------- */

#if defined(MCU_CMSIS_USE_MVE)
/** Two columns (x, interleaved) times two weight rows (w, interleaved): acc = {c0x0, c0x1, c1x0, c1x1}. */
static inline __attribute__((always_inline)) void mcu_cmsis_s16_dot2x2(const int16_t *x, const int8_t *w,
                                                                       int32_t groups, int32_t acc[4])
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    __asm__ volatile("dls lr, %[n]\n"
                     "1:\n\t"
                     "vldrb.s16 q0, [%[w]], #16\n\t"
                     "vldrh.16 q2, [%[x]], #32\n\t"
                     "vmladava.s16 %[a0], q0, q2\n\t"
                     "vldrh.16 q3, [%[x], #-16]\n\t"
                     "vmladava.s16 %[a1], q0, q3\n\t"
                     "vldrb.s16 q1, [%[w], #-8]\n\t"
                     "vmladava.s16 %[a2], q1, q2\n\t"
                     "vmladava.s16 %[a3], q1, q3\n\t"
                     "le lr, 1b\n"
                     : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3), [x] "+r"(x), [w] "+r"(w)
                     : [n] "r"(groups)
                     : "q0", "q1", "q2", "q3", "lr", "memory");
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

/** One column (x) times four weight rows (w, interleaved): acc = {c0, c1, c2, c3}. */
static inline __attribute__((always_inline)) void mcu_cmsis_s16_dot1x4(const int16_t *x, const int8_t *w,
                                                                       int32_t groups, int32_t acc[4])
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    __asm__ volatile("dls lr, %[n]\n"
                     "1:\n\t"
                     "vldrh.16 q0, [%[x]], #16\n\t"
                     "vldrb.s16 q1, [%[w]], #32\n\t"
                     "vmladava.s16 %[a0], q0, q1\n\t"
                     "vldrb.s16 q2, [%[w], #-24]\n\t"
                     "vmladava.s16 %[a1], q0, q2\n\t"
                     "vldrb.s16 q3, [%[w], #-16]\n\t"
                     "vmladava.s16 %[a2], q0, q3\n\t"
                     "vldrb.s16 q1, [%[w], #-8]\n\t"
                     "vmladava.s16 %[a3], q0, q1\n\t"
                     "le lr, 1b\n"
                     : [a0] "+Te"(a0), [a1] "+Te"(a1), [a2] "+Te"(a2), [a3] "+Te"(a3), [x] "+r"(x), [w] "+r"(w)
                     : [n] "r"(groups)
                     : "q0", "q1", "q2", "q3", "lr", "memory");
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

#elif defined(MCU_CMSIS_USE_DSP)
/** acc + a run of 4 (the split words x02 = [x2:x0], x13 = [x3:x1]) times the 4 weights of `word`. */
static inline int32_t mcu_cmsis_s16_mac4(int32_t word, int32_t x02, int32_t x13, int32_t acc)
{
    return mcu_smlad(mcu_sxtb16_ror8(word), x13, mcu_smlad(mcu_sxtb16(word), x02, acc));
}

/** One run of 4 of the 2x2 tile: both columns' words (LDRD each), each weight word split once. */
static inline const int32_t *mcu_cmsis_s16_run2x2(const int32_t *x, int32_t w0, int32_t w1, int32_t *a0, int32_t *a1,
                                                  int32_t *a2, int32_t *a3)
{
    int32_t p02, p13, q02, q13;
    x = mcu_ldrd_inc(x, &p02, &p13);
    x = mcu_ldrd_inc(x, &q02, &q13);
    const int32_t lo0 = mcu_sxtb16(w0), hi0 = mcu_sxtb16_ror8(w0);
    *a0 = mcu_smlad(hi0, p13, mcu_smlad(lo0, p02, *a0));
    *a1 = mcu_smlad(hi0, q13, mcu_smlad(lo0, q02, *a1));
    mcu_schedule_barrier();
    const int32_t lo1 = mcu_sxtb16(w1), hi1 = mcu_sxtb16_ror8(w1);
    *a2 = mcu_smlad(hi1, p13, mcu_smlad(lo1, p02, *a2));
    *a3 = mcu_smlad(hi1, q13, mcu_smlad(lo1, q02, *a3));
    mcu_schedule_barrier();
    return x;
}

static inline void mcu_cmsis_s16_dot2x2(const int16_t *x16, const int8_t *w, int32_t groups, int32_t acc[4])
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int32_t *x = (const int32_t *)(const void *)x16;
    for (; groups > 0; groups--, w += 16) {
        x = mcu_cmsis_s16_run2x2(x, mcu_read_s8x4(w), mcu_read_s8x4(w + 8), &a0, &a1, &a2, &a3);
        x = mcu_cmsis_s16_run2x2(x, mcu_read_s8x4(w + 4), mcu_read_s8x4(w + 12), &a0, &a1, &a2, &a3);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

/** One run of 4 of the 1x4 tile: the column's words (one LDRD) times the run's word of each row. */
static inline const int32_t *mcu_cmsis_s16_run1x4(const int32_t *x, const int8_t *w, int32_t *a0, int32_t *a1,
                                                  int32_t *a2, int32_t *a3)
{
    int32_t x02, x13;
    x = mcu_ldrd_inc(x, &x02, &x13);
    *a0 = mcu_cmsis_s16_mac4(mcu_read_s8x4(w), x02, x13, *a0);
    *a1 = mcu_cmsis_s16_mac4(mcu_read_s8x4(w + 8), x02, x13, *a1);
    mcu_schedule_barrier();
    *a2 = mcu_cmsis_s16_mac4(mcu_read_s8x4(w + 16), x02, x13, *a2);
    *a3 = mcu_cmsis_s16_mac4(mcu_read_s8x4(w + 24), x02, x13, *a3);
    mcu_schedule_barrier();
    return x;
}

static inline void mcu_cmsis_s16_dot1x4(const int16_t *x16, const int8_t *w, int32_t groups, int32_t acc[4])
{
    int32_t a0 = acc[0], a1 = acc[1], a2 = acc[2], a3 = acc[3];
    const int32_t *x = (const int32_t *)(const void *)x16;
    for (; groups > 0; groups--, w += 32) {
        x = mcu_cmsis_s16_run1x4(x, w, &a0, &a1, &a2, &a3);
        x = mcu_cmsis_s16_run1x4(x, w + 4, &a0, &a1, &a2, &a3);
    }
    acc[0] = a0, acc[1] = a1, acc[2] = a2, acc[3] = a3;
}

#else
/** Plain C: the columns and rows of a tile in the layouts above (natural order). */
static inline void mcu_cmsis_s16_dot(const int16_t *x, const int8_t *w, int32_t groups, int32_t cols, int32_t rows,
                                     int32_t acc[4])
{
    for (; groups > 0; groups--, x += 8 * cols, w += 8 * rows) {
        for (int32_t r = 0; r < rows; r++) {
            for (int32_t c = 0; c < cols; c++) {
                uint32_t sum = (uint32_t)acc[r * cols + c]; /* wraps as SMLAD does (int32 bias path) */
                for (int32_t i = 0; i < 8; i++) {
                    sum += (uint32_t)((int32_t)x[8 * c + i] * (int32_t)w[8 * r + i]);
                }
                acc[r * cols + c] = (int32_t)sum;
            }
        }
    }
}

static inline void mcu_cmsis_s16_dot2x2(const int16_t *x, const int8_t *w, int32_t groups, int32_t acc[4])
{
    mcu_cmsis_s16_dot(x, w, groups, 2, 2, acc);
}

static inline void mcu_cmsis_s16_dot1x4(const int16_t *x, const int8_t *w, int32_t groups, int32_t acc[4])
{
    mcu_cmsis_s16_dot(x, w, groups, 1, 4, acc);
}
#endif

/** A tile's sums over the whole depth: in int32 when one chunk covers it (sum32), else chunk by chunk
    into int64 (sum64). Returns 1 for sum32, 0 for sum64. x_group / w_group: the int16 / bytes of a
    group of 8 depth values in the columns / the weight rows. */
#define MCU_CMSIS_S16_TILE(name, dot, x_group, w_group)                                                     \
    static inline int32_t name(const int16_t *x, const int8_t *w, int32_t depth8, int32_t chunk, int32_t sum32[4], \
                               int64_t sum64[4])                                                            \
    {                                                                                                       \
        sum32[0] = sum32[1] = sum32[2] = sum32[3] = 0;                                                      \
        if (chunk >= depth8) {                                                                              \
            dot(x, w, depth8 / 8, sum32);                                                                   \
            return 1;                                                                                       \
        }                                                                                                   \
        sum64[0] = sum64[1] = sum64[2] = sum64[3] = 0;                                                      \
        for (int32_t k = 0; k < depth8; k += chunk) {                                                       \
            int32_t part[4] = {0, 0, 0, 0};                                                                 \
            dot(x + (k / 8) * (x_group), w + (k / 8) * (w_group), (depth8 - k < chunk ? depth8 - k : chunk) / 8, \
                part);                                                                                      \
            for (int32_t i = 0; i < 4; i++) {                                                               \
                sum64[i] += part[i];                                                                        \
            }                                                                                               \
        }                                                                                                   \
        return 0;                                                                                           \
    }

MCU_CMSIS_S16_TILE(mcu_cmsis_s16_tile2x2, mcu_cmsis_s16_dot2x2, 16, 16)
MCU_CMSIS_S16_TILE(mcu_cmsis_s16_tile1x4, mcu_cmsis_s16_dot1x4, 8, 32)

/** Four int32 sums (one chunk) of channels with consecutive records through them, clamped, into
    out[0], out[stride], out[2 * stride], out[3 * stride] (the first n of them). */
static inline void mcu_cmsis_s16_store4(const int32_t acc[4], const int32_t *rq, int32_t mode, int32_t lo, int32_t hi,
                                        int16_t *out, int32_t stride, int32_t n)
{
    if (mode == MCU_CMSIS_S16_ROUND && n == 4) {
#pragma GCC unroll 4
        for (int32_t i = 0; i < 4; i++) {
            out[i * stride] = mcu_cmsis_s16_clamp(mcu_cmsis_s16_round(acc[i], rq + 4 * i), lo, hi);
        }
        return;
    }
    if (mode == MCU_CMSIS_S16_HIGH && n == 4) {
#pragma GCC unroll 4
        for (int32_t i = 0; i < 4; i++) {
            out[i * stride] = mcu_cmsis_s16_clamp(mcu_cmsis_s16_high(acc[i], rq + 4 * i), lo, hi);
        }
        return;
    }
    for (int32_t i = 0; i < n; i++) {
        out[i * stride] = mcu_cmsis_s16_clamp(mcu_cmsis_s16_out32(acc[i], rq + 4 * i, mode), lo, hi);
    }
}

/** One output: sum i of the tile through the channel's record, clamped. */
static inline int16_t mcu_cmsis_s16_result(int32_t one_chunk, const int32_t sum32[4], const int64_t sum64[4],
                                           int32_t i, const int32_t *rq, int32_t mode, int32_t lo, int32_t hi)
{
    const int32_t v = one_chunk ? mcu_cmsis_s16_out32(sum32[i], rq, mode) : mcu_cmsis_s16_out64(sum64[i], rq, mode);
    return mcu_cmsis_s16_clamp(v, lo, hi);
}

#endif /* MCU_CMSIS_S16_H */
