/* SPDX-License-Identifier: Apache-2.0 */
/* port/posix passes the port conformance suite (tests/support/port_conformance.h): its file
 * storage (the power cycle reopens the file; a torn write is a writer process killed with
 * SIGKILL at several points of a write or erase), its CTR_DRBG over getrandom (its failure: the
 * kernel's entropy dies, and the DRBG's next reseed fails), its clocks, and its TCP transport
 * against a listening socket on 127.0.0.1 (a peer that accepts and stays silent, one that
 * closes at once). Negative control of a real misconfiguration: a TCP wait longer than the
 * upload's deadline fails transport.upload_times_out. The suite's own negative controls are
 * test_port_conformance's. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "dpm/port_posix.h"
#include "port_conformance.h"

static dpm_port_log_t logbook;
static dpm_port_suite_t suite;

/* ---- storage: one file ---------------------------------------------------------------------- */

#define REGION 2048u

typedef struct {
    char path[DPM_POSIX_PATH_MAX];
    dpm_posix_storage_t st;
    unsigned tears;
    unsigned mid_write; /* kills that left the write's temporary file behind */
} file_port_t;

static int file_reopen(void *ctx, dpm_storage_t *s)
{
    file_port_t *f = ctx;
    memset(&f->st, 0, sizeof(f->st));
    if (dpm_posix_storage_open(&f->st, f->path, REGION) != DPM_OK) {
        return -1;
    }
    *s = dpm_posix_storage(&f->st);
    return 0;
}

/* The write in a child process killed after a delay that grows with each tear (0 to ~3 ms:
 * before, inside and after the copy, fsync and rename), then the file is reopened. */
static int file_torn(void *ctx, dpm_storage_t *s, uint32_t off, const uint8_t *buf, size_t len)
{
    file_port_t *f = ctx;
    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
        int rc = buf != NULL ? s->write(s->ctx, off, buf, len) : s->erase(s->ctx, off, len);
        _exit(rc == 0 ? 0 : 1);
    }
    struct timespec d = {0, (long)(f->tears++ % 7) * 500000L};
    nanosleep(&d, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    char tmp[DPM_POSIX_PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
    f->mid_write += access(tmp, F_OK) == 0;
    return file_reopen(f, s);
}

static void test_posix_storage_conforms(void **state)
{
    (void)state;
    static file_port_t f;
    memset(&f, 0, sizeof(f));
    char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/dpm-conf-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(f.path, sizeof(f.path), "%s/region", dir);
    assert_int_equal(dpm_posix_storage_open(&f.st, f.path, REGION), DPM_OK);
    dpm_storage_t s = dpm_posix_storage(&f.st);
    dpm_port_storage_hooks_t h = {file_reopen, file_torn, &f, 0};
    dpm_port_log_begin(&logbook, &suite, 1);
    dpm_port_check_storage(&suite, &s, &h);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.not_run, 0);
    assert_int_equal(suite.passed, 8);
    printf("# %u of %u torn writes were killed mid-write (their temporary file left behind)\n",
           f.mid_write, f.tears);
    unlink(f.path);
    char tmp[DPM_POSIX_PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s.tmp", f.path);
    unlink(tmp);
    assert_int_equal(rmdir(dir), 0);
}

/* ---- random: CTR_DRBG over getrandom -------------------------------------------------------- */

typedef struct {
    int dead;
} entropy_t;

static int switchable_entropy(void *ctx, unsigned char *out, size_t len)
{
    return ((entropy_t *)ctx)->dead ? -1 : dpm_posix_getrandom(NULL, out, len);
}

static dpm_posix_rng_t failing_drbg;
static entropy_t entropy;

/* The kernel's entropy dies; the DRBG fails closed at its next reseed (after
 * DPM_POSIX_RESEED_INTERVAL requests), which this drains up to. */
static int drbg_fail(void *ctx, dpm_rng_t *broken)
{
    (void)ctx;
    entropy.dead = 0;
    if (dpm_posix_rng_init_with_entropy(&failing_drbg, switchable_entropy, &entropy, NULL, 0) !=
        DPM_OK) {
        return -1;
    }
    *broken = dpm_posix_rng(&failing_drbg);
    entropy.dead = 1;
    static uint8_t buf[DPM_POSIX_RNG_POOL_BYTES];
    for (unsigned i = 0; i <= DPM_POSIX_RESEED_INTERVAL + 1; i++) {
        if (broken->fill(broken->ctx, buf, sizeof(buf)) < 0) {
            return 0;
        }
    }
    return -1; /* it never failed: the rng.failure_* checks say NOT RUN, and this test fails */
}

static void test_posix_rng_conforms(void **state)
{
    (void)state;
    static dpm_posix_rng_t r;
    assert_int_equal(dpm_posix_rng_init(&r, (const uint8_t *)"conformance", 11), DPM_OK);
    dpm_rng_t rng = dpm_posix_rng(&r);
    dpm_port_rng_hooks_t h = {drbg_fail, NULL};
    dpm_port_log_begin(&logbook, &suite, 1);
    dpm_port_check_rng(&suite, &rng, &h);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.not_run, 0);
    assert_int_equal(suite.passed, 5);
    dpm_posix_rng_free(&r);
    dpm_posix_rng_free(&failing_drbg);
}

