/* SPDX-License-Identifier: Apache-2.0 */
/* The device context (dpm/device.h): the policy caps campaigns and, with the device cap, what
 * all campaigns together spend per device period (issue 27: a collector answering with other
 * campaign ids); ε below the floor is refused; one call per report runs in the safe order and
 * spends nothing when anything before the charge fails; every refusal says why; receipts make
 * a report without a charge impossible through the report calls; bad input leaves caller
 * state alone; an erased outbox under its anchor is counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "dpm/expert/budget.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/outbox.h"
#include "dpm/expert/report.h"
#include "dpm/expert/simulator.h"
#include "dpm/expert/uploader.h"
#include "fake_collector.h"
#include "fake_storage.h"
#include "test_rng.h"

#define REGION 8192u

/* The device's clock: monotonic milliseconds, and a wall clock when has_wall. */
typedef struct {
    uint64_t mono_ms;
    int64_t wall;
    int has_wall;
} dev_clock_t;

static uint64_t dc_mono(void *ctx)
{
    return ((dev_clock_t *)ctx)->mono_ms;
}

static int dc_wall(void *ctx, int64_t *out)
{
    const dev_clock_t *c = ctx;
    if (!c->has_wall) {
        return -1;
    }
    *out = c->wall;
    return 0;
}

#define DAY_MS 86400000u

typedef struct {
    uint8_t mem[REGION];
    fake_storage_t fs;
    test_rng_t t;
    failing_rng_t failing;
    dev_clock_t clk;
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
    f->clk.mono_ms = 5000;
    f->cfg.clock = (dpm_clock_t){dc_mono, dc_wall, &f->clk};
    f->cfg.region_size = REGION; /* the SDK lays it out (0 would say the same: all of storage) */
    f->cfg.policy.defaults.max_eps = DPM_EPS(1);
    f->cfg.policy.defaults.max_budget = DPM_EPS(2);
}

