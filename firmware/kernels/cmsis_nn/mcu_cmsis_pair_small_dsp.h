/*
 * The 1x1 convolution's dense run in the wide pair layout for small K (in_c a multiple of four, at
 * most 2 * MCU_PAIR_SMALL_STEPS): mcu_pair_rows3_asm_wide's pair loop (mcu_cmsis_pair_dsp.h) with
 * the widened block on the stack instead of in scratch. sp addresses the columns, so r0, which
 * the wide routine spends on the column block and the job record (reloaded around every pair),
 * holds the output pointer through the whole run, and the layer's constants (out_c, the weights'
 * skip, the records' end, the K loop's entry) sit at fixed offsets of the frame. Per pair that
 * drops the job record's round trip (out, d1, d2, skip, rq_end reloaded, out stored back) and the
 * job's reload inside the last K step; per block of three pixels the widening takes its three
 * pixels through three pointers (no register-offset loads) and none of the job record's block
 * state (the first pair's rq, wp and bias copied back, x, blocks). The K steps, the requantization
 * (MCU_PAIR_AREQW) and the records' order (conv.py wide_records) are the wide routine's.
 */
#ifndef MCU_CMSIS_PAIR_SMALL_DSP_H
#define MCU_CMSIS_PAIR_SMALL_DSP_H

#include "mcu_cmsis_pair_dsp.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE) && MCU_PAIR_ASM

/** The longest K the routine takes: 2 * MCU_PAIR_SMALL_STEPS values (its straight steps). */
#define MCU_PAIR_SMALL_STEPS 16

/** The run: `blocks` (>= 1) blocks of three consecutive pixels of in_c values from x on, their
    outputs from out on (out_c values a pixel, an even count); wp: the first pair's weights less
    4 bytes (for the generic routine less 4 + 8 * (MCU_PAIR_SMALL_STEPS - in_c / 2) bytes, the
    entry step's bias: mcu_pair_small_wp), rq: the wide records
    (two doubled biases and two records a pair), rq_end: after the last pair's. Offsets fixed: the
    assembly loads the record with one LDM. */
struct mcu_pair_small_job {
    const int8_t *x;
    int32_t blocks;
    int8_t *out;
    int32_t out_c;
    int32_t in_c;
    const int8_t *wp;
    const int32_t *rq;
    const int32_t *rq_end;
};

/* The frame below the saved registers: the column block (K step S of the straight steps at byte
   12 S, a pair of data K4 / 2 steps entering at step MCU_PAIR_SMALL_STEPS - K4 / 2), then the
   run's constants and state. */
#define MCU_PAIR_SMALL_ENTRY "192"  /* the K steps' entry address */
#define MCU_PAIR_SMALL_D1 "196"     /* out_c: out1 - out0 */
#define MCU_PAIR_SMALL_SKIP "200"   /* bytes from a pair's last writeback to the next pair's weights */
#define MCU_PAIR_SMALL_END "204"    /* rq_end */
#define MCU_PAIR_SMALL_RQ0 "208"    /* every block's first pair's records */
#define MCU_PAIR_SMALL_WP0 "212"    /* ... and weights */
#define MCU_PAIR_SMALL_X "216"      /* the next block's first pixel */
#define MCU_PAIR_SMALL_BLOCKS "220" /* the blocks left, this one included */
#define MCU_PAIR_SMALL_INC "224"    /* in_c */
#define MCU_PAIR_SMALL_FRAME "232"

/* K step S (r1 the pair's weights less the entry bias, 8 bytes a step: row a's word, row b's; the
   columns at sp): 11 instructions, 44 bytes, as MCU_PAIR_AWSTEP_ */
#define MCU_PAIR_SSTEP_(S, WB)                                                                                     \
    "ldr.w r8, [r1, #(8 * " #S " + 4)]\n\t"                                                                      \
    "ldr.w r9, [r1, #(8 * " #S " + 8)]" WB "\n\t"                                                                \
    "ldr.w r10, [sp, #(12 * " #S ")]\n\t"                                                                        \
    "ldr.w r11, [sp, #(12 * " #S " + 4)]\n\t"                                                                    \
    "ldr.w r12, [sp, #(12 * " #S " + 8)]\n\t" MCU_PAIR_AWMACS
