/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's HTTPS client (host-sim/collector/net/https_client.h) against real servers on
 * loopback, with a throw-away PKI (tests/support/tls_testpki.sh):
 *   - dpm-collector itself, forked from the build beside this program: GET /healthz (status,
 *     headers, body), /metrics without and with the operator's bearer token, by IPv4 address,
 *     by IPv6 address ([::1], a certificate naming ::1) and by name (localhost, through the
 *     resolver thread), a body larger than the caller's buffer, several threads on one client;
 *   - openssl s_server -WWW serving a file of a temp directory (HTTP/1.0, a body delimited by
 *     the close and its close_notify);
 *   - a scripted server in a thread (the collector's own TLS server side, tls_server.h) that
 *     records the request and answers exact bytes: chunked bodies, an interim 100, Location and
 *     Retry-After, and every malformed or ambiguous answer the client must refuse;
 *   - the refusals: another CA, another host name, a silent server (the timeout measured), a
 *     plain-TCP server, a closed port, bad URLs and request fields, bad CA bundles.
 * Every refusal checks the words of its reason, and that the bearer token never appears in it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "mbedtls/sha256.h"

#include "collector/net/https_client.h"
#include "collector/net/tls_server.h"
#include "tls_testserver.h"

#define OPERATOR_TOKEN "op-token.for_tests~1"
#define WHY_CAP 1024

typedef struct {
    tls_testpki_t pki;
    coll_https_t cli;  /* trusts ca.crt */
    coll_tls_t srv;    /* the scripted server's (server.crt) */
    pid_t coll_pid[2]; /* dpm-collector on 127.0.0.1 and on [::1] */
    uint16_t coll_port[2];
    size_t healthz_len; /* /healthz's body length, from the first request */
} world_t;

/* ---- dpm-collector in a child process ------------------------------------------------------ */

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        return -1;
    }
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* build/<target>/dpm-collector: three folders up from this program (tests/unit/). */
static int collector_path(char *out, size_t cap)
{
    ssize_t n = readlink("/proc/self/exe", out, cap - 1);
    if (n <= 0) {
        return -1;
    }
    out[n] = '\0';
    for (int i = 0; i < 3; i++) {
        char *slash = strrchr(out, '/');
        if (slash == NULL) {
            return -1;
        }
        *slash = '\0';
    }
    size_t len = strlen(out);
    if (snprintf(out + len, cap - len, "/dpm-collector") >= (int)(cap - len)) {
        return -1;
    }
    return access(out, X_OK);
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Start dpm-collector on listen (port 0) with cert/key of the PKI; its port into *port. */
static int start_collector(world_t *w, int which, const char *listen, const char *cert)
{
    char exe[512], dir[256], campaigns[300], creds[300], db[300], ready[300], log[300];
    char certp[300], keyp[300], key[64];
    if (collector_path(exe, sizeof(exe)) != 0) {
        fprintf(stderr,
                "# no dpm-collector beside this test (%s): build it first, e.g. "
                "make build/host/dpm-collector\n",
                exe);
        return -1;
    }
    snprintf(dir, sizeof(dir), "%s", w->pki.dir);
    snprintf(campaigns, sizeof(campaigns), "%s/campaigns.txt", dir);
    snprintf(creds, sizeof(creds), "%s/credentials.txt", dir);
    snprintf(db, sizeof(db), "%s/collector%d.db", dir, which);
    snprintf(ready, sizeof(ready), "%s/ready%d", dir, which);
    snprintf(log, sizeof(log), "%s/collector%d.log", dir, which);
    snprintf(key, sizeof(key), "%.*s.key", (int)(strlen(cert) - 4), cert);
    tls_testpki_path(&w->pki, cert, certp, sizeof(certp));
    tls_testpki_path(&w->pki, key, keyp, sizeof(keyp));
    uint8_t digest[32];
    mbedtls_sha256((const unsigned char *)OPERATOR_TOKEN, strlen(OPERATOR_TOKEN), digest, 0);
    char line[128] = "op operator ";
    for (int i = 0; i < 32; i++) {
        snprintf(line + 12 + 2 * i, 3, "%02x", digest[i]);
    }
    strcat(line, "\n");
    if (write_file(campaigns, "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\ngroups = 4\n"
                              "metrics = tpr\n") != 0 ||
        write_file(creds, line) != 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
#if defined(__linux__)
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL); /* a crashed test leaves no collector behind */
#endif
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int null_fd = open("/dev/null", O_RDONLY);
        if (fd < 0 || null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
            _exit(127);
        }
        execl(exe, exe, "--listen", listen, "--cert", certp, "--key", keyp, "--campaigns",
              campaigns, "--db", db, "--credentials", creds, "--ready-file", ready, (char *)NULL);
        _exit(127);
    }
    w->coll_pid[which] = pid;
    for (int i = 0; i < 1000; i++) { /* up to 10 s */
        FILE *f = fopen(ready, "r");
        unsigned port = 0;
        if (f != NULL) {
            int got = fscanf(f, "%u", &port);
            fclose(f);
            if (got == 1 && port > 0 && port < 65536) {
                w->coll_port[which] = (uint16_t)port;
                return 0;
            }
        }
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            w->coll_pid[which] = 0;
            fprintf(stderr, "# dpm-collector exited at start: see %s\n", log);
            return -1;
        }
        sleep_ms(10);
    }
    fprintf(stderr, "# dpm-collector did not write %s within 10 s\n", ready);
    return -1;
}

