/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist estimator (see roc.h). */
#include "estimate/roc.h"

#include <math.h>
#include <string.h>

#include "common/prob.h"

double dpm_roc_dlap_var(double scale)
{
    if (!(scale > 0.0)) {
        return 0.0;
    }
    double p = exp(-1.0 / scale), q = -expm1(-1.0 / scale); /* q = 1 - p without cancellation */
    return 2.0 * p / (q * q);
}

dpm_status_t dpm_roc_params_init(dpm_roc_params_t *p, uint32_t bins, double scale)
{
    if (p == NULL || bins < 2 || bins > DPM_ROC_MAX_BINS || !(scale >= 0.0) || !isfinite(scale)) {
        return DPM_ERR_PARAM;
    }
    p->bins = bins;
    p->scale = scale;
    p->noise_var = dpm_roc_dlap_var(scale);
    for (uint32_t b = 0; b < bins; b++) {
        p->width[b] = 1.0 / (double)bins;
    }
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

dpm_status_t dpm_roc_agg_init(dpm_roc_agg_t *a, uint32_t bins)
{
    if (a == NULL || bins < 2 || bins > DPM_ROC_MAX_BINS) {
        return DPM_ERR_PARAM;
    }
    memset(a, 0, sizeof(*a));
    a->bins = bins;
    return DPM_OK;
}

dpm_status_t dpm_roc_agg_add(dpm_roc_agg_t *a, uint32_t bins, const int32_t *pos,
                             const int32_t *neg)
{
    if (a == NULL || pos == NULL || neg == NULL || bins != a->bins) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t b = 0; b < bins; b++) {
        a->pos[b] += pos[b];
        a->neg[b] += neg[b];
    }
    a->reports++;
    return DPM_OK;
}

dpm_status_t dpm_roc_agg_merge(dpm_roc_agg_t *dst, const dpm_roc_agg_t *src)
{
    if (dst == NULL || src == NULL || dst->bins != src->bins) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t b = 0; b < dst->bins; b++) {
        dst->pos[b] += src->pos[b];
        dst->neg[b] += src->neg[b];
    }
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
} placements_t;

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
        double d10 = v10[b] - auc, d01 = v01[b] - auc;
        pl->noise_sum_pos += d10 * d10;
        pl->noise_sum_neg += d01 * d01;
        pl->s10 += fmax(x[b], 0.0) * d10 * d10;
        pl->s01 += fmax(u[b], 0.0) * d01 * d01;
    }
}

/* The unbinned AUC's placement values (roc.h): the binned ones' K u and x^T K plus the
 * tridiagonal slope terms, one bin at a time: bin b adds (w_b² / 12)(u_b p'_b - x_b q'_b), p'_b
 * = ch x_hi + cl x_lo (central difference; one-sided at the first and last bin). */
