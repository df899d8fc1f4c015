/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim scenario parser: a complete good file parses into the expected structure, every
 * scenario file shipped in host-sim/scenarios (and every example in its README.md) parses, and
 * each kind of error is reported with the right line number and a message that says what is
 * wrong (a trailing comma, a misspelled section or key with its likely spelling). Numbers are
 * decimals only (no hexadecimal, in the scenario, dpm-sim's options and the collector's
 * campaigns file), and the SDK's own refusals name their line too. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>

#include "collector/ingest/campaigns.h"
#include "common/text_list.h"
#include "sim/run/cli.h"
#include "sim/pop/population.h"
#include "sim/scenario/scenario.h"
#include "sim/devices/mech.h"
#include "sim/devices/mechs.h" /* sim_scenario_parse, sim_scenario_load */

static const char kGood[] =
    "# a comment line\n"
    "[scenario]\n"
    "name = unit-good\n"
    "description = every feature once   # trailing comment\n"
    "devices = 1e4, 20000\n"
    "runs = 7\n"
    "seed = 18446744073709551615\n"
    "confidence = 0.9\n"
    "sizes = estimated\n"
    "nu2 = worst\n"
    "mode = exact\n"
    "\n"
    "[population]\n"
    "seed = 5\n"
    "examples = 30\n"
    "beta_levels = 50\n"
    "partition = noniid(concentration=3, auc_sd=0.2)\n"
    "[group a]\n"
    "share = 25/87\n"
    "tpr = constant(0.891005)\n"
    "fpr = beta(2, 18)\n"
    "[group b]\n"
    "share = 62/87\n"
    "scores = binormal(auc=0.8, base_rate=0.25, examples=12, threshold=0.3)\n"
    "partition = iid\n"
    "[campaign c1]\n"
    "id = 9\n"
    "mechanism = tuple_ml\n"
    "eps = 0.5, 1, 2\n"
    "metrics = tpr, fpr\n"
    "groups = b, a\n"
    "[campaign c2]\n"
    "mechanism = tuple_mr\n"
    "split = paper\n"
    "eps = 1\n"
    "metrics = tpr\n"
    "[campaign roc]\n"
    "mechanism = roc_hist\n"
    "eps = 2\n"
    "edges = 0.25, 0.5, 0.75\n"
    "groups = b\n"
    "[plan p]\n"
    "mechanism = tuple_ml\n"
    "split = paper\n"
    "devices = 1e5, 1e6\n"
    "error = 0.1\n"
    "confidence = 0.99\n";

static sim_scenario_t g_sc;
static char g_err[512];

static int parse(const char *text)
{
    g_err[0] = '\0';
    return sim_scenario_parse(text, strlen(text), "t.scn", &g_sc, g_err, sizeof(g_err));
}

static void test_good_file(void **state)
{
    (void)state;
    assert_int_equal(parse(kGood), 0);
    const sim_scenario_t *sc = &g_sc;
    assert_string_equal(sc->name, "unit-good");
    assert_int_equal(sc->ndevices, 2);
    assert_true(sc->devices[0] == 10000 && sc->devices[1] == 20000);
    assert_int_equal(sc->runs, 7);
    assert_true(sc->seed == UINT64_MAX);
    assert_true(sc->population_seed == 5);
    assert_true(sc->sizes_estimated && sc->nu2_worst && sc->mode == SIM_MODE_EXACT);
    assert_int_equal(sc->ngroups, 2);
    assert_true(fabs(sc->group[0].share - 25.0 / 87.0) < 1e-15);
    const sim_dist_t *tpr = &sc->group[0].metric[DPM_METRIC_TPR - 1];
    assert_int_equal(tpr->kind, SIM_DIST_CONSTANT);
    assert_true(tpr->value.num == 891005 && tpr->value.den == 1000000);
    assert_int_equal(sc->group[0].metric[DPM_METRIC_FPR - 1].kind, SIM_DIST_BETA);
    assert_true(sc->group[0].partition.noniid); /* inherited from [population] */
    assert_true(sc->group[1].scores.set && sc->group[1].scores.examples == 12);
    assert_false(sc->group[1].partition.noniid); /* its own override */
    assert_int_equal(sc->ncampaigns, 3);
    const sim_campaign_spec_t *c1 = &sc->campaign[0], *c2 = &sc->campaign[1];
    assert_int_equal(c1->id, 9);
    assert_int_equal(c1->neps, 3);
    assert_int_equal(c1->eps[0], 32768);
    assert_int_equal(c1->nmetrics, 2);
    assert_true(c1->ngroups == 2 && c1->groups[0] == 1 && c1->groups[1] == 0);
    assert_int_equal(c2->id, 2); /* index + 1 */
    assert_true(c2->split_paper && c2->ngroups == 2);
    assert_string_equal(c1->mech->name, "tuple_ml");
    const sim_campaign_spec_t *c3 = &sc->campaign[2];
    assert_true(c3->mechanism == DPM_MECH_ID_ROC_HIST && c3->nedges == 3 && c3->ngroups == 1);
    assert_true(c3->edges[1] == (UINT32_C(1) << 30));
    assert_int_equal(sc->nplans, 1);
    assert_true(sc->plan[0].ndevices == 2 && sc->plan[0].mechanism == DPM_MECH_ID_TUPLE_ML);
}

