/* SPDX-License-Identifier: Apache-2.0 */
/* The device context: policy, campaign intake and one call per report (see dpm/device.h). */
#include "dpm_internal.h"

#include "dpm/device.h"
#include "report/report_internal.h"
#include "upload/outbox_internal.h"

/* ---- config and policy ------------------------------------------------------------------- */

dpm_status_t dpm_config_check_abi(uint32_t app_fingerprint)
{
    return app_fingerprint == dpm_abi_fingerprint() ? DPM_OK : DPM_ERR_CONFIG;
}

static int limit_valid(const dpm_policy_limit_t *l)
{
    return l->max_eps != 0 && l->max_budget >= l->max_eps;
}

static int policy_valid(const dpm_policy_t *p)
{
    if (!limit_valid(&p->defaults) || p->nrules > DPM_POLICY_MAX_RULES) {
        return 0;
    }
    for (uint32_t i = 0; i < p->nrules; i++) {
        if (!limit_valid(&p->rules[i])) {
            return 0;
        }
        for (uint32_t j = 0; j < i; j++) {
            if (p->rules[j].campaign_id == p->rules[i].campaign_id) {
                return 0;
            }
        }
    }
    return 1;
}

/* The limits that apply to campaign `id`: its rule, or the defaults. */
static const dpm_policy_limit_t *limit_for(const dpm_policy_t *p, uint32_t id)
{
    for (uint32_t i = 0; i < p->nrules; i++) {
        if (p->rules[i].campaign_id == id) {
            return &p->rules[i];
        }
    }
    return &p->defaults;
}

static dpm_status_t refuse(const char **reason, const char *why, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = why;
    }
    return st;
}

dpm_status_t dpm_policy_check(const dpm_policy_t *p, const dpm_campaign_t *c, const char **reason)
{
    if (p == NULL || c == NULL || !policy_valid(p)) {
        return refuse(reason, "invalid policy", DPM_ERR_PARAM);
    }
    const dpm_policy_limit_t *l = limit_for(p, c->id);
    if (c->eps > l->max_eps) {
        return refuse(reason, "campaign epsilon above the app's policy", DPM_ERR_POLICY);
    }
    if (c->budget > l->max_budget) {
        return refuse(reason, "campaign budget above the app's policy", DPM_ERR_POLICY);
    }
    return DPM_OK;
}

/* ---- the context ------------------------------------------------------------------------- */

static int region_ok(const dpm_storage_t *s, uint32_t offset, uint32_t size)
{
    return (uint64_t)offset + size <= s->size;
}

static int config_ok(const dpm_device_config_t *cfg)
{
    const dpm_storage_t *s = &cfg->storage;
    if (cfg->rng.fill == NULL || s->read == NULL || s->write == NULL || s->erase == NULL ||
        !policy_valid(&cfg->policy) || cfg->ledger_size < DPM_LEDGER_MIN_REGION ||
        cfg->outbox_size < DPM_OUTBOX_MIN_REGION ||
        !region_ok(s, cfg->ledger_offset, cfg->ledger_size) ||
        !region_ok(s, cfg->outbox_offset, cfg->outbox_size)) {
        return 0;
    }
    /* The regions must not overlap: one store's erase would destroy the other. */
    uint64_t l0 = cfg->ledger_offset, l1 = l0 + cfg->ledger_size;
    uint64_t o0 = cfg->outbox_offset, o1 = o0 + cfg->outbox_size;
    if (l0 < o1 && o0 < l1) {
        return 0;
    }
    const dpm_storage_t *a = &cfg->ledger_anchor;
    if (a->read != NULL) {
        uint64_t a0 = cfg->ledger_anchor_offset, a1 = a0 + DPM_LEDGER_ANCHOR_BYTES;
        int shared = a->ctx == s->ctx && a->read == s->read;
        if (a->write == NULL || !region_ok(a, cfg->ledger_anchor_offset, DPM_LEDGER_ANCHOR_BYTES) ||
            (shared && ((a0 < l1 && l0 < a1) || (a0 < o1 && o0 < a1)))) {
            return 0; /* the anchor must survive what erases the regions */
        }
    }
    if (cfg->upload.host != NULL) {
        dpm_upload_t probe;
        if (cfg->clock.monotonic_ms == NULL || dpm_upload_init(&probe, &cfg->upload) != DPM_OK) {
            return 0;
        }
    }
    return 1;
}

