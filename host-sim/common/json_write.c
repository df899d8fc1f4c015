/* SPDX-License-Identifier: Apache-2.0 */
/* JSON writer (see json_write.h). */
#include "common/json_write.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void jw_file(jw_t *w, FILE *f)
{
    memset(w, 0, sizeof(*w));
    w->f = f;
}

void jw_buffer(jw_t *w)
{
    memset(w, 0, sizeof(*w));
}

int jw_error(const jw_t *w)
{
    return w->err;
}

char *jw_take(jw_t *w, size_t *len)
{
    char *out = w->err ? NULL : w->buf;
    if (out == NULL) {
        free(w->buf);
    } else if (len != NULL) {
        *len = w->len;
    }
    w->buf = NULL;
    w->len = w->cap = 0;
    return out;
}

static void vappend(jw_t *w, const char *fmt, va_list ap)
{
    if (w->err) {
        return;
    }
    if (w->f != NULL) {
        w->err = vfprintf(w->f, fmt, ap) < 0;
        return;
    }
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(w->buf != NULL ? w->buf + w->len : NULL, w->cap - w->len, fmt, ap);
    if (n >= 0 && (size_t)n >= w->cap - w->len) {
        size_t cap = 2 * w->cap + (size_t)n + 64;
        char *p = realloc(w->buf, cap);
        if (p == NULL) {
            w->err = 1;
        } else {
            w->buf = p;
            w->cap = cap;
            n = vsnprintf(w->buf + w->len, w->cap - w->len, fmt, again);
        }
    }
    va_end(again);
    if (n < 0) {
        w->err = 1;
    } else if (!w->err) {
        w->len += (size_t)n;
    }
}

void jw_raw(jw_t *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vappend(w, fmt, ap);
    va_end(ap);
}

void jw_str(jw_t *w, const char *s)
{
    jw_raw(w, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            jw_raw(w, "\\%c", *p);
        } else if (*p < 0x20 || *p == 0x7F) {
            jw_raw(w, "\\u%04x", *p);
        } else {
            jw_raw(w, "%c", *p);
        }
    }
    jw_raw(w, "\"");
}

void jw_key(jw_t *w, const char *key)
{
    jw_str(w, key);
    jw_raw(w, ": ");
}

void jw_num(jw_t *w, double x, int digits)
{
    if (isfinite(x)) {
        jw_raw(w, "%.*g", digits, x);
    } else {
        jw_raw(w, "null");
    }
}

void jw_nums(jw_t *w, const double *x, size_t n, int digits)
{
    jw_raw(w, "[");
    for (size_t i = 0; i < n; i++) {
        jw_raw(w, "%s", i ? ", " : "");
        jw_num(w, x[i], digits);
    }
    jw_raw(w, "]");
}

void jw_member_num(jw_t *w, const char *key, double x, int digits)
{
    jw_raw(w, ", ");
    jw_key(w, key);
    jw_num(w, x, digits);
}

void jw_member_nums(jw_t *w, const char *key, const double *x, size_t n, int digits)
{
    jw_raw(w, ", ");
    jw_key(w, key);
    jw_nums(w, x, n, digits);
}