/* Where the SDK put the ledger and the outbox in f->mem (region at offset 0). */
static dpm_storage_layout_t layout_of(const fixture_t *f)
{
    dpm_storage_layout_t lay;
    assert_int_equal(dpm_storage_layout(f->cfg.region_size, f->cfg.sector_size, &lay, NULL),
                     DPM_OK);
    return lay;
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
    c.eps = DPM_EPS_Q16(eps_of(eps));
    c.budget = DPM_EPS_Q16(eps_of(budget));
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
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(1);
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

/* init with cfg is refused with st and exactly `why`; *d untouched but its reason; storage
 * never touched. */
static void refused(fixture_t *f, const dpm_device_config_t *cfg, dpm_status_t st, const char *why)
{
    memset(&f->dev, 0x5A, sizeof(f->dev));
    dpm_device_t keep = f->dev;
    uint64_t ops = f->fs.ops;
    assert_int_equal(dpm_device_init(&f->dev, cfg), st);
    assert_string_equal(dpm_device_why(&f->dev), why);
    /* only the reason (the first member) changed */
    assert_memory_equal((const uint8_t *)&f->dev + sizeof(f->dev.why),
                        (const uint8_t *)&keep + sizeof(keep.why), sizeof(keep) - sizeof(keep.why));
    assert_int_equal(f->fs.ops, ops);
}

static void test_init_refuses_with_its_reason(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    dpm_device_config_t good = f.cfg;

    assert_int_equal(offsetof(dpm_device_t, why), 0);
    assert_int_equal(dpm_config_check(), DPM_OK); /* built with the library's options */
    memset(&f.dev, 0x5A, sizeof(f.dev));
    assert_int_equal(dpm_device_init_abi(&f.dev, &good, dpm_abi_fingerprint() ^ 1u), DPM_ERR_CONFIG);
    assert_string_equal(dpm_device_why(&f.dev),
                        "app built with other DPM_* options or headers than libdpm");
    assert_int_equal(dpm_device_init(NULL, &good), DPM_ERR_PARAM);
    assert_string_equal(dpm_device_why(NULL), "no device");
    refused(&f, NULL, DPM_ERR_PARAM, "no device or no config (NULL)");
    dpm_device_config_t c = good;
    c.rng.fill = NULL;
    refused(&f, &c, DPM_ERR_PARAM, "rng.fill is NULL (a CSPRNG is required)");
    c = good;
    c.policy.defaults.max_eps = DPM_EPS_Q16(0);
    refused(&f, &c, DPM_ERR_PARAM,
            "policy: defaults.max_eps is below 2^-8 (Q16.16: 1.0 is DPM_EPS(1))");
    c = good;
    c.policy.defaults.max_budget = DPM_EPS_Q16(c.policy.defaults.max_eps.q16 - 1);
    refused(&f, &c, DPM_ERR_PARAM, "policy: defaults.max_budget is below defaults.max_eps");
    c = good;
    c.policy.nrules = DPM_POLICY_MAX_RULES + 1;
    refused(&f, &c, DPM_ERR_PARAM, "policy: more rules than DPM_POLICY_MAX_RULES");
    c = good;
    c.policy.nrules = 2;
    c.policy.rules[0] = (dpm_policy_limit_t){5, DPM_EPS(1), DPM_EPS(1)};
    c.policy.rules[1] = (dpm_policy_limit_t){5, DPM_EPS(1), DPM_EPS(1)}; /* repeated id */
    refused(&f, &c, DPM_ERR_PARAM, "policy: two rules name the same campaign id");
    c.policy.rules[1] = (dpm_policy_limit_t){6, DPM_EPS(1), DPM_EPS(0.5)};
    refused(&f, &c, DPM_ERR_PARAM, "policy: a rule's max_budget is below its max_eps");
    c = good;
    c.policy.device.max_eps = DPM_EPS(0.5); /* below defaults.max_eps 1: nothing could pass */
    refused(&f, &c, DPM_ERR_PARAM,
            "policy: device.max_eps below a max_eps (no such report could pass)");
    c = good;
    c.region_offset = 8;
    refused(&f, &c, DPM_ERR_PARAM, "region beyond storage.size (region_offset + region_size)");
    c.region_offset = REGION + 1;
    refused(&f, &c, DPM_ERR_PARAM, "region_offset beyond storage.size");
    c = good;
    c.region_offset = 100;
    c.region_size = 4096;
    c.sector_size = 256;
    refused(&f, &c, DPM_ERR_PARAM,
            "region_offset not on a sector boundary (a multiple of sector_size)");
    c = good;
    c.storage.erase = NULL;
    refused(&f, &c, DPM_ERR_PARAM, "storage lacks read, write or erase");
    c = good;
    c.upload.host = "collector";
    c.upload.path = "/v1/reports"; /* other fields 0: invalid */
    refused(&f, &c, DPM_ERR_PARAM, "upload config invalid (see dpm_upload_config_t)");
    c.clock.monotonic_ms = NULL;
    refused(&f, &c, DPM_ERR_PARAM, "upload needs clock.monotonic_ms");
    c = good;
    c.outbox_anchor = &good.storage;
    c.outbox_anchor_offset = REGION - 8; /* in the device's region */
    refused(&f, &c, DPM_ERR_PARAM, "outbox_anchor: inside the device's storage region");
    assert_int_equal(dpm_device_init(&f.dev, &good), DPM_OK);
    assert_string_equal(dpm_device_why(&f.dev), "");
}

/* ε written as a plain integer meant as whole ε (1 read as 1/65536, 255 as 0.0039) is refused
 * at init and at campaign acceptance, with the reason; 2^-8 itself passes. The compile-time
 * half (a plain number does not compile) is tests/unit/test_eps_types.sh. */
static void test_eps_below_the_floor_is_refused(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    dpm_device_config_t c = f.cfg;
    c.policy.defaults = (dpm_policy_limit_t){0, DPM_EPS_Q16(1), DPM_EPS_Q16(4)}; /* ".eps = 1" */
    refused(&f, &c, DPM_ERR_PARAM,
            "policy: defaults.max_eps is below 2^-8 (Q16.16: 1.0 is DPM_EPS(1))");
    c.policy.defaults = (dpm_policy_limit_t){0, DPM_EPS_Q16(255), DPM_EPS_Q16(255)};
    refused(&f, &c, DPM_ERR_PARAM,
            "policy: defaults.max_eps is below 2^-8 (Q16.16: 1.0 is DPM_EPS(1))");
    c = f.cfg;
    c.policy.nrules = 1;
    c.policy.rules[0] = (dpm_policy_limit_t){9, DPM_EPS_Q16(2), DPM_EPS_Q16(2)};
    refused(&f, &c, DPM_ERR_PARAM,
            "policy: a rule's max_eps is below 2^-8 (Q16.16: 1.0 is DPM_EPS(1))");
    c = f.cfg;
    c.policy.device.max_eps = DPM_EPS_Q16(3);
    refused(&f, &c, DPM_ERR_PARAM,
            "policy: device.max_eps is below 2^-8 (Q16.16: 1.0 is DPM_EPS(1))");
    /* the floor itself is a valid (if noisy) choice */
    c = f.cfg;
    c.policy.defaults =
        (dpm_policy_limit_t){0, DPM_EPS_Q16(DPM_EPS_FLOOR_Q16), DPM_EPS_Q16(DPM_EPS_FLOOR_Q16)};
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_OK);

    fixture_open(&f);
    static dpm_mech_t m, keep;
    memset(&m, 0x33, sizeof(m));
    keep = m;
    const char *why = NULL;
    dpm_campaign_t camp = tuple_campaign(10, "1", "1");
    camp.eps = DPM_EPS_Q16(1); /* the mistake */
    assert_int_equal(dpm_device_accept_mech(&f.dev, &camp, &m, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "campaign epsilon below 2^-8 (Q16.16: 1.0 is DPM_EPS(1))");
    assert_string_equal(dpm_device_why(&f.dev), why);
    assert_memory_equal(&m, &keep, sizeof(m));
    /* the same campaign from the wire */
    uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    assert_int_equal(dpm_campaign_encode(&camp, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_device_accept_campaign(&f.dev, buf, len, &m, &why), DPM_ERR_PARAM);
    assert_memory_equal(&m, &keep, sizeof(m));
    static dpm_campaign_t roc;
    roc = roc_campaign(12);
    roc.groups = 2;
    roc.group_eps = DPM_EPS_Q16(100);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &roc, &m, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "campaign group_eps below 2^-8 (Q16.16: 1.0 is DPM_EPS(1))");
    /* Negative control: the mechanism alone takes ε = 1/65536 (it is a valid Q16.16 value):
     * what refuses it is the device's floor. */
    assert_int_equal(dpm_mech_init(&m, &camp, NULL), DPM_OK);
    assert_int_equal(m.eps_implemented, 1);
    /* and the floor holds at report time for a mechanism built around acceptance */
    dpm_report_info_t info;
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, &info), DPM_ERR_PARAM);
    assert_string_equal(dpm_device_why(&f.dev),
                        "campaign epsilon below 2^-8 (Q16.16: 1.0 is DPM_EPS(1))");
    assert_int_equal(pending(&f), 0);
    /* DPM_EPS writes what was meant */
    camp.eps = DPM_EPS(1);
    assert_int_equal(camp.eps.q16, DPM_EPS_ONE);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &camp, &m, &why), DPM_OK);
}

