/* SPDX-License-Identifier: Apache-2.0 */
/* port/tls: the Mbed TLS client over the posix TCP transport, against real openssl s_server
 * processes on 127.0.0.1 (certificates made at test time by tests/support/tls_testpki.sh).
 *
 * All Mbed TLS memory comes from a static arena installed before anything else; the system
 * heap is watched (malloc/calloc/realloc/free interposed below) over every TLS session, from
 * dpm_tls_connect() to dpm_tls_close(), and must see zero calls. The arena peak of a TLS 1.3
 * and a TLS 1.2 session is printed as TAP comments ("# ..."). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "mbedtls/x509.h"
#include "psa/crypto.h"

#include "dpm/port_posix.h"
#include "dpm/port_tls.h"
#include "tls_testserver.h"

/* ---- system heap watch ---------------------------------------------------------------------
 * glibc exports its allocator under __libc_*; defining malloc & co. in the executable
 * interposes them for the whole process (libc and every library included). */
#if defined(__GLIBC__)
#define HEAP_WATCH 1
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);
static volatile int heap_watching;
static volatile unsigned long heap_calls;

void *malloc(size_t n)
{
    if (heap_watching) {
        heap_calls++;
    }
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t m)
{
    if (heap_watching) {
        heap_calls++;
    }
    return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n)
{
    if (heap_watching) {
        heap_calls++;
    }
    return __libc_realloc(p, n);
}
void free(void *p)
{
    if (heap_watching && p != NULL) {
        heap_calls++;
    }
    __libc_free(p);
}
#else
#define HEAP_WATCH 0
static volatile int heap_watching;
static volatile unsigned long heap_calls;
#endif

static void watch_heap(void)
{
    heap_calls = 0;
    heap_watching = 1;
}

static unsigned long unwatch_heap(void)
{
    heap_watching = 0;
    return heap_calls;
}

/* ---- process-wide fixtures ------------------------------------------------------------------ */

#define ARENA_SIZE (256u * 1024u)
/* Regression budget for one session's arena peak (payload + block headers). Measured on
 * x86-64 with the host config: see the "# arena" lines this test prints. */
#define ARENA_SESSION_BUDGET (96u * 1024u)

static uint8_t arena[ARENA_SIZE];
static tls_testpki_t pki;
static dpm_posix_rng_t drbg;
static uint8_t ca_pem[8192], ca_der[4096], rsa_ca_pem[8192];
static size_t ca_pem_len, ca_der_len, rsa_ca_pem_len;

static int group_setup(void **state)
{
    (void)state;
    /* The arena comes first: nothing may have allocated from Mbed TLS before. */
    if (dpm_tls_use_arena(arena, sizeof(arena)) != DPM_OK) {
        return -1;
    }
    /* An app may initialise PSA early (dpm_tls_connect() would otherwise do it): doing it here
     * keeps PSA's long-lived state out of the per-session arena accounting. */
    if (psa_crypto_init() != PSA_SUCCESS) {
        return -1;
    }
    /* glibc's gmtime_r() loads the time-zone data on its first call in a process (strdup,
     * fopen: 7 heap calls), and Mbed TLS calls it to check certificate validity. That is libc's
     * one-time lazy init, not a per-session allocation: do it here so the watch sees TLS only. */
    time_t now = time(NULL);
    struct tm tm;
    (void)gmtime_r(&now, &tm);
    static const char pers[] = "dpm tls test";
    if (dpm_posix_rng_init(&drbg, (const uint8_t *)pers, sizeof(pers) - 1) != DPM_OK) {
        return -1;
    }
    if (tls_testpki_create(&pki) != 0 ||
        tls_testpki_load(&pki, "ca.crt", ca_pem, sizeof(ca_pem), &ca_pem_len) != 0 ||
        tls_testpki_load(&pki, "ca.der", ca_der, sizeof(ca_der), &ca_der_len) != 0 ||
        tls_testpki_load(&pki, "rsa_ca.crt", rsa_ca_pem, sizeof(rsa_ca_pem), &rsa_ca_pem_len) !=
            0) {
        fprintf(stderr, "# could not make the test PKI (is openssl installed?)\n");
        tls_testpki_destroy(&pki);
        return -1;
    }
    ca_der_len -= 1; /* the loader's NUL is not part of the DER */
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    dpm_posix_rng_free(&drbg);
    tls_testpki_destroy(&pki);
    return 0;
}

