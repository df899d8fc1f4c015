/* SPDX-License-Identifier: Apache-2.0 */
/* Inprocess device farm (see farm.h). */
#include "sim/run/farm.h"

#include <pthread.h>
#include <string.h>

#include "sim/pop/parallel.h"

#define PROGRESS_EVERY 16384u
#define SMALL_POPULATION 65536u /* below this, threads split runs rather than devices */
/* Devices a thread takes at a time (split by devices): ~3 ms of work, so that at the end of a
 * run the other threads wait at most that long for the last chunk (65,536 devices, ~50 ms, cost
 * 2 threads ~5% of a 2-million-device run, more when the machine is shared); a chunk costs one
 * uncontended lock. */
#define CHUNK 4096u

/* The next chunk of devices (or the next run) to take: threads pull work until none is left, so
 * a thread that gets less CPU (a shared machine) does less of the work instead of holding up
 * the run. */
typedef struct {
    pthread_mutex_t lock;
    uint64_t next, end;
} queue_t;

typedef struct {
    const sim_cfg_t *cfg;
    const sim_pop_t *pop;
    const sim_farm_opts_t *opts;
    queue_t *queue; /* devices of run `run`, or run indices (split by runs) */
    uint32_t run;
    sim_agg_t *aggs; /* split by runs: the caller's array, indexed by run - first */
    sim_agg_t agg;   /* split by devices: this part's aggregate */
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

/* The next up to n indices [*lo, *hi) of q; 0 when none is left. */
static int take(queue_t *q, uint64_t n, uint64_t *lo, uint64_t *hi)
{
    pthread_mutex_lock(&q->lock);
    *lo = q->next;
    *hi = *lo + n < q->end ? *lo + n : q->end;
    q->next = *hi;
    pthread_mutex_unlock(&q->lock);
    return *lo < *hi;
}

static void *part_devices(void *arg)
{
    part_t *p = arg;
    sim_agg_t agg;
    sim_farm_stats_t stats;
    memset(&stats, 0, sizeof(stats));
    dpm_status_t st = DPM_OK;
    sim_agg_init(p->cfg, &agg);
    uint64_t lo, hi;
    while (st == DPM_OK && take(p->queue, CHUNK, &lo, &hi)) {
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
    uint64_t r, hi;
    while (st == DPM_OK && take(p->queue, 1, &r, &hi)) {
        /* straight into the caller's slot: a run's aggregate is kilobytes, the run may be 20
         * devices; a run is made by one thread whichever it is, so its aggregate is the same */
        sim_agg_init(p->cfg, &p->aggs[r]);
        st = run_range(p->cfg, p->pop, p->opts, p->run + (uint32_t)r, 0, p->pop->devices,
                       &p->aggs[r], &stats);
    }
    p->stats = stats;
    p->status = st;
    return NULL;
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
    queue_t queue;
    pthread_mutex_init(&queue.lock, NULL);
    if (pop->devices < SMALL_POPULATION && nruns >= 2 * n) {
        queue.next = 0;
        queue.end = nruns;
        for (unsigned i = 0; i < n; i++) {
            part[i].cfg = cfg;
            part[i].pop = pop;
            part[i].opts = opts;
            part[i].queue = &queue;
            part[i].run = first;
            part[i].aggs = aggs;
        }
        sim_parallel(part_runs, part, sizeof(part[0]), n);
        for (unsigned i = 0; i < n; i++) {
            st = st == DPM_OK ? part[i].status : st;
            add_stats(stats, &part[i].stats);
        }
        pthread_mutex_destroy(&queue.lock);
        return st;
    }
    unsigned m = pop->devices <= CHUNK ? 1u : n;
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
        sim_parallel(part_devices, part, sizeof(part[0]), m);
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
