/* SPDX-License-Identifier: Apache-2.0 */
/* Estimates of dpauc, ustat_bins and ustat_tree campaigns (JSON in estimate_json.h), from the
 * stored vector sums (agg_auc.h) through the estimators dpm-sim uses (host-sim/estimate/dpauc.h,
 * ustat.h), with the same choices as dpm-sim: ties count 1/2, the tree's threshold a chosen to
 * minimize Theorem 3's bound. */
#include "mech/auc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mech/base/est_json.h"
#include "estimate/ci_flags.h"
#include "estimate/dpauc.h"
#include "estimate/ustat.h"

#define TIE_WEIGHT 0.5

/* "defined", "reason"; shift: the estimate's max_shift_one_report (a defined estimate whose
 * bound is infinite says why its bound is null). */
static void reason(jw_t *sb, int defined, const char *why, double shift)
{
    jw_raw(sb, ", \"defined\": %s, \"reason\": ", defined ? "true" : "false");
    if (defined && !isfinite(shift)) {
        jw_str(sb, COLL_UNBOUNDED_REASON);
    } else if (defined || why == NULL || why[0] == '\0') {
        jw_raw(sb, defined ? "null" : "\"undefined\"");
    } else {
        jw_str(sb, why);
    }
}

/* ---- one report's influence (bounds.h: every mechanism announces it) ------------------------ */

/* How far one more report (each count + x, x in [lo, hi]) moves the rate a / (a + b): the change
 * is (x_a b - a x_b) / (D (D + x_a + x_b)), D = a + b; infinite when D + x_a + x_b can be 0. */
static double rate_shift(double a, double b, double lo, double hi)
{
    double D = a + b, top = 0.0;
    const double x[2] = {lo, hi};
    for (int i = 0; i < 2; i++) {
        for (int j = 0; j < 2; j++) {
            top = fmax(top, fabs(x[i] * b - a * x[j]));
        }
    }
    double near = D > 0.0 ? D + 2.0 * lo : -(D + 2.0 * hi); /* |D + x_a + x_b| at its least */
    return near > 0.0 && D != 0.0 ? top / (fabs(D) * near) : INFINITY;
}

/* The trapezoid sum over points (x, y) in a fixed order moves by at most this when each point
 * moves by at most (ex, ey). */
static double trapezoid_shift(const double *x, const double *y, const double *ex, const double *ey,
                              uint32_t n)
{
    double s = 0.0;
    for (uint32_t j = 1; j < n; j++) {
        s += 0.5 * ((ex[j] + ex[j - 1]) * (fabs(y[j]) + fabs(y[j - 1]) + ey[j] + ey[j - 1]) +
                    fabs(x[j] - x[j - 1]) * (ey[j] + ey[j - 1]));
    }
    return s;
}

typedef struct {
    double x, y, ex, ey;
} dpt_t;

static int dpt_cmp(const void *a, const void *b)
{
    const dpt_t *p = a, *q = b;
    return dpm_dpauc_point_order(p->x, p->y, q->x, q->y);
}

/* dpauc: one more accepted report (each of the 4N counts + x, x in [lo, hi] = [-k, max_examples
 * + k], bounds.h) moves variant v's AUC by at most this (INFINITY: no bound). B integrates the
 * unclamped rates in threshold order: the fixed-order sum above. A clamps the counts at 0
 * (rates in [0, 1], a class total within 2k of 0 can empty its point: it may move anywhere),
 * sorts the points by (fpr, tpr) and integrates: the fixed-order sum in the current order, plus
 * for every pair of points that can change order (their fpr ranges meet) the most one swap of
 * neighbours a, b between p and q changes the sum, (y_a - y_b)(x_p + x_q - 2 x_b) / 2 + d (2 y_b
 * - y_p - y_q) / 2 <= |y_a - y_b| / 2 + d, d <= ex_a + ex_b; at most 1. */
