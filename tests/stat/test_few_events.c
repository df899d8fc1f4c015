/* SPDX-License-Identifier: Apache-2.0 */
/* Intervals at large eps (8 and above) and in runs that hold only a handful of randomization
 * events (an RR flip, a GRR move, one unit of a discrete Laplace draw), for every mechanism's
 * estimator (estimate/ci_flags.h, common/prob.h): every interval either holds its calibrated
 * claim ([0.93, 0.97] when no run is flagged) or says at least the level (few_events, bound,
 * conservative: coverage >= 0.93) or says it claims none (class_noise, small_n). Each check
 * runs RUNS = 3000 runs of fixed populations with fresh randomization: a calibrated interval
 * leaves [0.93, 0.97], and one of coverage >= 0.95 falls below 0.93, with probability < 1e-6
 * (0.02 is 5.0 binomial sd).
 *
 * Few-event configurations (chosen before any run): roc_hist with 3 devices of 20 examples at
 * eps 12 and with 1 device at eps 8 (2 bins); roc_hist with groups, 24 devices of 6 examples at
 * eps 16 (8 + 8); fedauc_rr at eps 8 with 5,000 examples (about 1.7 label flips per run) and
 * eps 9 with 3,000; fedauc_lap adaptive at eps 16 with 2,000; ustat_bins Kendall with k = 2 at
 * eps 8 (n 4,000) and its public-label AUC with k = 4 at eps 11. There every run must be
 * flagged few_events and the Poisson-aware interval cover at least 0.93; the normal interval
 * est -+ z sd of the same runs is printed beside it, and where it is marked "(control)" (roc_hist
 * with 1 device: 0.916; fedauc_rr at eps 9: 0.915) it must cover less than 0.93: the old
 * behaviour fails the new check (elsewhere it held 0.927-0.953, over the 88-93 % issue 28 saw on
 * its own populations).
 * Many-event configurations at the same large eps (more devices or examples) must be unflagged
 * and calibrated. ustat_tree's Chebyshev interval (conservative by construction), tuple_mr at
 * eps 8 (its plug-in second moment errs high: flagged conservative, covers at least the level)
 * and dpauc (no interval: server B unbiased within 5 standard errors wherever it does not flag
 * a small sample) at large eps complete the set. tuple_ml at eps 8 keeps many Laplace units per
 * report: calibrated, unflagged. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/prob.h"
#include "dpm/dpm.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/ustat.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/report.h"
#include "dpm/expert/roc_hist.h"
#include "dpm/expert/tuple.h"
#include "dpm/expert/stats.h"
#include "estimate/ci_flags.h"
#include "estimate/disparity.h"
#include "estimate/dpauc.h"
#include "estimate/fedauc.h"
#include "estimate/roc.h"
#include "estimate/roc_groups.h"
#include "estimate/ustat.h"
#include "fedauc_fixture.h"
#include "sim/pop/sim_rng.h"
#include "test_receipt.h"
#include "test_figure.h"
#include "test_rng.h"

#ifndef RUNS
#define RUNS 3000u
#endif
#define Z95 1.959963984540054

/* ---- the tally and the checks --------------------------------------------------------------- */

typedef struct {
    uint32_t runs, cover, cover_normal, flagged, few, no_claim;
    double err, err2, events;
} tally_t;

static void tally(tally_t *t, double est, double lo, double hi, double sd, unsigned flags,
                  double events, double truth)
{
    t->runs++;
    t->events += isfinite(events) ? events : 1e9;
    t->cover += lo <= truth && truth <= hi;
    t->cover_normal += fabs(est - truth) <= Z95 * sd;
    t->flagged += flags != 0;
    t->few += (flags & DPM_CI_FEW_EVENTS) != 0;
    t->no_claim += (flags & DPM_CI_NO_CLAIM) != 0;
    t->err += est - truth;
    t->err2 += (est - truth) * (est - truth);
}

enum { MANY = 0, FEW = 1, CONSERVATIVE = 2 };

/* 0 if the configuration keeps its claim (and, few events, the flag fires in every run and the
 * normal interval fails where normal_fails says it does: the negative control). */
