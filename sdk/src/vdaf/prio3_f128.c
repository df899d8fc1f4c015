/* SPDX-License-Identifier: Apache-2.0 */
/* Prio3 over Field128 (SumVec, Histogram, MultihotCountVec): prio3_impl.h instantiated with
 * the field of field.h. */
#include "dpm_internal.h"

#include "vdaf/field.h"
#include "vdaf/vdaf_internal.h"

#if DPM_VDAF

typedef f128_t FE;
#define FE_BYTES 16u
#define FE_LOG_ORDER 66u /* GEN_ORDER = 2^66 */
static const uint64_t FE_P_MINUS_2[2] = {UINT64_C(0xFFFFFFFFFFFFFFE3),
                                         UINT64_C(0xFFFFFFFFFFFFFFFF)};

#define fe_add f128_add
#define fe_sub f128_sub
#define fe_neg f128_neg
#define fe_mul f128_mul
#define fe_select f128_select
#define fe_mul_to f128_mul_to
#define fe_bfly f128_bfly

static inline FE fe_zero(void)
{
    return f128_make(0, 0);
}
static inline FE fe_one(void)
{
    return f128_make(1, 0);
}
static inline FE fe_small(uint64_t x)
{
    return f128_make(x, 0);
}
static inline FE fe_gen(void)
{
    return f128_make(F128_GEN_LO, F128_GEN_HI);
}
/* 1 / 2^k for 1 <= k < 64 (2^k divides p - 1 = F128_P_HI 2^64): p - (p - 1) / 2^k. */
static inline FE fe_inv_pow2(unsigned k)
{
    f128_t q = f128_make(k == 0 ? 0 : F128_P_HI << (64u - k), F128_P_HI >> k);
    return k == 0 ? fe_one() : f128_sub(fe_zero(), q); /* -(p-1)/2^k = p - (p-1)/2^k */
}
/* Comparisons of public values (the verifier message). */
static inline int fe_is_zero(FE a)
{
    return (a.lo | a.hi) == 0;
}
static inline uint64_t fe_is_one(FE a) /* 0 or 1, in constant time (a may be secret) */
{
    return 1u ^ (ct_nonzero_mask((a.lo ^ 1u) | a.hi) & 1u);
}
static inline int fe_equal(FE a, FE b)
{
    return a.lo == b.lo && a.hi == b.hi;
}
/* Little-endian decoding; *bad gets a nonzero bit when the value is >= p. */
static inline FE fe_load(const uint8_t *b, uint64_t *bad)
{
    FE x = f128_make(le64_get(b), le64_get(b + 8));
    uint64_t carry;
    (void)f128_plus_c(x, &carry); /* x + (2^128 - p) carries exactly when x >= p */
    *bad |= carry;
    return x;
}
static inline void fe_store(uint8_t *b, FE x)
{
    le64_put(b, x.lo);
    le64_put(b + 8, x.hi);
}
static inline uint64_t fe_to_u64(FE x, uint64_t *wide)
{
    *wide |= x.hi;
    return x.lo;
}

#define PRIO3_FN(name) name##_f128
#define PRIO3_ALL_CIRCUITS 0 /* Field128: range checks only */
#include "vdaf/prio3_impl.h"

#endif /* DPM_VDAF */
