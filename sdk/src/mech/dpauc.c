/* SPDX-License-Identifier: Apache-2.0 */
/* dpauc: noised confusion counts at N thresholds (the FHAUC paper's baseline; dpm/dpauc.h). */
#include "dpm_internal.h"

#include "dpm/dpauc.h"

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
    /* One label change moves 2N counts by 1 (dpm/dpauc.h): ε = 2N / scale = 2N eps / s, i.e.
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
