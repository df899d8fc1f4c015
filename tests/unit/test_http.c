/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP/1.1 request writer and strict response parser, the transport loops with their
 * deadline, retry backoff, and dpm_upload_flush against a fake collector (a 2xx removes only
 * what its BatchResponse accounts for). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/batch.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/http.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/outbox.h"
#include "dpm/expert/report.h"
#include "fake_collector.h"
#include "fake_storage.h"
#include "test_rng.h"
#include "worst_report.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define EPS1 ((dpm_eps_t)65536)

/* ---- request writer ---------------------------------------------------------------------- */

static void test_request_bytes(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t len = 0;
    assert_int_equal(dpm_http_write_request(buf, sizeof(buf), "collector.example:8443",
                                            "/v1/reports", 1234, &len),
                     DPM_OK);
    const char *want = "POST /v1/reports HTTP/1.1\r\n"
                       "Host: collector.example:8443\r\n"
                       "Content-Type: application/x-protobuf\r\n"
                       "Content-Length: 1234\r\n"
                       "Connection: keep-alive\r\n"
                       "\r\n";
    assert_int_equal(len, strlen(want));
    assert_memory_equal(buf, want, len);
    /* every smaller buffer is an error, never a truncated request */
    for (size_t cap = 0; cap < len; cap++) {
        size_t l2 = 99;
        memset(buf, 0x77, sizeof(buf));
        assert_int_equal(
            dpm_http_write_request(buf, cap, "collector.example:8443", "/v1/reports", 1234, &l2),
            DPM_ERR_BUFFER);
        assert_int_equal(l2, 99);
        assert_int_equal(buf[0], 0x77); /* untouched */
    }
    assert_int_equal(dpm_http_write_request(buf, sizeof(buf), "[::1]:80", "/", 0, &len), DPM_OK);
    assert_int_equal(dpm_http_write_request(buf, sizeof(buf), "h", "/", UINT32_MAX, &len), DPM_OK);
    assert_non_null(strstr((const char *)buf, "Content-Length: 4294967295\r\n"));
}