static int check(const char *what, const tally_t *t, int kind, int normal_fails)
{
    double n = t->runs, cov = t->cover / n, cn = t->cover_normal / n;
    int none = t->no_claim > 0, nominal = t->flagged == 0;
    int ok = none || (nominal ? cov >= 0.93 && cov <= 0.97 : cov >= 0.93);
    int flag_ok = kind == FEW            ? t->few == t->runs
                  : kind == CONSERVATIVE ? t->flagged == t->runs
                                         : t->flagged == 0;
    int control_ok = !normal_fails || cn < 0.93;
    print_message("# %-44s cover %.4f (%s; %u of %u runs flagged, %u few events, mean %.3g "
                  "effective events) | normal interval %.4f%s | mean error %+.2e%s\n",
                  what, cov,
                  none      ? "no claim"
                  : nominal ? "claims [0.93, 0.97]"
                            : "claims >= 0.95",
                  t->flagged, t->runs, t->few, t->events / n, cn, normal_fails ? " (control)" : "",
                  t->err / n, ok && flag_ok && control_ok ? "" : "  FAILED");
    test_figure_of(what, "cover", cov, "share");
    test_figure_of(what, "cover_normal", cn, "share");
    test_figure_of(what, "events", t->events / n, "events");
    test_figure_of(what, "flagged", t->flagged, "runs");
    return !(ok && flag_ok && control_ok);
}

static double uniform01(test_rng_t *t)
{
    return (double)(test_rng_next(t) >> 11) / 9007199254740992.0;
}

