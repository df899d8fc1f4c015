/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group roc_hist: the split of ε and its implemented value, the group's GRR drawn first and
 * then exactly the histogram a group-less roc_hist makes (the real histogram, whatever the
 * group), bad input with reasons, the fingerprint (unchanged without groups), the wire (group
 * field, size bound, the check), and the server's undefined and noiseless cases. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/report.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/roc_hist.h"
#include "estimate/roc.h"
#include "estimate/roc_groups.h"
#include "test_receipt.h"
#include "test_rng.h"

#define ONE (UINT32_C(1) << 31)
#define ROC_HASH_PINNED 0x5183d9b1u /* roc_hist's 0.1.0 campaign: unchanged */

static dpm_campaign_t campaign(uint32_t groups, dpm_eps_t group_eps)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 11;
    c.mechanism = DPM_MECH_ID_ROC_HIST;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(2);
    c.period_seconds = 86400;
    c.nbins = 4;
    for (uint32_t i = 0; i < 4; i++) {
        c.bin_edges[i] = (uint32_t)(((uint64_t)(i + 1) << 31) / 5);
    }
    c.groups = groups;
    c.group_eps = DPM_EPS_Q16(group_eps);
    return c;
}

static void test_split_and_validation(void **state)
{
    (void)state;
    dpm_mech_t m;
    const char *why = NULL;
    dpm_campaign_t c = campaign(4, 0); /* group ε: half */
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    const dpm_roc_hist_t *h = &m.params.roc_hist;
    assert_int_equal(h->groups, 4);
    assert_int_equal(h->group_eps, DPM_EPS_ONE / 2);
    assert_int_equal(h->group_grr.k, 4);
    /* histogram at ε_h = 1/2: scale 2 / ε_h = 4 counts */
    assert_int_equal(h->lap.scale_num, 4);
    assert_int_equal(h->lap.scale_den, 1);
    assert_int_equal(m.eps_implemented, DPM_EPS_ONE / 2 + h->group_grr.eps_implemented);
    assert_true(m.eps_implemented <= DPM_EPS_ONE);
    assert_true(h->group_grr.eps_implemented <= DPM_EPS_ONE / 2);
    /* the report's ε is the sum; a budget of one report must hold it */
    c = campaign(4, DPM_EPS_ONE / 4);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    assert_int_equal(m.params.roc_hist.lap.scale_num, 8); /* ε_h = 3/4: 8/3 counts */
    assert_int_equal(m.params.roc_hist.lap.scale_den, 3);

    dpm_mech_t keep;
    memset(&m, 0x5A, sizeof(m));
    keep = m;
    c = campaign(1, 0);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "roc_hist groups must be 0 (none) or 2 .. DPM_MAX_GROUPS");
    c = campaign(DPM_MAX_GROUPS + 1, 0);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "roc_hist groups must be 0 (none) or 2 .. DPM_MAX_GROUPS");
    c = campaign(3, DPM_EPS_ONE);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "roc_hist group_eps must be in (0, eps)");
    c = campaign(3, 0);
    c.eps = DPM_EPS_Q16(1); /* ε / 2 rounds to 0 */
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "roc_hist group_eps must be in (0, eps)");
    c = campaign(4, 23 * DPM_EPS_ONE); /* e^23 > 2^32: no 32-bit GRR implements it */
    c.eps = DPM_EPS(24);
    c.budget = c.eps;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_RANGE);
    assert_string_equal(why, "roc_hist group_eps too small or too large for GRR");
    c = campaign(2, 0);
    c.budget = DPM_EPS_Q16(DPM_EPS_ONE / 2);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_BUDGET);
    assert_memory_equal(&m, &keep, sizeof(m));
    /* the low-level init refuses the same */
    dpm_roc_hist_t r;
    const uint32_t edges[1] = {ONE / 2};
    assert_int_equal(dpm_roc_hist_init_groups(&r, edges, 1, DPM_EPS_ONE, 1, 100), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init_groups(&r, edges, 1, DPM_EPS_ONE, 2, DPM_EPS_ONE),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_init_groups(&r, edges, 1, DPM_EPS_MAX_Q16 + 1, 2, 100),
                     DPM_ERR_PARAM);
}

