/* SPDX-License-Identifier: Apache-2.0 */
/* host-sim/mech/base/bounds.c: the honest-report bounds.
 *   - k(t, 2^-40) against the discrete Laplace tail computed independently (long double sums of
 *     the pmf), at k (<= 2^-40) and k - 1 (> 2^-40: k is the smallest);
 *   - the Chernoff sum bound against the exact distribution of the sum of 2B cells (long
 *     double convolution): valid, and not loose by more than a factor 2;
 *   - the checks at their edges (inside accepted, one past rejected, INT32_MAX rejected) and
 *     class_l1_max against a brute-force search;
 *   - 200000 honest reports made by the SDK (tuple_ml, roc_hist at its max_examples): none
 *     rejected;
 *   - fedauc_lap (every variant, eps 0.1, 1 and 8): each range's k against the discrete Laplace
 *     tail of the SDK's own scale (smallest k with Pr[|Z| > k] <= 2^-41), reports at the edges
 *     accepted and one past rejected, INT64_MAX rejected; 21,000 honest reports per mechanism
 *     made through both SDK rounds (accept a reply, report) with every device at the extreme
 *     of its statistics (all labels 1 or all 0, its examples at the top of M = 10^6 or
 *     anywhere): none rejected; the campaign's exact-sum capacity (a campaign whose noise could
 *     overflow a period's sums is refused);
 *   - the FedAUC influence bound against the exact change over a grid of (dS, dP). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mech/base/bounds.h"
#include "dpm/expert/report.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
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

/* ---- FedAUC --------------------------------------------------------------------------- */

static void make_fa(dpm_mech_t *m, dpm_mech_id_t mech, uint32_t variant, const char *eps,
                    const char *share)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 9;
    c.mechanism = mech;
    assert_int_equal(dpm_eps_from_decimal(eps, &c.eps.q16), DPM_OK);
    c.budget = c.eps;
    c.period_seconds = 86400;
    c.fedauc_variant = variant;
    c.fedauc_score_bits = 20;
    if (share != NULL) {
        assert_int_equal(dpm_eps_from_decimal(share, &c.fedauc_p_share_q16), DPM_OK);
    }
    const char *why = "";
    assert_int_equal(dpm_mech_init(m, &c, &why), DPM_OK);
}

/* The smallest k with Pr[|Z| > k] = 2 p^(k+1) / (1 + p) <= 2^-41, p = exp(-eps_part /
 * (sens 2^16)), in long double: the bound each noised value gets (two per report). */
static int64_t fa_k_ref(uint64_t sens, uint64_t eps_part)
{
    if (sens == 0) {
        return 0;
    }
    long double t = (long double)sens * 65536.0L / (long double)eps_part;
    long double lp = -1.0L / t, target = -41.0L * logl(2.0L);
    long double k = ceill((logl(2.0L) - log1pl(expl(lp)) - target) * t) - 1.0L;
    while (k > 0 && logl(2.0L) + (k) * lp - log1pl(expl(lp)) <= target) {
        k -= 1.0L; /* ln Pr[|Z| > k - 1] */
    }
    while (logl(2.0L) + (k + 1.0L) * lp - log1pl(expl(lp)) > target) {
        k += 1.0L;
    }
    return (int64_t)k;
}

/* One device's ranks: n distinct even doubled ranks (every score its own tie group), the top n
 * of M when top, else spread; and what the collector derives from them. */
typedef struct {
    uint32_t n, M, R[64], max_rank2;
    uint64_t S, D, tpos;
} fa_ranks_t;

static void fa_ranks(fa_ranks_t *k, uint32_t n, uint32_t M, int top, test_rng_t *t)
{
    memset(k, 0, sizeof(*k));
    k->n = n;
    k->M = M;
    uint32_t pos = top ? M - n : (uint32_t)(test_rng_next(t) % (M / 2));
    for (uint32_t i = 0; i < n; i++) {
        pos += top ? (i > 0) : 1u + (uint32_t)(test_rng_next(t) % (M / (2 * n)));
        k->R[i] = 2u * pos;
        k->S += k->R[i];
        k->max_rank2 = k->R[i];
    }
    for (uint32_t i = 0; i < n; i++) {
        int64_t d = (int64_t)n * k->R[i] - (int64_t)k->S;
        uint64_t a = (uint64_t)(d < 0 ? -d : d);
        k->D = a > k->D ? a : k->D;
        k->tpos += d > 0 ? (uint64_t)d : 0u;
    }
}

