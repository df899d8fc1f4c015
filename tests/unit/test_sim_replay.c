/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim device farm: every device's report, replayed alone from its seed, run and index,
 * equals the bytes it produced inside a multi-threaded run; the aggregate does not depend on
 * the thread count; a device's tuple is exactly dpm_tuple_perturb's on the device's own stream;
 * reports decode and pass the collector's campaign check; exact mode is deterministic per
 * (seed, run). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/stats.h"
#include "sim_fixture.h"

#include "sim/run/farm.h"
#include "sim/devices/mech_tuple.h"
#include "sim/pop/population.h"
#include "sim/scenario/scenario.h"
#include "common/stream.h"

#define DEVICES 3000u
#define RUN 3u

static const char kScenario[] =
    "[scenario]\nseed = 77\n"
    "[group a]\nshare = 0.5\nscores = binormal(auc=0.85, base_rate=0.4, examples=10)\n"
    "[group b]\nshare = 0.3\ntpr = constant(0.7)\nfpr = constant(1/8)\n"
    "[group c]\nshare = 0.2\ntpr = beta(4, 2)\nfpr = beta(1, 9)\n"
    "[campaign mr]\nmechanism = tuple_mr\neps = 1\nmetrics = tpr\n"
    "[campaign ml2]\nmechanism = tuple_ml\neps = 2\nmetrics = tpr, fpr\ngroups = c, a\n"
    "[campaign paper]\nmechanism = tuple_ml\nsplit = paper\neps = 1\nmetrics = fpr\n";

typedef struct {
    uint8_t bytes[DEVICES][DPM_REPORT_MAX_BYTES];
    size_t len[DEVICES];
} capture_t;

/* Each device writes only its own slot: no two threads touch the same memory. */
static void capture(void *ctx, const sim_cfg_t *cfg, uint32_t run, uint64_t device,
                    const uint8_t *buf, size_t len)
{
    capture_t *c = ctx;
    (void)cfg;
    (void)run;
    memcpy(c->bytes[device], buf, len);
    c->len[device] = len;
}

typedef struct {
    sim_scenario_t sc;
    sim_pop_t pop;
    capture_t cap;
} fixture_t;

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    char err[256];
    if (f == NULL || sim_fixture_build(kScenario, sizeof(kScenario) - 1, DEVICES, &f->sc, &f->pop,
                                       err, sizeof(err)) != 0) {
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    sim_pop_free(&f->pop);
    free(f);
    return 0;
}

static int agg_equal(const sim_agg_t *xa, const sim_agg_t *ya)
{
    const sim_tuple_agg_t *x = sim_tuple_agg_c(xa), *y = sim_tuple_agg_c(ya);
    if (x->nmetrics != y->nmetrics) {
        return 0;
    }
    for (uint32_t j = 0; j < x->nmetrics; j++) {
        const dpm_disp_agg_t *a = &x->m[j], *b = &y->m[j];
        if (a->total != b->total || memcmp(a->count, b->count, sizeof(a->count)) != 0 ||
            memcmp(a->sum, b->sum, sizeof(a->sum)) != 0) {
            return 0;
        }
    }
    return 1;
}

static sim_cfg_t cfg; /* ~17 KB: off the stack */

static void prepare(fixture_t *f, uint32_t c)
{
    char err[256];
    assert_int_equal(sim_cfg_init(&cfg, &f->sc, c, 0, err, sizeof(err)), 0);
    assert_int_equal(sim_cfg_prepare(&cfg, &f->pop, 1, err, sizeof(err)), 0);
}

