/* SPDX-License-Identifier: Apache-2.0 */
/* Precision-recall, average precision and calibration from roc_hist sums (pr_calibration.h). */
#include "estimate/pr_calibration.h"

#include <math.h>
#include <string.h>

#include "common/prob.h"
#include "estimate/ci_flags.h"

/* E|a + e| - |a| for e ~ N(0, sd²): the bias of an absolute value, largest (sd sqrt(2 / pi)) at
 * a = 0 and falling with |a|. */
double dpm_prc_abs_bias(double a, double sd)
{
    if (!(sd > 0.0)) {
        return 0.0;
    }
    double k = fabs(a) / sd;
    double pdf = exp(-0.5 * k * k) / sqrt(2.0 * M_PI);
    return fmax(sd * (2.0 * pdf + k * (2.0 * prob_norm_cdf(k) - 1.0)) - fabs(a), 0.0);
}

/* the multinomial delta method (pr_calibration.h) */
double dpm_prc_sampling_var(const double *grad, const double *x, const double *u, uint32_t B)
{
    const double *gx = grad, *gu = grad + B;
    double sq = 0.0, lin = 0.0, m = 0.0;
    for (uint32_t b = 0; b < B; b++) {
        double nx = fmax(x[b], 0.0), nu = fmax(u[b], 0.0);
        sq += gx[b] * gx[b] * nx + gu[b] * gu[b] * nu;
        lin += gx[b] * nx + gu[b] * nu;
        m += nx + nu;
    }
    return m > 0.0 ? fmax(sq - lin * lin / m, 0.0) : 0.0;
}

/* sum of g² (returned), of g⁴ (*fourth: critical()'s kurtosis) and the largest |g| over the 2B
 * cells (grad: pos then neg) */
static double grad_norm(const double *grad, uint32_t B, double *jump, double *fourth)
{
    double s = 0.0;
    *jump = *fourth = 0.0;
    for (uint32_t c = 0; c < 2u * B; c++) {
        double g2 = grad[c] * grad[c];
        s += g2;
        *fourth += g2 * g2;
        *jump = fmax(*jump, fabs(grad[c]));
    }
    return s;
}

/* Fieller's interval for the ratio a / b of two sums whose noise has variances va, vb and
 * covariance vab (exact for normal noise: {r : (a - r b)² <= z² Var(a - r b)}), clipped to
 * [0, 1]. When b's noise is too large for a bounded set (b² <= z² vb) the answer is [0, 1]
 * with DPM_CI_CLASS_NOISE. With few randomization events (jump: one unit of noise's largest
 * move of the ratio) the delta method's Poisson-aware interval is used instead (at least the
 * level: DPM_CI_FEW_EVENTS). */
static unsigned ratio_interval(double a, double b, double va, double vb, double vab, double z,
                               double confidence, double jump, double *lo, double *hi)
{
    double r = a / b;
    double dvar = (va - 2.0 * r * vab + r * r * vb) / (b * b); /* the delta method's */
    unsigned flags = 0;
    double events = INFINITY;
    double h = dpm_ci_halfwidth(fmax(dvar, 0.0), jump, 0.0, confidence, &events, &flags);
    if (flags & DPM_CI_FEW_EVENTS) {
        *lo = fmax(r - h, 0.0);
        *hi = fmin(r + h, 1.0);
        return flags;
    }
    double z2 = z * z, A = b * b - z2 * vb, Bq = a * b - z2 * vab, Cq = a * a - z2 * va;
    double disc = Bq * Bq - A * Cq;
    if (!(A > 0.0) || disc < 0.0) {
        *lo = 0.0;
        *hi = 1.0;
        return DPM_CI_CLASS_NOISE;
    }
    *lo = fmax((Bq - sqrt(disc)) / A, 0.0);
    *hi = fmin((Bq + sqrt(disc)) / A, 1.0);
    return 0;
}

