/* SPDX-License-Identifier: Apache-2.0 */
/* Constant-time check of Prio3 (sdk/src/vdaf), in the style of ct_noise.c: under valgrind
 * memcheck the secret inputs' bits are marked undefined, so memcheck reports every branch and
 * every memory address that depends on them. Outputs that are public by design (the shares
 * sent to the aggregators, the verifier shares) are declassified after each call, before
 * anything looks at them.
 *
 *   ct_vdaf shard        the device: every variant, the measurement and the random bytes
 *                        secret (the seeds, hence the whole XOF state and every share)
 *   ct_vdaf verify       the aggregators: an input share (the leader's field vectors, a
 *                        helper's seed and blind) and the verification key secret
 *   ct_vdaf aggregate    an output share and the aggregate share secret
 *   ct_vdaf noise        an aggregator's central noise (dpm_prio3_add_noise): the noise values
 *                        (their signs and sizes) and the aggregate share secret
 *   ct_vdaf xof_aes      XofFixedKeyAes128 with a secret seed (AES-128 without tables)
 *   ct_vdaf neg_reduce   negative control: a modular reduction with a branch on the secret
 *   ct_vdaf neg_sbox     negative control: an AES S-box table indexed by the secret
 *
 * Decisions that look at secret-derived values and are public by design, accepted by
 * tests/unit/test_constant_time.sh at their source lines only (each says "declassified"): the
 * measurement's validity (prio3.c), the XOF's rejection of a candidate >= p (prio3_impl.h,
 * twice: it reveals only that discarded bytes were large), a received share that is no field
 * element, and the query point being a root of unity (probability below 2^-40). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/memcheck.h>

#include "dpm/expert/vdaf.h"
#include "test_rng.h"
#include "vdaf/vdaf_internal.h"

#define ROUNDS 12

static void secret(void *p, size_t len)
{
    VALGRIND_MAKE_MEM_UNDEFINED(p, len);
}

/* Only the bits in mask of each 64-bit word undefined (the bits a measurement's range uses). */
static void secret_bits(uint64_t *w, size_t n, uint64_t mask)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t vbits[8];
        for (int b = 0; b < 8; b++) {
            vbits[b] = (uint8_t)(mask >> (8 * b));
        }
        if (VALGRIND_SET_VBITS(&w[i], vbits, 8) != 1 && RUNNING_ON_VALGRIND) {
            fprintf(stderr, "ct_vdaf: VALGRIND_SET_VBITS failed\n");
            exit(2);
        }
    }
}

static void public_(const void *p, size_t len)
{
    VALGRIND_MAKE_MEM_DEFINED(p, len);
}

static void must(dpm_status_t st, const char *what)
{
    if (st != DPM_OK) { /* a status that depends on the secret is reported right here */
        fprintf(stderr, "ct_vdaf: %s: %s\n", what, dpm_strerror(st));
        exit(1);
    }
}

