/* SPDX-License-Identifier: Apache-2.0 */
/* fedauc_rr and fedauc_lap in the simulator (sim/devices/mech.h): Sun et al.'s two-round FedAUC
 * (sdk: dpm/expert/fedauc.h, server: estimate/fedauc.h, doc: sdk/docs/fedauc.md).
 *
 * Campaign keys: `score_bits` (the SDK's score quantization, 1..31, default 16); fedauc_lap
 * also `variant = local | global | orthogonal | adaptive` (default local) and `p_share` (the
 * share of ε on localP for local/global/orthogonal, a decimal in (0, 1), default 0.5; refused
 * with adaptive, whose split is per device).
 *
 * Device input: each example of a device gets a continuous binormal score, drawn consistently
 * with its block's confusion counts (as roc_sim.h does for bins, without binning): positives
 * above the group's threshold T are N(mu, 1) restricted to [T, inf) by inversion, and so on,
 * then s = Phi(x - T) in Q1.31. The examples are fixed for the population (their own stream,
 * independent of runs and noise). Groups with a feature shift (noniid auc_sd) are refused.
 *
 * prepare (the server's ranking): every participating device runs round 1 once through the
 * SDK (dpm_fedauc_prepare + dpm_fedauc_upload_encode), the server decodes the uploads, pools
 * the M scores and ranks them with dpm_fa_rank2; the ranking is kept as a map from a quantized
 * score to its doubled mid-rank (ties share it, so the map is the server's answer to any
 * upload of these scores, whatever their order). Truth: the tie-aware AUC of the pooled
 * quantized examples (dpm_fa_auc_exact), i.e. what FedAUC computes with exact statistics.
 *
 * report (inprocess, per device and run, on the device's own stream): round 1 again
 * (a fresh shuffle and token), the upload decoded by the server and answered from the map
 * (dpm_fedauc_reply_encode, ranks in upload order), then round 2: dpm_fedauc_accept validates
 * the reply and dpm_mech_report_fedauc makes the report. fedauc_rr: a device secret per device
 * and run (16 bytes from the device's stream: a fresh device each run, so the flips are
 * independent across runs), example ids 0..n-1.
 *
 * exact: fedauc_rr: per quantized score value with a positives and b negatives, the flipped
 * positives are Binomial(a, 1 - rho) + Binomial(b, rho) (rho the SDK's implemented flip
 * probability): the law of the sum of the devices' statistics. fedauc_lap: per device the
 * true statistics plus the discrete Laplace draws the SDK makes (the same sensitivity and
 * split: LOCAL max R, GLOBAL 2 (M - 1), ORTHOGONAL/ADAPTIVE D with eps_p = ε when D = 0).
 *
 * Items: 0 the AUC against the model's AUC (the binormal groups' continuous AUC), 1 against the
 * examples' AUC (the target of the estimator's interval: noise only), both with
 * dpm_fa_estimate's interval at the scenario's confidence. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/report.h"
#include "dpm/expert/simulator.h"
#include "estimate/fedauc.h"
#include "sim/devices/mech_common.h"
#include "sim/devices/mech_fedauc.h"
#include "sim/devices/results.h"
#include "sim/pop/roc_sim.h"
#include "sim/devices/sim_cfg.h"
#include "common/stream.h"

#define Q16 65536.0
#define TWO31 2147483648.0
#define NITEMS 2u
#define FEDAUC_TAG UINT64_C(0x4645444155435F53) /* "FEDAUC_S": the example streams' own keys */

/* One device's label-free and exact statistics (exact mode). */
typedef sim_fa_stats_t dev_stats_t;

typedef struct {
    uint64_t devices; /* of the population */
    uint64_t *start;  /* [devices + 1]: examples of device i at [start[i], start[i + 1]) */
    uint32_t *score;  /* Q1.31 as the app holds them */
    uint8_t *label;   /* 1 positive */
    uint32_t ndistinct;
    uint32_t *qscore;      /* [ndistinct] quantized scores, ascending */
    uint32_t *rank2;       /* [ndistinct] their doubled mid-ranks */
    uint64_t *npos, *nneg; /* [ndistinct] examples per value (fedauc_rr exact) */
    dev_stats_t *dev;      /* [devices] (fedauc_lap exact; n = 0: not reporting) */
    dpm_fa_ranking_t mom;
    uint64_t m; /* M */
} fa_data_t;

typedef struct {
    dpm_fa_params_t params;
    fa_data_t *data;
    double auc_examples, auc_model;
} fa_state_t;

