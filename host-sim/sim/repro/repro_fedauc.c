/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim repro fedauc: Sun et al.'s Tables 5, 1, 7 and 2 on synthetic Criteo-sized data (see
 * repro_fedauc.h). */
#include "sim/repro/repro_fedauc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/mech.h"
#include "dpm/expert/fedauc.h"
#include "estimate/fedauc.h"
#include "sim/pop/progress.h"
#include "sim/repro/repro_auc_data.h"
#include "sim/repro/repro_fedauc_explain.h"
#include "sim/pop/sim_rng.h"
#include "common/stream.h"

#define M_POS 117317u
#define M_NEG 341090u
#define RUNS 100u
#define QUICK_RUNS 20u
#define TOLERANCE 0.20 /* sdk/docs/fedauc.md §Acceptance */
#define Q16 65536.0
#define NEPOCHS 3u

static const double kAuc[NEPOCHS] = {0.749383, 0.766477, 0.770219};
static const double kEpsRR[] = {0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 10};
static const double kEpsLap[] = {1, 2, 4, 8};
#define NEPS_RR (sizeof(kEpsRR) / sizeof(kEpsRR[0]))
#define NEPS_LAP 4u

typedef repro_fa_client_t client_t;

typedef struct {
    const auc_data_t *d;
    const uint32_t *r2;
    const dpm_fa_ranking_t *mom;
    uint64_t m, p;
    uint32_t runs;
    double auc; /* the examples' exact AUC (the delta method's c) */
} data_t;

/* The cells, and the same cells with the paper's mechanism and their analytic account. */
typedef struct {
    repro_t *r;
    fa_cells_t explain;
} ctx_t;

/* A Laplace cell's standard deviations over the runs: ours (the SDK's discrete noise) and the
 * paper's mechanism (continuous Laplace on the same uniforms), with the analytic terms. */
typedef struct {
    repro_moments_t ours, cont;
    fa_term_t terms[2]; /* localP noise, localSum noise */
} lap_out_t;

/* K clients: IID (a uniformly random order, then equal contiguous shares) or non-IID (score
 * order, then equal contiguous shares). */
static int partition(const data_t *dt, uint32_t k, int noniid, uint64_t seed, client_t *c)
{
    uint32_t m = (uint32_t)dt->m;
    uint32_t *idx = malloc(m * sizeof(uint32_t));
    if (idx == NULL) {
        return -1;
    }
    if (noniid) { /* ascending rank: bucket the doubled ranks (< 2 M) */
        uint32_t *cnt = calloc(2u * m + 1u, sizeof(uint32_t));
        if (cnt == NULL) {
            free(idx);
            return -1;
        }
        for (uint32_t i = 0; i < m; i++) {
            cnt[dt->r2[i] + 1u]++;
        }
        for (uint32_t v = 1; v <= 2u * m; v++) {
            cnt[v] += cnt[v - 1];
        }
        for (uint32_t i = 0; i < m; i++) {
            idx[cnt[dt->r2[i]]++] = i;
        }
        free(cnt);
    } else {
        sim_rng_t rng;
        sim_rng_init(&rng, seed);
        for (uint32_t i = 0; i < m; i++) {
            idx[i] = i;
        }
        for (uint32_t i = m - 1; i > 0; i--) {
            uint32_t j = (uint32_t)(sim_rng_u64(&rng) % (i + 1u));
            uint32_t tmp = idx[i];
            idx[i] = idx[j];
            idx[j] = tmp;
        }
    }
    for (uint32_t v = 0; v < k; v++) {
        uint32_t a = (uint32_t)((uint64_t)m * v / k), b = (uint32_t)((uint64_t)m * (v + 1) / k);
        client_t *cl = &c[v];
        memset(cl, 0, sizeof(*cl));
        cl->n = b - a;
        for (uint32_t i = a; i < b; i++) {
            uint32_t e = idx[i], r = dt->r2[e];
            cl->p += dt->d->label[e];
            cl->sum2 += dt->d->label[e] ? r : 0u;
            cl->sum_rank2 += r;
            cl->max_rank2 = r > cl->max_rank2 ? r : cl->max_rank2;
        }
        for (uint32_t i = a; i < b; i++) {
            uint32_t e = idx[i];
            int64_t dev = (int64_t)((uint64_t)cl->n * dt->r2[e]) - (int64_t)cl->sum_rank2;
            uint64_t ad = dev < 0 ? (uint64_t)-dev : (uint64_t)dev;
            cl->maxdev = ad > cl->maxdev ? ad : cl->maxdev;
            cl->t += dt->d->label[e] ? dev : 0;
        }
    }
    free(idx);
    return 0;
}

