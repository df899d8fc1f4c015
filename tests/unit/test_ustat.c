/* SPDX-License-Identifier: Apache-2.0 */
/* ustat_bins and ustat_tree, device and server math: quantization, the GRR value of each kernel,
 * the Hadamard bit, bad input with reasons, the wire (exact size bounds), the report check, the
 * pinned fingerprints; sdk/docs/ustat.md §Exactness targets: Figure 1's tree, UAUC against the
 * brute-force count, and sdk/docs/ustat.md §Closed form against the O(n^2) pairwise sum on the same
 * reports. */
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
#include "dpm/expert/ustat.h"
#include "estimate/ustat.h"
#include "test_receipt.h"
#include "test_rng.h"
#include "worst_report.h"

#define ONE (UINT32_C(1) << 31)
/* params_hash of bins_campaign(16, AUC) and tree_campaign(8, 0), at the time of writing */
#define BINS_HASH_PINNED 0x364710adu
#define TREE_HASH_PINNED 0xe3826d87u

static dpm_campaign_t bins_campaign(uint32_t k, uint32_t kernel)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 31;
    c.mechanism = DPM_MECH_ID_USTAT_BINS;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(1);
    c.ustat_k = k;
    c.ustat_kernel = kernel;
    return c;
}

static dpm_campaign_t tree_campaign(uint32_t depth, uint32_t grr_levels)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 32;
    c.mechanism = DPM_MECH_ID_USTAT_TREE;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(1);
    c.tree_depth = depth;
    c.tree_grr_levels = grr_levels;
    return c;
}