/* the straight steps but the last (which each pair's start takes first), at label 4; the last
   one's writeback advances the weights by 120 bytes (the skip adds the rest) */
#define MCU_PAIR_SSTEPS                                                                                            \
    ".balign 4\n"                                                                                                 \
    "4:\n\t" MCU_PAIR_SSTEP_(0, "") MCU_PAIR_SSTEP_(1, "") MCU_PAIR_SSTEP_(2, "") MCU_PAIR_SSTEP_(3, "")         \
        MCU_PAIR_SSTEP_(4, "") MCU_PAIR_SSTEP_(5, "") MCU_PAIR_SSTEP_(6, "") MCU_PAIR_SSTEP_(7, "")                \
            MCU_PAIR_SSTEP_(8, "") MCU_PAIR_SSTEP_(9, "") MCU_PAIR_SSTEP_(10, "") MCU_PAIR_SSTEP_(11, "")          \
                MCU_PAIR_SSTEP_(12, "") MCU_PAIR_SSTEP_(13, "") MCU_PAIR_SSTEP_(14, "!")

/** Defined where MCU_PAIR_CONV_DEFS is (the 1x1 kernel), a weak reference elsewhere, as
    mcu_pair_rows3_asm_wide. */
__attribute__((naked, noinline, weak)) void mcu_pair_small_1x1(const struct mcu_pair_small_job *job);
/** mcu_pair_small_1x1 without the negative accumulators' rounding correction (mcu_pair_relu's layers;
    kernel path PAIR_RELU, the other PAIR_SIGNED). */
__attribute__((naked, noinline, weak)) void mcu_pair_small_1x1_relu(const struct mcu_pair_small_job *job);
#if defined(MCU_PAIR_CONV_DEFS)
/* the routine, its requantization REQ (MCU_PAIR_AREQW, or MCU_PAIR_AREQW_RELU for mcu_pair_relu's
   layers) */
