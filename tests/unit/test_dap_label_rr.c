/* SPDX-License-Identifier: Apache-2.0 */
/* The two-aggregator hybrid (issue 31 item 2): a SumVec task with dpmetrics' label-RR extension
 * (DPM_DAP_EXT_LOCAL_LABEL_RR, dpm/expert/dap.h) makes the device randomize every example's
 * label at ε0 before sharding (dpm/expert/device_dap.h).
 *   - the task: encode/decode round trip, and each refusal by its own status and reason
 *     (wrong variant, length not groups x 2 x bins, ε0 0 / above DPM_EPS_MAX / beyond 32-bit RR,
 *     bins 0, out-of-order and wrong-length extension); the app's policy on ε0;
 *   - the device call: reports of a known histogram open, verify and aggregate (the Prio3 proof
 *     holds), every bin keeps its total exactly, and the flips of pure-negative and
 *     pure-positive bins, summed over the reports, match Binomial(trials, q) with q = other /
 *     2^32 of dpm_rr_init(ε0) (two-sided, α = 1e-6, fixed seeds); the negative controls: the
 *     same task without the extension (no flips) and the q of another ε0 fail the same test;
 *   - before the charge, with nothing spent or queued: a work area one word short, a bin whose
 *     total exceeds max_measurement, a source that failed earlier; after it: an RNG failure
 *     leaves the ε spent, nothing queued and the randomized copy wiped. */
#include <math.h>
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
#include "dpm/expert/noise.h"
#include "dpm/expert/vdaf.h"
#include "fake_storage.h"
#include "test_rng.h"

#define BINS 8u
#define GROUPS 2u
#define LEN (GROUPS * 2u * BINS) /* 32 entries */
#define MAX 255u
#define Z_CRIT 4.8916 /* two-sided normal quantile at alpha = 1e-6 */

static dpm_prio3_t sumvec32(void)
{
    dpm_prio3_t v;
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, LEN, MAX, 16), DPM_OK);
    return v;
}

/* Task f of VDAF v with label RR at eps0 over `bins` (0, 0: none). */
static void task_with(dap_task_fixture_t *f, const dpm_prio3_t *v, dpm_eps_t eps0, uint32_t bins)
{
    assert_int_equal(dap_task_fixture(f, v, DPM_EPS_ONE / 2, 1000, 5), 0);
    dpm_dap_task_t t = f->task;
    t.local_eps = eps0;
    t.local_bins = bins;
    assert_int_equal(dpm_dap_task_config_encode(&t, f->config, sizeof(f->config), &f->config_len),
                     DPM_OK);
    const char *reason = NULL;
    dpm_status_t st = dpm_dap_task_decode(f->id, f->config, f->config_len, &f->leader_cfg,
                                          &f->helper_cfg, &f->task, &reason);
    if (st != DPM_OK) {
        fail_msg("decode: %s (%s)", dpm_strerror(st), reason ? reason : "-");
    }
}

/* The base task's config with its extension list replaced by `ext` (n bytes of extensions). */
static size_t with_exts(const dap_task_fixture_t *base, const uint8_t *ext, size_t n, uint8_t *out)
{
    /* the base (Laplace, no interval, no RR) ends with its list: 2 + (4 + 5) bytes */
    size_t head = base->config_len - 11u;
    memcpy(out, base->config, head);
    out[head] = (uint8_t)(n >> 8);
    out[head + 1] = (uint8_t)n;
    memcpy(out + head + 2, ext, n);
    return head + 2 + n;
}

static dpm_status_t decode(const dap_task_fixture_t *f, const uint8_t *b, size_t n,
                           dpm_dap_task_t *out, const char **reason)
{
    *reason = NULL;
    return dpm_dap_task_decode(f->id, b, n, &f->leader_cfg, &f->helper_cfg, out, reason);
}