static uint64_t work[8192];
static uint8_t pub[512], leader[16384], helpers[512], rnd[1024], vshare[4096], state[4096];
static const uint8_t KEY[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
static const uint8_t CTX[] = "ct";

/* Every variant, with a shape that has padding calls and a last weight != 2^(bits-1). */
static int instance(int i, dpm_prio3_t *v)
{
    switch (i) {
    case 0: return dpm_prio3_count_init(v, 2) == DPM_OK;
    case 1: return dpm_prio3_sum_init(v, 3, 1337) == DPM_OK;
    case 2: return dpm_prio3_sumvec_init(v, 2, 48, 255, 26) == DPM_OK;
    case 3: return dpm_prio3_histogram_init(v, 2, 16, 3) == DPM_OK;
    case 4: return dpm_prio3_multihot_init(v, 2, 12, 5, 4) == DPM_OK;
    case 5: return dpm_prio3_sumvec_multiproof_init(v, 2, 2, 10, 255, 9) == DPM_OK;
    case 6: return dpm_prio3_higher_degree_init(v, 2) == DPM_OK;
    default: return 0;
    }
}

/* A valid measurement of round r and the mask of the bits that vary over the variant's range. */
static size_t measurement(const dpm_prio3_t *v, int r, uint64_t *m, uint64_t *mask)
{
    switch (v->kind) {
    case DPM_PRIO3_COUNT:
        m[0] = (uint64_t)r & 1u;
        *mask = 1;
        return 1;
    case DPM_PRIO3_SUM:
        m[0] = ((uint64_t)r * 211u) % 1338u;
        *mask = 0x7FF;
        return 1;
    case DPM_PRIO3_HISTOGRAM:
        m[0] = (uint64_t)r % 16u;
        *mask = 0xF;
        return 1;
    case DPM_PRIO3_HIGHER_DEGREE:
        m[0] = (uint64_t)r % 3u;
        *mask = 3;
        return 1;
    case DPM_PRIO3_MULTIHOT:
        for (uint32_t e = 0; e < v->length; e++) {
            m[e] = (e * 7u + (uint32_t)r) % 5u == 0; /* weight <= 3 */
        }
        *mask = 1;
        return v->length;
    default:
        for (uint32_t e = 0; e < v->length; e++) {
            m[e] = (e * 37u + (uint32_t)r * 101u) % 256u;
        }
        *mask = 0xFF;
        return v->length;
    }
}

static void shard(const dpm_prio3_t *v, const uint64_t *m, size_t count, uint8_t nonce0)
{
    uint8_t nonce[DPM_PRIO3_NONCE_BYTES];
    memset(nonce, nonce0, sizeof(nonce));
    const dpm_prio3_shard_out_t out = {pub,     sizeof(pub),    leader, sizeof(leader),
                                       helpers, sizeof(helpers)};
    must(dpm_prio3_shard(v, CTX, 2, m, count, nonce, rnd, v->rand_bytes, &out, work, 8192),
         "shard");
    public_(pub, sizeof(pub));
    public_(leader, sizeof(leader));
    public_(helpers, sizeof(helpers));
}

static void run_shard(void)
{
    test_rng_t t;
    test_rng_seed(&t, 1);
    for (int i = 0; i < 7; i++) {
        dpm_prio3_t v;
        if (!instance(i, &v)) {
            exit(3);
        }
        for (int r = 0; r < ROUNDS; r++) {
            uint64_t m[64], mask = 0;
            size_t count = measurement(&v, r, m, &mask);
            for (uint32_t k = 0; k < v.rand_bytes; k++) {
                rnd[k] = (uint8_t)test_rng_next(&t);
            }
            secret_bits(m, count, mask);
            secret(rnd, v.rand_bytes);
            shard(&v, m, count, (uint8_t)r);
        }
    }
}

static void run_verify(void)
{
    test_rng_t t;
    test_rng_seed(&t, 2);
    for (int i = 0; i < 7; i++) {
        dpm_prio3_t v;
        if (!instance(i, &v)) {
            exit(3);
        }
        for (int r = 0; r < ROUNDS / 3; r++) {
            uint64_t m[64], mask;
            size_t count = measurement(&v, r, m, &mask);
            for (uint32_t k = 0; k < v.rand_bytes; k++) {
                rnd[k] = (uint8_t)test_rng_next(&t);
            }
            shard(&v, m, count, (uint8_t)r); /* public here: the aggregators' inputs */
            uint8_t nonce[DPM_PRIO3_NONCE_BYTES], key[32];
            memset(nonce, r, sizeof(nonce));
            for (uint32_t j = 0; j < v.shares; j++) {
                const uint8_t *in =
                    j == 0 ? leader : helpers + (size_t)(j - 1u) * v.helper_share_bytes;
                size_t in_len = j == 0 ? v.leader_share_bytes : v.helper_share_bytes;
                static uint8_t copy[16384];
                memcpy(copy, in, in_len);
                memcpy(key, KEY, sizeof(key));
                secret(copy, in_len);
                secret(key, sizeof(key));
                must(dpm_prio3_verify_init(&v, key, CTX, 2, j, nonce, pub, v.public_share_bytes,
                                           copy, in_len, state, sizeof(state), vshare,
                                           sizeof(vshare), work, 8192),
                     "verify_init");
                public_(vshare, sizeof(vshare)); /* sent to the other aggregators */
            }
        }
    }
}

static void run_aggregate(void)
{
    dpm_prio3_t v;
    if (!instance(2, &v)) {
        exit(3);
    }
    static uint8_t agg[1024], share[1024];
    memset(agg, 0, sizeof(agg));
    test_rng_t t;
    test_rng_seed(&t, 3);
    for (int r = 0; r < ROUNDS; r++) {
        for (uint32_t i = 0; i < v.out_share_bytes; i++) {
            share[i] = (uint8_t)(i % 16u == 15u ? 0 : test_rng_next(&t)); /* below p */
        }
        secret(share, v.out_share_bytes);
        secret(agg, v.out_share_bytes);
        must(dpm_prio3_aggregate(&v, agg, v.out_share_bytes, share, v.out_share_bytes),
             "aggregate");
    }
    public_(agg, sizeof(agg));
}

static void run_noise(void)
{
    static uint8_t agg[1024];
    static int64_t noise[256];
    test_rng_t t;
    test_rng_seed(&t, 4);
    for (int k = 0; k < 2; k++) { /* Field128 (SumVec) and Field64 (Sum) */
        dpm_prio3_t v;
        if (!instance(k == 0 ? 2 : 1, &v) || v.output_len > 256u) {
            exit(3);
        }
        for (int r = 0; r < ROUNDS; r++) {
            for (uint32_t i = 0; i < v.out_share_bytes; i++) { /* below p in both fields */
                agg[i] = (uint8_t)(i % (v.out_share_bytes / v.output_len) ==
                                           v.out_share_bytes / v.output_len - 1u
                                       ? 0
                                       : test_rng_next(&t));
            }
            for (uint32_t i = 0; i < v.output_len; i++) { /* both signs, small and large */
                uint64_t x = test_rng_next(&t);
                noise[i] = (int64_t)(x >> (x & 63u)) * ((x & 64u) ? -1 : 1);
            }
            secret(agg, v.out_share_bytes);
            secret(noise, sizeof(noise[0]) * v.output_len);
            must(dpm_prio3_add_noise(&v, agg, v.out_share_bytes, noise, v.output_len), "add_noise");
            public_(agg, v.out_share_bytes);
        }
    }
}

static void run_xof_aes(void)
{
    static const uint8_t dst[] = "ct dst", binder[] = "binder";
    for (int r = 0; r < ROUNDS; r++) {
        uint8_t seed[16], out[80];
        memset(seed, r * 17, sizeof(seed));
        secret(seed, sizeof(seed));
        dpm_xof_aes_t x;
        dpm_xof_aes_init(&x, seed, dst, sizeof(dst), binder, sizeof(binder));
        dpm_xof_aes_next(&x, out, sizeof(out));
        public_(out, sizeof(out));
    }
}

static volatile uint64_t sink;

/* The kind of code the checks must catch: "if (x >= p) x -= p" on a secret. */
static void run_neg_reduce(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t x = (uint64_t)r * UINT64_C(0x9E3779B97F4A7C15);
        secret(&x, sizeof(x));
        if (x >= UINT64_C(0xFFFFFFFF00000001)) {
            x -= UINT64_C(0xFFFFFFFF00000001);
        }
        public_(&x, sizeof(x));
        sink += x;
    }
}

static void run_neg_sbox(void)
{
    static uint8_t table[256];
    for (int i = 0; i < 256; i++) {
        table[i] = (uint8_t)(i * 7 + 99);
    }
    for (int r = 0; r < ROUNDS; r++) {
        uint8_t b = (uint8_t)(r * 13);
        secret(&b, 1);
        uint8_t s = table[b];
        public_(&s, 1);
        sink += s;
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "shard") == 0) {
        run_shard();
    } else if (strcmp(mode, "verify") == 0) {
        run_verify();
    } else if (strcmp(mode, "aggregate") == 0) {
        run_aggregate();
    } else if (strcmp(mode, "noise") == 0) {
        run_noise();
    } else if (strcmp(mode, "xof_aes") == 0) {
        run_xof_aes();
    } else if (strcmp(mode, "neg_reduce") == 0) {
        run_neg_reduce();
    } else if (strcmp(mode, "neg_sbox") == 0) {
        run_neg_sbox();
    } else {
        fprintf(stderr,
                "usage: ct_vdaf shard|verify|aggregate|noise|xof_aes|neg_reduce|neg_sbox\n");
        return 2;
    }
    printf("ct_vdaf %s: done\n", mode);
    return 0;
}
