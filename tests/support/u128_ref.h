/* SPDX-License-Identifier: Apache-2.0 */
/* Unsigned 128-bit arithmetic for test reference values, on every target: 32-bit ARM and
 * Cortex-M have no unsigned __int128, and those are exactly the targets where the SDK's own
 * portable 64x64 paths run. Deliberately the simplest correct code (schoolbook multiply,
 * bit-by-bit long division), independent of the SDK's implementation. Results wrap modulo
 * 2^128 like unsigned __int128; test_noise_exact checks them against it where it exists. */
#ifndef U128_REF_H
#define U128_REF_H

#include <stdint.h>

typedef struct {
    uint64_t hi, lo;
} u128_t;

static inline u128_t u128_from(uint64_t x)
{
    u128_t r = {0, x};
    return r;
}

static inline int u128_is_zero(u128_t x)
{
    return x.hi == 0 && x.lo == 0;
}

static inline int u128_lt(u128_t a, u128_t b)
{
    return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

static inline u128_t u128_sub(u128_t a, u128_t b)
{
    u128_t r = {a.hi - b.hi - (a.lo < b.lo), a.lo - b.lo};
    return r;
}

static inline u128_t u128_shl(u128_t x, unsigned s)
{
    if (s == 0) {
        return x;
    }
    if (s >= 128) {
        return u128_from(0);
    }
    if (s >= 64) {
        u128_t r = {x.lo << (s - 64), 0};
        return r;
    }
    u128_t r = {(x.hi << s) | (x.lo >> (64 - s)), x.lo << s};
    return r;
}

/* The full 128-bit product of two 64-bit values, from 32-bit halves. */
static inline u128_t u128_mul_64x64(uint64_t a, uint64_t b)
{
    uint64_t a0 = a & 0xFFFFFFFFu, a1 = a >> 32, b0 = b & 0xFFFFFFFFu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t mid = (p00 >> 32) + (p01 & 0xFFFFFFFFu) + (p10 & 0xFFFFFFFFu);
    u128_t r = {p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (mid << 32) | (p00 & 0xFFFFFFFFu)};
    return r;
}

/* a * b modulo 2^128. */
static inline u128_t u128_mul(u128_t a, u128_t b)
{
    u128_t r = u128_mul_64x64(a.lo, b.lo);
    r.hi += a.lo * b.hi + a.hi * b.lo;
    return r;
}

/* Quotient and remainder (d != 0). */
static inline u128_t u128_divmod(u128_t n, u128_t d, u128_t *rem)
{
    u128_t q = u128_from(0), r = u128_from(0);
    for (int i = 127; i >= 0; i--) {
        r = u128_shl(r, 1);
        r.lo |= (i >= 64 ? n.hi >> (i - 64) : n.lo >> i) & 1u;
        if (!u128_lt(r, d)) {
            r = u128_sub(r, d);
            if (i >= 64) {
                q.hi |= UINT64_C(1) << (i - 64);
            } else {
                q.lo |= UINT64_C(1) << i;
            }
        }
    }
    if (rem != 0) {
        *rem = r;
    }
    return q;
}

#endif /* U128_REF_H */
