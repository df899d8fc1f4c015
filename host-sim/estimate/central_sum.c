/* SPDX-License-Identifier: Apache-2.0 */
/* The exact law of two aggregators' central noise on a released sum (central_sum.h). */
#include "estimate/central_sum.h"

#include <math.h>
#include <stddef.h>

dpm_status_t dpm_csum_noise_init(dpm_csum_noise_t *n, uint64_t sensitivity, dpm_eps_t eps_q16)
{
    if (n == NULL || sensitivity == 0 || eps_q16 == 0) {
        return DPM_ERR_PARAM;
    }
    n->scale = (double)sensitivity * 65536.0 / (double)eps_q16;
    n->p = exp(-1.0 / n->scale);
    n->q = -expm1(-1.0 / n->scale);
    n->var = 4.0 * n->p / (n->q * n->q);
    return DPM_OK;
}

/* 2 p^2 / (1 - p^2), the two tails' share of each term */
static double tails(const dpm_csum_noise_t *n)
{
    return 2.0 * n->p * n->p / (n->q * (1.0 + n->p));
}

double dpm_csum_pmf(const dpm_csum_noise_t *n, int64_t k)
{
    double a = k < 0 ? -(double)k : (double)k;
    double c = n->q / (1.0 + n->p);
    return c * c * exp(a * log(n->p)) * (a + 1.0 + tails(n));
}

double dpm_csum_tail(const dpm_csum_noise_t *n, uint64_t k)
{
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
