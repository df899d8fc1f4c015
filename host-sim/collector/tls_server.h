/* SPDX-License-Identifier: Apache-2.0 */
/* Mbed TLS 3.6 server side of the collector: one shared configuration (certificate, key,
 * TLS 1.2 and 1.3, CTR_DRBG from the POSIX port) and per-connection sessions whose every
 * socket wait is bounded by a deadline, so a slow or silent peer costs a thread for at most
 * that long and never blocks anyone else. No session cache or tickets: every handshake is a
 * full one. */
#ifndef DPM_COLLECTOR_TLS_SERVER_H
#define DPM_COLLECTOR_TLS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"

#include "dpm/port_posix.h"

typedef struct {
    mbedtls_ssl_config conf;
    mbedtls_x509_crt cert;
    mbedtls_pk_context key;
    dpm_posix_rng_t rng; /* CTR_DRBG; Mbed TLS locks it (MBEDTLS_THREADING_C) */
} coll_tls_t;

/* psa_crypto_init, seed the DRBG, load the certificate chain and key (PEM or DER) and check
 * they match. 0, or -1 with a message in err. */
int coll_tls_init(coll_tls_t *t, const char *cert_path, const char *key_path, char *err,
                  size_t errcap);
void coll_tls_free(coll_tls_t *t);

/* Results of the session calls besides byte counts. */
#define COLL_IO_EOF 0
#define COLL_IO_ERROR (-1)
#define COLL_IO_TIMEOUT (-2)

typedef struct {
    mbedtls_ssl_context ssl;
    int fd;
    uint64_t deadline_ms; /* absolute, coll_now_ms() clock: every socket wait ends by then */
} coll_tls_conn_t;

/* Monotonic milliseconds. */
uint64_t coll_now_ms(void);

/* Handshake on an accepted socket, finished by deadline_ms. 0, COLL_IO_TIMEOUT or
 * COLL_IO_ERROR (the session must still be closed with coll_tls_conn_close). */
int coll_tls_accept(coll_tls_conn_t *c, const coll_tls_t *t, int fd, uint64_t deadline_ms);

/* Read up to cap decrypted bytes: > 0 bytes, COLL_IO_EOF (peer closed), COLL_IO_TIMEOUT or
 * COLL_IO_ERROR. */
int coll_tls_read(coll_tls_conn_t *c, uint8_t *buf, size_t cap, uint64_t deadline_ms);

/* Write all of buf by deadline_ms. 0, COLL_IO_TIMEOUT or COLL_IO_ERROR. */
int coll_tls_write_all(coll_tls_conn_t *c, const uint8_t *buf, size_t len, uint64_t deadline_ms);

/* Send close_notify (best effort, by deadline_ms) and free the session; the socket stays open. */
void coll_tls_conn_close(coll_tls_conn_t *c, int notify, uint64_t deadline_ms);

#endif /* DPM_COLLECTOR_TLS_SERVER_H */