static double dpauc_shift(const dpm_dpauc_agg_t *a, double lo, double hi, int v)
{
    dpt_t pt[DPM_DPAUC_EST_MAX_N];
    uint32_t n = a->n;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t i = n - 1u - j; /* highest threshold first, as the estimator */
        double tp = (double)a->tp[i], fp = (double)a->fp[i];
        double tn = (double)a->tn[i], fn = (double)a->fn[i];
        dpt_t *q = &pt[j];
        if (v == DPM_DPAUC_SERVER_B) {
            q->x = fp / (fp + tn);
            q->y = tp / (tp + fn);
            q->ex = rate_shift(fp, tn, lo, hi);
            q->ey = rate_shift(tp, fn, lo, hi);
            continue;
        }
        tp = fmax(tp, 0.0), fp = fmax(fp, 0.0), tn = fmax(tn, 0.0), fn = fmax(fn, 0.0);
        int empty = fp + tn == 0.0 || tp + fn == 0.0;
        q->x = empty ? 0.0 : fp / (fp + tn);
        q->y = empty ? 0.0 : tp / (tp + fn);
        /* a clamped count moves by at most max(-lo, hi) and drops by at most -lo */
        double c = fmax(-lo, hi);
        q->ex = fp + tn + 2.0 * lo > 0.0 ? fmin(1.0, c / (fp + tn + 2.0 * lo)) : 1.0;
        q->ey = tp + fn + 2.0 * lo > 0.0 ? fmin(1.0, c / (tp + fn + 2.0 * lo)) : 1.0;
        if (q->ex >= 1.0 || q->ey >= 1.0) {
            q->ex = q->ey = 1.0; /* its point may become (0, 0) */
        }
    }
    if (v == DPM_DPAUC_SERVER_A) {
        qsort(pt, n, sizeof(pt[0]), dpt_cmp);
    }
    double x[DPM_DPAUC_EST_MAX_N], y[DPM_DPAUC_EST_MAX_N], ex[DPM_DPAUC_EST_MAX_N],
        ey[DPM_DPAUC_EST_MAX_N];
    for (uint32_t j = 0; j < n; j++) {
        x[j] = pt[j].x, y[j] = pt[j].y, ex[j] = pt[j].ex, ey[j] = pt[j].ey;
    }
    double s = trapezoid_shift(x, y, ex, ey, n);
    if (v == DPM_DPAUC_SERVER_A) {
        for (uint32_t j = 0; j < n; j++) {
            for (uint32_t k = j + 1; k < n && x[k] - x[j] <= ex[j] + ex[k]; k++) {
                s += 0.5 * (fabs(y[j] - y[k]) + ey[j] + ey[k]) + ex[j] + ex[k];
            }
        }
        s = fmin(s, 1.0);
    }
    return isnan(s) ? INFINITY : s;
}

