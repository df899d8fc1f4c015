/* SPDX-License-Identifier: Apache-2.0 */
/* Reproduction cells, references and their writer (see repro_cells.h). */
#include "sim/repro/repro_cells.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_write.h"
#include "common/text_list.h"

#define MAX_LINE 2048
#define MAX_COLS 32
#define MAX_AXIS 64

/* ---- growing arrays ------------------------------------------------------------------------ */

/* The next element, zeroed, of one of the three growing arrays (tables, refs, cells): arr is the
 * address of the array's pointer (any element type; object pointers share one representation,
 * copied with memcpy so no pointer is read through another type). NULL: out of memory, the
 * array as it was. */
static void *append(void *arr, size_t *n, size_t *cap, size_t size)
{
    char *p;
    memcpy(&p, arr, sizeof(p));
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        char *q = realloc(p, c * size);
        if (q == NULL) {
            return NULL;
        }
        p = q;
        *cap = c;
        memcpy(arr, &p, sizeof(p));
    }
    char *e = p + (*n)++ * size;
    memset(e, 0, size);
    return e;
}

void repro_free(repro_t *r)
{
    free(r->tables);
    free(r->refs);
    free(r->cells);
    memset(r, 0, sizeof(*r));
}

/* ---- tables and references ----------------------------------------------------------------- */

const repro_table_t *repro_find_table(const repro_t *r, const char *name)
{
    for (size_t i = 0; i < r->ntables; i++) {
        if (strcmp(r->tables[i].name, name) == 0) {
            return &r->tables[i];
        }
    }
    return NULL;
}

static repro_table_t *add_table(repro_t *r, const char *name)
{
    repro_table_t *t = append(&r->tables, &r->ntables, &r->tcap, sizeof(*t));
    if (t == NULL) {
        return NULL;
    }
    snprintf(t->name, sizeof(t->name), "%s", name);
    snprintf(t->check, sizeof(t->check), "printed");
    return t;
}

void repro_table(repro_t *r, const char *name, const char *title, const char *source,
                 const char *note)
{
    if (repro_find_table(r, name) != NULL) {
        return;
    }
    repro_table_t *t = add_table(r, name);
    if (t != NULL) {
        snprintf(t->title, sizeof(t->title), "%s", title);
        snprintf(t->source, sizeof(t->source), "%s", source);
        snprintf(t->note, sizeof(t->note), "%s", note != NULL ? note : "");
        snprintf(t->check, sizeof(t->check), "own");
    }
}

void repro_tables(repro_t *r, const repro_table_def_t *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        repro_table(r, t[i].name, t[i].title, t[i].source, t[i].note);
    }
}

const repro_ref_t *repro_find_ref(const repro_t *r, const char *table, const char *row,
                                  const char *col)
{
    for (size_t i = 0; i < r->nrefs; i++) {
        const repro_ref_t *f = &r->refs[i];
        if (strcmp(f->table, table) == 0 && strcmp(f->row, row) == 0 && strcmp(f->col, col) == 0) {
            return f;
        }
    }
    return NULL;
}

typedef struct {
    const char *path;
    int line;
    char *err;
    size_t errcap;
} reader_t;

static int fail(reader_t *rd, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(rd->err, rd->errcap, "%s:%d: %s", rd->path, rd->line, msg);
    return -1;
}

/* "| a | b | c |" into trimmed cells; the count or -1. */
static int split_row(char *s, char **cells, int max)
{
    size_t n = strlen(s);
    if (n < 2 || s[0] != '|' || s[n - 1] != '|') {
        return -1;
    }
    s[n - 1] = '\0';
    int k = 0;
    for (char *p = s + 1;;) {
        char *bar = strchr(p, '|');
        if (bar != NULL) {
            *bar = '\0';
        }
        if (k >= max) {
            return -1;
        }
        cells[k++] = text_trim(p);
        if (bar == NULL) {
            return k;
        }
        p = bar + 1;
    }
}

