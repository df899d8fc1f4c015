/* SPDX-License-Identifier: Apache-2.0 */
/* X25519 (RFC 7748 §5) over 64-bit limbs, for compilers with unsigned __int128 (x86_64, aarch64,
 * s390x): port/tls/hpke.c uses it there unless DPM_X25519_PORTABLE is defined, and Mbed TLS's
 * Everest X25519 elsewhere (32-bit targets, Cortex-M). Written from RFC 7748's text: the
 * Montgomery ladder of RFC 7748 §5 with its conditional swaps, a24 = 121665, the inverse as z^(p -
 * 2). An aggregator opens every input share with one X25519: this takes less than half the CPU of
 * Everest's generic code on the bench machine (host-sim/aggregator/README.md: the bench).
 *
 * Constant time: no branch and no memory index depends on the scalar or the point (the swaps are
 * masks, the loop bounds are fixed); tests/ct/ct_dap.c checks it under valgrind. The caller
 * decides on the result being all zero (RFC 7748 §6.1), a public abort.
 *
 * Field elements of GF(2^255 - 19) are five limbs of 51 bits, f = sum f[i] 2^(51 i). Bounds, in
 * the comments: "reduced" limbs are < 2^51 + 2^18 (what fe_mul, fe_sq and fe_mul121665
 * return); fe_add of two reduced elements and fe_sub give limbs < 2^53; fe_mul and fe_sq take
 * limbs < 2^54, so every 128-bit sum stays below 2^115 and nothing overflows.
 *
 * Private to port/tls: a header of static functions, so that hpke.c's build lists stay as they
 * are and tests/vectors/test_x25519.c can test it beside Everest. */
#ifndef DPM_PORT_TLS_X25519_64_H
#define DPM_PORT_TLS_X25519_64_H

#include <stddef.h>
#include <stdint.h>

__extension__ typedef unsigned __int128 dpm_x25519_u128_t;
typedef uint64_t dpm_fe51_t[5];

#define DPM_FE51_MASK ((UINT64_C(1) << 51) - 1u)
/* The multiplication and squaring inlined into the ladder, and the five-limb loops written out:
 * about a fifth less time with GCC -O2, which kept calls and short loops. */
#if defined(__GNUC__)
#define DPM_FE51_HOT inline __attribute__((always_inline))
#else
#define DPM_FE51_HOT inline
#endif

static uint64_t dpm_x25519_load64(const uint8_t *p)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++) {
        v |= (uint64_t)p[i] << (8u * i); /* little-endian whatever the host's byte order */
    }
    return v;
}

/* u-coordinate bytes -> field element; bit 255 is ignored (RFC 7748 §5: masked), a value of p
 * or more is kept as it is (non-canonical inputs are accepted, reduced by the arithmetic). */
static void dpm_fe51_frombytes(dpm_fe51_t h, const uint8_t s[32])
{
    h[0] = dpm_x25519_load64(s) & DPM_FE51_MASK;
    h[1] = (dpm_x25519_load64(s + 6) >> 3) & DPM_FE51_MASK;
    h[2] = (dpm_x25519_load64(s + 12) >> 6) & DPM_FE51_MASK;
    h[3] = (dpm_x25519_load64(s + 19) >> 1) & DPM_FE51_MASK;
    h[4] = (dpm_x25519_load64(s + 24) >> 12) & DPM_FE51_MASK;
}

/* One pass of carries: limbs < 2^51 but limb 0 (< 2^51 + 19 * (h[4] >> 51)). */
static void dpm_fe51_carry(dpm_fe51_t h)
{
    for (unsigned i = 0; i < 4; i++) {
        h[i + 1] += h[i] >> 51;
        h[i] &= DPM_FE51_MASK;
    }
    h[0] += 19u * (h[4] >> 51);
    h[4] &= DPM_FE51_MASK;
}

