/*
 * The Armv7E-M / Armv8-M DSP instructions the cmsis-nn kernels use, as inline functions.
 *
 * MCU_CMSIS_USE_DSP is defined when the SIMD paths are compiled:
 *   - on a core with the DSP extension (__ARM_FEATURE_DSP: Cortex-M4, M7, M33, M35P, M55, M85),
 *     each function is one instruction (inline assembly, not volatile: the compiler schedules it);
 *   - with -DMCU_CMSIS_DSP_EMULATE on any compiler, each function is a portable C model of the
 *     instruction, so the SIMD logic is tested on the host against the plain C path.
 *
 * Packed values are int32_t words holding two int16 lanes (bottom = bits 0..15, top = 16..31) or
 * four int8 lanes (byte 0 = lowest address, little endian). SMLAD/SMLABB/SMLATT/... accumulate with
 * two's-complement wrap-around (they only set the Q flag on overflow), as the C path's int32 sums.
 */
#ifndef MCU_CMSIS_DSP_H
#define MCU_CMSIS_DSP_H

#include <stdint.h>
#include <string.h>

#if (defined(__ARM_FEATURE_DSP) && !defined(__ARM_BIG_ENDIAN)) || defined(MCU_CMSIS_DSP_EMULATE)
#define MCU_CMSIS_USE_DSP 1 /* the lane layouts below are little-endian */
#endif

