/* SPDX-License-Identifier: Apache-2.0 */
/* Campaigns: decode, validate, build the mechanism and its fingerprint. */
#include "dpm_internal.h"

#include <pb_decode.h>
#include <pb_encode.h>

#include "dpm.pb.h"
#include "dpm/report.h"

/* The wire array holds at least DPM_MAX_BINS edges (dpm.options bounds it to 64). */
typedef char edges_fit[DPM_ARRAY_LEN(((dpm_v1_Campaign *)0)->bin_edges) >= DPM_MAX_BINS ? 1 : -1];
typedef char metrics_fit[DPM_ARRAY_LEN(((dpm_v1_Campaign *)0)->metrics) == DPM_CAMPAIGN_MAX_METRICS
                             ? 1
                             : -1];

static dpm_status_t fail(const char **reason, const char *why, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = why;
    }
    return st;
}

dpm_status_t dpm_campaign_decode(const uint8_t *buf, size_t len, dpm_campaign_t *out,
                                 const char **reason)
{
    if (buf == NULL || out == NULL) {
        return fail(reason, "null argument", DPM_ERR_PARAM);
    }
    dpm_v1_Campaign msg = dpm_v1_Campaign_init_zero;
    pb_istream_t in = pb_istream_from_buffer(buf, len);
    if (!pb_decode(&in, dpm_v1_Campaign_fields, &msg) || in.bytes_left != 0 ||
        msg.bin_edges_count > DPM_MAX_BINS) {
        return fail(reason, "not a campaign message (or more bins or metrics than supported)",
                    DPM_ERR_PROTOCOL);
    }
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = msg.id;
    c.mechanism = (dpm_mech_id_t)msg.mechanism;
    c.eps = msg.eps_q16;
    c.budget = msg.budget_q16;
    c.period_seconds = msg.period_seconds;
    c.groups = msg.groups;
    c.nmetrics = msg.metrics_count;
    for (uint32_t i = 0; i < c.nmetrics; i++) {
        c.metrics[i] = (dpm_metric_t)msg.metrics[i];
    }
    c.nbins = msg.bin_edges_count;
    memcpy(c.bin_edges, msg.bin_edges, c.nbins * sizeof(c.bin_edges[0]));
    c.frac_bits = msg.frac_bits;
    *out = c;
    return DPM_OK;
}

dpm_status_t dpm_campaign_encode(const dpm_campaign_t *c, uint8_t *buf, size_t cap, size_t *len)
{
    if (c == NULL || buf == NULL || len == NULL || c->nmetrics > DPM_CAMPAIGN_MAX_METRICS ||
        c->nbins > DPM_MAX_BINS) {
        return DPM_ERR_PARAM;
    }
    dpm_v1_Campaign msg = dpm_v1_Campaign_init_zero;
    msg.id = c->id;
    msg.mechanism = (dpm_v1_Mechanism)c->mechanism;
    msg.eps_q16 = c->eps;
    msg.budget_q16 = c->budget;
    msg.period_seconds = c->period_seconds;
    msg.groups = c->groups;
    msg.metrics_count = (pb_size_t)c->nmetrics;
    for (uint32_t i = 0; i < c->nmetrics; i++) {
        msg.metrics[i] = (dpm_v1_Metric)c->metrics[i];
    }
    msg.bin_edges_count = (pb_size_t)c->nbins;
    memcpy(msg.bin_edges, c->bin_edges, c->nbins * sizeof(c->bin_edges[0]));
    msg.frac_bits = c->frac_bits;
    pb_ostream_t out = pb_ostream_from_buffer(buf, cap);
    if (!pb_encode(&out, dpm_v1_Campaign_fields, &msg)) {
        return DPM_ERR_BUFFER;
    }
    *len = out.bytes_written;
    return DPM_OK;
}

#if DPM_MECH_TUPLE || DPM_MECH_ROC_HIST
/* FNV-1a over little-endian 32-bit words: cheap, platform independent, and enough to tell
 * parameter sets apart (it is a consistency check, not an authenticator). */
static uint32_t fnv_word(uint32_t h, uint32_t w)
{
    for (int i = 0; i < 4; i++) {
        h ^= (w >> (8 * i)) & 0xFFu;
        h *= 16777619u;
    }
    return h;
}

static uint32_t fnv_u64(uint32_t h, uint64_t w)
{
    return fnv_word(fnv_word(h, (uint32_t)w), (uint32_t)(w >> 32));
}

#endif

#if DPM_MECH_TUPLE
static uint32_t tuple_params_hash(const dpm_tuple_t *t)
{
    uint32_t h = 2166136261u;
    h = fnv_word(h, (uint32_t)t->kind);
    h = fnv_word(h, t->groups);
    h = fnv_word(h, t->nmetrics);
    for (uint32_t i = 0; i < t->nmetrics; i++) {
        h = fnv_word(h, (uint32_t)t->metrics[i]);
    }
    h = fnv_word(h, t->group_grr.keep);
    h = fnv_word(h, t->group_grr.other);
    if (t->kind == DPM_TUPLE_MR) {
        h = fnv_word(h, t->value_rr.keep);
        h = fnv_word(h, t->value_rr.other);
    } else {
        h = fnv_word(h, t->frac_bits);
        h = fnv_u64(h, t->value_lap.scale_num);
        h = fnv_u64(h, t->value_lap.scale_den);
    }
    return fnv_word(h, t->eps_implemented);
}

