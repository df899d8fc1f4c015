/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP leader (host-sim/collector/dap/dap_leader.h) with a helper (dap_helper.h), each on its
 * own SQLite store, over the draft's bytes: devices' reports uploaded to the leader, its jobs
 * through the helper, a collector's collection job. Checked:
 *   - upload: all kept (an empty answer); a report again: report_replayed; one from beyond the
 *     clock: report_too_early (not kept); garbage: 400 and nothing kept;
 *   - a collection before the jobs ran: 202, nothing collected (the reports would be lost);
 *   - jobs: a leader that dies after the helper answered and before its own commit: its job goes
 *     stale and is sent again byte for byte, the helper answers it as before, and every report
 *     is counted once by both; a helper answer that is garbage, or whose finish message was
 *     altered: the job abandoned, nothing committed, sent again later;
 *   - collection: the helper down (502, nothing released, the batch held for the request: another
 *     query over it is batchOverlap), then up: 200, the same release to a second call of the
 *     same request that completes while the first one's helper call is out, the report count, and
 *     the collector opens both sealed shares to the exact sums plus both aggregators' noise
 *     (present, within its bound); the same request again: the same bytes; an overlapping
 *     query (batchOverlap), an empty one and one past INT64_MAX (batchInvalid), one without reports
 *     (invalidBatchSize). */
#include <stdio.h>
#include <unistd.h>

#include "aggregator/share.h"
#include "collector/dap/dap_helper.h"
#include "collector/dap/dap_leader.h"
#include "dap_roles.h"

#define N ROLES_N
#define BIG 65536u

typedef struct {
    roles_t *f;
    dap_store_t *ls, *hs;
    char lpath[96], hpath[96];
    test_rng_t lr, hr;
    dpm_rng_t lp, hp;
    dpm_rand_t lrand, hrand;
    dap_leader_t leader;
    dap_helper_t helper;
    int helper_down;
    int reenter; /* to_helper first runs the same collection again (another thread's) */
    const uint8_t *creq;
    size_t clen, inner_len;
    uint8_t *inner;
    dap_answer_t inner_a;
    uint8_t *req, *resp;
} world_t;

static world_t *world_new(void)
{
    world_t *w = calloc(1, sizeof(*w));
    assert_non_null(w);
    w->f = roles_new();
    char err[256];
    snprintf(w->lpath, sizeof(w->lpath), "/tmp/test_dap_leader_%d_l.db", (int)getpid());
    snprintf(w->hpath, sizeof(w->hpath), "/tmp/test_dap_leader_%d_h.db", (int)getpid());
    unlink(w->lpath);
    unlink(w->hpath);
    assert_int_equal(dap_store_open(&w->ls, w->lpath, err, sizeof(err)), 0);
    assert_int_equal(dap_store_open(&w->hs, w->hpath, err, sizeof(err)), 0);
    assert_int_equal(test_rand_init(&w->lrand, &w->lr, &w->lp, 11), DPM_OK);
    assert_int_equal(test_rand_init(&w->hrand, &w->hr, &w->hp, 12), DPM_OK);
    roles_t *f = w->f;
    assert_int_equal(dap_leader_init(&w->leader, &f->t, &f->task.key[0], f->task.verify_key, w->ls,
                                     &f->collector, ROLES_SENSITIVITY, &w->lrand),
                     0);
    assert_int_equal(dap_helper_init(&w->helper, &f->t, &f->task.key[1], f->task.verify_key, w->hs,
                                     &f->collector, ROLES_SENSITIVITY, &w->hrand),
                     0);
    w->req = malloc(BIG);
    w->resp = malloc(BIG);
    assert_true(w->req && w->resp);
    return w;
}

static void world_free(world_t *w)
{
    dap_leader_free(&w->leader);
    dap_helper_free(&w->helper);
    dap_store_close(w->ls);
    dap_store_close(w->hs);
    unlink(w->lpath);
    unlink(w->hpath);
    free(w->req);
    free(w->resp);
    free(w->f);
    free(w);
}

