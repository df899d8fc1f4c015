/* SPDX-License-Identifier: Apache-2.0 */
/* HPKE (RFC 9180) base mode over Mbed TLS 3.6: see dpm/port_hpke.h. Written from the RFC's
 * text (§4 DHKEM, §5 key schedule and contexts, §7 the suite's constants); Appendix A's
 * vectors for DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 / AES-128-GCM check every step
 * (tests/vectors/test_hpke_vectors.c). */
#include <string.h>

#include "dpm/port_hpke.h"
#include "mbedtls/constant_time.h"
#include "mbedtls/gcm.h"
#include "mbedtls/hkdf.h"
#include "mbedtls/md.h"
#include "mbedtls/platform_util.h"
#include "mbedtls/ecdh.h" /* with the Everest variant: everest/x25519.h */

/* A decision on secret-derived data that is public by design (see sdk/src/internal/
 * dpm_internal.h): nothing here, valgrind's MAKE_MEM_DEFINED in the constant-time check. */
#ifndef DPM_CT_DECLASSIFY
#define DPM_CT_DECLASSIFY(x) ((void)0)
#endif

/* suite_id of the KEM (§4.1) and of the whole suite (§5.1). */
static const uint8_t KEM_SUITE[5] = {'K', 'E', 'M', 0x00, 0x20};
static const uint8_t HPKE_SUITE[10] = {'H', 'P', 'K', 'E', 0x00, 0x20, 0x00, 0x01, 0x00, 0x01};
#define LABEL_MAX 13u             /* "shared_secret" */
#define INPUT_MAX (2u * 32u + 1u) /* the longest ikm or info: key_schedule_context */
#define LABELED_MAX (2u + 7u + sizeof(HPKE_SUITE) + LABEL_MAX + INPUT_MAX)

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

/* "HPKE-v1" || suite_id || label || input into buf, preceded by I2OSP(L, 2) if with_len. */
static size_t labeled(uint8_t *buf, int with_len, size_t l, const uint8_t *suite, size_t suite_len,
                      const char *label, const uint8_t *input, size_t input_len)
{
    static const uint8_t version[7] = {'H', 'P', 'K', 'E', '-', 'v', '1'};
    size_t n = 0;
    if (with_len) {
        buf[n++] = (uint8_t)(l >> 8);
        buf[n++] = (uint8_t)l;
    }
    memcpy(buf + n, version, sizeof(version));
    n += sizeof(version);
    memcpy(buf + n, suite, suite_len);
    n += suite_len;
    for (size_t i = 0; label[i] != '\0'; i++) { /* labels are the RFC's ASCII constants */
        buf[n++] = (uint8_t)label[i];
    }
    if (input_len != 0) {
        memcpy(buf + n, input, input_len);
    }
    return n + input_len;
}

/* LabeledExtract(salt, label, ikm) = HKDF-Extract(salt, "HPKE-v1" || suite || label || ikm). */
static dpm_status_t labeled_extract(const uint8_t *suite, size_t suite_len, const uint8_t *salt,
                                    size_t salt_len, const char *label, const uint8_t *ikm,
                                    size_t ikm_len, uint8_t prk[DPM_HPKE_NH])
{
    uint8_t buf[LABELED_MAX];
    if (ikm_len > INPUT_MAX) {
        return DPM_ERR_PARAM;
    }
    size_t n = labeled(buf, 0, 0, suite, suite_len, label, ikm, ikm_len);
    int rc = mbedtls_hkdf_extract(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), salt, salt_len, buf,
                                  n, prk);
    mbedtls_platform_zeroize(buf, sizeof(buf)); /* the ikm may be secret */
    return from_mbedtls(rc);
}

/* LabeledExpand(prk, label, info, L) = HKDF-Expand(prk, I2OSP(L, 2) || "HPKE-v1" || suite ||
 * label || info, L). */
static dpm_status_t labeled_expand(const uint8_t *suite, size_t suite_len,
                                   const uint8_t prk[DPM_HPKE_NH], const char *label,
                                   const uint8_t *info, size_t info_len, uint8_t *out, size_t l)
{
    uint8_t buf[LABELED_MAX];
    if (info_len > INPUT_MAX || l > (size_t)255u * DPM_HPKE_NH) {
        return DPM_ERR_PARAM;
    }
    size_t n = labeled(buf, 1, l, suite, suite_len, label, info, info_len);
    return from_mbedtls(mbedtls_hkdf_expand(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), prk,
                                            DPM_HPKE_NH, buf, n, out, l));
}