static void test_quantize(void **state)
{
    (void)state;
    uint32_t b = 99;
    assert_int_equal(dpm_ustat_quantize(0, 4, &b), DPM_OK);
    assert_int_equal(b, 0);
    assert_int_equal(dpm_ustat_quantize(ONE / 4 - 1, 4, &b), DPM_OK);
    assert_int_equal(b, 0);
    assert_int_equal(dpm_ustat_quantize(ONE / 4, 4, &b), DPM_OK); /* floor(score k) */
    assert_int_equal(b, 1);
    assert_int_equal(dpm_ustat_quantize(ONE, 4, &b), DPM_OK); /* score 1.0: the top bin */
    assert_int_equal(b, 3);
    assert_int_equal(dpm_ustat_quantize(ONE - 1, 1u << 20, &b), DPM_OK);
    assert_int_equal(b, (1u << 20) - 1u);
    b = 77;
    assert_int_equal(dpm_ustat_quantize(ONE + 1, 4, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_quantize(5, 1, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_quantize(5, 4, NULL), DPM_ERR_PARAM);
    assert_int_equal(b, 77);
}

/* With ε = 20 a GRR keeps with probability 1 - (d - 1) e^-20: the value is the input's. */
static void test_bins_values_per_kernel(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 3), DPM_OK);
    dpm_ustat_bins_t m;
    dpm_ustat_bins_report_t rep;
    const dpm_ustat_example_t ex = {ONE / 4 * 3, 1, ONE / 8};
    assert_int_equal(dpm_ustat_bins_init(&m, DPM_USTAT_AUC, 8, 20 * DPM_EPS_ONE), DPM_OK);
    assert_int_equal(m.grr.k, 8);
    assert_true(m.eps_implemented <= 20 * DPM_EPS_ONE);
    uint64_t before = dpm_rand_bits_used(&r);
    assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &ex, &rep), DPM_OK);
    assert_int_equal(dpm_rand_bits_used(&r) - before, 32); /* one GRR, fixed draws */
    assert_int_equal(rep.value, 6);
    assert_int_equal(rep.label, 1); /* public: in clear */
    assert_int_equal(dpm_ustat_bins_init(&m, DPM_USTAT_AUC_PRIVATE_LABEL, 8, 20 * DPM_EPS_ONE),
                     DPM_OK);
    assert_int_equal(m.grr.k, 16);
    assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &ex, &rep), DPM_OK);
    assert_int_equal(rep.value, 8 + 6); /* label k + bin */
    assert_int_equal(rep.label, 0);     /* private: not sent */
    assert_int_equal(dpm_ustat_bins_init(&m, DPM_USTAT_KENDALL, 8, 20 * DPM_EPS_ONE), DPM_OK);
    assert_int_equal(m.grr.k, 64);
    const dpm_ustat_example_t pair = {ONE / 4 * 3, 0, ONE / 8};
    assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &pair, &rep), DPM_OK);
    assert_int_equal(rep.value, 6 * 8 + 1);
    /* bad input: *out untouched */
    dpm_ustat_bins_report_t keep = rep;
    assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &ex, &rep), DPM_ERR_PARAM); /* label 1 */
    const dpm_ustat_example_t high = {ONE + 1, 0, 0}, bad_label = {5, 2, 0};
    assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &high, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_bins_init(&m, DPM_USTAT_AUC, 8, DPM_EPS_ONE), DPM_OK);
    assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &bad_label, &rep), DPM_ERR_PARAM);
    assert_memory_equal(&rep, &keep, sizeof(rep));
    /* init refusals */
    dpm_ustat_bins_t mk;
    memset(&mk, 0x5A, sizeof(mk));
    dpm_ustat_bins_t mkeep = mk;
    assert_int_equal(dpm_ustat_bins_init(&mk, DPM_USTAT_AUC, 1, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_bins_init(&mk, DPM_USTAT_AUC, DPM_MAX_GRR_K + 1, DPM_EPS_ONE),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_bins_init(&mk, DPM_USTAT_KENDALL, 17, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_bins_init(&mk, (dpm_ustat_kernel_t)3, 4, DPM_EPS_ONE),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_bins_init(&mk, DPM_USTAT_AUC, 4, 0), DPM_ERR_PARAM);
    assert_memory_equal(&mk, &mkeep, sizeof(mk));
}

static uint32_t parity(uint32_t x)
{
    uint32_t p = 0;
    for (; x != 0; x &= x - 1u) {
        p ^= 1u;
    }
    return p;
}

/* Hadamard levels: level in [1, depth], row < 2^level, bit = parity(row & node) (ε = 20: kept);
 * GRR levels: the node. Every level is drawn. */
static void test_tree_reports(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 4), DPM_OK);
    dpm_ustat_tree_t m;
    assert_int_equal(dpm_ustat_tree_init(&m, 6, 2, 20 * DPM_EPS_ONE), DPM_OK);
    assert_int_equal(m.grr[0].k, 2);
    assert_int_equal(m.grr[1].k, 4);
    assert_int_equal(m.rr.k, 2);
    const dpm_ustat_example_t ex = {(uint32_t)(0.7 * ONE), 1, 0};
    uint32_t x = (uint32_t)(((uint64_t)ex.score * 64u) >> 31); /* 44 = 101100b */
    int seen[7] = {0};
    for (int i = 0; i < 2000; i++) {
        dpm_ustat_tree_report_t rep;
        assert_int_equal(dpm_ustat_tree_perturb(&m, &r, &ex, &rep), DPM_OK);
        assert_true(rep.level >= 1 && rep.level <= 6);
        seen[rep.level] = 1;
        assert_int_equal(rep.label, 1);
        uint32_t node = x >> (6 - rep.level);
        if (rep.level <= 2) {
            assert_int_equal(rep.row, 0);
            assert_int_equal(rep.value, node);
        } else {
            assert_true(rep.row < (1u << rep.level));
            assert_int_equal(rep.value, parity(rep.row & node));
        }
    }
    for (int l = 1; l <= 6; l++) {
        assert_true(seen[l]);
    }
    /* refusals */
    dpm_ustat_tree_t keep;
    memset(&m, 0x5A, sizeof(m));
    keep = m;
    assert_int_equal(dpm_ustat_tree_init(&m, 0, 0, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_tree_init(&m, DPM_USTAT_MAX_DEPTH + 1, 0, DPM_EPS_ONE),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_tree_init(&m, 4, 5, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_tree_init(&m, 12, 9, DPM_EPS_ONE), DPM_ERR_PARAM); /* 2^9 > 256 */
    assert_memory_equal(&m, &keep, sizeof(m));
    assert_int_equal(dpm_ustat_tree_init(&m, 4, 4, DPM_EPS_ONE), DPM_OK); /* all GRR: no RR */
    assert_int_equal(m.rr.k, 0);
    dpm_ustat_tree_report_t rep, rkeep;
    memset(&rep, 0x33, sizeof(rep));
    rkeep = rep;
    const dpm_ustat_example_t bad = {ONE + 1, 0, 0}, bad_label = {0, 3, 0};
    assert_int_equal(dpm_ustat_tree_perturb(&m, &r, &bad, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_tree_perturb(&m, &r, &bad_label, &rep), DPM_ERR_PARAM);
    assert_memory_equal(&rep, &rkeep, sizeof(rep));
}

/* The random source fails at each fill in turn: every perturb call then returns DPM_ERR_RNG
 * with *out untouched, wherever in the draw (the Kendall pair's second score, the label's RR,
 * the GRR, the tree's level and row) the bits ran out; a working source gives reports again. */
static void test_source_failing_at_any_fill(void **state)
{
    (void)state;
    dpm_ustat_bins_t kinds[3];
    assert_int_equal(dpm_ustat_bins_init(&kinds[0], DPM_USTAT_AUC, 16, DPM_EPS_ONE), DPM_OK);
    assert_int_equal(dpm_ustat_bins_init(&kinds[1], DPM_USTAT_AUC_PRIVATE_LABEL, 16, DPM_EPS_ONE),
                     DPM_OK);
    assert_int_equal(dpm_ustat_bins_init(&kinds[2], DPM_USTAT_KENDALL, 16, DPM_EPS_ONE), DPM_OK);
    dpm_ustat_tree_t tree;
    assert_int_equal(dpm_ustat_tree_init(&tree, 8, 3, DPM_EPS_ONE), DPM_OK);
    const dpm_ustat_example_t ex = {(dpm_score_t)1 << 30, 0, (dpm_score_t)1 << 29};
    int failures = 0;
    for (uint64_t fail_at = 1; fail_at <= 3; fail_at++) {
        for (int kind = 0; kind < 4; kind++) {
            failing_rng_t f;
            dpm_rng_t rng;
            dpm_rand_t r;
            assert_int_equal(failing_rand_init(&r, &f, &rng, 7 + fail_at, fail_at), DPM_OK);
            dpm_status_t st = DPM_OK;
            for (int i = 0; i < 100000 && st == DPM_OK; i++) {
                dpm_ustat_bins_report_t b;
                dpm_ustat_tree_report_t t;
                memset(&b, 0x5A, sizeof(b));
                memset(&t, 0x5A, sizeof(t));
                const dpm_ustat_bins_report_t b0 = b;
                const dpm_ustat_tree_report_t t0 = t;
                if (kind < 3) {
                    st = dpm_ustat_bins_perturb(&kinds[kind], &r, &ex, &b);
                    if (st != DPM_OK) {
                        assert_memory_equal(&b, &b0, sizeof(b));
                    }
                } else {
                    st = dpm_ustat_tree_perturb(&tree, &r, &ex, &t);
                    if (st != DPM_OK) {
                        assert_memory_equal(&t, &t0, sizeof(t));
                    }
                }
            }
            assert_int_equal(st, DPM_ERR_RNG);
            failures++;
        }
    }
    assert_int_equal(failures, 12);
    /* a mechanism whose tree state was damaged is refused, not run */
    dpm_ustat_tree_t bad = tree;
    bad.grr_levels = bad.depth + 1;
    test_rng_t tr;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &tr, &rng, 3), DPM_OK);
    dpm_ustat_tree_report_t t;
    assert_int_equal(dpm_ustat_tree_perturb(&bad, &r, &ex, &t), DPM_ERR_PARAM);
    bad = tree;
    bad.grr[0].k = 3;
    assert_int_equal(dpm_ustat_tree_perturb(&bad, &r, &ex, &t), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_tree_perturb(&tree, &r, &ex, &t), DPM_OK);
}

