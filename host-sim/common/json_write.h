/* SPDX-License-Identifier: Apache-2.0 */
/* The one JSON writer of host-sim: the collector's estimate JSON, dpm-sim's results.json and
 * the reproduction files all go through it.
 *
 * A writer appends to a FILE or to a growing heap buffer. It writes text, not a tree: the caller
 * spells the punctuation (jw_raw) and the writer does what is easy to get wrong: string escapes
 * (quote, backslash, control characters as \u00XX) and numbers (finite values with the caller's
 * number of significant digits, anything else as null: JSON has no NaN or infinity). After an
 * error (out of memory, a failed write) every call is a no-op and jw_error says so. */
#ifndef DPM_HOST_JSON_WRITE_H
#define DPM_HOST_JSON_WRITE_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *f;   /* the sink, or NULL: the heap buffer */
    char *buf; /* heap buffer (NUL-terminated) */
    size_t len, cap;
    int err;
} jw_t;

/* A writer into an open file (not closed by the writer). */
void jw_file(jw_t *w, FILE *f);
/* A writer into a heap buffer; jw_take hands it over. */
void jw_buffer(jw_t *w);
/* The buffer (NUL-terminated, *len without the NUL; the caller frees it), or NULL after an
 * error (the buffer is freed then). */
char *jw_take(jw_t *w, size_t *len);
/* 1 if a write failed or memory ran out. */
int jw_error(const jw_t *w);

/* Verbatim text (printf format): punctuation, whitespace, numbers already formatted. */
void jw_raw(jw_t *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A string literal. */
void jw_str(jw_t *w, const char *s);
/* "key": (the key written as a string literal, then ": "). */
void jw_key(jw_t *w, const char *key);
/* A number with `digits` significant digits (%.{digits}g), or null when not finite. */
void jw_num(jw_t *w, double x, int digits);
/* [x0, x1, ...] of jw_num values. */
void jw_nums(jw_t *w, const double *x, size_t n, int digits);
/* `, "key": ` then jw_num(x) / jw_nums(x, n): a member after the first of an object. */
void jw_member_num(jw_t *w, const char *key, double x, int digits);
void jw_member_nums(jw_t *w, const char *key, const double *x, size_t n, int digits);

#endif /* DPM_HOST_JSON_WRITE_H */