static void test_population_of_good_file(void **state)
{
    (void)state;
    assert_int_equal(parse(kGood), 0);
    sim_pop_t pop;
    char err[256];
    assert_int_equal(sim_pop_build(&g_sc, 10000, &pop, err, sizeof(err)), 0);
    uint64_t total = 0, per[2] = {0, 0};
    for (size_t i = 0; i < pop.nblocks; i++) {
        total += pop.block[i].count;
        per[pop.block[i].group] += pop.block[i].count;
        assert_true(pop.first[i + 1] == pop.first[i] + pop.block[i].count);
    }
    assert_true(total == 10000);
    assert_true(per[0] == 2874 && per[1] == 7126); /* 25/87 of 10^4 = 2873.6 -> largest remainder */
    /* the realization is a function of the population seed alone */
    sim_pop_t again;
    assert_int_equal(sim_pop_build(&g_sc, 10000, &again, err, sizeof(err)), 0);
    assert_int_equal(again.nblocks, pop.nblocks);
    assert_memory_equal(again.block, pop.block, pop.nblocks * sizeof(sim_block_t));
    size_t idx = 0;
    assert_non_null(sim_pop_find(&pop, 9999, &idx));
    assert_int_equal(idx, pop.nblocks - 1);
    assert_null(sim_pop_find(&pop, 10000, NULL));
    sim_pop_free(&pop);
    sim_pop_free(&again);
}

/* Every file in host-sim/scenarios parses (the test runs from the repository root). */
static void test_shipped_scenarios(void **state)
{
    (void)state;
    DIR *d = opendir("host-sim/scenarios");
    int n = 0;
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".scn") != 0) {
            continue;
        }
        char path[512];
        snprintf(path, sizeof(path), "host-sim/scenarios/%s", e->d_name);
        int st = sim_scenario_load(path, &g_sc, g_err, sizeof(g_err));
        if (st != 0) {
            print_error("%s\n", g_err);
        }
        assert_int_equal(st, 0);
        n++;
    }
    closedir(d);
    assert_true(n >= 5);
}

/* Every example of host-sim/scenarios/README.md (the ```ini blocks) parses. */
static void test_readme_examples(void **state)
{
    (void)state;
    static char text[1 << 16];
    FILE *f = fopen("host-sim/scenarios/README.md", "r");
    assert_non_null(f);
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[len] = '\0';
    int n = 0;
    for (char *p = strstr(text, "```ini\n"); p != NULL; p = strstr(p, "```ini\n")) {
        char *start = p + 7, *end = strstr(start, "```");
        assert_non_null(end);
        if (sim_scenario_parse(start, (size_t)(end - start), "README.md", &g_sc, g_err,
                               sizeof(g_err)) != 0) {
            print_error("README example %d: %s\n", n + 1, g_err);
            fail();
        }
        n++;
        p = end + 3;
    }
    assert_true(n >= 3); /* one per mechanism */
}

