/* SPDX-License-Identifier: Apache-2.0 */
/* Selection-aware disparities over simulated campaigns (see repro_selection.h). */
#include "sim/repro/repro_selection.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/edges.h"
#include "common/prob.h"
#include "estimate/ci_flags.h"
#include "sim/devices/mech_roc_hist.h"
#include "sim/pop/progress.h"
#include "sim/devices/mechs.h" /* sim_scenario_parse, sim_scenario_load */
#include "sim/devices/selection.h"
#include "sim/run/session.h"

#define ALPHA 1e-6
#define LEVEL 0.95
#define DEMO_DEVICES 200000u /* as make demo runs it (.make/demo.sh) */
#define DEMO_DRAWS 300u
#define DEMO_QUICK_DRAWS 20u

/* A population: its row label, the scenario after its [scenario] line (runs, mode and confidence
 * are set here: the body is the rest of a scenario file, readable as one), and its runs in full
 * and quick mode. None of them was used to build or tune the method. */
typedef struct {
    const char *row;
    const char *body;
    uint32_t runs, quick_runs;
} population_t;

static const population_t kPopulations[] = {
    {"demo groups (4), 50k, sizes estimated",
     "devices = 50000\nseed = 101\nsizes = estimated\n[population]\nexamples = 40\n"
     "[group g18_29]\nshare = 0.4\nscores = binormal(auc=0.90, base_rate=0.30)\n"
     "[group g30_44]\nshare = 0.3\nscores = binormal(auc=0.86, base_rate=0.30)\n"
     "[group g45_64]\nshare = 0.2\nscores = binormal(auc=0.82, base_rate=0.25)\n"
     "[group g65plus]\nshare = 0.1\nscores = binormal(auc=0.78, base_rate=0.20)\n"
     "partition = noniid(concentration=4, auc_sd=0.3)\n"
     "[campaign mr]\nmechanism = tuple_mr\neps = 1\nmetrics = tpr\n"
     "[campaign ml]\nmechanism = tuple_ml\neps = 2\nmetrics = tpr, fpr\n",
     3000, 100},
    {"close groups (4), 50k, sizes estimated",
     "devices = 50000\nseed = 102\nsizes = estimated\n"
     "[group a]\nshare = 0.4\ntpr = beta(16, 4)\n[group b]\nshare = 0.3\ntpr = beta(16.2, 3.8)\n"
     "[group c]\nshare = 0.2\ntpr = beta(8, 2)\n[group d]\nshare = 0.1\ntpr = beta(16.6, 3.4)\n"
     "[campaign close]\nmechanism = tuple_mr\neps = 1\nmetrics = tpr\n",
     3000, 100},
    {"equal groups (3), 20k, sizes known",
     "devices = 20000\nseed = 103\n"
     "[group a]\nshare = 1/3\ntpr = constant(0.75)\n[group b]\nshare = 1/3\ntpr = constant(0.75)\n"
     "[group c]\nshare = 1/3\ntpr = constant(0.75)\n"
     "[campaign equal]\nmechanism = tuple_ml\neps = 8\nmetrics = tpr\n",
     3000, 100},
    {"8 groups, 2 clusters, 200k, nu2 worst",
     "devices = 200000\nseed = 104\nsizes = estimated\nnu2 = worst\n"
     "[group a]\nshare = 0.2\ntpr = beta(18, 2)\n[group b]\nshare = 0.15\ntpr = beta(17.8, 2.2)\n"
     "[group c]\nshare = 0.15\ntpr = constant(0.9)\n[group d]\nshare = 0.1\ntpr = beta(9, 1)\n"
     "[group e]\nshare = 0.1\ntpr = beta(14, 6)\n[group f]\nshare = 0.1\ntpr = constant(0.7)\n"
     "[group g]\nshare = 0.1\ntpr = beta(7, 3)\n[group h]\nshare = 0.1\ntpr = beta(13.6, 6.4)\n"
     "[campaign many]\nmechanism = tuple_mr\neps = 2\nmetrics = tpr\n",
     3000, 60},
    {"unbalanced (5, shares 0.6 .. 0.03), 1M",
     "devices = 1000000\nseed = 105\nsizes = estimated\n"
     "[group a]\nshare = 0.6\nfpr = beta(2, 18)\n[group b]\nshare = 0.2\nfpr = beta(2.2, 17.8)\n"
     "[group c]\nshare = 0.1\nfpr = beta(3, 17)\n[group d]\nshare = 0.07\nfpr = constant(0.1)\n"
     "[group e]\nshare = 0.03\nfpr = beta(2, 14)\n"
     "[campaign unbalanced]\nmechanism = tuple_ml\neps = 0.5\nmetrics = fpr\n",
     3000, 100},
    {"close groups (4) at eps 0.1 and 16, 10M",
     "devices = 10000000\nseed = 108\nsizes = estimated\n"
     "[group a]\nshare = 0.4\ntpr = beta(16, 4)\n[group b]\nshare = 0.3\ntpr = beta(16.2, 3.8)\n"
     "[group c]\nshare = 0.2\ntpr = beta(8, 2)\n[group d]\nshare = 0.1\ntpr = beta(16.6, 3.4)\n"
     "[campaign mr]\nmechanism = tuple_mr\neps = 0.1, 16\nmetrics = tpr\n"
     "[campaign ml]\nmechanism = tuple_ml\neps = 0.1, 16\nmetrics = tpr\n",
     3000, 50},
    {"3 close AUCs (0.80, 0.80, 0.82), 20k",
     "devices = 20000\nseed = 106\n[population]\nexamples = 20\n"
     "[group a]\nshare = 0.4\nscores = binormal(auc=0.80, base_rate=0.3)\n"
     "[group b]\nshare = 0.3\nscores = binormal(auc=0.80, base_rate=0.3)\n"
     "[group c]\nshare = 0.3\nscores = binormal(auc=0.82, base_rate=0.4)\n"
     "[campaign auc]\nmechanism = roc_hist_groups\neps = 4\nbins = 8\n",
     1000, 30},
    {"4 spread AUCs (0.9 .. 0.7), non-iid",
     "devices = 20000\nseed = 107\n[population]\nexamples = 30\n"
     "partition = noniid(concentration=3, auc_sd=0.2)\n"
     "[group a]\nshare = 0.3\nscores = binormal(auc=0.90, base_rate=0.3)\n"
     "[group b]\nshare = 0.3\nscores = binormal(auc=0.85, base_rate=0.5)\n"
     "[group c]\nshare = 0.2\nscores = binormal(auc=0.80, base_rate=0.3)\n"
     "[group d]\nshare = 0.2\nscores = binormal(auc=0.70, base_rate=0.4)\n"
     "[campaign auc]\nmechanism = roc_hist_groups\neps = 2\nbins = 10\n",
     1000, 30},
};
#define NPOP (sizeof(kPopulations) / sizeof(kPopulations[0]))

