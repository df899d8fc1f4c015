/* SPDX-License-Identifier: Apache-2.0 */
/* The draft's XOFs (section "Extendable Output Functions"): XofTurboShake128, which Prio3 uses
 * throughout, and XofFixedKeyAes128 (Poplar1's, kept for the draft's XOF test vectors). */
#include "dpm_internal.h"

#include "vdaf/vdaf_internal.h"

#if DPM_VDAF

#define TSHAKE_XOF_DOMAIN 1u    /* XofTurboShake128: TurboSHAKE128(M, 1, L) */
#define TSHAKE_AESKEY_DOMAIN 2u /* XofFixedKeyAes128's key: TurboSHAKE128(M, 2, 16) */

static void absorb_le16(dpm_xof_t *x, size_t v)
{
    const uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    dpm_tshake_absorb(x, b, 2);
}

void dpm_xof_init(dpm_xof_t *x, const uint8_t *seed, size_t seed_len, const uint8_t *dst_a,
                  size_t dst_a_len, const uint8_t *dst_b, size_t dst_b_len)
{
    dpm_tshake_init(x);
    absorb_le16(x, dst_a_len + dst_b_len);
    dpm_tshake_absorb(x, dst_a, dst_a_len);
    dpm_tshake_absorb(x, dst_b, dst_b_len);
    const uint8_t n = (uint8_t)seed_len;
    dpm_tshake_absorb(x, &n, 1);
    dpm_tshake_absorb(x, seed, seed_len);
}

void dpm_xof_absorb(dpm_xof_t *x, const uint8_t *binder_part, size_t len)
{
    dpm_tshake_absorb(x, binder_part, len);
}

void dpm_xof_next(dpm_xof_t *x, uint8_t *out, size_t len)
{
    if (!x->squeezing) { /* public: the call sequence, never the data */
        dpm_tshake_finish(x, TSHAKE_XOF_DOMAIN);
    }
    dpm_tshake_squeeze(x, out, len);
}

const uint8_t dpm_prio3_zero_seed[DPM_PRIO3_SEED_BYTES] = {0};

void dpm_xof_prio3(dpm_xof_t *x, const uint8_t *seed, uint32_t id, uint16_t usage,
                   const uint8_t *ctx, size_t ctx_len)
{
    /* format_dst(algo_class 0, algo id, usage): VERSION, class, id (big-endian), usage */
    const uint8_t tag[8] = {
        (uint8_t)DPM_VDAF_VERSION, 0,           (uint8_t)(id >> 24),   (uint8_t)(id >> 16),
        (uint8_t)(id >> 8),        (uint8_t)id, (uint8_t)(usage >> 8), (uint8_t)usage};
    dpm_xof_init(x, seed, DPM_PRIO3_SEED_BYTES, tag, sizeof(tag), ctx, ctx_len);
}

/* ---- XofFixedKeyAes128 -------------------------------------------------------------------- */

void dpm_xof_aes_init(dpm_xof_aes_t *x, const uint8_t seed[16], const uint8_t *dst, size_t dst_len,
                      const uint8_t *binder, size_t binder_len)
{
    dpm_xof_t t;
    uint8_t key[16];
    dpm_tshake_init(&t);
    absorb_le16(&t, dst_len);
    dpm_tshake_absorb(&t, dst, dst_len);
    dpm_tshake_absorb(&t, binder, binder_len);
    dpm_tshake_finish(&t, TSHAKE_AESKEY_DOMAIN);
    dpm_tshake_squeeze(&t, key, sizeof(key));
    dpm_aes128_expand(key, x->round_keys);
    memcpy(x->seed, seed, 16);
    x->offset = 0;
}

/* Block i of the stream: hash(seed xor le128(i)) with the circular correlation-robust hash
 * AES(k, sigma(b)) xor sigma(b), sigma(lo || hi) = hi || (hi xor lo) (8-byte halves). */
static void aes_block(const dpm_xof_aes_t *x, uint64_t index, uint8_t out[16])
{
    uint8_t b[16], s[16];
    for (unsigned i = 0; i < 16u; i++) {
        b[i] = (uint8_t)(x->seed[i] ^ (i < 8u ? (uint8_t)(index >> (8u * i)) : 0u));
    }
    for (unsigned i = 0; i < 8u; i++) {
        s[i] = b[8u + i];
        s[8u + i] = (uint8_t)(b[8u + i] ^ b[i]);
    }
    dpm_aes128_encrypt(x->round_keys, s, out);
    for (unsigned i = 0; i < 16u; i++) {
        out[i] ^= s[i];
    }
}

void dpm_xof_aes_next(dpm_xof_aes_t *x, uint8_t *out, size_t len)
{
    uint8_t block[16];
    while (len > 0) {
        unsigned at = (unsigned)(x->offset % 16u);
        size_t n = 16u - at < len ? 16u - at : len;
        aes_block(x, x->offset / 16u, block);
        memcpy(out, block + at, n);
        out += n;
        len -= n;
        x->offset += n;
    }
}

#endif /* DPM_VDAF */
