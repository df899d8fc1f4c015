/* SPDX-License-Identifier: Apache-2.0 */
/* The exact law of two aggregators' central noise on a released sum (central_sum.h). */
#include "estimate/central_sum.h"

#include <math.h>
#include <stddef.h>

#include "dpm/expert/noise.h"

dpm_status_t dpm_csum_noise_init(dpm_csum_noise_t *n, uint64_t sensitivity, dpm_eps_t eps_q16)
{
    if (n == NULL || sensitivity == 0 || eps_q16 == 0) {
        return DPM_ERR_PARAM;
    }
    n->gauss = 0;
    n->sigma2 = n->theta[0] = n->theta[1] = n->z = 0.0;
    n->scale = (double)sensitivity * 65536.0 / (double)eps_q16;
    n->p = exp(-1.0 / n->scale);
    n->q = -expm1(-1.0 / n->scale);
    n->var = 4.0 * n->p / (n->q * n->q);
    return DPM_OK;
}

dpm_status_t dpm_csum_noise_init_gauss(dpm_csum_noise_t *n, uint64_t sigma2)
{
    if (n == NULL || sigma2 == 0 || sigma2 > DPM_DGAUSS_MAX_SIGMA2) {
        return DPM_ERR_PARAM;
    }
    const double s = (double)sigma2;
    const double reach = ceil(12.0 * sqrt(s)) + 2.0;
    double z = 1.0, m2 = 0.0, t0 = 1.0, t1 = 0.0;
    const uint64_t last = (uint64_t)reach; /* an integer: the loops count in integers */
    for (uint64_t k = 1; k <= last; k++) { /* both sides at once: symmetric terms */
        double j = (double)k, e = exp(-j * j / (2.0 * s));
        z += 2.0 * e;
        m2 += 2.0 * j * j * e;
        t0 += 2.0 * exp(-j * j / s);
    }
    for (uint64_t k = 0; k < last; k++) { /* j = 0.5 .. reach - 0.5 */
        double j = (double)k + 0.5;
        t1 += 2.0 * exp(-j * j / s);
    }
    n->gauss = 1;
    n->sigma2 = s;
    n->theta[0] = t0;
    n->theta[1] = t1;
    n->z = z;
    n->scale = sqrt(s);
    n->var = 2.0 * m2 / z;
    n->p = n->q = 0.0;
    return DPM_OK;
}

static double gauss_pmf(const dpm_csum_noise_t *n, uint64_t k)
{
    const double a = (double)k;
    return exp(-a * a / (4.0 * n->sigma2)) * n->theta[k & 1u] / (n->z * n->z);
}

/* 2 p^2 / (1 - p^2), the two tails' share of each term */
static double tails(const dpm_csum_noise_t *n)
{
    return 2.0 * n->p * n->p / (n->q * (1.0 + n->p));
}

double dpm_csum_pmf(const dpm_csum_noise_t *n, int64_t k)
{
    if (n->gauss) {
        return gauss_pmf(n, k < 0 ? 0u - (uint64_t)k : (uint64_t)k);
    }
    double a = k < 0 ? -(double)k : (double)k;
    double c = n->q / (1.0 + n->p);
    return c * c * exp(a * log(n->p)) * (a + 1.0 + tails(n));
}

double dpm_csum_tail(const dpm_csum_noise_t *n, uint64_t k)
{
    if (n->gauss) { /* out to 17 sd of S (sd < sqrt(2 s)): the rest is below exp(-144) */
        const double end = (double)k + 1.0 + ceil(17.0 * sqrt(2.0 * n->sigma2));
        double sum = 0.0;
        for (uint64_t j = k + 1u; (double)j <= end; j++) {
            sum += gauss_pmf(n, j);
        }
        return sum;
    }
    /* sum over j > k of c^2 p^j (j + 1 + a): sum_{j>=m} j p^j = p^m (m - (m - 1) p) / q^2 with
     * m = k + 1, and sum_{j>=m} p^j = p^m / q */
    double c = n->q / (1.0 + n->p), m = (double)k + 1.0;
    double pm = exp(m * log(n->p));
    return c * c * pm * ((1.0 + (double)k * n->q) / (n->q * n->q) + (1.0 + tails(n)) / n->q);
}

dpm_status_t dpm_csum_halfwidth(const dpm_csum_noise_t *n, double confidence, uint64_t *k)
{
    if (n == NULL || k == NULL || !(confidence > 0.0 && confidence < 1.0)) {
        return DPM_ERR_PARAM;
    }
    const double alpha = 1.0 - confidence;
    if (n->gauss) {
        /* the tail Pr[S > j] summed inward from 17 sd of S (beyond: below exp(-144), so alpha
         * must be above 1e-60), precise however small alpha is: K is the first j + 1 whose
         * tail, doubled, exceeds alpha */
        if (alpha < 1e-60) {
            return DPM_ERR_PARAM;
        }
        double tail = 0.0;
        for (uint64_t j = (uint64_t)ceil(17.0 * sqrt(2.0 * n->sigma2)) + 1u;; j--) {
            if (2.0 * tail > alpha) {
                *k = j + 1u;
                return DPM_OK;
            }
            if (j == 0) {
                *k = 0;
                return DPM_OK;
            }
            tail += gauss_pmf(n, j);
        }
    }
    uint64_t lo = 0, hi = 1;
    while (2.0 * dpm_csum_tail(n, hi) > alpha) { /* the tail falls geometrically */
        if (hi >= ((uint64_t)1 << 62)) {
            return DPM_ERR_PARAM;
        }
        hi *= 2;
    }
    if (2.0 * dpm_csum_tail(n, 0) <= alpha) {
        *k = 0;
        return DPM_OK;
    }
    while (hi - lo > 1) { /* tail(lo) > alpha / 2 >= tail(hi) */
        uint64_t mid = lo + (hi - lo) / 2;
        if (2.0 * dpm_csum_tail(n, mid) > alpha) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    *k = hi;
    return DPM_OK;
}
