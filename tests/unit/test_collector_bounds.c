/* SPDX-License-Identifier: Apache-2.0 */
/* host-sim/collector/bounds.c: the honest-report bounds.
 *   - k(t, 2^-40) against the discrete Laplace tail computed independently (long double sums of
 *     the pmf), at k (<= 2^-40) and k - 1 (> 2^-40: k is the smallest);
 *   - the Chernoff sum bound against the exact distribution of the sum of 2B cells (long
 *     double convolution): valid, and not loose by more than a factor 2;
 *   - the checks at their edges (inside accepted, one past rejected, INT32_MAX rejected) and
 *     class_l1_max against a brute-force search;
 *   - 200000 honest reports made by the SDK (tuple_ml, roc_hist at its max_examples): none
 *     rejected. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collector/bounds.h"
#include "dpm/report.h"
#include "test_receipt.h"
#include "test_rng.h"

#define LOG2_DELTA (-40.0)

/* Pr[|Z| > k] for Pr[Z = z] = (1 - p) / (1 + p) p^|z|, summed term by term. */
static long double tail_sum(long double t, int64_t k)
{
    long double p = expl(-1.0L / t), c = (1.0L - p) / (1.0L + p), s = 0.0L;
    long double term = c * powl(p, (long double)(k + 1));
    for (int64_t z = k + 1; term > 1e-40L * s || z < k + 100; z++) {
        s += term;
        term *= p;
        if (z > k + 100000000) {
            break;
        }
    }
    return 2.0L * s;
}

static void test_single_cell_bound(void **state)
{
    (void)state;
    const double scales[] = {0.5, 1.0, 2.0, 4.0, 20.0, 131072.0, 2621440.0};
    for (size_t i = 0; i < sizeof(scales) / sizeof(scales[0]); i++) {
        double t = scales[i];
        int64_t k = coll_dlap_tail_bound(t, LOG2_DELTA);
        assert_true(k > 0);
        long double delta = ldexpl(1.0L, -40);
        long double at_k = t < 1000 ? tail_sum(t, k) : 2.0L * powl(expl(-1.0L / t), k + 1) /
                                                           (1.0L + expl(-1.0L / t));
        long double below = t < 1000 ? tail_sum(t, k - 1)
                                     : 2.0L * powl(expl(-1.0L / t), k) / (1.0L + expl(-1.0L / t));
        print_message("# t = %g: k = %lld, Pr[|Z| > k] = 2^%.3f, Pr[|Z| > k-1] = 2^%.3f\n", t,
                      (long long)k, (double)log2l(at_k), (double)log2l(below));
        assert_true(at_k <= delta);
        assert_true(below > delta);
        /* the closed form agrees with the sum */
        assert_true(fabs(coll_dlap_tail_log2(t, k) - (double)log2l(at_k)) < 1e-6);
    }
    assert_int_equal(coll_dlap_tail_bound(0.0, LOG2_DELTA), -1);
    assert_int_equal(coll_dlap_tail_bound(NAN, LOG2_DELTA), -1);
}

/* The exact distribution of the sum of n cells of scale t, on [-R n, R n]. */
static long double sum_tail(double t, uint32_t n, int64_t T)
{
    const int R = 600;
    long double p = expl(-1.0L / t), c = (1.0L - p) / (1.0L + p);
    int width = 2 * R + 1;
    long double *one = calloc((size_t)width, sizeof(long double));
    long double *acc = calloc((size_t)(width * (int)n), sizeof(long double));
    long double *next = calloc((size_t)(width * (int)n), sizeof(long double));
    for (int z = -R; z <= R; z++) {
        one[z + R] = c * powl(p, (long double)abs(z));
    }
    memcpy(acc, one, (size_t)width * sizeof(long double));
    int len = width; /* acc covers [-R m, R m], len = 2 R m + 1 */
    for (uint32_t m = 1; m < n; m++) {
        int nlen = len + width - 1;
        memset(next, 0, (size_t)nlen * sizeof(long double));
        for (int a = 0; a < len; a++) {
            for (int b = 0; b < width; b++) {
                next[a + b] += acc[a] * one[b];
            }
        }
        memcpy(acc, next, (size_t)nlen * sizeof(long double));
        len = nlen;
    }
    long double tail = 0.0L;
    int mid = len / 2;
    for (int i = 0; i < len; i++) {
        if (abs(i - mid) > T) {
            tail += acc[i];
        }
    }
    free(one);
    free(acc);
    free(next);
    return tail;
}

