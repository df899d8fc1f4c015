/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group AP and ECE and their comparisons (see roc_groups_prc.h). */
#include "estimate/roc_groups_prc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "estimate/ci_flags.h"
#include "estimate/pr_calibration.h"

enum { AP, ECE, NMETRICS };

#define CELLS (2 * DPM_ROC_GROUPS_MAX_BINS)

typedef struct {
    dpm_roc_groups_lin_t *lin;
    uint32_t G, B;
    size_t c;
    double z, confidence;
    double mid[DPM_ROC_GROUPS_MAX_BINS];
    double *w;                                        /* G x c scratch */
    double grad[NMETRICS][DPM_ROC_GROUPS_MAX][CELLS]; /* per metric and group */
} work_t;

/* The variance of metric m's linearization on group g, minus group h's when h != g. */
static double var_of(work_t *k, int m, uint32_t g, uint32_t h, double *jump)
{
    memset(k->w, 0, k->G * k->c * sizeof(double));
    memcpy(k->w + g * k->c, k->grad[m][g], k->c * sizeof(double));
    for (size_t i = 0; h != g && i < k->c; i++) {
        k->w[h * k->c + i] = -k->grad[m][h][i];
    }
    return dpm_roc_groups_lin_var(k->lin, k->w, jump);
}

/* The variance of v^T H_g (v: c cells). */
static double var_vec(work_t *k, uint32_t g, const double *v)
{
    memset(k->w, 0, k->G * k->c * sizeof(double));
    memcpy(k->w + g * k->c, v, k->c * sizeof(double));
    return dpm_roc_groups_lin_var(k->lin, k->w, NULL);
}

static void undefined(dpm_prc_group_t *e, const char *why)
{
    memset(e, 0, sizeof(*e));
    e->reason = why;
    e->sd = e->ci_lo = e->ci_hi = e->sd_total = e->ci_total_lo = e->ci_total_hi = NAN;
    e->flags = e->total_flags = DPM_CI_SMALL_N;
}

/* A group's AP or ECE starts alike: undefined for why when its point estimate is not finite (0),
 * else defined at est with nothing else set yet (1). */
static int start(dpm_prc_group_t *e, double est, const char *why)
{
    if (!isfinite(est)) {
        undefined(e, why);
        return 0;
    }
    memset(e, 0, sizeof(*e));
    e->defined = 1;
    e->reason = "";
    e->est = est;
    return 1;
}

/* One interval of an estimate with variance var and bias bound: its sd, ends and flags (flags
 * already holding the class noise). */
static void interval(const work_t *k, const dpm_prc_group_t *e, double var, double bound,
                     double *sd, double *lo, double *hi, unsigned *flags, double *events)
{
    if (!(var > 0.0)) {
        *sd = *lo = *hi = NAN;
        *flags |= DPM_CI_SMALL_N;
        return;
    }
    *sd = sqrt(var);
    if (bound > DPM_PRC_BOUND_NEGLIGIBLE * *sd) {
        *flags |= DPM_CI_ABS_BIAS;
    }
    unsigned fl = 0; /* its DPM_CI_BOUND speaks of interpolation: ABS_BIAS says it here */
    double h = dpm_ci_halfwidth(var, e->jump, bound, k->confidence, events, &fl);
    *flags |= fl & (unsigned)DPM_CI_FEW_EVENTS;
    *lo = fmax(e->est - h, 0.0);
    *hi = fmin(e->est + h, 1.0);
}

/* Both intervals of a defined estimate: the examples' (noise var) and the model's (noise +
 * the sampling of the group's examples, grad: the metric's gradient on H_g). */
static void finish(const work_t *k, uint32_t g, const double *grad, dpm_prc_group_t *e, double var,
                   double jump)
{
    const double *pos = dpm_roc_groups_lin_hist(k->lin, g);
    e->jump = jump;
    e->var_sampling = dpm_prc_sampling_var(grad, pos, pos + k->B, k->B);
    e->total_flags = e->flags;
    interval(k, e, var, e->bound, &e->sd, &e->ci_lo, &e->ci_hi, &e->flags, &e->events);
    interval(k, e, var + e->var_sampling, e->bound_total, &e->sd_total, &e->ci_total_lo,
             &e->ci_total_hi, &e->total_flags, NULL);
}

