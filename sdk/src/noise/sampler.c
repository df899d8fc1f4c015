/* SPDX-License-Identifier: Apache-2.0 */
/* Exact samplers: uniform, Bernoulli(num/den), Bernoulli(exp(-num/den)), discrete Laplace and
 * discrete Gaussian (Canonne, Kamath, Steinke 2020, "The Discrete Gaussian for Differential
 * Privacy", Alg. 1-3).
 * Every probability is a ratio of 64-bit integers compared bit by bit with random bits, so
 * nothing is ever rounded: the output distributions are the ideal ones. */
#include "dpm_internal.h"

#include "dpm/expert/noise.h"
#include "noise/rand_internal.h"
#include "noise/sampler_internal.h"

/* With t <= 2^56, U + t*V < t*(V + 1) <= 2^64 while V < 256: plain 64-bit arithmetic. */
#define DLAP_FAST_V 256u

/* Checks shared by every sampler. The sticky RNG error is reported even by a call that would
 * need no random bits (n == 1, p in {0, 1}), so a failed source never looks healthy. */
static dpm_status_t rand_ready(const dpm_rand_t *r)
{
    if (r == NULL || r->rng == NULL) {
        return DPM_ERR_PARAM;
    }
    return r->error;
}

static uint32_t bit_length(uint64_t x)
{
#if defined(__GNUC__)
    return x == 0 ? 0u : 64u - (uint32_t)__builtin_clzll(x);
#else
    uint32_t n = 0;
    for (; x != 0; x >>= 1) {
        n++;
    }
    return n;
#endif
}

/* ---- uniform and Bernoulli(num/den) ---------------------------------------------------- */

static inline dpm_status_t uniform_draw(dpm_rand_t *r, uint64_t n, uint64_t *out)
{
    if (n == 1) {
        *out = 0;
        return DPM_OK;
    }
    uint32_t k = bit_length(n - 1u); /* 2^(k-1) < n <= 2^k: acceptance > 1/2 */
    for (;;) {
        uint64_t v;
        dpm_status_t st = dpm_rand_take_bits(r, k, &v);
        if (st != DPM_OK) {
            return st;
        }
        if (v < n) {
            *out = v;
            return DPM_OK;
        }
    }
}

/* Bernoulli(num / den), 0 < num < den: U < p for U uniform in [0, 1), with U's bits drawn one
 * at a time against p's binary expansion (long division); the first differing bit decides, so
 * the expected cost is 2 bits whatever den is. The remainder is doubled as rem - (den - rem)
 * so no step overflows. A zero remainder ends a dyadic p: a tie there means U >= p. */
static inline dpm_status_t bern_lazy(dpm_rand_t *r, uint64_t num, uint64_t den, int *out)
{
    uint64_t rem = num;
    for (;;) {
        uint64_t p_bit = rem >= den - rem;
        rem = p_bit ? rem - (den - rem) : rem + rem;
        uint64_t u_bit;
        dpm_status_t st = dpm_rand_take_bits(r, 1, &u_bit);
        if (st != DPM_OK) {
            return st;
        }
        if (u_bit != p_bit) {
            *out = (int)p_bit; /* u_bit 0 < p_bit 1 means U < p */
            return DPM_OK;
        }
        if (rem == 0) {
            *out = 0;
            return DPM_OK;
        }
    }
}

/* Bernoulli(1 / k), k >= 2. 2^z <= k < 2^(z+1) for z = floor(log2 k), so the expansion of 1/k
 * starts with z zeros: U < 1/k iff U's first z bits, drawn at once, are all zero and the rest
 * of U is below 2^z / k, a probability in (1/2, 1]. */
static inline dpm_status_t bern_recip(dpm_rand_t *r, uint64_t k, int *out)
{
    uint32_t z = bit_length(k >> 1); /* floor(log2 k) */
    uint64_t lead;
    dpm_status_t st = dpm_rand_take_bits(r, z, &lead);
    if (st != DPM_OK) {
        return st;
    }
    if (lead != 0 || k == UINT64_C(1) << z) {
        *out = lead == 0;
        return DPM_OK;
    }
    return bern_lazy(r, UINT64_C(1) << z, k, out);
}