static int mech_of(dpm_mech_t *m, dpm_mech_id_t id, dpm_fedauc_variant_t v, double eps)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 2200u;
    c.mechanism = id;
    c.eps = DPM_EPS_Q16((dpm_eps_t)llround(eps * Q16));
    c.budget = c.eps;
    c.period_seconds = 86400u;
    c.fedauc_variant = (uint32_t)v;
    c.fedauc_p_share_q16 = v == DPM_FEDAUC_ADAPTIVE || v == DPM_FEDAUC_VARIANT_NONE ? 0u : 32768u;
    c.fedauc_score_bits = 31;
    const char *why = NULL;
    if (dpm_mech_init(m, &c, &why) != DPM_OK) {
        fprintf(stderr, "dpm-sim repro: fedauc: campaign refused: %s\n", why ? why : "?");
        return -1;
    }
    return 0;
}

/* One discrete Laplace draw of scale t (Pr[z] proportional to exp(-|z| / t)): the difference of
 * two geometrics Pr[g] = (1 - rho) rho^g, rho = exp(-1/t), each by inversion floor(-t log U)
 * (sim_rng_dlap_sum draws sums through gamma variates, slow for one term); and, from the same two
 * uniforms with the floors dropped, the paper's continuous Laplace of scale t: ours and the
 * paper's mechanism then differ by the rounding only, not by sampling. */
static void lap_pair(sim_rng_t *rng, double t, int64_t *disc, double *cont)
{
    double a = -t * log(sim_rng_unit(rng)), b = -t * log(sim_rng_unit(rng));
    *disc = (int64_t)floor(a) - (int64_t)floor(b);
    *cont = a - b;
}

/* The sd over the runs of a Laplace variant's estimate (accurate: Table 2's setting, no noise on
 * localP and the whole eps on the sum, REPRODUCTION ONLY), with the SDK's discrete noise and with
 * the paper's continuous Laplace on the same uniforms. Each client's body (sensitivity, split) is
 * made once; the runs redraw its noise. */
