/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist in the simulator, statistically (fixed seeds, alpha = 1e-6):
 *
 * 1. Exact mode against inprocess mode. Inprocess runs the real SDK per device (examples ->
 *    dpm_score_hist_add -> dpm_mech_report_roc_hist -> encode -> decode -> check -> aggregate);
 *    exact mode draws each cell's sum as the population's true count plus a sum of n discrete
 *    Laplace variables. Two-sample Kolmogorov-Smirnov test of every cell's sum and of the AUC
 *    estimate, the AP and ECE estimates (pr_calibration.h) over RUNS runs of each, Bonferroni
 *    over the 2 B + 3 tests. Negative controls, each
 *    rejected (p < 1e-6): exact mode with the noise scale 1.5x too large, and exact mode over a
 *    different realization of the devices' examples (the truth of other devices).
 * 2. Coverage: over COV_RUNS exact-mode runs the 95% AUC interval (noise only) holds the
 *    population's binned AUC at the nominal rate (two-sided exact binomial test), as does the
 *    pointwise TPR band at a middle threshold; the simultaneous band covers every threshold in
 *    at least 95% of runs (one-sided). Negative control: the same intervals with the standard
 *    deviation shrunk by 1/1.5 fail the binomial test.
 * KS on discrete statistics is conservative; every test can fail (the controls show it). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim_fixture.h"

#include "sim/run/farm.h"
#include "estimate/pr_calibration.h"
#include "sim/devices/mech_roc_hist.h"
#include "sim/pop/population.h"
#include "sim/devices/results.h"
#include "sim/scenario/scenario.h"
#include "sim/devices/mechs.h" /* sim_scenario_parse, sim_scenario_load */
#include "sim/run/session.h"
#include "common/prob.h"
#include "stat_gof.h"
#include "stat_ks.h"

#define DEVICES 500u
#define RUNS 2000u
#define ALPHA 1e-6
#define BINS 5u
#define NSTATS (2u * BINS + 3u) /* the cells, AUC, AP, ECE */

static const char kScenario[] =
    "[scenario]\nseed = 77\n"
    "[population]\nseed = 5\nexamples = 8\n"
    "[group a]\nshare = 0.6\nscores = binormal(auc=0.85, base_rate=0.4)\n"
    "[group b]\nshare = 0.4\nscores = binormal(auc=0.75, base_rate=0.3)\n"
    "partition = noniid(concentration=3, auc_sd=0.5)\n"
    "[campaign roc]\nmechanism = roc_hist\neps = 2\nedges = 0.2, 0.4, 0.5, 0.75\n";

typedef struct {
    sim_scenario_t sc;
    sim_pop_t pop;
    sim_cfg_t cfg;
    sim_agg_t *aggs;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    char err[256];
    if (f == NULL ||
        sim_fixture_build(kScenario, sizeof(kScenario) - 1, DEVICES, &f->sc, &f->pop, err,
                          sizeof(err)) != 0 ||
        sim_cfg_init(&f->cfg, &f->sc, 0, 0, err, sizeof(err)) != 0 ||
        sim_cfg_prepare(&f->cfg, &f->pop, 1, err, sizeof(err)) != 0) {
        fprintf(stderr, "setup: %s\n", err);
        return -1;
    }
    f->aggs = malloc(RUNS * sizeof(*f->aggs));
    *state = f;
    return f->aggs != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    sim_cfg_release(&f->cfg);
    sim_pop_free(&f->pop);
    free(f->aggs);
    free(f);
    return 0;
}

/* The 2 B cell sums and the AUC, AP and ECE estimates of each run, column-major: stats[s * RUNS +
 * run]. */
