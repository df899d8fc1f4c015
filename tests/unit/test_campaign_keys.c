/* SPDX-License-Identifier: Apache-2.0 */
/* The two campaign readers take the same keys for each mechanism: the collector's campaigns file
 * (collector/ingest/campaigns.c) and dpm-sim's scenario files (sim/scenario/scenario_parse.c).
 * For every mechanism of the key table (mech/base/campaign_keys.h) and every key any mechanism
 * takes, a campaign that is valid without the key is read by both with the key added: each
 * reader must accept it exactly when the table gives the key to the mechanism (the scenario
 * refuses the collector's own options, collector_keys, everywhere). So a key one reader knows
 * for a mechanism and the other does not fails here.
 *
 * A value neither reader takes is refused by both, each naming the key in its own words, and
 * FedAUC's defaults and rule across keys come out the same.
 *
 * Negative controls: the same comparison against a table that gives fedauc_rr a key only the
 * collector takes (upload_count), and one that takes dpauc's calibration away, each finds the
 * difference; and a key no table names is refused by both readers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collector/ingest/campaigns.h"
#include "mech/base/campaign_keys.h"
#include "sim/devices/mechs.h"

/* A value of each key that every mechanism taking it accepts, in both readers. */
static const char *sample(const char *key)
{
    static const char *const kSamples[][2] = {
        {"thresholds", "8"},
        {"calibration", "tight"},
        {"k", "4"},
        {"kernel", "auc_private_label"},
        {"depth", "4"},
        {"grr_levels", "1"},
        {"group_eps", "0.5"},
        {"variant", "global"},
        {"p_share", "0.5"},
        {"score_bits", "8"},
        {"max_device_examples", "20"},
        {"noise", "laplace"},
        {"delta", "1e-9\nnoise = gaussian"}, /* delta is for Gaussian noise: give both */
        {"local_eps", "2"},
        {"max_examples", "10"},
        {"upload_seconds", "100"},
        {"upload_count", "100"},
        {"min_uploaders", "1"},
        {"no_such_key", "1"},
    };
    for (size_t i = 0; i < sizeof(kSamples) / sizeof(kSamples[0]); i++) {
        if (strcmp(kSamples[i][0], key) == 0) {
            return kSamples[i][1];
        }
    }
    fail_msg("no sample value for key '%s': add one", key);
    return NULL;
}

/* The keys (beyond id, mechanism, eps) that make a valid campaign of m in both readers. */
static const char *base_keys(const char *m, int collector)
{
    if (strncmp(m, "tuple", 5) == 0) {
        return collector ? "groups = 2\nmetrics = tpr\n" : "metrics = tpr\n";
    }
    if (strcmp(m, "roc_hist") == 0) {
        return collector ? "bins = 4\n" : "bins = 4\ngroups = a\n";
    }
    if (strcmp(m, "roc_hist_groups") == 0) {
        return collector ? "groups = 2\nbins = 4\n" : "bins = 4\n";
    }
    if (strcmp(m, "roc_hist_2agg") == 0) { /* dpm-sim only: the campaigns file refuses it */
        return collector ? "bins = 4\n" : "bins = 4\nmax_device_examples = 20\n";
    }
    return strcmp(m, "dpauc") == 0        ? "thresholds = 8\n"
           : strcmp(m, "ustat_bins") == 0 ? "k = 4\n"
           : strcmp(m, "ustat_tree") == 0 ? "depth = 4\n"
                                          : "";
}

static char g_err[512];

/* 1 if the lines of base give key. */
static int gives(const char *base, const char *key)
{
    size_t n = strlen(key);
    for (const char *l = base; *l != '\0'; l = strchr(l, '\n') + 1) {
        if (strncmp(l, key, n) == 0 && strncmp(l + n, " = ", 3) == 0) {
            return 1;
        }
    }
    return 0;
}

/* 1 if the collector reads a campaigns file with one campaign of m (+ key = its sample). */
static int collector_reads(const host_campaign_mech_t *m, const char *key)
{
    char text[1024];
    const char *base = base_keys(m->name, 1);
    int in_base = key != NULL && gives(base, key);
    snprintf(text, sizeof(text), "[campaign]\nid = 7\nmechanism = %s\neps = 1\n%s%s%s%s%s",
             m->its_own_name || m->sim_only ? m->name : "roc_hist", base,
             key && !in_base ? key : "",
             key && !in_base ? " = " : "", key && !in_base ? sample(key) : "",
             key && !in_base ? "\n" : "");
    coll_campaigns_t *cs = malloc(sizeof(*cs));
    assert_non_null(cs);
    int st = coll_campaigns_parse(text, strlen(text), cs, g_err, sizeof(g_err));
    free(cs);
    return st == 0;
}

