/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group roc_hist estimator (see roc_groups.h). */
#include "estimate/roc_groups.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "estimate/disparity.h"
#include "estimate/roc.h"

#define TWO32 4294967296.0
#define SMALL_SD 0.1
#define SMALL_COUNT_SDS 5.0

dpm_status_t dpm_roc_groups_params_init(dpm_roc_groups_params_t *p, uint32_t groups, uint32_t bins,
                                        uint32_t keep, uint32_t other, double scale)
{
    if (p == NULL || groups < 2 || groups > DPM_ROC_GROUPS_MAX || bins < 2 ||
        bins > DPM_ROC_GROUPS_MAX_BINS ||
        (uint64_t)keep + (uint64_t)(groups - 1u) * other != (UINT64_C(1) << 32) || keep <= other ||
        !(scale >= 0.0) || !isfinite(scale)) {
        return DPM_ERR_PARAM;
    }
    p->groups = groups;
    p->bins = bins;
    p->P = (double)keep / TWO32;
    p->Q = (double)other / TWO32;
    p->scale = scale;
    p->noise_var = dpm_roc_dlap_var(scale);
    return DPM_OK;
}

dpm_status_t dpm_roc_groups_agg_init(dpm_roc_groups_agg_t *a, uint32_t groups, uint32_t bins)
{
    if (a == NULL || groups < 2 || groups > DPM_ROC_GROUPS_MAX || bins < 2 ||
        bins > DPM_ROC_GROUPS_MAX_BINS) {
        return DPM_ERR_PARAM;
    }
    memset(a, 0, sizeof(*a));
    a->groups = groups;
    a->bins = bins;
    size_t c = 2u * (size_t)bins;
    a->sum = calloc(groups * c, sizeof(int64_t));
    a->m2 = calloc(groups * c * c, sizeof(double));
    if (a->sum == NULL || a->m2 == NULL) {
        dpm_roc_groups_agg_free(a);
        return DPM_ERR_BUFFER;
    }
    return DPM_OK;
}

void dpm_roc_groups_agg_free(dpm_roc_groups_agg_t *a)
{
    if (a != NULL) {
        free(a->sum);
        free(a->m2);
        a->sum = NULL;
        a->m2 = NULL;
    }
}

dpm_status_t dpm_roc_groups_agg_add(dpm_roc_groups_agg_t *a, uint32_t group, uint32_t bins,
                                    const int32_t *pos, const int32_t *neg)
{
    if (a == NULL || a->sum == NULL || pos == NULL || neg == NULL || bins != a->bins ||
        group >= a->groups) {
        return DPM_ERR_PARAM;
    }
    size_t c = 2u * (size_t)bins;
    double y[2 * DPM_ROC_GROUPS_MAX_BINS];
    for (uint32_t b = 0; b < bins; b++) {
        y[b] = pos[b];
        y[bins + b] = neg[b];
        a->sum[group * c + b] += pos[b];
        a->sum[group * c + bins + b] += neg[b];
    }
    double *m = a->m2 + group * c * c;
    for (size_t i = 0; i < c; i++) { /* the upper triangle: M is symmetric */
        for (size_t j = i; j < c; j++) {
            m[i * c + j] += y[i] * y[j];
        }
    }
    a->n[group]++;
    a->reports++;
    return DPM_OK;
}

dpm_status_t dpm_roc_groups_agg_merge(dpm_roc_groups_agg_t *dst, const dpm_roc_groups_agg_t *src)
{
    if (dst == NULL || src == NULL || dst->sum == NULL || src->sum == NULL ||
        dst->groups != src->groups || dst->bins != src->bins) {
        return DPM_ERR_PARAM;
    }
    size_t c = 2u * (size_t)dst->bins;
    for (size_t i = 0; i < dst->groups * c; i++) {
        dst->sum[i] += src->sum[i];
    }
    for (size_t i = 0; i < dst->groups * c * c; i++) {
        dst->m2[i] += src->m2[i];
    }
    for (uint32_t g = 0; g < dst->groups; g++) {
        dst->n[g] += src->n[g];
    }
    dst->reports += src->reports;
    return DPM_OK;
}

/* x^T M x for a symmetric c x c M stored as its upper triangle. */
static double quadform(const double *m, const double *x, size_t c)
{
    double t = 0.0;
    for (size_t i = 0; i < c; i++) {
        if (x[i] == 0.0) {
            continue;
        }
        double r = 0.0;
        for (size_t j = i + 1; j < c; j++) {
            r += m[i * c + j] * x[j];
        }
        t += x[i] * (m[i * c + i] * x[i] + 2.0 * r);
    }
    return t;
}