static int lap_runs(const data_t *dt, const client_t *c, uint32_t k, dpm_fedauc_variant_t v,
                    double eps, int accurate, uint64_t key, lap_out_t *out)
{
    dpm_mech_t mech;
    dpm_fa_params_t par;
    if (mech_of(&mech, DPM_MECH_ID_FEDAUC_LAP, v, eps) != 0 ||
        dpm_fa_params_from_mech(&par, &mech) != DPM_OK) {
        return -1;
    }
    dpm_fedauc_report_t *body = malloc(k * sizeof(*body));
    double *ts = malloc(k * sizeof(double)), *tp = malloc(k * sizeof(double));
    double *cs = malloc(k * sizeof(double)), *cp = malloc(k * sizeof(double));
    int st = body != NULL && ts != NULL && tp != NULL && cs != NULL && cp != NULL ? 0 : -1;
    sim_rng_t rng;
    sim_rng_init(&rng, key);
    dpm_eps_t e = mech.params.fedauc.eps_implemented;
    int naive = v == DPM_FEDAUC_LOCAL || v == DPM_FEDAUC_GLOBAL;
    /* first order (sdk/docs/fedauc.md §Delta method): dAUC = (dS - c dP) / (P N), S the rank sum
     * (half the doubled) */
    double pn = (double)dt->p * (double)(dt->m - dt->p);
    double cc = (double)dt->p - 0.5 + dt->auc * ((double)dt->m - 2.0 * (double)dt->p);
    for (uint32_t i = 0; i < k && st == 0; i++) {
        sim_fa_lap_body(&mech.params.fedauc, dt->m, &c[i], &rng, &body[i]);
        uint64_t sens = body[i].sensitivity;
        tp[i] = Q16 / body[i].eps_p;
        ts[i] = accurate    ? (v == DPM_FEDAUC_LOCAL ? c[i].max_rank2 : 2.0 * (dt->m - 1)) / eps
                : sens == 0 ? 0.0
                            : (double)sens * Q16 / (double)(e - body[i].eps_p);
        double n = naive || accurate ? 1.0 : (double)c[i].n; /* t and S p enter divided by n */
        cs[i] = 1.0 / (2.0 * n * pn);
        cp[i] = accurate ? 0.0
                : naive  ? -cc / pn
                         : ((double)c[i].sum_rank2 / (2.0 * c[i].n) - cc) / pn;
    }
    if (st == 0 && (fa_term_of(cp, accurate ? cs : tp, accurate ? 0 : k, &out->terms[0]) != 0 ||
                    fa_term_of(cs, ts, k, &out->terms[1]) != 0)) {
        st = -1;
    }
    memset(&out->ours, 0, sizeof(out->ours));
    memset(&out->cont, 0, sizeof(out->cont));
    for (uint32_t run = 0; run < dt->runs && st == 0; run++) {
        if (accurate) {
            long double s2 = 0, s2c = 0;
            for (uint32_t i = 0; i < k; i++) {
                int64_t z;
                double zc;
                lap_pair(&rng, ts[i], &z, &zc);
                s2 += (long double)c[i].sum2 + (long double)z;
                s2c += (long double)c[i].sum2 + zc;
            }
            repro_moments_add(&out->ours,
                    dpm_fa_auc_from_sums((double)(s2 / 2.0L), (double)dt->p, (double)dt->m));
            repro_moments_add(&out->cont,
                    dpm_fa_auc_from_sums((double)(s2c / 2.0L), (double)dt->p, (double)dt->m));
            continue;
        }
        /* the estimator's point estimate, summed directly; run 0 also through dpm_fa_agg_add
         * and dpm_fa_estimate, which must agree (the estimator's variance terms cost exp()
         * per client, too slow for every run) */
        dpm_fa_agg_t a;
        dpm_fa_agg_init(&a);
        long double s2 = 0, p = 0, s2c = 0, pc = 0;
        for (uint32_t i = 0; i < k && st == 0; i++) {
            dpm_fedauc_report_t *b = &body[i];
            int64_t zp, zs = 0;
            double zpc, zsc = 0.0;
            lap_pair(&rng, tp[i], &zp, &zpc);
            if (ts[i] > 0.0) {
                lap_pair(&rng, ts[i], &zs, &zsc);
            }
            b->local_p = (int64_t)c[i].p + zp;
            double lpc = (double)c[i].p + zpc;
            int64_t sum = (naive ? (int64_t)c[i].sum2 : c[i].t) + zs;
            double sumc = (naive ? (double)c[i].sum2 : (double)c[i].t) + zsc;
            if (naive) {
                b->local_sum2 = sum;
                s2 += sum;
                s2c += sumc;
            } else {
                b->t = sum;
                s2 += ((long double)sum + (long double)b->sum_rank2 * b->local_p) / b->n;
                s2c += ((long double)sumc + (long double)b->sum_rank2 * lpc) / b->n;
            }
            p += b->local_p;
            pc += lpc;
            if (run == 0) {
                st = dpm_fa_agg_add(&a, &par, b) == DPM_OK ? 0 : -1;
            }
        }
        double auc = dpm_fa_auc_from_sums((double)(s2 / 2.0L), (double)p, (double)dt->m);
        dpm_fa_estimate_t est;
        if (st == 0 && run == 0 &&
            (dpm_fa_estimate(&par, &a, dt->mom, 0.95, &est) != DPM_OK ||
             !(fabs(est.auc_raw - auc) <= 1e-9))) {
            fprintf(stderr, "dpm-sim repro: fedauc: the direct sum disagrees with the estimator\n");
            st = -1;
        }
        if (st == 0) {
            repro_moments_add(&out->ours, auc);
            repro_moments_add(&out->cont,
                    dpm_fa_auc_from_sums((double)(s2c / 2.0L), (double)pc, (double)dt->m));
        }
    }
    free(body);
    free(ts);
    free(tp);
    free(cs);
    free(cp);
    return st;
}

/* fedauc_rr: every label flipped with the SDK's implemented probability (ours), and with the
 * paper's rho = 1 / (1 + e^eps) in double on the same uniforms (the paper's mechanism), then the
 * estimate of each. */
