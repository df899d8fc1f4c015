/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's trust pieces without sockets (issue 27 items 5 and 6):
 *   - per-address limits key an IPv6 address by its /64 and an IPv4 address by itself
 *     (coll_limits_addr_key), and the rate buckets follow that key;
 *   - a body where no route reads one is answered 413 and nothing is reserved for it, and a
 *     body route without a credential 401, also nothing reserved (the HTTP state machine over
 *     a real limits struct: memory_peak stays 0); an authenticated POST does reserve (the
 *     positive control);
 *   - the credentials file's cert=CN binding (one identity for a token and a certificate);
 *   - the deny list's format (fingerprints with or without colons, identities, bad lines);
 *   - the lost-report cap per credential and day. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collector/ingest/auth.h"
#include "collector/ingest/campaigns.h"
#include "collector/net/conn.h"
#include "collector/ingest/limits.h"
#include "collector/ingest/revoked.h"
#include "collector/store/store.h"

static void v6(const char *hex32, uint8_t out[16])
{
    for (int i = 0; i < 16; i++) {
        unsigned x = 0;
        sscanf(hex32 + 2 * i, "%2x", &x);
        out[i] = (uint8_t)x;
    }
}

static void v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint8_t out[16])
{
    memset(out, 0, 16);
    out[10] = out[11] = 0xFF;
    out[12] = a, out[13] = b, out[14] = c, out[15] = d;
}

static void test_addr_key(void **state)
{
    (void)state;
    uint8_t a[16], b[16], ka[16], kb[16];
    /* two addresses of one /64 (different interface identifiers): one key */
    v6("20010db8000000010000000000000001", a);
    v6("20010db800000001fedcba9876543210", b);
    coll_limits_addr_key(a, ka);
    coll_limits_addr_key(b, kb);
    assert_memory_equal(ka, kb, 16);
    uint8_t want[16];
    v6("20010db8000000010000000000000000", want);
    assert_memory_equal(ka, want, 16);
    /* the next /64: another key */
    v6("20010db8000000020000000000000001", b);
    coll_limits_addr_key(b, kb);
    assert_memory_not_equal(ka, kb, 16);
    /* IPv4 (mapped): each address its own key, never the mapped prefix's /64 */
    v4(127, 0, 0, 2, a);
    v4(127, 0, 0, 3, b);
    coll_limits_addr_key(a, ka);
    coll_limits_addr_key(b, kb);
    assert_memory_equal(ka, a, 16);
    assert_memory_not_equal(ka, kb, 16);
    /* ::1 is the /64 of :: (loopback) */
    v6("00000000000000000000000000000001", a);
    coll_limits_addr_key(a, ka);
    memset(want, 0, 16);
    assert_memory_equal(ka, want, 16);
}

/* A /64 shares one rate bucket: with 1 request a second and a burst of 1, a second address of
 * the same /64 is refused at once, one of another /64 (or another IPv4 address) is not. */
static void test_rate_per_64(void **state)
{
    (void)state;
    coll_limits_t *l = calloc(1, sizeof(*l));
    assert_non_null(l);
    assert_int_equal(coll_limits_init(l, 1, 1, 0), 0);
    uint8_t a[16], same64[16], other64[16], ip4a[16], ip4b[16];
    v6("20010db8000000010000000000000001", a);
    v6("20010db80000000100000000000000ff", same64);
    v6("20010db8000000020000000000000001", other64);
    v4(127, 0, 0, 2, ip4a);
    v4(127, 0, 0, 3, ip4b);
    uint64_t t = 1000;
    assert_int_equal(coll_limits_take(l, a, t), 0);
    assert_int_equal(coll_limits_take(l, same64, t), -1); /* keyed on the full address: 0 */
    assert_int_equal(coll_limits_take(l, other64, t), 0);
    assert_int_equal(coll_limits_take(l, ip4a, t), 0);
    assert_int_equal(coll_limits_take(l, ip4b, t), 0);
    assert_int_equal(coll_limits_take(l, same64, t + 1000), 0); /* refilled a second later */
    coll_limits_free(l);
    free(l);
}

/* ---- bodies before authentication ---------------------------------------------------------- */

typedef struct {
    char out[4096];
    size_t len;
} sink_t;

static int capture(void *ctx, const uint8_t *buf, size_t len)
{
    sink_t *s = ctx;
    size_t n = len < sizeof(s->out) - 1 - s->len ? len : sizeof(s->out) - 1 - s->len;
    memcpy(s->out + s->len, buf, n);
    s->len += n;
    s->out[s->len] = '\0';
    return 0;
}

static const char DEVICE_TOKEN[] = "device-token-0001";

