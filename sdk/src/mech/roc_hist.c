/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist: per-bin label histograms with discrete Laplace (label-DP; see dpm/expert/roc_hist.h).
 */
#include "dpm_internal.h"

#include "dpm/expert/report.h"
#include "dpm/expert/roc_hist.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/stats.h"
#include "mech/mech_ops.h"

dpm_status_t dpm_roc_hist_init(dpm_roc_hist_t *m, const uint32_t *edges, uint32_t n_edges,
                               dpm_eps_t eps)
{
    if (m == NULL || eps == 0 || eps > DPM_EPS_MAX_Q16) {
        return DPM_ERR_PARAM;
    }
    dpm_roc_hist_t next;
    memset(&next, 0, sizeof(next));
    dpm_status_t st = dpm_score_bins_init(&next.bins, edges, n_edges);
    if (st == DPM_OK) {
        st = dpm_laplace_init(&next.lap, DPM_ROC_HIST_SENSITIVITY, eps);
    }
    if (st != DPM_OK) {
        return st;
    }
    next.eps = eps;
    /* The discrete Laplace pmf with scale 2 * 2^16 / eps is exactly exp(-|z| ε / 2) with
     * ε = eps / 2^16: no quantization, so the implemented ε is the requested one. */
    next.eps_implemented = eps;
    *m = next;
    return DPM_OK;
}

static dpm_status_t noise_cell(const dpm_roc_hist_t *m, dpm_rand_t *r, uint32_t count, int32_t *out)
{
    int64_t noised = 0;
    dpm_status_t st = dpm_laplace_add(&m->lap, r, (int64_t)count, &noised);
    if (st == DPM_OK && (noised > INT32_MAX || noised < -INT32_MAX)) {
        st = DPM_ERR_RANGE; /* probability < 2^-11000: see dpm_roc_hist_perturb */
    }
    if (st == DPM_OK) {
        *out = (int32_t)noised;
    }
    return st;
}

dpm_status_t dpm_roc_hist_init_groups(dpm_roc_hist_t *m, const uint32_t *edges, uint32_t n_edges,
                                      dpm_eps_t eps, uint32_t groups, dpm_eps_t group_eps)
{
    if (m == NULL || groups < 2 || groups > DPM_MAX_GROUPS || group_eps == 0 || group_eps >= eps ||
        eps > DPM_EPS_MAX_Q16) {
        return DPM_ERR_PARAM;
    }
    dpm_roc_hist_t next;
    dpm_status_t st = dpm_roc_hist_init(&next, edges, n_edges, eps - group_eps);
    if (st == DPM_OK) {
        st = dpm_grr_init(&next.group_grr, groups, group_eps);
    }
    if (st != DPM_OK) {
        return st;
    }
    next.eps = eps;
    next.groups = groups;
    next.group_eps = group_eps;
    /* basic composition of the two independent draws (see dpm/expert/roc_hist.h): ε_h is exact, the
     * GRR's is rounded up and <= group_eps, so the sum is <= eps */
    next.eps_implemented = (eps - group_eps) + next.group_grr.eps_implemented;
    *m = next;
    return DPM_OK;
}

static int hist_ok(const dpm_roc_hist_t *m, const dpm_score_hist_t *h)
{
    if (m->bins.count < 2 || m->bins.count > DPM_MAX_BINS || h->bins != m->bins.count ||
        m->lap.sensitivity != DPM_ROC_HIST_SENSITIVITY) {
        return 0;
    }
    for (uint32_t b = 0; b < h->bins; b++) {
        if (h->pos[b] > DPM_SCORE_HIST_MAX_COUNT || h->neg[b] > DPM_SCORE_HIST_MAX_COUNT) {
            return 0;
        }
    }
    return 1;
}

/* The histogram's noise into *rep (the group, if any, is already in it). */
static dpm_status_t noise_hist(const dpm_roc_hist_t *m, dpm_rand_t *r, const dpm_score_hist_t *h,
                               dpm_roc_hist_report_t *rep)
{
    dpm_status_t st = DPM_OK;
    for (uint32_t b = 0; b < h->bins && st == DPM_OK; b++) {
        st = noise_cell(m, r, h->pos[b], &rep->pos[b]);
    }
    for (uint32_t b = 0; b < h->bins && st == DPM_OK; b++) {
        st = noise_cell(m, r, h->neg[b], &rep->neg[b]);
    }
    rep->bins = h->bins;
    return st;
}

