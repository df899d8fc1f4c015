/* SPDX-License-Identifier: Apache-2.0 */
/* tool_roc_groups_reports CASE N SEED: N SDK-made reports of one per-group roc_hist campaign
 * (dpm_mech_report_roc_hist_group) on synthetic data (fixed seed), and what
 * host-sim/estimate/roc_groups.h (the estimator dpm-sim uses) computes from those same reports
 * with its own aggregation (dpm_roc_groups_agg_add, not the collector's stored sums), as one
 * JSON object: {"campaign": campaign-file block, "reports": [hex, ...], "expected": {"groups":
 * [{"group", "defined", "auc", "sd", "ci_lo", "ci_hi"}, ...], "gaps": [{"g", "h", "defined",
 * "gap", "sd", "ci_lo", "ci_hi", "sim_lo", "sim_hi", "distinguishable"}, ...], "largest": {"g",
 * "h", "lo", "hi", "stability"} | null, "pos_sum": [...], "neg_sum": [...]}} (intervals at
 * 0.95, null where undefined; sim_*: every gap at once, dpm_roc_groups_pairwise).
 * test_collector_roc_groups.py posts the reports and compares.
 *
 * CASE: g4b8 (4 groups, 8 bins, eps 2: the golden campaign's shape), g2b20 (2 groups, 20 bins,
 * group_eps 0.5 of eps 1.5), g3b4 (3 groups, 4 bins, eps 1), g2b44 (the collector's largest
 * layout for 2 groups, eps 4). Data: each device holds 20
 * examples and one true group g, uniform; label 1 with probability 0.4; a positive's score is
 * uniform in [0.1 + 0.15 g, 1), a negative's in [0, 0.7): the groups' AUCs differ.
 * u8: an ungrouped roc_hist campaign with g4b8's bins and eps (dpm_mech_report_roc_hist;
 * "expected" is null): its reports must not fit a grouped campaign, nor the reverse. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/edges.h"
#include "dpm/expert/report.h"
#include "dpm/stats.h"
#include "dpm/expert/mech.h"
#include "estimate/roc_groups.h"
#include "test_receipt.h"
#include "test_rng.h"

#define ONE_Q31 2147483648.0
#define EXAMPLES 20

static const struct {
    const char *name, *text, *bins, *eps, *group_eps;
    uint32_t groups;
} CASES[] = {
    {"g4b8", "id = 1901\nmechanism = roc_hist\neps = 2\nbins = 8\ngroups = 4\n", "8", "2", NULL, 4},
    {"g2b20",
     "id = 1902\nmechanism = roc_hist\neps = 1.5\nbins = 20\ngroups = 2\ngroup_eps = 0.5\n", "20",
     "1.5", "0.5", 2},
    {"g3b4", "id = 1903\nmechanism = roc_hist\neps = 1\nbins = 4\ngroups = 3\n", "4", "1", NULL, 3},
    {"g2b44", "id = 1904\nmechanism = roc_hist\neps = 4\nbins = 44\ngroups = 2\n", "44", "4", NULL,
     2},
    {"u8", "id = 1905\nmechanism = roc_hist\neps = 2\nbins = 8\n", "8", "2", NULL, 0},
};

/* The campaign of a case, from the same strings as its text (as the collector parses it). */
static int campaign_of(int k, dpm_campaign_t *c)
{
    char why[128];
    memset(c, 0, sizeof(*c));
    c->id = 1901u + (uint32_t)k;
    c->mechanism = DPM_MECH_ID_ROC_HIST;
    c->period_seconds = 86400;
    c->groups = CASES[k].groups;
    if (edges_parse_bins(CASES[k].bins, c->bin_edges, &c->nbins, why, sizeof(why)) != 0 ||
        dpm_eps_from_decimal(CASES[k].eps, &c->eps.q16) != DPM_OK ||
        (CASES[k].group_eps != NULL &&
         dpm_eps_from_decimal(CASES[k].group_eps, &c->group_eps.q16) != DPM_OK)) {
        return -1;
    }
    c->budget = c->eps;
    return 0;
}

