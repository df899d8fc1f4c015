/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group roc_hist estimates as JSON (format in roc_groups.h). */
#include "mech/roc_groups.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mech/base/agg_rocg.h"
#include "mech/roc_hist.h"
#include "mech/base/est_json.h"
#include "mech/base/pairwise_json.h"
#include "common/err.h"
#include "estimate/roc_groups.h"
#include "estimate/ci_flags.h"
#include "estimate/roc_groups_prc.h"

/* The pooled histogram sums of all groups, for the "roc" member. */
static void pooled_sums(const coll_campaign_t *c, const coll_campaign_state_t *st,
                        dpm_roc_agg_t *pooled)
{
    const dpm_roc_hist_t *rh = &c->mech.params.roc_hist;
    uint32_t G = rh->groups, B = rh->bins.count, w = (B + 1u) * (2u * B + 1u);
    dpm_roc_agg_init(pooled, B);
    if (st->vec_len != COLL_VEC_LEN || coll_rocg_len(G, B) > COLL_VEC_LEN) {
        return;
    }
    for (uint32_t g = 0; g < G; g++) {
        const int64_t *x = st->vec + (size_t)g * w;
        pooled->reports += x[0] > 0 ? (uint64_t)x[0] : 0u;
        for (uint32_t b = 0; b < B; b++) {
            pooled->pos[b] += x[1 + b];
            pooled->neg[b] += x[1 + B + b];
        }
    }
}

static void interval(jw_t *sb, const char *key, int valid, double lo, double hi)
{
    jw_raw(sb, ", \"%s\": ", key);
    if (valid && isfinite(lo) && isfinite(hi)) {
        jw_raw(sb, "[");
        jw_num(sb, lo, COLL_JSON_DIGITS);
        jw_raw(sb, ", ");
        jw_num(sb, hi, COLL_JSON_DIGITS);
        jw_raw(sb, "]");
    } else {
        jw_raw(sb, "null");
    }
}

/* "defined", "reason": a defined estimate whose interval is missing says why too. */
static void reason(jw_t *sb, int defined, const char *why, int ci_valid, double shift)
{
    jw_raw(sb, ", \"defined\": %s, \"reason\": ", defined ? "true" : "false");
    if (!defined) {
        jw_str(sb, why != NULL && why[0] != '\0' ? why : "undefined");
    } else if (!ci_valid) {
        jw_str(sb, "the variance estimate is not positive: no interval (too few reports)");
    } else if (!isfinite(shift)) {
        jw_str(sb, COLL_UNBOUNDED_REASON);
    } else {
        jw_raw(sb, "null");
    }
}

/* One report's largest move of each group's AUC (bounds.h's derivation, per group): a report
 * reported in group r adds alpha y to every group's histogram H_g (alpha = a1 = (1 - Q) / (P -
 * Q) for g = r, a0 = -Q / (P - Q) for the others) and (alpha^2 - alpha) of its own products to
 * the diagonal corrections, which cancel alpha's square: with the group's pos, neg, totals P,
 * N, corrected pair count den and AUC A, and u, v the report's pos and neg cells (L1 norm and
 * |sum| at most L = class_l1_max),
 *     num' - A den' ... = alpha [u^T (K neg - A N 1) + (K^T pos - A P 1)^T v + u^T (K - A) v],
 *     den' - den = alpha (U (N + V) + P V),
 * so |A' - A| <= |alpha| L (|K neg - A N|_inf + |K^T pos - A P|_inf + L max(|A|, |1 - A|)) /
 * (den - |alpha| L (|P| + |N| + L)), infinite when that can reach 0. shift[g][0] for a report
 * in g (a1), shift[g][1] for one in another group (|a0|). */
