/* SPDX-License-Identifier: Apache-2.0 */
/* ustat_bins and ustat_tree in the simulator (sim/devices/mech.h): Bell et al.'s locally private
 * AUC (sdk: dpm/expert/ustat.h, server: estimate/ustat.h).
 *
 * One report per example, as in the paper (one user, one example): the campaign needs every
 * measured group to hold exactly one example per device (`examples = 1`); a device with more
 * would send one report per example, which one dpm-sim device (one report) does not model.
 *
 * Campaign keys: ustat_bins `k` (bins per score, default 8) and `kernel = auc | auc_private_label
 * | kendall` (label public, the paper's setting; (label, bin) randomized together; or Kendall's
 * tau of a pair of scores, (bin(x), bin(y)) over k^2); ustat_tree `depth`
 * (2^depth score values, default 4) and `grr_levels` (levels 1 .. grr_levels by GRR, deeper ones
 * by Hadamard RR; default min(depth, 3)).
 *
 * Device input: its example from roc_sim.h with uniform bins (k, or 2^depth), the score the
 * middle of its bin so that the SDK's own quantization (dpm_ustat_quantize, or the tree's
 * floor(score 2^depth)) puts it back in that bin. roc_sim.h holds at most DPM_MAX_BINS bins, so
 * dpm-sim runs k <= 64 and depth <= 6 (dpm-sim repro's AUC comparison draws continuous scores).
 * Kendall: every device of the measured groups holds one pair of scores (kendall_sim.h: groups
 * with `pairs = bivariate_normal(rho=R)`), handed to the SDK as they are (Q1.31); k <= 16 (k^2
 * values in DPM_MAX_GRR_K).
 *
 * Exact mode draws the aggregate directly from the true per-class histograms (Kendall: the true
 * k^2 histogram of the pairs' bins):
 *   GRR (bins, and the tree's GRR levels): per value a with h_a examples, Binomial(h_a, p - q)
 *     keep it, the others land uniformly on the whole domain (one multinomial): each report is
 *     then a with probability p - q + q and any other with q, the GRR's law exactly;
 *   tree: per leaf, its examples split over the levels by a uniform multinomial; on a Hadamard
 *     level, a node's reports split uniformly over the 2^l rows and each row's sign sum is
 *     s (m - 2 Binomial(m, 1 - p_h)), s = (-1)^parity(row AND node).
 *
 * Items: 0 the AUC against the model's AUC; 1 against the devices' binned AUC (its own target:
 * bins with ties 1/2, the tree with leaves tied 1/2), with the estimator's interval (ustat_bins:
 * the plug-in sd; ustat_tree: none, its sd is Theorem 3's bound, shown as sd only).
 * Kendall: 0 tau_a against the model's tau (n -> infinity, no binning); 1 against the binned
 * pairs' tau_a (the estimator's target); 2 against the pairs' own tau_a (no binning; only up to
 * KENDALL_SAMPLE_MAX reporting devices: it holds every pair in memory). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/simulator.h"
#include "common/edges.h"
#include "estimate/roc.h"
#include "estimate/ustat.h"
#include "sim/pop/kendall_sim.h"
#include "sim/devices/mech_common.h"
#include "sim/devices/results.h"
#include "sim/pop/roc_sim.h"
#include "sim/devices/sim_cfg.h"

#define Q16 65536.0
#define TWO31 2147483648.0
#define DEFAULT_K 8u
#define DEFAULT_DEPTH 4u
#define DEFAULT_GRR_LEVELS 3u
#define SIM_TREE_MAX_DEPTH 6u /* 2^6 = DPM_MAX_BINS leaves */
#define TIE_WEIGHT 0.5
#define KENDALL_SAMPLE_MAX (1u << 23) /* 16 bytes per pair for the sample's tau_a */
#define KENDALL_MAX_K 16u             /* k^2 <= DPM_MAX_GRR_K */
SIM_STATIC_ASSERT(KENDALL_MAX_K <= DPM_MAX_GRR_K / KENDALL_MAX_K, kendall_domain_fits);