/* 1 if dpm-sim reads a scenario with one campaign of m (+ key = its sample). */
static int scenario_reads(const host_campaign_mech_t *m, const char *key)
{
    char text[2048];
    const char *base = base_keys(m->name, 0);
    int in_base = key != NULL && gives(base, key);
    snprintf(text, sizeof(text),
             "[group a]\nshare = 0.5\n"
             "scores = binormal(auc=0.8, base_rate=0.3, examples=1, threshold=0.5)\n"
             "[group b]\nshare = 0.5\n"
             "scores = binormal(auc=0.7, base_rate=0.3, examples=1, threshold=0.5)\n"
             "[campaign c]\nmechanism = %s\neps = 1\n%s%s%s%s%s",
             m->name, base, key && !in_base ? key : "", key && !in_base ? " = " : "",
             key && !in_base ? sample(key) : "", key && !in_base ? "\n" : "");
    sim_scenario_t *sc = malloc(sizeof(*sc));
    assert_non_null(sc);
    int st = sim_scenario_parse(text, strlen(text), "k.scn", sc, g_err, sizeof(g_err));
    free(sc);
    return st == 0;
}

/* Differences between what the readers do and what `table` says (printed unless quiet); their
 * count. */
static int compare(const host_campaign_mech_t *table, size_t n, int quiet)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const host_campaign_mech_t *m = host_campaign_mech_find(table[i].name);
        assert_non_null(m); /* the readers know the mechanism by the real table's name */
        for (int k = 0; k < HOST_CK_COUNT; k++) {
            const char *key = host_campaign_key_at(k)->key;
            /* a dpm-sim-only mechanism: the campaigns file refuses it whatever the key */
            int want_c = !table[i].sim_only && host_campaign_mech_takes(&table[i], key, 1);
            int want_s = host_campaign_mech_takes(&table[i], key, 0);
            int got_c = collector_reads(m, key);
            char cerr[512];
            memcpy(cerr, g_err, sizeof(cerr));
            int got_s = scenario_reads(m, key);
            if (got_c != want_c || got_s != want_s) {
                bad++;
            }
            if ((got_c != want_c || got_s != want_s) && !quiet) {
                print_message("# %s, key %s: campaigns file %s (want %s), scenario %s (want %s)\n"
                              "#   campaigns file: %s\n#   scenario: %s\n",
                              table[i].name, key, got_c ? "takes it" : "refuses it",
                              want_c ? "takes" : "refuses", got_s ? "takes it" : "refuses it",
                              want_s ? "takes" : "refuses", got_c ? "-" : cerr,
                              got_s ? "-" : g_err);
            }
        }
    }
    return bad;
}

/* The key list (HOST_CK_*) and the mechanisms' lists name the same keys: the ones both readers
 * take first, then the collector's options; each key named by a mechanism is in the list. */
static void the_key_list_and_the_mechanisms_agree(void **state)
{
    (void)state;
    for (int k = 0; k < HOST_CK_COUNT; k++) {
        const char *key = host_campaign_key_at(k)->key;
        int index = -1, own = 0, option = 0;
        assert_ptr_equal(host_campaign_key_find(key, &index), host_campaign_key_at(k));
        assert_int_equal(index, k);
        for (size_t i = 0; i < host_campaign_nmechs; i++) {
            own |= host_campaign_key_in(host_campaign_mechs[i].keys, key);
            option |= host_campaign_key_in(host_campaign_mechs[i].collector_keys, key);
        }
        if (k < HOST_CK_SCENARIO ? !own || option : own || !option) {
            fail_msg("key %s (%d): a mechanism's own key %d, a collector option %d", key, k, own,
                     option);
        }
    }
    assert_null(host_campaign_key_at(HOST_CK_COUNT));
    for (size_t i = 0; i < host_campaign_nmechs; i++) {
        for (const char *const *k = host_campaign_mechs[i].keys; *k != NULL; k++) {
            assert_non_null(host_campaign_key_find(*k, NULL));
        }
        for (const char *const *k = host_campaign_mechs[i].collector_keys; *k != NULL; k++) {
            assert_non_null(host_campaign_key_find(*k, NULL));
        }
    }
}

