/* SPDX-License-Identifier: Apache-2.0 */
/* Certified lower/upper bounds of exp(x) with integer arithmetic only (see xexp.h). */
#include "dpm_internal.h"

#include "noise/xexp.h"

#define XEXP_ENTRIES 75     /* exp(2^(b - 64)) for b = 0..74 */
#define XEXP_Q16_ENTRIES 27 /* exp(2^(b - 16)) for b = 0..26: the bits of a Q16.16 exponent */
#define TOP_BIT (UINT64_C(1) << 63)
#define LOW32 UINT64_C(0xffffffff)

/* ---- 128-bit helpers (portable: 32x32->64 multiplies only) --------------------------- */

typedef struct {
    uint64_t hi;
    uint64_t lo;
} u128_t;

/* Inlined: a frame less under every product (the device's deepest call runs through one). */
static DPM_ALWAYS_INLINE u128_t mul_64x64(uint64_t a, uint64_t b)
{
    u128_t r;
    r.lo = dpm_mul_u64(a, b, &r.hi);
    return r;
}

/* floor(x / 2^s) for s < 128 */
static u128_t shr_128(u128_t x, uint32_t s)
{
    u128_t r;
    if (s == 0) {
        return x;
    }
    if (s >= 64) {
        r.hi = 0;
        r.lo = x.hi >> (s - 64);
        return r;
    }
    r.hi = x.hi >> s;
    r.lo = (x.lo >> s) | (x.hi << (64 - s));
    return r;
}

/* ---- soft float -------------------------------------------------------------------- */

static dpm_xf_t xf_make(uint64_t m, int32_t e)
{
    dpm_xf_t r;
    r.m = m;
    r.e = e;
    return r;
}

/* The next representable value above a (a != 0): the `up` flavour's rounding step. */
static dpm_xf_t xf_next_up(dpm_xf_t a)
{
    a.m++;
    if (a.m == 0) { /* carried out of 2^64: renormalize */
        a.m = TOP_BIT;
        a.e++;
    }
    return a;
}

dpm_xf_t dpm_xf_from_u64(uint64_t n)
{
    int32_t e = 0;
    if (n == 0) {
        return xf_make(0, 0);
    }
    while ((n & TOP_BIT) == 0) {
        n <<= 1;
        e--;
    }
    return xf_make(n, e);
}

/* Top 64 bits of the normalized product and whether any lower bit was dropped. One copy
 * for both flavours (not inlined into each): the tuple builds call both, and two inlined
 * copies cost ~100 bytes of flash on a Cortex-M4 (make size). */
static DPM_NOINLINE dpm_xf_t xf_mul(dpm_xf_t a, dpm_xf_t b, int round_up)
{
    if (a.m == 0 || b.m == 0) {
        return xf_make(0, 0);
    }
    u128_t p = mul_64x64(a.m, b.m); /* in [2^126, 2^128) */
    uint64_t m;
    uint64_t lost;
    int32_t e = a.e + b.e + 64;
    if ((p.hi & TOP_BIT) != 0) {
        m = p.hi;
        lost = p.lo;
    } else {
        m = (p.hi << 1) | (p.lo >> 63);
        lost = p.lo << 1;
        e--;
    }
    dpm_xf_t r = xf_make(m, e);
    return (round_up && lost != 0) ? xf_next_up(r) : r;
}

dpm_xf_t dpm_xf_mul_down(dpm_xf_t a, dpm_xf_t b)
{
    return xf_mul(a, b, 0);
}

dpm_xf_t dpm_xf_mul_up(dpm_xf_t a, dpm_xf_t b)
{
    return xf_mul(a, b, 1);
}

/* Align b to a's exponent (a >= b in exponent), add, renormalize; round_up ceils each drop. */
static dpm_xf_t xf_add(dpm_xf_t a, dpm_xf_t b, int round_up)
{
    if (a.m == 0) {
        return b;
    }
    if (b.m == 0) {
        return a;
    }
    if (a.e < b.e) {
        dpm_xf_t t = a;
        a = b;
        b = t;
    }
    uint32_t shift = (uint32_t)(a.e - b.e);
    uint64_t part = shift >= 64 ? 0 : b.m >> shift;
    int lost = shift >= 64 || (part << shift) != b.m;
    uint64_t sum = a.m + part;
    dpm_xf_t r;
    if (sum < a.m) { /* carry: the true sum is 2^64 + sum, halve it */
        lost = lost || (sum & 1u) != 0;
        r = xf_make((sum >> 1) | TOP_BIT, a.e + 1);
    } else {
        r = xf_make(sum, a.e);
    }
    return (round_up && lost) ? xf_next_up(r) : r;
}

