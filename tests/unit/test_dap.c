/* SPDX-License-Identifier: Apache-2.0 */
/* The two-aggregator mode end to end (dpm/expert/dap.h, dpm/expert/device_dap.h, dpm/port_dap.h): a
 * device builds a DAP report for each Prio3 variant in one call, the aggregators open both input
 * shares, verify the proof and recover exactly the measurement; the task's encoding round-trips
 * and bad tasks are refused by name; every bad input of the device call gets its status with
 * nothing charged and nothing queued; a second report in a period is refused; failures after
 * the charge leave the ε spent and nothing queued; and every byte of a sealed report, changed,
 * is rejected by the aggregators (fault injection), never aggregated. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dap_fixture.h"
#include "dpm/dpm.h"
#include "dpm/port_hpke.h"
#include "dpm/expert/budget.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/device_dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/vdaf.h"
#include "fake_storage.h"
#include "test_rng.h"

/* Fault injection covers every byte natively; emulated, every 29th byte, which still hits every
 * field of the report: on a Cortex-M under QEMU (an X25519 is 4.3 M instructions there, two per
 * trial), and under qemu-user, which make cross tells by DPM_STAT_DIVISOR (every byte took
 * 151 s on armhf, the longest of its suites). */
static size_t flip_stride(void)
{
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
    return 29u;
#else
    const char *d = getenv("DPM_STAT_DIVISOR");
    return d != NULL && strtol(d, NULL, 10) > 1 ? 29u : 1u;
#endif
}

typedef dap_device_fixture_t fixture_t;

/* A device whose policy names the task's aggregators (ε up to 1, batches of at least 100),
 * their HPKE configurations with the AEADs given. */
static fixture_t *open_fixture_aead(const dpm_prio3_t *v, uint16_t leader_aead,
                                    uint16_t helper_aead)
{
    fixture_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    assert_int_equal(
        dap_task_fixture_aead(&f->tf, v, DPM_EPS_ONE / 2, 1000, 5, leader_aead, helper_aead), 0);
    assert_int_equal(dap_device_fixture_start(f, 11, DPM_EPS_Q16(0)), DPM_OK);
    return f;
}

/* The same with AES-128-GCM for both (DAP's mandatory suite). */
static fixture_t *open_fixture(const dpm_prio3_t *v)
{
    return open_fixture_aead(v, DPM_HPKE_AEAD_AES_128_GCM, DPM_HPKE_AEAD_AES_128_GCM);
}

static void close_fixture(fixture_t *f)
{
    dap_device_fixture_stop(f);
    free(f);
}

/* ε the ledger holds for the task in period p. */
static dpm_eps_t spent(fixture_t *f, uint32_t p)
{
    dpm_eps_t e = 0;
    assert_int_equal(dpm_ledger_spent(&f->dev.ledger, dpm_dap_ledger_id(&f->tf.task), p, &e),
                     DPM_OK);
    return e;
}

/* One report through the device call for the task's variant. */
static dpm_status_t report(fixture_t *f, uint32_t period, const uint64_t *m, size_t n,
                           dpm_report_info_t *info, const char **reason)
{
    const dpm_dap_task_t *t = &f->tf.task;
    switch (t->vdaf.kind) {
    case DPM_PRIO3_COUNT:
        return dpm_device_dap_report_count(&f->dev, &f->io, t, period, (uint32_t)m[0], info,
                                           reason);
    case DPM_PRIO3_SUM:
        return dpm_device_dap_report_sum(&f->dev, &f->io, t, period, m[0], info, reason);
    case DPM_PRIO3_SUMVEC:
        return dpm_device_dap_report_sumvec(&f->dev, &f->io, t, period, m, n, info, reason);
    case DPM_PRIO3_HISTOGRAM:
        return dpm_device_dap_report_histogram(&f->dev, &f->io, t, period, (uint32_t)m[0], info,
                                               reason);
    default: return dpm_device_dap_report_multihot(&f->dev, &f->io, t, period, m, n, info, reason);
    }
}

static dpm_prio3_t hist16(void)
{
    dpm_prio3_t v;
    assert_int_equal(dpm_prio3_histogram_init(&v, 2, 16, 4), DPM_OK);
    return v;
}

static dpm_prio3_t sumvec48(void)
{
    dpm_prio3_t v;
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, 48, 255, 26), DPM_OK);
    return v;
}

/* Every variant, with each AEAD (AES-128-GCM both; ChaCha20-Poly1305 for the leader and
 * AES-128-GCM for the helper; ChaCha20-Poly1305 both): the device's report opens and
 * verifies, and the aggregate of this one report is the measurement; its bytes are
 * DPM_DAP_REPORT_BYTES of the shape whatever the AEAD. */
