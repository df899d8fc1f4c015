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
#include <string.h>

/* Armv7E-M (Cortex-M4, M7) with GCC-style inline assembly: UMAAL and flag-chained limbs. */
#if defined(__GNUC__) && defined(__ARM_ARCH_7EM__) && defined(__thumb2__) &&                       \
    !defined(DPM_VDAF_PORTABLE_MUL)
#define DPM_VDAF_ARMV7EM 1
#else
#define DPM_VDAF_ARMV7EM 0
#endif

#if defined(__SIZEOF_INT128__) && !defined(DPM_VDAF_PORTABLE_MUL)
#define DPM_VDAF_HAVE_U128 1
__extension__ typedef unsigned __int128 dpm_u128_t;
#else
#define DPM_VDAF_HAVE_U128 0
#endif
/* Arithmetic right shift of a negative value is implementation-defined in C99; every compiler
 * the SDK supports shifts arithmetically, and this stops the build of one that would not. */
typedef char dpm_vdaf_asr_check[((int64_t)-2 >> 1) == -1 ? 1 : -1];

/* ---- encodings: little-endian 64-bit words (memcpy where the machine is little-endian) ---- */
static inline uint64_t le64_get(const uint8_t *b)
{
    uint64_t x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&x, b, 8);
#else
    for (unsigned i = 0; i < 8u; i++) {
        x |= (uint64_t)b[i] << (8u * i);
    }
#endif
    return x;
}

static inline void le64_put(uint8_t *b, uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(b, &x, 8);
#else
    for (unsigned i = 0; i < 8u; i++) {
        b[i] = (uint8_t)(x >> (8u * i));
    }
#endif
}

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
/* The draft's generator 7^(2^32 - 1) of the subgroup of order 2^32 (GEN_ORDER). */
#define F64_GEN UINT64_C(0x185629DCDA58878C)

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
/* The draft's generator 7^4611686018427387897 of the subgroup of order 2^66 (GEN_ORDER). */
#define F128_GEN_LO UINT64_C(0x1F9B2759C5109F06)
#define F128_GEN_HI UINT64_C(0x6D278FBF4F60228B)

static inline f128_t f128_make(uint64_t lo, uint64_t hi)
{
    f128_t r;
    r.lo = lo;
    r.hi = hi;
    return r;
}

#if defined(__GNUC__)
#define F128_INLINE static inline __attribute__((always_inline))
/* Multiplication stays a call: inlined into unrolled loops, its temporaries took kilobytes of
 * the callers' frames at -O2 (shard 2,272 bytes, verify_init 7,648 on x86_64). */
#define F128_MUL static __attribute__((noinline, unused))
#else
#define F128_INLINE static inline
#define F128_MUL static
#endif

F128_INLINE f128_t f128_select(uint64_t mask, f128_t a, f128_t b) /* mask ? a : b */
{
    return f128_make((a.lo & mask) | (b.lo & ~mask), (a.hi & mask) | (b.hi & ~mask));
}

/* Sums and differences carry limb by limb through a double-width accumulator: 64-bit limbs
 * over unsigned __int128 where there is one, 32-bit limbs over uint64_t elsewhere (what a
 * 32-bit core does in add-with-carry instructions). Each returns its final carry / borrow. */
#if DPM_VDAF_HAVE_U128
/* The sum word by word with the compilers' overflow builtins (add, adc on x86_64): through a
 * 128-bit accumulator GCC 12 spilled its carries to the stack. */
F128_INLINE f128_t f128_add_raw(f128_t a, uint64_t b_lo, uint64_t b_hi, uint64_t *carry)
{
    uint64_t lo, hi;
    const uint64_t c0 = (uint64_t)__builtin_add_overflow(a.lo, b_lo, &lo);
    const uint64_t c1 = (uint64_t)__builtin_add_overflow(a.hi, b_hi, &hi);
    const uint64_t c2 = (uint64_t)__builtin_add_overflow(hi, c0, &hi);
    *carry = c1 | c2;
    return f128_make(lo, hi);
}
/* (The difference stays in the 128-bit form: with the builtins, memcheck reported a "conditional
 * jump or move" on the secret in f128_neg's 0 - a as GCC 12 compiled it; tests/ct runs it.) */