static int cell(repro_t *r, const char *table, const char *row, const char *col, double ref,
                double ours, repro_kind_t kind, const char *check, int match, int digits)
{
    return repro_own_cell(r, table, row, col, ref, ours, kind, check, match, digits);
}

/* Two-sided binomial p of k successes in n against LEVEL (twice the smaller tail). */
static double two_sided_p(uint32_t k, uint32_t n)
{
    double lower = prob_binom_cdf(k, n, LEVEL);
    double upper = 1.0 - (k > 0 ? prob_binom_cdf(k - 1u, n, LEVEL) : 0.0);
    return fmin(1.0, 2.0 * fmin(lower, upper));
}

/* One family (a metric of a configuration) as a row of both tables. */
static int family_cells(repro_t *r, const char *row, const sim_selection_t *x)
{
    sim_selection_summary_t m;
    sim_selection_summarize(x, &m);
    double p_sim2 = two_sided_p(x->simultaneous, x->runs);
    double p_big = prob_binom_cdf(x->largest, x->runs, LEVEL);
    char check[48];
    snprintf(check, sizeof(check), "binomial p = %.2g >= 1e-6", p_sim2);
    int st = cell(r, "selection_coverage", row, "simultaneous: every true gap covered", LEVEL,
                  m.simultaneous, REPRO_SELF, check, p_sim2 >= ALPHA && m.runs > 0, 4);
    snprintf(check, sizeof(check), "one-sided p = %.2g >= 1e-6", p_big);
    st = st != 0 ? st
                 : cell(r, "selection_coverage", row, "largest |gap|: interval covers it", LEVEL,
                        m.largest, REPRO_SELF, check, p_big >= ALPHA && m.runs > 0, 4);
    st = st != 0
             ? st
             : cell(r, "selection_coverage", row, "runs", NAN, m.runs, REPRO_INFO, "info", 0, 0);
    st = st != 0 ? st
                 : cell(r, "selection_coverage", row, "runs without every pair", NAN, m.undefined,
                        REPRO_INFO, "info", 0, 0);
    const char *col[7] = {"old: pointwise read together",
                          "old: max_disparity interval covers its pair",
                          "largest estimate is the true largest pair",
                          "overstatement of the largest (mean)",
                          "stability (mean)",
                          "two runs name the same pair",
                          "largest's interval width (mean)"};
    const double val[7] = {m.pointwise_all, m.chosen_pointwise, m.right_pair, m.overstatement,
                           m.stability,     m.rerun_same_pair,  m.width};
    const double ref[7] = {LEVEL, LEVEL, NAN, NAN, NAN, NAN, NAN};
    for (int i = 0; i < 7 && st == 0; i++) {
        st = cell(r, "selection_old", row, col[i], ref[i], val[i], REPRO_INFO, "info", 0, 4);
    }
    return st;
}

