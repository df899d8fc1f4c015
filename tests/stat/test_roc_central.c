/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist in the two-aggregator mode (estimate/roc_central.h): the parameters, and the
 * estimates and intervals over many releases of one population.
 *
 * Population (not the simulator's, not the repro's): 3 groups of 4,000 / 1,500 / 600 devices,
 * 8 examples each, 8 score bins; logistic scores with group-specific separation and base rate
 * (an AUC near 0.82 / 0.74 / 0.68). Each run releases the exact per-group sums plus, per cell,
 * one draw from each of the two aggregators, drawn by the SDK's own sampler (dpm_laplace_add,
 * sensitivity 2 x 8, the run's ε), as an aggregator draws it. Over RUNS runs at ε = 0.25, 1 and
 * 8 (the population was not tuned for any):
 *   - each group's AUC and each gap is unbiased: |mean - truth| <= 5 se;
 *   - the predicted variance matches the spread: mean predicted / empirical in [0.8, 1.2]
 *     (4.5 sampling sds of the ratio at RUNS runs);
 *   - the noise-only 95 % intervals (around the devices' own binned AUC) cover it: binomial,
 *     two-sided p >= 1e-6 where no run is flagged, lower side only where some are;
 *   - every gap at once (dpm_roc_central_pairwise): the simultaneous intervals hold all three
 *     true gaps at least at the level (one-sided p >= 1e-6);
 *   - a release whose class total is noised to <= 0 gets no estimate (valid = 0, its gaps
 *     undefined), in at most 1 % of the runs (ε = 0.25, the smallest group: a few).
 * At ε = 0.1 the two smaller groups' class totals are mostly noise: there the estimator must
 * flag its intervals (no claim: class_noise) or refuse (a class total <= 0), and every interval
 * that still makes a claim must keep it (the largest group's, most runs); bias and variance
 * are not checked where no claim is made (a ratio whose denominator is near 0).
 * Negative control: the same estimator told of ONE aggregator's noise (draws = 1) predicts
 * half the variance; the variance and coverage checks reject it (ε = 1), and so does the
 * claims' check at ε = 0.1. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "estimate/ci_flags.h"
#include "estimate/pairwise.h"
#include "estimate/roc_central.h"
#include "stat_gof.h"
#include "test_figure.h"
#include "test_rng.h"

#define G 3u
#define BINS 8u
#define EXAMPLES 8u
#define RUNS 1000u
#define NGAPS (G * (G - 1u) / 2u)
#define ALPHA 1e-6

static const uint32_t kDevices[G] = {4000, 1500, 600};

static double uniform01(test_rng_t *t)
{
    return ((double)(test_rng_next(t) >> 11) + 0.5) / 9007199254740992.0;
}

/* Each group's exact counts and binned AUC. */
static void population(uint64_t pos[G][BINS], uint64_t neg[G][BINS], double auc[G])
{
    static const double mu[G] = {1.8, 1.2, 0.9}, pi[G] = {0.3, 0.2, 0.4};
    test_rng_t t;
    test_rng_seed(&t, 31031);
    memset(pos, 0, sizeof(uint64_t) * G * BINS);
    memset(neg, 0, sizeof(uint64_t) * G * BINS);
    for (uint32_t g = 0; g < G; g++) {
        for (uint32_t i = 0; i < kDevices[g] * EXAMPLES; i++) {
            int label = uniform01(&t) < pi[g];
            double z = sqrt(-2.0 * log(uniform01(&t))) * cos(6.283185307179586 * uniform01(&t));
            double s = 1.0 / (1.0 + exp(-(z + (label ? mu[g] : 0.0))));
            uint32_t b = (uint32_t)(s * BINS);
            (label ? pos : neg)[g][b < BINS ? b : BINS - 1u]++;
        }
        double tpr[BINS + 1], fpr[BINS + 1];
        assert_int_equal(dpm_roc_exact(pos[g], neg[g], BINS, tpr, fpr, &auc[g]), DPM_OK);
    }
}

static void params_refuse_with_a_reason(void **state)
{
    (void)state;
    dpm_roc_central_params_t p, before;
    memset(&p, 0x5a, sizeof(p));
    before = p;
    const char *why = NULL;
    static const struct {
        uint32_t groups, bins, m;
        dpm_eps_t eps;
    } kBad[] = {{0, 8, 8, DPM_EPS_ONE},
                {9, 8, 8, DPM_EPS_ONE},
                {3, 1, 8, DPM_EPS_ONE},
                {3, 65, 8, DPM_EPS_ONE},
                {3, 8, 0, DPM_EPS_ONE},
                {3, 8, 256, DPM_EPS_ONE},
                {3, 8, 8, 0}};
    for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); i++) {
        why = NULL;
        assert_int_equal(dpm_roc_central_params_init(&p, kBad[i].groups, kBad[i].bins, NULL,
                                                     kBad[i].m, kBad[i].eps, &why),
                         DPM_ERR_PARAM);
        assert_non_null(why);
        assert_memory_equal(&p, &before, sizeof(p)); /* untouched */
    }
    uint32_t edges[2] = {UINT32_C(1) << 30, UINT32_C(1) << 29}; /* not increasing */
    assert_int_equal(dpm_roc_central_params_init(&p, 2, 3, edges, 8, DPM_EPS_ONE, &why),
                     DPM_ERR_PARAM);
    assert_non_null(strstr(why, "edges"));
}