F128_INLINE f128_t f128_sub_raw(f128_t a, uint64_t b_lo, uint64_t b_hi, uint64_t *borrow)
{
    dpm_u128_t t = (dpm_u128_t)a.lo - b_lo;
    uint64_t lo = (uint64_t)t;
    t = (dpm_u128_t)a.hi - b_hi - (uint64_t)((t >> 64) & 1u);
    *borrow = (uint64_t)(t >> 64) & 1u;
    return f128_make(lo, (uint64_t)t);
}
#else
F128_INLINE f128_t f128_add_raw(f128_t a, uint64_t b_lo, uint64_t b_hi, uint64_t *carry)
{
    uint64_t t = (uint64_t)(uint32_t)a.lo + (uint32_t)b_lo;
    uint32_t r0 = (uint32_t)t;
    t = (t >> 32) + (uint32_t)(a.lo >> 32) + (uint32_t)(b_lo >> 32);
    uint32_t r1 = (uint32_t)t;
    t = (t >> 32) + (uint32_t)a.hi + (uint32_t)b_hi;
    uint32_t r2 = (uint32_t)t;
    t = (t >> 32) + (uint32_t)(a.hi >> 32) + (uint32_t)(b_hi >> 32);
    *carry = t >> 32;
    return f128_make(r0 | ((uint64_t)r1 << 32), (uint64_t)r2 | ((uint64_t)(uint32_t)t << 32));
}
F128_INLINE f128_t f128_sub_raw(f128_t a, uint64_t b_lo, uint64_t b_hi, uint64_t *borrow)
{
    uint64_t t = (uint64_t)(uint32_t)a.lo - (uint32_t)b_lo;
    uint32_t r0 = (uint32_t)t;
    t = (uint64_t)(uint32_t)(a.lo >> 32) - (uint32_t)(b_lo >> 32) - (t >> 63);
    uint32_t r1 = (uint32_t)t;
    t = (uint64_t)(uint32_t)a.hi - (uint32_t)b_hi - (t >> 63);
    uint32_t r2 = (uint32_t)t;
    t = (uint64_t)(uint32_t)(a.hi >> 32) - (uint32_t)(b_hi >> 32) - (t >> 63);
    *borrow = t >> 63;
    return f128_make(r0 | ((uint64_t)r1 << 32), (uint64_t)r2 | ((uint64_t)(uint32_t)t << 32));
}
#endif

/* s + (2^128 - p) mod 2^128 and its carry: s - p, valid exactly when s >= p. */
F128_INLINE f128_t f128_plus_c(f128_t s, uint64_t *carry)
{
    return f128_add_raw(s, F128_C_LO, F128_C_HI, carry);
}

#if DPM_VDAF_ARMV7EM
/* The same two operations in flag-chained 32-bit limbs (17 and 10 instructions). The sum
 * s = a + b < 2p has a carry c1 out of 2^128, or none and then s >= p exactly when s + (2^128
 * - p) carries (c2); c1 and c2 are never both 1 (s < 2p - 2^128 after a carry). The mask of
 * c1 + c2 selects the addition of 2^128 - p (modulo 2^128: s - p). The difference adds p
 * (subtracts 2^128 - p) under the mask of its borrow. */
