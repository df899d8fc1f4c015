/* SPDX-License-Identifier: Apache-2.0 */
/* Mbed TLS 3.6 configuration for devices: a complete, explicit list (it does NOT include Mbed
 * TLS's default mbedtls_config.h). Everything port/tls needs for a TLS client, nothing else:
 *
 *   TLS 1.3 + TLS 1.2, client only, stream (no DTLS), certificate-authenticated server
 *   key exchange  ECDHE on secp256r1 (P-256) and X25519 (X25519 by Everest, see below)
 *   record        AES-128-GCM, ChaCha20-Poly1305 (+ AES-256-GCM-SHA384: no extra code)
 *   hashes        SHA-256, SHA-384
 *   HPKE          X25519 + HKDF-SHA256 + AES-128-GCM (port/tls/hpke.c): nothing extra but Everest
 *   X.509         PEM or DER parsing; ECDSA (P-256) and RSA (PKCS#1 v1.5, PSS; <= 4096 bits)
 *                 signatures, so an RSA-signed CA can be pinned
 *   randomness    CTR_DRBG; PSA Crypto (TLS 1.3 runs on it) with its own DRBG
 *   memory        MEMORY_BUFFER_ALLOC: all allocations from dpm_tls_use_arena()'s buffer
 *
 * Not included: file system (FS_IO, PSA storage), sockets (NET_C), threading, the timing
 * module (TIMING_C is only for DTLS timers), server side, PSK, renegotiation, session tickets
 * and resumption, DEBUG_C/ERROR_C strings, self tests.
 *
 * What the platform must provide:
 *   - int mbedtls_hardware_poll(void *data, unsigned char *out, size_t len, size_t *olen):
 *     the TRNG (MBEDTLS_ENTROPY_HARDWARE_ALT). It seeds PSA's internal DRBG, which makes the
 *     TLS 1.3 ephemeral ECDHE keys. (The TLS randoms and TLS 1.2 ECDHE use the dpm_rng_t given
 *     to dpm_tls_connect().)
 *   - libc memcpy/memset/strlen etc. No malloc: dpm_tls_use_arena() before any Mbed TLS use.
 *
 * Decisions (revisit per product):
 *   - No MBEDTLS_HAVE_TIME / MBEDTLS_HAVE_TIME_DATE: most devices have no trusted wall clock at
 *     boot, so certificate validity DATES ARE NOT CHECKED (chain, signature and host name are).
 *     Trust rests on the pinned project CA; rotate by replacing the pin. A device with a
 *     trusted RTC can add both options (and mbedtls_platform_gmtime_r if its libc lacks
 *     gmtime_r) to get expiry checks.
 *   - MBEDTLS_SSL_IN_CONTENT_LEN stays 16384: TLS 1.3 has no max_fragment_length (and
 *     record_size_limit is experimental in 3.6), so a standard server may send full 16 KiB
 *     records. OUT is 4096: the device only sends small reports.
 *   - Curves: add MBEDTLS_ECP_DP_SECP384R1_ENABLED if the pinned CA or server key is P-384
 *     (as in some public chains).
 *   - Entirely static PSA key store with 8 slots (a TLS 1.3 handshake holds at most a few
 *     keys at once); key material itself comes from the arena.
 *
 * Checked by tests/unit/test_mbedtls_device_config.sh: the library builds with this file
 * alone, port/tls links against it, and real TLS 1.3 and 1.2 handshakes against openssl
 * s_server work inside the arena. */
#ifndef DPM_MBEDTLS_DEVICE_H
#define DPM_MBEDTLS_DEVICE_H

/* ---- system -------------------------------------------------------------------------------- */
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_MEMORY_BUFFER_ALLOC_C
/* No default calloc/free: until dpm_tls_use_arena() runs, every Mbed TLS allocation fails
 * (returns NULL) instead of falling back to a system heap, and the libraries reference no
 * malloc/calloc/free at all (the device check verifies it with nm). Then the few libc
 * functions still used must be named explicitly. */
#define MBEDTLS_PLATFORM_NO_STD_FUNCTIONS
#define MBEDTLS_PLATFORM_STD_MEM_HDR <stdlib.h>  /* exit(): the arena's corruption check */
#define MBEDTLS_PLATFORM_SNPRINTF_MACRO snprintf /* OID/DN formatting */
#define MBEDTLS_NO_PLATFORM_ENTROPY
#define MBEDTLS_ENTROPY_HARDWARE_ALT
#define MBEDTLS_DEPRECATED_REMOVED