/* [est - h, est + h] clipped to [0, 1] */
static void interval(double est, double h, double *lo, double *hi)
{
    *lo = fmax(est - h, 0.0);
    *hi = fmin(est + h, 1.0);
}

/* The critical value for a linear statistic of the noise whose gradient has sum of squares s2
 * and of fourth powers s4 over the cells. Local DP sums one draw per report per cell: a near
 * normal sum, z. Central DP sums `draws` (2: one per aggregator) discrete Laplace draws per cell,
 * whose excess kurtosis (3 each) does not average away when few cells carry the statistic (a
 * bin's rate: coverage 0.937-0.958, mean 0.944, at z in the coverage test): the sum's excess
 * kurtosis is kappa = 3 s4 / (draws s2²), and the Cornish-Fisher quantile of a symmetric law,
 * z + kappa (z³ - 3 z) / 24, restores the level. */
static double critical(const dpm_roc_params_t *p, double z, double s2, double s4)
{
    if (p->central_draws == 0 || !(s2 > 0.0)) {
        return z;
    }
    double kappa = 3.0 * s4 / ((double)p->central_draws * s2 * s2);
    return z + kappa * (z * z * z - 3.0 * z) / 24.0;
}

static void midpoints(const double *width, uint32_t B, double *mid)
{
    double left = 0.0, total = 0.0;
    for (uint32_t b = 0; b < B; b++) {
        total += width[b];
    }
    for (uint32_t b = 0; b < B; b++) { /* widths in any unit: scaled to [0, 1] */
        mid[b] = total > 0.0 ? (left + width[b] / 2.0) / total : NAN;
        left += width[b];
    }
}

/* Precision-recall and AP from the sums y (positives), v (negatives). */
static void precision_recall(const dpm_roc_params_t *p, double ns2, const double *y,
                             const double *v, double P, double confidence, dpm_prc_estimate_t *e)
{
    uint32_t B = p->bins;
    double C[DPM_ROC_MAX_BINS] = {0.0}, D[DPM_ROC_MAX_BINS] = {0.0}, c = 0.0, d = 0.0;
    for (uint32_t j = B; j-- > 0;) {
        c += y[j];
        d += v[j];
        C[j] = c;
        D[j] = d;
    }
    double ap, rel_weighted = 0.0, noise_free = p->noise_var > 0.0 ? 1.0 : 0.0;
    int undefined = 0;
    for (uint32_t j = 0; j < B; j++) {
        double T = C[j] + D[j], k = (double)(B - j);
        e->recall[j] = fmin(fmax(C[j] / P, 0.0), 1.0);
        e->precision_flags[j] = 0;
        if (T <= 0.0) { /* nothing predicted positive, as far as the noisy sums tell */
            e->precision[j] = e->precision_sd[j] = e->precision_lo[j] = e->precision_hi[j] = NAN;
            e->precision_flags[j] = DPM_CI_SMALL_N;
            undefined |= y[j] != 0.0;
            continue;
        }
        double prec = C[j] / T, var = ns2 * k * (C[j] * C[j] + D[j] * D[j]) / (T * T * T * T);
        rel_weighted += fmax(y[j] / P, 0.0) * 2.0 * k * ns2 / (T * T);
        e->precision[j] = fmin(fmax(prec, 0.0), 1.0);
        e->precision_sd[j] = sqrt(var);
        /* C_j and T_j: variances k v and 2 k v, covariance k v */
        double jump = noise_free * fmax(fabs(D[j]), fabs(C[j])) / (T * T);
        /* k cells of each class, gradients D / T² and -C / T² */
        double c2 = C[j] * C[j], d2 = D[j] * D[j];
        double zc = critical(p, e->z, k * (c2 + d2), k * (c2 * c2 + d2 * d2));
        e->precision_flags[j] =
            ratio_interval(C[j], T, k * ns2, 2.0 * k * ns2, k * ns2, zc, confidence, jump,
                           &e->precision_lo[j], &e->precision_hi[j]);
    }
    double grad[2 * DPM_ROC_MAX_BINS] = {0.0};
    ap = dpm_prc_ap_of(y, v, B, grad);
    double jump = 0.0, g4 = 0.0, g2 = grad_norm(grad, B, &jump, &g4);
    e->ap_raw = ap;
    e->ap = fmin(fmax(ap, 0.0), 1.0);
    e->ap_var_noise = ns2 * g2;
    e->ap_var_sampling = dpm_prc_sampling_var(grad, y, v, B);
    /* Fieller's g: P's relative variance and the T_j's, weighted by their share of the AP */
    double rel[2] = {ns2 * (double)B / (P * P), rel_weighted};
    e->ap_flags = dpm_ci_class_noise(rel, 2, e->z, &e->ap_fieller_g);
    if (undefined) {
        e->ap_flags |= DPM_CI_CLASS_NOISE;
    }
    e->ap_total_flags = e->ap_flags;
    double zc = critical(p, e->z, g2, g4) / e->z; /* central: the noise's tails */
    double h = dpm_ci_halfwidth(e->ap_var_noise * zc * zc, noise_free * jump, 0.0, confidence, NULL,
                                &e->ap_flags);
    interval(ap, h, &e->ap_ci_lo, &e->ap_ci_hi);
    h = dpm_ci_halfwidth(e->ap_var_noise * zc * zc + e->ap_var_sampling, noise_free * jump, 0.0,
                         confidence, NULL, &e->ap_total_flags);
    interval(ap, h, &e->ap_ci_total_lo, &e->ap_ci_total_hi);
}