F128_INLINE f128_t f128_add(f128_t a, f128_t b)
{
    uint32_t s0 = (uint32_t)a.lo, s1 = (uint32_t)(a.lo >> 32), s2 = (uint32_t)a.hi,
             s3 = (uint32_t)(a.hi >> 32), m, t;
    __asm__(
        "mov    %[m], #0\n\t"
        "adds   %[s0], %[s0], %[b0]\n\t"
        "adcs   %[s1], %[s1], %[b1]\n\t"
        "adcs   %[s2], %[s2], %[b2]\n\t"
        "adcs   %[s3], %[s3], %[b3]\n\t"
        "adc    %[m], %[m], #0\n\t"
        "adds   %[t], %[s0], #-1\n\t"
        "adcs   %[t], %[s1], #-1\n\t"
        "adcs   %[t], %[s2], #0x1B\n\t"
        "adcs   %[t], %[s3], #0\n\t"
        "adc    %[m], %[m], #0\n\t"
        "rsb    %[m], %[m], #0\n\t"
        "and    %[t], %[m], #0x1B\n\t"
        "adds   %[s0], %[s0], %[m]\n\t"
        "adcs   %[s1], %[s1], %[m]\n\t"
        "adcs   %[s2], %[s2], %[t]\n\t"
        "adc    %[s3], %[s3], #0"
        : [s0] "+&r"(s0), [s1] "+&r"(s1), [s2] "+&r"(s2), [s3] "+&r"(s3), [m] "=&r"(m), [t] "=&r"(t)
        : [b0] "r"((uint32_t)b.lo), [b1] "r"((uint32_t)(b.lo >> 32)), [b2] "r"((uint32_t)b.hi),
          [b3] "r"((uint32_t)(b.hi >> 32))
        : "cc");
    return f128_make(s0 | ((uint64_t)s1 << 32), s2 | ((uint64_t)s3 << 32));
}

F128_INLINE f128_t f128_sub(f128_t a, f128_t b)
{
    uint32_t d0 = (uint32_t)a.lo, d1 = (uint32_t)(a.lo >> 32), d2 = (uint32_t)a.hi,
             d3 = (uint32_t)(a.hi >> 32), m, t;
    __asm__(
        "subs   %[d0], %[d0], %[b0]\n\t"
        "sbcs   %[d1], %[d1], %[b1]\n\t"
        "sbcs   %[d2], %[d2], %[b2]\n\t"
        "sbcs   %[d3], %[d3], %[b3]\n\t"
        "sbc    %[m], %[m], %[m]\n\t"
        "and    %[t], %[m], #0x1B\n\t"
        "subs   %[d0], %[d0], %[m]\n\t"
        "sbcs   %[d1], %[d1], %[m]\n\t"
        "sbcs   %[d2], %[d2], %[t]\n\t"
        "sbc    %[d3], %[d3], #0"
        : [d0] "+&r"(d0), [d1] "+&r"(d1), [d2] "+&r"(d2), [d3] "+&r"(d3), [m] "=&r"(m), [t] "=&r"(t)
        : [b0] "r"((uint32_t)b.lo), [b1] "r"((uint32_t)(b.lo >> 32)), [b2] "r"((uint32_t)b.hi),
          [b3] "r"((uint32_t)(b.hi >> 32))
        : "cc");
    return f128_make(d0 | ((uint64_t)d1 << 32), d2 | ((uint64_t)d3 << 32));
}
#else
F128_INLINE f128_t f128_add(f128_t a, f128_t b)
{
    uint64_t c1, c2;
    f128_t s = f128_add_raw(a, b.lo, b.hi, &c1);
    f128_t t = f128_plus_c(s, &c2);
    return f128_select((uint64_t)0 - (c1 | c2), t, s);
}

F128_INLINE f128_t f128_sub(f128_t a, f128_t b)
{
    uint64_t b1, unused;
    f128_t d = f128_sub_raw(a, b.lo, b.hi, &b1);
    /* on a borrow add p, i.e. subtract c = 2^128 - p (mod 2^128) */
    uint64_t m = (uint64_t)0 - b1;
    return f128_sub_raw(d, F128_C_LO & m, F128_C_HI & m, &unused);
}
#endif

F128_INLINE f128_t f128_neg(f128_t a)
{
    return f128_sub(f128_make(0, 0), a);
}

/* A value below 2^128 made canonical: subtract p once if it is >= p. */
F128_INLINE f128_t f128_canonical(f128_t s)
{
    uint64_t c;
    f128_t t = f128_plus_c(s, &c);
    return f128_select((uint64_t)0 - c, t, s);
}

