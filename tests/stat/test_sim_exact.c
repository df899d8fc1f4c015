/* SPDX-License-Identifier: Apache-2.0 */
/* Exact mode against inprocess mode: the same scenario, many runs of each, and a two-sample
 * Kolmogorov-Smirnov test of every aggregate statistic (reports per group, sum of the reported
 * values per group and metric) and of the first disparity estimate, at alpha = 1e-6 overall
 * (Bonferroni over all tests), fixed seeds. Inprocess runs the real SDK per device; exact mode
 * draws the aggregates directly (sim/exact.h), so agreement says exact mode is distributed as
 * the sum of the device reports.
 *
 * Negative controls show the test has the power to see small mistakes: an exact sampler whose
 * group keep probability is 5% too high, one whose value RR is 3% off, and one that forgets to
 * zero the value of flipped tuple_ml reports, are each rejected (p < 1e-6).
 * KS on discrete statistics is conservative (true level below alpha): it cannot flake. */
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
#include "sim/devices/mech_tuple.h"
#include "sim/pop/population.h"
#include "sim/devices/results.h"
#include "sim/scenario/scenario.h"
#include "stat_ks.h"

#define DEVICES 1000u
#define RUNS 2000u
#define ALPHA 1e-6
#define MAX_STATS (SIM_MAX_GROUPS * (1 + DPM_CAMPAIGN_MAX_METRICS) + 1)

static const char kScenario[] =
    "[scenario]\nseed = 4242\n"
    "[group a]\nshare = 0.45\nscores = binormal(auc=0.85, base_rate=0.4, examples=12)\n"
    "[group b]\nshare = 0.35\ntpr = constant(0.7)\nfpr = constant(1/8)\n"
    "[group c]\nshare = 0.2\ntpr = beta(4, 2)\nfpr = beta(1, 9)\n"
    "[campaign mr]\nmechanism = tuple_mr\neps = 1\nmetrics = tpr\n"
    "[campaign ml2]\nmechanism = tuple_ml\neps = 1.5\nmetrics = tpr, fpr\n"
    "[campaign mlpaper]\nmechanism = tuple_ml\nsplit = paper\neps = 0.5\nmetrics = tpr\n";
#define NCAMPAIGNS 3u

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
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    sim_pop_free(&f->pop);
    free(f);
    return 0;
}

/* ---- statistics of one run ------------------------------------------------------------------ */

/* counts per group, sums per group and metric, the first gap estimate. */
static size_t run_stats(const sim_cfg_t *cfg, const sim_agg_t *agg, sim_result_t *res, uint32_t run,
                        double *out)
{
    size_t k = 0;
    const sim_tuple_agg_t *ta = sim_tuple_agg_c(agg);
    for (uint32_t g = 0; g < cfg->d; g++) {
        out[k++] = (double)ta->m[0].count[g];
        for (uint32_t j = 0; j < ta->nmetrics; j++) {
            double s = 0.0;
            (void)dpm_disp_agg_sum(&ta->m[j], g, &s);
            out[k++] = s;
        }
    }
    sim_result_add_run(res, run, agg);
    out[k++] = sim_result_at(res, run, sim_tuple_item(cfg, 0, 0, 1))->est;
    return k;
}

typedef enum { EXACT_OK, EXACT_KEEP_HIGH, EXACT_VALUE_OFF, EXACT_NO_ZEROING } variant_t;

/* Exact mode with a deliberate mistake, for the negative controls. */
static int exact_variant(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run, variant_t v,
                         sim_agg_t *agg)
{
    static sim_cfg_t bad; /* a copy whose exact-mode integers are wrong; ~17 KB: off the stack */
    bad = *cfg;
    sim_tuple_noise_t *nz = &sim_tuple_state(&bad)->noise;
    if (v == EXACT_KEEP_HIGH) {
        nz->keep_g = (uint32_t)fmin(nz->keep_g * 1.05, 4294967295.0);
    } else if (v == EXACT_VALUE_OFF) {
        nz->keep_v = (uint32_t)(nz->keep_v * 1.03);
        nz->other_v = (uint32_t)(4294967296.0 - nz->keep_v);
    }
    if (v != EXACT_NO_ZEROING) {
        return sim_exact_run(&bad, pop, run, agg, NULL);
    }
    /* flipped tuple_ml reports keep their value: as if every report were kept (a = 1 for the
     * values) while the group counts stay right */
    static sim_agg_t counts, values;
    nz->keep_g = UINT32_MAX;
    if (sim_exact_run(cfg, pop, run, &counts, NULL) != 0 ||
        sim_exact_run(&bad, pop, run + 1000000u, &values, NULL) != 0) {
        return -1;
    }
    *agg = counts;
    sim_tuple_agg_t *ta = sim_tuple_agg(agg);
    const sim_tuple_agg_t *tv = sim_tuple_agg_c(&values);
    for (uint32_t j = 0; j < ta->nmetrics; j++) {
        memcpy(ta->m[j].sum, tv->m[j].sum, sizeof(ta->m[j].sum));
    }
    return 0;
}

