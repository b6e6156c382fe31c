/* Portable ARG_MAX / ARG_MIN: for every (outer, inner) position, walk the axis from index 0 and
   take a later index only when its value is strictly better (TFLM's tie rule). */
#include "mcu_arg_min_max.h"

#define MCU_ARG_KERNEL(name, better)                                                         \
    void name(const mcu_arg_min_max_params *p, const int8_t *input, int32_t *output)         \
    {                                                                                        \
        const int32_t n = p->axis_size, inner = p->inner;                                    \
        for (int32_t o = 0; o < p->outer; o++) {                                             \
            const int8_t *block = input + o * n * inner;                                     \
            for (int32_t i = 0; i < inner; i++) {                                            \
                int8_t best = block[i];                                                      \
                int32_t at = 0;                                                              \
                for (int32_t k = 1; k < n; k++) {                                            \
                    const int8_t v = block[k * inner + i];                                   \
                    if (v better best) {                                                     \
                        best = v;                                                            \
                        at = k;                                                              \
                    }                                                                        \
                }                                                                            \
                *output++ = at;                                                              \
            }                                                                                \
        }                                                                                    \
    }

MCU_ARG_KERNEL(mcu_arg_max_s8, >)
MCU_ARG_KERNEL(mcu_arg_min_s8, <)
