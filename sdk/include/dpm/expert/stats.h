/* SPDX-License-Identifier: Apache-2.0 */
/* Local statistics the mechanisms derive from the app's inputs (dpm/stats.h): a metric as an
 * exact rational, score bins and the bin of a score. No randomness. */
#ifndef DPM_EXPERT_STATS_H
#define DPM_EXPERT_STATS_H

#include <stdint.h>

#include "dpm/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The metric as an exact rational. DPM_ERR_UNDEFINED (and *out untouched) when its
 * denominator is 0 — e.g. TPR on a device that saw no positive example: the app decides what
 * to do (typically: send no report); it is never silently 0. DPM_ERR_PARAM for an unknown
 * metric or NULL. */
dpm_status_t dpm_metric_ratio(const dpm_confusion_t *c, dpm_metric_t metric, dpm_ratio_t *out);

/* 1 <= n_edges <= DPM_MAX_BINS - 1 edges, strictly increasing, each <= 2^31. DPM_ERR_PARAM
 * (*b untouched) for NULL or anything else. */
dpm_status_t dpm_score_bins_init(dpm_score_bins_t *b, const uint32_t *edges, uint32_t n_edges);

/* *bin = the number of edges <= score_q31 (score_q31 <= 2^31, else DPM_ERR_PARAM and *bin
 * untouched). Compares with every edge, no early exit: its run time does not depend on the
 * score. */
dpm_status_t dpm_score_bin(const dpm_score_bins_t *b, uint32_t score_q31, uint32_t *bin);

#ifdef __cplusplus
}
#endif

#endif /* DPM_EXPERT_STATS_H */
