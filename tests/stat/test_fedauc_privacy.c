/* SPDX-License-Identifier: Apache-2.0 */
/* Empirical label-DP of FedAUC's round 2 under MALICIOUS rank replies. A device holds three
 * examples (quantized scores 2 < 5 < 9); neighbouring datasets D and D' differ in the label of
 * the example scored 9 (the target). The server crafts the reply:
 *   "single out": M = 1000 and ranks 0, 2, 1998: the target alone carries a huge rank, so its
 *     label moves localSum2 by 1998 (and T by D = 3994) while the rest contributes almost
 *     nothing;
 *   "shrink": M = 3 (the smallest pool that contains the device) and ranks 0, 2, 4, the
 *     smallest sensitivities a reply can impose.
 * Both pass dpm_fedauc_accept (they are consistent with the scores), and the device's
 * sensitivities come from them, so every variant must stay ε-DP: N_RELEASES reports of D and of
 * D' through dpm_mech_report_fedauc, binned into output cells (localP exactly, the sum or T in
 * bins of a quarter of its noise scale); on every cell where both neighbours expect at least
 * MIN_COUNT reports, the Clopper-Pearson lower bound of the probability ratio must not exceed
 * e^ε (total alpha 1e-6, Bonferroni over every bound), and in the corner cells, where the exact
 * ratio is e^ε, the upper bound must reach e^ε (the noise is no wider than ε needs).
 * fedauc_rr: a fresh device secret per report (the secret is the randomness), and two reports
 * from one secret together are still within e^ε.
 *
 * Negative controls, which the same check must catch:
 *   - a device that trusted the reply's M for GlobalLaplace without checking the ranks (ranks
 *     0, 2, 1998 with M = 3: the SDK refuses this reply, "rank out of range"): noise of scale
 *     2 (M - 1) / ε_s = 4 / ε_s against a shift of 1998;
 *   - fedauc_rr WITHOUT memoization: two evaluations of the same examples with fresh flips
 *     reveal two independent responses (up to e^2ε). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/report.h"
#include "stat_dlap.h"
#include "stat_gof.h"
#include "test_receipt.h"
#include "test_rng.h"

/* a quarter under make cross (DPM_STAT_DIVISOR): the same checks and controls pass there */
#define N_RELEASES stat_samples(1000000u, 250000u)
#define TOTAL_ALPHA 1e-6
#define MIN_COUNT 1000.0L
#define Q4(q) ((dpm_score_t)(q) << 27)

static const dpm_score_t SCORES[3] = {Q4(2), Q4(5), Q4(9)};
static const uint64_t IDS[3] = {11, 12, 13};
static const uint8_t LABELS_D[3] = {1, 0, 1};  /* target (index 2) positive */
static const uint8_t LABELS_D2[3] = {1, 0, 0}; /* ... negative */

typedef struct {
    const char *name;
    uint32_t total;
    uint32_t ranks[3]; /* in the app's order */
} reply_t;

static const reply_t SINGLE_OUT = {"single out", 1000, {0, 2, 1998}};
static const reply_t SHRINK = {"shrink", 3, {0, 2, 4}};

/* ---- the device under test ------------------------------------------------------------------ */

typedef struct {
    dpm_mech_t m;
    uint32_t q[3], perm[3];
    uint64_t work[3];
    dpm_fedauc_session_t s;
    dpm_fedauc_ranks_t rk;
} device_t;

static void device_setup(device_t *dv, dpm_mech_id_t mech, dpm_fedauc_variant_t v, uint32_t share,
                         const reply_t *rep, dpm_rand_t *r)
{
    memset(dv, 0, sizeof(*dv));
    dpm_campaign_t c;
    memset(&c, 0, sizeof(c));
    c.id = 90;
    c.mechanism = mech;
    c.eps = c.budget = DPM_EPS(1);
    c.fedauc_variant = (uint32_t)v;
    c.fedauc_p_share_q16 = share;
    c.fedauc_score_bits = 4;
    assert_int_equal(dpm_mech_init(&dv->m, &c, NULL), DPM_OK);
    dpm_fedauc_buffers_t b = {dv->q, dv->perm, dv->work, 3};
    assert_int_equal(dpm_fedauc_prepare(&dv->m, r, SCORES, 3, &b, &dv->s), DPM_OK);
    uint32_t up[3];
    for (uint32_t j = 0; j < 3; j++) {
        up[j] = rep->ranks[dv->perm[j]];
    }
    dpm_fedauc_header_t h;
    memset(&h, 0, sizeof(h));
    h.campaign_id = c.id;
    h.mechanism = (uint32_t)mech;
    h.params_hash = dv->m.params_hash;
    memcpy(h.token, dv->s.token, DPM_FEDAUC_TOKEN_BYTES);
    h.total = rep->total;
    h.n = 3;
    uint8_t buf[128];
    size_t len = 0;
    assert_int_equal(dpm_fedauc_reply_encode(&h, up, buf, sizeof(buf), &len), DPM_OK);
    const char *why = NULL;
    assert_int_equal(dpm_fedauc_accept(&dv->s, &dv->m, buf, len, IDS, &dv->rk, &why), DPM_OK);
}

