/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group roc_hist estimator (see roc_groups.h). */
#include "estimate/roc_groups.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "estimate/agg_sums.h"
#include "estimate/ci_flags.h"
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
    dpm_roc_params_t r; /* roc.h's noise variance and equal bins: one rule for both estimators */
    if (dpm_roc_params_init(&r, bins, scale) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    p->groups = groups;
    p->bins = bins;
    p->P = (double)keep / TWO32;
    p->Q = (double)other / TWO32;
    p->scale = r.scale;
    p->noise_var = r.noise_var;
    memcpy(p->width, r.width, bins * sizeof(double));
    return DPM_OK;
}

dpm_status_t dpm_roc_groups_params_set_edges(dpm_roc_groups_params_t *p, const uint32_t *edges_q31,
                                             uint32_t nedges)
{
    dpm_roc_params_t r; /* roc.h reads the edges: one rule for both estimators */
    if (p == NULL || dpm_roc_params_init(&r, p->bins, 0.0) != DPM_OK ||
        dpm_roc_params_set_edges(&r, edges_q31, nedges) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    memcpy(p->width, r.width, p->bins * sizeof(double));
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
    double y[2 * DPM_ROC_GROUPS_MAX_BINS] = {0.0}; /* the first c set below */
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
    est_add_sums(dst->sum, src->sum, (uint32_t)(dst->groups * c));
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

typedef struct dpm_roc_groups_lin {
    const dpm_roc_groups_params_t *p;
    const dpm_roc_groups_agg_t *a;
    size_t c;     /* cells: 2B */
    double *mtot; /* sum_g M_g (upper triangle) */
    double *h;    /* H_g, groups x c */
    double *w;    /* scratch: groups x c */
    double *v;    /* scratch: c */
    double z, confidence;
    /* per kernel (0: binned, ties 1/2; 1: unbinned, roc.h): the B x B matrix, and per reported
     * group the diagonal sums q_i = y+^T K y- (and, kernel-free, (1^T y+)(1^T y-)) */
    double K[2][DPM_ROC_GROUPS_MAX_BINS * DPM_ROC_GROUPS_MAX_BINS];
    double qk[2][DPM_ROC_GROUPS_MAX], qk_tot[2], qr[DPM_ROC_GROUPS_MAX], qr_tot;
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
    e->ci_flags = e->unbinned_flags = e->unbinned_total_flags = DPM_CI_SMALL_N;
}

static double clip01(double v)
{
    return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

/* The jump of one randomization event for L = sum_g w_g^T H_g (w in x->w over the groups in
 * `used`): a unit of one cell's Laplace noise in a report of reported group k moves L by
 * v_k = (w_k - Q W) / (P - Q), and a device's GRR move between groups k and k' by (v_k' -
 * v_k)^T y = (w_k' - w_k)^T y / (P - Q), taken at the reports' root mean square y. */
static double jump_linear(const ctx_t *x, const int *used)
{
    const dpm_roc_groups_params_t *p = x->p;
    size_t c = x->c;
    double g = p->P - p->Q, lap = 0.0, grr = 0.0, n = (double)x->a->reports;
    for (uint32_t k = 0; k < p->groups; k++) {
        for (size_t i = 0; used[k] && i < c; i++) {
            lap = fmax(lap, fabs(x->w[k * c + i]) * (1.0 - p->Q) / g);
        }
        if (used[k] && n > 0.0) {
            grr = fmax(grr, quadform(x->mtot, x->w + k * c, c) / n);
        }
    }
    return fmax(p->noise_var > 0.0 ? lap : 0.0, sqrt(fmax(grr, 0.0)) / g);
}

/* The ci flags and half-width of a linear statistic (w in x->w) of variance var: few events,
 * and the bias bound (0: none). */
static double halfwidth(const ctx_t *x, const int *used, double var, double bound, unsigned *flags,
                        double *events)
{
    return dpm_ci_halfwidth(var > 0.0 ? var : 0.0, jump_linear(x, used), bound, x->confidence,
                            events, flags);
}

/* Group k's AUC under kernel kk (0 binned, 1 unbinned): the diagonal-corrected ratio (roc_groups.h)
 * and its gradient in the group's cells (c entries). 0 if a total or the pair count is not
 * positive. */
static int kernel_auc(const ctx_t *x, uint32_t k, int kk, double *auc, double *grad)
{
    const dpm_roc_groups_params_t *p = x->p;
    uint32_t B = p->bins;
    const double *pos = x->h + k * x->c, *neg = pos + B, *K = x->K[kk];
    double g = p->P - p->Q, a1 = (1.0 - p->Q) / g, a0 = -p->Q / g;
    double P = 0.0, N = 0.0, num = 0.0, kneg[DPM_ROC_GROUPS_MAX_BINS] = {0.0},
           posk[DPM_ROC_GROUPS_MAX_BINS] = {0.0};
    for (uint32_t b = 0; b < B; b++) {
        P += pos[b];
        N += neg[b];
        for (uint32_t d = 0; d < B; d++) {
            kneg[b] += K[b * B + d] * neg[d];
            posk[d] += pos[b] * K[b * B + d];
        }
    }
    for (uint32_t b = 0; b < B; b++) {
        num += pos[b] * kneg[b];
    }
    double num_c =
        num - (a1 * a1 - a1) * x->qk[kk][k] - (a0 * a0 - a0) * (x->qk_tot[kk] - x->qk[kk][k]);
    double den_c = P * N - (a1 * a1 - a1) * x->qr[k] - (a0 * a0 - a0) * (x->qr_tot - x->qr[k]);
    if (!(P > 0.0) || !(N > 0.0) || !(den_c > 0.0)) {
        return 0;
    }
    *auc = num_c / den_c;
    for (uint32_t b = 0; b < B; b++) {
        grad[b] = (kneg[b] - *auc * N) / den_c;
        grad[B + b] = (posk[b] - *auc * P) / den_c;
    }
    return 1;
}

/* x->w, used: the gradient gk on group k's cells (and -gh on group h's, if h != k). */
static void set_w(const ctx_t *x, uint32_t k, uint32_t h, const double *gk, const double *gh,
                  int *used)
{
    size_t c = x->c;
    memset(used, 0, DPM_ROC_GROUPS_MAX * sizeof(int));
    memset(x->w, 0, x->p->groups * c * sizeof(double));
    used[k] = 1;
    memcpy(x->w + k * c, gk, c * sizeof(double));
    if (h != k) {
        used[h] = 1;
        for (size_t i = 0; i < c; i++) {
            x->w[h * c + i] = -gh[i];
        }
    }
}

/* Group k's unbinned extras: the bound's value and gradient (roc.h) and the two variances the
 * bound's interval adds, on H_k. */
static void group_unbinned_terms(const ctx_t *x, uint32_t k, double *bound, double *bgrad,
                                 double *within, double *sampling)
{
    uint32_t B = x->p->bins;
    const double *pos = x->h + k * x->c, *neg = pos + B;
    *bound = dpm_roc_unbinned_bound(pos, neg, x->p->width, B, bgrad);
    *within = dpm_roc_unbinned_within(pos, neg, B);
    *sampling = dpm_roc_unbinned_sampling_var(pos, neg, x->p->width, B);
}

/* Group k: AUCs, their gradients into grad[0] (binned) and grad[1] (unbinned), ROC points. */
static void group_estimate(const ctx_t *x, uint32_t k, double *grad0, double *grad1,
                           dpm_roc_group_estimate_t *e)
{
    const dpm_roc_groups_params_t *p = x->p;
    uint32_t B = p->bins;
    size_t c = x->c;
    const double *pos = x->h + k * c, *neg = pos + B;
    int used[DPM_ROC_GROUPS_MAX] = {0};
    used[k] = 1;
    double P = 0.0, N = 0.0;
    for (uint32_t b = 0; b < B; b++) {
        P += pos[b];
        N += neg[b];
    }
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
    double A = 0.0, Au = 0.0;
    if (!kernel_auc(x, k, 0, &A, grad0) || !kernel_auc(x, k, 1, &Au, grad1)) {
        undefined_group(e, !(P > 0.0)   ? "estimated positives of the group not above 0"
                           : !(N > 0.0) ? "estimated negatives of the group not above 0"
                                        : "estimated (positive, negative) pairs not above 0");
        return;
    }
    set_w(x, k, k, grad0, grad0, used);
    double var = var_linear(x, used);
    double rel[2] = {e->P_sd * e->P_sd / (P * P), e->N_sd * e->N_sd / (N * N)};
    unsigned base = dpm_ci_class_noise(rel, 2, x->z, NULL);
    e->defined = 1;
    e->reason = "";
    e->auc = A;
    e->auc_clipped = clip01(A);
    e->ci_valid = var > 0.0;
    e->sd = sd_of(var);
    e->ci_flags = base;
    e->half = halfwidth(x, used, var, 0.0, &e->ci_flags, &e->events);
    /* the unbinned AUC: noise, within-bin order (or sampling) and the interpolation bound */
    double bgrad[2 * DPM_ROC_GROUPS_MAX_BINS] = {0.0}, within, sampling;
    group_unbinned_terms(x, k, &e->unbinned_bound, bgrad, &within, &sampling);
    set_w(x, k, k, bgrad, bgrad, used);
    e->unbinned_bound += sd_of(var_linear(x, used)); /* its own noise (roc.h) */
    set_w(x, k, k, grad1, grad1, used);
    double vu = var_linear(x, used);
    e->auc_unbinned = Au;
    e->auc_unbinned_clipped = clip01(Au);
    e->unbinned_sd = sd_of(vu);
    e->unbinned_within = within;
    e->unbinned_sampling = sampling;
    e->unbinned_flags = e->unbinned_total_flags = base;
    if (!isfinite(e->unbinned_bound)) {
        e->unbinned_flags |= DPM_CI_NO_BOUND;
        e->unbinned_total_flags |= DPM_CI_NO_BOUND;
    }
    double bound = isfinite(e->unbinned_bound) ? e->unbinned_bound : 0.0;
    e->unbinned_half = halfwidth(x, used, vu + (isfinite(within) ? within : 0.0), bound,
                                 &e->unbinned_flags, &e->unbinned_events);
    e->unbinned_half_total = halfwidth(x, used, vu + (isfinite(sampling) ? sampling : 0.0), bound,
                                       &e->unbinned_total_flags, NULL);
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
    if (e->small_sample) {
        e->ci_flags |= DPM_CI_SMALL_N;
        e->unbinned_flags |= DPM_CI_SMALL_N;
        e->unbinned_total_flags |= DPM_CI_SMALL_N;
    }
}

/* The interval est -+ half. */
static void around(double est, double half, double *lo, double *hi)
{
    *lo = est - half;
    *hi = est + half;
}

/* The gap AUC_i - AUC_j, binned and unbinned (grads: per group, binned then unbinned). */
static void gap_estimate(const ctx_t *x, uint32_t i, uint32_t j, const double *grads,
                         const dpm_roc_group_estimate_t *gi, const dpm_roc_group_estimate_t *gj,
                         dpm_roc_gap_estimate_t *e)
{
    size_t c = x->c;
    int used[DPM_ROC_GROUPS_MAX];
    memset(e, 0, sizeof(*e));
    e->g = i;
    e->h = j;
    if (!gi->defined || !gj->defined) {
        e->reason = "a group's AUC is undefined";
        e->small_sample = 1;
        e->ci_flags = e->unbinned_flags = e->unbinned_total_flags = DPM_CI_SMALL_N;
        return;
    }
    unsigned base = ((gi->ci_flags | gj->ci_flags) & (DPM_CI_CLASS_NOISE | DPM_CI_SMALL_N));
    e->defined = 1;
    e->reason = "";
    e->small_sample = gi->small_sample || gj->small_sample;
    e->gap = gi->auc - gj->auc;
    set_w(x, i, j, grads + 2 * i * c, grads + 2 * j * c, used);
    double var = var_linear(x, used);
    e->ci_valid = var > 0.0;
    e->sd = sd_of(var);
    e->ci_flags = base;
    e->half = halfwidth(x, used, var, 0.0, &e->ci_flags, &e->events);
    /* unbinned: both groups' bounds add (a conservative bound of the difference), and both
     * groups' within-bin (or sampling) variances */
    set_w(x, i, j, grads + (2 * i + 1) * c, grads + (2 * j + 1) * c, used);
    double vu = var_linear(x, used);
    e->gap_unbinned = gi->auc_unbinned - gj->auc_unbinned;
    e->unbinned_sd = sd_of(vu);
    e->unbinned_bound = gi->unbinned_bound + gj->unbinned_bound;
    unsigned ub = base | ((gi->unbinned_flags | gj->unbinned_flags) & DPM_CI_NO_BOUND);
    e->unbinned_flags = e->unbinned_total_flags = ub;
    double bound = isfinite(e->unbinned_bound) ? e->unbinned_bound : 0.0;
    double within = gi->unbinned_within + gj->unbinned_within;
    double sampling = gi->unbinned_sampling + gj->unbinned_sampling;
    e->unbinned_half = halfwidth(x, used, vu + (isfinite(within) ? within : 0.0), bound,
                                 &e->unbinned_flags, &e->unbinned_events);
    e->unbinned_half_total = halfwidth(x, used, vu + (isfinite(sampling) ? sampling : 0.0), bound,
                                       &e->unbinned_total_flags, NULL);
}

/* The context of a and p: H_g, M, the kernels and the diagonal sums (a->reports > 0). */
static dpm_status_t ctx_open(const dpm_roc_groups_params_t *p, const dpm_roc_groups_agg_t *a,
                             double confidence, ctx_t **out)
{
    uint32_t G = p->groups, B = p->bins;
    size_t c = 2u * (size_t)B;
    ctx_t *x = calloc(1, sizeof(*x)); /* the kernels: tens of KB */
    if (x != NULL) {
        x->p = p, x->a = a, x->c = c, x->confidence = confidence;
        x->z = prob_norm_quantile(0.5 + confidence / 2.0);
        x->mtot = calloc(c * c, sizeof(double));
        x->h = calloc(G * c, sizeof(double));
        x->w = calloc(G * c, sizeof(double));
        x->v = calloc(c, sizeof(double));
    }
    if (x == NULL || x->mtot == NULL || x->h == NULL || x->w == NULL || x->v == NULL) {
        dpm_roc_groups_lin_close(x);
        return DPM_ERR_BUFFER;
    }
    for (uint32_t b = 0; b < B; b++) { /* the binned kernel [b > d] + 1/2 [b = d] */
        for (uint32_t d = 0; d < B; d++) {
            x->K[0][b * B + d] = b > d ? 1.0 : b == d ? 0.5 : 0.0;
        }
    }
    (void)dpm_roc_unbinned_kernel(p->width, B, x->K[1]);
    /* H_g = (S_g - Q T) / (P - Q); M = sum M_g; per reported group the diagonal sums q_i */
    double T[2 * DPM_ROC_GROUPS_MAX_BINS] = {0.0};
    for (uint32_t k = 0; k < G; k++) {
        const double *m = a->m2 + k * c * c;
        for (size_t i = 0; i < c; i++) {
            T[i] += (double)a->sum[k * c + i];
            for (size_t j = i; j < c; j++) {
                x->mtot[i * c + j] += m[i * c + j];
            }
        }
        /* q_i = y+^T K y-: pos cell b (row b < B), neg cell d (column B + d); (1^T y+)(1^T
         * y-) likewise with weight 1. Rows < columns: the upper triangle. */
        for (uint32_t b = 0; b < B; b++) {
            for (uint32_t d = 0; d < B; d++) {
                double v = m[(size_t)b * c + B + d];
                x->qk[0][k] += x->K[0][b * B + d] * v;
                x->qk[1][k] += x->K[1][b * B + d] * v;
                x->qr[k] += v;
            }
        }
        x->qk_tot[0] += x->qk[0][k];
        x->qk_tot[1] += x->qk[1][k];
        x->qr_tot += x->qr[k];
    }
    double g = p->P - p->Q;
    for (uint32_t k = 0; k < G; k++) {
        for (size_t i = 0; i < c; i++) {
            x->h[k * c + i] = ((double)a->sum[k * c + i] - p->Q * T[i]) / g;
        }
    }
    *out = x;
    return DPM_OK;
}

void dpm_roc_groups_lin_close(dpm_roc_groups_lin_t *x)
{
    if (x != NULL) {
        free(x->mtot), free(x->h), free(x->w), free(x->v), free(x);
    }
}

dpm_status_t dpm_roc_groups_lin_open(const dpm_roc_groups_params_t *p,
                                     const dpm_roc_groups_agg_t *a, double confidence,
                                     dpm_roc_groups_lin_t **out)
{
    if (p == NULL || a == NULL || out == NULL || a->sum == NULL || p->groups != a->groups ||
        p->bins != a->bins || a->reports == 0 || !(confidence > 0.0 && confidence < 1.0)) {
        return DPM_ERR_PARAM;
    }
    return ctx_open(p, a, confidence, out);
}

const double *dpm_roc_groups_lin_hist(const dpm_roc_groups_lin_t *x, uint32_t g)
{
    return g < x->p->groups ? x->h + g * x->c : NULL;
}

double dpm_roc_groups_lin_var(dpm_roc_groups_lin_t *x, const double *w, double *jump)
{
    int used[DPM_ROC_GROUPS_MAX] = {0};
    memcpy(x->w, w, x->p->groups * x->c * sizeof(double));
    for (uint32_t k = 0; k < x->p->groups; k++) {
        for (size_t i = 0; i < x->c && !used[k]; i++) {
            used[k] = w[k * x->c + i] != 0.0;
        }
    }
    if (jump != NULL) {
        *jump = jump_linear(x, used);
    }
    return var_linear(x, used);
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
    est->z = prob_norm_quantile(0.5 + confidence / 2.0);
    est->ngaps = p->groups * (p->groups - 1u) / 2u;
    uint32_t G = p->groups, B = p->bins;
    size_t c = 2u * (size_t)B;
    if (a->reports == 0) {
        for (uint32_t k = 0; k < G; k++) {
            undefined_group(&est->group[k], "no reports");
        }
        for (uint32_t i = 0, n = 0; i < G; i++) {
            for (uint32_t j = i + 1; j < G; j++, n++) {
                est->gap[n] = (dpm_roc_gap_estimate_t){.g = i,
                                                       .h = j,
                                                       .reason = "no reports",
                                                       .small_sample = 1,
                                                       .ci_flags = DPM_CI_SMALL_N,
                                                       .unbinned_flags = DPM_CI_SMALL_N,
                                                       .unbinned_total_flags = DPM_CI_SMALL_N};
            }
        }
        return DPM_OK;
    }
    ctx_t *x = NULL;
    double *grads = calloc(2 * G * c, sizeof(double)); /* per group: binned, then unbinned */
    if (grads == NULL || ctx_open(p, a, confidence, &x) != DPM_OK) {
        free(grads);
        return DPM_ERR_BUFFER;
    }
    for (uint32_t k = 0; k < G; k++) {
        group_estimate(x, k, grads + 2 * k * c, grads + (2 * k + 1) * c, &est->group[k]);
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < G; i++) {
        for (uint32_t j = i + 1; j < G; j++, n++) {
            gap_estimate(x, i, j, grads, &est->group[i], &est->group[j], &est->gap[n]);
        }
    }
    for (uint32_t k = 0; k < G; k++) {
        dpm_roc_group_estimate_t *e = &est->group[k];
        if (e->defined && e->ci_valid) {
            around(e->auc, e->half, &e->ci_lo, &e->ci_hi);
            around(e->auc_unbinned, e->unbinned_half, &e->unbinned_ci_lo, &e->unbinned_ci_hi);
            around(e->auc_unbinned, e->unbinned_half_total, &e->unbinned_ci_total_lo,
                   &e->unbinned_ci_total_hi);
        }
    }
    for (uint32_t i = 0; i < est->ngaps; i++) {
        dpm_roc_gap_estimate_t *e = &est->gap[i];
        if (e->defined && e->ci_valid) {
            around(e->gap, e->half, &e->ci_lo, &e->ci_hi);
            around(e->gap_unbinned, e->unbinned_half, &e->unbinned_ci_lo, &e->unbinned_ci_hi);
            around(e->gap_unbinned, e->unbinned_half_total, &e->unbinned_ci_total_lo,
                   &e->unbinned_ci_total_hi);
        }
    }
    dpm_roc_groups_lin_close(x);
    free(grads);
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