/* ---- TLS ------------------------------------------------------------------------------------ */
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_SSL_PROTO_TLS1_3
#define MBEDTLS_SSL_TLS1_3_KEY_EXCHANGE_MODE_EPHEMERAL_ENABLED
#define MBEDTLS_SSL_TLS1_3_COMPATIBILITY_MODE /* fake CCS: gets TLS 1.3 through middleboxes */
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#define MBEDTLS_SSL_KEEP_PEER_CERTIFICATE /* required by TLS 1.3 in 3.6 */
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET /* TLS 1.2: RFC 7627 */
#define MBEDTLS_SSL_ALL_ALERT_MESSAGES     /* tell the collector why we hung up */
#define MBEDTLS_SSL_IN_CONTENT_LEN 16384
#define MBEDTLS_SSL_OUT_CONTENT_LEN 4096
/* Preference order: TLS 1.3 suites, then TLS 1.2 ECDHE suites. */
#define MBEDTLS_SSL_CIPHERSUITES                                                                   \
    MBEDTLS_TLS1_3_AES_128_GCM_SHA256, MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256,                    \
        MBEDTLS_TLS1_3_AES_256_GCM_SHA384, MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,        \
        MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,                                     \
        MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,                                           \
        MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,                                             \
        MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,                                       \
        MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384

/* ---- X.509 ------------------------------------------------------------------------------- */
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C
#define MBEDTLS_X509_RSASSA_PSS_SUPPORT
#define MBEDTLS_X509_REMOVE_INFO /* no text dumps; port/tls has its own reasons */
#define MBEDTLS_PEM_PARSE_C      /* PEM pins; DER-only products drop it and BASE64_C (lean) */
#define MBEDTLS_BASE64_C
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_OID_C

/* ---- public key ------------------------------------------------------------------------------ */
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
/* X25519 through Mbed TLS's verified Everest (HACL*) variant: constant time by construction
 * and 2.6x fewer Cortex-M4 instructions than the generic ECP ladder (3.9 M against 10.2 M per
 * scalar multiplication, measured under QEMU); HPKE (port/tls/hpke.c, the two-aggregator
 * mode) needs it, TLS 1.2's X25519 ECDHE uses it too. Its objects are folded into
 * libmbedcrypto.a by .make/build-mbedtls.sh; its headers live in 3rdparty/everest/include. */
#define MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_PKCS1_V21
#define MBEDTLS_MPI_MAX_SIZE 512 /* RSA up to 4096 bits */
#define MBEDTLS_ECP_WINDOW_SIZE 2
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0

/* ---- symmetric and hashes ------------------------------------------------------------------- */
#define MBEDTLS_CIPHER_C
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES
#define MBEDTLS_AES_FEWER_TABLES
/* No AES decryption: GCM (TLS records both ways, HPKE seal and open) and CTR_DRBG only ever
 * run AES forward, and no CBC/ECB suite is enabled. Saves 2,472 bytes of Cortex-M4 flash
 * (make size's default+tls 166,672 -> 164,200; aes.c 5,100 -> 2,656 bytes: the inverse tables
 * and key schedule go) at no cost in time.
 * The speed knobs were measured for the two-aggregator seal and left as they are (2x24 SumVec
 * report, prepared, AES-128-GCM: 2,256,085 instructions, seal 815,256; README "Cost and
 * size"): without AES_FEWER_TABLES 2,279,086 (slower: register pressure) for +6,160 bytes;
 * GCM_LARGE_TABLE 2,163,683 but a 4,224-byte GCM context (report call stack 1,556 -> 5,404
 * bytes, target 2 KB); neither, nor both with aes.c at -O2 (2,148,723), reaches 2,000,000. */
#define MBEDTLS_BLOCK_CIPHER_NO_DECRYPT
#define MBEDTLS_GCM_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA256_SMALLER
#define MBEDTLS_SHA384_C
#define MBEDTLS_SHA512_SMALLER
#define MBEDTLS_HKDF_C /* gives PSA_WANT_ALG_HKDF_EXTRACT/EXPAND for the TLS 1.3 key schedule */

/* ---- randomness and PSA ------------------------------------------------------------------- */
#define MBEDTLS_ENTROPY_C
#define MBEDTLS_CTR_DRBG_C
/* Entropy, nonce and personalization of one (re)seed, at most: 128 instead of 384 sizes the
 * two largest frames of a reseed (block_cipher_df 832 -> 576, the reseed 408 -> 152 bytes on
 * Cortex-M4), which a device's report call carries when its RNG reseeds (make size). A seed
 * takes MBEDTLS_CTR_DRBG_ENTROPY_LEN bytes of entropy (48 with the SHA-512 accumulator, else 32)
 * and a nonce of half that (PSA's DRBG, dpm_cm_drbg): personalization strings up to 56 bytes
 * always fit; a longer one is refused by mbedtls_ctr_drbg_seed. */
#define MBEDTLS_CTR_DRBG_MAX_SEED_INPUT 128
#define MBEDTLS_PSA_CRYPTO_C
#define MBEDTLS_PSA_KEY_SLOT_COUNT 8

#endif /* DPM_MBEDTLS_DEVICE_H */
