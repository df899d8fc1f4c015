/* SPDX-License-Identifier: Apache-2.0 */
#include "stat_hist.h"

#include <stdlib.h>
#include <string.h>

int stat_hist_init(stat_hist_t *h, int64_t lo, uint64_t width, size_t inner)
{
    memset(h, 0, sizeof(*h));
    if (width == 0 || inner == 0) {
        return -1;
    }
    h->lo = lo;
    h->width = width;
    h->inner = inner;
    h->ncells = inner + 2;
    h->counts = calloc(h->ncells, sizeof(*h->counts));
    h->expected = calloc(h->ncells, sizeof(*h->expected));
    if (h->counts == NULL || h->expected == NULL) {
        stat_hist_free(h);
        return -1;
    }
    return 0;
}

void stat_hist_free(stat_hist_t *h)
{
    free(h->counts);
    free(h->expected);
    h->counts = NULL;
    h->expected = NULL;
}

void stat_hist_add(stat_hist_t *h, int64_t z)
{
    size_t cell;
    if (z < h->lo) {
        cell = 0;
    } else {
        uint64_t k = ((uint64_t)z - (uint64_t)h->lo) / h->width;
        cell = k < h->inner ? 1 + (size_t)k : h->ncells - 1;
    }
    h->counts[cell]++;
    h->total++;
}

void stat_hist_expect(stat_hist_t *h, stat_mass_fn mass, const void *ctx)
{
    int64_t edge = h->lo; /* first integer of the current inner cell */
    h->expected[0] = (double)((long double)h->total * mass(ctx, INT64_MIN, h->lo - 1));
    for (size_t i = 1; i <= h->inner; i++) {
        int64_t next = edge + (int64_t)h->width;
        h->expected[i] = (double)((long double)h->total * mass(ctx, edge, next - 1));
        edge = next;
    }
    h->expected[h->ncells - 1] = (double)((long double)h->total * mass(ctx, edge, INT64_MAX));
}

stat_gof_t stat_hist_gof(const stat_hist_t *h, double min_expected, stat_gof_kind_t kind)
{
    uint64_t *o = malloc(h->ncells * sizeof(*o));
    double *e = malloc(h->ncells * sizeof(*e));
    stat_gof_t g;
    memset(&g, 0, sizeof(g));
    g.p_value = -1.0; /* out of memory: no test */
    if (o != NULL && e != NULL) {
        memcpy(o, h->counts, h->ncells * sizeof(*o));
        memcpy(e, h->expected, h->ncells * sizeof(*e));
        size_t n = stat_pool_tails(o, e, h->ncells, min_expected);
        g = stat_gof_test(o, e, n, kind);
    }
    free(o);
    free(e);
    return g;
}
