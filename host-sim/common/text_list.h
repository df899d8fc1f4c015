/* SPDX-License-Identifier: Apache-2.0 */
/* Comma-separated lists in the host-side text formats (scenario files, the collector's campaigns
 * file): one splitter, so that both say the same thing about the same mistake. */
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

#endif /* DPM_HOST_TEXT_LIST_H */
