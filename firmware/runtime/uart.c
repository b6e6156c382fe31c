/*
 * The board's serial port, 8N1, polled (no interrupts, no buffers: the protocol is request/response).
 *
 * MCU_UART_CMSDK: ARM CMSDK APB UART (MPS2/MPS3 FPGA images, and QEMU's model of them).
 * MCU_UART_STM32: STM32 USART/LPUART with the ISR/RDR/TDR register layout (F7, L4, L4+ ...); the
 *                 board's MCU_UART_INIT register writes turn on its clocks and route its pins first.
 * MCU_UART_STM32F4: STM32 USART with the SR/DR register layout (F1, F2, F4), the same init writes.
 * MCU_UART_NRF51: Nordic nRF51 UART (events RXDRDY/TXDRDY, tasks STARTRX/STARTTX); the init writes
 *                 select its pins.
 */
#include "mcu_runtime.h"

#if MCU_UART_TYPE == MCU_UART_CMSDK

#define UART_DATA MCU_REG(MCU_UART_BASE + 0x00u)
#define UART_STATE MCU_REG(MCU_UART_BASE + 0x04u)
#define UART_CTRL MCU_REG(MCU_UART_BASE + 0x08u)
#define UART_BAUDDIV MCU_REG(MCU_UART_BASE + 0x10u)
#define STATE_TX_FULL (1u << 0)
#define STATE_RX_FULL (1u << 1)
#define STATE_OVERRUNS (3u << 2)
#define CTRL_TX_EN (1u << 0)
#define CTRL_RX_EN (1u << 1)

void mcu_uart_init(void)
{
    UART_BAUDDIV = MCU_UART_DIVISOR;
    UART_CTRL = CTRL_TX_EN | CTRL_RX_EN;
}

void mcu_uart_putc(uint8_t c)
{
    while (UART_STATE & STATE_TX_FULL) {
    }
    UART_DATA = c;
}

uint8_t mcu_uart_getc(void)
{
    uint32_t state;
    while (!((state = UART_STATE) & STATE_RX_FULL)) {
    }
    if (state & STATE_OVERRUNS) {
        UART_STATE = STATE_OVERRUNS; /* write 1 to clear; the lost byte shows up as a CRC error */
    }
    return (uint8_t)UART_DATA;
}

int mcu_uart_getc_within(uint8_t *c, uint32_t polls)
{
    do {
        const uint32_t state = UART_STATE;
        if (state & STATE_RX_FULL) {
            if (state & STATE_OVERRUNS) {
                UART_STATE = STATE_OVERRUNS;
            }
            *c = (uint8_t)UART_DATA;
            return 1;
        }
    } while (polls-- != 0u);
    return 0;
}

void mcu_uart_flush(void)
{
    while (UART_STATE & STATE_TX_FULL) {
    }
}

#else

typedef struct {
    uint32_t address, mask, value;
} reg_write_t;

/* The board's register read-modify-writes (clocks, pins), in order, before the UART is enabled. */
static void board_uart_init(void)
{
#if MCU_UART_INIT_COUNT > 0
    static const reg_write_t init[MCU_UART_INIT_COUNT] = MCU_UART_INIT;
    for (uint32_t i = 0; i < MCU_UART_INIT_COUNT; i++) {
        MCU_REG(init[i].address) = (MCU_REG(init[i].address) & ~init[i].mask) | init[i].value;
        (void)MCU_REG(init[i].address); /* read back: a clock just enabled needs a bus cycle */
        mcu_dsb();
    }
#endif
}

#if MCU_UART_TYPE == MCU_UART_STM32

#define USART_CR1 MCU_REG(MCU_UART_BASE + 0x00u)
#define USART_BRR MCU_REG(MCU_UART_BASE + 0x0Cu)
#define USART_ISR MCU_REG(MCU_UART_BASE + 0x1Cu)
#define USART_ICR MCU_REG(MCU_UART_BASE + 0x20u)
#define USART_RDR MCU_REG(MCU_UART_BASE + 0x24u)
#define USART_TDR MCU_REG(MCU_UART_BASE + 0x28u)
#define CR1_UE (1u << 0)
#define CR1_RE (1u << 2)
#define CR1_TE (1u << 3)
#define ISR_ORE (1u << 3)
#define ISR_RXNE (1u << 5)
#define ISR_TC (1u << 6)
#define ISR_TXE (1u << 7)

void mcu_uart_init(void)
{
    board_uart_init();
    USART_CR1 = 0u;
    USART_BRR = MCU_UART_DIVISOR;
    USART_CR1 = CR1_UE | CR1_RE | CR1_TE;
}

void mcu_uart_putc(uint8_t c)
{
    while (!(USART_ISR & ISR_TXE)) {
    }
    USART_TDR = c;
}

