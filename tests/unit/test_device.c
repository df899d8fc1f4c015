/* SPDX-License-Identifier: Apache-2.0 */
/* The device context (dpm/device.h): the policy caps campaigns, one call per report runs in the
 * safe order and spends nothing when anything before the charge fails, receipts make a report
 * without a charge impossible through the report calls, bad input leaves caller state alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "fake_storage.h"
#include "test_rng.h"

#define REGION 8192u
#define LEDGER_SIZE 1024u

typedef struct {
    uint8_t mem[REGION];
    fake_storage_t fs;
    test_rng_t t;
    failing_rng_t failing;
    dpm_device_config_t cfg;
    dpm_device_t dev;
} fixture_t;

static dpm_eps_t eps_of(const char *text)
{
    dpm_eps_t e = 0;
    assert_int_equal(dpm_eps_from_decimal(text, &e), DPM_OK);
    return e;
}

static void fixture_config(fixture_t *f)
{
    memset(f, 0, sizeof(*f));
    fake_storage_init(&f->fs, f->mem, REGION, 1);
    test_rng_seed(&f->t, 7);
    f->cfg.rng = test_rng_port(&f->t);
    f->cfg.storage = fake_storage_port(&f->fs);
    f->cfg.ledger_offset = 0;
    f->cfg.ledger_size = LEDGER_SIZE;
    f->cfg.outbox_offset = LEDGER_SIZE;
    f->cfg.outbox_size = REGION - LEDGER_SIZE;
    f->cfg.policy.defaults.max_eps = DPM_EPS_ONE;
    f->cfg.policy.defaults.max_budget = 2 * DPM_EPS_ONE;
}

static void fixture_open(fixture_t *f)
{
    fixture_config(f);
    assert_int_equal(dpm_device_init(&f->dev, &f->cfg), DPM_OK);
}

static dpm_campaign_t tuple_campaign(uint32_t id, const char *eps, const char *budget)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = id;
    c.mechanism = DPM_MECH_ID_TUPLE_MR;
    c.eps = eps_of(eps);
    c.budget = eps_of(budget);
    c.groups = 4;
    c.nmetrics = 1;
    c.metrics[0] = DPM_METRIC_TPR;
    return c;
}

static dpm_campaign_t roc_campaign(uint32_t id)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = id;
    c.mechanism = DPM_MECH_ID_ROC_HIST;
    c.eps = DPM_EPS_ONE;
    c.budget = DPM_EPS_ONE;
    c.nbins = 3;
    for (uint32_t i = 0; i < 3; i++) {
        c.bin_edges[i] = (uint32_t)(((uint64_t)(i + 1) << 31) / 4);
    }
    return c;
}

static dpm_eps_t spent(fixture_t *f, uint32_t id, uint32_t period)
{
    dpm_eps_t s = 0xFFFFFFFFu;
    assert_int_equal(dpm_ledger_spent(dpm_device_ledger(&f->dev), id, period, &s), DPM_OK);
    return s;
}

static uint32_t pending(fixture_t *f)
{
    return dpm_outbox_pending(dpm_device_outbox(&f->dev));
}

static const dpm_confusion_t GOOD = {3, 1, 4, 2}; /* tp fp tn fn: TPR 3/5 */

/* ---- init ----------------------------------------------------------------------------------- */