static void fresh_memo(dpm_memo_t *memo, test_rng_t *keys)
{
    memset(memo, 0, sizeof(*memo));
    for (int i = 0; i < 16; i++) {
        memo->key[i] = (uint8_t)test_rng_next(keys);
    }
    memo->opened = DPM_MEMO_OPENED;
}

/* One report: (localP, the noised sum or T). */
static void release(const device_t *dv, const uint8_t *labels, dpm_rand_t *r,
                    const dpm_memo_t *memo, int64_t *x, int64_t *y, dpm_fedauc_report_t *body)
{
    dpm_report_t rep;
    assert_int_equal(dpm_mech_report_fedauc(&dv->m, r, TEST_RECEIPT(&dv->m, 0), &dv->s, &dv->rk,
                                            labels, IDS, memo, &rep),
                     DPM_OK);
    const dpm_fedauc_report_t *b = &rep.body.fedauc;
    int uses_t = dv->m.params.fedauc.variant == DPM_FEDAUC_ORTHOGONAL ||
                 dv->m.params.fedauc.variant == DPM_FEDAUC_ADAPTIVE;
    *x = b->local_p;
    *y = uses_t ? b->t : b->local_sum2;
    if (body != NULL) {
        *body = *b;
    }
}

/* ---- the check ------------------------------------------------------------------------------ */

/* Counts per output cell for D and D'; cells are sets of outputs, so each must satisfy the DP
 * inequality. A cell is checked when either neighbour counts at least MIN_COUNT in it. */
#define MAX_CELLS 4096
typedef struct {
    uint64_t n1[MAX_CELLS], n2[MAX_CELLS];
    int corner[MAX_CELLS]; /* +1: Pr[D] / Pr[D'] = e^ε exactly; -1: the other way; 0 */
    int ncells;
} cells_t;

typedef struct {
    int checked, violations, corners, too_wide;
    double max_lower;
} verdict_t;

static verdict_t judge(const cells_t *c, double e_eps)
{
    verdict_t v;
    memset(&v, 0, sizeof(v));
    for (int i = 0; i < c->ncells; i++) {
        v.checked += (long double)(c->n1[i] > c->n2[i] ? c->n1[i] : c->n2[i]) >= MIN_COUNT;
    }
    assert_true(v.checked >= 4);
    double alpha = TOTAL_ALPHA / (4.0 * v.checked);
    for (int i = 0; i < c->ncells; i++) {
        uint64_t k1 = c->n1[i], k2 = c->n2[i];
        if ((long double)(k1 > k2 ? k1 : k2) < MIN_COUNT) {
            continue;
        }
        double l1 = stat_binom_lower(k1, N_RELEASES, alpha),
               u1 = stat_binom_upper(k1, N_RELEASES, alpha);
        double l2 = stat_binom_lower(k2, N_RELEASES, alpha),
               u2 = stat_binom_upper(k2, N_RELEASES, alpha);
        double lower = fmax(l1 / u2, l2 / u1);
        v.max_lower = fmax(v.max_lower, lower);
        v.violations += lower > e_eps;
        if (c->corner[i] != 0 && k1 >= MIN_COUNT && k2 >= MIN_COUNT) {
            v.corners++;
            double upper = c->corner[i] > 0 ? u1 / l2 : u2 / l1;
            v.too_wide += upper < e_eps;
        }
    }
    return v;
}

/* The Laplace variants: localP exactly, the second output in bins of a quarter of its noise
 * scale around the two neighbours' values. */