/* A body with the fields the collector checks against its ranks, as an honest device fills them. */
static dpm_fedauc_report_t fa_body(const dpm_mech_t *m, const fa_ranks_t *k)
{
    const dpm_fedauc_t *f = &m->params.fedauc;
    dpm_fedauc_report_t b;
    memset(&b, 0, sizeof(b));
    b.n = k->n;
    b.total = k->M;
    b.sum_rank2 = k->S;
    b.eps_p = f->eps_p;
    switch (f->variant) {
    case DPM_FEDAUC_LOCAL: b.sensitivity = k->max_rank2; break;
    case DPM_FEDAUC_GLOBAL: b.sensitivity = 2u * ((uint64_t)k->M - 1u); break;
    default:
        b.sensitivity = k->D;
        b.eps_p = f->variant == DPM_FEDAUC_ADAPTIVE
                      ? dpm_fedauc_adaptive_eps_p(k->S, k->D, f->eps_implemented)
                  : k->D == 0 ? f->eps_implemented
                              : f->eps_p;
    }
    return b;
}

static const struct {
    uint32_t variant;
    const char *share;
} FA_VARIANTS[] = {{DPM_FEDAUC_LOCAL, "0.5"},
                   {DPM_FEDAUC_GLOBAL, "0.3"},
                   {DPM_FEDAUC_ORTHOGONAL, "0.7"},
                   {DPM_FEDAUC_ADAPTIVE, NULL}};
static const char *const FA_EPS[] = {"0.1", "1", "8"};