static void test_init_rejects_bad_config_untouched(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    memset(&f.dev, 0x5A, sizeof(f.dev));
    dpm_device_t keep = f.dev;
    dpm_device_config_t good = f.cfg;

    assert_int_equal(dpm_config_check(), DPM_OK); /* built with the library's options */
    assert_int_equal(dpm_device_init_abi(&f.dev, &good, dpm_abi_fingerprint() ^ 1u), DPM_ERR_CONFIG);
    assert_int_equal(dpm_device_init(NULL, &good), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_init(&f.dev, NULL), DPM_ERR_PARAM);
    dpm_device_config_t c = good;
    c.rng.fill = NULL;
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_ERR_PARAM);
    c = good;
    c.policy.defaults.max_eps = 0;
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_ERR_PARAM);
    c = good;
    c.policy.defaults.max_budget = c.policy.defaults.max_eps - 1; /* budget below one report */
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_ERR_PARAM);
    c = good;
    c.policy.nrules = DPM_POLICY_MAX_RULES + 1;
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_ERR_PARAM);
    c = good;
    c.policy.nrules = 2;
    c.policy.rules[0] = (dpm_policy_limit_t){5, DPM_EPS_ONE, DPM_EPS_ONE};
    c.policy.rules[1] = (dpm_policy_limit_t){5, DPM_EPS_ONE, DPM_EPS_ONE}; /* repeated id */
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_ERR_PARAM);
    c = good;
    c.outbox_offset = LEDGER_SIZE / 2; /* overlaps the ledger */
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_ERR_PARAM);
    c = good;
    c.outbox_size = REGION; /* past the end of storage */
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_ERR_PARAM);
    c = good;
    c.upload.host = "collector";
    c.upload.path = "/v1/reports"; /* no clock, other fields 0: invalid */
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_ERR_PARAM);
    assert_memory_equal(&f.dev, &keep, sizeof(keep));
    assert_int_equal(f.fs.writes + f.fs.erases, 0); /* storage never touched */
    assert_int_equal(dpm_device_init(&f.dev, &good), DPM_OK);
}

/* ---- policy ------------------------------------------------------------------------------------- */

static void test_policy_caps_campaigns_from_the_network(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    f.cfg.policy.nrules = 2;
    f.cfg.policy.rules[0] = (dpm_policy_limit_t){20, eps_of("2"), eps_of("4")}; /* looser */
    f.cfg.policy.rules[1] = (dpm_policy_limit_t){30, eps_of("0.5"), eps_of("0.5")}; /* tighter */
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    dpm_mech_t m, keep;
    memset(&m, 0x33, sizeof(m));
    keep = m;
    const char *why = NULL;
    dpm_campaign_t c = tuple_campaign(10, "1.5", "1.5");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, &why), DPM_ERR_POLICY);
    assert_string_equal(why, "campaign epsilon above the app's policy");
    c = tuple_campaign(10, "1", "1");
    c.budget = 1000u << 16; /* the review's "budget 1000" campaign */
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, &why), DPM_ERR_POLICY);
    assert_string_equal(why, "campaign budget above the app's policy");
    c = tuple_campaign(10, "20", "20");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, &why), DPM_ERR_POLICY);
    assert_memory_equal(&m, &keep, sizeof(m));
    c = tuple_campaign(30, "1", "1"); /* within the defaults, but campaign 30's rule is tighter */
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, &why), DPM_ERR_POLICY);
    c = tuple_campaign(20, "2", "4"); /* beyond the defaults, allowed by campaign 20's rule */
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, &why), DPM_OK);
    c = tuple_campaign(10, "1", "2");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, &why), DPM_OK);

    /* The same through the wire: bytes from a collector asking for more are refused. */
    uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    c = tuple_campaign(11, "1", "1");
    c.budget = 1000u << 16;
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), &len), DPM_OK);
    memcpy(&keep, &m, sizeof(m));
    assert_int_equal(dpm_device_accept_campaign(&f.dev, buf, len, &m, &why), DPM_ERR_POLICY);
    assert_memory_equal(&m, &keep, sizeof(m));
    assert_int_equal(dpm_device_accept_campaign(&f.dev, buf, 3, &m, &why), DPM_ERR_PROTOCOL);
}

/* ---- one call per report ------------------------------------------------------------------------ */

