/* SPDX-License-Identifier: Apache-2.0 */
/* The POSIX port: CTR_DRBG known answers, clock, atomic file storage, TCP transport. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "dpm/port_posix.h"

/* NIST CAVP CTR_DRBG vector, [AES-256 use df] [PredictionResistance = False]
 * [EntropyInputLen = 256] [NonceLen = 128] [PersonalizationStringLen = 256]
 * [AdditionalInputLen = 0] [ReturnedBitsLen = 512] (drbgtestvectors.zip, CTR_DRBG.rsp):
 * instantiate(entropy || nonce, pers), reseed(entropy), generate 512 bits (discarded),
 * generate 512 bits = expected. */
static const uint8_t kat_entropy[] = {
    /* instantiate: entropy (32) + nonce (16) */
    0x4c, 0xfb, 0x21, 0x86, 0x73, 0x34, 0x6d, 0x9d, 0x50, 0xc9, 0x22, 0xe4, 0x9b, 0x0d, 0xfc,
    0xd0, 0x90, 0xad, 0xf0, 0x4f, 0x5c, 0x3b, 0xa4, 0x73, 0x27, 0xdf, 0xcd, 0x6f, 0xa6, 0x3a,
    0x78, 0x5c, 0x01, 0x69, 0x62, 0xa7, 0xfd, 0x27, 0x87, 0xa2, 0x4b, 0xf6, 0xbe, 0x47, 0xef,
    0x37, 0x83, 0xf1,
    /* reseed: entropy (32) */
    0xb7, 0xec, 0x46, 0x07, 0x23, 0x63, 0x83, 0x4a, 0x1b, 0x01, 0x33, 0xf2, 0xc2, 0x38, 0x91,
    0xdb, 0x4f, 0x11, 0xa6, 0x86, 0x51, 0xf2, 0x3e, 0x3a, 0x8b, 0x1f, 0xdc, 0x03, 0xb1, 0x92,
    0xc7, 0xe7};
static const uint8_t kat_pers[] = {0x88, 0xee, 0xb8, 0xe0, 0xe8, 0x3b, 0xf3, 0x29, 0x4b, 0xda, 0xcd,
                                   0x60, 0x99, 0xeb, 0xe4, 0xbf, 0x55, 0xec, 0xd9, 0x11, 0x3f, 0x71,
                                   0xe5, 0xeb, 0xcb, 0x45, 0x75, 0xf3, 0xd6, 0xa6, 0x8a, 0x6b};
static const uint8_t kat_expected[] = {
    0xa5, 0x51, 0x80, 0xa1, 0x90, 0xbe, 0xf3, 0xad, 0xaf, 0x28, 0xf6, 0xb7, 0x95, 0xe9, 0xf1, 0xf3,
    0xd6, 0xdf, 0xa1, 0xb2, 0x7d, 0xd0, 0x46, 0x7b, 0x0c, 0x75, 0xf5, 0xfa, 0x93, 0x1e, 0x97, 0x14,
    0x75, 0xb2, 0x7c, 0xae, 0x03, 0xa2, 0x96, 0x54, 0xe2, 0xf4, 0x09, 0x66, 0xea, 0x33, 0x64, 0x30,
    0x40, 0xd1, 0x40, 0x0f, 0xe6, 0x77, 0x87, 0x3a, 0xf8, 0x09, 0x7c, 0x1f, 0xe9, 0xf0, 0x02, 0x98};

typedef struct {
    const uint8_t *bytes;
    size_t len, pos;
} tape_t;

static int tape_entropy(void *ctx, unsigned char *out, size_t len)
{
    tape_t *t = ctx;
    if (len > t->len - t->pos) {
        return -1;
    }
    memcpy(out, t->bytes + t->pos, len);
    t->pos += len;
    return 0;
}

static void test_drbg_nist_known_answer(void **state)
{
    (void)state;
    tape_t tape = {kat_entropy, sizeof(kat_entropy), 0};
    dpm_posix_rng_t r;
    assert_int_equal(dpm_posix_rng_init_with_entropy(&r, tape_entropy, &tape, kat_pers,
                                                     sizeof(kat_pers)),
                     DPM_OK);
    assert_int_equal(dpm_posix_rng_reseed(&r), DPM_OK);
    assert_int_equal(tape.pos, sizeof(kat_entropy)); /* consumed exactly 48 + 32 bytes */
    uint8_t out[64]; /* two generate requests, as the vector has them (fill() would pool) */
    assert_int_equal(dpm_posix_rng_f_rng(&r, out, sizeof(out)), 0);
    assert_int_equal(dpm_posix_rng_f_rng(&r, out, sizeof(out)), 0);
    assert_memory_equal(out, kat_expected, sizeof(kat_expected));
    dpm_posix_rng_free(&r);
}

