/* SPDX-License-Identifier: Apache-2.0 */
/* Honest-report bounds (derivations in bounds.h). Host code: doubles for the tail bounds,
 * exact integers for the checks themselves. */
#include "mech/base/bounds.h"

#include <math.h>
#include <string.h>

#include "dpm/expert/fedauc.h"
#include "dpm/expert/report.h"

#define LN2 0.69314718055994530942
/* Accept a computed bound only if its log tail is below the target by this much: covers the
 * rounding of the double evaluations (their error is ~1e-13 here). */
#define LOG_MARGIN 1e-9
#define BOUND_MAX ((int64_t)1 << 62)

double coll_dlap_tail_log2(double t, int64_t k)
{
    /* Pr[|Z| > k] = 2 p^(k+1) / (1 + p), p = exp(-1/t): in natural log, ln 2 - (k+1)/t -
     * ln(1 + p) */
    double p = exp(-1.0 / t);
    return (LN2 - ((double)k + 1.0) / t - log1p(p)) / LN2;
}

int64_t coll_dlap_tail_bound(double t, double delta_log2)
{
    if (!(t > 0.0) || !isfinite(t) || !(delta_log2 < 0.0)) {
        return -1;
    }
    double p = exp(-1.0 / t);
    double x = ceil(t * (LN2 - log1p(p) - delta_log2 * LN2)) - 1.0;
    if (x < 0.0) {
        x = 0.0;
    }
    if (!(x < (double)BOUND_MAX)) {
        return -1;
    }
    int64_t k = (int64_t)x;
    while (k > 0 && coll_dlap_tail_log2(t, k - 1) <= delta_log2 - LOG_MARGIN / LN2) {
        k--; /* rounding made it one too large */
    }
    while (coll_dlap_tail_log2(t, k) > delta_log2 - LOG_MARGIN / LN2) {
        k++; /* or one too small */
    }
    return k;
}

/* n ln E[exp(lambda Z)] - lambda T, 0 < lambda < 1/t, in natural log. */
static double chernoff_exponent(double t, uint32_t n, double lambda, double T)
{
    double inv = 1.0 / t;
    /* ln((1 - p)^2 / ((1 - p e^l)(1 - p e^-l))) with 1 - p e^x = -expm1(x - 1/t) */
    double lnm = 2.0 * log(-expm1(-inv)) - log(-expm1(lambda - inv)) - log(-expm1(-lambda - inv));
    return (double)n * lnm - lambda * T;
}

/* ln of the two-sided Chernoff bound on Pr[|S_n| >= T]: golden-section search over lambda
 * (the exponent is convex in lambda). */
static double chernoff_ln(double t, uint32_t n, double T)
{
    const double g = 0.61803398874989484820;
    double lo = 0.0, hi = (1.0 / t) * (1.0 - 1e-12);
    double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    double fa = chernoff_exponent(t, n, a, T), fb = chernoff_exponent(t, n, b, T);
    for (int i = 0; i < 200; i++) {
        if (fa < fb) {
            hi = b;
            b = a;
            fb = fa;
            a = hi - g * (hi - lo);
            fa = chernoff_exponent(t, n, a, T);
        } else {
            lo = a;
            a = b;
            fa = fb;
            b = lo + g * (hi - lo);
            fb = chernoff_exponent(t, n, b, T);
        }
    }
    double best = fmin(fa, fb);
    return LN2 + (best < 0.0 ? best : 0.0);
}

int64_t coll_dlap_sum_bound(double t, uint32_t n, double delta_log2)
{
    if (!(t > 0.0) || !isfinite(t) || n == 0 || !(delta_log2 < 0.0)) {
        return -1;
    }
    double target = delta_log2 * LN2 - LOG_MARGIN;
    /* |S| >= T + 1 is the event: search the smallest integer T that passes */
    int64_t hi = 1;
    while (chernoff_ln(t, n, (double)hi + 1.0) > target) {
        if (hi >= BOUND_MAX / 2) {
            return -1;
        }
        hi *= 2;
    }
    int64_t lo = 0; /* invariant: hi passes; lo - 1 fails or lo == 0 */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (chernoff_ln(t, n, (double)mid + 1.0) <= target) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return hi;
}