static void stop_collector(world_t *w, int which)
{
    pid_t pid = w->coll_pid[which];
    if (pid > 0) {
        kill(pid, SIGTERM);
        for (int i = 0; i < 500 && waitpid(pid, NULL, WNOHANG) == 0; i++) {
            sleep_ms(10);
        }
        kill(pid, SIGKILL); /* no-op once reaped (ESRCH) */
        (void)waitpid(pid, NULL, 0);
        w->coll_pid[which] = 0;
    }
}

static int group_setup(void **state)
{
    world_t *w = calloc(1, sizeof(*w));
    char err[256], ca[300], cert[300], key[300];
    if (w == NULL || tls_testpki_create(&w->pki) != 0) {
        fprintf(stderr, "# cannot make the test PKI (bash, openssl?)\n");
        free(w);
        return -1;
    }
    *state = w;
    tls_testpki_path(&w->pki, "ca.crt", ca, sizeof(ca));
    tls_testpki_path(&w->pki, "server.crt", cert, sizeof(cert));
    tls_testpki_path(&w->pki, "server.key", key, sizeof(key));
    if (coll_https_init(&w->cli, ca, err, sizeof(err)) != 0 ||
        coll_tls_init(&w->srv, cert, key, NULL, err, sizeof(err)) != 0) {
        fprintf(stderr, "# %s\n", err);
        return -1;
    }
    if (start_collector(w, 0, "127.0.0.1:0", "server.crt") != 0 ||
        start_collector(w, 1, "[::1]:0", "server_v6.crt") != 0) {
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    world_t *w = *state;
    if (w != NULL) {
        stop_collector(w, 0);
        stop_collector(w, 1);
        coll_https_free(&w->cli);
        coll_tls_free(&w->srv); /* last: it frees PSA, which the client used too */
        tls_testpki_destroy(&w->pki);
        free(w);
    }
    return 0;
}

/* ---- helpers -------------------------------------------------------------------------------- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int get(coll_https_t *c, const char *url, uint32_t timeout_ms, uint8_t *out, size_t cap,
               coll_https_resp_t *resp, char *why)
{
    coll_https_req_t r = {"GET", url, NULL, NULL, NULL, 0, timeout_ms, NULL};
    return coll_https_request(c, &r, out, cap, resp, why, WHY_CAP);
}

static int resp_is_zero(const coll_https_resp_t *resp)
{
    static const coll_https_resp_t zero;
    return memcmp(resp, &zero, sizeof(zero)) == 0;
}

/* A reason must hold every one of the NULL-terminated needles. */
static void why_has(const char *why, ...)
{
    print_message("# reason: %s\n", why); /* the words a user reads, in the log */
    va_list ap;
    va_start(ap, why);
    for (const char *s = va_arg(ap, const char *); s != NULL; s = va_arg(ap, const char *)) {
        if (strstr(why, s) == NULL) {
            fail_msg("the reason lacks '%s': %s", s, why);
        }
    }
    va_end(ap);
}

/* A port nothing listens on: bound, read, closed. */
static uint16_t closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* ---- the scripted server -------------------------------------------------------------------- */

enum { END_NOTIFY, END_TCP, END_SILENT };

typedef struct {
    const coll_tls_t *tls;
    int lfd;
    uint16_t port;
    pthread_t th;
    const char *answer; /* NULL: none */
    size_t answer_len;
    int end;
    int handshake_ok;
    char req[16384]; /* what arrived: head and body */
    size_t req_len;
} script_t;

static void *script_main(void *arg)
{
    script_t *s = arg;
    struct pollfd p = {s->lfd, POLLIN, 0};
    if (poll(&p, 1, 10000) != 1) {
        return NULL;
    }
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0) {
        return NULL;
    }
    uint64_t deadline = coll_now_ms() + 10000;
    coll_tls_conn_t c;
    if (coll_tls_accept(&c, s->tls, fd, deadline) == 0) {
        s->handshake_ok = 1;
        /* the request's head, then as many body bytes as its Content-Length says */
        size_t want = 0;
        for (;;) {
            char *end = strstr(s->req, "\r\n\r\n"); /* (req stays NUL-terminated) */
            if (end != NULL && want == 0) {
                const char *cl = strstr(s->req, "Content-Length: ");
                want = (size_t)(end + 4 - s->req) + (cl != NULL ? strtoul(cl + 16, NULL, 10) : 0);
            }
            if (want > 0 && s->req_len >= want) {
                break;
            }
            int n = coll_tls_read(&c, (uint8_t *)s->req + s->req_len,
                                  sizeof(s->req) - 1 - s->req_len, deadline);
            if (n <= 0) {
                break;
            }
            s->req_len += (size_t)n;
            s->req[s->req_len] = '\0';
        }
        if (s->answer != NULL) {
            (void)coll_tls_write_all(&c, (const uint8_t *)s->answer, s->answer_len, deadline);
        }
        if (s->end == END_SILENT) {
            uint8_t sink[256]; /* until the client gives up and closes */
            while (coll_tls_read(&c, sink, sizeof(sink), deadline) > 0) {
            }
        }
        coll_tls_conn_close(&c, s->end == END_NOTIFY, deadline);
    } else {
        coll_tls_conn_close(&c, 0, deadline);
    }
    close(fd);
    return NULL;
}

static void script_start(script_t *s, const world_t *w, const char *answer, size_t len, int end)
{
    memset(s, 0, sizeof(*s));
    s->tls = &w->srv;
    s->answer = answer;
    s->answer_len = answer != NULL && len == 0 ? strlen(answer) : len;
    s->end = end;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s->lfd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof(a);
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s->lfd, 4), 0);
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &alen), 0);
    s->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&s->th, NULL, script_main, s), 0);
}

