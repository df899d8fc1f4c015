/* SPDX-License-Identifier: Apache-2.0 */
/* The progress line (see progress.h). */
#include "sim/pop/progress.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define REDRAW_S 0.2
#define WIDTH 118 /* characters cleared: the longest line we draw */

double sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void sim_progress_init(sim_progress_t *p, int enabled, uint64_t total, const char *unit,
                       const char *prefix)
{
    pthread_mutex_init(&p->lock, NULL);
    p->enabled = enabled;
    p->done = 0;
    p->total = total;
    p->start = p->last = sim_now();
    p->unit = unit;
    snprintf(p->prefix, sizeof(p->prefix), "%s", prefix != NULL ? prefix : "");
}

/* 2.91 M, 812 k, 37 */
static void fmt_rate(char *buf, size_t cap, double r)
{
    if (r >= 1e6) {
        snprintf(buf, cap, "%.2f M", r / 1e6);
    } else if (r >= 1e3) {
        snprintf(buf, cap, "%.1f k", r / 1e3);
    } else {
        snprintf(buf, cap, "%.0f ", r);
    }
}

static void draw(const sim_progress_t *p, double now)
{
    double frac = p->total ? (double)p->done / (double)p->total : 1.0;
    double rate = now > p->start ? (double)p->done / (now - p->start) : 0.0;
    char r[32], eta[32] = "ETA ?";
    fmt_rate(r, sizeof(r), rate);
    if (rate > 0.0) {
        unsigned long s = (unsigned long)((double)(p->total - p->done) / rate + 0.5);
        snprintf(eta, sizeof(eta), "ETA %lu:%02lu", s / 60, s % 60);
    }
    char line[2 * WIDTH];
    snprintf(line, sizeof(line), "%s  %3.0f%%  %s%s/s  %s", p->prefix, 100.0 * frac, r, p->unit,
             eta);
    fprintf(stderr, "\r%-*.*s", WIDTH, WIDTH, line);
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
        fprintf(stderr, "\r%*s\r", WIDTH, "");
        fflush(stderr);
    }
    pthread_mutex_destroy(&p->lock);
}

void sim_progress_phase(int enabled, size_t index, size_t total, const char *label,
                        const char *what)
{
    if (!enabled) {
        return;
    }
    char line[2 * WIDTH];
    snprintf(line, sizeof(line), "[%zu/%zu] %s: %s ...", index, total, label, what);
    fprintf(stderr, "\r%-*.*s", WIDTH, WIDTH, line);
    fflush(stderr);
}
