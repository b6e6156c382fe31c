/* Portable int8 BATCH_MATMUL: one dot product per output element, operands read through their
   compile-time steps (so adj_x / adj_y and broadcast batches cost nothing), no scratch. */
#include "mcu_batch_matmul_s8.h"

#include "mcuforge_fixedpoint.h"

static void matmul(const mcu_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs, int8_t *out)
{
    for (int32_t i = 0; i < p->rows; i++) {
        const int8_t *row = lhs + i * p->lhs_row_step;
        for (int32_t j = 0; j < p->cols; j++) {
            const int8_t *col = rhs + j * p->rhs_col_step;
            uint32_t acc = 0; /* int32 arithmetic, wrapping as TFLM's */
            for (int32_t k = 0; k < p->depth; k++) {
                const int32_t a = row[k * p->lhs_depth_step] + p->lhs_offset;
                const int32_t b = col[k * p->rhs_depth_step] + p->rhs_offset;
                acc += (uint32_t)(a * b);
            }
            int32_t v = mcu_requantize((int32_t)acc, p->multiplier, p->shift) + p->output_offset;
            v = v < -128 ? -128 : v;
            v = v > 127 ? 127 : v;
            *out++ = (int8_t)v;
        }
    }
}

void mcu_batch_matmul_s8(const mcu_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs, int8_t *output)
{
    const int32_t matrix = p->rows * p->cols;
    for (int32_t b0 = 0; b0 < p->batch[0]; b0++) {
        for (int32_t b1 = 0; b1 < p->batch[1]; b1++) {
            for (int32_t b2 = 0; b2 < p->batch[2]; b2++) {
                const int8_t *l = lhs + b0 * p->lhs_batch_step[0] + b1 * p->lhs_batch_step[1] + b2 * p->lhs_batch_step[2];
                const int8_t *r = rhs + b0 * p->rhs_batch_step[0] + b1 * p->rhs_batch_step[1] + b2 * p->rhs_batch_step[2];
                matmul(p, l, r, output);
                output += matrix;
            }
        }
    }
}
