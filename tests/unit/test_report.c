/* SPDX-License-Identifier: Apache-2.0 */
/* Reports and campaigns: encoding round trips, sizes, campaign validation, fingerprint checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/report.h"
#include "dpm/expert/mech.h"
#include "report/report_internal.h"
#include "test_receipt.h"
#include "test_rng.h"

static dpm_campaign_t tuple_campaign(dpm_mech_id_t mech, uint32_t nmetrics)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 7;
    c.mechanism = mech;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(4);
    c.period_seconds = 86400;
    c.groups = 2;
    c.nmetrics = nmetrics;
    const dpm_metric_t order[] = {DPM_METRIC_TPR, DPM_METRIC_FPR, DPM_METRIC_ACCURACY,
                                  DPM_METRIC_PRECISION};
    memcpy(c.metrics, order, nmetrics * sizeof(order[0]));
    c.frac_bits = DPM_FRAC_BITS;
    return c;
}

static void test_report_roundtrip_and_size(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 5), DPM_OK);
    const dpm_ratio_t values[4] = {{3, 4}, {1, 10}, {7, 9}, {2, 2}};
    for (int mech = DPM_MECH_ID_TUPLE_MR; mech <= DPM_MECH_ID_TUPLE_ML; mech++) {
        for (uint32_t m = 1; m <= 4; m++) {
            dpm_campaign_t c = tuple_campaign((dpm_mech_id_t)mech, m);
            dpm_mech_t mc;
            assert_int_equal(dpm_mech_init(&mc, &c, NULL), DPM_OK);
            dpm_report_t rep, back;
            assert_int_equal(dpm_mech_report_tuple(&mc, &r, TEST_RECEIPT(&mc, 3), 1, values, &rep),
                             DPM_OK);
            uint8_t buf[DPM_REPORT_MAX_BYTES];
            size_t len = 0;
            assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
            if (mech == DPM_MECH_ID_TUPLE_MR && m == 1) {
                assert_true(len <= 40); /* the size target for tuple_mr */
            }
            assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
            assert_memory_equal(back.report_id, rep.report_id, DPM_REPORT_ID_BYTES);
            assert_int_equal(back.campaign_id, 7);
            assert_int_equal(back.period, 3);
            assert_int_equal(back.mechanism, mech);
            assert_int_equal(back.eps, mc.eps_implemented);
            assert_int_equal(back.params_hash, mc.params_hash);
            assert_int_equal(back.body.tuple.group, rep.body.tuple.group);
            assert_int_equal(back.body.tuple.nmetrics, m);
            assert_memory_equal(back.body.tuple.value, rep.body.tuple.value, m * sizeof(int32_t));
            assert_int_equal(dpm_mech_check_report(&mc, &back, NULL), DPM_OK);
            /* too small a buffer is an error, not a truncation */
            assert_int_equal(dpm_report_encode(&rep, buf, len - 1, &len), DPM_ERR_BUFFER);
        }
    }
}

static void test_report_ids_are_fresh(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 6), DPM_OK);
    dpm_campaign_t c = tuple_campaign(DPM_MECH_ID_TUPLE_MR, 1);
    dpm_mech_t mc;
    assert_int_equal(dpm_mech_init(&mc, &c, NULL), DPM_OK);
    const dpm_ratio_t v = {1, 2};
    dpm_report_t a, b;
    assert_int_equal(dpm_mech_report_tuple(&mc, &r, TEST_RECEIPT(&mc, 0), 0, &v, &a), DPM_OK);
    assert_int_equal(dpm_mech_report_tuple(&mc, &r, TEST_RECEIPT(&mc, 0), 0, &v, &b), DPM_OK);
    assert_memory_not_equal(a.report_id, b.report_id, DPM_REPORT_ID_BYTES);
}

