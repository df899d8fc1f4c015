/* SPDX-License-Identifier: Apache-2.0 */
/* The error paths of the posix and TLS ports that test_port_posix.c and test_tls_client.c
 * leave out (found by `make coverage`): storage whose file vanished, shrank or cannot be
 * replaced, relative paths, regions larger than one copy chunk; a DRBG whose entropy runs out
 * at a reseed, on both fill paths; TCP after the peer reset; the TLS transport used when not
 * open, and every text dpm_tls_reason gives. Each case checks the documented result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "dpm/port_posix.h"
#include "dpm/port_tls.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509.h"

static void make_tmpdir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/dpm-port-errors.XXXXXX");
    assert_non_null(mkdtemp(dir));
}

/* ---- storage ------------------------------------------------------------------------------ */

static void test_storage_when_the_file_goes_wrong(void **state)
{
    (void)state;
    char dir[64], path[128], tmp[160];
    make_tmpdir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/region", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    dpm_posix_storage_t s;
    assert_int_equal(dpm_posix_storage_open(&s, path, 5000), DPM_OK); /* two copy chunks */
    dpm_storage_t st = dpm_posix_storage(&s);
    uint8_t buf[16];
    memset(buf, 0x11, sizeof(buf));
    /* a write inside the second chunk leaves the first one as it was */
    assert_int_equal(st.write(st.ctx, 4500, buf, sizeof(buf)), 0);
    uint8_t back[16];
    assert_int_equal(st.read(st.ctx, 0, back, sizeof(back)), 0);
    assert_int_equal(back[0], 0xFF);
    assert_int_equal(st.read(st.ctx, 4500, back, sizeof(back)), 0);
    assert_memory_equal(back, buf, sizeof(buf));
    assert_int_equal(st.erase(st.ctx, 4990, 20), -1); /* past the end */

    /* the temporary name is taken by a directory: the write cannot be prepared */
    assert_int_equal(mkdir(tmp, 0700), 0);
    assert_int_equal(st.write(st.ctx, 0, buf, 4), -1);
    assert_int_equal(st.read(st.ctx, 0, back, 4), 0);
    assert_int_equal(back[0], 0xFF); /* unchanged */
    assert_int_equal(rmdir(tmp), 0);

    /* the file shrank behind our back: reads past its end and writes fail */
    assert_int_equal(truncate(path, 100), 0);
    assert_int_equal(st.read(st.ctx, 200, back, 4), -1);
    assert_int_equal(st.write(st.ctx, 0, buf, 4), -1);
    struct stat sb;
    assert_int_not_equal(stat(tmp, &sb), 0); /* the half-made copy was removed */

    /* the file is gone: every operation fails */
    assert_int_equal(unlink(path), 0);
    assert_int_equal(st.read(st.ctx, 0, back, 4), -1);
    assert_int_equal(st.write(st.ctx, 0, buf, 4), -1);
    assert_int_equal(st.erase(st.ctx, 0, 4), -1);
    assert_int_equal(rmdir(dir), 0);

    /* a region in a directory that does not exist cannot be created */
    assert_int_equal(dpm_posix_storage_open(&s, "/tmp/dpm-no-such-dir/x/region", 64),
                     DPM_ERR_STORAGE);
    /* a path too long for the temporary name */
    char longpath[DPM_POSIX_PATH_MAX];
    memset(longpath, 'a', sizeof(longpath) - 1);
    longpath[sizeof(longpath) - 1] = '\0';
    assert_int_equal(dpm_posix_storage_open(&s, longpath, 64), DPM_ERR_PARAM);
    assert_int_equal(dpm_posix_storage_open(NULL, path, 64), DPM_ERR_PARAM);
}

/* A relative path without a directory part lives in the working directory. */
static void test_storage_relative_path(void **state)
{
    (void)state;
    char dir[64], cwd[512];
    make_tmpdir(dir, sizeof(dir));
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(dir), 0);
    dpm_posix_storage_t s;
    dpm_status_t rc = dpm_posix_storage_open(&s, "region", 32);
    dpm_storage_t st = dpm_posix_storage(&s);
    uint8_t v = 0x42, back = 0;
    int wrc = rc == DPM_OK ? st.write(st.ctx, 3, &v, 1) : -1;
    int rrc = rc == DPM_OK ? st.read(st.ctx, 3, &back, 1) : -1;
    unlink("region");
    assert_int_equal(chdir(cwd), 0);
    rmdir(dir);
    assert_int_equal(rc, DPM_OK);
    assert_int_equal(wrc, 0);
    assert_int_equal(rrc, 0);
    assert_int_equal(back, 0x42);
}

