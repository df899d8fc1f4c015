/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the DAP helper's two endpoints (host-sim/collector/dap/dap_helper.h), as a
 * hostile or broken leader reaches them: the first byte picks the endpoint (even: an
 * aggregation job, odd: an aggregate share), the rest is the request's body. One helper with
 * its store on an in-memory SQLite database serves every input, so jobs, replays and
 * collections accumulate as on a real helper. Checked beyond the sanitizers:
 *   - every answer is 200 or 400, never 500 (no input makes this server fail), and a 400
 *     names the draft's problem type and what went wrong;
 *   - a 200 job answer is an AggregationJobResp with one VerifyResp per VerifyInit, in order,
 *     each for that report's id; the same body again gets the same bytes (idempotent);
 *   - a 200 share answer is an AggregateShare of the helper's HPKE configuration id for the
 *     collector, and the same body again gets the same bytes (its noise drawn once). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector/dap/dap_helper.h"
#include "fuzz_dap_roles.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_BODY 65536u
#define OUT_CAP (1u << 20)

static agg_task_t task;
static dpm_dap_task_t t;
static dap_store_t *store;
static dap_helper_t helper;
static test_rng_t rng;
static dpm_rng_t port;
static dpm_rand_t rand_src;
static uint8_t *out, *again;
static uint64_t now_s;

static void setup(void)
{
    char err[256];
    dpm_hpke_config_t collector;
    uint64_t bucket = 0;
    uint8_t req[4096];
    if (fuzz_roles_task(&task, &t) != 0 ||
        fuzz_roles_job(&task, &t, 0, 1, req, sizeof(req), NULL, &bucket) == 0 ||
        dap_store_open(&store, "sqlite::memory:", err, sizeof(err)) != 0 ||
        fuzz_roles_collector(&collector) != 0 ||
        test_rand_init(&rand_src, &rng, &port, 99) != DPM_OK) {
        abort();
    }
    if (dap_helper_init(&helper, &t, &task.key[1], task.verify_key, store, &collector,
                        FUZZ_ROLES_SENSITIVITY, &rand_src) != 0) {
        abort();
    }
    now_s = (bucket + 1u) * t.time_precision;
    out = malloc(OUT_CAP);
    again = malloc(OUT_CAP);
    if (out == NULL || again == NULL) {
        abort();
    }
}

static void check_job(const uint8_t *body, size_t len, size_t out_len)
{
    dap_agg_job_init_req_t req;
    dap_list_t resps;
    if (dap_msg_agg_job_init_req_decode(body, len, &req, NULL) != DPM_OK ||
        dap_msg_agg_job_resp_decode(out, out_len, &resps, NULL) != DPM_OK ||
        resps.n != req.verify_inits.n) {
        abort();
    }
    size_t pi = 0, pr = 0;
    dap_verify_init_t vi;
    dap_verify_resp_t vr;
    while (dap_msg_next_verify_init(&req.verify_inits, &pi, &vi) == DPM_OK) {
        if (dap_msg_next_verify_resp(&resps, &pr, &vr) != DPM_OK ||
            memcmp(vr.report_id, vi.report_share.metadata.report_id, DPM_DAP_REPORT_ID_BYTES) !=
                0 ||
            (vr.type == DAP_VERIFY_REJECT && vr.report_error == 0) ||
            vr.type == DAP_VERIFY_FINISH) {
            abort();
        }
    }
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
    size_t len = size - 1, out_len = 0, again_len = 0;
    int job = (data[0] & 1u) == 0;
    dap_answer_t a, b;
    if (job) {
        dap_helper_aggregation_job(&helper, body, len, now_s, out, OUT_CAP, &out_len, &a);
    } else {
        dap_helper_aggregate_share(&helper, body, len, out, OUT_CAP, &out_len, &a);
    }
    if (a.status == 400) {
        if (a.problem == NULL || a.detail[0] == '\0' || out_len != 0) {
            abort();
        }
        return 0;
    }
    if (a.status != 200) {
        abort(); /* a 500: no request may make this server fail */
    }
    if (job) {
        check_job(body, len, out_len);
        dap_helper_aggregation_job(&helper, body, len, now_s, again, OUT_CAP, &again_len, &b);
    } else {
        dap_hpke_ct_t ct;
        if (dap_msg_agg_share_decode(out, out_len, &ct, NULL) != DPM_OK || ct.config_id != 3) {
            abort();
        }
        dap_helper_aggregate_share(&helper, body, len, again, OUT_CAP, &again_len, &b);
    }
    if (b.status != 200 || again_len != out_len || memcmp(again, out, out_len) != 0 ||
        memcmp(a.id, b.id, sizeof(a.id)) != 0) {
        abort();
    }
    return 0;
}
