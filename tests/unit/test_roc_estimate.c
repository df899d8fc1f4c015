/* SPDX-License-Identifier: Apache-2.0 */
/* The roc_hist estimator (host-sim/estimate/roc.h) on inputs with known answers: exact small
 * histograms (AUC by hand, ties counted 1/2), the noiseless estimate equal to the exact binned
 * AUC and ROC, the brute-force Mann-Whitney AUC of explicit examples, the projection of negative
 * noised counts (totals kept, monotone ROC in [0, 1]), the delta-method noise variance against
 * numerical derivatives, the discrete Laplace variance, the band at the end points, and
 * argument checks; the unbinned AUC exact for linear densities (and the binned one not), its
 * kernel, its noise variance against numerical derivatives, and the edges it takes; its
 * interpolation bound (gradient, noise, and that it holds on densities it was not designed on)
 * and the interval flags (estimate/ci_flags.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/prob.h"
#include "estimate/ci_flags.h"
#include "estimate/roc.h"
#include "test_figure.h"

static void agg_of(dpm_roc_agg_t *a, const int32_t *pos, const int32_t *neg, uint32_t bins,
                   uint64_t reports)
{
    assert_int_equal(dpm_roc_agg_init(a, bins), DPM_OK);
    assert_int_equal(dpm_roc_agg_add(a, bins, pos, neg), DPM_OK);
    a->reports = reports;
}

static void test_exact_small(void **state)
{
    (void)state;
    /* 2 bins: positives {0, 2}, negatives {2, 0}: every positive above every negative */
    const uint64_t p1[2] = {0, 2}, n1[2] = {2, 0};
    double tpr[4], fpr[4], auc;
    assert_int_equal(dpm_roc_exact(p1, n1, 2, tpr, fpr, &auc), DPM_OK);
    assert_true(auc == 1.0);
    assert_true(tpr[0] == 1.0 && fpr[0] == 1.0 && tpr[1] == 1.0 && fpr[1] == 0.0);
    assert_true(tpr[2] == 0.0 && fpr[2] == 0.0);
    /* all in one bin: every pair tied, AUC 1/2 */
    const uint64_t p2[3] = {0, 3, 0}, n2[3] = {0, 5, 0};
    assert_int_equal(dpm_roc_exact(p2, n2, 3, tpr, fpr, &auc), DPM_OK);
    assert_true(auc == 0.5);
    /* 3 bins, pos {1, 1, 2}, neg {2, 1, 1}: pairs won by positives, by hand:
     * pos in bin 0 (1): vs neg bin 0 tie 2 * 0.5 = 1 -> 1
     * pos in bin 1 (1): neg bin 0 (2) + tie bin 1 0.5 -> 2.5
     * pos in bin 2 (2): each 2 + 1 + 0.5 = 3.5 -> 7; total 10.5 / (4 * 4) */
    const uint64_t p3[3] = {1, 1, 2}, n3[3] = {2, 1, 1};
    assert_int_equal(dpm_roc_exact(p3, n3, 3, tpr, fpr, &auc), DPM_OK);
    assert_true(fabs(auc - 10.5 / 16.0) < 1e-15);
    assert_true(fabs(tpr[1] - 0.75) < 1e-15 && fabs(fpr[1] - 0.5) < 1e-15);
    assert_true(fabs(tpr[2] - 0.5) < 1e-15 && fabs(fpr[2] - 0.25) < 1e-15);
    /* trapezoid through the points gives the same number */
    double trap = 0.0;
    for (int j = 0; j < 3; j++) {
        trap += (fpr[j] - fpr[j + 1]) * (tpr[j] + tpr[j + 1]) / 2.0;
    }
    assert_true(fabs(trap - auc) < 1e-15);
    /* an empty class */
    const uint64_t zero[2] = {0, 0};
    assert_int_equal(dpm_roc_exact(zero, n1, 2, tpr, fpr, &auc), DPM_ERR_PARAM);
}