SIM_MECH_STATE(fa_state_t, fedauc)
SIM_MECH_AGG(dpm_fa_agg_t, fedauc)

/* ---- scenario ------------------------------------------------------------------------------ */

static int fa_check(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                    size_t errcap)
{
    if (sim_mech_takes_no_grid(c, "", line, err, errcap) != 0) {
        return -1;
    }
    /* the defaults and the rule across keys the campaigns file applies too */
    const char *why = coll_fedauc_key_defaults(c->mechanism, &c->fedauc_variant, &c->fedauc_p_share,
                                               &c->fedauc_score_bits);
    if (why != NULL) {
        *line = c->keys_line[HOST_CK_P_SHARE];
        snprintf(err, errcap, "%s", why);
        return -1;
    }
    for (uint32_t g = 0; g < c->ngroups; g++) {
        const sim_group_spec_t *gs = &sc->group[c->groups[g]];
        if (sim_mech_group_scored(sc, c, g, line, err, errcap) != 0) {
            return -1;
        }
        if (gs->partition.noniid && gs->partition.auc_sd > 0.0) {
            *line = c->groups_line;
            snprintf(err, errcap, "group '%s': fedauc takes no feature shift (auc_sd)", gs->name);
            return -1;
        }
    }
    return 0;
}

static const char *variant_name(uint32_t v)
{
    static const char *const names[] = {"rr", "local", "global", "orthogonal", "adaptive"};
    return v <= DPM_FEDAUC_ADAPTIVE ? names[v] : "?";
}

static int fa_init(sim_cfg_t *cfg, char *err, size_t errcap)
{
    const sim_campaign_spec_t *sp = cfg->spec;
    fa_state_t *s = st_of(cfg);
    memset(s, 0, sizeof(*s));
    dpm_campaign_t c = {.mechanism = sp->mechanism,
                        .fedauc_variant = sp->fedauc_variant,
                        .fedauc_p_share_q16 = sp->fedauc_p_share,
                        .fedauc_score_bits = sp->fedauc_score_bits};
    if (sim_mech_sdk_init(cfg, &c, err, errcap) != 0) {
        return -1;
    }
    if (dpm_fa_params_from_mech(&s->params, &cfg->mech) != DPM_OK) {
        return sim_mech_params_refused(cfg, err, errcap);
    }
    cfg->checked = 1;
    cfg->eps_implemented = cfg->mech.params.fedauc.eps_implemented / Q16;
    if (sp->mechanism == DPM_MECH_ID_FEDAUC_LAP && sp->fedauc_variant != DPM_FEDAUC_ADAPTIVE) {
        snprintf(cfg->label, sizeof(cfg->label), "fedauc_lap eps=%s %s p_share=%.3f bits=%u",
                 sp->eps_text[cfg->eps_index], variant_name(sp->fedauc_variant),
                 sp->fedauc_p_share / Q16, sp->fedauc_score_bits);
    } else {
        snprintf(cfg->label, sizeof(cfg->label), "fedauc_%s eps=%s bits=%u",
                 sp->mechanism == DPM_MECH_ID_FEDAUC_RR ? "rr" : "lap adaptive",
                 sp->eps_text[cfg->eps_index], sp->fedauc_score_bits);
    }
    return 0;
}

static void fa_release(sim_cfg_t *cfg)
{
    fa_data_t *d = st_of(cfg)->data;
    if (d == NULL) {
        return;
    }
    free(d->start);
    free(d->score);
    free(d->label);
    free(d->qscore);
    free(d->rank2);
    free(d->npos);
    free(d->nneg);
    free(d->dev);
    free(d);
    st_of(cfg)->data = NULL;
}

/* ---- the examples ---------------------------------------------------------------------------- */

static uint32_t q31(double s)
{
    double v = nearbyint(s * TWO31);
    return v <= 0.0 ? 0u : v >= TWO31 ? (uint32_t)TWO31 : (uint32_t)v;
}

/* One score of N(mean, 1) restricted to [t, inf) (above) or (-inf, t), as s = Phi(x - t). */
static uint32_t draw_score(sim_stream_t *st, double mean, double t, int above)
{
    double u = sim_stream_unit(st);
    double x;
    if (above) {
        x = mean - prob_norm_quantile(u * prob_norm_sf(t - mean)); /* upper-tail inversion */
    } else {
        x = mean + prob_norm_quantile(u * prob_norm_cdf(t - mean));
    }
    return q31(prob_norm_cdf(x - t));
}

