/* SPDX-License-Identifier: Apache-2.0 */
/* tuple_mr and tuple_ml in the simulator (see mech_tuple.h). */
#include "dpm/expert/simulator.h"
#include "dpm/expert/stats.h"
#include "sim/devices/mech_tuple.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "sim/devices/mech_common.h"
#include "sim/devices/results.h"
#include "sim/devices/selection.h"
#include "sim/devices/sim_cfg.h"

#define Q16 65536.0
#define TWO32 4294967296.0

SIM_MECH_STATE(sim_tuple_state_t, tuple)
SIM_MECH_AGG(sim_tuple_agg_t, tuple)

extern const sim_mech_t sim_mech_tuple_mr, sim_mech_tuple_ml;

static int is_tuple(const sim_mech_t *m)
{
    return m == &sim_mech_tuple_mr || m == &sim_mech_tuple_ml;
}

sim_tuple_state_t *sim_tuple_state(sim_cfg_t *cfg)
{
    return is_tuple(cfg->m) ? st_of(cfg) : NULL;
}

const sim_tuple_state_t *sim_tuple_state_c(const sim_cfg_t *cfg)
{
    return is_tuple(cfg->m) ? st_of(cfg) : NULL;
}

sim_tuple_agg_t *sim_tuple_agg(sim_agg_t *agg)
{
    return agg_of(agg);
}

const sim_tuple_agg_t *sim_tuple_agg_c(const sim_agg_t *agg)
{
    return agg_c(agg);
}

uint32_t sim_tuple_item(const sim_cfg_t *cfg, uint32_t j, int g, int h)
{
    uint32_t d = cfg->d, per = d + d * (d - 1) / 2, i = (uint32_t)g;
    if (h >= 0) { /* pairs (a, b > a) after the groups */
        i = d;
        for (uint32_t a = 0; a < (uint32_t)g; a++) {
            i += d - 1 - a;
        }
        i += (uint32_t)h - (uint32_t)g - 1u;
    }
    return j * per + i;
}

/* ---- scenario ------------------------------------------------------------------------------ */

static int group_has_metric(const sim_group_spec_t *g, dpm_metric_t m)
{
    return g->scores.set || g->data || g->metric[m - 1].kind != SIM_DIST_NONE;
}

static int tuple_check(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                       size_t errcap)
{
    if (c->nmetrics == 0) {
        snprintf(err, errcap, "needs metrics = (1 to 4 of tpr, fpr, accuracy, precision)");
        return -1;
    }
    if (c->ngroups < 2) {
        *line = c->groups_line;
        snprintf(err, errcap, "groups: 2 to %d group names (a disparity needs two)",
                 SIM_MAX_GROUPS);
        return -1;
    }
    if (c->bins_line != 0) {
        *line = c->bins_line;
        snprintf(err, errcap, "bins / edges are for histogram mechanisms (roc_hist)");
        return -1;
    }
    if (c->split_paper && c->nmetrics != 1) {
        *line = c->metrics_line;
        snprintf(err, errcap, "split = paper supports one metric only");
        return -1;
    }
    for (uint32_t m = 0; m < c->nmetrics; m++) {
        for (uint32_t g = 0; g < c->ngroups; g++) {
            const sim_group_spec_t *gs = &sc->group[c->groups[g]];
            if (!group_has_metric(gs, c->metrics[m])) {
                *line = c->metrics_line;
                snprintf(err, errcap, "metric '%s' has no distribution in group '%s'",
                         sim_metric_name(c->metrics[m]), gs->name);
                return -1;
            }
        }
    }
    return 0;
}

/* ---- configuration ------------------------------------------------------------------------- */

static dpm_disp_mech_t disp_mech(const sim_cfg_t *cfg)
{
    return cfg->m == &sim_mech_tuple_mr ? DPM_DISP_MR : DPM_DISP_ML;
}