dpm_xf_t dpm_xf_add_down(dpm_xf_t a, dpm_xf_t b)
{
    return xf_add(a, b, 0);
}

dpm_xf_t dpm_xf_add_up(dpm_xf_t a, dpm_xf_t b)
{
    return xf_add(a, b, 1);
}

dpm_xf_t dpm_xf_half(dpm_xf_t a)
{
    if (a.m != 0) {
        a.e--;
    }
    return a;
}

/* m * den * 2^e >= num  <=>  (e >= 0) m * den >= ceil(num / 2^e)
 *                        <=>  (e < 0)  floor(m * den / 2^-e) >= num  (num is an integer). */
int dpm_xf_ge_ratio(dpm_xf_t a, uint64_t num, uint64_t den)
{
    u128_t p = mul_64x64(a.m, den);
    if (a.e >= 0) {
        if (a.m == 0) {
            return num == 0;
        }
        /* m * den >= 2^63 and the scaled side only grows: compare against ceil(num / 2^e) */
        uint64_t need = num != 0;
        if (a.e < 64) {
            need = (num >> a.e) + (uint64_t)((num & ((UINT64_C(1) << a.e) - 1u)) != 0);
        }
        return p.hi != 0 || p.lo >= need;
    }
    uint32_t s = (uint32_t) - (int64_t)a.e;
    u128_t q = s >= 128 ? (u128_t){0, 0} : shr_128(p, s);
    return q.hi != 0 || q.lo >= num;
}

uint64_t dpm_xf_to_u64_down(dpm_xf_t a)
{
    if (a.m == 0 || a.e <= -64) {
        return 0;
    }
    if (a.e > 0) {
        return UINT64_MAX;
    }
    return a.m >> (uint32_t)-a.e;
}

uint64_t dpm_xf_to_u64_up(dpm_xf_t a)
{
    if (a.m == 0) {
        return 0;
    }
    if (a.e <= -64) {
        return 1; /* 0 < a < 1 */
    }
    if (a.e > 0) {
        return UINT64_MAX;
    }
    uint32_t s = (uint32_t)-a.e;
    uint64_t q = a.m >> s;
    int lost = s != 0 && (q << s) != a.m;
    return (lost && q != UINT64_MAX) ? q + 1u : q;
}

/* 2^p / d = 2^(p - e) / m: long division of a power of two by the 64-bit mantissa. */
static uint64_t pow2_div(uint32_t p, dpm_xf_t d, int round_up)
{
    int64_t n = (int64_t)p - d.e; /* quotient = floor(2^n / m), m in [2^63, 2^64) */
    if (n < 63) {
        return round_up ? 1u : 0u; /* 0 < 2^n / m < 1 */
    }
    if (n > 127) {
        return UINT64_MAX; /* quotient > 2^128 / 2^64 */
    }
    uint64_t q = 0;
    uint64_t r = 1; /* 2^i mod m, i = 0 */
    for (int64_t i = 0; i < n; i++) {
        if ((q & TOP_BIT) != 0) {
            return UINT64_MAX; /* the quotient reaches 2^64 */
        }
        uint64_t top = r >> 63;
        r <<= 1; /* 2r modulo 2^64 when top is set */
        uint64_t bit = top | (uint64_t)(r >= d.m);
        r -= d.m & (0u - bit); /* exact: the true 2r - m is < m < 2^64 */
        q = (q << 1) | bit;
    }
    return (round_up && r != 0 && q != UINT64_MAX) ? q + 1u : q;
}

uint64_t dpm_xf_pow2_div_down(uint32_t p, dpm_xf_t d)
{
    return d.m == 0 ? UINT64_MAX : pow2_div(p, d, 0);
}