static void test_every_variant_end_to_end(void **state)
{
    (void)state;
    dpm_prio3_t v[5];
    assert_int_equal(dpm_prio3_count_init(&v[0], 2), DPM_OK);
    assert_int_equal(dpm_prio3_sum_init(&v[1], 2, 1000), DPM_OK);
    v[2] = sumvec48();
    v[3] = hist16();
    assert_int_equal(dpm_prio3_multihot_init(&v[4], 2, 10, 3, 4), DPM_OK);
    static const uint64_t m_count[1] = {1}, m_sum[1] = {777}, m_hist[1] = {13},
                          m_multi[10] = {0, 1, 0, 0, 1, 0, 0, 0, 1, 0};
    uint64_t m_vec[48];
    for (int i = 0; i < 48; i++) {
        m_vec[i] = (uint64_t)(i * 37 % 256);
    }
    const uint64_t *m[5] = {m_count, m_sum, m_vec, m_hist, m_multi};
    const size_t n[5] = {1, 1, 48, 1, 10};
    static const uint16_t aeads[3][2] = {
        {DPM_HPKE_AEAD_AES_128_GCM, DPM_HPKE_AEAD_AES_128_GCM},
        {DPM_HPKE_AEAD_CHACHA20_POLY1305, DPM_HPKE_AEAD_AES_128_GCM},
        {DPM_HPKE_AEAD_CHACHA20_POLY1305, DPM_HPKE_AEAD_CHACHA20_POLY1305}};
    for (int run = 0; run < 15; run++) {
        const int k = run % 5, a = run / 5;
        fixture_t *f = open_fixture_aead(&v[k], aeads[a][0], aeads[a][1]);
        dpm_report_info_t info;
        const char *reason = NULL;
        assert_int_equal(report(f, 7, m[k], n[k], &info, &reason), DPM_OK);
        assert_int_equal(f->outbox.count, 1);
        assert_int_equal(info.bytes, dpm_dap_report_bytes(&v[k]));
        assert_int_equal(info.eps_spent, DPM_EPS_ONE / 2);
        assert_int_equal(spent(f, 7), DPM_EPS_ONE / 2);
        /* the queued bytes are the report */
        assert_memory_equal(f->outbox_mem + 4, f->report, info.bytes);
        assert_memory_equal(info.report_id, f->report, 16);
        uint64_t result[48] = {0};
        const char *where = NULL;
        dpm_status_t st = dap_aggregate_one(&f->tf, f->report, info.bytes, result, 48, &where);
        if (st != DPM_OK) {
            fail_msg("variant %d, AEADs %u/%u: rejected at %s: %s", k, aeads[a][0], aeads[a][1],
                     where, dpm_strerror(st));
        }
        /* negative control: the leader's key opens nothing sealed with the other AEAD */
        if (aeads[a][0] != aeads[a][1]) {
            f->tf.leader_key.aead_id = aeads[a][1];
            assert_int_equal(dap_aggregate_one(&f->tf, f->report, info.bytes, result, 48, &where),
                             DPM_ERR_CORRUPT);
            assert_string_equal(where, "leader open");
        }
        if (v[k].kind == DPM_PRIO3_HISTOGRAM) {
            for (uint32_t b = 0; b < 16; b++) {
                assert_int_equal(result[b], b == 13);
            }
        } else {
            for (size_t i = 0; i < v[k].output_len; i++) {
                assert_int_equal(result[i], m[k][i]);
            }
        }
        close_fixture(f);
    }
    /* the size macros agree with the run-time sizes */
    assert_int_equal(dpm_dap_report_bytes(&v[2]),
                     DPM_DAP_REPORT_BYTES(DPM_PRIO3_SUMVEC_SHAPE(2, 48, 8, 26)));
    assert_int_equal(dpm_dap_report_bytes(&v[3]),
                     DPM_DAP_REPORT_BYTES(DPM_PRIO3_HISTOGRAM_SHAPE(2, 16, 4)));
}

/* The report's frame is the draft's: metadata, lengths, config ids, enc lengths. */
static void test_report_layout(void **state)
{
    (void)state;
    dpm_prio3_t v = hist16();
    fixture_t *f = open_fixture(&v);
    dpm_report_info_t info;
    uint64_t m = 3;
    assert_int_equal(report(f, 1, &m, 1, &info, NULL), DPM_OK);
    const uint8_t *r = f->report;
    uint64_t time = 0;
    for (int i = 0; i < 8; i++) {
        time = time << 8 | r[16 + i];
    }
    assert_int_equal(time, DAP_DEVICE_NOW / 3600);
    assert_int_equal(r[24] << 8 | r[25], 0); /* no public extensions */
    dpm_dap_report_view_t view;
    assert_int_equal(dpm_dap_report_decode(r, info.bytes, &view, NULL), DPM_OK);
    assert_int_equal(view.public_share.len, v.public_share_bytes);
    assert_int_equal(view.share[0].config_id, 1);
    assert_int_equal(view.share[1].config_id, 2);
    assert_int_equal(view.share[0].ciphertext.len, 6 + v.leader_share_bytes);
    assert_int_equal(view.share[1].ciphertext.len, 6 + v.helper_share_bytes);
    /* a second report differs in id, ephemeral keys and shares */
    const uint8_t *first = f->outbox_mem + 4;
    assert_int_equal(report(f, 2, &m, 1, &info, NULL), DPM_OK);
    assert_memory_not_equal(first, f->report, 16);
    close_fixture(f);
}

/* Bad input before the charge: each gets its status and reason, nothing is charged or queued,
 * and right after, the same call with good input succeeds (the negative control). */
static void expect_refused(fixture_t *f, dpm_status_t want, const uint64_t *m, size_t n)
{
    const char *reason = NULL;
    dpm_status_t st = report(f, 3, m, n, NULL, &reason);
    if (st != want) {
        fail_msg("want %s, got %s (%s)", dpm_strerror(want), dpm_strerror(st),
                 reason ? reason : "no reason");
    }
    assert_non_null(reason);
    assert_int_equal(spent(f, 3), 0);
    assert_int_equal(f->outbox.count, 0);
}

