/* SPDX-License-Identifier: Apache-2.0 */
/* The leader and the helper in one process (host-sim/aggregator/pair.h), on reports that devices
 * made through the SDK's public device API (dpm_device_dap_report_sumvec) for a simulated task
 * (host-sim/aggregator/task.h, the devices of aggregator/device.h):
 *   - without noise the aggregate shares unshard to exactly the devices' summed measurements
 *     (difference 0: FHAUC's claim, through Prio3, HPKE and DAP framing);
 *   - a replayed report id, a flipped byte of either sealed share, a truncated report: each
 *     rejected, counted by its ReportError, never aggregated;
 *   - a client whose public share lies about the helper's joint-randomness part: rejected as
 *     vdaf_verify_error (the helper's proof query runs on other joint randomness, so the proof
 *     check fails before either joint-randomness check), and neither aggregate share moves;
 *   - the order is kept: no report after release, no collection before it, none below the
 *     task's minimum batch size;
 *   - the released noise: over 1,500 releases, each entry's collected value minus the true sum
 *     has mean 0 (|z| < 5) and the variance of two discrete Laplace draws of scale
 *     sensitivity / eps (chi-square band at alpha 1e-6); negative control: one aggregator's
 *     variance is rejected. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/device.h"
#include "aggregator/pair.h"
#include "aggregator/task.h"
#include "stat_gof.h"
#include "test_rng.h"

#define LENGTH 6u
#define MAXV 20u
#define DEVICES 150u
#define MIN_BATCH 100u

typedef struct {
    agg_task_t task;
    dpm_dap_task_t t;
    agg_device_t *dev;
    uint8_t *report; /* the last device's report */
    size_t report_len;
} fixture_t;

static fixture_t *fixture(dpm_eps_t eps)
{
    fixture_t *f = calloc(1, sizeof(*f));
    dpm_prio3_t v;
    const char *why = NULL;
    assert_non_null(f);
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, LENGTH, MAXV, 4), DPM_OK);
    assert_int_equal(agg_task_make(&f->task, &v, eps, MIN_BATCH, 77, &why), 0);
    assert_int_equal(agg_task_decode(&f->task, &f->t), DPM_OK);
    f->dev = agg_device_new(&f->task, &f->t);
    assert_non_null(f->dev);
    return f;
}

static void fixture_free(fixture_t *f)
{
    agg_device_free(f->dev);
    free(f);
}

/* Device `i`'s report of measurement m, made by the SDK's device calls (aggregator/device.h). */
static void device_report(fixture_t *f, uint64_t i, const uint64_t *m)
{
    test_rng_t t;
    test_rng_seed(&t, 1000u + i);
    const char *why = NULL;
    dpm_status_t st = agg_device_sumvec(f->dev, &f->task, test_rng_port(&t), m, LENGTH, &why);
    if (st != DPM_OK) {
        fail_msg("device %llu: %s (%s)", (unsigned long long)i, dpm_strerror(st),
                 why != NULL ? why : "");
    }
    f->report = f->dev->report;
    f->report_len = f->dev->report_len;
}

static void measurement(uint64_t i, uint64_t *m)
{
    for (uint32_t k = 0; k < LENGTH; k++) {
        m[k] = (i * 7u + k * 3u) % (MAXV + 1u);
    }
}

/* DEVICES honest reports into a fresh pair; want gets their sum. */
static void honest(fixture_t *f, agg_pair_t *a, int64_t *want)
{
    assert_int_equal(agg_pair_init(a, &f->t, &f->task.key[0], &f->task.key[1], f->task.verify_key),
                     0);
    memset(want, 0, LENGTH * sizeof(*want));
    for (uint64_t i = 0; i < DEVICES; i++) {
        uint64_t m[LENGTH];
        uint8_t code = 0xFF;
        measurement(i, m);
        device_report(f, i, m);
        assert_int_equal(agg_pair_add(a, f->report, f->report_len, &code), DPM_OK);
        assert_int_equal(code, 0);
        for (uint32_t k = 0; k < LENGTH; k++) {
            want[k] += (int64_t)m[k];
        }
    }
    assert_int_equal(a->aggregated, DEVICES);
}