static void test_request_refuses_injection(void **state)
{
    (void)state;
    uint8_t buf[1024];
    memset(buf, 0x77, sizeof(buf));
    size_t len = 0;
    const char *bad_hosts[] = {"", "a b", "a\r\nX-Evil: 1", "a/b", "a\tb", "h\x7f"};
    for (size_t i = 0; i < ARRAY_LEN(bad_hosts); i++) {
        assert_int_equal(dpm_http_write_request(buf, sizeof(buf), bad_hosts[i], "/", 1, &len),
                         DPM_ERR_PARAM);
    }
    const char *bad_paths[] = {"", "v1", "/a b", "/a\r\nHost: x", "/\x01", "/caf\xc3\xa9"};
    for (size_t i = 0; i < ARRAY_LEN(bad_paths); i++) {
        assert_int_equal(dpm_http_write_request(buf, sizeof(buf), "h", bad_paths[i], 1, &len),
                         DPM_ERR_PARAM);
    }
    char long_host[DPM_HTTP_MAX_HOST + 2];
    memset(long_host, 'a', sizeof(long_host));
    long_host[DPM_HTTP_MAX_HOST + 1] = '\0';
    assert_int_equal(dpm_http_write_request(buf, sizeof(buf), long_host, "/", 1, &len),
                     DPM_ERR_PARAM);
    long_host[DPM_HTTP_MAX_HOST] = '\0';
    assert_int_equal(dpm_http_write_request(buf, sizeof(buf), long_host, "/", 1, &len), DPM_OK);
    char long_path[DPM_HTTP_MAX_PATH + 2];
    memset(long_path, 'p', sizeof(long_path));
    long_path[0] = '/';
    long_path[DPM_HTTP_MAX_PATH + 1] = '\0';
    assert_int_equal(dpm_http_write_request(buf, sizeof(buf), "h", long_path, 1, &len),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_http_write_request(buf, sizeof(buf), NULL, "/", 1, &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_write_request(NULL, 10, "h", "/", 1, &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_write_request(buf, sizeof(buf), "h", "/", 1, NULL), DPM_ERR_PARAM);
}

/* ---- response parser --------------------------------------------------------------------- */

/* Parse text fed in pieces of `step` bytes (0: all at once). */
static dpm_status_t parse(const char *text, size_t step, uint8_t *body, size_t cap,
                          dpm_http_response_t *r)
{
    assert_int_equal(dpm_http_response_init(r, body, cap), DPM_OK);
    size_t len = strlen(text), pos = 0;
    if (step == 0) {
        step = len;
    }
    while (pos < len) {
        size_t n = len - pos < step ? len - pos : step, used = 0;
        dpm_status_t st = dpm_http_response_feed(r, (const uint8_t *)text + pos, n, &used);
        if (st != DPM_OK) {
            return st;
        }
        pos += used;
        if (used < n) {
            break; /* complete: the rest is not ours */
        }
    }
    return dpm_http_response_done(r) ? DPM_OK : DPM_ERR_TIMEOUT /* incomplete */;
}

static void test_response_ok_whole_and_bytewise(void **state)
{
    (void)state;
    const char *text = "HTTP/1.1 200 OK\r\n"
                       "Server: x\r\n"
                       "content-length:   5 \r\n"
                       "X-Empty:\r\n"
                       "\r\n"
                       "hello";
    for (size_t step = 0; step <= 3; step++) {
        uint8_t body[16];
        dpm_http_response_t r;
        assert_int_equal(parse(text, step, body, sizeof(body), &r), DPM_OK);
        assert_int_equal(r.status, 200);
        assert_int_equal(r.content_length, 5);
        assert_int_equal(r.body_len, 5);
        assert_memory_equal(body, "hello", 5);
        assert_false(r.close);
    }
    /* no reason phrase, body exactly the buffer */
    uint8_t body[2];
    dpm_http_response_t r;
    assert_int_equal(parse("HTTP/1.1 503\r\nContent-Length: 2\r\n\r\nno", 1, body, 2, &r), DPM_OK);
    assert_int_equal(r.status, 503);
    assert_int_equal(parse("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0, NULL, 0, &r), DPM_OK);
    assert_int_equal(r.body_len, 0);
    /* bytes after the response are not consumed */
    const char *two = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nXHTTP/1.1";
    assert_int_equal(dpm_http_response_init(&r, body, 2), DPM_OK);
    size_t used = 0;
    assert_int_equal(dpm_http_response_feed(&r, (const uint8_t *)two, strlen(two), &used), DPM_OK);
    assert_int_equal(used, strlen(two) - 8);
    assert_true(dpm_http_response_done(&r));
}

/* Retry-After: delta-seconds are read (capped at a day); a date or anything else is ignored,
 * and a later interim response does not carry it over. */
static void test_response_retry_after(void **state)
{
    (void)state;
    static const struct {
        const char *value;
        uint32_t want;
    } cases[] = {{"120", 120},
                 {" 5 ", 5},
                 {"0", 0},
                 {"86400", 86400},
                 {"86401", 86400},
                 {"99999999999999999999", 86400},
                 {"Fri, 31 Dec 1999 23:59:59 GMT", 0},
                 {"5x", 0},
                 {"-1", 0},
                 {"", 0}};
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        char text[160];
        snprintf(text, sizeof(text),
                 "HTTP/1.1 503 Busy\r\nRetry-After: %s\r\nContent-Length: 0\r\n\r\n",
                 cases[i].value);
        dpm_http_response_t r;
        assert_int_equal(parse(text, 1, NULL, 0, &r), DPM_OK);
        if (r.retry_after_s != cases[i].want) {
            fail_msg("Retry-After: '%s' read as %u, want %u", cases[i].value,
                     (unsigned)r.retry_after_s, (unsigned)cases[i].want);
        }
    }
    dpm_http_response_t r;
    assert_int_equal(parse("HTTP/1.1 100 Continue\r\nRetry-After: 9\r\n\r\n"
                           "HTTP/1.1 429 Slow\r\nContent-Length: 0\r\n\r\n",
                           0, NULL, 0, &r),
                     DPM_OK);
    assert_int_equal(r.status, 429);
    assert_int_equal(r.retry_after_s, 0);
}

static void test_response_bad_status_lines(void **state)
{
    (void)state;
    const char *bad[] = {
        "HTTP/1.1 20 OK\r\n",
        "HTTP/2 200 OK\r\n",
        "HTTP/1.2 200 OK\r\n",
        "HTTP/1.1 600 X\r\n",
        "HTTP/1.1 099 X\r\n",
        "HTP/1.1 200 OK\r\n",
        "HTTP/1.1  200 OK\r\n",
        "HTTP/1.1 200OK\r\n",
        "http/1.1 200 OK\r\n",
        "HTTP/1.1 2x0 OK\r\n",
        "HTTP/1.1 200 OK\n",
        "HTTP/1.1 200 O\rK\r\n",
        "HTTP/1.1 200 OK\x01\r\n",
        "\r\n",
        "HTTP/1.1 200 OK\r\r\n",
        " HTTP/1.1 200 OK\r\n",
        "HTTP/1.1 101 Switching\r\n\r\n",
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        for (size_t step = 0; step <= 1; step++) {
            dpm_http_response_t r;
            dpm_status_t st = parse(bad[i], step, NULL, 0, &r);
            if (st != DPM_ERR_PROTOCOL) {
                fail_msg("status line %zu (step %zu) gave %d", i, step, st);
            }
            /* and it stays failed */
            size_t used = 0;
            assert_int_equal(dpm_http_response_feed(&r, (const uint8_t *)"x", 1, &used),
                             DPM_ERR_PROTOCOL);
        }
    }
    /* interim 1xx responses are skipped; HTTP/1.0 means close */
    dpm_http_response_t r;
    uint8_t body[4];
    assert_int_equal(parse("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 201 Created\r\n"
                           "Content-Length: 2\r\n\r\nok",
                           1, body, sizeof(body), &r),
                     DPM_OK);
    assert_int_equal(r.status, 201);
    assert_true(r.close);
}

static void test_response_headers_strict_and_bounded(void **state)
{
    (void)state;
    static char text[8192];
    dpm_http_response_t r;
    uint8_t body[64];
    struct {
        const char *head;
        dpm_status_t want;
    } cases[] = {
        {"Transfer-Encoding: chunked\r\n", DPM_ERR_PROTOCOL},
        {"transfer-encoding: identity\r\nContent-Length: 1\r\n", DPM_ERR_PROTOCOL},
        {"Content-Length: 1\r\nContent-Length: 1\r\n", DPM_ERR_PROTOCOL},
        {"Content-Length: +1\r\n", DPM_ERR_PROTOCOL},
        {"Content-Length: 1 1\r\n", DPM_ERR_PROTOCOL},
        {"Content-Length: \r\n", DPM_ERR_PROTOCOL},
        {"Content-Length: 1000000001\r\n", DPM_ERR_PROTOCOL},
        {"Content-Length: 99999999999999999999\r\n", DPM_ERR_PROTOCOL},
        {"Content-Length: 65\r\n", DPM_ERR_PROTOCOL}, /* larger than the body buffer */
        {"Content-Length : 1\r\n", DPM_ERR_PROTOCOL}, /* space before the colon */
        {": 1\r\nContent-Length: 1\r\n", DPM_ERR_PROTOCOL},
        {"NoColon\r\nContent-Length: 1\r\n", DPM_ERR_PROTOCOL},
        {"A: b\r\n folded\r\nContent-Length: 1\r\n", DPM_ERR_PROTOCOL},
        {"A: b\x01\r\nContent-Length: 1\r\n", DPM_ERR_PROTOCOL},
        {"A: b\nContent-Length: 1\r\n", DPM_ERR_PROTOCOL},
        {"Server: x\r\n", DPM_ERR_PROTOCOL}, /* no Content-Length at all */
        {"Content-Length: 1\r\n", DPM_OK},
        {"Content-Length: 1\r\nConnection: keep-alive, CLOSE\r\n", DPM_OK},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        snprintf(text, sizeof(text), "HTTP/1.1 200 OK\r\n%s\r\nZ", cases[i].head);
        for (size_t step = 0; step <= 1; step++) {
            dpm_status_t st = parse(text, step, body, sizeof(body), &r);
            if (st != cases[i].want) {
                fail_msg("case %zu (%s) step %zu gave %d", i, cases[i].head, step, st);
            }
        }
    }
    assert_true(r.close); /* the last case */
    /* 204 and 304 have no body and need no Content-Length */
    assert_int_equal(parse("HTTP/1.1 204 No Content\r\n\r\n", 1, NULL, 0, &r), DPM_OK);
    assert_int_equal(parse("HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n", 1, NULL, 0, &r),
                     DPM_ERR_PROTOCOL);

    /* a header line of exactly DPM_HTTP_MAX_LINE bytes passes, one more does not */
    for (int extra = 0; extra <= 1; extra++) {
        char line[DPM_HTTP_MAX_LINE + 2];
        size_t n = DPM_HTTP_MAX_LINE + (size_t)extra;
        memset(line, 'v', n);
        memcpy(line, "X-Long: ", 8);
        line[n] = '\0';
        snprintf(text, sizeof(text), "HTTP/1.1 200 OK\r\n%s\r\nContent-Length: 0\r\n\r\n", line);
        assert_int_equal(parse(text, 7, NULL, 0, &r), extra ? DPM_ERR_PROTOCOL : DPM_OK);
    }
    /* DPM_HTTP_MAX_HEADERS headers pass, one more does not */
    for (int extra = 0; extra <= 1; extra++) {
        size_t p = (size_t)snprintf(text, sizeof(text), "HTTP/1.1 200 OK\r\n");
        for (int h = 0; h < DPM_HTTP_MAX_HEADERS - 1 + extra; h++) {
            p += (size_t)snprintf(text + p, sizeof(text) - p, "X-%d: y\r\n", h);
        }
        snprintf(text + p, sizeof(text) - p, "Content-Length: 0\r\n\r\n");
        assert_int_equal(parse(text, 0, NULL, 0, &r), extra ? DPM_ERR_PROTOCOL : DPM_OK);
    }
    /* the whole head is bounded too: many interim responses cannot go on for ever */
    size_t p = 0;
    while (p < DPM_HTTP_MAX_HEADER_BYTES) {
        p += (size_t)snprintf(text + p, sizeof(text) - p, "HTTP/1.1 100 Continue\r\n\r\n");
    }
    snprintf(text + p, sizeof(text) - p, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_int_equal(parse(text, 0, NULL, 0, &r), DPM_ERR_PROTOCOL);
    /* bad arguments */
    assert_int_equal(dpm_http_response_init(NULL, body, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_response_init(&r, NULL, 1), DPM_ERR_PARAM);
    size_t used = 0;
    assert_int_equal(dpm_http_response_feed(&r, NULL, 1, &used), DPM_ERR_PARAM);
    assert_false(dpm_http_response_done(NULL));
}

/* ---- over a transport -------------------------------------------------------------------- */

typedef struct {
    const uint8_t *data;
    size_t len, pos;
    size_t chunk; /* bytes per recv */
    int zeros;    /* recv returns 0 this many times between chunks */
    int zero_left;
    int close_at_end; /* -1 once the data is used up (else 0 for ever) */
    int32_t send_ret; /* fixed send result if nonzero; else accept up to chunk */
    size_t sent;
} script_tr_t;

static int32_t st_recv(void *ctx, uint8_t *buf, size_t len)
{
    script_tr_t *s = ctx;
    if (s->zero_left > 0) {
        s->zero_left--;
        return 0;
    }
    if (s->pos >= s->len) {
        return s->close_at_end ? -1 : 0;
    }
    size_t n = s->len - s->pos;
    if (n > s->chunk) {
        n = s->chunk;
    }
    if (n > len) {
        n = len;
    }
    memcpy(buf, s->data + s->pos, n);
    s->pos += n;
    s->zero_left = s->zeros;
    return (int32_t)n;
}

static int32_t st_send(void *ctx, const uint8_t *buf, size_t len)
{
    script_tr_t *s = ctx;
    (void)buf;
    if (s->send_ret != 0) {
        return s->send_ret;
    }
    size_t n = len < s->chunk ? len : s->chunk;
    s->sent += n;
    return (int32_t)n;
}

static void test_read_response_split_and_errors(void **state)
{
    (void)state;
    const char *text = "HTTP/1.1 400 Bad Request\r\nContent-Length: 4\r\n\r\nbody";
    fake_clock_t fclk = {0, 1, 0};
    dpm_clock_t clk = fake_clock_port(&fclk);
    /* one byte per recv, with "try later" zeros in between */
    script_tr_t s = {(const uint8_t *)text, strlen(text), 0, 1, 2, 0, 1, 0, 0};
    dpm_transport_t t = {st_send, st_recv, &s};
    dpm_http_response_t r;
    uint8_t body[8];
    assert_int_equal(dpm_http_response_init(&r, body, sizeof(body)), DPM_OK);
    assert_int_equal(dpm_http_read_response(&t, &clk, 100000, &r), DPM_OK);
    assert_int_equal(r.status, 400);
    assert_memory_equal(body, "body", 4);
    assert_int_equal(s.pos, s.len); /* read exactly the response */

    /* the peer closes in the middle of the body */
    s = (script_tr_t){(const uint8_t *)text, strlen(text) - 2, 0, 5, 0, 0, 1, 0, 0};
    assert_int_equal(dpm_http_response_init(&r, body, sizeof(body)), DPM_OK);
    assert_int_equal(dpm_http_read_response(&t, &clk, fclk.now + 100000, &r), DPM_ERR_TRANSPORT);
    /* bytes beyond the response in the same read */
    const char *more = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nXY";
    s = (script_tr_t){(const uint8_t *)more, strlen(more), 0, 64, 0, 0, 1, 0, 0};
    assert_int_equal(dpm_http_response_init(&r, body, sizeof(body)), DPM_OK);
    assert_int_equal(dpm_http_read_response(&t, &clk, fclk.now + 100000, &r), DPM_ERR_PROTOCOL);
    /* chunked, through the transport */
    const char *chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
    s = (script_tr_t){(const uint8_t *)chunked, strlen(chunked), 0, 3, 0, 0, 1, 0, 0};
    assert_int_equal(dpm_http_response_init(&r, body, sizeof(body)), DPM_OK);
    assert_int_equal(dpm_http_read_response(&t, &clk, fclk.now + 100000, &r), DPM_ERR_PROTOCOL);
}

static void test_deadline_slowloris(void **state)
{
    (void)state;
    const char *text = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nbody";
    dpm_http_response_t r;
    uint8_t body[8];
    /* a peer that never sends: the deadline ends it, on the port clock */
    fake_clock_t fclk = {5000, 10, 0};
    dpm_clock_t clk = fake_clock_port(&fclk);
    script_tr_t s = {(const uint8_t *)text, 0, 0, 1, 0, 0, 0, 0, 0};
    dpm_transport_t t = {st_send, st_recv, &s};
    assert_int_equal(dpm_http_response_init(&r, body, sizeof(body)), DPM_OK);
    assert_int_equal(dpm_http_read_response(&t, &clk, 6000, &r), DPM_ERR_TIMEOUT);
    assert_true(fclk.now >= 6000 && fclk.now <= 6020);
    /* a peer that trickles one byte per 10 ms: still held to the deadline */
    fclk.now = 0;
    s = (script_tr_t){(const uint8_t *)text, strlen(text), 0, 1, 0, 0, 0, 0, 0};
    assert_int_equal(dpm_http_response_init(&r, body, sizeof(body)), DPM_OK);
    assert_int_equal(dpm_http_read_response(&t, &clk, 200, &r), DPM_ERR_TIMEOUT);
    assert_true(s.pos < s.len);
    /* the same trickle with enough time completes */
    fclk.now = 0;
    s.pos = 0;
    assert_int_equal(dpm_http_response_init(&r, body, sizeof(body)), DPM_OK);
    assert_int_equal(dpm_http_read_response(&t, &clk, 10000, &r), DPM_OK);
    /* sends: partial writes complete, 0 forever times out, errors and lies are errors */
    uint8_t req[100];
    memset(req, 'q', sizeof(req));
    fclk.now = 0;
    s = (script_tr_t){NULL, 0, 0, 7, 0, 0, 0, 0, 0};
    assert_int_equal(dpm_http_send_all(&t, &clk, 1000, req, sizeof(req)), DPM_OK);
    assert_int_equal(s.sent, sizeof(req));
    s.chunk = 0; /* send accepts nothing, for ever */
    assert_int_equal(dpm_http_send_all(&t, &clk, 1000, req, sizeof(req)), DPM_ERR_TIMEOUT);
    s.send_ret = -1;
    assert_int_equal(dpm_http_send_all(&t, &clk, 100000, req, sizeof(req)), DPM_ERR_TRANSPORT);
    s.send_ret = 101; /* claims more than asked */
    assert_int_equal(dpm_http_send_all(&t, &clk, 100000, req, sizeof(req)), DPM_ERR_TRANSPORT);
    assert_int_equal(dpm_http_send_all(NULL, &clk, 1, req, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_read_response(&t, NULL, 1, &r), DPM_ERR_PARAM);
}

/* ---- backoff ----------------------------------------------------------------------------- */

static const dpm_upload_config_t cfg_base = {
    "collector.example", "/v1/reports", 8, 4096, 1000, 100, 6400, NULL};

static void test_backoff_growth_and_cap(void **state)
{
    (void)state;
    uint32_t prev = 0, d = 0;
    const uint32_t want[] = {100, 200, 400, 800, 1600, 3200, 6400, 6400, 6400};
    for (uint32_t f = 1; f <= 200; f++) {
        assert_int_equal(dpm_upload_backoff_ms(&cfg_base, f, NULL, &d), DPM_OK);
        assert_true(d >= prev); /* monotone */
        assert_true(d <= cfg_base.backoff_cap_ms);
        if (f <= ARRAY_LEN(want)) {
            assert_int_equal(d, want[f - 1]);
        } else {
            assert_int_equal(d, cfg_base.backoff_cap_ms);
        }
        prev = d;
    }
    /* extreme configurations do not overflow */
    dpm_upload_config_t c = cfg_base;
    c.backoff_base_ms = 1;
    c.backoff_cap_ms = UINT32_MAX;
    assert_int_equal(dpm_upload_backoff_ms(&c, 32, NULL, &d), DPM_OK);
    assert_int_equal(d, 1u << 31);
    assert_int_equal(dpm_upload_backoff_ms(&c, UINT32_MAX, NULL, &d), DPM_OK);
    assert_int_equal(d, UINT32_MAX);
    test_rng_t tr;
    test_rng_seed(&tr, 9);
    dpm_rng_t rng = test_rng_port(&tr);
    dpm_rand_t rand;
    assert_int_equal(dpm_rand_init(&rand, &rng), DPM_OK);
    assert_int_equal(dpm_upload_backoff_ms(&c, UINT32_MAX, &rand, &d), DPM_OK);
    assert_true(d >= UINT32_MAX / 2); /* saturates instead of wrapping */
    /* bad arguments */
    assert_int_equal(dpm_upload_backoff_ms(&cfg_base, 0, NULL, &d), DPM_ERR_PARAM);
    assert_int_equal(dpm_upload_backoff_ms(NULL, 1, NULL, &d), DPM_ERR_PARAM);
    assert_int_equal(dpm_upload_backoff_ms(&cfg_base, 1, NULL, NULL), DPM_ERR_PARAM);
    c = cfg_base;
    c.backoff_cap_ms = 50; /* below base */
    assert_int_equal(dpm_upload_backoff_ms(&c, 1, NULL, &d), DPM_ERR_PARAM);
}

static void test_backoff_jitter_bounds(void **state)
{
    (void)state;
    test_rng_t tr;
    test_rng_seed(&tr, 11);
    dpm_rng_t rng = test_rng_port(&tr);
    dpm_rand_t rand;
    assert_int_equal(dpm_rand_init(&rand, &rng), DPM_OK);
    for (uint32_t f = 1; f <= 9; f++) {
        uint32_t nominal = 0;
        assert_int_equal(dpm_upload_backoff_ms(&cfg_base, f, NULL, &nominal), DPM_OK);
        uint32_t lo = UINT32_MAX, hi = 0;
        uint64_t sum = 0;
        const int draws = 4000;
        for (int i = 0; i < draws; i++) {
            uint32_t d = 0;
            assert_int_equal(dpm_upload_backoff_ms(&cfg_base, f, &rand, &d), DPM_OK);
            assert_true(d >= nominal / 2 && d <= nominal / 2 + nominal); /* ±50% */
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
            sum += d;
        }
        /* the whole range is used (each end's 5% reached: P(miss) < 1e-80) and it is
         * centred on the nominal delay (mean within 3%: about 9 standard errors) */
        assert_true(lo < nominal / 2 + nominal / 20);
        assert_true(hi > nominal + nominal / 2 - nominal / 20);
        uint64_t mean = sum / (uint64_t)draws;
        assert_true(mean > nominal - nominal * 3 / 100 && mean < nominal + nominal * 3 / 100);
    }
    /* a failing RNG falls back to the nominal delay */
    failing_rng_t fr;
    dpm_rng_t bad;
    assert_int_equal(failing_rand_init(&rand, &fr, &bad, 1, 0), DPM_OK);
    uint32_t d = 0;
    assert_int_equal(dpm_upload_backoff_ms(&cfg_base, 3, &rand, &d), DPM_OK);
    assert_int_equal(d, 400);
}

/* ---- flush against the fake collector ---------------------------------------------------- */

typedef struct {
    uint8_t mem[4096u + DPM_OUTBOX_MIN_REGION]; /* room for the largest report and small ones */
    fake_storage_t fs;
    dpm_storage_t st;
    dpm_outbox_t ob;
    dpm_upload_t up;
    test_rng_t tr;
    dpm_rng_t rng;
    dpm_rand_t rand;
    fake_clock_t fclk;
    dpm_clock_t clk;
    fake_collector_t fc;
    dpm_transport_t t;
    uint8_t work[DPM_UPLOAD_MIN_WORK + 67u]; /* 1024 bytes with roc_hist the largest report */
    uint8_t ids[32][DPM_REPORT_ID_BYTES];
    size_t n;
} frig_t;

static void frig_init(frig_t *f, const dpm_upload_config_t *cfg)
{
    memset(f, 0, sizeof(*f));
    fake_storage_init(&f->fs, f->mem, sizeof(f->mem), 1);
    f->st = fake_storage_port(&f->fs);
    assert_int_equal(dpm_outbox_open(&f->ob, &f->st, 0, sizeof(f->mem)), DPM_OK);
    assert_int_equal(dpm_upload_init(&f->up, cfg), DPM_OK);
    test_rng_seed(&f->tr, 77);
    f->rng = test_rng_port(&f->tr);
    assert_int_equal(dpm_rand_init(&f->rand, &f->rng), DPM_OK);
    f->fclk.now = 10000;
    f->fclk.step = 1;
    f->clk = fake_clock_port(&f->fclk);
    fake_collector_init(&f->fc, cfg->host, cfg->path);
    f->t = fake_collector_port(&f->fc);
}

static void frig_put_in(frig_t *f, uint32_t campaign, uint32_t period)
{
    dpm_report_t rep;
    memset(&rep, 0, sizeof(rep));
    for (int i = 0; i < DPM_REPORT_ID_BYTES; i++) {
        rep.report_id[i] = (uint8_t)(test_rng_next(&f->tr) >> 8);
    }
    rep.campaign_id = campaign;
    rep.period = period;
    rep.mechanism = DPM_MECH_ID_TUPLE_MR;
    rep.eps = EPS1;
    rep.body.tuple.nmetrics = 1;
    rep.body.tuple.value[0] = 1;
    uint8_t buf[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_outbox_put(&f->ob, buf, len), DPM_OK);
    memcpy(f->ids[f->n++], rep.report_id, DPM_REPORT_ID_BYTES);
}

static void frig_put(frig_t *f, uint32_t campaign)
{
    frig_put_in(f, campaign, 0);
}

static dpm_status_t frig_flush(frig_t *f, dpm_upload_result_t *res)
{
    dpm_status_t st =
        dpm_upload_flush(&f->up, &f->ob, &f->t, &f->clk, &f->rand, f->work, sizeof(f->work), res);
    if (f->fc.fatal) {
        fail_msg("collector: %s", f->fc.why);
    }
    return st;
}

/* The largest report this build can make (test_worst_report: every value at its widest on the
 * wire) goes out through the smallest work buffer dpm_upload_flush accepts: one big report never
 * blocks the outbox. */
static void test_flush_largest_report_with_min_work(void **state)
{
    (void)state;
    static frig_t f;
    frig_init(&f, &cfg_base);
    dpm_report_t rep;
    assert_int_equal(test_worst_report(&rep), DPM_REPORT_MAX_BYTES);
    uint8_t buf[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(len, DPM_REPORT_MAX_BYTES);
    assert_int_equal(dpm_outbox_put(&f.ob, buf, len), DPM_OK);
    memcpy(f.ids[f.n++], rep.report_id, DPM_REPORT_ID_BYTES);
    static uint8_t work[DPM_UPLOAD_MIN_WORK];
    dpm_upload_result_t res;
    assert_int_equal(
        dpm_upload_flush(&f.up, &f.ob, &f.t, &f.clk, &f.rand, work, sizeof(work), &res), DPM_OK);
    assert_int_equal(res.delivered, 1);
    assert_int_equal(res.pending, 0);
}

static void test_flush_success_and_batches(void **state)
{
    (void)state;
    static frig_t f;
    dpm_upload_config_t cfg = cfg_base;
    cfg.max_reports = 3;
    frig_init(&f, &cfg);
    for (int i = 0; i < 7; i++) {
        frig_put(&f, 1);
    }
    f.fc.recv_max = 1; /* the response arrives one byte per recv */
    f.fc.send_max = 5; /* and the collector takes 5 bytes per send */
    dpm_upload_result_t res;
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.requests, 3); /* 3 + 3 + 1 */
    assert_int_equal(res.delivered, 7);
    assert_int_equal(res.pending, 0);
    assert_int_equal(res.http_status, 200);
    assert_false(res.reconnect);
    assert_int_equal(f.fc.nstored, 7);
    for (size_t i = 0; i < f.n; i++) {
        assert_non_null(fake_collector_find(&f.fc, f.ids[i]));
    }
    assert_int_equal(dpm_upload_next_attempt_ms(&f.up), 0);
    /* nothing pending: nothing sent */
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.requests, 0);
    /* a byte budget of one report per request */
    cfg.max_reports = 8;
    cfg.max_bytes = 10;
    frig_init(&f, &cfg);
    for (int i = 0; i < 3; i++) {
        frig_put(&f, 1);
    }
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.requests, 3);
    assert_int_equal(f.fc.nstored, 3);
    /* Connection: close after a success: stop, tell the app to reconnect */
    frig_init(&f, &cfg_base);
    dpm_upload_config_t one = cfg_base;
    one.max_reports = 1;
    assert_int_equal(dpm_upload_init(&f.up, &one), DPM_OK);
    frig_put(&f, 1);
    frig_put(&f, 1);
    static const fc_action_t close_first[] = {FC_CLOSE_OK};
    f.fc.script = close_first;
    f.fc.script_len = 1;
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.requests, 1);
    assert_true(res.reconnect);
    assert_int_equal(res.pending, 1);
    assert_int_equal(dpm_upload_next_attempt_ms(&f.up), 0);
    fake_collector_reconnect(&f.fc);
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.pending, 0);
}

static void test_flush_failure_backoff_and_same_bytes(void **state)
{
    (void)state;
    static frig_t f;
    frig_init(&f, &cfg_base);
    for (int i = 0; i < 3; i++) {
        frig_put(&f, 1);
    }
    static const fc_action_t fails[] = {FC_503,     FC_DROP_AFTER_STORE, FC_TIMEOUT,
                                        FC_CHUNKED, FC_BAD_400,          FC_DROP_BEFORE};
    const dpm_status_t want[] = {DPM_ERR_TRANSPORT, DPM_ERR_TRANSPORT, DPM_ERR_TIMEOUT,
                                 DPM_ERR_PROTOCOL,  DPM_ERR_PROTOCOL,  DPM_ERR_TRANSPORT};
    f.fc.script = fails;
    f.fc.script_len = ARRAY_LEN(fails);
    uint64_t prev_delay = 0;
    for (size_t i = 0; i < ARRAY_LEN(fails); i++) {
        dpm_upload_result_t res;
        uint64_t before = f.fclk.now;
        assert_int_equal(frig_flush(&f, &res), want[i]);
        assert_int_equal(res.requests, 1);
        assert_int_equal(res.delivered + res.rejected, 0);
        assert_int_equal(res.pending, 3); /* nothing removed */
        assert_int_equal(dpm_outbox_pending(&f.ob), 3);
        assert_int_equal(f.up.failures, i + 1);
        /* next attempt: nominal 100 * 2^i (cap 6400) ±50%, from the time of the failure */
        uint64_t nominal = 100u << i;
        uint64_t next = dpm_upload_next_attempt_ms(&f.up);
        uint64_t delay = next - f.fclk.now + 1;
        assert_true(next > before);
        assert_true(delay >= nominal / 2 && delay <= nominal + nominal / 2 + 1);
        (void)prev_delay;
        prev_delay = delay;
        /* too early: deferred, nothing sent */
        uint64_t reqs = f.fc.requests;
        assert_int_equal(frig_flush(&f, &res), DPM_OK);
        assert_true(res.deferred);
        assert_int_equal(f.fc.requests, reqs);
        if (res.reconnect || fails[i] != FC_503) {
            fake_collector_reconnect(&f.fc); /* after a failure the app reconnects */
        }
        f.fclk.now = next;
    }
    /* the collector already has the batch from the dropped exchange: the retry sends the
     * very same bytes (the fake checks it), duplicates are acknowledged, and success resets
     * the schedule */
    assert_int_equal(f.fc.nstored, 3);
    dpm_upload_result_t res;
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.delivered, 3);
    assert_int_equal(f.fc.nstored, 3);
    assert_true(f.fc.duplicates >= 3);
    assert_int_equal(f.up.failures, 0);
    assert_int_equal(dpm_upload_next_attempt_ms(&f.up), 0);
}

static void test_flush_400_removes_only_rejected(void **state)
{
    (void)state;
    static frig_t f;
    frig_init(&f, &cfg_base);
    for (int i = 0; i < 6; i++) {
        frig_put(&f, i % 2 ? 9 : 1); /* campaign 9 is never acceptable */
    }
    f.fc.reject_campaign = 9;
    static const fc_action_t first_only[] = {FC_OK};
    f.fc.script = first_only;
    f.fc.script_len = 1;
    f.fc.after = FC_503;
    dpm_upload_result_t res;
    /* 1st request: 400 naming the three campaign-9 reports; they go, and come back to the app
     * with the collector's reason; the others stay. The flush stops there (res.more): a next
     * batch of up to 8 could bring more rejects than the 5 places left in res.rejects */
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.requests, 1);
    assert_int_equal(res.rejected, 3);
    assert_int_equal(res.delivered, 0);
    assert_int_equal(res.pending, 3);
    assert_true(res.more);
    for (int i = 0; i < 3; i++) {
        assert_memory_equal(res.rejects[i].report_id, f.ids[2 * i + 1], DPM_REPORT_ID_BYTES);
        assert_int_equal(res.rejects[i].campaign_id, 9);
        assert_string_equal(res.rejects[i].reason, "campaign 9 is closed");
    }
    /* called again, as res.more asks: the 2nd request meets a 503 */
    assert_int_equal(frig_flush(&f, &res), DPM_ERR_TRANSPORT);
    assert_int_equal(res.requests, 1);
    assert_int_equal(res.rejected, 0);
    assert_int_equal(res.pending, 3);
    uint32_t cursor = 0;
    for (int i = 0; i < 3; i++) {
        dpm_outbox_entry_t e;
        int found = 0;
        assert_int_equal(dpm_outbox_next(&f.ob, &cursor, &e, &found), DPM_OK);
        assert_true(found);
        assert_memory_equal(e.report_id, f.ids[2 * i], DPM_REPORT_ID_BYTES);
    }
    assert_int_equal(f.fc.nstored, 3); /* the collector kept the good ones already */
    assert_int_equal(f.fc.nrejected, 3);
    f.fc.after = FC_OK;
    f.fclk.now = dpm_upload_next_attempt_ms(&f.up);
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.delivered, 3);
    assert_int_equal(res.pending, 0);
    assert_int_equal(f.fc.nstored, 3);
    /* the collector answers 404 for reports of an unknown campaign, naming them: the same */
    frig_init(&f, &cfg_base);
    frig_put(&f, 1);
    frig_put(&f, 9);
    f.fc.reject_campaign = 9;
    f.fc.reject_status = 404;
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.requests, 1);
    assert_int_equal(res.rejected, 1);
    assert_true(res.more);
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.requests, 1);
    assert_int_equal(res.delivered, 1);
    assert_int_equal(res.pending, 0);
    assert_false(res.more);
    /* ... but never for 408 and 429, which mean "later" even with a BatchResponse */
    frig_init(&f, &cfg_base);
    frig_put(&f, 9);
    f.fc.reject_campaign = 9;
    f.fc.reject_status = 429;
    assert_int_equal(frig_flush(&f, &res), DPM_ERR_TRANSPORT);
    assert_int_equal(res.pending, 1);
    assert_int_equal(res.http_status, 429);
    /* a 400 naming none of ours is a failure: nothing removed */
    frig_init(&f, &cfg_base);
    frig_put(&f, 1);
    f.fc.after = FC_BAD_400;
    assert_int_equal(frig_flush(&f, &res), DPM_ERR_PROTOCOL);
    assert_int_equal(res.pending, 1);
    assert_int_equal(res.http_status, 400);
}

