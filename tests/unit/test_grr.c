/* SPDX-License-Identifier: Apache-2.0 */
/* GRR / RR: integer thresholds, implemented ε, the exact map U -> report, constant
 * randomness use, and error paths. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "noise/grr_internal.h"
#include "noise/xexp.h"
#include "test_rng.h"

#define TWO32 (UINT64_C(1) << 32)
#define Q16(x) ((dpm_eps_t)((x)*65536u))

/* ---- helpers --------------------------------------------------------------------------- */

/* The report for a chosen U: a fresh dpm_rand_t over a script whose first 4 bytes are U. */
static uint32_t report_at(const dpm_grr_t *g, uint32_t x, uint32_t u)
{
    uint8_t bytes[DPM_RAND_BUF_BYTES] = {0};
    for (int i = 0; i < 4; i++) {
        bytes[i] = (uint8_t)(u >> (8 * i));
    }
    script_rng_t s = {bytes, sizeof(bytes), 0, 0};
    dpm_rng_t port = script_rng_port(&s);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    uint32_t y = 0xffffffffu;
    assert_int_equal(dpm_grr_perturb(g, &r, x, &y), DPM_OK);
    assert_int_equal(dpm_rand_bits_used(&r), 32);
    return y;
}

/* The documented map, with plain division: U < keep -> x, else (x + 1 + (U - keep) / other)
 * mod k. */
static uint32_t reference_report(const dpm_grr_t *g, uint32_t x, uint32_t u)
{
    if (u < g->keep) {
        return x;
    }
    return (uint32_t)((x + 1u + (uint64_t)(u - g->keep) / g->other) % g->k);
}

static const uint32_t GRID_K[] = {2, 3, 4, 7, 16, 64, 100, 255, 256};
static const dpm_eps_t GRID_EPS[] = {
    1, 7, 100, 655, 6553, Q16(1) / 2, Q16(1), Q16(2), Q16(5), Q16(10), Q16(15), Q16(20), Q16(22),
};
#define GRID_N_K (sizeof(GRID_K) / sizeof(GRID_K[0]))
#define GRID_N_EPS (sizeof(GRID_EPS) / sizeof(GRID_EPS[0]))

/* ---- thresholds -------------------------------------------------------------------------- */

/* k = 2: keep = T = floor(2^32 e^ε / (1 + e^ε)) for the Q16.16 ε the SDK actually holds.
 * Expected values computed offline with /usr/bin/python3 decimal at 50 digits:
 *   e = exp(Decimal(q) / 65536); T = floor(2^32 * e / (1 + e)). */
static void test_rr_thresholds_kat(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        dpm_eps_t q16;
        uint32_t keep;
    } kat[] = {
        {"0.01", 655, 2158215078u},  {"0.1", 6553, 2254758635u}, {"0.5", 32768, 2673442470u},
        {"1", 65536, 3139872686u},   {"2", 131072, 3782994644u}, {"5", 327680, 4266221720u},
        {"10", 655360, 4294772313u},
    };
    for (size_t i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
        dpm_eps_t e = 0;
        assert_int_equal(dpm_eps_from_decimal(kat[i].text, &e), DPM_OK);
        assert_int_equal(e, kat[i].q16);
        dpm_grr_t g;
        assert_int_equal(dpm_rr_init(&g, e), DPM_OK);
        assert_int_equal(g.keep, kat[i].keep);
        assert_int_equal(g.other, (uint32_t)(TWO32 - kat[i].keep));
        assert_true(g.eps_implemented <= e);
    }
    /* The table of sdk/docs/tuple.md §Thresholds for the exactly representable ε. */
    static const struct {
        dpm_eps_t eps;
        uint32_t spec_t;
    } spec[] = {
        {Q16(1) / 2, 2673442470u}, {Q16(1), 3139872686u},  {Q16(2), 3782994644u},
        {Q16(5), 4266221720u},     {Q16(10), 4294772313u},
    };
    for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++) {
        dpm_grr_t g;
        assert_int_equal(dpm_rr_init(&g, spec[i].eps), DPM_OK);
        assert_int_equal(g.keep, spec[i].spec_t);
    }
    /* 0.01 and 0.1 are not Q16.16 values: they round down, so T lies below the spec's. */
    dpm_grr_t g;
    assert_int_equal(dpm_rr_init(&g, 655), DPM_OK);
    assert_true(g.keep < 2158220976u);
    assert_int_equal(dpm_rr_init(&g, 6553), DPM_OK);
    assert_true(g.keep < 2254768441u);
}

