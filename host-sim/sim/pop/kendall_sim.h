/* SPDX-License-Identifier: Apache-2.0 */
/* Kendall's tau in the simulator: each device's pair of scores (x, y), and the population's tau.
 *
 * A group with `pairs = bivariate_normal(rho=R)` gives every device one pair (X, Y) from the
 * standard bivariate normal with correlation R: X = Z1, Y = R Z1 + sqrt(1 - R^2) Z2 with Z1, Z2
 * independent N(0, 1). The device hands the SDK the scores s = Phi(X) and Phi(Y) in Q1.31
 * (floor(Phi 2^31), at most 2^31 - 1): a monotone map, so tau is X and Y's, and the SDK's
 * ustat_bins quantizer (dpm_ustat_quantize: bin = floor(s k)) turns them into k quantile bins of
 * the marginal N(0, 1).
 *
 * Randomness: device i of a population of K devices draws Z1 then Z2 (sim_stream_normal) from
 * the stream sim_stream_key(sim_stream_key(population_seed ^ PAIRS_TAG, 0, K), 0, i): fixed for
 * the population, independent of the run, the campaign and the noise seed, so inprocess, exact
 * and network runs measure the same pairs; campaigns with the same groups see the same Z.
 *
 * Truths: the sample's tau_a (ties count 0) on the Q1.31 scores by Knight's O(n log n) count,
 * the binned sample's tau_a from its k x k histogram (what ustat_bins estimates), and the
 * model's tau for n -> infinity: for one group (2 / pi) arcsin(R); for groups of weights w_g
 * (their shares of the devices) sum_{g,h} w_g w_h (2 / pi) arcsin((R_g + R_h) / 2), because the
 * difference of two independent pairs from groups g and h is bivariate normal with correlation
 * (R_g + R_h) / 2 and tau = E[sign(X - X') sign(Y - Y')]. */
#ifndef DPM_SIM_KENDALL_SIM_H
#define DPM_SIM_KENDALL_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "sim/pop/population.h"
#include "sim/pop/progress.h"
#include "sim/scenario/scenario.h"

typedef struct {
    uint64_t base_key;
    double rho[SIM_MAX_GROUPS];  /* groups with pairs; 0 for the others */
    double rest[SIM_MAX_GROUPS]; /* sqrt(1 - rho^2) */
} sim_pairs_model_t;

/* The pairs of population pop under scenario sc (groups without pairs keep rho = 0: callers
 * check that the groups they use have pairs). */
void sim_pairs_model_init(sim_pairs_model_t *m, const sim_scenario_t *sc, const sim_pop_t *pop);

/* Device `device` (in block b): its scores x and y in Q1.31. */
void sim_pairs_device(const sim_pairs_model_t *m, const sim_block_t *b, uint64_t device,
                      uint32_t *x, uint32_t *y);

/* Every device of the groups with include[g] != 0, realized once (threads split the devices;
 * the result does not depend on them): hist[bx k + by] += 1 for the bins of its pair under the
 * SDK's quantizer (dpm_ustat_quantize), hist holding k^2 entries (zeroed here); when xy is not
 * NULL, the pairs packed as x << 32 | y into xy[0 .. devices) (in device order). *devices gets
 * their number. progress (may be NULL) counts the devices done. O(devices): about 0.13 us of
 * CPU per device. */
void sim_pairs_realize(const sim_pairs_model_t *m, const sim_pop_t *pop, const int *include,
                       uint32_t k, unsigned threads, sim_progress_t *progress, uint64_t *hist,
                       uint64_t *xy, uint64_t *devices);

/* The model's tau over the groups with include[g] != 0, weighted by their sizes in pop (see the
 * top). NaN when they hold no device. */
double sim_pairs_model_tau(const sim_pairs_model_t *m, const sim_pop_t *pop, const int *include);

/* tau_a of n pairs packed as xy[i] = x << 32 | y (ties count 0) in O(n log n): a radix sort by
 * (x, y), then the discordant pairs as the inversions of y (merge sort). xy is sorted on return;
 * scratch holds n uint64. NaN for n < 2. */
double sim_pairs_tau_a(uint64_t *xy, size_t n, uint64_t *scratch);

#endif /* DPM_SIM_KENDALL_SIM_H */