/* ---- per-test fixture: a server, a TCP connection, a TLS session ------------------------- */

typedef struct {
    tls_testserver_t srv;
    dpm_posix_tcp_t tcp;
    dpm_tls_t tls;
    size_t arena_before; /* arena bytes in use before the session */
} fixture_t;

static fixture_t fx;

static int setup(void **state)
{
    memset(&fx, 0, sizeof(fx));
    fx.tcp.fd = -1;
    *state = &fx;
    return 0;
}

/* Runs even when an assertion failed: no server, socket or session outlives a test. */
static int teardown(void **state)
{
    fixture_t *f = *state;
    heap_watching = 0;
    (void)dpm_tls_close(&f->tls);
    dpm_posix_tcp_close(&f->tcp);
    tls_testserver_stop(&f->srv);
    return 0;
}

static void close_tcp(void *ctx)
{
    dpm_posix_tcp_close(ctx);
}

static uint64_t now_ms(void)
{
    dpm_clock_t c = dpm_posix_clock();
    return c.monotonic_ms(c.ctx);
}

static size_t arena_used(void)
{
    dpm_tls_arena_stats_t st;
    assert_int_equal(dpm_tls_arena_stats(&st), DPM_OK);
    return st.used;
}

static void start_openssl(fixture_t *f, const char *cert, const char *key, const char *opt1,
                          const char *opt2)
{
    const char *extra[] = {opt1, opt2, NULL};
    assert_int_equal(tls_testserver_start_openssl(&f->srv, &pki, cert, key, extra, 5000), 0);
}

static dpm_tls_config_t make_config(fixture_t *f, const uint8_t *ca, size_t ca_len,
                                    const char *host, uint32_t timeout_ms)
{
    dpm_tls_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.ca = ca;
    cfg.ca_len = ca_len;
    cfg.hostname = host;
    cfg.raw = dpm_posix_tcp(&f->tcp);
    cfg.raw_close = close_tcp;
    cfg.rng = dpm_posix_rng(&drbg);
    cfg.clock = dpm_posix_clock();
    cfg.handshake_timeout_ms = timeout_ms;
    return cfg;
}

/* TCP to the fixture's server, then TLS; the system heap is watched during the TLS part. */
static dpm_status_t connect_tls(fixture_t *f, const uint8_t *ca, size_t ca_len, const char *host,
                                uint32_t timeout_ms)
{
    assert_int_equal(dpm_posix_tcp_connect(&f->tcp, "127.0.0.1", f->srv.port, 2000), DPM_OK);
    f->tcp.timeout_ms = 50; /* per-call wait; the handshake deadline bounds the whole */
    dpm_tls_config_t cfg = make_config(f, ca, ca_len, host, timeout_ms);
    f->arena_before = arena_used();
    assert_int_equal(dpm_tls_arena_reset_peak(), DPM_OK);
    watch_heap();
    dpm_status_t st = dpm_tls_connect(&f->tls, &cfg);
    unsigned long calls = unwatch_heap();
    assert_int_equal(calls, 0);
    return st;
}

/* The documented state after any failed connect: closed everywhere, nothing left allocated. */
static void assert_closed_after_failure(fixture_t *f)
{
    assert_int_equal(f->tls.state, DPM_TLS_STATE_IDLE);
    assert_int_equal(f->tcp.fd, -1); /* raw_close ran */
    dpm_transport_t tr = dpm_tls_transport(&f->tls);
    uint8_t b[4] = {0};
    assert_true(tr.send(tr.ctx, b, sizeof(b)) < 0);
    assert_true(tr.recv(tr.ctx, b, sizeof(b)) < 0);
    assert_int_equal(arena_used(), f->arena_before);
    assert_string_equal(dpm_tls_version(&f->tls), "none");
}