typedef struct {
    const dpm_roc_groups_params_t *p;
    const dpm_roc_groups_agg_t *a;
    size_t c;     /* cells: 2B */
    double *mtot; /* sum_g M_g (upper triangle) */
    double *h;    /* H_g, groups x c */
    double *w;    /* scratch: groups x c */
    double *v;    /* scratch: c */
} ctx_t;

/* Var of L = sum_g w_g^T H_g (w in x->w, zero for the groups not in `used`). */
static double var_linear(const ctx_t *x, const int *used)
{
    const dpm_roc_groups_params_t *p = x->p;
    const dpm_roc_groups_agg_t *a = x->a;
    size_t c = x->c;
    double g = p->P - p->Q, s1 = 0.0, s2 = 0.0;
    double W[2 * DPM_ROC_GROUPS_MAX_BINS];
    memset(W, 0, sizeof(W));
    for (uint32_t k = 0; k < a->groups; k++) {
        for (size_t i = 0; used[k] && i < c; i++) {
            W[i] += x->w[k * c + i];
        }
    }
    for (uint32_t k = 0; k < a->groups; k++) {
        for (size_t i = 0; i < c; i++) {
            x->v[i] = ((used[k] ? x->w[k * c + i] : 0.0) - p->Q * W[i]) / g;
        }
        s1 += quadform(a->m2 + k * c * c, x->v, c);
        if (!used[k]) {
            continue;
        }
        const double *wk = x->w + k * c;
        double norm2 = 0.0;
        for (size_t i = 0; i < c; i++) {
            norm2 += wk[i] * wk[i];
        }
        s2 += (quadform(a->m2 + k * c * c, wk, c) - p->Q * quadform(x->mtot, wk, c) -
               p->noise_var * norm2 * ((double)a->n[k] - p->Q * (double)a->reports)) /
              g;
    }
    return s1 - s2;
}

/* sd of a variance (0 when it is not positive). */
static double sd_of(double var)
{
    return var > 0.0 ? sqrt(var) : 0.0;
}

static void undefined_group(dpm_roc_group_estimate_t *e, const char *why)
{
    double P = e->P, N = e->N, Ps = e->P_sd, Ns = e->N_sd;
    memset(e, 0, sizeof(*e));
    e->reason = why;
    e->P = P, e->N = N, e->P_sd = Ps, e->N_sd = Ns; /* the counts stay: they say why */
    e->small_sample = 1;
}

