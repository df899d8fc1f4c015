/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP helper's endpoints over bytes (host-sim/collector/dap/dap_helper.h) with its store on
 * SQLite: a leader (aggregator/job.h) sends real reports made by the SDK's device calls.
 * Checked:
 *   - an aggregation job: 200, the job id the request's hash, every report continued; the
 *     leader finishes all of them; the same request again: the same id and the same bytes,
 *     nothing counted twice;
 *   - a second job carrying an aggregated report again: that one rejected report_replayed;
 *     a damaged helper share: hpke_decrypt_error; a report from beyond the clock's skew:
 *     report_too_early; none of them summed;
 *   - bad requests: garbage (invalidMessage), an aggregation parameter
 *     (invalidAggregationParameter), another verification key id and a report twice in one
 *     job (invalidMessage);
 *   - the aggregate share: below the task's minimum (invalidBatchSize), a batch selector beyond
 *     the collector's query (batchInvalid), the leader's count or
 *     checksum wrong (batchMismatch; nothing marked), then the right request: the sealed share
 *     opens for the collector, and with the leader's unnoised share it gives the exact sums
 *     plus the helper's noise (present, within its bounds); the same request again gives the
 *     same bytes (the noise drawn once); another request over the batch: batchOverlap. */
#include <stdio.h>
#include <unistd.h>

#include "aggregator/dap_msg.h"
#include "aggregator/job.h"
#include "aggregator/share.h"
#include "collector/dap/dap_helper.h"
#include "dap_roles.h"
#include "mbedtls/sha256.h"

#define N ROLES_N
#define LENGTH ROLES_LENGTH
#define BIG 65536u

typedef struct {
    roles_t *r;
    agg_role_t leader;
    uint8_t *state;
    dap_store_t *store;
    char path[128];
    test_rng_t rng;
    dpm_rng_t port;
    dpm_rand_t rand;
    dap_helper_t helper;
} fx_t;

static fx_t *fx_new(void)
{
    fx_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->r = roles_new();
    const dpm_dap_task_t *t = &f->r->t;
    assert_int_equal(agg_role_init(&f->leader, t, DPM_DAP_ROLE_LEADER, &f->r->task.key[0],
                                   f->r->task.verify_key),
                     0);
    f->state = malloc((size_t)(N + 1) * t->vdaf.state_bytes);
    assert_non_null(f->state);
    snprintf(f->path, sizeof(f->path), "/tmp/test_dap_helper_%d.db", (int)getpid());
    unlink(f->path);
    char err[256];
    assert_int_equal(dap_store_open(&f->store, f->path, err, sizeof(err)), 0);
    assert_int_equal(test_rand_init(&f->rand, &f->rng, &f->port, 4242), DPM_OK);
    assert_int_equal(dap_helper_init(&f->helper, t, &f->r->task.key[1], f->r->task.verify_key,
                                     f->store, &f->r->collector, ROLES_SENSITIVITY, &f->rand),
                     0);
    return f;
}

static void fx_free(fx_t *f)
{
    dap_helper_free(&f->helper);
    dap_store_close(f->store);
    agg_role_free(&f->leader);
    free(f->state);
    unlink(f->path);
    free(f->r);
    free(f);
}

/* The leader's AggregationJobInitReq for reports idx[0, n); tamper (optional) changes one
 * VerifyInit's bytes. */
static size_t leader_request(fx_t *f, const uint32_t *idx, size_t n, uint8_t *req,
                             void (*tamper)(uint32_t i, uint8_t *b, size_t len))
{
    dap_agg_job_init_req_t head;
    memset(&head, 0, sizeof(head));
    size_t len = 0;
    assert_int_equal(dap_msg_agg_job_init_req_encode(&head, req, BIG, &len), DPM_OK);
    for (size_t k = 0; k < n; k++) {
        uint32_t i = idx[k];
        size_t m = 0;
        uint8_t code = 0xFF;
        assert_int_equal(agg_role_leader_init(&f->leader, f->r->reports[i], f->r->report_len[i],
                                              f->state + (size_t)i * f->r->t.vdaf.state_bytes,
                                              req + len, BIG - len, &m, &code),
                         DPM_OK);
        if (tamper != NULL) {
            tamper(i, req + len, m);
        }
        len += m;
    }
    return len;
}

/* The leader finishing a response for reports idx[0, n): each one's ReportError (0 kept) and
 * its output shares summed into agg. */
