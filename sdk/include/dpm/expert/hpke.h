/* SPDX-License-Identifier: Apache-2.0 */
/* HPKE (RFC 9180) as the SDK sees it: an aggregator's HPKE configuration (DAP's HpkeConfig:
 * an id, the three algorithm ids and the public key), its wire encoding, and the seal hook.
 *
 * Where HPKE lives. The SDK (libdpm) builds without Mbed TLS, and keeps doing so: sealing is a
 * port hook, like the random source and the storage, so libdpm only calls a function pointer.
 * port/tls/hpke.c implements it over Mbed TLS 3.6 (dpm/port_hpke.h: X25519 by Everest,
 * HKDF-SHA256, AES-128-GCM) together with the aggregator side (open); a platform with its own
 * crypto (a secure element, PSA drivers) supplies its own seal with the same contract.
 *
 * Suites. DHKEM(X25519, HKDF-SHA256) 0x0020 and HKDF-SHA256 0x0001, base mode (mode 0), with
 * either AEAD:
 *   AES-128-GCM 0x0001        the suite DAP requires every participant to implement (the DAP
 *                             draft's "Compliance Requirements"): every aggregator offers it;
 *   ChaCha20-Poly1305 0x0003  RFC 9180's other AEAD, for an aggregator that offers it too: on a
 *                             core without AES instructions (Cortex-M) it seals a DAP report in
 *                             less than half the instructions of AES-128-GCM, and it is
 *                             constant time by construction (no tables indexed by data).
 * A configuration naming anything else is refused as unknown (DPM_ERR_UNSUPPORTED), never
 * used. */
#ifndef DPM_HPKE_H
#define DPM_HPKE_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/port.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_HPKE_KEM_X25519_SHA256 0x0020u /* DHKEM(X25519, HKDF-SHA256) */
#define DPM_HPKE_KDF_HKDF_SHA256 0x0001u
#define DPM_HPKE_AEAD_AES_128_GCM 0x0001u
#define DPM_HPKE_AEAD_CHACHA20_POLY1305 0x0003u
#define DPM_HPKE_NENC 32u /* encapsulated key (the ephemeral X25519 public key) */
#define DPM_HPKE_NPK 32u  /* public key */
#define DPM_HPKE_NSK 32u  /* private key */
#define DPM_HPKE_NT 16u   /* AEAD tag */
/* Longest `info` a seal or open accepts (DAP's is 20 bytes: "dap-18 input share" 0x01 role). */
#define DPM_HPKE_MAX_INFO 64u
/* Bytes of one encoded HpkeConfig of the supported suite: id (1), kem, kdf, aead (2 each),
 * public_key<1..2^16-1> (2 + 32). */
#define DPM_HPKE_CONFIG_BYTES (1u + 6u + 2u + DPM_HPKE_NPK)

/* An aggregator's HPKE configuration (DAP HpkeConfig) of the supported suite. */
typedef struct {
    uint8_t id; /* HpkeConfigId: names the key in HpkeCiphertext.config_id */
    uint16_t kem_id, kdf_id, aead_id;
    uint8_t public_key[DPM_HPKE_NPK];
} dpm_hpke_config_t;

/* One piece of a byte string given in pieces (HPKE's associated data: DAP's InputShareAad is
 * four fields the device already holds in different places). */
typedef struct {
    const uint8_t *p;
    size_t len;
} dpm_span_t;

/* DPM_OK if *cfg names a supported suite with a usable public key. DPM_ERR_UNSUPPORTED for
 * another KEM, KDF or AEAD (with *reason naming which); DPM_ERR_PARAM for NULL or an all-zero
 * public key (X25519's identity: every shared secret would be zero). */
dpm_status_t dpm_hpke_config_check(const dpm_hpke_config_t *cfg, const char **reason);

/* Decode one HpkeConfig from bytes[0, len), exactly (no bytes may follow). Returns DPM_OK;
 * DPM_ERR_PROTOCOL for a malformed encoding (short, long, a public key length other than the
 * suite's), DPM_ERR_UNSUPPORTED for another suite (dpm_hpke_config_check), DPM_ERR_PARAM for
 * NULL. *cfg untouched on error; *reason (if not NULL) names the cause. */
dpm_status_t dpm_hpke_config_decode(const uint8_t *bytes, size_t len, dpm_hpke_config_t *cfg,
                                    const char **reason);

/* Pick from an HpkeConfigList (what GET {aggregator}/hpke_config returns: HpkeConfig
 * HpkeConfigList<10..2^16-1>, in the aggregator's decreasing order of preference) a
 * configuration of a supported suite: the first one whose AEAD is prefer_aead if the list has
 * one, else the first supported one (prefer_aead 0: the aggregator's order alone). A device
 * without AES instructions passes DPM_HPKE_AEAD_CHACHA20_POLY1305 (see the suites above) and
 * still works with an aggregator that offers only AES-128-GCM. Every entry is parsed,
 * supported or not; the list must be well formed to its end and no two entries may share an
 * id (DAP requires distinct ids). DPM_ERR_PROTOCOL for a malformed list, DPM_ERR_UNSUPPORTED
 * when no entry is of a supported suite (DAP: the client must abort), DPM_ERR_PARAM for NULL.
 * *cfg untouched on error. */
dpm_status_t dpm_hpke_config_list_select(const uint8_t *bytes, size_t len, uint16_t prefer_aead,
                                         dpm_hpke_config_t *cfg, const char **reason);

/* Encode *cfg as an HpkeConfig into out (DPM_HPKE_CONFIG_BYTES). DPM_ERR_BUFFER if cap is
 * too small, DPM_ERR_PARAM for NULL; *len = bytes written. */
dpm_status_t dpm_hpke_config_encode(const dpm_hpke_config_t *cfg, uint8_t *out, size_t cap,
                                    size_t *len);

/* The seal hook: SealBase(pkR, info, aad, pt) of RFC 9180 §6.1 for the configuration cfg
 * (already checked with dpm_hpke_config_check), with the ephemeral key drawn from rng (the
 * device's CSPRNG: DeriveKeyPair(DPM_HPKE_NSK random bytes), as RFC 9180 §4 allows for
 * GenerateKeyPair). The associated data is the concatenation of aad[0 .. naad). The
 * plaintext buf[0, len) is encrypted IN PLACE; enc receives the encapsulated key and tag the
 * AEAD tag (the RFC's ct is buf[0, len) followed by tag). Returns DPM_OK, or: DPM_ERR_RNG (rng
 * failed), DPM_ERR_PARAM (bad arguments, info longer than DPM_HPKE_MAX_INFO, a public key
 * whose shared secret is zero), DPM_ERR_UNSUPPORTED (the implementation lacks the suite),
 * DPM_ERR_BUFFER (the crypto library's memory, e.g. Mbed TLS's arena, is exhausted). On error
 * buf, enc and tag are unspecified (the caller discards them). Secrets (the ephemeral key, the
 * shared secret, the AEAD key) are wiped before it returns. Must not keep pointers. */
typedef dpm_status_t (*dpm_hpke_seal_fn)(void *ctx, const dpm_hpke_config_t *cfg,
                                         const dpm_rng_t *rng, const uint8_t *info, size_t info_len,
                                         const dpm_span_t *aad, size_t naad, uint8_t *buf,
                                         size_t len, uint8_t enc[DPM_HPKE_NENC],
                                         uint8_t tag[DPM_HPKE_NT]);

typedef struct {
    dpm_hpke_seal_fn seal;
    void *ctx;
} dpm_hpke_sealer_t;

#ifdef __cplusplus
}
#endif

#endif /* DPM_HPKE_H */
