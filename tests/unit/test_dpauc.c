/* SPDX-License-Identifier: Apache-2.0 */
/* dpauc, device and server math: the FHAUC paper's Appendix Z rows (the two 100-sample files)
 * computed through the device's counting and both server variants without noise, the
 * calibrations and their real ε, bad input with reasons, the wire (the exact size bound), the
 * report check, and the pinned fingerprint. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/report.h"
#include "dpm/expert/dpauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "estimate/dpauc.h"
#include "test_receipt.h"
#include "test_rng.h"
#include "worst_report.h"

#define ONE (UINT32_C(1) << 31)
/* params_hash of dpauc_campaign(25) (linspace, ε = 1, published), at the time of writing */
#define DPAUC_HASH_PINNED 0xea06583fu

/* The FHAUC paper's Appendix Z (sdk/docs/dpauc.md §The paper's data; mdppml/FHAUC/data, sorted
 * by descending score) */
static const int CRITEO_LABELS[100] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0,
                                       1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 1,
                                       0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 0,
                                       0, 1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
                                       0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static const double CRITEO_SCORES[100] = {
    0.994993, 0.940589, 0.933580, 0.927056, 0.903684, 0.888003, 0.875263, 0.823443, 0.818983,
    0.809110, 0.769427, 0.765066, 0.760797, 0.760223, 0.756263, 0.743706, 0.742362, 0.730861,
    0.725250, 0.724106, 0.711169, 0.705652, 0.697237, 0.687602, 0.686984, 0.661591, 0.654400,
    0.651815, 0.649116, 0.633729, 0.625522, 0.624893, 0.624018, 0.604323, 0.589968, 0.585703,
    0.584595, 0.578299, 0.577718, 0.574497, 0.567315, 0.559579, 0.559375, 0.556701, 0.548940,
    0.541241, 0.535890, 0.527129, 0.521303, 0.516686, 0.513093, 0.506097, 0.494667, 0.474766,
    0.470446, 0.466003, 0.460527, 0.420445, 0.416992, 0.405360, 0.404643, 0.403106, 0.390159,
    0.384785, 0.378668, 0.373641, 0.371009, 0.364850, 0.364435, 0.356272, 0.354081, 0.326535,
    0.326458, 0.324913, 0.312086, 0.305172, 0.300945, 0.297170, 0.281996, 0.269384, 0.248404,
    0.243237, 0.235678, 0.218963, 0.211057, 0.198629, 0.197364, 0.189273, 0.186326, 0.183731,
    0.176884, 0.157227, 0.157160, 0.155262, 0.144651, 0.143977, 0.142319, 0.140131, 0.139888,
    0.091096};
static const int GENDER_LABELS[100] = {1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                       1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 0,
                                       1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 0,
                                       0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
                                       0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
static const double GENDER_SCORES[100] = {
    0.97017777,   0.97007096,   0.9376706,    0.9304854,    0.89190036,   0.8839085,   0.8810316,
    0.8697146,    0.86375564,   0.8429315,    0.8186896,    0.81854635,   0.8091398,   0.8015022,
    0.7841228,    0.77005386,   0.73959714,   0.71734405,   0.71557873,   0.67400604,  0.66645133,
    0.66138035,   0.64733255,   0.62979615,   0.62514853,   0.6078132,    0.6067614,   0.6018641,
    0.5670621,    0.5372,       0.5169141,    0.50857526,   0.4774709,    0.4651706,   0.4586993,
    0.4200492,    0.38142577,   0.3515442,    0.34795192,   0.34762278,   0.34282932,  0.3354216,
    0.3327991,    0.32739368,   0.32294437,   0.3211773,    0.31844273,   0.31555095,  0.29371923,
    0.26435325,   0.24130513,   0.23985773,   0.23380966,   0.20744677,   0.2005216,   0.19532757,
    0.18945183,   0.18248203,   0.17134993,   0.15376906,   0.14797838,   0.11990139,  0.11437966,
    0.105993554,  0.10269545,   0.09640992,   0.095879294,  0.095116474,  0.089289434, 0.06817847,
    0.057456404,  0.05312936,   0.0470266,    0.045870915,  0.03927526,   0.038253825, 0.036875732,
    0.034040663,  0.0337189,    0.032914847,  0.028695043,  0.028568713,  0.02663586,  0.017332058,
    0.017272191,  0.015166233,  0.0146423,    0.013869187,  0.009952932,  0.008044546, 0.0076364744,
    0.0074003343, 0.0063388655, 0.0059074806, 0.0055298232, 0.0045911414, 0.004167101, 0.0026754176,
    0.001941946,  0.0003853986};

static dpm_campaign_t dpauc_campaign(uint32_t n)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 21;
    c.mechanism = DPM_MECH_ID_DPAUC;
    c.eps = DPM_EPS(1);
    c.budget = DPM_EPS(1);
    c.nthresholds = n;
    assert_int_equal(dpm_dpauc_linspace(n, c.thresholds), DPM_OK);
    return c;
}

