/*
 * Resource variables (TFLM's READ_VARIABLE / ASSIGN_VARIABLE with CALL_ONCE): byte copies between
 * a state kept between runs and the arena.
 */
#ifndef MCU_VARIABLE_H
#define MCU_VARIABLE_H

#include <stdint.h>

/** The variable's size in bytes. */
typedef struct {
    int32_t bytes;
} mcu_variable_params;

/** output = state. With an initial value (init != NULL), a flag byte of 0 first copies init into
    the state and sets the flag to 1 (the first read after startup or reset). */
void mcu_read_variable(const mcu_variable_params *p, void *state, void *flag, const void *init, void *output);

/** state = value; `after` (the variable's read, or NULL) is only an ordering argument. *done = 1. */
void mcu_assign_variable(const mcu_variable_params *p, void *state, const void *value, const void *after, void *done);

#endif /* MCU_VARIABLE_H */