/* The leader's HTTPS call to the helper's aggregate_shares, here a direct one. */
static int to_helper(void *ctx, const uint8_t *req, size_t len, uint8_t *out, size_t cap,
                     size_t *out_len, char *why, size_t whycap)
{
    world_t *w = ctx;
    if (w->helper_down) {
        snprintf(why, whycap, "connection refused");
        return -1;
    }
    if (w->reenter) { /* the leader holds no transaction now: the same request completes */
        w->reenter = 0;
        dap_leader_collection_job(&w->leader, w->creq, w->clen, to_helper, w, w->inner, BIG,
                                  &w->inner_len, &w->inner_a);
    }
    dap_answer_t a;
    dap_helper_aggregate_share(&w->helper, req, len, out, cap, out_len, &a);
    if (a.status != 200) {
        snprintf(why, whycap, "%d %s: %s", a.status, a.problem ? a.problem : "", a.detail);
        return -1;
    }
    return 0;
}

/* An UploadRequest of reports idx[0, n) at now_s: the leader's answer. */
static size_t upload(world_t *w, const uint32_t *idx, size_t n, uint64_t now_s, dap_answer_t *a)
{
    size_t len = 0, out_len = 0;
    for (size_t k = 0; k < n; k++) {
        memcpy(w->req + len, w->f->reports[idx[k]], w->f->report_len[idx[k]]);
        len += w->f->report_len[idx[k]];
    }
    dap_leader_upload(&w->leader, w->req, len, now_s, w->resp, BIG, &out_len, a);
    return out_len;
}

typedef enum { FINISH, DIE_BEFORE_COMMIT, GARBAGE_ANSWER, TAMPERED_ANSWER } how_t;

/* One job driven at now_s: 1 (a job), 0 (none). With DIE_BEFORE_COMMIT the helper answers and
 * the leader drops everything; *sent (if not NULL) gets a copy of the request. */
static int drive(world_t *w, uint64_t now_s, how_t how, uint8_t *sent, size_t *sent_len)
{
    dap_leader_job_t j;
    char why[200];
    int got = dap_leader_job_start(&w->leader, 4, now_s, 60, &j, why, sizeof(why));
    assert_true(got >= 0);
    if (got == 0) {
        return 0;
    }
    if (sent != NULL) {
        memcpy(sent, j.req, j.req_len);
        *sent_len = j.req_len;
    }
    size_t rlen = 0;
    if (j.sent > 0) {
        dap_answer_t a;
        dap_helper_aggregation_job(&w->helper, j.req, j.req_len, now_s, w->resp, BIG, &rlen, &a);
        assert_int_equal(a.status, 200);
    }
    if (how == TAMPERED_ANSWER) { /* the last report's finish message altered in transit */
        w->resp[rlen - 1] ^= 0x01;
        assert_int_equal(dap_leader_job_finish(&w->leader, &j, w->resp, rlen, why, sizeof(why)),
                         -1);
        assert_non_null(strstr(why, "abandoned"));
    } else if (how == GARBAGE_ANSWER) {
        static const uint8_t junk[5] = {1, 2, 3, 4, 5};
        assert_int_equal(
            dap_leader_job_finish(&w->leader, &j, junk, sizeof(junk), why, sizeof(why)), -1);
    } else if (how == FINISH) {
        if (dap_leader_job_finish(&w->leader, &j, j.sent ? w->resp : NULL, rlen, why,
                                  sizeof(why)) != 0) {
            fail_msg("finish: %s", why);
        }
    }
    dap_leader_job_free(&j);
    return 1;
}

/* A collector's CollectionJobReq over [start, start + duration). */
static size_t coll_req(uint64_t start, uint64_t duration, uint8_t *out)
{
    dap_collection_job_req_t q;
    memset(&q, 0, sizeof(q));
    q.query.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    q.query.interval.start = start;
    q.query.interval.duration = duration;
    size_t len = 0;
    assert_int_equal(dap_msg_collection_job_req_encode(&q, out, 256, &len), DPM_OK);
    return len;
}

static const uint32_t ALL[N] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