/* The reliability diagram and the ECE. */
static void calibration(const dpm_roc_params_t *p, double ns2, const double *y, const double *v,
                        double M, double confidence, dpm_prc_estimate_t *e)
{
    uint32_t B = p->bins;
    midpoints(p->width, B, e->midpoint);
    double bound = 0.0, bound_total = 0.0;
    for (uint32_t b = 0; b < B; b++) {
        double m = e->midpoint[b], T = y[b] + v[b];
        double a = (1.0 - m) * y[b] - m * v[b];
        double sd_a = sqrt(ns2 * ((1.0 - m) * (1.0 - m) + m * m));
        bound += dpm_prc_abs_bias(fmax(fabs(a) - DPM_PRC_NEAR_ZERO_SD * sd_a, 0.0), sd_a);
        /* the model's a_b also moves with the sampling of the examples (Poisson: at least the
         * multinomial's), and |.| turns that into bias as it does the noise */
        double sd_t =
            sqrt(sd_a * sd_a + (1.0 - m) * (1.0 - m) * fmax(y[b], 0.0) + m * m * fmax(v[b], 0.0));
        bound_total += dpm_prc_abs_bias(fmax(fabs(a) - DPM_PRC_NEAR_ZERO_SD * sd_t, 0.0), sd_t);
        if (T <= 0.0) {
            e->rate[b] = e->rate_sd[b] = e->rate_lo[b] = e->rate_hi[b] = NAN;
            e->rate_flags[b] = DPM_CI_SMALL_N;
            continue;
        }
        double var = ns2 * (y[b] * y[b] + v[b] * v[b]) / (T * T * T * T);
        double jump = p->noise_var > 0.0 ? fmax(fabs(y[b]), fabs(v[b])) / (T * T) : 0.0;
        e->rate[b] = fmin(fmax(y[b] / T, 0.0), 1.0);
        e->rate_sd[b] = sqrt(var);
        double y2 = y[b] * y[b], v2 = v[b] * v[b]; /* gradients v / T², -y / T² */
        double zc = critical(p, e->z, y2 + v2, y2 * y2 + v2 * v2);
        e->rate_flags[b] = ratio_interval(y[b], T, ns2, 2.0 * ns2, ns2, zc, confidence, jump,
                                          &e->rate_lo[b], &e->rate_hi[b]);
    }
    double grad[2 * DPM_ROC_MAX_BINS] = {0.0};
    double ece = dpm_prc_ece_of(y, v, e->midpoint, B, grad);
    double jump = 0.0, g4 = 0.0, g2 = grad_norm(grad, B, &jump, &g4);
    e->ece = fmin(fmax(ece, 0.0), 1.0);
    e->ece_var_noise = ns2 * g2;
    e->ece_var_sampling = dpm_prc_sampling_var(grad, y, v, B);
    e->ece_bound = bound / M;
    e->ece_bound_total = bound_total / M;
    double rel = ns2 * 2.0 * (double)B / (M * M); /* M's relative variance */
    e->ece_flags = e->ece_total_flags = dpm_ci_class_noise(&rel, 1, e->z, NULL);
    /* The bound rests on the estimated |a_b|, so whether it is large is itself noisy: an
     * interval is called calibrated only when the bound is negligible (DPM_PRC_BOUND_NEGLIGIBLE of
     * its sd), not merely below dpm_ci_halfwidth's 97 % rule. Runs selected by that rule alone (the
     * bins near 0 happening to look far from it) covered 92 % in the coverage test. */
    if (e->ece_bound > DPM_PRC_BOUND_NEGLIGIBLE * sqrt(e->ece_var_noise)) {
        e->ece_flags |= DPM_CI_ABS_BIAS;
    }
    if (e->ece_bound_total >
        DPM_PRC_BOUND_NEGLIGIBLE * sqrt(e->ece_var_noise + e->ece_var_sampling)) {
        e->ece_total_flags |= DPM_CI_ABS_BIAS;
    }
    double nz = p->noise_var > 0.0 ? jump : 0.0;
    unsigned fl = 0; /* dpm_ci_halfwidth's DPM_CI_BOUND speaks of interpolation: ABS_BIAS says it */
    double zc = critical(p, e->z, g2, g4) / e->z; /* central: the tails */
    double h =
        dpm_ci_halfwidth(e->ece_var_noise * zc * zc, nz, e->ece_bound, confidence, NULL, &fl);
    e->ece_flags |= fl & (unsigned)DPM_CI_FEW_EVENTS;
    interval(ece, h, &e->ece_ci_lo, &e->ece_ci_hi);
    fl = 0;
    h = dpm_ci_halfwidth(e->ece_var_noise * zc * zc + e->ece_var_sampling, nz, e->ece_bound_total,
                         confidence, NULL, &fl);
    e->ece_total_flags |= fl & (unsigned)DPM_CI_FEW_EVENTS;
    interval(ece, h, &e->ece_ci_total_lo, &e->ece_ci_total_hi);
}

