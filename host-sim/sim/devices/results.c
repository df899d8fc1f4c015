/* SPDX-License-Identifier: Apache-2.0 */
/* Per-run estimates and summaries (see results.h). */
#include "sim/devices/results.h"

#include "estimate/ci_flags.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sim_result_init(sim_result_t *res, const sim_cfg_t *cfg, uint64_t devices, uint32_t runs)
{
    memset(res, 0, sizeof(*res));
    res->devices = devices;
    res->cfg = *cfg;
    res->runs = runs;
    size_t n = (size_t)runs * cfg->nitems;
    res->run = malloc((n ? n : 1) * sizeof(*res->run));
    res->cfg.items = malloc((cfg->nitems ? cfg->nitems : 1) * sizeof(*res->cfg.items));
    if (cfg->m->ext_new != NULL) {
        res->ext = cfg->m->ext_new(cfg, runs);
    }
    if (res->run == NULL || res->cfg.items == NULL ||
        (cfg->m->ext_new != NULL && res->ext == NULL)) {
        sim_result_free(res);
        return -1;
    }
    memcpy(res->cfg.items, cfg->items, cfg->nitems * sizeof(*cfg->items));
    for (size_t i = 0; i < n; i++) {
        res->run[i].est = res->run[i].lo = res->run[i].hi = res->run[i].sd = NAN;
        res->run[i].flags = 0;
    }
    return 0;
}

void sim_result_free(sim_result_t *res)
{
    if (res->ext != NULL && res->cfg.m != NULL && res->cfg.m->ext_free != NULL) {
        res->cfg.m->ext_free(res->ext);
    }
    free(res->run);
    free(res->cfg.items);
    res->run = NULL;
    res->cfg.items = NULL;
    res->ext = NULL;
}

void sim_result_add_run(sim_result_t *res, uint32_t run, const sim_agg_t *agg)
{
    sim_item_run_t *out = &res->run[(size_t)run * res->cfg.nitems];
    res->cfg.m->estimate(&res->cfg, agg, run, out, res->ext);
}

const sim_item_run_t *sim_result_at(const sim_result_t *res, uint32_t run, uint32_t item)
{
    return &res->run[(size_t)run * res->cfg.nitems + item];
}

void sim_result_summary(const sim_result_t *res, uint32_t item, sim_item_summary_t *s)
{
    memset(s, 0, sizeof(*s));
    s->truth = res->cfg.items[item].truth;
    double se = 0.0, sq = 0.0, sa = 0.0, sp = 0.0, spp = 0.0, sd = 0.0, cov = 0.0, ncov = 0.0;
    double flagged = 0.0, no_claim = 0.0;
    for (uint32_t r = 0; r < res->runs; r++) {
        const sim_item_run_t *it = sim_result_at(res, r, item);
        if (isnan(it->est)) {
            continue;
        }
        double e = it->est - s->truth, pe = fabs(fabs(it->est) - fabs(s->truth));
        s->runs++;
        se += e;
        sq += e * e;
        sa += fabs(e);
        sp += pe;
        spp += pe * pe;
        sd += it->sd;
        flagged += it->flags != 0;
        no_claim += (it->flags & DPM_CI_NO_CLAIM) != 0;
        /* a run without an interval (dpauc has none) counts neither way */
        if (!isnan(it->lo) && !isnan(it->hi)) {
            ncov += 1.0;
            cov += it->lo <= s->truth && s->truth <= it->hi;
        }
    }
    double n = s->runs;
    s->mean_error = n > 0 ? se / n : NAN;
    s->rmse = n > 0 ? sqrt(sq / n) : NAN;
    s->mean_abs_error = n > 0 ? sa / n : NAN;
    s->paper_abs_error = n > 0 ? sp / n : NAN;
    s->sd_abs_error = n > 1 ? sqrt(fmax(spp - sp * sp / n, 0.0) / (n - 1.0)) : NAN;
    s->coverage = ncov > 0 ? cov / ncov : NAN;
    s->mean_sd = n > 0 ? sd / n : NAN;
    s->flagged = n > 0 ? flagged / n : NAN;
    s->no_claim = n > 0 ? no_claim / n : NAN;
}