static void group_ap(work_t *k, uint32_t g, dpm_prc_group_t *e)
{
    uint32_t B = k->B;
    const double *pos = dpm_roc_groups_lin_hist(k->lin, g), *neg = pos + B;
    double ap = dpm_prc_ap_of(pos, neg, B, k->grad[AP][g]);
    if (!start(e, ap, "the group's estimated positives are not above 0 (too few reports)")) {
        return;
    }
    /* Fieller's g: P_g's relative variance and the T_j's weighted by their share of the AP */
    double v[CELLS] = {0.0}, P = 0.0, rel[2] = {0.0, 0.0}, T = 0.0;
    for (uint32_t b = 0; b < B; b++) {
        P += pos[b];
        v[b] = 1.0;
    }
    rel[0] = var_vec(k, g, v) / (P * P);
    memset(v, 0, sizeof(v));
    for (uint32_t j = B; j-- > 0;) {
        v[j] = v[B + j] = 1.0; /* T_j = the cells at or above j, both classes */
        T += pos[j] + neg[j];
        if (pos[j] <= 0.0) {
            continue;
        }
        rel[1] += T > 0.0 ? pos[j] / P * var_vec(k, g, v) / (T * T) : INFINITY;
    }
    e->flags = dpm_ci_class_noise(rel, 2, k->z, NULL);
    double jump = 0.0, var = var_of(k, AP, g, g, &jump);
    finish(k, g, k->grad[AP][g], e, var, jump);
}

static void group_ece(work_t *k, uint32_t g, dpm_prc_group_t *e)
{
    uint32_t B = k->B;
    const double *pos = dpm_roc_groups_lin_hist(k->lin, g), *neg = pos + B;
    double ece = dpm_prc_ece_of(pos, neg, k->mid, B, k->grad[ECE][g]);
    if (!start(e, ece, "the group's estimated examples are not above 0 (too few reports)")) {
        return;
    }
    double v[CELLS] = {0.0}, M = 0.0, bound = 0.0, bound_total = 0.0;
    for (uint32_t b = 0; b < B; b++) { /* each bin's a_b and its sd: the bias bounds */
        double m = k->mid[b], a = (1.0 - m) * pos[b] - m * neg[b];
        memset(v, 0, sizeof(v));
        v[b] = 1.0 - m;
        v[B + b] = -m;
        double var = fmax(var_vec(k, g, v), 0.0), sd = sqrt(var);
        bound += dpm_prc_abs_bias(fmax(fabs(a) - DPM_PRC_NEAR_ZERO_SD * sd, 0.0), sd);
        double sd_t = sqrt(var + (1.0 - m) * (1.0 - m) * fmax(pos[b], 0.0) +
                           m * m * fmax(neg[b], 0.0)); /* and the sampling (pr_calibration.h) */
        bound_total += dpm_prc_abs_bias(fmax(fabs(a) - DPM_PRC_NEAR_ZERO_SD * sd_t, 0.0), sd_t);
        M += pos[b] + neg[b];
    }
    for (size_t i = 0; i < k->c; i++) {
        v[i] = 1.0;
    }
    double rel = var_vec(k, g, v) / (M * M);
    e->bound = bound / M;
    e->bound_total = bound_total / M;
    e->flags = dpm_ci_class_noise(&rel, 1, k->z, NULL);
    double jump = 0.0, var = var_of(k, ECE, g, g, &jump);
    finish(k, g, k->grad[ECE][g], e, var, jump);
}

/* The flags under which a group's interval is outside the normal law the pairwise module draws
 * its critical values from (the Bonferroni bounds then), and those with no claim at all. */
#define NOT_NORMAL (DPM_CI_FEW_EVENTS | DPM_CI_ABS_BIAS | DPM_CI_BOUND)

/* The joint normal law: every pair at once by max-|t|, the logarithms for the ratio; cov: the
 * estimates' covariance (G x G, row-major). */
