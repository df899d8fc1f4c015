/* SPDX-License-Identifier: Apache-2.0 */
/* Progress bar (see progress.h). */
#include "sim/progress.h"

#include <stdio.h>
#include <time.h>

#define BAR_WIDTH 30
#define REDRAW_S 0.2

double sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sim_progress_init(sim_progress_t *p, uint64_t total, const char *unit, int enabled)
{
    pthread_mutex_init(&p->lock, NULL);
    p->enabled = enabled;
    p->done = 0;
    p->total = total;
    p->start = p->last = sim_now();
    p->unit = unit;
}

static void draw(const sim_progress_t *p, double now)
{
    double frac = p->total ? (double)p->done / (double)p->total : 1.0;
    double rate = now > p->start ? (double)p->done / (now - p->start) : 0.0;
    double eta = rate > 0.0 ? (double)(p->total - p->done) / rate : 0.0;
    char bar[BAR_WIDTH + 1];
    int fill = (int)(frac * BAR_WIDTH);
    for (int i = 0; i < BAR_WIDTH; i++) {
        bar[i] = i < fill ? '#' : '.';
    }
    bar[BAR_WIDTH] = '\0';
    fprintf(stderr, "\r[%s] %5.1f%%  %.3g %s/s  ETA %.0f s   ", bar, 100.0 * frac, rate, p->unit,
            eta);
    fflush(stderr);
}

void sim_progress_add(sim_progress_t *p, uint64_t n)
{
    if (p == NULL || !p->enabled) {
        return;
    }
    pthread_mutex_lock(&p->lock);
    p->done += n;
    double now = sim_now();
    if (now - p->last >= REDRAW_S) {
        p->last = now;
        draw(p, now);
    }
    pthread_mutex_unlock(&p->lock);
}

void sim_progress_done(sim_progress_t *p)
{
    if (p->enabled) {
        fprintf(stderr, "\r%*s\r", BAR_WIDTH + 48, "");
        fflush(stderr);
    }
    pthread_mutex_destroy(&p->lock);
}
