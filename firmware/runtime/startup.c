/*
 * Startup: vector table, reset handler, fault handlers.
 *
 * Reset: stack limit (Armv8-M), VTOR, .data copied from flash, .bss zeroed, FPU/MVE enabled when the
 * build uses them, caches on when the board asks, configurable faults enabled, then main(). Armv6-M
 * (Cortex-M0/M0+) has no VTOR to set (the table is at 0), no configurable faults and no fault status
 * registers: everything is a HardFault, reported with its pc and lr. A fault
 * or an unexpected interrupt sends an error frame (status FAULT) with the registers that explain it,
 * then ends the firmware (semihosting exit on QEMU, reset on a board).
 */
#include "mcu_protocol.h"
#include "mcu_runtime.h"

extern uint32_t __data_start__[], __data_end__[], __data_load__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_top[], __stack_limit[];

int main(void);
void Reset_Handler(void);
void mcu_fault_entry(void);
void SysTick_Handler(void);
__attribute__((noreturn, used)) void mcu_fault_report(const uint32_t *frame, uint32_t exc_return);

typedef void (*mcu_vector_t)(void);

typedef struct {
    void *initial_sp;
    mcu_vector_t handlers[15 + MCU_BOARD_NUM_IRQS];
} mcu_vector_table_t;

/* Exceptions 2..15, then the board's interrupts: everything but reset and SysTick reports a fault. */
__attribute__((section(".vectors"), used)) const mcu_vector_table_t mcu_vectors = {
    .initial_sp = __stack_top,
    .handlers = {
        [0] = Reset_Handler,
        [1 ... 13] = mcu_fault_entry,
        [14] = SysTick_Handler,
        [15 ... 14 + MCU_BOARD_NUM_IRQS] = mcu_fault_entry,
    },
};

#if MCU_BOARD_ENABLE_CACHES
static void enable_caches(void)
{
    /* Cortex-M7: invalidate then enable the I-cache, and the D-cache by set/way (as CMSIS does). */
    mcu_dsb();
    mcu_isb();
    MCU_REG(0xE000EF50u) = 0u; /* ICIALLU */
    mcu_dsb();
    mcu_isb();
    MCU_REG(MCU_SCB_CCR) |= 1u << 17;
    mcu_dsb();
    mcu_isb();
    MCU_REG(0xE000ED84u) = 0u; /* CSSELR: level 1 data cache */
    mcu_dsb();
    const uint32_t ccsidr = MCU_REG(0xE000ED80u);
    uint32_t sets = (ccsidr >> 13) & 0x7FFFu;
    do {
        uint32_t ways = (ccsidr >> 3) & 0x3FFu;
        do {
            MCU_REG(0xE000EF60u) = ((sets << 5) & 0x3FE0u) | ((ways << 30) & 0xC0000000u); /* DCISW */
        } while (ways-- != 0u);
    } while (sets-- != 0u);
    mcu_dsb();
    MCU_REG(MCU_SCB_CCR) |= 1u << 16;
    mcu_dsb();
    mcu_isb();
}
#endif

void Reset_Handler(void)
{
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
    __asm__ volatile("msr msplim, %0" ::"r"(__stack_limit));
#endif
#if !MCU_ARMV6M
    MCU_REG(MCU_SCB_VTOR) = (uint32_t)(uintptr_t)&mcu_vectors;
#endif

    for (volatile uint32_t *src = __data_load__, *dst = __data_start__; dst < __data_end__;) {
        *dst++ = *src++;
    }
    for (volatile uint32_t *dst = __bss_start__; dst < __bss_end__;) {
        *dst++ = 0u;
    }

#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    MCU_REG(MCU_SCB_CPACR) |= 0xFu << 20; /* CP10, CP11 full access: FPU and MVE */
    mcu_dsb();
    mcu_isb();
#endif
#if MCU_BOARD_ENABLE_CACHES
    enable_caches();
#endif
#if !MCU_ARMV6M
    MCU_REG(MCU_SCB_SHCSR) |= 0x7u << 16; /* MemManage, BusFault, UsageFault get their own reports */
    MCU_REG(MCU_SCB_CCR) |= 1u << 4;      /* integer division by zero traps */
#endif

    mcu_exit(main());
}

/* All faults land here with the stacked frame: r0-r3, r12, lr, pc, xpsr. */
__attribute__((naked)) void mcu_fault_entry(void)
{
#if MCU_ARMV6M /* Thumb-1: no IT blocks, no immediate TST, a short branch range */
    __asm__ volatile(
        "movs r0, #4\n"
        "mov r1, lr\n"
        "tst r0, r1\n"
        "bne 1f\n"
        "mrs r0, msp\n"
        "b 2f\n"
        "1: mrs r0, psp\n"
        "2: ldr r2, =mcu_fault_report\n"
        "bx r2\n");
#else
    __asm__ volatile(
        "tst lr, #4\n"
        "ite eq\n"
        "mrseq r0, msp\n"
        "mrsne r0, psp\n"
        "mov r1, lr\n"
        "b mcu_fault_report\n");
#endif
}

static const char *exception_name(uint32_t n)
{
    switch (n) {
    case 2: return "NMI";
    case 3: return "HardFault";
    case 4: return "MemManage fault";
    case 5: return "BusFault";
    case 6: return "UsageFault";
    case 7: return "SecureFault";
    case 11: return "SVCall";
    case 12: return "DebugMonitor";
    case 14: return "PendSV";
    default: return n >= 16 ? "unexpected interrupt" : "reserved exception";
    }
}

void mcu_fault_report(const uint32_t *frame, uint32_t exc_return)
{
    static char text[200];
    mcu_fmt_t f = {text, sizeof text, 0};
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    const uint32_t n = ipsr & 0x1FFu;

    mcu_fmt_str(&f, exception_name(n));
    if (n >= 16) {
        mcu_fmt_str(&f, " IRQ ");
        mcu_fmt_u32(&f, n - 16u);
    }
    mcu_fmt_str(&f, " on " MCU_BOARD_NAME ": pc=");
    mcu_fmt_hex(&f, frame[6]);
    mcu_fmt_str(&f, " lr=");
    mcu_fmt_hex(&f, frame[5]);
#if !MCU_ARMV6M
    const uint32_t cfsr = MCU_REG(MCU_SCB_CFSR);
    mcu_fmt_str(&f, " cfsr=");
    mcu_fmt_hex(&f, cfsr);
    mcu_fmt_str(&f, " hfsr=");
    mcu_fmt_hex(&f, MCU_REG(MCU_SCB_HFSR));
    if (cfsr & (1u << 7)) {
        mcu_fmt_str(&f, " mmfar=");
        mcu_fmt_hex(&f, MCU_REG(MCU_SCB_MMFAR));
    }
    if (cfsr & (1u << 15)) {
        mcu_fmt_str(&f, " bfar=");
        mcu_fmt_hex(&f, MCU_REG(MCU_SCB_BFAR));
    }
    if (cfsr & (1u << 25)) {
        mcu_fmt_str(&f, " (integer division by zero)");
    }
    if (cfsr & (1u << 20)) {
        mcu_fmt_str(&f, " (stack overflow)");
    }
#endif
    mcu_fmt_str(&f, " exc_return=");
    mcu_fmt_hex(&f, exc_return);
    mcu_send_error(0u, MCU_STATUS_FAULT, text);
    mcu_uart_flush();
    mcu_exit(128 + (int)n);
}
