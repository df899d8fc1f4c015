/* SPDX-License-Identifier: Apache-2.0 */
/* Fault injection into the draft's own reports (tests/vectors/vdaf): for every report of every
 * Prio3 vector file whose verification succeeds, every byte of every message an aggregator
 * receives is damaged in turn (XOR 0x01, one byte at a time) and the report verified by all
 * aggregators as in test_vdaf_vectors' order of operations:
 *
 *   the public share, the leader's input share (measurement share, proof share, blind), each
 *   helper's input share (seed, blind), every aggregator's verifier share, the verifier
 *   message
 *
 * Each damaged report must be rejected before any aggregator holds an output share: at
 * verify_init (DPM_ERR_PROTOCOL: no field element), when the verifier shares are combined
 * (DPM_ERR_VERIFY, or DPM_ERR_PROTOCOL), or at verify_next (DPM_ERR_VERIFY) -- never
 * aggregated. The control: the undamaged report verifies and yields the file's output shares.
 *
 * On the host every byte is damaged. Emulated targets (make cross) take every D-th byte, D =
 * DPM_STAT_DIVISOR (cross sets 20), and Cortex-M images every 61st, starting at a different
 * offset per message so that each part of a message is still hit. */
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
#include "vdaf_fixture.h"

static const char *const FILES[] = {
    "Prio3Count_0.json",
    "Prio3Count_1.json",
    "Prio3Count_2.json",
    "Prio3HigherDegree_0.json",
    "Prio3Histogram_0.json",
    "Prio3Histogram_1.json",
    "Prio3Histogram_2.json",
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

static size_t stride(void)
{
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
    return 61u;
#else
    const char *env = getenv("DPM_STAT_DIVISOR");
    long d = env != NULL ? strtol(env, NULL, 10) : 1;
    return d > 1 && d <= 1000 ? (size_t)d : 1u;
#endif
}

static uint8_t *hex(const jr_value_t *s, size_t *len)
{
    uint8_t *out = vdaf_hex(s, len);
    assert_non_null(out);
    return out;
}

typedef struct {
    unsigned long damaged, at_init, at_message, at_next;
} tally_t;

static void expect_rejected(const dpm_prio3_t *v, const uint8_t *key, const uint8_t *ctx,
                            size_t ctx_len, const vdaf_report_t *r, long vfault, long mfault,
                            const char *what, size_t byte, tally_t *t)
{
    vdaf_result_t res;
    vdaf_result_init(v, &res);
    vdaf_verify(v, key, ctx, ctx_len, r, vfault, mfault, &res);
    t->damaged++;
    if (res.step == VDAF_STEP_DONE) {
        fail_msg("byte %zu of the %s damaged: the report still verified (it would be aggregated)",
                 byte, what);
    }
    if (res.status != DPM_ERR_VERIFY && res.status != DPM_ERR_PROTOCOL) {
        fail_msg("byte %zu of the %s damaged: %s", byte, what, dpm_strerror(res.status));
    }
    t->at_init += res.step == VDAF_STEP_INIT;
    t->at_message += res.step == VDAF_STEP_MESSAGE;
    t->at_next += res.step == VDAF_STEP_NEXT;
    vdaf_result_free(&res);
}

/* Damage every (stride-th) byte of buf[0..len) in turn. */
static void damage(const dpm_prio3_t *v, const uint8_t *key, const uint8_t *ctx, size_t ctx_len,
                   const vdaf_report_t *r, uint8_t *buf, size_t len, size_t first, const char *what,
                   tally_t *t)
{
    for (size_t i = first % stride(); i < len; i += stride()) {
        buf[i] ^= 0x01u;
        expect_rejected(v, key, ctx, ctx_len, r, -1, -1, what, i, t);
        buf[i] ^= 0x01u;
    }
}

static void test_file(void **state)
{
    const char *name = (const char *)*state;
    const char *dir =
        getenv("DPM_VDAF_VECTORS") ? getenv("DPM_VDAF_VECTORS") : "tests/vectors/vdaf";
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    jr_value_t root;
    if (jr_parse_file(path, &root) != 0) {
        fail_msg("cannot read %s (run from the repository root)", path);
    }
    dpm_prio3_t v;
    assert_int_equal(vdaf_vector_instance(name, &root, &v), DPM_OK);
    size_t ctx_len, key_len, len;
    uint8_t *ctx = hex(jr_get(&root, "ctx"), &ctx_len),
            *key = hex(jr_get(&root, "verify_key"), &key_len);
    const jr_value_t *reports = jr_get(&root, "reports");
    tally_t t = {0, 0, 0, 0};
    for (size_t k = 0; k < reports->n; k++) {
        const jr_value_t *rep = jr_at(reports, k);
        vdaf_report_t r;
        vdaf_report_alloc(&v, &r);
        uint8_t *b = hex(jr_get(rep, "nonce"), &len);
        memcpy(r.nonce, b, sizeof(r.nonce));
        free(b);
        b = hex(jr_get(rep, "public_share"), &len);
        memcpy(r.public_share, b, len);
        free(b);
        b = hex(jr_at(jr_get(rep, "input_shares"), 0), &len);
        memcpy(r.leader, b, len);
        free(b);
        for (uint32_t j = 1; j < v.shares; j++) {
            b = hex(jr_at(jr_get(rep, "input_shares"), j), &len);
            memcpy(r.helpers + (size_t)(j - 1u) * v.helper_share_bytes, b, len);
            free(b);
        }
        /* the control: undamaged, it verifies to the file's output shares */
        vdaf_result_t ok;
        vdaf_result_init(&v, &ok);
        vdaf_verify(&v, key, ctx, ctx_len, &r, -1, -1, &ok);
        assert_int_equal(ok.step, VDAF_STEP_DONE);
        for (uint32_t j = 0; j < v.shares; j++) {
            b = hex(jr_at(jr_get(rep, "out_shares"), j), &len);
            assert_memory_equal(ok.out_shares + (size_t)j * v.out_share_bytes, b, len);
            free(b);
        }
        const size_t vlen = (size_t)v.shares * v.verifier_share_bytes;
        vdaf_result_free(&ok);
        damage(&v, key, ctx, ctx_len, &r, r.public_share, v.public_share_bytes, k, "public share",
               &t);
        damage(&v, key, ctx, ctx_len, &r, r.leader, v.leader_share_bytes, k + 1u, "leader share",
               &t);
        damage(&v, key, ctx, ctx_len, &r, r.helpers, (size_t)(v.shares - 1u) * v.helper_share_bytes,
               k + 2u, "helper shares", &t);
        for (size_t i = (k + 3u) % stride(); i < vlen; i += stride()) {
            expect_rejected(&v, key, ctx, ctx_len, &r, (long)i, -1, "verifier shares", i, &t);
        }
        for (size_t i = (k + 4u) % stride(); i < v.verifier_message_bytes; i += stride()) {
            expect_rejected(&v, key, ctx, ctx_len, &r, -1, (long)i, "verifier message", i, &t);
        }
        vdaf_report_free(&r);
    }
    print_message("%s: %lu damaged reports, all rejected (%lu at verify_init, %lu combining the "
                  "verifier shares, %lu at verify_next)\n",
                  name, t.damaged, t.at_init, t.at_message, t.at_next);
    assert_true(t.damaged > 0);
    free(ctx);
    free(key);
    jr_free(&root);
}

int main(void)
{
    struct CMUnitTest tests[NFILES];
    for (size_t i = 0; i < NFILES; i++) {
        tests[i] = (struct CMUnitTest){FILES[i], test_file, NULL, NULL, (void *)FILES[i]};
    }
    return _cmocka_run_group_tests("vdaf_faults", tests, NFILES, NULL, NULL);
}