typedef struct {
    const char *text;
    int line;
    const char *needle;
} bad_t;

#define G2                                                                                         \
    "[group a]\nshare = 0.5\ntpr = constant(0.5)\n[group b]\nshare = 0.5\ntpr = constant(0.6)\n"
#define C1 "[campaign c]\nmechanism = tuple_mr\neps = 1\nmetrics = tpr\n"

static const bad_t kBad[] = {
    {"[scenario]\nfoo = 1\n", 2, "unknown key 'foo'"},
    {"[scenario]\nruns = 0\n", 2, "runs must be"},
    {"[scenario]\nruns = 3\nruns = 4\n", 3, "given twice"},
    {"runs = 3\n", 1, "outside any section"},
    {"[scenario]\njust words\n", 2, "expected 'key = value'"},
    {"[scenario]\nseed =\n", 2, "missing value"},
    {"[scenario\n", 1, "malformed section"},
    {"[weird]\n", 1, "unknown section"},
    {"[grup a]\n", 1, "unknown section [grup] (did you mean 'group'?)"},
    {"[campain c]\n", 1, "did you mean 'campaign'?"},
    {"[group]\n", 1, "bad or missing name"},
    {"[scenario]\n[scenario]\n", 2, "given twice"},
    {"[scenario]\nconfidence = 1.5\n", 2, "confidence"},
    {"[scenario]\nmode = fast\n", 2, "mode"},
    {"[scenario]\ndevices = 1e4, 1.5\n", 2, "devices"},
    {"[group a]\nshare = 0.5\ntpr = gauss(1)\n", 3, "unknown distribution"},
    {"[group a]\nshare = 0.5\ntpr = constant(1.5)\n", 3, "constant(X)"},
    {"[group a]\nshare = 0.5\ntpr = beta(0, 1)\n", 3, "beta(a, b)"},
    {"[group a]\nshare = 0\n", 2, "share"},
    {"[group a]\nshare = 0.5\nscores = binormal(auc=1.2, base_rate=0.3)\n", 3, "auc"},
    {"[group a]\nshare = 0.5\nscores = binormal(auc=0.8)\n", 3, "base_rate"},
    {"[group a]\nshare = 0.5\nscores = binormal(auc=0.8, base_rate=0.2, color=1)\n", 3,
     "unknown argument"},
    {"[group a]\nshare = 0.5\npartition = noniid(concentration=-1)\n", 3, "concentration"},
    {"[group a]\nshare = 0.5\nheight = 3\n", 3, "unknown key 'height'"},
    {"[group a]\nshar = 0.5\n", 2, "unknown key 'shar' in [group] (did you mean 'share'?)"},
    {"[scenario]\nruns = 3,\n", 2, "runs must be"},
    {"[scenario]\ndevices = 1e4, 1e5,\n", 2,
     "devices: an empty value after the last comma (a "
     "trailing comma?)"},
    {"[group a]\nshare = 0.5\ntpr = constant(0.5)\n[group a]\n", 4, "defined twice"},
    {"[group a]\nshare = 0.5\ntpr = constant(0.5)\n\n[group b]\nshare = 0.4\ntpr = "
     "constant(0.5)\n" C1,
     6, "sum to"},
    {"[group a]\nshare = 1\ntpr = constant(0.5)\n" C1, 7, "at least 2"},
    {"[group a]\nshare = 0.5\n\n[group b]\nshare = 0.5\ntpr = constant(0.5)\n" C1, 1,
     "no scores, no metric distribution and no pairs"},
    /* Kendall's tau: pairs = bivariate_normal(rho=R) and ustat_bins' kernel = kendall */
    {"[group a]\nshare = 0.5\npairs = bivariate_normal(rho=1)\n", 3, "rho in (-1, 1)"},
    {"[group a]\nshare = 0.5\npairs = bivariate_normal(rho=-1.5)\n", 3, "rho in (-1, 1)"},
    {"[group a]\nshare = 0.5\npairs = bivariate_normal()\n", 3, "rho in (-1, 1)"},
    {"[group a]\nshare = 0.5\npairs = bivariate_normal(rho=nan)\n", 3, "rho"},
    {"[group a]\nshare = 0.5\npairs = bivariate_normal(r=0.5)\n", 3,
     "unknown argument 'r' (did you mean 'rho'?)"},
    {"[group a]\nshare = 0.5\npairs = normal(rho=0.5)\n", 3, "expected bivariate_normal(rho=R)"},
    {G2 "[campaign k]\nmechanism = ustat_bins\neps = 1\nkernel = kendall\n", 7,
     "kernel = kendall: group 'a' has no pairs = bivariate_normal(rho=R)"},
    {"[group a]\nshare = 0.5\npairs = bivariate_normal(rho=0.5)\n[group b]\nshare = 0.5\n"
     "pairs = bivariate_normal(rho=0.1)\n[campaign k]\nmechanism = ustat_bins\neps = 1\n"
     "kernel = kendall\nk = 17\n",
     11, "k must be in 2..16 for kernel = kendall"},
    {G2 "[campaign k]\nmechanism = ustat_bins\neps = 1\nkernel = spearman\n", 10,
     "kernel must be auc, auc_private_label or kendall, not 'spearman'"},
    {G2 "[campaign k]\nmechanism = ustat_tree\neps = 1\nkernel = kendall\n", 10,
     "takes no key 'kernel'"},
    {"[group a]\nshare = 0.5\ntpr = constant(0.5)\nscores = binormal(auc=0.8, base_rate=0.3)\n"
     "[group b]\nshare = 0.5\ntpr = constant(0.5)\n" C1,
     4, "either scores"},
    {G2, 6, "no [campaign]"},
    {G2 "[campaign c]\nmechanism = tuple_xx\n", 8, "unknown mechanism"},
    {G2 "[campaign c]\nmechanism = tuple_mx\n", 8, "did you mean 'tuple_mr'?"},
    {G2 "[campaign c]\neps = 0\n", 8, "eps"},
    {G2 "[campaign c]\neps = 0.5, 1, 2,\n", 8,
     "eps: an empty value after the last comma (a "
     "trailing comma?)"},
    {G2 "[campaign c]\neps = 0.5,, 2\n", 8, "an empty value between two commas"},
    {G2 "[campaign c]\nmetrix = tpr\n", 8, "did you mean 'metrics'?"},
    {G2 "[campaign c]\neps = 100\n", 8, "eps"},
    {G2 "[campaign c]\nmetrics = tpr, auc\n", 8, "unknown metric 'auc'"},
    {G2 "[campaign c]\nmetrics = tpr, tpr\n", 8, "listed twice"},
    {G2 "[campaign c]\ngroups = a, zz\n", 8, "unknown group 'zz'"},
    {G2 C1 "groups = a\n", 11, "groups: 2 to"},
    {G2 "[campaign c]\nmetrics = tpr\n", 7, "needs mechanism and eps"},
    {G2 "[campaign c]\nmechanism = tuple_mr\neps = 1\n", 7, "needs metrics"},
    {G2 C1 "edges = 0.5\n", 11, "histogram mechanisms"},
    {G2 C1 "metrics = fpr\n", 11, "given twice"},
    {G2 "[campaign c]\nmechanism = tuple_mr\neps = 1\nmetrics = fpr\n", 10,
     "metric 'fpr' has no distribution in group 'a'"},
    {G2 "[campaign c]\nmechanism = tuple_mr\nsplit = paper\neps = 1\nmetrics = tpr, fpr\n", 11,
     "one metric"},
    {G2 C1 "[campaign c]\n", 11, "defined twice"},
    {G2 C1 "[group z]\n", 11, "before the campaigns"},
    {G2 "[plan p]\nmechanism = tuple_mr\ndevices = 1.5\n", 9, "devices"},
    {G2 "[plan p]\nmechanism = roc_hist\n", 8, "[plan] answers tuple_mr and tuple_ml"},
    {"[group a]\nshare = 0.5\ntpr = constant(0.5)\n[group b]\nshare = 0.5\nscores = "
     "binormal(auc=0.8, base_rate=0.3)\n[campaign r]\nmechanism = roc_hist\neps = 1\n",
     7, "group 'a' has no scores"},
    {"[group a]\nshare = 1\nscores = binormal(auc=0.8, base_rate=0.3)\n[group b]\nshare = "
     "0\n",
     5, "share"},
    {G2 "[campaign r]\nmechanism = roc_hist\neps = 1\nedges = 0.2, 0.5,\n", 10,
     "edges: an empty value after the last comma"},
    {G2 "[campaign r]\nmechanism = roc_hist\neps = 1\nedges = 0.5, 0.2\n", 10,
     "strictly increasing"},
    {G2 "[campaign r]\nmechanism = roc_hist\neps = 1\nbins = 65\n", 10, "bins must be"},
};