static void rocg_shifts(const dpm_roc_groups_params_t *p, const dpm_roc_groups_agg_t *a,
                        const dpm_roc_groups_estimate_t *e, double L, double shift[][2])
{
    uint32_t G = p->groups, B = p->bins;
    size_t c = 2u * (size_t)B;
    double gq = p->P - p->Q, a1 = (1.0 - p->Q) / gq, a0 = -p->Q / gq;
    double T[2 * DPM_ROC_GROUPS_MAX_BINS] = {0.0}, qr[DPM_ROC_GROUPS_MAX] = {0.0}, qr_tot = 0.0;
    for (uint32_t k = 0; k < G; k++) {
        const double *m = a->m2 + (size_t)k * c * c;
        for (size_t i = 0; i < c; i++) {
            T[i] += (double)a->sum[(size_t)k * c + i];
        }
        for (uint32_t b = 0; b < B; b++) { /* (1^T y+)(1^T y-) summed: the pos x neg block */
            for (uint32_t d = 0; d < B; d++) {
                qr[k] += m[(size_t)b * c + B + d];
            }
        }
        qr_tot += qr[k];
    }
    for (uint32_t k = 0; k < G; k++) {
        shift[k][0] = shift[k][1] = NAN;
        const dpm_roc_group_estimate_t *g = &e->group[k];
        if (!g->defined) {
            continue;
        }
        double h[2 * DPM_ROC_GROUPS_MAX_BINS] = {0.0}, P = 0.0, N = 0.0;
        for (size_t i = 0; i < c; i++) {
            h[i] = ((double)a->sum[(size_t)k * c + i] - p->Q * T[i]) / gq;
        }
        for (uint32_t b = 0; b < B; b++) {
            P += h[b];
            N += h[B + b];
        }
        double den = P * N - (a1 * a1 - a1) * qr[k] - (a0 * a0 - a0) * (qr_tot - qr[k]);
        double A = g->auc, w1 = 0.0, w2 = 0.0, below = 0.0, above = 0.0;
        for (uint32_t b = 0; b < B; b++) {
            w1 = fmax(w1, fabs(below + 0.5 * h[B + b] - A * N));
            below += h[B + b];
        }
        for (uint32_t b = B; b-- > 0;) {
            w2 = fmax(w2, fabs(above + 0.5 * h[b] - A * P));
            above += h[b];
        }
        const double alpha[2] = {fabs(a1), fabs(a0)};
        for (int j = 0; j < 2; j++) {
            double top = alpha[j] * L * (w1 + w2 + L * fmax(fabs(A), fabs(1.0 - A)));
            double room = den - alpha[j] * L * (fabs(P) + fabs(N) + L);
            shift[k][j] = room > 0.0 ? top / room : INFINITY;
        }
    }
}

/* A group's or a gap's unbinned AUC and its two intervals (roc_groups.h). */
typedef struct {
    double value, sd, bound, lo, hi;
    unsigned flags;
    double lo_total, hi_total;
    unsigned flags_total;
} unbinned_t;

/* "<name>", "<name>_sd", "<name>_bound", "<name>_ci" and "<name>_ci_total" with their claims. */
static void unbinned_json(jw_t *sb, const char *name, int defined, int ci_valid,
                          const unbinned_t *u)
{
    char key[48];
    coll_json_member(sb, name, defined ? u->value : NAN);
    snprintf(key, sizeof(key), "%s_sd", name);
    coll_json_member(sb, key, defined ? u->sd : NAN);
    snprintf(key, sizeof(key), "%s_bound", name);
    coll_json_member(sb, key, defined ? u->bound : NAN);
    snprintf(key, sizeof(key), "%s_ci", name);
    interval(sb, key, defined && ci_valid, u->lo, u->hi);
    coll_ci_json(sb, key, u->flags);
    snprintf(key, sizeof(key), "%s_ci_total", name);
    interval(sb, key, defined && ci_valid, u->lo_total, u->hi_total);
    coll_ci_json(sb, key, u->flags_total);
}

/* What a group's AUC and a gap both print after their value: "sd", the interval "ci" with its
 * claim, one report's bound and the effective events (d: the estimate is defined). */
typedef struct {
    int d, ci_valid;
    double sd, lo, hi;
    unsigned flags;
    double bound, events;
} spread_t;

static void spread_json(jw_t *sb, const spread_t *x)
{
    coll_json_member(sb, "sd", x->d ? x->sd : NAN);
    interval(sb, "ci", x->d && x->ci_valid, x->lo, x->hi);
    coll_ci_json(sb, "ci", x->flags);
    coll_json_member(sb, "max_shift_one_report", x->bound); /* null: no bound (reason says so) */
    coll_json_member(sb, "events", x->d ? x->events : NAN);
}