static uint32_t examples_of(const sim_block_t *b)
{
    return b->conf.tp + b->conf.fn + b->conf.fp + b->conf.tn;
}

static int fa_participates(const sim_cfg_t *cfg, const sim_block_t *b)
{
    return cfg->group_map[b->group] >= 0 && examples_of(b) > 0;
}

/* Every participating device's examples: positives (tp above T, fn below), then negatives. */
static int make_examples(const sim_cfg_t *cfg, const sim_pop_t *pop, fa_data_t *d)
{
    d->devices = pop->devices;
    d->start = calloc(pop->devices + 1u, sizeof(uint64_t));
    if (d->start == NULL) {
        return -1;
    }
    uint64_t total = 0;
    for (size_t k = 0; k < pop->nblocks; k++) {
        const sim_block_t *b = &pop->block[k];
        uint64_t e = fa_participates(cfg, b) ? examples_of(b) : 0u;
        for (uint64_t i = 0; i < b->count; i++) {
            d->start[pop->first[k] + i] = total;
            total += e;
        }
    }
    d->start[pop->devices] = total;
    d->m = total;
    if (total == 0 || total > DPM_FEDAUC_MAX_TOTAL) {
        return -2;
    }
    d->score = malloc(total * sizeof(uint32_t));
    d->label = malloc(total);
    if (d->score == NULL || d->label == NULL) {
        return -1;
    }
    uint64_t base = sim_stream_key(cfg->sc->population_seed ^ FEDAUC_TAG, 0, pop->devices);
    for (size_t k = 0; k < pop->nblocks; k++) {
        const sim_block_t *b = &pop->block[k];
        if (!fa_participates(cfg, b)) {
            continue;
        }
        if (b->csv_device != 0 && pop->csv != NULL) { /* the file's own scores */
            const sim_csv_device_t *dv = &pop->csv->device[b->csv_device - 1u];
            for (uint64_t i = 0; i < b->count; i++) {
                uint64_t at = d->start[pop->first[k] + i];
                for (uint32_t j = 0; j < dv->npos + dv->nneg; j++, at++) {
                    d->score[at] = pop->csv->score_q31[dv->first + j];
                    d->label[at] = j < dv->npos;
                }
            }
            continue;
        }
        const sim_binormal_t *bn = &cfg->sc->group[b->group].scores;
        double mu = sqrt(2.0) * prob_norm_quantile(bn->auc);
        double t = bn->has_threshold ? bn->threshold : mu / 2.0;
        for (uint64_t i = 0; i < b->count; i++) {
            uint64_t dev = pop->first[k] + i, at = d->start[dev];
            sim_stream_t st;
            sim_stream_init(&st, sim_stream_key(base, 0, dev));
            const uint32_t parts[4] = {b->conf.tp, b->conf.fn, b->conf.fp, b->conf.tn};
            for (uint32_t p = 0; p < 4; p++) {
                for (uint32_t j = 0; j < parts[p]; j++, at++) {
                    d->score[at] = draw_score(&st, p < 2 ? mu : 0.0, t, p % 2 == 0);
                    d->label[at] = p < 2;
                }
            }
        }
    }
    return 0;
}

/* ---- round 1 and the server's ranking -------------------------------------------------------- */

typedef struct {
    dpm_fedauc_buffers_t buf;
    uint32_t *server_scores;
    uint8_t *bytes;
    size_t cap;
    uint64_t *ids;
} fa_work_t;

static void work_free(fa_work_t *w)
{
    free(w->buf.scores);
    free(w->buf.perm);
    free(w->buf.work);
    free(w->server_scores);
    free(w->bytes);
    free(w->ids);
    memset(w, 0, sizeof(*w));
}

static int work_alloc(fa_work_t *w, uint32_t n, uint32_t score_bits)
{
    memset(w, 0, sizeof(*w));
    size_t up = DPM_FEDAUC_UPLOAD_MAX_BYTES(n, score_bits), re = DPM_FEDAUC_REPLY_MAX_BYTES(n);
    w->cap = up > re ? up : re;
    w->buf.scores = malloc(n * sizeof(uint32_t));
    w->buf.perm = malloc(n * sizeof(uint32_t));
    w->buf.work = malloc(n * sizeof(uint64_t));
    w->server_scores = malloc(n * sizeof(uint32_t));
    w->bytes = malloc(w->cap);
    w->ids = malloc(n * sizeof(uint64_t));
    w->buf.cap = n;
    if (w->buf.scores == NULL || w->buf.perm == NULL || w->buf.work == NULL ||
        w->server_scores == NULL || w->bytes == NULL || w->ids == NULL) {
        work_free(w);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        w->ids[i] = i;
    }
    return 0;
}