#if DPM_VDAF_HAVE_U128
/* x = [w0 w1 w2 w3] (64-bit words) modulo p, with 2^128 = 28 2^64 - 1 and 2^192 = 783 2^64 - 28
 * (mod p): x = (w0 - w2 - 28 w3) + 2^64 (w1 + 28 w2 + 783 w3), a value in [0, 2^138) (the
 * borrow out of the low word never exceeds the high part: 28 w2 + 783 w3 >= w2 + 28 w3 when they
 * are not both 0); its words x0, x1 and x2 < 2^10 folded with 2^128 = 28 2^64 - 1 (below
 * 2^128 + 2^75), once more (the top word is 0 or 1, and when it is 1 the middle one is below
 * 2^15, so nothing carries: below 2^128), and p subtracted once if the value is >= p. Unsigned
 * words, multiplications by the small constants and borrows as 0 / 1 values: a third of the
 * instructions of three signed 128-bit folds with GCC 12 (-O2). */
static inline f128_t f128_reduce4(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3)
{
    const dpm_u128_t s = (dpm_u128_t)w3 * 28u + w2; /* < 2^70, subtracted from the low word */
    const dpm_u128_t hi = (dpm_u128_t)w2 * 28u + (dpm_u128_t)w3 * 783u + w1; /* < 2^74 */
    uint64_t x0;
    const uint64_t b0 = (uint64_t)__builtin_sub_overflow(w0, (uint64_t)s, &x0);
    const dpm_u128_t x12 = hi - (uint64_t)(s >> 64) - b0; /* >= 0, < 2^74 */
    const uint64_t x1 = (uint64_t)x12, x2 = (uint64_t)(x12 >> 64);
    uint64_t y0; /* fold 2: (x0 - x2) + 2^64 (x1 + 28 x2) */
    const uint64_t b1 = (uint64_t)__builtin_sub_overflow(x0, x2, &y0);
    const dpm_u128_t y12 = (dpm_u128_t)x1 + (28u * x2 - b1); /* 28 x2 - b1 >= 0: b1 needs x2 */
    const uint64_t y1 = (uint64_t)y12, y2 = (uint64_t)(y12 >> 64);
    uint64_t z0; /* fold 3: (y0 - y2) + 2^64 (y1 + 28 y2) */
    const uint64_t b2 = (uint64_t)__builtin_sub_overflow(y0, y2, &z0);
    const uint64_t z1 = y1 + (28u * y2 - b2);
    /* z - p = z + (2^128 - p) - 2^128: taken when that sum reaches 2^128 */
    uint64_t c;
    const f128_t t = f128_plus_c(f128_make(z0, z1), &c);
    return f128_select((uint64_t)0 - c, t, f128_make(z0, z1));
}

F128_MUL f128_t f128_mul(f128_t a, f128_t b)
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
/* 32-bit limbs r[0..7] (the product) modulo p: with H = r[4..7] and 2^128 = 28 2^64 - 1,
 * x = L - H + 28 H 2^64, summed limb by limb in a signed accumulator (fold 1: < 2^197); the
 * same with H = limbs 4..6 (fold 2: < 2^139) and with H = limb 4 (fold 3: < 2^128 + 2^80,
 * limb 4 is 0 or 1); then p is subtracted once if the value is >= p. Unrolled: this is the
 * device's inner loop. */