static void test_report_tuple_queues_one_charged_report(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_open(&f);
    dpm_mech_t m;
    dpm_campaign_t c = tuple_campaign(10, "1", "2");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    dpm_report_info_t info;
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 7, 2, &GOOD, &info), DPM_OK);
    assert_int_equal(info.eps_spent, m.eps_implemented);
    assert_int_equal(info.spent_in_period, m.eps_implemented);
    assert_int_equal(spent(&f, 10, 7), m.eps_implemented);
    assert_int_equal(pending(&f), 1);

    /* What is queued is one report of this campaign that the collector's check accepts. */
    dpm_outbox_t *ob = dpm_device_outbox(&f.dev);
    uint32_t cursor = 0;
    dpm_outbox_entry_t e;
    int found = 0;
    assert_int_equal(dpm_outbox_next(ob, &cursor, &e, &found), DPM_OK);
    assert_true(found);
    assert_int_equal(e.len, info.bytes);
    assert_memory_equal(e.report_id, info.report_id, DPM_REPORT_ID_BYTES);
    uint8_t bytes[DPM_REPORT_MAX_BYTES];
    assert_int_equal(dpm_outbox_read(ob, &e, bytes, sizeof(bytes)), DPM_OK);
    dpm_report_t rep;
    assert_int_equal(dpm_report_decode(bytes, e.len, &rep), DPM_OK);
    assert_int_equal(rep.period, 7);
    assert_int_equal(dpm_mech_check_report(&m, &rep, NULL), DPM_OK);

    /* The budget allows two reports per period, then refuses: nothing more is queued. */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 7, 2, &GOOD, &info), DPM_OK);
    assert_int_equal(info.spent_in_period, 2 * m.eps_implemented);
    uint64_t bits = dpm_rand_bits_used(&f.dev.rand);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 7, 2, &GOOD, &info), DPM_ERR_BUDGET);
    assert_int_equal(pending(&f), 2);
    assert_int_equal(dpm_rand_bits_used(&f.dev.rand), bits); /* no noise drawn */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 8, 2, &GOOD, &info), DPM_OK);
    /* An earlier period is closed: its spending is no longer known. */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 6, 2, &GOOD, &info), DPM_ERR_BUDGET);
}

static void test_failures_before_the_charge_spend_nothing(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_open(&f);
    dpm_mech_t m, roc;
    dpm_campaign_t c = tuple_campaign(10, "1", "1");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    c = roc_campaign(12);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &roc, NULL), DPM_OK);
    uint64_t writes = f.fs.writes, bits = dpm_rand_bits_used(&f.dev.rand);
    dpm_report_info_t info;
    memset(&info, 0x44, sizeof(info));
    dpm_report_info_t keep = info;

    const dpm_confusion_t no_pos = {0, 1, 4, 0}; /* TPR undefined */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 2, &no_pos, &info), DPM_ERR_UNDEFINED);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 4, &GOOD, &info), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &roc, 0, 0, &GOOD, &info), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_report_tuple(NULL, &m, 0, 0, &GOOD, &info), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 0, NULL, &info), DPM_ERR_PARAM);
    dpm_score_hist_t h;
    assert_int_equal(dpm_score_hist_init(&h, dpm_mech_score_bins(&roc)), DPM_OK);
    h.pos[1] = DPM_SCORE_HIST_MAX_COUNT + 1;
    assert_int_equal(dpm_device_report_roc_hist(&f.dev, &roc, 0, &h, &info), DPM_ERR_PARAM);
    h.pos[1] = 0;
    h.bins = 3; /* not the campaign's 4 bins */
    assert_int_equal(dpm_device_report_roc_hist(&f.dev, &roc, 0, &h, &info), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_report_roc_hist(&f.dev, &m, 0, &h, &info), DPM_ERR_PARAM);

    /* A mechanism whose campaign exceeds the policy (built around dpm_device_accept_*) is still
     * refused at report time. */
    dpm_mech_t loose;
    c = tuple_campaign(13, "2", "2");
    assert_int_equal(dpm_mech_init(&loose, &c, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &loose, 0, 0, &GOOD, &info), DPM_ERR_POLICY);

    assert_memory_equal(&info, &keep, sizeof(info));
    assert_int_equal(f.fs.writes, writes);
    assert_int_equal(dpm_rand_bits_used(&f.dev.rand), bits);
    assert_int_equal(spent(&f, 10, 0), 0);
    assert_int_equal(spent(&f, 12, 0), 0);
    assert_int_equal(spent(&f, 13, 0), 0);
    assert_int_equal(pending(&f), 0);
}

static void test_full_outbox_spends_nothing(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    f.cfg.outbox_size = DPM_OUTBOX_MIN_REGION; /* room for one largest report per bank */
    f.cfg.policy.defaults.max_budget = 64 * DPM_EPS_ONE;
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    dpm_mech_t m;
    dpm_campaign_t c = tuple_campaign(10, "1", "64");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    uint32_t made = 0;
    dpm_status_t st;
    while ((st = dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL)) == DPM_OK) {
        made++;
    }
    assert_int_equal(st, DPM_ERR_BUFFER);
    assert_true(made >= 1);
    assert_int_equal(pending(&f), made);
    assert_int_equal(spent(&f, 10, 0), made * m.eps_implemented); /* the refused one: nothing */
}