/* fill() hands out exactly the DRBG's output, request after request: short fills from a pool
 * that one request fills, long ones (with the pool empty) straight from the DRBG; handed-out
 * pool bytes are zeroised; a reseed discards the pool. Checked against a twin DRBG seeded
 * from the same tape and asked for the requests the pool should make. */
static void test_drbg_pool_hands_out_the_request_stream(void **state)
{
    (void)state;
    enum { POOL = DPM_POSIX_RNG_POOL_BYTES };
    tape_t ta = {kat_entropy, sizeof(kat_entropy), 0}, tb = ta;
    dpm_posix_rng_t a, b;
    assert_int_equal(dpm_posix_rng_init_with_entropy(&a, tape_entropy, &ta, NULL, 0), DPM_OK);
    assert_int_equal(dpm_posix_rng_init_with_entropy(&b, tape_entropy, &tb, NULL, 0), DPM_OK);
    static uint8_t got[6 * POOL], want[6 * POOL];
    /* 64 and 200 from the first pool; 1000 empties it and takes 240 of a second; 3000 takes
     * its 784 and 2216 directly (requests of 1024, 1024, 168); 7 from a third pool */
    const size_t fills[] = {64, 200, 1000, 3000, 7};
    const size_t requests[] = {POOL, POOL, 1024, 1024, 168, POOL};
    dpm_rng_t rng = dpm_posix_rng(&a);
    size_t n = 0;
    for (size_t i = 0; i < sizeof(fills) / sizeof(fills[0]); i++) {
        assert_int_equal(rng.fill(rng.ctx, got + n, fills[i]), 0);
        n += fills[i];
    }
    size_t m = 0;
    for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
        assert_int_equal(dpm_posix_rng_f_rng(&b, want + m, requests[i]), 0);
        m += requests[i];
    }
    assert_int_equal(n, 64 + 200 + 1000 + 3000 + 7);
    assert_memory_equal(got, want, n);
    assert_int_equal(a.pool_pos, 7);
    for (size_t i = 0; i < a.pool_pos; i++) {
        assert_int_equal(a.pool[i], 0); /* handed out: zeroised */
    }
    /* the unread rest of the third pool is dropped by a reseed: the next byte comes from a
     * request made after it */
    assert_int_equal(dpm_posix_rng_reseed(&a), DPM_OK);
    assert_int_equal(dpm_posix_rng_reseed(&b), DPM_OK); /* b's pool is unused: a DRBG reseed */
    assert_int_equal(rng.fill(rng.ctx, got, 16), 0);
    assert_int_equal(dpm_posix_rng_f_rng(&b, want, 16), 0);
    assert_memory_equal(got, want, 16);
    dpm_posix_rng_free(&a);
    dpm_posix_rng_free(&b);
}