/* PAPER REPRODUCTION ONLY: the paper-split device (tuple_paper.h). */
static int init_paper(sim_cfg_t *cfg, sim_tuple_state_t *s, char *err, size_t errcap)
{
    tuple_paper_t *pm = &s->paper;
    dpm_status_t st = tuple_paper_init(pm, disp_mech(cfg), cfg->d, cfg->eps);
    if (st != DPM_OK) {
        snprintf(err, errcap, "campaign '%s' eps %s: paper split refused: %s", cfg->spec->name,
                 cfg->spec->eps_text[cfg->eps_index], dpm_strerror(st));
        return -1;
    }
    s->params = pm->params;
    cfg->eps_implemented = pm->eps_true;
    s->noise.keep_g = pm->group_grr.keep;
    s->noise.other_g = pm->group_grr.other;
    s->noise.keep_v = pm->value_rr.keep;
    s->noise.other_v = pm->value_rr.other;
    s->noise.frac_bits = pm->frac_bits;
    if (s->noise.ml) {
        s->noise.t_kept = (double)pm->value_lap.scale_num / (double)pm->value_lap.scale_den;
        s->noise.t_flip = (double)pm->flip_num / (double)pm->flip_den;
    }
    return 0;
}

int sim_tuple_sdk_build(dpm_disp_mech_t mech, uint32_t d, const dpm_metric_t *metrics,
                        uint32_t nmetrics, dpm_eps_t eps, uint32_t id, dpm_mech_t *m,
                        dpm_disp_params_t *params, sim_tuple_noise_t *noise, const char **why)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = id;
    c.mechanism = mech == DPM_DISP_MR ? DPM_MECH_ID_TUPLE_MR : DPM_MECH_ID_TUPLE_ML;
    c.eps = DPM_EPS_Q16(eps);
    c.budget = DPM_EPS_Q16(eps);
    c.period_seconds = SIM_PERIOD_SECONDS;
    c.groups = d;
    c.nmetrics = nmetrics;
    memcpy(c.metrics, metrics, nmetrics * sizeof(metrics[0]));
    c.frac_bits = mech == DPM_DISP_ML ? DPM_FRAC_BITS : 0;
    *why = "?";
    if (dpm_mech_init(m, &c, why) != DPM_OK) {
        return -1;
    }
    const dpm_tuple_t *t = &m->params.tuple;
    memset(noise, 0, sizeof(*noise));
    noise->ml = mech == DPM_DISP_ML;
    noise->keep_g = t->group_grr.keep;
    noise->other_g = t->group_grr.other;
    dpm_status_t st;
    if (!noise->ml) {
        noise->keep_v = t->value.rr.keep;
        noise->other_v = t->value.rr.other;
        st = dpm_disp_params_campaign_mr(params, d, t->group_grr.keep, t->group_grr.other,
                                         t->value.rr.keep);
    } else {
        double scale = (double)t->value.lap.scale_num / (double)t->value.lap.scale_den;
        noise->frac_bits = t->frac_bits;
        noise->t_kept = noise->t_flip = scale;
        st = dpm_disp_params_campaign_ml(params, d, t->group_grr.keep, t->group_grr.other, scale,
                                         scale, t->frac_bits);
    }
    if (st != DPM_OK) {
        *why = "the estimator refuses the mechanism's parameters";
        return -1;
    }
    return 0;
}

/* The SDK's mechanism, built from the campaign exactly as a device builds it. */
static int init_sdk(sim_cfg_t *cfg, sim_tuple_state_t *s, char *err, size_t errcap)
{
    const sim_campaign_spec_t *sp = cfg->spec;
    const char *why = "?";
    if (sim_tuple_sdk_build(disp_mech(cfg), cfg->d, sp->metrics, sp->nmetrics, cfg->eps, sp->id,
                            &cfg->mech, &s->params, &s->noise, &why) != 0) {
        return sim_mech_refused(cfg, why, err, errcap);
    }
    cfg->checked = 1;
    cfg->eps_implemented = cfg->mech.eps_implemented / Q16;
    return 0;
}

