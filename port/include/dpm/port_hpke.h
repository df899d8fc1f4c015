/* SPDX-License-Identifier: Apache-2.0 */
/* HPKE (RFC 9180), base mode, suites DHKEM(X25519, HKDF-SHA256) / HKDF-SHA256 / AES-128-GCM
 * or ChaCha20-Poly1305 (dpm/expert/hpke.h), over Mbed TLS 3.6 (port/tls/hpke.c): the device's seal
 * hook and the aggregator's open, with the RFC's intermediate steps exposed so that the test
 * vectors of its Appendix A (A.1.1 and A.2.1) are checked step by step (tests/vectors/hpke/).
 *
 * Primitives: X25519 from Mbed TLS's Everest variant (MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED,
 * formally verified, constant time, no heap), HKDF-SHA256 (mbedtls_hkdf), AES-128-GCM
 * (mbedtls_gcm) and ChaCha20-Poly1305 (mbedtls_chachapoly): what the TLS client links anyway.
 * Without Everest in the Mbed TLS configuration every call here returns DPM_ERR_UNSUPPORTED
 * (the project's configs enable it, port/tls/config/).
 *
 * Memory: HKDF and GCM allocate small blocks through Mbed TLS's allocator, so on a device
 * dpm_tls_use_arena() must have run (dpm/port_tls.h); DPM_ERR_BUFFER when it is exhausted.
 * Stack: under 1 KB (the GCM context is the largest item).
 *
 * Secrets: every function wipes the secrets it derived (shared secret, PRKs, ephemeral key)
 * before returning; a dpm_hpke_ctx_t holds the AEAD key and the exporter secret until
 * dpm_hpke_ctx_wipe. Errors never say more than "failed" about secret data: an open that
 * fails authentication zeroes its output. */
#ifndef DPM_PORT_HPKE_H
#define DPM_PORT_HPKE_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/hpke.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_HPKE_NSECRET 32u /* KEM shared secret */
#define DPM_HPKE_NK_MAX 32u  /* the longest AEAD key (ChaCha20-Poly1305; AES-128-GCM: 16) */
#define DPM_HPKE_NN 12u      /* the AEAD nonce, both AEADs */
#define DPM_HPKE_NH 32u      /* HKDF-SHA256 output */

/* A key pair of the suite (an aggregator's; the public key is what its HpkeConfig carries). */
typedef struct {
    uint8_t sk[DPM_HPKE_NSK];
    uint8_t pk[DPM_HPKE_NPK];
} dpm_hpke_keypair_t;

/* Nk, the key length of an AEAD (16 or 32), or 0 for an AEAD this code does not have. */
size_t dpm_hpke_aead_nk(uint16_t aead_id);

/* An encryption context (RFC 9180 §5.2): the AEAD and its key (the first Nk bytes of key),
 * base nonce and sequence number, and the exporter secret. One sender context seals, one
 * receiver context opens, in the same order (the nonce is base_nonce XOR seq). */
typedef struct {
    uint16_t aead_id;
    uint8_t key[DPM_HPKE_NK_MAX];
    uint8_t base_nonce[DPM_HPKE_NN];
    uint8_t exporter_secret[DPM_HPKE_NH];
    uint64_t seq;
} dpm_hpke_ctx_t;

/* DeriveKeyPair(ikm) of DHKEM(X25519, HKDF-SHA256) (RFC 9180 §7.1.3): sk = LabeledExpand(
 * LabeledExtract("", "dkp_prk", ikm), "sk", "", 32), pk = X25519(sk, 9). ikm: 32 .. 64 bytes
 * (RFC: at least Nsk bytes of entropy). DPM_ERR_PARAM for NULL or a bad length. */
dpm_status_t dpm_hpke_derive_keypair(const uint8_t *ikm, size_t ikm_len, dpm_hpke_keypair_t *kp);

