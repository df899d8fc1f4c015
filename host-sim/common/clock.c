/* SPDX-License-Identifier: Apache-2.0 */
/* Deadlines for timed waits (see clock.h). */
#include "common/clock.h"

struct timespec host_deadline(clockid_t clk, uint32_t ms)
{
    struct timespec until;
    clock_gettime(clk, &until);
    until.tv_sec += ms / 1000u;
    until.tv_nsec += (long)(ms % 1000u) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    return until;
}
