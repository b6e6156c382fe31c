/*
 * The firmware harness: answers framed requests from the host over the UART (see PROTOCOL.md) and
 * runs the model behind the mcuforge_model_api.h contract.
 *
 * Memory: no receive buffer for inputs (WRITE_INPUT streams straight into the model's input buffer
 * after checking index and size from the header), one u64 timestamp per layer for the profile.
 *
 * A frame whose bytes stop coming (the line went quiet for MCU_RX_GAP_POLLS polls of the UART in
 * the middle of it) is abandoned without an answer, and the harness looks for the next magic.
 *
 * Guard build (MCU_GUARD=1): the harness owns the model's arena, between two canaries, and checks
 * them and the canary at the stack limit after every RUN (see PROTOCOL.md, "Guard build").
 */
#include <setjmp.h>
#include <string.h>

#include "mcu_protocol.h"
#include "mcu_runtime.h"
#include "mcuforge_model_api.h"

#define SMALL_PAYLOAD 16u /* the longest payload of a command other than WRITE_INPUT */

static const uint32_t input_sizes[MCU_MODEL_NUM_INPUTS] = MCU_MODEL_INPUT_SIZES;
static const uint32_t output_sizes[MCU_MODEL_NUM_OUTPUTS] = MCU_MODEL_OUTPUT_SIZES;

/* ---------------------------------------------------------------- frames out */

static uint32_t tx_crc;

static void put_raw(const uint8_t *p, uint32_t n)
{
    while (n--) {
        mcu_uart_putc(*p++);
    }
}

void mcu_frame_begin(uint8_t command, uint8_t status, uint32_t length)
{
    const uint8_t magic[2] = {MCU_PROTO_MAGIC0, MCU_PROTO_MAGIC1};
    const uint8_t header[6] = {command, status, (uint8_t)length, (uint8_t)(length >> 8), (uint8_t)(length >> 16),
                               (uint8_t)(length >> 24)};
    put_raw(magic, 2u);
    put_raw(header, 6u);
    tx_crc = mcu_crc32(0u, header, 6u);
}

void mcu_frame_write(const void *data, uint32_t n)
{
    put_raw((const uint8_t *)data, n);
    tx_crc = mcu_crc32(tx_crc, data, n);
}

void mcu_frame_end(void)
{
    const uint8_t crc[4] = {(uint8_t)tx_crc, (uint8_t)(tx_crc >> 8), (uint8_t)(tx_crc >> 16), (uint8_t)(tx_crc >> 24)};
    put_raw(crc, 4u);
}

void mcu_send_error(uint8_t command, uint8_t status, const char *message)
{
    const uint32_t n = (uint32_t)strlen(message);
    mcu_frame_begin((uint8_t)(command | MCU_PROTO_RESPONSE), status, n);
    mcu_frame_write(message, n);
    mcu_frame_end();
}

static void write_u32(uint32_t v)
{
    const uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    mcu_frame_write(b, 4u);
}

static void write_u64(uint64_t v)
{
    write_u32((uint32_t)v);
    write_u32((uint32_t)(v >> 32));
}

static void write_str(const char *s)
{
    const uint8_t n = (uint8_t)strlen(s);
    mcu_frame_write(&n, 1u);
    mcu_frame_write(s, n);
}

static void send_ok(uint8_t command)
{
    mcu_frame_begin((uint8_t)(command | MCU_PROTO_RESPONSE), MCU_STATUS_OK, 0u);
    mcu_frame_end();
}

/* An error message "<what> <n><rest>", e.g. "input index 3 out of range". */
static void send_error_n(uint8_t command, uint8_t status, const char *what, uint32_t n, const char *rest)
{
    char text[96];
    mcu_fmt_t f = {text, sizeof text, 0u};
    mcu_fmt_str(&f, what);
    mcu_fmt_u32(&f, n);
    mcu_fmt_str(&f, rest);
    mcu_send_error(command, status, text);
}

/* ---------------------------------------------------------------- frames in */

static uint32_t rx_crc;
static jmp_buf frame_abandoned; /* where a frame whose bytes stopped coming is given up */