uint64_t dpm_xf_pow2_div_up(uint32_t p, dpm_xf_t d)
{
    return d.m == 0 ? UINT64_MAX : pow2_div(p, d, 1);
}

/* ---- exp ----------------------------------------------------------------------------- */

/* exp is accumulated with 128-bit mantissas, (hi 2^64 + lo) 2^e, hi's top bit set, so the
 * 149 roundings cost < 2^-119 together and the final rounding to 64 bits dominates. */
typedef struct {
    uint64_t hi;
    uint64_t lo;
    int32_t e;
} xexp_entry_t;

/* clang-format off */
/* BEGIN GENERATED by gen_xexp_table.py: do not edit by hand */
static const xexp_entry_t xexp_table[XEXP_ENTRIES] = {
    {UINT64_C(0x8000000000000000), UINT64_C(0x8000000000000000), -127}, /* exp(2^-64) */
    {UINT64_C(0x8000000000000001), UINT64_C(0x0000000000000001), -127}, /* exp(2^-63) */
    {UINT64_C(0x8000000000000002), UINT64_C(0x0000000000000004), -127}, /* exp(2^-62) */
    {UINT64_C(0x8000000000000004), UINT64_C(0x0000000000000010), -127}, /* exp(2^-61) */
    {UINT64_C(0x8000000000000008), UINT64_C(0x0000000000000040), -127}, /* exp(2^-60) */
    {UINT64_C(0x8000000000000010), UINT64_C(0x0000000000000100), -127}, /* exp(2^-59) */
    {UINT64_C(0x8000000000000020), UINT64_C(0x0000000000000400), -127}, /* exp(2^-58) */
    {UINT64_C(0x8000000000000040), UINT64_C(0x0000000000001000), -127}, /* exp(2^-57) */
    {UINT64_C(0x8000000000000080), UINT64_C(0x0000000000004000), -127}, /* exp(2^-56) */
    {UINT64_C(0x8000000000000100), UINT64_C(0x0000000000010000), -127}, /* exp(2^-55) */
    {UINT64_C(0x8000000000000200), UINT64_C(0x0000000000040000), -127}, /* exp(2^-54) */
    {UINT64_C(0x8000000000000400), UINT64_C(0x0000000000100000), -127}, /* exp(2^-53) */
    {UINT64_C(0x8000000000000800), UINT64_C(0x0000000000400000), -127}, /* exp(2^-52) */
    {UINT64_C(0x8000000000001000), UINT64_C(0x0000000001000000), -127}, /* exp(2^-51) */
    {UINT64_C(0x8000000000002000), UINT64_C(0x0000000004000000), -127}, /* exp(2^-50) */
    {UINT64_C(0x8000000000004000), UINT64_C(0x0000000010000000), -127}, /* exp(2^-49) */
    {UINT64_C(0x8000000000008000), UINT64_C(0x0000000040000000), -127}, /* exp(2^-48) */
    {UINT64_C(0x8000000000010000), UINT64_C(0x0000000100000000), -127}, /* exp(2^-47) */
    {UINT64_C(0x8000000000020000), UINT64_C(0x0000000400000000), -127}, /* exp(2^-46) */
    {UINT64_C(0x8000000000040000), UINT64_C(0x0000001000000000), -127}, /* exp(2^-45) */
    {UINT64_C(0x8000000000080000), UINT64_C(0x0000004000000000), -127}, /* exp(2^-44) */
    {UINT64_C(0x8000000000100000), UINT64_C(0x0000010000000000), -127}, /* exp(2^-43) */
    {UINT64_C(0x8000000000200000), UINT64_C(0x0000040000000000), -127}, /* exp(2^-42) */
    {UINT64_C(0x8000000000400000), UINT64_C(0x0000100000000002), -127}, /* exp(2^-41) */
    {UINT64_C(0x8000000000800000), UINT64_C(0x0000400000000015), -127}, /* exp(2^-40) */
    {UINT64_C(0x8000000001000000), UINT64_C(0x00010000000000aa), -127}, /* exp(2^-39) */
    {UINT64_C(0x8000000002000000), UINT64_C(0x0004000000000555), -127}, /* exp(2^-38) */
    {UINT64_C(0x8000000004000000), UINT64_C(0x0010000000002aaa), -127}, /* exp(2^-37) */
    {UINT64_C(0x8000000008000000), UINT64_C(0x0040000000015555), -127}, /* exp(2^-36) */
    {UINT64_C(0x8000000010000000), UINT64_C(0x01000000000aaaaa), -127}, /* exp(2^-35) */
    {UINT64_C(0x8000000020000000), UINT64_C(0x0400000000555555), -127}, /* exp(2^-34) */
    {UINT64_C(0x8000000040000000), UINT64_C(0x1000000002aaaaaa), -127}, /* exp(2^-33) */
    {UINT64_C(0x8000000080000000), UINT64_C(0x4000000015555555), -127}, /* exp(2^-32) */
    {UINT64_C(0x8000000100000001), UINT64_C(0x00000000aaaaaaab), -127}, /* exp(2^-31) */
    {UINT64_C(0x8000000200000004), UINT64_C(0x000000055555555a), -127}, /* exp(2^-30) */
    {UINT64_C(0x8000000400000010), UINT64_C(0x0000002aaaaaab00), -127}, /* exp(2^-29) */
    {UINT64_C(0x8000000800000040), UINT64_C(0x0000015555555aaa), -127}, /* exp(2^-28) */
    {UINT64_C(0x8000001000000100), UINT64_C(0x00000aaaaaab0000), -127}, /* exp(2^-27) */
    {UINT64_C(0x8000002000000400), UINT64_C(0x00005555555aaaaa), -127}, /* exp(2^-26) */
    {UINT64_C(0x8000004000001000), UINT64_C(0x0002aaaaab000000), -127}, /* exp(2^-25) */
    {UINT64_C(0x8000008000004000), UINT64_C(0x001555555aaaaaab), -127}, /* exp(2^-24) */
    {UINT64_C(0x8000010000010000), UINT64_C(0x00aaaaab00000022), -127}, /* exp(2^-23) */
    {UINT64_C(0x8000020000040000), UINT64_C(0x0555555aaaaaaeee), -127}, /* exp(2^-22) */
    {UINT64_C(0x8000040000100000), UINT64_C(0x2aaaab0000008888), -127}, /* exp(2^-21) */
    {UINT64_C(0x8000080000400001), UINT64_C(0x55555aaaaabbbbbb), -127}, /* exp(2^-20) */
    {UINT64_C(0x800010000100000a), UINT64_C(0xaaab00000222222d), -127}, /* exp(2^-19) */
    {UINT64_C(0x8000200004000055), UINT64_C(0x555aaaaaeeeef1c7), -127}, /* exp(2^-18) */
    {UINT64_C(0x80004000100002aa), UINT64_C(0xab00000888893e93), -127}, /* exp(2^-17) */
    {UINT64_C(0x8000800040001555), UINT64_C(0x5aaaabbbbbe93e9a), -127}, /* exp(2^-16) */
    {UINT64_C(0x800100010000aaab), UINT64_C(0x000022222d82db6d), -127}, /* exp(2^-15) */
    {UINT64_C(0x800200040005555a), UINT64_C(0xaaaeeef1c71e11e1), -127}, /* exp(2^-14) */
    {UINT64_C(0x80040010002aab00), UINT64_C(0x0088893e94b94c64), -127}, /* exp(2^-13) */
    {UINT64_C(0x8008004001555aaa), UINT64_C(0xbbbbe93efbf08f0a), -127}, /* exp(2^-12) */
    {UINT64_C(0x801001000aab0002), UINT64_C(0x222d830c31931c15), -127}, /* exp(2^-11) */
    {UINT64_C(0x80200400555aaaee), UINT64_C(0xf1c7367437493bd5), -127}, /* exp(2^-10) */
    {UINT64_C(0x80401002ab000889), UINT64_C(0x3ea0eadeb97a6479), -127}, /* exp(2^-9) */
    {UINT64_C(0x808040155aabbbe9), UINT64_C(0x451521693554f733), -127}, /* exp(2^-8) */
    {UINT64_C(0x810100ab00222d86), UINT64_C(0x1931c15e39b44e99), -127}, /* exp(2^-7) */
    {UINT64_C(0x8204055aaef1c8bd), UINT64_C(0x5c3259f4822735a2), -127}, /* exp(2^-6) */
    {UINT64_C(0x84102b00893f64c7), UINT64_C(0x05e841d5d4064bd3), -127}, /* exp(2^-5) */
    {UINT64_C(0x88415abbe9a76bea), UINT64_C(0xd8d00cf112e4d4a8), -127}, /* exp(2^-4) */
    {UINT64_C(0x910b022db7ae67ce), UINT64_C(0x76b441c27035c6a1), -127}, /* exp(2^-3) */
    {UINT64_C(0xa45af1e1f40c333b), UINT64_C(0x3de1db4dd55f29a7), -127}, /* exp(2^-2) */
    {UINT64_C(0xd3094c70f034de4b), UINT64_C(0x96ff7d5b6f99fcd8), -127}, /* exp(2^-1) */
    {UINT64_C(0xadf85458a2bb4a9a), UINT64_C(0xafdc5620273d3cf1), -126}, /* exp(2^0) */
    {UINT64_C(0xec7325c6a6ed6e61), UINT64_C(0x9d1dd1035b455dd4), -125}, /* exp(2^1) */
    {UINT64_C(0xda64817139d2c33c), UINT64_C(0x6b69dfedc9edcb68), -122}, /* exp(2^2) */
    {UINT64_C(0xba4f53ea38636f85), UINT64_C(0xf007042540ae8ef3), -116}, /* exp(2^3) */
    {UINT64_C(0x87975e8540010249), UINT64_C(0x11f8b84415af72f7), -104}, /* exp(2^4) */
    {UINT64_C(0x8fa1fe625b3163ec), UINT64_C(0x23c4200c210ba03a), -81}, /* exp(2^5) */
    {UINT64_C(0xa12cc167acbe6902), UINT64_C(0xe71eada76d818bab), -35}, /* exp(2^6) */
    {UINT64_C(0xcaf2a62eea10bbfa), UINT64_C(0x9fa6a90cef88e51d), 57}, /* exp(2^7) */
    {UINT64_C(0xa0e3d440a5f5d071), UINT64_C(0x919807bbbed32c2a), 242}, /* exp(2^8) */
    {UINT64_C(0xca3b2825d4297360), UINT64_C(0x4e42b3e00e2d3324), 611}, /* exp(2^9) */
    {UINT64_C(0x9fc169073a8d0d13), UINT64_C(0x21c376b5a19b1690), 1350}, /* exp(2^10) */
};
static const uint64_t xexp_q16_mant[XEXP_Q16_ENTRIES] = {
    UINT64_C(0x8000800040001555), /* exp(2^-16) */
    UINT64_C(0x800100010000aaab), /* exp(2^-15) */
    UINT64_C(0x800200040005555a), /* exp(2^-14) */
    UINT64_C(0x80040010002aab00), /* exp(2^-13) */
    UINT64_C(0x8008004001555aaa), /* exp(2^-12) */
    UINT64_C(0x801001000aab0002), /* exp(2^-11) */
    UINT64_C(0x80200400555aaaee), /* exp(2^-10) */
    UINT64_C(0x80401002ab000889), /* exp(2^-9) */
    UINT64_C(0x808040155aabbbe9), /* exp(2^-8) */
    UINT64_C(0x810100ab00222d86), /* exp(2^-7) */
    UINT64_C(0x8204055aaef1c8bd), /* exp(2^-6) */
    UINT64_C(0x84102b00893f64c7), /* exp(2^-5) */
    UINT64_C(0x88415abbe9a76bea), /* exp(2^-4) */
    UINT64_C(0x910b022db7ae67ce), /* exp(2^-3) */
    UINT64_C(0xa45af1e1f40c333b), /* exp(2^-2) */
    UINT64_C(0xd3094c70f034de4b), /* exp(2^-1) */
    UINT64_C(0xadf85458a2bb4a9a), /* exp(2^0) */
    UINT64_C(0xec7325c6a6ed6e61), /* exp(2^1) */
    UINT64_C(0xda64817139d2c33c), /* exp(2^2) */
    UINT64_C(0xba4f53ea38636f85), /* exp(2^3) */
    UINT64_C(0x87975e8540010249), /* exp(2^4) */
    UINT64_C(0x8fa1fe625b3163ec), /* exp(2^5) */
    UINT64_C(0xa12cc167acbe6902), /* exp(2^6) */
    UINT64_C(0xcaf2a62eea10bbfa), /* exp(2^7) */
    UINT64_C(0xa0e3d440a5f5d071), /* exp(2^8) */
    UINT64_C(0xca3b2825d4297360), /* exp(2^9) */
    UINT64_C(0x9fc169073a8d0d13), /* exp(2^10) */
};
static const int16_t xexp_q16_exp[XEXP_Q16_ENTRIES] = {
    -63, -63, -63, -63, -63, -63, -63, -63, -63, -63, -63, -63, -63, -63,
    -63, -63, -62, -61, -58, -52, -40, -17, 29, 121, 306, 675, 1414,
};
/* END GENERATED */
/* clang-format on */

