/* SPDX-License-Identifier: Apache-2.0 */
/* dpauc estimator, server variants A and B (see dpauc.h). */
#include "estimate/dpauc.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "estimate/agg_sums.h"
#include "estimate/roc.h"

/* A noisy class total this many noise sd from 0 or closer flags a small sample. */
#define SMALL_SAMPLE_SDS 10.0

dpm_status_t dpm_dpauc_agg_init(dpm_dpauc_agg_t *a, uint32_t n)
{
    return est_agg_start(a, sizeof(*a), offsetof(dpm_dpauc_agg_t, n), n, 1, DPM_DPAUC_EST_MAX_N);
}

dpm_status_t dpm_dpauc_agg_add(dpm_dpauc_agg_t *a, uint32_t n, const int32_t *tp, const int32_t *fp,
                               const int32_t *tn, const int32_t *fn)
{
    if (a == NULL || tp == NULL || fp == NULL || tn == NULL || fn == NULL || n != a->n) {
        return DPM_ERR_PARAM;
    }
    est_add_counts(a->tp, tp, n);
    est_add_counts(a->fp, fp, n);
    est_add_counts(a->tn, tn, n);
    est_add_counts(a->fn, fn, n);
    a->reports++;
    return DPM_OK;
}

dpm_status_t dpm_dpauc_agg_merge(dpm_dpauc_agg_t *dst, const dpm_dpauc_agg_t *src)
{
    if (dst == NULL || src == NULL || dst->n != src->n) {
        return DPM_ERR_PARAM;
    }
    est_add_sums(dst->tp, src->tp, dst->n);
    est_add_sums(dst->fp, src->fp, dst->n);
    est_add_sums(dst->tn, src->tn, dst->n);
    est_add_sums(dst->fn, src->fn, dst->n);
    dst->reports += src->reports;
    return DPM_OK;
}

dpm_status_t dpm_dpauc_params_init(dpm_dpauc_params_t *p, uint32_t n, double scale)
{
    if (p == NULL || n < 1 || n > DPM_DPAUC_EST_MAX_N || !(scale >= 0.0) || !isfinite(scale)) {
        return DPM_ERR_PARAM;
    }
    p->n = n;
    p->scale = scale;
    p->noise_var = prob_dlap_var(scale);
    return DPM_OK;
}

typedef struct {
    double fpr, tpr;
} point_t;

int dpm_dpauc_point_order(double fpr_a, double tpr_a, double fpr_b, double tpr_b)
{
    if (fpr_a != fpr_b) {
        return fpr_a < fpr_b ? -1 : 1;
    }
    return (tpr_a > tpr_b) - (tpr_a < tpr_b);
}

static int point_cmp(const void *a, const void *b)
{
    const point_t *x = a, *y = b;
    return dpm_dpauc_point_order(x->fpr, x->tpr, y->fpr, y->tpr);
}

static dpm_status_t undefined(dpm_dpauc_estimate_t *est, const char *why)
{
    est->defined = 0;
    est->reason = why;
    est->auc = 0.0;
    memset(est->fpr, 0, sizeof(est->fpr));
    memset(est->tpr, 0, sizeof(est->tpr));
    return DPM_OK;
}