static void send_all(dpm_transport_t tr, const char *msg)
{
    size_t len = strlen(msg), off = 0;
    uint64_t end = now_ms() + 3000;
    while (off < len && now_ms() < end) {
        int32_t n = tr.send(tr.ctx, (const uint8_t *)msg + off, len - off);
        assert_true(n >= 0);
        off += (size_t)n;
    }
    assert_int_equal(off, len);
}

/* Read until `until` appears, the peer closes (returns -1 then) or 3 s pass. */
static int recv_until(dpm_transport_t tr, char *buf, size_t cap, const char *until)
{
    size_t len = 0;
    uint64_t end = now_ms() + 3000;
    buf[0] = '\0';
    while (now_ms() < end && len + 1 < cap) {
        int32_t n = tr.recv(tr.ctx, (uint8_t *)buf + len, cap - 1 - len);
        if (n < 0) {
            return -1;
        }
        len += (size_t)n;
        buf[len] = '\0';
        if (until != NULL && strstr(buf, until) != NULL) {
            return 0;
        }
    }
    return 1;
}

static void report_arena(const char *what)
{
    dpm_tls_arena_stats_t st;
    assert_int_equal(dpm_tls_arena_stats(&st), DPM_OK);
    printf("# arena %s: peak %zu bytes in %zu blocks; <= %zu bytes with allocator headers\n", what,
           st.peak_used, st.peak_blocks, st.peak_bytes);
    assert_true(st.peak_bytes <= ARENA_SESSION_BUDGET);
}

/* One session with `openssl s_server -rev`: handshake, an echo exchange and a clean
 * close_notify. Returns how much the arena grew over the session (0 = it gave all back). */
static size_t echo_session(fixture_t *f, const char *want_version)
{
    assert_int_equal(connect_tls(f, ca_pem, ca_pem_len, "localhost", 5000), DPM_OK);
    assert_string_equal(dpm_tls_reason(&f->tls), "ok");
    assert_int_equal(dpm_tls_verify_flags(&f->tls), 0);
    assert_string_equal(dpm_tls_version(&f->tls), want_version);
    dpm_transport_t tr = dpm_tls_transport(&f->tls);
    char buf[256];
    watch_heap();
    send_all(tr, "hello dpmetrics\n");
    int rc = recv_until(tr, buf, sizeof(buf), "\n");
    assert_int_equal(dpm_tls_close(&f->tls), DPM_OK);
    assert_int_equal(unwatch_heap(), 0);
    assert_int_equal(rc, 0);
    assert_string_equal(buf, "scirtempd olleh\n");
    assert_int_equal(f->tcp.fd, -1);
    /* The server saw a clean close_notify: OpenSSL 3 logs an error for a bare end of stream. */
    assert_true(tls_testserver_wait_log(&f->srv, "CONNECTION CLOSED", 2000));
    assert_false(tls_testserver_wait_log(&f->srv, "ERROR", 0));
    return arena_used() - f->arena_before;
}

/* ---- successful sessions ----------------------------------------------------------------- */

/* Mutual TLS: `s_server -Verify 1 -CAfile ca.crt` wants a client certificate from the test CA
 * (a collector started with --device-ca). Without one nothing gets through; with the device's
 * certificate the session works inside the arena budget; a key of another certificate is
 * refused before anything is sent. */
