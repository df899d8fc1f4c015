/* SPDX-License-Identifier: Apache-2.0 */
/* Server side of the tuple mechanisms (host-sim/estimate/disparity): the spec's reference
 * values, every cell of the paper's Table 1 and Table 2's α column (paper and correct splits),
 * exact unbiasedness and variance by enumerating every report of tiny campaigns, the GRR
 * group-size estimator, the delta-method variance by simulation, the planner round trip, an
 * end-to-end run through the SDK's own tuple mechanism, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/tuple.h"
#include "dpm/expert/noise.h"
#include "common/prob.h"
#include "estimate/disparity.h"
#include "sim/repro/repro_cells.h"
#include "test_rng.h"

#define TWO32 4294967296.0

/* |x - want| <= tol, with a readable failure. */
#define assert_near(x, want, tol)                                                                  \
    do {                                                                                           \
        double x_ = (x), w_ = (want);                                                              \
        if (!(fabs(x_ - w_) <= (tol))) {                                                           \
            fail_msg("%s = %.12g, want %.12g (tol %g)", #x, x_, w_, (double)(tol));                \
        }                                                                                          \
    } while (0)

/* x rounded to `dec` decimals equals the printed reference (NaN matches NaN: a "-" cell). */
static void assert_rounds_to(double x, double printed, int dec)
{
    if (isnan(printed)) {
        if (!isnan(x)) {
            fail_msg("want '-', got %.10g", x);
        }
        return;
    }
    double s = pow(10.0, dec);
    if (llround(x * s) != llround(printed * s)) {
        fail_msg("%.10g does not round to %.*f", x, dec, printed);
    }
}

static dpm_disp_params_t split_params(dpm_disp_mech_t mech, double e1, double e2, double k)
{
    dpm_disp_params_t p;
    assert_int_equal(dpm_disp_params_from_split(&p, mech, 2, e1, e2, k), DPM_OK);
    return p;
}

static double var_of(const dpm_disp_params_t *p, double K, double n, double nu2)
{
    double v = NAN;
    assert_int_equal(dpm_disp_mean_variance(p, K, n, nu2, &v), DPM_OK);
    return v;
}

/* ---- sdk/docs/tuple.md §Reference values ---------------------------------------------- */

static void test_reference_variance_mr(void **state)
{
    (void)state;
    dpm_disp_params_t p = split_params(DPM_DISP_MR, 1.0, 1.0, 0.0);
    assert_rounds_to(var_of(&p, 1e4, 5000, 0.0), 0.001752, 6);
    assert_rounds_to(var_of(&p, 1e4, 5000, 1.0), 0.001552, 6);
    assert_rounds_to(var_of(&p, 1e4, 5000, DPM_DISP_NU2_WORST), 0.001752, 6); /* worst: ν² = 0 */
    p = split_params(DPM_DISP_MR, 0.5, 0.5, 0.0);
    assert_rounds_to(var_of(&p, 20, 10, 0.1), 4.292633, 6);
}

static void test_reference_variance_ml(void **state)
{
    (void)state;
    dpm_disp_params_t p = split_params(DPM_DISP_ML, 0.5, 1.0, 2.0);
    assert_rounds_to(var_of(&p, 1e4, 5000, 1.0), 0.004251, 6);
    assert_rounds_to(var_of(&p, 1e4, 5000, DPM_DISP_NU2_WORST), 0.004251, 6); /* worst: 1 */
    p = split_params(DPM_DISP_ML, 0.25, 0.5, 2.0);
    assert_rounds_to(var_of(&p, 20, 10, 0.15), 10.136905, 6);
    /* d = 2 closed form, Eq. 19 as printed in the paper */
    double e1 = 0.25, s2 = 8.0 / 0.25, n = 10, K = 20, nu2 = 0.15, x = exp(-e1);
    double eq19 = (nu2 * x + (1 + x) * (s2 + (K - n) / n * s2 * x)) / n;
    assert_near(var_of(&p, K, n, nu2), eq19, 1e-12 * eq19);
}

static void test_reference_true_ldp(void **state)
{
    (void)state;
    double e = NAN;
    assert_int_equal(dpm_disp_true_ldp_mr(1.0, 1.0, &e), DPM_OK);
    assert_rounds_to(e, 1.3799, 4);
    assert_int_equal(dpm_disp_true_ldp_mr(log((1 + exp(1.0)) / 2), 1.0, &e), DPM_OK);
    assert_near(e, 1.0, 1e-12);
    /* sdk/docs/tuple.md §M_R and its true privacy level: the paper's split ε1 = ε2 = ε really
     * gives ε + ln(2e^ε / (1 + e^ε)) */
    const double eps[] = {0.1, 0.5, 1, 2, 5}, want[] = {0.1488, 0.7191, 1.3799, 2.5662, 5.6864};
    for (int i = 0; i < 5; i++) {
        assert_int_equal(dpm_disp_true_ldp_mr(eps[i], eps[i], &e), DPM_OK);
        assert_rounds_to(e, want[i], 4);
    }
    assert_int_equal(dpm_disp_true_ldp_ml(0.5, 1.0, 2.0, &e), DPM_OK);
    assert_near(e, 1.0, 1e-15);
    assert_int_equal(dpm_disp_true_ldp_ml(log(3.0) - 0.5, 1.0, 2.0 / 3.0, &e), DPM_OK);
    assert_true(isinf(e)); /* k != 2: no finite ε */
}

static void test_laplace_variance(void **state)
{
    (void)state;
    const double eps[] = {0.01, 1.0, 10.0}, want[] = {80000.0, 8.0, 0.08};
    for (int i = 0; i < 3; i++) {
        dpm_disp_params_t p = split_params(DPM_DISP_ML, 1.0, eps[i], 2.0);
        double v = NAN;
        assert_int_equal(dpm_disp_value_noise_variance(&p, 0, &v), DPM_OK);
        assert_near(v, want[i], 1e-12 * want[i]);
    }
    double v = prob_dlap_var(1.0 / log(2.0)); /* p = 1/2 */
    assert_near(v, 4.0, 1e-12);
    assert_near(prob_dlap_var(1e4), 2e8 - 1.0 / 6.0, 1e-3); /* -> 2t² - 1/6 */
    /* on the device's grid: 8/ε² up to the grid's tiny correction */
    dpm_disp_params_t p;
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 2, 1.0, 16),
                     DPM_OK);
    assert_int_equal(dpm_disp_value_noise_variance(&p, 1, &v), DPM_OK);
    assert_near(v, 8.0, 1e-8);
    assert_true(v < 8.0);
    /* unquantized sets at a large ε round to a = 1, q = 0: still a valid set */
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_MR, DPM_DISP_SPLIT_PAPER, 2, 50, 0),
                     DPM_OK);
    assert_true(p.a == 1.0);
    assert_near(var_of(&p, 100, 50, 0.0), 1.0 / 50, 1e-15);
}

/* ---- Table 1 and Table 2 ------------------------------------------------------------------ */

static double min_eps(dpm_disp_mech_t mech, dpm_disp_split_t split, double K, double alpha)
{
    dpm_disp_plan_t plan;
    double eps = -1.0;
    assert_int_equal(dpm_disp_plan_init(&plan, mech, split, alpha, 0.99), DPM_OK);
    assert_int_equal(dpm_disp_plan_min_eps(&plan, K, &eps), DPM_OK);
    return eps;
}

/* The paper's reference numbers live in one place: host-sim/scenarios/paper-disparity.ref
 * (read as `dpm-sim repro` reads it). Tests run from the repository root. */
