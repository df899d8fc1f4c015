/* SPDX-License-Identifier: Apache-2.0 */
/* An aggregator's aggregate share sealed for the collector, and opened by it: the draft's
 * "Aggregate Share Encryption". SealBase to the collector's HPKE configuration with
 *   info  "dap-18 aggregate share" || server_role || 0x00 (the collector's role)
 *   aad   AggregateShareAad = task_id || TaskConfiguration || CollectionJobReq
 * so a share opens only for the task, its configuration and the very collection request it
 * answers (the leader passes the collector's request bytes on to the helper). What the
 * aggregator seals is its share AFTER its central noise (agg_pair_release, dpm_prio3_add_noise).
 * The network roles that will call these are not built yet (issue 31 item 1). */
#ifndef DPM_HOST_AGGREGATOR_SHARE_H
#define DPM_HOST_AGGREGATOR_SHARE_H

#include <stddef.h>
#include <stdint.h>

#include "aggregator/dap_msg.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/noise.h"
#include "dpm/port_dap.h"

/* One aggregator's central noise on its own aggregate share before it leaves, added to every
 * entry of agg_share (v->out_share_bytes), drawn from the aggregator's own source: for
 * DPM_DAP_DP_DISCRETE_LAPLACE of scale sensitivity / ε (the task's central ε,
 * dpm_laplace_init; sensitivity: the L1 distance between any two privacy units' measurements,
 * the mechanism says it); for DPM_DAP_DP_DISCRETE_GAUSSIAN of the task's central_sigma2
 * (dpm_dgauss; sensitivity unused: sigma2 already holds it). The drawn noise is wiped before
 * return. DPM_ERR_BUFFER out of memory; the SDK's statuses for parameters its samplers refuse. */
dpm_status_t agg_share_add_noise(const dpm_dap_task_t *t, uint64_t sensitivity, dpm_rand_t *rand,
                                 uint8_t *agg_share);

/* The info string: 22 bytes of label, the server's role, the collector's (0). */
#define AGG_SHARE_INFO_BYTES 24u

/* Seal agg_share[0, len) from `role` (DPM_DAP_ROLE_LEADER or _HELPER) of task t for the
 * collector's configuration, answering the CollectionJobReq coll_req[0, coll_req_len) (its
 * encoding, as the collector sent it). ikm_e: fresh secret randomness for the ephemeral key
 * (at least 32 bytes, from the aggregator's CSPRNG). Writes ct->config_id, enc (DPM_HPKE_NENC
 * bytes into enc_buf) and the payload (len + DPM_HPKE_NT bytes into payload_buf); ct's spans
 * point into those buffers. DPM_ERR_PARAM for NULL, another role, a configuration
 * dpm_hpke_config_check refuses; the HPKE errors otherwise. */
dpm_status_t agg_share_seal(const dpm_dap_task_t *t, uint8_t role,
                            const dpm_hpke_config_t *collector, const uint8_t *coll_req,
                            size_t coll_req_len, const uint8_t *agg_share, size_t len,
                            const uint8_t *ikm_e, size_t ikm_len, uint8_t *enc_buf,
                            uint8_t *payload_buf, dap_hpke_ct_t *ct);

/* An aggregator's release of its aggregate share agg_share (v->out_share_bytes): its central
 * noise added (agg_share_add_noise), then sealed (agg_share_seal) with an ephemeral key whose
 * seed is drawn from the same source. agg_share and the seed are wiped before return (the
 * share leaves only sealed). enc_buf, payload_buf and ct as for agg_share_seal. */
dpm_status_t agg_share_release(const dpm_dap_task_t *t, uint8_t role,
                               const dpm_hpke_config_t *collector, uint64_t sensitivity,
                               dpm_rand_t *rand, const uint8_t *coll_req, size_t coll_req_len,
                               uint8_t *agg_share, uint8_t *enc_buf, uint8_t *payload_buf,
                               dap_hpke_ct_t *ct);

/* The collector: open ct from `role` with its key into agg_share[0, len) (len: the payload's
 * length less DPM_HPKE_NT, else DPM_ERR_PROTOCOL). DPM_ERR_CORRUPT when it does not open: another
 * task, configuration, request, role or key, or a damaged ciphertext (agg_share zeroed);
 * DPM_ERR_PROTOCOL for a config id that is not the key's. */
dpm_status_t agg_share_open(const dpm_dap_task_t *t, uint8_t role,
                            const dpm_dap_hpke_key_t *collector_key, const uint8_t *coll_req,
                            size_t coll_req_len, const dap_hpke_ct_t *ct, uint8_t *agg_share,
                            size_t len);

#endif /* DPM_HOST_AGGREGATOR_SHARE_H */
