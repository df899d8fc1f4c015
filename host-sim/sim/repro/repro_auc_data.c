/* SPDX-License-Identifier: Apache-2.0 */
/* Synthetic scored examples for the AUC reproductions (see repro_auc_data.h). */
#include "sim/repro/repro_auc_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/binormal.h"
#include "sim/pop/sim_rng.h"

#define TWO31 2147483648.0

static int alloc(auc_data_t *d, uint32_t npos, uint32_t nneg)
{
    memset(d, 0, sizeof(*d));
    d->n = npos + nneg;
    d->npos = npos;
    d->score = malloc((size_t)d->n * sizeof(*d->score));
    d->label = malloc((size_t)d->n);
    if (d->score == NULL || d->label == NULL) {
        auc_data_free(d);
        return -1;
    }
    for (uint32_t i = 0; i < d->n; i++) {
        d->label[i] = i < npos;
    }
    return 0;
}

static uint32_t q31(double s)
{
    double v = floor(s * TWO31);
    return v < 0.0 ? 0u : v >= TWO31 ? (uint32_t)(TWO31 - 1.0) : (uint32_t)v;
}

int auc_data_binormal(auc_data_t *d, uint32_t npos, uint32_t nneg, double auc, uint64_t seed)
{
    if (alloc(d, npos, nneg) != 0) {
        return -1;
    }
    sim_rng_t rng;
    sim_rng_init(&rng, seed);
    double mu = binormal_mu(auc);
    for (uint32_t i = 0; i < d->n; i++) {
        double x = (d->label[i] ? mu : 0.0) + sim_rng_normal(&rng);
        d->score[i] = q31(1.0 / (1.0 + exp(-x)));
    }
    return 0;
}

int auc_data_beta(auc_data_t *d, uint32_t npos, uint32_t nneg, double a1, double b1, double a0,
                  double b0, uint64_t seed)
{
    if (alloc(d, npos, nneg) != 0) {
        return -1;
    }
    sim_rng_t rng;
    sim_rng_init(&rng, seed);
    for (uint32_t i = 0; i < d->n; i++) {
        d->score[i] = q31(d->label[i] ? sim_rng_beta(&rng, a1, b1) : sim_rng_beta(&rng, a0, b0));
    }
    return 0;
}

void auc_data_free(auc_data_t *d)
{
    free(d->score);
    free(d->label);
    free(d->device);
    memset(d, 0, sizeof(*d));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Mann-Whitney from the sorted scores of each class: for each positive, the negatives below it
 * plus half those equal. */
double auc_data_exact(const auc_data_t *d)
{
    uint32_t np = d->npos, nn = d->n - d->npos;
    if (np == 0 || nn == 0) {
        return NAN;
    }
    uint32_t *p = malloc((size_t)np * sizeof(*p)), *q = malloc((size_t)nn * sizeof(*q));
    if (p == NULL || q == NULL) {
        free(p);
        free(q);
        return NAN;
    }
    memcpy(p, d->score, (size_t)np * sizeof(*p));
    memcpy(q, d->score + np, (size_t)nn * sizeof(*q));
    qsort(p, np, sizeof(*p), cmp_u32);
    qsort(q, nn, sizeof(*q), cmp_u32);
    double sum = 0.0;
    uint32_t lo = 0, hi = 0; /* q[0 .. lo) < p[i], q[0 .. hi) <= p[i] */
    for (uint32_t i = 0; i < np; i++) {
        while (lo < nn && q[lo] < p[i]) {
            lo++;
        }
        while (hi < nn && q[hi] <= p[i]) {
            hi++;
        }
        sum += lo + 0.5 * (hi - lo);
    }
    free(p);
    free(q);
    return sum / ((double)np * (double)nn);
}

double auc_data_binned(const auc_data_t *d, uint32_t bins)
{
    double *pos = calloc(bins, sizeof(double)), *neg = calloc(bins, sizeof(double));
    if (pos == NULL || neg == NULL) {
        free(pos);
        free(neg);
        return NAN;
    }
    for (uint32_t i = 0; i < d->n; i++) {
        uint64_t b = ((uint64_t)d->score[i] * bins) >> 31;
        (d->label[i] ? pos : neg)[b < bins ? b : bins - 1] += 1.0;
    }
    double below = 0.0, sum = 0.0, P = d->npos, N = d->n - d->npos;
    for (uint32_t b = 0; b < bins; b++) {
        sum += pos[b] * (below + 0.5 * neg[b]);
        below += neg[b];
    }
    free(pos);
    free(neg);
    return P > 0 && N > 0 ? sum / (P * N) : NAN;
}

int auc_data_assign(auc_data_t *d, uint32_t devices, uint32_t per, uint64_t seed)
{
    free(d->device);
    d->device = malloc((size_t)d->n * sizeof(*d->device));
    if (d->device == NULL || devices == 0 || (per > 0 && (uint64_t)devices * per != d->n)) {
        return -1;
    }
    sim_rng_t rng;
    sim_rng_init(&rng, seed);
    for (uint32_t i = 0; i < d->n; i++) {
        d->device[i] = per > 0 ? i / per : (uint32_t)(sim_rng_unit(&rng) * devices);
        d->device[i] = d->device[i] < devices ? d->device[i] : devices - 1;
    }
    if (per > 0) { /* a uniform permutation: devices get examples of both classes at random */
        for (uint32_t i = d->n - 1; i > 0; i--) {
            uint32_t j = (uint32_t)(sim_rng_unit(&rng) * (i + 1));
            j = j <= i ? j : i;
            uint32_t t = d->device[i];
            d->device[i] = d->device[j];
            d->device[j] = t;
        }
    }
    return 0;
}

int auc_device_rand(auc_device_rand_t *d, uint64_t key)
{
    sim_stream_init(&d->stream, key);
    d->port = sim_stream_port(&d->stream);
    return dpm_rand_init(&d->r, &d->port) == DPM_OK ? 0 : -1;
}
