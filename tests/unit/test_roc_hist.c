/* SPDX-License-Identifier: Apache-2.0 */
/* Device side of roc_hist: configuration, binning at the edges, bad input leaves everything
 * untouched, count overflow, the noise equals dpm_laplace_add draws in the documented order,
 * the int32 range error, the wire format (64 bins, the exact size bound, malformed bodies),
 * campaign validation with reasons, and the parameter fingerprint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/report.h"
#include "test_receipt.h"
#include "dpm/expert/roc_hist.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/stats.h"
#include "test_rng.h"

#define ONE (UINT32_C(1) << 31) /* score 1.0 in Q1.31 */
/* params_hash of roc_campaign(4) (edges k/5, ε = 1), as computed at the time of writing */
#define ROC_HASH_PINNED 0x5183d9b1u

/* 63 evenly spaced edges k / 64 (k = 1..63): the largest histogram, 64 bins. */
static void even_edges(uint32_t *edges, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        edges[i] = (uint32_t)(((uint64_t)(i + 1) << 31) / (n + 1));
    }
}

static dpm_campaign_t roc_campaign(uint32_t n_edges)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 11;
    c.mechanism = DPM_MECH_ID_ROC_HIST;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(2);
    c.period_seconds = 86400;
    c.nbins = n_edges;
    even_edges(c.bin_edges, n_edges);
    return c;
}