static void test_errors_name_their_line(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); i++) {
        char want[32];
        snprintf(want, sizeof(want), "t.scn:%d: ", kBad[i].line);
        int st = parse(kBad[i].text);
        if (st == 0 || strncmp(g_err, want, strlen(want)) != 0 ||
            strstr(g_err, kBad[i].needle) == NULL) {
            print_error("case %zu: want '%s...%s', got (%d) '%s'\n", i, want, kBad[i].needle, st,
                        g_err);
            fail();
        }
    }
}

/* The spelling hint (host-sim/common/kv.h, shared with the collector's campaigns and config
 * files) names only a close candidate: a far-off key, section or mechanism gets none, while the
 * same messages keep their list of what is known. */
static void test_far_names_get_no_suggestion(void **state)
{
    (void)state;
    static const bad_t kFar[] = {
        {"[frobnicate]\n", 1, "unknown section [frobnicate] (sections: "},
        {"[scenario]\nfrobnicate = 1\n", 2, "unknown key 'frobnicate' in [scenario] (keys: "},
        {G2 "[campaign c]\nmechanism = frobnicate\n", 8, "frobnicate"},
    };
    for (size_t i = 0; i < sizeof(kFar) / sizeof(kFar[0]); i++) {
        char want[32];
        snprintf(want, sizeof(want), "t.scn:%d: ", kFar[i].line);
        int st = parse(kFar[i].text);
        if (st == 0 || strncmp(g_err, want, strlen(want)) != 0 ||
            strstr(g_err, kFar[i].needle) == NULL || strstr(g_err, "did you mean") != NULL) {
            print_error("case %zu: want '%s...%s' and no suggestion, got (%d) '%s'\n", i, want,
                        kFar[i].needle, st, g_err);
            fail();
        }
    }
}

