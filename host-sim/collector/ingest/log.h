/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's log: one JSON object per line on stderr (systemd's journal, or a file the
 * service manager appends to), written whole by one call so lines from concurrent threads never
 * interleave:
 *
 *   {"ts": "2026-11-24T15:53:02.123Z", "level": "info", "event": "start", "listen": ...}
 *
 * ts is UTC with milliseconds; level is debug, info, warn or error; event names what happened
 * (README, "Running the collector in production", lists them); the other members depend on the
 * event. Lines below the level set with coll_log_init (--log-level, default info) are dropped
 * before they are formatted. */
#ifndef DPM_COLLECTOR_LOG_H
#define DPM_COLLECTOR_LOG_H

#include <stdio.h>

typedef enum { COLL_LOG_DEBUG = 0, COLL_LOG_INFO, COLL_LOG_WARN, COLL_LOG_ERROR } coll_log_level_t;

/* Set the level and the stream (NULL: stderr). Call before any thread logs. */
void coll_log_init(coll_log_level_t level, FILE *out);

/* "debug" .. "error" to a level; 0, or -1 for anything else. */
int coll_log_parse_level(const char *s, coll_log_level_t *out);

/* Would a line at this level be written? */
int coll_log_enabled(coll_log_level_t level);

/* Write one line: ts, level, event, then the members fields_fmt formats (printf-style,
 * "\"key\": value, ..." without braces; NULL or "" for none). String values must come from
 * coll_log_str. */
void coll_log(coll_log_level_t level, const char *event, const char *fields_fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* s as a JSON string literal, quotes included (NULL: null), in one of 8 per-thread buffers of
 * 512 bytes (longer strings are cut): up to 8 of them may appear in one coll_log call. */
const char *coll_log_str(const char *s);

#endif /* DPM_COLLECTOR_LOG_H */
