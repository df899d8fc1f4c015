/* SPDX-License-Identifier: Apache-2.0 */
/* Small JSON reader (see json_read.h). Recursive descent over the buffer. */
#include "common/json_read.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text_list.h"

#define MAX_DEPTH 64
#define MAX_FILE (64u << 20)

typedef struct {
    const char *p, *end;
    int depth;
} jr_t;

static void skip_ws(jr_t *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) {
        j->p++;
    }
}

static int parse_value(jr_t *j, jr_value_t *out);

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9') {
            v |= (unsigned)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            v |= (unsigned)(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            v |= (unsigned)(c - 'A' + 10);
        } else {
            return -1;
        }
    }
    *out = v;
    return 0;
}

static int parse_string(jr_t *j, char **out)
{
    if (j->p >= j->end || *j->p != '"') {
        return -1;
    }
    j->p++;
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    while (s != NULL && j->p < j->end && *j->p != '"') {
        unsigned char c = (unsigned char)*j->p++;
        char buf[3];
        size_t k = 1;
        buf[0] = (char)c;
        if (c < 0x20) {
            free(s);
            return -1;
        }
        if (c == '\\') {
            if (j->p >= j->end) {
                break;
            }
            char e = *j->p++;
            const char *esc = strchr("\"\\/bfnrt", e);
            unsigned u;
            if (esc != NULL) {
                buf[0] = "\"\\/\b\f\n\r\t"[esc - "\"\\/bfnrt"];
            } else if (e == 'u' && j->end - j->p >= 4 && hex4(j->p, &u) == 0) {
                j->p += 4;
                if (u < 0x80) {
                    buf[0] = (char)u;
                } else if (u < 0x800) {
                    buf[0] = (char)(0xC0 | (u >> 6));
                    buf[1] = (char)(0x80 | (u & 0x3F));
                    k = 2;
                } else {
                    buf[0] = (char)(0xE0 | (u >> 12));
                    buf[1] = (char)(0x80 | ((u >> 6) & 0x3F));
                    buf[2] = (char)(0x80 | (u & 0x3F));
                    k = 3;
                }
            } else {
                free(s);
                return -1;
            }
        }
        if (n + k + 1 > cap) {
            char *ns = realloc(s, cap * 2);
            if (ns == NULL) {
                free(s);
                return -1;
            }
            s = ns;
            cap *= 2;
        }
        memcpy(s + n, buf, k);
        n += k;
    }
    if (s == NULL || j->p >= j->end) {
        free(s);
        return -1;
    }
    j->p++;
    s[n] = '\0';
    *out = s;
    return 0;
}

static int push_item(jr_value_t *v, size_t *cap)
{
    if (v->n == *cap) {
        size_t nc = *cap ? 2 * *cap : 8;
        jr_value_t *ni = realloc(v->items, nc * sizeof(*ni));
        if (ni == NULL) {
            return -1;
        }
        v->items = ni;
        if (v->kind == JR_OBJECT) {
            char **nk = realloc(v->keys, nc * sizeof(*nk));
            if (nk == NULL) {
                return -1;
            }
            v->keys = nk;
        }
        *cap = nc;
    }
    return 0;
}

static int parse_container(jr_t *j, jr_value_t *out, int object)
{
    char close = object ? '}' : ']';
    size_t cap = 0;
    out->kind = object ? JR_OBJECT : JR_ARRAY;
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(j);
        if (object) {
            if (parse_string(j, &key) != 0) {
                return -1;
            }
            skip_ws(j);
            if (j->p >= j->end || *j->p != ':') {
                free(key);
                return -1;
            }
            j->p++;
        }
        if (push_item(out, &cap) != 0) {
            free(key);
            return -1;
        }
        if (object) {
            out->keys[out->n] = key;
        }
        memset(&out->items[out->n], 0, sizeof(out->items[0]));
        out->n++; /* counted first, so jr_free releases a half-parsed item too */
        if (parse_value(j, &out->items[out->n - 1]) != 0) {
            return -1;
        }
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            return 0;
        }
        return -1;
    }
}

static int literal(jr_t *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0) {
        return -1;
    }
    j->p += n;
    return 0;
}

static int parse_value(jr_t *j, jr_value_t *out)
{
    memset(out, 0, sizeof(*out));
    skip_ws(j);
    if (j->p >= j->end || ++j->depth > MAX_DEPTH) {
        return -1;
    }
    int st;
    char c = *j->p;
    if (c == '{' || c == '[') {
        st = parse_container(j, out, c == '{');
    } else if (c == '"') {
        out->kind = JR_STRING;
        st = parse_string(j, &out->string);
    } else if (c == 't' || c == 'f') {
        out->kind = JR_BOOL;
        out->number = c == 't';
        st = literal(j, c == 't' ? "true" : "false");
    } else if (c == 'n') {
        out->kind = JR_NULL;
        st = literal(j, "null");
    } else {
        char buf[64], *endp = NULL;
        size_t n = 0;
        while (j->p + n < j->end && n < sizeof(buf) - 1 && strchr("+-0123456789.eE", j->p[n])) {
            buf[n] = j->p[n];
            n++;
        }
        buf[n] = '\0';
        out->kind = JR_NUMBER;
        out->number = strtod(buf, &endp);
        st = n > 0 && endp == buf + n ? 0 : -1;
        if (st == 0 && strpbrk(buf, ".eE") == NULL) { /* an integer literal: keep it exactly */
            errno = 0;
            long long v = strtoll(buf, &endp, 10);
            out->is_integer = errno == 0 && endp == buf + n;
            out->integer = out->is_integer ? (int64_t)v : 0;
        }
        j->p += n;
    }
    j->depth--;
    return st;
}

