/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC on the server: ranking, AUC from summed statistics, de-biasing, variance, CI (see
 * fedauc.h). */
#include "estimate/fedauc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "estimate/ci_flags.h"
#include "estimate/disparity.h"
#include "estimate/roc.h"

/* ---- ranking ----------------------------------------------------------------------------------
 */

/* idx sorted by scores[idx] (stable LSD radix sort, two 16-bit digits). tmp: m entries.
 * 0, or -1 when out of memory. */
static int sort_by_score(const uint32_t *scores, uint64_t m, uint32_t *idx, uint32_t *tmp)
{
    for (uint64_t i = 0; i < m; i++) {
        idx[i] = (uint32_t)i;
    }
    uint64_t *count = calloc(65537, sizeof(uint64_t));
    if (count == NULL) {
        return -1;
    }
    for (unsigned sh = 0; sh <= 16; sh += 16) {
        memset(count, 0, 65537 * sizeof(uint64_t));
        for (uint64_t i = 0; i < m; i++) {
            count[((scores[idx[i]] >> sh) & 0xFFFFu) + 1u]++;
        }
        for (unsigned d = 0; d < 65536u; d++) {
            count[d + 1u] += count[d];
        }
        for (uint64_t i = 0; i < m; i++) {
            tmp[count[(scores[idx[i]] >> sh) & 0xFFFFu]++] = idx[i];
        }
        memcpy(idx, tmp, m * sizeof(uint32_t));
    }
    free(count);
    return 0;
}

dpm_status_t dpm_fa_rank2(const uint32_t *scores, uint64_t m, uint32_t *rank2,
                          dpm_fa_ranking_t *mom)
{
    if (scores == NULL || rank2 == NULL || m < 1 || m > DPM_FEDAUC_MAX_TOTAL) {
        return DPM_ERR_PARAM;
    }
    uint32_t *idx = malloc(m * sizeof(uint32_t));
    uint32_t *tmp = malloc(m * sizeof(uint32_t));
    if (idx == NULL || tmp == NULL || sort_by_score(scores, m, idx, tmp) != 0) {
        free(idx);
        free(tmp);
        return DPM_ERR_BUFFER;
    }
    dpm_fa_ranking_t mo;
    memset(&mo, 0, sizeof(mo));
    mo.m = m;
    for (uint64_t a = 0; a < m;) {
        uint64_t b = a;
        while (b + 1 < m && scores[idx[b + 1]] == scores[idx[a]]) {
            b++;
        }
        uint32_t r2 = (uint32_t)(a + b); /* 2 x the mean of the positions a..b */
        for (uint64_t i = a; i <= b; i++) {
            rank2[idx[i]] = r2;
        }
        long double r = (long double)r2 / 2.0L, k = (long double)(b - a + 1);
        mo.sum_r += k * r;
        mo.sum_r2 += k * r * r;
        mo.tie_groups++;
        a = b + 1;
    }
    free(idx);
    free(tmp);
    if (mom != NULL) {
        *mom = mo;
    }
    return DPM_OK;
}

double dpm_fa_auc_exact(const uint32_t *scores, const uint8_t *labels, uint64_t m)
{
    if (scores == NULL || labels == NULL || m == 0) {
        return NAN;
    }
    uint32_t *idx = malloc(m * sizeof(uint32_t)), *tmp = malloc(m * sizeof(uint32_t));
    if (idx == NULL || tmp == NULL || sort_by_score(scores, m, idx, tmp) != 0) {
        free(idx);
        free(tmp);
        return NAN;
    }
    /* Walk tie groups upwards: each positive counts the negatives strictly below, and half
     * of the negatives in its own group. Integer counts, so the sum is exact (x2). */
    unsigned __int128 twice = 0;
    uint64_t neg_below = 0, pos = 0;
    for (uint64_t a = 0; a < m;) {
        uint64_t b = a, gp = 0, gn = 0;
        while (b < m && scores[idx[b]] == scores[idx[a]]) {
            gp += labels[idx[b]] != 0;
            gn += labels[idx[b]] == 0;
            b++;
        }
        twice += (unsigned __int128)gp * (2u * neg_below + gn);
        neg_below += gn;
        pos += gp;
        a = b;
    }
    free(idx);
    free(tmp);
    if (pos == 0 || neg_below == 0) {
        return NAN;
    }
    return (double)((long double)twice / 2.0L / ((long double)pos * (long double)neg_below));
}

