/*
 * DSP path of the 3x3 three-channel convolutions (the first layers of the image models: K = 27,
 * the weights in the wide pair layout, mcu_kernels_cmsis_nn.h) on the fast path: one assembly call
 * for a run of blocks of three windows (mcu_cmsis_conv2d_s8.c direct_blocks, staged_blocks).
 *
 * The same products as mcu_pair_rows3_asm_wide took them (mcu_cmsis_pair_dsp.h: per block the
 * three windows widened into 14 int16-pair words each, then per pair of output channels 14 steps of
 * five loads and six SMLAD from the doubled biases, the six results requantized and stored), but
 * with K fixed at 27 the routine is straight, and the widened block lives in its own stack frame:
 * the K steps read the columns at [sp, #imm], which frees the column register, so the output
 * pointer stays in r0 through the pairs (no job record to reload and write back a pair), the pair's
 * first step starts from the biases without the computed entry's BX, and the widening stores each
 * word with an immediate STR (1 cycle, the STM of six 7), two groups' loads in one run of pipelined
 * loads where the registers allow. VWW's layer 0 (96x96x3 -> 48x48x8): 868,716 -> 825,164 est. M4
 * cycles (per pair 226 -> 219, per block's widening 132 -> about 124); the wide routine lost its
 * widening of these windows (job->rows), so the code grows by 896 B (VWW, IC), not 1,280.
 */
#ifndef MCU_CMSIS_CONV3_DSP_H
#define MCU_CMSIS_CONV3_DSP_H

#include "mcu_cmsis_pair_dsp.h"

#if defined(MCU_CMSIS_USE_DSP) && !defined(MCU_CMSIS_USE_MVE) && MCU_PAIR_ASM

/** A run of blocks for mcu_conv3_rows_asm (offsets fixed: the assembly reads them). */
struct mcu_conv3_job {
    const int8_t *x;        /* 0: the first block's first window (its row 0) */
    int32_t spacing;        /* 4: bytes from one window to the next */
    int32_t rows;           /* 8: bytes from one window row to the next */
    int32_t blocks;         /* 12: blocks of three windows (>= 1) */
    int8_t *out;            /* 16: the first block's first output */
    int32_t out_c;          /* 20: bytes from one pixel's outputs to the next's (the channels) */
    const int8_t *weights;  /* 24: the wide layout's pairs, 112 bytes each */
    const int32_t *rq;      /* 28: per pair its doubled biases and two records (mcu_pair_rq_pairs) */
    const int32_t *rq_end;  /* 32: the records after the last pair */
};

/* The frame below the saved registers: slots, then the widened block (word 3 s + p: step s, window
   p; 168 bytes) */
#define MCU_CONV3_COL 32
#define MCU_CONV3_FRAME (MCU_CONV3_COL + 168)
#define MCU_CONV3_S_(X) #X
#define MCU_CONV3_S(X) MCU_CONV3_S_(X)

/* step S of a pair (S >= 1): row a's and row b's weights (r1: the pair's weights less 4 bytes; WB
   "!" on the last step advances r1 to the next pair's), the three columns from the frame */
#define MCU_CONV3_STEP_(S, WB)                                                                                     \
    "ldr.w r8, [r1, #(8 * " #S " + 4)]\n\t"                                                                       \
    "ldr.w r9, [r1, #(8 * " #S " + 8)]" WB "\n\t"                                                                 \
    "ldr.w r10, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 12 * " #S ")]\n\t"                                        \
    "ldr.w r11, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 12 * " #S " + 4)]\n\t"                                    \
    "ldr.w r12, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 12 * " #S " + 8)]\n\t" MCU_PAIR_AWMACS

/* a group of four values of the three windows (loaded into r8, r9, r10; MCU_CONV3_PUTX_: into A, B,
   C) split as MCU_PAIR_AWSPLIT3 does into r5-r10 and stored as words 6 G .. 6 G + 5 of the block */
#define MCU_CONV3_PUT_(G) MCU_PAIR_AWSPLIT3 MCU_CONV3_STORE_(G)
#define MCU_CONV3_PUTX_(G, A, B, C)                                                                                \
    "sxtb16 r5, " A "\n\t"                                                                                          \
    "sxtb16 r6, " B "\n\t"                                                                                          \
    "sxtb16 r7, " C "\n\t"                                                                                          \
    "sxtb16 r8, " A ", ror #8\n\t"                                                                                  \
    "sxtb16 r9, " B ", ror #8\n\t"                                                                                  \
    "sxtb16 r10, " C ", ror #8\n\t" MCU_CONV3_STORE_(G)