uint8_t mcu_uart_getc(void)
{
    for (;;) {
        const uint32_t isr = USART_ISR;
        if (isr & ISR_RXNE) {
            return (uint8_t)USART_RDR;
        }
        if (isr & ISR_ORE) {
            USART_ICR = ISR_ORE; /* a lost byte shows up as a CRC error */
        }
    }
}

int mcu_uart_getc_within(uint8_t *c, uint32_t polls)
{
    do {
        const uint32_t isr = USART_ISR;
        if (isr & ISR_RXNE) {
            *c = (uint8_t)USART_RDR;
            return 1;
        }
        if (isr & ISR_ORE) {
            USART_ICR = ISR_ORE;
        }
    } while (polls-- != 0u);
    return 0;
}

void mcu_uart_flush(void)
{
    while (!(USART_ISR & ISR_TC)) {
    }
}

#elif MCU_UART_TYPE == MCU_UART_STM32F4

#define USART_SR MCU_REG(MCU_UART_BASE + 0x00u)
#define USART_DR MCU_REG(MCU_UART_BASE + 0x04u)
#define USART_BRR MCU_REG(MCU_UART_BASE + 0x08u)
#define USART_CR1 MCU_REG(MCU_UART_BASE + 0x0Cu)
#define CR1_UE (1u << 13)
#define CR1_TE (1u << 3)
#define CR1_RE (1u << 2)
#define SR_ORE (1u << 3)
#define SR_RXNE (1u << 5)
#define SR_TC (1u << 6)
#define SR_TXE (1u << 7)

void mcu_uart_init(void)
{
    board_uart_init();
    USART_CR1 = 0u;
    USART_BRR = MCU_UART_DIVISOR;
    USART_CR1 = CR1_UE | CR1_RE | CR1_TE;
}

void mcu_uart_putc(uint8_t c)
{
    while (!(USART_SR & SR_TXE)) {
    }
    USART_DR = c;
}

int mcu_uart_getc_within(uint8_t *c, uint32_t polls)
{
    do {
        /* RXNE: a byte; ORE alone: one was lost (reading SR then DR clears it; it shows up as a CRC error) */
        if (USART_SR & (SR_RXNE | SR_ORE)) {
            const uint32_t sr = USART_SR;
            const uint8_t byte = (uint8_t)USART_DR;
            if (sr & SR_RXNE) {
                *c = byte;
                return 1;
            }
        }
    } while (polls-- != 0u);
    return 0;
}

uint8_t mcu_uart_getc(void)
{
    uint8_t c;
    while (!mcu_uart_getc_within(&c, 0xFFFFFFFFu)) {
    }
    return c;
}

void mcu_uart_flush(void)
{
    while (!(USART_SR & SR_TC)) {
    }
}

#elif MCU_UART_TYPE == MCU_UART_NRF51

#define UART_STARTRX MCU_REG(MCU_UART_BASE + 0x000u)
#define UART_STARTTX MCU_REG(MCU_UART_BASE + 0x008u)
#define UART_RXDRDY MCU_REG(MCU_UART_BASE + 0x108u)
#define UART_TXDRDY MCU_REG(MCU_UART_BASE + 0x11Cu)
#define UART_ENABLE MCU_REG(MCU_UART_BASE + 0x500u)
#define UART_RXD MCU_REG(MCU_UART_BASE + 0x518u)
#define UART_TXD MCU_REG(MCU_UART_BASE + 0x51Cu)
#define UART_BAUDRATE MCU_REG(MCU_UART_BASE + 0x524u)
#define ENABLE_UART 4u

static int tx_busy; /* a byte was written whose TXDRDY event has not been seen yet */

void mcu_uart_init(void)
{
    board_uart_init();
    UART_BAUDRATE = MCU_UART_DIVISOR;
    UART_ENABLE = ENABLE_UART;
    UART_RXDRDY = 0u;
    UART_TXDRDY = 0u;
    UART_STARTTX = 1u;
    UART_STARTRX = 1u;
    tx_busy = 0;
}

void mcu_uart_flush(void)
{
    if (tx_busy) {
        while (!UART_TXDRDY) {
        }
        UART_TXDRDY = 0u;
        tx_busy = 0;
    }
}

void mcu_uart_putc(uint8_t c)
{
    mcu_uart_flush();
    UART_TXD = c;
    tx_busy = 1;
}

int mcu_uart_getc_within(uint8_t *c, uint32_t polls)
{
    do {
        if (UART_RXDRDY) {
            UART_RXDRDY = 0u; /* clear the event before reading: a further byte sets it again */
            *c = (uint8_t)UART_RXD;
            return 1;
        }
    } while (polls-- != 0u);
    return 0;
}

uint8_t mcu_uart_getc(void)
{
    uint8_t c;
    while (!mcu_uart_getc_within(&c, 0xFFFFFFFFu)) {
    }
    return c;
}

#else
#error "unknown MCU_UART_TYPE"
#endif
#endif
