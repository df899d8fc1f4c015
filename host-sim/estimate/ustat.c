/* SPDX-License-Identifier: Apache-2.0 */
/* ustat_bins and ustat_tree estimators (see ustat.h). */
#include "estimate/ustat.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "estimate/agg_sums.h"
#include "estimate/ci_flags.h"
#include "estimate/disparity.h"

#define TWO32 4294967296.0
/* Above this domain the O(d^2)-memory second-order variance term is left out (sd too small by
 * that term; never reached with the default DPM_MAX_GRR_K = 256). */
#define DENSE_MAX 2048u
#define SMALL_SD 0.1
#define SMALL_LEVEL_REPORTS 10u

static dpm_status_t undefined(dpm_ustat_estimate_t *est, const char *why)
{
    memset(est, 0, sizeof(*est));
    est->reason = why;
    return DPM_OK;
}

static double clip(double x, double lo, double hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

/* A defined estimate of value v, clipped to the estimand's range [lo, hi] too. */
static void set_value(dpm_ustat_estimate_t *est, double v, double lo, double hi)
{
    est->defined = 1;
    est->reason = "";
    est->value = v;
    est->value_clipped = clip(v, lo, hi);
}

/* z for a two-sided normal interval at confidence c, checked in (0, 1) by the callers. */
static double z_of(double confidence)
{
    return prob_norm_quantile(0.5 + confidence / 2.0);
}

/* ---- ustat_bins ---------------------------------------------------------------------------- */

static uint64_t domain_of(dpm_ustat_kernel_t kernel, uint32_t k)
{
    switch (kernel) {
    case DPM_USTAT_AUC: return k;
    case DPM_USTAT_AUC_PRIVATE_LABEL: return 2u * (uint64_t)k;
    case DPM_USTAT_KENDALL: return (uint64_t)k * k;
    default: return 0;
    }
}

dpm_status_t dpm_ustat_bins_params_init(dpm_ustat_bins_params_t *p, dpm_ustat_kernel_t kernel,
                                        uint32_t k, uint32_t keep, uint32_t other)
{
    uint64_t d = domain_of(kernel, k);
    if (p == NULL || k < 2 || d < 2 || d > DPM_USTAT_EST_MAX_DOMAIN ||
        (uint64_t)keep + (d - 1u) * other != (UINT64_C(1) << 32) || keep <= other) {
        return DPM_ERR_PARAM;
    }
    p->kernel = kernel;
    p->k = k;
    p->domain = (uint32_t)d;
    p->p = (double)keep / TWO32;
    p->q = (double)other / TWO32;
    return DPM_OK;
}

dpm_status_t dpm_ustat_bins_agg_init(dpm_ustat_bins_agg_t *a, uint32_t domain)
{
    return est_agg_start(a, sizeof(*a), offsetof(dpm_ustat_bins_agg_t, domain), domain, 2,
                         DPM_USTAT_EST_MAX_DOMAIN);
}

dpm_status_t dpm_ustat_bins_agg_add(dpm_ustat_bins_agg_t *a, const dpm_ustat_bins_params_t *p,
                                    uint32_t value, uint32_t label)
{
    if (a == NULL || p == NULL || a->domain != p->domain || value >= a->domain || label > 1) {
        return DPM_ERR_PARAM;
    }
    a->count[p->kernel == DPM_USTAT_AUC ? label : 0u][value]++;
    a->reports++;
    return DPM_OK;
}

dpm_status_t dpm_ustat_bins_agg_merge(dpm_ustat_bins_agg_t *dst, const dpm_ustat_bins_agg_t *src)
{
    if (dst == NULL || src == NULL || dst->domain != src->domain) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t c = 0; c < 2; c++) {
        for (uint32_t v = 0; v < dst->domain; v++) {
            dst->count[c][v] += src->count[c][v];
        }
    }
    dst->reports += src->reports;
    return DPM_OK;
}

/* The kernel matrix entry of the U-statistic over the domain (private-label AUC: which = 0 the
 * ordered-pair kernel f, which = 1 the pair-count kernel g; KENDALL: sign * sign). */