static void test_campaign_validation(void **state)
{
    (void)state;
    dpm_mech_t m, keep;
    memset(&m, 0x66, sizeof(m));
    keep = m;
    const char *why = NULL;
    dpm_campaign_t c = bins_campaign(1, DPM_USTAT_AUC);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "ustat_bins needs k >= 2 bins");
    c = bins_campaign(DPM_MAX_GRR_K / 2 + 1, DPM_USTAT_AUC_PRIVATE_LABEL);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "ustat_bins k beyond this build (GRR domain above DPM_MAX_GRR_K)");
    c = bins_campaign(65536, DPM_USTAT_KENDALL); /* k^2 overflows 32 bits: still refused */
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "ustat_bins k beyond this build (GRR domain above DPM_MAX_GRR_K)");
    c = bins_campaign(4, 3);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "unknown ustat kernel");
    c = tree_campaign(0, 0);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "ustat_tree needs a depth >= 1");
    c = tree_campaign(DPM_USTAT_MAX_DEPTH + 1, 0);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "ustat_tree depth beyond this build (DPM_USTAT_MAX_DEPTH)");
    c = tree_campaign(4, 5);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "ustat_tree GRR levels above the depth");
    c = tree_campaign(12, 9);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "ustat_tree GRR levels beyond this build (DPM_MAX_GRR_K)");
    c = bins_campaign(4, DPM_USTAT_AUC);
    c.eps = DPM_EPS(23); /* e^ε + k - 1 >= 2^32: no 32-bit GRR */
    c.budget = c.eps;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_RANGE);
    assert_string_equal(why, "epsilon too small or too large for the mechanism");
    assert_memory_equal(&m, &keep, sizeof(m));

    c = tree_campaign(8, 3);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    assert_true(m.eps_implemented <= c.eps.q16 && m.eps_implemented > c.eps.q16 - 16);
    uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    dpm_campaign_t back;
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_campaign_decode(buf, len, &back, &why), DPM_OK);
    assert_memory_equal(&back, &c, sizeof(c));
    c = bins_campaign(6, DPM_USTAT_KENDALL);
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_campaign_decode(buf, len, &back, &why), DPM_OK);
    assert_memory_equal(&back, &c, sizeof(c));
    c.ustat_kernel = 200; /* an enum value beyond any: not encodable */
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), &len), DPM_ERR_PARAM);

    /* the largest campaign of every field fits DPM_CAMPAIGN_MAX_BYTES */
    memset(&c, 0xFF, sizeof(c));
    c.mechanism = DPM_MECH_ID_DPAUC;
    c.nmetrics = DPM_CAMPAIGN_MAX_METRICS;
    for (uint32_t i = 0; i < c.nmetrics; i++) {
        c.metrics[i] = DPM_METRIC_PRECISION;
    }
    c.nbins = DPM_CAMPAIGN_MAX_EDGES;
    c.nthresholds = DPM_CAMPAIGN_MAX_THRESHOLDS;
    c.calibration = 127;
    c.ustat_kernel = 127;
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), &len), DPM_OK);
    print_message("# widest campaign: %zu of %u bytes\n", len, DPM_CAMPAIGN_MAX_BYTES);
    assert_true(len <= DPM_CAMPAIGN_MAX_BYTES);
}