static int add_ref(repro_t *r, reader_t *rd, const char *table, const char *row, const char *col,
                   const char *text)
{
    if (text[0] == '\0') {
        return 0; /* no reference in this cell */
    }
    double v = NAN;
    if (strcmp(text, "-") != 0) {
        char *end = NULL;
        errno = 0;
        v = strtod(text, &end);
        if (end == text || *end != '\0' || errno != 0 || !isfinite(v)) {
            return fail(rd, "'%s' is not a number (or '-')", text);
        }
    }
    if (repro_find_ref(r, table, row, col) != NULL) {
        return fail(rd, "[%s] [%s] [%s] given twice", table, row, col);
    }
    repro_ref_t *f = append(&r->refs, &r->nrefs, &r->rcap, sizeof(*f));
    if (f == NULL) {
        return fail(rd, "out of memory");
    }
    snprintf(f->table, sizeof(f->table), "%s", table);
    snprintf(f->row, sizeof(f->row), "%s", row);
    snprintf(f->col, sizeof(f->col), "%s", col);
    snprintf(f->text, sizeof(f->text), "%s", text);
    f->value = v;
    return 0;
}

/* One '|' line of the current table: its header, a grid row or a list entry. */
static int table_line(repro_t *r, reader_t *rd, repro_table_t *t, int list, char *s,
                      char header[MAX_COLS][96], int *ncols)
{
    char *cells[MAX_COLS];
    int n = split_row(s, cells, MAX_COLS);
    if (n < 0) {
        return fail(rd, "a table line is '| a | b | ... |'");
    }
    if (*ncols == 0) {
        for (int i = 0; i < n; i++) {
            snprintf(header[i], sizeof(header[i]), "%s", cells[i]);
        }
        *ncols = n;
        return 0;
    }
    if (n != *ncols) {
        return fail(rd, "%d cells, the header has %d", n, *ncols);
    }
    if (list) {
        return n == 3 ? add_ref(r, rd, t->name, cells[0], cells[1], cells[2])
                      : fail(rd, "a list table's lines are '| row | col | value |'");
    }
    for (int i = 1; i < n; i++) {
        if (add_ref(r, rd, t->name, cells[0], header[i], cells[i]) != 0) {
            return -1;
        }
    }
    return 0;
}

