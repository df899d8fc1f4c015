/* SPDX-License-Identifier: Apache-2.0 */
/* Bad arguments to every device call (dpm/device.h): a device that was never opened, each NULL
 * pointer, a mechanism of another kind, storage regions that overlap or do not fit, an anchor
 * the regions' erase could destroy. Each is refused with DPM_ERR_PARAM and its reason, naming
 * the argument (dpm_device_why), and the device (but its reason), the outputs and the storage
 * stay as they were (no write, no erase). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "dpm/expert/outbox.h"
#include "dpm/expert/budget.h"
#include "fake_storage.h"
#include "test_rng.h"

#define REGION 8192u

typedef struct {
    uint8_t mem[REGION], anchor_mem[64];
    fake_storage_t fs, anchor_fs;
    test_rng_t t;
    dpm_device_config_t cfg;
    dpm_device_t dev;
    dpm_mech_t tuple, roc;
} fixture_t;

static uint64_t now_ms(void *ctx)
{
    (void)ctx;
    return 0;
}

static void fixture_config(fixture_t *f)
{
    memset(f, 0, sizeof(*f));
    fake_storage_init(&f->fs, f->mem, REGION, 1);
    fake_storage_init(&f->anchor_fs, f->anchor_mem, sizeof(f->anchor_mem), 1);
    test_rng_seed(&f->t, 11);
    f->cfg.rng = test_rng_port(&f->t);
    /* member by member into the zeroed config: a whole dpm_storage_t returned by value may
     * carry undefined padding, which the device would copy and memcmp below would read */
    dpm_storage_t port = fake_storage_port(&f->fs);
    f->cfg.storage.read = port.read;
    f->cfg.storage.write = port.write;
    f->cfg.storage.erase = port.erase;
    f->cfg.storage.size = port.size;
    f->cfg.storage.ctx = port.ctx;
    f->cfg.region_size = REGION;
    f->cfg.policy.defaults.max_eps = DPM_EPS(1);
    f->cfg.policy.defaults.max_budget = DPM_EPS(2);
}

static dpm_campaign_t campaign(uint32_t id, dpm_mech_id_t mech)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = id;
    c.mechanism = mech;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(1);
    if (mech == DPM_MECH_ID_TUPLE_MR) {
        c.groups = 2;
        c.nmetrics = 1;
        c.metrics[0] = DPM_METRIC_TPR;
    } else {
        c.nbins = 3;
        for (uint32_t i = 0; i < 3; i++) {
            c.bin_edges[i] = (uint32_t)(((uint64_t)(i + 1) << 31) / 4);
        }
    }
    return c;
}

static void fixture_open(fixture_t *f)
{
    fixture_config(f);
    assert_int_equal(dpm_device_init(&f->dev, &f->cfg), DPM_OK);
    dpm_campaign_t c = campaign(1, DPM_MECH_ID_TUPLE_MR);
    assert_int_equal(dpm_device_accept_mech(&f->dev, &c, &f->tuple, NULL), DPM_OK);
    c = campaign(2, DPM_MECH_ID_ROC_HIST);
    assert_int_equal(dpm_device_accept_mech(&f->dev, &c, &f->roc, NULL), DPM_OK);
}

/* *a and *b are equal but for their reason (the first member). */
static void same_but_why(const dpm_device_t *a, const dpm_device_t *b)
{
    assert_memory_equal((const uint8_t *)a + sizeof(a->why), (const uint8_t *)b + sizeof(b->why),
                        sizeof(*a) - sizeof(a->why));
}

/* init with cfg: refused with exactly `why`, *d untouched but its reason, storage never
 * written */
static void refused_init(fixture_t *f, const dpm_device_config_t *cfg, const char *what,
                         const char *why)
{
    static dpm_device_t d, keep;
    memset(&d, 0x5A, sizeof(d));
    keep = d;
    uint64_t ops = f->fs.ops + f->anchor_fs.ops;
    print_message("# refused: %s\n", what);
    assert_int_equal(dpm_device_init(&d, cfg), DPM_ERR_PARAM);
    assert_string_equal(dpm_device_why(&d), why);
    same_but_why(&d, &keep);
    assert_true(f->fs.ops + f->anchor_fs.ops == ops);
}

