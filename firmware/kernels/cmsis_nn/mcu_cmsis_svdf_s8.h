/*
 * int8 SVDF with an int16 state on the cmsis-nn target: TFLM's EvalIntegerSvdfReference<int16_t>
 * (as the portable mcu_svdf_s8_s16), the feature matmul four filters at a time
 * (mcu_cmsis_rows4_dot), the time matmul two int16 pairs per SMLAD.
 *
 * Precomputed: feature weights [filters][input_stride] zero-padded to a multiple of four, with
 * feature_bias = -input_zero_point * sum(row) (the input offset folded); time_bias[f] =
 * -state_zero_point * sum(time weights of f) (the state offset folded: both sums wrap in int32 alike);
 * feature_rq: the fast requantization record of the feature matmul ({0, 0, 0}: none proven).
 */
#ifndef MCU_CMSIS_SVDF_S8_H
#define MCU_CMSIS_SVDF_S8_H

#include <stdint.h>

/** Scratch: the input frame in a zero-padded row. */
#define MCU_CMSIS_SVDF_S8_SCRATCH_BYTES(input_stride) (input_stride)

typedef struct {
    int32_t batches;            /**< >= 1 */
    int32_t inputs;             /**< features per frame, >= 1 */
    int32_t input_stride;       /**< inputs rounded up to a multiple of 4 */
    int32_t filters;            /**< rank * units */
    int32_t memory;             /**< frames kept per filter, >= 1 */
    int32_t rank;               /**< filters per unit */
    int32_t units;
    int32_t state_zero_point;   /**< int16 */
    int32_t output_offset;      /**< output zero point, in [-128, 127] */
    int32_t feature_multiplier; /**< input * feature weight scale / state scale */
    int32_t feature_shift;
    int32_t time_multiplier;    /**< state * time weight scale / output scale */
    int32_t time_shift;
} mcu_cmsis_svdf_params;

void mcu_cmsis_svdf_s8_s16(const mcu_cmsis_svdf_params *p, const int8_t *input, const int8_t *feature_weights,
                           const int16_t *time_weights, const int32_t *bias, int16_t *state,
                           const int32_t *feature_bias, const int32_t *time_bias, const int32_t *feature_rq,
                           void *scratch, int8_t *output);

#endif /* MCU_CMSIS_SVDF_S8_H */
