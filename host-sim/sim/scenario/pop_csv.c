/* SPDX-License-Identifier: Apache-2.0 */
/* A population's examples from a CSV file (see pop_csv.h). Rows are read with the host's one
 * line reader and list splitter (common/text_list.h); devices are found by sorting the rows by
 * device_id, then put back in the order of their first row. */
#include "sim/scenario/pop_csv.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kv.h" /* and text_list.h */

#define TWO31 2147483648.0
#define MAX_ID 255

enum { COL_ID, COL_SCORE, COL_LABEL, COL_GROUP, COL_PREDICTION, NCOLS };
static const char *const kColumns[NCOLS] = {"device_id", "score", "label", "group", "prediction"};
#define COLUMNS_TEXT "device_id, score, label, group[, prediction]"

typedef struct {
    const char *id; /* into the id arena, set once the arena stops moving */
    size_t id_at;
    double score;
    uint32_t line, group;
    uint8_t label, pred;
} row_t;

typedef struct {
    const char *src;
    char *err;
    size_t errcap;
    row_t *row;
    size_t nrows, cap;
    char *ids;
    size_t ids_len, ids_cap;
} reader_t;

static int fail(reader_t *r, uint32_t line, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (line > 0) {
        snprintf(r->err, r->errcap, "%s:%u: %s", r->src, line, msg);
    } else {
        snprintf(r->err, r->errcap, "%s: %s", r->src, msg);
    }
    return -1;
}

static int header(reader_t *r, char *s, uint32_t line, int *col_of_field, int *nfields)
{
    char *items[NCOLS + 1], why[96], hint[64];
    int n = text_list_split(s, items, NCOLS, why, sizeof(why));
    if (n < 0) {
        return fail(r, line, "header: %s (columns: " COLUMNS_TEXT ")", why);
    }
    int seen[NCOLS] = {0};
    for (int i = 0; i < n; i++) {
        int c = 0;
        while (c < NCOLS && strcmp(items[i], kColumns[c]) != 0) {
            c++;
        }
        if (c == NCOLS) {
            return fail(r, line,
                        "header: unknown column '%.40s'%s (columns: " COLUMNS_TEXT
                        "; other columns are refused, not ignored)",
                        items[i], kv_suggest(items[i], kColumns, NCOLS, hint, sizeof(hint)));
        }
        if (seen[c]) {
            return fail(r, line, "header: column '%s' given twice", kColumns[c]);
        }
        seen[c] = 1;
        col_of_field[i] = c;
    }
    for (int c = 0; c < COL_PREDICTION; c++) {
        if (!seen[c]) {
            return fail(r, line, "header: missing column '%s' (columns: " COLUMNS_TEXT ")",
                        kColumns[c]);
        }
    }
    *nfields = n;
    return 0;
}

static int push_row(reader_t *r, const row_t *row, const char *id)
{
    size_t len = strlen(id) + 1;
    if (r->nrows == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        row_t *nr = realloc(r->row, cap * sizeof(*nr));
        if (nr == NULL) {
            return fail(r, 0, "out of memory");
        }
        r->row = nr;
        r->cap = cap;
    }
    if (r->ids_len + len > r->ids_cap) {
        size_t cap = r->ids_cap ? 2 * r->ids_cap : 16384;
        while (cap < r->ids_len + len) {
            cap *= 2;
        }
        char *ni = realloc(r->ids, cap);
        if (ni == NULL) {
            return fail(r, 0, "out of memory");
        }
        r->ids = ni;
        r->ids_cap = cap;
    }
    r->row[r->nrows] = *row;
    r->row[r->nrows].id_at = r->ids_len;
    memcpy(r->ids + r->ids_len, id, len);
    r->ids_len += len;
    r->nrows++;
    return 0;
}

static int bit(reader_t *r, uint32_t line, const char *what, const char *v, uint8_t *out)
{
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
        return fail(r, line, "%s '%.40s' is not 0 or 1", what, v);
    }
    *out = (uint8_t)(v[0] - '0');
    return 0;
}