#define REF_FILE "host-sim/scenarios/paper-disparity.ref"

static void load_refs(repro_t *r)
{
    char err[256];
    memset(r, 0, sizeof(*r));
    if (repro_load_refs(r, REF_FILE, err, sizeof(err)) != 0) {
        fail_msg("%s", err);
    }
}

/* The reference [table][row][col] and the decimals it was printed with. */
static double ref_of(const repro_t *r, const char *table, const char *row, const char *col,
                     int *dec)
{
    const repro_ref_t *f = repro_find_ref(r, table, row, col);
    if (f == NULL) {
        fail_msg("no reference [%s][%s][%s] in " REF_FILE, table, row, col);
        return NAN;
    }
    const char *dot = strchr(f->text, '.');
    *dec = dot != NULL ? (int)strlen(dot + 1) : 0;
    return f->value;
}

static const double kTable1K[5] = {1e5, 1e6, 1e7, 1e8, 1e9};
static const double kTable1Alpha[3] = {1e-1, 1e-2, 1e-3};

static void check_table1(const repro_t *r, const char *table, dpm_disp_split_t split)
{
    for (int i = 0; i < 5; i++) {
        char row[16];
        snprintf(row, sizeof(row), "K=1e%d", 5 + i);
        for (int c = 0; c < 6; c++) {
            dpm_disp_mech_t mech = c < 3 ? DPM_DISP_MR : DPM_DISP_ML;
            char col[48];
            const char *name = split == DPM_DISP_SPLIT_PAPER ? (c < 3 ? "M_R opt." : "M_L opt.")
                                                             : (c < 3 ? "M_R" : "M_L k=2");
            snprintf(col, sizeof(col), "%s alpha=1e-%d", name, 1 + c % 3);
            int dec = 0;
            double want = ref_of(r, table, row, col, &dec);
            assert_rounds_to(min_eps(mech, split, kTable1K[i], kTable1Alpha[c % 3]), want, dec);
        }
    }
}

static void test_table1_paper_every_cell(void **state)
{
    (void)state;
    repro_t r;
    int dec = 0;
    load_refs(&r);
    check_table1(&r, "table1", DPM_DISP_SPLIT_PAPER);
    check_table1(&r, "table1_notebook", DPM_DISP_SPLIT_PAPER);
    double want = ref_of(&r, "notebook_find_epsilon", "find_epsilon K=1e7 alpha=0.1048",
                         "M_L opt. eps", &dec);
    assert_rounds_to(min_eps(DPM_DISP_ML, DPM_DISP_SPLIT_PAPER, 1e7, 0.1048), want, dec);
    repro_free(&r);
}

static void test_table1_correct_splits(void **state)
{
    (void)state;
    repro_t r;
    load_refs(&r);
    check_table1(&r, "table1_correct", DPM_DISP_SPLIT_CORRECT);
    repro_free(&r);
}

static double table2_alpha(dpm_disp_mech_t mech, dpm_disp_split_t split, double eps)
{
    dpm_disp_plan_t plan;
    double mse = NAN;
    assert_int_equal(dpm_disp_plan_init(&plan, mech, split, 0.1, 0.99), DPM_OK);
    assert_int_equal(dpm_disp_plan_mse(&plan, 1e7, eps, &mse), DPM_OK);
    /* sdk/docs/tuple.md §Table 2: 0.99 Chebyshev on the [0, 1] metric scale */
    return 5.0 * sqrt(mse);
}

static void test_table2_alpha_column(void **state)
{
    (void)state;
    static const double eps[4] = {0.01, 0.1, 1.0, 10.0};
    repro_t refs;
    load_refs(&refs);
    for (int r = 0; r < 4; r++) {
        char row[24];
        snprintf(row, sizeof(row), "eps=%g", eps[r]);
        for (int m = 0; m < 2; m++) {
            dpm_disp_mech_t mech = m == 0 ? DPM_DISP_MR : DPM_DISP_ML;
            const char *col = m == 0 ? "alpha (R)" : "alpha (L)";
            int dec = 0;
            double want = ref_of(&refs, "table2_alpha", row, col, &dec);
            assert_rounds_to(table2_alpha(mech, DPM_DISP_SPLIT_PAPER, eps[r]), want, dec);
            want = ref_of(&refs, "table2_alpha_correct", row, col, &dec);
            assert_rounds_to(table2_alpha(mech, DPM_DISP_SPLIT_CORRECT, eps[r]), want, dec);
        }
    }
    /* the same α through the Chebyshev helper: 10 sqrt(MSE) at 0.99, halved */
    dpm_disp_plan_t plan;
    double mse = NAN, alpha = NAN;
    assert_int_equal(dpm_disp_plan_init(&plan, DPM_DISP_MR, DPM_DISP_SPLIT_PAPER, 0.1, 0.99),
                     DPM_OK);
    assert_int_equal(dpm_disp_plan_mse(&plan, 1e7, 0.01, &mse), DPM_OK);
    assert_int_equal(dpm_disp_chebyshev_alpha(mse, 0.99, &alpha), DPM_OK);
    int dec = 0;
    double want = ref_of(&refs, "table2_alpha", "eps=0.01", "alpha (R)", &dec);
    assert_rounds_to(alpha / 2.0, want, dec);
    repro_free(&refs);
}

/* ---- splits, thresholds, implemented ε ---------------------------------------------------- */

static void test_splits(void **state)
{
    (void)state;
    double e1, e2, k;
    assert_int_equal(dpm_disp_split_eps(DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 1.0, &e1, &e2, &k),
                     DPM_OK);
    assert_near(e1, log((1 + exp(1.0)) / 2), 1e-15);
    assert_near(e2, 1.0, 0);
    assert_int_equal(dpm_disp_split_eps(DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 800.0, &e1, &e2, &k),
                     DPM_OK); /* no overflow */
    assert_near(e1, 800.0 - log(2.0), 1e-12);
    assert_int_equal(dpm_disp_split_eps(DPM_DISP_MR, DPM_DISP_SPLIT_PAPER, 0.7, &e1, &e2, &k),
                     DPM_OK);
    assert_true(e1 == 0.7 && e2 == 0.7);
    assert_int_equal(dpm_disp_split_eps(DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 3.0, &e1, &e2, &k),
                     DPM_OK);
    assert_true(e1 == 1.5 && e2 == 3.0 && k == 2.0);
    assert_int_equal(dpm_disp_split_eps(DPM_DISP_ML, DPM_DISP_SPLIT_PAPER, 0.5, &e1, &e2, &k),
                     DPM_OK);
    assert_near(e1, log(3.0) - 0.25, 1e-15);
    assert_near(k, 2.0 / 3.0, 1e-15);
    assert_int_equal(dpm_disp_split_eps(DPM_DISP_ML, DPM_DISP_SPLIT_PAPER, 3.0, &e1, &e2, &k),
                     DPM_OK);
    assert_near(e1, log(2.0 / 3.0) + 2.0, 1e-15);
    assert_true(k == 3.0);
}

