/*
 * Portable ARG_MAX and ARG_MIN (TFLM's ArgMinMax on int8): the int32 index of the largest /
 * smallest raw value along one axis; the first index wins a tie.
 */
#ifndef MCU_ARG_MIN_MAX_H
#define MCU_ARG_MIN_MAX_H

#include <stdint.h>

/** Parameters of mcu_arg_max_s8 / mcu_arg_min_s8: the input as [outer, axis_size, inner], the
    output as [outer, inner]. */
typedef struct {
    int32_t outer, axis_size, inner;  /**< >= 1 */
} mcu_arg_min_max_params;

void mcu_arg_max_s8(const mcu_arg_min_max_params *p, const int8_t *input, int32_t *output);
void mcu_arg_min_s8(const mcu_arg_min_max_params *p, const int8_t *input, int32_t *output);

#endif /* MCU_ARG_MIN_MAX_H */
