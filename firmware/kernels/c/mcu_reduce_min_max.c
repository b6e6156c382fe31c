/* Portable REDUCE_MAX / REDUCE_MIN: the output starts at TFLM's initial value (-128 / 127); the
   input is walked in order and each element folded into its output element, a whole innermost run
   at a time (one output element when the run is reduced, a row of them when it is kept). */
#include "mcu_reduce_min_max.h"

#include <string.h>

#define MCU_REDUCE_KERNEL(name, init, better)                                                         \
    void name(const mcu_reduce_params *p, const int8_t *input, int8_t *output)                        \
    {                                                                                                 \
        const int32_t *d = p->dims;                                                                   \
        const int32_t *s = p->out_stride;                                                             \
        const int32_t n5 = d[5];                                                                      \
        memset(output, (init) & 0xFF, (size_t)p->out_size);                                           \
        for (int32_t i0 = 0; i0 < d[0]; i0++) {                                                       \
            for (int32_t i1 = 0; i1 < d[1]; i1++) {                                                   \
                for (int32_t i2 = 0; i2 < d[2]; i2++) {                                               \
                    for (int32_t i3 = 0; i3 < d[3]; i3++) {                                           \
                        for (int32_t i4 = 0; i4 < d[4]; i4++) {                                       \
                            int8_t *out = output + i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] +     \
                                          i4 * s[4];                                                  \
                            if (s[5] == 0) {                                                          \
                                int8_t m = *out;                                                      \
                                for (int32_t j = 0; j < n5; j++) {                                    \
                                    m = input[j] better m ? input[j] : m;                             \
                                }                                                                     \
                                *out = m;                                                             \
                            } else {                                                                  \
                                for (int32_t j = 0; j < n5; j++) {                                    \
                                    out[j] = input[j] better out[j] ? input[j] : out[j];              \
                                }                                                                     \
                            }                                                                         \
                            input += n5;                                                              \
                        }                                                                             \
                    }                                                                                 \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
    }

MCU_REDUCE_KERNEL(mcu_reduce_max_s8, -128, >)
MCU_REDUCE_KERNEL(mcu_reduce_min_s8, 127, <)
