/* SPDX-License-Identifier: Apache-2.0 */
/* Special functions for the simulator (see sim_math.h). The saddle-point forms follow C. Loader,
 * "Fast and accurate computation of binomial probabilities" (2000). */
#include "sim/sim_math.h"

#include <math.h>

#define LN_2PI 1.8378770664093454836
#define LN_SQRT_2PI 0.91893853320467274178

double sim_norm_cdf(double x)
{
    return 0.5 * erfc(-x / sqrt(2.0));
}

double sim_norm_sf(double x)
{
    return 0.5 * erfc(x / sqrt(2.0));
}

/* Continued fraction of I_x(a, b) (modified Lentz), valid for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double qab = a + b, qap = a + 1.0, qam = a - 1.0;
    double c = 1.0, d = 1.0 - qab * x / qap;
    d = fabs(d) < tiny ? tiny : d;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 10000; m++) {
        double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1.0 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1.0 / d;
        h *= d * c;
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = fabs(d) < tiny ? tiny : d;
        c = 1.0 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16) {
            break;
        }
    }
    return h;
}

double sim_beta_inc(double a, double b, double x)
{
    if (!(a > 0.0) || !(b > 0.0) || !(x >= 0.0) || !(x <= 1.0)) {
        return NAN;
    }
    if (x == 0.0 || x == 1.0) {
        return x;
    }
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0)) {
        return front * beta_cf(a, b, x) / a;
    }
    return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double sim_stirlerr(double n)
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

double sim_bd0(double x, double m)
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

double sim_log_dpois(double k, double lambda)
{
    if (k == 0.0) {
        return -lambda;
    }
    return -sim_stirlerr(k) - sim_bd0(k, lambda) - 0.5 * (LN_2PI + log(k));
}

double sim_log_dbinom(double k, double n, double p)
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
    double lc = sim_stirlerr(n) - sim_stirlerr(k) - sim_stirlerr(n - k) - sim_bd0(k, n * p) -
                sim_bd0(n - k, n * q);
    double lf = LN_2PI + log(k) + log1p(-k / n);
    return lc - 0.5 * lf;
}

static double lbeta(double a, double b)
{
    return lgamma(a) + lgamma(b) - lgamma(a + b);
}

double sim_log_dbetabinom(double k, double n, double alpha, double beta)
{
    if (k < 0.0 || k > n) {
        return -INFINITY;
    }
    double lchoose = lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
    return lchoose + lbeta(k + alpha, n - k + beta) - lbeta(alpha, beta);
}
