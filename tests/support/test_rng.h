/* SPDX-License-Identifier: Apache-2.0 */
/* Deterministic random sources for tests only (never in sdk/ or port/).
 *
 * test_rng: xoshiro256** seeded through splitmix64. Pure 64-bit integer arithmetic, so the
 * byte stream for a seed is identical on every platform (golden vectors rely on this).
 * script_rng: replays a fixed byte string, for enumerating every random input of a sampler.
 * failing_rng: fails at a chosen call, for error-path tests. */
#ifndef TEST_RNG_H
#define TEST_RNG_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/noise.h"
#include "dpm/port.h"

typedef struct {
    uint64_t s[4];
    uint64_t calls;
    uint64_t bytes;
} test_rng_t;

void test_rng_seed(test_rng_t *t, uint64_t seed);
uint64_t test_rng_next(test_rng_t *t);
/* Uniform in [0, 1) from the top 53 bits of one draw; a standard normal by Box-Muller from two
 * uniforms (the statistical tests' populations). Inline, so that programs that link this file
 * without libm (test_constant_time.sh's) do not need it. */
static inline double test_rng_unit(test_rng_t *t)
{
    return (double)(test_rng_next(t) >> 11) / 9007199254740992.0;
}

static inline double test_rng_normal(test_rng_t *t)
{
    double u = test_rng_unit(t), v = test_rng_unit(t);
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}
/* A dpm_rng_t that draws from t. */
dpm_rng_t test_rng_port(test_rng_t *t);
/* Seed t, point *rng at it and bind *r to *rng (t and rng must outlive r): dpm_rand_init's
 * status. */
dpm_status_t test_rand_init(dpm_rand_t *r, test_rng_t *t, dpm_rng_t *rng, uint64_t seed);

typedef struct {
    const uint8_t *bytes;
    size_t len;
    size_t pos;
    int exhausted; /* set when a fill asked for more than was left (the fill fails) */
} script_rng_t;
dpm_rng_t script_rng_port(script_rng_t *s);

typedef struct {
    test_rng_t inner;
    uint64_t fail_at_call; /* 0-based index of the first failing fill() */
    uint64_t calls;
} failing_rng_t;
dpm_rng_t failing_rng_port(failing_rng_t *f);
/* Zero f, seed it, make fill() call fail_at_call and every later one fail, point *rng at it and
 * bind *r to *rng (f and rng must outlive r): dpm_rand_init's status. */
dpm_status_t failing_rand_init(dpm_rand_t *r, failing_rng_t *f, dpm_rng_t *rng, uint64_t seed,
                               uint64_t fail_at_call);

#endif
