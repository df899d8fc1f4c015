/* SPDX-License-Identifier: Apache-2.0 */
/* Comma-separated lists (see text_list.h). */
#include "common/text_list.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

void text_trim_span(char **s, size_t *n)
{
    while (*n > 0 && is_blank(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && (is_blank((*s)[*n - 1]) || (*s)[*n - 1] == '\r' || (*s)[*n - 1] == '\n')) {
        (*n)--;
    }
}

char *text_trim(char *s)
{
    size_t n = strlen(s);
    text_trim_span(&s, &n);
    s[n] = '\0';
    return s;
}

void text_lines_init(text_lines_t *t, const char *text, size_t len)
{
    t->text = text;
    t->len = len;
    t->pos = 0;
    t->line = 0;
}

int text_lines_next(text_lines_t *t, char *buf, size_t cap, char **out)
{
    while (t->pos < t->len) {
        const char *start = t->text + t->pos;
        const char *nl = memchr(start, '\n', t->len - t->pos);
        size_t n = nl != NULL ? (size_t)(nl - start) : t->len - t->pos;
        t->pos += n + 1;
        t->line++;
        if (n >= cap) {
            return TEXT_LINE_TOO_LONG;
        }
        if (memchr(start, '\0', n) != NULL) {
            return TEXT_LINE_NUL;
        }
        memcpy(buf, start, n);
        buf[n] = '\0';
        buf[strcspn(buf, "#")] = '\0';
        char *s = text_trim(buf);
        if (*s != '\0') {
            *out = s;
            return TEXT_LINE_OK;
        }
    }
    return TEXT_LINE_END;
}

int text_read_file(const char *path, size_t max, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return TEXT_FILE_OPEN;
    }
    size_t cap = 0, n = 0;
    char *buf = NULL;
    int rc = 0;
    for (;;) {
        if (n == cap) { /* room for max + 1 bytes: one more than max says "too big" */
            size_t next = cap == 0 ? 65536u : cap * 2u;
            next = next > max + 1 ? max + 1 : next;
            char *grown = next > cap ? realloc(buf, next + 1) : NULL;
            if (grown == NULL) {
                rc = next > cap ? TEXT_FILE_NOMEM : TEXT_FILE_TOO_BIG;
                break;
            }
            buf = grown;
            cap = next;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            rc = ferror(f) ? TEXT_FILE_READ : n > max ? TEXT_FILE_TOO_BIG : 0;
            break;
        }
    }
    fclose(f);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0'; /* rc == 0: the first pass allocated, with room for this byte */
    *text = buf;
    *len = n;
    return 0;
}

int text_list_split(char *s, char **items, int max, char *why, size_t whycap)
{
    int n = 0;
    for (char *tok = s;;) {
        char *comma = strchr(tok, ',');
        if (comma != NULL) {
            *comma = '\0';
        }
        char *item = text_trim(tok);
        if (item[0] == '\0') {
            snprintf(why, whycap, "%s",
                     comma == NULL ? "an empty value after the last comma (a trailing comma?)"
                     : n == 0      ? "an empty value before the first comma"
                                   : "an empty value between two commas");
            return -1;
        }
        if (n >= max) {
            snprintf(why, whycap, "more than %d values", max);
            return -1;
        }
        items[n++] = item;
        if (comma == NULL) {
            return n;
        }
        tok = comma + 1;
    }
}

static const char *digits(const char *s, int *n)
{
    *n = 0;
    while (*s >= '0' && *s <= '9') {
        s++;
        ++*n;
    }
    return s;
}

int text_is_decimal(const char *s)
{
    int whole = 0, frac = 0, ex = 0;
    s += *s == '+' || *s == '-';
    s = digits(s, &whole);
    if (*s == '.') {
        s = digits(s + 1, &frac);
    }
    if (whole + frac == 0) {
        return 0;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        s += *s == '+' || *s == '-';
        s = digits(s, &ex);
        if (ex == 0) {
            return 0;
        }
    }
    return *s == '\0';
}

int text_double(const char *s, double *out)
{
    char *end = NULL;
    if (!text_is_decimal(s)) {
        return -1;
    }
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || errno != 0 || !isfinite(v)) {
        return -1;
    }
    *out = v;
    return 0;
}

int text_u64(const char *s, uint64_t *out)
{
    if (*s >= '0' && *s <= '9') {
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (*end == '\0' && errno == 0) {
            *out = v;
            return 0;
        }
    }
    double d;
    if (text_double(s, &d) != 0 || d < 0.0 || d > 9007199254740992.0 /* 2^53 */ || d != floor(d)) {
        return -1;
    }
    *out = (uint64_t)d;
    return 0;
}