static inline f128_t f128_reduce8(const uint32_t r[8])
{
    int64_t acc;
    uint32_t x0, x1, x2, x3, x4, x5, x6;
    acc = (int64_t)r[0] - r[4];
    x0 = (uint32_t)acc;
    acc = (acc >> 32) + r[1] - r[5];
    x1 = (uint32_t)acc;
    acc = (acc >> 32) + r[2] - r[6] + (int64_t)r[4] * 28;
    x2 = (uint32_t)acc;
    acc = (acc >> 32) + r[3] - r[7] + (int64_t)r[5] * 28;
    x3 = (uint32_t)acc;
    acc = (acc >> 32) + (int64_t)r[6] * 28;
    x4 = (uint32_t)acc;
    acc = (acc >> 32) + (int64_t)r[7] * 28;
    x5 = (uint32_t)acc;
    x6 = (uint32_t)(acc >> 32);
    /* fold 2: H = (x4, x5, x6) */
    acc = (int64_t)x0 - x4;
    x0 = (uint32_t)acc;
    acc = (acc >> 32) + x1 - x5;
    x1 = (uint32_t)acc;
    acc = (acc >> 32) + x2 - x6 + (int64_t)x4 * 28;
    x2 = (uint32_t)acc;
    acc = (acc >> 32) + x3 + (int64_t)x5 * 28;
    x3 = (uint32_t)acc;
    acc = (acc >> 32) + (int64_t)x6 * 28;
    x4 = (uint32_t)acc;
    /* fold 3: H = x4 */
    acc = (int64_t)x0 - x4;
    x0 = (uint32_t)acc;
    acc = (acc >> 32) + x1;
    x1 = (uint32_t)acc;
    acc = (acc >> 32) + x2 + (int64_t)x4 * 28;
    x2 = (uint32_t)acc;
    acc = (acc >> 32) + x3;
    x3 = (uint32_t)acc;
    x4 = (uint32_t)(acc >> 32);
    /* x - p = x + (2^128 - p) - 2^128: taken when that sum reaches 2^128 */
    uint64_t u = (uint64_t)x0 + 0xFFFFFFFFu;
    uint32_t w0 = (uint32_t)u;
    u = (u >> 32) + x1 + 0xFFFFFFFFu;
    uint32_t w1 = (uint32_t)u;
    u = (u >> 32) + x2 + 0x1Bu;
    uint32_t w2 = (uint32_t)u;
    u = (u >> 32) + x3;
    uint32_t w3 = (uint32_t)u;
    uint32_t m = 0u - (uint32_t)((u >> 32) + x4); /* the sum's bit 128: 0 or 1 */
    return f128_make((uint64_t)((w0 & m) | (x0 & ~m)) | ((uint64_t)((w1 & m) | (x1 & ~m)) << 32),
                     (uint64_t)((w2 & m) | (x2 & ~m)) | ((uint64_t)((w3 & m) | (x3 & ~m)) << 32));
}

#if DPM_VDAF_ARMV7EM
/* Armv7E-M (Cortex-M4, M7): UMAAL computes RdHi:RdLo = Rn * Rm + RdHi + RdLo in one
 * instruction of fixed timing; the compiler does not emit it, so each step of the row-by-row
 * product is written as one. (Cortex-M3 has no UMAAL, and its UMULL takes operand-dependent
 * time: see README "Two aggregators".) The reduction is one block of flag-chained adds and
 * subtracts (f128_reduce8_asm), what a 32-bit core does best and C cannot say. */