#define MCU_PAIR_SMALL_ROUTINE(REQ) \
    "push {r4-r11, lr}\n\t"                                                                                        \
    "sub sp, #" MCU_PAIR_SMALL_FRAME "\n\t"                                                                        \
    "ldm r0, {r1-r8}\n\t" /* x, blocks, out, out_c, in_c, wp, rq, rq_end */                                        \
    "adr.w r9, 4f\n\t"                                                                                             \
    "rsb r10, r5, #32\n\t" /* 2 * the entry step (32 - in_c) */                                                    \
    "mov r11, #22\n\t"                                                                                             \
    "mla r9, r10, r11, r9\n\t" /* label 4 + 44 bytes a step */                                                     \
    "orr r9, r9, #1\n\t"                                                                                           \
    "lsl r10, r5, #2\n\t"                                                                                          \
    "sub r10, r10, #120\n\t" /* the skip: 8 * (in_c / 2) - 120 */                                                  \
    "str r9, [sp, #" MCU_PAIR_SMALL_ENTRY "]\n\t"                                                                  \
    "str r4, [sp, #" MCU_PAIR_SMALL_D1 "]\n\t"                                                                     \
    "str r10, [sp, #" MCU_PAIR_SMALL_SKIP "]\n\t"                                                                  \
    "str r8, [sp, #" MCU_PAIR_SMALL_END "]\n\t"                                                                    \
    "str r7, [sp, #" MCU_PAIR_SMALL_RQ0 "]\n\t"                                                                    \
    "str r6, [sp, #" MCU_PAIR_SMALL_WP0 "]\n\t"                                                                    \
    "str r2, [sp, #" MCU_PAIR_SMALL_BLOCKS "]\n\t"                                                                 \
    "str r5, [sp, #" MCU_PAIR_SMALL_INC "]\n\t"                                                                    \
    "mov r0, r3\n\t" /* r0: out0 of the next pair, for the whole run */                                            \
    "b 5f\n\t"                                                                                                     \
    MCU_PAIR_SSTEPS                                                                                                \
    /* the pair's six results requantized in place from the records at lr, then stored */                          \
    MCU_PAIR_AREQ6_(REQ, REQ)                                                                                      \
    "ldr r12, [sp, #" MCU_PAIR_SMALL_D1 "]\n\t"                                                                    \
    "ldr r11, [sp, #" MCU_PAIR_SMALL_SKIP "]\n\t"                                                                  \
    "ldr r10, [sp, #" MCU_PAIR_SMALL_END "]\n\t"                                                                   \
    "add r8, r0, r12\n\t" /* out1, out2: immediate offsets store in one cycle, register offsets in two */          \
    "add r9, r8, r12\n\t"                                                                                          \
    "add r1, r1, r11\n\t"                                                                                          \
    "strb r5, [r0, #1]\n\t"                                                                                        \
    "strb r2, [r0], #2\n\t"                                                                                        \
    "strb r6, [r8, #1]\n\t"                                                                                        \
    "strb r3, [r8]\n\t"                                                                                            \
    "strb r7, [r9, #1]\n\t"                                                                                        \
    "strb r4, [r9]\n\t"                                                                                            \
    "cmp lr, r10\n\t"                                                                                              \
    "beq 7f\n\t" /* else the next pair falls through: no taken branch */                                           \
    "1:\n\t" /* a pair (lr: its doubled biases, then its records): the last K step from the biases,                \
    then into the others (at least one: K4 >= 4) */                                                                \
    "ldr r9, [sp, #" MCU_PAIR_SMALL_ENTRY "]\n\t"                                                                  \
    "ldr r2, [lr], #8\n\t"                                                                                         \
    "ldr.w r8, [r1, #(8 * 15 + 4)]\n\t"                                                                            \
    "ldr.w r10, [sp, #(12 * 15)]\n\t"                                                                              \
    "ldr r5, [lr, #-4]\n\t"                                                                                        \
    "ldr.w r4, [r1, #(8 * 15 + 8)]\n\t"                                                                            \
    "ldr.w r11, [sp, #(12 * 15 + 4)]\n\t"                                                                          \
    "ldr.w r12, [sp, #(12 * 15 + 8)]\n\t"                                                                          \
    "smlad r6, r11, r4, r5\n\t"                                                                                    \
    "smlad r7, r12, r4, r5\n\t"                                                                                    \
    "smlad r5, r10, r4, r5\n\t"                                                                                    \
    "smlad r3, r11, r8, r2\n\t"                                                                                    \
    "smlad r4, r12, r8, r2\n\t"                                                                                    \
    "smlad r2, r10, r8, r2\n\t"                                                                                    \
    "bx r9\n\t"                                                                                                    \
    "7:\n\t" /* a block done (r0: its out0 + out_c): the next one's out0 two pixels on */                          \
    "ldr r8, [sp, #" MCU_PAIR_SMALL_BLOCKS "]\n\t"                                                                 \
    "subs r8, r8, #1\n\t"                                                                                          \
    "beq 9f\n\t"                                                                                                   \
    "str r8, [sp, #" MCU_PAIR_SMALL_BLOCKS "]\n\t"                                                                 \
    "ldr r12, [sp, #" MCU_PAIR_SMALL_D1 "]\n\t"                                                                    \
    "ldr r1, [sp, #" MCU_PAIR_SMALL_X "]\n\t"                                                                      \
    "ldr r5, [sp, #" MCU_PAIR_SMALL_INC "]\n\t"                                                                    \
    "add r0, r0, r12, lsl #1\n\t"                                                                                  \
    "5:\n\t" /* a block's three pixels (r1, r2, r3; r5: in_c) widened onto the stack at the entry                  \
    step's columns, a group of four values of each per pass (mcu_pair_put4_lanes'                                  \
    order), then its pairs from the first */                                                                       \
    "add r2, r1, r5\n\t"                                                                                           \
    "add r3, r2, r5\n\t"                                                                                           \
    "add r12, r3, r5\n\t"                                                                                          \
    "str r12, [sp, #" MCU_PAIR_SMALL_X "]\n\t"                                                                     \
    "rsb r4, r5, #32\n\t"                                                                                          \
    "add r4, r4, r4, lsl #1\n\t"                                                                                   \
    "add r4, sp, r4, lsl #1\n\t" /* sp + 12 * the entry step */                                                    \
    "mov r11, r2\n\t"                                                                                              \
    "2:\n\t"                                                                                                       \
    "ldr r8, [r1], #4\n\t"                                                                                         \
    "ldr r9, [r2], #4\n\t"                                                                                         \
    "ldr r10, [r3], #4\n\t"                                                                                        \
    MCU_PAIR_AWPUT3_STR                                                                                            \
    "cmp r1, r11\n\t"                                                                                              \
    "bne 2b\n\t"                                                                                                   \
    "ldr r1, [sp, #" MCU_PAIR_SMALL_WP0 "]\n\t"                                                                    \
    "ldr lr, [sp, #" MCU_PAIR_SMALL_RQ0 "]\n\t"                                                                    \
    "b 1b\n\t"                                                                                                     \
    "9:\n\t"                                                                                                       \
    "add sp, #" MCU_PAIR_SMALL_FRAME "\n\t"                                                                        \
    "pop {r4-r11, pc}\n\t"