static void test_client_certificate(void **state)
{
    fixture_t *f = *state;
    static uint8_t cert[8192], key[8192], wrong_key[8192];
    size_t cert_len = 0, key_len = 0, wrong_len = 0;
    char ca_path[512];
    assert_int_equal(tls_testpki_load(&pki, "client.crt", cert, sizeof(cert), &cert_len), 0);
    assert_int_equal(tls_testpki_load(&pki, "client.key", key, sizeof(key), &key_len), 0);
    assert_int_equal(tls_testpki_load(&pki, "server.key", wrong_key, sizeof(wrong_key), &wrong_len),
                     0);
    const char *extra[] = {"-rev",
                           "-Verify",
                           "1",
                           "-CAfile",
                           tls_testpki_path(&pki, "ca.crt", ca_path, sizeof(ca_path)),
                           NULL};
    for (int round = 0; round < 2; round++) {
        int with_cert = round == 1;
        assert_int_equal(
            tls_testserver_start_openssl(&f->srv, &pki, "server.crt", "server.key", extra, 5000),
            0);
        assert_int_equal(dpm_posix_tcp_connect(&f->tcp, "127.0.0.1", f->srv.port, 2000), DPM_OK);
        f->tcp.timeout_ms = 50;
        dpm_tls_config_t cfg = make_config(f, ca_pem, ca_pem_len, "localhost", 5000);
        if (with_cert) {
            cfg.client_cert = cert;
            cfg.client_cert_len = cert_len;
            cfg.client_key = key;
            cfg.client_key_len = key_len;
        }
        f->arena_before = arena_used();
        assert_int_equal(dpm_tls_arena_reset_peak(), DPM_OK);
        dpm_status_t st = dpm_tls_connect(&f->tls, &cfg);
        int echoed = 0;
        if (st == DPM_OK) { /* TLS 1.3: the server's verdict may come after our Finished */
            dpm_transport_t tr = dpm_tls_transport(&f->tls);
            char buf[256];
            send_all(tr, "hello dpmetrics\n");
            echoed = recv_until(tr, buf, sizeof(buf), "\n") == 0 &&
                     strcmp(buf, "scirtempd olleh\n") == 0;
            if (with_cert) {
                report_arena("TLS 1.3 session with a client certificate");
            }
            (void)dpm_tls_close(&f->tls);
        }
        assert_int_equal(echoed, with_cert);
        assert_int_equal(arena_used(), f->arena_before);
        dpm_posix_tcp_close(&f->tcp);
        tls_testserver_stop(&f->srv);
    }
    /* a key that is not the certificate's, or a certificate without a key */
    start_openssl(f, "server.crt", "server.key", "-rev", NULL);
    assert_int_equal(dpm_posix_tcp_connect(&f->tcp, "127.0.0.1", f->srv.port, 2000), DPM_OK);
    dpm_tls_config_t cfg = make_config(f, ca_pem, ca_pem_len, "localhost", 5000);
    cfg.client_cert = cert;
    cfg.client_cert_len = cert_len;
    cfg.client_key = wrong_key;
    cfg.client_key_len = wrong_len;
    size_t before = arena_used();
    assert_int_equal(dpm_tls_connect(&f->tls, &cfg), DPM_ERR_PARAM);
    assert_int_equal(arena_used(), before);
    cfg.client_key = NULL;
    cfg.client_key_len = 0;
    assert_int_equal(dpm_tls_connect(&f->tls, &cfg), DPM_ERR_PARAM);
    assert_int_equal(arena_used(), before);
}

static void test_tls13_echo_in_arena(void **state)
{
    fixture_t *f = *state;
    start_openssl(f, "server.crt", "server.key", "-rev", NULL);
    /* The first TLS 1.3 session makes PSA allocate its first slice of volatile key slots,
     * which PSA keeps for the life of the process (until mbedtls_psa_crypto_free()). */
    size_t psa_kept = echo_session(f, "TLSv1.3");
    assert_true(tls_testserver_wait_log(&f->srv, "Protocol version: TLSv1.3", 0));
    report_arena("TLS 1.3 session (handshake + echo + close)");
    assert_true(psa_kept <= 2048);
    tls_testserver_stop(&f->srv);
    /* Every later session gives back exactly what it took. */
    start_openssl(f, "server.crt", "server.key", "-rev", NULL);
    assert_int_equal(echo_session(f, "TLSv1.3"), 0);
    printf("# arena kept by PSA after the first TLS 1.3 session: %zu bytes (key slot slice)\n",
           psa_kept);
    printf("# heap watch: %s\n", HEAP_WATCH ? "malloc/calloc/realloc/free interposed, 0 calls"
                                            : "unavailable (not glibc)");
}

