/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group roc_hist, end to end through the SDK: a fixed population of devices (4 groups of
 * different sizes and model quality, 6 examples each, 8 score bins), every run re-randomizing
 * every device's report (dpm_roc_hist_perturb_group: the GRR'd group and the noised histogram;
 * ε = 4 split as ε_g = 2, ε_h = 2), the server estimator on the sums. The target is the binned
 * AUC (ties 1/2) of each group's own examples. Over R runs:
 *   - every group's AUC and every gap is unbiased: |mean - truth| <= 5 se (se = sd / sqrt(R));
 *   - the estimated sd matches the spread: mean predicted variance / empirical variance in
 *     [0.85, 1.15];
 *   - the 95% intervals cover the truth in [93%, 97%] of the runs (groups and gaps).
 * Negative control: the group-less estimator on each reported group's sums (ignoring the GRR's
 * mixing) is biased towards the pooled AUC; the same checks reject its mean and its coverage.
 * Every gap at once (dpm_roc_groups_pairwise, sim/devices/selection.h): the simultaneous intervals
 * hold all six true gaps in 95 % of the runs (binomial, two-sided, p >= 1e-6) and the interval for
 * the largest |gap| holds it at least that often; the pointwise intervals read together do not (the
 * negative control, p < 1e-6). At eps 4 and at eps 16, over the runs where the family makes its
 * claim (no pointwise gap interval flagged: 77 of 1,500 runs at eps 4 have one flagged). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/mech.h"
#include "dpm/expert/roc_hist.h"
#include "dpm/expert/stats.h"
#include "estimate/ci_flags.h"
#include "estimate/fedauc.h"
#include "estimate/roc.h"
#include "estimate/roc_groups.h"
#include "sim/devices/selection.h"
#include "stat_gof.h"
#include "test_rng.h"
#include "test_figure.h"

#define G 4u
#define BINS 8u
#define DEVICES 10000u
#define EXAMPLES 6u
#define RUNS 1500u
#define ONE (UINT32_C(1) << 31)
#define NGAPS (G * (G - 1u) / 2u)

typedef struct {
    uint32_t group;
    dpm_score_hist_t h;
} device_t;

/* Group g: share w_g of the devices, positives with probability pi_g, separation mu_g. truth:
 * each group's binned AUC; exact: its examples' exact AUC. */
static void population(const dpm_roc_hist_t *m, device_t *dev, double truth[G], double exact[G])
{
    static const double w[G] = {0.35, 0.3, 0.2, 0.15}, pi[G] = {0.3, 0.5, 0.4, 0.6};
    static const double mu[G] = {1.5, 1.0, 0.6, 1.2};
    test_rng_t t;
    test_rng_seed(&t, 2024);
    uint64_t pos[G][BINS], neg[G][BINS];
    memset(pos, 0, sizeof(pos));
    memset(neg, 0, sizeof(neg));
    uint32_t *score[G];
    uint8_t *lab[G];
    uint64_t nex[G] = {0};
    for (uint32_t g = 0; g < G; g++) {
        score[g] = malloc((size_t)DEVICES * EXAMPLES * sizeof(uint32_t));
        lab[g] = malloc((size_t)DEVICES * EXAMPLES);
        assert_true(score[g] != NULL && lab[g] != NULL);
    }
    for (uint32_t i = 0; i < DEVICES; i++) {
        double u = test_rng_unit(&t), acc = 0.0;
        uint32_t g = 0;
        for (g = 0; g + 1u < G && u > acc + w[g]; g++) {
            acc += w[g];
        }
        dev[i].group = g;
        assert_int_equal(dpm_score_hist_init(&dev[i].h, &m->bins), DPM_OK);
        for (uint32_t e = 0; e < EXAMPLES; e++) {
            int label = test_rng_unit(&t) < pi[g];
            double z = test_rng_normal(&t) + (label ? mu[g] : 0.0);
            double s = 1.0 / (1.0 + exp(-z));
            uint32_t q = dpm_score_from_double(s), b = 0;
            assert_int_equal(dpm_score_hist_add(&dev[i].h, &m->bins, q, label), DPM_OK);
            assert_int_equal(dpm_score_bin(&m->bins, q, &b), DPM_OK);
            (label ? pos : neg)[g][b]++;
            score[g][nex[g]] = q;
            lab[g][nex[g]++] = (uint8_t)label;
        }
    }
    for (uint32_t g = 0; g < G; g++) {
        double tpr[BINS + 1], fpr[BINS + 1];
        assert_int_equal(dpm_roc_exact(pos[g], neg[g], BINS, tpr, fpr, &truth[g]), DPM_OK);
        exact[g] = dpm_fa_auc_exact(score[g], lab[g], nex[g]); /* Mann-Whitney, ties 1/2 */
        free(score[g]);
        free(lab[g]);
    }
}