static void group_json(jw_t *sb, uint32_t g, uint32_t B, const dpm_roc_group_estimate_t *e,
                       const double *shift)
{
    int d = e->defined;
    double bound = d ? fmax(shift[0], shift[1]) : NAN;
    jw_raw(sb, "%s{\"group\": %u", g ? ", " : "", g);
    reason(sb, d, e->reason, e->ci_valid, bound);
    jw_raw(sb, ", \"small_sample\": %s", e->small_sample ? "true" : "false");
    coll_json_member(sb, "positives", e->P);
    coll_json_member(sb, "positives_sd", e->P_sd);
    coll_json_member(sb, "negatives", e->N);
    coll_json_member(sb, "negatives_sd", e->N_sd);
    coll_json_member(sb, "auc", d ? e->auc : NAN);
    coll_json_member(sb, "auc_clipped", d ? e->auc_clipped : NAN);
    const spread_t x = {d, e->ci_valid, e->sd, e->ci_lo, e->ci_hi, e->ci_flags, bound, e->events};
    spread_json(sb, &x);
    coll_json_member(sb, "auc_unbinned_clipped", d ? e->auc_unbinned_clipped : NAN);
    coll_json_member(sb, "auc_unbinned_events", d ? e->unbinned_events : NAN);
    const unbinned_t u = {
        e->auc_unbinned,         e->unbinned_sd,          e->unbinned_bound,
        e->unbinned_ci_lo,       e->unbinned_ci_hi,       e->unbinned_flags,
        e->unbinned_ci_total_lo, e->unbinned_ci_total_hi, e->unbinned_total_flags};
    unbinned_json(sb, "auc_unbinned", d, e->ci_valid, &u);
    if (d) {
        const char *key[4] = {"fpr", "tpr", "fpr_sd", "tpr_sd"};
        const double *v[4] = {e->fpr, e->tpr, e->fpr_sd, e->tpr_sd};
        for (int k = 0; k < 4; k++) {
            jw_raw(sb, ", ");
            jw_key(sb, key[k]);
            jw_nums(sb, v[k], B + 1u, COLL_JSON_DIGITS);
        }
    }
    jw_raw(sb, "}");
}

/* One report's largest move of gap k = AUC_g - AUC_h: it lands in g, in h or elsewhere, and moves
 * each of the two by its own bound (rocg_shifts). NaN for an undefined gap. */
// cppcheck-suppress constParameter ; (C has no implicit double (*)[2] -> const double (*)[2])
static double gap_shift(const dpm_roc_gap_estimate_t *e, double shift[][2])
{
    const double *x = shift[e->g], *y = shift[e->h];
    return e->defined ? fmax(x[0] + y[1], x[1] + y[0]) : NAN;
}

static void gap_json(jw_t *sb, uint32_t k, const dpm_roc_gap_estimate_t *e, double bound,
                     const dpm_pairwise_pair_t *all, const coll_pairwise_family_t *fam)
{
    int d = e->defined;
    jw_raw(sb, "%s{\"g\": %u, \"h\": %u", k ? ", " : "", e->g, e->h);
    reason(sb, d, e->reason, e->ci_valid, bound);
    jw_raw(sb, ", \"small_sample\": %s", e->small_sample ? "true" : "false");
    coll_json_member(sb, "gap", d ? e->gap : NAN);
    const spread_t x = {d, e->ci_valid, e->sd, e->ci_lo, e->ci_hi, e->ci_flags, bound, e->events};
    spread_json(sb, &x);
    const unbinned_t u = {
        e->gap_unbinned,         e->unbinned_sd,          e->unbinned_bound,
        e->unbinned_ci_lo,       e->unbinned_ci_hi,       e->unbinned_flags,
        e->unbinned_ci_total_lo, e->unbinned_ci_total_hi, e->unbinned_total_flags};
    unbinned_json(sb, "gap_unbinned", d, e->ci_valid, &u);
    coll_pairwise_pair_json(sb, all, fam);
    jw_raw(sb, "}");
}

/* ", "<key><suffix>": value" */
static void prc_member(jw_t *sb, const char *key, const char *suffix, double value)
{
    char k[32];
    snprintf(k, sizeof(k), "%s%s", key, suffix);
    coll_json_member(sb, k, value);
}

/* ", "<key><suffix>": [lo, hi]" and its claim */
static void prc_interval(jw_t *sb, const char *key, const char *suffix, double lo, double hi,
                         unsigned flags)
{
    char k[32];
    snprintf(k, sizeof(k), "%s%s", key, suffix);
    jw_raw(sb, ", \"%s\": ", k);
    coll_json_interval(sb, lo, hi);
    coll_ci_json(sb, k, flags);
}

