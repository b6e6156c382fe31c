/*
 * int8 TRANSPOSE on the cmsis-nn target: TFLM's reference Transpose (elements moved, no arithmetic) as
 * an output-order walk of the input, the axes merged at compile time (planner/targets/cmsis_nn/
 * transpose.py, _portable.gather_plan) into at most five: output element (i0, .., i4), row-major, is
 * input element start + i0 * step0 + .. + i4 * step4. The two innermost axes form planes:
 *   - step4 == 1: rows copied whole;
 *   - Helium: each output row gathered eight elements per VLDRB gather (16-bit offsets) and stored
 *     with one VSTRB;
 *   - DSP: when step3 == 1 (a 2-D transpose inside: NHWC <-> NCHW), 4x4 byte blocks, four words
 *     loaded, transposed in registers (masks, PKHBT/PKHTB), four words stored; else four strided
 *     bytes packed per word stored;
 *   - plain C: element by element.
 */
#ifndef MCU_CMSIS_TRANSPOSE_S8_H
#define MCU_CMSIS_TRANSPOSE_S8_H

#include <stdint.h>

typedef struct {
    int32_t start;                                  /* input element of output element 0, >= 0 */
    int32_t count0, count1, count2, count3, count4; /* output dims after merging, >= 1 */
    int32_t step0, step1, step2, step3, step4;      /* input element step per output axis, >= 0 */
} mcu_cmsis_transpose_params;

void mcu_cmsis_transpose_s8(const mcu_cmsis_transpose_params *p, const int8_t *input, int8_t *output);

#endif /* MCU_CMSIS_TRANSPOSE_S8_H */
