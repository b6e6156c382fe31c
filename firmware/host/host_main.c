/*
 * Host harness for generated models (tests, `mcuforge verify --on host`, the random-model batches):
 * one executable holding one or more models (each compiled from host_model.c, registered here).
 *
 * Usage: host_model [STEPS [SETS...]]. With one model and no SETS it reads input sets from stdin
 * until EOF; otherwise model k reads SETS[k] input sets, the models in order. For each set: every
 * input's raw bytes from stdin, a run, every output's raw bytes to stdout. A model with state is
 * reset after every STEPS sets when STEPS > 0 (sequences of STEPS runs). Exit code 0; 1 on a short
 * read or a bad argument; 2 when a model fails.
 */
#include <stdio.h>
#include <stdlib.h>

#include "host_models.h"

static mcu_host_entry models[MCU_HOST_MAX_MODELS];
static int num_models;

void mcu_host_register(int index, mcu_host_entry entry)
{
    if (index >= 0 && index < MCU_HOST_MAX_MODELS) {
        models[index] = entry;
        num_models = index + 1 > num_models ? index + 1 : num_models;
    }
}

static int count(const char *arg, long *value)
{
    char *end = NULL;
    *value = strtol(arg, &end, 10);
    return *arg != '\0' && *end == '\0' && *value >= 0;
}

int main(int argc, char **argv)
{
    long steps = 0;
    if ((argc > 1 && !count(argv[1], &steps)) || (argc > 2 && argc - 2 != num_models)) {
        fprintf(stderr, "usage: %s [STEPS [SETS x %d]]  (counts >= 0)\n", argv[0], num_models);
        return 1;
    }
    for (int k = 0; k < num_models; k++) {
        long sets = -1;
        if (models[k] == NULL || (argc > 2 && !count(argv[2 + k], &sets)) || (argc <= 2 && num_models > 1)) {
            fprintf(stderr, "%s: model %d missing, or several models without set counts\n", argv[0], k);
            return 1;
        }
        const int rc = models[k](stdin, stdout, sets, steps);
        if (rc) {
            return rc;
        }
    }
    fflush(stdout);
    return 0;
}
