/*
 * mcuforge portable reference kernels (target "c"): every supported op, bit-exact with the
 * TensorFlow Lite Micro reference kernels. Plain C, no SIMD: the readable reference.
 *
 * Conventions: mcu_<op>_<dtype>(params, inputs..., constants..., output); parameters in a const
 * struct the code generator fills at compile time; scratch memory, when needed, passed by the caller.
 * Declarations live in one header per op family, all included here.
 */
#ifndef MCU_KERNELS_C_H
#define MCU_KERNELS_C_H

#include <stdint.h>

#include "mcuforge_fixedpoint.h"

/** Parameters of mcu_conv_2d_s8. Offsets are the negated input zero point (input_offset in
    [-127, 128]) and the output zero point; act_min/act_max the fused activation clamp. */
typedef struct {
    int32_t batches, in_h, in_w, in_c, out_h, out_w, out_c;
    int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
    int32_t input_offset, output_offset, act_min, act_max;
} mcu_conv_2d_params;

/** int8 NHWC convolution, OHWI per-channel weights, optional int32 bias (NULL for none). */
void mcu_conv_2d_s8(const mcu_conv_2d_params *p, const int8_t *input, const int8_t *weights, const int32_t *bias,
                    const int32_t *multiplier, const int32_t *shift, int8_t *output);

#include "mcu_kernels_c_nn.h"
#include "mcu_kernels_c_arith.h"
#include "mcu_kernels_c_shape.h"
#include "mcu_kernels_c_s16.h"

#endif /* MCU_KERNELS_C_H */
