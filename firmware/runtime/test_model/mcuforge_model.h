/*
 * A stand-in for a generated model, for testing the runtime: prefix "echo", two inputs (37 and 5
 * bytes), two outputs: output i = input i reversed, each byte + 1 (mod 256). Two layers:
 *   layer 0 reverses both inputs into a scratch area of the arena,
 *   layer 1 adds 1 into the outputs, then burns exactly 2 * ECHO_BURN_ITERATIONS instructions
 *           (a known amount of work, to calibrate the timer against).
 * Test hooks: when input 1 is "fail!" the run returns error 7, "fault" divides by zero in layer 1
 * (a UsageFault), "hang!" loops forever in layer 1, "burn" + byte k burns k times as long (k may be 0);
 * "over!" writes a byte just past the arena, "undr!" just before it, "deep!" a word at the stack limit
 * (what a guard build must catch).
 * Laid out as mcuforge's code generator lays out a real model (see mcuforge_model_api.h).
 */
#ifndef MCUFORGE_MODEL_H
#define MCUFORGE_MODEL_H

#include "echo.h"

#define MCU_MODEL_NAME "echo"
#define MCU_MODEL_ARENA_SIZE ECHO_ARENA_SIZE
#define MCU_MODEL_NUM_INPUTS ECHO_NUM_INPUTS
#define MCU_MODEL_NUM_OUTPUTS ECHO_NUM_OUTPUTS
#define MCU_MODEL_NUM_LAYERS ECHO_NUM_LAYERS
#define MCU_MODEL_INPUT_SIZES { 37u, 5u }
#define MCU_MODEL_OUTPUT_SIZES { 37u, 5u }
#define MCU_MODEL_RUN echo_run
#define MCU_MODEL_INPUT_PTR echo_input
#define MCU_MODEL_OUTPUT_PTR echo_output
#define MCU_MODEL_SET_PROFILER echo_set_profiler
#define MCU_MODEL_SET_ARENA echo_set_arena

#endif /* MCUFORGE_MODEL_H */