/* call refused with DPM_ERR_PARAM and exactly `why` on device d */
#define REFUSED(d, call, text)                                                                     \
    do {                                                                                           \
        assert_int_equal((call), DPM_ERR_PARAM);                                                   \
        assert_string_equal(dpm_device_why(d), (text));                                            \
    } while (0)

#define STORAGE_WHY "storage lacks read, write or erase"
#define NOT_OPENED "device NULL or not opened"
#define ANCHOR_IN "ledger_anchor: inside the device's storage region"

static void test_init_refuses_storage_that_cannot_work(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    dpm_device_config_t c = f.cfg;
    c.storage.read = NULL;
    refused_init(&f, &c, "storage without read", STORAGE_WHY);
    c = f.cfg;
    c.storage.write = NULL;
    refused_init(&f, &c, "storage without write", STORAGE_WHY);
    c = f.cfg;
    c.storage.erase = NULL;
    refused_init(&f, &c, "storage without erase", STORAGE_WHY);
    c = f.cfg;
    c.region_size = DPM_DEVICE_MIN_REGION(0) - 1;
    const char *small = NULL;
    dpm_storage_layout_t lay;
    assert_int_equal(dpm_storage_layout(c.region_size, 0, &lay, &small), DPM_ERR_PARAM);
    refused_init(&f, &c, "region below the build's smallest", small);
    c = f.cfg;
    c.region_offset = REGION / 2;
    refused_init(&f, &c, "region past the end of storage",
                 "region beyond storage.size (region_offset + region_size)");
    c = f.cfg;
    c.upload.host = "collector"; /* an upload without a clock */
    c.upload.path = "/v1/reports";
    c.upload.max_reports = 1;
    c.upload.max_bytes = 1024;
    c.upload.timeout_ms = 1000;
    c.upload.backoff_base_ms = 1;
    c.upload.backoff_cap_ms = 1;
    refused_init(&f, &c, "upload without a clock", "upload needs clock.monotonic_ms");
    c.clock.monotonic_ms = now_ms; /* positive control: the same config with a clock opens */
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_OK);
}

static void test_init_refuses_an_anchor_the_regions_can_destroy(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    dpm_device_config_t c = f.cfg;
    c.ledger_anchor = fake_storage_port(&f.anchor_fs);
    c.ledger_anchor.write = NULL;
    refused_init(&f, &c, "anchor without write", "ledger_anchor: storage without write or erase");
    c.ledger_anchor = fake_storage_port(&f.anchor_fs);
    c.ledger_anchor_offset = sizeof(f.anchor_mem) - DPM_LEDGER_ANCHOR_BYTES + 1;
    refused_init(&f, &c, "anchor past the end of its storage",
                 "ledger_anchor: offset outside its storage");
    c = f.cfg;
    c.ledger_anchor = c.storage; /* on the region's own storage: must lie outside it */
    c.ledger_anchor_offset = 4; /* the layout record */
    refused_init(&f, &c, "anchor overlapping the layout record", ANCHOR_IN);
    c.ledger_anchor_offset = REGION - DPM_LEDGER_ANCHOR_BYTES;
    refused_init(&f, &c, "anchor inside the outbox", ANCHOR_IN);
    /* positive controls: outside the region of shared storage, and on storage of its own */
    c.region_size = REGION - 1024; /* whole sectors, the anchor after them */
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_OK);
    c = f.cfg;
    c.region_size = REGION - 1024; /* as laid out just now: a region keeps its size */
    c.ledger_anchor = fake_storage_port(&f.anchor_fs);
    c.ledger_anchor_offset = 0; /* where the ledger starts, but on other storage: fine */
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_OK);
    /* the outbox's anchor: the same rules, and not on the ledger's anchor */
    static dpm_storage_t oa;
    oa = fake_storage_port(&f.anchor_fs);
    c.outbox_anchor = &oa;
    c.outbox_anchor_offset = 4;
    refused_init(&f, &c, "two anchors overlapping", "ledger_anchor and outbox_anchor overlap");
    c.outbox_anchor_offset = sizeof(f.anchor_mem) - 4;
    refused_init(&f, &c, "outbox anchor past the end of its storage",
                 "outbox_anchor: offset outside its storage");
    oa.erase = NULL;
    c.outbox_anchor_offset = 8;
    refused_init(&f, &c, "outbox anchor without erase",
                 "outbox_anchor: storage without write or erase");
    oa.read = NULL;
    refused_init(&f, &c, "outbox anchor without read", "outbox_anchor: storage without read");
    oa = fake_storage_port(&f.anchor_fs);
    assert_int_equal(dpm_device_init(&f.dev, &c), DPM_OK); /* positive control */
}