static const uint8_t CENTRAL[9] = {0xFF, 0x00, 0, 5, DPM_DAP_DP_DISCRETE_LAPLACE, 0, 0, 0x80, 0};

/* central-DP (ε 1/2), then a label-RR extension of eps0 and bins; dlen its data's length. */
static size_t rr_exts(uint8_t *ext, uint32_t eps0, uint32_t bins, int rr_first, size_t dlen)
{
    uint8_t rr[4 + 8] = {0xFF,
                         0x01,
                         0,
                         (uint8_t)dlen,
                         (uint8_t)(eps0 >> 24),
                         (uint8_t)(eps0 >> 16),
                         (uint8_t)(eps0 >> 8),
                         (uint8_t)eps0,
                         (uint8_t)(bins >> 8),
                         (uint8_t)bins,
                         0,
                         0};
    size_t n = 0;
    if (rr_first) {
        memcpy(ext, rr, 4 + dlen);
        n = 4 + dlen;
    }
    memcpy(ext + n, CENTRAL, sizeof(CENTRAL));
    n += sizeof(CENTRAL);
    if (!rr_first) {
        memcpy(ext + n, rr, 4 + dlen);
        n += 4 + dlen;
    }
    return n;
}

/* The encoding round-trips, and decode refuses each bad value by its own rule. */
static void test_task_encoding(void **state)
{
    (void)state;
    dpm_prio3_t v = sumvec32();
    dap_task_fixture_t base, f;
    assert_int_equal(dap_task_fixture(&base, &v, DPM_EPS_ONE / 2, 1000, 5), 0);
    assert_int_equal(base.task.local_eps, 0);
    assert_int_equal(base.task.local_bins, 0);
    task_with(&f, &v, DPM_EPS_ONE, BINS);
    assert_int_equal(f.task.local_eps, DPM_EPS_ONE);
    assert_int_equal(f.task.local_bins, BINS);
    assert_int_equal(f.config_len, base.config_len + 10u);
    assert_true(f.config_len <= DPM_DAP_TASK_CONFIG_MAX);
    static const uint8_t tail[10] = {0xFF, 0x01, 0, 6, 0, 1, 0, 0, 0, BINS};
    assert_memory_equal(f.config + f.config_len - 10, tail, 10);
    uint8_t again[DPM_DAP_TASK_CONFIG_MAX];
    size_t n = 0;
    assert_int_equal(dpm_dap_task_config_encode(&f.task, again, sizeof(again), &n), DPM_OK);
    assert_int_equal(n, f.config_len);
    assert_memory_equal(again, f.config, n);
    /* the hand-built list decodes to the same task (the helper below is sound) */
    uint8_t ext[64], b[DPM_DAP_TASK_CONFIG_MAX + 64];
    dpm_dap_task_t out;
    const char *reason = NULL;
    n = with_exts(&base, ext, rr_exts(ext, DPM_EPS_ONE, BINS, 0, 6), b);
    assert_int_equal(n, f.config_len);
    assert_memory_equal(b, f.config, n);
    assert_int_equal(decode(&base, b, n, &out, &reason), DPM_OK);
    /* refusals */
    struct {
        const char *what;
        uint32_t eps0, bins;
        int first;
        size_t dlen;
        dpm_status_t want;
        const char *says;
    } cases[] = {
        {"eps0 0", 0, BINS, 0, 6, DPM_ERR_PARAM, "epsilon"},
        {"eps0 above DPM_EPS_MAX", DPM_EPS_MAX_Q16 + 1u, BINS, 0, 6, DPM_ERR_PARAM, "epsilon"},
        {"eps0 beyond 32-bit RR", 23u << 16, BINS, 0, 6, DPM_ERR_PARAM, "32-bit"},
        {"bins 0", DPM_EPS_ONE, 0, 0, 6, DPM_ERR_PARAM, "bins"},
        {"length not groups x 2 x bins", DPM_EPS_ONE, 3, 0, 6, DPM_ERR_PARAM, "bins"},
        {"bins = length", DPM_EPS_ONE, LEN, 0, 6, DPM_ERR_PARAM, "bins"},
        {"out of order", DPM_EPS_ONE, BINS, 1, 6, DPM_ERR_PROTOCOL, "order"},
        {"5 bytes", DPM_EPS_ONE, BINS, 0, 5, DPM_ERR_PROTOCOL, "length"},
        {"8 bytes", DPM_EPS_ONE, BINS, 0, 8, DPM_ERR_PROTOCOL, "length"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        n = with_exts(&base, ext,
                      rr_exts(ext, cases[c].eps0, cases[c].bins, cases[c].first, cases[c].dlen), b);
        dpm_status_t st = decode(&base, b, n, &out, &reason);
        if (st != cases[c].want || reason == NULL || strstr(reason, cases[c].says) == NULL) {
            fail_msg("%s: want %s, got %s (%s)", cases[c].what, dpm_strerror(cases[c].want),
                     dpm_strerror(st), reason ? reason : "-");
        }
    }
    /* bins 16 divides 32 into one block (groups 1): taken; the largest eps0 RR implements too */
    n = with_exts(&base, ext, rr_exts(ext, DPM_EPS_ONE, 16, 0, 6), b);
    assert_int_equal(decode(&base, b, n, &out, &reason), DPM_OK);
    n = with_exts(&base, ext, rr_exts(ext, 22u << 16, 1, 0, 6), b);
    assert_int_equal(decode(&base, b, n, &out, &reason), DPM_OK);
    assert_int_equal(out.local_bins, 1);
    /* another variant: a Histogram task with the same extension */
    dpm_prio3_t h;
    assert_int_equal(dpm_prio3_histogram_init(&h, 2, LEN, 4), DPM_OK);
    dap_task_fixture_t hf;
    assert_int_equal(dap_task_fixture(&hf, &h, DPM_EPS_ONE / 2, 1000, 5), 0);
    n = with_exts(&hf, ext, rr_exts(ext, DPM_EPS_ONE, BINS, 0, 6), b);
    assert_int_equal(decode(&hf, b, n, &out, &reason), DPM_ERR_UNSUPPORTED);
    assert_non_null(strstr(reason, "SumVec"));
    /* encode refuses what decode would */
    dpm_dap_task_t t = f.task;
    t.local_bins = 3;
    assert_int_equal(dpm_dap_task_config_encode(&t, again, sizeof(again), &n), DPM_ERR_PARAM);
    t.local_bins = 0;
    assert_int_equal(dpm_dap_task_config_encode(&t, again, sizeof(again), &n), DPM_ERR_PARAM);
    t = f.task;
    t.local_eps = 0; /* bins without eps0 */
    assert_int_equal(dpm_dap_task_config_encode(&t, again, sizeof(again), &n), DPM_ERR_PARAM);
    t = hf.task;
    t.local_eps = DPM_EPS_ONE;
    t.local_bins = BINS;
    assert_int_equal(dpm_dap_task_config_encode(&t, again, sizeof(again), &n), DPM_ERR_PARAM);
    t = f.task;
    assert_int_equal(dpm_dap_task_config_encode(&t, again, f.config_len - 1, &n), DPM_ERR_BUFFER);
}

/* The policy: max_local_eps 0 takes tasks with and without RR; set, it requires RR at most it. */
static void test_policy(void **state)
{
    (void)state;
    dpm_prio3_t v = sumvec32();
    dap_task_fixture_t plain, rr;
    assert_int_equal(dap_task_fixture(&plain, &v, DPM_EPS_ONE / 2, 1000, 5), 0);
    task_with(&rr, &v, DPM_EPS_ONE, BINS);
    dpm_dap_policy_t p;
    dap_task_policy(&plain, DPM_EPS_ONE, 100, &p);
    const char *reason = NULL;
    assert_int_equal(dpm_dap_policy_check(&p, &plain.task, &reason), DPM_OK);
    assert_int_equal(dpm_dap_policy_check(&p, &rr.task, &reason), DPM_OK);
    p.max_local_eps = DPM_EPS(1);
    assert_int_equal(dpm_dap_policy_check(&p, &rr.task, &reason), DPM_OK);
    reason = NULL;
    assert_int_equal(dpm_dap_policy_check(&p, &plain.task, &reason), DPM_ERR_POLICY);
    assert_non_null(strstr(reason, "requires"));
    p.max_local_eps = DPM_EPS(0.75);
    reason = NULL;
    assert_int_equal(dpm_dap_policy_check(&p, &rr.task, &reason), DPM_ERR_POLICY);
    assert_non_null(strstr(reason, "max_local_eps"));
    p.max_local_eps = DPM_EPS_Q16(1); /* a plain integer: invalid, not a tiny ε */
    reason = NULL;
    assert_int_equal(dpm_dap_policy_check(&p, &rr.task, &reason), DPM_ERR_PARAM);
    assert_non_null(strstr(reason, "DPM_EPS"));
}

typedef dap_device_fixture_t fixture_t;

/* A device with task ε0 (0: the same task without the extension), its work area exactly
 * dpm_dap_work_words. */
static fixture_t *open_fixture(dpm_eps_t eps0, uint64_t seed)
{
    fixture_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    dpm_prio3_t v = sumvec32();
    if (eps0 != 0) {
        task_with(&f->tf, &v, eps0, BINS);
    } else {
        assert_int_equal(dap_task_fixture(&f->tf, &v, DPM_EPS_ONE / 2, 1000, 5), 0);
    }
    /* the device cap: REPORTS x 1/2 in one device period */
    assert_int_equal(dap_device_fixture_start(f, seed, DPM_EPS(32)), DPM_OK);
    assert_int_equal(f->io.work_words, v.shard_work_words + (eps0 != 0 ? LEN : 0u));
    return f;
}

static void close_fixture(fixture_t *f)
{
    dap_device_fixture_stop(f);
    free(f);
}

static dpm_eps_t spent(fixture_t *f, uint32_t p)
{
    dpm_eps_t e = 0;
    assert_int_equal(dpm_ledger_spent(&f->dev.ledger, dpm_dap_ledger_id(&f->tf.task), p, &e),
                     DPM_OK);
    return e;
}

static dpm_status_t report(fixture_t *f, uint32_t period, const uint64_t *m, const char **reason)
{
    dpm_report_info_t info;
    dpm_status_t st =
        dpm_device_dap_report_sumvec(&f->dev, &f->io, &f->tf.task, period, m, LEN, &info, reason);
    if (st == DPM_OK) {
        assert_int_equal(info.eps_spent, DPM_EPS_ONE / 2); /* the central ε: one participation */
    }
    return st;
}

/* The histogram: group 0 has pure-negative bins (pos' = flipped negatives), pure-positive bins
 * (neg' = flipped positives), mixed and empty ones; group 1 a spread. Bin totals <= MAX. */
static void histogram(uint64_t m[LEN])
{
    static const uint64_t pos0[BINS] = {0, 0, 0, 255, 255, 255, 100, 0},
                          neg0[BINS] = {255, 255, 255, 0, 0, 0, 155, 0};
    for (uint32_t j = 0; j < BINS; j++) {
        m[j] = pos0[j];
        m[BINS + j] = neg0[j];
        m[2 * BINS + j] = j * 7u;
        m[3 * BINS + j] = 100u - j * 9u;
    }
}

/* |count - trials p| / sqrt(trials p (1 - p)) <= Z_CRIT: Binomial(trials, p) not rejected. */
static int binomial_ok(uint64_t count, uint64_t trials, double p, double *z)
{
    double mean = (double)trials * p, sd = sqrt((double)trials * p * (1.0 - p));
    *z = sd > 0 ? ((double)count - mean) / sd : (count == (uint64_t)mean ? 0.0 : INFINITY);
    return fabs(*z) <= Z_CRIT;
}

/* R reports; flips of group 0's pure bins summed, each report's bins checked. */
#define REPORTS 24u
static void run_reports(fixture_t *f, uint64_t *flips_neg, uint64_t *flips_pos, uint64_t *trials)
{
    uint64_t m[LEN], result[LEN];
    histogram(m);
    *flips_neg = *flips_pos = *trials = 0;
    for (uint32_t r = 0; r < REPORTS; r++) {
        const char *reason = NULL;
        dpm_status_t st = report(f, r, m, &reason);
        if (st != DPM_OK) {
            fail_msg("report %u: %s (%s)", r, dpm_strerror(st), reason ? reason : "-");
        }
        /* the randomized copy is gone from the work area */
        if (f->tf.task.local_eps != 0) {
            for (uint32_t i = 0; i < LEN; i++) {
                assert_true(f->work[i] == 0);
            }
        }
        const char *where = NULL;
        st = dap_aggregate_one(&f->tf, f->report, dpm_dap_report_bytes(&f->tf.task.vdaf), result,
                               LEN, &where);
        if (st != DPM_OK) {
            fail_msg("report %u rejected at %s: %s", r, where, dpm_strerror(st));
        }
        f->outbox.used = 0; /* uploaded (count keeps counting) */
        for (uint32_t g = 0; g < GROUPS; g++) {
            for (uint32_t j = 0; j < BINS; j++) {
                const uint32_t a = g * 2 * BINS + j, b = a + BINS;
                assert_true(result[a] + result[b] == m[a] + m[b]); /* the bin total kept */
            }
        }
        for (uint32_t j = 0; j < 3; j++) {
            *flips_neg += result[j];            /* negatives reported positive */
            *flips_pos += result[BINS + 3 + j]; /* positives reported negative */
        }
    }
    *trials = REPORTS * 3u * MAX;
}

/* The flips follow Binomial(trials, q), q = other / 2^32 of dpm_rr_init(ε0); the controls fail. */
static void test_flips_are_binomial(void **state)
{
    (void)state;
    const dpm_eps_t eps0 = DPM_EPS_ONE;
    dpm_grr_t g, wrong;
    assert_int_equal(dpm_rr_init(&g, eps0), DPM_OK);
    assert_int_equal(dpm_rr_init(&wrong, eps0 + DPM_EPS_ONE / 8), DPM_OK);
    const double q = (double)g.other / 4294967296.0, q_wrong = (double)wrong.other / 4294967296.0;
    fixture_t *f = open_fixture(eps0, 11);
    uint64_t fn, fp, n;
    run_reports(f, &fn, &fp, &n);
    double z1, z2, z3, z4;
    int ok1 = binomial_ok(fn, n, q, &z1), ok2 = binomial_ok(fp, n, q, &z2);
    printf("# eps0 1: q = %.6f, %llu trials each: %llu negatives flipped (z %.2f), %llu positives "
           "(z %.2f)\n",
           q, (unsigned long long)n, (unsigned long long)fn, z1, (unsigned long long)fp, z2);
    assert_true(ok1 && ok2);
    /* control: the q of ε0 + 1/8 is rejected on the same counts */
    int bad1 = binomial_ok(fn, n, q_wrong, &z3), bad2 = binomial_ok(fp, n, q_wrong, &z4);
    printf("# control: q of eps0 1.125 = %.6f: z %.2f, %.2f\n", q_wrong, z3, z4);
    assert_false(bad1 || bad2);
    assert_int_equal(spent(f, REPORTS - 1), DPM_EPS_ONE / 2);
    assert_int_equal(f->outbox.count, REPORTS);
    close_fixture(f);
    /* control: the same task without the extension sends the exact histogram: no flips */
    f = open_fixture(0, 11);
    run_reports(f, &fn, &fp, &n);
    printf("# control: no label RR: %llu and %llu flips\n", (unsigned long long)fn,
           (unsigned long long)fp);
    assert_false(binomial_ok(fn, n, q, &z1) || binomial_ok(fp, n, q, &z2));
    close_fixture(f);
}

static void expect_refused_in(fixture_t *f, uint32_t period, dpm_status_t want, const uint64_t *m,
                              const char *says)
{
    const char *reason = NULL;
    dpm_status_t st = report(f, period, m, &reason);
    if (st != want || reason == NULL || strstr(reason, says) == NULL) {
        fail_msg("want %s (%s), got %s (%s)", dpm_strerror(want), says, dpm_strerror(st),
                 reason ? reason : "-");
    }
    assert_int_equal(spent(f, period), 0);
    assert_int_equal(f->outbox.count, 0);
}

static void expect_refused(fixture_t *f, dpm_status_t want, const uint64_t *m, const char *says)
{
    expect_refused_in(f, 3, want, m, says);
}

/* Before the charge nothing is spent; after it, an RNG failure spends and queues nothing. */
static void test_refusals_and_failures(void **state)
{
    (void)state;
    fixture_t *f = open_fixture(DPM_EPS_ONE, 12);
    uint64_t m[LEN];
    histogram(m);
    /* the work area one word short: enough for the shard, not the copy */
    f->io.work_words--;
    expect_refused(f, DPM_ERR_BUFFER, m, "label RR");
    f->io.work_words++;
    /* a bin of 200 + 56 = 256 > 255: each entry fits, the total does not */
    m[6] = 200;
    m[BINS + 6] = 56;
    expect_refused(f, DPM_ERR_PARAM, m, "max_measurement");
    m[BINS + 6] = 55; /* 255: fits */
    /* the policy requires a smaller ε0 */
    f->dap.max_local_eps = DPM_EPS(0.5);
    expect_refused(f, DPM_ERR_POLICY, m, "max_local_eps");
    f->dap.max_local_eps = DPM_EPS(1);
    /* a task struct whose RR shape was changed after decoding */
    dpm_dap_task_t saved = f->tf.task;
    f->tf.task.local_bins = 5;
    expect_refused(f, DPM_ERR_PARAM, m, "not accepted");
    f->tf.task = saved;
    /* after the charge: the first fill fails (the RR's), ε spent, nothing queued, copy wiped */
    f->failing.inner = f->t;
    f->failing.fail_at_call = 0;
    f->dev.rng = failing_rng_port(&f->failing);
    for (uint32_t i = 0; i < LEN; i++) {
        f->work[i] = 0xAA;
    }
    const char *reason = NULL;
    assert_int_equal(report(f, 4, m, &reason), DPM_ERR_RNG);
    assert_int_equal(spent(f, 4), DPM_EPS_ONE / 2);
    assert_int_equal(f->outbox.count, 0);
    for (uint32_t i = 0; i < LEN; i++) {
        assert_true(f->work[i] == 0);
    }
    /* the failed source is sticky: the next label-RR report is refused before the charge */
    f->dev.rng = test_rng_port(&f->t);
    expect_refused_in(f, 5, DPM_ERR_RNG, m, "failed earlier");
    close_fixture(f);
    /* the negative control: the repaired call on a fresh device succeeds and charges */
    f = open_fixture(DPM_EPS_ONE, 12);
    assert_int_equal(report(f, 3, m, NULL), DPM_OK);
    assert_int_equal(spent(f, 3), DPM_EPS_ONE / 2);
    assert_int_equal(f->outbox.count, 1);
    close_fixture(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_task_encoding),
        cmocka_unit_test(test_policy),
        cmocka_unit_test(test_flips_are_binomial),
        cmocka_unit_test(test_refusals_and_failures),
    };
    return cmocka_run_group_tests_name("dap_label_rr", tests, NULL, NULL);
}
