/* SPDX-License-Identifier: Apache-2.0 */
/* Cortex-M startup: the vector table and the reset handler (ARMv7-M: M3, M4, M7).
 *
 * Reset: copy .data from flash, zero .bss, enable the FPU if the code was built for one
 * (-mfloat-abi=hard/softfp; the SDK itself never uses it), open the console, run the C
 * library's constructors, call main() and hand its return value to exit(). Faults and
 * unexpected interrupts print what happened and exit with status 128 + exception number, so a
 * crashing test image fails its run instead of hanging it. Handlers are weak: define
 * SysTick_Handler etc. to take them over. Symbols come from mps2.ld (or a board's script).
 * Also the C library's memory hook (_sbrk) and the empty _init/_fini it expects when linked
 * without its start files. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "dpm/port_cortex_m.h"

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start__[], __bss_end__[];
extern uint32_t __stack_top[];
extern char __heap_start[], __heap_end[];
extern void (*__preinit_array_start[])(void), (*__preinit_array_end[])(void);
extern void (*__init_array_start[])(void), (*__init_array_end[])(void);

/* Called as main(1, {"cortex-m", NULL}) like a hosted program with no arguments (crt0 does the
 * same; a main(void) ignores them). */
int main(int argc, char **argv);
void Reset_Handler(void);
void Default_Handler(void);

#define WEAK_HANDLER(name) void name(void) __attribute__((weak, alias("Default_Handler")))
WEAK_HANDLER(NMI_Handler);
WEAK_HANDLER(HardFault_Handler);
WEAK_HANDLER(MemManage_Handler);
WEAK_HANDLER(BusFault_Handler);
WEAK_HANDLER(UsageFault_Handler);
WEAK_HANDLER(SVC_Handler);
WEAK_HANDLER(DebugMon_Handler);
WEAK_HANDLER(PendSV_Handler);
WEAK_HANDLER(SysTick_Handler);

typedef void (*dpm_cm_vector_t)(void);

/* The 16 system vectors; a board with device interrupts appends its own (mps2: 32 more, all
 * unused here, so an unexpected one hits the default handler through the vector count the
 * hardware reads as the table's end). */
__attribute__((section(".isr_vector"), used)) const dpm_cm_vector_t dpm_cm_vectors[16] = {
    (dpm_cm_vector_t)(uintptr_t)__stack_top, /* initial main stack pointer */
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    0,
    0,
    0,
    0,
    SVC_Handler,
    DebugMon_Handler,
    0,
    PendSV_Handler,
    SysTick_Handler,
};

#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)
#define SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)
#define SCB_BFAR (*(volatile uint32_t *)0xE000ED38u)

void Reset_Handler(void)
{
    for (uint32_t *src = __data_load, *dst = __data_start; dst < __data_end;) {
        *dst++ = *src++;
    }
    for (uint32_t *dst = __bss_start__; dst < __bss_end__;) {
        *dst++ = 0;
    }
#if defined(__ARM_FP)
    SCB_CPACR |= 0xFu << 20; /* CP10 and CP11: full access */
    __asm volatile("dsb\n\tisb" ::: "memory");
#endif
    dpm_cm_console_init();
    for (void (**f)(void) = __preinit_array_start; f < __preinit_array_end; f++) {
        (*f)();
    }
    for (void (**f)(void) = __init_array_start; f < __init_array_end; f++) {
        (*f)();
    }
    static char name[] = "cortex-m";
    static char *argv[] = {name, NULL};
    exit(main(1, argv));
}

static void put_hex(const char *label, uint32_t x)
{
    char hex[11] = "0x";
    for (int i = 9; i >= 2; i--) {
        hex[i] = "0123456789abcdef"[x & 0xFu];
        x >>= 4;
    }
    hex[10] = '\0';
    dpm_cm_console_write(label);
    dpm_cm_console_write(hex);
}

void Default_Handler(void)
{
    uint32_t ipsr;
    __asm volatile("mrs %0, ipsr" : "=r"(ipsr));
    ipsr &= 0x1FFu;
    /* No printf: the C library's state may be what broke. */
    put_hex("\nfault: exception ", ipsr);
    put_hex(" cfsr ", SCB_CFSR);
    put_hex(" hfsr ", SCB_HFSR);
    put_hex(" bfar ", SCB_BFAR);
    dpm_cm_console_write("\n");
    dpm_cm_exit(128 + (int)ipsr);
}

/* The C library's heap: [__heap_start, __heap_end) from the linker script, never into the
 * stack (newlib's default compares against the stack pointer, which only works when the heap
 * sits below the stack in one RAM). */
void *_sbrk(ptrdiff_t incr);
void *_sbrk(ptrdiff_t incr)
{
    static uintptr_t brk; /* the port's one mutable global: the C library's heap top */
    const uintptr_t start = (uintptr_t)__heap_start, end = (uintptr_t)__heap_end;
    if (brk == 0) {
        brk = start;
    }
    if (incr < 0 ? brk - start < (uintptr_t)-incr : end - brk < (uintptr_t)incr) {
        errno = ENOMEM;
        return (void *)-1;
    }
    uintptr_t old = brk;
    brk = incr < 0 ? brk - (uintptr_t)-incr : brk + (uintptr_t)incr;
    return (void *)old;
}

void _init(void);
void _fini(void);
void _init(void)
{
}
void _fini(void)
{
}
