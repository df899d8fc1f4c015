/* SPDX-License-Identifier: Apache-2.0 */
/* Instruction counts on the Cortex-M benchmarks (bench_cm.c, bench_vdaf_cm.c, bench_dap_cm.c):
 * under `qemu-system-arm -icount shift=0` virtual time advances one nanosecond per instruction, and
 * SysTick, clocked by the processor, counts it (QEMU does not model the DWT cycle counter);
 * ticks become instructions through a calibration loop of known length (cm_ticks_per_instr). */
#ifndef CM_TICKS_H
#define CM_TICKS_H

#include <stdint.h>

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SYST_ENABLE_CPUCLK 5u     /* ENABLE | CLKSOURCE (processor clock), no interrupt */
#define SYST_COUNTFLAG (1u << 16) /* wrapped since the last read */
#define CM_TICKS_SPIN 1000000u

static inline void ticks_start(void)
{
    SYST_CSR = 0;
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    (void)SYST_CSR; /* clears COUNTFLAG */
    SYST_CSR = SYST_ENABLE_CPUCLK;
}

/* Ticks since ticks_start; -1 if the 24-bit counter wrapped (the run was too long). */
static inline long ticks_stop(void)
{
    uint32_t v = SYST_CVR;
    uint32_t csr = SYST_CSR;
    SYST_CSR = 0;
    return (csr & SYST_COUNTFLAG) ? -1 : (long)(0xFFFFFFu - v);
}

static inline void spin(uint32_t n) /* 2 instructions per iteration */
{
    __asm volatile("1: subs %0, %0, #1\n\tbne 1b" : "+r"(n) : : "cc");
}

#endif
