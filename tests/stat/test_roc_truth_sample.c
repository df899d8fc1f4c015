/* SPDX-License-Identifier: Apache-2.0 */
/* The roc_hist truth drawn from its law in O(blocks x bins) (roc_sim.h, sim_roc_truth_sample)
 * against realizing every device's examples (sim_roc_truth_counts), statistically: over R
 * realizations of each (the devices' example streams re-keyed, the sampler's key varied) on
 * one population of blocks (an IID group and a group with label skew and a feature shift), a
 * two-sample Kolmogorov-Smirnov test of every cell (positives and negatives per bin) and of the
 * binned AUC, Bonferroni over the 2 B + 1 tests at alpha = 1e-6, fixed seeds. Negative
 * controls, each rejected: the sampler run on a model whose IID group has AUC 0.87 instead of
 * 0.85, and on a model that ignores group b's feature shift (its positives drawn from the
 * IID rows at its AUC, as if auc_sd were 0). The second test draws the truth of 10^12 devices
 * (the sampler's cost does not grow with them) and finds every example counted. */
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

#include "estimate/roc.h"
#include "sim/pop/population.h"
#include "sim/pop/roc_sim.h"
#include "sim/scenario/scenario.h"
#include "stat_ks.h"

#define DEVICES 2000u
#define R 1000u
#define ALPHA 1e-6
#define BINS 6u
#define NSTATS (2u * BINS + 1u)

static const char kScenario[] = "[scenario]\nseed = 5\n"
                                "[population]\nseed = 9\nexamples = 10\n"
                                "[group a]\nshare = 0.6\nscores = binormal(auc=%s, base_rate=0.3)\n"
                                "[group b]\nshare = 0.4\nscores = binormal(auc=0.75, "
                                "base_rate=0.4)\npartition = %s\n"
                                "[campaign roc]\nmechanism = roc_hist\neps = 1\n"
                                "edges = 0.2, 0.4, 0.5, 0.6, 0.8\n";

typedef struct {
    sim_scenario_t sc;
    sim_pop_t pop;
    sim_roc_model_t model;
} world_t;

static world_t *world(const char *auc_a, const char *partition_b)
{
    world_t *w = calloc(1, sizeof(*w));
    char text[1024], err[256];
    int n = snprintf(text, sizeof(text), kScenario, auc_a, partition_b);
    assert_non_null(w);
    if (sim_fixture_build(text, (size_t)n, DEVICES, &w->sc, &w->pop, err, sizeof(err)) != 0 ||
        sim_roc_model_init(&w->model, &w->sc, &w->pop, w->sc.campaign[0].edges,
                           w->sc.campaign[0].nedges) != 0) {
        fail_msg("setup: %s", err);
    }
    return w;
}

static void world_free(world_t *w)
{
    sim_roc_model_free(&w->model);
    sim_pop_free(&w->pop);
    free(w);
}

/* One realization's statistics: pos[0..B), neg[0..B), the binned AUC. */
static void stats(const uint64_t *pos, const uint64_t *neg, double *out)
{
    double tpr[BINS + 1], fpr[BINS + 1], auc = NAN;
    for (uint32_t b = 0; b < BINS; b++) {
        out[b] = (double)pos[b];
        out[BINS + b] = (double)neg[b];
    }
    assert_int_equal(dpm_roc_exact(pos, neg, BINS, tpr, fpr, &auc), DPM_OK);
    out[2 * BINS] = auc;
}

/* R realizations into x[stat * R + rep]: by devices (sample = 0) or from the law (sample = 1). */
static void realize(const world_t *w, const sim_pop_t *pop, int sample, uint64_t seed, double *x)
{
    int include[SIM_MAX_GROUPS] = {1, 1};
    sim_roc_model_t m = w->model;
    uint64_t pos[BINS], neg[BINS], devices = 0;
    double s[NSTATS];
    for (uint32_t r = 0; r < R; r++) {
        if (sample) {
            sim_roc_truth_sample(&m, pop, include, seed * 1000003u + r, pos, neg, &devices);
        } else {
            m.base_key = seed * 1000003u + r; /* another draw of every device's examples */
            sim_roc_truth_counts(&m, pop, include, 1, NULL, pos, neg, &devices);
        }
        assert_int_equal(devices, DEVICES);
        stats(pos, neg, s);
        for (uint32_t k = 0; k < NSTATS; k++) {
            x[k * R + r] = s[k];
        }
    }
}

