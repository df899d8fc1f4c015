/* SPDX-License-Identifier: Apache-2.0 */
/* Exact mode: one run's aggregate drawn at the aggregate level, distributed as the sum of the
 * devices' reports (same population, same quantized mechanism), without running any device.
 *
 * For every block of c identical devices holding (group g, values x_j):
 *   kept_b = Binomial(c, a)                   reports that keep their group (a = keep_g / 2^32)
 * per source group g, the flipped reports F_g = sum_b (c_b - kept_b) spread uniformly over the
 * d - 1 other groups: a multinomial (GRR gives each other group other_g / 2^32). Then, per
 * metric j:
 *   tuple_mr  kept: #(+1) = Binomial(kept_b, p), p = x b + (1 - x)(1 - b) (Harmony coin then RR,
 *             b = keep_v / 2^32); flipped into h: #(+1) = Binomial(F_h, 1/2) exactly (a fair
 *             coin through RR); the sum is 2 #(+1) - n.
 *   tuple_ml  kept: n floor(v 2^F) + Binomial(kept_b, frac) (the device's unbiased randomized
 *             rounding) + the Laplace noise; noise of all kept reports of a group is one sum of
 *             n discrete Laplace variables (NB - NB', sim_rng_dlap_sum), likewise for the
 *             flipped reports (value 0, scale t_flip).
 * Exact in distribution: the decomposition (multinomials as conditional binomials, sums of
 * iid geometrics as negative binomials, independence across metrics and reports). Floating
 * point: the probabilities (rationals of 32/64-bit integers rounded to double) and the
 * samplers of sim_rng.h (BTPE / PTRS / Marsaglia-Tsang in double precision: relative errors
 * ~1e-15 per pmf value, far below anything a finite number of runs can detect; see the
 * two-sample test in tests/stat/test_sim_exact.c). Not sampled: the sum of squares of M_L
 * reports (only the collector's plug-in nu2 uses it; dpm-sim's intervals use the true or the
 * worst-case nu2), and the tuple_ml report dropped with probability < 2^-45. */
#ifndef DPM_SIM_EXACT_H
#define DPM_SIM_EXACT_H

#include <stdint.h>

#include "sim/population.h"
#include "sim/sim_cfg.h"

/* Run `run` of configuration cfg over pop into *agg. *words (may be NULL) gets the random
 * 64-bit words drawn. 0, or -1 on an aggregate overflow. */
int sim_exact_run(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run, sim_agg_t *agg,
                  uint64_t *words);

#endif /* DPM_SIM_EXACT_H */