static void compare_normal(uint32_t G, double confidence, const dpm_prc_group_t *e,
                           const double *cov, dpm_prc_compare_t *out)
{
    dpm_pairwise_in_t *d = calloc(2, sizeof(*d)); /* the values, then their logarithms */
    dpm_pairwise_t *pw = calloc(1, sizeof(*pw));
    if (d == NULL || pw == NULL) {
        free(d), free(pw);
        out->reason = out->ratio_reason = "out of memory";
        return;
    }
    d[0].d = G;
    int positive = 1;
    for (uint32_t g = 0; g < G; g++) {
        d[0].valid[g] = 1;
        d[0].est[g] = e[g].est;
        for (uint32_t h = 0; h < G; h++) {
            d[0].cov[g][h] = cov[g * G + h];
        }
        positive &= e[g].est > 0.0;
    }
    if (dpm_pairwise_compare(&d[0], confidence, pw) == DPM_OK && pw->largest_defined) {
        out->defined = 1;
        out->method = "max_t";
        out->flags = DPM_CI_CONSERVATIVE; /* the largest's; the pairs' own are nominal */
        out->npairs = pw->npairs;
        for (uint32_t i = 0; i < pw->npairs; i++) {
            const dpm_pairwise_pair_t *q = &pw->pair[i];
            out->pair[i] = (dpm_prc_pair_t){q->g, q->h, q->diff, q->lo, q->hi, q->distinguishable};
        }
        const dpm_pairwise_pair_t *q = &pw->pair[pw->largest_pair];
        out->difference = pw->largest_abs;
        out->difference_lo = pw->largest_lo;
        out->difference_hi = pw->largest_hi;
        out->difference_g = q->diff >= 0.0 ? q->g : q->h; /* the larger first */
        out->difference_h = q->diff >= 0.0 ? q->h : q->g;
    } else {
        out->reason = "the estimated covariance gives no interval for the largest difference";
    }
    if (positive) { /* Cov(log a, log b) = Cov(a, b) / (a b) */
        d[1] = d[0];
        for (uint32_t g = 0; g < G; g++) {
            d[1].est[g] = log(e[g].est);
            for (uint32_t h = 0; h < G; h++) {
                d[1].cov[g][h] = d[0].cov[g][h] / (e[g].est * e[h].est);
            }
        }
    }
    if (positive && dpm_pairwise_compare(&d[1], confidence, pw) == DPM_OK && pw->largest_defined) {
        const dpm_pairwise_pair_t *q = &pw->pair[pw->largest_pair];
        out->ratio_defined = 1;
        out->ratio = exp(-pw->largest_abs);
        out->ratio_lo = exp(-pw->largest_hi);
        out->ratio_hi = exp(-pw->largest_lo);
        out->ratio_g = q->diff <= 0.0 ? q->g : q->h; /* the smaller over the larger */
        out->ratio_h = q->diff <= 0.0 ? q->h : q->g;
    } else {
        out->ratio_reason = positive ? "the log ratios give no interval for their largest"
                                     : "a group's estimate is not above 0: no ratio";
    }
    free(d), free(pw);
}

/* Bonferroni bounds from the groups' own (widened) intervals at level 1 - (1 - c) / G. */
static void compare_bounds(uint32_t G, double confidence, const dpm_prc_group_t *e,
                           dpm_prc_compare_t *out)
{
    double lo[DPM_ROC_GROUPS_MAX] = {0.0}, hi[DPM_ROC_GROUPS_MAX] = {0.0};
    double level = 1.0 - (1.0 - confidence) / G;
    uint32_t top = 0, bottom = 0;
    for (uint32_t g = 0; g < G; g++) {
        unsigned fl = 0;
        double h = dpm_ci_halfwidth(e[g].sd * e[g].sd, e[g].jump, e[g].bound, level, NULL, &fl);
        lo[g] = fmax(e[g].est - h, 0.0);
        hi[g] = fmin(e[g].est + h, 1.0);
        top = e[g].est > e[top].est ? g : top;
        bottom = e[g].est < e[bottom].est ? g : bottom;
    }
    out->defined = 1;
    out->method = "bonferroni";
    out->flags = DPM_CI_CONSERVATIVE;
    out->npairs = 0;
    double max_lo = 0.0, max_hi = 0.0, min_lo = 1.0, min_hi = 1.0;
    for (uint32_t g = 0; g < G; g++) {
        max_lo = fmax(max_lo, lo[g]), max_hi = fmax(max_hi, hi[g]);
        min_lo = fmin(min_lo, lo[g]), min_hi = fmin(min_hi, hi[g]);
        for (uint32_t h = g + 1; h < G; h++) {
            dpm_prc_pair_t *q = &out->pair[out->npairs++];
            *q = (dpm_prc_pair_t){g, h, e[g].est - e[h].est, lo[g] - hi[h], hi[g] - lo[h], 0};
            q->distinguishable = q->lo > 0.0 || q->hi < 0.0;
        }
    }
    out->difference = e[top].est - e[bottom].est;
    out->difference_lo = fmax(max_lo - min_hi, 0.0);
    out->difference_hi = max_hi - min_lo;
    out->difference_g = top, out->difference_h = bottom;
    if (max_hi > 0.0 && e[bottom].est > 0.0) {
        out->ratio_defined = 1;
        out->ratio = e[bottom].est / e[top].est;
        out->ratio_lo = min_lo / max_hi;
        out->ratio_hi = max_lo > 0.0 ? fmin(min_hi / max_lo, 1.0) : 1.0;
        out->ratio_g = bottom, out->ratio_h = top;
    } else {
        out->ratio_reason = "a group's estimate is not above 0: no ratio";
    }
}

