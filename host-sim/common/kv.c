/* SPDX-License-Identifier: Apache-2.0 */
/* The key=value reader (see kv.h). */
#include "common/kv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void kv_init(kv_t *kv, const char *text, size_t len, char *buf, size_t cap)
{
    text_lines_init(&kv->lines, text, len);
    kv->buf = buf;
    kv->cap = cap;
}

/* "[kind]" or "[kind NAME]" (s trimmed, starting with '['): KV_SECTION, or KV_BAD_SECTION. */
static int section(char *s, kv_item_t *it)
{
    size_t n = strlen(s);
    if (n < 3 || s[n - 1] != ']') {
        it->text = s;
        return KV_BAD_SECTION;
    }
    s[n - 1] = '\0';
    char *kind = text_trim(s + 1), *name = kind;
    while (*name != '\0' && *name != ' ' && *name != '\t') {
        name++;
    }
    if (*name != '\0') {
        *name++ = '\0';
    }
    it->kind = kind;
    it->name = text_trim(name);
    return KV_SECTION;
}

int kv_next(kv_t *kv, kv_item_t *it)
{
    char *s = NULL;
    int got = text_lines_next(&kv->lines, kv->buf, kv->cap, &s);
    memset(it, 0, sizeof(*it));
    it->line = kv->lines.line;
    if (got != TEXT_LINE_OK) {
        return got; /* KV_END, KV_TOO_LONG, KV_NUL share text_lines_next's codes */
    }
    if (*s == '[') {
        return section(s, it);
    }
    char *eq = strchr(s, '=');
    if (eq == NULL) {
        it->text = s;
        return KV_TEXT;
    }
    *eq = '\0';
    it->key = text_trim(s);
    it->value = text_trim(eq + 1);
    return KV_PAIR;
}

#define DISTANCE_MAX_LEN 64

/* Levenshtein distance of a and b, capped at 3 (all a spelling suggestion needs). */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    int row[DISTANCE_MAX_LEN + 1];
    if (la > DISTANCE_MAX_LEN || lb > DISTANCE_MAX_LEN) {
        return 3;
    }
    for (size_t j = 0; j <= lb; j++) {
        row[j] = (int)j;
    }
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] < 3 ? row[lb] : 3;
}

const char *kv_suggest(const char *word, const char *const *cand, int n, char *buf, size_t cap)
{
    int best = 3;
    const char *pick = NULL;
    for (int i = 0; i < n; i++) {
        int d = distance(word, cand[i]);
        if (d < best) {
            best = d;
            pick = cand[i];
        }
    }
    if (pick == NULL) {
        return "";
    }
    snprintf(buf, cap, " (did you mean '%s'?)", pick);
    return buf;
}

const char *kv_trailing_comma(const char *value)
{
    size_t n = strlen(value);
    while (n > 0 && (value[n - 1] == ' ' || value[n - 1] == '\t')) {
        n--;
    }
    return n > 0 && value[n - 1] == ','
               ? ": an empty value after the last comma (a trailing comma?)"
               : "";
}

int kv_load_file(const char *path, size_t max, const char *limit, char **text, size_t *len,
                 char *err, size_t cap)
{
    int got = text_read_file(path, max, text, len);
    if (got == TEXT_FILE_OPEN) {
        snprintf(err, cap, "cannot open %s: %s", path, strerror(errno));
    } else if (got == TEXT_FILE_NOMEM) {
        snprintf(err, cap, "out of memory");
    } else if (got != 0) {
        snprintf(err, cap, "%s: %s%s", path, got == TEXT_FILE_READ ? "read error" : "larger than ",
                 got == TEXT_FILE_READ ? "" : limit);
    }
    return got == 0 ? 0 : -1;
}