static void script_join(script_t *s)
{
    pthread_join(s->th, NULL);
    close(s->lfd);
}

/* One GET against a scripted answer: the result, resp, body and reason. */
static int scripted_get(world_t *w, const char *answer, size_t len, int end, uint8_t *out,
                        size_t cap, coll_https_resp_t *resp, char *why, script_t *s)
{
    char url[128];
    script_start(s, w, answer, len, end);
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/s", (unsigned)s->port);
    int ret = get(&w->cli, url, 5000, out, cap, resp, why);
    script_join(s);
    return ret;
}

/* ---- dpm-collector -------------------------------------------------------------------------- */

static void test_collector_healthz(void **state)
{
    world_t *w = *state;
    char url[128], why[WHY_CAP];
    uint8_t body[4096];
    coll_https_resp_t resp;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/healthz", (unsigned)w->coll_port[0]);
    int ret = get(&w->cli, url, 5000, body, sizeof(body), &resp, why);
    assert_int_equal(ret, 0);
    assert_int_equal(resp.status, 200);
    assert_string_equal(resp.content_type, "application/json");
    assert_string_equal(resp.location, "");
    assert_int_equal(resp.retry_after_s, 0);
    assert_true(resp.len > 20 && resp.len < sizeof(body));
    assert_memory_equal(body, "{\"status\": \"ok\"", 15);
    assert_memory_equal(body + resp.len - 2, "}\n", 2); /* all of it, and no more */
    w->healthz_len = resp.len;
    /* a 404 is an answer, not a failure */
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/nowhere?x=1", (unsigned)w->coll_port[0]);
    assert_int_equal(get(&w->cli, url, 5000, body, sizeof(body), &resp, why), 0);
    assert_int_equal(resp.status, 404);
}

static void test_collector_bearer(void **state)
{
    world_t *w = *state;
    char url[128], why[WHY_CAP];
    uint8_t body[65536];
    coll_https_resp_t resp;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/metrics", (unsigned)w->coll_port[0]);
    assert_int_equal(get(&w->cli, url, 5000, body, sizeof(body), &resp, why), 0);
    assert_int_equal(resp.status, 401); /* the operator's route, no token */
    coll_https_req_t r = {"GET", url, OPERATOR_TOKEN, NULL, NULL, 0, 5000, NULL};
    assert_int_equal(coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP), 0);
    assert_int_equal(resp.status, 200);
    assert_true(resp.len > 0);
    assert_non_null(strstr(resp.content_type, "text/plain"));
    r.bearer = "op-token.for_tests~2"; /* one character off: refused by the collector */
    assert_int_equal(coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP), 0);
    assert_true(resp.status == 401 || resp.status == 403);
}

static void test_collector_by_name_and_ipv6(void **state)
{
    world_t *w = *state;
    char url[128], why[WHY_CAP];
    uint8_t body[4096];
    coll_https_resp_t resp;
    /* "localhost": the resolver thread, then the certificate's DNS name */
    snprintf(url, sizeof(url), "https://localhost:%u/healthz", (unsigned)w->coll_port[0]);
    assert_int_equal(get(&w->cli, url, 5000, body, sizeof(body), &resp, why), 0);
    assert_int_equal(resp.status, 200);
    /* [::1]: an IPv6 literal, matched against the certificate's IP address */
    snprintf(url, sizeof(url), "https://[::1]:%u/healthz", (unsigned)w->coll_port[1]);
    int ret = get(&w->cli, url, 5000, body, sizeof(body), &resp, why);
    if (ret != 0) {
        fail_msg("%s", why);
    }
    assert_int_equal(resp.status, 200);
    assert_memory_equal(body, "{\"status\": \"ok\"", 15);
}

static void test_body_larger_than_cap(void **state)
{
    world_t *w = *state;
    char url[128], why[WHY_CAP], want[64];
    uint8_t body[16];
    coll_https_resp_t resp;
    assert_true(w->healthz_len > sizeof(body)); /* test_collector_healthz ran first */
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/healthz", (unsigned)w->coll_port[0]);
    assert_int_equal(get(&w->cli, url, 5000, body, sizeof(body), &resp, why), -1);
    snprintf(want, sizeof(want), "Content-Length %zu bytes", w->healthz_len);
    why_has(why, want, "larger than the 16 bytes", NULL);
    assert_true(resp_is_zero(&resp));
    /* the same with room for exactly the body: accepted */
    uint8_t exact[4096];
    assert_int_equal(get(&w->cli, url, 5000, exact, w->healthz_len, &resp, why), 0);
    assert_int_equal(resp.len, w->healthz_len);
}

typedef struct {
    world_t *w;
    int ok;
} worker_t;

static void *worker(void *arg)
{
    worker_t *k = arg;
    char url[128], why[WHY_CAP];
    uint8_t body[4096];
    coll_https_resp_t resp;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/healthz", (unsigned)k->w->coll_port[0]);
    for (int i = 0; i < 6; i++) {
        if (get(&k->w->cli, url, 10000, body, sizeof(body), &resp, why) == 0 &&
            resp.status == 200 && resp.len == k->w->healthz_len) {
            k->ok++;
        } else {
            fprintf(stderr, "# thread request failed: %s\n", why);
        }
    }
    return NULL;
}