static void test_thresholds_mirror_the_device(void **state)
{
    (void)state;
    /* sdk/docs/tuple.md §Thresholds: d = 2, keep = floor(sigmoid(ε) 2^32)
     * = 2^32 - ceil(2^32 / (e^ε + 1)) */
    const double eps[] = {0.01, 0.1, 0.5, 1, 2, 5, 10};
    const uint32_t keep_want[] = {2158220976u, 2254768441u, 2673442470u, 3139872686u,
                                  3782994644u, 4266221720u, 4294772313u};
    for (int i = 0; i < 7; i++) {
        uint32_t keep = 0, other = 0;
        assert_int_equal(dpm_disp_grr_thresholds(eps[i], 2, &keep, &other), DPM_OK);
        assert_int_equal(keep, keep_want[i]);
        assert_true((uint64_t)keep + other == ((uint64_t)1 << 32));
    }
    /* the SDK's certified integer thresholds for the same (Q16.16) ε: equal, or one unit off */
    const dpm_eps_t eps_q16[] = {655, 6553, 32768, 65536, 131072, 5u << 16, 10u << 16};
    for (uint32_t d = 2; d <= DPM_DISP_MAX_GROUPS; d += 7) {
        for (int i = 0; i < 7; i++) {
            dpm_grr_t g;
            uint32_t keep = 0, other = 0;
            assert_int_equal(dpm_grr_init(&g, d, eps_q16[i]), DPM_OK);
            assert_int_equal(dpm_disp_grr_thresholds(eps_q16[i] / 65536.0, d, &keep, &other),
                             DPM_OK);
            assert_true(g.other == other || g.other == other + 1 || g.other + 1 == other);
            assert_true((uint64_t)keep + (uint64_t)(d - 1) * other == ((uint64_t)1 << 32));
        }
    }
}

static void test_implemented_eps_of_parameter_sets(void **state)
{
    (void)state;
    const double eps[] = {0.05, 0.3, 1, 2, 4, 9};
    for (int i = 0; i < 6; i++) {
        for (uint32_t d = 2; d <= 5; d += 3) {
            dpm_disp_params_t p;
            double e = NAN;
            /* correct splits: quantization rounds toward less loss, and wastes almost none */
            for (int m = DPM_DISP_MR; m <= DPM_DISP_ML; m++) {
                assert_int_equal(dpm_disp_params_from_eps(&p, (dpm_disp_mech_t)m,
                                                          DPM_DISP_SPLIT_CORRECT, d, eps[i], 16),
                                 DPM_OK);
                assert_int_equal(dpm_disp_params_true_ldp(&p, &e), DPM_OK);
                assert_true(e <= eps[i] * (1 + 1e-12));
                assert_true(e >= eps[i] - 1e-6);
            }
            /* the paper's M_R split exceeds the stated ε, by up to ln 2 */
            assert_int_equal(
                dpm_disp_params_from_eps(&p, DPM_DISP_MR, DPM_DISP_SPLIT_PAPER, d, eps[i], 0),
                DPM_OK);
            assert_int_equal(dpm_disp_params_true_ldp(&p, &e), DPM_OK);
            assert_true(e > eps[i] && e < eps[i] + log(2.0));
            /* the paper's "M_L opt." has no finite ε unless k happens to be 2 (ε = 2) */
            assert_int_equal(
                dpm_disp_params_from_eps(&p, DPM_DISP_ML, DPM_DISP_SPLIT_PAPER, d, eps[i], 0),
                DPM_OK);
            assert_int_equal(dpm_disp_params_true_ldp(&p, &e), DPM_OK);
            assert_true(eps[i] == 2.0 ? fabs(e - 2.0) < 1e-12 : isinf(e));
        }
    }
}

/* ---- exact enumeration of tiny campaigns ------------------------------------------------- */

typedef struct {
    uint32_t group;
    double v;    /* M_R: the value in [-1, 1] */
    int64_t lo;  /* M_L: the grid values randomized rounding picks from: lo w.p. 1 - frac, */
    double frac; /*      lo + 1 w.p. frac (frac = 0: exactly on the grid) */
} device_t;

typedef struct {
    double prob;                        /* total probability enumerated (must be 1) */
    double mean[DPM_DISP_MAX_GROUPS];   /* E[m̂_G] with the true sizes */
    double meansq[DPM_DISP_MAX_GROUPS]; /* E[m̂_G²] */
    double size[DPM_DISP_MAX_GROUPS];   /* E[n̂_G] */
} moments_t;

/* One device's outcomes: M_R (g', v' = ±1); M_L (g', rounding r, noise z) with z in [-Z, Z]. */
typedef struct {
    uint32_t group;
    int64_t value;
    double prob;
} outcome_t;

#define ML_Z 40
#define MAX_OUTCOMES (DPM_DISP_MAX_GROUPS * 2 * (2 * ML_Z + 1))

static size_t outcomes_mr(const dpm_disp_params_t *p, const device_t *dev, outcome_t *out)
{
    size_t n = 0;
    for (uint32_t g = 0; g < p->d; g++) {
        for (int s = -1; s <= 1; s += 2) {
            out[n].group = g;
            out[n].value = s;
            out[n].prob = g == dev->group ? p->a * (1 + p->c * dev->v * s) / 2 : p->q / 2;
            n++;
        }
    }
    return n;
}

/* The discrete Laplace truncated symmetrically to [-Z, Z]: still mean zero, and the variance
 * misses only O(Z² p^Z) ≈ 1e-9 for the scale used here. */
static double dlap_trunc(double t, int z)
{
    double p = exp(-1.0 / t), norm = 1.0;
    for (int i = 1; i <= ML_Z; i++) {
        norm += 2.0 * pow(p, i);
    }
    return pow(p, fabs((double)z)) / norm;
}

static size_t outcomes_ml(const dpm_disp_params_t *p, const device_t *dev, outcome_t *out)
{
    size_t n = 0;
    for (uint32_t g = 0; g < p->d; g++) {
        int kept = g == dev->group;
        for (int r = 0; r <= (kept ? 1 : 0); r++) {
            double pr = kept ? p->a * (r ? dev->frac : 1 - dev->frac) : p->q;
            int64_t base = kept ? dev->lo + r : 0;
            for (int z = -ML_Z; z <= ML_Z; z++) {
                out[n].group = g;
                out[n].value = base + z;
                out[n].prob = pr * dlap_trunc(kept ? p->t_kept : p->t_flip, z);
                n++;
            }
        }
    }
    return n;
}

static void accumulate(const dpm_disp_params_t *p, const dpm_disp_agg_t *agg, const double *n_true,
                       double prob, moments_t *m)
{
    m->prob += prob;
    for (uint32_t g = 0; g < p->d; g++) {
        double mean = NAN, size = NAN;
        assert_int_equal(dpm_disp_group_mean(p, agg, g, n_true[g], &mean), DPM_OK);
        assert_int_equal(dpm_disp_group_size(p, agg, g, &size), DPM_OK);
        m->mean[g] += prob * mean;
        m->meansq[g] += prob * mean * mean;
        m->size[g] += prob * size;
    }
}

/* Every joint outcome of ndev devices (mixed-radix counter), each aggregated and estimated. */
static moments_t enumerate(const dpm_disp_params_t *p, const device_t *dev, size_t ndev)
{
    static outcome_t out[4][MAX_OUTCOMES];
    size_t count[4], idx[4] = {0, 0, 0, 0};
    double n_true[DPM_DISP_MAX_GROUPS] = {0};
    moments_t m;
    memset(&m, 0, sizeof(m));
    assert_true(ndev <= 4);
    for (size_t i = 0; i < ndev; i++) {
        count[i] = p->mech == DPM_DISP_MR ? outcomes_mr(p, &dev[i], out[i])
                                          : outcomes_ml(p, &dev[i], out[i]);
        n_true[dev[i].group] += 1.0;
    }
    for (;;) {
        dpm_disp_agg_t agg;
        double prob = 1.0;
        assert_int_equal(dpm_disp_agg_init(&agg, p), DPM_OK);
        for (size_t i = 0; i < ndev; i++) {
            const outcome_t *o = &out[i][idx[i]];
            assert_int_equal(dpm_disp_agg_add(&agg, o->group, o->value), DPM_OK);
            prob *= o->prob;
        }
        accumulate(p, &agg, n_true, prob, &m);
        size_t i = 0;
        while (i < ndev && ++idx[i] == count[i]) {
            idx[i++] = 0;
        }
        if (i == ndev) {
            return m;
        }
    }
}