dpm_status_t dpm_roc_hist_perturb(const dpm_roc_hist_t *m, dpm_rand_t *r, const dpm_score_hist_t *h,
                                  dpm_roc_hist_report_t *out)
{
    if (m == NULL || r == NULL || h == NULL || out == NULL || m->groups != 0 || !hist_ok(m, h)) {
        return DPM_ERR_PARAM;
    }
    dpm_roc_hist_report_t rep;
    memset(&rep, 0, sizeof(rep));
    dpm_status_t st = noise_hist(m, r, h, &rep);
    if (st == DPM_OK) {
        *out = rep;
    }
    return st;
}

dpm_status_t dpm_roc_hist_perturb_group(const dpm_roc_hist_t *m, dpm_rand_t *r, uint32_t group,
                                        const dpm_score_hist_t *h, dpm_roc_hist_report_t *out)
{
    if (m == NULL || r == NULL || h == NULL || out == NULL || m->groups < 2 ||
        m->group_grr.k != m->groups || group >= m->groups || !hist_ok(m, h)) {
        return DPM_ERR_PARAM;
    }
    dpm_roc_hist_report_t rep;
    memset(&rep, 0, sizeof(rep));
    /* the real histogram whatever the GRR reports: see dpm/expert/roc_hist.h */
    dpm_status_t st = dpm_grr_perturb(&m->group_grr, r, group, &rep.group);
    if (st == DPM_OK) {
        st = noise_hist(m, r, h, &rep);
    }
    if (st == DPM_OK) {
        *out = rep;
    }
    return st;
}

/* ---- roc_hist's ops (mech/mech_ops.h) -------------------------------------------------------- */

#if DPM_MECH_ROC_HIST
/* The wire arrays hold at least DPM_MAX_BINS values (dpm.options bounds them to 64). */
typedef char roc_pos_fit[DPM_ARRAY_LEN(((dpm_v1_RocHistBody *)0)->pos) >= DPM_MAX_BINS ? 1 : -1];
typedef char roc_neg_fit[DPM_ARRAY_LEN(((dpm_v1_RocHistBody *)0)->neg) >= DPM_MAX_BINS ? 1 : -1];

/* The mechanism id, the bin count, every edge, the Laplace scale (as the reduced rational the
 * sampler uses) and the implemented ε. */
static uint32_t roc_hist_params_hash(const dpm_roc_hist_t *m)
{
    uint32_t h = DPM_FNV_INIT;
    h = dpm_fnv_word(h, (uint32_t)DPM_MECH_ID_ROC_HIST);
    h = dpm_fnv_word(h, m->bins.count);
    for (uint32_t i = 0; i + 1u < m->bins.count; i++) {
        h = dpm_fnv_word(h, m->bins.edges[i]);
    }
    h = dpm_fnv_u64(h, m->lap.sensitivity);
    h = dpm_fnv_u64(h, m->lap.scale_num);
    h = dpm_fnv_u64(h, m->lap.scale_den);
    if (m->groups != 0) { /* per-group campaigns only: a campaign without groups keeps its hash */
        h = dpm_fnv_word(h, m->groups);
        h = dpm_fnv_word(h, m->group_grr.keep);
        h = dpm_fnv_word(h, m->group_grr.other);
    }
    return dpm_fnv_word(h, m->eps_implemented);
}

