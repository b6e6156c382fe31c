/* Portable int8 DIV: TFLM's DivElementwise per element over the broadcast walk. */
#include "mcu_div_s8.h"

#include "mcuforge_gemmlowp.h"

/** gemmlowp RoundingDivideByPOT for an exponent in [0, 63], as TFLM computes it on x86-64: from 32
    on its int32 mask is all ones and the shift count is taken modulo 32. */
static int32_t rounding_divide_by_pot_x86(int32_t x, int exponent)
{
    if (exponent < 32) {
        return mcu_rdbpot(x, exponent);
    }
    const int32_t threshold = -1 + (x < 0 ? 1 : 0);
    return (x >> (exponent & 31)) + (x > threshold ? 1 : 0);
}

static int8_t divide(const mcu_div_params *p, int32_t a, int32_t b)
{
    if (b < 0) {
        a = -a;
        b = -b;
    }
    int recip_shift;
    const int32_t inverse = mcu_get_reciprocal(b, 31, &recip_shift);
    const int headroom = mcu_clsb32(a);
    const int32_t quotient = mcu_srdhm((int32_t)((uint32_t)a << headroom), inverse);
    const int exponent = headroom + recip_shift - (int)p->output_shift;
    int32_t out = rounding_divide_by_pot_x86(mcu_srdhm(quotient, p->output_multiplier), exponent) + p->output_offset;
    out = out < p->act_min ? p->act_min : out;
    out = out > p->act_max ? p->act_max : out;
    return (int8_t)out;
}

void mcu_div_s8(const mcu_div_params *p, const int8_t *input1, const int8_t *input2, int8_t *output)
{
    MCU_BROADCAST_FOR_EACH(&p->shape, i1, i2, {
        *output++ = divide(p, (int32_t)input1[i1] + p->input1_offset, (int32_t)input2[i2] + p->input2_offset);
    });
}