typedef struct {
    sim_roc_model_t *model; /* first: sim_mech_release_model */
    int tree;
    uint32_t bins; /* model bins: k, or 2^depth */
    uint32_t edges[DPM_MAX_BINS - 1];
    uint32_t score[DPM_MAX_BINS]; /* the middle of each bin, Q1.31 */
    dpm_ustat_bins_params_t bp;
    dpm_ustat_tree_params_t tp;
    uint64_t pos[DPM_MAX_BINS], neg[DPM_MAX_BINS];
    double auc_binned, auc_model;
    int kendall;
    sim_pairs_model_t pairs;
    uint64_t pair_hist[DPM_MAX_GRR_K]; /* Kendall: bin(x) k + bin(y) of the reporting devices */
} ustat_state_t;

/* The tree's sums inline (a plain value: sim_agg_t is copied). */
typedef struct {
    uint64_t reports[2];
    uint64_t level_reports[2][DPM_USTAT_EST_MAX_DEPTH + 1];
    int64_t sums[2][(size_t)2 << SIM_TREE_MAX_DEPTH];
} tree_agg_t;

SIM_MECH_STATE(ustat_state_t, ustat)
SIM_MECH_MODEL_FIRST(ustat_state_t, ustat);
SIM_STATIC_ASSERT(sizeof(dpm_ustat_bins_agg_t) <= SIM_AGG_BYTES, ustat_bins_agg_fits);
SIM_STATIC_ASSERT(sizeof(tree_agg_t) <= SIM_AGG_BYTES, ustat_tree_agg_fits);

/* ---- scenario ------------------------------------------------------------------------------ */

static int one_example_each(const sim_scenario_t *sc, const sim_campaign_spec_t *c, int *line,
                            char *err, size_t errcap)
{
    if (sim_mech_takes_no_grid(c, "", line, err, errcap) != 0) {
        return -1;
    }
    for (uint32_t g = 0; g < c->ngroups; g++) {
        const sim_group_spec_t *gs = &sc->group[c->groups[g]];
        if (sim_mech_group_scored(sc, c, g, line, err, errcap) != 0) {
            return -1;
        }
        if (gs->scores.examples != 1 && gs->data) {
            *line = gs->scores.line;
            snprintf(err, errcap,
                     "group '%s' has devices with up to %u rows in %s: ustat sends one report "
                     "per example, so give one row per device_id",
                     gs->name, gs->scores.examples, sc->data.path);
            return -1;
        }
        if (gs->scores.examples != 1) {
            *line = gs->scores.line;
            snprintf(err, errcap,
                     "group '%s' holds %u examples per device: ustat sends one report per "
                     "example, so set examples = 1 ([population] or binormal(..., examples=1))",
                     gs->name, gs->scores.examples);
            return -1;
        }
    }
    return 0;
}

/* Kendall: no metrics, split, bins or edges; every measured group with pairs; k^2 in the GRR. */
static int kendall_check(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                         size_t errcap)
{
    if (sim_mech_takes_no_grid(c, "", line, err, errcap) != 0) {
        return -1;
    }
    for (uint32_t g = 0; g < c->ngroups; g++) {
        const sim_group_spec_t *gs = &sc->group[c->groups[g]];
        if (gs->data) {
            *line = c->groups_line;
            snprintf(err, errcap,
                     "kernel = kendall needs two scores per device; a population = csv(...) "
                     "holds one score per example");
            return -1;
        }
        if (!gs->pairs.set) {
            *line = c->groups_line;
            snprintf(err, errcap,
                     "kernel = kendall: group '%s' has no pairs = bivariate_normal(rho=R)",
                     gs->name);
            return -1;
        }
    }
    c->ustat_k = c->ustat_k ? c->ustat_k : DEFAULT_K;
    if (c->ustat_k > KENDALL_MAX_K) {
        *line = c->keys_line[HOST_CK_K];
        snprintf(err, errcap,
                 "k must be in 2..%u for kernel = kendall (k^2 values must fit DPM_MAX_GRR_K "
                 "= %d)",
                 KENDALL_MAX_K, DPM_MAX_GRR_K);
        return -1;
    }
    return 0;
}