__attribute__((naked, noinline, weak)) void mcu_pair_small_1x1(const struct mcu_pair_small_job *job)
{
    (void)job;
    __asm__ volatile(MCU_PAIR_SMALL_ROUTINE(MCU_PAIR_AREQW));
}
__attribute__((naked, noinline, weak)) void mcu_pair_small_1x1_relu(const struct mcu_pair_small_job *job)
{
    (void)job;
    __asm__ volatile(MCU_PAIR_SMALL_ROUTINE(MCU_PAIR_AREQW_RELU));
}
#endif

/*
 * The routine specialised for K = 8, 16, 24, 32 (mcu_pair_small_k8 ... k32, their relu copies;
 * kernel paths PAIR_SMALL8 ... PAIR_SMALL32, the generic one PAIR_SMALL keeping in_c 4, 12, 20,
 * 28): its N = K / 2 steps straight from the first, so no computed entry (no BX, no entry load),
 * the last step's writeback lands on the next pair's weights (no skip load and add), and a block's
 * widening takes K's offsets as immediates (K = 8 straight, more two groups a pass), its column
 * block at sp (step S at byte 12 S). The pair loop closes with a taken BNE where the generic one
 * took its BX; for K = 8 two pairs a pass (the first leaving on a BEQ not taken), one taken branch
 * for two pairs: -6,144 est. cycles on VWW #2 for 308 bytes. Est. M4 cycles a pair (K = 8) 95 ->
 * 91; VWW #2 (8 -> 16) 633,259 -> 594,085, #4 459,690 -> 447,200, #6 769,962 -> 756,322, #8
 * 376,363 -> 370,643; code 792 (K = 8), 682 (16), 1,034 (32) bytes each (the generic one 1,044).
 */
/* the steps 1 .. N - 1, the last one's writeback advancing the weights by 8 N bytes: a pair's */
#define MCU_PAIR_SMALLK_STEPS_4 MCU_PAIR_SSTEP_(1, "") MCU_PAIR_SSTEP_(2, "") MCU_PAIR_SSTEP_(3, "!")
#define MCU_PAIR_SMALLK_STEPS_8                                                                                    \
    MCU_PAIR_SSTEP_(1, "") MCU_PAIR_SSTEP_(2, "") MCU_PAIR_SSTEP_(3, "") MCU_PAIR_SSTEP_(4, "")                    \
        MCU_PAIR_SSTEP_(5, "") MCU_PAIR_SSTEP_(6, "") MCU_PAIR_SSTEP_(7, "!")
#define MCU_PAIR_SMALLK_STEPS_12                                                                                   \
    MCU_PAIR_SSTEP_(1, "") MCU_PAIR_SSTEP_(2, "") MCU_PAIR_SSTEP_(3, "") MCU_PAIR_SSTEP_(4, "")                    \
        MCU_PAIR_SSTEP_(5, "") MCU_PAIR_SSTEP_(6, "") MCU_PAIR_SSTEP_(7, "") MCU_PAIR_SSTEP_(8, "")                \
            MCU_PAIR_SSTEP_(9, "") MCU_PAIR_SSTEP_(10, "") MCU_PAIR_SSTEP_(11, "!")
