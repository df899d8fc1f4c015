/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a Prio3 report as the aggregators receive it, through their whole
 * verification. Input: a variant byte (the instances of the draft's vector files, same
 * verification key and context, so the seeds from those files are valid reports), a 16-byte
 * nonce, then length-prefixed (2 bytes, little-endian) messages: the public share, the leader's
 * input share, each helper's input share. Every aggregator runs dpm_prio3_verify_init on its
 * share, the verifier shares are combined, each runs dpm_prio3_verify_next, and an accepted
 * report is aggregated and unsharded. Checked beyond the sanitizers:
 *   - every status is one the header documents for that step; a message of the wrong length
 *     is DPM_ERR_PROTOCOL;
 *   - the whole run is deterministic (done twice, same statuses and bytes);
 *   - a report that every aggregator accepts decodes to a valid measurement of its variant
 *     (a count of 0 or 1, one histogram bucket, entries <= max, a weight <= max): the proof
 *     check lets nothing else through (an input breaking this is a forged proof or a missing
 *     check). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/vdaf.h"
#include "fuzz_vdaf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_SHARES 4u

typedef struct {
    dpm_status_t init[MAX_SHARES], message, next[MAX_SHARES];
    int accepted;
    uint64_t result[128];
    uint8_t vshares[MAX_SHARES * 4096], msg[32];
} run_t;

static uint64_t work[16384];
static uint8_t states[MAX_SHARES][2048], outs[MAX_SHARES][2048], agg[MAX_SHARES * 2048];

static void run(const dpm_prio3_t *v, const uint8_t *nonce, const uint8_t *const *msgs,
                const size_t *lens, run_t *r)
{
    memset(r, 0, sizeof(*r));
    int all = 1;
    for (uint32_t j = 0; j < v->shares; j++) {
        size_t expect = j == 0 ? v->leader_share_bytes : v->helper_share_bytes;
        r->init[j] = dpm_prio3_verify_init(
            v, FUZZ_VDAF_KEY, FUZZ_VDAF_CTX, sizeof(FUZZ_VDAF_CTX) - 1u, j, nonce, msgs[0], lens[0],
            msgs[1 + j], lens[1 + j], states[j], sizeof(states[j]),
            r->vshares + j * v->verifier_share_bytes, v->verifier_share_bytes, work, 16384);
        if ((lens[0] != v->public_share_bytes || lens[1 + j] != expect) &&
            r->init[j] != DPM_ERR_PROTOCOL) {
            abort();
        }
        if (r->init[j] != DPM_OK && r->init[j] != DPM_ERR_PROTOCOL &&
            r->init[j] != DPM_ERR_VERIFY) {
            abort();
        }
        all &= r->init[j] == DPM_OK;
    }
    if (!all) {
        return;
    }
    r->message = dpm_prio3_verifier_shares_to_message(
        v, FUZZ_VDAF_CTX, sizeof(FUZZ_VDAF_CTX) - 1u, r->vshares,
        (size_t)v->shares * v->verifier_share_bytes, r->msg, sizeof(r->msg), work, 16384);
    if (r->message != DPM_OK && r->message != DPM_ERR_VERIFY) {
        abort(); /* our own verifier shares always decode */
    }
    if (r->message != DPM_OK) {
        return;
    }
    for (uint32_t j = 0; j < v->shares; j++) {
        r->next[j] = dpm_prio3_verify_next(v, states[j], v->state_bytes, r->msg,
                                           v->verifier_message_bytes, outs[j], sizeof(outs[j]));
        if (r->next[j] != DPM_OK && r->next[j] != DPM_ERR_VERIFY) {
            abort();
        }
        all &= r->next[j] == DPM_OK;
    }
    if (!all) {
        return;
    }
    r->accepted = 1;
    memset(agg, 0, sizeof(agg));
    for (uint32_t j = 0; j < v->shares; j++) {
        if (dpm_prio3_aggregate(v, agg + (size_t)j * v->out_share_bytes, v->out_share_bytes,
                                outs[j], v->out_share_bytes) != DPM_OK) {
            abort();
        }
    }
    if (dpm_prio3_unshard(v, agg, (size_t)v->shares * v->out_share_bytes, 1, r->result, 128) !=
        DPM_OK) {
        abort(); /* one valid measurement always fits 64 bits */
    }
}

/* The accepted measurement is one the variant allows. */
static void check_valid(const dpm_prio3_t *v, const uint64_t *x)
{
    uint64_t sum = 0;
    for (uint32_t i = 0; i < v->output_len; i++) {
        if (x[i] > v->max_measurement && v->kind != DPM_PRIO3_HISTOGRAM &&
            v->kind != DPM_PRIO3_MULTIHOT) {
            abort();
        }
        if ((v->kind == DPM_PRIO3_HISTOGRAM || v->kind == DPM_PRIO3_MULTIHOT) && x[i] > 1u) {
            abort();
        }
        sum += x[i];
    }
    if ((v->kind == DPM_PRIO3_HISTOGRAM && sum != 1u) ||
        (v->kind == DPM_PRIO3_MULTIHOT && sum > v->max_measurement)) {
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dpm_prio3_t v;
    if (size < 1u + DPM_PRIO3_NONCE_BYTES || !fuzz_vdaf_instance(data[0], &v) ||
        v.shares > MAX_SHARES || v.verifier_share_bytes > 4096u || v.state_bytes > 2048u ||
        v.out_share_bytes > 2048u) {
        return 0;
    }
    const uint8_t *nonce = data + 1, *p = data + 1 + DPM_PRIO3_NONCE_BYTES;
    size_t left = size - 1u - DPM_PRIO3_NONCE_BYTES;
    const uint8_t *msgs[1 + MAX_SHARES];
    size_t lens[1 + MAX_SHARES];
    for (uint32_t k = 0; k < 1u + v.shares; k++) {
        msgs[k] = fuzz_vdaf_take(&p, &left, &lens[k]);
    }
    static run_t a, b;
    run(&v, nonce, msgs, lens, &a);
    run(&v, nonce, msgs, lens, &b);
    if (memcmp(&a, &b, sizeof(a)) != 0) {
        abort();
    }
    if (a.accepted) {
        check_valid(&v, a.result);
    }
    return 0;
}