/* ---- AUC from sums, de-biasing, closed forms ------------------------------------------------ */

double dpm_fa_auc_from_sums(double sum_r, double p, double m)
{
    return (sum_r - p * (p - 1.0) / 2.0) / (p * (m - p));
}

double dpm_fa_menon_debias(double auc_noisy, double p, double n, double rho)
{
    double pc = (p * (1.0 - rho) - n * rho) / (1.0 - 2.0 * rho); /* P' (Eq. 11) */
    double pi = pc / (p + n);                                    /* π' (Eq. 12) */
    double alpha = (1.0 - pi) * rho / (pi * (1.0 - rho) + (1.0 - pi) * rho);
    double beta = pi * rho / (pi * rho + (1.0 - pi) * (1.0 - rho));
    return (auc_noisy - (alpha + beta) / 2.0) / (1.0 - alpha - beta);
}

double dpm_fa_rr_debias(double sum_r_flipped, double p_flipped, double m, double sum_r_all,
                        double rho)
{
    double s = (sum_r_flipped - rho * sum_r_all) / (1.0 - 2.0 * rho);
    double p = (p_flipped - rho * m) / (1.0 - 2.0 * rho);
    return dpm_fa_auc_from_sums(s, p, m);
}

/* sum over r = 0 .. M-1 of (r - c)^2. */
static double sum_sq_dev(double m, double c)
{
    return (m - 1.0) * m * (2.0 * m - 1.0) / 6.0 - c * m * (m - 1.0) + m * c * c;
}

double dpm_fa_sd_rr(double m, double p, double auc, double rho)
{
    double n = m - p, c = p - 0.5 + auc * (n - p);
    return sqrt(rho * (1.0 - rho)) / (1.0 - 2.0 * rho) * sqrt(sum_sq_dev(m, c)) / (p * n);
}

double dpm_fa_sd_rr_paper_eq7(double m, double p, double n, double eps)
{
    double r = 1.0 / (1.0 + exp(eps)); /* the paper's r(1 - r) = e^ε / (1 + e^ε)^2 */
    return sqrt(r * (1.0 - r) * (m - 1.0) * m * (2.0 * m - 1.0) / 6.0) / (p * n);
}

/* ---- aggregation ------------------------------------------------------------------------------
 */

dpm_status_t dpm_fa_params_from_mech(dpm_fa_params_t *p, const dpm_mech_t *m)
{
    if (p == NULL || m == NULL ||
        (m->campaign.mechanism != DPM_MECH_ID_FEDAUC_RR &&
         m->campaign.mechanism != DPM_MECH_ID_FEDAUC_LAP)) {
        return DPM_ERR_PARAM;
    }
    memset(p, 0, sizeof(*p));
    p->mechanism = (uint32_t)m->campaign.mechanism;
    p->variant = (uint32_t)m->params.fedauc.variant;
    p->eps = m->eps_implemented;
    if (p->mechanism == DPM_MECH_ID_FEDAUC_RR) {
        p->rho = (double)(4294967296.0 - (double)m->params.fedauc.rr.keep) / 4294967296.0;
    }
    return DPM_OK;
}

dpm_status_t dpm_fa_params_exact(dpm_fa_params_t *p, uint32_t mechanism, uint32_t variant)
{
    if (p == NULL || (mechanism != DPM_MECH_ID_FEDAUC_RR && mechanism != DPM_MECH_ID_FEDAUC_LAP)) {
        return DPM_ERR_PARAM;
    }
    memset(p, 0, sizeof(*p));
    p->mechanism = mechanism;
    p->variant = variant;
    return DPM_OK;
}

void dpm_fa_agg_init(dpm_fa_agg_t *a)
{
    if (a != NULL) {
        memset(a, 0, sizeof(*a));
    }
}

static int uses_t(const dpm_fa_params_t *p)
{
    return p->mechanism == DPM_MECH_ID_FEDAUC_LAP &&
           (p->variant == DPM_FEDAUC_ORTHOGONAL || p->variant == DPM_FEDAUC_ADAPTIVE);
}