/* The unbinned intervals: coverage of the exact AUCs at the claim their flags make
 * (estimate/ci_flags.h), and the noise-only interval auc_unbinned -+ z unbinned_sd beside. */
typedef struct {
    uint32_t n, covered, covered_noise_only, flagged, no_claim;
} claim_t;

static void claim_add(claim_t *c, double est, double lo, double hi, double sd, unsigned flags,
                      double truth)
{
    c->n++;
    c->covered += lo <= truth && truth <= hi;
    c->covered_noise_only += fabs(est - truth) <= 1.959963984540054 * sd;
    c->flagged += flags != 0;
    c->no_claim += (flags & DPM_CI_NO_CLAIM) != 0;
}

/* 0 if the claim holds ([0.93, 0.97] unflagged, >= 0.93 "at least", anything with no claim). */
/* tag: the eps, in the figures' names only (test_figure.h) */
static int claim_check(const claim_t *c, double truth, const char *what, const char *tag,
                       int *noise_only_missed)
{
    double cov = (double)c->covered / c->n, old = (double)c->covered_noise_only / c->n;
    int none = c->no_claim > 0, nominal = c->flagged == 0;
    int ok = none || (nominal ? cov >= 0.93 && cov <= 0.97 : cov >= 0.93);
    print_message("# %-22s exact %.4f: unbinned coverage %.1f%% (%s, %u of %u runs flagged) | "
                  "noise-only %.1f%%%s\n",
                  what, truth, 100.0 * cov,
                  none      ? "no claim"
                  : nominal ? "claims [93, 97] %"
                            : "claims >= 95 %",
                  c->flagged, c->n, 100.0 * old, ok ? "" : "  FAILED");
    char name[96];
    snprintf(name, sizeof(name), "%s %s", tag, what);
    test_figure_of(name, "cover", cov, "share");
    test_figure_of(name, "cover_noise_only", old, "share");
    test_figure_of(name, "flagged", c->flagged, "runs");
    test_figure_of(name, "no_claim", c->no_claim > 0, "1");
    *noise_only_missed += old < 0.93;
    return !ok;
}

typedef struct {
    double sum, sum2, var_pred;
    uint32_t covered, n;
} acc_t;

static void acc_add(acc_t *a, double v, double sd, double lo, double hi, double truth)
{
    a->sum += v;
    a->sum2 += v * v;
    a->var_pred += sd * sd;
    a->covered += lo <= truth && truth <= hi;
    a->n++;
}

/* 0 if the accumulated estimates pass (unbiased, sd calibrated, coverage); prints the line. */
static int acc_check(const acc_t *a, double truth, const char *what, const char *tag, int check_var)
{
    double mean = a->sum / a->n, var = a->sum2 / a->n - mean * mean;
    double se = sqrt(var / a->n), cov = (double)a->covered / a->n;
    double ratio = (a->var_pred / a->n) / var;
    int ok_bias = fabs(mean - truth) <= 5.0 * se;
    int ok_var = !check_var || (ratio >= 0.85 && ratio <= 1.15);
    int ok_cov = cov >= 0.93 && cov <= 0.97;
    print_message("# %-22s truth %.4f mean %.4f (bias %+.4f = %+.1f se), sd %.4f, predicted/"
                  "empirical var %.3f, coverage %.1f%%\n",
                  what, truth, mean, mean - truth, (mean - truth) / se, sqrt(var), ratio,
                  100.0 * cov);
    char name[96];
    snprintf(name, sizeof(name), "%s %s", tag, what);
    test_figure_of(name, "bias_se", (mean - truth) / se, "se");
    test_figure_of(name, "var_ratio", ratio, "1");
    test_figure_of(name, "cover", cov, "share");
    return ok_bias && ok_var && ok_cov ? 0 : 1;
}

