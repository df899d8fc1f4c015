/* SPDX-License-Identifier: Apache-2.0 */
/* CSPRNG for POSIX devices: Mbed TLS CTR_DRBG (AES-256, derivation function) seeded and
 * periodically reseeded from the kernel (getrandom on Linux, getentropy elsewhere). */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#if defined(__linux__)
#include <sys/random.h>
#else
#include <unistd.h>
#endif

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/platform_util.h"

#include "dpm/port_posix.h"

#if DPM_POSIX_RNG_POOL_BYTES > MBEDTLS_CTR_DRBG_MAX_REQUEST
#error "the pool is refilled by one DRBG request"
#endif

/* The real context lives in dpm_posix_rng_t's opaque storage (see DPM_POSIX_DRBG_BYTES): it
 * must fit, and need no stricter alignment than that storage (C99 compile-time checks: a
 * negative array size stops the build). */
struct drbg_align_probe {
    char c;
    mbedtls_ctr_drbg_context t;
};
struct u64_align_probe {
    char c;
    uint64_t t;
};
typedef char
    drbg_fits_in_dpm_posix_rng_t[sizeof(mbedtls_ctr_drbg_context) <= DPM_POSIX_DRBG_BYTES ? 1 : -1];
typedef char drbg_aligned_in_dpm_posix_rng_t
    [offsetof(struct drbg_align_probe, t) <= offsetof(struct u64_align_probe, t) ? 1 : -1];

static mbedtls_ctr_drbg_context *drbg(dpm_posix_rng_t *r)
{
    return (mbedtls_ctr_drbg_context *)(void *)r->drbg_opaque.bytes;
}

/* NIST SP 800-90A CTR_DRBG with AES-256: 256 bits of entropy input and a 128-bit nonce. */
#define SEED_ENTROPY_LEN 32u
#define SEED_NONCE_LEN 16u

int dpm_posix_getrandom(void *ctx, unsigned char *out, size_t len)
{
    (void)ctx;
    while (len > 0) {
#if defined(__linux__)
        ssize_t n = getrandom(out, len, 0);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        out += n;
        len -= (size_t)n;
#else
        size_t n = len < 256u ? len : 256u; /* getentropy's limit */
        if (getentropy(out, n) != 0) {
            return -1;
        }
        out += n;
        len -= n;
#endif
    }
    return 0;
}

dpm_status_t dpm_posix_rng_init_with_entropy_sized(dpm_posix_rng_t *r, size_t r_size,
                                                   dpm_posix_entropy_fn entropy, void *entropy_ctx,
                                                   const uint8_t *personalization,
                                                   size_t personalization_len)
{
    if (r == NULL || r_size != sizeof(*r) || entropy == NULL) {
        return DPM_ERR_PARAM;
    }
    mbedtls_ctr_drbg_init(drbg(r));
    r->pool_pos = DPM_POSIX_RNG_POOL_BYTES; /* empty */
    mbedtls_ctr_drbg_set_entropy_len(drbg(r), SEED_ENTROPY_LEN);
    if (mbedtls_ctr_drbg_set_nonce_len(drbg(r), SEED_NONCE_LEN) != 0 ||
        mbedtls_ctr_drbg_seed(drbg(r), entropy, entropy_ctx, personalization,
                              personalization_len) != 0) {
        mbedtls_ctr_drbg_free(drbg(r));
        return DPM_ERR_RNG;
    }
    /* Reseed from the kernel every DPM_POSIX_RESEED_INTERVAL requests (each up to 1 KiB). */
    mbedtls_ctr_drbg_set_reseed_interval(drbg(r), DPM_POSIX_RESEED_INTERVAL);
    return DPM_OK;
}

dpm_status_t dpm_posix_rng_init_sized(dpm_posix_rng_t *r, size_t r_size,
                                      const uint8_t *personalization, size_t personalization_len)
{
    return dpm_posix_rng_init_with_entropy_sized(r, r_size, dpm_posix_getrandom, NULL,
                                                 personalization, personalization_len);
}

/* Discard the pooled bytes: the next small fill makes a new request. */
static void pool_drop(dpm_posix_rng_t *r)
{
    mbedtls_platform_zeroize(r->pool, sizeof(r->pool));
    r->pool_pos = sizeof(r->pool);
}

dpm_status_t dpm_posix_rng_reseed(dpm_posix_rng_t *r)
{
    if (r == NULL) {
        return DPM_ERR_PARAM;
    }
    pool_drop(r);
    return mbedtls_ctr_drbg_reseed(drbg(r), NULL, 0) == 0 ? DPM_OK : DPM_ERR_RNG;
}

void dpm_posix_rng_free(dpm_posix_rng_t *r)
{
    pool_drop(r);
    mbedtls_ctr_drbg_free(drbg(r));
}

/* len bytes straight from the DRBG, one request per MBEDTLS_CTR_DRBG_MAX_REQUEST bytes. */
static int drbg_fill(dpm_posix_rng_t *r, uint8_t *out, size_t len)
{
    while (len > 0) {
        size_t n = len < MBEDTLS_CTR_DRBG_MAX_REQUEST ? len : MBEDTLS_CTR_DRBG_MAX_REQUEST;
        if (mbedtls_ctr_drbg_random(drbg(r), out, n) != 0) {
            return -1;
        }
        out += n;
        len -= n;
    }
    return 0;
}

/* The pooled bytes first; then, with the pool empty, a long fill goes to the DRBG directly
 * and a short one refills the pool with one request. */
static int posix_rng_fill(void *ctx, uint8_t *out, size_t len)
{
    dpm_posix_rng_t *r = ctx;
    while (len > 0) {
        size_t avail = sizeof(r->pool) - r->pool_pos;
        if (avail == 0 && len >= sizeof(r->pool)) {
            return drbg_fill(r, out, len);
        }
        if (avail == 0) {
            if (mbedtls_ctr_drbg_random(drbg(r), r->pool, sizeof(r->pool)) != 0) {
                pool_drop(r);
                return -1;
            }
            r->pool_pos = 0;
            avail = sizeof(r->pool);
        }
        size_t n = len < avail ? len : avail;
        memcpy(out, r->pool + r->pool_pos, n);
        mbedtls_platform_zeroize(r->pool + r->pool_pos, n);
        r->pool_pos += n;
        out += n;
        len -= n;
    }
    return 0;
}

int dpm_posix_rng_f_rng(void *r, unsigned char *out, size_t len)
{
    return mbedtls_ctr_drbg_random(drbg(r), out, len);
}

dpm_rng_t dpm_posix_rng(dpm_posix_rng_t *r)
{
    dpm_rng_t rng = {posix_rng_fill, r};
    return rng;
}