static int tuple_init(sim_cfg_t *cfg, char *err, size_t errcap)
{
    sim_tuple_state_t *s = st_of(cfg);
    memset(s, 0, sizeof(*s));
    s->nmetrics = cfg->spec->nmetrics;
    memcpy(s->metrics, cfg->spec->metrics, s->nmetrics * sizeof(s->metrics[0]));
    s->noise.ml = disp_mech(cfg) == DPM_DISP_ML;
    cfg->paper = cfg->spec->split_paper;
    snprintf(cfg->label, sizeof(cfg->label), "%s eps=%s %s", cfg->m->name,
             cfg->spec->eps_text[cfg->eps_index],
             cfg->paper ? "(paper split: NOT the stated eps)" : "(SDK split)");
    return cfg->paper ? init_paper(cfg, s, err, errcap) : init_sdk(cfg, s, err, errcap);
}

static int tuple_participates(const sim_cfg_t *cfg, const sim_block_t *b)
{
    const sim_tuple_state_t *s = st_of(cfg);
    for (uint32_t j = 0; j < s->nmetrics; j++) {
        if (!(b->defined & (1u << (s->metrics[j] - 1)))) {
            return 0; /* a metric undefined for it (TPR with no positive): it sends nothing */
        }
    }
    return 1;
}

/* Neumaier-compensated running sum. */
typedef struct {
    double s, c;
} ksum_t;

static void ksum_add(ksum_t *k, double x)
{
    double t = k->s + x;
    k->c += fabs(k->s) >= fabs(x) ? (k->s - t) + x : (x - t) + k->s;
    k->s = t;
}

static void name_items(sim_cfg_t *cfg, const sim_tuple_state_t *s)
{
    uint32_t d = cfg->d, i = 0;
    for (uint32_t j = 0; j < s->nmetrics; j++) {
        const char *metric = sim_metric_name(s->metrics[j]);
        for (uint32_t g = 0; g < d; g++, i++) {
            sim_item_t *it = &cfg->items[i];
            snprintf(it->metric, sizeof(it->metric), "%s", metric);
            snprintf(it->kind, sizeof(it->kind), "group");
            snprintf(it->name, sizeof(it->name), "%s", sim_cfg_group_name(cfg, g));
            it->g = (int)g;
            it->truth = (s->mean[j][g] + 1.0) / 2.0;
        }
        for (uint32_t g = 0; g < d; g++) {
            for (uint32_t h = g + 1; h < d; h++, i++) {
                sim_item_t *it = &cfg->items[i];
                snprintf(it->metric, sizeof(it->metric), "%s", metric);
                snprintf(it->kind, sizeof(it->kind), "gap");
                snprintf(it->name, sizeof(it->name), "%s-%s", sim_cfg_group_name(cfg, g),
                         sim_cfg_group_name(cfg, h));
                it->g = (int)g;
                it->h = (int)h;
                it->truth = (s->mean[j][g] - s->mean[j][h]) / 2.0;
            }
        }
    }
}