/* Mann-Whitney by brute force over explicit (bin, label) examples, against the estimate. */
static void test_noiseless_equals_brute_force(void **state)
{
    (void)state;
    enum { B = 7, E = 300 };
    uint32_t bin[E];
    int label[E];
    int32_t pos[B] = {0}, neg[B] = {0};
    uint64_t upos[B], uneg[B];
    uint64_t x = 12345;
    for (int i = 0; i < E; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        label[i] = (int)((x >> 33) % 3 == 0);
        bin[i] = (uint32_t)(((x >> 40) % B + (label[i] ? (x >> 20) % 3 : 0)) % B);
        if (label[i]) {
            pos[bin[i]]++;
        } else {
            neg[bin[i]]++;
        }
    }
    double wins = 0.0, pairs = 0.0;
    for (int i = 0; i < E; i++) {
        for (int k = 0; k < E; k++) {
            if (label[i] && !label[k]) {
                pairs += 1.0;
                wins += bin[i] > bin[k] ? 1.0 : (bin[i] == bin[k] ? 0.5 : 0.0);
            }
        }
    }
    for (int b = 0; b < B; b++) {
        upos[b] = (uint64_t)pos[b];
        uneg[b] = (uint64_t)neg[b];
    }
    double tpr[B + 1], fpr[B + 1], auc;
    assert_int_equal(dpm_roc_exact(upos, uneg, B, tpr, fpr, &auc), DPM_OK);
    assert_true(fabs(auc - wins / pairs) < 1e-14);
    dpm_roc_params_t p;
    dpm_roc_agg_t a;
    dpm_roc_estimate_t est;
    assert_int_equal(dpm_roc_params_init(&p, B, 0.0), DPM_OK);
    agg_of(&a, pos, neg, B, 1);
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &est), DPM_OK);
    assert_true(est.valid && !est.projected);
    assert_true(fabs(est.auc - auc) < 1e-14);
    assert_true(est.var_noise == 0.0 && est.var_sampling > 0.0);
    for (int j = 0; j <= B; j++) {
        assert_true(fabs(est.tpr[j] - tpr[j]) < 1e-14 && fabs(est.fpr[j] - fpr[j]) < 1e-14);
        assert_true(est.tpr_lo[j] == est.tpr[j] && est.tpr_hi[j] == est.tpr[j]);
    }
    /* noise only: the CI collapses to the point; with sampling it does not */
    assert_true(est.ci_lo == est.auc && est.ci_hi == est.auc);
    assert_true(est.ci_total_lo < est.auc && est.ci_total_hi > est.auc);
}

static void test_projection(void **state)
{
    (void)state;
    const double y[5] = {10.0, -3.0, 4.0, -1.0, 0.5};
    double x[5], sum = 0.0;
    assert_int_equal(dpm_roc_project(y, 5, x), 1);
    for (int i = 0; i < 5; i++) {
        assert_true(x[i] >= 0.0);
        sum += x[i];
    }
    assert_true(fabs(sum - 10.5) < 1e-12); /* the total is kept */
    /* by hand: tau = (10 + 4 - 10.5) / 2 = 1.75 > 0.5, so x = {8.25, 0, 2.25, 0, 0} */
    assert_true(fabs(x[0] - 8.25) < 1e-12 && fabs(x[2] - 2.25) < 1e-12);
    assert_true(x[1] == 0.0 && x[3] == 0.0 && x[4] == 0.0);
    const double ok[3] = {1.0, 0.0, 2.0};
    assert_int_equal(dpm_roc_project(ok, 3, x), 0);
    assert_true(x[0] == 1.0 && x[1] == 0.0 && x[2] == 2.0);
    const double bad[2] = {-1.0, 0.5};
    assert_int_equal(dpm_roc_project(bad, 2, x), 1);
    assert_true(x[0] == 0.0 && x[1] == 0.0);
}

