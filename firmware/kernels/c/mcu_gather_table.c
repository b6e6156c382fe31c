/* Portable table-driven gather: six nested loops over the output's runs, each axis adding its
   precomputed input offset; the run itself is one memcpy. */
#include "mcu_gather_table.h"

#include <string.h>

/* One run; a single byte (MIRROR_PAD or TILE along an int8 innermost axis) without a call. */
static inline void copy_run(uint8_t *dst, const uint8_t *src, size_t n)
{
    if (n == 1) {
        *dst = *src;
    } else {
        memcpy(dst, src, n);
    }
}

void mcu_gather_table(const mcu_gather_table_params *p, const void *input, const int32_t *offsets, void *output)
{
    const int32_t es = p->elem_size;
    const size_t run_bytes = (size_t)p->run * (size_t)es;
    const int32_t *t0 = offsets;
    const int32_t *t1 = t0 + p->count[0];
    const int32_t *t2 = t1 + p->count[1];
    const int32_t *t3 = t2 + p->count[2];
    const int32_t *t4 = t3 + p->count[3];
    const int32_t *t5 = t4 + p->count[4];
    const uint8_t *base = (const uint8_t *)input;
    uint8_t *out = (uint8_t *)output;

    for (int32_t i0 = 0; i0 < p->count[0]; i0++) {
        const int32_t o0 = p->start + t0[i0];
        for (int32_t i1 = 0; i1 < p->count[1]; i1++) {
            const int32_t o1 = o0 + t1[i1];
            for (int32_t i2 = 0; i2 < p->count[2]; i2++) {
                const int32_t o2 = o1 + t2[i2];
                for (int32_t i3 = 0; i3 < p->count[3]; i3++) {
                    const int32_t o3 = o2 + t3[i3];
                    for (int32_t i4 = 0; i4 < p->count[4]; i4++) {
                        const int32_t o4 = o3 + t4[i4];
                        for (int32_t i5 = 0; i5 < p->count[5]; i5++) {
                            copy_run(out, base + (size_t)(o4 + t5[i5]) * (size_t)es, run_bytes);
                            out += run_bytes;
                        }
                    }
                }
            }
        }
    }
}
