/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim bench: the simulator's throughput, as JSON lines in the build/bench.json metric schema
 * ({"name", "value", "unit", "baseline", "ratio"}), each beside the cost of the raw random
 * bytes it consumed, measured in the same run (ratio = ours / that baseline):
 *
 *   sim.rng.stream.ns_per_byte              the seeded device streams, bulk (the baseline)
 *   sim.inprocess.tuple.devices_per_s       tuple_mr, every device through the real SDK:
 *                                           statistics, perturb, encode, decode, check,
 *                                           aggregate; all threads
 *   sim.inprocess.tuple.devices_per_s_1thread
 *   sim.inprocess.tuple_ml.devices_per_s    tuple_ml with two metrics, all threads
 *   sim.exact.1e9.seconds                   one exact-mode run of 10^9 devices (population
 *                                           realization + every campaign of the demo scenario)
 *   sim.inprocess.grr.perturb_per_s         dpm_grr_perturb alone, k = 64, eps = 1, one thread
 *                                           (baseline: numpy, added by .make/bench.py)
 * The population is the demo scenario (4 groups, binormal scores, 40 examples per device).
 * Throughputs are the best of 3 repetitions (the machine may be shared). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_write.h"
#include "sim/run/cli.h"
#include "sim/run/farm.h"
#include "sim/pop/progress.h"
#include "sim/devices/mechs.h" /* sim_scenario_parse, sim_scenario_load */
#include "common/stream.h"

static const char kDemo[] =
    "[scenario]\nname = bench\n"
    "[group a]\nshare = 0.4\nscores = binormal(auc=0.90, base_rate=0.30)\n"
    "[group b]\nshare = 0.3\nscores = binormal(auc=0.86, base_rate=0.30)\n"
    "[group c]\nshare = 0.2\nscores = binormal(auc=0.82, base_rate=0.25)\n"
    "[group d]\nshare = 0.1\nscores = binormal(auc=0.78, base_rate=0.20)\n"
    "partition = noniid(concentration=4, auc_sd=0.3)\n"
    "[campaign tpr_mr]\nmechanism = tuple_mr\neps = 1\nmetrics = tpr\n"
    "[campaign tpr_fpr_ml]\nmechanism = tuple_ml\neps = 2\nmetrics = tpr, fpr\n";

#define BULK_BYTES 65536u
#define BEST_OF 3

static void metric(const char *name, double value, const char *unit, const char *baseline,
                   double ratio)
{
    jw_t w;
    jw_file(&w, stdout);
    jw_raw(&w, "{\"name\": ");
    jw_str(&w, name);
    jw_raw(&w, ", \"value\": ");
    jw_num(&w, value, 6);
    jw_raw(&w, ", \"unit\": ");
    jw_str(&w, unit);
    jw_raw(&w, ", \"baseline\": ");
    if (baseline == NULL) {
        jw_raw(&w, "null, \"ratio\": null}\n");
    } else {
        jw_str(&w, baseline);
        jw_raw(&w, ", \"ratio\": ");
        jw_num(&w, ratio, 6);
        jw_raw(&w, "}\n");
    }
    fflush(stdout);
}

/* ---- raw randomness: the device streams in bulk, per thread ----------------------------- */

typedef struct {
    uint64_t bytes;
    uint64_t sink;
} bulk_t;

static void *bulk_worker(void *arg)
{
    bulk_t *b = arg;
    static const uint64_t key = 12345;
    uint8_t *buf = malloc(BULK_BYTES);
    sim_stream_t s;
    sim_stream_init(&s, key + b->bytes);
    dpm_rng_t port = sim_stream_port(&s);
    uint64_t sink = 0;
    for (uint64_t done = 0; buf != NULL && done < b->bytes; done += BULK_BYTES) {
        port.fill(port.ctx, buf, BULK_BYTES);
        sink += buf[done % BULK_BYTES];
    }
    free(buf);
    b->sink = sink;
    return NULL;
}

