/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the DAP leader (host-sim/collector/dap/dap_leader.h) as hostile peers reach
 * it. The first byte picks what the rest is (mod 3):
 *   0  an UploadRequest from devices (the public endpoint);
 *   1  a CollectionJobReq from the collector (the leader then asks a real helper, on its own
 *      in-memory store, for its share);
 *   2  the helper's answer to an aggregation job: a job of stored reports is started (a stale
 *      one again, or a new one) and finished with these bytes.
 * One leader on an in-memory SQLite store serves every input; when it has no reports left to
 * aggregate it gets three new ones (unless their batch was collected). Checked beyond the
 * sanitizers:
 *   - the upload and the collection answer 200, 400 or (a collection) 202 while reports of its
 *     batch await aggregation and 502 when its helper refused, never 500; a 400 names its problem
 * type; an upload's UploadErrors decodes, in request order, each for a report of the request;
 *   - a helper answer that job_finish refuses commits nothing: the same job comes back, stale,
 *     with byte-identical request bytes; one it takes commits the job once. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/dap/dap_helper.h"
#include "collector/dap/dap_leader.h"
#include "fuzz_dap_roles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_BODY 65536u
#define OUT_CAP (1u << 20)

static agg_task_t task;
static dpm_dap_task_t t;
static dap_store_t *lstore, *hstore;
static dap_leader_t leader;
static dap_helper_t helper;
static test_rng_t lrng, hrng;
static dpm_rng_t lport, hport;
static dpm_rand_t lrand, hrand;
static uint8_t *out, *last_req;
static size_t last_req_len;
static uint8_t last_id[DAP_STORE_JOB_ID_BYTES];
static uint64_t now_s, tick;
static uint32_t next_report;

static void more_reports(void)
{
    static uint8_t req[16384];
    size_t len = fuzz_roles_upload(&task, &t, next_report, 3, req, sizeof(req)), n = 0;
    dap_answer_t a;
    next_report += 3;
    dap_leader_upload(&leader, req, len, now_s, out, OUT_CAP, &n, &a);
    if (len == 0 || a.status != 200) {
        abort(); /* kept, or refused report by report (a collected batch takes no more) */
    }
}

static void setup(void)
{
    char err[256];
    dpm_hpke_config_t collector;
    uint8_t job[4096];
    uint64_t bucket = 0;
    if (fuzz_roles_task(&task, &t) != 0 ||
        fuzz_roles_job(&task, &t, 0, 1, job, sizeof(job), NULL, &bucket) == 0 ||
        dap_store_open(&lstore, "sqlite::memory:", err, sizeof(err)) != 0 ||
        dap_store_open(&hstore, "sqlite::memory:", err, sizeof(err)) != 0 ||
        fuzz_roles_collector(&collector) != 0 ||
        test_rand_init(&lrand, &lrng, &lport, 98) != DPM_OK ||
        test_rand_init(&hrand, &hrng, &hport, 99) != DPM_OK) {
        abort();
    }
    if (dap_leader_init(&leader, &t, &task.key[0], task.verify_key, lstore, &collector,
                        FUZZ_ROLES_SENSITIVITY, &lrand) != 0 ||
        dap_helper_init(&helper, &t, &task.key[1], task.verify_key, hstore, &collector,
                        FUZZ_ROLES_SENSITIVITY, &hrand) != 0) {
        abort();
    }
    now_s = (bucket + 1u) * t.time_precision;
    out = malloc(OUT_CAP);
    last_req = malloc(OUT_CAP);
    if (out == NULL || last_req == NULL) {
        abort();
    }
    more_reports();
}

static int to_helper(void *ctx, const uint8_t *req, size_t len, uint8_t *o, size_t cap,
                     size_t *o_len, char *why, size_t whycap)
{
    (void)ctx;
    dap_answer_t a;
    dap_helper_aggregate_share(&helper, req, len, o, cap, o_len, &a);
    if (a.status != 200) {
        snprintf(why, whycap, "%d %s", a.status, a.detail);
        return -1;
    }
    return 0;
}

static void upload(const uint8_t *body, size_t len)
{
    size_t n = 0;
    dap_answer_t a;
    dap_leader_upload(&leader, body, len, now_s, out, OUT_CAP, &n, &a);
    if (a.status == 400) {
        if (a.problem == NULL || n != 0) {
            abort();
        }
        return;
    }
    dap_list_t st;
    if (a.status != 200 || dap_msg_upload_errors_decode(out, n, &st, NULL) != DPM_OK) {
        abort();
    }
    /* each status names a report of the request, in order */
    size_t pos = 0, rpos = 0;
    dap_upload_status_t us;
    dpm_dap_report_view_t rv;
    while (dap_msg_next_upload_status(&st, &pos, &us) == DPM_OK) {
        int found = 0;
        while (!found && rpos < len && dpm_dap_report_next(body, len, &rpos, &rv, NULL) == DPM_OK) {
            found = memcmp(rv.report_id, us.report_id, DPM_DAP_REPORT_ID_BYTES) == 0;
        }
        if (!found || us.error == 0) {
            abort();
        }
    }
}

static void finish(const uint8_t *resp, size_t len)
{
    dap_leader_job_t j;
    char why[200];
    tick += 2; /* every earlier job is stale (older than one second) */
    int got = dap_leader_job_start(&leader, 3, now_s + tick, 1, &j, why, sizeof(why));
    if (got == 0) {
        more_reports();
        got = dap_leader_job_start(&leader, 3, now_s + tick, 1, &j, why, sizeof(why));
    }
    if (got == 0) {
        return; /* nothing left to aggregate: its batch was collected */
    }
    if (got != 1) {
        abort();
    }
    /* a job taken over again is the same request */
    if (memcmp(j.id, last_id, sizeof(last_id)) == 0 &&
        (j.req_len != last_req_len || memcmp(j.req, last_req, j.req_len) != 0)) {
        abort();
    }
    memcpy(last_id, j.id, sizeof(last_id));
    memcpy(last_req, j.req, j.req_len);
    last_req_len = j.req_len;
    if (dap_leader_job_finish(&leader, &j, resp, len, why, sizeof(why)) == 0) {
        memset(last_id, 0, sizeof(last_id)); /* committed: never seen again */
    }
    dap_leader_job_free(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (out == NULL) {
        setup();
    }
    if (size < 1 || size - 1 > MAX_BODY) {
        return 0;
    }
    const uint8_t *body = data + 1;
    size_t len = size - 1;
    switch (data[0] % 3u) {
    case 0: upload(body, len); break;
    case 1: {
        size_t n = 0;
        dap_answer_t a;
        dap_leader_collection_job(&leader, body, len, to_helper, NULL, out, OUT_CAP, &n, &a);
        if (a.status != 200 && a.status != 202 && a.status != 400 && a.status != 502) {
            abort();
        }
        if (a.status == 400 && a.problem == NULL) {
            abort();
        }
        break;
    }
    default: finish(body, len); break;
    }
    return 0;
}
