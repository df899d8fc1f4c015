/* SPDX-License-Identifier: Apache-2.0 */
/* Keccak-p[1600, 12] (FIPS 202 section 3.3 with the last 12 of Keccak-f's 24 rounds, as
 * TurboSHAKE, RFC 9861, uses it) and TurboSHAKE128 as an absorb-then-squeeze stream.
 *
 * Written from the FIPS 202 step definitions: theta (column parities), rho (lane rotations by
 * the fixed offsets) and pi (lane permutation) fused into one pass with constant rotations,
 * chi (the only non-linear step, 25 lanes from 5-lane rows) and iota (the round constant).
 * Everything is straight-line 64-bit logic on lanes with constant rotations and constant
 * indices: no branch and no memory index depends on the state, so the XOF state (seeds,
 * measurement shares) never reaches timing. */
#include "dpm_internal.h"

#include "vdaf/vdaf_internal.h"

#if DPM_VDAF

/* Keccak-f[1600]'s round constants for rounds 12..23 (the rounds Keccak-p[1600, 12] runs). */
static const uint64_t ROUND_CONSTANTS[12] = {
    UINT64_C(0x000000008000808B), UINT64_C(0x800000000000008B), UINT64_C(0x8000000000008089),
    UINT64_C(0x8000000000008003), UINT64_C(0x8000000000008002), UINT64_C(0x8000000000000080),
    UINT64_C(0x000000000000800A), UINT64_C(0x800000008000000A), UINT64_C(0x8000000080008081),
    UINT64_C(0x8000000000008080), UINT64_C(0x0000000080000001), UINT64_C(0x8000000080008008)};

static inline uint64_t rotl64(uint64_t x, unsigned n)
{
    return (x << n) | (x >> (64u - n)); /* n in [1, 63]: every call site passes a constant */
}

/* Output row y of pi and chi from the input a after theta (the column parities' D): lane
 * (x', y) of the result is the input's lane s_x' (column x_x' = 3 y + x' mod 5, row x')
 * rotated by its rho offset n_x'; chi then combines the row. Straight from the input into the
 * output row by row: no intermediate state array to store and load back. */
#define RHO(s, x, n) rotl64(a[s] ^ d[x], n)
#define ROW(y, s0, x0, n0, s1, x1, n1, s2, x2, n2, s3, x3, n3, s4, x4, n4)                         \
    do {                                                                                           \
        const uint64_t b0 = (n0) == 0 ? a[s0] ^ d[x0] : RHO(s0, x0, n0), b1 = RHO(s1, x1, n1),     \
                       b2 = RHO(s2, x2, n2), b3 = RHO(s3, x3, n3), b4 = RHO(s4, x4, n4);           \
        uint64_t *const row = out + (size_t)5 * (y);                                               \
        row[0] = b0 ^ (~b1 & b2);                                                                  \
        row[1] = b1 ^ (~b2 & b3);                                                                  \
        row[2] = b2 ^ (~b3 & b4);                                                                  \
        row[3] = b3 ^ (~b4 & b0);                                                                  \
        row[4] = b4 ^ (~b0 & b1);                                                                  \
    } while (0)

/* One round from a into out (lane (x, y) at [x + 5 y]). */
static DPM_NOINLINE void round64(const uint64_t *a, uint64_t *out, uint64_t rc)
{
    const uint64_t c0 = a[0] ^ a[5] ^ a[10] ^ a[15] ^ a[20];
    const uint64_t c1 = a[1] ^ a[6] ^ a[11] ^ a[16] ^ a[21];
    const uint64_t c2 = a[2] ^ a[7] ^ a[12] ^ a[17] ^ a[22];
    const uint64_t c3 = a[3] ^ a[8] ^ a[13] ^ a[18] ^ a[23];
    const uint64_t c4 = a[4] ^ a[9] ^ a[14] ^ a[19] ^ a[24];
    const uint64_t d[5] = {c4 ^ rotl64(c1, 1u), c0 ^ rotl64(c2, 1u), c1 ^ rotl64(c3, 1u),
                           c2 ^ rotl64(c4, 1u), c3 ^ rotl64(c0, 1u)};
    /* (lane, column, offset) of the five sources of each output row: FIPS 202's rho offsets,
     * pi's (x, y) <- (x + 3 y mod 5, x) */
    ROW(0, 0, 0, 0, 6, 1, 44, 12, 2, 43, 18, 3, 21, 24, 4, 14);
    ROW(1, 3, 3, 28, 9, 4, 20, 10, 0, 3, 16, 1, 45, 22, 2, 61);
    ROW(2, 1, 1, 1, 7, 2, 6, 13, 3, 25, 19, 4, 8, 20, 0, 18);
    ROW(3, 4, 4, 27, 5, 0, 36, 11, 1, 10, 17, 2, 15, 23, 3, 56);
    ROW(4, 2, 2, 62, 8, 3, 55, 14, 4, 39, 15, 0, 41, 21, 1, 2);
    out[0] ^= rc; /* iota */
}

