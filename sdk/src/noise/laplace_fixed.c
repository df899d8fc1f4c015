/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded-time discrete Laplace: a fixed number of 64-bit Bernoulli digits per geometric,
 * with a certified bound on its distance to the exact distribution (see noise.h). */
#include "dpm_internal.h"

#include "dpm/expert/noise.h"
#include "noise/rand_internal.h"
#include "noise/xexp.h"

#define DTV_TARGET (UINT64_C(1) << 16) /* delta_tv <= 2^-48, in units of 2^-64 */
/* Once x >= 64, e^x > 2^92: every 2^64-scaled quantity of that digit is below 1. */
#define X_BIG UINT64_C(64)

/* The exponent x_j = 2^j / t = 2^j eps / (sensitivity 2^16) as ipart + r / den, exactly. */
typedef struct {
    uint64_t ipart; /* saturates at X_BIG */
    uint64_t r;     /* < den */
    uint64_t den;   /* sensitivity << 16 <= 2^56 */
} xratio_t;

/* Certified facts about digit j, all in units of 2^-64. */
typedef struct {
    uint64_t threshold; /* within err of 2^64 q_j, q_j = 1 / (1 + e^x_j) */
    uint64_t err;       /* >= |threshold - 2^64 q_j| */
    uint64_t tail;      /* >= 2^64 * sum_{i >= j} q_i */
} digit_t;

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static void xratio_double(xratio_t *x)
{
    uint64_t r2 = x->r << 1; /* < 2^57 */
    uint64_t carry = r2 >= x->den;
    x->r = r2 - (carry ? x->den : 0);
    x->ipart = x->ipart >= X_BIG ? X_BIG : 2u * x->ipart + carry;
}

/* floor(r * 2^64 / den) for r < den < 2^63, by long division. */
static uint64_t frac64(uint64_t r, uint64_t den)
{
    uint64_t q = 0;
    for (int i = 0; i < 64; i++) {
        r <<= 1;
        uint64_t bit = r >= den;
        r -= bit ? den : 0;
        q = (q << 1) | bit;
    }
    return q;
}

/* Bracket 2^64 q_j in [a, b] with a lower and an upper bound of e^x, take the midpoint.
 * The tail uses sum_{i >= j} q_i <= sum_i y^(2^i) <= y / (1 - y) <= 2y for y = e^-x_j <= 1/2
 * (q_i < e^-x_i, x_(j+i) = 2^i x_j, and y^(2^i) <= y^(i+1)). */
static digit_t digit_bounds(const xratio_t *x)
{
    digit_t d = {0, 1, 1};
    if (x->ipart >= X_BIG) {
        return d; /* 2^64 q_j < 2^64 e^-64 < 1 and likewise the tail */
    }
    const dpm_xf_t one = dpm_xf_from_u64(1);
    uint32_t ip = (uint32_t)x->ipart;
    uint64_t f = frac64(x->r, x->den); /* ip + f/2^64 <= x_j < ip + (f+1)/2^64 */
    dpm_xf_t lo = dpm_xexp_down(ip, f);
    dpm_xf_t hi = f == UINT64_MAX ? dpm_xexp_up(ip + 1u, 0) : dpm_xexp_up(ip, f + 1u);
    uint64_t a = dpm_xf_pow2_div_down(64, dpm_xf_add_up(hi, one));
    uint64_t b = dpm_xf_pow2_div_up(64, dpm_xf_add_down(lo, one));
    d.err = (b - a + 1u) / 2u; /* max(threshold - a, b - threshold) */
    d.threshold = a + d.err;
    d.tail = dpm_xf_ge_ratio(lo, 2, 1) ? dpm_xf_pow2_div_up(65, lo) : UINT64_MAX;
    return d;
}

/* δ = (1 + e^ε) delta_tv, with an upper bound of e^ε, rounded up. */
static uint64_t delta_from_tv(dpm_eps_t eps, uint64_t delta_tv)
{
    dpm_xf_t w = dpm_xf_add_up(dpm_xexp_q16_up(eps), dpm_xf_from_u64(1));
    return dpm_xf_to_u64_up(dpm_xf_mul_up(w, dpm_xf_from_u64(delta_tv)));
}

dpm_status_t dpm_laplace_fixed_init(dpm_laplace_fixed_t *m, uint64_t sensitivity, dpm_eps_t eps)
{
    if (m == NULL || sensitivity == 0 || sensitivity > DPM_LAPLACE_MAX_SENSITIVITY || eps == 0 ||
        eps > DPM_EPS_MAX_Q16) {
        return DPM_ERR_PARAM;
    }
    dpm_laplace_fixed_t t;
    memset(&t, 0, sizeof(t));
    xratio_t x;
    x.den = sensitivity << DPM_EPS_FRAC_BITS;
    x.ipart = eps / x.den;
    x.r = eps % x.den;
    /* Both geometrics use the same digits: delta_tv = 2 (sum_{j<n} err_j + tail_n). Take the
     * smallest n (at least 1) that meets the target. */
    uint64_t sum_err = 0;
    for (uint32_t j = 0;; j++) {
        digit_t d = digit_bounds(&x);
        uint64_t tv = sat_add(sum_err, d.tail);
        tv = sat_add(tv, tv);
        if (j >= 1 && tv <= DTV_TARGET) {
            t.nbits = j;
            t.delta_tv_num = tv;
            break;
        }
        if (j == DPM_LAPLACE_FIXED_MAX_BITS) {
            return DPM_ERR_RANGE;
        }
        t.threshold[j] = d.threshold;
        sum_err = sat_add(sum_err, d.err);
        xratio_double(&x);
    }
    t.delta_num = delta_from_tv(eps, t.delta_tv_num);
    t.sensitivity = sensitivity;
    t.eps = eps;
    *m = t;
    return DPM_OK;
}

/* nbits independent digits, each one 64-bit uniform compared with its threshold. */
static dpm_status_t geometric(const dpm_laplace_fixed_t *m, dpm_rand_t *r, uint64_t *g)
{
    uint64_t acc = 0;
    for (uint32_t j = 0; j < m->nbits; j++) {
        uint64_t u;
        dpm_status_t st = dpm_rand_take64(r, &u);
        if (st != DPM_OK) {
            return st;
        }
        acc |= (uint64_t)(u < m->threshold[j]) << j;
    }
    *g = acc;
    return DPM_OK;
}

dpm_status_t dpm_laplace_fixed_add(const dpm_laplace_fixed_t *m, dpm_rand_t *r, int64_t value,
                                   int64_t *out)
{
    if (m == NULL || r == NULL || out == NULL || m->nbits == 0 ||
        m->nbits > DPM_LAPLACE_FIXED_MAX_BITS) {
        return DPM_ERR_PARAM;
    }
    uint64_t g1;
    uint64_t g2;
    dpm_status_t st = geometric(m, r, &g1);
    if (st == DPM_OK) {
        st = geometric(m, r, &g2);
    }
    if (st != DPM_OK) {
        return st;
    }
    /* |z| < 2^48. Overflow iff value and z share a sign that the wrapped sum lacks: computed
     * without branching on z, and only the (public) outcome decides the return. */
    int64_t z = (int64_t)g1 - (int64_t)g2;
    uint64_t sum = (uint64_t)value + (uint64_t)z;
    if ((((uint64_t)value ^ sum) & ((uint64_t)z ^ sum)) >> 63 != 0) {
        return DPM_ERR_RANGE;
    }
    *out = value + z; /* cannot overflow now */
    return DPM_OK;
}
