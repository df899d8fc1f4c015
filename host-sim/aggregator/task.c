/* SPDX-License-Identifier: Apache-2.0 */
/* A simulated DAP task (see task.h). */
#include "aggregator/task.h"

#include <string.h>

#include "common/stream.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/vdaf.h"

/* n bytes of seed's stream `what` (a tag per use: the keys, the id, the verification key). */
static void seeded(uint64_t seed, uint32_t what, uint8_t *out, size_t n)
{
    sim_stream_t s;
    sim_stream_init(&s, sim_stream_key(seed, what, 0x646170u /* "dap" */));
    for (size_t i = 0; i < n; i += 8) {
        uint64_t x = sim_stream_next(&s);
        for (size_t j = 0; j < 8 && i + j < n; j++) {
            out[i + j] = (uint8_t)(x >> (8 * j));
        }
    }
}

static int key(agg_task_t *k, int i, uint64_t seed)
{
    uint8_t ikm[32];
    seeded(seed, 1u + (uint32_t)i, ikm, sizeof(ikm));
    return dpm_dap_hpke_key_derive(ikm, sizeof(ikm), (uint8_t)(1 + i), DPM_HPKE_AEAD_AES_128_GCM,
                                   &k->key[i], &k->hpke[i]) == DPM_OK
               ? 0
               : -1;
}

/* sigma2 0: discrete Laplace */
static int make(agg_task_t *k, const dpm_prio3_t *v, dpm_eps_t eps, uint64_t sigma2,
                uint64_t min_batch_size, uint64_t seed, const char **why)
{
    static const char info[] = "dpm-sim two-aggregator task";
    static const char leader[] = "https://" AGG_SIM_LEADER_HOST "/";
    static const char helper[] = "https://" AGG_SIM_HELPER_HOST "/";
    memset(k, 0, sizeof(*k));
    seeded(seed, 0, k->id, sizeof(k->id));
    seeded(seed, 3, k->verify_key, sizeof(k->verify_key));
    dpm_dap_task_t t;
    memset(&t, 0, sizeof(t));
    t.task_info.p = (const uint8_t *)info;
    t.task_info.len = sizeof(info) - 1;
    t.leader_url.p = (const uint8_t *)leader;
    t.leader_url.len = sizeof(leader) - 1;
    t.helper_url.p = (const uint8_t *)helper;
    t.helper_url.len = sizeof(helper) - 1;
    t.time_precision = 3600;
    t.min_batch_size = min_batch_size;
    t.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    t.vdaf = *v;
    t.dp_mechanism = sigma2 > 0 ? DPM_DAP_DP_DISCRETE_GAUSSIAN : DPM_DAP_DP_DISCRETE_LAPLACE;
    t.central_eps = eps;
    t.central_sigma2 = sigma2;
    if (key(k, 0, seed) != 0 || key(k, 1, seed) != 0) {
        *why = "the SDK's HPKE refuses the derived keys";
        return -1;
    }
    if (dpm_dap_task_config_encode(&t, k->config, sizeof(k->config), &k->config_len) != DPM_OK) {
        *why = "the SDK cannot encode the task (eps, batch size or VDAF refused)";
        return -1;
    }
    dpm_dap_task_t check;
    if (agg_task_decode(k, &check) != DPM_OK) {
        *why = "the SDK refuses the task it encoded";
        return -1;
    }
    return 0;
}

int agg_task_make(agg_task_t *k, const dpm_prio3_t *v, dpm_eps_t eps, uint64_t min_batch_size,
                  uint64_t seed, const char **why)
{
    return make(k, v, eps, 0, min_batch_size, seed, why);
}

int agg_task_make_gauss(agg_task_t *k, const dpm_prio3_t *v, dpm_eps_t eps, uint64_t sigma2,
                        uint64_t min_batch_size, uint64_t seed, const char **why)
{
    if (sigma2 == 0) {
        *why = "a discrete Gaussian task needs sigma2 >= 1";
        return -1;
    }
    return make(k, v, eps, sigma2, min_batch_size, seed, why);
}

int agg_task_set_local(agg_task_t *k, dpm_eps_t eps0, uint32_t bins, const char **why)
{
    dpm_dap_task_t t;
    uint8_t config[DPM_DAP_TASK_CONFIG_MAX];
    size_t len = 0;
    const char *r = NULL;
    if (agg_task_decode(k, &t) != DPM_OK) {
        *why = "the SDK refuses the task";
        return -1;
    }
    t.local_eps = eps0;
    t.local_bins = bins;
    dpm_status_t st = dpm_dap_task_config_encode(&t, config, sizeof(config), &len);
    if (st == DPM_OK) {
        agg_task_t next = *k;
        memcpy(next.config, config, len);
        next.config_len = len;
        st = dpm_dap_task_decode(next.id, next.config, next.config_len, &next.hpke[0],
                                 &next.hpke[1], &t, &r);
        if (st == DPM_OK) {
            *k = next;
            return 0;
        }
    }
    *why = r != NULL ? r : "the SDK cannot encode the task's label RR (local_eps, bins)";
    return -1;
}

dpm_status_t agg_task_decode(const agg_task_t *k, dpm_dap_task_t *t)
{
    return dpm_dap_task_decode(k->id, k->config, k->config_len, &k->hpke[0], &k->hpke[1], t, NULL);
}

void agg_task_policy(const agg_task_t *k, const dpm_dap_task_t *t, dpm_dap_policy_t *p)
{
    memset(p, 0, sizeof(*p));
    p->naggregators = 2;
    p->aggregators[0].host = AGG_SIM_LEADER_HOST;
    p->aggregators[0].hpke = k->hpke[0];
    p->aggregators[1].host = AGG_SIM_HELPER_HOST;
    p->aggregators[1].hpke = k->hpke[1];
    p->max_central_eps = DPM_EPS_Q16(t->central_eps);
    p->min_batch_size = t->min_batch_size;
    p->accept_gaussian = t->dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN; /* the task given */
}
