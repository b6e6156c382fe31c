/*
 * Portable BATCH_MATMUL on int8 (TFLM's BatchMatMul with FullyConnectedParams): per output batch,
 * out[i, j] = requantize(sum_k (lhs[i, k] + lhs_offset) * (rhs[k, j] + rhs_offset)) + output_offset,
 * clamped to int8; the int32 sum wraps as TFLM's.
 */
#ifndef MCU_BATCH_MATMUL_S8_H
#define MCU_BATCH_MATMUL_S8_H

#include <stdint.h>

#define MCU_BATCH_MATMUL_BATCH_RANK 3

/** Parameters of mcu_batch_matmul_s8. Operand element (i, k) of lhs is at i * lhs_row_step +
    k * lhs_depth_step within its matrix, element (k, j) of rhs at k * rhs_depth_step + j * rhs_col_step
    (adj_x / adj_y resolved at compile time); the output is row-major [batch..., rows, cols]. */
typedef struct {
    int32_t batch[MCU_BATCH_MATMUL_BATCH_RANK];          /**< output batch axes, >= 1 */
    int32_t lhs_batch_step[MCU_BATCH_MATMUL_BATCH_RANK]; /**< lhs elements per batch index, 0 if broadcast */
    int32_t rhs_batch_step[MCU_BATCH_MATMUL_BATCH_RANK]; /**< rhs elements per batch index, 0 if broadcast */
    int32_t rows, cols, depth;                           /**< >= 1 */
    int32_t lhs_row_step, lhs_depth_step;
    int32_t rhs_depth_step, rhs_col_step;
    int32_t lhs_offset, rhs_offset;                      /**< negated zero points, [-127, 128] */
    int32_t output_offset;                               /**< output zero point, [-128, 127] */
    int32_t multiplier, shift;                           /**< Q0.31 in [0, 2^31), shift in [-31, 30] */
} mcu_batch_matmul_params;

/** Scratch of mcu_batch_matmul_s8: one rhs column as int16 (offset added). */
#define MCU_BATCH_MATMUL_S8_SCRATCH_BYTES(depth) (2 * (depth))

void mcu_batch_matmul_s8(const mcu_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs, void *scratch,
                         int8_t *output);

#endif /* MCU_BATCH_MATMUL_S8_H */