static void test_bad_input_spends_nothing(void **state)
{
    (void)state;
    dpm_prio3_t v = sumvec48();
    fixture_t *f = open_fixture(&v);
    uint64_t m[49];
    for (int i = 0; i < 49; i++) {
        m[i] = 200;
    }
    /* wrong lengths */
    expect_refused(f, DPM_ERR_PARAM, m, 47);
    expect_refused(f, DPM_ERR_PARAM, m, 49);
    /* a value out of range (the last one, so a check that stops early misses it) */
    m[47] = 256;
    expect_refused(f, DPM_ERR_PARAM, m, 48);
    m[47] = 255;
    /* the wrong variant's call */
    const char *reason = NULL;
    assert_int_equal(
        dpm_device_dap_report_histogram(&f->dev, &f->io, &f->tf.task, 3, 1, NULL, &reason),
        DPM_ERR_PARAM);
    /* buffers too small */
    f->io.report_cap--;
    expect_refused(f, DPM_ERR_BUFFER, m, 48);
    f->io.report_cap++;
    f->io.work_words--;
    expect_refused(f, DPM_ERR_BUFFER, m, 48);
    f->io.work_words++;
    /* the outbox full */
    f->outbox.cap = f->outbox.used + dpm_dap_report_bytes(&v) + 3;
    expect_refused(f, DPM_ERR_BUFFER, m, 48);
    f->outbox.cap = DAP_DEVICE_OUTBOX;
    /* no wall clock; a time outside the task's interval */
    f->dev.clock.wall_time_s = NULL;
    expect_refused(f, DPM_ERR_PARAM, m, 48);
    f->dev.clock.wall_time_s = dap_fixed_wall_clock;
    dpm_dap_task_t saved = f->tf.task;
    f->tf.task.has_interval = 1;
    f->tf.task.interval_start = DAP_DEVICE_NOW / 3600 + 1;
    f->tf.task.interval_duration = 10;
    expect_refused(f, DPM_ERR_PARAM, m, 48);
    f->tf.task = saved;
    /* a task that was not accepted (no encoding to bind) */
    f->tf.task.config = NULL;
    expect_refused(f, DPM_ERR_PARAM, m, 48);
    f->tf.task = saved;
    /* no seal hook */
    f->io.sealer.seal = NULL;
    expect_refused(f, DPM_ERR_PARAM, m, 48);
    f->io.sealer = dpm_hpke_sealer();
    /* the negative control: the same call, repaired, succeeds and charges */
    assert_int_equal(report(f, 3, m, 48, NULL, NULL), DPM_OK);
    assert_int_equal(spent(f, 3), DPM_EPS_ONE / 2);
    assert_int_equal(f->outbox.count, 1);
    close_fixture(f);
}

