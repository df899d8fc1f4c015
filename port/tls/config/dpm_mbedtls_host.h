/* SPDX-License-Identifier: Apache-2.0 */
/* Mbed TLS configuration for host builds (collector, simulator, tests, posix port).
 *
 * The host wants everything the default 3.6 LTS configuration offers (TLS 1.3 and 1.2,
 * client and server, X.509, PSA crypto, AES-NI), so this file starts from Mbed TLS's own
 * default and states only the project's changes. Devices use dpm_mbedtls_device.h, a
 * minimal explicit list. */
#ifndef DPM_MBEDTLS_HOST_H
#define DPM_MBEDTLS_HOST_H

#include "mbedtls/mbedtls_config.h"

/* The device path takes Mbed TLS memory from a static arena; host tests exercise it. Here
 * calloc/free stay the system ones until a program installs the arena (dpm_tls_use_arena). */
#define MBEDTLS_MEMORY_BUFFER_ALLOC_C
#define MBEDTLS_PLATFORM_MEMORY
/* Peak/current arena use (mbedtls_memory_buffer_alloc_max_get, dpm_tls_arena_stats): the host
 * tests report the arena a TLS session really needs. Costs a few counters per allocation. */
#define MBEDTLS_MEMORY_DEBUG
/* Threads share one collector process: Mbed TLS must lock its shared state. */
#define MBEDTLS_THREADING_C
#define MBEDTLS_THREADING_PTHREAD
/* X25519 through Mbed TLS's verified Everest (HACL*) variant, as on devices: TLS's key exchange
 * here, and HPKE's (port/tls/hpke.c) where the compiler has no unsigned __int128 or with
 * DPM_X25519_PORTABLE (on this host HPKE runs port/tls/x25519_64.h); 70 us here against 570 us
 * with the generic ECP ladder. Folded into libmbedcrypto.a by .make/build-mbedtls.sh. */
#define MBEDTLS_ECDH_VARIANT_EVEREST_ENABLED

#endif /* DPM_MBEDTLS_HOST_H */