static void test_tls12_when_server_forces_it(void **state)
{
    fixture_t *f = *state;
    start_openssl(f, "server.crt", "server.key", "-rev", "-tls1_2");
    assert_int_equal(echo_session(f, "TLSv1.2"), 0);
    assert_true(tls_testserver_wait_log(&f->srv, "Protocol version: TLSv1.2", 0));
    report_arena("TLS 1.2 session (handshake + echo + close)");
}

/* `s_server -www`: an HTTP request, a response, then the server ends with close_notify. */
static void test_http_request_then_peer_closes(void **state)
{
    fixture_t *f = *state;
    start_openssl(f, "server.crt", "server.key", "-www", NULL);
    assert_int_equal(connect_tls(f, ca_pem, ca_pem_len, "localhost", 5000), DPM_OK);
    dpm_transport_t tr = dpm_tls_transport(&f->tls);
    static char resp[16384];
    watch_heap();
    send_all(tr, "GET / HTTP/1.0\r\n\r\n");
    int rc = recv_until(tr, resp, sizeof(resp), NULL);
    assert_int_equal(unwatch_heap(), 0);
    assert_int_equal(rc, -1); /* read to the end: the peer closed */
    assert_int_equal(f->tls.state, DPM_TLS_STATE_BROKEN);
    assert_int_equal(f->tls.peer_closed, 1); /* with close_notify, not a bare end of stream */
    assert_true(strncmp(resp, "HTTP/1.0 200 ok", 15) == 0);
    assert_non_null(strstr(resp, "Protocol  : TLSv1.3"));
    assert_true(tr.recv(tr.ctx, (uint8_t *)resp, 1) < 0); /* stays closed */
    assert_int_equal(dpm_tls_close(&f->tls), DPM_OK);
    assert_int_equal(f->tcp.fd, -1);
    assert_int_equal(arena_used(), f->arena_before);
}

static void test_der_pin_and_rsa_ca(void **state)
{
    fixture_t *f = *state;
    start_openssl(f, "server.crt", "server.key", "-rev", NULL);
    assert_int_equal(connect_tls(f, ca_der, ca_der_len, "localhost", 5000), DPM_OK);
    assert_int_equal(dpm_tls_close(&f->tls), DPM_OK);
    tls_testserver_stop(&f->srv);

    /* An ECDSA server certificate issued by an RSA-2048 CA (sha256WithRSAEncryption). */
    start_openssl(f, "rsa_server.crt", "rsa_server.key", "-rev", NULL);
    assert_int_equal(connect_tls(f, rsa_ca_pem, rsa_ca_pem_len, "localhost", 5000), DPM_OK);
    assert_string_equal(dpm_tls_version(&f->tls), "TLSv1.3");
    assert_int_equal(dpm_tls_close(&f->tls), DPM_OK);
    assert_int_equal(arena_used(), f->arena_before);
}

/* ---- refusals ---------------------------------------------------------------------------- */

static void test_server_from_another_ca_is_refused(void **state)
{
    fixture_t *f = *state;
    start_openssl(f, "other_server.crt", "other_server.key", "-rev", NULL);
    assert_int_equal(connect_tls(f, ca_pem, ca_pem_len, "localhost", 5000), DPM_ERR_TLS);
    assert_true(dpm_tls_verify_flags(&f->tls) & MBEDTLS_X509_BADCERT_NOT_TRUSTED);
    assert_string_equal(dpm_tls_reason(&f->tls), "server certificate not signed by the pinned CA");
    assert_int_equal(dpm_tls_mbedtls_error(&f->tls), MBEDTLS_ERR_X509_CERT_VERIFY_FAILED);
    assert_closed_after_failure(f);
    /* Mbed TLS told the server why (a fatal alert), the server logged it. */
    assert_true(tls_testserver_wait_log(&f->srv, "alert", 2000));
    printf("# untrusted CA: %s (flags 0x%x)\n", dpm_tls_reason(&f->tls),
           (unsigned)dpm_tls_verify_flags(&f->tls));
}

