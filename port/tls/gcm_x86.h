/* SPDX-License-Identifier: Apache-2.0 */
/* AES-128-GCM (NIST SP 800-38D) with x86-64's AES-NI and PCLMULQDQ, for the HPKE AEAD of
 * port/tls/hpke.c on hosts whose CPU has them (checked at run time; Mbed TLS's GCM otherwise,
 * and on every other target, or with DPM_GCM_PORTABLE). An aggregator decrypts every input
 * share: the leader's is the whole measurement share (7.5 KB for a 2x24 SumVec of 8-bit
 * counts), and Mbed TLS's GCM, one block at a time through AES and GHASH, was about a tenth of
 * the leader's CPU in make bench. Here the counter blocks are encrypted eight at a time (the
 * AES rounds of independent blocks overlap) and GHASH multiplies four blocks by H^4 .. H^1 and
 * reduces once (the reduction is linear: a sum of products reduces as one).
 *
 * GHASH in the byte-reflected convention of Intel's carry-less multiplication white paper
 * (Gueron and Kounavis): blocks byte-swapped into registers, products shifted left by one bit,
 * then reduced modulo x^128 + x^7 + x^2 + x + 1. Constant time: AES-NI and PCLMULQDQ take the
 * same time whatever their operands, and nothing branches on or indexes by key or data.
 * tests/vectors/test_gcm_x86.c checks it against the GCM specification's test cases and
 * against Mbed TLS on every length up to 600 bytes and on large messages, with the associated
 * data in pieces; tests/ct/ct_dap.c checks its constant time.
 *
 * Private to port/tls: a header of static functions, like x25519_64.h. */
#ifndef DPM_PORT_TLS_GCM_X86_H
#define DPM_PORT_TLS_GCM_X86_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DPM_GCM_X86_TARGET __attribute__((target("aes,pclmul,sse4.1")))

/* 1 when this CPU has AES-NI and PCLMULQDQ. */
static int dpm_gcm_x86_available(void)
{
    return __builtin_cpu_supports("aes") && __builtin_cpu_supports("pclmul") &&
           __builtin_cpu_supports("sse4.1");
}

typedef struct {
    __m128i rk[11]; /* AES-128 round keys */
    __m128i h[4];   /* H, H^2, H^3, H^4, byte-reflected */
    __m128i x;      /* the running GHASH value, byte-reflected */
    uint8_t part[16];
    size_t npart; /* bytes in part: an associated data block not yet complete */
} dpm_gcm_x86_t;