static void test_negative_noised_counts(void **state)
{
    (void)state;
    enum { B = 6 };
    const int32_t pos[B] = {-4, 3, -2, 20, 15, 30}, neg[B] = {40, 25, -7, 10, 2, -3};
    dpm_roc_params_t p;
    dpm_roc_agg_t a;
    dpm_roc_estimate_t est;
    assert_int_equal(dpm_roc_params_init(&p, B, 2.0), DPM_OK);
    agg_of(&a, pos, neg, B, 10);
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.9, &est), DPM_OK);
    assert_true(est.valid && est.projected);
    assert_true(est.P == 62.0 && est.N == 67.0);
    for (int j = 0; j < B; j++) { /* the curve to draw: projected, monotone */
        assert_true(est.pos[j] >= 0.0 && est.neg[j] >= 0.0);
        assert_true(est.tpr_curve[j] >= est.tpr_curve[j + 1] &&
                    est.fpr_curve[j] >= est.fpr_curve[j + 1]);
    }
    /* The estimates: the raw sums' ratios (clipped) and Mann-Whitney of the raw sums. */
    double c = 0.0, num = 0.0;
    for (int j = B; j-- > 0;) {
        num += neg[j] * (c + pos[j] / 2.0);
        c += pos[j];
        assert_true(fabs(est.tpr[j] - fmin(fmax(c / 62.0, 0.0), 1.0)) < 1e-15);
    }
    assert_true(fabs(est.auc_raw - num / (62.0 * 67.0)) < 1e-15);
    for (int j = 0; j <= B; j++) {
        assert_true(est.tpr[j] >= 0.0 && est.tpr[j] <= 1.0 && est.fpr[j] >= 0.0 &&
                    est.fpr[j] <= 1.0);
        assert_true(est.tpr_lo[j] <= est.tpr[j] && est.tpr[j] <= est.tpr_hi[j]);
        assert_true(est.tpr_lo_sim[j] <= est.tpr_lo[j] && est.tpr_hi[j] <= est.tpr_hi_sim[j]);
        assert_true(est.tpr_lo[j] >= 0.0 && est.tpr_hi[j] <= 1.0);
    }
    assert_true(est.tpr[0] == 1.0 && est.tpr[B] == 0.0 && est.tpr_sd[0] == 0.0 &&
                est.tpr_sd[B] == 0.0);
    assert_true(est.auc == fmin(fmax(est.auc_raw, 0.0), 1.0));
    assert_true(est.ci_lo <= est.auc && est.auc <= est.ci_hi && est.ci_lo < est.ci_hi);
    /* a class whose noised total is not positive: no estimate */
    const int32_t few[B] = {-1, 0, 0, 0, 0, 0};
    agg_of(&a, few, neg, B, 1);
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.9, &est), DPM_OK);
    assert_false(est.valid);
    assert_true(isnan(est.auc));
}

static double auc_of(const double *y, const double *v, uint32_t bins)
{
    dpm_roc_params_t p;
    dpm_roc_agg_t a;
    dpm_roc_estimate_t est;
    assert_int_equal(dpm_roc_params_init(&p, bins, 0.0), DPM_OK);
    assert_int_equal(dpm_roc_agg_init(&a, bins), DPM_OK);
    /* the estimator takes integers: scale by 2^20 for a smooth function of y, v */
    for (uint32_t b = 0; b < bins; b++) {
        a.pos[b] = (int64_t)llround(y[b] * 1048576.0);
        a.neg[b] = (int64_t)llround(v[b] * 1048576.0);
    }
    a.reports = 1;
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &est), DPM_OK);
    return est.auc;
}

/* var_noise = n s² |grad A|²: the gradient by central differences. */
static void test_noise_variance_gradient(void **state)
{
    (void)state;
    enum { B = 5 };
    const int32_t pos[B] = {100, 200, 300, 500, 900}, neg[B] = {800, 600, 400, 200, 100};
    double y[B], v[B], g2 = 0.0, h = 1.0;
    for (int b = 0; b < B; b++) {
        y[b] = pos[b];
        v[b] = neg[b];
    }
    for (int b = 0; b < 2 * B; b++) {
        double *w = b < B ? &y[b] : &v[b - B], keep = *w;
        *w = keep + h;
        double up = auc_of(y, v, B);
        *w = keep - h;
        double down = auc_of(y, v, B);
        *w = keep;
        double d = (up - down) / (2.0 * h);
        g2 += d * d;
    }
    dpm_roc_params_t p;
    dpm_roc_agg_t a;
    dpm_roc_estimate_t est;
    assert_int_equal(dpm_roc_params_init(&p, B, 2.0), DPM_OK);
    agg_of(&a, pos, neg, B, 50);
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &est), DPM_OK);
    double expect = 50.0 * p.noise_var * g2;
    assert_true(fabs(est.var_noise - expect) < 1e-6 * expect);
    /* the AUC interval is auc -+ z sd */
    assert_true(fabs(est.ci_hi - est.auc - est.z * sqrt(est.var_noise)) < 1e-12);
    /* TPR at threshold 2: var = n s² ((B - j)(1 - 2 t) + B t²) / P² */
    double t = (300.0 + 500.0 + 900.0) / 2000.0;
    double vt = 50.0 * p.noise_var * (3.0 * (1.0 - 2.0 * t) + 5.0 * t * t) / (2000.0 * 2000.0);
    assert_true(fabs(est.tpr[2] - t) < 1e-15);
    assert_true(fabs(est.tpr_sd[2] - sqrt(vt)) < 1e-12);
}