static void test_rng_failure_before_and_after_the_charge(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    failing_rng_t *fr = &f.failing;
    memset(fr, 0, sizeof(*fr));
    test_rng_seed(&fr->inner, 3);
    fr->fail_at_call = 0; /* the very first fill fails: inside the perturbation, after the charge */
    f.cfg.rng = failing_rng_port(fr);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    dpm_mech_t m;
    dpm_campaign_t c = tuple_campaign(10, "1", "2");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_ERR_RNG);
    /* After the charge: the ε counts (the safe direction) and no report exists. */
    assert_int_equal(spent(&f, 10, 0), m.eps_implemented);
    assert_int_equal(pending(&f), 0);
    /* The failure is sticky: the next call refuses BEFORE charging. */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_ERR_RNG);
    assert_int_equal(spent(&f, 10, 0), m.eps_implemented);
}

static void test_corrupt_ledger_refuses_every_report(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    memset(f.mem, 0x00, LEDGER_SIZE); /* neither erased nor a ledger */
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_ERR_CORRUPT);
    dpm_mech_t m;
    dpm_campaign_t c = tuple_campaign(10, "1", "2");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_ERR_CORRUPT);
    assert_int_equal(pending(&f), 0);
}

static void test_anchored_ledger_fails_closed_when_erased(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    f.cfg.outbox_size -= 64; /* the anchor lives in the last 64 bytes, outside both regions */
    f.cfg.ledger_anchor = f.cfg.storage;
    f.cfg.ledger_anchor_offset = REGION - 64;
    dpm_device_config_t overlapping = f.cfg;
    overlapping.ledger_anchor_offset = 8; /* inside the ledger: an erase would take it along */
    assert_int_equal(dpm_device_init(&f.dev, &overlapping), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    dpm_mech_t m;
    dpm_campaign_t c = tuple_campaign(10, "1", "1");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_ERR_BUDGET);
    /* The whole ledger region erased, as a sector erase or a wiped file would: the anchor says
     * this device has charged before, so it refuses instead of starting over. */
    memset(f.mem, 0xFF, LEDGER_SIZE);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_ERR_CORRUPT);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_ERR_CORRUPT);
    /* Control: without the anchor the same erase reads as a new device and spends again. */
    fixture_config(&f);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
    memset(f.mem, 0xFF, LEDGER_SIZE);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
}

static void test_roc_hist_report(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_open(&f);
    dpm_mech_t m;
    dpm_campaign_t c = roc_campaign(12);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    const dpm_score_bins_t *bins = dpm_mech_score_bins(&m);
    assert_non_null(bins);
    dpm_score_hist_t h;
    assert_int_equal(dpm_score_hist_init(&h, bins), DPM_OK);
    for (uint32_t i = 0; i < 40; i++) {
        assert_int_equal(dpm_score_hist_add(&h, bins, ((i * 53u) % 128u) << 24, (int)(i & 1u)), DPM_OK);
    }
    dpm_report_info_t info;
    assert_int_equal(dpm_device_report_roc_hist(&f.dev, &m, 3, &h, &info), DPM_OK);
    assert_int_equal(spent(&f, 12, 3), DPM_EPS_ONE);
    assert_int_equal(dpm_device_report_roc_hist(&f.dev, &m, 3, &h, &info), DPM_ERR_BUDGET);
    assert_int_equal(pending(&f), 1);
    assert_null(dpm_mech_score_bins(NULL));
}

/* ---- issue 17's kinds: dpauc, ustat_bins, ustat_tree, per-group roc_hist -------------------- */

