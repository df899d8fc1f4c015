/* SPDX-License-Identifier: Apache-2.0 */
/* Network mode: simulated devices post their reports to a running dpm-collector over real TLS.
 *
 * `clients` threads each open one TLS connection (port/tls: dpm_tls_connect over the posix TCP
 * transport, the collector's CA pinned, its host name checked) and keep it alive. The devices
 * are split between the clients in contiguous ranges; every device makes its report exactly as
 * in inprocess mode (sim_device_report: same bytes, replayable) and its client posts them in
 * batches: POST /v1/reports with a dpm.v1.Batch body (each report is field 1, length
 * delimited), written and read with the SDK's HTTP/1.1 client (dpm_http_write_request,
 * dpm_http_send_all, dpm_http_read_response). A batch without a 200 answer (connection lost)
 * is sent again on a fresh connection with the same report ids (the collector de-duplicates);
 * any 4xx fails the run.
 *
 * The estimates come from the reports that were acknowledged, aggregated locally by the same
 * code as inprocess mode. Then GET /v1/campaigns/ID/estimate fetches the collector's own
 * view, and the collector's module (mech/host_mech.h) sums and estimates the same acknowledged
 * reports here: the collector's answer must hold the same report count and the same values at
 * the module's compare paths (else *mismatch = 1, the first member that differs named); the JSON is
 * kept in estimate_dir (collector-estimate-ID.json) when that is set. Run once per campaign and
 * collector database: the collector aggregates every report a campaign ever received.
 *
 * Credentials: with token_path, every request carries "Authorization: Bearer TOKEN" (the first
 * line of that file): the collector wants a device credential for POST /v1/reports (for a
 * simulator, a relay token: it speaks for many devices) and an operator one for estimates. */
#ifndef DPM_SIM_NETMODE_H
#define DPM_SIM_NETMODE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/pop/population.h"
#include "sim/devices/sim_cfg.h"

typedef struct sim_net_opts {
    const char *host; /* numeric address, e.g. 127.0.0.1 */
    uint16_t port;
    const char *ca_path;     /* PEM file of the CA that signed the collector's certificate */
    const char *server_name; /* name the certificate must carry (default "localhost") */
    unsigned clients;        /* concurrent TLS connections, 1 .. SIM_NET_MAX_CLIENTS */
    uint32_t batch;          /* reports per POST, 1 .. SIM_NET_MAX_BATCH */
    const char *estimate_dir;
    const char *token_path; /* NULL: no Authorization header */
    uint32_t period; /* --run R: the run index, and so the period every report carries (default
                      * 0); R > 0: the estimate cross-checked is that period's, so runs 0, 1, 2
                      * posted one after another fill periods 0, 1, 2 */
    /* the two-aggregator mode (netmode_dap.h); host:port is then the leader's */
    const char *dap_campaigns;     /* the aggregators' campaigns file with the [dap_task] */
    const char *dap_task;          /* its id (base64url); NULL: the file's only task */
    const char *dap_collector_key; /* the collector's HPKE key file (dpm-collector dap-keygen) */
    uint64_t dap_time;             /* the reports' time, Unix seconds (0: now) */
    uint32_t dap_wait_s;           /* the collection's wait for the leader's jobs (0: 120 s) */
} sim_net_opts_t;

#define SIM_NET_MAX_CLIENTS 256u
#define SIM_NET_MAX_BATCH 4096u

int sim_net_run(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run, const sim_net_opts_t *o,
                sim_agg_t *agg, uint64_t *reports, int *mismatch, char *err, size_t errcap);

#endif /* DPM_SIM_NETMODE_H */
