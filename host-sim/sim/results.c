/* SPDX-License-Identifier: Apache-2.0 */
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
    res->run = malloc((n ? n : 1) * sizeof(*res->run));
    if (res->run == NULL) {
        return -1;
    }
    if (cfg->roc) {
        res->roc_auc = malloc((size_t)runs * sizeof(*res->roc_auc));
        res->roc_run0 = calloc(1, sizeof(*res->roc_run0));
        if (res->roc_auc == NULL || res->roc_run0 == NULL) {
            sim_result_free(res);
            return -1;
        }
        for (uint32_t r = 0; r < runs; r++) {
            sim_roc_auc_run_t *a = &res->roc_auc[r];
            a->est = a->lo = a->hi = a->sd = a->lo_total = a->hi_total = a->sd_total = NAN;
        }
    }
    for (size_t i = 0; i < n; i++) {
        res->run[i].est = res->run[i].lo = res->run[i].hi = res->run[i].sd = NAN;
    }
    return 0;
}

void sim_result_free(sim_result_t *res)
{
    free(res->run);
    free(res->roc_auc);
    free(res->roc_run0);
    res->run = NULL;
    res->roc_auc = NULL;
    res->roc_run0 = NULL;
}

static void add_roc_run(sim_result_t *res, uint32_t run, const sim_agg_t *agg)
{
    dpm_roc_estimate_t est;
    const sim_truth_t *t = &res->truth;
    if (dpm_roc_estimate(&res->cfg.roc_params, &agg->roc, res->cfg.sc->confidence, &est) !=
            DPM_OK ||
        !est.valid) {
        return;
    }
    if (run == 0) {
        *res->roc_run0 = est;
    }
    sim_roc_auc_run_t *a = &res->roc_auc[run];
    a->est = est.auc;
    a->sd = sqrt(est.var_noise);
    a->lo = est.ci_lo;
    a->hi = est.ci_hi;
    a->sd_total = sqrt(est.var_noise + est.var_sampling);
    a->lo_total = est.ci_total_lo;
    a->hi_total = est.ci_total_hi;
    int all_pw = 1, all_sim = 1;
    for (uint32_t j = 0; j <= t->roc_bins; j++) {
        double tt = t->roc_tpr[j];
        int pw = est.tpr_lo[j] <= tt && tt <= est.tpr_hi[j];
        int sim = est.tpr_lo_sim[j] <= tt && tt <= est.tpr_hi_sim[j];
        res->roc_cover[j] += (uint32_t)pw;
        res->roc_tpr_sum[j] += est.tpr[j];
        res->roc_tpr_sq_err[j] += (est.tpr[j] - tt) * (est.tpr[j] - tt);
        if (j >= 1 && j < t->roc_bins) {
            all_pw &= pw;
            all_sim &= sim;
        }
    }
    res->roc_all_pointwise += (uint32_t)all_pw;
    res->roc_simultaneous += (uint32_t)all_sim;
    res->roc_valid++;
}

void sim_result_roc_summary(const sim_result_t *res, sim_roc_summary_t *s)
{
    memset(s, 0, sizeof(*s));
    s->auc.truth = res->truth.roc_auc;
    double se = 0.0, sq = 0.0, sa = 0.0, sd = 0.0, cov = 0.0, cov_total = 0.0;
    for (uint32_t r = 0; res->roc_auc != NULL && r < res->runs; r++) {
        const sim_roc_auc_run_t *a = &res->roc_auc[r];
        if (isnan(a->est)) {
            continue;
        }
        double e = a->est - s->auc.truth;
        s->auc.runs++;
        se += e;
        sq += e * e;
        sa += fabs(e);
        sd += a->sd;
        cov += a->lo <= s->auc.truth && s->auc.truth <= a->hi;
        cov_total += a->lo_total <= s->auc.truth && s->auc.truth <= a->hi_total;
    }
    double n = s->auc.runs;
    s->auc.mean_error = n > 0 ? se / n : NAN;
    s->auc.rmse = n > 0 ? sqrt(sq / n) : NAN;
    s->auc.mean_abs_error = n > 0 ? sa / n : NAN;
    s->auc.paper_abs_error = NAN;
    s->auc.coverage = n > 0 ? cov / n : NAN;
    s->auc.mean_sd = n > 0 ? sd / n : NAN;
    s->coverage_total = n > 0 ? cov_total / n : NAN;
    uint32_t B = res->truth.roc_bins;
    double pw = 0.0, v = res->roc_valid;
    for (uint32_t j = 1; j < B; j++) {
        pw += v > 0 ? res->roc_cover[j] / v : NAN;
    }
    s->band_pointwise = B > 1 ? pw / (B - 1) : NAN;
    s->band_all_pointwise = v > 0 ? res->roc_all_pointwise / v : NAN;
    s->band_simultaneous = v > 0 ? res->roc_simultaneous / v : NAN;
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
    if (cfg->roc) {
        add_roc_run(res, run, agg);
        return;
    }
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