/* Truth: per group the devices that report, per metric the mean and second moment of v. */
static int tuple_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                         size_t errcap)
{
    (void)threads;
    sim_tuple_state_t *s = st_of(cfg);
    ksum_t sum[DPM_CAMPAIGN_MAX_METRICS][SIM_MAX_GROUPS],
        sq[DPM_CAMPAIGN_MAX_METRICS][SIM_MAX_GROUPS];
    memset(sum, 0, sizeof(sum));
    memset(sq, 0, sizeof(sq));
    memset(s->n, 0, sizeof(s->n));
    cfg->reporting = 0;
    for (size_t i = 0; i < pop->nblocks; i++) {
        const sim_block_t *b = &pop->block[i];
        if (!sim_cfg_participates(cfg, b)) {
            continue;
        }
        uint32_t g = (uint32_t)cfg->group_map[b->group];
        double c = (double)b->count;
        cfg->reporting += b->count;
        s->n[g] += c;
        for (uint32_t j = 0; j < s->nmetrics; j++) {
            uint32_t m = s->metrics[j] - 1u;
            double v = (2.0 * b->num[m] - (double)b->den[m]) / (double)b->den[m];
            ksum_add(&sum[j][g], c * v);
            ksum_add(&sq[j][g], c * v * v);
        }
    }
    for (uint32_t g = 0; g < cfg->d; g++) {
        if (s->n[g] <= 0.0) {
            snprintf(err, errcap,
                     "campaign '%s': group '%s' has no reporting device (raise devices or its "
                     "share)",
                     cfg->spec->name, sim_cfg_group_name(cfg, g));
            return -1;
        }
        for (uint32_t j = 0; j < s->nmetrics; j++) {
            s->mean[j][g] = (sum[j][g].s + sum[j][g].c) / s->n[g];
            s->nu2[j][g] = (sq[j][g].s + sq[j][g].c) / s->n[g];
        }
    }
    uint32_t per = cfg->d + cfg->d * (cfg->d - 1) / 2;
    if (sim_cfg_items(cfg, s->nmetrics * per) != 0) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    name_items(cfg, s);
    return 0;
}

/* ---- the device ---------------------------------------------------------------------------- */

/* Its statistics: the metrics as exact rationals, from its confusion counts when it has them
 * (the SDK's dpm_metric_ratio, as an app does). */
static dpm_status_t device_values(const sim_tuple_state_t *s, const sim_block_t *b, dpm_ratio_t *v)
{
    for (uint32_t j = 0; j < s->nmetrics; j++) {
        dpm_metric_t m = s->metrics[j];
        if (b->has_conf) {
            dpm_status_t st = dpm_metric_ratio(&b->conf, m, &v[j]);
            if (st != DPM_OK) {
                return st;
            }
        } else {
            v[j].num = b->num[m - 1];
            v[j].den = b->den[m - 1];
        }
    }
    return DPM_OK;
}

/* PAPER REPRODUCTION ONLY: the paper-split device's tuple wrapped in a report. */
static dpm_status_t paper_report(const sim_cfg_t *cfg, const sim_tuple_state_t *s, dpm_rand_t *r,
                                 uint32_t run, uint32_t group, const dpm_ratio_t *v,
                                 dpm_report_t *rep)
{
    memset(rep, 0, sizeof(*rep));
    dpm_status_t st = tuple_paper_perturb(&s->paper, r, group, v, &rep->body.tuple);
    for (int half = 0; half < 2 && st == DPM_OK; half++) {
        uint64_t w = 0;
        st = dpm_rand_bits(r, 64, &w);
        for (int i = 0; i < 8; i++) {
            rep->report_id[half * 8 + i] = (uint8_t)(w >> (8 * i));
        }
    }
    rep->campaign_id = cfg->spec->id;
    rep->period = run;
    rep->mechanism = cfg->spec->mechanism;
    rep->eps = cfg->eps; /* the nominal ε: the paper split does not deliver it */
    return st;
}

static dpm_status_t tuple_report(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                                 uint32_t run, dpm_rand_t *r, dpm_report_t *rep)
{
    (void)device;
    const sim_tuple_state_t *s = st_of(cfg);
    dpm_ratio_t v[DPM_CAMPAIGN_MAX_METRICS];
    dpm_status_t st = device_values(s, b, v);
    uint32_t group = (uint32_t)cfg->group_map[b->group];
    if (st != DPM_OK) {
        return st;
    }
    if (cfg->paper) {
        return paper_report(cfg, s, r, run, group, v, rep);
    }
    dpm_receipt_issuer_t iss = DPM_RECEIPT_ISSUER_INIT;
    dpm_receipt_t rc; /* a simulated device has no ledger: the receipt is unmetered */
    st = dpm_receipt_unmetered(&iss, &cfg->mech, run, &rc);
    return st == DPM_OK ? dpm_mech_report_tuple(&cfg->mech, r, &iss, &rc, group, v, rep) : st;
}

