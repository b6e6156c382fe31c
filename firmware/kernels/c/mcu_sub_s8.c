/* Portable int8 SUB with broadcasting: the shared body in mcu_kernels_c_arith.h. */
#include "mcu_kernels_c.h"

void mcu_sub_s8(const mcu_sub_params *p, const int8_t *input1, const int8_t *input2, int8_t *output)
{
    mcu_add_sub_s8(p, input1, input2, output, -1);
}