static double normal(test_rng_t *t)
{
    double u = uniform01(t), v = uniform01(t);
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

/* A binormal score (probit, AUC 0.85 at mu = 1.466) in Q1.31. */
static uint32_t score_of(test_rng_t *t, int label)
{
    double s = prob_norm_cdf(normal(t) + (label ? 1.466 : 0.0) - 0.733);
    double q = floor(s * 2147483648.0);
    return q < 0.0 ? 0u : q > 2147483647.0 ? 2147483647u : (uint32_t)q;
}

/* ---- roc_hist: the exact sums (each cell its count plus the sum of K discrete Laplace) ------- */

static tally_t roc_hist_run(uint32_t devices, double eps, uint32_t bins, uint64_t seed)
{
    test_rng_t t;
    test_rng_seed(&t, seed);
    uint64_t pos[DPM_ROC_MAX_BINS] = {0}, neg[DPM_ROC_MAX_BINS] = {0};
    for (uint32_t i = 0; i < devices * 20u; i++) {
        int y = uniform01(&t) < 0.3;
        uint32_t b = (uint32_t)(((uint64_t)score_of(&t, y) * bins) >> 31);
        (y ? pos : neg)[b < bins ? b : bins - 1]++;
    }
    double tpr[DPM_ROC_MAX_BINS + 1], fpr[DPM_ROC_MAX_BINS + 1], truth;
    assert_int_equal(dpm_roc_exact(pos, neg, bins, tpr, fpr, &truth), DPM_OK);
    dpm_roc_params_t p;
    assert_int_equal(dpm_roc_params_init(&p, bins, 2.0 / eps), DPM_OK);
    sim_rng_t r;
    sim_rng_init(&r, seed + 1);
    tally_t tl;
    memset(&tl, 0, sizeof(tl));
    for (uint32_t run = 0; run < RUNS; run++) {
        dpm_roc_agg_t a;
        assert_int_equal(dpm_roc_agg_init(&a, bins), DPM_OK);
        a.reports = devices;
        for (uint32_t b = 0; b < bins; b++) {
            a.pos[b] = (int64_t)pos[b] + sim_rng_dlap_sum(&r, devices, p.scale);
            a.neg[b] = (int64_t)neg[b] + sim_rng_dlap_sum(&r, devices, p.scale);
        }
        dpm_roc_estimate_t e;
        assert_int_equal(dpm_roc_estimate(&p, &a, 0.95, &e), DPM_OK);
        assert_true(e.valid);
        tally(&tl, e.auc_raw, e.ci_lo, e.ci_hi, sqrt(e.var_noise), e.ci_flags, e.events, truth);
    }
    return tl;
}

/* ---- roc_hist with groups: every device through the SDK ------------------------------------ */

#define RG_G 2u
#define RG_B 6u
#define RG_EX 6u

static void roc_groups_run(uint32_t devices, dpm_eps_t eps, uint64_t seed, tally_t *group,
                           tally_t *gap)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1;
    c.mechanism = DPM_MECH_ID_ROC_HIST;
    c.eps = DPM_EPS_Q16(eps);
    c.budget = DPM_EPS_Q16(eps);
    c.nbins = RG_B - 1u;
    for (uint32_t i = 0; i + 1u < RG_B; i++) {
        c.bin_edges[i] = (uint32_t)(((uint64_t)(i + 1u) << 31) / RG_B);
    }
    c.groups = RG_G;
    static dpm_mech_t mech;
    assert_int_equal(dpm_mech_init(&mech, &c, NULL), DPM_OK);
    const dpm_roc_hist_t *m = &mech.params.roc_hist;
    uint32_t *grp = calloc(devices, sizeof(uint32_t));
    dpm_score_hist_t *h = calloc(devices, sizeof(dpm_score_hist_t));
    assert_true(grp != NULL && h != NULL);
    test_rng_t t;
    test_rng_seed(&t, seed);
    uint64_t pos[RG_G][RG_B], neg[RG_G][RG_B];
    memset(pos, 0, sizeof(pos));
    memset(neg, 0, sizeof(neg));
    for (uint32_t i = 0; i < devices; i++) {
        grp[i] = i % RG_G;
        assert_int_equal(dpm_score_hist_init(&h[i], &m->bins), DPM_OK);
        for (uint32_t e = 0; e < RG_EX; e++) {
            int y = uniform01(&t) < (grp[i] ? 0.5 : 0.3);
            uint32_t q = score_of(&t, y), b = 0;
            assert_int_equal(dpm_score_hist_add(&h[i], &m->bins, q, y), DPM_OK);
            assert_int_equal(dpm_score_bin(&m->bins, q, &b), DPM_OK);
            (y ? pos : neg)[grp[i]][b]++;
        }
    }
    double truth[RG_G], tpr[RG_B + 1], fpr[RG_B + 1];
    for (uint32_t g = 0; g < RG_G; g++) {
        assert_int_equal(dpm_roc_exact(pos[g], neg[g], RG_B, tpr, fpr, &truth[g]), DPM_OK);
    }
    dpm_roc_groups_params_t p;
    assert_int_equal(dpm_roc_groups_params_init(&p, RG_G, RG_B, m->group_grr.keep,
                                                m->group_grr.other,
                                                (double)m->lap.scale_num / m->lap.scale_den),
                     DPM_OK);
    dpm_roc_groups_estimate_t *est = malloc(sizeof(*est));
    assert_non_null(est);
    test_rng_t tr;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &tr, &g, seed + 1), DPM_OK);
    memset(group, 0, sizeof(*group));
    memset(gap, 0, sizeof(*gap));
    for (uint32_t run = 0; run < RUNS; run++) {
        dpm_roc_groups_agg_t a;
        assert_int_equal(dpm_roc_groups_agg_init(&a, RG_G, RG_B), DPM_OK);
        for (uint32_t i = 0; i < devices; i++) {
            dpm_roc_hist_report_t rep;
            assert_int_equal(dpm_roc_hist_perturb_group(m, &r, grp[i], &h[i], &rep), DPM_OK);
            assert_int_equal(dpm_roc_groups_agg_add(&a, rep.group, RG_B, rep.pos, rep.neg), DPM_OK);
        }
        assert_int_equal(dpm_roc_groups_estimate(&p, &a, 0.95, est), DPM_OK);
        const dpm_roc_group_estimate_t *e = &est->group[0];
        const dpm_roc_gap_estimate_t *d = &est->gap[0];
        assert_true(e->defined && d->defined);
        tally(group, e->auc, e->ci_lo, e->ci_hi, e->sd, e->ci_flags, e->events, truth[0]);
        tally(gap, d->gap, d->ci_lo, d->ci_hi, d->sd, d->ci_flags, d->events, truth[0] - truth[1]);
        dpm_roc_groups_agg_free(&a);
    }
    free(est);
    free(grp);
    free(h);
}