#define F128_UMAAL(lo, hi, x, y)                                                                   \
    __asm__("umaal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(x), "r"(y))
F128_MUL void f128_mul_to(f128_t *out, const f128_t *a, const f128_t *b)
{
    const uint32_t a0 = (uint32_t)a->lo, a1 = (uint32_t)(a->lo >> 32), a2 = (uint32_t)a->hi,
                   a3 = (uint32_t)(a->hi >> 32);
    const uint32_t b0 = (uint32_t)b->lo, b1 = (uint32_t)(b->lo >> 32), b2 = (uint32_t)b->hi,
                   b3 = (uint32_t)(b->hi >> 32);
    uint32_t r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4, r5, r6, r7, c;
    c = 0;
    F128_UMAAL(r0, c, a0, b0);
    F128_UMAAL(r1, c, a0, b1);
    F128_UMAAL(r2, c, a0, b2);
    F128_UMAAL(r3, c, a0, b3);
    r4 = c;
    c = 0;
    F128_UMAAL(r1, c, a1, b0);
    F128_UMAAL(r2, c, a1, b1);
    F128_UMAAL(r3, c, a1, b2);
    F128_UMAAL(r4, c, a1, b3);
    r5 = c;
    c = 0;
    F128_UMAAL(r2, c, a2, b0);
    F128_UMAAL(r3, c, a2, b1);
    F128_UMAAL(r4, c, a2, b2);
    F128_UMAAL(r5, c, a2, b3);
    r6 = c;
    c = 0;
    F128_UMAAL(r3, c, a3, b0);
    F128_UMAAL(r4, c, a3, b1);
    F128_UMAAL(r5, c, a3, b2);
    F128_UMAAL(r6, c, a3, b3);
    r7 = c;
    /* The product X = L + Hl 2^128 + Hh 2^192 (L = r0..r3, Hl = r4 r5, Hh = r6 r7) modulo p,
     * with 2^128 = 28 2^64 - 1 and 2^192 = 783 2^64 - 28 (mod p), and N = Hl + 28 Hh:
     *   X = L - N + (28 N - Hh) 2^64                      (28 N - Hh = 28 Hl + 783 Hh)
     * N < 29 2^64 (three words, the top one <= 28). The value Y = L - N - Hh 2^64 + 28 N 2^64
     * is kept in five words modulo 2^160; it is >= 0 (28 N 2^64 >= N + Hh 2^64) and below
     * 812 2^128, so the fifth word y4 ends in [0, 812). Fold 2 (2^128 = 28 2^64 - 1):
     *   Z = Ylo - y4 + 28 y4 2^64, in [0, 2^128 + 2^79): a fifth word z4 of 0 or 1.
     * Last, p is subtracted once if Z >= p, i.e. 2^128 - p = 28 2^64 - 1 added modulo 2^128
     * when z4 + carry(Zlo + 2^128 - p) = 1 (never 2: z4 = 1 leaves Zlo < 2^79). Every step
     * is flag arithmetic; the one decision is a mask. */
    uint32_t k, t, u, z;
    __asm__("mov    %[k], #28\n\t"
            "umull  %[t], %[u], %[r6], %[k]\n\t" /* N = (r4, r5, u) */
            "adds   %[r4], %[r4], %[t]\n\t"
            "adc    %[u], %[u], #0\n\t"
            "umaal  %[r5], %[u], %[r7], %[k]\n\t"
            "subs   %[r0], %[r0], %[r4]\n\t" /* Y = L - N */
            "sbcs   %[r1], %[r1], %[r5]\n\t"
            "sbcs   %[r2], %[r2], %[u]\n\t"
            "sbcs   %[r3], %[r3], #0\n\t"
            "sbc    %[c], %[c], %[c]\n\t"
            "subs   %[r2], %[r2], %[r6]\n\t" /* Y -= Hh 2^64 */
            "sbcs   %[r3], %[r3], %[r7]\n\t"
            "sbc    %[c], %[c], #0\n\t"
            "umull  %[t], %[r6], %[r4], %[k]\n\t" /* 28 N = (t, r6, r4) */
            "mov    %[r4], #0\n\t"
            "umlal  %[r6], %[r4], %[r5], %[k]\n\t"
            "mla    %[r4], %[u], %[k], %[r4]\n\t"
            "adds   %[r2], %[r2], %[t]\n\t" /* Y += 28 N 2^64: y4 in c */
            "adcs   %[r3], %[r3], %[r6]\n\t"
            "adc    %[c], %[c], %[r4]\n\t"
            "mul    %[t], %[c], %[k]\n\t" /* Z = Ylo - y4 + 28 y4 2^64 */
            "subs   %[r0], %[r0], %[c]\n\t"
            "sbcs   %[r1], %[r1], #0\n\t"
            "sbcs   %[r2], %[r2], #0\n\t"
            "sbcs   %[r3], %[r3], #0\n\t"
            "sbc    %[c], %[c], %[c]\n\t"
            "adds   %[r2], %[r2], %[t]\n\t"
            "adcs   %[r3], %[r3], #0\n\t"
            "adc    %[c], %[c], #0\n\t"
            "adds   %[t], %[r0], #-1\n\t" /* z4 + carry(Zlo + 2^128 - p) */
            "adcs   %[t], %[r1], #-1\n\t"
            "adcs   %[t], %[r2], #0x1B\n\t"
            "adcs   %[t], %[r3], #0\n\t"
            "adc    %[c], %[c], #0\n\t"
            "rsb    %[c], %[c], #0\n\t" /* the mask, then Z + ((2^128 - p) & mask) */
            "and    %[t], %[c], #0x1B\n\t"
            "adds   %[r0], %[r0], %[c]\n\t"
            "adcs   %[r1], %[r1], %[c]\n\t"
            "adcs   %[r2], %[r2], %[t]\n\t"
            "adc    %[r3], %[r3], #0"
            : [r0] "+&r"(r0), [r1] "+&r"(r1), [r2] "+&r"(r2), [r3] "+&r"(r3), [r4] "+&r"(r4),
              [r5] "+&r"(r5), [r6] "+&r"(r6), [c] "=&r"(z), [k] "=&r"(k), [t] "=&r"(t), [u] "=&r"(u)
            : [r7] "r"(r7)
            : "cc");
    *out = f128_make(r0 | ((uint64_t)r1 << 32), r2 | ((uint64_t)r3 << 32));
}

/* By value for the callers, through memory for the call: a 16-byte struct argument or result
 * travels through the stack under the 32-bit Arm calling convention anyway. */
F128_INLINE f128_t f128_mul(f128_t a, f128_t b)
{
    f128_t r;
    f128_mul_to(&r, &a, &b);
    return r;
}

/* The butterfly of the transforms in place: (x, y) <- (x + y, x - y), the same arithmetic as
 * f128_add and f128_sub, on the operands where they lie (the compiler's copies of two 16-byte
 * values cost more than the arithmetic). y is read twice: once for the sum, again for the
 * difference after the sum has been stored. */
F128_MUL void f128_bfly(f128_t *x, f128_t *y)
{
    uint32_t x0, x1, x2, x3, y0, y1, y2, y3, m, t;
    __asm__ volatile(
        "ldrd   %[x0], %[x1], [%[px]]\n\t"
        "ldrd   %[x2], %[x3], [%[px], #8]\n\t"
        "ldrd   %[y0], %[y1], [%[py]]\n\t"
        "ldrd   %[y2], %[y3], [%[py], #8]\n\t"
        "mov    %[m], #0\n\t"
        "adds   %[y0], %[x0], %[y0]\n\t"
        "adcs   %[y1], %[x1], %[y1]\n\t"
        "adcs   %[y2], %[x2], %[y2]\n\t"
        "adcs   %[y3], %[x3], %[y3]\n\t"
        "adc    %[m], %[m], #0\n\t"
        "adds   %[t], %[y0], #-1\n\t"
        "adcs   %[t], %[y1], #-1\n\t"
        "adcs   %[t], %[y2], #0x1B\n\t"
        "adcs   %[t], %[y3], #0\n\t"
        "adc    %[m], %[m], #0\n\t"
        "rsb    %[m], %[m], #0\n\t"
        "and    %[t], %[m], #0x1B\n\t"
        "adds   %[y0], %[y0], %[m]\n\t"
        "adcs   %[y1], %[y1], %[m]\n\t"
        "adcs   %[y2], %[y2], %[t]\n\t"
        "adc    %[y3], %[y3], #0\n\t"
        "strd   %[y0], %[y1], [%[px]]\n\t"
        "strd   %[y2], %[y3], [%[px], #8]\n\t"
        "ldrd   %[y0], %[y1], [%[py]]\n\t"
        "ldrd   %[y2], %[y3], [%[py], #8]\n\t"
        "subs   %[x0], %[x0], %[y0]\n\t"
        "sbcs   %[x1], %[x1], %[y1]\n\t"
        "sbcs   %[x2], %[x2], %[y2]\n\t"
        "sbcs   %[x3], %[x3], %[y3]\n\t"
        "sbc    %[m], %[m], %[m]\n\t"
        "and    %[t], %[m], #0x1B\n\t"
        "subs   %[x0], %[x0], %[m]\n\t"
        "sbcs   %[x1], %[x1], %[m]\n\t"
        "sbcs   %[x2], %[x2], %[t]\n\t"
        "sbc    %[x3], %[x3], #0\n\t"
        "strd   %[x0], %[x1], [%[py]]\n\t"
        "strd   %[x2], %[x3], [%[py], #8]"
        : [x0] "=&r"(x0), [x1] "=&r"(x1), [x2] "=&r"(x2), [x3] "=&r"(x3), [y0] "=&r"(y0),
          [y1] "=&r"(y1), [y2] "=&r"(y2), [y3] "=&r"(y3), [m] "=&r"(m), [t] "=&r"(t)
        : [px] "r"(x), [py] "r"(y)
        : "cc", "memory");
}
#else
F128_MUL f128_t f128_mul(f128_t a, f128_t b)
{
    const uint32_t a0 = (uint32_t)a.lo, a1 = (uint32_t)(a.lo >> 32), a2 = (uint32_t)a.hi,
                   a3 = (uint32_t)(a.hi >> 32);
    const uint32_t b0 = (uint32_t)b.lo, b1 = (uint32_t)(b.lo >> 32), b2 = (uint32_t)b.hi,
                   b3 = (uint32_t)(b.hi >> 32);
    uint32_t r[8];
    uint64_t t; /* each step a * b + c + d < 2^64: one UMAAL on Armv7E-M */
    t = (uint64_t)a0 * b0;
    r[0] = (uint32_t)t;
    t = (uint64_t)a0 * b1 + (t >> 32);
    r[1] = (uint32_t)t;
    t = (uint64_t)a0 * b2 + (t >> 32);
    r[2] = (uint32_t)t;
    t = (uint64_t)a0 * b3 + (t >> 32);
    r[3] = (uint32_t)t;
    r[4] = (uint32_t)(t >> 32);
    t = (uint64_t)a1 * b0 + r[1];
    r[1] = (uint32_t)t;
    t = (uint64_t)a1 * b1 + r[2] + (t >> 32);
    r[2] = (uint32_t)t;
    t = (uint64_t)a1 * b2 + r[3] + (t >> 32);
    r[3] = (uint32_t)t;
    t = (uint64_t)a1 * b3 + r[4] + (t >> 32);
    r[4] = (uint32_t)t;
    r[5] = (uint32_t)(t >> 32);
    t = (uint64_t)a2 * b0 + r[2];
    r[2] = (uint32_t)t;
    t = (uint64_t)a2 * b1 + r[3] + (t >> 32);
    r[3] = (uint32_t)t;
    t = (uint64_t)a2 * b2 + r[4] + (t >> 32);
    r[4] = (uint32_t)t;
    t = (uint64_t)a2 * b3 + r[5] + (t >> 32);
    r[5] = (uint32_t)t;
    r[6] = (uint32_t)(t >> 32);
    t = (uint64_t)a3 * b0 + r[3];
    r[3] = (uint32_t)t;
    t = (uint64_t)a3 * b1 + r[4] + (t >> 32);
    r[4] = (uint32_t)t;
    t = (uint64_t)a3 * b2 + r[5] + (t >> 32);
    r[5] = (uint32_t)t;
    t = (uint64_t)a3 * b3 + r[6] + (t >> 32);
    r[6] = (uint32_t)t;
    r[7] = (uint32_t)(t >> 32);
    return f128_reduce8(r);
}
#endif
#endif

#if !DPM_VDAF_ARMV7EM
/* In-memory forms of the multiplication and the butterfly (the Armv7E-M ones are above). */
F128_INLINE void f128_mul_to(f128_t *out, const f128_t *a, const f128_t *b)
{
    *out = f128_mul(*a, *b);
}

F128_INLINE void f128_bfly(f128_t *x, f128_t *y)
{
    const f128_t u = *x, v = *y;
    *x = f128_add(u, v);
    *y = f128_sub(u, v);
}
#endif

#endif /* DPM_VDAF_FIELD_H */
