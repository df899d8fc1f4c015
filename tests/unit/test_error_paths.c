/* SPDX-License-Identifier: Apache-2.0 */
/* The error paths the other unit tests leave out (found by `make coverage`): every sampler
 * when the random source runs dry in the middle of a draw, at many depths; argument checks of
 * the public API; the soft-float edge cases of the certified exp bounds. Each case checks the
 * documented outcome: the error code, a sticky DPM_ERR_RNG, and outputs left untouched. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "dpm/expert/report.h"
#include "dpm/stats.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/http.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/roc_hist.h"
#include "dpm/expert/tuple.h"
#include "dpm/expert/stats.h"
#include "fake_collector.h"
#include "noise/xexp.h"
#include "test_receipt.h"
#include "test_rng.h"

#define SENTINEL_I64 INT64_C(0x5A5A5A5A5A5A5A5A)

/* ---- the random source running dry mid-draw ----------------------------------------------- */

typedef enum {
    S_UNIFORM,
    S_BERNOULLI,
    S_BEXP,
    S_DLAP,
    S_DLAP_ADD,
    S_LAPLACE,
    S_LAPLACE_FIXED,
    S_GRR,
    S_RR
} sampler_t;

typedef struct {
    sampler_t kind;
    uint64_t a, b; /* parameters: n / num, den / sensitivity, eps / k, eps */
} sampler_case_t;

static const sampler_case_t sampler_cases[] = {
    {S_UNIFORM, 10, 0},
    {S_UNIFORM, (UINT64_C(1) << 40) + 3, 0},
    {S_BERNOULLI, 1, 3},
    {S_BERNOULLI, 999, 1000},
    {S_BEXP, 1, 10},
    {S_BEXP, 5, 2},
    {S_BEXP, 4096, 1},
    {S_DLAP, 1, 2},
    {S_DLAP, 10, 1},
    {S_DLAP, UINT64_C(8589934592), 6553},
    {S_DLAP_ADD, 3, 7},
    {S_LAPLACE, UINT64_C(1) << 17, 65536},
    {S_LAPLACE, 3, 45875},
    {S_LAPLACE, 1, 655360},
    {S_LAPLACE, UINT64_C(1) << 40, 65536},
    {S_LAPLACE, 65536, 6553},
    {S_LAPLACE_FIXED, 3, 45875},
    {S_GRR, 17, 131072},
    {S_RR, 0, 65536},
};

/* One call; returns its status, and whether the output kept its sentinel. */
static dpm_status_t draw(const sampler_case_t *c, dpm_rand_t *r, const dpm_laplace_t *lap,
                         const dpm_laplace_fixed_t *fixed, const dpm_grr_t *g, int *untouched)
{
    dpm_status_t st;
    int64_t z = SENTINEL_I64;
    uint64_t u = (uint64_t)SENTINEL_I64;
    int b = 0x5A5A;
    uint32_t y = 0x5A5A5A5Au;
    switch (c->kind) {
    case S_UNIFORM: st = dpm_uniform(r, c->a, &u); break;
    case S_BERNOULLI: st = dpm_bernoulli(r, c->a, c->b, &b); break;
    case S_BEXP: st = dpm_bernoulli_exp(r, c->a, c->b, &b); break;
    case S_DLAP: st = dpm_dlap(r, c->a, c->b, &z); break;
    case S_DLAP_ADD: st = dpm_dlap_add(r, c->a, c->b, 12, &z); break;
    case S_LAPLACE: st = dpm_laplace_add(lap, r, -3, &z); break;
    case S_LAPLACE_FIXED: st = dpm_laplace_fixed_add(fixed, r, 5, &z); break;
    case S_GRR: st = dpm_grr_perturb(g, r, 4, &y); break;
    default: st = dpm_rr_perturb(g, r, 1, &b); break;
    }
    *untouched = z == SENTINEL_I64 && u == (uint64_t)SENTINEL_I64 && b == 0x5A5A &&
                 y == 0x5A5A5A5Au;
    return st;
}

/* Streams of one repeated byte drive the samplers down fixed paths (0x00 makes every lazy
 * Bernoulli trial succeed, 0xFF makes rejection loops reject, 0x02/0x0A/0x2A are the bytes of
 * Bernoulli(exp(-1)) that need more bits): the source runs out inside those loops. */