static double unit(test_rng_t *t)
{
    return (double)(test_rng_next(t) >> 11) / 9007199254740992.0; /* 53 bits in [0, 1) */
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
    if (defined && isfinite(x)) {
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
        fprintf(stderr, "usage: tool_roc_groups_reports CASE N SEED\n");
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
    const dpm_roc_hist_t *rh = &mc.params.roc_hist;
    uint32_t G = rh->groups, B = rh->bins.count;
    dpm_roc_groups_params_t p;
    dpm_roc_groups_agg_t a;
    uint32_t Ga = G != 0 ? G : 2u; /* the estimator is not used for u8 */
    if (dpm_roc_groups_params_init(&p, Ga, B, G != 0 ? rh->group_grr.keep : 3u << 30,
                                   G != 0 ? rh->group_grr.other : 1u << 30,
                                   (double)rh->lap.scale_num / (double)rh->lap.scale_den) !=
            DPM_OK ||
        dpm_roc_groups_agg_init(&a, Ga, B) != DPM_OK) {
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
    for (const char *q = CASES[k].text; *q; q++) {
        printf(*q == '\n' ? "\\n" : "%c", *q);
    }
    printf("\", \"reports\": [");
    int64_t pos_sum[DPM_MAX_BINS] = {0}, neg_sum[DPM_MAX_BINS] = {0};
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = (uint32_t)(test_rng_next(&data) % Ga);
        dpm_score_hist_t h;
        dpm_status_t st = dpm_score_hist_init(&h, &rh->bins);
        for (int e = 0; st == DPM_OK && e < EXAMPLES; e++) {
            int label = unit(&data) < 0.4;
            double lo = label ? 0.1 + 0.15 * g : 0.0, hi = label ? 1.0 : 0.7;
            double s = lo + (hi - lo) * unit(&data);
            st = dpm_score_hist_add(&h, &rh->bins, (uint32_t)(s * ONE_Q31), label);
        }
        dpm_report_t rep;
        st = st != DPM_OK ? st
             : G == 0     ? dpm_mech_report_roc_hist(&mc, &r, TEST_RECEIPT(&mc, 0), &h, &rep)
                      : dpm_mech_report_roc_hist_group(&mc, &r, TEST_RECEIPT(&mc, 0), g, &h, &rep);
        const dpm_roc_hist_report_t *x = &rep.body.roc_hist;
        st = st != DPM_OK ? st : dpm_roc_groups_agg_add(&a, x->group, x->bins, x->pos, x->neg);
        if (st != DPM_OK) {
            fprintf(stderr, "report %u: %s\n", i, dpm_strerror(st));
            return 1;
        }
        for (uint32_t b = 0; b < B; b++) {
            pos_sum[b] += x->pos[b];
            neg_sum[b] += x->neg[b];
        }
        print_hex(&rep, i == 0);
    }
    if (G == 0) {
        printf("], \"expected\": null}\n");
        dpm_roc_groups_agg_free(&a);
        return 0;
    }
    dpm_roc_groups_estimate_t *e = malloc(sizeof(*e));
    dpm_pairwise_t *pw = malloc(sizeof(*pw));
    if (e == NULL || pw == NULL || dpm_roc_groups_estimate(&p, &a, 0.95, e) != DPM_OK ||
        dpm_roc_groups_pairwise(e, 0.95, pw) != DPM_OK) {
        return 1;
    }
    printf("], \"expected\": {\"groups\": [");
    for (uint32_t g = 0; g < G; g++) {
        const dpm_roc_group_estimate_t *x = &e->group[g];
        printf("%s{\"group\": %u, \"defined\": %s", g ? ", " : "", g,
               x->defined ? "true" : "false");
        print_num("auc", x->auc, x->defined);
        print_num("sd", x->sd, x->defined);
        print_num("ci_lo", x->ci_lo, x->defined && x->ci_valid);
        print_num("ci_hi", x->ci_hi, x->defined && x->ci_valid);
        printf("}");
    }
    printf("], \"gaps\": [");
    for (uint32_t j = 0; j < e->ngaps; j++) {
        const dpm_roc_gap_estimate_t *x = &e->gap[j];
        printf("%s{\"g\": %u, \"h\": %u, \"defined\": %s", j ? ", " : "", x->g, x->h,
               x->defined ? "true" : "false");
        print_num("gap", x->gap, x->defined);
        print_num("sd", x->sd, x->defined);
        print_num("ci_lo", x->ci_lo, x->defined && x->ci_valid);
        print_num("ci_hi", x->ci_hi, x->defined && x->ci_valid);
        print_num("sim_lo", pw->pair[j].lo, pw->pair[j].defined);
        print_num("sim_hi", pw->pair[j].hi, pw->pair[j].defined);
        printf(", \"distinguishable\": %s}", pw->pair[j].distinguishable ? "true" : "false");
    }
    printf("], \"largest\": ");
    if (pw->largest_defined) {
        const dpm_pairwise_pair_t *top = &pw->pair[pw->largest_pair];
        printf("{\"g\": %u, \"h\": %u", top->g, top->h);
        print_num("lo", pw->largest_lo, 1);
        print_num("hi", pw->largest_hi, 1);
        print_num("stability", pw->stability, 1);
        printf("}");
    } else {
        printf("null");
    }
    for (int s = 0; s < 2; s++) {
        printf("%s\"%s\": [", s ? "], " : ", ", s ? "neg_sum" : "pos_sum");
        for (uint32_t b = 0; b < B; b++) {
            printf("%s%" PRId64, b ? ", " : "", s ? neg_sum[b] : pos_sum[b]);
        }
    }
    printf("]}}\n");
    free(pw);
    free(e);
    dpm_roc_groups_agg_free(&a);
    return 0;
}