#define MCU_PAIR_SMALLK_STEPS_16                                                                                   \
    MCU_PAIR_SSTEP_(1, "") MCU_PAIR_SSTEP_(2, "") MCU_PAIR_SSTEP_(3, "") MCU_PAIR_SSTEP_(4, "")                    \
        MCU_PAIR_SSTEP_(5, "") MCU_PAIR_SSTEP_(6, "") MCU_PAIR_SSTEP_(7, "") MCU_PAIR_SSTEP_(8, "")                \
            MCU_PAIR_SSTEP_(9, "") MCU_PAIR_SSTEP_(10, "") MCU_PAIR_SSTEP_(11, "") MCU_PAIR_SSTEP_(12, "")         \
                MCU_PAIR_SSTEP_(13, "") MCU_PAIR_SSTEP_(14, "") MCU_PAIR_SSTEP_(15, "!")
/* group G (four values) of the block's three pixels at r1 (K bytes a pixel) widened into steps 2 G
   and 2 G + 1 of the column block (mcu_pair_put4_lanes' order, as MCU_PAIR_AWPUT3_STR) */
#define MCU_PAIR_SMALLK_PUT_(G, K)                                                                                 \
    "ldr r8, [r1, #(4 * " #G ")]\n\t"                                                                              \
    "ldr r9, [r1, #(" #K " + 4 * " #G ")]\n\t"                                                                     \
    "ldr r10, [r1, #(2 * " #K " + 4 * " #G ")]\n\t" MCU_PAIR_AWSPLIT3                                              \
    "str r5, [sp, #(24 * " #G ")]\n\t"                                                                             \
    "str r6, [sp, #(24 * " #G " + 4)]\n\t"                                                                         \
    "str r7, [sp, #(24 * " #G " + 8)]\n\t"                                                                         \
    "str r8, [sp, #(24 * " #G " + 12)]\n\t"                                                                        \
    "str r9, [sp, #(24 * " #G " + 16)]\n\t"                                                                        \
    "str r10, [sp, #(24 * " #G " + 20)]\n\t"
/* K = 8: its two groups straight, r1 then advanced to the next block */
#define MCU_PAIR_SMALLK_PUT_8 MCU_PAIR_SMALLK_PUT_(0, 8) MCU_PAIR_SMALLK_PUT_(1, 8) "add r1, r1, #24\n\t"
/* K >= 16: two groups a pass (straight, K = 32's eight groups took 432 bytes; a pass of two costs
   about 3.5 cycles a block more, one of one group twice that), the columns through r4 */
#define MCU_PAIR_SMALLK_PUT2_(K)                                                                                   \
    "mov r4, sp\n\t"                                                                                               \
    "add r11, r1, #" #K "\n\t" /* the first pixel's end */                                                         \
    "2:\n\t"                                                                                                       \
    "ldr r8, [r1], #8\n\t"                                                                                         \
    "ldr r9, [r1, #(" #K " - 8)]\n\t"                                                                              \
    "ldr r10, [r1, #(2 * " #K " - 8)]\n\t" MCU_PAIR_AWSPLIT3                                                       \
    "str r5, [r4], #48\n\t"                                                                                        \
    "str r6, [r4, #-44]\n\t"                                                                                       \
    "str r7, [r4, #-40]\n\t"                                                                                       \
    "str r8, [r4, #-36]\n\t"                                                                                       \
    "str r9, [r4, #-32]\n\t"                                                                                       \
    "str r10, [r4, #-28]\n\t"                                                                                      \
    "ldr r8, [r1, #-4]\n\t"                                                                                        \
    "ldr r9, [r1, #(" #K " - 4)]\n\t"                                                                              \
    "ldr r10, [r1, #(2 * " #K " - 4)]\n\t" MCU_PAIR_AWSPLIT3                                                       \
    "str r5, [r4, #-24]\n\t"                                                                                       \
    "str r6, [r4, #-20]\n\t"                                                                                       \
    "str r7, [r4, #-16]\n\t"                                                                                       \
    "str r8, [r4, #-12]\n\t"                                                                                       \
    "str r9, [r4, #-8]\n\t"                                                                                        \
    "str r10, [r4, #-4]\n\t"                                                                                       \
    "cmp r1, r11\n\t"                                                                                              \
    "bne 2b\n\t"                                                                                                   \
    "add r1, r1, #(2 * " #K ")\n\t"
