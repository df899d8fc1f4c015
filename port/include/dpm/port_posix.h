/* SPDX-License-Identifier: Apache-2.0 */
/* The POSIX port (Linux, macOS): CSPRNG, clocks, file storage, TCP transport.
 *
 * Every function of the port's own returns a dpm_status_t (DPM_OK, or the negative status that
 * says what failed), as the SDK's do. The exceptions are the callbacks whose signature another
 * API fixes: dpm_posix_rng_f_rng (Mbed TLS's f_rng), dpm_posix_getrandom and
 * dpm_posix_entropy_fn (Mbed TLS's entropy callback), and the dpm_rng_t / dpm_storage_t /
 * dpm_transport_t hooks of dpm/port.h: those return int, 0 or an error. */
#ifndef DPM_PORT_POSIX_H
#define DPM_PORT_POSIX_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/port.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CSPRNG: Mbed TLS CTR_DRBG (AES-256) ------------------------------------------------- */

/* Requests (each up to 1 KiB) between automatic reseeds from the kernel. */
#ifndef DPM_POSIX_RESEED_INTERVAL
#define DPM_POSIX_RESEED_INTERVAL 4096
#endif

/* An entropy source: fill out with len bytes, 0 on success, non-zero on failure. int, not
 * dpm_status_t: it is Mbed TLS's entropy callback (mbedtls_ctr_drbg_seed's f_entropy). */
typedef int (*dpm_posix_entropy_fn)(void *ctx, unsigned char *out, size_t len);

/* Bytes the DRBG generates per request for small fills: one request costs ~90 ns (mutex,
 * state update, re-key) on top of ~1 ns/byte, so serving the SDK's 256-byte refills from a
 * pool filled by 1 KiB requests (MBEDTLS_CTR_DRBG_MAX_REQUEST) saves ~20 % of their cost. */
#define DPM_POSIX_RNG_POOL_BYTES 1024u

/* Bytes reserved for the Mbed TLS CTR_DRBG context inside dpm_posix_rng_t. The context's real
 * size depends on the Mbed TLS configuration the port was built with (392 bytes with the
 * project's host config on x86_64, 344 with Mbed TLS's default one), which an app must not need
 * to know: the struct below has the same size whatever an app compiles with, and needs no Mbed
 * TLS header. port/posix/rng.c fails to build if the real context does not fit. */
#define DPM_POSIX_DRBG_BYTES 512u

/* One per thread (the pool is not locked; the DRBG itself is, for callers that use it
 * directly as an Mbed TLS f_rng through dpm_posix_rng_f_rng). Read only through the functions
 * below. */
typedef struct {
    union {
        uint64_t align_u64;
        void *align_ptr;
        unsigned char bytes[DPM_POSIX_DRBG_BYTES];
    } drbg_opaque; /* the mbedtls_ctr_drbg_context */
    /* DRBG output not yet handed out: pool[pool_pos ..]; bytes handed out are zeroised, so a
     * later compromise of this struct reveals no output already used (as the DRBG's own
     * backtracking resistance) */
    size_t pool_pos;
    uint8_t pool[DPM_POSIX_RNG_POOL_BYTES];
} dpm_posix_rng_t;

/* The two initialisers below pass sizeof(dpm_posix_rng_t) as the app's compiler sees it to
 * these, which refuse (DPM_ERR_PARAM, *r untouched) a size other than the library's: headers of
 * another dpmetrics release than the library fail cleanly instead of overrunning the app's
 * struct. */
dpm_status_t dpm_posix_rng_init_sized(dpm_posix_rng_t *r, size_t r_size,
                                      const uint8_t *personalization, size_t personalization_len);
dpm_status_t dpm_posix_rng_init_with_entropy_sized(dpm_posix_rng_t *r, size_t r_size,
                                                   dpm_posix_entropy_fn entropy, void *entropy_ctx,
                                                   const uint8_t *personalization,
                                                   size_t personalization_len);

/* Seed from the kernel (getrandom/getentropy) with an optional personalization string (e.g.
 * a device id). Returns DPM_OK; DPM_ERR_PARAM if r is NULL (or the headers do not match the
 * library, see above); DPM_ERR_RNG if the kernel's entropy or the DRBG's seeding fails. */
