/* SPDX-License-Identifier: Apache-2.0 */
/* A DAP task as the simulator runs it: its TaskConfiguration (a Prio3 VDAF, the central-DP
 * extension with the task's ε, a minimum batch size), the two aggregators' HPKE keys and their
 * shared verification key, all derived from a seed. SIMULATION ONLY: keys from a seed are
 * public to anyone who knows it; a deployment's aggregators make their own.
 *
 * The struct is a plain value (no pointers), so it may be copied with the configuration that
 * holds it; agg_task_decode gives the dpm_dap_task_t that points into it. */
#ifndef DPM_HOST_AGGREGATOR_TASK_H
#define DPM_HOST_AGGREGATOR_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/dap.h"
#include "dpm/port_dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/vdaf.h"

/* The aggregators' hosts in the simulated task's URLs and the device policy that names them. */
#define AGG_SIM_LEADER_HOST "leader.dpm-sim.invalid"
#define AGG_SIM_HELPER_HOST "helper.dpm-sim.invalid"

typedef struct {
    uint8_t id[DPM_DAP_TASK_ID_BYTES];
    uint8_t config[DPM_DAP_TASK_CONFIG_MAX];
    size_t config_len;
    dpm_dap_hpke_key_t key[2]; /* [0] the leader's, [1] the helper's */
    dpm_hpke_config_t hpke[2]; /* what their hpke_config endpoints would announce */
    uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES];
} agg_task_t;

/* Task for VDAF v (two shares) with central ε eps (Q16.16) and min_batch_size, time precision
 * 3600 s, every key and the task id from seed. 0, or -1 with *why (the SDK's refusal). */
int agg_task_make(agg_task_t *k, const dpm_prio3_t *v, dpm_eps_t eps, uint64_t min_batch_size,
                  uint64_t seed, const char **why);

/* The same with discrete Gaussian noise (the central-DP extension's mechanism 2): each
 * aggregator's variance sigma2 >= 1; eps, the (ε, δ)-DP ε a device charges for it. */
int agg_task_make_gauss(agg_task_t *k, const dpm_prio3_t *v, dpm_eps_t eps, uint64_t sigma2,
                        uint64_t min_batch_size, uint64_t seed, const char **why);

/* The hybrid: devices also randomize each example's label at eps0 (Q16.16) before sharding
 * (the label-RR task extension, dpm/expert/dap.h) over a SumVec of groups x 2 x bins entries.
 * k's TaskConfiguration is re-encoded with it (the id and keys stay). 0, or -1 with *why. */
int agg_task_set_local(agg_task_t *k, dpm_eps_t eps0, uint32_t bins, const char **why);

/* k's task decoded (t points into k: keep k alive and unmoved while t is used). */
dpm_status_t agg_task_decode(const agg_task_t *k, dpm_dap_task_t *t);

/* The device policy that accepts k's task: its two aggregators and keys, its ε and batch size. */
void agg_task_policy(const agg_task_t *k, const dpm_dap_task_t *t, dpm_dap_policy_t *p);

#endif /* DPM_HOST_AGGREGATOR_TASK_H */
