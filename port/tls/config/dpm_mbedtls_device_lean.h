/* SPDX-License-Identifier: Apache-2.0 */
/* Mbed TLS 3.6 configuration for devices, lean profile (issue 32): the device profile
 * (dpm_mbedtls_device.h, read it first) minus everything a TLS 1.3 client with an ECDSA P-256
 * PKI does not need:
 *
 *   TLS 1.3 only, client only, certificate-authenticated server (TLS 1.2 is not compiled in:
 *                a server that offers only TLS 1.2 is refused with protocol_version)
 *   key exchange  ECDHE on secp256r1 (P-256) only: no X25519
 *   record        TLS_CHACHA20_POLY1305_SHA256 only: no AES, no GCM. ChaCha20 is constant time
 *                in software (a table AES is not) and, with Poly1305, smaller on a Cortex-M4
 *                than AES + GCM (measured by make size: see the README's TLS section)
 *   hashes        SHA-256 only
 *   X.509         ECDSA P-256 signatures only: no RSA (a chain with an RSA CA or an RSA server
 *                key fails verification); client certificates (ECDSA P-256) still work
 *   randomness    HMAC_DRBG (SHA-256) for PSA: CTR_DRBG needs AES
 *   encoding      DER only: no PEM (and no base64). port/tls refuses a PEM CA, client
 *                certificate or key (DPM_ERR_PARAM; dpm_tls_reason says how to convert it):
 *                give DER, made with `openssl x509 -outform der` (certificates) and
 *                `openssl pkey -outform der` (keys)
 *
 * Who may use it: the collector must speak TLS 1.3 with TLS_CHACHA20_POLY1305_SHA256 (OpenSSL,
 * BoringSSL, Go, rustls and Mbed TLS servers do by default) and present a P-256 ECDSA chain
 * signed with ECDSA-SHA256.
 *
 * Not for the two-aggregator mode: its HPKE (port/tls/hpke.c) needs X25519 and AES-128-GCM,
 * which this profile drops (the _aes variant keeps AES-GCM only); a build with DPM_VDAF=1
 * stops below with the reason.
 *
 * Selected by the Kconfig choice DPM_TLS_LEAN (Makefile: MBEDTLS_CONFIG=device_lean). Checked
 * by tests/unit/test_mbedtls_lean_config.sh (real sessions against openssl s_server, with a
 * client certificate, and refusals of a TLS 1.2-only and an RSA server); its flash by make
 * size (the default+lean_tls build, budget 120 KiB). */
#ifndef DPM_MBEDTLS_DEVICE_LEAN_H
#define DPM_MBEDTLS_DEVICE_LEAN_H

#if defined(DPM_VDAF) && DPM_VDAF
#error                                                                                             \
    "the lean TLS profiles (dpm_mbedtls_device_lean*.h) have no X25519, which the two-aggregator mode's HPKE needs: build with DPM_VDAF=0, or with the device TLS profile (MBEDTLS_CONFIG=device, Kconfig DPM_TLS_DEVICE)"
#endif

#include "dpm_mbedtls_device.h"

/* ---- TLS: 1.3 only, one suite (dpm_mbedtls_device_lean_aes.h: AES-128-GCM instead) ---- */
#undef MBEDTLS_SSL_PROTO_TLS1_2
#undef MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED /* TLS 1.2 key exchanges */
#undef MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#undef MBEDTLS_SSL_EXTENDED_MASTER_SECRET /* TLS 1.2 only */
#undef MBEDTLS_SSL_CIPHERSUITES
#define MBEDTLS_SSL_CIPHERSUITES MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256

