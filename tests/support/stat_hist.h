/* SPDX-License-Identifier: Apache-2.0 */
/* Histograms of integer samples for goodness-of-fit tests (tests only).
 *
 * Cells: [INT64_MIN, lo), then `inner` cells of `width` integers starting at lo, then
 * [lo + inner * width, INT64_MAX]: every sample lands in a cell and the two tail cells hold the
 * rest of the mass, so expected counts always sum to the number of samples. */
#ifndef STAT_HIST_H
#define STAT_HIST_H

#include <stddef.h>
#include <stdint.h>

#include "stat_gof.h"

typedef struct {
    int64_t lo;
    uint64_t width;
    size_t inner;
    size_t ncells; /* inner + 2 */
    uint64_t *counts;
    double *expected;
    uint64_t total;
} stat_hist_t;

/* Pr[a <= Z <= b] of the reference distribution (a may be INT64_MIN, b INT64_MAX). */
typedef long double (*stat_mass_fn)(const void *ctx, int64_t a, int64_t b);

/* Allocates the cells (calloc); lo > INT64_MIN. Returns 0, or -1 on bad arguments or no
 * memory. */
int stat_hist_init(stat_hist_t *h, int64_t lo, uint64_t width, size_t inner);
void stat_hist_free(stat_hist_t *h);
void stat_hist_add(stat_hist_t *h, int64_t z);

/* expected[i] = total * mass(cell i). */
void stat_hist_expect(stat_hist_t *h, stat_mass_fn mass, const void *ctx);

/* Pools a copy of the cells to min_expected (stat_pool_tails) and tests it. */
stat_gof_t stat_hist_gof(const stat_hist_t *h, double min_expected, stat_gof_kind_t kind);

#endif