/* The answer's Rejects are bounded as nanopb's generated BatchResponse bounded them before the
 * codec (dpm/expert/batch.h) replaced it: at most DPM_UPLOAD_MAX_BATCH rejects, ids of at most 16
 * bytes, reasons of at most 47. Beyond, the answer is DPM_ERR_PROTOCOL and nothing is removed;
 * at the bounds, the named report goes (the positive controls). */
static void test_flush_answer_bounds(void **state)
{
    (void)state;
    static frig_t f;
    static const char long_reason[] = "a reason of forty-eight bytes, one over the most";
    static const char reason47[] = "a reason of forty-seven bytes, the most allowed";
    static const struct {
        size_t nrejects;    /* rejects in the answer; the last one names our report */
        size_t id_len;      /* of the first reject */
        const char *reason; /* of the last reject */
        dpm_status_t want;
    } cases[] = {
        {DPM_UPLOAD_MAX_BATCH, 16, reason47, DPM_OK},
        {DPM_UPLOAD_MAX_BATCH + 1, 16, reason47, DPM_ERR_PROTOCOL},
        {1, 16, long_reason, DPM_ERR_PROTOCOL},
        {2, 17, reason47, DPM_ERR_PROTOCOL},
        {2, 0, reason47, DPM_OK},
    };
    assert_int_equal(strlen(long_reason), 48);
    assert_int_equal(strlen(reason47), 47);
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
        frig_init(&f, &cfg_base);
        frig_put(&f, 1);
        static uint8_t body[1024];
        size_t len = 0;
        for (size_t i = 0; i < cases[c].nrejects; i++) {
            uint8_t other[17];
            memset(other, (int)(0xA0 + i), sizeof(other));
            int ours = i + 1 == cases[c].nrejects;
            const char *reason = ours ? cases[c].reason : "other";
            assert_int_equal(dpm_batch_response_put_reject(
                                 body, sizeof(body), &len, ours ? f.ids[0] : other,
                                 i == 0 && !ours ? cases[c].id_len : DPM_REPORT_ID_BYTES, reason,
                                 strlen(reason)),
                             DPM_OK);
        }
        f.fc.after = FC_RAW;
        f.fc.status = 400;
        f.fc.raw = body;
        f.fc.raw_len = len;
        dpm_upload_result_t res;
        assert_int_equal(frig_flush(&f, &res), cases[c].want);
        assert_int_equal(res.http_status, 400);
        if (cases[c].want == DPM_OK) {
            assert_int_equal(res.rejected, 1);
            assert_int_equal(res.pending, 0);
            assert_string_equal(res.rejects[0].reason, reason47);
        } else {
            assert_int_equal(res.rejected, 0);
            assert_int_equal(res.pending, 1);
        }
    }
}