dpm_status_t dpm_dpauc_estimate(const dpm_dpauc_params_t *p, const dpm_dpauc_agg_t *a,
                                dpm_dpauc_server_t v, dpm_dpauc_estimate_t *est)
{
    if (p == NULL || a == NULL || est == NULL || p->n != a->n || a->n < 1 ||
        a->n > DPM_DPAUC_EST_MAX_N || (v != DPM_DPAUC_SERVER_A && v != DPM_DPAUC_SERVER_B)) {
        return DPM_ERR_PARAM;
    }
    memset(est, 0, sizeof(*est));
    est->points = a->n;
    est->class_total_sd = sqrt(2.0 * (double)a->reports * p->noise_var);
    est->min_class_total = INFINITY;
    for (uint32_t i = 0; i < a->n; i++) {
        double pos = (double)a->tp[i] + (double)a->fn[i];
        double neg = (double)a->fp[i] + (double)a->tn[i];
        est->min_class_total = fmin(est->min_class_total, fmin(pos, neg));
    }
    est->small_sample = est->min_class_total <= SMALL_SAMPLE_SDS * est->class_total_sd;
    if (a->reports == 0) {
        est->min_class_total = 0.0;
        return undefined(est, "no reports");
    }
    point_t pts[DPM_DPAUC_EST_MAX_N];
    for (uint32_t j = 0; j < a->n; j++) {
        uint32_t i = a->n - 1u - j; /* highest threshold first */
        double tp = (double)a->tp[i], fp = (double)a->fp[i];
        double tn = (double)a->tn[i], fn = (double)a->fn[i];
        if (v == DPM_DPAUC_SERVER_A) {
            tp = fmax(tp, 0.0), fp = fmax(fp, 0.0), tn = fmax(tn, 0.0), fn = fmax(fn, 0.0);
            int empty = fp + tn == 0.0 || tp + fn == 0.0;
            pts[j].fpr = empty ? 0.0 : fp / (fp + tn);
            pts[j].tpr = empty ? 0.0 : tp / (tp + fn);
        } else {
            if (tp + fn == 0.0 || fp + tn == 0.0) {
                return undefined(est, tp + fn == 0.0
                                          ? "a noisy positive total TP + FN is exactly 0"
                                          : "a noisy negative total FP + TN is exactly 0");
            }
            pts[j].fpr = fp / (fp + tn);
            pts[j].tpr = tp / (tp + fn);
        }
    }
    if (v == DPM_DPAUC_SERVER_A) {
        qsort(pts, a->n, sizeof(pts[0]), point_cmp);
    }
    double auc = 0.0;
    for (uint32_t j = 0; j < a->n; j++) {
        est->fpr[j] = pts[j].fpr;
        est->tpr[j] = pts[j].tpr;
        if (j > 0) {
            auc += (pts[j].fpr - pts[j - 1].fpr) * (pts[j].tpr + pts[j - 1].tpr) / 2.0;
        }
    }
    if (!isfinite(auc)) { /* ratios of sums of int32 values: cannot happen; never emit it */
        return undefined(est, "the trapezoid overflowed");
    }
    est->defined = 1;
    est->reason = "";
    est->auc = auc;
    return DPM_OK;
}

dpm_status_t dpm_dpauc_eq2(const uint64_t *tp_desc, const uint64_t *fp_desc, uint32_t n,
                           double *auc)
{
    if (tp_desc == NULL || fp_desc == NULL || auc == NULL || n < 2) {
        return DPM_ERR_PARAM;
    }
    if (tp_desc[n - 1] == 0 || fp_desc[n - 1] == 0) {
        return DPM_ERR_UNDEFINED;
    }
    double num = 0.0;
    for (uint32_t j = 1; j < n; j++) {
        num += ((double)tp_desc[j] + (double)tp_desc[j - 1]) *
               ((double)fp_desc[j] - (double)fp_desc[j - 1]);
    }
    *auc = num / (2.0 * (double)tp_desc[n - 1] * (double)fp_desc[n - 1]);
    return DPM_OK;
}

dpm_status_t dpm_auc_mann_whitney(const double *score, const int *label, uint32_t n, double *auc)
{
    if (score == NULL || label == NULL || auc == NULL) {
        return DPM_ERR_PARAM;
    }
    double wins = 0.0, pos = 0.0, neg = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        pos += label[i] == 1;
        neg += label[i] == 0;
        if (label[i] != 1) {
            continue;
        }
        for (uint32_t j = 0; j < n; j++) {
            if (label[j] == 0) {
                wins += score[i] > score[j] ? 1.0 : score[i] == score[j] ? 0.5 : 0.0;
            }
        }
    }
    if (pos == 0.0 || neg == 0.0) {
        return DPM_ERR_UNDEFINED;
    }
    *auc = wins / (pos * neg);
    return DPM_OK;
}

dpm_status_t dpm_dpauc_linspace(uint32_t n, uint32_t *thresholds)
{
    if (thresholds == NULL || n < 2 || n > DPM_DPAUC_EST_MAX_N) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t i = 0; i < n; i++) {
        thresholds[i] = (uint32_t)(((uint64_t)i << 31) / (n - 1u));
    }
    return DPM_OK;
}