typedef struct {
    int64_t a0, b0, width;
    int64_t x_d, x_d2, y_d, y_d2; /* the neighbours' exact statistics */
} grid_t;

#define NA 40
#define NB 96

static int cell_of(const grid_t *g, int64_t x, int64_t y)
{
    int64_t a = x - g->a0, b = y - g->b0;
    if (a < 0 || a >= NA || b < 0) {
        return -1;
    }
    b /= g->width;
    return b < NB ? (int)(a * NB + b) : -1;
}

static void mark_corners(const grid_t *g, cells_t *c)
{
    c->ncells = NA * NB;
    int64_t y_hi = g->y_d > g->y_d2 ? g->y_d : g->y_d2, y_lo = g->y_d > g->y_d2 ? g->y_d2 : g->y_d;
    int d_high = g->y_d > g->y_d2; /* D has the larger second statistic */
    for (int a = 0; a < NA; a++) {
        for (int b = 0; b < NB; b++) {
            int64_t x = g->a0 + a, lo = g->b0 + b * g->width, hi = lo + g->width - 1;
            int x_d = x >= g->x_d ? 1 : x <= g->x_d2 ? -1 : 0; /* x_d = x_d2 + 1 */
            int y_d = lo >= y_hi ? (d_high ? 1 : -1) : hi <= y_lo ? (d_high ? -1 : 1) : 0;
            c->corner[a * NB + b] = x_d != 0 && x_d == y_d ? x_d : 0;
        }
    }
}

/* The exact statistics of a labelling under the reply's ranks (app order), by definition. */
static void statistics(const device_t *dv, const reply_t *rep, const uint8_t *labels, int64_t *x,
                       int64_t *y)
{
    int64_t s = (int64_t)rep->ranks[0] + rep->ranks[1] + rep->ranks[2];
    int64_t p = 0, sum = 0, t = 0;
    for (int i = 0; i < 3; i++) {
        p += labels[i];
        sum += labels[i] * (int64_t)rep->ranks[i];
        t += labels[i] * (3 * (int64_t)rep->ranks[i] - s);
    }
    int uses_t = dv->m.params.fedauc.variant == DPM_FEDAUC_ORTHOGONAL ||
                 dv->m.params.fedauc.variant == DPM_FEDAUC_ADAPTIVE;
    *x = p;
    *y = uses_t ? t : sum;
}

static verdict_t run_laplace(dpm_fedauc_variant_t v, const reply_t *rep, uint64_t seed)
{
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, seed), DPM_OK);
    static device_t dv;
    device_setup(&dv, DPM_MECH_ID_FEDAUC_LAP, v, v == DPM_FEDAUC_ADAPTIVE ? 0 : 32768, rep, &r);
    grid_t g;
    statistics(&dv, rep, LABELS_D, &g.x_d, &g.y_d);
    statistics(&dv, rep, LABELS_D2, &g.x_d2, &g.y_d2);
    int64_t x, y;
    dpm_fedauc_report_t body;
    release(&dv, LABELS_D, &r, NULL, &x, &y, &body);
    double t_s = (double)body.sensitivity * 65536.0 / (double)(DPM_EPS_ONE - body.eps_p);
    g.width = (int64_t)ceil(t_s / 4.0);
    g.a0 = g.x_d - NA / 2;
    g.b0 = (g.y_d + g.y_d2) / 2 - (NB / 2) * g.width;
    static cells_t c;
    memset(&c, 0, sizeof(c));
    mark_corners(&g, &c);
    for (uint32_t i = 0; i < N_RELEASES; i++) {
        release(&dv, LABELS_D, &r, NULL, &x, &y, NULL);
        int k = cell_of(&g, x, y);
        c.n1[k < 0 ? 0 : k] += k >= 0;
        release(&dv, LABELS_D2, &r, NULL, &x, &y, NULL);
        k = cell_of(&g, x, y);
        c.n2[k < 0 ? 0 : k] += k >= 0;
    }
    verdict_t vd = judge(&c, exp(1.0));
    print_message("# %-10s %-10s sensitivity %-5llu eps_p %.4f: %d cells (%d corners), max ratio "
                  "lower bound %.4f (e^eps %.4f), violations %d, too wide %d\n",
                  v == DPM_FEDAUC_LOCAL        ? "local"
                  : v == DPM_FEDAUC_GLOBAL     ? "global"
                  : v == DPM_FEDAUC_ORTHOGONAL ? "orthogonal"
                                               : "adaptive",
                  rep->name, (unsigned long long)body.sensitivity, body.eps_p / 65536.0, vd.checked,
                  vd.corners, vd.max_lower, exp(1.0), vd.violations, vd.too_wide);
    return vd;
}