/* Over a (k, ε) grid: the thresholds partition 2^32, implemented ε <= requested and close to
 * it, other is the ceiling of 2^32 / (e^ε + k - 1), recip is ceil(2^64 / other), and
 * dpm_grr_epsilon agrees. DPM_ERR_RANGE only where e^ε + k - 1 >= 2^32. */
static void test_grr_grid(void **state)
{
    (void)state;
    for (size_t i = 0; i < GRID_N_K; i++) {
        for (size_t j = 0; j < GRID_N_EPS; j++) {
            uint32_t k = GRID_K[i];
            dpm_eps_t eps = GRID_EPS[j];
            double e = exp((double)eps / 65536.0);
            dpm_grr_t g;
            dpm_status_t st = dpm_grr_init(&g, k, eps);
            if (e + k - 1.0 >= 4294967296.0 * (1.0 - 1e-9)) {
                assert_int_equal(st, DPM_ERR_RANGE);
                continue;
            }
            assert_int_equal(st, DPM_OK);
            assert_int_equal(g.k, k);
            assert_true((uint64_t)g.keep + (uint64_t)(k - 1u) * g.other == TWO32);
            assert_true(g.other >= 2 && g.keep > g.other);
            assert_true(g.recip == UINT64_MAX / g.other + 1u);
            /* other = ceil(2^32 / (e^ε + k - 1)) (double check with a 1e-12 margin) */
            double ideal = 4294967296.0 / (e + k - 1.0);
            assert_true((double)g.other >= ideal * (1.0 - 1e-12));
            assert_true((double)g.other - 1.0 < ideal * (1.0 + 1e-12));
            /* implemented ε: never above the request, and short of it only by rounding other
             * up by < 1: e^ε = 2^32 / other* - (k - 1) with other* > other - 1, while
             * keep / other = 2^32 / other - (k - 1); plus 1 ulp for the ε rounding */
            assert_true(g.eps_implemented <= eps);
            double most = 4294967296.0 / (g.other - 1.0) - (k - 1.0);
            double have = 4294967296.0 / g.other - (k - 1.0);
            double slack = 65536.0 * log(most / have);
            assert_true((double)(eps - g.eps_implemented) <= 1.0 + ceil(slack * (1.0 + 1e-9)));
            if (eps <= Q16(10)) {
                assert_true(eps - g.eps_implemented <= 2u);
            }
            dpm_eps_t again = 0;
            assert_int_equal(dpm_grr_epsilon(k, g.keep, g.other, &again), DPM_OK);
            assert_int_equal(again, g.eps_implemented);
        }
    }
}

/* The internal entry point for the mechanism layer: M_R's e^ε1 = (1 + e) / 2 as a lower
 * bound, and the refusal of a ratio that leaves keep <= other. */