/* Encap(pkR) with the ephemeral key pair DeriveKeyPair(ikm_e): enc and the KEM shared secret.
 * DPM_ERR_PARAM also when the X25519 result is all zero (pkR of small order). */
dpm_status_t dpm_hpke_encap(const uint8_t pk_r[DPM_HPKE_NPK], const uint8_t *ikm_e,
                            size_t ikm_e_len, uint8_t enc[DPM_HPKE_NENC],
                            uint8_t shared_secret[DPM_HPKE_NSECRET]);

/* Decap(enc, skR) with the recipient's key pair (its public key is part of the KEM context).
 * DPM_ERR_CORRUPT when the X25519 result is all zero (an enc of small order). */
dpm_status_t dpm_hpke_decap(const uint8_t enc[DPM_HPKE_NENC], const dpm_hpke_keypair_t *kp_r,
                            uint8_t shared_secret[DPM_HPKE_NSECRET]);

/* KeySchedule(mode_base, shared_secret, info, "", "") (RFC 9180 §5.1) of the suite with AEAD
 * aead_id: *ctx with seq 0, and (if key_schedule_context is not NULL) the 65-byte
 * key_schedule_context the vectors list. info_len <= DPM_HPKE_MAX_INFO. DPM_ERR_UNSUPPORTED
 * for an AEAD other than dpm/expert/hpke.h's two (*ctx untouched then, and on DPM_ERR_PARAM); after
 * a failure of the derivation itself *ctx is zeroed. */
dpm_status_t dpm_hpke_key_schedule(uint16_t aead_id, const uint8_t shared_secret[DPM_HPKE_NSECRET],
                                   const uint8_t *info, size_t info_len, dpm_hpke_ctx_t *ctx,
                                   uint8_t key_schedule_context[1u + 2u * DPM_HPKE_NH]);

/* SetupBaseS / SetupBaseR: the two steps above. */
dpm_status_t dpm_hpke_setup_base_s(uint16_t aead_id, const uint8_t pk_r[DPM_HPKE_NPK],
                                   const uint8_t *ikm_e, size_t ikm_e_len, const uint8_t *info,
                                   size_t info_len, uint8_t enc[DPM_HPKE_NENC],
                                   dpm_hpke_ctx_t *ctx);
dpm_status_t dpm_hpke_setup_base_r(uint16_t aead_id, const uint8_t enc[DPM_HPKE_NENC],
                                   const dpm_hpke_keypair_t *kp_r, const uint8_t *info,
                                   size_t info_len, dpm_hpke_ctx_t *ctx);

/* ContextS.Seal(aad, pt): encrypts buf[0, len) in place and writes the tag; the associated
 * data is aad[0] || ... || aad[naad - 1]. Then seq + 1. DPM_ERR_RANGE if seq would overflow
 * (2^64 - 1 messages: unreachable in practice). */
dpm_status_t dpm_hpke_ctx_seal(dpm_hpke_ctx_t *ctx, const dpm_span_t *aad, size_t naad,
                               uint8_t *buf, size_t len, uint8_t tag[DPM_HPKE_NT]);

/* ContextR.Open(aad, ct): ct = buf[0, len) || tag. Decrypts buf in place and returns DPM_OK
 * (then seq + 1), or DPM_ERR_CORRUPT with buf zeroed and seq unchanged when the tag does not
 * authenticate (a wrong key, ciphertext, tag or associated data). */
dpm_status_t dpm_hpke_ctx_open(dpm_hpke_ctx_t *ctx, const dpm_span_t *aad, size_t naad,
                               uint8_t *buf, size_t len, const uint8_t tag[DPM_HPKE_NT]);

/* Context.Export(exporter_context, L): out[0, out_len), out_len <= 255 * 32,
 * exporter_context_len <= DPM_HPKE_MAX_INFO. */
dpm_status_t dpm_hpke_ctx_export(const dpm_hpke_ctx_t *ctx, const uint8_t *exporter_context,
                                 size_t exporter_context_len, uint8_t *out, size_t out_len);