static void test_mr_unbiased_exact_enumeration(void **state)
{
    (void)state;
    /* d = 3 with the device's quantized thresholds (ε1 = ln((1+e)/2)-ish and ε2 = 1) */
    uint32_t keep_g, other_g, keep_v, other_v;
    assert_int_equal(dpm_disp_grr_thresholds(0.62, 3, &keep_g, &other_g), DPM_OK);
    assert_int_equal(dpm_disp_grr_thresholds(1.0, 2, &keep_v, &other_v), DPM_OK);
    dpm_disp_params_t p;
    assert_int_equal(dpm_disp_params_campaign_mr(&p, 3, keep_g, other_g, keep_v), DPM_OK);
    const device_t dev[4] = {{0, 0.6, 0, 0}, {0, -0.2, 0, 0}, {1, 1.0, 0, 0}, {2, -1.0, 0, 0}};
    const double mean_want[3] = {0.2, 1.0, -1.0}, nu2[3] = {0.2, 1.0, 1.0}, n[3] = {2, 1, 1};
    moments_t m = enumerate(&p, dev, 4);
    assert_near(m.prob, 1.0, 1e-12);
    for (uint32_t g = 0; g < 3; g++) {
        assert_near(m.mean[g], mean_want[g], 1e-12);
        assert_near(m.size[g], n[g], 1e-12);
        /* the generalized Eq. 20 is the exact variance, with ν² of the true values */
        double var = m.meansq[g] - m.mean[g] * m.mean[g];
        assert_near(var, var_of(&p, 4, n[g], nu2[g]), 1e-9 * var);
    }
    /* d = 2, three devices, paper-style unquantized probabilities too */
    p = split_params(DPM_DISP_MR, 0.5, 0.5, 0.0);
    const device_t dev2[3] = {{0, 0.3, 0, 0}, {1, -0.7, 0, 0}, {1, 0.1, 0, 0}};
    m = enumerate(&p, dev2, 3);
    assert_near(m.mean[0], 0.3, 1e-12);
    assert_near(m.mean[1], -0.3, 1e-12);
    assert_near(m.size[1], 2.0, 1e-12);
    double var1 = m.meansq[1] - m.mean[1] * m.mean[1];
    assert_near(var1, var_of(&p, 3, 2, (0.49 + 0.01) / 2), 1e-9 * var1);
}

static void test_ml_unbiased_exact_enumeration(void **state)
{
    (void)state;
    /* F = 2 (grid 1/4), t = 1.5 grid units, quantized group GRR. Device 0 holds v = 0.3:
     * 1.2 grid units, rounded to 1 w.p. 0.8 and 2 w.p. 0.2; device 1 holds v = -0.5 = -2. */
    uint32_t keep_g, other_g;
    assert_int_equal(dpm_disp_grr_thresholds(1.0, 2, &keep_g, &other_g), DPM_OK);
    dpm_disp_params_t p;
    assert_int_equal(dpm_disp_params_campaign_ml(&p, 2, keep_g, other_g, 1.5, 1.5, 2), DPM_OK);
    const device_t dev[2] = {{0, 0.3, 1, 0.2}, {1, -0.5, -2, 0.0}};
    moments_t m = enumerate(&p, dev, 2);
    assert_near(m.prob, 1.0, 1e-12);
    assert_near(m.mean[0], 0.3, 1e-12);
    assert_near(m.mean[1], -0.5, 1e-12);
    assert_near(m.size[0], 1.0, 1e-12);
    /* Eq. 19 (generalized) with the rounding bound: an upper bound that is tight up to the
     * bound's slack a r / (a n)², r = 2^-2F / 4 */
    const double nu2[2] = {0.09, 0.25};
    for (uint32_t g = 0; g < 2; g++) {
        double var = m.meansq[g] - m.mean[g] * m.mean[g];
        double bound = var_of(&p, 2, 1, nu2[g]), slack = 0.25 / 16.0 / p.a;
        assert_true(var <= bound + 1e-9);
        assert_true(var >= bound - slack - 1e-9);
    }
    /* device 1 sits on the grid: its group's variance leaves only the slack */
    double var1 = m.meansq[1] - m.mean[1] * m.mean[1];
    assert_near(var1, var_of(&p, 2, 1, 0.25) - 0.25 / 16.0 / p.a, 1e-9);
}

static void test_group_size_estimator(void **state)
{
    (void)state;
    dpm_disp_params_t p;
    assert_int_equal(dpm_disp_params_campaign_mr(&p, 3, 1u << 31, 1u << 30, 3u << 30), DPM_OK);
    assert_true(p.a == 0.5 && p.q == 0.25);
    dpm_disp_agg_t agg;
    assert_int_equal(dpm_disp_agg_init(&agg, &p), DPM_OK);
    const uint32_t reported[3] = {500, 350, 150};
    for (uint32_t g = 0; g < 3; g++) {
        for (uint32_t i = 0; i < reported[g]; i++) {
            assert_int_equal(dpm_disp_agg_add(&agg, g, i % 2 ? 1 : -1), DPM_OK);
        }
    }
    double sum = 0.0;
    for (uint32_t g = 0; g < 3; g++) {
        double n_hat = NAN;
        assert_int_equal(dpm_disp_group_size(&p, &agg, g, &n_hat), DPM_OK);
        assert_near(n_hat, (reported[g] - 1000 * 0.25) / 0.25, 1e-9);
        sum += n_hat;
    }
    assert_near(sum, 1000.0, 1e-9); /* the estimates always add up to K */
    /* estimate() uses it when the sizes are unknown; a negative estimate makes a group
     * invalid rather than a division by a negative size */
    dpm_disp_estimate_t est;
    assert_int_equal(dpm_disp_estimate(&p, &agg, NULL, NULL, &est), DPM_OK);
    assert_true(est.sizes_estimated);
    assert_near(est.group[0].n, 1000.0, 1e-9);
    assert_true(est.group[2].valid == 0 && isnan(est.group[2].mean)); /* 150 < K q */
    dpm_disp_gap_t gap;
    assert_int_equal(dpm_disp_gap(&est, 0, 2, 0.95, &gap), DPM_ERR_UNDEFINED);
    assert_int_equal(dpm_disp_gap(&est, 0, 1, 0.95, &gap), DPM_OK);
}

/* ---- estimates, gaps and bounds ---------------------------------------------------------- */

