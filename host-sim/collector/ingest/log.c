/* SPDX-License-Identifier: Apache-2.0 */
/* JSON-lines log (see log.h). */
#include "collector/ingest/log.h"

#include <stdarg.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* Set once at start-up, read by every thread afterwards. */
static coll_log_level_t g_level = COLL_LOG_INFO;
static FILE *g_out;

static const char *const NAMES[] = {"debug", "info", "warn", "error"};

void coll_log_init(coll_log_level_t level, FILE *out)
{
    g_level = level;
    g_out = out;
}

int coll_log_parse_level(const char *s, coll_log_level_t *out)
{
    for (int i = 0; i < 4; i++) {
        if (s != NULL && strcmp(s, NAMES[i]) == 0) {
            *out = (coll_log_level_t)i;
            return 0;
        }
    }
    return -1;
}

int coll_log_enabled(coll_log_level_t level)
{
    return level >= g_level;
}

const char *coll_log_str(const char *s)
{
    static __thread char ring[8][512];
    static __thread unsigned next;
    char *out = ring[next++ % 8];
    if (s == NULL) {
        return "null";
    }
    size_t k = 0, cap = sizeof(ring[0]);
    out[k++] = '"';
    for (const unsigned char *p = (const unsigned char *)s; *p && k + 8 < cap; p++) {
        if (*p == '"' || *p == '\\') {
            out[k++] = '\\';
            out[k++] = (char)*p;
        } else if (*p < 0x20 || *p == 0x7F) {
            k += (size_t)snprintf(out + k, cap - k, "\\u%04x", *p);
        } else {
            out[k++] = (char)*p;
        }
    }
    out[k++] = '"';
    out[k] = '\0';
    return out;
}

void coll_log(coll_log_level_t level, const char *event, const char *fields_fmt, ...)
{
    if (level < g_level) {
        return;
    }
    char line[2048];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    time_t sec = tv.tv_sec;
    gmtime_r(&sec, &tm);
    int n = snprintf(line, sizeof(line),
                     "{\"ts\": \"%04d-%02d-%02dT%02d:%02d:%02d.%03dZ\", \"level\": \"%s\", "
                     "\"event\": \"%s\"",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     (int)(tv.tv_usec / 1000), NAMES[level], event);
    if (fields_fmt != NULL && fields_fmt[0] != '\0' && n > 0 && (size_t)n < sizeof(line) - 4) {
        line[n++] = ',';
        line[n++] = ' ';
        va_list ap;
        va_start(ap, fields_fmt);
        size_t room = sizeof(line) - (size_t)n - 3;
        int m = vsnprintf(line + n, room, fields_fmt, ap);
        va_end(ap);
        if (m < 0 || (size_t)m >= room) {
            m = snprintf(line + n, room, "\"truncated\": true"); /* still valid JSON */
        }
        n += m;
    }
    if (n < 0) {
        return;
    }
    line[n++] = '}';
    line[n++] = '\n';
    line[n] = '\0';
    FILE *f = g_out != NULL ? g_out : stderr;
    fputs(line, f); /* one call: stdio locks the stream, lines never interleave */
    fflush(f);
}
