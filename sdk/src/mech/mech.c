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

#if DPM_MECH_TUPLE || DPM_MECH_ROC_HIST || DPM_MECH_DPAUC
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
    if (m->groups != 0) { /* per-group campaigns only: a campaign without groups keeps its hash */
        h = fnv_word(h, m->groups);
        h = fnv_word(h, m->group_grr.keep);
        h = fnv_word(h, m->group_grr.other);
    }
    return fnv_word(h, m->eps_implemented);
}
#endif

#if DPM_MECH_DPAUC
/* dpauc: the thresholds, the calibration, the Laplace scale and the implemented ε. */
static uint32_t dpauc_params_hash(const dpm_dpauc_t *m)
{
    uint32_t h = 2166136261u;
    h = fnv_word(h, (uint32_t)DPM_MECH_ID_DPAUC);
    h = fnv_word(h, m->n);
    for (uint32_t i = 0; i < m->n; i++) {
        h = fnv_word(h, m->thresholds[i]);
    }
    h = fnv_word(h, (uint32_t)m->calibration);
    h = fnv_u64(h, m->lap.sensitivity);
    h = fnv_u64(h, m->lap.scale_num);
    h = fnv_u64(h, m->lap.scale_den);
    return fnv_word(h, m->eps_implemented);
}
#endif

#if DPM_MECH_USTAT
static uint32_t grr_hash(uint32_t h, const dpm_grr_t *g)
{
    h = fnv_word(h, g->k);
    h = fnv_word(h, g->keep);
    return fnv_word(h, g->other);
}

/* ustat_bins: the kernel, k and the GRR's integer thresholds. */
static uint32_t ustat_bins_params_hash(const dpm_ustat_bins_t *m)
{
    uint32_t h = 2166136261u;
    h = fnv_word(h, (uint32_t)DPM_MECH_ID_USTAT_BINS);
    h = fnv_word(h, (uint32_t)m->kernel);
    h = fnv_word(h, m->k);
    h = grr_hash(h, &m->grr);
    return fnv_word(h, m->eps_implemented);
}