static void test_threads_share_one_client(void **state)
{
    world_t *w = *state;
    enum { THREADS = 4 };
    pthread_t th[THREADS];
    worker_t k[THREADS];
    for (int i = 0; i < THREADS; i++) {
        k[i].w = w;
        k[i].ok = 0;
        assert_int_equal(pthread_create(&th[i], NULL, worker, &k[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        ok += k[i].ok;
    }
    assert_int_equal(ok, THREADS * 6);
}

/* ---- openssl s_server -WWW ------------------------------------------------------------------ */

static void test_s_server_file(void **state)
{
    world_t *w = *state;
    char page[3001], path[300], cwd[512], url[128], why[WHY_CAP], why_small[WHY_CAP];
    for (size_t i = 0; i < sizeof(page) - 1; i++) {
        page[i] = (char)('a' + i % 26);
    }
    page[sizeof(page) - 1] = '\0';
    tls_testpki_path(&w->pki, "page.txt", path, sizeof(path));
    assert_int_equal(write_file(path, page), 0);
    /* s_server -WWW serves paths relative to its working directory: the PKI's */
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(w->pki.dir), 0);
    tls_testserver_t srv;
    static const char *const extra[] = {"-WWW", NULL};
    int started =
        tls_testserver_start_openssl(&srv, &w->pki, "server.crt", "server.key", extra, 10000);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(started, 0);
    uint8_t body[4096];
    coll_https_resp_t resp, small;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/page.txt", (unsigned)srv.port);
    int ret = get(&w->cli, url, 5000, body, sizeof(body), &resp, why);
    /* the same close-delimited body into 100 bytes: refused */
    uint8_t little[100];
    int ret_small = get(&w->cli, url, 5000, little, sizeof(little), &small, why_small);
    tls_testserver_stop(&srv);
    if (ret != 0) {
        fail_msg("%s", why);
    }
    assert_int_equal(resp.status, 200);
    assert_string_equal(resp.content_type, "text/plain");
    assert_int_equal(resp.len, sizeof(page) - 1);
    assert_memory_equal(body, page, sizeof(page) - 1);
    assert_int_equal(ret_small, -1);
    why_has(why_small, "no length; more than 100 bytes", NULL);
}

/* ---- the scripted server: good answers ------------------------------------------------------ */

static void test_chunked_body(void **state)
{
    world_t *w = *state;
    static const char answer[] = "HTTP/1.1 200 OK\r\n"
                                 "Content-Type: application/dap-aggregation-job-resp\r\n"
                                 "Transfer-Encoding: Chunked\r\n"
                                 "\r\n"
                                 "5\r\nhello\r\n"
                                 "7;ext=\"x\"\r\n, world\r\n"
                                 "1A\r\nabcdefghijklmnopqrstuvwxyz\r\n"
                                 "0\r\nX-Trailer: t\r\n\r\n";
    script_t s;
    uint8_t body[256];
    coll_https_resp_t resp;
    char why[WHY_CAP];
    int ret = scripted_get(w, answer, 0, END_TCP, body, sizeof(body), &resp, why, &s);
    if (ret != 0) {
        fail_msg("%s", why);
    }
    assert_int_equal(resp.status, 200);
    assert_string_equal(resp.content_type, "application/dap-aggregation-job-resp");
    assert_int_equal(resp.len, 38);
    assert_memory_equal(body, "hello, worldabcdefghijklmnopqrstuvwxyz", 38);
    /* what the client sent: origin-form, Host with the port, no body headers for a GET */
    char want[128];
    snprintf(want, sizeof(want), "GET /s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n", (unsigned)s.port);
    assert_memory_equal(s.req, want, strlen(want));
    assert_non_null(strstr(s.req, "\r\nConnection: close\r\n"));
    assert_null(strstr(s.req, "Content-Length"));
    assert_null(strstr(s.req, "Authorization"));
    /* the same bytes with one more byte than the cap allows: refused, the size said */
    ret = scripted_get(w, answer, 0, END_TCP, body, 37, &resp, why, &s);
    assert_int_equal(ret, -1);
    why_has(why, "chunked: at least 38 bytes", "larger than the 37 bytes", NULL);
}

static void test_post_with_bearer(void **state)
{
    world_t *w = *state;
    static const char answer[] = "HTTP/1.1 201 Created\r\nLocation: /v1/x/1\r\nRetry-After: 7\r\n"
                                 "Content-Length: 2\r\n\r\nok";
    script_t s;
    char url[128], why[WHY_CAP];
    uint8_t body[64];
    coll_https_resp_t resp;
    script_start(&s, w, answer, 0, END_NOTIFY);
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/v1/x?q=1#frag", (unsigned)s.port);
    coll_https_req_t r = {"POST",
                          url,
                          "tok.en-1/+~_=",
                          "application/x-protobuf",
                          (const uint8_t *)"abc",
                          3,
                          5000,
                          "DPM-Task-Digest: 0a1b\r\n"};
    int ret = coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP);
    script_join(&s);
    if (ret != 0) {
        fail_msg("%s", why);
    }
    assert_int_equal(resp.status, 201);
    assert_string_equal(resp.location, "/v1/x/1");
    assert_int_equal(resp.retry_after_s, 7);
    assert_int_equal(resp.len, 2);
    assert_memory_equal(body, "ok", 2);
    assert_memory_equal(s.req, "POST /v1/x?q=1 HTTP/1.1\r\n", 25); /* no fragment sent */
    assert_non_null(strstr(s.req, "\r\nAuthorization: Bearer tok.en-1/+~_=\r\n"));
    assert_non_null(strstr(s.req, "\r\nContent-Type: application/x-protobuf\r\n"));
    assert_non_null(strstr(s.req, "\r\nContent-Length: 3\r\n"));
    assert_non_null(strstr(s.req, "\r\nDPM-Task-Digest: 0a1b\r\n")); /* the caller's extra */
    assert_int_equal(s.req_len >= 3, 1);
    assert_memory_equal(s.req + s.req_len - 7, "\r\n\r\nabc", 7);
    /* a PUT without a body still says its length */
    script_start(&s, w, answer, 0, END_NOTIFY);
    snprintf(url, sizeof(url), "https://127.0.0.1:%u", (unsigned)s.port);
    coll_https_req_t put = {"PUT", url, NULL, NULL, NULL, 0, 5000, NULL};
    ret = coll_https_request(&w->cli, &put, body, sizeof(body), &resp, why, WHY_CAP);
    script_join(&s);
    assert_int_equal(ret, 0);
    assert_memory_equal(s.req, "PUT / HTTP/1.1\r\n", 16);
    assert_non_null(strstr(s.req, "\r\nContent-Length: 0\r\n"));
}

static void test_interim_and_retry_date(void **state)
{
    world_t *w = *state;
    char answer[512], date[64], why[WHY_CAP];
    time_t later = time(NULL) + 3600;
    struct tm tm;
    gmtime_r(&later, &tm);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    snprintf(answer, sizeof(answer),
             "HTTP/1.1 100 Continue\r\n\r\n"
             "HTTP/1.1 503 Service Unavailable\r\nRetry-After: %s\r\nContent-Length: 4\r\n\r\nbusy",
             date);
    script_t s;
    uint8_t body[64];
    coll_https_resp_t resp;
    int ret = scripted_get(w, answer, 0, END_NOTIFY, body, sizeof(body), &resp, why, &s);
    if (ret != 0) {
        fail_msg("%s", why);
    }
    assert_int_equal(resp.status, 503);
    assert_true(resp.retry_after_s >= 3590 && resp.retry_after_s <= 3600);
    assert_int_equal(resp.len, 4);
    /* a 204 has no body whatever it says; HTTP/1.0 and a bare LF are accepted */
    ret = scripted_get(w, "HTTP/1.0 204 No Content\nContent-Length: 99\n\n", 0, END_TCP, body,
                       sizeof(body), &resp, why, &s);
    if (ret != 0) {
        fail_msg("%s", why);
    }
    assert_int_equal(resp.status, 204);
    assert_int_equal(resp.len, 0);
}

/* ---- the scripted server: refusals ---------------------------------------------------------- */

typedef struct {
    const char *answer;
    int end;
    const char *reason; /* a part of why */
} bad_answer_t;

static void test_malformed_answers(void **state)
{
    world_t *w = *state;
    char long_head[9100];
    char long_type[300];
    char long_trailer[9200];
    memcpy(long_head, "HTTP/1.1 200 OK\r\nX-Big: ", 24);
    memset(long_head + 24, 'b', 9000);
    memcpy(long_head + 9024, "\r\n\r\n", 5);
    snprintf(long_trailer, sizeof(long_trailer),
             "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: %09000d\r\n\r\n", 0);
    snprintf(long_type, sizeof(long_type),
             "HTTP/1.1 200 OK\r\nContent-Type: %0200d\r\n"
             "Content-Length: 0\r\n\r\n",
             0);
    const bad_answer_t cases[] = {
        {"HELLO\r\n\r\n", END_NOTIFY, "status line (not 'HTTP/1.x NNN reason') 'HELLO'"},
        {"HTTP/1.1 2000 OK\r\n\r\n", END_NOTIFY, "status line"},
        {"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", END_NOTIFY, "header line 'no colon here'"},
        {"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", END_NOTIFY, "header line 'Bad Name: x'"},
        {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
         END_NOTIFY, "both Content-Length and Transfer-Encoding: chunked (ambiguous framing)"},
        {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc", END_NOTIFY,
         "two Content-Length headers"},
        {"HTTP/1.1 200 OK\r\nContent-Length: 3, 3\r\n\r\nabc", END_NOTIFY,
         "Content-Length is not a number"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", END_NOTIFY,
         "Transfer-Encoding other than one 'chunked'"},
        {"HTTP/1.1 200 OK\r\nX-A: 1\r\n  folded\r\n\r\n", END_NOTIFY, "obsolete folding"},
        {"HTTP/1.1 200 OK\r\nX-A: a\rb\r\n\r\n", END_NOTIFY, "header line 'X-A: a\\x0Db'"},
        {long_trailer, END_NOTIFY, "the response's trailers are longer than 8192 bytes"},
        {long_head, END_NOTIFY, "the response's head is longer than 8192 bytes"},
        {long_type, END_NOTIFY, "Content-Type is 200 bytes, longer than the 127"},
        {"HTTP/1.1 101 Switching Protocols\r\n\r\n", END_NOTIFY, "a protocol switch"},
        {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", END_NOTIFY,
         "ended after 3 body bytes, 7 short: truncated"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", END_NOTIFY,
         "chunk size line 'zz'"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcXY\r\n", END_NOTIFY,
         "no CR LF after a chunk's data, but 'XY\\x0D\\x0A'"},
        {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", END_NOTIFY,
         "ended inside its chunked body after 3 bytes"},
        {"HTTP/1.1 200 OK\r\n\r\nno length, no close_notify", END_TCP,
         "without TLS close_notify after 26 bytes: possibly truncated"},
        {NULL, END_NOTIFY, "closed the connection without a response"},
        {"HTTP/1.1 200 OK\r\nContent-Le", END_NOTIFY, "the response ended inside a line"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        script_t s;
        uint8_t body[256];
        coll_https_resp_t resp;
        char why[WHY_CAP] = "";
        int ret =
            scripted_get(w, cases[i].answer, 0, cases[i].end, body, sizeof(body), &resp, why, &s);
        print_message("# reason: %s\n", why);
        if (ret != -1 || strstr(why, cases[i].reason) == NULL || !resp_is_zero(&resp)) {
            fail_msg("case %zu: want -1 and '%s', got %d: %s", i, cases[i].reason, ret, why);
        }
    }
    /* the control: a close-delimited body that ends in close_notify is accepted */
    script_t s;
    uint8_t body[256];
    coll_https_resp_t resp;
    char why[WHY_CAP];
    assert_int_equal(scripted_get(w, "HTTP/1.1 200 OK\r\n\r\nclosed", 0, END_NOTIFY, body,
                                  sizeof(body), &resp, why, &s),
                     0);
    assert_int_equal(resp.len, 6);
}

static void test_silent_after_handshake(void **state)
{
    world_t *w = *state;
    script_t s;
    char url[128], why[WHY_CAP];
    uint8_t body[64];
    coll_https_resp_t resp;
    script_start(&s, w, NULL, 0, END_SILENT);
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/", (unsigned)s.port);
    coll_https_req_t r = {"GET", url, "SECRET-BEARER-42", NULL, NULL, 0, 700, NULL};
    uint64_t t0 = now_ms();
    int ret = coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP);
    uint64_t took = now_ms() - t0;
    script_join(&s);
    print_message("# timeout_ms 700, the request returned after %llu ms\n",
                  (unsigned long long)took);
    assert_int_equal(ret, -1);
    assert_true(s.handshake_ok);
    why_has(why, "timed out waiting for the response", "timeout_ms 700", NULL);
    assert_null(strstr(why, "SECRET-BEARER-42"));
    assert_true(took >= 690 && took < 700 + 1500);
}

/* ---- refusals: certificates, servers, sockets ----------------------------------------------- */

static void test_wrong_ca(void **state)
{
    world_t *w = *state;
    char ca[300], err[256], url[128], why[WHY_CAP];
    coll_https_t other;
    tls_testpki_path(&w->pki, "other_ca.crt", ca, sizeof(ca));
    assert_int_equal(coll_https_init(&other, ca, err, sizeof(err)), 0);
    uint8_t body[256];
    coll_https_resp_t resp;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/healthz", (unsigned)w->coll_port[0]);
    int ret = get(&other, url, 5000, body, sizeof(body), &resp, why);
    coll_https_free(&other);
    assert_int_equal(ret, -1);
    why_has(why, "does not verify", "not correctly signed by the trusted CA",
            "expected host name '127.0.0.1'", NULL);
    /* the DER form of the right CA: accepted */
    tls_testpki_path(&w->pki, "ca.der", ca, sizeof(ca));
    assert_int_equal(coll_https_init(&other, ca, err, sizeof(err)), 0);
    ret = get(&other, url, 5000, body, sizeof(body), &resp, why);
    coll_https_free(&other);
    assert_int_equal(ret, 0);
    assert_int_equal(resp.status, 200);
}

static void test_host_name_mismatch(void **state)
{
    world_t *w = *state;
    tls_testserver_t srv;
    static const char *const extra[] = {"-WWW", NULL};
    assert_int_equal(tls_testserver_start_openssl(&srv, &w->pki, "wrong_name.crt", "wrong_name.key",
                                                  extra, 10000),
                     0);
    char url[128], why[WHY_CAP], why_name[WHY_CAP];
    uint8_t body[256];
    coll_https_resp_t resp;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/x", (unsigned)srv.port);
    int ret = get(&w->cli, url, 5000, body, sizeof(body), &resp, why);
    snprintf(url, sizeof(url), "https://localhost:%u/x", (unsigned)srv.port);
    int ret_name = get(&w->cli, url, 5000, body, sizeof(body), &resp, why_name);
    tls_testserver_stop(&srv);
    assert_int_equal(ret, -1);
    why_has(why, "does not verify", "does not match", "expected host name '127.0.0.1'", NULL);
    assert_int_equal(ret_name, -1);
    why_has(why_name, "does not match", "expected host name 'localhost'", NULL);
}

/* The name checked is the URL's own: a certificate naming localhost and ::1, not 127.0.0.1, is
 * accepted by name and refused by that address, on the same server. */
static void test_name_checked_is_the_urls(void **state)
{
    world_t *w = *state;
    tls_testserver_t srv;
    static const char *const extra[] = {"-WWW", NULL};
    assert_int_equal(
        tls_testserver_start_openssl(&srv, &w->pki, "server_v6.crt", "server_v6.key", extra, 10000),
        0);
    char url[128], why_ip[WHY_CAP], why_name[WHY_CAP] = "";
    uint8_t body[16384];
    coll_https_resp_t resp;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/none", (unsigned)srv.port);
    int ret_ip = get(&w->cli, url, 5000, body, sizeof(body), &resp, why_ip);
    snprintf(url, sizeof(url), "https://localhost:%u/none", (unsigned)srv.port);
    int ret_name = get(&w->cli, url, 5000, body, sizeof(body), &resp, why_name);
    tls_testserver_stop(&srv);
    assert_int_equal(ret_ip, -1);
    why_has(why_ip, "does not match", "expected host name '127.0.0.1'", NULL);
    if (ret_name != 0) {
        fail_msg("by name: %s", why_name);
    }
    assert_int_equal(resp.status, 200); /* s_server -WWW: 200 even for a missing file */
}

static void test_silent_server_times_out(void **state)
{
    world_t *w = *state;
    tls_testserver_t srv;
    assert_int_equal(tls_testserver_start_silent(&srv), 0);
    char url[128], why[WHY_CAP];
    uint8_t body[64];
    coll_https_resp_t resp;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/", (unsigned)srv.port);
    uint64_t t0 = now_ms();
    int ret = get(&w->cli, url, 500, body, sizeof(body), &resp, why);
    uint64_t took = now_ms() - t0;
    tls_testserver_stop(&srv);
    print_message("# silent server: timeout_ms 500, the request returned after %llu ms\n",
                  (unsigned long long)took);
    assert_int_equal(ret, -1);
    why_has(why, "timed out in the TLS handshake", "timeout_ms 500", NULL);
    assert_true(took >= 490 && took < 500 + 1500);
}

static void test_garbage_server(void **state)
{
    world_t *w = *state;
    tls_testserver_t srv;
    assert_int_equal(tls_testserver_start_garbage(&srv), 0);
    char url[128], why[WHY_CAP], where[64];
    uint8_t body[64];
    coll_https_resp_t resp;
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/", (unsigned)srv.port);
    int ret = get(&w->cli, url, 5000, body, sizeof(body), &resp, why);
    tls_testserver_stop(&srv);
    assert_int_equal(ret, -1);
    snprintf(where, sizeof(where), "GET https://127.0.0.1:%u/: ", (unsigned)srv.port);
    why_has(why, where, "the TLS handshake failed", "is that an HTTPS server", NULL);
}

static void test_connection_refused(void **state)
{
    world_t *w = *state;
    char url[128], why[WHY_CAP], where[64];
    uint8_t body[64];
    coll_https_resp_t resp;
    uint16_t port = closed_port();
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/healthz", (unsigned)port);
    assert_int_equal(get(&w->cli, url, 5000, body, sizeof(body), &resp, why), -1);
    snprintf(where, sizeof(where), "cannot connect to 127.0.0.1 port %u", (unsigned)port);
    why_has(why, where, "Connection refused", NULL);
    snprintf(url, sizeof(url), "https://no-such-host.invalid:%u/", (unsigned)port);
    assert_int_equal(get(&w->cli, url, 5000, body, sizeof(body), &resp, why), -1);
    if (strstr(why, "cannot resolve host no-such-host.invalid") == NULL &&
        strstr(why, "timed out resolving") == NULL) {
        fail_msg("an unknown name: %s", why);
    }
}

/* ---- refusals before any connection --------------------------------------------------------- */

static void test_bad_urls_and_fields(void **state)
{
    world_t *w = *state;
    static const struct {
        const char *url;
        const char *reason;
    } urls[] = {
        {"http://127.0.0.1/healthz", "not https://"},
        {"127.0.0.1:443/healthz", "not https://"},
        {"https:///healthz", "no host"},
        {"https://:8443/healthz", "no host"},
        {"https://localhost:0/", "port is not a number from 1 to 65535"},
        {"https://localhost:65536/", "port is not a number from 1 to 65535"},
        {"https://localhost:44x3/", "port is not a number from 1 to 65535"},
        {"https://localhost:/", "port is not a number from 1 to 65535"},
        {"https://[::1/", "no ']' closes"},
        {"https://[127.0.0.1]/", "not an IPv6 address"},
        {"https://[::1]x/", "only ':port' may follow"},
        {"https://bad host/", "a character no host name has"},
        {"https://localhost/a b", "percent-encode it"},
        {"https://localhost/a\r\nX-Injected: 1", "localhost/a\\x0D\\x0AX-Injected: 1: bad URL"},
    };
    uint8_t body[64];
    coll_https_resp_t resp;
    char why[WHY_CAP];
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        int ret = get(&w->cli, urls[i].url, 5000, body, sizeof(body), &resp, why);
        print_message("# reason: %s\n", why);
        if (ret != -1 || strstr(why, urls[i].reason) == NULL || strstr(why, "bad URL") == NULL) {
            fail_msg("URL %zu: want -1 and '%s', got %d: %s", i, urls[i].reason, ret, why);
        }
    }
    /* user information is refused and its password never quoted */
    assert_int_equal(
        get(&w->cli, "https://user:hunter2@localhost/x", 5000, body, sizeof(body), &resp, why), -1);
    why_has(why, "user information", "localhost/x", NULL);
    assert_null(strstr(why, "hunter2"));
    /* request fields that would split the head: refused, the token never quoted */
    static const char *const bearers[] = {"SECRET 42", "SECRET42\n", "", "SE=CRET42"};
    for (size_t i = 0; i < sizeof(bearers) / sizeof(bearers[0]); i++) {
        coll_https_req_t r = {"GET", "https://localhost/", bearers[i], NULL, NULL, 0, 5000, NULL};
        assert_int_equal(coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP),
                         -1);
        why_has(why, "the bearer token", NULL);
        assert_null(strstr(why, "SECRET"));
    }
    coll_https_req_t r = {"GE T", "https://localhost/", NULL, NULL, NULL, 0, 5000, NULL};
    assert_int_equal(coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP), -1);
    why_has(why, "not an HTTP token", NULL);
    r.method = "POST";
    r.content_type = "text/plain\r\nX-Injected: 1";
    assert_int_equal(coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP), -1);
    why_has(why, "Content-Type holds a control character", NULL);
    r.content_type = NULL;
    r.timeout_ms = 0;
    assert_int_equal(coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP), -1);
    why_has(why, "timeout_ms is 0", NULL);
    r.timeout_ms = 5000;
    r.len = 5; /* a length without a body */
    assert_int_equal(coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP), -1);
    why_has(why, "no body pointer", NULL);
}