/* X25519(scalar, point) (RFC 7748 §5, with its clamping). DPM_ERR_CORRUPT for an all-zero
 * result (a point of small order), which RFC 9180 §7.1.4 requires to abort. */
static dpm_status_t x25519(uint8_t out[32], const uint8_t scalar[32], const uint8_t point[32])
{
#if defined(MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED)
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
    static const uint8_t base[32] = {9};
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

/* ExtractAndExpand(dh, enc || pkRm) (§4.1). */
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

dpm_status_t dpm_hpke_key_schedule(const uint8_t shared_secret[DPM_HPKE_NSECRET],
                                   const uint8_t *info, size_t info_len, dpm_hpke_ctx_t *ctx,
                                   uint8_t key_schedule_context[1u + 2u * DPM_HPKE_NH])
{
    if (shared_secret == NULL || ctx == NULL || (info == NULL && info_len != 0) ||
        info_len > DPM_HPKE_MAX_INFO) {
        return DPM_ERR_PARAM;
    }
    /* key_schedule_context = mode || psk_id_hash || info_hash, mode_base, psk = psk_id = "". */
    uint8_t ksc[1u + 2u * DPM_HPKE_NH], secret[DPM_HPKE_NH];
    dpm_hpke_ctx_t c;
    memset(&c, 0, sizeof(c));
    ksc[0] = 0x00;
    dpm_status_t st =
        labeled_extract(HPKE_SUITE, sizeof(HPKE_SUITE), NULL, 0, "psk_id_hash", NULL, 0, ksc + 1);
    if (st == DPM_OK) {
        st = labeled_extract(HPKE_SUITE, sizeof(HPKE_SUITE), NULL, 0, "info_hash", info, info_len,
                             ksc + 1 + DPM_HPKE_NH);
    }
    if (st == DPM_OK) {
        st = labeled_extract(HPKE_SUITE, sizeof(HPKE_SUITE), shared_secret, DPM_HPKE_NSECRET,
                             "secret", NULL, 0, secret);
    }
    if (st == DPM_OK) {
        st = labeled_expand(HPKE_SUITE, sizeof(HPKE_SUITE), secret, "key", ksc, sizeof(ksc), c.key,
                            DPM_HPKE_NK);
    }
    if (st == DPM_OK) {
        st = labeled_expand(HPKE_SUITE, sizeof(HPKE_SUITE), secret, "base_nonce", ksc, sizeof(ksc),
                            c.base_nonce, DPM_HPKE_NN);
    }
    if (st == DPM_OK) {
        st = labeled_expand(HPKE_SUITE, sizeof(HPKE_SUITE), secret, "exp", ksc, sizeof(ksc),
                            c.exporter_secret, DPM_HPKE_NH);
    }
    if (st == DPM_OK) {
        *ctx = c;
        if (key_schedule_context != NULL) {
            memcpy(key_schedule_context, ksc, sizeof(ksc));
        }
    }
    mbedtls_platform_zeroize(secret, sizeof(secret));
    mbedtls_platform_zeroize(&c, sizeof(c));
    return st;
}

dpm_status_t dpm_hpke_setup_base_s(const uint8_t pk_r[DPM_HPKE_NPK], const uint8_t *ikm_e,
                                   size_t ikm_e_len, const uint8_t *info, size_t info_len,
                                   uint8_t enc[DPM_HPKE_NENC], dpm_hpke_ctx_t *ctx)
{
    if (enc == NULL) {
        return DPM_ERR_PARAM;
    }
    uint8_t ss[DPM_HPKE_NSECRET];
    dpm_status_t st = dpm_hpke_encap(pk_r, ikm_e, ikm_e_len, enc, ss);
    if (st == DPM_OK) {
        st = dpm_hpke_key_schedule(ss, info, info_len, ctx, NULL);
    }
    mbedtls_platform_zeroize(ss, sizeof(ss));
    return st;
}

dpm_status_t dpm_hpke_setup_base_r(const uint8_t enc[DPM_HPKE_NENC], const dpm_hpke_keypair_t *kp_r,
                                   const uint8_t *info, size_t info_len, dpm_hpke_ctx_t *ctx)
{
    uint8_t ss[DPM_HPKE_NSECRET];
    dpm_status_t st = dpm_hpke_decap(enc, kp_r, ss);
    if (st == DPM_OK) {
        st = dpm_hpke_key_schedule(ss, info, info_len, ctx, NULL);
    }
    mbedtls_platform_zeroize(ss, sizeof(ss));
    return st;
}

/* The AEAD over buf[0, len) in place with the context's nonce for seq: tag out (encrypt) or the
 * computed tag (decrypt) into tag_out. */
static dpm_status_t aead(const dpm_hpke_ctx_t *ctx, int mode, const dpm_span_t *aad, size_t naad,
                         uint8_t *buf, size_t len, uint8_t tag_out[DPM_HPKE_NT])
{
    if (ctx->seq == UINT64_MAX) {
        return DPM_ERR_RANGE; /* §5.2: the sequence number must not overflow */
    }
    /* ComputeNonce(seq) = base_nonce XOR I2OSP(seq, Nn) */
    uint8_t nonce[DPM_HPKE_NN];
    memcpy(nonce, ctx->base_nonce, DPM_HPKE_NN);
    for (size_t i = 0; i < 8; i++) {
        nonce[DPM_HPKE_NN - 1 - i] ^= (uint8_t)(ctx->seq >> (8 * i));
    }
    mbedtls_gcm_context g;
    mbedtls_gcm_init(&g);
    int rc = mbedtls_gcm_setkey(&g, MBEDTLS_CIPHER_ID_AES, ctx->key, 8 * DPM_HPKE_NK);
    if (rc == 0) {
        rc = mbedtls_gcm_starts(&g, mode, nonce, DPM_HPKE_NN);
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
    return from_mbedtls(rc);
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
    dpm_status_t st = aead(ctx, MBEDTLS_GCM_ENCRYPT, aad, naad, buf, len, tag);
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
    dpm_status_t st = aead(ctx, MBEDTLS_GCM_DECRYPT, aad, naad, buf, len, want);
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
    return labeled_expand(HPKE_SUITE, sizeof(HPKE_SUITE), ctx->exporter_secret, "sec",
                          exporter_context, exporter_context_len, out, out_len);
}

void dpm_hpke_ctx_wipe(dpm_hpke_ctx_t *ctx)
{
    if (ctx != NULL) {
        mbedtls_platform_zeroize(ctx, sizeof(*ctx));
    }
}

dpm_status_t dpm_hpke_open_base(const uint8_t enc[DPM_HPKE_NENC], const dpm_hpke_keypair_t *kp_r,
                                const uint8_t *info, size_t info_len, const dpm_span_t *aad,
                                size_t naad, uint8_t *buf, size_t len,
                                const uint8_t tag[DPM_HPKE_NT])
{
    dpm_hpke_ctx_t ctx;
    dpm_status_t st = dpm_hpke_setup_base_r(enc, kp_r, info, info_len, &ctx);
    if (st == DPM_OK) {
        st = dpm_hpke_ctx_open(&ctx, aad, naad, buf, len, tag);
    } else if (st == DPM_ERR_CORRUPT && buf != NULL) {
        mbedtls_platform_zeroize(buf, len);
    }
    dpm_hpke_ctx_wipe(&ctx);
    return st;
}

/* The seal hook: SealBase with a fresh ephemeral key from the device's generator. */
static dpm_status_t seal_base(void *hook_ctx, const dpm_hpke_config_t *cfg, const dpm_rng_t *rng,
                              const uint8_t *info, size_t info_len, const dpm_span_t *aad,
                              size_t naad, uint8_t *buf, size_t len, uint8_t enc[DPM_HPKE_NENC],
                              uint8_t tag[DPM_HPKE_NT])
{
    (void)hook_ctx;
    if (rng == NULL || rng->fill == NULL || dpm_hpke_config_check(cfg, NULL) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    uint8_t ikm[DPM_HPKE_NSK];
    if (rng->fill(rng->ctx, ikm, sizeof(ikm)) != 0) {
        mbedtls_platform_zeroize(ikm, sizeof(ikm));
        return DPM_ERR_RNG;
    }
    dpm_hpke_ctx_t ctx;
    dpm_status_t st =
        dpm_hpke_setup_base_s(cfg->public_key, ikm, sizeof(ikm), info, info_len, enc, &ctx);
    if (st == DPM_OK) {
        st = dpm_hpke_ctx_seal(&ctx, aad, naad, buf, len, tag);
    }
    mbedtls_platform_zeroize(ikm, sizeof(ikm));
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
    uint8_t ikm[DPM_HPKE_NSK];
    if (rng->fill(rng->ctx, ikm, sizeof(ikm)) != 0) {
        mbedtls_platform_zeroize(ikm, sizeof(ikm));
        return DPM_ERR_RNG;
    }
    dpm_status_t st =
        dpm_hpke_setup_base_s(cfg->public_key, ikm, sizeof(ikm), info, info_len, e->enc, &e->ctx);
    mbedtls_platform_zeroize(ikm, sizeof(ikm));
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