/* The canonical encoding (the value mod p, little-endian), of a reduced element. */
static void dpm_fe51_tobytes(uint8_t s[32], const dpm_fe51_t f)
{
    uint64_t h[5] = {f[0], f[1], f[2], f[3], f[4]};
    dpm_fe51_carry(h);
    dpm_fe51_carry(h); /* now h < 2^255 + 19 < 2p */
    /* q = 1 exactly when h >= p, i.e. h + 19 >= 2^255: the carry out of h + 19 */
    uint64_t q = (h[0] + 19u) >> 51;
    for (unsigned i = 1; i < 5; i++) {
        q = (h[i] + q) >> 51;
    }
    h[0] += 19u * q; /* h - p = h + 19 - 2^255: add 19, drop bit 255 */
    for (unsigned i = 0; i < 4; i++) {
        h[i + 1] += h[i] >> 51;
        h[i] &= DPM_FE51_MASK;
    }
    h[4] &= DPM_FE51_MASK;
    const uint64_t w[4] = {h[0] | h[1] << 51, h[1] >> 13 | h[2] << 38, h[2] >> 26 | h[3] << 25,
                           h[3] >> 39 | h[4] << 12};
    for (unsigned i = 0; i < 32; i++) {
        s[i] = (uint8_t)(w[i / 8] >> (8u * (i % 8)));
    }
}

static inline void dpm_fe51_add(dpm_fe51_t h, const dpm_fe51_t f, const dpm_fe51_t g)
{
    h[0] = f[0] + g[0];
    h[1] = f[1] + g[1];
    h[2] = f[2] + g[2];
    h[3] = f[3] + g[3];
    h[4] = f[4] + g[4];
}

/* h = f - g + 2p, limb by limb: g's limbs must be below 2p's (2^52 - 38, 2^52 - 2), which
 * reduced limbs are. */
static inline void dpm_fe51_sub(dpm_fe51_t h, const dpm_fe51_t f, const dpm_fe51_t g)
{
    h[0] = f[0] + UINT64_C(0xfffffffffffda) - g[0];
    h[1] = f[1] + UINT64_C(0xffffffffffffe) - g[1];
    h[2] = f[2] + UINT64_C(0xffffffffffffe) - g[2];
    h[3] = f[3] + UINT64_C(0xffffffffffffe) - g[3];
    h[4] = f[4] + UINT64_C(0xffffffffffffe) - g[4];
}

/* The five 128-bit column sums (< 2^115) -> a reduced element. By value and inline: kept in
 * registers (through an array in memory it took a third of the time). */
static inline void dpm_fe51_reduce(dpm_fe51_t h, dpm_x25519_u128_t t0, dpm_x25519_u128_t t1,
                                   dpm_x25519_u128_t t2, dpm_x25519_u128_t t3, dpm_x25519_u128_t t4)
{
    t1 += t0 >> 51;
    t2 += t1 >> 51;
    t3 += t2 >> 51;
    t4 += t3 >> 51;
    /* 2^255 = 19 mod p; t4 >> 51 < 2^64, times 19 in 128 bits */
    const dpm_x25519_u128_t c = (t4 >> 51) * 19u + ((uint64_t)t0 & DPM_FE51_MASK);
    h[0] = (uint64_t)c & DPM_FE51_MASK;
    h[1] = ((uint64_t)t1 & DPM_FE51_MASK) + (uint64_t)(c >> 51); /* < 2^51 + 2^18 */
    h[2] = (uint64_t)t2 & DPM_FE51_MASK;
    h[3] = (uint64_t)t3 & DPM_FE51_MASK;
    h[4] = (uint64_t)t4 & DPM_FE51_MASK;
}

static DPM_FE51_HOT void dpm_fe51_mul(dpm_fe51_t h, const dpm_fe51_t f, const dpm_fe51_t g)
{
    const uint64_t f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3], f4 = f[4];
    const uint64_t g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3], g4 = g[4];
    const uint64_t g1_19 = 19u * g1, g2_19 = 19u * g2, g3_19 = 19u * g3, g4_19 = 19u * g4;
    typedef dpm_x25519_u128_t w;
    dpm_fe51_reduce(h, (w)f0 * g0 + (w)f1 * g4_19 + (w)f2 * g3_19 + (w)f3 * g2_19 + (w)f4 * g1_19,
                    (w)f0 * g1 + (w)f1 * g0 + (w)f2 * g4_19 + (w)f3 * g3_19 + (w)f4 * g2_19,
                    (w)f0 * g2 + (w)f1 * g1 + (w)f2 * g0 + (w)f3 * g4_19 + (w)f4 * g3_19,
                    (w)f0 * g3 + (w)f1 * g2 + (w)f2 * g1 + (w)f3 * g0 + (w)f4 * g4_19,
                    (w)f0 * g4 + (w)f1 * g3 + (w)f2 * g2 + (w)f3 * g1 + (w)f4 * g0);
}