static uint64_t add_carry(uint64_t a, uint64_t b, uint64_t *carry)
{
    uint64_t s = a + b;
    *carry += (uint64_t)(s < a);
    return s;
}

/* Adds one unit in the last place (the `up` rounding step). */
static xexp_entry_t wide_next_up(xexp_entry_t a)
{
    a.lo++;
    if (a.lo == 0) {
        a.hi++;
        if (a.hi == 0) { /* 2^128: renormalize */
            a.hi = TOP_BIT;
            a.e++;
        }
    }
    return a;
}

/* Top 128 bits of the normalized 256-bit product; *lost is set if a dropped bit was 1. */
static xexp_entry_t wide_mul(xexp_entry_t a, xexp_entry_t b, int *lost)
{
    u128_t p00 = mul_64x64(a.lo, b.lo);
    u128_t p01 = mul_64x64(a.lo, b.hi);
    u128_t p10 = mul_64x64(a.hi, b.lo);
    u128_t p11 = mul_64x64(a.hi, b.hi);
    uint64_t c1 = 0;
    uint64_t c2 = 0;
    uint64_t w0 = p00.lo;
    uint64_t w1 = add_carry(add_carry(p00.hi, p01.lo, &c1), p10.lo, &c1);
    uint64_t w2 = add_carry(add_carry(add_carry(p11.lo, p01.hi, &c2), p10.hi, &c2), c1, &c2);
    uint64_t w3 = p11.hi + c2; /* the product is < 2^256: no carry out */
    xexp_entry_t r;
    r.e = a.e + b.e + 128;
    if ((w3 & TOP_BIT) == 0) { /* product in [2^254, 2^255): shift one up */
        w3 = (w3 << 1) | (w2 >> 63);
        w2 = (w2 << 1) | (w1 >> 63);
        w1 = (w1 << 1) | (w0 >> 63);
        w0 <<= 1;
        r.e--;
    }
    r.hi = w3;
    r.lo = w2;
    *lost = (w1 | w0) != 0;
    return r;
}