static void test_grr_init_ratio(void **state)
{
    (void)state;
    dpm_xf_t ratio = dpm_xf_half(dpm_xf_add_down(dpm_xexp_q16_down(Q16(1)), dpm_xf_from_u64(1)));
    dpm_grr_t g;
    assert_int_equal(dpm_grr_init_ratio(&g, 4, &ratio), DPM_OK);
    assert_true((uint64_t)g.keep + 3u * (uint64_t)g.other == TWO32);
    /* 65536 ln((1 + e) / 2) = 40639.824 (Python decimal): rounded up, at most 1 ulp more */
    assert_true(g.eps_implemented >= 40638 && g.eps_implemented <= 40641);
    assert_true(dpm_xf_ge_ratio(ratio, g.keep, g.other)); /* keep / other <= the bound */

    dpm_grr_t untouched;
    memset(&untouched, 0xa5, sizeof(untouched));
    dpm_grr_t h = untouched;
    dpm_xf_t one = dpm_xf_from_u64(1);
    assert_int_equal(dpm_grr_init_ratio(&h, 2, &one), DPM_ERR_RANGE); /* keep == other */
    dpm_xf_t zero = {0, 0};
    assert_int_equal(dpm_grr_init_ratio(&h, 2, &zero), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_init_ratio(&h, 1, &ratio), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_init_ratio(&h, 2, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_init_ratio(NULL, 2, &ratio), DPM_ERR_PARAM);
    dpm_xf_t huge = {UINT64_C(1) << 63, 0}; /* 2^63: other would be 1 */
    assert_int_equal(dpm_grr_init_ratio(&h, 2, &huge), DPM_ERR_RANGE);
    assert_memory_equal(&h, &untouched, sizeof(h));
}

/* ---- the exact map U -> report ----------------------------------------------------------- */

/* The report is a function of U. Within [keep + i other, keep + (i+1) other) the quotient
 * (U - keep) / other is computed as mulhi(recip, U - keep), which is non-decreasing in U, so
 * equal reports at both ends of a block prove the whole block; below keep the mask selects x.
 * Hence the count of U giving y is exactly keep for y = x and other for every y != x. */
static void check_pmf_by_blocks(const dpm_grr_t *g)
{
    for (uint32_t x = 0; x < g->k; x++) {
        assert_int_equal(report_at(g, x, 0), x);
        assert_int_equal(report_at(g, x, g->keep - 1u), x);
        uint32_t seen = 0; /* bitmask of reports for small k, counts otherwise */
        for (uint32_t i = 0; i + 1u < g->k; i++) {
            uint32_t first = g->keep + i * g->other;
            uint32_t last = first + g->other - 1u;
            uint32_t want = (x + 1u + i) % g->k;
            assert_int_equal(report_at(g, x, first), want);
            assert_int_equal(report_at(g, x, last), want);
            assert_int_not_equal(want, x);
            seen++;
        }
        assert_int_equal(seen, g->k - 1u);
        /* the blocks tile [keep, 2^32) exactly */
        assert_true((uint64_t)g->keep + (uint64_t)(g->k - 1u) * g->other == TWO32);
    }
}

static void test_grr_exact_pmf(void **state)
{
    (void)state;
    static const uint32_t ks[] = {2, 3, 4, 64, 256};
    static const dpm_eps_t es[] = {655, Q16(1) / 10, Q16(1), Q16(5), Q16(21)};
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
        for (size_t j = 0; j < sizeof(es) / sizeof(es[0]); j++) {
            dpm_grr_t g;
            dpm_status_t st = dpm_grr_init(&g, ks[i], es[j]);
            if (st == DPM_ERR_RANGE) {
                continue; /* ε = 21 with large k */
            }
            assert_int_equal(st, DPM_OK);
            check_pmf_by_blocks(&g);
        }
    }
}

/* Dense sweeps against the plain-division reference: the top of the U range at the largest
 * ε (blocks of 2), and random U for every grid configuration. */
static void test_grr_matches_reference(void **state)
{
    (void)state;
    dpm_grr_t g;
    assert_int_equal(dpm_grr_init(&g, 3, Q16(22)), DPM_OK);
    assert_int_equal(g.other, 2);
    for (uint64_t u = g.keep - 100u; u < TWO32; u++) {
        for (uint32_t x = 0; x < 3; x++) {
            assert_int_equal(report_at(&g, x, (uint32_t)u), reference_report(&g, x, (uint32_t)u));
        }
    }
    test_rng_t t;
    test_rng_seed(&t, 99);
    for (size_t i = 0; i < GRID_N_K; i++) {
        for (size_t j = 0; j < GRID_N_EPS; j++) {
            if (dpm_grr_init(&g, GRID_K[i], GRID_EPS[j]) != DPM_OK) {
                continue;
            }
            for (int n = 0; n < 300; n++) {
                uint64_t w = test_rng_next(&t);
                uint32_t u = (uint32_t)w;
                uint32_t x = (uint32_t)((w >> 32) % g.k);
                assert_int_equal(report_at(&g, x, u), reference_report(&g, x, u));
            }
        }
    }
}