/* A 2xx removes reports only when its BatchResponse (decoded with dpm/expert/batch.h) accounts for every
 * one of them: an empty body (a misconfigured proxy), a body that is not a BatchResponse, a
 * count one short, or a 2xx with rejects removes nothing and is DPM_ERR_PROTOCOL. */
static void test_flush_2xx_must_account_for_the_batch(void **state)
{
    (void)state;
    static frig_t f;
    static const fc_action_t bad[] = {FC_EMPTY_200, FC_GARBAGE_200, FC_SHORT_200, FC_OK};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        frig_init(&f, &cfg_base);
        for (int k = 0; k < 3; k++) {
            frig_put(&f, k == 2 && bad[i] == FC_OK ? 9 : 1);
        }
        f.fc.after = bad[i];
        if (bad[i] == FC_OK) {
            f.fc.reject_campaign = 9; /* a 200 that lists a reject */
            f.fc.reject_status = 200;
        }
        dpm_upload_result_t res;
        assert_int_equal(frig_flush(&f, &res), DPM_ERR_PROTOCOL);
        assert_int_equal(res.requests, 1);
        assert_int_equal(res.http_status, 200);
        assert_int_equal(res.delivered + res.rejected, 0);
        assert_int_equal(res.pending, 3);
        assert_true(dpm_upload_next_attempt_ms(&f.up) > 0); /* a failure: back off */
        /* a collector that answers properly gets them all, once */
        f.fc.after = FC_OK;
        f.fc.reject_campaign = 0;
        f.fclk.now = dpm_upload_next_attempt_ms(&f.up);
        assert_int_equal(frig_flush(&f, &res), DPM_OK);
        assert_int_equal(res.delivered, 3);
        assert_int_equal(res.pending, 0);
        assert_int_equal(f.fc.nstored, 3);
    }
}