static int rr_runs(const data_t *dt, double eps, uint64_t key, repro_moments_t *ours, repro_moments_t *cont)
{
    dpm_mech_t mech;
    dpm_fa_params_t par, parc;
    if (mech_of(&mech, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, eps) != 0 ||
        dpm_fa_params_from_mech(&par, &mech) != DPM_OK) {
        return -1;
    }
    parc = par;
    parc.rho = 1.0 / (1.0 + exp(eps));
    uint64_t below = (uint64_t)llround(par.rho * 4294967296.0); /* flip iff U32 < below */
    double below_c = parc.rho * 4294967296.0;
    sim_rng_t rng;
    sim_rng_init(&rng, key);
    memset(ours, 0, sizeof(*ours));
    memset(cont, 0, sizeof(*cont));
    for (uint32_t run = 0; run < dt->runs; run++) {
        uint64_t s2 = 0, p = 0, s2c = 0, pc = 0;
        for (uint64_t i = 0; i < dt->m; i += 2) { /* two 32-bit uniforms per word */
            uint64_t w = sim_rng_u64(&rng);
            for (uint64_t j = i; j < i + 2 && j < dt->m; j++, w >>= 32) {
                uint64_t u = w & 0xFFFFFFFFu;
                uint64_t y = dt->d->label[j] ^ (uint64_t)(u < below);
                uint64_t yc = dt->d->label[j] ^ (uint64_t)((double)u < below_c);
                p += y;
                s2 += y * dt->r2[j];
                pc += yc;
                s2c += yc * dt->r2[j];
            }
        }
        for (int which = 0; which < 2; which++) {
            dpm_fa_agg_t a;
            dpm_fa_agg_init(&a);
            a.reports = 1;
            a.examples = dt->m;
            a.total = (uint32_t)dt->m;
            a.sum2_int = which ? s2c : s2;
            a.p = which ? pc : p;
            dpm_fa_estimate_t e;
            if (dpm_fa_estimate(which ? &parc : &par, &a, dt->mom, 0.95, &e) != DPM_OK) {
                return -1;
            }
            repro_moments_add(which ? cont : ours, e.auc_raw);
        }
    }
    return 0;
}

/* "table1" -> "table1_paper_mech": the same cell with the paper's mechanism (info). */
static void mech_table_name(char *buf, size_t cap, const char *table)
{
    snprintf(buf, cap, "%.16s_paper_mech", table);
}

/* A compared cell: ours (SDK) counted against the printed sd, the paper's mechanism beside it in
 * the table's _paper_mech twin (info, never counted), and both kept for the explanation. */
static int paper_cell(ctx_t *x, fa_cell_t *fc)
{
    repro_t *r = x->r;
    const repro_ref_t *f = repro_find_ref(r, fc->table, fc->row, fc->col);
    if (f == NULL) {
        fprintf(stderr, "dpm-sim repro: fedauc: no reference [%s] [%s] [%s]\n", fc->table, fc->row,
                fc->col);
        return -1;
    }
    fc->paper = f->value;
    int st = r->quick /* 20 runs: an sd too rough for +-20% */
                 ? repro_own_cell(r, fc->table, fc->row, fc->col, f->value, fc->ours, REPRO_INFO,
                                  "info (--quick: 20 runs, not counted)", 0, -1)
                 : repro_own_cell(
                       r, fc->table, fc->row, fc->col, f->value, fc->ours, REPRO_PAPER,
                       "sd within +-20% of the printed sd",
                       isfinite(fc->ours) && fabs(fc->ours / f->value - 1.0) <= TOLERANCE, -1);
    char twin[48];
    mech_table_name(twin, sizeof(twin), fc->table);
    int in = isfinite(fc->cont) && fabs(fc->cont / f->value - 1.0) <= TOLERANCE;
    st |= st == 0 ? repro_own_cell(r, twin, fc->row, fc->col, f->value, fc->cont, REPRO_INFO,
                                   in ? "info: paper's mechanism, within +-20%"
                                      : "info: paper's mechanism, outside +-20%",
                                   0, -1)
                  : 0;
    if (st == 0) { /* the printed text, as in the counted table */
        repro_cell_t *c = &r->cells[r->ncells - 1];
        snprintf(c->ref_text, sizeof(c->ref_text), "%s", f->text);
    }
    return st | (st == 0 ? fa_cells_add(&x->explain, fc) : 0);
}