/* ---- constant randomness ----------------------------------------------------------------- */

/* From the same RNG state, every input x consumes the same bits and port calls and leaves the
 * port in the same state. */
static void test_grr_same_randomness_for_every_input(void **state)
{
    (void)state;
    static const uint32_t ks[] = {2, 5, 256};
    for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
        dpm_grr_t g;
        assert_int_equal(dpm_grr_init(&g, ks[i], Q16(1)), DPM_OK);
        uint64_t ref_bits = 0, ref_calls = 0, ref_state[4] = {0};
        for (uint32_t x = 0; x < ks[i]; x++) {
            test_rng_t t;
            test_rng_seed(&t, 1234);
            dpm_rng_t port = test_rng_port(&t);
            dpm_rand_t r;
            assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
            for (int n = 0; n < 1000; n++) {
                uint32_t y;
                assert_int_equal(dpm_grr_perturb(&g, &r, x, &y), DPM_OK);
                assert_true(y < ks[i]);
            }
            assert_int_equal(dpm_rand_bits_used(&r), 32000);
            if (x == 0) {
                ref_bits = dpm_rand_bits_used(&r);
                ref_calls = r.rng_calls;
                memcpy(ref_state, t.s, sizeof(ref_state));
            }
            assert_int_equal(dpm_rand_bits_used(&r), ref_bits);
            assert_int_equal(r.rng_calls, ref_calls);
            assert_memory_equal(t.s, ref_state, sizeof(ref_state));
        }
    }
    /* RR: bits 0 and 1 alike */
    dpm_grr_t g;
    assert_int_equal(dpm_rr_init(&g, Q16(1)), DPM_OK);
    uint64_t bits[2];
    for (int b = 0; b < 2; b++) {
        test_rng_t t;
        test_rng_seed(&t, 77);
        dpm_rng_t port = test_rng_port(&t);
        dpm_rand_t r;
        assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
        for (int n = 0; n < 100; n++) {
            int out = -1;
            assert_int_equal(dpm_rr_perturb(&g, &r, b, &out), DPM_OK);
            assert_true(out == 0 || out == 1);
        }
        bits[b] = dpm_rand_bits_used(&r);
    }
    assert_true(bits[0] == bits[1] && bits[0] == 3200u);
}

/* RR is GRR with k = 2 on the same U. */
static void test_rr_matches_grr(void **state)
{
    (void)state;
    dpm_grr_t rr, grr;
    assert_int_equal(dpm_rr_init(&rr, Q16(1)), DPM_OK);
    assert_int_equal(dpm_grr_init(&grr, 2, Q16(1)), DPM_OK);
    assert_memory_equal(&rr, &grr, sizeof(rr));
    uint32_t us[] = {0, rr.keep - 1u, rr.keep, 0xffffffffu};
    for (size_t i = 0; i < 4; i++) {
        for (int b = 0; b < 2; b++) {
            uint8_t bytes[DPM_RAND_BUF_BYTES] = {0};
            for (int j = 0; j < 4; j++) {
                bytes[j] = (uint8_t)(us[i] >> (8 * j));
            }
            script_rng_t s = {bytes, sizeof(bytes), 0, 0};
            dpm_rng_t port = script_rng_port(&s);
            dpm_rand_t r;
            assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
            int out = -1;
            assert_int_equal(dpm_rr_perturb(&rr, &r, b, &out), DPM_OK);
            assert_int_equal((uint32_t)out, report_at(&grr, (uint32_t)b, us[i]));
        }
    }
}

