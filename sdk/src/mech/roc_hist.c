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

dpm_status_t dpm_roc_hist_perturb(const dpm_roc_hist_t *m, dpm_rand_t *r, const dpm_score_hist_t *h,
                                  dpm_roc_hist_report_t *out)
{
    if (m == NULL || r == NULL || h == NULL || out == NULL || m->bins.count < 2 ||
        m->bins.count > DPM_MAX_BINS || h->bins != m->bins.count ||
        m->lap.sensitivity != DPM_ROC_HIST_SENSITIVITY) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t b = 0; b < h->bins; b++) {
        if (h->pos[b] > DPM_SCORE_HIST_MAX_COUNT || h->neg[b] > DPM_SCORE_HIST_MAX_COUNT) {
            return DPM_ERR_PARAM;
        }
    }
    dpm_roc_hist_report_t rep;
    memset(&rep, 0, sizeof(rep));
    dpm_status_t st = DPM_OK;
    for (uint32_t b = 0; b < h->bins && st == DPM_OK; b++) {
        st = noise_cell(m, r, h->pos[b], &rep.pos[b]);
    }
    for (uint32_t b = 0; b < h->bins && st == DPM_OK; b++) {
        st = noise_cell(m, r, h->neg[b], &rep.neg[b]);
    }
    if (st != DPM_OK) {
        return st;
    }
    rep.bins = h->bins;
    *out = rep;
    return DPM_OK;
}