/* The pointwise gap flags under which the family makes no claim (mech/base/pairwise_json.h)
 */
#define FAMILY_NO_CLAIM (DPM_CI_FEW_EVENTS | DPM_CI_BOUND | DPM_CI_NO_CLAIM)

/* One eps: returns the binned checks failed; *naive_failed, *unb_failed, *old_missed; every gap
 * at once in *all over the runs where the family claims its coverage, and in *unclaimed the runs
 * where it does not (a pointwise gap interval flagged FAMILY_NO_CLAIM). */
static int groups_at(dpm_eps_t eps, uint64_t seed, int *naive_failed, int *unb_failed,
                     int *old_missed, sim_selection_t *all, uint32_t *unclaimed)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1;
    c.mechanism = DPM_MECH_ID_ROC_HIST;
    c.eps = DPM_EPS_Q16(eps);
    c.budget = c.eps;
    c.nbins = BINS - 1u;
    for (uint32_t i = 0; i + 1u < BINS; i++) {
        c.bin_edges[i] = (uint32_t)(((uint64_t)(i + 1u) << 31) / BINS);
    }
    c.groups = G;
    static dpm_mech_t mech;
    assert_int_equal(dpm_mech_init(&mech, &c, NULL), DPM_OK);
    const dpm_roc_hist_t *m = &mech.params.roc_hist;
    device_t *dev = calloc(DEVICES, sizeof(device_t));
    assert_non_null(dev);
    double truth[G], exact[G];
    population(m, dev, truth, exact);
    dpm_roc_groups_params_t p;
    assert_int_equal(dpm_roc_groups_params_init(&p, G, BINS, m->group_grr.keep, m->group_grr.other,
                                                (double)m->lap.scale_num / m->lap.scale_den),
                     DPM_OK);
    assert_int_equal(dpm_roc_groups_params_set_edges(&p, c.bin_edges, c.nbins), DPM_OK);
    dpm_roc_groups_estimate_t *est = malloc(sizeof(*est));
    assert_non_null(est);
    static acc_t groups[G], gaps[NGAPS], naive[G];
    static claim_t ugroups[G], ugaps[NGAPS];
    memset(groups, 0, sizeof(groups)), memset(gaps, 0, sizeof(gaps));
    memset(naive, 0, sizeof(naive)), memset(ugroups, 0, sizeof(ugroups));
    memset(ugaps, 0, sizeof(ugaps));
    static dpm_pairwise_t pw;
    sim_selection_init(all, 1.0);
    *unclaimed = 0;
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, seed), DPM_OK);
    for (uint32_t run = 0; run < RUNS; run++) {
        dpm_roc_groups_agg_t a;
        assert_int_equal(dpm_roc_groups_agg_init(&a, G, BINS), DPM_OK);
        dpm_roc_agg_t by_reported[G];
        for (uint32_t k = 0; k < G; k++) {
            assert_int_equal(dpm_roc_agg_init(&by_reported[k], BINS), DPM_OK);
        }
        for (uint32_t i = 0; i < DEVICES; i++) {
            dpm_roc_hist_report_t rep;
            assert_int_equal(dpm_roc_hist_perturb_group(m, &r, dev[i].group, &dev[i].h, &rep),
                             DPM_OK);
            assert_int_equal(dpm_roc_groups_agg_add(&a, rep.group, BINS, rep.pos, rep.neg), DPM_OK);
            assert_int_equal(dpm_roc_agg_add(&by_reported[rep.group], BINS, rep.pos, rep.neg),
                             DPM_OK);
        }
        assert_int_equal(dpm_roc_groups_estimate(&p, &a, 0.95, est), DPM_OK);
        for (uint32_t k = 0; k < G; k++) {
            const dpm_roc_group_estimate_t *e = &est->group[k];
            if (!(e->defined && e->ci_valid)) {
                print_message("# run %u group %u: defined %d (%s), ci_valid %d, P %.1f N %.1f auc "
                              "%.3f sd %.3g\n",
                              run, k, e->defined, e->reason, e->ci_valid, e->P, e->N, e->auc,
                              e->sd);
            }
            assert_true(e->defined && e->ci_valid);
            acc_add(&groups[k], e->auc, e->sd, e->ci_lo, e->ci_hi, truth[k]);
            claim_add(&ugroups[k], e->auc_unbinned, e->unbinned_ci_lo, e->unbinned_ci_hi,
                      e->unbinned_sd, e->unbinned_flags, exact[k]);
            dpm_roc_params_t rp;
            dpm_roc_estimate_t re;
            assert_int_equal(dpm_roc_params_init(&rp, BINS, p.scale), DPM_OK);
            assert_int_equal(dpm_roc_estimate(&rp, &by_reported[k], 0.95, &re), DPM_OK);
            acc_add(&naive[k], re.auc_raw, sqrt(re.var_noise), re.ci_lo, re.ci_hi, truth[k]);
        }
        double true_gap[NGAPS];
        unsigned run_flags = 0;
        for (uint32_t k = 0; k < NGAPS; k++) {
            const dpm_roc_gap_estimate_t *e = &est->gap[k];
            assert_true(e->defined && e->ci_valid);
            acc_add(&gaps[k], e->gap, e->sd, e->ci_lo, e->ci_hi, truth[e->g] - truth[e->h]);
            claim_add(&ugaps[k], e->gap_unbinned, e->unbinned_ci_lo, e->unbinned_ci_hi,
                      e->unbinned_sd, e->unbinned_flags, exact[e->g] - exact[e->h]);
            true_gap[k] = truth[e->g] - truth[e->h];
            run_flags |= e->ci_flags;
        }
        assert_int_equal(dpm_roc_groups_pairwise(est, 0.95, &pw), DPM_OK);
        if (run_flags & FAMILY_NO_CLAIM)
            (*unclaimed)++;
        else
            sim_selection_add(all, &pw, true_gap);
        dpm_roc_groups_agg_free(&a);
    }
    int failed = 0;
    char what[64], tag[16];
    snprintf(tag, sizeof(tag), "eps %u", (unsigned)(eps / DPM_EPS_ONE));
    for (uint32_t k = 0; k < G; k++) {
        snprintf(what, sizeof(what), "AUC of group %u", k);
        failed += acc_check(&groups[k], truth[k], what, tag, 1);
    }
    for (uint32_t k = 0; k < NGAPS; k++) {
        snprintf(what, sizeof(what), "gap %u - %u", est->gap[k].g, est->gap[k].h);
        failed += acc_check(&gaps[k], truth[est->gap[k].g] - truth[est->gap[k].h], what, tag, 1);
    }
    for (uint32_t k = 0; k < G; k++) {
        snprintf(what, sizeof(what), "naive group %u", k);
        *naive_failed += acc_check(&naive[k], truth[k], what, tag, 0);
    }
    for (uint32_t k = 0; k < G; k++) {
        snprintf(what, sizeof(what), "unbinned group %u", k);
        *unb_failed += claim_check(&ugroups[k], exact[k], what, tag, old_missed);
    }
    for (uint32_t k = 0; k < NGAPS; k++) {
        snprintf(what, sizeof(what), "unbinned gap %u - %u", est->gap[k].g, est->gap[k].h);
        *unb_failed += claim_check(&ugaps[k], exact[est->gap[k].g] - exact[est->gap[k].h], what,
                                   tag, old_missed);
    }
    free(est);
    free(dev);
    return failed;
}