static void exact_without_noise(void **state)
{
    (void)state;
    fixture_t *f = fixture(DPM_EPS_ONE);
    agg_pair_t a;
    int64_t want[LENGTH];
    uint64_t got[LENGTH];
    honest(f, &a, want);
    /* the shares as they are before either aggregator's noise: the exact sums */
    assert_int_equal(agg_pair_unnoised(&a, got, LENGTH), DPM_OK);
    for (uint32_t k = 0; k < LENGTH; k++) {
        assert_int_equal((int64_t)got[k], want[k]);
    }
    /* no collection before release; none after it of more reports */
    int64_t sums[LENGTH];
    assert_int_equal(agg_pair_collect(&a, sums, LENGTH), DPM_ERR_PARAM);
    test_rng_t t1, t2;
    dpm_rng_t p1, p2;
    dpm_rand_t r1, r2;
    assert_int_equal(test_rand_init(&r1, &t1, &p1, 5), DPM_OK);
    assert_int_equal(test_rand_init(&r2, &t2, &p2, 6), DPM_OK);
    assert_int_equal(agg_pair_release(&a, 2u * MAXV * LENGTH, &r1, &r2), DPM_OK);
    assert_int_equal(agg_pair_unnoised(&a, got, LENGTH), DPM_ERR_PARAM); /* released: noised */
    assert_int_equal(agg_pair_release(&a, 2u * MAXV * LENGTH, &r1, &r2), DPM_ERR_PARAM);
    assert_int_equal(agg_pair_add(&a, f->report, f->report_len, NULL), DPM_ERR_PARAM);
    assert_int_equal(agg_pair_collect(&a, sums, LENGTH), DPM_OK);
    agg_pair_free(&a);
    fixture_free(f);
}

static void bad_reports_are_counted_never_aggregated(void **state)
{
    (void)state;
    fixture_t *f = fixture(DPM_EPS_ONE);
    agg_pair_t a;
    uint64_t m[LENGTH];
    uint8_t code = 0;
    assert_int_equal(agg_pair_init(&a, &f->t, &f->task.key[0], &f->task.key[1], f->task.verify_key),
                     0);
    measurement(3, m);
    device_report(f, 3, m);
    uint8_t *good = malloc(f->report_len);
    size_t len = f->report_len;
    memcpy(good, f->report, len);
    assert_int_equal(agg_pair_add(&a, good, len, &code), DPM_OK);
    /* the same report again: a replay */
    assert_int_equal(agg_pair_add(&a, good, len, &code), DPM_ERR_PROTOCOL);
    assert_int_equal(code, AGG_REPORT_REPLAYED);
    /* a flipped byte at the end (the helper's tag) and in the middle (a sealed share) */
    device_report(f, 4, m);
    size_t at[3] = {f->report_len - 1u, f->report_len / 2u, f->report_len - 40u};
    for (int i = 0; i < 3; i++) {
        f->report[at[i]] ^= 0x10;
        assert_int_not_equal(agg_pair_add(&a, f->report, f->report_len, &code), DPM_OK);
        assert_int_equal(code, 5); /* hpke_decrypt_error */
        f->report[at[i]] ^= 0x10;
    }
    /* truncated: no report */
    assert_int_equal(agg_pair_add(&a, f->report, f->report_len - 7u, &code), DPM_ERR_PROTOCOL);
    assert_int_equal(code, 8); /* invalid_message */
    assert_int_equal(a.aggregated, 1);
    assert_int_equal(a.rejected[AGG_REPORT_REPLAYED], 1);
    assert_int_equal(a.rejected[5], 3);
    assert_int_equal(a.rejected[8], 1);
    /* the intact one still counts once */
    assert_int_equal(agg_pair_add(&a, f->report, f->report_len, &code), DPM_OK);
    assert_int_equal(a.aggregated, 2);
    /* below the minimum batch size: no collection */
    test_rng_t t1, t2;
    dpm_rng_t p1, p2;
    dpm_rand_t r1, r2;
    int64_t sums[LENGTH];
    assert_int_equal(test_rand_init(&r1, &t1, &p1, 7), DPM_OK);
    assert_int_equal(test_rand_init(&r2, &t2, &p2, 8), DPM_OK);
    assert_int_equal(agg_pair_release(&a, 2u * MAXV * LENGTH, &r1, &r2), DPM_OK);
    assert_int_equal(agg_pair_collect(&a, sums, LENGTH), DPM_ERR_POLICY);
    free(good);
    agg_pair_free(&a);
    fixture_free(f);
}

/* A dishonest client: the seal hook flips a bit of the helper's joint-randomness part in the
 * public share before the shares are sealed (so both decrypt: the lie is in their associated
 * data too). */
typedef struct {
    dpm_hpke_sealer_t real;
    uint8_t *flip;
    int done;
} lying_t;

static dpm_status_t lying_seal(void *ctx, const dpm_hpke_config_t *cfg, const dpm_rng_t *rng,
                               const uint8_t *info, size_t info_len, const dpm_span_t *aad,
                               size_t naad, uint8_t *buf, size_t len, uint8_t enc[DPM_HPKE_NENC],
                               uint8_t tag[DPM_HPKE_NT])
{
    lying_t *l = ctx;
    if (!l->done) {
        *l->flip ^= 0x01;
        l->done = 1;
    }
    return l->real.seal(l->real.ctx, cfg, rng, info, info_len, aad, naad, buf, len, enc, tag);
}

