/* SPDX-License-Identifier: Apache-2.0 */
/* Field64 and Field128 of draft-irtf-cfrg-vdaf, in constant time.
 *
 *   Field64:  p = 2^32 (2^32 - 1) + 1 = 2^64 - 2^32 + 1,      2^64  = p + (2^32 - 1)
 *   Field128: p = 2^66 (2^62 - 7) + 1 = 2^128 - 28 2^64 + 1,  2^128 = p + (28 2^64 - 1)
 *
 * Elements are always canonical (in [0, p)): decoding a received value >= p is the draft's
 * "modulus overflow" and is refused by the caller. Additions and subtractions compute the
 * carry or borrow with bit logic and pick the corrected value with a mask; multiplication
 * reduces with the moduli's special form (2^64 = 2^32 - 1, 2^128 = 28 2^64 - 1 modulo p), so
 * it needs no division and no data-dependent branch. Exponents (inversion, roots of unity)
 * are public constants.
 *
 * Multiplication has two implementations with the same results: 64-bit limbs over the
 * compiler's unsigned __int128 where it has one (x86_64, aarch64, s390x), 32-bit limbs over
 * uint64_t elsewhere (Cortex-M, 32-bit ARM Linux). tests/unit/test_vdaf_field.c compiles the
 * portable one on every host too (DPM_VDAF_PORTABLE_MUL) and compares both with a bit-serial
 * reference. */
#ifndef DPM_VDAF_FIELD_H
#define DPM_VDAF_FIELD_H

#include <stdint.h>

#if defined(__SIZEOF_INT128__) && !defined(DPM_VDAF_PORTABLE_MUL)
#define DPM_VDAF_HAVE_U128 1
__extension__ typedef unsigned __int128 dpm_u128_t;
#else
#define DPM_VDAF_HAVE_U128 0
#endif

/* ---- constant-time helpers on 64-bit words ---------------------------------------------- */

/* Carry out of s = a + b (mod 2^64), and borrow out of d = a - b, as 0 or 1. */
static inline uint64_t ct_carry(uint64_t a, uint64_t b, uint64_t s)
{
    return ((a & b) | ((a | b) & ~s)) >> 63;
}
static inline uint64_t ct_borrow(uint64_t a, uint64_t b, uint64_t d)
{
    return ((~a & b) | ((~a | b) & d)) >> 63;
}
/* All ones if x != 0, else zero. */
static inline uint64_t ct_nonzero_mask(uint64_t x)
{
    return (uint64_t)0 - ((x | ((uint64_t)0 - x)) >> 63);
}

/* ---- Field64 ------------------------------------------------------------------------------ */
#define F64_P UINT64_C(0xFFFFFFFF00000001)
#define F64_EPS UINT64_C(0xFFFFFFFF) /* 2^64 - p */

static inline uint64_t f64_add(uint64_t a, uint64_t b)
{
    uint64_t s = a + b;
    uint64_t c1 = ct_carry(a, b, s);
    uint64_t t = s + F64_EPS; /* s - p when the sum is >= p */
    uint64_t m = (uint64_t)0 - (c1 | ct_carry(s, F64_EPS, t));
    return (t & m) | (s & ~m);
}

static inline uint64_t f64_sub(uint64_t a, uint64_t b)
{
    uint64_t d = a - b;
    return d - (F64_EPS & ((uint64_t)0 - ct_borrow(a, b, d))); /* + p on a borrow */
}

static inline uint64_t f64_neg(uint64_t a)
{
    return f64_sub(0, a);
}

/* hi 2^64 + lo (any 128-bit value) modulo p: with hi = h1 2^32 + h0, 2^64 = 2^32 - 1 and
 * 2^96 = -1 give lo - h1 + h0 (2^32 - 1); each step's wrap is undone by adding 2^64 - p. */
static inline uint64_t f64_reduce(uint64_t lo, uint64_t hi)
{
    uint64_t h1 = hi >> 32, h0 = hi & UINT64_C(0xFFFFFFFF);
    uint64_t t0 = lo - h1;
    t0 -= F64_EPS & ((uint64_t)0 - ct_borrow(lo, h1, t0));
    uint64_t t1 = (h0 << 32) - h0;
    uint64_t t2 = t0 + t1;
    t2 += F64_EPS & ((uint64_t)0 - ct_carry(t0, t1, t2));
    uint64_t u = t2 + F64_EPS; /* t2 - p when t2 >= p */
    uint64_t m = (uint64_t)0 - ct_carry(t2, F64_EPS, u);
    return (u & m) | (t2 & ~m);
}