static double clip01(double v)
{
    return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

/* Group k: AUC, its gradient into grad (c cells), ROC points. */
static void group_estimate(const ctx_t *x, uint32_t k, const double *qk, const double *qr,
                           double qk_tot, double qr_tot, double *grad, dpm_roc_group_estimate_t *e)
{
    const dpm_roc_groups_params_t *p = x->p;
    uint32_t B = p->bins;
    size_t c = x->c;
    const double *pos = x->h + k * c, *neg = pos + B;
    int used[DPM_ROC_GROUPS_MAX] = {0};
    used[k] = 1;
    double g = p->P - p->Q, a1 = (1.0 - p->Q) / g, a0 = -p->Q / g;
    double P = 0.0, N = 0.0, num = 0.0;
    for (uint32_t b = 0; b < B; b++) {
        num += pos[b] * (N + 0.5 * neg[b]); /* N is the sum of neg below b so far */
        P += pos[b];
        N += neg[b];
    }
    double num_c = num - (a1 * a1 - a1) * qk[k] - (a0 * a0 - a0) * (qk_tot - qk[k]);
    double den_c = P * N - (a1 * a1 - a1) * qr[k] - (a0 * a0 - a0) * (qr_tot - qr[k]);
    memset(e, 0, sizeof(*e));
    e->P = P;
    e->N = N;
    memset(x->w, 0, p->groups * c * sizeof(double));
    for (uint32_t b = 0; b < B; b++) {
        x->w[k * c + b] = 1.0;
    }
    e->P_sd = sd_of(var_linear(x, used));
    memset(x->w, 0, p->groups * c * sizeof(double));
    for (uint32_t b = 0; b < B; b++) {
        x->w[k * c + B + b] = 1.0;
    }
    e->N_sd = sd_of(var_linear(x, used));
    if (!(P > 0.0) || !(N > 0.0) || !(den_c > 0.0)) {
        undefined_group(e, !(P > 0.0)   ? "estimated positives of the group not above 0"
                           : !(N > 0.0) ? "estimated negatives of the group not above 0"
                                        : "estimated (positive, negative) pairs not above 0");
        return;
    }
    double A = num_c / den_c;
    /* gradient of A in the group's cells */
    double below = 0.0, above = 0.0;
    for (uint32_t b = 0; b < B; b++) {
        grad[b] = (below + 0.5 * neg[b] - A * N) / den_c;
        below += neg[b];
    }
    for (uint32_t b = B; b-- > 0;) {
        grad[B + b] = (above + 0.5 * pos[b] - A * P) / den_c;
        above += pos[b];
    }
    memset(x->w, 0, p->groups * c * sizeof(double));
    memcpy(x->w + k * c, grad, c * sizeof(double));
    double var = var_linear(x, used);
    e->defined = 1;
    e->reason = "";
    e->auc = A;
    e->auc_clipped = clip01(A);
    e->ci_valid = var > 0.0;
    e->sd = sd_of(var);
    /* ROC points at thresholds j = 0 .. B: TPR_j = C_j / P, FPR_j = D_j / N */
    double cj = P, dj = N;
    for (uint32_t j = 0; j <= B; j++) {
        double tpr = cj / P, fpr = dj / N;
        e->tpr[j] = clip01(tpr);
        e->fpr[j] = clip01(fpr);
        memset(x->w, 0, p->groups * c * sizeof(double));
        for (uint32_t b = 0; b < B; b++) {
            x->w[k * c + b] = ((b >= j ? 1.0 : 0.0) - tpr) / P;
        }
        e->tpr_sd[j] = sd_of(var_linear(x, used));
        memset(x->w, 0, p->groups * c * sizeof(double));
        for (uint32_t b = 0; b < B; b++) {
            x->w[k * c + B + b] = ((b >= j ? 1.0 : 0.0) - fpr) / N;
        }
        e->fpr_sd[j] = sd_of(var_linear(x, used));
        if (j < B) {
            cj -= pos[j];
            dj -= neg[j];
        }
    }
    e->small_sample =
        !(e->sd <= SMALL_SD) || P < SMALL_COUNT_SDS * e->P_sd || N < SMALL_COUNT_SDS * e->N_sd;
}

dpm_status_t dpm_roc_groups_estimate(const dpm_roc_groups_params_t *p,
                                     const dpm_roc_groups_agg_t *a, double confidence,
                                     dpm_roc_groups_estimate_t *est)
{
    if (p == NULL || a == NULL || est == NULL || a->sum == NULL || p->groups != a->groups ||
        p->bins != a->bins || !(confidence > 0.0 && confidence < 1.0)) {
        return DPM_ERR_PARAM;
    }
    memset(est, 0, sizeof(*est));
    est->groups = p->groups;
    est->bins = p->bins;
    est->reports = a->reports;
    (void)dpm_disp_normal_quantile(0.5 + confidence / 2.0, &est->z);
    est->ngaps = p->groups * (p->groups - 1u) / 2u;
    uint32_t G = p->groups, B = p->bins;
    size_t c = 2u * (size_t)B;
    if (a->reports == 0) {
        for (uint32_t k = 0; k < G; k++) {
            undefined_group(&est->group[k], "no reports");
        }
        for (uint32_t i = 0, n = 0; i < G; i++) {
            for (uint32_t j = i + 1; j < G; j++, n++) {
                est->gap[n] = (dpm_roc_gap_estimate_t){i, j, 0, "no reports", 1, 0, 0, 0, 0, 0};
            }
        }
        return DPM_OK;
    }
    ctx_t x = {p, a, c, NULL, NULL, NULL, NULL};
    x.mtot = calloc(c * c, sizeof(double));
    x.h = calloc(G * c, sizeof(double));
    x.w = calloc(G * c, sizeof(double));
    x.v = calloc(c, sizeof(double));
    double *grads = calloc(G * c, sizeof(double));
    if (x.mtot == NULL || x.h == NULL || x.w == NULL || x.v == NULL || grads == NULL) {
        free(x.mtot), free(x.h), free(x.w), free(x.v), free(grads);
        return DPM_ERR_BUFFER;
    }
    /* H_g = (S_g - Q T) / (P - Q); M = sum M_g; per reported group the diagonal sums q_i */
    double T[2 * DPM_ROC_GROUPS_MAX_BINS] = {0.0};
    double qk[DPM_ROC_GROUPS_MAX] = {0.0}, qr[DPM_ROC_GROUPS_MAX] = {0.0}, qk_tot = 0.0,
           qr_tot = 0.0;
    for (uint32_t k = 0; k < G; k++) {
        const double *m = a->m2 + k * c * c;
        for (size_t i = 0; i < c; i++) {
            T[i] += (double)a->sum[k * c + i];
            for (size_t j = i; j < c; j++) {
                x.mtot[i * c + j] += m[i * c + j];
            }
        }
        /* q_i = y+^T K y-: pos cell b (row b < B), neg cell d (column B + d), K = [b > d] + 1/2
         * [b = d]; (1^T y+)(1^T y-) likewise with weight 1. Rows < columns: the upper triangle. */
        for (uint32_t b = 0; b < B; b++) {
            for (uint32_t d = 0; d < B; d++) {
                double v = m[(size_t)b * c + B + d];
                qk[k] += (b > d ? 1.0 : b == d ? 0.5 : 0.0) * v;
                qr[k] += v;
            }
        }
        qk_tot += qk[k];
        qr_tot += qr[k];
    }
    double g = p->P - p->Q;
    for (uint32_t k = 0; k < G; k++) {
        for (size_t i = 0; i < c; i++) {
            x.h[k * c + i] = ((double)a->sum[k * c + i] - p->Q * T[i]) / g;
        }
    }
    for (uint32_t k = 0; k < G; k++) {
        group_estimate(&x, k, qk, qr, qk_tot, qr_tot, grads + k * c, &est->group[k]);
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < G; i++) {
        for (uint32_t j = i + 1; j < G; j++, n++) {
            dpm_roc_gap_estimate_t *e = &est->gap[n];
            memset(e, 0, sizeof(*e));
            e->g = i;
            e->h = j;
            if (!est->group[i].defined || !est->group[j].defined) {
                e->reason = "a group's AUC is undefined";
                e->small_sample = 1;
                continue;
            }
            int used[DPM_ROC_GROUPS_MAX] = {0};
            used[i] = used[j] = 1;
            memset(x.w, 0, G * c * sizeof(double));
            for (size_t l = 0; l < c; l++) {
                x.w[i * c + l] = grads[i * c + l];
                x.w[j * c + l] = -grads[j * c + l];
            }
            double var = var_linear(&x, used);
            e->defined = 1;
            e->reason = "";
            e->gap = est->group[i].auc - est->group[j].auc;
            e->ci_valid = var > 0.0;
            e->sd = sd_of(var);
            e->small_sample = est->group[i].small_sample || est->group[j].small_sample;
        }
    }
    for (uint32_t k = 0; k < G; k++) {
        dpm_roc_group_estimate_t *e = &est->group[k];
        if (e->defined && e->ci_valid) {
            e->ci_lo = e->auc - est->z * e->sd;
            e->ci_hi = e->auc + est->z * e->sd;
        }
    }
    for (uint32_t i = 0; i < est->ngaps; i++) {
        dpm_roc_gap_estimate_t *e = &est->gap[i];
        if (e->defined && e->ci_valid) {
            e->ci_lo = e->gap - est->z * e->sd;
            e->ci_hi = e->gap + est->z * e->sd;
        }
    }
    free(x.mtot), free(x.h), free(x.w), free(x.v), free(grads);
    return DPM_OK;
}

dpm_status_t dpm_roc_groups_pairwise(const dpm_roc_groups_estimate_t *est, double confidence,
                                     dpm_pairwise_t *out)
{
    if (est == NULL || est->groups < 2 || est->groups > DPM_ROC_GROUPS_MAX) {
        return DPM_ERR_PARAM;
    }
    dpm_pairwise_in_t in;
    memset(&in, 0, sizeof(in));
    in.d = est->groups;
    for (uint32_t g = 0; g < in.d; g++) {
        const dpm_roc_group_estimate_t *e = &est->group[g];
        in.valid[g] = e->defined && e->ci_valid;
        in.est[g] = in.valid[g] ? e->auc : 0.0;
        in.cov[g][g] = in.valid[g] ? e->sd * e->sd : 0.0;
    }
    for (uint32_t k = 0; k < est->ngaps; k++) {
        const dpm_roc_gap_estimate_t *e = &est->gap[k];
        uint32_t g = e->g, h = e->h;
        if (in.valid[g] && in.valid[h]) {
            double gap_var = e->defined && e->ci_valid ? e->sd * e->sd : 0.0;
            in.cov[g][h] = in.cov[h][g] = (in.cov[g][g] + in.cov[h][h] - gap_var) / 2.0;
        }
    }
    return dpm_pairwise_compare(&in, confidence, out);
}
