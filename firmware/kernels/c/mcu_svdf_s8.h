/*
 * Portable int8 SVDF with an int16 or int8 state: TFLM's EvalIntegerSvdfReference (svdf_common.cc).
 *
 * state is [batches][filters][memory], read and updated in place: every run ages it by one frame
 * (the whole buffer moves one element towards its start), writes the requantized feature matmul
 * of the new input into each filter's last slot, then reduces the time matmul over the rank.
 */
#ifndef MCU_SVDF_S8_H
#define MCU_SVDF_S8_H

#include <stdint.h>

typedef struct {
    int32_t batches;            /**< >= 1 */
    int32_t inputs;             /**< features per frame, >= 1 */
    int32_t filters;            /**< rank * units, >= 1 */
    int32_t memory;             /**< frames kept per filter, >= 1 */
    int32_t rank;               /**< filters per unit, >= 1 */
    int32_t units;              /**< outputs per batch */
    int32_t input_offset;       /**< -input zero point, in [-127, 128] */
    int32_t state_zero_point;   /**< the state's zero point (int8 or int16 range) */
    int32_t output_offset;      /**< output zero point, in [-128, 127] */
    int32_t feature_multiplier; /**< input * feature weight scale / state scale, Q0.31 */
    int32_t feature_shift;      /**< its power of two, in [-31, 30] */
    int32_t time_multiplier;    /**< state * time weight scale / output scale, Q0.31 */
    int32_t time_shift;         /**< its power of two, in [-31, 30] */
} mcu_svdf_params;

void mcu_svdf_s8_s16(const mcu_svdf_params *p, const int8_t *input, const int8_t *feature_weights,
                     const int16_t *time_weights, const int32_t *bias, int16_t *state, int8_t *output);
void mcu_svdf_s8_s8(const mcu_svdf_params *p, const int8_t *input, const int8_t *feature_weights,
                    const int8_t *time_weights, const int32_t *bias, int8_t *state, int8_t *output);

#endif /* MCU_SVDF_S8_H */