/* ---- FedAUC through the SDK (fedauc_fixture.h): rounds once, fresh round 2 per run ----------- */

static tally_t fedauc_run(dpm_mech_id_t mech, dpm_fedauc_variant_t variant, const char *eps,
                          uint32_t k, uint32_t m, uint64_t seed)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 70;
    c.mechanism = mech;
    assert_int_equal(dpm_eps_from_decimal(eps, &c.eps.q16), DPM_OK);
    c.budget = c.eps;
    c.fedauc_variant = (uint32_t)variant;
    c.fedauc_score_bits = 16;
    dpm_mech_t mm;
    assert_int_equal(dpm_mech_init(&mm, &c, NULL), DPM_OK);
    dpm_fa_params_t p;
    assert_int_equal(dpm_fa_params_from_mech(&p, &mm), DPM_OK);
    static fa_fix_t f;
    assert_int_equal(fa_fix_alloc(&f, k, m), 0);
    fa_fix_binormal(&f, 0.75, 0.3, FA_IID, seed);
    double truth = fa_fix_truth(&f, &mm);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, seed * 1000 + 1), DPM_OK);
    assert_int_equal(fa_fix_rounds(&f, &mm, &r), DPM_OK);
    tally_t tl;
    memset(&tl, 0, sizeof(tl));
    for (uint32_t run = 0; run < RUNS; run++) {
        dpm_fa_agg_t a;
        dpm_fa_agg_init(&a);
        for (uint32_t d = 0; d < f.k; d++) {
            dpm_memo_t memo; /* a fresh device secret per run: fresh RR flips */
            memset(&memo, 0, sizeof(memo));
            for (int half = 0; half < 2; half++) {
                uint64_t w = 0;
                assert_int_equal(dpm_rand_bits(&r, 64, &w), DPM_OK);
                memcpy(memo.key + 8 * half, &w, 8);
            }
            memo.opened = DPM_MEMO_OPENED;
            dpm_report_t rep;
            assert_int_equal(dpm_mech_report_fedauc(&mm, &r, TEST_RECEIPT(&mm, 0), &f.sess[d],
                                                    &f.rk[d], f.labels + f.start[d],
                                                    f.ids + f.start[d], &memo, &rep),
                             DPM_OK);
            assert_int_equal(dpm_fa_agg_add(&a, &p, &rep.body.fedauc), DPM_OK);
        }
        dpm_fa_estimate_t e;
        assert_int_equal(dpm_fa_estimate(&p, &a, &f.mom, 0.95, &e), DPM_OK);
        assert_true(e.valid);
        tally(&tl, e.auc_raw, e.ci_lo, e.ci_hi, e.sd, e.ci_flags, e.events, truth);
    }
    fa_fix_free(&f);
    return tl;
}

/* ---- ustat_bins through the SDK ------------------------------------------------------------- */