static int population(const repro_selection_opts_t *o, repro_t *r, const population_t *p)
{
    uint32_t runs = o->quick ? p->quick_runs : p->runs;
    size_t cap = strlen(p->body) + 128;
    char *text = malloc(cap);
    sim_scenario_t *sc = malloc(sizeof(*sc));
    char err[512];
    int st = text != NULL && sc != NULL ? 0 : -1;
    if (st == 0) {
        int n = snprintf(text, cap,
                         "[scenario]\nname = selection\nruns = %u\nmode = exact\n"
                         "confidence = %g\n%s",
                         runs, LEVEL, p->body);
        st = sim_scenario_parse(text, (size_t)n, p->row, sc, err, sizeof(err));
    }
    sim_session_t s;
    memset(&s, 0, sizeof(s));
    if (st == 0) {
        st = repro_session_exact(sc, o->threads, o->progress, &s, err, sizeof(err));
    }
    if (st != 0) {
        fprintf(stderr, "dpm-sim repro: selection: %s\n", text == NULL ? "out of memory" : err);
    }
    for (size_t i = 0; i < s.n && st == 0; i++) {
        const sim_result_t *res = &s.res[i];
        for (uint32_t f = 0; st == 0 && sim_selection_of(res, f) != NULL; f++) {
            const sim_selection_ext_t *x = res->ext;
            char row[64];
            snprintf(row, sizeof(row), "%s: %s eps=%s %s", p->row, res->cfg.m->name,
                     res->cfg.spec->eps_text[res->cfg.eps_index], x->name[f]);
            st = family_cells(r, row, sim_selection_of(res, f));
        }
    }
    printf("  selection: %-44s %5u runs %6.1f s\n", p->row, runs, s.seconds);
    fflush(stdout);
    sim_session_free(&s);
    free(sc);
    free(text);
    return st;
}

/* ---- the demo's headline AUC ------------------------------------------------------------- */

