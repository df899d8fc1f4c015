/* SPDX-License-Identifier: Apache-2.0 */
/* Reproduction cells: one reproduced number beside its reference, the one cell type and the one
 * writer behind `dpm-sim repro` (build/repro/<paper>.json and .md).
 *
 * References come from one file per paper (host-sim/scenarios/paper-<name>.ref, format below);
 * the code computes "ours" and never holds a reference number. Every cell says where its
 * reference comes from (ref_source) and what it counts as:
 *   paper       the reference is a number the paper printed (`paper` holds it)
 *   self-check  any other reference: the spec's derivations, the authors' notebook, an analytic
 *               formula (Eq. 19/20), the simulated population's truth, a simulator property
 *   info        shown for comparison, not counted
 * so that "matches the paper" and self-checks are counted apart.
 *
 * Reference file: '#' comments, blank lines, then tables:
 *   [table NAME]
 *   title = Table 1: minimum eps ...                shown as the section title
 *   source = paper Table 1                          ref_source of every cell; "paper ..." makes
 *                                                   its cells paper cells
 *   check = printed                                 printed (default): ours, rounded like the
 *                                                   reference is written (its decimals, or its
 *                                                   significant digits in e-notation), equals it;
 *                                                   '-' (no value exists) matches ours = none.
 *                                                   info: not counted. Other checks (a
 *                                                   statistical test) are the code's, which
 *                                                   names them.
 *   note = free text                                shown under the title
 *   layout = grid                                   grid (default) or list
 *   | K | M_R alpha=0.1 | M_R alpha=0.01 |          grid: the header row (first cell ignored)
 *   | K=1e5 | 1.86 | - |                            then one row per label; an empty cell: none
 *   | row | col | value |                           list: a header, then one line per cell */
#ifndef DPM_SIM_REPRO_CELLS_H
#define DPM_SIM_REPRO_CELLS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { REPRO_PAPER = 0, REPRO_SELF = 1, REPRO_INFO = 2 } repro_kind_t;

typedef struct {
    char table[48], row[64], col[96];
    char ref_text[40];   /* the reference as written ("1.86", "-", "2.908e-01"), "" for none */
    double ref;          /* its value (NaN for "-" or none) */
    double ours;         /* NaN: none (e.g. no eps reaches the target) */
    char ref_source[96]; /* "paper Table 1", "sdk/docs/tuple.md §Table 1", "analytic", ... */
    char check[48];      /* how ours was judged */
    repro_kind_t kind;
    int match;  /* 1 / 0 (info: -1) */
    int digits; /* decimals shown for ours (< 0: 4 significant digits) */
} repro_cell_t;

/* A table of the reference file (or one the code declares for its own cells). */
typedef struct {
    char name[48], title[160], source[96], check[32], note[512];
} repro_table_t;

typedef struct {
    char table[48], row[64], col[96], text[40];
    double value;
} repro_ref_t;

typedef struct {
    repro_table_t *tables;
    size_t ntables, tcap;
    repro_ref_t *refs;
    size_t nrefs, rcap;
    repro_cell_t *cells;
    size_t ncells, ccap;
    int quick;
    char summary[160]; /* optional: said after the "matches the paper N/M" count */
    size_t explained;  /* paper cells that miss with a measured cause (FedAUC's account) */
} repro_t;

/* Load a reference file into r (r zeroed first by the caller or repro_free'd). 0, or -1 with
 * "PATH:LINE: message" in err. */
int repro_load_refs(repro_t *r, const char *path, char *err, size_t errcap);
/* The paper's references <data_dir>/paper-<name>.ref into r (repro_load_refs): 0, or -1 with
 * "dpm-sim repro: PATH:LINE: message" on stderr. */
int repro_load_paper(repro_t *r, const char *data_dir, const char *name);
void repro_free(repro_t *r);

/* Declare a table for cells the code references itself (no-op if the file declared it). */
void repro_table(repro_t *r, const char *name, const char *title, const char *source,
                 const char *note);
/* One table to declare (repro_table's arguments); repro_tables declares n of them in order. */
typedef struct {
    const char *name, *title, *source, *note;
} repro_table_def_t;
void repro_tables(repro_t *r, const repro_table_def_t *t, size_t n);
const repro_table_t *repro_find_table(const repro_t *r, const char *name);
const repro_ref_t *repro_find_ref(const repro_t *r, const char *table, const char *row,
                                  const char *col);

/* A cell judged against the file's reference (the table's check). -1 (with a message on stderr)
 * when the file has no such reference: the code and the file disagree about a label. */
int repro_ref_cell(repro_t *r, const char *table, const char *row, const char *col, double ours);
/* A cell with the code's own reference and judgement (match: 1, 0; kind REPRO_INFO ignores
 * it). The table must be declared (file or repro_table). */
int repro_own_cell(repro_t *r, const char *table, const char *row, const char *col, double ref,
                   double ours, repro_kind_t kind, const char *check, int match, int digits);

/* Counted cells of a kind (REPRO_PAPER or REPRO_SELF) and how many match; table may be NULL
 * (all) or a table name. */
void repro_count(const repro_t *r, repro_kind_t kind, const char *table, size_t *matched,
                 size_t *counted);

/* Formatting "1.86", "-", "2.908e-01" like the reference, or ours per the cell's digits. */
void repro_format_ours(const repro_cell_t *c, char *buf, size_t cap);

/* Running sums of a quantity over runs. mean: NaN with none; sd_pop: the population standard
 * deviation (divisor n, as the FHAUC paper reports: sdk/docs/dpauc.md §Re-simulation); sd: the
 * sample one (divisor n - 1). */
typedef struct {
    double sum, sq;
    uint32_t n;
} repro_moments_t;
void repro_moments_add(repro_moments_t *m, double x);
double repro_moments_mean(const repro_moments_t *m);
double repro_moments_sd_pop(const repro_moments_t *m);
double repro_moments_sd(const repro_moments_t *m);

/* <dir>/<name>.json: repro_write_json. 0, or -1 when it cannot be written. */
int repro_save_json(const repro_t *r, const char *dir, const char *name);
/* <dir>/<name>.md opened for writing with its header (fmt, printf's) written first: every
 * paper's markdown starts so. NULL when it cannot be opened. */
FILE *repro_open_md(const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* {"cells": [{"table", "row", "col", "paper", "ref", "ref_text", "ref_source", "ours",
 * "rel_err", "check", "counts_as", "match"}]}: "paper" is the paper's printed number (null for a
 * cell whose reference is not the paper's, and for a printed '-'); "ref" the reference compared
 * with (null for '-' or none); counts_as "paper" | "self-check" | "info"; match null for info. */
int repro_write_json(const repro_t *r, FILE *f);
/* One markdown section per table: title, source, note, counts, then "reference / ours" cells
 * as a grid (or a list when the grid would be mostly empty); mismatches marked. */
void repro_write_sections(const repro_t *r, FILE *f);
/* The usual outputs: DIR/name.json (repro_save_json), then DIR/name.md: its header (fmt, ...)
 * and the sections. 0, or -1 when either file cannot be written. */
int repro_write_outputs(const repro_t *r, const char *dir, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* DPM_SIM_REPRO_CELLS_H */
