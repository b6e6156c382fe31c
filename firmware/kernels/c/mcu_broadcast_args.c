/* Portable BROADCAST_ARGS, one function per shape element type. */
#include "mcu_broadcast_args.h"

#define MCU_BROADCAST_ARGS(suffix, type)                                                                   \
    void mcu_broadcast_args_##suffix(const mcu_broadcast_args_params *p, const type *shape1,              \
                                     const type *shape2, type *output)                                    \
    {                                                                                                      \
        for (int32_t i = 0; i < p->out_size; i++) {                                                        \
            const int32_t k1 = p->size1 - 1 - i;                                                           \
            const int32_t k2 = p->size2 - 1 - i;                                                           \
            const type d1 = k1 >= 0 ? shape1[k1] : 1;                                                      \
            const type d2 = k2 >= 0 ? shape2[k2] : 1;                                                      \
            output[p->out_size - 1 - i] = d1 == 1 ? d2 : d1;                                               \
        }                                                                                                  \
    }

MCU_BROADCAST_ARGS(s32, int32_t)
MCU_BROADCAST_ARGS(s64, int64_t)