/* ---- policy ------------------------------------------------------------------------------------- */

static void test_policy_caps_campaigns_from_the_network(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    f.cfg.policy.nrules = 2;
    f.cfg.policy.rules[0] = (dpm_policy_limit_t){20, DPM_EPS(2), DPM_EPS(4)};     /* looser */
    f.cfg.policy.rules[1] = (dpm_policy_limit_t){30, DPM_EPS(0.5), DPM_EPS(0.5)}; /* tighter */
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    dpm_mech_t m, keep;
    memset(&m, 0x33, sizeof(m));
    keep = m;
    const char *why = NULL;
    dpm_campaign_t c = tuple_campaign(10, "1.5", "1.5");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, &why), DPM_ERR_POLICY);
    assert_string_equal(why, "campaign epsilon above the app's policy");
    c = tuple_campaign(10, "1", "1");
    c.budget = DPM_EPS(1000); /* the review's "budget 1000" campaign */
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
    c.budget = DPM_EPS(1000);
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
    assert_string_equal(dpm_device_why(&f.dev), "the campaign's budget for this period is spent");
    /* the next period of the campaign, in the same device period: the device cap (by default
     * the largest max_budget, 2) is spent too */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 8, 2, &GOOD, &info), DPM_ERR_BUDGET);
    assert_string_equal(dpm_device_why(&f.dev), "the device's cap for this period is spent");
    f.clk.mono_ms += DAY_MS; /* a day powered on: the next device period */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 8, 2, &GOOD, &info), DPM_OK);
    assert_int_equal(info.spent_in_period, m.eps_implemented);
    assert_int_equal(info.device_spent, m.eps_implemented);
    /* An earlier period is closed: its spending is no longer known. */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 6, 2, &GOOD, &info), DPM_ERR_BUDGET);
    assert_string_equal(dpm_device_why(&f.dev), "campaign period closed: a later one was charged");
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
    f.cfg.region_size = DPM_DEVICE_MIN_REGION(0); /* room for one largest report per bank */
    f.cfg.policy.defaults.max_budget = DPM_EPS(64);
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
    fixture_open(&f);
    dpm_storage_layout_t lay = layout_of(&f);
    memset(f.mem + lay.ledger_offset, 0x00, lay.ledger_size); /* neither erased nor a ledger */
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
    f.cfg.region_size -= 64; /* the anchor lives in the last 64 bytes, outside the region */
    f.cfg.ledger_anchor = f.cfg.storage;
    f.cfg.ledger_anchor_offset = REGION - 64;
    dpm_storage_layout_t lay = layout_of(&f);
    dpm_device_config_t overlapping = f.cfg;
    overlapping.ledger_anchor_offset = lay.ledger_offset; /* an erase would take it along */
    assert_int_equal(dpm_device_init(&f.dev, &overlapping), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    dpm_mech_t m;
    dpm_campaign_t c = tuple_campaign(10, "1", "1");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_ERR_BUDGET);
    /* The whole ledger region erased, as a sector erase or a wiped file would: the anchor says
     * this device has charged before, so it refuses instead of starting over. */
    memset(f.mem + lay.ledger_offset, 0xFF, lay.ledger_size);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_ERR_CORRUPT);
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_ERR_CORRUPT);
    /* Control: without the anchor the same erase reads as a new device and spends again. */
    fixture_config(&f);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
    lay = layout_of(&f);
    memset(f.mem + lay.ledger_offset, 0xFF, lay.ledger_size);
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
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(1);
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

/* ---- issue 27: the device cap, the campaign-id check, the ledger's slots -------------------- */

#define DAY_S 86400u

static void table_campaign(fake_collector_t *fc, uint32_t id)
{
    fc->campaigns[fc->ncampaigns] = tuple_campaign(id, "1", "1");
    fc->campaigns[fc->ncampaigns].period_seconds = DAY_S;
    fc->ncampaigns++;
}

/* What the audit did: asked for campaign 1, a collector answered with campaigns 777, 778 and
 * 779, each within the app's policy (its defaults allow any id), each with its own budget:
 * 0.1.0 made 3 more reports on the same data in one period, then its ledger was full for good.
 * Now dpm_campaign_get refuses an answer for another id, and even an app that takes such bytes
 * (its own HTTP stack, dpm_device_accept_campaign) spends at most the device cap per day. */