/* The noiseless aggregate of one device holding all 100 examples: the device's own counting
 * (Q1.31 scores, positive iff score >= threshold) when this build holds n_thr thresholds, else
 * the same rule counted here (tests/unit/test_mech_variants.sh runs the device at N = 100). */
static void exact_agg(const double *score, const int *label, uint32_t n_thr, dpm_dpauc_agg_t *a)
{
    dpm_campaign_t c = dpauc_campaign(n_thr <= DPM_DPAUC_MAX_THRESHOLDS ? n_thr : 2);
    uint32_t thr[128];
    assert_int_equal(dpm_dpauc_linspace(n_thr, thr), DPM_OK);
    uint32_t tp[128] = {0}, fp[128] = {0}, pos = 0, neg = 0;
    if (n_thr <= DPM_DPAUC_MAX_THRESHOLDS) {
        dpm_mech_t m;
        assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
        dpm_dpauc_counts_t cnt;
        assert_int_equal(dpm_dpauc_counts_init(&cnt, dpm_mech_dpauc(&m)), DPM_OK);
        for (int i = 0; i < 100; i++) {
            assert_int_equal(dpm_dpauc_counts_add(&cnt, dpm_mech_dpauc(&m),
                                                  dpm_score_from_double(score[i]), label[i]),
                             DPM_OK);
        }
        memcpy(tp, cnt.tp, n_thr * sizeof(uint32_t));
        memcpy(fp, cnt.fp, n_thr * sizeof(uint32_t));
        pos = cnt.pos, neg = cnt.neg;
    } else {
        for (int i = 0; i < 100; i++) {
            uint32_t q = dpm_score_from_double(score[i]);
            for (uint32_t t = 0; t < n_thr; t++) {
                tp[t] += q >= thr[t] && label[i] == 1;
                fp[t] += q >= thr[t] && label[i] == 0;
            }
            pos += label[i] == 1;
            neg += label[i] == 0;
        }
    }
    int32_t tp32[128], fp32[128], tn32[128], fn32[128];
    for (uint32_t i = 0; i < n_thr; i++) {
        tp32[i] = (int32_t)tp[i];
        fp32[i] = (int32_t)fp[i];
        tn32[i] = (int32_t)(neg - fp[i]);
        fn32[i] = (int32_t)(pos - tp[i]);
    }
    assert_int_equal(dpm_dpauc_agg_init(a, n_thr), DPM_OK);
    assert_int_equal(dpm_dpauc_agg_add(a, n_thr, tp32, fp32, tn32, fn32), DPM_OK);
}

/* TensorFlow's AUC(num_thresholds = 1000) as the spec reproduces it: thresholds -1e-7, i / 999
 * (i = 1 .. 998), 1 + 1e-7, positive iff score > threshold, Eq. 2 in descending order. */
