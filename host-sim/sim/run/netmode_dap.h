/* SPDX-License-Identifier: Apache-2.0 */
/* Network mode of the two-aggregator mode (a mechanism with sim_mech_t.dap_report): simulated
 * devices post DAP reports to a running leader (`dpm-collector --role leader`, with its
 * helper), and the batch is then collected from it as a collector would.
 *
 * The task is the deployment's: the `[dap_task]` block of the aggregators' campaigns file
 * (aggregator/dap_tasks.h), whose VDAF, central ε and sensitivity must be this
 * configuration's (sim_mech_t.dap_fits: otherwise the intervals would not describe the noise
 * the aggregators add). Every device makes its report as in inprocess mode (the SDK's device
 * calls, its own seeded stream), dated o->dap_time (default: now), so the whole run lies in
 * one time_precision interval of the task. `clients` threads, each with one keep-alive TLS
 * connection to o->host:o->port (the CA pinned, o->server_name checked), post them in
 * UploadRequests of `batch` reports to the leader's /tasks/{id}/reports (anonymous, as DAP
 * clients are); a request without an answer is sent again with the same reports (the leader
 * keeps each report id once); any report the leader does not keep fails the run, naming its
 * ReportError.
 *
 * Then one CollectionJobReq for that interval (dpm-collector dap-collect's, with the bearer
 * token of o->token_path, a collector credential of the leader), sent again while the leader
 * answers 202 (its jobs still running), at most o->dap_wait_s seconds; the answer opened with
 * the collector's key (o->dap_collector_key) and unsharded; its report count must be the
 * number of reports posted. The mechanism's estimate then runs on those sums, as it does in
 * inprocess mode on the in-process aggregators'. A leader collects each interval once: a
 * second run against the same leader store needs another interval (--dap-time) or fresh
 * aggregator databases. */
#ifndef DPM_SIM_NETMODE_DAP_H
#define DPM_SIM_NETMODE_DAP_H

#include <stddef.h>
#include <stdint.h>

#include "sim/devices/sim_cfg.h"
#include "sim/pop/population.h"
#include "sim/run/netmode.h"

/* Run `run` of cfg (a mechanism with dap_report) against the leader: agg gets the collected
 * sums, *reports the reports posted (added), *rng_bytes the devices' randomness (added). 0, or
 * -1 with a message naming the step and what to do. */
int sim_net_dap_run(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run,
                    const sim_net_opts_t *o, sim_agg_t *agg, uint64_t *reports, uint64_t *rng_bytes,
                    char *err, size_t errcap);

#endif /* DPM_SIM_NETMODE_DAP_H */