dpm_status_t dpm_uniform(dpm_rand_t *r, uint64_t n, uint64_t *out)
{
    dpm_status_t st = rand_ready(r);
    if (st != DPM_OK || out == NULL || n == 0) {
        return st != DPM_OK ? st : DPM_ERR_PARAM;
    }
    return uniform_draw(r, n, out);
}

dpm_status_t dpm_bernoulli(dpm_rand_t *r, uint64_t num, uint64_t den, int *out)
{
    dpm_status_t st = rand_ready(r);
    if (st != DPM_OK || out == NULL || den == 0 || num > den) {
        return st != DPM_OK ? st : DPM_ERR_PARAM;
    }
    if (num == 0 || num == den) {
        *out = num != 0;
        return DPM_OK;
    }
    return bern_lazy(r, num, den, out);
}

/* ---- Bernoulli(exp(-gamma)) ------------------------------------------------------------ */

/* CKS Algorithm 1 for gamma in [0, 1]: K is one plus the number of successes of the
 * independent trials Bernoulli(gamma / 1), Bernoulli(gamma / 2), ... before the first failure,
 * so Pr[K > k] = gamma^k / k! and Pr[K odd] = sum_k (-gamma)^k / k! = exp(-gamma).
 * This continues the trials from K = k (earlier ones all succeeded), with gamma = num / den
 * and 0 < num <= den. Bernoulli(gamma / K) is drawn as Bernoulli(1 / K) AND Bernoulli(num /
 * den), which never forms den * K; the 1/K factor goes first as it fails more often. */
static dpm_status_t bexp_from(dpm_rand_t *r, uint64_t num, uint64_t den, uint64_t k, int *out)
{
    for (;; k++) {
        int a = 1;
        dpm_status_t st = k > 1 ? bern_recip(r, k, &a) : DPM_OK;
        if (st == DPM_OK && a && num != den) {
            st = bern_lazy(r, num, den, &a);
        }
        if (st != DPM_OK) {
            return st;
        }
        if (!a) {
            *out = (int)(k & 1u);
            return DPM_OK;
        }
    }
}

/* Bernoulli(exp(-1)), the trial of the geometric in dpm_dlap, from one random byte b. For
 * gamma = 1 the trials of Algorithm 1 can share one uniform W: K > k iff W < 1/k!, so with
 * W = (b + f) / 256 and 256/2! = 128, 256/3! = 42 + 2/3, 256/4! = 10 + 2/3, 256/5! = 2 + 2/15:
 *   b >= 128: K = 2;  43..127: K = 3;  11..41: K = 4;  3..9: K = 5;
 *   b = 42: K = 3 iff f >= 2/3;  b = 10: K = 5 iff f < 2/3;  b = 2: K = 5 iff f >= 2/15;
 *   otherwise (b < 2, or b = 2 and f < 2/15) W < 1/5!: K > 5, and the trials go on from K = 6.
 * The fraction f is never drawn: "f < a/c" is a fresh Bernoulli(a / c), the same event.
 * One byte decides 251 times in 256; cheaper in time than ~2.4 bits of lazy comparisons,
 * whose every bit is a hard-to-predict branch. dpm_noise_bexp1_class[b] is that first step:
 * 1 (K = 3 or 5), 0 (K = 2 or 4) or DPM_BEXP1_MORE (b in {0, 1, 2, 10, 42}). */
