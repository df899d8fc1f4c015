/* SPDX-License-Identifier: Apache-2.0 */
/* The VDAF draft's own test vectors (tests/vectors/vdaf, copied unchanged from the draft's
 * repository: SOURCE names the commit, MANIFEST their checksums), bit for bit:
 *
 *   Prio3*.json   every operation a file lists, in its order, with the file's messages as
 *                 inputs (the draft's schema): shard (the public share and every input share),
 *                 verify_init (each aggregator's verifier share), verifier_shares_to_message
 *                 (the verifier message), verify_next (each output share), aggregate (each
 *                 aggregate share) and unshard (the result). An operation marked
 *                 "success": false must fail, with DPM_ERR_VERIFY, at exactly that step.
 *   Xof*.json     XofTurboShake128 and XofFixedKeyAes128: derive_seed and a Field128 vector.
 *
 * The same program runs on every cross target (make cross): big-endian s390x and the
 * Cortex-M images (files read through semihosting). Run from the repository root, or set
 * DPM_VDAF_VECTORS to the directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/json_read.h"
#include "dpm/expert/vdaf.h"
#include "vdaf/vdaf_internal.h"
#include "vdaf_fixture.h"

static const char *const FILES[] = {
    "Prio3Count_0.json",
    "Prio3Count_1.json",
    "Prio3Count_2.json",
    "Prio3Count_bad_gadget_poly.json",
    "Prio3Count_bad_helper_seed.json",
    "Prio3Count_bad_meas_share.json",
    "Prio3Count_bad_wire_seed.json",
    "Prio3HigherDegree_0.json",
    "Prio3Histogram_0.json",
    "Prio3Histogram_1.json",
    "Prio3Histogram_2.json",
    "Prio3Histogram_bad_helper_jr_blind.json",
    "Prio3Histogram_bad_leader_jr_blind.json",
    "Prio3Histogram_bad_public_share.json",
    "Prio3Histogram_bad_verifier_message.json",
    "Prio3MultihotCountVec_0.json",
    "Prio3MultihotCountVec_1.json",
    "Prio3MultihotCountVec_2.json",
    "Prio3SumVecWithMultiproof_0.json",
    "Prio3SumVecWithMultiproof_1.json",
    "Prio3SumVec_0.json",
    "Prio3SumVec_1.json",
    "Prio3Sum_0.json",
    "Prio3Sum_1.json",
    "Prio3Sum_2.json",
};
#define NFILES (sizeof(FILES) / sizeof(FILES[0]))
#define MAX_REPORTS 16
#define MAX_SHARES 8

static void load(const char *name, jr_value_t *root)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", vdaf_vector_dir(), name);
    if (jr_parse_file(path, root) != 0) {
        fail_msg("cannot read %s (run from the repository root)", path);
    }
}

/* A hex string value into a new buffer (*len its length); fails the test if it is none. */
static uint8_t *hex(const jr_value_t *s, size_t *len)
{
    uint8_t *out = vdaf_hex(s, len);
    assert_non_null(out);
    return out;
}

static uint64_t u64(const jr_value_t *v)
{
    uint64_t x = 0;
    assert_int_equal(vdaf_u64(v, &x), 0);
    return x;
}

typedef struct {
    uint8_t *state[MAX_SHARES];
} report_state_t;

/* The bytes of item i of array member `key` of o. */
static uint8_t *item(const jr_value_t *o, const char *key, size_t i, size_t *len)
{
    return hex(jr_at(jr_get(o, key), i), len);
}

static void expect_bytes(const char *what, const uint8_t *got, size_t got_len, const uint8_t *want,
                         size_t want_len)
{
    if (got_len != want_len || memcmp(got, want, want_len) != 0) {
        fail_msg("%s differs (%zu bytes, expected %zu)", what, got_len, want_len);
    }
}