static void test_fingerprint(void **state)
{
    (void)state;
    dpm_mech_t a, b;
    dpm_campaign_t c = campaign(0, 0);
    c.nbins = 4;
    for (uint32_t i = 0; i < 4; i++) {
        c.bin_edges[i] = (uint32_t)(((uint64_t)(i + 1) << 31) / 5);
    }
    c.budget = DPM_EPS(2);
    c.group_eps = DPM_EPS_Q16(DPM_EPS_ONE / 3); /* ignored without groups */
    assert_int_equal(dpm_mech_init(&a, &c, NULL), DPM_OK);
    assert_int_equal(a.params_hash, ROC_HASH_PINNED); /* a 0.1.0 campaign keeps its hash */
    c.groups = 2;
    assert_int_equal(dpm_mech_init(&b, &c, NULL), DPM_OK);
    assert_int_not_equal(b.params_hash, a.params_hash);
    dpm_mech_t d;
    c.groups = 3;
    assert_int_equal(dpm_mech_init(&d, &c, NULL), DPM_OK);
    assert_int_not_equal(d.params_hash, b.params_hash);
    c.group_eps = DPM_EPS_Q16(DPM_EPS_ONE / 4);
    assert_int_equal(dpm_mech_init(&b, &c, NULL), DPM_OK);
    assert_int_not_equal(d.params_hash, b.params_hash);
}

