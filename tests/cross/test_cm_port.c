/* SPDX-License-Identifier: Apache-2.0 */
/* port/cortex-m on the target (its RAM storage is the SDK's dpm_ram_storage, tested by
 * tests/unit/test_ram_storage.c on every target): the TRNG hook fails closed when the board has none (QEMU's mps2), both for the SDK and for Mbed TLS;
 * the test generator is reproducible (and so only for tests); the C library's heap hook
 * (_sbrk) refuses to grow past the heap's end or shrink below its start. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "dpm/port_cortex_m.h"

int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len, size_t *olen);
void *_sbrk(ptrdiff_t incr);
extern char __heap_start[], __heap_end[];

static void test_trng_hook_fails_closed(void **state)
{
    (void)state;
    uint8_t buf[8];
    dpm_rng_t rng = dpm_cm_trng();
    assert_true(rng.fill(rng.ctx, buf, sizeof(buf)) < 0);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &rng), DPM_OK);
    uint64_t u = 77;
    assert_int_equal(dpm_uniform(&r, 10, &u), DPM_ERR_RNG);
    assert_int_equal(u, 77); /* untouched */
    size_t olen = 99;
    assert_int_equal(mbedtls_hardware_poll(NULL, buf, sizeof(buf), &olen), -1);
    assert_int_equal(olen, 0);
}

static void test_test_drbg_is_reproducible(void **state)
{
    (void)state;
    dpm_cm_test_drbg_t a, b, c;
    dpm_cm_test_drbg_seed(&a, 1);
    dpm_cm_test_drbg_seed(&b, 1);
    dpm_cm_test_drbg_seed(&c, 2);
    uint8_t x[13], y[13], z[13];
    dpm_rng_t ra = dpm_cm_test_drbg(&a), rb = dpm_cm_test_drbg(&b), rc = dpm_cm_test_drbg(&c);
    assert_int_equal(ra.fill(ra.ctx, x, sizeof(x)), 0);
    assert_int_equal(rb.fill(rb.ctx, y, sizeof(y)), 0);
    assert_int_equal(rc.fill(rc.ctx, z, sizeof(z)), 0);
    assert_memory_equal(x, y, sizeof(x));
    assert_memory_not_equal(x, z, sizeof(x));
}

static void test_sbrk_stays_in_the_heap(void **state)
{
    (void)state;
    char *top = _sbrk(0);
    assert_true(top >= __heap_start && top <= __heap_end);
    errno = 0;
    assert_ptr_equal(_sbrk(__heap_end - top + 1), (void *)-1); /* one byte past the end */
    assert_int_equal(errno, ENOMEM);
    errno = 0;
    assert_ptr_equal(_sbrk(-(top - __heap_start) - 1), (void *)-1); /* below the start */
    assert_int_equal(errno, ENOMEM);
    assert_ptr_equal(_sbrk(0), top); /* refusals move nothing */
    assert_ptr_equal(_sbrk(16), top);
    assert_ptr_equal(_sbrk(-16), top + 16); /* returns the old top, as sbrk does */
    assert_ptr_equal(_sbrk(0), top);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trng_hook_fails_closed),
        cmocka_unit_test(test_test_drbg_is_reproducible),
        cmocka_unit_test(test_sbrk_stays_in_the_heap),
    };
    return cmocka_run_group_tests_name("cm_port", tests, NULL, NULL);
}
