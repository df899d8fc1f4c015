/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist's estimator where bins are sparse (many bins, few devices, small ε): the AUC interval
 * and the pointwise TPR band cover at the nominal 95 % and the AUC is not biased low.
 *
 * Fixed true counts (K devices x 20 examples, binormal scores with AUC 0.85 cut into B bins
 * evenly spaced in the latent score, so the tails hold few examples); RUNS noise draws per
 * configuration, each cell's sum drawn exactly as its true count plus the sum of K discrete
 * Laplace variables of scale 2/ε (what the devices add). Per configuration: the coverage of the
 * 95 % AUC interval and of the TPR band at the middle threshold must pass a two-sided exact
 * binomial test at α = 1e-6 against 0.95, and the AUC's bias must be below a quarter of its
 * standard deviation (|mean error| / sd + 4.89 / sqrt(RUNS) < 0.25: one-sided, α = 1e-6; the
 * estimator is a ratio of unbiased sums, whose small bias grows with the noise of the total
 * counts). Negative control: the earlier estimator (AUC and variance at the simplex projection
 * of the sums) in the sparsest configuration must fail both. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "estimate/roc.h"
#include "sim/pop/sim_rng.h"
#include "stat_gof.h"

#define RUNS 3000u
#define ALPHA 1e-6
#define EXAMPLES 20u

typedef struct {
    uint32_t bins;
    uint32_t devices;
    double eps;
} config_t;

/* True counts: positives N(mu, 1), negatives N(0, 1), mu = sqrt(2) Phi^-1(0.85), base rate
 * 0.3; bin edges evenly spaced in [-2.5, 4]. */
static void true_counts(const config_t *c, uint64_t *pos, uint64_t *neg)
{
    const double mu = 1.4657;
    double total = (double)c->devices * EXAMPLES, npos = 0.3 * total, nneg = total - npos;
    double prev_p = 0.0, prev_n = 0.0;
    for (uint32_t b = 0; b < c->bins; b++) {
        double edge = b + 1 == c->bins ? INFINITY : -2.5 + 6.5 * (double)(b + 1) / c->bins;
        double cp = b + 1 == c->bins ? 1.0 : 0.5 * erfc(-(edge - mu) / sqrt(2.0));
        double cn = b + 1 == c->bins ? 1.0 : 0.5 * erfc(-edge / sqrt(2.0));
        pos[b] = (uint64_t)llround(npos * (cp - prev_p));
        neg[b] = (uint64_t)llround(nneg * (cn - prev_n));
        prev_p = cp;
        prev_n = cn;
    }
}

typedef struct {
    uint32_t auc_cover, band_cover;
    double err_sum, err_sq;
} tally_t;

/* The estimator before the fix: AUC and its noise variance at the projected counts. */
static void projected_interval(const dpm_roc_params_t *p, const dpm_roc_agg_t *a, double *lo,
                               double *hi)
{
    double y[DPM_ROC_MAX_BINS], v[DPM_ROC_MAX_BINS], x[DPM_ROC_MAX_BINS], u[DPM_ROC_MAX_BINS];
    double P = 0.0, N = 0.0;
    for (uint32_t b = 0; b < a->bins; b++) {
        y[b] = (double)a->pos[b];
        v[b] = (double)a->neg[b];
        P += y[b];
        N += v[b];
    }
    dpm_roc_project(y, a->bins, x);
    dpm_roc_project(v, a->bins, u);
    double factor = dpm_roc_noise_factor(x, u, a->bins);
    double below = 0.0, above = P, auc = 0.0;
    for (uint32_t b = 0; b < a->bins; b++) {
        above -= x[b];
        auc += u[b] * (above + x[b] / 2.0) / P;
        below += u[b];
    }
    auc /= N;
    double sd = sqrt((double)a->reports * p->noise_var * factor);
    *lo = auc - 1.959963984540054 * sd;
    *hi = auc + 1.959963984540054 * sd;
}

