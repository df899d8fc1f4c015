/* SPDX-License-Identifier: Apache-2.0 */
/* Score bins and per-bin label counts: the local statistic of roc_hist (see dpm/stats.h). */
#include "dpm_internal.h"

#include "dpm/stats.h"
#include "dpm/expert/stats.h"

static int count_valid(uint32_t count)
{
    return count >= 2 && count <= DPM_MAX_BINS;
}

dpm_status_t dpm_score_bins_init(dpm_score_bins_t *b, const uint32_t *edges, uint32_t n_edges)
{
    if (b == NULL || edges == NULL || n_edges == 0 || n_edges > DPM_MAX_BINS - 1) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t i = 0; i < n_edges; i++) {
        if (edges[i] > DPM_SCORE_ONE || (i > 0 && edges[i] <= edges[i - 1])) {
            return DPM_ERR_PARAM;
        }
    }
    dpm_score_bins_t next;
    memset(&next, 0, sizeof(next));
    next.count = n_edges + 1u;
    memcpy(next.edges, edges, n_edges * sizeof(edges[0]));
    *b = next;
    return DPM_OK;
}

/* Number of edges <= score, counted over every edge without an early exit. */
static uint32_t bin_of(const dpm_score_bins_t *b, uint32_t score)
{
    uint32_t bin = 0;
    for (uint32_t i = 0; i + 1u < b->count; i++) {
        bin += (uint32_t)(b->edges[i] <= score);
    }
    return bin;
}

dpm_status_t dpm_score_bin(const dpm_score_bins_t *b, uint32_t score_q31, uint32_t *bin)
{
    if (b == NULL || bin == NULL || !count_valid(b->count) || score_q31 > DPM_SCORE_ONE) {
        return DPM_ERR_PARAM;
    }
    *bin = bin_of(b, score_q31);
    return DPM_OK;
}

dpm_status_t dpm_score_hist_init(dpm_score_hist_t *h, const dpm_score_bins_t *b)
{
    if (h == NULL || b == NULL || !count_valid(b->count)) {
        return DPM_ERR_PARAM;
    }
    memset(h, 0, sizeof(*h));
    h->bins = b->count;
    return DPM_OK;
}

dpm_status_t dpm_score_hist_add(dpm_score_hist_t *h, const dpm_score_bins_t *b, uint32_t score_q31,
                                int label)
{
    if (h == NULL || b == NULL || !count_valid(b->count) || h->bins != b->count ||
        score_q31 > DPM_SCORE_ONE || (label != 0 && label != 1)) {
        return DPM_ERR_PARAM;
    }
    uint32_t bin = bin_of(b, score_q31);
    /* Select the cell with a mask rather than a branch on the label. */
    uint32_t pos_mask = 0u - (uint32_t)label;
    uint32_t count = (h->pos[bin] & pos_mask) | (h->neg[bin] & ~pos_mask);
    if (count >= DPM_SCORE_HIST_MAX_COUNT) {
        return DPM_ERR_RANGE;
    }
    h->pos[bin] += 1u & pos_mask;
    h->neg[bin] += 1u & ~pos_mask;
    return DPM_OK;
}
