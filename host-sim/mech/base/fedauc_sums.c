/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC sums and estimate JSON (fedauc_sums.h). */
#include "mech/base/fedauc_sums.h"

#include <math.h>
#include <string.h>

#include "mech/base/est_json.h"

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
    int64_t n2, s2;
    if (__builtin_add_overflow(fs->n[m][g], n, &n2) ||
        __builtin_add_overflow(fs->s[m][g], s, &s2)) {
        fs->overflow = 1; /* the estimate says so; never a wrapped sum (bounds.h: capacity) */
        return -1;
    }
    fs->n[m][g] = n2;
    fs->s[m][g] = s2;
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
    if (fs->overflow || fs->n[0][0] < 0 || fs->n[0][1] < 0) {
        return -1;
    }
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
    jw_num(w, x, COLL_JSON_DIGITS);
}

/* The sums of the P smallest and the P largest d2 of the reported examples, from the dropouts'
 * buckets: each bucket's lowest value for the first, its highest for the second (so the range
 * can only be wider than the exact one). */
static void d2_range(const coll_fedauc_dropouts_t *d, uint64_t P, long double *lo, long double *hi)
{
    uint64_t left = P;
    *lo = *hi = 0.0L;
    for (uint32_t k = 0; k < COLL_FEDAUC_D_BUCKETS && left > 0; k++) {
        uint64_t take = d->d_count[k] < left ? d->d_count[k] : left;
        *lo += (long double)take * (long double)((uint64_t)k * d->d_width);
        left -= take;
    }
    left = P;
    for (uint32_t k = COLL_FEDAUC_D_BUCKETS; k-- > 0 && left > 0;) {
        uint64_t take = d->d_count[k] < left ? d->d_count[k] : left;
        uint64_t top = ((uint64_t)k + 1u) * d->d_width - 1u;
        *hi += (long double)take * (long double)(top < d->d2_max ? top : d->d2_max);
        left -= take;
    }
}

/* The estimate from agg with the reported examples' rank sums lowered by d2 (doubled ranks of
 * true labels; fedauc_rr: scaled into flipped-label sums). */
