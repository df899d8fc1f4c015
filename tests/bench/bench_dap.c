/* SPDX-License-Identifier: Apache-2.0 */
/* Two-aggregator reports on this machine (x86_64), as metrics JSON lines: per shape, the time
 * to shard (prove included) and the time to shard and seal one report (the device's work),
 * the aggregators' time to open both input shares and verify the proof (one report, both
 * roles, what issue 31's throughput builds on), and the report's bytes beside the size the
 * draft's encodings give for the shape (computed here from the draft's formulas, field by
 * field, independently of the SDK's layout code: the two must agree).
 *
 * Shapes: Histogram 16 and 32 buckets, SumVec 2x24 and 2x12x3 entries of 8-bit counts, and
 * SumVec of 1,000 one-bit entries (chunk 31): the Rust prio crate's benchmark shape, whose
 * client (sharding) it reports at about 3.6 ms on a desktop. Best of REPS runs, wall clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dap_fixture.h"
#include "dpm/dpm.h"
#include "dpm/port_hpke.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/expert/vdaf.h"
#include "test_rng.h"

#define REPS 30

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void metric(const char *name, const char *what, double value, const char *unit)
{
    printf("{\"name\": \"%s.%s\", \"value\": %.3f, \"unit\": \"%s\", \"baseline\": null, "
           "\"ratio\": null}\n",
           name, what, value, unit);
}

/* The draft's report size for a two-share Prio3 shape: ReportMetadata (16 + 8 + 2), public
 * share<0..2^32-1> (4 + joint randomness parts 2 x 32), two HpkeCiphertext (config_id 1,
 * enc<1..2^16-1> 2 + 32, payload<1..2^32-1> 4 + PlaintextInputShare (2 + 4 + share) + tag 16),
 * the leader share F * (MEAS_LEN + PROOF_LEN) + blind 32, the helper share seed 32 + blind 32. */
static size_t draft_bytes(size_t field, size_t meas_len, size_t proof_len)
{
    size_t leader = field * (meas_len + proof_len) + 32, helper = 64;
    size_t ct = 1 + 2 + 32 + 4 + 2 + 4 + 16;
    return 26 + 4 + 64 + 2 * ct + leader + helper;
}

typedef struct {
    const char *name;
    dpm_prio3_t v;
    size_t proof_len; /* ARITY + GADGET_LEN from the draft: 2 chunk + 2 (p - 1) + 1 */
} shape_t;