/* ---- DRBG ------------------------------------------------------------------------------- */

typedef struct {
    size_t left; /* entropy bytes still available */
} budget_t;

static int budget_entropy(void *ctx, unsigned char *out, size_t len)
{
    budget_t *b = ctx;
    if (len > b->left) {
        return -1;
    }
    memset(out, 0x3C, len);
    b->left -= len;
    return 0;
}

/* Entropy for the seed only: an explicit reseed fails, and so does the first request after the
 * reseed interval, whether it refills the pool (short fill) or goes to the DRBG (long fill). */
static void test_drbg_reseed_without_entropy(void **state)
{
    (void)state;
    for (int long_fill = 0; long_fill <= 1; long_fill++) {
        budget_t b = {48}; /* entropy (32) + nonce (16) of the instantiation */
        dpm_posix_rng_t r;
        assert_int_equal(dpm_posix_rng_init_with_entropy(&r, budget_entropy, &b, NULL, 0), DPM_OK);
        assert_int_equal(b.left, 0);
        assert_int_equal(dpm_posix_rng_reseed(&r), DPM_ERR_RNG);
        /* the DRBG lives in the struct's opaque bytes (port/posix/rng.c) */
        mbedtls_ctr_drbg_set_reseed_interval((mbedtls_ctr_drbg_context *)(void *)r.drbg_opaque.bytes,
                                             1);
        dpm_rng_t rng = dpm_posix_rng(&r);
        static uint8_t out[3 * DPM_POSIX_RNG_POOL_BYTES];
        size_t n = long_fill ? sizeof(out) : 8;
        int rc = 0;
        for (int i = 0; i < 1000 && rc == 0; i++) { /* short fills: until the pool runs out */
            rc = rng.fill(rng.ctx, out, n);
        }
        assert_int_equal(rc, -1);
        dpm_posix_rng_free(&r);
    }
}

/* ---- TCP --------------------------------------------------------------------------------- */

static void test_tcp_after_a_reset(void **state)
{
    (void)state;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(lfd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(lfd, 1), 0);
    socklen_t alen = sizeof(a);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &alen), 0);
    dpm_posix_tcp_t t = {-1, 0};
    assert_int_equal(dpm_posix_tcp_connect(&t, "127.0.0.1", ntohs(a.sin_port), 1000), DPM_OK);
    int sfd = accept(lfd, NULL, NULL);
    assert_true(sfd >= 0);
    struct linger lg = {1, 0}; /* close with RST */
    assert_int_equal(setsockopt(sfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)), 0);
    close(sfd);
    t.timeout_ms = 200;
    dpm_transport_t tr = dpm_posix_tcp(&t);
    uint8_t in[4];
    assert_int_equal(tr.recv(tr.ctx, in, sizeof(in)), -1); /* reset: an error, not "later" */
    assert_int_equal(tr.send(tr.ctx, (const uint8_t *)"x", 1), -1);
    dpm_posix_tcp_close(&t);
    dpm_posix_tcp_close(&t); /* twice: harmless */
    dpm_posix_tcp_close(NULL);
    assert_int_equal(tr.recv(tr.ctx, in, sizeof(in)), -1);
    assert_int_equal(dpm_posix_tcp_connect(NULL, "127.0.0.1", 80, 100), DPM_ERR_PARAM);
    close(lfd);
}

/* ---- TLS ---------------------------------------------------------------------------------- */

static void test_tls_transport_when_not_open(void **state)
{
    (void)state;
    static dpm_tls_t t; /* zero: idle */
    dpm_transport_t tr = dpm_tls_transport(&t);
    uint8_t buf[4] = {0};
    assert_int_equal(tr.send(tr.ctx, buf, sizeof(buf)), -1);
    assert_int_equal(tr.recv(tr.ctx, buf, sizeof(buf)), -1);
    t.state = DPM_TLS_STATE_BROKEN;
    assert_int_equal(tr.send(tr.ctx, buf, sizeof(buf)), -1);
    assert_string_equal(dpm_tls_version(&t), "none");
    assert_string_equal(dpm_tls_ciphersuite(NULL), "none");
    assert_string_equal(dpm_tls_ciphersuite(&t), "none");
    assert_int_equal(dpm_tls_verify_flags(NULL), 0);
    assert_int_equal(dpm_tls_mbedtls_error(NULL), 0);
}