#endif

#if DPM_MECH_ROC_HIST
/* roc_hist: the mechanism id, the bin count, every edge, the Laplace scale (as the reduced
 * rational the sampler uses) and the implemented ε. */
static uint32_t roc_hist_params_hash(const dpm_roc_hist_t *m)
{
    uint32_t h = 2166136261u;
    h = fnv_word(h, (uint32_t)DPM_MECH_ID_ROC_HIST);
    h = fnv_word(h, m->bins);
    for (uint32_t i = 0; i + 1u < m->bins; i++) {
        h = fnv_word(h, m->edges[i]);
    }
    h = fnv_u64(h, m->lap.sensitivity);
    h = fnv_u64(h, m->lap.scale_num);
    h = fnv_u64(h, m->lap.scale_den);
    return fnv_word(h, m->eps_implemented);
}
#endif

static int edges_sorted(const dpm_campaign_t *c)
{
    for (uint32_t i = 1; i < c->nbins; i++) {
        if (c->bin_edges[i] <= c->bin_edges[i - 1]) {
            return 0;
        }
    }
    return 1;
}

#if DPM_MECH_TUPLE || DPM_MECH_ROC_HIST
static dpm_status_t finish(dpm_mech_t *m, dpm_mech_t *next, const dpm_campaign_t *c,
                           const char **reason)
{
    if (c->budget < next->eps_implemented) {
        return fail(reason, "budget smaller than one report", DPM_ERR_BUDGET);
    }
    *m = *next;
    return DPM_OK;
}
#endif

static dpm_status_t roc_hist_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason)
{
#if !DPM_MECH_ROC_HIST
    (void)m;
    (void)c;
    return fail(reason, "mechanism not available in this build", DPM_ERR_UNSUPPORTED);
#else
    if (c->nbins == 0) {
        return fail(reason, "roc_hist needs at least one bin edge", DPM_ERR_PARAM);
    }
    if (c->nbins > DPM_MAX_BINS - 1u) {
        return fail(reason, "too many bins", DPM_ERR_PARAM);
    }
    for (uint32_t i = 0; i < c->nbins; i++) {
        if (c->bin_edges[i] > DPM_SCORE_ONE) {
            return fail(reason, "bin edge above score 1.0 (2^31)", DPM_ERR_PARAM);
        }
    }
    dpm_mech_t next;
    memset(&next, 0, sizeof(next));
    next.campaign = *c;
    dpm_status_t st = dpm_roc_hist_init(&next.roc_hist, c->bin_edges, c->nbins, c->eps);
    if (st != DPM_OK) {
        return fail(reason, "roc_hist parameters out of range", st);
    }
    next.eps_implemented = next.roc_hist.eps_implemented;
    next.params_hash = roc_hist_params_hash(&next.roc_hist);
    return finish(m, &next, c, reason);
#endif
}

static dpm_status_t tuple_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason)
{
#if !DPM_MECH_TUPLE
    (void)m;
    (void)c;
    return fail(reason, "mechanism not available in this build", DPM_ERR_UNSUPPORTED);
#else
    if (c->mechanism == DPM_MECH_ID_TUPLE_ML && c->frac_bits != DPM_FRAC_BITS) {
        return fail(reason, "value grid (frac_bits) differs from this build's", DPM_ERR_PARAM);
    }
    dpm_mech_t next;
    memset(&next, 0, sizeof(next));
    next.campaign = *c;
    dpm_tuple_kind_t kind = c->mechanism == DPM_MECH_ID_TUPLE_MR ? DPM_TUPLE_MR : DPM_TUPLE_ML;
    dpm_status_t st = dpm_tuple_init(&next.tuple, kind, c->groups, c->metrics, c->nmetrics, c->eps);
    if (st != DPM_OK) {
        return fail(reason,
                    st == DPM_ERR_RANGE ? "epsilon too small or too large for the mechanism"
                                        : "groups or metrics out of range",
                    st);
    }
    next.eps_implemented = next.tuple.eps_implemented;
    next.params_hash = tuple_params_hash(&next.tuple);
    return finish(m, &next, c, reason);
#endif
}

dpm_status_t dpm_mech_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason)
{
    if (m == NULL || c == NULL) {
        return fail(reason, "null argument", DPM_ERR_PARAM);
    }
    if (c->eps == 0 || c->eps > DPM_EPS_MAX_Q16) {
        return fail(reason, "epsilon out of range", DPM_ERR_PARAM);
    }
    if (c->nbins > DPM_MAX_BINS) {
        return fail(reason, "too many bins", DPM_ERR_PARAM);
    }
    if (!edges_sorted(c)) {
        return fail(reason, "bin edges not strictly increasing", DPM_ERR_PARAM);
    }
    if (c->mechanism == DPM_MECH_ID_ROC_HIST) {
        return roc_hist_init(m, c, reason);
    }
    if (c->mechanism == DPM_MECH_ID_TUPLE_MR || c->mechanism == DPM_MECH_ID_TUPLE_ML) {
        return tuple_init(m, c, reason);
    }
    if (c->mechanism > DPM_MECH_ID_ROC_HIST && c->mechanism <= DPM_MECH_ID_USTAT_TREE) {
        return fail(reason, "mechanism not available in this build", DPM_ERR_UNSUPPORTED);
    }
    return fail(reason, "unknown mechanism", DPM_ERR_PARAM);
}