/* A Laplace cell of lap_runs' output. */
static int lap_cell(ctx_t *x, const char *table, const char *row, const char *col,
                    const lap_out_t *lo)
{
    fa_cell_t fc;
    memset(&fc, 0, sizeof(fc));
    snprintf(fc.table, sizeof(fc.table), "%s", table);
    snprintf(fc.row, sizeof(fc.row), "%s", row);
    snprintf(fc.col, sizeof(fc.col), "%s", col);
    fc.ours = repro_moments_sd(&lo->ours);
    fc.cont = repro_moments_sd(&lo->cont);
    fc.laplace = 1;
    fc.terms[0] = lo->terms[0];
    fc.terms[1] = lo->terms[1];
    fc.rr_sd = fc.epochs[0] = fc.epochs[1] = fc.epochs[2] = NAN;
    return paper_cell(x, &fc);
}

/* An RR cell: its analytic sd (sdk/docs/fedauc.md §Delta method, the paper's rho) and, for Table 5,
 * the paper's three epochs at this eps. */
static int rr_cell(ctx_t *x, const data_t *dt, const char *table, const char *row, const char *col,
                   double eps, const repro_moments_t *ours, const repro_moments_t *cont)
{
    fa_cell_t fc;
    memset(&fc, 0, sizeof(fc));
    snprintf(fc.table, sizeof(fc.table), "%s", table);
    snprintf(fc.row, sizeof(fc.row), "%s", row);
    snprintf(fc.col, sizeof(fc.col), "%s", col);
    fc.ours = repro_moments_sd(ours);
    fc.cont = repro_moments_sd(cont);
    fc.rr_sd = dpm_fa_sd_rr((double)dt->m, (double)dt->p, dt->auc, 1.0 / (1.0 + exp(eps)));
    for (int ep = 0; ep < 3; ep++) {
        char ecol[16];
        snprintf(ecol, sizeof(ecol), "E%d sd", ep + 1);
        const repro_ref_t *f =
            strcmp(table, "table5") == 0 ? repro_find_ref(x->r, table, row, ecol) : NULL;
        fc.epochs[ep] = f != NULL ? f->value : NAN;
    }
    return paper_cell(x, &fc);
}

typedef struct {
    const char *name;
    dpm_fedauc_variant_t v;
    int noniid;
} method_t;

static const method_t kMethods[] = {
    {"GlobalLaplace", DPM_FEDAUC_GLOBAL, 0},       {"LocalLaplace IID", DPM_FEDAUC_LOCAL, 0},
    {"LocalLaplace non-IID", DPM_FEDAUC_LOCAL, 1}, {"adaptive IID", DPM_FEDAUC_ADAPTIVE, 0},
    {"adaptive non-IID", DPM_FEDAUC_ADAPTIVE, 1},
};
#define NMETHODS (sizeof(kMethods) / sizeof(kMethods[0]))

/* One Laplace table: its K columns (those with include[] set), its methods, eps 1, 2, 4, 8. */
static int lap_table(ctx_t *x, const data_t *dt, const char *table, const uint32_t *ks,
                     const int *include, size_t nk, size_t nmethods, int accurate, uint64_t seed,
                     const repro_opts_t *o, double start)
{
    client_t *c = malloc(dt->m * sizeof(client_t));
    int st = c != NULL ? 0 : -1;
    for (size_t j = 0; j < nk && st == 0; j++) {
        if (!include[j]) {
            continue;
        }
        for (size_t q = 0; q < nmethods && st == 0; q++) {
            const method_t *me = &kMethods[q];
            st = partition(dt, ks[j], me->noniid, sim_stream_key(seed, (uint32_t)j, 1), c);
            for (uint32_t e = 0; e < NEPS_LAP && st == 0; e++) {
                lap_out_t lo;
                char row[64], col[32];
                st = lap_runs(dt, c, ks[j], me->v, kEpsLap[e], accurate,
                              sim_stream_key(seed, (uint32_t)(j * 64 + q * 8 + e), 2), &lo);
                snprintf(row, sizeof(row), "eps=%g %s", kEpsLap[e], me->name);
                snprintf(col, sizeof(col), "K=%u", ks[j]);
                st |= st == 0 ? lap_cell(x, table, row, col, &lo) : 0;
            }
        }
        if (o->progress) {
            fprintf(stderr, "  fedauc: %s K=%u done (%.1f s)\n", table, ks[j], sim_now() - start);
        }
    }
    free(c);
    return st;
}