static void a_lying_public_share_moves_no_share(void **state)
{
    (void)state;
    fixture_t *f = fixture(DPM_EPS_ONE);
    agg_pair_t a;
    uint64_t m[LENGTH], before[LENGTH], after[LENGTH];
    uint8_t code = 0;
    assert_int_equal(agg_pair_init(&a, &f->t, &f->task.key[0], &f->task.key[1], f->task.verify_key),
                     0);
    measurement(5, m);
    device_report(f, 5, m); /* one honest report first */
    assert_int_equal(agg_pair_add(&a, f->report, f->report_len, &code), DPM_OK);
    assert_int_equal(agg_pair_unnoised(&a, before, LENGTH), DPM_OK);
    dpm_dap_layout_t l;
    dpm_dap_report_layout(&f->t.vdaf, &l);
    assert_true(l.public_share_len == 2u * 32u); /* SumVec: a joint-randomness part each */
    lying_t lie = {f->dev->sealer, f->dev->report + l.public_share + 32u, 0};
    f->dev->sealer.seal = lying_seal;
    f->dev->sealer.ctx = &lie;
    device_report(f, 6, m);
    assert_int_equal(agg_pair_add(&a, f->report, f->report_len, &code), DPM_ERR_VERIFY);
    assert_int_equal(code, 6); /* vdaf_verify_error */
    assert_int_equal(a.aggregated, 1);
    assert_int_equal(agg_pair_unnoised(&a, after, LENGTH), DPM_OK);
    assert_memory_equal(before, after, sizeof(before)); /* no share moved */
    agg_pair_free(&a);
    fixture_free(f);
}

/* Over many releases of the same batch, the collected value minus the true sum of each entry is
 * the two aggregators' noise. */
static void released_noise_is_two_aggregators(void **state)
{
    (void)state;
    const uint32_t trials = 1500;
    const uint64_t sensitivity = 2u * MAXV * LENGTH;
    fixture_t *f = fixture(DPM_EPS_ONE / 2u); /* eps 1/2: scale 480 */
    agg_pair_t a;
    int64_t want[LENGTH], sums[LENGTH];
    honest(f, &a, want);
    size_t n = 2u * f->t.vdaf.out_share_bytes;
    uint8_t *before = malloc(n);
    memcpy(before, a.agg_share, n);
    double sum = 0.0, sq = 0.0;
    uint32_t cnt = 0;
    for (uint32_t r = 0; r < trials; r++) {
        test_rng_t t1, t2;
        dpm_rng_t p1, p2;
        dpm_rand_t r1, r2;
        assert_int_equal(test_rand_init(&r1, &t1, &p1, 100u + 2u * r), DPM_OK);
        assert_int_equal(test_rand_init(&r2, &t2, &p2, 101u + 2u * r), DPM_OK);
        memcpy(a.agg_share, before, n); /* the same batch, released again */
        a.released = 0;
        assert_int_equal(agg_pair_release(&a, sensitivity, &r1, &r2), DPM_OK);
        assert_int_equal(agg_pair_collect(&a, sums, LENGTH), DPM_OK);
        for (uint32_t k = 0; k < LENGTH; k++) {
            double z = (double)(sums[k] - want[k]);
            sum += z;
            sq += z * z;
            cnt++;
        }
    }
    double scale = (double)sensitivity / 0.5, p = exp(-1.0 / scale);
    double var2 = 2.0 * 2.0 * p / ((1.0 - p) * (1.0 - p)); /* two draws */
    double mean = sum / cnt, z = mean / sqrt(var2 / cnt), ratio = (sq / cnt) / var2;
    double lo = stat_chi2_isf(1.0 - 5e-7, cnt) / cnt, hi = stat_chi2_isf(5e-7, cnt) / cnt;
    /* discrete Laplace is heavier-tailed than a normal, so its sample variance spreads wider
     * than chi-square's: Var(s²) = (kurtosis - 1) var² / n, kurtosis about 6 for one draw and
     * 4.5 for the sum of two, against 3 for a normal; the band is widened by sqrt(5 / 2) */
    double wlo = 1.0 - (1.0 - lo) * sqrt(2.5), whi = 1.0 + (hi - 1.0) * sqrt(2.5);
    print_message("# %u noise values: mean %.2f (z %.2f), variance / two draws' %.4f, band "
                  "[%.4f, %.4f]; / one draw's %.4f\n",
                  cnt, mean, z, ratio, wlo, whi, 2.0 * ratio);
    assert_true(fabs(z) < 5.0);
    assert_true(ratio >= wlo && ratio <= whi);
    assert_false(2.0 * ratio >= wlo && 2.0 * ratio <= whi); /* one aggregator's: rejected */
    free(before);
    agg_pair_free(&a);
    fixture_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exact_without_noise),
        cmocka_unit_test(bad_reports_are_counted_never_aggregated),
        cmocka_unit_test(a_lying_public_share_moves_no_share),
        cmocka_unit_test(released_noise_is_two_aggregators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
