/* SPDX-License-Identifier: Apache-2.0 */
/* tool_auc_reports CASE N SEED: N SDK-made reports of one dpauc / ustat_bins / ustat_tree
 * campaign on synthetic data (fixed seed), and the estimate host-sim/estimate computes from
 * those same reports with its own aggregation (not the collector's stored sums), as one JSON
 * object: {"campaign": campaign-file block, "reports": [hex, ...], "expected": {...}}.
 * test_collector_auc.py posts the reports and compares the collector's estimate with it.
 *
 * CASE: dpauc, dpauc_tight, bins_auc, bins_private, bins_kendall, tree, tree_grr.
 * Data: label 1 with probability 0.4; a positive's score uniform in [0.3, 1), a negative's in
 * [0, 0.7); dpauc devices hold 20 examples each, the U-statistics one example per report;
 * kendall: score2 = score plus uniform noise in [0, 0.3), clipped to 1. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/report.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/ustat.h"
#include "estimate/dpauc.h"
#include "estimate/ustat.h"
#include "test_receipt.h"
#include "test_rng.h"

#define ONE_Q31 2147483648.0

static const struct {
    const char *name, *text;
} CASES[] = {
    {"dpauc", "id = 1801\nmechanism = dpauc\neps = 1\nthresholds = 11\n"},
    {"dpauc_tight", "id = 1802\nmechanism = dpauc\neps = 2\nthresholds = 0.1, 0.3, 0.5, 0.7, "
                    "0.9\ncalibration = tight\nmax_examples = 20\n"},
    {"bins_auc", "id = 1803\nmechanism = ustat_bins\neps = 1\nk = 8\n"},
    {"bins_private", "id = 1804\nmechanism = ustat_bins\neps = 2\nk = 6\nkernel = "
                     "auc_private_label\n"},
    {"bins_kendall", "id = 1805\nmechanism = ustat_bins\neps = 2\nk = 4\nkernel = kendall\n"},
    {"tree", "id = 1806\nmechanism = ustat_tree\neps = 1\ndepth = 6\n"},
    {"tree_grr", "id = 1807\nmechanism = ustat_tree\neps = 2\ndepth = 4\ngrr_levels = 2\n"},
};

/* The campaign of a case, as dpm_mech_init builds it from the same numbers as the text. */
static int campaign_of(int k, dpm_campaign_t *c)
{
    memset(c, 0, sizeof(*c));
    c->id = 1801u + (uint32_t)k;
    c->period_seconds = 86400;
    const char *eps = "1";
    switch (k) {
    case 0:
        c->mechanism = DPM_MECH_ID_DPAUC;
        c->nthresholds = 11;
        dpm_dpauc_linspace(11, c->thresholds);
        break;
    case 1: {
        static const double t[5] = {0.1, 0.3, 0.5, 0.7, 0.9};
        c->mechanism = DPM_MECH_ID_DPAUC;
        c->nthresholds = 5;
        for (int i = 0; i < 5; i++) {
            c->thresholds[i] = (uint32_t)llround(t[i] * ONE_Q31);
        }
        c->calibration = DPM_DPAUC_TIGHT;
        eps = "2";
        break;
    }
    case 2:
        c->mechanism = DPM_MECH_ID_USTAT_BINS;
        c->ustat_k = 8;
        break;
    case 3:
        c->mechanism = DPM_MECH_ID_USTAT_BINS;
        c->ustat_k = 6;
        c->ustat_kernel = DPM_USTAT_AUC_PRIVATE_LABEL;
        eps = "2";
        break;
    case 4:
        c->mechanism = DPM_MECH_ID_USTAT_BINS;
        c->ustat_k = 4;
        c->ustat_kernel = DPM_USTAT_KENDALL;
        eps = "2";
        break;
    case 5:
        c->mechanism = DPM_MECH_ID_USTAT_TREE;
        c->tree_depth = 6;
        break;
    default:
        c->mechanism = DPM_MECH_ID_USTAT_TREE;
        c->tree_depth = 4;
        c->tree_grr_levels = 2;
        eps = "2";
        break;
    }
    if (dpm_eps_from_decimal(eps, &c->eps.q16) != DPM_OK) {
        return -1;
    }
    c->budget = c->eps;
    return 0;
}

