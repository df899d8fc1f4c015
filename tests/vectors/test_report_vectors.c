/* SPDX-License-Identifier: Apache-2.0 */
/* Golden reports: one encoded report of each kind (tuple_mr, tuple_ml, roc_hist with 16 bins)
 * from a fixed campaign and a seeded generator must match these bytes, recorded on x86-64. The
 * bytes carry everything that could depend on the platform: the report id (random bytes), the
 * perturbed values (the samplers), the implemented ε and the parameter fingerprint (a hash of
 * the integer thresholds and scales the mechanism derived from ε) and the protobuf encoding.
 * make cross runs this on armhf, aarch64, s390x (big-endian) and Cortex-M: a match there is
 * the proof that reports do not depend on word size or byte order.
 *
 * After a deliberate change of the mechanisms or the wire format, the failure message prints
 * the new bytes; review them and paste them below. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/report.h"
#include "dpm/expert/mech.h"
#include "test_receipt.h"
#include "test_rng.h"

#define SEED 20240611u

static const char kTupleMr[] =
    "0a10c6841b715554c7b4cff1fbdbce3c683b1001180320072880800435c5a98dab5206080212020202";
static const char kTupleMl[] =
    "0a105745754cfb1cbfbfedcc83b673f9ea3d1001180320082880800435e4f85c50520a08021206f8db1da0c711";
static const char kRocHist[] =
    "0a10893859565f55965c8c0301cc1f64043e1001180320012880800435dc1c6f245a240a100206010004000100"
    "0302050003011501121004020a0a06020606000a100100020804";

static void campaign(dpm_campaign_t *c, dpm_mech_id_t mech)
{
    memset(c, 0, sizeof(*c));
    c->id = 1;
    c->mechanism = mech;
    c->eps = DPM_EPS(1);
    c->budget = DPM_EPS(4);
    c->period_seconds = 86400u;
    if (mech == DPM_MECH_ID_ROC_HIST) {
        c->nbins = 15u; /* 16 bins */
        for (uint32_t i = 0; i < c->nbins; i++) {
            c->bin_edges[i] = (i + 1u) << 27;
        }
    } else {
        c->groups = 4u;
        c->nmetrics = 2u;
        c->metrics[0] = DPM_METRIC_TPR;
        c->metrics[1] = DPM_METRIC_FPR;
        c->frac_bits = 16u;
    }
}

/* The encoded report of `mech` from generator seed `seed`, as lowercase hex. */
static void make_report(dpm_mech_id_t id, uint64_t seed, char *hex, size_t cap)
{
    dpm_campaign_t c;
    campaign(&c, id);
    dpm_mech_t mech;
    assert_int_equal(dpm_mech_init(&mech, &c, NULL), DPM_OK);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, seed), DPM_OK);
    dpm_report_t rep;
    if (id == DPM_MECH_ID_ROC_HIST) {
        dpm_score_hist_t h;
        assert_int_equal(dpm_score_hist_init(&h, dpm_mech_score_bins(&mech)), DPM_OK);
        for (uint32_t i = 0; i < 40u; i++) {
            assert_int_equal(dpm_score_hist_add(&h, dpm_mech_score_bins(&mech), (i * 0x0C000000u) % 0x80000001u,
                                                (int)(i % 3u == 0u)),
                             DPM_OK);
        }
        assert_int_equal(dpm_mech_report_roc_hist(&mech, &r, TEST_RECEIPT(&mech, 3), &h, &rep), DPM_OK);
    } else {
        const dpm_ratio_t values[2] = {{45, 50}, {7, 50}};
        assert_int_equal(dpm_mech_report_tuple(&mech, &r, TEST_RECEIPT(&mech, 3), 2u, values, &rep), DPM_OK);
    }
    uint8_t bytes[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    assert_int_equal(dpm_report_encode(&rep, bytes, sizeof(bytes), &len), DPM_OK);
    assert_true(2 * len < cap);
    for (size_t i = 0; i < len; i++) {
        snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    }
    hex[2 * len] = '\0';
}

static void check(dpm_mech_id_t id, const char *name, const char *want)
{
    char got[2 * DPM_REPORT_MAX_BYTES + 1];
    make_report(id, SEED, got, sizeof(got));
    if (strcmp(got, want) != 0) {
        fail_msg("%s report differs from the x86-64 bytes:\n  got  %s\n  want %s", name, got, want);
    }
    /* negative control: the bytes depend on the randomness, so a match is not vacuous */
    char other[2 * DPM_REPORT_MAX_BYTES + 1];
    make_report(id, SEED + 1u, other, sizeof(other));
    assert_string_not_equal(other, want);
}

static void test_tuple_mr_report(void **state)
{
    (void)state;
    check(DPM_MECH_ID_TUPLE_MR, "tuple_mr", kTupleMr);
}

static void test_tuple_ml_report(void **state)
{
    (void)state;
    check(DPM_MECH_ID_TUPLE_ML, "tuple_ml", kTupleMl);
}

static void test_roc_hist16_report(void **state)
{
    (void)state;
    check(DPM_MECH_ID_ROC_HIST, "roc_hist", kRocHist);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tuple_mr_report),
        cmocka_unit_test(test_tuple_ml_report),
        cmocka_unit_test(test_roc_hist16_report),
    };
    return cmocka_run_group_tests_name("report_vectors", tests, NULL, NULL);
}