/* demo.scn reduced to its roc_hist campaign, `bins` bins (0: as shipped), DEMO_DEVICES, one
 * exact-mode run. NULL with a message on stderr. */
static sim_scenario_t *demo_auc_scenario(const char *data_dir, uint32_t bins)
{
    char path[4096], err[512];
    sim_scenario_t *sc = malloc(sizeof(*sc));
    snprintf(path, sizeof(path), "%s/demo.scn", data_dir);
    int st = sc != NULL && sim_scenario_load(path, sc, err, sizeof(err)) == 0 ? 0 : -1;
    uint32_t k = 0;
    while (st == 0 && k < sc->ncampaigns && sc->campaign[k].mechanism != DPM_MECH_ID_ROC_HIST) {
        k++;
    }
    if (st == 0 && k == sc->ncampaigns) {
        snprintf(err, sizeof(err), "%.400s: no roc_hist campaign", path);
        st = -1;
    }
    if (st == 0 && bins != 0) {
        char text[16];
        snprintf(text, sizeof(text), "%u", bins);
        st = edges_parse_bins(text, sc->campaign[k].edges, &sc->campaign[k].nedges, err,
                              sizeof(err));
    }
    if (st != 0) {
        fprintf(stderr, "dpm-sim repro: demo AUC: %s\n", sc == NULL ? "out of memory" : err);
        free(sc);
        return NULL;
    }
    sc->campaign[0] = sc->campaign[k];
    sc->ncampaigns = 1;
    sc->ndevices = 1;
    sc->devices[0] = DEMO_DEVICES;
    sc->runs = 1;
    sc->mode = SIM_MODE_EXACT;
    return sc;
}

int repro_session_exact(const sim_scenario_t *sc, unsigned threads, int progress, sim_session_t *s,
                        char *err, size_t errcap)
{
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = SIM_MODE_EXACT;
    ro.threads = threads;
    ro.progress = progress;
    ro.quiet = 1;
    return sim_session_run(sc, &ro, s, err, errcap);
}

int repro_demo_auc(const char *data_dir, uint32_t bins, uint32_t draws, unsigned threads,
                   repro_demo_auc_t *out)
{
    sim_scenario_t *sc = demo_auc_scenario(data_dir, bins);
    memset(out, 0, sizeof(*out));
    int st = sc != NULL ? 0 : -1;
    for (uint32_t d = 0; d < draws && st == 0; d++) {
        sc->population_seed = 1000u + d; /* new examples */
        sc->seed = 5000u + d;            /* new noise */
        sim_session_t s;
        char err[512];
        st = repro_session_exact(sc, threads, 0, &s, err, sizeof(err));
        const sim_roc_ext_t *x = st == 0 ? s.res[0].ext : NULL;
        if (x == NULL || !x->have_run0) {
            fprintf(stderr, "dpm-sim repro: demo AUC: %s\n", st != 0 ? err : "no estimate");
            st = -1;
        } else {
            const dpm_roc_estimate_t *e = &x->run0;
            double m = sim_roc_state_c(&s.res[0].cfg)->auc_model;
            out->headline += e->unbinned_ci_total_lo <= m && m <= e->unbinned_ci_total_hi;
            out->headline_flagged += e->unbinned_total_flags != 0;
            out->headline_no_claim += (e->unbinned_total_flags & DPM_CI_NO_CLAIM) != 0;
            out->headline_flags |= e->unbinned_total_flags;
            out->old_headline += e->ci_total_lo <= m && m <= e->ci_total_hi;
            out->n++;
        }
        sim_session_free(&s);
    }
    free(sc);
    return st;
}

int repro_demo_auc_holds(const repro_demo_auc_t *t, double *p)
{
    int nominal = t->headline_flagged == 0;
    *p = nominal ? two_sided_p(t->headline, t->n) : prob_binom_cdf(t->headline, t->n, LEVEL);
    return t->n > 0 && t->headline_no_claim == 0 && *p >= ALPHA;
}

