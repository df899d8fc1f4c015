/* SPDX-License-Identifier: Apache-2.0 */
/* Bounded-time discrete Laplace: thresholds, certified δ, fixed randomness, digit layout and
 * error paths. (Its distribution is tested in tests/stat/test_laplace_fixed_gof.c.) */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "test_rng.h"

#define Q16(x) ((dpm_eps_t)((x)*65536u))
#define TWO64 18446744073709551616.0

/* round(2^64 / (1 + exp(2^j / t))), /usr/bin/python3 decimal at 50 digits. */
static const uint64_t THR_T1[] = {
    UINT64_C(4961093570831980854), UINT64_C(2198905795380358826), UINT64_C(331787012026708147),
    UINT64_C(6186118031800230),    UINT64_C(2075907333724),       UINT64_C(233613),
};
static const uint64_t THR_T10[] = {
    UINT64_C(8762587358261559784), UINT64_C(8304097042261566226), UINT64_C(7402906027527139368),
    UINT64_C(5718961402957943925), UINT64_C(3098713858522938880), UINT64_C(722480064893764019),
    UINT64_C(30599478995170520),   UINT64_C(50927124483879),      UINT64_C(140598597),
};

static uint64_t absdiff(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

/* Each threshold within 2 units of the exact rounding, and the total deviation within the
 * certified per-digit part of delta_tv (delta_tv / 2 covers one geometric). */
static void check_thresholds(const dpm_laplace_fixed_t *m, const uint64_t *ref, uint32_t n)
{
    assert_int_equal(m->nbits, n);
    uint64_t total = 0;
    for (uint32_t j = 0; j < n; j++) {
        assert_true(absdiff(m->threshold[j], ref[j]) <= 2u);
        total += absdiff(m->threshold[j], ref[j]);
    }
    assert_true(total <= m->delta_tv_num / 2u);
    for (uint32_t j = n; j < DPM_LAPLACE_FIXED_MAX_BITS; j++) {
        assert_true(m->threshold[j] == 0);
    }
}

static void test_thresholds_kat(void **state)
{
    (void)state;
    dpm_laplace_fixed_t m;
    assert_int_equal(dpm_laplace_fixed_init(&m, 1, Q16(1)), DPM_OK); /* t = 1 */
    check_thresholds(&m, THR_T1, 6);
    assert_int_equal(dpm_laplace_fixed_init(&m, 10, Q16(1)), DPM_OK); /* t = 10 */
    check_thresholds(&m, THR_T10, 9);
    assert_true(m.sensitivity == 10 && m.eps == Q16(1));
}

/* δ_tv <= 2^-48 by construction; δ = (1 + e^ε) δ_tv with e^ε rounded up; nbits close to
 * log2(34.7 t) (the tail needs 2 exp(-2^n / t) <= about 2^-49). */
static void test_delta_and_nbits(void **state)
{
    (void)state;
    static const struct {
        uint64_t sens;
        dpm_eps_t eps;
    } cfg[] = {
        {1, Q16(1)},    {10, Q16(1)},
        {1000, Q16(1)}, {1, 6553},
        {1, Q16(5)},    {1, Q16(10)},
        {2, 6553},      {UINT64_C(1) << 17, Q16(1)},
        {3, 1},         {UINT64_C(1) << 40, Q16(1)},
    };
    for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
        dpm_laplace_fixed_t m;
        assert_int_equal(dpm_laplace_fixed_init(&m, cfg[i].sens, cfg[i].eps), DPM_OK);
        double eps = cfg[i].eps / 65536.0;
        double t = (double)cfg[i].sens / eps;
        int want = (int)ceil(log2(34.66 * t));
        assert_true((int)m.nbits >= want - 1 && (int)m.nbits <= want + 1);
        assert_true(m.delta_tv_num <= (UINT64_C(1) << 16));
        assert_true(m.delta_tv_num >= 2u); /* the tail is never exactly zero */
        double delta = (1.0 + exp(eps)) * (double)m.delta_tv_num;
        assert_true((double)m.delta_num >= delta * (1.0 - 1e-12));
        assert_true((double)m.delta_num <= delta * (1.0 + 1e-12) + 2.0);
        if (eps <= 5.0) {
            assert_true(m.delta_num < (UINT64_C(1) << 24)); /* δ < 2^-40 */
        }
        for (uint32_t j = 1; j < m.nbits; j++) {
            assert_true(m.threshold[j] <= m.threshold[j - 1]); /* q_j decreases */
        }
        assert_true(m.threshold[0] < (UINT64_C(1) << 63)); /* q_0 < 1/2 */
    }
}