static void test_known_size_gap_and_bounds(void **state)
{
    (void)state;
    dpm_disp_params_t p;
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 2, 1.0, 0),
                     DPM_OK);
    dpm_disp_agg_t agg;
    assert_int_equal(dpm_disp_agg_init(&agg, &p), DPM_OK);
    for (int i = 0; i < 600; i++) { /* group 0: 400 of +1, 200 of -1; group 1: 150 / 250 */
        assert_int_equal(dpm_disp_agg_add(&agg, 0, i < 400 ? 1 : -1), DPM_OK);
    }
    for (int i = 0; i < 400; i++) {
        assert_int_equal(dpm_disp_agg_add(&agg, 1, i < 150 ? 1 : -1), DPM_OK);
    }
    const double n[2] = {550, 450}, nu2[2] = {0.3, DPM_DISP_NU2_WORST};
    dpm_disp_estimate_t est;
    assert_int_equal(dpm_disp_estimate(&p, &agg, n, nu2, &est), DPM_OK);
    double m0 = 200.0 / (p.a * p.c * 550), m1 = -100.0 / (p.a * p.c * 450);
    assert_near(est.group[0].mean, m0, 1e-12);
    assert_near(est.group[1].mean, m1, 1e-12);
    assert_near(est.group[0].var, var_of(&p, 1000, 550, 0.3), 1e-15);
    assert_near(est.group[1].var, var_of(&p, 1000, 450, 0.0), 1e-15);
    dpm_disp_gap_t gap;
    assert_int_equal(dpm_disp_gap(&est, 1, 0, 0.95, &gap), DPM_OK);
    double var = est.group[0].var + est.group[1].var, sd = sqrt(var);
    assert_near(gap.diff, m1 - m0, 1e-12);
    assert_near(gap.abs_diff, m0 - m1, 1e-12);
    assert_near(gap.var, var, 1e-15);
    assert_near(gap.chebyshev, sqrt(var / 0.05), 1e-12);
    assert_near(gap.ci_lo, gap.diff - 1.959963984540054 * sd, 1e-9);
    assert_near(gap.ci_hi, gap.diff + 1.959963984540054 * sd, 1e-9);
    double mse = NAN;
    assert_int_equal(dpm_disp_gap_mse(&p, 1000, 550, 450, 0.3, 0.0, &mse), DPM_OK);
    assert_near(mse, var, 1e-15);
    double alpha = NAN, z = NAN;
    assert_int_equal(dpm_disp_chebyshev_alpha(4e-4, 0.99, &alpha), DPM_OK);
    assert_near(alpha, 0.2, 1e-12); /* 10 sqrt(MSE) */
    z = prob_norm_quantile(0.975);
    assert_near(z, 1.959963984540054, 1e-12);
    assert_near(prob_norm_quantile(0.5), 0.0, 1e-14);
}

static void test_plugin_nu2_mr(void **state)
{
    (void)state;
    dpm_disp_params_t p = split_params(DPM_DISP_MR, 2.0, 2.0, 0.0);
    dpm_disp_agg_t agg;
    assert_int_equal(dpm_disp_agg_init(&agg, &p), DPM_OK);
    for (int i = 0; i < 5000; i++) {
        assert_int_equal(dpm_disp_agg_add(&agg, (uint32_t)(i % 2), i % 10 < 8 ? 1 : -1), DPM_OK);
    }
    const double n[2] = {2500, 2500}, nu2[2] = {DPM_DISP_NU2_PLUGIN, DPM_DISP_NU2_WORST};
    dpm_disp_estimate_t est;
    assert_int_equal(dpm_disp_estimate(&p, &agg, n, nu2, &est), DPM_OK);
    double m = est.group[0].mean;
    double want = fmin(1.0, fmax(0.0, m * m - var_of(&p, 5000, 2500, 0.0)));
    assert_true(want > 0.1);
    assert_near(est.group[0].nu2, want, 1e-12);
    assert_near(est.group[0].var, var_of(&p, 5000, 2500, want), 1e-15);
    assert_true(est.group[0].var < est.group[1].var); /* the plug-in beats the worst case */
}

/* ---- simulation: delta method and ν² plug-in -------------------------------------------- */

static uint32_t u32(test_rng_t *r)
{
    return (uint32_t)(test_rng_next(r) >> 32);
}

static double unif(test_rng_t *r)
{
    return (double)(test_rng_next(r) >> 11) * 0x1p-53;
}

/* The device's GRR with the campaign's thresholds: U < keep keeps, else a uniform other. */
static uint32_t sim_group(const dpm_disp_params_t *p, test_rng_t *r, uint32_t g)
{
    uint32_t u = u32(r);
    if (u < p->keep_g) {
        return g;
    }
    uint32_t j = (u - p->keep_g) / p->other_g; /* 0 .. d-2 */
    return j < g ? j : j + 1;
}

static int64_t sim_mr_value(const dpm_disp_params_t *p, test_rng_t *r, double v, int kept)
{
    int bit = unif(r) < (kept ? (1 + v) / 2 : 0.5);
    int keep = u32(r) < p->keep_v;
    return (keep ? bit : !bit) ? 1 : -1;
}

static int64_t sim_dlap(test_rng_t *r, double t)
{
    double lp = -1.0 / t; /* ln p */
    double g1 = floor(log(1.0 - unif(r)) / lp), g2 = floor(log(1.0 - unif(r)) / lp);
    return (int64_t)g1 - (int64_t)g2;
}

/* A population for the simulation: devices i < n0 in group 0 with value v0, the next n1 in
 * group 1 with v1, the rest spread over groups 2..d-1 with value 0. */
typedef struct {
    uint32_t K, n0, n1;
    double v0, v1;
} population_t;

typedef struct {
    double mean;  /* of D̂ = m̂_0 - m̂_1 over the runs */
    double emp;   /* its empirical variance */
    double pred;  /* mean of the predicted Var[D̂] (delta method, sizes estimated) */
    double naive; /* mean of Var[m̂_0] + Var[m̂_1] as if the estimated sizes were known */
} gap_sim_t;

static gap_sim_t simulate_gap(const dpm_disp_params_t *p, const population_t *pop, int runs,
                              uint64_t seed)
{
    const double nu2[DPM_DISP_MAX_GROUPS] = {pop->v0 * pop->v0, pop->v1 * pop->v1};
    double sum = 0, sumsq = 0, pred = 0, naive = 0;
    test_rng_t rng;
    test_rng_seed(&rng, seed);
    assert_true(p->d > 2 || pop->n0 + pop->n1 == pop->K);
    for (int run = 0; run < runs; run++) {
        dpm_disp_agg_t agg;
        assert_int_equal(dpm_disp_agg_init(&agg, p), DPM_OK);
        for (uint32_t i = 0; i < pop->K; i++) {
            uint32_t g = i < pop->n0 ? 0 : (i < pop->n0 + pop->n1 ? 1 : 2 + i % (p->d - 2));
            double v = g == 0 ? pop->v0 : (g == 1 ? pop->v1 : 0.0);
            uint32_t rep = sim_group(p, &rng, g);
            assert_int_equal(dpm_disp_agg_add(&agg, rep, sim_mr_value(p, &rng, v, rep == g)),
                             DPM_OK);
        }
        dpm_disp_estimate_t est;
        dpm_disp_gap_t gap;
        assert_int_equal(dpm_disp_estimate(p, &agg, NULL, nu2, &est), DPM_OK);
        assert_int_equal(dpm_disp_gap(&est, 0, 1, 0.95, &gap), DPM_OK);
        sum += gap.diff;
        sumsq += gap.diff * gap.diff;
        pred += gap.var;
        naive +=
            var_of(p, pop->K, est.group[0].n, nu2[0]) + var_of(p, pop->K, est.group[1].n, nu2[1]);
    }
    gap_sim_t r;
    r.mean = sum / runs;
    r.emp = sumsq / runs - r.mean * r.mean;
    r.pred = pred / runs;
    r.naive = naive / runs;
    return r;
}

