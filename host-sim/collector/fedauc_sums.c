/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC sums and estimate JSON (fedauc_sums.h). */
#include "collector/fedauc_sums.h"

#include <math.h>
#include <string.h>

#include "collector/estimate_ci.h"

#define DIGITS 9

int coll_fedauc_report_rows(const dpm_report_t *rep, int64_t n[COLL_FEDAUC_ROWS][2],
                            int64_t s[COLL_FEDAUC_ROWS][2], double ss[COLL_FEDAUC_ROWS][2])
{
    if (!coll_fedauc_is((uint32_t)rep->mechanism) || rep->body.fedauc.n == 0) {
        return -1;
    }
    const dpm_fedauc_report_t *b = &rep->body.fedauc;
    /* the same sums dpm_fa_agg_add makes, once per form (the variant is the campaign's) */
    dpm_fa_params_t p;
    memset(&p, 0, sizeof(p));
    p.mechanism = (uint32_t)rep->mechanism;
    p.eps = rep->eps;
    dpm_fa_agg_t sum_form, t_form;
    dpm_fa_agg_init(&sum_form);
    dpm_fa_agg_init(&t_form);
    p.variant = p.mechanism == DPM_MECH_ID_FEDAUC_LAP ? DPM_FEDAUC_LOCAL : DPM_FEDAUC_VARIANT_NONE;
    if (dpm_fa_agg_add(&sum_form, &p, b) != DPM_OK) {
        return -1;
    }
    if (p.mechanism == DPM_MECH_ID_FEDAUC_LAP) {
        p.variant = DPM_FEDAUC_ORTHOGONAL;
        if (dpm_fa_agg_add(&t_form, &p, b) != DPM_OK) {
            return -1;
        }
    }
    memset(n, 0, sizeof(int64_t) * COLL_FEDAUC_ROWS * 2);
    memset(s, 0, sizeof(int64_t) * COLL_FEDAUC_ROWS * 2);
    memset(ss, 0, sizeof(double) * COLL_FEDAUC_ROWS * 2);
    n[0][0] = b->n;
    s[0][0] = b->local_p;
    ss[0][0] = (double)sum_form.a3;
    n[0][1] = b->total;
    s[0][1] = b->local_sum2;
    ss[0][1] = (double)t_form.sum2_frac;
    n[1][0] = n[1][1] = n[2][0] = 1;
    ss[1][0] = (double)sum_form.a0;
    ss[1][1] = (double)t_form.a0;
    ss[2][0] = (double)t_form.a2;
    return 0;
}

int coll_fedauc_sums_add(coll_fedauc_sums_t *fs, uint32_t m, uint32_t g, int64_t n, int64_t s,
                         double ss)
{
    if (m >= COLL_FEDAUC_ROWS || g >= 2) {
        return -1;
    }
    fs->n[m][g] += n;
    fs->s[m][g] += s;
    fs->ss[m][g] += ss;
    return 0;
}

static int uses_t(const coll_campaign_t *c)
{
    const dpm_campaign_t *cp = &c->mech.campaign;
    return cp->mechanism == DPM_MECH_ID_FEDAUC_LAP &&
           (cp->fedauc_variant == DPM_FEDAUC_ORTHOGONAL ||
            cp->fedauc_variant == DPM_FEDAUC_ADAPTIVE);
}

int coll_fedauc_sums_agg(const coll_fedauc_sums_t *fs, uint64_t reports, const coll_campaign_t *c,
                         dpm_fa_agg_t *out)
{
    dpm_fa_agg_init(out);
    out->reports = reports;
    out->examples = (uint64_t)fs->n[0][0];
    uint64_t totals = (uint64_t)fs->n[0][1];
    if (reports > 0 && totals % reports != 0) {
        return -1;
    }
    out->total = reports > 0 ? (uint32_t)(totals / reports) : 0;
    out->p = fs->s[0][0];
    out->a3 = fs->ss[0][0];
    if (uses_t(c)) {
        out->sum2_frac = fs->ss[0][1];
        out->a0 = fs->ss[1][1];
        out->a2 = fs->ss[2][0];
    } else {
        out->sum2_int = fs->s[0][1];
        out->a0 = fs->ss[1][0];
    }
    return 0;
}

