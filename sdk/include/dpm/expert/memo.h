/* SPDX-License-Identifier: Apache-2.0 */
/* Memoized randomness: a persistent device secret and a keyed pseudo-random function, so that a
 * randomized decision about one example (fedauc_rr's label flip) is made once and then repeated
 * exactly, without storing one decision per example.
 *
 * The PRF is SipHash-2-4 (Aumasson and Bernstein, 2012), implemented in sdk/src/budget/memo.c
 * and checked against the 64 reference vectors (tests/unit/test_memo.c). Why this one:
 *  - it is a PRF, not just a hash: with a secret 128-bit key, its outputs on distinct inputs are
 *    indistinguishable from independent uniform 64-bit values to anyone without the key. A plain
 *    hash of the example id (SHA-256(id)) would not do: the server can compute it too, so it
 *    would know every flip and the randomized response would protect nothing;
 *  - it needs nothing from the platform: no Mbed TLS (which sdk/ may not use) and no new port
 *    hook, so every port, bare-metal ones included, has it, and dpm/port.h stays as it is;
 *  - integers only (64-bit additions, rotations and XORs), about 60 lines, no table lookups
 *    and no branch on the key or the data (its run time depends on the length alone).
 * A CSPRNG-based mechanism (every other one in the SDK) is already only computationally
 * private (CTR_DRBG is a PRF too); the memoized flips are private under the same kind of
 * assumption: that SipHash-2-4 is a PRF.
 *
 * The secret: 16 bytes drawn from the device CSPRNG the first time the region is opened, kept in
 * port storage (a region the app gives, disjoint from the ledger and the outbox), never sent
 * anywhere and never exposed by the API beyond the struct the app holds.
 *
 * Why one flip per example spends ε once (memoization): the flip of example x is a deterministic
 * function F(secret, x). Releasing something computed from it once is ε-label-DP (the flip is a
 * randomized response whose randomness is the secret); releasing it again gives the same value,
 * and any number of reports computed from the same flips are a function of those flips alone
 * (post-processing), so together they are still ε-DP for each example. Without memoization each
 * evaluation would draw fresh flips, and k reports would reveal k independent responses (kε, and
 * averaging them removes the noise). tests/stat/test_fedauc_privacy.c shows both: two reports of
 * the same examples stay within e^ε with the memo, and exceed it with fresh flips.
 *
 * If the secret leaks (storage read out, a debugger), every flip made with it can be recomputed:
 * all reports computed from it lose their protection, past and future (ε = ∞ for them). Keep the
 * region where the platform protects secrets (secure element, encrypted flash) when it can.
 * If the secret is lost or reset (storage damaged, erased, a factory reset), a new one is drawn:
 * the flips start over, and reports made after that compose with the earlier ones (each example
 * then spends ε once per secret). The ledger still bounds the total, because it charges every
 * report the campaign's ε whether or not the flips were memoized (dpm/expert/fedauc.h): the memo
 * makes the real loss smaller than the ledger's count, never larger.
 *
 * Storage layout (offset-based, little-endian), DPM_MEMO_RECORD_BYTES at the region's start:
 *   byte 0..3   magic "DPMS"
 *   byte 4      version, 1
 *   byte 5..7   reserved, 0
 *   byte 8..23  the 16-byte key
 *   byte 24..27 CRC-32 (IEEE, as zlib) of bytes 0..23
 * A record that fails its CRC is treated like an erased region (a new secret is drawn): a torn
 * write while creating it is told apart from later damage by nothing, and both are safe (above).
 *
 * Concurrency: one dpm_memo_t per region; opening is not safe against a concurrent open. */
#ifndef DPM_MEMO_H
#define DPM_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/campaign.h"
#include "dpm/expert/noise.h"
#include "dpm/port.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Load the secret from [offset, offset + size) of *st, or create it: 16 bytes from r (the device
 * CSPRNG), erase the region, write the record and read it back. size >= DPM_MEMO_MIN_REGION.
 * Returns DPM_OK (m->origin says which), DPM_ERR_PARAM for NULL, an unbound r, a storage without
 * read/write/erase or a region out of range; DPM_ERR_STORAGE if the port failed (the region may
 * then hold a torn record: the next open replaces it); the sticky DPM_ERR_RNG of r. *m is
 * untouched on error. The device's dpm_device_memo_open also checks that the region does not
 * overlap the ledger or the outbox. */
dpm_status_t dpm_memo_open(dpm_memo_t *m, const dpm_storage_t *st, uint32_t offset, uint32_t size,
                           dpm_rand_t *r);

/* SipHash-2-4 of msg[0, len) under the 16-byte key (the reference algorithm: the key and the
 * message read as little-endian 64-bit words, the 64-bit result). */
uint64_t dpm_siphash24(const uint8_t key[DPM_MEMO_KEY_BYTES], const uint8_t *msg, size_t len);

/* *out = SipHash-2-4 under the memo's secret. DPM_ERR_PARAM for NULL or an unopened m. */
dpm_status_t dpm_memo_prf(const dpm_memo_t *m, const uint8_t *msg, size_t len, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DPM_MEMO_H */