static double kernel_entry(const dpm_ustat_bins_params_t *p, uint32_t a, uint32_t b, int which,
                           double w)
{
    uint32_t k = p->k;
    if (p->kernel == DPM_USTAT_KENDALL) {
        int dy = (int)(a / k) - (int)(b / k), dz = (int)(a % k) - (int)(b % k);
        return (double)(((dy > 0) - (dy < 0)) * ((dz > 0) - (dz < 0)));
    }
    uint32_t ya = a / k, yb = b / k, sa = a % k, sb = b % k;
    if (ya == yb) {
        return 0.0;
    }
    if (which == 1) {
        return 1.0;
    }
    uint32_t spos = ya == 1 ? sa : sb, sneg = ya == 1 ? sb : sa;
    return spos > sneg ? 1.0 : spos == sneg ? w : 0.0;
}

/* Cov of the de-biased histogram h = (c - n q) / (p - q) of n reports (true histogram ~ h):
 * into s (d x d, row-major). */
static void debiased_cov(const double *h, double n, double p, double q, uint32_t d, double *s)
{
    double g = p - q, g2 = g * g;
    for (uint32_t a = 0; a < d; a++) {
        for (uint32_t b = 0; b < d; b++) {
            double v = -n * q * q - q * g * (h[a] + h[b]);
            if (a == b) {
                v += n * q + g * h[a] - g2 * h[a];
            }
            s[(size_t)a * d + b] = v / g2;
        }
    }
}

/* x^T S y for d x d S. */
static double quad(const double *x, const double *s, const double *y, uint32_t d)
{
    double t = 0.0;
    for (uint32_t a = 0; a < d; a++) {
        double r = 0.0;
        for (uint32_t b = 0; b < d; b++) {
            r += s[(size_t)a * d + b] * y[b];
        }
        t += x[a] * r;
    }
    return t;
}

/* tr(A S1 B S2) for d x d matrices (B = A^T passed as A with transpose = 1). */
static double trace4(const double *a, int transpose, const double *s1, const double *s2, uint32_t d,
                     double *work)
{
    /* work = A S1 (d x d) */
    for (uint32_t i = 0; i < d; i++) {
        for (uint32_t j = 0; j < d; j++) {
            double v = 0.0;
            for (uint32_t l = 0; l < d; l++) {
                v += a[(size_t)i * d + l] * s1[(size_t)l * d + j];
            }
            work[(size_t)i * d + j] = v;
        }
    }
    /* tr(work B S2) = sum_{i,j} work[i][j] (B S2)[j][i] */
    double t = 0.0;
    for (uint32_t j = 0; j < d; j++) {
        for (uint32_t i = 0; i < d; i++) {
            double bs = 0.0; /* (B S2)[j][i] */
            for (uint32_t l = 0; l < d; l++) {
                double bjl = transpose ? a[(size_t)l * d + j] : a[(size_t)j * d + l];
                bs += bjl * s2[(size_t)l * d + i];
            }
            t += work[(size_t)i * d + j] * bs;
        }
    }
    return t;
}

/* Public-label AUC: two independent populations. */
/* The interval of an estimate of variance var whose one GRR move shifts it by at most jump
 * (few randomization events: the Poisson-aware interval; ci_flags.h), and its flags. */
static void finish_interval(dpm_ustat_estimate_t *est, double var, double jump, double confidence,
                            unsigned flags)
{
    est->sd = var > 0.0 ? sqrt(var) : 0.0;
    est->small_sample = !(est->sd <= SMALL_SD);
    est->ci_flags = flags | (est->small_sample ? DPM_CI_SMALL_N : 0u);
    double h =
        dpm_ci_halfwidth(est->sd * est->sd, jump, 0.0, confidence, &est->events, &est->ci_flags);
    est->ci_lo = est->value - h;
    est->ci_hi = est->value + h;
}

/* The largest difference between two entries of grad (a report moving from one value to
 * another changes h by (e_to - e_from) / g, so the estimate by (grad_to - grad_from) / g). */
static double grad_range(const double *grad, uint32_t d)
{
    double lo = INFINITY, hi = -INFINITY;
    for (uint32_t i = 0; i < d; i++) {
        lo = fmin(lo, grad[i]);
        hi = fmax(hi, grad[i]);
    }
    return d > 0 ? hi - lo : 0.0;
}

