/* Portable int32 ADD, SUB, MUL, DIV, SQUARED_DIFFERENCE: one broadcast walk per op. */
#include "mcu_arith_s32.h"

static int32_t add_s32(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a + (uint32_t)b);
}

static int32_t sub_s32(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a - (uint32_t)b);
}

static int32_t mul_s32(int32_t a, int32_t b)
{
    return (int32_t)((uint32_t)a * (uint32_t)b);
}

static int32_t div_s32(int32_t a, int32_t b)
{
    if (b == 0) {
        return 0;
    }
    if (b == -1) {
        return sub_s32(0, a); /* INT32_MIN / -1 wraps to INT32_MIN */
    }
    return a / b;
}

static int32_t squared_difference_s32(int32_t a, int32_t b)
{
    const int32_t d = sub_s32(a, b);
    return mul_s32(d, d);
}

#define MCU_ARITH_S32(name, fn)                                                                           \
    void name(const mcu_arith_s32_params *p, const int32_t *input1, const int32_t *input2, int32_t *output) \
    {                                                                                                     \
        const int32_t rows = mcu_broadcast_rows(&p->shape);                                               \
        const int32_t cols = p->shape.dims[MCU_BROADCAST_RANK - 1];                                       \
        const int32_t step1 = p->shape.stride1[MCU_BROADCAST_RANK - 1];                                   \
        const int32_t step2 = p->shape.stride2[MCU_BROADCAST_RANK - 1];                                   \
        for (int32_t r = 0; r < rows; r++) {                                                              \
            int32_t off1;                                                                                 \
            int32_t off2;                                                                                 \
            mcu_broadcast_row(&p->shape, r, &off1, &off2);                                                \
            const int32_t *a = input1 + off1;                                                             \
            const int32_t *b = input2 + off2;                                                             \
            for (int32_t c = 0; c < cols; c++) {                                                          \
                int32_t out = fn(a[c * step1], b[c * step2]);                                             \
                out = out < p->act_min ? p->act_min : out;                                                \
                *output++ = out > p->act_max ? p->act_max : out;                                          \
            }                                                                                             \
        }                                                                                                 \
    }

MCU_ARITH_S32(mcu_add_s32, add_s32)
MCU_ARITH_S32(mcu_sub_s32, sub_s32)
MCU_ARITH_S32(mcu_mul_s32, mul_s32)
MCU_ARITH_S32(mcu_div_s32, div_s32)
MCU_ARITH_S32(mcu_squared_difference_s32, squared_difference_s32)
