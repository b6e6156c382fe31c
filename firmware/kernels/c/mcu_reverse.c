/* Portable REVERSE_V2: one memcpy per row (one byte per element when the reversed axes are the
   innermost ones and the elements are bytes). */
#include "mcu_reverse.h"

#include <string.h>

void mcu_reverse(const mcu_reverse_params *p, const void *input, void *output)
{
    const int32_t row = p->inner_bytes;
    const int32_t block = p->count * row;
    const uint8_t *in = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;
    for (int32_t o = 0; o < p->outer; o++) {
        const uint8_t *src = in + o * block;
        uint8_t *dst = out + o * block + block;
        if (row == 1) {
            for (int32_t k = 0; k < p->count; k++) {
                *--dst = src[k];
            }
            continue;
        }
        for (int32_t k = 0; k < p->count; k++) {
            dst -= row;
            memcpy(dst, src + k * row, (size_t)row);
        }
    }
}
