/* SPDX-License-Identifier: Apache-2.0 */
/* Goodness-of-fit and binomial-bound helpers for the sampler tests. Continued fractions are
 * evaluated with the modified Lentz method; every routine runs to relative precision ~1e-15
 * and is checked against high-precision reference values in tests/stat/test_dlap_gof.c. */
#include "stat_gof.h"

#include <math.h>
#include <stdlib.h>

#include "common/prob.h"

#define STAT_EPS 1e-15
#define STAT_TINY 1e-300
#define STAT_MAX_ITER 10000000

static double lentz_guard(double v)
{
    return fabs(v) < STAT_TINY ? STAT_TINY : v;
}

/* log(x^a e^-x / Γ(a)), the common factor of P and Q */
static double gamma_log_front(double a, double x)
{
    return a * log(x) - x - lgamma(a);
}

/* P(a, x) by its power series; converges fast for x < a + 1 */
static double gamma_p_series(double a, double x)
{
    double term = 1.0 / a;
    double sum = term;
    for (int n = 1; n < STAT_MAX_ITER; n++) {
        term *= x / (a + n);
        sum += term;
        if (fabs(term) < fabs(sum) * STAT_EPS) {
            break;
        }
    }
    return sum * exp(gamma_log_front(a, x));
}

/* Q(a, x) by its continued fraction; converges fast for x >= a + 1 */
static double gamma_q_fraction(double a, double x)
{
    double b = x + 1.0 - a;
    double c = 1.0 / STAT_TINY;
    double d = 1.0 / b;
    double h = d;
    for (int i = 1; i < STAT_MAX_ITER; i++) {
        double an = -i * (i - a);
        b += 2.0;
        d = 1.0 / lentz_guard(an * d + b);
        c = lentz_guard(b + an / c);
        double delta = d * c;
        h *= delta;
        if (fabs(delta - 1.0) < STAT_EPS) {
            break;
        }
    }
    return exp(gamma_log_front(a, x)) * h;
}

double stat_gamma_p(double a, double x)
{
    if (x <= 0.0) {
        return 0.0;
    }
    return x < a + 1.0 ? gamma_p_series(a, x) : 1.0 - gamma_q_fraction(a, x);
}

double stat_gamma_q(double a, double x)
{
    if (x <= 0.0) {
        return 1.0;
    }
    return x < a + 1.0 ? 1.0 - gamma_p_series(a, x) : gamma_q_fraction(a, x);
}

double stat_chi2_sf(double x, double dof)
{
    return stat_gamma_q(dof / 2.0, x / 2.0);
}

double stat_chi2_isf(double alpha, double dof)
{
    double lo = 0.0;
    double hi = dof + 10.0;
    while (stat_chi2_sf(hi, dof) > alpha) {
        lo = hi;
        hi *= 2.0;
    }
    for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (stat_chi2_sf(mid, dof) > alpha) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return 0.5 * (lo + hi);
}

/* The incomplete beta function is host-sim's (common/prob.h): one copy in the project. */
double stat_beta_i(double a, double b, double x)
{
    return prob_beta_inc(a, b, x);
}

/* Pr[Bin(n, p) >= k] = I_p(k, n - k + 1), k >= 1 */
static double binom_tail_ge(uint64_t k, uint64_t n, double p)
{
    double i;
    double ic;
    prob_beta_inc_pair((double)k, (double)(n - k + 1), p, &i, &ic);
    return i;
}

/* Pr[Bin(n, p) <= k] = 1 - I_p(k + 1, n - k), k < n */
static double binom_tail_le(uint64_t k, uint64_t n, double p)
{
    double i;
    double ic;
    prob_beta_inc_pair((double)(k + 1), (double)(n - k), p, &i, &ic);
    return ic;
}

/* Bisection keeps the bracket conservative: lower returns lo, upper returns hi. */
double stat_binom_lower(uint64_t k, uint64_t n, double alpha)
{
    if (k == 0) {
        return 0.0;
    }
    double lo = 0.0;
    double hi = (double)k / (double)n;
    for (int i = 0; i < 400 && hi - lo > 1e-15 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (binom_tail_ge(k, n, mid) > alpha) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return lo;
}

double stat_binom_upper(uint64_t k, uint64_t n, double alpha)
{
    if (k >= n) {
        return 1.0;
    }
    double lo = (double)k / (double)n;
    double hi = 1.0;
    for (int i = 0; i < 400 && hi - lo > 1e-15 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (binom_tail_le(k, n, mid) > alpha) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return hi;
}

stat_gof_t stat_gof_test(const uint64_t *observed, const double *expected, size_t n,
                         stat_gof_kind_t kind)
{
    stat_gof_t g = {0.0, 0.0, 1.0, INFINITY, 0.0, 0.0, n};
    for (size_t i = 0; i < n; i++) {
        double o = (double)observed[i];
        double e = expected[i];
        if (kind == STAT_PEARSON) {
            g.statistic += (o - e) * (o - e) / e;
        } else {
            /* 2 sum O ln(O/E) - (O - E): equal to the G statistic when the totals agree,
             * but every term is >= 0, so rounding does not cancel */
            g.statistic += 2.0 * ((o > 0.0 ? o * log(o / e) : 0.0) - (o - e));
        }
        g.min_expected = e < g.min_expected ? e : g.min_expected;
        g.total_observed += o;
        g.total_expected += e;
    }
    g.dof = (double)n - 1.0;
    g.p_value = stat_chi2_sf(g.statistic, g.dof);
    return g;
}

static void merge_into(uint64_t *observed, double *expected, size_t to, size_t from)
{
    observed[to] += observed[from];
    expected[to] += expected[from];
}

size_t stat_pool_tails(uint64_t *observed, double *expected, size_t n, double min_expected)
{
    if (n == 0) {
        return 0;
    }
    size_t lo = 0;
    size_t hi = n - 1;
    while (lo < hi && expected[lo] < min_expected) {
        merge_into(observed, expected, lo + 1, lo);
        lo++;
    }
    while (hi > lo && expected[hi] < min_expected) {
        merge_into(observed, expected, hi - 1, hi);
        hi--;
    }
    size_t m = 0;
    for (size_t i = lo; i <= hi; i++) {
        if (m > 0 && expected[i] < min_expected) {
            merge_into(observed, expected, m - 1, i);
        } else {
            observed[m] = observed[i];
            expected[m] = expected[i];
            m++;
        }
    }
    return m;
}

double stat_binom_cdf(uint32_t k, uint32_t n, double q)
{
    double lo = 0.0;
    for (uint32_t i = 0; i <= k && i <= n; i++) {
        lo += exp(prob_log_dbinom(i, n, q));
    }
    return fmin(lo, 1.0);
}

double stat_binom_two_sided(uint32_t k, uint32_t n, double q)
{
    double lo = 0.0, hi = 0.0;
    for (uint32_t i = 0; i <= n; i++) {
        double pm = exp(prob_log_dbinom(i, n, q));
        lo += i <= k ? pm : 0.0;
        hi += i >= k ? pm : 0.0;
    }
    return fmin(1.0, 2.0 * fmin(lo, hi));
}

uint32_t stat_samples(uint32_t full, uint32_t min)
{
    static uint32_t divisor; /* 0 = not read yet */
    if (divisor == 0) {
        const char *env = getenv("DPM_STAT_DIVISOR");
        long d = env != NULL ? strtol(env, NULL, 10) : 1;
        divisor = d > 1 && d <= 1000 ? (uint32_t)d : 1u;
    }
    return full / divisor > min ? full / divisor : (min < full ? min : full);
}
