/* Resource variables: copies between the state region and the arena. */
#include "mcu_variable.h"

#include <string.h>

void mcu_read_variable(const mcu_variable_params *p, void *state, void *flag, const void *init, void *output)
{
    if (init != NULL && *(uint8_t *)flag == 0) {
        memcpy(state, init, (size_t)p->bytes);
        *(uint8_t *)flag = 1;
    }
    memcpy(output, state, (size_t)p->bytes);
}

void mcu_assign_variable(const mcu_variable_params *p, void *state, const void *value, const void *after, void *done)
{
    (void)after;
    memcpy(state, value, (size_t)p->bytes);
    *(uint8_t *)done = 1;
}