static void test_request_head_too_long(void **state)
{
    world_t *w = *state;
    static char token[9000];
    memset(token, 'T', sizeof(token) - 1);
    uint8_t body[64];
    coll_https_resp_t resp;
    char why[WHY_CAP];
    uint16_t port = closed_port(); /* refused before connecting: nothing listens anyway */
    char url[128];
    snprintf(url, sizeof(url), "https://127.0.0.1:%u/", (unsigned)port);
    coll_https_req_t r = {"GET", url, token, NULL, NULL, 0, 5000, NULL};
    assert_int_equal(coll_https_request(&w->cli, &r, body, sizeof(body), &resp, why, WHY_CAP), -1);
    why_has(why, "the request head exceeds 8192 bytes", NULL);
    assert_null(strstr(why, "TTTT"));
}

/* A server that speaks only TLS 1.2, and one that speaks only TLS 1.3: both answered. */
static void test_tls12_and_13(void **state)
{
    world_t *w = *state;
    static const char *const tls12[] = {"-WWW", "-tls1_2", NULL};
    static const char *const tls13[] = {"-WWW", "-tls1_3", NULL};
    const char *const *variants[] = {tls12, tls13};
    for (int i = 0; i < 2; i++) {
        tls_testserver_t srv;
        assert_int_equal(tls_testserver_start_openssl(&srv, &w->pki, "server.crt", "server.key",
                                                      variants[i], 10000),
                         0);
        char url[128], why[WHY_CAP];
        uint8_t body[16384];
        coll_https_resp_t resp;
        snprintf(url, sizeof(url), "https://127.0.0.1:%u/none", (unsigned)srv.port);
        int ret = get(&w->cli, url, 5000, body, sizeof(body), &resp, why);
        tls_testserver_stop(&srv);
        if (ret != 0 || resp.status != 200) {
            fail_msg("%s: %d %s", variants[i][1], resp.status, why);
        }
    }
}