/* ---- what each answer means for the app (issue 28) ---------------------------------------- */

/* 1 if the advice tells the app that nothing queued was lost. */
static int says_kept(const char *advice)
{
    return strstr(advice, "stay queued") != NULL || strstr(advice, "nothing was lost") != NULL;
}

/* Every status a collector (or whatever answers at its address) may send to a POST, and what
 * dpm_upload_flush makes of it: the status the app gets, advice that names the cause and says
 * what to do, nothing removed, a backoff that is at least the Retry-After asked for (up to the
 * cap), and every report delivered exactly once when the collector heals. The old uploader
 * answered DPM_ERR_PROTOCOL ("protocol violation") to 401 and 403. */
static void test_flush_status_map(void **state)
{
    (void)state;
    static frig_t f;
    static const struct {
        int status;
        int close;
        const char *extra;
        dpm_status_t want;
        const char *advice; /* a phrase the advice must hold */
        uint64_t min_delay; /* ms the next attempt must wait at least */
    } cases[] = {
        {401, 1, "WWW-Authenticate: Bearer\r\n", DPM_ERR_AUTH, "HTTP 401", 50},
        {403, 0, NULL, DPM_ERR_AUTH, "HTTP 403", 50},
        {408, 1, NULL, DPM_ERR_TRANSPORT, "cannot take reports now", 50},
        {429, 1, "Retry-After: 1\r\n", DPM_ERR_TRANSPORT, "rate-limiting", 1000},
        {429, 0, "Retry-After: 30\r\n", DPM_ERR_TRANSPORT, "rate-limiting", 30000},
        {500, 0, NULL, DPM_ERR_TRANSPORT, "cannot take reports now", 50},
        {503, 1, "Retry-After: 1\r\n", DPM_ERR_TRANSPORT, "cannot take reports now", 1000},
        {503, 0, "Retry-After: 86400\r\n", DPM_ERR_TRANSPORT, "retry after", 60000},
        {503, 0, "Retry-After: Wed, 21 Oct 2015 07:28:00 GMT\r\n", DPM_ERR_TRANSPORT, "retry after",
         50},
        {505, 0, NULL, DPM_ERR_TRANSPORT, "retry after", 50},
        {404, 0, NULL, DPM_ERR_PROTOCOL, "check the URL", 50},
        {411, 1, NULL, DPM_ERR_PROTOCOL, "check the URL", 50},
        {414, 1, NULL, DPM_ERR_PROTOCOL, "check the URL", 50},
        {415, 0, NULL, DPM_ERR_PROTOCOL, "check the URL", 50},
        {431, 1, NULL, DPM_ERR_PROTOCOL, "check the URL", 50},
        {301, 0, "Location: /elsewhere\r\n", DPM_ERR_PROTOCOL, "check the URL", 50},
        {200, 0, NULL, DPM_ERR_PROTOCOL, "check the URL", 50}, /* a text 200: a proxy */
    };
    dpm_upload_config_t cfg = cfg_base;
    cfg.backoff_cap_ms = 60000; /* Retry-After counts up to the cap */
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        frig_init(&f, &cfg);
        for (int k = 0; k < 3; k++) {
            frig_put(&f, 1);
        }
        static const fc_action_t once[] = {FC_STATUS};
        f.fc.script = once;
        f.fc.script_len = 1;
        f.fc.status = cases[i].status;
        f.fc.status_close = cases[i].close;
        f.fc.extra = cases[i].extra;
        dpm_upload_result_t res;
        dpm_status_t st = frig_flush(&f, &res);
        const char *advice = dpm_upload_advice(st, &res);
        if (st != cases[i].want || strstr(advice, cases[i].advice) == NULL || !says_kept(advice)) {
            fail_msg("HTTP %d: status %d (%s), want %d; advice: %s", cases[i].status, st,
                     dpm_strerror(st), cases[i].want, advice);
        }
        assert_int_equal(res.http_status, cases[i].status);
        assert_int_equal(res.requests, 1);
        assert_int_equal(res.delivered + res.rejected, 0);
        assert_int_equal(res.pending, 3); /* nothing removed */
        assert_int_equal(f.fc.nstored, 0);
        assert_int_equal(res.reconnect, cases[i].close);
        uint64_t next = dpm_upload_next_attempt_ms(&f.up);
        if (next < f.fclk.now + cases[i].min_delay - 10 || next > f.fclk.now + 60000) {
            fail_msg("HTTP %d: next attempt in %llu ms, want >= %llu", cases[i].status,
                     (unsigned long long)(next - f.fclk.now),
                     (unsigned long long)cases[i].min_delay);
        }
        /* the collector heals: each report arrives once */
        fake_collector_reconnect(&f.fc);
        f.fclk.now = next;
        assert_int_equal(frig_flush(&f, &res), DPM_OK);
        assert_int_equal(res.delivered, 3);
        assert_int_equal(f.fc.nstored, 3);
        assert_int_equal(f.fc.duplicates, 0);
    }
    /* advice for what a flush cannot be blamed on */
    assert_true(strstr(dpm_upload_advice(DPM_ERR_TIMEOUT, NULL), "nothing was lost") != NULL);
    assert_string_equal(dpm_upload_advice(DPM_ERR_BUDGET, NULL), dpm_strerror(DPM_ERR_BUDGET));
    assert_string_equal(dpm_upload_advice(DPM_OK, NULL), "ok");
    assert_string_not_equal(dpm_strerror(DPM_ERR_AUTH), "unknown status");
}