static int run(shape_t *s, dpm_rng_t *rng)
{
    dap_task_fixture_t tf;
    if (dap_task_fixture(&tf, &s->v, DPM_EPS_ONE, 1000, 4) != 0) {
        return 0;
    }
    dpm_dap_layout_t l;
    dpm_dap_report_layout(&s->v, &l);
    uint8_t *report = malloc(l.bytes);
    uint64_t *work = malloc(8u * s->v.shard_work_words);
    uint64_t *meas = calloc(s->v.length, sizeof(uint64_t));
    uint64_t *result = calloc(s->v.output_len, sizeof(uint64_t));
    if (report == NULL || work == NULL || meas == NULL || result == NULL) {
        return 0;
    }
    size_t n = s->v.kind == DPM_PRIO3_SUMVEC ? s->v.length : 1;
    for (size_t i = 0; i < n; i++) {
        meas[i] = (i * 89 + 7) % (s->v.max_measurement + 1);
    }
    uint8_t ctx[DPM_DAP_CTX_BYTES];
    dpm_dap_vdaf_ctx(&tf.task, ctx);
    dpm_hpke_sealer_t sealer = dpm_hpke_sealer();
    double best_shard = 1e30, best_report = 1e30, best_agg = 1e30;
    for (int rep = 0; rep < REPS; rep++) {
        uint8_t rand[16 + 128];
        if (rng->fill(rng->ctx, rand, 16 + s->v.rand_bytes) != 0) {
            return 0;
        }
        double t0 = now_us();
        dpm_dap_report_frame(&tf.task, &l, rand, 472222, report);
        const dpm_prio3_shard_out_t out = {report + l.public_share, l.public_share_len,
                                           report + l.input_share[0], l.input_share_len[0],
                                           report + l.input_share[1], l.input_share_len[1]};
        dpm_status_t st = dpm_prio3_shard(&s->v, ctx, sizeof(ctx), meas, n, report, rand + 16,
                                          s->v.rand_bytes, &out, work, s->v.shard_work_words);
        double t1 = now_us();
        for (int i = 0; i < 2 && st == DPM_OK; i++) {
            uint8_t info[DPM_DAP_INFO_BYTES];
            dpm_dap_input_share_info(i == 0 ? DPM_DAP_ROLE_LEADER : DPM_DAP_ROLE_HELPER, info);
            const dpm_span_t aad[3] = {
                {tf.task.id, 32}, {tf.task.config, tf.task.config_len}, {report, l.aad_len}};
            st = sealer.seal(NULL, i == 0 ? &tf.leader_cfg : &tf.helper_cfg, rng, info,
                             sizeof(info), aad, 3, report + l.share[i], l.share_len[i],
                             report + l.enc[i], report + l.tag[i]);
        }
        double t2 = now_us();
        if (st == DPM_OK) {
            st = dap_aggregate_one(&tf, report, l.bytes, result, s->v.output_len, NULL);
        }
        double t3 = now_us();
        if (st != DPM_OK) {
            fprintf(stderr, "bench_dap: %s: %s\n", s->name, dpm_strerror(st));
            return 0;
        }
        best_shard = t1 - t0 < best_shard ? t1 - t0 : best_shard;
        best_report = t2 - t0 < best_report ? t2 - t0 : best_report;
        best_agg = t3 - t2 < best_agg ? t3 - t2 : best_agg;
    }
    size_t draft = draft_bytes(s->v.field_bytes, s->v.meas_len, s->proof_len);
    metric(s->name, "shard_us", best_shard, "us");
    metric(s->name, "report_us", best_report, "us");
    metric(s->name, "aggregators_us", best_agg, "us");
    printf("{\"name\": \"%s.report_bytes\", \"value\": %zu, \"unit\": \"bytes\", \"baseline\": "
           "\"%s.draft_bytes = %zu\", \"ratio\": %.4f}\n",
           s->name, l.bytes, s->name, draft, (double)l.bytes / (double)draft);
    free(report);
    free(work);
    free(meas);
    free(result);
    return l.bytes == draft;
}

/* PROOF_LEN of a ParallelSum(Mul, chunk) circuit with `calls` calls: 2 chunk + 2 (p - 1) + 1,
 * p the next power of two above calls (the draft's FLP section). */
static size_t proof_len(size_t chunk, size_t calls)
{
    size_t p = 1;
    while (p < calls + 1) {
        p <<= 1;
    }
    return 2 * chunk + 2 * (p - 1) + 1;
}

int main(void)
{
    test_rng_t t;
    test_rng_seed(&t, 3);
    dpm_rng_t rng = test_rng_port(&t);
    shape_t s[5] = {{"x86_64.prio3_histogram16", {0}, proof_len(3, 6)},
                    {"x86_64.prio3_histogram32", {0}, proof_len(5, 7)},
                    {"x86_64.prio3_sumvec48", {0}, proof_len(26, 15)},
                    {"x86_64.prio3_sumvec72", {0}, proof_len(19, 31)},
                    {"x86_64.prio3_sumvec1000_bits1", {0}, proof_len(31, 33)}};
    int ok = dpm_prio3_histogram_init(&s[0].v, 2, 16, 3) == DPM_OK &&
             dpm_prio3_histogram_init(&s[1].v, 2, 32, 5) == DPM_OK &&
             dpm_prio3_sumvec_init(&s[2].v, 2, 48, 255, 26) == DPM_OK &&
             dpm_prio3_sumvec_init(&s[3].v, 2, 72, 255, 19) == DPM_OK &&
             dpm_prio3_sumvec_init(&s[4].v, 2, 1000, 1, 31) == DPM_OK;
    for (int i = 0; i < 5 && ok; i++) {
        ok = run(&s[i], &rng);
    }
    if (!ok) {
        fprintf(stderr, "bench_dap: a report failed, or its size differs from the draft's\n");
    }
    return ok ? 0 : 1;
}
