/* SPDX-License-Identifier: Apache-2.0 */
/* Ingestion over time, for the console (GET /v1/ingestion, console.h): this process's report
 * counters (accepted, duplicates, rejects by reason; counters.h) as they stood at the end of
 * every interval of --series-seconds (default 60) that saw reports, the newest
 * COLL_SERIES_POINTS of them (a day at the default). A point is recorded by the first counter
 * update of a new interval, so an idle collector records nothing and needs no timer thread.
 *
 * JSON: {"interval_seconds": I, "started": T0 (Unix seconds, the process's start), "now": T,
 *        "max_points": COLL_SERIES_POINTS, "reasons": ["reason", ...],
 *        "points": [{"t": T, "accepted": n, "duplicates": n, "rejected": [n per reason]}, ...]}
 * Counts are cumulative since the start (differences of two points are what happened in
 * between); the first point is the start (all zero) unless the window has moved past it, the
 * last one is "now". Like every Prometheus counter they restart at zero with the process; the
 * durable per-period report counts are the estimates' ("reports", and "rejects" by reason). */
#ifndef DPM_COLLECTOR_INGEST_SERIES_H
#define DPM_COLLECTOR_INGEST_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "collector/ingest/aggregate.h"

#define COLL_SERIES_POINTS 1440
#define COLL_SERIES_DEFAULT_SECONDS 60u

typedef struct {
    int64_t t; /* end of the interval, Unix seconds */
    uint64_t accepted, duplicates;
    uint64_t rejected[COLL_MAX_REASONS]; /* in the order of the counters' reasons */
} coll_series_point_t;

typedef struct {
    uint32_t interval_s; /* 0: off */
    int64_t started;
    int64_t bucket; /* the interval now open: Unix time / interval_s */
    size_t n, head; /* points held; the oldest's index */
    coll_series_point_t *pts;
} coll_series_t;

/* Start recording every interval_s seconds (1 .. 3600) from Unix time now. 0 or -1 (memory). */
int coll_series_init(coll_series_t *s, uint32_t interval_s, int64_t now);
void coll_series_free(coll_series_t *s);

/* Before a counter update at Unix time now, with the counters' current totals: closes the
 * interval if a new one has begun. Does nothing when off. */
void coll_series_tick(coll_series_t *s, uint64_t accepted, uint64_t duplicates,
                      const coll_reasons_t *rejected, int64_t now);

/* The JSON above, from s and the counters' totals now (the caller holds their lock), into a
 * new heap buffer: 0, or -1 when memory runs out. */
int coll_series_json(const coll_series_t *s, uint64_t accepted, uint64_t duplicates,
                     const coll_reasons_t *rejected, int64_t now, char **out, size_t *len);

#endif /* DPM_COLLECTOR_INGEST_SERIES_H */