static void leader_finish(fx_t *f, const uint32_t *idx, size_t n, const uint8_t *resp, size_t len,
                          uint8_t *errors, uint8_t *agg)
{
    const dpm_prio3_t *v = &f->r->t.vdaf;
    dap_list_t resps;
    assert_int_equal(dap_msg_agg_job_resp_decode(resp, len, &resps, NULL), DPM_OK);
    assert_int_equal(resps.n, n);
    uint8_t *out = malloc(v->out_share_bytes);
    assert_non_null(out);
    size_t pos = 0;
    dap_verify_resp_t vr;
    for (size_t k = 0; dap_msg_next_verify_resp(&resps, &pos, &vr) == DPM_OK; k++) {
        uint32_t i = idx[k];
        dpm_status_t st = agg_role_leader_finish(&f->leader, f->state + (size_t)i * v->state_bytes,
                                                 &vr, out, &errors[k]);
        if (st == DPM_OK) {
            assert_int_equal(
                dpm_prio3_aggregate(v, agg, v->out_share_bytes, out, v->out_share_bytes), DPM_OK);
        }
    }
    free(out);
}

static const uint32_t ALL[N] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

/* Report 3's encrypted helper share, last payload byte (its tag) flipped (see
 * test_aggregator_job.c: the ping-pong payload follows it). */
static uint32_t g_vshare_bytes;
static void damage_helper_share(uint32_t i, uint8_t *b, size_t n)
{
    if (i == 3) {
        b[n - (4u + 5u + g_vshare_bytes) - 1u] ^= 0x01;
    }
}

static void jobs_once_replays_and_rejects(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    const dpm_prio3_t *v = &f->r->t.vdaf;
    g_vshare_bytes = v->verifier_share_bytes;
    uint64_t now = roles_now(f->r);
    uint8_t *req = malloc(BIG), *resp = malloc(BIG), *resp2 = malloc(BIG);
    uint8_t *agg = calloc(1, v->out_share_bytes);
    assert_true(req && resp && resp2 && agg);
    /* job 1: reports 0..9, report 3's helper share damaged */
    size_t len = leader_request(f, ALL, N, req, damage_helper_share), rlen = 0, rlen2 = 0;
    dap_answer_t a;
    dap_helper_aggregation_job(&f->helper, req, len, now, resp, BIG, &rlen, &a);
    assert_int_equal(a.status, 200);
    uint8_t digest[32];
    assert_int_equal(mbedtls_sha256(req, len, digest, 0), 0);
    assert_memory_equal(a.id, digest, 16);
    /* the same request again: the same id and bytes, nothing counted twice */
    dap_answer_t again;
    dap_helper_aggregation_job(&f->helper, req, len, now, resp2, BIG, &rlen2, &again);
    assert_int_equal(again.status, 200);
    assert_memory_equal(again.id, a.id, 16);
    assert_int_equal(rlen2, rlen);
    assert_memory_equal(resp2, resp, rlen);
    uint8_t errors[N];
    leader_finish(f, ALL, N, resp, rlen, errors, agg);
    for (uint32_t i = 0; i < N; i++) {
        assert_int_equal(errors[i], i == 3 ? DAP_REPORT_ERROR_HPKE_DECRYPT_ERROR : 0);
    }
    assert_int_equal(dap_store_rejected(f->store, f->r->t.id, DAP_REPORT_ERROR_HPKE_DECRYPT_ERROR),
                     1);
    /* job 2: report 10 (new) and report 5 again: 5 is a replay */
    const uint32_t two[2] = {N, 5};
    len = leader_request(f, two, 2, req, NULL);
    dap_helper_aggregation_job(&f->helper, req, len, now, resp, BIG, &rlen, &a);
    assert_int_equal(a.status, 200);
    uint8_t e2[2];
    uint8_t *scratch = calloc(1, v->out_share_bytes);
    assert_non_null(scratch);
    leader_finish(f, two, 2, resp, rlen, e2, scratch);
    assert_int_equal(e2[0], 0);
    assert_int_equal(e2[1], DAP_REPORT_ERROR_REPORT_REPLAYED);
    /* job 3: report 10 again, sent before its time (the clock far behind): too early */
    const uint32_t early[1] = {N};
    len = leader_request(f, early, 1, req, NULL);
    dap_helper_aggregation_job(&f->helper, req, len, f->r->t.time_precision, resp, BIG, &rlen, &a);
    assert_int_equal(a.status, 200);
    leader_finish(f, early, 1, resp, rlen, e2, scratch);
    assert_int_equal(e2[0], DAP_REPORT_ERROR_REPORT_TOO_EARLY);
    free(scratch);
    free(req);
    free(resp);
    free(resp2);
    free(agg);
    fx_free(f);
}