dpm_status_t dpm_device_init_abi(dpm_device_t *d, const dpm_device_config_t *cfg,
                                 uint32_t app_fingerprint)
{
    if (dpm_config_check_abi(app_fingerprint) != DPM_OK) {
        return DPM_ERR_CONFIG;
    }
    if (d == NULL || cfg == NULL || !config_ok(cfg)) {
        return DPM_ERR_PARAM;
    }
    /* The ledger, outbox and random source point into *d, so they are bound in place. */
    memset(d, 0, sizeof(*d));
    d->rng = cfg->rng;
    d->clock = cfg->clock;
    d->storage = cfg->storage;
    d->policy = cfg->policy;
    dpm_status_t st = dpm_rand_init(&d->rand, &d->rng);
    if (st == DPM_OK && cfg->upload.host != NULL) {
        st = dpm_upload_init(&d->upload, &cfg->upload);
        d->has_upload = 1;
    }
    if (st != DPM_OK) {
        return st;
    }
    /* A corrupt ledger is bound failed-closed (every charge refuses) and a damaged outbox is
     * left for the app to resolve: the device opens either way, so the app can reach both
     * through dpm_device_ledger / dpm_device_outbox, and reports. */
    d->ledger_anchor = cfg->ledger_anchor;
    dpm_status_t ledger_st =
        cfg->ledger_anchor.read != NULL
            ? dpm_ledger_open_anchored(&d->ledger, &d->storage, cfg->ledger_offset,
                                       cfg->ledger_size, &d->ledger_anchor,
                                       cfg->ledger_anchor_offset)
            : dpm_ledger_open(&d->ledger, &d->storage, cfg->ledger_offset, cfg->ledger_size);
    dpm_status_t outbox_st =
        dpm_outbox_open(&d->outbox, &d->storage, cfg->outbox_offset, cfg->outbox_size);
    if (ledger_st != DPM_OK && ledger_st != DPM_ERR_CORRUPT) {
        return ledger_st;
    }
    d->opened = DPM_DEVICE_OPENED;
    return ledger_st != DPM_OK ? ledger_st : outbox_st;
}

static int opened(const dpm_device_t *d)
{
    return d != NULL && d->opened == DPM_DEVICE_OPENED;
}

dpm_status_t dpm_device_accept_mech(dpm_device_t *d, const dpm_campaign_t *c, dpm_mech_t *m,
                                    const char **reason)
{
    if (!opened(d) || c == NULL || m == NULL) {
        return refuse(reason, "null argument or device not opened", DPM_ERR_PARAM);
    }
    dpm_status_t st = dpm_policy_check(&d->policy, c, reason);
    if (st != DPM_OK) {
        return st;
    }
    return dpm_mech_init(m, c, reason);
}

dpm_status_t dpm_device_accept_campaign(dpm_device_t *d, const uint8_t *bytes, size_t len,
                                        dpm_mech_t *m, const char **reason)
{
    if (!opened(d) || bytes == NULL || m == NULL) {
        return refuse(reason, "null argument or device not opened", DPM_ERR_PARAM);
    }
    dpm_campaign_t c;
    dpm_status_t st = dpm_campaign_decode(bytes, len, &c, reason);
    return st == DPM_OK ? dpm_device_accept_mech(d, &c, m, reason) : st;
}

/* ---- one call per report ------------------------------------------------------------------ */

/* Everything that can be checked before the charge, for a report of m in `period` whose
 * encoding takes at most max_bytes. */