static void every_mechanism_is_valid_without_its_optional_keys(void **state)
{
    (void)state;
    for (size_t i = 0; i < host_campaign_nmechs; i++) {
        const host_campaign_mech_t *m = &host_campaign_mechs[i];
        if (m->sim_only) { /* the campaigns file refuses the name, saying which it takes */
            char text[128];
            snprintf(text, sizeof(text), "[campaign]\nid = 7\nmechanism = %s\neps = 1\n",
                     m->name);
            coll_campaigns_t *cs = malloc(sizeof(*cs));
            assert_non_null(cs);
            assert_int_equal(coll_campaigns_parse(text, strlen(text), cs, g_err, sizeof(g_err)),
                             -1);
            free(cs);
            if (strstr(g_err, "mechanism") == NULL || strstr(g_err, "roc_hist") == NULL) {
                fail_msg("campaigns file, %s: %s", m->name, g_err);
            }
        } else if (!collector_reads(m, NULL)) {
            fail_msg("campaigns file, %s: %s", m->name, g_err);
        }
        if (!scenario_reads(m, NULL)) {
            fail_msg("scenario, %s: %s", m->name, g_err);
        }
    }
}

static void both_readers_take_the_keys_the_table_gives(void **state)
{
    (void)state;
    assert_int_equal(compare(host_campaign_mechs, host_campaign_nmechs, 0), 0);
}

/* Negative control: a table in which one reader's key is given to a mechanism the other reader
 * refuses it for must fail the comparison. */
static void a_key_one_reader_lacks_fails_the_comparison(void **state)
{
    (void)state;
    static const char *const kRrKeys[] = {"score_bits", "upload_count", NULL};
    static const char *const kDpaucKeys[] = {"thresholds", NULL};
    host_campaign_mech_t t = *host_campaign_mech_find("fedauc_rr");
    t.keys = kRrKeys; /* the scenario does not know upload_count */
    assert_true(compare(&t, 1, 1) >= 1);
    t = *host_campaign_mech_find("dpauc");
    t.keys = kDpaucKeys; /* both readers take calibration for dpauc */
    assert_true(compare(&t, 1, 1) >= 1);
}

/* A bad value of each mechanism's own key: refused by both readers, each naming the key. */
static void a_bad_value_is_refused_by_both(void **state)
{
    (void)state;
    for (size_t i = 0; i < host_campaign_nmechs; i++) {
        const host_campaign_mech_t *m = &host_campaign_mechs[i];
        for (const char *const *k = m->keys; *k != NULL; k++) {
            char line[64], text[1024], want[64];
            snprintf(line, sizeof(line), "%s = 0x10\n", *k);
            snprintf(text, sizeof(text), "[campaign]\nid = 7\nmechanism = %s\neps = 1\n%s",
                     m->its_own_name ? m->name : "roc_hist\ngroups = 2\nbins = 4", line);
            coll_campaigns_t *cs = malloc(sizeof(*cs));
            assert_non_null(cs);
            assert_int_equal(coll_campaigns_parse(text, strlen(text), cs, g_err, sizeof(g_err)),
                             -1);
            free(cs);
            snprintf(want, sizeof(want), "bad %s '0x10' (want ", *k);
            if (!m->sim_only && strstr(g_err, want) == NULL) {
                fail_msg("campaigns file, %s %s: %s", m->name, *k, g_err);
            }
            snprintf(text, sizeof(text),
                     "[group a]\nshare = 1/2\nscores = binormal(auc=0.8, base_rate=0.3)\n"
                     "[group b]\nshare = 1/2\nscores = binormal(auc=0.7, base_rate=0.3)\n"
                     "[campaign c]\nmechanism = %s\neps = 1\n%s",
                     m->name, line);
            sim_scenario_t *sc = malloc(sizeof(*sc));
            assert_non_null(sc);
            assert_int_equal(
                sim_scenario_parse(text, strlen(text), "k.scn", sc, g_err, sizeof(g_err)), -1);
            free(sc);
            snprintf(want, sizeof(want), "k.scn:10: %s must be ", *k);
            if (strstr(g_err, want) == NULL) {
                fail_msg("scenario, %s %s: %s", m->name, *k, g_err);
            }
        }
    }
}

/* FedAUC's defaults and its rule across keys (coll_fedauc_key_defaults) are the same in both:
 * fedauc_lap without variant or p_share is local at 0.5 with 16-bit scores, and adaptive with a
 * p_share is refused by both, with the same reason. */
