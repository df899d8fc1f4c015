/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim repro ustat: Bell et al.'s offline targets (see repro_ustat.h). */
#include "sim/repro/repro_ustat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/ustat.h"
#include "estimate/ustat.h"
#include "sim/run/cli.h"
#include "sim/pop/progress.h"
#include "sim/repro/repro_auc_data.h"
#include "sim/pop/sim_rng.h"
#include "common/stream.h"

#define RUNS 20u /* the paper's Figure 3 */
#define NPOS 693u
#define NNEG 6000u
#define NDEPTH 4u
#define NEPS 5u
#define NK 2u
#define TIE 0.5
#define Q16 65536.0
#define SOURCE "sdk/docs/ustat.md §Offline targets (the paper prints no number)"

static const uint32_t kDepth[NDEPTH] = {4, 8, 12, 16};
static const double kEps[NEPS] = {0.5, 1, 2, 5, 10};
static const uint32_t kK[NK] = {16, 256};

/* Corollary 1 and the rates in n: ustat_bins over a k sweep (exact mode, KRUNS runs) at three
 * data sizes (the spec's data scaled by 1/4, 1, 4) and three eps; the tree at d = 2^TREE_N_DEPTH
 * at the same sizes (every example through the SDK, RUNS runs). */
#define NSWEEP_K 11u
#define NSWEEP_EPS 3u
#define NSIZE 3u
#define KRUNS 1000u
#define TREE_N_DEPTH 8u
static const uint32_t kSweepK[NSWEEP_K] = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
static const double kSweepEps[NSWEEP_EPS] = {0.5, 1, 2};
static const uint32_t kSizeQuarters[NSIZE] = {1, 4, 16}; /* n+ = 693 q / 4, n- = 6000 q / 4 */

typedef struct {
    double abs_err, abs_sq, sq_err_target, bound, err_target;
    uint32_t runs;
} acc_t;

/* The leaf histograms of the data at depth (bin = floor(s 2^depth)), per class. */
static int leaf_hist(const auc_data_t *d, uint32_t depth, uint64_t **neg, uint64_t **pos)
{
    size_t n = (size_t)1 << depth;
    *neg = calloc(n, sizeof(uint64_t));
    *pos = calloc(n, sizeof(uint64_t));
    if (*neg == NULL || *pos == NULL) {
        return -1;
    }
    for (uint32_t i = 0; i < d->n; i++) {
        uint64_t b = ((uint64_t)d->score[i] << depth) >> 31;
        (d->label[i] ? *pos : *neg)[b < n ? b : n - 1]++;
    }
    return 0;
}

/* RUNS runs of ustat_tree at depth / eps (Hadamard RR on every level: oracle H1 of
 * sdk/docs/ustat.md §Oracles), every example through dpm_ustat_tree_perturb. */
static int tree_runs(const auc_data_t *d, double truth, uint32_t depth, double eps, uint64_t key,
                     acc_t *acc)
{
    dpm_ustat_tree_t m;
    dpm_ustat_tree_params_t p;
    dpm_ustat_tree_agg_t a;
    uint64_t *neg = NULL, *pos = NULL;
    double target = NAN;
    memset(acc, 0, sizeof(*acc));
    int st = dpm_ustat_tree_init(&m, depth, 0, (dpm_eps_t)llround(eps * Q16)) == DPM_OK &&
                     dpm_ustat_tree_params_init(&p, &m) == DPM_OK &&
                     leaf_hist(d, depth, &neg, &pos) == 0 &&
                     dpm_ustat_tree_exact(depth, neg, pos, TIE, &target) == DPM_OK
                 ? 0
                 : -1;
    free(neg);
    free(pos);
    for (uint32_t r = 0; r < RUNS && st == 0; r++) {
        if (dpm_ustat_tree_agg_init(&a, &p) != DPM_OK) {
            return -1;
        }
        for (uint32_t i = 0; i < d->n && st == 0; i++) {
            auc_device_rand_t dr;
            dpm_ustat_example_t ex = {d->score[i], d->label[i], 0};
            dpm_ustat_tree_report_t rep;
            st = auc_device_rand(&dr, sim_stream_key(key, r, i)) == 0 &&
                         dpm_ustat_tree_perturb(&m, &dr.r, &ex, &rep) == DPM_OK &&
                         dpm_ustat_tree_agg_add(&a, rep.label, rep.level, rep.row, rep.value) ==
                             DPM_OK
                     ? 0
                     : -1;
        }
        dpm_ustat_tree_opts_t o = {DPM_USTAT_TREE_CHOOSE_A, 0.0, TIE};
        dpm_ustat_tree_estimate_t e;
        if (st == 0 && dpm_ustat_tree_estimate(&p, &a, &o, &e) == DPM_OK && e.est.defined) {
            double err = e.est.value - truth, et = e.est.value - target;
            acc->abs_err += fabs(err);
            acc->abs_sq += err * err;
            acc->sq_err_target += et * et;
            acc->err_target += et;
            acc->bound += e.mse_bound;
            acc->runs++;
        }
        dpm_ustat_tree_agg_free(&a);
    }
    return st;
}

