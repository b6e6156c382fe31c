/* Portable int8 LOG_SOFTMAX: TFLM's LogSoftmaxQuantized<int8_t> row by row, with gemmlowp's
   fixed-point exp and log (mcuforge_gemmlowp.h; ir/ops/_fixedpoint.py is their numpy model). */
#include "mcu_log_softmax_s8.h"

#include "mcuforge_gemmlowp.h"

#define INPUT_INTEGER_BITS 5         /* differences: Q5.26 */
#define ACCUMULATION_INTEGER_BITS 12 /* sum of exps: Q12.19 */
#define OUTPUT_INTEGER_BITS 4

static void log_softmax_row(const mcu_log_softmax_params *p, const int8_t *in, int8_t *out)
{
    const int32_t depth = p->depth;
    int32_t max = in[0];
    for (int32_t c = 1; c < depth; c++) {
        max = in[c] > max ? in[c] : max;
    }

    int32_t sum_of_exps = 0; /* Q12.19; at most depth * 2^19 < 2^31 */
    for (int32_t c = 0; c < depth; c++) {
        const int32_t diff = (int32_t)in[c] - max;
        if (diff >= p->diff_min) {
            const int32_t diff_q5 = mcu_requantize(diff, p->input_multiplier, p->input_left_shift);
            const int32_t e = mcu_exp_on_negative_values(diff_q5, INPUT_INTEGER_BITS);
            sum_of_exps = mcu_add_wrap(sum_of_exps, mcu_rdbpot(e, ACCUMULATION_INTEGER_BITS));
        }
    }

    const int32_t log_sum =
        mcu_log_x_for_x_greater_than_or_equal_to_1(sum_of_exps, INPUT_INTEGER_BITS, ACCUMULATION_INTEGER_BITS);
    const int32_t scaled_back = mcu_requantize(mcu_add_wrap(log_sum, INT32_MIN), p->reverse_scaling_divisor,
                                               -p->reverse_scaling_right_shift);
    const int32_t cut_off = p->diff_min - 1 > scaled_back ? p->diff_min - 1 : scaled_back;

    for (int32_t c = 0; c < depth; c++) {
        const int32_t diff = (int32_t)in[c] - max;
        int32_t result = INT8_MIN;
        if (diff > cut_off) {
            const int32_t diff_q5 = mcu_requantize(diff, p->input_multiplier, p->input_left_shift);
            result = mcu_rdbpot(mcu_sub_wrap(diff_q5, log_sum), 31 - INPUT_INTEGER_BITS - OUTPUT_INTEGER_BITS) +
                     INT8_MAX;
            result = result > INT8_MAX ? INT8_MAX : (result < INT8_MIN ? INT8_MIN : result);
        }
        out[c] = (int8_t)result;
    }
}

void mcu_log_softmax_s8(const mcu_log_softmax_params *p, const int8_t *input, int8_t *output)
{
    for (int32_t r = 0; r < p->rows; r++) {
        log_softmax_row(p, input + r * p->depth, output + r * p->depth);
    }
}
