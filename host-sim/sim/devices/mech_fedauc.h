/* SPDX-License-Identifier: Apache-2.0 */
/* fedauc_rr and fedauc_lap in the simulator (mech_fedauc.c). What the reproductions reach into:
 * one device's fedauc_lap report drawn as the SDK draws it (exact mode, repro fedauc and
 * auc_compare). */
#ifndef DPM_SIM_MECH_FEDAUC_H
#define DPM_SIM_MECH_FEDAUC_H

#include <stdint.h>

#include "dpm/expert/fedauc.h"
#include "sim/pop/sim_rng.h"

/* A device's (a client's) label-free and exact statistics over its examples' doubled ranks R:
 * n, positives p, sum R y (sum2), S = sum R (sum_rank2), max R, D = max |n R - S| (maxdev),
 * t = sum (n R - S) y. */
typedef struct {
    uint32_t n, p, max_rank2;
    uint64_t sum2, sum_rank2, maxdev;
    int64_t t;
} sim_fa_stats_t;

/* Its fedauc_lap report body with the SDK's noise (the law of dpm_fedauc_perturb's draws:
 * sensitivity and split of f's variant), from rng; m = M, the examples of the period. */
void sim_fa_lap_body(const dpm_fedauc_t *f, uint64_t m, const sim_fa_stats_t *s, sim_rng_t *rng,
                     dpm_fedauc_report_t *b);

#endif /* DPM_SIM_MECH_FEDAUC_H */