/* The scale is the SDK's exact rational for sensitivity 2m at the Q16.16 ε, and what the
 * estimator assumes: two draws of it per cell. */
static void the_scale_is_the_sdks(void **state)
{
    (void)state;
    dpm_roc_central_params_t p;
    dpm_laplace_t lap;
    assert_int_equal(dpm_roc_central_params_init(&p, 3, 12, NULL, 30, DPM_EPS_ONE, NULL), DPM_OK);
    assert_int_equal(p.sensitivity, 60);
    assert_int_equal(dpm_laplace_init(&lap, 60, DPM_EPS_ONE), DPM_OK);
    assert_int_equal(p.scale_num, lap.scale_num);
    assert_int_equal(p.scale_den, lap.scale_den);
    assert_true(p.roc.scale == 60.0);
    assert_int_equal(p.roc.central_draws, 2);
    dpm_eps_t third = DPM_EPS_ONE / 3u; /* 21845 / 2^16: the scale is 60 x 65536 / 21845 */
    assert_int_equal(dpm_roc_central_params_init(&p, 1, 2, NULL, 30, third, NULL), DPM_OK);
    assert_true(fabs(p.roc.scale - 60.0 * 65536.0 / 21845.0) < 1e-9);
}

/* Noiseless sums: every AUC and gap is the exact binned one (difference 0). */
static void noiseless_sums_give_the_exact_aucs(void **state)
{
    (void)state;
    uint64_t pos[G][BINS], neg[G][BINS];
    double auc[G];
    population(pos, neg, auc);
    dpm_roc_central_params_t p;
    assert_int_equal(dpm_roc_central_params_init(&p, G, BINS, NULL, EXAMPLES, DPM_EPS_ONE, NULL),
                     DPM_OK);
    dpm_roc_agg_t a[G];
    for (uint32_t g = 0; g < G; g++) {
        assert_int_equal(dpm_roc_agg_init(&a[g], BINS), DPM_OK);
        for (uint32_t b = 0; b < BINS; b++) {
            a[g].pos[b] = (int64_t)pos[g][b];
            a[g].neg[b] = (int64_t)neg[g][b];
        }
    }
    dpm_roc_central_estimate_t *e = malloc(sizeof(*e));
    assert_non_null(e);
    assert_int_equal(dpm_roc_central_estimate(&p, a, 0.95, e), DPM_OK);
    assert_int_equal(e->ngaps, NGAPS);
    for (uint32_t g = 0; g < G; g++) {
        assert_true(e->group[g].valid);
        assert_true(fabs(e->group[g].auc - auc[g]) < 1e-15);
    }
    for (uint32_t k = 0; k < NGAPS; k++) {
        assert_true(fabs(e->gap[k].gap - (auc[e->gap[k].g] - auc[e->gap[k].h])) < 1e-15);
        assert_true(e->gap[k].sd > 0.0); /* the noise the aggregators would have added */
    }
    a[2].bins = 4; /* an aggregate of another shape is refused */
    assert_int_equal(dpm_roc_central_estimate(&p, a, 0.95, e), DPM_ERR_PARAM);
    free(e);
}

typedef struct {
    double sum, sum2, var_pred;
    uint32_t covered, n, flagged;
    /* the runs whose interval makes a claim (no DPM_CI_NO_CLAIM flag) */
    uint32_t claim_n, claim_covered, claim_flagged;
} acc_t;

static void acc_add(acc_t *a, double v, double sd, double lo, double hi, unsigned flags,
                    double truth)
{
    a->sum += v;
    a->sum2 += v * v;
    a->var_pred += sd * sd;
    a->covered += lo <= truth && truth <= hi;
    a->flagged += flags != 0;
    a->n++;
    if ((flags & DPM_CI_NO_CLAIM) == 0) {
        a->claim_n++;
        a->claim_covered += lo <= truth && truth <= hi;
        a->claim_flagged += flags != 0;
    }
}

/* Where the noise dominates (eps 0.1 here), most runs carry a flag without a claim
 * (class_noise: a class total's noise is a large part of it) and their estimates mean little
 * (a ratio with a denominator near 0), so neither the bias nor the variance is checked: only
 * that every interval that still makes a claim keeps it (two-sided where none of them is
 * flagged, the lower side where some are "at least"). 0 if it holds. */