static void run_stats(const sim_cfg_t *cfg, const sim_agg_t *aggs, double *stats)
{
    for (uint32_t r = 0; r < RUNS; r++) {
        const dpm_roc_agg_t *a = sim_roc_agg_c(&aggs[r]);
        for (uint32_t b = 0; b < BINS; b++) {
            stats[b * RUNS + r] = (double)a->pos[b];
            stats[(BINS + b) * RUNS + r] = (double)a->neg[b];
        }
        dpm_roc_estimate_t est;
        assert_int_equal(dpm_roc_estimate(&sim_roc_state_c(cfg)->params, a, 0.95, &est), DPM_OK);
        stats[2 * BINS * RUNS + r] = est.valid ? est.auc : -1.0;
        dpm_prc_estimate_t prc; /* average precision and calibration of the same sums */
        assert_int_equal(dpm_prc_estimate(&sim_roc_state_c(cfg)->params, a, 0.95, &prc), DPM_OK);
        stats[(2 * BINS + 1) * RUNS + r] = prc.valid ? prc.ap : -1.0;
        stats[(2 * BINS + 2) * RUNS + r] = prc.valid ? prc.ece : -1.0;
    }
}

static void exact_stats(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_agg_t *aggs, uint32_t first,
                        double *stats)
{
    for (uint32_t r = 0; r < RUNS; r++) {
        assert_int_equal(sim_exact_run(cfg, pop, first + r, &aggs[r], NULL), 0);
    }
    run_stats(cfg, aggs, stats);
}

/* The smallest p-value over the statistics, times their number (Bonferroni). */
static double min_p(const double *inproc, const double *exact)
{
    double *x = malloc(RUNS * sizeof(double)), *y = malloc(RUNS * sizeof(double)), best = 1.0;
    assert_non_null(x);
    assert_non_null(y);
    for (uint32_t s = 0; s < NSTATS; s++) {
        memcpy(x, inproc + (size_t)s * RUNS, RUNS * sizeof(double));
        memcpy(y, exact + (size_t)s * RUNS, RUNS * sizeof(double));
        best = fmin(best, stat_ks_test(x, RUNS, y, RUNS));
    }
    free(x);
    free(y);
    return fmin(best * NSTATS, 1.0);
}

static void test_exact_matches_inprocess(void **state)
{
    fixture_t *f = *state;
    assert_true(sim_roc_state(&f->cfg) != NULL && sim_roc_state(&f->cfg)->bins == BINS);
    double *inproc = malloc((size_t)NSTATS * RUNS * sizeof(double));
    double *exact = malloc((size_t)NSTATS * RUNS * sizeof(double));
    assert_non_null(inproc);
    assert_non_null(exact);
    sim_farm_opts_t fo = {2, NULL, NULL, NULL};
    sim_farm_stats_t fs;
    memset(&fs, 0, sizeof(fs));
    assert_int_equal(sim_farm_runs(&f->cfg, &f->pop, 0, RUNS, &fo, f->aggs, &fs), DPM_OK);
    assert_true(fs.reports == (uint64_t)DEVICES * RUNS && fs.dropped == 0);
    assert_true(sim_roc_agg_c(&f->aggs[0])->reports == DEVICES && f->cfg.reporting == DEVICES);
    run_stats(&f->cfg, f->aggs, inproc);
    /* exact mode on other run indices: independent of the inprocess runs */
    exact_stats(&f->cfg, &f->pop, f->aggs, RUNS, exact);
    double p = min_p(inproc, exact);
    printf("# exact vs inprocess: min p (Bonferroni over %u) = %.3g\n", NSTATS, p);
    assert_true(p >= ALPHA);

    /* negative control 1: the noise scale 1.5x too large */
    static sim_cfg_t bad; /* ~17 KB: off the stack */
    bad = f->cfg;
    sim_roc_state(&bad)->scale *= 1.5;
    exact_stats(&bad, &f->pop, f->aggs, RUNS, exact);
    p = min_p(inproc, exact);
    printf("# control, noise scale x1.5: p = %.3g\n", p);
    assert_true(p < ALPHA);

    /* negative control 2: the truth of another realization of the devices' examples */
    sim_roc_model_t other = *sim_roc_state(&f->cfg)->model;
    other.base_key ^= 1u;
    int include[SIM_MAX_GROUPS] = {1, 1};
    uint64_t devices = 0;
    bad = f->cfg;
    sim_roc_truth_counts(&other, &f->pop, include, 1, NULL, sim_roc_state(&bad)->pos,
                         sim_roc_state(&bad)->neg, &devices);
    assert_true(devices == DEVICES);
    exact_stats(&bad, &f->pop, f->aggs, RUNS, exact);
    p = min_p(inproc, exact);
    printf("# control, other devices' examples: p = %.3g\n", p);
    assert_true(p < ALPHA);
    free(inproc);
    free(exact);
}