static void test_drbg_fails_without_entropy(void **state)
{
    (void)state;
    tape_t tape = {kat_entropy, 10, 0}; /* too short for a seed */
    dpm_posix_rng_t r;
    /* the entropy source fails: the generator's status, not the caller's */
    assert_int_equal(dpm_posix_rng_init_with_entropy(&r, tape_entropy, &tape, NULL, 0),
                     DPM_ERR_RNG);
    assert_int_equal(dpm_posix_rng_init_with_entropy(&r, NULL, NULL, NULL, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_posix_rng_init(NULL, NULL, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_posix_rng_reseed(NULL), DPM_ERR_PARAM);
}

static void test_drbg_kernel_seeded_streams_differ(void **state)
{
    (void)state;
    dpm_posix_rng_t a, b;
    assert_int_equal(dpm_posix_rng_init(&a, NULL, 0), DPM_OK);
    assert_int_equal(dpm_posix_rng_init(&b, (const uint8_t *)"dev", 3), DPM_OK);
    dpm_rng_t ra = dpm_posix_rng(&a), rb = dpm_posix_rng(&b);
    uint8_t x[4096], y[4096]; /* larger than one DRBG request: exercises chunking */
    assert_int_equal(ra.fill(ra.ctx, x, sizeof(x)), 0);
    assert_int_equal(rb.fill(rb.ctx, y, sizeof(y)), 0);
    assert_memory_not_equal(x, y, sizeof(x));
    /* crude sanity: bit balance of 32768 bits within 8 sigma (sigma ~ 90.5) */
    long ones = 0;
    for (size_t i = 0; i < sizeof(x); i++) {
        ones += __builtin_popcount(x[i]);
    }
    assert_true(labs(ones - 16384) < 725);
    assert_int_equal(dpm_posix_rng_reseed(&a), DPM_OK);
    dpm_posix_rng_free(&a);
    dpm_posix_rng_free(&b);
}

static void test_clock_monotonic(void **state)
{
    (void)state;
    dpm_clock_t c = dpm_posix_clock();
    uint64_t t0 = c.monotonic_ms(c.ctx);
    usleep(20000);
    uint64_t t1 = c.monotonic_ms(c.ctx);
    assert_true(t1 >= t0 + 15 && t1 < t0 + 5000);
    int64_t wall = 0;
    assert_int_equal(c.wall_time_s(c.ctx, &wall), 0);
    assert_true(wall > 1700000000); /* after 2023 */
}

static void make_tmpdir(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/dpm-port-XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void test_storage_roundtrip_and_persistence(void **state)
{
    (void)state;
    char dir[64], path[128];
    make_tmpdir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/region", dir);
    dpm_posix_storage_t s;
    assert_int_equal(dpm_posix_storage_open(&s, path, 10000), DPM_OK);
    dpm_storage_t st = dpm_posix_storage(&s);
    assert_int_equal(st.size, 10000);
    uint8_t buf[16];
    assert_int_equal(st.read(st.ctx, 9990, buf, 10), 0);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(buf[i], 0xFF); /* new regions start erased */
    }
    /* a write straddling the 4 KiB copy chunk boundary */
    const uint8_t msg[] = "hello, region";
    assert_int_equal(st.write(st.ctx, 4090, msg, sizeof(msg)), 0);
    struct stat sb;
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    assert_int_not_equal(stat(tmp, &sb), 0); /* no temporary left behind */
    /* reopen: the data survived */
    dpm_posix_storage_t s2;
    assert_int_equal(dpm_posix_storage_open(&s2, path, 10000), DPM_OK);
    dpm_storage_t st2 = dpm_posix_storage(&s2);
    assert_int_equal(st2.read(st2.ctx, 4090, buf, sizeof(msg)), 0);
    assert_memory_equal(buf, msg, sizeof(msg));
    assert_int_equal(st2.erase(st2.ctx, 4092, 3), 0);
    assert_int_equal(st2.read(st2.ctx, 4090, buf, 6), 0);
    assert_memory_equal(buf, "he\xff\xff\xff,", 6);
    unlink(path);
    rmdir(dir);
}

static void test_storage_rejects_bad_input(void **state)
{
    (void)state;
    char dir[64], path[128];
    make_tmpdir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/region", dir);
    dpm_posix_storage_t s;
    assert_int_equal(dpm_posix_storage_open(&s, path, 100), DPM_OK);
    dpm_storage_t st = dpm_posix_storage(&s);
    uint8_t buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_int_equal(st.write(st.ctx, 96, buf, 8), -1);      /* past the end */
    assert_int_equal(st.write(st.ctx, 0xFFFFFFFF, buf, 2), -1); /* offset overflow */
    assert_int_equal(st.read(st.ctx, 100, buf, 1), -1);
    assert_int_equal(st.write(st.ctx, 0, NULL, 1), -1);
    assert_int_equal(st.read(st.ctx, 96, buf, 4), 0);
    assert_int_equal(buf[0], 0xFF); /* the failed write changed nothing */
    /* the same file opened with another size is refused */
    dpm_posix_storage_t s2;
    assert_int_equal(dpm_posix_storage_open(&s2, path, 200), DPM_ERR_STORAGE);
    assert_int_equal(dpm_posix_storage_open(&s2, NULL, 200), DPM_ERR_PARAM);
    assert_int_equal(dpm_posix_storage_open(&s2, path, 0), DPM_ERR_PARAM);
    /* a stale temporary from a crash mid-write is discarded, the old content kept */
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs("half-written", f);
    fclose(f);
    assert_int_equal(dpm_posix_storage_open(&s2, path, 100), DPM_OK);
    struct stat sb;
    assert_int_not_equal(stat(tmp, &sb), 0);
    unlink(path);
    rmdir(dir);
}

static int listen_loopback(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(fd, 4), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

static void test_tcp_roundtrip_timeout_and_close(void **state)
{
    (void)state;
    uint16_t port;
    int lfd = listen_loopback(&port);
    dpm_posix_tcp_t t = {-1, 0};
    assert_int_equal(dpm_posix_tcp_connect(&t, "127.0.0.1", port, 1000), DPM_OK);
    t.timeout_ms = 50;
    int sfd = accept(lfd, NULL, NULL);
    assert_true(sfd >= 0);
    dpm_transport_t tr = dpm_posix_tcp(&t);
    assert_int_equal(tr.send(tr.ctx, (const uint8_t *)"ping", 4), 4);
    char buf[8] = {0};
    assert_int_equal(read(sfd, buf, 4), 4);
    assert_string_equal(buf, "ping");
    uint8_t in[8];
    assert_int_equal(tr.recv(tr.ctx, in, sizeof(in)), 0); /* nothing yet: try later */
    assert_int_equal(write(sfd, "pong", 4), 4);
    assert_int_equal(tr.recv(tr.ctx, in, sizeof(in)), 4);
    assert_memory_equal(in, "pong", 4);
    close(sfd);
    assert_int_equal(tr.recv(tr.ctx, in, sizeof(in)), -1); /* peer closed */
    dpm_posix_tcp_close(&t);
    assert_int_equal(tr.send(tr.ctx, (const uint8_t *)"x", 1), -1);
    close(lfd);
}

static void test_tcp_connect_errors(void **state)
{
    (void)state;
    uint16_t port;
    int lfd = listen_loopback(&port);
    close(lfd); /* nobody listens there now */
    dpm_posix_tcp_t t = {-1, 0};
    /* refused: the transport's status, not a timeout nor the caller's */
    assert_int_equal(dpm_posix_tcp_connect(&t, "127.0.0.1", port, 500), DPM_ERR_TRANSPORT);
    assert_int_equal(t.fd, -1); /* untouched */
    assert_int_equal(dpm_posix_tcp_connect(&t, "no-such-host.invalid", 443, 500),
                     DPM_ERR_TRANSPORT);
    assert_int_equal(dpm_posix_tcp_connect(&t, NULL, 443, 500), DPM_ERR_PARAM);
    assert_int_equal(dpm_posix_tcp_connect(&t, "127.0.0.1", 0, 500), DPM_ERR_PARAM);
}

/* A listener that accepts nothing, its queue full: further SYNs are dropped (Linux), so a
 * connect gets no answer at all and runs out of time: DPM_ERR_TIMEOUT, not DPM_ERR_TRANSPORT. */
static void test_tcp_connect_timeout(void **state)
{
    (void)state;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(lfd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(lfd, 0), 0);
    socklen_t len = sizeof(a);
    assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
    dpm_posix_tcp_t queued[8];
    dpm_status_t st = DPM_OK;
    int n = 0;
    while (n < 8 && st == DPM_OK) { /* fill the accept queue until a connect goes unanswered */
        queued[n] = (dpm_posix_tcp_t){-1, 0};
        st = dpm_posix_tcp_connect(&queued[n], "127.0.0.1", ntohs(a.sin_port), 200);
        n += st == DPM_OK;
    }
    for (int i = 0; i < n; i++) {
        dpm_posix_tcp_close(&queued[i]);
    }
    close(lfd);
    assert_true(n >= 1); /* the listener did answer while it had room */
    assert_int_equal(st, DPM_ERR_TIMEOUT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drbg_nist_known_answer),
        cmocka_unit_test(test_drbg_pool_hands_out_the_request_stream),
        cmocka_unit_test(test_drbg_fails_without_entropy),
        cmocka_unit_test(test_drbg_kernel_seeded_streams_differ),
        cmocka_unit_test(test_clock_monotonic),
        cmocka_unit_test(test_storage_roundtrip_and_persistence),
        cmocka_unit_test(test_storage_rejects_bad_input),
        cmocka_unit_test(test_tcp_roundtrip_timeout_and_close),
        cmocka_unit_test(test_tcp_connect_errors),
        cmocka_unit_test(test_tcp_connect_timeout),
    };
    return cmocka_run_group_tests_name("port_posix", tests, NULL, NULL);
}