static void run_config(const config_t *c, uint64_t seed, int old_estimator, tally_t *t)
{
    uint64_t pos[DPM_ROC_MAX_BINS], neg[DPM_ROC_MAX_BINS];
    true_counts(c, pos, neg);
    double tpr[DPM_ROC_MAX_BINS + 1], fpr[DPM_ROC_MAX_BINS + 1], truth = 0.0;
    assert_int_equal(dpm_roc_exact(pos, neg, c->bins, tpr, fpr, &truth), DPM_OK);
    uint32_t mid = c->bins / 2;
    dpm_roc_params_t p;
    assert_int_equal(dpm_roc_params_init(&p, c->bins, 2.0 / c->eps), DPM_OK);
    sim_rng_t rng;
    sim_rng_init(&rng, seed);
    memset(t, 0, sizeof(*t));
    for (uint32_t run = 0; run < RUNS; run++) {
        dpm_roc_agg_t a;
        assert_int_equal(dpm_roc_agg_init(&a, c->bins), DPM_OK);
        a.reports = c->devices;
        for (uint32_t b = 0; b < c->bins; b++) {
            a.pos[b] = (int64_t)pos[b] + sim_rng_dlap_sum(&rng, c->devices, p.scale);
            a.neg[b] = (int64_t)neg[b] + sim_rng_dlap_sum(&rng, c->devices, p.scale);
        }
        if (old_estimator) {
            double lo, hi;
            projected_interval(&p, &a, &lo, &hi);
            t->auc_cover += lo <= truth && truth <= hi;
            double auc = (lo + hi) / 2.0;
            t->err_sum += auc - truth;
            t->err_sq += (auc - truth) * (auc - truth);
            continue;
        }
        dpm_roc_estimate_t e;
        assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &e), DPM_OK);
        assert_true(e.valid);
        t->auc_cover += e.ci_lo <= truth && truth <= e.ci_hi;
        t->band_cover += e.tpr_lo[mid] <= tpr[mid] && tpr[mid] <= e.tpr_hi[mid];
        t->err_sum += e.auc_raw - truth;
        t->err_sq += (e.auc_raw - truth) * (e.auc_raw - truth);
    }
}

/* The bias in standard deviations, plus its one-sided α = 1e-6 margin. */
static double bias_bound(const tally_t *t, double *mean, double *sd)
{
    *mean = t->err_sum / RUNS;
    *sd = sqrt(t->err_sq / RUNS - *mean * *mean);
    return fabs(*mean) / *sd + 4.89 / sqrt((double)RUNS);
}

static void test_sparse_bins_cover_and_are_unbiased(void **state)
{
    (void)state;
    /* Sparse to dense; at 64 bins, 2,000 devices and ε = 0.25 the noise of the total count P
     * is a third of P itself and some runs have no estimate: too few devices for that ε. */
    const config_t grid[] = {{64, 2000, 0.5},  {64, 10000, 0.25}, {64, 10000, 0.5}, {32, 2000, 0.5},
                             {32, 10000, 0.25}, {16, 2000, 0.5},  {8, 2000, 1.0}};
    for (size_t i = 0; i < sizeof(grid) / sizeof(grid[0]); i++) {
        tally_t t;
        run_config(&grid[i], 1000 + i, 0, &t);
        double p_auc = stat_binom_two_sided(t.auc_cover, RUNS, 0.95);
        double p_band = stat_binom_two_sided(t.band_cover, RUNS, 0.95);
        double mean, sd, bound = bias_bound(&t, &mean, &sd);
        printf("# bins %u, devices %u, eps %.2f: AUC cover %.4f (p %.3g), band %.4f (p %.3g), "
               "mean error %+.5f = %+.3f sd (sd %.4f; bound %.3f)\n",
               grid[i].bins, grid[i].devices, grid[i].eps, (double)t.auc_cover / RUNS, p_auc,
               (double)t.band_cover / RUNS, p_band, mean, mean / sd, sd, bound);
        assert_true(p_auc > ALPHA);
        assert_true(p_band > ALPHA);
        assert_true(bound < 0.25);
    }
}

static void test_control_projected_estimator_under_covers(void **state)
{
    (void)state;
    const config_t sparse = {64, 2000, 0.5};
    tally_t t;
    run_config(&sparse, 7, 1, &t);
    double p = stat_binom_two_sided(t.auc_cover, RUNS, 0.95);
    double mean, sd, bound = bias_bound(&t, &mean, &sd);
    printf("# control, AUC and variance at the projection: cover %.4f (p %.3g), mean error "
           "%+.5f = %+.3f sd (bound %.3f)\n",
           (double)t.auc_cover / RUNS, p, mean, mean / sd, bound);
    assert_true(p < ALPHA);
    assert_true(bound >= 0.25);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sparse_bins_cover_and_are_unbiased),
        cmocka_unit_test(test_control_projected_estimator_under_covers),
    };
    return cmocka_run_group_tests_name("roc_sparse", tests, NULL, NULL);
}
