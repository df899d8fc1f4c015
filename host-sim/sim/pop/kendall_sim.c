/* SPDX-License-Identifier: Apache-2.0 */
/* Kendall's tau in the simulator: the devices' pairs and the population's tau (kendall_sim.h). */
#include "sim/pop/kendall_sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/prob.h"
#include "dpm/expert/ustat.h"
#include "common/stream.h"
#include "sim/pop/parallel.h"

#define PAIRS_TAG UINT64_C(0x4B454E44414C4C54) /* "KENDALLT": keeps the pair keys apart */
#define TWO31 2147483648.0
#define MAX_THREADS 16u
#define MAX_K 16u /* k^2 <= DPM_MAX_GRR_K */

void sim_pairs_model_init(sim_pairs_model_t *m, const sim_scenario_t *sc, const sim_pop_t *pop)
{
    memset(m, 0, sizeof(*m));
    m->base_key = sim_stream_key(sc->population_seed ^ PAIRS_TAG, 0, pop->devices);
    for (uint32_t g = 0; g < sc->ngroups; g++) {
        double r = sc->group[g].pairs.set ? sc->group[g].pairs.rho : 0.0;
        m->rho[g] = r;
        m->rest[g] = sqrt(1.0 - r * r);
    }
}

/* Phi(z) in Q1.31, below 2^31 (Phi rounds to 1 beyond z ~ 8.3). */
static uint32_t score_q31(double z)
{
    double s = floor(prob_norm_cdf(z) * TWO31);
    return s >= TWO31 ? (uint32_t)(TWO31 - 1.0) : (uint32_t)s;
}

void sim_pairs_device(const sim_pairs_model_t *m, const sim_block_t *b, uint64_t device,
                      uint32_t *x, uint32_t *y)
{
    sim_stream_t s;
    sim_stream_init(&s, sim_stream_key(m->base_key, 0, device));
    double z1 = sim_stream_normal(&s);
    double z2 = sim_stream_normal(&s);
    *x = score_q31(z1);
    *y = score_q31(m->rho[b->group] * z1 + m->rest[b->group] * z2);
}

typedef struct {
    const sim_pairs_model_t *m;
    const sim_pop_t *pop;
    const int *include;
    uint32_t k;
    sim_progress_t *progress;
    uint64_t lo, hi; /* devices [lo, hi) */
    uint64_t *xy;    /* this part's first pair, or NULL */
    uint64_t hist[MAX_K * MAX_K], devices;
} realize_part_t;

static void *realize_part(void *arg)
{
    realize_part_t *p = arg;
    size_t bi = 0;
    const sim_block_t *b = sim_pop_find(p->pop, p->lo, &bi);
    for (uint64_t i = p->lo; i < p->hi && b != NULL;) {
        uint64_t end = p->pop->first[bi + 1] < p->hi ? p->pop->first[bi + 1] : p->hi;
        for (; p->include[b->group] && i < end; i++) {
            if ((i & 0xFFFFu) == 0xFFFFu) {
                sim_progress_add(p->progress, 0x10000u);
            }
            uint32_t x, y, bx = 0, by = 0;
            sim_pairs_device(p->m, b, i, &x, &y);
            (void)dpm_ustat_quantize(x, p->k, &bx); /* the SDK's own bins */
            (void)dpm_ustat_quantize(y, p->k, &by);
            p->hist[bx * p->k + by]++;
            if (p->xy != NULL) {
                p->xy[p->devices] = (uint64_t)x << 32 | y;
            }
            p->devices++;
        }
        i = end;
        b = bi + 1 < p->pop->nblocks ? &p->pop->block[++bi] : NULL;
    }
    return NULL;
}

/* Included devices below `device`. */
static uint64_t included_below(const sim_pop_t *pop, const int *include, uint64_t device)
{
    uint64_t n = 0;
    for (size_t i = 0; i < pop->nblocks && pop->first[i] < device; i++) {
        uint64_t end = pop->first[i + 1] < device ? pop->first[i + 1] : device;
        n += include[pop->block[i].group] ? end - pop->first[i] : 0;
    }
    return n;
}

void sim_pairs_realize(const sim_pairs_model_t *m, const sim_pop_t *pop, const int *include,
                       uint32_t k, unsigned threads, sim_progress_t *progress, uint64_t *hist,
                       uint64_t *xy, uint64_t *devices)
{
    realize_part_t *part = calloc(MAX_THREADS, sizeof(*part));
    realize_part_t one;
    unsigned n = part != NULL ? sim_parallel_parts(threads, MAX_THREADS, pop->devices, 65536) : 1;
    realize_part_t *parts = part != NULL ? part : &one;
    k = k <= MAX_K ? k : MAX_K;
    memset(parts, 0, n * sizeof(*parts));
    for (unsigned i = 0; i < n; i++) {
        parts[i].m = m;
        parts[i].pop = pop;
        parts[i].include = include;
        parts[i].k = k;
        parts[i].progress = progress;
        sim_parallel_span(pop->devices, n, i, &parts[i].lo, &parts[i].hi);
        parts[i].xy = xy != NULL ? xy + included_below(pop, include, parts[i].lo) : NULL;
    }
    sim_parallel(realize_part, parts, sizeof(*parts), n);
    memset(hist, 0, (size_t)k * k * sizeof(uint64_t));
    *devices = 0;
    for (unsigned i = 0; i < n; i++) {
        for (uint32_t v = 0; v < k * k; v++) {
            hist[v] += parts[i].hist[v];
        }
        *devices += parts[i].devices;
    }
    free(part);
}