static inline uint64_t f64_mul(uint64_t a, uint64_t b)
{
#if DPM_VDAF_HAVE_U128
    dpm_u128_t x = (dpm_u128_t)a * b;
    return f64_reduce((uint64_t)x, (uint64_t)(x >> 64));
#else
    const uint64_t m32 = UINT64_C(0xFFFFFFFF);
    uint64_t a0 = a & m32, a1 = a >> 32, b0 = b & m32, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & m32) + (p10 & m32); /* three terms < 2^32 */
    return f64_reduce((mid << 32) | (p00 & m32), p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32));
#endif
}

/* ---- Field128 ----------------------------------------------------------------------------- */
typedef struct {
    uint64_t lo, hi;
} f128_t;

#define F128_P_LO UINT64_C(1)
#define F128_P_HI UINT64_C(0xFFFFFFFFFFFFFFE4)
#define F128_C_LO UINT64_C(0xFFFFFFFFFFFFFFFF) /* c = 2^128 - p = 28 2^64 - 1 */
#define F128_C_HI UINT64_C(0x1B)

static inline f128_t f128_make(uint64_t lo, uint64_t hi)
{
    f128_t r;
    r.lo = lo;
    r.hi = hi;
    return r;
}

/* (s + c) mod 2^128 and its carry: s - p, valid exactly when s >= p. */
static inline f128_t f128_plus_c(f128_t s, uint64_t *carry)
{
    f128_t t;
    t.lo = s.lo + F128_C_LO;
    uint64_t c0 = ct_carry(s.lo, F128_C_LO, t.lo);
    uint64_t h = s.hi + F128_C_HI;
    uint64_t c1 = ct_carry(s.hi, F128_C_HI, h);
    t.hi = h + c0;
    *carry = c1 | ct_carry(h, c0, t.hi);
    return t;
}

static inline f128_t f128_select(uint64_t mask, f128_t a, f128_t b) /* mask ? a : b */
{
    return f128_make((a.lo & mask) | (b.lo & ~mask), (a.hi & mask) | (b.hi & ~mask));
}

static inline f128_t f128_add(f128_t a, f128_t b)
{
    f128_t s;
    s.lo = a.lo + b.lo;
    uint64_t c0 = ct_carry(a.lo, b.lo, s.lo);
    uint64_t h = a.hi + b.hi;
    uint64_t c1 = ct_carry(a.hi, b.hi, h);
    s.hi = h + c0;
    c1 |= ct_carry(h, c0, s.hi);
    uint64_t c2;
    f128_t t = f128_plus_c(s, &c2);
    return f128_select((uint64_t)0 - (c1 | c2), t, s);
}

static inline f128_t f128_sub(f128_t a, f128_t b)
{
    f128_t d;
    d.lo = a.lo - b.lo;
    uint64_t b0 = ct_borrow(a.lo, b.lo, d.lo);
    uint64_t h = a.hi - b.hi;
    uint64_t b1 = ct_borrow(a.hi, b.hi, h);
    d.hi = h - b0;
    b1 |= ct_borrow(h, b0, d.hi);
    /* on a borrow add p, i.e. subtract c (mod 2^128) */
    uint64_t m = (uint64_t)0 - b1;
    uint64_t cl = F128_C_LO & m, ch = F128_C_HI & m;
    f128_t r;
    r.lo = d.lo - cl;
    r.hi = d.hi - ch - ct_borrow(d.lo, cl, r.lo);
    return r;
}

static inline f128_t f128_neg(f128_t a)
{
    return f128_sub(f128_make(0, 0), a);
}

/* A value below 2^128 made canonical: subtract p once if it is >= p. */
static inline f128_t f128_canonical(f128_t s)
{
    uint64_t c;
    f128_t t = f128_plus_c(s, &c);
    return f128_select((uint64_t)0 - c, t, s);
}

#if DPM_VDAF_HAVE_U128
/* x = [w0 w1 w2 w3] (64-bit words) modulo p. With H = w2 + w3 2^64 and 2^128 = 28 2^64 - 1:
 * x = L + 28 H 2^64 - H. Fold 1 leaves < 2^197, fold 2 < 2^139, fold 3 < 2^128 + 2^80, and
 * fold 4 (its top word is 0 or 1, and then the rest is small) < 2^128. */
