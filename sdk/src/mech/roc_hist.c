/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist: per-bin label histograms with discrete Laplace (label-DP; see dpm/roc_hist.h). */
#include "dpm_internal.h"

#include "dpm/roc_hist.h"

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
    /* basic composition of the two independent draws (see dpm/roc_hist.h): ε_h is exact, the
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
    /* the real histogram whatever the GRR reports: see dpm/roc_hist.h */
    dpm_status_t st = dpm_grr_perturb(&m->group_grr, r, group, &rep.group);
    if (st == DPM_OK) {
        st = noise_hist(m, r, h, &rep);
    }
    if (st == DPM_OK) {
        *out = rep;
    }
    return st;
}
