/* SPDX-License-Identifier: Apache-2.0 */
/* The simulated population: K devices laid out as blocks of identical devices.
 *
 * A scenario describes distributions; a population is one realization of them, drawn once from
 * the population seed and then shared by every run and every mode, so that inprocess, exact and
 * network runs measure the same devices and the same truth.
 *
 * Realization, per group g of size n_g (shares by largest remainder, exact integers):
 *   - metric lines: for each metric in turn, the devices of every cell so far are split over the
 *     metric's support by a multinomial: constant(x) has one point; beta(a, b) is quantized to
 *     k / L (L = beta_levels) with Pr[k] = I_{(k+1/2)/L} - I_{(k-1/2)/L} (clamped at 0 and 1).
 *   - binormal scores: the devices' confusion counts (npos, tp, fp) are drawn as a chain of
 *     multinomials: npos ~ Binomial(E, base_rate) (non-IID label skew: BetaBinomial(E, pi C,
 *     (1 - pi) C)); tp | npos ~ Binomial(npos, TPR*) with TPR* = Phi(mu - t) (non-IID feature
 *     shift: a mixture over mu_i = mu + auc_sd Z, integrated by the trapezoid rule on
 *     [-8, 8], step 0.1); fp | npos ~ Binomial(E - npos, FPR*), FPR* = Phi(-t).
 * This is the same law as drawing every device independently, in distribution; the pmfs are
 * computed in double precision (common/prob.h), the draws are sim_rng.h's.
 *
 * A population = csv(PATH) (sim/scenario/pop_csv.h) is the file's devices, each with its own
 * examples (conf from its labels and predictions; roc_sim.h bins its own scores). With K = the
 * file's D devices (the default) they are taken as they are: one block per device, groups in
 * order, devices in the order of their first row. With any other K the fleet is resampled,
 * stratified by group: group g gets K_g devices (largest remainder of K x D_g / D, as the
 * shares of a binormal population), drawn with replacement, uniformly, from the file's D_g
 * devices of g by one multinomial on the population stream; a device drawn c times is one block
 * of count c, keeping its own examples. A group left with no device is refused.
 *
 * Devices are numbered 0 .. K-1 block after block (groups in order). Device i's tuple is the
 * tuple of the block holding i; its noise comes from its own stream (stream.h), so any one
 * device can be replayed alone. */
#ifndef DPM_SIM_POPULATION_H
#define DPM_SIM_POPULATION_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/stats.h"
#include "sim/scenario/pop_csv.h"
#include "sim/scenario/scenario.h"

/* Most blocks a population may have (72 bytes each). */
#define SIM_MAX_BLOCKS (1u << 22)

typedef struct {
    uint64_t count;
    uint32_t group;   /* population group index */
    uint8_t has_conf; /* binormal: the metrics come from conf (dpm_metric_ratio) */
    uint8_t defined;  /* bit m - 1 set: metric m is defined for these devices */
    dpm_confusion_t conf;
    uint32_t num[SIM_NMETRICS]; /* metric m as num[m-1] / den[m-1] */
    uint32_t den[SIM_NMETRICS];
    uint32_t csv_device; /* population = csv(...): 1 + the file's device these devices copy */
} sim_block_t;

typedef struct {
    uint64_t devices;
    uint32_t ngroups;
    uint64_t group_size[SIM_MAX_GROUPS];
    sim_block_t *block;
    uint64_t *first; /* first device of each block */
    size_t nblocks;
    uint64_t words; /* random words the realization drew */
    sim_csv_t *csv; /* population = csv(...): the file's devices and examples (owned) */
    int resampled;  /* population = csv(...): devices != the file's devices */
} sim_pop_t;

/* Realize the scenario's population for `devices` devices. 0, or -1 with a message in err
 * (too many blocks, a group too small to be non-empty, out of memory). */
int sim_pop_build(const sim_scenario_t *sc, uint64_t devices, sim_pop_t *pop, char *err,
                  size_t errcap);
void sim_pop_free(sim_pop_t *pop);

/* A population of explicit blocks (experiments the scenario format cannot express: a few
 * devices with their own values): copies blocks[0 .. n) and numbers the devices. Every block's
 * group must be < ngroups. 0, or -1 with a message in err. */
int sim_pop_from_blocks(sim_pop_t *pop, const sim_block_t *blocks, size_t n, uint32_t ngroups,
                        char *err, size_t errcap);

/* The block of device `device` (< devices), by binary search; NULL past the end. */
const sim_block_t *sim_pop_find(const sim_pop_t *pop, uint64_t device, size_t *index);

/* The group sizes of `devices` devices with these shares, by largest remainder: sizes sum to
 * devices exactly. */
void sim_pop_sizes(const sim_scenario_t *sc, uint64_t devices, uint64_t *sizes);

#endif /* DPM_SIM_POPULATION_H */
