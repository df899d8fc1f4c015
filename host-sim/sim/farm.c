/* SPDX-License-Identifier: Apache-2.0 */
/* Inprocess device farm (see farm.h). */
#include "sim/farm.h"

#include <pthread.h>
#include <string.h>

#define PROGRESS_EVERY 16384u
#define SMALL_POPULATION 65536u /* below this, threads split runs rather than devices */
#define CHUNK 65536u            /* devices a thread takes at a time (split by devices) */

/* The next chunk of devices to take: threads pull chunks until none is left, so a thread that
 * gets less CPU (a shared machine) does less of the work instead of holding up the run. */
typedef struct {
    pthread_mutex_t lock;
    uint64_t next, end;
} queue_t;

typedef struct {
    const sim_cfg_t *cfg;
    const sim_pop_t *pop;
    const sim_farm_opts_t *opts;
    queue_t *queue; /* split by devices */
    uint32_t run;
    uint32_t run_lo, run_hi; /* run range (split by runs); aggs indexed from run_lo */
    sim_agg_t *aggs;         /* split by runs: the caller's array */
    sim_agg_t agg;           /* split by devices: this part's aggregate */
    sim_farm_stats_t stats;
    dpm_status_t status;
} part_t;

/* Devices [lo, hi) of one run into *agg. Works on locals; the caller stores the results once
 * (parts sit next to each other: per-device stores would bounce a shared cache line). */
static dpm_status_t run_range(const sim_cfg_t *cfg, const sim_pop_t *pop, const sim_farm_opts_t *o,
                              uint32_t run, uint64_t lo, uint64_t hi, sim_agg_t *agg,
                              sim_farm_stats_t *stats)
{
    size_t bi = 0;
    const sim_block_t *b = sim_pop_find(pop, lo, &bi);
    uint64_t since = 0;
    dpm_status_t st = DPM_OK;
    for (uint64_t i = lo; i < hi && b != NULL && st == DPM_OK;) {
        uint64_t end = pop->first[bi + 1] < hi ? pop->first[bi + 1] : hi;
        if (sim_cfg_participates(cfg, b)) {
            for (; i < end && st == DPM_OK; i++) {
                dpm_report_t rep, dec;
                uint8_t buf[DPM_REPORT_MAX_BYTES];
                size_t len = 0;
                uint64_t bytes = 0;
                st = sim_device_report(cfg, b, run, i, &rep, buf, &len, &bytes);
                stats->rng_bytes += bytes;
                if (st == DPM_ERR_RANGE) { /* the device sends nothing */
                    agg->dropped++;
                    stats->dropped++;
                    st = DPM_OK;
                    continue;
                }
                if (st == DPM_OK) {
                    st = dpm_report_decode(buf, len, &dec);
                }
                if (st == DPM_OK) {
                    st = sim_agg_add_report(cfg, agg, &dec);
                }
                if (st == DPM_OK && o->hook != NULL) {
                    o->hook(o->hook_ctx, cfg, run, i, buf, len);
                }
                stats->reports++;
                if (++since == PROGRESS_EVERY) {
                    sim_progress_add(o->progress, since);
                    since = 0;
                }
            }
        }
        i = end;
        if (bi + 1 < pop->nblocks) {
            b = &pop->block[++bi];
        }
    }
    sim_progress_add(o->progress, since);
    return st;
}

static void *part_devices(void *arg)
{
    part_t *p = arg;
    sim_agg_t agg;
    sim_farm_stats_t stats;
    memset(&stats, 0, sizeof(stats));
    dpm_status_t st = DPM_OK;
    sim_agg_init(p->cfg, &agg);
    while (st == DPM_OK) {
        pthread_mutex_lock(&p->queue->lock);
        uint64_t lo = p->queue->next, hi = lo + CHUNK < p->queue->end ? lo + CHUNK : p->queue->end;
        p->queue->next = hi;
        pthread_mutex_unlock(&p->queue->lock);
        if (lo >= hi) {
            break;
        }
        st = run_range(p->cfg, p->pop, p->opts, p->run, lo, hi, &agg, &stats);
    }
    p->agg = agg;
    p->stats = stats;
    p->status = st;
    return NULL;
}