const uint8_t dpm_noise_bexp1_class[256] = {
    2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* Bernoulli(exp(-1)) from its first byte b (drawn by the caller) and, 5 times in 256, a few
 * more bits from the front. */
static inline dpm_status_t bexp_one_from(dpm_rand_t *r, uint64_t b, int *out)
{
    uint8_t cls = dpm_noise_bexp1_class[b];
    if (cls != DPM_BEXP1_MORE) {
        *out = cls; /* 1 for K = 3 or 5, 0 for K = 2 or 4 */
        return DPM_OK;
    }
    if (b < 2) {
        return bexp_from(r, 1, 1, 6, out);
    }
    /* b in {2, 10, 42}: W straddles 1/5!, 1/4! or 1/3!; a low f means a larger K */
    int f_low;
    dpm_status_t st = bern_lazy(r, 2, b == 2 ? 15 : 3, &f_low);
    if (st != DPM_OK) {
        return st;
    }
    if (b == 2 && f_low) {
        return bexp_from(r, 1, 1, 6, out);
    }
    *out = b == 2 || f_low == (b == 10);
    return DPM_OK;
}

static inline dpm_status_t bexp_one(dpm_rand_t *r, int *out)
{
    uint64_t b;
    dpm_status_t st = dpm_rand_take_bits(r, 8, &b);
    if (st != DPM_OK) {
        return st;
    }
    return bexp_one_from(r, b, out);
}

/* gamma = num / den in [0, 1] */
static dpm_status_t bexp_unit(dpm_rand_t *r, uint64_t num, uint64_t den, int *out)
{
    if (num == 0) {
        *out = 1;
        return DPM_OK;
    }
    if (num == den) {
        return bexp_one(r, out);
    }
    return bexp_from(r, num, den, 1, out);
}

/* gamma > 1: exp(-gamma) = exp(-1)^floor(gamma) * exp(-frac), independent factors; stop at
 * the first failure. */
dpm_status_t dpm_bernoulli_exp(dpm_rand_t *r, uint64_t num, uint64_t den, int *out)
{
    dpm_status_t st = rand_ready(r);
    if (st != DPM_OK || out == NULL || den == 0) {
        return st != DPM_OK ? st : DPM_ERR_PARAM;
    }
    uint64_t whole = num / den;
    uint64_t frac = num % den;
    if (whole > DPM_BEXP_MAX_GAMMA || (whole == DPM_BEXP_MAX_GAMMA && frac != 0)) {
        return DPM_ERR_PARAM;
    }
    int b = 1;
    for (uint64_t i = 0; i < whole && b; i++) {
        st = bexp_unit(r, 1, 1, &b);
        if (st != DPM_OK) {
            return st;
        }
    }
    if (b) {
        st = bexp_unit(r, frac, den, &b);
        if (st != DPM_OK) {
            return st;
        }
    }
    *out = b;
    return DPM_OK;
}

/* ---- discrete Laplace ------------------------------------------------------------------ */

/* floor((hi * 2^64 + lo) / d) for hi < d (so the quotient fits), by shift and subtract. Only
 * the astronomically rare V >= 256 path gets here, so speed does not matter. */
static uint64_t div_128_by_64(uint64_t hi, uint64_t lo, uint64_t d)
{
    uint64_t q = 0;
    for (int i = 0; i < 64; i++) {
        uint64_t carry = hi >> 63;
        hi = (hi << 1) | (lo >> 63);
        lo <<= 1;
        q <<= 1;
        if (carry != 0 || hi >= d) {
            hi -= d; /* the true value (carry:hi) < 2d, so the difference is < d */
            q |= 1u;
        }
    }
    return q;
}

/* |Z| of one discrete Laplace draw: Y = floor((U + t V) / s), exactly. Returns 0 with *huge
 * set if Y >= 2^64 (then Z is outside int64 whatever it is added to). */
static uint64_t dlap_magnitude(uint64_t u, uint64_t v, uint64_t t, uint64_t s, int *huge)
{
    *huge = 0;
    if (v < DLAP_FAST_V) {
        uint64_t x = u + t * v;
        return s == 1 ? x : x / s;
    }
    uint64_t hi;
    uint64_t lo = dpm_mul_u64(t, v, &hi);
    lo += u;
    hi += lo < u;
    if (hi >= s) {
        *huge = 1;
        return 0;
    }
    return div_128_by_64(hi, lo, s);
}

/* V: v0 plus the number of Bernoulli(exp(-1)) successes before the first failure; each
 * trial's first byte from the front, or from the back (from_back). */
static dpm_status_t geometric_exp1(dpm_rand_t *r, uint64_t v0, int from_back, uint64_t *v)
{
    for (uint64_t n = v0;; n++) {
        uint64_t b;
        int more;
        dpm_status_t st = from_back ? dpm_rand_take_back_byte(r, &b) : dpm_rand_take_bits(r, 8, &b);
        if (st == DPM_OK) {
            st = bexp_one_from(r, b, &more);
        }
        if (st != DPM_OK) {
            return st;
        }
        if (!more) {
            *v = n;
            return DPM_OK;
        }
        if (n == UINT64_MAX - 1u) {
            return DPM_ERR_RANGE; /* 2^64 - 1 successes in a row: probability exp(-2^64) */
        }
    }
}

/* CKS Algorithm 2 with scale t / s. X = U + t V is geometric with ratio exp(-1/t): U uniform
 * in [0, t) accepted with probability exp(-U/t) is X mod t, and V (the number of
 * Bernoulli(exp(-1)) successes) is X div t. Y = floor(X / s) is then geometric with ratio
 * exp(-s/t); a random sign, rejecting "-0", gives Pr[Z = z] proportional to exp(-|z| s / t). */
static dpm_status_t dlap_draw(dpm_rand_t *r, uint64_t t, uint64_t s, int *negative,
                              uint64_t *magnitude, int *huge)
{
    for (;;) {
        uint64_t u;
        int d;
        dpm_status_t st = uniform_draw(r, t, &u);
        if (st == DPM_OK) {
            st = bexp_unit(r, u, t, &d);
        }
        if (st != DPM_OK) {
            return st;
        }
        if (!d) {
            continue;
        }
        uint64_t v;
        st = geometric_exp1(r, 0, 0, &v);
        if (st != DPM_OK) {
            return st;
        }
        uint64_t sign;
        st = dpm_rand_take_bits(r, 1, &sign);
        if (st != DPM_OK) {
            return st;
        }
        uint64_t y = dlap_magnitude(u, v, t, s, huge);
        /* reject "-0"; y == 0 goes first: rare at large scales, so the branch predicts well */
        if (y == 0 && sign != 0 && !*huge) {
            continue;
        }
        *negative = sign != 0;
        *magnitude = y;
        return DPM_OK;
    }
}

static dpm_status_t dlap_add_draw(dpm_rand_t *r, uint64_t t, uint64_t s, int64_t value,
                                  int64_t *out)
{
    int negative;
    int huge;
    uint64_t mag;
    dpm_status_t st = dlap_draw(r, t, s, &negative, &mag, &huge);
    if (st != DPM_OK) {
        return st;
    }
    return dpm_noise_add_magnitude(value, negative, mag, huge, out);
}

static dpm_status_t dlap_check(const dpm_rand_t *r, uint64_t num, uint64_t den, const int64_t *out)
{
    dpm_status_t st = rand_ready(r);
    if (st != DPM_OK) {
        return st;
    }
    return out == NULL || num == 0 || den == 0 ? DPM_ERR_PARAM : DPM_OK;
}

dpm_status_t dpm_dlap(dpm_rand_t *r, uint64_t num, uint64_t den, int64_t *out)
{
    dpm_status_t st = dlap_check(r, num, den, out);
    if (st != DPM_OK) {
        return st;
    }
    uint64_t g = dpm_gcd_u64(num, den);
    if (num / g > DPM_DLAP_MAX_NUM) {
        return DPM_ERR_PARAM;
    }
    return dlap_add_draw(r, num / g, den / g, 0, out);
}

dpm_status_t dpm_dlap_add(dpm_rand_t *r, uint64_t num, uint64_t den, int64_t value, int64_t *out)
{
    dpm_status_t st = dlap_check(r, num, den, out);
    if (st != DPM_OK) {
        return st;
    }
    if (num > DPM_DLAP_MAX_NUM) {
        return DPM_ERR_PARAM;
    }
    return dlap_add_draw(r, num, den, value, out);
}

/* ---- discrete Gaussian ----------------------------------------------------------------- */

/* floor(sqrt(x)) for x < 2^32, bit by bit. */
static uint64_t isqrt(uint64_t x)
{
    uint64_t root = 0;
    for (uint64_t bit = (uint64_t)1 << 30; bit != 0; bit >>= 2) {
        if (x >= root + bit) {
            x -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
    }
    return root;
}

/* Bernoulli(exp(-(hi 2^64 + lo) / d)), 1 <= d < 2^63: the whole part as Bernoulli(exp(-1))
 * trials stopping at the first failure, then the fraction. A whole part of 2^64 or more (hi >=
 * d: |Y| above 2^32 sigma, probability below exp(-2^32)) keeps drawing trials until one fails
 * and answers 0: it would need 2^64 successes in a row to differ. */
static dpm_status_t bexp_wide(dpm_rand_t *r, uint64_t hi, uint64_t lo, uint64_t d, int *out)
{
    const int beyond = hi >= d;
    const uint64_t whole = beyond ? UINT64_MAX : div_128_by_64(hi, lo, d);
    const uint64_t frac = lo - whole * d; /* (hi, lo) - whole d < d: exact mod 2^64 */
    int b = 1;
    for (uint64_t i = 0; b && (beyond || i < whole); i++) {
        dpm_status_t st = bexp_unit(r, 1, 1, &b);
        if (st != DPM_OK) {
            return st;
        }
    }
    *out = b;
    return b ? bexp_unit(r, frac, d, out) : DPM_OK;
}

/* CKS Algorithm 3 with sigma^2 = s, t = floor(sqrt(s)) + 1: Y discrete Laplace of scale t,
 * kept with probability exp(-(|Y| t - s)^2 / (2 s t^2)). With s <= 2^30, t <= 2^15 + 1 and
 * 2 s t^2 < 2^62; (|Y| t - s)^2 is formed in 128 bits. */
static dpm_status_t dgauss_draw(dpm_rand_t *r, uint64_t s, int *negative, uint64_t *magnitude)
{
    const uint64_t t = isqrt(s) + 1u;
    const uint64_t d = 2u * s * t * t;
    for (;;) {
        int neg;
        int huge;
        uint64_t y;
        dpm_status_t st = dlap_draw(r, t, 1, &neg, &y, &huge);
        if (st != DPM_OK) {
            return st;
        }
        uint64_t yt_hi;
        uint64_t yt = dpm_mul_u64(y, t, &yt_hi);
        if (huge || yt_hi != 0) {
            continue; /* |Y| t >= 2^64: see dpm_dgauss */
        }
        uint64_t u = yt >= s ? yt - s : s - yt;
        uint64_t hi;
        uint64_t lo = dpm_mul_u64(u, u, &hi);
        int keep;
        st = bexp_wide(r, hi, lo, d, &keep);
        if (st != DPM_OK) {
            return st;
        }
        if (keep) {
            *negative = neg;
            *magnitude = y;
            return DPM_OK;
        }
    }
}

dpm_status_t dpm_dgauss_add(dpm_rand_t *r, uint64_t sigma2, int64_t value, int64_t *out)
{
    dpm_status_t st = rand_ready(r);
    if (st != DPM_OK) {
        return st;
    }
    if (out == NULL || sigma2 == 0 || sigma2 > DPM_DGAUSS_MAX_SIGMA2) {
        return DPM_ERR_PARAM;
    }
    int negative;
    uint64_t mag;
    st = dgauss_draw(r, sigma2, &negative, &mag);
    if (st != DPM_OK) {
        return st;
    }
    return dpm_noise_add_magnitude(value, negative, mag, 0, out);
}

dpm_status_t dpm_dgauss(dpm_rand_t *r, uint64_t sigma2, int64_t *out)
{
    return dpm_dgauss_add(r, sigma2, 0, out);
}

/* ---- entry points for the Laplace mechanism's sampler (noise/sampler_internal.h) ------- */

dpm_status_t dpm_noise_bern_lazy(dpm_rand_t *r, uint64_t num, uint64_t den, int *out)
{
    return bern_lazy(r, num, den, out);
}

dpm_status_t dpm_noise_bexp_from(dpm_rand_t *r, uint64_t num, uint64_t den, uint64_t k, int *out)
{
    return bexp_from(r, num, den, k, out);
}

dpm_status_t dpm_noise_geometric_exp1_back(dpm_rand_t *r, uint64_t v0, uint64_t *v)
{
    return geometric_exp1(r, v0, 1, v);
}

uint64_t dpm_noise_dlap_magnitude(uint64_t u, uint64_t v, uint64_t t, uint64_t s, int *huge)
{
    return dlap_magnitude(u, v, t, s, huge);
}
