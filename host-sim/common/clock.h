/* SPDX-License-Identifier: Apache-2.0 */
/* Deadlines for timed waits: what the collector's server and its DAP service wait with. */
#ifndef DPM_HOST_CLOCK_H
#define DPM_HOST_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The time ms milliseconds from now on clock clk (nanoseconds below one second): an absolute
 * deadline for pthread_cond_timedwait on a condition variable of that clock. */
struct timespec host_deadline(clockid_t clk, uint32_t ms);

#endif