/* ---- aggregates ---------------------------------------------------------------------------- */

static void tuple_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg)
{
    const sim_tuple_state_t *s = st_of(cfg);
    sim_tuple_agg_t *a = sim_tuple_agg(agg);
    a->nmetrics = s->nmetrics;
    for (uint32_t j = 0; j < s->nmetrics; j++) {
        (void)dpm_disp_agg_init(&a->m[j], &s->params); /* params checked in init */
    }
}

static dpm_status_t tuple_agg_add(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep)
{
    sim_tuple_agg_t *a = sim_tuple_agg(agg);
    const dpm_tuple_report_t *t = &rep->body.tuple;
    if (t->nmetrics != a->nmetrics || t->group >= cfg->d) {
        return DPM_ERR_PROTOCOL; /* the paper device's reports are not checked by the SDK */
    }
    for (uint32_t j = 0; j < a->nmetrics; j++) {
        dpm_status_t st = dpm_disp_agg_add(&a->m[j], t->group, t->value[j]);
        if (st != DPM_OK) {
            return st;
        }
    }
    return DPM_OK;
}

static dpm_status_t tuple_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src)
{
    (void)cfg;
    sim_tuple_agg_t *a = sim_tuple_agg(dst);
    const sim_tuple_agg_t *b = sim_tuple_agg_c(src);
    for (uint32_t j = 0; j < a->nmetrics; j++) {
        dpm_status_t st = dpm_disp_agg_merge(&a->m[j], &b->m[j]);
        if (st != DPM_OK) {
            return st;
        }
    }
    return DPM_OK;
}

/* ---- exact mode ----------------------------------------------------------------------------
 * One run's aggregate drawn at the aggregate level, distributed as the sum of the devices'
 * reports (same population, same quantized mechanism), without running any device. For every
 * block of c identical devices holding (group g, values x_j):
 *   kept_b = Binomial(c, a)                   reports that keep their group (a = keep_g / 2^32)
 * per source group g, the flipped reports F_g = sum_b (c_b - kept_b) spread uniformly over the
 * d - 1 other groups: a multinomial (GRR gives each other group other_g / 2^32). Then, per
 * metric j:
 *   tuple_mr  kept: #(+1) = Binomial(kept_b, p), p = x b + (1 - x)(1 - b) (Harmony coin then RR,
 *             b = keep_v / 2^32); flipped into h: #(+1) = Binomial(F_h, 1/2) exactly (a fair
 *             coin through RR); the sum is 2 #(+1) - n.
 *   tuple_ml  kept: n floor(v 2^F) + Binomial(kept_b, frac) (the device's unbiased randomized
 *             rounding) + the Laplace noise; noise of all kept reports of a group is one sum of
 *             n discrete Laplace variables (NB - NB', sim_rng_dlap_sum), likewise for the
 *             flipped reports (value 0, scale t_flip).
 * Exact in distribution: the decomposition (multinomials as conditional binomials, sums of iid
 * geometrics as negative binomials, independence across metrics and reports). Floating point:
 * the probabilities (rationals of 32/64-bit integers rounded to double) and the samplers of
 * sim_rng.h (relative errors ~1e-15 per pmf value, far below anything a finite number of runs
 * can detect; see the two-sample test in tests/stat/test_sim_exact.c). Not sampled: the sum of
 * squares of M_L reports (only the collector's plug-in nu2 uses it; dpm-sim's intervals use the
 * true or the worst-case nu2), and the tuple_ml report dropped with probability < 2^-45. */

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b, int64_t *rem)
{
    int64_t q = a / b, r = a - q * b;
    if (r < 0) {
        q -= 1;
        r += b;
    }
    *rem = r;
    return q;
}

