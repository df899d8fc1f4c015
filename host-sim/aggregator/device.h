/* SPDX-License-Identifier: Apache-2.0 */
/* A simulated device's two-aggregator report, made by the SDK's public device calls exactly as
 * an app makes it: a device on RAM storage (dpm_device_init, its wall clock fixed inside the
 * task's time) whose policy names the task's aggregators accepts the task
 * (dpm_device_dap_accept_task) and reports (dpm_device_dap_report_sumvec: validate, charge its
 * ledger, shard with the Prio3 proof, seal each input share with HPKE, queue). Each call is a
 * new device (its storage erased): one report per device, as the task's ledger allows. dpm-sim's
 * inprocess mode, the aggregator tests and the aggregator benchmark make their reports here. */
#ifndef DPM_HOST_AGGREGATOR_DEVICE_H
#define DPM_HOST_AGGREGATOR_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "aggregator/task.h"
#include "dpm/expert/device_dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/dap.h"

#define AGG_DEVICE_REGION 8192u /* the device's ledger and outbox */

/* What consecutive devices reuse (heap: agg_device_new). */
typedef struct {
    uint8_t region[AGG_DEVICE_REGION];
    dpm_device_t dev;
    dpm_dap_policy_t policy;           /* accepts the task: its aggregators, ε and batch size */
    char host[2][DPM_DAP_MAX_URL + 1]; /* the policy's aggregator hosts: the task URLs' */
    uint64_t *work;                    /* the VDAF's work area (and a label-RR copy) */
    size_t work_words;
    uint8_t *report; /* the report is built here */
    size_t report_cap, report_len;
    dpm_hpke_sealer_t sealer; /* dpm_hpke_sealer() (tests wrap it to make a dishonest client) */
    int64_t wall_s; /* the devices' wall clock, Unix seconds (agg_device_new: 1700000000) */
} agg_device_t;

/* For task k (decoded as t). NULL when out of memory. */
agg_device_t *agg_device_new(const agg_task_t *k, const dpm_dap_task_t *t);
void agg_device_free(agg_device_t *d);

/* A new device with random source rng reports the SumVec values m[0 .. n): DPM_OK with the
 * report in d->report[0 .. d->report_len); otherwise the SDK's status and *why (if not NULL). */
dpm_status_t agg_device_sumvec(agg_device_t *d, const agg_task_t *k, dpm_rng_t rng,
                               const uint64_t *m, size_t n, const char **why);

#endif /* DPM_HOST_AGGREGATOR_DEVICE_H */
