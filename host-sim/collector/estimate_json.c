/* SPDX-License-Identifier: Apache-2.0 */
/* Estimate JSON (format in estimate_json.h), from a consistent snapshot of the aggregates. */
#include "collector/estimate_json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONFIDENCE 0.95

/* A growing string; after an allocation failure every append is a no-op and err is set. */
typedef struct {
    char *buf;
    size_t len, cap;
    int err;
} sb_t;

static void sb_printf(sb_t *sb, const char *fmt, ...)
{
    if (sb->err) {
        return;
    }
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(sb->buf + sb->len, sb->cap - sb->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            sb->err = 1;
            return;
        }
        if ((size_t)n < sb->cap - sb->len) {
            sb->len += (size_t)n;
            return;
        }
        size_t cap = 2 * sb->cap + (size_t)n + 1;
        char *p = realloc(sb->buf, cap);
        if (p == NULL) {
            sb->err = 1;
            return;
        }
        sb->buf = p;
        sb->cap = cap;
    }
}

/* A number, or null when it is not finite (JSON has no NaN). */
static void sb_num(sb_t *sb, double x)
{
    if (isfinite(x)) {
        sb_printf(sb, "%.9g", x);
    } else {
        sb_printf(sb, "null");
    }
}

static void sb_str(sb_t *sb, const char *s)
{
    sb_printf(sb, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            sb_printf(sb, "\\%c", *p);
        } else if (*p < 0x20 || *p == 0x7F) {
            sb_printf(sb, "\\u%04x", *p);
        } else {
            sb_printf(sb, "%c", *p);
        }
    }
    sb_printf(sb, "\"");
}

static void sb_reasons(sb_t *sb, const coll_reasons_t *rs)
{
    sb_printf(sb, "{");
    for (size_t i = 0; i < rs->n; i++) {
        sb_printf(sb, "%s", i ? ", " : "");
        sb_str(sb, rs->r[i].reason);
        sb_printf(sb, ": %llu", (unsigned long long)rs->r[i].count);
    }
    sb_printf(sb, "}");
}

static void sb_interval(sb_t *sb, double lo, double hi)
{
    sb_printf(sb, "[");
    sb_num(sb, lo);
    sb_printf(sb, ", ");
    sb_num(sb, hi);
    sb_printf(sb, "]");
}

/* One metric: per-group means and every pairwise disparity, on the metric scale. */
static void sb_metric(sb_t *sb, const coll_campaign_t *c, const dpm_disp_agg_t *agg,
                      dpm_metric_t metric, double z)
{
    uint32_t d = c->mech.campaign.groups;
    dpm_disp_estimate_t est;
    double nu2[DPM_DISP_MAX_GROUPS];
    for (uint32_t g = 0; g < d; g++) {
        nu2[g] = DPM_DISP_NU2_PLUGIN;
    }
    int have = agg->total > 0 && dpm_disp_estimate(&c->disp, agg, NULL, nu2, &est) == DPM_OK;
    sb_printf(sb, "{\"metric\": \"%s\", \"groups\": [", coll_metric_name(metric));
    for (uint32_t g = 0; g < d; g++) {
        int valid = have && est.group[g].valid;
        /* value scale v = 2 metric - 1 back to the metric: mean (m + 1) / 2, variance / 4 */
        double mean = valid ? (est.group[g].mean + 1.0) / 2.0 : NAN;
        double var = valid ? est.group[g].var / 4.0 : NAN;
        double half = z * sqrt(var);
        sb_printf(sb, "%s{\"group\": %u, \"reports\": %llu, \"size\": ", g ? ", " : "", g,
                  (unsigned long long)agg->count[g]);
        sb_num(sb, have ? est.group[g].n : NAN);
        sb_printf(sb, ", \"mean\": ");
        sb_num(sb, mean);
        sb_printf(sb, ", \"var\": ");
        sb_num(sb, var);
        sb_printf(sb, ", \"ci95\": ");
        sb_interval(sb, mean - half, mean + half);
        sb_printf(sb, ", \"max_shift_one_report\": ");
        sb_num(sb,
               valid ? coll_bounds_mean_shift(&c->bounds, &c->disp, est.group[g].n, mean) : NAN);
        sb_printf(sb, "}");
    }
    sb_printf(sb, "], \"disparities\": [");
    int best = -1;
    dpm_disp_gap_t max_gap;
    memset(&max_gap, 0, sizeof(max_gap));
    int first = 1;
    for (uint32_t g = 0; g < d; g++) {
        for (uint32_t h = g + 1; h < d; h++) {
            dpm_disp_gap_t gap;
            int ok = have && dpm_disp_gap(&est, g, h, CONFIDENCE, &gap) == DPM_OK;
            sb_printf(sb, "%s{\"g\": %u, \"h\": %u, \"diff\": ", first ? "" : ", ", g, h);
            first = 0;
            sb_num(sb, ok ? gap.diff / 2.0 : NAN);
            sb_printf(sb, ", \"var\": ");
            sb_num(sb, ok ? gap.var / 4.0 : NAN);
            sb_printf(sb, ", \"ci95\": ");
            sb_interval(sb, ok ? gap.ci_lo / 2.0 : NAN, ok ? gap.ci_hi / 2.0 : NAN);
            sb_printf(sb, "}");
            if (ok && isfinite(gap.abs_diff) && (best < 0 || gap.abs_diff > max_gap.abs_diff)) {
                max_gap = gap;
                best = 1;
            }
        }
    }
    sb_printf(sb, "], \"max_disparity\": ");
    if (best < 0) {
        sb_printf(sb, "null");
    } else {
        sb_printf(sb, "{\"g\": %u, \"h\": %u, \"diff\": ", max_gap.g, max_gap.h);
        sb_num(sb, max_gap.diff / 2.0);
        sb_printf(sb, ", \"abs_diff\": ");
        sb_num(sb, max_gap.abs_diff / 2.0);
        sb_printf(sb, ", \"ci95\": ");
        sb_interval(sb, max_gap.ci_lo / 2.0, max_gap.ci_hi / 2.0);
        sb_printf(sb, "}");
    }
    sb_printf(sb, "}");
}