/* Sum of the kept reports' values of one block (before the Laplace noise, added per group). */
static int64_t kept_values(sim_rng_t *rng, const sim_tuple_noise_t *nz, uint64_t kept, uint32_t num,
                           uint32_t den)
{
    if (!nz->ml) {
        /* Harmony coin Bernoulli(x), then RR keeping it with b: Pr[+1] = x b + (1 - x)(1 - b) */
        double b = nz->keep_v / TWO32, nb = nz->other_v / TWO32;
        double p = ((double)num * b + (double)(den - num) * nb) / (double)den;
        uint64_t plus = sim_rng_binomial(rng, kept, p);
        return 2 * (int64_t)plus - (int64_t)kept;
    }
    /* the device's randomized rounding of v = 2x - 1 to Q(F): floor plus Bernoulli(frac) */
    int64_t rem = 0;
    int64_t scaled = (2 * (int64_t)num - (int64_t)den) * ((int64_t)1 << nz->frac_bits);
    int64_t q = floor_div(scaled, (int64_t)den, &rem);
    uint64_t up = sim_rng_binomial(rng, kept, (double)rem / (double)den);
    return (int64_t)kept * q + (int64_t)up;
}

/* Flipped reports of each source group spread uniformly over the other d - 1 groups. */
static void spread_flips(sim_rng_t *rng, uint32_t d, const uint64_t *out, uint64_t *in)
{
    for (uint32_t g = 0; g < d; g++) {
        uint64_t rest = out[g];
        uint32_t left = d - 1;
        for (uint32_t h = 0; h < d; h++) {
            if (h == g) {
                continue;
            }
            uint64_t c = left == 1 ? rest : sim_rng_binomial(rng, rest, 1.0 / left);
            in[h] += c;
            rest -= c;
            left--;
        }
    }
}

/* Add a signed 64-bit amount to a group's exact 128-bit sum. */
static void acc_add(dpm_disp_acc_t *acc, int64_t v)
{
    uint64_t add = (uint64_t)v, lo = acc->lo + add;
    acc->hi += (v < 0 ? UINT64_MAX : 0u) + (lo < acc->lo ? 1u : 0u);
    acc->lo = lo;
}

static int tuple_exact(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_rng_t *rng, sim_agg_t *agg)
{
    const sim_tuple_state_t *s = st_of(cfg);
    const sim_tuple_noise_t *nz = &s->noise;
    sim_tuple_agg_t *ta = sim_tuple_agg(agg);
    uint32_t d = cfg->d;
    uint64_t kept[SIM_MAX_GROUPS] = {0}, out[SIM_MAX_GROUPS] = {0}, in[SIM_MAX_GROUPS] = {0};
    double a = nz->keep_g / TWO32;
    for (size_t i = 0; i < pop->nblocks; i++) {
        const sim_block_t *b = &pop->block[i];
        if (!sim_cfg_participates(cfg, b)) {
            continue;
        }
        uint32_t g = (uint32_t)cfg->group_map[b->group];
        uint64_t k = sim_rng_binomial(rng, b->count, a);
        if (nz->ml && k > (uint64_t)(INT64_MAX >> (nz->frac_bits + 2))) {
            return -1; /* kept * 2^F could leave int64 */
        }
        kept[g] += k;
        out[g] += b->count - k;
        for (uint32_t j = 0; j < s->nmetrics; j++) {
            uint32_t m = s->metrics[j] - 1u;
            acc_add(&ta->m[j].sum[g], kept_values(rng, nz, k, b->num[m], b->den[m]));
        }
    }
    spread_flips(rng, d, out, in);
    for (uint32_t h = 0; h < d; h++) {
        for (uint32_t j = 0; j < s->nmetrics; j++) {
            dpm_disp_agg_t *ag = &ta->m[j];
            ag->count[h] = kept[h] + in[h];
            ag->total += kept[h] + in[h];
            if (!nz->ml) {
                uint64_t plus = sim_rng_binomial(rng, in[h], 0.5); /* a fair coin through RR */
                acc_add(&ag->sum[h], 2 * (int64_t)plus - (int64_t)in[h]);
            } else if (nz->t_kept == nz->t_flip) {
                acc_add(&ag->sum[h], sim_rng_dlap_sum(rng, kept[h] + in[h], nz->t_kept));
            } else {
                acc_add(&ag->sum[h], sim_rng_dlap_sum(rng, kept[h], nz->t_kept));
                acc_add(&ag->sum[h], sim_rng_dlap_sum(rng, in[h], nz->t_flip));
            }
        }
    }
    return 0;
}