/* The next byte of the frame being read; abandons the frame if the line goes quiet. */
static uint8_t frame_byte(void)
{
    uint8_t b;
    if (!mcu_uart_getc_within(&b, MCU_RX_GAP_POLLS)) {
        longjmp(frame_abandoned, 1);
    }
    return b;
}

static uint8_t get_byte(void)
{
    const uint8_t b = frame_byte();
    rx_crc = mcu_crc32(rx_crc, &b, 1u);
    return b;
}

static uint32_t get_u32(void)
{
    uint32_t v = get_byte();
    v |= (uint32_t)get_byte() << 8;
    v |= (uint32_t)get_byte() << 16;
    v |= (uint32_t)get_byte() << 24;
    return v;
}

static void drain(uint32_t n)
{
    while (n--) {
        (void)get_byte();
    }
}

/* Reads the trailing CRC; false (and a BAD_CRC response) if the frame was damaged. */
static int crc_ok(uint8_t command)
{
    const uint32_t expected = rx_crc;
    uint32_t got = frame_byte();
    got |= (uint32_t)frame_byte() << 8;
    got |= (uint32_t)frame_byte() << 16;
    got |= (uint32_t)frame_byte() << 24;
    if (got != expected) {
        mcu_send_error(command, MCU_STATUS_BAD_CRC, "CRC mismatch: frame damaged in transit, request ignored");
        return 0;
    }
    return 1;
}

/* Skips bytes up to and including the two magic bytes. */
static void wait_for_magic(void)
{
    uint8_t b = mcu_uart_getc();
    for (;;) {
        while (b != MCU_PROTO_MAGIC0) {
            b = mcu_uart_getc();
        }
        b = mcu_uart_getc(); /* between frames the line may rest as long as it likes */
        if (b == MCU_PROTO_MAGIC1) {
            return;
        }
    }
}

/* ---------------------------------------------------------------- profile */

static uint64_t profile_ticks[MCU_MODEL_NUM_LAYERS + 1];
static int profile_next;       /* the layer the next hook call should announce; NUM_LAYERS: the -1 call */
static int profile_bad_layer;  /* first out-of-order layer number, if any */
static uint8_t profile_state;  /* 0 none, 1 valid, 2 contract violated */

static void profile_hook(int layer)
{
    const uint64_t t = mcu_timer_ticks();
    const int expected = profile_next < MCU_MODEL_NUM_LAYERS ? profile_next : -1;
    if (profile_next > MCU_MODEL_NUM_LAYERS || layer != expected) {
        if (profile_state != 2u) {
            profile_state = 2u;
            profile_bad_layer = layer;
        }
        return;
    }
    profile_ticks[profile_next++] = t;
}

/* ---------------------------------------------------------------- probe */

/* PROBE: run the model and, right after layer `probe_layer` (when the hook announces the next
   layer, or the end), answer with `probe_length` bytes of the arena at `probe_offset`. The arena
   base is input 0's address minus input 0's arena offset, both sent by the host and checked. */
static int probe_layer;
static const uint8_t *probe_src;
static uint32_t probe_length;
static int probe_sent;

static void probe_hook(int layer)
{
    const int after = probe_layer + 1 < MCU_MODEL_NUM_LAYERS ? probe_layer + 1 : -1;
    if (!probe_sent && layer == after) {
        probe_sent = 1;
        mcu_frame_begin(MCU_CMD_PROBE | MCU_PROTO_RESPONSE, MCU_STATUS_OK, probe_length);
        mcu_frame_write(probe_src, probe_length);
        mcu_frame_end();
    }
}