double dpm_prc_ap_of(const double *pos, const double *neg, uint32_t bins, double *grad)
{
    double C[DPM_ROC_MAX_BINS] = {0.0}, D[DPM_ROC_MAX_BINS] = {0.0}, c = 0.0, d = 0.0, ap = 0.0;
    if (bins < 2 || bins > DPM_ROC_MAX_BINS) {
        return NAN;
    }
    for (uint32_t j = bins; j-- > 0;) {
        c += pos[j];
        d += neg[j];
        C[j] = c;
        D[j] = d;
        ap += c + d > 0.0 ? pos[j] * c / (c + d) : 0.0; /* T_j <= 0: nothing passes j */
    }
    double P = C[0];
    if (!(P > 0.0)) {
        return NAN;
    }
    ap /= P;
    /* the gradient, with prefix sums over j <= b */
    double sd_pre = 0.0, sc_pre = 0.0;
    for (uint32_t b = 0; grad != NULL && b < bins; b++) {
        double T = C[b] + D[b];
        if (T > 0.0) {
            sd_pre += pos[b] * D[b] / (T * T);
            sc_pre += pos[b] * C[b] / (T * T);
        }
        grad[b] = ((T > 0.0 ? C[b] / T : 0.0) + sd_pre - ap) / P;
        grad[bins + b] = -sc_pre / P;
    }
    return ap;
}