static dpm_status_t add_counts(dpm_fa_agg_t *a, uint32_t n, uint32_t total)
{
    if (n == 0 || (a->reports > 0 && total != a->total)) {
        return DPM_ERR_PARAM;
    }
    if (a->reports == UINT64_MAX || a->examples > UINT64_MAX - n) {
        return DPM_ERR_RANGE; /* counts that would wrap */
    }
    a->total = total;
    a->reports++;
    a->examples += n;
    return DPM_OK;
}

/* Largest |localP|, |localSum2|, |t| and sum_rank2 the sums take: below 2^62 each, a report's
 * terms stay below 2^125 and 2^64 reports cannot overflow the 128-bit sums (fedauc.h). */
#define FA_VALUE_MAX ((int64_t)1 << 62)

static int fa_value_ok(int64_t v)
{
    return v <= FA_VALUE_MAX && v >= -FA_VALUE_MAX;
}

/* The discrete Laplace scale sens / ε_part in doubled-rank (or count) units, eps in Q16.16. */
static double scale(uint64_t sens, uint32_t eps_part)
{
    return sens == 0 ? 0.0 : (double)sens * 65536.0 / (double)eps_part;
}

dpm_status_t dpm_fa_agg_add(dpm_fa_agg_t *a, const dpm_fa_params_t *p, const dpm_fedauc_report_t *b)
{
    if (a == NULL || p == NULL || b == NULL) {
        return DPM_ERR_PARAM;
    }
    int noisy = p->mechanism == DPM_MECH_ID_FEDAUC_LAP && p->eps != 0;
    if (noisy && (b->eps_p == 0 || b->eps_p > p->eps || (b->eps_p == p->eps && b->sensitivity))) {
        return DPM_ERR_PARAM;
    }
    if (!fa_value_ok(b->local_p) || !fa_value_ok(b->local_sum2) || !fa_value_ok(b->t) ||
        b->sum_rank2 > (uint64_t)FA_VALUE_MAX) {
        return DPM_ERR_RANGE; /* nothing an honest report holds (the collector bounds them) */
    }
    dpm_status_t st = add_counts(a, b->n, b->total);
    if (st != DPM_OK) {
        return st;
    }
    a->p += b->local_p;
    if (uses_t(p)) {
        __int128 num = (__int128)b->t + (__int128)b->sum_rank2 * b->local_p;
        a->sum2_frac += (long double)num / (long double)b->n;
    } else {
        a->sum2_int += b->local_sum2;
    }
    if (!noisy) {
        return DPM_OK;
    }
    long double vp = prob_dlap_var(scale(1, b->eps_p));
    long double vs = prob_dlap_var(scale(b->sensitivity, p->eps - b->eps_p));
    if (uses_t(p)) {
        long double nn = (long double)b->n, rbar = (long double)b->sum_rank2 / (2.0L * nn);
        a->a0 += vs / (4.0L * nn * nn) + rbar * rbar * vp;
        a->a2 += rbar * vp;
    } else {
        a->a0 += vs / 4.0L;
    }
    a->a3 += vp;
    return DPM_OK;
}

dpm_status_t dpm_fa_agg_add_exact(dpm_fa_agg_t *a, const dpm_fa_params_t *p,
                                  const dpm_fedauc_stats_t *st, const dpm_fedauc_ranks_t *rk)
{
    if (a == NULL || p == NULL || st == NULL || rk == NULL || p->eps != 0 || st->n != rk->n) {
        return DPM_ERR_PARAM;
    }
    dpm_fedauc_report_t b;
    memset(&b, 0, sizeof(b));
    b.n = st->n;
    b.total = rk->total;
    b.local_p = st->p;
    b.sum_rank2 = rk->sum_rank2;
    if (uses_t(p)) {
        b.t = st->t;
    } else {
        b.local_sum2 = (int64_t)st->sum2;
    }
    return dpm_fa_agg_add(a, p, &b);
}

/* ---- the estimate ------------------------------------------------------------------------------
 */

/* The interval and its flags (fedauc.h): the largest move of one randomization event, the
 * effective number of events, Fieller's g of the class totals. */
