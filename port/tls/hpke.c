/* SPDX-License-Identifier: Apache-2.0 */
/* HPKE (RFC 9180) base mode over Mbed TLS 3.6: see dpm/port_hpke.h. Written from the RFC's
 * text (RFC 9180 §4 DHKEM, RFC 9180 §5 key schedule and contexts, RFC 9180 §7 the suites'
 * constants); Appendix A's vectors for DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 / AES-128-GCM and
 * ChaCha20Poly1305 check every step (tests/vectors/test_hpke_vectors.c). */
#include <string.h>

#include "dpm/port_hpke.h"
#include "dpm/expert/hpke.h"
#include "mbedtls/chachapoly.h"
#include "mbedtls/constant_time.h"
#include "mbedtls/gcm.h"
#include "mbedtls/md.h"
#include "mbedtls/platform_util.h"
#include "mbedtls/ecdh.h" /* with the Everest variant: everest/x25519.h */

/* X25519 over 64-bit limbs where the compiler has unsigned __int128 (faster than Everest's
 * generic code: an aggregator does one per input share), Everest elsewhere or when
 * DPM_X25519_PORTABLE is defined (tests/vectors/test_x25519.c checks both against RFC 7748). */
#if defined(__SIZEOF_INT128__) && !defined(DPM_X25519_PORTABLE)
#define DPM_X25519_64 1
#include "x25519_64.h"
#endif

/* AES-128-GCM with AES-NI and PCLMULQDQ on x86-64 CPUs that have them (checked at run time),
 * Mbed TLS's GCM elsewhere or when DPM_GCM_PORTABLE is defined (tests/vectors/test_gcm_x86.c
 * checks the one against the other and the GCM specification). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(DPM_GCM_PORTABLE)
#define DPM_GCM_X86 1
#include "gcm_x86.h"
#endif

/* A decision on secret-derived data that is public by design (see sdk/src/internal/
 * dpm_internal.h): nothing here, valgrind's MAKE_MEM_DEFINED in the constant-time check. */
#ifndef DPM_CT_DECLASSIFY
#define DPM_CT_DECLASSIFY(x) ((void)0)
#endif

/* suite_id of the KEM (RFC 9180 §4.1), and of the whole suite (RFC 9180 §5.1) but its last two
 * bytes (the AEAD's id, hpke_suite). */
static const uint8_t KEM_SUITE[5] = {'K', 'E', 'M', 0x00, 0x20};
#define HPKE_SUITE_BYTES 10u
size_t dpm_hpke_aead_nk(uint16_t aead_id)
{
    return aead_id == DPM_HPKE_AEAD_AES_128_GCM         ? 16u
           : aead_id == DPM_HPKE_AEAD_CHACHA20_POLY1305 ? 32u
                                                        : 0u;
}

/* "HPKE" || I2OSP(kem_id, 2) || I2OSP(kdf_id, 2) || I2OSP(aead_id, 2) */
static void hpke_suite(uint16_t aead_id, uint8_t suite[HPKE_SUITE_BYTES])
{
    static const uint8_t head[8] = {'H', 'P', 'K', 'E', 0x00, 0x20, 0x00, 0x01};
    memcpy(suite, head, sizeof(head));
    suite[8] = (uint8_t)(aead_id >> 8);
    suite[9] = (uint8_t)aead_id;
}

static dpm_status_t from_mbedtls(int rc)
{
    if (rc == 0) {
        return DPM_OK;
    }
    /* Mbed TLS out of memory (its arena, on a device): every module's ALLOC_FAILED code. */
    return rc == MBEDTLS_ERR_MD_ALLOC_FAILED || rc == MBEDTLS_ERR_CIPHER_ALLOC_FAILED
               ? DPM_ERR_BUFFER
               : DPM_ERR_PARAM;
}

/* HMAC-SHA256(key, [prev] || [I2OSP(L, 2)] || "HPKE-v1" || suite || label || input ||
 * [counter]): one block of HPKE's labeled HKDF (RFC 9180 §4, RFC 5869 §2), its message fed to
 * Mbed TLS's HMAC in pieces (the TLS client links the same HMAC). An absent salt (key_len 0)
 * is the same HMAC key as RFC 5869's HashLen zero bytes: both are padded with zeros. */