/* Product of table entries over the set bits of the 75-bit fixed-point exponent, floored
 * (down) or ceiled (up) at every step: entry + 1 ulp bounds exp(2^i) from above because
 * the floored entry is never exact (exp(2^i) is irrational). */
static dpm_xf_t xexp(uint32_t ipart, uint64_t frac, int round_up)
{
    xexp_entry_t r = {TOP_BIT, 0, -127}; /* 1 */
    if (ipart > DPM_XEXP_MAX_INT) {
        ipart = DPM_XEXP_MAX_INT;
    }
    for (uint32_t b = 0; b < XEXP_ENTRIES; b++) {
        uint64_t set = b < 64 ? (frac >> b) & 1u : (ipart >> (b - 64)) & 1u;
        if (set != 0) {
            xexp_entry_t f = round_up ? wide_next_up(xexp_table[b]) : xexp_table[b];
            int lost;
            r = wide_mul(r, f, &lost);
            r = (round_up && lost) ? wide_next_up(r) : r;
        }
    }
    dpm_xf_t out = xf_make(r.hi, r.e + 64);
    return (round_up && r.lo != 0) ? xf_next_up(out) : out;
}

dpm_xf_t dpm_xexp_down(uint32_t ipart, uint64_t frac)
{
    return xexp(ipart, frac, 0);
}

