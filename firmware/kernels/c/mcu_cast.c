/* Portable CAST: one conversion loop per type pair. */
#include "mcu_cast.h"

/* float to an integer type: NaN gives 0; below min / above max saturate; otherwise truncate. The
   bounds compare in float: (float)max may round up (INT32_MAX to 2^31), so >= tests it. */
#define MCU_FLOAT_TO_INT(x, type, min, max) \
    ((x) != (x) ? (type)0 : (x) >= (float)(max) ? (type)(max) : (x) <= (float)(min) ? (type)(min) : (type)(x))

#define MCU_CAST(from, from_type, to, to_type, CONVERT)                                             \
    void mcu_cast_##from##_##to(const mcu_cast_params *p, const from_type *input, to_type *output) \
    {                                                                                              \
        for (int32_t i = 0; i < p->size; i++) {                                                    \
            output[i] = CONVERT(input[i]);                                                          \
        }                                                                                          \
    }

#define MCU_CONVERT_S8_S8(x) (int8_t)(uint8_t)(x)
MCU_CAST(s8, int8_t, s8, int8_t, MCU_CONVERT_S8_S8)
#define MCU_CONVERT_S8_S16(x) (int16_t)(uint16_t)(x)
MCU_CAST(s8, int8_t, s16, int16_t, MCU_CONVERT_S8_S16)
#define MCU_CONVERT_S8_S32(x) (int32_t)(uint32_t)(x)
MCU_CAST(s8, int8_t, s32, int32_t, MCU_CONVERT_S8_S32)
#define MCU_CONVERT_S8_F32(x) (float)(x)
MCU_CAST(s8, int8_t, f32, float, MCU_CONVERT_S8_F32)
#define MCU_CONVERT_S8_B8(x) (uint8_t)((x) != 0)
MCU_CAST(s8, int8_t, b8, uint8_t, MCU_CONVERT_S8_B8)
#define MCU_CONVERT_S16_S8(x) (int8_t)(uint8_t)(x)
MCU_CAST(s16, int16_t, s8, int8_t, MCU_CONVERT_S16_S8)
#define MCU_CONVERT_S16_S16(x) (int16_t)(uint16_t)(x)
MCU_CAST(s16, int16_t, s16, int16_t, MCU_CONVERT_S16_S16)
#define MCU_CONVERT_S16_S32(x) (int32_t)(uint32_t)(x)
MCU_CAST(s16, int16_t, s32, int32_t, MCU_CONVERT_S16_S32)
#define MCU_CONVERT_S16_F32(x) (float)(x)
MCU_CAST(s16, int16_t, f32, float, MCU_CONVERT_S16_F32)
#define MCU_CONVERT_S16_B8(x) (uint8_t)((x) != 0)
MCU_CAST(s16, int16_t, b8, uint8_t, MCU_CONVERT_S16_B8)
#define MCU_CONVERT_S32_S8(x) (int8_t)(uint8_t)(x)
MCU_CAST(s32, int32_t, s8, int8_t, MCU_CONVERT_S32_S8)
#define MCU_CONVERT_S32_S16(x) (int16_t)(uint16_t)(x)
MCU_CAST(s32, int32_t, s16, int16_t, MCU_CONVERT_S32_S16)
#define MCU_CONVERT_S32_S32(x) (int32_t)(uint32_t)(x)
MCU_CAST(s32, int32_t, s32, int32_t, MCU_CONVERT_S32_S32)
#define MCU_CONVERT_S32_F32(x) (float)(x)
MCU_CAST(s32, int32_t, f32, float, MCU_CONVERT_S32_F32)
#define MCU_CONVERT_S32_B8(x) (uint8_t)((x) != 0)
MCU_CAST(s32, int32_t, b8, uint8_t, MCU_CONVERT_S32_B8)
#define MCU_CONVERT_F32_S8(x) MCU_FLOAT_TO_INT(x, int8_t, INT8_MIN, INT8_MAX)
MCU_CAST(f32, float, s8, int8_t, MCU_CONVERT_F32_S8)
#define MCU_CONVERT_F32_S16(x) MCU_FLOAT_TO_INT(x, int16_t, INT16_MIN, INT16_MAX)
MCU_CAST(f32, float, s16, int16_t, MCU_CONVERT_F32_S16)
#define MCU_CONVERT_F32_S32(x) MCU_FLOAT_TO_INT(x, int32_t, INT32_MIN, INT32_MAX)
MCU_CAST(f32, float, s32, int32_t, MCU_CONVERT_F32_S32)
#define MCU_CONVERT_F32_F32(x) (float)(x)
MCU_CAST(f32, float, f32, float, MCU_CONVERT_F32_F32)
#define MCU_CONVERT_F32_B8(x) (uint8_t)((x) != 0)
MCU_CAST(f32, float, b8, uint8_t, MCU_CONVERT_F32_B8)
#define MCU_CONVERT_B8_S8(x) (int8_t)(uint8_t)(x)
MCU_CAST(b8, uint8_t, s8, int8_t, MCU_CONVERT_B8_S8)
#define MCU_CONVERT_B8_S16(x) (int16_t)(uint16_t)(x)
MCU_CAST(b8, uint8_t, s16, int16_t, MCU_CONVERT_B8_S16)
#define MCU_CONVERT_B8_S32(x) (int32_t)(uint32_t)(x)
MCU_CAST(b8, uint8_t, s32, int32_t, MCU_CONVERT_B8_S32)
#define MCU_CONVERT_B8_F32(x) (float)(x)
MCU_CAST(b8, uint8_t, f32, float, MCU_CONVERT_B8_F32)
#define MCU_CONVERT_B8_B8(x) (uint8_t)((x) != 0)
MCU_CAST(b8, uint8_t, b8, uint8_t, MCU_CONVERT_B8_B8)