static void test_collector_answering_other_campaigns(void **state)
{
    (void)state;
    static fixture_t f;
    static fake_collector_t fc;
    fixture_config(&f);
    f.cfg.policy.defaults.max_budget = DPM_EPS(1); /* so the device cap is 1 per day */
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    fake_collector_init(&fc, "collector", "/v1/reports");
    table_campaign(&fc, 1);
    table_campaign(&fc, 777);
    table_campaign(&fc, 778);
    table_campaign(&fc, 779);
    dpm_transport_t t = fake_collector_port(&fc);
    fake_clock_t fclk = {1000, 1, 0};
    dpm_clock_t clk = fake_clock_port(&fclk);
    static uint8_t work[DPM_CAMPAIGN_MAX_BYTES + 512u];
    static dpm_mech_t m[4];
    const char *why = NULL;
    size_t len = 0;

    /* honest: campaign 1 as asked */
    assert_int_equal(
        dpm_campaign_get(&t, &clk, "collector", 1, 1000, work, sizeof(work), &len, &why), DPM_OK);
    assert_int_equal(dpm_device_accept_campaign(&f.dev, work, len, &m[0], &why), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m[0], 0, 1, &GOOD, NULL), DPM_OK);
    /* malicious: every answer is another campaign */
    for (uint32_t i = 1; i < 4; i++) {
        fc.answer_with = 776u + i;
        assert_int_equal(
            dpm_campaign_get(&t, &clk, "collector", 1, 1000, work, sizeof(work), &len, &why),
            DPM_ERR_PROTOCOL);
        assert_string_equal(why, "the collector answered with another campaign than the one "
                                 "requested");
        assert_int_equal(
            dpm_campaign_fetch(&t, &clk, "collector", 1, 1000, work, sizeof(work), &m[i], &why),
            DPM_ERR_PROTOCOL);
    }
    assert_int_equal(fc.campaign_gets, 7);
    assert_false(fc.fatal);
    /* an app that takes the bytes anyway: the campaigns pass the policy, the cap stops them */
    fc.answer_with = 0;
    for (uint32_t i = 1; i < 4; i++) {
        assert_int_equal(
            dpm_campaign_get(&t, &clk, "collector", 776u + i, 1000, work, sizeof(work), &len, &why),
            DPM_OK);
        assert_int_equal(dpm_device_accept_campaign(&f.dev, work, len, &m[i], &why), DPM_OK);
    }
    for (uint32_t i = 1; i < 4; i++) {
        assert_int_equal(dpm_device_report_tuple(&f.dev, &m[i], 0, 1, &GOOD, NULL), DPM_ERR_BUDGET);
        assert_string_equal(dpm_device_why(&f.dev), "the device's cap for this period is spent");
    }
    assert_int_equal(pending(&f), 1);
    for (uint32_t id = 777; id <= 779; id++) {
        assert_int_equal(spent(&f, id, 0), 0);
    }
    /* the next day the device reports again (once) */
    f.clk.mono_ms += DAY_MS;
    dpm_report_info_t info;
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m[2], 1, 1, &GOOD, &info), DPM_OK);
    assert_int_equal(info.device_spent, DPM_EPS_ONE);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m[0], 1, 1, &GOOD, NULL), DPM_ERR_BUDGET);

    /* Negative control: a policy whose device cap allows four reports a day (what 0.1.0 had:
     * a budget per campaign id only) lets all four campaigns spend in one period, and fills
     * the ledger (four slots by default)... */
    static fixture_t g;
    fixture_config(&g);
    g.cfg.policy.defaults.max_budget = DPM_EPS(1);
    g.cfg.policy.device.max_eps = DPM_EPS(8);
    assert_int_equal(dpm_device_init(&g.dev, &g.cfg), DPM_OK);
    for (uint32_t i = 0; i < 4; i++) {
        assert_int_equal(dpm_device_report_tuple(&g.dev, &m[i], 0, 1, &GOOD, NULL), DPM_OK);
    }
    assert_int_equal(pending(&g), 4);
    /* ... which, as the ledger frees the slots of campaign periods that are over, does not
     * lock new campaigns out: the next day a fifth campaign joins (0.1.0: "outbox full" for
     * ever) */
    static dpm_mech_t fifth;
    dpm_campaign_t c5 = tuple_campaign(5, "1", "1");
    c5.period_seconds = DAY_S;
    assert_int_equal(dpm_device_accept_mech(&g.dev, &c5, &fifth, NULL), DPM_OK);
    if (DPM_LEDGER_MAX_CAMPAIGNS == 4) {
        assert_int_equal(dpm_device_report_tuple(&g.dev, &fifth, 0, 1, &GOOD, NULL),
                         DPM_ERR_LEDGER_FULL);
    }
    g.clk.mono_ms += DAY_MS;
    assert_int_equal(dpm_device_report_tuple(&g.dev, &fifth, 0, 1, &GOOD, NULL), DPM_OK);
}

/* The cap's periods follow the wall clock when the port has one, never go back, and without
 * any clock last for ever. */
