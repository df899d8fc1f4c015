/* SPDX-License-Identifier: Apache-2.0 */
/* Process counters for /metrics (see counters.h). */
#include "collector/ingest/counters.h"

#include <string.h>
#include <time.h>

const double coll_commit_bucket_le[COLL_COMMIT_BUCKETS] = {
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5};

int coll_counters_init(coll_counters_t *c)
{
    memset(c, 0, sizeof(*c));
    return pthread_mutex_init(&c->mu, NULL) == 0 ? 0 : -1;
}

void coll_counters_free(coll_counters_t *c)
{
    if (c != NULL) {
        coll_series_free(&c->series);
        pthread_mutex_destroy(&c->mu);
    }
}

void coll_counters_status(coll_counters_t *c, int status)
{
    if (c == NULL || status < 100 || status > 599) {
        return;
    }
    pthread_mutex_lock(&c->mu);
    c->status[status]++;
    pthread_mutex_unlock(&c->mu);
}

void coll_counters_batch(coll_counters_t *c, const coll_batch_t *b)
{
    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&c->mu);
    coll_series_tick(&c->series, c->reports_accepted, c->reports_duplicate, &c->rejected,
                     (int64_t)time(NULL));
    c->reports_accepted += b->accepted;
    c->reports_duplicate += b->duplicates;
    for (size_t i = 0; i < b->ncounts; i++) {
        coll_reasons_add(&c->rejected, b->counts[i].reason, b->counts[i].count);
    }
    pthread_mutex_unlock(&c->mu);
}

void coll_counters_reject(coll_counters_t *c, const char *reason, uint64_t n)
{
    if (c == NULL) {
        return;
    }
    pthread_mutex_lock(&c->mu);
    coll_series_tick(&c->series, c->reports_accepted, c->reports_duplicate, &c->rejected,
                     (int64_t)time(NULL));
    coll_reasons_add(&c->rejected, reason, n);
    pthread_mutex_unlock(&c->mu);
}

/* One more of counter n of c, under c's lock. */
static void bump(coll_counters_t *c, uint64_t *n)
{
    pthread_mutex_lock(&c->mu);
    (*n)++;
    pthread_mutex_unlock(&c->mu);
}

void coll_counters_handshake(coll_counters_t *c, int ok)
{
    if (c != NULL) {
        bump(c, ok ? &c->tls_handshakes : &c->tls_handshake_failures);
    }
}

void coll_counters_commit(coll_counters_t *c, double seconds, int ok)
{
    if (c == NULL) {
        return;
    }
    int b = 0;
    while (b < COLL_COMMIT_BUCKETS && seconds > coll_commit_bucket_le[b]) {
        b++;
    }
    pthread_mutex_lock(&c->mu);
    if (ok) {
        c->commits++;
        c->commit_seconds += seconds;
        c->commit_bucket[b]++;
    } else {
        c->commits_failed++;
    }
    pthread_mutex_unlock(&c->mu);
}

void coll_counters_snapshot(coll_counters_t *c, coll_counters_t *out)
{
    pthread_mutex_lock(&c->mu);
    *out = *c;
    pthread_mutex_unlock(&c->mu);
}

int coll_counters_series_json(coll_counters_t *c, int64_t now, char **out, size_t *len)
{
    if (c == NULL) {
        *out = NULL;
        return -1;
    }
    pthread_mutex_lock(&c->mu);
    int rc = coll_series_json(&c->series, c->reports_accepted, c->reports_duplicate, &c->rejected,
                              now, out, len);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

void coll_counters_reload(coll_counters_t *c, int ok)
{
    if (c != NULL) {
        bump(c, ok ? &c->reloads_ok : &c->reloads_failed);
    }
}