static void test_fingerprints(void **state)
{
    (void)state;
    dpm_campaign_t c = bins_campaign(16, DPM_USTAT_AUC);
    dpm_mech_t a, b;
    assert_int_equal(dpm_mech_init(&a, &c, NULL), DPM_OK);
    dpm_campaign_t d = tree_campaign(8, 0);
    dpm_mech_t ta, tb;
    assert_int_equal(dpm_mech_init(&ta, &d, NULL), DPM_OK);
    print_message("# ustat_bins params_hash 0x%08x, ustat_tree 0x%08x\n", a.params_hash,
                  ta.params_hash);
    assert_int_equal(a.params_hash, BINS_HASH_PINNED);
    assert_int_equal(ta.params_hash, TREE_HASH_PINNED);
    dpm_campaign_t e = c;
    e.ustat_k = 15;
    assert_int_equal(dpm_mech_init(&b, &e, NULL), DPM_OK);
    assert_int_not_equal(b.params_hash, a.params_hash);
    e = c;
    e.ustat_kernel = DPM_USTAT_AUC_PRIVATE_LABEL;
    assert_int_equal(dpm_mech_init(&b, &e, NULL), DPM_OK);
    assert_int_not_equal(b.params_hash, a.params_hash);
    e = c;
    e.tree_depth = 3, e.nthresholds = 0, e.id = 5; /* unused fields */
    assert_int_equal(dpm_mech_init(&b, &e, NULL), DPM_OK);
    assert_int_equal(b.params_hash, a.params_hash);
    dpm_campaign_t f = d;
    f.tree_grr_levels = 1;
    assert_int_equal(dpm_mech_init(&tb, &f, NULL), DPM_OK);
    assert_int_not_equal(tb.params_hash, ta.params_hash);
    f = d;
    f.eps = DPM_EPS_Q16(DPM_EPS_ONE / 2);
    assert_int_equal(dpm_mech_init(&tb, &f, NULL), DPM_OK);
    assert_int_not_equal(tb.params_hash, ta.params_hash);
}