static void test_device_period_follows_the_clock(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    f.clk.has_wall = 1;
    f.clk.wall = 1800000000; /* 2027-01-15 08:00 UTC */
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    static dpm_mech_t a, b;
    dpm_campaign_t c = tuple_campaign(10, "1", "2");
    c.period_seconds = 3600; /* hourly campaign periods: the cap still counts per day */
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &a, NULL), DPM_OK);
    c = tuple_campaign(11, "1", "2");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &b, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &a, 100, 1, &GOOD, NULL), DPM_OK);
    f.clk.wall += 3600;
    assert_int_equal(dpm_device_report_tuple(&f.dev, &a, 101, 1, &GOOD, NULL), DPM_OK);
    f.clk.wall += 3600;
    assert_int_equal(dpm_device_report_tuple(&f.dev, &a, 102, 1, &GOOD, NULL), DPM_ERR_BUDGET);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &b, 0, 1, &GOOD, NULL), DPM_ERR_BUDGET);
    f.clk.wall -= 30 * (int64_t)DAY_S; /* set back a month: nothing reopens */
    f.clk.mono_ms += DAY_MS / 2;       /* half a day of monotonic time: not enough */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &b, 0, 1, &GOOD, NULL), DPM_ERR_BUDGET);
    f.clk.wall = 1800000000 + DAY_S; /* the next UTC day */
    assert_int_equal(dpm_device_report_tuple(&f.dev, &b, 0, 1, &GOOD, NULL), DPM_OK);

    /* no clock at all: one device period for ever (a lifetime cap) */
    static fixture_t g;
    fixture_config(&g);
    memset(&g.cfg.clock, 0, sizeof(g.cfg.clock));
    assert_int_equal(dpm_device_init(&g.dev, &g.cfg), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&g.dev, &a, 0, 1, &GOOD, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&g.dev, &b, 0, 1, &GOOD, NULL), DPM_OK);
    for (uint32_t p = 1; p < 4; p++) {
        assert_int_equal(dpm_device_report_tuple(&g.dev, &a, p, 1, &GOOD, NULL), DPM_ERR_BUDGET);
    }
    /* a reboot does not count the time before it: the monotonic clock restarts at init */
    static fixture_t h;
    fixture_config(&h);
    h.clk.mono_ms = 10ull * DAY_MS; /* up ten days before the device opened */
    assert_int_equal(dpm_device_init(&h.dev, &h.cfg), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&h.dev, &a, 0, 1, &GOOD, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&h.dev, &b, 0, 1, &GOOD, NULL), DPM_OK);
    assert_int_equal(dpm_device_init(&h.dev, &h.cfg), DPM_OK); /* reboot */
    h.clk.mono_ms += DAY_MS - 1000;
    assert_int_equal(dpm_device_report_tuple(&h.dev, &a, 1, 1, &GOOD, NULL), DPM_ERR_BUDGET);
    h.clk.mono_ms += 1000;
    assert_int_equal(dpm_device_report_tuple(&h.dev, &a, 1, 1, &GOOD, NULL), DPM_OK);
}

/* A full ledger is its own status, with advice, not "the outbox is full". */
static void test_full_ledger_says_so(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    f.cfg.policy.device.max_eps = DPM_EPS(64);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    static dpm_mech_t m;
    for (uint32_t i = 0; i < DPM_LEDGER_MAX_CAMPAIGNS; i++) {
        dpm_campaign_t c = tuple_campaign(20 + i, "1", "1"); /* no period length: never ends */
        assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
        assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
    }
    dpm_campaign_t c = tuple_campaign(99, "1", "1");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    uint64_t writes = f.fs.writes;
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_ERR_LEDGER_FULL);
    assert_int_equal(f.fs.writes, writes);
    assert_string_equal(dpm_device_why(&f.dev),
                        "ledger full: every campaign in it has an open period");
    assert_string_equal(
        dpm_strerror(DPM_ERR_LEDGER_FULL),
        "privacy ledger full (a campaign period must end, or raise DPM_LEDGER_MAX_CAMPAIGNS)");
    assert_int_equal(pending(&f), DPM_LEDGER_MAX_CAMPAIGNS);
}

/* An erased outbox region under the outbox's anchor is counted and reported as a loss; without
 * the anchor it reads as a new device and the reports vanish silently (the negative control). */
static void test_erased_outbox_is_counted(void **state)
{
    (void)state;
    for (int anchored = 1; anchored >= 0; anchored--) {
        static fixture_t f;
        static fake_collector_t fc;
        fixture_config(&f);
        f.cfg.region_size -= 64;
        if (anchored) {
            f.cfg.outbox_anchor = &f.cfg.storage; /* it outlives the device: both in f */
            f.cfg.outbox_anchor_offset = REGION - 16;
        }
        f.cfg.upload = (dpm_upload_config_t){"collector", "/v1/reports", 8, 4096, 1000, 10, 100, NULL};
        assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
        static dpm_mech_t m;
        dpm_campaign_t c = tuple_campaign(10, "1", "2");
        assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
        assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
        assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
        dpm_storage_layout_t lay = layout_of(&f);
        memset(f.mem + lay.outbox_offset, 0xFF, lay.outbox_size); /* a sector erase */
        assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
        dpm_outbox_stats_t st;
        assert_int_equal(dpm_outbox_stats(dpm_device_outbox(&f.dev), &st), DPM_OK);
        assert_int_equal(st.pending, 0);
        assert_int_equal(st.found_erased, (uint32_t)anchored);
        assert_int_equal(st.found_lost, (uint32_t)anchored);
        assert_int_equal(st.lost, (uint32_t)anchored);
        /* the loss survives a reboot, and the collector hears it once */
        assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
        assert_int_equal(dpm_outbox_stats(dpm_device_outbox(&f.dev), &st), DPM_OK);
        assert_int_equal(st.lost, (uint32_t)anchored);
        assert_int_equal(st.found_erased, 0);
        f.clk.mono_ms += DAY_MS;
        assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 1, 1, &GOOD, NULL), DPM_OK);
        fake_collector_init(&fc, "collector", "/v1/reports");
        dpm_transport_t t = fake_collector_port(&fc);
        static uint8_t work[DPM_UPLOAD_MIN_WORK + 256u];
        dpm_upload_result_t res;
        assert_int_equal(dpm_device_flush(&f.dev, &t, work, sizeof(work), &res), DPM_OK);
        assert_false(fc.fatal);
        assert_int_equal(res.delivered, 1);
        assert_int_equal(fc.lost_reports, (uint64_t)anchored);
        assert_int_equal(dpm_outbox_stats(dpm_device_outbox(&f.dev), &st), DPM_OK);
        assert_int_equal(st.lost, 0);
    }
}