/* One group's AP or ECE in its by_group object: "<key>", "<key>_sd", "<key>_ci" (the group's
 * examples), "<key>_var_sampling", "<key>_ci_total" (the model's) and their claims; ECE (bound)
 * its bias bounds too. */
static void prc_metric_json(jw_t *sb, const char *key, const dpm_prc_group_t *e, int bound)
{
    coll_json_member(sb, key, e->defined ? e->est : NAN);
    prc_member(sb, key, "_sd", e->sd);
    if (bound) {
        prc_member(sb, key, "_bound", e->defined ? e->bound : NAN);
    }
    prc_interval(sb, key, "_ci", e->ci_lo, e->ci_hi, e->flags);
    prc_member(sb, key, "_var_sampling", e->defined ? e->var_sampling : NAN);
    if (bound) {
        prc_member(sb, key, "_bound_total", e->defined ? e->bound_total : NAN);
    }
    prc_interval(sb, key, "_ci_total", e->ci_total_lo, e->ci_total_hi, e->total_flags);
}

/* One side of a comparison (key "difference" or "ratio"): its value, interval and claim, and the
 * pair of groups that gives it; null and no claim when that side is undefined. */
static void compare_side_json(jw_t *sb, const char *key, int defined, double v, double lo,
                              double hi, unsigned flags, uint32_t g, uint32_t h)
{
    char ci[32];
    snprintf(ci, sizeof(ci), "%s_ci", key);
    coll_json_member(sb, key, defined ? v : NAN);
    jw_raw(sb, ", \"%s\": ", ci);
    coll_json_interval(sb, defined ? lo : NAN, defined ? hi : NAN);
    coll_ci_json(sb, ci, defined ? flags : DPM_CI_SMALL_N);
    if (defined) {
        jw_raw(sb, ", \"%s_groups\": [%u, %u]", key, g, h);
    }
}

/* "<key>": {"difference": {...}, "ratio": {...}} of one metric (roc_groups_prc.h). */
static void prc_compare_json(jw_t *sb, const char *key, const dpm_prc_compare_t *c)
{
    size_t nulls = sb->len;
    jw_raw(sb, ", \"%s\": {\"method\": ", key);
    jw_str(sb, c->method);
    compare_side_json(sb, "difference", c->defined, c->difference, c->difference_lo,
                      c->difference_hi, c->flags, c->difference_g, c->difference_h);
    compare_side_json(sb, "ratio", c->ratio_defined, c->ratio, c->ratio_lo, c->ratio_hi, c->flags,
                      c->ratio_g, c->ratio_h);
    jw_raw(sb, ", \"pairs\": [");
    unsigned pair_flags = strcmp(c->method, "max_t") == 0 ? 0u : (unsigned)DPM_CI_CONSERVATIVE;
    for (uint32_t i = 0; c->defined && i < c->npairs; i++) {
        const dpm_prc_pair_t *q = &c->pair[i];
        jw_raw(sb, "%s{\"g\": %u, \"h\": %u", i ? ", " : "", q->g, q->h);
        coll_json_member(sb, "diff", q->diff);
        jw_raw(sb, ", \"ci_simultaneous\": ");
        coll_json_interval(sb, q->lo, q->hi);
        coll_ci_json(sb, "ci_simultaneous", pair_flags);
        jw_raw(sb, ", \"distinguishable\": %s}", q->distinguishable ? "true" : "false");
    }
    jw_raw(sb, "]");
    coll_json_reason(sb,
                     !c->defined         ? c->reason
                     : !c->ratio_defined ? c->ratio_reason
                                         : NULL,
                     nulls);
    jw_raw(sb, "}");
}

/* , "metric_frame": every group's AP and ECE, and Fairlearn's difference() and ratio() of each
 * with intervals (estimate/roc_groups_prc.h). */
