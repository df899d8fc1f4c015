/* SPDX-License-Identifier: Apache-2.0 */
/* AES-128 encryption (FIPS 197) in constant time, for XofFixedKeyAes128 only (no Prio3 variant
 * uses it: it is linked where called). No lookup table: the S-box is computed as the affine map
 * of the inverse in GF(2^8), the inverse as x^254 by square-and-multiply with a fixed chain,
 * and every GF(2^8) product by a fixed 8-step shift-and-mask loop. Slow (tens of thousands of
 * instructions per block) and free of secret-dependent branches and indices, which a table
 * S-box is not (cache timing). Why not Mbed TLS's AES: the SDK links without Mbed TLS (the TLS
 * port is optional) and Mbed TLS's software AES uses lookup tables. */
#include "dpm_internal.h"

#include "vdaf/vdaf_internal.h"

#if DPM_VDAF

static uint8_t gf_xtime(uint8_t a)
{
    return (uint8_t)(((unsigned)a << 1) ^ (0x1Bu & (0u - ((unsigned)a >> 7))));
}

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
    uint8_t r = 0;
    for (unsigned i = 0; i < 8u; i++) {
        r ^= (uint8_t)(a & (0u - ((unsigned)(b >> i) & 1u)));
        a = gf_xtime(a);
    }
    return r;
}

static uint8_t rotl8(uint8_t x, unsigned n)
{
    return (uint8_t)((x << n) | (x >> (8u - n)));
}

/* S(x) = A(x^254) + 0x63: x^254 is x's inverse (0 for 0). */
static uint8_t sbox(uint8_t x)
{
    uint8_t x2 = gf_mul(x, x);
    uint8_t x3 = gf_mul(x2, x);
    uint8_t x6 = gf_mul(x3, x3);
    uint8_t x12 = gf_mul(x6, x6);
    uint8_t x15 = gf_mul(x12, x3);
    uint8_t x30 = gf_mul(x15, x15);
    uint8_t x60 = gf_mul(x30, x30);
    uint8_t x120 = gf_mul(x60, x60);
    uint8_t x126 = gf_mul(x120, x6);
    uint8_t x127 = gf_mul(x126, x);
    uint8_t inv = gf_mul(x127, x127); /* x^254 */
    return (uint8_t)(inv ^ rotl8(inv, 1) ^ rotl8(inv, 2) ^ rotl8(inv, 3) ^ rotl8(inv, 4) ^ 0x63u);
}

void dpm_aes128_expand(const uint8_t key[16], uint8_t rk[176])
{
    uint8_t rcon = 1;
    memcpy(rk, key, 16);
    for (unsigned i = 16; i < 176u; i += 4u) {
        uint8_t t[4] = {rk[i - 4u], rk[i - 3u], rk[i - 2u], rk[i - 1u]};
        if (i % 16u == 0) { /* public: the word's position */
            uint8_t t0 = t[0];
            t[0] = (uint8_t)(sbox(t[1]) ^ rcon);
            t[1] = sbox(t[2]);
            t[2] = sbox(t[3]);
            t[3] = sbox(t0);
            rcon = gf_xtime(rcon);
        }
        for (unsigned j = 0; j < 4u; j++) {
            rk[i + j] = (uint8_t)(rk[i + j - 16u] ^ t[j]);
        }
    }
}

void dpm_aes128_encrypt(const uint8_t rk[176], const uint8_t in[16], uint8_t out[16])
{
    uint8_t s[16], t[16];
    for (unsigned i = 0; i < 16u; i++) {
        s[i] = (uint8_t)(in[i] ^ rk[i]);
    }
    for (unsigned round = 1; round <= 10u; round++) {
        /* SubBytes and ShiftRows: byte (row r, column c) = s[r + 4c] moves to column c - r */
        for (unsigned c = 0; c < 4u; c++) {
            for (unsigned r = 0; r < 4u; r++) {
                t[r + 4u * c] = sbox(s[r + 4u * ((c + r) % 4u)]);
            }
        }
        if (round < 10u) { /* MixColumns */
            for (unsigned c = 0; c < 4u; c++) {
                uint8_t *col = t + 4u * (size_t)c;
                uint8_t a0 = col[0], a1 = col[1], a2 = col[2], a3 = col[3];
                uint8_t all = (uint8_t)(a0 ^ a1 ^ a2 ^ a3);
                col[0] = (uint8_t)(a0 ^ all ^ gf_xtime((uint8_t)(a0 ^ a1)));
                col[1] = (uint8_t)(a1 ^ all ^ gf_xtime((uint8_t)(a1 ^ a2)));
                col[2] = (uint8_t)(a2 ^ all ^ gf_xtime((uint8_t)(a2 ^ a3)));
                col[3] = (uint8_t)(a3 ^ all ^ gf_xtime((uint8_t)(a3 ^ a0)));
            }
        }
        for (unsigned i = 0; i < 16u; i++) {
            s[i] = (uint8_t)(t[i] ^ rk[16u * round + i]);
        }
    }
    memcpy(out, s, 16);
}

#endif /* DPM_VDAF */
