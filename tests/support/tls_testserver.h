/* SPDX-License-Identifier: Apache-2.0 */
/* Test helpers for TLS: a throw-away PKI (tests/support/tls_testpki.sh) in a temp dir, and
 * loopback servers in child processes: openssl s_server, a plain-TCP server that answers
 * garbage, and one that accepts and never answers. Everything listens on 127.0.0.1 only, on a
 * port the kernel picks. Children die with the test process (PR_SET_PDEATHSIG on Linux) and
 * tls_testserver_stop() kills and reaps them; call it from a cmocka teardown so a failed
 * assertion cannot leak a server.
 *
 * The PKI script path is tests/support/tls_testpki.sh relative to the working directory (the
 * test runner starts from the repository root), or $DPM_TLS_TESTPKI if set. */
#ifndef TLS_TESTSERVER_H
#define TLS_TESTSERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct {
    char dir[200]; /* e.g. /tmp/dpm-tls-AbC123 */
} tls_testpki_t;

/* Make the PKI in a fresh temp dir (see tls_testpki.sh for the file names). 0 or -1. */
int tls_testpki_create(tls_testpki_t *pki);
/* Delete the dir and its files (flat). Safe on a PKI that was never created (dir empty). */
void tls_testpki_destroy(tls_testpki_t *pki);
/* "<dir>/<file>" into out; returns out, or NULL if it does not fit. */
const char *tls_testpki_path(const tls_testpki_t *pki, const char *file, char *out, size_t cap);
/* Read a file into buf and NUL-terminate it; *len counts the NUL, which is what Mbed TLS wants
 * for PEM (DER files get a harmless extra byte: pass len - 1). 0, or -1 if it does not fit. */
int tls_testpki_load(const tls_testpki_t *pki, const char *file, uint8_t *buf, size_t cap,
                     size_t *len);

typedef struct {
    pid_t pid;          /* 0 when not running */
    uint16_t port;      /* on 127.0.0.1 */
    char log_path[240]; /* openssl s_server's stdout+stderr ("" for the raw servers) */
} tls_testserver_t;

/* openssl s_server -accept 127.0.0.1:0 -cert <dir>/<cert> -key <dir>/<key> [extra...]
 * (extra: NULL-terminated, e.g. {"-rev", "-tls1_2", NULL}). The log goes to
 * <pki dir>/s_server-<pid>.log. Waits up to timeout_ms for the "ACCEPT" line. 0 or -1. */
int tls_testserver_start_openssl(tls_testserver_t *s, const tls_testpki_t *pki, const char *cert,
                                 const char *key, const char *const *extra, uint32_t timeout_ms);
/* A plain TCP server: for each connection it reads what arrives (up to 1 s), answers with an
 * HTTP error page (certainly not TLS) and holds the connection open until the peer closes. */
int tls_testserver_start_garbage(tls_testserver_t *s);
/* A TCP server that accepts connections and never sends a byte. */
int tls_testserver_start_silent(tls_testserver_t *s);
/* 1 if the s_server log contains needle within timeout_ms, else 0. */
int tls_testserver_wait_log(const tls_testserver_t *s, const char *needle, uint32_t timeout_ms);
/* SIGTERM, up to 1 s grace, SIGKILL; reaps the child. Idempotent (pid 0: nothing to do). */
void tls_testserver_stop(tls_testserver_t *s);

#endif /* TLS_TESTSERVER_H */