static void test_dlap_variance(void **state)
{
    (void)state;
    /* t = 2 (eps = 1): p = e^-1/2, 2p / (1 - p)² by hand */
    double pp = exp(-0.5);
    assert_true(fabs(prob_dlap_var(2.0) - 2.0 * pp / ((1 - pp) * (1 - pp))) < 1e-12);
    /* large t: about 2 t² - 1/6 */
    double t = 1000.0;
    assert_true(fabs(prob_dlap_var(t) - (2.0 * t * t - 1.0 / 6.0)) < 1e-6 * t * t);
    assert_true(prob_dlap_var(0.0) == 0.0);
    /* the sum of the pmf p^|z| (1 - p) / (1 + p) times z² */
    double s = 0.0, norm = 0.0, q = exp(-1.0 / 3.0);
    for (int z = -400; z <= 400; z++) {
        double w = pow(q, abs(z));
        s += w * z * z;
        norm += w;
    }
    assert_true(fabs(s / norm - prob_dlap_var(3.0)) < 1e-9);
}

static void test_arguments(void **state)
{
    (void)state;
    dpm_roc_params_t p;
    dpm_roc_agg_t a, b;
    dpm_roc_estimate_t est;
    int32_t cells[3] = {1, 2, 3};
    assert_int_equal(dpm_roc_params_init(&p, 1, 1.0), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_params_init(&p, DPM_ROC_MAX_BINS + 1, 1.0), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_params_init(&p, 3, -1.0), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_params_init(&p, 3, 1.0), DPM_OK);
    assert_int_equal(dpm_roc_agg_init(&a, 3), DPM_OK);
    assert_int_equal(dpm_roc_agg_init(&b, 4), DPM_OK);
    assert_int_equal(dpm_roc_agg_add(&a, 4, cells, cells), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_agg_merge(&a, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_agg_add(&a, 3, cells, cells), DPM_OK);
    assert_int_equal(dpm_roc_agg_init(&b, 3), DPM_OK);
    assert_int_equal(dpm_roc_agg_add(&b, 3, cells, cells), DPM_OK);
    assert_int_equal(dpm_roc_agg_merge(&a, &b), DPM_OK);
    assert_true(a.reports == 2 && a.pos[2] == 6 && a.neg[0] == 2);
    assert_int_equal(dpm_roc_estimate(&p, &a, 1.0, &est), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_estimate(&p, &b, 0.95, NULL), DPM_ERR_PARAM);
    dpm_roc_params_t p4;
    assert_int_equal(dpm_roc_params_init(&p4, 4, 1.0), DPM_OK);
    assert_int_equal(dpm_roc_estimate(&p4, &a, 0.95, &est), DPM_ERR_PARAM);
}

/* Counts of the densities pos 2 s, neg 2 (1 - s) on [0, 1] in bins with edges e[k] / 64:
 * 64² times their integrals, integers. Their AUC is 5/6 exactly. */
static void linear_counts(const uint32_t *e64, uint32_t bins, int32_t *pos, int32_t *neg,
                          uint32_t *edges_q31)
{
    for (uint32_t b = 0; b < bins; b++) {
        int32_t lo = b == 0 ? 0 : (int32_t)e64[b - 1], hi = b + 1 == bins ? 64 : (int32_t)e64[b];
        pos[b] = hi * hi - lo * lo;
        neg[b] = 2 * 64 * (hi - lo) - (hi * hi - lo * lo);
        if (b + 1 < bins) {
            edges_q31[b] = e64[b] << 25;
        }
    }
}

/* auc_unbinned is exact for linear densities (uniform and non-uniform edges, B = 2 too); the
 * binned AUC is not (negative control). */
static void test_unbinned_exact_for_linear_densities(void **state)
{
    (void)state;
    static const uint32_t uni[7] = {8, 16, 24, 32, 40, 48, 56}, odd[6] = {3, 7, 16, 30, 41, 63};
    static const uint32_t two[1] = {20}, half[1] = {32};
    const struct {
        const uint32_t *e;
        uint32_t bins;
    } cases[4] = {{uni, 8}, {odd, 7}, {two, 2}, {half, 2}};
    for (int k = 0; k < 4; k++) {
        uint32_t B = cases[k].bins, edges[8];
        int32_t pos[8], neg[8];
        linear_counts(cases[k].e, B, pos, neg, edges);
        dpm_roc_params_t p;
        dpm_roc_agg_t a;
        dpm_roc_estimate_t est;
        assert_int_equal(dpm_roc_params_init(&p, B, 0.0), DPM_OK);
        assert_int_equal(dpm_roc_params_set_edges(&p, edges, B - 1), DPM_OK);
        agg_of(&a, pos, neg, B, 1);
        assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &est), DPM_OK);
        assert_true(est.valid);
        assert_true(fabs(est.auc_unbinned_raw - 5.0 / 6.0) < 1e-12);
        assert_true(est.auc_unbinned == est.auc_unbinned_raw && est.unbinned_var_noise == 0.0);
        assert_true(fabs(est.auc - 5.0 / 6.0) > 1e-4); /* the binned AUC misses it */
        double x[8], u[8];
        for (uint32_t b = 0; b < B; b++) {
            x[b] = pos[b];
            u[b] = neg[b];
        }
        assert_true(fabs(dpm_roc_auc_unbinned(x, u, p.width, B) - 5.0 / 6.0) < 1e-12);
        if (k == 1) { /* the non-uniform counts read with uniform widths: not exact */
            dpm_roc_params_t q;
            assert_int_equal(dpm_roc_params_init(&q, B, 0.0), DPM_OK);
            assert_true(fabs(dpm_roc_auc_unbinned(x, u, q.width, B) - 5.0 / 6.0) > 1e-4);
        }
    }
}