/* ---- errors ------------------------------------------------------------------------------ */

static void test_grr_init_errors(void **state)
{
    (void)state;
    dpm_grr_t sentinel;
    memset(&sentinel, 0x5a, sizeof(sentinel));
    dpm_grr_t g = sentinel;
    assert_int_equal(dpm_grr_init(NULL, 2, Q16(1)), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_init(&g, 2, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_init(&g, 2, DPM_EPS_MAX_Q16 + 1u), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_init(&g, 0, Q16(1)), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_init(&g, 1, Q16(1)), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_init(&g, DPM_MAX_GRR_K + 1u, Q16(1)), DPM_ERR_PARAM);
    /* ε = 22.2: e^ε + 1 > 2^32, other would be 1 */
    assert_int_equal(dpm_grr_init(&g, 2, Q16(22) + 13107u), DPM_ERR_RANGE);
    assert_int_equal(dpm_grr_init(&g, 2, DPM_EPS_MAX_Q16), DPM_ERR_RANGE);
    assert_int_equal(dpm_rr_init(&g, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_rr_init(NULL, Q16(1)), DPM_ERR_PARAM);
    assert_memory_equal(&g, &sentinel, sizeof(g));
    /* the largest ε that still works for k = 2: other = 2 */
    assert_int_equal(dpm_grr_init(&g, 2, Q16(22)), DPM_OK);
    assert_int_equal(g.other, 2);
    assert_int_equal(dpm_grr_init(&g, DPM_MAX_GRR_K, 1), DPM_OK); /* smallest ε, largest k */
    assert_true(g.keep > g.other);
}

static void test_grr_perturb_errors(void **state)
{
    (void)state;
    dpm_grr_t g;
    assert_int_equal(dpm_grr_init(&g, 4, Q16(1)), DPM_OK);
    test_rng_t t;
    test_rng_seed(&t, 3);
    dpm_rng_t port = test_rng_port(&t);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    uint32_t y = 0xabcdu;
    assert_int_equal(dpm_grr_perturb(&g, &r, 4, &y), DPM_ERR_PARAM); /* x >= k */
    assert_int_equal(dpm_grr_perturb(&g, &r, 0xffffffffu, &y), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_perturb(NULL, &r, 0, &y), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_perturb(&g, NULL, 0, &y), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_perturb(&g, &r, 0, NULL), DPM_ERR_PARAM);
    assert_int_equal(y, 0xabcdu);
    assert_int_equal(dpm_rand_bits_used(&r), 0); /* nothing drawn on a parameter error */

    int out = 42;
    dpm_grr_t rr;
    assert_int_equal(dpm_rr_init(&rr, Q16(1)), DPM_OK);
    assert_int_equal(dpm_rr_perturb(&rr, &r, 2, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_rr_perturb(&rr, &r, -1, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_rr_perturb(&g, &r, 1, &out), DPM_ERR_PARAM); /* k = 4 is not RR */
    assert_int_equal(dpm_rr_perturb(&rr, &r, 1, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_rr_perturb(NULL, &r, 1, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_rr_perturb(&rr, NULL, 1, &out), DPM_ERR_PARAM);
    assert_int_equal(out, 42);

    /* a failing port: DPM_ERR_RNG, outputs untouched, and it sticks */
    failing_rng_t f;
    dpm_rng_t fport;
    dpm_rand_t fr;
    assert_int_equal(failing_rand_init(&fr, &f, &fport, 1, 0), DPM_OK);
    assert_int_equal(dpm_grr_perturb(&g, &fr, 1, &y), DPM_ERR_RNG);
    assert_int_equal(dpm_rr_perturb(&rr, &fr, 1, &out), DPM_ERR_RNG);
    assert_int_equal(y, 0xabcdu);
    assert_int_equal(out, 42);

    /* a port that fails later, in the middle of a stream: the reports before it are fine,
     * the refill fails, and every report after it fails too (the reservoir is not read on) */
    memset(&f, 0, sizeof(f));
    test_rng_seed(&f.inner, 2);
    f.fail_at_call = 1;
    assert_int_equal(dpm_rand_init(&fr, &fport), DPM_OK);
    for (int i = 0; i < DPM_RAND_BUF_BYTES / 4; i++) {
        assert_int_equal(dpm_grr_perturb(&g, &fr, 1, &y), DPM_OK);
    }
    y = 0xabcdu;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(dpm_grr_perturb(&g, &fr, 1, &y), DPM_ERR_RNG);
        assert_int_equal(dpm_rr_perturb(&rr, &fr, 0, &out), DPM_ERR_RNG);
    }
    assert_int_equal(y, 0xabcdu);
    assert_int_equal(fr.rng_calls, 2);

    /* a never bound (zeroed) source is a parameter error, not a crash */
    dpm_rand_t unbound;
    memset(&unbound, 0, sizeof(unbound));
    assert_int_equal(dpm_grr_perturb(&g, &unbound, 1, &y), DPM_ERR_PARAM);
    assert_int_equal(dpm_rr_perturb(&rr, &unbound, 1, &out), DPM_ERR_PARAM);
    assert_int_equal(y, 0xabcdu);
    assert_int_equal(out, 42);
}

static void test_grr_epsilon_function(void **state)
{
    (void)state;
    dpm_eps_t e = 0x1234u;
    assert_int_equal(dpm_grr_epsilon(2, 1, 0, &e), DPM_ERR_PARAM);           /* other == 0 */
    assert_int_equal(dpm_grr_epsilon(1, 0xffffffffu, 1, &e), DPM_ERR_PARAM); /* k < 2 */
    assert_int_equal(dpm_grr_epsilon(2, 100, 100, &e), DPM_ERR_PARAM);       /* sum != 2^32 */
    assert_int_equal(dpm_grr_epsilon(3, 0x80000000u, 0x40000000u, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_grr_epsilon(3, 0, 0x80000000u, &e), DPM_ERR_RANGE); /* keep == 0 */
    assert_int_equal(e, 0x1234u);
    /* keep == other: the report ignores the input */
    assert_int_equal(dpm_grr_epsilon(2, 0x80000000u, 0x80000000u, &e), DPM_OK);
    assert_int_equal(e, 0);
    /* ratio 2 either way: ln 2 = 45426.09 ulps, rounded up */
    assert_int_equal(dpm_grr_epsilon(3, 0x80000000u, 0x40000000u, &e), DPM_OK);
    assert_true(e == 45427 || e == 45428);
    dpm_eps_t e2 = 0;
    assert_int_equal(dpm_grr_epsilon(5, 0x20000000u, 0x38000000u, &e2), DPM_OK); /* 1 : 1.75 */
    /* 65536 ln 1.75 = 36674.98 (Python decimal) */
    assert_true(e2 == 36675 || e2 == 36676);
    /* the spec's T for ε = 1 gives back exactly 1.0 (65535.99995 rounded up) */
    assert_int_equal(dpm_grr_epsilon(2, 3139872686u, 1155094610u, &e), DPM_OK);
    assert_int_equal(e, 65536);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rr_thresholds_kat),
        cmocka_unit_test(test_grr_grid),
        cmocka_unit_test(test_grr_init_ratio),
        cmocka_unit_test(test_grr_exact_pmf),
        cmocka_unit_test(test_grr_matches_reference),
        cmocka_unit_test(test_grr_same_randomness_for_every_input),
        cmocka_unit_test(test_rr_matches_grr),
        cmocka_unit_test(test_grr_init_errors),
        cmocka_unit_test(test_grr_perturb_errors),
        cmocka_unit_test(test_grr_epsilon_function),
    };
    return cmocka_run_group_tests_name("grr", tests, NULL, NULL);
}