static dpm_status_t precheck(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                             size_t max_bytes)
{
    dpm_status_t st = dpm_policy_check(&d->policy, &m->campaign, NULL);
    if (st != DPM_OK) {
        return st;
    }
    if (d->rand.error != DPM_OK) {
        return d->rand.error; /* a random source that already failed would fail after the charge */
    }
    if (d->outbox.opened != DPM_OUTBOX_OPENED) {
        return DPM_ERR_CORRUPT; /* dpm_device_init could not open it: dpm_outbox_format */
    }
    if (!dpm_outbox_room(&d->outbox, max_bytes)) {
        return DPM_ERR_BUFFER; /* full: flush first */
    }
    dpm_eps_t spent = 0;
    st = dpm_ledger_spent(&d->ledger, m->campaign.id, period, &spent);
    if (st == DPM_ERR_PARAM) {
        return DPM_ERR_BUDGET; /* a closed period: the device reported for a later one */
    }
    if (st == DPM_OK && (uint64_t)spent + m->eps_implemented > m->campaign.budget) {
        st = DPM_ERR_BUDGET;
    }
    return st;
}

/* Charge the ledger; on DPM_OK *rc is the receipt for one report. */
static dpm_status_t charge(dpm_device_t *d, const dpm_mech_t *m, uint32_t period, dpm_receipt_t *rc)
{
    dpm_status_t st = dpm_ledger_charge(&d->ledger, m->campaign.id, period, m->eps_implemented,
                                        m->campaign.budget);
    if (st == DPM_OK) {
        rc->campaign_id = m->campaign.id;
        rc->period = period;
        rc->params_hash = m->params_hash;
        rc->eps = m->eps_implemented;
        rc->state = DPM_RECEIPT_CHARGED;
    }
    return st;
}

/* Queue a made report, encoded in buf[0, len) by its kind's dpm_report_encode_*; fill *info. */
static dpm_status_t queue(dpm_device_t *d, const dpm_mech_t *m, const dpm_report_t *rep,
                          const uint8_t *buf, size_t len, dpm_report_info_t *info)
{
    dpm_status_t st = dpm_outbox_put_encoded(&d->outbox, buf, len); /* bytes we just encoded */
    if (st == DPM_OK && info != NULL) {
        memcpy(info->report_id, rep->report_id, DPM_REPORT_ID_BYTES);
        info->bytes = (uint32_t)len;
        info->eps_spent = m->eps_implemented;
        info->spent_in_period = 0;
        (void)dpm_ledger_spent(&d->ledger, m->campaign.id, rep->period, &info->spent_in_period);
    }
    return st;
}

dpm_status_t dpm_device_report_tuple(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                     uint32_t group, const dpm_confusion_t *conf,
                                     dpm_report_info_t *info)
{
#if DPM_MECH_TUPLE
    if (!opened(d) || m == NULL || conf == NULL ||
        (m->campaign.mechanism != DPM_MECH_ID_TUPLE_MR &&
         m->campaign.mechanism != DPM_MECH_ID_TUPLE_ML) ||
        group >= m->params.tuple.groups || m->params.tuple.nmetrics > DPM_TUPLE_MAX_METRICS) {
        return DPM_ERR_PARAM;
    }
    dpm_ratio_t values[DPM_TUPLE_MAX_METRICS];
    for (uint32_t i = 0; i < m->params.tuple.nmetrics; i++) {
        dpm_status_t st = dpm_metric_ratio(conf, m->params.tuple.metrics[i], &values[i]);
        if (st != DPM_OK) {
            return st; /* DPM_ERR_UNDEFINED: no report, nothing spent */
        }
    }
    dpm_status_t st = precheck(d, m, period, DPM_REPORT_TUPLE_MAX);
    dpm_receipt_t rc;
    if (st == DPM_OK) {
        st = charge(d, m, period, &rc);
    }
    dpm_report_t rep;
    if (st == DPM_OK) {
        st = dpm_mech_report_tuple(m, &d->rand, &rc, group, values, &rep);
    }
    uint8_t buf[DPM_REPORT_TUPLE_MAX];
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_tuple(&rep, buf, sizeof(buf), &len);
    }
    return st == DPM_OK ? queue(d, m, &rep, buf, len, info) : st;
#else
    (void)d, (void)m, (void)period, (void)group, (void)conf, (void)info;
    return DPM_ERR_UNSUPPORTED;
#endif
}