static void test_posix_clock_conforms(void **state)
{
    (void)state;
    dpm_clock_t c = dpm_posix_clock();
    dpm_port_log_begin(&logbook, &suite, 1);
    dpm_port_check_clock(&suite, &c);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.passed, 4);
}

/* ---- transport: TCP to a socket listening on 127.0.0.1 -------------------------------------- */

typedef struct {
    int lfd;
    uint16_t port;
    int peer;            /* the accepted side */
    uint32_t wait_ms;    /* dpm_posix_tcp_t.timeout_ms */
    dpm_posix_tcp_t tcp; /* the device side */
} tcp_peer_t;

static int tcp_open(tcp_peer_t *p, dpm_transport_t *t, int closed)
{
    if (dpm_posix_tcp_connect(&p->tcp, "127.0.0.1", p->port, 1000) != DPM_OK) {
        return -1;
    }
    p->tcp.timeout_ms = p->wait_ms;
    p->peer = accept(p->lfd, NULL, NULL);
    if (p->peer < 0) {
        return -1;
    }
    if (closed) {
        close(p->peer);
        p->peer = -1;
    }
    *t = dpm_posix_tcp(&p->tcp);
    return 0;
}

static int open_silent(void *ctx, dpm_transport_t *t)
{
    return tcp_open(ctx, t, 0);
}

static int open_closed(void *ctx, dpm_transport_t *t)
{
    return tcp_open(ctx, t, 1);
}

static void tcp_done(void *ctx, dpm_transport_t *t)
{
    (void)t;
    tcp_peer_t *p = ctx;
    dpm_posix_tcp_close(&p->tcp);
    if (p->peer >= 0) {
        close(p->peer);
        p->peer = -1;
    }
}

static void run_tcp(tcp_peer_t *p, uint32_t wait_ms, uint32_t upload_timeout_ms)
{
    memset(p, 0, sizeof(*p));
    p->peer = -1;
    p->wait_ms = wait_ms;
    p->lfd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(p->lfd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(p->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(p->lfd, 4), 0);
    socklen_t alen = sizeof(a);
    assert_int_equal(getsockname(p->lfd, (struct sockaddr *)&a, &alen), 0);
    p->port = ntohs(a.sin_port);
    dpm_clock_t c = dpm_posix_clock();
    dpm_port_transport_hooks_t h = {open_silent, open_closed, tcp_done, p, upload_timeout_ms};
    dpm_port_log_begin(&logbook, &suite, wait_ms < upload_timeout_ms);
    dpm_port_check_transport(&suite, &c, &h);
    close(p->lfd);
}

static void test_posix_tcp_conforms(void **state)
{
    (void)state;
    static tcp_peer_t p;
    run_tcp(&p, 50, 300);
    assert_int_equal(suite.failed, 0);
    assert_int_equal(suite.passed, 5);
}

/* Negative control: a TCP wait (1.2 s) far beyond the upload's deadline (100 ms). */
static void test_tcp_waiting_past_the_deadline_fails(void **state)
{
    (void)state;
    static tcp_peer_t p;
    run_tcp(&p, 1200, 100);
    assert_true(dpm_port_log_is(&logbook, "transport.silent_recv_is_zero", DPM_PORT_PASS, NULL));
    assert_true(dpm_port_log_is(&logbook, "transport.upload_times_out", DPM_PORT_FAIL, NULL));
    const dpm_port_record_t *r = dpm_port_log_find(&logbook, "transport.upload_times_out");
    assert_non_null(strstr(r->detail, "must not block much longer"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_posix_storage_conforms),
        cmocka_unit_test(test_posix_rng_conforms),
        cmocka_unit_test(test_posix_clock_conforms),
        cmocka_unit_test(test_posix_tcp_conforms),
        cmocka_unit_test(test_tcp_waiting_past_the_deadline_fails),
    };
    return cmocka_run_group_tests_name("port_posix_conformance", tests, NULL, NULL);
}
