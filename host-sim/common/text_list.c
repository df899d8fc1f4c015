/* SPDX-License-Identifier: Apache-2.0 */
/* Comma-separated lists (see text_list.h). */
#include "common/text_list.h"

#include <stdio.h>
#include <string.h>

char *text_trim(char *s)
{
    while (*s == ' ' || *s == '\t') {
        s++;
    }
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) {
        s[--n] = '\0';
    }
    return s;
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
