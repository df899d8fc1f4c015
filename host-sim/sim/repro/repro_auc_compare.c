/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim repro auc_compare: every AUC mechanism at equal eps on the same examples (see
 * repro_auc_compare.h). */
#include "sim/repro/repro_auc_compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/edges.h"
#include "common/json_write.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/report.h"
#include "dpm/expert/simulator.h"
#include "dpm/expert/ustat.h"
#include "estimate/dpauc.h"
#include "estimate/roc.h"
#include "estimate/roc_groups.h"
#include "estimate/ustat.h"
#include "sim/pop/progress.h"
#include "sim/repro/repro_auc_data.h"
#include "sim/repro/repro_auc_fedauc.h"
#include "common/stream.h"

#define NEX 100000u  /* examples */
#define NPOS 30000u  /* positives (base rate 0.3) */
#define AUC 0.80     /* the model's AUC (binormal) */
#define BINS 24u     /* roc_hist bins = dpauc's N - 1 = ustat_bins' k: the same quantization */
#define DEPTH 5u     /* ustat_tree: 32 leaves (a power of 2 near 24) */
#define GRR_LEVELS 3u
#define NSHAPES 2u
#define CONF 0.95
#define Q16 65536.0
#define TIE 0.5

typedef enum {
    M_ROC = 0,
    M_GROUPS,
    M_DPAUC_A,
    M_DPAUC_B,
    M_BINS,
    M_TREE,
    NSDK, /* the rows above: every report through the SDK; below: FedAUC (repro_auc_fedauc.h) */
    M_FA_RR = NSDK,
    M_FA_LOCAL,
    M_FA_GLOBAL,
    M_FA_ORTHO,
    M_FA_ADAPT,
    NMECH
} mech_index_t;

static const char *const kName[NMECH] = {
    "roc_hist",         "roc_hist_groups",       "dpauc_A",
    "dpauc_B",          "ustat_bins",            "ustat_tree",
    "fedauc_rr",        "fedauc_lap local",      "fedauc_lap global",
    "fedauc_lap orthogonal", "fedauc_lap adaptive"};
static const char *const kUnit[NMECH] = {
    "one example's label",
    "one example's label (eps/2) + the device's group (eps/2)",
    "one example's label (spends eps/2: published calibration)",
    "one example's label (spends eps/2: published calibration)",
    "one example's score (label public)",
    "one example's score (label public)",
    "every label of the device (eps per label); the scores go to the server in clear",
    "every label of the device; the scores go to the server in clear",
    "every label of the device; the scores go to the server in clear",
    "every label of the device; the scores go to the server in clear",
    "every label of the device; the scores go to the server in clear"};
static const uint32_t kRounds[NMECH] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2};

typedef struct {
    const char *name, *what;
    uint32_t devices, per; /* per > 0: exactly per examples each; 0: uniform random parties */
} shape_t;

static const shape_t kShapes[NSHAPES] = {
    {"many_devices", "10^4 devices with 10 examples each", 10000, 10},
    {"few_parties", "15 parties with ~6,667 examples each (uniform random assignment)", 15, 0},
};

typedef struct {
    double sq_exact, sq_target, err_target, cover, with_ci, bytes, reports, ns;
    uint32_t runs, groups_runs;
    double down_bytes; /* FedAUC: the rank reply each device receives */
} acc_t;

typedef struct {
    const repro_opts_t *o;
    const auc_data_t *d;
    uint32_t devices;
    uint32_t *start, *idx; /* examples of device v: idx[start[v] .. start[v + 1]) */
    uint32_t *group;       /* roc_hist_groups: each device's group */
    double exact, target[NMECH], group_target[2], group_exact[2];
    dpm_mech_t mech[NMECH];
    uint32_t runs;
    double eps;
} ctx_t;