static void test_campaign_roundtrip(void **state)
{
    (void)state;
    dpm_campaign_t c = tuple_campaign(DPM_MECH_ID_TUPLE_ML, 2), back;
    c.nbins = 3;
    c.bin_edges[0] = 10;
    c.bin_edges[1] = 20;
    c.bin_edges[2] = 1u << 31;
    uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), &len), DPM_OK);
    const char *why = NULL;
    assert_int_equal(dpm_campaign_decode(buf, len, &back, &why), DPM_OK);
    assert_memory_equal(&back, &c, sizeof(c));
    /* garbage and truncation are protocol errors with a reason; output untouched */
    dpm_campaign_t keep = back;
    assert_int_equal(dpm_campaign_decode(buf, len - 1, &back, &why), DPM_ERR_PROTOCOL);
    assert_non_null(why);
    const uint8_t garbage[] = {0xFF, 0xFF, 0xFF, 0x01, 0x02};
    assert_int_equal(dpm_campaign_decode(garbage, sizeof(garbage), &back, &why), DPM_ERR_PROTOCOL);
    assert_memory_equal(&back, &keep, sizeof(c));
}

/* A Campaign with n bin edges, encoded by hand (field 8, packed uint32). */
static size_t campaign_with_edges(uint8_t *buf, uint32_t n)
{
    size_t p = 0;
    buf[p++] = 0x10; /* field 2 mechanism */
    buf[p++] = DPM_MECH_ID_TUPLE_MR;
    buf[p++] = 0x42;       /* field 8, length-delimited */
    buf[p++] = (uint8_t)n; /* n single-byte varints, n < 128 */
    for (uint32_t i = 0; i < n; i++) {
        buf[p++] = (uint8_t)(i + 1);
    }
    return p;
}

static void test_campaign_validation_reasons(void **state)
{
    (void)state;
    dpm_mech_t m, keep;
    memset(&m, 0x77, sizeof(m));
    keep = m;
    const char *why = NULL;
    dpm_campaign_t c = tuple_campaign(DPM_MECH_ID_TUPLE_MR, 1);

    c.eps = DPM_EPS_Q16(0);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "epsilon out of range");
    c.eps = DPM_EPS_Q16((DPM_EPS_MAX + 1u) << 16);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    c = tuple_campaign((dpm_mech_id_t)99, 1);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "unknown mechanism");
    /* a catalogue mechanism not built (yet): the first id that dpm_mech_init calls so */
    uint32_t unbuilt = 0;
    for (uint32_t id = DPM_MECH_ID_TUPLE_ML; id >= 1; id--) {
        c = tuple_campaign((dpm_mech_id_t)id, 1);
        if (dpm_mech_init(&m, &c, &why) == DPM_ERR_UNSUPPORTED) {
            /* named, with its switch: "fedauc_rr not in this build (DPM_MECH_FEDAUC=0)" */
            size_t n = strlen(dpm_mech_name((dpm_mech_id_t)id));
            assert_memory_equal(why, dpm_mech_name((dpm_mech_id_t)id), n);
            assert_non_null(strstr(why + n, " not in this build (DPM_MECH_"));
            unbuilt = id;
        }
    }
    print_message("# catalogue mechanism not in this build: %u\n", unbuilt);
    assert_true(unbuilt == 0 || unbuilt == DPM_MECH_ID_FEDAUC_RR ||
                unbuilt == DPM_MECH_ID_FEDAUC_LAP); /* the catalogue's last unbuilt ones */
    memset(&m, 0x77, sizeof(m));
    c = tuple_campaign(DPM_MECH_ID_TUPLE_MR, 1);
    c.nbins = 2;
    c.bin_edges[0] = 5;
    c.bin_edges[1] = 5;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "bin edges not strictly increasing");
    c = tuple_campaign(DPM_MECH_ID_TUPLE_MR, 1);
    c.budget = DPM_EPS_Q16(c.eps.q16 - 1000); /* smaller than one report */
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_BUDGET);
    assert_string_equal(why, "budget smaller than one report");
    c = tuple_campaign(DPM_MECH_ID_TUPLE_MR, 1);
    c.groups = DPM_MAX_GROUPS + 1;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    c = tuple_campaign(DPM_MECH_ID_TUPLE_ML, 1);
    c.frac_bits = DPM_FRAC_BITS + 1;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    c = tuple_campaign(DPM_MECH_ID_TUPLE_ML, 1);
    c.eps = DPM_EPS_Q16(65); /* 0.001: too small for the Q16 grid */
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_RANGE);
    assert_memory_equal(&m, &keep, sizeof(m)); /* nothing ran */

    /* too many bins cannot even be decoded (a campaign holds DPM_CAMPAIGN_MAX_EDGES) */
    uint8_t buf[400];
    dpm_campaign_t d;
    size_t len = campaign_with_edges(buf, DPM_CAMPAIGN_MAX_EDGES);
    assert_int_equal(dpm_campaign_decode(buf, len, &d, &why), DPM_OK);
    assert_int_equal(d.nbins, DPM_CAMPAIGN_MAX_EDGES);
    memset(&d, 0x5A, sizeof(d));
    dpm_campaign_t keep_d = d;
    len = campaign_with_edges(buf, DPM_CAMPAIGN_MAX_EDGES + 1);
    assert_int_equal(dpm_campaign_decode(buf, len, &d, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "too many bins");
    assert_memory_equal(&d, &keep_d, sizeof(d));
}