static inline dpm_status_t dpm_posix_rng_init(dpm_posix_rng_t *r, const uint8_t *personalization,
                                              size_t personalization_len)
{
    return dpm_posix_rng_init_sized(r, sizeof(dpm_posix_rng_t), personalization,
                                    personalization_len);
}
/* Seed from another entropy source: for known-answer tests and platforms with their own TRNG.
 * The source is asked for 32 bytes of entropy and a 16-byte nonce at seeding and 32 bytes at
 * every reseed. DPM_OK; DPM_ERR_PARAM (r or entropy NULL, or a size mismatch); DPM_ERR_RNG if
 * the source fails or the DRBG refuses its seed. */
static inline dpm_status_t
dpm_posix_rng_init_with_entropy(dpm_posix_rng_t *r, dpm_posix_entropy_fn entropy, void *entropy_ctx,
                                const uint8_t *personalization, size_t personalization_len)
{
    return dpm_posix_rng_init_with_entropy_sized(r, sizeof(dpm_posix_rng_t), entropy, entropy_ctx,
                                                 personalization, personalization_len);
}
/* Reseed now (e.g. after fork or resume); pooled bytes are discarded, so every byte handed
 * out afterwards comes from the reseeded state. DPM_OK, DPM_ERR_PARAM (r NULL) or DPM_ERR_RNG
 * (the entropy source failed: the DRBG keeps its old state). */
dpm_status_t dpm_posix_rng_reseed(dpm_posix_rng_t *r);
void dpm_posix_rng_free(dpm_posix_rng_t *r);
/* The port interface view; r must outlive it. Fills shorter than the pool are served from
 * it (the pool is refilled by one DRBG request); longer ones go to the DRBG directly. */
dpm_rng_t dpm_posix_rng(dpm_posix_rng_t *r);
/* The DRBG as an Mbed TLS f_rng (p_rng = the dpm_posix_rng_t *), e.g. for
 * mbedtls_ssl_conf_rng: bytes straight from the DRBG, not from the pool, under the DRBG's own
 * lock (with MBEDTLS_THREADING_C). 0, or an Mbed TLS error code: int, as Mbed TLS's f_rng type
 * fixes it. */
int dpm_posix_rng_f_rng(void *r, unsigned char *out, size_t len);
/* The kernel entropy source itself (a dpm_posix_entropy_fn; ctx unused): 0, or -1 if the
 * kernel fails. int, as dpm_posix_entropy_fn is. */
int dpm_posix_getrandom(void *ctx, unsigned char *out, size_t len);

/* ---- clock ----------------------------------------------------------------------------- */
dpm_clock_t dpm_posix_clock(void);

/* ---- storage: one file, atomic writes ----------------------------------------------------- */
#define DPM_POSIX_PATH_MAX 256
typedef struct {
    char path[DPM_POSIX_PATH_MAX];
    char tmp_path[DPM_POSIX_PATH_MAX];
    uint32_t size;
} dpm_posix_storage_t;

/* Open the region stored at `path`, creating it erased (0xFF) if missing. Returns DPM_OK;
 * DPM_ERR_PARAM if s or path is NULL, size is 0 or the path is too long (DPM_POSIX_PATH_MAX,
 * with room for ".tmp"); DPM_ERR_STORAGE if the file cannot be read, created or synced (e.g.
 * its directory does not exist: errno says more), or exists with another size: the region
 * never silently changes shape. */
dpm_status_t dpm_posix_storage_open(dpm_posix_storage_t *s, const char *path, uint32_t size);
dpm_storage_t dpm_posix_storage(dpm_posix_storage_t *s);

/* ---- TCP transport ------------------------------------------------------------------------ */
typedef struct {
    int fd;
    uint32_t timeout_ms; /* per send/recv wait; 0 means poll without waiting */
} dpm_posix_tcp_t;

/* Connect to host:port (name or address) within timeout_ms (each address tried in turn, each
 * with the whole timeout). Returns DPM_OK; DPM_ERR_PARAM if t or host is NULL or port is 0;
 * DPM_ERR_TRANSPORT if the name does not resolve or every address refuses or fails;
 * DPM_ERR_TIMEOUT if no address answered and at least one ran out of time. *t is written only
 * on DPM_OK. */
dpm_status_t dpm_posix_tcp_connect(dpm_posix_tcp_t *t, const char *host, uint16_t port,
                                   uint32_t timeout_ms);
void dpm_posix_tcp_close(dpm_posix_tcp_t *t);
dpm_transport_t dpm_posix_tcp(dpm_posix_tcp_t *t);

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_POSIX_H */
