/* Portable PACK: TFLM's PackImpl, a plain copy. */
#include <string.h>

#include "mcu_pack.h"

void mcu_pack(const mcu_pack_params *p, const void *const inputs[], void *output)
{
    const int32_t num_inputs = p->num_inputs;
    const int32_t outer_size = p->outer_size;
    const size_t bytes = (size_t)p->copy_size * (size_t)p->elem_size;
    uint8_t *out = (uint8_t *)output;

    for (int32_t k = 0; k < outer_size; k++) {
        for (int32_t i = 0; i < num_inputs; i++) {
            memcpy(out, (const uint8_t *)inputs[i] + (size_t)k * bytes, bytes);
            out += bytes;
        }
    }
}