/* ---- estimates ----------------------------------------------------------------------------- */

/* Per metric: every pair at once against the truth (sim/devices/selection.h). */
static void *tuple_ext_new(const sim_cfg_t *cfg, uint32_t runs)
{
    (void)runs;
    const sim_tuple_state_t *s = st_of(cfg);
    const char *names[SIM_SELECTION_FAMILIES];
    for (uint32_t j = 0; j < s->nmetrics; j++) {
        names[j] = sim_metric_name(s->metrics[j]);
    }
    return sim_selection_ext_new(s->nmetrics, names, 0.5); /* value scale to the metric's */
}

/* Every pair of metric j at once, against the population's true gaps. */
static void add_selection(const sim_cfg_t *cfg, uint32_t j, const dpm_disp_estimate_t *est,
                          sim_selection_ext_t *x)
{
    const sim_tuple_state_t *s = st_of(cfg);
    dpm_pairwise_t *pw = malloc(sizeof(*pw));
    double truth[DPM_PAIRWISE_MAX_PAIRS];
    for (uint32_t g = 0, k = 0; g < cfg->d; g++) {
        for (uint32_t h = g + 1; h < cfg->d; h++, k++) {
            truth[k] = s->mean[j][g] - s->mean[j][h];
        }
    }
    if (pw != NULL && dpm_disp_pairwise(est, cfg->sc->confidence, pw) == DPM_OK) {
        sim_selection_add(&x->family[j], pw, truth);
    }
    free(pw);
}

static void item_from_ci(sim_item_run_t *it, const dpm_disp_ci_t *ci)
{
    it->est = ci->est;
    it->sd = sqrt(ci->var);
    it->lo = ci->est - ci->half;
    it->hi = ci->est + ci->half;
    it->flags = ci->flags;
}

static void tuple_estimate(const sim_cfg_t *cfg, const sim_agg_t *agg, uint32_t run,
                           sim_item_run_t *out, void *ext)
{
    (void)run;
    const sim_tuple_state_t *s = st_of(cfg);
    const sim_tuple_agg_t *ta = sim_tuple_agg_c(agg);
    const sim_scenario_t *sc = cfg->sc;
    uint32_t d = cfg->d, per = d + d * (d - 1) / 2;
    for (uint32_t j = 0; j < s->nmetrics; j++) {
        double nu2[SIM_MAX_GROUPS];
        for (uint32_t g = 0; g < d; g++) {
            nu2[g] = sc->nu2_worst ? DPM_DISP_NU2_WORST : fmin(fmax(s->nu2[j][g], 0.0), 1.0);
        }
        dpm_disp_estimate_t est;
        if (dpm_disp_estimate(&s->params, &ta->m[j], sc->sizes_estimated ? NULL : s->n, nu2,
                              &est) != DPM_OK) {
            continue; /* the items stay NaN */
        }
        if (ext != NULL) {
            add_selection(cfg, j, &est, ext);
        }
        /* the collector's intervals, with their claims (dpm_disp_mean_ci, dpm_disp_gap_ci) */
        sim_item_run_t *it = out + (size_t)j * per;
        dpm_disp_ci_t ci;
        for (uint32_t g = 0; g < d; g++, it++) {
            if (dpm_disp_mean_ci(&est, g, sc->confidence, &ci) == DPM_OK) {
                item_from_ci(it, &ci);
            }
        }
        for (uint32_t g = 0; g < d; g++) {
            for (uint32_t h = g + 1; h < d; h++, it++) {
                if (dpm_disp_gap_ci(&est, g, h, sc->confidence, &ci) == DPM_OK) {
                    item_from_ci(it, &ci);
                }
            }
        }
    }
}