static void sb_array(sb_t *sb, const char *key, const double *v, uint32_t n)
{
    sb_printf(sb, ", \"%s\": [", key);
    for (uint32_t i = 0; i < n; i++) {
        sb_printf(sb, "%s", i ? ", " : "");
        sb_num(sb, v[i]);
    }
    sb_printf(sb, "]");
}

/* "report_bounds": what an accepted report can hold (bounds.h), and for tuple campaigns the
 * estimator constants of the influence formulas (a, q, gain). */
static void sb_bounds(sb_t *sb, const coll_campaign_t *c)
{
    const coll_bounds_t *b = &c->bounds;
    sb_printf(sb, ", \"report_bounds\": {\"honest_reject_log2\": ");
    sb_num(sb, b->fail_log2);
    if (b->mech != DPM_MECH_ID_ROC_HIST) {
        sb_printf(sb, ", \"a\": %.17g, \"q\": %.17g, \"gain\": %.17g", c->disp.a, c->disp.q,
                  c->disp.mech == DPM_DISP_MR ? c->disp.c : 1.0);
    }
    if (b->mech == DPM_MECH_ID_TUPLE_ML) {
        sb_printf(sb, ", \"value_max\": %lld", (long long)b->value_max);
    } else if (b->mech == DPM_MECH_ID_ROC_HIST) {
        sb_printf(sb,
                  ", \"max_examples\": %u, \"cell\": [%lld, %lld], \"class_sum\": [%lld, %lld], "
                  "\"total_sum\": [%lld, %lld], \"class_l1_max\": %lld",
                  b->max_examples, (long long)b->cell_lo, (long long)b->cell_hi,
                  (long long)b->class_lo, (long long)b->class_hi, (long long)b->total_lo,
                  (long long)b->total_hi, (long long)b->class_l1_max);
    }
    sb_printf(sb, "}");
}