/* RUNS runs of ustat_bins (kernel AUC, label public) with k bins. */
static int bins_runs(const auc_data_t *d, double truth, uint32_t k, double eps, uint64_t key,
                     acc_t *acc)
{
    dpm_ustat_bins_t m;
    dpm_ustat_bins_params_t p;
    memset(acc, 0, sizeof(*acc));
    dpm_ustat_bins_agg_t *a = malloc(sizeof(*a));
    double target = auc_data_binned(d, k);
    int st =
        a != NULL &&
                dpm_ustat_bins_init(&m, DPM_USTAT_AUC, k, (dpm_eps_t)llround(eps * Q16)) ==
                    DPM_OK &&
                dpm_ustat_bins_params_init(&p, m.kernel, m.k, m.grr.keep, m.grr.other) == DPM_OK
            ? 0
            : -1;
    for (uint32_t r = 0; r < RUNS && st == 0; r++) {
        dpm_ustat_bins_agg_init(a, p.domain);
        for (uint32_t i = 0; i < d->n && st == 0; i++) {
            auc_device_rand_t dr;
            dpm_ustat_example_t ex = {d->score[i], d->label[i], 0};
            dpm_ustat_bins_report_t rep;
            st = auc_device_rand(&dr, sim_stream_key(key, r, i)) == 0 &&
                         dpm_ustat_bins_perturb(&m, &dr.r, &ex, &rep) == DPM_OK &&
                         dpm_ustat_bins_agg_add(a, &p, rep.value, rep.label) == DPM_OK
                     ? 0
                     : -1;
        }
        dpm_ustat_estimate_t e;
        if (st == 0 && dpm_ustat_bins_estimate(&p, a, TIE, 0.95, &e) == DPM_OK && e.defined) {
            double err = e.value - truth, et = e.value - target;
            acc->abs_err += fabs(err);
            acc->abs_sq += err * err;
            acc->sq_err_target += et * et;
            acc->err_target += et;
            acc->bound += e.sd * e.sd;
            acc->runs++;
        }
    }
    free(a);
    return st;
}

/* runs of ustat_bins (AUC kernel) in exact mode. GRR at the SDK's p and q (p + (k - 1) q = 1)
 * reports the true value with probability p - q and otherwise a value uniform over all k (then
 * the true one with q, each other with q, as required), so per class: the reports kept at
 * true bin a ~ Binomial(h_a, p - q), the rest of the class one multinomial uniform over the k
 * values. MSE against the exact AUC (quantization and noise both), and its standard error. */
