/* The table of models in a host harness executable (host_main.c, host_model.c). */
#ifndef MCU_HOST_MODELS_H
#define MCU_HOST_MODELS_H

#include <stdio.h>

#define MCU_HOST_MAX_MODELS 256

/** Runs `sets` input sets of one model from `in` to `out` (sets < 0: to EOF), resetting its state
    every `steps` sets when steps > 0; 0, or an exit code. */
typedef int (*mcu_host_entry)(FILE *in, FILE *out, long sets, long steps);

void mcu_host_register(int index, mcu_host_entry entry);

#endif /* MCU_HOST_MODELS_H */
