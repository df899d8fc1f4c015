/* SPDX-License-Identifier: Apache-2.0 */
#include "stat_ratio.h"

#include <math.h>
#include <string.h>

#include "stat_gof.h"

stat_ratio_check_t stat_ratio_check(const uint64_t *c1, const uint64_t *c2, const double *p1,
                                    const double *p2, size_t cells, uint64_t n, double e_eps,
                                    double e_corner, double min_expected, double total_alpha)
{
    stat_ratio_check_t rc;
    memset(&rc, 0, sizeof(rc));
    for (size_t i = 0; i < cells; i++) {
        rc.cells += p1[i] * (double)n >= min_expected && p2[i] * (double)n >= min_expected;
    }
    if (rc.cells == 0) {
        return rc;
    }
    double alpha = total_alpha / (4.0 * rc.cells);
    for (size_t i = 0; i < cells; i++) {
        if (!(p1[i] * (double)n >= min_expected && p2[i] * (double)n >= min_expected)) {
            continue;
        }
        double l1 = stat_binom_lower(c1[i], n, alpha), u1 = stat_binom_upper(c1[i], n, alpha);
        double l2 = stat_binom_lower(c2[i], n, alpha), u2 = stat_binom_upper(c2[i], n, alpha);
        double lower = fmax(l1 / u2, l2 / u1);
        double point = fmax((double)c1[i] / (double)c2[i], (double)c2[i] / (double)c1[i]);
        rc.max_lower = fmax(rc.max_lower, lower);
        rc.max_point = fmax(rc.max_point, point);
        rc.violations += lower > e_eps;
        int corner1 = fabs(p1[i] / p2[i] - e_corner) <= 1e-9 * e_corner;
        int corner2 = fabs(p2[i] / p1[i] - e_corner) <= 1e-9 * e_corner;
        rc.corners += corner1 + corner2;
        rc.too_wide += (corner1 && u1 / l2 < e_eps) || (corner2 && u2 / l1 < e_eps);
    }
    return rc;
}
