/* SPDX-License-Identifier: Apache-2.0 */
/* Monotonic and wall clocks from clock_gettime. */
#include <time.h>

#include "dpm/port_posix.h"

static uint64_t posix_monotonic_ms(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int posix_wall_time_s(void *ctx, int64_t *out)
{
    (void)ctx;
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
        return -1;
    }
    *out = (int64_t)ts.tv_sec;
    return 0;
}

dpm_clock_t dpm_posix_clock(void)
{
    dpm_clock_t c = {posix_monotonic_ms, posix_wall_time_s, NULL};
    return c;
}
