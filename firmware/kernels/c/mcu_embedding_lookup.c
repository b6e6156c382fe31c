/* Portable EMBEDDING_LOOKUP: one row copy (or dequantization) per index. */
#include "mcu_embedding_lookup.h"

#include <string.h>

int32_t mcu_embedding_lookup(const mcu_embedding_lookup_params *p, const int32_t *lookup, const void *table,
                             void *output)
{
    int32_t bad = 0;
    const size_t row = (size_t)p->columns;
    uint8_t *out = (uint8_t *)output;
    for (int32_t i = 0; i < p->lookups; i++) {
        const int32_t idx = lookup[i];
        if (idx < 0 || idx >= p->rows) {
            memset(out + (size_t)i * row, 0, row);
            bad = 1;
        } else {
            memcpy(out + (size_t)i * row, (const uint8_t *)table + (size_t)idx * row, row);
        }
    }
    return bad;
}

int32_t mcu_embedding_lookup_hybrid(const mcu_embedding_lookup_params *p, const int32_t *lookup,
                                    const int8_t *table, float *output)
{
    int32_t bad = 0;
    const int32_t n = p->columns;
    for (int32_t i = 0; i < p->lookups; i++) {
        const int32_t idx = lookup[i];
        float *out = output + (size_t)i * (size_t)n;
        if (idx < 0 || idx >= p->rows) {
            for (int32_t c = 0; c < n; c++) {
                out[c] = 0.0f;
            }
            bad = 1;
            continue;
        }
        const int8_t *src = table + (size_t)idx * (size_t)n;
        for (int32_t c = 0; c < n; c++) {
            out[c] = (float)src[c] * p->scale;
        }
    }
    return bad;
}