/* The key that sizes the example model (ustat_bins' k, ustat_tree's depth) at *v: its default
 * when not given, and at most max, the model's bins (lo..max is the range the error states: the
 * lower bound is the scenario parser's). 0, or -1 with the key's line (key_line). */
static int model_size(const char *name, int key_line, uint32_t *v, uint32_t def, uint32_t lo,
                      uint32_t max, int *line, char *err, size_t errcap)
{
    *v = *v ? *v : def;
    if (*v > max) {
        *line = key_line;
        snprintf(err, errcap, "%s must be in %u..%u in dpm-sim (its example model's bins)", name,
                 lo, max);
        return -1;
    }
    return 0;
}

static int bins_check(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                      size_t errcap)
{
    if (c->ustat_kernel == DPM_USTAT_KENDALL) {
        return kendall_check(sc, c, line, err, errcap);
    }
    if (one_example_each(sc, c, line, err, errcap) != 0) {
        return -1;
    }
    return model_size("k", c->keys_line[HOST_CK_K], &c->ustat_k, DEFAULT_K, 2u, DPM_MAX_BINS, line,
                      err, errcap);
}

static int tree_check(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                      size_t errcap)
{
    if (one_example_each(sc, c, line, err, errcap) != 0) {
        return -1;
    }
    if (model_size("depth", c->keys_line[HOST_CK_DEPTH], &c->tree_depth, DEFAULT_DEPTH, 1u,
                   SIM_TREE_MAX_DEPTH, line, err, errcap) != 0) {
        return -1;
    }
    if (!c->tree_grr_set) {
        c->tree_grr_levels =
            c->tree_depth < DEFAULT_GRR_LEVELS ? c->tree_depth : DEFAULT_GRR_LEVELS;
    }
    if (c->tree_grr_levels > c->tree_depth) {
        *line = c->keys_line[HOST_CK_GRR_LEVELS];
        snprintf(err, errcap, "grr_levels must be in 0..depth (%u)", c->tree_depth);
        return -1;
    }
    return 0;
}

/* ---- configuration ------------------------------------------------------------------------- */

static int common_init(sim_cfg_t *cfg, dpm_campaign_t *c, char *err, size_t errcap)
{
    ustat_state_t *s = st_of(cfg);
    if (sim_mech_sdk_init(cfg, c, err, errcap) != 0) {
        return -1;
    }
    cfg->checked = 1;
    cfg->eps_implemented = cfg->mech.eps_implemented / Q16;
    edges_uniform(s->bins, s->edges);
    for (uint32_t b = 0; b < s->bins; b++) {
        uint64_t lo = b == 0 ? 0 : s->edges[b - 1], hi = b + 1 < s->bins ? s->edges[b] : 1u << 31;
        s->score[b] = (uint32_t)((lo + hi) / 2);
    }
    return 0;
}

static int bins_init(sim_cfg_t *cfg, char *err, size_t errcap)
{
    ustat_state_t *s = st_of(cfg);
    const sim_campaign_spec_t *sp = cfg->spec;
    memset(s, 0, sizeof(*s));
    s->bins = sp->ustat_k;
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.mechanism = DPM_MECH_ID_USTAT_BINS;
    c.ustat_k = sp->ustat_k;
    c.ustat_kernel = (dpm_ustat_kernel_t)sp->ustat_kernel;
    s->kendall = sp->ustat_kernel == DPM_USTAT_KENDALL;
    static const char *const what[] = {"", " private label", " kendall"};
    snprintf(cfg->label, sizeof(cfg->label), "ustat_bins eps=%s k=%u%s",
             sp->eps_text[cfg->eps_index], sp->ustat_k,
             what[sp->ustat_kernel <= DPM_USTAT_KENDALL ? sp->ustat_kernel : 0]);
    if (common_init(cfg, &c, err, errcap) != 0) {
        return -1;
    }
    const dpm_ustat_bins_t *m = &cfg->mech.params.ustat_bins;
    if (dpm_ustat_bins_params_init(&s->bp, m->kernel, m->k, m->grr.keep, m->grr.other) != DPM_OK) {
        return sim_mech_params_refused(cfg, err, errcap);
    }
    return 0;
}