dpm_status_t dpm_roc_hist_mech_init(dpm_mech_t *next, const dpm_campaign_t *c, const char **reason)
{
    if (c->nbins == 0) {
        return dpm_mech_fail(reason, "roc_hist needs at least one bin edge", DPM_ERR_PARAM);
    }
    for (uint32_t i = 0; i < c->nbins; i++) {
        if (c->bin_edges[i] > DPM_SCORE_ONE) {
            return dpm_mech_fail(reason, "bin edge above score 1.0 (2^31)", DPM_ERR_PARAM);
        }
    }
    if (c->groups == 1 || c->groups > DPM_MAX_GROUPS) {
        return dpm_mech_fail(reason, "roc_hist groups must be 0 (none) or 2 .. DPM_MAX_GROUPS",
                             DPM_ERR_PARAM);
    }
    dpm_eps_t group_eps = c->group_eps.q16 != 0 ? c->group_eps.q16 : c->eps.q16 / 2u;
    if (c->groups != 0 && (group_eps == 0 || group_eps >= c->eps.q16)) {
        return dpm_mech_fail(reason, "roc_hist group_eps must be in (0, eps)", DPM_ERR_PARAM);
    }
    dpm_roc_hist_t *p = &next->params.roc_hist;
    dpm_status_t st = c->groups == 0 ? dpm_roc_hist_init(p, c->bin_edges, c->nbins, c->eps.q16)
                                     : dpm_roc_hist_init_groups(p, c->bin_edges, c->nbins,
                                                                c->eps.q16, c->groups, group_eps);
    if (st != DPM_OK) {
        return dpm_mech_fail(reason,
                             st == DPM_ERR_RANGE
                                 ? "roc_hist group_eps too small or too large for GRR"
                                 : "roc_hist parameters out of range",
                             st);
    }
    next->eps_implemented = p->eps_implemented;
    next->params_hash = roc_hist_params_hash(p);
    return DPM_OK;
}

const dpm_score_bins_t *dpm_mech_score_bins(const dpm_mech_t *m)
{
    return m != NULL && m->campaign.mechanism == DPM_MECH_ID_ROC_HIST ? &m->params.roc_hist.bins
                                                                      : NULL;
}

int dpm_roc_hist_body_ok(const dpm_report_t *r)
{
    return r->mechanism == DPM_MECH_ID_ROC_HIST && r->body.roc_hist.bins >= 2 &&
           r->body.roc_hist.bins <= DPM_MAX_BINS && r->body.roc_hist.group < DPM_MAX_GROUPS;
}

typedef char roc_hist_tags[dpm_v1_RocHistBody_pos_tag == 1 && dpm_v1_RocHistBody_neg_tag == 2 &&
                                   dpm_v1_RocHistBody_group_tag == 3
                               ? 1
                               : -1];

/* RocHistBody as Report field 11, as pb_encode writes it (packed pos and neg, group omitted
 * when 0), straight into the buffer (core/wire.h). */
void dpm_roc_hist_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    const dpm_roc_hist_report_t *h = &r->body.roc_hist;
    uint32_t pos = dpm_wire_packed_sint32_payload(h->pos, h->bins);
    uint32_t neg = dpm_wire_packed_sint32_payload(h->neg, h->bins);
    dpm_wire_message(w, dpm_v1_Report_roc_hist_tag,
                     dpm_wire_packed_len(h->bins, pos) + dpm_wire_packed_len(h->bins, neg) +
                         dpm_wire_uint_field_len(h->group));
    dpm_wire_packed_sint32(w, dpm_v1_RocHistBody_pos_tag, h->pos, h->bins, pos);
    dpm_wire_packed_sint32(w, dpm_v1_RocHistBody_neg_tag, h->neg, h->bins, neg);
    dpm_wire_uint_field(w, dpm_v1_RocHistBody_group_tag, h->group);
}

int dpm_roc_hist_wire_fits(const dpm_v1_Report *msg)
{
    const dpm_v1_RocHistBody *w = &msg->body.roc_hist;
    return msg->which_body == dpm_v1_Report_roc_hist_tag &&
           msg->mechanism == dpm_v1_Mechanism_ROC_HIST && w->pos_count == w->neg_count &&
           w->pos_count >= 2 && w->pos_count <= DPM_MAX_BINS && w->group < DPM_MAX_GROUPS;
}

void dpm_roc_hist_wire_read(const dpm_v1_Report *msg, dpm_report_t *out)
{
    const dpm_v1_RocHistBody *w = &msg->body.roc_hist;
    out->body.roc_hist.bins = w->pos_count;
    memcpy(out->body.roc_hist.pos, w->pos, w->pos_count * sizeof(int32_t));
    memcpy(out->body.roc_hist.neg, w->neg, w->pos_count * sizeof(int32_t));
    out->body.roc_hist.group = w->group;
}