static double tf_auc(const double *score, const int *label)
{
    uint64_t tp[1000], fp[1000];
    for (int j = 0; j < 1000; j++) {
        int i = 999 - j; /* descending */
        double thr = i == 0 ? -1e-7 : i == 999 ? 1.0 + 1e-7 : (double)i / 999.0;
        tp[j] = fp[j] = 0;
        for (int k = 0; k < 100; k++) {
            if (score[k] > thr) {
                tp[j] += label[k] == 1;
                fp[j] += label[k] == 0;
            }
        }
    }
    double auc = 0.0;
    assert_int_equal(dpm_dpauc_eq2(tp, fp, 1000, &auc), DPM_OK);
    return auc;
}

/* Appendix Z: the 10^2 rows of Tables 1 and 3 (sdk/docs/dpauc.md §The paper's data), to the 6
 * printed decimals. */
static void test_appendix_z_rows(void **state)
{
    (void)state;
    const struct {
        const char *name;
        const double *score;
        const int *label;
        int P;
        double sk, tf, eq2[3];
    } rows[] = {
        {"Criteo 10^2",
         CRITEO_SCORES,
         CRITEO_LABELS,
         40,
         0.765417,
         0.764792,
         {0.764583, 0.761458, 0.764375}},
        {"Gender 10^2",
         GENDER_SCORES,
         GENDER_LABELS,
         50,
         0.891600,
         0.891400,
         {0.893400, 0.888800, 0.892600}},
    };
    const uint32_t ns[3] = {25, 50, 100};
    for (int r = 0; r < 2; r++) {
        int pos = 0;
        for (int i = 0; i < 100; i++) {
            pos += rows[r].label[i];
        }
        assert_int_equal(pos, rows[r].P);
        double sk = 0.0;
        assert_int_equal(dpm_auc_mann_whitney(rows[r].score, rows[r].label, 100, &sk), DPM_OK);
        double tf = tf_auc(rows[r].score, rows[r].label);
        print_message("# %s: sklearn %.6f (paper %.6f), TF-1000 %.6f (paper %.6f)\n", rows[r].name,
                      sk, rows[r].sk, tf, rows[r].tf);
        assert_true(fabs(sk - rows[r].sk) <= 5e-7);
        assert_true(fabs(tf - rows[r].tf) <= 5e-7);
        for (int k = 0; k < 3; k++) {
            static dpm_dpauc_agg_t a;
            exact_agg(rows[r].score, rows[r].label, ns[k], &a);
            dpm_dpauc_params_t p;
            assert_int_equal(dpm_dpauc_params_init(&p, ns[k], 0.0), DPM_OK);
            dpm_dpauc_estimate_t ea, eb;
            assert_int_equal(dpm_dpauc_estimate(&p, &a, DPM_DPAUC_SERVER_A, &ea), DPM_OK);
            assert_int_equal(dpm_dpauc_estimate(&p, &a, DPM_DPAUC_SERVER_B, &eb), DPM_OK);
            print_message("#   N = %3u (%s counting): Eq. 2 paper %.6f, server A %.6f, server B "
                          "%.6f\n",
                          ns[k], ns[k] <= DPM_DPAUC_MAX_THRESHOLDS ? "device" : "test",
                          rows[r].eq2[k], ea.auc, eb.auc);
            assert_true(ea.defined && eb.defined);
            assert_true(fabs(ea.auc - rows[r].eq2[k]) <= 5e-7);
            assert_true(fabs(eb.auc - rows[r].eq2[k]) <= 5e-7);
            /* the curve runs from (0, 0) at threshold 1.0 to (1, 1) at threshold 0 */
            assert_true(eb.fpr[0] == 0.0 && eb.tpr[0] == 0.0);
            assert_true(eb.fpr[ns[k] - 1] == 1.0 && eb.tpr[ns[k] - 1] == 1.0);
        }
    }
    /* negative control: a one-example change moves the row (the check can fail) */
    static dpm_dpauc_agg_t a;
    int flipped[100];
    memcpy(flipped, CRITEO_LABELS, sizeof(flipped));
    flipped[99] = 1;
    exact_agg(CRITEO_SCORES, flipped, 25, &a);
    dpm_dpauc_params_t p;
    dpm_dpauc_estimate_t e;
    assert_int_equal(dpm_dpauc_params_init(&p, 25, 0.0), DPM_OK);
    assert_int_equal(dpm_dpauc_estimate(&p, &a, DPM_DPAUC_SERVER_B, &e), DPM_OK);
    assert_true(fabs(e.auc - 0.764583) > 1e-3);
}