/* Reports: round trips, exact size bounds, the check against the campaign. */
static void test_reports_wire_and_check(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 5), DPM_OK);
    dpm_campaign_t c = bins_campaign(16, DPM_USTAT_AUC);
    dpm_mech_t m;
    assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
    const dpm_ustat_example_t ex = {ONE / 3, 1, 0};
    dpm_report_t rep, back;
    assert_int_equal(dpm_mech_report_ustat_bins(&m, &r, NULL, NULL, &ex, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_ustat_tree(&m, &r, TEST_RECEIPT(&m, 1), &ex, &rep),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_ustat_bins(&m, &r, TEST_RECEIPT(&m, 1), &ex, &rep), DPM_OK);
    uint8_t buf[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    const char *why = NULL;
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
    assert_memory_equal(&back.body.ustat_bins, &rep.body.ustat_bins, sizeof(rep.body.ustat_bins));
    assert_int_equal(dpm_mech_check_report(&m, &back, &why), DPM_OK);
    back.body.ustat_bins.value = 16;
    assert_int_equal(dpm_mech_check_report(&m, &back, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "value out of range");
    dpm_campaign_t ck = bins_campaign(4, DPM_USTAT_KENDALL);
    dpm_mech_t mk;
    assert_int_equal(dpm_mech_init(&mk, &ck, NULL), DPM_OK);
    back = rep;
    back.campaign_id = mk.campaign.id, back.eps = mk.eps_implemented,
    back.params_hash = mk.params_hash;
    back.body.ustat_bins.value = 3;
    back.body.ustat_bins.label = 1; /* no label outside the public AUC kernel */
    assert_int_equal(dpm_mech_check_report(&mk, &back, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "label out of range");

    dpm_campaign_t ct = tree_campaign(8, 2);
    dpm_mech_t mt;
    assert_int_equal(dpm_mech_init(&mt, &ct, NULL), DPM_OK);
    assert_int_equal(dpm_mech_report_ustat_tree(&mt, &r, TEST_RECEIPT(&mt, 1), &ex, &rep), DPM_OK);
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
    assert_memory_equal(&back.body.ustat_tree, &rep.body.ustat_tree, sizeof(rep.body.ustat_tree));
    assert_int_equal(dpm_mech_check_report(&mt, &back, &why), DPM_OK);
    const struct {
        uint32_t label, level, row, value;
        const char *why;
    } bad[] = {
        {2, 3, 0, 0, "label out of range"}, {0, 0, 0, 0, "level out of range"},
        {0, 9, 0, 0, "level out of range"}, {0, 2, 1, 0, "value out of range"}, /* GRR: row 0 */
        {0, 2, 0, 4, "value out of range"}, {0, 5, 32, 0, "value out of range"},
        {0, 5, 3, 2, "value out of range"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        back.body.ustat_tree =
            (dpm_ustat_tree_report_t){bad[i].label, bad[i].level, bad[i].row, bad[i].value};
        assert_int_equal(dpm_mech_check_report(&mt, &back, &why), DPM_ERR_PROTOCOL);
        assert_string_equal(why, bad[i].why);
    }

    /* exact bounds: the widest bodies fill their macros to the byte */
    const dpm_mech_id_t ids[2] = {DPM_MECH_ID_USTAT_BINS, DPM_MECH_ID_USTAT_TREE};
    for (int i = 0; i < 2; i++) {
        dpm_report_t worst;
        size_t want = test_worst_report_of(ids[i], &worst);
        assert_int_equal(dpm_report_encode(&worst, buf, sizeof(buf), &len), DPM_OK);
        print_message("# largest %s report: %zu bytes\n", i ? "ustat_tree" : "ustat_bins", len);
        assert_int_equal(len, want);
        assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
        assert_memory_equal(&back.body, &worst.body, sizeof(worst.body.ustat_tree));
    }
    assert_int_equal(DPM_REPORT_USTAT_BINS_MAX,
                     43 + 2 + 1 + DPM_REPORT_VARINT_LEN(DPM_MAX_GRR_K - 1) + 2);
    /* bodies the encoder refuses */
    dpm_report_t w;
    test_worst_report_of(DPM_MECH_ID_USTAT_TREE, &w);
    w.body.ustat_tree.level = DPM_USTAT_MAX_DEPTH + 1;
    assert_int_equal(dpm_report_encode(&w, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    test_worst_report_of(DPM_MECH_ID_USTAT_TREE, &w);
    w.body.ustat_tree.level = 3; /* row 2^16 - 1 >= 2^3 */
    assert_int_equal(dpm_report_encode(&w, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    test_worst_report_of(DPM_MECH_ID_USTAT_BINS, &w);
    w.body.ustat_bins.value = DPM_MAX_GRR_K;
    assert_int_equal(dpm_report_encode(&w, buf, sizeof(buf), &len), DPM_ERR_PARAM);
}

/* Figure 1 of the paper: {0, 1, 2, 2, 3} in a depth-2 tree; UAUC counts each strictly ordered
 * pair once, at the node where the bit strings first differ. */
static void test_tree_exact_figure1_and_bruteforce(void **state)
{
    (void)state;
    const uint64_t pos[4] = {0, 1, 2, 0}; /* positives {1, 2, 2} */
    const uint64_t neg[4] = {1, 0, 0, 1}; /* negatives {0, 3} */
    double auc = 0.0;
    assert_int_equal(dpm_ustat_tree_exact(2, neg, pos, 0.0, &auc), DPM_OK);
    assert_true(fabs(auc - 3.0 / 6.0) < 1e-12); /* pairs (1,0), (2,0), (2,0) of 3 x 2 */
    /* random data, depth 6: the strict and the ties-1/2 counts by brute force */
    test_rng_t t;
    test_rng_seed(&t, 11);
    uint64_t hp[64] = {0}, hn[64] = {0};
    uint32_t sp[300], sn[300];
    for (int i = 0; i < 300; i++) {
        sp[i] = (uint32_t)(test_rng_next(&t) % 64u);
        sn[i] = (uint32_t)(test_rng_next(&t) % 48u);
        hp[sp[i]]++;
        hn[sn[i]]++;
    }
    double strict = 0.0, half = 0.0;
    for (int i = 0; i < 300; i++) {
        for (int j = 0; j < 300; j++) {
            strict += sp[i] > sn[j];
            half += sp[i] > sn[j] ? 1.0 : sp[i] == sn[j] ? 0.5 : 0.0;
        }
    }
    assert_int_equal(dpm_ustat_tree_exact(6, hn, hp, 0.0, &auc), DPM_OK);
    assert_true(fabs(auc - strict / 90000.0) < 1e-12);
    assert_int_equal(dpm_ustat_tree_exact(6, hn, hp, 0.5, &auc), DPM_OK);
    assert_true(fabs(auc - half / 90000.0) < 1e-12);
    /* negative control: a wrong tie weight is seen */
    assert_true(fabs(strict - half) > 1.0);
}

/* z_i = (e_{x_i} - q 1) / (p - q): sdk/docs/ustat.md §Closed form equals
 * sum_{i<j} z_i^T A z_j / C(n, 2). */
static double pairwise(const dpm_ustat_bins_params_t *p, const uint32_t *x, uint32_t n, int which,
                       double w)
{
    double g = p->p - p->q, total = 0.0;
    uint32_t d = p->domain;
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t j = i + 1; j < n; j++) {
            /* z_i^T A z_j = sum_{a,b} (e_xi - q)_a A_ab (e_xj - q)_b / g^2 */
            double s = 0.0;
            for (uint32_t a = 0; a < d; a++) {
                double za = ((a == x[i]) - p->q);
                for (uint32_t b = 0; b < d; b++) {
                    double zb = ((b == x[j]) - p->q);
                    double A;
                    uint32_t k = p->k;
                    if (p->kernel == DPM_USTAT_KENDALL) {
                        int dy = (int)(a / k) - (int)(b / k), dz = (int)(a % k) - (int)(b % k);
                        A = (double)(((dy > 0) - (dy < 0)) * ((dz > 0) - (dz < 0)));
                    } else {
                        uint32_t ya = a / k, yb = b / k, sa = a % k, sb = b % k;
                        if (ya == yb) {
                            A = 0.0;
                        } else if (which == 1) {
                            A = 1.0;
                        } else {
                            uint32_t sp = ya ? sa : sb, sn = ya ? sb : sa;
                            A = sp > sn ? 1.0 : sp == sn ? w : 0.0;
                        }
                    }
                    s += za * A * zb;
                }
            }
            total += s / (g * g);
        }
    }
    return total / ((double)n * (n - 1) / 2.0);
}

static void test_closed_form_equals_pairwise(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 12), DPM_OK);
    const uint32_t kernels[2] = {DPM_USTAT_KENDALL, DPM_USTAT_AUC_PRIVATE_LABEL};
    for (int kk = 0; kk < 2; kk++) {
        dpm_ustat_bins_t m;
        assert_int_equal(dpm_ustat_bins_init(&m, (dpm_ustat_kernel_t)kernels[kk], 3, DPM_EPS_ONE),
                         DPM_OK);
        dpm_ustat_bins_params_t p;
        assert_int_equal(dpm_ustat_bins_params_init(&p, m.kernel, m.k, m.grr.keep, m.grr.other),
                         DPM_OK);
        dpm_ustat_bins_agg_t a;
        assert_int_equal(dpm_ustat_bins_agg_init(&a, p.domain), DPM_OK);
        uint32_t x[60];
        for (uint32_t i = 0; i < 60; i++) {
            dpm_ustat_example_t ex = {(uint32_t)(test_rng_next(&t) % (ONE + 1u)),
                                      kernels[kk] == DPM_USTAT_KENDALL ? 0 : (int)(i % 3 == 0),
                                      (uint32_t)(test_rng_next(&t) % (ONE + 1u))};
            dpm_ustat_bins_report_t rep;
            assert_int_equal(dpm_ustat_bins_perturb(&m, &r, &ex, &rep), DPM_OK);
            x[i] = rep.value;
            assert_int_equal(dpm_ustat_bins_agg_add(&a, &p, rep.value, rep.label), DPM_OK);
        }
        dpm_ustat_estimate_t e;
        assert_int_equal(dpm_ustat_bins_estimate(&p, &a, 0.5, 0.95, &e), DPM_OK);
        double want = kernels[kk] == DPM_USTAT_KENDALL
                          ? pairwise(&p, x, 60, 0, 0.5)
                          : pairwise(&p, x, 60, 0, 0.5) / pairwise(&p, x, 60, 1, 0.5);
        print_message("# kernel %u: closed form %.12f, pairwise %.12f (sd %.3f)\n", kernels[kk],
                      e.value, want, e.sd);
        assert_true(e.defined);
        assert_true(fabs(e.value - want) < 1e-9 * fmax(1.0, fabs(want)));
        assert_true(e.sd > 0.0 && isfinite(e.sd));
        /* negative control: including the i = j pairs (no diagonal correction) differs */
        assert_true(fabs(e.value - want * 1.05) > 1e-6 || fabs(want) < 1e-9);
    }
}

/* Noiseless-limit check of the public-label AUC: with ε = 20 the estimate is the binned AUC. */
static void test_bins_public_auc_and_undefined(void **state)
{
    (void)state;
    dpm_ustat_bins_t m;
    assert_int_equal(dpm_ustat_bins_init(&m, DPM_USTAT_AUC, 4, 20 * DPM_EPS_ONE), DPM_OK);
    dpm_ustat_bins_params_t p;
    assert_int_equal(dpm_ustat_bins_params_init(&p, m.kernel, m.k, m.grr.keep, m.grr.other),
                     DPM_OK);
    dpm_ustat_bins_agg_t a;
    dpm_ustat_estimate_t e;
    assert_int_equal(dpm_ustat_bins_agg_init(&a, 4), DPM_OK);
    assert_int_equal(dpm_ustat_bins_estimate(&p, &a, 0.5, 0.95, &e), DPM_OK);
    assert_false(e.defined);
    assert_string_equal(e.reason, "no reports");
    const uint32_t pos[4] = {0, 1, 3, 2}, neg[4] = {3, 2, 1, 0};
    for (uint32_t v = 0; v < 4; v++) {
        for (uint32_t i = 0; i < pos[v]; i++) {
            assert_int_equal(dpm_ustat_bins_agg_add(&a, &p, v, 1), DPM_OK);
        }
    }
    assert_int_equal(dpm_ustat_bins_estimate(&p, &a, 0.5, 0.95, &e), DPM_OK);
    assert_false(e.defined);
    assert_string_equal(e.reason, "no reports of negative examples");
    for (uint32_t v = 0; v < 4; v++) {
        for (uint32_t i = 0; i < neg[v]; i++) {
            assert_int_equal(dpm_ustat_bins_agg_add(&a, &p, v, 0), DPM_OK);
        }
    }
    assert_int_equal(dpm_ustat_bins_estimate(&p, &a, 0.5, 0.95, &e), DPM_OK);
    uint64_t hp[4], hn[4];
    for (int v = 0; v < 4; v++) {
        hp[v] = pos[v], hn[v] = neg[v];
    }
    double exact = 0.0;
    assert_int_equal(dpm_ustat_bins_exact(&p, hn, hp, 0.5, &exact), DPM_OK);
    assert_true(e.defined);
    assert_true(fabs(e.value - exact) < 1e-6);
    assert_true(e.n_pos == 6 && e.n_neg == 6);
    assert_int_equal(dpm_ustat_bins_agg_add(&a, &p, 4, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_bins_estimate(&p, &a, 1.5, 0.95, &e), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_bins_estimate(&p, &a, 0.5, 1.0, &e), DPM_ERR_PARAM);
}

/* Tree server: undefined estimates, and ε = 20 gives the exact tree AUC in FULL mode. */
static void test_tree_server(void **state)
{
    (void)state;
    dpm_ustat_tree_t m;
    assert_int_equal(dpm_ustat_tree_init(&m, 3, 1, 20 * DPM_EPS_ONE), DPM_OK);
    dpm_ustat_tree_params_t p;
    assert_int_equal(dpm_ustat_tree_params_init(&p, &m), DPM_OK);
    dpm_ustat_tree_agg_t a;
    assert_int_equal(dpm_ustat_tree_agg_init(&a, &p), DPM_OK);
    dpm_ustat_tree_opts_t full = {DPM_USTAT_TREE_FULL, 0.0, 0.5};
    dpm_ustat_tree_estimate_t e;
    assert_int_equal(dpm_ustat_tree_estimate(&p, &a, &full, &e), DPM_OK);
    assert_false(e.est.defined);
    assert_string_equal(e.est.reason, "no reports of positive examples");
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 13), DPM_OK);
    uint64_t hp[8] = {0}, hn[8] = {0};
    for (int i = 0; i < 100000; i++) {
        uint32_t x = (uint32_t)(test_rng_next(&t) % 8u);
        int label = (int)(test_rng_next(&t) & 1u);
        x = label ? (x + 3u) % 8u : x; /* positives tend higher */
        dpm_ustat_example_t ex = {(uint32_t)(((uint64_t)x << 31) / 8u + 5u), label, 0};
        (label ? hp : hn)[x]++;
        dpm_ustat_tree_report_t rep;
        assert_int_equal(dpm_ustat_tree_perturb(&m, &r, &ex, &rep), DPM_OK);
        assert_int_equal(dpm_ustat_tree_agg_add(&a, rep.label, rep.level, rep.row, rep.value),
                         DPM_OK);
    }
    double exact = 0.0;
    assert_int_equal(dpm_ustat_tree_exact(3, hn, hp, 0.5, &exact), DPM_OK);
    assert_int_equal(dpm_ustat_tree_estimate(&p, &a, &full, &e), DPM_OK);
    /* level sampling still adds noise (sd about 0.007 here): within 0.03 of the truth */
    print_message("# tree AUC %.4f, exact %.4f\n", e.est.value, exact);
    assert_true(e.est.defined);
    assert_true(fabs(e.est.value - exact) < 0.03);
    dpm_ustat_tree_opts_t rule = {DPM_USTAT_TREE_CHOOSE_A, 0.0, 0.5};
    assert_int_equal(dpm_ustat_tree_estimate(&p, &a, &rule, &e), DPM_OK);
    assert_true(e.a > 1.0 && e.mse_bound > 0.0 && isfinite(e.mse_bound));
    dpm_ustat_tree_opts_t bad = {DPM_USTAT_TREE_GIVEN_A, 1.0, 0.5};
    assert_int_equal(dpm_ustat_tree_estimate(&p, &a, &bad, &e), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_tree_agg_add(&a, 0, 4, 0, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_ustat_tree_agg_add(&a, 0, 1, 1, 0), DPM_ERR_PARAM); /* GRR level: row 0 */
    assert_int_equal(dpm_ustat_tree_agg_add(&a, 0, 2, 0, 2), DPM_ERR_PARAM); /* Hadamard: a bit */
    dpm_ustat_tree_agg_free(&a);
    /* a level without reports of a class: undefined */
    assert_int_equal(dpm_ustat_tree_agg_init(&a, &p), DPM_OK);
    assert_int_equal(dpm_ustat_tree_agg_add(&a, 0, 1, 0, 1), DPM_OK);
    assert_int_equal(dpm_ustat_tree_agg_add(&a, 1, 1, 0, 1), DPM_OK);
    assert_int_equal(dpm_ustat_tree_estimate(&p, &a, &full, &e), DPM_OK);
    assert_false(e.est.defined);
    assert_string_equal(e.est.reason, "a tree level has no reports of one class");
    dpm_ustat_tree_agg_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantize),
        cmocka_unit_test(test_bins_values_per_kernel),
        cmocka_unit_test(test_tree_reports),
        cmocka_unit_test(test_source_failing_at_any_fill),
        cmocka_unit_test(test_campaign_validation),
        cmocka_unit_test(test_fingerprints),
        cmocka_unit_test(test_reports_wire_and_check),
        cmocka_unit_test(test_tree_exact_figure1_and_bruteforce),
        cmocka_unit_test(test_closed_form_equals_pairwise),
        cmocka_unit_test(test_bins_public_auc_and_undefined),
        cmocka_unit_test(test_tree_server),
    };
    return cmocka_run_group_tests_name("ustat", tests, NULL, NULL);
}
