/* SPDX-License-Identifier: Apache-2.0 */
/* The device's calls for the two-aggregator mode (DAP with Prio3, dpm/expert/dap.h and
 * dpm/expert/vdaf.h): one call per report kind (per Prio3 variant), in the same order as every
 * other report call of dpm/device.h:
 *
 *   validate everything (device, task against the app's policy, measurement against the
 *   variant, buffers, wall clock and task interval, outbox room)     -- nothing spent yet
 *   -> charge the ledger (durable before it returns) -> shard (Prio3, with its proof)
 *   -> seal each input share to its aggregator (HPKE, in place) -> queue in the outbox
 *
 * and spends nothing when anything before the charge fails.
 *
 * What the ledger charges: participation. One report of task t in `period` charges the task's
 * central ε (dpm_dap_task_t.central_eps) to the ledger entry dpm_dap_ledger_id(t) with a
 * budget of that same ε: one report per task and period, and the charge counts against the
 * device cap (dpm_policy_t.device) like every local-DP campaign's. A refusal's reason is also
 * dpm_device_why(d).
 * Privacy unit: one device's measurement in one period. Trust model: the measurement itself
 * leaves the device only as two shares, each readable by one aggregator; the result the
 * collector reads is ε-DP (ε = the task's central ε) while at least one aggregator is honest
 * and adds its noise; if both collude they see the measurement, unless the task carries local
 * label RR (below). The Prio3 proof bounds every entry to the variant's range; within it a
 * device can lie.
 *
 * Local label RR (the hybrid: a SumVec task with DPM_DAP_EXT_LOCAL_LABEL_RR, ε0 =
 * t->local_eps, SDK built with DPM_DAP_LABEL_RR): after the charge and before the shard, the
 * device applies binary randomized response (dpm_rr_init's thresholds, drawn from the
 * device's random source) to every example's label: in each group block and bin j, each of
 * the pos_j positives and neg_j negatives reports its own label with probability keep / 2^32
 * and the other with other / 2^32; the report carries pos'_j = kept positives + flipped
 * negatives and neg'_j = pos_j + neg_j - pos'_j. So if both aggregators collude, each
 * example's label is still ε0-label-DP (the scores, bin totals and group are not: see
 * dpm/expert/dap.h). ε0 is the second guarantee of the same report, not a second spend: the
 * ledger charges the central ε, once per participation, as without it. The device refuses,
 * before the charge, a measurement with a bin whose pos_j + neg_j exceeds the SumVec's
 * max_measurement (DPM_ERR_PARAM: the randomized pos'_j can reach that total). The randomized
 * copy lives in io->work[0, length) and is wiped after the shard, which gets the rest of
 * io->work: io->work_words must be at least dpm_dap_work_words(t) (at compile time
 * DPM_PRIO3_SHARD_WORK_WORDS(shape) + DPM_DAP_LABEL_RR_WORK_WORDS(length)). Its run time
 * grows with the examples (one 32-bit draw each), never with their labels.
 *
 * The policy (dpm_policy_t.dap): which aggregators (host and HPKE key), the largest central ε
 * and the smallest minimum batch size the app accepts. A task outside it is refused with
 * DPM_ERR_POLICY and its reason, before anything is spent.
 *
 * Memory: no heap; the report and the VDAF's work area are the caller's (dpm_dap_io_t), with
 * sizes from the task (DPM_DAP_REPORT_BYTES and DPM_PRIO3_SHARD_WORK_WORDS of its shape at
 * compile time; dpm_dap_report_bytes and vdaf.shard_work_words at run time). The seal hook of
 * port/tls needs Mbed TLS's allocator (dpm_tls_use_arena on a device). */
#ifndef DPM_DEVICE_DAP_H
#define DPM_DEVICE_DAP_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/dap.h"
#include "dpm/device.h"
#include "dpm/expert/hpke.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The extra work words a label-RR task (DPM_DAP_EXT_LOCAL_LABEL_RR) needs on top of the
 * shard's, for a SumVec of `length` entries: the randomized copy of the measurement, e.g.
 *   uint64_t work[DPM_PRIO3_SHARD_WORK_WORDS(DPM_PRIO3_SUMVEC_SHAPE(2, 48, 8, 26)) +
 *                 DPM_DAP_LABEL_RR_WORK_WORDS(48)];
 * 0 extra words for a task without the extension (dpm_dap_work_words at run time). */
#define DPM_DAP_LABEL_RR_WORK_WORDS(length) ((size_t)(length))

/* Words of io->work a report of task t needs: the shard's, plus the randomized copy of the
 * measurement for a label-RR task. */
static inline size_t dpm_dap_work_words(const dpm_dap_task_t *t)
{
    return t->vdaf.shard_work_words + (t->local_eps != 0 ? (size_t)t->vdaf.length : 0u);
}

/* Where sealed reports wait for their upload to the leader (POST {leader}/tasks/{task-id}/
 * reports, a DAP UploadRequest: reports back to back). The app's durable queue: the SDK's
 * outbox (dpm/expert/outbox.h) holds dpm.v1.Report records of at most DPM_OUTBOX_MAX_PAYLOAD
 * bytes, and a DAP report is larger (7,784 bytes for a 2x24-entry SumVec of 8-bit counts).
 *   room(ctx, len)  1 if a report of len bytes can be stored now, else 0 (asked BEFORE the
 *                   charge, so a full queue spends nothing);
 *   put(ctx, task_id, report, len)  store it durably; DPM_OK only once it is (then the device
 *                   call returns DPM_OK); any other status is returned as is (the ε is spent,
 *                   the safe direction, and there is no report). */
