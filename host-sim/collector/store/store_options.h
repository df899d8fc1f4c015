/* SPDX-License-Identifier: Apache-2.0 */
/* How the store is opened (store.h), apart so that the backend interface (store_backend.h)
 * can name it without including store.h (no include cycle between the two). */
#ifndef DPM_COLLECTOR_STORE_OPTIONS_H
#define DPM_COLLECTOR_STORE_OPTIONS_H

#include "collector/ingest/counters.h"

typedef enum {
    COLL_INTEGRITY_FULL = 0, /* SQLite PRAGMA integrity_check: pages, and indexes against tables */
    COLL_INTEGRITY_QUICK,    /* PRAGMA quick_check: pages only (faster) */
    COLL_INTEGRITY_OFF
} coll_integrity_t;

/* Longest instance id (shard), bytes without the NUL. */
#define COLL_SHARD_MAX 96

typedef struct {
    coll_integrity_t integrity; /* SQLite start-up check */
    const char *shard;          /* this writer's instance id (NULL or "": "default") */
    coll_counters_t *counters;  /* commit latencies go here (may be NULL) */
} coll_store_options_t;

#endif