static int campaign(dpm_mech_t *m, dpm_mech_id_t id, double eps, uint32_t groups)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 1800u + (uint32_t)id;
    c.mechanism = id;
    c.eps = DPM_EPS_Q16((dpm_eps_t)llround(eps * Q16));
    c.budget = c.eps;
    c.period_seconds = 86400u;
    if (id == DPM_MECH_ID_ROC_HIST) {
        c.nbins = BINS - 1;
        edges_uniform(BINS, c.bin_edges);
        c.groups = groups;
    } else if (id == DPM_MECH_ID_DPAUC) {
        c.nthresholds = BINS + 1;
        if (dpm_dpauc_linspace(BINS + 1, c.thresholds) != DPM_OK) {
            return -1;
        }
        c.calibration = DPM_DPAUC_PUBLISHED;
    } else if (id == DPM_MECH_ID_USTAT_BINS) {
        c.ustat_k = BINS;
        c.ustat_kernel = DPM_USTAT_AUC;
    } else {
        c.tree_depth = DEPTH;
        c.tree_grr_levels = GRR_LEVELS;
    }
    const char *why = NULL;
    if (dpm_mech_init(m, &c, &why) != DPM_OK) {
        fprintf(stderr, "dpm-sim repro: auc_compare: campaign refused: %s\n", why ? why : "?");
        return -1;
    }
    return 0;
}

/* One report, encoded (run 0) for its size and timed. */
static void account(acc_t *a, const dpm_report_t *rep, uint32_t run, double ns)
{
    if (run == 0) {
        uint8_t buf[DPM_REPORT_MAX_BYTES];
        size_t len = 0;
        if (dpm_report_encode(rep, buf, sizeof(buf), &len) == DPM_OK) {
            a->bytes += (double)len;
        }
        a->reports += 1.0;
        a->ns += ns;
    }
}

static void score(acc_t *a, double est, double target, double exact, double lo, double hi)
{
    a->sq_exact += (est - exact) * (est - exact);
    a->sq_target += (est - target) * (est - target);
    a->err_target += est - target;
    if (!isnan(lo) && !isnan(hi)) {
        a->with_ci += 1.0;
        a->cover += lo <= target && target <= hi;
    }
    a->runs++;
}

