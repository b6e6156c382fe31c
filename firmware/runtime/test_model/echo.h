/* The stand-in test model's own API, shaped like a generated <prefix>.h. */
#ifndef ECHO_H
#define ECHO_H

#include <stdint.h>

#define ECHO_ARENA_SIZE 160
#define ECHO_NUM_INPUTS 2
#define ECHO_NUM_OUTPUTS 2
#define ECHO_NUM_LAYERS 2

#ifndef ECHO_BURN_ITERATIONS /* layer 1 burns 2 * this many instructions */
#define ECHO_BURN_ITERATIONS 50000
#endif

int echo_run(void);
void *echo_input(int i);
const void *echo_output(int i);
void echo_set_profiler(void (*hook)(int layer));
void echo_set_arena(uint8_t *arena); /* with -DECHO_EXTERNAL_ARENA: no built-in arena */

#endif /* ECHO_H */