/* Round 1 on the device (shuffle, token, encode) and the server's decoding of the upload into
 * w->server_scores; *h the upload's header. */
static dpm_status_t round1(const sim_cfg_t *cfg, dpm_rand_t *r, const uint32_t *scores, uint32_t n,
                           fa_work_t *w, dpm_fedauc_session_t *s, dpm_fedauc_header_t *h)
{
    dpm_status_t st = dpm_fedauc_prepare(&cfg->mech, r, scores, n, &w->buf, s);
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_fedauc_upload_encode(s, w->bytes, w->cap, &len);
    }
    if (st == DPM_OK) {
        st = dpm_fedauc_upload_decode(w->bytes, len, h, w->server_scores, n);
    }
    return st == DPM_OK && h->n != n ? DPM_ERR_PROTOCOL : st;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The index of a ranked quantized score in the map (every score asked was ranked). */
static uint32_t value_index(const fa_data_t *d, uint32_t q)
{
    uint32_t lo = 0, hi = d->ndistinct - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (d->qscore[mid] < q) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The server's map from the pooled scores and their ranks: distinct scores ascending. */
static int build_map(fa_data_t *d, const uint32_t *pool, const uint32_t *r2)
{
    uint64_t *pairs = malloc(d->m * sizeof(uint64_t));
    if (pairs == NULL) {
        return -1;
    }
    for (uint64_t i = 0; i < d->m; i++) {
        pairs[i] = (uint64_t)pool[i] << 32 | r2[i];
    }
    qsort(pairs, d->m, sizeof(uint64_t), cmp_u64);
    uint32_t n = 0;
    for (uint64_t i = 0; i < d->m; i++) {
        n += i == 0 || pairs[i] >> 32 != pairs[i - 1] >> 32;
    }
    d->ndistinct = n;
    d->qscore = malloc(n * sizeof(uint32_t));
    d->rank2 = malloc(n * sizeof(uint32_t));
    d->npos = calloc(n, sizeof(uint64_t));
    d->nneg = calloc(n, sizeof(uint64_t));
    int rc = d->qscore == NULL || d->rank2 == NULL || d->npos == NULL || d->nneg == NULL ? -1 : 0;
    for (uint64_t i = 0, k = 0; i < d->m && rc == 0; i++) {
        if (i == 0 || pairs[i] >> 32 != pairs[i - 1] >> 32) {
            d->qscore[k] = (uint32_t)(pairs[i] >> 32);
            d->rank2[k] = (uint32_t)pairs[i];
            k++;
        } else if ((uint32_t)pairs[i] != d->rank2[k - 1]) {
            rc = -1; /* tied scores with different ranks: not a mid-ranking */
        }
    }
    free(pairs);
    return rc;
}

/* Per value and per device: the statistics exact mode draws from. */
static void device_stats(const sim_cfg_t *cfg, fa_data_t *d)
{
    const dpm_fedauc_t *f = &cfg->mech.params.fedauc;
    for (uint64_t dev = 0; dev < d->devices; dev++) {
        dev_stats_t *ds = &d->dev[dev];
        uint64_t a = d->start[dev], n = d->start[dev + 1] - a;
        memset(ds, 0, sizeof(*ds));
        ds->n = (uint32_t)n;
        for (uint64_t i = a; i < a + n; i++) {
            uint32_t v = value_index(d, dpm_fedauc_quantize(f, d->score[i]));
            uint32_t r = d->rank2[v];
            d->npos[v] += d->label[i];
            d->nneg[v] += 1u - d->label[i];
            ds->p += d->label[i];
            ds->sum2 += d->label[i] ? r : 0u;
            ds->sum_rank2 += r;
            ds->max_rank2 = r > ds->max_rank2 ? r : ds->max_rank2;
        }
        for (uint64_t i = a; i < a + n; i++) {
            uint32_t r = d->rank2[value_index(d, dpm_fedauc_quantize(f, d->score[i]))];
            int64_t dev_i = (int64_t)(n * r) - (int64_t)ds->sum_rank2;
            uint64_t ad = dev_i < 0 ? (uint64_t)-dev_i : (uint64_t)dev_i;
            ds->maxdev = ad > ds->maxdev ? ad : ds->maxdev;
            ds->t += d->label[i] ? dev_i : 0;
        }
    }
}

/* Round 1 of every device once (on a stream of its own, outside the runs'), the server's
 * pooled ranking of the decoded uploads, the map and the statistics. */
static int rank_all(const sim_cfg_t *cfg, fa_data_t *d)
{
    uint32_t *pool = malloc(d->m * sizeof(uint32_t));
    uint32_t *r2 = malloc(d->m * sizeof(uint32_t));
    d->dev = calloc(d->devices, sizeof(dev_stats_t));
    int rc = pool == NULL || r2 == NULL || d->dev == NULL ? -1 : 0;
    uint64_t at = 0;
    for (uint64_t dev = 0; dev < d->devices && rc == 0; dev++) {
        uint32_t n = (uint32_t)(d->start[dev + 1] - d->start[dev]);
        if (n == 0) {
            continue;
        }
        fa_work_t w;
        sim_stream_t ss;
        sim_stream_init(&ss, sim_cfg_device_key(cfg, UINT32_MAX, dev));
        dpm_rng_t port = sim_stream_port(&ss);
        dpm_rand_t r;
        dpm_fedauc_session_t s;
        dpm_fedauc_header_t h;
        if (work_alloc(&w, n, cfg->spec->fedauc_score_bits) != 0) {
            rc = -1;
        } else if (dpm_rand_init(&r, &port) != DPM_OK ||
                   round1(cfg, &r, d->score + d->start[dev], n, &w, &s, &h) != DPM_OK) {
            rc = -1;
            work_free(&w);
        } else {
            memcpy(pool + at, w.server_scores, n * sizeof(uint32_t));
            at += n;
            work_free(&w);
        }
    }
    if (rc == 0 && dpm_fa_rank2(pool, d->m, r2, &d->mom) != DPM_OK) {
        rc = -1;
    }
    if (rc == 0) {
        rc = build_map(d, pool, r2);
    }
    if (rc == 0) {
        device_stats(cfg, d);
    }
    free(pool);
    free(r2);
    return rc;
}

static int fa_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                      size_t errcap)
{
    (void)threads;
    fa_state_t *s = st_of(cfg);
    s->data = calloc(1, sizeof(fa_data_t));
    int rc = s->data == NULL ? -1 : make_examples(cfg, pop, s->data);
    if (rc == 0) {
        rc = rank_all(cfg, s->data);
    }
    if (rc != 0) {
        snprintf(err, errcap, "campaign '%s': %s", cfg->spec->name,
                 rc == -2 ? "no examples, or more than 2^31 (the SDK's largest pool)"
                          : "out of memory, or round 1 failed");
        return -1;
    }
    fa_data_t *d = s->data;
    /* truth: the pooled quantized examples' tie-aware AUC */
    uint32_t *q = malloc(d->m * sizeof(uint32_t));
    if (q == NULL) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    for (uint64_t i = 0; i < d->m; i++) {
        q[i] = dpm_fedauc_quantize(&cfg->mech.params.fedauc, d->score[i]);
    }
    s->auc_examples = dpm_fa_auc_exact(q, d->label, d->m);
    free(q);
    int include[SIM_MAX_GROUPS];
    sim_mech_measured(cfg, include);
    s->auc_model = sim_roc_model_auc(cfg->sc, pop, include);
    if (isnan(s->auc_examples)) {
        snprintf(err, errcap,
                 "campaign '%s': the population has no positive or no negative example (raise "
                 "devices)",
                 cfg->spec->name);
        return -1;
    }
    cfg->reporting = 0;
    for (uint64_t dev = 0; dev < d->devices; dev++) {
        cfg->reporting += d->dev[dev].n > 0;
    }
    static const char *const kind[NITEMS] = {"auc", "auc_examples"};
    static const char *const name[NITEMS] = {"auc", "auc"};
    const double truth[NITEMS] = {s->auc_model, s->auc_examples};
    return sim_mech_items(cfg, "auc", NITEMS, kind, name, truth, err, errcap);
}

