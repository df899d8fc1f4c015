/* SPDX-License-Identifier: Apache-2.0 */
/* Constant-time check of the two-aggregator code where measurements, shares and keys flow, in
 * the style of ct_noise.c (valgrind memcheck with the secret's bits marked undefined: every
 * conditional jump and every memory address that depends on them is reported):
 *
 *   ct_dap measure   dpm_dap_measurement_check over every Prio3 variant, the measurement's
 *                    every bit secret (its verdict, the returned status, is declassified by
 *                    the one line that turns it into a status)
 *   ct_dap seal      the device's HPKE seal (port/tls/hpke.c over Mbed TLS: X25519 by
 *                    port/tls/x25519_64.h on this host, by Everest when built with
 *                    -DDPM_X25519_PORTABLE, HKDF-SHA256, AES-128-GCM by port/tls/gcm_x86.h on
 *                    this host, by Mbed TLS with -DDPM_GCM_PORTABLE, and ChaCha20-Poly1305) of a
 *                    secret input share with a secret ephemeral key (the random bytes it draws);
 *                    the output (enc, ciphertext, tag) is public by design and declassified
 *                    after the call
 *   ct_dap open      the aggregator's open with a secret private key, of a ciphertext that
 *                    authenticates; its plaintext is declassified after the call
 *   ct_dap neg_branch | neg_table   negative controls: a branch on a share byte and a table
 *                    lookup indexed by one must each be reported
 *
 * Places that look at secret-derived data by design are marked DPM_CT_DECLASSIFY in the source
 * (the measurement check's verdict in sdk/src/report/dap.c; in port/tls/hpke.c the AEAD's
 * verdict, whether a ciphertext authenticates, and whether an X25519 result is all zero, an
 * abort that is public); test_constant_time.sh builds this program with the mark defined to
 * VALGRIND_MAKE_MEM_DEFINED and counts the marks. With Everest (DPM_X25519_PORTABLE) the
 * all-zero check is in Mbed TLS itself, a memcmp in mbedtls_x25519_calc_secret, suppressed for
 * that function alone by tests/ct/everest.supp. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "dpm/expert/dap.h"
#include "dpm/port_hpke.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/vdaf.h"

#define ROUNDS 40

static void secret(void *p, size_t len)
{
    (void)VALGRIND_MAKE_MEM_UNDEFINED(p, len);
}

static void must(dpm_status_t st, const char *what)
{
    if (st != DPM_OK) {
        fprintf(stderr, "ct_dap: %s: %s\n", what, dpm_strerror(st));
        exit(1);
    }
}

static volatile uint64_t sink;

static void run_measure(void)
{
    dpm_prio3_t v[5];
    must(dpm_prio3_count_init(&v[0], 2), "count");
    must(dpm_prio3_sum_init(&v[1], 2, 1000), "sum");
    must(dpm_prio3_sumvec_init(&v[2], 2, 48, 255, 26), "sumvec");
    must(dpm_prio3_histogram_init(&v[3], 2, 16, 4), "histogram");
    must(dpm_prio3_multihot_init(&v[4], 2, 10, 3, 4), "multihot");
    for (int k = 0; k < 5; k++) {
        for (int r = 0; r < ROUNDS; r++) {
            uint64_t m[48];
            size_t n =
                v[k].kind == DPM_PRIO3_SUMVEC || v[k].kind == DPM_PRIO3_MULTIHOT ? v[k].length : 1;
            for (size_t i = 0; i < n; i++) { /* valid and invalid values alike */
                m[i] = (uint64_t)((r * 131 + (int)i * 7) %
                                  (v[k].kind == DPM_PRIO3_MULTIHOT ? 2 : 300));
            }
            secret(m, n * sizeof(m[0]));
            dpm_status_t st = dpm_dap_measurement_check(&v[k], m, n);
            VALGRIND_MAKE_MEM_DEFINED(&st, sizeof(st)); /* the verdict is public */
            sink += (uint64_t)(st == DPM_OK);
        }
    }
}

/* A random source handing out secret bytes: the ephemeral key's seed. */
static int secret_fill(void *ctx, uint8_t *out, size_t len)
{
    uint64_t *s = ctx;
    for (size_t i = 0; i < len; i++) {
        *s = *s * 6364136223846793005u + 1442695040888963407u;
        out[i] = (uint8_t)(*s >> 56);
    }
    secret(out, len);
    return 0;
}