static int bins_exact_mse(const auc_data_t *d, double truth, uint32_t k, double eps, uint32_t runs,
                          uint64_t key, double *mse, double *se)
{
    dpm_ustat_bins_t m;
    dpm_ustat_bins_params_t p;
    uint64_t h[2][64] = {{0}}, out[64];
    double w[64], tmp[64];
    dpm_ustat_bins_agg_t *a = malloc(sizeof(*a));
    int st =
        a != NULL && k <= 64 &&
                dpm_ustat_bins_init(&m, DPM_USTAT_AUC, k, (dpm_eps_t)llround(eps * Q16)) ==
                    DPM_OK &&
                dpm_ustat_bins_params_init(&p, m.kernel, m.k, m.grr.keep, m.grr.other) == DPM_OK
            ? 0
            : -1;
    for (uint32_t i = 0; i < d->n && st == 0; i++) {
        uint64_t b = ((uint64_t)d->score[i] * k) >> 31;
        h[d->label[i]][b < k ? b : k - 1]++;
    }
    sim_rng_t rng;
    sim_rng_init(&rng, key);
    double sq = 0.0, sq2 = 0.0;
    uint32_t defined = 0;
    for (uint32_t r = 0; r < runs && st == 0; r++) {
        dpm_ustat_bins_agg_init(a, p.domain);
        for (uint32_t c = 0; c < 2; c++) {
            uint64_t spread = 0;
            for (uint32_t v = 0; v < k; v++) {
                uint64_t kept = sim_rng_binomial(&rng, h[c][v], p.p - p.q);
                a->count[c][v] += kept;
                spread += h[c][v] - kept;
                w[v] = 1.0;
            }
            sim_rng_multinomial(&rng, spread, w, k, tmp, out);
            for (uint32_t b = 0; b < k; b++) {
                a->count[c][b] += out[b];
            }
        }
        a->reports = d->n;
        dpm_ustat_estimate_t e;
        if (dpm_ustat_bins_estimate(&p, a, TIE, 0.95, &e) == DPM_OK && e.defined) {
            double e2 = (e.value - truth) * (e.value - truth);
            sq += e2;
            sq2 += e2 * e2;
            defined++;
        }
    }
    free(a);
    *mse = defined == runs ? sq / runs : NAN;
    /* the standard error of that mean of squared errors */
    *se = defined == runs ? sqrt(fmax(sq2 / runs - *mse * *mse, 0.0) / runs) : NAN;
    return st;
}

