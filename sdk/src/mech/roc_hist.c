/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist: per-bin label histograms with discrete Laplace (label-DP; see dpm/roc_hist.h). */
#include "dpm_internal.h"

#include "dpm/roc_hist.h"

static int bins_valid(uint32_t bins)
{
    return bins >= 2 && bins <= DPM_MAX_BINS;
}

dpm_status_t dpm_roc_hist_init(dpm_roc_hist_t *m, const uint32_t *edges, uint32_t n_edges,
                               dpm_eps_t eps)
{
    if (m == NULL || edges == NULL || n_edges == 0 || n_edges > DPM_MAX_BINS - 1 || eps == 0 ||
        eps > DPM_EPS_MAX_Q16) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t i = 0; i < n_edges; i++) {
        if (edges[i] > DPM_SCORE_ONE || (i > 0 && edges[i] <= edges[i - 1])) {
            return DPM_ERR_PARAM;
        }
    }
    dpm_roc_hist_t next;
    memset(&next, 0, sizeof(next));
    next.bins = n_edges + 1u;
    memcpy(next.edges, edges, n_edges * sizeof(edges[0]));
    dpm_status_t st = dpm_laplace_init(&next.lap, DPM_ROC_HIST_SENSITIVITY, eps);
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

dpm_status_t dpm_score_hist_init(dpm_score_hist_t *h, const dpm_roc_hist_t *m)
{
    if (h == NULL || m == NULL || !bins_valid(m->bins)) {
        return DPM_ERR_PARAM;
    }
    memset(h, 0, sizeof(*h));
    h->bins = m->bins;
    return DPM_OK;
}

/* Number of edges <= score, counted over every edge without an early exit. */
static uint32_t bin_of(const dpm_roc_hist_t *m, uint32_t score)
{
    uint32_t b = 0;
    for (uint32_t i = 0; i + 1u < m->bins; i++) {
        b += (uint32_t)(m->edges[i] <= score);
    }
    return b;
}

dpm_status_t dpm_roc_hist_bin(const dpm_roc_hist_t *m, uint32_t score_q31, uint32_t *bin)
{
    if (m == NULL || bin == NULL || !bins_valid(m->bins) || score_q31 > DPM_SCORE_ONE) {
        return DPM_ERR_PARAM;
    }
    *bin = bin_of(m, score_q31);
    return DPM_OK;
}

dpm_status_t dpm_score_hist_add(dpm_score_hist_t *h, const dpm_roc_hist_t *m, uint32_t score_q31,
                                int label)
{
    if (h == NULL || m == NULL || !bins_valid(m->bins) || h->bins != m->bins ||
        score_q31 > DPM_SCORE_ONE || (label != 0 && label != 1)) {
        return DPM_ERR_PARAM;
    }
    uint32_t b = bin_of(m, score_q31);
    /* Select the cell with a mask rather than a branch on the label. */
    uint32_t pos_mask = 0u - (uint32_t)label;
    uint32_t count = (h->pos[b] & pos_mask) | (h->neg[b] & ~pos_mask);
    if (count >= DPM_SCORE_HIST_MAX_COUNT) {
        return DPM_ERR_RANGE;
    }
    h->pos[b] += 1u & pos_mask;
    h->neg[b] += 1u & ~pos_mask;
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
    if (m == NULL || r == NULL || h == NULL || out == NULL || !bins_valid(m->bins) ||
        h->bins != m->bins || m->lap.sensitivity != DPM_ROC_HIST_SENSITIVITY) {
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
