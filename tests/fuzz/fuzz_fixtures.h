/* SPDX-License-Identifier: Apache-2.0 */
/* What the fuzz targets and their seed generator (make_seeds.c) share: the campaigns whose
 * mechanisms check fuzzed reports, and the helpers that build honest inputs from them. */
#ifndef FUZZ_FIXTURES_H
#define FUZZ_FIXTURES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dap_fixture.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/report.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/vdaf.h"
#include "fake_storage.h"
#include "test_rng.h"
#include "test_receipt.h"

/* 1 if the n bytes at p are all 0xFF (erased storage). */
static inline int fuzz_all_erased(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != 0xFFu) {
            return 0;
        }
    }
    return 1;
}

/* A write-once anchor (the ledger's, the outbox's) either stays as the input left it, or goes
 * from erased to the SDK's mark: anything else aborts. */
static inline void fuzz_check_anchor(const uint8_t *now, const uint8_t *initial,
                                     const uint8_t *mark, size_t n)
{
    if (memcmp(now, initial, n) != 0 &&
        !(fuzz_all_erased(initial, n) && memcmp(now, mark, n) == 0)) {
        abort();
    }
}

#define FUZZ_NCAMPAIGNS 3

/* The two-aggregator tasks of fuzz_dap_report and its seeds: Histogram 16 (chunk 4), SumVec
 * 2x24 of 8 bits (chunk 26), Count; keys and ids from dap_task_fixture's seeds 20, 21, 22. */
#define FUZZ_NDAP_TASKS 3
static inline void fuzz_dap_tasks(dap_task_fixture_t *t)
{
    dpm_prio3_t v[FUZZ_NDAP_TASKS];
    if (dpm_prio3_histogram_init(&v[0], 2, 16, 4) != DPM_OK ||
        dpm_prio3_sumvec_init(&v[1], 2, 48, 255, 26) != DPM_OK ||
        dpm_prio3_count_init(&v[2], 2) != DPM_OK) {
        abort();
    }
    for (int i = 0; i < FUZZ_NDAP_TASKS; i++) {
        if (dap_task_fixture(&t[i], &v[i], 65536, 1000, (uint8_t)(20 + i)) != 0) {
            abort();
        }
    }
}