static void config(dpm_hpke_keypair_t *kp, dpm_hpke_config_t *c, uint16_t aead_id)
{
    uint8_t ikm[32] = {7, 1, 2};
    must(dpm_hpke_derive_keypair(ikm, sizeof(ikm), kp), "derive");
    memset(c, 0, sizeof(*c));
    c->id = 1;
    c->kem_id = DPM_HPKE_KEM_X25519_SHA256;
    c->kdf_id = DPM_HPKE_KDF_HKDF_SHA256;
    c->aead_id = aead_id;
    memcpy(c->public_key, kp->pk, 32);
}

static void seal_one(uint64_t *state, const dpm_hpke_config_t *c, uint8_t *buf, size_t len,
                     uint8_t enc[32], uint8_t tag[16])
{
    static const uint8_t info[DPM_DAP_INFO_BYTES] = {'d', 'a', 'p'};
    static const uint8_t aad_bytes[100] = {1, 2, 3};
    const dpm_span_t aad[2] = {{aad_bytes, 60}, {aad_bytes + 60, 40}};
    dpm_rng_t rng = {secret_fill, state};
    dpm_hpke_sealer_t s = dpm_hpke_sealer();
    must(s.seal(s.ctx, c, &rng, info, sizeof(info), aad, 2, buf, len, enc, tag), "seal");
    VALGRIND_MAKE_MEM_DEFINED(buf, len);
    VALGRIND_MAKE_MEM_DEFINED(enc, 32);
    VALGRIND_MAKE_MEM_DEFINED(tag, 16);
}

static const uint16_t AEADS[2] = {DPM_HPKE_AEAD_AES_128_GCM, DPM_HPKE_AEAD_CHACHA20_POLY1305};

static void run_seal(void)
{
    dpm_hpke_keypair_t kp;
    dpm_hpke_config_t c;
    uint64_t state = 1;
    for (int r = 0; r < 8; r++) {
        config(&kp, &c, AEADS[r % 2]);
        uint8_t share[700], enc[32], tag[16];
        for (size_t i = 0; i < sizeof(share); i++) {
            share[i] = (uint8_t)(i * 13 + (size_t)r);
        }
        secret(share, sizeof(share)); /* the input share (and its DAP framing) */
        seal_one(&state, &c, share, sizeof(share) - (size_t)r * 17, enc, tag);
        sink += share[0] + enc[0] + tag[0];
    }
}

static void run_open(void)
{
    dpm_hpke_keypair_t kp;
    dpm_hpke_config_t c;
    uint64_t state = 2;
    static const uint8_t info[DPM_DAP_INFO_BYTES] = {'d', 'a', 'p'};
    static const uint8_t aad_bytes[100] = {1, 2, 3};
    const dpm_span_t aad[2] = {{aad_bytes, 60}, {aad_bytes + 60, 40}};
    for (int r = 0; r < 8; r++) {
        config(&kp, &c, AEADS[r % 2]);
        uint8_t buf[500], enc[32], tag[16];
        memset(buf, r, sizeof(buf));
        seal_one(&state, &c, buf, sizeof(buf), enc, tag);
        dpm_hpke_keypair_t k = kp;
        secret(k.sk, sizeof(k.sk)); /* the aggregator's private key */
        dpm_status_t st = dpm_hpke_open_base(c.aead_id, enc, &k, info, sizeof(info), aad, 2, buf,
                                             sizeof(buf), tag);
        VALGRIND_MAKE_MEM_DEFINED(&st, sizeof(st));
        must(st, "open");
        VALGRIND_MAKE_MEM_DEFINED(buf, sizeof(buf));
        sink += buf[0];
    }
}

static __attribute__((noinline)) void leak_branch(const uint8_t *share)
{
    if (share[3] & 1u) {
        sink += 3;
    }
}

static const uint8_t table[256] = {1, 2, 3};
static __attribute__((noinline)) void leak_table(const uint8_t *share)
{
    sink += table[share[5]];
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ct_dap measure|seal|open|neg_branch|neg_table\n");
        return 2;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "measure") == 0) {
        run_measure();
    } else if (strcmp(mode, "seal") == 0) {
        run_seal();
    } else if (strcmp(mode, "open") == 0) {
        run_open();
    } else if (strcmp(mode, "neg_branch") == 0 || strcmp(mode, "neg_table") == 0) {
        uint8_t share[16] = {0};
        secret(share, sizeof(share));
        (mode[4] == 'b' ? leak_branch : leak_table)(share);
    } else {
        return 2;
    }
    printf("ct_dap %s: done (%llu)\n", mode, (unsigned long long)sink);
    return 0;
}