static int tree_init(sim_cfg_t *cfg, char *err, size_t errcap)
{
    ustat_state_t *s = st_of(cfg);
    const sim_campaign_spec_t *sp = cfg->spec;
    memset(s, 0, sizeof(*s));
    s->tree = 1;
    s->bins = 1u << sp->tree_depth;
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.mechanism = DPM_MECH_ID_USTAT_TREE;
    c.tree_depth = sp->tree_depth;
    c.tree_grr_levels = sp->tree_grr_levels;
    snprintf(cfg->label, sizeof(cfg->label), "ustat_tree eps=%s depth=%u grr_levels=%u",
             sp->eps_text[cfg->eps_index], sp->tree_depth, sp->tree_grr_levels);
    if (common_init(cfg, &c, err, errcap) != 0) {
        return -1;
    }
    if (dpm_ustat_tree_params_init(&s->tp, &cfg->mech.params.ustat_tree) != DPM_OK) {
        return sim_mech_params_refused(cfg, err, errcap);
    }
    return 0;
}

/* Kendall: every reporting device's pair, once: the binned histogram and the sample's tau_a. */
static int kendall_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                           size_t errcap)
{
    ustat_state_t *s = st_of(cfg);
    int include[SIM_MAX_GROUPS];
    uint64_t n = 0;
    for (uint32_t g = 0; g < SIM_MAX_GROUPS; g++) {
        include[g] = cfg->group_map[g] >= 0;
        n += g < pop->ngroups && include[g] ? pop->group_size[g] : 0;
    }
    sim_pairs_model_init(&s->pairs, cfg->sc, pop);
    int sample = n <= KENDALL_SAMPLE_MAX;
    uint64_t *xy = sample ? malloc((size_t)(n ? n : 1) * sizeof(uint64_t)) : NULL;
    if (sample && xy == NULL) {
        snprintf(err, errcap, "campaign '%s': out of memory for the pairs", cfg->spec->name);
        return -1;
    }
    uint64_t at = 0;
    sim_progress_t prog;
    char prefix[128];
    snprintf(prefix, sizeof(prefix), "%s: the pairs", cfg->label);
    sim_progress_init(&prog, cfg->progress, pop->devices, "devices", prefix);
    sim_pairs_realize(&s->pairs, pop, include, s->bins, threads, &prog, s->pair_hist, xy, &at);
    sim_progress_done(&prog);
    cfg->reporting = at;
    double binned = NAN, own = NAN;
    if (dpm_ustat_bins_exact(&s->bp, s->pair_hist, NULL, TIE_WEIGHT, &binned) != DPM_OK) {
        free(xy);
        snprintf(err, errcap, "campaign '%s': fewer than 2 devices hold pairs (raise devices)",
                 cfg->spec->name);
        return -1;
    }
    if (sample) {
        uint64_t *scratch = malloc((size_t)at * sizeof(uint64_t));
        if (scratch == NULL) {
            free(xy);
            snprintf(err, errcap, "campaign '%s': out of memory for the pairs", cfg->spec->name);
            return -1;
        }
        own = sim_pairs_tau_a(xy, (size_t)at, scratch);
        free(scratch);
        free(xy);
    }
    static const char *const kind[] = {"tau", "tau_binned", "tau_sample"};
    static const char *const name[] = {"model", "binned", "sample"};
    double truth[] = {sim_pairs_model_tau(&s->pairs, pop, include), binned, own};
    return sim_mech_items(cfg, "tau", sample ? 3u : 2u, kind, name, truth, err, errcap);
}

