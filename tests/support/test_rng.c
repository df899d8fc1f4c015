/* SPDX-License-Identifier: Apache-2.0 */
#include "test_rng.h"

#include <string.h>

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void test_rng_seed(test_rng_t *t, uint64_t seed)
{
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < 4; i++) {
        t->s[i] = splitmix64(&seed);
    }
}

uint64_t test_rng_next(test_rng_t *t)
{
    uint64_t *s = t->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t x = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= x;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Bytes leave in little-endian order of each 64-bit word, whatever the host byte order. */
static int test_rng_fill(void *ctx, uint8_t *out, size_t len)
{
    test_rng_t *t = ctx;
    t->calls++;
    t->bytes += len;
    while (len > 0) {
        uint64_t w = test_rng_next(t);
        size_t n = len < 8 ? len : 8;
        for (size_t i = 0; i < n; i++) {
            out[i] = (uint8_t)(w >> (8 * i));
        }
        out += n;
        len -= n;
    }
    return 0;
}

dpm_rng_t test_rng_port(test_rng_t *t)
{
    dpm_rng_t r = {test_rng_fill, t};
    return r;
}

static int script_fill(void *ctx, uint8_t *out, size_t len)
{
    script_rng_t *s = ctx;
    if (len > s->len - s->pos) {
        s->exhausted = 1;
        return -1;
    }
    memcpy(out, s->bytes + s->pos, len);
    s->pos += len;
    return 0;
}

dpm_rng_t script_rng_port(script_rng_t *s)
{
    dpm_rng_t r = {script_fill, s};
    return r;
}

static int failing_fill(void *ctx, uint8_t *out, size_t len)
{
    failing_rng_t *f = ctx;
    if (f->calls++ >= f->fail_at_call) {
        return -1;
    }
    return test_rng_fill(&f->inner, out, len);
}

dpm_rng_t failing_rng_port(failing_rng_t *f)
{
    dpm_rng_t r = {failing_fill, f};
    return r;
}

dpm_status_t failing_rand_init(dpm_rand_t *r, failing_rng_t *f, dpm_rng_t *rng, uint64_t seed,
                               uint64_t fail_at_call)
{
    memset(f, 0, sizeof(*f));
    test_rng_seed(&f->inner, seed);
    f->fail_at_call = fail_at_call;
    *rng = failing_rng_port(f);
    return dpm_rand_init(r, rng);
}

dpm_status_t test_rand_init(dpm_rand_t *r, test_rng_t *t, dpm_rng_t *rng, uint64_t seed)
{
    test_rng_seed(t, seed);
    *rng = test_rng_port(t);
    return dpm_rand_init(r, rng);
}
