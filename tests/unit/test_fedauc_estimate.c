/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC on the server (host-sim/estimate/fedauc.h): doubled mid-ranks by hand and against a
 * brute-force count, the tie-aware AUC by hand and against all P N pairs, the AUC from summed
 * statistics, Menon's de-biasing equal to the unbiased-sums form, the closed-form standard
 * deviations against the values of sdk/docs/fedauc.md §Closed-form check (the corrected RR
 * formula and the paper's Eq. 7), the variance accumulators against a hand computation,
 * refusals (dropouts, a disagreeing M), and the ε = ∞ sanity check: every partition and
 * variant, through the real device code with exact statistics, gives the exact AUC to 1e-12. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/prob.h"
#include "dpm/dpm.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "estimate/fedauc.h"
#include "estimate/roc.h"
#include "fedauc_fixture.h"
#include "test_rng.h"

static void test_rank2_by_hand(void **state)
{
    (void)state;
    const uint32_t scores[6] = {5, 1, 5, 3, 5, 9};
    uint32_t r2[6];
    dpm_fa_ranking_t mom;
    assert_int_equal(dpm_fa_rank2(scores, 6, r2, &mom), DPM_OK);
    /* sorted 1 3 5 5 5 9: 1 -> 0, 3 -> 2, the 5s share positions 2..4 -> 2 + 4, 9 -> 10 */
    const uint32_t want[6] = {6, 0, 6, 2, 6, 10};
    assert_memory_equal(r2, want, sizeof(want));
    assert_int_equal(mom.m, 6);
    assert_true(mom.sum_r == 15.0L);  /* 6 * 5 / 2: mid-ranks keep the sum */
    assert_true(mom.sum_r2 == 53.0L); /* 9 + 0 + 9 + 1 + 9 + 25 (55 without the tie) */
    assert_int_equal(mom.tie_groups, 4);
    assert_int_equal(dpm_fa_rank2(scores, 0, r2, &mom), DPM_ERR_PARAM);
    assert_int_equal(dpm_fa_rank2(NULL, 6, r2, &mom), DPM_ERR_PARAM);
}

/* R_i = 2 #{j: s_j < s_i} + #{j: s_j = s_i} - 1, counted pair by pair; scores with many ties
 * and with all 32 bits used (both radix digits). */
static void test_rank2_against_brute_force(void **state)
{
    (void)state;
    test_rng_t t;
    test_rng_seed(&t, 8);
    enum { M = 1500 };
    static uint32_t s[M], r2[M];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < M; i++) {
            uint64_t x = test_rng_next(&t);
            s[i] = round == 0 ? (uint32_t)(x % 50) : round == 1 ? (uint32_t)x : (uint32_t)(x >> 40);
        }
        assert_int_equal(dpm_fa_rank2(s, M, r2, NULL), DPM_OK);
        int wrong = 0;
        for (int i = 0; i < M; i++) {
            uint32_t less = 0, eq = 0;
            for (int j = 0; j < M; j++) {
                less += s[j] < s[i];
                eq += s[j] == s[i];
            }
            wrong += r2[i] != 2u * less + eq - 1u;
        }
        assert_int_equal(wrong, 0);
    }
}

static double auc_pairs(const uint32_t *s, const uint8_t *y, int m)
{
    double num = 0, p = 0, n = 0;
    for (int i = 0; i < m; i++) {
        p += y[i];
        n += !y[i];
        for (int j = 0; j < m; j++) {
            if (y[i] && !y[j]) {
                num += s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0;
            }
        }
    }
    return num / (p * n);
}

static void test_auc_by_hand(void **state)
{
    (void)state;
    /* positives 3, 5; negatives 1, 5, 9: pairs 1 + 0 + 0 + 1 + 1/2 + 0 = 2.5 of 6 */
    const uint32_t s[5] = {3, 5, 1, 5, 9};
    const uint8_t y[5] = {1, 1, 0, 0, 0};
    assert_true(fabs(dpm_fa_auc_exact(s, y, 5) - 2.5 / 6.0) < 1e-15);
    /* rank form: r = 1, 2.5 for the positives: (3.5 - 2 * 1 / 2) / (2 * 3) */
    assert_true(fabs(dpm_fa_auc_from_sums(3.5, 2, 5) - 2.5 / 6.0) < 1e-15);
    const uint8_t one_class[5] = {1, 1, 1, 1, 1};
    assert_true(isnan(dpm_fa_auc_exact(s, one_class, 5)));
    /* against all pairs, many ties */
    test_rng_t t;
    test_rng_seed(&t, 12);
    enum { M = 2000 };
    static uint32_t sc[M];
    static uint8_t lab[M];
    for (int i = 0; i < M; i++) {
        lab[i] = (test_rng_next(&t) % 4) == 0;
        sc[i] = (uint32_t)(test_rng_next(&t) % 200) + (lab[i] ? 40u : 0u);
    }
    double a = dpm_fa_auc_exact(sc, lab, M), b = auc_pairs(sc, lab, M);
    print_message("# 2,000 examples in 240 score values: AUC %.15f (pairs %.15f)\n", a, b);
    assert_true(fabs(a - b) < 1e-14);
}

