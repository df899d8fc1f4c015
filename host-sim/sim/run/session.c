/* SPDX-License-Identifier: Apache-2.0 */
/* Simulation sessions (see session.h). */
#include "sim/run/session.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/run/netmode.h"
#include "sim/run/netmode_dap.h"
#include "sim/pop/progress.h"

#define RUN_CHUNK 256u /* aggregates held at once */

size_t sim_session_count(const sim_scenario_t *sc)
{
    size_t per = 0;
    for (uint32_t c = 0; c < sc->ncampaigns; c++) {
        per += sc->campaign[c].neps;
    }
    return per * sc->ndevices;
}

/* Seconds as the console shows them: milliseconds below a second (exact mode takes that). */
static void fmt_seconds(char *buf, size_t cap, double t)
{
    if (t < 1.0) {
        snprintf(buf, cap, "%6.1f ms", 1e3 * t);
    } else {
        snprintf(buf, cap, "%6.2f s ", t);
    }
}

static void print_line(const sim_result_t *res)
{
    const sim_cfg_t *cfg = &res->cfg;
    char t[32], tail[512] = "";
    fmt_seconds(t, sizeof(t), res->prepare_seconds + res->seconds);
    if (cfg->m->summary != NULL) {
        cfg->m->summary(res, tail, sizeof(tail));
    }
    printf("  %-10s %-44s K=%-11" PRIu64 " %u runs %s  %s\n", cfg->spec->name, cfg->label,
           res->devices, res->runs, t, tail);
    fflush(stdout);
}

/* Runs [first, first + n) of one configuration into aggs. */
static int run_chunk(const sim_cfg_t *cfg, const sim_pop_t *pop, const sim_run_opts_t *o,
                     sim_progress_t *prog, uint32_t first, uint32_t n, sim_agg_t *aggs,
                     sim_result_t *res, sim_session_t *out, char *err, size_t errcap)
{
    if (o->mode == SIM_MODE_EXACT) {
        for (uint32_t r = 0; r < n; r++) {
            uint64_t words = 0;
            if (sim_exact_run(cfg, pop, first + r, &aggs[r], &words) != 0) {
                snprintf(err, errcap, "%s: exact-mode aggregate overflow", cfg->label);
                return -1;
            }
            res->rng_bytes += 8u * words;
            sim_progress_add(prog, 1);
        }
        return 0;
    }
    if (cfg->m->inprocess_run != NULL) { /* devices that send DAP reports, not dpm.v1 */
        for (uint32_t r = 0; r < n; r++) {
            uint64_t reports = 0, bytes = 0;
            sim_agg_init(cfg, &aggs[r]);
            int rc = o->mode == SIM_MODE_NETWORK
                         ? sim_net_dap_run(cfg, pop, first + r + o->net->period, o->net, &aggs[r],
                                           &reports, &bytes, err, errcap)
                         : cfg->m->inprocess_run(cfg, pop, first + r, &aggs[r], &reports, &bytes,
                                                 err, errcap);
            if (rc != 0) {
                return -1;
            }
            aggs[r].reports = reports;
            res->reports += reports;
            res->rng_bytes += bytes;
            sim_progress_add(prog, cfg->reporting);
        }
        return 0;
    }
    if (o->mode == SIM_MODE_NETWORK) {
        int mismatch = 0;
        if (o->net->dap_campaigns != NULL) {
            snprintf(err, errcap,
                     "%s: its devices post dpm.v1 reports to a dpm-collector, --dap-campaigns is "
                     "for a two-aggregator campaign's leader: run them apart (--campaign NAME)",
                     cfg->label);
            return -1;
        }
        if (sim_net_run(cfg, pop, first + o->net->period, o->net, &aggs[0], &res->reports,
                        &mismatch, err, errcap) != 0) {
            return -1;
        }
        out->net_mismatch |= mismatch;
        return 0;
    }
    sim_farm_opts_t fo = {o->threads, prog, o->hook, o->hook_ctx};
    sim_farm_stats_t stats;
    memset(&stats, 0, sizeof(stats));
    dpm_status_t st = sim_farm_runs(cfg, pop, first, n, &fo, aggs, &stats);
    res->reports += stats.reports;
    res->rng_bytes += stats.rng_bytes;
    if (st != DPM_OK) {
        snprintf(err, errcap, "%s: device farm failed: %s", cfg->label, dpm_strerror(st));
        return -1;
    }
    return 0;
}