/* The largest L1 norm of B cells in [-k, M + k] whose sum is in [lo, M + T]: with j cells at
 * -k the others hold at most min((B - j)(M + k), M + T + j k). */
static int64_t class_l1(uint32_t B, int64_t M, int64_t k, int64_t T)
{
    int64_t best = 0;
    for (uint32_t j = 0; j <= B; j++) {
        int64_t room = (int64_t)(B - j) * (M + k);
        int64_t sum_cap = M + T + (int64_t)j * k;
        int64_t pos = room < sum_cap ? room : sum_cap;
        int64_t l1 = pos + (int64_t)j * k;
        if (j == B) {
            l1 = (int64_t)B * k < T ? (int64_t)B * k : T; /* all negative: |sum| <= T */
        }
        if (l1 > best) {
            best = l1;
        }
    }
    return best;
}

static int set_capacity(coll_bounds_t *b)
{
    b->sum_capacity = b->row_max > 0 ? (uint64_t)(INT64_MAX / b->row_max) : 0;
    return 0;
}

/* ---- FedAUC ------------------------------------------------------------------------------- */

#define FA_CHECKS 2 /* noised values of a fedauc_lap report: localP, and localSum2 or T */
#define FA_DELTA_LOG2 (-(double)COLL_BOUNDS_FAIL_LOG2 - 1.0)

/* k of DLap(sens 2^16 / eps_part) at delta = 2^-41; 0 without noise (sens 0); -1 if the scale
 * is not one the SDK can draw (eps_part 0 with noise) or k reaches 2^62. */
static int64_t fa_k(uint64_t sens, uint64_t eps_part)
{
    if (sens == 0) {
        return 0;
    }
    if (eps_part == 0) {
        return -1;
    }
    return coll_dlap_tail_bound((double)sens * 65536.0 / (double)eps_part, FA_DELTA_LOG2);
}

/* a + b for a, b >= 0, or -1 past 2^62 (nothing an honest report carries comes near it). */
static int64_t add62(int64_t a, int64_t b)
{
    return a < 0 || b < 0 || a > BOUND_MAX - b ? -1 : a + b;
}

/* eps_p of a report of this campaign with sum S and sensitivity D (the SDK's rule, which
 * dpm_mech_check_report enforces). */
static uint32_t fa_eps_p(const coll_bounds_t *b, uint64_t S, uint64_t D)
{
    if (b->fa_variant == DPM_FEDAUC_ADAPTIVE) {
        return dpm_fedauc_adaptive_eps_p(S, D, b->fa_eps);
    }
    if (b->fa_variant == DPM_FEDAUC_ORTHOGONAL && D == 0) {
        return b->fa_eps;
    }
    return b->fa_eps_p;
}

