/*
 * Portable BROADCAST_ARGS (TFLM's broadcast_args.cc): the shape two shape vectors broadcast to,
 * walking from the last dimension, a missing one counting as 1. Dimensions that do not broadcast
 * (TFLM aborts) give input 1's.
 */
#ifndef MCU_BROADCAST_ARGS_H
#define MCU_BROADCAST_ARGS_H

#include <stdint.h>

/** Lengths of the two shape vectors and of the output, out_size = max(size1, size2). */
typedef struct {
    int32_t size1;
    int32_t size2;
    int32_t out_size;
} mcu_broadcast_args_params;

void mcu_broadcast_args_s32(const mcu_broadcast_args_params *p, const int32_t *shape1, const int32_t *shape2,
                            int32_t *output);
void mcu_broadcast_args_s64(const mcu_broadcast_args_params *p, const int64_t *shape1, const int64_t *shape2,
                            int64_t *output);

#endif /* MCU_BROADCAST_ARGS_H */
