/* Portable MAXIMUM / MINIMUM: one broadcast walk per element type and comparison. The comparison
   is TFLM's (a > b ? a : b), so for float32 a NaN first operand or an equal pair gives the second. */
#include "mcu_maximum_minimum.h"

#define MCU_MAX_MIN_KERNEL(name, type, cmp)                                                        \
    void name(const mcu_broadcast_params *p, const type *input1, const type *input2, type *output) \
    {                                                                                              \
        const int32_t rows = mcu_broadcast_rows(p);                                                \
        const int32_t cols = p->dims[MCU_BROADCAST_RANK - 1];                                      \
        const int32_t step1 = p->stride1[MCU_BROADCAST_RANK - 1];                                  \
        const int32_t step2 = p->stride2[MCU_BROADCAST_RANK - 1];                                  \
        int32_t idx[MCU_BROADCAST_RANK - 1] = {0};                                                 \
        int32_t off1 = 0;                                                                          \
        int32_t off2 = 0;                                                                          \
        for (int32_t r = 0; r < rows; r++) {                                                       \
            const type *a = input1 + off1;                                                         \
            const type *b = input2 + off2;                                                         \
            for (int32_t c = 0; c < cols; c++) {                                                   \
                const type x = a[c * step1];                                                       \
                const type y = b[c * step2];                                                       \
                *output++ = x cmp y ? x : y;                                                       \
            }                                                                                      \
            mcu_broadcast_next(p, idx, &off1, &off2);                                              \
        }                                                                                          \
    }

MCU_MAX_MIN_KERNEL(mcu_maximum_s8, int8_t, >)
MCU_MAX_MIN_KERNEL(mcu_minimum_s8, int8_t, <)
MCU_MAX_MIN_KERNEL(mcu_maximum_s16, int16_t, >)
MCU_MAX_MIN_KERNEL(mcu_minimum_s16, int16_t, <)
MCU_MAX_MIN_KERNEL(mcu_maximum_s32, int32_t, >)
MCU_MAX_MIN_KERNEL(mcu_minimum_s32, int32_t, <)
MCU_MAX_MIN_KERNEL(mcu_maximum_f32, float, >)
MCU_MAX_MIN_KERNEL(mcu_minimum_f32, float, <)
