/* SPDX-License-Identifier: Apache-2.0 */
#include "vdaf_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_rng.h"

static void *must_alloc(size_t n)
{
    void *p = calloc(1, n > 0 ? n : 1);
    if (p == NULL) {
        abort();
    }
    return p;
}

void vdaf_report_alloc(const dpm_prio3_t *v, vdaf_report_t *r)
{
    memset(r, 0, sizeof(*r));
    r->public_share = must_alloc(v->public_share_bytes);
    r->leader = must_alloc(v->leader_share_bytes);
    r->helpers = must_alloc((size_t)(v->shares - 1u) * v->helper_share_bytes);
}

void vdaf_report_free(vdaf_report_t *r)
{
    free(r->public_share);
    free(r->leader);
    free(r->helpers);
    memset(r, 0, sizeof(*r));
}

dpm_status_t vdaf_report_shard(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                               const uint64_t *measurement, size_t count, uint64_t seed,
                               vdaf_report_t *r)
{
    test_rng_t t;
    test_rng_seed(&t, seed);
    uint8_t *rand = must_alloc(v->rand_bytes);
    for (uint32_t i = 0; i < v->rand_bytes; i++) {
        rand[i] = (uint8_t)test_rng_next(&t);
    }
    for (unsigned i = 0; i < DPM_PRIO3_NONCE_BYTES; i++) {
        r->nonce[i] = (uint8_t)test_rng_next(&t);
    }
    uint64_t *work = must_alloc((size_t)v->shard_work_words * sizeof(uint64_t));
    const dpm_prio3_shard_out_t out = {
        r->public_share, v->public_share_bytes,
        r->leader,       v->leader_share_bytes,
        r->helpers,      (size_t)(v->shares - 1u) * v->helper_share_bytes};
    dpm_status_t st = dpm_prio3_shard(v, ctx, ctx_len, measurement, count, r->nonce, rand,
                                      v->rand_bytes, &out, work, v->shard_work_words);
    free(work);
    free(rand);
    return st;
}

void vdaf_result_init(const dpm_prio3_t *v, vdaf_result_t *res)
{
    memset(res, 0, sizeof(*res));
    res->verifier_shares = must_alloc((size_t)v->shares * v->verifier_share_bytes);
    res->out_shares = must_alloc((size_t)v->shares * v->out_share_bytes);
}

void vdaf_result_free(vdaf_result_t *res)
{
    free(res->verifier_shares);
    free(res->out_shares);
    memset(res, 0, sizeof(*res));
}

void vdaf_verify(const dpm_prio3_t *v, const uint8_t *verify_key, const uint8_t *ctx,
                 size_t ctx_len, const vdaf_report_t *r, long verifier_fault, long message_fault,
                 vdaf_result_t *res)
{
    uint64_t *work = must_alloc((size_t)v->verify_work_words * sizeof(uint64_t));
    uint8_t *states = must_alloc((size_t)v->shares * v->state_bytes);
    res->status = DPM_OK;
    res->step = VDAF_STEP_INIT;
    for (uint32_t j = 0; j < v->shares && res->status == DPM_OK; j++) {
        const uint8_t *in =
            j == 0 ? r->leader : r->helpers + (size_t)(j - 1u) * v->helper_share_bytes;
        size_t in_len = j == 0 ? v->leader_share_bytes : v->helper_share_bytes;
        res->status = dpm_prio3_verify_init(
            v, verify_key, ctx, ctx_len, j, r->nonce, r->public_share, v->public_share_bytes, in,
            in_len, states + (size_t)j * v->state_bytes, v->state_bytes,
            res->verifier_shares + (size_t)j * v->verifier_share_bytes, v->verifier_share_bytes,
            work, v->verify_work_words);
    }
    if (res->status == DPM_OK) {
        res->step = VDAF_STEP_MESSAGE;
        if (verifier_fault >= 0) {
            res->verifier_shares[verifier_fault] ^= 0x01u;
        }
        res->status = dpm_prio3_verifier_shares_to_message(
            v, ctx, ctx_len, res->verifier_shares, (size_t)v->shares * v->verifier_share_bytes,
            res->message, sizeof(res->message), work, v->verify_work_words);
    }
    if (res->status == DPM_OK) {
        res->step = VDAF_STEP_NEXT;
        if (message_fault >= 0) {
            res->message[message_fault] ^= 0x01u;
        }
        for (uint32_t j = 0; j < v->shares && res->status == DPM_OK; j++) {
            res->status = dpm_prio3_verify_next(
                v, states + (size_t)j * v->state_bytes, v->state_bytes, res->message,
                v->verifier_message_bytes, res->out_shares + (size_t)j * v->out_share_bytes,
                v->out_share_bytes);
        }
    }
    if (res->status == DPM_OK) {
        res->step = VDAF_STEP_DONE;
    }
    free(states);
    free(work);
}