/* ---- inprocess ------------------------------------------------------------------------------- */

/* One device's two rounds; x NULL: the in-process server answers from the map, else network
 * mode (sim_exchange_t: round 1 posts the upload, round 2 fetches the collector's reply; the
 * device's draws are the same, so with the same pool the reports are the inprocess ones). */
static dpm_status_t fa_rounds(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                              uint32_t run, dpm_rand_t *r, dpm_report_t *rep,
                              const sim_exchange_t *x)
{
    (void)b;
    const fa_data_t *d = st_of(cfg)->data;
    if (d == NULL || device >= d->devices) {
        return DPM_ERR_PARAM;
    }
    uint64_t a = d->start[device];
    uint32_t n = (uint32_t)(d->start[device + 1] - a);
    fa_work_t w;
    if (n == 0 || work_alloc(&w, n, cfg->spec->fedauc_score_bits) != 0) {
        return DPM_ERR_PARAM;
    }
    dpm_fedauc_session_t s;
    dpm_fedauc_header_t h;
    dpm_status_t st = round1(cfg, r, d->score + a, n, &w, &s, &h);
    size_t len = 0;
    if (st == DPM_OK && x != NULL && x->round == 1) {
        st = dpm_fedauc_upload_encode(&s, w.bytes, w.cap, &len) != DPM_OK ||
                     x->upload(x->ctx, w.bytes, len) != 0
                 ? DPM_ERR_TRANSPORT
                 : DPM_ERR_UNDEFINED; /* uploaded: the report comes in round 2 */
    } else if (st == DPM_OK && x != NULL) {
        st = x->ranks(x->ctx, s.token, w.bytes, w.cap, &len) != 0 ? DPM_ERR_TRANSPORT : DPM_OK;
    } else if (st == DPM_OK) {
        /* the server: the ranks of the uploaded scores, in upload order */
        for (uint32_t j = 0; j < n; j++) {
            w.server_scores[j] = d->rank2[value_index(d, w.server_scores[j])];
        }
        h.total = (uint32_t)d->m;
        st = dpm_fedauc_reply_encode(&h, w.server_scores, w.bytes, w.cap, &len);
    }
    int rr = cfg->spec->mechanism == DPM_MECH_ID_FEDAUC_RR;
    dpm_memo_t memo;
    memset(&memo, 0, sizeof(memo));
    if (st == DPM_OK && rr) { /* this device's secret for this run */
        for (int half = 0; half < 2 && st == DPM_OK; half++) {
            uint64_t word = 0;
            st = dpm_rand_bits(r, 64, &word);
            memcpy(memo.key + 8 * half, &word, 8);
        }
        memo.opened = DPM_MEMO_OPENED;
    }
    dpm_fedauc_ranks_t rk;
    const char *why = NULL;
    if (st == DPM_OK) {
        st = dpm_fedauc_accept(&s, &cfg->mech, w.bytes, len, rr ? w.ids : NULL, &rk, &why);
    }
    dpm_receipt_issuer_t iss = DPM_RECEIPT_ISSUER_INIT;
    dpm_receipt_t rc;
    if (st == DPM_OK) {
        st = dpm_receipt_unmetered(&iss, &cfg->mech, run, &rc);
    }
    if (st == DPM_OK) {
        st = dpm_mech_report_fedauc(&cfg->mech, r, &iss, &rc, &s, &rk, d->label + a,
                                    rr ? w.ids : NULL,
                                    rr ? &memo : NULL, rep);
    }
    work_free(&w);
    return st;
}

