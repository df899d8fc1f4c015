/* SPDX-License-Identifier: Apache-2.0 */
/* Device farm for the private (group, performance) tuple mechanisms (spec/disparity-juarez2022.md
 * §11.3, §11.5): K simulated devices run the real device code, their reports are aggregated with
 * estimate/disparity.h and turned into per-group estimates.
 *
 * Two kinds of device:
 *   TUPLE_SIM_SDK    the SDK's dpm_tuple_perturb with its privacy-correct splits: what ships.
 *   TUPLE_SIM_PAPER  PAPER REPRODUCTION ONLY: the paper's own splits (M_R eps1 = eps2 = eps;
 *                    "M_L opt." with k != 2), built here from the SDK's samplers (dpm_grr_*,
 *                    dpm_rr_*, dpm_bernoulli, dpm_laplace_*, dpm_dlap_add). These splits do NOT
 *                    deliver the stated ε: M_R really spends up to ε + ln 2, and M_L with k != 2
 *                    has no finite ε at all (spec §10). Never use them for a real campaign.
 *
 * Randomness (seeded, host-sim only; real devices use a CSPRNG through their port):
 *   every device has its own byte stream. Device i of run r with base seed s uses the key
 *       key(s, r, i) = splitmix64 output number i + 1 of the generator seeded with
 *                      splitmix64 output number r + 1 of the generator seeded with s,
 *   and its stream is splitmix64 seeded with that key: word j (j = 1, 2, ...) is
 *   mix64(key + j * 0x9E3779B97F4A7C15), bytes little-endian (counter-based, so a device's
 *   stream costs nothing to derive). Each device gets a fresh dpm_rand_t on its own stream, so
 *   its report depends only on (s, r, i, its tuple, the mechanism): tuple_sim_device_report
 *   replays any single device bit for bit, and results do not depend on the thread count.
 *   The price: the SDK fills its 256-byte buffer once per device (about 30 ns per device).
 *   Two devices' streams overlap only if their keys differ by fewer than ~32 multiples of the
 *   odd constant: probability ~ 64 / 2^64 per pair.
 *
 * The server side uses the devices' own integers (thresholds, Laplace scales): the estimates are
 * exactly unbiased for the quantized mechanism. Values v = 2 metric - 1 live on [-1, 1]. One
 * metric per report. Doubles are fine here (host only). */
#ifndef DPM_HOST_TUPLE_SIM_H
#define DPM_HOST_TUPLE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/noise.h"
#include "dpm/tuple.h"
#include "estimate/disparity.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest number of threads a run may use (the calling thread counts as one). */
#define TUPLE_SIM_MAX_THREADS 16u
/* ν² sentinel for tuple_sim_estimate: the population's true second moment of each group. */
#define TUPLE_SIM_NU2_TRUE (-3.0)

/* ---- seeded streams ---------------------------------------------------------------------- */

typedef struct {
    uint64_t key;
    uint64_t counter; /* words drawn so far */
} tuple_sim_stream_t;

/* The key of device `device` in run `run` (see the header comment). */
uint64_t tuple_sim_device_key(uint64_t base_seed, uint32_t run, uint64_t device);

void tuple_sim_stream_init(tuple_sim_stream_t *s, uint64_t key);
uint64_t tuple_sim_stream_next(tuple_sim_stream_t *s);
/* Uniform in (0, 1) (53 random bits, never 0). */
double tuple_sim_stream_unit(tuple_sim_stream_t *s);
/* Standard normal (Marsaglia's polar method). */
double tuple_sim_stream_normal(tuple_sim_stream_t *s);
/* A dpm_rng_t whose bytes come from s (s must outlive it). */
dpm_rng_t tuple_sim_stream_port(tuple_sim_stream_t *s);

/* ---- mechanisms ---------------------------------------------------------------------------- */

typedef enum {
    TUPLE_SIM_SDK = 1,  /* dpm_tuple_perturb, correct splits */
    TUPLE_SIM_PAPER = 2 /* paper splits: reproduction only, does NOT deliver the stated ε */
} tuple_sim_mode_t;

typedef struct {
    tuple_sim_mode_t mode;
    dpm_disp_mech_t mech;
    uint32_t groups;
    dpm_tuple_t sdk;          /* TUPLE_SIM_SDK: the device mechanism */
    dpm_grr_t group_grr;      /* TUPLE_SIM_PAPER: GRR over the groups at eps1 */
    dpm_grr_t value_rr;       /* TUPLE_SIM_PAPER, M_R: binary RR at eps2 */
    dpm_laplace_t value_lap;  /* TUPLE_SIM_PAPER, M_L: kept reports, scale 2 / eps2 */
    uint64_t flip_num;        /* TUPLE_SIM_PAPER, M_L: flipped reports, scale k / eps2 in */
    uint64_t flip_den;        /*   grid units = flip_num / flip_den (reduced) */
    uint32_t frac_bits;       /* F of the M_L value grid */
    dpm_disp_params_t params; /* the server's view, from the devices' own integers */
    double eps;               /* nominal total ε (Q16.16 value; NaN for an explicit split) */
    double eps1, eps2, k;     /* nominal split (k: M_L only, NaN for M_R) */
    double eps_true;          /* the ε the quantized parameters really give; +inf: none */
    char label[80];
} tuple_sim_mech_t;