static void interval_flags(const dpm_fa_params_t *p, const dpm_fa_agg_t *a, double m, double level,
                           dpm_fa_estimate_t *e)
{
    double pn = e->p * e->n, far = fmax(fabs(e->c), fabs(m - 1.0 - e->c)), var_p = 0.0, jump = 0.0;
    if (p->mechanism == DPM_MECH_ID_FEDAUC_RR) {
        double g = 1.0 - 2.0 * p->rho; /* a flip moves S by +-r, P by +-1: the AUC by far / pn */
        jump = p->rho > 0.0 ? far / (g * pn) : 0.0;
        var_p = m * p->rho * (1.0 - p->rho) / (g * g);
    } else if (p->eps != 0) { /* one unit of a device's localP noise moves the numerator by at
                               * most c (LOCAL, GLOBAL) or |mean rank - c| <= far */
        jump = (uses_t(p) ? far : fabs(e->c)) / pn;
        var_p = (double)a->a3;
    }
    double rel[2] = {var_p / (e->p * e->p), var_p / (e->n * e->n)};
    e->ci_flags = e->valid ? dpm_ci_class_noise(rel, 2, e->z, &e->fieller_g) : DPM_CI_SMALL_N;
    double h = dpm_ci_halfwidth(e->sd * e->sd, jump, 0.0, level, &e->events, &e->ci_flags);
    e->ci_lo = e->auc_raw - h;
    e->ci_hi = e->auc_raw + h;
}

dpm_status_t dpm_fa_estimate(const dpm_fa_params_t *p, const dpm_fa_agg_t *a,
                             const dpm_fa_ranking_t *rk, double level, dpm_fa_estimate_t *out)
{
    if (p == NULL || a == NULL || out == NULL || !(level > 0.0 && level < 1.0)) {
        return DPM_ERR_PARAM;
    }
    if (a->reports == 0 || a->examples != a->total) {
        return DPM_ERR_UNDEFINED;
    }
    dpm_fa_estimate_t e;
    memset(&e, 0, sizeof(e));
    double m = (double)a->total;
    double sum_r = (double)(((long double)a->sum2_int + a->sum2_frac) / 2.0L);
    double pf = (double)a->p;
    e.m = m;
    e.auc_noisy = dpm_fa_auc_from_sums(sum_r, pf, m);
    e.z = prob_norm_quantile(0.5 + level / 2.0);
    double var_num = 0.0; /* Var(e_S - c e_P), filled below */
    if (p->mechanism == DPM_MECH_ID_FEDAUC_RR) {
        double rho = p->rho;
        double all_r = rk != NULL ? (double)rk->sum_r : m * (m - 1.0) / 2.0;
        e.valid = rho < 0.5;
        e.p = (pf - rho * m) / (1.0 - 2.0 * rho);
        e.n = m - e.p;
        e.auc_raw = dpm_fa_rr_debias(sum_r, pf, m, all_r, rho);
        e.c = e.p - 0.5 + e.auc_raw * (e.n - e.p);
        double ssd =
            rk != NULL ? (double)(rk->sum_r2 - 2.0L * e.c * rk->sum_r + (long double)m * e.c * e.c)
                       : sum_sq_dev(m, e.c);
        var_num = rho * (1.0 - rho) / ((1.0 - 2.0 * rho) * (1.0 - 2.0 * rho)) * ssd;
    } else {
        e.valid = 1;
        e.p = pf;
        e.n = m - pf;
        e.auc_raw = e.auc_noisy;
        e.c = e.p - 0.5 + e.auc_raw * (e.n - e.p);
        var_num = (double)(a->a0 - 2.0L * e.c * a->a2 + (long double)e.c * e.c * a->a3);
    }
    e.valid = e.valid && e.p > 0.0 && e.n > 0.0 && isfinite(e.auc_raw);
    e.auc = e.auc_raw < 0.0 ? 0.0 : e.auc_raw > 1.0 ? 1.0 : e.auc_raw;
    e.sd = sqrt(var_num > 0.0 ? var_num : 0.0) / (e.p * e.n);
    interval_flags(p, a, m, level, &e);
    *out = e;
    return DPM_OK;
}