static tally_t ustat_run(dpm_ustat_kernel_t kernel, uint32_t k, dpm_eps_t eps, uint32_t n,
                         uint64_t seed)
{
    dpm_ustat_bins_t m;
    assert_int_equal(dpm_ustat_bins_init(&m, kernel, k, eps), DPM_OK);
    dpm_ustat_bins_params_t p;
    assert_int_equal(dpm_ustat_bins_params_init(&p, kernel, k, m.grr.keep, m.grr.other), DPM_OK);
    dpm_ustat_example_t *ex = calloc(n, sizeof(*ex));
    assert_non_null(ex);
    test_rng_t t;
    test_rng_seed(&t, seed);
    static uint64_t hist[2][DPM_USTAT_EST_MAX_DOMAIN];
    memset(hist, 0, sizeof(hist));
    for (uint32_t i = 0; i < n; i++) {
        double z = normal(&t);
        ex[i].label = kernel == DPM_USTAT_KENDALL ? 0 : uniform01(&t) < 0.3;
        ex[i].score = (uint32_t)(prob_norm_cdf(z + (ex[i].label ? 1.2 : 0.0)) * 2147483647.0);
        ex[i].score2 = (uint32_t)(prob_norm_cdf(0.7 * z + 0.7 * normal(&t)) * 2147483647.0);
        uint32_t b = 0, b2 = 0;
        assert_int_equal(dpm_ustat_quantize(ex[i].score, k, &b), DPM_OK);
        assert_int_equal(dpm_ustat_quantize(ex[i].score2, k, &b2), DPM_OK);
        if (kernel == DPM_USTAT_KENDALL) {
            hist[0][b * k + b2]++;
        } else {
            hist[ex[i].label][b]++;
        }
    }
    double truth = 0.0;
    assert_int_equal(dpm_ustat_bins_exact(&p, hist[0], hist[1], 0.5, &truth), DPM_OK);
    test_rng_t tr;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &tr, &g, seed + 1), DPM_OK);
    static dpm_ustat_bins_agg_t a;
    tally_t tl;
    memset(&tl, 0, sizeof(tl));
    for (uint32_t run = 0; run < RUNS; run++) {
        assert_int_equal(dpm_ustat_bins_agg_init(&a, p.domain), DPM_OK);
        for (uint32_t i = 0; i < n; i++) {
            dpm_ustat_bins_report_t rep;
            assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &ex[i], &rep), DPM_OK);
            assert_int_equal(dpm_ustat_bins_agg_add(&a, &p, rep.value, rep.label), DPM_OK);
        }
        dpm_ustat_estimate_t e;
        assert_int_equal(dpm_ustat_bins_estimate(&p, &a, 0.5, 0.95, &e), DPM_OK);
        assert_true(e.defined);
        tally(&tl, e.value, e.ci_lo, e.ci_hi, e.sd, e.ci_flags, e.events, truth);
    }
    free(ex);
    return tl;
}

/* ---- tuple_mr / tuple_ml through the SDK: group 0's mean, as the collector computes it ------ */

static const dpm_metric_t kTpr[1] = {DPM_METRIC_TPR};

static tally_t tuple_run(dpm_tuple_kind_t kind, const char *eps_text, uint32_t devices,
                         uint32_t examples, uint64_t seed)
{
    dpm_eps_t eps = 0;
    assert_int_equal(dpm_eps_from_decimal(eps_text, &eps), DPM_OK);
    dpm_tuple_t tm;
    assert_int_equal(dpm_tuple_init(&tm, kind, 2, kTpr, 1, eps), DPM_OK);
    dpm_disp_params_t p;
    if (kind == DPM_TUPLE_MR) {
        assert_int_equal(dpm_disp_params_campaign_mr(&p, 2, tm.group_grr.keep, tm.group_grr.other,
                                                     tm.value.rr.keep),
                         DPM_OK);
    } else {
        double t = (double)tm.value.lap.scale_num / (double)tm.value.lap.scale_den;
        assert_int_equal(dpm_disp_params_campaign_ml(&p, 2, tm.group_grr.keep, tm.group_grr.other,
                                                     t, t, tm.frac_bits),
                         DPM_OK);
    }
    /* device i: group i % 2, its TPR over `examples` positives, each found with probability
     * 0.7 (group 0) or 0.4 (examples 1: values -1 / +1 only) */
    test_rng_t t;
    test_rng_seed(&t, seed);
    uint32_t *hits = calloc(devices, sizeof(uint32_t));
    assert_non_null(hits);
    double sum0 = 0.0, n0 = 0.0;
    for (uint32_t i = 0; i < devices; i++) {
        for (uint32_t e = 0; e < examples; e++) {
            hits[i] += uniform01(&t) < (i % 2 ? 0.4 : 0.7);
        }
        if (i % 2 == 0) {
            sum0 += (double)hits[i] / examples;
            n0 += 1.0;
        }
    }
    double truth = sum0 / n0; /* the metric's scale */
    test_rng_t tr;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &tr, &g, seed + 1), DPM_OK);
    double nu2[2] = {DPM_DISP_NU2_PLUGIN, DPM_DISP_NU2_PLUGIN};
    tally_t tl;
    memset(&tl, 0, sizeof(tl));
    for (uint32_t run = 0; run < RUNS; run++) {
        dpm_disp_agg_t a;
        assert_int_equal(dpm_disp_agg_init(&a, &p), DPM_OK);
        for (uint32_t i = 0; i < devices; i++) {
            dpm_ratio_t x = {hits[i], examples};
            dpm_tuple_report_t rep;
            assert_int_equal(dpm_tuple_perturb(&tm, &r, i % 2, &x, &rep), DPM_OK);
            assert_int_equal(dpm_disp_agg_add(&a, rep.group, rep.value[0]), DPM_OK);
        }
        dpm_disp_estimate_t e;
        assert_int_equal(dpm_disp_estimate(&p, &a, NULL, nu2, &e), DPM_OK);
        assert_true(e.group[0].valid);
        /* as the collector (estimate_json.c): few events, M_R's plug-in second moment */
        double jump = 0.0, excess = 1.0, events = 0.0;
        double mean = (e.group[0].mean + 1.0) / 2.0, var = e.group[0].var / 4.0;
        assert_int_equal(dpm_disp_event_jump(&e, 0, &jump), DPM_OK);
        assert_int_equal(dpm_disp_plugin_excess(&e, 0, &excess), DPM_OK);
        unsigned flags = dpm_ci_var_excess(excess, 0.95);
        double h = dpm_ci_halfwidth(var, jump / 2.0, 0.0, 0.95, &events, &flags);
        tally(&tl, mean, mean - h, mean + h, sqrt(var), flags, events, truth);
    }
    free(hits);
    return tl;
}

