/* SPDX-License-Identifier: Apache-2.0 */
/* Server-side analytics of the tuple mechanisms M_R and M_L (see disparity.h and
 * sdk/docs/tuple.md §Estimators and variance, sdk/docs/tuple.md §Table 1,
 * sdk/docs/tuple.md §Table 2). */
#include "estimate/disparity.h"

#include <math.h>
#include <string.h>

#include "common/prob.h"
#include "estimate/ci_flags.h"

#define TWO32 4294967296.0
#define LN2 0.69314718055994530942

/* ---- small helpers ------------------------------------------------------------------------ */

static int is_mech(dpm_disp_mech_t mech)
{
    return mech == DPM_DISP_MR || mech == DPM_DISP_ML;
}

static int is_split(dpm_disp_split_t split)
{
    return split == DPM_DISP_SPLIT_CORRECT || split == DPM_DISP_SPLIT_PAPER;
}

static int is_d(uint32_t d)
{
    return d >= 2 && d <= DPM_DISP_MAX_GROUPS;
}

static int is_pos(double x)
{
    return isfinite(x) && x > 0.0;
}

static int is_prob(double x)
{
    return isfinite(x) && x > 0.0 && x < 1.0;
}

static double clamp(double x, double lo, double hi)
{
    return x < lo ? lo : (x > hi ? hi : x);
}

