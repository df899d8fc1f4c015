/* SPDX-License-Identifier: Apache-2.0 */
/* Seeded random variates (see sim_rng.h for the algorithms and what is exact). */
#include "sim/pop/sim_rng.h"

#include <math.h>

#include "common/prob.h"

#define POISSON_SPLIT 17592186044416.0  /* 2^44: largest lambda drawn in one piece */
#define BINOMIAL_MAX 9007199254740992.0 /* 2^53 */

void sim_rng_init(sim_rng_t *r, uint64_t key)
{
    sim_stream_init(&r->s, key);
}

uint64_t sim_rng_u64(sim_rng_t *r)
{
    return sim_stream_next(&r->s);
}

uint64_t sim_rng_words(const sim_rng_t *r)
{
    return r->s.counter;
}

double sim_rng_unit(sim_rng_t *r)
{
    return sim_stream_unit(&r->s);
}

double sim_rng_normal(sim_rng_t *r)
{
    return sim_stream_normal(&r->s);
}

double sim_rng_gamma(sim_rng_t *r, double shape, double scale)
{
    if (shape < 1.0) {
        double u = sim_rng_unit(r);
        return sim_rng_gamma(r, shape + 1.0, scale) * pow(u, 1.0 / shape);
    }
    double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x = sim_rng_normal(r), t = c * x;
        if (t <= -1.0) {
            continue;
        }
        double e = t * (3.0 + t * (3.0 + t)); /* v - 1 for v = (1 + t)^3, without rounding 1 + */
        double u = sim_rng_unit(r), x2 = x * x;
        if (u < 1.0 - 0.0331 * x2 * x2) {
            return d * (1.0 + e) * scale;
        }
        if (log(u) < 0.5 * x2 + d * (log1p(e) - e)) {
            return d * (1.0 + e) * scale;
        }
    }
}

double sim_rng_beta(sim_rng_t *r, double a, double b)
{
    double x = sim_rng_gamma(r, a, 1.0), y = sim_rng_gamma(r, b, 1.0);
    return x / (x + y);
}

static uint64_t poisson_inversion(sim_rng_t *r, double lambda)
{
    for (;;) {
        double p = exp(-lambda), s = p, u = sim_rng_unit(r);
        uint64_t x = 0;
        while (u > s && x < 1000) {
            x++;
            p *= lambda / (double)x;
            s += p;
        }
        if (u <= s) {
            return x;
        }
        /* u beyond the summed mass only by rounding (< 1e-15): draw again */
    }
}

/* PTRS, Hoermann (1993), "The transformed rejection method for generating Poisson random
 * variables", for lambda >= 10. */
static uint64_t poisson_ptrs(sim_rng_t *r, double lambda)
{
    double slam = sqrt(lambda);
    double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
        double u = sim_rng_unit(r) - 0.5, v = sim_rng_unit(r);
        double us = 0.5 - fabs(u);
        double k = floor((2.0 * a / us + b) * u + lambda + 0.43);
        if (us >= 0.07 && v <= vr) {
            return (uint64_t)k;
        }
        if (k < 0.0 || (us < 0.013 && v > us)) {
            continue;
        }
        if (log(v) + log(inv_alpha) - log(a / (us * us) + b) <= prob_log_dpois(k, lambda)) {
            return (uint64_t)k;
        }
    }
}

uint64_t sim_rng_poisson(sim_rng_t *r, double lambda)
{
    if (!(lambda > 0.0)) {
        return 0;
    }
    if (lambda > POISSON_SPLIT) {
        /* a sum of independent Poissons is Poisson: equal parts of at most 2^44 each */
        double parts = ceil(lambda / POISSON_SPLIT), each = lambda / parts;
        uint64_t sum = 0;
        for (double i = 0; i < parts; i += 1.0) {
            sum += poisson_ptrs(r, each);
        }
        return sum;
    }
    return lambda < 10.0 ? poisson_inversion(r, lambda) : poisson_ptrs(r, lambda);
}

/* Inversion by sequential search from 0 (numpy's random_binomial_inversion), n p < 30. */
static uint64_t binomial_inversion(sim_rng_t *r, uint64_t n, double p)
{
    double q = 1.0 - p, dn = (double)n, np = dn * p;
    double qn = exp(dn * log1p(-p));
    double bound = fmin(dn, np + 10.0 * sqrt(np * q + 1.0));
    double x = 0.0, px = qn, u = sim_rng_unit(r);
    while (u > px) {
        x += 1.0;
        if (x > bound) {
            x = 0.0;
            px = qn;
            u = sim_rng_unit(r);
        } else {
            u -= px;
            px = ((dn - x + 1.0) * p * px) / (x * q);
        }
    }
    return (uint64_t)x;
}

/* Stirling-series remainder used by BTPE's final test. */
static double btpe_corr(double x)
{
    double x2 = x * x;
    return (13680. - (462. - (132. - (99. - 140. / x2) / x2) / x2) / x2) / x / 166320.;
}

/* BTPE for p <= 1/2 and n p >= 30 (the caller folds p > 1/2). Variable names follow the
 * paper. */