#if DPM_MECH_ROC_HIST
/* h can be reported under m: its bins and counts. */
static int hist_reportable(const dpm_mech_t *m, const dpm_score_hist_t *h)
{
    if (h->bins != m->params.roc_hist.bins.count) {
        return 0;
    }
    for (uint32_t b = 0; b < h->bins; b++) {
        if (h->pos[b] > DPM_SCORE_HIST_MAX_COUNT || h->neg[b] > DPM_SCORE_HIST_MAX_COUNT) {
            return 0;
        }
    }
    return 1;
}

/* roc_hist with or without a group (group_given 0: none). */
static dpm_status_t report_roc(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                               int group_given, uint32_t group, const dpm_score_hist_t *h,
                               dpm_report_info_t *info)
{
    if (!opened(d) || m == NULL || h == NULL || m->campaign.mechanism != DPM_MECH_ID_ROC_HIST ||
        !hist_reportable(m, h) || (m->params.roc_hist.groups != 0) != group_given ||
        (group_given && group >= m->params.roc_hist.groups)) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = precheck(d, m, period, DPM_REPORT_ROC_MAX);
    dpm_receipt_t rc;
    if (st == DPM_OK) {
        st = charge(d, m, period, &rc);
    }
    dpm_report_t rep;
    if (st == DPM_OK) {
        st = group_given ? dpm_mech_report_roc_hist_group(m, &d->rand, &rc, group, h, &rep)
                         : dpm_mech_report_roc_hist(m, &d->rand, &rc, h, &rep);
    }
    uint8_t buf[DPM_REPORT_ROC_MAX];
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_roc_hist(&rep, buf, sizeof(buf), &len);
    }
    return st == DPM_OK ? queue(d, m, &rep, buf, len, info) : st;
}
#endif

dpm_status_t dpm_device_report_roc_hist(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                        const dpm_score_hist_t *h, dpm_report_info_t *info)
{
#if DPM_MECH_ROC_HIST
    return report_roc(d, m, period, 0, 0, h, info);
#else
    (void)d, (void)m, (void)period, (void)h, (void)info;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_device_report_roc_hist_group(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                              uint32_t group, const dpm_score_hist_t *h,
                                              dpm_report_info_t *info)
{
#if DPM_MECH_ROC_HIST
    return report_roc(d, m, period, 1, group, h, info);
#else
    (void)d, (void)m, (void)period, (void)group, (void)h, (void)info;
    return DPM_ERR_UNSUPPORTED;
#endif
}

#if DPM_MECH_DPAUC
/* Counts that the mechanism accepts: dpm_dpauc_perturb's checks, without drawing. */
static int counts_reportable(const dpm_mech_t *m, const dpm_dpauc_counts_t *c)
{
    if (c->n != m->params.dpauc.n || (uint64_t)c->pos + c->neg > DPM_DPAUC_MAX_COUNT) {
        return 0;
    }
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->tp[i] > c->pos || c->fp[i] > c->neg ||
            (i > 0 && (c->tp[i] > c->tp[i - 1] || c->fp[i] > c->fp[i - 1]))) {
            return 0;
        }
    }
    return 1;
}
#endif

dpm_status_t dpm_device_report_dpauc(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                     const dpm_dpauc_counts_t *c, dpm_report_info_t *info)
{
#if DPM_MECH_DPAUC
    if (!opened(d) || m == NULL || c == NULL || m->campaign.mechanism != DPM_MECH_ID_DPAUC ||
        !counts_reportable(m, c)) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = precheck(d, m, period, DPM_REPORT_DPAUC_MAX);
    dpm_receipt_t rc;
    if (st == DPM_OK) {
        st = charge(d, m, period, &rc);
    }
    dpm_report_t rep;
    if (st == DPM_OK) {
        st = dpm_mech_report_dpauc(m, &d->rand, &rc, c, &rep);
    }
    uint8_t buf[DPM_REPORT_DPAUC_MAX];
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_dpauc(&rep, buf, sizeof(buf), &len);
    }
    return st == DPM_OK ? queue(d, m, &rep, buf, len, info) : st;