/* The smallest KS p-value over the statistics (copies: the test sorts). */
static double min_p(const double *x, const double *y)
{
    double *a = malloc(R * sizeof(double)), *b = malloc(R * sizeof(double)), p = 1.0;
    assert_true(a != NULL && b != NULL);
    for (uint32_t k = 0; k < NSTATS; k++) {
        memcpy(a, x + k * R, R * sizeof(double));
        memcpy(b, y + k * R, R * sizeof(double));
        p = fmin(p, stat_ks_test(a, R, b, R));
    }
    free(a);
    free(b);
    return p;
}

static void test_sampled_truth_matches_devices(void **state)
{
    (void)state;
    world_t *w = world("0.85", "noniid(concentration=3, auc_sd=0.5)");
    double *by_device = malloc(NSTATS * R * sizeof(double));
    double *sampled = malloc(NSTATS * R * sizeof(double));
    assert_true(by_device != NULL && sampled != NULL);
    realize(w, &w->pop, 0, 1, by_device);
    realize(w, &w->pop, 1, 2, sampled);
    double p = min_p(by_device, sampled);
    print_message("# O(bins) truth vs O(devices) truth: smallest KS p = %.3g over %u stats, "
                  "level %.3g\n",
                  p, NSTATS, ALPHA / NSTATS);
    assert_true(p > ALPHA / NSTATS);

    /* control 1: the IID group's AUC 0.87 instead of 0.85 (same population of blocks) */
    world_t *c1 = world("0.87", "noniid(concentration=3, auc_sd=0.5)");
    realize(c1, &w->pop, 1, 3, sampled);
    p = min_p(by_device, sampled);
    print_message("# control, AUC 0.87 in the sampler's model: p = %.3g\n", p);
    assert_true(p < ALPHA);
    world_free(c1);

    /* control 2: the feature shift ignored (group b's examples drawn as IID at its AUC) */
    world_t *c2 = world("0.85", "noniid(concentration=3)");
    realize(c2, &w->pop, 1, 4, sampled);
    p = min_p(by_device, sampled);
    print_message("# control, feature shift ignored: p = %.3g\n", p);
    assert_true(p < ALPHA);
    world_free(c2);

    free(by_device);
    free(sampled);
    world_free(w);
}

/* O(blocks x bins): 10^12 devices take no longer than 10^3 (the same block structure). */
static void test_sampled_truth_is_o_bins(void **state)
{
    (void)state;
    world_t *w = world("0.85", "noniid(concentration=3, auc_sd=0.5)");
    sim_scenario_t sc = w->sc;
    sim_pop_t big;
    char err[256];
    assert_int_equal(sim_pop_build(&sc, UINT64_C(1000000000000), &big, err, sizeof(err)), 0);
    sim_roc_model_t m;
    assert_int_equal(sim_roc_model_init(&m, &sc, &big, sc.campaign[0].edges, sc.campaign[0].nedges),
                     0);
    int include[SIM_MAX_GROUPS] = {1, 1};
    uint64_t pos[BINS], neg[BINS], devices = 0, total = 0;
    sim_roc_truth_sample(&m, &big, include, 7, pos, neg, &devices);
    assert_true(devices == UINT64_C(1000000000000));
    for (uint32_t b = 0; b < BINS; b++) {
        total += pos[b] + neg[b];
    }
    assert_true(total == UINT64_C(10000000000000)); /* 10 examples per device, every one */
    print_message("# 10^12 devices: %zu blocks\n", big.nblocks);
    sim_roc_model_free(&m);
    sim_pop_free(&big);
    world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampled_truth_matches_devices),
        cmocka_unit_test(test_sampled_truth_is_o_bins),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