static void test_fedauc_edges(void **state)
{
    (void)state;
    test_rng_t tr;
    test_rng_seed(&tr, 99);
    for (size_t v = 0; v < 4; v++) {
        for (size_t e = 0; e < 3; e++) {
            dpm_mech_t m;
            make_fa(&m, DPM_MECH_ID_FEDAUC_LAP, FA_VARIANTS[v].variant, FA_EPS[e],
                    FA_VARIANTS[v].share);
            coll_bounds_t b;
            assert_int_equal(coll_bounds_init(&b, &m, 0), -1); /* max_examples is required */
            assert_int_equal(coll_bounds_init(&b, &m, 16), 0);
            assert_null(coll_bounds_capacity_why(&b));
            assert_true(b.fail_log2 <= -40.0);
            fa_ranks_t k;
            fa_ranks(&k, 16, 1000000, (int)(e % 2), &tr);
            dpm_fedauc_report_t r = fa_body(&m, &k);
            coll_fa_range_t g;
            assert_int_equal(coll_bounds_fa_range(&b, &r, k.tpos, &g), 0);
            int64_t kp = fa_k_ref(1, r.eps_p);
            int64_t ks = fa_k_ref(r.sensitivity, m.params.fedauc.eps_implemented - r.eps_p);
            int t_form = FA_VARIANTS[v].variant >= DPM_FEDAUC_ORTHOGONAL;
            /* the collector's k (double, with a 1e-9 margin in log space) is the reference's
             * or one more: never less, so the tail stays <= 2^-41 */
            int64_t kp_c = -g.p_lo, ks_c = g.s_hi - (t_form ? (int64_t)k.tpos : (int64_t)k.S);
            assert_true(kp_c >= kp && kp_c <= kp + 1);
            assert_true(ks_c >= ks && ks_c <= ks + 1);
            assert_int_equal(g.p_hi, 16 + kp_c);
            assert_int_equal(g.s_lo, t_form ? -(int64_t)k.tpos - ks_c : -ks_c);
            print_message("# fedauc_lap %s eps %s, n 16 of M 10^6: localP [%lld, %lld], %s "
                          "[%lld, %lld]\n",
                          FA_VARIANTS[v].share ? (v == 0 ? "local" : v == 1 ? "global" : "orthogonal")
                                               : "adaptive",
                          FA_EPS[e], (long long)g.p_lo, (long long)g.p_hi,
                          t_form ? "T" : "localSum2", (long long)g.s_lo, (long long)g.s_hi);
            const char *why = NULL;
            int64_t *pv = &r.local_p, *sv = t_form ? &r.t : &r.local_sum2;
            const int64_t ok_p[] = {g.p_lo, g.p_hi}, ok_s[] = {g.s_lo, g.s_hi};
            for (int i = 0; i < 2; i++) {
                for (int j = 0; j < 2; j++) {
                    *pv = ok_p[i];
                    *sv = ok_s[j];
                    assert_int_equal(coll_bounds_fa_check(&b, &r, k.tpos, &why), 0);
                }
            }
            const int64_t bad_p[] = {g.p_lo - 1, g.p_hi + 1, INT64_MAX, INT64_MIN};
            for (int i = 0; i < 4; i++) {
                *pv = bad_p[i];
                *sv = 0;
                assert_int_equal(coll_bounds_fa_check(&b, &r, k.tpos, &why), -1);
                assert_string_equal(why, "localP out of range");
            }
            const int64_t bad_s[] = {g.s_lo - 1, g.s_hi + 1, INT64_MAX, INT64_MIN};
            for (int i = 0; i < 4; i++) {
                *pv = 0;
                *sv = bad_s[i];
                assert_int_equal(coll_bounds_fa_check(&b, &r, k.tpos, &why), -1);
                assert_string_equal(why, t_form ? "T out of range" : "localSum2 out of range");
            }
        }
    }
    /* a sum without noise (sensitivity 0: one example at rank 0) must be exact */
    dpm_mech_t m;
    make_fa(&m, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, "1", "0.5");
    coll_bounds_t b;
    assert_int_equal(coll_bounds_init(&b, &m, 16), 0);
    fa_ranks_t k;
    memset(&k, 0, sizeof(k));
    k.n = 1;
    k.M = 5;
    dpm_fedauc_report_t r = fa_body(&m, &k);
    const char *why = NULL;
    assert_int_equal(coll_bounds_fa_check(&b, &r, 0, &why), 0);
    r.local_sum2 = 1;
    assert_int_equal(coll_bounds_fa_check(&b, &r, 0, &why), -1);
    /* capacity: with eps_s one Q16 unit the noise bound of a 2^24-score ranking could overflow
     * a period's sums: refused; the same campaign at eps 1 is not */
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 9;
    c.mechanism = DPM_MECH_ID_FEDAUC_LAP;
    c.eps = DPM_EPS_Q16(2);
    c.budget = DPM_EPS_Q16(2);
    c.period_seconds = 86400;
    c.fedauc_variant = DPM_FEDAUC_LOCAL;
    c.fedauc_score_bits = 20;
    c.fedauc_p_share_q16 = 32768;
    const char *r2 = "";
    assert_int_equal(dpm_mech_init(&m, &c, &r2), DPM_OK);
    assert_int_equal(coll_bounds_init(&b, &m, 100), 0);
    print_message("# fedauc_lap local eps 2^-15: sums hold %llu reports of a period: %s\n",
                  (unsigned long long)b.sum_capacity, coll_bounds_capacity_why(&b));
    assert_non_null(coll_bounds_capacity_why(&b));
    make_fa(&m, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, "1", "0.5");
    assert_int_equal(coll_bounds_init(&b, &m, 100), 0);
    print_message("# fedauc_lap local eps 1, max_examples 100: sums hold %llu reports\n",
                  (unsigned long long)b.sum_capacity);
    assert_null(coll_bounds_capacity_why(&b));
}

/* Honest reports through both SDK rounds: the device validates a reply with these ranks, then
 * reports; every report passes the collector's checks (fedauc_rr: its exact range). */
