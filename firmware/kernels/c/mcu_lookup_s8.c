/* Portable int8 table lookup (the op's arithmetic is in the table). */
#include "mcu_lookup_s8.h"

void mcu_lookup_s8(const mcu_table_params *p, const int8_t *input, const int8_t *table, int8_t *output)
{
    mcu_table_lookup_s8(p->size, input, table, output);
}