typedef struct {
    coll_app_t app;
    coll_auth_t auth;
    coll_limits_t *limits;
    coll_peer_t peer;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    if (f == NULL || (f->limits = calloc(1, sizeof(*f->limits))) == NULL ||
        coll_limits_init(f->limits, 0, 1, 64u << 20) != 0) {
        return -1;
    }
    /* SHA-256("device-token-0001") */
    static const char creds[] =
        "phone device d95ff5c68705bb7d8290bb9a08765e88ab46ef657df0cf036a04c7418c776c52\n";
    char err[200];
    if (coll_auth_parse(&f->auth, creds, sizeof(creds) - 1, err, sizeof(err)) != 0) {
        return -1;
    }
    f->app.auth = &f->auth;
    f->app.limits = f->limits;
    f->app.max_body = 1u << 20;
    v4(127, 0, 0, 2, f->peer.addr);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    coll_auth_free(&f->auth);
    coll_limits_free(f->limits);
    free(f->limits);
    free(f);
    return 0;
}

/* Feed one head; the answer's status (0: none yet) and whether the connection closed. */
static int feed_head(fixture_t *f, const char *head, int *closed, size_t *reserved)
{
    sink_t out = {{0}, 0};
    coll_conn_t *c = malloc(sizeof(*c));
    assert_non_null(c);
    coll_conn_init(c, &f->app, &f->peer, capture, &out);
    coll_conn_set_time(c, 1000);
    coll_conn_feed(c, (const uint8_t *)head, strlen(head));
    *closed = c->state == COLL_CONN_CLOSED;
    *reserved = c->reserved;
    coll_conn_free(c);
    free(c);
    return out.len > 12 ? atoi(out.out + 9) : 0;
}

static void test_no_body_before_auth(void **state)
{
    fixture_t *f = *state;
    static const char *const no_body_routes[] = {
        "GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n",
        "HEAD /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n",
        "GET /v1/campaigns/1 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n",
        "POST /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n",
        "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n",
        "GET /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n",
        "GET /v1/fedauc/uploads HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n",
    };
    int closed = 0;
    size_t reserved = 0;
    for (size_t i = 0; i < sizeof(no_body_routes) / sizeof(no_body_routes[0]); i++) {
        assert_int_equal(feed_head(f, no_body_routes[i], &closed, &reserved), 413);
        assert_true(closed);
    }
    /* body routes without (or with a wrong) credential: refused before the body */
    assert_int_equal(feed_head(f,
                               "POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Length: "
                               "1048576\r\n\r\n",
                               &closed, &reserved),
                     401);
    assert_true(closed);
    assert_int_equal(feed_head(f,
                               "POST /v1/fedauc/uploads HTTP/1.1\r\nHost: x\r\nAuthorization: "
                               "Bearer nope\r\nContent-Length: 1048576\r\n\r\n",
                               &closed, &reserved),
                     401);
    coll_limit_stats_t st;
    coll_limits_stats(f->limits, &st);
    assert_int_equal(st.memory_peak, 0); /* nothing was ever reserved */
    /* the positive control: an authenticated POST reserves its body's share, then waits */
    char head[256];
    snprintf(head, sizeof(head),
             "POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
             "Content-Type: application/x-protobuf\r\nContent-Length: 1000\r\n\r\n",
             DEVICE_TOKEN);
    assert_int_equal(feed_head(f, head, &closed, &reserved), 0);
    assert_false(closed);
    assert_int_equal(reserved, COLL_REQUEST_RESERVE(1000));
    coll_limits_stats(f->limits, &st);
    assert_int_equal(st.memory_peak, COLL_REQUEST_RESERVE(1000));
    assert_int_equal(st.memory_reserved, 0); /* released with the connection */
    /* a GET without a body (or with Content-Length: 0) is not refused */
    assert_int_equal(feed_head(f, "GET /nowhere HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
                               &closed, &reserved),
                     404);
    assert_false(closed);
}

/* ---- credentials: cert=CN ------------------------------------------------------------------- */

#define H64 "53fba8aa5ac8b8bd8cc3f7d6d25df63f95ff4bca1b9a8f2e2f5a4e33e20c8d4"

static void test_cert_binding(void **state)
{
    (void)state;
    coll_auth_t a;
    char err[200];
    static const char ok[] = "t1 device,cert=device-0001 " H64 "3\n"
                             "t2 relay=5,cert=device-0001 " H64 "4\n" /* a second token */
                             "t3 device " H64 "5\n";
    assert_int_equal(coll_auth_parse(&a, ok, sizeof(ok) - 1, err, sizeof(err)), 0);
    assert_int_equal(a.n, 3);
    int bound = 0, unbound = 0;
    for (size_t i = 0; i < a.n; i++) {
        if (a.c[i].bound) {
            assert_string_equal(a.c[i].identity, "cert:device-0001");
            bound++;
        } else {
            assert_string_equal(a.c[i].identity, "token:t3");
            unbound++;
        }
    }
    assert_int_equal(bound, 2);
    assert_int_equal(unbound, 1);
    coll_auth_free(&a);
    static const char *const bad[] = {
        "t1 operator,cert=device-0001 " H64 "3\n",  /* binds a token that posts nothing */
        "t1 device,cert=a,cert=b " H64 "3\n",       /* two certificates */
        "t1 device,cert= " H64 "3\n",               /* no CN */
        "t1 device,cert=a/b " H64 "3\n",            /* not a name */
        "t1 device " H64 "3\nt1 device " H64 "4\n", /* a name twice (unbound) */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(coll_auth_parse(&a, bad[i], strlen(bad[i]), err, sizeof(err)), -1);
    }
}