static int write_outputs(const repro_opts_t *o, const repro_t *r, uint32_t runs,
                         const fa_cells_t *explain)
{
    int st = repro_save_json(r, o->out_dir, "fedauc");
    FILE *f = repro_open_md(
        o->out_dir, "fedauc",
        "# FedAUC (Sun et al.): Tables 5, 1, 7 and 2\n\n"
        "Generated by `dpm-sim repro fedauc%s` (host-sim/sim/repro/repro_fedauc.c) from "
        "host-sim/scenarios/paper-fedauc.ref. Synthetic binormal scores with the small Criteo "
        "evaluation set's sizes (M = 458,407, P = 117,317) and the paper's AUCs "
        "(sdk/docs/fedauc.md §Delta method; "
        "the Criteo data and the paper's model are not available offline), %u runs per cell. "
        "Each run's aggregate is drawn with the law of the devices' reports (fedauc_rr: every "
        "label flipped with the SDK's implemented probability; fedauc_lap: each client's "
        "discrete Laplace draws with the SDK's sensitivity and split) and estimated by "
        "host-sim/estimate/fedauc; dpm-sim's fedauc modules check that law against the SDK "
        "(tests/e2e/test_sim_fedauc.py). Only standard deviations are compared with the "
        "paper (within +-20%%): they depend on the data only through M, P, the AUC, the "
        "partition and eps. Table 2 (accurate P, the whole eps on localSum) is the paper's "
        "setting, REPRODUCTION ONLY.%s\n\n",
        o->long_runs ? " --long" : "", runs,
        o->long_runs ? ""
                     : " Without --long, Table 7's K=100000 and K=458407 columns and "
                       "Table 2's are not run (not counted).");
    if (f == NULL) {
        return -1;
    }
    repro_write_sections(r, f);
    fa_explain_write(explain, TOLERANCE, runs, !o->quick, f, stdout);
    return (fclose(f) == 0 ? 0 : -1) | st;
}