static void *part_runs(void *arg)
{
    part_t *p = arg;
    sim_farm_stats_t stats;
    memset(&stats, 0, sizeof(stats));
    dpm_status_t st = DPM_OK;
    for (uint32_t r = p->run_lo; r < p->run_hi && st == DPM_OK; r++) {
        /* straight into the caller's slot: a run's aggregate is kilobytes, the run may be 20
         * devices; each part writes its own contiguous runs */
        sim_agg_init(p->cfg, &p->aggs[r]);
        st = run_range(p->cfg, p->pop, p->opts, p->run + r, 0, p->pop->devices, &p->aggs[r],
                       &stats);
    }
    p->stats = stats;
    p->status = st;
    return NULL;
}

/* fn on parts[0 .. n): part 0 on the calling thread (inline if a thread cannot start). */
static void run_parallel(void *(*fn)(void *), part_t *parts, unsigned n)
{
    pthread_t tid[SIM_MAX_THREADS];
    int started[SIM_MAX_THREADS] = {0};
    for (unsigned i = 1; i < n; i++) {
        started[i] = pthread_create(&tid[i], NULL, fn, &parts[i]) == 0;
    }
    fn(&parts[0]);
    for (unsigned i = 1; i < n; i++) {
        if (started[i]) {
            pthread_join(tid[i], NULL);
        } else {
            fn(&parts[i]);
        }
    }
}

static void add_stats(sim_farm_stats_t *dst, const sim_farm_stats_t *src)
{
    if (dst != NULL) {
        dst->reports += src->reports;
        dst->dropped += src->dropped;
        dst->rng_bytes += src->rng_bytes;
    }
}

static unsigned clamp_threads(unsigned t)
{
    return t < 1 ? 1 : (t > SIM_MAX_THREADS ? SIM_MAX_THREADS : t);
}

dpm_status_t sim_farm_runs(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t first,
                           uint32_t nruns, const sim_farm_opts_t *opts, sim_agg_t *aggs,
                           sim_farm_stats_t *stats)
{
    part_t part[SIM_MAX_THREADS];
    unsigned n = clamp_threads(opts->threads);
    dpm_status_t st = DPM_OK;
    memset(part, 0, sizeof(part));
    if (pop->devices < SMALL_POPULATION && nruns >= 2 * n) {
        for (unsigned i = 0; i < n; i++) {
            part[i].cfg = cfg;
            part[i].pop = pop;
            part[i].opts = opts;
            part[i].run = first;
            part[i].aggs = aggs;
            part[i].run_lo = (uint32_t)((uint64_t)nruns * i / n);
            part[i].run_hi = (uint32_t)((uint64_t)nruns * (i + 1) / n);
        }
        run_parallel(part_runs, part, n);
        for (unsigned i = 0; i < n; i++) {
            st = st == DPM_OK ? part[i].status : st;
            add_stats(stats, &part[i].stats);
        }
        return st;
    }
    unsigned m = pop->devices <= CHUNK ? 1u : n;
    queue_t queue;
    pthread_mutex_init(&queue.lock, NULL);
    for (uint32_t r = 0; r < nruns && st == DPM_OK; r++) {
        queue.next = 0;
        queue.end = pop->devices;
        for (unsigned i = 0; i < m; i++) {
            part[i].cfg = cfg;
            part[i].pop = pop;
            part[i].opts = opts;
            part[i].queue = &queue;
            part[i].run = first + r;
        }
        run_parallel(part_devices, part, m);
        /* counts and sums are exact integers: the merged aggregate does not depend on which
         * thread took which chunk (only the float sum of squares may differ in its last bits) */
        sim_agg_init(cfg, &aggs[r]);
        for (unsigned i = 0; i < m; i++) {
            st = st == DPM_OK ? part[i].status : st;
            st = st == DPM_OK ? sim_agg_merge(cfg, &aggs[r], &part[i].agg) : st;
            add_stats(stats, &part[i].stats);
        }
    }
    pthread_mutex_destroy(&queue.lock);
    return st;
}

dpm_status_t sim_farm_replay(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run,
                             uint64_t device, dpm_report_t *rep, uint8_t *buf, size_t *len)
{
    const sim_block_t *b = sim_pop_find(pop, device, NULL);
    *len = 0;
    if (b == NULL) {
        return DPM_ERR_PARAM;
    }
    if (!sim_cfg_participates(cfg, b)) {
        return DPM_OK;
    }
    return sim_device_report(cfg, b, run, device, rep, buf, len, NULL);
}
