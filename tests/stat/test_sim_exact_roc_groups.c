/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist_groups in the simulator: exact mode against inprocess mode (fixed seeds, alpha =
 * 1e-6). Inprocess runs the real SDK per device (examples -> dpm_score_hist_add -> the GRR'd
 * group and the noised histogram -> encode -> decode -> aggregate); exact mode draws each
 * device's report from the same laws without the SDK (mech_roc_groups.c). Two-sample
 * Kolmogorov-Smirnov test, over RUNS runs of each, of every item dpm-sim prints for the
 * campaign: each group's AUC (binned and unbinned), every gap, each group's AP and ECE and
 * Fairlearn's difference and ratio of both (estimate/roc_groups_prc.h); Bonferroni over the
 * items. An estimate the estimator refused counts as -1 (its own value in the KS test).
 * Negative control, rejected (p < 1e-6): exact mode of the same campaign with ε / 1.5 (the
 * noise 1.5x too large, the GRR's keep lower), against the same inprocess runs.
 * The two-aggregator mode (roc_hist_2agg) is not here: its inprocess mode runs Prio3 and HPKE
 * per device, about 0.5 ms a report, too slow for make test at this many runs.
 * KS on discrete statistics is conservative; the control shows the test can fail. At 991cf51:
 * min p 0.269 (Bonferroni), the control p = 5.9e-16, in 11 s. */
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

#include "sim/devices/results.h"
#include "sim/run/farm.h"
#include "stat_ks.h"

#define DEVICES 600u
#define RUNS 1000u
#define ALPHA 1e-6

/* campaign 0: the one checked, at a large ε so that the estimates' spread is small and a
 * mistake in exact mode stands out; campaign 1: the same at ε / 1.5 (the negative control) */
static const char kScenario[] =
    "[scenario]\nseed = 808\n"
    "[population]\nseed = 9\nexamples = 8\n"
    "[group a]\nshare = 0.5\nscores = binormal(auc=0.85, base_rate=0.4)\n"
    "[group b]\nshare = 0.3\nscores = binormal(auc=0.7, base_rate=0.3)\n"
    "[group c]\nshare = 0.2\nscores = binormal(auc=0.6, base_rate=0.5)\n"
    "[campaign rocg]\nmechanism = roc_hist_groups\neps = 12\n"
    "group_eps = 6\nbins = 5\n"
    "[campaign wide]\nmechanism = roc_hist_groups\neps = 8\n"
    "group_eps = 4\nbins = 5\n";

typedef struct {
    sim_scenario_t sc;
    sim_pop_t pop;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    char err[256];
    if (f == NULL || sim_fixture_build(kScenario, sizeof(kScenario) - 1, DEVICES, &f->sc, &f->pop,
                                       err, sizeof(err)) != 0) {
        fprintf(stderr, "setup: %s\n", f != NULL ? err : "out of memory");
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    if (f != NULL) { /* NULL when setup failed */
        sim_pop_free(&f->pop);
        free(f);
    }
    return 0;
}

/* Every item's estimate of RUNS runs of campaign c, item-major: out[i * RUNS + run]; inprocess
 * (first run index 0) or exact (run indices from RUNS on: independent of the inprocess ones).
 * Returns the number of items; kinds (optional) gets each item's kind. */
static uint32_t item_runs(fixture_t *f, uint32_t c, int exact, double *out, char (*kinds)[16])
{
    static sim_cfg_t cfg;
    static sim_result_t res;
    char err[256];
    assert_int_equal(sim_cfg_init(&cfg, &f->sc, c, 0, err, sizeof(err)), 0);
    assert_int_equal(sim_cfg_prepare(&cfg, &f->pop, 1, err, sizeof(err)), 0);
    assert_int_equal(sim_result_init(&res, &cfg, DEVICES, RUNS), 0);
    sim_agg_t *aggs = malloc(sizeof(sim_agg_t) * RUNS);
    assert_non_null(aggs);
    if (exact) {
        for (uint32_t r = 0; r < RUNS; r++) {
            assert_int_equal(sim_exact_run(&cfg, &f->pop, RUNS + r, &aggs[r], NULL), 0);
        }
    } else {
        sim_farm_opts_t fo = {2, NULL, NULL, NULL};
        sim_farm_stats_t fs;
        memset(&fs, 0, sizeof(fs));
        assert_int_equal(sim_farm_runs(&cfg, &f->pop, 0, RUNS, &fo, aggs, &fs), DPM_OK);
        assert_true(fs.reports == (uint64_t)DEVICES * RUNS && fs.dropped == 0);
    }
    uint32_t n = cfg.nitems;
    for (uint32_t r = 0; r < RUNS; r++) {
        sim_result_add_run(&res, r, &aggs[r]);
        for (uint32_t i = 0; i < n; i++) {
            double est = sim_result_at(&res, r, i)->est;
            out[(size_t)i * RUNS + r] = isfinite(est) ? est : -1.0;
        }
    }
    for (uint32_t i = 0; kinds != NULL && i < n; i++) {
        memcpy(kinds[i], cfg.items[i].kind, sizeof(kinds[i]));
    }
    sim_result_free(&res);
    sim_cfg_release(&cfg);
    free(aggs);
    return n;
}

/* The smallest KS p-value over the n items, times n (Bonferroni); *worst its item. Sorts each
 * item's runs in place (the KS test does; their order is not needed). */
static double min_p(double *a, double *b, uint32_t n, uint32_t *worst)
{
    double best = 1.0;
    *worst = 0;
    for (uint32_t i = 0; i < n; i++) {
        double p = stat_ks_test(a + (size_t)i * RUNS, RUNS, b + (size_t)i * RUNS, RUNS);
        if (p < best) {
            best = p;
            *worst = i;
        }
    }
    return fmin(best * n, 1.0);
}

static void test_exact_matches_inprocess(void **state)
{
    fixture_t *f = *state;
    enum { MAX_ITEMS = 64 };
    double *in = malloc(sizeof(double) * MAX_ITEMS * RUNS);
    double *ex = malloc(sizeof(double) * MAX_ITEMS * RUNS);
    static char kinds[MAX_ITEMS][16];
    assert_true(in != NULL && ex != NULL);
    uint32_t n = item_runs(f, 0, 0, in, kinds);
    assert_true(n > 0 && n <= MAX_ITEMS);
    uint32_t prc = 0, worst = 0;
    for (uint32_t i = 0; i < n; i++) {
        prc += strncmp(kinds[i], "ap", 2) == 0 || strncmp(kinds[i], "ece", 3) == 0;
    }
    assert_true(prc >= 3 * 2 + 4); /* each group's AP and ECE, their differences and ratios */
    assert_int_equal(item_runs(f, 0, 1, ex, NULL), n);
    double p = min_p(in, ex, n, &worst);
    print_message("# exact vs inprocess: %u items (%u of AP and ECE), min p (Bonferroni) = %.3g "
                  "at %s\n",
                  n, prc, p, kinds[worst]);
    assert_true(p >= ALPHA);
    assert_int_equal(item_runs(f, 1, 1, ex, NULL), n);
    p = min_p(in, ex, n, &worst);
    print_message("# control, exact mode at eps / 1.5: p = %.3g at %s\n", p, kinds[worst]);
    assert_true(p < ALPHA);
    free(in);
    free(ex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_matches_inprocess),
    };
    return cmocka_run_group_tests_name("sim_exact_roc_groups", tests, setup, teardown);
}