static uint64_t binomial_btpe(sim_rng_t *r, uint64_t n_int, double p)
{
    double n = (double)n_int, q = 1.0 - p;
    double fm = n * p + p, m = floor(fm), nrq = n * p * q;
    double p1 = floor(2.195 * sqrt(nrq) - 4.6 * q) + 0.5;
    double xm = m + 0.5, xl = xm - p1, xr = xm + p1;
    double c = 0.134 + 20.5 / (15.3 + m);
    double a = (fm - xl) / (fm - xl * p);
    double laml = a * (1.0 + a / 2.0);
    a = (xr - fm) / (xr * q);
    double lamr = a * (1.0 + a / 2.0);
    double p2 = p1 * (1.0 + 2.0 * c), p3 = p2 + c / laml, p4 = p3 + c / lamr;
    for (;;) {
        double u = sim_rng_unit(r) * p4, v = sim_rng_unit(r), y;
        if (u <= p1) { /* triangular centre: accept at once */
            return (uint64_t)floor(xm - p1 * v + u);
        }
        if (u <= p2) { /* parallelograms */
            double x = xl + (u - p1) / c;
            v = v * c + 1.0 - fabs(m - x + 0.5) / p1;
            if (v > 1.0) {
                continue;
            }
            y = floor(x);
        } else if (u <= p3) { /* left exponential tail */
            y = floor(xl + log(v) / laml);
            if (y < 0.0) {
                continue;
            }
            v = v * (u - p2) * laml;
        } else { /* right exponential tail */
            y = floor(xr - log(v) / lamr);
            if (y > n) {
                continue;
            }
            v = v * (u - p3) * lamr;
        }
        double k = fabs(y - m);
        if (k <= 20.0 || k >= nrq / 2.0 - 1.0) {
            /* explicit evaluation of f(y) / f(m) by the recurrence */
            double s = p / q, aa = s * (n + 1.0), f = 1.0;
            if (m < y) {
                for (double i = m + 1.0; i <= y; i += 1.0) {
                    f *= aa / i - s;
                }
            } else if (m > y) {
                for (double i = y + 1.0; i <= m; i += 1.0) {
                    f /= aa / i - s;
                }
            }
            if (v <= f) {
                return (uint64_t)y;
            }
            continue;
        }
        /* squeeze on ln f(y) / f(m), then the exact test (Stirling) */
        double rho = (k / nrq) * ((k * (k / 3.0 + 0.625) + 0.16666666666666666) / nrq + 0.5);
        double t = -k * k / (2.0 * nrq), lv = log(v);
        if (lv < t - rho) {
            return (uint64_t)y;
        }
        if (lv > t + rho) {
            continue;
        }
        double x1 = y + 1.0, f1 = m + 1.0, z = n + 1.0 - m, w = n - y + 1.0;
        /* ln(f1 / x1) and ln(z / w) as log1p of exact integer differences: these terms are
         * multiplied by ~n and would otherwise lose ~n ulps */
        double bound = xm * log1p((m - y) / x1) + (n - m + 0.5) * log1p((y - m) / w) +
                       (y - m) * (log(w / x1) + log(p / q)) + btpe_corr(f1) + btpe_corr(z) +
                       btpe_corr(x1) + btpe_corr(w);
        if (lv <= bound) {
            return (uint64_t)y;
        }
    }
}

uint64_t sim_rng_binomial(sim_rng_t *r, uint64_t n, double p)
{
    if (n == 0 || !(p > 0.0)) {
        return 0;
    }
    if (p >= 1.0) {
        return n;
    }
    if ((double)n > BINOMIAL_MAX) {
        uint64_t half = n / 2;
        return sim_rng_binomial(r, half, p) + sim_rng_binomial(r, n - half, p);
    }
    int fold = p > 0.5;
    double pp = fold ? 1.0 - p : p; /* exact for p in [1/2, 1] (Sterbenz) */
    uint64_t x = (double)n * pp < 30.0 ? binomial_inversion(r, n, pp) : binomial_btpe(r, n, pp);
    return fold ? n - x : x;
}

uint64_t sim_rng_geometric_sum(sim_rng_t *r, uint64_t n, double odds)
{
    if (n == 0 || !(odds > 0.0)) {
        return 0;
    }
    /* NB(n) = Poisson(Gamma(n, odds)); chunks keep each Poisson mean near or below 2^44 */
    uint64_t chunk = odds >= POISSON_SPLIT ? 1 : (uint64_t)(POISSON_SPLIT / odds);
    uint64_t sum = 0;
    while (n > 0) {
        uint64_t m = n < chunk ? n : chunk;
        sum += sim_rng_poisson(r, sim_rng_gamma(r, (double)m, odds));
        n -= m;
    }
    return sum;
}

int64_t sim_rng_dlap_sum(sim_rng_t *r, uint64_t n, double t)
{
    double odds = 1.0 / expm1(1.0 / t); /* rho / (1 - rho), rho = exp(-1/t) */
    uint64_t a = sim_rng_geometric_sum(r, n, odds), b = sim_rng_geometric_sum(r, n, odds);
    return a >= b ? (int64_t)(a - b) : -(int64_t)(b - a);
}

int64_t sim_rng_dgauss(sim_rng_t *r, double sigma2)
{
    const double t = floor(sqrt(sigma2)) + 1.0;
    for (;;) {
        int64_t y = sim_rng_dlap_sum(r, 1, t);
        double d = fabs((double)y) - sigma2 / t;
        if (sim_rng_unit(r) < exp(-d * d / (2.0 * sigma2))) {
            return y;
        }
    }
}

void sim_rng_multinomial(sim_rng_t *r, uint64_t n, const double *p, size_t k, double *tmp,
                         uint64_t *out)
{
    double s = 0.0;
    for (size_t i = k; i-- > 0;) { /* suffix sums, smallest terms first */
        s += p[i] > 0.0 ? p[i] : 0.0;
        tmp[i] = s;
    }
    uint64_t rem = n;
    for (size_t i = 0; i < k; i++) {
        double pi = p[i] > 0.0 ? p[i] : 0.0;
        if (rem == 0 || pi == 0.0) {
            out[i] = 0;
            continue;
        }
        out[i] = pi >= tmp[i] ? rem : sim_rng_binomial(r, rem, pi / tmp[i]);
        rem -= out[i];
    }
}
