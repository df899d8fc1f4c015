/* SPDX-License-Identifier: Apache-2.0 */
/* `dpm-collector dap-collect`: the DAP collector's command. It asks the leader for a batch
 * (CollectionJobReq over HTTPS with the collector's bearer token, asking again while the
 * leader answers 202), opens both aggregate shares with the collector's HPKE key, and prints
 * the estimate JSON: the task's ε, privacy unit and trust model, the report count, each
 * released sum with its exact noise interval (estimate/central_sum.h). */
#ifndef DPM_COLLECTOR_DAP_COLLECT_H
#define DPM_COLLECTOR_DAP_COLLECT_H

/* argv[1] is "dap-collect". Exit status: 0 printed; 1 the leader refused or could not be
 * reached (the reason on stderr); 2 bad usage or files. */
int coll_dap_collect_main(int argc, char **argv);

#endif /* DPM_COLLECTOR_DAP_COLLECT_H */
