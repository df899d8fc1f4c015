/* SPDX-License-Identifier: Apache-2.0 */
/* Console and exit status over Arm semihosting: the `bkpt 0xAB` trap a debugger (or QEMU with
 * -semihosting-config enable=on) services. printf and file I/O go through the C library's
 * semihosting layer (newlib's librdimon, --specs=rdimon.specs); the exit status does not rely
 * on it: SYS_EXIT_EXTENDED carries the status to the host on every ARMv7-M target, where the
 * older SYS_EXIT cannot (its 32-bit form only says "stopped").
 *
 * Without a debugger attached a semihosting call is a breakpoint that faults (HardFault), so
 * a product image replaces this file with a UART console and a reset instead of an exit. */
#include <stdint.h>

#include "dpm/port_cortex_m.h"

#define SYS_WRITE0 0x04u
#define SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

static uintptr_t semihost_call(uint32_t op, const void *arg)
{
    register uintptr_t r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = arg;
    __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void initialise_monitor_handles(void); /* librdimon */

void dpm_cm_console_init(void)
{
    initialise_monitor_handles();
}

void dpm_cm_console_write(const char *s)
{
    (void)semihost_call(SYS_WRITE0, s);
}

void dpm_cm_exit(int status)
{
    const uint32_t block[2] = {ADP_STOPPED_APPLICATION_EXIT, (uint32_t)status};
    for (;;) {
        (void)semihost_call(SYS_EXIT_EXTENDED, block);
    }
}

/* The C library's exit() ends here (after atexit handlers and the stdio flush); this
 * definition takes the place of librdimon's, so the status reaches the host. */
void _exit(int status) __attribute__((noreturn));
void _exit(int status)
{
    dpm_cm_exit(status);
}