static void test_laplace_variants_under_malicious_replies(void **state)
{
    (void)state;
    const dpm_fedauc_variant_t vs[4] = {DPM_FEDAUC_LOCAL, DPM_FEDAUC_GLOBAL, DPM_FEDAUC_ORTHOGONAL,
                                        DPM_FEDAUC_ADAPTIVE};
    const reply_t *reps[2] = {&SINGLE_OUT, &SHRINK};
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 2; j++) {
            verdict_t vd = run_laplace(vs[i], reps[j], 300 + 10 * (uint64_t)i + (uint64_t)j);
            assert_int_equal(vd.violations, 0);
            assert_true(vd.corners > 0);
            assert_int_equal(vd.too_wide, 0);
        }
    }
}

/* Negative control: GlobalLaplace on a device that believed the reply's M (3) without checking
 * the ranks (0, 2, 1998): noise of scale 4 / ε_s against a shift of 1998. The SDK refuses this
 * reply; the same check catches the naive device. */
static void test_check_catches_an_unvalidated_reply(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, 400), DPM_OK);
    static device_t dv;
    device_setup(&dv, DPM_MECH_ID_FEDAUC_LAP, DPM_FEDAUC_GLOBAL, 32768, &SHRINK, &r);
    /* the SDK's answer to the forged reply */
    uint32_t up[3];
    for (uint32_t j = 0; j < 3; j++) {
        up[j] = SINGLE_OUT.ranks[dv.perm[j]];
    }
    dpm_fedauc_header_t h;
    memset(&h, 0, sizeof(h));
    h.campaign_id = dv.m.campaign.id;
    h.mechanism = DPM_MECH_ID_FEDAUC_LAP;
    h.params_hash = dv.m.params_hash;
    memcpy(h.token, dv.s.token, DPM_FEDAUC_TOKEN_BYTES);
    h.total = 3;
    h.n = 3;
    uint8_t buf[128];
    size_t len = 0;
    assert_int_equal(dpm_fedauc_reply_encode(&h, up, buf, sizeof(buf), &len), DPM_OK);
    dpm_fedauc_ranks_t rk;
    const char *why = NULL;
    assert_int_equal(dpm_fedauc_accept(&dv.s, &dv.m, buf, len, NULL, &rk, &why), DPM_ERR_PROTOCOL);
    assert_string_equal(why, "rank out of range");
    /* the naive device: localP as the SDK does, the sum 1998 y_target + noise of scale 4 / ε_s */
    grid_t g = {0};
    g.x_d = 2, g.x_d2 = 1, g.y_d = 1998, g.y_d2 = 0;
    g.width = 2;
    g.a0 = g.x_d - NA / 2;
    g.b0 = -(NB / 2) * g.width;
    static cells_t c;
    memset(&c, 0, sizeof(c));
    c.ncells = NA * NB;
    dpm_eps_t eps_p = DPM_EPS_ONE / 2, eps_s = DPM_EPS_ONE - eps_p;
    for (uint32_t i = 0; i < N_RELEASES; i++) {
        for (int nb = 0; nb < 2; nb++) {
            int64_t x = 0, y = 0;
            assert_int_equal(dpm_dlap_add(&r, 65536, eps_p, nb ? 1 : 2, &x), DPM_OK);
            assert_int_equal(dpm_dlap_add(&r, 4u * 65536u, eps_s, nb ? 0 : 1998, &y), DPM_OK);
            int k = cell_of(&g, x, y);
            if (k >= 0) {
                (nb ? c.n2 : c.n1)[k]++;
            }
        }
    }
    /* the window is centred between the two: D's mass lies beyond it, D' inside (and D's
     * cells would be checked the same way from the other side) */
    verdict_t vd = judge(&c, exp(1.0));
    print_message("# unvalidated GlobalLaplace (M = 3, rank 1998): %d cells, max ratio lower "
                  "bound %.3g, violations %d\n",
                  vd.checked, vd.max_lower, vd.violations);
    assert_true(vd.violations > 0);
}