/* Huge ε: the 64-bit roundings times e^ε make δ meaningless; it saturates, never wraps. */
static void test_delta_saturates_at_huge_eps(void **state)
{
    (void)state;
    dpm_laplace_fixed_t m;
    assert_int_equal(dpm_laplace_fixed_init(&m, 1, DPM_EPS_MAX_Q16), DPM_OK);
    assert_int_equal(m.nbits, 1);
    assert_true(m.delta_num == UINT64_MAX);
}

static void seeded(test_rng_t *t, dpm_rng_t *port, dpm_rand_t *r, uint64_t seed)
{
    test_rng_seed(t, seed);
    *port = test_rng_port(t);
    assert_int_equal(dpm_rand_init(r, port), DPM_OK);
}

/* From the same RNG state, every value consumes 2 * nbits * 64 bits per sample and gets the
 * very same noise: the draw never depends on the value. */
static void test_fixed_randomness_for_every_value(void **state)
{
    (void)state;
    dpm_laplace_fixed_t m;
    assert_int_equal(dpm_laplace_fixed_init(&m, 1000, Q16(1)), DPM_OK);
    static const int64_t values[] = {
        0, 1, -1, 123456789, -987654321, INT64_C(1) << 60, -(INT64_C(1) << 60)};
    int64_t noise_ref[200];
    uint64_t state_ref[4];
    for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
        test_rng_t t;
        dpm_rng_t port;
        dpm_rand_t r;
        seeded(&t, &port, &r, 2024);
        for (int n = 0; n < 200; n++) {
            int64_t out = 0;
            assert_int_equal(dpm_laplace_fixed_add(&m, &r, values[v], &out), DPM_OK);
            int64_t z = out - values[v];
            assert_true(z > -(INT64_C(1) << m.nbits) && z < (INT64_C(1) << m.nbits));
            if (v == 0) {
                noise_ref[n] = z;
            }
            assert_true(z == noise_ref[n]);
        }
        assert_int_equal(dpm_rand_bits_used(&r), 200u * 2u * m.nbits * 64u);
        if (v == 0) {
            memcpy(state_ref, t.s, sizeof(state_ref));
        }
        assert_memory_equal(t.s, state_ref, sizeof(state_ref));
    }
}

/* Scripted digits: u = 0 sets a digit (0 < threshold), u = 2^64 - 1 clears it. Digit j of G1
 * comes from draw j, digit j of G2 from draw nbits + j. */
static void script_digits(uint8_t *bytes, size_t cap, uint32_t nbits, uint64_t g1, uint64_t g2)
{
    memset(bytes, 0, cap);
    for (uint32_t d = 0; d < 2u * nbits; d++) {
        uint64_t g = d < nbits ? g1 : g2;
        uint32_t j = d < nbits ? d : d - nbits;
        uint8_t fill = ((g >> j) & 1u) != 0 ? 0x00 : 0xff;
        memset(bytes + 8u * d, fill, 8);
    }
}

static dpm_status_t add_scripted(const dpm_laplace_fixed_t *m, uint64_t g1, uint64_t g2,
                                 int64_t value, int64_t *out)
{
    uint8_t bytes[DPM_RAND_BUF_BYTES];
    script_digits(bytes, sizeof(bytes), m->nbits, g1, g2);
    script_rng_t s = {bytes, sizeof(bytes), 0, 0};
    dpm_rng_t port = script_rng_port(&s);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    return dpm_laplace_fixed_add(m, &r, value, out);
}