static dpm_status_t labeled_hmac(const uint8_t *key, size_t key_len, const uint8_t *prev,
                                 size_t prev_len, const uint8_t *l2, const uint8_t *suite,
                                 size_t suite_len, const char *label, const uint8_t *input,
                                 size_t input_len, const uint8_t *counter, uint8_t out[DPM_HPKE_NH])
{
    static const uint8_t version[7] = {'H', 'P', 'K', 'E', '-', 'v', '1'};
    const dpm_span_t parts[7] = {{prev, prev_len},
                                 {l2, l2 != NULL ? 2u : 0u},
                                 {version, sizeof(version)},
                                 {suite, suite_len},
                                 {(const uint8_t *)label, strlen(label)},
                                 {input, input_len},
                                 {counter, counter != NULL ? 1u : 0u}};
    mbedtls_md_context_t md;
    mbedtls_md_init(&md);
    int rc = mbedtls_md_setup(&md, mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), 1);
    if (rc == 0) {
        rc = mbedtls_md_hmac_starts(&md, key, key_len);
    }
    for (size_t i = 0; rc == 0 && i < sizeof(parts) / sizeof(parts[0]); i++) {
        if (parts[i].len != 0) {
            rc = mbedtls_md_hmac_update(&md, parts[i].p, parts[i].len);
        }
    }
    if (rc == 0) {
        rc = mbedtls_md_hmac_finish(&md, out);
    }
    mbedtls_md_free(&md); /* wipes the keyed pads */
    return from_mbedtls(rc);
}

/* LabeledExtract(salt, label, ikm) = HKDF-Extract(salt, "HPKE-v1" || suite || label || ikm). */
static dpm_status_t labeled_extract(const uint8_t *suite, size_t suite_len, const uint8_t *salt,
                                    size_t salt_len, const char *label, const uint8_t *ikm,
                                    size_t ikm_len, uint8_t prk[DPM_HPKE_NH])
{
    return labeled_hmac(salt, salt_len, NULL, 0, NULL, suite, suite_len, label, ikm, ikm_len, NULL,
                        prk);
}

/* LabeledExpand(prk, label, info, L) = HKDF-Expand(prk, I2OSP(L, 2) || "HPKE-v1" || suite ||
 * label || info, L): T(i) = HMAC(prk, T(i - 1) || labeled info || i), T(0) empty. */
static dpm_status_t labeled_expand(const uint8_t *suite, size_t suite_len,
                                   const uint8_t prk[DPM_HPKE_NH], const char *label,
                                   const uint8_t *info, size_t info_len, uint8_t *out, size_t l)
{
    if (l > (size_t)255u * DPM_HPKE_NH) {
        return DPM_ERR_PARAM;
    }
    const uint8_t l2[2] = {(uint8_t)(l >> 8), (uint8_t)l};
    uint8_t t[DPM_HPKE_NH];
    dpm_status_t st = DPM_OK;
    for (size_t done = 0, i = 1; done < l && st == DPM_OK; done += DPM_HPKE_NH, i++) {
        const uint8_t counter = (uint8_t)i;
        st = labeled_hmac(prk, DPM_HPKE_NH, t, i == 1 ? 0u : sizeof(t), l2, suite, suite_len, label,
                          info, info_len, &counter, t);
        memcpy(out + done, t, l - done < sizeof(t) ? l - done : sizeof(t));
    }
    mbedtls_platform_zeroize(t, sizeof(t)); /* a block of the output, secret */
    return st;
}

/* X25519(scalar, point) (RFC 7748 §5, with its clamping). DPM_ERR_CORRUPT for an all-zero
 * result (a point of small order), which RFC 9180 §7.1.4 requires to abort. */
static dpm_status_t x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32])
{
#if defined(DPM_X25519_64)
    dpm_x25519_64(out, scalar, point);
    uint8_t any = 0; /* OR of every byte: no early exit on the secret result */
    for (size_t i = 0; i < 32; i++) {
        any |= out[i];
    }
    int zero = any == 0;
    DPM_CT_DECLASSIFY(zero); /* the abort is public (RFC 9180 §7.1.4), as Everest's check */
    if (zero) {
        return DPM_ERR_CORRUPT;
    }
    return DPM_OK;
#elif defined(MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED)
    mbedtls_x25519_context x;
    mbedtls_x25519_init(&x);
    memcpy(x.our_secret, scalar, 32);
    memcpy(x.peer_point, point, 32);
    size_t olen = 0;
    /* Everest's calc_secret wipes our_secret and refuses an all-zero result. */
    int rc = mbedtls_x25519_calc_secret(&x, &olen, out, 32, NULL, NULL);
    mbedtls_x25519_free(&x);
    if (rc != 0) {
        mbedtls_platform_zeroize(out, 32);
        return DPM_ERR_CORRUPT;
    }
    return DPM_OK;
#else
    (void)out, (void)scalar, (void)point;
    return DPM_ERR_UNSUPPORTED; /* the Mbed TLS config lacks MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED */
#endif
}