/* One name per wire id, built or not, and back (the campaign files' and dpm.proto's names). */
static void test_mech_names(void **state)
{
    (void)state;
    static const char *const want[] = {NULL,         "roc_hist",   "dpauc",
                                       "fedauc_rr",  "fedauc_lap", "ustat_bins",
                                       "ustat_tree", "tuple_mr",   "tuple_ml"};
    for (uint32_t id = 0; id < sizeof(want) / sizeof(want[0]); id++) {
        const char *name = dpm_mech_name((dpm_mech_id_t)id);
        if (want[id] == NULL) {
            assert_null(name);
            continue;
        }
        assert_string_equal(name, want[id]);
        assert_int_equal(dpm_mech_from_name(name), id);
    }
    assert_null(dpm_mech_name((dpm_mech_id_t)9));
    assert_null(dpm_mech_name((dpm_mech_id_t)-1));
    assert_int_equal(dpm_mech_from_name(NULL), DPM_MECH_NONE);
    assert_int_equal(dpm_mech_from_name(""), DPM_MECH_NONE);
    assert_int_equal(dpm_mech_from_name("ROC_HIST"), DPM_MECH_NONE); /* exact: lower case */
    assert_int_equal(dpm_mech_from_name("tuple"), DPM_MECH_NONE);
}

static void test_check_report_catches_every_mismatch(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 8), DPM_OK);
    dpm_campaign_t c = tuple_campaign(DPM_MECH_ID_TUPLE_MR, 2);
    dpm_mech_t mc;
    assert_int_equal(dpm_mech_init(&mc, &c, NULL), DPM_OK);
    const dpm_ratio_t v[2] = {{1, 2}, {1, 3}};
    dpm_report_t good, bad;
    assert_int_equal(dpm_mech_report_tuple(&mc, &r, TEST_RECEIPT(&mc, 0), 1, v, &good), DPM_OK);
    const char *why = NULL;
    assert_int_equal(dpm_mech_check_report(&mc, &good, &why), DPM_OK);
    bad = good;
    bad.campaign_id++;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "campaign mismatch");
    bad = good;
    bad.mechanism = DPM_MECH_ID_TUPLE_ML;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    bad = good;
    bad.eps++;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "epsilon mismatch");
    bad = good;
    bad.params_hash ^= 1;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "parameter fingerprint mismatch");
    bad = good;
    bad.body.tuple.group = 2;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    bad = good;
    bad.body.tuple.value[1] = 3;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    bad = good;
    bad.body.tuple.nmetrics = 1;
    assert_int_equal(dpm_mech_check_report(&mc, &bad, &why), DPM_ERR_PROTOCOL);
    /* a campaign with other parameters has another fingerprint */
    dpm_campaign_t c2 = c;
    c2.eps = DPM_EPS(2);
    dpm_mech_t mc2;
    assert_int_equal(dpm_mech_init(&mc2, &c2, NULL), DPM_OK);
    assert_int_not_equal(mc2.params_hash, mc.params_hash);
}

