/* SPDX-License-Identifier: Apache-2.0 */
/* Two-sample Kolmogorov-Smirnov test (see stat_ks.h). */
#include "stat_ks.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double stat_ks_pvalue(double d, size_t n, size_t m)
{
    double ne = (double)n * (double)m / (double)(n + m), sq = sqrt(ne);
    double lambda = (sq + 0.12 + 0.11 / sq) * d, s = 0.0;
    if (lambda < 0.2) {
        return 1.0;
    }
    for (int k = 1; k <= 100; k++) {
        double term = exp(-2.0 * k * k * lambda * lambda);
        s += (k % 2 ? 2.0 : -2.0) * term;
        if (term < 1e-18) {
            break;
        }
    }
    return fmin(fmax(s, 0.0), 1.0);
}

double stat_ks_test(double *x, size_t n, double *y, size_t m)
{
    qsort(x, n, sizeof(double), cmp_double);
    qsort(y, m, sizeof(double), cmp_double);
    size_t i = 0, j = 0;
    double d = 0.0;
    while (i < n && j < m) {
        double v = x[i] < y[j] ? x[i] : y[j];
        while (i < n && x[i] == v) { /* ties: step both cdfs past v */
            i++;
        }
        while (j < m && y[j] == v) {
            j++;
        }
        d = fmax(d, fabs((double)i / n - (double)j / m));
    }
    return stat_ks_pvalue(d, n, m);
}