/* Corollary 1 and the rates in n (the tables bins_mse_k, bins_kstar, rate_n). */
static int rates(const repro_opts_t *o, repro_t *r, double start)
{
    int st = 0;
    double c_lo = INFINITY, c_hi = 0.0; /* k at the minimum / n^1/4 sqrt(eps), interior ones */
    for (uint32_t z = 0; z < NSIZE && st == 0; z++) {
        auc_data_t d;
        uint32_t np = NPOS * kSizeQuarters[z] / 4u, nn = NNEG * kSizeQuarters[z] / 4u;
        if (auc_data_beta(&d, np, nn, 3.0, 2.0, 2.0, 3.0, sim_stream_key(0xBE12, z, 0)) != 0) {
            return -1;
        }
        double truth = auc_data_exact(&d), n = d.n;
        uint32_t runs = o->quick ? KRUNS / 8u : KRUNS;
        for (uint32_t e = 0; e < NSWEEP_EPS && st == 0; e++) {
            char row[48], col[32];
            double mse[NSWEEP_K], se[NSWEEP_K], best = INFINITY;
            uint32_t arg = 0;
            snprintf(row, sizeof(row), "n=%u eps=%g", d.n, kSweepEps[e]);
            for (uint32_t j = 0; j < NSWEEP_K && st == 0; j++) {
                st = bins_exact_mse(&d, truth, kSweepK[j], kSweepEps[e], runs,
                                    sim_stream_key(0xB1F, z * 16u + e, j), &mse[j], &se[j]);
                snprintf(col, sizeof(col), "k=%u", kSweepK[j]);
                st |= repro_own_cell(r, "bins_mse_k", row, col, NAN, mse[j], REPRO_INFO, "info", 0,
                                     -1);
                if (mse[j] < best) {
                    best = mse[j];
                    arg = j;
                }
            }
            if (st != 0) {
                break;
            }
            /* The minimum, refined by a parabola in (log k, log MSE) through its neighbours,
             * against Corollary 1's n^1/4 sqrt(eps) (times sqrt(L), unknown for the AUC
             * kernel: the ratio c estimates it and must not drift with n and eps). U-shaped:
             * both ends of the sweep above the minimum by >= 3 standard errors of the
             * difference (independent runs per k), judged where the minimum is at least two
             * steps from both ends (a one-step rise at a flat minimum is not a test). */
            double kmin = kSweepK[arg];
            if (arg > 0 && arg + 1 < NSWEEP_K) {
                double x0 = log(kSweepK[arg - 1]), x1 = log(kSweepK[arg]),
                       x2 = log(kSweepK[arg + 1]);
                double y0 = log(mse[arg - 1]), y1 = log(mse[arg]), y2 = log(mse[arg + 1]);
                double den = (x0 - x1) * (x0 - x2) * (x1 - x2);
                double a2 = (x2 * (y1 - y0) + x1 * (y0 - y2) + x0 * (y2 - y1)) / den;
                double a1 = (x2 * x2 * (y0 - y1) + x1 * x1 * (y2 - y0) + x0 * x0 * (y1 - y2)) / den;
                kmin = a2 > 0 ? exp(fmin(fmax(-a1 / (2 * a2), x0), x2)) : kmin;
            }
            double kstar = pow(n, 0.25) * sqrt(kSweepEps[e]);
            double z_lo = (mse[0] - best) / hypot(se[0], se[arg]),
                   z_hi = (mse[NSWEEP_K - 1] - best) / hypot(se[NSWEEP_K - 1], se[arg]);
            double ends = fmin(z_lo, z_hi);
            int interior = arg > 0 && arg + 1 < NSWEEP_K;
            int bracketed = arg >= 2 && arg + 2 < NSWEEP_K; /* room on both sides to rise */
            repro_kind_t counted = o->quick ? REPRO_INFO : REPRO_SELF;
            st |= repro_own_cell(r, "bins_kstar", row, "k at the minimum", NAN, kmin, REPRO_INFO,
                                 "info", 0, 2);
            st |= repro_own_cell(r, "bins_kstar", row, "n^1/4 sqrt(eps)", NAN, kstar, REPRO_INFO,
                                 "info", 0, 2);
            st |= repro_own_cell(r, "bins_kstar", row, "c = k at min / n^1/4 sqrt(eps)", NAN,
                                 interior ? kmin / kstar : NAN, REPRO_INFO, "info", 0, 2);
            if (interior) {
                c_lo = fmin(c_lo, kmin / kstar);
                c_hi = fmax(c_hi, kmin / kstar);
            }
            st |= repro_own_cell(r, "bins_kstar", row, "ends above the minimum (z)", 3.0, ends,
                                 bracketed ? counted : REPRO_INFO,
                                 bracketed ? "U-shaped: z >= 3"
                                           : "info: minimum at or next to k = 2, no room below",
                                 bracketed && ends >= 3.0, 1);
            if (kSweepEps[e] == 1.0) {
                /* Corollary 1: MSE = O(1/(sqrt(n) eps)) at the best k; Theorem 1's noise term
                 * ~ k^2 / (n eps^2) */
                snprintf(row, sizeof(row), "n=%u", d.n);
                st |= repro_own_cell(r, "rate_n", row, "bins: min MSE over k (eps=1)", NAN, best,
                                     REPRO_INFO, "info", 0, -1);
                st |= repro_own_cell(r, "rate_n", row, "1/sqrt(n) (Corollary 1's rate, L=1)", NAN,
                                     1.0 / sqrt(n), REPRO_INFO, "info", 0, -1);
            }
        }
        /* the tree at d = 2^8, eps = 1: its MSE against its own target beside Theorem 3 */
        acc_t t;
        if (st == 0) {
            char row[48];
            snprintf(row, sizeof(row), "n=%u", d.n);
            st = tree_runs(&d, truth, TREE_N_DEPTH, 1.0, sim_stream_key(0x7EF, z, 0), &t);
            double mse = t.runs ? t.sq_err_target / t.runs : NAN, bound = t.bound / t.runs;
            st |= st == 0 ? repro_own_cell(r, "rate_n", row, "tree: MSE (d=2^8, eps=1)", bound, mse,
                                           REPRO_SELF, "empirical MSE <= Theorem 3 bound",
                                           t.runs == RUNS && mse <= bound, -1)
                          : 0;
        }
        auc_data_free(&d);
        if (o->progress) {
            fprintf(stderr, "  ustat: rates at n = %u done (%.1f s)\n", np + nn, sim_now() - start);
        }
    }
    if (st == 0) {
        double spread = c_hi > 0.0 ? c_hi / c_lo : NAN; /* NaN: no interior minimum at all */
        st = repro_own_cell(r, "bins_kstar", "all interior minima",
                            "max c / min c (k at min scales as n^1/4 sqrt(eps))", 2.0, spread,
                            o->quick ? REPRO_INFO : REPRO_SELF, "<= 2", spread <= 2.0, 2);
        st |= repro_own_cell(r, "bins_kstar", "all interior minima", "c (estimates sqrt(L))", NAN,
                             c_hi > 0.0 ? sqrt(c_lo * c_hi) : NAN, REPRO_INFO,
                             "info: geometric mean", 0, 2);
    }
    return st;
}

