/* SPDX-License-Identifier: Apache-2.0 */
/* One DAP aggregation job between a leader and a helper that each hold only their own key
 * (host-sim/aggregator/job.h), over the draft's bytes (dap_msg.h): devices' reports made by the
 * SDK's device calls -> the leader's VerifyInits in an AggregationJobInitReq -> the helper's
 * AggregationJobResp -> the leader's finish. Checked:
 *   - the two roles' output shares, aggregated and unsharded, are the exact sums, and equal what
 *     the one-process pair (pair.h) gives on the same reports;
 *   - a report whose helper share was damaged in transit: the helper rejects it
 *     (hpke_decrypt_error), the leader reads that and aggregates nothing of it;
 *   - a leader verifier share altered in the VerifyInit: the helper's verifier message fails
 *     (vdaf_verify_error) and nothing of the report is aggregated by either;
 *   - a helper answer that is not finish(message): invalid_message at the leader;
 *   - collection: each role's aggregate share sealed for the collector (share.h) opens only
 *     with the collector's key, for that role, task and collection request; the two opened
 *     shares unshard to the exact sums. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/dap_msg.h"
#include "aggregator/device.h"
#include "aggregator/job.h"
#include "aggregator/pair.h"
#include "aggregator/share.h"
#include "dpm/port_hpke.h"
#include "aggregator/task.h"
#include "test_rng.h"

#define LENGTH 6u
#define MAXV 20u
#define DEVICES 12u
#define BIG 65536u

typedef struct {
    agg_task_t task;
    dpm_dap_task_t t;
    agg_device_t *dev;
    uint8_t reports[DEVICES][4096];
    size_t report_len[DEVICES];
    int64_t want[LENGTH];
} fixture_t;

static fixture_t *fixture(void)
{
    fixture_t *f = calloc(1, sizeof(*f));
    dpm_prio3_t v;
    const char *why = NULL;
    assert_non_null(f);
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, LENGTH, MAXV, 4), DPM_OK);
    assert_int_equal(agg_task_make(&f->task, &v, DPM_EPS_ONE, 10, 77, &why), 0);
    assert_int_equal(agg_task_decode(&f->task, &f->t), DPM_OK);
    f->dev = agg_device_new(&f->task, &f->t);
    assert_non_null(f->dev);
    for (uint64_t i = 0; i < DEVICES; i++) {
        uint64_t m[LENGTH];
        for (uint32_t k = 0; k < LENGTH; k++) {
            m[k] = (i * 7u + k * 3u) % (MAXV + 1u);
            f->want[k] += (int64_t)m[k];
        }
        test_rng_t t;
        test_rng_seed(&t, 500u + i);
        assert_int_equal(agg_device_sumvec(f->dev, &f->task, test_rng_port(&t), m, LENGTH, &why),
                         DPM_OK);
        assert_true(f->dev->report_len <= sizeof(f->reports[i]));
        memcpy(f->reports[i], f->dev->report, f->dev->report_len);
        f->report_len[i] = f->dev->report_len;
    }
    return f;
}

static void fixture_free(fixture_t *f)
{
    agg_device_free(f->dev);
    free(f);
}

typedef struct {
    agg_role_t leader, helper;
    uint8_t *agg[2];  /* the leader's and the helper's aggregate shares */
    uint8_t *state;   /* the leader's kept states, one per report sent */
    uint8_t req[BIG]; /* the AggregationJobInitReq */
    size_t req_len;
    uint8_t resp[BIG]; /* the AggregationJobResp */
    size_t resp_len;
    uint32_t aggregated;   /* reports both aggregated */
    uint8_t code[DEVICES]; /* per report: the ReportError the leader ended with (0: aggregated) */
} job_t;

static void job_open(job_t *j, const fixture_t *f)
{
    memset(j, 0, sizeof(*j));
    const dpm_prio3_t *v = &f->t.vdaf;
    assert_int_equal(
        agg_role_init(&j->leader, &f->t, DPM_DAP_ROLE_LEADER, &f->task.key[0], f->task.verify_key),
        0);
    assert_int_equal(
        agg_role_init(&j->helper, &f->t, DPM_DAP_ROLE_HELPER, &f->task.key[1], f->task.verify_key),
        0);
    for (int i = 0; i < 2; i++) {
        j->agg[i] = calloc(1, v->out_share_bytes);
        assert_non_null(j->agg[i]);
    }
    j->state = malloc((size_t)DEVICES * v->state_bytes);
    assert_non_null(j->state);
}