static void test_certificate_for_another_name_is_refused(void **state)
{
    fixture_t *f = *state;
    start_openssl(f, "wrong_name.crt", "wrong_name.key", "-rev", NULL);
    assert_int_equal(connect_tls(f, ca_pem, ca_pem_len, "localhost", 5000), DPM_ERR_TLS);
    uint32_t flags = dpm_tls_verify_flags(&f->tls);
    assert_true(flags & MBEDTLS_X509_BADCERT_CN_MISMATCH);
    assert_false(flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED); /* the CA is right, the name not */
    assert_string_equal(dpm_tls_reason(&f->tls),
                        "server certificate is not for the expected host name");
    assert_closed_after_failure(f);
    tls_testserver_stop(&f->srv);

    /* The right certificate, but the client expects another host. */
    start_openssl(f, "server.crt", "server.key", "-rev", NULL);
    assert_int_equal(connect_tls(f, ca_pem, ca_pem_len, "collector.example", 5000), DPM_ERR_TLS);
    assert_true(dpm_tls_verify_flags(&f->tls) & MBEDTLS_X509_BADCERT_CN_MISMATCH);
    assert_closed_after_failure(f);
}

static void test_plain_tcp_garbage_is_refused(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(tls_testserver_start_garbage(&f->srv), 0);
    uint64_t t0 = now_ms();
    assert_int_equal(connect_tls(f, ca_pem, ca_pem_len, "localhost", 5000), DPM_ERR_TLS);
    uint64_t took = now_ms() - t0;
    assert_true(took < 2000); /* refused on the first bytes, not by the deadline */
    assert_int_equal(dpm_tls_verify_flags(&f->tls), 0);
    assert_string_equal(dpm_tls_reason(&f->tls), "peer did not answer with valid TLS");
    assert_closed_after_failure(f);
    printf("# garbage server: %s (Mbed TLS -0x%04x) after %llu ms\n", dpm_tls_reason(&f->tls),
           (unsigned)-dpm_tls_mbedtls_error(&f->tls), (unsigned long long)took);
}

static void test_silent_server_hits_the_deadline(void **state)
{
    fixture_t *f = *state;
    assert_int_equal(tls_testserver_start_silent(&f->srv), 0);
    uint64_t t0 = now_ms();
    assert_int_equal(connect_tls(f, ca_pem, ca_pem_len, "localhost", 300), DPM_ERR_TIMEOUT);
    uint64_t took = now_ms() - t0;
    assert_true(took >= 300);
    assert_true(took < 300 + 50 + 500); /* deadline + one transport wait + slack */
    assert_string_equal(dpm_tls_reason(&f->tls),
                        "TLS handshake or close did not finish before the deadline");
    assert_closed_after_failure(f);
    printf("# silent server: DPM_ERR_TIMEOUT after %llu ms (deadline 300 ms)\n",
           (unsigned long long)took);
}

/* ---- contract checks without a network ------------------------------------------------ */

typedef struct {
    int closes;
    int32_t send_ret; /* what send returns (bytes taken if > 0 means "all") */
    int32_t recv_ret;
} fake_raw_t;

static int32_t fake_send(void *ctx, const uint8_t *buf, size_t len)
{
    fake_raw_t *r = ctx;
    (void)buf;
    return r->send_ret > 0 ? (int32_t)len : r->send_ret;
}

static int32_t fake_recv(void *ctx, uint8_t *buf, size_t len)
{
    fake_raw_t *r = ctx;
    (void)buf;
    (void)len;
    return r->recv_ret;
}

static void fake_close(void *ctx)
{
    ((fake_raw_t *)ctx)->closes++;
}

static int failing_rng(void *ctx, uint8_t *out, size_t len)
{
    (void)ctx;
    (void)out;
    (void)len;
    return -1;
}