/* ---- the storage layout ----------------------------------------------------------------------- */

/* dpm_device_init refuses cfg with st and a reason starting with why, *d untouched but its
 * reason and the storage's bytes as they were (it may read them). */
static void refused_keeping_storage(fixture_t *f, const dpm_device_config_t *cfg, dpm_status_t st,
                                    const char *why)
{
    static uint8_t before[REGION];
    memcpy(before, f->mem, REGION);
    memset(&f->dev, 0x5A, sizeof(f->dev));
    dpm_device_t keep = f->dev;
    assert_int_equal(dpm_device_init(&f->dev, cfg), st);
    assert_memory_equal(dpm_device_why(&f->dev), why, strlen(why));
    assert_memory_equal((const uint8_t *)&f->dev + sizeof(f->dev.why),
                        (const uint8_t *)&keep + sizeof(keep.why), sizeof(keep) - sizeof(keep.why));
    assert_memory_equal(f->mem, before, REGION);
}

static void test_storage_layout_of_one_region(void **state)
{
    (void)state;
    dpm_storage_layout_t lay;
    /* byte-erasable storage: the record's area is one ledger record, then the ledger, then the
     * outbox takes the rest, rounded down to an even number of bytes */
    assert_int_equal(dpm_storage_layout(REGION, 0, &lay, NULL), DPM_OK);
    assert_int_equal(lay.record_size, DPM_LEDGER_RECORD_MAX);
    assert_int_equal(lay.ledger_offset, DPM_LEDGER_RECORD_MAX);
    assert_int_equal(lay.ledger_size, DPM_LEDGER_MIN_REGION);
    assert_int_equal(lay.outbox_offset, 3u * DPM_LEDGER_RECORD_MAX);
    assert_int_equal(lay.outbox_size, (REGION - 3u * DPM_LEDGER_RECORD_MAX) / 2u * 2u);
    /* flash with 512-byte sectors: every part on whole sectors */
    assert_int_equal(dpm_storage_layout(REGION, 512, &lay, NULL), DPM_OK);
    assert_int_equal(lay.record_size % 512u, 0);
    assert_int_equal(lay.ledger_offset % 512u, 0);
    assert_int_equal(lay.ledger_size % 1024u, 0);
    assert_int_equal(lay.outbox_offset % 512u, 0);
    assert_int_equal(lay.outbox_size % 1024u, 0);
    assert_true(lay.outbox_offset + lay.outbox_size <= REGION);
    assert_true(REGION - (lay.outbox_offset + lay.outbox_size) < 1024u);

    /* too small: the reason names the build's minimum, in bytes */
    char figure[16];
    snprintf(figure, sizeof(figure), "minimum is %u", (unsigned)DPM_DEVICE_MIN_REGION(0));
    const char *why = NULL;
    assert_int_equal(dpm_storage_layout(DPM_DEVICE_MIN_REGION(0) - 1u, 0, &lay, &why),
                     DPM_ERR_PARAM);
    assert_non_null(strstr(why, figure));
    assert_int_equal(strlen(strstr(why, figure)), strlen(figure)); /* it ends the reason */
    assert_int_equal(dpm_storage_layout(DPM_DEVICE_MIN_REGION(0), 0, &lay, NULL), DPM_OK);
    assert_int_equal(lay.outbox_size, DPM_OUTBOX_MIN_REGION);
    assert_int_equal(dpm_storage_layout(DPM_DEVICE_MIN_REGION(512) - 1u, 512, &lay, &why),
                     DPM_ERR_PARAM);
    assert_non_null(strstr(why, "DPM_DEVICE_MIN_REGION(sector_size)"));
    assert_int_equal(dpm_storage_layout(DPM_DEVICE_MIN_REGION(512), 512, &lay, NULL), DPM_OK);
    assert_int_equal(dpm_storage_layout(REGION, 0, NULL, NULL), DPM_ERR_PARAM);

    /* and at init, before anything is read or written */
    static fixture_t f;
    fixture_config(&f);
    dpm_device_config_t c = f.cfg;
    c.region_size = DPM_DEVICE_MIN_REGION(0) - 1u;
    assert_int_equal(dpm_storage_layout(c.region_size, 0, &lay, &why), DPM_ERR_PARAM);
    refused(&f, &c, DPM_ERR_PARAM, why);
}

/* A reboot with the same region finds its ledger and outbox; one with another size or sector
 * size, or over a region holding data without a layout record, is refused and changes nothing. */