#else
    (void)d, (void)m, (void)period, (void)c, (void)info;
    return DPM_ERR_UNSUPPORTED;
#endif
}

/* ---- FedAUC: round 1 (no ε) and the round 2 report ------------------------------------- */

#if DPM_MECH_FEDAUC
static int is_fedauc(const dpm_mech_t *m)
{
    return m != NULL && (m->campaign.mechanism == DPM_MECH_ID_FEDAUC_RR ||
                         m->campaign.mechanism == DPM_MECH_ID_FEDAUC_LAP);
}
#endif

dpm_status_t dpm_device_fedauc_upload(dpm_device_t *d, const dpm_mech_t *m,
                                      const dpm_score_t *scores, uint32_t n,
                                      const dpm_fedauc_buffers_t *b, dpm_fedauc_session_t *s,
                                      uint8_t *out, size_t cap, size_t *len)
{
#if DPM_MECH_FEDAUC
    if (!opened(d) || !is_fedauc(m) || s == NULL || out == NULL || len == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = dpm_policy_check(&d->policy, &m->campaign, NULL);
    if (st != DPM_OK) {
        return st;
    }
    /* Room for the upload before the buffers are touched (they may hold another session). */
    if (n != 0 && cap < DPM_FEDAUC_UPLOAD_MAX_BYTES(n, m->params.fedauc.score_bits)) {
        return DPM_ERR_BUFFER;
    }
    dpm_fedauc_session_t next;
    st = dpm_fedauc_prepare(m, &d->rand, scores, n, b, &next);
    if (st == DPM_OK) {
        st = dpm_fedauc_upload_encode(&next, out, cap, len);
    }
    if (st == DPM_OK) {
        *s = next;
    }
    return st;
#else
    (void)d, (void)m, (void)scores, (void)n, (void)b, (void)s, (void)out, (void)cap, (void)len;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_device_report_fedauc(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                      dpm_fedauc_session_t *s, const uint8_t *reply,
                                      size_t reply_len, const uint8_t *labels, const uint64_t *ids,
                                      const dpm_memo_t *memo, dpm_report_info_t *info)
{
#if DPM_MECH_FEDAUC
    if (!opened(d) || !is_fedauc(m) || s == NULL || reply == NULL || labels == NULL ||
        (m->campaign.mechanism == DPM_MECH_ID_FEDAUC_RR &&
         (memo == NULL || memo->opened != DPM_MEMO_OPENED))) {
        return DPM_ERR_PARAM;
    }
    dpm_fedauc_ranks_t rk;
    dpm_status_t st = dpm_fedauc_accept(s, m, reply, reply_len, ids, &rk, NULL);
    dpm_fedauc_stats_t stats;
    if (st == DPM_OK) {
        st = dpm_fedauc_stats(s, &rk, labels, &stats); /* checks the labels */
    }
    if (st == DPM_OK) {
        st = precheck(d, m, period, DPM_REPORT_FEDAUC_MAX);
    }
    dpm_receipt_t rc;
    if (st == DPM_OK) {
        st = charge(d, m, period, &rc);
    }
    dpm_report_t rep;
    if (st == DPM_OK) {
        st = dpm_mech_report_fedauc(m, &d->rand, &rc, s, &rk, labels, ids, memo, &rep);
    }
    uint8_t buf[DPM_REPORT_FEDAUC_MAX];
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_fedauc(&rep, buf, sizeof(buf), &len);
    }
    if (st == DPM_OK) {
        st = queue(d, m, &rep, buf, len, info);
    }
    if (st == DPM_OK) {
        s->state = DPM_FEDAUC_REPORTED;
    }
    return st;
#else
    (void)d, (void)m, (void)period, (void)s, (void)reply, (void)reply_len, (void)labels, (void)ids;
    (void)memo, (void)info;
    return DPM_ERR_UNSUPPORTED;
#endif
}

#if DPM_MECH_USTAT
/* ustat_bins (tree 0) or ustat_tree (tree 1): one example. */
static dpm_status_t report_ustat(dpm_device_t *d, const dpm_mech_t *m, uint32_t period, int tree,
                                 const dpm_ustat_example_t *ex, dpm_report_info_t *info)
{
    dpm_mech_id_t want = tree ? DPM_MECH_ID_USTAT_TREE : DPM_MECH_ID_USTAT_BINS;
    if (!opened(d) || m == NULL || ex == NULL || m->campaign.mechanism != want ||
        ex->score > DPM_SCORE_ONE || (ex->label != 0 && ex->label != 1)) {
        return DPM_ERR_PARAM;
    }
    if (!tree && m->params.ustat_bins.kernel == DPM_USTAT_KENDALL &&
        (ex->score2 > DPM_SCORE_ONE || ex->label != 0)) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = precheck(
        d, m, period, DPM_REPORT_MAX2(DPM_REPORT_USTAT_TREE_MAX, DPM_REPORT_USTAT_BINS_MAX));
    dpm_receipt_t rc;
    if (st == DPM_OK) {
        st = charge(d, m, period, &rc);
    }
    dpm_report_t rep;
    if (st == DPM_OK) {
        st = tree ? dpm_mech_report_ustat_tree(m, &d->rand, &rc, ex, &rep)
                  : dpm_mech_report_ustat_bins(m, &d->rand, &rc, ex, &rep);
    }
    uint8_t buf[DPM_REPORT_MAX2(DPM_REPORT_USTAT_TREE_MAX, DPM_REPORT_USTAT_BINS_MAX)];
    size_t len = 0;
    if (st == DPM_OK) {
        st = dpm_report_encode_ustat(&rep, buf, sizeof(buf), &len);
    }
    return st == DPM_OK ? queue(d, m, &rep, buf, len, info) : st;
}
#endif

dpm_status_t dpm_device_report_ustat_bins(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                          const dpm_ustat_example_t *ex, dpm_report_info_t *info)
{
#if DPM_MECH_USTAT
    return report_ustat(d, m, period, 0, ex, info);
#else
    (void)d, (void)m, (void)period, (void)ex, (void)info;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_device_report_ustat_tree(dpm_device_t *d, const dpm_mech_t *m, uint32_t period,
                                          const dpm_ustat_example_t *ex, dpm_report_info_t *info)
{
#if DPM_MECH_USTAT
    return report_ustat(d, m, period, 1, ex, info);
#else
    (void)d, (void)m, (void)period, (void)ex, (void)info;
    return DPM_ERR_UNSUPPORTED;
#endif
}

/* [a0, a0 + alen) and [b0, b0 + blen) overlap. */
static int overlaps(uint64_t a0, uint64_t alen, uint64_t b0, uint64_t blen)
{
    return a0 < b0 + blen && b0 < a0 + alen;
}

dpm_status_t dpm_device_memo_open(dpm_device_t *d, uint32_t offset, uint32_t size, dpm_memo_t *memo)
{
    if (!opened(d) || memo == NULL ||
        overlaps(offset, size, d->ledger.offset, 2u * (uint64_t)d->ledger.slot_size) ||
        overlaps(offset, size, d->outbox.offset, 2u * (uint64_t)d->outbox.bank_size) ||
        (d->ledger_anchor.read == d->storage.read && d->ledger_anchor.ctx == d->storage.ctx &&
         overlaps(offset, size, d->ledger.anchor_offset, DPM_LEDGER_ANCHOR_BYTES))) {
        return DPM_ERR_PARAM;
    }
    return dpm_memo_open(memo, &d->storage, offset, size, &d->rand);
}

dpm_status_t dpm_device_flush(dpm_device_t *d, const dpm_transport_t *t, uint8_t *work,
                              size_t work_cap, dpm_upload_result_t *res)
{
    if (!opened(d) || !d->has_upload) {
        return DPM_ERR_PARAM;
    }
    return dpm_upload_flush(&d->upload, &d->outbox, t, &d->clock, &d->rand, work, work_cap, res);
}

dpm_outbox_t *dpm_device_outbox(dpm_device_t *d)
{
    return opened(d) ? &d->outbox : NULL;
}

dpm_ledger_t *dpm_device_ledger(dpm_device_t *d)
{
    return opened(d) ? &d->ledger : NULL;
}