/* Numbers are plain decimals (README "Format"): every integer key refuses hexadecimal, which
 * strtod reads ("0x10" is 16, "0x1p3" is 8) and which the parser used to accept by falling back
 * to it; likewise every decimal key, dpm-sim's own options and the collector's campaigns file
 * (its edges went through strtod too). Each value is first shown to be one strtod reads in
 * full: the negative control (the old lenient parser took it). */
#define SC                                                                                         \
    "[group a]\nshare = 0.5\nscores = binormal(auc=0.8, base_rate=0.3, examples=1)\n"              \
    "[group b]\nshare = 0.5\nscores = binormal(auc=0.7, base_rate=0.2, examples=1)\n"

typedef struct {
    const char *text; /* a scenario with one hexadecimal value */
    const char *value;
    int line;
    const char *needle;
} hex_t;

static const hex_t kHex[] = {
    {SC "[campaign u]\nmechanism = ustat_bins\neps = 1\nk = 0x10\n", "0x10", 10, "k must be"},
    {SC "[campaign u]\nmechanism = ustat_bins\neps = 1\nk = 0x1p3\n", "0x1p3", 10, "k must be"},
    {SC "[campaign d]\nmechanism = dpauc\neps = 1\nthresholds = 0x10\n", "0x10", 10, "thresholds"},
    {SC "[campaign t]\nmechanism = ustat_tree\neps = 1\ndepth = 0x3\n", "0x3", 10, "depth"},
    {SC "[campaign t]\nmechanism = ustat_tree\neps = 1\ngrr_levels = 0x1\n", "0x1", 10,
     "grr_levels"},
    {SC "[campaign f]\nmechanism = fedauc_rr\neps = 1\nscore_bits = 0x10\n", "0x10", 10,
     "score_bits"},
    {SC "[campaign r]\nmechanism = roc_hist\neps = 1\nedges = 0.25, 0x0.8\n", "0x0.8", 10,
     "edges: '0x0.8' is not a score"},
    {SC "[campaign r]\nmechanism = roc_hist\nid = 0x10\n", "0x10", 9, "id must be"},
    {"[scenario]\nruns = 0x10\n", "0x10", 2, "runs must be"},
    {"[scenario]\ndevices = 1e4, 0x1p14\n", "0x1p14", 2, "devices: '0x1p14'"},
    {"[scenario]\nseed = 0x5\n", "0x5", 2, "seed"},
    {"[scenario]\nconfidence = 0x1p-1\n", "0x1p-1", 2, "confidence"},
    {"[population]\nexamples = 0x10\n", "0x10", 2, "examples"},
    {"[population]\nbeta_levels = 0x10\n", "0x10", 2, "beta_levels"},
    {"[group a]\nshare = 0x1/0x2\n", "0x1", 2, "share"},
    {"[group a]\nshare = 0.5\ntpr = beta(0x2, 3)\n", "0x2", 3, "beta(a, b)"},
    {"[group a]\nshare = 0.5\nscores = binormal(auc=0x1.8p-1, base_rate=0.3)\n", "0x1.8p-1", 3,
     "argument 'auc' needs a number"},
    {"[group a]\nshare = 0.5\npairs = bivariate_normal(rho=-0x1p-1)\n", "-0x1p-1", 3, "rho"},
    {"[group a]\nshare = 0.5\npartition = noniid(concentration=0x3)\n", "0x3", 3, "concentration"},
    {"[plan p]\nmechanism = tuple_mr\ndevices = 0x10\n", "0x10", 3, "'0x10' is not a number"},
    {"[plan p]\nmechanism = tuple_mr\nerror = 0x1p-6\n", "0x1p-6", 3, "'0x1p-6' is not a number"},
    {"[scenario]\nconfidence = infinity\n", "infinity", 2, "confidence"},
};