static void test_digit_layout_and_overflow(void **state)
{
    (void)state;
    dpm_laplace_fixed_t m;
    assert_int_equal(dpm_laplace_fixed_init(&m, 1, Q16(1)), DPM_OK); /* nbits = 6: 96 bytes */
    int64_t out = 0;
    assert_int_equal(add_scripted(&m, 5, 2, 100, &out), DPM_OK);
    assert_true(out == 103);
    assert_int_equal(add_scripted(&m, 0, 63, 0, &out), DPM_OK);
    assert_true(out == -63);
    assert_int_equal(add_scripted(&m, 63, 63, -7, &out), DPM_OK);
    assert_true(out == -7);
    /* overflow is decided on the exact sum, after the fixed draw */
    out = 1;
    assert_int_equal(add_scripted(&m, 3, 0, INT64_MAX, &out), DPM_ERR_RANGE);
    assert_int_equal(add_scripted(&m, 3, 0, INT64_MAX - 2, &out), DPM_ERR_RANGE);
    assert_true(out == 1);
    assert_int_equal(add_scripted(&m, 3, 0, INT64_MAX - 3, &out), DPM_OK);
    assert_true(out == INT64_MAX);
    assert_int_equal(add_scripted(&m, 0, 3, INT64_MIN + 2, &out), DPM_ERR_RANGE);
    assert_int_equal(add_scripted(&m, 0, 3, INT64_MIN + 3, &out), DPM_OK);
    assert_true(out == INT64_MIN);
    assert_int_equal(add_scripted(&m, 63, 0, INT64_MIN, &out), DPM_OK); /* no overflow */
    assert_true(out == INT64_MIN + 63);
}

static void test_init_errors(void **state)
{
    (void)state;
    dpm_laplace_fixed_t sentinel;
    memset(&sentinel, 0x3c, sizeof(sentinel));
    dpm_laplace_fixed_t m = sentinel;
    assert_int_equal(dpm_laplace_fixed_init(NULL, 1, Q16(1)), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_fixed_init(&m, 0, Q16(1)), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_fixed_init(&m, (UINT64_C(1) << 40) + 1u, Q16(1)), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_fixed_init(&m, 1, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_fixed_init(&m, 1, DPM_EPS_MAX_Q16 + 1u), DPM_ERR_PARAM);
    /* t = 2^56 grid units needs about 61 digits */
    assert_int_equal(dpm_laplace_fixed_init(&m, UINT64_C(1) << 40, 1), DPM_ERR_RANGE);
    assert_memory_equal(&m, &sentinel, sizeof(m));
}

static void test_add_errors(void **state)
{
    (void)state;
    dpm_laplace_fixed_t m;
    assert_int_equal(dpm_laplace_fixed_init(&m, 1, Q16(1)), DPM_OK);
    test_rng_t t;
    dpm_rng_t port;
    dpm_rand_t r;
    seeded(&t, &port, &r, 1);
    int64_t out = 77;
    assert_int_equal(dpm_laplace_fixed_add(NULL, &r, 0, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_fixed_add(&m, NULL, 0, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_fixed_add(&m, &r, 0, NULL), DPM_ERR_PARAM);
    dpm_laplace_fixed_t bad = m;
    bad.nbits = 0;
    assert_int_equal(dpm_laplace_fixed_add(&bad, &r, 0, &out), DPM_ERR_PARAM);
    bad.nbits = DPM_LAPLACE_FIXED_MAX_BITS + 1u;
    assert_int_equal(dpm_laplace_fixed_add(&bad, &r, 0, &out), DPM_ERR_PARAM);
    assert_true(out == 77);
    assert_int_equal(dpm_rand_bits_used(&r), 0);

    failing_rng_t f;
    dpm_rng_t fport;
    dpm_rand_t fr;
    /* the first refill works, a later one fails mid-sample */
    assert_int_equal(failing_rand_init(&fr, &f, &fport, 1, 1), DPM_OK);
    dpm_status_t st = DPM_OK;
    int64_t before = out;
    for (int i = 0; i < 10 && st == DPM_OK; i++) {
        before = out;
        st = dpm_laplace_fixed_add(&m, &fr, 1000, &out); /* 96 bytes each, 256 per refill */
    }
    assert_int_equal(st, DPM_ERR_RNG);
    assert_true(out == before); /* the failed sample wrote nothing */
    assert_int_equal(dpm_laplace_fixed_add(&m, &fr, 0, &out), DPM_ERR_RNG); /* sticky */
    assert_true(out == before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thresholds_kat),
        cmocka_unit_test(test_delta_and_nbits),
        cmocka_unit_test(test_delta_saturates_at_huge_eps),
        cmocka_unit_test(test_fixed_randomness_for_every_value),
        cmocka_unit_test(test_digit_layout_and_overflow),
        cmocka_unit_test(test_init_errors),
        cmocka_unit_test(test_add_errors),
    };
    return cmocka_run_group_tests_name("laplace_fixed", tests, NULL, NULL);
}