static dpm_status_t auc_public(const dpm_ustat_bins_params_t *p, const dpm_ustat_bins_agg_t *a,
                               double w, double confidence, dpm_ustat_estimate_t *est)
{
    uint32_t k = p->k;
    double n[2] = {0.0, 0.0};
    for (uint32_t v = 0; v < k; v++) {
        n[0] += (double)a->count[0][v];
        n[1] += (double)a->count[1][v];
    }
    if (n[1] == 0.0 || n[0] == 0.0) {
        return undefined(est, n[1] == 0.0 ? "no reports of positive examples"
                                          : "no reports of negative examples");
    }
    double g = p->p - p->q;
    double *h = k > 0 ? calloc(2u * (size_t)k, sizeof(double)) : NULL; /* k >= 2 (params_init) */
    if (h == NULL) {
        return DPM_ERR_BUFFER;
    }
    double *hn = h, *hp = h + k;
    for (uint32_t v = 0; v < k; v++) {
        hn[v] = ((double)a->count[0][v] - n[0] * p->q) / g;
        hp[v] = ((double)a->count[1][v] - n[1] * p->q) / g;
    }
    /* sum_{a,b} K_ab hp_a hn_b, K_ab = [a > b] + w [a = b], by prefix sums */
    double below = 0.0, num = 0.0;
    for (uint32_t v = 0; v < k; v++) {
        num += hp[v] * (below + w * hn[v]);
        below += hn[v];
    }
    double den = n[0] * n[1];
    memset(est, 0, sizeof(*est));
    est->defined = 1;
    est->reason = "";
    est->value = num / den;
    est->value_clipped = clip(est->value, 0.0, 1.0);
    est->n_pos = n[1];
    est->n_neg = n[0];
    /* variance: u = K hn, v = K^T hp; Sigma_pos, Sigma_neg; + tr(K S_neg K^T S_pos) */
    double var = 0.0, jump = 0.0;
    if (k <= DENSE_MAX) {
        size_t kk = (size_t)k * k;
        double *buf = malloc(4u * kk * sizeof(double) + 2u * k * sizeof(double));
        if (buf == NULL) {
            free(h);
            return DPM_ERR_BUFFER;
        }
        double *kmat = buf, *sp = buf + kk, *sn = buf + 2u * kk, *work = buf + 3u * kk;
        double *u = buf + 4u * kk, *v = u + k;
        for (uint32_t i = 0; i < k; i++) {
            for (uint32_t j = 0; j < k; j++) {
                kmat[(size_t)i * k + j] = i > j ? 1.0 : i == j ? w : 0.0;
            }
        }
        debiased_cov(hp, n[1], p->p, p->q, k, sp);
        debiased_cov(hn, n[0], p->p, p->q, k, sn);
        double cum = 0.0;
        for (uint32_t i = 0; i < k; i++) { /* u = K hn */
            u[i] = cum + w * hn[i];
            cum += hn[i];
        }
        cum = 0.0;
        for (uint32_t j = k; j-- > 0;) { /* v = K^T hp: v_j = sum_{i > j} hp_i + w hp_j */
            v[j] = cum + w * hp[j];
            cum += hp[j];
        }
        var = quad(u, sp, u, k) + quad(v, sn, v, k) + trace4(kmat, 1, sn, sp, k, work);
        /* dA/dhp = v / den, dA/dhn = u / den: a GRR move within a class */
        jump = fmax(grad_range(u, k), grad_range(v, k)) / (g * den);
        free(buf);
    }
    free(h);
    var /= den * den;
    finish_interval(est, var, jump, confidence, 0u); /* class sizes are public: exact */
    return DPM_OK;
}

/* 1/2 [h^T A h - sum_a c_a w_a] / C(n, 2). */
static double u_value(const double *A, const double *h, const uint64_t *c, double n, double q,
                      double g, uint32_t d)
{
    double hah = quad(h, A, h, d);
    double total = 0.0, diag = 0.0;
    double *row = calloc(d, sizeof(double));
    if (row == NULL) {
        return NAN;
    }
    for (uint32_t i = 0; i < d; i++) {
        row[i] = 0.0;
        for (uint32_t j = 0; j < d; j++) {
            row[i] += A[(size_t)i * d + j];
        }
        total += row[i];
    }
    for (uint32_t i = 0; i < d; i++) {
        double wa = (A[(size_t)i * d + i] - 2.0 * q * row[i] + q * q * total) / (g * g);
        diag += (double)c[i] * wa;
    }
    free(row);
    return 0.5 * (hah - diag) / (n * (n - 1.0) / 2.0);
}

