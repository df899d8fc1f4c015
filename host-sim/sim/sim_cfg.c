/* SPDX-License-Identifier: Apache-2.0 */
/* Simulated configurations, the device, aggregates and truth (see sim_cfg.h). */
#include "sim/sim_cfg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define Q16 65536.0
#define PERIOD_SECONDS 86400u

static dpm_disp_mech_t disp_mech(dpm_mech_id_t id)
{
    return id == DPM_MECH_ID_TUPLE_MR ? DPM_DISP_MR : DPM_DISP_ML;
}

static int init_paper(sim_cfg_t *cfg, char *err, size_t errcap)
{
    tuple_sim_mech_t *pm = &cfg->paper_mech;
    dpm_status_t st = tuple_sim_mech_paper(pm, disp_mech(cfg->spec->mechanism), cfg->d, cfg->eps);
    if (st != DPM_OK) {
        snprintf(err, errcap, "campaign '%s' eps %s: paper split refused: %s", cfg->spec->name,
                 cfg->spec->eps_text[cfg->eps_index], dpm_strerror(st));
        return -1;
    }
    cfg->params = pm->params;
    cfg->eps_implemented = pm->eps_true;
    cfg->noise.keep_g = pm->group_grr.keep;
    cfg->noise.other_g = pm->group_grr.other;
    cfg->noise.keep_v = pm->value_rr.keep;
    cfg->noise.other_v = pm->value_rr.other;
    cfg->noise.frac_bits = pm->frac_bits;
    if (cfg->noise.ml) {
        cfg->noise.t_kept = (double)pm->value_lap.scale_num / (double)pm->value_lap.scale_den;
        cfg->noise.t_flip = (double)pm->flip_num / (double)pm->flip_den;
    }
    return 0;
}

static int init_sdk(sim_cfg_t *cfg, char *err, size_t errcap)
{
    const sim_campaign_spec_t *s = cfg->spec;
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = s->id;
    c.mechanism = s->mechanism;
    c.eps = cfg->eps;
    c.budget = cfg->eps;
    c.period_seconds = PERIOD_SECONDS;
    c.groups = cfg->d;
    c.nmetrics = s->nmetrics;
    memcpy(c.metrics, s->metrics, s->nmetrics * sizeof(s->metrics[0]));
    c.frac_bits = s->mechanism == DPM_MECH_ID_TUPLE_ML ? DPM_FRAC_BITS : 0;
    const char *why = "?";
    dpm_status_t st = dpm_mech_init(&cfg->mech, &c, &why);
    if (st != DPM_OK) {
        snprintf(err, errcap, "campaign '%s' eps %s: the SDK refuses it: %s", s->name,
                 s->eps_text[cfg->eps_index], why);
        return -1;
    }
    const dpm_tuple_t *t = &cfg->mech.params.tuple;
    cfg->noise.keep_g = t->group_grr.keep;
    cfg->noise.other_g = t->group_grr.other;
    cfg->eps_implemented = cfg->mech.eps_implemented / Q16;
    if (!cfg->noise.ml) {
        cfg->noise.keep_v = t->value.rr.keep;
        cfg->noise.other_v = t->value.rr.other;
        st = dpm_disp_params_campaign_mr(&cfg->params, cfg->d, t->group_grr.keep,
                                         t->group_grr.other, t->value.rr.keep);
    } else {
        double scale = (double)t->value.lap.scale_num / (double)t->value.lap.scale_den;
        cfg->noise.frac_bits = t->frac_bits;
        cfg->noise.t_kept = cfg->noise.t_flip = scale;
        st = dpm_disp_params_campaign_ml(&cfg->params, cfg->d, t->group_grr.keep,
                                         t->group_grr.other, scale, scale, t->frac_bits);
    }
    if (st != DPM_OK) {
        snprintf(err, errcap, "campaign '%s': estimator parameters refused", s->name);
        return -1;
    }
    return 0;
}