static dpm_campaign_t new_campaign(uint32_t id, dpm_mech_id_t mech)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = id;
    c.mechanism = mech;
    c.eps = DPM_EPS_ONE;
    c.budget = DPM_EPS_ONE;
    switch (mech) {
    case DPM_MECH_ID_DPAUC:
        c.nthresholds = 25;
        for (uint32_t i = 0; i < 25; i++) {
            c.thresholds[i] = (uint32_t)(((uint64_t)i << 31) / 24u);
        }
        break;
    case DPM_MECH_ID_USTAT_BINS:
        c.ustat_k = 8;
        break;
    case DPM_MECH_ID_USTAT_TREE:
        c.tree_depth = 10;
        c.tree_grr_levels = 2;
        break;
    default: /* per-group roc_hist */
        c = roc_campaign(id);
        c.groups = 3;
        break;
    }
    return c;
}

/* The one decoded report in the outbox (exactly one queued) passes the collector's check. */
static void check_queued(fixture_t *f, const dpm_mech_t *m, uint32_t period)
{
    dpm_outbox_t *ob = dpm_device_outbox(&f->dev);
    uint32_t cursor = 0;
    dpm_outbox_entry_t e;
    int found = 0;
    assert_int_equal(dpm_outbox_next(ob, &cursor, &e, &found), DPM_OK);
    assert_true(found);
    static uint8_t bytes[DPM_REPORT_MAX_BYTES];
    assert_int_equal(dpm_outbox_read(ob, &e, bytes, sizeof(bytes)), DPM_OK);
    static dpm_report_t rep;
    assert_int_equal(dpm_report_decode(bytes, e.len, &rep), DPM_OK);
    assert_int_equal(rep.period, period);
    assert_int_equal(rep.mechanism, m->campaign.mechanism);
    assert_int_equal(dpm_mech_check_report(m, &rep, NULL), DPM_OK);
}

static void test_new_kinds_queue_one_charged_report(void **state)
{
    (void)state;
    const dpm_mech_id_t kinds[4] = {DPM_MECH_ID_DPAUC, DPM_MECH_ID_USTAT_BINS,
                                    DPM_MECH_ID_USTAT_TREE, DPM_MECH_ID_ROC_HIST};
    for (int k = 0; k < 4; k++) {
        static fixture_t f;
        fixture_open(&f);
        static dpm_mech_t m;
        dpm_campaign_t c = new_campaign(20u + (uint32_t)k, kinds[k]);
        assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
        dpm_report_info_t info;
        const dpm_ustat_example_t ex = {DPM_SCORE_ONE / 3, 1, 0};
        static dpm_dpauc_counts_t cnt;
        static dpm_score_hist_t h;
        dpm_status_t st = DPM_ERR_PARAM;
        if (kinds[k] == DPM_MECH_ID_DPAUC) {
            assert_int_equal(dpm_dpauc_counts_init(&cnt, dpm_mech_dpauc(&m)), DPM_OK);
            for (uint32_t i = 0; i < 40; i++) {
                assert_int_equal(dpm_dpauc_counts_add(&cnt, dpm_mech_dpauc(&m), ((i * 53u) % 128u) << 24,
                                                      (int)(i & 1u)),
                                 DPM_OK);
            }
            st = dpm_device_report_dpauc(&f.dev, &m, 4, &cnt, &info);
        } else if (kinds[k] == DPM_MECH_ID_USTAT_BINS) {
            st = dpm_device_report_ustat_bins(&f.dev, &m, 4, &ex, &info);
        } else if (kinds[k] == DPM_MECH_ID_USTAT_TREE) {
            st = dpm_device_report_ustat_tree(&f.dev, &m, 4, &ex, &info);
        } else {
            assert_int_equal(dpm_score_hist_init(&h, dpm_mech_score_bins(&m)), DPM_OK);
            assert_int_equal(dpm_score_hist_add(&h, dpm_mech_score_bins(&m), DPM_SCORE_ONE / 2, 1),
                             DPM_OK);
            st = dpm_device_report_roc_hist_group(&f.dev, &m, 4, 2, &h, &info);
        }
        assert_int_equal(st, DPM_OK);
        assert_int_equal(info.eps_spent, m.eps_implemented);
        assert_int_equal(spent(&f, c.id, 4), m.eps_implemented);
        assert_int_equal(pending(&f), 1);
        check_queued(&f, &m, 4);
        if (kinds[k] == DPM_MECH_ID_DPAUC) { /* published: ε / 2 per report, two fit */
            assert_int_equal(m.eps_implemented, DPM_EPS_ONE / 2);
            assert_int_equal(dpm_device_report_dpauc(&f.dev, &m, 4, &cnt, &info), DPM_OK);
            assert_int_equal(dpm_device_report_dpauc(&f.dev, &m, 4, &cnt, &info), DPM_ERR_BUDGET);
        } else if (kinds[k] == DPM_MECH_ID_USTAT_TREE) {
            assert_int_equal(dpm_device_report_ustat_tree(&f.dev, &m, 4, &ex, &info),
                             DPM_ERR_BUDGET);
        }
    }
}