static DPM_FE51_HOT void dpm_fe51_sq(dpm_fe51_t h, const dpm_fe51_t f)
{
    const uint64_t f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3], f4 = f[4];
    const uint64_t f0_2 = 2u * f0, f1_2 = 2u * f1, f3_19 = 19u * f3, f4_19 = 19u * f4;
    typedef dpm_x25519_u128_t w;
    dpm_fe51_reduce(h, (w)f0 * f0 + (w)f1_2 * f4_19 + (w)(2u * f2) * f3_19,
                    (w)f0_2 * f1 + (w)(2u * f2) * f4_19 + (w)f3 * f3_19,
                    (w)f0_2 * f2 + (w)f1 * f1 + (w)(2u * f3) * f4_19,
                    (w)f0_2 * f3 + (w)f1_2 * f2 + (w)f4 * f4_19,
                    (w)f0_2 * f4 + (w)f1_2 * f3 + (w)f2 * f2);
}

/* h = f^(2^n), n >= 1 */
static void dpm_fe51_sq_times(dpm_fe51_t h, const dpm_fe51_t f, unsigned n)
{
    dpm_fe51_sq(h, f);
    for (unsigned i = 1; i < n; i++) {
        dpm_fe51_sq(h, h);
    }
}

/* h = a24 f, a24 = (486662 - 2) / 4 = 121665 (RFC 7748 §5) */
static inline void dpm_fe51_mul121665(dpm_fe51_t h, const dpm_fe51_t f)
{
    typedef dpm_x25519_u128_t w;
    dpm_fe51_reduce(h, (w)f[0] * 121665u, (w)f[1] * 121665u, (w)f[2] * 121665u, (w)f[3] * 121665u,
                    (w)f[4] * 121665u);
}

/* h = z^(p - 2) = z^(2^255 - 21) = 1 / z (0 for z = 0), by a fixed chain of 254 squarings and
 * 11 multiplications. */
static void dpm_fe51_invert(dpm_fe51_t h, const dpm_fe51_t z)
{
    dpm_fe51_t z2, z9, z11, a, b, c;
    dpm_fe51_sq(z2, z);           /* z^2 */
    dpm_fe51_sq_times(a, z2, 2);  /* z^8 */
    dpm_fe51_mul(z9, a, z);       /* z^9 */
    dpm_fe51_mul(z11, z9, z2);    /* z^11 */
    dpm_fe51_sq(a, z11);          /* z^22 */
    dpm_fe51_mul(a, a, z9);       /* z^(2^5 - 1) */
    dpm_fe51_sq_times(b, a, 5);   /* */
    dpm_fe51_mul(a, b, a);        /* z^(2^10 - 1) */
    dpm_fe51_sq_times(b, a, 10);  /* */
    dpm_fe51_mul(b, b, a);        /* z^(2^20 - 1) */
    dpm_fe51_sq_times(c, b, 20);  /* */
    dpm_fe51_mul(b, c, b);        /* z^(2^40 - 1) */
    dpm_fe51_sq_times(b, b, 10);  /* */
    dpm_fe51_mul(a, b, a);        /* z^(2^50 - 1) */
    dpm_fe51_sq_times(b, a, 50);  /* */
    dpm_fe51_mul(b, b, a);        /* z^(2^100 - 1) */
    dpm_fe51_sq_times(c, b, 100); /* */
    dpm_fe51_mul(b, c, b);        /* z^(2^200 - 1) */
    dpm_fe51_sq_times(b, b, 50);  /* */
    dpm_fe51_mul(a, b, a);        /* z^(2^250 - 1) */
    dpm_fe51_sq_times(a, a, 5);   /* z^(2^255 - 32) */
    dpm_fe51_mul(h, a, z11);      /* z^(2^255 - 21) */
}

