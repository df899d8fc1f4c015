/* SPDX-License-Identifier: Apache-2.0 */
/* The leader and the helper in one process (see pair.h). */
#include "aggregator/pair.h"

#include "aggregator/share.h"

#include <stdlib.h>
#include <string.h>

#include "dpm/expert/vdaf.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/noise.h"

int agg_pair_init(agg_pair_t *a, const dpm_dap_task_t *t, const dpm_dap_hpke_key_t *leader_key,
                  const dpm_dap_hpke_key_t *helper_key,
                  const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES])
{
    memset(a, 0, sizeof(*a));
    if (t == NULL || t->vdaf.ops == NULL || leader_key == NULL || helper_key == NULL) {
        return -1;
    }
    const dpm_prio3_t *v = &t->vdaf;
    a->task = t;
    a->key[0] = *leader_key;
    a->key[1] = *helper_key;
    memcpy(a->verify_key, verify_key, DPM_PRIO3_VERIFY_KEY_BYTES);
    dpm_dap_vdaf_ctx(t, a->ctx);
    a->plain_cap = dpm_dap_report_bytes(v);
    a->agg_share = calloc(2, v->out_share_bytes + 1u);
    a->vshares = malloc(2u * v->verifier_share_bytes + 1u);
    a->msg = malloc(v->verifier_message_bytes + 1u);
    a->out = malloc(2u * v->out_share_bytes + 1u); /* both output shares of a report */
    a->work = malloc(8u * (size_t)v->verify_work_words + 8u);
    a->seen_cap = 1024;
    a->seen = calloc(a->seen_cap, sizeof(*a->seen));
    int ok = a->agg_share != NULL && a->vshares != NULL && a->msg != NULL && a->out != NULL &&
             a->work != NULL && a->seen != NULL;
    for (int i = 0; i < 2; i++) {
        a->plain[i] = malloc(a->plain_cap);
        a->state[i] = malloc(v->state_bytes + 1u);
        ok &= a->plain[i] != NULL && a->state[i] != NULL;
    }
    if (!ok) {
        agg_pair_free(a);
        return -1;
    }
    return 0;
}

void agg_pair_free(agg_pair_t *a)
{
    for (int i = 0; i < 2; i++) {
        free(a->plain[i]);
        free(a->state[i]);
    }
    free(a->agg_share);
    free(a->vshares);
    free(a->msg);
    free(a->out);
    free(a->work);
    free(a->seen);
    memset(a, 0, sizeof(*a));
}

/* Report ids seen: an open-addressed set of 16-byte ids. Honest ids are random, so their first
 * 8 bytes serve as the hash; ids an adversary chooses can build long probe runs, which is
 * harmless in one process and is why the network roles will hash with a secret key. The
 * all-zero id marks an empty slot, so it is kept by a flag of its own. */
static uint64_t id_hash(const uint8_t *id)
{
    uint64_t h = 0;
    for (unsigned i = 0; i < 8; i++) {
        h = (h << 8) | id[i];
    }
    return h;
}

static const uint8_t kEmpty[DPM_DAP_REPORT_ID_BYTES];

static size_t slot_of(uint8_t (*table)[DPM_DAP_REPORT_ID_BYTES], size_t cap, const uint8_t *id)
{
    size_t j = (size_t)id_hash(id) & (cap - 1u);
    while (memcmp(table[j], kEmpty, DPM_DAP_REPORT_ID_BYTES) != 0 &&
           memcmp(table[j], id, DPM_DAP_REPORT_ID_BYTES) != 0) {
        j = (j + 1u) & (cap - 1u);
    }
    return j;
}

/* 1 if id was seen before (a replay), 0 if it is new (now recorded), -1 out of memory. */
static int seen_insert(agg_pair_t *a, const uint8_t *id)
{
    if (memcmp(id, kEmpty, DPM_DAP_REPORT_ID_BYTES) == 0) {
        int was = a->zero_seen;
        a->zero_seen = 1;
        return was;
    }
    if (2u * (a->seen_n + 1u) > a->seen_cap) { /* grow at half load */
        size_t cap = 2u * a->seen_cap;
        uint8_t(*grown)[DPM_DAP_REPORT_ID_BYTES] = calloc(cap, sizeof(*grown));
        if (grown == NULL) {
            return -1;
        }
        for (size_t i = 0; i < a->seen_cap; i++) {
            if (memcmp(a->seen[i], kEmpty, DPM_DAP_REPORT_ID_BYTES) != 0) {
                memcpy(grown[slot_of(grown, cap, a->seen[i])], a->seen[i], DPM_DAP_REPORT_ID_BYTES);
            }
        }
        free(a->seen);
        a->seen = grown;
        a->seen_cap = cap;
    }
    size_t j = slot_of(a->seen, a->seen_cap, id);
    if (memcmp(a->seen[j], id, DPM_DAP_REPORT_ID_BYTES) == 0) {
        return 1;
    }
    memcpy(a->seen[j], id, DPM_DAP_REPORT_ID_BYTES);
    a->seen_n++;
    return 0;
}

/* Count a rejected report by its ReportError. */
static dpm_status_t reject(agg_pair_t *a, dpm_status_t st, uint8_t code, uint8_t *report_error)
{
    a->rejected[code < AGG_REPORT_ERRORS ? code : AGG_REPORT_ERRORS - 1u]++;
    if (report_error != NULL) {
        *report_error = code;
    }
    return st;
}

