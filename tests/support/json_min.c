/* SPDX-License-Identifier: Apache-2.0 */
#include "json_min.h"

#include <stdio.h>
#include <string.h>

void json_init(json_t *j, const char *text, size_t len)
{
    j->p = text;
    j->end = text + len;
    j->error = 0;
}

static void skip_ws(json_t *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')) {
        j->p++;
    }
}

int json_accept(json_t *j, char c)
{
    skip_ws(j);
    if (j->p < j->end && *j->p == c) {
        j->p++;
        return 1;
    }
    return 0;
}

int json_expect(json_t *j, char c)
{
    if (!json_accept(j, c)) {
        j->error = 1;
        return -1;
    }
    return 0;
}

int json_string(json_t *j, char *buf, size_t cap)
{
    if (json_expect(j, '"') != 0) {
        return -1;
    }
    size_t n = 0;
    while (j->p < j->end && *j->p != '"') {
        char c = *j->p++;
        if (c == '\\' && j->p < j->end) {
            c = *j->p++;
        }
        if (n + 1 < cap) {
            buf[n++] = c;
        }
    }
    if (j->p >= j->end) {
        j->error = 1;
        return -1;
    }
    j->p++;
    buf[n] = '\0';
    return 0;
}

int json_int(json_t *j, int64_t *out)
{
    skip_ws(j);
    int neg = 0;
    if (j->p < j->end && *j->p == '-') {
        neg = 1;
        j->p++;
    }
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') {
        j->error = 1;
        return -1;
    }
    uint64_t v = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        v = v * 10u + (uint64_t)(*j->p++ - '0');
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

int json_skip(json_t *j)
{
    skip_ws(j);
    if (j->p >= j->end) {
        j->error = 1;
        return -1;
    }
    char c = *j->p;
    if (c == '"') {
        char tmp[1];
        return json_string(j, tmp, sizeof(tmp));
    }
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->p++;
        if (json_accept(j, close)) {
            return 0;
        }
        do {
            if (c == '{') {
                char key[1];
                if (json_string(j, key, sizeof(key)) != 0 || json_expect(j, ':') != 0) {
                    return -1;
                }
            }
            if (json_skip(j) != 0) {
                return -1;
            }
        } while (json_accept(j, ','));
        return json_expect(j, close);
    }
    while (j->p < j->end && strchr(",}] \n\r\t", *j->p) == NULL) {
        j->p++; /* number, true, false, null */
    }
    return 0;
}

long json_read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return -1;
    }
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n == cap ? -1 : (long)n;
}
