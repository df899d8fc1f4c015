/* SPDX-License-Identifier: Apache-2.0 */
/* Kendall's tau in dpm-sim (ustat_bins, kernel = kendall), statistically (fixed seeds,
 * alpha = 1e-6):
 *
 * 1. Exact mode against inprocess mode. Inprocess runs the real SDK per device (the device's
 *    pair -> dpm_mech_report_ustat_bins -> encode -> decode -> check -> aggregate); exact mode
 *    draws the k^2 report histogram from the pairs' true binned histogram through the GRR's law.
 *    Two-sample Kolmogorov-Smirnov test of every cell count and of the tau estimate over RUNS
 *    runs of each (2,000 devices in two groups, rho 0.9 and 0.5, k = 4), Bonferroni over the
 *    k^2 + 1 tests. Negative controls, each rejected
 *    (p < 1e-6): exact mode at eps 2.1 instead of 2 (the GRR keeps 7% more often), and exact
 *    mode over another population seed's pairs.
 * 2. Coverage of the estimator's 95% interval for the binned pairs' tau_a (its target), by the
 *    two-sided exact binomial test: 4000 exact-mode runs at 20,000 devices, and 200 inprocess
 *    runs at 2,000 devices (every device through the SDK). The predicted sd matches the spread
 *    of the estimates (within 10%). Negative controls: the same intervals shrunk 1.5x (exact)
 *    and 3x (inprocess) fail the binomial test.
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

#include "estimate/ustat.h"
#include "sim/run/farm.h"
#include "sim/pop/population.h"
#include "sim/devices/results.h"
#include "sim/scenario/scenario.h"
#include "sim/devices/mechs.h" /* sim_scenario_parse, sim_scenario_load */
#include "sim/run/session.h"
#include "sim/devices/sim_cfg.h"
#include "stat_gof.h"
#include "stat_ks.h"

#define DEVICES 2000u
#define RUNS 2000u
#define ALPHA 1e-6
#define K 4u
#define NSTATS (K * K + 1u)

#define SCENARIO(POPSEED, EPS)                                                                     \
    "[scenario]\nseed = 31\n"                                                                      \
    "[population]\nseed = " POPSEED "\n"                                                           \
    "[group a]\nshare = 0.6\npairs = bivariate_normal(rho=0.9)\n"                                  \
    "[group b]\nshare = 0.4\npairs = bivariate_normal(rho=0.5)\n"                                  \
    "[campaign tau]\nmechanism = ustat_bins\nkernel = kendall\nk = 4\neps = " EPS "\n"

static const char kGood[] = SCENARIO("5", "2");
static const char kEps[] = SCENARIO("5", "2.1");
static const char kOtherPairs[] = SCENARIO("6", "2");

typedef struct {
    sim_scenario_t sc;
    sim_pop_t pop;
    sim_cfg_t cfg;
} config_t;

typedef struct {
    config_t good, bad;
    sim_agg_t *aggs;
} fixture_t;

static int config_build(config_t *c, const char *text, size_t len)
{
    char err[256];
    if (sim_fixture_build(text, len, DEVICES, &c->sc, &c->pop, err, sizeof(err)) != 0 ||
        sim_cfg_init(&c->cfg, &c->sc, 0, 0, err, sizeof(err)) != 0 ||
        sim_cfg_prepare(&c->cfg, &c->pop, 1, err, sizeof(err)) != 0) {
        fprintf(stderr, "setup: %s\n", err);
        return -1;
    }
    return 0;
}

static void config_free(config_t *c)
{
    sim_cfg_release(&c->cfg);
    sim_pop_free(&c->pop);
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    if (f == NULL || config_build(&f->good, kGood, sizeof(kGood) - 1) != 0) {
        return -1;
    }
    f->aggs = malloc(RUNS * sizeof(*f->aggs));
    *state = f;
    return f->aggs != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    config_free(&f->good);
    free(f->aggs);
    free(f);
    return 0;
}

/* The k^2 cell counts and the tau estimate (by the good configuration's estimator) of each
 * run, column-major: stats[s * RUNS + run]. */
static void run_stats(const sim_cfg_t *good, const sim_agg_t *aggs, double *stats)
{
    for (uint32_t r = 0; r < RUNS; r++) {
        const dpm_ustat_bins_agg_t *a = (const dpm_ustat_bins_agg_t *)aggs[r].data.bytes;
        assert_int_equal(a->domain, K * K);
        for (uint32_t v = 0; v < K * K; v++) {
            stats[v * RUNS + r] = (double)a->count[0][v];
        }
        sim_item_run_t out[3];
        out[0].est = NAN;
        good->m->estimate(good, &aggs[r], r, out, NULL);
        stats[K * K * RUNS + r] = isnan(out[0].est) ? -9.0 : out[0].est;
    }
}

