/* SPDX-License-Identifier: Apache-2.0 */
/* A production random source for bare-metal boards (port/cortex-m/ctr_drbg.c): Mbed TLS's
 * CTR_DRBG (AES-256 with its derivation function, NIST SP 800-90A) seeded and reseeded from the
 * board's TRNG (dpm_cm_trng_read()), as port/posix seeds it from the kernel. It is the dpm_rng_t
 * a firmware gives dpm_device_init, and the hook whose stack `make size` charges at the SDK's
 * rng->fill call: a due reseed (every DPM_CM_DRBG_RESEED_INTERVAL requests) reads the TRNG and
 * runs the derivation function on the caller's stack.
 *
 * The TRNG's bytes go to the DRBG directly, without Mbed TLS's entropy collector: that one
 * conditions through SHA-512 (about 1.4 KB more stack at a reseed) and allocates its hash
 * context from Mbed TLS's heap at every reseed; the derivation function already conditions the
 * 48 bytes of entropy input a reseed reads.
 *
 * Unlike port/posix's generator, the context is not hidden behind opaque storage: firmware
 * compiles the app, the SDK and Mbed TLS against one configuration (dpm_mbedtls_device.h), so
 * the app's sizeof matches the library's. Needs Mbed TLS's headers on the include path and
 * MBEDTLS_CTR_DRBG_C and MBEDTLS_AES_C (no heap, no PSA). */
#ifndef DPM_PORT_CORTEX_M_DRBG_H
#define DPM_PORT_CORTEX_M_DRBG_H

#include <stddef.h>
#include <stdint.h>

#include "mbedtls/ctr_drbg.h"

#include "dpm/port.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Requests between two reseeds from the TRNG (each request: one SDK refill, 64 or 256 bytes). */
#ifndef DPM_CM_DRBG_RESEED_INTERVAL
#define DPM_CM_DRBG_RESEED_INTERVAL 1024
#endif

/* Held by the app for as long as the device uses it (static storage). */
typedef struct {
    mbedtls_ctr_drbg_context drbg;
} dpm_cm_drbg_t;

/* Seed from the TRNG; personalization (may be NULL, 0) should be unique per device, such as a
 * serial number. DPM_OK; DPM_ERR_PARAM if r is NULL; DPM_ERR_RNG if the TRNG fails (the weak
 * default's, on QEMU) or Mbed TLS refuses the seed: r is then freed and must not be used. */
dpm_status_t dpm_cm_drbg_init(dpm_cm_drbg_t *r, const uint8_t *personalization,
                              size_t personalization_len);
void dpm_cm_drbg_free(dpm_cm_drbg_t *r);
/* r as the SDK's random source. fill() returns -1 (the SDK: DPM_ERR_RNG) when a due reseed
 * cannot read the TRNG; it never hands out bytes it could not make. */
dpm_rng_t dpm_cm_drbg(dpm_cm_drbg_t *r);

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_CORTEX_M_DRBG_H */