#define MCU_CONV3_STORE_(G)                                                                                        \
    "str r5, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 24 * " #G ")]\n\t"                                           \
    "str r6, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 24 * " #G " + 4)]\n\t"                                       \
    "str r7, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 24 * " #G " + 8)]\n\t"                                       \
    "str r8, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 24 * " #G " + 12)]\n\t"                                      \
    "str r9, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 24 * " #G " + 16)]\n\t"                                      \
    "str r10, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 24 * " #G " + 20)]\n\t"

/* A pair's six results requantized in place (MCU_PAIR_AREQW: the accumulators hold 2 * acc), and r12
   out_c, r11 rq_end from the slots, lr past the pair's records: MCU_CONV3_REQ_SIGNED, or for
   mcu_pair_relu's layers MCU_CONV3_REQ_RELU, whose requantization (MCU_PAIR_AREQW_RELU's) needs no
   scratch register (SMMLAR into the accumulator itself): the two slots' loads and the first
   record's three words are then one run of five pipelined loads (6 cycles, the LDM and the slots'
   two loads 7): VWW's layer 0 800,219 -> 797,147 est. M4 cycles (with the pair's biases loaded
   writeback last, 794,075: the load after a writeback of its base is not pipelined). */
#define MCU_CONV3_REQ_SIGNED MCU_PAIR_AREQ6_(MCU_PAIR_AREQW, MCU_PAIR_AREQW) "ldr r12, [sp]\n\t" "ldr r11, [sp, #4]\n\t"
#define MCU_CONV3_REQI_RELU(A)                                                                                     \
    "smmlar " A ", " A ", r8, r9\n\t"                                                                            \
    "asr " A ", " A ", r10\n\t"                                                                                  \
    "ssat " A ", #8, " A "\n\t"
#define MCU_CONV3_REQ_RELU                                                                                         \
    "ldr r12, [sp]\n\t"                                                                                           \
    "ldr r11, [sp, #4]\n\t"                                                                                       \
    "ldr r9, [lr, #4]\n\t"                                                                                        \
    "ldr r10, [lr, #8]\n\t"                                                                                       \
    "ldr r8, [lr], #12\n\t"                                                                                       \
    MCU_CONV3_REQI_RELU("r2") MCU_CONV3_REQI_RELU("r3") MCU_CONV3_REQI_RELU("r4")                                  \
    "ldm lr!, {r8, r9, r10}\n\t"                                                                                  \
    MCU_CONV3_REQI_RELU("r5") MCU_CONV3_REQI_RELU("r6") MCU_CONV3_REQI_RELU("r7")

/** The job's blocks: each block's three windows widened into the frame (widen_3x3x3's groups, in
    the wide layout's order), then every pair of output channels, the outputs of window p at
    out + p * out_c. Static: only mcu_cmsis_conv2d_s8.c includes this header, and a build without
    the CONV_3X3X3 path (mcu_cmsis_paths.h) never references it. */
