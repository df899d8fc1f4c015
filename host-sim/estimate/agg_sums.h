/* SPDX-License-Identifier: Apache-2.0 */
/* The sums of reports every exact-integer aggregate of this directory keeps (roc.h, dpauc.h,
 * ustat.h): its start (zeroed, with its size) and the element-wise adds of a report's counts
 * and of another aggregate's sums. Host only. */
#ifndef DPM_HOST_ESTIMATE_AGG_SUMS_H
#define DPM_HOST_ESTIMATE_AGG_SUMS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dpm/status.h"

/* An aggregate of `bytes` bytes zeroed, then its size field (at offset `at`, a uint32_t) set to
 * n: DPM_ERR_PARAM (untouched) for a NULL aggregate or n outside [lo, hi]. */
static inline dpm_status_t est_agg_start(void *agg, size_t bytes, size_t at, uint32_t n,
                                         uint32_t lo, uint32_t hi)
{
    if (agg == NULL || n < lo || n > hi) {
        return DPM_ERR_PARAM;
    }
    memset(agg, 0, bytes);
    memcpy((char *)agg + at, &n, sizeof(n));
    return DPM_OK;
}

/* sum[i] += v[i], i < n: a report's counts */
static inline void est_add_counts(int64_t *sum, const int32_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        sum[i] += v[i];
    }
}

/* sum[i] += v[i], i < n: another aggregate's sums */
static inline void est_add_sums(int64_t *sum, const int64_t *v, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        sum[i] += v[i];
    }
}

#endif /* DPM_HOST_ESTIMATE_AGG_SUMS_H */