/* Nanoseconds per byte of `threads` threads generating stream bytes at once (aggregate). */
static double stream_ns_per_byte(unsigned threads, uint64_t bytes_each)
{
    pthread_t tid[SIM_MAX_THREADS];
    bulk_t job[SIM_MAX_THREADS];
    double start = sim_now();
    for (unsigned i = 0; i < threads; i++) {
        job[i].bytes = bytes_each;
        if (i > 0 && pthread_create(&tid[i], NULL, bulk_worker, &job[i]) != 0) {
            bulk_worker(&job[i]);
            tid[i] = 0;
        }
    }
    bulk_worker(&job[0]);
    for (unsigned i = 1; i < threads; i++) {
        if (tid[i] != 0) {
            pthread_join(tid[i], NULL);
        }
    }
    return (sim_now() - start) * 1e9 / ((double)bytes_each * threads);
}

/* ---- inprocess ------------------------------------------------------------------------------- */

typedef struct {
    double per_s;
    double bytes_per_device;
} farm_rate_t;

static int farm_rate(const sim_scenario_t *sc, const sim_pop_t *pop, uint32_t campaign,
                     unsigned threads, farm_rate_t *out)
{
    static sim_cfg_t cfg;
    static sim_agg_t agg;
    char err[256];
    if (sim_cfg_init(&cfg, sc, campaign, 0, err, sizeof(err)) != 0 ||
        sim_cfg_prepare(&cfg, pop, threads, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim bench: %s\n", err);
        sim_cfg_release(&cfg);
        return -1;
    }
    sim_farm_opts_t fo = {threads, NULL, NULL, NULL};
    out->per_s = 0.0;
    for (int rep = 0; rep < BEST_OF; rep++) { /* best of: the machine may be shared */
        sim_farm_stats_t st;
        memset(&st, 0, sizeof(st));
        double start = sim_now();
        if (sim_farm_runs(&cfg, pop, (uint32_t)rep, 1, &fo, &agg, &st) != DPM_OK ||
            st.reports == 0) {
            fprintf(stderr, "dpm-sim bench: device farm failed\n");
            sim_cfg_release(&cfg);
            return -1;
        }
        double rate = (double)st.reports / (sim_now() - start);
        out->per_s = rate > out->per_s ? rate : out->per_s;
        out->bytes_per_device = (double)st.rng_bytes / (double)st.reports;
    }
    sim_cfg_release(&cfg);
    return 0;
}

static int bench_inprocess(const sim_scenario_t *sc, uint64_t devices, unsigned threads,
                           double ns_one, double ns_all)
{
    sim_pop_t pop;
    char err[256], base[160];
    if (sim_pop_build(sc, devices, &pop, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim bench: %s\n", err);
        return -1;
    }
    farm_rate_t all, one, ml;
    int st = farm_rate(sc, &pop, 0, threads, &all);
    st = st == 0 ? farm_rate(sc, &pop, 0, 1, &one) : st;
    st = st == 0 ? farm_rate(sc, &pop, 1, threads, &ml) : st;
    sim_pop_free(&pop);
    if (st != 0) {
        return -1;
    }
    double cap_all = 1e9 / (all.bytes_per_device * ns_all),
           cap_one = 1e9 / (one.bytes_per_device * ns_one);
    snprintf(base, sizeof(base),
             "raw stream bytes only: %.0f B/device x %.3f ns/B (%u threads) = %.3g devices/s",
             all.bytes_per_device, ns_all, threads, cap_all);
    metric("sim.inprocess.tuple.devices_per_s", all.per_s, "devices/s", base, all.per_s / cap_all);
    snprintf(base, sizeof(base),
             "raw stream bytes only: %.0f B/device x %.3f ns/B (1 thread) = %.3g devices/s",
             one.bytes_per_device, ns_one, cap_one);
    metric("sim.inprocess.tuple.devices_per_s_1thread", one.per_s, "devices/s", base,
           one.per_s / cap_one);
    double cap_ml = 1e9 / (ml.bytes_per_device * ns_all);
    snprintf(base, sizeof(base),
             "raw stream bytes only: %.0f B/device x %.3f ns/B (%u threads) = %.3g devices/s",
             ml.bytes_per_device, ns_all, threads, cap_ml);
    metric("sim.inprocess.tuple_ml.devices_per_s", ml.per_s, "devices/s", base, ml.per_s / cap_ml);
    return 0;
}

/* ---- exact ------------------------------------------------------------------------------------
 */

static int bench_exact(const sim_scenario_t *sc, uint64_t devices, double ns)
{
    sim_pop_t pop;
    char err[256], base[160];
    double start = sim_now();
    if (sim_pop_build(sc, devices, &pop, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim bench: %s\n", err);
        return -1;
    }
    uint64_t words = pop.words;
    int st = 0;
    for (uint32_t c = 0; c < sc->ncampaigns && st == 0; c++) {
        static sim_cfg_t cfg;
        static sim_agg_t agg;
        uint64_t w = 0;
        st = sim_cfg_init(&cfg, sc, c, 0, err, sizeof(err));
        st = st == 0 ? sim_cfg_prepare(&cfg, &pop, 1, err, sizeof(err)) : st;
        st = st == 0 ? sim_exact_run(&cfg, &pop, 0, &agg, &w) : st;
        sim_cfg_release(&cfg);
        words += w;
    }
    double secs = sim_now() - start;
    sim_pop_free(&pop);
    if (st != 0) {
        fprintf(stderr, "dpm-sim bench: exact run failed\n");
        return -1;
    }
    double raw = 8.0 * (double)words * ns * 1e-9;
    snprintf(base, sizeof(base),
             "raw stream bytes only: %" PRIu64 " words x 8 B x %.3f ns/B = %.3g s", words, ns, raw);
    char name[64];
    snprintf(name, sizeof(name), "sim.exact.1e%d.seconds", devices == 1000000000u ? 9 : 0);
    metric(name, secs, "s", base, secs / raw);
    return 0;
}

/* ---- GRR alone ------------------------------------------------------------------------------ */

static int bench_grr(uint64_t n)
{
    dpm_grr_t g;
    sim_stream_t s;
    dpm_rand_t r;
    sim_stream_init(&s, 42);
    dpm_rng_t port = sim_stream_port(&s);
    if (dpm_grr_init(&g, 64, DPM_EPS_ONE) != DPM_OK || dpm_rand_init(&r, &port) != DPM_OK) {
        return -1;
    }
    uint64_t sum = 0;
    double best = 0.0;
    for (int rep = 0; rep < BEST_OF; rep++) {
        double start = sim_now();
        for (uint64_t i = 0; i < n; i++) {
            uint32_t y = 0;
            if (dpm_grr_perturb(&g, &r, (uint32_t)(i & 63u), &y) != DPM_OK) {
                return -1;
            }
            sum += y;
        }
        double rate = (double)n / (sim_now() - start);
        best = rate > best ? rate : best;
    }
    fprintf(stderr, "dpm-sim bench: grr checksum %" PRIu64 "\n", sum);
    metric("sim.inprocess.grr.perturb_per_s", best, "perturbations/s", NULL, 0.0);
    return 0;
}

int sim_cmd_bench(int argc, char **argv)
{
    int quick = 0;
    unsigned threads = sim_cli_default_threads();
    for (int i = 1; i < argc; i++) {
        uint64_t t;
        if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc &&
                   sim_cli_u64(argv[++i], &t) == 0 && t >= 1 && t <= SIM_MAX_THREADS) {
            threads = (unsigned)t;
        } else {
            fprintf(stderr, "usage: dpm-sim bench [--quick] [--threads T]\n");
            return SIM_EXIT_USAGE;
        }
    }
    sim_scenario_t *sc = malloc(sizeof(*sc));
    char err[256];
    if (sc == NULL ||
        sim_scenario_parse(kDemo, sizeof(kDemo) - 1, "bench", sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim bench: %s\n", sc == NULL ? "out of memory" : err);
        free(sc);
        return SIM_EXIT_USAGE;
    }
    uint64_t bulk = quick ? UINT64_C(1) << 27 : UINT64_C(1) << 30;
    double ns_one = stream_ns_per_byte(1, bulk), ns_all = stream_ns_per_byte(threads, bulk);
    metric("sim.rng.stream.ns_per_byte", ns_one, "ns/byte", NULL, 0.0);
    int st = bench_inprocess(sc, quick ? 400000u : 2000000u, threads, ns_one, ns_all);
    st = st == 0 ? bench_exact(sc, 1000000000u, ns_one) : st;
    st = st == 0 ? bench_grr(quick ? 5000000u : 50000000u) : st;
    free(sc);
    return st == 0 ? SIM_EXIT_OK : SIM_EXIT_USAGE;
}
