/* SPDX-License-Identifier: Apache-2.0 */
/* dpauc: noised confusion counts at N thresholds (the FHAUC paper's baseline; dpm/expert/dpauc.h).
 */
#include "dpm_internal.h"

#include "dpm/expert/dpauc.h"
#include "dpm/expert/report.h"
#include "dpm/expert/noise.h"
#include "mech/mech_ops.h"

/* The noise scale (counts) may not exceed this: |Z| > 2^30 then needs 64 scales (< 2^-90). */
#define MAX_SCALE_COUNTS (UINT64_C(1) << 24)

dpm_status_t dpm_dpauc_init(dpm_dpauc_t *m, const uint32_t *thresholds, uint32_t n,
                            dpm_dpauc_calibration_t calibration, dpm_eps_t eps)
{
    if (m == NULL || thresholds == NULL || n == 0 || n > DPM_DPAUC_MAX_N || eps == 0 ||
        eps > DPM_EPS_MAX_Q16 ||
        (calibration != DPM_DPAUC_PUBLISHED && calibration != DPM_DPAUC_TIGHT)) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (thresholds[i] > DPM_SCORE_ONE || (i > 0 && thresholds[i] <= thresholds[i - 1])) {
            return DPM_ERR_PARAM;
        }
    }
    /* scale = sensitivity / ε' ... in counts: PUBLISHED 4N / ε, TIGHT 2N / ε; dpm_laplace_init
     * takes the "sensitivity" s and ε and uses scale s 2^16 / eps, so s = 4N or 2N. */
    uint64_t s = (calibration == DPM_DPAUC_PUBLISHED ? 4u : 2u) * (uint64_t)n;
    if ((s << DPM_EPS_FRAC_BITS) > MAX_SCALE_COUNTS * eps) {
        return DPM_ERR_RANGE;
    }
    dpm_dpauc_t next;
    memset(&next, 0, sizeof(next));
    dpm_status_t st = dpm_laplace_init(&next.lap, s, eps);
    if (st != DPM_OK) {
        return st;
    }
    next.n = n;
    memcpy(next.thresholds, thresholds, n * sizeof(thresholds[0]));
    next.calibration = calibration;
    next.eps = eps;
    /* One label change moves 2N counts by 1 (dpm/expert/dpauc.h): ε = 2N / scale = 2N eps / s, i.e.
     * eps / 2 (PUBLISHED, rounded up to Q16.16) or eps (TIGHT), exactly. */
    next.eps_implemented = calibration == DPM_DPAUC_PUBLISHED ? (eps + 1u) / 2u : eps;
    *m = next;
    return DPM_OK;
}

static int mech_ok(const dpm_dpauc_t *m)
{
    return m->n >= 1 && m->n <= DPM_DPAUC_MAX_N &&
           m->lap.sensitivity == (m->calibration == DPM_DPAUC_PUBLISHED ? 4u : 2u) * (uint64_t)m->n;
}

dpm_status_t dpm_dpauc_counts_init(dpm_dpauc_counts_t *c, const dpm_dpauc_t *m)
{
    if (c == NULL || m == NULL || !mech_ok(m)) {
        return DPM_ERR_PARAM;
    }
    memset(c, 0, sizeof(*c));
    c->n = m->n;
    return DPM_OK;
}

dpm_status_t dpm_dpauc_counts_add(dpm_dpauc_counts_t *c, const dpm_dpauc_t *m, uint32_t score_q31,
                                  int label)
{
    if (c == NULL || m == NULL || !mech_ok(m) || c->n != m->n || (label != 0 && label != 1) ||
        score_q31 > DPM_SCORE_ONE) {
        return DPM_ERR_PARAM;
    }
    /* tp[i], fp[i] <= pos, neg (checked at perturb), so the totals bound every count */
    if (c->pos + c->neg >= DPM_DPAUC_MAX_COUNT) {
        return DPM_ERR_RANGE;
    }
    uint32_t pos_mask = 0u - (uint32_t)label; /* all ones for a positive */
    for (uint32_t i = 0; i < c->n; i++) {
        /* 1 iff score >= t_i, without a branch: the borrow of t_i - 1 - score (both < 2^32) */
        uint32_t ge = (uint32_t)(((uint64_t)m->thresholds[i] - 1u - score_q31) >> 63);
        c->tp[i] += ge & pos_mask;
        c->fp[i] += ge & ~pos_mask;
    }
    c->pos += 1u & pos_mask;
    c->neg += 1u & ~pos_mask;
    return DPM_OK;
}