static void dpauc_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st)
{
    const dpm_dpauc_t *m = &c->mech.params.dpauc;
    double scale = (double)m->lap.scale_num / (double)m->lap.scale_den;
    jw_raw(sb, ", \"dpauc\": {\"thresholds\": %u, \"calibration\": \"%s\"", m->n,
           m->calibration == DPM_DPAUC_TIGHT ? "tight" : "published");
    coll_json_member(sb, "noise_scale", scale);
    jw_raw(sb, ", \"n\": %llu", (unsigned long long)st->reports);
    dpm_dpauc_params_t p;
    dpm_dpauc_agg_t *a = calloc(1, sizeof(*a));
    dpm_dpauc_estimate_t *e = calloc(1, sizeof(*e));
    int ok = a != NULL && e != NULL && dpm_dpauc_params_init(&p, m->n, scale) == DPM_OK &&
             dpm_dpauc_agg_init(a, m->n) == DPM_OK;
    if (ok) {
        a->reports = st->reports;
        for (uint32_t i = 0; i < m->n; i++) {
            a->tp[i] = st->vec[i];
            a->fp[i] = st->vec[COLL_VEC_DPAUC_N + i];
            a->tn[i] = st->vec[2 * COLL_VEC_DPAUC_N + i];
            a->fn[i] = st->vec[3 * COLL_VEC_DPAUC_N + i];
        }
        jw_raw(sb, ", \"sums\": {\"tp\": [");
        for (uint32_t k = 0; k < 4; k++) {
            static const char *const NAME[4] = {"tp", "fp", "tn", "fn"};
            if (k > 0) {
                jw_raw(sb, "], \"%s\": [", NAME[k]);
            }
            for (uint32_t i = 0; i < m->n; i++) {
                jw_raw(sb, "%s%lld", i ? ", " : "", (long long)st->vec[k * COLL_VEC_DPAUC_N + i]);
            }
        }
        jw_raw(sb, "]}");
    }
    jw_raw(sb, ", \"variants\": {");
    for (int v = 0; v < 2; v++) {
        jw_raw(sb, "%s\"%s\": {", v ? ", " : "", v ? "B" : "A");
        int defined =
            ok &&
            dpm_dpauc_estimate(&p, a, v ? DPM_DPAUC_SERVER_B : DPM_DPAUC_SERVER_A, e) == DPM_OK &&
            e->defined && isfinite(e->auc);
        jw_raw(sb, "\"auc\": ");
        jw_num(sb, defined ? e->auc : NAN, COLL_JSON_DIGITS);
        jw_raw(sb, ", \"small_sample\": %s", ok && e->small_sample ? "true" : "false");
        double shift = NAN;
        if (defined) {
            jw_raw(sb, ", \"fpr\": ");
            jw_nums(sb, e->fpr, e->points, COLL_JSON_DIGITS);
            jw_raw(sb, ", \"tpr\": ");
            jw_nums(sb, e->tpr, e->points, COLL_JSON_DIGITS);
            /* null: no bound (a class total within one report's reach of 0) */
            shift = dpauc_shift(a, (double)c->bounds.cell_lo, (double)c->bounds.cell_hi, v);
            coll_json_member(sb, "max_shift_one_report", shift);
        }
        reason(sb, defined,
               !ok                ? "out of memory"
               : st->reports == 0 ? "no reports"
                                  : e->reason,
               shift);
        jw_raw(sb, "}");
    }
    jw_raw(sb, "}, \"ci\": null, \"reason\": \"no interval: the DPAUC baseline has no variance "
               "estimate (dpm-sim measures its error over runs)\"}");
    free(a);
    free(e);
}

/* ustat_bins: one more accepted report (any value of the GRR domain, either public label) moves
 * the estimate exactly by the largest of these changes. The report adds 1 to one count c_v and
 * 1 to n, so the de-biased histogram h = (c - n q) / g (g = p - q) gains delta = (e_v - q 1) / g.
 *   AUC (public label): num = hp^T K hn; a positive at v adds delta^T K hn, a negative
 *     hp^T K delta; the denominator n+ n- becomes (n+ + 1) n- or n+ (n- + 1).
 *   general kernel A (symmetric): U = (h^T A h - sum_a c_a w_a) / (n (n - 1)), w_a = (A_aa -
 *     2 q R_a + q^2 T) / g^2 (R row sums, T the total); since delta^T A delta = w_v, the
 *     report makes the bracket + 2 delta^T A h = + 2 ((A h)_v - q 1^T A h) / g over (n + 1) n.
 *     Kendall's tau is U_f, the private-label AUC U_f / U_g. */
