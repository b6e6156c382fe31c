/* Portable GATHER / GATHER_ND: TFLM's Gather and GatherNd, one memcpy per picked slice; an index
   TFLM would fail the invoke on gives a slice of zero bytes and a non-zero return (the run stops). */
#include "mcu_gather_indexed.h"

#include <string.h>

int32_t mcu_gather_axis(const mcu_gather_axis_params *p, const void *params, const int32_t *indices, void *output)
{
    int32_t bad = 0;
    const size_t row = (size_t)p->inner * (size_t)p->elem_size;
    const uint8_t *in = (const uint8_t *)params;
    uint8_t *out = (uint8_t *)output;

    for (int32_t b = 0; b < p->batches; b++) {
        const int32_t *idx = indices + b * p->coords;
        for (int32_t o = 0; o < p->outer; o++) {
            const uint8_t *block = in + (size_t)(b * p->outer + o) * (size_t)p->axis_size * row;
            for (int32_t k = 0; k < p->coords; k++) {
                const int32_t i = idx[k];
                if (i >= 0 && i < p->axis_size) {
                    memcpy(out, block + (size_t)i * row, row);
                } else {
                    memset(out, 0, row);
                    bad = 1;
                }
                out += row;
            }
        }
    }
    return bad;
}

int32_t mcu_gather_nd(const mcu_gather_nd_params *p, const void *params, const int32_t *indices, void *output)
{
    int32_t bad = 0;
    const size_t row = (size_t)p->slice_size * (size_t)p->elem_size;
    const uint8_t *in = (const uint8_t *)params;
    uint8_t *out = (uint8_t *)output;

    for (int32_t s = 0; s < p->slices; s++) {
        uint32_t pos = 0; /* TFLM's int arithmetic, wrapping */
        for (int32_t j = 0; j < p->depth; j++) {
            pos += (uint32_t)indices[s * p->depth + j] * (uint32_t)p->stride[j];
        }
        const int32_t from = (int32_t)pos;
        if (from >= 0 && from <= p->params_size - p->slice_size) {
            memcpy(out, in + (size_t)from * (size_t)p->elem_size, row);
        } else {
            memset(out, 0, row);
            bad = 1;
        }
        out += row;
    }
    return bad;
}