/* The SDK's mechanism (dpm_tuple_init with one metric, DPM_METRIC_TPR) at total eps.
 * Errors of dpm_tuple_init are passed on. */
dpm_status_t tuple_sim_mech_sdk(tuple_sim_mech_t *m, dpm_disp_mech_t mech, uint32_t groups,
                                dpm_eps_t eps);

/* PAPER REPRODUCTION ONLY. The paper's split of a total eps (spec §6): M_R eps1 = eps2 = eps;
 * "M_L opt." eps2 = eps with k = eps, eps1 = ln(2 / eps) + eps - 1 if eps >= 2/3, else
 * k = 2/3, eps1 = ln 3 - eps / 2 (eps1 rounded to Q16.16). Does NOT deliver the stated ε:
 * m->eps_true says what it does deliver. */
dpm_status_t tuple_sim_mech_paper(tuple_sim_mech_t *m, dpm_disp_mech_t mech, uint32_t groups,
                                  dpm_eps_t eps);

/* PAPER REPRODUCTION ONLY. An explicit split: group GRR at eps1, value RR (M_R) or discrete
 * Laplace of scale 2 / eps2 (M_L, kept reports) and k / eps2 (flipped reports), k = k_num /
 * k_den > 0 (ignored for M_R). Privacy: m->eps_true (finite for M_L only when k == 2).
 * DPM_ERR_PARAM on bad arguments, sampler init errors passed on. */
dpm_status_t tuple_sim_mech_split(tuple_sim_mech_t *m, dpm_disp_mech_t mech, uint32_t groups,
                                  dpm_eps_t eps1, dpm_eps_t eps2, uint64_t k_num, uint64_t k_den);

/* ---- populations ---------------------------------------------------------------------------- */

/* `count` consecutive devices with the same true tuple. */
typedef struct {
    uint64_t count;
    uint32_t group;     /* < groups */
    dpm_ratio_t metric; /* metric in [0, 1] as num / den, den <= 2^32; v = 2 metric - 1 */
} tuple_sim_block_t;

typedef struct {
    const tuple_sim_block_t *block;
    size_t nblocks;
    uint32_t groups;
} tuple_sim_pop_t;

/* The truth of a population: group sizes n_G, means m_G and second moments ν²_G of v. */
typedef struct {
    uint64_t total; /* K */
    double n[DPM_DISP_MAX_GROUPS];
    double mean[DPM_DISP_MAX_GROUPS];
    double nu2[DPM_DISP_MAX_GROUPS];
} tuple_sim_truth_t;

/* DPM_ERR_PARAM for a bad population (no device, a group >= groups, a bad ratio). */
dpm_status_t tuple_sim_pop_truth(const tuple_sim_pop_t *pop, tuple_sim_truth_t *truth);

/* A value v in [-1, 1] as the metric ratio the devices take: num / 2^32 with num =
 * round((1 + v) / 2 * 2^32), so the value the devices really hold is 2 num / 2^32 - 1. */
dpm_ratio_t tuple_sim_metric_from_value(double v);
double tuple_sim_value_of(const dpm_ratio_t *metric);

/* ---- running devices --------------------------------------------------------------------- */

/* One report of a device holding (group, metric), drawing its randomness from r (any source:
 * tests pass their own seeded generator). The SDK device or the paper-split device of m. */
dpm_status_t tuple_sim_perturb(const tuple_sim_mech_t *m, dpm_rand_t *r, uint32_t group,
                               const dpm_ratio_t *metric, dpm_tuple_report_t *out);

/* The report of one device (index < K) of run `run`, alone: the same bits it produces inside
 * tuple_sim_run. */
dpm_status_t tuple_sim_device_report(const tuple_sim_mech_t *m, const tuple_sim_pop_t *pop,
                                     uint64_t base_seed, uint32_t run, uint64_t device,
                                     dpm_tuple_report_t *out);

/* Runs every device of the population once and aggregates the reports into *agg (initialised
 * here for m->params). threads in [1, TUPLE_SIM_MAX_THREADS] split the devices into contiguous
 * ranges; the aggregate is the same for any thread count. */
dpm_status_t tuple_sim_run(const tuple_sim_mech_t *m, const tuple_sim_pop_t *pop,
                           uint64_t base_seed, uint32_t run, unsigned threads, dpm_disp_agg_t *agg);

/* Estimates of every group from an aggregate of the population, with the true group sizes.
 * nu2 for the variances: TUPLE_SIM_NU2_TRUE, DPM_DISP_NU2_WORST or DPM_DISP_NU2_PLUGIN. */
dpm_status_t tuple_sim_estimate(const tuple_sim_mech_t *m, const tuple_sim_pop_t *pop,
                                const dpm_disp_agg_t *agg, double nu2, dpm_disp_estimate_t *est);

/* Many runs of a (small) population: runs first_run .. first_run + nruns - 1, each aggregated
 * on its own; the group means (known sizes) of run first_run + j land in
 * means[j * groups + g] (NaN for an empty group). Threads split the runs. */
dpm_status_t tuple_sim_run_means(const tuple_sim_mech_t *m, const tuple_sim_pop_t *pop,
                                 uint64_t base_seed, uint32_t first_run, uint32_t nruns,
                                 unsigned threads, double *means);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_TUPLE_SIM_H */