int repro_load_refs(repro_t *r, const char *path, char *err, size_t errcap)
{
    reader_t rd = {path, 0, err, errcap};
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(err, errcap, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char line[MAX_LINE], header[MAX_COLS][96];
    repro_table_t *t = NULL;
    int ncols = 0, list = 0, st = 0;
    while (st == 0 && fgets(line, sizeof(line), f) != NULL) {
        rd.line++;
        char *hash = strchr(line, '#');
        if (hash != NULL && (hash == line || hash[-1] == ' ' || hash[-1] == '\t')) {
            *hash = '\0'; /* a comment ('#' inside a label, "#1", stays) */
        }
        char *s = text_trim(line);
        size_t n = strlen(s);
        if (n > 0 && s[n - 1] == '\n') {
            s[--n] = '\0';
            s = text_trim(s);
        }
        if (*s == '\0') {
            continue;
        }
        if (strncmp(s, "[table ", 7) == 0 && s[strlen(s) - 1] == ']') {
            s[strlen(s) - 1] = '\0';
            char *name = text_trim(s + 7);
            if (*name == '\0' || repro_find_table(r, name) != NULL) {
                st = fail(&rd, "missing or repeated table name");
            } else if ((t = add_table(r, name)) == NULL) {
                st = fail(&rd, "out of memory");
            }
            ncols = list = 0;
        } else if (t == NULL) {
            st = fail(&rd, "expected [table NAME]");
        } else if (*s == '|') {
            st = table_line(r, &rd, t, list, s, header, &ncols);
        } else {
            char *eq = strchr(s, '=');
            if (eq == NULL) {
                st = fail(&rd, "expected 'key = value' or a '|' table line");
                continue;
            }
            *eq = '\0';
            char *k = text_trim(s), *v = text_trim(eq + 1);
            if (strcmp(k, "title") == 0) {
                snprintf(t->title, sizeof(t->title), "%s", v);
            } else if (strcmp(k, "source") == 0) {
                snprintf(t->source, sizeof(t->source), "%s", v);
            } else if (strcmp(k, "check") == 0) {
                snprintf(t->check, sizeof(t->check), "%s", v);
            } else if (strcmp(k, "note") == 0) {
                size_t have = strlen(t->note); /* several note lines join */
                snprintf(t->note + have, sizeof(t->note) - have, "%s%s", have ? " " : "", v);
            } else if (strcmp(k, "layout") == 0 &&
                       (strcmp(v, "grid") == 0 || strcmp(v, "list") == 0)) {
                list = strcmp(v, "list") == 0;
            } else {
                st = fail(&rd, "unknown key '%s' (title, source, check, note, layout)", k);
            }
        }
    }
    fclose(f);
    for (size_t i = 0; st == 0 && i < r->ntables; i++) {
        if (r->tables[i].source[0] == '\0') {
            snprintf(err, errcap, "%s: table %s has no source", path, r->tables[i].name);
            st = -1;
        }
    }
    return st;
}

/* ---- cells -------------------------------------------------------------------------------- */

static int is_paper(const char *source)
{
    return strncmp(source, "paper ", 6) == 0;
}

/* The reference's precision: decimals written, or significant digits in e-notation. */
static void precision_of(const char *text, int *decimals, int *significant)
{
    const char *e = strpbrk(text, "eE"), *dot = strchr(text, '.');
    *significant = 0;
    *decimals = 0;
    if (e != NULL) {
        for (const char *p = text; p < e; p++) {
            *significant += *p >= '0' && *p <= '9';
        }
        return;
    }
    if (dot != NULL) {
        *decimals = (int)strlen(dot + 1);
    }
}

/* ours, rounded like the reference was printed, equals it; '-' matches none. */
static int printed_matches(const char *text, double ref, double ours)
{
    if (isnan(ref) || isnan(ours)) {
        return isnan(ref) && isnan(ours);
    }
    int dec, sig;
    precision_of(text, &dec, &sig);
    if (sig > 0) {
        dec = ref == 0.0 ? sig : sig - 1 - (int)floor(log10(fabs(ref)));
    }
    double scale = pow(10.0, dec);
    return llround(ours * scale) == llround(ref * scale);
}

static repro_cell_t *new_cell(repro_t *r, const char *table, const char *row, const char *col,
                              double ours)
{
    repro_cell_t *c = append(&r->cells, &r->ncells, &r->ccap, sizeof(*c));
    if (c == NULL) {
        return NULL;
    }
    snprintf(c->table, sizeof(c->table), "%s", table);
    snprintf(c->row, sizeof(c->row), "%s", row);
    snprintf(c->col, sizeof(c->col), "%s", col);
    c->ours = ours;
    c->ref = NAN;
    return c;
}

int repro_ref_cell(repro_t *r, const char *table, const char *row, const char *col, double ours)
{
    const repro_table_t *t = repro_find_table(r, table);
    const repro_ref_t *f = repro_find_ref(r, table, row, col);
    if (t == NULL || f == NULL) {
        fprintf(stderr, "dpm-sim repro: no reference [%s] [%s] [%s] in the reference file\n", table,
                row, col);
        return -1;
    }
    repro_cell_t *c = new_cell(r, table, row, col, ours);
    if (c == NULL) {
        return -1;
    }
    c->ref = f->value;
    snprintf(c->ref_text, sizeof(c->ref_text), "%s", f->text);
    snprintf(c->ref_source, sizeof(c->ref_source), "%s", t->source);
    int info = strcmp(t->check, "info") == 0;
    c->kind = info ? REPRO_INFO : is_paper(t->source) ? REPRO_PAPER : REPRO_SELF;
    snprintf(c->check, sizeof(c->check), "%s", info ? "info" : "rounded like the reference");
    c->match = info ? -1 : printed_matches(f->text, f->value, ours);
    int dec, sig;
    precision_of(f->text, &dec, &sig);
    c->digits = sig > 0 ? -1 : dec + 2;
    return 0;
}

int repro_own_cell(repro_t *r, const char *table, const char *row, const char *col, double ref,
                   double ours, repro_kind_t kind, const char *check, int match, int digits)
{
    const repro_table_t *t = repro_find_table(r, table);
    repro_cell_t *c = t != NULL ? new_cell(r, table, row, col, ours) : NULL;
    if (c == NULL) {
        fprintf(stderr, "dpm-sim repro: no table %s\n", table);
        return -1;
    }
    const repro_ref_t *f = repro_find_ref(r, table, row, col);
    c->ref = ref;
    if (f != NULL) {
        snprintf(c->ref_text, sizeof(c->ref_text), "%s", f->text);
    } else if (!isnan(ref)) {
        snprintf(c->ref_text, sizeof(c->ref_text), "%.6g", ref);
    }
    snprintf(c->ref_source, sizeof(c->ref_source), "%s", t->source);
    c->kind = kind;
    snprintf(c->check, sizeof(c->check), "%s", check);
    c->match = kind == REPRO_INFO ? -1 : match != 0;
    c->digits = digits;
    return 0;
}

void repro_count(const repro_t *r, repro_kind_t kind, const char *table, size_t *matched,
                 size_t *counted)
{
    *matched = *counted = 0;
    for (size_t i = 0; i < r->ncells; i++) {
        const repro_cell_t *c = &r->cells[i];
        if (c->kind != kind || (table != NULL && strcmp(c->table, table) != 0)) {
            continue;
        }
        (*counted)++;
        *matched += c->match == 1;
    }
}

void repro_format_ours(const repro_cell_t *c, char *buf, size_t cap)
{
    if (isnan(c->ours)) {
        snprintf(buf, cap, "-");
    } else if (c->digits < 0) {
        snprintf(buf, cap, "%.4g", c->ours);
    } else {
        snprintf(buf, cap, "%.*f", c->digits, c->ours);
    }
}

int repro_load_paper(repro_t *r, const char *data_dir, const char *name)
{
    char path[4096], err[512];
    snprintf(path, sizeof(path), "%s/paper-%s.ref", data_dir, name);
    if (repro_load_refs(r, path, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim repro: %s\n", err);
        return -1;
    }
    return 0;
}

/* ---- moments ------------------------------------------------------------------------------ */

void repro_moments_add(repro_moments_t *m, double x)
{
    m->sum += x;
    m->sq += x * x;
    m->n++;
}

double repro_moments_mean(const repro_moments_t *m)
{
    return m->n ? m->sum / m->n : NAN;
}

double repro_moments_sd_pop(const repro_moments_t *m)
{
    double u = repro_moments_mean(m);
    return m->n ? sqrt(fmax(m->sq / m->n - u * u, 0.0)) : NAN;
}

double repro_moments_sd(const repro_moments_t *m)
{
    double mu = repro_moments_mean(m);
    return sqrt(fmax(m->sq - m->n * mu * mu, 0.0) / (m->n - 1));
}

/* ---- writers ------------------------------------------------------------------------------ */

int repro_save_json(const repro_t *r, const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.json", dir, name);
    FILE *f = fopen(path, "w");
    int st = f != NULL && repro_write_json(r, f) == 0 ? 0 : -1;
    st |= f != NULL && fclose(f) == 0 ? 0 : -1;
    return st;
}

static FILE *open_md(const char *dir, const char *name, const char *fmt, va_list ap)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.md", dir, name);
    FILE *f = fopen(path, "w");
    if (f != NULL) {
        vfprintf(f, fmt, ap);
    }
    return f;
}

FILE *repro_open_md(const char *dir, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    FILE *f = open_md(dir, name, fmt, ap);
    va_end(ap);
    return f;
}

int repro_write_outputs(const repro_t *r, const char *dir, const char *name, const char *fmt, ...)
{
    int st = repro_save_json(r, dir, name);
    va_list ap;
    va_start(ap, fmt);
    FILE *f = open_md(dir, name, fmt, ap);
    va_end(ap);
    if (f == NULL) {
        return -1;
    }
    repro_write_sections(r, f);
    return (fclose(f) == 0 ? 0 : -1) | st;
}

static const char *kind_name(repro_kind_t k)
{
    return k == REPRO_PAPER ? "paper" : k == REPRO_SELF ? "self-check" : "info";
}

int repro_write_json(const repro_t *r, FILE *f)
{
    jw_t w;
    jw_file(&w, f);
    jw_raw(&w, "{\"cells\": [");
    for (size_t i = 0; i < r->ncells; i++) {
        const repro_cell_t *c = &r->cells[i];
        double rel = isnan(c->ref) || isnan(c->ours) || c->ref == 0.0
                         ? NAN
                         : fabs(c->ours - c->ref) / fabs(c->ref);
        jw_raw(&w, "%s\n  {\"table\": ", i ? "," : "");
        jw_str(&w, c->table);
        jw_raw(&w, ", \"row\": ");
        jw_str(&w, c->row);
        jw_raw(&w, ", \"col\": ");
        jw_str(&w, c->col);
        jw_raw(&w, ", \"paper\": ");
        jw_num(&w, c->kind == REPRO_PAPER || is_paper(c->ref_source) ? c->ref : NAN, 15);
        jw_raw(&w, ", \"ref\": ");
        jw_num(&w, c->ref, 15);
        jw_raw(&w, ", \"ref_text\": ");
        jw_str(&w, c->ref_text);
        jw_raw(&w, ", \"ref_source\": ");
        jw_str(&w, c->ref_source);
        jw_raw(&w, ", \"ours\": ");
        jw_num(&w, c->ours, 17);
        jw_raw(&w, ", \"rel_err\": ");
        jw_num(&w, rel, 6);
        jw_raw(&w, ", \"check\": ");
        jw_str(&w, c->check);
        jw_raw(&w, ", \"counts_as\": \"%s\", \"match\": %s}", kind_name(c->kind),
               c->match < 0 ? "null"
               : c->match   ? "true"
                            : "false");
    }
    jw_raw(&w, "\n]}\n");
    return jw_error(&w) ? -1 : 0;
}

/* Position of name in axis[], appended if new; -1 when the axis is full. */
static int axis_index(const char *axis[], int *n, const char *name)
{
    for (int i = 0; i < *n; i++) {
        if (strcmp(axis[i], name) == 0) {
            return i;
        }
    }
    if (*n >= MAX_AXIS) {
        return -1;
    }
    axis[*n] = name;
    return (*n)++;
}

static void format_pair(char *buf, size_t cap, const repro_cell_t *c)
{
    char o[48];
    repro_format_ours(c, o, sizeof(o));
    snprintf(buf, cap, "%s / %s%s", c->ref_text[0] ? c->ref_text : "-", o,
             c->match == 0 ? " **MISMATCH**" : "");
}

static void write_section(const repro_t *r, FILE *f, const repro_table_t *t)
{
    const char *rows[MAX_AXIS], *cols[MAX_AXIS];
    const repro_cell_t *grid[MAX_AXIS][MAX_AXIS];
    int nr = 0, nc = 0, total = 0;
    size_t m = 0, n = 0, mp = 0, np = 0;
    memset(grid, 0, sizeof(grid));
    for (size_t i = 0; i < r->ncells; i++) {
        const repro_cell_t *c = &r->cells[i];
        if (strcmp(c->table, t->name) != 0) {
            continue;
        }
        int ri = axis_index(rows, &nr, c->row), ci = axis_index(cols, &nc, c->col);
        if (ri >= 0 && ci >= 0) {
            grid[ri][ci] = c;
        }
        total++;
    }
    if (total == 0) {
        return;
    }
    repro_count(r, REPRO_PAPER, t->name, &mp, &np);
    repro_count(r, REPRO_SELF, t->name, &m, &n);
    fprintf(f, "## %s\n\nReference: %s.", t->title[0] ? t->title : t->name, t->source);
    if (t->note[0]) {
        fprintf(f, " %s", t->note);
    }
    fprintf(f, "\n\nEach cell: reference / ours. ");
    if (np > 0) {
        fprintf(f, "%zu of %zu match the paper.", mp, np);
    } else if (n > 0) {
        fprintf(f, "%zu of %zu self-checks hold.", m, n);
    } else {
        fprintf(f, "Shown for comparison (not counted).");
    }
    fprintf(f, "\n\n");
    if (2 * total < nr * nc) { /* mostly empty as a grid: one line per cell */
        fprintf(f, "| row | col | reference / ours |\n|---|---|---|\n");
        for (size_t i = 0; i < r->ncells; i++) {
            const repro_cell_t *c = &r->cells[i];
            char pair[128];
            if (strcmp(c->table, t->name) == 0) {
                format_pair(pair, sizeof(pair), c);
                fprintf(f, "| %s | %s | %s |\n", c->row, c->col, pair);
            }
        }
        fprintf(f, "\n");
        return;
    }
    fprintf(f, "| |");
    for (int k = 0; k < nc; k++) {
        fprintf(f, " %s |", cols[k]);
    }
    fprintf(f, "\n|---|");
    for (int k = 0; k < nc; k++) {
        fprintf(f, "---|");
    }
    fprintf(f, "\n");
    for (int i = 0; i < nr; i++) {
        fprintf(f, "| %s |", rows[i]);
        for (int k = 0; k < nc; k++) {
            char pair[128] = "";
            if (grid[i][k] != NULL) {
                format_pair(pair, sizeof(pair), grid[i][k]);
            }
            fprintf(f, " %s |", pair);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\n");
}

void repro_write_sections(const repro_t *r, FILE *f)
{
    for (size_t i = 0; i < r->ntables; i++) {
        write_section(r, f, &r->tables[i]);
    }
}