static int32_t dummy_io(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    (void)len;
    return -1;
}

static int32_t dummy_recv(void *ctx, uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    (void)len;
    return -1;
}

static int dummy_fill(void *ctx, uint8_t *out, size_t len)
{
    (void)ctx;
    memset(out, 7, len);
    return 0;
}

static uint64_t dummy_ms(void *ctx)
{
    (void)ctx;
    return 0;
}

static int closes;
static void count_close(void *ctx)
{
    (void)ctx;
    closes++;
}

/* A configuration missing any required field is refused before anything else, and the raw
 * connection handed over is closed. */
static void test_tls_config_missing_fields(void **state)
{
    (void)state;
    static dpm_tls_t t;
    static const uint8_t ca[] = "not even parsed";
    for (int missing = 0; missing < 7; missing++) {
        dpm_tls_config_t cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.ca = ca;
        cfg.ca_len = sizeof(ca);
        cfg.hostname = "collector.example";
        cfg.raw.send = dummy_io;
        cfg.raw.recv = dummy_recv;
        cfg.raw_close = count_close;
        cfg.rng.fill = dummy_fill;
        cfg.clock.monotonic_ms = dummy_ms;
        switch (missing) {
        case 0: cfg.ca = NULL; break;
        case 1: cfg.ca_len = 0; break;
        case 2: cfg.hostname = ""; break;
        case 3: cfg.raw.send = NULL; break;
        case 4: cfg.rng.fill = NULL; break;
        case 5: cfg.clock.monotonic_ms = NULL; break;
        default: cfg.raw.recv = NULL; break;
        }
        closes = 0;
        assert_int_equal(dpm_tls_connect(&t, &cfg), DPM_ERR_PARAM);
        assert_int_equal(closes, 1);
        assert_string_equal(dpm_tls_version(NULL), "none");
    }
}

/* Every status and handshake error has its own text. */
static void test_tls_reason_texts(void **state)
{
    (void)state;
    static dpm_tls_t t;
    static const struct {
        dpm_status_t status;
        int error;
        const char *text;
    } cases[] = {
        {DPM_OK, 0, "ok"},
        {DPM_ERR_TIMEOUT, 0, "TLS handshake or close did not finish before the deadline"},
        {DPM_ERR_RNG, 0, "the random generator failed"},
        {DPM_ERR_BUFFER, 0, "out of Mbed TLS memory (arena too small)"},
        {DPM_ERR_STORAGE, 0, "TLS failed"},
        {DPM_ERR_TLS, MBEDTLS_ERR_SSL_INVALID_RECORD, "peer did not answer with valid TLS"},
        {DPM_ERR_TLS, MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE, "server sent a fatal TLS alert"},
        {DPM_ERR_TLS, MBEDTLS_ERR_SSL_BAD_PROTOCOL_VERSION, "no common TLS version (1.2 or 1.3)"},
        {DPM_ERR_TLS, MBEDTLS_ERR_SSL_HANDSHAKE_FAILURE,
         "TLS handshake failed (no common cipher suite or group?)"},
        {DPM_ERR_TLS, MBEDTLS_ERR_SSL_INVALID_MAC, "TLS record authentication failed"},
        {DPM_ERR_TLS, MBEDTLS_ERR_SSL_BAD_CERTIFICATE, "server certificate rejected"},
        {DPM_ERR_TLS, MBEDTLS_ERR_X509_CERT_VERIFY_FAILED, "server certificate rejected"},
        {DPM_ERR_TLS, -1, "TLS handshake failed"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(&t, 0, sizeof(t));
        t.status = cases[i].status;
        t.mbedtls_error = cases[i].error;
        assert_string_equal(dpm_tls_reason(&t), cases[i].text);
    }
    memset(&t, 0, sizeof(t));
    t.status = DPM_ERR_TLS;
    t.verify_flags = MBEDTLS_X509_BADCERT_EXPIRED;
    assert_string_not_equal(dpm_tls_reason(&t), "TLS handshake failed");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_storage_when_the_file_goes_wrong),
        cmocka_unit_test(test_storage_relative_path),
        cmocka_unit_test(test_drbg_reseed_without_entropy),
        cmocka_unit_test(test_tcp_after_a_reset),
        cmocka_unit_test(test_tls_transport_when_not_open),
        cmocka_unit_test(test_tls_config_missing_fields),
        cmocka_unit_test(test_tls_reason_texts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