static void test_report_decode_rejects_malformed(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 9), DPM_OK);
    dpm_campaign_t c = tuple_campaign(DPM_MECH_ID_TUPLE_ML, 1);
    dpm_mech_t mc;
    assert_int_equal(dpm_mech_init(&mc, &c, NULL), DPM_OK);
    const dpm_ratio_t v = {1, 2};
    dpm_report_t rep, out;
    assert_int_equal(dpm_mech_report_tuple(&mc, &r, TEST_RECEIPT(&mc, 0), 0, &v, &rep), DPM_OK);
    uint8_t buf[DPM_REPORT_MAX_BYTES];
    size_t len;
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
    memset(&out, 0x11, sizeof(out));
    dpm_report_t keep = out;
    for (size_t cut = 0; cut < len; cut++) { /* every truncation */
        dpm_status_t st = dpm_report_decode(buf, cut, &out);
        assert_true(st == DPM_ERR_PROTOCOL);
    }
    assert_memory_equal(&out, &keep, sizeof(out));
    /* a report id of the wrong length */
    uint8_t short_id[] = {0x0A, 0x03, 1, 2, 3, 0x52, 0x02, 0x08, 0x01};
    assert_int_equal(dpm_report_decode(short_id, sizeof(short_id), &out), DPM_ERR_PROTOCOL);
    /* a report without a body */
    uint8_t no_body[18] = {0x0A, 0x10};
    assert_int_equal(dpm_report_decode(no_body, sizeof(no_body), &out), DPM_ERR_PROTOCOL);
}

/* One hand-made report of each body kind (values arbitrary but encodable). */
static dpm_report_t report_of(dpm_mech_id_t mech)
{
    dpm_report_t r;
    memset(&r, 0, sizeof(r));
    memset(r.report_id, 0x5A, sizeof(r.report_id));
    r.campaign_id = 300;
    r.period = 2;
    r.mechanism = mech;
    r.eps = 65536;
    r.params_hash = 0xC0FFEEu;
    switch (mech) {
    case DPM_MECH_ID_TUPLE_MR:
    case DPM_MECH_ID_TUPLE_ML:
        r.body.tuple.group = 1;
        r.body.tuple.nmetrics = 2;
        r.body.tuple.value[0] = -1;
        r.body.tuple.value[1] = 1000;
        break;
    case DPM_MECH_ID_ROC_HIST:
        r.body.roc_hist.bins = 3;
        r.body.roc_hist.pos[0] = -7;
        r.body.roc_hist.neg[2] = 9;
        break;
    case DPM_MECH_ID_DPAUC:
        r.body.dpauc.n = 2;
        r.body.dpauc.tp[0] = 3;
        r.body.dpauc.fn[1] = -4;
        break;
    case DPM_MECH_ID_USTAT_BINS:
        r.body.ustat_bins.value = 3;
        r.body.ustat_bins.label = 1;
        break;
    case DPM_MECH_ID_USTAT_TREE:
        r.body.ustat_tree.level = 3;
        r.body.ustat_tree.row = 5;
        r.body.ustat_tree.value = 1;
        break;
    case DPM_MECH_ID_FEDAUC_RR:
    case DPM_MECH_ID_FEDAUC_LAP:
        memset(r.body.fedauc.upload_token, 0x33, sizeof(r.body.fedauc.upload_token));
        r.body.fedauc.n = 10;
        r.body.fedauc.total = 400;
        r.body.fedauc.local_p = -2;
        r.body.fedauc.sum_rank2 = 1u << 20;
        break;
    default: break;
    }
    return r;
}