dpm_status_t dpm_hpke_derive_keypair(const uint8_t *ikm, size_t ikm_len, dpm_hpke_keypair_t *kp)
{
    uint8_t base[32] = {9}; /* X25519's base point u = 9 (built here: 22 bytes less flash) */
    if (ikm == NULL || kp == NULL || ikm_len < DPM_HPKE_NSK ||
        ikm_len > (size_t)2u * DPM_HPKE_NSK) {
        return DPM_ERR_PARAM;
    }
    uint8_t prk[DPM_HPKE_NH];
    dpm_hpke_keypair_t k;
    dpm_status_t st =
        labeled_extract(KEM_SUITE, sizeof(KEM_SUITE), NULL, 0, "dkp_prk", ikm, ikm_len, prk);
    if (st == DPM_OK) {
        st = labeled_expand(KEM_SUITE, sizeof(KEM_SUITE), prk, "sk", NULL, 0, k.sk, DPM_HPKE_NSK);
    }
    if (st == DPM_OK) {
        st = x25519(k.pk, k.sk, base);
    }
    if (st == DPM_OK) {
        *kp = k;
    }
    mbedtls_platform_zeroize(prk, sizeof(prk));
    mbedtls_platform_zeroize(&k, sizeof(k));
    return st;
}

/* ExtractAndExpand(dh, enc || pkRm) (RFC 9180 §4.1). */
static dpm_status_t extract_and_expand(const uint8_t dh[32], const uint8_t enc[DPM_HPKE_NENC],
                                       const uint8_t pk_r[DPM_HPKE_NPK],
                                       uint8_t shared_secret[DPM_HPKE_NSECRET])
{
    uint8_t prk[DPM_HPKE_NH], kem_context[DPM_HPKE_NENC + DPM_HPKE_NPK];
    memcpy(kem_context, enc, DPM_HPKE_NENC);
    memcpy(kem_context + DPM_HPKE_NENC, pk_r, DPM_HPKE_NPK);
    dpm_status_t st =
        labeled_extract(KEM_SUITE, sizeof(KEM_SUITE), NULL, 0, "eae_prk", dh, 32, prk);
    if (st == DPM_OK) {
        st = labeled_expand(KEM_SUITE, sizeof(KEM_SUITE), prk, "shared_secret", kem_context,
                            sizeof(kem_context), shared_secret, DPM_HPKE_NSECRET);
    }
    mbedtls_platform_zeroize(prk, sizeof(prk));
    return st;
}