static void placements_unbinned(const double *x, const double *u, const double *w, uint32_t bins,
                                double P, double N, placements_t *pl)
{
    double ku[DPM_ROC_MAX_BINS], xk[DPM_ROC_MAX_BINS], mid[DPM_ROC_MAX_BINS];
    double below = 0.0, above = P, left = 0.0;
    for (uint32_t b = 0; b < bins; b++) {
        above -= x[b];
        ku[b] = below + u[b] / 2.0;
        xk[b] = above + x[b] / 2.0;
        below += u[b];
        mid[b] = left + w[b] / 2.0;
        left += w[b];
    }
    for (uint32_t b = 0; b < bins; b++) {
        uint32_t lo = b == 0 ? 0 : b == bins - 1 ? bins - 2 : b - 1;
        uint32_t hi = b == 0 ? 1 : b == bins - 1 ? bins - 1 : b + 1;
        double dm = mid[hi] - mid[lo], k = w[b] * w[b] / 12.0;
        double ch = 1.0 / (w[hi] * dm), cl = -1.0 / (w[lo] * dm);
        ku[hi] += k * u[b] * ch; /* d/dx of k u_b p'_b */
        ku[lo] += k * u[b] * cl;
        ku[b] -= k * (ch * u[hi] + cl * u[lo]); /* d/dx_b of -k x_b q'_b */
        xk[b] += k * (ch * x[hi] + cl * x[lo]);
        xk[hi] -= k * x[b] * ch;
        xk[lo] -= k * x[b] * cl;
    }
    double num = 0.0;
    for (uint32_t b = 0; b < bins; b++) {
        num += x[b] * ku[b];
    }
    memset(pl, 0, sizeof(*pl));
    pl->auc = num / (P * N);
    for (uint32_t b = 0; b < bins; b++) {
        double d10 = ku[b] / N - pl->auc, d01 = xk[b] / P - pl->auc;
        pl->noise_sum_pos += d10 * d10;
        pl->noise_sum_neg += d01 * d01;
        pl->s10 += fmax(x[b], 0.0) * d10 * d10;
        pl->s01 += fmax(u[b], 0.0) * d01 * d01;
    }
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

dpm_status_t dpm_roc_estimate(const dpm_roc_params_t *p, const dpm_roc_agg_t *a, double confidence,
                              dpm_roc_estimate_t *est)
{
    if (p == NULL || a == NULL || est == NULL || a->bins != p->bins || !(confidence > 0.0) ||
        !(confidence < 1.0)) {
        return DPM_ERR_PARAM;
    }
    uint32_t B = a->bins;
    double y[DPM_ROC_MAX_BINS], v[DPM_ROC_MAX_BINS];
    memset(est, 0, sizeof(*est));
    est->bins = B;
    est->reports = a->reports;
    for (uint32_t b = 0; b < B; b++) {
        y[b] = (double)a->pos[b];
        v[b] = (double)a->neg[b];
        est->P += y[b];
        est->N += v[b];
    }
    est->projected = dpm_roc_project(y, B, est->pos) | dpm_roc_project(v, B, est->neg);
    est->auc = est->auc_raw = est->var_noise = est->var_sampling = NAN;
    est->ci_lo = est->ci_hi = est->ci_total_lo = est->ci_total_hi = NAN;
    est->auc_unbinned = est->auc_unbinned_raw = est->unbinned_var_noise = est->unbinned_sd = NAN;
    est->unbinned_ci_lo = est->unbinned_ci_hi = NAN;
    if (!(est->P > 0.0) || !(est->N > 0.0)) {
        est->valid = 0;
        return DPM_OK;
    }
    double m = B > 2 ? (double)(B - 1) : 1.0;
    double z = prob_norm_quantile(0.5 + confidence / 2.0);
    double z_sim = prob_norm_quantile(1.0 - (1.0 - confidence) / (2.0 * m));
    est->z = z;
    est->z_sim = z_sim;
    double P = est->P, N = est->N, ns2 = (double)a->reports * p->noise_var;
    placements_t pl;
    placements(y, v, B, P, N, &pl); /* the unbiased sums, not the projection (see roc.h) */
    est->auc_raw = pl.auc;
    est->auc = fmin(fmax(pl.auc, 0.0), 1.0);
    est->var_noise = ns2 * (pl.noise_sum_pos / (P * P) + pl.noise_sum_neg / (N * N));
    est->var_sampling =
        (P > 1.0 ? pl.s10 / (P - 1.0) / P : 0.0) + (N > 1.0 ? pl.s01 / (N - 1.0) / N : 0.0);
    double sd = sqrt(est->var_noise), sd_total = sqrt(est->var_noise + est->var_sampling);
    est->ci_lo = fmax(pl.auc - z * sd, 0.0);
    est->ci_hi = fmin(pl.auc + z * sd, 1.0);
    est->ci_total_lo = fmax(pl.auc - z * sd_total, 0.0);
    est->ci_total_hi = fmin(pl.auc + z * sd_total, 1.0);
    placements_unbinned(y, v, p->width, B, P, N, &pl);
    est->auc_unbinned_raw = pl.auc;
    est->auc_unbinned = fmin(fmax(pl.auc, 0.0), 1.0);
    est->unbinned_var_noise = ns2 * (pl.noise_sum_pos / (P * P) + pl.noise_sum_neg / (N * N));
    est->unbinned_sd = sqrt(est->unbinned_var_noise);
    est->unbinned_ci_lo = fmax(pl.auc - z * est->unbinned_sd, 0.0);
    est->unbinned_ci_hi = fmin(pl.auc + z * est->unbinned_sd, 1.0);
    double c = 0.0, d = 0.0, cx = 0.0, dx = 0.0;
    for (uint32_t j = B + 1; j-- > 0;) {
        if (j < B) {
            c += y[j];
            d += v[j];
            cx += est->pos[j];
            dx += est->neg[j];
        }
        /* Unbiased ratios of the noised sums (clipped to [0, 1]) carry the band; the projected
         * counts give the monotone curve to draw. */
        double t = j == 0 ? 1.0 : fmin(fmax(c / P, 0.0), 1.0);
        double f = j == 0 ? 1.0 : fmin(fmax(d / N, 0.0), 1.0);
        double k = (double)(B - j);
        double vt = ns2 * (k * (1.0 - 2.0 * t) + (double)B * t * t) / (P * P);
        double vf = ns2 * (k * (1.0 - 2.0 * f) + (double)B * f * f) / (N * N);
        est->tpr[j] = t;
        est->fpr[j] = f;
        est->tpr_curve[j] = j == 0 ? 1.0 : fmin(cx / P, 1.0);
        est->fpr_curve[j] = j == 0 ? 1.0 : fmin(dx / N, 1.0);
        est->tpr_sd[j] = sqrt(fmax(vt, 0.0));
        est->fpr_sd[j] = sqrt(fmax(vf, 0.0));
        est->tpr_lo[j] = fmax(t - z * est->tpr_sd[j], 0.0);
        est->tpr_hi[j] = fmin(t + z * est->tpr_sd[j], 1.0);
        est->tpr_lo_sim[j] = fmax(t - z_sim * est->tpr_sd[j], 0.0);
        est->tpr_hi_sim[j] = fmin(t + z_sim * est->tpr_sd[j], 1.0);
    }
    est->valid = 1;
    return DPM_OK;
}