/* Every gap at once, over the runs where the family claims it (mech/base/pairwise_json.h:
 * no claim once a pointwise gap interval is flagged few_events, bound or without claim): the
 * simultaneous intervals hold all gaps in [93, 97] % of them (binomial, two-sided p >= 1e-6
 * against 0.95) and the largest |gap|'s interval at least that often; the pointwise intervals
 * read together fall short (p < 1e-6), the negative control. The family must claim in at least
 * min_claimed of the RUNS runs, so that the check checks something. 0 if all hold. */
static int selection_check(const sim_selection_t *all, uint32_t unclaimed, uint32_t min_claimed,
                           const char *tag)
{
    sim_selection_summary_t sm;
    sim_selection_summarize(all, &sm);
    double p_sim = stat_binom_two_sided(all->simultaneous, all->runs, 0.95);
    double p_largest = stat_binom_cdf(all->largest, all->runs, 0.95);
    double p_old = stat_binom_cdf(all->pointwise_all, all->runs, 0.95);
    print_message("# every gap at once, %u runs with the family's claim (%u without: a gap "
                  "interval flagged): simultaneous %.4f (p %.3g), largest |gap| %.4f (p %.3g), "
                  "right pair %.3f, stability %.3f; pointwise read together %.4f (p %.3g)\n",
                  all->runs, unclaimed, sm.simultaneous, p_sim, sm.largest, p_largest,
                  sm.right_pair, sm.stability, sm.pointwise_all, p_old);
    test_figure_of(tag, "all_gaps.simultaneous", sm.simultaneous, "share");
    test_figure_of(tag, "all_gaps.largest", sm.largest, "share");
    test_figure_of(tag, "all_gaps.pointwise_all", sm.pointwise_all, "share");
    return all->runs + unclaimed != RUNS || all->runs < min_claimed || p_old >= 1e-6 ||
           p_sim < 1e-6 || p_largest < 1e-6;
}