static double bins_shift(const dpm_ustat_bins_params_t *p, const dpm_ustat_bins_agg_t *a, double w,
                         double value)
{
    double g = p->p - p->q, q = p->q, best = 0.0;
    if (p->kernel == DPM_USTAT_AUC) {
        uint32_t k = p->k;
        double n[2] = {0.0, 0.0}, khn[DPM_USTAT_EST_MAX_DOMAIN] = {0.0};
        double kthp[DPM_USTAT_EST_MAX_DOMAIN] = {0.0}, hn[DPM_USTAT_EST_MAX_DOMAIN] = {0.0};
        double hp[DPM_USTAT_EST_MAX_DOMAIN] = {0.0}, s1 = 0.0, s0 = 0.0;
        for (uint32_t v = 0; v < k; v++) {
            n[0] += (double)a->count[0][v];
            n[1] += (double)a->count[1][v];
        }
        for (uint32_t v = 0; v < k; v++) {
            hn[v] = ((double)a->count[0][v] - n[0] * q) / g;
            hp[v] = ((double)a->count[1][v] - n[1] * q) / g;
        }
        double below = 0.0, above = 0.0;
        for (uint32_t v = 0; v < k; v++) { /* K hn: K_ab = [a > b] + w [a = b] */
            khn[v] = below + w * hn[v];
            below += hn[v];
            s1 += khn[v];
        }
        for (uint32_t v = k; v-- > 0;) { /* K^T hp */
            kthp[v] = above + w * hp[v];
            above += hp[v];
            s0 += kthp[v];
        }
        double base = value * n[0] * n[1];
        for (uint32_t v = 0; v < k; v++) {
            double pos = (base + (khn[v] - q * s1) / g) / (n[0] * (n[1] + 1.0));
            double neg = (base + (kthp[v] - q * s0) / g) / ((n[0] + 1.0) * n[1]);
            best = fmax(best, fmax(fabs(pos - value), fabs(neg - value)));
        }
        return best;
    }
    uint32_t d = p->domain;
    double n = (double)a->reports, U[2], T[2] = {0.0, 0.0}, sAh[2] = {0.0, 0.0};
    /* (domain >= 2: dpm_mech_init_ustat refuses less, so this is never calloc(0)) */
    // NOLINTNEXTLINE(clang-analyzer-optin.portability.UnixAPI)
    double *ah = calloc(2u * (size_t)d, sizeof(double)), h[DPM_USTAT_EST_MAX_DOMAIN];
    if (ah == NULL) {
        return NAN;
    }
    for (uint32_t v = 0; v < d; v++) {
        h[v] = ((double)a->count[0][v] - n * q) / g;
    }
    int kernels = p->kernel == DPM_USTAT_KENDALL ? 1 : 2;
    for (int kk = 0; kk < kernels; kk++) {
        double hah = 0.0, sw = 0.0, *r = ah + (size_t)kk * d;
        double rs[DPM_USTAT_EST_MAX_DOMAIN], diag[DPM_USTAT_EST_MAX_DOMAIN];
        for (uint32_t i = 0; i < d; i++) {
            rs[i] = 0.0;
            for (uint32_t j = 0; j < d; j++) {
                double x = dpm_ustat_bins_kernel(p, i, j, kk, w);
                r[i] += x * h[j];
                rs[i] += x;
            }
            diag[i] = dpm_ustat_bins_kernel(p, i, i, kk, w);
            T[kk] += rs[i];
            hah += h[i] * r[i];
            sAh[kk] += r[i];
        }
        for (uint32_t i = 0; i < d; i++) {
            sw += (double)a->count[0][i] * (diag[i] - 2.0 * q * rs[i] + q * q * T[kk]) / (g * g);
        }
        U[kk] = hah - sw; /* the bracket; U = bracket / (n (n - 1)) */
    }
    for (uint32_t v = 0; v < d; v++) {
        double f = (U[0] + 2.0 * (ah[v] - q * sAh[0]) / g) / ((n + 1.0) * n);
        double next = f;
        if (kernels == 2) {
            next = f / ((U[1] + 2.0 * (ah[d + v] - q * sAh[1]) / g) / ((n + 1.0) * n));
        }
        best = fmax(best, fabs(next - value));
    }
    free(ah);
    return isnan(best) ? INFINITY : best;
}

/* ustat_tree: the traversal discards nodes by a data-dependent rule, so no formula bounds it;
 * one more report is one of the finite set (label, level, row, value) the checks accept, and
 * each is tried (2^(depth + 3) estimates at most). NaN if memory runs out. */
