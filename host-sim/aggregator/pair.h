/* SPDX-License-Identifier: Apache-2.0 */
/* The leader and the helper of a DAP task in one process: every report through both
 * aggregators' real steps, as draft-ietf-ppm-dap orders them (dpm/expert/dap.h, dpm/expert/vdaf.h,
 * dpm/port_dap.h: the SDK's own aggregator-side code):
 *
 *   decode the report -> each aggregator opens its input share (HPKE, its role's info and the
 *   report's associated data) -> each runs Prio3's verify_init -> the verifier shares become
 *   the verifier message -> each runs verify_next -> each adds its output share to its
 *   aggregate share.
 *
 * A report that fails a step is counted by the draft's ReportError (dpm_dap_report_error) and
 * never aggregated; a report id seen before in this pair is a replay (report_replayed), dropped.
 * Release: each aggregator adds its own central noise to its aggregate share before it leaves
 * (dpm_prio3_add_noise: discrete Laplace of scale sensitivity / ε per entry, drawn by the
 * SDK's exact sampler from that aggregator's own random source), so the sum the collector
 * reads is ε-DP while one of them is honest. Collect: the collector unshards the two released
 * shares into signed sums (dpm_prio3_unshard_signed); refused below the task's minimum batch
 * size (DAP: no collection from fewer reports).
 *
 * What this is not: the network roles. There is no HTTP, no storage and no aggregation job here;
 * the DAP leader and helper of dpm-collector (issue 31 item 1) will run these same steps on
 * reports they store. dpm-sim's inprocess mode of the two-aggregator mechanisms uses it today. */
#ifndef DPM_HOST_AGGREGATOR_PAIR_H
#define DPM_HOST_AGGREGATOR_PAIR_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/dap.h"
#include "dpm/expert/noise.h"
#include "dpm/port_dap.h"
#include "dpm/expert/vdaf.h"

/* The draft's ReportError codes this pair counts (index = the code; 0: aggregated). */
#define AGG_REPORT_ERRORS 10u
#define AGG_REPORT_REPLAYED 2u /* report_replayed */

typedef struct {
    const dpm_dap_task_t *task; /* decoded, not owned */
    dpm_dap_hpke_key_t key[2];  /* [0] the leader's, [1] the helper's HPKE key */
    uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES];
    uint8_t ctx[DPM_DAP_CTX_BYTES];
    uint8_t *agg_share; /* 2 x out_share_bytes: the leader's, then the helper's */
    uint64_t aggregated;
    uint64_t rejected[AGG_REPORT_ERRORS]; /* by ReportError */
    int released;                         /* 1 once both shares carry their noise */
    /* report ids seen (replay protection), an open-addressed set */
    uint8_t (*seen)[DPM_DAP_REPORT_ID_BYTES];
    size_t seen_cap, seen_n;
    int zero_seen; /* the all-zero id (it marks empty slots in seen) */
    /* scratch */
    uint8_t *plain[2], *state[2], *vshares, *msg, *out; /* out: both output shares */
    size_t plain_cap;
    uint64_t *work;
} agg_pair_t;

/* A pair for task t (decoded, with its VDAF) with the aggregators' HPKE keys and the shared
 * verification key. 0, or -1 (out of memory, a task without a VDAF). */
int agg_pair_init(agg_pair_t *a, const dpm_dap_task_t *t, const dpm_dap_hpke_key_t *leader_key,
                  const dpm_dap_hpke_key_t *helper_key,
                  const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES]);
void agg_pair_free(agg_pair_t *a);

/* One report (its bytes exactly). DPM_OK when aggregated; otherwise the failing step's status
 * with *report_error (if not NULL) its ReportError, counted in a->rejected and not aggregated.
 * DPM_ERR_PARAM after release (a released batch takes no more reports). */
dpm_status_t agg_pair_add(agg_pair_t *a, const uint8_t *report, size_t len, uint8_t *report_error);

/* Release: each aggregator adds discrete Laplace noise of scale sensitivity / ε (the task's
 * central ε, dpm_laplace_init) to every entry of its own aggregate share, drawn from its own
 * source (leader_rand, helper_rand: independent). sensitivity: the L1 distance between any
 * two devices' measurements the privacy unit covers (the mechanism says it). Once. */
dpm_status_t agg_pair_release(agg_pair_t *a, uint64_t sensitivity, dpm_rand_t *leader_rand,
                              dpm_rand_t *helper_rand);

/* The collector: the released shares unsharded into result[0 .. output_len) as signed sums.
 * DPM_ERR_PARAM before release; DPM_ERR_POLICY (the task's privacy rule) below the task's
 * min_batch_size (nothing written); the SDK's other statuses. */
dpm_status_t agg_pair_collect(const agg_pair_t *a, int64_t *result, size_t result_len);

/* What the two aggregators TOGETHER can read before either adds its noise: the exact sums
 * (the trust model's limit: if both collude, nothing of central DP holds). SIMULATION AND TESTS
 * ONLY (dpm-sim repro fhauc shows with it that the pooled counts come out exact); a deployment's
 * collector only ever calls agg_pair_collect. DPM_ERR_PARAM after release; the SDK's unshard
 * statuses otherwise. */
dpm_status_t agg_pair_unnoised(const agg_pair_t *a, uint64_t *result, size_t result_len);

#endif /* DPM_HOST_AGGREGATOR_PAIR_H */
