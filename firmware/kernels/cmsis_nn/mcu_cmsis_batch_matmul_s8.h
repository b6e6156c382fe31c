/*
 * int8 BATCH_MATMUL on the cmsis-nn target: TFLM's BatchMatMul (reference_ops, FullyConnectedParams),
 * out[i, j] = requantize(sum_k (lhs[i, k] + lhs_offset) * (rhs[j, k] + rhs_offset)) + output_offset,
 * clamped to int8, per output batch (batch axes broadcast); the int32 sums wrap as TFLM's.
 *
 * The kernel reads lhs as [rows][depth] and rhs as [cols][depth] (the transposed rhs, as TFLM's
 * CMSIS-NN kernel): the planner stores a constant operand that way at compile time; an activation
 * stored the other way (lhs with adj_x, rhs without adj_y) is transposed per batch into scratch
 * (transpose_lhs / transpose_rhs). Paths:
 *   - plain C: both offsets added to every product;
 *   - DSP, three or more rows: each block of four rhs rows is widened once into scratch as int16
 *     with rhs_offset added, in SXTB16 lane order (x0 x2 | x1 x3); every lhs row word is split by
 *     SXTAB16 / SXTAB16 ROR #8 with lhs_offset added, shared by the four columns: one LDR, two
 *     SXTAB16 and four LDRD + eight SMLAD per sixteen multiply-accumulates;
 *   - DSP, one or two rows: no widening, each rhs word split by SXTAB16 with rhs_offset added;
 *   - Helium: VMLADAVA.S8 of raw values, sixteen per instruction, four columns per lhs vector, the
 *     lhs sum by VADDVA alongside; the offsets enter once per output through the row and column
 *     sums: acc + rhs_offset * sum(lhs row) + lhs_offset * sum(rhs row) + depth * lhs_offset *
 *     rhs_offset (mod 2^32, equal to TFLM's sum).
 */
#ifndef MCU_CMSIS_BATCH_MATMUL_S8_H
#define MCU_CMSIS_BATCH_MATMUL_S8_H

#include <stdint.h>

/** Scratch of mcu_cmsis_batch_matmul_s8: a widened block of four rhs rows (DSP path, 32 bytes per
    four depth values), the rhs row sums (Helium path, 4 bytes per column), and the transposed
    copies of the activations stored the other way (transpose_lhs / transpose_rhs: 0 or 1). */
#define MCU_CMSIS_BATCH_MATMUL_S8_SCRATCH_BYTES(rows, cols, depth, transpose_lhs, transpose_rhs)                 \
    (32 * (((depth) + 3) / 4) + 4 * (cols) + (transpose_lhs) * (rows) * (depth) +                               \
     (transpose_rhs) * (cols) * (depth))

/** Parameters of mcu_cmsis_batch_matmul_s8. Per output batch index (b0, b1, b2), the lhs matrix
    starts at b0 * lhs_step0 + b1 * lhs_step1 + b2 * lhs_step2 (0 where lhs broadcasts), the rhs
    matrix likewise; the output is row-major [batch0][batch1][batch2][rows][cols]. */
typedef struct {
    int32_t batch0, batch1, batch2;          /**< output batch axes, >= 1 */
    int32_t lhs_step0, lhs_step1, lhs_step2; /**< lhs elements per batch index */
    int32_t rhs_step0, rhs_step1, rhs_step2; /**< rhs elements per batch index */
    int32_t rows, cols, depth;               /**< >= 1 */
    int32_t transpose_lhs;                   /**< 1: lhs stored [depth][rows] */
    int32_t transpose_rhs;                   /**< 1: rhs stored [depth][cols] */
    int32_t lhs_offset, rhs_offset;          /**< negated zero points, [-127, 128] */
    int32_t output_offset;                   /**< output zero point, [-128, 127] */
    int32_t multiplier, shift;               /**< TFLM's QuantizeMultiplier of lhs * rhs / output scales */
    int32_t rq_m, rq_add, rq_right;          /**< the DSP fast requantization record (mcu_cmsis_rq), or
                                                  rq_right 0: none proven */
} mcu_cmsis_batch_matmul_params;

void mcu_cmsis_batch_matmul_s8(const mcu_cmsis_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs,
                               void *scratch, int8_t *output);

#endif /* MCU_CMSIS_BATCH_MATMUL_S8_H */