/* A batch larger than the collector's body limit (dpm-collector --max-body answers 413 and
 * closes before reading it) is sent again in halves until it passes: nothing lost, nothing
 * stored twice, no backoff. The old uploader took the 413 for a protocol violation and retried
 * the same batch for ever. One report alone above the limit is DPM_ERR_PROTOCOL and stays. */
static void test_flush_413_halves_the_batches(void **state)
{
    (void)state;
    static frig_t f;
    frig_init(&f, &cfg_base);
    for (int i = 0; i < 8; i++) {
        frig_put(&f, 1);
    }
    f.fc.max_body = 100; /* two or three of these reports */
    dpm_upload_result_t res;
    uint32_t delivered = 0, rounds = 0;
    do {
        assert_int_equal(frig_flush(&f, &res), DPM_OK);
        delivered += res.delivered;
        assert_int_equal(res.rejected, 0);
        if (res.reconnect) {
            fake_collector_reconnect(&f.fc);
        }
        assert_true(++rounds <= 12);
    } while (res.more);
    assert_int_equal(delivered, 8);
    assert_int_equal(res.pending, 0);
    assert_int_equal(f.fc.nstored, 8);
    assert_int_equal(f.fc.duplicates, 0);
    assert_true(f.fc.too_large >= 2);                       /* 8 reports, then 4, were too many */
    assert_true(f.up.cfg.max_bytes <= 100);                 /* it remembers the collector's limit */
    assert_int_equal(dpm_upload_next_attempt_ms(&f.up), 0); /* never a failure */
    uint64_t too_large = f.fc.too_large;
    for (int i = 0; i < 4; i++) {
        frig_put(&f, 1);
    }
    fake_collector_reconnect(&f.fc);
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.delivered, 4);
    assert_int_equal(f.fc.too_large, too_large); /* the next flush starts small enough */
    /* one report alone above the limit: kept, and the advice names the collector's limit */
    frig_init(&f, &cfg_base);
    frig_put(&f, 1);
    f.fc.max_body = 10;
    dpm_status_t st = frig_flush(&f, &res);
    assert_int_equal(st, DPM_ERR_PROTOCOL);
    assert_int_equal(res.http_status, 413);
    assert_int_equal(res.pending, 1);
    assert_true(strstr(dpm_upload_advice(st, &res), "--max-body") != NULL);
    assert_true(dpm_upload_next_attempt_ms(&f.up) > 0);
}