static void metric_frame_json(jw_t *sb, const dpm_roc_groups_params_t *p,
                              const dpm_roc_groups_agg_t *a, double confidence)
{
    dpm_roc_groups_prc_t *f = malloc(sizeof(*f)); /* tens of KB */
    if (f == NULL || dpm_roc_groups_prc(p, a, confidence, 1, f) != DPM_OK) {
        free(f);
        sb->err = 1;
        return;
    }
    jw_raw(sb, ", \"metric_frame\": {\"metrics\": [\"ap\", \"ece\"], \"by_group\": [");
    for (uint32_t g = 0; g < f->groups; g++) {
        size_t nulls = sb->len;
        jw_raw(sb, "%s{\"group\": %u", g ? ", " : "", g);
        prc_metric_json(sb, "ap", &f->ap[g], 0);
        prc_metric_json(sb, "ece", &f->ece[g], 1);
        coll_json_reason(
            sb, f->ap[g].defined ? (f->ece[g].defined ? NULL : f->ece[g].reason) : f->ap[g].reason,
            nulls);
        jw_raw(sb, "}");
    }
    jw_raw(sb, "], \"compare\": {\"confidence\": "); /* the groups' examples */
    coll_json_num(sb, confidence);
    prc_compare_json(sb, "ap", &f->ap_compare);
    prc_compare_json(sb, "ece", &f->ece_compare);
    jw_raw(sb, "}, \"compare_total\": {\"confidence\": "); /* the model on the groups */
    coll_json_num(sb, confidence);
    prc_compare_json(sb, "ap", &f->ap_compare_total);
    prc_compare_json(sb, "ece", &f->ece_compare_total);
    jw_raw(sb, "}}");
    free(f);
}

/* Append "roc_groups" (sb->err set if memory runs out). */
static void groups_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                        double confidence)
{
    const dpm_roc_hist_t *rh = &c->mech.params.roc_hist;
    uint32_t G = rh->groups, B = rh->bins.count;
    double scale = (double)rh->lap.scale_num / (double)rh->lap.scale_den;
    dpm_roc_groups_params_t p;
    dpm_roc_groups_agg_t a;
    memset(&a, 0, sizeof(a));
    dpm_roc_groups_estimate_t *e = malloc(sizeof(*e)); /* tens of KB */
    if (e == NULL || st->vec_len != COLL_VEC_LEN ||
        dpm_roc_groups_params_init(&p, G, B, rh->group_grr.keep, rh->group_grr.other, scale) !=
            DPM_OK ||
        dpm_roc_groups_params_set_edges(&p, c->mech.campaign.bin_edges, c->mech.campaign.nbins) !=
            DPM_OK ||
        coll_rocg_agg(st->vec, G, B, &a) != DPM_OK ||
        dpm_roc_groups_estimate(&p, &a, confidence, e) != DPM_OK) {
        dpm_roc_groups_agg_free(&a);
        free(e);
        sb->err = 1; /* reported by jw_take: the campaign was checked at start-up */
        return;
    }
    jw_raw(sb, ", \"roc_groups\": {\"groups\": %u, \"bins\": %u", G, B);
    coll_json_member(sb, "noise_scale", scale);
    coll_json_member(sb, "group_keep", p.P);
    coll_json_member(sb, "group_other", p.Q);
    jw_raw(sb, ", \"n\": %llu, \"reported\": [", (unsigned long long)a.reports);
    for (uint32_t g = 0; g < G; g++) {
        jw_raw(sb, "%s%llu", g ? ", " : "", (unsigned long long)a.n[g]);
    }
    jw_raw(sb, "]");
    coll_json_member(sb, "confidence", confidence);
    coll_json_member(sb, "z", e->z);
    double shift[DPM_ROC_GROUPS_MAX][2] = {{0.0}};
    rocg_shifts(&p, &a, e, (double)c->bounds.class_l1_max, shift);
    jw_raw(sb, ", \"by_group\": [");
    for (uint32_t g = 0; g < G; g++) {
        group_json(sb, g, B, &e->group[g], shift[g]);
    }
    dpm_pairwise_t *pw = malloc(sizeof(*pw)); /* every gap at once (estimate/pairwise.h) */
    int have_pw = pw != NULL && dpm_roc_groups_pairwise(e, confidence, pw) == DPM_OK;
    int small = 0;
    unsigned flags[DPM_ROC_GROUPS_MAX_GAPS];
    double bound[DPM_ROC_GROUPS_MAX_GAPS];
    for (uint32_t k = 0; k < e->ngaps; k++) {
        flags[k] = e->gap[k].ci_flags;
        bound[k] = gap_shift(&e->gap[k], shift);
    }
    for (uint32_t g = 0; g < G; g++) {
        small |= e->group[g].small_sample;
    }
    const coll_pairwise_family_t fam =
        coll_pairwise_family(have_pw ? pw : NULL, flags, bound, small, 1.0);
    jw_raw(sb, "], \"gaps\": [");
    for (uint32_t k = 0; k < e->ngaps; k++) {
        gap_json(sb, k, &e->gap[k], bound[k], have_pw ? &pw->pair[k] : NULL, &fam);
    }
    jw_raw(sb, "]");
    coll_pairwise_json(sb, "largest_gap", have_pw ? pw : NULL,
                       pw == NULL ? "out of memory" : "the comparison failed", &fam);
    metric_frame_json(sb, &p, &a, confidence);
    jw_raw(sb, "}");
    sb->err |= pw == NULL;
    dpm_roc_groups_agg_free(&a);
    free(pw);
    free(e);
}