/* tuple_mr (171), tuple_ml (182), roc_hist (193). */
static inline void fuzz_campaign(int which, dpm_campaign_t *c)
{
    memset(c, 0, sizeof(*c));
    c->eps = DPM_EPS(1);
    c->budget = DPM_EPS(4);
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
 * statistic (tuple: group 1, every metric 1/2; roc_hist: a few counts per bin, group 1 if it
 * has groups; dpauc: three examples; ustat: one example). DPM_ERR_UNSUPPORTED for FedAUC,
 * whose report needs a round trip with the server first (fuzz_fedauc covers it). */
static inline dpm_status_t fuzz_make_report(const dpm_mech_t *m, dpm_rand_t *r, uint32_t period,
                                            dpm_report_t *out)
{
    dpm_receipt_issuer_t *iss = test_receipt_issue(m, period);
    const dpm_receipt_t *rc = &test_receipt_pair()->rc;
    switch (m->campaign.mechanism) {
    case DPM_MECH_ID_ROC_HIST: {
        dpm_score_hist_t h;
        dpm_status_t st = dpm_score_hist_init(&h, &m->params.roc_hist.bins);
        for (uint32_t b = 0; b < h.bins && st == DPM_OK; b++) {
            h.pos[b] = b;
            h.neg[b] = h.bins - b;
        }
        if (st != DPM_OK) {
            return st;
        }
        return m->params.roc_hist.groups >= 2
                   ? dpm_mech_report_roc_hist_group(m, r, iss, rc, 1, &h, out)
                   : dpm_mech_report_roc_hist(m, r, iss, rc, &h, out);
    }
    case DPM_MECH_ID_DPAUC: {
        dpm_dpauc_counts_t c;
        dpm_status_t st = dpm_dpauc_counts_init(&c, &m->params.dpauc);
        for (uint32_t i = 0; i < 3u && st == DPM_OK; i++) {
            st = dpm_dpauc_counts_add(&c, &m->params.dpauc, i << 29, (int)(i & 1u));
        }
        return st != DPM_OK ? st : dpm_mech_report_dpauc(m, r, iss, rc, &c, out);
    }
    case DPM_MECH_ID_USTAT_BINS:
    case DPM_MECH_ID_USTAT_TREE: {
        int kendall = m->campaign.mechanism == DPM_MECH_ID_USTAT_BINS &&
                      m->params.ustat_bins.kernel == DPM_USTAT_KENDALL;
        dpm_ustat_example_t ex = {3u << 28, kendall ? 0 : 1, 1u << 29};
        return m->campaign.mechanism == DPM_MECH_ID_USTAT_BINS
                   ? dpm_mech_report_ustat_bins(m, r, iss, rc, &ex, out)
                   : dpm_mech_report_ustat_tree(m, r, iss, rc, &ex, out);
    }
    case DPM_MECH_ID_FEDAUC_RR:
    case DPM_MECH_ID_FEDAUC_LAP:
        return DPM_ERR_UNSUPPORTED;
    default:
        break;
    }
    dpm_ratio_t values[DPM_CAMPAIGN_MAX_METRICS];
    for (uint32_t i = 0; i < DPM_CAMPAIGN_MAX_METRICS; i++) {
        values[i].num = 1;
        values[i].den = 2;
    }
    return dpm_mech_report_tuple(m, r, iss, rc, 1, values, out);
}

/* FedAUC (fuzz_fedauc): one fixed session of FUZZ_FEDAUC_N examples per mechanism, fedauc_rr
 * and fedauc_lap with each split (local, global, orthogonal, adaptive), buffers of
 * FUZZ_FEDAUC_CAP entries, and an opened memo secret for fedauc_rr. */
#define FUZZ_FEDAUC_N 8u
#define FUZZ_FEDAUC_CAP 64u
#define FUZZ_FEDAUC_NMECH 5

typedef struct {
    dpm_mech_t m;
    dpm_fedauc_session_t s;
    uint32_t q[FUZZ_FEDAUC_CAP], p[FUZZ_FEDAUC_CAP];
    uint64_t w[FUZZ_FEDAUC_CAP];
} fuzz_fedauc_t;

static inline void fuzz_fedauc_setup(fuzz_fedauc_t *fx, dpm_memo_t *memo)
{
    static uint8_t mem[64];
    static fake_storage_t fs;
    fake_storage_init(&fs, mem, sizeof(mem), 1);
    dpm_storage_t st = fake_storage_port(&fs);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    if (test_rand_init(&r, &t, &rng, 7) != DPM_OK || dpm_memo_open(memo, &st, 0, 64, &r) != DPM_OK) {
        abort();
    }
    static const uint32_t variant[FUZZ_FEDAUC_NMECH] = {
        DPM_FEDAUC_VARIANT_NONE, DPM_FEDAUC_LOCAL, DPM_FEDAUC_GLOBAL, DPM_FEDAUC_ORTHOGONAL,
        DPM_FEDAUC_ADAPTIVE};
    static const uint32_t share[FUZZ_FEDAUC_NMECH] = {0, 32768, 32768, 32768, 0};
    const dpm_score_t scores[FUZZ_FEDAUC_N] = {1u << 30, 3u << 28, 1u << 27, 1u << 30,
                                               0,        1u << 31, 5u << 27, 9u << 26};
    for (int i = 0; i < FUZZ_FEDAUC_NMECH; i++) {
        dpm_campaign_t c;
        memset(&c, 0, sizeof(c));
        c.id = 300u + (uint32_t)i;
        c.mechanism = i == 0 ? DPM_MECH_ID_FEDAUC_RR : DPM_MECH_ID_FEDAUC_LAP;
        c.eps = DPM_EPS(1);
        c.budget = DPM_EPS(2);
        c.period_seconds = 86400;
        c.fedauc_variant = variant[i];
        c.fedauc_p_share_q16 = share[i];
        c.fedauc_score_bits = 16;
        dpm_fedauc_buffers_t b = {fx[i].q, fx[i].p, fx[i].w, FUZZ_FEDAUC_CAP};
        if (dpm_mech_init(&fx[i].m, &c, NULL) != DPM_OK ||
            dpm_fedauc_prepare(&fx[i].m, &r, scores, FUZZ_FEDAUC_N, &b, &fx[i].s) != DPM_OK) {
            abort();
        }
    }
}

#endif
