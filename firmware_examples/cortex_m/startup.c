/*
 * Minimal Cortex-M start-up: vector table, reset handler (copy .data, zero
 * .bss, enable the FPU on hard-float builds, call main, report its return
 * code), and fault handlers that end the run with a distinct exit code
 * instead of hanging.
 */
#include <stdint.h>

#include "semihost.h"

/* Symbols from the linker script. */
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;

int main(void);

/* Exit codes of the fault handlers (distinct from main's 0/1/2). */
#define FM_EXIT_HARDFAULT 90
#define FM_EXIT_OTHERFAULT 91

typedef void (*fm_handler)(void);

void fm_reset(void);
void fm_hardfault(void);
void fm_fault(void);

typedef struct {
    const uint32_t *initial_sp;
    fm_handler handlers[15];
} fm_vector_table;

__attribute__((section(".vectors"), used)) const fm_vector_table fm_vectors = {
    &_estack,
    {
        fm_reset,     /* reset */
        fm_fault,     /* NMI */
        fm_hardfault, /* hard fault */
        fm_fault,     /* memory management (M3+) */
        fm_fault,     /* bus fault (M3+) */
        fm_fault,     /* usage fault (M3+) */
        fm_fault,     /* secure fault (M33) */
        0, 0, 0,      /* reserved */
        fm_fault,     /* SVCall */
        fm_fault,     /* debug monitor */
        0,            /* reserved */
        fm_fault,     /* PendSV */
        fm_fault,     /* SysTick */
    },
};

void fm_reset(void)
{
    uint32_t *dst;
    const uint32_t *src;
#if defined(__ARM_FP)
    /* CPACR: full access to coprocessors 10 and 11 (the FPU). */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    for (src = &_sidata, dst = &_sdata; dst < &_edata;) {
        *dst++ = *src++;
    }
    for (dst = &_sbss; dst < &_ebss;) {
        *dst++ = 0;
    }
    sh_exit(main());
}

void fm_hardfault(void)
{
    sh_write0("hard fault\n");
    sh_exit(FM_EXIT_HARDFAULT);
}

void fm_fault(void)
{
    sh_write0("unexpected exception\n");
    sh_exit(FM_EXIT_OTHERFAULT);
}
