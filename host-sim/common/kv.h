/* SPDX-License-Identifier: Apache-2.0 */
/* The one key=value reader of the host-side text formats: scenario files, the collector's
 * campaigns file and its configuration file. It splits the lines (text_lines_next: '#' comments,
 * blank lines, trimming, NUL bytes and over-long lines refused) into "[kind NAME]" / "[kind]"
 * sections and "key = value" pairs, and offers the hints every format gives the same way: a
 * close spelling (kv_suggest) and a trailing comma (kv_trailing_comma). It judges no key: each
 * front-end words its own errors, so their messages stay what they were. */
#ifndef DPM_HOST_KV_H
#define DPM_HOST_KV_H

#include <stddef.h>

#include "common/text_list.h"

typedef enum {
    KV_END = 0,         /* after the last line */
    KV_PAIR = 1,        /* "key = value": key and value trimmed, either may be "" */
    KV_SECTION = 2,     /* "[kind NAME]" or "[kind]": kind and name trimmed, name "" if none */
    KV_BAD_SECTION = 3, /* starts with '[' but is no section ("[", "[]", "[x"): text */
    KV_TEXT = 4,        /* a line without '=': text */
    KV_TOO_LONG = TEXT_LINE_TOO_LONG, /* the line has cap characters or more */
    KV_NUL = TEXT_LINE_NUL,           /* a NUL byte in the line */
} kv_kind_t;

typedef struct {
    text_lines_t lines;
    char *buf; /* the current line, cap bytes: owned by the caller */
    size_t cap;
} kv_t;

typedef struct {
    int line;          /* from 1; for KV_END the last line read (0 for an empty text) */
    char *key, *value; /* KV_PAIR */
    char *kind, *name; /* KV_SECTION */
    char *text;        /* KV_BAD_SECTION, KV_TEXT: the trimmed line */
} kv_item_t;

/* Read text[0 .. len) with lines of at most cap - 1 characters copied into buf. */
void kv_init(kv_t *kv, const char *text, size_t len, char *buf, size_t cap);

/* The next item (a kv_kind_t); its strings point into buf until the next call. */
int kv_next(kv_t *kv, kv_item_t *it);

/* " (did you mean 'x'?)" for the closest of the n candidates within 2 edits (Levenshtein),
 * written into buf, else "": a suffix for an "unknown key / section / option" message. */
const char *kv_suggest(const char *word, const char *const *cand, int n, char *buf, size_t cap);

/* ": an empty value after the last comma (a trailing comma?)" if value ends with a comma
 * (after trailing blanks), else "": a suffix for a "bad value" message. */
const char *kv_trailing_comma(const char *value);

/* text_read_file (at most max bytes, limit says how much, e.g. "1 MiB"), its failure worded as
 * the collector's files word it: "cannot open PATH: REASON", "out of memory", "PATH: read
 * error", "PATH: larger than LIMIT". 0 with *text (free() it) and *len, or -1 with err set. */
int kv_load_file(const char *path, size_t max, const char *limit, char **text, size_t *len,
                 char *err, size_t cap);

#endif /* DPM_HOST_KV_H */