static int demo_auc_cells(const repro_selection_opts_t *o, repro_t *r)
{
    uint32_t draws = o->quick ? DEMO_QUICK_DRAWS : DEMO_DRAWS;
    repro_demo_auc_t now, ten;
    double start = sim_now();
    if (repro_demo_auc(o->data_dir, 0, draws, o->threads, &now) != 0 ||
        repro_demo_auc(o->data_dir, 10, draws, o->threads, &ten) != 0) {
        return -1;
    }
    double cov = now.headline / (double)now.n, p = 1.0;
    int holds = repro_demo_auc_holds(&now, &p);
    char check[64], row[64];
    snprintf(check, sizeof(check), "%s p = %.2g >= 1e-6%s",
             now.headline_flagged ? "one-sided" : "binomial", p,
             now.headline_flagged ? " (flagged: at least)" : "");
    snprintf(row, sizeof(row), "demo.scn, %u new populations of %u devices", now.n, DEMO_DEVICES);
    int st = cell(r, "demo_auc", row, "headline: unbinned AUC's interval covers", LEVEL, cov,
                  REPRO_SELF, check, holds, 4);
    st = st != 0 ? st
                 : cell(r, "demo_auc", row, "old headline: binned AUC's interval covers", LEVEL,
                        now.old_headline / (double)now.n, REPRO_INFO, "info", 0, 4);
    st = st != 0 ? st
                 : cell(r, "demo_auc", row, "unbinned at 10 bins (the demo before) covers", LEVEL,
                        ten.headline / (double)ten.n, REPRO_INFO, "info", 0, 4);
    printf("  selection: %-44s %5u runs %6.1f s\n", "demo headline AUC (20 and 10 bins)", 2 * draws,
           sim_now() - start);
    return st;
}

int repro_selection(const repro_selection_opts_t *o, repro_t *r)
{
    repro_table(r, "selection_coverage",
                "Selection-aware disparities: every gap at once, and the largest gap",
                "simulation truth (the population's own gaps)",
                "Exact-mode runs of populations never used to build the method (rows: population, "
                "mechanism, metric). Simultaneous intervals (max-|t|, estimate/pairwise.h) hold "
                "every true gap at once: two-sided binomial p >= 1e-6 against 0.95. The interval "
                "for the largest true |gap| is conservative by construction: one-sided p >= 1e-6 "
                "(not below 0.95). Confidence 0.95. The populations: kPopulations in "
                "host-sim/sim/repro/repro_selection.c (scenario text).");
    repro_table(r, "selection_old", "What the old output did on the same runs (shown, not counted)",
                "simulation truth (the population's own gaps)",
                "The pointwise 95% intervals read together; the removed max_disparity (the pair "
                "with the largest estimate, with its own pointwise interval, against its own true "
                "gap); how often that pair is the truly largest, and by how much its |estimate| "
                "overstates the largest true |gap| (metric or AUC scale); the bootstrap stability "
                "beside how often two independent runs name the same pair (what it estimates), "
                "and the width of the new interval for the largest.");
    repro_table(r, "demo_auc", "make demo's headline AUC against the model's AUC",
                "simulation truth (the model's AUC)",
                "The unbinned AUC and its interval for the model's AUC (auc_unbinned_ci_total, "
                ".make/demo_report.py's headline) over new populations of "
                "host-sim/scenarios/demo.scn (its roc_hist campaign, 200,000 devices, one "
                "exact-mode run each), checked at its claim: two-sided binomial p >= 1e-6 "
                "against 0.95 unflagged, one-sided (not below) where flagged 'at least' "
                "(estimate/ci_flags.h). Shown: the old headline (the binned AUC's noise + "
                "sampling interval) and the same unbinned interval at 10 bins.");
    int st = 0;
    for (size_t i = 0; i < NPOP && st == 0; i++) {
        st = population(o, r, &kPopulations[i]);
    }
    return st == 0 ? demo_auc_cells(o, r) : st;
}