/* Each kind's entry (the device's path) writes dpm_report_encode's bytes for its own kind and
 * refuses every other kind without writing. */
static void test_report_encode_per_kind(void **state)
{
    (void)state;
    typedef dpm_status_t (*encode_fn)(const dpm_report_t *, uint8_t *, size_t, size_t *);
    static const struct {
        encode_fn encode;
        dpm_mech_id_t kinds[2];
    } entries[] = {
        {dpm_report_encode_tuple, {DPM_MECH_ID_TUPLE_MR, DPM_MECH_ID_TUPLE_ML}},
        {dpm_report_encode_roc_hist, {DPM_MECH_ID_ROC_HIST, DPM_MECH_ID_ROC_HIST}},
        {dpm_report_encode_dpauc, {DPM_MECH_ID_DPAUC, DPM_MECH_ID_DPAUC}},
        {dpm_report_encode_ustat, {DPM_MECH_ID_USTAT_BINS, DPM_MECH_ID_USTAT_TREE}},
        {dpm_report_encode_fedauc, {DPM_MECH_ID_FEDAUC_RR, DPM_MECH_ID_FEDAUC_LAP}},
    };
    static const dpm_mech_id_t all[] = {DPM_MECH_ID_TUPLE_MR,   DPM_MECH_ID_TUPLE_ML,
                                        DPM_MECH_ID_ROC_HIST,   DPM_MECH_ID_DPAUC,
                                        DPM_MECH_ID_USTAT_BINS, DPM_MECH_ID_USTAT_TREE,
                                        DPM_MECH_ID_FEDAUC_RR,  DPM_MECH_ID_FEDAUC_LAP};
    for (size_t e = 0; e < sizeof(entries) / sizeof(entries[0]); e++) {
        for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
            dpm_report_t r = report_of(all[k]);
            uint8_t want[DPM_REPORT_MAX_BYTES], got[DPM_REPORT_MAX_BYTES],
                fill[DPM_REPORT_MAX_BYTES];
            size_t want_len = 0, got_len = 0;
            assert_int_equal(dpm_report_encode(&r, want, sizeof(want), &want_len), DPM_OK);
            memset(got, 0xA5, sizeof(got));
            memcpy(fill, got, sizeof(fill));
            dpm_status_t st = entries[e].encode(&r, got, sizeof(got), &got_len);
            if (all[k] == entries[e].kinds[0] || all[k] == entries[e].kinds[1]) {
                assert_int_equal(st, DPM_OK);
                assert_int_equal(got_len, want_len);
                assert_memory_equal(got, want, want_len);
                /* one byte short: DPM_ERR_BUFFER, as dpm_report_encode */
                assert_int_equal(entries[e].encode(&r, got, want_len - 1, &got_len),
                                 DPM_ERR_BUFFER);
            } else {
                assert_int_equal(st, DPM_ERR_PARAM);
                assert_memory_equal(got, fill, sizeof(got));
            }
            assert_int_equal(entries[e].encode(NULL, got, sizeof(got), &got_len), DPM_ERR_PARAM);
            assert_int_equal(entries[e].encode(&r, NULL, sizeof(got), &got_len), DPM_ERR_PARAM);
            assert_int_equal(entries[e].encode(&r, got, sizeof(got), NULL), DPM_ERR_PARAM);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_roundtrip_and_size),
        cmocka_unit_test(test_report_ids_are_fresh),
        cmocka_unit_test(test_campaign_roundtrip),
        cmocka_unit_test(test_campaign_validation_reasons),
        cmocka_unit_test(test_mech_names),
        cmocka_unit_test(test_check_report_catches_every_mismatch),
        cmocka_unit_test(test_report_decode_rejects_malformed),
        cmocka_unit_test(test_report_encode_per_kind),
    };
    return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