static void upload_jobs_and_collection_count_each_report_once(void **state)
{
    (void)state;
    world_t *w = world_new();
    roles_t *f = w->f;
    const dpm_prio3_t *v = &f->t.vdaf;
    uint64_t now = roles_now(f), b = roles_bucket(f);
    dap_answer_t a;
    /* upload */
    assert_int_equal(upload(w, ALL, N, now, &a), 0);
    assert_int_equal(a.status, 200);
    const uint32_t again[1] = {0}, late[1] = {N};
    size_t n = upload(w, again, 1, now, &a);
    dap_list_t st;
    dap_upload_status_t us;
    size_t pos = 0;
    assert_int_equal(dap_msg_upload_errors_decode(w->resp, n, &st, NULL), DPM_OK);
    assert_int_equal(st.n, 1);
    assert_int_equal(dap_msg_next_upload_status(&st, &pos, &us), DPM_OK);
    assert_int_equal(us.error, DAP_REPORT_ERROR_REPORT_REPLAYED);
    n = upload(w, late, 1, f->t.time_precision, &a); /* a clock far behind the report */
    pos = 0;
    assert_int_equal(dap_msg_upload_errors_decode(w->resp, n, &st, NULL), DPM_OK);
    assert_int_equal(dap_msg_next_upload_status(&st, &pos, &us), DPM_OK);
    assert_int_equal(us.error, DAP_REPORT_ERROR_REPORT_TOO_EARLY);
    static const uint8_t garbage[9] = {1, 2, 3};
    size_t out_len = 0;
    dap_leader_upload(&w->leader, garbage, sizeof(garbage), now, w->resp, BIG, &out_len, &a);
    assert_int_equal(a.status, 400);
    assert_string_equal(a.problem, "invalidMessage");
    /* a collection before any job ran: the reports would be lost, so not yet */
    uint8_t early_req[256], early_out[64];
    size_t early_len = coll_req(b, 1, early_req), early_out_len = 0;
    dap_leader_collection_job(&w->leader, early_req, early_len, to_helper, w, early_out,
                              sizeof(early_out), &early_out_len, &a);
    assert_int_equal(a.status, 202);
    assert_int_equal(early_out_len, 0);
    /* jobs: the first one's leader dies after the helper committed */
    uint8_t *first = malloc(BIG), *second = malloc(BIG);
    assert_true(first && second);
    size_t first_len = 0, second_len = 0;
    assert_int_equal(drive(w, now, DIE_BEFORE_COMMIT, first, &first_len), 1);
    /* a garbage answer to the next: nothing committed */
    assert_int_equal(drive(w, now + 1, GARBAGE_ANSWER, NULL, NULL), 1);
    /* a minute later the first is stale: sent again byte for byte, and the helper's answer
     * (its first commit's) tampered in transit: abandoned, nothing committed */
    assert_int_equal(drive(w, now + 61, TAMPERED_ANSWER, second, &second_len), 1);
    assert_int_equal(second_len, first_len);
    assert_memory_equal(second, first, first_len);
    /* later both are stale: sent again and finished, then the rest */
    int jobs = 0;
    while (drive(w, now + 123, FINISH, NULL, NULL) == 1) {
        jobs++;
    }
    assert_int_equal(jobs, 3); /* the first, the garbage one, the last new one */
    free(first);
    free(second);
    assert_int_equal(dap_store_rejected(w->hs, f->t.id, DAP_REPORT_ERROR_REPORT_REPLAYED), 0);
    assert_int_equal(dap_store_rejected(w->ls, f->t.id, DAP_REPORT_ERROR_REPORT_REPLAYED), 0);
    /* collection: the helper down, then up */
    uint8_t creq[256], *cresp = malloc(BIG), *cresp2 = malloc(BIG);
    assert_true(cresp && cresp2);
    size_t clen = coll_req(b, 1, creq), rlen = 0, rlen2 = 0;
    w->helper_down = 1;
    dap_leader_collection_job(&w->leader, creq, clen, to_helper, w, cresp, BIG, &rlen, &a);
    assert_int_equal(a.status, 502);
    assert_non_null(strstr(a.detail, "connection refused"));
    assert_non_null(strstr(a.detail, "send the same request again"));
    /* the batch is held for that request: another query over it is refused */
    uint8_t oreq[256];
    size_t olen = coll_req(b, 2, oreq);
    dap_leader_collection_job(&w->leader, oreq, olen, to_helper, w, cresp, BIG, &rlen, &a);
    assert_string_equal(a.problem, "batchOverlap");
    /* the same request again, and while its helper call is out, a second one of the same
     * request (another thread) resumes and completes it: the first then answers with the
     * second's release, so only one release of the request ever leaves */
    w->helper_down = 0;
    w->reenter = 1;
    w->creq = creq;
    w->clen = clen;
    w->inner = malloc(BIG);
    assert_non_null(w->inner);
    dap_leader_collection_job(&w->leader, creq, clen, to_helper, w, cresp, BIG, &rlen, &a);
    if (a.status != 200 || w->inner_a.status != 200) {
        fail_msg("collection: %d %s; the inner one %d %s", a.status, a.detail, w->inner_a.status,
                 w->inner_a.detail);
    }
    assert_non_null(strstr(w->inner_a.detail, "collected 10 reports"));
    assert_non_null(strstr(a.detail, "collected before"));
    assert_int_equal(rlen, w->inner_len);
    assert_memory_equal(cresp, w->inner, rlen);
    free(w->inner);
    dap_leader_collection_job(&w->leader, creq, clen, to_helper, w, cresp2, BIG, &rlen2, &a);
    assert_int_equal(a.status, 200);
    assert_int_equal(rlen2, rlen);
    assert_memory_equal(cresp2, cresp, rlen); /* the same release: no new noise */
    /* the collector */
    dap_collection_job_resp_t r;
    assert_int_equal(dap_msg_collection_job_resp_decode(cresp, rlen, &r, NULL), DPM_OK);
    assert_int_equal(r.report_count, N);
    assert_int_equal(r.interval.start, b);
    uint8_t *both = malloc(2u * v->out_share_bytes);
    assert_non_null(both);
    assert_int_equal(agg_share_open(&f->t, DPM_DAP_ROLE_LEADER, &f->collector_key, creq, clen,
                                    &r.leader_share, both, v->out_share_bytes),
                     DPM_OK);
    assert_int_equal(agg_share_open(&f->t, DPM_DAP_ROLE_HELPER, &f->collector_key, creq, clen,
                                    &r.helper_share, both + v->out_share_bytes, v->out_share_bytes),
                     DPM_OK);
    int64_t got[ROLES_LENGTH];
    assert_int_equal(dpm_prio3_unshard_signed(v, both, 2u * v->out_share_bytes, r.report_count, got,
                                              ROLES_LENGTH),
                     DPM_OK);
    int noised = 0;
    for (uint32_t k = 0; k < ROLES_LENGTH; k++) {
        int64_t d = got[k] - f->want[k];
        /* two discrete Laplace draws of scale 20: beyond 1,000 with probability < 1e-19 */
        assert_true(d > -1000 && d < 1000);
        noised |= d != 0;
    }
    assert_true(noised);
    /* queries that are refused */
    clen = coll_req(b, 2, creq);
    dap_leader_collection_job(&w->leader, creq, clen, to_helper, w, cresp, BIG, &rlen, &a);
    assert_string_equal(a.problem, "batchOverlap");
    clen = coll_req(b, 0, creq);
    dap_leader_collection_job(&w->leader, creq, clen, to_helper, w, cresp, BIG, &rlen, &a);
    assert_string_equal(a.problem, "batchInvalid");
    clen = coll_req(b, UINT64_MAX - 1, creq); /* past INT64_MAX: no batch of the store */
    dap_leader_collection_job(&w->leader, creq, clen, to_helper, w, cresp, BIG, &rlen, &a);
    assert_string_equal(a.problem, "batchInvalid");
    clen = coll_req(b + 5, 1, creq);
    dap_leader_collection_job(&w->leader, creq, clen, to_helper, w, cresp, BIG, &rlen, &a);
    assert_string_equal(a.problem, "invalidBatchSize");
    free(both);
    free(cresp);
    free(cresp2);
    world_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(upload_jobs_and_collection_count_each_report_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
