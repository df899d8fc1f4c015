/* SPDX-License-Identifier: Apache-2.0 */
/* Work split over threads (see parallel.h). */
#include "sim/pop/parallel.h"

#include <pthread.h>

#define MAX_PARTS 64u

void sim_parallel(void *(*fn)(void *), void *parts, size_t size, unsigned n)
{
    pthread_t tid[MAX_PARTS];
    int started[MAX_PARTS] = {0};
    unsigned char *p = parts;
    n = n > MAX_PARTS ? MAX_PARTS : n;
    for (unsigned i = 1; i < n; i++) {
        started[i] = pthread_create(&tid[i], NULL, fn, p + i * size) == 0;
    }
    if (n > 0) {
        fn(p);
    }
    for (unsigned i = 1; i < n; i++) {
        if (started[i]) {
            pthread_join(tid[i], NULL);
        } else {
            fn(p + i * size);
        }
    }
}

unsigned sim_parallel_parts(unsigned threads, unsigned max, uint64_t items, uint64_t min_items)
{
    if (items < min_items) {
        return 1;
    }
    return threads < 1 ? 1 : (threads > max ? max : threads);
}

void sim_parallel_span(uint64_t total, unsigned n, unsigned i, uint64_t *lo, uint64_t *hi)
{
    *lo = total / n * i;
    *hi = i + 1 == n ? total : total / n * (i + 1);
}