static double tree_shift(const dpm_ustat_tree_params_t *p, const dpm_ustat_tree_agg_t *a,
                         const dpm_ustat_tree_opts_t *o, double value)
{
    dpm_ustat_tree_agg_t b;
    memset(&b, 0, sizeof(b));
    if (dpm_ustat_tree_agg_init(&b, p) != DPM_OK) {
        return NAN;
    }
    size_t nodes = (size_t)2 << p->depth;
    int64_t *s0 = b.sums[0], *s1 = b.sums[1];
    double best = 0.0;
    for (uint32_t label = 0; label < 2; label++) {
        for (uint32_t l = 1; l <= p->depth; l++) {
            int grr = l <= p->grr_levels;
            uint32_t rows = grr ? 1u : 1u << l, values = grr ? 1u << l : 2u;
            for (uint32_t row = 0; row < rows; row++) {
                for (uint32_t v = 0; v < values; v++) {
                    b = *a; /* the counts; the sums into b's own arrays */
                    b.sums[0] = s0;
                    b.sums[1] = s1;
                    memcpy(s0, a->sums[0], nodes * sizeof(int64_t));
                    memcpy(s1, a->sums[1], nodes * sizeof(int64_t));
                    dpm_ustat_tree_estimate_t e;
                    if (dpm_ustat_tree_agg_add(&b, label, l, row, v) != DPM_OK ||
                        dpm_ustat_tree_estimate(p, &b, o, &e) != DPM_OK) {
                        continue;
                    }
                    best = fmax(best, e.est.defined ? fabs(e.est.value - value) : INFINITY);
                }
            }
        }
    }
    b.sums[0] = s0;
    b.sums[1] = s1;
    dpm_ustat_tree_agg_free(&b);
    return best;
}

static void ustat_est_json(jw_t *sb, const dpm_ustat_estimate_t *e, const char *what, int interval,
                           unsigned flags)
{
    coll_json_member(sb, what, e->defined ? e->value : NAN);
    coll_json_member(sb, "value_clipped", e->defined ? e->value_clipped : NAN);
    coll_json_member(sb, "sd", e->defined ? e->sd : NAN);
    jw_raw(sb, ", \"ci\": ");
    if (e->defined && interval && isfinite(e->ci_lo) && isfinite(e->ci_hi)) {
        jw_raw(sb, "[");
        jw_num(sb, e->ci_lo, COLL_JSON_DIGITS);
        jw_raw(sb, ", ");
        jw_num(sb, e->ci_hi, COLL_JSON_DIGITS);
        jw_raw(sb, "]");
    } else {
        jw_raw(sb, "null");
    }
    coll_ci_json(sb, "ci", e->defined ? flags : DPM_CI_SMALL_N);
    coll_json_member(sb, "n_pos", e->defined ? e->n_pos : NAN);
    coll_json_member(sb, "n_neg", e->defined ? e->n_neg : NAN);
    jw_raw(sb, ", \"small_sample\": %s", e->small_sample ? "true" : "false");
}

static void bins_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                      double confidence)
{
    static const char *const KERNEL[] = {"auc", "auc_private_label", "kendall"};
    const dpm_ustat_bins_t *m = &c->mech.params.ustat_bins;
    jw_raw(sb, ", \"ustat_bins\": {\"kernel\": \"%s\", \"k\": %u, \"n\": %llu",
           KERNEL[m->kernel <= DPM_USTAT_KENDALL ? m->kernel : 0], m->k,
           (unsigned long long)st->reports);
    dpm_ustat_bins_params_t p;
    dpm_ustat_bins_agg_t *a = calloc(1, sizeof(*a));
    dpm_ustat_estimate_t e;
    memset(&e, 0, sizeof(e));
    const char *why = "out of memory";
    if (a != NULL &&
        dpm_ustat_bins_params_init(&p, m->kernel, m->k, m->grr.keep, m->grr.other) == DPM_OK &&
        dpm_ustat_bins_agg_init(a, p.domain) == DPM_OK) {
        for (uint32_t l = 0; l < 2; l++) {
            for (uint32_t v = 0; v < p.domain; v++) {
                int64_t x = st->vec[l * DPM_MAX_GRR_K + v];
                a->count[l][v] = x > 0 ? (uint64_t)x : 0;
                a->reports += a->count[l][v];
            }
        }
        why = dpm_ustat_bins_estimate(&p, a, TIE_WEIGHT, confidence, &e) == DPM_OK
                  ? e.reason
                  : "the estimator refused these sums";
    }
    const char *what = m->kernel == DPM_USTAT_KENDALL ? "tau" : "auc";
    jw_raw(sb, ", \"estimate\": \"%s\"", m->kernel == DPM_USTAT_KENDALL ? "kendall_tau_a" : "auc");
    ustat_est_json(sb, &e, what, 1, e.ci_flags);
    coll_json_member(sb, "events", e.defined ? e.events : NAN);
    double shift = e.defined && isfinite(e.value) ? bins_shift(&p, a, TIE_WEIGHT, e.value) : NAN;
    coll_json_member(sb, "max_shift_one_report", shift);
    reason(sb, e.defined && isfinite(e.value), st->reports == 0 ? "no reports" : why, shift);
    jw_raw(sb, "}");
    free(a);
}