void dpm_prc_compare_groups(const dpm_prc_group_t *e, uint32_t groups, const double *cov,
                            double confidence, dpm_prc_compare_t *out)
{
    memset(out, 0, sizeof(*out));
    out->reason = out->ratio_reason = out->method = "";
    int normal = 1;
    for (uint32_t g = 0; g < groups; g++) {
        if (!e[g].defined || !isfinite(e[g].sd) || (e[g].flags & DPM_CI_NO_CLAIM)) {
            out->reason = out->ratio_reason =
                "a group's interval is undefined or has no coverage claim (too few reports for "
                "this noise): nothing to compare";
            return;
        }
        normal &= !(e[g].flags & NOT_NORMAL);
    }
    double diag[DPM_ROC_GROUPS_MAX * DPM_ROC_GROUPS_MAX] = {0.0};
    if (cov == NULL) { /* independent groups */
        for (uint32_t g = 0; g < groups; g++) {
            diag[g * groups + g] = e[g].sd * e[g].sd;
        }
        cov = diag;
    }
    if (normal) {
        compare_normal(groups, confidence, e, cov, out);
    } else {
        compare_bounds(groups, confidence, e, out);
    }
}

/* Metric m's comparisons, with the covariance of the groups' estimates from the same
 * linearization: Cov(g, h) = (Var_g + Var_h - Var(g - h)) / 2, nonzero as the GRR mixes groups.
 * The model's (total) adds each group's sampling variance on the diagonal: the groups' examples
 * are drawn apart (other devices). */
static void compare(work_t *k, int m, const dpm_prc_group_t *e, dpm_prc_compare_t *out,
                    dpm_prc_compare_t *total)
{
    double cov[DPM_ROC_GROUPS_MAX * DPM_ROC_GROUPS_MAX] = {0.0};
    uint32_t G = k->G;
    for (uint32_t g = 0; g < G; g++) {
        cov[g * G + g] = e[g].defined && isfinite(e[g].sd) ? e[g].sd * e[g].sd : 0.0;
    }
    for (uint32_t g = 0; g < G; g++) {
        for (uint32_t h = g + 1; h < G && e[g].defined && e[h].defined; h++) {
            double vgh = var_of(k, m, g, h, NULL);
            cov[g * G + h] = cov[h * G + g] = (cov[g * G + g] + cov[h * G + h] - vgh) / 2.0;
        }
    }
    dpm_prc_compare_groups(e, G, cov, k->confidence, out);
    if (total == NULL) {
        return;
    }
    dpm_prc_group_t t[DPM_ROC_GROUPS_MAX];
    for (uint32_t g = 0; g < G; g++) {
        dpm_prc_group_total(&e[g], &t[g]);
        cov[g * G + g] += e[g].var_sampling;
    }
    dpm_prc_compare_groups(t, G, cov, k->confidence, total);
}

void dpm_prc_group_total(const dpm_prc_group_t *e, dpm_prc_group_t *out)
{
    *out = *e;
    out->sd = e->sd_total;
    out->ci_lo = e->ci_total_lo;
    out->ci_hi = e->ci_total_hi;
    out->bound = e->bound_total;
    out->flags = e->total_flags;
    out->var_sampling = 0.0;
}

