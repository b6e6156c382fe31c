/*
 * Host harness for a generated model (tests and `mcuforge verify --on host`).
 *
 * Usage: host_model [STEPS]. Reads input sets from stdin until EOF: for each set, every input's raw
 * bytes in order; runs the model; writes every output's raw bytes in order to stdout. A model with
 * state (LSTM, SVDF) carries it from set to set; with STEPS > 0 the harness resets it
 * (MCU_MODEL_RESET) after every STEPS sets, so the sets form sequences of STEPS runs each. Exit code
 * 0, or 1 on a short read in the middle of a set or a bad argument, 2 when the model fails.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mcuforge_model.h"

static const uint32_t input_sizes[] = MCU_MODEL_INPUT_SIZES;
static const uint32_t output_sizes[] = MCU_MODEL_OUTPUT_SIZES;

int main(int argc, char **argv)
{
    long steps = 0;
    if (argc > 1) {
        char *end = NULL;
        steps = strtol(argv[1], &end, 10);
        if (argc > 2 || *argv[1] == '\0' || *end != '\0' || steps < 0) {
            fprintf(stderr, "usage: %s [STEPS]  (STEPS >= 0: reset the model's state after every STEPS input sets)\n",
                    argv[0]);
            return 1;
        }
    }
    for (long done = 0;; done++) {
        for (int i = 0; i < MCU_MODEL_NUM_INPUTS; i++) {
            size_t got = fread(MCU_MODEL_INPUT_PTR(i), 1, input_sizes[i], stdin);
            if (got == 0 && i == 0 && feof(stdin)) {
                return 0;
            }
            if (got != input_sizes[i]) {
                fprintf(stderr, "short read on input %d: %zu of %u bytes\n", i, got, (unsigned)input_sizes[i]);
                return 1;
            }
        }
#ifdef MCU_MODEL_RESET
        if (steps > 0 && done > 0 && done % steps == 0) {
            MCU_MODEL_RESET();
        }
#endif
        if (MCU_MODEL_RUN() != 0) {
            fprintf(stderr, "model run failed\n");
            return 2;
        }
        for (int i = 0; i < MCU_MODEL_NUM_OUTPUTS; i++) {
            fwrite(MCU_MODEL_OUTPUT_PTR(i), 1, output_sizes[i], stdout);
        }
        fflush(stdout);
    }
}
