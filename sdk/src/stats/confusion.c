/* SPDX-License-Identifier: Apache-2.0 */
/* Confusion counts and metrics as exact rationals. */
#include "dpm_internal.h"

#include "dpm/stats.h"
#include "dpm/expert/stats.h"

dpm_status_t dpm_confusion_add(dpm_confusion_t *c, int label, int prediction)
{
    if (c == NULL || (label != 0 && label != 1) || (prediction != 0 && prediction != 1)) {
        return DPM_ERR_PARAM;
    }
    uint32_t *cell = label ? (prediction ? &c->tp : &c->fn) : (prediction ? &c->fp : &c->tn);
    /* the total must stay countable too, so accuracy's denominator never wraps */
    uint64_t total = (uint64_t)c->tp + c->fp + c->tn + c->fn;
    if (*cell == UINT32_MAX || total >= UINT32_MAX) {
        return DPM_ERR_RANGE;
    }
    (*cell)++;
    return DPM_OK;
}

dpm_status_t dpm_metric_ratio(const dpm_confusion_t *c, dpm_metric_t metric, dpm_ratio_t *out)
{
    if (c == NULL || out == NULL) {
        return DPM_ERR_PARAM;
    }
    uint64_t num;
    uint64_t den;
    switch (metric) {
    case DPM_METRIC_ACCURACY:
        num = (uint64_t)c->tp + c->tn;
        den = num + c->fp + c->fn;
        break;
    case DPM_METRIC_TPR:
        num = c->tp;
        den = (uint64_t)c->tp + c->fn;
        break;
    case DPM_METRIC_FPR:
        num = c->fp;
        den = (uint64_t)c->fp + c->tn;
        break;
    case DPM_METRIC_PRECISION:
        num = c->tp;
        den = (uint64_t)c->tp + c->fp;
        break;
    default: return DPM_ERR_PARAM;
    }
    if (den == 0) {
        return DPM_ERR_UNDEFINED;
    }
    out->num = num;
    out->den = den;
    return DPM_OK;
}