static double mean_abs(const acc_t *a)
{
    return a->runs ? a->abs_err / a->runs : NAN;
}

/* The tables, in the order of the output. */
static const repro_table_def_t kTables[] = {
    {"tree_error", "ustat_tree: mean |AUC error| over 20 runs (Figure 3's statistic)",
     "info (Bell et al. Figure 3's setting on synthetic data)",
     "n+ = 693 scores Beta(3, 2), n- = 6000 Beta(2, 3) "
     "(sdk/docs/ustat.md §Sanity populations), Hadamard RR on every "
     "level, a chosen by Theorem 3's bound, error against the examples' exact AUC."},
    {"theorem3", "Theorem 3: the tree's empirical MSE is at most its bound", SOURCE " target 5",
     "Empirical MSE over 20 runs against the tree's own target (the quantized AUC, ties "
     "1/2) beside the mean of the estimator's normalized Theorem 3 bound."},
    {"robust_d", "Figure 3: the tree's error is robust to d", SOURCE " target 7",
     "Per eps: the largest mean |error| over d = 2^4 .. 2^16 divided by the smallest "
     "(robust: at most 3)."},
    {"bins_error", "ustat_bins (Algorithm 1): mean |AUC error| over 20 runs",
     "info (sdk/docs/ustat.md §Offline targets: Figure 3, Algorithm 1)",
     "Same data, k-ary randomized response over k bins, label public."},
    {"bins_blowup", "Algorithm 1 blows up with the number of bins", SOURCE " target 7",
     "Per eps <= 2: mean |error| at k = 256 over that at k = 16 (at least 3), where "
     "the tree is robust: the paper's reason for protocol 2."},
    {"bins_mse_k", "ustat_bins: MSE against the exact AUC over k (Corollary 1)",
     "info (sdk/docs/ustat.md §Offline targets: Theorem 2)",
     "Exact mode (per class and bin: Binomial(h, p - q) kept, the rest of the "
     "class uniform over all k values, the SDK's p and q), 1000 runs; Beta data of the spec scaled "
     "to n/4, n, 4n."},
    {"bins_kstar", "Corollary 1: MSE U-shaped in k, its minimum near n^1/4 sqrt(eps)",
     SOURCE " target 4",
     "The k of the smallest MSE over k in {2 .. 64} (refined by a parabola in log-log "
     "through its neighbours) against n^1/4 sqrt(eps): Corollary 1's k is "
     "n^1/4 sqrt(L eps), and L (a Lipschitz constant of the score density for the AUC "
     "kernel) is unknown, so the check is that c = k / (n^1/4 sqrt(eps)) stays within "
     "a factor 2 over n and eps; U-shaped: where the minimum is at least two steps from "
     "both ends, the MSE at both ends exceeds it by at least 3 standard errors (z). "
     "--quick: not counted."},
    {"rate_n", "MSE against n: ustat_bins at its best k, ustat_tree beside Theorem 3",
     SOURCE " targets 4, 5",
     "eps = 1; the tree at d = 2^8 (20 runs through the SDK, MSE against its own "
     "target); the bins' best MSE beside 1/sqrt(n)."},
};

