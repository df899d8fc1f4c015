/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim's pairs for Kendall's tau (host-sim/sim/pop/kendall_sim.h):
 * - the O(n log n) tau_a equals the O(n^2) pairwise count, on data full of ties and on
 *   continuous scores (and a changed pair changes it: the comparison can fail);
 * - a device's pair is a function of the population seed and the device alone, and the
 *   population's realization (its k x k histogram and its pairs) does not depend on the threads;
 * - the model's tau: (2/pi) arcsin(rho) for one group, the mixture formula for two, each within
 *   5 sd (Hoeffding's bound 2/sqrt(n) on tau_a's sd) of the tau_a of 10^6 drawn pairs; the naive
 *   average of the groups' taus is rejected by the same check (negative control). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim_fixture.h"

#include "sim/pop/kendall_sim.h"
#include "common/stream.h"

static double brute_tau_a(const uint64_t *xy, size_t n)
{
    int64_t s = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = i + 1; j < n; j++) {
            uint32_t xi = (uint32_t)(xy[i] >> 32), xj = (uint32_t)(xy[j] >> 32);
            uint32_t yi = (uint32_t)xy[i], yj = (uint32_t)xy[j];
            int sx = (xi > xj) - (xi < xj), sy = (yi > yj) - (yi < yj);
            s += sx * sy;
        }
    }
    return (double)s / ((double)n * (double)(n - 1) / 2.0);
}

static void test_tau_a_equals_pairwise(void **state)
{
    (void)state;
    enum { N = 700 };
    static uint64_t xy[N], copy[N], scratch[N];
    sim_stream_t s;
    sim_stream_init(&s, 12345);
    /* value ranges 3 (almost every pair tied), 20, and 2^32 (no ties) */
    const uint64_t range[3] = {3, 20, UINT64_C(1) << 32};
    for (int r = 0; r < 3; r++) {
        for (size_t n = 0; n <= N; n += (n < 10 ? 1 : 173)) {
            for (size_t i = 0; i < n; i++) {
                uint64_t x = sim_stream_next(&s) % range[r];
                uint64_t y = (x + sim_stream_next(&s) % range[r]) % range[r]; /* correlated */
                xy[i] = x << 32 | y;
            }
            memcpy(copy, xy, n * sizeof(xy[0]));
            double fast = sim_pairs_tau_a(xy, n, scratch);
            if (n < 2) {
                assert_true(isnan(fast));
                continue;
            }
            double slow = brute_tau_a(copy, n);
            if (fabs(fast - slow) > 1e-12) {
                print_error("range %llu n %zu: %.15g != %.15g\n", (unsigned long long)range[r], n,
                            fast, slow);
                fail();
            }
            for (size_t i = 1; i < n; i++) {
                assert_true(xy[i - 1] <= xy[i]); /* sorted on return */
            }
        }
    }
    /* negative control: one pair's y moved to the other end changes tau_a */
    for (size_t i = 0; i < 50; i++) {
        xy[i] = (uint64_t)i << 32 | i;
    }
    memcpy(copy, xy, sizeof(xy[0]) * 50);
    copy[0] = 1000u; /* x = 0, y = 1000: discordant with every other pair */
    assert_true(sim_pairs_tau_a(xy, 50, scratch) == 1.0);
    double moved = sim_pairs_tau_a(copy, 50, scratch);
    assert_true(fabs(moved - (1.0 - 2.0 * 49.0 / 1225.0)) < 1e-12);
}

#define DEVICES 1000000u

static const char kOne[] = "[population]\nseed = 9\n"
                           "[group a]\nshare = 0.5\npairs = bivariate_normal(rho=0.6)\n"
                           "[group b]\nshare = 0.5\npairs = bivariate_normal(rho=0.6)\n"
                           "[campaign k]\nmechanism = ustat_bins\neps = 1\nkernel = kendall\n";

static const char kTwo[] = "[population]\nseed = 9\n"
                           "[group a]\nshare = 0.5\npairs = bivariate_normal(rho=0.9)\n"
                           "[group b]\nshare = 0.5\npairs = bivariate_normal(rho=0.1)\n"
                           "[campaign k]\nmechanism = ustat_bins\neps = 1\nkernel = kendall\n";