double sim_pairs_model_tau(const sim_pairs_model_t *m, const sim_pop_t *pop, const int *include)
{
    double n = 0.0, t = 0.0;
    for (uint32_t g = 0; g < pop->ngroups; g++) {
        n += include[g] ? (double)pop->group_size[g] : 0.0;
    }
    if (!(n > 0.0)) {
        return NAN;
    }
    for (uint32_t g = 0; g < pop->ngroups; g++) {
        for (uint32_t h = 0; h < pop->ngroups; h++) {
            if (include[g] && include[h]) {
                double w = (double)pop->group_size[g] * (double)pop->group_size[h] / (n * n);
                t += w * (2.0 / M_PI) * asin((m->rho[g] + m->rho[h]) / 2.0);
            }
        }
    }
    return t;
}

/* LSD radix sort of n keys, a byte a pass (8 passes: the result lands back in a). */
static void radix_sort(uint64_t *a, uint64_t *tmp, size_t n)
{
    size_t count[256];
    uint64_t *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        memset(count, 0, sizeof(count));
        for (size_t i = 0; i < n; i++) {
            count[(src[i] >> shift) & 0xFFu]++;
        }
        size_t at = 0;
        for (size_t d = 0; d < 256; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) {
            dst[count[(src[i] >> shift) & 0xFFu]++] = src[i];
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
}

/* Pairs i < j with y[i] > y[j], sorting y (bottom-up merge sort through tmp). */
static uint64_t inversions(uint32_t *y, uint32_t *tmp, size_t n)
{
    uint64_t inv = 0;
    uint32_t *src = y, *dst = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, o = lo;
            while (i < mid && j < hi) {
                if (src[j] < src[i]) {
                    inv += mid - i; /* src[j] is below every element left in the first run */
                    dst[o++] = src[j++];
                } else {
                    dst[o++] = src[i++];
                }
            }
            while (i < mid) {
                dst[o++] = src[i++];
            }
            while (j < hi) {
                dst[o++] = src[j++];
            }
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != y) {
        memcpy(y, src, n * sizeof(*y));
    }
    return inv;
}

/* Pairs within runs of equal keys of a sorted array: sum of t (t - 1) / 2. */
static uint64_t tied_pairs64(const uint64_t *a, size_t n, uint64_t mask)
{
    uint64_t tied = 0, run = 1;
    for (size_t i = 1; i <= n; i++) {
        if (i < n && (a[i] & mask) == (a[i - 1] & mask)) {
            run++;
        } else {
            tied += run * (run - 1) / 2;
            run = 1;
        }
    }
    return tied;
}

static uint64_t tied_pairs32(const uint32_t *a, size_t n)
{
    uint64_t tied = 0, run = 1;
    for (size_t i = 1; i <= n; i++) {
        if (i < n && a[i] == a[i - 1]) {
            run++;
        } else {
            tied += run * (run - 1) / 2;
            run = 1;
        }
    }
    return tied;
}

/* Knight (1966): with the pairs sorted by (x, y), a discordant pair is exactly an inversion of y
 * (ties in x are ordered by y, so they are no inversions), and
 * C - D = n0 - (tied in x) - (tied in y) + (tied in both) - 2 D. */
double sim_pairs_tau_a(uint64_t *xy, size_t n, uint64_t *scratch)
{
    if (n < 2) {
        return NAN;
    }
    radix_sort(xy, scratch, n);
    uint64_t n0 = (uint64_t)n * (n - 1) / 2;
    uint64_t tx = tied_pairs64(xy, n, UINT64_C(0xFFFFFFFF00000000));
    uint64_t txy = tied_pairs64(xy, n, UINT64_MAX);
    uint32_t *y = (uint32_t *)scratch, *tmp = y + n;
    for (size_t i = 0; i < n; i++) {
        y[i] = (uint32_t)xy[i];
    }
    uint64_t d = inversions(y, tmp, n);
    uint64_t ty = tied_pairs32(y, n);
    double cd = (double)(n0 + txy - tx - ty) - 2.0 * (double)d; /* untied pairs - 2 D */
    return cd / (double)n0;
}
