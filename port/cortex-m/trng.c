/* SPDX-License-Identifier: Apache-2.0 */
/* The board's true random number generator, behind one hook: dpm_cm_trng_read(). The weak
 * default fails (QEMU's mps2 boards have no TRNG), so a build that forgets the board's driver
 * gets DPM_ERR_RNG, never predictable bytes. */
#include "dpm/port_cortex_m.h"

__attribute__((weak)) dpm_status_t dpm_cm_trng_read(uint8_t *out, size_t len)
{
    (void)out;
    (void)len;
    return DPM_ERR_RNG;
}

static int trng_fill(void *ctx, uint8_t *out, size_t len)
{
    (void)ctx;
    return dpm_cm_trng_read(out, len) == DPM_OK ? 0 : -1;
}

dpm_rng_t dpm_cm_trng(void)
{
    dpm_rng_t r = {trng_fill, NULL};
    return r;
}

/* Mbed TLS's entropy source under the device config (MBEDTLS_ENTROPY_HARDWARE_ALT): it seeds
 * PSA's DRBG, which makes the TLS 1.3 ephemeral keys. Same prototype as mbedtls/entropy.h. */
int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len, size_t *olen);
int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len, size_t *olen)
{
    (void)data;
    if (dpm_cm_trng_read(output, len) != DPM_OK) {
        *olen = 0;
        return -1;
    }
    *olen = len;
    return 0;
}
