/* The stand-in test model (see mcuforge_model.h). */
#include <stddef.h>
#include <string.h>

#include "echo.h"

/* Arena layout: input 0 at 0 (37 B), input 1 at 48 (5 B), scratch at 64 and 104, outputs at 112 and 152. */
#ifndef ECHO_EXTERNAL_ARENA
static uint8_t echo_default_arena[ECHO_ARENA_SIZE] __attribute__((aligned(16)));
static uint8_t *echo_arena = echo_default_arena;
#else
static uint8_t *echo_arena = NULL;
#endif
static const uint32_t echo_sizes[ECHO_NUM_INPUTS] = {37u, 5u};
static const uint32_t echo_input_offsets[ECHO_NUM_INPUTS] = {0u, 48u};
static const uint32_t echo_scratch_offsets[ECHO_NUM_INPUTS] = {64u, 104u};
static const uint32_t echo_output_offsets[ECHO_NUM_OUTPUTS] = {112u, 152u};
static void (*echo_profiler)(int layer) = NULL;

void echo_set_profiler(void (*hook)(int layer)) { echo_profiler = hook; }
void echo_set_arena(uint8_t *arena) { echo_arena = arena; }

void *echo_input(int i)
{
    return (i >= 0 && i < ECHO_NUM_INPUTS) ? (void *)(echo_arena + echo_input_offsets[i]) : NULL;
}

const void *echo_output(int i)
{
    return (i >= 0 && i < ECHO_NUM_OUTPUTS) ? (const void *)(echo_arena + echo_output_offsets[i]) : NULL;
}

static void echo_burn(uint32_t n)
{
#if defined(__arm__) && defined(__thumb2__)
    /* exactly 2 instructions per iteration */
    __asm__ volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
#elif defined(__arm__) && defined(__thumb__) /* Armv6-M (gcc's divided syntax): the same two instructions */
    __asm__ volatile("1: sub %0, #1\n\tbne 1b" : "+l"(n) : : "cc");
#else
    for (volatile uint32_t i = 0; i < n; i++) {
    }
#endif
}

/* Test hooks: input 1 spelling a command makes the run misbehave on purpose. */
static int echo_special(const char *word)
{
    return memcmp(echo_arena + echo_input_offsets[1], word, 5u) == 0;
}

/* What a stack overflow leaves behind: a write to the lowest words of the stack region. */
extern uint32_t __stack_limit[];

int echo_run(void)
{
    volatile int divisor = 0;
    if (echo_arena == NULL) {
        return -1;
    }
    if (echo_special("fail!")) {
        return 7;
    }
    if (echo_special("over!")) {
        ((volatile uint8_t *)echo_arena)[ECHO_ARENA_SIZE + 2] = 0u; /* a buffer overrun past the arena */
    }
    if (echo_special("undr!")) {
        ((volatile uint8_t *)echo_arena)[-1] = 0u; /* an underrun before it */
    }
    if (echo_special("deep!")) {
        ((volatile uint32_t *)__stack_limit)[3] = 0u; /* the stack reached its limit */
    }
    if (echo_profiler) echo_profiler(0);
    for (int t = 0; t < ECHO_NUM_INPUTS; t++) {
        const uint8_t *in = echo_arena + echo_input_offsets[t];
        uint8_t *scratch = echo_arena + echo_scratch_offsets[t];
        for (uint32_t i = 0; i < echo_sizes[t]; i++) {
            scratch[i] = in[echo_sizes[t] - 1u - i];
        }
    }
    if (echo_profiler) echo_profiler(1);
    for (int t = 0; t < ECHO_NUM_OUTPUTS; t++) {
        const uint8_t *scratch = echo_arena + echo_scratch_offsets[t];
        uint8_t *out = echo_arena + echo_output_offsets[t];
        for (uint32_t i = 0; i < echo_sizes[t]; i++) {
            out[i] = (uint8_t)(scratch[i] + 1u);
        }
    }
    if (echo_special("fault")) {
#if defined(__ARM_ARCH_6M__) /* no divide instruction: an unaligned word load is the fault (HardFault) */
        divisor = (int)*(volatile const uint32_t *)(echo_arena + 1) + divisor;
#else
        divisor = 100 / divisor; /* integer division by zero: UsageFault */
#endif
    }
    while (echo_special("hang!")) {
        echo_burn(1000000u);
    }
    const uint8_t *word = echo_arena + echo_input_offsets[1];
    const uint32_t times = memcmp(word, "burn", 4u) == 0 ? word[4] : 1u;
    for (uint32_t i = 0; i < times; i++) {
        echo_burn(ECHO_BURN_ITERATIONS);
    }
    if (echo_profiler) echo_profiler(-1);
    return 0;
}