void dpm_prc_group_of(const dpm_prc_estimate_t *x, int ece, dpm_prc_group_t *out)
{
    if (!x->valid) {
        undefined(out, "the estimated positives or negatives are not above 0 (too few reports)");
        return;
    }
    memset(out, 0, sizeof(*out));
    out->defined = 1;
    out->reason = "";
    out->est = ece ? x->ece : x->ap_raw;
    out->sd = sqrt(ece ? x->ece_var_noise : x->ap_var_noise);
    out->ci_lo = ece ? x->ece_ci_lo : x->ap_ci_lo;
    out->ci_hi = ece ? x->ece_ci_hi : x->ap_ci_hi;
    out->bound = ece ? x->ece_bound : 0.0;
    out->events = INFINITY;
    out->jump = 0.0; /* pr_calibration.h's flags already say whether events are few */
    out->flags = ece ? x->ece_flags : x->ap_flags;
    out->var_sampling = ece ? x->ece_var_sampling : x->ap_var_sampling;
    out->sd_total =
        sqrt(ece ? x->ece_var_noise + x->ece_var_sampling : x->ap_var_noise + x->ap_var_sampling);
    out->ci_total_lo = ece ? x->ece_ci_total_lo : x->ap_ci_total_lo;
    out->ci_total_hi = ece ? x->ece_ci_total_hi : x->ap_ci_total_hi;
    out->bound_total = ece ? x->ece_bound_total : 0.0;
    out->total_flags = ece ? x->ece_total_flags : x->ap_total_flags;
}

dpm_status_t dpm_roc_groups_prc(const dpm_roc_groups_params_t *p, const dpm_roc_groups_agg_t *a,
                                double confidence, int totals, dpm_roc_groups_prc_t *out)
{
    if (p == NULL || a == NULL || out == NULL || p->groups != a->groups || p->bins != a->bins ||
        p->groups < 2 || p->groups > DPM_ROC_GROUPS_MAX ||
        !(confidence > 0.0 && confidence < 1.0)) {
        return DPM_ERR_PARAM;
    }
    memset(out, 0, sizeof(*out));
    out->groups = p->groups;
    out->bins = p->bins;
    if (a->reports == 0) {
        for (uint32_t g = 0; g < p->groups; g++) {
            undefined(&out->ap[g], "no reports");
            undefined(&out->ece[g], "no reports");
        }
        dpm_prc_compare_t *cs[4] = {&out->ap_compare, &out->ece_compare, &out->ap_compare_total,
                                    &out->ece_compare_total};
        for (int m = 0; m < 4; m++) {
            cs[m]->reason = cs[m]->ratio_reason = "no reports";
            cs[m]->method = "";
        }
        return DPM_OK;
    }
    work_t *k = calloc(1, sizeof(*k));
    if (k != NULL) {
        k->w = calloc((size_t)p->groups * 2u * p->bins, sizeof(double));
    }
    if (k == NULL || k->w == NULL || dpm_roc_groups_lin_open(p, a, confidence, &k->lin) != DPM_OK) {
        if (k != NULL) {
            free(k->w);
        }
        free(k);
        return DPM_ERR_BUFFER;
    }
    k->G = p->groups;
    k->B = p->bins;
    k->c = 2u * (size_t)p->bins;
    k->confidence = confidence;
    k->z = prob_norm_quantile(0.5 + confidence / 2.0);
    dpm_prc_midpoints(p->width, p->bins, k->mid);
    for (uint32_t g = 0; g < k->G; g++) {
        group_ap(k, g, &out->ap[g]);
        group_ece(k, g, &out->ece[g]);
    }
    compare(k, AP, out->ap, &out->ap_compare, totals ? &out->ap_compare_total : NULL);
    compare(k, ECE, out->ece, &out->ece_compare, totals ? &out->ece_compare_total : NULL);
    for (int m = 0; !totals && m < 2; m++) {
        dpm_prc_compare_t *c = m ? &out->ece_compare_total : &out->ap_compare_total;
        c->reason = c->ratio_reason = "not computed (totals = 0)";
        c->method = "";
    }
    dpm_roc_groups_lin_close(k->lin);
    free(k->w);
    free(k);
    return DPM_OK;
}