/* Eq. 2 directly on the spec's toy: refuses empty classes. */
static void test_eq2_and_mann_whitney_edges(void **state)
{
    (void)state;
    const uint64_t tp[3] = {0, 1, 2}, fp[3] = {0, 0, 2};
    double auc = -1.0;
    assert_int_equal(dpm_dpauc_eq2(tp, fp, 3, &auc), DPM_OK);
    assert_true(fabs(auc - (1.0 * 0 + 3.0 * 2) / (2.0 * 2 * 2)) < 1e-12); /* 0.75 */
    const uint64_t none[3] = {0, 0, 0};
    assert_int_equal(dpm_dpauc_eq2(tp, none, 3, &auc), DPM_ERR_UNDEFINED);
    const double s[3] = {0.2, 0.2, 0.9};
    const int y[3] = {1, 0, 0};
    assert_int_equal(dpm_auc_mann_whitney(s, y, 3, &auc), DPM_OK);
    assert_true(fabs(auc - 0.25) < 1e-12); /* a tie (1/2) and a loss */
    const int all_pos[3] = {1, 1, 1};
    assert_int_equal(dpm_auc_mann_whitney(s, all_pos, 3, &auc), DPM_ERR_UNDEFINED);
}

/* Calibrations: scales 4N / ε and 2N / ε; the real ε for one label: ε / 2 and ε. */
static void test_calibrations_and_real_eps(void **state)
{
    (void)state;
    uint32_t thr[128];
    assert_int_equal(dpm_dpauc_linspace(25, thr), DPM_OK);
    assert_int_equal(thr[0], 0);
    assert_int_equal(thr[24], ONE);
    dpm_dpauc_t m;
    assert_int_equal(dpm_dpauc_init(&m, thr, 25, DPM_DPAUC_PUBLISHED, DPM_EPS_ONE), DPM_OK);
    assert_int_equal(m.lap.scale_num, 100); /* 4N / ε = 100 counts */
    assert_int_equal(m.lap.scale_den, 1);
    assert_int_equal(m.eps_implemented, DPM_EPS_ONE / 2);
    assert_int_equal(dpm_dpauc_init(&m, thr, 25, DPM_DPAUC_TIGHT, DPM_EPS_ONE), DPM_OK);
    assert_int_equal(m.lap.scale_num, 50);
    assert_int_equal(m.eps_implemented, DPM_EPS_ONE);
    /* an odd Q16.16 ε: half of it rounded up (never understated) */
    assert_int_equal(dpm_dpauc_init(&m, thr, 25, DPM_DPAUC_PUBLISHED, 65537), DPM_OK);
    assert_int_equal(m.eps_implemented, 32769);

    /* bad input, *m untouched */
    dpm_dpauc_t keep;
    memset(&m, 0x5A, sizeof(m));
    keep = m;
    uint32_t bad[3] = {10, 30, 20};
    assert_int_equal(dpm_dpauc_init(&m, bad, 3, DPM_DPAUC_PUBLISHED, DPM_EPS_ONE), DPM_ERR_PARAM);
    bad[2] = 30; /* repeated */
    assert_int_equal(dpm_dpauc_init(&m, bad, 3, DPM_DPAUC_PUBLISHED, DPM_EPS_ONE), DPM_ERR_PARAM);
    bad[2] = ONE + 1;
    assert_int_equal(dpm_dpauc_init(&m, bad, 3, DPM_DPAUC_PUBLISHED, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_dpauc_init(&m, thr, 0, DPM_DPAUC_PUBLISHED, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_dpauc_init(&m, thr, DPM_DPAUC_MAX_N + 1, DPM_DPAUC_PUBLISHED, DPM_EPS_ONE),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_dpauc_init(&m, thr, 25, (dpm_dpauc_calibration_t)2, DPM_EPS_ONE),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_dpauc_init(&m, thr, 25, DPM_DPAUC_PUBLISHED, 0), DPM_ERR_PARAM);
    /* scale 4N / ε above 2^24 counts: ε < N 2^-22 (25 thresholds: ε < 0.39 / 65536, below the
     * Q16.16 grid: every ε passes; 128 thresholds would refuse ε = 1 / 65536) */
    assert_memory_equal(&m, &keep, sizeof(m));
    assert_int_equal(dpm_dpauc_init(&m, thr, 25, DPM_DPAUC_PUBLISHED, 1), DPM_OK);
}

/* Counting: >= at every threshold, masks for the label; bad input leaves the counts alone. */
static void test_counting(void **state)
{
    (void)state;
    const uint32_t thr[3] = {0, ONE / 2, ONE};
    dpm_dpauc_t m;
    assert_int_equal(dpm_dpauc_init(&m, thr, 3, DPM_DPAUC_TIGHT, DPM_EPS_ONE), DPM_OK);
    dpm_dpauc_counts_t c;
    assert_int_equal(dpm_dpauc_counts_init(&c, &m), DPM_OK);
    assert_int_equal(dpm_dpauc_counts_add(&c, &m, ONE / 2, 1), DPM_OK); /* on a threshold: >= */
    assert_int_equal(dpm_dpauc_counts_add(&c, &m, ONE, 0), DPM_OK);
    assert_int_equal(dpm_dpauc_counts_add(&c, &m, 0, 0), DPM_OK);
    assert_int_equal(c.pos, 1);
    assert_int_equal(c.neg, 2);
    const uint32_t tp[3] = {1, 1, 0}, fp[3] = {2, 1, 1};
    assert_memory_equal(c.tp, tp, sizeof(tp));
    assert_memory_equal(c.fp, fp, sizeof(fp));
    dpm_dpauc_counts_t keep = c;
    assert_int_equal(dpm_dpauc_counts_add(&c, &m, ONE + 1, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_dpauc_counts_add(&c, &m, 5, 2), DPM_ERR_PARAM);
    assert_int_equal(dpm_dpauc_counts_add(&c, &m, 5, -1), DPM_ERR_PARAM);
    assert_int_equal(dpm_dpauc_counts_add(NULL, &m, 5, 1), DPM_ERR_PARAM);
    c.pos = DPM_DPAUC_MAX_COUNT - 2u;
    keep = c;
    assert_int_equal(dpm_dpauc_counts_add(&c, &m, 5, 1), DPM_ERR_RANGE);
    assert_memory_equal(&c, &keep, sizeof(c));
}

/* The noise: dpm_laplace_add draws in the order tp, fp, tn, fn; impossible counts refused. */
static void test_perturb_order_and_bad_counts(void **state)
{
    (void)state;
    const uint32_t thr[2] = {ONE / 4, ONE / 2};
    dpm_dpauc_t m;
    assert_int_equal(dpm_dpauc_init(&m, thr, 2, DPM_DPAUC_PUBLISHED, 2 * DPM_EPS_ONE), DPM_OK);
    dpm_dpauc_counts_t c;
    assert_int_equal(dpm_dpauc_counts_init(&c, &m), DPM_OK);
    c.pos = 7, c.neg = 9, c.tp[0] = 5, c.tp[1] = 2, c.fp[0] = 4, c.fp[1] = 1;
    test_rng_t t1, t2;
    dpm_rng_t g1, g2;
    dpm_rand_t r1, r2;
    assert_int_equal(test_rand_init(&r1, &t1, &g1, 5), DPM_OK);
    assert_int_equal(test_rand_init(&r2, &t2, &g2, 5), DPM_OK);
    dpm_dpauc_report_t out;
    assert_int_equal(dpm_dpauc_perturb(&m, &r1, &c, &out), DPM_OK);
    const int64_t want_in[8] = {5, 2, 4, 1, 9 - 4, 9 - 1, 7 - 5, 7 - 2};
    const int32_t *got[4] = {out.tp, out.fp, out.tn, out.fn};
    for (int i = 0; i < 8; i++) {
        int64_t v = 0;
        assert_int_equal(dpm_laplace_add(&m.lap, &r2, want_in[i], &v), DPM_OK);
        assert_int_equal(got[i / 2][i % 2], v);
    }
    assert_int_equal(out.n, 2);
    dpm_dpauc_report_t keep = out;
    c.tp[1] = 6; /* increasing with the threshold: no examples give it */
    assert_int_equal(dpm_dpauc_perturb(&m, &r1, &c, &out), DPM_ERR_PARAM);
    c.tp[1] = 2, c.fp[0] = 10; /* above the negatives */
    assert_int_equal(dpm_dpauc_perturb(&m, &r1, &c, &out), DPM_ERR_PARAM);
    c.fp[0] = 4, c.n = 3;
    assert_int_equal(dpm_dpauc_perturb(&m, &r1, &c, &out), DPM_ERR_PARAM);
    assert_memory_equal(&out, &keep, sizeof(out));
}

/* Campaign validation with reasons, through dpm_mech_init. */
static void test_campaign_validation(void **state)
{
    (void)state;
    dpm_mech_t m, keep;
    memset(&m, 0x66, sizeof(m));
    keep = m;
    const char *why = NULL;
    dpm_campaign_t c = dpauc_campaign(25);
    c.nthresholds = 0;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "dpauc needs at least one threshold");
    c = dpauc_campaign(25);
    c.thresholds[3] = c.thresholds[2];
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "dpauc thresholds not strictly increasing (unsorted or repeated)");
    c = dpauc_campaign(25);
    c.thresholds[3] = 1;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "dpauc thresholds not strictly increasing (unsorted or repeated)");
    c = dpauc_campaign(2);
    c.thresholds[1] = ONE + 1;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "dpauc threshold above score 1.0 (2^31)");
    c = dpauc_campaign(25);
    c.nthresholds = DPM_DPAUC_MAX_THRESHOLDS + 1;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "more dpauc thresholds than this build holds");
    c = dpauc_campaign(25);
    c.calibration = 7;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_PARAM);
    assert_string_equal(why, "unknown dpauc calibration");