static uint32_t u32_at(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void cmd_probe(const uint8_t *payload, uint32_t length)
{
    if (length != 16u) {
        mcu_send_error(MCU_CMD_PROBE, MCU_STATUS_BAD_LENGTH, "PROBE takes layer, offset, length, input 0 offset (u32 each)");
        return;
    }
    const uint32_t layer = u32_at(payload), offset = u32_at(payload + 4), n = u32_at(payload + 8);
    const uint32_t input0 = u32_at(payload + 12);
    if (layer >= (uint32_t)MCU_MODEL_NUM_LAYERS) {
        send_error_n(MCU_CMD_PROBE, MCU_STATUS_BAD_INDEX, "layer ", layer, " out of range");
        return;
    }
    if (offset > MCU_MODEL_ARENA_SIZE || n > MCU_MODEL_ARENA_SIZE - offset || input0 >= MCU_MODEL_ARENA_SIZE) {
        send_error_n(MCU_CMD_PROBE, MCU_STATUS_BAD_LENGTH, "probe outside the arena of ", MCU_MODEL_ARENA_SIZE,
                     " bytes");
        return;
    }
    const uint8_t *arena = (const uint8_t *)MCU_MODEL_INPUT_PTR(0) - input0;
    probe_layer = (int)layer;
    probe_src = arena + offset;
    probe_length = n;
    probe_sent = 0;
    profile_state = 0u; /* a probe run leaves no profile */
    MCU_MODEL_SET_PROFILER(probe_hook);
    const int rc = MCU_MODEL_RUN();
    MCU_MODEL_SET_PROFILER((mcu_profiler_hook_t)0);
    if (!probe_sent) {
        send_error_n(MCU_CMD_PROBE, MCU_STATUS_MODEL_ERROR, "the model returned ", (uint32_t)rc,
                     " before the probed layer finished");
    }
}

/* ---------------------------------------------------------------- guard */

#if MCU_GUARD
#ifndef MCU_MODEL_SET_ARENA
#error "a guard build needs MCU_MODEL_SET_ARENA (the model's set_arena) and the model built without its own arena"
#endif
void MCU_MODEL_SET_ARENA(uint8_t *arena);

/* The model's arena between two canaries; the arena stays 16-byte aligned. */
static uint8_t guarded_arena[MCU_GUARD_BYTES + MCU_MODEL_ARENA_SIZE + MCU_GUARD_BYTES] __attribute__((aligned(16)));

enum { GUARD_ARENA_START, GUARD_ARENA_END, GUARD_STACK_LIMIT, GUARD_ZONES };
static const char *const guard_names[GUARD_ZONES] = {"arena-start", "arena-end", "stack-limit"};

static uint8_t *guard_zone(int zone)
{
    switch (zone) {
    case GUARD_ARENA_START: return guarded_arena;
    case GUARD_ARENA_END: return guarded_arena + MCU_GUARD_BYTES + MCU_MODEL_ARENA_SIZE;
    default: return (uint8_t *)__stack_limit;
    }
}

/* Canary byte i of a zone: no zeros, no runs, different in each zone. */
static uint8_t guard_byte(int zone, uint32_t i)
{
    return (uint8_t)(0xC5u ^ (i * 0x3Du) ^ ((uint32_t)zone * 0x5Au)) | 0x01u;
}

static void guard_arm(void)
{
    for (int z = 0; z < GUARD_ZONES; z++) {
        volatile uint8_t *p = guard_zone(z);
        for (uint32_t i = 0; i < MCU_GUARD_BYTES; i++) {
            p[i] = guard_byte(z, i);
        }
    }
}

/* After a run: 0 if every canary is intact, else a GUARD error sent (naming the canaries) and the
   canaries re-armed for the next run. */
static int guard_check(uint8_t command)
{
    static char text[200];
    mcu_fmt_t f = {text, sizeof text, 0u};
    int tripped = 0, first = -1;
    uint32_t first_at = 0u;
    for (int z = 0; z < GUARD_ZONES; z++) {
        const volatile uint8_t *p = guard_zone(z);
        for (uint32_t i = 0; i < MCU_GUARD_BYTES; i++) {
            if (p[i] != guard_byte(z, i)) {
                mcu_fmt_str(&f, tripped ? "," : "");
                mcu_fmt_str(&f, guard_names[z]);
                if (first < 0) {
                    first = z;
                    first_at = i;
                }
                tripped++;
                break;
            }
        }
    }
    if (!tripped) {
        return 0;
    }
    const volatile uint8_t *bad = guard_zone(first) + first_at;
    mcu_fmt_str(&f, ": overwritten during the run of model " MCU_MODEL_NAME ": ");
    mcu_fmt_str(&f, guard_names[first]);
    mcu_fmt_str(&f, " byte ");
    mcu_fmt_u32(&f, first_at);
    mcu_fmt_str(&f, " at ");
    mcu_fmt_hex(&f, (uint32_t)(uintptr_t)bad);
    mcu_fmt_str(&f, " is ");
    mcu_fmt_u32(&f, *bad);
    mcu_fmt_str(&f, ", expected ");
    mcu_fmt_u32(&f, guard_byte(first, first_at));
    mcu_send_error(command, MCU_STATUS_GUARD, text);
    guard_arm();
    return 1;
}
#define INFO_FLAGS MCU_INFO_GUARDED
#else
#define INFO_FLAGS 0u
#endif

/* ---------------------------------------------------------------- commands */

static void cmd_info(void)
{
    uint32_t n = 2u + 2u + 4u * 4u + 4u * (MCU_MODEL_NUM_INPUTS + MCU_MODEL_NUM_OUTPUTS) + 8u;
    n += 3u + (uint32_t)(strlen(MCU_MODEL_NAME) + strlen(MCU_BOARD_NAME) + strlen(MCU_TIMER_UNIT));
    const uint8_t version[4] = {(uint8_t)MCU_PROTO_VERSION, (uint8_t)(MCU_PROTO_VERSION >> 8), (uint8_t)INFO_FLAGS,
                                (uint8_t)(INFO_FLAGS >> 8)};
    mcu_frame_begin(MCU_CMD_INFO | MCU_PROTO_RESPONSE, MCU_STATUS_OK, n);
    mcu_frame_write(version, 4u);
    write_u32(MCU_MODEL_NUM_INPUTS);
    write_u32(MCU_MODEL_NUM_OUTPUTS);
    write_u32(MCU_MODEL_NUM_LAYERS);
    write_u32(MCU_MODEL_ARENA_SIZE);
    for (uint32_t i = 0; i < MCU_MODEL_NUM_INPUTS; i++) {
        write_u32(input_sizes[i]);
    }
    for (uint32_t i = 0; i < MCU_MODEL_NUM_OUTPUTS; i++) {
        write_u32(output_sizes[i]);
    }
    write_u32(MCU_TIMER_UNITS_PER_TICK_NUM);
    write_u32(MCU_TIMER_UNITS_PER_TICK_DEN);
    write_str(MCU_MODEL_NAME);
    write_str(MCU_BOARD_NAME);
    write_str(MCU_TIMER_UNIT);
    mcu_frame_end();
}

/* WRITE_INPUT streams its payload into the input buffer: checked from the header, before reading. */
static void cmd_write_input(uint32_t length)
{
    if (length < 4u) {
        drain(length);
        if (crc_ok(MCU_CMD_WRITE_INPUT)) {
            mcu_send_error(MCU_CMD_WRITE_INPUT, MCU_STATUS_BAD_LENGTH, "WRITE_INPUT needs a u32 index");
        }
        return;
    }
    const uint32_t index = get_u32();
    const uint32_t n = length - 4u;
    if (index >= MCU_MODEL_NUM_INPUTS || n != input_sizes[index]) {
        drain(n);
        if (!crc_ok(MCU_CMD_WRITE_INPUT)) {
            return;
        }
        if (index >= MCU_MODEL_NUM_INPUTS) {
            send_error_n(MCU_CMD_WRITE_INPUT, MCU_STATUS_BAD_INDEX, "input index ", index,
                         " out of range for model " MCU_MODEL_NAME);
            return;
        }
        char text[96];
        mcu_fmt_t f = {text, sizeof text, 0u};
        mcu_fmt_str(&f, "input ");
        mcu_fmt_u32(&f, index);
        mcu_fmt_str(&f, " of model " MCU_MODEL_NAME " takes ");
        mcu_fmt_u32(&f, input_sizes[index]);
        mcu_fmt_str(&f, " bytes, got ");
        mcu_fmt_u32(&f, n);
        mcu_send_error(MCU_CMD_WRITE_INPUT, MCU_STATUS_WRONG_SIZE, text);
        return;
    }
    uint8_t *dst = (uint8_t *)MCU_MODEL_INPUT_PTR((int)index);
    for (uint32_t i = 0; i < n; i++) {
        dst[i] = get_byte();
    }
    if (crc_ok(MCU_CMD_WRITE_INPUT)) {
        send_ok(MCU_CMD_WRITE_INPUT);
    }
}

static void cmd_run(const uint8_t *payload, uint32_t length)
{
    if (length > 1u) {
        mcu_send_error(MCU_CMD_RUN, MCU_STATUS_BAD_LENGTH, "RUN takes at most a 1-byte flags payload");
        return;
    }
    const int profile = length == 1u && (payload[0] & MCU_RUN_PROFILE);
    profile_next = 0;
    profile_state = 0u;
    MCU_MODEL_SET_PROFILER(profile ? profile_hook : (mcu_profiler_hook_t)0);
    mcu_stack_paint();

    mcu_timer_start();
    const uint64_t t0 = mcu_timer_ticks();
    const int rc = MCU_MODEL_RUN();
    const uint64_t t1 = mcu_timer_ticks();
    mcu_timer_stop();

    MCU_MODEL_SET_PROFILER((mcu_profiler_hook_t)0);
    const uint32_t stack = mcu_stack_peak();
    if (profile && profile_state == 0u) {
        if (profile_next == MCU_MODEL_NUM_LAYERS + 1) {
            profile_state = 1u;
        } else {
            profile_state = 2u;
            profile_bad_layer = -2; /* too few calls */
        }
    }
    for (int i = 0; profile_state == 1u && i <= MCU_MODEL_NUM_LAYERS; i++) {
        profile_ticks[i] -= t0;
    }
#if MCU_GUARD
    if (guard_check(MCU_CMD_RUN)) {
        return;
    }
#endif
    if (rc != 0) {
        char text[128];
        mcu_fmt_t f = {text, sizeof text, 0u};
        mcu_fmt_str(&f, "model " MCU_MODEL_NAME " run returned error ");
        mcu_fmt_i32(&f, rc);
        if (rc == -2) {
            mcu_fmt_str(&f, " (an index input out of range; TFLM's invoke fails there too)");
        }
        mcu_send_error(MCU_CMD_RUN, MCU_STATUS_MODEL_ERROR, text);
        return;
    }
    mcu_frame_begin(MCU_CMD_RUN | MCU_PROTO_RESPONSE, MCU_STATUS_OK, 12u);
    write_u64(mcu_ticks_to_units(t1 - t0));
    write_u32(stack);
    mcu_frame_end();
}

static void cmd_read_output(const uint8_t *payload, uint32_t length)
{
    if (length != 4u) {
        mcu_send_error(MCU_CMD_READ_OUTPUT, MCU_STATUS_BAD_LENGTH, "READ_OUTPUT takes a u32 index");
        return;
    }
    const uint32_t index = (uint32_t)payload[0] | (uint32_t)payload[1] << 8 | (uint32_t)payload[2] << 16 |
                           (uint32_t)payload[3] << 24;
    if (index >= MCU_MODEL_NUM_OUTPUTS) {
        send_error_n(MCU_CMD_READ_OUTPUT, MCU_STATUS_BAD_INDEX, "output index ", index,
                     " out of range for model " MCU_MODEL_NAME);
        return;
    }
    mcu_frame_begin(MCU_CMD_READ_OUTPUT | MCU_PROTO_RESPONSE, MCU_STATUS_OK, output_sizes[index]);
    mcu_frame_write(MCU_MODEL_OUTPUT_PTR((int)index), output_sizes[index]);
    mcu_frame_end();
}

static void cmd_read_profile(void)
{
    if (profile_state == 0u) {
        mcu_send_error(MCU_CMD_READ_PROFILE, MCU_STATUS_NO_PROFILE,
                       "no profile: the last RUN did not ask for one (or there was no RUN)");
        return;
    }
    if (profile_state == 2u) {
        if (profile_bad_layer == -2) {
            send_error_n(MCU_CMD_READ_PROFILE, MCU_STATUS_NO_PROFILE, "profiler contract violated: ",
                         (uint32_t)profile_next, " hook calls, expected MCU_MODEL_NUM_LAYERS + 1");
        } else {
            char text[96];
            mcu_fmt_t f = {text, sizeof text, 0u};
            mcu_fmt_str(&f, "profiler contract violated: hook(");
            mcu_fmt_i32(&f, profile_bad_layer);
            mcu_fmt_str(&f, ") after ");
            mcu_fmt_u32(&f, (uint32_t)profile_next);
            mcu_fmt_str(&f, " calls");
            mcu_send_error(MCU_CMD_READ_PROFILE, MCU_STATUS_NO_PROFILE, text);
        }
        return;
    }
    mcu_frame_begin(MCU_CMD_READ_PROFILE | MCU_PROTO_RESPONSE, MCU_STATUS_OK, 4u + 8u * (MCU_MODEL_NUM_LAYERS + 1u));
    write_u32(MCU_MODEL_NUM_LAYERS);
    for (int i = 0; i <= MCU_MODEL_NUM_LAYERS; i++) {
        write_u64(mcu_ticks_to_units(profile_ticks[i]));
    }
    mcu_frame_end();
}

/* RESET puts the model's state (LSTM/SVDF variable tensors) back to its initial value; a model
   without state (or a harness model without MCU_MODEL_RESET) has nothing to reset. */
static void cmd_reset(uint32_t length)
{
    if (length != 0u) {
        mcu_send_error(MCU_CMD_RESET, MCU_STATUS_BAD_LENGTH, "RESET takes no payload");
        return;
    }
#ifdef MCU_MODEL_RESET
    MCU_MODEL_RESET();
#endif
    send_ok(MCU_CMD_RESET);
}

static void cmd_quit(const uint8_t *payload, uint32_t length)
{
    int code = 0;
    if (length == 4u) {
        code = (int)((uint32_t)payload[0] | (uint32_t)payload[1] << 8 | (uint32_t)payload[2] << 16 |
                     (uint32_t)payload[3] << 24);
    } else if (length != 0u) {
        mcu_send_error(MCU_CMD_QUIT, MCU_STATUS_BAD_LENGTH, "QUIT takes an optional u32 exit code");
        return;
    }
    send_ok(MCU_CMD_QUIT);
    mcu_exit(code);
}

/* One request after its magic: header, payload, CRC, then exactly one response frame. */
/* not inlined into serve_one: a function calling setjmp keeps every local in its own stack slot */
static __attribute__((noinline)) void serve_frame(void)
{
    static uint8_t payload[SMALL_PAYLOAD];
    rx_crc = 0u;
    const uint8_t command = get_byte();
    (void)get_byte(); /* status: 0 in requests */
    const uint32_t length = get_u32();

    if (length > MCU_PROTO_MAX_PAYLOAD) {
        send_error_n(command, MCU_STATUS_BAD_LENGTH, "frame length ", length, " is not plausible: resyncing");
        return;
    }
    if (command == MCU_CMD_WRITE_INPUT) {
        cmd_write_input(length);
        return;
    }
    if (length > SMALL_PAYLOAD) {
        drain(length);
        if (crc_ok(command)) {
            send_error_n(command, MCU_STATUS_BAD_LENGTH, "payload of ", length, " bytes is too long for this command");
        }
        return;
    }
    for (uint32_t i = 0; i < length; i++) {
        payload[i] = get_byte();
    }
    if (!crc_ok(command)) {
        return;
    }
    switch (command) {
    case MCU_CMD_INFO: cmd_info(); break;
    case MCU_CMD_RUN: cmd_run(payload, length); break;
    case MCU_CMD_READ_OUTPUT: cmd_read_output(payload, length); break;
    case MCU_CMD_READ_PROFILE: cmd_read_profile(); break;
    case MCU_CMD_QUIT: cmd_quit(payload, length); break;
    case MCU_CMD_PROBE: cmd_probe(payload, length); break;
    case MCU_CMD_RESET: cmd_reset(length); break;
    default: send_error_n(command, MCU_STATUS_UNKNOWN_COMMAND, "unknown command ", command, ""); break;
    }
}

static void serve_one(void)
{
    wait_for_magic();
    if (setjmp(frame_abandoned) == 0) {
        serve_frame();
    }
    /* else: the line went quiet in the middle of the frame; it is dropped without an answer */
}

int main(void)
{
    mcu_uart_init();
#if MCU_GUARD
    MCU_MODEL_SET_ARENA(guarded_arena + MCU_GUARD_BYTES);
    guard_arm();
#endif
    __asm__ volatile("cpsie i" ::: "memory");
    mcu_send_error(0u, MCU_STATUS_BOOT, "firmware for model " MCU_MODEL_NAME " on " MCU_BOARD_NAME " started");
    for (;;) {
        serve_one();
    }
}
