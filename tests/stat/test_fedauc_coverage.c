/* SPDX-License-Identifier: Apache-2.0 */
/* Coverage of FedAUC's 95% confidence interval (host-sim/estimate/fedauc.h), by simulation
 * through the real code: every run sends K devices through round 1 (quantize, shuffle, upload
 * encoded and decoded), the server's ranking and replies, the devices' validation, round 2
 * (dpm_mech_report_fedauc with fresh noise, or a fresh device secret for fedauc_rr), the report
 * encoded, decoded and checked (dpm_mech_check_report), and the estimator. The interval must
 * cover the true AUC of the (fixed, quantized) examples in [93%, 97%] of RUNS runs, for
 * fedauc_rr and every Laplace variant, IID and non-IID.
 *
 * Negative controls, from the same runs: fedauc_rr with the paper's Eq. 7 standard deviation
 * (sdk/docs/fedauc.md §The paper's RR variance: too small, it omits the de-biasing gain) and the
 * Laplace variants with the interval a server would compute if it believed the devices had spent
 * twice the ε (half the noise scale): both must cover less than 93%. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/report.h"
#include "estimate/fedauc.h"
#include "fedauc_fixture.h"
#include "test_receipt.h"
#include "test_figure.h"
#include "test_rng.h"

#define RUNS 2000u

typedef struct {
    const char *name;
    dpm_mech_id_t mech;
    dpm_fedauc_variant_t variant;
    uint32_t share_q16;
    const char *eps;
    uint32_t k, m;
    fa_partition_t part;
} config_t;

typedef struct {
    uint32_t covered, covered_control, valid;
    double truth, mean_err, rmse, mean_sd;
    double upload_bytes, reply_bytes, report_bytes; /* per device */
} result_t;

/* One run's reports of every device into the aggregate (and into the control aggregate: half
 * the noise claimed, Laplace only). */
static void report_all(const fa_fix_t *f, const dpm_mech_t *m, dpm_rand_t *r,
                       const dpm_fa_params_t *p, dpm_fa_agg_t *a, dpm_fa_agg_t *ctl,
                       uint64_t *bytes)
{
    for (uint32_t d = 0; d < f->k; d++) {
        dpm_memo_t memo;
        memset(&memo, 0, sizeof(memo));
        for (int half = 0; half < 2; half++) { /* a fresh device secret per run */
            uint64_t w = 0;
            assert_int_equal(dpm_rand_bits(r, 64, &w), DPM_OK);
            memcpy(memo.key + 8 * half, &w, 8);
        }
        memo.opened = DPM_MEMO_OPENED;
        dpm_report_t rep, back;
        assert_int_equal(dpm_mech_report_fedauc(m, r, TEST_RECEIPT(m, 0), &f->sess[d], &f->rk[d],
                                                f->labels + f->start[d], f->ids + f->start[d],
                                                &memo, &rep),
                         DPM_OK);
        uint8_t buf[DPM_REPORT_MAX_BYTES];
        size_t len = 0;
        assert_int_equal(dpm_report_encode(&rep, buf, sizeof(buf), &len), DPM_OK);
        assert_int_equal(dpm_report_decode(buf, len, &back), DPM_OK);
        const char *why = NULL;
        assert_int_equal(dpm_mech_check_report(m, &back, &why), DPM_OK);
        *bytes += len;
        assert_int_equal(dpm_fa_agg_add(a, p, &back.body.fedauc), DPM_OK);
        if (ctl != NULL) {
            dpm_fedauc_report_t half_noise = back.body.fedauc;
            half_noise.eps_p *= 2u;
            dpm_fa_params_t p2 = *p;
            p2.eps *= 2u;
            assert_int_equal(dpm_fa_agg_add(ctl, &p2, &half_noise), DPM_OK);
        }
    }
}

