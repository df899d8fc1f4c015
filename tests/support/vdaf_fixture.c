/* SPDX-License-Identifier: Apache-2.0 */
#include "vdaf_fixture.h"

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