/* tau_a of every device's pair. */
static double sample_tau(const sim_pairs_model_t *m, const sim_pop_t *pop)
{
    uint64_t *xy = malloc(DEVICES * sizeof(uint64_t)),
             *scratch = malloc(DEVICES * sizeof(uint64_t));
    assert_non_null(xy);
    assert_non_null(scratch);
    size_t at = 0;
    for (size_t i = 0; i < pop->nblocks; i++) {
        for (uint64_t d = pop->first[i]; d < pop->first[i + 1]; d++) {
            uint32_t x, y;
            sim_pairs_device(m, &pop->block[i], d, &x, &y);
            assert_true(x < (UINT32_C(1) << 31) && y < (UINT32_C(1) << 31));
            xy[at++] = (uint64_t)x << 32 | y;
        }
    }
    assert_int_equal(at, DEVICES);
    double t = sim_pairs_tau_a(xy, at, scratch);
    free(xy);
    free(scratch);
    return t;
}

static void test_model_tau(void **state)
{
    (void)state;
    static sim_scenario_t sc;
    sim_pop_t pop;
    char err[256];
    const int all[SIM_MAX_GROUPS] = {1, 1};
    const double bound = 5.0 * 2.0 / sqrt((double)DEVICES); /* 5 sd, Hoeffding */

    assert_int_equal(
        sim_fixture_build(kOne, sizeof(kOne) - 1, DEVICES, &sc, &pop, err, sizeof(err)), 0);
    sim_pairs_model_t m;
    sim_pairs_model_init(&m, &sc, &pop);
    double want = 2.0 / M_PI * asin(0.6);
    assert_true(fabs(sim_pairs_model_tau(&m, &pop, all) - want) < 1e-15);
    double got = sample_tau(&m, &pop);
    printf("# rho 0.6: sample tau_a %.5f, (2/pi) arcsin(rho) %.5f, bound %.4f\n", got, want, bound);
    assert_true(fabs(got - want) < bound);
    /* the same population seed, the same pairs; another seed, other pairs */
    uint32_t x1, y1, x2, y2;
    sim_pairs_device(&m, &pop.block[0], 17, &x1, &y1);
    sim_pairs_model_t again;
    sim_pairs_model_init(&again, &sc, &pop);
    sim_pairs_device(&again, &pop.block[0], 17, &x2, &y2);
    assert_true(x1 == x2 && y1 == y2);
    sc.population_seed++;
    sim_pairs_model_init(&again, &sc, &pop);
    sim_pairs_device(&again, &pop.block[0], 17, &x2, &y2);
    assert_true(x1 != x2 || y1 != y2);
    sim_pop_free(&pop);

    /* the realization: 1 thread = 3 threads; only the included group */
    assert_int_equal(sim_fixture_build(kOne, sizeof(kOne) - 1, 100001, &sc, &pop, err, sizeof(err)),
                     0);
    sim_pairs_model_init(&m, &sc, &pop);
    static uint64_t h1[36], h3[36], xy1[100001], xy3[100001];
    uint64_t n1 = 0, n3 = 0, sum = 0;
    const int only_b[SIM_MAX_GROUPS] = {0, 1};
    sim_pairs_realize(&m, &pop, only_b, 6, 1, NULL, h1, xy1, &n1);
    sim_pairs_realize(&m, &pop, only_b, 6, 3, NULL, h3, xy3, &n3);
    for (int v = 0; v < 36; v++) {
        sum += h1[v];
    }
    assert_true(n1 == pop.group_size[1] && n3 == n1 && sum == n1 && n1 == 50000);
    assert_memory_equal(h1, h3, sizeof(h1));
    assert_memory_equal(xy1, xy3, n1 * sizeof(xy1[0]));
    const sim_block_t *b = sim_pop_find(&pop, pop.devices - 1, NULL);
    sim_pairs_device(&m, b, pop.devices - 1, &x1, &y1);
    assert_true(b->group == 1 && xy1[n1 - 1] == ((uint64_t)x1 << 32 | y1));
    sim_pop_free(&pop);

    assert_int_equal(
        sim_fixture_build(kTwo, sizeof(kTwo) - 1, DEVICES, &sc, &pop, err, sizeof(err)), 0);
    sim_pairs_model_init(&m, &sc, &pop);
    double mix = sim_pairs_model_tau(&m, &pop, all);
    double naive = 0.5 * (2.0 / M_PI) * (asin(0.9) + asin(0.1));
    const int only_a[SIM_MAX_GROUPS] = {1, 0};
    assert_true(fabs(sim_pairs_model_tau(&m, &pop, only_a) - 2.0 / M_PI * asin(0.9)) < 1e-15);
    got = sample_tau(&m, &pop);
    printf("# rho 0.9 / 0.1: sample tau_a %.5f, mixture formula %.5f, naive average %.5f\n", got,
           mix, naive);
    assert_true(fabs(got - mix) < bound);
    assert_true(fabs(got - naive) > bound); /* negative control */
    sim_pop_free(&pop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tau_a_equals_pairwise),
        cmocka_unit_test(test_model_tau),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
