/* SPDX-License-Identifier: Apache-2.0 */
/* The host mechanism modules (host-sim/mech/host_mech.h): one per SDK mechanism, named as the
 * SDK names it, each with every operation the collector calls; a tuple report read back from
 * its body sums as the one stored with its values; and the JSON comparison dpm-sim's network
 * mode uses (jr_equal, jr_path_equal) finds a difference and names where. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "common/json_read.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/report.h"
#include "mech/base/composition.h"
#include "mech/host_mech.h"

static const dpm_mech_id_t kIds[] = {
    DPM_MECH_ID_TUPLE_MR,   DPM_MECH_ID_TUPLE_ML,   DPM_MECH_ID_ROC_HIST,  DPM_MECH_ID_DPAUC,
    DPM_MECH_ID_USTAT_BINS, DPM_MECH_ID_USTAT_TREE, DPM_MECH_ID_FEDAUC_RR, DPM_MECH_ID_FEDAUC_LAP};

static void every_mechanism_has_a_whole_module(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(kIds) / sizeof(kIds[0]); i++) {
        for (uint32_t groups = 0; groups <= 4; groups += 4) {
            dpm_campaign_t c;
            memset(&c, 0, sizeof(c));
            c.mechanism = kIds[i];
            c.groups = groups;
            const host_mech_t *hm = host_mech_of(&c);
            assert_non_null(hm);
            assert_int_equal(hm->id, kIds[i]);
            assert_string_equal(hm->name, dpm_mech_name(kIds[i]));
            assert_true(hm == host_mech_stored(kIds[i], groups) || kIds[i] != DPM_MECH_ID_ROC_HIST);
            assert_non_null(hm->trust_model);
            assert_true(hm->privacy_unit != NULL || hm->privacy_unit_for != NULL);
            assert_non_null(hm->state_init);
            assert_non_null(hm->delta_add);
            assert_non_null(hm->estimate_json);
            assert_non_null(hm->compare);
            assert_non_null(hm->compare[0]);
            assert_true((hm == &host_mech_roc_hist_groups) ==
                        (kIds[i] == DPM_MECH_ID_ROC_HIST && groups >= 2));
        }
    }
    dpm_campaign_t none;
    memset(&none, 0, sizeof(none));
    assert_null(host_mech_of(&none)); /* no mechanism: no module (the campaigns file says so) */
}

/* A tuple report stored with its values in columns and the same report read back from its
 * body (no columns: a scan of the store) add the same rows. */
static void tuple_body_sums_as_its_columns(void **state)
{
    (void)state;
    dpm_report_t r;
    memset(&r, 0, sizeof(r));
    r.mechanism = DPM_MECH_ID_TUPLE_ML;
    r.campaign_id = 7;
    r.period = 3;
    r.body.tuple.group = 2;
    r.body.tuple.nmetrics = 2;
    r.body.tuple.value[0] = -40000;
    r.body.tuple.value[1] = 123456;
    coll_deltas_t a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    assert_int_equal(coll_deltas_add_values(&a, 7, 3, 2, 2, r.body.tuple.value), 0);
    assert_int_equal(host_mech_tuple_ml.delta_add(&b, &r, 0), 0);
    assert_int_equal(a.n, 1);
    assert_int_equal(b.n, 1);
    assert_int_equal(a.d[0].reports, 1);
    assert_memory_equal(a.d[0].n, b.d[0].n, sizeof(a.d[0].n));
    assert_memory_equal(a.d[0].s, b.d[0].s, sizeof(a.d[0].s));
    assert_true(a.d[0].ss[1][2] == b.d[0].ss[1][2] && a.d[0].ss[1][2] == 123456.0 * 123456.0);
    /* a group outside every campaign is refused, and adds nothing */
    r.body.tuple.group = DPM_MAX_GROUPS;
    assert_int_equal(host_mech_tuple_ml.delta_add(&b, &r, 0), -1);
    assert_int_equal(b.d[0].reports, 1);
    coll_deltas_free(&a);
    coll_deltas_free(&b);
}

static void parse(const char *text, jr_value_t *v)
{
    assert_int_equal(jr_parse(text, strlen(text), v), 0);
}

static void json_paths_compare_and_name_the_difference(void **state)
{
    (void)state;
    jr_value_t a, b, c;
    parse("{\"reports\": 5, \"metrics\": [{\"groups\": [{\"reports\": 2, \"mean\": 0.5}, "
          "{\"reports\": 3, \"mean\": null}]}], \"x\": \"s\"}",
          &a);
    parse("{\"x\": \"s\", \"reports\": 5, \"metrics\": [{\"groups\": [{\"mean\": 0.5, \"reports\": "
          "2}, {\"reports\": 3, \"mean\": null}]}]}",
          &b);
    parse("{\"reports\": 5, \"metrics\": [{\"groups\": [{\"reports\": 2, \"mean\": 0.5}, "
          "{\"reports\": 4, \"mean\": null}]}], \"x\": \"s\"}",
          &c);
    char where[64];
    assert_true(jr_equal(&a, &b)); /* members in another order */
    assert_false(jr_equal(&a, &c));
    assert_true(jr_path_equal(&a, &b, "metrics.*.groups.*.reports", where, sizeof(where)));
    assert_true(jr_path_equal(&a, &c, "metrics.*.groups.*.mean", where, sizeof(where)));
    assert_false(jr_path_equal(&a, &c, "metrics.*.groups.*.reports", where, sizeof(where)));
    assert_string_equal(where, "metrics.0.groups.1.reports");
    assert_true(jr_path_equal(&a, &c, "absent.*.x", where, sizeof(where))); /* on neither side */
    assert_false(jr_path_equal(&a, &c, "metrics", where, sizeof(where)));
    jr_free(&a);
    jr_free(&b);
    jr_free(&c);
    jr_value_t n1, n2;
    parse("[1, 2.5, 9007199254740993]", &n1);
    parse("[1, 2.5, 9007199254740992]", &n2); /* equal as doubles, not as integers */
    assert_false(jr_equal(&n1, &n2));
    jr_free(&n1);
    jr_free(&n2);
}