/* Var of U_A (delta method at h plus the second-order term), given the covariance s of h. */
static double u_var(const double *A, const double *h, const double *s, double n, double q, double g,
                    uint32_t d, double *work, double *jump)
{
    double *grad = d > 0 ? calloc(d, sizeof(double)) : NULL; /* d >= 2 (params_init) */
    if (grad == NULL) {
        return NAN;
    }
    double total = 0.0;
    for (uint32_t i = 0; i < d; i++) {
        for (uint32_t j = 0; j < d; j++) {
            total += A[(size_t)i * d + j];
        }
    }
    double pairs = n * (n - 1.0) / 2.0;
    for (uint32_t i = 0; i < d; i++) {
        double ah = 0.0, rowsum = 0.0;
        for (uint32_t j = 0; j < d; j++) {
            ah += A[(size_t)i * d + j] * h[j];
            rowsum += A[(size_t)i * d + j];
        }
        double wa = (A[(size_t)i * d + i] - 2.0 * q * rowsum + q * q * total) / (g * g);
        /* dU/dh_i: A h from the quadratic form, and the diagonal term through c = g h + n q */
        grad[i] = (ah - 0.5 * g * wa) / pairs;
    }
    double var = quad(grad, s, grad, d);
    if (d <= DENSE_MAX) {
        var += 0.5 * trace4(A, 0, s, s, d, work) / (pairs * pairs);
    }
    if (jump != NULL) {
        *jump = grad_range(grad, d) / g;
    }
    free(grad);
    return var;
}

/* Private-label AUC or Kendall's tau: one population over d values. */
static dpm_status_t ustat_general(const dpm_ustat_bins_params_t *p, const dpm_ustat_bins_agg_t *a,
                                  double w, double confidence, dpm_ustat_estimate_t *est)
{
    uint32_t d = p->domain;
    double n = (double)a->reports, g = p->p - p->q;
    if (a->reports < 2) {
        return undefined(est, "fewer than 2 reports");
    }
    size_t dd = (size_t)d * d;
    double *buf = malloc((4u * dd + d) * sizeof(double));
    if (buf == NULL) {
        return DPM_ERR_BUFFER;
    }
    double *af = buf, *ag = buf + dd, *s = buf + 2u * dd, *work = buf + 3u * dd, *h = buf + 4u * dd;
    for (uint32_t v = 0; v < d; v++) {
        h[v] = ((double)a->count[0][v] - n * p->q) / g;
    }
    for (uint32_t i = 0; i < d; i++) {
        for (uint32_t j = 0; j < d; j++) {
            af[(size_t)i * d + j] = kernel_entry(p, i, j, 0, w);
            ag[(size_t)i * d + j] = kernel_entry(p, i, j, 1, w);
        }
    }
    debiased_cov(h, n, p->p, p->q, d, s);
    double uf = u_value(af, h, a->count[0], n, p->q, g, d);
    memset(est, 0, sizeof(*est));
    double var = 0.0, jump = 0.0;
    unsigned flags = 0;
    if (p->kernel == DPM_USTAT_KENDALL) {
        var = u_var(af, h, s, n, p->q, g, d, work, &jump);
        free(buf);
        if (!isfinite(uf) || !isfinite(var)) {
            return DPM_ERR_BUFFER;
        }
        set_value(est, uf, -1.0, 1.0);
    } else {
        double ug = u_value(ag, h, a->count[0], n, p->q, g, d);
        double pairs = n * (n - 1.0) / 2.0;
        if (!(ug * pairs > 0.0)) {
            free(buf);
            return undefined(est, "estimated (positive, negative) pairs not above 0");
        }
        /* the pair count U_g is the ratio's denominator (n+ n- / C(n, 2)): Fieller's g */
        double rel = u_var(ag, h, s, n, p->q, g, d, work, NULL) / (ug * ug);
        flags = dpm_ci_class_noise(&rel, 1, z_of(confidence), NULL);
        double r = uf / ug;
        for (size_t i = 0; i < dd; i++) { /* the linearized kernel of the ratio */
            af[i] = (af[i] - r * ag[i]) / ug;
        }
        var = u_var(af, h, s, n, p->q, g, d, work, &jump);
        /* class sizes: n+ + n- = n and n+ n- = U_g C(n, 2) */
        double npos = 0.0;
        for (uint32_t v = p->k; v < d; v++) {
            npos += h[v];
        }
        free(buf);
        if (!isfinite(r) || !isfinite(var)) {
            return DPM_ERR_BUFFER;
        }
        set_value(est, r, 0.0, 1.0);
        est->n_pos = npos;
        est->n_neg = n - npos;
    }
    finish_interval(est, var, jump, confidence, flags);
    return DPM_OK;
}