/* roc_hist, roc_hist_groups and dpauc: one report per device over its examples. */
static int device_mechs(const ctx_t *x, uint32_t run, uint64_t key, acc_t *acc)
{
    dpm_roc_agg_t roc;
    dpm_roc_groups_agg_t grp;
    dpm_dpauc_agg_t *dp = malloc(sizeof(*dp));
    const dpm_roc_hist_t *rh = &x->mech[M_ROC].params.roc_hist;
    const dpm_roc_hist_t *rg = &x->mech[M_GROUPS].params.roc_hist;
    const dpm_dpauc_t *da = &x->mech[M_DPAUC_A].params.dpauc;
    int st = dp != NULL && dpm_roc_agg_init(&roc, BINS) == DPM_OK &&
                     dpm_roc_groups_agg_init(&grp, 2, BINS) == DPM_OK &&
                     dpm_dpauc_agg_init(dp, BINS + 1) == DPM_OK
                 ? 0
                 : -1;
    for (uint32_t v = 0; v < x->devices && st == 0; v++) {
        dpm_score_hist_t h;
        dpm_dpauc_counts_t c;
        dpm_report_t rep;
        dpm_receipt_issuer_t iss = DPM_RECEIPT_ISSUER_INIT;
        dpm_receipt_t rc;
        auc_device_rand_t dr;
        st |= dpm_score_hist_init(&h, &rh->bins) != DPM_OK || dpm_dpauc_counts_init(&c, da) != DPM_OK;
        for (uint32_t k = x->start[v]; k < x->start[v + 1] && st == 0; k++) {
            uint32_t i = x->idx[k];
            st |= dpm_score_hist_add(&h, &rh->bins, x->d->score[i], x->d->label[i]) != DPM_OK ||
                  dpm_dpauc_counts_add(&c, da, x->d->score[i], x->d->label[i]) != DPM_OK;
        }
        /* roc_hist */
        double t0 = sim_now();
        st |= auc_device_rand(&dr, sim_stream_key(key, run, 3u * v)) != 0 ||
              dpm_receipt_unmetered(&iss, &x->mech[M_ROC], run, &rc) != DPM_OK ||
              dpm_mech_report_roc_hist(&x->mech[M_ROC], &dr.r, &iss, &rc, &h, &rep) != DPM_OK;
        account(&acc[M_ROC], &rep, run, 1e9 * (sim_now() - t0));
        st |= st == 0 && dpm_roc_agg_add(&roc, BINS, rep.body.roc_hist.pos,
                                         rep.body.roc_hist.neg) != DPM_OK;
        /* roc_hist with the device's group */
        t0 = sim_now();
        st |= st == 0 && (auc_device_rand(&dr, sim_stream_key(key, run, 3u * v + 1)) != 0 ||
                          dpm_receipt_unmetered(&iss, &x->mech[M_GROUPS], run, &rc) != DPM_OK ||
                          dpm_mech_report_roc_hist_group(&x->mech[M_GROUPS], &dr.r, &iss, &rc,
                                                         x->group[v], &h, &rep) != DPM_OK);
        account(&acc[M_GROUPS], &rep, run, 1e9 * (sim_now() - t0));
        st |= st == 0 && dpm_roc_groups_agg_add(&grp, rep.body.roc_hist.group, BINS,
                                                rep.body.roc_hist.pos,
                                                rep.body.roc_hist.neg) != DPM_OK;
        /* dpauc: one report, both servers */
        t0 = sim_now();
        st |= st == 0 && (auc_device_rand(&dr, sim_stream_key(key, run, 3u * v + 2)) != 0 ||
                          dpm_receipt_unmetered(&iss, &x->mech[M_DPAUC_A], run, &rc) != DPM_OK ||
                          dpm_mech_report_dpauc(&x->mech[M_DPAUC_A], &dr.r, &iss, &rc, &c, &rep) !=
                              DPM_OK);
        account(&acc[M_DPAUC_A], &rep, run, 1e9 * (sim_now() - t0));
        account(&acc[M_DPAUC_B], &rep, run, 1e9 * (sim_now() - t0));
        st |= st == 0 && dpm_dpauc_agg_add(dp, rep.body.dpauc.n, rep.body.dpauc.tp,
                                           rep.body.dpauc.fp, rep.body.dpauc.tn,
                                           rep.body.dpauc.fn) != DPM_OK;
    }
    if (st == 0) {
        dpm_roc_params_t rp;
        dpm_roc_estimate_t e;
        if (dpm_roc_params_init(&rp, BINS, (double)rh->lap.scale_num / rh->lap.scale_den) ==
                DPM_OK &&
            dpm_roc_estimate(&rp, &roc, CONF, &e) == DPM_OK && e.valid) {
            score(&acc[M_ROC], e.auc, x->target[M_ROC], x->exact, e.ci_lo, e.ci_hi);
        }
        dpm_roc_groups_params_t gp;
        dpm_roc_groups_estimate_t *ge = malloc(sizeof(*ge));
        if (ge != NULL &&
            dpm_roc_groups_params_init(&gp, 2, BINS, rg->group_grr.keep, rg->group_grr.other,
                                       (double)rg->lap.scale_num / rg->lap.scale_den) == DPM_OK &&
            dpm_roc_groups_estimate(&gp, &grp, CONF, ge) == DPM_OK) {
            for (uint32_t g = 0; g < 2; g++) {
                const dpm_roc_group_estimate_t *q = &ge->group[g];
                if (q->defined) { /* each group's AUC against its own examples' */
                    score(&acc[M_GROUPS], q->auc_clipped, x->group_target[g], x->group_exact[g],
                          q->ci_valid ? q->ci_lo : NAN, q->ci_valid ? q->ci_hi : NAN);
                }
            }
            acc[M_GROUPS].groups_runs++;
        }
        free(ge);
        dpm_dpauc_params_t dpp;
        if (dpm_dpauc_params_init(&dpp, BINS + 1, (double)da->lap.scale_num / da->lap.scale_den) ==
            DPM_OK) {
            for (int v = 0; v < 2; v++) {
                dpm_dpauc_estimate_t de;
                if (dpm_dpauc_estimate(&dpp, dp, v ? DPM_DPAUC_SERVER_B : DPM_DPAUC_SERVER_A, &de) ==
                        DPM_OK &&
                    de.defined) {
                    score(&acc[v ? M_DPAUC_B : M_DPAUC_A], de.auc, x->target[M_DPAUC_A], x->exact,
                          NAN, NAN);
                }
            }
        }
    }
    dpm_roc_groups_agg_free(&grp);
    free(dp);
    return st;
}

