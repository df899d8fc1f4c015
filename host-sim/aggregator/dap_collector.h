/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP collector's two steps over bytes (`dpm-collector dap-collect`, ops/dap_collect.c):
 * the CollectionJobReq of a time interval, and the leader's CollectionJobResp opened with the
 * collector's HPKE key (both aggregate shares, each bound to this request, this task and its
 * aggregator's role) and unsharded into the released sums. */
#ifndef DPM_HOST_AGGREGATOR_DAP_COLLECTOR_H
#define DPM_HOST_AGGREGATOR_DAP_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "aggregator/dap_tasks.h"

/* The CollectionJobReq for [start, start + duration) (Unix seconds, multiples of the task's
 * time precision: else -1 with why; the request counts in time_precision units, as the draft's
 * Time and Duration do). 0 with out[0, *len). */
int dap_collector_request(const dap_task_spec_t *t, uint64_t start, uint64_t duration, uint8_t *out,
                          size_t cap, size_t *len, char *why, size_t whycap);

/* A CollectionJobResp resp[0, len) answering req[0, req_len): 0 with *count reports and the
 * released sums[0, t->t.vdaf.output_len) (exact sums plus both aggregators' noise); -1 with why
 * (malformed, a share that does not open with this key: another task, request or collector). */
int dap_collector_open(const dap_task_spec_t *t, const dpm_dap_hpke_key_t *key, const uint8_t *req,
                       size_t req_len, const uint8_t *resp, size_t len, uint64_t *count,
                       int64_t *sums, char *why, size_t whycap);

#endif /* DPM_HOST_AGGREGATOR_DAP_COLLECTOR_H */
