/* Portable FILL / ZEROS_LIKE: the first element copied, then the filled part doubled until the
   output is full (log2(size) memcpy calls). */
#include "mcu_fill.h"

#include <string.h>

void mcu_fill(const mcu_fill_params *p, const void *value, void *output)
{
    const size_t total = (size_t)p->size * (size_t)p->elem_size;
    uint8_t *out = (uint8_t *)output;
    size_t done = (size_t)p->elem_size;

    memcpy(out, value, done);
    while (done < total) {
        const size_t n = done < total - done ? done : total - done;
        memcpy(out + done, out, n);
        done += n;
    }
}