static void test_sum_bound(void **state)
{
    (void)state;
    const uint32_t ns[] = {2, 6, 12};
    for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
        double t = 2.0; /* roc_hist at eps = 1 */
        int64_t T = coll_dlap_sum_bound(t, ns[i], LOG2_DELTA);
        long double at = sum_tail(t, ns[i], T), half = sum_tail(t, ns[i], T / 2);
        print_message("# n = %u cells of scale 2: T = %lld, Pr[|S| > T] = 2^%.2f, "
                      "Pr[|S| > T/2] = 2^%.2f\n",
                      ns[i], (long long)T, (double)log2l(at), (double)log2l(half));
        assert_true(at <= ldexpl(1.0L, -40));
        assert_true(half > ldexpl(1.0L, -40)); /* Chernoff is not loose by 2x */
    }
}

static void make_mech(dpm_mech_t *m, dpm_mech_id_t mech, uint32_t nmetrics, uint32_t bins)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 7;
    c.mechanism = mech;
    assert_int_equal(dpm_eps_from_decimal("1", &c.eps.q16), DPM_OK);
    c.budget = c.eps;
    c.period_seconds = 86400;
    if (mech == DPM_MECH_ID_ROC_HIST) {
        c.nbins = bins - 1;
        for (uint32_t b = 0; b + 1 < bins; b++) {
            c.bin_edges[b] = (uint32_t)(((uint64_t)(b + 1) << 31) / bins);
        }
    } else {
        c.groups = 4;
        c.nmetrics = nmetrics;
        c.metrics[0] = DPM_METRIC_TPR;
        c.metrics[1] = DPM_METRIC_FPR;
        c.frac_bits = DPM_FRAC_BITS;
    }
    const char *why = "";
    assert_int_equal(dpm_mech_init(m, &c, &why), DPM_OK);
}

static void test_tuple_ml_edges(void **state)
{
    (void)state;
    dpm_mech_t m;
    make_mech(&m, DPM_MECH_ID_TUPLE_ML, 2, 0);
    coll_bounds_t b;
    assert_int_equal(coll_bounds_init(&b, &m, 0), 0);
    double t = (double)m.params.tuple.value.lap.scale_num / (double)m.params.tuple.value.lap.scale_den;
    assert_int_equal(b.value_max, (1 << DPM_FRAC_BITS) + coll_dlap_tail_bound(t, -41.0));
    assert_true(b.fail_log2 <= -40.0);
    print_message("# tuple_ml eps 1, 2 metrics: |value| <= %lld grid units (%.2f on the value "
                  "scale [-1, 1])\n",
                  (long long)b.value_max, (double)b.value_max / (1 << DPM_FRAC_BITS));
    dpm_report_t r;
    memset(&r, 0, sizeof(r));
    r.mechanism = DPM_MECH_ID_TUPLE_ML;
    r.body.tuple.nmetrics = 2;
    const char *why = NULL;
    const int64_t values[] = {b.value_max, -b.value_max, 0};
    for (size_t i = 0; i < 3; i++) {
        r.body.tuple.value[1] = (int32_t)values[i];
        assert_int_equal(coll_bounds_check(&b, &r, &why), 0);
    }
    const int64_t bad[] = {b.value_max + 1, -b.value_max - 1, INT32_MAX, -INT32_MAX};
    for (size_t i = 0; i < 4; i++) {
        r.body.tuple.value[0] = (int32_t)bad[i];
        why = NULL;
        assert_int_equal(coll_bounds_check(&b, &r, &why), -1);
        assert_string_equal(why, "value out of range");
        r.body.tuple.value[0] = 0;
    }
}