dpm_xf_t dpm_xexp_up(uint32_t ipart, uint64_t frac)
{
    return xexp(ipart, frac, 1);
}

/* The product of the 64-bit floored entries over q's set bits, each product floored: up to
 * 27 entries and 26 products, each low by < 2^-63 relative, so the result is within 2^-57 of
 * exp. A separate function and table so that a build without the Laplace sampler (the only
 * caller of the 128-bit path) links 270 bytes of table instead of 1,800 and no wide product. */
dpm_xf_t dpm_xexp_q16_down(uint32_t q)
{
    if ((q >> 16) > DPM_XEXP_MAX_INT) {
        q = (DPM_XEXP_MAX_INT << 16) | (q & 0xffffu); /* clamped: still a lower bound */
    }
    dpm_xf_t r = xf_make(TOP_BIT, -63); /* 1 */
    for (uint32_t b = 0; b < XEXP_Q16_ENTRIES; b++) {
        if (((q >> b) & 1u) != 0) {
            r = xf_mul(r, xf_make(xexp_q16_mant[b], xexp_q16_exp[b]), 0);
        }
    }
    return r;
}

dpm_xf_t dpm_xexp_q16_up(uint32_t q)
{
    return dpm_xexp_up(q >> 16, (uint64_t)(q & 0xffffu) << 48);
}