static void job_close(job_t *j)
{
    agg_role_free(&j->leader);
    agg_role_free(&j->helper);
    free(j->agg[0]);
    free(j->agg[1]);
    free(j->state);
}

/* The leader: every report's VerifyInit after the request's head. `tamper` (optional) may
 * change a VerifyInit's bytes before it is appended. */
static void leader_request(job_t *j, const fixture_t *f,
                           void (*tamper)(uint32_t i, uint8_t *b, size_t n))
{
    const dpm_prio3_t *v = &f->t.vdaf;
    dap_agg_job_init_req_t head;
    memset(&head, 0, sizeof(head));
    assert_int_equal(dap_msg_agg_job_init_req_encode(&head, j->req, BIG, &j->req_len), DPM_OK);
    for (uint32_t i = 0; i < DEVICES; i++) {
        size_t n = 0;
        uint8_t code = 0xFF;
        assert_int_equal(agg_role_leader_init(&j->leader, f->reports[i], f->report_len[i],
                                              j->state + (size_t)i * v->state_bytes,
                                              j->req + j->req_len, BIG - j->req_len, &n, &code),
                         DPM_OK);
        assert_int_equal(code, 0);
        if (tamper != NULL) {
            tamper(i, j->req + j->req_len, n);
        }
        j->req_len += n;
    }
}

/* The helper: decode the request, answer each VerifyInit, aggregate what finished. */
static void helper_answer(job_t *j, const fixture_t *f)
{
    const dpm_prio3_t *v = &f->t.vdaf;
    dap_agg_job_init_req_t req;
    assert_int_equal(dap_msg_agg_job_init_req_decode(j->req, j->req_len, &req, NULL), DPM_OK);
    assert_int_equal(req.verify_inits.n, DEVICES);
    uint8_t *out = malloc(v->out_share_bytes);
    assert_non_null(out);
    size_t pos = 0;
    dap_verify_init_t vi;
    j->resp_len = 0;
    while (dap_msg_next_verify_init(&req.verify_inits, &pos, &vi) == DPM_OK) {
        int finished = -1;
        size_t n = 0;
        assert_int_equal(agg_role_helper_init(&j->helper, &vi, out, &finished,
                                              j->resp + j->resp_len, BIG - j->resp_len, &n),
                         DPM_OK);
        if (finished) { /* the caller commits: here, straight into the aggregate */
            assert_int_equal(
                dpm_prio3_aggregate(v, j->agg[1], v->out_share_bytes, out, v->out_share_bytes),
                DPM_OK);
        }
        j->resp_len += n;
    }
    free(out);
}

/* The leader: each VerifyResp against its kept state. */
static void leader_finish(job_t *j, const fixture_t *f)
{
    const dpm_prio3_t *v = &f->t.vdaf;
    dap_list_t resps;
    assert_int_equal(dap_msg_agg_job_resp_decode(j->resp, j->resp_len, &resps, NULL), DPM_OK);
    assert_int_equal(resps.n, DEVICES);
    uint8_t *out = malloc(v->out_share_bytes);
    assert_non_null(out);
    size_t pos = 0;
    dap_verify_resp_t vr;
    for (uint32_t i = 0; dap_msg_next_verify_resp(&resps, &pos, &vr) == DPM_OK; i++) {
        dpm_status_t st = agg_role_leader_finish(&j->leader, j->state + (size_t)i * v->state_bytes,
                                                 &vr, out, &j->code[i]);
        if (st == DPM_OK) {
            assert_int_equal(
                dpm_prio3_aggregate(v, j->agg[0], v->out_share_bytes, out, v->out_share_bytes),
                DPM_OK);
            j->aggregated++;
        } else {
            assert_int_not_equal(j->code[i], 0);
        }
    }
    free(out);
}

/* A whole job: open both roles, the leader's request, the helper's answer, the leader's finish. */
static void run_job(job_t *j, const fixture_t *f, void (*tamper)(uint32_t i, uint8_t *b, size_t n))
{
    job_open(j, f);
    leader_request(j, f, tamper);
    helper_answer(j, f);
    leader_finish(j, f);
}

