/*
 * The contract between a generated model and the mcuforge firmware harness.
 *
 * The code generator emits, next to <prefix>.h/.c, a header `mcuforge_model.h` that maps the generic
 * names below onto the model's prefixed ones (so several models can link into one firmware and a
 * harness is written once). The harness includes only this file. Every macro is required:
 *
 *   MCU_MODEL_NAME          string literal, the model's name, e.g. "kws"
 *   MCU_MODEL_NUM_INPUTS    integer constant >= 1
 *   MCU_MODEL_NUM_OUTPUTS   integer constant >= 1
 *   MCU_MODEL_NUM_LAYERS    integer constant >= 0: how many profiler calls with layer >= 0 a run makes
 *   MCU_MODEL_ARENA_SIZE    integer constant: bytes of the model's static arena
 *   MCU_MODEL_INPUT_SIZES   brace initializer of NUM_INPUTS byte sizes, e.g. { 490u }
 *   MCU_MODEL_OUTPUT_SIZES  brace initializer of NUM_OUTPUTS byte sizes, e.g. { 12u }
 *   MCU_MODEL_RUN           name of   int  f(void)
 *   MCU_MODEL_INPUT_PTR     name of   void *f(int index)
 *   MCU_MODEL_OUTPUT_PTR    name of   const void *f(int index)
 *   MCU_MODEL_SET_PROFILER  name of   void f(void (*hook)(int layer))
 *
 * Optional:
 *
 *   MCU_MODEL_RESET         name of   void f(void): put the model's state back to its initial value
 *                           (a generated model: <prefix>_reset; absent: the model has no state)
 *   MCU_MODEL_STATE_SIZE    integer constant: bytes of the model's state (0 without state)
 *
 * Optional (a guard build needs it, and the model built without its own arena):
 *
 *   MCU_MODEL_SET_ARENA     name of   void f(uint8_t *arena): run on this 16-byte aligned arena of
 *                           MCU_MODEL_ARENA_SIZE bytes (a generated model: <prefix>_set_arena, with
 *                           -D<PREFIX>_EXTERNAL_ARENA; mcuforge.device passes both for --guard)
 *
 * Semantics the generated code guarantees:
 *
 * - MCU_MODEL_RUN() runs one inference on the model's own static arena (no malloc) and returns 0 on
 *   success, or a non-zero error code (-2: an index input of GATHER, GATHER_ND or EMBEDDING_LOOKUP
 *   out of range, where TFLM's invoke fails too; the run stops there). It reads the input buffers
 *   and writes the output buffers. It is not reentrant. A model with state (MCU_MODEL_STATE_SIZE >
 *   0: LSTM, SVDF) also reads the state the previous run left and updates it, in a static region
 *   of its own outside the arena; it starts from the initial state, and MCU_MODEL_RESET() returns
 *   to it.
 * - MCU_MODEL_INPUT_PTR(i) / MCU_MODEL_OUTPUT_PTR(i) return the buffer of input / output i, which
 *   holds exactly MCU_MODEL_INPUT_SIZES[i] / MCU_MODEL_OUTPUT_SIZES[i] bytes, at least 4-byte
 *   aligned; NULL for an index out of range. The pointers do not change between calls.
 * - Buffers live in the arena, which the memory planner reuses: an input's contents are not kept
 *   across a run (write every input before every run), and an output may share bytes with an input
 *   (read outputs before writing the next inputs). Two inputs never overlap, nor two outputs.
 * - MCU_MODEL_SET_PROFILER(hook) installs a hook (NULL removes it). While a hook is installed, a run
 *   calls hook(i) immediately before layer i, for i = 0 .. MCU_MODEL_NUM_LAYERS-1 in this order, and
 *   hook(-1) once after the last layer, just before returning. A "layer" is one kernel call of the
 *   scheduled program, numbered in execution order. The harness timestamps each call: the time of
 *   layer i is t[i+1] - t[i], where t[NUM_LAYERS] is the -1 call. With no hook a run makes no calls.
 *
 * The declarations below restate the contract: a generated header that declares these functions
 * with other types fails to compile here.
 */
#ifndef MCUFORGE_MODEL_API_H
#define MCUFORGE_MODEL_API_H

#include <stdint.h>

#include "mcuforge_model.h"

#if !defined(MCU_MODEL_NAME) || !defined(MCU_MODEL_NUM_INPUTS) || !defined(MCU_MODEL_NUM_OUTPUTS) \
    || !defined(MCU_MODEL_NUM_LAYERS) || !defined(MCU_MODEL_ARENA_SIZE)
#error "mcuforge_model.h must define MCU_MODEL_NAME, _NUM_INPUTS, _NUM_OUTPUTS, _NUM_LAYERS and _ARENA_SIZE"
#endif
#if !defined(MCU_MODEL_INPUT_SIZES) || !defined(MCU_MODEL_OUTPUT_SIZES)
#error "mcuforge_model.h must define MCU_MODEL_INPUT_SIZES and MCU_MODEL_OUTPUT_SIZES"
#endif
#if !defined(MCU_MODEL_RUN) || !defined(MCU_MODEL_INPUT_PTR) || !defined(MCU_MODEL_OUTPUT_PTR) \
    || !defined(MCU_MODEL_SET_PROFILER)
#error "mcuforge_model.h must define MCU_MODEL_RUN, _INPUT_PTR, _OUTPUT_PTR and _SET_PROFILER"
#endif
#if MCU_MODEL_NUM_INPUTS < 1 || MCU_MODEL_NUM_OUTPUTS < 1 || MCU_MODEL_NUM_LAYERS < 0
#error "a model has at least one input and one output, and a non-negative number of layers"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The profiler hook: layer in [0, MCU_MODEL_NUM_LAYERS) before a layer, -1 after the last one. */
typedef void (*mcu_profiler_hook_t)(int layer);

int MCU_MODEL_RUN(void);
void *MCU_MODEL_INPUT_PTR(int index);
const void *MCU_MODEL_OUTPUT_PTR(int index);
void MCU_MODEL_SET_PROFILER(mcu_profiler_hook_t hook);
#ifdef MCU_MODEL_RESET
void MCU_MODEL_RESET(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* MCUFORGE_MODEL_API_H */