static inline f128_t f128_reduce4(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3)
{
    for (int fold = 0; fold < 4; fold++) {
        /* A = L + 28 H 2^64, then A - H; every intermediate fits 128-bit accumulators */
        dpm_u128_t t = (dpm_u128_t)w1 + (dpm_u128_t)w2 * 28u;
        uint64_t a1 = (uint64_t)t;
        t = (t >> 64) + (dpm_u128_t)w3 * 28u;
        uint64_t a2 = (uint64_t)t, a3 = (uint64_t)(t >> 64);
        /* subtract H = (w2, w3) from (w0, a1, a2, a3) */
        dpm_u128_t d = (dpm_u128_t)w0 - w2;
        uint64_t r0 = (uint64_t)d;
        d = (dpm_u128_t)a1 - w3 - (uint64_t)((d >> 64) & 1u);
        uint64_t r1 = (uint64_t)d;
        d = (dpm_u128_t)a2 - (uint64_t)((d >> 64) & 1u);
        uint64_t r2 = (uint64_t)d;
        uint64_t r3 = a3 - (uint64_t)((d >> 64) & 1u);
        w0 = r0;
        w1 = r1;
        w2 = r2;
        w3 = r3;
    }
    return f128_canonical(f128_make(w0, w1));
}

static inline f128_t f128_mul(f128_t a, f128_t b)
{
    dpm_u128_t ll = (dpm_u128_t)a.lo * b.lo, lh = (dpm_u128_t)a.lo * b.hi;
    dpm_u128_t hl = (dpm_u128_t)a.hi * b.lo, hh = (dpm_u128_t)a.hi * b.hi;
    uint64_t w0 = (uint64_t)ll;
    dpm_u128_t mid = (ll >> 64) + (uint64_t)lh + (uint64_t)hl; /* < 3 2^64 */
    uint64_t w1 = (uint64_t)mid;
    dpm_u128_t top = (mid >> 64) + (lh >> 64) + (hl >> 64) + hh; /* < 2^128 */
    return f128_reduce4(w0, w1, (uint64_t)top, (uint64_t)(top >> 64));
}
#else
/* 32-bit limbs: t[0..7] (the product) modulo p, by the same four folds as above. */
static inline f128_t f128_reduce8(uint32_t t[8])
{
    for (int fold = 0; fold < 4; fold++) {
        /* A = L + 28 H 2^64 (H = t[4..7]) at positions 0..6, then A - H */
        uint32_t a[7];
        uint64_t acc = t[0];
        a[0] = (uint32_t)acc;
        acc = (acc >> 32) + t[1];
        a[1] = (uint32_t)acc;
        acc = (acc >> 32) + t[2] + (uint64_t)t[4] * 28u;
        a[2] = (uint32_t)acc;
        acc = (acc >> 32) + t[3] + (uint64_t)t[5] * 28u;
        a[3] = (uint32_t)acc;
        acc = (acc >> 32) + (uint64_t)t[6] * 28u;
        a[4] = (uint32_t)acc;
        acc = (acc >> 32) + (uint64_t)t[7] * 28u;
        a[5] = (uint32_t)acc;
        a[6] = (uint32_t)(acc >> 32);
        uint64_t borrow = 0;
        for (int i = 0; i < 7; i++) {
            uint64_t sub = (i < 4 ? (uint64_t)t[i + 4] : 0u) + borrow;
            uint64_t d = (uint64_t)a[i] - sub;
            t[i] = (uint32_t)d;
            borrow = d >> 63; /* d wrapped below zero */
        }
        t[7] = 0;
    }
    return f128_canonical(f128_make((uint64_t)t[0] | ((uint64_t)t[1] << 32),
                                    (uint64_t)t[2] | ((uint64_t)t[3] << 32)));
}

static inline f128_t f128_mul(f128_t a, f128_t b)
{
    const uint32_t x[4] = {(uint32_t)a.lo, (uint32_t)(a.lo >> 32), (uint32_t)a.hi,
                           (uint32_t)(a.hi >> 32)};
    const uint32_t y[4] = {(uint32_t)b.lo, (uint32_t)(b.lo >> 32), (uint32_t)b.hi,
                           (uint32_t)(b.hi >> 32)};
    uint32_t t[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        uint64_t carry = 0;
        for (int j = 0; j < 4; j++) {
            uint64_t p = (uint64_t)x[i] * y[j] + t[i + j] + carry; /* < 2^64 */
            t[i + j] = (uint32_t)p;
            carry = p >> 32;
        }
        t[i + 4] = (uint32_t)carry;
    }
    return f128_reduce8(t);
}
#endif

#endif /* DPM_VDAF_FIELD_H */