/* Menon et al.'s de-biasing and the unbiased sums are the same estimator (to rounding). */
static void test_menon_equals_unbiased_sums(void **state)
{
    (void)state;
    test_rng_t t;
    test_rng_seed(&t, 13);
    double worst = 0;
    for (int i = 0; i < 10000; i++) {
        double m = (double)(test_rng_next(&t) % 1000000 + 100);
        double p = floor(m * (0.05 + 0.9 * (double)(test_rng_next(&t) % 1000) / 1000.0));
        double rho = 0.45 * (double)(test_rng_next(&t) % 1000 + 1) / 1001.0;
        double auc_n = 0.3 + 0.6 * (double)(test_rng_next(&t) % 1000) / 1000.0;
        double s = auc_n * p * (m - p) + p * (p - 1) / 2;
        double a = dpm_fa_menon_debias(auc_n, p, m - p, rho);
        double b = dpm_fa_rr_debias(s, p, m, m * (m - 1) / 2, rho);
        double rel = fabs(a - b) / fmax(1.0, fabs(b));
        worst = fmax(worst, rel);
    }
    print_message("# Menon vs unbiased sums: largest relative difference %.3g over 10,000 cases\n",
                  worst);
    assert_true(worst < 1e-9);
    /* negative control: Alg. 3 as printed (π instead of π' in α) differs */
    double m = 10000, p = 3000, rho = 0.3, auc_n = 0.6;
    double pc = (p * (1 - rho) - (m - p) * rho) / (1 - 2 * rho), pi_hat = pc / m, pi = p / m;
    double alpha_typo = (1 - pi_hat) * rho / (pi * (1 - rho) + (1 - pi_hat) * rho);
    double beta = pi_hat * rho / (pi_hat * rho + (1 - pi_hat) * (1 - rho));
    double typo = (auc_n - (alpha_typo + beta) / 2) / (1 - alpha_typo - beta);
    assert_true(fabs(typo - dpm_fa_menon_debias(auc_n, p, m - p, rho)) > 1e-3);
    /* ρ = 0: nothing to undo */
    assert_true(fabs(dpm_fa_menon_debias(0.7, 30, 70, 0) - 0.7) < 1e-15);
}

/* The closed forms against sdk/docs/fedauc.md §Closed-form check (small Criteo set, Epoch 1 AUC
 * 0.749383): the corrected RR standard deviation and the paper's Eq. 7, 3 printed digits each. */
static void test_sd_closed_forms_match_the_spec(void **state)
{
    (void)state;
    const double m = 458407, p = 117317, auc = 0.749383;
    const struct {
        double eps, analytic, eq7;
    } rows[] = {
        {0.1, 2.43e-2, 2.24e-3}, {0.25, 9.69e-3, 2.22e-3}, {0.5, 4.81e-3, 2.17e-3},
        {1, 2.33e-3, 1.99e-3},   {2, 1.03e-3, 1.45e-3},    {4, 3.35e-4, 5.95e-4},
        {5, 2.01e-4, 3.65e-4},   {8, 4.45e-5, 8.2e-5},     {10, 1.64e-5, 3.02e-5},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        double rho = 1.0 / (1.0 + exp(rows[i].eps));
        double a = dpm_fa_sd_rr(m, p, auc, rho), b = dpm_fa_sd_rr_paper_eq7(m, p, m - p, rows[i].eps);
        print_message("# eps %5.2f: sd %.3g (spec %.3g), paper Eq. 7 %.3g (spec %.3g)\n",
                      rows[i].eps, a, rows[i].analytic, b, rows[i].eq7);
        assert_true(fabs(a / rows[i].analytic - 1) < 0.006);
        assert_true(fabs(b / rows[i].eq7 - 1) < 0.006);
    }
}

