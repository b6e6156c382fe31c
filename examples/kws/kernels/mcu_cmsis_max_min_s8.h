/*
 * int8 MAXIMUM and MINIMUM of same-shape tensors, or of a tensor and one element (TFLM's
 * MaximumMinimumBroadcastSlow on the raw values: for integers a > b ? a : b is the larger value
 * whichever operand comes first). Helium: 16 lanes per VMAX/VMIN; DSP: 4 lanes per SSUB8 + SEL.
 */
#ifndef MCU_CMSIS_MAX_MIN_S8_H
#define MCU_CMSIS_MAX_MIN_S8_H

#include <stdint.h>

/** Parameters of mcu_cmsis_maximum_s8 / mcu_cmsis_minimum_s8: `size` output elements (>= 0);
    `scalar` 0 when both inputs have `size` elements, 1 when input 1 is one element (broadcast),
    2 when input 2 is. */
typedef struct {
    int32_t size, scalar;
} mcu_cmsis_max_min_params;

/** output[i] = max(input1[i], input2[i]) (one element of a scalar input for every i). The output
    may be placed over either input: each element is read before it is written. */
void mcu_cmsis_maximum_s8(const mcu_cmsis_max_min_params *p, const int8_t *input1, const int8_t *input2,
                          int8_t *output);

/** output[i] = min(input1[i], input2[i]), as mcu_cmsis_maximum_s8. */
void mcu_cmsis_minimum_s8(const mcu_cmsis_max_min_params *p, const int8_t *input1, const int8_t *input2,
                          int8_t *output);

#endif /* MCU_CMSIS_MAX_MIN_S8_H */