/* ---- the draft's vector files
 * -------------------------------------------------------------------- */

const char *vdaf_vector_dir(void)
{
    const char *d = getenv("DPM_VDAF_VECTORS");
    return d != NULL ? d : "tests/vectors/vdaf";
}

uint8_t *vdaf_hex(const jr_value_t *v, size_t *len)
{
    if (v == NULL || v->kind != JR_STRING || strlen(v->string) % 2u != 0) {
        return NULL;
    }
    size_t n = strlen(v->string) / 2u;
    uint8_t *out = must_alloc(n);
    for (size_t i = 0; i < n; i++) {
        unsigned b = 0;
        if (sscanf(v->string + 2u * i, "%2x", &b) != 1) {
            free(out);
            return NULL;
        }
        out[i] = (uint8_t)b;
    }
    *len = n;
    return out;
}

int vdaf_u64(const jr_value_t *v, uint64_t *out)
{
    int64_t x = 0;
    if (v != NULL && v->kind == JR_BOOL) {
        *out = v->number != 0.0;
        return 0;
    }
    if (v == NULL || jr_int64(v, &x) != 0 || x < 0) {
        return -1;
    }
    *out = (uint64_t)x;
    return 0;
}

static uint32_t param(const jr_value_t *root, const char *key)
{
    uint64_t x = 0;
    return vdaf_u64(jr_get(root, key), &x) == 0 && x <= UINT32_MAX ? (uint32_t)x : 0u;
}

dpm_status_t vdaf_vector_instance(const char *name, const jr_value_t *root, dpm_prio3_t *v)
{
    uint64_t max = 0;
    (void)vdaf_u64(jr_get(root, "max_measurement"), &max);
    const uint32_t s = param(root, "shares"), len = param(root, "length");
    const uint32_t chunk = param(root, "chunk_length");
#define IS(prefix) (strncmp(name, prefix, strlen(prefix)) == 0)
    if (IS("Prio3Count_")) {
        return dpm_prio3_count_init(v, s);
    }
    if (IS("Prio3Sum_")) {
        return dpm_prio3_sum_init(v, s, max);
    }
    if (IS("Prio3SumVec_")) {
        return dpm_prio3_sumvec_init(v, s, len, max, chunk);
    }
    if (IS("Prio3SumVecWithMultiproof_")) {
        return dpm_prio3_sumvec_multiproof_init(v, s, 3, len, max, chunk);
    }
    if (IS("Prio3Histogram_")) {
        return dpm_prio3_histogram_init(v, s, len, chunk);
    }
    if (IS("Prio3MultihotCountVec_")) {
        return dpm_prio3_multihot_init(v, s, len, param(root, "max_weight"), chunk);
    }
    if (IS("Prio3HigherDegree_")) {
        return dpm_prio3_higher_degree_init(v, s);
    }
#undef IS
    return DPM_ERR_PARAM;
}