/* The GRR's 32 bits come first; the histogram is then exactly a group-less roc_hist's at ε_h. */
static void test_real_histogram_whatever_the_group(void **state)
{
    (void)state;
    dpm_mech_t m;
    dpm_campaign_t c = campaign(4, 0);
    assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
    dpm_roc_hist_t plain;
    assert_int_equal(dpm_roc_hist_init(&plain, c.bin_edges, 4, DPM_EPS_ONE / 2), DPM_OK);
    dpm_score_hist_t h;
    assert_int_equal(dpm_score_hist_init(&h, &plain.bins), DPM_OK);
    for (uint32_t i = 0; i < 30; i++) {
        assert_int_equal(
            dpm_score_hist_add(&h, &plain.bins, (i * 71u % 100u) * (ONE / 100u), (int)(i % 3 == 0)),
            DPM_OK);
    }
    int flipped = 0;
    for (uint64_t seed = 1; seed <= 200; seed++) {
        test_rng_t t1, t2;
        dpm_rng_t g1, g2;
        dpm_rand_t r1, r2;
        assert_int_equal(test_rand_init(&r1, &t1, &g1, seed), DPM_OK);
        assert_int_equal(test_rand_init(&r2, &t2, &g2, seed), DPM_OK);
        dpm_roc_hist_report_t grp, ref;
        assert_int_equal(dpm_roc_hist_perturb_group(&m.params.roc_hist, &r1, 2, &h, &grp), DPM_OK);
        uint64_t skip = 0;
        assert_int_equal(dpm_rand_bits(&r2, 32, &skip), DPM_OK);
        assert_int_equal(dpm_roc_hist_perturb(&plain, &r2, &h, &ref), DPM_OK);
        assert_memory_equal(grp.pos, ref.pos, sizeof(ref.pos));
        assert_memory_equal(grp.neg, ref.neg, sizeof(ref.neg));
        assert_true(grp.group < 4);
        flipped += grp.group != 2;
    }
    /* P(keep) = e^0.5 / (e^0.5 + 3) = 0.355: both outcomes occur in 200 draws */
    assert_true(flipped > 50 && flipped < 200);
    /* a group-less call refuses a group campaign and the other way round */
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 1), DPM_OK);
    dpm_roc_hist_report_t out, keep;
    memset(&out, 0x22, sizeof(out));
    keep = out;
    assert_int_equal(dpm_roc_hist_perturb(&m.params.roc_hist, &r, &h, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_perturb_group(&plain, &r, 0, &h, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_hist_perturb_group(&m.params.roc_hist, &r, 4, &h, &out),
                     DPM_ERR_PARAM);
    assert_memory_equal(&out, &keep, sizeof(out));
    dpm_report_t rep;
    assert_int_equal(dpm_mech_report_roc_hist(&m, &r, TEST_RECEIPT(&m, 1), &h, &rep),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_roc_hist_group(&m, &r, TEST_RECEIPT(&m, 1), 3, &h, &rep),
                     DPM_OK);
    const char *why = NULL;
    assert_int_equal(dpm_mech_check_report(&m, &rep, &why), DPM_OK);
    rep.body.roc_hist.group = 4;
    assert_int_equal(dpm_mech_check_report(&m, &rep, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "group out of range");
    /* wire: the group survives; group 0 is not written (a 0.1.0 body) */
    rep.body.roc_hist.group = 3;
    uint8_t buf[DPM_REPORT_MAX_BYTES];
    size_t len = 0, len0 = 0;
    dpm_report_t back;
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
    assert_int_equal(back.body.roc_hist.group, 3);
    rep.body.roc_hist.group = 0;
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len0), DPM_OK);
    assert_int_equal(len0 + 2, len);
    rep.body.roc_hist.group = DPM_MAX_GROUPS;
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    /* a group-less campaign's report must carry group 0 */
    dpm_mech_t plain_m;
    dpm_campaign_t pc = campaign(0, 0);
    assert_int_equal(dpm_mech_init(&plain_m, &pc, NULL), DPM_OK);
    assert_int_equal(dpm_mech_report_roc_hist(&plain_m, &r, TEST_RECEIPT(&plain_m, 1), &h, &rep),
                     DPM_OK);
    rep.body.roc_hist.group = 1;
    assert_int_equal(dpm_mech_check_report(&plain_m, &rep, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "group out of range");
}

/* Server: no reports and an empty group are undefined with reasons; with Q = 2^-32 (every
 * group kept) and no noise the AUCs are the true binned AUCs. */
static void test_server(void **state)
{
    (void)state;
    dpm_roc_groups_params_t p;
    assert_int_equal(
        dpm_roc_groups_params_init(&p, 3, 4, (uint32_t)(UINT64_C(4294967296) - 2u), 1, 0.0),
        DPM_OK);
    assert_int_equal(dpm_roc_groups_params_init(&p, 3, 4, 100, 1, 0.0), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_groups_params_init(&p, 1, 4, 0, UINT32_MAX, 0.0), DPM_ERR_PARAM);
    assert_int_equal(
        dpm_roc_groups_params_init(&p, 3, 4, (uint32_t)(UINT64_C(4294967296) - 2u), 1, 0.0),
        DPM_OK);
    dpm_roc_groups_agg_t a;
    assert_int_equal(dpm_roc_groups_agg_init(&a, 3, 4), DPM_OK);
    dpm_roc_groups_estimate_t *e = malloc(sizeof(*e));
    assert_non_null(e);
    assert_int_equal(dpm_roc_groups_estimate(&p, &a, 0.95, e), DPM_OK);
    assert_false(e->group[0].defined);
    assert_string_equal(e->group[0].reason, "no reports");
    assert_int_equal(e->ngaps, 3);
    assert_false(e->gap[2].defined);
    /* devices: group 0 and 1 with both labels, group 2 with positives only */
    const int32_t dev[3][2][4] = {
        {{0, 1, 2, 3}, {3, 2, 1, 0}},
        {{1, 1, 1, 1}, {1, 1, 1, 1}},
        {{0, 0, 4, 4}, {0, 0, 0, 0}},
    };
    for (int k = 0; k < 3; k++) {
        for (int rep = 0; rep < 5; rep++) {
            assert_int_equal(dpm_roc_groups_agg_add(&a, (uint32_t)k, 4, dev[k][0], dev[k][1]),
                             DPM_OK);
        }
    }
    assert_int_equal(dpm_roc_groups_agg_add(&a, 3, 4, dev[0][0], dev[0][1]), DPM_ERR_PARAM);
    assert_int_equal(dpm_roc_groups_estimate(&p, &a, 0.95, e), DPM_OK);
    for (int k = 0; k < 2; k++) {
        uint64_t pos[4], neg[4];
        for (int b = 0; b < 4; b++) {
            pos[b] = 5u * (uint64_t)dev[k][0][b];
            neg[b] = 5u * (uint64_t)dev[k][1][b];
        }
        double tpr[5], fpr[5], auc = 0.0;
        assert_int_equal(dpm_roc_exact(pos, neg, 4, tpr, fpr, &auc), DPM_OK);
        print_message("# group %d: AUC %.6f (exact %.6f), sd %.2g\n", k, e->group[k].auc, auc,
                      e->group[k].sd);
        assert_true(e->group[k].defined);
        assert_true(fabs(e->group[k].auc - auc) < 1e-6);
        assert_true(e->group[k].sd < 1e-3); /* no noise, no group randomness to speak of */
        for (int j = 0; j <= 4; j++) {
            assert_true(fabs(e->group[k].tpr[j] - tpr[j]) < 1e-6);
            assert_true(fabs(e->group[k].fpr[j] - fpr[j]) < 1e-6);
        }
    }
    assert_false(e->group[2].defined);
    assert_string_equal(e->group[2].reason, "estimated negatives of the group not above 0");
    assert_true(isfinite(e->group[2].auc) && e->group[2].auc == 0.0);
    assert_true(e->gap[0].defined); /* (0, 1) */
    assert_true(fabs(e->gap[0].gap - (e->group[0].auc - e->group[1].auc)) < 1e-12);
    assert_false(e->gap[1].defined); /* (0, 2) */
    assert_string_equal(e->gap[1].reason, "a group's AUC is undefined");
    free(e);
    dpm_roc_groups_agg_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_and_validation),
        cmocka_unit_test(test_fingerprint),
        cmocka_unit_test(test_real_histogram_whatever_the_group),
        cmocka_unit_test(test_server),
    };
    return cmocka_run_group_tests_name("roc_groups", tests, NULL, NULL);
}
