/* SPDX-License-Identifier: Apache-2.0 */
/* Generalized and binary randomized response with 32-bit integer thresholds (see noise.h). */
#include "dpm_internal.h"

#include "dpm/expert/noise.h"
#include "noise/grr_internal.h"
#include "noise/rand_internal.h"
#include "noise/xexp.h"

#define TWO32 (UINT64_C(1) << 32)

dpm_status_t dpm_grr_epsilon(uint32_t k, uint32_t keep, uint32_t other, dpm_eps_t *eps)
{
    if (eps == NULL || k < 2 || other == 0 ||
        (uint64_t)keep + (uint64_t)(k - 1u) * other != TWO32) {
        return DPM_ERR_PARAM;
    }
    if (keep == 0) {
        return DPM_ERR_RANGE; /* the true value is never reported: no finite ε */
    }
    /* Privacy loss is |ln(keep / other)|, rounded up (never understated). */
    uint64_t big = keep > other ? keep : other;
    uint64_t small = keep > other ? other : keep;
    return dpm_xf_ln_up_q16(big, small, eps);
}

dpm_status_t dpm_grr_init_ratio(dpm_grr_t *g, uint32_t k, const dpm_xf_t *ratio_lower)
{
    if (g == NULL || ratio_lower == NULL || ratio_lower->m == 0 || k < 2 || k > DPM_MAX_GRR_K) {
        return DPM_ERR_PARAM;
    }
    /* den <= L + k - 1 and other >= 2^32 / den, so other * (L + k - 1) >= 2^32, i.e.
     * keep = 2^32 - (k - 1) * other <= L * other: the ratio never exceeds L. */
    dpm_xf_t den = dpm_xf_add_down(*ratio_lower, dpm_xf_from_u64(k - 1u));
    uint64_t other = dpm_xf_pow2_div_up(32, den);
    if (other < 2 || (uint64_t)(k - 1u) * other >= TWO32) {
        return DPM_ERR_RANGE; /* 1/other needs a 64-bit reciprocal; keep must stay > 0 */
    }
    uint64_t keep = TWO32 - (uint64_t)(k - 1u) * other;
    if (keep <= other) {
        return DPM_ERR_RANGE; /* L too close to 1: rounding would invert the mechanism */
    }
    dpm_grr_t t;
    memset(&t, 0, sizeof(t)); /* padding too: callers may compare whole structs */
    t.k = k;
    t.keep = (uint32_t)keep;
    t.other = (uint32_t)other;
    t.recip = UINT64_MAX / other + 1u; /* ceil(2^64 / other) = floor((2^64 - 1) / other) + 1 */
    dpm_status_t st = dpm_grr_epsilon(k, t.keep, t.other, &t.eps_implemented);
    if (st != DPM_OK) {
        return st;
    }
    *g = t;
    return DPM_OK;
}

dpm_status_t dpm_grr_init(dpm_grr_t *g, uint32_t k, dpm_eps_t eps)
{
    if (g == NULL || eps == 0 || eps > DPM_EPS_MAX_Q16) {
        return DPM_ERR_PARAM;
    }
    dpm_xf_t lower = dpm_xexp_q16_down(eps);
    dpm_grr_t t;
    memset(&t, 0, sizeof(t)); /* padding too: callers may compare whole structs */
    dpm_status_t st = dpm_grr_init_ratio(&t, k, &lower);
    if (st != DPM_OK) {
        return st;
    }
    /* keep / other <= exp_down(eps), and the ε search uses the same exp_down, so this holds
     * by construction; checked anyway because it is the promise callers rely on. */
    if (t.eps_implemented > eps) {
        return DPM_ERR_RANGE;
    }
    *g = t;
    return DPM_OK;
}

/* floor(c * n / 2^64): one 64x64->128 multiply where the compiler has it, else two
 * 32x32->64 multiplies; the same exact value either way. */
static inline uint32_t mulhi_64x32(uint64_t c, uint32_t n)
{
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 u128;
    return (uint32_t)(((u128)c * n) >> 64);
#else
    uint64_t lo = (c & UINT64_C(0xffffffff)) * n;
    uint64_t hi = (c >> 32) * n;
    return (uint32_t)((hi + (lo >> 32)) >> 32);
#endif
}

/* The report for input x and uniform u, with masks instead of branches: the same
 * instructions run whether x is kept or flipped. */
static inline uint32_t grr_select(const dpm_grr_t *g, uint32_t x, uint32_t u)
{
    uint32_t flip = 0u - (uint32_t)(u >= g->keep);            /* all ones when flipped */
    uint32_t q = mulhi_64x32(g->recip, (u - g->keep) & flip); /* (u - keep) / other: Lemire */
    uint32_t v = x + 1u + q;                                  /* q <= k - 2, so v < 2k */
    v -= g->k & (0u - (uint32_t)(v >= g->k));                 /* v mod k */
    return (x & ~flip) | (v & flip);
}

/* The report from the next 32 bits of r: the reservoir fast path inline, the refill (once
 * every other report) out of line, so the common path needs no stack frame. */
static DPM_NOINLINE dpm_status_t grr_report_refill(const dpm_grr_t *g, dpm_rand_t *r, uint32_t x,
                                                   uint32_t *y)
{
    uint32_t u;
    dpm_status_t st = dpm_rand_take32(r, &u);
    if (st == DPM_OK) {
        *y = grr_select(g, x, u);
    }
    return st;
}

static inline dpm_status_t grr_report(const dpm_grr_t *g, dpm_rand_t *r, uint32_t x, uint32_t *y)
{
    uint32_t u;
    if (DPM_UNLIKELY(!dpm_rand_take32_fast(r, &u))) {
        return grr_report_refill(g, r, x, y);
    }
    *y = grr_select(g, x, u);
    return DPM_OK;
}

dpm_status_t dpm_grr_perturb(const dpm_grr_t *g, dpm_rand_t *r, uint32_t x, uint32_t *y)
{
    if (g == NULL || r == NULL || y == NULL || x >= g->k) {
        return DPM_ERR_PARAM;
    }
    return grr_report(g, r, x, y);
}

dpm_status_t dpm_rr_init(dpm_grr_t *g, dpm_eps_t eps)
{
    return dpm_grr_init(g, 2, eps);
}

dpm_status_t dpm_rr_perturb(const dpm_grr_t *g, dpm_rand_t *r, int bit, int *out)
{
    if (g == NULL || r == NULL || out == NULL || g->k != 2 || (bit != 0 && bit != 1)) {
        return DPM_ERR_PARAM;
    }
    uint32_t y;
    dpm_status_t st = grr_report(g, r, (uint32_t)bit, &y);
    if (st == DPM_OK) {
        *out = (int)y;
    }
    return st;
}