static dpm_status_t fa_report(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                              uint32_t run, dpm_rand_t *r, dpm_report_t *rep)
{
    return fa_rounds(cfg, b, device, run, r, rep, NULL);
}

static void fa_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg)
{
    (void)cfg;
    dpm_fa_agg_init(agg_of(agg));
}

static dpm_status_t fa_agg_add(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep)
{
    dpm_status_t st = dpm_fa_agg_add(agg_of(agg), &st_of(cfg)->params, &rep->body.fedauc);
    return st == DPM_OK ? DPM_OK : DPM_ERR_PROTOCOL;
}

static dpm_status_t fa_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src)
{
    (void)cfg;
    dpm_fa_agg_t *a = agg_of(dst);
    const dpm_fa_agg_t *b = agg_c(src);
    if (b->reports == 0) {
        return DPM_OK;
    }
    if (a->reports != 0 && a->total != b->total) {
        return DPM_ERR_PROTOCOL;
    }
    a->total = b->total;
    a->reports += b->reports;
    a->examples += b->examples;
    a->sum2_int += b->sum2_int;
    a->sum2_frac += b->sum2_frac;
    a->p += b->p;
    a->a0 += b->a0;
    a->a2 += b->a2;
    a->a3 += b->a3;
    return DPM_OK;
}

/* ---- exact ----------------------------------------------------------------------------------- */