static void tree_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                      double confidence)
{
    const dpm_ustat_tree_t *m = &c->mech.params.ustat_tree;
    jw_raw(sb, ", \"ustat_tree\": {\"depth\": %u, \"grr_levels\": %u, \"n\": %llu", m->depth,
           m->grr_levels, (unsigned long long)st->reports);
    dpm_ustat_tree_params_t p;
    dpm_ustat_tree_agg_t a;
    memset(&a, 0, sizeof(a));
    dpm_ustat_tree_estimate_t e;
    memset(&e, 0, sizeof(e));
    const char *why = "the collector's tree is smaller than this campaign's";
    if (m->depth <= COLL_TREE_MAX_DEPTH && dpm_ustat_tree_params_init(&p, m) == DPM_OK &&
        dpm_ustat_tree_agg_init(&a, &p) == DPM_OK) {
        for (uint32_t cls = 0; cls < 2; cls++) {
            for (uint32_t l = 1; l <= m->depth; l++) {
                int64_t r = st->vec[cls * COLL_VEC_TREE_LEVELS + l];
                a.level_reports[cls][l] = r > 0 ? (uint64_t)r : 0;
                a.reports[cls] += a.level_reports[cls][l];
                uint32_t base = (l <= m->grr_levels ? COLL_VEC_TREE_GRR : COLL_VEC_TREE_HAD) +
                                cls * COLL_VEC_TREE_NODES;
                for (uint32_t u = 0; u < (1u << l); u++) {
                    a.sums[cls][(1u << l) + u] = st->vec[base + (1u << l) + u];
                }
            }
        }
        dpm_ustat_tree_opts_t o = {DPM_USTAT_TREE_CHOOSE_A, 0.0, TIE_WEIGHT};
        why = dpm_ustat_tree_estimate(&p, &a, &o, &e) == DPM_OK
                  ? e.est.reason
                  : "the estimator refused these sums";
    }
    double shift = NAN;
    if (e.est.defined && isfinite(e.est.value)) {
        dpm_ustat_tree_opts_t o = {DPM_USTAT_TREE_CHOOSE_A, 0.0, TIE_WEIGHT};
        shift = tree_shift(&p, &a, &o, e.est.value);
    }
    dpm_ustat_tree_agg_free(&a);
    /* Theorem 3 bounds the mean squared error: Chebyshev (Markov on the squared error) gives an
     * interval of at least `confidence`, value -+ sqrt(bound / (1 - confidence)). */
    int defined = e.est.defined && isfinite(e.est.value);
    double half = sqrt(e.mse_bound / (1.0 - confidence));
    e.est.ci_lo = e.est.value - half;
    e.est.ci_hi = e.est.value + half;
    jw_raw(sb, ", \"estimate\": \"auc\", \"ci_kind\": \"chebyshev_theorem3\"");
    ustat_est_json(sb, &e.est, "auc", e.mse_bound > 0.0,
                   DPM_CI_CONSERVATIVE | (e.est.small_sample ? DPM_CI_SMALL_N : 0u));
    coll_json_member(sb, "a", defined ? e.a : NAN);
    coll_json_member(sb, "mse_bound", defined ? e.mse_bound : NAN);
    coll_json_member(sb, "max_shift_one_report", shift);
    reason(sb, defined, st->reports == 0 ? "no reports" : why, shift);
    jw_raw(sb, "}");
}