/* One data row, fields in the header's order. */
static int data_row(reader_t *r, sim_csv_t *d, char *s, uint32_t line, const int *col_of_field,
                    int nfields, const char *const *head, double threshold)
{
    char *items[NCOLS + 1], why[96];
    int empty = -1, at = 0; /* the first empty field, named by its column if there is one */
    for (char *c = s, *start = s;; c++) {
        if (*c == ',' || *c == '\0') {
            size_t len = (size_t)(c - start);
            char *f = start;
            text_trim_span(&f, &len);
            empty = empty < 0 && len == 0 ? at : empty;
            at++;
            start = c + 1;
        }
        if (*c == '\0') {
            break;
        }
    }
    if (empty >= 0 && empty < nfields) {
        return fail(r, line, "empty %s (field %d): a row fills every column of the header",
                    kColumns[col_of_field[empty]], empty + 1);
    }
    int n = text_list_split(s, items, nfields, why, sizeof(why));
    if (n < 0) {
        return fail(r, line, "%s (the header has %d columns)", why, nfields);
    }
    if (n != nfields) {
        return fail(r, line, "%d fields, the header has %d", n, nfields);
    }
    int same = 1;
    for (int i = 0; i < n; i++) {
        same &= strcmp(items[i], head[i]) == 0;
    }
    if (same) {
        return fail(r, line, "the header line again (two files joined?)");
    }
    char *f[NCOLS] = {NULL};
    for (int i = 0; i < n; i++) {
        f[col_of_field[i]] = items[i];
        if (strchr(items[i], '"') != NULL) {
            return fail(r, line, "quoted fields are not supported ('%.40s')", items[i]);
        }
    }
    row_t row;
    memset(&row, 0, sizeof(row));
    row.line = line;
    if (strlen(f[COL_ID]) > MAX_ID) {
        return fail(r, line, "device_id longer than %d characters", MAX_ID);
    }
    if (text_double(f[COL_SCORE], &row.score) != 0 || !(row.score >= 0.0) || !(row.score <= 1.0)) {
        return fail(r, line,
                    "score '%.40s' is not a number in [0, 1] (plain decimals only: NaN, Inf "
                    "and hexadecimal are refused)",
                    f[COL_SCORE]);
    }
    if (bit(r, line, "label", f[COL_LABEL], &row.label) != 0) {
        return -1;
    }
    if (f[COL_PREDICTION] != NULL) {
        if (bit(r, line, "prediction", f[COL_PREDICTION], &row.pred) != 0) {
            return -1;
        }
    } else {
        row.pred = row.score >= threshold;
    }
    const char *g = f[COL_GROUP];
    if (!sim_name_valid(g)) { /* campaigns name it in `groups = ...` */
        return fail(r, line,
                    "group '%.40s' is not a group name (letters, digits, _ . -; at most "
                    "%d characters)",
                    g, SIM_NAME_MAX - 1);
    }
    uint32_t gi = 0;
    while (gi < d->ngroups && strcmp(d->group[gi], g) != 0) {
        gi++;
    }
    if (gi == d->ngroups) {
        if (d->ngroups >= SIM_MAX_GROUPS) {
            return fail(r, line, "group '%s': more than %d groups", g, SIM_MAX_GROUPS);
        }
        snprintf(d->group[d->ngroups++], SIM_NAME_MAX, "%s", g);
    }
    row.group = gi;
    return push_row(r, &row, f[COL_ID]);
}

static int by_id_then_line(const void *a, const void *b)
{
    const row_t *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c != 0 ? c : (x->line > y->line) - (x->line < y->line);
}

typedef struct {
    sim_csv_device_t dev;
    size_t at; /* its first row in the sorted rows */
    size_t n;
} span_t;

static int by_first_line(const void *a, const void *b)
{
    const span_t *x = a, *y = b;
    return (x->dev.line > y->dev.line) - (x->dev.line < y->dev.line);
}

