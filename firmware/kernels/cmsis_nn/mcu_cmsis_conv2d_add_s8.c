/*
 * A convolution through im2col and the ADD of a residual connection, fused: the convolution's
 * output pixels block by block into a stage in scratch (mcu_cmsis_conv2d_s8's first/count), each
 * block added at once to the residual's same pixels (mcu_cmsis_add_s8), so the convolution's output
 * tensor is never stored whole. Every path (plain, DSP, Helium) is the two kernels' own.
 */
/* mcuforge kernel calls: mcu_cmsis_conv2d_s8.c mcu_cmsis_add_s8.c */
#include "mcu_kernels_cmsis_nn.h"

void mcu_cmsis_conv2d_add_s8(const mcu_cmsis_conv_add_params *p, const int8_t *residual, const int8_t *input,
                             const int8_t *weights, const int32_t *bias, const int32_t *multiplier,
                             const int32_t *shift, const int32_t *rq, const int32_t *add_table,
                             const int32_t *add_rq, int16_t *scratch, int8_t *output)
{
    mcu_cmsis_conv_params c = {
        .in_h = p->in_h, .in_w = p->in_w, .in_c = p->in_c, .out_h = p->out_h, .out_w = p->out_w, .out_c = p->out_c,
        .k_h = p->k_h, .k_w = p->k_w, .stride_h = p->stride_h, .stride_w = p->stride_w, .dil_h = p->dil_h,
        .dil_w = p->dil_w, .pad_top = p->pad_top, .pad_left = p->pad_left, .input_offset = p->input_offset,
        .output_offset = p->output_offset, .act_min = p->act_min, .act_max = p->act_max,
        .pair_offset = p->pair_offset, .first = 0, .count = 0,
    };
    mcu_cmsis_add_params a = {
        .size = 0, .input1_offset = p->add_input1_offset, .input2_offset = p->add_input2_offset,
        .left_shift = p->add_left_shift, .input1_multiplier = p->add_input1_multiplier,
        .input1_shift = p->add_input1_shift, .input2_multiplier = p->add_input2_multiplier,
        .input2_shift = p->add_input2_shift, .output_multiplier = p->add_output_multiplier,
        .output_shift = p->add_output_shift, .output_offset = p->add_output_offset, .act_min = p->add_act_min,
        .act_max = p->add_act_max,
    };
    int8_t *const stage = (int8_t *)scratch + p->stage_offset;
    const int32_t pixels = p->out_h * p->out_w;
    for (int32_t n = 0; n < pixels; n += p->block) {
        c.first = n;
        c.count = pixels - n < p->block ? pixels - n : p->block;
        mcu_cmsis_conv2d_s8(&c, input, weights, bias, multiplier, shift, rq, scratch, stage);
        a.size = c.count * p->out_c;
        const int8_t *const r = residual + n * p->out_c;
        mcu_cmsis_add_s8(&a, p->conv_first ? stage : r, p->conv_first ? r : stage, add_table, add_rq,
                         output + n * p->out_c);
    }
}
