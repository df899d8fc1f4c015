/* SPDX-License-Identifier: Apache-2.0 */
/* A progress bar on stderr for long simulations: shown only when stderr is a terminal (the
 * caller decides), redrawn at most 5 times a second, safe to update from worker threads. */
#ifndef DPM_SIM_PROGRESS_H
#define DPM_SIM_PROGRESS_H

#include <pthread.h>
#include <stdint.h>

typedef struct {
    pthread_mutex_t lock;
    int enabled;
    uint64_t done, total;
    double start, last;
    const char *unit;
} sim_progress_t;

/* total work units (e.g. device reports); enabled 0 makes every call a cheap no-op. */
void sim_progress_init(sim_progress_t *p, uint64_t total, const char *unit, int enabled);
void sim_progress_add(sim_progress_t *p, uint64_t n);
/* Clear the bar line and release the lock. */
void sim_progress_done(sim_progress_t *p);

/* Monotonic seconds. */
double sim_now(void);

#endif /* DPM_SIM_PROGRESS_H */