/* Min over the statistics of the KS p-value, inprocess against an exact variant. */
static double compare(fixture_t *f, uint32_t c, variant_t v, double *inproc, size_t *nstats,
                      int have_inproc)
{
    static sim_cfg_t cfg;
    static sim_result_t res_in, res_ex;
    char err[256];
    assert_int_equal(sim_cfg_init(&cfg, &f->sc, c, 0, err, sizeof(err)), 0);
    assert_int_equal(sim_cfg_prepare(&cfg, &f->pop, 1, err, sizeof(err)), 0);
    assert_int_equal(sim_result_init(&res_in, &cfg, DEVICES, RUNS), 0);
    assert_int_equal(sim_result_init(&res_ex, &cfg, DEVICES, RUNS), 0);
    double *ex = malloc(sizeof(double) * MAX_STATS * RUNS), *a = malloc(sizeof(double) * RUNS),
           *b = malloc(sizeof(double) * RUNS);
    sim_agg_t *aggs = malloc(sizeof(sim_agg_t) * RUNS);
    assert_non_null(ex);
    assert_non_null(aggs);
    size_t k = 0;
    if (!have_inproc) {
        sim_farm_opts_t fo = {2, NULL, NULL, NULL};
        assert_int_equal(sim_farm_runs(&cfg, &f->pop, 0, RUNS, &fo, aggs, NULL), DPM_OK);
        for (uint32_t r = 0; r < RUNS; r++) {
            k = run_stats(&cfg, &aggs[r], &res_in, r, inproc + (size_t)r * MAX_STATS);
        }
        *nstats = k;
    }
    for (uint32_t r = 0; r < RUNS; r++) { /* other run indices: independent of inprocess */
        static sim_agg_t agg;
        assert_int_equal(exact_variant(&cfg, &f->pop, RUNS + r, v, &agg), 0);
        k = run_stats(&cfg, &agg, &res_ex, r, ex + (size_t)r * MAX_STATS);
    }
    assert_int_equal(k, *nstats);
    double pmin = 1.0;
    for (size_t s = 0; s < k; s++) {
        for (uint32_t r = 0; r < RUNS; r++) {
            a[r] = inproc[(size_t)r * MAX_STATS + s];
            b[r] = ex[(size_t)r * MAX_STATS + s];
        }
        pmin = fmin(pmin, stat_ks_test(a, RUNS, b, RUNS));
    }
    sim_result_free(&res_in);
    sim_result_free(&res_ex);
    sim_cfg_release(&cfg);
    free(ex);
    free(a);
    free(b);
    free(aggs);
    return pmin;
}

static void test_exact_matches_inprocess(void **state)
{
    fixture_t *f = *state;
    double *inproc = malloc(sizeof(double) * MAX_STATS * RUNS);
    size_t nstats = 0, total_tests = 0;
    double pmin[NCAMPAIGNS];
    assert_non_null(inproc);
    for (uint32_t c = 0; c < NCAMPAIGNS; c++) {
        pmin[c] = compare(f, c, EXACT_OK, inproc, &nstats, 0);
        total_tests += nstats;
        /* negative controls on the same inprocess sample */
        variant_t bad = c == 0 ? EXACT_VALUE_OFF : EXACT_NO_ZEROING;
        double p_keep = compare(f, c, EXACT_KEEP_HIGH, inproc, &nstats, 1);
        double p_bad = compare(f, c, bad, inproc, &nstats, 1);
        print_message("# campaign %u: %zu statistics, min KS p = %.3g; controls: keep +5%% p = "
                      "%.3g, %s p = %.3g\n",
                      c, nstats, pmin[c], p_keep,
                      bad == EXACT_VALUE_OFF ? "value RR +3%" : "no zeroing", p_bad);
        assert_true(p_keep < ALPHA);
        assert_true(p_bad < ALPHA);
    }
    for (uint32_t c = 0; c < NCAMPAIGNS; c++) {
        assert_true(pmin[c] >= ALPHA / (double)total_tests);
    }
    free(inproc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_matches_inprocess),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