static int init_roc(sim_cfg_t *cfg, char *err, size_t errcap)
{
    const sim_campaign_spec_t *s = cfg->spec;
    dpm_status_t st = dpm_roc_hist_init(&cfg->roc_mech, s->edges, s->nedges, cfg->eps);
    if (st != DPM_OK) {
        snprintf(err, errcap, "campaign '%s' eps %s: the SDK refuses it: %s", s->name,
                 s->eps_text[cfg->eps_index], dpm_strerror(st));
        return -1;
    }
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = s->id;
    c.mechanism = DPM_MECH_ID_ROC_HIST;
    c.eps = cfg->eps;
    c.budget = cfg->eps;
    c.period_seconds = PERIOD_SECONDS;
    c.nbins = s->nedges;
    memcpy(c.bin_edges, s->edges, s->nedges * sizeof(s->edges[0]));
    const char *why = "?";
    st = dpm_mech_init(&cfg->mech, &c, &why);
    if (st != DPM_OK) {
        snprintf(err, errcap, "campaign '%s' eps %s: the SDK refuses it: %s", s->name,
                 s->eps_text[cfg->eps_index], why);
        return -1;
    }
    cfg->roc_mech = cfg->mech.params.roc_hist; /* what the device runs: the campaign's mechanism */
    cfg->roc = 1;
    cfg->eps_implemented = cfg->roc_mech.eps_implemented / Q16;
    cfg->roc_scale = (double)cfg->roc_mech.lap.scale_num / (double)cfg->roc_mech.lap.scale_den;
    if (dpm_roc_params_init(&cfg->roc_params, cfg->roc_mech.bins.count, cfg->roc_scale) != DPM_OK) {
        snprintf(err, errcap, "campaign '%s': estimator parameters refused", s->name);
        return -1;
    }
    return 0;
}

int sim_cfg_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                    size_t errcap)
{
    if (!cfg->roc) {
        return 0;
    }
    sim_cfg_release(cfg);
    cfg->roc_model = malloc(sizeof(*cfg->roc_model));
    if (cfg->roc_model == NULL || sim_roc_model_init(cfg->roc_model, cfg->sc, pop, cfg->spec->edges,
                                                     cfg->spec->nedges) != 0) {
        free(cfg->roc_model);
        cfg->roc_model = NULL;
        snprintf(err, errcap, "campaign '%s': out of memory for the roc_hist model",
                 cfg->spec->name);
        return -1;
    }
    int include[SIM_MAX_GROUPS];
    for (uint32_t g = 0; g < SIM_MAX_GROUPS; g++) {
        include[g] = cfg->group_map[g] >= 0;
    }
    sim_roc_truth_counts(cfg->roc_model, pop, include, threads, cfg->roc_pos, cfg->roc_neg,
                         &cfg->roc_devices);
    return 0;
}

void sim_cfg_release(sim_cfg_t *cfg)
{
    if (cfg->roc_model != NULL) {
        sim_roc_model_free(cfg->roc_model);
        free(cfg->roc_model);
        cfg->roc_model = NULL;
    }
}

int sim_cfg_init(sim_cfg_t *cfg, const sim_scenario_t *sc, uint32_t c, uint32_t e, char *err,
                 size_t errcap)
{
    memset(cfg, 0, sizeof(*cfg));
    const sim_campaign_spec_t *s = &sc->campaign[c];
    cfg->sc = sc;
    cfg->spec = s;
    cfg->campaign_index = c;
    cfg->eps_index = e;
    cfg->eps = s->eps[e];
    cfg->paper = s->split_paper;
    cfg->d = s->ngroups;
    cfg->nmetrics = s->nmetrics;
    memcpy(cfg->metrics, s->metrics, s->nmetrics * sizeof(s->metrics[0]));
    for (uint32_t g = 0; g < SIM_MAX_GROUPS; g++) {
        cfg->group_map[g] = -1;
    }
    for (uint32_t i = 0; i < s->ngroups; i++) {
        cfg->group_map[s->groups[i]] = (int32_t)i;
        cfg->pop_group[i] = s->groups[i];
    }
    cfg->seed = tuple_sim_device_key(sc->seed, c, e);
    cfg->noise.ml = s->mechanism == DPM_MECH_ID_TUPLE_ML;
    cfg->noise.d = cfg->d;
    if (s->mechanism == DPM_MECH_ID_ROC_HIST) {
        int rst = init_roc(cfg, err, errcap);
        snprintf(cfg->label, sizeof(cfg->label), "roc_hist eps=%s bins=%u", s->eps_text[e],
                 s->nedges + 1u);
        return rst;
    }
    int st = cfg->paper ? init_paper(cfg, err, errcap) : init_sdk(cfg, err, errcap);
    snprintf(cfg->label, sizeof(cfg->label), "%s eps=%s %s", sim_mech_name(s->mechanism),
             s->eps_text[e], cfg->paper ? "(paper split: NOT the stated eps)" : "(SDK split)");
    return st;
}