static int fa_init(coll_bounds_t *b, const dpm_mech_t *m, uint32_t max_examples)
{
    if (max_examples == 0 || max_examples > DPM_FEDAUC_MAX_EXAMPLES) {
        return -1;
    }
    const dpm_fedauc_t *f = &m->params.fedauc;
    int rr = b->mech == DPM_MECH_ID_FEDAUC_RR;
    b->max_examples = max_examples;
    b->fa_eps = f->eps_implemented;
    b->fa_eps_p = rr ? 0u : f->eps_p;
    b->fa_variant = rr ? DPM_FEDAUC_VARIANT_NONE : (uint32_t)f->variant;
    b->fa_rho = rr ? (4294967296.0 - (double)f->rr.keep) / 4294967296.0 : 0.0;
    b->checks = rr ? 0 : FA_CHECKS;
    b->fail_log2 = rr ? -INFINITY : FA_DELTA_LOG2 + 1.0;
    /* row_max, amortized over a period's reports (at most M_max = COLL_FEDAUC_MAX_SCORES, one
     * per upload of at least one score): the sums of n and of the reports' M reach M_max and
     * M_max^2; |sum localP| <= sum n + reports k_P <= M_max (1 + k_P); |sum localSum2| <= sum S
     * + reports k_S <= M_max 2 M_max + M_max k_S (all the ranks of a ranking sum to M (M - 1)),
     * k_S at the largest sensitivity 2 (M_max - 1). So a period's sums stay below M_max row_max.
     * T and the variances are summed in doubles (fedauc_sums.h). */
    int64_t mmax = (int64_t)COLL_FEDAUC_MAX_SCORES, top = 2 * (mmax - 1);
    int64_t kp = 0, ks = 0;
    if (!rr) {
        uint32_t eps_p = b->fa_variant == DPM_FEDAUC_ADAPTIVE ? 1u : f->eps_p;
        kp = fa_k(1, eps_p);
        int t_form = b->fa_variant == DPM_FEDAUC_ORTHOGONAL || b->fa_variant == DPM_FEDAUC_ADAPTIVE;
        ks = t_form ? 0 : fa_k((uint64_t)top, b->fa_eps - f->eps_p);
        if (kp < 0 || ks < 0) {
            return -1;
        }
    }
    int64_t p_max = add62(1, kp), s_max = add62(2 * mmax, ks);
    if (p_max < 0 || s_max < 0) {
        return -1;
    }
    b->row_max = s_max > p_max ? s_max : p_max;
    b->row_max = b->row_max > mmax ? b->row_max : mmax;
    return set_capacity(b);
}

int coll_bounds_fa_range(const coll_bounds_t *b, const dpm_fedauc_report_t *r, uint64_t tpos,
                         coll_fa_range_t *out)
{
    memset(out, 0, sizeof(*out));
    if (b->mech != DPM_MECH_ID_FEDAUC_RR && b->mech != DPM_MECH_ID_FEDAUC_LAP) {
        return -1;
    }
    int64_t n = (int64_t)r->n, S = r->sum_rank2 > (uint64_t)BOUND_MAX ? -1 : (int64_t)r->sum_rank2;
    if (S < 0) {
        return -1;
    }
    out->t_form = b->fa_variant == DPM_FEDAUC_ORTHOGONAL || b->fa_variant == DPM_FEDAUC_ADAPTIVE;
    if (b->mech == DPM_MECH_ID_FEDAUC_RR) {
        out->p_hi = n;
        out->s_hi = S;
        return 0;
    }
    int64_t kp = fa_k(1, r->eps_p);
    int64_t ks = r->eps_p > b->fa_eps ? -1 : fa_k(r->sensitivity, b->fa_eps - r->eps_p);
    int64_t a = tpos > (uint64_t)BOUND_MAX ? -1 : (int64_t)tpos;
    int64_t p_hi = add62(n, kp), s_hi = add62(out->t_form ? a : S, ks);
    if (kp < 0 || ks < 0 || a < 0 || p_hi < 0 || s_hi < 0) {
        return -1;
    }
    out->p_lo = -kp;
    out->p_hi = p_hi;
    out->s_lo = out->t_form ? -s_hi : -ks;
    out->s_hi = s_hi;
    return 0;
}

int coll_bounds_fa_check(const coll_bounds_t *b, const dpm_fedauc_report_t *r, uint64_t tpos,
                         const char **why)
{
    coll_fa_range_t g;
    int t_form = b->fa_variant == DPM_FEDAUC_ORTHOGONAL || b->fa_variant == DPM_FEDAUC_ADAPTIVE;
    if (coll_bounds_fa_range(b, r, tpos, &g) != 0) {
        *why = "noise scale beyond the collector's sums";
        return -1;
    }
    if (r->local_p < g.p_lo || r->local_p > g.p_hi) {
        *why = "localP out of range";
        return -1;
    }
    int64_t v = t_form ? r->t : r->local_sum2;
    if (v < g.s_lo || v > g.s_hi) {
        *why = t_form ? "T out of range" : "localSum2 out of range";
        return -1;
    }
    return 0;
}