static void test_decimal_only_numbers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(kHex) / sizeof(kHex[0]); i++) {
        char *end = NULL, want[32];
        double lenient = strtod(kHex[i].value, &end);
        assert_true(*end == '\0'); /* negative control: strtod reads it all, as a number */
        (void)lenient;
        snprintf(want, sizeof(want), "t.scn:%d: ", kHex[i].line);
        int st = parse(kHex[i].text);
        if (st == 0 || strncmp(g_err, want, strlen(want)) != 0 ||
            strstr(g_err, kHex[i].needle) == NULL) {
            print_error("case %zu (%s): want '%s...%s', got (%d) '%s'\n", i, kHex[i].value, want,
                        kHex[i].needle, st, g_err);
            fail();
        }
    }
    /* the decimal forms the format promises still parse: 1e1 where an integer is expected */
    assert_int_equal(parse(SC "[campaign u]\nmechanism = ustat_bins\neps = 1\nk = 1e1\n"), 0);
    assert_int_equal(g_sc.campaign[0].ustat_k, 10);
    assert_int_equal(parse(SC "[campaign r]\nmechanism = roc_hist\neps = 1\nedges = .25, 5e-1\n"),
                     0);
    assert_true(g_sc.campaign[0].nedges == 2 && g_sc.campaign[0].edges[1] == (UINT32_C(1) << 30));
    /* dpm-sim's options */
    uint64_t u = 0;
    double d = 0.0;
    assert_int_equal(sim_cli_u64("0x10", &u), -1);
    assert_int_equal(sim_cli_u64("0x1p14", &u), -1);
    assert_int_equal(sim_cli_double("0x1p-1", &d), -1);
    assert_int_equal(sim_cli_double("inf", &d), -1);
    assert_int_equal(sim_cli_double(" 1", &d), -1);
    assert_true(sim_cli_u64("1e5", &u) == 0 && u == 100000);
    assert_true(sim_cli_double("-2.5e-1", &d) == 0 && d == -0.25);
    assert_true(text_is_decimal("5.") && text_is_decimal(".5") && !text_is_decimal(".") &&
                !text_is_decimal("1e") && !text_is_decimal("nan") && !text_is_decimal(""));
}