/* A device that was never opened (all zero, or garbage) refuses every call. */
static void test_unopened_device_refuses_everything(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_open(&f);
    static dpm_device_t closed[2];
    memset(&closed[0], 0, sizeof(closed[0]));
    memset(&closed[1], 0xA5, sizeof(closed[1]));
    const dpm_confusion_t conf = {1, 1, 1, 1};
    dpm_score_hist_t h;
    memset(&h, 0, sizeof(h));
    dpm_ustat_example_t ex = {0, 1, 0};
    dpm_dpauc_counts_t counts;
    memset(&counts, 0, sizeof(counts));
    dpm_fedauc_session_t s;
    memset(&s, 0, sizeof(s));
    dpm_memo_t memo;
    uint8_t buf[64] = {0}, labels[1] = {0};
    size_t len = 0;
    dpm_report_info_t info;
    dpm_upload_result_t res;
    const char *why = NULL;
    for (int i = 0; i < 2; i++) {
        dpm_device_t *d = &closed[i];
        static dpm_device_t keep;
        keep = *d;
        assert_int_equal(dpm_device_accept_mech(d, &f.tuple.campaign, &f.tuple, &why),
                         DPM_ERR_PARAM);
        assert_string_equal(why, NOT_OPENED);
        assert_string_equal(dpm_device_why(d), NOT_OPENED);
        assert_int_equal(dpm_device_accept_campaign(d, buf, 1, &f.tuple, NULL), DPM_ERR_PARAM);
        assert_int_equal(dpm_device_report_tuple(d, &f.tuple, 0, 0, &conf, &info), DPM_ERR_PARAM);
        assert_int_equal(dpm_device_report_roc_hist(d, &f.roc, 0, &h, &info), DPM_ERR_PARAM);
        assert_int_equal(dpm_device_report_roc_hist_group(d, &f.roc, 0, 0, &h, &info),
                         DPM_ERR_PARAM);
        assert_int_equal(dpm_device_report_dpauc(d, &f.roc, 0, &counts, &info), DPM_ERR_PARAM);
        assert_int_equal(dpm_device_report_ustat_bins(d, &f.roc, 0, &ex, &info), DPM_ERR_PARAM);
        assert_int_equal(dpm_device_report_ustat_tree(d, &f.roc, 0, &ex, &info), DPM_ERR_PARAM);
        assert_int_equal(
            dpm_device_fedauc_upload(d, &f.roc, NULL, 0, NULL, &s, buf, sizeof(buf), &len),
            DPM_ERR_PARAM);
        assert_int_equal(
            dpm_device_report_fedauc(d, &f.roc, 0, &s, buf, 1, labels, NULL, NULL, &info),
            DPM_ERR_PARAM);
        assert_int_equal(dpm_device_memo_open(d, 0, 512, &memo), DPM_ERR_PARAM);
        assert_int_equal(dpm_device_flush(d, NULL, buf, sizeof(buf), &res), DPM_ERR_PARAM);
        assert_string_equal(dpm_device_why(d), NOT_OPENED);
        assert_null(dpm_device_outbox(d));
        assert_null(dpm_device_ledger(d));
        same_but_why(d, &keep);
    }
    assert_null(dpm_device_outbox(NULL));
    assert_null(dpm_device_ledger(NULL));
}

