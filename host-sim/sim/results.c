/* Per-run estimates and summaries (see results.h). */
#include "sim/results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int sim_result_init(sim_result_t *res, const sim_cfg_t *cfg, const sim_truth_t *truth,
                    uint64_t devices, uint32_t runs)
{
    memset(res, 0, sizeof(*res));
    res->devices = devices;
    res->cfg = *cfg;
    res->truth = *truth;
    res->nitems = cfg->d + cfg->d * (cfg->d - 1) / 2;
    res->runs = runs;
    size_t n = (size_t)runs * cfg->nmetrics * res->nitems;
    res->run = malloc(n * sizeof(*res->run));
    if (res->run == NULL) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        res->run[i].est = res->run[i].lo = res->run[i].hi = res->run[i].sd = NAN;
    }
    return 0;
}

void sim_result_free(sim_result_t *res)
{
    free(res->run);
    res->run = NULL;
}

const sim_item_run_t *sim_result_at(const sim_result_t *res, uint32_t run, uint32_t j, uint32_t i)
{
    return &res->run[((size_t)run * res->cfg.nmetrics + j) * res->nitems + i];
}

static sim_item_run_t *item_at(sim_result_t *res, uint32_t run, uint32_t j, uint32_t i)
{
    return &res->run[((size_t)run * res->cfg.nmetrics + j) * res->nitems + i];
}

void sim_result_item(const sim_result_t *res, uint32_t j, uint32_t i, int *g, int *h, double *truth)
{
    uint32_t d = res->cfg.d;
    if (i < d) {
        *g = (int)i;
        *h = -1;
        *truth = (res->truth.mean[j][i] + 1.0) / 2.0;
        return;
    }
    uint32_t k = i - d;
    for (uint32_t a = 0; a < d; a++) {
        uint32_t row = d - 1 - a; /* pairs (a, b > a) */
        if (k < row) {
            *g = (int)a;
            *h = (int)(a + 1 + k);
            *truth = (res->truth.mean[j][a] - res->truth.mean[j][a + 1 + k]) / 2.0;
            return;
        }
        k -= row;
    }
}

void sim_result_add_run(sim_result_t *res, uint32_t run, const sim_agg_t *agg)
{
    const sim_cfg_t *cfg = &res->cfg;
    const sim_scenario_t *sc = cfg->sc;
    double z = 1.959963984540054;
    (void)dpm_disp_normal_quantile(0.5 + sc->confidence / 2.0, &z);
    for (uint32_t j = 0; j < cfg->nmetrics; j++) {
        double nu2[SIM_MAX_GROUPS];
        for (uint32_t g = 0; g < cfg->d; g++) {
            nu2[g] =
                sc->nu2_worst ? DPM_DISP_NU2_WORST : fmin(fmax(res->truth.nu2[j][g], 0.0), 1.0);
        }
        dpm_disp_estimate_t est;
        if (dpm_disp_estimate(&cfg->params, &agg->m[j], sc->sizes_estimated ? NULL : res->truth.n,
                              nu2, &est) != DPM_OK) {
            continue; /* the items stay NaN */
        }
        for (uint32_t g = 0; g < cfg->d; g++) {
            if (!est.group[g].valid) {
                continue;
            }
            sim_item_run_t *it = item_at(res, run, j, g);
            it->est = (est.group[g].mean + 1.0) / 2.0;
            it->sd = sqrt(est.group[g].var) / 2.0;
            it->lo = it->est - z * it->sd;
            it->hi = it->est + z * it->sd;
        }
        uint32_t i = cfg->d;
        for (uint32_t g = 0; g < cfg->d; g++) {
            for (uint32_t h = g + 1; h < cfg->d; h++, i++) {
                dpm_disp_gap_t gap;
                if (dpm_disp_gap(&est, g, h, sc->confidence, &gap) != DPM_OK) {
                    continue;
                }
                sim_item_run_t *it = item_at(res, run, j, i);
                it->est = gap.diff / 2.0;
                it->sd = sqrt(gap.var) / 2.0;
                it->lo = gap.ci_lo / 2.0;
                it->hi = gap.ci_hi / 2.0;
            }
        }
    }
}

void sim_result_summary(const sim_result_t *res, uint32_t j, uint32_t i, sim_item_summary_t *s)
{
    int g, h;
    memset(s, 0, sizeof(*s));
    sim_result_item(res, j, i, &g, &h, &s->truth);
    double se = 0.0, sq = 0.0, sa = 0.0, sp = 0.0, sd = 0.0, cov = 0.0;
    for (uint32_t r = 0; r < res->runs; r++) {
        const sim_item_run_t *it = sim_result_at(res, r, j, i);
        if (isnan(it->est)) {
            continue;
        }
        double e = it->est - s->truth;
        s->runs++;
        se += e;
        sq += e * e;
        sa += fabs(e);
        sp += fabs(fabs(it->est) - fabs(s->truth));
        sd += it->sd;
        cov += it->lo <= s->truth && s->truth <= it->hi;
    }
    double n = s->runs;
    s->mean_error = n > 0 ? se / n : NAN;
    s->rmse = n > 0 ? sqrt(sq / n) : NAN;
    s->mean_abs_error = n > 0 ? sa / n : NAN;
    s->paper_abs_error = n > 0 && h >= 0 ? sp / n : NAN;
    s->coverage = n > 0 ? cov / n : NAN;
    s->mean_sd = n > 0 ? sd / n : NAN;
}
