/* SPDX-License-Identifier: Apache-2.0 */
/* The portable C of the bare-metal port (port/cortex-m/test_drbg.c and trng.c), run on every
 * target: the test generator is SplitMix64 (its published outputs for seed 0), little-endian,
 * cut anywhere, reproducible from its seed; the TRNG hook's weak default fails, so a build that
 * forgets the board's driver gets DPM_ERR_RNG and Mbed TLS no entropy, never predictable bytes.
 * (The rest of port/cortex-m, startup and semihosting, is Arm code: make cross runs it.) */
#ifndef DPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION /* the Cortex-M images define it for every file */
#define DPM_CM_TEST_DRBG_NOT_FOR_PRODUCTION
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "dpm/port_cortex_m.h"

int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len, size_t *olen);

/* SplitMix64's first three outputs from state 0 (Steele, Lea, Flood 2014; the reference
 * splitmix64.c by Vigna gives the same). */
static const uint64_t SPLITMIX_SEED0[3] = {
    UINT64_C(0xE220A8397B1DCDAF), UINT64_C(0x6E789E6AA1B965F4), UINT64_C(0x06C45D188009454F)};

static uint64_t le64(const uint8_t *p)
{
    uint64_t x = 0;
    for (int i = 7; i >= 0; i--) {
        x = x << 8 | p[i];
    }
    return x;
}

static void test_drbg_is_splitmix64(void **state)
{
    (void)state;
    dpm_cm_test_drbg_t d;
    dpm_cm_test_drbg_seed(&d, 0);
    dpm_rng_t r = dpm_cm_test_drbg(&d);
    uint8_t out[24];
    assert_int_equal(r.fill(r.ctx, out, sizeof(out)), 0);
    for (int i = 0; i < 3; i++) {
        assert_true(le64(out + 8 * i) == SPLITMIX_SEED0[i]);
    }
}

static void test_drbg_cut_anywhere(void **state)
{
    (void)state;
    dpm_cm_test_drbg_t a, b;
    dpm_cm_test_drbg_seed(&a, 0);
    dpm_cm_test_drbg_seed(&b, 0);
    dpm_rng_t ra = dpm_cm_test_drbg(&a), rb = dpm_cm_test_drbg(&b);
    uint8_t whole[24], parts[24];
    assert_int_equal(ra.fill(ra.ctx, whole, sizeof(whole)), 0);
    /* 3 + 5 + 0 + 16 bytes: a fill that ends inside a word drops the rest of that word */
    assert_int_equal(rb.fill(rb.ctx, parts, 3), 0);
    assert_int_equal(rb.fill(rb.ctx, parts + 3, 0), 0);
    assert_int_equal(rb.fill(rb.ctx, parts + 8, 16), 0);
    assert_memory_equal(parts, whole, 3);
    assert_memory_equal(parts + 8, whole + 8, 16);
}

static void test_drbg_seed_decides(void **state)
{
    (void)state;
    dpm_cm_test_drbg_t a, b;
    uint8_t x[16], y[16], z[16];
    dpm_cm_test_drbg_seed(&a, 42);
    dpm_rng_t r = dpm_cm_test_drbg(&a);
    assert_int_equal(r.fill(r.ctx, x, sizeof(x)), 0);
    dpm_cm_test_drbg_seed(&a, 42); /* reseeding restarts the stream */
    assert_int_equal(r.fill(r.ctx, y, sizeof(y)), 0);
    assert_memory_equal(x, y, sizeof(x));
    dpm_cm_test_drbg_seed(&b, 43);
    r = dpm_cm_test_drbg(&b);
    assert_int_equal(r.fill(r.ctx, z, sizeof(z)), 0);
    assert_memory_not_equal(x, z, sizeof(x));
}

static void test_trng_default_fails_closed(void **state)
{
    (void)state;
    uint8_t buf[16];
    memset(buf, 0xA5, sizeof(buf));
    dpm_rng_t t = dpm_cm_trng();
    assert_true(t.fill(t.ctx, buf, sizeof(buf)) < 0);
    /* the SDK's random stream over it: DPM_ERR_RNG, no bits */
    dpm_rand_t rand;
    uint64_t bits = 0;
    dpm_status_t st = dpm_rand_init(&rand, &t);
    if (st == DPM_OK) {
        st = dpm_rand_bits(&rand, 8, &bits);
    }
    assert_int_equal(st, DPM_ERR_RNG);
    /* Mbed TLS's entropy hook: failure, and no byte claimed */
    size_t olen = 99;
    assert_true(mbedtls_hardware_poll(NULL, buf, sizeof(buf), &olen) < 0);
    assert_int_equal(olen, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_drbg_is_splitmix64),
        cmocka_unit_test(test_drbg_cut_anywhere),
        cmocka_unit_test(test_drbg_seed_decides),
        cmocka_unit_test(test_trng_default_fails_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
