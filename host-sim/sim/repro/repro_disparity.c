/* SPDX-License-Identifier: Apache-2.0 */
/* Juarez & Korolova (2022) reproduced (see repro_disparity.h). */
#include "sim/repro/repro_disparity.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "estimate/disparity.h"
#include "sim/run/cli.h"
#include "sim/run/farm.h"
#include "sim/devices/mech_tuple.h"
#include "sim/devices/mechs.h"
#include "sim/run/output.h"
#include "sim/plan/plan_tuple.h"
#include "sim/pop/progress.h"
#include "sim/repro/repro_selection.h"
#include "sim/run/session.h"
#include "common/stream.h"

#define T2_RUNS_MAX 64u
#define RATIO_P_MIN 1e-3
#define PRINT_ROUNDING 5e-5 /* the paper prints 4 decimals */
#define PIPELINE_P_MIN 1e-6
#define FIG4_N 10u /* devices per group */
#define FIG4_SIGMA 0.33
#define FIG4_TOL 0.02
#define FIG4_QUICK_SE 6.0 /* --quick: also allow 6 standard errors (1e4 runs: SE ~ 1.5%) */
#define FIG4_CONFIGS 3
#define FIG4_MAX_POINTS 10
#define FIG4_CHUNK 1024u
#define GROUPS_D 4u
#define GROUPS_SUB 5u
#define SELF_REPLAY_DEVICES 20000u
#define SELF_THREAD_DEVICES 100000u
#define CURVE_POINTS 61 /* eps from 0.01 to 10, 20 per decade */
#define T2_PAPER_K 1e7

/* ---- the analytic computations (each NaN if the library refuses) ------------------------------
 */

static double min_eps(dpm_disp_mech_t mech, dpm_disp_split_t split, double K, double alpha)
{
    dpm_disp_plan_t plan;
    double eps = NAN;
    if (dpm_disp_plan_init(&plan, mech, split, alpha, 0.99) != DPM_OK ||
        dpm_disp_plan_min_eps(&plan, K, &eps) != DPM_OK) {
        return NAN;
    }
    return eps;
}

/* Gap MSE of the tables: n_G = n_H = K / 2, worst-case nu2, the split's parameters. */
static double table_mse(dpm_disp_mech_t mech, dpm_disp_split_t split, double K, double eps)
{
    dpm_disp_plan_t plan;
    double mse = NAN;
    if (dpm_disp_plan_init(&plan, mech, split, 0.1, 0.99) != DPM_OK ||
        dpm_disp_plan_mse(&plan, K, eps, &mse) != DPM_OK) {
        return NAN;
    }
    return mse;
}

/* The paper's unquantized model for an explicit split (eps1, eps2, k). */
static double split_variance(dpm_disp_mech_t mech, double e1, double e2, double k, double K,
                             double n, double nu2)
{
    dpm_disp_params_t p;
    double var = NAN;
    if (dpm_disp_params_from_split(&p, mech, 2, e1, e2, k) != DPM_OK ||
        dpm_disp_mean_variance(&p, K, n, nu2, &var) != DPM_OK) {
        return NAN;
    }
    return var;
}

/* Gap MSE of the figures: unquantized parameters ("M_R opt.", "M_L opt." or "M_L k = 2"). */
typedef enum { FIG_R_OPT, FIG_L_OPT, FIG_L_K2 } fig_mech_t;

static double fig_mse(fig_mech_t which, double eps, double K, double n_g, double n_h, int upper)
{
    dpm_disp_mech_t mech = which == FIG_R_OPT ? DPM_DISP_MR : DPM_DISP_ML;
    dpm_disp_split_t split = which == FIG_L_K2 ? DPM_DISP_SPLIT_CORRECT : DPM_DISP_SPLIT_PAPER;
    double e1, e2, k, nu2, mse = NAN;
    dpm_disp_params_t p;
    if (dpm_disp_split_eps(mech, split, eps, &e1, &e2, &k) != DPM_OK ||
        dpm_disp_nu2_bound(mech, upper, &nu2) != DPM_OK ||
        dpm_disp_params_from_split(&p, mech, 2, e1, e2, isnan(k) ? 1.0 : k) != DPM_OK ||
        dpm_disp_gap_mse(&p, K, n_g, n_h, nu2, nu2, &mse) != DPM_OK) {
        return NAN;
    }
    return mse;
}

static const char *mech_label(dpm_disp_mech_t mech, int paper)
{
    if (paper) {
        return mech == DPM_DISP_MR ? "M_R opt." : "M_L opt.";
    }
    return mech == DPM_DISP_MR ? "M_R" : "M_L k=2";
}

/* "1e5" for an exact power of ten, else the number. */
static void power_name(double v, char *buf, size_t cap)
{
    double e = log10(v);
    if (e == floor(e)) {
        snprintf(buf, cap, "1e%d", (int)e);
    } else {
        snprintf(buf, cap, "%g", v);
    }
}

/* ---- context ----------------------------------------------------------------------------------
 */

typedef struct {
    dpm_disp_mech_t mech;
    int paper;
    char eps_text[24];
    double eps_true;
    double mean_abs, sd_abs; /* ||D-hat| - |D||, metric scale */
    double rmse, theory_rmse;
    double paper_mean, paper_sd; /* NaN for the SDK split */
    double ratio_p_value;
    double chi2;
} t2_row_t;

typedef struct {
    const char *label;
    dpm_disp_mech_t mech;
    int paper;
    double theory, eps1, eps2, eps_true;
    uint32_t points;
    uint32_t at[FIG4_MAX_POINTS];
    double empirical[FIG4_MAX_POINTS];
    double se_rel, tol, seconds;
} fig4_row_t;

typedef struct {
    dpm_disp_mech_t mech;
    double eps_true;
    double n[GROUPS_D], truth[GROUPS_D], est[GROUPS_D], lo[GROUPS_D], hi[GROUPS_D];
    int covered;
} groups_row_t;

typedef struct {
    const repro_opts_t *o;
    repro_t *r;
    sim_scenario_t *t2sc; /* paper-disparity-table2.scn */
    /* Table 2 */
    t2_row_t t2[SIM_MAX_CAMPAIGNS * SIM_MAX_LIST];
    size_t nt2;
    uint64_t t2_devices, t2_males;
    uint32_t t2_runs;
    double t2_gap, t2_chi2, t2_dof, t2_p, t2_seconds;
    const char *t2_mode;
    /* Figure 4 */
    fig4_row_t fig4[FIG4_CONFIGS];
    double fig4_values[FIG4_N], fig4_mean, fig4_nu2, fig4_seconds;
    uint32_t fig4_runs;
    /* per-group estimates */
    groups_row_t groups[2];
    uint64_t groups_devices;
    double groups_seconds;
    double t_analytic, t_table1, t_plots;
    int plots;
} ctx_t;

