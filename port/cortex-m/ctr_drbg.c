/* SPDX-License-Identifier: Apache-2.0 */
/* The production random source of port/cortex-m (see dpm/port_cortex_m_drbg.h): CTR_DRBG over
 * the board's TRNG. Compiled against Mbed TLS's device config; .make/cortex-m.mk keeps it out
 * of libdpm_cm.a (whose other objects need no Mbed TLS) and links it where Mbed TLS is. */
#include "dpm/port_cortex_m_drbg.h"

#include "dpm/port_cortex_m.h"

/* The DRBG's entropy source: the board's TRNG. */
static int cm_drbg_entropy(void *ctx, unsigned char *out, size_t len)
{
    (void)ctx;
    return dpm_cm_trng_read(out, len) == DPM_OK ? 0 : MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
}

dpm_status_t dpm_cm_drbg_init(dpm_cm_drbg_t *r, const uint8_t *personalization,
                              size_t personalization_len)
{
    if (r == NULL) {
        return DPM_ERR_PARAM;
    }
    mbedtls_ctr_drbg_init(&r->drbg);
    if (mbedtls_ctr_drbg_seed(&r->drbg, cm_drbg_entropy, NULL, personalization,
                              personalization_len) != 0) {
        dpm_cm_drbg_free(r);
        return DPM_ERR_RNG;
    }
    mbedtls_ctr_drbg_set_reseed_interval(&r->drbg, DPM_CM_DRBG_RESEED_INTERVAL);
    return DPM_OK;
}

void dpm_cm_drbg_free(dpm_cm_drbg_t *r)
{
    if (r != NULL) {
        mbedtls_ctr_drbg_free(&r->drbg);
    }
}

/* One DRBG request per MBEDTLS_CTR_DRBG_MAX_REQUEST bytes (the SDK asks for 64 or 256). */
static int cm_drbg_fill(void *ctx, uint8_t *out, size_t len)
{
    dpm_cm_drbg_t *r = ctx;
    while (len > 0) {
        size_t n = len < MBEDTLS_CTR_DRBG_MAX_REQUEST ? len : MBEDTLS_CTR_DRBG_MAX_REQUEST;
        if (mbedtls_ctr_drbg_random(&r->drbg, out, n) != 0) {
            return -1;
        }
        out += n;
        len -= n;
    }
    return 0;
}

dpm_rng_t dpm_cm_drbg(dpm_cm_drbg_t *r)
{
    dpm_rng_t rng = {cm_drbg_fill, r};
    return rng;
}