/* An opened device: each NULL pointer and each call with a mechanism of another kind. */
static void test_null_and_wrong_kind_refused_untouched(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_open(&f);
    const dpm_confusion_t conf = {1, 1, 1, 1};
    dpm_score_hist_t h;
    memset(&h, 0, sizeof(h));
    dpm_ustat_example_t ex = {0, 1, 0};
    dpm_dpauc_counts_t counts;
    memset(&counts, 0, sizeof(counts));
    dpm_fedauc_session_t s;
    memset(&s, 0, sizeof(s));
    uint8_t buf[64] = {0}, labels[1] = {0};
    size_t len = 0;
    dpm_report_info_t info;
    memset(&info, 0x77, sizeof(info));
    const dpm_report_info_t info_keep = info;
    dpm_upload_result_t res;
    dpm_mech_t m;
    const char *why = NULL;
    dpm_device_t *d = &f.dev;
    static dpm_device_t keep;
    keep = *d;
    uint64_t ops = f.fs.ops;

    REFUSED(d, dpm_device_accept_mech(d, NULL, &m, &why), "no campaign or no mechanism (NULL)");
    assert_string_equal(why, "no campaign or no mechanism (NULL)");
    REFUSED(d, dpm_device_accept_mech(d, &f.tuple.campaign, NULL, &why),
            "no campaign or no mechanism (NULL)");
    REFUSED(d, dpm_device_accept_campaign(d, NULL, 1, &m, &why),
            "no campaign bytes or no mechanism (NULL)");
    REFUSED(d, dpm_device_accept_campaign(d, buf, 1, NULL, &why),
            "no campaign bytes or no mechanism (NULL)");

    REFUSED(d, dpm_device_report_tuple(d, NULL, 0, 0, &conf, &info),
            "no mechanism or no confusion counts (NULL)");
    REFUSED(d, dpm_device_report_tuple(d, &f.tuple, 0, 0, NULL, &info),
            "no mechanism or no confusion counts (NULL)");
    REFUSED(d, dpm_device_report_tuple(d, &f.roc, 0, 0, &conf, &info),
            "not a tuple campaign: use its kind's report call");
    REFUSED(d, dpm_device_report_tuple(d, &f.tuple, 0, 2, &conf, &info),
            "group >= the campaign's groups");

    REFUSED(d, dpm_device_report_roc_hist(d, NULL, 0, &h, &info),
            "no mechanism or no histogram (NULL)");
    REFUSED(d, dpm_device_report_roc_hist(d, &f.roc, 0, NULL, &info),
            "no mechanism or no histogram (NULL)");
    REFUSED(d, dpm_device_report_roc_hist(d, &f.tuple, 0, &h, &info),
            "not a roc_hist campaign: use its kind's report call");
    REFUSED(d, dpm_device_report_roc_hist(d, &f.roc, 0, &h, &info),
            "histogram bins differ from the campaign's");
    assert_int_equal(dpm_score_hist_init(&h, dpm_mech_score_bins(&f.roc)), DPM_OK);
    /* a roc_hist campaign without groups takes no group */
    REFUSED(d, dpm_device_report_roc_hist_group(d, &f.roc, 0, 0, &h, &info),
            "campaign without groups: use dpm_device_report_roc_hist");
    h.neg[1] = DPM_SCORE_HIST_MAX_COUNT + 1;
    REFUSED(d, dpm_device_report_roc_hist(d, &f.roc, 0, &h, &info),
            "histogram count above DPM_SCORE_HIST_MAX_COUNT");

    REFUSED(d, dpm_device_report_dpauc(d, NULL, 0, &counts, &info),
            "no mechanism or no counts (NULL)");
    REFUSED(d, dpm_device_report_dpauc(d, &f.roc, 0, NULL, &info),
            "no mechanism or no counts (NULL)");
    REFUSED(d, dpm_device_report_dpauc(d, &f.roc, 0, &counts, &info),
            "not a dpauc campaign: use its kind's report call");

    REFUSED(d, dpm_device_report_ustat_bins(d, NULL, 0, &ex, &info),
            "no mechanism or no example (NULL)");
    REFUSED(d, dpm_device_report_ustat_bins(d, &f.roc, 0, NULL, &info),
            "no mechanism or no example (NULL)");
    REFUSED(d, dpm_device_report_ustat_bins(d, &f.roc, 0, &ex, &info),
            "not a ustat_bins campaign: use its kind's report call");
    REFUSED(d, dpm_device_report_ustat_tree(d, &f.roc, 0, &ex, &info),
            "not a ustat_tree campaign: use its kind's report call");

    REFUSED(d, dpm_device_fedauc_upload(d, NULL, NULL, 0, NULL, &s, buf, sizeof(buf), &len),
            "no mechanism, session, output or length (NULL)");
    REFUSED(d, dpm_device_fedauc_upload(d, &f.roc, NULL, 0, NULL, &s, buf, sizeof(buf), &len),
            "not a FedAUC campaign");
    REFUSED(d, dpm_device_report_fedauc(d, NULL, 0, &s, buf, 1, labels, NULL, NULL, &info),
            "no mechanism, session, reply or labels (NULL)");
    REFUSED(d, dpm_device_report_fedauc(d, &f.tuple, 0, &s, buf, 1, labels, NULL, NULL, &info),
            "not a FedAUC campaign");

    REFUSED(d, dpm_device_flush(d, NULL, buf, sizeof(buf), &res),
            "no upload config (dpm_device_config_t.upload)");

    assert_memory_equal(&info, &info_keep, sizeof(info));
    same_but_why(d, &keep);
    assert_true(f.fs.ops == ops);
    assert_int_equal(dpm_outbox_pending(dpm_device_outbox(d)), 0);
}