typedef struct {
    int (*room)(void *ctx, size_t len);
    dpm_status_t (*put)(void *ctx, const uint8_t task_id[DPM_DAP_TASK_ID_BYTES],
                        const uint8_t *report, size_t len);
    void *ctx;
} dpm_dap_outbox_t;

/* What a two-aggregator report call works with. */
typedef struct {
    dpm_hpke_sealer_t sealer; /* port/tls: dpm_hpke_sealer() */
    dpm_dap_outbox_t outbox;
    uint8_t *report;   /* the report is built here (and stays here after the call) */
    size_t report_cap; /* >= dpm_dap_report_bytes(&task.vdaf) */
    uint64_t *work;    /* the VDAF's work area (and a label-RR task's randomized copy) */
    size_t work_words; /* >= dpm_dap_work_words(&task) */
} dpm_dap_io_t;

/* Take task `id` (its TaskConfiguration bytes, kept by reference: they must outlive *t) with
 * the aggregators' HPKE configurations into *t: dpm_dap_task_decode, then the app's policy
 * (dpm_dap_policy_check). The one way a two-aggregator task should enter an app. Returns
 * DPM_OK, the errors of both (DPM_ERR_POLICY with its reason), DPM_ERR_PARAM for NULL or an
 * unopened device, DPM_ERR_UNSUPPORTED without DPM_VDAF. *t untouched on error. */
dpm_status_t dpm_device_dap_accept_task(dpm_device_t *d, const uint8_t id[DPM_DAP_TASK_ID_BYTES],
                                        const uint8_t *config, size_t config_len,
                                        const dpm_hpke_config_t *leader_hpke,
                                        const dpm_hpke_config_t *helper_hpke, dpm_dap_task_t *t,
                                        const char **reason);

/* One report of task t (accepted by dpm_device_dap_accept_task) in `period`. The report's
 * time is the device's wall clock (dpm_clock_t.wall_time_s) in the task's time precision. On
 * DPM_OK the report (dpm_dap_report_bytes bytes) is in io->report and queued in io->outbox,
 * and *info (if not NULL) says its id, size and the ε charged. Before the charge, with NOTHING
 * spent or queued (*reason, if not NULL, names the cause):
 *   DPM_ERR_PARAM       NULL, unopened device, a task not accepted or of another variant,
 *                       a measurement out of range or of the wrong length (for a label-RR
 *                       task: a bin's pos + neg above max_measurement), a missing hook,
 *                       no wall clock, a time outside the task's interval;
 *   DPM_ERR_POLICY      the task is outside the app's policy (aggregator, key, ε, ε0, batch
 *                       size);
 *   DPM_ERR_BUFFER      io->report or io->work too small (dpm_dap_work_words), or the outbox
 *                       full;
 *   DPM_ERR_RNG         a label-RR task, and the device's random source failed earlier;
 *   DPM_ERR_BUDGET      this task was already reported in `period` (or a later one);
 *   DPM_ERR_CORRUPT / DPM_ERR_STORAGE  the ledger;
 *   DPM_ERR_UNSUPPORTED the SDK was built without DPM_VDAF (or a label-RR task without
 *                       DPM_DAP_LABEL_RR).
 * After the charge (ε spent, the safe direction, nothing queued): DPM_ERR_RNG (the random
 * source failed, in the label RR too), the seal hook's errors, the outbox's put errors. */
dpm_status_t dpm_device_dap_report_count(dpm_device_t *d, const dpm_dap_io_t *io,
                                         const dpm_dap_task_t *t, uint32_t period, uint32_t bit,
                                         dpm_report_info_t *info, const char **reason);
/* Prio3Sum: a value in [0, max_measurement]. */
dpm_status_t dpm_device_dap_report_sum(dpm_device_t *d, const dpm_dap_io_t *io,
                                       const dpm_dap_task_t *t, uint32_t period, uint64_t value,
                                       dpm_report_info_t *info, const char **reason);
/* Prio3SumVec: `length` values, each in [0, max_measurement] (n must equal length). */
dpm_status_t dpm_device_dap_report_sumvec(dpm_device_t *d, const dpm_dap_io_t *io,
                                          const dpm_dap_task_t *t, uint32_t period,
                                          const uint64_t *values, size_t n, dpm_report_info_t *info,
                                          const char **reason);
/* Prio3Histogram: one bucket index in [0, length). */
dpm_status_t dpm_device_dap_report_histogram(dpm_device_t *d, const dpm_dap_io_t *io,
                                             const dpm_dap_task_t *t, uint32_t period,
                                             uint32_t bucket, dpm_report_info_t *info,
                                             const char **reason);
/* Prio3MultihotCountVec: `length` values 0 or 1, at most max_weight of them 1. */
dpm_status_t dpm_device_dap_report_multihot(dpm_device_t *d, const dpm_dap_io_t *io,
                                            const dpm_dap_task_t *t, uint32_t period,
                                            const uint64_t *bits, size_t n, dpm_report_info_t *info,
                                            const char **reason);

#ifdef __cplusplus
}
#endif

#endif /* DPM_DEVICE_DAP_H */