static dpm_tls_config_t fake_config(fake_raw_t *raw)
{
    dpm_tls_config_t cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.ca = ca_pem;
    cfg.ca_len = ca_pem_len;
    cfg.hostname = "localhost";
    cfg.raw.send = fake_send;
    cfg.raw.recv = fake_recv;
    cfg.raw.ctx = raw;
    cfg.raw_close = fake_close;
    cfg.rng = dpm_posix_rng(&drbg);
    cfg.clock = dpm_posix_clock();
    cfg.handshake_timeout_ms = 200;
    return cfg;
}

static void test_bad_parameters(void **state)
{
    (void)state;
    static dpm_tls_t t;
    fake_raw_t raw = {0, 1, 0};
    size_t before = arena_used();
    dpm_tls_config_t cfg = fake_config(&raw);
    assert_int_equal(dpm_tls_connect(NULL, &cfg), DPM_ERR_PARAM);
    assert_int_equal(dpm_tls_connect(&t, NULL), DPM_ERR_PARAM);

    cfg.hostname = NULL;
    assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_PARAM);
    assert_int_equal(raw.closes, 1); /* the connection was handed over: it is closed */
    cfg = fake_config(&raw);
    cfg.raw.recv = NULL;
    assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_PARAM);

    cfg = fake_config(&raw);
    cfg.ca_len = ca_pem_len - 1; /* PEM without its NUL */
    assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_PARAM);
    static const uint8_t junk[] = {0x30, 0x03, 0x02, 0x01, 0x00};
    cfg.ca = junk;
    cfg.ca_len = sizeof(junk);
    assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_PARAM);
    assert_true(dpm_tls_mbedtls_error(&t) < 0);

    cfg = fake_config(&raw);
    char longname[300];
    memset(longname, 'a', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    cfg.hostname = longname;
    assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_PARAM);
    assert_int_equal(raw.closes, 5);
    assert_string_equal(dpm_tls_reason(&t),
                        "bad TLS configuration (missing field, unparsable CA, or host name too "
                        "long)");
    assert_int_equal(arena_used(), before);

    assert_int_equal(dpm_tls_use_arena(NULL, 1u << 16), DPM_ERR_PARAM);
    assert_int_equal(dpm_tls_use_arena(arena, DPM_TLS_ARENA_MIN - 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_tls_arena_stats(NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_tls_close(NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_tls_close(&t), DPM_OK); /* idle: nothing to do */
    assert_string_equal(dpm_tls_reason(NULL), "no TLS context");
}

static void test_transport_and_rng_failures(void **state)
{
    (void)state;
    static dpm_tls_t t;
    size_t before = arena_used();

    fake_raw_t raw = {0, -1, 0}; /* the ClientHello cannot be sent */
    dpm_tls_config_t cfg = fake_config(&raw);
    assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_TRANSPORT);
    assert_string_equal(dpm_tls_reason(&t), "the connection failed or the peer closed it");
    assert_int_equal(raw.closes, 1);

    fake_raw_t raw2 = {0, 1, -1}; /* sent, then the peer closes */
    cfg = fake_config(&raw2);
    assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_TRANSPORT);
    assert_int_equal(raw2.closes, 1);

    fake_raw_t raw3 = {0, 0, 0}; /* never moves a byte: "try later" until the deadline */
    cfg = fake_config(&raw3);
    cfg.handshake_timeout_ms = 50;
    assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_TIMEOUT);
    assert_int_equal(raw3.closes, 1);

    fake_raw_t raw4 = {0, 1, 0};
    cfg = fake_config(&raw4);
    cfg.rng.fill = failing_rng;
    assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_RNG);
    assert_string_equal(dpm_tls_reason(&t), "the random generator failed");
    assert_int_equal(raw4.closes, 1);
    assert_int_equal(arena_used(), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tls13_echo_in_arena, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tls12_when_server_forces_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_client_certificate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_request_then_peer_closes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_der_pin_and_rsa_ca, setup, teardown),
        cmocka_unit_test_setup_teardown(test_server_from_another_ca_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_certificate_for_another_name_is_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_plain_tcp_garbage_is_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_silent_server_hits_the_deadline, setup, teardown),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_transport_and_rng_failures),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