/* One synthetic example. */
static dpm_ustat_example_t example(test_rng_t *t, int kendall)
{
    uint64_t w = test_rng_next(t);
    int label = (w % 1000u) < 400u;
    double u = (double)(w >> 11) / 9007199254740992.0; /* 53 bits in [0, 1) */
    double s = label ? 0.3 + 0.7 * u : 0.7 * u;
    dpm_ustat_example_t ex = {(uint32_t)(s * ONE_Q31), kendall ? 0 : label, 0};
    if (kendall) {
        double v = (double)(test_rng_next(t) >> 11) / 9007199254740992.0;
        double s2 = s + 0.3 * v;
        ex.score2 = (uint32_t)((s2 < 1.0 ? s2 : 1.0) * ONE_Q31);
    }
    return ex;
}

static void print_hex(const dpm_report_t *rep, int first)
{
    uint8_t buf[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    if (dpm_report_encode(rep, buf, sizeof(buf), &len) != DPM_OK) {
        exit(1);
    }
    printf("%s\"", first ? "" : ", ");
    for (size_t i = 0; i < len; i++) {
        printf("%02x", buf[i]);
    }
    printf("\"");
}

static void print_num(const char *key, double x, int defined)
{
    if (defined) {
        printf(", \"%s\": %.17g", key, x);
    } else {
        printf(", \"%s\": null", key);
    }
}

int main(int argc, char **argv)
{
    int k = -1;
    for (int i = 0; argc == 4 && i < (int)(sizeof(CASES) / sizeof(CASES[0])); i++) {
        k = strcmp(argv[1], CASES[i].name) == 0 ? i : k;
    }
    if (k < 0) {
        fprintf(stderr, "usage: tool_auc_reports CASE N SEED\n");
        return 2;
    }
    uint32_t n = (uint32_t)strtoul(argv[2], NULL, 10);
    uint64_t seed = strtoull(argv[3], NULL, 10);
    dpm_campaign_t c;
    dpm_mech_t mc;
    const char *why = "";
    if (campaign_of(k, &c) != 0 || dpm_mech_init(&mc, &c, &why) != DPM_OK) {
        fprintf(stderr, "campaign: %s\n", why);
        return 1;
    }
    test_rng_t data, noise;
    test_rng_seed(&data, seed);
    dpm_rng_t rng;
    dpm_rand_t r;
    if (test_rand_init(&r, &noise, &rng, seed ^ 0x5eedu) != DPM_OK) {
        return 1;
    }
    printf("{\"campaign\": \"[campaign]\\n");
    for (const char *p = CASES[k].text; *p; p++) {
        printf(*p == '\n' ? "\\n" : "%c", *p);
    }
    printf("\", \"reports\": [");
    /* the estimator's own aggregates */
    dpm_dpauc_agg_t da;
    dpm_ustat_bins_params_t bp;
    dpm_ustat_bins_agg_t *ba = calloc(1, sizeof(*ba));
    dpm_ustat_tree_params_t tp;
    dpm_ustat_tree_agg_t ta;
    memset(&ta, 0, sizeof(ta));
    int kendall = k == 4;
    if (ba == NULL ||
        (c.mechanism == DPM_MECH_ID_DPAUC &&
         dpm_dpauc_agg_init(&da, mc.params.dpauc.n) != DPM_OK) ||
        (c.mechanism == DPM_MECH_ID_USTAT_BINS &&
         (dpm_ustat_bins_params_init(&bp, mc.params.ustat_bins.kernel, mc.params.ustat_bins.k,
                                     mc.params.ustat_bins.grr.keep,
                                     mc.params.ustat_bins.grr.other) != DPM_OK ||
          dpm_ustat_bins_agg_init(ba, bp.domain) != DPM_OK)) ||
        (c.mechanism == DPM_MECH_ID_USTAT_TREE &&
         (dpm_ustat_tree_params_init(&tp, &mc.params.ustat_tree) != DPM_OK ||
          dpm_ustat_tree_agg_init(&ta, &tp) != DPM_OK))) {
        return 1;
    }
    for (uint32_t i = 0; i < n; i++) {
        dpm_report_t rep;
        dpm_status_t st;
        if (c.mechanism == DPM_MECH_ID_DPAUC) {
            dpm_dpauc_counts_t cnt;
            st = dpm_dpauc_counts_init(&cnt, &mc.params.dpauc);
            for (int e = 0; st == DPM_OK && e < 20; e++) {
                dpm_ustat_example_t ex = example(&data, 0);
                st = dpm_dpauc_counts_add(&cnt, &mc.params.dpauc, ex.score, ex.label);
            }
            st = st != DPM_OK ? st
                              : dpm_mech_report_dpauc(&mc, &r, TEST_RECEIPT(&mc, 0), &cnt, &rep);
            const dpm_dpauc_report_t *d = &rep.body.dpauc;
            st = st != DPM_OK ? st : dpm_dpauc_agg_add(&da, d->n, d->tp, d->fp, d->tn, d->fn);
        } else if (c.mechanism == DPM_MECH_ID_USTAT_BINS) {
            dpm_ustat_example_t ex = example(&data, kendall);
            st = dpm_mech_report_ustat_bins(&mc, &r, TEST_RECEIPT(&mc, 0), &ex, &rep);
            st = st != DPM_OK ? st
                              : dpm_ustat_bins_agg_add(ba, &bp, rep.body.ustat_bins.value,
                                                       rep.body.ustat_bins.label);
        } else {
            dpm_ustat_example_t ex = example(&data, 0);
            st = dpm_mech_report_ustat_tree(&mc, &r, TEST_RECEIPT(&mc, 0), &ex, &rep);
            const dpm_ustat_tree_report_t *t = &rep.body.ustat_tree;
            st = st != DPM_OK ? st
                              : dpm_ustat_tree_agg_add(&ta, t->label, t->level, t->row, t->value);
        }
        if (st != DPM_OK) {
            fprintf(stderr, "report %u: %s\n", i, dpm_strerror(st));
            return 1;
        }
        print_hex(&rep, i == 0);
    }
    printf("], \"expected\": {\"mechanism\": \"%s\"", c.mechanism == DPM_MECH_ID_DPAUC ? "dpauc"
                                                      : c.mechanism == DPM_MECH_ID_USTAT_BINS
                                                          ? "ustat_bins"
                                                          : "ustat_tree");
    if (c.mechanism == DPM_MECH_ID_DPAUC) {
        dpm_dpauc_params_t p;
        const dpm_laplace_t *lap = &mc.params.dpauc.lap;
        if (dpm_dpauc_params_init(&p, mc.params.dpauc.n,
                                  (double)lap->scale_num / (double)lap->scale_den) != DPM_OK) {
            return 1;
        }
        for (int v = 0; v < 2; v++) {
            dpm_dpauc_estimate_t e;
            if (dpm_dpauc_estimate(&p, &da, v ? DPM_DPAUC_SERVER_B : DPM_DPAUC_SERVER_A, &e) !=
                DPM_OK) {
                return 1;
            }
            print_num(v ? "auc_B" : "auc_A", e.auc, e.defined);
        }
    } else if (c.mechanism == DPM_MECH_ID_USTAT_BINS) {
        dpm_ustat_estimate_t e;
        if (dpm_ustat_bins_estimate(&bp, ba, 0.5, 0.95, &e) != DPM_OK) {
            return 1;
        }
        print_num("value", e.value, e.defined);
        print_num("sd", e.sd, e.defined);
        print_num("ci_lo", e.ci_lo, e.defined);
        print_num("ci_hi", e.ci_hi, e.defined);
    } else {
        dpm_ustat_tree_opts_t o = {DPM_USTAT_TREE_CHOOSE_A, 0.0, 0.5};
        dpm_ustat_tree_estimate_t e;
        if (dpm_ustat_tree_estimate(&tp, &ta, &o, &e) != DPM_OK) {
            return 1;
        }
        print_num("value", e.est.value, e.est.defined);
        print_num("sd", e.est.sd, e.est.defined);
        print_num("mse_bound", e.mse_bound, e.est.defined);
    }
    printf("}}\n");
    dpm_ustat_tree_agg_free(&ta);
    free(ba);
    return 0;
}
