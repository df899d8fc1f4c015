/* SPDX-License-Identifier: Apache-2.0 */
/* Empirical privacy check over a discrete output space (tests only): two neighbouring inputs,
 * n releases each, counted per output cell; their exact pmfs say which cells are checkable and
 * where the true ratio reaches e^eps ("corners"). With Clopper-Pearson bounds at a total alpha
 * (Bonferroni over every bound used), a cell violates the claim when even the ratio's lower
 * bound exceeds e^eps; a corner is "too wide" (the mechanism spends less than claimed, so the
 * claim is not tight) when even the ratio's upper bound stays below e^eps. */
#ifndef STAT_RATIO_H
#define STAT_RATIO_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int cells;      /* cells with both expectations >= min_expected */
    int violations; /* ratio lower bound above e^eps */
    int corners;    /* cells whose exact ratio is e^eps_exact (one way or the other) */
    int too_wide;   /* corners whose ratio upper bound stays below e^eps */
    double max_lower, max_point;
} stat_ratio_check_t;

/* c1, c2: counts of n releases each over `cells` cells; p1, p2: the exact pmfs; e_eps: the
 * claimed bound; e_corner: the exact largest ratio (cells with p1 / p2 or p2 / p1 within 1e-9 of
 * it are corners); min_expected: the smallest expected count a checked cell needs. */
stat_ratio_check_t stat_ratio_check(const uint64_t *c1, const uint64_t *c2, const double *p1,
                                    const double *p2, size_t cells, uint64_t n, double e_eps,
                                    double e_corner, double min_expected, double total_alpha);

#endif