dpm_status_t dpm_hpke_encap(const uint8_t pk_r[DPM_HPKE_NPK], const uint8_t *ikm_e,
                            size_t ikm_e_len, uint8_t enc[DPM_HPKE_NENC],
                            uint8_t shared_secret[DPM_HPKE_NSECRET])
{
    if (pk_r == NULL || enc == NULL || shared_secret == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_hpke_keypair_t e;
    uint8_t dh[32];
    dpm_status_t st = dpm_hpke_derive_keypair(ikm_e, ikm_e_len, &e);
    if (st == DPM_OK) {
        st = x25519(dh, e.sk, pk_r);
        st = st == DPM_ERR_CORRUPT ? DPM_ERR_PARAM : st; /* the recipient's key is the bad input */
    }
    if (st == DPM_OK) {
        st = extract_and_expand(dh, e.pk, pk_r, shared_secret);
    }
    if (st == DPM_OK) {
        memcpy(enc, e.pk, DPM_HPKE_NENC);
    }
    mbedtls_platform_zeroize(&e, sizeof(e));
    mbedtls_platform_zeroize(dh, sizeof(dh));
    return st;
}

dpm_status_t dpm_hpke_decap(const uint8_t enc[DPM_HPKE_NENC], const dpm_hpke_keypair_t *kp_r,
                            uint8_t shared_secret[DPM_HPKE_NSECRET])
{
    if (enc == NULL || kp_r == NULL || shared_secret == NULL) {
        return DPM_ERR_PARAM;
    }
    uint8_t dh[32];
    dpm_status_t st = x25519(dh, kp_r->sk, enc);
    if (st == DPM_OK) {
        st = extract_and_expand(dh, enc, kp_r->pk, shared_secret);
    }
    mbedtls_platform_zeroize(dh, sizeof(dh));
    return st;
}

/* KeySchedule (RFC 9180 §5.1), mode_base; the exporter secret only when `exporter` (an open
 * that only decrypts, dpm_hpke_open_base, needs none: one HMAC less per input share). */
static dpm_status_t key_schedule(uint16_t aead_id, const uint8_t shared_secret[DPM_HPKE_NSECRET],
                                 const uint8_t *info, size_t info_len, dpm_hpke_ctx_t *ctx,
                                 uint8_t key_schedule_context[1u + 2u * DPM_HPKE_NH], int exporter)
{
    if (shared_secret == NULL || ctx == NULL || (info == NULL && info_len != 0) ||
        info_len > DPM_HPKE_MAX_INFO) {
        return DPM_ERR_PARAM;
    }
    const size_t nk = dpm_hpke_aead_nk(aead_id);
    if (nk == 0) {
        return DPM_ERR_UNSUPPORTED;
    }
    /* key_schedule_context = mode || psk_id_hash || info_hash, mode_base, psk = psk_id = "". */
    uint8_t ksc[1u + 2u * DPM_HPKE_NH], secret[DPM_HPKE_NH], suite[HPKE_SUITE_BYTES];
    memset(ctx, 0, sizeof(*ctx));
    ctx->aead_id = aead_id;
    hpke_suite(aead_id, suite);
    ksc[0] = 0x00;
    /* psk_id_hash = LabeledExtract("", "psk_id_hash", "") (base mode: psk_id empty) depends on
     * the suite alone. Where aggregators run (64-bit hosts: unsigned __int128) it is one of two
     * constants, as RFC 9180's A.1.1 and A.2.1 print them in key_schedule_context, not an HMAC
     * per input share; a 32-bit device computes it (64 bytes of flash less, one HMAC more in
     * the preparation, dpm_dap_pool_fill: idle time). test_hpke_vectors checks both ways. */
#if defined(__SIZEOF_INT128__)
    static const uint8_t PSK_ID_HASH_AES128GCM[DPM_HPKE_NH] = {
        0x72, 0x56, 0x11, 0xc9, 0xd9, 0x8c, 0x07, 0xc0, 0x3f, 0x60, 0x09,
        0x5c, 0xd3, 0x2d, 0x40, 0x0d, 0x83, 0x47, 0xd4, 0x5e, 0xd6, 0x70,
        0x97, 0xbb, 0xad, 0x50, 0xfc, 0x56, 0xda, 0x74, 0x2d, 0x07};
    static const uint8_t PSK_ID_HASH_CHACHA20POLY1305[DPM_HPKE_NH] = {
        0x43, 0x1d, 0xf6, 0xcd, 0x95, 0xe1, 0x1f, 0xf4, 0x9d, 0x70, 0x13,
        0x56, 0x3b, 0xaf, 0x7f, 0x11, 0x58, 0x8c, 0x75, 0xa6, 0x61, 0x1e,
        0xe2, 0xa4, 0x40, 0x4a, 0x49, 0x30, 0x6a, 0xe4, 0xcf, 0xc5};
    memcpy(ksc + 1,
           aead_id == DPM_HPKE_AEAD_AES_128_GCM ? PSK_ID_HASH_AES128GCM
                                                : PSK_ID_HASH_CHACHA20POLY1305,
           DPM_HPKE_NH);
    dpm_status_t st = DPM_OK;
#else
    dpm_status_t st =
        labeled_extract(suite, sizeof(suite), NULL, 0, "psk_id_hash", NULL, 0, ksc + 1);
#endif
    if (st == DPM_OK) {
        st = labeled_extract(suite, sizeof(suite), NULL, 0, "info_hash", info, info_len,
                             ksc + 1 + DPM_HPKE_NH);
    }
    if (st == DPM_OK) {
        st = labeled_extract(suite, sizeof(suite), shared_secret, DPM_HPKE_NSECRET, "secret", NULL,
                             0, secret);
    }
    if (st == DPM_OK) {
        st = labeled_expand(suite, sizeof(suite), secret, "key", ksc, sizeof(ksc), ctx->key, nk);
    }
    if (st == DPM_OK) {
        st = labeled_expand(suite, sizeof(suite), secret, "base_nonce", ksc, sizeof(ksc),
                            ctx->base_nonce, DPM_HPKE_NN);
    }
    if (st == DPM_OK && exporter) {
        st = labeled_expand(suite, sizeof(suite), secret, "exp", ksc, sizeof(ksc),
                            ctx->exporter_secret, DPM_HPKE_NH);
    }
    if (st != DPM_OK) {
        mbedtls_platform_zeroize(ctx, sizeof(*ctx)); /* no half-made context */
    } else if (key_schedule_context != NULL) {
        memcpy(key_schedule_context, ksc, sizeof(ksc));
    }
    mbedtls_platform_zeroize(secret, sizeof(secret));
    return st;
}

dpm_status_t dpm_hpke_key_schedule(uint16_t aead_id, const uint8_t shared_secret[DPM_HPKE_NSECRET],
                                   const uint8_t *info, size_t info_len, dpm_hpke_ctx_t *ctx,
                                   uint8_t key_schedule_context[1u + 2u * DPM_HPKE_NH])
{
    return key_schedule(aead_id, shared_secret, info, info_len, ctx, key_schedule_context, 1);
}

dpm_status_t dpm_hpke_setup_base_s(uint16_t aead_id, const uint8_t pk_r[DPM_HPKE_NPK],
                                   const uint8_t *ikm_e, size_t ikm_e_len, const uint8_t *info,
                                   size_t info_len, uint8_t enc[DPM_HPKE_NENC], dpm_hpke_ctx_t *ctx)
{
    if (enc == NULL) {
        return DPM_ERR_PARAM;
    }
    if (dpm_hpke_aead_nk(aead_id) == 0) {
        return DPM_ERR_UNSUPPORTED; /* before the two X25519 */
    }
    uint8_t ss[DPM_HPKE_NSECRET];
    dpm_status_t st = dpm_hpke_encap(pk_r, ikm_e, ikm_e_len, enc, ss);
    if (st == DPM_OK) {
        st = key_schedule(aead_id, ss, info, info_len, ctx, NULL, 1);
    }
    mbedtls_platform_zeroize(ss, sizeof(ss));
    return st;
}

/* SetupBaseR; the exporter secret only when `exporter`. */
static dpm_status_t setup_r(uint16_t aead_id, const uint8_t enc[DPM_HPKE_NENC],
                            const dpm_hpke_keypair_t *kp_r, const uint8_t *info, size_t info_len,
                            dpm_hpke_ctx_t *ctx, int exporter)
{
    if (dpm_hpke_aead_nk(aead_id) == 0) {
        return DPM_ERR_UNSUPPORTED;
    }
    uint8_t ss[DPM_HPKE_NSECRET];
    dpm_status_t st = dpm_hpke_decap(enc, kp_r, ss);
    if (st == DPM_OK) {
        st = key_schedule(aead_id, ss, info, info_len, ctx, NULL, exporter);
    }
    mbedtls_platform_zeroize(ss, sizeof(ss));
    return st;
}

dpm_status_t dpm_hpke_setup_base_r(uint16_t aead_id, const uint8_t enc[DPM_HPKE_NENC],
                                   const dpm_hpke_keypair_t *kp_r, const uint8_t *info,
                                   size_t info_len, dpm_hpke_ctx_t *ctx)
{
    return setup_r(aead_id, enc, kp_r, info, info_len, ctx, 1);
}

/* AES-128-GCM over buf[0, len) in place (Mbed TLS's GCM: AES by tables in ROM, GHASH by a
 * 4-bit table of the key's multiples; see README "DAP reports sealed with HPKE" on time). */
static int aead_gcm(const dpm_hpke_ctx_t *ctx, int encrypt, const uint8_t *nonce,
                    const dpm_span_t *aad, size_t naad, uint8_t *buf, size_t len,
                    uint8_t tag_out[DPM_HPKE_NT])
{
#if defined(DPM_GCM_X86)
    if (dpm_gcm_x86_available()) {
        dpm_gcm_x86_t g;
        dpm_gcm_x86_init(&g, ctx->key);
        size_t total = 0;
        for (size_t i = 0; i < naad; i++) {
            if (aad[i].len != 0 && aad[i].p == NULL) {
                mbedtls_platform_zeroize(&g, sizeof(g));
                return MBEDTLS_ERR_GCM_BAD_INPUT;
            }
            if (aad[i].len != 0) {
                dpm_gcm_x86_aad(&g, aad[i].p, aad[i].len);
                total += aad[i].len;
            }
        }
        dpm_gcm_x86_finish(&g, nonce, encrypt, total, buf, len, tag_out); /* wipes g */
        return 0;
    }
#endif
    mbedtls_gcm_context g;
    mbedtls_gcm_init(&g);
    int rc = mbedtls_gcm_setkey(&g, MBEDTLS_CIPHER_ID_AES, ctx->key, 128);
    if (rc == 0) {
        rc = mbedtls_gcm_starts(&g, encrypt ? MBEDTLS_GCM_ENCRYPT : MBEDTLS_GCM_DECRYPT, nonce,
                                DPM_HPKE_NN);
    }
    for (size_t i = 0; rc == 0 && i < naad; i++) {
        if (aad[i].len != 0) {
            rc = aad[i].p != NULL ? mbedtls_gcm_update_ad(&g, aad[i].p, aad[i].len)
                                  : MBEDTLS_ERR_GCM_BAD_INPUT;
        }
    }
    size_t out_len = 0;
    if (rc == 0 && len != 0) {
        rc = mbedtls_gcm_update(&g, buf, len, buf, len, &out_len); /* in place, immediate */
    }
    if (rc == 0) {
        rc = mbedtls_gcm_finish(&g, NULL, 0, &out_len, tag_out, DPM_HPKE_NT);
    }
    mbedtls_gcm_free(&g); /* wipes the key schedule */
    return rc;
}

/* ChaCha20-Poly1305 (RFC 8439) over buf[0, len) in place: add-rotate-xor and a prime-field
 * MAC, no table lookups, no allocation. */
static int aead_chachapoly(const dpm_hpke_ctx_t *ctx, int encrypt, const uint8_t *nonce,
                           const dpm_span_t *aad, size_t naad, uint8_t *buf, size_t len,
                           uint8_t tag_out[DPM_HPKE_NT])
{
    mbedtls_chachapoly_context c;
    mbedtls_chachapoly_init(&c);
    int rc = mbedtls_chachapoly_setkey(&c, ctx->key);
    if (rc == 0) {
        rc = mbedtls_chachapoly_starts(
            &c, nonce, encrypt ? MBEDTLS_CHACHAPOLY_ENCRYPT : MBEDTLS_CHACHAPOLY_DECRYPT);
    }
    for (size_t i = 0; rc == 0 && i < naad; i++) {
        if (aad[i].len != 0) {
            rc = aad[i].p != NULL ? mbedtls_chachapoly_update_aad(&c, aad[i].p, aad[i].len)
                                  : MBEDTLS_ERR_POLY1305_BAD_INPUT_DATA;
        }
    }
    if (rc == 0 && len != 0) {
        rc = mbedtls_chachapoly_update(&c, len, buf, buf); /* in place */
    }
    if (rc == 0) {
        rc = mbedtls_chachapoly_finish(&c, tag_out);
    }
    mbedtls_chachapoly_free(&c); /* wipes the key and the MAC state */
    return rc;
}

/* The context's AEAD over buf[0, len) in place with its nonce for seq: tag out (encrypt) or the
 * computed tag (decrypt) into tag_out. */
static dpm_status_t aead(const dpm_hpke_ctx_t *ctx, int encrypt, const dpm_span_t *aad, size_t naad,
                         uint8_t *buf, size_t len, uint8_t tag_out[DPM_HPKE_NT])
{
    if (ctx->seq == UINT64_MAX) {
        return DPM_ERR_RANGE; /* RFC 9180 §5.2: the sequence number must not overflow */
    }
    /* ComputeNonce(seq) = base_nonce XOR I2OSP(seq, Nn) */
    uint8_t nonce[DPM_HPKE_NN];
    memcpy(nonce, ctx->base_nonce, DPM_HPKE_NN);
    for (size_t i = 0; i < 8; i++) {
        nonce[DPM_HPKE_NN - 1 - i] ^= (uint8_t)(ctx->seq >> (8 * i));
    }
    switch (ctx->aead_id) {
    case DPM_HPKE_AEAD_AES_128_GCM:
        return from_mbedtls(aead_gcm(ctx, encrypt, nonce, aad, naad, buf, len, tag_out));
    case DPM_HPKE_AEAD_CHACHA20_POLY1305:
        return from_mbedtls(aead_chachapoly(ctx, encrypt, nonce, aad, naad, buf, len, tag_out));
    default: return DPM_ERR_UNSUPPORTED;
    }
}

static int aad_ok(const dpm_span_t *aad, size_t naad)
{
    return naad == 0 || aad != NULL;
}

dpm_status_t dpm_hpke_ctx_seal(dpm_hpke_ctx_t *ctx, const dpm_span_t *aad, size_t naad,
                               uint8_t *buf, size_t len, uint8_t tag[DPM_HPKE_NT])
{
    if (ctx == NULL || !aad_ok(aad, naad) || (buf == NULL && len != 0) || tag == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = aead(ctx, 1, aad, naad, buf, len, tag);
    if (st == DPM_OK) {
        ctx->seq++;
    }
    return st;
}

dpm_status_t dpm_hpke_ctx_open(dpm_hpke_ctx_t *ctx, const dpm_span_t *aad, size_t naad,
                               uint8_t *buf, size_t len, const uint8_t tag[DPM_HPKE_NT])
{
    if (ctx == NULL || !aad_ok(aad, naad) || (buf == NULL && len != 0) || tag == NULL) {
        return DPM_ERR_PARAM;
    }
    uint8_t want[DPM_HPKE_NT];
    dpm_status_t st = aead(ctx, 0, aad, naad, buf, len, want);
    /* constant time: the comparison must not tell how many tag bytes matched; whether the
     * ciphertext authenticates is public (it is the status) */
    int differ = mbedtls_ct_memcmp(want, tag, DPM_HPKE_NT);
    DPM_CT_DECLASSIFY(differ);
    if (st == DPM_OK && differ != 0) {
        st = DPM_ERR_CORRUPT;
    }
    if (st == DPM_OK) {
        ctx->seq++;
    } else if (buf != NULL) {
        mbedtls_platform_zeroize(buf, len); /* never release unauthenticated plaintext */
    }
    mbedtls_platform_zeroize(want, sizeof(want));
    return st;
}

dpm_status_t dpm_hpke_ctx_export(const dpm_hpke_ctx_t *ctx, const uint8_t *exporter_context,
                                 size_t exporter_context_len, uint8_t *out, size_t out_len)
{
    if (ctx == NULL || out == NULL || (exporter_context == NULL && exporter_context_len != 0) ||
        exporter_context_len > DPM_HPKE_MAX_INFO) {
        return DPM_ERR_PARAM;
    }
    uint8_t suite[HPKE_SUITE_BYTES];
    hpke_suite(ctx->aead_id, suite);
    return labeled_expand(suite, sizeof(suite), ctx->exporter_secret, "sec", exporter_context,
                          exporter_context_len, out, out_len);
}

void dpm_hpke_ctx_wipe(dpm_hpke_ctx_t *ctx)
{
    if (ctx != NULL) {
        mbedtls_platform_zeroize(ctx, sizeof(*ctx));
    }
}

dpm_status_t dpm_hpke_open_base(uint16_t aead_id, const uint8_t enc[DPM_HPKE_NENC],
                                const dpm_hpke_keypair_t *kp_r, const uint8_t *info,
                                size_t info_len, const dpm_span_t *aad, size_t naad, uint8_t *buf,
                                size_t len, const uint8_t tag[DPM_HPKE_NT])
{
    dpm_hpke_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    dpm_status_t st = setup_r(aead_id, enc, kp_r, info, info_len, &ctx, 0); /* no export */
    if (st == DPM_OK) {
        st = dpm_hpke_ctx_open(&ctx, aad, naad, buf, len, tag);
    } else if (st == DPM_ERR_CORRUPT && buf != NULL) {
        mbedtls_platform_zeroize(buf, len);
    }
    dpm_hpke_ctx_wipe(&ctx);
    return st;
}

/* SetupBaseS to cfg with the ephemeral key DeriveKeyPair(32 bytes from rng): what a seal needs
 * before it encrypts, inline or ahead of time. */
static dpm_status_t encap_fresh(const dpm_hpke_config_t *cfg, const dpm_rng_t *rng,
                                const uint8_t *info, size_t info_len, uint8_t enc[DPM_HPKE_NENC],
                                dpm_hpke_ctx_t *ctx)
{
    if (rng == NULL || rng->fill == NULL || dpm_hpke_config_check(cfg, NULL) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    uint8_t ikm[DPM_HPKE_NSK];
    dpm_status_t st = rng->fill(rng->ctx, ikm, sizeof(ikm)) != 0
                          ? DPM_ERR_RNG
                          : dpm_hpke_setup_base_s(cfg->aead_id, cfg->public_key, ikm, sizeof(ikm),
                                                  info, info_len, enc, ctx);
    mbedtls_platform_zeroize(ikm, sizeof(ikm));
    return st;
}

/* The seal hook: SealBase with a fresh ephemeral key from the device's generator. */
static dpm_status_t seal_base(void *hook_ctx, const dpm_hpke_config_t *cfg, const dpm_rng_t *rng,
                              const uint8_t *info, size_t info_len, const dpm_span_t *aad,
                              size_t naad, uint8_t *buf, size_t len, uint8_t enc[DPM_HPKE_NENC],
                              uint8_t tag[DPM_HPKE_NT])
{
    (void)hook_ctx;
    dpm_hpke_ctx_t ctx;
    memset(&ctx, 0, sizeof(ctx));
    dpm_status_t st = encap_fresh(cfg, rng, info, info_len, enc, &ctx);
    if (st == DPM_OK) {
        st = dpm_hpke_ctx_seal(&ctx, aad, naad, buf, len, tag);
    }
    dpm_hpke_ctx_wipe(&ctx);
    return st;
}

dpm_hpke_sealer_t dpm_hpke_sealer(void)
{
    dpm_hpke_sealer_t s = {seal_base, NULL};
    return s;
}

/* ---- encapsulation ahead of time ---------------------------------------------------------- */

dpm_status_t dpm_hpke_pool_init(dpm_hpke_pool_t *p, dpm_hpke_encap_t *slots, size_t nslots)
{
    if (p == NULL || slots == NULL || nslots == 0) {
        return DPM_ERR_PARAM;
    }
    memset(p, 0, sizeof(*p));
    p->slots = slots;
    p->nslots = nslots;
    dpm_hpke_pool_clear(p);
    return DPM_OK;
}

void dpm_hpke_pool_clear(dpm_hpke_pool_t *p)
{
    if (p != NULL && p->slots != NULL) {
        mbedtls_platform_zeroize(p->slots, p->nslots * sizeof(p->slots[0]));
    }
}

/* Slot e was made for exactly (cfg, info). */
static int made_for(const dpm_hpke_encap_t *e, const dpm_hpke_config_t *cfg, const uint8_t *info,
                    size_t info_len)
{
    return e->ready && e->cfg.id == cfg->id && e->cfg.kem_id == cfg->kem_id &&
           e->cfg.kdf_id == cfg->kdf_id && e->cfg.aead_id == cfg->aead_id &&
           memcmp(e->cfg.public_key, cfg->public_key, DPM_HPKE_NPK) == 0 &&
           e->info_len == info_len && (info_len == 0 || memcmp(e->info, info, info_len) == 0);
}

dpm_status_t dpm_hpke_pool_fill(dpm_hpke_pool_t *p, const dpm_hpke_config_t *cfg,
                                const uint8_t *info, size_t info_len, const dpm_rng_t *rng)
{
    if (p == NULL || p->slots == NULL || rng == NULL || rng->fill == NULL ||
        (info == NULL && info_len != 0) || info_len > DPM_HPKE_MAX_INFO ||
        dpm_hpke_config_check(cfg, NULL) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    dpm_hpke_encap_t *e = NULL;
    for (size_t i = 0; i < p->nslots && e == NULL; i++) {
        e = p->slots[i].ready ? NULL : &p->slots[i];
    }
    if (e == NULL) {
        return DPM_ERR_BUFFER;
    }
    dpm_status_t st = encap_fresh(cfg, rng, info, info_len, e->enc, &e->ctx);
    if (st != DPM_OK) {
        mbedtls_platform_zeroize(e, sizeof(*e));
        return st;
    }
    e->cfg = *cfg;
    if (info_len != 0) {
        memcpy(e->info, info, info_len);
    }
    e->info_len = (uint8_t)info_len;
    e->ready = 1;
    return DPM_OK;
}

size_t dpm_hpke_pool_ready(const dpm_hpke_pool_t *p, const dpm_hpke_config_t *cfg,
                           const uint8_t *info, size_t info_len)
{
    size_t n = 0;
    for (size_t i = 0; p != NULL && cfg != NULL && i < p->nslots; i++) {
        n += (size_t)made_for(&p->slots[i], cfg, info, info_len);
    }
    return n;
}

static dpm_status_t seal_pooled(void *hook_ctx, const dpm_hpke_config_t *cfg, const dpm_rng_t *rng,
                                const uint8_t *info, size_t info_len, const dpm_span_t *aad,
                                size_t naad, uint8_t *buf, size_t len, uint8_t enc[DPM_HPKE_NENC],
                                uint8_t tag[DPM_HPKE_NT])
{
    dpm_hpke_pool_t *p = hook_ctx;
    if (p == NULL || cfg == NULL) {
        return DPM_ERR_PARAM;
    }
    for (size_t i = 0; i < p->nslots; i++) {
        dpm_hpke_encap_t *e = &p->slots[i];
        if (made_for(e, cfg, info, info_len)) {
            memcpy(enc, e->enc, DPM_HPKE_NENC);
            dpm_status_t st = dpm_hpke_ctx_seal(&e->ctx, aad, naad, buf, len, tag);
            mbedtls_platform_zeroize(e, sizeof(*e)); /* one message per context, as SealBase */
            p->used += st == DPM_OK;
            return st;
        }
    }
    p->missed++;
    return seal_base(NULL, cfg, rng, info, info_len, aad, naad, buf, len, enc, tag);
}

dpm_hpke_sealer_t dpm_hpke_pool_sealer(dpm_hpke_pool_t *p)
{
    dpm_hpke_sealer_t s = {seal_pooled, p};
    return s;
}
