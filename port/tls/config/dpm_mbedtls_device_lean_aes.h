/* SPDX-License-Identifier: Apache-2.0 */
/* Mbed TLS 3.6 configuration for devices, lean profile with AES-128-GCM: the lean profile
 * (dpm_mbedtls_device_lean.h, read it first) with TLS_AES_128_GCM_SHA256, the suite that
 * RFC 8446 §9.1 makes mandatory, instead of TLS_CHACHA20_POLY1305_SHA256: for a collector that
 * offers no ChaCha20-Poly1305. It costs more flash (make size: default+lean_aes_tls against
 * default+lean_tls) and its table AES is not constant time in software (as in the device profile);
 * everything else is the lean profile's, the refusal of DPM_VDAF=1 included.
 *
 * Selected by the Kconfig choice DPM_TLS_LEAN_AES (Makefile: MBEDTLS_CONFIG=device_lean_aes).
 * Checked by tests/unit/test_mbedtls_lean_config.sh like the lean profile. */
#ifndef DPM_MBEDTLS_DEVICE_LEAN_AES_H
#define DPM_MBEDTLS_DEVICE_LEAN_AES_H

#include "dpm_mbedtls_device_lean.h"

#undef MBEDTLS_CHACHA20_C
#undef MBEDTLS_POLY1305_C
#undef MBEDTLS_CHACHAPOLY_C
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES
#define MBEDTLS_AES_FEWER_TABLES
#define MBEDTLS_GCM_C
#undef PSA_WANT_ALG_CHACHA20_POLY1305 /* PSA's list (the lean profile's): the AEAD swapped */
#undef PSA_WANT_KEY_TYPE_CHACHA20
#define PSA_WANT_ALG_GCM 1
#define PSA_WANT_KEY_TYPE_AES 1
#undef MBEDTLS_SSL_CIPHERSUITES
#define MBEDTLS_SSL_CIPHERSUITES MBEDTLS_TLS1_3_AES_128_GCM_SHA256

#endif /* DPM_MBEDTLS_DEVICE_LEAN_AES_H */