/* The aggregate's variance terms equal the formula worked by hand for two reports. */
static void test_variance_accumulators(void **state)
{
    (void)state;
    dpm_fa_params_t p;
    memset(&p, 0, sizeof(p));
    p.mechanism = DPM_MECH_ID_FEDAUC_LAP;
    p.variant = DPM_FEDAUC_LOCAL;
    p.eps = DPM_EPS_ONE;
    dpm_fa_agg_t a;
    dpm_fa_agg_init(&a);
    dpm_fedauc_report_t b;
    memset(&b, 0, sizeof(b));
    b.n = 3, b.total = 10, b.local_p = 2, b.local_sum2 = 20, b.sum_rank2 = 30;
    b.sensitivity = 16, b.eps_p = DPM_EPS_ONE / 4;
    assert_int_equal(dpm_fa_agg_add(&a, &p, &b), DPM_OK);
    b.n = 7, b.local_p = 1, b.local_sum2 = 18, b.sum_rank2 = 60, b.sensitivity = 18;
    assert_int_equal(dpm_fa_agg_add(&a, &p, &b), DPM_OK);
    double vp = prob_dlap_var(4.0);                                  /* 1 / (ε / 4) */
    double vs1 = prob_dlap_var(16.0 / 0.75), vs2 = prob_dlap_var(18.0 / 0.75);
    assert_true(fabs((double)a.a3 - 2 * vp) < 1e-9);
    assert_true(fabs((double)a.a0 - (vs1 + vs2) / 4) < 1e-9);
    assert_true(a.a2 == 0);
    dpm_fa_estimate_t e;
    assert_int_equal(dpm_fa_estimate(&p, &a, NULL, 0.95, &e), DPM_OK);
    /* S = 19 (rank units), P = 3, M = 10: AUC = (19 - 3) / 21; c = 3 - 0.5 + AUC (7 - 3) */
    double auc = 16.0 / 21.0, c = 2.5 + auc * 4;
    assert_true(fabs(e.auc_raw - auc) < 1e-15);
    assert_true(fabs(e.c - c) < 1e-12);
    assert_true(fabs(e.sd - sqrt((vs1 + vs2) / 4 + c * c * 2 * vp) / 21.0) < 1e-12);
    assert_true(fabs(e.ci_hi - e.auc_raw - 1.959963984540054 * e.sd) < 1e-9);
    /* ORTHOGONAL: localSum2' = (t + S p) / n, and the localP noise enters with (r̄ - c) */
    p.variant = DPM_FEDAUC_ORTHOGONAL;
    dpm_fa_agg_init(&a);
    memset(&b, 0, sizeof(b));
    b.n = 4, b.total = 9, b.local_p = 3, b.t = 3, b.sum_rank2 = 27, b.sensitivity = 25;
    b.eps_p = DPM_EPS_ONE / 2;
    assert_int_equal(dpm_fa_agg_add(&a, &p, &b), DPM_OK);
    assert_true(fabs((double)a.sum2_frac - 21.0) < 1e-15); /* (3 + 27 * 3) / 4 */
    double rbar = 27.0 / 8.0, vt = prob_dlap_var(25.0 / 0.5), vp2 = prob_dlap_var(2.0);
    assert_true(fabs((double)a.a0 - (vt / 64.0 + rbar * rbar * vp2)) < 1e-9);
    assert_true(fabs((double)a.a2 - rbar * vp2) < 1e-12);
    /* refusals: another M, n = 0, an eps_p beyond ε; dropouts; no reports */
    b.total = 10;
    assert_int_equal(dpm_fa_agg_add(&a, &p, &b), DPM_ERR_PARAM);
    b.total = 9, b.n = 0;
    assert_int_equal(dpm_fa_agg_add(&a, &p, &b), DPM_ERR_PARAM);
    b.n = 4, b.eps_p = DPM_EPS_ONE + 1;
    assert_int_equal(dpm_fa_agg_add(&a, &p, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_fa_estimate(&p, &a, NULL, 0.95, &e), DPM_ERR_UNDEFINED); /* 4 of 9 */
    dpm_fa_agg_init(&a);
    assert_int_equal(dpm_fa_estimate(&p, &a, NULL, 0.95, &e), DPM_ERR_UNDEFINED);
    assert_int_equal(dpm_fa_estimate(&p, &a, NULL, 1.0, &e), DPM_ERR_PARAM);
}

/* ε = ∞: exact statistics from the real device code (round 1, ranking, reply, validation,
 * dpm_fedauc_stats) give the exact AUC, for every partition and representation (the sum, or
 * T and S for ORTHOGONAL/ADAPTIVE), to 1e-12; quantized scores give ties. */
static void test_eps_infinity_is_exact(void **state)
{
    (void)state;
    const struct {
        uint32_t k, m;
        fa_partition_t part;
        const char *name;
    } parts[] = {
        {20, 4000, FA_IID, "IID, 20 devices"},
        {20, 4000, FA_NONIID, "non-IID (score order), 20 devices"},
        {3000, 3000, FA_IID, "one example per device"},
        {1, 2500, FA_IID, "one device"},
    };
    const struct {
        dpm_mech_id_t mech;
        dpm_fedauc_variant_t v;
        uint32_t share;
    } kinds[] = {
        {DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0},
        {DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_GLOBAL, 32768},
        {DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_ADAPTIVE, 0},
    };
    double worst = 0;
    for (size_t pi = 0; pi < sizeof(parts) / sizeof(parts[0]); pi++) {
        for (size_t ki = 0; ki < sizeof(kinds) / sizeof(kinds[0]); ki++) {
            dpm_campaign_t c;
            memset(&c, 0, sizeof(c));
            c.id = 5;
            c.mechanism = kinds[ki].mech;
            c.eps = c.budget = DPM_EPS(1);
            c.fedauc_variant = (uint32_t)kinds[ki].v;
            c.fedauc_p_share_q16 = kinds[ki].share;
            c.fedauc_score_bits = 10; /* 1,025 score values: many ties */
            dpm_mech_t m;
            assert_int_equal(dpm_mech_init(&m, &c, NULL), DPM_OK);
            static fa_fix_t f;
            assert_int_equal(fa_fix_alloc(&f, parts[pi].k, parts[pi].m), 0);
            fa_fix_binormal(&f, 0.75, 0.26, parts[pi].part, 100 + pi);
            test_rng_t t;
            dpm_rng_t rng;
            dpm_rand_t r;
            assert_int_equal(test_rand_init(&r, &t, &rng, 200 + ki), DPM_OK);
            assert_int_equal(fa_fix_rounds(&f, &m, &r), DPM_OK);
            dpm_fa_params_t p;
            assert_int_equal(dpm_fa_params_exact(&p, (uint32_t)kinds[ki].mech,
                                                 (uint32_t)kinds[ki].v),
                             DPM_OK);
            dpm_fa_agg_t a;
            dpm_fa_agg_init(&a);
            for (uint32_t d = 0; d < f.k; d++) {
                dpm_fedauc_stats_t st;
                assert_int_equal(dpm_fedauc_stats(&f.sess[d], &f.rk[d],
                                                  f.labels + f.start[d], &st),
                                 DPM_OK);
                assert_int_equal(dpm_fa_agg_add_exact(&a, &p, &st, &f.rk[d]), DPM_OK);
            }
            dpm_fa_estimate_t e;
            assert_int_equal(dpm_fa_estimate(&p, &a, &f.mom, 0.95, &e), DPM_OK);
            double truth = fa_fix_truth(&f, &m);
            double err = fabs(e.auc_raw - truth);
            worst = fmax(worst, err);
            assert_true(e.valid);
            assert_true(e.sd == 0.0);
            assert_true(err < 1e-12);
            /* negative control: the same sums with one positive too many (P + 1, S + 1/2) */
            dpm_fedauc_stats_t one = {1, 1, 1, 0};
            dpm_fedauc_ranks_t rk1 = f.rk[0];
            rk1.n = 1, rk1.sum_rank2 = 1;
            dpm_fa_agg_t off = a;
            off.examples--; /* the extra "report" stands in for nothing */
            assert_int_equal(dpm_fa_agg_add_exact(&off, &p, &one, &rk1), DPM_OK);
            dpm_fa_estimate_t e2;
            assert_int_equal(dpm_fa_estimate(&p, &off, &f.mom, 0.95, &e2), DPM_OK);
            assert_true(fabs(e2.auc_raw - truth) > 1e-9);
            if (ki == 0) {
                print_message("# eps = inf, %-36s M %u, %llu tie groups: AUC %.15f, |error| "
                              "%.1e\n",
                              parts[pi].name, f.m, (unsigned long long)f.mom.tie_groups, truth,
                              err);
            }
            fa_fix_free(&f);
        }
    }
    print_message("# eps = inf: largest error %.2e over 4 partitions x 3 representations\n",
                  worst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank2_by_hand),
        cmocka_unit_test(test_rank2_against_brute_force),
        cmocka_unit_test(test_auc_by_hand),
        cmocka_unit_test(test_menon_equals_unbiased_sums),
        cmocka_unit_test(test_sd_closed_forms_match_the_spec),
        cmocka_unit_test(test_variance_accumulators),
        cmocka_unit_test(test_eps_infinity_is_exact),
    };
    return cmocka_run_group_tests_name("fedauc_estimate", tests, NULL, NULL);
}