dpm_status_t dpm_ustat_bins_estimate(const dpm_ustat_bins_params_t *p,
                                     const dpm_ustat_bins_agg_t *a, double tie_weight,
                                     double confidence, dpm_ustat_estimate_t *est)
{
    if (p == NULL || a == NULL || est == NULL || a->domain != p->domain ||
        !(tie_weight >= 0.0 && tie_weight <= 1.0) || !(confidence > 0.0 && confidence < 1.0)) {
        return DPM_ERR_PARAM;
    }
    if (a->reports == 0) {
        return undefined(est, "no reports");
    }
    return p->kernel == DPM_USTAT_AUC ? auc_public(p, a, tie_weight, confidence, est)
                                      : ustat_general(p, a, tie_weight, confidence, est);
}

dpm_status_t dpm_ustat_bins_exact(const dpm_ustat_bins_params_t *p, const uint64_t *hist_neg,
                                  const uint64_t *hist_pos, double tie_weight, double *value)
{
    if (p == NULL || hist_neg == NULL || value == NULL ||
        (p->kernel != DPM_USTAT_KENDALL && hist_pos == NULL)) {
        return DPM_ERR_PARAM;
    }
    uint32_t k = p->k;
    if (p->kernel == DPM_USTAT_KENDALL) {
        double n = 0.0, t = 0.0;
        for (uint32_t a = 0; a < p->domain; a++) {
            n += (double)hist_neg[a];
            for (uint32_t b = 0; b < p->domain; b++) {
                t += (double)hist_neg[a] * (double)hist_neg[b] * kernel_entry(p, a, b, 0, 0.0);
            }
        }
        if (n < 2.0) {
            return DPM_ERR_UNDEFINED;
        }
        *value = 0.5 * t / (n * (n - 1.0) / 2.0); /* the diagonal of A is 0 */
        return DPM_OK;
    }
    double below = 0.0, num = 0.0, np = 0.0;
    for (uint32_t v = 0; v < k; v++) {
        num += (double)hist_pos[v] * (below + tie_weight * (double)hist_neg[v]);
        below += (double)hist_neg[v];
        np += (double)hist_pos[v];
    }
    if (np == 0.0 || below == 0.0) {
        return DPM_ERR_UNDEFINED;
    }
    *value = num / (np * below);
    return DPM_OK;
}

double dpm_ustat_theorem1_bound(const dpm_ustat_bins_params_t *p, double n)
{
    double g = p->p - p->q, b = 1.0 - g;
    return 1.0 / (n * g * g) + (1.0 + b) * (1.0 + b) / (2.0 * n * (n - 1.0) * g * g * g * g);
}

/* ---- ustat_tree ---------------------------------------------------------------------------- */

dpm_status_t dpm_ustat_tree_params_init(dpm_ustat_tree_params_t *p, const dpm_ustat_tree_t *m)
{
    if (p == NULL || m == NULL || m->depth < 1 || m->depth > DPM_USTAT_EST_MAX_DEPTH ||
        m->grr_levels > m->depth || m->grr_levels > DPM_USTAT_MAX_GRR_LEVELS) {
        return DPM_ERR_PARAM;
    }
    memset(p, 0, sizeof(*p));
    p->depth = m->depth;
    p->grr_levels = m->grr_levels;
    if (m->grr_levels < m->depth) {
        if (m->rr.k != 2 || (uint64_t)m->rr.keep + m->rr.other != (UINT64_C(1) << 32) ||
            m->rr.keep <= m->rr.other) {
            return DPM_ERR_PARAM;
        }
        p->rr_p = (double)m->rr.keep / TWO32;
    }
    for (uint32_t l = 1; l <= m->grr_levels; l++) {
        const dpm_grr_t *g = &m->grr[l - 1];
        if (g->k != (UINT32_C(1) << l) ||
            (uint64_t)g->keep + (uint64_t)(g->k - 1u) * g->other != (UINT64_C(1) << 32) ||
            g->keep <= g->other) {
            return DPM_ERR_PARAM;
        }
        p->grr_p[l - 1] = (double)g->keep / TWO32;
        p->grr_q[l - 1] = (double)g->other / TWO32;
    }
    return DPM_OK;
}

dpm_status_t dpm_ustat_tree_agg_init(dpm_ustat_tree_agg_t *a, const dpm_ustat_tree_params_t *p)
{
    if (a == NULL || p == NULL || p->depth < 1 || p->depth > DPM_USTAT_EST_MAX_DEPTH) {
        return DPM_ERR_PARAM;
    }
    memset(a, 0, sizeof(*a));
    a->depth = p->depth;
    a->grr_levels = p->grr_levels;
    size_t n = (size_t)1 << (p->depth + 1);
    a->sums[0] = calloc(n, sizeof(int64_t));
    a->sums[1] = calloc(n, sizeof(int64_t));
    if (a->sums[0] == NULL || a->sums[1] == NULL) {
        dpm_ustat_tree_agg_free(a);
        return DPM_ERR_BUFFER;
    }
    return DPM_OK;
}