static void test_fedauc_honest(void **state)
{
    (void)state;
    test_rng_t tr;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &tr, &port, 4242), DPM_OK);
    enum { N = 16, PER = 7000 };
    dpm_score_t scores[N];
    uint32_t q[N], perm[N], ranks[N];
    uint64_t work[N], ids[N];
    uint8_t labels[N], msg[DPM_FEDAUC_REPLY_MAX_BYTES(N) + DPM_FEDAUC_UPLOAD_MAX_BYTES(N, 31)];
    dpm_memo_t memo;
    memset(&memo, 0, sizeof(memo));
    memo.opened = DPM_MEMO_OPENED;
    for (size_t v = 0; v < 5; v++) {
        int64_t widest_p = 0, widest_s = 0, allowed_p = 0, allowed_s = 0;
        for (size_t e = 0; e < 3; e++) {
            dpm_mech_t m;
            if (v == 4) {
                make_fa(&m, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, FA_EPS[e], NULL);
            } else {
                make_fa(&m, DPM_MECH_ID_FEDAUC_LAP, FA_VARIANTS[v].variant, FA_EPS[e],
                        FA_VARIANTS[v].share);
            }
            coll_bounds_t b;
            assert_int_equal(coll_bounds_init(&b, &m, N), 0);
            for (int d = 0; d < PER; d++) {
                uint32_t n = d % 3 == 0 ? N : 1u + (uint32_t)(test_rng_next(&tr) % N);
                for (uint32_t i = 0; i < n; i++) { /* distinct scores, increasing */
                    scores[i] = (dpm_score_t)((i + 1u) << 20);
                    labels[i] = (uint8_t)(d % 2); /* every label 1, or every label 0 */
                    ids[i] = ((uint64_t)d << 8) | i;
                }
                dpm_fedauc_buffers_t bufs = {q, perm, work, N};
                dpm_fedauc_session_t s;
                assert_int_equal(dpm_fedauc_prepare(&m, &r, scores, n, &bufs, &s), DPM_OK);
                fa_ranks_t k;
                fa_ranks(&k, n, 1000000, d % 4 < 2, &tr);
                for (uint32_t j = 0; j < n; j++) { /* upload order: quantized (i + 1) << 9 */
                    ranks[j] = k.R[(q[j] >> 9) - 1u];
                }
                dpm_fedauc_header_t h;
                memset(&h, 0, sizeof(h));
                h.campaign_id = m.campaign.id;
                h.mechanism = (uint32_t)m.campaign.mechanism;
                h.params_hash = m.params_hash;
                memcpy(h.token, s.token, DPM_FEDAUC_TOKEN_BYTES);
                h.total = k.M;
                h.n = n;
                size_t len = 0;
                assert_int_equal(dpm_fedauc_reply_encode(&h, ranks, msg, sizeof(msg), &len), DPM_OK);
                dpm_fedauc_ranks_t rk;
                const char *why = NULL;
                const uint64_t *idp = v == 4 ? ids : NULL;
                assert_int_equal(dpm_fedauc_accept(&s, &m, msg, len, idp, &rk, &why), DPM_OK);
                assert_true(rk.sum_rank2 == k.S && rk.maxdev == k.D);
                dpm_report_t rep;
                assert_int_equal(dpm_mech_report_fedauc(&m, &r, TEST_RECEIPT(&m, 0), &s, &rk,
                                                        labels, idp, &memo, &rep),
                                 DPM_OK);
                const dpm_fedauc_report_t *fb = &rep.body.fedauc;
                assert_int_equal(coll_bounds_fa_check(&b, fb, k.tpos, &why), 0);
                coll_fa_range_t g;
                assert_int_equal(coll_bounds_fa_range(&b, fb, k.tpos, &g), 0);
                /* how far inside: the widest noise relative to its allowance */
                int64_t np = fb->local_p < 0 ? -fb->local_p : fb->local_p - (int64_t)n;
                int64_t sv = g.t_form ? fb->t : fb->local_sum2;
                int64_t ns = sv < 0 ? -sv : sv - (g.t_form ? (int64_t)k.tpos : (int64_t)k.S);
                if (np > 0 && np * (allowed_p ? allowed_p : 1) >= widest_p * (g.p_hi - n)) {
                    widest_p = np;
                    allowed_p = g.p_hi - n;
                }
                if (ns > 0 && ns * (allowed_s ? allowed_s : 1) >= widest_s * (-g.s_lo)) {
                    widest_s = ns;
                    allowed_s = -g.s_lo;
                }
            }
        }
        print_message("# %s: %d honest reports (eps 0.1, 1, 8; all labels 1 or 0) accepted; "
                      "the widest noise used %lld of %lld (localP), %lld of %lld (sum)\n",
                      v == 4 ? "fedauc_rr" : FA_VARIANTS[v].share == NULL ? "adaptive"
                      : v == 0 ? "local" : v == 1 ? "global" : "orthogonal",
                      3 * PER, (long long)widest_p, (long long)allowed_p, (long long)widest_s,
                      (long long)allowed_s);
    }
}