static void num(jw_t *w, const char *key, double x)
{
    jw_raw(w, ", ");
    jw_key(w, key);
    jw_num(w, x, DIGITS);
}

void coll_fedauc_json(jw_t *w, const coll_campaign_t *c, const coll_fedauc_sums_t *fs,
                      uint64_t reports, const coll_fedauc_period_t *ph, int one_period,
                      uint32_t period, double confidence)
{
    static const char *const variants[] = {"none", "local", "global", "orthogonal", "adaptive"};
    const dpm_campaign_t *cp = &c->mech.campaign;
    uint32_t v = cp->fedauc_variant <= 4u ? cp->fedauc_variant : 0u;
    jw_raw(w,
           ", \"fedauc\": {\"variant\": \"%s\", \"score_bits\": %u, \"upload_seconds\": %u, "
           "\"upload_count\": %u",
           variants[v], cp->fedauc_score_bits, c->opts.fedauc.upload_seconds,
           c->opts.fedauc.upload_count);
    if (!one_period) {
        jw_raw(w, ", \"period\": null, \"valid\": false, \"reason\": ");
        jw_str(w, "a FedAUC estimate is of one period (one ranking): ask ?period=P");
        jw_raw(w, "}");
        return;
    }
    uint64_t dropouts = ph->uploads > reports ? ph->uploads - reports : 0;
    jw_raw(w,
           ", \"period\": %u, \"phase\": \"%s\", \"uploads\": %llu, \"scores\": %llu, "
           "\"reports\": %llu, \"dropouts\": %llu",
           period,
           !ph->known   ? "none"
           : ph->closed ? "ranked"
                        : "uploading",
           (unsigned long long)ph->uploads, (unsigned long long)ph->scores,
           (unsigned long long)reports, (unsigned long long)dropouts);
    dpm_fa_agg_t agg;
    dpm_fa_params_t p;
    dpm_fa_estimate_t e;
    memset(&e, 0, sizeof(e));
    const char *why = NULL;
    if (!ph->known || !ph->closed) {
        why = !ph->known ? "no upload in this period" : "the upload phase is still open";
    } else if (reports == 0) {
        why = "no report yet";
    } else if (coll_fedauc_sums_agg(fs, reports, c, &agg) != 0 || agg.total != ph->scores) {
        why = "the reports name another number of ranked scores than the collector ranked";
    } else if (agg.examples != agg.total) {
        why = "dropouts: devices that uploaded scores did not report; the rank sums need every "
              "ranked example";
    } else if (dpm_fa_params_from_mech(&p, &c->mech) != DPM_OK ||
               dpm_fa_estimate(&p, &agg, &ph->moments, confidence, &e) != DPM_OK) {
        why = "no estimate for these sums";
    } else if (!e.valid || !isfinite(e.auc) || !isfinite(e.sd)) {
        why = "undefined: estimated positives or negatives <= 0 (too much noise for this M)";
    }
    jw_raw(w, ", \"valid\": %s, \"reason\": ", why == NULL ? "true" : "false");
    if (why != NULL) {
        jw_str(w, why);
        jw_raw(w, "}");
        return;
    }
    jw_raw(w, "null");
    num(w, "auc", e.auc);
    num(w, "auc_unbiased", e.auc_raw);
    num(w, "auc_noisy", e.auc_noisy);
    num(w, "sd", e.sd);
    jw_raw(w, ", \"ci\": [");
    jw_num(w, e.ci_lo, DIGITS);
    jw_raw(w, ", ");
    jw_num(w, e.ci_hi, DIGITS);
    jw_raw(w, "]");
    coll_ci_json(w, "ci", e.ci_flags);
    num(w, "events", e.events);
    num(w, "fieller_g", e.fieller_g);
    num(w, "confidence", confidence);
    num(w, "m", e.m);
    num(w, "positives", e.p);
    num(w, "negatives", e.n);
    jw_raw(w, "}");
}