/* ---- ustat_tree through the SDK: the collector's Chebyshev interval on Theorem 3's bound ---- */

static tally_t tree_run(dpm_eps_t eps, uint32_t n, uint64_t seed)
{
    dpm_ustat_tree_t m;
    assert_int_equal(dpm_ustat_tree_init(&m, 4, 1, eps), DPM_OK);
    dpm_ustat_tree_params_t p;
    assert_int_equal(dpm_ustat_tree_params_init(&p, &m), DPM_OK);
    dpm_ustat_example_t *ex = calloc(n, sizeof(*ex));
    assert_non_null(ex);
    test_rng_t t;
    test_rng_seed(&t, seed);
    uint64_t hp[16] = {0}, hn[16] = {0};
    for (uint32_t i = 0; i < n; i++) {
        ex[i].label = uniform01(&t) < 0.3;
        ex[i].score = score_of(&t, ex[i].label);
        uint32_t x = 0;
        assert_int_equal(dpm_ustat_quantize(ex[i].score, 16, &x), DPM_OK);
        (ex[i].label ? hp : hn)[x]++;
    }
    double truth = 0.0;
    assert_int_equal(dpm_ustat_tree_exact(4, hn, hp, 0.5, &truth), DPM_OK);
    test_rng_t tr;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &tr, &g, seed + 1), DPM_OK);
    dpm_ustat_tree_opts_t opts = {DPM_USTAT_TREE_CHOOSE_A, 0.0, 0.5};
    tally_t tl;
    memset(&tl, 0, sizeof(tl));
    for (uint32_t run = 0; run < RUNS; run++) {
        dpm_ustat_tree_agg_t a;
        assert_int_equal(dpm_ustat_tree_agg_init(&a, &p), DPM_OK);
        for (uint32_t i = 0; i < n; i++) {
            dpm_ustat_tree_report_t rep;
            assert_int_equal(dpm_ustat_tree_perturb(&m, &r, &ex[i], &rep), DPM_OK);
            assert_int_equal(dpm_ustat_tree_agg_add(&a, rep.label, rep.level, rep.row, rep.value),
                             DPM_OK);
        }
        dpm_ustat_tree_estimate_t e;
        assert_int_equal(dpm_ustat_tree_estimate(&p, &a, &opts, &e), DPM_OK);
        assert_true(e.est.defined);
        double half = sqrt(e.mse_bound / 0.05); /* estimate_auc.c: Chebyshev at 0.95 */
        tally(&tl, e.est.value, e.est.value - half, e.est.value + half, e.est.sd,
              DPM_CI_CONSERVATIVE, INFINITY, truth);
        dpm_ustat_tree_agg_free(&a);
    }
    free(ex);
    return tl;
}