/* max of |a| + |b| over cells a, b in [lo, hi] with a + b in [slo, shi]. */
static int64_t brute_l1(const coll_bounds_t *b)
{
    int64_t best = 0;
    for (int64_t x = b->cell_lo; x <= b->cell_hi; x++) {
        for (int64_t y = b->cell_lo; y <= b->cell_hi; y++) {
            if (x + y >= b->class_lo && x + y <= b->class_hi && llabs(x) + llabs(y) > best) {
                best = llabs(x) + llabs(y);
            }
        }
    }
    return best;
}

static void test_roc_hist_edges(void **state)
{
    (void)state;
    dpm_mech_t m;
    make_mech(&m, DPM_MECH_ID_ROC_HIST, 0, 2);
    coll_bounds_t b;
    assert_int_equal(coll_bounds_init(&b, &m, 40), 0);
    assert_int_equal(b.class_l1_max, brute_l1(&b));
    make_mech(&m, DPM_MECH_ID_ROC_HIST, 0, 6);
    assert_int_equal(coll_bounds_init(&b, &m, 40), 0);
    print_message("# roc_hist eps 1, 6 bins, max_examples 40: cell [%lld, %lld], class sum "
                  "[%lld, %lld], total [%lld, %lld], L = %lld\n",
                  (long long)b.cell_lo, (long long)b.cell_hi, (long long)b.class_lo,
                  (long long)b.class_hi, (long long)b.total_lo, (long long)b.total_hi,
                  (long long)b.class_l1_max);
    dpm_report_t r;
    memset(&r, 0, sizeof(r));
    r.mechanism = DPM_MECH_ID_ROC_HIST;
    r.body.roc_hist.bins = 6;
    const char *why = NULL;
    r.body.roc_hist.pos[0] = (int32_t)b.cell_hi;
    assert_int_equal(coll_bounds_check(&b, &r, &why), 0);
    r.body.roc_hist.pos[0] = (int32_t)b.cell_hi + 1;
    assert_int_equal(coll_bounds_check(&b, &r, &why), -1);
    assert_string_equal(why, "histogram cell out of range");
    r.body.roc_hist.pos[0] = INT32_MAX;
    assert_int_equal(coll_bounds_check(&b, &r, &why), -1);
    /* every cell at its top passes the cell check but not the sums */
    for (int i = 0; i < 6; i++) {
        r.body.roc_hist.pos[i] = (int32_t)b.cell_hi;
    }
    assert_int_equal(coll_bounds_check(&b, &r, &why), -1);
    assert_string_equal(why, "histogram sum out of range");
    /* the class sums each inside, but together above the total */
    memset(r.body.roc_hist.pos, 0, sizeof(r.body.roc_hist.pos));
    r.body.roc_hist.pos[0] = (int32_t)(b.cell_hi);
    r.body.roc_hist.neg[0] = (int32_t)(b.cell_hi);
    int expect = 2 * b.cell_hi > b.total_hi ? -1 : 0;
    assert_int_equal(coll_bounds_check(&b, &r, &why), expect);
}

/* Honest reports made by the SDK never fail the checks (2^-40 per report; 10^5 of each). */
static void test_honest_reports_pass(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &port, 20261124), DPM_OK);
    dpm_mech_t m;
    coll_bounds_t b;
    const char *why = NULL;
    make_mech(&m, DPM_MECH_ID_TUPLE_ML, 2, 0);
    assert_int_equal(coll_bounds_init(&b, &m, 0), 0);
    const dpm_ratio_t extreme[2][2] = {{{1, 1}, {0, 1}}, {{0, 1}, {1, 1}}};
    int32_t widest = 0;
    for (int i = 0; i < 100000; i++) {
        dpm_report_t rep;
        assert_int_equal(dpm_mech_report_tuple(&m, &r, TEST_RECEIPT(&m, 0), (uint32_t)i % 4, extreme[i % 2], &rep),
                         DPM_OK);
        assert_int_equal(coll_bounds_check(&b, &rep, &why), 0);
        for (int k = 0; k < 2; k++) {
            widest = abs(rep.body.tuple.value[k]) > widest ? abs(rep.body.tuple.value[k]) : widest;
        }
    }
    print_message("# 100000 honest tuple_ml reports: widest |value| %d of %lld allowed\n", widest,
                  (long long)b.value_max);
    make_mech(&m, DPM_MECH_ID_ROC_HIST, 0, 6);
    assert_int_equal(coll_bounds_init(&b, &m, 40), 0);
    dpm_score_hist_t h;
    assert_int_equal(dpm_score_hist_init(&h, dpm_mech_score_bins(&m)), DPM_OK);
    for (int e = 0; e < 40; e++) { /* 40 examples: positives high, negatives low */
        assert_int_equal(dpm_score_hist_add(&h, dpm_mech_score_bins(&m),
                                            e % 2 ? DPM_SCORE_ONE - 1 : 0, e % 2),
                         DPM_OK);
    }
    for (int i = 0; i < 100000; i++) {
        dpm_report_t rep;
        assert_int_equal(dpm_mech_report_roc_hist(&m, &r, TEST_RECEIPT(&m, 0), &h, &rep), DPM_OK);
        assert_int_equal(coll_bounds_check(&b, &rep, &why), 0);
    }
}