/* the routine, its requantization REQ (MCU_CONV3_REQ_SIGNED or MCU_CONV3_REQ_RELU) */
#define MCU_CONV3_ROUTINE(REQ) \
    "push {r4-r11, lr}\n\t"                                                                                        \
    "sub sp, sp, #" MCU_CONV3_S(MCU_CONV3_FRAME) "\n\t"                                                            \
    /* slots: [sp] out_c, [sp, #4] rq_end, [sp, #8] blocks left, [sp, #12] the next block's first                  \
    window, [sp, #16] weights less 4 bytes, [sp, #20] rq, [sp, #24] spacing, [sp, #28] rows */                     \
    "ldr r1, [r0, #20]\n\t"                                                                                        \
    "ldr r2, [r0, #32]\n\t"                                                                                        \
    "ldr r3, [r0, #12]\n\t"                                                                                        \
    "ldr r4, [r0, #24]\n\t"                                                                                        \
    "ldr r5, [r0, #28]\n\t"                                                                                        \
    "ldr r6, [r0, #4]\n\t"                                                                                         \
    "ldr r7, [r0, #8]\n\t"                                                                                         \
    "sub r4, r4, #4\n\t"                                                                                           \
    "strd r1, r2, [sp]\n\t"                                                                                        \
    "str r3, [sp, #8]\n\t"                                                                                         \
    "strd r4, r5, [sp, #16]\n\t"                                                                                   \
    "strd r6, r7, [sp, #24]\n\t"                                                                                   \
    "ldr r2, [r0, #0]\n\t"                                                                                         \
    "mov r3, r6\n\t"                                                                                               \
    "mov r11, r7\n\t"                                                                                              \
    "ldr r0, [r0, #16]\n\t"                                                                                        \
    /* a block (r0: its outputs; r2: window 0's row 0, r3: the spacing, r11: the row step): the                    \
    windows' rows at r2, r12, r3 (row 0, then row 2) and r1, r4, lr (row 1), widened in                            \
    widen_3x3x3's groups: row 0's values 0..3, 4..7, 8 with row 1's 0..2 (read from the byte                       \
    before that row), row 1's 3..6, 7..8 with row 2's 0..1, row 2's 2..5, 6..8 and a value                         \
    that meets a zero weight; two groups' loads in one run where the registers allow (five                         \
    runs of pipelined loads, not seven) */                                                                         \
    "5:\n\t"                                                                                                       \
    "add r12, r2, r3\n\t"                                                                                          \
    "add r4, r12, r3, lsl #1\n\t"                                                                                  \
    "add r3, r12, r3\n\t"                                                                                          \
    "str r4, [sp, #12]\n\t"                                                                                        \
    MCU_PAIR_AW3LOADS_("0")                                                                                        \
    "ldr r1, [r2, #4]\n\t"                                                                                         \
    "ldr r4, [r12, #4]\n\t"                                                                                        \
    "ldr lr, [r3, #4]\n\t"                                                                                         \
    MCU_CONV3_PUT_(0)                                                                                              \
    MCU_CONV3_PUTX_(1, "r1", "r4", "lr")                                                                           \
    "add r1, r2, r11\n\t"                                                                                          \
    "add r4, r12, r11\n\t"                                                                                         \
    "add lr, r3, r11\n\t"                                                                                          \
    "ldr r5, [r2, #8]\n\t"                                                                                         \
    "ldr r6, [r12, #8]\n\t"                                                                                        \
    "ldr r7, [r3, #8]\n\t"                                                                                         \
    "ldr r8, [r1, #-1]\n\t"                                                                                        \
    "ldr r9, [r4, #-1]\n\t"                                                                                        \
    "ldr r10, [lr, #-1]\n\t"                                                                                       \
    "bfi r8, r5, #0, #8\n\t"                                                                                       \
    "bfi r9, r6, #0, #8\n\t"                                                                                       \
    "bfi r10, r7, #0, #8\n\t"                                                                                      \
    MCU_CONV3_PUT_(2)                                                                                              \
    "ldr r8, [r1, #3]\n\t"                                                                                         \
    "ldr r9, [r4, #3]\n\t"                                                                                         \
    "ldr r10, [lr, #3]\n\t"                                                                                        \
    "add r2, r1, r11\n\t"                                                                                          \
    "add r12, r4, r11\n\t"                                                                                         \
    "add r3, lr, r11\n\t"                                                                                          \
    MCU_CONV3_PUT_(3)                                                                                              \
    "ldr r5, [r1, #7]\n\t"                                                                                         \
    "ldr r6, [r4, #7]\n\t"                                                                                         \
    "ldr r7, [lr, #7]\n\t"                                                                                         \
    MCU_PAIR_AW3LOADS_("-2")                                                                                       \
    "pkhbt r8, r5, r8\n\t"                                                                                         \
    "pkhbt r9, r6, r9\n\t"                                                                                         \
    "pkhbt r10, r7, r10\n\t"                                                                                       \
    MCU_CONV3_PUT_(4)                                                                                              \
    MCU_PAIR_AW3LOADS_("2")                                                                                        \
    "ldr r1, [r2, #6]\n\t"                                                                                         \
    "ldr r4, [r12, #6]\n\t"                                                                                        \
    "ldr lr, [r3, #6]\n\t"                                                                                         \
    MCU_CONV3_PUT_(5)                                                                                              \
    MCU_CONV3_PUTX_(6, "r1", "r4", "lr")                                                                           \
    "ldr r1, [sp, #16]\n\t"                                                                                        \
    "ldr lr, [sp, #20]\n\t"                                                                                        \
    /* a pair (r0: its outputs, r1: its weights less 4 bytes, lr: its doubled biases, then its                     \
    records): step 0 from the biases, in one run of pipelined loads */                                             \
    "1:\n\t"                                                                                                       \
    "ldr r5, [lr, #4]\n\t" /* before the writeback: pipelined (the load after it would not be) */                  \
    "ldr r2, [lr], #8\n\t"                                                                                         \
    "ldr.w r8, [r1, #4]\n\t"                                                                                       \
    "ldr.w r9, [r1, #8]\n\t"                                                                                       \
    "ldr.w r10, [sp, #" MCU_CONV3_S(MCU_CONV3_COL) "]\n\t"                                                         \
    "ldr.w r11, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 4)]\n\t"                                                   \
    "ldr.w r12, [sp, #(" MCU_CONV3_S(MCU_CONV3_COL) " + 8)]\n\t"                                                   \
    "smlad r3, r11, r8, r2\n\t"                                                                                    \
    "smlad r4, r12, r8, r2\n\t"                                                                                    \
    "smlad r2, r10, r8, r2\n\t"                                                                                    \
    "smlad r6, r11, r9, r5\n\t"                                                                                    \
    "smlad r7, r12, r9, r5\n\t"                                                                                    \
    "smlad r5, r10, r9, r5\n\t"                                                                                    \
    MCU_CONV3_STEP_(1, "") MCU_CONV3_STEP_(2, "") MCU_CONV3_STEP_(3, "") MCU_CONV3_STEP_(4, "")                    \
    MCU_CONV3_STEP_(5, "") MCU_CONV3_STEP_(6, "") MCU_CONV3_STEP_(7, "") MCU_CONV3_STEP_(8, "")                    \
    MCU_CONV3_STEP_(9, "") MCU_CONV3_STEP_(10, "") MCU_CONV3_STEP_(11, "") MCU_CONV3_STEP_(12, "")                 \
    MCU_CONV3_STEP_(13, "!")                                                                                       \
    /* the six results requantized in place (REQ), stored at r0, r0 + out_c, r0 + 2 out_c; the                     \
    next pair, or the block's end */                                                                               \
    REQ                                                                                                            \
    "add r8, r0, r12\n\t"                                                                                          \
    "add r9, r8, r12\n\t"                                                                                          \
    "strb r2, [r0]\n\t"                                                                                            \
    "strb r5, [r0, #1]\n\t"                                                                                        \
    "strb r3, [r8]\n\t"                                                                                            \
    "strb r6, [r8, #1]\n\t"                                                                                        \
    "strb r4, [r9]\n\t"                                                                                            \
    "strb r7, [r9, #1]\n\t"                                                                                        \
    "add r0, r0, #2\n\t"                                                                                           \
    "cmp lr, r11\n\t"                                                                                              \
    "bne 1b\n\t"                                                                                                   \
    /* the block's end (r0: its outputs + out_c, r12: out_c): the next block, or the return */                     \
    "add r0, r0, r12, lsl #1\n\t"                                                                                  \
    "ldr r8, [sp, #8]\n\t"                                                                                         \
    "ldr r2, [sp, #12]\n\t"                                                                                        \
    "ldr r3, [sp, #24]\n\t"                                                                                        \
    "ldr r11, [sp, #28]\n\t"                                                                                       \
    "subs r8, r8, #1\n\t"                                                                                          \
    "str r8, [sp, #8]\n\t"                                                                                         \
    "bne 5b\n\t"                                                                                                   \
    "add sp, sp, #" MCU_CONV3_S(MCU_CONV3_FRAME) "\n\t"                                                            \
    "pop {r4-r11, pc}\n\t"