void dpm_keccak_p1600_12(uint64_t a[25])
{
    uint64_t t[25];
    for (unsigned r = 0; r < 12u; r += 2u) { /* a -> t -> a */
        round64(a, t, ROUND_CONSTANTS[r]);
        round64(t, a, ROUND_CONSTANTS[r + 1u]);
    }
}

/* ---- TurboSHAKE128: rate 168 bytes (21 lanes), bytes mapped little-endian into lanes -------- */
#define RATE 168u

void dpm_tshake_init(dpm_xof_t *x)
{
    memset(x, 0, sizeof(*x));
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Little-endian: the lanes' bytes are the rate's bytes in memory order, so input is XORed in
 * (output copied out) 32 bits at a time through memcpy (unaligned loads where allowed). */
static uint32_t load32(const uint8_t *p)
{
    uint32_t w;
    memcpy(&w, p, 4);
    return w;
}

void dpm_tshake_absorb(dpm_xof_t *x, const uint8_t *in, size_t len)
{
    uint8_t *st = (uint8_t *)x->a;
    uint32_t pos = x->pos;
    while (len > 0) {
        size_t n = RATE - pos < len ? RATE - pos : len;
        size_t i = 0;
        for (; i < n && ((pos + i) & 3u) != 0; i++) {
            st[pos + i] ^= in[i];
        }
        for (; i + 4u <= n; i += 4u) {
            uint32_t w = load32(st + pos + i) ^ load32(in + i);
            memcpy(st + pos + i, &w, 4);
        }
        for (; i < n; i++) {
            st[pos + i] ^= in[i];
        }
        pos += (uint32_t)n;
        in += n;
        len -= n;
        if (pos == RATE) {
            dpm_keccak_p1600_12(x->a);
            pos = 0;
        }
    }
    x->pos = pos;
}
#else
void dpm_tshake_absorb(dpm_xof_t *x, const uint8_t *in, size_t len)
{
    uint32_t pos = x->pos;
    while (len > 0) {
        if ((pos & 7u) == 0 && len >= 8u && pos + 8u <= RATE) {
            uint64_t w = 0;
            for (unsigned i = 0; i < 8u; i++) {
                w |= (uint64_t)in[i] << (8u * i);
            }
            x->a[pos / 8u] ^= w;
            pos += 8u;
            in += 8;
            len -= 8u;
        } else {
            x->a[pos / 8u] ^= (uint64_t)*in << (8u * (pos & 7u));
            pos++;
            in++;
            len--;
        }
        if (pos == RATE) {
            dpm_keccak_p1600_12(x->a);
            pos = 0;
        }
    }
    x->pos = pos;
}
#endif

/* The padding: the domain byte D after the message, the last rate byte's top bit set. */
void dpm_tshake_finish(dpm_xof_t *x, uint8_t domain)
{
    x->a[x->pos / 8u] ^= (uint64_t)domain << (8u * (x->pos & 7u));
    x->a[(RATE - 1u) / 8u] ^= UINT64_C(0x80) << (8u * ((RATE - 1u) & 7u));
    dpm_keccak_p1600_12(x->a);
    x->pos = 0;
    x->squeezing = 1;
}

void dpm_tshake_squeeze(dpm_xof_t *x, uint8_t *out, size_t len)
{
    uint32_t pos = x->pos;
    while (len > 0) {
        if (pos == RATE) {
            dpm_keccak_p1600_12(x->a);
            pos = 0;
        }
        size_t n = RATE - pos < len ? RATE - pos : len;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(out, (const uint8_t *)x->a + pos, n);
#else
        for (size_t i = 0; i < n; i++) {
            out[i] = (uint8_t)(x->a[(pos + i) / 8u] >> (8u * ((pos + i) & 7u)));
        }
#endif
        pos += (uint32_t)n;
        out += n;
        len -= n;
    }
    x->pos = pos;
}

#endif /* DPM_VDAF */