/* ---- the deny list --------------------------------------------------------------------------- */

static void test_revoked_list(void **state)
{
    (void)state;
    uint8_t fp[32], other[32];
    for (int i = 0; i < 32; i++) {
        fp[i] = (uint8_t)(0xA0 + i);
        other[i] = (uint8_t)i;
    }
    char colons[200] = "", plain[100] = "";
    for (int i = 0; i < 32; i++) {
        snprintf(colons + strlen(colons), 4, i < 31 ? "%02X:" : "%02X", fp[i]);
    }
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        plain[2 * i] = hex[other[i] >> 4];
        plain[2 * i + 1] = hex[other[i] & 15];
    }
    char text[600];
    snprintf(text, sizeof(text),
             "# revoked\n\n  %s   # device-7, colons as openssl prints them\n%s\r\n"
             "token:gateway-3\ncert:device-0009  # every certificate of it\n",
             colons, plain);
    coll_revoked_t *r = NULL;
    char err[300];
    assert_int_equal(coll_revoked_parse(&r, text, strlen(text), err, sizeof(err)), 0);
    assert_int_equal(coll_revoked_is(r, fp, "cert:device-0007"), 1);
    assert_int_equal(coll_revoked_is(r, other, NULL), 1);
    uint8_t fresh[32];
    memcpy(fresh, fp, 32);
    fresh[31] ^= 1;
    assert_int_equal(coll_revoked_is(r, fresh, "cert:device-0007"), 0); /* a re-keyed device */
    assert_int_equal(coll_revoked_is(r, fresh, "cert:device-0009"), 1); /* a revoked CN */
    assert_int_equal(coll_revoked_is(r, NULL, "token:gateway-3"), 1);
    assert_int_equal(coll_revoked_is(r, NULL, "token:gateway-4"), 0);
    assert_int_equal(coll_revoked_is(r, NULL, NULL), 0);
    assert_int_equal(coll_revoked_is(NULL, fp, "token:gateway-3"), 0); /* no list: nothing */
    size_t n = 0;
    uint64_t reloads = 0;
    coll_revoked_stats(r, &n, &reloads);
    assert_int_equal(n, 4);
    coll_revoked_free(r);
    static const char *const bad[] = {
        "abc\n",          /* neither */
        "cert:\n",        /* an empty CN */
        "toke:gateway\n", /* not an identity */
        "A0:A1\n",        /* a short fingerprint */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(coll_revoked_parse(&r, bad[i], strlen(bad[i]), err, sizeof(err)), -1);
        assert_non_null(strstr(err, "line 1"));
    }
    static const char nul[] = "cert:a\0b\n";
    assert_int_equal(coll_revoked_parse(&r, nul, sizeof(nul) - 1, err, sizeof(err)), -1);
}

/* ---- the lost-report cap ----------------------------------------------------------------------
 */

static void test_lost_cap(void **state)
{
    (void)state;
    static const char text[] = "[campaign]\nid = 1\nmechanism = tuple_mr\neps = 1\ngroups = 4\n"
                               "metrics = tpr\nperiod_seconds = 3600\n"
                               "[campaign]\nid = 2\nmechanism = tuple_mr\neps = 1\ngroups = 4\n"
                               "metrics = tpr\ndevice_quota = 2\n"
                               "[campaign]\nid = 3\nmechanism = tuple_mr\neps = 1\ngroups = 4\n"
                               "metrics = tpr\nperiod_seconds = 100000\n";
    coll_campaigns_t *cs = calloc(1, sizeof(*cs));
    char err[256];
    assert_int_equal(coll_campaigns_parse(text, sizeof(text) - 1, cs, err, sizeof(err)), 0);
    /* 24 hourly periods x 1 + 1 day x 2 + a period longer than a day (1 touched) x 1 */
    assert_int_equal(coll_lost_cap(cs, 0), 24 + 2 + 1);
    /* a relay of 1000: 1000 per campaign and period */
    assert_int_equal(coll_lost_cap(cs, 1000), (24 + 1 + 1) * 1000);
    free(cs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_addr_key),
        cmocka_unit_test(test_rate_per_64),
        cmocka_unit_test_setup_teardown(test_no_body_before_auth, setup, teardown),
        cmocka_unit_test(test_cert_binding),
        cmocka_unit_test(test_revoked_list),
        cmocka_unit_test(test_lost_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
