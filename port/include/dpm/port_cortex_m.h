/* SPDX-License-Identifier: Apache-2.0 */
/* The bare-metal Cortex-M port (port/cortex-m/), checked on QEMU's mps2-an385 (Cortex-M3) and
 * mps2-an386 (Cortex-M4) boards:
 *
 *   startup.c      vector table, reset handler (.data/.bss, FPU enable, constructors, main),
 *                  fault handlers that report and exit instead of hanging
 *   mps2.ld        linker script: flash at 0x0, RAM at 0x20000000, stack at the top of RAM
 *   semihost.c     console and exit status over Arm semihosting (a debugger or QEMU)
 *   ram_storage.c  a dpm_storage_t over a RAM buffer (the SDK's storage contract)
 *   trng.c         the TRNG hook a board implements, as a dpm_rng_t and as Mbed TLS's
 *                  mbedtls_hardware_poll
 *   test_drbg.c    a seeded generator for QEMU test images: NOT FOR PRODUCTION
 *
 * A new board replaces mps2.ld (its memory map), implements dpm_cm_trng_read() (its TRNG)
 * and, if it has no debugger attached in the field, dpm_cm_console_* (e.g. a UART) and
 * dpm_cm_exit(); storage on real flash implements dpm_storage_t like the SDK's dpm_ram_storage does
 * (write atomic per call, erase to 0xFF). */
#ifndef DPM_PORT_CORTEX_M_H
#define DPM_PORT_CORTEX_M_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/port.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- console and exit (semihost.c) ------------------------------------------------------ */

/* Called by the reset handler before constructors and main(): opens the C library's
 * semihosting stdin/stdout/stderr, so printf works. */
void dpm_cm_console_init(void);
/* Write a NUL-terminated string to the debugger's console (SYS_WRITE0; no C library). */
void dpm_cm_console_write(const char *s);
/* End the program with an exit status the host sees (SYS_EXIT_EXTENDED: QEMU exits with
 * `status`, so a test image can fail a build). Does not flush stdio: exit() does, then calls
 * _exit(), which this port routes here. */
void dpm_cm_exit(int status) __attribute__((noreturn));

/* ---- randomness (trng.c) ----------------------------------------------------------------------
 */

/* THE BOARD'S TRNG: fill out with len bytes of true random data; DPM_OK on success,
 * DPM_ERR_RNG on failure (any other non-zero status counts as a failure too). A weak default
 * returns DPM_ERR_RNG (QEMU's mps2 boards have no TRNG), so a board that forgets it fails
 * closed: the SDK reports DPM_ERR_RNG instead of using predictable bytes. Feed the SDK through
 * a CSPRNG seeded from it (e.g. Mbed TLS CTR_DRBG, as the posix port does) unless the TRNG
 * itself is fast and conditioned. (A board's definition written as `int` still links and
 * works: the port only tests the result against 0.) */
dpm_status_t dpm_cm_trng_read(uint8_t *out, size_t len);
/* dpm_cm_trng_read() as a dpm_rng_t. Mbed TLS's device config (MBEDTLS_ENTROPY_HARDWARE_ALT)
 * gets the same source through mbedtls_hardware_poll(), defined in trng.c. */
dpm_rng_t dpm_cm_trng(void);

/* ---- test-only generator (test_drbg.c): NOT FOR PRODUCTION -------------------------------- */
#ifdef DPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION
/* Deterministic and predictable (SplitMix64: not even a CSPRNG): for QEMU images whose
 * output must be reproducible. Only compiled with -DDPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION; a
 * product build never sees these declarations. Reports made with it have no privacy. */
typedef struct {
    uint64_t state;
} dpm_cm_test_drbg_t;

void dpm_cm_test_drbg_seed(dpm_cm_test_drbg_t *d, uint64_t seed);
dpm_rng_t dpm_cm_test_drbg(dpm_cm_test_drbg_t *d);
#endif

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_CORTEX_M_H */
