/* SPDX-License-Identifier: Apache-2.0 */
/* Ingestion over time (see ingest_series.h). */
#include "collector/ingest/ingest_series.h"

#include <stdlib.h>
#include <string.h>

#include "common/json_write.h"

int coll_series_init(coll_series_t *s, uint32_t interval_s, int64_t now)
{
    memset(s, 0, sizeof(*s));
    if (interval_s == 0) {
        return 0;
    }
    s->pts = calloc(COLL_SERIES_POINTS, sizeof(*s->pts));
    if (s->pts == NULL) {
        return -1;
    }
    s->interval_s = interval_s;
    s->started = now;
    s->bucket = now / interval_s;
    return 0;
}

void coll_series_free(coll_series_t *s)
{
    free(s->pts);
    memset(s, 0, sizeof(*s));
}

static void point_set(coll_series_point_t *p, int64_t t, uint64_t accepted, uint64_t duplicates,
                      const coll_reasons_t *rejected)
{
    memset(p, 0, sizeof(*p));
    p->t = t;
    p->accepted = accepted;
    p->duplicates = duplicates;
    for (size_t i = 0; i < rejected->n; i++) {
        p->rejected[i] = rejected->r[i].count;
    }
}

void coll_series_tick(coll_series_t *s, uint64_t accepted, uint64_t duplicates,
                      const coll_reasons_t *rejected, int64_t now)
{
    if (s->pts == NULL || now / s->interval_s <= s->bucket) {
        return;
    }
    size_t at = (s->head + s->n) % COLL_SERIES_POINTS;
    if (s->n == COLL_SERIES_POINTS) {
        s->head = (s->head + 1) % COLL_SERIES_POINTS; /* the oldest goes */
    } else {
        s->n++;
    }
    point_set(&s->pts[at], (s->bucket + 1) * (int64_t)s->interval_s, accepted, duplicates,
              rejected);
    s->bucket = now / s->interval_s;
}

static void point_json(jw_t *w, const coll_series_point_t *p, size_t nreasons, int first)
{
    jw_raw(w, "%s{\"t\": %lld, \"accepted\": %llu, \"duplicates\": %llu, \"rejected\": [",
           first ? "" : ",\n", (long long)p->t, (unsigned long long)p->accepted,
           (unsigned long long)p->duplicates);
    for (size_t i = 0; i < nreasons; i++) {
        jw_raw(w, "%s%llu", i ? ", " : "", (unsigned long long)p->rejected[i]);
    }
    jw_raw(w, "]}");
}

int coll_series_json(const coll_series_t *s, uint64_t accepted, uint64_t duplicates,
                     const coll_reasons_t *rejected, int64_t now, char **out, size_t *len)
{
    jw_t w;
    jw_buffer(&w);
    coll_series_point_t *live = calloc(1, sizeof(*live));
    if (live == NULL) {
        *out = NULL;
        return -1;
    }
    size_t nr = rejected->n;
    jw_raw(&w,
           "{\"interval_seconds\": %u, \"started\": %lld, \"now\": %lld, \"max_points\": %d, "
           "\"reasons\": [",
           s->interval_s, (long long)s->started, (long long)now, COLL_SERIES_POINTS);
    for (size_t i = 0; i < nr; i++) {
        jw_raw(&w, "%s", i ? ", " : "");
        jw_str(&w, rejected->r[i].reason);
    }
    jw_raw(&w, "], \"points\": [");
    int first = 1;
    if (s->pts != NULL && s->n < COLL_SERIES_POINTS) { /* the start, while in the window */
        live->t = s->started;
        point_json(&w, live, nr, 1);
        first = 0;
    }
    for (size_t k = 0; s->pts != NULL && k < s->n; k++) {
        point_json(&w, &s->pts[(s->head + k) % COLL_SERIES_POINTS], nr, first);
        first = 0;
    }
    point_set(live, now, accepted, duplicates, rejected);
    point_json(&w, live, nr, first);
    free(live);
    jw_raw(&w, "]}\n");
    *out = jw_take(&w, len);
    return *out != NULL ? 0 : -1;
}