static void test_delta_method_variance_by_simulation(void **state)
{
    (void)state;
    dpm_disp_params_t p;
    /* d = 8: strong means in two groups and six more groups feeding the GRR counts make the
     * size noise worth ~28% of the gap variance */
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 8, 2.0, 0),
                     DPM_OK);
    const population_t many = {15000, 3000, 2000, 0.9, -0.9};
    gap_sim_t r = simulate_gap(&p, &many, 2500, 20240601);
    /* the ratio estimator is nearly unbiased at this size */
    assert_near(r.mean, 1.8, 6 * sqrt(r.emp / 2500) + 0.01);
    /* 2500 runs estimate a variance to ±2.8% (1 sd); 6 sd keeps a false alarm below 1e-6 */
    assert_near(r.emp / r.pred, 1.0, 0.17);
    /* ...and the check has power: ignoring the size noise understates the variance */
    assert_true(r.pred / r.naive > 1.2);

    /* d = 2, opposite means: here the two means' covariance through the shared counts is
     * what matters (without it the prediction is ~28% too high) */
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 2, 0.5, 0),
                     DPM_OK);
    const population_t two = {15000, 9000, 6000, 0.9, -0.9};
    r = simulate_gap(&p, &two, 4000, 99);
    assert_near(r.mean, 1.8, 6 * sqrt(r.emp / 4000) + 0.01);
    assert_near(r.emp / r.pred, 1.0, 0.14); /* ±2.2% per sd */
}

static void test_plugin_nu2_ml_by_simulation(void **state)
{
    (void)state;
    dpm_disp_params_t p;
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 2, 4.0, 8),
                     DPM_OK);
    test_rng_t rng;
    test_rng_seed(&rng, 77);
    dpm_disp_agg_t agg;
    assert_int_equal(dpm_disp_agg_init(&agg, &p), DPM_OK);
    const uint32_t K = 40000;
    for (uint32_t i = 0; i < K; i++) {
        uint32_t g = i % 2;
        int64_t v = g == 0 ? 205 : -128; /* 0.80078125 and -0.5 on Q8 */
        uint32_t rep = sim_group(&p, &rng, g);
        int64_t value = (rep == g ? v : 0) + sim_dlap(&rng, rep == g ? p.t_kept : p.t_flip);
        assert_int_equal(dpm_disp_agg_add(&agg, rep, value), DPM_OK);
    }
    const double n[2] = {K / 2, K / 2}, nu2[2] = {DPM_DISP_NU2_PLUGIN, DPM_DISP_NU2_PLUGIN};
    dpm_disp_estimate_t est;
    assert_int_equal(dpm_disp_estimate(&p, &agg, n, nu2, &est), DPM_OK);
    /* the sd of the plug-in is about 0.02 here; 0.12 is 6 sd */
    assert_near(est.group[0].nu2, 0.80078125 * 0.80078125, 0.12);
    assert_near(est.group[1].nu2, 0.25, 0.12);
    assert_near(est.group[0].mean, 0.80078125, 6 * sqrt(est.group[0].var));
    assert_near(est.group[1].mean, -0.5, 6 * sqrt(est.group[1].var));
}

/* ---- end to end through the SDK's device mechanism -------------------------------------- */

static void run_sdk_campaign(dpm_tuple_kind_t kind, uint64_t seed)
{
    static const dpm_metric_t tpr[] = {DPM_METRIC_TPR};
    dpm_eps_t eps;
    dpm_tuple_t t;
    assert_int_equal(dpm_eps_from_decimal("2", &eps), DPM_OK);
    assert_int_equal(dpm_tuple_init(&t, kind, 3, tpr, 1, eps), DPM_OK);
    dpm_disp_params_t p;
    if (kind == DPM_TUPLE_MR) {
        assert_int_equal(dpm_disp_params_campaign_mr(&p, 3, t.group_grr.keep, t.group_grr.other,
                                                     t.value.rr.keep),
                         DPM_OK);
    } else {
        double scale = (double)t.value.lap.scale_num / (double)t.value.lap.scale_den;
        assert_int_equal(dpm_disp_params_campaign_ml(&p, 3, t.group_grr.keep, t.group_grr.other,
                                                     scale, scale, t.frac_bits),
                         DPM_OK);
    }
    double e_true = NAN;
    assert_int_equal(dpm_disp_params_true_ldp(&p, &e_true), DPM_OK);
    assert_true(e_true <= 2.0 + 1e-9);
    test_rng_t tr;
    test_rng_seed(&tr, seed);
    dpm_rng_t rng = test_rng_port(&tr);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &rng), DPM_OK);
    dpm_disp_agg_t agg;
    assert_int_equal(dpm_disp_agg_init(&agg, &p), DPM_OK);
    /* TPR 9/10, 1/2 and 1/5 per group: v = 0.8, 0, -0.6 */
    const dpm_ratio_t tpr_of[3] = {{9, 10}, {1, 2}, {1, 5}};
    const double v[3] = {0.8, 0.0, -0.6}, n[3] = {6000, 3000, 1000};
    for (uint32_t i = 0; i < 10000; i++) {
        uint32_t g = i < 6000 ? 0 : (i < 9000 ? 1 : 2);
        dpm_tuple_report_t rep;
        assert_int_equal(dpm_tuple_perturb(&t, &r, g, &tpr_of[g], &rep), DPM_OK);
        assert_int_equal(dpm_disp_agg_add(&agg, rep.group, rep.value[0]), DPM_OK);
    }
    dpm_disp_estimate_t est;
    assert_int_equal(dpm_disp_estimate(&p, &agg, n, NULL, &est), DPM_OK);
    for (uint32_t g = 0; g < 3; g++) {
        assert_near(est.group[g].mean, v[g], 6 * sqrt(est.group[g].var));
    }
    dpm_disp_gap_t gaps[3];
    size_t count = 0;
    assert_int_equal(dpm_disp_gaps_all(&est, 0.99, gaps, 3, &count), DPM_OK);
    assert_int_equal(count, 3);
    assert_true(gaps[1].g == 0 && gaps[1].h == 2);
    assert_near(gaps[1].diff, 1.4, 6 * sqrt(gaps[1].var));
}

static void test_end_to_end_with_sdk_devices(void **state)
{
    (void)state;
    run_sdk_campaign(DPM_TUPLE_MR, 11);
    run_sdk_campaign(DPM_TUPLE_ML, 12);
}

/* ---- planner ------------------------------------------------------------------------------ */