void dpm_ustat_tree_agg_free(dpm_ustat_tree_agg_t *a)
{
    if (a != NULL) {
        free(a->sums[0]);
        free(a->sums[1]);
        a->sums[0] = a->sums[1] = NULL;
    }
}

dpm_status_t dpm_ustat_tree_agg_add(dpm_ustat_tree_agg_t *a, uint32_t label, uint32_t level,
                                    uint32_t row, uint32_t value)
{
    if (a == NULL || a->sums[0] == NULL || label > 1 || level < 1 || level > a->depth ||
        (row >> level) != 0) {
        return DPM_ERR_PARAM;
    }
    size_t base = (size_t)1 << level;
    if (level <= a->grr_levels) {
        if (row != 0 || (value >> level) != 0) {
            return DPM_ERR_PARAM;
        }
        a->sums[label][base + value]++;
    } else {
        if (value > 1) {
            return DPM_ERR_PARAM;
        }
        a->sums[label][base + row] += 1 - 2 * (int64_t)value;
    }
    a->level_reports[label][level]++;
    a->reports[label]++;
    return DPM_OK;
}

dpm_status_t dpm_ustat_tree_agg_merge(dpm_ustat_tree_agg_t *dst, const dpm_ustat_tree_agg_t *src)
{
    if (dst == NULL || src == NULL || dst->depth != src->depth ||
        dst->grr_levels != src->grr_levels || dst->sums[0] == NULL || src->sums[0] == NULL) {
        return DPM_ERR_PARAM;
    }
    uint32_t n = UINT32_C(1) << (dst->depth + 1);
    for (uint32_t c = 0; c < 2; c++) {
        est_add_sums(dst->sums[c], src->sums[c], n);
        for (uint32_t l = 0; l <= dst->depth; l++) {
            dst->level_reports[c][l] += src->level_reports[c][l];
        }
        dst->reports[c] += src->reports[c];
    }
    return DPM_OK;
}

/* Unnormalized fast Walsh-Hadamard transform: y[u] = sum_j (-1)^popcount(j & u) x[j]. */
static void wht(double *x, size_t n)
{
    for (size_t len = 1; len < n; len <<= 1) {
        for (size_t i = 0; i < n; i += 2 * len) {
            for (size_t j = i; j < i + len; j++) {
                double u = x[j], v = x[j + len];
                x[j] = u + v;
                x[j + len] = u - v;
            }
        }
    }
}

/* The per-node variance factor C_l of level l (per report on that level). */
static double level_c(const dpm_ustat_tree_params_t *p, uint32_t l)
{
    if (l <= p->grr_levels) {
        double pp = p->grr_p[l - 1], q = p->grr_q[l - 1], g = pp - q;
        return q * (1.0 - q) / (g * g) + (1.0 - 2.0 * q) / g;
    }
    double ce = 1.0 / (2.0 * p->rr_p - 1.0);
    return ce * ce;
}

dpm_status_t dpm_ustat_tree_nodes(const dpm_ustat_tree_params_t *p, const dpm_ustat_tree_agg_t *a,
                                  uint32_t label, double *h)
{
    if (p == NULL || a == NULL || h == NULL || label > 1 || a->depth != p->depth ||
        a->grr_levels != p->grr_levels || a->sums[0] == NULL) {
        return DPM_ERR_PARAM;
    }
    double n = (double)a->reports[label];
    h[0] = 0.0;
    h[1] = n;
    for (uint32_t l = 1; l <= p->depth; l++) {
        size_t base = (size_t)1 << l;
        double nl = (double)a->level_reports[label][l];
        if (nl == 0.0) {
            return DPM_ERR_UNDEFINED;
        }
        const int64_t *s = a->sums[label] + base;
        if (l <= p->grr_levels) {
            double q = p->grr_q[l - 1], g = p->grr_p[l - 1] - q;
            for (size_t u = 0; u < base; u++) {
                h[base + u] = n / nl * ((double)s[u] - nl * q) / g;
            }
        } else {
            double ce = 1.0 / (2.0 * p->rr_p - 1.0);
            for (size_t u = 0; u < base; u++) {
                h[base + u] = (double)s[u];
            }
            wht(h + base, base);
            for (size_t u = 0; u < base; u++) {
                h[base + u] *= n / nl * ce;
            }
        }
    }
    return DPM_OK;
}