static void test_samplers_when_the_source_runs_dry(void **state)
{
    (void)state;
    static const uint8_t patterns[] = {0x00, 0xFF, 0x01, 0x02, 0x0A, 0x2A, 0x80, 0x55, 0xAA, 0x7F};
    static uint8_t bytes[2 * DPM_RAND_BUF_BYTES];
    for (size_t ci = 0; ci < sizeof(sampler_cases) / sizeof(sampler_cases[0]); ci++) {
        const sampler_case_t *c = &sampler_cases[ci];
        dpm_laplace_t lap;
        static dpm_laplace_fixed_t fixed;
        dpm_grr_t g;
        if (c->kind == S_LAPLACE) {
            assert_int_equal(dpm_laplace_init(&lap, c->a, (dpm_eps_t)c->b), DPM_OK);
        } else if (c->kind == S_LAPLACE_FIXED) {
            assert_int_equal(dpm_laplace_fixed_init(&fixed, c->a, (dpm_eps_t)c->b), DPM_OK);
        } else if (c->kind == S_GRR) {
            assert_int_equal(dpm_grr_init(&g, (uint32_t)c->a, (dpm_eps_t)c->b), DPM_OK);
        } else if (c->kind == S_RR) {
            assert_int_equal(dpm_rr_init(&g, (dpm_eps_t)c->b), DPM_OK);
        }
        for (size_t pi = 0; pi < sizeof(patterns); pi++) {
            for (size_t fills = 1; fills <= 2; fills++) {
                memset(bytes, patterns[pi], sizeof(bytes));
                script_rng_t s = {bytes, fills * DPM_RAND_BUF_BYTES, 0, 0};
                dpm_rng_t rng = script_rng_port(&s);
                dpm_rand_t r;
                assert_int_equal(dpm_rand_init(&r, &rng), DPM_OK);
                dpm_status_t st = DPM_OK;
                int untouched = 0;
                long calls = 0;
                while (st == DPM_OK && calls < 200000) {
                    st = draw(c, &r, &lap, &fixed, &g, &untouched);
                    calls++;
                }
                if (st != DPM_ERR_RNG) {
                    fail_msg("case %zu, byte 0x%02x: status %d after %ld calls", ci, patterns[pi],
                             (int)st, calls);
                }
                assert_true(untouched);  /* the failed draw wrote nothing */
                assert_true(s.exhausted); /* it failed because the bytes ran out */
                assert_int_equal(draw(c, &r, &lap, &fixed, &g, &untouched), DPM_ERR_RNG);
                assert_true(untouched); /* sticky */
            }
        }
    }
}

/* A Laplace mechanism whose tables were damaged is refused, not read out of bounds. */
static void test_laplace_refuses_a_corrupted_mechanism(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 3), DPM_OK);
    dpm_laplace_t good;
    assert_int_equal(dpm_laplace_init(&good, 3, 45875), DPM_OK);
    for (int which = 0; which < 3; which++) {
        dpm_laplace_t m = good;
        if (which == 0) {
            m.a_bits = DPM_LAPLACE_A_BITS + 1u;
        } else if (which == 1) {
            m.a_count = 0;
        } else {
            m.low_bits = 60;
        }
        int64_t z = SENTINEL_I64;
        dpm_status_t st = DPM_OK;
        for (int i = 0; i < 200 && st == DPM_OK; i++) {
            st = dpm_laplace_add(&m, &r, 0, &z); /* the fast path may not look at them */
        }
        assert_int_equal(st, DPM_ERR_PARAM);
    }
}

/* ---- argument checks ------------------------------------------------------------------------ */