/* Swap f and g when swap is 1, leave them when 0, by a mask: no branch on swap. */
static inline void dpm_fe51_cswap(dpm_fe51_t f, dpm_fe51_t g, uint64_t swap)
{
    const uint64_t mask = 0u - swap;
    const uint64_t x0 = mask & (f[0] ^ g[0]), x1 = mask & (f[1] ^ g[1]), x2 = mask & (f[2] ^ g[2]),
                   x3 = mask & (f[3] ^ g[3]), x4 = mask & (f[4] ^ g[4]);
    f[0] ^= x0;
    f[1] ^= x1;
    f[2] ^= x2;
    f[3] ^= x3;
    f[4] ^= x4;
    g[0] ^= x0;
    g[1] ^= x1;
    g[2] ^= x2;
    g[3] ^= x3;
    g[4] ^= x4;
}

/* out = X25519(scalar, point): RFC 7748 §5's decodeScalar25519 (clamping), decodeUCoordinate,
 * the ladder over bits 254 .. 0, encodeUCoordinate. The caller wipes what it must. */
static void dpm_x25519_64(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32])
{
    struct {
        uint8_t k[32];
        dpm_fe51_t x1, x2, z2, x3, z3, a, aa, b, bb, e, c, d, da, cb;
    } s; /* one block, wiped at the end: the scalar and the ladder's state are secret */
    for (unsigned i = 0; i < 32; i++) {
        s.k[i] = scalar[i];
    }
    s.k[0] &= 248u;
    s.k[31] &= 127u;
    s.k[31] |= 64u;
    dpm_fe51_frombytes(s.x1, point);
    for (unsigned i = 0; i < 5; i++) {
        s.x2[i] = (uint64_t)(i == 0);
        s.z2[i] = 0;
        s.x3[i] = s.x1[i];
        s.z3[i] = (uint64_t)(i == 0);
    }
    uint64_t swap = 0;
    for (int t = 254; t >= 0; t--) {
        const uint64_t kt = (uint64_t)(s.k[t >> 3] >> (t & 7)) & 1u;
        swap ^= kt;
        dpm_fe51_cswap(s.x2, s.x3, swap);
        dpm_fe51_cswap(s.z2, s.z3, swap);
        swap = kt;
        dpm_fe51_add(s.a, s.x2, s.z2);  /* A = x_2 + z_2 */
        dpm_fe51_sq(s.aa, s.a);         /* AA = A^2 */
        dpm_fe51_sub(s.b, s.x2, s.z2);  /* B = x_2 - z_2 */
        dpm_fe51_sq(s.bb, s.b);         /* BB = B^2 */
        dpm_fe51_sub(s.e, s.aa, s.bb);  /* E = AA - BB */
        dpm_fe51_add(s.c, s.x3, s.z3);  /* C = x_3 + z_3 */
        dpm_fe51_sub(s.d, s.x3, s.z3);  /* D = x_3 - z_3 */
        dpm_fe51_mul(s.da, s.d, s.a);   /* DA = D * A */
        dpm_fe51_mul(s.cb, s.c, s.b);   /* CB = C * B */
        dpm_fe51_add(s.x3, s.da, s.cb); /* x_3 = (DA + CB)^2 */
        dpm_fe51_sq(s.x3, s.x3);
        dpm_fe51_sub(s.z3, s.da, s.cb); /* z_3 = x_1 * (DA - CB)^2 */
        dpm_fe51_sq(s.z3, s.z3);
        dpm_fe51_mul(s.z3, s.z3, s.x1);
        dpm_fe51_mul(s.x2, s.aa, s.bb); /* x_2 = AA * BB */
        dpm_fe51_mul121665(s.z2, s.e);  /* z_2 = E * (AA + a24 * E) */
        dpm_fe51_add(s.z2, s.z2, s.aa);
        dpm_fe51_mul(s.z2, s.z2, s.e);
    }
    dpm_fe51_cswap(s.x2, s.x3, swap);
    dpm_fe51_cswap(s.z2, s.z3, swap);
    dpm_fe51_invert(s.z2, s.z2);
    dpm_fe51_mul(s.x2, s.x2, s.z2);
    dpm_fe51_tobytes(out, s.x2);
    volatile uint8_t *v = (volatile uint8_t *)&s; /* volatile stores: not optimised away */
    for (size_t i = 0; i < sizeof(s); i++) {
        v[i] = 0;
    }
}

#endif /* DPM_PORT_TLS_X25519_64_H */
