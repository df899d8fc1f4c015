/* SPDX-License-Identifier: Apache-2.0 */
/* Comma-separated lists and plain decimal numbers in the host-side text formats (scenario files,
 * the collector's campaigns file, dpm-sim's options): one splitter and one number check, so that
 * all of them say the same thing about the same mistake. */
#ifndef DPM_HOST_TEXT_LIST_H
#define DPM_HOST_TEXT_LIST_H

#include <stddef.h>

/* Trim spaces, tabs and a trailing CR from both ends of s in place; returns the new start. */
char *text_trim(char *s);

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

#endif /* DPM_HOST_TEXT_LIST_H */