/* ustat_bins and ustat_tree: one report per example (a device with E examples sends E). */
static int example_mechs(const ctx_t *x, uint32_t run, uint64_t key, acc_t *acc)
{
    const dpm_ustat_bins_t *mb = &x->mech[M_BINS].params.ustat_bins;
    dpm_ustat_bins_params_t bp;
    dpm_ustat_tree_params_t tp;
    dpm_ustat_tree_agg_t ta;
    dpm_ustat_bins_agg_t *ba = malloc(sizeof(*ba));
    int st = ba != NULL &&
                     dpm_ustat_bins_params_init(&bp, mb->kernel, mb->k, mb->grr.keep,
                                                mb->grr.other) == DPM_OK &&
                     dpm_ustat_bins_agg_init(ba, bp.domain) == DPM_OK &&
                     dpm_ustat_tree_params_init(&tp, &x->mech[M_TREE].params.ustat_tree) ==
                         DPM_OK &&
                     dpm_ustat_tree_agg_init(&ta, &tp) == DPM_OK
                 ? 0
                 : -1;
    if (st != 0) {
        free(ba);
        return -1;
    }
    for (uint32_t v = 0; v < x->devices && st == 0; v++) {
        for (uint32_t k = x->start[v]; k < x->start[v + 1] && st == 0; k++) {
            uint32_t i = x->idx[k];
            dpm_ustat_example_t ex = {x->d->score[i], x->d->label[i], 0};
            dpm_report_t rep;
            dpm_receipt_issuer_t iss = DPM_RECEIPT_ISSUER_INIT;
            dpm_receipt_t rc;
            auc_device_rand_t dr;
            double t0 = sim_now();
            st |= auc_device_rand(&dr, sim_stream_key(key, run, 2u * (uint64_t)i)) != 0 ||
                  dpm_receipt_unmetered(&iss, &x->mech[M_BINS], run, &rc) != DPM_OK ||
                  dpm_mech_report_ustat_bins(&x->mech[M_BINS], &dr.r, &iss, &rc, &ex, &rep) !=
                      DPM_OK;
            account(&acc[M_BINS], &rep, run, 1e9 * (sim_now() - t0));
            st |= st == 0 && dpm_ustat_bins_agg_add(ba, &bp, rep.body.ustat_bins.value,
                                                    rep.body.ustat_bins.label) != DPM_OK;
            t0 = sim_now();
            st |= st == 0 &&
                  (auc_device_rand(&dr, sim_stream_key(key, run, 2u * (uint64_t)i + 1)) != 0 ||
                   dpm_receipt_unmetered(&iss, &x->mech[M_TREE], run, &rc) != DPM_OK ||
                   dpm_mech_report_ustat_tree(&x->mech[M_TREE], &dr.r, &iss, &rc, &ex, &rep) !=
                       DPM_OK);
            account(&acc[M_TREE], &rep, run, 1e9 * (sim_now() - t0));
            const dpm_ustat_tree_report_t *t = &rep.body.ustat_tree;
            st |= st == 0 &&
                  dpm_ustat_tree_agg_add(&ta, t->label, t->level, t->row, t->value) != DPM_OK;
        }
    }
    dpm_ustat_estimate_t e;
    if (st == 0 && dpm_ustat_bins_estimate(&bp, ba, TIE, CONF, &e) == DPM_OK && e.defined) {
        score(&acc[M_BINS], e.value_clipped, x->target[M_BINS], x->exact, e.ci_lo, e.ci_hi);
    }
    dpm_ustat_tree_opts_t o = {DPM_USTAT_TREE_CHOOSE_A, 0.0, TIE};
    dpm_ustat_tree_estimate_t te;
    if (st == 0 && dpm_ustat_tree_estimate(&tp, &ta, &o, &te) == DPM_OK && te.est.defined) {
        score(&acc[M_TREE], te.est.value_clipped, x->target[M_TREE], x->exact, NAN, NAN);
    }
    dpm_ustat_tree_agg_free(&ta);
    free(ba);
    return st;
}