/* The kernel of uniform bins, by unit vectors (P = N = 1): K(i, i-1) = 13/12, K(i-1, i) =
 * -1/12 in the interior, 1 below, 1/2 on the diagonal, 0 above. */
static void test_unbinned_kernel(void **state)
{
    (void)state;
    enum { B = 6 };
    double w[B], x[B], u[B];
    for (int b = 0; b < B; b++) {
        w[b] = 1.0 / B;
    }
    for (int i = 0; i < B; i++) {
        for (int j = 0; j < B; j++) {
            memset(x, 0, sizeof(x));
            memset(u, 0, sizeof(u));
            x[i] = u[j] = 1.0;
            double k = dpm_roc_auc_unbinned(x, u, w, B), want = i > j ? 1.0 : 0.0;
            int lo = i < j ? i : j, hi = i < j ? j : i; /* pair of bins lo, hi */
            if (i == j) {
                want = 0.5;
            } else if (hi == lo + 1 && lo >= 1 && hi <= B - 2) { /* both central differences */
                want = i > j ? 13.0 / 12.0 : -1.0 / 12.0;
            } else if (hi == lo + 1) {
                continue; /* an edge bin's one-sided slope (the linear test covers it) */
            }
            assert_true(fabs(k - want) < 1e-12);
        }
    }
}

static double unbinned_of(const double *y, const double *v, const double *w, uint32_t bins)
{
    return dpm_roc_auc_unbinned(y, v, w, bins);
}

