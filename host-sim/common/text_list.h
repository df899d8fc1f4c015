/* SPDX-License-Identifier: Apache-2.0 */
/* Comma-separated lists and plain decimal numbers in the host-side text formats (scenario files,
 * the collector's campaigns file, dpm-sim's options): one splitter and one number check, so that
 * all of them say the same thing about the same mistake. */
#ifndef DPM_HOST_TEXT_LIST_H
#define DPM_HOST_TEXT_LIST_H

#include <stddef.h>
#include <stdint.h>

/* Trim spaces and tabs from both ends of s in place, and a line's end (CR, LF) from its end;
 * returns the new start. The one trim of every host-side text format (scenario files, the
 * campaigns and config files, the deny list), so a stray tab or a CRLF line means the same
 * everywhere. */
char *text_trim(char *s);
/* The same on the span s[0 .. n) of a longer line: moves *s and shortens *n, writes nothing. */
void text_trim_span(char **s, size_t *n);

/* The line reader of every host-side text format (scenario files, the campaigns file, the
 * credentials and the deny list): text[0 .. len) split at LF, each line's comment (from '#')
 * cut and the rest trimmed, blank lines skipped. Each front-end words its own errors. */
typedef struct {
    const char *text;
    size_t len, pos;
    int line; /* the number of the line last read, from 1 */
} text_lines_t;

enum { TEXT_LINE_END = 0, TEXT_LINE_OK = 1, TEXT_LINE_TOO_LONG = -1, TEXT_LINE_NUL = -2 };

void text_lines_init(text_lines_t *t, const char *text, size_t len);

/* The next non-blank line, copied into buf[0 .. cap) (so at most cap - 1 characters before
 * the comment), *out its trimmed content inside buf: TEXT_LINE_OK; TEXT_LINE_END after the last
 * line; TEXT_LINE_TOO_LONG or TEXT_LINE_NUL (a NUL byte in the line) with t->line naming it. */
int text_lines_next(text_lines_t *t, char *buf, size_t cap, char **out);

enum { TEXT_FILE_OPEN = -1, TEXT_FILE_READ = -2, TEXT_FILE_TOO_BIG = -3, TEXT_FILE_NOMEM = -4 };

/* The whole file at path, at most max bytes, in a buffer from malloc with a NUL after its last
 * byte (*text; free() it) and *len bytes. The buffer grows as the file goes, so a small heap need
 * not hold max at once and the size need not be known in advance. 0, or a TEXT_FILE_ code
 * (TEXT_FILE_OPEN with errno from fopen) with nothing allocated. */
int text_read_file(const char *path, size_t max, char **text, size_t *len);

/* Split s in place at commas into at most max trimmed, non-empty items. Returns the count, or
 * -1 with the reason in why: "more than MAX values", "an empty value after the last comma (a
 * trailing comma?)", "an empty value before the first comma", "an empty value between two
 * commas". */
int text_list_split(char *s, char **items, int max, char *why, size_t whycap);

/* 1 if s is a plain decimal number, the only numbers these formats take:
 *     [+-] digits [. digits] [(e|E) [+-] digits]     (".5" and "5." count: digits on one side)
 * and nothing else: no space, no hexadecimal ("0x10", "0x1p3": strtod reads them as 16 and 8),
 * no "inf" or "nan". Check a value with it before strtod / strtoull read it. */
int text_is_decimal(const char *s);

/* A plain decimal (text_is_decimal) that is a finite double: 0, or -1 (*out unchanged). */
int text_double(const char *s, double *out);

/* A non-negative integer: digits (any size up to 2^64 - 1), or a decimal or exponent form whose
 * value is an integer up to 2^53 (1e6, 2.5e3); never hexadecimal. 0, or -1 (*out unchanged). */
int text_u64(const char *s, uint64_t *out);

#endif /* DPM_HOST_TEXT_LIST_H */
