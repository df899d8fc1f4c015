/* SPDX-License-Identifier: Apache-2.0 */
#include "stat_dlap.h"

#include <math.h>

long double stat_dlap_pmf(long double t, int64_t z)
{
    long double p = expl(-1.0L / t);
    long double az = z < 0 ? -(long double)z : (long double)z;
    return (1.0L - p) / (1.0L + p) * expl(-az / t);
}

/* Pr[Z >= a], a >= 1 */
static long double upper_tail(long double t, long double a)
{
    return expl(-a / t) / (1.0L + expl(-1.0L / t));
}

/* Pr[a <= Z <= b] for 1 <= a <= b: p^a (1 - p^(b - a + 1)) / (1 + p) */
static long double positive_mass(long double t, long double a, long double b)
{
    return -expm1l(-(b - a + 1.0L) / t) * upper_tail(t, a);
}

long double stat_dlap_mass(const void *ctx, int64_t a, int64_t b)
{
    long double t = *(const long double *)ctx;
    long double la = a == INT64_MIN ? -INFINITY : (long double)a;
    long double lb = b == INT64_MAX ? INFINITY : (long double)b;
    if (a >= 1) {
        return isinf(lb) ? upper_tail(t, la) : positive_mass(t, la, lb);
    }
    if (b <= -1) {
        return isinf(la) ? upper_tail(t, -lb) : positive_mass(t, -lb, -la);
    }
    long double below = isinf(la) ? 0.0L : upper_tail(t, 1.0L - la); /* Pr[Z <= a - 1] */
    long double above = isinf(lb) ? 0.0L : upper_tail(t, lb + 1.0L); /* Pr[Z >= b + 1] */
    return 1.0L - below - above;
}