/* Measurements that do not fit each variant. */
static void test_measurement_out_of_range(void **state)
{
    (void)state;
    dpm_prio3_t v;
    const uint64_t two = 2, big = 1001, sixteen = 16;
    assert_int_equal(dpm_prio3_count_init(&v, 2), DPM_OK);
    assert_int_equal(dpm_dap_measurement_check(&v, &two, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sum_init(&v, 2, 1000), DPM_OK);
    assert_int_equal(dpm_dap_measurement_check(&v, &big, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_dap_measurement_check(&v, &two, 1), DPM_OK);
    v = hist16();
    assert_int_equal(dpm_dap_measurement_check(&v, &sixteen, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_dap_measurement_check(&v, &big, 1), DPM_ERR_PARAM);
    const uint64_t fifteen = 15;
    assert_int_equal(dpm_dap_measurement_check(&v, &fifteen, 1), DPM_OK);
    assert_int_equal(dpm_prio3_multihot_init(&v, 2, 4, 2, 2), DPM_OK);
    const uint64_t three_on[4] = {1, 1, 1, 0}, two_on[4] = {1, 0, 1, 0}, not_bit[4] = {0, 2, 0, 0},
                   wraps[4] = {UINT64_MAX, 1, 0, 0};
    assert_int_equal(dpm_dap_measurement_check(&v, three_on, 4), DPM_ERR_PARAM);
    assert_int_equal(dpm_dap_measurement_check(&v, not_bit, 4), DPM_ERR_PARAM);
    assert_int_equal(dpm_dap_measurement_check(&v, wraps, 4), DPM_ERR_PARAM);
    assert_int_equal(dpm_dap_measurement_check(&v, two_on, 4), DPM_OK);
    /* a variant DAP tasks do not use */
    assert_int_equal(dpm_prio3_higher_degree_init(&v, 2), DPM_OK);
    assert_int_equal(dpm_dap_measurement_check(&v, &two, 1), DPM_ERR_PARAM);
}

/* Participation: one report per task and period. */
static void test_one_report_per_period(void **state)
{
    (void)state;
    dpm_prio3_t v = hist16();
    fixture_t *f = open_fixture(&v);
    uint64_t m = 2;
    const char *reason = NULL;
    dpm_report_info_t info;
    assert_int_equal(report(f, 10, &m, 1, &info, NULL), DPM_OK);
    assert_int_equal(info.spent_in_period, DPM_EPS_ONE / 2);
    assert_int_equal(report(f, 10, &m, 1, NULL, &reason), DPM_ERR_BUDGET);
    assert_non_null(reason);
    assert_int_equal(f->outbox.count, 1);
    assert_int_equal(report(f, 11, &m, 1, NULL, NULL), DPM_OK);            /* the next period */
    assert_int_equal(report(f, 10, &m, 1, NULL, &reason), DPM_ERR_BUDGET); /* closed */
    assert_int_equal(f->outbox.count, 2);
    close_fixture(f);
}

/* The device cap (dpm_policy_t.device) counts two-aggregator participation like every other
 * charge: with a cap of 1 and a task of central ε 1/2, the third period's report is refused
 * before the charge, nothing spent or queued, and the device says why (before the cap reached
 * these calls, a task's reports were charged to its own budget only: all three went out). */
static void test_device_cap_counts_tasks(void **state)
{
    (void)state;
    dpm_prio3_t v = hist16();
    fixture_t *f = open_fixture(&v);
    f->dev.policy.device.max_eps = DPM_EPS(1);
    uint64_t m = 3;
    dpm_report_info_t info;
    assert_int_equal(report(f, 1, &m, 1, &info, NULL), DPM_OK);
    assert_int_equal(info.device_spent, DPM_EPS_ONE / 2);
    assert_int_equal(report(f, 2, &m, 1, &info, NULL), DPM_OK);
    assert_int_equal(info.device_spent, DPM_EPS_ONE);
    const char *reason = NULL;
    assert_int_equal(report(f, 3, &m, 1, &info, &reason), DPM_ERR_BUDGET);
    assert_non_null(reason);
    assert_string_equal(dpm_device_why(&f->dev), reason);
    assert_int_equal(spent(f, 3), 0);
    assert_int_equal(f->outbox.count, 2);
    /* an ε the app wrote as a plain integer (1 = 2^-16) is an invalid policy, not a tiny one */
    f->dev.policy.device.max_eps = DPM_EPS(8);
    f->dap.max_central_eps = DPM_EPS_Q16(1);
    assert_int_equal(report(f, 3, &m, 1, NULL, &reason), DPM_ERR_PARAM);
    assert_non_null(strstr(reason, "DPM_EPS"));
    assert_int_equal(f->outbox.count, 2);
    close_fixture(f);
}

/* After the charge: a failing random source or outbox leaves the ε spent (the safe direction),
 * nothing queued, and no share in the caller's buffer. */
static void test_failures_after_the_charge(void **state)
{
    (void)state;
    dpm_prio3_t v = hist16();
    fixture_t *f = open_fixture(&v);
    uint64_t m = 4;
    f->failing.inner = f->t;
    f->failing.fail_at_call = 0;
    f->dev.rng = failing_rng_port(&f->failing);
    assert_int_equal(report(f, 5, &m, 1, NULL, NULL), DPM_ERR_RNG);
    assert_int_equal(spent(f, 5), DPM_EPS_ONE / 2);
    assert_int_equal(f->outbox.count, 0);
    f->dev.rng = test_rng_port(&f->t);
    f->outbox.put_status = DPM_ERR_STORAGE;
    assert_int_equal(report(f, 6, &m, 1, NULL, NULL), DPM_ERR_STORAGE);
    assert_int_equal(spent(f, 6), DPM_EPS_ONE / 2);
    assert_int_equal(f->outbox.count, 0);
    for (size_t i = 0; i < dpm_dap_report_bytes(&v); i++) {
        assert_int_equal(f->report[i], 0);
    }
    close_fixture(f);
}

/* Encapsulated ahead: a report sealed from the pool opens and verifies like any other, the
 * pool's contexts are used once, and without them the report is still made (inline). */
static void test_pool_sealer(void **state)
{
    (void)state;
    dpm_prio3_t v = sumvec48();
    fixture_t *f = open_fixture(&v);
    dpm_hpke_encap_t slots[4];
    dpm_hpke_pool_t pool;
    assert_int_equal(dpm_hpke_pool_init(&pool, slots, 4), DPM_OK);
    dpm_rng_t rng = test_rng_port(&f->t);
    assert_int_equal(dpm_dap_pool_fill(&pool, &f->tf.task, &rng), DPM_OK);
    assert_int_equal(dpm_dap_pool_fill(&pool, &f->tf.task, &rng), DPM_OK);
    assert_int_equal(dpm_dap_pool_fill(&pool, &f->tf.task, &rng), DPM_ERR_BUFFER); /* full */
    f->io.sealer = dpm_hpke_pool_sealer(&pool);
    uint64_t m[48], result[48];
    for (int i = 0; i < 48; i++) {
        m[i] = (uint64_t)(255 - i);
    }
    for (uint32_t period = 0; period < 3; period++) {
        dpm_report_info_t info;
        assert_int_equal(report(f, period, m, 48, &info, NULL), DPM_OK);
        assert_int_equal(dap_aggregate_one(&f->tf, f->report, info.bytes, result, 48, NULL),
                         DPM_OK);
        assert_memory_equal(result, m, sizeof(m));
    }
    assert_int_equal(pool.used, 4);   /* two reports from the pool */
    assert_int_equal(pool.missed, 2); /* the third encapsulated inline */
    close_fixture(f);
}

/* The policy: every rule refuses by name before anything is spent. */
static void test_policy_refuses(void **state)
{
    (void)state;
    dpm_prio3_t v = hist16();
    fixture_t *f = open_fixture(&v);
    uint64_t m = 1;
    dpm_dap_policy_t good = f->dap;
    /* an aggregator key the policy does not name */
    f->dap.aggregators[1].hpke.public_key[0] ^= 1;
    expect_refused(f, DPM_ERR_POLICY, &m, 1);
    f->dap = good;
    f->dap.aggregators[0].hpke.id = 9;
    expect_refused(f, DPM_ERR_POLICY, &m, 1);
    f->dap = good;
    /* a host the policy does not name */
    f->dap.aggregators[0].host = "other.example";
    expect_refused(f, DPM_ERR_POLICY, &m, 1);
    f->dap = good;
    /* central ε above the policy, batch size below it */
    f->dap.max_central_eps = DPM_EPS(0.25);
    expect_refused(f, DPM_ERR_POLICY, &m, 1);
    f->dap = good;
    f->dap.min_batch_size = 1001;
    expect_refused(f, DPM_ERR_POLICY, &m, 1);
    f->dap = good;
    /* the mode off (an all-zero policy) */
    memset(&f->dap, 0, sizeof(good));
    expect_refused(f, DPM_ERR_POLICY, &m, 1);
    /* no policy for the mode at all */
    f->dev.policy.dap = NULL;
    expect_refused(f, DPM_ERR_POLICY, &m, 1);
    f->dev.policy.dap = &f->dap;
    /* an invalid policy */
    f->dap = good;
    f->dap.naggregators = DPM_DAP_POLICY_MAX_AGGREGATORS + 1;
    expect_refused(f, DPM_ERR_PARAM, &m, 1);
    f->dap = good;
    f->dap.aggregators[0].host = NULL;
    expect_refused(f, DPM_ERR_PARAM, &m, 1);
    /* leader and helper on one host: not two aggregators */
    f->dap = good;
    dpm_dap_task_t t = f->tf.task;
    static const char same[] = "https://" DAP_LEADER_HOST "/other/";
    f->tf.task.helper_url.p = (const uint8_t *)same;
    f->tf.task.helper_url.len = sizeof(same) - 1;
    f->dap.aggregators[1].host = DAP_LEADER_HOST;
    const char *reason = NULL;
    assert_int_equal(dpm_dap_policy_check(&f->dap, &f->tf.task, &reason), DPM_ERR_POLICY);
    assert_string_equal(reason, "task leader and helper are the same aggregator");
    f->tf.task = t;
    /* negative control: the good policy allows it */
    f->dap = good;
    assert_int_equal(report(f, 3, &m, 1, NULL, NULL), DPM_OK);
    close_fixture(f);
}

/* The task's encoding: round trip, and what decode refuses. */
static void test_task_decode(void **state)
{
    (void)state;
    dpm_prio3_t v = sumvec48();
    dap_task_fixture_t tf;
    assert_int_equal(dap_task_fixture(&tf, &v, DPM_EPS_ONE, 500, 3), 0);
    const dpm_dap_task_t *t = &tf.task;
    assert_int_equal(t->vdaf.kind, DPM_PRIO3_SUMVEC);
    assert_int_equal(t->vdaf.length, 48);
    assert_int_equal(t->vdaf.max_measurement, 255);
    assert_int_equal(t->vdaf.chunk_length, 26);
    assert_int_equal(t->min_batch_size, 500);
    assert_int_equal(t->central_eps, DPM_EPS_ONE);
    /* re-encoding gives the same bytes */
    uint8_t again[DPM_DAP_TASK_CONFIG_MAX];
    size_t len = 0;
    assert_int_equal(dpm_dap_task_config_encode(t, again, sizeof(again), &len), DPM_OK);
    assert_int_equal(len, tf.config_len);
    assert_memory_equal(again, tf.config, len);
    assert_int_equal(dpm_dap_task_config_encode(t, again, len - 1, &len), DPM_ERR_BUFFER);
    /* every truncation and one extra byte are malformed */
    dpm_dap_task_t out;
    const char *reason = NULL;
    for (size_t n = 0; n < tf.config_len; n++) {
        assert_int_not_equal(
            dpm_dap_task_decode(tf.id, tf.config, n, &tf.leader_cfg, &tf.helper_cfg, &out, &reason),
            DPM_OK);
    }
    uint8_t longer[DPM_DAP_TASK_CONFIG_MAX + 1];
    memcpy(longer, tf.config, tf.config_len);
    longer[tf.config_len] = 0;
    assert_int_equal(dpm_dap_task_decode(tf.id, longer, tf.config_len + 1, &tf.leader_cfg,
                                         &tf.helper_cfg, &out, &reason),
                     DPM_ERR_PROTOCOL);
    /* an unknown HPKE suite, the same key for both */
    dpm_hpke_config_t other = tf.helper_cfg;
    other.kem_id = 0x0010; /* DHKEM(P-256) */
    assert_int_equal(
        dpm_dap_task_decode(tf.id, tf.config, tf.config_len, &tf.leader_cfg, &other, &out, &reason),
        DPM_ERR_UNSUPPORTED);
    assert_int_equal(dpm_dap_task_decode(tf.id, tf.config, tf.config_len, &tf.leader_cfg,
                                         &tf.leader_cfg, &out, &reason),
                     DPM_ERR_PARAM);
    /* variants of the task: each field refused by its own rule */
    struct {
        const char *what;
        dpm_status_t want;
    } cases[] = {{"vdaf type 6 (Poplar1)", DPM_ERR_UNSUPPORTED},
                 {"batch mode 3", DPM_ERR_UNSUPPORTED},
                 {"http URL", DPM_ERR_PARAM},
                 {"no central DP", DPM_ERR_UNSUPPORTED},
                 {"unknown extension", DPM_ERR_UNSUPPORTED},
                 {"extensions out of order", DPM_ERR_PROTOCOL},
                 {"precision 0", DPM_ERR_PARAM}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        uint8_t b[DPM_DAP_TASK_CONFIG_MAX + 32];
        memcpy(b, tf.config, tf.config_len);
        size_t n = tf.config_len;
        /* offsets: task_info (1 + 19), leader URL (2 + 33), helper URL (2 + 33), precision 8,
         * batch size 8, batch mode 1, batch config 2, vdaf type 4, config (2 + 16), exts */
        size_t urls = 1 + t->task_info.len, prec = urls + 2 * (2 + t->leader_url.len),
               mode = prec + 16, type = mode + 3, ext = type + 4 + 2 + 16;
        switch (c) {
        case 0: b[type + 3] = 6; break;
        case 1: b[mode] = 3; break;
        case 2:
            memcpy(b + urls + 2, "http://", 7); /* "https://l..." becomes "http://le..." */
            break;
        case 3: /* drop the central-DP extension: an empty list */
            b[ext] = 0;
            b[ext + 1] = 0;
            n = ext + 2;
            break;
        case 4:
            b[ext + 2] = 0x00;
            b[ext + 3] = 0x02;
            break;
        case 5: /* two central-DP extensions */
            memcpy(b + n, b + ext + 2, 9);
            n += 9;
            b[ext + 1] = 18;
            break;
        default: memset(b + prec, 0, 8); break;
        }
        reason = NULL;
        dpm_status_t st =
            dpm_dap_task_decode(tf.id, b, n, &tf.leader_cfg, &tf.helper_cfg, &out, &reason);
        if (st != cases[c].want) {
            fail_msg("%s: want %s got %s (%s)", cases[c].what, dpm_strerror(cases[c].want),
                     dpm_strerror(st), reason ? reason : "-");
        }
        assert_non_null(reason);
    }
}

/* The central-DP extension's mechanism 2: discrete Gaussian with its sigma2 (13 bytes). */
static void test_task_decode_gaussian(void **state)
{
    (void)state;
    dpm_prio3_t v = sumvec48();
    dap_task_fixture_t tf;
    assert_int_equal(dap_task_fixture(&tf, &v, DPM_EPS_ONE, 500, 3), 0);
    dpm_dap_task_t g = tf.task;
    g.dp_mechanism = DPM_DAP_DP_DISCRETE_GAUSSIAN;
    g.central_sigma2 = UINT64_C(0x0102030405060708);
    uint8_t b[DPM_DAP_TASK_CONFIG_MAX];
    size_t n = 0;
    assert_int_equal(dpm_dap_task_config_encode(&g, b, sizeof(b), &n), DPM_OK);
    assert_int_equal(n, tf.config_len + 8u); /* the Laplace task's bytes and sigma2 */
    assert_int_equal(b[n - 13], DPM_DAP_DP_DISCRETE_GAUSSIAN);
    assert_int_equal(b[n - 8], 0x01);
    assert_int_equal(b[n - 1], 0x08);
    dpm_dap_task_t out;
    const char *reason = NULL;
    assert_int_equal(
        dpm_dap_task_decode(tf.id, b, n, &tf.leader_cfg, &tf.helper_cfg, &out, &reason), DPM_OK);
    assert_int_equal(out.dp_mechanism, DPM_DAP_DP_DISCRETE_GAUSSIAN);
    assert_true(out.central_sigma2 == g.central_sigma2);
    assert_int_equal(out.central_eps, DPM_EPS_ONE);
    uint8_t again[DPM_DAP_TASK_CONFIG_MAX];
    size_t m = 0;
    assert_int_equal(dpm_dap_task_config_encode(&out, again, sizeof(again), &m), DPM_OK);
    assert_int_equal(m, n);
    assert_memory_equal(again, b, n);
    /* the Laplace task decodes with sigma2 0 */
    assert_int_equal(dpm_dap_task_decode(tf.id, tf.config, tf.config_len, &tf.leader_cfg,
                                         &tf.helper_cfg, &out, &reason),
                     DPM_OK);
    assert_true(out.central_sigma2 == 0);
    /* encode refuses a mechanism without its parameter, or with the other's */
    g.central_sigma2 = 0;
    assert_int_equal(dpm_dap_task_config_encode(&g, again, sizeof(again), &m), DPM_ERR_PARAM);
    g = tf.task;
    g.central_sigma2 = 5;
    assert_int_equal(dpm_dap_task_config_encode(&g, again, sizeof(again), &m), DPM_ERR_PARAM);
    g.central_sigma2 = 0;
    g.dp_mechanism = 3;
    assert_int_equal(dpm_dap_task_config_encode(&g, again, sizeof(again), &m), DPM_ERR_PARAM);
    /* decode: sigma2 0; mechanism 2 in 5 bytes; mechanism 1 in 13; mechanism 3 */
    memset(b + n - 8, 0, 8);
    reason = NULL;
    assert_int_equal(
        dpm_dap_task_decode(tf.id, b, n, &tf.leader_cfg, &tf.helper_cfg, &out, &reason),
        DPM_ERR_PARAM);
    assert_non_null(reason);
    memcpy(again, tf.config, tf.config_len);
    again[tf.config_len - 5] = DPM_DAP_DP_DISCRETE_GAUSSIAN;
    assert_int_equal(dpm_dap_task_decode(tf.id, again, tf.config_len, &tf.leader_cfg,
                                         &tf.helper_cfg, &out, &reason),
                     DPM_ERR_PROTOCOL);
    b[n - 13] = DPM_DAP_DP_DISCRETE_LAPLACE;
    b[n - 1] = 1;
    assert_int_equal(
        dpm_dap_task_decode(tf.id, b, n, &tf.leader_cfg, &tf.helper_cfg, &out, &reason),
        DPM_ERR_PROTOCOL);
    again[tf.config_len - 5] = 3;
    assert_int_equal(dpm_dap_task_decode(tf.id, again, tf.config_len, &tf.leader_cfg,
                                         &tf.helper_cfg, &out, &reason),
                     DPM_ERR_UNSUPPORTED);
    b[n - 13] = 3; /* an unknown mechanism is unsupported whatever its length */
    assert_int_equal(
        dpm_dap_task_decode(tf.id, b, n, &tf.leader_cfg, &tf.helper_cfg, &out, &reason),
        DPM_ERR_UNSUPPORTED);
    /* the app's policy takes a Gaussian task only when it says so */
    dpm_dap_policy_t p;
    dap_task_policy(&tf, DPM_EPS_ONE, 500, &p);
    g = tf.task;
    g.dp_mechanism = DPM_DAP_DP_DISCRETE_GAUSSIAN;
    g.central_sigma2 = 1800;
    assert_int_equal(dpm_dap_policy_check(&p, &tf.task, &reason), DPM_OK);
    reason = NULL;
    assert_int_equal(dpm_dap_policy_check(&p, &g, &reason), DPM_ERR_POLICY);
    assert_non_null(strstr(reason, "accept_gaussian"));
    p.accept_gaussian = 1;
    assert_int_equal(dpm_dap_policy_check(&p, &g, &reason), DPM_OK);
}

/* Field by field (the struct has padding). */
static int same_config(const dpm_hpke_config_t *a, const dpm_hpke_config_t *b)
{
    return a->id == b->id && a->kem_id == b->kem_id && a->kdf_id == b->kdf_id &&
           a->aead_id == b->aead_id && memcmp(a->public_key, b->public_key, 32) == 0;
}

/* HpkeConfig and HpkeConfigList: what an aggregator publishes. */
static void test_hpke_configs(void **state)
{
    (void)state;
    dpm_prio3_t v = hist16();
    dap_task_fixture_t tf;
    assert_int_equal(dap_task_fixture(&tf, &v, DPM_EPS_ONE, 500, 3), 0);
    uint8_t one[DPM_HPKE_CONFIG_BYTES];
    size_t len = 0;
    assert_int_equal(dpm_hpke_config_encode(&tf.leader_cfg, one, sizeof(one), &len), DPM_OK);
    assert_int_equal(len, 41);
    dpm_hpke_config_t c;
    const char *reason = NULL;
    assert_int_equal(dpm_hpke_config_decode(one, len, &c, &reason), DPM_OK);
    assert_true(same_config(&c, &tf.leader_cfg));
    assert_int_equal(dpm_hpke_config_decode(one, len - 1, &c, &reason), DPM_ERR_PROTOCOL);
    /* a list: a P-256 config first (unsupported), then ours */
    uint8_t list[2 + 2 * 41 + 33];
    size_t n = 2;
    list[n++] = 9;
    list[n++] = 0x00, list[n++] = 0x10; /* DHKEM(P-256) */
    list[n++] = 0x00, list[n++] = 0x01;
    list[n++] = 0x00, list[n++] = 0x01;
    list[n++] = 0x00, list[n++] = 65;
    memset(list + n, 4, 65);
    n += 65;
    memcpy(list + n, one, 41);
    n += 41;
    list[0] = (uint8_t)((n - 2) >> 8);
    list[1] = (uint8_t)(n - 2);
    memset(&c, 0, sizeof(c));
    assert_int_equal(dpm_hpke_config_list_select(list, n, 0, &c, &reason), DPM_OK);
    assert_true(same_config(&c, &tf.leader_cfg));
    /* a preference the list cannot meet: its first supported entry all the same */
    assert_int_equal(
        dpm_hpke_config_list_select(list, n, DPM_HPKE_AEAD_CHACHA20_POLY1305, &c, &reason), DPM_OK);
    assert_true(same_config(&c, &tf.leader_cfg));
    /* only the unsupported one: refused as unknown */
    size_t n1 = 2 + 9 + 65;
    list[0] = 0;
    list[1] = (uint8_t)(n1 - 2);
    assert_int_equal(dpm_hpke_config_list_select(list, n1, 0, &c, &reason), DPM_ERR_UNSUPPORTED);
    /* malformed: a length past the end, and a repeated id */
    list[1] = (uint8_t)(n1 - 1);
    assert_int_equal(dpm_hpke_config_list_select(list, n1, 0, &c, &reason), DPM_ERR_PROTOCOL);
    uint8_t twice[2 + 82];
    twice[0] = 0;
    twice[1] = 82;
    memcpy(twice + 2, one, 41);
    memcpy(twice + 43, one, 41);
    assert_int_equal(dpm_hpke_config_list_select(twice, sizeof(twice), 0, &c, &reason),
                     DPM_ERR_PROTOCOL);
    /* AES-128-GCM (id 1) then ChaCha20-Poly1305 (id 2) in the aggregator's order: the
     * aggregator's first without a preference, the preferred AEAD with one */
    dpm_hpke_config_t chacha = tf.leader_cfg;
    chacha.id = 2;
    chacha.aead_id = DPM_HPKE_AEAD_CHACHA20_POLY1305;
    chacha.public_key[0] ^= 1;
    uint8_t both[2 + 82];
    both[0] = 0;
    both[1] = 82;
    memcpy(both + 2, one, 41);
    assert_int_equal(dpm_hpke_config_encode(&chacha, both + 43, 41, &len), DPM_OK);
    assert_int_equal(dpm_hpke_config_list_select(both, sizeof(both), 0, &c, &reason), DPM_OK);
    assert_true(same_config(&c, &tf.leader_cfg));
    assert_int_equal(dpm_hpke_config_list_select(both, sizeof(both),
                                                 DPM_HPKE_AEAD_CHACHA20_POLY1305, &c, &reason),
                     DPM_OK);
    assert_true(same_config(&c, &chacha));
    assert_int_equal(dpm_hpke_config_check(&chacha, &reason), DPM_OK);
    /* suites refused by name: AES-256-GCM (0x0002), Export-only (0xFFFF) */
    dpm_hpke_config_t bad = tf.leader_cfg;
    bad.aead_id = 0x0002;
    assert_int_equal(dpm_hpke_config_check(&bad, &reason), DPM_ERR_UNSUPPORTED);
    assert_string_equal(reason, "HPKE AEAD is neither AES-128-GCM nor ChaCha20-Poly1305");
    bad.aead_id = 0xFFFF;
    assert_int_equal(dpm_hpke_config_check(&bad, &reason), DPM_ERR_UNSUPPORTED);
    bad = tf.leader_cfg;
    memset(bad.public_key, 0, sizeof(bad.public_key));
    assert_int_equal(dpm_hpke_config_check(&bad, &reason), DPM_ERR_PARAM);
}

/* The app's front door for tasks: decode + policy. */
/* An aggregator's key and the HpkeConfig that publishes it, from one secret; refused with
 * nothing written for a bad AEAD or ikm length. */
static void test_hpke_key_derive(void **state)
{
    (void)state;
    uint8_t ikm[32];
    for (int i = 0; i < 32; i++) {
        ikm[i] = (uint8_t)(3 * i + 1);
    }
    dpm_dap_hpke_key_t k, k2;
    dpm_hpke_config_t c;
    const char *reason = NULL;
    assert_int_equal(
        dpm_dap_hpke_key_derive(ikm, sizeof(ikm), 7, DPM_HPKE_AEAD_CHACHA20_POLY1305, &k, &c),
        DPM_OK);
    assert_int_equal(k.config_id, 7);
    assert_int_equal(k.aead_id, DPM_HPKE_AEAD_CHACHA20_POLY1305);
    assert_int_equal(c.id, 7);
    assert_int_equal(c.kem_id, DPM_HPKE_KEM_X25519_SHA256);
    assert_int_equal(c.kdf_id, DPM_HPKE_KDF_HKDF_SHA256);
    assert_int_equal(c.aead_id, DPM_HPKE_AEAD_CHACHA20_POLY1305);
    assert_memory_equal(c.public_key, k.kp.pk, DPM_HPKE_NPK);
    assert_int_equal(dpm_hpke_config_check(&c, &reason), DPM_OK);
    /* the same secret under another id and AEAD: the same key pair; no config asked for */
    assert_int_equal(
        dpm_dap_hpke_key_derive(ikm, sizeof(ikm), 9, DPM_HPKE_AEAD_AES_128_GCM, &k2, NULL), DPM_OK);
    assert_memory_equal(k2.kp.pk, k.kp.pk, DPM_HPKE_NPK);
    assert_int_equal(k2.config_id, 9);
    /* refusals leave both outputs as they were */
    memset(&k2, 0xA5, sizeof(k2));
    dpm_hpke_config_t c2 = c;
    dpm_dap_hpke_key_t before = k2;
    assert_int_equal(dpm_dap_hpke_key_derive(ikm, sizeof(ikm), 1, 0x0099, &k2, &c2), DPM_ERR_PARAM);
    assert_int_equal(dpm_dap_hpke_key_derive(ikm, 16, 1, DPM_HPKE_AEAD_AES_128_GCM, &k2, &c2),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_dap_hpke_key_derive(NULL, 32, 1, DPM_HPKE_AEAD_AES_128_GCM, &k2, &c2),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_dap_hpke_key_derive(ikm, 32, 1, DPM_HPKE_AEAD_AES_128_GCM, NULL, &c2),
                     DPM_ERR_PARAM);
    assert_memory_equal(&k2, &before, sizeof(k2));
    assert_true(same_config(&c2, &c));
}

static void test_accept_task(void **state)
{
    (void)state;
    dpm_prio3_t v = hist16();
    fixture_t *f = open_fixture(&v);
    dpm_dap_task_t t;
    const char *reason = NULL;
    assert_int_equal(dpm_device_dap_accept_task(&f->dev, f->tf.id, f->tf.config, f->tf.config_len,
                                                &f->tf.leader_cfg, &f->tf.helper_cfg, &t, &reason),
                     DPM_OK);
    /* a key the policy does not name: refused with its reason, t untouched */
    dpm_hpke_config_t rotated = f->tf.helper_cfg;
    rotated.public_key[5] ^= 0x10;
    memset(&t, 0xAB, sizeof(t));
    assert_int_equal(dpm_device_dap_accept_task(&f->dev, f->tf.id, f->tf.config, f->tf.config_len,
                                                &f->tf.leader_cfg, &rotated, &t, &reason),
                     DPM_ERR_POLICY);
    assert_string_equal(reason, "task helper's host and HPKE key are not in the app's policy");
    assert_int_equal(((uint8_t *)&t)[0], 0xAB);
    close_fixture(f);
}

/* Fault injection: every byte of a sealed report, changed, is rejected by the aggregators
 * (decode, open or verification), never aggregated. Histogram16: every bit of every byte;
 * SumVec 2x24: one bit of every byte. Negative control: the untouched report aggregates. */
static void flip_all(const dpm_prio3_t *v, int all_bits, uint16_t leader_aead)
{
    fixture_t *f = open_fixture_aead(v, leader_aead, DPM_HPKE_AEAD_AES_128_GCM);
    uint64_t m[48];
    for (int i = 0; i < 48; i++) {
        m[i] = (uint64_t)i;
    }
    size_t n = v->kind == DPM_PRIO3_SUMVEC ? v->length : 1;
    dpm_report_info_t info;
    assert_int_equal(report(f, 1, m, n, &info, NULL), DPM_OK);
    uint8_t *bytes = malloc(info.bytes);
    uint64_t result[48];
    assert_int_equal(dap_aggregate_one(&f->tf, f->report, info.bytes, result, 48, NULL), DPM_OK);
    unsigned rejected = 0, tried = 0;
    const size_t stride = flip_stride();
    for (size_t i = 0; i < info.bytes; i += stride) {
        for (int bit = 0; bit < 8; bit++) {
            if ((!all_bits || stride > 1) && bit != (int)(i % 8)) {
                continue;
            }
            memcpy(bytes, f->report, info.bytes);
            bytes[i] ^= (uint8_t)(1u << bit);
            const char *where = NULL;
            dpm_status_t st = dap_aggregate_one(&f->tf, bytes, info.bytes, result, 48, &where);
            tried++;
            if (st == DPM_OK) {
                fail_msg("byte %zu bit %d changed: the report was still aggregated", i, bit);
            }
            rejected++;
        }
    }
    assert_int_equal(rejected, tried);
    assert_true(tried >= info.bytes / stride);
    free(bytes);
    close_fixture(f);
}

static void test_every_byte_changed_is_rejected(void **state)
{
    (void)state;
    dpm_prio3_t h = hist16(), s = sumvec48();
    flip_all(&h, 1, DPM_HPKE_AEAD_AES_128_GCM);
    flip_all(&s, 0, DPM_HPKE_AEAD_AES_128_GCM);
    flip_all(&s, 0, DPM_HPKE_AEAD_CHACHA20_POLY1305); /* the leader's share: ChaCha20-Poly1305 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_variant_end_to_end),
        cmocka_unit_test(test_report_layout),
        cmocka_unit_test(test_bad_input_spends_nothing),
        cmocka_unit_test(test_measurement_out_of_range),
        cmocka_unit_test(test_one_report_per_period),
        cmocka_unit_test(test_device_cap_counts_tasks),
        cmocka_unit_test(test_failures_after_the_charge),
        cmocka_unit_test(test_policy_refuses),
        cmocka_unit_test(test_pool_sealer),
        cmocka_unit_test(test_task_decode),
        cmocka_unit_test(test_task_decode_gaussian),
        cmocka_unit_test(test_hpke_configs),
        cmocka_unit_test(test_hpke_key_derive),
        cmocka_unit_test(test_accept_task),
        cmocka_unit_test(test_every_byte_changed_is_rejected),
    };
    return cmocka_run_group_tests_name("dap", tests, NULL, NULL);
}