static int ustat_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                         size_t errcap)
{
    ustat_state_t *s = st_of(cfg);
    if (s->kendall) {
        return kendall_prepare(cfg, pop, threads, err, errcap);
    }
    if (sim_mech_roc_model(cfg, pop, s->edges, s->bins - 1, "example", &s->model, err, errcap) !=
        0) {
        return -1;
    }
    int include[SIM_MAX_GROUPS];
    sim_mech_measured(cfg, include);
    sim_roc_truth_counts(s->model, pop, include, threads, NULL, s->pos, s->neg, &cfg->reporting);
    double tpr[DPM_MAX_BINS + 1], fpr[DPM_MAX_BINS + 1];
    if (sim_mech_binned_auc(cfg, s->pos, s->neg, s->bins, tpr, fpr, &s->auc_binned, err, errcap) !=
        0) {
        return -1;
    }
    s->auc_model = sim_roc_model_auc(cfg->sc, pop, include);
    static const char *const kind[2] = {"auc", "auc_binned"};
    static const char *const name[2] = {"model", "binned"};
    const double truth[2] = {s->auc_model, s->auc_binned};
    return sim_mech_items(cfg, "auc", 2, kind, name, truth, err, errcap);
}

static int ustat_participates(const sim_cfg_t *cfg, const sim_block_t *b)
{
    return st_of(cfg)->kendall || b->conf.tp + b->conf.fn + b->conf.fp + b->conf.tn == 1;
}

static dpm_status_t ustat_report(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                                 uint32_t run, dpm_rand_t *r, dpm_report_t *rep)
{
    const ustat_state_t *s = st_of(cfg);
    uint16_t bin[1];
    dpm_ustat_example_t ex;
    memset(&ex, 0, sizeof(ex));
    if (s->kendall) {
        sim_pairs_device(&s->pairs, b, device, &ex.score, &ex.score2); /* label 0 */
    } else if (s->model != NULL) {
        sim_roc_device_bins(s->model, b, device, bin);
        ex.score = s->score[bin[0]];
        ex.label = b->conf.tp + b->conf.fn; /* 1 for the positive example */
    } else {
        return DPM_ERR_PARAM;
    }
    dpm_receipt_issuer_t iss = DPM_RECEIPT_ISSUER_INIT;
    dpm_receipt_t rc;
    dpm_status_t st = dpm_receipt_unmetered(&iss, &cfg->mech, run, &rc);
    if (st == DPM_OK) {
        st = s->tree ? dpm_mech_report_ustat_tree(&cfg->mech, r, &iss, &rc, &ex, rep)
                     : dpm_mech_report_ustat_bins(&cfg->mech, r, &iss, &rc, &ex, rep);
    }
    return st;
}

/* ---- aggregates ------------------------------------------------------------------------------ */

static void bins_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg)
{
    (void)dpm_ustat_bins_agg_init((dpm_ustat_bins_agg_t *)agg->data.bytes, st_of(cfg)->bp.domain);
}

static dpm_status_t bins_agg_add(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep)
{
    return dpm_ustat_bins_agg_add((dpm_ustat_bins_agg_t *)agg->data.bytes, &st_of(cfg)->bp,
                                  rep->body.ustat_bins.value, rep->body.ustat_bins.label);
}

static dpm_status_t bins_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src)
{
    (void)cfg;
    return dpm_ustat_bins_agg_merge((dpm_ustat_bins_agg_t *)dst->data.bytes,
                                    (const dpm_ustat_bins_agg_t *)src->data.bytes);
}

static void tree_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg)
{
    (void)cfg;
    memset(agg->data.bytes, 0, sizeof(tree_agg_t));
}

/* As dpm_ustat_tree_agg_add, on the inline sums. */
static dpm_status_t tree_agg_add(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep)
{
    const ustat_state_t *s = st_of(cfg);
    tree_agg_t *a = (tree_agg_t *)agg->data.bytes;
    const dpm_ustat_tree_report_t *t = &rep->body.ustat_tree;
    if (t->label > 1 || t->level < 1 || t->level > s->tp.depth || (t->row >> t->level) != 0) {
        return DPM_ERR_PROTOCOL;
    }
    size_t base = (size_t)1 << t->level;
    if (t->level <= s->tp.grr_levels) {
        if (t->row != 0 || (t->value >> t->level) != 0) {
            return DPM_ERR_PROTOCOL;
        }
        a->sums[t->label][base + t->value]++;
    } else {
        if (t->value > 1) {
            return DPM_ERR_PROTOCOL;
        }
        a->sums[t->label][base + t->row] += 1 - 2 * (int64_t)t->value;
    }
    a->level_reports[t->label][t->level]++;
    a->reports[t->label]++;
    return DPM_OK;
}

