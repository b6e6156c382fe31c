/*
 * Portable ADD_N (TFLM's add_n.cc, reference_ops::AddN): the element-wise sum of num_inputs
 * same-shape tensors, given as an array of input pointers. Both kernels read every input's element
 * before writing the output's, so the output may start at input 0's first byte.
 */
#ifndef MCU_ADD_N_H
#define MCU_ADD_N_H

#include <stdint.h>

/** Parameters of mcu_add_n_f32. */
typedef struct {
    int32_t num_inputs; /**< >= 2 */
    int32_t size;       /**< elements per tensor, >= 0 */
} mcu_add_n_f32_params;

/** Parameters of mcu_add_n_s8 (TFLM's integer AddN): per element
        acc = r(input_offset) + sum_j r(x_j + input_offset),  r(v) = requantize(v << left_shift, input_multiplier, input_shift)
        out = clamp(requantize(acc, output_multiplier, output_shift) + output_offset, -128, 127).
    input_offset is the negated shared input zero point, in [-127, 128]; left_shift is 20; the
    multipliers are Q0.31 with shifts in [-31, 0]; the compiler guarantees acc fits in int32. */
typedef struct {
    int32_t num_inputs; /**< >= 2 */
    int32_t size;       /**< elements per tensor, >= 0 */
    int32_t input_offset, left_shift, input_multiplier, input_shift;
    int32_t output_multiplier, output_shift, output_offset;
} mcu_add_n_s8_params;

/** float32: x = 0, then x += inputs[j][i] for j in order. */
void mcu_add_n_f32(const mcu_add_n_f32_params *p, const void *const inputs[], void *output);
void mcu_add_n_s8(const mcu_add_n_s8_params *p, const void *const inputs[], void *output);

#endif /* MCU_ADD_N_H */