dpm_status_t dpm_roc_hist_check_report(const dpm_mech_t *m, const dpm_report_t *r,
                                       const char **reason)
{
    if (r->body.roc_hist.bins != m->params.roc_hist.bins.count) {
        return dpm_mech_fail(reason, "wrong number of bins", DPM_ERR_PROTOCOL);
    }
    for (uint32_t b = 0; b < r->body.roc_hist.bins; b++) {
        if (r->body.roc_hist.pos[b] == INT32_MIN || r->body.roc_hist.neg[b] == INT32_MIN) {
            return dpm_mech_fail(reason, "value out of range", DPM_ERR_PROTOCOL);
        }
    }
    uint32_t groups = m->params.roc_hist.groups;
    if (r->body.roc_hist.group >= (groups != 0 ? groups : 1u)) {
        return dpm_mech_fail(reason, "group out of range", DPM_ERR_PROTOCOL);
    }
    return DPM_OK;
}

/* One report, with a group (group_given) or without. */
static dpm_status_t report_roc(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                               const dpm_receipt_t *rc, int group_given, uint32_t group,
                               const dpm_score_hist_t *h, dpm_report_t *out)
{
    if (m == NULL || r == NULL || h == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_ROC_HIST || !dpm_receipt_ok(m, iss, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_roc_hist_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = group_given
                          ? dpm_roc_hist_perturb_group(&m->params.roc_hist, r, group, h, &body)
                          : dpm_roc_hist_perturb(&m->params.roc_hist, r, h, &body);
    return dpm_mech_report_finish(m, r, iss, rc, st, &body, sizeof(body), out);
}

dpm_status_t dpm_mech_report_roc_hist(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                      const dpm_receipt_t *rc, const dpm_score_hist_t *h,
                                      dpm_report_t *out)
{
    return report_roc(m, r, iss, rc, 0, 0, h, out);
}

dpm_status_t dpm_mech_report_roc_hist_group(const dpm_mech_t *m, dpm_rand_t *r,
                                            dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc,
                                            uint32_t group, const dpm_score_hist_t *h,
                                            dpm_report_t *out)
{
    return report_roc(m, r, iss, rc, 1, group, h, out);
}

const char *dpm_roc_hist_input_problem(const dpm_mech_t *m, int group_given, uint32_t group,
                                       const dpm_score_hist_t *h)
{
    if (h->bins != m->params.roc_hist.bins.count) {
        return "histogram bins differ from the campaign's";
    }
    for (uint32_t b = 0; b < h->bins; b++) {
        if (h->pos[b] > DPM_SCORE_HIST_MAX_COUNT || h->neg[b] > DPM_SCORE_HIST_MAX_COUNT) {
            return "histogram count above DPM_SCORE_HIST_MAX_COUNT";
        }
    }
    if ((m->params.roc_hist.groups != 0) != group_given) {
        return group_given ? "campaign without groups: use dpm_device_report_roc_hist"
                           : "campaign with groups: use dpm_device_report_roc_hist_group";
    }
    if (group_given && group >= m->params.roc_hist.groups) {
        return "group >= the campaign's groups";
    }
    return NULL;
}

#else  /* !DPM_MECH_ROC_HIST: the typed entries stay and refuse */

const char *dpm_roc_hist_input_problem(const dpm_mech_t *m, int group_given, uint32_t group,
                                       const dpm_score_hist_t *h)
{
    (void)m, (void)group_given, (void)group, (void)h;
    return dpm_mech_absent_reason(DPM_MECH_ID_ROC_HIST);
}

const dpm_score_bins_t *dpm_mech_score_bins(const dpm_mech_t *m)
{
    (void)m;
    return NULL;
}

int dpm_roc_hist_body_ok(const dpm_report_t *r)
{
    (void)r;
    return 0;
}

void dpm_roc_hist_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    (void)r;
    w->ok = 0;
}

dpm_status_t dpm_mech_report_roc_hist(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                      const dpm_receipt_t *rc, const dpm_score_hist_t *h,
                                      dpm_report_t *out)
{
    (void)m, (void)r, (void)iss, (void)rc, (void)h, (void)out;
    return DPM_ERR_UNSUPPORTED;
}

dpm_status_t dpm_mech_report_roc_hist_group(const dpm_mech_t *m, dpm_rand_t *r,
                                            dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc,
                                            uint32_t group, const dpm_score_hist_t *h,
                                            dpm_report_t *out)
{
    (void)m, (void)r, (void)iss, (void)rc, (void)group, (void)h, (void)out;
    return DPM_ERR_UNSUPPORTED;
}
#endif /* DPM_MECH_ROC_HIST */