static dpm_status_t noise_cell(const dpm_dpauc_t *m, dpm_rand_t *r, uint32_t count, int32_t *out)
{
    int64_t noised = 0;
    dpm_status_t st = dpm_laplace_add(&m->lap, r, (int64_t)count, &noised);
    if (st == DPM_OK && (noised > INT32_MAX || noised < -INT32_MAX)) {
        st = DPM_ERR_RANGE; /* probability < 2^-90: see dpm_dpauc_perturb */
    }
    if (st == DPM_OK) {
        *out = (int32_t)noised;
    }
    return st;
}

/* Counts that examples can give: totals in range, tp and fp within them and non-increasing as
 * the threshold grows. */
static int counts_ok(const dpm_dpauc_counts_t *c)
{
    if ((uint64_t)c->pos + c->neg > DPM_DPAUC_MAX_COUNT) {
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

dpm_status_t dpm_dpauc_perturb(const dpm_dpauc_t *m, dpm_rand_t *r, const dpm_dpauc_counts_t *c,
                               dpm_dpauc_report_t *out)
{
    if (m == NULL || r == NULL || c == NULL || out == NULL || !mech_ok(m) || c->n != m->n ||
        !counts_ok(c)) {
        return DPM_ERR_PARAM;
    }
    dpm_dpauc_report_t rep;
    memset(&rep, 0, sizeof(rep));
    dpm_status_t st = DPM_OK;
    for (uint32_t i = 0; i < c->n && st == DPM_OK; i++) {
        st = noise_cell(m, r, c->tp[i], &rep.tp[i]);
    }
    for (uint32_t i = 0; i < c->n && st == DPM_OK; i++) {
        st = noise_cell(m, r, c->fp[i], &rep.fp[i]);
    }
    for (uint32_t i = 0; i < c->n && st == DPM_OK; i++) {
        st = noise_cell(m, r, c->neg - c->fp[i], &rep.tn[i]);
    }
    for (uint32_t i = 0; i < c->n && st == DPM_OK; i++) {
        st = noise_cell(m, r, c->pos - c->tp[i], &rep.fn[i]);
    }
    if (st != DPM_OK) {
        return st;
    }
    rep.n = c->n;
    *out = rep;
    return DPM_OK;
}

/* ---- dpauc's ops (mech/mech_ops.h) ----------------------------------------------------------- */

#if DPM_MECH_DPAUC
/* dpauc's wire lists hold the build's thresholds (dpm.options bounds them to 128). */
typedef char
    dpauc_fit[DPM_ARRAY_LEN(((dpm_v1_DpaucBody *)0)->tp) >= DPM_DPAUC_MAX_THRESHOLDS ? 1 : -1];

/* The thresholds, the calibration, the Laplace scale and the implemented ε. */
static uint32_t dpauc_params_hash(const dpm_dpauc_t *m)
{
    uint32_t h = DPM_FNV_INIT;
    h = dpm_fnv_word(h, (uint32_t)DPM_MECH_ID_DPAUC);
    h = dpm_fnv_word(h, m->n);
    for (uint32_t i = 0; i < m->n; i++) {
        h = dpm_fnv_word(h, m->thresholds[i]);
    }
    h = dpm_fnv_word(h, (uint32_t)m->calibration);
    h = dpm_fnv_u64(h, m->lap.sensitivity);
    h = dpm_fnv_u64(h, m->lap.scale_num);
    h = dpm_fnv_u64(h, m->lap.scale_den);
    return dpm_fnv_word(h, m->eps_implemented);
}

dpm_status_t dpm_dpauc_mech_init(dpm_mech_t *next, const dpm_campaign_t *c, const char **reason)
{
    if (c->nthresholds == 0) {
        return dpm_mech_fail(reason, "dpauc needs at least one threshold", DPM_ERR_PARAM);
    }
    if (c->nthresholds > DPM_DPAUC_MAX_THRESHOLDS) {
        return dpm_mech_fail(reason, "more dpauc thresholds than this build holds", DPM_ERR_PARAM);
    }
    for (uint32_t i = 0; i < c->nthresholds; i++) {
        if (c->thresholds[i] > DPM_SCORE_ONE) {
            return dpm_mech_fail(reason, "dpauc threshold above score 1.0 (2^31)", DPM_ERR_PARAM);
        }
        if (i > 0 && c->thresholds[i] <= c->thresholds[i - 1]) {
            return dpm_mech_fail(reason,
                                 "dpauc thresholds not strictly increasing (unsorted or repeated)",
                                 DPM_ERR_PARAM);
        }
    }
    if (c->calibration != DPM_DPAUC_PUBLISHED && c->calibration != DPM_DPAUC_TIGHT) {
        return dpm_mech_fail(reason, "unknown dpauc calibration", DPM_ERR_PARAM);
    }
    dpm_status_t st = dpm_dpauc_init(&next->params.dpauc, c->thresholds, c->nthresholds,
                                     (dpm_dpauc_calibration_t)c->calibration, c->eps.q16);
    if (st != DPM_OK) {
        return dpm_mech_fail(reason,
                             st == DPM_ERR_RANGE ? "epsilon too small for dpauc's count range"
                                                 : "dpauc parameters out of range",
                             st);
    }
    next->eps_implemented = next->params.dpauc.eps_implemented;
    next->params_hash = dpauc_params_hash(&next->params.dpauc);
    return DPM_OK;
}

const dpm_dpauc_t *dpm_mech_dpauc(const dpm_mech_t *m)
{
    return m != NULL && m->campaign.mechanism == DPM_MECH_ID_DPAUC ? &m->params.dpauc : NULL;
}

int dpm_dpauc_body_ok(const dpm_report_t *r)
{
    return r->mechanism == DPM_MECH_ID_DPAUC && r->body.dpauc.n >= 1 &&
           r->body.dpauc.n <= DPM_DPAUC_MAX_THRESHOLDS;
}

typedef char dpauc_tags[dpm_v1_DpaucBody_tp_tag == 1 && dpm_v1_DpaucBody_fp_tag == 2 &&
                                dpm_v1_DpaucBody_tn_tag == 3 && dpm_v1_DpaucBody_fn_tag == 4
                            ? 1
                            : -1];

/* DpaucBody as Report field 12, as pb_encode writes it (four packed arrays), straight into the
 * buffer (core/wire.h). */
void dpm_dpauc_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    const dpm_dpauc_report_t *d = &r->body.dpauc;
    const int32_t *const v[4] = {d->tp, d->fp, d->tn, d->fn};
    uint32_t payload[4], len = 0;
    for (uint32_t f = 0; f < 4; f++) {
        payload[f] = dpm_wire_packed_sint32_payload(v[f], d->n);
        len += dpm_wire_packed_len(d->n, payload[f]);
    }
    dpm_wire_message(w, dpm_v1_Report_dpauc_tag, len);
    for (uint32_t f = 0; f < 4; f++) {
        dpm_wire_packed_sint32(w, dpm_v1_DpaucBody_tp_tag + f, v[f], d->n, payload[f]);
    }
}

int dpm_dpauc_wire_fits(const dpm_v1_Report *msg)
{
    const dpm_v1_DpaucBody *w = &msg->body.dpauc;
    return msg->which_body == dpm_v1_Report_dpauc_tag && msg->mechanism == dpm_v1_Mechanism_DPAUC &&
           w->tp_count >= 1 && w->tp_count <= DPM_DPAUC_MAX_THRESHOLDS &&
           w->fp_count == w->tp_count && w->tn_count == w->tp_count && w->fn_count == w->tp_count;
}

void dpm_dpauc_wire_read(const dpm_v1_Report *msg, dpm_report_t *out)
{
    const dpm_v1_DpaucBody *w = &msg->body.dpauc;
    dpm_dpauc_report_t *d = &out->body.dpauc;
    d->n = w->tp_count;
    memcpy(d->tp, w->tp, d->n * sizeof(int32_t));
    memcpy(d->fp, w->fp, d->n * sizeof(int32_t));
    memcpy(d->tn, w->tn, d->n * sizeof(int32_t));
    memcpy(d->fn, w->fn, d->n * sizeof(int32_t));
}

dpm_status_t dpm_dpauc_check_report(const dpm_mech_t *m, const dpm_report_t *r, const char **reason)
{
    const dpm_dpauc_report_t *d = &r->body.dpauc;
    if (d->n != m->params.dpauc.n) {
        return dpm_mech_fail(reason, "wrong number of thresholds", DPM_ERR_PROTOCOL);
    }
    for (uint32_t i = 0; i < d->n; i++) {
        if (d->tp[i] == INT32_MIN || d->fp[i] == INT32_MIN || d->tn[i] == INT32_MIN ||
            d->fn[i] == INT32_MIN) {
            return dpm_mech_fail(reason, "value out of range", DPM_ERR_PROTOCOL);
        }
    }
    return DPM_OK;
}

dpm_status_t dpm_mech_report_dpauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                   const dpm_receipt_t *rc, const dpm_dpauc_counts_t *c,
                                   dpm_report_t *out)
{
    if (m == NULL || r == NULL || c == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_DPAUC || !dpm_receipt_ok(m, iss, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_dpauc_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_dpauc_perturb(&m->params.dpauc, r, c, &body);
    return dpm_mech_report_finish(m, r, iss, rc, st, &body, sizeof(body), out);
}

const char *dpm_dpauc_input_problem(const dpm_mech_t *m, const dpm_dpauc_counts_t *c)
{
    if (c->n != m->params.dpauc.n) {
        return "counts for another threshold count than the campaign's";
    }
    if ((uint64_t)c->pos + c->neg > DPM_DPAUC_MAX_COUNT) {
        return "more examples than DPM_DPAUC_MAX_COUNT";
    }
    for (uint32_t i = 0; i < c->n; i++) {
        if (c->tp[i] > c->pos || c->fp[i] > c->neg ||
            (i > 0 && (c->tp[i] > c->tp[i - 1] || c->fp[i] > c->fp[i - 1]))) {
            return "counts no examples can give";
        }
    }
    return NULL;
}

#else  /* !DPM_MECH_DPAUC: the typed entries stay and refuse */

const char *dpm_dpauc_input_problem(const dpm_mech_t *m, const dpm_dpauc_counts_t *c)
{
    (void)m, (void)c;
    return dpm_mech_absent_reason(DPM_MECH_ID_DPAUC);
}

const dpm_dpauc_t *dpm_mech_dpauc(const dpm_mech_t *m)
{
    (void)m;
    return NULL;
}

int dpm_dpauc_body_ok(const dpm_report_t *r)
{
    (void)r;
    return 0;
}

void dpm_dpauc_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    (void)r;
    w->ok = 0;
}

dpm_status_t dpm_mech_report_dpauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                   const dpm_receipt_t *rc, const dpm_dpauc_counts_t *c,
                                   dpm_report_t *out)
{
    (void)m, (void)r, (void)iss, (void)rc, (void)c, (void)out;
    return DPM_ERR_UNSUPPORTED;
}
#endif /* DPM_MECH_DPAUC */