void sim_fa_lap_body(const dpm_fedauc_t *f, uint64_t m, const sim_fa_stats_t *s, sim_rng_t *rng,
                     dpm_fedauc_report_t *b)
{
    dpm_eps_t eps = f->eps_implemented;
    memset(b, 0, sizeof(*b));
    b->n = s->n;
    b->total = (uint32_t)m;
    b->sum_rank2 = s->sum_rank2;
    int local_global = f->variant == DPM_FEDAUC_LOCAL || f->variant == DPM_FEDAUC_GLOBAL;
    if (local_global) {
        b->sensitivity = f->variant == DPM_FEDAUC_LOCAL ? s->max_rank2 : 2u * (m - 1u);
        b->eps_p = f->eps_p;
    } else {
        b->sensitivity = s->maxdev;
        b->eps_p = s->maxdev == 0 ? eps
                   : f->variant == DPM_FEDAUC_ORTHOGONAL
                       ? f->eps_p
                       : dpm_fedauc_adaptive_eps_p(s->sum_rank2, s->maxdev, eps);
    }
    b->local_p = (int64_t)s->p + sim_rng_dlap_sum(rng, 1, Q16 / b->eps_p);
    int64_t sum = local_global ? (int64_t)s->sum2 : s->t;
    if (b->sensitivity != 0) {
        sum += sim_rng_dlap_sum(rng, 1, (double)b->sensitivity * Q16 / (double)(eps - b->eps_p));
    }
    if (local_global) {
        b->local_sum2 = sum;
    } else {
        b->t = sum;
    }
}

static int fa_exact(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_rng_t *rng, sim_agg_t *agg)
{
    (void)pop;
    const fa_state_t *s = st_of(cfg);
    const fa_data_t *d = s->data;
    dpm_fa_agg_t *a = agg_of(agg);
    if (cfg->spec->mechanism == DPM_MECH_ID_FEDAUC_RR) {
        double rho = s->params.rho;
        for (uint32_t v = 0; v < d->ndistinct; v++) {
            uint64_t c = sim_rng_binomial(rng, d->npos[v], 1.0 - rho) +
                         sim_rng_binomial(rng, d->nneg[v], rho);
            a->sum2_int += (__int128)c * d->rank2[v];
            a->p += c;
        }
        a->reports = cfg->reporting;
        a->examples = d->m;
        a->total = (uint32_t)d->m;
        return 0;
    }
    for (uint64_t dev = 0; dev < d->devices; dev++) {
        if (d->dev[dev].n == 0) {
            continue;
        }
        dpm_fedauc_report_t b;
        sim_fa_lap_body(&cfg->mech.params.fedauc, d->m, &d->dev[dev], rng, &b);
        if (dpm_fa_agg_add(a, &s->params, &b) != DPM_OK) {
            return -1;
        }
    }
    return 0;
}

/* ---- estimate and outputs -------------------------------------------------------------------- */

static void fa_estimate(const sim_cfg_t *cfg, const sim_agg_t *agg, uint32_t run,
                        sim_item_run_t *out, void *ext)
{
    (void)run;
    (void)ext;
    const fa_state_t *s = st_of(cfg);
    dpm_fa_estimate_t e;
    if (dpm_fa_estimate(&s->params, agg_c(agg), &s->data->mom, cfg->sc->confidence, &e) != DPM_OK ||
        !e.valid) {
        return;
    }
    for (uint32_t i = 0; i < NITEMS; i++) {
        out[i].est = e.auc_raw;
        out[i].lo = e.ci_lo;
        out[i].hi = e.ci_hi;
        out[i].sd = e.sd;
        out[i].flags = e.ci_flags;
    }
}

static void fa_summary(const sim_result_t *res, char *buf, size_t cap)
{
    sim_item_summary_t a;
    sim_result_summary(res, 1, &a);
    snprintf(buf, cap, "AUC vs examples' %.4f: rmse %.3g (mean err %+.2g), coverage %.3f", a.truth,
             a.rmse, a.mean_error, a.coverage);
}

/* Network mode: the period as the collector keeps it after our devices' uploads: ranked (the
 * same ranking, M scores) and every upload reported, so no dropouts (netmode.c estimates our
 * sums with the collector's module and compares). */
static void fa_net_period(const sim_cfg_t *cfg, uint64_t reports, coll_fedauc_period_t *ph)
{
    const fa_state_t *s = st_of(cfg);
    memset(ph, 0, sizeof(*ph));
    ph->known = ph->closed = ph->reports_closed = 1;
    ph->uploads = ph->reported = ph->uploaders = reports;
    ph->scores = s->data->m;
    ph->moments = s->data->mom;
}