void coll_fa_influence_init(coll_fa_influence_t *f, const coll_bounds_t *b)
{
    memset(f, 0, sizeof(*f));
    f->t_form = b->fa_variant == DPM_FEDAUC_ORTHOGONAL || b->fa_variant == DPM_FEDAUC_ADAPTIVE;
}

int coll_fa_influence_add(coll_fa_influence_t *f, const coll_bounds_t *b, uint32_t n, uint64_t S,
                          uint32_t max_rank2, uint64_t D, uint64_t tpos, uint32_t M)
{
    if (n == 0 || M == 0) {
        return -1;
    }
    dpm_fedauc_report_t r;
    memset(&r, 0, sizeof(r));
    r.n = n;
    r.total = M;
    r.sum_rank2 = S;
    if (b->mech == DPM_MECH_ID_FEDAUC_LAP) {
        switch (b->fa_variant) {
        case DPM_FEDAUC_LOCAL: r.sensitivity = max_rank2; break;
        case DPM_FEDAUC_GLOBAL: r.sensitivity = 2u * ((uint64_t)M - 1u); break;
        default: r.sensitivity = D; break;
        }
        r.eps_p = fa_eps_p(b, S, r.sensitivity);
    }
    coll_fa_range_t g;
    if (coll_bounds_fa_range(b, &r, tpos, &g) != 0) {
        return -1;
    }
    /* the largest change between two accepted reports of this upload */
    double dp = (double)g.p_hi - (double)g.p_lo;
    double ds = ((double)g.s_hi - (double)g.s_lo) / 2.0; /* doubled ranks -> ranks */
    double rbar = 0.0;
    uint32_t k = 0;
    if (g.t_form) {
        ds /= (double)n; /* localSum2' = (T + S localP) / n */
        rbar = (double)S / (2.0 * (double)n);
        f->width = (double)M / COLL_FA_RBAR_BUCKETS;
        double at = rbar / f->width;
        k = at >= COLL_FA_RBAR_BUCKETS - 1 ? COLL_FA_RBAR_BUCKETS - 1 : (uint32_t)at;
    }
    if (f->b_n[k] == 0) {
        f->b_lo[k] = f->b_hi[k] = rbar;
    }
    f->b_n[k]++;
    f->b_lo[k] = rbar < f->b_lo[k] ? rbar : f->b_lo[k];
    f->b_hi[k] = rbar > f->b_hi[k] ? rbar : f->b_hi[k];
    f->b_dp[k] = dp > f->b_dp[k] ? dp : f->b_dp[k];
    f->b_ds[k] = ds > f->b_ds[k] ? ds : f->b_ds[k];
    f->dp = dp > f->dp ? dp : f->dp;
    f->ds = ds > f->ds ? ds : f->ds;
    f->uploads++;
    return 0;
}

double coll_bounds_fa_shift(const coll_fa_influence_t *f, double scale, double extra_ds, double auc,
                            double P, double N, double c)
{
    if (f->uploads == 0 || !isfinite(auc) || !isfinite(c)) {
        return NAN;
    }
    double dp = f->dp * scale;
    double den = fmin((P - dp) * (N + dp), (P + dp) * (N - dp));
    if (!(den > 0.0)) {
        return INFINITY;
    }
    double num = 0.0; /* the largest numerator over the buckets (rbar = 0 without t) */
    for (uint32_t k = 0; k < COLL_FA_RBAR_BUCKETS; k++) {
        if (f->b_n[k] == 0) {
            continue;
        }
        double bdp = f->b_dp[k] * scale, bds = f->b_ds[k] * scale + extra_ds * bdp;
        double slope = fmax(fabs(f->b_lo[k] - c), fabs(f->b_hi[k] - c));
        num = fmax(num, bds + slope * bdp + fabs(auc - 0.5) * bdp * bdp);
    }
    return num / den;
}