static void fedauc_defaults_and_rule_are_the_same_in_both(void **state)
{
    (void)state;
    static const char kScenario[] =
        "[group a]\nshare = 1/2\nscores = binormal(auc=0.8, base_rate=0.3)\n"
        "[group b]\nshare = 1/2\nscores = binormal(auc=0.7, base_rate=0.3)\n"
        "[campaign c]\nmechanism = fedauc_lap\neps = 1\n%s";
    static const char kFile[] = "[campaign]\nid = 7\nmechanism = fedauc_lap\neps = 1\n%s";
    char text[1024];
    coll_campaigns_t *cs = malloc(sizeof(*cs));
    sim_scenario_t *sc = malloc(sizeof(*sc));
    assert_true(cs != NULL && sc != NULL);
    snprintf(text, sizeof(text), kFile, "");
    assert_int_equal(coll_campaigns_parse(text, strlen(text), cs, g_err, sizeof(g_err)), 0);
    const dpm_campaign_t *cc = &cs->c[0].mech.campaign;
    snprintf(text, sizeof(text), kScenario, "");
    assert_int_equal(sim_scenario_parse(text, strlen(text), "k.scn", sc, g_err, sizeof(g_err)), 0);
    const sim_campaign_spec_t *sp = &sc->campaign[0];
    assert_int_equal(cc->fedauc_variant, DPM_FEDAUC_LOCAL);
    assert_int_equal(sp->fedauc_variant, cc->fedauc_variant);
    assert_int_equal(cc->fedauc_p_share_q16, 32768);
    assert_int_equal(sp->fedauc_p_share, cc->fedauc_p_share_q16);
    assert_int_equal(cc->fedauc_score_bits, 16);
    assert_int_equal(sp->fedauc_score_bits, cc->fedauc_score_bits);
    const char *rule = "variant adaptive takes no p_share (each device splits eps)";
    snprintf(text, sizeof(text), kFile, "variant = adaptive\np_share = 0.5\n");
    assert_int_equal(coll_campaigns_parse(text, strlen(text), cs, g_err, sizeof(g_err)), -1);
    assert_non_null(strstr(g_err, rule));
    snprintf(text, sizeof(text), kScenario, "variant = adaptive\np_share = 0.5\n");
    assert_int_equal(sim_scenario_parse(text, strlen(text), "k.scn", sc, g_err, sizeof(g_err)), -1);
    if (strstr(g_err, "k.scn:11: ") == NULL || strstr(g_err, rule) == NULL) {
        fail_msg("scenario: %s", g_err); /* the line of p_share */
    }
    free(cs);
    free(sc);
}

/* And a key no table names is refused by both, with the key named. */
static void an_unknown_key_is_refused_by_both(void **state)
{
    (void)state;
    const host_campaign_mech_t *m = host_campaign_mech_find("dpauc");
    assert_false(collector_reads(m, "no_such_key"));
    assert_non_null(strstr(g_err, "unknown key 'no_such_key'"));
    assert_false(scenario_reads(m, "no_such_key"));
    assert_non_null(strstr(g_err, "k.scn:11: unknown key 'no_such_key' in [campaign]"));
    /* a misspelled mechanism key gets the suggestion from the one table, in both */
    char text[256];
    snprintf(text, sizeof(text),
             "[campaign]\nid = 7\nmechanism = fedauc_lap\neps = 1\n"
             "upload_secnds = 5\n");
    coll_campaigns_t *cs = malloc(sizeof(*cs));
    assert_non_null(cs);
    assert_int_equal(coll_campaigns_parse(text, strlen(text), cs, g_err, sizeof(g_err)), -1);
    free(cs);
    assert_non_null(strstr(g_err, "line 5: unknown key 'upload_secnds' (did you mean "
                                  "'upload_seconds'?)"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_key_list_and_the_mechanisms_agree),
        cmocka_unit_test(every_mechanism_is_valid_without_its_optional_keys),
        cmocka_unit_test(both_readers_take_the_keys_the_table_gives),
        cmocka_unit_test(a_key_one_reader_lacks_fails_the_comparison),
        cmocka_unit_test(a_bad_value_is_refused_by_both),
        cmocka_unit_test(fedauc_defaults_and_rule_are_the_same_in_both),
        cmocka_unit_test(an_unknown_key_is_refused_by_both),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