/* ---- coverage ---------------------------------------------------------------------------------
 */

#define COV_RUNS 4000u

static const char kCoverage[] =
    "[scenario]\nseed = 11\nruns = 4000\ndevices = 20000\nconfidence = 0.95\nmode = exact\n"
    "[population]\nexamples = 20\n"
    "[group a]\nshare = 0.7\nscores = binormal(auc=0.85, base_rate=0.3)\n"
    "[group b]\nshare = 0.3\nscores = binormal(auc=0.7, base_rate=0.5)\n"
    "partition = noniid(concentration=2, auc_sd=0.4)\n"
    "[campaign roc]\nmechanism = roc_hist\neps = 1\nbins = 10\n";

static void test_coverage(void **state)
{
    (void)state;
    sim_scenario_t *sc = malloc(sizeof(*sc));
    char err[256];
    assert_non_null(sc);
    assert_int_equal(
        sim_scenario_parse(kCoverage, sizeof(kCoverage) - 1, "c", sc, err, sizeof(err)), 0);
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = SIM_MODE_EXACT;
    ro.threads = 2;
    ro.quiet = 1;
    sim_session_t s;
    assert_int_equal(sim_session_run(sc, &ro, &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 1);
    const sim_result_t *r = &s.res[0];
    const sim_roc_ext_t *x = r->ext;
    sim_item_summary_t sm, total;
    double pw, all_pw, simul;
    sim_result_summary(r, SIM_ROC_ITEM_BINNED, &sm);
    sim_result_summary(r, SIM_ROC_ITEM_MODEL, &total);
    sim_roc_band_coverage(x, sim_roc_state_c(&r->cfg)->bins, &pw, &all_pw, &simul);
    assert_int_equal(sm.runs, COV_RUNS);
    uint32_t covered = 0, narrow = 0, mid = sim_roc_state_c(&r->cfg)->bins / 2;
    double truth = sm.truth;
    for (uint32_t run = 0; run < COV_RUNS; run++) {
        const sim_item_run_t *a = sim_result_at(r, run, SIM_ROC_ITEM_BINNED);
        covered += a->lo <= truth && truth <= a->hi;
        double half = (a->hi - a->lo) / 2.0 / 1.5, c = (a->hi + a->lo) / 2.0;
        narrow += c - half <= truth && truth <= c + half;
    }
    double p_auc = stat_binom_two_sided(covered, COV_RUNS, 0.95);
    double p_band = stat_binom_two_sided(x->cover[mid], COV_RUNS, 0.95);
    double p_sim = stat_binom_cdf(x->simultaneous, COV_RUNS, 0.95);
    double p_narrow = stat_binom_two_sided(narrow, COV_RUNS, 0.95);
    printf("# AUC truth %.5f, rmse %.3g, mean sd %.3g; coverage %.4f (p %.3g); band at threshold "
           "%u %.4f (p %.3g); simultaneous %.4f (p %.3g); shrunk interval %.4f (p %.3g)\n",
           truth, sm.rmse, sm.mean_sd, sm.coverage, p_auc, mid, x->cover[mid] / (double)COV_RUNS,
           p_band, simul, p_sim, narrow / (double)COV_RUNS, p_narrow);
    assert_true(p_auc >= ALPHA);
    assert_true(p_band >= ALPHA);
    assert_true(p_sim >= ALPHA);
    assert_true(p_narrow < ALPHA); /* the test can fail */
    /* the predicted sd matches the spread of the estimates (within 10%) */
    assert_true(fabs(sm.mean_sd / sm.rmse - 1.0) < 0.1);
    /* the noise + sampling interval is wider than the noise-only one, around the same estimate */
    assert_true(total.mean_sd >= sm.mean_sd);
    sim_session_free(&s);
    free(sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_matches_inprocess),
        cmocka_unit_test(test_coverage),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
