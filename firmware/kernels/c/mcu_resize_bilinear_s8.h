/*
 * Portable RESIZE_BILINEAR on int8 (TFLM's ResizeBilinearInteger): four taps per output pixel
 * weighted in 10-bit fixed point, the sum rounded half away from zero from 20 bits; raw values, no
 * requantization.
 */
#ifndef MCU_RESIZE_BILINEAR_S8_H
#define MCU_RESIZE_BILINEAR_S8_H

#include <stdint.h>

/** Parameters of mcu_resize_bilinear_s8, NHWC. */
typedef struct {
    int32_t batches, in_h, in_w, channels;  /**< input shape, >= 1 */
    int32_t out_h, out_w;                   /**< output height and width, >= 1 */
} mcu_resize_bilinear_params;

/** rows: out_h triples (lo, hi, w) and cols: out_w triples, computed at compile time with TFLM's
    integer rule: taps lo, hi in [0, in) and the weight w of hi (that of lo is 1024 - w), |w| and
    |1024 - w| at most 2048. Output = round((sum of tap * row weight * column weight) / 2^20). */
void mcu_resize_bilinear_s8(const mcu_resize_bilinear_params *p, const int8_t *input, const int32_t *rows,
                            const int32_t *cols, int8_t *output);

#endif /* MCU_RESIZE_BILINEAR_S8_H */