static void run_file(void **state)
{
    const char *name = (const char *)*state;
    jr_value_t root;
    load(name, &root);
    dpm_prio3_t v;
    assert_int_equal(vdaf_vector_instance(name, &root, &v), DPM_OK);
    size_t ctx_len = 0, key_len = 0, len = 0;
    uint8_t *ctx = hex(jr_get(&root, "ctx"), &ctx_len);
    uint8_t *key = hex(jr_get(&root, "verify_key"), &key_len);
    assert_int_equal(key_len, DPM_PRIO3_VERIFY_KEY_BYTES);
    const jr_value_t *reports = jr_get(&root, "reports"), *ops = jr_get(&root, "operations");
    assert_true(reports != NULL && reports->n <= MAX_REPORTS && ops != NULL && ops->n > 0);
    assert_true(v.shares <= MAX_SHARES);
    static report_state_t rs[MAX_REPORTS];
    memset(rs, 0, sizeof(rs));
    uint64_t *work =
        calloc(v.verify_work_words > v.shard_work_words ? v.verify_work_words : v.shard_work_words,
               sizeof(uint64_t));
    assert_non_null(work);
    const size_t work_words =
        v.verify_work_words > v.shard_work_words ? v.verify_work_words : v.shard_work_words;
    unsigned done = 0, failures = 0;
    for (size_t o = 0; o < ops->n; o++) {
        const jr_value_t *op = jr_at(ops, o);
        const char *what = jr_string(op, "operation");
        const int success = jr_get(op, "success")->number != 0.0;
        const jr_value_t *ri = jr_get(op, "report_index"), *ai = jr_get(op, "aggregator_id");
        size_t r = ri != NULL ? (size_t)u64(ri) : 0u;
        uint32_t agg = ai != NULL ? (uint32_t)u64(ai) : 0u;
        const jr_value_t *rep = jr_at(reports, r);
        assert_non_null(what);
        assert_non_null(rep);
        size_t nonce_len = 0, pub_len = 0;
        uint8_t *nonce = hex(jr_get(rep, "nonce"), &nonce_len);
        uint8_t *pub = hex(jr_get(rep, "public_share"), &pub_len);
        assert_int_equal(nonce_len, DPM_PRIO3_NONCE_BYTES);
        if (!success) {
            failures++;
        }
        if (strcmp(what, "shard") == 0) {
            assert_true(success);
            const jr_value_t *m = jr_get(rep, "measurement");
            uint64_t meas[128];
            size_t count = 1;
            if (m->kind == JR_ARRAY) {
                assert_true(m->n <= 128u);
                count = m->n;
                for (size_t i = 0; i < m->n; i++) {
                    meas[i] = u64(jr_at(m, i));
                }
            } else {
                meas[0] = u64(m);
            }
            size_t rand_len = 0;
            uint8_t *rnd = hex(jr_get(rep, "rand"), &rand_len);
            uint8_t *ps = malloc(v.public_share_bytes + 1u), *lead = malloc(v.leader_share_bytes);
            uint8_t *help = malloc((size_t)(v.shares - 1u) * v.helper_share_bytes);
            dpm_prio3_shard_out_t out = {ps,   v.public_share_bytes,
                                         lead, v.leader_share_bytes,
                                         help, (size_t)(v.shares - 1u) * v.helper_share_bytes};
            assert_int_equal(dpm_prio3_shard(&v, ctx, ctx_len, meas, count, nonce, rnd, rand_len,
                                             &out, work, work_words),
                             DPM_OK);
            expect_bytes("public share", ps, v.public_share_bytes, pub, pub_len);
            uint8_t *want = item(rep, "input_shares", 0, &len);
            expect_bytes("leader input share", lead, v.leader_share_bytes, want, len);
            free(want);
            for (uint32_t j = 1; j < v.shares; j++) {
                want = item(rep, "input_shares", j, &len);
                expect_bytes("helper input share", help + (size_t)(j - 1u) * v.helper_share_bytes,
                             v.helper_share_bytes, want, len);
                free(want);
            }
            free(rnd);
            free(ps);
            free(lead);
            free(help);
        } else if (strcmp(what, "verify_init") == 0) {
            assert_true(success && agg < v.shares);
            size_t in_len = 0;
            uint8_t *in = item(rep, "input_shares", agg, &in_len);
            uint8_t *vs = malloc(v.verifier_share_bytes);
            free(rs[r].state[agg]);
            rs[r].state[agg] = malloc(v.state_bytes);
            assert_int_equal(dpm_prio3_verify_init(&v, key, ctx, ctx_len, agg, nonce, pub, pub_len,
                                                   in, in_len, rs[r].state[agg], v.state_bytes, vs,
                                                   v.verifier_share_bytes, work, work_words),
                             DPM_OK);
            uint8_t *want = hex(jr_at(jr_at(jr_get(rep, "verifier_shares"), 0), agg), &len);
            expect_bytes("verifier share", vs, v.verifier_share_bytes, want, len);
            free(want);
            free(vs);
            free(in);
        } else if (strcmp(what, "verifier_shares_to_message") == 0) {
            const jr_value_t *round0 = jr_at(jr_get(rep, "verifier_shares"), 0);
            assert_non_null(round0);
            assert_int_equal(round0->n, v.shares);
            uint8_t *all = malloc((size_t)v.shares * v.verifier_share_bytes);
            for (uint32_t j = 0; j < v.shares; j++) {
                uint8_t *s = hex(jr_at(round0, j), &len);
                assert_int_equal(len, v.verifier_share_bytes);
                memcpy(all + (size_t)j * v.verifier_share_bytes, s, len);
                free(s);
            }
            uint8_t msg[DPM_PRIO3_SEED_BYTES];
            dpm_status_t st = dpm_prio3_verifier_shares_to_message(
                &v, ctx, ctx_len, all, (size_t)v.shares * v.verifier_share_bytes, msg, sizeof(msg),
                work, work_words);
            if (success) {
                assert_int_equal(st, DPM_OK);
                uint8_t *want = item(rep, "verifier_messages", 0, &len);
                expect_bytes("verifier message", msg, v.verifier_message_bytes, want, len);
                free(want);
            } else {
                assert_int_equal(st, DPM_ERR_VERIFY);
            }
            free(all);
        } else if (strcmp(what, "verify_next") == 0) {
            assert_true(agg < v.shares && rs[r].state[agg] != NULL);
            uint8_t *msg = item(rep, "verifier_messages", 0, &len);
            uint8_t *os = malloc(v.out_share_bytes);
            dpm_status_t st = dpm_prio3_verify_next(&v, rs[r].state[agg], v.state_bytes, msg, len,
                                                    os, v.out_share_bytes);
            if (success) {
                assert_int_equal(st, DPM_OK);
                uint8_t *want = item(rep, "out_shares", agg, &len);
                expect_bytes("output share", os, v.out_share_bytes, want, len);
                free(want);
            } else {
                assert_int_equal(st, DPM_ERR_VERIFY);
            }
            free(os);
            free(msg);
        } else if (strcmp(what, "aggregate") == 0) {
            assert_true(success && agg < v.shares);
            uint8_t *acc = calloc(1, v.out_share_bytes);
            for (size_t k = 0; k < reports->n; k++) {
                uint8_t *os = item(jr_at(reports, k), "out_shares", agg, &len);
                assert_int_equal(dpm_prio3_aggregate(&v, acc, v.out_share_bytes, os, len), DPM_OK);
                free(os);
            }
            uint8_t *want = item(&root, "agg_shares", agg, &len);
            expect_bytes("aggregate share", acc, v.out_share_bytes, want, len);
            free(want);
            free(acc);
        } else if (strcmp(what, "unshard") == 0) {
            assert_true(success);
            uint8_t *all = malloc((size_t)v.shares * v.out_share_bytes);
            for (uint32_t j = 0; j < v.shares; j++) {
                uint8_t *s = item(&root, "agg_shares", j, &len);
                assert_int_equal(len, v.out_share_bytes);
                memcpy(all + (size_t)j * v.out_share_bytes, s, len);
                free(s);
            }
            uint64_t result[128];
            assert_true(v.output_len <= 128u);
            assert_int_equal(dpm_prio3_unshard(&v, all, (size_t)v.shares * v.out_share_bytes,
                                               reports->n, result, 128),
                             DPM_OK);
            const jr_value_t *want = jr_get(&root, "agg_result");
            if (want->kind == JR_ARRAY) {
                assert_int_equal(want->n, v.output_len);
                for (size_t i = 0; i < want->n; i++) {
                    assert_int_equal(result[i], u64(jr_at(want, i)));
                }
            } else {
                assert_int_equal(v.output_len, 1);
                assert_int_equal(result[0], u64(want));
            }
            free(all);
        } else {
            fail_msg("%s: unknown operation %s", name, what);
        }
        done++;
        free(nonce);
        free(pub);
    }
    print_message("%s: %u operations, %u of them expected to fail (and failing)\n", name, done,
                  failures);
    for (size_t r = 0; r < MAX_REPORTS; r++) {
        for (int j = 0; j < MAX_SHARES; j++) {
            free(rs[r].state[j]);
        }
    }
    free(work);
    free(ctx);
    free(key);
    jr_free(&root);
}