/* ustat_tree: the depth, the GRR levels and every oracle's integer thresholds. */
static uint32_t ustat_tree_params_hash(const dpm_ustat_tree_t *m)
{
    uint32_t h = 2166136261u;
    h = fnv_word(h, (uint32_t)DPM_MECH_ID_USTAT_TREE);
    h = fnv_word(h, m->depth);
    h = fnv_word(h, m->grr_levels);
    for (uint32_t l = 1; l <= m->grr_levels; l++) {
        h = grr_hash(h, &m->grr[l - 1]);
    }
    if (m->grr_levels < m->depth) {
        h = grr_hash(h, &m->rr);
    }
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

static dpm_status_t finish(dpm_mech_t *m, dpm_mech_t *next, const dpm_campaign_t *c,
                           const char **reason)
{
    if (c->budget.q16 < next->eps_implemented) {
        return fail(reason, "budget smaller than one report", DPM_ERR_BUDGET);
    }
    *m = *next;
    return DPM_OK;
}

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
    if (c->groups == 1 || c->groups > DPM_MAX_GROUPS) {
        return fail(reason, "roc_hist groups must be 0 (none) or 2 .. DPM_MAX_GROUPS",
                    DPM_ERR_PARAM);
    }
    dpm_eps_t group_eps = c->group_eps.q16 != 0 ? c->group_eps.q16 : c->eps.q16 / 2u;
    if (c->groups != 0 && (group_eps == 0 || group_eps >= c->eps.q16)) {
        return fail(reason, "roc_hist group_eps must be in (0, eps)", DPM_ERR_PARAM);
    }
    dpm_mech_t next;
    memset(&next, 0, sizeof(next));
    next.campaign = *c;
    dpm_status_t st =
        c->groups == 0
            ? dpm_roc_hist_init(&next.params.roc_hist, c->bin_edges, c->nbins, c->eps.q16)
            : dpm_roc_hist_init_groups(&next.params.roc_hist, c->bin_edges, c->nbins, c->eps.q16,
                                       c->groups, group_eps);
    if (st != DPM_OK) {
        return fail(reason,
                    st == DPM_ERR_RANGE ? "roc_hist group_eps too small or too large for GRR"
                                        : "roc_hist parameters out of range",
                    st);
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
        dpm_tuple_init(&next.params.tuple, kind, c->groups, c->metrics, c->nmetrics, c->eps.q16);
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

static dpm_status_t dpauc_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason)
{
#if !DPM_MECH_DPAUC
    (void)m;
    (void)c;
    return fail(reason, "mechanism not available in this build", DPM_ERR_UNSUPPORTED);
#else
    if (c->nthresholds == 0) {
        return fail(reason, "dpauc needs at least one threshold", DPM_ERR_PARAM);
    }
    if (c->nthresholds > DPM_DPAUC_MAX_THRESHOLDS) {
        return fail(reason, "more dpauc thresholds than this build holds", DPM_ERR_PARAM);
    }
    for (uint32_t i = 0; i < c->nthresholds; i++) {
        if (c->thresholds[i] > DPM_SCORE_ONE) {
            return fail(reason, "dpauc threshold above score 1.0 (2^31)", DPM_ERR_PARAM);
        }
        if (i > 0 && c->thresholds[i] <= c->thresholds[i - 1]) {
            return fail(reason, "dpauc thresholds not strictly increasing (unsorted or repeated)",
                        DPM_ERR_PARAM);
        }
    }
    if (c->calibration != DPM_DPAUC_PUBLISHED && c->calibration != DPM_DPAUC_TIGHT) {
        return fail(reason, "unknown dpauc calibration", DPM_ERR_PARAM);
    }
    dpm_mech_t next;
    memset(&next, 0, sizeof(next));
    next.campaign = *c;
    dpm_status_t st = dpm_dpauc_init(&next.params.dpauc, c->thresholds, c->nthresholds,
                                     (dpm_dpauc_calibration_t)c->calibration, c->eps.q16);
    if (st != DPM_OK) {
        return fail(reason,
                    st == DPM_ERR_RANGE ? "epsilon too small for dpauc's count range"
                                        : "dpauc parameters out of range",
                    st);
    }
    next.eps_implemented = next.params.dpauc.eps_implemented;
    next.params_hash = dpauc_params_hash(&next.params.dpauc);
    return finish(m, &next, c, reason);
#endif
}

static dpm_status_t ustat_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason)
{
#if !DPM_MECH_USTAT
    (void)m;
    (void)c;
    return fail(reason, "mechanism not available in this build", DPM_ERR_UNSUPPORTED);
#else
    dpm_mech_t next;
    memset(&next, 0, sizeof(next));
    next.campaign = *c;
    dpm_status_t st;
    if (c->mechanism == DPM_MECH_ID_USTAT_BINS) {
        if (c->ustat_kernel > DPM_USTAT_KENDALL) {
            return fail(reason, "unknown ustat kernel", DPM_ERR_PARAM);
        }
        if (c->ustat_k < 2) {
            return fail(reason, "ustat_bins needs k >= 2 bins", DPM_ERR_PARAM);
        }
        uint64_t k = c->ustat_k;
        uint64_t domain = c->ustat_kernel == DPM_USTAT_AUC                 ? k
                          : c->ustat_kernel == DPM_USTAT_AUC_PRIVATE_LABEL ? 2u * k
                                                                           : k * k;
        if (domain > DPM_MAX_GRR_K) {
            return fail(reason, "ustat_bins k beyond this build (GRR domain above DPM_MAX_GRR_K)",
                        DPM_ERR_PARAM);
        }
        st = dpm_ustat_bins_init(&next.params.ustat_bins, (dpm_ustat_kernel_t)c->ustat_kernel,
                                 c->ustat_k, c->eps.q16);
        next.eps_implemented = next.params.ustat_bins.eps_implemented;
        next.params_hash = ustat_bins_params_hash(&next.params.ustat_bins);
    } else {
        if (c->tree_depth == 0) {
            return fail(reason, "ustat_tree needs a depth >= 1", DPM_ERR_PARAM);
        }
        if (c->tree_depth > DPM_USTAT_MAX_DEPTH) {
            return fail(reason, "ustat_tree depth beyond this build (DPM_USTAT_MAX_DEPTH)",
                        DPM_ERR_PARAM);
        }
        if (c->tree_grr_levels > c->tree_depth) {
            return fail(reason, "ustat_tree GRR levels above the depth", DPM_ERR_PARAM);
        }
        if (c->tree_grr_levels > DPM_USTAT_MAX_GRR_LEVELS ||
            (UINT64_C(1) << c->tree_grr_levels) > DPM_MAX_GRR_K) {
            return fail(reason, "ustat_tree GRR levels beyond this build (DPM_MAX_GRR_K)",
                        DPM_ERR_PARAM);
        }
        st = dpm_ustat_tree_init(&next.params.ustat_tree, c->tree_depth, c->tree_grr_levels,
                                 c->eps.q16);
        next.eps_implemented = next.params.ustat_tree.eps_implemented;
        next.params_hash = ustat_tree_params_hash(&next.params.ustat_tree);
    }
    if (st != DPM_OK) {
        return fail(reason,
                    st == DPM_ERR_RANGE ? "epsilon too small or too large for the mechanism"
                                        : "ustat parameters out of range",
                    st);
    }
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
    if (c->eps.q16 == 0 || c->eps.q16 > DPM_EPS_MAX_Q16) {
        return fail(reason, "epsilon out of range", DPM_ERR_PARAM);
    }
    if (c->nbins > DPM_CAMPAIGN_MAX_EDGES) {
        return fail(reason, "too many bins", DPM_ERR_PARAM);
    }
    if (c->nthresholds > DPM_CAMPAIGN_MAX_THRESHOLDS) {
        return fail(reason, "more dpauc thresholds than this build holds", DPM_ERR_PARAM);
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
    if (c->mechanism == DPM_MECH_ID_DPAUC) {
        return dpauc_init(m, c, reason);
    }
    if (c->mechanism == DPM_MECH_ID_USTAT_BINS || c->mechanism == DPM_MECH_ID_USTAT_TREE) {
        return ustat_init(m, c, reason);
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

const dpm_dpauc_t *dpm_mech_dpauc(const dpm_mech_t *m)
{
#if DPM_MECH_DPAUC
    if (m != NULL && m->campaign.mechanism == DPM_MECH_ID_DPAUC) {
        return &m->params.dpauc;
    }
#else
    (void)m;
#endif
    return NULL;
}