/* unbinned var_noise = n s² |grad|² by central differences (non-uniform edges, B = 2 too). */
static void test_unbinned_variance_gradient(void **state)
{
    (void)state;
    static const uint32_t e5[4] = {1u << 28, 3u << 28, 1u << 30, 7u << 28}, e2[1] = {3u << 28};
    const int32_t pos[5] = {100, 200, 300, 500, 900}, neg[5] = {800, 600, 400, 200, 100};
    for (uint32_t B = 2; B <= 5; B += 3) {
        dpm_roc_params_t p;
        dpm_roc_agg_t a;
        dpm_roc_estimate_t est;
        assert_int_equal(dpm_roc_params_init(&p, B, 2.0), DPM_OK);
        assert_int_equal(dpm_roc_params_set_edges(&p, B == 5 ? e5 : e2, B - 1), DPM_OK);
        agg_of(&a, pos, neg, B, 50);
        assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &est), DPM_OK);
        double y[5], v[5], g2 = 0.0, h = 0.01;
        for (uint32_t b = 0; b < B; b++) {
            y[b] = pos[b];
            v[b] = neg[b];
        }
        assert_true(fabs(unbinned_of(y, v, p.width, B) - est.auc_unbinned_raw) < 1e-15);
        for (uint32_t b = 0; b < 2 * B; b++) {
            double *c = b < B ? &y[b] : &v[b - B], keep = *c;
            *c = keep + h;
            double up = unbinned_of(y, v, p.width, B);
            *c = keep - h;
            double down = unbinned_of(y, v, p.width, B);
            *c = keep;
            g2 += (up - down) * (up - down) / (4.0 * h * h);
        }
        double expect = 50.0 * p.noise_var * g2;
        assert_true(fabs(est.unbinned_var_noise - expect) < 1e-6 * expect);
        assert_true(fabs(est.unbinned_sd - sqrt(expect)) < 1e-6 * sqrt(expect));
        /* the interval: bias-aware with the noise, the within-bin order and the bound */
        double sd = sqrt(est.unbinned_var_noise + est.unbinned_var_within);
        double hw = prob_bias_aware_halfwidth(sd, B > 2 ? est.unbinned_bound : 0.0, 0.95);
        assert_true(est.unbinned_events > 100.0);
        assert_true(fabs(est.unbinned_ci_hi - est.auc_unbinned - hw) < 1e-12);
        assert_true(fabs(est.unbinned_var_within - dpm_roc_unbinned_within(y, v, B)) < 1e-18);
        assert_true(est.auc_unbinned != est.auc); /* a different figure */
        if (B == 2) {                             /* nothing to compare with: no bound, no claim */
            assert_true(isnan(est.unbinned_bound) && (est.unbinned_flags & DPM_CI_NO_BOUND));
            continue;
        }
        /* the bound's gradient against numerical derivatives, and its noise sd */
        double grad[10], g2b = 0.0;
        double b0 = dpm_roc_unbinned_bound(y, v, p.width, B, grad);
        assert_true(fabs(b0 - est.unbinned_bound_raw) < 1e-15);
        for (uint32_t c = 0; c < 2 * B; c++) {
            double *cell = c < B ? &y[c] : &v[c - B], keep = *cell;
            *cell = keep + h;
            double up = dpm_roc_unbinned_bound(y, v, p.width, B, NULL);
            *cell = keep - h;
            double down = dpm_roc_unbinned_bound(y, v, p.width, B, NULL);
            *cell = keep;
            assert_true(fabs((up - down) / (2.0 * h) - grad[c]) < 1e-9);
            g2b += grad[c] * grad[c];
        }
        assert_true(fabs(est.unbinned_bound_sd - sqrt(50.0 * p.noise_var * g2b)) < 1e-12);
        assert_true(est.unbinned_bound == est.unbinned_bound_raw + est.unbinned_bound_sd);
    }
}

/* A density on [0, 1] given by its cdf (for the bound's check). */
typedef struct {
    const char *name;
    int kind;
    double a, b;
} shape_t;

static double shape_cdf(const shape_t *s, double x)
{
    x = x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
    switch (s->kind) {
    case 0: /* truncated exponential of rate a, rising (b = 1) or falling (b = 0) */
        return s->b != 0.0 ? expm1(s->a * x) / expm1(s->a) : -expm1(-s->a * x) / -expm1(-s->a);
    case 1: /* power law x^a (a < 1: diverging at 0) */ return pow(x, s->a);
    case 2: /* 1 - (1 - x)^a (a < 1: diverging at 1) */ return 1.0 - pow(1.0 - x, s->a);
    default: /* mixture: half uniform, half a triangle peaking at a */
        return 0.5 * x +
               0.5 * (x <= s->a ? x * x / s->a : 1.0 - (1.0 - x) * (1.0 - x) / (1.0 - s->a));
    }
}