static void say(const ctx_t *x, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A line of the run's log on stdout. */
static void say(const ctx_t *x, const char *fmt, ...)
{
    (void)x;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

static sim_scenario_t *load(const ctx_t *x, const char *name)
{
    char path[4096], err[512];
    sim_scenario_t *sc = malloc(sizeof(*sc));
    snprintf(path, sizeof(path), "%s/%s", x->o->data_dir, name);
    if (sc == NULL || sim_scenario_load(path, sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim repro: %s\n", sc == NULL ? "out of memory" : err);
        free(sc);
        return NULL;
    }
    return sc;
}

/* ---- Table 1: the planner's answers, each checked by simulation -------------------------------
 */

static int table1(ctx_t *x)
{
    double start = sim_now();
    sim_scenario_t *sc = load(x, "paper-disparity-table1.scn");
    if (sc == NULL) {
        return -1;
    }
    repro_table(x->r, "table1_simulated",
                "Table 1's answers checked by simulation (exact mode, paper and SDK splits)",
                "planner target (the confidence)",
                "Each answer (eps rounded up to Q16.16, K devices) run in exact mode over the "
                "planner's worst-case population; the fraction of runs with |gap error| <= alpha "
                "must be shown to reach 0.99: the lower end of its 95% Clopper-Pearson interval "
                "at or above it (dpm-sim plan's check).");
    /* a coverage of 0.99 is shown (95% interval above it) only with hundreds of runs */
    uint32_t runs = x->o->quick ? 400u : 1600u, questions = 0;
    int st = 0;
    for (uint32_t p = 0; p < sc->nplans && st == 0; p++) {
        const sim_plan_spec_t *pl = &sc->plan[p];
        dpm_disp_mech_t mech = pl->mechanism == DPM_MECH_ID_TUPLE_MR ? DPM_DISP_MR : DPM_DISP_ML;
        for (uint32_t i = 0; i < pl->ndevices && st == 0; i++) {
            for (uint32_t c = 0; c < pl->nerror && st == 0; c++) {
                sim_plan_question_t q;
                sim_plan_answer_t a;
                char row[48], col[96], k[24], al[24], err[256];
                memset(&q, 0, sizeof(q));
                double alpha = pl->scale_metric ? 2.0 * pl->error[c] : pl->error[c];
                if (dpm_disp_plan_init(&q.plan, mech,
                                       pl->split_paper ? DPM_DISP_SPLIT_PAPER
                                                       : DPM_DISP_SPLIT_CORRECT,
                                       alpha, pl->confidence) != DPM_OK) {
                    fprintf(stderr, "dpm-sim repro: plan '%s' refused\n", pl->name);
                    st = -1;
                    break;
                }
                q.plan.bound = pl->bound_normal ? DPM_DISP_BOUND_NORMAL : DPM_DISP_BOUND_CHEBYSHEV;
                q.error = pl->error[c];
                q.scale_metric = pl->scale_metric;
                q.devices = pl->devices[i];
                q.runs = runs;
                questions++;
                if (sim_plan_solve(&q, &a) != 0) {
                    st = -1;
                    break;
                }
                power_name(pl->devices[i], k, sizeof(k));
                power_name(pl->error[c], al, sizeof(al));
                snprintf(row, sizeof(row), "K=%s", k);
                snprintf(col, sizeof(col), "%s alpha=%s", mech_label(mech, pl->split_paper), al);
                if (pl->split_paper) {
                    st = repro_ref_cell(x->r, "table1", row, col, a.eps);
                    st = st == 0 ? repro_ref_cell(x->r, "table1_notebook", row, col, a.eps) : st;
                } else {
                    st = repro_ref_cell(x->r, "table1_correct", row, col, a.eps);
                }
                if (st == 0 && sim_plan_check(&q, &a, 1000u * i + c, NULL, err, sizeof(err)) != 0) {
                    fprintf(stderr, "dpm-sim repro: %s\n", err);
                    st = -1;
                }
                if (st == 0 && a.checked) {
                    char col2[112];
                    const sim_plan_step_t *first = &a.search.step[0];
                    snprintf(col2, sizeof(col2), "%s (%s split)", col,
                             pl->split_paper ? "paper" : "SDK");
                    st = repro_own_cell(x->r, "table1_simulated", row, col2, pl->confidence,
                                        (double)first->within / first->runs, REPRO_SELF,
                                        "verified at the planned answer", first->verified, 3);
                }
            }
        }
    }
    free(sc);
    x->t_table1 = sim_now() - start;
    say(x, "  table 1: %u planner questions, each answer checked by %u exact-mode runs, %.1f s\n",
        questions, runs, x->t_table1);
    return st;
}

/* ---- the other analytic tables ------------------------------------------------------------- */

static const double kT2Eps[4] = {0.01, 0.1, 1.0, 10.0};

static int table2_alpha(ctx_t *x)
{
    int st = 0;
    for (int s = 0; s < 2; s++) {
        dpm_disp_split_t split = s == 0 ? DPM_DISP_SPLIT_PAPER : DPM_DISP_SPLIT_CORRECT;
        const char *table = s == 0 ? "table2_alpha" : "table2_alpha_correct";
        for (int i = 0; i < 4 && st == 0; i++) {
            char row[24];
            snprintf(row, sizeof(row), "eps=%g", kT2Eps[i]);
            for (int m = 0; m < 2 && st == 0; m++) {
                /* alpha = 5 sqrt(MSE): the 0.99 Chebyshev bound 10 sqrt(MSE), [0, 1] scale */
                dpm_disp_mech_t mech = m == 0 ? DPM_DISP_MR : DPM_DISP_ML;
                st = repro_ref_cell(x->r, table, row, m == 0 ? "alpha (R)" : "alpha (L)",
                                    5.0 * sqrt(table_mse(mech, split, 1e7, kT2Eps[i])));
            }
        }
    }
    static const double eps[5] = {0.01, 0.1, 1.0, 1.78, 10.0};
    for (int i = 0; i < 5 && st == 0; i++) {
        char row[24];
        snprintf(row, sizeof(row), "eps=%g", eps[i]);
        for (int m = 0; m < 2 && st == 0; m++) {
            dpm_disp_mech_t mech = m == 0 ? DPM_DISP_MR : DPM_DISP_ML;
            st =
                repro_ref_cell(x->r, "table2_notebook", row, m == 0 ? "sqrt(MSE) R" : "sqrt(MSE) L",
                               sqrt(table_mse(mech, DPM_DISP_SPLIT_PAPER, 1e7, eps[i])));
        }
    }
    return st != 0 ? st
                   : repro_ref_cell(x->r, "notebook_find_epsilon",
                                    "find_epsilon K=1e7 alpha=0.1048", "M_L opt. eps",
                                    min_eps(DPM_DISP_ML, DPM_DISP_SPLIT_PAPER, 1e7, 0.1048));
}

static int reference_values(ctx_t *x)
{
    const char *t = "sec11_4_reference";
    double e = NAN;
    int st = repro_ref_cell(x->r, t, "Var_R e1=e2=1 n=5000 K=1e4", "nu2=0",
                            split_variance(DPM_DISP_MR, 1, 1, 0, 1e4, 5000, 0.0));
    st |= repro_ref_cell(x->r, t, "Var_R e1=e2=1 n=5000 K=1e4", "nu2=1",
                         split_variance(DPM_DISP_MR, 1, 1, 0, 1e4, 5000, 1.0));
    st |= repro_ref_cell(x->r, t, "Var_R e1=e2=0.5 n=10 K=20", "nu2=0.1",
                         split_variance(DPM_DISP_MR, 0.5, 0.5, 0, 20, 10, 0.1));
    st |= repro_ref_cell(x->r, t, "Var_L k=2 e1=0.5 e2=1 n=5000 K=1e4", "nu2=1",
                         split_variance(DPM_DISP_ML, 0.5, 1, 2, 1e4, 5000, 1.0));
    st |= repro_ref_cell(x->r, t, "Var_L k=2 e1=0.25 e2=0.5 n=10 K=20", "nu2=0.15",
                         split_variance(DPM_DISP_ML, 0.25, 0.5, 2, 20, 10, 0.15));
    (void)dpm_disp_true_ldp_mr(1.0, 1.0, &e);
    st |= repro_ref_cell(x->r, t, "true LDP M_R", "e1=1 e2=1", e);
    e = NAN;
    (void)dpm_disp_true_ldp_mr(log((1.0 + exp(1.0)) / 2.0), 1.0, &e);
    st |= repro_ref_cell(x->r, t, "true LDP M_R", "e1=ln((1+e)/2) e2=1", e);
    static const double lap_eps[3] = {0.01, 1.0, 10.0};
    for (int i = 0; i < 3; i++) {
        dpm_disp_params_t p;
        char col[24];
        double lap = NAN;
        snprintf(col, sizeof(col), "eps=%g", lap_eps[i]);
        if (dpm_disp_params_from_split(&p, DPM_DISP_ML, 2, 1.0, lap_eps[i], 2.0) == DPM_OK) {
            (void)dpm_disp_value_noise_variance(&p, 0, &lap);
        }
        st |= repro_ref_cell(x->r, t, "Laplace variance 8/eps^2", col, lap);
    }
    /* sdk/docs/tuple.md §M_R and its true privacy level: the true level of the paper's M_R split
     * eps1 = eps2 = eps */
    static const double eps3[5] = {0.1, 0.5, 1.0, 2.0, 5.0};
    for (int i = 0; i < 5; i++) {
        char col[24];
        e = NAN;
        snprintf(col, sizeof(col), "eps=%g", eps3[i]);
        (void)dpm_disp_true_ldp_mr(eps3[i], eps3[i], &e);
        st |= repro_ref_cell(x->r, "sec3_true_ldp_paper_MR", "eps_true", col, e);
    }
    /* sdk/docs/tuple.md §Thresholds: d = 2; keep = floor(a 2^32)
     * = 2^32 - ceil(2^32 / (e^eps + 1)) */
    static const double eps2[7] = {0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0};
    for (int i = 0; i < 7; i++) {
        char row[24];
        uint32_t keep = 0, other = 0;
        dpm_disp_params_t p;
        double a = NAN, c = NAN, k = NAN;
        snprintf(row, sizeof(row), "eps=%g", eps2[i]);
        if (dpm_disp_params_from_split(&p, DPM_DISP_MR, 2, eps2[i], eps2[i], 0) == DPM_OK) {
            a = p.a;
            c = p.c;
        }
        if (dpm_disp_grr_thresholds(eps2[i], 2, &keep, &other) == DPM_OK) {
            k = keep;
        }
        st |= repro_ref_cell(x->r, "sec11_2_thresholds", row, "a", a);
        st |= repro_ref_cell(x->r, "sec11_2_thresholds", row, "keep T", k);
        st |= repro_ref_cell(x->r, "sec11_2_thresholds", row, "2b-1", c);
    }
    return st;
}

static int figures_1_2(ctx_t *x)
{
    static const double eps[9] = {0.1, 0.31, 0.5, 1, 2, 2.6, 3, 5, 10};
    static const char *const col[6] = {"M_R opt. up",  "M_R opt. low", "M_L opt. up",
                                       "M_L opt. low", "M_L k=2 up",   "M_L k=2 low"};
    static const fig_mech_t mech[6] = {FIG_R_OPT, FIG_R_OPT, FIG_L_OPT,
                                       FIG_L_OPT, FIG_L_K2,  FIG_L_K2};
    int st = 0;
    for (int r = 0; r < 9; r++) {
        char row[24];
        snprintf(row, sizeof(row), "eps=%g", eps[r]);
        for (int c = 0; c < 6; c++) {
            st |= repro_ref_cell(x->r, "fig1_gap_mse", row, col[c],
                                 fig_mse(mech[c], eps[r], 2e4, 1e4, 1e4, c % 2 == 0));
        }
    }
    static const double ratio[4] = {1, 0.25, 0.1, 0.01};
    static const double eps2[4] = {0.5, 1, 2, 5};
    const double K = 2e4;
    for (int r = 0; r < 4; r++) {
        char row[24];
        double n_g = K * ratio[r] / (1.0 + ratio[r]), n_h = K / (1.0 + ratio[r]);
        snprintf(row, sizeof(row), "nG/nH=%g", ratio[r]);
        for (int c = 0; c < 8; c++) {
            char cl[32];
            fig_mech_t m = c % 2 == 0 ? FIG_R_OPT : FIG_L_K2;
            snprintf(cl, sizeof(cl), "eps=%g %s", eps2[c / 2], c % 2 == 0 ? "R" : "L(k=2)");
            st |= repro_ref_cell(x->r, "fig2_gap_mse_upper", row, cl,
                                 fig_mse(m, eps2[c / 2], K, n_g, n_h, 1));
        }
    }
    return st;
}

/* ---- Table 2: empirical errors (the scenario, exact mode or the device farm) ------------------
 */

/* Chi-square with an even number of degrees of freedom 2m: Pr[X >= x] = e^(-x/2) sum_{j<m}
 * (x/2)^j / j!, summed in logs. NaN for odd dof. */
static double chi2_sf_even(double x, double dof)
{
    double m = dof / 2.0;
    if (m != floor(m) || m < 1.0 || x < 0.0) {
        return NAN;
    }
    double h = x / 2.0, sum = 0.0;
    for (double j = 0.0; j < m; j += 1.0) {
        sum += exp(-h + (j > 0.0 ? j * log(h) : 0.0) - lgamma(j + 1.0));
    }
    return fmin(sum, 1.0);
}

/* Do two 10-run means of |error| agree within their run-to-run spread? The ratio of the means,
 * on the log scale: ln m1 - ln m2 has variance cv1^2 / n1 + cv2^2 / n2 (the delta method, cv =
 * sd / mean of one run, from each side's own printed sd), so z = |ln(m1 / m2)| / sqrt(...) and
 * the two-sided normal p. The paper's 4-decimal rounding counts in our favour: its mean moves
 * within its rounding interval towards ours, and its sd is at least half a unit of the last
 * decimal. A ratio rather than a difference: the errors span four orders of magnitude, and a
 * tiny mean cannot hide behind a large one's spread. */
static double ratio_p(double m1, double s1, double n1, double m2, double s2, double n2)
{
    double lo = m2 - PRINT_ROUNDING, hi = m2 + PRINT_ROUNDING;
    double m2f = fmin(fmax(m1, fmax(lo, PRINT_ROUNDING)), hi); /* the closest printable value */
    double cv1 = s1 / m1, cv2 = fmax(s2, PRINT_ROUNDING) / m2f;
    double z = fabs(log(m1 / m2f)) / sqrt(cv1 * cv1 / n1 + cv2 * cv2 / n2);
    return m1 > 0.0 ? fmin(1.0, 2.0 * prob_norm_sf(z)) : 0.0;
}

static int table2_row(ctx_t *x, const sim_result_t *res)
{
    const sim_cfg_t *cfg = &res->cfg;
    const sim_tuple_state_t *s = sim_tuple_state_c(cfg);
    t2_row_t *t = &x->t2[x->nt2++];
    uint32_t gap = sim_tuple_item(cfg, 0, 0, 1);
    sim_item_summary_t sm;
    sim_result_summary(res, gap, &sm);
    memset(t, 0, sizeof(*t));
    t->mech = cfg->m->id == DPM_MECH_ID_TUPLE_MR ? DPM_DISP_MR : DPM_DISP_ML;
    t->paper = cfg->paper;
    snprintf(t->eps_text, sizeof(t->eps_text), "%s", cfg->spec->eps_text[cfg->eps_index]);
    t->eps_true = cfg->eps_implemented;
    t->mean_abs = sm.paper_abs_error;
    t->sd_abs = sm.sd_abs_error;
    t->rmse = sm.rmse;
    t->paper_mean = t->paper_sd = t->ratio_p_value = NAN;
    double var_gap = NAN; /* value scale: Eq. 19/20 with the population's sizes and nu2 */
    if (dpm_disp_gap_mse(&s->params, (double)cfg->reporting, s->n[0], s->n[1], s->nu2[0][0],
                         s->nu2[0][1], &var_gap) != DPM_OK) {
        fprintf(stderr, "dpm-sim repro: Table 2: no Eq. 19/20 variance for %s\n", cfg->label);
        return -1;
    }
    t->theory_rmse = sqrt(var_gap / 4.0);
    for (uint32_t r = 0; r < res->runs; r++) {
        double e = 2.0 * (sim_result_at(res, r, gap)->est - sm.truth);
        t->chi2 += e * e / var_gap;
    }
    char row[32], col[64], sdcol[64];
    snprintf(row, sizeof(row), "eps=%s", t->eps_text);
    snprintf(col, sizeof(col), "%s mean abs err", mech_label(t->mech, t->paper));
    snprintf(sdcol, sizeof(sdcol), "%s sd abs err", mech_label(t->mech, t->paper));
    int st = 0;
    if (t->paper) {
        const repro_ref_t *m = repro_find_ref(x->r, "table2_empirical", row, col);
        const repro_ref_t *d = repro_find_ref(x->r, "table2_empirical_sd", row, sdcol);
        if (m == NULL || d == NULL) {
            fprintf(stderr, "dpm-sim repro: no Table 2 reference for [%s] [%s]\n", row, col);
            return -1;
        }
        t->paper_mean = m->value;
        t->paper_sd = d->value;
        t->ratio_p_value = ratio_p(t->mean_abs, t->sd_abs, res->runs, m->value, d->value, 10.0);
        char check[48];
        snprintf(check, sizeof(check), "ratio z-test, p = %.3g >= %g", t->ratio_p_value, RATIO_P_MIN);
        st = repro_own_cell(x->r, "table2_empirical", row, col, m->value, t->mean_abs, REPRO_PAPER,
                            check, t->ratio_p_value >= RATIO_P_MIN, -1);
        st = st == 0 ? repro_ref_cell(x->r, "table2_empirical_sd", row, sdcol, t->sd_abs) : st;
    }
    char col2[96];
    snprintf(col2, sizeof(col2), "%s (%s split) RMSE", mech_label(t->mech, t->paper),
             t->paper ? "paper" : "SDK");
    return st != 0 ? st
                   : repro_own_cell(x->r, "table2_rmse_vs_theory", row, col2, t->theory_rmse,
                                    t->rmse, REPRO_INFO, "info", 0, -1);
}

static int table2(ctx_t *x)
{
    double start = sim_now();
    sim_scenario_t *sc = x->t2sc;
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = x->o->inprocess ? SIM_MODE_INPROCESS : SIM_MODE_EXACT;
    ro.threads = x->o->threads;
    ro.progress = x->o->progress;
    ro.quiet = 1;
    x->t2_mode = x->o->inprocess ? "inprocess (every device through the SDK)"
                                 : "exact (aggregate-level sampling)";
    if (sc->runs > T2_RUNS_MAX) {
        fprintf(stderr, "dpm-sim repro: Table 2: at most %u runs\n", T2_RUNS_MAX);
        return -1;
    }
    repro_table(x->r, "table2_rmse_vs_theory",
                "Table 2 population: RMSE of the gap against Eq. 19/20 (paper and SDK splits)",
                "analytic (Eq. 19/20, the population's sizes and nu^2)",
                "sqrt(mean (D-hat - D)^2) over the runs, [0, 1] scale, beside the analytic RMSE.");
    repro_table(x->r, "table2_control", "Table 2: the ratio test can fail (negative control)",
                "self-check (a mismatched reference)",
                "Our M_R opt. errors at eps = 10 against the paper's value at eps = 0.1 must be "
                "rejected by the same test as Table 2's cells.");
    repro_table(x->r, "table2_pipeline", "Table 2 population: every run against Eq. 19/20",
                "analytic (Eq. 19/20)",
                "The signed gap errors standardized by Eq. 19/20, summed over all configurations "
                "and runs, against chi-square with that many degrees of freedom: two-sided "
                "p >= 1e-6.");
    sim_session_t s;
    char err[512];
    if (sim_session_run(sc, &ro, &s, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim repro: Table 2: %s\n", err);
        sim_session_free(&s);
        return -1;
    }
    char sub[4096];
    snprintf(sub, sizeof(sub), "%s/%s", x->o->out_dir, sc->name);
    int st = sim_output_write(sub, sc, &ro, &s, err, sizeof(err));
    if (st != 0) {
        fprintf(stderr, "dpm-sim repro: %s\n", err);
    } else if (x->o->plot) {
        st = sim_cli_plot(SIM_PLOT_SCRIPT, sub) < 0 ? -1 : 0;
    }
    x->nt2 = 0;
    x->t2_chi2 = 0.0;
    for (size_t i = 0; i < s.n && st == 0; i++) {
        st = table2_row(x, &s.res[i]);
        x->t2_chi2 += x->t2[i].chi2;
    }
    if (st == 0 && s.n > 0) {
        const sim_tuple_state_t *ts = sim_tuple_state_c(&s.res[0].cfg);
        x->t2_devices = s.res[0].devices;
        x->t2_males = (uint64_t)ts->n[0];
        x->t2_runs = sc->runs;
        x->t2_gap = s.res[0].cfg.items[sim_tuple_item(&s.res[0].cfg, 0, 0, 1)].truth;
        x->t2_dof = (double)s.n * sc->runs;
        double upper = chi2_sf_even(x->t2_chi2, x->t2_dof);
        x->t2_p = fmin(1.0, 2.0 * fmin(upper, 1.0 - upper));
        char col[96];
        snprintf(col, sizeof(col), "chi2 %.1f on %.0f dof: two-sided p", x->t2_chi2, x->t2_dof);
        st = repro_own_cell(x->r, "table2_pipeline", "all configurations and runs", col, NAN,
                            x->t2_p, REPRO_SELF, "p >= 1e-6", x->t2_p >= PIPELINE_P_MIN, -1);
    }
    /* the ratio test can fail: our M_R opt. errors at eps = 10 against the paper's eps = 0.1 */
    const t2_row_t *mine = NULL, *theirs = NULL;
    for (size_t i = 0; i < x->nt2; i++) {
        const t2_row_t *t = &x->t2[i];
        if (t->paper && t->mech == DPM_DISP_MR && strcmp(t->eps_text, "10") == 0) {
            mine = t;
        }
        if (t->paper && t->mech == DPM_DISP_MR && strcmp(t->eps_text, "0.1") == 0) {
            theirs = t;
        }
    }
    if (st == 0 && mine != NULL && theirs != NULL) {
        double p = ratio_p(mine->mean_abs, mine->sd_abs, x->t2_runs, theirs->paper_mean,
                           theirs->paper_sd, 10.0);
        char check[48];
        snprintf(check, sizeof(check), "rejected: p = %.3g < %g", p, RATIO_P_MIN);
        st = repro_own_cell(x->r, "table2_control", "ours at eps=10 vs the paper's eps=0.1",
                            "M_R opt. mean abs err", theirs->paper_mean, mine->mean_abs,
                            REPRO_SELF, check, p < RATIO_P_MIN, -1);
    }
    sim_session_free(&s);
    x->t2_seconds = sim_now() - start;
    say(x, "  table 2: %zu configurations x %u runs, K = %" PRIu64 ", %s mode, %.1f s\n", x->nt2,
        sc->runs, x->t2_devices, x->o->inprocess ? "inprocess" : "exact", x->t2_seconds);
    return st;
}

/* ---- experiments built here: populations of explicit blocks ---------------------------------- */

/* A block of devices with metric `metric` = num / den (TPR). */
static sim_block_t value_block(uint64_t count, uint32_t group, uint32_t num, uint32_t den)
{
    sim_block_t b;
    memset(&b, 0, sizeof(b));
    b.count = count;
    b.group = group;
    b.defined = (uint8_t)(1u << (DPM_METRIC_TPR - 1));
    b.num[DPM_METRIC_TPR - 1] = num;
    b.den[DPM_METRIC_TPR - 1] = den;
    return b;
}

/* A scenario of `ngroups` groups and one tuple campaign (TPR) at eps, for a population of
 * explicit blocks (shares and distributions unused). */
static void block_scenario(sim_scenario_t *sc, const char *name, uint32_t ngroups,
                           dpm_disp_mech_t mech, int paper, const char *eps, uint64_t seed,
                           uint32_t runs, double confidence)
{
    sim_scenario_start(sc, name, runs, seed, confidence, SIM_MODE_INPROCESS);
    sc->ngroups = ngroups;
    for (uint32_t g = 0; g < ngroups; g++) {
        snprintf(sc->group[g].name, sizeof(sc->group[g].name), "g%u", g);
        sc->group[g].share = 1.0 / ngroups;
    }
    sim_campaign_spec_t *c = &sc->campaign[0];
    sc->ncampaigns = 1;
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->id = 1;
    c->mechanism = mech == DPM_DISP_MR ? DPM_MECH_ID_TUPLE_MR : DPM_MECH_ID_TUPLE_ML;
    c->mech = sim_mech_by_id(c->mechanism);
    c->split_paper = paper;
    c->neps = 1;
    (void)dpm_eps_from_decimal(eps, &c->eps[0]);
    snprintf(c->eps_text[0], sizeof(c->eps_text[0]), "%s", eps);
    c->nmetrics = 1;
    c->metrics[0] = DPM_METRIC_TPR;
    c->ngroups = ngroups;
    for (uint32_t g = 0; g < ngroups; g++) {
        c->groups[g] = g;
    }
}

static int prepare(sim_cfg_t *cfg, const sim_scenario_t *sc, const sim_pop_t *pop, unsigned threads)
{
    char err[256];
    if (sim_cfg_init(cfg, sc, 0, 0, err, sizeof(err)) != 0 ||
        sim_cfg_prepare(cfg, pop, threads, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim repro: %s\n", err);
        sim_cfg_release(cfg);
        return -1;
    }
    return 0;
}

/* ---- Figure 4: variance validation (sdk/docs/tuple.md §Figure 4) -------------------------- */

typedef struct {
    const char *label;
    dpm_disp_mech_t mech;
    int paper;
} fig4_config_t;

static const fig4_config_t kFig4[FIG4_CONFIGS] = {
    {"M_R paper split eps1 = eps2 = 0.5 (Fig. 4)", DPM_DISP_MR, 1},
    {"M_L eps1 = 0.25, eps2 = 0.5, k = 2 (SDK tuple_ml, eps 0.5)", DPM_DISP_ML, 0},
    {"M_R SDK split at eps 0.5 (eps1 = ln((1+e^0.5)/2))", DPM_DISP_MR, 0},
};

/* Group G: FIG4_N devices with v from a normal(0, 0.33) truncated to [-1, 1] (rejection, on a
 * seeded stream), metric num / 2^31; group G-bar: FIG4_N devices with v = 0. */
static void fig4_blocks(sim_block_t *blk, double *values)
{
    sim_stream_t s;
    sim_stream_init(&s, sim_stream_key(20220722u, 2u, 0u));
    for (uint32_t i = 0; i < FIG4_N; i++) {
        double v;
        do {
            v = FIG4_SIGMA * sim_stream_normal(&s);
        } while (fabs(v) > 1.0);
        uint32_t num = (uint32_t)nearbyint((1.0 + v) / 2.0 * 2147483648.0);
        blk[i] = value_block(1, 0, num, UINT32_C(1) << 31);
        values[i] = 2.0 * num / 2147483648.0 - 1.0;
    }
    for (uint32_t i = FIG4_N; i < 2 * FIG4_N; i++) {
        blk[i] = value_block(1, 1, 1, 2);
    }
}

/* Empirical MSE of m-hat_G over the first 10, 100, ... runs; the last point's relative
 * standard error from the fourth moment: SE(MSE-hat) / MSE ~ sqrt((m4 / m2^2 - 1) / N). */
static int fig4_config(ctx_t *x, const sim_pop_t *pop, unsigned c, sim_agg_t *aggs)
{
    fig4_row_t *row = &x->fig4[c];
    sim_scenario_t *sc = malloc(sizeof(*sc));
    sim_cfg_t *cfg = malloc(sizeof(*cfg));
    double start = sim_now(), s2 = 0.0, s4 = 0.0;
    int st = sc != NULL && cfg != NULL ? 0 : -1;
    if (st == 0) {
        block_scenario(sc, "fig4", 2, kFig4[c].mech, kFig4[c].paper, "0.5", 20220722u + 2000u + c,
                       x->fig4_runs, 0.95);
        st = prepare(cfg, sc, pop, x->o->threads);
    }
    if (st != 0) {
        free(sc);
        free(cfg);
        return -1;
    }
    const sim_tuple_state_t *ts = sim_tuple_state_c(cfg);
    row->label = kFig4[c].label;
    row->mech = kFig4[c].mech;
    row->paper = kFig4[c].paper;
    (void)dpm_disp_mean_variance(&ts->params, 2.0 * FIG4_N, FIG4_N, ts->nu2[0][0], &row->theory);
    row->eps1 = ts->params.eps1_eff;
    row->eps2 = row->mech == DPM_DISP_MR ? ts->params.eps2_eff
                : row->paper             ? ts->paper.eps2
                                         : cfg->mech.params.tuple.value.lap.eps / 65536.0;
    row->eps_true = cfg->eps_implemented;
    sim_progress_t prog;
    char prefix[112];
    snprintf(prefix, sizeof(prefix), "[figure 4, %u/%d] %s", c + 1, FIG4_CONFIGS, row->label);
    sim_progress_init(&prog, x->o->progress, x->fig4_runs, "runs", prefix);
    sim_farm_opts_t fo = {x->o->threads, NULL, NULL, NULL};
    uint32_t next = 10;
    row->points = 0;
    for (uint32_t first = 0; first < x->fig4_runs && st == 0; first += FIG4_CHUNK) {
        uint32_t n = x->fig4_runs - first < FIG4_CHUNK ? x->fig4_runs - first : FIG4_CHUNK;
        if (sim_farm_runs(cfg, pop, first, n, &fo, aggs, NULL) != DPM_OK) {
            fprintf(stderr, "dpm-sim repro: Figure 4: device farm failed\n");
            st = -1;
            break;
        }
        for (uint32_t r = 0; r < n; r++) {
            double mean = NAN;
            const sim_tuple_agg_t *a = sim_tuple_agg_c(&aggs[r]);
            (void)dpm_disp_group_mean(&ts->params, &a->m[0], 0, ts->n[0], &mean);
            double e = mean - ts->mean[0][0];
            s2 += e * e;
            s4 += e * e * e * e;
            uint32_t done = first + r + 1;
            if ((done == next || done == x->fig4_runs) && row->points < FIG4_MAX_POINTS) {
                row->at[row->points] = done;
                row->empirical[row->points++] = s2 / done;
                next *= 10u;
            }
        }
        sim_progress_add(&prog, n);
    }
    sim_progress_done(&prog);
    double m2 = s2 / x->fig4_runs, m4 = s4 / x->fig4_runs;
    row->se_rel = sqrt(fmax(m4 / (m2 * m2) - 1.0, 0.0) / x->fig4_runs);
    row->tol = x->o->quick ? fmax(FIG4_TOL, FIG4_QUICK_SE * row->se_rel) : FIG4_TOL;
    row->seconds = sim_now() - start;
    x->fig4_mean = ts->mean[0][0];
    x->fig4_nu2 = ts->nu2[0][0];
    sim_cfg_release(cfg);
    free(cfg);
    free(sc);
    say(x, "  figure 4: %-58s %6.1f s\n", row->label, row->seconds);
    return st;
}

static int figure4(ctx_t *x)
{
    double start = sim_now();
    sim_block_t blk[2 * FIG4_N];
    sim_pop_t pop;
    char err[256];
    x->fig4_runs = x->o->quick ? 10000u : 1000000u;
    fig4_blocks(blk, x->fig4_values);
    sim_agg_t *aggs = malloc(FIG4_CHUNK * sizeof(*aggs));
    if (aggs == NULL || sim_pop_from_blocks(&pop, blk, 2 * FIG4_N, 2, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim repro: Figure 4: %s\n", aggs == NULL ? "out of memory" : err);
        free(aggs);
        return -1;
    }
    repro_table(x->r, "fig4_variance", "Figure 4: variance of the group mean, simulated",
                "analytic (Eq. 19/20)",
                "Empirical MSE of m-hat_G over all runs against Eq. 20 / Eq. 19 (the realized "
                "nu^2, the devices' quantized parameters): within 2% (quick mode: or 6 standard "
                "errors).");
    repro_table(x->r, "fig4_convergence", "Figure 4: convergence with the number of runs",
                "analytic (Eq. 19/20)", "Shown for comparison.");
    int st = 0;
    for (unsigned c = 0; c < FIG4_CONFIGS && st == 0; c++) {
        st = fig4_config(x, &pop, c, aggs);
        const fig4_row_t *row = &x->fig4[c];
        for (uint32_t i = 0; st == 0 && i + 1 < row->points; i++) {
            char col[32];
            snprintf(col, sizeof(col), "runs=%u", row->at[i]);
            st = repro_own_cell(x->r, "fig4_convergence", row->label, col, row->theory,
                                row->empirical[i], REPRO_INFO, "info", 0, 6);
        }
        if (st == 0) {
            char col[64], check[48];
            snprintf(col, sizeof(col), "runs=%u: empirical MSE", row->at[row->points - 1]);
            snprintf(check, sizeof(check), "rel <= %.3g", row->tol);
            double emp = row->empirical[row->points - 1];
            st =
                repro_own_cell(x->r, "fig4_variance", row->label, col, row->theory, emp, REPRO_SELF,
                               check, fabs(emp - row->theory) <= row->tol * row->theory, 6);
        }
        if (st == 0 && repro_find_ref(x->r, "fig4_notebook", row->label, "theory") != NULL) {
            st = repro_ref_cell(x->r, "fig4_notebook", row->label, "theory", row->theory);
        }
    }
    sim_pop_free(&pop);
    free(aggs);
    x->fig4_seconds = sim_now() - start;
    return st;
}

/* ---- per-group estimates with 95% CIs (one run) --------------------------------------------- */

static const double kGroupShare[GROUPS_D] = {0.4, 0.3, 0.2, 0.1};
static const double kGroupTpr[GROUPS_D] = {0.88, 0.82, 0.76, 0.70};
static const double kGroupSpread[GROUPS_SUB] = {-0.08, -0.04, 0.0, 0.04, 0.08};

static int groups(ctx_t *x)
{
    double start = sim_now();
    sim_block_t blk[GROUPS_D * GROUPS_SUB];
    uint64_t K = x->o->quick ? 100000u : 1000000u;
    x->groups_devices = K;
    for (uint32_t g = 0; g < GROUPS_D; g++) {
        for (uint32_t j = 0; j < GROUPS_SUB; j++) {
            uint64_t count = (uint64_t)llround((double)K * kGroupShare[g] / GROUPS_SUB);
            uint32_t num = (uint32_t)llround((kGroupTpr[g] + kGroupSpread[j]) * 1e6);
            blk[g * GROUPS_SUB + j] = value_block(count, g, num, 1000000u);
        }
    }
    repro_table(x->r, "groups", "Per-group TPR estimates with 95% CIs (one run, simulation)",
                "simulation truth (the population's mean TPR)",
                "4 groups (shares 0.4, 0.3, 0.2, 0.1; each 5 equal blocks at its mean TPR "
                "+- 0.04, +- 0.08), eps = 1, SDK splits, known group sizes; shown, not counted "
                "(a 95% interval misses 1 time in 20).");
    sim_pop_t pop;
    char err[256];
    if (sim_pop_from_blocks(&pop, blk, GROUPS_D * GROUPS_SUB, GROUPS_D, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim repro: %s\n", err);
        return -1;
    }
    sim_scenario_t *sc = malloc(sizeof(*sc));
    sim_cfg_t *cfg = malloc(sizeof(*cfg));
    sim_agg_t *agg = malloc(sizeof(*agg));
    sim_result_t res;
    int st = sc != NULL && cfg != NULL && agg != NULL ? 0 : -1;
    for (unsigned c = 0; c < 2 && st == 0; c++) {
        groups_row_t *row = &x->groups[c];
        row->mech = c == 0 ? DPM_DISP_MR : DPM_DISP_ML;
        block_scenario(sc, "groups", GROUPS_D, row->mech, 0, "1", 20220722u + 3000u + c, 1, 0.95);
        if (prepare(cfg, sc, &pop, x->o->threads) != 0) {
            st = -1;
            break;
        }
        sim_farm_opts_t fo = {x->o->threads, NULL, NULL, NULL};
        if (sim_result_init(&res, cfg, pop.devices, 1) != 0 ||
            sim_farm_runs(cfg, &pop, 0, 1, &fo, agg, NULL) != DPM_OK) {
            sim_cfg_release(cfg);
            st = -1;
            break;
        }
        sim_result_add_run(&res, 0, agg);
        row->eps_true = cfg->eps_implemented;
        row->covered = 0;
        for (uint32_t g = 0; g < GROUPS_D && st == 0; g++) {
            const sim_item_run_t *it = sim_result_at(&res, 0, g);
            char rl[32], col[64];
            row->n[g] = (double)pop.group_size[g];
            row->truth[g] = cfg->items[g].truth;
            row->est[g] = it->est;
            row->lo[g] = it->lo;
            row->hi[g] = it->hi;
            row->covered += it->lo <= row->truth[g] && row->truth[g] <= it->hi;
            snprintf(rl, sizeof(rl), "group %u", g);
            snprintf(col, sizeof(col), "%s SDK split eps=1: TPR estimate",
                     mech_label(row->mech, 0));
            st = repro_own_cell(x->r, "groups", rl, col, row->truth[g], row->est[g], REPRO_INFO,
                                "info", 0, 4);
        }
        sim_result_free(&res);
        sim_cfg_release(cfg);
    }
    free(sc);
    free(cfg);
    free(agg);
    sim_pop_free(&pop);
    x->groups_seconds = sim_now() - start;
    return st;
}

/* ---- self-checks of the device farm ------------------------------------------------------ */

/* The exact parts of two tuple aggregates (counts and 128-bit sums) are equal. */
static int agg_equal(const sim_agg_t *xa, const sim_agg_t *ya)
{
    const dpm_disp_agg_t *a = &sim_tuple_agg_c(xa)->m[0], *b = &sim_tuple_agg_c(ya)->m[0];
    if (a->total != b->total || a->d != b->d) {
        return 0;
    }
    for (uint32_t g = 0; g < a->d; g++) {
        if (a->count[g] != b->count[g] || a->sum[g].lo != b->sum[g].lo ||
            a->sum[g].hi != b->sum[g].hi) {
            return 0;
        }
    }
    return 1;
}

/* Every device replayed alone (sim_farm_replay) adds up to the run's aggregate. */
static int replay_matches(const sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads,
                          sim_agg_t *run, sim_agg_t *replay)
{
    sim_farm_opts_t fo = {threads, NULL, NULL, NULL};
    if (sim_farm_runs(cfg, pop, 3, 1, &fo, run, NULL) != DPM_OK) {
        return 0;
    }
    sim_agg_init(cfg, replay);
    for (uint64_t i = 0; i < pop->devices; i++) {
        dpm_report_t rep, dec;
        uint8_t buf[DPM_REPORT_MAX_BYTES];
        size_t len = 0;
        if (sim_farm_replay(cfg, pop, 3, i, &rep, buf, &len) != DPM_OK ||
            (len > 0 && (dpm_report_decode(buf, len, &dec) != DPM_OK ||
                         sim_agg_add_report(cfg, replay, &dec) != DPM_OK))) {
            return 0;
        }
    }
    return agg_equal(run, replay);
}

static int threads_agree(const sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads,
                         sim_agg_t *one, sim_agg_t *many)
{
    sim_farm_opts_t f1 = {1, NULL, NULL, NULL}, fn = {threads, NULL, NULL, NULL};
    return sim_farm_runs(cfg, pop, 0, 1, &f1, one, NULL) == DPM_OK &&
           sim_farm_runs(cfg, pop, 0, 1, &fn, many, NULL) == DPM_OK && agg_equal(one, many);
}

static int self_checks(ctx_t *x)
{
    repro_table(x->r, "self_checks", "Simulator self-checks (the device farm)",
                "self-check (the simulator's own guarantees)",
                "1 = holds. Replay: every device's report recomputed alone from its own seeded "
                "stream adds up, count for count and sum for sum, to the run's aggregate. "
                "Threads: the aggregate does not depend on the thread count.");
    sim_scenario_t *sc = malloc(sizeof(*sc));
    sim_cfg_t *cfg = malloc(sizeof(*cfg));
    sim_agg_t *a = malloc(2 * sizeof(*a));
    int st = sc != NULL && cfg != NULL && a != NULL ? 0 : -1;
    for (int size = 0; size < 2 && st == 0; size++) {
        sim_pop_t pop;
        char err[256];
        *sc = *x->t2sc;
        uint64_t K = size == 0 ? SELF_REPLAY_DEVICES : SELF_THREAD_DEVICES;
        if (sim_pop_build(sc, K, &pop, err, sizeof(err)) != 0) {
            fprintf(stderr, "dpm-sim repro: %s\n", err);
            st = -1;
            break;
        }
        for (uint32_t c = 0; c < sc->ncampaigns && c < 4 && st == 0; c++) {
            uint32_t e = 2; /* eps = 1 */
            if (sim_cfg_init(cfg, sc, c, e, err, sizeof(err)) != 0 ||
                sim_cfg_prepare(cfg, &pop, x->o->threads, err, sizeof(err)) != 0) {
                fprintf(stderr, "dpm-sim repro: %s\n", err);
                st = -1;
                break;
            }
            const sim_tuple_state_t *ts = sim_tuple_state_c(cfg);
            char row[80], col[80];
            snprintf(row, sizeof(row), "%s (%s split), eps=%s",
                     mech_label(ts->noise.ml ? DPM_DISP_ML : DPM_DISP_MR, cfg->paper),
                     cfg->paper ? "paper" : "SDK", sc->campaign[c].eps_text[e]);
            int ok;
            if (size == 0) {
                snprintf(col, sizeof(col), "each of %u devices replayed alone = run aggregate",
                         SELF_REPLAY_DEVICES);
                ok = replay_matches(cfg, &pop, x->o->threads, &a[0], &a[1]);
            } else {
                snprintf(col, sizeof(col), "1 thread = %u threads (%u devices)", x->o->threads,
                         SELF_THREAD_DEVICES);
                ok = threads_agree(cfg, &pop, x->o->threads, &a[0], &a[1]);
            }
            st = repro_own_cell(x->r, "self_checks", row, col, 1.0, ok ? 1.0 : 0.0, REPRO_SELF,
                                "holds", ok, 0);
            sim_cfg_release(cfg);
        }
        sim_pop_free(&pop);
    }
    free(sc);
    free(cfg);
    free(a);
    return st;
}

/* ---- CSVs for the plots ------------------------------------------------------------------------
 */

static int write_curves_csv(const ctx_t *x, FILE *f)
{
    /* the Table 2 population: n_M = 25/87 K with TPR 0.891005, the rest 0.717696 */
    double K = (double)x->t2_devices, n0 = (double)x->t2_males, n1 = K - n0;
    double v0 = 2.0 * 0.891005 - 1.0, v1 = 2.0 * 0.717696 - 1.0;
    fprintf(f, "split,mech,eps,mse_lower,mse_upper,mse_population\n");
    for (int s = 0; s < 2; s++) {
        dpm_disp_split_t split = s == 0 ? DPM_DISP_SPLIT_PAPER : DPM_DISP_SPLIT_CORRECT;
        for (int mi = 0; mi < 2; mi++) {
            dpm_disp_mech_t mech = mi == 0 ? DPM_DISP_MR : DPM_DISP_ML;
            double best, worst;
            (void)dpm_disp_nu2_bound(mech, 0, &best);
            (void)dpm_disp_nu2_bound(mech, 1, &worst);
            for (int i = 0; i < CURVE_POINTS; i++) {
                double eps = 0.01 * pow(10.0, i / 20.0), lo = NAN, hi = NAN, pm = NAN;
                dpm_disp_params_t p;
                if (dpm_disp_params_from_eps(&p, mech, split, 2, eps, DPM_FRAC_BITS) == DPM_OK) {
                    (void)dpm_disp_gap_mse(&p, K, n0, n1, best, best, &lo);
                    (void)dpm_disp_gap_mse(&p, K, n0, n1, worst, worst, &hi);
                    (void)dpm_disp_gap_mse(&p, K, n0, n1, v0 * v0, v1 * v1, &pm);
                }
                fprintf(f, "%s,%s,%.6g,%.9g,%.9g,%.9g\n", s == 0 ? "paper" : "sdk",
                        mi == 0 ? "R" : "L", eps, lo / 4.0, hi / 4.0, pm / 4.0);
            }
        }
    }
    return 0;
}

static void csv_num(FILE *f, double v, const char *fmt)
{
    if (isfinite(v)) {
        fprintf(f, fmt, v);
    }
}

static int write_table2_csv(const ctx_t *x, FILE *f)
{
    fprintf(f, "split,mech,eps,eps_true,K,runs,mean_abs_err,sd_abs_err,emp_mse,theory_mse,"
               "paper_mean_abs_err,paper_sd_abs_err,paper_K\n");
    for (size_t i = 0; i < x->nt2; i++) {
        const t2_row_t *t = &x->t2[i];
        fprintf(f, "%s,%s,%s,", t->paper ? "paper" : "sdk", t->mech == DPM_DISP_MR ? "R" : "L",
                t->eps_text);
        csv_num(f, t->eps_true, "%.9g");
        fprintf(f, ",%" PRIu64 ",%u,%.9g,%.9g,%.9g,%.9g,", x->t2_devices, x->t2_runs, t->mean_abs,
                t->sd_abs, t->rmse * t->rmse, t->theory_rmse * t->theory_rmse);
        csv_num(f, t->paper_mean, "%.4f");
        fputc(',', f);
        csv_num(f, t->paper_sd, "%.4f");
        fprintf(f, ",%.0f\n", T2_PAPER_K);
    }
    return 0;
}

static int write_fig4_csv(const ctx_t *x, FILE *f)
{
    fprintf(f, "config,runs,empirical,theory\n");
    for (unsigned c = 0; c < FIG4_CONFIGS; c++) {
        const fig4_row_t *r = &x->fig4[c];
        for (uint32_t i = 0; i < r->points; i++) {
            fprintf(f, "\"%s\",%u,%.9g,%.9g\n", r->label, r->at[i], r->empirical[i], r->theory);
        }
    }
    return 0;
}

static int write_groups_csv(const ctx_t *x, FILE *f)
{
    fprintf(f, "mech,group,n,true,estimate,ci_lo,ci_hi,eps_true,K\n");
    for (unsigned c = 0; c < 2; c++) {
        const groups_row_t *r = &x->groups[c];
        for (uint32_t g = 0; g < GROUPS_D; g++) {
            fprintf(f, "%s,%u,%.0f,%.9g,%.9g,%.9g,%.9g,%.9g,%" PRIu64 "\n",
                    r->mech == DPM_DISP_MR ? "R" : "L", g, r->n[g], r->truth[g], r->est[g],
                    r->lo[g], r->hi[g], r->eps_true, x->groups_devices);
        }
    }
    return 0;
}

/* ---- disparity.md -------------------------------------------------------------------------- */

/* The eps in [lo, hi] where f_a(eps) - f_b(eps) changes sign (bisection; NaN if it does not). */
static double crossover(fig_mech_t ma, int upper_a, fig_mech_t mb, int upper_b, double lo,
                        double hi)
{
    double flo = fig_mse(ma, lo, 2e4, 1e4, 1e4, upper_a) - fig_mse(mb, lo, 2e4, 1e4, 1e4, upper_b);
    double fhi = fig_mse(ma, hi, 2e4, 1e4, 1e4, upper_a) - fig_mse(mb, hi, 2e4, 1e4, 1e4, upper_b);
    if (!(flo * fhi < 0.0)) {
        return NAN;
    }
    for (int i = 0; i < 100; i++) {
        double mid = 0.5 * (lo + hi);
        double fm =
            fig_mse(ma, mid, 2e4, 1e4, 1e4, upper_a) - fig_mse(mb, mid, 2e4, 1e4, 1e4, upper_b);
        if ((fm < 0.0) == (flo < 0.0)) {
            lo = mid;
            flo = fm;
        } else {
            hi = mid;
        }
    }
    return 0.5 * (lo + hi);
}

/* M_L "opt." log density ratio at output (g0, y) between x0 = (g0, v0 = 1) kept and x1 = (g1)
 * flipped, k = 2/3, eps2 = 1, eps1 = ln 3 - 1/2 (sdk/docs/tuple.md §M_L and k): unbounded in
 * |y|. */
static double ml_opt_log_ratio(double y)
{
    const double k = 2.0 / 3.0, eps2 = 1.0, eps1 = log(3.0) - 0.5;
    return eps1 + log(k / 2.0) + eps2 * (fabs(y) / k - fabs(y - 1.0) / 2.0);
}

static void write_errata(FILE *f)
{
    fprintf(f, "## Errata found by the reproduction (reported, not counted as cells)\n\n");
    fprintf(f, "| claim | paper | ours |\n|---|---|---|\n");
    fprintf(f, "| Thm 4.1: M_R with eps1 = eps2 = eps is eps-LDP | eps | eps + ln(2e^eps/(1+e^eps))"
               " (see sdk/docs/tuple.md §M_R and its true privacy level) |\n");
    fprintf(f,
            "| Thm 4.3: M_L \"opt.\" (k != 2) is eps-LDP | Eq. 1 | unbounded: log-ratio at "
            "y = 0, 1, 5, 10, 50 is %.2f, %.2f, %.2f, %.2f, %.2f |\n",
            ml_opt_log_ratio(0), ml_opt_log_ratio(1), ml_opt_log_ratio(5), ml_opt_log_ratio(10),
            ml_opt_log_ratio(50));
    fprintf(f,
            "| Fig. 1: M_R opt. up below M_L opt. up for | 0.31 < eps < 2.6 | %.3f < eps < "
            "%.3f |\n",
            crossover(FIG_R_OPT, 1, FIG_L_OPT, 1, 0.1, 1.0),
            crossover(FIG_R_OPT, 1, FIG_L_OPT, 1, 2.0, 5.0));
    fprintf(f, "| Fig. 1: M_R opt. up vs M_L opt. low crossover | 2.6 | %.3f |\n",
            crossover(FIG_R_OPT, 1, FIG_L_OPT, 0, 2.0, 5.0));
    fprintf(f,
            "| Fig. 1: M_L opt. below M_L k=2 (upper bounds) | whole range | fails for 2 < "
            "eps < %.2f |\n\n",
            crossover(FIG_L_OPT, 1, FIG_L_K2, 1, 2.5, 8.0));
}

static void write_md_table2(FILE *f, const ctx_t *x)
{
    fprintf(f, "## Table 2 in detail (simulation)\n\n");
    fprintf(f,
            "Population of sdk/docs/tuple.md §Synthetic population "
            "(host-sim/scenarios/paper-disparity-table2.scn): K = %" PRIu64
            " devices, %" PRIu64 " male (25/87) with TPR 0.891005, the rest female with TPR "
            "0.717696, so the true ΔTPR is %.6f on the [0, 1] scale. %u runs per configuration, "
            "%s mode. The devices take ε as Q16.16 (0.01 becomes 655/65536). The server "
            "estimates with the true group sizes and the devices' own thresholds and scales.\n\n",
            x->t2_devices, x->t2_males, x->t2_gap, x->t2_runs, x->t2_mode);
    fprintf(f, "**Paper splits are for reproduction only: they do NOT deliver the stated ε** "
               "(column \"true ε\": M_R opt. really spends up to ε + ln 2, M_L opt. with k ≠ 2 "
               "has no finite ε). Only the paper-split rows are compared with the paper (it ran "
               "no SDK split); every row is compared with Eq. 19/20.\n\n");
    fprintf(f, "| ε | mechanism | true ε | ours mean ± sd | paper mean ± sd | ratio p | "
               "RMSE ours / Eq. 19-20 |\n|---|---|---|---|---|---|---|\n");
    for (size_t i = 0; i < x->nt2; i++) {
        const t2_row_t *t = &x->t2[i];
        char paper[48] = "- (not run by the paper)", p[24] = "-", et[24];
        if (t->paper) {
            snprintf(paper, sizeof(paper), "%.4f ± %.4f", t->paper_mean, t->paper_sd);
            snprintf(p, sizeof(p), "%.3g", t->ratio_p_value);
        }
        snprintf(et, sizeof(et), isinf(t->eps_true) ? "none (inf)" : "%.4f", t->eps_true);
        fprintf(f, "| %s | %s (%s split) | %s | %.4g ± %.2g | %s | %s | %.3g / %.3g |\n",
                t->eps_text, mech_label(t->mech, t->paper), t->paper ? "paper" : "SDK", et,
                t->mean_abs, t->sd_abs, paper, p, t->rmse, t->theory_rmse);
    }
    fprintf(f,
            "\nPipeline check: the signed gap errors standardized by Eq. 19/20, summed over all "
            "%zu configurations x %u runs: %.2f against chi-square with %.0f dof, two-sided "
            "p = %.3g. Time: %.1f s. dpm-sim's own outputs and plots of this scenario: "
            "[paper-disparity-table2/](paper-disparity-table2/).\n\n",
            x->nt2, x->t2_runs, x->t2_chi2, x->t2_dof, x->t2_p, x->t2_seconds);
}

static void write_md_fig4(FILE *f, const ctx_t *x)
{
    fprintf(f, "## Figure 4 in detail (simulation, every device through the SDK)\n\n");
    fprintf(f,
            "n_G = n_Ḡ = %u. Group G's values v from a normal(0, %.2f) truncated to [-1, 1] "
            "(seeded), as the devices hold them:",
            FIG4_N, FIG4_SIGMA);
    for (uint32_t i = 0; i < FIG4_N; i++) {
        fprintf(f, " %.4f", x->fig4_values[i]);
    }
    fprintf(f, "; m_G = %.6f, realized ν² = %.6f. Group Ḡ's values 0. %u runs.\n\n", x->fig4_mean,
            x->fig4_nu2, x->fig4_runs);
    fprintf(f, "| configuration | eps1 | eps2 | true ε | theory | last empirical | SE | "
               "tolerance | time |\n|---|---|---|---|---|---|---|---|---|\n");
    for (unsigned c = 0; c < FIG4_CONFIGS; c++) {
        const fig4_row_t *r = &x->fig4[c];
        fprintf(f, "| %s | %.6f | %.6f | %.4f | %.6f | %.6f | %.2f%% | %.2f%% | %.1f s |\n",
                r->label, r->eps1, r->eps2, r->eps_true, r->theory, r->empirical[r->points - 1],
                100.0 * r->se_rel, 100.0 * r->tol, r->seconds);
    }
    fprintf(f, "\n");
}

static void write_md_groups(FILE *f, const ctx_t *x)
{
    fprintf(f, "## Per-group estimates in detail\n\n| group | n | true TPR | M_R estimate [95%% "
               "CI] | M_L k=2 estimate [95%% CI] |\n|---|---|---|---|---|\n");
    const groups_row_t *r = &x->groups[0], *l = &x->groups[1];
    for (uint32_t g = 0; g < GROUPS_D; g++) {
        fprintf(f, "| %u | %.0f | %.4f | %.4f [%.4f, %.4f] | %.4f [%.4f, %.4f] |\n", g, r->n[g],
                r->truth[g], r->est[g], r->lo[g], r->hi[g], l->est[g], l->lo[g], l->hi[g]);
    }
    fprintf(f,
            "\nK = %" PRIu64 ". Intervals covering the truth: M_R %d/4, M_L %d/4 "
            "(informational).\n\n",
            x->groups_devices, r->covered, l->covered);
}

static const char *const kPlotFiles[] = {"disparity_mse_vs_eps.png", "disparity_table2_error.png",
                                         "disparity_fig4_variance.png", "disparity_groups_ci.png"};
#define NPLOTS (sizeof(kPlotFiles) / sizeof(kPlotFiles[0]))

static void write_md(FILE *f, const ctx_t *x)
{
    size_t mp, np, ms, ns;
    repro_count(x->r, REPRO_PAPER, NULL, &mp, &np);
    repro_count(x->r, REPRO_SELF, NULL, &ms, &ns);
    fprintf(f, "# Reproduction: Juarez & Korolova 2022, private disparity measurement\n\n");
    fprintf(f,
            "Generated by `dpm-sim repro%s` (host-sim/sim/repro/repro_disparity.c). References: "
            "host-sim/scenarios/paper-disparity.ref, each table naming its source. Value scale "
            "[-1, 1] unless noted.\n\n",
            x->o->quick ? " --quick" : "");
    if (x->o->quick) {
        fprintf(f, "**QUICK MODE: reduced simulation sizes; not the reproduction.**\n\n");
    }
    fprintf(f,
            "**Matches the paper: %zu of %zu cells** (numbers the paper prints: Table 1, Table 2's "
            "alpha column and its empirical errors). **Self-checks: %zu of %zu hold** (the spec's "
            "derivations, the authors' notebook, Eq. 19/20 against simulation, the planner's "
            "answers against simulation, the simulator's own guarantees).\n\n",
            mp, np, ms, ns);
    repro_write_sections(x->r, f);
    write_md_table2(f, x);
    write_md_fig4(f, x);
    write_md_groups(f, x);
    fprintf(f, "## Plots\n\n");
    if (x->plots != 1) {
        fprintf(f, "Not generated (%s).\n\n", x->plots == 0 ? "skipped" : "plotting failed");
    } else {
        for (size_t i = 0; i < NPLOTS; i++) {
            fprintf(f, "- ![%s](%s)\n", kPlotFiles[i], kPlotFiles[i]);
        }
        fprintf(f, "\n");
    }
    write_errata(f);
}

/* ---- files -------------------------------------------------------------------------------------
 */

typedef int (*writer_t)(const ctx_t *x, FILE *f);

static int write_file(const ctx_t *x, const char *name, writer_t fn)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", x->o->out_dir, name);
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "dpm-sim repro: cannot write %s\n", path);
        return -1;
    }
    int st = fn(x, f);
    if (fclose(f) != 0 || st != 0) {
        fprintf(stderr, "dpm-sim repro: writing %s failed\n", path);
        return -1;
    }
    return 0;
}

static int json_writer(const ctx_t *x, FILE *f)
{
    return repro_write_json(x->r, f);
}

static int md_writer(const ctx_t *x, FILE *f)
{
    write_md(f, x);
    return ferror(f) ? -1 : 0;
}

int repro_disparity(const repro_opts_t *o, repro_t *r, double *seconds)
{
    double start = sim_now();
    ctx_t *x = calloc(1, sizeof(*x));
    if (x == NULL) {
        return -1;
    }
    x->o = o;
    x->r = r;
    r->quick = o->quick;
    int st = repro_load_paper(r, o->data_dir, "disparity");
    x->t2sc = st == 0 ? load(x, "paper-disparity-table2.scn") : NULL;
    st = x->t2sc != NULL ? 0 : -1;
    say(x, "disparity%s: %u threads\n", o->quick ? " --quick" : "", o->threads);
    if (st == 0) {
        double t = sim_now();
        st = table2_alpha(x) | reference_values(x) | figures_1_2(x);
        x->t_analytic = sim_now() - t;
    }
    st = st == 0 ? table1(x) : st;
    st = st == 0 ? table2(x) : st;
    st = st == 0 ? figure4(x) : st;
    st = st == 0 ? groups(x) : st;
    st = st == 0 ? self_checks(x) : st;
    repro_selection_opts_t so = {o->data_dir, o->quick, o->progress, o->threads};
    st = st == 0 ? repro_selection(&so, r) : st;
    st = st == 0 ? write_file(x, "disparity_mse_curves.csv", write_curves_csv) : st;
    st = st == 0 ? write_file(x, "disparity_table2.csv", write_table2_csv) : st;
    st = st == 0 ? write_file(x, "disparity_fig4.csv", write_fig4_csv) : st;
    st = st == 0 ? write_file(x, "disparity_groups.csv", write_groups_csv) : st;
    if (st == 0 && o->plot) {
        double t = sim_now();
        x->plots = sim_cli_plot("host-sim/plot/disparity.py", o->out_dir);
        x->t_plots = sim_now() - t;
        st = x->plots < 0 ? -1 : 0;
    }
    st = st == 0 ? write_file(x, "disparity.json", json_writer) : st;
    st = st == 0 ? write_file(x, "disparity.md", md_writer) : st;
    free(x->t2sc);
    free(x);
    *seconds = sim_now() - start;
    return st;
}