static void exact_stats(const sim_cfg_t *good, const sim_cfg_t *cfg, const sim_pop_t *pop,
                        sim_agg_t *aggs, uint32_t first, double *stats)
{
    for (uint32_t r = 0; r < RUNS; r++) {
        assert_int_equal(sim_exact_run(cfg, pop, first + r, &aggs[r], NULL), 0);
    }
    run_stats(good, aggs, stats);
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
    const sim_cfg_t *good = &f->good.cfg;
    assert_true(good->reporting == DEVICES && good->nitems == 3);
    double *inproc = malloc((size_t)NSTATS * RUNS * sizeof(double));
    double *exact = malloc((size_t)NSTATS * RUNS * sizeof(double));
    assert_non_null(inproc);
    assert_non_null(exact);
    sim_farm_opts_t fo = {2, NULL, NULL, NULL};
    sim_farm_stats_t fs;
    memset(&fs, 0, sizeof(fs));
    assert_int_equal(sim_farm_runs(good, &f->good.pop, 0, RUNS, &fo, f->aggs, &fs), DPM_OK);
    assert_true(fs.reports == (uint64_t)DEVICES * RUNS && fs.dropped == 0);
    run_stats(good, f->aggs, inproc);
    /* exact mode on other run indices: independent of the inprocess runs */
    exact_stats(good, good, &f->good.pop, f->aggs, RUNS, exact);
    double p = min_p(inproc, exact);
    printf("# exact vs inprocess: min p (Bonferroni over %u) = %.3g\n", NSTATS, p);
    assert_true(p >= ALPHA);

    /* negative control 1: the GRR of eps 2.1 */
    assert_int_equal(config_build(&f->bad, kEps, sizeof(kEps) - 1), 0);
    exact_stats(good, &f->bad.cfg, &f->bad.pop, f->aggs, RUNS, exact);
    p = min_p(inproc, exact);
    printf("# control, eps 2.1 for 2: p = %.3g\n", p);
    assert_true(p < ALPHA);
    config_free(&f->bad);

    /* negative control 2: another population seed's pairs (the same eps) */
    assert_int_equal(config_build(&f->bad, kOtherPairs, sizeof(kOtherPairs) - 1), 0);
    exact_stats(good, &f->bad.cfg, &f->bad.pop, f->aggs, RUNS, exact);
    p = min_p(inproc, exact);
    printf("# control, other pairs: p = %.3g\n", p);
    assert_true(p < ALPHA);
    config_free(&f->bad);
    free(inproc);
    free(exact);
}

/* ---- coverage ------------------------------------------------------------------------------ */

#define COVERAGE(MODE, DEVS, NRUNS)                                                                \
    "[scenario]\nseed = 12\nruns = " NRUNS "\ndevices = " DEVS "\nmode = " MODE "\n"               \
    "[group a]\nshare = 0.5\npairs = bivariate_normal(rho=0.6)\n"                                  \
    "[group b]\nshare = 0.5\npairs = bivariate_normal(rho=0.3)\n"                                  \
    "[campaign tau]\nmechanism = ustat_bins\nkernel = kendall\nk = 6\neps = 2\n"

/* Runs the scenario; binomial p-values of the coverage of the binned tau_a and of the interval
 * shrunk by `shrink`. */
static void coverage(const char *text, size_t len, sim_mode_t mode, uint32_t runs, double shrink,
                     double *p_cover, double *p_shrunk, double *sd_ratio)
{
    sim_scenario_t *sc = malloc(sizeof(*sc));
    char err[256];
    assert_non_null(sc);
    assert_int_equal(sim_scenario_parse(text, len, "c", sc, err, sizeof(err)), 0);
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = mode;
    ro.threads = 2;
    ro.quiet = 1;
    sim_session_t s;
    assert_int_equal(sim_session_run(sc, &ro, &s, err, sizeof(err)), 0);
    assert_int_equal(s.n, 1);
    const sim_result_t *r = &s.res[0];
    assert_true(r->cfg.nitems == 3 && strcmp(r->cfg.items[1].kind, "tau_binned") == 0);
    sim_item_summary_t sm, model;
    sim_result_summary(r, 1, &sm);
    sim_result_summary(r, 0, &model);
    assert_int_equal(sm.runs, runs);
    uint32_t covered = 0, narrow = 0;
    for (uint32_t run = 0; run < runs; run++) {
        const sim_item_run_t *a = sim_result_at(r, run, 1);
        covered += a->lo <= sm.truth && sm.truth <= a->hi;
        double half = (a->hi - a->lo) / 2.0 / shrink, c = (a->hi + a->lo) / 2.0;
        narrow += c - half <= sm.truth && sm.truth <= c + half;
    }
    *p_cover = stat_binom_two_sided(covered, runs, 0.95);
    *p_shrunk = stat_binom_two_sided(narrow, runs, 0.95);
    *sd_ratio = sm.mean_sd / sm.rmse;
    printf("# %s, %u runs: binned tau_a %.5f (model %.5f), rmse %.3g, mean sd %.3g, mean err "
           "%+.2g; coverage %.4f (p %.3g); shrunk %.1fx %.4f (p %.3g)\n",
           mode == SIM_MODE_EXACT ? "exact" : "inprocess", runs, sm.truth, model.truth, sm.rmse,
           sm.mean_sd, sm.mean_error, covered / (double)runs, *p_cover, shrink,
           narrow / (double)runs, *p_shrunk);
    sim_session_free(&s);
    free(sc);
}

static void test_coverage_exact(void **state)
{
    (void)state;
    static const char text[] = COVERAGE("exact", "20000", "4000");
    double p, p_shrunk, ratio;
    coverage(text, sizeof(text) - 1, SIM_MODE_EXACT, 4000, 1.5, &p, &p_shrunk, &ratio);
    assert_true(p >= ALPHA);
    assert_true(p_shrunk < ALPHA); /* the test can fail */
    assert_true(fabs(ratio - 1.0) < 0.1);
}

static void test_coverage_inprocess(void **state)
{
    (void)state;
    static const char text[] = COVERAGE("inprocess", "2000", "200");
    double p, p_shrunk, ratio;
    coverage(text, sizeof(text) - 1, SIM_MODE_INPROCESS, 200, 3.0, &p, &p_shrunk, &ratio);
    assert_true(p >= ALPHA);
    assert_true(p_shrunk < ALPHA);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_matches_inprocess),
        cmocka_unit_test(test_coverage_exact),
        cmocka_unit_test(test_coverage_inprocess),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