static dpm_status_t tree_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src)
{
    (void)cfg;
    tree_agg_t *d = (tree_agg_t *)dst->data.bytes;
    const tree_agg_t *s = (const tree_agg_t *)src->data.bytes;
    for (int c = 0; c < 2; c++) {
        d->reports[c] += s->reports[c];
        for (size_t l = 0; l <= DPM_USTAT_EST_MAX_DEPTH; l++) {
            d->level_reports[c][l] += s->level_reports[c][l];
        }
        for (size_t i = 0; i < ((size_t)2 << SIM_TREE_MAX_DEPTH); i++) {
            d->sums[c][i] += s->sums[c][i];
        }
    }
    return DPM_OK;
}

/* ---- exact mode ------------------------------------------------------------------------------ */

/* n reports of true histogram h (d values) through a GRR (keep p, other q) added to out. */
static void grr_draw(sim_rng_t *rng, const uint64_t *h, uint32_t d, double p, double q,
                     uint64_t *out)
{
    double w[DPM_MAX_GRR_K], tmp[DPM_MAX_GRR_K];
    uint64_t spread[DPM_MAX_GRR_K], rest = 0;
    for (uint32_t a = 0; a < DPM_MAX_GRR_K; a++) {
        w[a] = 1.0;
    }
    for (uint32_t a = 0; a < d; a++) {
        uint64_t kept = sim_rng_binomial(rng, h[a], p - q);
        out[a] += kept;
        rest += h[a] - kept;
    }
    sim_rng_multinomial(rng, rest, w, d, tmp, spread);
    for (uint32_t a = 0; a < d; a++) {
        out[a] += spread[a];
    }
}

static int bins_exact(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_rng_t *rng, sim_agg_t *agg)
{
    (void)pop;
    const ustat_state_t *s = st_of(cfg);
    dpm_ustat_bins_agg_t *a = (dpm_ustat_bins_agg_t *)agg->data.bytes;
    uint32_t k = s->bins;
    if (s->bp.kernel == DPM_USTAT_KENDALL) {
        grr_draw(rng, s->pair_hist, k * k, s->bp.p, s->bp.q, a->count[0]);
    } else if (s->bp.kernel == DPM_USTAT_AUC_PRIVATE_LABEL) {
        uint64_t h[DPM_MAX_GRR_K];
        for (uint32_t b = 0; b < k; b++) {
            h[b] = s->neg[b];
            h[k + b] = s->pos[b];
        }
        grr_draw(rng, h, 2 * k, s->bp.p, s->bp.q, a->count[0]);
    } else {
        grr_draw(rng, s->neg, k, s->bp.p, s->bp.q, a->count[0]);
        grr_draw(rng, s->pos, k, s->bp.p, s->bp.q, a->count[1]);
    }
    a->reports = cfg->reporting;
    return 0;
}

static uint32_t parity(uint32_t x)
{
    x ^= x >> 16;
    x ^= x >> 8;
    x ^= x >> 4;
    x ^= x >> 2;
    x ^= x >> 1;
    return x & 1u;
}