static void fa_describe(const sim_cfg_t *cfg, const sim_block_t *b, const dpm_report_t *rep,
                        FILE *f)
{
    (void)cfg;
    const dpm_fedauc_report_t *r = &rep->body.fedauc;
    fprintf(f,
            "statistics: %u examples, %u positive\nreport: fedauc n=%u M=%u local_p=%" PRId64
            " local_sum2=%" PRId64 " t=%" PRId64 " S=%" PRIu64 " sensitivity=%" PRIu64
            " eps_p=%.4f\n",
            examples_of(b), b->conf.tp + b->conf.fn, r->n, r->total, r->local_p, r->local_sum2,
            r->t, r->sum_rank2, r->sensitivity, r->eps_p / Q16);
}

/* `dpm-sim campaigns`: the keys the collector parses, max_examples (the most examples a device
 * holds), and its upload phase: upload_count = the devices taking part (every device of the
 * campaign's groups: a binormal device has 1 or more examples), so the phase closes as soon as they
 * all uploaded, and upload_seconds = half the collector's default period (86400 s, which the file
 * keeps), the deadline for dropouts. With several device counts there is no one count: only the
 * deadline is written. */
static void fa_campaign_keys(const sim_scenario_t *sc, const sim_campaign_spec_t *c, FILE *f)
{
    static const char *const names[] = {"", "local", "global", "orthogonal", "adaptive"};
    fprintf(f, "score_bits = %u\n", c->fedauc_score_bits);
    if (c->mechanism == DPM_MECH_ID_FEDAUC_LAP) {
        fprintf(f, "variant = %s\n", names[c->fedauc_variant <= 4u ? c->fedauc_variant : 0u]);
        if (c->fedauc_variant != DPM_FEDAUC_ADAPTIVE) {
            fprintf(f, "p_share = %.17g\n", c->fedauc_p_share / Q16);
        }
    }
    fprintf(f, "upload_seconds = 43200\n");
    uint64_t sizes[SIM_MAX_GROUPS] = {0}, devices = 0;
    if (sc->ndevices == 1) {
        sim_pop_sizes(sc, sc->devices[0], sizes);
        for (uint32_t g = 0; g < c->ngroups; g++) {
            devices += sizes[c->groups[g]];
        }
    }
    /* the collector's per-device bound (fedauc_phase.h): the most examples a device of these
     * groups holds */
    uint32_t most = 0;
    for (uint32_t g = 0; g < c->ngroups; g++) {
        uint32_t e = sc->group[c->groups[g]].scores.examples;
        e = e > 0 ? e : sc->examples;
        most = e > most ? e : most;
    }
    if (most > 0) {
        fprintf(f, "max_examples = %u\n", most);
    }
    if (devices >= 1 && devices <= UINT32_MAX) {
        fprintf(f, "upload_count = %" PRIu64 "\n", devices);
    } else {
        fprintf(f, "# no upload_count (several device counts, or over 2^32 - 1 devices): the "
                   "deadline closes the upload phase\n");
    }
}

#define FEDAUC_HOOKS                                                                               \
    .check = fa_check, .init = fa_init, .prepare = fa_prepare, .release = fa_release,              \
    .participates = fa_participates, .report = fa_report, .agg_init = fa_agg_init,                 \
    .agg_add = fa_agg_add, .agg_merge = fa_agg_merge, .exact = fa_exact, .estimate = fa_estimate,  \
    .summary = fa_summary, .describe = fa_describe, .campaign_keys = fa_campaign_keys,             \
    .report_rounds = fa_rounds, .net_period = fa_net_period

const sim_mech_t sim_mech_fedauc_rr = {
    .name = "fedauc_rr",
    .id = DPM_MECH_ID_FEDAUC_RR,
    .what = "two rounds: shuffled scores up, ranks down, then the rank sum of labels flipped once "
            "by memoized RR",
    FEDAUC_HOOKS,
};

const sim_mech_t sim_mech_fedauc_lap = {
    .name = "fedauc_lap",
    .id = DPM_MECH_ID_FEDAUC_LAP,
    .what = "two rounds: shuffled scores up, ranks down, then localP and the rank sum with "
            "discrete Laplace noise (local/global/orthogonal/adaptive split)",
    FEDAUC_HOOKS,
};