static int acc_check_claims(const acc_t *a, double truth, const char *what, double eps, int figures)
{
    double p = a->claim_n == 0         ? 1.0
               : a->claim_flagged == 0 ? stat_binom_two_sided(a->claim_covered, a->claim_n, 0.95)
                                       : stat_binom_cdf(a->claim_covered, a->claim_n, 0.95);
    int ok = p >= ALPHA;
    print_message("# eps %-5g %-10s truth %+.4f: %u of %u runs make no claim; the %u that do cover "
                  "%.3f (p %.2g)%s\n",
                  eps, what, truth, a->n - a->claim_n, a->n, a->claim_n,
                  a->claim_n ? (double)a->claim_covered / a->claim_n : 1.0, p,
                  ok ? "" : "  FAILED");
    if (!figures) { /* the control run: the same labels, figures not quoted */
        return !ok;
    }
    char name[64];
    snprintf(name, sizeof(name), "eps %g %s", eps, what);
    test_figure_of(name, "no_claim", a->n - a->claim_n, "runs");
    test_figure_of(name, "claim", a->claim_n, "runs");
    test_figure_of(name, "claim_cover", a->claim_n ? (double)a->claim_covered / a->claim_n : 1.0,
                   "share");
    return !ok;
}

/* 0 if the checks hold; ratio gets mean predicted / empirical variance. */
static int acc_check(const acc_t *a, double truth, const char *what, double eps, double *ratio)
{
    double mean = a->sum / a->n, var = (a->sum2 - a->n * mean * mean) / (a->n - 1u);
    double se = sqrt(var / a->n);
    *ratio = (a->var_pred / a->n) / var;
    double p = a->flagged == 0 ? stat_binom_two_sided(a->covered, a->n, 0.95)
                               : stat_binom_cdf(a->covered, a->n, 0.95);
    int ok = fabs(mean - truth) <= 5.0 * se && *ratio >= 0.8 && *ratio <= 1.2 && p >= ALPHA;
    print_message("# eps %-5g %-10s truth %+.4f mean %+.4f (%+.1f se) var ratio %.3f cover "
                  "%.3f (p %.2g, %u flagged)%s\n",
                  eps, what, truth, mean, (mean - truth) / se, *ratio, (double)a->covered / a->n, p,
                  a->flagged, ok ? "" : "  FAILED");
    return !ok;
}

/* RUNS releases at eps; draws_assumed: what the estimator is told (2: right; 1: the control).
 * Returns the number of failed checks; *min_ratio the smallest variance ratio seen. */