int coll_bounds_init(coll_bounds_t *b, const dpm_mech_t *m, uint32_t max_examples)
{
    memset(b, 0, sizeof(*b));
    b->mech = m->campaign.mechanism;
    if (b->mech == DPM_MECH_ID_TUPLE_MR) {
        b->checks = 0; /* {-1, +1} */
        b->fail_log2 = -INFINITY;
        b->row_max = 1;
        return set_capacity(b);
    }
    if (b->mech == DPM_MECH_ID_FEDAUC_RR || b->mech == DPM_MECH_ID_FEDAUC_LAP) {
        return fa_init(b, m, max_examples);
    }
    if (b->mech == DPM_MECH_ID_TUPLE_ML) {
        const dpm_tuple_t *t = &m->params.tuple;
        double scale = (double)t->value.lap.scale_num / (double)t->value.lap.scale_den;
        b->checks = t->nmetrics;
        double delta = -(double)COLL_BOUNDS_FAIL_LOG2 - log2((double)b->checks);
        b->noise_max = coll_dlap_tail_bound(scale, delta);
        if (b->noise_max < 0 || t->frac_bits > 30) {
            return -1;
        }
        b->value_max = ((int64_t)1 << t->frac_bits) + b->noise_max;
        b->fail_log2 = coll_dlap_tail_log2(scale, b->noise_max) + log2((double)b->checks);
        b->row_max = b->value_max;
        return set_capacity(b);
    }
    if (b->mech == DPM_MECH_ID_ROC_HIST) {
        if (max_examples == 0 || max_examples > COLL_MAX_EXAMPLES_LIMIT) {
            return -1;
        }
        const dpm_laplace_t *lap = &m->params.roc_hist.lap;
        double scale = (double)lap->scale_num / (double)lap->scale_den;
        uint32_t B = m->params.roc_hist.bins.count;
        b->bins = B;
        b->max_examples = max_examples;
        b->checks = 2 * B + 3;
        double delta = -(double)COLL_BOUNDS_FAIL_LOG2 - log2((double)b->checks);
        int64_t k = coll_dlap_tail_bound(scale, delta);
        int64_t tb = coll_dlap_sum_bound(scale, B, delta);
        int64_t t2b = coll_dlap_sum_bound(scale, 2 * B, delta);
        if (k < 0 || tb < 0 || t2b < 0) {
            return -1;
        }
        int64_t M = (int64_t)max_examples;
        b->noise_max = k;
        b->cell_lo = -k;
        b->cell_hi = M + k;
        b->class_lo = -tb;
        b->class_hi = M + tb;
        b->total_lo = -t2b;
        b->total_hi = M + t2b;
        b->class_l1_max = class_l1(B, M, k, tb);
        /* the checks' own failure probabilities, summed (each <= delta by construction) */
        b->fail_log2 = delta + log2((double)b->checks);
        /* per-group campaigns also sum products of two cells (agg_rocg.h) */
        int64_t cell = M + k;
        b->row_max = m->params.roc_hist.groups >= 2 ? cell * cell : cell;
        return set_capacity(b);
    }
    if (b->mech == DPM_MECH_ID_DPAUC) {
        if (max_examples == 0 || max_examples > COLL_MAX_EXAMPLES_LIMIT) {
            return -1;
        }
        const dpm_laplace_t *lap = &m->params.dpauc.lap;
        b->bins = m->params.dpauc.n; /* thresholds */
        b->max_examples = max_examples;
        b->checks = 4 * b->bins;
        double delta = -(double)COLL_BOUNDS_FAIL_LOG2 - log2((double)b->checks);
        int64_t k = coll_dlap_tail_bound((double)lap->scale_num / (double)lap->scale_den, delta);
        if (k < 0) {
            return -1;
        }
        b->noise_max = k;
        b->cell_lo = -k;
        b->cell_hi = (int64_t)max_examples + k;
        b->fail_log2 = delta + log2((double)b->checks);
        b->row_max = b->cell_hi;
        return set_capacity(b);
    }
    if (b->mech == DPM_MECH_ID_USTAT_BINS || b->mech == DPM_MECH_ID_USTAT_TREE) {
        b->checks = 0; /* categorical: dpm_mech_check_report pins every field to its domain */
        b->fail_log2 = -INFINITY;
        b->row_max = 1; /* counts and Hadamard signs */
        return set_capacity(b);
    }
    return -1;
}