static dpm_status_t estimate_minus(const dpm_fa_params_t *p, const dpm_fa_agg_t *agg,
                                   const dpm_fa_ranking_t *rk, double confidence, long double d2,
                                   dpm_fa_estimate_t *e)
{
    dpm_fa_agg_t a = *agg;
    a.sum2_frac -= d2 * (p->mechanism == DPM_MECH_ID_FEDAUC_RR ? 1.0L - 2.0L * p->rho : 1.0L);
    return dpm_fa_estimate(p, &a, rk, confidence, e);
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
           "\"upload_count\": %u, \"min_uploaders\": %u, \"max_examples\": %u",
           variants[v], cp->fedauc_score_bits, c->opts.fedauc.upload_seconds,
           c->opts.fedauc.upload_count, c->opts.fedauc.min_uploaders, c->opts.max_examples);
    if (!one_period) {
        jw_raw(w, ", \"period\": null, \"valid\": false, \"reason\": ");
        jw_str(w, "a FedAUC estimate is of one period (one ranking): ask ?period=P");
        jw_raw(w, "}");
        return;
    }
    uint64_t dropouts = ph->uploads > reports ? ph->uploads - reports : 0;
    jw_raw(w,
           ", \"period\": %u, \"phase\": \"%s\", \"uploads\": %llu, \"uploaders\": %llu, "
           "\"scores\": %llu, \"reports\": %llu, \"dropouts\": %llu, \"reports_closed\": %s",
           period,
           !ph->known     ? "none"
           : ph->withheld ? "withheld"
           : ph->closed   ? "ranked"
                          : "uploading",
           (unsigned long long)ph->uploads, (unsigned long long)ph->uploaders,
           (unsigned long long)ph->scores, (unsigned long long)reports,
           (unsigned long long)dropouts, ph->reports_closed ? "true" : "false");
    dpm_fa_agg_t agg;
    memset(&agg, 0, sizeof(agg));
    dpm_fa_params_t p;
    dpm_fa_estimate_t e, e_lo, e_hi;
    memset(&e, 0, sizeof(e));
    const dpm_fa_ranking_t *rk = &ph->moments;
    const coll_fedauc_dropouts_t *d = &ph->drop;
    long double lo = 0.0L, hi = 0.0L;
    const char *why = NULL;
    if (!ph->known || !ph->closed) {
        why = !ph->known ? "no upload in this period" : "the upload phase is still open";
    } else if (ph->withheld) {
        why = "ranks withheld: fewer distinct uploaders than min_uploaders (a rank reply would "
              "reveal the few other uploads' scores)";
    } else if (reports == 0) {
        why = "no report yet";
    } else if (fs->overflow) {
        why = "the stored sums leave 64-bit integers";
    } else if (coll_fedauc_sums_agg(fs, reports, c, &agg) != 0 || agg.total != ph->scores ||
               agg.examples > agg.total) {
        why = "the reports name another number of ranked scores than the collector ranked";
    } else if (agg.examples < agg.total && d->reported_examples != agg.examples) {
        why = "reports are being stored right now: ask again";
    } else if (dpm_fa_params_from_mech(&p, &c->mech) != DPM_OK) {
        why = "no estimate for these sums";
    }
    if (why == NULL && agg.examples < agg.total) {
        /* dropouts: the estimate is of the reported examples; their ranks still count the
         * dropouts' examples below them, by d2 / 2 each, for the positives among them
         * (unknown): the sum of the P smallest to the P largest d2 (fedauc_phase.h) */
        agg.total = (uint32_t)agg.examples;
        rk = &d->reported_moments;
        if (dpm_fa_estimate(&p, &agg, rk, confidence, &e) == DPM_OK && isfinite(e.p)) {
            double P = e.p < 0.0 ? 0.0 : e.p > (double)agg.total ? (double)agg.total : e.p;
            d2_range(d, (uint64_t)llround(P), &lo, &hi);
        }
    }
    if (why == NULL && (estimate_minus(&p, &agg, rk, confidence, (lo + hi) / 2.0L, &e) != DPM_OK ||
                        estimate_minus(&p, &agg, rk, confidence, lo, &e_hi) != DPM_OK ||
                        estimate_minus(&p, &agg, rk, confidence, hi, &e_lo) != DPM_OK)) {
        why = "no estimate for these sums";
    } else if (why == NULL && (!e.valid || !isfinite(e.auc) || !isfinite(e.sd))) {
        why = "undefined: estimated positives or negatives <= 0 (too much noise for this M)";
    }
    if (why != NULL) {
        jw_raw(w, ", \"valid\": false, \"reason\": ");
        jw_str(w, why);
        jw_raw(w, "}");
        return;
    }
    /* the dropouts' range widens the interval on both sides: from the lower end of the
     * estimate at one extreme to the upper end at the other, each end with the estimator's own
     * half-width (Poisson-aware when few randomization events carry it, estimate/ci_flags.h) */
    double ci_lo = e_lo.ci_lo, ci_hi = e_hi.ci_hi;
    unsigned ci_flags = e.ci_flags | e_lo.ci_flags | e_hi.ci_flags;
    const char *flag = NULL;
    if (ci_hi < 0.0 || ci_lo > 1.0) {
        flag = "the interval lies entirely outside [0, 1]: no AUC fits these sums (forged "
               "reports within the bounds, or too few examples for this noise)";
    }
    double scale = p.mechanism == DPM_MECH_ID_FEDAUC_RR ? 1.0 / (1.0 - 2.0 * p.rho) : 1.0;
    double shift = coll_bounds_fa_shift(&ph->influence, scale,
                                        agg.examples < ph->scores ? (double)d->d2_max / 2.0 : 0.0,
                                        e.auc_raw, e.p, e.n, e.c);
    jw_raw(w, ", \"valid\": %s, \"reason\": ", flag == NULL ? "true" : "false");
    if (flag == NULL && !isfinite(shift)) {
        flag = COLL_UNBOUNDED_REASON; /* valid, but its influence bound is null */
    }
    if (flag != NULL) {
        jw_str(w, flag);
    } else {
        jw_raw(w, "null");
    }
    num(w, "auc", e.auc);
    num(w, "auc_unbiased", e.auc_raw);
    num(w, "auc_noisy", e.auc_noisy);
    num(w, "sd", e.sd);
    jw_raw(w, ", \"ci\": [");
    jw_num(w, ci_lo, COLL_JSON_DIGITS);
    jw_raw(w, ", ");
    jw_num(w, ci_hi, COLL_JSON_DIGITS);
    jw_raw(w, "]");
    coll_ci_json(w, "ci", ci_flags);
    num(w, "events", e.events);
    num(w, "fieller_g", e.fieller_g);
    num(w, "confidence", confidence);
    num(w, "m", e.m);
    num(w, "positives", e.p);
    num(w, "negatives", e.n);
    jw_raw(w, ", \"dropout_examples\": %llu", (unsigned long long)(ph->scores - agg.examples));
    num(w, "dropout_bias_max", (e_hi.auc_raw - e_lo.auc_raw) / 2.0);
    /* null when one report could make the estimate undefined (bounds.h) */
    num(w, "max_auc_shift_one_report", shift);
    jw_raw(w, "}");
}
