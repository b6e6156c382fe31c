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
        MCU_BROADCAST_FOR_EACH(&p->shape, i1, i2, {                                                       \
            const int32_t out = fn(input1[i1], input2[i2]);                                               \
            *output++ = out < p->act_min ? p->act_min : (out > p->act_max ? p->act_max : out);            \
        });                                                                                               \
    }

MCU_ARITH_S32(mcu_add_s32, add_s32)
MCU_ARITH_S32(mcu_sub_s32, sub_s32)
MCU_ARITH_S32(mcu_mul_s32, mul_s32)
MCU_ARITH_S32(mcu_div_s32, div_s32)
MCU_ARITH_S32(mcu_squared_difference_s32, squared_difference_s32)