/* The report's vector sums (agg_auc.h). */
static int delta_add(coll_deltas_t *ds, const dpm_report_t *rep, uint32_t stored_group)
{
    (void)stored_group;
    coll_delta_t *d = coll_delta_for(ds, rep->campaign_id, rep->period, 2, 0);
    if (d == NULL || coll_vec_add_report(&ds->vec, rep) != 0) {
        return -1;
    }
    d->reports++;
    return 0;
}

static void dpauc_estimate_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                                const host_json_ctx_t *q)
{
    (void)q;
    host_no_metrics_json(sb);
    if (st->vec_len == COLL_VEC_LEN) {
        dpauc_json(sb, c, st);
    }
}

static void bins_estimate_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                               const host_json_ctx_t *q)
{
    host_no_metrics_json(sb);
    if (st->vec_len == COLL_VEC_LEN) {
        bins_json(sb, c, st, q->confidence);
    }
}

static void tree_estimate_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                               const host_json_ctx_t *q)
{
    host_no_metrics_json(sb);
    if (st->vec_len == COLL_VEC_LEN) {
        tree_json(sb, c, st, q->confidence);
    }
}

static const char *bins_unit(const dpm_campaign_t *cp)
{
    return cp->ustat_kernel == DPM_USTAT_AUC_PRIVATE_LABEL
               ? "one example's (score, label) pair (local DP)"
           : cp->ustat_kernel == DPM_USTAT_AUC
               ? "one example's score (local DP); its label is public"
               : "one example's pair of scores (local DP)";
}

static void dpauc_bounds_json(jw_t *sb, const coll_campaign_t *c)
{
    const coll_bounds_t *b = &c->bounds;
    jw_raw(sb, ", \"max_examples\": %u, \"count\": [%lld, %lld]", b->max_examples,
           (long long)b->cell_lo, (long long)b->cell_hi);
}

static const char *const kDpaucCompare[] = {"dpauc.n", "dpauc.sums", "dpauc.variants.A.auc",
                                            "dpauc.variants.B.auc", NULL};
static const char *const kBinsCompare[] = {"ustat_bins.n",     "ustat_bins.value_clipped",
                                           "ustat_bins.sd",    "ustat_bins.n_pos",
                                           "ustat_bins.n_neg", NULL};
static const char *const kTreeCompare[] = {"ustat_tree.n", "ustat_tree.auc", "ustat_tree.mse_bound",
                                           NULL};

#define AUC_MODULE(NAME, ID, FLAGS, UNIT, UNIT_FOR, BOUNDS, ESTIMATE, COMPARE)                     \
    {                                                                                              \
        .name = (NAME), .id = (ID), .flags = (FLAGS), .trust_model = HOST_TRUST_LOCAL_DP,          \
        .privacy_unit = (UNIT), .privacy_unit_for = (UNIT_FOR), .state_init = coll_state_init_vec, \
        .delta_add = delta_add, .bounds_json = (BOUNDS), .estimate_json = (ESTIMATE),              \
        .compare = (COMPARE),                                                                      \
    }

const host_mech_t host_mech_dpauc =
    AUC_MODULE("dpauc", DPM_MECH_ID_DPAUC, HOST_MECH_MAX_EXAMPLES,
               "one example's label (label-DP; the published calibration spends half the eps)",
               NULL, dpauc_bounds_json, dpauc_estimate_json, kDpaucCompare);
const host_mech_t host_mech_ustat_bins =
    AUC_MODULE("ustat_bins", DPM_MECH_ID_USTAT_BINS, 0u, NULL, bins_unit, NULL, bins_estimate_json,
               kBinsCompare);
const host_mech_t host_mech_ustat_tree = AUC_MODULE(
    "ustat_tree", DPM_MECH_ID_USTAT_TREE, 0u, "one example's score (local DP); its label is public",
    NULL, NULL, tree_estimate_json, kTreeCompare);