static void test_storage_layout_survives_reboots(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_open(&f);
    dpm_mech_t m;
    dpm_campaign_t c = tuple_campaign(10, "1", "2");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);

    /* the same region: both reports and both charges are found */
    memset(&f.dev, 0, sizeof(f.dev));
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    assert_int_equal(pending(&f), 2);
    assert_int_equal(spent(&f, 10, 0), 2u * m.eps_implemented);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_ERR_BUDGET);

    /* another size or sector size would move the ledger and the outbox: refused, untouched */
    const char *moved = "region_size or sector_size differs from the layout stored in the region";
    dpm_storage_layout_t a = layout_of(&f);
    dpm_device_config_t other = f.cfg;
    other.region_size = REGION - 1024u;
    dpm_storage_layout_t b;
    assert_int_equal(dpm_storage_layout(other.region_size, 0, &b, NULL), DPM_OK);
    assert_true(b.outbox_size != a.outbox_size); /* it would have moved the outbox's bank B */
    refused_keeping_storage(&f, &other, DPM_ERR_PARAM, moved);
    other.region_size = 0; /* "all of storage": the same size, so the same layout */
    assert_int_equal(dpm_device_init(&f.dev, &other), DPM_OK);
    other = f.cfg;
    other.sector_size = 256;
    refused_keeping_storage(&f, &other, DPM_ERR_PARAM, moved);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    assert_int_equal(pending(&f), 2);
    assert_int_equal(spent(&f, 10, 0), 2u * m.eps_implemented);

    /* the record damaged (one byte) while the ledger and outbox hold data: fail closed */
    f.mem[5] ^= 0x40;
    refused_keeping_storage(&f, &f.cfg, DPM_ERR_CORRUPT, "region holds data but no valid layout record");
    f.mem[5] ^= 0x40;
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);

    /* data without a record (a region laid out by hand, as before the SDK did it) */
    memset(f.mem, 0xFF, a.record_size);
    refused_keeping_storage(&f, &f.cfg, DPM_ERR_CORRUPT, "region holds data but no valid layout record");
}

/* A first init torn while writing the record, over an otherwise erased region, is finished by
 * the next init; the record is then what every later init finds. */
static void test_storage_layout_torn_first_init(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    memset(f.mem, 0x00, 7); /* the first bytes of a record write, then the power went */
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    assert_int_equal(f.mem[0], 0x44); /* 'D' of the record's magic "DPL1" */
    dpm_device_config_t other = f.cfg;
    other.region_size = REGION - 512u;
    refused_keeping_storage(&f, &other, DPM_ERR_PARAM, "region_size or sector_size differs");
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
}

/* 0.1.0's explicit regions (compatibility): a device it set up keeps its ledger and outbox; the
 * same storage given as one region instead is refused, untouched, not reformatted. */
static void test_storage_explicit_regions_of_0_1_0(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    f.cfg.region_size = 0;
    f.cfg.ledger_offset = 0;
    f.cfg.ledger_size = 1024;
    f.cfg.outbox_offset = 1024;
    f.cfg.outbox_size = REGION - 1024;
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    dpm_mech_t m;
    dpm_campaign_t c = tuple_campaign(10, "1", "2");
    assert_int_equal(dpm_device_accept_mech(&f.dev, &c, &m, NULL), DPM_OK);
    assert_int_equal(dpm_device_report_tuple(&f.dev, &m, 0, 1, &GOOD, NULL), DPM_OK);
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    assert_int_equal(pending(&f), 1);
    assert_int_equal(spent(&f, 10, 0), m.eps_implemented);
    assert_true(memcmp(f.mem, "DPL1", 4) != 0); /* no layout record written */

    dpm_device_config_t both = f.cfg;
    both.region_size = REGION;
    refused(&f, &both, DPM_ERR_PARAM,
            "give region_offset/region_size/sector_size or 0.1.0's explicit ledger_* and outbox_* "
            "regions, not both");
    both = f.cfg;
    both.outbox_offset = 512;
    refused(&f, &both, DPM_ERR_PARAM, "ledger and outbox regions overlap");
    both = f.cfg;
    both.ledger_size = DPM_LEDGER_MIN_REGION - 1;
    refused(&f, &both, DPM_ERR_PARAM, "ledger_size below DPM_LEDGER_MIN_REGION");

    /* an upgrade that drops the explicit regions finds data and no record: refused, untouched */
    dpm_device_config_t region = f.cfg;
    region.ledger_size = region.outbox_offset = region.outbox_size = 0;
    region.region_size = REGION;
    refused_keeping_storage(&f, &region, DPM_ERR_CORRUPT, "region holds data but no valid layout record");
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    assert_int_equal(pending(&f), 1);
}

/* ---- receipts -------------------------------------------------------------------------------------- */

/* The random source and the report are as they were: nothing drawn, nothing written. */
static void assert_nothing_made(const dpm_rand_t *r, const dpm_rand_t *r0, const dpm_report_t *rep,
                                const dpm_report_t *rep0)
{
    assert_memory_equal(r, r0, sizeof(*r));
    assert_memory_equal(rep, rep0, sizeof(*rep));
}