static void test_new_kinds_refuse_before_the_charge(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_open(&f);
    static dpm_mech_t dp, ub, ut, rg, plain;
    dpm_campaign_t c = new_campaign(30, DPM_MECH_ID_DPAUC);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &dp, NULL), DPM_OK);
    c = new_campaign(31, DPM_MECH_ID_USTAT_BINS);
    c.ustat_kernel = DPM_USTAT_KENDALL;
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &ub, NULL), DPM_OK);
    c = new_campaign(32, DPM_MECH_ID_USTAT_TREE);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &ut, NULL), DPM_OK);
    c = new_campaign(33, DPM_MECH_ID_ROC_HIST);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &rg, NULL), DPM_OK);
    c = roc_campaign(34);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &plain, NULL), DPM_OK);
    uint64_t writes = f.fs.writes, bits = dpm_rand_bits_used(&f.dev.rand);
    dpm_report_info_t info;
    memset(&info, 0x44, sizeof(info));
    dpm_report_info_t keep = info;

    static dpm_dpauc_counts_t cnt;
    assert_int_equal(dpm_dpauc_counts_init(&cnt, dpm_mech_dpauc(&dp)), DPM_OK);
    cnt.tp[3] = 1; /* a true positive at a threshold, but no positives */
    assert_int_equal(dpm_device_report_dpauc(&f.dev, &dp, 0, &cnt, &info), DPM_ERR_PARAM);
    cnt.tp[3] = 0, cnt.n = 24;
    assert_int_equal(dpm_device_report_dpauc(&f.dev, &dp, 0, &cnt, &info), DPM_ERR_PARAM);
    cnt.n = 25;
    assert_int_equal(dpm_device_report_dpauc(&f.dev, &ub, 0, &cnt, &info), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_report_dpauc(&f.dev, &dp, 0, NULL, &info), DPM_ERR_PARAM);

    const dpm_ustat_example_t high = {DPM_SCORE_ONE + 1, 0, 0}, label2 = {5, 2, 0};
    const dpm_ustat_example_t labelled_pair = {5, 1, 9}, high2 = {5, 0, DPM_SCORE_ONE + 1};
    assert_int_equal(dpm_device_report_ustat_bins(&f.dev, &ub, 0, &high, &info), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_report_ustat_bins(&f.dev, &ub, 0, &high2, &info), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_report_ustat_bins(&f.dev, &ub, 0, &labelled_pair, &info),
                     DPM_ERR_PARAM); /* Kendall takes no label */
    assert_int_equal(dpm_device_report_ustat_tree(&f.dev, &ut, 0, &label2, &info), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_report_ustat_tree(&f.dev, &ub, 0, &high, &info), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_report_ustat_bins(&f.dev, &ut, 0, &labelled_pair, &info),
                     DPM_ERR_PARAM);

    static dpm_score_hist_t h;
    assert_int_equal(dpm_score_hist_init(&h, dpm_mech_score_bins(&rg)), DPM_OK);
    assert_int_equal(dpm_device_report_roc_hist_group(&f.dev, &rg, 0, 3, &h, &info),
                     DPM_ERR_PARAM); /* group out of range */
    assert_int_equal(dpm_device_report_roc_hist(&f.dev, &rg, 0, &h, &info),
                     DPM_ERR_PARAM); /* a group campaign needs the group */
    assert_int_equal(dpm_device_report_roc_hist_group(&f.dev, &plain, 0, 0, &h, &info),
                     DPM_ERR_PARAM); /* and a group-less one takes none */

    assert_memory_equal(&info, &keep, sizeof(info));
    assert_int_equal(f.fs.writes, writes);
    assert_int_equal(dpm_rand_bits_used(&f.dev.rand), bits);
    for (uint32_t id = 30; id <= 34; id++) {
        assert_int_equal(spent(&f, id, 0), 0);
    }
    assert_int_equal(pending(&f), 0);

    /* after the charge: a random source that fails spends the ε and makes no report */
    static fixture_t g;
    fixture_config(&g);
    memset(&g.failing, 0, sizeof(g.failing));
    test_rng_seed(&g.failing.inner, 3);
    g.cfg.rng = failing_rng_port(&g.failing);
    assert_int_equal(dpm_device_init(&g.dev, &g.cfg), DPM_OK);
    c = new_campaign(35, DPM_MECH_ID_USTAT_TREE);
    assert_int_equal(dpm_device_accept_mech(&g.dev, &c, &ut, NULL), DPM_OK);
    const dpm_ustat_example_t ok = {5, 1, 0};
    assert_int_equal(dpm_device_report_ustat_tree(&g.dev, &ut, 0, &ok, NULL), DPM_ERR_RNG);
    assert_int_equal(spent(&g, 35, 0), ut.eps_implemented);
    assert_int_equal(pending(&g), 0);
}