/* The traversal (sdk/docs/ustat.md §Traversal) over node estimates hp, hn (index 2^l + u). mode
 * FULL: never discard. */
static double traverse(uint32_t depth, const double *hp, const double *hn, int full, double a,
                       double vp, double vn, double w, uint64_t *recursed, uint64_t *discarded,
                       int *oom)
{
    /* 2^depth node indices: a depth of 32 or more cannot be indexed (u is 32-bit) */
    size_t max = depth < 32 ? (size_t)1 << depth : 0;
    uint32_t *cur = max > 0 ? malloc(max * sizeof(uint32_t)) : NULL;
    uint32_t *next = max > 0 ? malloc(max * sizeof(uint32_t)) : NULL;
    if (cur == NULL || next == NULL) {
        free(cur);
        free(next);
        *oom = 1;
        return 0.0;
    }
    double total = 0.0, floor_p = sqrt(a * vp) / 2.0, floor_n = sqrt(a * vn) / 2.0;
    double tau = a * sqrt(vp * vn);
    size_t ncur = 1;
    cur[0] = 0;
    for (uint32_t l = 0; l < depth; l++) {
        size_t base = (size_t)1 << l, child = base << 1, nnext = 0;
        for (size_t i = 0; i < ncur; i++) {
            uint32_t u = cur[i];
            double c0p = hp[child + 2u * u], c1p = hp[child + 2u * u + 1u];
            double c0n = hn[child + 2u * u], c1n = hn[child + 2u * u + 1u];
            if (!full && fmax(hp[base + u], floor_p) * fmax(hn[base + u], floor_n) < tau) {
                total += 0.5 * (c0p + c1p) * (c0n + c1n); /* half the pairs within the node */
                (*discarded)++;
                continue;
            }
            total += c1p * c0n; /* positives right of the split, negatives left */
            (*recursed)++;
            next[nnext++] = 2u * u;
            next[nnext++] = 2u * u + 1u;
        }
        uint32_t *t = cur;
        cur = next;
        next = t;
        ncur = nnext;
    }
    size_t leaves = (size_t)1 << depth;
    for (size_t i = 0; i < ncur; i++) {
        total += w * hp[leaves + cur[i]] * hn[leaves + cur[i]];
    }
    free(cur);
    free(next);
    return total;
}

/* a minimizing (4a + 1) m + 21 sqrt(2 n C a) / (sqrt(a) - 1): with s = sqrt(a), the root of
 * 8 s m (s - 1)^2 = 21 sqrt(2 n C), increasing in s > 1 (bisection). */
static double choose_a(double m, double n, double C)
{
    double rhs = 21.0 * sqrt(2.0 * n * C), lo = 1.0, hi = 2.0;
    while (8.0 * hi * m * (hi - 1.0) * (hi - 1.0) < rhs && hi < 1e6) {
        hi *= 2.0;
    }
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (8.0 * mid * m * (mid - 1.0) * (mid - 1.0) < rhs) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return hi * hi;
}

