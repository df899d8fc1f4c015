/* SPDX-License-Identifier: Apache-2.0 */
/* The exact discrete Laplace distribution, in long double, as the reference for tests:
 * Pr[Z = z] = (1 - p) / (1 + p) p^|z| with p = exp(-1 / t). */
#ifndef STAT_DLAP_H
#define STAT_DLAP_H

#include <stdint.h>

long double stat_dlap_pmf(long double t, int64_t z);

/* Pr[a <= Z <= b] for a <= b (INT64_MIN / INT64_MAX stand for -inf / +inf). ctx points to the
 * scale t as a long double, so it can be passed to stat_hist_expect. Tails use expm1l, so
 * small cell masses far from 0 keep their relative precision. */
long double stat_dlap_mass(const void *t, int64_t a, int64_t b);

#endif