static result_t run_config(const config_t *cfg, uint64_t seed)
{
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 70;
    c.mechanism = cfg->mech;
    assert_int_equal(dpm_eps_from_decimal(cfg->eps, &c.eps.q16), DPM_OK);
    c.budget = c.eps;
    c.fedauc_variant = (uint32_t)cfg->variant;
    c.fedauc_p_share_q16 = cfg->share_q16;
    c.fedauc_score_bits = 16;
    dpm_mech_t m;
    assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
    dpm_fa_params_t p;
    assert_int_equal(dpm_fa_params_from_mech(&p, &m), DPM_OK);
    static fa_fix_t f;
    assert_int_equal(fa_fix_alloc(&f, cfg->k, cfg->m), 0);
    fa_fix_binormal(&f, 0.75, 0.256, cfg->part, seed);
    result_t res;
    memset(&res, 0, sizeof(res));
    res.truth = fa_fix_truth(&f, &m);
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, seed * 1000 + 1), DPM_OK);
    int laplace = cfg->mech == DPM_MECH_ID_FEDAUC_LAP;
    double sum_err = 0, sum_sq = 0, sum_sd = 0;
    uint64_t report_bytes = 0, upload_bytes = 0, reply_bytes = 0;
    for (uint32_t run = 0; run < RUNS; run++) {
        assert_int_equal(fa_fix_rounds(&f, &m, &r), DPM_OK);
        upload_bytes += f.upload_bytes;
        reply_bytes += f.reply_bytes;
        dpm_fa_agg_t a, ctl;
        dpm_fa_agg_init(&a);
        dpm_fa_agg_init(&ctl);
        report_all(&f, &m, &r, &p, &a, laplace ? &ctl : NULL, &report_bytes);
        dpm_fa_estimate_t e;
        assert_int_equal(dpm_fa_estimate(&p, &a, &f.mom, 0.95, &e), DPM_OK);
        res.valid += (uint32_t)e.valid;
        res.covered += e.ci_lo <= res.truth && res.truth <= e.ci_hi;
        double err = e.auc_raw - res.truth;
        sum_err += err;
        sum_sq += err * err;
        sum_sd += e.sd;
        double sd_ctl = 0;
        if (laplace) {
            dpm_fa_params_t p2 = p;
            p2.eps *= 2u;
            dpm_fa_estimate_t e2;
            assert_int_equal(dpm_fa_estimate(&p2, &ctl, &f.mom, 0.95, &e2), DPM_OK);
            sd_ctl = e2.sd;
        } else {
            sd_ctl = dpm_fa_sd_rr_paper_eq7(e.m, e.p, e.n, (double)c.eps.q16 / 65536.0);
        }
        res.covered_control += fabs(err) <= e.z * sd_ctl;
    }
    res.mean_err = sum_err / RUNS;
    res.rmse = sqrt(sum_sq / RUNS);
    res.mean_sd = sum_sd / RUNS;
    res.upload_bytes = (double)upload_bytes / RUNS / cfg->k;
    res.reply_bytes = (double)reply_bytes / RUNS / cfg->k;
    res.report_bytes = (double)report_bytes / RUNS / cfg->k;
    fa_fix_free(&f);
    return res;
}

static void check(const config_t *cfg, uint64_t seed)
{
    result_t r = run_config(cfg, seed);
    double cov = (double)r.covered / RUNS, ctl = (double)r.covered_control / RUNS;
    print_message("# %-34s eps %-4s K %5u M %5u: coverage %5.1f%% (control %5.1f%%), AUC %.4f, "
                  "bias %+.2f sd, rmse %.2e vs mean analytic sd %.2e; bytes per device: upload "
                  "%.0f, reply %.0f, report %.0f\n",
                  cfg->name, cfg->eps, cfg->k, cfg->m, 100 * cov, 100 * ctl, r.truth,
                  r.mean_err / r.mean_sd, r.rmse, r.mean_sd, r.upload_bytes, r.reply_bytes,
                  r.report_bytes);
    char what[80];
    snprintf(what, sizeof(what), "%s eps %s", cfg->name, cfg->eps);
    test_figure_of(what, "cover", cov, "share");
    test_figure_of(what, "cover_control", ctl, "share");
    test_figure_of(what, "auc", r.truth, "auc");
    test_figure_of(what, "bias_sd", r.mean_err / r.mean_sd, "sd");
    test_figure_of(what, "rmse_over_sd", r.rmse / r.mean_sd, "1");
    assert_int_equal(r.valid, RUNS);
    assert_true(cov >= 0.93 && cov <= 0.97);
    assert_true(ctl < 0.93); /* the negative control: a too narrow interval is caught */
    /* the analytic sd is the spread it claims: rmse within 10% (2,000 runs: ~1.6% sd) */
    assert_true(fabs(r.rmse / r.mean_sd - 1.0) < 0.10);
}

static const config_t CONFIGS[] = {
    {"fedauc_rr", DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, "1", 250, 10000, FA_IID},
    {"fedauc_rr", DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, "0.5", 250, 10000, FA_IID},
    {"LocalLaplace IID", DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768, "1", 125, 5000, FA_IID},
    {"LocalLaplace non-IID", DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_LOCAL, 32768, "1", 125, 5000,
     FA_NONIID},
    {"GlobalLaplace IID", DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_GLOBAL, 32768, "1", 125, 5000,
     FA_IID},
    {"Orthogonal (share 0.3) IID", DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ORTHOGONAL, 19661, "1", 125,
     5000, FA_IID},
    {"Adaptive IID", DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, 0, "1", 125, 5000, FA_IID},
    {"Adaptive non-IID", DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, 0, "1", 125, 5000, FA_NONIID},
};

#define CONFIG_TEST(i)                                                                             \
    static void test_config_##i(void **state)                                                      \
    {                                                                                              \
        (void)state;                                                                               \
        if (i == 0) {                                                                              \
            test_figure("runs", RUNS, "runs");                                                     \
            test_figure("level", 0.95, "share");                                                   \
        }                                                                                          \
        check(&CONFIGS[i], 500 + i);                                                               \
    }
CONFIG_TEST(0)
CONFIG_TEST(1)
CONFIG_TEST(2)
CONFIG_TEST(3)
CONFIG_TEST(4)
CONFIG_TEST(5)
CONFIG_TEST(6)
CONFIG_TEST(7)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_0), cmocka_unit_test(test_config_1),
        cmocka_unit_test(test_config_2), cmocka_unit_test(test_config_3),
        cmocka_unit_test(test_config_4), cmocka_unit_test(test_config_5),
        cmocka_unit_test(test_config_6), cmocka_unit_test(test_config_7),
    };
    return cmocka_run_group_tests_name("fedauc_coverage", tests, NULL, NULL);
}