static int runs_at(double eps, uint32_t draws_assumed, int noise_dominated, double *min_ratio)
{
    uint64_t pos[G][BINS], neg[G][BINS];
    double auc[G];
    population(pos, neg, auc);
    dpm_eps_t q = (dpm_eps_t)(eps * 65536.0);
    dpm_roc_central_params_t p;
    assert_int_equal(dpm_roc_central_params_init(&p, G, BINS, NULL, EXAMPLES, q, NULL), DPM_OK);
    p.roc.central_draws = draws_assumed;
    dpm_laplace_t lap;
    assert_int_equal(dpm_laplace_init(&lap, p.sensitivity, q), DPM_OK);
    test_rng_t t;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &port, 4242u + (uint64_t)(eps * 100)), DPM_OK);
    acc_t acc[G + NGAPS];
    memset(acc, 0, sizeof(acc));
    uint32_t simul = 0, simul_n = 0, invalid = 0;
    dpm_roc_central_estimate_t *e = malloc(sizeof(*e));
    dpm_pairwise_t *pw = malloc(sizeof(*pw));
    assert_true(e != NULL && pw != NULL);
    for (uint32_t run = 0; run < RUNS; run++) {
        dpm_roc_agg_t a[G];
        for (uint32_t g = 0; g < G; g++) {
            assert_int_equal(dpm_roc_agg_init(&a[g], BINS), DPM_OK);
            for (uint32_t b = 0; b < BINS; b++) {
                int64_t x = (int64_t)pos[g][b], y = (int64_t)neg[g][b];
                for (uint32_t d = 0; d < DPM_ROC_CENTRAL_AGGREGATORS; d++) { /* each noises */
                    assert_int_equal(dpm_laplace_add(&lap, &r, x, &x), DPM_OK);
                    assert_int_equal(dpm_laplace_add(&lap, &r, y, &y), DPM_OK);
                }
                a[g].pos[b] = x;
                a[g].neg[b] = y;
            }
        }
        assert_int_equal(dpm_roc_central_estimate(&p, a, 0.95, e), DPM_OK);
        for (uint32_t g = 0; g < G; g++) {
            const dpm_roc_estimate_t *x = &e->group[g];
            if (!x->valid) { /* a class total noised to <= 0: no estimate, said so */
                invalid++;
                continue;
            }
            acc_add(&acc[g], x->auc_raw, sqrt(x->var_noise), x->ci_lo, x->ci_hi, x->ci_flags,
                    auc[g]);
        }
        double truth[NGAPS];
        for (uint32_t k = 0; k < NGAPS; k++) {
            const dpm_roc_central_gap_t *x = &e->gap[k];
            truth[k] = auc[x->g] - auc[x->h];
            assert_true(x->defined == (e->group[x->g].valid && e->group[x->h].valid));
            if (!x->defined) {
                continue;
            }
            acc_add(&acc[G + k], x->gap, x->sd, x->lo, x->hi, x->flags, truth[k]);
        }
        assert_int_equal(dpm_roc_central_pairwise(e, 0.95, pw), DPM_OK);
        if (pw->defined == NGAPS) {
            int all = 1;
            for (uint32_t k = 0; k < NGAPS; k++) {
                all &= pw->pair[k].lo <= truth[k] && truth[k] <= pw->pair[k].hi;
            }
            simul += (uint32_t)all;
            simul_n++;
        }
    }
    int bad = 0;
    *min_ratio = INFINITY;
    for (uint32_t i = 0; i < G + NGAPS; i++) {
        char what[16];
        double ratio;
        if (i < G) {
            snprintf(what, sizeof(what), "auc g%u", i);
        } else {
            snprintf(what, sizeof(what), "gap %u-%u", e->gap[i - G].g, e->gap[i - G].h);
        }
        double truth = i < G ? auc[i] : auc[e->gap[i - G].g] - auc[e->gap[i - G].h];
        if (noise_dominated) {
            bad += acc_check_claims(&acc[i], truth, what, eps,
                                    draws_assumed == DPM_ROC_CENTRAL_AGGREGATORS);
            continue;
        }
        bad += acc_check(&acc[i], truth, what, eps, &ratio);
        *min_ratio = fmin(*min_ratio, ratio);
    }
    double ps = stat_binom_cdf(simul, simul_n, 0.95);
    print_message("# eps %-5g all gaps at once: %u of %u runs (p %.2g)\n", eps, simul, simul_n, ps);
    bad += simul_n < RUNS / 2 || ps < ALPHA;
    print_message("# eps %-5g group estimates refused (a class total <= 0): %u of %u\n", eps,
                  invalid, G * RUNS);
    if (noise_dominated && draws_assumed == DPM_ROC_CENTRAL_AGGREGATORS) { /* not the control */
        char name[32];
        snprintf(name, sizeof(name), "eps %g", eps);
        test_figure_of(name, "refused", invalid, "estimates");
        test_figure_of(name, "estimates", G * RUNS, "estimates");
        test_figure("runs", RUNS, "runs");
        for (uint32_t g = 0; g < G; g++) {
            snprintf(name, sizeof(name), "devices.g%u", g);
            test_figure(name, kDevices[g], "devices");
        }
    }
    bad += !noise_dominated && invalid > RUNS / 100u; /* refusing is what it should do there */
    free(e);
    free(pw);
    return bad;
}

static void estimates_and_intervals_hold_at_three_eps(void **state)
{
    (void)state;
    static const double kEps[] = {0.25, 1.0, 8.0};
    for (size_t i = 0; i < sizeof(kEps) / sizeof(kEps[0]); i++) {
        double ratio;
        assert_int_equal(runs_at(kEps[i], DPM_ROC_CENTRAL_AGGREGATORS, 0, &ratio), 0);
    }
}

/* eps 0.1: the smaller groups' class totals are mostly noise; the estimator must say so. */
static void at_eps_0_1_every_claim_holds(void **state)
{
    (void)state;
    double ratio;
    assert_int_equal(runs_at(0.1, DPM_ROC_CENTRAL_AGGREGATORS, 1, &ratio), 0);
}

/* The control: told of one aggregator's noise, the predicted variance is half the spread. */
static void one_aggregators_noise_is_rejected(void **state)
{
    (void)state;
    double ratio;
    assert_true(runs_at(1.0, 1, 0, &ratio) > 0);
    assert_true(ratio < 0.8);
    assert_true(runs_at(0.1, 1, 1, &ratio) > 0); /* the claims' check catches it too */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(params_refuse_with_a_reason),
        cmocka_unit_test(the_scale_is_the_sdks),
        cmocka_unit_test(noiseless_sums_give_the_exact_aucs),
        cmocka_unit_test(estimates_and_intervals_hold_at_three_eps),
        cmocka_unit_test(at_eps_0_1_every_claim_holds),
        cmocka_unit_test(one_aggregators_noise_is_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