static __attribute__((naked, noinline)) void mcu_conv3_rows_asm(const struct mcu_conv3_job *job)
{
    (void)job;
    __asm__ volatile(MCU_CONV3_ROUTINE(MCU_CONV3_REQ_SIGNED));
}
/** mcu_conv3_rows_asm without the negative accumulators' rounding correction (mcu_pair_relu's layers;
    kernel path PAIR_RELU, the other PAIR_SIGNED). */
static __attribute__((naked, noinline)) void mcu_conv3_rows_asm_relu(const struct mcu_conv3_job *job)
{
    (void)job;
    __asm__ volatile(MCU_CONV3_ROUTINE(MCU_CONV3_REQ_RELU));
}

/** `blocks` whole blocks (>= 1) of the fast-path layer gm in one call of mcu_conv3_rows_asm: their
    first windows from x on, `spacing` bytes apart, each window's rows `rows` bytes apart, their
    outputs from out on, out_c bytes apart (pixels). */
static inline void mcu_conv3_blocks(const struct mcu_pair_gemm *gm, const int8_t *x, int32_t spacing, int32_t rows,
                                    int32_t blocks, int32_t out_c, int8_t *out)
{
    const struct mcu_conv3_job job = {x,      spacing,     rows,  blocks,
                                      out,    out_c,       gm->weights, gm->rq,
                                      gm->rq + 8 * (out_c >> 1)};
    if (mcu_pair_relu(&gm->o) && MCU_PATH_PAIR_RELU) {
        mcu_conv3_rows_asm_relu(&job);
    } else {
        MCU_PATH_CHECK(MCU_PATH_PAIR_SIGNED);
        mcu_conv3_rows_asm(&job);
    }
}

#endif

#endif /* MCU_CMSIS_CONV3_DSP_H */