static void sums(const job_t *j, const fixture_t *f, uint64_t *got)
{
    const dpm_prio3_t *v = &f->t.vdaf;
    uint8_t *both = malloc(2u * v->out_share_bytes);
    assert_non_null(both);
    memcpy(both, j->agg[0], v->out_share_bytes);
    memcpy(both + v->out_share_bytes, j->agg[1], v->out_share_bytes);
    assert_int_equal(
        dpm_prio3_unshard(v, both, 2u * v->out_share_bytes, j->aggregated, got, LENGTH), DPM_OK);
    free(both);
}

static void honest_job_gives_the_exact_sums(void **state)
{
    (void)state;
    fixture_t *f = fixture();
    job_t *j = malloc(sizeof(*j));
    assert_non_null(j);
    run_job(j, f, NULL);
    assert_int_equal(j->aggregated, DEVICES);
    uint64_t got[LENGTH];
    sums(j, f, got);
    /* the one-process pair on the same reports */
    agg_pair_t a;
    assert_int_equal(agg_pair_init(&a, &f->t, &f->task.key[0], &f->task.key[1], f->task.verify_key),
                     0);
    for (uint32_t i = 0; i < DEVICES; i++) {
        assert_int_equal(agg_pair_add(&a, f->reports[i], f->report_len[i], NULL), DPM_OK);
    }
    uint64_t pair[LENGTH];
    assert_int_equal(agg_pair_unnoised(&a, pair, LENGTH), DPM_OK);
    for (uint32_t k = 0; k < LENGTH; k++) {
        assert_int_equal((int64_t)got[k], f->want[k]);
        assert_int_equal(got[k], pair[k]);
    }
    agg_pair_free(&a);
    job_close(j);
    free(j);
    fixture_free(f);
}

/* Report 3's encrypted helper share, last payload byte (the tag) flipped. The VerifyInit ends
 * with payload<4-byte length> of the ping-pong message; the ReportShare's HpkeCiphertext payload
 * ends right before that length. */
static uint32_t g_vshare_bytes;
static void damage_helper_share(uint32_t i, uint8_t *b, size_t n)
{
    if (i == 3) {
        b[n - (4u + 5u + g_vshare_bytes) - 1u] ^= 0x01;
    }
}

/* Report 5's leader verifier share (inside the ping-pong initialize), last byte flipped. */
static void damage_leader_share(uint32_t i, uint8_t *b, size_t n)
{
    if (i == 5) {
        b[n - 1u] ^= 0x01;
    }
}

static void damaged_reports_count_for_neither(void **state)
{
    (void)state;
    fixture_t *f = fixture();
    job_t *j = malloc(sizeof(*j));
    assert_non_null(j);
    g_vshare_bytes = f->t.vdaf.verifier_share_bytes;
    for (int which = 0; which < 2; which++) {
        run_job(j, f, which == 0 ? damage_helper_share : damage_leader_share);
        uint32_t bad = which == 0 ? 3u : 5u;
        assert_int_equal(j->aggregated, DEVICES - 1u);
        assert_int_equal(j->code[bad], which == 0 ? DAP_REPORT_ERROR_HPKE_DECRYPT_ERROR
                                                  : DAP_REPORT_ERROR_VDAF_VERIFY_ERROR);
        uint64_t got[LENGTH];
        sums(j, f, got);
        for (uint32_t k = 0; k < LENGTH; k++) { /* the sums of the others, exactly */
            int64_t m = (int64_t)((bad * 7u + k * 3u) % (MAXV + 1u));
            assert_int_equal((int64_t)got[k], f->want[k] - m);
        }
        job_close(j);
    }
    free(j);
    fixture_free(f);
}

