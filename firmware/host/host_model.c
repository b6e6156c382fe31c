/*
 * One generated model in a host harness executable (tests and `mcuforge verify --on host`): compiled
 * once per model with that model's directory first on the include path (its mcuforge_model.h) and
 * -DMCU_HOST_INDEX=<k>; it registers its entry in host_main.c's table before main runs.
 *
 * The entry runs `sets` input sets of the model: for each, every input's raw bytes from `in` in
 * order, a run, every output's raw bytes to `out`. A model with state (LSTM, SVDF) carries it from
 * set to set; with `steps` > 0 it is reset (MCU_MODEL_RESET) after every `steps` sets, so the sets
 * form sequences. Returns 0, 1 on a short read, 2 when the model fails; `sets` < 0 reads to EOF.
 */
#include <stdint.h>
#include <stdio.h>

#include "host_models.h"
#include "mcuforge_model.h"

#ifndef MCU_HOST_INDEX
#error "compile with -DMCU_HOST_INDEX=<model index>"
#endif

#define MCU_HOST_CAT2(a, b) a##b
#define MCU_HOST_CAT(a, b) MCU_HOST_CAT2(a, b)
#define MCU_HOST_ENTRY MCU_HOST_CAT(mcu_host_model_, MCU_HOST_INDEX)

static const uint32_t input_sizes[] = MCU_MODEL_INPUT_SIZES;
static const uint32_t output_sizes[] = MCU_MODEL_OUTPUT_SIZES;

static int MCU_HOST_ENTRY(FILE *in, FILE *out, long sets, long steps)
{
    for (long done = 0; sets < 0 || done < sets; done++) {
        for (int i = 0; i < MCU_MODEL_NUM_INPUTS; i++) {
            size_t got = fread(MCU_MODEL_INPUT_PTR(i), 1, input_sizes[i], in);
            if (got == 0 && i == 0 && sets < 0 && feof(in)) {
                return 0;
            }
            if (got != input_sizes[i]) {
                fprintf(stderr, "%s: short read on input %d: %zu of %u bytes\n", MCU_MODEL_NAME, i, got,
                        (unsigned)input_sizes[i]);
                return 1;
            }
        }
#ifdef MCU_MODEL_RESET
        if (steps > 0 && done > 0 && done % steps == 0) {
            MCU_MODEL_RESET();
        }
#else
        (void)steps;
#endif
        const int rc = MCU_MODEL_RUN();
        if (rc != 0) {
            fprintf(stderr, "%s: model run failed: it returned %d%s\n", MCU_MODEL_NAME, rc,
                    rc == -2 ? " (an index input out of range; TFLM's invoke fails there too)" : "");
            return 2;
        }
        for (int i = 0; i < MCU_MODEL_NUM_OUTPUTS; i++) {
            fwrite(MCU_MODEL_OUTPUT_PTR(i), 1, output_sizes[i], out);
        }
    }
    return 0;
}

__attribute__((constructor)) static void MCU_HOST_CAT(register_, MCU_HOST_ENTRY)(void)
{
    mcu_host_register(MCU_HOST_INDEX, MCU_HOST_ENTRY);
}