int repro_fedauc(const repro_opts_t *o, repro_t *r, double *seconds)
{
    double start = sim_now();
    r->quick = o->quick;
    if (repro_load_paper(r, o->data_dir, "fedauc") != 0) {
        return -1;
    }
    repro_table(r, "sanity", "Self-checks: eps = infinity and the RR means",
                "sdk/docs/fedauc.md §Acceptance",
                "eps = inf: the rank-sum AUC of the exact statistics against the Mann-Whitney AUC "
                "of the examples (an independent route), |difference| <= 1e-12. RR mean: the mean "
                "of the de-biased AUC within 3 sd / sqrt(runs) of the examples' AUC.");
    static const char *const kTwins[][2] = {
        {"table5", "Table 5"}, {"table1", "Table 1"}, {"table7", "Table 7"}, {"table2", "Table 2"}};
    for (size_t i = 0; i < sizeof(kTwins) / sizeof(kTwins[0]); i++) {
        char name[48], title[160], source[96];
        mech_table_name(name, sizeof(name), kTwins[i][0]);
        snprintf(title, sizeof(title), "%s with the paper's mechanism (not counted)", kTwins[i][1]);
        snprintf(source, sizeof(source), "paper %s", kTwins[i][1]);
        repro_table(
            r, name, title, source,
            "The same cells, data and uniforms, with the mechanism the paper used: "
            "continuous Laplace (double precision, the SDK's scales and split) for "
            "fedauc_lap, RR with rho = 1/(1+e^eps) in double for fedauc_rr. Explains "
            "ours; never counted as matching the paper. Here \"ours\" is the paper's mechanism, "
            "run by us.");
    }
    ctx_t x = {r, {NULL, 0, 0}};
    uint32_t runs = o->quick ? QUICK_RUNS : RUNS;
    uint32_t m = M_POS + M_NEG;
    uint32_t *r2 = malloc(m * sizeof(uint32_t));
    int st = r2 != NULL ? 0 : -1;
    for (uint32_t ep = 0; ep < NEPOCHS && st == 0; ep++) {
        auc_data_t d;
        uint64_t seed = sim_stream_key(0xFEDA, ep, 0);
        dpm_fa_ranking_t mom;
        if (auc_data_binormal(&d, M_POS, M_NEG, kAuc[ep], seed) != 0 ||
            dpm_fa_rank2(d.score, m, r2, &mom) != DPM_OK) {
            auc_data_free(&d);
            st = -1;
            break;
        }
        double truth = dpm_fa_auc_exact(d.score, d.label, m);
        data_t dt = {&d, r2, &mom, m, M_POS, runs, truth};
        uint64_t s2 = 0;
        for (uint32_t i = 0; i < m; i++) {
            s2 += d.label[i] ? r2[i] : 0u;
        }
        double exact = dpm_fa_auc_from_sums(s2 / 2.0, M_POS, m);
        char row[64], col[64];
        snprintf(row, sizeof(row), "epoch %u (AUC %.6f)", ep + 1, truth);
        st |= repro_own_cell(r, "sanity", row, "eps=inf |rank-sum AUC - exact|", 1e-12,
                             fabs(exact - truth), REPRO_SELF, "<= 1e-12",
                             fabs(exact - truth) <= 1e-12, -1);
        for (uint32_t e = 0; e < NEPS_RR && st == 0; e++) {
            repro_moments_t mm, mc;
            st = rr_runs(&dt, kEpsRR[e], sim_stream_key(seed, e, 1), &mm, &mc);
            if (st != 0) {
                break;
            }
            snprintf(row, sizeof(row), "eps=%g", kEpsRR[e]);
            snprintf(col, sizeof(col), "E%u sd", ep + 1);
            st |= rr_cell(&x, &dt, "table5", row, col, kEpsRR[e], &mm, &mc);
            double z = fabs(repro_moments_mean(&mm) - truth) / (repro_moments_sd(&mm) / sqrt(runs));
            snprintf(row, sizeof(row), "RR epoch %u eps=%g", ep + 1, kEpsRR[e]);
            st |= repro_own_cell(r, "sanity", row, "|mean - AUC| / (sd / sqrt(runs))", 3.0, z,
                                 REPRO_SELF, "<= 3", z <= 3.0, 2);
            if (ep == 0 && (kEpsRR[e] == 1 || kEpsRR[e] == 2 || kEpsRR[e] == 4)) {
                snprintf(row, sizeof(row), "eps=%g RR", kEpsRR[e]);
                st |= rr_cell(&x, &dt, "table1", row, "K=10", kEpsRR[e], &mm, &mc);
            }
        }
        if (ep == 0 && st == 0) {
            repro_moments_t mm, mc;
            st = rr_runs(&dt, 8, sim_stream_key(seed, 99, 1), &mm, &mc);
            st |= st == 0 ? rr_cell(&x, &dt, "table1", "eps=8 RR", "K=10", 8, &mm, &mc) : 0;
            static const uint32_t k1[] = {10, 458, 4584, 45840};
            static const int all1[] = {1, 1, 1, 1};
            st |= st == 0
                      ? lap_table(&x, &dt, "table1", k1, all1, 4, NMETHODS, 0, seed + 2, o, start)
                      : 0;
            static const uint32_t k7[] = {1000, 100000, 458407};
            const int inc7[] = {1, o->long_runs, o->long_runs};
            st |= st == 0 ? lap_table(&x, &dt, "table7", k7, inc7, 3, 3, 0, seed + 3, o, start) : 0;
            static const uint32_t k2[] = {10, 1000, 100000, 458407};
            const int inc2[] = {1, 1, o->long_runs, o->long_runs};
            st |= st == 0 ? lap_table(&x, &dt, "table2", k2, inc2, 4, 3, 1, seed + 4, o, start) : 0;
        }
        if (o->progress) {
            fprintf(stderr, "  fedauc: epoch %u done (%.1f s)\n", ep + 1, sim_now() - start);
        }
        auc_data_free(&d);
    }
    free(r2);
    if (st == 0) {
        size_t ours, cont;
        fa_cells_count(&x.explain, TOLERANCE, &ours, &cont);
        /* --quick's 20-run cells are info, not counted: nothing to explain */
        r->explained = o->quick ? 0 : fa_explained_misses(&x.explain, TOLERANCE, runs);
        snprintf(r->summary, sizeof(r->summary),
                 " (SDK discrete noise); with the paper's continuous Laplace %zu/%zu%s", cont,
                 x.explain.n, o->quick ? " (--quick: 20 runs, not counted)" : "");
        st = write_outputs(o, r, runs, &x.explain);
    }
    fa_cells_free(&x.explain);
    *seconds = sim_now() - start;
    return st;
}