/* The console line: the largest true gap of the first metric, then the others' worst RMSE. */
static void tuple_summary(const sim_result_t *res, char *buf, size_t cap)
{
    const sim_cfg_t *cfg = &res->cfg;
    uint32_t best = 0;
    double best_abs = -1.0;
    for (uint32_t i = 0; i < cfg->nitems; i++) {
        const sim_item_t *it = &cfg->items[i];
        if (it->h >= 0 && strcmp(it->metric, cfg->items[0].metric) == 0 &&
            fabs(it->truth) > best_abs) {
            best_abs = fabs(it->truth);
            best = i;
        }
    }
    sim_item_summary_t sm;
    sim_result_summary(res, best, &sm);
    char sel[160] = "";
    const sim_selection_t *x = sim_selection_of(res, 0);
    if (x != NULL) {
        sim_selection_line(x, sel, sizeof(sel));
    }
    snprintf(buf, cap, "largest %s gap %s: truth %+.4f, rmse %.3g, CI cover %.0f%% | %s",
             cfg->items[best].metric, cfg->items[best].name, sm.truth, sm.rmse, 100.0 * sm.coverage,
             sel);
}

/* ---- network mode, replay, collector file -----------------------------------------------------
 */

static void tuple_describe(const sim_cfg_t *cfg, const sim_block_t *b, const dpm_report_t *rep,
                           FILE *f)
{
    const sim_tuple_state_t *s = st_of(cfg);
    fprintf(f, "statistics:");
    for (uint32_t j = 0; j < s->nmetrics; j++) {
        dpm_metric_t m = s->metrics[j];
        fprintf(f, " %s=%u/%u", sim_metric_name(m), b->num[m - 1], b->den[m - 1]);
    }
    fprintf(f, "\nreport: group %u (%s), values", rep->body.tuple.group,
            sim_cfg_group_name(cfg, rep->body.tuple.group));
    for (uint32_t j = 0; j < rep->body.tuple.nmetrics; j++) {
        fprintf(f, " %+d", rep->body.tuple.value[j]);
    }
    fprintf(f, "\n");
}

static void tuple_campaign_keys(const sim_scenario_t *sc, const sim_campaign_spec_t *c, FILE *f)
{
    (void)sc;
    fprintf(f, "groups = %u\nmetrics = ", c->ngroups);
    for (uint32_t j = 0; j < c->nmetrics; j++) {
        fprintf(f, "%s%s", j ? ", " : "", sim_metric_name(c->metrics[j]));
    }
    fprintf(f, "\n");
}

/* The two variants differ only in how a device noises its metric: one module, one list of hooks
 * (as FEDAUC_HOOKS), so that a hook added to one is added to both. */
#define TUPLE_HOOKS                                                                                \
    .check = tuple_check, .init = tuple_init, .prepare = tuple_prepare,                            \
    .participates = tuple_participates, .report = tuple_report, .agg_init = tuple_agg_init,        \
    .agg_add = tuple_agg_add, .agg_merge = tuple_agg_merge, .exact = tuple_exact,                  \
    .estimate = tuple_estimate, .ext_new = tuple_ext_new, .ext_free = free,                        \
    .ext_json = sim_selection_ext_json, .summary = tuple_summary, .describe = tuple_describe,      \
    .campaign_keys = tuple_campaign_keys

const sim_mech_t sim_mech_tuple_mr = {
    .name = "tuple_mr",
    .id = DPM_MECH_ID_TUPLE_MR,
    .what = "(group, metric): group by GRR, metric by randomized response (Harmony + RR)",
    TUPLE_HOOKS,
};

const sim_mech_t sim_mech_tuple_ml = {
    .name = "tuple_ml",
    .id = DPM_MECH_ID_TUPLE_ML,
    .what = "(group, metric): group by GRR, metric by discrete Laplace on the Q16 grid",
    TUPLE_HOOKS,
};