/* ---- the XOFs ------------------------------------------------------------------------------- */

/* Field128 elements from a byte stream, as next_vec defines it (16 bytes little-endian,
 * candidates >= p skipped); compared encoded. */
typedef void (*next_fn)(void *x, uint8_t *out, size_t len);

static void expand_f128(next_fn next, void *x, uint8_t *out, size_t n)
{
    static const uint8_t p_le[16] = {1,    0,    0,    0,    0,    0,    0,    0,
                                     0xE4, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    for (size_t i = 0; i < n;) {
        uint8_t b[16];
        next(x, b, 16);
        int lt = 0; /* b < p, compared from the most significant byte */
        for (int k = 15; k >= 0; k--) {
            if (b[k] != p_le[k]) {
                lt = b[k] < p_le[k];
                break;
            }
        }
        if (lt) {
            memcpy(out + 16u * i, b, 16);
            i++;
        }
    }
}

static void ts_next(void *x, uint8_t *out, size_t len)
{
    dpm_xof_next((dpm_xof_t *)x, out, len);
}

static void aes_next(void *x, uint8_t *out, size_t len)
{
    dpm_xof_aes_next((dpm_xof_aes_t *)x, out, len);
}

static void test_xof(void **state)
{
    const int aes = *state != NULL;
    jr_value_t root;
    load(aes ? "XofFixedKeyAes128.json" : "XofTurboShake128.json", &root);
    size_t seed_len, dst_len, binder_len, derived_len, vec_len;
    uint8_t *seed = hex(jr_get(&root, "seed"), &seed_len);
    uint8_t *dst = hex(jr_get(&root, "dst"), &dst_len);
    uint8_t *binder = hex(jr_get(&root, "binder"), &binder_len);
    uint8_t *derived = hex(jr_get(&root, "derived_seed"), &derived_len);
    uint8_t *vec = hex(jr_get(&root, "expanded_vec_field128"), &vec_len);
    size_t n = (size_t)u64(jr_get(&root, "length"));
    assert_int_equal(vec_len, 16u * n);
    assert_int_equal(seed_len, aes ? 16u : 32u);
    assert_int_equal(derived_len, seed_len);
    uint8_t got_seed[32], *got_vec = malloc(vec_len);
    for (int pass = 0; pass < 2; pass++) { /* derive_seed, then expand_into_vec */
        dpm_xof_t ts;
        dpm_xof_aes_t xa;
        void *x = aes ? (void *)&xa : (void *)&ts;
        if (aes) {
            dpm_xof_aes_init(&xa, seed, dst, dst_len, binder, binder_len);
        } else {
            dpm_xof_init(&ts, seed, seed_len, dst, dst_len, NULL, 0);
            dpm_xof_absorb(&ts, binder, binder_len);
        }
        if (pass == 0) {
            (aes ? aes_next : ts_next)(x, got_seed, seed_len);
            expect_bytes("derived seed", got_seed, seed_len, derived, derived_len);
        } else {
            expand_f128(aes ? aes_next : ts_next, x, got_vec, n);
            expect_bytes("expanded Field128 vector", got_vec, vec_len, vec, vec_len);
        }
    }
    free(got_vec);
    free(seed);
    free(dst);
    free(binder);
    free(derived);
    free(vec);
    jr_free(&root);
}

int main(void)
{
    static int aes_flag = 1;
    struct CMUnitTest tests[NFILES + 2];
    for (size_t i = 0; i < NFILES; i++) {
        tests[i] = (struct CMUnitTest){FILES[i], run_file, NULL, NULL, (void *)FILES[i]};
    }
    tests[NFILES] = (struct CMUnitTest){"XofTurboShake128.json", test_xof, NULL, NULL, NULL};
    tests[NFILES + 1] =
        (struct CMUnitTest){"XofFixedKeyAes128.json", test_xof, NULL, NULL, &aes_flag};
    return _cmocka_run_group_tests("vdaf_vectors", tests, NFILES + 2, NULL, NULL);
}