static void bad_requests_are_refused(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    uint8_t *req = malloc(BIG), *resp = malloc(BIG);
    assert_true(req && resp);
    uint64_t now = roles_now(f->r);
    size_t rlen = 0;
    dap_answer_t a;
    static const uint8_t garbage[7] = {0, 0, 0, 0, 9, 9, 9};
    dap_helper_aggregation_job(&f->helper, garbage, sizeof(garbage), now, resp, BIG, &rlen, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(a.problem, "invalidMessage");
    assert_int_equal(rlen, 0);
    size_t len = leader_request(f, ALL, 2, req, NULL);
    req[0] = 1; /* verification_key_id */
    dap_helper_aggregation_job(&f->helper, req, len, now, resp, BIG, &rlen, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(a.problem, "invalidMessage");
    assert_non_null(strstr(a.detail, "verification key"));
    /* the same report twice in one job: the whole job is invalid */
    static const uint32_t twice[2] = {3, 3};
    len = leader_request(f, twice, 2, req, NULL);
    dap_helper_aggregation_job(&f->helper, req, len, now, resp, BIG, &rlen, &a);
    assert_int_equal(a.status, 400);
    assert_non_null(strstr(a.detail, "twice"));
    /* an aggregation parameter: the head re-encoded with one byte of it */
    dap_agg_job_init_req_t head;
    memset(&head, 0, sizeof(head));
    static const uint8_t param[1] = {7};
    head.agg_param.p = param;
    head.agg_param.len = 1;
    size_t hl = 0;
    assert_int_equal(dap_msg_agg_job_init_req_encode(&head, req, BIG, &hl), DPM_OK);
    size_t m = 0;
    uint8_t code = 0;
    assert_int_equal(agg_role_leader_init(&f->leader, f->r->reports[0], f->r->report_len[0],
                                          f->state, req + hl, BIG - hl, &m, &code),
                     DPM_OK);
    dap_helper_aggregation_job(&f->helper, req, hl + m, now, resp, BIG, &rlen, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(a.problem, "invalidAggregationParameter");
    free(req);
    free(resp);
    fx_free(f);
}

/* An AggregateShareReq over [start, start + duration) with count and checksum; the
 * collector's query is the same interval, or one of g_query_duration when that is set. */
static uint64_t g_query_duration;
static size_t share_req(uint64_t start, uint64_t duration, uint64_t count, const uint8_t *checksum,
                        uint8_t *out, uint8_t *coll, size_t *coll_len)
{
    dap_agg_share_req_t r;
    memset(&r, 0, sizeof(r));
    r.collection_job_req.query.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    r.collection_job_req.query.interval.start = start;
    r.collection_job_req.query.interval.duration = g_query_duration ? g_query_duration : duration;
    assert_int_equal(dap_msg_collection_job_req_encode(&r.collection_job_req, coll, 256, coll_len),
                     DPM_OK);
    r.batch_selector.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    r.batch_selector.interval.start = start;
    r.batch_selector.interval.duration = duration;
    r.report_count = count;
    r.checksum = checksum;
    size_t len = 0;
    assert_int_equal(dap_msg_agg_share_req_encode(&r, out, 1024, &len), DPM_OK);
    return len;
}

static void aggregate_share_released_once(void **state)
{
    (void)state;
    fx_t *f = fx_new();
    const dpm_prio3_t *v = &f->r->t.vdaf;
    uint64_t b = roles_bucket(f->r), now = (b + 1u) * f->r->t.time_precision;
    uint8_t *req = malloc(BIG), *resp = malloc(BIG);
    uint8_t *both = calloc(2, v->out_share_bytes);
    assert_true(req && resp && both);
    uint8_t errors[N], checksum[32] = {0}, wrong[32] = {0};
    size_t len, rlen = 0;
    dap_answer_t a;
    /* only 4 reports first: below the task's minimum of 5 */
    len = leader_request(f, ALL, 4, req, NULL);
    dap_helper_aggregation_job(&f->helper, req, len, now, resp, BIG, &rlen, &a);
    assert_int_equal(a.status, 200);
    leader_finish(f, ALL, 4, resp, rlen, errors, both);
    uint8_t sreq[1024], coll[256], share[1024];
    size_t coll_len = 0, slen = 0;
    len = share_req(b, 1, 4, checksum, sreq, coll, &coll_len);
    dap_helper_aggregate_share(&f->helper, sreq, len, share, sizeof(share), &slen, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(a.problem, "invalidBatchSize");
    /* the rest */
    len = leader_request(f, ALL + 4, N - 4, req, NULL);
    dap_helper_aggregation_job(&f->helper, req, len, now, resp, BIG, &rlen, &a);
    assert_int_equal(a.status, 200);
    leader_finish(f, ALL + 4, N - 4, resp, rlen, errors, both);
    for (uint32_t i = 0; i < N; i++) {
        dpm_dap_report_view_t r;
        uint8_t h[32];
        assert_int_equal(dpm_dap_report_decode(f->r->reports[i], f->r->report_len[i], &r, NULL),
                         DPM_OK);
        assert_int_equal(mbedtls_sha256(r.report_id, DPM_DAP_REPORT_ID_BYTES, h, 0), 0);
        for (int k = 0; k < 32; k++) {
            checksum[k] ^= h[k];
        }
    }
    /* a batch selector beyond the collector's query (its AAD would name another batch) */
    g_query_duration = 1;
    len = share_req(b, 2, N, checksum, sreq, coll, &coll_len);
    g_query_duration = 0;
    dap_helper_aggregate_share(&f->helper, sreq, len, share, sizeof(share), &slen, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(a.problem, "batchInvalid");
    /* the leader's count or checksum wrong: batchMismatch, nothing marked */
    len = share_req(b, 1, N - 1, checksum, sreq, coll, &coll_len);
    dap_helper_aggregate_share(&f->helper, sreq, len, share, sizeof(share), &slen, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(a.problem, "batchMismatch");
    len = share_req(b, 1, N, wrong, sreq, coll, &coll_len);
    dap_helper_aggregate_share(&f->helper, sreq, len, share, sizeof(share), &slen, &a);
    assert_string_equal(a.problem, "batchMismatch");
    /* the right request */
    len = share_req(b, 1, N, checksum, sreq, coll, &coll_len);
    dap_helper_aggregate_share(&f->helper, sreq, len, share, sizeof(share), &slen, &a);
    assert_int_equal(a.status, 200);
    uint8_t share2[1024];
    size_t slen2 = 0;
    dap_helper_aggregate_share(&f->helper, sreq, len, share2, sizeof(share2), &slen2, &a);
    assert_int_equal(a.status, 200);
    assert_int_equal(slen2, slen);
    assert_memory_equal(share2, share, slen); /* the same release: no second noise */
    /* opened by the collector, beside the leader's unnoised share: the sums plus noise */
    dap_hpke_ct_t ct;
    assert_int_equal(dap_msg_agg_share_decode(share, slen, &ct, NULL), DPM_OK);
    assert_int_equal(agg_share_open(&f->r->t, DPM_DAP_ROLE_HELPER, &f->r->collector_key, coll,
                                    coll_len, &ct, both + v->out_share_bytes, v->out_share_bytes),
                     DPM_OK);
    int64_t got[LENGTH];
    assert_int_equal(dpm_prio3_unshard_signed(v, both, 2u * v->out_share_bytes, N, got, LENGTH),
                     DPM_OK);
    int noised = 0;
    for (uint32_t k = 0; k < LENGTH; k++) {
        int64_t d = got[k] - f->r->want[k];
        /* discrete Laplace of scale 20: beyond 500 with probability about 1e-11 */
        assert_true(d > -500 && d < 500);
        noised |= d != 0;
    }
    assert_true(noised);
    /* another request over the same batch */
    len = share_req(b, 2, N, checksum, sreq, coll, &coll_len);
    dap_helper_aggregate_share(&f->helper, sreq, len, share, sizeof(share), &slen, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(a.problem, "batchOverlap");
    free(req);
    free(resp);
    free(both);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jobs_once_replays_and_rejects),
        cmocka_unit_test(bad_requests_are_refused),
        cmocka_unit_test(aggregate_share_released_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