/* The report's group is in its body; the store's column holds the campaign's groups, which
 * says how the report is summed when it is read back (agg_rocg.h). */
static uint32_t stored_group(const coll_campaign_t *c, const dpm_report_t *r)
{
    (void)r;
    return c->mech.params.roc_hist.groups;
}

/* The report's cells into its group's sums (agg_rocg.h); stored_group: the campaign's groups. */
static int delta_add(coll_deltas_t *ds, const dpm_report_t *rep, uint32_t stored_group)
{
    coll_delta_t *d = rep->body.roc_hist.bins <= DPM_MAX_BINS
                          ? coll_delta_for(ds, rep->campaign_id, rep->period, 2, 0)
                          : NULL;
    if (d == NULL || coll_rocg_add_report(&ds->vec, rep, stored_group) != 0) {
        return -1;
    }
    d->reports++;
    return 0;
}

/* Once built: exact sums of products need small cells; the estimator takes the parameters. */
static int check_built(const coll_campaign_t *c, char *why, size_t cap)
{
    const dpm_roc_hist_t *rh = &c->mech.params.roc_hist;
    int64_t cell = c->bounds.cell_hi > -c->bounds.cell_lo ? c->bounds.cell_hi : -c->bounds.cell_lo;
    if (cell > COLL_ROCG_CELL_MAX) {
        return host_fail(why, cap,
                         "with groups a report's cells must stay within %d (max_examples + noise "
                         "bound is %lld): lower max_examples or raise eps",
                         COLL_ROCG_CELL_MAX, (long long)cell);
    }
    dpm_roc_groups_params_t p;
    if (dpm_roc_groups_params_init(
            &p, rh->groups, rh->bins.count, rh->group_grr.keep, rh->group_grr.other,
            (double)rh->lap.scale_num / (double)rh->lap.scale_den) != DPM_OK) {
        return host_fail(why, cap, "no per-group estimator for these parameters");
    }
    return 0;
}

/* The pooled "roc" of all groups, then "roc_groups". */
static void estimate_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
                          const host_json_ctx_t *q)
{
    dpm_roc_agg_t pooled;
    pooled_sums(c, st, &pooled);
    host_no_metrics_json(sb);
    host_roc_json(sb, c, &pooled, q->confidence);
    groups_json(sb, c, st, q->confidence);
}

static const char *const kCompare[] = {"roc.n",
                                       "roc.pos_sum",
                                       "roc.neg_sum",
                                       "roc.auc",
                                       "roc.tpr",
                                       "roc_groups.reported",
                                       "roc_groups.by_group.*.auc",
                                       "roc_groups.gaps.*.gap",
                                       NULL};

const host_mech_t host_mech_roc_hist_groups = {
    .name = "roc_hist",
    .id = DPM_MECH_ID_ROC_HIST,
    .flags = HOST_MECH_BINS | HOST_MECH_MAX_EXAMPLES,
    .trust_model = HOST_TRUST_LOCAL_DP,
    .privacy_unit = "one example's label (label-DP) and the device's group (local DP); the "
                    "scores are not protected",
    .params_init = host_roc_params_init,
    .check_built = check_built,
    .state_init = coll_state_init_vec, /* the per-group sums (agg_rocg.h) */
    .stored_group = stored_group,
    .delta_add = delta_add,
    .bounds_json = host_roc_bounds_json,
    .estimate_json = estimate_json,
    .compare = kCompare,
};