static void test_init_and_bad_parameters(void **state)
{
    (void)state;
    const uint32_t edges[3] = {ONE / 4, ONE / 2, ONE};
    dpm_roc_hist_t m;
    assert_int_equal(dpm_roc_hist_init(&m, edges, 3, DPM_EPS_ONE / 2), DPM_OK);
    assert_int_equal(m.bins.count, 4);
    assert_memory_equal(m.bins.edges, edges, sizeof(edges));
    assert_int_equal(m.bins.edges[3], 0);
    assert_int_equal(m.eps, DPM_EPS_ONE / 2);
    assert_int_equal(m.eps_implemented, DPM_EPS_ONE / 2); /* exact: no rounding */
    /* scale 2 / 0.5 = 4 counts, as the reduced rational the sampler uses */
    assert_int_equal(m.lap.sensitivity, 2);
    assert_int_equal(m.lap.scale_num, 4);
    assert_int_equal(m.lap.scale_den, 1);
    /* ε = 0.3 (19660 / 65536): scale 2 * 65536 / 19660 = 32768 / 4915 */
    assert_int_equal(dpm_roc_hist_init(&m, edges, 1, 19660), DPM_OK);
    assert_int_equal(m.bins.count, 2);
    assert_int_equal(m.lap.scale_num, 32768);
    assert_int_equal(m.lap.scale_den, 4915);

    uint32_t many[DPM_MAX_BINS];
    even_edges(many, DPM_MAX_BINS - 1);
    assert_int_equal(dpm_roc_hist_init(&m, many, DPM_MAX_BINS - 1, DPM_EPS_ONE), DPM_OK);
    assert_int_equal(m.bins.count, DPM_MAX_BINS);

    dpm_roc_hist_t keep;
    memset(&m, 0x5A, sizeof(m));
    keep = m;
    const uint32_t unsorted[3] = {10, 30, 20};
    const uint32_t repeated[3] = {10, 20, 20};
    const uint32_t above_one[2] = {10, ONE + 1};
    many[DPM_MAX_BINS - 1] = ONE;
    assert_int_equal(dpm_roc_hist_init(NULL, edges, 3, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init(&m, NULL, 3, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init(&m, edges, 0, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init(&m, many, DPM_MAX_BINS, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init(&m, unsorted, 3, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init(&m, repeated, 3, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init(&m, above_one, 2, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init(&m, edges, 3, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init(&m, edges, 3, DPM_EPS_MAX_Q16 + 1), DPM_ERR_PARAM);
    assert_memory_equal(&m, &keep, sizeof(m));
    /* the largest ε is fine */
    assert_int_equal(dpm_roc_hist_init(&m, edges, 3, DPM_EPS_MAX_Q16), DPM_OK);
}

static void test_binning_at_edges(void **state)
{
    (void)state;
    const uint32_t edges[3] = {ONE / 4, ONE / 2, ONE};
    dpm_roc_hist_t m;
    assert_int_equal(dpm_roc_hist_init(&m, edges, 3, DPM_EPS_ONE), DPM_OK);
    const struct {
        uint32_t score;
        uint32_t bin;
    } cases[] = {
        {0, 0},       {ONE / 4 - 1, 0}, {ONE / 4, 1}, {ONE / 4 + 1, 1}, {ONE / 2 - 1, 1},
        {ONE / 2, 2}, {ONE - 1, 2},     {ONE, 3}, /* exactly 1.0 sits on the last edge */
    };
    dpm_score_hist_t h;
    assert_int_equal(dpm_score_hist_init(&h, &m.bins), DPM_OK);
    assert_int_equal(h.bins, 4);
    uint32_t expect_pos[4] = {0}, expect_neg[4] = {0};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        uint32_t b = 99;
        assert_int_equal(dpm_score_bin(&m.bins, cases[i].score, &b), DPM_OK);
        assert_int_equal(b, cases[i].bin);
        int label = (int)(i & 1u);
        assert_int_equal(dpm_score_hist_add(&h, &m.bins, cases[i].score, label), DPM_OK);
        if (label) {
            expect_pos[cases[i].bin]++;
        } else {
            expect_neg[cases[i].bin]++;
        }
    }
    assert_memory_equal(h.pos, expect_pos, sizeof(expect_pos));
    assert_memory_equal(h.neg, expect_neg, sizeof(expect_neg));

    /* an edge at 0: score 0 is already in bin 1, bin 0 stays empty */
    const uint32_t zero_edge[2] = {0, ONE};
    assert_int_equal(dpm_roc_hist_init(&m, zero_edge, 2, DPM_EPS_ONE), DPM_OK);
    uint32_t b = 99;
    assert_int_equal(dpm_score_bin(&m.bins, 0, &b), DPM_OK);
    assert_int_equal(b, 1);
    assert_int_equal(dpm_score_bin(&m.bins, ONE - 1, &b), DPM_OK);
    assert_int_equal(b, 1);
    assert_int_equal(dpm_score_bin(&m.bins, ONE, &b), DPM_OK);
    assert_int_equal(b, 2);
    /* a score above 1.0 is an error; *bin untouched */
    b = 99;
    assert_int_equal(dpm_score_bin(&m.bins, ONE + 1, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_score_bin(&m.bins, UINT32_MAX, &b), DPM_ERR_PARAM);
    assert_int_equal(b, 99);

    /* 64 bins: each edge starts its own bin */
    uint32_t many[DPM_MAX_BINS - 1];
    even_edges(many, DPM_MAX_BINS - 1);
    assert_int_equal(dpm_roc_hist_init(&m, many, DPM_MAX_BINS - 1, DPM_EPS_ONE), DPM_OK);
    for (uint32_t i = 0; i < DPM_MAX_BINS - 1; i++) {
        assert_int_equal(dpm_score_bin(&m.bins, many[i], &b), DPM_OK);
        assert_int_equal(b, i + 1);
        assert_int_equal(dpm_score_bin(&m.bins, many[i] - 1, &b), DPM_OK);
        assert_int_equal(b, i);
    }
}

static void test_add_bad_parameters_leave_hist_untouched(void **state)
{
    (void)state;
    const uint32_t edges[2] = {ONE / 3, 2 * (ONE / 3)};
    dpm_roc_hist_t m, m4;
    assert_int_equal(dpm_roc_hist_init(&m, edges, 2, DPM_EPS_ONE), DPM_OK);
    const uint32_t edges3[3] = {1, 2, 3};
    assert_int_equal(dpm_roc_hist_init(&m4, edges3, 3, DPM_EPS_ONE), DPM_OK);
    dpm_score_hist_t h;
    assert_int_equal(dpm_score_hist_init(&h, &m.bins), DPM_OK);
    assert_int_equal(dpm_score_hist_add(&h, &m.bins, ONE / 2, 1), DPM_OK);
    dpm_score_hist_t keep = h;
    assert_int_equal(dpm_score_hist_add(&h, &m.bins, ONE / 2, 2), DPM_ERR_PARAM);
    assert_int_equal(dpm_score_hist_add(&h, &m.bins, ONE / 2, -1), DPM_ERR_PARAM);
    assert_int_equal(dpm_score_hist_add(&h, &m.bins, ONE + 1, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_score_hist_add(&h, &m4.bins, ONE / 2, 0), DPM_ERR_PARAM); /* bins differ */
    assert_int_equal(dpm_score_hist_add(NULL, &m.bins, ONE / 2, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_score_hist_add(&h, NULL, ONE / 2, 0), DPM_ERR_PARAM);
    dpm_roc_hist_t broken = m;
    broken.bins.count = DPM_MAX_BINS + 1; /* corrupted: would read past the arrays */
    assert_int_equal(dpm_score_hist_add(&h, &broken.bins, ONE / 2, 0), DPM_ERR_PARAM);
    assert_memory_equal(&h, &keep, sizeof(h));
    /* init refuses a corrupted mechanism and leaves h alone */
    assert_int_equal(dpm_score_hist_init(&h, &broken.bins), DPM_ERR_PARAM);
    broken.bins.count = 1;
    assert_int_equal(dpm_score_hist_init(&h, &broken.bins), DPM_ERR_PARAM);
    assert_int_equal(dpm_score_hist_init(NULL, &m.bins), DPM_ERR_PARAM);
    assert_memory_equal(&h, &keep, sizeof(h));
}

static void test_add_overflow(void **state)
{
    (void)state;
    const uint32_t edges[1] = {ONE / 2};
    dpm_roc_hist_t m;
    assert_int_equal(dpm_roc_hist_init(&m, edges, 1, DPM_EPS_ONE), DPM_OK);
    dpm_score_hist_t h;
    assert_int_equal(dpm_score_hist_init(&h, &m.bins), DPM_OK);
    h.pos[1] = DPM_SCORE_HIST_MAX_COUNT - 1;
    h.neg[1] = DPM_SCORE_HIST_MAX_COUNT;
    assert_int_equal(dpm_score_hist_add(&h, &m.bins, ONE, 1), DPM_OK); /* reaches the maximum */
    assert_int_equal(h.pos[1], DPM_SCORE_HIST_MAX_COUNT);
    dpm_score_hist_t keep = h;
    assert_int_equal(dpm_score_hist_add(&h, &m.bins, ONE, 1), DPM_ERR_RANGE);
    assert_int_equal(dpm_score_hist_add(&h, &m.bins, ONE / 2, 0), DPM_ERR_RANGE);
    assert_memory_equal(&h, &keep, sizeof(h));
    /* the other cells still count */
    assert_int_equal(dpm_score_hist_add(&h, &m.bins, 0, 0), DPM_OK);
    assert_int_equal(dpm_score_hist_add(&h, &m.bins, 0, 1), DPM_OK);
    assert_int_equal(h.neg[0], 1);
    assert_int_equal(h.pos[0], 1);
    assert_int_equal(h.pos[1], DPM_SCORE_HIST_MAX_COUNT);
    assert_int_equal(h.neg[1], DPM_SCORE_HIST_MAX_COUNT);
}

/* A histogram with distinct counts in every cell, from real add calls. */
static void fill_hist(dpm_score_hist_t *h, const dpm_roc_hist_t *m)
{
    assert_int_equal(dpm_score_hist_init(h, &m->bins), DPM_OK);
    for (uint32_t b = 0; b < m->bins.count; b++) {
        uint32_t score = b == 0 ? 0 : m->bins.edges[b - 1];
        for (uint32_t k = 0; k < b + 1; k++) {
            assert_int_equal(dpm_score_hist_add(h, &m->bins, score, 1), DPM_OK);
        }
        for (uint32_t k = 0; k < 2 * b + 3; k++) {
            assert_int_equal(dpm_score_hist_add(h, &m->bins, score, 0), DPM_OK);
        }
    }
}

static void test_perturb_is_hist_plus_laplace_draws_in_order(void **state)
{
    (void)state;
    uint32_t edges[DPM_MAX_BINS - 1];
    even_edges(edges, DPM_MAX_BINS - 1);
    const uint32_t n_edges[] = {1, 4, DPM_MAX_BINS - 1};
    const dpm_eps_t eps[] = {DPM_EPS_ONE, DPM_EPS_ONE / 4, 3 * DPM_EPS_ONE};
    for (size_t k = 0; k < 3; k++) {
        uint32_t e[DPM_MAX_BINS - 1];
        even_edges(e, n_edges[k]);
        dpm_roc_hist_t m;
        assert_int_equal(dpm_roc_hist_init(&m, e, n_edges[k], eps[k]), DPM_OK);
        dpm_score_hist_t h;
        fill_hist(&h, &m);
        test_rng_t t1, t2;
        dpm_rng_t p1, p2;
        dpm_rand_t r1, r2;
        assert_int_equal(test_rand_init(&r1, &t1, &p1, 100 + k), DPM_OK);
        assert_int_equal(test_rand_init(&r2, &t2, &p2, 100 + k), DPM_OK);
        dpm_roc_hist_report_t out;
        memset(&out, 0x33, sizeof(out));
        assert_int_equal(dpm_roc_hist_perturb(&m, &r1, &h, &out), DPM_OK);
        assert_int_equal(out.bins, m.bins.count);
        /* the reference: one dpm_laplace_add per cell, pos[0..bins-1] then neg[0..bins-1] */
        int differs = 0;
        for (int half = 0; half < 2; half++) {
            const uint32_t *counts = half == 0 ? h.pos : h.neg;
            const int32_t *got = half == 0 ? out.pos : out.neg;
            for (uint32_t b = 0; b < m.bins.count; b++) {
                int64_t y = 0;
                assert_int_equal(dpm_laplace_add(&m.lap, &r2, (int64_t)counts[b], &y), DPM_OK);
                assert_true(y == (int64_t)got[b]);
                differs += y != (int64_t)counts[b];
            }
            for (uint32_t b = m.bins.count; b < DPM_MAX_BINS; b++) {
                assert_int_equal(got[b], 0);
            }
        }
        assert_true(differs > 0); /* noise was really added */
        assert_true(dpm_rand_bits_used(&r1) == dpm_rand_bits_used(&r2));
        /* the next draw of both streams agrees too: nothing extra was consumed */
        uint64_t w1 = 0, w2 = 0;
        assert_int_equal(dpm_rand_bits(&r1, 64, &w1), DPM_OK);
        assert_int_equal(dpm_rand_bits(&r2, 64, &w2), DPM_OK);
        assert_true(w1 == w2);
    }
}

static void test_perturb_bad_parameters_and_range(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 7), DPM_OK);
    const uint32_t edges[2] = {ONE / 3, 2 * (ONE / 3)};
    dpm_roc_hist_t m;
    assert_int_equal(dpm_roc_hist_init(&m, edges, 2, DPM_EPS_ONE), DPM_OK);
    dpm_score_hist_t h;
    fill_hist(&h, &m);
    dpm_roc_hist_report_t out, keep;
    memset(&out, 0x44, sizeof(out));
    keep = out;
    assert_int_equal(dpm_roc_hist_perturb(NULL, &r, &h, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_perturb(&m, NULL, &h, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_perturb(&m, &r, NULL, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_perturb(&m, &r, &h, NULL), DPM_ERR_PARAM);
    dpm_score_hist_t bad = h;
    bad.bins = 4;
    assert_int_equal(dpm_roc_hist_perturb(&m, &r, &bad, &out), DPM_ERR_PARAM);
    bad = h;
    bad.neg[2] = DPM_SCORE_HIST_MAX_COUNT + 1;
    assert_int_equal(dpm_roc_hist_perturb(&m, &r, &bad, &out), DPM_ERR_PARAM);
    dpm_roc_hist_t broken = m;
    broken.bins.count = DPM_MAX_BINS + 1;
    assert_int_equal(dpm_roc_hist_perturb(&broken, &r, &h, &out), DPM_ERR_PARAM);
    broken = m;
    broken.lap.sensitivity = 1; /* not the roc_hist noise */
    assert_int_equal(dpm_roc_hist_perturb(&broken, &r, &h, &out), DPM_ERR_PARAM);
    assert_memory_equal(&out, &keep, sizeof(out));
    assert_true(dpm_rand_bits_used(&r) == 0); /* nothing was drawn for a refused call */

    /* Counts at the maximum are allowed. */
    bad = h;
    bad.pos[0] = DPM_SCORE_HIST_MAX_COUNT;
    assert_int_equal(dpm_roc_hist_perturb(&m, &r, &bad, &out), DPM_OK);
    assert_true(out.pos[0] > (int32_t)(DPM_SCORE_HIST_MAX_COUNT / 2));

    /* The int32 range error: real parameters make it astronomically rare, so swap in noise
     * of scale 2^56 (a valid dpm_laplace_t, relabelled sensitivity 2): a draw lands inside
     * int32 with probability about 2^-25, so the first cell already fails. */
    broken = m;
    assert_int_equal(dpm_laplace_init(&broken.lap, UINT64_C(1) << 40, 1), DPM_OK);
    broken.lap.sensitivity = 2;
    memset(&out, 0x44, sizeof(out));
    assert_int_equal(dpm_roc_hist_perturb(&broken, &r, &h, &out), DPM_ERR_RANGE);
    assert_memory_equal(&out, &keep, sizeof(out));

    /* a failed random source is reported and leaves out untouched */
    failing_rng_t f;
    dpm_rng_t frng;
    dpm_rand_t fr;
    assert_int_equal(failing_rand_init(&fr, &f, &frng, 3, 0), DPM_OK);
    assert_int_equal(dpm_roc_hist_perturb(&m, &fr, &h, &out), DPM_ERR_RNG);
    assert_memory_equal(&out, &keep, sizeof(out));
}

static void test_report_roundtrip_64_bins(void **state)
{
    (void)state;
    test_rng_t t, t2;
    dpm_rng_t rng, rng2;
    dpm_rand_t r, r2;
    assert_int_equal(test_rand_init(&r, &t, &rng, 21), DPM_OK);
    assert_int_equal(test_rand_init(&r2, &t2, &rng2, 21), DPM_OK);
    dpm_campaign_t c = roc_campaign(DPM_MAX_BINS - 1);
    dpm_mech_t mc;
    const char *why = NULL;
    assert_int_equal(dpm_mech_init(&mc, &c, &why), DPM_OK);
    assert_int_equal(mc.params.roc_hist.bins.count, DPM_MAX_BINS);
    assert_int_equal(mc.eps_implemented, c.eps.q16);
    dpm_score_hist_t h;
    fill_hist(&h, &mc.params.roc_hist);
    dpm_report_t rep, back;
    assert_int_equal(dpm_mech_report_roc_hist(&mc, &r, TEST_RECEIPT(&mc, 5), &h, &rep), DPM_OK);
    assert_int_equal(rep.mechanism, DPM_MECH_ID_ROC_HIST);
    assert_int_equal(rep.campaign_id, 11);
    assert_int_equal(rep.period, 5);
    assert_int_equal(rep.eps, mc.eps_implemented);
    assert_int_equal(rep.params_hash, mc.params_hash);
    /* the body is dpm_roc_hist_perturb's, drawn first */
    dpm_roc_hist_report_t direct;
    assert_int_equal(dpm_roc_hist_perturb(&mc.params.roc_hist, &r2, &h, &direct), DPM_OK);
    assert_memory_equal(&rep.body.roc_hist, &direct, sizeof(direct));

    uint8_t buf[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
    memset(&back, 0x22, sizeof(back));
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
    assert_memory_equal(back.report_id, rep.report_id, DPM_REPORT_ID_BYTES);
    assert_int_equal(back.campaign_id, rep.campaign_id);
    assert_int_equal(back.period, 5);
    assert_int_equal(back.mechanism, DPM_MECH_ID_ROC_HIST);
    assert_int_equal(back.eps, rep.eps);
    assert_int_equal(back.params_hash, rep.params_hash);
    assert_int_equal(back.body.roc_hist.bins, DPM_MAX_BINS);
    assert_memory_equal(back.body.roc_hist.pos, rep.body.roc_hist.pos, sizeof(rep.body.roc_hist.pos));
    assert_memory_equal(back.body.roc_hist.neg, rep.body.roc_hist.neg, sizeof(rep.body.roc_hist.neg));
    assert_int_equal(dpm_mech_check_report(&mc, &back, &why), DPM_OK);
    assert_int_equal(dpm_report_encode(&rep, buf, len - 1, &len), DPM_ERR_BUFFER);

    /* The size bound is exact: every header field at its widest, every value -(2^31 - 1)
     * (zigzag 2^32 - 3: 5 bytes) and the largest group fill DPM_REPORT_ROC_MAX to the byte. */
    dpm_report_t worst = rep;
    worst.campaign_id = UINT32_MAX;
    worst.period = UINT32_MAX;
    worst.eps = UINT32_MAX;
    worst.params_hash = UINT32_MAX;
    memset(worst.report_id, 0xFF, sizeof(worst.report_id));
    for (uint32_t b = 0; b < DPM_MAX_BINS; b++) {
        worst.body.roc_hist.pos[b] = -INT32_MAX;
        worst.body.roc_hist.neg[b] = INT32_MAX;
    }
    worst.body.roc_hist.group = DPM_MAX_GROUPS - 1;
    assert_int_equal(dpm_report_encode(&worst, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(len, DPM_REPORT_ROC_MAX);
    assert_int_equal(DPM_REPORT_ROC_MAX, 694);
    assert_true(DPM_REPORT_ROC_MAX <= DPM_REPORT_MAX_BYTES);
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
    assert_memory_equal(&back.body.roc_hist, &worst.body.roc_hist, sizeof(worst.body.roc_hist));

    /* bins outside [2, DPM_MAX_BINS] cannot be encoded */
    worst.body.roc_hist.bins = 1;
    assert_int_equal(dpm_report_encode(&worst, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    worst.body.roc_hist.bins = DPM_MAX_BINS + 1;
    assert_int_equal(dpm_report_encode(&worst, buf, sizeof(buf), &len), DPM_ERR_PARAM);

    /* a tuple mechanism cannot make a roc_hist report */
    dpm_campaign_t tc = c;
    tc.mechanism = DPM_MECH_ID_TUPLE_MR;
    tc.groups = 2;
    tc.nmetrics = 1;
    tc.metrics[0] = DPM_METRIC_TPR;
    dpm_mech_t tm;
    assert_int_equal(dpm_mech_init(&tm, &tc, NULL), DPM_OK);
    dpm_report_t keep;
    memset(&keep, 0x19, sizeof(keep));
    rep = keep;
    assert_int_equal(dpm_mech_report_roc_hist(&tm, &r, TEST_RECEIPT(&tm, 0), &h, &rep), DPM_ERR_PARAM);
    assert_memory_equal(&rep, &keep, sizeof(rep));
}

/* A Report with a 16-byte id and a RocHistBody of np pos and nn neg zero values. */
static size_t report_with_body(uint8_t *buf, uint32_t np, uint32_t nn)
{
    size_t p = 0;
    buf[p++] = 0x0A; /* report_id */
    buf[p++] = 0x10;
    for (int i = 0; i < 16; i++) {
        buf[p++] = (uint8_t)i;
    }
    buf[p++] = 0x20; /* mechanism */
    buf[p++] = DPM_MECH_ID_ROC_HIST;
    buf[p++] = 0x5A;                                       /* field 11, length-delimited */
    uint32_t body = (np ? 2 + np : 0) + (nn ? 2 + nn : 0); /* np, nn < 128 */
    if (body >= 128) {
        buf[p++] = (uint8_t)(0x80u | (body & 0x7Fu)); /* two-byte varint */
        buf[p++] = (uint8_t)(body >> 7);
    } else {
        buf[p++] = (uint8_t)body;
    }
    if (np) {
        buf[p++] = 0x0A; /* pos, packed */
        buf[p++] = (uint8_t)np;
        for (uint32_t i = 0; i < np; i++) {
            buf[p++] = 0;
        }
    }
    if (nn) {
        buf[p++] = 0x12; /* neg, packed */
        buf[p++] = (uint8_t)nn;
        for (uint32_t i = 0; i < nn; i++) {
            buf[p++] = 0;
        }
    }
    return p;
}

static void test_report_decode_and_check_reject_bad_bodies(void **state)
{
    (void)state;
    uint8_t buf[200];
    dpm_report_t out, keep;
    memset(&out, 0x66, sizeof(out));
    keep = out;
    size_t len = report_with_body(buf, 3, 3); /* the well-formed control */
    assert_int_equal(dpm_report_decode(buf, len, &out), DPM_OK);
    assert_int_equal(out.body.roc_hist.bins, 3);
    assert_int_equal(out.mechanism, DPM_MECH_ID_ROC_HIST);
    out = keep;
    len = report_with_body(buf, 3, 2); /* pos and neg disagree */
    assert_int_equal(dpm_report_decode(buf, len, &out), DPM_ERR_PROTOCOL);
    len = report_with_body(buf, 1, 1); /* one bin is not a histogram */
    assert_int_equal(dpm_report_decode(buf, len, &out), DPM_ERR_PROTOCOL);
    len = report_with_body(buf, DPM_MAX_BINS + 1, DPM_MAX_BINS + 1); /* too many */
    assert_int_equal(dpm_report_decode(buf, len, &out), DPM_ERR_PROTOCOL);
    len = report_with_body(buf, 3, 3);
    for (size_t cut = 0; cut < len; cut++) {
        assert_int_equal(dpm_report_decode(buf, cut, &out), DPM_ERR_PROTOCOL);
    }
    assert_memory_equal(&out, &keep, sizeof(out));

    /* check_report against the campaign */
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 31), DPM_OK);
    dpm_campaign_t c = roc_campaign(4);
    dpm_mech_t mc;
    assert_int_equal(dpm_mech_init(&mc, &c, NULL), DPM_OK);
    dpm_score_hist_t h;
    fill_hist(&h, &mc.params.roc_hist);
    dpm_report_t good, bad;
    assert_int_equal(dpm_mech_report_roc_hist(&mc, &r, TEST_RECEIPT(&mc, 0), &h, &good), DPM_OK);
    const char *why = NULL;
    assert_int_equal(dpm_mech_check_report(&mc, &good, &why), DPM_OK);
    bad = good;
    bad.body.roc_hist.bins = 4;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "wrong number of bins");
    bad = good;
    bad.body.roc_hist.neg[4] = INT32_MIN;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "value out of range");
    bad = good;
    bad.params_hash ^= 1;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "parameter fingerprint mismatch");
    /* a tuple body under the roc_hist mechanism id has no bins */
    bad = good;
    memset(&bad.body.roc_hist, 0, sizeof(bad.body.roc_hist));
    bad.body.tuple.nmetrics = 1;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
}

static void test_campaign_validation_reasons(void **state)
{
    (void)state;
    dpm_mech_t m, keep;
    memset(&m, 0x77, sizeof(m));
    keep = m;
    const char *why = NULL;
    dpm_campaign_t c = roc_campaign(5);
    c.bin_edges[2] = c.bin_edges[3] + 1; /* unsorted */
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "bin edges not strictly increasing");
    c = roc_campaign(DPM_MAX_BINS - 1);
    c.nbins = DPM_MAX_BINS; /* 64 edges would be 65 bins (and do not fit a campaign) */
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "too many bins");
    c.nbins = DPM_MAX_BINS + 1;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "too many bins");
    c = roc_campaign(3);
    c.bin_edges[2] = ONE + 1; /* above score 1.0 */
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "bin edge above score 1.0 (2^31)");
    c = roc_campaign(0);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "roc_hist needs at least one bin edge");
    c = roc_campaign(3);
    c.eps = DPM_EPS_Q16(0);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "epsilon out of range");
    c.eps = DPM_EPS_Q16(DPM_EPS_MAX_Q16 + 1);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "epsilon out of range");
    c = roc_campaign(3);
    c.budget = DPM_EPS_Q16(c.eps.q16 - 1);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_BUDGET);
    assert_string_equal(why, "budget smaller than one report");
    assert_memory_equal(&m, &keep, sizeof(m)); /* nothing ran */

    /* the accepted extremes: one edge at 2^31, and 63 edges */
    c = roc_campaign(1);
    c.bin_edges[0] = ONE;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    assert_int_equal(m.params.roc_hist.bins.count, 2);
    c = roc_campaign(DPM_MAX_BINS - 1);
    c.bin_edges[DPM_MAX_BINS - 2] = ONE;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    assert_int_equal(m.params.roc_hist.bins.count, DPM_MAX_BINS);

    /* a roc_hist campaign survives the wire */
    uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    dpm_campaign_t back;
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_campaign_decode(buf, len, &back, &why), DPM_OK);
    assert_memory_equal(&back, &c, sizeof(c));
}

static void test_fingerprint_tracks_edges_and_eps(void **state)
{
    (void)state;
    dpm_campaign_t c = roc_campaign(4);
    dpm_mech_t a, b;
    assert_int_equal(dpm_mech_init(&a, &c, NULL), DPM_OK);
    assert_int_equal(dpm_mech_init(&b, &c, NULL), DPM_OK);
    assert_int_equal(a.params_hash, b.params_hash);
    /* Pinned: the collector recomputes this on another machine; it must not drift. */
    assert_int_equal(a.params_hash, ROC_HASH_PINNED);
    /* fields the mechanism does not use do not change it */
    dpm_campaign_t same = c;
    same.id = 99;
    same.frac_bits = 5;
    same.ustat_k = 7; /* another mechanism's parameter */
    same.budget = DPM_EPS(9);
    assert_int_equal(dpm_mech_init(&b, &same, NULL), DPM_OK);
    assert_int_equal(b.params_hash, a.params_hash);
    dpm_campaign_t d = c;
    d.bin_edges[1] += 1; /* one edge moved by 2^-31 */
    assert_int_equal(dpm_mech_init(&b, &d, NULL), DPM_OK);
    assert_int_not_equal(b.params_hash, a.params_hash);
    d = c;
    d.eps.q16 += 1; /* ε moved by 2^-16 */
    assert_int_equal(dpm_mech_init(&b, &d, NULL), DPM_OK);
    assert_int_not_equal(b.params_hash, a.params_hash);
    d = roc_campaign(5); /* one bin more */
    assert_int_equal(dpm_mech_init(&b, &d, NULL), DPM_OK);
    assert_int_not_equal(b.params_hash, a.params_hash);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_and_bad_parameters),
        cmocka_unit_test(test_binning_at_edges),
        cmocka_unit_test(test_add_bad_parameters_leave_hist_untouched),
        cmocka_unit_test(test_add_overflow),
        cmocka_unit_test(test_perturb_is_hist_plus_laplace_draws_in_order),
        cmocka_unit_test(test_perturb_bad_parameters_and_range),
        cmocka_unit_test(test_report_roundtrip_64_bins),
        cmocka_unit_test(test_report_decode_and_check_reject_bad_bodies),
        cmocka_unit_test(test_campaign_validation_reasons),
        cmocka_unit_test(test_fingerprint_tracks_edges_and_eps),
    };
    return cmocka_run_group_tests_name("roc_hist", tests, NULL, NULL);
}