/* dpauc: every count in [-k, M + k] (k for delta = 2^-40 / 4N); honest reports of M examples,
 * all positive at the top score (TP = M and FN = 0 at every threshold: the extreme counts), pass;
 * one count beyond fails with its reason. */
static void test_dpauc_edges(void **state)
{
    (void)state;
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 5;
    c.mechanism = DPM_MECH_ID_DPAUC;
    assert_int_equal(dpm_eps_from_decimal("1", &c.eps.q16), DPM_OK);
    c.budget = c.eps;
    c.period_seconds = 86400;
    c.nthresholds = 5;
    for (uint32_t i = 0; i < 5; i++) {
        c.thresholds[i] = (uint32_t)(((uint64_t)i << 31) / 4u);
    }
    dpm_mech_t m;
    const char *why = "";
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    coll_bounds_t b;
    assert_int_equal(coll_bounds_init(&b, &m, 0), -1); /* max_examples is required */
    assert_int_equal(coll_bounds_init(&b, &m, 40), 0);
    double t = (double)m.params.dpauc.lap.scale_num / (double)m.params.dpauc.lap.scale_den;
    assert_int_equal(b.cell_hi, 40 + coll_dlap_tail_bound(t, -40.0 - log2(20.0)));
    assert_true(b.fail_log2 <= -40.0);
    print_message("# dpauc eps 1, N 5, max_examples 40: counts in [%lld, %lld]\n",
                  (long long)b.cell_lo, (long long)b.cell_hi);
    test_rng_t tr;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &tr, &port, 17), DPM_OK);
    dpm_dpauc_counts_t cnt;
    assert_int_equal(dpm_dpauc_counts_init(&cnt, &m.params.dpauc), DPM_OK);
    for (int e = 0; e < 40; e++) {
        assert_int_equal(dpm_dpauc_counts_add(&cnt, &m.params.dpauc, DPM_SCORE_ONE, 1), DPM_OK);
    }
    dpm_report_t rep;
    for (int i = 0; i < 20000; i++) {
        assert_int_equal(dpm_mech_report_dpauc(&m, &r, TEST_RECEIPT(&m, 0), &cnt, &rep), DPM_OK);
        assert_int_equal(coll_bounds_check(&b, &rep, &why), 0);
    }
    rep.body.dpauc.fn[4] = (int32_t)b.cell_hi;
    assert_int_equal(coll_bounds_check(&b, &rep, &why), 0);
    rep.body.dpauc.fn[4] = (int32_t)b.cell_hi + 1;
    assert_int_equal(coll_bounds_check(&b, &rep, &why), -1);
    assert_string_equal(why, "count out of range");
    rep.body.dpauc.fn[4] = (int32_t)b.cell_lo - 1;
    assert_int_equal(coll_bounds_check(&b, &rep, &why), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_cell_bound), cmocka_unit_test(test_sum_bound),
        cmocka_unit_test(test_tuple_ml_edges),    cmocka_unit_test(test_roc_hist_edges),
        cmocka_unit_test(test_honest_reports_pass), cmocka_unit_test(test_dpauc_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
