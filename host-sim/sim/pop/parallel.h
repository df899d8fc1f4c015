/* SPDX-License-Identifier: Apache-2.0 */
/* Work split over threads: the truth of a population (roc_sim, kendall_sim) and the farm's runs
 * and devices share one way to run parts and to cut a range into them. */
#ifndef DPM_SIM_PARALLEL_H
#define DPM_SIM_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

/* fn on each of the n parts of the array parts (element i at parts + i * size): part 0 on the
 * calling thread, the others on threads of their own; a part whose thread cannot start runs on
 * the calling thread after part 0. Returns when every part is done. n <= 64. */
void sim_parallel(void *(*fn)(void *), void *parts, size_t size, unsigned n);

/* How many parts: threads within 1..max, 1 when there are fewer than min_items items. */
unsigned sim_parallel_parts(unsigned threads, unsigned max, uint64_t items, uint64_t min_items);

/* Part i of n of [0, total): [*lo, *hi), the last part taking the remainder. */
void sim_parallel_span(uint64_t total, unsigned n, unsigned i, uint64_t *lo, uint64_t *hi);

#endif /* DPM_SIM_PARALLEL_H */
