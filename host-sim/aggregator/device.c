/* SPDX-License-Identifier: Apache-2.0 */
/* A simulated device's two-aggregator report (see device.h). */
#include "aggregator/device.h"

#include <stdlib.h>
#include <string.h>

#include "dpm/port_hpke.h"
#include "dpm/ram_storage.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/device_dap.h"

#define DEVICE_NOW 1700000000 /* its wall clock unless the caller sets wall_s */

static uint64_t zero_ms(void *ctx)
{
    (void)ctx;
    return 0;
}

static int fixed_wall(void *ctx, int64_t *out)
{
    *out = ((const agg_device_t *)ctx)->wall_s;
    return 0;
}

/* The device's DAP outbox: the report is already in d->report (built in place); queuing it
 * records its length, and the caller hands it to the aggregators. */
static int room(void *ctx, size_t len)
{
    return len <= ((agg_device_t *)ctx)->report_cap;
}

static dpm_status_t put(void *ctx, const uint8_t *task_id, const uint8_t *report, size_t len)
{
    agg_device_t *d = ctx;
    (void)task_id, (void)report;
    d->report_len = len;
    return DPM_OK;
}

agg_device_t *agg_device_new(const agg_task_t *k, const dpm_dap_task_t *t)
{
    agg_device_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        return NULL;
    }
    agg_task_policy(k, t, &d->policy);
    /* the hosts of the task's own URLs (a simulated task's are agg_task_policy's), so a task
     * of real aggregators (tests/e2e/tool_dap.c) is accepted too */
    const dpm_span_t urls[2] = {t->leader_url, t->helper_url};
    for (int i = 0; i < 2; i++) {
        dpm_span_t h;
        if (dpm_dap_url_host(urls[i], &h) == DPM_OK && h.len < sizeof(d->host[i])) {
            memcpy(d->host[i], h.p, h.len);
            d->host[i][h.len] = '\0';
            d->policy.aggregators[i].host = d->host[i];
        }
    }
    d->sealer = dpm_hpke_sealer();
    d->wall_s = DEVICE_NOW;
    d->report_cap = dpm_dap_report_bytes(&t->vdaf);
    d->report = malloc(d->report_cap);
    d->work_words = dpm_dap_work_words(t); /* a label-RR task's randomized copy too */
    d->work = malloc(8u * (size_t)d->work_words + 8u);
    if (d->report == NULL || d->work == NULL) {
        agg_device_free(d);
        return NULL;
    }
    return d;
}

void agg_device_free(agg_device_t *d)
{
    if (d != NULL) {
        free(d->report);
        free(d->work);
        free(d);
    }
}

dpm_status_t agg_device_sumvec(agg_device_t *d, const agg_task_t *k, dpm_rng_t rng,
                               const uint64_t *m, size_t n, const char **why)
{
    dpm_ram_storage_t ram;
    dpm_device_config_t c;
    memset(&c, 0, sizeof(c));
    c.rng = rng;
    c.clock.monotonic_ms = zero_ms;
    c.clock.wall_time_s = fixed_wall;
    c.clock.ctx = d;
    c.storage = dpm_ram_storage(&ram, d->region, AGG_DEVICE_REGION);
    c.region_size = AGG_DEVICE_REGION;
    c.policy.defaults.max_eps = d->policy.max_central_eps;
    c.policy.defaults.max_budget = d->policy.max_central_eps;
    c.policy.dap = &d->policy;
    dpm_dap_task_t t;
    const char *w = NULL;
    dpm_status_t st = dpm_device_init(&d->dev, &c);
    if (st == DPM_OK) {
        st = dpm_device_dap_accept_task(&d->dev, k->id, k->config, k->config_len, &k->hpke[0],
                                        &k->hpke[1], &t, &w);
    } else {
        w = dpm_device_why(&d->dev);
    }
    if (st == DPM_OK) {
        dpm_dap_io_t io;
        memset(&io, 0, sizeof(io));
        io.sealer = d->sealer;
        io.outbox.room = room;
        io.outbox.put = put;
        io.outbox.ctx = d;
        io.report = d->report;
        io.report_cap = d->report_cap;
        io.work = d->work;
        io.work_words = d->work_words;
        d->report_len = 0;
        st = dpm_device_dap_report_sumvec(&d->dev, &io, &t, 0, m, n, NULL, &w);
    }
    if (why != NULL) {
        *why = w;
    }
    return st;
}
