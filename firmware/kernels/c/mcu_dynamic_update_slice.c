/* Portable DYNAMIC_UPDATE_SLICE: copy the operand, clamp the start indices, then copy the update
   row by row (its innermost axis) to the output at the clamped start. */
#include "mcu_dynamic_update_slice.h"

#include <string.h>

#define RANK MCU_DYNAMIC_UPDATE_SLICE_RANK

static int64_t read_index(const void *indices, int32_t index_size, int32_t k)
{
    if (index_size == 8) {
        int64_t v;
        memcpy(&v, (const uint8_t *)indices + 8 * k, 8);
        return v;
    }
    int32_t v;
    memcpy(&v, (const uint8_t *)indices + 4 * k, 4);
    return v;
}

void mcu_dynamic_update_slice(const mcu_dynamic_update_slice_params *p, const void *operand, const void *update,
                              const void *indices, void *output)
{
    const int32_t es = p->elem_size;
    uint8_t *out = (uint8_t *)output;
    const uint8_t *upd = (const uint8_t *)update;
    if (p->whole) {
        memcpy(out, upd, (size_t)p->size * (size_t)es);
        return;
    }
    if (output != operand) {
        memcpy(out, operand, (size_t)p->size * (size_t)es);
    }
    int32_t rows = 1;
    for (int32_t k = 0; k < RANK; k++) {
        if (p->update_dims[k] == 0) {
            return;
        }
        rows *= k < RANK - 1 ? p->update_dims[k] : 1;
    }
    int32_t stride[RANK];
    int32_t offset = 0;
    int32_t acc = 1;
    for (int32_t k = RANK - 1; k >= 0; k--) {
        stride[k] = acc;
        acc *= p->operand_dims[k];
    }
    const int32_t lead = RANK - p->rank;
    for (int32_t k = lead; k < RANK; k++) {
        const int64_t limit = (int64_t)p->operand_dims[k] - p->update_dims[k];
        int64_t start = read_index(indices, p->index_size, k - lead);
        start = start < 0 ? 0 : start;
        start = start > limit ? limit : start;
        offset += (int32_t)start * stride[k];
    }
    const int32_t row_bytes = p->update_dims[RANK - 1] * es;
    for (int32_t r = 0; r < rows; r++) {
        int32_t rest = r;
        int32_t at = offset;
        for (int32_t k = RANK - 2; k >= 0; k--) {
            at += (rest % p->update_dims[k]) * stride[k];
            rest /= p->update_dims[k];
        }
        memcpy(out + (size_t)at * (size_t)es, upd + (size_t)r * (size_t)row_bytes, (size_t)row_bytes);
    }
}
