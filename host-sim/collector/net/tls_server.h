/* SPDX-License-Identifier: Apache-2.0 */
/* Mbed TLS 3.6 server side of the collector: one shared configuration (certificate, key,
 * TLS 1.2 and 1.3, CTR_DRBG from the POSIX port) and per-connection sessions whose every
 * socket wait is bounded by a deadline, so a slow or silent peer costs a thread for at most
 * that long and never blocks anyone else. No session cache or tickets: every handshake is a
 * full one.
 *
 * Cipher suites: AEAD only, with forward secrecy (ECDHE) in TLS 1.2: TLS 1.3 AES-128-GCM,
 * AES-256-GCM, ChaCha20-Poly1305; TLS 1.2 ECDHE-ECDSA/RSA with the same three. No CBC (no
 * Lucky13-style padding oracles, no SHA-1 MACs) and no CCM_8 (64-bit tags).
 *
 * Device certificates (optional): with a device CA, the server asks every client for a
 * certificate (TLS client authentication, optional at the TLS level so that operators and
 * health checks connect without one). A certificate that is presented must verify against
 * the device CA (else the connection is closed); its subject CN is then the device identity
 * "cert:CN" (coll_tls_peer_identity). */
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
    mbedtls_x509_crt device_ca; /* empty unless device certificates are asked for */
    int ask_device_cert;
    dpm_posix_rng_t rng; /* CTR_DRBG; Mbed TLS locks it (MBEDTLS_THREADING_C) */
} coll_tls_t;

/* psa_crypto_init, seed the DRBG, load the certificate chain and key (PEM or DER) and check
 * they match; with device_ca_path (may be NULL) load the device CA and ask clients for
 * certificates. 0, or -1 with a message in err. */
int coll_tls_init(coll_tls_t *t, const char *cert_path, const char *key_path,
                  const char *device_ca_path, char *err, size_t errcap);

/* The AEAD suites offered (0-terminated), for tests and --help. */
extern const int coll_tls_ciphersuites[];
void coll_tls_free(coll_tls_t *t);

/* PSA Crypto started and rng seeded with the personalization who: what the server's and the
 * HTTPS client's TLS configurations both need first. 0, or -1 with err saying which failed. */
int coll_tls_rng_init(dpm_posix_rng_t *rng, const char *who, char *err, size_t cap);

/* Results of the session calls besides byte counts. */
#define COLL_IO_EOF 0
#define COLL_IO_ERROR (-1)
#define COLL_IO_TIMEOUT (-2)

/* A session's socket and deadline: what the Mbed TLS callbacks below are given as ctx. */
typedef struct {
    int fd;
    uint64_t deadline_ms; /* absolute, coll_now_ms() clock: every socket wait ends by then */
} coll_tls_bio_t;

typedef struct {
    mbedtls_ssl_context ssl;
    coll_tls_bio_t io;
} coll_tls_conn_t;

/* Monotonic milliseconds. */
uint64_t coll_now_ms(void);

/* Wait until fd is ready for events (poll) or the deadline (coll_now_ms) passes: 1 ready (or
 * hung up, or in error: the next I/O call tells which), 0 the deadline, -1 poll failed. */
int coll_wait_fd(int fd, short events, uint64_t deadline_ms);

/* Mbed TLS's send (out 1) or receive callback on the non-blocking socket fd, every wait bounded
 * by deadline_ms: bytes moved, 0 the peer closed (receive), or MBEDTLS_ERR_SSL_TIMEOUT,
 * MBEDTLS_ERR_NET_CONN_RESET, _SEND_FAILED, _RECV_FAILED. The server's sessions and the HTTPS
 * client (https_client.h) both. */
int coll_tls_bio_io(int fd, uint64_t deadline_ms, unsigned char *buf, size_t len, int out);

/* coll_tls_bio_io as Mbed TLS's send and receive callbacks (mbedtls_ssl_set_bio), ctx a
 * coll_tls_bio_t: the server's sessions and the HTTPS client set the same two. */
int coll_tls_bio_send(void *ctx, const unsigned char *buf, size_t len);
int coll_tls_bio_recv(void *ctx, unsigned char *buf, size_t len);

/* Handshake on an accepted socket, finished by deadline_ms. 0, COLL_IO_TIMEOUT or
 * COLL_IO_ERROR (the session must still be closed with coll_tls_conn_close). */
int coll_tls_accept(coll_tls_conn_t *c, const coll_tls_t *t, int fd, uint64_t deadline_ms);

/* Read up to cap decrypted bytes: > 0 bytes, COLL_IO_EOF (peer closed), COLL_IO_TIMEOUT or
 * COLL_IO_ERROR. */
int coll_tls_read(coll_tls_conn_t *c, uint8_t *buf, size_t cap, uint64_t deadline_ms);

/* mbedtls_ssl_write until all of buf is written (the session's callbacks bound the waits): 0,
 * or the Mbed TLS error that stopped it. The server's sessions and the HTTPS client both. */
int coll_tls_ssl_write_all(mbedtls_ssl_context *ssl, const uint8_t *buf, size_t len);

/* Write all of buf by deadline_ms. 0, COLL_IO_TIMEOUT or COLL_IO_ERROR. */
int coll_tls_write_all(coll_tls_conn_t *c, const uint8_t *buf, size_t len, uint64_t deadline_ms);

/* After the handshake: 1 and "cert:CN" in out if the client presented a certificate that
 * verified against the device CA, 0 if it presented none, -1 if it presented one that did not
 * verify (or has no CN): such a connection must be closed. */
int coll_tls_peer_identity(coll_tls_conn_t *c, char *out, size_t cap);

/* After the handshake: the SHA-256 of the client certificate's DER encoding (its fingerprint,
 * revoked.h) into sha256. 0, or -1 (no certificate: sha256 zeroed). */
int coll_tls_peer_fingerprint(coll_tls_conn_t *c, uint8_t sha256[32]);

/* Send close_notify (best effort, by deadline_ms) and free the session; the socket stays open. */
void coll_tls_conn_close(coll_tls_conn_t *c, int notify, uint64_t deadline_ms);

#endif /* DPM_COLLECTOR_TLS_SERVER_H */