static void test_planner_round_trip(void **state)
{
    (void)state;
    const double Ks[] = {2e4, 1e6, 3e8}, alphas[] = {0.2, 0.05, 0.01};
    for (int m = DPM_DISP_MR; m <= DPM_DISP_ML; m++) {
        for (int s = DPM_DISP_SPLIT_CORRECT; s <= DPM_DISP_SPLIT_PAPER; s++) {
            for (int b = DPM_DISP_BOUND_CHEBYSHEV; b <= DPM_DISP_BOUND_NORMAL; b++) {
                for (int i = 0; i < 3; i++) {
                    dpm_disp_plan_t plan;
                    double eps = NAN, mse = NAN, above = NAN, target = NAN, K = NAN;
                    assert_int_equal(dpm_disp_plan_init(&plan, (dpm_disp_mech_t)m,
                                                        (dpm_disp_split_t)s, alphas[i], 0.95),
                                     DPM_OK);
                    plan.bound = (dpm_disp_bound_t)b;
                    plan.share_g = 0.3; /* unbalanced, third groups present */
                    plan.share_h = 0.5;
                    plan.d = 3;
                    assert_int_equal(dpm_disp_plan_min_eps(&plan, Ks[i], &eps), DPM_OK);
                    if (isnan(eps)) {
                        assert_true(m == DPM_DISP_MR);
                        continue;
                    }
                    assert_int_equal(dpm_disp_plan_target_mse(&plan, &target), DPM_OK);
                    assert_int_equal(dpm_disp_plan_mse(&plan, Ks[i], eps, &mse), DPM_OK);
                    /* the MSE at ε is the target (quantized thresholds make it a step function
                     * of ε with steps ~1e-9 relative) */
                    assert_near(mse, target, (s == DPM_DISP_SPLIT_PAPER ? 1e-11 : 1e-8) * target);
                    assert_int_equal(dpm_disp_plan_mse(&plan, Ks[i], eps * (1 - 1e-6), &above),
                                     DPM_OK);
                    assert_true(above > target); /* and ε is the smallest that reaches it */
                    /* min devices at that ε gives back (at most) K */
                    assert_int_equal(dpm_disp_plan_min_devices(&plan, eps, &K), DPM_OK);
                    assert_true(K <= Ks[i] && K >= Ks[i] * (1 - 1e-6));
                }
            }
        }
    }
    /* the normal bound's target at 0.95 */
    dpm_disp_plan_t plan;
    double target = NAN;
    assert_int_equal(dpm_disp_plan_init(&plan, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 0.1, 0.95),
                     DPM_OK);
    plan.bound = DPM_DISP_BOUND_NORMAL;
    assert_int_equal(dpm_disp_plan_target_mse(&plan, &target), DPM_OK);
    assert_near(target, pow(0.1 / 1.959963984540054, 2), 1e-15);
}

static void test_planner_min_devices(void **state)
{
    (void)state;
    dpm_disp_plan_t plan;
    double K = NAN, mse = NAN, target = NAN;
    assert_int_equal(dpm_disp_plan_init(&plan, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 0.01, 0.99),
                     DPM_OK);
    assert_int_equal(dpm_disp_plan_min_devices(&plan, 1.0, &K), DPM_OK);
    assert_int_equal(dpm_disp_plan_target_mse(&plan, &target), DPM_OK);
    assert_true(K == floor(K));
    assert_int_equal(dpm_disp_plan_mse(&plan, K, 1.0, &mse), DPM_OK);
    assert_true(mse <= target);
    assert_int_equal(dpm_disp_plan_mse(&plan, K - 1, 1.0, &mse), DPM_OK);
    assert_true(mse > target);
    /* M_R always gets there with enough devices, even below its ε floor per K */
    assert_true(K > 1e7 && K < 1e8);
}

static void test_planner_unreachable_is_nan(void **state)
{
    (void)state;
    for (int s = DPM_DISP_SPLIT_CORRECT; s <= DPM_DISP_SPLIT_PAPER; s++) {
        assert_true(isnan(min_eps(DPM_DISP_MR, (dpm_disp_split_t)s, 1e5, 1e-2)));
        assert_true(isnan(min_eps(DPM_DISP_MR, (dpm_disp_split_t)s, 400, 1.0))); /* Kα² = 400 */
        assert_false(isnan(min_eps(DPM_DISP_MR, (dpm_disp_split_t)s, 401, 1.0)));
        assert_false(isnan(min_eps(DPM_DISP_ML, (dpm_disp_split_t)s, 1e5, 1e-3)));
    }
}

/* ---- aggregation ------------------------------------------------------------------------ */

static void test_aggregator_sums_exactly(void **state)
{
    (void)state;
    dpm_disp_params_t p;
    assert_int_equal(dpm_disp_params_campaign_ml(&p, 2, 3u << 30, 1u << 30, 100.0, 100.0, 16),
                     DPM_OK);
    dpm_disp_agg_t a, b, all;
    assert_int_equal(dpm_disp_agg_init(&a, &p), DPM_OK);
    assert_int_equal(dpm_disp_agg_init(&b, &p), DPM_OK);
    assert_int_equal(dpm_disp_agg_init(&all, &p), DPM_OK);
    double s = NAN;
    /* 4 INT64_MAX overflow int64; the 128-bit sum keeps them */
    for (int i = 0; i < 4; i++) {
        assert_int_equal(dpm_disp_agg_add(i < 2 ? &a : &b, 0, INT64_MAX), DPM_OK);
        assert_int_equal(dpm_disp_agg_add(&all, 0, INT64_MAX), DPM_OK);
    }
    assert_int_equal(dpm_disp_agg_merge(&a, &b), DPM_OK);
    assert_int_equal(dpm_disp_agg_sum(&a, 0, &s), DPM_OK);
    assert_near(s, 4.0 * 9223372036854775807.0 / 65536.0, 1.0);
    assert_memory_equal(&a.sum[0], &all.sum[0], sizeof(a.sum[0]));
    assert_int_equal(a.total, 4);
    /* small negative totals come out exact (no cancellation of the two words) */
    assert_int_equal(dpm_disp_agg_add(&b, 1, -3), DPM_OK);
    assert_int_equal(dpm_disp_agg_add(&b, 1, 1), DPM_OK);
    assert_int_equal(dpm_disp_agg_sum(&b, 1, &s), DPM_OK);
    assert_true(s == -2.0 / 65536.0);
    assert_int_equal(dpm_disp_agg_add(&b, 1, INT64_MIN), DPM_OK);
    assert_int_equal(dpm_disp_agg_add(&b, 1, INT64_MIN), DPM_OK);
    assert_int_equal(dpm_disp_agg_sum(&b, 1, &s), DPM_OK);
    assert_true(s == (-2.0 - 2.0 * 9223372036854775808.0) / 65536.0);
}

/* ---- bad input ---------------------------------------------------------------------------- */