#define MCU_PAIR_SMALLK_PUT_16 MCU_PAIR_SMALLK_PUT2_(16)
#define MCU_PAIR_SMALLK_PUT_24 MCU_PAIR_SMALLK_PUT2_(24)
#define MCU_PAIR_SMALLK_PUT_32 MCU_PAIR_SMALLK_PUT2_(32)
/* the routine for K (its job's wp: the first pair's weights less 4 bytes), its requantization REQ */
/* a pair (lr: its doubled biases, then its records): step 0 from the biases, the others, the
   requantization, the stores; the flags eq after the block's last pair */
#define MCU_PAIR_SMALLK_PAIR_(REQ, STEPS)                                                                          \
    "ldr r2, [lr], #8\n\t"                                                                                         \
    "ldr r5, [lr, #-4]\n\t"                                                                                        \
    "ldr.w r8, [r1, #4]\n\t"                                                                                       \
    "ldr.w r4, [r1, #8]\n\t"                                                                                       \
    "ldr.w r10, [sp, #0]\n\t"                                                                                      \
    "ldr.w r11, [sp, #4]\n\t"                                                                                      \
    "ldr.w r12, [sp, #8]\n\t"                                                                                      \
    "smlad r6, r11, r4, r5\n\t"                                                                                    \
    "smlad r7, r12, r4, r5\n\t"                                                                                    \
    "smlad r5, r10, r4, r5\n\t"                                                                                    \
    "smlad r3, r11, r8, r2\n\t"                                                                                    \
    "smlad r4, r12, r8, r2\n\t"                                                                                    \
    "smlad r2, r10, r8, r2\n\t"                                                                                    \
    STEPS                                                                                                          \
    MCU_PAIR_AREQ6_(REQ, REQ)                                                                                      \
    "ldr r12, [sp, #" MCU_PAIR_SMALL_D1 "]\n\t"                                                                    \
    "ldr r10, [sp, #" MCU_PAIR_SMALL_END "]\n\t"                                                                   \
    "add r8, r0, r12\n\t" /* out1, out2: immediate offsets store in one cycle, register offsets in two */          \
    "add r9, r8, r12\n\t"                                                                                          \
    "strb r5, [r0, #1]\n\t"                                                                                        \
    "strb r2, [r0], #2\n\t"                                                                                        \
    "strb r6, [r8, #1]\n\t"                                                                                        \
    "strb r3, [r8]\n\t"                                                                                            \
    "strb r7, [r9, #1]\n\t"                                                                                        \
    "strb r4, [r9]\n\t"                                                                                            \
    "cmp lr, r10\n\t"
/* the pair loop: one pair a pass, or (K = 8) two, the block left after either on its last pair */
#define MCU_PAIR_SMALLK_PAIRS1_(REQ, STEPS) MCU_PAIR_SMALLK_PAIR_(REQ, STEPS) "bne 1b\n\t"
#define MCU_PAIR_SMALLK_PAIRS2_(REQ, STEPS)                                                                        \
    MCU_PAIR_SMALLK_PAIR_(REQ, STEPS) "beq 7f\n\t" MCU_PAIR_SMALLK_PAIR_(REQ, STEPS) "bne 1b\n\t" "7:\n\t"