/* roc_hist: "roc": the summed histograms and the estimate of host-sim/estimate/roc.h. */
static void sb_roc(sb_t *sb, const coll_campaign_t *c, const dpm_roc_agg_t *agg)
{
    dpm_roc_estimate_t *e = malloc(sizeof(*e));
    uint32_t B = agg->bins;
    if (e == NULL || dpm_roc_estimate(&c->roc, agg, CONFIDENCE, e) != DPM_OK) {
        free(e);
        sb->err = 1;
        return;
    }
    double edges[DPM_MAX_BINS];
    for (uint32_t b = 0; b < B; b++) {
        if (b + 1 < B) {
            edges[b] = c->mech.campaign.bin_edges[b] / 2147483648.0;
        }
    }
    sb_printf(sb, ", \"roc\": {\"bins\": %u", B);
    sb_array(sb, "edges", edges, B - 1);
    sb_printf(sb, ", \"noise_scale\": ");
    sb_num(sb, c->roc.scale);
    for (int k = 0; k < 2; k++) { /* exact integers (%.9g would round sums >= 1e9) */
        const int64_t *v = k ? agg->neg : agg->pos;
        sb_printf(sb, ", \"%s\": [", k ? "neg_sum" : "pos_sum");
        for (uint32_t b = 0; b < B; b++) {
            sb_printf(sb, "%s%lld", b ? ", " : "", (long long)v[b]);
        }
        sb_printf(sb, "]");
    }
    sb_printf(sb, ", \"valid\": %s", e->valid ? "true" : "false");
    if (e->valid) {
        sb_printf(sb, ", \"projected\": %s, \"positives\": ", e->projected ? "true" : "false");
        sb_num(sb, e->P);
        sb_printf(sb, ", \"negatives\": ");
        sb_num(sb, e->N);
        sb_printf(sb, ", \"auc\": ");
        sb_num(sb, e->auc);
        sb_printf(sb, ", \"auc_var_noise\": ");
        sb_num(sb, e->var_noise);
        sb_printf(sb, ", \"auc_var_sampling\": ");
        sb_num(sb, e->var_sampling);
        sb_printf(sb, ", \"auc_ci\": ");
        sb_interval(sb, e->ci_lo, e->ci_hi);
        sb_printf(sb, ", \"auc_ci_total\": ");
        sb_interval(sb, e->ci_total_lo, e->ci_total_hi);
        sb_printf(sb, ", \"max_auc_shift_one_report\": ");
        sb_num(sb, coll_bounds_auc_shift(&c->bounds, e->P, e->N));
        sb_array(sb, "fpr", e->fpr, B + 1);
        sb_array(sb, "tpr", e->tpr, B + 1);
        sb_array(sb, "tpr_lo", e->tpr_lo, B + 1);
        sb_array(sb, "tpr_hi", e->tpr_hi, B + 1);
        sb_array(sb, "tpr_lo_simultaneous", e->tpr_lo_sim, B + 1);
        sb_array(sb, "tpr_hi_simultaneous", e->tpr_hi_sim, B + 1);
    }
    sb_printf(sb, "}");
    free(e);
}

int coll_estimate_json(const coll_campaigns_t *cs, coll_aggregates_t *agg, int ci, char **out,
                       size_t *len)
{
    if (ci < 0 || (size_t)ci >= cs->n) {
        return -1;
    }
    /* ~8 KB of state: on the heap, connection threads have modest stacks */
    coll_campaign_state_t *st = malloc(sizeof(*st));
    coll_reasons_t *un = malloc(sizeof(*un));
    sb_t sb = {malloc(4096), 0, 4096, 0};
    if (st == NULL || un == NULL || sb.buf == NULL) {
        free(st);
        free(un);
        free(sb.buf);
        return -1;
    }
    coll_agg_snapshot(agg, ci, st, un, NULL);
    const coll_campaign_t *c = &cs->c[ci];
    const dpm_campaign_t *cp = &c->mech.campaign;
    double z = 1.959963984540054;
    dpm_disp_normal_quantile(0.5 + CONFIDENCE / 2.0, &z);
    sb_printf(&sb, "{\"campaign\": %u, \"mechanism\": \"%s\", \"eps\": ", cp->id,
              coll_mechanism_name(cp->mechanism));
    sb_num(&sb, cp->eps / 65536.0);
    sb_printf(&sb, ", \"eps_implemented\": ");
    sb_num(&sb, c->mech.eps_implemented / 65536.0);
    sb_printf(&sb,
              ", \"groups\": %u, \"confidence\": %.2f, \"scale\": \"metric\", "
              "\"reports\": %llu, \"rejects\": ",
              c->mech.campaign.groups, CONFIDENCE, (unsigned long long)st->reports);
    sb_reasons(&sb, &st->rejects);
    sb_printf(&sb, ", \"rejects_unattributed\": ");
    sb_reasons(&sb, un);
    sb_printf(&sb, ", \"lost_reports\": %llu", (unsigned long long)coll_agg_lost_reports(agg));
    sb_bounds(&sb, c);
    sb_printf(&sb, ", \"metrics\": [");
    for (uint32_t m = 0; m < st->nmetrics; m++) {
        sb_printf(&sb, "%s", m ? ", " : "");
        sb_metric(&sb, c, &st->agg[m], c->mech.campaign.metrics[m], z);
    }
    sb_printf(&sb, "]");
    if (cp->mechanism == DPM_MECH_ID_ROC_HIST) {
        sb_roc(&sb, c, &st->roc);
    }
    sb_printf(&sb, "}\n");
    free(st);
    free(un);
    if (sb.err) {
        free(sb.buf);
        return -1;
    }
    *out = sb.buf;
    *len = sb.len;
    return 0;
}
