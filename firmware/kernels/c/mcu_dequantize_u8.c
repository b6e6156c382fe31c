/* Portable DEQUANTIZE from uint8, computed in float32 as mcu_dequantize_s8 is (|x - zero point| <= 255:
   both operands exact, the product rounded once). The walk goes from the last element down so that
   it also works in place. */
#include "mcu_dequantize_u8.h"

void mcu_dequantize_u8(const mcu_dequantize_params *p, const uint8_t *input, float *output)
{
    const float scale = p->scale;
    const int32_t zero_point = p->zero_point;

    for (int32_t i = p->size - 1; i >= 0; i--) {
        output[i] = scale * (float)((int32_t)input[i] - zero_point);
    }
}
