/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group roc_hist estimates as JSON (format in estimate_rocg.h). */
#include "collector/estimate_rocg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collector/agg_rocg.h"
#include "collector/estimate_pairwise.h"
#include "estimate/roc_groups.h"

#define DIGITS 9

int coll_rocg_campaign(const coll_campaign_t *c)
{
    return c->mech.campaign.mechanism == DPM_MECH_ID_ROC_HIST &&
           c->mech.params.roc_hist.groups >= 2;
}

void coll_rocg_pooled(const coll_campaign_t *c, const coll_campaign_state_t *st,
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

static void num(jw_t *sb, const char *key, double x)
{
    jw_raw(sb, ", \"%s\": ", key);
    jw_num(sb, x, DIGITS); /* null when not finite */
}

static void interval(jw_t *sb, int valid, double lo, double hi)
{
    jw_raw(sb, ", \"ci\": ");
    if (valid && isfinite(lo) && isfinite(hi)) {
        jw_raw(sb, "[");
        jw_num(sb, lo, DIGITS);
        jw_raw(sb, ", ");
        jw_num(sb, hi, DIGITS);
        jw_raw(sb, "]");
    } else {
        jw_raw(sb, "null");
    }
}

/* "defined", "reason": a defined estimate whose interval is missing says why too. */
static void reason(jw_t *sb, int defined, const char *why, int ci_valid)
{
    jw_raw(sb, ", \"defined\": %s, \"reason\": ", defined ? "true" : "false");
    if (!defined) {
        jw_str(sb, why != NULL && why[0] != '\0' ? why : "undefined");
    } else if (!ci_valid) {
        jw_str(sb, "the variance estimate is not positive: no interval (too few reports)");
    } else {
        jw_raw(sb, "null");
    }
}

static void group_json(jw_t *sb, uint32_t g, uint32_t B, const dpm_roc_group_estimate_t *e)
{
    int d = e->defined;
    jw_raw(sb, "%s{\"group\": %u", g ? ", " : "", g);
    reason(sb, d, e->reason, e->ci_valid);
    jw_raw(sb, ", \"small_sample\": %s", e->small_sample ? "true" : "false");
    num(sb, "positives", e->P);
    num(sb, "positives_sd", e->P_sd);
    num(sb, "negatives", e->N);
    num(sb, "negatives_sd", e->N_sd);
    num(sb, "auc", d ? e->auc : NAN);
    num(sb, "auc_clipped", d ? e->auc_clipped : NAN);
    num(sb, "sd", d ? e->sd : NAN);
    interval(sb, d && e->ci_valid, e->ci_lo, e->ci_hi);
    if (d) {
        const char *key[4] = {"fpr", "tpr", "fpr_sd", "tpr_sd"};
        const double *v[4] = {e->fpr, e->tpr, e->fpr_sd, e->tpr_sd};
        for (int k = 0; k < 4; k++) {
            jw_raw(sb, ", ");
            jw_key(sb, key[k]);
            jw_nums(sb, v[k], B + 1u, DIGITS);
        }
    }
    jw_raw(sb, "}");
}

static void gap_json(jw_t *sb, uint32_t k, const dpm_roc_gap_estimate_t *e,
                     const dpm_pairwise_pair_t *all)
{
    int d = e->defined;
    jw_raw(sb, "%s{\"g\": %u, \"h\": %u", k ? ", " : "", e->g, e->h);
    reason(sb, d, e->reason, e->ci_valid);
    jw_raw(sb, ", \"small_sample\": %s", e->small_sample ? "true" : "false");
    num(sb, "gap", d ? e->gap : NAN);
    num(sb, "sd", d ? e->sd : NAN);
    interval(sb, d && e->ci_valid, e->ci_lo, e->ci_hi);
    coll_pairwise_pair_json(sb, all, 1.0);
    jw_raw(sb, "}");
}

void coll_estimate_rocg_json(jw_t *sb, const coll_campaign_t *c, const coll_campaign_state_t *st,
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
        coll_rocg_agg(st->vec, G, B, &a) != DPM_OK ||
        dpm_roc_groups_estimate(&p, &a, confidence, e) != DPM_OK) {
        dpm_roc_groups_agg_free(&a);
        free(e);
        sb->err = 1; /* reported by jw_take: the campaign was checked at start-up */
        return;
    }
    jw_raw(sb, ", \"roc_groups\": {\"groups\": %u, \"bins\": %u", G, B);
    num(sb, "noise_scale", scale);
    num(sb, "group_keep", p.P);
    num(sb, "group_other", p.Q);
    jw_raw(sb, ", \"n\": %llu, \"reported\": [", (unsigned long long)a.reports);
    for (uint32_t g = 0; g < G; g++) {
        jw_raw(sb, "%s%llu", g ? ", " : "", (unsigned long long)a.n[g]);
    }
    jw_raw(sb, "]");
    num(sb, "confidence", confidence);
    num(sb, "z", e->z);
    jw_raw(sb, ", \"by_group\": [");
    for (uint32_t g = 0; g < G; g++) {
        group_json(sb, g, B, &e->group[g]);
    }
    dpm_pairwise_t *pw = malloc(sizeof(*pw)); /* every gap at once (estimate/pairwise.h) */
    int have_pw = pw != NULL && dpm_roc_groups_pairwise(e, confidence, pw) == DPM_OK;
    int small = 0;
    jw_raw(sb, "], \"gaps\": [");
    for (uint32_t k = 0; k < e->ngaps; k++) {
        gap_json(sb, k, &e->gap[k], have_pw ? &pw->pair[k] : NULL);
    }
    for (uint32_t g = 0; g < G; g++) {
        small |= e->group[g].small_sample;
    }
    jw_raw(sb, "]");
    coll_pairwise_json(sb, "largest_gap", have_pw ? pw : NULL, "out of memory", small, 1.0);
    jw_raw(sb, "}");
    sb->err |= pw == NULL;
    dpm_roc_groups_agg_free(&a);
    free(pw);
    free(e);
}