static int tree_exact(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_rng_t *rng, sim_agg_t *agg)
{
    (void)pop;
    const ustat_state_t *s = st_of(cfg);
    tree_agg_t *a = (tree_agg_t *)agg->data.bytes;
    uint32_t depth = s->tp.depth, d = s->bins;
    double w[DPM_MAX_BINS], tmp[DPM_MAX_BINS];
    for (uint32_t i = 0; i < DPM_MAX_BINS; i++) {
        w[i] = 1.0; /* uniform levels and rows */
    }
    for (int c = 0; c < 2; c++) {
        const uint64_t *leaf = c ? s->pos : s->neg;
        /* per level, the true node histogram of the examples reporting on it */
        uint64_t node[DPM_USTAT_EST_MAX_DEPTH + 1][DPM_MAX_BINS];
        memset(node, 0, sizeof(node));
        for (uint32_t x = 0; x < d; x++) {
            uint64_t per[DPM_USTAT_EST_MAX_DEPTH];
            sim_rng_multinomial(rng, leaf[x], w, depth, tmp, per);
            for (uint32_t l = 1; l <= depth; l++) {
                node[l][x >> (depth - l)] += per[l - 1];
            }
        }
        for (uint32_t l = 1; l <= depth; l++) {
            uint32_t width = 1u << l;
            uint64_t m = 0;
            for (uint32_t v = 0; v < width; v++) {
                m += node[l][v];
            }
            a->level_reports[c][l] = m;
            a->reports[c] += m;
            int64_t *sums = &a->sums[c][width];
            if (l <= s->tp.grr_levels) {
                uint64_t out[DPM_MAX_BINS] = {0};
                grr_draw(rng, node[l], width, s->tp.grr_p[l - 1], s->tp.grr_q[l - 1], out);
                for (uint32_t v = 0; v < width; v++) {
                    sums[v] = (int64_t)out[v];
                }
                continue;
            }
            for (uint32_t v = 0; v < width; v++) {
                uint64_t rows[DPM_MAX_BINS];
                sim_rng_multinomial(rng, node[l][v], w, width, tmp, rows);
                for (uint32_t j = 0; j < width; j++) {
                    int64_t flipped = (int64_t)sim_rng_binomial(rng, rows[j], 1.0 - s->tp.rr_p);
                    int64_t sum = (int64_t)rows[j] - 2 * flipped;
                    sums[j] += parity(j & v) ? -sum : sum;
                }
            }
        }
    }
    return 0;
}

/* ---- estimates ----------------------------------------------------------------------------- */

static void put(const sim_cfg_t *cfg, sim_item_run_t *out, const dpm_ustat_estimate_t *e,
                int interval)
{
    for (uint32_t i = 0; i < cfg->nitems; i++) {
        out[i].est = e->value;
        out[i].sd = e->sd;
        out[i].lo = interval ? e->ci_lo : NAN;
        out[i].hi = interval ? e->ci_hi : NAN;
        out[i].flags = interval ? e->ci_flags : 0u;
    }
}

static void bins_estimate(const sim_cfg_t *cfg, const sim_agg_t *agg, uint32_t run,
                          sim_item_run_t *out, void *ext)
{
    (void)run;
    (void)ext;
    dpm_ustat_estimate_t e;
    if (dpm_ustat_bins_estimate(&st_of(cfg)->bp, (const dpm_ustat_bins_agg_t *)agg->data.bytes,
                                TIE_WEIGHT, cfg->sc->confidence, &e) == DPM_OK &&
        e.defined) {
        put(cfg, out, &e, 1);
    }
}

static void tree_estimate(const sim_cfg_t *cfg, const sim_agg_t *agg, uint32_t run,
                          sim_item_run_t *out, void *ext)
{
    (void)run;
    (void)ext;
    const ustat_state_t *s = st_of(cfg);
    const tree_agg_t *t = (const tree_agg_t *)agg->data.bytes;
    dpm_ustat_tree_agg_t a;
    memset(&a, 0, sizeof(a));
    a.depth = s->tp.depth;
    a.grr_levels = s->tp.grr_levels;
    memcpy(a.reports, t->reports, sizeof(a.reports));
    memcpy(a.level_reports, t->level_reports, sizeof(a.level_reports));
    a.sums[0] = (int64_t *)t->sums[0]; /* read only: the estimator takes a const aggregate */
    a.sums[1] = (int64_t *)t->sums[1];
    dpm_ustat_tree_opts_t o = {DPM_USTAT_TREE_CHOOSE_A, 0.0, TIE_WEIGHT};
    dpm_ustat_tree_estimate_t e;
    if (dpm_ustat_tree_estimate(&s->tp, &a, &o, &e) == DPM_OK && e.est.defined) {
        put(cfg, out, &e.est, 0);
    }
}