double dpm_prc_ece_of(const double *pos, const double *neg, const double *mid, uint32_t bins,
                      double *grad)
{
    double sum_abs = 0.0, M = 0.0;
    if (bins < 2 || bins > DPM_ROC_MAX_BINS) {
        return NAN;
    }
    for (uint32_t b = 0; b < bins; b++) {
        sum_abs += fabs((1.0 - mid[b]) * pos[b] - mid[b] * neg[b]);
        M += pos[b] + neg[b];
    }
    if (!(M > 0.0)) {
        return NAN;
    }
    double ece = sum_abs / M;
    for (uint32_t b = 0; grad != NULL && b < bins; b++) {
        double sign = (1.0 - mid[b]) * pos[b] - mid[b] * neg[b] >= 0.0 ? 1.0 : -1.0;
        grad[b] = (sign * (1.0 - mid[b]) - ece) / M;
        grad[bins + b] = (-sign * mid[b] - ece) / M;
    }
    return ece;
}

void dpm_prc_midpoints(const double *width, uint32_t bins, double *mid)
{
    midpoints(width, bins, mid);
}

dpm_status_t dpm_prc_estimate(const dpm_roc_params_t *p, const dpm_roc_agg_t *a, double confidence,
                              dpm_prc_estimate_t *est)
{
    if (p == NULL || a == NULL || est == NULL || a->bins != p->bins || p->bins < 2 ||
        p->bins > DPM_ROC_MAX_BINS || !(confidence > 0.0 && confidence < 1.0) ||
        p->label_flip != 0.0) { /* flipped labels: these formulas would be silently wrong */
        return DPM_ERR_PARAM;
    }
    uint32_t B = p->bins;
    memset(est, 0, sizeof(*est));
    est->bins = B;
    double y[DPM_ROC_MAX_BINS], v[DPM_ROC_MAX_BINS], P = 0.0, N = 0.0;
    for (uint32_t b = 0; b < B; b++) {
        y[b] = (double)a->pos[b];
        v[b] = (double)a->neg[b];
        P += y[b];
        N += v[b];
    }
    if (!(P > 0.0 && N > 0.0)) {
        est->valid = 0;
        return DPM_OK;
    }
    est->z = prob_norm_quantile(0.5 + confidence / 2.0);
    double draws = p->central_draws > 0 ? (double)p->central_draws : (double)a->reports;
    double ns2 = draws * p->noise_var; /* one summed cell's noise variance */
    precision_recall(p, ns2, y, v, P, confidence, est);
    calibration(p, ns2, y, v, P + N, confidence, est);
    est->valid = 1;
    return DPM_OK;
}

double dpm_prc_ap_exact(const uint64_t *pos, const uint64_t *neg, uint32_t bins)
{
    double c = 0.0, t = 0.0, ap = 0.0, P = 0.0;
    for (uint32_t j = bins; j-- > 0;) {
        c += (double)pos[j];
        t += (double)pos[j] + (double)neg[j];
        ap += t > 0.0 ? (double)pos[j] * c / t : 0.0;
        P += (double)pos[j];
    }
    return P > 0.0 && t > P ? ap / P : NAN;
}

double dpm_prc_ece_exact(const uint64_t *pos, const uint64_t *neg, const double *width,
                         uint32_t bins)
{
    double mid[DPM_ROC_MAX_BINS], s = 0.0, P = 0.0, N = 0.0;
    if (bins < 2 || bins > DPM_ROC_MAX_BINS) {
        return NAN;
    }
    midpoints(width, bins, mid);
    for (uint32_t b = 0; b < bins; b++) {
        s += fabs((1.0 - mid[b]) * (double)pos[b] - mid[b] * (double)neg[b]);
        P += (double)pos[b];
        N += (double)neg[b];
    }
    return P > 0.0 && N > 0.0 ? s / (P + N) : NAN;
}
