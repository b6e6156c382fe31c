/* Portable int8 BATCH_MATMUL. Per output column j, the rhs column (adj_y or not) is copied once
   into the scratch as int16 with the rhs offset added, and its sum kept; then every output row is
   sum_k lhs[i, k] * col[k] + lhs_offset * sum_k col[k], which is TFLM's
   sum_k (lhs[i, k] + lhs_offset) * (rhs[k, j] + rhs_offset) modulo 2^32 (TFLM's int32 wraps the
   same way). Contiguous lhs rows (no adj_x, the usual case) go four at a time, each column element
   loaded once for the four; a transposed lhs is read with its step. */
#include "mcu_batch_matmul_s8.h"

#include "mcuforge_fixedpoint.h"

/* sum_k a[k * step] * b[k], wrapping. */
static uint32_t dot(const int8_t *a, int32_t step, const int16_t *b, int32_t n)
{
    uint32_t acc = 0;
    int32_t k = 0;
    if (step == 1) {
        for (; k + 4 <= n; k += 4) {
            acc += (uint32_t)(a[k] * b[k] + a[k + 1] * b[k + 1] + a[k + 2] * b[k + 2] + a[k + 3] * b[k + 3]);
        }
    }
    for (; k < n; k++) {
        acc += (uint32_t)(a[k * step] * b[k]);
    }
    return acc;
}

/* The four dot products of contiguous lhs rows a, a + row_step, .. with b, wrapping. */
static void dot4(const int8_t *a, int32_t row_step, const int16_t *b, int32_t n, uint32_t acc[4])
{
    const int8_t *a0 = a, *a1 = a + row_step, *a2 = a + 2 * row_step, *a3 = a + 3 * row_step;
    uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int32_t k = 0; k < n; k++) {
        const int32_t v = b[k];
        s0 += (uint32_t)(a0[k] * v);
        s1 += (uint32_t)(a1[k] * v);
        s2 += (uint32_t)(a2[k] * v);
        s3 += (uint32_t)(a3[k] * v);
    }
    acc[0] = s0;
    acc[1] = s1;
    acc[2] = s2;
    acc[3] = s3;
}

static int8_t requantize(const mcu_batch_matmul_params *p, uint32_t acc)
{
    int32_t v = mcu_requantize((int32_t)acc, p->multiplier, p->shift) + p->output_offset;
    v = v < -128 ? -128 : v;
    v = v > 127 ? 127 : v;
    return (int8_t)v;
}

static void matmul(const mcu_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs, int16_t *col, int8_t *out)
{
    const int32_t depth = p->depth;
    for (int32_t j = 0; j < p->cols; j++) {
        const int8_t *src = rhs + j * p->rhs_col_step;
        uint32_t col_sum = 0;
        for (int32_t k = 0; k < depth; k++) {
            col[k] = (int16_t)(src[k * p->rhs_depth_step] + p->rhs_offset);
            col_sum += (uint32_t)col[k];
        }
        const uint32_t offset_term = (uint32_t)p->lhs_offset * col_sum;
        int32_t i = 0;
        if (p->lhs_depth_step == 1) {
            for (; i + 4 <= p->rows; i += 4) {
                uint32_t acc[4];
                dot4(lhs + i * p->lhs_row_step, p->lhs_row_step, col, depth, acc);
                for (int32_t r = 0; r < 4; r++) {
                    out[(i + r) * p->cols + j] = requantize(p, acc[r] + offset_term);
                }
            }
        }
        for (; i < p->rows; i++) {
            out[i * p->cols + j] = requantize(p, dot(lhs + i * p->lhs_row_step, p->lhs_depth_step, col, depth) + offset_term);
        }
    }
}

void mcu_batch_matmul_s8(const mcu_batch_matmul_params *p, const int8_t *lhs, const int8_t *rhs, void *scratch,
                         int8_t *output)
{
    const int32_t matrix = p->rows * p->cols;
    int16_t *col = (int16_t *)scratch;
    for (int32_t b0 = 0; b0 < p->batch[0]; b0++) {
        for (int32_t b1 = 0; b1 < p->batch[1]; b1++) {
            for (int32_t b2 = 0; b2 < p->batch[2]; b2++) {
                const int8_t *l = lhs + b0 * p->lhs_batch_step[0] + b1 * p->lhs_batch_step[1] + b2 * p->lhs_batch_step[2];
                const int8_t *r = rhs + b0 * p->rhs_batch_step[0] + b1 * p->rhs_batch_step[1] + b2 * p->rhs_batch_step[2];
                matmul(p, l, r, col, output);
                output += matrix;
            }
        }
    }
}