/* |AUC' - AUC| over a grid of changes of one report (dS, dP) never exceeds the bound. */
static void test_fedauc_influence(void **state)
{
    (void)state;
    const double cases[][4] = {/* P, M, AUC, dp (ds = dp * rank scale) */
                               {300, 1000, 0.8, 20},   {50, 400, 0.55, 12},
                               {900, 1000, 0.95, 30},  {5000, 20000, 0.3, 200},
                               {40, 100, 0.5, 38}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        double P = cases[i][0], M = cases[i][1], A = cases[i][2], dp = cases[i][3];
        double N = M - P, S = A * P * N + P * (P - 1.0) / 2.0, ds = dp * M / 3.0;
        double c = P - 0.5 + A * (N - P);
        for (int tf = 0; tf < 2; tf++) {
            coll_fa_influence_t f; /* one bucket holding rbar in [0.1 M, 0.6 M] */
            memset(&f, 0, sizeof(f));
            f.dp = f.b_dp[0] = dp;
            f.ds = f.b_ds[0] = ds;
            f.b_n[0] = 1;
            f.uploads = 1;
            f.t_form = tf;
            f.b_lo[0] = tf ? M * 0.1 : 0.0;
            f.b_hi[0] = tf ? M * 0.6 : 0.0;
            double rbar_lo = f.b_lo[0], rbar_hi = f.b_hi[0];
            double bound = coll_bounds_fa_shift(&f, 1.0, 0.0, A, P, N, c), worst = 0.0;
            for (int a = -20; a <= 20; a++) {
                for (int b2 = -20; b2 <= 20; b2++) {
                    for (int rr = 0; rr <= 2; rr++) {
                        double dP = dp * a / 20.0;
                        double rbar = rbar_lo + (rbar_hi - rbar_lo) * rr / 2.0;
                        double dS = ds * b2 / 20.0 + (tf ? rbar * dP : 0.0);
                        double P2 = P + dP, N2 = M - P2;
                        double A2 = (S + dS - P2 * (P2 - 1.0) / 2.0) / (P2 * N2);
                        worst = fmax(worst, fabs(A2 - A));
                    }
                }
            }
            print_message("# P %g M %g AUC %g dp %g%s: worst change on the grid %.6f, bound %.6f\n",
                          P, M, A, dp, tf ? " (T form)" : "", worst, bound);
            assert_true(worst <= bound * (1.0 + 1e-12));
            assert_true(worst >= 0.5 * bound || bound == INFINITY);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_cell_bound), cmocka_unit_test(test_sum_bound),
        cmocka_unit_test(test_tuple_ml_edges),    cmocka_unit_test(test_roc_hist_edges),
        cmocka_unit_test(test_honest_reports_pass), cmocka_unit_test(test_dpauc_edges),
        cmocka_unit_test(test_fedauc_edges),      cmocka_unit_test(test_fedauc_honest),
        cmocka_unit_test(test_fedauc_influence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