static void a_helper_answer_that_is_not_finish_is_refused(void **state)
{
    (void)state;
    fixture_t *f = fixture();
    job_t *j = malloc(sizeof(*j));
    assert_non_null(j);
    job_open(j, f);
    leader_request(j, f, NULL);
    const dpm_prio3_t *v = &f->t.vdaf;
    uint8_t *out = malloc(v->out_share_bytes);
    assert_non_null(out);
    static const uint8_t id[DPM_DAP_REPORT_ID_BYTES];
    uint8_t payload[5] = {AGG_PP_INITIALIZE, 0, 0, 0, 0}; /* not finish(message) */
    dap_verify_resp_t vr = {id, DAP_VERIFY_CONTINUE, {payload, sizeof(payload)}, 0};
    uint8_t code = 0;
    assert_int_equal(agg_role_leader_finish(&j->leader, j->state, &vr, out, &code),
                     DPM_ERR_PROTOCOL);
    assert_int_equal(code, DAP_REPORT_ERROR_INVALID_MESSAGE);
    vr.type = DAP_VERIFY_REJECT; /* a reject carries the helper's own reason */
    vr.report_error = DAP_REPORT_ERROR_HPKE_DECRYPT_ERROR;
    assert_int_equal(agg_role_leader_finish(&j->leader, j->state, &vr, out, &code), DPM_ERR_VERIFY);
    assert_int_equal(code, DAP_REPORT_ERROR_HPKE_DECRYPT_ERROR);
    /* roles are checked: a helper cannot run the leader's steps */
    size_t n = 0;
    assert_int_equal(agg_role_leader_init(&j->helper, f->reports[0], f->report_len[0], j->state,
                                          j->req, BIG, &n, &code),
                     DPM_ERR_PARAM);
    free(out);
    job_close(j);
    free(j);
    fixture_free(f);
}

/* The collector's key and the CollectionJobReq it sent (a time interval). */
static void collector(dpm_dap_hpke_key_t *key, dpm_hpke_config_t *cfg, uint8_t *req, size_t *len)
{
    static const uint8_t ikm[32] = {7, 7, 7};
    memset(key, 0, sizeof(*key));
    key->config_id = 9;
    key->aead_id = DPM_HPKE_AEAD_AES_128_GCM;
    assert_int_equal(dpm_hpke_derive_keypair(ikm, sizeof(ikm), &key->kp), DPM_OK);
    memset(cfg, 0, sizeof(*cfg));
    cfg->id = 9;
    cfg->kem_id = DPM_HPKE_KEM_X25519_SHA256;
    cfg->kdf_id = DPM_HPKE_KDF_HKDF_SHA256;
    cfg->aead_id = DPM_HPKE_AEAD_AES_128_GCM;
    memcpy(cfg->public_key, key->kp.pk, DPM_HPKE_NPK);
    dap_collection_job_req_t q;
    memset(&q, 0, sizeof(q));
    q.query.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    q.query.interval.start = 0;
    q.query.interval.duration = 1u << 20;
    assert_int_equal(dap_msg_collection_job_req_encode(&q, req, 256, len), DPM_OK);
}