static int run_config(const sim_scenario_t *sc, const sim_pop_t *pop, uint32_t c, uint32_t e,
                      const sim_run_opts_t *o, sim_result_t *res, sim_session_t *out, char *err,
                      size_t errcap)
{
    sim_cfg_t cfg;
    double start = sim_now();
    out->index++;
    if (sim_cfg_init(&cfg, sc, c, e, err, errcap) != 0) {
        sim_cfg_release(&cfg);
        return -1;
    }
    cfg.exact_only = o->mode == SIM_MODE_EXACT;
    cfg.progress = o->progress;
    sim_progress_phase(o->progress, out->index, out->total, cfg.label, "preparing the truth");
    if (sim_cfg_prepare(&cfg, pop, o->threads, err, errcap) != 0) {
        sim_cfg_release(&cfg);
        return -1;
    }
    sim_agg_t *aggs = malloc(RUN_CHUNK * sizeof(*aggs));
    if (aggs == NULL || sim_result_init(res, &cfg, pop->devices, sc->runs) != 0) {
        snprintf(err, errcap, "out of memory for %u runs", sc->runs);
        free(aggs);
        sim_cfg_release(&cfg);
        return -1;
    }
    res->prepare_seconds = sim_now() - start;
    sim_progress_t prog;
    int exact = o->mode == SIM_MODE_EXACT;
    uint64_t work = exact ? sc->runs : cfg.reporting * (uint64_t)sc->runs;
    char prefix[112];
    snprintf(prefix, sizeof(prefix), "[%zu/%zu] %s", out->index, out->total, cfg.label);
    sim_progress_init(&prog, o->progress, work, exact ? "runs" : "devices", prefix);
    double runs_start = sim_now();
    int st = 0;
    for (uint32_t first = 0; first < sc->runs && st == 0; first += RUN_CHUNK) {
        uint32_t n = sc->runs - first < RUN_CHUNK ? sc->runs - first : RUN_CHUNK;
        st = run_chunk(&res->cfg, pop, o, &prog, first, n, aggs, res, out, err, errcap);
        for (uint32_t r = 0; r < n && st == 0; r++) {
            sim_result_add_run(res, first + r, &aggs[r]);
        }
    }
    sim_progress_done(&prog);
    res->seconds = sim_now() - runs_start;
    free(aggs);
    sim_cfg_release(&cfg);
    if (st == 0 && !o->quiet) {
        print_line(res);
    }
    return st;
}

int sim_session_run(const sim_scenario_t *sc, const sim_run_opts_t *o, sim_session_t *out,
                    char *err, size_t errcap)
{
    memset(out, 0, sizeof(*out));
    size_t total = sim_session_count(sc);
    if (o->mode == SIM_MODE_NETWORK && sc->runs != 1) {
        snprintf(err, errcap,
                 "network mode runs once (the collector aggregates every report "
                 "of a campaign): use --runs 1");
        return -1;
    }
    out->res = calloc(total ? total : 1, sizeof(*out->res));
    if (out->res == NULL) {
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    double start = sim_now();
    int st = 0;
    out->total = total;
    for (uint32_t k = 0; k < sc->ndevices && st == 0; k++) {
        sim_pop_t pop;
        sim_progress_phase(o->progress, out->index + 1, total, "population",
                           "realizing the devices");
        if (sim_pop_build(sc, sc->devices[k], &pop, err, errcap) != 0) {
            return -1;
        }
        out->pop_words += pop.words;
        for (uint32_t c = 0; c < sc->ncampaigns && st == 0; c++) {
            for (uint32_t e = 0; e < sc->campaign[c].neps && st == 0; e++) {
                st = run_config(sc, &pop, c, e, o, &out->res[out->n], out, err, errcap);
                out->n += out->res[out->n].run != NULL;
            }
        }
        sim_pop_free(&pop);
    }
    out->seconds = sim_now() - start;
    return st;
}

void sim_session_free(sim_session_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        sim_result_free(&s->res[i]);
    }
    free(s->res);
    s->res = NULL;
    s->n = 0;
}