/* The reader alone (the fuzzer's entry): the same answer whatever the pieces it arrives in. */
static void test_parse_response_in_pieces(void **state)
{
    (void)state;
    static const char answer[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 "5\r\nhello\r\n7\r\n, world\r\n0\r\n\r\n";
    for (size_t step = 0; step < 5; step++) {
        uint8_t body[64];
        coll_https_resp_t resp;
        char why[WHY_CAP];
        int ret = coll_https_parse_response((const uint8_t *)answer, strlen(answer), step, 0, "GET",
                                            body, sizeof(body), &resp, why, WHY_CAP);
        if (ret != 0) {
            fail_msg("step %zu: %s", step, why);
        }
        assert_int_equal(resp.status, 200);
        assert_int_equal(resp.len, 12);
        assert_memory_equal(body, "hello, world", 12);
    }
    uint8_t body[64];
    coll_https_resp_t resp;
    char why[WHY_CAP];
    assert_int_equal(coll_https_parse_response((const uint8_t *)answer, 40, 1, 1, "GET", body,
                                               sizeof(body), &resp, why, WHY_CAP),
                     -1);
    why_has(why, "GET (response): ", "ended inside a line", NULL);
}

static void test_init_refusals(void **state)
{
    world_t *w = *state;
    char path[300], err[512];
    coll_https_t c;
    assert_int_equal(coll_https_init(&c, "/nonexistent/ca.pem", err, sizeof(err)), -1);
    why_has(err, "cannot open CA bundle /nonexistent/ca.pem: No such file or directory", NULL);
    coll_https_free(&c); /* safe after a refusal */
    tls_testpki_path(&w->pki, "server.key", path, sizeof(path));
    assert_int_equal(coll_https_init(&c, path, err, sizeof(err)), -1);
    why_has(err, "cannot load CA bundle", "server.key", NULL);
    coll_https_free(&c);
    assert_int_equal(coll_https_init(&c, NULL, err, sizeof(err)), -1);
    why_has(err, "no CA bundle given", NULL);
    coll_https_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_collector_healthz), /* first: the others use its body length */
        cmocka_unit_test(test_collector_bearer),
        cmocka_unit_test(test_collector_by_name_and_ipv6),
        cmocka_unit_test(test_body_larger_than_cap),
        cmocka_unit_test(test_threads_share_one_client),
        cmocka_unit_test(test_s_server_file),
        cmocka_unit_test(test_chunked_body),
        cmocka_unit_test(test_post_with_bearer),
        cmocka_unit_test(test_interim_and_retry_date),
        cmocka_unit_test(test_malformed_answers),
        cmocka_unit_test(test_silent_after_handshake),
        cmocka_unit_test(test_wrong_ca),
        cmocka_unit_test(test_host_name_mismatch),
        cmocka_unit_test(test_name_checked_is_the_urls),
        cmocka_unit_test(test_silent_server_times_out),
        cmocka_unit_test(test_garbage_server),
        cmocka_unit_test(test_connection_refused),
        cmocka_unit_test(test_bad_urls_and_fields),
        cmocka_unit_test(test_request_head_too_long),
        cmocka_unit_test(test_tls12_and_13),
        cmocka_unit_test(test_parse_response_in_pieces),
        cmocka_unit_test(test_init_refusals),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