int jr_parse(const char *text, size_t len, jr_value_t *out)
{
    jr_t j = {text, text + len, 0};
    if (parse_value(&j, out) != 0) {
        jr_free(out);
        return -1;
    }
    skip_ws(&j);
    if (j.p != j.end) {
        jr_free(out);
        return -1;
    }
    return 0;
}

int jr_parse_file(const char *path, jr_value_t *out)
{
    char *buf = NULL;
    size_t n = 0;
    int st = text_read_file(path, MAX_FILE, &buf, &n) == 0 ? jr_parse(buf, n, out) : -1;
    free(buf);
    return st;
}

void jr_free(jr_value_t *v)
{
    for (size_t i = 0; i < v->n; i++) {
        jr_free(&v->items[i]);
        if (v->keys != NULL) {
            free(v->keys[i]);
        }
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    memset(v, 0, sizeof(*v));
}

const jr_value_t *jr_get(const jr_value_t *v, const char *key)
{
    if (v == NULL || v->kind != JR_OBJECT) {
        return NULL;
    }
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->keys[i], key) == 0) {
            return &v->items[i];
        }
    }
    return NULL;
}

const jr_value_t *jr_at(const jr_value_t *v, size_t i)
{
    return v != NULL && v->kind == JR_ARRAY && i < v->n ? &v->items[i] : NULL;
}

double jr_number(const jr_value_t *v, const char *key, double fallback)
{
    const jr_value_t *m = jr_get(v, key);
    return m != NULL && m->kind == JR_NUMBER ? m->number : fallback;
}

int jr_int64(const jr_value_t *v, int64_t *out)
{
    if (v == NULL || v->kind != JR_NUMBER || !v->is_integer) {
        return -1;
    }
    *out = v->integer;
    return 0;
}

const char *jr_string(const jr_value_t *v, const char *key)
{
    const jr_value_t *m = jr_get(v, key);
    return m != NULL && m->kind == JR_STRING ? m->string : NULL;
}

int jr_equal(const jr_value_t *a, const jr_value_t *b)
{
    if (a == NULL || b == NULL || a->kind != b->kind) {
        return a == b;
    }
    switch (a->kind) {
    case JR_NULL: return 1;
    case JR_BOOL: return a->number == b->number;
    case JR_NUMBER:
        return a->is_integer && b->is_integer ? a->integer == b->integer : a->number == b->number;
    case JR_STRING: return strcmp(a->string, b->string) == 0;
    case JR_ARRAY:
    case JR_OBJECT:
        if (a->n != b->n) {
            return 0;
        }
        for (size_t i = 0; i < a->n; i++) {
            const jr_value_t *other = a->kind == JR_ARRAY ? &b->items[i] : jr_get(b, a->keys[i]);
            if (!jr_equal(&a->items[i], other)) {
                return 0;
            }
        }
        return 1;
    }
    return 0;
}

/* jr_path_equal below the place named by where[0, len). */
static int path_equal(const jr_value_t *a, const jr_value_t *b, const char *path, char *where,
                      size_t cap, size_t len)
{
    if (*path == '\0') {
        return jr_equal(a, b);
    }
    const char *dot = strchr(path, '.');
    size_t n = dot != NULL ? (size_t)(dot - path) : strlen(path);
    const char *rest = dot != NULL ? dot + 1 : path + n;
    if (n == 1 && path[0] == '*') {
        size_t items = a != NULL && a->kind == JR_ARRAY ? a->n : 0;
        if (b == NULL || b->kind != JR_ARRAY || b->n != items) {
            return a == NULL && b == NULL;
        }
        for (size_t i = 0; i < items; i++) {
            int w = snprintf(where + len, cap - len, "%s%zu", len ? "." : "", i);
            size_t at = w > 0 && (size_t)w < cap - len ? len + (size_t)w : len;
            if (!path_equal(&a->items[i], &b->items[i], rest, where, cap, at)) {
                return 0;
            }
        }
        return 1;
    }
    int w = snprintf(where + len, cap - len, "%s%.*s", len ? "." : "", (int)n, path);
    size_t at = w > 0 && (size_t)w < cap - len ? len + (size_t)w : len;
    char key[64];
    if (n >= sizeof(key)) {
        return 0;
    }
    memcpy(key, path, n);
    key[n] = '\0';
    return path_equal(jr_get(a, key), jr_get(b, key), rest, where, cap, at);
}

int jr_path_equal(const jr_value_t *a, const jr_value_t *b, const char *path, char *where,
                  size_t cap)
{
    if (cap == 0) {
        return jr_equal(a, b);
    }
    where[0] = '\0';
    return path_equal(a, b, path, where, cap, 0);
}
