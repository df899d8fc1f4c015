/* SPDX-License-Identifier: Apache-2.0 */
/* Generic configurations, devices and aggregates (see sim_cfg.h). */
#include "sim/devices/sim_cfg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/stream.h"

/* Device index of the exact-mode stream of a run: no real device has it. */
#define EXACT_STREAM_DEVICE UINT64_MAX

int sim_cfg_init(sim_cfg_t *cfg, const sim_scenario_t *sc, uint32_t c, uint32_t e, char *err,
                 size_t errcap)
{
    memset(cfg, 0, sizeof(*cfg));
    const sim_campaign_spec_t *s = &sc->campaign[c];
    cfg->m = s->mech;
    cfg->sc = sc;
    cfg->spec = s;
    cfg->campaign_index = c;
    cfg->eps_index = e;
    cfg->eps = s->eps[e];
    cfg->d = s->ngroups;
    cfg->eps_implemented = NAN;
    for (uint32_t g = 0; g < SIM_MAX_GROUPS; g++) {
        cfg->group_map[g] = -1;
    }
    for (uint32_t i = 0; i < s->ngroups; i++) {
        cfg->group_map[s->groups[i]] = (int32_t)i;
        cfg->pop_group[i] = s->groups[i];
    }
    cfg->seed = sim_stream_key(sc->seed, c, e);
    if (cfg->m == NULL) {
        snprintf(err, errcap, "campaign '%s' has no mechanism", s->name);
        return -1;
    }
    return cfg->m->init(cfg, err, errcap);
}

int sim_cfg_items(sim_cfg_t *cfg, uint32_t n)
{
    free(cfg->items);
    cfg->items = calloc(n ? n : 1, sizeof(*cfg->items));
    cfg->nitems = cfg->items != NULL ? n : 0;
    for (uint32_t i = 0; i < cfg->nitems; i++) {
        cfg->items[i].g = cfg->items[i].h = -1;
    }
    return cfg->items != NULL ? 0 : -1;
}

int sim_cfg_prepare(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                    size_t errcap)
{
    sim_cfg_release(cfg);
    return cfg->m->prepare(cfg, pop, threads, err, errcap);
}

void sim_cfg_release(sim_cfg_t *cfg)
{
    if (cfg->m != NULL && cfg->m->release != NULL) {
        cfg->m->release(cfg);
    }
    free(cfg->items);
    cfg->items = NULL;
    cfg->nitems = 0;
}

const char *sim_cfg_group_name(const sim_cfg_t *cfg, uint32_t g)
{
    return cfg->sc->group[cfg->pop_group[g]].name;
}

int sim_cfg_participates(const sim_cfg_t *cfg, const sim_block_t *b)
{
    return cfg->group_map[b->group] >= 0 && cfg->m->participates(cfg, b);
}

uint64_t sim_cfg_device_key(const sim_cfg_t *cfg, uint32_t run, uint64_t device)
{
    return sim_stream_key(cfg->seed, run, device);
}

static dpm_status_t device_report(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                                  uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len,
                                  uint64_t *rng_bytes, const sim_exchange_t *x)
{
    /* the device's own random source: its stream, the port over it, the SDK's bit reader */
    sim_stream_t stream;
    sim_stream_init(&stream, sim_cfg_device_key(cfg, run, device));
    dpm_rng_t port = sim_stream_port(&stream);
    dpm_rand_t r;
    dpm_status_t st = dpm_rand_init(&r, &port);
    if (st == DPM_OK) {
        st = x != NULL ? cfg->m->report_rounds(cfg, b, device, run, &r, rep, x)
                       : cfg->m->report(cfg, b, device, run, &r, rep);
    }
    if (st == DPM_OK) {
        st = dpm_report_encode(rep, buf, DPM_REPORT_MAX_BYTES, len);
    }
    if (rng_bytes != NULL) {
        *rng_bytes = (uint64_t)r.rng_calls * DPM_RAND_BUF_BYTES;
    }
    return st;
}

dpm_status_t sim_device_report(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                               uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len,
                               uint64_t *rng_bytes)
{
    return device_report(cfg, b, run, device, rep, buf, len, rng_bytes, NULL);
}

dpm_status_t sim_device_report_rounds(const sim_cfg_t *cfg, const sim_block_t *b, uint32_t run,
                                      uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len,
                                      const sim_exchange_t *x)
{
    return cfg->m->report_rounds == NULL
               ? DPM_ERR_PARAM
               : device_report(cfg, b, run, device, rep, buf, len, NULL, x);
}

void sim_agg_init(const sim_cfg_t *cfg, sim_agg_t *agg)
{
    agg->reports = 0;
    agg->dropped = 0;
    cfg->m->agg_init(cfg, agg);
}

dpm_status_t sim_agg_add_report(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep)
{
    if (cfg->checked) {
        const char *why = NULL;
        if (dpm_mech_check_report(&cfg->mech, rep, &why) != DPM_OK) {
            return DPM_ERR_PROTOCOL;
        }
    }
    dpm_status_t st = cfg->m->agg_add(cfg, agg, rep);
    agg->reports += st == DPM_OK;
    return st;
}

dpm_status_t sim_agg_merge(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src)
{
    dpm_status_t st = cfg->m->agg_merge(cfg, dst, src);
    if (st == DPM_OK) {
        dst->reports += src->reports;
        dst->dropped += src->dropped;
    }
    return st;
}

int sim_exact_run(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run, sim_agg_t *agg,
                  uint64_t *words)
{
    sim_rng_t rng;
    sim_rng_init(&rng, sim_cfg_device_key(cfg, run, EXACT_STREAM_DEVICE));
    sim_agg_init(cfg, agg);
    int st = cfg->m->exact(cfg, pop, &rng, agg);
    if (st == 0) {
        agg->reports = cfg->reporting;
    }
    if (words != NULL) {
        *words = sim_rng_words(&rng);
    }
    return st;
}