/* ---- dpauc (no interval): the exact sums; server B's mean error within 5 standard errors
 * wherever the estimator does not flag a small sample ---------------------------------------- */

static int dpauc_run(uint32_t devices, double eps, uint64_t seed)
{
    enum { N = 6 };
    uint32_t thr[N];
    assert_int_equal(dpm_dpauc_linspace(N, thr), DPM_OK);
    test_rng_t t;
    test_rng_seed(&t, seed);
    int64_t tp[N] = {0}, fp[N] = {0}, P = 0, Nn = 0;
    for (uint32_t i = 0; i < devices * 20u; i++) {
        int y = uniform01(&t) < 0.3;
        uint32_t s = score_of(&t, y);
        P += y;
        Nn += !y;
        for (uint32_t j = 0; j < N; j++) {
            (y ? tp : fp)[j] += s >= thr[j];
        }
    }
    dpm_dpauc_params_t p, quiet;
    assert_int_equal(dpm_dpauc_params_init(&p, N, 2.0 * N / eps), DPM_OK); /* tight: 2N / eps */
    assert_int_equal(dpm_dpauc_params_init(&quiet, N, 0.0), DPM_OK);
    dpm_dpauc_agg_t a;
    assert_int_equal(dpm_dpauc_agg_init(&a, N), DPM_OK);
    a.reports = devices;
    for (uint32_t j = 0; j < N; j++) {
        a.tp[j] = tp[j], a.fp[j] = fp[j], a.tn[j] = Nn - fp[j], a.fn[j] = P - tp[j];
    }
    dpm_dpauc_estimate_t e;
    assert_int_equal(dpm_dpauc_estimate(&quiet, &a, DPM_DPAUC_SERVER_B, &e), DPM_OK);
    double truth = e.auc, sum = 0.0, sum2 = 0.0;
    uint32_t small = 0;
    sim_rng_t r;
    sim_rng_init(&r, seed + 1);
    for (uint32_t run = 0; run < RUNS; run++) {
        dpm_dpauc_agg_t b = a;
        for (uint32_t j = 0; j < N; j++) {
            b.tp[j] += sim_rng_dlap_sum(&r, devices, p.scale);
            b.fp[j] += sim_rng_dlap_sum(&r, devices, p.scale);
            b.tn[j] += sim_rng_dlap_sum(&r, devices, p.scale);
            b.fn[j] += sim_rng_dlap_sum(&r, devices, p.scale);
        }
        assert_int_equal(dpm_dpauc_estimate(&p, &b, DPM_DPAUC_SERVER_B, &e), DPM_OK);
        assert_true(e.defined);
        small += (uint32_t)e.small_sample;
        sum += e.auc - truth;
        sum2 += (e.auc - truth) * (e.auc - truth);
    }
    double mean = sum / RUNS, se = sqrt((sum2 / RUNS - mean * mean) / RUNS);
    int claim = small == 0, ok = !claim || fabs(mean) <= 5.0 * se;
    print_message("# dpauc B, %u devices, eps %.0f: mean error %+.2e (%.1f se), %u of %u runs "
                  "flagged small_sample (%s)%s\n",
                  devices, eps, mean, mean / se, small, RUNS,
                  claim ? "claims unbiased" : "no claim", ok ? "" : "  FAILED");
    char what[64];
    snprintf(what, sizeof(what), "dpauc B, %u devices, eps %.0f", devices, eps);
    test_figure_of(what, "devices", devices, "devices");
    test_figure_of(what, "mean_error", mean, "auc");
    test_figure_of(what, "bias_se", mean / se, "se");
    test_figure_of(what, "small_sample", small, "runs");
    return !ok;
}

/* ---- the tests ------------------------------------------------------------------------------- */

static void test_roc_hist(void **state)
{
    (void)state;
    test_figure("runs", RUNS, "runs");
    int bad = 0;
    tally_t t = roc_hist_run(3, 12.0, 6, 501);
    bad += check("roc_hist, 3 devices, eps 12, 6 bins", &t, FEW, 0);
    t = roc_hist_run(1, 8.0, 2, 504);
    bad += check("roc_hist, 1 device, eps 8, 2 bins", &t, FEW, 1);
    t = roc_hist_run(2000, 8.0, 10, 502);
    bad += check("roc_hist, 2000 devices, eps 8, 10 bins", &t, MANY, 0);
    assert_int_equal(bad, 0);
}