#define MCU_PAIR_SMALLK_ROUTINE(REQ, K, STEPS, PAIRS)                                                              \
    "push {r4-r11, lr}\n\t"                                                                                        \
    "sub sp, #" MCU_PAIR_SMALL_FRAME "\n\t"                                                                        \
    "ldm r0, {r1-r8}\n\t" /* x, blocks, out, out_c, in_c, wp, rq, rq_end */                                        \
    "str r4, [sp, #" MCU_PAIR_SMALL_D1 "]\n\t"                                                                     \
    "str r8, [sp, #" MCU_PAIR_SMALL_END "]\n\t"                                                                    \
    "str r7, [sp, #" MCU_PAIR_SMALL_RQ0 "]\n\t"                                                                    \
    "str r6, [sp, #" MCU_PAIR_SMALL_WP0 "]\n\t"                                                                    \
    "str r2, [sp, #" MCU_PAIR_SMALL_BLOCKS "]\n\t"                                                                 \
    "mov r0, r3\n\t" /* r0: out0 of the next pair, for the whole run */                                            \
    "5:\n\t" /* a block's three pixels (r1) widened onto the stack, then its pairs from the first */               \
    MCU_PAIR_SMALLK_PUT_##K /* r1: the next block's first pixel */                                                 \
    "str r1, [sp, #" MCU_PAIR_SMALL_X "]\n\t"                                                                      \
    "ldr r1, [sp, #" MCU_PAIR_SMALL_WP0 "]\n\t"                                                                    \
    "ldr lr, [sp, #" MCU_PAIR_SMALL_RQ0 "]\n\t"                                                                    \
    "1:\n\t" PAIRS                                                                                                 \
    /* a block done (r0: its out0 + out_c): the next one's out0 two pixels on */                                   \
    "ldr r8, [sp, #" MCU_PAIR_SMALL_BLOCKS "]\n\t"                                                                 \
    "ldr r12, [sp, #" MCU_PAIR_SMALL_D1 "]\n\t"                                                                    \
    "ldr r1, [sp, #" MCU_PAIR_SMALL_X "]\n\t"                                                                      \
    "add r0, r0, r12, lsl #1\n\t"                                                                                  \
    "subs r8, r8, #1\n\t"                                                                                          \
    "str r8, [sp, #" MCU_PAIR_SMALL_BLOCKS "]\n\t"                                                                 \
    "bne 5b\n\t"                                                                                                   \
    "add sp, #" MCU_PAIR_SMALL_FRAME "\n\t"                                                                        \
    "pop {r4-r11, pc}\n\t"
/* the routines, defined where MCU_PAIR_CONV_DEFS is (weak references elsewhere) */
#define MCU_PAIR_SMALLK_DEFINE_(NAME, REQ, K, STEPS, PAIRS_)                                                       \
    __attribute__((naked, noinline, weak)) void NAME(const struct mcu_pair_small_job *job);                        \
    MCU_PAIR_SMALLK_BODY_(NAME, REQ, K, STEPS, PAIRS_)
#if defined(MCU_PAIR_CONV_DEFS)
#define MCU_PAIR_SMALLK_BODY_(NAME, REQ, K, STEPS, PAIRS_)                                                         \
    __attribute__((naked, noinline, weak)) void NAME(const struct mcu_pair_small_job *job)                         \
    {                                                                                                              \
        (void)job;                                                                                                 \
        __asm__ volatile(MCU_PAIR_SMALLK_ROUTINE(REQ, K, STEPS, PAIRS_(REQ, STEPS)));                              \
    }
#else
#define MCU_PAIR_SMALLK_BODY_(NAME, REQ, K, STEPS, PAIRS_)
#endif
MCU_PAIR_SMALLK_DEFINE_(mcu_pair_small_k8, MCU_PAIR_AREQW, 8,
                        MCU_PAIR_SMALLK_STEPS_4, MCU_PAIR_SMALLK_PAIRS2_)
MCU_PAIR_SMALLK_DEFINE_(mcu_pair_small_k8_relu, MCU_PAIR_AREQW_RELU, 8,
                        MCU_PAIR_SMALLK_STEPS_4, MCU_PAIR_SMALLK_PAIRS2_)
MCU_PAIR_SMALLK_DEFINE_(mcu_pair_small_k16, MCU_PAIR_AREQW, 16,
                        MCU_PAIR_SMALLK_STEPS_8, MCU_PAIR_SMALLK_PAIRS1_)
MCU_PAIR_SMALLK_DEFINE_(mcu_pair_small_k16_relu, MCU_PAIR_AREQW_RELU, 16,
                        MCU_PAIR_SMALLK_STEPS_8, MCU_PAIR_SMALLK_PAIRS1_)
MCU_PAIR_SMALLK_DEFINE_(mcu_pair_small_k24, MCU_PAIR_AREQW, 24,
                        MCU_PAIR_SMALLK_STEPS_12, MCU_PAIR_SMALLK_PAIRS1_)