/* The collector's campaigns file: the same values, the same refusal (its integers were digits
 * only already; its edges went through strtod). */
static void test_collector_campaigns_decimal_only(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "mechanism = roc_hist\neps = 1\nedges = 0.25, 0x0.8\n",
        "mechanism = roc_hist\neps = 1\nedges = 0x1p-2\n",
        "mechanism = roc_hist\neps = 1\nbins = 0x10\n",
        "mechanism = ustat_bins\neps = 1\nk = 0x10\n",
        "mechanism = dpauc\neps = 1\nthresholds = 0x10\n",
        "mechanism = ustat_tree\neps = 1\ndepth = 0x3\n",
        "mechanism = fedauc_rr\neps = 1\nscore_bits = 0x10\n",
        "mechanism = tuple_mr\neps = 0x1p0\ngroups = 2\nmetrics = tpr\n",
    };
    static coll_campaigns_t cs;
    char text[512], err[256];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int n = snprintf(text, sizeof(text), "[campaign]\nid = 1\n%s", bad[i]);
        char want[32];
        int line = 1;
        for (const char *c = text; c < strstr(text, "0x"); c++) {
            line += *c == '\n';
        }
        snprintf(want, sizeof(want), "line %d:", line);
        err[0] = '\0';
        if (coll_campaigns_parse(text, (size_t)n, &cs, err, sizeof(err)) == 0 ||
            strstr(err, want) == NULL) {
            print_error("case %zu accepted or not at %s '%s'\n", i, want, err);
            fail();
        }
    }
    int n = snprintf(text, sizeof(text),
                     "[campaign]\nid = 1\nmechanism = roc_hist\neps = 1\n"
                     "edges = .25, 5e-1\n");
    assert_int_equal(coll_campaigns_parse(text, (size_t)n, &cs, err, sizeof(err)), 0);
}

/* Refusals that come from the SDK's own checks (group_eps >= eps, an eps too small for the
 * mechanism) name the file and the line of the campaign's eps, and the keys it was given with,
 * at parse time (dpm-sim check), not only when a run starts (no line at all before). */
static void test_sdk_refusals_name_their_line(void **state)
{
    (void)state;
    assert_int_equal(parse(SC "[campaign g]\nmechanism = roc_hist_groups\neps = 1\n"
                              "group_eps = 1\n"),
                     -1);
    assert_non_null(strstr(g_err, "t.scn:9: "));
    assert_non_null(strstr(g_err, "group_eps must be in (0, eps)"));
    assert_non_null(strstr(g_err, "group_eps at line 10"));
    assert_int_equal(parse(G2 "[campaign c]\nmechanism = tuple_ml\neps = 2, 0.0001\n"
                              "metrics = tpr\n"),
                     -1);
    assert_non_null(strstr(g_err, "t.scn:9: campaign 'c' eps 0.0001: the SDK refuses it"));
    /* and the same campaign at a valid eps parses */
    assert_int_equal(parse(SC "[campaign g]\nmechanism = roc_hist_groups\neps = 1\n"
                              "group_eps = 0.5\n"),
                     0);
}

static void test_load_missing_file(void **state)
{
    (void)state;
    assert_int_equal(sim_scenario_load("/nonexistent/x.scn", &g_sc, g_err, sizeof(g_err)), -1);
    assert_non_null(strstr(g_err, "cannot open"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_file),
        cmocka_unit_test(test_population_of_good_file),
        cmocka_unit_test(test_shipped_scenarios),
        cmocka_unit_test(test_readme_examples),
        cmocka_unit_test(test_errors_name_their_line),
        cmocka_unit_test(test_far_names_get_no_suggestion),
        cmocka_unit_test(test_decimal_only_numbers),
        cmocka_unit_test(test_collector_campaigns_decimal_only),
        cmocka_unit_test(test_sdk_refusals_name_their_line),
        cmocka_unit_test(test_load_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