dpm_status_t agg_pair_add(agg_pair_t *a, const uint8_t *report, size_t len, uint8_t *report_error)
{
    if (report_error != NULL) {
        *report_error = 0;
    }
    if (a->released) {
        return DPM_ERR_PARAM;
    }
    const dpm_prio3_t *v = &a->task->vdaf;
    dpm_dap_report_view_t r;
    dpm_status_t st = dpm_dap_report_decode(report, len, &r, NULL);
    if (st != DPM_OK) {
        return reject(a, st, dpm_dap_report_error(DPM_ERR_PROTOCOL), report_error);
    }
    if (r.public_extensions.len != 0) { /* this task knows no report extension */
        return reject(a, DPM_ERR_PROTOCOL, dpm_dap_report_error(DPM_ERR_PROTOCOL), report_error);
    }
    dpm_span_t ext[2], share[2];
    for (int i = 0; i < 2 && st == DPM_OK; i++) {
        st = dpm_dap_open_input_share(a->task, i == 0 ? DPM_DAP_ROLE_LEADER : DPM_DAP_ROLE_HELPER,
                                      &a->key[i], 1, &r, a->plain[i], a->plain_cap, &ext[i],
                                      &share[i], NULL);
        if (st == DPM_OK && ext[i].len != 0) {
            st = DPM_ERR_PROTOCOL; /* no private extension is known either */
        }
        if (st == DPM_OK) {
            st = dpm_prio3_verify_init(v, a->verify_key, a->ctx, sizeof(a->ctx), (uint32_t)i,
                                       r.report_id, r.public_share.p, r.public_share.len,
                                       share[i].p, share[i].len, a->state[i], v->state_bytes,
                                       a->vshares + (size_t)i * v->verifier_share_bytes,
                                       v->verifier_share_bytes, a->work, v->verify_work_words);
        }
    }
    if (st == DPM_OK) {
        st = dpm_prio3_verifier_shares_to_message(
            v, a->ctx, sizeof(a->ctx), a->vshares, 2u * v->verifier_share_bytes, a->msg,
            v->verifier_message_bytes, a->work, v->verify_work_words);
    }
    if (st != DPM_OK) {
        return reject(a, st, dpm_dap_report_error(st), report_error);
    }
    /* both output shares before either is added, so that a report counts for both aggregators
     * or for neither whatever fails (a public share lying about one joint-randomness part is
     * caught by the proof check above, as the joint randomness then differs; this keeps the
     * shares consistent even if a check passes for one aggregator only) */
    for (int i = 0; i < 2 && st == DPM_OK; i++) {
        st =
            dpm_prio3_verify_next(v, a->state[i], v->state_bytes, a->msg, v->verifier_message_bytes,
                                  a->out + (size_t)i * v->out_share_bytes, v->out_share_bytes);
    }
    if (st != DPM_OK) {
        return reject(a, st, dpm_dap_report_error(st), report_error);
    }
    /* valid: a replayed id is dropped now, before either share counts (DAP: each report id
     * aggregated at most once per task) */
    int seen = seen_insert(a, r.report_id);
    if (seen != 0) {
        return seen < 0 ? DPM_ERR_BUFFER
                        : reject(a, DPM_ERR_PROTOCOL, AGG_REPORT_REPLAYED, report_error);
    }
    for (int i = 0; i < 2; i++) { /* shares verified as field vectors: cannot fail */
        (void)dpm_prio3_aggregate(v, a->agg_share + (size_t)i * v->out_share_bytes,
                                  v->out_share_bytes, a->out + (size_t)i * v->out_share_bytes,
                                  v->out_share_bytes);
    }
    a->aggregated++;
    return DPM_OK;
}

dpm_status_t agg_pair_release(agg_pair_t *a, uint64_t sensitivity, dpm_rand_t *leader_rand,
                              dpm_rand_t *helper_rand)
{
    if (a->released || leader_rand == NULL || helper_rand == NULL) {
        return DPM_ERR_PARAM;
    }
    const dpm_prio3_t *v = &a->task->vdaf;
    dpm_rand_t *rand[2] = {leader_rand, helper_rand};
    dpm_status_t st = DPM_OK;
    for (int i = 0; i < 2 && st == DPM_OK; i++) { /* each aggregator, its own noise */
        st = agg_share_add_noise(a->task, sensitivity, rand[i],
                                 a->agg_share + (size_t)i * v->out_share_bytes);
    }
    a->released = st == DPM_OK;
    return st;
}

dpm_status_t agg_pair_collect(const agg_pair_t *a, int64_t *result, size_t result_len)
{
    if (!a->released) {
        return DPM_ERR_PARAM;
    }
    if (a->aggregated < a->task->min_batch_size) {
        return DPM_ERR_POLICY;
    }
    const dpm_prio3_t *v = &a->task->vdaf;
    return dpm_prio3_unshard_signed(v, a->agg_share, 2u * v->out_share_bytes, a->aggregated, result,
                                    result_len);
}

dpm_status_t agg_pair_unnoised(const agg_pair_t *a, uint64_t *result, size_t result_len)
{
    if (a->released) {
        return DPM_ERR_PARAM;
    }
    const dpm_prio3_t *v = &a->task->vdaf;
    return dpm_prio3_unshard(v, a->agg_share, 2u * v->out_share_bytes, a->aggregated, result,
                             result_len);
}