DPM_GCM_X86_TARGET static inline __m128i dpm_gcm_bswap(__m128i v)
{
    return _mm_shuffle_epi8(v, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

DPM_GCM_X86_TARGET static inline __m128i dpm_aes_key_step(__m128i key, __m128i assist)
{
    assist = _mm_shuffle_epi32(assist, 0xff);
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    key = _mm_xor_si128(key, _mm_slli_si128(key, 4));
    return _mm_xor_si128(key, assist);
}

DPM_GCM_X86_TARGET static void dpm_aes128_expand(__m128i rk[11], const uint8_t key[16])
{
    rk[0] = _mm_loadu_si128((const __m128i *)(const void *)key);
    /* the round constants must be immediates */
    rk[1] = dpm_aes_key_step(rk[0], _mm_aeskeygenassist_si128(rk[0], 0x01));
    rk[2] = dpm_aes_key_step(rk[1], _mm_aeskeygenassist_si128(rk[1], 0x02));
    rk[3] = dpm_aes_key_step(rk[2], _mm_aeskeygenassist_si128(rk[2], 0x04));
    rk[4] = dpm_aes_key_step(rk[3], _mm_aeskeygenassist_si128(rk[3], 0x08));
    rk[5] = dpm_aes_key_step(rk[4], _mm_aeskeygenassist_si128(rk[4], 0x10));
    rk[6] = dpm_aes_key_step(rk[5], _mm_aeskeygenassist_si128(rk[5], 0x20));
    rk[7] = dpm_aes_key_step(rk[6], _mm_aeskeygenassist_si128(rk[6], 0x40));
    rk[8] = dpm_aes_key_step(rk[7], _mm_aeskeygenassist_si128(rk[7], 0x80));
    rk[9] = dpm_aes_key_step(rk[8], _mm_aeskeygenassist_si128(rk[8], 0x1b));
    rk[10] = dpm_aes_key_step(rk[9], _mm_aeskeygenassist_si128(rk[9], 0x36));
}

DPM_GCM_X86_TARGET static inline __m128i dpm_aes128_block(const __m128i rk[11], __m128i b)
{
    b = _mm_xor_si128(b, rk[0]);
    for (int r = 1; r < 10; r++) {
        b = _mm_aesenc_si128(b, rk[r]);
    }
    return _mm_aesenclast_si128(b, rk[10]);
}

/* a * b as 256 bits (lo, hi), not yet shifted or reduced (Karatsuba's middle term). */
DPM_GCM_X86_TARGET static inline void dpm_gf_mul_wide(__m128i a, __m128i b, __m128i *lo,
                                                      __m128i *hi)
{
    __m128i t0 = _mm_clmulepi64_si128(a, b, 0x00);
    __m128i t1 = _mm_clmulepi64_si128(a, b, 0x10);
    __m128i t2 = _mm_clmulepi64_si128(a, b, 0x01);
    __m128i t3 = _mm_clmulepi64_si128(a, b, 0x11);
    t1 = _mm_xor_si128(t1, t2);
    *lo = _mm_xor_si128(t0, _mm_slli_si128(t1, 8));
    *hi = _mm_xor_si128(t3, _mm_srli_si128(t1, 8));
}

/* (hi:lo) shifted left by one bit (the reflected product's alignment) and reduced modulo
 * x^128 + x^7 + x^2 + x + 1. */
DPM_GCM_X86_TARGET static inline __m128i dpm_gf_reduce(__m128i lo, __m128i hi)
{
    __m128i c_lo = _mm_srli_epi32(lo, 31), c_hi = _mm_srli_epi32(hi, 31);
    lo = _mm_slli_epi32(lo, 1);
    hi = _mm_slli_epi32(hi, 1);
    __m128i top = _mm_srli_si128(c_lo, 12);
    lo = _mm_or_si128(lo, _mm_slli_si128(c_lo, 4));
    hi = _mm_or_si128(_mm_or_si128(hi, _mm_slli_si128(c_hi, 4)), top);
    __m128i a = _mm_xor_si128(_mm_xor_si128(_mm_slli_epi32(lo, 31), _mm_slli_epi32(lo, 30)),
                              _mm_slli_epi32(lo, 25));
    __m128i carry = _mm_srli_si128(a, 4);
    lo = _mm_xor_si128(lo, _mm_slli_si128(a, 12));
    __m128i b = _mm_xor_si128(_mm_xor_si128(_mm_srli_epi32(lo, 1), _mm_srli_epi32(lo, 2)),
                              _mm_srli_epi32(lo, 7));
    b = _mm_xor_si128(b, carry);
    lo = _mm_xor_si128(lo, b);
    return _mm_xor_si128(hi, lo);
}

DPM_GCM_X86_TARGET static inline __m128i dpm_gf_mul(__m128i a, __m128i b)
{
    __m128i lo, hi;
    dpm_gf_mul_wide(a, b, &lo, &hi);
    return dpm_gf_reduce(lo, hi);
}

DPM_GCM_X86_TARGET static inline __m128i dpm_gcm_load(const uint8_t *p)
{
    return dpm_gcm_bswap(_mm_loadu_si128((const __m128i *)(const void *)p));
}

/* GHASH of n whole blocks at p into g->x: four at a time with one reduction, then one by one. */
DPM_GCM_X86_TARGET static void dpm_ghash_blocks(dpm_gcm_x86_t *g, const uint8_t *p, size_t n)
{
    __m128i x = g->x;
    for (; n >= 4; n -= 4, p += 64) {
        __m128i lo, hi, l, h;
        dpm_gf_mul_wide(_mm_xor_si128(x, dpm_gcm_load(p)), g->h[3], &lo, &hi);
        dpm_gf_mul_wide(dpm_gcm_load(p + 16), g->h[2], &l, &h);
        lo = _mm_xor_si128(lo, l);
        hi = _mm_xor_si128(hi, h);
        dpm_gf_mul_wide(dpm_gcm_load(p + 32), g->h[1], &l, &h);
        lo = _mm_xor_si128(lo, l);
        hi = _mm_xor_si128(hi, h);
        dpm_gf_mul_wide(dpm_gcm_load(p + 48), g->h[0], &l, &h);
        x = dpm_gf_reduce(_mm_xor_si128(lo, l), _mm_xor_si128(hi, h));
    }
    for (; n > 0; n--, p += 16) {
        x = dpm_gf_mul(_mm_xor_si128(x, dpm_gcm_load(p)), g->h[0]);
    }
    g->x = x;
}

/* GHASH of len bytes at p, the last block padded with zeros (the ciphertext's rule). */
DPM_GCM_X86_TARGET static void dpm_ghash_padded(dpm_gcm_x86_t *g, const uint8_t *p, size_t len)
{
    dpm_ghash_blocks(g, p, len / 16);
    if (len % 16 != 0) {
        uint8_t last[16] = {0};
        memcpy(last, p + len - len % 16, len % 16);
        dpm_ghash_blocks(g, last, 1);
    }
}

/* The key's schedule, H and its powers, GHASH at zero. */
DPM_GCM_X86_TARGET static void dpm_gcm_x86_init(dpm_gcm_x86_t *g, const uint8_t key[16])
{
    memset(g, 0, sizeof(*g));
    dpm_aes128_expand(g->rk, key);
    g->h[0] = dpm_gcm_bswap(dpm_aes128_block(g->rk, _mm_setzero_si128()));
    for (int i = 1; i < 4; i++) {
        g->h[i] = dpm_gf_mul(g->h[i - 1], g->h[0]);
    }
    g->x = _mm_setzero_si128();
}

/* More associated data (pieces of any length: the whole is what GHASH pads). */
DPM_GCM_X86_TARGET static void dpm_gcm_x86_aad(dpm_gcm_x86_t *g, const uint8_t *p, size_t len)
{
    if (g->npart > 0) {
        size_t k = 16 - g->npart < len ? 16 - g->npart : len;
        memcpy(g->part + g->npart, p, k);
        g->npart += k;
        p += k;
        len -= k;
        if (g->npart < 16) {
            return;
        }
        dpm_ghash_blocks(g, g->part, 1);
        g->npart = 0;
    }
    dpm_ghash_blocks(g, p, len / 16);
    if (len % 16 != 0) {
        memcpy(g->part, p + len - len % 16, len % 16);
    }
    g->npart = len % 16;
}

/* buf[0, len) encrypted (encrypt = 1) or decrypted in place with the 12-byte nonce, after all
 * the associated data (aad_len bytes in all); the tag into tag. g is wiped. */
DPM_GCM_X86_TARGET static void dpm_gcm_x86_finish(dpm_gcm_x86_t *g, const uint8_t nonce[12],
                                                  int encrypt, size_t aad_len, uint8_t *buf,
                                                  size_t len, uint8_t tag[16])
{
    if (g->npart > 0) { /* the associated data's last block, padded */
        memset(g->part + g->npart, 0, 16 - g->npart);
        dpm_ghash_blocks(g, g->part, 1);
        g->npart = 0;
    }
    /* J0 = nonce || 1; the data's counter blocks from inc32(J0) */
    uint8_t j0b[16];
    memcpy(j0b, nonce, 12);
    j0b[12] = 0;
    j0b[13] = 0;
    j0b[14] = 0;
    j0b[15] = 1;
    const __m128i j0 = _mm_loadu_si128((const __m128i *)(const void *)j0b);
    const __m128i ctr_bs = dpm_gcm_bswap(j0); /* the counter in the low 32 bits, as a number */
    uint32_t ctr = 1;
    if (!encrypt) {
        dpm_ghash_padded(g, buf, len);
    }
    size_t done = 0;
    for (; len - done >= 128; done += 128) { /* eight counter blocks at once */
        __m128i b[8];
        for (int i = 0; i < 8; i++) {
            b[i] = dpm_gcm_bswap(_mm_insert_epi32(ctr_bs, (int)(ctr + 1u + (uint32_t)i), 0));
            b[i] = _mm_xor_si128(b[i], g->rk[0]);
        }
        for (int r = 1; r < 10; r++) {
            for (int i = 0; i < 8; i++) {
                b[i] = _mm_aesenc_si128(b[i], g->rk[r]);
            }
        }
        for (int i = 0; i < 8; i++) {
            __m128i *q = (__m128i *)(void *)(buf + done + 16u * (size_t)i);
            b[i] = _mm_aesenclast_si128(b[i], g->rk[10]);
            _mm_storeu_si128(q, _mm_xor_si128(_mm_loadu_si128(q), b[i]));
        }
        ctr += 8u;
    }
    for (; done < len; done += 16) { /* the rest, block by block, the last one partial */
        ctr++;
        uint8_t ks[16];
        __m128i cb = dpm_gcm_bswap(_mm_insert_epi32(ctr_bs, (int)ctr, 0));
        _mm_storeu_si128((__m128i *)(void *)ks, dpm_aes128_block(g->rk, cb));
        size_t k = len - done < 16 ? len - done : 16;
        for (size_t i = 0; i < k; i++) {
            buf[done + i] ^= ks[i];
        }
    }
    if (encrypt) {
        dpm_ghash_padded(g, buf, len);
    }
    /* the lengths block: bit lengths of the associated data and of the ciphertext, big-endian */
    uint8_t lens[16];
    const uint64_t abits = (uint64_t)aad_len * 8u, cbits = (uint64_t)len * 8u;
    for (int i = 0; i < 8; i++) {
        lens[i] = (uint8_t)(abits >> (56 - 8 * i));
        lens[8 + i] = (uint8_t)(cbits >> (56 - 8 * i));
    }
    dpm_ghash_blocks(g, lens, 1);
    __m128i t = _mm_xor_si128(dpm_gcm_bswap(g->x), dpm_aes128_block(g->rk, j0));
    _mm_storeu_si128((__m128i *)(void *)tag, t);
    volatile uint8_t *v = (volatile uint8_t *)g; /* the key schedule and H: secret */
    for (size_t i = 0; i < sizeof(*g); i++) {
        v[i] = 0;
    }
}

#endif /* DPM_PORT_TLS_GCM_X86_H */