/* ln(1 + e^x) without overflow. */
static double log1p_exp(double x)
{
    return x > 0.0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* GRR over d categories with ε' = eps1 (unquantized): a = 1 / (1 + (d-1) e^-eps1), q = e^-eps1 a.
 * Written with e^-eps1 so that large ε' neither overflows nor cancels. */
static void grr_probs(double eps1, uint32_t d, double *a, double *q)
{
    double x = exp(-eps1);
    *a = 1.0 / (1.0 + (double)(d - 1) * x);
    *q = x * *a;
}

static void params_reset(dpm_disp_params_t *p, dpm_disp_mech_t mech, dpm_disp_source_t source,
                         uint32_t d)
{
    memset(p, 0, sizeof(*p));
    p->mech = mech;
    p->source = source;
    p->d = d;
    p->c = NAN;
    p->eps2_eff = NAN;
    p->t_kept = NAN;
    p->t_flip = NAN;
    p->eps = NAN;
    p->eps1 = NAN;
    p->eps2 = NAN;
    p->k = NAN;
}

static int grr_thresholds_ok(uint32_t d, uint32_t keep, uint32_t other)
{
    uint64_t total = (uint64_t)keep + (uint64_t)(d - 1) * other;
    return other >= 1 && keep > other && total == ((uint64_t)1 << 32);
}

static void set_group_thresholds(dpm_disp_params_t *p, uint32_t keep, uint32_t other)
{
    p->keep_g = keep;
    p->other_g = other;
    p->a = keep / TWO32;
    p->q = other / TWO32;
    p->eps1_eff = log((double)keep / (double)other);
}

/* The value RR as thresholds: c = 2b - 1 exactly (keep_v - other_v) / 2^32. */
static void set_value_threshold(dpm_disp_params_t *p, uint32_t keep_v)
{
    double other_v = TWO32 - (double)keep_v;
    p->keep_v = keep_v;
    p->c = ((double)keep_v - other_v) / TWO32;
    p->eps2_eff = log((double)keep_v / other_v);
}

static void set_laplace(dpm_disp_params_t *p, double t_kept, double t_flip, uint32_t frac_bits,
                        int on_grid)
{
    p->t_kept = t_kept;
    p->t_flip = t_flip;
    p->frac_bits = frac_bits;
    p->on_grid = on_grid;
}

/* ---- parameter sets ------------------------------------------------------------------------ */

dpm_status_t dpm_disp_params_campaign_mr(dpm_disp_params_t *p, uint32_t d, uint32_t keep_g,
                                         uint32_t other_g, uint32_t keep_v)
{
    if (p == NULL || !is_d(d) || !grr_thresholds_ok(d, keep_g, other_g) ||
        keep_v <= (UINT32_C(1) << 31)) {
        return DPM_ERR_PARAM;
    }
    params_reset(p, DPM_DISP_MR, DPM_DISP_FROM_CAMPAIGN, d);
    set_group_thresholds(p, keep_g, other_g);
    set_value_threshold(p, keep_v);
    return DPM_OK;
}

dpm_status_t dpm_disp_params_campaign_ml(dpm_disp_params_t *p, uint32_t d, uint32_t keep_g,
                                         uint32_t other_g, double t_kept, double t_flip,
                                         uint32_t frac_bits)
{
    if (p == NULL || !is_d(d) || !grr_thresholds_ok(d, keep_g, other_g) || !is_pos(t_kept) ||
        !is_pos(t_flip) || frac_bits > DPM_DISP_MAX_FRAC_BITS) {
        return DPM_ERR_PARAM;
    }
    params_reset(p, DPM_DISP_ML, DPM_DISP_FROM_CAMPAIGN, d);
    set_group_thresholds(p, keep_g, other_g);
    set_laplace(p, t_kept, t_flip, frac_bits, 1);
    return DPM_OK;
}

dpm_status_t dpm_disp_split_eps(dpm_disp_mech_t mech, dpm_disp_split_t split, double eps,
                                double *eps1, double *eps2, double *k)
{
    if (!is_mech(mech) || !is_split(split) || !is_pos(eps) || eps1 == NULL || eps2 == NULL ||
        k == NULL) {
        return DPM_ERR_PARAM;
    }
    *eps2 = eps;
    if (mech == DPM_DISP_MR) {
        /* correct: e^eps1 = (1 + e^eps) / 2 makes the cross-group ratio 2ab/q exactly e^eps */
        *eps1 = split == DPM_DISP_SPLIT_PAPER ? eps : log1p_exp(eps) - LN2;
        *k = NAN;
    } else if (split == DPM_DISP_SPLIT_CORRECT) {
        *eps1 = eps / 2.0;
        *k = 2.0;
    } else if (eps >= 2.0 / 3.0) { /* paper's "M_L opt." (App. B, Eq. 21) */
        *eps1 = log(2.0 / eps) + eps - 1.0;
        *k = eps;
    } else {
        *eps1 = log(3.0) - eps / 2.0;
        *k = 2.0 / 3.0;
    }
    return DPM_OK;
}

dpm_status_t dpm_disp_grr_thresholds(double eps, uint32_t d, uint32_t *keep, uint32_t *other)
{
    if (!is_pos(eps) || !is_d(d) || keep == NULL || other == NULL) {
        return DPM_ERR_PARAM;
    }
    double a, q;
    grr_probs(eps, d, &a, &q);
    double o = ceil(q * TWO32); /* q 2^32 = 2^32 / (e^eps + d - 1) */
    if (o < 1.0) {
        o = 1.0;
    }
    double k = TWO32 - (double)(d - 1) * o;
    if (!(k > o)) {
        return DPM_ERR_RANGE;
    }
    *keep = (uint32_t)k;
    *other = (uint32_t)o;
    return DPM_OK;
}

static dpm_status_t params_correct(dpm_disp_params_t *p, dpm_disp_mech_t mech, uint32_t d,
                                   double eps, uint32_t frac_bits)
{
    double eps1, eps2, k;
    uint32_t keep_g, other_g, keep_v = 0, other_v;
    dpm_status_t st = dpm_disp_split_eps(mech, DPM_DISP_SPLIT_CORRECT, eps, &eps1, &eps2, &k);
    if (st == DPM_OK) {
        st = dpm_disp_grr_thresholds(eps1, d, &keep_g, &other_g);
    }
    if (st == DPM_OK && mech == DPM_DISP_MR) {
        st = dpm_disp_grr_thresholds(eps2, 2, &keep_v, &other_v);
    }
    if (st != DPM_OK) {
        return st;
    }
    params_reset(p, mech, DPM_DISP_FROM_CORRECT, d);
    set_group_thresholds(p, keep_g, other_g);
    if (mech == DPM_DISP_MR) {
        set_value_threshold(p, keep_v);
    } else {
        double t = ldexp(2.0, (int)frac_bits) / eps2; /* sensitivity 2 = 2^(F+1) grid units */
        set_laplace(p, t, t, frac_bits, 1);
    }
    p->eps = eps;
    p->eps1 = eps1;
    p->eps2 = eps2;
    p->k = k;
    return DPM_OK;
}

dpm_status_t dpm_disp_params_from_split(dpm_disp_params_t *p, dpm_disp_mech_t mech, uint32_t d,
                                        double eps1, double eps2, double k)
{
    if (p == NULL || !is_mech(mech) || !is_d(d) || !is_pos(eps1) || !is_pos(eps2) ||
        (mech == DPM_DISP_ML && !is_pos(k))) {
        return DPM_ERR_PARAM;
    }
    params_reset(p, mech, DPM_DISP_FROM_SPLIT, d);
    grr_probs(eps1, d, &p->a, &p->q);
    p->eps1_eff = eps1;
    if (mech == DPM_DISP_MR) {
        p->c = tanh(eps2 / 2.0); /* 2b - 1 with b = e^eps2 / (1 + e^eps2) */
        p->eps2_eff = eps2;
    } else {
        set_laplace(p, 2.0 / eps2, k / eps2, 0, 0); /* value units: F = 0 */
        p->k = k;
    }
    p->eps1 = eps1;
    p->eps2 = eps2;
    return DPM_OK;
}

static dpm_status_t params_paper(dpm_disp_params_t *p, dpm_disp_mech_t mech, uint32_t d, double eps)
{
    double eps1, eps2, k;
    dpm_status_t st = dpm_disp_split_eps(mech, DPM_DISP_SPLIT_PAPER, eps, &eps1, &eps2, &k);
    /* "opt." keeps eps1 >= ln 2 > 0 for every eps, so from_split accepts it */
    if (st == DPM_OK) {
        st = dpm_disp_params_from_split(p, mech, d, eps1, eps2, mech == DPM_DISP_ML ? k : 1.0);
    }
    if (st == DPM_OK) {
        p->source = DPM_DISP_FROM_PAPER;
        p->eps = eps;
    }
    return st;
}

dpm_status_t dpm_disp_params_from_eps(dpm_disp_params_t *p, dpm_disp_mech_t mech,
                                      dpm_disp_split_t split, uint32_t d, double eps,
                                      uint32_t frac_bits)
{
    if (p == NULL || !is_mech(mech) || !is_split(split) || !is_d(d) || !is_pos(eps) ||
        frac_bits > DPM_DISP_MAX_FRAC_BITS) {
        return DPM_ERR_PARAM;
    }
    dpm_disp_params_t tmp;
    dpm_status_t st = split == DPM_DISP_SPLIT_CORRECT
                          ? params_correct(&tmp, mech, d, eps, frac_bits)
                          : params_paper(&tmp, mech, d, eps);
    if (st == DPM_OK) {
        *p = tmp;
    }
    return st;
}

/* ---- true LDP levels -------------------------------------------------------------------- */

/* max{eps2, eps1 + ln(2b), -eps1 - ln(2(1-b))} with b = 1 / (1 + e^-eps2): the ratios
 * b/(1-b), 2ab/q and q/(2a(1-b)) of M_R's output probabilities
 * (sdk/docs/tuple.md §M_R and its true privacy level). */
static double true_ldp_mr(double eps1, double eps2)
{
    double ln_2b = LN2 - log1p_exp(-eps2);
    double ln_2_1mb = LN2 - log1p_exp(eps2);
    return fmax(eps2, fmax(eps1 + ln_2b, -eps1 - ln_2_1mb));
}

dpm_status_t dpm_disp_true_ldp_mr(double eps1, double eps2, double *eps_true)
{
    if (!is_pos(eps1) || !is_pos(eps2) || eps_true == NULL) {
        return DPM_ERR_PARAM;
    }
    *eps_true = true_ldp_mr(eps1, eps2);
    return DPM_OK;
}

dpm_status_t dpm_disp_true_ldp_ml(double eps1, double eps2, double k, double *eps_true)
{
    if (!is_pos(eps1) || !is_pos(eps2) || !is_pos(k) || eps_true == NULL) {
        return DPM_ERR_PARAM;
    }
    *eps_true = k == 2.0 ? fmax(eps2, eps1 + eps2 / 2.0) : INFINITY;
    return DPM_OK;
}

dpm_status_t dpm_disp_params_true_ldp(const dpm_disp_params_t *p, double *eps_true)
{
    if (p == NULL || !is_mech(p->mech) || eps_true == NULL) {
        return DPM_ERR_PARAM;
    }
    if (p->mech == DPM_DISP_MR) {
        *eps_true = true_ldp_mr(p->eps1_eff, p->eps2_eff);
    } else if (p->t_kept != p->t_flip) {
        *eps_true = INFINITY;
    } else {
        double unit = ldexp(1.0, (int)p->frac_bits) / p->t_kept; /* |Δv| = 1 in the exponent */
        *eps_true = fmax(2.0 * unit, p->eps1_eff + unit);
    }
    return DPM_OK;
}

/* ---- noise -------------------------------------------------------------------------------- */

static double noise_variance(const dpm_disp_params_t *p, int flipped)
{
    double t = flipped ? p->t_flip : p->t_kept;
    double grid_var = p->on_grid ? prob_dlap_var(t) : 2.0 * t * t;
    return ldexp(grid_var, -2 * (int)p->frac_bits);
}

dpm_status_t dpm_disp_value_noise_variance(const dpm_disp_params_t *p, int flipped, double *var)
{
    if (p == NULL || p->mech != DPM_DISP_ML || var == NULL) {
        return DPM_ERR_PARAM;
    }
    *var = noise_variance(p, flipped);
    return DPM_OK;
}

/* Randomized rounding of v to the grid adds at most (1/2 grid unit)^2 of variance. */
static double rounding_variance(const dpm_disp_params_t *p)
{
    return p->on_grid ? ldexp(0.25, -2 * (int)p->frac_bits) : 0.0;
}

/* ---- 128-bit accumulator ------------------------------------------------------------------ */

static void acc_add(dpm_disp_acc_t *acc, int64_t v)
{
    uint64_t lo = acc->lo + (uint64_t)v;
    uint64_t carry = lo < acc->lo ? 1u : 0u;
    uint64_t sign_ext = v < 0 ? UINT64_MAX : 0u;
    acc->lo = lo;
    acc->hi = acc->hi + sign_ext + carry;
}

static void acc_merge(dpm_disp_acc_t *acc, const dpm_disp_acc_t *other)
{
    uint64_t lo = acc->lo + other->lo;
    uint64_t carry = lo < acc->lo ? 1u : 0u;
    acc->lo = lo;
    acc->hi = acc->hi + other->hi + carry;
}

/* Converts through the magnitude: adding a negative high word to a positive low word would
 * cancel catastrophically. */
static double acc_to_double(const dpm_disp_acc_t *acc)
{
    int negative = (acc->hi >> 63) != 0;
    uint64_t lo = acc->lo, hi = acc->hi;
    if (negative) { /* -x in 128 bits: the high word takes the carry of -lo (lo == 0) */
        uint64_t carry = lo == 0 ? 1u : 0u;
        lo = ~lo + 1u;
        hi = ~hi + carry;
    }
    double mag = (double)hi * 18446744073709551616.0 + (double)lo;
    return negative ? -mag : mag;
}

/* Neumaier compensated summation: sums of 10^9 squares stay accurate to a few ulps. */
static void neumaier_add(double *sum, double *comp, double x)
{
    double t = *sum + x;
    if (fabs(*sum) >= fabs(x)) {
        *comp += (*sum - t) + x;
    } else {
        *comp += (x - t) + *sum;
    }
    *sum = t;
}

/* ---- aggregation ---------------------------------------------------------------------------- */

dpm_status_t dpm_disp_agg_init(dpm_disp_agg_t *agg, const dpm_disp_params_t *p)
{
    if (agg == NULL || p == NULL || !is_mech(p->mech) || !is_d(p->d)) {
        return DPM_ERR_PARAM;
    }
    memset(agg, 0, sizeof(*agg));
    agg->mech = p->mech;
    agg->d = p->d;
    agg->frac_bits = p->mech == DPM_DISP_ML ? p->frac_bits : 0;
    return DPM_OK;
}

static int agg_ok(const dpm_disp_agg_t *agg)
{
    return agg != NULL && is_mech(agg->mech) && is_d(agg->d);
}

dpm_status_t dpm_disp_agg_add(dpm_disp_agg_t *agg, uint32_t group, int64_t value)
{
    if (!agg_ok(agg) || group >= agg->d ||
        (agg->mech == DPM_DISP_MR && value != 1 && value != -1)) {
        return DPM_ERR_PARAM;
    }
    if (agg->total == UINT64_MAX) {
        return DPM_ERR_RANGE;
    }
    agg->total++;
    agg->count[group]++;
    acc_add(&agg->sum[group], value);
    neumaier_add(&agg->sumsq[group], &agg->sumsq_comp[group], (double)value * (double)value);
    return DPM_OK;
}

dpm_status_t dpm_disp_agg_merge(dpm_disp_agg_t *dst, const dpm_disp_agg_t *src)
{
    if (!agg_ok(dst) || !agg_ok(src) || dst->mech != src->mech || dst->d != src->d ||
        dst->frac_bits != src->frac_bits) {
        return DPM_ERR_PARAM;
    }
    if (dst->total > UINT64_MAX - src->total) {
        return DPM_ERR_RANGE;
    }
    dst->total += src->total;
    for (uint32_t g = 0; g < dst->d; g++) {
        dst->count[g] += src->count[g];
        acc_merge(&dst->sum[g], &src->sum[g]);
        neumaier_add(&dst->sumsq[g], &dst->sumsq_comp[g], src->sumsq[g]);
        neumaier_add(&dst->sumsq[g], &dst->sumsq_comp[g], src->sumsq_comp[g]);
    }
    return DPM_OK;
}

static int agg_matches(const dpm_disp_agg_t *agg, const dpm_disp_params_t *p)
{
    return agg_ok(agg) && p != NULL && agg->mech == p->mech && agg->d == p->d &&
           agg->frac_bits == (p->mech == DPM_DISP_ML ? p->frac_bits : 0u);
}

/* S_G in value units: grid integers times 2^-F (F = 0 for M_R's ±1). */
static double agg_sum_value(const dpm_disp_agg_t *agg, uint32_t g)
{
    return ldexp(acc_to_double(&agg->sum[g]), -(int)agg->frac_bits);
}

static double agg_sumsq_value(const dpm_disp_agg_t *agg, uint32_t g)
{
    return ldexp(agg->sumsq[g] + agg->sumsq_comp[g], -2 * (int)agg->frac_bits);
}

dpm_status_t dpm_disp_agg_sum(const dpm_disp_agg_t *agg, uint32_t group, double *sum)
{
    if (!agg_ok(agg) || group >= agg->d || sum == NULL) {
        return DPM_ERR_PARAM;
    }
    *sum = agg_sum_value(agg, group);
    return DPM_OK;
}

/* ---- estimators -------------------------------------------------------------------------- */

/* c of the mean's divisor a c n: 2b - 1 for M_R, 1 for M_L. */
static double value_gain(const dpm_disp_params_t *p)
{
    return p->mech == DPM_DISP_MR ? p->c : 1.0;
}

static double group_size_estimate(const dpm_disp_params_t *p, uint64_t n_rep, uint64_t total)
{
    return ((double)n_rep - (double)total * p->q) / (p->a - p->q);
}

dpm_status_t dpm_disp_group_size(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg,
                                 uint32_t group, double *n_hat)
{
    if (!agg_matches(agg, p) || group >= p->d || n_hat == NULL) {
        return DPM_ERR_PARAM;
    }
    *n_hat = group_size_estimate(p, agg->count[group], agg->total);
    return DPM_OK;
}

static double group_mean(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg, uint32_t g,
                         double n)
{
    return agg_sum_value(agg, g) / (p->a * value_gain(p) * n);
}

dpm_status_t dpm_disp_group_mean(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg,
                                 uint32_t group, double n, double *mean)
{
    if (!agg_matches(agg, p) || group >= p->d || !is_pos(n) || mean == NULL) {
        return DPM_ERR_PARAM;
    }
    *mean = group_mean(p, agg, group, n);
    return DPM_OK;
}

static double worst_nu2(dpm_disp_mech_t mech)
{
    return mech == DPM_DISP_ML ? 1.0 : 0.0;
}

/* Var[S_G] in value units² (sdk/docs/tuple.md §Estimators and variance, d-general): in-group
 * reports land with probability a, out-of-group ones with probability q and carry only noise. */
static double sum_variance(const dpm_disp_params_t *p, double K, double n, double nu2)
{
    double a = p->a, q = p->q, rest = fmax(K - n, 0.0);
    if (p->mech == DPM_DISP_MR) {
        double ac = a * p->c;
        return a * n - ac * ac * n * nu2 + rest * q;
    }
    double one_minus_a = (double)(p->d - 1) * q; /* not 1 - a: no cancellation as a -> 1 */
    double kept = noise_variance(p, 0) + rounding_variance(p);
    return a * one_minus_a * n * nu2 + a * n * kept + rest * q * noise_variance(p, 1);
}

static double mean_variance(const dpm_disp_params_t *p, double K, double n, double nu2)
{
    double div = p->a * value_gain(p) * n;
    return sum_variance(p, K, n, nu2) / (div * div);
}

/* a = 1, q = 0 is legal: unquantized sets at large ε round to it. */
static int params_ok(const dpm_disp_params_t *p)
{
    return p != NULL && is_mech(p->mech) && is_d(p->d) && p->a > 0.0 && p->a <= 1.0 &&
           p->q >= 0.0 && p->q < p->a && (p->mech == DPM_DISP_ML || (p->c > 0.0 && p->c <= 1.0));
}

static int nu2_ok(double nu2)
{
    return nu2 == DPM_DISP_NU2_WORST || (nu2 >= 0.0 && nu2 <= 1.0);
}

static double resolve_nu2(dpm_disp_mech_t mech, double nu2)
{
    return nu2 == DPM_DISP_NU2_WORST ? worst_nu2(mech) : nu2;
}

dpm_status_t dpm_disp_mean_variance(const dpm_disp_params_t *p, double K, double n, double nu2,
                                    double *var)
{
    if (!params_ok(p) || !is_pos(K) || !is_pos(n) || n > K || !nu2_ok(nu2) || var == NULL) {
        return DPM_ERR_PARAM;
    }
    *var = mean_variance(p, K, n, resolve_nu2(p->mech, nu2));
    return DPM_OK;
}

dpm_status_t dpm_disp_gap_mse(const dpm_disp_params_t *p, double K, double n_g, double n_h,
                              double nu2_g, double nu2_h, double *mse)
{
    if (!params_ok(p) || !is_pos(K) || !is_pos(n_g) || !is_pos(n_h) ||
        n_g + n_h > K * (1.0 + 1e-12) || !nu2_ok(nu2_g) || !nu2_ok(nu2_h) || mse == NULL) {
        return DPM_ERR_PARAM;
    }
    *mse = mean_variance(p, K, n_g, resolve_nu2(p->mech, nu2_g)) +
           mean_variance(p, K, n_h, resolve_nu2(p->mech, nu2_h));
    return DPM_OK;
}

dpm_status_t dpm_disp_nu2_bound(dpm_disp_mech_t mech, int worst, double *nu2)
{
    if (!is_mech(mech) || nu2 == NULL) {
        return DPM_ERR_PARAM;
    }
    *nu2 = worst ? worst_nu2(mech) : 1.0 - worst_nu2(mech);
    return DPM_OK;
}

/* ---- full estimate ------------------------------------------------------------------------ */

/* The moments the delta method needs (sdk/docs/tuple.md §Estimators and variance: its model, one
 * client at a time):
 *   Var(n'_G)        = n a (1 - a) + (K - n) q (1 - q)
 *   Cov(S_G, n'_G)   = a c n m (1 - a)      (S_G is nonzero only when the report lands in G)
 *   Cov(S_G, n'_H)   = -a c n_G m_G q
 *   Cov(n'_G, n'_H)  = -(a q (n_G + n_H) + q² (K - n_G - n_H))
 *   Cov(S_G, S_H)    = 0 */
static double count_variance(const dpm_disp_params_t *p, double K, double n)
{
    double one_minus_a = (double)(p->d - 1) * p->q;
    return n * p->a * one_minus_a + fmax(K - n, 0.0) * p->q * (1.0 - p->q);
}

/* Gradient of m̂ = S / (a c n̂), n̂ = (n' - K q) / (a - q), at (n, m). */
typedef struct {
    double ds; /* ∂m̂/∂S */
    double dn; /* ∂m̂/∂n' (0 when n is known) */
} grad_t;

static grad_t mean_gradient(const dpm_disp_params_t *p, double n, double m, int estimated)
{
    grad_t g;
    g.ds = 1.0 / (p->a * value_gain(p) * n);
    g.dn = estimated ? -m / (n * (p->a - p->q)) : 0.0;
    return g;
}

static double group_variance(const dpm_disp_params_t *p, double K, const dpm_disp_group_est_t *e,
                             int estimated)
{
    double m = clamp(e->mean, -1.0, 1.0);
    grad_t g = mean_gradient(p, e->n, m, estimated);
    double one_minus_a = (double)(p->d - 1) * p->q;
    double cov_sn = p->a * value_gain(p) * e->n * m * one_minus_a;
    return g.ds * g.ds * sum_variance(p, K, e->n, e->nu2) + 2.0 * g.ds * g.dn * cov_sn +
           g.dn * g.dn * count_variance(p, K, e->n);
}

static double plugin_nu2(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg, uint32_t g,
                         double n, double mean)
{
    double K = (double)agg->total;
    if (p->mech == DPM_DISP_MR) {
        return clamp(mean * mean - mean_variance(p, K, n, 0.0), 0.0, 1.0);
    }
    /* the rounding to the grid stays in: ν² errs high, the variance on the safe side */
    double noise = p->a * n * noise_variance(p, 0) + fmax(K - n, 0.0) * p->q * noise_variance(p, 1);
    double sumsq = agg_sumsq_value(agg, g);
    return clamp((sumsq - noise) / (p->a * n), 0.0, 1.0);
}

static int estimate_args_ok(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg,
                            const double *n_true, const double *nu2)
{
    if (!params_ok(p) || !agg_matches(agg, p)) {
        return 0;
    }
    for (uint32_t g = 0; g < p->d; g++) {
        if (n_true != NULL && (!is_pos(n_true[g]) || n_true[g] > (double)agg->total)) {
            return 0;
        }
        if (nu2 != NULL && !nu2_ok(nu2[g]) && nu2[g] != DPM_DISP_NU2_PLUGIN) {
            return 0;
        }
    }
    return 1;
}

static void estimate_group(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg, uint32_t g,
                           double n, double nu2_arg, int estimated, dpm_disp_group_est_t *e)
{
    e->n_reported = agg->count[g];
    e->n = n;
    e->valid = n > 0.0;
    if (!e->valid) {
        e->mean = NAN;
        e->nu2 = NAN;
        e->var = NAN;
        return;
    }
    e->mean = group_mean(p, agg, g, n);
    e->nu2 = nu2_arg == DPM_DISP_NU2_PLUGIN ? plugin_nu2(p, agg, g, n, e->mean)
                                            : resolve_nu2(p->mech, nu2_arg);
    e->nu2_given = nu2_arg >= 0.0;
    e->var = group_variance(p, (double)agg->total, e, estimated);
}

dpm_status_t dpm_disp_estimate(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg,
                               const double *n_true, const double *nu2, dpm_disp_estimate_t *est)
{
    if (est == NULL || !estimate_args_ok(p, agg, n_true, nu2)) {
        return DPM_ERR_PARAM;
    }
    if (agg->total == 0) {
        return DPM_ERR_UNDEFINED;
    }
    memset(est, 0, sizeof(*est));
    est->params = *p;
    est->total = agg->total;
    est->sizes_estimated = n_true == NULL;
    for (uint32_t g = 0; g < p->d; g++) {
        double n = n_true != NULL ? n_true[g] : group_size_estimate(p, agg->count[g], agg->total);
        double nu2_g = nu2 != NULL ? nu2[g] : DPM_DISP_NU2_WORST;
        estimate_group(p, agg, g, n, nu2_g, est->sizes_estimated, &est->group[g]);
    }
    return DPM_OK;
}

/* Cov(m̂_G, m̂_H) from the shared GRR counts; zero when the sizes are known. */
static double mean_covariance(const dpm_disp_estimate_t *est, uint32_t g, uint32_t h)
{
    if (!est->sizes_estimated) {
        return 0.0;
    }
    const dpm_disp_params_t *p = &est->params;
    const dpm_disp_group_est_t *eg = &est->group[g], *eh = &est->group[h];
    double K = (double)est->total, ac = p->a * value_gain(p);
    double mg = clamp(eg->mean, -1.0, 1.0), mh = clamp(eh->mean, -1.0, 1.0);
    grad_t gg = mean_gradient(p, eg->n, mg, 1), gh = mean_gradient(p, eh->n, mh, 1);
    double cov_sg_nh = -ac * eg->n * mg * p->q;
    double cov_sh_ng = -ac * eh->n * mh * p->q;
    double others = fmax(K - eg->n - eh->n, 0.0);
    double cov_ng_nh = -(p->a * p->q * (eg->n + eh->n) + p->q * p->q * others);
    return gg.ds * gh.dn * cov_sg_nh + gg.dn * gh.ds * cov_sh_ng + gg.dn * gh.dn * cov_ng_nh;
}

dpm_status_t dpm_disp_chebyshev_alpha(double mse, double confidence, double *alpha)
{
    if (!isfinite(mse) || mse < 0.0 || !is_prob(confidence) || alpha == NULL) {
        return DPM_ERR_PARAM;
    }
    *alpha = sqrt(mse / (1.0 - confidence));
    return DPM_OK;
}

/* common/prob.h's quantile (bisection of Φ to the last bit), behind this library's status codes. */
dpm_status_t dpm_disp_gap(const dpm_disp_estimate_t *est, uint32_t g, uint32_t h, double confidence,
                          dpm_disp_gap_t *gap)
{
    if (est == NULL || !is_d(est->params.d) || g >= est->params.d || h >= est->params.d || g == h ||
        !is_prob(confidence) || gap == NULL) {
        return DPM_ERR_PARAM;
    }
    const dpm_disp_group_est_t *eg = &est->group[g], *eh = &est->group[h];
    if (!eg->valid || !eh->valid) {
        return DPM_ERR_UNDEFINED;
    }
    double var = eg->var + eh->var - 2.0 * mean_covariance(est, g, h);
    double half = prob_norm_quantile(0.5 + confidence / 2.0) * sqrt(fmax(var, 0.0));
    gap->g = g;
    gap->h = h;
    gap->diff = eg->mean - eh->mean;
    gap->abs_diff = fabs(gap->diff);
    gap->var = var;
    gap->confidence = confidence;
    gap->chebyshev = sqrt(fmax(var, 0.0) / (1.0 - confidence));
    gap->ci_lo = gap->diff - half;
    gap->ci_hi = gap->diff + half;
    return DPM_OK;
}

dpm_status_t dpm_disp_gaps_all(const dpm_disp_estimate_t *est, double confidence,
                               dpm_disp_gap_t *out, size_t cap, size_t *count)
{
    if (est == NULL || !is_d(est->params.d) || !is_prob(confidence) || out == NULL ||
        count == NULL) {
        return DPM_ERR_PARAM;
    }
    uint32_t d = est->params.d;
    size_t pairs = (size_t)d * (d - 1) / 2;
    if (cap < pairs) {
        return DPM_ERR_BUFFER;
    }
    for (uint32_t g = 0; g < d; g++) {
        if (!est->group[g].valid) {
            return DPM_ERR_UNDEFINED;
        }
    }
    size_t i = 0;
    for (uint32_t g = 0; g < d; g++) {
        for (uint32_t h = g + 1; h < d; h++) {
            dpm_status_t st = dpm_disp_gap(est, g, h, confidence, &out[i++]);
            if (st != DPM_OK) {
                return st;
            }
        }
    }
    *count = pairs;
    return DPM_OK;
}

dpm_status_t dpm_disp_pairwise(const dpm_disp_estimate_t *est, double confidence,
                               dpm_pairwise_t *out)
{
    if (est == NULL || !is_d(est->params.d) || !is_prob(confidence) || out == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_pairwise_in_t in;
    memset(&in, 0, sizeof(in));
    in.d = est->params.d;
    for (uint32_t g = 0; g < in.d; g++) {
        const dpm_disp_group_est_t *e = &est->group[g];
        in.valid[g] = e->valid && isfinite(e->mean) && isfinite(e->var);
        in.est[g] = in.valid[g] ? e->mean : 0.0;
    }
    for (uint32_t g = 0; g < in.d; g++) {
        for (uint32_t h = 0; h < in.d && in.valid[g]; h++) {
            in.cov[g][h] = !in.valid[h] ? 0.0
                           : g == h     ? est->group[g].var
                                        : mean_covariance(est, g < h ? g : h, g < h ? h : g);
        }
    }
    return dpm_pairwise_compare(&in, confidence, out);
}

/* ---- planner ---------------------------------------------------------------------------- */

dpm_status_t dpm_disp_plan_init(dpm_disp_plan_t *plan, dpm_disp_mech_t mech, dpm_disp_split_t split,
                                double alpha, double confidence)
{
    if (plan == NULL || !is_mech(mech) || !is_split(split) || !is_pos(alpha) ||
        !is_prob(confidence)) {
        return DPM_ERR_PARAM;
    }
    memset(plan, 0, sizeof(*plan));
    plan->mech = mech;
    plan->split = split;
    plan->d = 2;
    plan->frac_bits = DPM_FRAC_BITS;
    plan->share_g = 0.5;
    plan->share_h = 0.5;
    plan->nu2_g = DPM_DISP_NU2_WORST;
    plan->nu2_h = DPM_DISP_NU2_WORST;
    plan->alpha = alpha;
    plan->confidence = confidence;
    plan->bound = DPM_DISP_BOUND_CHEBYSHEV;
    return DPM_OK;
}

static int plan_ok(const dpm_disp_plan_t *plan)
{
    return plan != NULL && is_mech(plan->mech) && is_split(plan->split) && is_d(plan->d) &&
           plan->frac_bits <= DPM_DISP_MAX_FRAC_BITS && is_prob(plan->share_g) &&
           is_prob(plan->share_h) && plan->share_g + plan->share_h <= 1.0 + 1e-12 &&
           nu2_ok(plan->nu2_g) && nu2_ok(plan->nu2_h) && is_pos(plan->alpha) &&
           is_prob(plan->confidence) &&
           (plan->bound == DPM_DISP_BOUND_CHEBYSHEV || plan->bound == DPM_DISP_BOUND_NORMAL);
}

dpm_status_t dpm_disp_plan_params(const dpm_disp_plan_t *plan, double eps, dpm_disp_params_t *p)
{
    if (!plan_ok(plan)) {
        return DPM_ERR_PARAM;
    }
    return dpm_disp_params_from_eps(p, plan->mech, plan->split, plan->d, eps, plan->frac_bits);
}

/* MSE at (K, eps); +inf where the thresholds cannot express eps (tiny eps), so that the
 * bisection moves up. */
static double plan_mse(const dpm_disp_plan_t *plan, double K, double eps)
{
    dpm_disp_params_t p;
    if (dpm_disp_plan_params(plan, eps, &p) != DPM_OK) {
        return INFINITY;
    }
    return mean_variance(&p, K, plan->share_g * K, resolve_nu2(p.mech, plan->nu2_g)) +
           mean_variance(&p, K, plan->share_h * K, resolve_nu2(p.mech, plan->nu2_h));
}

dpm_status_t dpm_disp_plan_mse(const dpm_disp_plan_t *plan, double K, double eps, double *mse)
{
    dpm_disp_params_t p;
    if (!plan_ok(plan) || !is_pos(K) || K < 1.0 || mse == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = dpm_disp_plan_params(plan, eps, &p);
    if (st == DPM_OK) {
        *mse = plan_mse(plan, K, eps);
    }
    return st;
}

static double target_mse(const dpm_disp_plan_t *plan)
{
    if (plan->bound == DPM_DISP_BOUND_CHEBYSHEV) {
        return (1.0 - plan->confidence) * plan->alpha * plan->alpha;
    }
    double z = prob_norm_quantile(0.5 + plan->confidence / 2.0);
    return (plan->alpha / z) * (plan->alpha / z);
}

dpm_status_t dpm_disp_plan_target_mse(const dpm_disp_plan_t *plan, double *target)
{
    if (!plan_ok(plan) || target == NULL) {
        return DPM_ERR_PARAM;
    }
    *target = target_mse(plan);
    return DPM_OK;
}

/* The infimum of the gap MSE over ε (approached as ε -> inf, never reached): M_R keeps the
 * Harmony coin's variance (1 - ν²) / n per group; M_L's noise vanishes. */
static double plan_mse_floor(const dpm_disp_plan_t *plan, double K)
{
    if (plan->mech == DPM_DISP_ML) {
        return 0.0;
    }
    return (1.0 - resolve_nu2(plan->mech, plan->nu2_g)) / (plan->share_g * K) +
           (1.0 - resolve_nu2(plan->mech, plan->nu2_h)) / (plan->share_h * K);
}

dpm_status_t dpm_disp_plan_min_eps(const dpm_disp_plan_t *plan, double K, double *eps)
{
    if (!plan_ok(plan) || !is_pos(K) || K < 1.0 || eps == NULL) {
        return DPM_ERR_PARAM;
    }
    double target = target_mse(plan);
    double lo = DPM_DISP_PLAN_EPS_MIN, hi = DPM_DISP_PLAN_EPS_MAX;
    /* a floor at the target is unreachable too (the paper's K alpha^2 = 400 boundary); the
     * slack absorbs rounding in (1 - confidence) alpha^2 */
    if (plan_mse_floor(plan, K) >= target * (1.0 - 1e-12) || !(plan_mse(plan, K, hi) < target)) {
        *eps = NAN;
        return DPM_OK;
    }
    if (plan_mse(plan, K, lo) <= target) {
        *eps = lo;
        return DPM_OK;
    }
    /* invariant: mse(lo) > target >= mse(hi) */
    while (hi - lo > 1e-12 * hi) {
        double mid = 0.5 * (lo + hi);
        if (plan_mse(plan, K, mid) <= target) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    *eps = hi;
    return DPM_OK;
}

dpm_status_t dpm_disp_plan_min_devices(const dpm_disp_plan_t *plan, double eps, double *K)
{
    if (!plan_ok(plan) || !is_pos(eps) || K == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_disp_params_t p;
    dpm_status_t st = dpm_disp_plan_params(plan, eps, &p);
    if (st != DPM_OK) {
        return st;
    }
    /* n = share K makes the MSE exactly mse(1) / K */
    double target = target_mse(plan);
    double k = ceil(plan_mse(plan, 1.0, eps) / target);
    if (!(k <= 9007199254740992.0)) {
        return DPM_ERR_RANGE;
    }
    k = fmax(k, 1.0);
    while (plan_mse(plan, k, eps) > target) { /* floating point: at most a step or two */
        k += 1.0;
    }
    while (k > 1.0 && plan_mse(plan, k - 1.0, eps) <= target) {
        k -= 1.0;
    }
    *K = k;
    return DPM_OK;
}

/* ---- few randomization events (estimate/ci_flags.h) --------------------------------------- */

/* *e = group g's estimate of est, for a query with its answer at out: DPM_ERR_PARAM (a NULL,
 * g out of range), DPM_ERR_UNDEFINED (the group has no estimate) or DPM_OK. */
static dpm_status_t group_of(const dpm_disp_estimate_t *est, uint32_t g, const void *out,
                             const dpm_disp_group_est_t **e)
{
    if (est == NULL || !is_d(est->params.d) || g >= est->params.d || out == NULL) {
        return DPM_ERR_PARAM;
    }
    *e = &est->group[g];
    return (*e)->valid ? DPM_OK : DPM_ERR_UNDEFINED;
}

dpm_status_t dpm_disp_event_jump(const dpm_disp_estimate_t *est, uint32_t g, double *jump)
{
    const dpm_disp_group_est_t *e = NULL;
    dpm_status_t st = group_of(est, g, jump, &e);
    if (st != DPM_OK) {
        return st;
    }
    grad_t d = mean_gradient(&est->params, e->n, clamp(e->mean, -1.0, 1.0), est->sizes_estimated);
    /* a GRR move: one report (value at most 1 in size) in or out of S_G and n'_G; an RR flip
     * (M_R): S_G by 2 */
    double move = fabs(d.ds) + fabs(d.dn);
    *jump = est->params.mech == DPM_DISP_MR ? fmax(move, 2.0 * fabs(d.ds)) : move;
    return DPM_OK;
}

/* M_R's plug-in ν² = max(0, m̂² - Var) never exceeds the true ν² (Jensen), so its variance
 * errs high; how high depends on the spread of the devices' values, which M_R reports do not
 * carry. The worst case is ν² = 1. */
dpm_status_t dpm_disp_plugin_excess(const dpm_disp_estimate_t *est, uint32_t g, double *ratio)
{
    const dpm_disp_group_est_t *e = NULL;
    dpm_status_t st = group_of(est, g, ratio, &e);
    if (st != DPM_OK) {
        return st;
    }
    double low = e->var;
    if (e->nu2_given) {
        /* the variance at the true ν²: no excess */
    } else if (est->params.mech == DPM_DISP_MR && !est->sizes_estimated) {
        if (dpm_disp_mean_variance(&est->params, (double)est->total, e->n, 1.0, &low) != DPM_OK) {
            return DPM_ERR_UNDEFINED;
        }
    } else if (est->params.mech == DPM_DISP_MR) {
        dpm_disp_group_est_t worst = *e;
        worst.nu2 = 1.0;
        low = group_variance(&est->params, (double)est->total, &worst, 1);
    }
    *ratio = low > 0.0 ? e->var / low : 1.0;
    return DPM_OK;
}

/* The group's event size (metric scale) and variance excess; DPM_CI_SMALL_N when either fails. */
static unsigned group_claim(const dpm_disp_estimate_t *est, uint32_t g, double confidence,
                            double *jump, double *excess)
{
    double j = NAN, x = 1.0;
    unsigned flags =
        dpm_disp_event_jump(est, g, &j) == DPM_OK && dpm_disp_plugin_excess(est, g, &x) == DPM_OK
            ? dpm_ci_var_excess(x, confidence)
            : DPM_CI_SMALL_N;
    *jump = j / 2.0;
    *excess = x;
    return flags;
}

/* Both levels' half-widths of an estimate whose claim so far is out->flags. */
static void ci_halfwidths(double confidence, dpm_disp_ci_t *out)
{
    out->events = NAN;
    out->half = dpm_ci_halfwidth(out->var, out->jump, 0.0, confidence, &out->events, &out->flags);
    out->half95 = dpm_ci_halfwidth(out->var, out->jump, 0.0, 0.95, NULL, &out->flags);
}

dpm_status_t dpm_disp_mean_ci(const dpm_disp_estimate_t *est, uint32_t g, double confidence,
                              dpm_disp_ci_t *out)
{
    if (est == NULL || !is_d(est->params.d) || g >= est->params.d || out == NULL ||
        !(confidence > 0.0 && confidence < 1.0)) {
        return DPM_ERR_PARAM;
    }
    if (!est->group[g].valid) {
        return DPM_ERR_UNDEFINED;
    }
    out->est = (est->group[g].mean + 1.0) / 2.0;
    out->var = est->group[g].var / 4.0;
    out->flags = group_claim(est, g, confidence, &out->jump, &out->excess);
    ci_halfwidths(confidence, out);
    return DPM_OK;
}

dpm_status_t dpm_disp_gap_ci(const dpm_disp_estimate_t *est, uint32_t g, uint32_t h,
                             double confidence, dpm_disp_ci_t *out)
{
    dpm_disp_gap_t gap;
    if (out == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = dpm_disp_gap(est, g, h, confidence, &gap);
    if (st != DPM_OK) {
        return st;
    }
    double jg, jh, xg, xh;
    unsigned fg = group_claim(est, g, confidence, &jg, &xg);
    unsigned fh = group_claim(est, h, confidence, &jh, &xh);
    out->est = gap.diff / 2.0;
    out->var = gap.var / 4.0;
    out->jump = fmax(jg, jh); /* a NaN (no jump) gives way to the other's */
    out->excess = fmax(xg, xh);
    out->flags =
        ((fg | fh) & DPM_CI_SMALL_N) ? DPM_CI_SMALL_N : dpm_ci_var_excess(out->excess, confidence);
    ci_halfwidths(confidence, out);
    return DPM_OK;
}