#if DPM_DPAUC_MAX_THRESHOLDS >= 65 /* N > 64 eps: scale 4N / ε above 2^24 counts */
    c = dpauc_campaign(DPM_DPAUC_MAX_THRESHOLDS);
    c.eps = 1; /* 2^-16 */
    c.budget = DPM_EPS_ONE;
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_RANGE);
    assert_string_equal(why, "epsilon too small for dpauc's count range");
#endif
    c = dpauc_campaign(25);
    c.calibration = DPM_DPAUC_TIGHT;
    c.budget = DPM_EPS_Q16(DPM_EPS_ONE - 1); /* tight spends the whole ε: one report does not fit */
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_ERR_BUDGET);
    assert_memory_equal(&m, &keep, sizeof(m));
    /* published spends ε / 2: a budget of ε / 2 holds one report */
    c = dpauc_campaign(25);
    c.budget = DPM_EPS_Q16(DPM_EPS_ONE / 2);
    assert_int_equal(dpm_mech_init(&m, &c, &why), DPM_OK);
    assert_int_equal(m.eps_implemented, DPM_EPS_ONE / 2);
    assert_non_null(dpm_mech_dpauc(&m));
    assert_null(dpm_mech_dpauc(NULL));

    /* the campaign survives the wire, thresholds and calibration included */
    c = dpauc_campaign(DPM_DPAUC_MAX_THRESHOLDS);
    c.calibration = DPM_DPAUC_TIGHT;
    uint8_t buf[DPM_CAMPAIGN_MAX_BYTES];
    size_t len = 0;
    dpm_campaign_t back;
    assert_int_equal(dpm_campaign_encode(&c, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(dpm_campaign_decode(buf, len, &back, &why), DPM_OK);
    assert_memory_equal(&back, &c, sizeof(c));
}

/* The fingerprint covers thresholds, calibration and ε, and is pinned. */
static void test_fingerprint(void **state)
{
    (void)state;
    dpm_campaign_t c = dpauc_campaign(25);
    dpm_mech_t a, b;
    assert_int_equal(dpm_mech_init(&a, &c, NULL), DPM_OK);
    print_message("# dpauc params_hash 0x%08x\n", a.params_hash);
    assert_int_equal(a.params_hash, DPAUC_HASH_PINNED);
    dpm_campaign_t d = c;
    d.thresholds[5]++;
    assert_int_equal(dpm_mech_init(&b, &d, NULL), DPM_OK);
    assert_int_not_equal(b.params_hash, a.params_hash);
    d = c;
    d.calibration = DPM_DPAUC_TIGHT;
    assert_int_equal(dpm_mech_init(&b, &d, NULL), DPM_OK);
    assert_int_not_equal(b.params_hash, a.params_hash);
    d = c;
    d.eps = DPM_EPS_Q16(DPM_EPS_ONE / 2);
    assert_int_equal(dpm_mech_init(&b, &d, NULL), DPM_OK);
    assert_int_not_equal(b.params_hash, a.params_hash);
    d = c;
    d.id = 99, d.ustat_k = 5, d.groups = 3; /* fields dpauc does not use */
    assert_int_equal(dpm_mech_init(&b, &d, NULL), DPM_OK);
    assert_int_equal(b.params_hash, a.params_hash);
}

/* Report: receipt, round trip, the exact size bound, the collector-side check. */
static void test_report_wire_and_check(void **state)
{
    (void)state;
    dpm_campaign_t c = dpauc_campaign(DPM_DPAUC_MAX_THRESHOLDS);
    dpm_mech_t m;
    assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
    dpm_dpauc_counts_t cnt;
    assert_int_equal(dpm_dpauc_counts_init(&cnt, dpm_mech_dpauc(&m)), DPM_OK);
    for (int i = 0; i < 100; i++) {
        assert_int_equal(dpm_dpauc_counts_add(&cnt, dpm_mech_dpauc(&m),
                                              dpm_score_from_double(CRITEO_SCORES[i]),
                                              CRITEO_LABELS[i]),
                         DPM_OK);
    }
    test_rng_t t;
    dpm_rng_t g;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &g, 8), DPM_OK);
    dpm_report_t rep, back;
    assert_int_equal(dpm_mech_report_dpauc(&m, &r, NULL, NULL, &cnt, &rep), DPM_ERR_PARAM);
    assert_int_equal(dpm_mech_report_dpauc(&m, &r, TEST_RECEIPT(&m, 3), &cnt, &rep), DPM_OK);
    assert_int_equal(rep.mechanism, DPM_MECH_ID_DPAUC);
    assert_int_equal(rep.eps, DPM_EPS_ONE / 2);
    uint8_t buf[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
    memset(&back, 0, sizeof(back));
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
    assert_memory_equal(&back.body.dpauc, &rep.body.dpauc, sizeof(rep.body.dpauc));
    const char *why = NULL;
    assert_int_equal(dpm_mech_check_report(&m, &back, &why), DPM_OK);
    back.body.dpauc.fn[7] = INT32_MIN;
    assert_int_equal(dpm_mech_check_report(&m, &back, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "value out of range");
    back = rep;
    back.body.dpauc.n = 3;
    assert_int_equal(dpm_mech_check_report(&m, &back, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "wrong number of thresholds");

    /* the bound is exact: the widest report fills DPM_REPORT_DPAUC_MAX to the byte */
    dpm_report_t worst;
    size_t want = test_worst_report_of(DPM_MECH_ID_DPAUC, &worst);
    assert_int_equal(want, DPM_REPORT_DPAUC_MAX);
    assert_int_equal(dpm_report_encode(&worst, buf, sizeof(buf), &len), DPM_OK);
    assert_int_equal(len, DPM_REPORT_DPAUC_MAX);
    print_message("# largest dpauc report (N = %d): %zu bytes\n", DPM_DPAUC_MAX_THRESHOLDS, len);
    assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
    assert_memory_equal(&back.body.dpauc, &worst.body.dpauc, sizeof(worst.body.dpauc));
    assert_int_equal(dpm_report_encode(&worst, buf, len - 1, &len), DPM_ERR_BUFFER);
    worst.body.dpauc.n = 0;
    assert_int_equal(dpm_report_encode(&worst, buf, sizeof(buf), &len), DPM_ERR_PARAM);
    worst.body.dpauc.n = DPM_DPAUC_MAX_THRESHOLDS + 1;
    assert_int_equal(dpm_report_encode(&worst, buf, sizeof(buf), &len), DPM_ERR_PARAM);
}

/* Server: undefined and flagged estimates, never NaN. */
static void test_server_undefined_and_small(void **state)
{
    (void)state;
    dpm_dpauc_agg_t a;
    dpm_dpauc_params_t p;
    dpm_dpauc_estimate_t e;
    assert_int_equal(dpm_dpauc_params_init(&p, 2, 8.0), DPM_OK);
    assert_int_equal(dpm_dpauc_agg_init(&a, 2), DPM_OK);
    assert_int_equal(dpm_dpauc_estimate(&p, &a, DPM_DPAUC_SERVER_B, &e), DPM_OK);
    assert_false(e.defined);
    assert_string_equal(e.reason, "no reports");
    const int32_t tp[2] = {3, -3}, fp[2] = {5, 1}, tn[2] = {0, 4}, fn[2] = {0, 3};
    assert_int_equal(dpm_dpauc_agg_add(&a, 2, tp, fp, tn, fn), DPM_OK);
    assert_int_equal(dpm_dpauc_estimate(&p, &a, DPM_DPAUC_SERVER_B, &e), DPM_OK);
    assert_false(e.defined); /* TP + FN = 0 at the second threshold */
    assert_string_equal(e.reason, "a noisy positive total TP + FN is exactly 0");
    assert_true(e.auc == 0.0);
    assert_int_equal(dpm_dpauc_estimate(&p, &a, DPM_DPAUC_SERVER_A, &e), DPM_OK);
    assert_true(e.defined); /* A clamps: the point is (0, 0) there, as in Sun et al.'s code */
    assert_true(e.small_sample);
    assert_true(e.auc >= 0.0 && e.auc <= 1.0);
    assert_int_equal(dpm_dpauc_estimate(&p, &a, (dpm_dpauc_server_t)5, &e), DPM_ERR_PARAM);
    dpm_dpauc_agg_t other;
    assert_int_equal(dpm_dpauc_agg_init(&other, 3), DPM_OK);
    assert_int_equal(dpm_dpauc_agg_merge(&a, &other), DPM_ERR_PARAM);
    assert_int_equal(dpm_dpauc_agg_init(&other, 2), DPM_OK);
    assert_int_equal(dpm_dpauc_agg_add(&other, 2, tp, fp, tn, fn), DPM_OK);
    assert_int_equal(dpm_dpauc_agg_merge(&a, &other), DPM_OK);
    assert_int_equal(a.reports, 2);
    assert_int_equal(a.tp[0], 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appendix_z_rows),
        cmocka_unit_test(test_eq2_and_mann_whitney_edges),
        cmocka_unit_test(test_calibrations_and_real_eps),
        cmocka_unit_test(test_counting),
        cmocka_unit_test(test_perturb_order_and_bad_counts),
        cmocka_unit_test(test_campaign_validation),
        cmocka_unit_test(test_fingerprint),
        cmocka_unit_test(test_report_wire_and_check),
        cmocka_unit_test(test_server_undefined_and_small),
    };
    return cmocka_run_group_tests_name("dpauc", tests, NULL, NULL);
}