/* ---- receipts -------------------------------------------------------------------------------------- */

static void test_receipts_buy_exactly_one_report(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 9), DPM_OK);
    dpm_mech_t m, other;
    dpm_campaign_t c = tuple_campaign(10, "1", "1");
    assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
    c = tuple_campaign(11, "0.5", "1");
    assert_int_equal(dpm_mech_init(&other, &c, NULL), DPM_OK);
    const dpm_ratio_t v = {3, 5};
    dpm_report_t rep, keep;
    memset(&rep, 0x11, sizeof(rep));
    keep = rep;

    dpm_receipt_t rc, wrong;
    assert_int_equal(dpm_receipt_unmetered(&m, 4, &rc), DPM_OK);
    assert_int_equal(dpm_receipt_unmetered(&other, 4, &wrong), DPM_OK);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &wrong, 0, &v, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, NULL, 0, &v, &rep), DPM_ERR_PARAM);
    dpm_receipt_t forged = rc;
    forged.state = 0x1234; /* not a receipt a charge or the unmetered call made */
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &forged, 0, &v, &rep), DPM_ERR_PARAM);
    forged = rc;
    forged.eps = m.eps_implemented / 2; /* charged less than the report spends */
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &forged, 0, &v, &rep), DPM_ERR_PARAM);
    assert_memory_equal(&rep, &keep, sizeof(rep));

    /* A failure leaves the receipt unused; success uses it up; a used one buys nothing. */
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &rc, 9, &v, &rep), DPM_ERR_PARAM); /* group */
    assert_int_equal(rc.state, DPM_RECEIPT_UNMETERED);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &rc, 0, &v, &rep), DPM_OK);
    assert_int_equal(rep.period, 4);
    assert_int_equal(rc.state, 0);
    keep = rep;
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &rc, 0, &v, &rep), DPM_ERR_PARAM);
    assert_memory_equal(&rep, &keep, sizeof(rep));
    assert_int_equal(dpm_receipt_unmetered(NULL, 0, &rc), DPM_ERR_PARAM);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_rejects_bad_config_untouched),
        cmocka_unit_test(test_policy_caps_campaigns_from_the_network),
        cmocka_unit_test(test_report_tuple_queues_one_charged_report),
        cmocka_unit_test(test_failures_before_the_charge_spend_nothing),
        cmocka_unit_test(test_full_outbox_spends_nothing),
        cmocka_unit_test(test_rng_failure_before_and_after_the_charge),
        cmocka_unit_test(test_corrupt_ledger_refuses_every_report),
        cmocka_unit_test(test_anchored_ledger_fails_closed_when_erased),
        cmocka_unit_test(test_roc_hist_report),
        cmocka_unit_test(test_receipts_buy_exactly_one_report),
        cmocka_unit_test(test_new_kinds_queue_one_charged_report),
        cmocka_unit_test(test_new_kinds_refuse_before_the_charge),
    };
    return cmocka_run_group_tests_name("device", tests, NULL, NULL);
}