/* The devices' example lists (CSR) and groups (the first 60% of the devices: group 0). */
static int layout(ctx_t *x, const auc_data_t *d, const shape_t *s, uint64_t seed)
{
    auc_data_t *dd = (auc_data_t *)d;
    if (auc_data_assign(dd, s->devices, s->per, seed) != 0) {
        return -1;
    }
    x->devices = s->devices;
    x->start = calloc(s->devices + 1u, sizeof(uint32_t));
    x->idx = malloc((size_t)d->n * sizeof(uint32_t));
    x->group = malloc(s->devices * sizeof(uint32_t));
    if (x->start == NULL || x->idx == NULL || x->group == NULL) {
        return -1;
    }
    for (uint32_t i = 0; i < d->n; i++) {
        x->start[d->device[i] + 1]++;
    }
    for (uint32_t v = 0; v < s->devices; v++) {
        x->start[v + 1] += x->start[v];
        x->group[v] = v * 10u >= s->devices * 6u;
    }
    uint32_t *fill = calloc(s->devices, sizeof(uint32_t));
    if (fill == NULL) {
        return -1;
    }
    for (uint32_t i = 0; i < d->n; i++) {
        uint32_t v = d->device[i];
        x->idx[x->start[v] + fill[v]++] = i;
    }
    free(fill);
    /* each group's binned AUC (roc_hist's bins) of its own examples */
    for (uint32_t g = 0; g < 2; g++) {
        uint64_t pos[BINS] = {0}, neg[BINS] = {0};
        double tpr[BINS + 1], fpr[BINS + 1];
        for (uint32_t i = 0; i < d->n; i++) {
            if (x->group[d->device[i]] == g) {
                uint64_t b = ((uint64_t)d->score[i] * BINS) >> 31;
                (d->label[i] ? pos : neg)[b < BINS ? b : BINS - 1]++;
            }
        }
        if (dpm_roc_exact(pos, neg, BINS, tpr, fpr, &x->group_target[g]) != DPM_OK) {
            return -1;
        }
        /* and its exact AUC: the group's examples, positives first */
        auc_data_t sub;
        memset(&sub, 0, sizeof(sub));
        sub.score = malloc((size_t)d->n * sizeof(uint32_t));
        sub.label = malloc((size_t)d->n);
        if (sub.score == NULL || sub.label == NULL) {
            auc_data_free(&sub);
            return -1;
        }
        for (int cls = 1; cls >= 0; cls--) {
            for (uint32_t i = 0; i < d->n; i++) {
                if (x->group[d->device[i]] == g && d->label[i] == cls) {
                    sub.score[sub.n] = d->score[i];
                    sub.label[sub.n++] = (uint8_t)cls;
                    sub.npos += (uint32_t)cls;
                }
            }
        }
        x->group_exact[g] = auc_data_exact(&sub);
        auc_data_free(&sub);
    }
    return 0;
}