static void test_sampler_and_rand_arguments(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 4), DPM_OK);
    uint64_t u = 7;
    assert_int_equal(dpm_rand_bits(NULL, 3, &u), DPM_ERR_PARAM);
    assert_int_equal(dpm_rand_bits(&r, 3, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_rand_bits(&r, 0, &u), DPM_ERR_PARAM);
    assert_int_equal(dpm_rand_bits(&r, 65, &u), DPM_ERR_PARAM);
    assert_int_equal(u, 7);
    dpm_rand_t unbound;
    memset(&unbound, 0, sizeof(unbound));
    assert_int_equal(dpm_rand_bits(&unbound, 3, &u), DPM_ERR_PARAM);
    assert_int_equal(dpm_uniform(NULL, 3, &u), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli(&r, 1, 2, NULL), DPM_ERR_PARAM);
    int b = 9;
    assert_int_equal(dpm_bernoulli_exp(&r, 1, 0, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli_exp(&r, 4097, 1, &b), DPM_ERR_PARAM);
    assert_int_equal(b, 9);
    dpm_grr_t g;
    assert_int_equal(dpm_grr_init(&g, 4, 65536), DPM_OK);
    uint32_t y = 11;
    assert_int_equal(dpm_grr_perturb(NULL, &r, 1, &y), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_perturb(&g, NULL, 1, &y), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_perturb(&g, &r, 1, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_perturb(&g, &r, 4, &y), DPM_ERR_PARAM);
    assert_int_equal(y, 11);
    /* thresholds that do not add up to 2^32 are not a GRR */
    dpm_eps_t e = 0;
    assert_int_equal(dpm_grr_epsilon(2, 0, UINT32_MAX, &e), DPM_ERR_PARAM);
    assert_int_equal(e, 0);
}

static void test_stats_and_eps_arguments(void **state)
{
    (void)state;
    dpm_confusion_t c;
    memset(&c, 0, sizeof(c));
    assert_int_equal(dpm_confusion_add(&c, 1, 2), DPM_ERR_PARAM);
    assert_int_equal(dpm_confusion_add(&c, -1, 0), DPM_ERR_PARAM);
    c.tn = UINT32_MAX - 1u;
    c.tp = 1;
    assert_int_equal(dpm_confusion_add(&c, 0, 1), DPM_ERR_RANGE); /* the total would wrap */
    assert_int_equal(c.fp, 0);
    dpm_ratio_t q = {3, 4};
    assert_int_equal(dpm_metric_ratio(&c, (dpm_metric_t)9, &q), DPM_ERR_PARAM);
    assert_int_equal(dpm_metric_ratio(&c, (dpm_metric_t)0, &q), DPM_ERR_PARAM);
    assert_int_equal(q.num, 3);
    assert_int_equal(dpm_eps_format(65536, NULL, 8), DPM_ERR_PARAM);
    dpm_eps_t e = 1;
    assert_int_equal(dpm_eps_from_ratio(1, 0, &e), DPM_ERR_PARAM);
    assert_int_equal(dpm_eps_from_ratio(1, 2, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_eps_from_decimal("0.5.5", &e), DPM_ERR_PARAM);
    assert_int_equal(e, 1);
}

static void test_campaign_and_report_arguments(void **state)
{
    (void)state;
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 5;
    c.mechanism = DPM_MECH_ID_TUPLE_MR;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(1);
    c.groups = 3;
    c.nmetrics = 1;
    c.metrics[0] = DPM_METRIC_TPR;
    uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    const char *why = NULL;
    assert_int_equal(dpm_campaign_decode(NULL, 4, &c, &why), DPM_ERR_PARAM);
    assert_non_null(why);
    assert_int_equal(dpm_campaign_decode(buf, 0, NULL, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_encode(NULL, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_encode(&c, NULL, sizeof(buf), &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), NULL), DPM_ERR_PARAM);
    dpm_campaign_t big = c;
    big.nmetrics = DPM_CAMPAIGN_MAX_METRICS + 1u;
    assert_int_equal(dpm_campaign_encode(&big, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    big = c;
    big.nbins = DPM_MAX_BINS + 1u;
    assert_int_equal(dpm_campaign_encode(&big, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_encode(&c, buf, 3, &len), DPM_ERR_BUFFER);
    assert_int_equal(len, 0);

    static dpm_mech_t m;
    why = NULL;
    assert_int_equal(dpm_mech_init(NULL, &c, &why), DPM_ERR_PARAM);
    assert_non_null(why);
    assert_int_equal(dpm_mech_init(&m, NULL, NULL), DPM_ERR_PARAM);
    dpm_campaign_t unavailable = c;
    unavailable.mechanism = (dpm_mech_id_t)99;
    assert_int_equal(dpm_mech_init(&m, &unavailable, &why), DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);

    /* reports: NULL arguments, and the checks of a tuple_ml report's values */
    dpm_report_t rep;
    memset(&rep, 0, sizeof(rep));
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 5), DPM_OK);
    dpm_score_hist_t h;
    memset(&h, 0, sizeof(h));
    /* a tuple mechanism */
    assert_int_equal(dpm_mech_report_roc_hist(&m, &r, NULL, NULL, &h, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_roc_hist(NULL, &r, NULL, NULL, &h, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_tuple(NULL, &r, NULL, NULL, 0, NULL, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_check_report(NULL, &rep, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_report_encode(NULL, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_report_decode(NULL, 4, &rep), DPM_ERR_PARAM);

    dpm_campaign_t ml = c;
    ml.mechanism = DPM_MECH_ID_TUPLE_ML;
    ml.frac_bits = DPM_FRAC_BITS;
    ml.budget = DPM_EPS(2);
    assert_int_equal(dpm_mech_init(&m, &ml, NULL), DPM_OK);
    dpm_ratio_t half = {1, 2};
    assert_int_equal(dpm_mech_report_tuple(&m, &r, TEST_RECEIPT(&m, 0), 1, &half, &rep), DPM_OK);
    assert_int_equal(dpm_mech_check_report(&m, &rep, NULL), DPM_OK);
    rep.body.tuple.value[0] = INT32_MIN;
    why = NULL;
    assert_int_equal(dpm_mech_check_report(&m, &rep, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "value out of range");
}

static void test_tuple_and_roc_hist_arguments(void **state)
{
    (void)state;
    dpm_tuple_t t;
    memset(&t, 0x5A, sizeof(t));
    dpm_tuple_t before = t;
    dpm_metric_t bad[2] = {DPM_METRIC_TPR, (dpm_metric_t)7};
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 3, bad, 2, 65536), DPM_ERR_PARAM);
    dpm_metric_t twice[2] = {DPM_METRIC_FPR, DPM_METRIC_FPR};
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 3, twice, 2, 65536), DPM_ERR_PARAM);
    dpm_metric_t ok[1] = {DPM_METRIC_TPR};
    assert_int_equal(dpm_tuple_init(NULL, DPM_TUPLE_MR, 3, ok, 1, 65536), DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 3, NULL, 1, 65536), DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, DPM_MAX_GROUPS + 1u, ok, 1, 65536),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 3, ok, DPM_TUPLE_MAX_METRICS + 1u, 65536),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_tuple_init(&t, (dpm_tuple_kind_t)3, 3, ok, 1, 65536), DPM_ERR_PARAM);
    /* tuple_mr with 4 metrics and ε so small each metric gets 0 */
    dpm_metric_t four[4] = {DPM_METRIC_ACCURACY, DPM_METRIC_TPR, DPM_METRIC_FPR,
                            DPM_METRIC_PRECISION};
    assert_int_equal(dpm_tuple_init(&t, DPM_TUPLE_MR, 3, four, 4, 3), DPM_ERR_RANGE);
    assert_memory_equal(&t, &before, sizeof(t));

    uint32_t edges[3] = {1u << 29, 1u << 30, 3u << 29};
    dpm_roc_hist_t m;
    assert_int_equal(dpm_roc_hist_init(&m, edges, 3, 65536), DPM_OK);
    uint32_t bin = 77;
    assert_int_equal(dpm_score_bin(NULL, 5, &bin), DPM_ERR_PARAM);
    assert_int_equal(dpm_score_bin(&m.bins, 5, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_score_bin(&m.bins, DPM_SCORE_ONE + 1u, &bin), DPM_ERR_PARAM);
    dpm_roc_hist_t broken = m;
    broken.bins.count = 1;
    assert_int_equal(dpm_score_bin(&broken.bins, 5, &bin), DPM_ERR_PARAM);
    assert_int_equal(bin, 77);
    assert_int_equal(dpm_roc_hist_init(&m, edges, 3, DPM_EPS_MAX_Q16 + 1u), DPM_ERR_PARAM);
    dpm_score_hist_t h;
    assert_int_equal(dpm_score_hist_init(&h, &m.bins), DPM_OK);
    test_rng_t tr;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &tr, &rng, 6), DPM_OK);
    dpm_roc_hist_report_t out;
    memset(&out, 0x5A, sizeof(out));
    dpm_roc_hist_report_t out_before = out;
    dpm_roc_hist_t other_sens = m;
    other_sens.lap.sensitivity = 4;
    assert_int_equal(dpm_roc_hist_perturb(&other_sens, &r, &h, &out), DPM_ERR_PARAM);
    assert_memory_equal(&out, &out_before, sizeof(out));
}

static void test_http_and_fetch_arguments(void **state)
{
    (void)state;
    fake_clock_t fc = {1000, 1, 0};
    dpm_clock_t clk = fake_clock_port(&fc);
    fake_collector_t coll;
    fake_collector_init(&coll, "h", "/v1/reports");
    dpm_transport_t t = fake_collector_port(&coll);
    uint8_t work[DPM_CAMPAIGN_MAX_BYTES + 512u];
    static dpm_mech_t m;
    const char *why = NULL;
    assert_int_equal(dpm_campaign_fetch(NULL, &clk, "h", 1, 100, work, sizeof(work), &m, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_fetch(&t, NULL, "h", 1, 100, work, sizeof(work), &m, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 1, 100, NULL, sizeof(work), &m, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 1, 100, work, sizeof(work), NULL, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 1, 0, work, sizeof(work), &m, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 1, 100, work, sizeof(work) - 1u, &m, &why),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "bad host!", 1, 100, work, sizeof(work), &m,
                                        &why),
                     DPM_ERR_PARAM); /* the request cannot be written */

    dpm_http_response_t resp;
    size_t used = 0;
    assert_int_equal(dpm_http_response_init(&resp, NULL, 0), DPM_OK);
    assert_int_equal(dpm_http_response_feed(NULL, work, 1, &used), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_response_feed(&resp, work, 1, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_response_feed(&resp, NULL, 1, &used), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_response_done(NULL), 0);
    dpm_transport_t no_send = {NULL, t.recv, t.ctx};
    dpm_transport_t no_recv = {t.send, NULL, t.ctx};
    dpm_clock_t no_clock = {NULL, NULL, NULL};
    assert_int_equal(dpm_http_send_all(&no_send, &clk, 10, work, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_send_all(&t, &no_clock, 10, work, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_send_all(&t, &clk, 10, NULL, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_read_response(&no_recv, &clk, 10, &resp), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_read_response(&t, &no_clock, 10, &resp), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_read_response(&t, &clk, 10, NULL), DPM_ERR_PARAM);
    /* a parser that already failed reports it at once */
    assert_int_equal(dpm_http_response_feed(&resp, (const uint8_t *)"\n", 1, &used),
                     DPM_ERR_PROTOCOL);
    assert_int_equal(dpm_http_read_response(&t, &clk, fc.now + 100u, &resp), DPM_ERR_PROTOCOL);
    /* header values with spaces and tabs around them; a Connection list with "close" inside */
    static const char head[] = "HTTP/1.1 200 OK\r\nConnection: keep-alive ,\tclose \t\r\n"
                               "Content-Length: \t0 \t\r\n\r\n";
    assert_int_equal(dpm_http_response_init(&resp, NULL, 0), DPM_OK);
    assert_int_equal(dpm_http_response_feed(&resp, (const uint8_t *)head, sizeof(head) - 1, &used),
                     DPM_OK);
    assert_true(dpm_http_response_done(&resp));
    assert_int_equal(resp.close, 1);
    /* a 304 announcing a body is malformed; a DEL byte in a header is refused */
    static const char bad304[] = "HTTP/1.1 304 Not Modified\r\nContent-Length: 4\r\n\r\n";
    assert_int_equal(dpm_http_response_init(&resp, NULL, 0), DPM_OK);
    assert_int_equal(dpm_http_response_feed(&resp, (const uint8_t *)bad304, sizeof(bad304) - 1,
                                            &used),
                     DPM_ERR_PROTOCOL);
    static const char del[] = "HTTP/1.1 200 OK\r\nX-A: \x7f\r\n";
    assert_int_equal(dpm_http_response_init(&resp, NULL, 0), DPM_OK);
    assert_int_equal(dpm_http_response_feed(&resp, (const uint8_t *)del, sizeof(del) - 1, &used),
                     DPM_ERR_PROTOCOL);
    uint8_t req[512];
    size_t len = 0;
    assert_int_equal(dpm_http_write_request(req, sizeof(req), "h", "no-slash", 1, &len),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_http_write_request(req, sizeof(req), "h", NULL, 1, &len), DPM_ERR_PARAM);
    assert_int_equal(dpm_http_write_request(req, sizeof(req), "[::1]:8443", "/x", 1, &len),
                     DPM_OK);
}

/* ---- soft-float edge cases of the certified exp ---------------------------------------------- */

/* A transport that answers every request with one canned response (then reads as closed). */
typedef struct {
    uint8_t answer[DPM_CAMPAIGN_MAX_BYTES + 128];
    size_t len, pos;
    char sent[256];
    size_t nsent;
    int send_fails;
} canned_t;

static int32_t canned_send(void *ctx, const uint8_t *buf, size_t len)
{
    canned_t *c = ctx;
    if (c->send_fails) {
        return -1;
    }
    for (size_t i = 0; i < len && c->nsent + 1 < sizeof(c->sent); i++) {
        c->sent[c->nsent++] = (char)buf[i];
    }
    c->sent[c->nsent] = '\0';
    return (int32_t)len;
}

static int32_t canned_recv(void *ctx, uint8_t *buf, size_t len)
{
    canned_t *c = ctx;
    if (c->pos == c->len) {
        return -1; /* closed */
    }
    size_t n = c->len - c->pos < len ? c->len - c->pos : len;
    memcpy(buf, c->answer + c->pos, n);
    c->pos += n;
    return (int32_t)n;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void canned_answer(canned_t *c, const char *status, const uint8_t *body, size_t n)
{
    memset(c, 0, sizeof(*c));
    int h = snprintf((char *)c->answer, sizeof(c->answer),
                     "HTTP/1.1 %s\r\nContent-Length: %lu\r\n\r\n", status, (unsigned long)n);
    if (n > 0) { /* body may be NULL for an empty answer: memcpy must not see it */
        memcpy(c->answer + h, body, n);
    }
    c->len = (size_t)h + n;
}

/* dpm_campaign_fetch against each kind of answer: a campaign, 404, 503, bytes that are not a
 * campaign, a campaign that must not run, a connection that closes or cannot send. *m changes
 * only on success. */
static void test_campaign_fetch_answers(void **state)
{
    (void)state;
    fake_clock_t fc = {1000, 1, 0};
    dpm_clock_t clk = fake_clock_port(&fc);
    static canned_t can;
    dpm_transport_t t = {canned_send, canned_recv, &can};
    static uint8_t work[DPM_CAMPAIGN_MAX_BYTES + 512u];
    static dpm_mech_t m, keep;
    const char *why = NULL;
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 4711;
    c.mechanism = DPM_MECH_ID_TUPLE_MR;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(1);
    c.groups = 2;
    c.nmetrics = 1;
    c.metrics[0] = DPM_METRIC_TPR;
    uint8_t body[DPM_CAMPAIGN_MAX_BYTES];
    size_t n = 0;
    assert_int_equal(dpm_campaign_encode(&c, body, sizeof(body), &n), DPM_OK);
    memset(&m, 0x4E, sizeof(m));
    keep = m;

    canned_answer(&can, "404 Not Found", NULL, 0);
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 4711, 100, work, sizeof(work), &m, &why),
                     DPM_ERR_PROTOCOL);
    assert_string_equal(why, "unknown campaign");
    assert_true(starts_with(can.sent, "GET /v1/campaigns/4711 HTTP/1.1\r\n"));
    /* "later" (the app uses its kept copy meanwhile), "not this credential", or a refusal */
    static const struct {
        const char *status;
        dpm_status_t want;
        const char *why;
    } answers[] = {{"503 Service Unavailable", DPM_ERR_TRANSPORT, "retry later"},
                   {"429 Too Many Requests", DPM_ERR_TRANSPORT, "retry later"},
                   {"500 Internal Server Error", DPM_ERR_TRANSPORT, "retry later"},
                   {"408 Request Timeout", DPM_ERR_TRANSPORT, "retry later"},
                   {"401 Unauthorized", DPM_ERR_AUTH, "credential"},
                   {"403 Forbidden", DPM_ERR_AUTH, "credential"},
                   {"400 Bad Request", DPM_ERR_PROTOCOL, "collector refused the request"},
                   {"301 Moved Permanently", DPM_ERR_PROTOCOL, "collector refused the request"}};
    for (size_t i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
        canned_answer(&can, answers[i].status, NULL, 0);
        why = NULL;
        dpm_status_t st =
            dpm_campaign_fetch(&t, &clk, "h", 4711, 100, work, sizeof(work), &m, &why);
        if (st != answers[i].want || why == NULL || strstr(why, answers[i].why) == NULL) {
            fail_msg("%s: %d (%s)", answers[i].status, st, why != NULL ? why : "no reason");
        }
    }
    canned_answer(&can, "200 OK", (const uint8_t *)"\xff\xff\xff", 3);
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 4711, 100, work, sizeof(work), &m, &why),
                     DPM_ERR_PROTOCOL);
    dpm_campaign_t zero_eps = c;
    zero_eps.eps = DPM_EPS_Q16(0);
    uint8_t bad[DPM_CAMPAIGN_MAX_BYTES];
    size_t nbad = 0;
    assert_int_equal(dpm_campaign_encode(&zero_eps, bad, sizeof(bad), &nbad), DPM_OK);
    canned_answer(&can, "200 OK", bad, nbad);
    assert_int_not_equal(dpm_campaign_fetch(&t, &clk, "h", 4711, 100, work, sizeof(work), &m, &why),
                         DPM_OK);
    canned_answer(&can, "200 OK", body, n);
    can.len = can.len / 2; /* the connection closes halfway through the answer */
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 4711, 100, work, sizeof(work), &m, &why),
                     DPM_ERR_TRANSPORT);
    canned_answer(&can, "200 OK", body, n);
    can.send_fails = 1;
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 4711, 100, work, sizeof(work), &m, &why),
                     DPM_ERR_TRANSPORT);
    assert_memory_equal(&m, &keep, sizeof(m));

    /* positive control: the campaign itself; id 0 is spelled "0" in the path */
    canned_answer(&can, "200 OK", body, n);
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 4711, 100, work, sizeof(work), &m, &why),
                     DPM_OK);
    assert_int_equal(m.campaign.id, 4711);
    assert_int_equal(m.campaign.mechanism, DPM_MECH_ID_TUPLE_MR);
    size_t len = 0;
    canned_answer(&can, "200 OK", body, n);
    assert_int_equal(dpm_campaign_get(&t, &clk, "h", 4711, 100, work, sizeof(work), &len, &why),
                     DPM_OK);
    assert_true(len == n && memcmp(work, body, n) == 0);
    /* a collector answering a request for campaign 0 with campaign 4711 (another id, its own
     * budget): refused, by get and by fetch */
    canned_answer(&can, "200 OK", body, n);
    len = 12345;
    assert_int_equal(dpm_campaign_get(&t, &clk, "h", 0, 100, work, sizeof(work), &len, &why),
                     DPM_ERR_PROTOCOL);
    assert_string_equal(why, "the collector answered with another campaign than the one requested");
    assert_int_equal(len, 12345);
    assert_true(starts_with(can.sent, "GET /v1/campaigns/0 HTTP/1.1\r\n"));
    canned_answer(&can, "200 OK", body, n);
    assert_int_equal(dpm_campaign_fetch(&t, &clk, "h", 4712, 100, work, sizeof(work), &m, &why),
                     DPM_ERR_PROTOCOL);
    assert_int_equal(m.campaign.id, 4711); /* the earlier fetch's, untouched */
    /* campaign 0, asked for as 0 (spelled "0" in the path) */
    dpm_campaign_t zero = c;
    zero.id = 0;
    assert_int_equal(dpm_campaign_encode(&zero, body, sizeof(body), &n), DPM_OK);
    canned_answer(&can, "200 OK", body, n);
    assert_int_equal(dpm_campaign_get(&t, &clk, "h", 0, 100, work, sizeof(work), &len, &why),
                     DPM_OK);
    assert_true(len == n && memcmp(work, body, n) == 0);
}