const char *coll_bounds_capacity_why(const coll_bounds_t *b)
{
    int fa = b->mech == DPM_MECH_ID_FEDAUC_RR || b->mech == DPM_MECH_ID_FEDAUC_LAP;
    if (fa && b->sum_capacity < COLL_FEDAUC_MAX_SCORES) {
        return "its reports' noise bound could overflow the exact sums of one period (2^24 "
               "reports): raise eps or p_share, or lower max_examples";
    }
    if (!fa && b->sum_capacity < COLL_SUM_MIN_CAPACITY) {
        return "its reports' bound could overflow the exact sums before 2^31 reports of one "
               "period: raise eps (or lower max_examples)";
    }
    return NULL;
}

int coll_bounds_check(const coll_bounds_t *b, const dpm_report_t *r, const char **why)
{
    if (b->mech == DPM_MECH_ID_TUPLE_ML) {
        for (uint32_t i = 0; i < r->body.tuple.nmetrics; i++) {
            int64_t v = r->body.tuple.value[i];
            if (v > b->value_max || v < -b->value_max) {
                *why = "value out of range";
                return -1;
            }
        }
        return 0;
    }
    if (b->mech == DPM_MECH_ID_ROC_HIST) {
        int64_t sum[2] = {0, 0};
        for (int cls = 0; cls < 2; cls++) {
            const int32_t *cells = cls ? r->body.roc_hist.neg : r->body.roc_hist.pos;
            for (uint32_t i = 0; i < b->bins; i++) {
                if (cells[i] < b->cell_lo || cells[i] > b->cell_hi) {
                    *why = "histogram cell out of range";
                    return -1;
                }
                sum[cls] += cells[i];
            }
            if (sum[cls] < b->class_lo || sum[cls] > b->class_hi) {
                *why = "histogram sum out of range";
                return -1;
            }
        }
        if (sum[0] + sum[1] < b->total_lo || sum[0] + sum[1] > b->total_hi) {
            *why = "histogram sum out of range";
            return -1;
        }
        return 0;
    }
    if (b->mech == DPM_MECH_ID_DPAUC) {
        const dpm_dpauc_report_t *d = &r->body.dpauc;
        const int32_t *cells[4] = {d->tp, d->fp, d->tn, d->fn};
        for (int c = 0; c < 4; c++) {
            for (uint32_t i = 0; i < b->bins; i++) {
                if (cells[c][i] < b->cell_lo || cells[c][i] > b->cell_hi) {
                    *why = "count out of range";
                    return -1;
                }
            }
        }
        return 0;
    }
    return 0; /* tuple_mr, ustat_*: the SDK's check already pins values to their domain */
}

double coll_bounds_mean_shift(const coll_bounds_t *b, const dpm_disp_params_t *p, double n_hat,
                              double mean)
{
    double gain = p->mech == DPM_DISP_MR ? p->c : 1.0;
    double vmax =
        b->mech == DPM_MECH_ID_TUPLE_ML ? ldexp((double)b->value_max, -(int)p->frac_bits) : 1.0;
    double delta_n = (1.0 - p->q) / (p->a - p->q);
    double n2 = n_hat + delta_n;
    if (!(n2 > 0.0)) {
        return NAN;
    }
    return (vmax / (p->a * gain) + fabs(2.0 * mean - 1.0) * delta_n) / (2.0 * n2);
}

double coll_bounds_mean_shift_other(const dpm_disp_params_t *p, double n_hat, double mean)
{
    double d = p->q / (p->a - p->q), n2 = n_hat - d;
    return n2 > 0.0 ? fabs(2.0 * mean - 1.0) * d / (2.0 * n2) : NAN;
}

double coll_bounds_auc_shift(const coll_bounds_t *b, double P, double N)
{
    if (!(P > 0.0) || !(N > 0.0)) {
        return NAN;
    }
    return (double)b->class_l1_max * (1.0 / P + 1.0 / N);
}