/* Rows -> devices in the order of their first row, examples positives first. */
static int devices(reader_t *r, sim_csv_t *d)
{
    for (size_t i = 0; i < r->nrows; i++) {
        r->row[i].id = r->ids + r->row[i].id_at;
    }
    qsort(r->row, r->nrows, sizeof(*r->row), by_id_then_line);
    size_t nd = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        nd += i == 0 || strcmp(r->row[i].id, r->row[i - 1].id) != 0;
    }
    span_t *span = calloc(nd, sizeof(*span));
    d->device = calloc(nd, sizeof(*d->device));
    d->score = malloc(r->nrows * sizeof(double));
    d->score_q31 = malloc(r->nrows * sizeof(uint32_t));
    if (span == NULL || d->device == NULL || d->score == NULL || d->score_q31 == NULL) {
        free(span);
        return fail(r, 0, "out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < r->nrows; k++) {
        span_t *s = &span[k];
        s->at = i;
        s->dev.line = r->row[i].line;
        s->dev.group = r->row[i].group;
        for (; i < r->nrows && strcmp(r->row[i].id, r->row[s->at].id) == 0; i++) {
            const row_t *w = &r->row[i];
            if (w->group != s->dev.group) {
                int st =
                    fail(r, w->line, "device '%.40s' is in group '%s' here but in '%s' on line %u",
                         w->id, d->group[w->group], d->group[s->dev.group], s->dev.line);
                free(span);
                return st;
            }
            if (++s->n > SIM_CSV_MAX_EXAMPLES) {
                int st = fail(r, w->line,
                              "device '%.40s' has more than %u rows (a simulated device "
                              "holds at most %u examples)",
                              w->id, SIM_CSV_MAX_EXAMPLES, SIM_CSV_MAX_EXAMPLES);
                free(span);
                return st;
            }
            s->dev.npos += w->label;
            s->dev.nneg += 1u - w->label;
            s->dev.tp += w->label & w->pred;
            s->dev.fp += (1u - w->label) & w->pred;
        }
    }
    qsort(span, nd, sizeof(*span), by_first_line);
    size_t at = 0;
    for (k = 0; k < nd; k++) {
        span_t *s = &span[k];
        s->dev.first = (uint32_t)at;
        for (int want = 1; want >= 0; want--) { /* positives, then negatives, in file order */
            for (size_t j = s->at; j < s->at + s->n; j++) {
                if (r->row[j].label == want) {
                    d->score[at] = r->row[j].score;
                    double q = nearbyint(r->row[j].score * TWO31);
                    d->score_q31[at++] = q >= TWO31 ? (uint32_t)TWO31 : (uint32_t)q;
                }
            }
        }
        d->device[k] = s->dev;
        uint32_t g = s->dev.group, e = (uint32_t)s->n;
        d->group_devices[g]++;
        d->group_most[g] = e > d->group_most[g] ? e : d->group_most[g];
    }
    d->ndevices = nd;
    d->nexamples = r->nrows;
    free(span);
    return 0;
}

int sim_csv_parse(const char *text, size_t len, const char *source, double threshold,
                  sim_csv_t *out, char *err, size_t errcap)
{
    reader_t r;
    memset(&r, 0, sizeof(r));
    memset(out, 0, sizeof(*out));
    r.src = source;
    r.err = err;
    r.errcap = errcap;
    text_lines_t tl;
    text_lines_init(&tl, text, len);
    char buf[SIM_CSV_MAX_LINE], *s = NULL;
    const char *head[NCOLS + 1];
    int col_of_field[NCOLS + 1], nfields = 0, st = 0, got;
    while (st == 0 && (got = text_lines_next(&tl, buf, sizeof(buf), &s)) != TEXT_LINE_END) {
        uint32_t line = (uint32_t)tl.line;
        if (got == TEXT_LINE_TOO_LONG) {
            st = fail(&r, line, "line longer than %d characters", SIM_CSV_MAX_LINE - 1);
        } else if (got == TEXT_LINE_NUL) {
            st = fail(&r, line, "NUL byte in the line");
        } else if (nfields == 0) {
            st = header(&r, s, line, col_of_field, &nfields);
            for (int i = 0; st == 0 && i < nfields; i++) { /* to tell the header again */
                head[i] = kColumns[col_of_field[i]];
                out->has_prediction |= col_of_field[i] == COL_PREDICTION;
            }
        } else {
            st = data_row(&r, out, s, line, col_of_field, nfields, head, threshold);
        }
    }
    if (st == 0 && nfields == 0) {
        st = fail(&r, 0, "empty file (expected a header line: " COLUMNS_TEXT ")");
    } else if (st == 0 && r.nrows == 0) {
        st = fail(&r, (uint32_t)tl.line, "no data rows after the header");
    }
    if (st == 0) {
        st = devices(&r, out);
    }
    free(r.row);
    free(r.ids);
    if (st != 0) {
        sim_csv_free(out);
    }
    return st;
}

int sim_csv_read_file(const char *path, double threshold, sim_csv_t *out, char *err, size_t errcap)
{
    char *text = NULL;
    size_t len = 0;
    memset(out, 0, sizeof(*out));
    if (kv_load_file(path, SIM_CSV_MAX_BYTES, SIM_CSV_MAX_BYTES_TEXT, &text, &len, err, errcap) !=
        0) {
        return -1;
    }
    int st = sim_csv_parse(text, len, path, threshold, out, err, errcap);
    free(text);
    return st;
}

void sim_csv_free(sim_csv_t *d)
{
    free(d->device);
    free(d->score);
    free(d->score_q31);
    d->device = NULL;
    d->score = NULL;
    d->score_q31 = NULL;
    d->ndevices = d->nexamples = 0;
}