/* Wipe a context's secrets. */
void dpm_hpke_ctx_wipe(dpm_hpke_ctx_t *ctx);

/* OpenBase(enc, skR, info, aad, ct) single shot with the suite of AEAD aead_id, ct = buf[0,
 * len) || tag, in place: the aggregator's side of a DAP input share. DPM_ERR_CORRUPT for any
 * ciphertext that does not open (buf zeroed). */
dpm_status_t dpm_hpke_open_base(uint16_t aead_id, const uint8_t enc[DPM_HPKE_NENC],
                                const dpm_hpke_keypair_t *kp_r, const uint8_t *info,
                                size_t info_len, const dpm_span_t *aad, size_t naad, uint8_t *buf,
                                size_t len, const uint8_t tag[DPM_HPKE_NT]);

/* The device's seal hook (dpm/expert/hpke.h): SealBase with the ephemeral key DeriveKeyPair(32
 * bytes from the rng). Stateless (ctx NULL). */
dpm_hpke_sealer_t dpm_hpke_sealer(void);

/* ---- encapsulation ahead of time -------------------------------------------------------------
 * SealBase is SetupBaseS (the KEM: two X25519 and the key schedule, 87 % of a device's report
 * cost) followed by one Seal; SetupBaseS depends only on the recipient's key and `info`, not on
 * the message. A pool runs it ahead, when the device is idle (dpm_hpke_pool_fill), and the
 * pool's seal hook then only encrypts: it takes a ready context made for the same configuration
 * and info, seals with it once (sequence number 0, exactly as SealBase) and wipes it. With no
 * matching context it runs SetupBaseS itself (the report never waits or fails for lack of
 * one), and counts the miss. The ciphertexts are SealBase's, bit for bit (a test checks it on
 * RFC 9180's vectors). What changes: each context's AEAD key lives in RAM from its fill to its
 * use (as the measurement itself does), never beyond one message. */
typedef struct {
    dpm_hpke_config_t cfg; /* the recipient it was made for */
    uint8_t info[DPM_HPKE_MAX_INFO];
    uint8_t info_len;
    uint8_t ready;
    uint8_t enc[DPM_HPKE_NENC];
    dpm_hpke_ctx_t ctx;
} dpm_hpke_encap_t;

typedef struct {
    dpm_hpke_encap_t *slots; /* the caller's array, nslots entries */
    size_t nslots;
    uint32_t used;   /* seals served from a ready context */
    uint32_t missed; /* seals that found none and encapsulated inline */
} dpm_hpke_pool_t;

/* Bind a pool to slots[0 .. nslots) (all emptied). DPM_ERR_PARAM for NULL or nslots 0. */
dpm_status_t dpm_hpke_pool_init(dpm_hpke_pool_t *p, dpm_hpke_encap_t *slots, size_t nslots);

/* SetupBaseS for (cfg, info) now, into a free slot, with the ephemeral key DeriveKeyPair(32
 * bytes from rng). DPM_ERR_BUFFER if no slot is free (the pool is full: nothing drawn), the
 * errors of the seal hook otherwise. */
dpm_status_t dpm_hpke_pool_fill(dpm_hpke_pool_t *p, const dpm_hpke_config_t *cfg,
                                const uint8_t *info, size_t info_len, const dpm_rng_t *rng);

/* Ready contexts for (cfg, info) in the pool. */
size_t dpm_hpke_pool_ready(const dpm_hpke_pool_t *p, const dpm_hpke_config_t *cfg,
                           const uint8_t *info, size_t info_len);

/* Empty every slot (wipes the contexts), e.g. when an aggregator's key changes. */
void dpm_hpke_pool_clear(dpm_hpke_pool_t *p);

/* The seal hook over pool p (p must outlive it): see above. */
dpm_hpke_sealer_t dpm_hpke_pool_sealer(dpm_hpke_pool_t *p);

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_HPKE_H */