MCU_PAIR_SMALLK_DEFINE_(mcu_pair_small_k24_relu, MCU_PAIR_AREQW_RELU, 24,
                        MCU_PAIR_SMALLK_STEPS_12, MCU_PAIR_SMALLK_PAIRS1_)
MCU_PAIR_SMALLK_DEFINE_(mcu_pair_small_k32, MCU_PAIR_AREQW, 32,
                        MCU_PAIR_SMALLK_STEPS_16, MCU_PAIR_SMALLK_PAIRS1_)
MCU_PAIR_SMALLK_DEFINE_(mcu_pair_small_k32_relu, MCU_PAIR_AREQW_RELU, 32,
                        MCU_PAIR_SMALLK_STEPS_16, MCU_PAIR_SMALLK_PAIRS1_)

/** Whether the build has any of the small-K routines (else dense_blocks' branch compiles to nothing). */
#define MCU_PAIR_SMALL_ANY                                                                                         \
    (MCU_PATH_PAIR_SMALL || MCU_PATH_PAIR_SMALL8 || MCU_PATH_PAIR_SMALL16 || MCU_PATH_PAIR_SMALL24 ||              \
     MCU_PATH_PAIR_SMALL32)

/** The job's wp for the routine of in_c: the first pair's weights less 4 bytes, for the generic one
    also less its entry step's bias. */
static inline const int8_t *mcu_pair_small_wp(const int8_t *weights, int32_t in_c)
{
    return weights - 4 - ((in_c & 7) ? 8 * (MCU_PAIR_SMALL_STEPS - in_c / 2) : 0);
}

/* in mcu_pair_small_run: the routine F (F##_relu without the rounding correction) where the build has
   its kernel path, else 0 */
#define MCU_PAIR_SMALL_CALL_(PATH, F)                                                                              \
    if (!(PATH)) {                                                                                                 \
        return 0;                                                                                                  \
    }                                                                                                              \
    if (relu) {                                                                                                    \
        F##_relu(job);                                                                                             \
    } else {                                                                                                       \
        MCU_PATH_CHECK(MCU_PATH_PAIR_SIGNED);                                                                      \
        F(job);                                                                                                    \
    }                                                                                                              \
    return 1;

/** The small-K run of `job` (its wp: mcu_pair_small_wp) by the routine for its in_c, with or
    without the rounding correction (relu: mcu_pair_relu and the build's PAIR_RELU); 0 where the build left that routine out (the
    wide routine's run then: slower, never wrong). Direct calls, each under its path, so a build
    links only its routines (a call through a pointer would also hide them from the static stack
    bound). Mirrored by planner/targets/cmsis_nn/paths.py (_small_path). */
static inline int mcu_pair_small_run(const struct mcu_pair_small_job *job, int relu)
{
    switch (job->in_c) {
    case 8: MCU_PAIR_SMALL_CALL_(MCU_PATH_PAIR_SMALL8, mcu_pair_small_k8)
    case 16: MCU_PAIR_SMALL_CALL_(MCU_PATH_PAIR_SMALL16, mcu_pair_small_k16)
    case 24: MCU_PAIR_SMALL_CALL_(MCU_PATH_PAIR_SMALL24, mcu_pair_small_k24)
    case 32: MCU_PAIR_SMALL_CALL_(MCU_PATH_PAIR_SMALL32, mcu_pair_small_k32)
    default: MCU_PAIR_SMALL_CALL_(MCU_PATH_PAIR_SMALL, mcu_pair_small_1x1)
    }
}

/** Whether mcu_pair_small_1x1 takes a dense run of the fast form (even rows, proven records) in
    the pair layout `layout` with in_c values a pixel (mirrored by planner/targets/cmsis_nn/paths.py,
    PAIR_SMALL). */
static inline int mcu_pair_small_takes(int32_t in_c, int32_t layout)
{
    return layout == MCU_CMSIS_PAIR_WIDE && in_c > 0 && (in_c & 3) == 0 && in_c <= 2 * MCU_PAIR_SMALL_STEPS;
}

#endif /* MCU_CMSIS_USE_DSP && !MCU_CMSIS_USE_MVE && MCU_PAIR_ASM */

#endif /* MCU_CMSIS_PAIR_SMALL_DSP_H */