/* ---- fedauc_rr
 * ------------------------------------------------------------------------------------ */

/* The flipped labels (y'_0, y'_1, y'_2) from (localP', localSum2'): the ranks of both replies
 * (0, R1, R2 with R2 > R1 > 0) make every flipped vector's sums distinct. */
static int rr_cell(const reply_t *rep, int64_t p, int64_t sum)
{
    int y2 = sum >= rep->ranks[2];
    int y1 = (sum - y2 * (int64_t)rep->ranks[2]) == rep->ranks[1];
    int y0 = (int)p - y1 - y2;
    assert_true(y0 == 0 || y0 == 1);
    return y0 | y1 << 1 | y2 << 2;
}

/* Single reports (8 cells) and pairs of reports of the same examples (64 cells): with the
 * memo (one secret for both), or without (a fresh secret for each, the negative control). */
static verdict_t run_rr(const reply_t *rep, int pairs, int memoized, uint64_t seed)
{
    test_rng_t t, keys;
    dpm_rng_t rng;
    dpm_rand_t r;
    assert_int_equal(test_rand_init(&r, &t, &rng, seed), DPM_OK);
    test_rng_seed(&keys, seed + 1);
    static device_t dv;
    device_setup(&dv, DPM_MECH_ID_FEDAUC_RR, DPM_FEDAUC_VARIANT_NONE, 0, rep, &r);
    static cells_t c;
    memset(&c, 0, sizeof(c));
    c.ncells = pairs ? 64 : 8;
    for (int i = 0; i < c.ncells; i++) {
        c.corner[i] = pairs ? 0 : (i & 4) ? 1 : -1; /* every single cell: ratio e^±ε exactly */
    }
    for (uint32_t i = 0; i < N_RELEASES; i++) {
        for (int nb = 0; nb < 2; nb++) {
            const uint8_t *labels = nb ? LABELS_D2 : LABELS_D;
            dpm_memo_t memo;
            fresh_memo(&memo, &keys);
            int64_t x, y;
            release(&dv, labels, &r, &memo, &x, &y, NULL);
            int cell = rr_cell(rep, x, y);
            if (pairs) {
                if (!memoized) {
                    fresh_memo(&memo, &keys);
                }
                release(&dv, labels, &r, &memo, &x, &y, NULL);
                cell = cell * 8 + rr_cell(rep, x, y);
            }
            (nb ? c.n2 : c.n1)[cell]++;
        }
    }
    double e_eps = exp((double)dv.m.eps_implemented / 65536.0);
    verdict_t vd = judge(&c, e_eps);
    print_message("# fedauc_rr %-10s %-26s: %d cells (%d corners), max ratio lower bound %.4f "
                  "(e^eps %.4f, keep/other %.4f), violations %d, too wide %d\n",
                  rep->name,
                  !pairs     ? "one report"
                  : memoized ? "two reports, one secret"
                             : "two reports, fresh flips",
                  vd.checked, vd.corners, vd.max_lower, e_eps,
                  (double)dv.m.params.fedauc.rr.keep / dv.m.params.fedauc.rr.other, vd.violations,
                  vd.too_wide);
    return vd;
}

static void test_rr_under_malicious_replies(void **state)
{
    (void)state;
    const reply_t *reps[2] = {&SINGLE_OUT, &SHRINK};
    for (int j = 0; j < 2; j++) {
        verdict_t vd = run_rr(reps[j], 0, 1, 500 + (uint64_t)j);
        assert_int_equal(vd.violations, 0);
        assert_true(vd.corners == 8);
        assert_int_equal(vd.too_wide, 0);
        vd = run_rr(reps[j], 1, 1, 510 + (uint64_t)j);
        assert_int_equal(vd.violations, 0);
    }
}

/* Negative control: without memoization, two evaluations reveal two independent flips. */
static void test_check_catches_rr_without_memo(void **state)
{
    (void)state;
    verdict_t vd = run_rr(&SINGLE_OUT, 1, 0, 520);
    assert_true(vd.violations > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_laplace_variants_under_malicious_replies),
        cmocka_unit_test(test_check_catches_an_unvalidated_reply),
        cmocka_unit_test(test_rr_under_malicious_replies),
        cmocka_unit_test(test_check_catches_rr_without_memo),
    };
    return cmocka_run_group_tests_name("fedauc_privacy", tests, NULL, NULL);
}
