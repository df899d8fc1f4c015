/* SPDX-License-Identifier: Apache-2.0 */
/* Probability functions (see prob.h). */
#include "common/prob.h"

#include <math.h>

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