static void test_bad_inputs(void **state)
{
    (void)state;
    dpm_disp_params_t p, good;
    memset(&p, 0x5a, sizeof(p));
    const dpm_disp_params_t sentinel = p;
    /* d outside [2, limit], ε <= 0 or not finite, bad thresholds */
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 1, 1, 16),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT,
                                              DPM_DISP_MAX_GROUPS + 1, 1, 16),
                     DPM_ERR_PARAM);
    const double bad_eps[] = {0.0, -1.0, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(
            dpm_disp_params_from_eps(&p, DPM_DISP_MR, DPM_DISP_SPLIT_PAPER, 2, bad_eps[i], 0),
            DPM_ERR_PARAM);
        double e = 7.0;
        assert_int_equal(dpm_disp_true_ldp_mr(bad_eps[i], 1.0, &e), DPM_ERR_PARAM);
        assert_true(e == 7.0);
    }
    assert_int_equal(
        dpm_disp_params_from_eps(&p, (dpm_disp_mech_t)9, DPM_DISP_SPLIT_PAPER, 2, 1, 0),
        DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_MR, (dpm_disp_split_t)0, 2, 1, 0),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_ML, DPM_DISP_SPLIT_CORRECT, 2, 1, 63),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_params_from_eps(&p, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 2, 1e-12, 0),
                     DPM_ERR_RANGE); /* 32-bit thresholds cannot express it */
    assert_int_equal(dpm_disp_params_campaign_mr(&p, 2, 3u << 30, (1u << 30) + 1, 3u << 30),
                     DPM_ERR_PARAM); /* keep + other != 2^32 */
    assert_int_equal(dpm_disp_params_campaign_mr(&p, 2, 3u << 30, 1u << 30, 1u << 31),
                     DPM_ERR_PARAM); /* 2b - 1 = 0 */
    assert_int_equal(dpm_disp_params_campaign_mr(&p, 2, 1u << 31, 1u << 31, 3u << 30),
                     DPM_ERR_PARAM); /* a == q: ε1 = 0 */
    assert_int_equal(dpm_disp_params_campaign_ml(&p, 2, 3u << 30, 1u << 30, 0.0, 1.0, 16),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_params_campaign_ml(&p, 2, 3u << 30, 1u << 30, 1.0, NAN, 16),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_params_campaign_mr(NULL, 2, 3u << 30, 1u << 30, 3u << 30),
                     DPM_ERR_PARAM);
    assert_memory_equal(&p, &sentinel, sizeof(p)); /* untouched by every failure */

    /* zero or oversized n, bad ν² */
    assert_int_equal(dpm_disp_params_campaign_mr(&good, 2, 3u << 30, 1u << 30, 3u << 30), DPM_OK);
    double v = 5.0;
    assert_int_equal(dpm_disp_mean_variance(&good, 100, 0, 0.5, &v), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_mean_variance(&good, 100, 101, 0.5, &v), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_mean_variance(&good, 100, 50, 1.5, &v), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_mean_variance(&good, 100, 50, DPM_DISP_NU2_PLUGIN, &v),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_gap_mse(&good, 100, 60, 50, 0, 0, &v), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_value_noise_variance(&good, 0, &v), DPM_ERR_PARAM); /* M_R */
    assert_true(v == 5.0);

    /* aggregation */
    dpm_disp_agg_t agg, other;
    assert_int_equal(dpm_disp_agg_init(&agg, &good), DPM_OK);
    assert_int_equal(dpm_disp_agg_add(&agg, 2, 1), DPM_ERR_PARAM); /* group >= d */
    assert_int_equal(dpm_disp_agg_add(&agg, 0, 0), DPM_ERR_PARAM); /* M_R value not ±1 */
    assert_int_equal(dpm_disp_agg_add(&agg, 0, 2), DPM_ERR_PARAM);
    assert_int_equal(agg.total, 0);
    double n_hat = 3.0, mean = 3.0;
    assert_int_equal(dpm_disp_group_mean(&good, &agg, 0, 0.0, &mean), DPM_ERR_PARAM);
    assert_true(mean == 3.0);
    dpm_disp_estimate_t est;
    assert_int_equal(dpm_disp_estimate(&good, &agg, NULL, NULL, &est), DPM_ERR_UNDEFINED);
    dpm_disp_params_t ml;
    assert_int_equal(dpm_disp_params_campaign_ml(&ml, 2, 3u << 30, 1u << 30, 9.0, 9.0, 8), DPM_OK);
    assert_int_equal(dpm_disp_agg_init(&other, &ml), DPM_OK);
    assert_int_equal(dpm_disp_agg_merge(&agg, &other), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_group_size(&ml, &agg, 0, &n_hat), DPM_ERR_PARAM); /* mismatch */
    assert_true(n_hat == 3.0);

    /* estimates and gaps */
    assert_int_equal(dpm_disp_agg_add(&agg, 0, 1), DPM_OK);
    assert_int_equal(dpm_disp_agg_add(&agg, 1, -1), DPM_OK);
    const double n_zero[2] = {1, 0}, n_ok[2] = {1, 1}, nu2_bad[2] = {0.5, -3.0};
    assert_int_equal(dpm_disp_estimate(&good, &agg, n_zero, NULL, &est), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_estimate(&good, &agg, n_ok, nu2_bad, &est), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_estimate(&good, &agg, n_ok, NULL, &est), DPM_OK);
    dpm_disp_gap_t gaps[1];
    size_t count = 0;
    assert_int_equal(dpm_disp_gap(&est, 0, 0, 0.95, &gaps[0]), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_gap(&est, 0, 2, 0.95, &gaps[0]), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_gap(&est, 0, 1, 1.0, &gaps[0]), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_gap(&est, 0, 1, 0.0, &gaps[0]), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_gaps_all(&est, 0.95, gaps, 0, &count), DPM_ERR_BUFFER);
    assert_int_equal(count, 0);
    assert_int_equal(dpm_disp_gaps_all(&est, 0.95, gaps, 1, &count), DPM_OK);
    assert_int_equal(count, 1);

    /* helpers and planner */
    double x = 9.0;
    assert_int_equal(dpm_disp_chebyshev_alpha(-1.0, 0.99, &x), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_chebyshev_alpha(1.0, 1.0, &x), DPM_ERR_PARAM);
    assert_true(isnan(prob_norm_quantile(0.0)) && prob_dlap_var(-1.0) == 0.0);
    assert_int_equal(dpm_disp_grr_thresholds(1.0, 1, NULL, NULL), DPM_ERR_PARAM);
    assert_true(x == 9.0);
    dpm_disp_plan_t plan;
    assert_int_equal(dpm_disp_plan_init(&plan, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 0.0, 0.99),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_plan_init(&plan, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 0.1, 1.5),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_plan_init(&plan, DPM_DISP_MR, DPM_DISP_SPLIT_CORRECT, 0.1, 0.99),
                     DPM_OK);
    assert_int_equal(dpm_disp_plan_min_eps(&plan, 0.0, &x), DPM_ERR_PARAM);
    assert_int_equal(dpm_disp_plan_min_devices(&plan, -1.0, &x), DPM_ERR_PARAM);
    plan.d = DPM_DISP_MAX_GROUPS + 1;
    assert_int_equal(dpm_disp_plan_min_eps(&plan, 1e6, &x), DPM_ERR_PARAM);
    plan.d = 2;
    plan.share_g = 0.7; /* shares add up to more than 1 */
    assert_int_equal(dpm_disp_plan_min_eps(&plan, 1e6, &x), DPM_ERR_PARAM);
    assert_true(x == 9.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_variance_mr),
        cmocka_unit_test(test_reference_variance_ml),
        cmocka_unit_test(test_reference_true_ldp),
        cmocka_unit_test(test_laplace_variance),
        cmocka_unit_test(test_table1_paper_every_cell),
        cmocka_unit_test(test_table1_correct_splits),
        cmocka_unit_test(test_table2_alpha_column),
        cmocka_unit_test(test_splits),
        cmocka_unit_test(test_thresholds_mirror_the_device),
        cmocka_unit_test(test_implemented_eps_of_parameter_sets),
        cmocka_unit_test(test_mr_unbiased_exact_enumeration),
        cmocka_unit_test(test_ml_unbiased_exact_enumeration),
        cmocka_unit_test(test_group_size_estimator),
        cmocka_unit_test(test_known_size_gap_and_bounds),
        cmocka_unit_test(test_plugin_nu2_mr),
        cmocka_unit_test(test_delta_method_variance_by_simulation),
        cmocka_unit_test(test_plugin_nu2_ml_by_simulation),
        cmocka_unit_test(test_end_to_end_with_sdk_devices),
        cmocka_unit_test(test_planner_round_trip),
        cmocka_unit_test(test_planner_min_devices),
        cmocka_unit_test(test_planner_unreachable_is_nan),
        cmocka_unit_test(test_aggregator_sums_exactly),
        cmocka_unit_test(test_bad_inputs),
    };
    return cmocka_run_group_tests_name("disparity_estimate", tests, NULL, NULL);
}