static void ustat_summary(const sim_result_t *res, char *buf, size_t cap)
{
    sim_item_summary_t m, b;
    sim_result_summary(res, 0, &m);
    sim_result_summary(res, 1, &b);
    if (st_of(&res->cfg)->kendall) {
        snprintf(buf, cap,
                 "tau vs model %.4f: rmse %.3g, mean err %+.2g | vs binned %.4f: rmse %.3g, "
                 "cover %.0f%%",
                 m.truth, m.rmse, m.mean_error, b.truth, b.rmse, 100.0 * b.coverage);
        return;
    }
    snprintf(buf, cap,
             "AUC vs model %.4f: rmse %.3g, mean err %+.2g | vs binned %.4f: rmse %.3g, cover "
             "%.0f%%",
             m.truth, m.rmse, m.mean_error, b.truth, b.rmse, 100.0 * b.coverage);
}

static void ustat_describe(const sim_cfg_t *cfg, const sim_block_t *b, const dpm_report_t *rep,
                           FILE *f)
{
    int pos = b->conf.tp + b->conf.fn;
    if (st_of(cfg)->tree) {
        const dpm_ustat_tree_report_t *t = &rep->body.ustat_tree;
        fprintf(f, "statistics: 1 example, label %d\nreport: ustat_tree level %u row %u value %u\n",
                pos, t->level, t->row, t->value);
    } else if (st_of(cfg)->kendall) {
        uint32_t k = st_of(cfg)->bins, v = rep->body.ustat_bins.value;
        fprintf(f, "statistics: 1 pair of scores\nreport: ustat_bins value %u (bins %u, %u)\n", v,
                v / k, v % k);
    } else {
        fprintf(f, "statistics: 1 example, label %d\nreport: ustat_bins value %u label %u\n", pos,
                rep->body.ustat_bins.value, rep->body.ustat_bins.label);
    }
}

static void ustat_campaign_keys(const sim_scenario_t *sc, const sim_campaign_spec_t *c, FILE *f)
{
    (void)sc;
    if (c->mechanism == DPM_MECH_ID_USTAT_TREE) {
        fprintf(f, "depth = %u\ngrr_levels = %u\n", c->tree_depth, c->tree_grr_levels);
    } else {
        static const char *const kernel[] = {"auc", "auc_private_label", "kendall"};
        fprintf(f, "k = %u\nkernel = %s\n", c->ustat_k,
                kernel[c->ustat_kernel <= DPM_USTAT_KENDALL ? c->ustat_kernel : 0]);
    }
}

const sim_mech_t sim_mech_ustat_bins = {
    .name = "ustat_bins",
    .id = DPM_MECH_ID_USTAT_BINS,
    .what = "one example's score bin by k-ary randomized response (label public or randomized), "
            "or a pair of scores' bins (Kendall's tau)",
    .check = bins_check,
    .init = bins_init,
    .prepare = ustat_prepare,
    .release = sim_mech_release_model,
    .participates = ustat_participates,
    .report = ustat_report,
    .agg_init = bins_agg_init,
    .agg_add = bins_agg_add,
    .agg_merge = bins_agg_merge,
    .exact = bins_exact,
    .estimate = bins_estimate,
    .summary = ustat_summary,
    .describe = ustat_describe,
    .campaign_keys = ustat_campaign_keys,
};

const sim_mech_t sim_mech_ustat_tree = {
    .name = "ustat_tree",
    .id = DPM_MECH_ID_USTAT_TREE,
    .what = "one example's node at a random tree level by GRR or Hadamard RR (label public)",
    .check = tree_check,
    .init = tree_init,
    .prepare = ustat_prepare,
    .release = sim_mech_release_model,
    .participates = ustat_participates,
    .report = ustat_report,
    .agg_init = tree_agg_init,
    .agg_add = tree_agg_add,
    .agg_merge = tree_agg_merge,
    .exact = tree_exact,
    .estimate = tree_estimate,
    .summary = ustat_summary,
    .describe = ustat_describe,
    .campaign_keys = ustat_campaign_keys,
};
