/* SPDX-License-Identifier: Apache-2.0 */
/* Probability functions (see prob.h). */
#include "common/prob.h"

#include <math.h>
#include <stddef.h>

#define LN_2PI 1.8378770664093454836
#define LN_SQRT_2PI 0.91893853320467274178
#define CF_EPS 1e-15
#define CF_TINY 1e-300
#define CF_MAX_ITER 10000000 /* a, b near 1e10 need ~1e5 terms */

double prob_norm_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

double prob_norm_sf(double x)
{
    return 0.5 * erfc(x / sqrt(2.0));
}

double prob_dlap_var(double t)
{
    if (!(t > 0.0)) {
        return 0.0;
    }
    double p = exp(-1.0 / t), one_minus_p = -expm1(-1.0 / t);
    return 2.0 * p / (one_minus_p * one_minus_p);
}

double prob_norm_quantile(double p)
{
    if (!(p > 0.0 && p < 1.0)) {
        return NAN;
    }
    double lo = -40.0, hi = 40.0;
    for (int i = 0; i < 200 && hi - lo > 1e-15; i++) {
        double mid = 0.5 * (lo + hi);
        if (prob_norm_cdf(mid) < p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return 0.5 * (lo + hi);
}

static double guard(double v)
{
    return fabs(v) < CF_TINY ? CF_TINY : v;
}

/* Continued fraction of I_x(a, b) (modified Lentz), fast for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
    double qab = a + b, qap = a + 1.0, qam = a - 1.0;
    double c = 1.0, d = 1.0 / guard(1.0 - qab * x / qap);
    double h = d;
    for (int m = 1; m <= CF_MAX_ITER; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 / guard(1.0 + aa * d);
        c = guard(1.0 + aa / c);
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 / guard(1.0 + aa * d);
        c = guard(1.0 + aa / c);
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < CF_EPS) {
            break;
        }
    }
    return h;
}

void prob_beta_inc_pair(double a, double b, double x, double *i, double *ic)
{
    if (!(a > 0.0) || !(b > 0.0) || !(x >= 0.0) || !(x <= 1.0)) {
        *i = *ic = NAN;
        return;
    }
    if (x == 0.0 || x == 1.0) {
        *i = x;
        *ic = 1.0 - x;
        return;
    }
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0)) {
        *i = front * beta_cf(a, b, x) / a;
        *ic = 1.0 - *i;
    } else {
        *ic = front * beta_cf(b, a, 1.0 - x) / b;
        *i = 1.0 - *ic;
    }
}

double prob_beta_inc(double a, double b, double x)
{
    double i, ic;
    prob_beta_inc_pair(a, b, x, &i, &ic);
    return i;
}

double prob_t_sf(double t, double dof)
{
    if (!(dof > 0.0) || isnan(t)) {
        return NAN;
    }
    if (isinf(t)) {
        return t > 0 ? 0.0 : 1.0;
    }
    double i, ic; /* Pr[|T| >= |t|] = I_{dof / (dof + t^2)}(dof / 2, 1 / 2) */
    prob_beta_inc_pair(dof / 2.0, 0.5, dof / (dof + t * t), &i, &ic);
    return t >= 0.0 ? 0.5 * i : 1.0 - 0.5 * i;
}

double prob_binom_cdf(uint64_t k, uint64_t n, double p)
{
    double sum = 0.0;
    for (uint64_t i = 0; i <= k && i <= n; i++) {
        sum += exp(prob_log_dbinom((double)i, (double)n, p));
    }
    return fmin(sum, 1.0);
}

double prob_stirlerr(double n)
{
    const double s0 = 1.0 / 12.0, s1 = 1.0 / 360.0, s2 = 1.0 / 1260.0, s3 = 1.0 / 1680.0,
                 s4 = 1.0 / 1188.0;
    if (n <= 15.0) {
        return lgamma(n + 1.0) - (n + 0.5) * log(n) + n - LN_SQRT_2PI;
    }
    double nn = n * n;
    if (n > 500.0) {
        return (s0 - s1 / nn) / n;
    }
    if (n > 80.0) {
        return (s0 - (s1 - s2 / nn) / nn) / n;
    }
    if (n > 35.0) {
        return (s0 - (s1 - (s2 - s3 / nn) / nn) / nn) / n;
    }
    return (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n;
}

double prob_bd0(double x, double m)
{
    if (fabs(x - m) < 0.1 * (x + m)) {
        double v = (x - m) / (x + m), s = (x - m) * v, ej = 2.0 * x * v;
        v *= v;
        for (int j = 1; j < 1000; j++) {
            ej *= v;
            double s1 = s + ej / (2 * j + 1);
            if (s1 == s) {
                return s1;
            }
            s = s1;
        }
        return s;
    }
    return x * log(x / m) + m - x;
}

double prob_log_dpois(double k, double lambda)
{
    if (k == 0.0) {
        return -lambda;
    }
    return -prob_stirlerr(k) - prob_bd0(k, lambda) - 0.5 * (LN_2PI + log(k));
}

double prob_log_dbinom(double k, double n, double p)
{
    double q = 1.0 - p;
    if (k < 0.0 || k > n) {
        return -INFINITY;
    }
    if (p == 0.0) {
        return k == 0.0 ? 0.0 : -INFINITY;
    }
    if (p == 1.0) {
        return k == n ? 0.0 : -INFINITY;
    }
    if (k == 0.0) {
        return n * log1p(-p);
    }
    if (k == n) {
        return n * log(p);
    }
    double lc = prob_stirlerr(n) - prob_stirlerr(k) - prob_stirlerr(n - k) - prob_bd0(k, n * p) -
                prob_bd0(n - k, n * q);
    double lf = LN_2PI + log(k) + log1p(-k / n);
    return lc - 0.5 * lf;
}

static double lbeta(double a, double b)
{
    return lgamma(a) + lgamma(b) - lgamma(a + b);
}

double prob_log_dbetabinom(double k, double n, double alpha, double beta)
{
    if (k < 0.0 || k > n) {
        return -INFINITY;
    }
    double lchoose = lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
    return lchoose + lbeta(k + alpha, n - k + beta) - lbeta(alpha, beta);
}

double prob_pois_cdf(uint64_t k, double lambda)
{
    if (!(lambda > 0.0)) {
        return lambda == 0.0 ? 1.0 : NAN;
    }
    double sum = 0.0;
    for (uint64_t i = 0; i <= k; i++) {
        double t = exp(prob_log_dpois((double)i, lambda));
        sum += t;
        if ((double)i > lambda && t < 1e-18 * sum) { /* past the mode: the rest is negligible */
            break;
        }
    }
    return fmin(sum, 1.0);
}

uint64_t prob_pois_quantile(double lambda, double p)
{
    if (!(lambda > 0.0) || !(p >= 0.0)) {
        return 0;
    }
    double sum = 0.0;
    uint64_t k = 0;
    for (;; k++) {
        sum += exp(prob_log_dpois((double)k, lambda));
        if (sum >= p || (double)k > lambda + 40.0 * sqrt(lambda) + 100.0) {
            return k;
        }
    }
}

uint64_t prob_skellam_abs_quantile(double lambda, double c)
{
    double a[2048], l = lambda / 2.0;
    if (!(lambda > 0.0) || !(lambda < 1000.0)) {
        return 0;
    }
    int n = (int)(l + 40.0 * sqrt(l) + 60.0); /* Pr[Poisson(l) >= n] is below 1e-300 */
    for (int k = 0; k < n; k++) {
        a[k] = exp(prob_log_dpois((double)k, l));
    }
    double sum = 0.0;
    for (int d = 0; d < n; d++) { /* Pr[X = d] = Pr[X = -d] = sum_i a_i a_{i + d} */
        double pd = 0.0;
        for (int i = 0; i + d < n; i++) {
            pd += a[i] * a[i + d];
        }
        sum += d == 0 ? pd : 2.0 * pd;
        if (sum >= c) {
            return (uint64_t)d;
        }
    }
    return (uint64_t)n;
}

double prob_events_halfwidth(double var, double jump, double c, double *events)
{
    double z = prob_norm_quantile(0.5 + c / 2.0), sd = sqrt(var > 0.0 ? var : 0.0);
    double lambda = jump > 0.0 ? var / (jump * jump) : INFINITY;
    if (events != NULL) {
        *events = lambda;
    }
    if (!(lambda < PROB_NORMAL_MIN_EVENTS)) {
        return z * sd;
    }
    double q = (double)prob_pois_quantile(lambda, 0.5 + c / 2.0) - lambda;
    double s = (double)prob_skellam_abs_quantile(lambda, c);
    /* one whole jump, unless Chebyshev's sd / sqrt(1 - c) (valid for any law) is smaller */
    double one = fmin(jump, sd / sqrt(1.0 - c));
    return fmax(fmax(jump * fmax(q, s), one), z * sd);
}

double prob_bias_aware_halfwidth(double sd, double bound, double c)
{
    bound = fabs(bound);
    if (!(sd >= 0.0) || !(c > 0.0 && c < 1.0) || !(sd > 0.0 || bound > 0.0) || !isfinite(bound)) {
        return NAN;
    }
    if (sd == 0.0) {
        return bound;
    }
    double z = prob_norm_quantile(0.5 + c / 2.0);
    /* coverage(h) = Phi((h - b) / sd) - Phi((-h - b) / sd) increases in h: bisect between
     * z sd (the bound-free width) and b + z sd (covers at least c for any bias in [-b, b]) */
    double lo = z * sd, hi = bound + z * sd;
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
        double h = 0.5 * (lo + hi);
        double cov = prob_norm_cdf((h - bound) / sd) - prob_norm_cdf((-h - bound) / sd);
        if (cov < c) {
            lo = h;
        } else {
            hi = h;
        }
    }
    return hi;
}