int sim_cfg_participates(const sim_cfg_t *cfg, const sim_block_t *b)
{
    if (cfg->group_map[b->group] < 0) {
        return 0;
    }
    for (uint32_t j = 0; j < cfg->nmetrics; j++) {
        if (!(b->defined & (1u << (cfg->metrics[j] - 1)))) {
            return 0;
        }
    }
    return 1;
}

uint64_t sim_cfg_device_key(const sim_cfg_t *cfg, uint32_t run, uint64_t device)
{
    return tuple_sim_device_key(cfg->seed, run, device);
}

/* The device's statistics: its metrics as exact rationals, from its confusion counts when it
 * has them (the SDK's dpm_metric_ratio, as an app does). */
static dpm_status_t device_values(const sim_cfg_t *cfg, const sim_block_t *b, dpm_ratio_t *v)
{
    for (uint32_t j = 0; j < cfg->nmetrics; j++) {
        dpm_metric_t m = cfg->metrics[j];
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

/* PAPER REPRODUCTION ONLY: the paper-split device of tuple_sim, wrapped in a report. */
static dpm_status_t paper_report(const sim_cfg_t *cfg, dpm_rand_t *r, uint32_t run, uint32_t group,
                                 const dpm_ratio_t *v, dpm_report_t *rep)
{
    memset(rep, 0, sizeof(*rep));
    dpm_status_t st = tuple_sim_perturb(&cfg->paper_mech, r, group, v, &rep->body.tuple);
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

/* A device's own random source for one run, keyed by (run, device): the stream, the port over
 * it and the SDK's bit reader over the port (which keeps a pointer to the port). */
typedef struct {
    tuple_sim_stream_t stream;
    dpm_rng_t port;
    dpm_rand_t r;
} device_rand_t;

static dpm_status_t device_rand_init(device_rand_t *d, const sim_cfg_t *cfg, uint32_t run,
                                     uint64_t device)
{
    tuple_sim_stream_init(&d->stream, sim_cfg_device_key(cfg, run, device));
    d->port = tuple_sim_stream_port(&d->stream);
    return dpm_rand_init(&d->r, &d->port);
}

/* Reports the bytes the device drew (when asked) and passes st through. */
static dpm_status_t device_rand_done(const device_rand_t *d, dpm_status_t st, uint64_t *rng_bytes)
{
    if (rng_bytes != NULL) {
        *rng_bytes = d->r.rng_calls * (uint64_t)DPM_RAND_BUF_BYTES;
    }
    return st;
}

/* The device's score histogram under the campaign's roc_hist mechanism. */
static dpm_status_t device_hist(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                                dpm_score_hist_t *h)
{
    if (cfg->roc_model == NULL) {
        return DPM_ERR_PARAM;
    }
    return sim_roc_device_hist(cfg->roc_model, &cfg->roc_mech, b, device, h);
}

/* roc_hist: the device's score histogram (its examples through dpm_score_hist_add), then
 * dpm_mech_report_roc_hist on its own stream, then encode. */
static dpm_status_t roc_report(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                               uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len,
                               uint64_t *rng_bytes)
{
    dpm_score_hist_t h;
    dpm_status_t st = device_hist(cfg, b, device, &h);
    if (st != DPM_OK) {
        return st;
    }
    device_rand_t d;
    dpm_receipt_t rc; /* a simulated device has no ledger: the receipt is unmetered */
    st = device_rand_init(&d, cfg, run, device);
    if (st == DPM_OK) {
        st = dpm_receipt_unmetered(&cfg->mech, run, &rc);
    }
    if (st == DPM_OK) {
        st = dpm_mech_report_roc_hist(&cfg->mech, &d.r, &rc, &h, rep);
    }
    if (st == DPM_OK) {
        st = dpm_report_encode(rep, buf, DPM_REPORT_MAX_BYTES, len);
    }
    return device_rand_done(&d, st, rng_bytes);
}

dpm_status_t sim_device_report(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                               uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len,
                               uint64_t *rng_bytes)
{
    if (cfg->roc) {
        return roc_report(cfg, b, run, device, rep, buf, len, rng_bytes);
    }
    dpm_ratio_t v[DPM_CAMPAIGN_MAX_METRICS];
    dpm_status_t st = device_values(cfg, b, v);
    if (st != DPM_OK) {
        return st;
    }
    device_rand_t d;
    dpm_receipt_t rc; /* a simulated device has no ledger: the receipt is unmetered */
    st = device_rand_init(&d, cfg, run, device);
    uint32_t group = (uint32_t)cfg->group_map[b->group];
    if (st == DPM_OK && !cfg->paper) {
        st = dpm_receipt_unmetered(&cfg->mech, run, &rc);
    }
    if (st == DPM_OK) {
        st = cfg->paper ? paper_report(cfg, &d.r, run, group, v, rep)
                        : dpm_mech_report_tuple(&cfg->mech, &d.r, &rc, group, v, rep);
    }
    if (st == DPM_OK) {
        st = dpm_report_encode(rep, buf, DPM_REPORT_MAX_BYTES, len);
    }
    return device_rand_done(&d, st, rng_bytes);
}

dpm_status_t sim_roc_device_report(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                                   uint64_t device, dpm_roc_hist_report_t *out, uint64_t *rng_bytes)
{
    dpm_score_hist_t h;
    if (!cfg->roc) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = device_hist(cfg, b, device, &h);
    if (st != DPM_OK) {
        return st;
    }
    device_rand_t d;
    st = device_rand_init(&d, cfg, run, device);
    if (st == DPM_OK) {
        st = dpm_roc_hist_perturb(&cfg->roc_mech, &d.r, &h, out);
    }
    return device_rand_done(&d, st, rng_bytes);
}

/* ---- aggregates -------------------------------------------------------------------------- */

int sim_agg_init(sim_agg_t *agg, const sim_cfg_t *cfg)
{
    memset(agg, 0, sizeof(*agg));
    agg->nmetrics = cfg->nmetrics;
    if (cfg->roc && dpm_roc_agg_init(&agg->roc, cfg->roc_mech.bins.count) != DPM_OK) {
        return -1;
    }
    for (uint32_t j = 0; j < cfg->nmetrics; j++) {
        if (dpm_disp_agg_init(&agg->m[j], &cfg->params) != DPM_OK) {
            return -1;
        }
    }
    return 0;
}

dpm_status_t sim_agg_add_report(sim_agg_t *agg, const sim_cfg_t *cfg, const dpm_report_t *rep)
{
    if (!cfg->paper) {
        const char *why = NULL;
        if (dpm_mech_check_report(&cfg->mech, rep, &why) != DPM_OK) {
            return DPM_ERR_PROTOCOL;
        }
    } else if (rep->body.tuple.nmetrics != cfg->nmetrics || rep->body.tuple.group >= cfg->d) {
        return DPM_ERR_PROTOCOL;
    }
    if (cfg->roc) {
        return sim_agg_add_roc(agg, &rep->body.roc_hist);
    }
    for (uint32_t j = 0; j < agg->nmetrics; j++) {
        dpm_status_t st = dpm_disp_agg_add(&agg->m[j], rep->body.tuple.group, rep->body.tuple.value[j]);
        if (st != DPM_OK) {
            return st;
        }
    }
    return DPM_OK;
}

dpm_status_t sim_agg_merge(sim_agg_t *dst, const sim_agg_t *src)
{
    for (uint32_t j = 0; j < dst->nmetrics; j++) {
        dpm_status_t st = dpm_disp_agg_merge(&dst->m[j], &src->m[j]);
        if (st != DPM_OK) {
            return st;
        }
    }
    if (dst->roc.bins != 0) {
        dpm_status_t st = dpm_roc_agg_merge(&dst->roc, &src->roc);
        if (st != DPM_OK) {
            return st;
        }
    }
    dst->dropped += src->dropped;
    return DPM_OK;
}

dpm_status_t sim_agg_add_roc(sim_agg_t *agg, const dpm_roc_hist_report_t *rep)
{
    return dpm_roc_agg_add(&agg->roc, rep->bins, rep->pos, rep->neg);
}

void sim_acc_add(dpm_disp_acc_t *acc, int64_t v)
{
    uint64_t add = (uint64_t)v, lo = acc->lo + add;
    acc->hi += (v < 0 ? UINT64_MAX : 0u) + (lo < acc->lo ? 1u : 0u);
    acc->lo = lo;
}

/* ---- truth ---------------------------------------------------------------------------------- */

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

int sim_truth_compute(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_truth_t *t, char *err,
                      size_t errcap)
{
    ksum_t sum[DPM_CAMPAIGN_MAX_METRICS][SIM_MAX_GROUPS],
        sq[DPM_CAMPAIGN_MAX_METRICS][SIM_MAX_GROUPS];
    memset(t, 0, sizeof(*t));
    if (cfg->roc) {
        if (cfg->roc_model == NULL) {
            snprintf(err, errcap, "campaign '%s': roc_hist not prepared", cfg->spec->name);
            return -1;
        }
        t->roc_bins = cfg->roc_mech.bins.count;
        if (dpm_roc_exact(cfg->roc_pos, cfg->roc_neg, t->roc_bins, t->roc_tpr, t->roc_fpr,
                          &t->roc_auc) != DPM_OK) {
            snprintf(err, errcap,
                     "campaign '%s': the population has no positive or no negative example "
                     "(raise devices)",
                     cfg->spec->name);
            return -1;
        }
    }
    memset(sum, 0, sizeof(sum));
    memset(sq, 0, sizeof(sq));
    for (size_t i = 0; i < pop->nblocks; i++) {
        const sim_block_t *b = &pop->block[i];
        if (!sim_cfg_participates(cfg, b)) {
            continue;
        }
        uint32_t g = (uint32_t)cfg->group_map[b->group];
        double c = (double)b->count;
        t->reporting += b->count;
        t->n[g] += c;
        for (uint32_t j = 0; j < cfg->nmetrics; j++) {
            uint32_t m = cfg->metrics[j] - 1u;
            double v = (2.0 * b->num[m] - (double)b->den[m]) / (double)b->den[m];
            ksum_add(&sum[j][g], c * v);
            ksum_add(&sq[j][g], c * v * v);
        }
    }
    for (uint32_t g = 0; g < cfg->d; g++) {
        if (t->n[g] <= 0.0) {
            snprintf(err, errcap,
                     "campaign '%s': group '%s' has no reporting device (raise "
                     "devices or its share)",
                     cfg->spec->name, cfg->sc->group[cfg->pop_group[g]].name);
            return -1;
        }
        for (uint32_t j = 0; j < cfg->nmetrics; j++) {
            t->mean[j][g] = (sum[j][g].s + sum[j][g].c) / t->n[g];
            t->nu2[j][g] = (sq[j][g].s + sq[j][g].c) / t->n[g];
        }
    }
    return 0;
}
