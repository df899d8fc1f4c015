/* SPDX-License-Identifier: Apache-2.0 */
/* The app's local examples, no randomness: confusion counts (the input of the tuple
 * mechanisms) and per-bin label counts of scores (roc_hist; the bins come from the campaign,
 * dpm_mech_score_bins). dpauc's counts are built with dpm/campaign.h's dpm_dpauc_counts_*.
 * Nothing here leaves the device un-noised: the device's report calls perturb it. The metrics
 * as exact rationals and the score bins themselves: dpm/expert/stats.h. */
#ifndef DPM_STATS_H
#define DPM_STATS_H

#include <stdint.h>

#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Counts of one model's binary decisions on local examples with known labels. */
typedef struct {
    uint32_t tp, fp, tn, fn;
} dpm_confusion_t;

/* Count one example: label and prediction are 0 or 1. DPM_ERR_PARAM for other values,
 * DPM_ERR_RANGE if a count would overflow (the counts are then unchanged). */
dpm_status_t dpm_confusion_add(dpm_confusion_t *c, int label, int prediction);

/* Per-device performance metrics. Each is num / den in [0, 1]. */
typedef enum {
    DPM_METRIC_ACCURACY = 1,  /* (tp + tn) / (tp + fp + tn + fn) */
    DPM_METRIC_TPR = 2,       /* tp / (tp + fn), recall */
    DPM_METRIC_FPR = 3,       /* fp / (fp + tn) */
    DPM_METRIC_PRECISION = 4, /* tp / (tp + fp) */
} dpm_metric_t;
#define DPM_METRIC_COUNT 4

typedef struct {
    uint64_t num;
    uint64_t den; /* >= 1 */
} dpm_ratio_t;

/* ---- score histograms ------------------------------------------------------------------ */

/* Public score bins: count = n_edges + 1 bins cut by strictly increasing edges in Q1.31
 * (2^31 = score 1.0). Bin b holds the scores edges[b-1] <= s < edges[b] (bin 0: s < edges[0];
 * the last bin: s >= edges[count-2]), so a score exactly on an edge goes to the bin above. */
typedef struct {
    uint32_t count;                   /* bins, in [2, DPM_MAX_BINS] */
    uint32_t edges[DPM_MAX_BINS - 1]; /* entries >= count - 1 are 0 */
} dpm_score_bins_t;

/* Largest count one cell of a dpm_score_hist_t may hold: keeps every noised count inside
 * int32 except with probability < 2^-11000 (see dpm_roc_hist_perturb). */
#define DPM_SCORE_HIST_MAX_COUNT (UINT32_C(1) << 30)

/* Per-bin counts of positive (label 1) and negative (label 0) local examples. */
typedef struct {
    uint32_t bins;
    uint32_t pos[DPM_MAX_BINS];
    uint32_t neg[DPM_MAX_BINS];
} dpm_score_hist_t;

/* An empty histogram over b's bins. DPM_ERR_PARAM (h untouched) for NULL or a b whose count
 * is outside [2, DPM_MAX_BINS]. */
dpm_status_t dpm_score_hist_init(dpm_score_hist_t *h, const dpm_score_bins_t *b);

/* Count one example: its score's bin (dpm_score_bin) gets +1 in pos (label 1) or neg
 * (label 0), selected with a mask, not a branch on the label. DPM_ERR_PARAM for NULL, a label
 * other than 0/1, a score > 2^31, or h->bins != b->count; DPM_ERR_RANGE if the count would
 * exceed DPM_SCORE_HIST_MAX_COUNT. h is unchanged on error. */
dpm_status_t dpm_score_hist_add(dpm_score_hist_t *h, const dpm_score_bins_t *b, uint32_t score_q31,
                                int label);

#ifdef __cplusplus
}
#endif

#endif /* DPM_STATS_H */
