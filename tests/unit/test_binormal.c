/* SPDX-License-Identifier: Apache-2.0 */
/* host-sim/common/binormal.h, the one binormal score model of the simulator's populations, its
 * ROC model and the paper reproductions: AUC = Phi(mu / sqrt 2) at every AUC, the default
 * threshold where the two error rates are equal, a given threshold kept, NaN outside (0, 1),
 * and the ROC model's grid (SIM_ROC_GRID) holding exactly the mixture grid's points. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/binormal.h"
#include "common/prob.h"
#include "sim/pop/roc_sim.h"

static void test_auc_round_trip(void **state)
{
    (void)state;
    const double aucs[] = {1e-6, 0.05, 0.5, 0.6, 0.75, 0.9, 0.99, 1.0 - 1e-9};
    for (size_t i = 0; i < sizeof(aucs) / sizeof(aucs[0]); i++) {
        double mu = binormal_mu(aucs[i]);
        assert_true(fabs(prob_norm_cdf(mu / sqrt(2.0)) - aucs[i]) < 1e-12);
        binormal_t m;
        binormal_init(&m, aucs[i], NULL);
        assert_true(m.mu == mu && m.t == mu / 2.0);
        assert_true(fabs(m.fpr - (1.0 - m.tpr)) < 1e-15); /* equal error rates */
        double t = 0.25;
        binormal_init(&m, aucs[i], &t);
        assert_true(m.t == 0.25 && m.tpr == prob_norm_sf(0.25 - mu) && m.fpr == prob_norm_sf(0.25));
    }
    assert_true(fabs(binormal_mu(0.5)) < 1e-14);
    assert_true(isnan(binormal_mu(0.0)) && isnan(binormal_mu(1.0)) && isnan(binormal_mu(-1.0)));
}

static void test_mixture_grid(void **state)
{
    (void)state;
    int k = 0;
    for (double z = -BINORMAL_MIX_HALF_WIDTH; z <= BINORMAL_MIX_HALF_WIDTH + 1e-9;
         z += BINORMAL_MIX_STEP) {
        k++;
    }
    assert_int_equal(k, SIM_ROC_GRID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auc_round_trip),
        cmocka_unit_test(test_mixture_grid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
