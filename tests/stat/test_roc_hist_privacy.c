/* SPDX-License-Identifier: Apache-2.0 */
/* Empirical label-DP of roc_hist. Two neighbouring histograms differ in one example's label:
 * h has (pos[0], neg[0]) = (c + 1, d), h' has (c, d + 1); the other bin is equal. Only the
 * pair (out.pos[0], out.neg[0]) depends on which of them was released (every other cell is
 * independent of it and identically distributed), so the privacy loss of the whole output is
 * the loss of that pair: for every output cell (y_pos, y_neg) of the pair,
 *     Pr[y | h] / Pr[y | h'] = exp(ε/2 (|y_pos - c| - |y_pos - c - 1|)) *
 *                              exp(ε/2 (|y_neg - d - 1| - |y_neg - d|))  <= e^ε,
 * with equality in the two "corners" (y_pos > c, y_neg <= d) and, the other way round,
 * (y_pos <= c, y_neg > d). N_RELEASES full releases of each neighbour through
 * dpm_roc_hist_perturb estimate both pair distributions on every cell where both expect at
 * least MIN_COUNT releases. With Clopper-Pearson bounds at a total alpha of 1e-6 per check
 * (Bonferroni over every bound used), no cell's ratio lower bound may exceed e^ε, and in the
 * corners the ratio upper bound must reach e^ε (the noise is not wider than ε needs). The
 * negative control releases with half the noise (a mechanism built for 2ε) and must be caught
 * by the same check at ε. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/roc_hist.h"
#include "dpm/expert/noise.h"
#include "stat_dlap.h"
#include "stat_gof.h"
#include "test_rng.h"

#define N_RELEASES stat_samples(3000000u, 1000000u) /* min: >= 50 cells expecting >= MIN_COUNT */
#define TOTAL_ALPHA 1e-6
#define MIN_COUNT 1000.0L
#define ONE (UINT32_C(1) << 31)
/* bin 0's counts under h: pos = C + 1, neg = D; under h': pos = C, neg = D + 1 */
#define C 5
#define D 3
#define BOX 72 /* outputs counted in [BOX_LO, BOX_LO + BOX)^2 */
#define BOX_LO (-30)

typedef struct {
    uint64_t n[BOX][BOX]; /* n[y_pos - BOX_LO][y_neg - BOX_LO] */
} pair_hist_t;

static void make_hists(const dpm_roc_hist_t *m, dpm_score_hist_t *h, dpm_score_hist_t *h2)
{
    assert_int_equal(dpm_score_hist_init(h, &m->bins), DPM_OK);
    /* bin 1 (scores >= 1/2): 2 positive, 7 negative, the same in both */
    for (int i = 0; i < 2; i++) {
        assert_int_equal(dpm_score_hist_add(h, &m->bins, ONE / 2 + 100u, 1), DPM_OK);
    }
    for (int i = 0; i < 7; i++) {
        assert_int_equal(dpm_score_hist_add(h, &m->bins, ONE, 0), DPM_OK);
    }
    for (int i = 0; i < D; i++) {
        assert_int_equal(dpm_score_hist_add(h, &m->bins, ONE / 8, 0), DPM_OK);
    }
    for (int i = 0; i < C; i++) {
        assert_int_equal(dpm_score_hist_add(h, &m->bins, ONE / 4, 1), DPM_OK);
    }
    *h2 = *h;
    /* the example whose label differs: positive in h, negative in h' */
    assert_int_equal(dpm_score_hist_add(h, &m->bins, ONE / 3, 1), DPM_OK);
    assert_int_equal(dpm_score_hist_add(h2, &m->bins, ONE / 3, 0), DPM_OK);
    assert_true(h->pos[0] == C + 1 && h->neg[0] == D);
    assert_true(h2->pos[0] == C && h2->neg[0] == D + 1);
}

static void release(const dpm_roc_hist_t *m, const dpm_score_hist_t *h, uint64_t seed,
                    pair_hist_t *out)
{
    test_rng_t rng;
    test_rng_seed(&rng, seed);
    dpm_rng_t port = test_rng_port(&rng);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    memset(out, 0, sizeof(*out));
    for (uint32_t i = 0; i < N_RELEASES; i++) {
        dpm_roc_hist_report_t rep;
        assert_int_equal(dpm_roc_hist_perturb(m, &r, h, &rep), DPM_OK);
        int64_t a = (int64_t)rep.pos[0] - BOX_LO;
        int64_t b = (int64_t)rep.neg[0] - BOX_LO;
        if (a >= 0 && a < BOX && b >= 0 && b < BOX) {
            out->n[a][b]++;
        }
    }
}

typedef struct {
    int cells;        /* cells checked */
    int violations;   /* cells whose ratio lower bound exceeds e^eps */
    int corners;      /* cells where the true ratio is exactly e^eps one way */
    int too_wide;     /* corner cells whose ratio upper bound stays below e^eps */
    double max_lower; /* largest lower confidence bound of a ratio */
    double max_point; /* largest ratio of the counts */
} privacy_check_t;

