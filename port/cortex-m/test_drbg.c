/* SPDX-License-Identifier: Apache-2.0 */
/* NOT FOR PRODUCTION. A seeded, predictable generator (SplitMix64) for QEMU test images and
 * the example firmware on boards without a TRNG: reports made with it have NO privacy, since
 * anyone who knows the seed can undo the noise. It only compiles when the build says so
 * explicitly; sdk/README.md §Rules the code keeps: seeded generators stay out of products. */
#ifndef DPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION
#error                                                                                             \
    "test_drbg.c is a predictable test generator: build it only for test images (-DDPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION)"
#endif

#include "dpm/port_cortex_m.h"

static uint64_t next(dpm_cm_test_drbg_t *d)
{
    uint64_t z = (d->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int fill(void *ctx, uint8_t *out, size_t len)
{
    dpm_cm_test_drbg_t *d = ctx;
    while (len > 0) {
        uint64_t x = next(d);
        for (int i = 0; i < 8 && len > 0; i++, len--) {
            *out++ = (uint8_t)(x >> (8 * i));
        }
    }
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