static void test_roc_groups(void **state)
{
    (void)state;
    int bad = 0;
    tally_t g, d;
    roc_groups_run(24, 16 * DPM_EPS_ONE, 601, &g, &d);
    bad += check("roc_hist groups, 24 devices, eps 16: group 0", &g, FEW, 0);
    bad += check("roc_hist groups, 24 devices, eps 16: gap", &d, FEW, 0);
    roc_groups_run(3000, 8 * DPM_EPS_ONE, 602, &g, &d);
    bad += check("roc_hist groups, 3000 devices, eps 8: group 0", &g, MANY, 0);
    bad += check("roc_hist groups, 3000 devices, eps 8: gap", &d, MANY, 0);
    assert_int_equal(bad, 0);
}

static void test_fedauc(void **state)
{
    (void)state;
    int bad = 0;
    tally_t t = fedauc_run(DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, "8", 250, 5000, 701);
    bad += check("fedauc_rr, eps 8, M 5000", &t, FEW, 0);
    t = fedauc_run(DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, "9", 150, 3000, 704);
    bad += check("fedauc_rr, eps 9, M 3000", &t, FEW, 1);
    t = fedauc_run(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, "16", 50, 2000, 705);
    bad += check("fedauc_lap adaptive, eps 16, M 2000", &t, FEW, 0);
    t = fedauc_run(DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, "8", 125, 5000, 702);
    bad += check("fedauc_lap adaptive, eps 8, M 5000", &t, MANY, 0);
    assert_int_equal(bad, 0);
}

static void test_ustat(void **state)
{
    (void)state;
    int bad = 0;
    tally_t t = ustat_run(DPM_USTAT_KENDALL, 2, 8 * DPM_EPS_ONE, 4000, 801);
    bad += check("ustat_bins Kendall, k 2, eps 8, n 4000", &t, FEW, 0);
    t = ustat_run(DPM_USTAT_AUC, 4, 11 * DPM_EPS_ONE, 3000, 802);
    bad += check("ustat_bins AUC, k 4, eps 11, n 3000", &t, FEW, 0);
    t = ustat_run(DPM_USTAT_KENDALL, 2, 8 * DPM_EPS_ONE, 30000, 803);
    bad += check("ustat_bins Kendall, k 2, eps 8, n 30000", &t, MANY, 0);
    t = tree_run(8 * DPM_EPS_ONE, 3000, 804);
    bad += check("ustat_tree (Chebyshev), depth 4, eps 8, n 3000", &t, CONSERVATIVE, 0);
    assert_int_equal(bad, 0);
}

static void test_tuple(void **state)
{
    (void)state;
    int bad = 0;
    tally_t t = tuple_run(DPM_TUPLE_MR, "8", 2000, 1, 901);
    bad += check("tuple_mr, eps 8, 2000 devices, values -1/1", &t, CONSERVATIVE, 0);
    t = tuple_run(DPM_TUPLE_MR, "8", 20000, 5, 902);
    bad += check("tuple_mr, eps 8, 20000 devices", &t, CONSERVATIVE, 0);
    t = tuple_run(DPM_TUPLE_ML, "8", 20000, 5, 903);
    bad += check("tuple_ml, eps 8, 20000 devices", &t, MANY, 0);
    assert_int_equal(bad, 0);
}

static void test_dpauc(void **state)
{
    (void)state;
    assert_int_equal(dpauc_run(20, 8.0, 1001) + dpauc_run(2000, 8.0, 1002), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roc_hist), cmocka_unit_test(test_roc_groups),
        cmocka_unit_test(test_fedauc),   cmocka_unit_test(test_ustat),
        cmocka_unit_test(test_tuple),    cmocka_unit_test(test_dpauc),
    };
    return cmocka_run_group_tests_name("few_events", tests, NULL, NULL);
}
