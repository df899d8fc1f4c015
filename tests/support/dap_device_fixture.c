/* SPDX-License-Identifier: Apache-2.0 */
/* A device for the two-aggregator tests (dap_fixture.h); a file of its own so that a bench or
 * fuzz target that links the task fixture does not pull the device in. */
#include <stdlib.h>

#include "dap_fixture.h"
#include "dpm/port_hpke.h"

static uint64_t zero_ms(void *ctx)
{
    (void)ctx;
    return 0;
}

dpm_status_t dap_device_fixture_start(dap_device_fixture_t *f, uint64_t seed,
                                      dpm_eps_param_t device_max_eps)
{
    const dpm_prio3_t *v = &f->tf.task.vdaf;
    fake_storage_init(&f->fs, f->mem, DAP_DEVICE_REGION, 1);
    test_rng_seed(&f->t, seed);
    f->now = DAP_DEVICE_NOW;
    f->cfg.rng = test_rng_port(&f->t);
    f->cfg.clock.monotonic_ms = zero_ms;
    f->cfg.clock.wall_time_s = dap_fixed_wall_clock;
    f->cfg.clock.ctx = &f->now;
    f->cfg.storage = fake_storage_port(&f->fs);
    f->cfg.region_size = DAP_DEVICE_REGION;
    f->cfg.policy.defaults.max_eps = DPM_EPS(1);
    f->cfg.policy.defaults.max_budget = DPM_EPS(2);
    f->cfg.policy.device.max_eps = device_max_eps;
    dap_task_policy(&f->tf, DPM_EPS_ONE, 100, &f->dap);
    f->cfg.policy.dap = &f->dap;
    dpm_status_t st = dpm_device_init(&f->dev, &f->cfg);
    if (st != DPM_OK) {
        return st;
    }
    dap_ram_outbox_init(&f->outbox, f->outbox_mem, sizeof(f->outbox_mem));
    const size_t words = dpm_dap_work_words(&f->tf.task);
    f->report = malloc(dpm_dap_report_bytes(v));
    f->work = malloc(8u * words);
    if (f->report == NULL || f->work == NULL) {
        dap_device_fixture_stop(f);
        return DPM_ERR_BUFFER;
    }
    f->io.sealer = dpm_hpke_sealer();
    f->io.outbox = dap_ram_outbox(&f->outbox);
    f->io.report = f->report;
    f->io.report_cap = dpm_dap_report_bytes(v);
    f->io.work = f->work;
    f->io.work_words = words;
    return DPM_OK;
}

void dap_device_fixture_stop(dap_device_fixture_t *f)
{
    free(f->report);
    free(f->work);
    f->report = NULL;
    f->work = NULL;
}