/* The memo region must not overlap the layout (record, ledger, outbox) or an anchor on the same
 * storage. */
static void test_memo_region_must_not_overlap(void **state)
{
    (void)state;
    static fixture_t f;
    fixture_config(&f);
    f.cfg.region_size = REGION - 1024; /* room for a memo and an anchor at the end */
    f.cfg.ledger_anchor = f.cfg.storage;
    f.cfg.ledger_anchor_offset = REGION - DPM_LEDGER_ANCHOR_BYTES;
    assert_int_equal(dpm_device_init(&f.dev, &f.cfg), DPM_OK);
    dpm_memo_t memo;
    memset(&memo, 0x3C, sizeof(memo));
    const dpm_memo_t keep = memo;
    const uint32_t free0 = REGION - 1024, memo_size = DPM_MEMO_MIN_REGION;
    REFUSED(&f.dev, dpm_device_memo_open(&f.dev, 0, memo_size, &memo),
            "memo region overlaps the device's storage layout or an anchor"); /* its record */
    assert_int_equal(dpm_device_memo_open(&f.dev, free0 - 8, memo_size, &memo), DPM_ERR_PARAM);
    assert_int_equal(dpm_device_memo_open(&f.dev, REGION - memo_size, memo_size, &memo),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_device_memo_open(&f.dev, free0, memo_size, NULL), DPM_ERR_PARAM);
    assert_memory_equal(&memo, &keep, sizeof(memo));
    /* positive control: the free space between the outbox and the anchor */
    assert_true(free0 + memo_size <= REGION - DPM_LEDGER_ANCHOR_BYTES);
    assert_int_equal(dpm_device_memo_open(&f.dev, free0, memo_size, &memo), DPM_OK);
    assert_int_equal(memo.opened, DPM_MEMO_OPENED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_refuses_storage_that_cannot_work),
        cmocka_unit_test(test_init_refuses_an_anchor_the_regions_can_destroy),
        cmocka_unit_test(test_unopened_device_refuses_everything),
        cmocka_unit_test(test_null_and_wrong_kind_refused_untouched),
        cmocka_unit_test(test_memo_region_must_not_overlap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
