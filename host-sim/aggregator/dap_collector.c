/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP collector's request and the opening of its answer (dap_collector.h). */
#include "aggregator/dap_collector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/dap_msg.h"
#include "aggregator/share.h"

int dap_collector_request(const dap_task_spec_t *t, uint64_t start, uint64_t duration, uint8_t *out,
                          size_t cap, size_t *len, char *why, size_t whycap)
{
    const uint64_t p = t->t.time_precision;
    if (duration == 0 || start % p != 0 || duration % p != 0) {
        snprintf(why, whycap,
                 "the interval [%llu, +%llu) must be non-empty multiples of the task's "
                 "time_precision (%llu s)",
                 (unsigned long long)start, (unsigned long long)duration, (unsigned long long)p);
        return -1;
    }
    dap_collection_job_req_t q;
    memset(&q, 0, sizeof(q));
    q.query.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    q.query.interval.start = start / p; /* the draft's Time and Duration: in time_precision */
    q.query.interval.duration = duration / p;
    if (dap_msg_collection_job_req_encode(&q, out, cap, len) != DPM_OK) {
        snprintf(why, whycap, "cannot encode the CollectionJobReq");
        return -1;
    }
    return 0;
}

int dap_collector_open(const dap_task_spec_t *t, const dpm_dap_hpke_key_t *key, const uint8_t *req,
                       size_t req_len, const uint8_t *resp, size_t len, uint64_t *count,
                       int64_t *sums, char *why, size_t whycap)
{
    const dpm_prio3_t *v = &t->t.vdaf;
    dap_collection_job_resp_t r;
    const char *reason = NULL;
    if (dap_msg_collection_job_resp_decode(resp, len, &r, &reason) != DPM_OK) {
        snprintf(why, whycap, "the leader's CollectionJobResp is malformed: %s",
                 reason != NULL ? reason : "?");
        return -1;
    }
    uint8_t *both = malloc(2u * v->out_share_bytes);
    if (both == NULL) {
        snprintf(why, whycap, "out of memory");
        return -1;
    }
    int rc = -1;
    if (agg_share_open(&t->t, DPM_DAP_ROLE_LEADER, key, req, req_len, &r.leader_share, both,
                       v->out_share_bytes) != DPM_OK ||
        agg_share_open(&t->t, DPM_DAP_ROLE_HELPER, key, req, req_len, &r.helper_share,
                       both + v->out_share_bytes, v->out_share_bytes) != DPM_OK) {
        snprintf(why, whycap,
                 "an aggregate share does not open with this key: another collector key, task "
                 "or request (check --collector-key against the task's collector_hpke_config)");
    } else if (dpm_prio3_unshard_signed(v, both, 2u * v->out_share_bytes, r.report_count, sums,
                                        v->output_len) != DPM_OK) {
        snprintf(why, whycap, "the shares do not unshard");
    } else {
        *count = r.report_count;
        rc = 0;
    }
    memset(both, 0, 2u * v->out_share_bytes);
    free(both);
    return rc;
}