/* mech/base/composition.h: floor(budget / eps) reports per period, ceil(W / P) periods in an
 * aligned window and one more in any, the device-level factor, the two-aggregator part apart;
 * refusals. */
static void composition_adds_what_each_campaign_asks(void **state)
{
    (void)state;
    dpm_mech_t a, b;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    a.campaign.id = 1;
    a.campaign.budget = DPM_EPS(2.5);
    a.campaign.period_seconds = 86400;
    a.eps_implemented = DPM_EPS_ONE;
    b.campaign.id = 2;
    b.campaign.budget = DPM_EPS(1);
    b.campaign.period_seconds = 25200;         /* 7 hours: 4 in a day aligned, 5 in any day */
    b.eps_implemented = DPM_EPS_ONE / 2u - 1u; /* just below 1/2: still 2 reports */
    /* a DAP task: central eps 0.25 once per 6 hours (4 aligned, 5 in any day) */
    host_comp_item_t it[3] = {host_comp_item_of_mech(&a, 1),
                              host_comp_item_of_mech(&b, 20),
                              {DPM_EPS_ONE / 4u, DPM_EPS_ONE / 4u, 21600, 1, 1}};
    assert_int_equal(it[0].eps_q16, DPM_EPS_ONE);
    assert_int_equal(it[0].budget_q16, 5u * DPM_EPS_ONE / 2u);
    assert_int_equal(it[1].factor, 20);
    assert_int_equal(it[1].central, 0);
    host_comp_row_t r[3];
    host_comp_total_t t;
    assert_int_equal(host_composition(it, 2, 0, r, &t), 0);
    assert_int_equal(t.window_seconds, 86400);
    assert_int_equal(r[0].reports, 2);
    assert_int_equal(r[0].per_period_q16, 2u * DPM_EPS_ONE);
    assert_int_equal(r[0].periods_aligned, 1);
    assert_int_equal(r[0].periods_any, 2);
    assert_int_equal(r[1].reports, 2);
    assert_int_equal(r[1].per_period_q16, 2u * (DPM_EPS_ONE / 2u - 1u));
    assert_int_equal(r[1].periods_aligned, 4);
    assert_int_equal(r[1].periods_any, 5);
    assert_int_equal(t.aligned_q16, 2u * DPM_EPS_ONE + 4u * r[1].per_period_q16);
    assert_int_equal(t.any_q16, 4u * DPM_EPS_ONE + 5u * r[1].per_period_q16);
    assert_int_equal(t.device_any_q16, 4u * DPM_EPS_ONE + 100u * r[1].per_period_q16);
    assert_int_equal(t.central.any_q16, 0);
    assert_true(t.device_bounded);
    host_comp_total_t local = t;
    assert_int_equal(host_composition(it, 3, 0, r, &t), 0); /* with the DAP task */
    assert_int_equal(r[2].reports, 1);
    assert_int_equal(r[2].periods_aligned, 4);
    assert_int_equal(r[2].periods_any, 5);
    assert_int_equal(t.central.aligned_q16, DPM_EPS_ONE);
    assert_int_equal(t.central.any_q16, 5u * DPM_EPS_ONE / 4u);
    assert_int_equal(t.central.device_any_q16, 5u * DPM_EPS_ONE / 4u);
    assert_int_equal(t.aligned_q16, local.aligned_q16 + DPM_EPS_ONE);
    assert_int_equal(t.any_q16, local.any_q16 + 5u * DPM_EPS_ONE / 4u);
    assert_int_equal(t.device_any_q16, local.device_any_q16 + 5u * DPM_EPS_ONE / 4u);
    it[1].factor = 0; /* FedAUC-like: no device-level bound */
    assert_int_equal(host_composition(it, 2, 3600, r, &t), 0);
    assert_false(t.device_bounded);
    assert_int_equal(r[0].periods_aligned, 1); /* a window shorter than the period: 1, 2 */
    assert_int_equal(r[0].periods_any, 2);
    memset(&t, 0xA5, sizeof(t));
    host_comp_total_t before = t;
    it[1].period_seconds = 0; /* refused, nothing written */
    assert_int_equal(host_composition(it, 2, 0, r, &t), -1);
    it[1].period_seconds = 25200;
    it[2].budget_q16 = it[2].eps_q16 - 1u; /* a budget below one report */
    assert_int_equal(host_composition(it, 3, 0, r, &t), -1);
    it[2].eps_q16 = 0;
    assert_int_equal(host_composition(it, 3, 0, r, &t), -1);
    assert_memory_equal(&t, &before, sizeof(t));
    assert_int_equal(host_composition(NULL, 2, 0, r, &t), -1);
    assert_int_equal(host_composition(it, 2, 0, r, NULL), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_mechanism_has_a_whole_module),
        cmocka_unit_test(tuple_body_sums_as_its_columns),
        cmocka_unit_test(json_paths_compare_and_name_the_difference),
        cmocka_unit_test(composition_adds_what_each_campaign_asks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