static void aggregate_shares_open_only_for_their_collection(void **state)
{
    (void)state;
    fixture_t *f = fixture();
    job_t *j = malloc(sizeof(*j));
    assert_non_null(j);
    run_job(j, f, NULL);
    const dpm_prio3_t *v = &f->t.vdaf;
    size_t L = v->out_share_bytes;
    dpm_dap_hpke_key_t key;
    dpm_hpke_config_t cfg;
    uint8_t req[256], other[256];
    size_t req_len = 0, other_len = 0;
    collector(&key, &cfg, req, &req_len);
    memcpy(other, req, req_len);
    other[req_len - 3] ^= 0x01; /* another interval */
    other_len = req_len;
    uint8_t enc[2][DPM_HPKE_NENC], *payload[2], *opened = malloc(2u * L);
    dap_hpke_ct_t ct[2];
    assert_non_null(opened);
    static const uint8_t ikm_e[2][32] = {{1}, {2}};
    for (int i = 0; i < 2; i++) {
        uint8_t role = i == 0 ? DPM_DAP_ROLE_LEADER : DPM_DAP_ROLE_HELPER;
        payload[i] = malloc(L + DPM_HPKE_NT);
        assert_non_null(payload[i]);
        assert_int_equal(agg_share_seal(&f->t, role, &cfg, req, req_len, j->agg[i], L, ikm_e[i], 32,
                                        enc[i], payload[i], &ct[i]),
                         DPM_OK);
        assert_int_equal(ct[i].config_id, 9);
        assert_int_equal(
            agg_share_open(&f->t, role, &key, req, req_len, &ct[i], opened + (size_t)i * L, L),
            DPM_OK);
        assert_memory_equal(opened + (size_t)i * L, j->agg[i], L);
        /* another request, the other role: does not open */
        uint8_t *tmp = malloc(L);
        assert_non_null(tmp);
        assert_int_equal(agg_share_open(&f->t, role, &key, other, other_len, &ct[i], tmp, L),
                         DPM_ERR_CORRUPT);
        uint8_t swapped = i == 0 ? DPM_DAP_ROLE_HELPER : DPM_DAP_ROLE_LEADER;
        assert_int_equal(agg_share_open(&f->t, swapped, &key, req, req_len, &ct[i], tmp, L),
                         DPM_ERR_CORRUPT);
        dpm_dap_task_t t2 = f->t; /* another task id */
        t2.id[0] ^= 0x80;
        assert_int_equal(agg_share_open(&t2, role, &key, req, req_len, &ct[i], tmp, L),
                         DPM_ERR_CORRUPT);
        dap_hpke_ct_t wrong = ct[i];
        wrong.config_id = 10;
        assert_int_equal(agg_share_open(&f->t, role, &key, req, req_len, &wrong, tmp, L),
                         DPM_ERR_PROTOCOL);
        free(tmp);
    }
    uint64_t got[LENGTH];
    assert_int_equal(dpm_prio3_unshard(v, opened, 2u * L, j->aggregated, got, LENGTH), DPM_OK);
    for (uint32_t k = 0; k < LENGTH; k++) {
        assert_int_equal((int64_t)got[k], f->want[k]);
    }
    free(payload[0]);
    free(payload[1]);
    free(opened);
    job_close(j);
    free(j);
    fixture_free(f);
}

/* agg_upload_check: each rule on a real report, its time and config id moved by hand. */
static void upload_checks(void **state)
{
    (void)state;
    fixture_t *f = fixture();
    dpm_dap_report_view_t r;
    assert_int_equal(dpm_dap_report_decode(f->reports[0], f->report_len[0], &r, NULL), DPM_OK);
    dpm_dap_task_t t = f->t;
    uint64_t p = t.time_precision, now = (r.time + 1u) * p;
    uint8_t id = r.share[0].config_id;
    assert_int_equal(agg_upload_check(&t, &r, id, now, 0), 0);
    assert_int_equal(agg_upload_check(&t, &r, (uint8_t)(id + 1u), now, 0),
                     DAP_REPORT_ERROR_OUTDATED_CONFIG);
    /* from the future: refused beyond the skew, kept within it */
    assert_int_equal(agg_upload_check(&t, &r, id, (r.time - 2u) * p, 0),
                     DAP_REPORT_ERROR_REPORT_TOO_EARLY);
    assert_int_equal(agg_upload_check(&t, &r, id, (r.time - 2u) * p, 2u * p), 0);
    /* the task's interval: inside, at its end (excluded), before its start */
    t.has_interval = 1;
    t.interval_start = r.time;
    t.interval_duration = 1;
    assert_int_equal(agg_upload_check(&t, &r, id, now, 0), 0);
    t.interval_start = r.time - 1u;
    assert_int_equal(agg_upload_check(&t, &r, id, now, 0), DAP_REPORT_ERROR_REPORT_DROPPED);
    t.interval_start = r.time + 1u;
    assert_int_equal(agg_upload_check(&t, &r, id, now, 0), DAP_REPORT_ERROR_REPORT_DROPPED);
    t.has_interval = 0;
    static const uint8_t ext[4] = {0, 1, 0, 0};
    r.public_extensions.p = ext;
    r.public_extensions.len = sizeof(ext);
    assert_int_equal(agg_upload_check(&t, &r, id, now, 0), DAP_REPORT_ERROR_INVALID_MESSAGE);
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(honest_job_gives_the_exact_sums),
        cmocka_unit_test(damaged_reports_count_for_neither),
        cmocka_unit_test(a_helper_answer_that_is_not_finish_is_refused),
        cmocka_unit_test(aggregate_shares_open_only_for_their_collection),
        cmocka_unit_test(upload_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
