/* Portable QUANTIZE between uint8 and int8. Every kernel reads element i before writing it, so
   each also works in place. */
#include <string.h>

#include "mcu_quantize_u8.h"

void mcu_quantize_u8(const mcu_quantize_u8_params *p, const uint8_t *input, const int8_t *table, int8_t *output)
{
    const int32_t size = p->size;
    for (int32_t i = 0; i < size; i++) {
        output[i] = table[input[i]];
    }
}

void mcu_quantize_s8_u8(const mcu_quantize_u8_params *p, const int8_t *input, const uint8_t *table,
                        uint8_t *output)
{
    const int32_t size = p->size;
    for (int32_t i = 0; i < size; i++) {
        output[i] = table[(int32_t)input[i] + 128];
    }
}

/* Flip the top bit of every byte, a word at a time (memcpy keeps it free of alignment and
   aliasing assumptions; compilers turn it into plain loads and stores). */
static void flip_sign_bits(int32_t size, const uint8_t *in, uint8_t *out)
{
    int32_t i = 0;
    for (; i + 4 <= size; i += 4) {
        uint32_t w;
        memcpy(&w, in + i, 4);
        w ^= 0x80808080u;
        memcpy(out + i, &w, 4);
    }
    for (; i < size; i++) {
        out[i] = (uint8_t)(in[i] ^ 0x80u);
    }
}

void mcu_quantize_u8_xor(const mcu_quantize_u8_params *p, const uint8_t *input, int8_t *output)
{
    flip_sign_bits(p->size, input, (uint8_t *)output);
}

void mcu_quantize_s8_u8_xor(const mcu_quantize_u8_params *p, const int8_t *input, uint8_t *output)
{
    flip_sign_bits(p->size, (const uint8_t *)input, output);
}