dpm_status_t dpm_ustat_tree_estimate(const dpm_ustat_tree_params_t *p,
                                     const dpm_ustat_tree_agg_t *a,
                                     const dpm_ustat_tree_opts_t *opts,
                                     dpm_ustat_tree_estimate_t *out)
{
    if (p == NULL || a == NULL || opts == NULL || out == NULL || a->depth != p->depth ||
        a->grr_levels != p->grr_levels || a->sums[0] == NULL ||
        !(opts->tie_weight >= 0.0 && opts->tie_weight <= 1.0) ||
        (opts->mode == DPM_USTAT_TREE_GIVEN_A && !(opts->a > 1.0 && isfinite(opts->a))) ||
        opts->mode > DPM_USTAT_TREE_FULL) {
        return DPM_ERR_PARAM;
    }
    memset(out, 0, sizeof(*out));
    dpm_ustat_estimate_t *est = &out->est;
    double np = (double)a->reports[1], nn = (double)a->reports[0];
    if (np == 0.0 || nn == 0.0) {
        return undefined(est, np == 0.0 ? "no reports of positive examples"
                                        : "no reports of negative examples");
    }
    uint32_t depth = p->depth;
    double v[2] = {0.0, 0.0};
    uint64_t min_level = UINT64_MAX;
    for (uint32_t c = 0; c < 2; c++) {
        double n = (double)a->reports[c];
        for (uint32_t l = 1; l <= depth; l++) {
            uint64_t nl = a->level_reports[c][l];
            if (nl == 0) {
                return undefined(est, "a tree level has no reports of one class");
            }
            min_level = nl < min_level ? nl : min_level;
            v[c] = fmax(v[c], n * n / (double)nl * level_c(p, l));
        }
    }
    size_t size = (size_t)1 << (depth + 1);
    double *hp = malloc(size * sizeof(double)), *hn = malloc(size * sizeof(double));
    if (hp == NULL || hn == NULL) {
        free(hp);
        free(hn);
        return DPM_ERR_BUFFER;
    }
    (void)dpm_ustat_tree_nodes(p, a, 1, hp); /* every level has reports: cannot fail */
    (void)dpm_ustat_tree_nodes(p, a, 0, hn);
    double n = np + nn, m = fmin(np, nn);
    out->v_pos = v[1];
    out->v_neg = v[0];
    out->C = fmax(v[1] / (np * depth), v[0] / (nn * depth));
    int full = opts->mode == DPM_USTAT_TREE_FULL;
    double av = full                                   ? 0.0
                : opts->mode == DPM_USTAT_TREE_GIVEN_A ? opts->a
                                                       : choose_a(m, n, out->C);
    int oom = 0;
    double total = traverse(depth, hp, hn, full, av, v[1], v[0], opts->tie_weight, &out->recursed,
                            &out->discarded, &oom);
    free(hp);
    free(hn);
    if (oom) {
        return DPM_ERR_BUFFER;
    }
    out->a = av;
    if (!full) {
        double C = out->C, sa = sqrt(av);
        out->mse_bound =
            C * depth * depth *
            (2.0 * n + (4.0 * av + 1.0) * m + 21.0 * sqrt(2.0 * n * C * av) / (sa - 1.0)) /
            (np * nn);
    }
    est->defined = 1;
    est->reason = "";
    est->value = total / (np * nn);
    est->value_clipped = clip(est->value, 0.0, 1.0);
    est->sd = sqrt(out->mse_bound);
    est->ci_lo = est->ci_hi = est->value; /* no interval: Theorem 3 bounds the MSE */
    est->n_pos = np;
    est->n_neg = nn;
    est->small_sample = (!full && est->sd > SMALL_SD) || min_level < SMALL_LEVEL_REPORTS;
    return DPM_OK;
}

dpm_status_t dpm_ustat_tree_exact(uint32_t depth, const uint64_t *hist_neg,
                                  const uint64_t *hist_pos, double tie_weight, double *auc)
{
    if (hist_neg == NULL || hist_pos == NULL || auc == NULL || depth < 1 ||
        depth > DPM_USTAT_EST_MAX_DEPTH) {
        return DPM_ERR_PARAM;
    }
    size_t size = (size_t)1 << (depth + 1), leaves = (size_t)1 << depth;
    double *hp = calloc(size, sizeof(double)), *hn = calloc(size, sizeof(double));
    if (hp == NULL || hn == NULL) {
        free(hp);
        free(hn);
        return DPM_ERR_BUFFER;
    }
    for (size_t u = 0; u < leaves; u++) {
        hp[leaves + u] = (double)hist_pos[u];
        hn[leaves + u] = (double)hist_neg[u];
    }
    for (size_t i = leaves; i-- > 1;) { /* parents from children (node i: children 2i, 2i + 1) */
        hp[i] = hp[2 * i] + hp[2 * i + 1];
        hn[i] = hn[2 * i] + hn[2 * i + 1];
    }
    uint64_t rec = 0, dis = 0;
    int oom = 0;
    double total =
        traverse((uint32_t)depth, hp, hn, 1, 0.0, 0.0, 0.0, tie_weight, &rec, &dis, &oom);
    double np = hp[1], nn = hn[1];
    free(hp);
    free(hn);
    if (oom) {
        return DPM_ERR_BUFFER;
    }
    if (np == 0.0 || nn == 0.0) {
        return DPM_ERR_UNDEFINED;
    }
    *auc = total / (np * nn);
    return DPM_OK;
}

double dpm_ustat_bins_kernel(const dpm_ustat_bins_params_t *p, uint32_t a, uint32_t b, int which,
                             double w)
{
    return kernel_entry(p, a, b, which, w);
}
