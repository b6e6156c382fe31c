/*
 * Portable L2_POOL_2D (TFLM's l2_pool_2d.cc, reference_ops::L2Pool): float32 NHWC, per window
 * (clipped to the input) sqrtf(sum of v * v / count), summed row by row in float32, then clamped
 * to [act_min, act_max].
 */
#ifndef MCU_L2_POOL_2D_F32_H
#define MCU_L2_POOL_2D_F32_H

#include <stdint.h>

/** Window geometry as the other pooling kernels: sizes and strides >= 1, paddings >= 0; act_min
    and act_max the fused activation's float range (NONE: -FLT_MAX, FLT_MAX). */
typedef struct {
    int32_t batches, in_h, in_w, channels, out_h, out_w;
    int32_t filter_h, filter_w, stride_h, stride_w, pad_top, pad_left;
    float act_min, act_max;
} mcu_l2_pool_2d_params;

void mcu_l2_pool_2d_f32(const mcu_l2_pool_2d_params *p, const float *input, float *output);

#endif /* MCU_L2_POOL_2D_F32_H */
