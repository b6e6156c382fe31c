/*
 * mcuforge bare-metal runtime: what the harness, the startup code and the drivers share.
 * The board is described by the generated mcuforge_board.h (from boards/<board>.toml).
 */
#ifndef MCU_RUNTIME_H
#define MCU_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "mcuforge_board.h"

/* Armv6-M (Cortex-M0/M0+): Thumb-1 only, no VTOR, no configurable fault status registers. */
#if defined(__ARM_ARCH_6M__)
#define MCU_ARMV6M 1
#else
#define MCU_ARMV6M 0
#endif

#define MCU_REG(addr) (*(volatile uint32_t *)(uintptr_t)(addr))

/* System control block and core peripherals (same addresses on every Cortex-M). */
#define MCU_SCB_ICSR 0xE000ED04u
#define MCU_SCB_VTOR 0xE000ED08u
#define MCU_SCB_AIRCR 0xE000ED0Cu
#define MCU_SCB_CCR 0xE000ED14u
#define MCU_SCB_SHCSR 0xE000ED24u
#define MCU_SCB_CFSR 0xE000ED28u
#define MCU_SCB_HFSR 0xE000ED2Cu
#define MCU_SCB_MMFAR 0xE000ED34u
#define MCU_SCB_BFAR 0xE000ED38u
#define MCU_SCB_CPACR 0xE000ED88u

static inline void mcu_dsb(void) { __asm__ volatile("dsb" ::: "memory"); }
static inline void mcu_isb(void) { __asm__ volatile("isb" ::: "memory"); }

/* ---- uart.c: the board's serial port, polled ---- */
void mcu_uart_init(void);
void mcu_uart_putc(uint8_t c);
uint8_t mcu_uart_getc(void);  /* blocks until a byte arrives */
/* 1 and the byte in *c if one arrives within `polls` checks of the port, else 0 (the line is idle). */
int mcu_uart_getc_within(uint8_t *c, uint32_t polls);
void mcu_uart_flush(void);    /* blocks until every byte written has left */

/* ---- timer.c: the board's timer (SysTick on QEMU under -icount, DWT cycle counter on boards) ---- */
void mcu_timer_start(void);       /* (re)start counting from about 0 */
uint64_t mcu_timer_ticks(void);   /* ticks since mcu_timer_start(); monotonic */
void mcu_timer_stop(void);
/* Ticks to the reported unit (instructions on QEMU, cycles on boards): ticks * NUM / DEN. */
static inline uint64_t mcu_ticks_to_units(uint64_t ticks)
{
    return ticks * MCU_TIMER_UNITS_PER_TICK_NUM / MCU_TIMER_UNITS_PER_TICK_DEN;
}

/* ---- system.c ---- */
__attribute__((noreturn)) void mcu_exit(int code);  /* semihosting SYS_EXIT_EXTENDED or a system reset */
void mcu_stack_paint(void);        /* fill the unused stack with a pattern */
uint32_t mcu_stack_peak(void);     /* bytes of stack used since the last paint (high-water mark) */

/* Guard build (MCU_GUARD=1): the lowest MCU_STACK_GUARD_BYTES of the stack hold a canary that
   painting leaves alone; the harness checks it (and the arena's) after every RUN. */
#ifndef MCU_GUARD
#define MCU_GUARD 0
#endif
#define MCU_GUARD_BYTES 32u /* bytes of each canary: before the arena, after it, at the stack limit */
#if MCU_GUARD
#define MCU_STACK_GUARD_BYTES MCU_GUARD_BYTES
#else
#define MCU_STACK_GUARD_BYTES 0u
#endif
extern uint32_t __stack_top[], __stack_limit[];

/* ---- crc32.c: CRC-32/ISO-HDLC (zlib.crc32): start from 0, feed bytes in pieces ---- */
uint32_t mcu_crc32(uint32_t crc, const void *data, size_t n);

/* ---- harness.c: frames out (the fault handlers use it too) ---- */
void mcu_frame_begin(uint8_t command, uint8_t status, uint32_t length);
void mcu_frame_write(const void *data, uint32_t n);
void mcu_frame_end(void);
void mcu_send_error(uint8_t command, uint8_t status, const char *message);

/* ---- fmt: tiny string building without printf (no libc formatting pulled in) ---- */
typedef struct {
    char *buf;
    uint32_t cap;
    uint32_t len;
} mcu_fmt_t;
void mcu_fmt_str(mcu_fmt_t *f, const char *s);
void mcu_fmt_u32(mcu_fmt_t *f, uint32_t v);
void mcu_fmt_i32(mcu_fmt_t *f, int32_t v);
void mcu_fmt_hex(mcu_fmt_t *f, uint32_t v);

#endif /* MCU_RUNTIME_H */