static void test_groups_unbiased_and_covered(void **state)
{
    (void)state;
    int naive_failed = 0, unb_failed = 0, old_missed = 0;
    sim_selection_t all;
    uint32_t unclaimed = 0;
    int failed = groups_at(4 * DPM_EPS_ONE, 77, &naive_failed, &unb_failed, &old_missed, &all,
                           &unclaimed);
    print_message("# eps 4 (2 + 2), %u runs of %u devices: %d of %u binned checks failed; "
                  "unbinned claims failed: %d of %u; negative control (no GRR inversion): %d of "
                  "%u groups failed\n",
                  RUNS, DEVICES, failed, G + NGAPS, unb_failed, G + NGAPS, naive_failed, G);
    test_figure("runs", RUNS, "runs");
    test_figure("devices", DEVICES, "devices");
    assert_int_equal(failed, 0);
    assert_int_equal(unb_failed, 0);
    assert_int_equal(naive_failed, (int)G);
    /* the family claims nominal coverage in nearly every run here */
    assert_int_equal(selection_check(&all, unclaimed, RUNS * 9 / 10, "eps 4"), 0);
}

/* eps 16 (8 + 8): the noise is a seventh of eps 4's; the unbinned AUC's interpolation error
 * and the examples' order within bins matter; every unbinned claim holds. */
static void test_groups_large_eps(void **state)
{
    (void)state;
    int naive_failed = 0, unb_failed = 0, old_missed = 0;
    sim_selection_t all;
    uint32_t unclaimed = 0;
    int failed = groups_at(16 * DPM_EPS_ONE, 78, &naive_failed, &unb_failed, &old_missed, &all,
                           &unclaimed);
    print_message("# eps 16 (8 + 8): %d of %u binned checks failed; unbinned claims failed: %d of "
                  "%u; the noise-only unbinned interval missed in %d\n",
                  failed, G + NGAPS, unb_failed, G + NGAPS, old_missed);
    assert_int_equal(failed, 0);
    assert_int_equal(unb_failed, 0);
    assert_int_equal(selection_check(&all, unclaimed, RUNS * 9 / 10, "eps 16"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_unbiased_and_covered),
        cmocka_unit_test(test_groups_large_eps),
    };
    return cmocka_run_group_tests_name("roc_groups_coverage", tests, NULL, NULL);
}