static void check_campaign(fixture_t *f, uint32_t c)
{
    prepare(f, c);
    memset(&f->cap, 0, sizeof(f->cap));
    sim_farm_opts_t two = {2, NULL, capture, &f->cap}, one = {1, NULL, NULL, NULL};
    sim_agg_t agg2, agg1;
    sim_farm_stats_t st;
    memset(&st, 0, sizeof(st));
    assert_int_equal(sim_farm_runs(&cfg, &f->pop, RUN, 1, &two, &agg2, &st), DPM_OK);
    assert_int_equal(sim_farm_runs(&cfg, &f->pop, RUN, 1, &one, &agg1, NULL), DPM_OK);
    assert_true(agg_equal(&agg1, &agg2));
    uint64_t reported = 0;
    for (uint64_t i = 0; i < DEVICES; i++) {
        dpm_report_t rep, dec;
        uint8_t buf[DPM_REPORT_MAX_BYTES];
        size_t len = 99;
        assert_int_equal(sim_farm_replay(&cfg, &f->pop, RUN, i, &rep, buf, &len), DPM_OK);
        assert_int_equal(len, f->cap.len[i]); /* 0 for devices that do not take part */
        if (len == 0) {
            continue;
        }
        reported++;
        assert_memory_equal(buf, f->cap.bytes[i], len);
        assert_int_equal(dpm_report_decode(buf, len, &dec), DPM_OK);
        assert_int_equal(dec.period, RUN);
        assert_int_equal(dec.campaign_id, cfg.spec->id);
        if (!cfg.paper) {
            const char *why = NULL;
            assert_int_equal(dpm_mech_check_report(&cfg.mech, &dec, &why), DPM_OK);
        }
    }
    assert_true(reported == st.reports && reported == sim_tuple_agg_c(&agg2)->m[0].total);
    assert_true(reported > DEVICES / 3);
    /* another run gives other reports */
    dpm_report_t rep;
    uint8_t other[DPM_REPORT_MAX_BYTES];
    size_t len = 0;
    uint64_t dev = DEVICES - 1;
    assert_int_equal(sim_farm_replay(&cfg, &f->pop, RUN + 1, dev, &rep, other, &len), DPM_OK);
    assert_true(len == 0 || memcmp(other, f->cap.bytes[dev], len) != 0);
    sim_cfg_release(&cfg);
}

static void test_replay_mr(void **state)
{
    check_campaign(*state, 0);
}

static void test_replay_ml_two_metrics_subset(void **state)
{
    check_campaign(*state, 1);
}

static void test_replay_paper_split(void **state)
{
    check_campaign(*state, 2);
}

/* The farm's device is dpm_tuple_perturb on the device's own stream (it is the first thing
 * dpm_mech_report_tuple draws for), keyed as stream.h says. */
static void test_same_tuple_as_the_sdk(void **state)
{
    fixture_t *f = *state;
    prepare(f, 0);
    for (uint64_t i = 0; i < DEVICES; i += 7) {
        const sim_block_t *b = sim_pop_find(&f->pop, i, NULL);
        if (!sim_cfg_participates(&cfg, b)) {
            continue;
        }
        dpm_ratio_t tpr = {b->num[DPM_METRIC_TPR - 1], b->den[DPM_METRIC_TPR - 1]};
        if (b->has_conf) {
            assert_int_equal(dpm_metric_ratio(&b->conf, DPM_METRIC_TPR, &tpr), DPM_OK);
        }
        sim_stream_t s; /* device i's own stream */
        sim_stream_init(&s, sim_stream_key(cfg.seed, RUN, i));
        dpm_rng_t port = sim_stream_port(&s);
        dpm_rand_t r;
        dpm_tuple_report_t want;
        assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
        assert_int_equal(dpm_tuple_perturb(&cfg.mech.params.tuple, &r,
                                           (uint32_t)cfg.group_map[b->group], &tpr, &want),
                         DPM_OK);
        dpm_report_t rep;
        uint8_t buf[DPM_REPORT_MAX_BYTES];
        size_t len = 0;
        assert_int_equal(sim_farm_replay(&cfg, &f->pop, RUN, i, &rep, buf, &len), DPM_OK);
        assert_int_equal(rep.body.tuple.group, want.group);
        assert_int_equal(rep.body.tuple.value[0], want.value[0]);
    }
    assert_true(sim_cfg_device_key(&cfg, RUN, 5) == sim_stream_key(cfg.seed, RUN, 5));
    sim_cfg_release(&cfg);
}

static void test_exact_deterministic(void **state)
{
    fixture_t *f = *state;
    static sim_agg_t a, b, c;
    prepare(f, 1);
    assert_int_equal(sim_exact_run(&cfg, &f->pop, 4, &a, NULL), 0);
    assert_int_equal(sim_exact_run(&cfg, &f->pop, 4, &b, NULL), 0);
    assert_int_equal(sim_exact_run(&cfg, &f->pop, 5, &c, NULL), 0);
    assert_true(agg_equal(&a, &b));
    assert_false(agg_equal(&a, &c));
    const sim_tuple_agg_t *ta = sim_tuple_agg_c(&a);
    assert_true(ta->m[0].total == cfg.reporting && ta->m[1].total == cfg.reporting);
    sim_cfg_release(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_mr),
        cmocka_unit_test(test_replay_ml_two_metrics_subset),
        cmocka_unit_test(test_replay_paper_split),
        cmocka_unit_test(test_same_tuple_as_the_sdk),
        cmocka_unit_test(test_exact_deterministic),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
