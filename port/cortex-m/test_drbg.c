/* SPDX-License-Identifier: Apache-2.0 */
/* NOT FOR PRODUCTION. A seeded, predictable generator (SplitMix64) for QEMU test images and
 * the example firmware on boards without a TRNG: reports made with it have NO privacy, since
 * anyone who knows the seed can undo the noise. It only compiles when the build says so
 * explicitly; sdk/README.md §Rules the code keeps: seeded generators stay out of products. */
#ifndef DPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION
#error                                                                                             \
    "test_drbg.c is a predictable test generator: build it only for test images (-DDPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION)"
#endif

#include <string.h>

#include "dpm/port_cortex_m.h"

static uint64_t next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Each output in little-endian byte order, the last one cut to what is asked. The state stays
 * in registers across the loop (stores through `out` could alias it), and on a little-endian
 * target a whole output is two word stores (unaligned ones are fine on Cortex-M3/M4): the byte
 * loop this replaces cost about 17 Cortex-M4 instructions a byte, as much per 256-byte refill as
 * the SDK's whole tuple report, in every benchmark that draws from this generator. */
static int fill(void *ctx, uint8_t *out, size_t len)
{
    dpm_cm_test_drbg_t *d = ctx;
    uint64_t state = d->state;
    for (; len >= 8; len -= 8, out += 8) {
        uint64_t x = next(&state);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(out, &x, 8);
#else
        for (size_t i = 0; i < 8; i++) {
            out[i] = (uint8_t)(x >> (8 * i));
        }
#endif
    }
    if (len > 0) {
        uint64_t x = next(&state);
        for (size_t i = 0; i < len; i++) {
            out[i] = (uint8_t)(x >> (8 * i));
        }
    }
    d->state = state;
    return 0;
}

void dpm_cm_test_drbg_seed(dpm_cm_test_drbg_t *d, uint64_t seed)
{
    d->state = seed;
}

dpm_rng_t dpm_cm_test_drbg(dpm_cm_test_drbg_t *d)
{
    dpm_rng_t r = {fill, d};
    return r;
}
