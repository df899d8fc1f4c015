/* SPDX-License-Identifier: Apache-2.0 */
/* Prio3 over Field64 (Count, Sum, SumVecMultiproof, HigherDegree): prio3_impl.h instantiated
 * with the field of field.h. */
#include "dpm_internal.h"

#include "vdaf/field.h"
#include "vdaf/vdaf_internal.h"

#if DPM_VDAF && DPM_VDAF_FIELD64

typedef uint64_t FE;
#define FE_BYTES 8u
#define FE_LOG_ORDER 32u /* GEN_ORDER = 2^32 */
static const uint64_t FE_P_MINUS_2[1] = {UINT64_C(0xFFFFFFFEFFFFFFFF)};

#define fe_add f64_add
#define fe_sub f64_sub
#define fe_neg f64_neg
#define fe_mul f64_mul

static inline void fe_mul_to(FE *out, const FE *a, const FE *b)
{
    *out = f64_mul(*a, *b);
}
static inline void fe_bfly(FE *x, FE *y) /* (x, y) <- (x + y, x - y) */
{
    const FE u = *x, v = *y;
    *x = f64_add(u, v);
    *y = f64_sub(u, v);
}

static inline FE fe_zero(void)
{
    return 0;
}
static inline FE fe_one(void)
{
    return 1;
}
static inline FE fe_small(uint64_t x) /* x < p */
{
    return x;
}
static inline FE fe_gen(void)
{
    return F64_GEN;
}
static inline FE fe_select(uint64_t mask, FE a, FE b)
{
    return (a & mask) | (b & ~mask);
}
/* 1 / 2^k for k <= 32 (2^k divides p - 1): p - (p - 1) / 2^k. */
static inline FE fe_inv_pow2(unsigned k)
{
    return F64_P - ((F64_P - 1u) >> k);
}
/* Comparisons of public values (the verifier message). */
static inline int fe_is_zero(FE a)
{
    return a == 0;
}
static inline uint64_t fe_is_one(FE a) /* 0 or 1, in constant time (a may be secret) */
{
    return 1u ^ (ct_nonzero_mask(a ^ 1u) & 1u);
}
static inline int fe_equal(FE a, FE b)
{
    return a == b;
}
/* Little-endian decoding; *bad gets a nonzero bit when the value is >= p. */
static inline FE fe_load(const uint8_t *b, uint64_t *bad)
{
    uint64_t x = le64_get(b);
    uint64_t t = x + F64_EPS; /* carries exactly when x >= p */
    *bad |= ct_carry(x, F64_EPS, t);
    return x;
}
static inline void fe_store(uint8_t *b, FE x)
{
    le64_put(b, x);
}
static inline uint64_t fe_to_u64(FE x, uint64_t *wide)
{
    (void)wide;
    return x;
}

#define PRIO3_FN(name) name##_f64
#define PRIO3_ALL_CIRCUITS 1
#include "vdaf/prio3_impl.h"

#endif /* DPM_VDAF */
