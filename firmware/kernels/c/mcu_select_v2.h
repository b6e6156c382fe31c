/*
 * Portable SELECT_V2 (TFLM's select.cc): out = cond ? x : y element-wise, the condition bool (one
 * byte, 0 or 1), x, y and out of one element type whose values are copied as stored, the three
 * inputs broadcasting against each other.
 */
#ifndef MCU_SELECT_V2_H
#define MCU_SELECT_V2_H

#include <stdint.h>

#define MCU_SELECT_V2_RANK 6

/** The output is the row-major walk over dims[] (each >= 1); along axis k the condition, x and y
    move stride_cond[k], stride_x[k] and stride_y[k] elements (>= 0; 0 where broadcast). elem_size
    is 1, 2 or 4 bytes. */
typedef struct {
    int32_t elem_size;
    int32_t dims[MCU_SELECT_V2_RANK];
    int32_t stride_cond[MCU_SELECT_V2_RANK];
    int32_t stride_x[MCU_SELECT_V2_RANK];
    int32_t stride_y[MCU_SELECT_V2_RANK];
} mcu_select_v2_params;

void mcu_select_v2(const mcu_select_v2_params *p, const uint8_t *cond, const void *x, const void *y, void *output);

#endif /* MCU_SELECT_V2_H */
