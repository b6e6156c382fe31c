/* Portable comparisons: one broadcast walk per comparison and element type. int8 values are first
   moved onto the comparison's common scale (TFLM's ComparisonWithScaling); the others compare as
   stored. */
#include "mcu_comparisons.h"

#define MCU_COMPARISON_RAW(op, suffix, type, cmp)                                                          \
    void mcu_##op##_##suffix(const mcu_broadcast_params *p, const type *input1, const type *input2,        \
                             uint8_t *output)                                                              \
    {                                                                                                      \
        MCU_BROADCAST_FOR_EACH(p, i1, i2, { *output++ = (uint8_t)(input1[i1] cmp input2[i2]); });          \
    }

/* |x + offset| <= 255, so the values shifted left by 8 fit in int32 */
#define MCU_COMPARISON(op, cmp)                                                                            \
    void mcu_##op##_s8(const mcu_comparison_s8_params *p, const int8_t *input1, const int8_t *input2,      \
                       uint8_t *output)                                                                    \
    {                                                                                                      \
        const int32_t scale_up = (int32_t)1 << p->left_shift;                                              \
        MCU_BROADCAST_FOR_EACH(&p->shape, i1, i2, {                                                        \
            const int32_t a = mcu_requantize(((int32_t)input1[i1] + p->input1_offset) * scale_up,          \
                                             p->input1_multiplier, p->input1_shift);                       \
            const int32_t b = mcu_requantize(((int32_t)input2[i2] + p->input2_offset) * scale_up,          \
                                             p->input2_multiplier, p->input2_shift);                       \
            *output++ = (uint8_t)(a cmp b);                                                                \
        });                                                                                                \
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