int repro_ustat(const repro_opts_t *o, repro_t *r, double *seconds)
{
    double start = sim_now();
    r->quick = o->quick;
    repro_tables(r, kTables, sizeof(kTables) / sizeof(kTables[0]));
    int st = rates(o, r, start);
    auc_data_t d;
    if (st != 0 || auc_data_beta(&d, NPOS, NNEG, 3.0, 2.0, 2.0, 3.0, 0xBE11) != 0) {
        return -1;
    }
    double truth = auc_data_exact(&d);
    acc_t tree[NDEPTH][NEPS], bins[NK][NEPS];
    for (uint32_t e = 0; e < NEPS && st == 0; e++) {
        char col[32];
        snprintf(col, sizeof(col), "eps=%g", kEps[e]);
        for (uint32_t j = 0; j < NDEPTH && st == 0; j++) {
            char row[32];
            acc_t *a = &tree[j][e];
            snprintf(row, sizeof(row), "d=2^%u", kDepth[j]);
            st = tree_runs(&d, truth, kDepth[j], kEps[e], sim_stream_key(0x7EE, j, e), a);
            if (st != 0) {
                break;
            }
            double mse = a->sq_err_target / a->runs, bound = a->bound / a->runs;
            st |= repro_own_cell(r, "tree_error", row, col, NAN, mean_abs(a), REPRO_INFO, "info", 0,
                                 -1);
            st |= repro_own_cell(r, "theorem3", row, col, bound, mse, REPRO_SELF,
                                 "empirical MSE <= bound", a->runs == RUNS && mse <= bound, -1);
        }
        for (uint32_t j = 0; j < NK && st == 0; j++) {
            char row[32];
            snprintf(row, sizeof(row), "k=%u", kK[j]);
            st = bins_runs(&d, truth, kK[j], kEps[e], sim_stream_key(0xB1E, j, e), &bins[j][e]);
            st |= st == 0 ? repro_own_cell(r, "bins_error", row, col, NAN, mean_abs(&bins[j][e]),
                                           REPRO_INFO, "info", 0, -1)
                          : 0;
        }
        if (st == 0) {
            double lo = INFINITY, hi = 0.0;
            for (uint32_t j = 0; j < NDEPTH; j++) {
                lo = fmin(lo, mean_abs(&tree[j][e]));
                hi = fmax(hi, mean_abs(&tree[j][e]));
            }
            st |= repro_own_cell(r, "robust_d", "max / min over d", col, 3.0, hi / lo, REPRO_SELF,
                                 "<= 3", hi / lo <= 3.0, 2);
            if (kEps[e] <= 2.0) {
                double ratio = mean_abs(&bins[NK - 1][e]) / mean_abs(&bins[0][e]);
                st |= repro_own_cell(r, "bins_blowup", "k=256 / k=16", col, 3.0, ratio, REPRO_SELF,
                                     ">= 3", ratio >= 3.0, 2);
            }
        }
        if (o->progress) {
            fprintf(stderr, "  ustat: eps %g done (%.1f s)\n", kEps[e], sim_now() - start);
        }
    }
    auc_data_free(&d);
    if (st == 0) {
        st = repro_write_outputs(
            r, o->out_dir, "ustat",
            "# Bell et al. 2020, locally private AUC (ustat_bins, ustat_tree)\n\n"
            "Generated by `dpm-sim repro ustat` (host-sim/sim/repro/repro_ustat.c). The paper "
            "prints no table and its figures' values are not in the spec, so every "
            "check is one of the offline targets "
            "(sdk/docs/ustat.md §Offline targets) on synthetic data: a "
            "self-check, never a paper match. Data: n+ = %u, n- = %u (the paper's "
            "smallest class, 693), scores Beta(3, 2) / Beta(2, 3), exact AUC %.6f. "
            "Every example is one report through the SDK (dpm_ustat_tree_perturb, "
            "dpm_ustat_bins_perturb) on its own random stream; %u runs.\n\n"
            "Plots (host-sim/plot/ustat.py, from ustat.json): "
            "[ustat_bins_mse_k.png](ustat_bins_mse_k.png) (MSE against k), "
            "[ustat_rate_n.png](ustat_rate_n.png) (MSE against n), "
            "[ustat_fig3.png](ustat_fig3.png) (Figure 3's trends).\n\n",
            NPOS, NNEG, truth, RUNS);
    }
    if (st == 0 && o->plot && sim_cli_plot("host-sim/plot/ustat.py", o->out_dir) < 0) {
        st = -1;
    }
    *seconds = sim_now() - start;
    return st;
}