static void test_receipts_buy_exactly_one_report(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r, r0;
    assert_int_equal(test_rand_init(&r, &t, &rng, 9), DPM_OK);
    dpm_mech_t m, other, cheaper;
    dpm_campaign_t c = tuple_campaign(10, "1", "1");
    assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
    c = tuple_campaign(10, "0.5", "1"); /* the same campaign id, another ε */
    assert_int_equal(dpm_mech_init(&cheaper, &c, NULL), DPM_OK);
    c = tuple_campaign(11, "1", "1");
    assert_int_equal(dpm_mech_init(&other, &c, NULL), DPM_OK);
    const dpm_ratio_t v = {3, 5};
    dpm_report_t rep, keep;
    memset(&rep, 0x11, sizeof(rep));
    keep = rep;
    dpm_receipt_issuer_t iss;
    memset(&iss, 0, sizeof(iss));
    dpm_receipt_t rc, forged;

    /* Forged: bytes written by hand match no outstanding receipt, whatever they are. */
    memset(&forged, 0, sizeof(forged));
    r0 = r;
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss, &forged, 0, &v, &rep), DPM_ERR_PARAM);
    assert_string_equal(dpm_receipt_problem(&m, &iss, &forged),
                        "receipt not issued by this issuer, or already used (one charge buys one "
                        "report)");
    assert_nothing_made(&r, &r0, &rep, &keep);
    assert_int_equal(dpm_receipt_unmetered(&iss, &m, 4, &rc), DPM_OK);
    /* the real receipt's bytes with any one bit changed (its period, its sequence number...) */
    for (size_t i = 0; i < sizeof(forged) * 8; i++) {
        forged = rc;
        ((uint8_t *)&forged)[i / 8] ^= (uint8_t)(1u << (i % 8));
        assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss, &forged, 0, &v, &rep), DPM_ERR_PARAM);
    }
    /* the real receipt's bytes, shown to another issuer, which issued nothing */
    dpm_receipt_issuer_t stranger;
    memset(&stranger, 0, sizeof(stranger));
    forged = rc;
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &stranger, &forged, 0, &v, &rep),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, NULL, &rc, 0, &v, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss, NULL, 0, &v, &rep), DPM_ERR_PARAM);
    assert_nothing_made(&r, &r0, &rep, &keep);

    /* Another campaign's receipt, or one for another ε under the same campaign id. */
    dpm_receipt_t wrong;
    dpm_receipt_issuer_t iss2;
    memset(&iss2, 0, sizeof(iss2));
    assert_int_equal(dpm_receipt_unmetered(&iss2, &other, 4, &wrong), DPM_OK);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss2, &wrong, 0, &v, &rep), DPM_ERR_PARAM);
    assert_string_equal(dpm_receipt_problem(&m, &iss2, &wrong), "receipt for another campaign");
    assert_int_equal(dpm_receipt_unmetered(&iss2, &cheaper, 4, &wrong), DPM_OK);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss2, &wrong, 0, &v, &rep), DPM_ERR_PARAM);
    assert_string_equal(dpm_receipt_problem(&m, &iss2, &wrong),
                        "receipt for other mechanism parameters or another epsilon");
    assert_nothing_made(&r, &r0, &rep, &keep);

    /* A failure leaves the receipt outstanding; success uses it up, for the receipt's period. */
    assert_null(dpm_receipt_problem(&m, &iss, &rc));
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss, &rc, 9, &v, &rep), DPM_ERR_PARAM);
    assert_null(dpm_receipt_problem(&m, &iss, &rc));
    dpm_receipt_t copy = rc;
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss, &rc, 0, &v, &rep), DPM_OK);
    assert_int_equal(rep.period, 4);
    assert_int_equal(rep.campaign_id, 10);

    /* Reused: the receipt again, or a copy made before it was used, buys nothing. */
    keep = rep;
    r0 = r;
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss, &rc, 0, &v, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss, &copy, 0, &v, &rep), DPM_ERR_PARAM);
    assert_string_equal(dpm_receipt_problem(&m, &iss, &copy),
                        "receipt not issued by this issuer, or already used (one charge buys one "
                        "report)");
    assert_nothing_made(&r, &r0, &rep, &keep);

    /* Superseded: an issuer holds one receipt outstanding; the next retires the one before. */
    dpm_receipt_t first, second;
    assert_int_equal(dpm_receipt_unmetered(&iss, &m, 5, &first), DPM_OK);
    assert_int_equal(dpm_receipt_unmetered(&iss, &m, 5, &second), DPM_OK);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss, &first, 0, &v, &rep), DPM_ERR_PARAM);
    assert_nothing_made(&r, &r0, &rep, &keep);
    assert_int_equal(dpm_mech_report_tuple(&m, &r, &iss, &second, 0, &v, &rep), DPM_OK);
    assert_int_equal(dpm_receipt_unmetered(NULL, &m, 0, &rc), DPM_ERR_PARAM);
    assert_int_equal(dpm_receipt_unmetered(&iss, NULL, 0, &rc), DPM_ERR_PARAM);
    assert_string_equal(dpm_receipt_problem(NULL, &iss, &rc),
                        "no mechanism, issuer or receipt (NULL)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_refuses_with_its_reason),
        cmocka_unit_test(test_eps_below_the_floor_is_refused),
        cmocka_unit_test(test_policy_caps_campaigns_from_the_network),
        cmocka_unit_test(test_report_tuple_queues_one_charged_report),
        cmocka_unit_test(test_failures_before_the_charge_spend_nothing),
        cmocka_unit_test(test_full_outbox_spends_nothing),
        cmocka_unit_test(test_rng_failure_before_and_after_the_charge),
        cmocka_unit_test(test_corrupt_ledger_refuses_every_report),
        cmocka_unit_test(test_anchored_ledger_fails_closed_when_erased),
        cmocka_unit_test(test_roc_hist_report),
        cmocka_unit_test(test_receipts_buy_exactly_one_report),
        cmocka_unit_test(test_storage_layout_of_one_region),
        cmocka_unit_test(test_storage_layout_survives_reboots),
        cmocka_unit_test(test_storage_layout_torn_first_init),
        cmocka_unit_test(test_storage_explicit_regions_of_0_1_0),
        cmocka_unit_test(test_collector_answering_other_campaigns),
        cmocka_unit_test(test_device_period_follows_the_clock),
        cmocka_unit_test(test_full_ledger_says_so),
        cmocka_unit_test(test_erased_outbox_is_counted),
        cmocka_unit_test(test_new_kinds_queue_one_charged_report),
        cmocka_unit_test(test_new_kinds_refuse_before_the_charge),
    };
    return cmocka_run_group_tests_name("device", tests, NULL, NULL);
}
