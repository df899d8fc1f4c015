/* SPDX-License-Identifier: Apache-2.0 */
/* Seeded random streams of the simulator and of the estimators' fixed-seed Monte Carlo
 * (estimate/pairwise.c's max-|t| quantile), host-sim only: real devices use a CSPRNG through
 * their port. Here in common/ because both sim/ and estimate/ use it. Every simulated device has its own byte stream, so that its report depends only on
 * (seed, run, device, its input, the mechanism): any single device can be replayed alone, and
 * results do not depend on the thread count.
 *
 * Keys: device i of run r with base seed s uses
 *     key(s, r, i) = splitmix64 output number i + 1 of the generator seeded with
 *                    splitmix64 output number r + 1 of the generator seeded with s,
 * and its stream is splitmix64 seeded with that key: word j (j = 1, 2, ...) is
 * mix64(key + j * 0x9E3779B97F4A7C15), bytes little-endian (counter-based: a device's stream
 * costs nothing to derive). The SDK fills its 256-byte buffer once per device (~30 ns). Two
 * devices' streams overlap only if their keys differ by fewer than ~32 multiples of the odd
 * constant: probability ~ 64 / 2^64 per pair. */
#ifndef DPM_HOST_COMMON_STREAM_H
#define DPM_HOST_COMMON_STREAM_H

#include <stdint.h>

#include "dpm/port.h"

typedef struct {
    uint64_t key;
    uint64_t counter; /* words drawn so far */
} sim_stream_t;

/* The key of device `device` in run `run` under base seed `base` (see above). */
uint64_t sim_stream_key(uint64_t base, uint32_t run, uint64_t device);

void sim_stream_init(sim_stream_t *s, uint64_t key);
uint64_t sim_stream_next(sim_stream_t *s);
/* Uniform in (0, 1) (53 random bits, never 0 or 1). */
double sim_stream_unit(sim_stream_t *s);
/* Standard normal (Marsaglia's polar method). */
double sim_stream_normal(sim_stream_t *s);
/* Two independent standard normals from one polar step (both of its outputs: half the cost per
 * normal where many are drawn, e.g. estimate/pairwise.c). */
void sim_stream_normal_pair(sim_stream_t *s, double *a, double *b);
/* A port RNG whose bytes come from s (s must outlive it). */
dpm_rng_t sim_stream_port(sim_stream_t *s);

#endif /* DPM_HOST_COMMON_STREAM_H */