/* The exact AUC of two densities, by a fine grid (pairs within a cell count 1/2). */
static double shapes_auc(const shape_t *pos, const shape_t *neg)
{
    double below = 0.0, sum = 0.0;
    for (uint32_t k = 0; k < 400000u; k++) {
        double lo = k / 400000.0, hi = (k + 1) / 400000.0;
        double pk = shape_cdf(pos, hi) - shape_cdf(pos, lo),
               nk = shape_cdf(neg, hi) - shape_cdf(neg, lo);
        sum += pk * (below + nk / 2.0);
        below += nk;
    }
    return sum;
}

/* The interpolation bound (roc.h) holds the noiseless unbinned AUC's error against the exact AUC
 * on densities not used to design it (exponential slopes, power laws diverging at 0 or at 1, a
 * peaked mixture), uniform and end-dense edges, 6 to 64 bins; a third of it (what a second-order
 * assumption would give) does not everywhere: the negative control. */
static void test_unbinned_bound_holds(void **state)
{
    (void)state;
    static const shape_t shapes[][2] = {
        {{"exp rising 3", 0, 3.0, 1.0}, {"exp falling 2", 0, 2.0, 0.0}},
        {{"x^0.6", 1, 0.6, 0.0}, {"x^0.3", 1, 0.3, 0.0}},
        {{"1-(1-x)^0.4", 2, 0.4, 0.0}, {"x^0.7", 1, 0.7, 0.0}},
        {{"mixture 0.8", 3, 0.8, 0.0}, {"mixture 0.3", 3, 0.3, 0.0}},
        {{"1-(1-x)^0.5", 2, 0.5, 0.0}, {"exp falling 6", 0, 6.0, 0.0}},
    };
    static const uint32_t kBins[8] = {6, 8, 10, 12, 16, 25, 32, 64};
    double lo_ratio = INFINITY, hi_ratio = 0.0;
    int third_fails = 0;
    for (size_t m = 0; m < sizeof(shapes) / sizeof(shapes[0]); m++) {
        double truth = shapes_auc(&shapes[m][0], &shapes[m][1]);
        for (int ends = 0; ends < 2; ends++) {
            for (int k = 0; k < 8; k++) {
                uint32_t B = kBins[k];
                double e[DPM_ROC_MAX_BINS + 1], x[DPM_ROC_MAX_BINS], u[DPM_ROC_MAX_BINS],
                    w[DPM_ROC_MAX_BINS];
                for (uint32_t j = 0; j <= B; j++) {
                    double t = (double)j / B;
                    e[j] = ends ? 0.5 - 0.5 * cos(M_PI * t) : t;
                }
                for (uint32_t b = 0; b < B; b++) {
                    x[b] =
                        3e5 * (shape_cdf(&shapes[m][0], e[b + 1]) - shape_cdf(&shapes[m][0], e[b]));
                    u[b] =
                        7e5 * (shape_cdf(&shapes[m][1], e[b + 1]) - shape_cdf(&shapes[m][1], e[b]));
                    w[b] = e[b + 1] - e[b];
                }
                double err = fabs(dpm_roc_auc_unbinned(x, u, w, B) - truth);
                double bound = dpm_roc_unbinned_bound(x, u, w, B, NULL);
                if (!(err <= bound)) {
                    print_message("%s vs %s, %s edges, B %u: error %.3g above the bound %.3g\n",
                                  shapes[m][0].name, shapes[m][1].name,
                                  ends ? "end-dense" : "uniform", B, err, bound);
                }
                assert_true(err <= bound);
                lo_ratio = fmin(lo_ratio, bound / err);
                hi_ratio = fmax(hi_ratio, bound / err);
                third_fails += err > bound / 3.0;
            }
        }
    }
    print_message("# the bound is %.2f to %.3g times the error; a third of it falls short in %d of "
                  "80 cases\n",
                  lo_ratio, hi_ratio, third_fails);
    test_figure("bound_over_error.min", lo_ratio, "1");
    test_figure("bound_over_error.max", hi_ratio, "1");
    test_figure("third_falls_short", third_fails, "cases");
    assert_true(third_fails > 0);
}

/* The flags: 2 bins (no bound), an invalid estimate (small n), few events (a handful of
 * devices at a large eps), a noisy class total. */