/* t: the noise scale the released mechanism claims (2 / ε); both expectations use it. */
static privacy_check_t check_pair(const pair_hist_t *c1, const pair_hist_t *c2, long double t,
                                  double e_eps)
{
    privacy_check_t pc;
    memset(&pc, 0, sizeof(pc));
    int use[BOX][BOX];
    for (int a = 0; a < BOX; a++) {
        for (int b = 0; b < BOX; b++) {
            int64_t yp = a + BOX_LO, yn = b + BOX_LO;
            long double e1 = N_RELEASES * stat_dlap_pmf(t, yp - (C + 1)) * stat_dlap_pmf(t, yn - D);
            long double e2 = N_RELEASES * stat_dlap_pmf(t, yp - C) * stat_dlap_pmf(t, yn - (D + 1));
            use[a][b] = e1 >= MIN_COUNT && e2 >= MIN_COUNT;
            pc.cells += use[a][b];
            /* the box must hold the whole window */
            if (use[a][b]) {
                assert_true(a > 0 && b > 0 && a < BOX - 1 && b < BOX - 1);
            }
        }
    }
    assert_true(pc.cells >= 50);
    double alpha = TOTAL_ALPHA / (4.0 * pc.cells); /* 4 bounds per cell */
    for (int a = 0; a < BOX; a++) {
        for (int b = 0; b < BOX; b++) {
            if (!use[a][b]) {
                continue;
            }
            int64_t yp = a + BOX_LO, yn = b + BOX_LO;
            uint64_t k1 = c1->n[a][b], k2 = c2->n[a][b];
            double l1 = stat_binom_lower(k1, N_RELEASES, alpha);
            double u1 = stat_binom_upper(k1, N_RELEASES, alpha);
            double l2 = stat_binom_lower(k2, N_RELEASES, alpha);
            double u2 = stat_binom_upper(k2, N_RELEASES, alpha);
            double lower = fmax(l1 / u2, l2 / u1);
            double point = fmax((double)k1 / (double)k2, (double)k2 / (double)k1);
            pc.max_lower = fmax(pc.max_lower, lower);
            pc.max_point = fmax(pc.max_point, point);
            pc.violations += lower > e_eps;
            int corner_h = yp > C && yn <= D;  /* Pr[y | h] / Pr[y | h'] = e^eps */
            int corner_h2 = yp <= C && yn > D; /* the other way round */
            pc.corners += corner_h + corner_h2;
            if ((corner_h && u1 / l2 < e_eps) || (corner_h2 && u2 / l1 < e_eps)) {
                pc.too_wide++;
            }
        }
    }
    return pc;
}

/* Releases of h and h' by a mechanism built for eps_built, checked against eps_claimed. */
static privacy_check_t run_check(dpm_eps_t eps_built, dpm_eps_t eps_claimed, uint64_t seed)
{
    const uint32_t edges[1] = {ONE / 2};
    dpm_roc_hist_t m;
    assert_int_equal(dpm_roc_hist_init(&m, edges, 1, eps_built), DPM_OK);
    dpm_score_hist_t h, h2;
    make_hists(&m, &h, &h2);
    pair_hist_t *c1 = calloc(1, sizeof(*c1));
    pair_hist_t *c2 = calloc(1, sizeof(*c2));
    assert_non_null(c1);
    assert_non_null(c2);
    release(&m, &h, seed, c1);
    release(&m, &h2, seed + 1000, c2);
    double eps = (double)eps_claimed / 65536.0;
    long double t = 2.0L / (long double)eps; /* the scale the claimed ε needs */
    privacy_check_t pc = check_pair(c1, c2, t, exp(eps));
    print_message("# built for eps %u/65536, checked at eps %u/65536: %d cells (%d corners), "
                  "e^eps = %.5f, max ratio %.5f, max lower bound %.5f, violations %d, "
                  "too wide %d\n",
                  (unsigned)eps_built, (unsigned)eps_claimed, pc.cells, pc.corners, exp(eps),
                  pc.max_point, pc.max_lower, pc.violations, pc.too_wide);
    free(c1);
    free(c2);
    return pc;
}

static void test_label_flip_eps1(void **state)
{
    (void)state;
    privacy_check_t pc = run_check(DPM_EPS_ONE, DPM_EPS_ONE, 41);
    assert_true(pc.corners > 0);
    assert_int_equal(pc.violations, 0);
    assert_int_equal(pc.too_wide, 0);
}

static void test_label_flip_eps_half(void **state)
{
    (void)state;
    privacy_check_t pc = run_check(DPM_EPS_ONE / 2, DPM_EPS_ONE / 2, 42);
    assert_true(pc.corners > 0);
    assert_int_equal(pc.violations, 0);
    assert_int_equal(pc.too_wide, 0);
}

/* Negative control: half the noise (scale 1/ε, as if the sensitivity were 1) really gives 2ε
 * for a label flip; the check at ε must see it. */
static void test_check_catches_half_noise(void **state)
{
    (void)state;
    privacy_check_t pc = run_check(2 * DPM_EPS_ONE, DPM_EPS_ONE, 43);
    assert_true(pc.violations > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_label_flip_eps1),
        cmocka_unit_test(test_label_flip_eps_half),
        cmocka_unit_test(test_check_catches_half_noise),
    };
    return cmocka_run_group_tests_name("roc_hist_privacy", tests, NULL, NULL);
}
