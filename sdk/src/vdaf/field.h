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
F128_INLINE f128_t f128_add_raw(f128_t a, uint64_t b_lo, uint64_t b_hi, uint64_t *carry)
{
    dpm_u128_t t = (dpm_u128_t)a.lo + b_lo;
    uint64_t lo = (uint64_t)t;
    t = (t >> 64) + a.hi + b_hi;
    *carry = (uint64_t)(t >> 64);
    return f128_make(lo, (uint64_t)t);
}
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
__extension__ typedef __int128 dpm_i128_t;
/* x = [w0 w1 w2 w3] (64-bit words) modulo p: with H = (w2, w3) and 2^128 = 28 2^64 - 1,
 * x = L - H + 28 H 2^64, summed word by word in a signed accumulator (fold 1: < 2^197); the
 * same with H = (x2, x3) (fold 2: < 2^139) and H = x2 (fold 3: < 2^128 + 2^80, x2 is 0 or
 * 1); then p is subtracted once if the value is >= p. */
static inline f128_t f128_reduce4(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3)
{
    dpm_i128_t acc = (dpm_i128_t)w0 - w2;
    uint64_t x0 = (uint64_t)acc;
    acc = (acc >> 64) + w1 - w3 + (dpm_i128_t)w2 * 28;
    uint64_t x1 = (uint64_t)acc;
    acc = (acc >> 64) + (dpm_i128_t)w3 * 28;
    uint64_t x2 = (uint64_t)acc, x3 = (uint64_t)(acc >> 64);
    acc = (dpm_i128_t)x0 - x2; /* fold 2 */
    x0 = (uint64_t)acc;
    acc = (acc >> 64) + x1 - x3 + (dpm_i128_t)x2 * 28;
    x1 = (uint64_t)acc;
    acc = (acc >> 64) + (dpm_i128_t)x3 * 28;
    x2 = (uint64_t)acc;
    acc = (dpm_i128_t)x0 - x2; /* fold 3 */
    x0 = (uint64_t)acc;
    acc = (acc >> 64) + x1 + (dpm_i128_t)x2 * 28;
    x1 = (uint64_t)acc;
    x2 = (uint64_t)(acc >> 64);
    /* x - p = x + (2^128 - p) - 2^128: taken when that sum reaches 2^128 */
    dpm_u128_t u = (dpm_u128_t)x0 + F128_C_LO;
    uint64_t y0 = (uint64_t)u;
    u = (u >> 64) + x1 + F128_C_HI;
    uint64_t y1 = (uint64_t)u;
    uint64_t m = (uint64_t)0 - ((uint64_t)(u >> 64) + x2);
    return f128_make((y0 & m) | (x0 & ~m), (y1 & m) | (x1 & ~m));
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

#if defined(__GNUC__) && defined(__ARM_ARCH_7EM__) && !defined(DPM_VDAF_PORTABLE_MUL)
/* Armv7E-M (Cortex-M4, M7): UMAAL computes RdHi:RdLo = Rn * Rm + RdHi + RdLo in one
 * instruction of fixed timing; the compiler does not emit it, so each step of the row-by-row
 * product is written as one. (Cortex-M3 has no UMAAL, and its UMULL takes operand-dependent
 * time: see README "Two aggregators".) */
#define F128_UMAAL(lo, hi, x, y)                                                                   \
    __asm__("umaal %0, %1, %2, %3" : "+r"(lo), "+r"(hi) : "r"(x), "r"(y))
F128_MUL f128_t f128_mul(f128_t a, f128_t b)
{
    const uint32_t a0 = (uint32_t)a.lo, a1 = (uint32_t)(a.lo >> 32), a2 = (uint32_t)a.hi,
                   a3 = (uint32_t)(a.hi >> 32);
    const uint32_t b0 = (uint32_t)b.lo, b1 = (uint32_t)(b.lo >> 32), b2 = (uint32_t)b.hi,
                   b3 = (uint32_t)(b.hi >> 32);
    uint32_t r[8] = {0, 0, 0, 0, 0, 0, 0, 0}, c;
    c = 0;
    F128_UMAAL(r[0], c, a0, b0);
    F128_UMAAL(r[1], c, a0, b1);
    F128_UMAAL(r[2], c, a0, b2);
    F128_UMAAL(r[3], c, a0, b3);
    r[4] = c;
    c = 0;
    F128_UMAAL(r[1], c, a1, b0);
    F128_UMAAL(r[2], c, a1, b1);
    F128_UMAAL(r[3], c, a1, b2);
    F128_UMAAL(r[4], c, a1, b3);
    r[5] = c;
    c = 0;
    F128_UMAAL(r[2], c, a2, b0);
    F128_UMAAL(r[3], c, a2, b1);
    F128_UMAAL(r[4], c, a2, b2);
    F128_UMAAL(r[5], c, a2, b3);
    r[6] = c;
    c = 0;
    F128_UMAAL(r[3], c, a3, b0);
    F128_UMAAL(r[4], c, a3, b1);
    F128_UMAAL(r[5], c, a3, b2);
    F128_UMAAL(r[6], c, a3, b3);
    r[7] = c;
    return f128_reduce8(r);
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

#endif /* DPM_VDAF_FIELD_H */
