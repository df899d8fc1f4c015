/* SPDX-License-Identifier: Apache-2.0 */
/* The progress line on stderr for long simulations: "[3/12] tpr_mr eps=1 (SDK split)  45%
 * 2.91 M devices/s  ETA 0:12". The caller enables it only when stderr is a terminal and the user
 * did not ask for --quiet (dpm-sim: isatty(2)); disabled, every call is a cheap no-op. Redrawn at
 * most 5 times a second, safe to update from worker threads; the line is cleared when done, so
 * the console keeps only the results. */
#ifndef DPM_SIM_PROGRESS_H
#define DPM_SIM_PROGRESS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    pthread_mutex_t lock;
    int enabled;
    uint64_t done, total;
    double start, last;
    const char *unit;
    char prefix[112];
} sim_progress_t;

/* total work units (device reports, runs) of the step named by prefix. */
void sim_progress_init(sim_progress_t *p, int enabled, uint64_t total, const char *unit,
                       const char *prefix);
void sim_progress_add(sim_progress_t *p, uint64_t n);
/* Clear the line and release the lock. */
void sim_progress_done(sim_progress_t *p);

/* A step without a count ("[3/12] roc eps=1: preparing the truth"), shown until the next line. */
void sim_progress_phase(int enabled, size_t index, size_t total, const char *label,
                        const char *what);

/* Monotonic seconds. */
double sim_now(void);

#endif /* DPM_SIM_PROGRESS_H */