/* 1 if needle occurs in hay[0 .. n). */
static int contains(const uint8_t *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; k <= n && i <= n - k; i++) {
        if (memcmp(hay + i, needle, k) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The bearer token: sent with every POST as "Authorization: Bearer <token>", read from the
 * app's memory at each request (renewed in place), wiped from the work buffer once sent;
 * invalid tokens (header injection, spaces, empty, too long) are refused before anything is
 * sent. A collector that wants a token the device does not have answers 401: DPM_ERR_AUTH,
 * reports kept (the old uploader could send no token at all). */
static void test_flush_bearer_token(void **state)
{
    (void)state;
    static frig_t f;
    static char token[DPM_HTTP_MAX_TOKEN + 2];
    strcpy(token, "dGVzdC10b2tlbi0x.a_b~c+d/e==");
    dpm_upload_config_t cfg = cfg_base;
    cfg.token = token;
    frig_init(&f, &cfg);
    f.fc.token = "dGVzdC10b2tlbi0x.a_b~c+d/e==";
    frig_put(&f, 1);
    frig_put(&f, 1);
    dpm_upload_result_t res;
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.delivered, 2);
    assert_string_equal(f.fc.authorization, "Bearer dGVzdC10b2tlbi0x.a_b~c+d/e==");
    assert_false(contains(f.work, sizeof(f.work), token)); /* wiped once sent */
    assert_false(contains(f.work, sizeof(f.work), "Authorization"));
    /* renewed in place by the app: the next request carries the new one */
    strcpy(token, "second-token");
    f.fc.token = "second-token";
    frig_put(&f, 1);
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.delivered, 1);
    /* the collector no longer knows it: 401, nothing removed, the advice says what to do */
    f.fc.token = "third-token";
    frig_put(&f, 1);
    dpm_status_t st = frig_flush(&f, &res);
    assert_int_equal(st, DPM_ERR_AUTH);
    assert_int_equal(res.http_status, 401);
    assert_int_equal(res.pending, 1);
    assert_true(res.reconnect);
    assert_int_equal(f.fc.unauthorized, 1);
    assert_true(strstr(dpm_upload_advice(st, &res), "credential") != NULL);
    assert_true(dpm_upload_next_attempt_ms(&f.up) > 0);
    /* a token made invalid in place: refused, nothing sent (and nothing of it in work) */
    fake_collector_reconnect(&f.fc);
    f.fclk.now = dpm_upload_next_attempt_ms(&f.up);
    strcpy(token, "third-token\r\nX-Injected: 1");
    uint64_t requests = f.fc.requests;
    assert_int_equal(frig_flush(&f, &res), DPM_ERR_PARAM);
    assert_int_equal(f.fc.requests, requests);
    assert_false(contains(f.work, sizeof(f.work), "third-token"));
    strcpy(token, "third-token");
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.delivered, 1);
    /* no token for a collector that wants one: 401, DPM_ERR_AUTH */
    frig_init(&f, &cfg_base);
    f.fc.token = "needed";
    frig_put(&f, 1);
    assert_int_equal(frig_flush(&f, &res), DPM_ERR_AUTH);
    assert_string_equal(f.fc.authorization, "");
    assert_int_equal(res.pending, 1);
    /* what a token may be (RFC 6750 b64token, 1 .. DPM_HTTP_MAX_TOKEN characters) */
    static char longest[DPM_HTTP_MAX_TOKEN + 2];
    memset(longest, 'k', DPM_HTTP_MAX_TOKEN);
    longest[DPM_HTTP_MAX_TOKEN] = '\0';
    const char *good[] = {"a", "a=", "a==", "AZaz09-._~+/", longest};
    dpm_upload_t up;
    for (size_t i = 0; i < ARRAY_LEN(good); i++) {
        cfg.token = good[i];
        assert_int_equal(dpm_upload_init(&up, &cfg), DPM_OK);
    }
    static char too_long[DPM_HTTP_MAX_TOKEN + 2];
    memset(too_long, 'k', DPM_HTTP_MAX_TOKEN + 1);
    too_long[DPM_HTTP_MAX_TOKEN + 1] = '\0';
    const char *bad[] = {"",    "=",   "=abc", "ab=c",        "a b", "a\tb",  "a\r\nX: y",
                         "a\n", "a,b", "a\"b", "caf\xc3\xa9", "a;b", too_long};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        memset(&up, 0x33, sizeof(up));
        cfg.token = bad[i];
        if (dpm_upload_init(&up, &cfg) != DPM_ERR_PARAM) {
            fail_msg("token #%u accepted", (unsigned)i);
        }
        assert_int_equal(((uint8_t *)&up)[0], 0x33); /* untouched */
    }
    /* a work buffer with room for the largest report after a head with the longest token */
    frig_init(&f, &cfg_base);
    cfg.token = longest;
    assert_int_equal(dpm_upload_init(&f.up, &cfg), DPM_OK);
    f.fc.token = longest;
    frig_put(&f, 1);
    static uint8_t work[DPM_UPLOAD_MIN_WORK + DPM_HTTP_MAX_TOKEN];
    assert_int_equal(
        dpm_upload_flush(&f.up, &f.ob, &f.t, &f.clk, &f.rand, work, sizeof(work), &res), DPM_OK);
    assert_int_equal(res.delivered, 1);
    assert_int_equal(
        dpm_upload_flush(&f.up, &f.ob, &f.t, &f.clk, &f.rand, work, DPM_UPLOAD_MIN_WORK, &res),
        DPM_ERR_PARAM); /* the head with this token leaves no room for the largest report */
}

/* Every rejected report comes back to the app with its id, campaign, period and the
 * collector's reason (control bytes replaced), exactly once, however many batches it takes:
 * a flush stops (res.more) before a batch whose rejects might not fit res.rejects. */
