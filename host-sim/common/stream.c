/* SPDX-License-Identifier: Apache-2.0 */
/* Seeded device streams (see stream.h). */
#include "common/stream.h"

#include <math.h>

#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)

/* The splitmix64 output function. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Output number n (n >= 1) of splitmix64 seeded with `seed`. */
static uint64_t splitmix_at(uint64_t seed, uint64_t n)
{
    return mix64(seed + GOLDEN * n);
}

uint64_t sim_stream_key(uint64_t base, uint32_t run, uint64_t device)
{
    return splitmix_at(splitmix_at(base, (uint64_t)run + 1u), device + 1u);
}

void sim_stream_init(sim_stream_t *s, uint64_t key)
{
    s->key = key;
    s->counter = 0;
}

uint64_t sim_stream_next(sim_stream_t *s)
{
    s->counter++;
    return splitmix_at(s->key, s->counter);
}

double sim_stream_unit(sim_stream_t *s)
{
    return ((double)(sim_stream_next(s) >> 11) + 0.5) * 0x1.0p-53;
}

void sim_stream_normal_pair(sim_stream_t *s, double *a, double *b)
{
    for (;;) {
        double x = 2.0 * sim_stream_unit(s) - 1.0;
        double y = 2.0 * sim_stream_unit(s) - 1.0;
        double r2 = x * x + y * y;
        if (r2 > 0.0 && r2 < 1.0) {
            double f = sqrt(-2.0 * log(r2) / r2);
            *a = x * f;
            *b = y * f;
            return;
        }
    }
}

double sim_stream_normal(sim_stream_t *s)
{
    double a, b;
    sim_stream_normal_pair(s, &a, &b);
    return a; /* the second normal is dropped: simpler (and every stream stays as it was) */
}

/* Bytes leave little-endian, whatever the host byte order, so streams are portable. The
 * full-word stores are spelled out so the compiler merges them into one (the SDK refills 256
 * bytes per device: this loop is most of a device's cost otherwise). */
static void store_le64(uint8_t *out, uint64_t w)
{
    out[0] = (uint8_t)w;
    out[1] = (uint8_t)(w >> 8);
    out[2] = (uint8_t)(w >> 16);
    out[3] = (uint8_t)(w >> 24);
    out[4] = (uint8_t)(w >> 32);
    out[5] = (uint8_t)(w >> 40);
    out[6] = (uint8_t)(w >> 48);
    out[7] = (uint8_t)(w >> 56);
}

static int stream_fill(void *ctx, uint8_t *out, size_t len)
{
    sim_stream_t *s = ctx;
    uint64_t key = s->key, counter = s->counter;
    for (; len >= 8; len -= 8, out += 8) {
        store_le64(out, splitmix_at(key, ++counter));
    }
    if (len > 0) {
        uint64_t w = splitmix_at(key, ++counter);
        for (size_t b = 0; b < len; b++) {
            out[b] = (uint8_t)(w >> (8 * b));
        }
    }
    s->counter = counter;
    return 0;
}

dpm_rng_t sim_stream_port(sim_stream_t *s)
{
    dpm_rng_t r = {stream_fill, s};
    return r;
}
