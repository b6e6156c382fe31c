/*
 * Portable CAST (TFLM's cast.cc): element-wise conversion between int8 (s8), int16 (s16), int32 (s32),
 * float32 (f32) and bool (b8: one byte, 0 or 1), as C++ casts: integers to narrower integers wrap,
 * integers to float round to nearest, anything to bool is x != 0, float to an integer truncates
 * toward zero and saturates to the integer's range (NaN gives 0), as in the TFLM we verify against.
 */
#ifndef MCU_CAST_H
#define MCU_CAST_H

#include <stdint.h>

/** The number of elements (>= 0). */
typedef struct {
    int32_t size;
} mcu_cast_params;

#define MCU_CAST_DECLARE(from, from_type, to, to_type) \
    void mcu_cast_##from##_##to(const mcu_cast_params *p, const from_type *input, to_type *output);

MCU_CAST_DECLARE(s8, int8_t, s8, int8_t)
MCU_CAST_DECLARE(s8, int8_t, s16, int16_t)
MCU_CAST_DECLARE(s8, int8_t, s32, int32_t)
MCU_CAST_DECLARE(s8, int8_t, f32, float)
MCU_CAST_DECLARE(s8, int8_t, b8, uint8_t)
MCU_CAST_DECLARE(s16, int16_t, s8, int8_t)
MCU_CAST_DECLARE(s16, int16_t, s16, int16_t)
MCU_CAST_DECLARE(s16, int16_t, s32, int32_t)
MCU_CAST_DECLARE(s16, int16_t, f32, float)
MCU_CAST_DECLARE(s16, int16_t, b8, uint8_t)
MCU_CAST_DECLARE(s32, int32_t, s8, int8_t)
MCU_CAST_DECLARE(s32, int32_t, s16, int16_t)
MCU_CAST_DECLARE(s32, int32_t, s32, int32_t)
MCU_CAST_DECLARE(s32, int32_t, f32, float)
MCU_CAST_DECLARE(s32, int32_t, b8, uint8_t)
MCU_CAST_DECLARE(f32, float, s8, int8_t)
MCU_CAST_DECLARE(f32, float, s16, int16_t)
MCU_CAST_DECLARE(f32, float, s32, int32_t)
MCU_CAST_DECLARE(f32, float, f32, float)
MCU_CAST_DECLARE(f32, float, b8, uint8_t)
MCU_CAST_DECLARE(b8, uint8_t, s8, int8_t)
MCU_CAST_DECLARE(b8, uint8_t, s16, int16_t)
MCU_CAST_DECLARE(b8, uint8_t, s32, int32_t)
MCU_CAST_DECLARE(b8, uint8_t, f32, float)
MCU_CAST_DECLARE(b8, uint8_t, b8, uint8_t)

#endif /* MCU_CAST_H */
