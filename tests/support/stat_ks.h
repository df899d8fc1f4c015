/* SPDX-License-Identifier: Apache-2.0 */
/* Two-sample Kolmogorov-Smirnov test (tests only; double precision is fine here, never in sdk/).
 *
 * Typical use, comparing a statistic's R values from two samplers:
 *     double p = stat_ks_test(x, R, y, R);   (sorts x and y in place)
 *     assert p > 1e-6 (or the smallest p over several statistics above a Bonferroni level). */
#ifndef STAT_KS_H
#define STAT_KS_H

#include <stddef.h>

/* Kolmogorov's limiting survival function with Stephens' small-sample correction: the p-value
 * of the two-sample statistic d for sample sizes n and m. */
double stat_ks_pvalue(double d, size_t n, size_t m);

/* p-value of H0: x[0..n) and y[0..m) come from one distribution (sorts both in place; ties step
 * both empirical cdfs past the tied value). */
double stat_ks_test(double *x, size_t n, double *y, size_t m);

#endif /* STAT_KS_H */