/** Four int8 values from any address (one LDR on cores with unaligned access). */
static inline int32_t mcu_read_s8x4(const int8_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

/** Two int16 values from any (even) address. */
static inline int32_t mcu_read_s16x2(const int16_t *p)
{
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static inline void mcu_write_s8x4(int8_t *p, int32_t v)
{
    memcpy(p, &v, 4);
}

static inline void mcu_write_s16x2(int16_t *p, int32_t v)
{
    memcpy(p, &v, 4);
}

/** A byte repeated in the four lanes. */
static inline int32_t mcu_splat_s8x4(int8_t v)
{
    return (int32_t)((uint32_t)(uint8_t)v * 0x01010101u);
}

#if defined(MCU_CMSIS_USE_DSP)
#if !defined(MCU_CMSIS_DSP_EMULATE)

/** No instruction: keeps the compiler from hoisting the loads and unpacking of several unrolled
    steps above each other (which needs more registers than the core has and spills to the stack). */
static inline void mcu_schedule_barrier(void)
{
    __asm__ volatile("");
}

/** SXTB16: bytes 0 and 2 sign-extended into the bottom and top halves. */
static inline int32_t mcu_sxtb16(int32_t x)
{
    int32_t r;
    __asm__("sxtb16 %0, %1" : "=r"(r) : "r"(x));
    return r;
}

/** SXTB16 ROR #8: bytes 1 and 3 sign-extended into the bottom and top halves. */
static inline int32_t mcu_sxtb16_ror8(int32_t x)
{
    int32_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
    return r;
}

/** UXTB16: bytes 0 and 2 zero-extended into the bottom and top halves. */
static inline int32_t mcu_uxtb16(int32_t x)
{
    int32_t r;
    __asm__("uxtb16 %0, %1" : "=r"(r) : "r"(x));
    return r;
}

/** SXTAB16: acc's halves plus bytes 0 and 2 of x, each lane wrapping in 16 bits. */
static inline int32_t mcu_sxtab16(int32_t acc, int32_t x)
{
    int32_t r;
    __asm__("sxtab16 %0, %1, %2" : "=r"(r) : "r"(acc), "r"(x));
    return r;
}

/** SXTAB16 ROR #8: acc's halves plus bytes 1 and 3 of x. */
static inline int32_t mcu_sxtab16_ror8(int32_t acc, int32_t x)
{
    int32_t r;
    __asm__("sxtab16 %0, %1, %2, ror #8" : "=r"(r) : "r"(acc), "r"(x));
    return r;
}

/** SMLAD: acc + bottom(x) * bottom(y) + top(x) * top(y). */
static inline int32_t mcu_smlad(int32_t x, int32_t y, int32_t acc)
{
    int32_t r;
    __asm__("smlad %0, %1, %2, %3" : "=r"(r) : "r"(x), "r"(y), "r"(acc));
    return r;
}

/** SMLABB: acc + bottom(x) * bottom(y). */
static inline int32_t mcu_smlabb(int32_t x, int32_t y, int32_t acc)
{
    int32_t r;
    __asm__("smlabb %0, %1, %2, %3" : "=r"(r) : "r"(x), "r"(y), "r"(acc));
    return r;
}

/** SMLATT: acc + top(x) * top(y). */
static inline int32_t mcu_smlatt(int32_t x, int32_t y, int32_t acc)
{
    int32_t r;
    __asm__("smlatt %0, %1, %2, %3" : "=r"(r) : "r"(x), "r"(y), "r"(acc));
    return r;
}

/** SMLABT: acc + bottom(x) * top(y). */
static inline int32_t mcu_smlabt(int32_t x, int32_t y, int32_t acc)
{
    int32_t r;
    __asm__("smlabt %0, %1, %2, %3" : "=r"(r) : "r"(x), "r"(y), "r"(acc));
    return r;
}

/** SMLATB: acc + top(x) * bottom(y). */
static inline int32_t mcu_smlatb(int32_t x, int32_t y, int32_t acc)
{
    int32_t r;
    __asm__("smlatb %0, %1, %2, %3" : "=r"(r) : "r"(x), "r"(y), "r"(acc));
    return r;
}

/** PKHBT #16: bottom half of a, bottom half of b as the top half. */
static inline int32_t mcu_pkhbt16(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhbt %0, %1, %2, lsl #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/** PKHTB #16: top half of a, top half of b as the bottom half. */
static inline int32_t mcu_pkhtb16(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("pkhtb %0, %1, %2, asr #16" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/** *acc += bottom(x) * bottom(y) (SMLABB accumulating in place: one register for *acc). */
static inline void mcu_smlabb_acc(int32_t *acc, int32_t x, int32_t y)
{
    __asm__("smlabb %0, %1, %2, %0" : "+r"(*acc) : "r"(x), "r"(y));
}

/** *acc += top(x) * top(y) (SMLATT in place). */
static inline void mcu_smlatt_acc(int32_t *acc, int32_t x, int32_t y)
{
    __asm__("smlatt %0, %1, %2, %0" : "+r"(*acc) : "r"(x), "r"(y));
}

/** LDRD with post-increment: two words at p (word aligned) into *a, *b; returns p + 2. */
static inline const int32_t *mcu_ldrd_inc(const int32_t *p, int32_t *a, int32_t *b)
{
    int32_t lo, hi;
    __asm__("ldrd %0, %1, [%2], #8" : "=&r"(lo), "=&r"(hi), "+r"(p) : "m"(*(const int32_t(*)[2])p));
    *a = lo;
    *b = hi;
    return p;
}

/** SMMULR: the high word of a * b, rounded: (a * b + 2^31) >> 32. */
static inline int32_t mcu_smmulr(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("smmulr %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

/** SMMLAR: acc + the high word of a * b, rounded: (acc * 2^32 + a * b + 2^31) >> 32. */
static inline int32_t mcu_smmlar(int32_t a, int32_t b, int32_t acc)
{
    int32_t r;
    __asm__("smmlar %0, %1, %2, %3" : "=r"(r) : "r"(a), "r"(b), "r"(acc));
    return r;
}

/** SSAT #8: x clamped to [-128, 127]. */
static inline int32_t mcu_ssat8(int32_t x)
{
    int32_t r;
    __asm__("ssat %0, #8, %1" : "=r"(r) : "r"(x));
    return r;
}

/** Lane-wise signed byte maximum (SSUB8 sets the GE flags, SEL picks by them). */
static inline int32_t mcu_max_s8x4(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("ssub8 %0, %1, %2\n\tsel %0, %1, %2" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    return r;
}

/** Lane-wise signed byte minimum. */
static inline int32_t mcu_min_s8x4(int32_t a, int32_t b)
{
    int32_t r;
    __asm__("ssub8 %0, %1, %2\n\tsel %0, %2, %1" : "=&r"(r) : "r"(a), "r"(b) : "cc");
    return r;
}

#else /* MCU_CMSIS_DSP_EMULATE: portable models of the same instructions (little-endian host) */

static inline void mcu_schedule_barrier(void)
{
}

static inline int32_t mcu_emu_lane16(int32_t x, int top)
{
    return (int32_t)(int16_t)(uint16_t)((uint32_t)x >> (top ? 16 : 0));
}

static inline int32_t mcu_emu_byte(int32_t x, int n)
{
    return (int32_t)(int8_t)(uint8_t)((uint32_t)x >> (8 * n));
}

static inline int32_t mcu_emu_pack16(int32_t bottom, int32_t top)
{
    return (int32_t)(((uint32_t)top << 16) | ((uint32_t)bottom & 0xFFFFu));
}

static inline int32_t mcu_sxtb16(int32_t x)
{
    return mcu_emu_pack16(mcu_emu_byte(x, 0), mcu_emu_byte(x, 2));
}

static inline int32_t mcu_sxtb16_ror8(int32_t x)
{
    return mcu_emu_pack16(mcu_emu_byte(x, 1), mcu_emu_byte(x, 3));
}

static inline int32_t mcu_uxtb16(int32_t x)
{
    return (int32_t)((uint32_t)x & 0x00FF00FFu);
}

static inline int32_t mcu_sxtab16(int32_t acc, int32_t x)
{
    return mcu_emu_pack16(mcu_emu_lane16(acc, 0) + mcu_emu_byte(x, 0), mcu_emu_lane16(acc, 1) + mcu_emu_byte(x, 2));
}

static inline int32_t mcu_sxtab16_ror8(int32_t acc, int32_t x)
{
    return mcu_emu_pack16(mcu_emu_lane16(acc, 0) + mcu_emu_byte(x, 1), mcu_emu_lane16(acc, 1) + mcu_emu_byte(x, 3));
}

static inline int32_t mcu_smlad(int32_t x, int32_t y, int32_t acc)
{
    const uint32_t sum = (uint32_t)acc + (uint32_t)(mcu_emu_lane16(x, 0) * mcu_emu_lane16(y, 0)) +
                         (uint32_t)(mcu_emu_lane16(x, 1) * mcu_emu_lane16(y, 1));
    return (int32_t)sum;
}

static inline int32_t mcu_smlabb(int32_t x, int32_t y, int32_t acc)
{
    return (int32_t)((uint32_t)acc + (uint32_t)(mcu_emu_lane16(x, 0) * mcu_emu_lane16(y, 0)));
}

static inline int32_t mcu_smlatt(int32_t x, int32_t y, int32_t acc)
{
    return (int32_t)((uint32_t)acc + (uint32_t)(mcu_emu_lane16(x, 1) * mcu_emu_lane16(y, 1)));
}

static inline int32_t mcu_smlabt(int32_t x, int32_t y, int32_t acc)
{
    return (int32_t)((uint32_t)acc + (uint32_t)(mcu_emu_lane16(x, 0) * mcu_emu_lane16(y, 1)));
}

static inline int32_t mcu_smlatb(int32_t x, int32_t y, int32_t acc)
{
    return (int32_t)((uint32_t)acc + (uint32_t)(mcu_emu_lane16(x, 1) * mcu_emu_lane16(y, 0)));
}

static inline int32_t mcu_pkhbt16(int32_t a, int32_t b)
{
    return mcu_emu_pack16(mcu_emu_lane16(a, 0), mcu_emu_lane16(b, 0));
}

static inline int32_t mcu_pkhtb16(int32_t a, int32_t b)
{
    return mcu_emu_pack16(mcu_emu_lane16(b, 1), mcu_emu_lane16(a, 1));
}

static inline void mcu_smlabb_acc(int32_t *acc, int32_t x, int32_t y)
{
    *acc = mcu_smlabb(x, y, *acc);
}

static inline void mcu_smlatt_acc(int32_t *acc, int32_t x, int32_t y)
{
    *acc = mcu_smlatt(x, y, *acc);
}

static inline const int32_t *mcu_ldrd_inc(const int32_t *p, int32_t *a, int32_t *b)
{
    memcpy(a, p, 4);
    memcpy(b, p + 1, 4);
    return p + 2;
}

static inline int32_t mcu_smmulr(int32_t a, int32_t b)
{
    return (int32_t)(((int64_t)a * b + ((int64_t)1 << 31)) >> 32);
}

static inline int32_t mcu_smmlar(int32_t a, int32_t b, int32_t acc)
{
    return (int32_t)(((int64_t)acc * ((int64_t)1 << 32) + (int64_t)a * b + ((int64_t)1 << 31)) >> 32);
}

static inline int32_t mcu_ssat8(int32_t x)
{
    return x < -128 ? -128 : x > 127 ? 127 : x;
}

static inline int32_t mcu_max_s8x4(int32_t a, int32_t b)
{
    uint32_t r = 0;
    for (int n = 0; n < 4; n++) {
        const int32_t x = mcu_emu_byte(a, n), y = mcu_emu_byte(b, n);
        r |= (uint32_t)(uint8_t)(x >= y ? x : y) << (8 * n);
    }
    return (int32_t)r;
}

static inline int32_t mcu_min_s8x4(int32_t a, int32_t b)
{
    uint32_t r = 0;
    for (int n = 0; n < 4; n++) {
        const int32_t x = mcu_emu_byte(a, n), y = mcu_emu_byte(b, n);
        r |= (uint32_t)(uint8_t)(x >= y ? y : x) << (8 * n);
    }
    return (int32_t)r;
}

#endif /* MCU_CMSIS_DSP_EMULATE */

/**
 * The fast requantization of the DSP paths: rq = {m, add, right}, one record per output channel,
 * precomputed offline (planner/targets/cmsis_nn.py, requant_records) only where the planner has
 * proved, from the layer's accumulator bounds, that it equals TFLM's requantization plus the output
 * offset (before the activation clamp) for every accumulator the layer can produce:
 *   - y = SMMULR(2 * acc, m) == SaturatingRoundingDoublingHighMul(acc, m) when 2 * acc fits in
 *     int32 (m >= 0);
 *   - (y + 2^(right-1) - (y < 0)) >> right == RoundingDivideByPOT(y, right) for right >= 1, and the
 *     output offset rides along as add = 2^(right-1) + (output_offset << right), the sums never
 *     overflowing. SMMLAR adds `add` for free, and the sign of acc can stand for the sign of y:
 *     they differ only when y == 0 > acc, where subtracting 1 from add cannot change the quotient;
 *   - a channel whose output is the same value v for every reachable accumulator (e.g. all-zero
 *     weights) is {0, 2 * v + 1, 1}: (2 * v + 1 - (acc < 0)) >> 1 == v.
 * Four instructions (LSL, SMMLAR, ADD, ASR) plus the clamp; layers without a proof pass rq == NULL
 * and take mcu_cmsis_requantize_s8.
 */
static inline int32_t mcu_cmsis_rq3(int32_t acc, int32_t m, int32_t add, int32_t right)
{
    const int32_t t = mcu_smmlar((int32_t)((uint32_t)acc << 1), m, add);
    return (t + (acc >> 31)) >> right;
}

/** mcu_cmsis_rq3 without the rounding correction of negative accumulators (the ADD of acc's sign):
    equal to it, after the clamp, wherever the output offset is at or below the clamp's minimum (a
    ReLU-like layer). Why: for acc >= 0 the two are the same; for acc <= -1, with m >= 0 both are
    non-decreasing in acc, and at acc = -1 SMMULR(-2, m) <= 0, so this form gives at most
    add >> right = out_offset (add = 2^(right-1) + (out_offset << right)), TFLM's at most out_offset
    too (its doubling high multiply and rounding divide of a negative value are <= 0): both clamp to
    the minimum. A constant channel's record {0, 2v + 1, 1} gives v either way. The DSP assembly's
    MCU_PAIR_AREQ2_RELU. */
static inline int32_t mcu_cmsis_rq3_relu(int32_t acc, int32_t m, int32_t add, int32_t right)
{
    return mcu_smmlar((int32_t)((uint32_t)acc << 1), m, add) >> right;
}

static inline int32_t mcu_cmsis_rq(int32_t acc, const int32_t *rq)
{
    return mcu_cmsis_rq3(acc, rq[0], rq[1], rq[2]);
}

/** mcu_cmsis_rq clamped to [act_min, act_max] (SSAT when that is the whole int8 range). */
static inline int32_t mcu_cmsis_rq_clamp(int32_t acc, const int32_t *rq, int32_t act_min, int32_t act_max)
{
    int32_t v = mcu_ssat8(mcu_cmsis_rq(acc, rq));
    if (act_min != -128 || act_max != 127) {
        v = v < act_min ? act_min : v;
        v = v > act_max ? act_max : v;
    }
    return v;
}
#endif /* MCU_CMSIS_USE_DSP */

#endif /* MCU_CMSIS_DSP_H */