static void test_flush_returns_every_reject(void **state)
{
    (void)state;
    static frig_t f;
    for (uint32_t max_reports = 1; max_reports <= DPM_UPLOAD_MAX_BATCH; max_reports++) {
        dpm_upload_config_t cfg = cfg_base;
        cfg.max_reports = max_reports;
        frig_init(&f, &cfg);
        for (uint32_t i = 0; i < 25; i++) {
            frig_put_in(&f, i % 3 == 0 ? 1 : 9, 100 + i); /* 16 of 25 rejected */
        }
        f.fc.reject_campaign = 9;
        f.fc.reject_reason = "device quota\x01" "exceeded\x7f";
        uint8_t seen[25] = {0};
        uint32_t delivered = 0, rejected = 0, calls = 0;
        dpm_upload_result_t res;
        do {
            assert_int_equal(frig_flush(&f, &res), DPM_OK);
            assert_true(res.rejected <= DPM_UPLOAD_MAX_REJECTS);
            delivered += res.delivered;
            rejected += res.rejected;
            for (uint32_t r = 0; r < res.rejected; r++) {
                const dpm_upload_reject_t *rj = &res.rejects[r];
                size_t k = 0;
                while (k < f.n && memcmp(f.ids[k], rj->report_id, DPM_REPORT_ID_BYTES) != 0) {
                    k++;
                }
                assert_true(k < f.n);
                assert_int_equal(k % 3 == 0, 0); /* a campaign-9 report */
                assert_int_equal(seen[k]++, 0);  /* returned once */
                assert_int_equal(rj->campaign_id, 9);
                assert_int_equal(rj->period, 100 + k);
                assert_string_equal(rj->reason, "device quota?exceeded?");
            }
            assert_true(++calls <= 25);
        } while (res.more);
        assert_int_equal(rejected, 16);
        assert_int_equal(delivered, 9);
        assert_int_equal(res.pending, 0);
        assert_int_equal(f.fc.nrejected, 16);
        assert_int_equal(f.fc.nstored, 9);
    }
    /* bytes outside printable ASCII (UTF-8, an escape sequence) reach the app as '?' */
    frig_init(&f, &cfg_base);
    frig_put(&f, 9);
    f.fc.reject_campaign = 9;
    f.fc.reject_reason = "caf\xc3\xa9 \x1b[31m";
    dpm_upload_result_t r8;
    assert_int_equal(frig_flush(&f, &r8), DPM_OK);
    assert_int_equal(r8.rejected, 1);
    assert_string_equal(r8.rejects[0].reason, "caf?? ?[31m");
    /* the collector's longest reason (47 bytes) arrives whole */
    frig_init(&f, &cfg_base);
    frig_put(&f, 9);
    f.fc.reject_campaign = 9;
    f.fc.reject_reason = "a reason of forty-seven bytes, the most allowed";
    assert_int_equal(strlen(f.fc.reject_reason), DPM_UPLOAD_REASON_BYTES - 1);
    dpm_upload_result_t res;
    assert_int_equal(frig_flush(&f, &res), DPM_OK);
    assert_int_equal(res.rejected, 1);
    assert_false(res.more);
    assert_string_equal(res.rejects[0].reason, f.fc.reject_reason);
    assert_true(strstr(dpm_upload_advice(DPM_OK, &res), "rejected") != NULL);
}

static void test_flush_bad_arguments(void **state)
{
    (void)state;
    static frig_t f;
    frig_init(&f, &cfg_base);
    frig_put(&f, 1);
    dpm_upload_result_t res;
    memset(&res, 0x5A, sizeof(res));
    dpm_upload_result_t keep = res;
    uint8_t small[DPM_UPLOAD_MIN_WORK - 1];
    assert_int_equal(
        dpm_upload_flush(&f.up, &f.ob, &f.t, &f.clk, &f.rand, small, sizeof(small), &res),
        DPM_ERR_PARAM);
    assert_int_equal(
        dpm_upload_flush(NULL, &f.ob, &f.t, &f.clk, &f.rand, f.work, sizeof(f.work), &res),
        DPM_ERR_PARAM);
    assert_int_equal(
        dpm_upload_flush(&f.up, NULL, &f.t, &f.clk, &f.rand, f.work, sizeof(f.work), &res),
        DPM_ERR_PARAM);
    assert_int_equal(
        dpm_upload_flush(&f.up, &f.ob, NULL, &f.clk, &f.rand, f.work, sizeof(f.work), &res),
        DPM_ERR_PARAM);
    assert_int_equal(
        dpm_upload_flush(&f.up, &f.ob, &f.t, NULL, &f.rand, f.work, sizeof(f.work), &res),
        DPM_ERR_PARAM);
    assert_memory_equal(&res, &keep, sizeof(res));
    assert_int_equal(f.fc.requests, 0);
    /* configurations */
    dpm_upload_t up;
    memset(&up, 0x11, sizeof(up));
    dpm_upload_t ukeep = up;
    dpm_upload_config_t c = cfg_base;
    c.max_reports = 0;
    assert_int_equal(dpm_upload_init(&up, &c), DPM_ERR_PARAM);
    c.max_reports = DPM_UPLOAD_MAX_BATCH + 1;
    assert_int_equal(dpm_upload_init(&up, &c), DPM_ERR_PARAM);
    c = cfg_base;
    c.timeout_ms = 0;
    assert_int_equal(dpm_upload_init(&up, &c), DPM_ERR_PARAM);
    c = cfg_base;
    c.host = "bad host";
    assert_int_equal(dpm_upload_init(&up, &c), DPM_ERR_PARAM);
    c = cfg_base;
    c.path = "nopath";
    assert_int_equal(dpm_upload_init(&up, &c), DPM_ERR_PARAM);
    c = cfg_base;
    c.backoff_base_ms = 0;
    assert_int_equal(dpm_upload_init(&up, &c), DPM_ERR_PARAM);
    assert_int_equal(dpm_upload_init(&up, NULL), DPM_ERR_PARAM);
    assert_memory_equal(&up, &ukeep, sizeof(up));
    assert_int_equal(dpm_upload_next_attempt_ms(NULL), 0);
    /* a work buffer too small for this host and path */
    c = cfg_base;
    char host[DPM_HTTP_MAX_HOST + 1];
    memset(host, 'h', DPM_HTTP_MAX_HOST);
    host[DPM_HTTP_MAX_HOST] = '\0';
    c.host = host;
    assert_int_equal(dpm_upload_init(&up, &c), DPM_OK);
    assert_int_equal(
        dpm_upload_flush(&up, &f.ob, &f.t, &f.clk, &f.rand, f.work, DPM_UPLOAD_MIN_WORK, &res),
        DPM_ERR_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_bytes),
        cmocka_unit_test(test_request_refuses_injection),
        cmocka_unit_test(test_response_ok_whole_and_bytewise),
        cmocka_unit_test(test_response_retry_after),
        cmocka_unit_test(test_response_bad_status_lines),
        cmocka_unit_test(test_response_headers_strict_and_bounded),
        cmocka_unit_test(test_read_response_split_and_errors),
        cmocka_unit_test(test_deadline_slowloris),
        cmocka_unit_test(test_backoff_growth_and_cap),
        cmocka_unit_test(test_backoff_jitter_bounds),
        cmocka_unit_test(test_flush_success_and_batches),
        cmocka_unit_test(test_flush_largest_report_with_min_work),
        cmocka_unit_test(test_flush_failure_backoff_and_same_bytes),
        cmocka_unit_test(test_flush_400_removes_only_rejected),
        cmocka_unit_test(test_flush_answer_bounds),
        cmocka_unit_test(test_flush_2xx_must_account_for_the_batch),
        cmocka_unit_test(test_flush_status_map),
        cmocka_unit_test(test_flush_413_halves_the_batches),
        cmocka_unit_test(test_flush_bearer_token),
        cmocka_unit_test(test_flush_returns_every_reject),
        cmocka_unit_test(test_flush_bad_arguments),
    };
    return cmocka_run_group_tests_name("http", tests, NULL, NULL);
}