static void layout_free(ctx_t *x)
{
    free(x->start);
    free(x->idx);
    free(x->group);
    x->start = x->idx = x->group = NULL;
}

typedef struct {
    double rmse, rmse_target, bias, coverage, bytes, reports, ns, down_bytes;
    uint32_t runs, rounds;
} row_t;

static row_t row_of(const acc_t *a, uint32_t devices)
{
    row_t r;
    double n = a->runs;
    r.runs = a->runs;
    r.rmse = n > 0 ? sqrt(a->sq_exact / n) : NAN;
    r.rmse_target = n > 0 ? sqrt(a->sq_target / n) : NAN;
    r.bias = n > 0 ? a->err_target / n : NAN;
    r.coverage = a->with_ci > 0 ? a->cover / a->with_ci : NAN;
    r.bytes = a->bytes / devices;
    r.reports = a->reports / devices;
    r.ns = a->reports > 0 ? a->ns / a->reports : NAN;
    r.down_bytes = a->down_bytes / devices;
    r.rounds = 1;
    return r;
}

int repro_auc_compare(const repro_opts_t *o, repro_t *r, double *seconds)
{
    double start = sim_now();
    char path[4096];
    ctx_t x;
    memset(&x, 0, sizeof(x));
    x.o = o;
    x.eps = 1.0;
    x.runs = o->quick ? 20u : o->long_runs ? 1000u : 100u;
    r->quick = o->quick;
    auc_data_t d;
    if (auc_data_binormal(&d, NPOS, NEX - NPOS, AUC, 0xA0C) != 0) {
        return -1;
    }
    x.d = &d;
    x.exact = auc_data_exact(&d);
    x.target[M_ROC] = x.target[M_DPAUC_A] = x.target[M_DPAUC_B] = x.target[M_BINS] =
        auc_data_binned(&d, BINS);
    x.target[M_TREE] = auc_data_binned(&d, 1u << DEPTH);
    int st = campaign(&x.mech[M_ROC], DPM_MECH_ID_ROC_HIST, x.eps, 0) |
             campaign(&x.mech[M_GROUPS], DPM_MECH_ID_ROC_HIST, x.eps, 2) |
             campaign(&x.mech[M_DPAUC_A], DPM_MECH_ID_DPAUC, x.eps, 0) |
             campaign(&x.mech[M_BINS], DPM_MECH_ID_USTAT_BINS, x.eps, 0) |
             campaign(&x.mech[M_TREE], DPM_MECH_ID_USTAT_TREE, x.eps, 0);
    x.mech[M_DPAUC_B] = x.mech[M_DPAUC_A];
    repro_table(r, "compare", "Every AUC mechanism at eps = 1 on the same 10^5 examples",
                "ours only (no paper runs this comparison)",
                "RMSE of the AUC against the examples' exact AUC; rows: shape / mechanism. "
                "Shown for comparison, not counted (build/repro/auc_compare.json has every "
                "column).");
    row_t rows[NSHAPES][NMECH];
    for (uint32_t s = 0; s < NSHAPES && st == 0; s++) {
        acc_t acc[NMECH];
        memset(acc, 0, sizeof(acc));
        st = layout(&x, &d, &kShapes[s], sim_stream_key(0xA0C, s, 1));
        for (uint32_t run = 0; run < x.runs && st == 0; run++) {
            st = device_mechs(&x, run, sim_stream_key(0xA0C1, s, 0), acc) |
                 example_mechs(&x, run, sim_stream_key(0xA0C2, s, 0), acc);
        }
        auc_fa_acc_t fa[AUC_FA_N];
        st |= st == 0 ? auc_fedauc_rows(&d, x.devices, x.start, x.idx, x.runs, x.eps,
                                        sim_stream_key(0xA0C3, s, 0), fa)
                      : 0;
        for (uint32_t i = 0; i < AUC_FA_N && st == 0; i++) {
            acc_t *q = &acc[NSDK + i];
            q->sq_exact = q->sq_target = fa[i].sq_exact; /* FedAUC's target: the exact AUC */
            q->err_target = fa[i].err;
            q->cover = fa[i].cover;
            q->with_ci = fa[i].with_ci;
            q->runs = fa[i].runs;
            /* device 0's two rounds, for every device (the sizes vary little across devices) */
            q->bytes = fa[i].up_bytes * x.devices;
            q->down_bytes = fa[i].down_bytes * x.devices;
            q->reports = x.devices;
            q->ns = fa[i].ns * x.devices;
        }
        for (uint32_t m = 0; m < NMECH && st == 0; m++) {
            char row[64];
            rows[s][m] = row_of(&acc[m], x.devices);
            rows[s][m].rounds = kRounds[m];
            snprintf(row, sizeof(row), "%s %s", kShapes[s].name, kName[m]);
            st |= repro_own_cell(r, "compare", row, "rmse vs exact AUC", NAN, rows[s][m].rmse,
                                 REPRO_INFO, "info", 0, -1);
            st |= repro_own_cell(r, "compare", row, "coverage of own target", NAN,
                                 rows[s][m].coverage, REPRO_INFO, "info", 0, 3);
            st |= repro_own_cell(r, "compare", row, "bytes per device", NAN, rows[s][m].bytes,
                                 REPRO_INFO, "info", 0, 0);
        }
        layout_free(&x);
        if (o->progress) {
            fprintf(stderr, "  auc_compare: %s done (%.1f s)\n", kShapes[s].name,
                    sim_now() - start);
        }
    }
    if (st == 0) {
        printf("AUC mechanisms at eps = 1, %u examples (AUC %.4f, binned %.4f), %u runs:\n", NEX,
               x.exact, x.target[M_ROC], x.runs);
        printf("  %-12s %-21s %10s %10s %10s %9s %12s %10s %7s %10s %10s\n", "shape", "mechanism",
               "rmse", "rmse_own", "bias_own", "coverage", "bytes/device", "down/dev", "rounds",
               "reports", "ns/report");
        for (uint32_t s = 0; s < NSHAPES; s++) {
            for (uint32_t m = 0; m < NMECH; m++) {
                const row_t *w = &rows[s][m];
                printf("  %-12s %-21s %10.3g %10.3g %+10.2g %9.3f %12.1f %10.1f %7u %10.0f "
                       "%10.0f\n",
                       kShapes[s].name, kName[m], w->rmse, w->rmse_target, w->bias, w->coverage,
                       w->bytes, w->down_bytes, w->rounds, w->reports, w->ns);
            }
        }
        snprintf(path, sizeof(path), "%s/auc_compare.json", o->out_dir);
        FILE *f = fopen(path, "w");
        jw_t w;
        if (f == NULL) {
            return -1;
        }
        jw_file(&w, f);
        jw_raw(&w, "{\"eps\": 1, \"examples\": %u, \"positives\": %u, \"runs\": %u, ", NEX, NPOS,
               x.runs);
        jw_raw(&w, "\"auc_exact\": ");
        jw_num(&w, x.exact, 10);
        jw_raw(&w, ", \"auc_binned_%u\": ", BINS);
        jw_num(&w, x.target[M_ROC], 10);
        jw_raw(&w, ", \"auc_binned_%u\": ", 1u << DEPTH);
        jw_num(&w, x.target[M_TREE], 10);
        jw_raw(&w, ",\n \"note\": \"rmse: against the exact AUC of the examples; rmse_own, "
                   "bias_own, coverage: against the mechanism's own target (its quantized AUC "
                   "of the same examples; roc_hist_groups: each group's); coverage null: no "
                   "interval; estimates clipped to [0, 1] where the estimator clips (all but "
                   "dpauc B, whose unclamped rates are its definition); dpauc A and B are one "
                   "report read by two servers\",\n \"shapes\": [");
        for (uint32_t s = 0; s < NSHAPES; s++) {
            jw_raw(&w, "%s\n  {\"shape\": ", s ? "," : "");
            jw_str(&w, kShapes[s].name);
            jw_raw(&w, ", \"what\": ");
            jw_str(&w, kShapes[s].what);
            jw_raw(&w, ", \"mechanisms\": [");
            for (uint32_t m = 0; m < NMECH; m++) {
                const row_t *q = &rows[s][m];
                jw_raw(&w, "%s\n   {\"mechanism\": ", m ? "," : "");
                jw_str(&w, kName[m]);
                jw_raw(&w, ", \"privacy_unit\": ");
                jw_str(&w, kUnit[m]);
                jw_raw(&w, ", \"runs\": %u", q->runs);
                jw_member_num(&w, "rmse", q->rmse, 6);
                jw_member_num(&w, "rmse_own", q->rmse_target, 6);
                jw_member_num(&w, "bias_own", q->bias, 6);
                jw_member_num(&w, "coverage", q->coverage, 4);
                jw_member_num(&w, "bytes_per_device", q->bytes, 6);
                jw_member_num(&w, "reports_per_device", q->reports, 6);
                jw_member_num(&w, "down_bytes_per_device", q->down_bytes, 6);
                jw_raw(&w, ", \"rounds\": %u", q->rounds);
                jw_member_num(&w, "ns_per_report", q->ns, 4);
                jw_raw(&w, "}");
            }
            jw_raw(&w, "]}");
        }
        jw_raw(&w, "]}\n");
        st = jw_error(&w) || fclose(f) != 0 ? -1 : 0;
        f = repro_open_md(
            o->out_dir, "auc_compare",
            "# Every AUC mechanism at equal eps on the same examples\n\n"
            "Generated by `dpm-sim repro auc_compare` "
            "(host-sim/sim/repro/repro_auc_compare.c): "
            "%u examples, binormal AUC %.2f (exact %.4f), %u%% positives, eps = 1, %u "
            "runs; every report through the SDK (dpm_mech_report_*), the estimators of "
            "host-sim/estimate. roc_hist, dpauc and ustat_bins see the same 24 bins; "
            "ustat_tree 32 leaves. The privacy units differ: roc_hist and dpauc protect "
            "an example's label (dpauc's published calibration spends only eps/2), "
            "ustat an example's score with the label public, FedAUC every label of the "
            "device while its scores go to the server in clear. FedAUC (scores at 31 "
            "bits: its target is the exact AUC) in exact mode, the law of the devices' "
            "reports (repro_auc_fedauc.h); its bytes: device 0's two rounds through the "
            "SDK (up: upload + report; down: the rank reply).\n\n"
            "| shape | mechanism | RMSE vs exact AUC | RMSE vs own target | coverage | "
            "bytes up/device | bytes down/device | rounds | reports/device |\n"
            "|---|---|---|---|---|---|---|---|---|\n",
            NEX, AUC, x.exact, 100u * NPOS / NEX, x.runs);
        if (f != NULL) {
            for (uint32_t s = 0; s < NSHAPES; s++) {
                for (uint32_t m = 0; m < NMECH; m++) {
                    const row_t *q = &rows[s][m];
                    char cov[16] = "none";
                    if (!isnan(q->coverage)) {
                        snprintf(cov, sizeof(cov), "%.1f%%", 100.0 * q->coverage);
                    }
                    fprintf(f, "| %s | %s | %.3g | %.3g | %s | %.0f | %.0f | %u | %.0f |\n",
                            kShapes[s].what, kName[m], q->rmse, q->rmse_target, cov, q->bytes,
                            q->down_bytes, q->rounds, q->reports);
                }
            }
            st |= fclose(f) == 0 ? 0 : -1;
        } else {
            st = -1;
        }
    }
    auc_data_free(&d);
    *seconds = sim_now() - start;
    return st;
}
