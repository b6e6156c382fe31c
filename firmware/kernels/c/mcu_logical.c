/* Portable logical ops on bool bytes. REDUCE_ALL walks the input once, in order, clearing the
   output element an element maps to when the element is 0. */
#include "mcu_logical.h"

#include <string.h>

void mcu_logical_and(const mcu_broadcast_params *p, const uint8_t *input1, const uint8_t *input2, uint8_t *output)
{
    MCU_BROADCAST_FOR_EACH(p, i1, i2, { *output++ = (uint8_t)(input1[i1] && input2[i2]); });
}

void mcu_logical_or(const mcu_broadcast_params *p, const uint8_t *input1, const uint8_t *input2, uint8_t *output)
{
    MCU_BROADCAST_FOR_EACH(p, i1, i2, { *output++ = (uint8_t)(input1[i1] || input2[i2]); });
}

void mcu_logical_not(const mcu_logical_not_params *p, const uint8_t *input, uint8_t *output)
{
    for (int32_t i = 0; i < p->size; i++) {
        output[i] = (uint8_t)!input[i];
    }
}

void mcu_reduce_all(const mcu_reduce_params *p, const uint8_t *input, uint8_t *output)
{
    int32_t index[MCU_REDUCE_RANK] = {0};
    int32_t total = 1;
    for (int32_t k = 0; k < MCU_REDUCE_RANK; k++) {
        total *= p->dims[k];
    }
    memset(output, 1, (size_t)p->out_size);
    int32_t at = 0; /* the output element of input element i */
    for (int32_t i = 0; i < total; i++) {
        if (!input[i]) {
            output[at] = 0;
        }
        for (int32_t k = MCU_REDUCE_RANK - 1; k >= 0; k--) {
            at += p->out_stride[k];
            if (++index[k] < p->dims[k]) {
                break;
            }
            at -= p->out_stride[k] * p->dims[k];
            index[k] = 0;
        }
    }
}
