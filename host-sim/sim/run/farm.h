/* SPDX-License-Identifier: Apache-2.0 */
/* The device farm (inprocess mode), for every mechanism: each simulated device runs the real SDK
 * (its statistics and report through its mechanism's module, then dpm_report_encode:
 * sim_device_report), and every report is decoded (dpm_report_decode), checked against its
 * campaign (dpm_mech_check_report, as the collector does) and aggregated by the module with
 * host-sim/estimate, the collector's estimator code.
 *
 * Threads take the devices of a run in chunks of 4,096 (large populations) or take whole runs
 * (small populations, many runs), one after another from a shared queue, so a thread that gets
 * less CPU on a shared machine does less of the work; each thread aggregates on its own and the
 * parts are merged. Every device draws from its own stream (stream.h) and the sums are exact
 * integers, so the result depends neither on the thread count nor on which thread took what
 * (except a float sum of squares that dpm-sim's outputs do not use, tuple_ml's, in its last
 * bits). */
#ifndef DPM_SIM_FARM_H
#define DPM_SIM_FARM_H

#include <stddef.h>
#include <stdint.h>

#include "sim/pop/population.h"
#include "sim/pop/progress.h"
#include "sim/devices/sim_cfg.h"

/* Called for every encoded report, from the worker threads (it must be thread-safe). */
typedef void (*sim_report_hook_t)(void *ctx, const sim_cfg_t *cfg, uint32_t run, uint64_t device,
                                  const uint8_t *buf, size_t len);

typedef struct {
    unsigned threads;         /* 1 .. SIM_MAX_THREADS */
    sim_progress_t *progress; /* may be NULL; advanced by device reports */
    sim_report_hook_t hook;   /* may be NULL */
    void *hook_ctx;
} sim_farm_opts_t;

typedef struct {
    uint64_t reports;   /* reports made, decoded and aggregated */
    uint64_t dropped;   /* devices that sent nothing (an SDK DPM_ERR_RANGE, e.g. tuple_ml's
                         * overflow, < 2^-45 each) */
    uint64_t rng_bytes; /* port RNG bytes the devices drew */
} sim_farm_stats_t;

/* Runs first .. first + nruns - 1 into aggs[0 .. nruns). stats (may be NULL) accumulates.
 * DPM_OK, or the first error (a report the campaign check refused is DPM_ERR_PROTOCOL: a bug). */
dpm_status_t sim_farm_runs(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t first,
                           uint32_t nruns, const sim_farm_opts_t *opts, sim_agg_t *aggs,
                           sim_farm_stats_t *stats);

/* The report of one device alone (replay): the same bytes it sends inside a run. *len = 0 and
 * DPM_OK when the device does not take part in this configuration. */
dpm_status_t sim_farm_replay(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run,
                             uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len);

#endif /* DPM_SIM_FARM_H */