int dpm_xf_ge(dpm_xf_t a, dpm_xf_t b)
{
    if (b.m == 0) {
        return 1;
    }
    if (a.m == 0) {
        return 0;
    }
    return a.e != b.e ? a.e > b.e : a.m >= b.m;
}

/* The count of exponents q in [0, top] that fail the predicate exp_down(q) * den_down
 * (rounded down) >= num_up; top + 1 when all fail. The predicate is monotone in q (exp_down's
 * error is far below the step exp(2^-16)), so the failures are a prefix and their count is
 * the smallest q that holds: built from its binary digits, 2^26 first, each digit kept when
 * the exponent just below it still fails. The same answer as a bisection, with one call site
 * of the predicate; the operands by pointer keep the frames small (make size: the device's
 * campaign acceptance runs through here). */
#define LN_TOP (DPM_XEXP_MAX_INT << DPM_EPS_FRAC_BITS) /* < 2^27 */
static uint32_t ln_search(const dpm_xf_t *num_up, const dpm_xf_t *den_down)
{
    uint32_t q = 0;
    for (uint32_t step = UINT32_C(1) << 26; step != 0; step >>= 1) {
        uint32_t probe = q + step - 1u;
        if (probe <= LN_TOP &&
            !dpm_xf_ge(xf_mul(dpm_xexp_q16_down(probe), *den_down, 0), *num_up)) {
            q += step;
        }
    }
    return q;
}

dpm_status_t dpm_xf_ln_up_q16_xf(dpm_xf_t num_up, dpm_xf_t den_down, dpm_eps_t *out)
{
    if (out == NULL || den_down.m == 0) {
        return DPM_ERR_PARAM;
    }
    uint32_t q = ln_search(&num_up, &den_down);
    if (q > LN_TOP) {
        return DPM_ERR_RANGE; /* every exponent up to exp(DPM_XEXP_MAX_INT) fails */
    }
    *out = q;
    return DPM_OK;
}

/* num / den as the exact soft floats they are: floor_64(exp_down(q) * den) >= num holds
 * exactly when exp_down(q) * den >= num, because num is representable and rounding down
 * keeps every representable value below the product. So this is the smallest q with
 * exp_down(q) >= num / den, without a separate exact-ratio comparison (the GRR and RR
 * thresholds of a tuple-only build then link one ln search, not two: make size). */
dpm_status_t dpm_xf_ln_up_q16(uint64_t num, uint64_t den, dpm_eps_t *out)
{
    if (out == NULL || den == 0) {
        return DPM_ERR_PARAM;
    }
    dpm_xf_t n = dpm_xf_from_u64(num), d = dpm_xf_from_u64(den);
    uint32_t q = ln_search(&n, &d);
    if (q > (DPM_XLN_MAX << DPM_EPS_FRAC_BITS)) {
        return DPM_ERR_RANGE; /* beyond this function's stated range (not for 64-bit inputs) */
    }
    *out = q;
    return DPM_OK;
}
