/* SPDX-License-Identifier: Apache-2.0 */
/* Local statistics, no randomness: confusion counts and the performance metrics derived from
 * them as exact rationals. Nothing here leaves the device un-noised. */
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

/* The metric as an exact rational. DPM_ERR_UNDEFINED (and *out untouched) when its
 * denominator is 0 — e.g. TPR on a device that saw no positive example: the app decides what
 * to do (typically: send no report); it is never silently 0. DPM_ERR_PARAM for an unknown
 * metric or NULL. */
dpm_status_t dpm_metric_ratio(const dpm_confusion_t *c, dpm_metric_t metric, dpm_ratio_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DPM_STATS_H */