static void test_soft_float_edges(void **state)
{
    (void)state;
    dpm_xf_t zero = dpm_xf_from_u64(0);
    dpm_xf_t three = dpm_xf_from_u64(3);
    assert_int_equal(zero.m, 0);
    assert_int_equal(dpm_xf_mul_down(zero, three).m, 0);
    assert_int_equal(dpm_xf_mul_up(three, zero).m, 0);
    dpm_xf_t s = dpm_xf_add_down(zero, three);
    assert_true(s.m == three.m && s.e == three.e);
    s = dpm_xf_add_up(three, zero);
    assert_true(s.m == three.m && s.e == three.e);
    assert_int_equal(dpm_xf_half(zero).m, 0);
    assert_int_equal(dpm_xf_ge_ratio(zero, 0, 1), 1); /* 0 >= 0 */
    assert_int_equal(dpm_xf_ge_ratio(zero, 1, 1), 0);
    assert_int_equal(dpm_xf_to_u64_down(zero), 0);
    assert_int_equal(dpm_xf_to_u64_up(zero), 0);
    assert_int_equal(dpm_xf_pow2_div_down(10, zero), UINT64_MAX); /* saturates */
    assert_int_equal(dpm_xf_pow2_div_up(10, zero), UINT64_MAX);
    /* 2^200 / 3 does not fit: saturates; 2^-70 * 3 rounds to 0 down, 1 up */
    assert_int_equal(dpm_xf_pow2_div_down(200, three), UINT64_MAX);
    dpm_xf_t tiny = three;
    tiny.e -= 70;
    assert_int_equal(dpm_xf_to_u64_down(tiny), 0);
    assert_int_equal(dpm_xf_to_u64_up(tiny), 1);
    /* a huge value saturates both ways */
    dpm_xf_t huge = three;
    huge.e += 70;
    assert_int_equal(dpm_xf_to_u64_down(huge), UINT64_MAX);
    assert_int_equal(dpm_xf_to_u64_up(huge), UINT64_MAX);
    /* the largest mantissa rounded up carries into the exponent */
    dpm_xf_t top = dpm_xf_from_u64(UINT64_MAX);
    dpm_xf_t up = dpm_xf_mul_up(top, top); /* (2^64 - 1)^2 is not a 64-bit mantissa */
    dpm_xf_t down = dpm_xf_mul_down(top, top);
    assert_true(dpm_xf_ge(up, down) && !dpm_xf_ge(down, up));
    /* exp(0) is exactly 1 both ways; exp of a huge argument still brackets */
    assert_int_equal(dpm_xf_to_u64_down(dpm_xexp_down(0, 0)), 1);
    assert_int_equal(dpm_xf_to_u64_up(dpm_xexp_up(0, 0)), 1);
    assert_true(dpm_xf_ge(dpm_xexp_up(40, UINT64_MAX), dpm_xexp_down(40, UINT64_MAX)));
    dpm_eps_t q = 5;
    assert_int_equal(dpm_xf_ln_up_q16(1, 0, &q), DPM_ERR_PARAM);
    assert_int_equal(dpm_xf_ln_up_q16(1, 1, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_xf_ln_up_q16(3, 5, &q), DPM_OK);
    assert_int_equal(q, 0); /* ln of a ratio below 1, rounded up, is 0 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samplers_when_the_source_runs_dry),
        cmocka_unit_test(test_laplace_refuses_a_corrupted_mechanism),
        cmocka_unit_test(test_sampler_and_rand_arguments),
        cmocka_unit_test(test_stats_and_eps_arguments),
        cmocka_unit_test(test_campaign_and_report_arguments),
        cmocka_unit_test(test_tuple_and_roc_hist_arguments),
        cmocka_unit_test(test_http_and_fetch_arguments),
        cmocka_unit_test(test_campaign_fetch_answers),
        cmocka_unit_test(test_soft_float_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