/* ---- public key: P-256 ECDSA/ECDHE only --------------------------------------------------- */
#undef MBEDTLS_X509_RSASSA_PSS_SUPPORT
#undef MBEDTLS_RSA_C
#undef MBEDTLS_PKCS1_V15
#undef MBEDTLS_PKCS1_V21
#undef MBEDTLS_MPI_MAX_SIZE /* the device profile's 512 is for RSA-4096; P-256 needs 32 */
#define MBEDTLS_MPI_MAX_SIZE 32
#undef MBEDTLS_ECP_DP_CURVE25519_ENABLED
#undef MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED

/* ---- symmetric and hashes: ChaCha20-Poly1305 and SHA-256 ---------------------------------- */
#undef MBEDTLS_AES_C
#undef MBEDTLS_AES_ROM_TABLES
#undef MBEDTLS_AES_FEWER_TABLES
#undef MBEDTLS_GCM_C
#undef MBEDTLS_SHA384_C
#undef MBEDTLS_SHA512_SMALLER

/* ---- X.509: DER only (the pins are fixed at build time: convert them once, not on every
 * device; PEM's reader and base64 also pull in the C library's strstr) ---------------------- */
#undef MBEDTLS_PEM_PARSE_C
#undef MBEDTLS_BASE64_C

/* ---- PSA: what a TLS 1.3 client asks of it, listed -------------------------------------------
 * Without MBEDTLS_PSA_CRYPTO_CONFIG, Mbed TLS infers PSA's algorithms from the legacy options
 * (config_adjust_psa_from_legacy.h): MD_C alone brings TLS 1.2's PRF and PSK-to-MS, and with
 * them EC J-PAKE-to-PMS, password key types and the ChaCha20 stream cipher, which psa_crypto.c's
 * key derivation and key checks dispatch on, so they link although a TLS 1.3-only client never
 * asks for them. Here the list is explicit instead. PSA reads it from
 * MBEDTLS_PSA_CRYPTO_CONFIG_FILE, which names mbedtls/build_info.h, the header that includes it:
 * its guard makes that include empty, so the PSA_WANT_ lines below are the whole list and this
 * profile stays one file (plus the device one). The _aes variant swaps the AEAD. */
#define MBEDTLS_PSA_CRYPTO_CONFIG
#define MBEDTLS_PSA_CRYPTO_CONFIG_FILE "mbedtls/build_info.h"
#define PSA_WANT_ALG_SHA_256 1
#define PSA_WANT_ALG_HMAC 1 /* the TLS 1.3 key schedule: HKDF-Extract and -Expand */
#define PSA_WANT_KEY_TYPE_HMAC 1
#define PSA_WANT_ALG_HKDF_EXTRACT 1
#define PSA_WANT_ALG_HKDF_EXPAND 1
#define PSA_WANT_KEY_TYPE_DERIVE 1
#define PSA_WANT_KEY_TYPE_RAW_DATA 1
#define PSA_WANT_ALG_ECDH 1 /* ephemeral ECDHE on P-256 */
#define PSA_WANT_ALG_ECDSA 1
#define PSA_WANT_ECC_SECP_R1_256 1
#define PSA_WANT_KEY_TYPE_ECC_PUBLIC_KEY 1
#define PSA_WANT_KEY_TYPE_ECC_KEY_PAIR_BASIC 1
#define PSA_WANT_KEY_TYPE_ECC_KEY_PAIR_IMPORT 1
#define PSA_WANT_KEY_TYPE_ECC_KEY_PAIR_EXPORT 1
#define PSA_WANT_KEY_TYPE_ECC_KEY_PAIR_GENERATE 1
#define PSA_WANT_ALG_CHACHA20_POLY1305 1 /* the record protection */
#define PSA_WANT_KEY_TYPE_CHACHA20 1
#undef MBEDTLS_HKDF_C /* the device profile's way to PSA's HKDF parts, listed above instead */

/* ---- randomness: PSA's DRBG without AES ------------------------------------------------------ */
#undef MBEDTLS_CTR_DRBG_C
#define MBEDTLS_HMAC_DRBG_C

#endif /* DPM_MBEDTLS_DEVICE_LEAN_H */
