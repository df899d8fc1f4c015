/* SPDX-License-Identifier: Apache-2.0 */
/* Two-aggregator (DAP) tests, benches and fuzz seeds: a task of any Prio3 variant with two
 * aggregators whose keys derive from fixed bytes, the policy that names them, a RAM outbox for
 * sealed reports (dpm_dap_outbox_t), and the aggregators' side run end to end: decode the report,
 * open both input shares (port/tls), verify the proof, aggregate and unshard (dpm/expert/vdaf.h).
 */
#ifndef DAP_FIXTURE_H
#define DAP_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/dpm.h"
#include "dpm/port_dap.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/device_dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/vdaf.h"
#include "fake_storage.h"
#include "test_rng.h"

#define DAP_LEADER_HOST "leader.example"
#define DAP_HELPER_HOST "helper.example"

typedef struct {
    uint8_t id[DPM_DAP_TASK_ID_BYTES];
    uint8_t config[DPM_DAP_TASK_CONFIG_MAX];
    size_t config_len;
    dpm_dap_hpke_key_t leader_key, helper_key;
    dpm_hpke_config_t leader_cfg, helper_cfg;
    dpm_dap_task_t task; /* decoded from config */
} dap_task_fixture_t;

/* Build task f for VDAF v (two shares) with central ε eps and min_batch_size, time precision
 * 3600 s, no interval; keys from seed, both aggregators' HPKE configurations with AES-128-GCM
 * (dap_task_fixture_aead: with the AEADs given). 0 on success. */
int dap_task_fixture(dap_task_fixture_t *f, const dpm_prio3_t *v, dpm_eps_t eps,
                     uint64_t min_batch_size, uint8_t seed);
int dap_task_fixture_aead(dap_task_fixture_t *f, const dpm_prio3_t *v, dpm_eps_t eps,
                          uint64_t min_batch_size, uint8_t seed, uint16_t leader_aead,
                          uint16_t helper_aead);

/* The policy naming f's two aggregators, central ε up to max_eps, batch size from min_batch. */
void dap_task_policy(const dap_task_fixture_t *f, dpm_eps_t max_eps, uint64_t min_batch,
                     dpm_dap_policy_t *p);

/* A dpm_clock_t wall_time_s reading the int64_t its ctx points at. */
int dap_fixed_wall_clock(void *ctx, int64_t *out);

/* A RAM outbox: reports back to back (u32 length, bytes) in mem[0, cap). */
typedef struct {
    uint8_t *mem;
    size_t cap, used;
    uint32_t count;
    dpm_status_t put_status; /* DPM_OK, or what put fails with */
} dap_ram_outbox_t;
void dap_ram_outbox_init(dap_ram_outbox_t *o, uint8_t *mem, size_t cap);
dpm_dap_outbox_t dap_ram_outbox(dap_ram_outbox_t *o);

/* The aggregators on one report: DPM_OK and result[0 .. v->output_len) the unsharded values of
 * this one report, or the status of the step that rejected it (*where names it). */
dpm_status_t dap_aggregate_one(const dap_task_fixture_t *f, const uint8_t *report, size_t len,
                               uint64_t *result, size_t result_len, const char **where);

/* A device that reports task tf's measurements: fake storage, the test RNG, the wall clock
 * `now`, a policy naming tf's aggregators (central ε up to 1, batches of at least 100; ledger
 * defaults ε 1 a report, budget 2), a RAM outbox, and the io of a report (its buffer and a work
 * area of dpm_dap_work_words). The caller fills tf, then dap_device_fixture_start. */
#define DAP_DEVICE_REGION 8192u
#define DAP_DEVICE_NOW 1700000000 /* the device's wall clock, seconds */
#define DAP_DEVICE_OUTBOX (64u * 1024u)
typedef struct {
    uint8_t mem[DAP_DEVICE_REGION];
    fake_storage_t fs;
    test_rng_t t;
    failing_rng_t failing; /* for a test that swaps the RNG */
    dpm_device_config_t cfg;
    dpm_device_t dev;
    dap_task_fixture_t tf;
    dpm_dap_policy_t dap; /* the device's policy.dap points here */
    uint8_t outbox_mem[DAP_DEVICE_OUTBOX];
    dap_ram_outbox_t outbox;
    uint8_t *report;
    uint64_t *work;
    dpm_dap_io_t io;
    int64_t now;
} dap_device_fixture_t;

/* Open the device of f (f->tf filled) with the test RNG seeded by seed and the device cap
 * device_max_eps (DPM_EPS_Q16(0): none): DPM_OK, or the status that failed (nothing to free
 * then but f). */
dpm_status_t dap_device_fixture_start(dap_device_fixture_t *f, uint64_t seed,
                                      dpm_eps_param_t device_max_eps);
/* The buffers start took (f itself is the caller's). */
void dap_device_fixture_stop(dap_device_fixture_t *f);

#endif
