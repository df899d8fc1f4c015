/* SPDX-License-Identifier: Apache-2.0 */
/* The mechanism object: validate a campaign, build its mechanism, derive its fingerprint. */
#include "dpm_internal.h"

#include "dpm/mech.h"
#include "mech/fedauc_internal.h"

static dpm_status_t fail(const char **reason, const char *why, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = why;
    }
    return st;
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
        h = fnv_word(h, t->value.rr.keep);
        h = fnv_word(h, t->value.rr.other);
    } else {
        h = fnv_word(h, t->frac_bits);
        h = fnv_u64(h, t->value.lap.scale_num);
        h = fnv_u64(h, t->value.lap.scale_den);
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
    h = fnv_word(h, m->bins.count);
    for (uint32_t i = 0; i + 1u < m->bins.count; i++) {
        h = fnv_word(h, m->bins.edges[i]);
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

#if DPM_MECH_TUPLE || DPM_MECH_ROC_HIST || DPM_MECH_FEDAUC
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
    for (uint32_t i = 0; i < c->nbins; i++) {
        if (c->bin_edges[i] > DPM_SCORE_ONE) {
            return fail(reason, "bin edge above score 1.0 (2^31)", DPM_ERR_PARAM);
        }
    }
    dpm_mech_t next;
    memset(&next, 0, sizeof(next));
    next.campaign = *c;
    dpm_status_t st = dpm_roc_hist_init(&next.params.roc_hist, c->bin_edges, c->nbins, c->eps);
    if (st != DPM_OK) {
        return fail(reason, "roc_hist parameters out of range", st);
    }
    next.eps_implemented = next.params.roc_hist.eps_implemented;
    next.params_hash = roc_hist_params_hash(&next.params.roc_hist);
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
    dpm_status_t st =
        dpm_tuple_init(&next.params.tuple, kind, c->groups, c->metrics, c->nmetrics, c->eps);
    if (st != DPM_OK) {
        return fail(reason,
                    st == DPM_ERR_RANGE ? "epsilon too small or too large for the mechanism"
                                        : "groups or metrics out of range",
                    st);
    }
    next.eps_implemented = next.params.tuple.eps_implemented;
    next.params_hash = tuple_params_hash(&next.params.tuple);
    return finish(m, &next, c, reason);
#endif
}

/* fedauc_rr / fedauc_lap: the parameters and fingerprint come from sdk/src/mech/fedauc.c. */
static dpm_status_t fedauc_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason)
{
#if !DPM_MECH_FEDAUC
    (void)m;
    (void)c;
    return fail(reason, "mechanism not available in this build", DPM_ERR_UNSUPPORTED);
#else
    dpm_mech_t next;
    memset(&next, 0, sizeof(next));
    next.campaign = *c;
    dpm_status_t st = dpm_fedauc_mech_init(&next, c, reason);
    return st != DPM_OK ? st : finish(m, &next, c, reason);
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
    if (c->nbins > DPM_CAMPAIGN_MAX_EDGES) {
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
    if (dpm_fedauc_is((uint32_t)c->mechanism)) {
        return fedauc_init(m, c, reason);
    }
    if (c->mechanism > DPM_MECH_ID_ROC_HIST && c->mechanism <= DPM_MECH_ID_USTAT_TREE) {
        return fail(reason, "mechanism not available in this build", DPM_ERR_UNSUPPORTED);
    }
    return fail(reason, "unknown mechanism", DPM_ERR_PARAM);
}

const dpm_score_bins_t *dpm_mech_score_bins(const dpm_mech_t *m)
{
#if DPM_MECH_ROC_HIST
    if (m != NULL && m->campaign.mechanism == DPM_MECH_ID_ROC_HIST) {
        return &m->params.roc_hist.bins;
    }
#else
    (void)m;
#endif
    return NULL;
}
