/* Portable comparisons: one broadcast walk per comparison and element type. int8 values are first
   moved onto the comparison's common scale (TFLM's ComparisonWithScaling); the others compare as
   stored. */
#include "mcu_comparisons.h"

/* The broadcast walk over rows of the last axis; VALUE(x, i) reads element i of input x. */
#define MCU_COMPARE_WALK(shape, type, cmp, VALUE1, VALUE2)                        \
    const int32_t rows = mcu_broadcast_rows(shape);                              \
    const int32_t cols = (shape)->dims[MCU_BROADCAST_RANK - 1];                  \
    const int32_t step1 = (shape)->stride1[MCU_BROADCAST_RANK - 1];              \
    const int32_t step2 = (shape)->stride2[MCU_BROADCAST_RANK - 1];              \
    for (int32_t r = 0; r < rows; r++) {                                         \
        int32_t off1;                                                            \
        int32_t off2;                                                            \
        mcu_broadcast_row(shape, r, &off1, &off2);                               \
        const type *a = input1 + off1;                                           \
        const type *b = input2 + off2;                                           \
        for (int32_t c = 0; c < cols; c++) {                                     \
            *output++ = (uint8_t)(VALUE1(a[c * step1]) cmp VALUE2(b[c * step2])); \
        }                                                                        \
    }

#define MCU_RAW(x) (x)
#define MCU_SCALED1(x) \
    mcu_requantize(((int32_t)(x) + p->input1_offset) * scale_up, p->input1_multiplier, p->input1_shift)
#define MCU_SCALED2(x) \
    mcu_requantize(((int32_t)(x) + p->input2_offset) * scale_up, p->input2_multiplier, p->input2_shift)

#define MCU_COMPARISON_RAW(op, suffix, type, cmp)                                                          \
    void mcu_##op##_##suffix(const mcu_broadcast_params *p, const type *input1, const type *input2,        \
                             uint8_t *output)                                                              \
    {                                                                                                      \
        MCU_COMPARE_WALK(p, type, cmp, MCU_RAW, MCU_RAW)                                                   \
    }

/* |x + offset| <= 255, so the values shifted left by 8 fit in int32 */
#define MCU_COMPARISON(op, cmp)                                                                            \
    void mcu_##op##_s8(const mcu_comparison_s8_params *p, const int8_t *input1, const int8_t *input2,      \
                       uint8_t *output)                                                                    \
    {                                                                                                      \
        const int32_t scale_up = (int32_t)1 << p->left_shift;                                              \
        MCU_COMPARE_WALK(&p->shape, int8_t, cmp, MCU_SCALED1, MCU_SCALED2)                                 \
    }                                                                                                      \
    MCU_COMPARISON_RAW(op, s32, int32_t, cmp)                                                              \
    MCU_COMPARISON_RAW(op, f32, float, cmp)

MCU_COMPARISON(equal, ==)
MCU_COMPARISON(not_equal, !=)
MCU_COMPARISON(less, <)
MCU_COMPARISON(less_equal, <=)
MCU_COMPARISON(greater, >)
MCU_COMPARISON(greater_equal, >=)

MCU_COMPARISON_RAW(equal, b8, uint8_t, ==)
MCU_COMPARISON_RAW(not_equal, b8, uint8_t, !=)