static void test_unbinned_flags(void **state)
{
    (void)state;
    const int32_t pos[6] = {2, 3, 5, 8, 12, 20}, neg[6] = {20, 12, 8, 5, 3, 2};
    dpm_roc_params_t p;
    dpm_roc_agg_t a;
    dpm_roc_estimate_t est;
    assert_int_equal(dpm_roc_params_init(&p, 6, 2.0 / 12.0), DPM_OK); /* eps 12: s² 0.005 */
    agg_of(&a, pos, neg, 6, 3);
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &est), DPM_OK);
    assert_true(est.events < PROB_NORMAL_MIN_EVENTS && (est.ci_flags & DPM_CI_FEW_EVENTS));
    assert_true(est.unbinned_flags & DPM_CI_FEW_EVENTS);
    assert_true(est.tpr_flags & DPM_CI_FEW_EVENTS);
    /* the Poisson-aware interval is wider than the normal one */
    assert_true(est.ci_hi - est.auc_raw > est.z * sqrt(est.var_noise) + 1e-6);
    assert_int_equal(dpm_roc_params_init(&p, 6, 2.0 / 0.2), DPM_OK); /* eps 0.2: s² 200 */
    agg_of(&a, pos, neg, 6, 3);
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &est), DPM_OK);
    assert_true(est.fieller_g > 0.05 && (est.ci_flags & DPM_CI_CLASS_NOISE));
    assert_string_equal(dpm_ci_coverage(est.ci_flags), "none");
    const int32_t none[6] = {0, 0, 0, 0, 0, 0};
    agg_of(&a, none, neg, 6, 3);
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &est), DPM_OK);
    assert_true(!est.valid && est.ci_flags == DPM_CI_SMALL_N &&
                est.unbinned_flags == DPM_CI_SMALL_N);
    /* many reports at eps 1: the calibrated claim */
    int32_t big_pos[6], big_neg[6];
    for (int b = 0; b < 6; b++) {
        big_pos[b] = 1000 * pos[b];
        big_neg[b] = 1000 * neg[b];
    }
    assert_int_equal(dpm_roc_params_init(&p, 6, 2.0), DPM_OK);
    agg_of(&a, big_pos, big_neg, 6, 3000);
    assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &est), DPM_OK);
    assert_true(est.ci_flags == 0 && est.ci_total_flags == 0 && est.tpr_flags == 0);
    assert_string_equal(dpm_ci_coverage(est.ci_flags), "nominal");
}

static void test_set_edges(void **state)
{
    (void)state;
    dpm_roc_params_t p, keep;
    const uint32_t ok[2] = {1u << 29, 1u << 31}, dup[2] = {1u << 29, 1u << 29};
    const uint32_t zero[2] = {0, 1u << 29}, big[2] = {1u << 29, (1u << 31) + 1u};
    assert_int_equal(dpm_roc_params_init(&p, 3, 1.0), DPM_OK);
    assert_true(p.width[0] == 1.0 / 3.0 && p.width[2] == 1.0 / 3.0);
    keep = p;
    assert_int_equal(dpm_roc_params_set_edges(&p, ok, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_params_set_edges(&p, dup, 2), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_params_set_edges(&p, big, 2), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_params_set_edges(NULL, ok, 2), DPM_ERR_PARAM);
    assert_memory_equal(&p, &keep, sizeof(p));
    assert_int_equal(dpm_roc_params_set_edges(&p, ok, 2), DPM_OK);
    assert_true(p.width[0] == 0.25 && p.width[1] == 0.75 && p.width[2] == 1.0 / 2147483648.0);
    assert_int_equal(dpm_roc_params_set_edges(&p, zero, 2), DPM_OK); /* the SDK takes edge 0 */
    assert_true(p.width[0] == 1.0 / 2147483648.0 && p.width[1] == 0.25 && p.width[2] == 0.75);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_small),
        cmocka_unit_test(test_noiseless_equals_brute_force),
        cmocka_unit_test(test_projection),
        cmocka_unit_test(test_negative_noised_counts),
        cmocka_unit_test(test_noise_variance_gradient),
        cmocka_unit_test(test_dlap_variance),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_unbinned_exact_for_linear_densities),
        cmocka_unit_test(test_unbinned_kernel),
        cmocka_unit_test(test_unbinned_variance_gradient),
        cmocka_unit_test(test_unbinned_bound_holds),
        cmocka_unit_test(test_unbinned_flags),
        cmocka_unit_test(test_set_edges),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
