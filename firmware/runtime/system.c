/*
 * Ending the firmware, measuring the stack, CRC-32 and a tiny formatter.
 */
#include "mcu_runtime.h"

/* ---- exit ---- */

#if MCU_BOARD_EXIT == MCU_EXIT_SEMIHOSTING
static void semihosting_exit(int code)
{
    /* SYS_EXIT_EXTENDED (0x20) with { ADP_Stopped_ApplicationExit, code }: QEMU exits with `code`. */
    static uint32_t block[2];
    block[0] = 0x20026u;
    block[1] = (uint32_t)code;
    register uint32_t r0 __asm__("r0") = 0x20u;
    register uint32_t r1 __asm__("r1") = (uint32_t)(uintptr_t)block;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
}
#endif

void mcu_exit(int code)
{
    mcu_uart_flush();
#if MCU_BOARD_EXIT == MCU_EXIT_SEMIHOSTING
    semihosting_exit(code);
#else
    (void)code;
    mcu_dsb();
    MCU_REG(MCU_SCB_AIRCR) = (0x05FAu << 16) | (1u << 2); /* SYSRESETREQ */
    mcu_dsb();
#endif
    for (;;) {
        __asm__ volatile("wfi");
    }
}

/* ---- stack high-water mark ---- */

#define STACK_PAINT 0x5AC4C0DEu

void mcu_stack_paint(void)
{
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    sp -= 16; /* leave this function's own frame alone */
    for (volatile uint32_t *p = __stack_limit + MCU_STACK_GUARD_BYTES / 4u; p < sp; p++) {
        *p = STACK_PAINT;
    }
}

uint32_t mcu_stack_peak(void)
{
    const volatile uint32_t *p = __stack_limit + MCU_STACK_GUARD_BYTES / 4u;
    while (p < __stack_top && *p == STACK_PAINT) {
        p++;
    }
    return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)p);
}

/* ---- CRC-32/ISO-HDLC, reflected polynomial 0xEDB88320, four bits at a time ---- */

uint32_t mcu_crc32(uint32_t crc, const void *data, size_t n)
{
    static const uint32_t table[16] = {
        0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
        0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu,
    };
    const uint8_t *p = (const uint8_t *)data;
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        crc = (crc >> 4) ^ table[crc & 0xFu];
        crc = (crc >> 4) ^ table[crc & 0xFu];
    }
    return ~crc;
}

/* ---- formatting into a fixed buffer (always NUL-terminated, silently truncated) ---- */

static void fmt_char(mcu_fmt_t *f, char c)
{
    if (f->len + 1u < f->cap) {
        f->buf[f->len++] = c;
        f->buf[f->len] = '\0';
    }
}

void mcu_fmt_str(mcu_fmt_t *f, const char *s)
{
    while (*s) {
        fmt_char(f, *s++);
    }
}

void mcu_fmt_u32(mcu_fmt_t *f, uint32_t v)
{
    char digits[10];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    while (n > 0) {
        fmt_char(f, digits[--n]);
    }
}

void mcu_fmt_i32(mcu_fmt_t *f, int32_t v)
{
    if (v < 0) {
        fmt_char(f, '-');
        mcu_fmt_u32(f, 0u - (uint32_t)v);
    } else {
        mcu_fmt_u32(f, (uint32_t)v);
    }
}

void mcu_fmt_hex(mcu_fmt_t *f, uint32_t v)
{
    mcu_fmt_str(f, "0x");
    for (int shift = 28; shift >= 0; shift -= 4) {
        fmt_char(f, "0123456789abcdef"[(v >> shift) & 0xFu]);
    }
}
