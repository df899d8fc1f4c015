/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist estimator (see roc.h). */
#include "estimate/roc.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "common/prob.h"
#include "estimate/agg_sums.h"
#include "estimate/ci_flags.h"

dpm_status_t dpm_roc_params_init(dpm_roc_params_t *p, uint32_t bins, double scale)
{
    if (p == NULL || bins < 2 || bins > DPM_ROC_MAX_BINS || !(scale >= 0.0) || !isfinite(scale)) {
        return DPM_ERR_PARAM;
    }
    memset(p, 0, sizeof(*p)); /* every byte defined: callers compare parameter sets whole */
    p->bins = bins;
    p->scale = scale;
    p->noise_var = prob_dlap_var(scale);
    for (uint32_t b = 0; b < bins; b++) {
        p->width[b] = 1.0 / (double)bins;
    }
    return DPM_OK;
}

dpm_status_t dpm_roc_params_init_central(dpm_roc_params_t *p, uint32_t bins, double scale,
                                         uint32_t draws)
{
    dpm_roc_params_t q;
    if (draws == 0 || dpm_roc_params_init(&q, bins, scale) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    q.central_draws = draws;
    *p = q;
    return DPM_OK;
}

dpm_status_t dpm_roc_params_init_central_gauss(dpm_roc_params_t *p, uint32_t bins, double sigma2,
                                               uint32_t draws)
{
    dpm_roc_params_t q;
    if (!(sigma2 > 0.0) || !isfinite(sigma2) ||
        dpm_roc_params_init_central(&q, bins, 0.0, draws) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    q.noise_var = sigma2;
    *p = q;
    return DPM_OK;
}

dpm_status_t dpm_roc_params_set_edges(dpm_roc_params_t *p, const uint32_t *edges_q31,
                                      uint32_t nedges)
{
    const uint32_t top = UINT32_C(1) << 31;
    if (p == NULL || edges_q31 == NULL || nedges + 1 != p->bins) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t j = 0; j < nedges; j++) {
        if (edges_q31[j] > top || (j > 0 && edges_q31[j] <= edges_q31[j - 1])) {
            return DPM_ERR_PARAM;
        }
    }
    for (uint32_t b = 0; b < p->bins; b++) {
        uint32_t lo = b == 0 ? 0 : edges_q31[b - 1], hi = b == nedges ? top : edges_q31[b];
        p->width[b] = (hi > lo ? (double)(hi - lo) : 1.0) / (double)top;
    }
    return DPM_OK;
}

dpm_status_t dpm_roc_params_set_label_flip(dpm_roc_params_t *p, double q)
{
    if (p == NULL || !(q >= 0.0 && q < 0.5)) { /* q = 1/2: the labels carry nothing */
        return DPM_ERR_PARAM;
    }
    p->label_flip = q;
    return DPM_OK;
}

dpm_status_t dpm_roc_agg_init(dpm_roc_agg_t *a, uint32_t bins)
{
    return est_agg_start(a, sizeof(*a), offsetof(dpm_roc_agg_t, bins), bins, 2, DPM_ROC_MAX_BINS);
}

dpm_status_t dpm_roc_agg_add(dpm_roc_agg_t *a, uint32_t bins, const int32_t *pos,
                             const int32_t *neg)
{
    if (a == NULL || pos == NULL || neg == NULL || bins != a->bins) {
        return DPM_ERR_PARAM;
    }
    est_add_counts(a->pos, pos, bins);
    est_add_counts(a->neg, neg, bins);
    a->reports++;
    return DPM_OK;
}

dpm_status_t dpm_roc_agg_merge(dpm_roc_agg_t *dst, const dpm_roc_agg_t *src)
{
    if (dst == NULL || src == NULL || dst->bins != src->bins) {
        return DPM_ERR_PARAM;
    }
    est_add_sums(dst->pos, src->pos, dst->bins);
    est_add_sums(dst->neg, src->neg, dst->bins);
    dst->reports += src->reports;
    return DPM_OK;
}

int dpm_roc_project(const double *y, uint32_t n, double *x)
{
    double sorted[DPM_ROC_MAX_BINS], total = 0.0;
    int any_negative = 0;
    for (uint32_t i = 0; i < n; i++) {
        total += y[i];
        any_negative |= y[i] < 0.0;
    }
    if (!(total > 0.0)) {
        for (uint32_t i = 0; i < n; i++) {
            x[i] = 0.0;
        }
        return 1;
    }
    if (!any_negative) {
        memcpy(x, y, n * sizeof(double));
        return 0;
    }
    for (uint32_t i = 0; i < n; i++) { /* insertion sort, descending (n <= DPM_MAX_BINS) */
        double v = y[i];
        uint32_t k = i;
        for (; k > 0 && sorted[k - 1] < v; k--) {
            sorted[k] = sorted[k - 1];
        }
        sorted[k] = v;
    }
    double prefix = 0.0, tau = 0.0;
    for (uint32_t k = 0; k < n; k++) {
        prefix += sorted[k];
        double t = (prefix - total) / (double)(k + 1);
        if (sorted[k] - t > 0.0) {
            tau = t;
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        x[i] = y[i] - tau > 0.0 ? y[i] - tau : 0.0;
    }
    return 1;
}

/* Placement values, AUC and the sums the variances need. The counts may be the noised sums
 * themselves (negative cells included): every quantity here is a polynomial in them, so the AUC
 * numerator is unbiased and the delta method is taken where the data are, not at a projection.
 * The sampling weights (the counts) are clipped at 0: a variance term cannot be negative. */
typedef struct {
    double auc, noise_sum_pos, noise_sum_neg, s10, s01;
    double gx[DPM_ROC_MAX_BINS],
        gu[DPM_ROC_MAX_BINS]; /* dA/dx_b = d10_b / P, dA/du_b = d01_b / N */
} placements_t;

/* The gradient's contribution of one bin to the sums above. */
static void placement_terms(placements_t *pl, uint32_t b, double x, double u, double d10,
                            double d01, double P, double N)
{
    pl->noise_sum_pos += d10 * d10;
    pl->noise_sum_neg += d01 * d01;
    pl->s10 += fmax(x, 0.0) * d10 * d10;
    pl->s01 += fmax(u, 0.0) * d01 * d01;
    pl->gx[b] = d10 / P;
    pl->gu[b] = d01 / N;
}

static void placements(const double *x, const double *u, uint32_t bins, double P, double N,
                       placements_t *pl)
{
    double v10[DPM_ROC_MAX_BINS], v01[DPM_ROC_MAX_BINS];
    double below = 0.0, above = P, auc = 0.0;
    for (uint32_t b = 0; b < bins; b++) {
        above -= x[b]; /* C_{b+1} */
        v10[b] = (below + u[b] / 2.0) / N;
        v01[b] = (above + x[b] / 2.0) / P;
        below += u[b];
        auc += u[b] * v01[b];
    }
    auc /= N;
    memset(pl, 0, sizeof(*pl));
    pl->auc = auc;
    for (uint32_t b = 0; b < bins; b++) {
        placement_terms(pl, b, x[b], u[b], v10[b] - auc, v01[b] - auc, P, N);
    }
}

/* The bins bin b's density slope is taken from (roc.h): its neighbours, one-sided at the ends. */
static void slope_stencil(uint32_t b, uint32_t bins, uint32_t *lo, uint32_t *hi)
{
    *lo = b == 0 ? 0 : b == bins - 1 ? bins - 2 : b - 1;
    *hi = b == 0 ? 1 : b == bins - 1 ? bins - 1 : b + 1;
}

/* The unbinned kernel applied (roc.h): ku = K u and xk = K^T x, the binned kernel's plus the
 * slope terms, one bin at a time: bin b adds (w_b² / 12)(u_b p'_b - x_b q'_b), p'_b = ch x_hi +
 * cl x_lo (central difference; one-sided at the first and last bin). */
static void unbinned_apply(const double *x, const double *u, const double *w, uint32_t bins,
                           double *ku, double *xk)
{
    double mid[DPM_ROC_MAX_BINS], below = 0.0, above = 0.0, left = 0.0;
    for (uint32_t b = 0; b < bins; b++) {
        above += x[b];
    }
    for (uint32_t b = 0; b < bins; b++) {
        above -= x[b];
        ku[b] = below + u[b] / 2.0;
        xk[b] = above + x[b] / 2.0;
        below += u[b];
        mid[b] = left + w[b] / 2.0;
        left += w[b];
    }
    for (uint32_t b = 0; b < bins; b++) {
        uint32_t lo, hi;
        slope_stencil(b, bins, &lo, &hi);
        double dm = mid[hi] - mid[lo], k = w[b] * w[b] / 12.0;
        double ch = 1.0 / (w[hi] * dm), cl = -1.0 / (w[lo] * dm);
        ku[hi] += k * u[b] * ch; /* d/dx of k u_b p'_b */
        ku[lo] += k * u[b] * cl;
        ku[b] -= k * (ch * u[hi] + cl * u[lo]); /* d/dx_b of -k x_b q'_b */
        xk[b] += k * (ch * x[hi] + cl * x[lo]);
        xk[hi] -= k * x[b] * ch;
        xk[lo] -= k * x[b] * cl;
    }
}

/* The unbinned AUC's placement values (roc.h): V10_i = (K u)_i / N, V01_j = (x^T K)_j / P. */
static void placements_unbinned(const double *x, const double *u, const double *w, uint32_t bins,
                                double P, double N, placements_t *pl)
{
    double ku[DPM_ROC_MAX_BINS], xk[DPM_ROC_MAX_BINS], num = 0.0;
    unbinned_apply(x, u, w, bins, ku, xk);
    for (uint32_t b = 0; b < bins; b++) {
        num += x[b] * ku[b];
    }
    memset(pl, 0, sizeof(*pl));
    pl->auc = num / (P * N);
    for (uint32_t b = 0; b < bins; b++) {
        placement_terms(pl, b, x[b], u[b], ku[b] / N - pl->auc, xk[b] / P - pl->auc, P, N);
    }
}

dpm_status_t dpm_roc_unbinned_kernel(const double *width, uint32_t bins, double *K)
{
    double zero[DPM_ROC_MAX_BINS] = {0.0};
    double ku[DPM_ROC_MAX_BINS], xk[DPM_ROC_MAX_BINS];
    if (width == NULL || K == NULL || bins < 2 || bins > DPM_ROC_MAX_BINS) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t j = 0; j < bins; j++) { /* column j = K e_j */
        double e[DPM_ROC_MAX_BINS] = {0.0};
        e[j] = 1.0;
        unbinned_apply(zero, e, width, bins, ku, xk);
        for (uint32_t i = 0; i < bins; i++) {
            K[i * bins + j] = ku[i];
        }
    }
    return DPM_OK;
}

double dpm_roc_unbinned_sampling_var(const double *pos, const double *neg, const double *width,
                                     uint32_t bins)
{
    double P = 0.0, N = 0.0;
    for (uint32_t b = 0; pos != NULL && neg != NULL && b < bins && b < DPM_ROC_MAX_BINS; b++) {
        P += pos[b];
        N += neg[b];
    }
    if (pos == NULL || neg == NULL || width == NULL || !(P > 1.0) || !(N > 1.0) || bins < 2 ||
        bins > DPM_ROC_MAX_BINS) {
        return NAN;
    }
    placements_t pl;
    placements_unbinned(pos, neg, width, bins, P, N, &pl);
    return pl.s10 / (P - 1.0) / P + pl.s01 / (N - 1.0) / N;
}

double dpm_roc_unbinned_within(const double *pos, const double *neg, uint32_t bins)
{
    double P = 0.0, N = 0.0, sum = 0.0;
    for (uint32_t b = 0; pos != NULL && neg != NULL && b < bins && b < DPM_ROC_MAX_BINS; b++) {
        double x = fmax(pos[b], 0.0), u = fmax(neg[b], 0.0);
        P += pos[b];
        N += neg[b];
        sum += x * u * (x + u + 1.0) / 12.0;
    }
    return P > 0.0 && N > 0.0 ? sum / (P * N) / (P * N) : NAN;
}

/* ---- the interpolation-error bound of auc_unbinned (roc.h) -------------------------------- */

#define MAX_BLOCKS (DPM_ROC_MAX_BINS / 2 + 1)

/* The coarse grid: adjacent bins paired alternately from the two ends inwards (an odd count
 * leaves the middle bin alone). Block J holds bins first[J] .. first[J + 1] - 1; returns the
 * number of blocks. */
static uint32_t coarse_blocks(uint32_t bins, uint32_t *first)
{
    uint32_t left = (bins / 2 + 1) / 2, n = 0; /* pairs from the left cover [0, 2 left) */
    for (uint32_t b = 0; b < 2 * left; b += 2) {
        first[n++] = b;
    }
    if (bins % 2 != 0) {
        first[n++] = 2 * left;
    }
    for (uint32_t b = 2 * left + bins % 2; b < bins; b += 2) {
        first[n++] = b;
    }
    first[n] = bins;
    return n;
}

/* Midpoints of bins of widths w laid side by side from 0. */
static void midpoints(const double *w, uint32_t n, double *mid)
{
    double left = 0.0;
    for (uint32_t b = 0; b < n; b++) {
        mid[b] = left + w[b] / 2.0;
        left += w[b];
    }
}

/* coef += f * (the linear rule's first moment of bin b of a grid of n bins about its midpoint,
 * w_b³ p'_b / 12, as a linear form in the fine counts: p'_b = (c_hi / w_hi - c_lo / w_lo) /
 * (mid_hi - mid_lo), c_k the sum of the fine bins of[k] .. of[k + 1] - 1). */
static void add_moment(double *coef, double f, uint32_t b, uint32_t n, const double *w,
                       const double *mid, const uint32_t *of)
{
    uint32_t lo, hi;
    slope_stencil(b, n, &lo, &hi);
    double k = f * w[b] * w[b] * w[b] / 12.0 / (mid[hi] - mid[lo]);
    for (uint32_t i = of[hi]; i < of[hi + 1]; i++) {
        coef[i] += k / w[hi];
    }
    for (uint32_t i = of[lo]; i < of[lo + 1]; i++) {
        coef[i] -= k / w[lo];
    }
}

/* The bound of roc.h. Per block J of the coarse grid and per class, D_J = the linear rule's
 * first moment of the merged bin (coarse slopes) minus the same moment resolved by the fine
 * bins (their counts at their midpoints plus the fine rule's moments), a linear form in that
 * class's counts; it moves the AUC numerator by (other class's count in J) D_J / W_J. bound =
 * sum over the two classes and the two halves of the score range of |the sum of those moves| /
 * (P N), P and N the sums of x and u. grad (optional, 2 bins): its gradient in x then u (signs
 * held). */
static double interp_bound(const double *x, const double *u, const double *w, uint32_t bins,
                           double *grad)
{
    uint32_t first[MAX_BLOCKS + 1], ident[DPM_ROC_MAX_BINS + 1];
    uint32_t nb = coarse_blocks(bins, first);
    double mid[DPM_ROC_MAX_BINS], W[MAX_BLOCKS] = {0.0}, M[MAX_BLOCKS], Xp[MAX_BLOCKS];
    double Xn[MAX_BLOCKS];
    /* per half h and class k (0: positives' moments, 1: negatives'): the signed sum and its
     * gradient in the positive (gx) and negative (gu) counts */
    double sum[2][2] = {{0.0}}, gx[2][2][DPM_ROC_MAX_BINS], gu[2][2][DPM_ROC_MAX_BINS];
    double coef[DPM_ROC_MAX_BINS], P = 0.0, N = 0.0;
    memset(gx, 0, sizeof(gx));
    memset(gu, 0, sizeof(gu));
    for (uint32_t b = 0; b <= bins; b++) {
        ident[b] = b; /* the fine grid: bin b is bin b */
    }
    midpoints(w, bins, mid);
    for (uint32_t J = 0; J < nb; J++) {
        W[J] = Xp[J] = Xn[J] = 0.0;
        for (uint32_t b = first[J]; b < first[J + 1]; b++) {
            W[J] += w[b];
            Xp[J] += x[b];
            Xn[J] += u[b];
        }
        P += Xp[J];
        N += Xn[J];
    }
    midpoints(W, nb, M);
    for (uint32_t J = 0; nb >= 2 && J < nb; J++) {
        memset(coef, 0, sizeof(coef));
        add_moment(coef, 1.0, J, nb, W, M, first); /* the coarse rule's moment */
        for (uint32_t b = first[J]; b < first[J + 1]; b++) {
            coef[b] -= mid[b] - M[J]; /* the fine bins' counts at their midpoints ... */
            add_moment(coef, -1.0, b, bins, w, mid, ident); /* ... and the fine rule's moments */
        }
        double dpos = 0.0, dneg = 0.0;
        for (uint32_t i = 0; i < bins; i++) {
            dpos += coef[i] * x[i];
            dneg += coef[i] * u[i];
        }
        uint32_t h = 2u * first[J] + (first[J + 1] - first[J]) < bins ? 0u : 1u;
        sum[h][0] += Xn[J] * dpos / W[J];
        sum[h][1] += Xp[J] * dneg / W[J];
        for (uint32_t i = 0; i < bins; i++) {
            gx[h][0][i] += Xn[J] * coef[i] / W[J];
            gu[h][1][i] += Xp[J] * coef[i] / W[J];
        }
        for (uint32_t b = first[J]; b < first[J + 1]; b++) {
            gu[h][0][b] += dpos / W[J];
            gx[h][1][b] += dneg / W[J];
        }
    }
    double pn = P * N, raw = 0.0;
    for (uint32_t h = 0; h < 2; h++) {
        raw += fabs(sum[h][0]) + fabs(sum[h][1]);
    }
    double bound = nb >= 2 ? raw / pn : NAN;
    for (uint32_t i = 0; grad != NULL && i < bins; i++) {
        double a = -bound / P, c = -bound / N; /* through P N */
        for (uint32_t h = 0; h < 2; h++) {
            for (uint32_t k = 0; k < 2; k++) {
                double sg = sum[h][k] < 0.0 ? -1.0 : 1.0;
                a += sg * gx[h][k][i] / pn;
                c += sg * gu[h][k][i] / pn;
            }
        }
        grad[i] = a;
        grad[bins + i] = c;
    }
    return bound;
}

double dpm_roc_unbinned_bound(const double *pos, const double *neg, const double *width,
                              uint32_t bins, double *grad)
{
    if (pos == NULL || neg == NULL || width == NULL || bins < 3 || bins > DPM_ROC_MAX_BINS) {
        return NAN;
    }
    return interp_bound(pos, neg, width, bins, grad);
}

double dpm_roc_auc_unbinned(const double *pos, const double *neg, const double *width,
                            uint32_t bins)
{
    double P = 0.0, N = 0.0;
    if (pos == NULL || neg == NULL || width == NULL || bins < 2 || bins > DPM_ROC_MAX_BINS) {
        return NAN;
    }
    for (uint32_t b = 0; b < bins; b++) {
        P += pos[b];
        N += neg[b];
    }
    if (!(P > 0.0) || !(N > 0.0)) {
        return NAN;
    }
    placements_t pl;
    placements_unbinned(pos, neg, width, bins, P, N, &pl);
    return pl.auc;
}

double dpm_roc_noise_factor(const double *pos, const double *neg, uint32_t bins)
{
    double P = 0.0, N = 0.0;
    for (uint32_t b = 0; b < bins; b++) {
        P += pos[b];
        N += neg[b];
    }
    if (!(P > 0.0) || !(N > 0.0) || bins < 2 || bins > DPM_ROC_MAX_BINS) {
        return NAN;
    }
    placements_t pl;
    placements(pos, neg, bins, P, N, &pl);
    return pl.noise_sum_pos / (P * P) + pl.noise_sum_neg / (N * N);
}

dpm_status_t dpm_roc_plan_factors(const double *pos, const double *neg, uint32_t bins, double *auc,
                                  double *noise_factor, double *sampling_factor)
{
    double P = 0.0, N = 0.0;
    for (uint32_t b = 0; pos != NULL && neg != NULL && b < bins && b < DPM_ROC_MAX_BINS; b++) {
        P += pos[b];
        N += neg[b];
    }
    if (pos == NULL || neg == NULL || !(P > 0.0) || !(N > 0.0) || bins < 2 ||
        bins > DPM_ROC_MAX_BINS || auc == NULL || noise_factor == NULL || sampling_factor == NULL) {
        return DPM_ERR_PARAM;
    }
    placements_t pl;
    placements(pos, neg, bins, P, N, &pl);
    *auc = pl.auc;
    *noise_factor = pl.noise_sum_pos / (P * P) + pl.noise_sum_neg / (N * N);
    *sampling_factor = pl.s10 / (P * P) + pl.s01 / (N * N);
    return DPM_OK;
}

dpm_status_t dpm_roc_plan_flip_factors(const double *pos, const double *neg, uint32_t bins,
                                       double q, double *central_factor, double *flip_factor)
{
    double P = 0.0, N = 0.0;
    for (uint32_t b = 0; pos != NULL && neg != NULL && b < bins && b < DPM_ROC_MAX_BINS; b++) {
        P += pos[b];
        N += neg[b];
    }
    if (pos == NULL || neg == NULL || !(P > 0.0) || !(N > 0.0) || bins < 2 ||
        bins > DPM_ROC_MAX_BINS || !(q >= 0.0 && q < 0.5) || central_factor == NULL ||
        flip_factor == NULL) {
        return DPM_ERR_PARAM;
    }
    placements_t pl;
    placements(pos, neg, bins, P, N, &pl);
    /* the debiased cells' covariance per bin (roc.h): the noise's through the inverse, the
     * flips' q (1 - q) / d^2 per example of the bin on (1, -1) */
    const double d = 1.0 - 2.0 * q, c1 = ((1.0 - q) * (1.0 - q) + q * q) / (d * d);
    const double c2 = -2.0 * q * (1.0 - q) / (d * d), k = q * (1.0 - q) / (d * d);
    double fc = 0.0, fr = 0.0;
    for (uint32_t b = 0; b < bins; b++) {
        const double gx = pl.gx[b], gu = pl.gu[b];
        fc += c1 * (gx * gx + gu * gu) + 2.0 * c2 * gx * gu;
        fr += k * (pos[b] + neg[b]) * (gx - gu) * (gx - gu);
    }
    *central_factor = fc;
    *flip_factor = fr;
    return DPM_OK;
}

dpm_status_t dpm_roc_exact(const uint64_t *pos, const uint64_t *neg, uint32_t bins, double *tpr,
                           double *fpr, double *auc)
{
    if (pos == NULL || neg == NULL || tpr == NULL || fpr == NULL || auc == NULL || bins < 2 ||
        bins > DPM_ROC_MAX_BINS) {
        return DPM_ERR_PARAM;
    }
    uint64_t P = 0, N = 0;
    for (uint32_t b = 0; b < bins; b++) {
        P += pos[b];
        N += neg[b];
    }
    if (P == 0 || N == 0) {
        return DPM_ERR_PARAM;
    }
    /* integer cumulative sums: exact; the AUC numerator in long double halves */
    uint64_t c = 0, d = 0;
    tpr[bins] = fpr[bins] = 0.0;
    long double num = 0.0L; /* 2 * sum_b u_b (C_{b+1} + x_b / 2) = sum u_b (2 C_{b+1} + x_b) */
    for (uint32_t j = bins; j-- > 0;) {
        num += (long double)neg[j] * (2.0L * (long double)c + (long double)pos[j]);
        c += pos[j];
        d += neg[j];
        tpr[j] = (double)c / (double)P;
        fpr[j] = (double)d / (double)N;
    }
    *auc = (double)(num / (2.0L * (long double)P * (long double)N));
    return DPM_OK;
}

/* ---- the noise of the debiased counts (roc.h) --------------------------------------------- */

/* Per bin b, the covariance of (x_b, u_b), the debiased sums, given the devices' examples:
 *     Sigma_b = cell [[same, -cross], [-cross, same]] + flip n_b [[1, -1], [-1, 1]],
 * cell = ns2 / (1 - 2q)², same = (1 - q)² + q², cross = 2 q (1 - q) (the central noise through
 * the inverse of the flip matrix), flip = q (1 - q) / (1 - 2q)² (the binomial flips: they move
 * x_b and u_b by opposite amounts), bins independent. Every variance in dpm_roc_estimate is a
 * quadratic form in Sigma_b, taken here and nowhere else. With q = 0, cell = ns2, same = 1 and
 * cross = flip = 0 exactly, so each form below reduces bit for bit to the q-free expression
 * (ns2 times the sum of squared gradients) the estimator computed before label flips. */
typedef struct {
    uint32_t bins;
    double cell, same, cross, flip;
    double n[DPM_ROC_MAX_BINS]; /* n_b: y_b + v_b (unbiased, the flips keep it), clipped at 0 */
    double ntot;
    /* What one randomization event moves (x_b, u_b) by: a unit of central noise in y_b moves
     * them by (own, -other), one in v_b by (-other, own), a label flip by (flipmove,
     * -flipmove); 0 where that kind of event does not happen. */
    double own, other, flipmove;
} bin_cov_t;

static void bin_cov_init(bin_cov_t *c, const dpm_roc_agg_t *a, double ns2, int central, double q)
{
    double d = 1.0 - 2.0 * q;
    memset(c, 0, sizeof(*c));
    c->bins = a->bins;
    c->cell = ns2 / (d * d);
    c->same = (1.0 - q) * (1.0 - q) + q * q;
    c->cross = 2.0 * q * (1.0 - q);
    c->flip = q * (1.0 - q) / (d * d);
    for (uint32_t b = 0; b < a->bins; b++) {
        c->n[b] = fmax((double)a->pos[b] + (double)a->neg[b], 0.0);
        c->ntot += c->n[b];
    }
    c->own = central ? (1.0 - q) / d : 0.0;
    c->other = central ? q / d : 0.0;
    c->flipmove = q > 0.0 ? 1.0 / d : 0.0;
}

/* The variance of a statistic with gradient (gx_b, gu_b) in (x_b, u_b): sum_b g^T Sigma_b g.
 * sq = sum_b gx_b² + gu_b², passed in as the caller has always summed it (q = 0: ns2 sq). */
static double cov_form(const bin_cov_t *c, double sq, const double *gx, const double *gu)
{
    if (!(c->flip > 0.0)) { /* no flips: cross = 0, same = 1 (q = 0) */
        return c->cell * sq;
    }
    double xu = 0.0, rr = 0.0;
    for (uint32_t b = 0; b < c->bins; b++) {
        double d = gx[b] - gu[b];
        xu += gx[b] * gu[b];
        rr += c->n[b] * d * d;
    }
    return c->cell * (c->same * sq - 2.0 * c->cross * xu) + c->flip * rr;
}

/* The most one randomization event moves that statistic (dpm_ci_halfwidth's jump). */
static double cov_jump(const bin_cov_t *c, const double *gx, const double *gu)
{
    double jump = 0.0;
    for (uint32_t b = 0; b < c->bins; b++) {
        double unit =
            fmax(fabs(c->own * gx[b] - c->other * gu[b]), fabs(c->own * gu[b] - c->other * gx[b]));
        jump = fmax(jump, fmax(unit, c->flipmove * fabs(gx[b] - gu[b])));
    }
    return jump;
}

/* One class's rate r = C / T at a threshold: C sums the k bins above it (their n_b summing to
 * nk), T all B (ntot). Var = (Var C (1 - 2r) + r² Var T) / T² (Cov(C, T) = Var C: the bins are
 * independent), each class sum's variance cell same (bins) + flip (their n). */
static double cov_rate_var(const bin_cov_t *c, double r, double k, double nk, double T)
{
    double B = (double)c->bins, v = c->cell * (c->same * (k * (1.0 - 2.0 * r) + B * r * r));
    if (c->flip > 0.0) {
        v += c->flip * (nk * (1.0 - 2.0 * r) + c->ntot * r * r);
    }
    return v / (T * T);
}

/* One class total's variance (P or N: the same for both). */
static double cov_total_var(const bin_cov_t *c)
{
    double v = c->cell * (c->same * (double)c->bins);
    return c->flip > 0.0 ? v + c->flip * c->ntot : v;
}

/* The most one event moves one class's debiased count. */
static double cov_count_move(const bin_cov_t *c)
{
    return fmax(c->own, c->flipmove);
}

/* The most one event moves a rate r = C / total: (1 - r) / total for a cell counted in C,
 * r / total for one only in the total, times the count's move (1 without label flips). */
static double rate_jump(double r, double total, double move)
{
    return move > 0.0 ? fmax(1.0 - r, r) / total * move : 0.0;
}

void dpm_roc_rate_at(const dpm_roc_estimate_t *est, int fpr, uint32_t j, double z,
                     dpm_roc_rate_t *out)
{
    const double total = fpr ? est->N : est->P, sd = fpr ? est->fpr_sd[j] : est->tpr_sd[j];
    const double rel = (fpr ? est->var_N : est->var_P) / (total * total);
    out->value = fpr ? est->fpr[j] : est->tpr[j];
    out->var = sd * sd;
    out->jump = rate_jump(out->value, total, est->count_move);
    out->flags = dpm_ci_class_noise(&rel, 1, z, NULL);
}

dpm_status_t dpm_roc_estimate(const dpm_roc_params_t *p, const dpm_roc_agg_t *a, double confidence,
                              dpm_roc_estimate_t *est)
{
    if (p == NULL || a == NULL || est == NULL || a->bins != p->bins || !(confidence > 0.0) ||
        !(confidence < 1.0) || !(p->label_flip >= 0.0 && p->label_flip < 0.5)) {
        return DPM_ERR_PARAM;
    }
    uint32_t B = a->bins;
    const double q = p->label_flip, dq = 1.0 - 2.0 * q;
    double y[DPM_ROC_MAX_BINS], v[DPM_ROC_MAX_BINS];
    memset(est, 0, sizeof(*est));
    est->bins = B;
    est->reports = a->reports;
    est->label_flip = q;
    for (uint32_t b = 0; b < B; b++) {
        /* the flips undone (roc.h): q = 0 leaves each sum as it is, exactly */
        double yb = (double)a->pos[b], vb = (double)a->neg[b];
        y[b] = ((1.0 - q) * yb - q * vb) / dq;
        v[b] = ((1.0 - q) * vb - q * yb) / dq;
        est->P += y[b];
        est->N += v[b];
    }
    est->projected = dpm_roc_project(y, B, est->pos) | dpm_roc_project(v, B, est->neg);
    est->auc = est->auc_raw = est->var_noise = est->var_sampling = NAN;
    est->ci_lo = est->ci_hi = est->ci_total_lo = est->ci_total_hi = NAN;
    est->auc_unbinned = est->auc_unbinned_raw = est->unbinned_var_noise = est->unbinned_sd = NAN;
    est->unbinned_ci_lo = est->unbinned_ci_hi = NAN;
    est->unbinned_ci_total_lo = est->unbinned_ci_total_hi = NAN;
    est->unbinned_var_within = est->unbinned_var_sampling = NAN;
    est->unbinned_bound = est->unbinned_bound_raw = est->unbinned_bound_sd = NAN;
    est->events = est->unbinned_events = est->tpr_events_min = est->fieller_g = NAN;
    est->cell_noise_var = est->var_P = est->var_N = est->count_move = NAN;
    if (!(est->P > 0.0) || !(est->N > 0.0)) {
        est->ci_flags = est->ci_total_flags = est->unbinned_flags = est->unbinned_total_flags =
            est->tpr_flags = DPM_CI_SMALL_N;
        est->valid = 0;
        return DPM_OK;
    }
    double m = B > 2 ? (double)(B - 1) : 1.0;
    double z = prob_norm_quantile(0.5 + confidence / 2.0);
    double z_sim = prob_norm_quantile(1.0 - (1.0 - confidence) / (2.0 * m));
    est->z = z;
    est->z_sim = z_sim;
    double P = est->P, N = est->N;
    double draws = p->central_draws > 0 ? (double)p->central_draws : (double)a->reports;
    double ns2 = draws * p->noise_var; /* the noise variance of one summed cell */
    est->cell_noise_var = ns2;
    bin_cov_t cov;
    bin_cov_init(&cov, a, ns2, p->noise_var > 0.0, q);
    est->var_P = est->var_N = cov_total_var(&cov);
    /* a rate's unit event counts where the summed cells carry noise (ns2 > 0), the AUC's
     * wherever the mechanism has it (noise_var > 0): as before label flips */
    est->count_move = ns2 > 0.0 || q > 0.0 ? cov_count_move(&cov) : 0.0;
    /* P and N are sums of B cells (Fieller's g: ci_flags.h) */
    double rel_var[2] = {est->var_P / (P * P), est->var_N / (N * N)};
    unsigned class_noise = dpm_ci_class_noise(rel_var, 2, z, &est->fieller_g);
    placements_t pl;
    placements(y, v, B, P, N, &pl); /* the unbiased sums, not the projection (see roc.h) */
    est->auc_raw = pl.auc;
    est->auc = fmin(fmax(pl.auc, 0.0), 1.0);
    est->var_noise =
        cov_form(&cov, pl.noise_sum_pos / (P * P) + pl.noise_sum_neg / (N * N), pl.gx, pl.gu);
    est->var_sampling =
        (P > 1.0 ? pl.s10 / (P - 1.0) / P : 0.0) + (N > 1.0 ? pl.s01 / (N - 1.0) / N : 0.0);
    double jump = cov_jump(&cov, pl.gx, pl.gu);
    est->ci_flags = est->ci_total_flags = class_noise;
    double h =
        dpm_ci_halfwidth(est->var_noise, jump, 0.0, confidence, &est->events, &est->ci_flags);
    est->ci_lo = fmax(pl.auc - h, 0.0);
    est->ci_hi = fmin(pl.auc + h, 1.0);
    h = dpm_ci_halfwidth(est->var_noise + est->var_sampling, jump, 0.0, confidence, NULL,
                         &est->ci_total_flags);
    est->ci_total_lo = fmax(pl.auc - h, 0.0);
    est->ci_total_hi = fmin(pl.auc + h, 1.0);
    placements_unbinned(y, v, p->width, B, P, N, &pl);
    est->auc_unbinned_raw = pl.auc;
    est->auc_unbinned = fmin(fmax(pl.auc, 0.0), 1.0);
    est->unbinned_var_noise =
        cov_form(&cov, pl.noise_sum_pos / (P * P) + pl.noise_sum_neg / (N * N), pl.gx, pl.gu);
    est->unbinned_sd = sqrt(est->unbinned_var_noise);
    est->unbinned_var_sampling = dpm_roc_unbinned_sampling_var(y, v, p->width, B);
    est->unbinned_var_within = dpm_roc_unbinned_within(y, v, B);
    est->unbinned_flags = est->unbinned_total_flags = class_noise;
    double grad[2 * DPM_ROC_MAX_BINS] = {0.0}, gvar = 0.0;
    est->unbinned_bound_raw = dpm_roc_unbinned_bound(y, v, p->width, B, grad);
    for (uint32_t c = 0; c < 2 * B; c++) {
        gvar += grad[c] * grad[c];
    }
    est->unbinned_bound_sd = sqrt(cov_form(&cov, gvar, grad, grad + B));
    est->unbinned_bound = est->unbinned_bound_raw + est->unbinned_bound_sd;
    if (!isfinite(est->unbinned_bound)) { /* 2 bins: nothing to compare with */
        est->unbinned_flags |= DPM_CI_NO_BOUND;
        est->unbinned_total_flags |= DPM_CI_NO_BOUND;
    }
    double bound = isfinite(est->unbinned_bound) ? est->unbinned_bound : 0.0;
    jump = cov_jump(&cov, pl.gx, pl.gu);
    h = dpm_ci_halfwidth(est->unbinned_var_noise + est->unbinned_var_within, jump, bound,
                         confidence, &est->unbinned_events, &est->unbinned_flags);
    est->unbinned_ci_lo = fmax(pl.auc - h, 0.0);
    est->unbinned_ci_hi = fmin(pl.auc + h, 1.0);
    double samp = isfinite(est->unbinned_var_sampling) ? est->unbinned_var_sampling : 0.0;
    h = dpm_ci_halfwidth(est->unbinned_var_noise + samp, jump, bound, confidence, NULL,
                         &est->unbinned_total_flags);
    est->unbinned_ci_total_lo = fmax(pl.auc - h, 0.0);
    est->unbinned_ci_total_hi = fmin(pl.auc + h, 1.0);
    /* the band: one event moves TPR_j by (1 - TPR_j) / P (a cell >= j) or TPR_j / P (below),
     * times the count's move, and P's relative variance alone is its ratio's Fieller g */
    double rel_p = rel_var[0];
    est->tpr_flags = dpm_ci_class_noise(&rel_p, 1, z, NULL);
    est->tpr_events_min = INFINITY;
    double c = 0.0, d = 0.0, cx = 0.0, dx = 0.0, nk = 0.0;
    for (uint32_t j = B + 1; j-- > 0;) {
        if (j < B) {
            c += y[j];
            d += v[j];
            cx += est->pos[j];
            dx += est->neg[j];
            nk += cov.n[j];
        }
        /* Unbiased ratios of the noised sums (clipped to [0, 1]) carry the band; the projected
         * counts give the monotone curve to draw. */
        double t = j == 0 ? 1.0 : fmin(fmax(c / P, 0.0), 1.0);
        double f = j == 0 ? 1.0 : fmin(fmax(d / N, 0.0), 1.0);
        double k = (double)(B - j);
        double vt = cov_rate_var(&cov, t, k, nk, P);
        double vf = cov_rate_var(&cov, f, k, nk, N);
        est->tpr[j] = t;
        est->fpr[j] = f;
        est->tpr_curve[j] = j == 0 ? 1.0 : fmin(cx / P, 1.0);
        est->fpr_curve[j] = j == 0 ? 1.0 : fmin(dx / N, 1.0);
        est->tpr_sd[j] = sqrt(fmax(vt, 0.0));
        est->fpr_sd[j] = sqrt(fmax(vf, 0.0));
        double tj = rate_jump(t, P, est->count_move), ev = INFINITY;
        unsigned fl = 0;
        double hp = dpm_ci_halfwidth(vt > 0.0 ? vt : 0.0, tj, 0.0, confidence, &ev, &fl);
        double hs =
            dpm_ci_halfwidth(vt > 0.0 ? vt : 0.0, tj, 0.0, 1.0 - (1.0 - confidence) / m, NULL, &fl);
        if (j > 0 && j < B) { /* the interior thresholds: the ends are 1 and 0 exactly */
            est->tpr_flags |= fl;
            est->tpr_events_min = fmin(est->tpr_events_min, ev);
        }
        est->tpr_lo[j] = fmax(t - hp, 0.0);
        est->tpr_hi[j] = fmin(t + hp, 1.0);
        est->tpr_lo_sim[j] = fmax(t - hs, 0.0);
        est->tpr_hi_sim[j] = fmin(t + hs, 1.0);
    }
    est->valid = 1;
    return DPM_OK;
}
