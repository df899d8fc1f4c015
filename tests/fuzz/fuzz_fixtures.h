/* SPDX-License-Identifier: Apache-2.0 */
/* What the fuzz targets and their seed generator (make_seeds.c) share: the campaigns whose
 * mechanisms check fuzzed reports, and the helpers that build honest inputs from them. */
#ifndef FUZZ_FIXTURES_H
#define FUZZ_FIXTURES_H

#include <stdint.h>
#include <string.h>

#include "dpm/report.h"

#define FUZZ_NCAMPAIGNS 3

/* tuple_mr (171), tuple_ml (182), roc_hist (193). */
static inline void fuzz_campaign(int which, dpm_campaign_t *c)
{
    memset(c, 0, sizeof(*c));
    c->eps = 65536;
    c->budget = 4 * 65536;
    c->period_seconds = 86400;
    if (which == 0) {
        c->id = 171;
        c->mechanism = DPM_MECH_ID_TUPLE_MR;
        c->groups = 4;
        c->nmetrics = 1;
        c->metrics[0] = DPM_METRIC_TPR;
    } else if (which == 1) {
        c->id = 182;
        c->mechanism = DPM_MECH_ID_TUPLE_ML;
        c->groups = 5;
        c->nmetrics = 2;
        c->metrics[0] = DPM_METRIC_TPR;
        c->metrics[1] = DPM_METRIC_FPR;
        c->frac_bits = DPM_FRAC_BITS;
    } else {
        c->id = 193;
        c->mechanism = DPM_MECH_ID_ROC_HIST;
        c->nbins = 7;
        for (uint32_t i = 0; i < c->nbins; i++) {
            c->bin_edges[i] = (i + 1u) << 28;
        }
    }
}

/* One honest report of mechanism *m from the random source r, fed with a fixed local
 * statistic (tuple: group 1, every metric 1/2; roc_hist: a few counts per bin). */
static inline dpm_status_t fuzz_make_report(const dpm_mech_t *m, dpm_rand_t *r, uint32_t period,
                                            dpm_report_t *out)
{
    if (m->campaign.mechanism == DPM_MECH_ID_ROC_HIST) {
        dpm_score_hist_t h;
        dpm_status_t st = dpm_score_hist_init(&h, &m->roc_hist);
        for (uint32_t b = 0; b < h.bins && st == DPM_OK; b++) {
            h.pos[b] = b;
            h.neg[b] = h.bins - b;
        }
        return st != DPM_OK ? st : dpm_mech_report_roc_hist(m, r, period, &h, out);
    }
    dpm_ratio_t values[DPM_CAMPAIGN_MAX_METRICS];
    for (uint32_t i = 0; i < DPM_CAMPAIGN_MAX_METRICS; i++) {
        values[i].num = 1;
        values[i].den = 2;
    }
    return dpm_mech_report_tuple(m, r, period, 1, values, out);
}

#endif
