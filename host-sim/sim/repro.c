/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim repro: run the paper scenarios (host-sim/scenarios/paper-*.scn) and write
 * DIR/README.md, the paper's numbers beside ours for every reproduced paper.
 *
 *   dpm-sim repro --out DIR [--quick] [--threads T] [--no-plot] SCENARIO...
 *
 * Per scenario NAME:
 *   [campaign] sections with paper.* references run as a simulation (the scenario's mode; with
 *     --quick, inprocess scenarios use 1/100 of the devices and at most 3 runs); ours is the
 *     mean over runs of ||D-hat| - |D|| of the first pair of groups (metric scale), matched
 *     when within paper.tolerance times the paper's value. Outputs in DIR/NAME/.
 *   [plan] sections are answered by the planner (minimum eps), matched when ours rounded to 2
 *     decimals equals the printed value ('-' = no eps), and each answer is checked by simulation
 *     in exact mode (coverage at the confidence, one-sided binomial p >= 1e-3).
 *   DIR/NAME.json ({"cells": [{table, row, col, paper, ours, rel_err, check, match}]}, the
 *   build/repro schema) and DIR/NAME.md.
 * DIR/README.md: one summary row per reproduction (with dpm-repro's DIR/disparity.json when it
 * is there: run `dpm-repro disparity --out DIR` first), then the headline tables.
 * Exit status: 0 when every counted cell matches, 1 when one does not, 2 on errors. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cli.h"
#include "sim/json_read.h"
#include "sim/output.h"
#include "sim/planner.h"
#include "sim/session.h"

#define MAX_SCENARIOS 16
#define CHECK_RUNS 200u
#define QUICK_CHECK_RUNS 50u

typedef struct {
    char table[64], row[48], col[96], check[32];
    double paper, ours;
    int counted, match;
    int digits; /* decimals shown; < 0: 3 significant digits */
} rcell_t;

typedef struct {
    char name[64], description[160], path[512];
    rcell_t *cell;
    size_t n, cap;
    int is_plan_file, is_sim_file;
} rfile_t;

static rcell_t *add_cell(rfile_t *f, const char *table, const char *row, const char *col,
                         double paper, double ours)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        rcell_t *nc = realloc(f->cell, cap * sizeof(*nc));
        if (nc == NULL) {
            return NULL;
        }
        f->cell = nc;
        f->cap = cap;
    }
    rcell_t *c = &f->cell[f->n++];
    memset(c, 0, sizeof(*c));
    snprintf(c->table, sizeof(c->table), "%s", table);
    snprintf(c->row, sizeof(c->row), "%s", row);
    snprintf(c->col, sizeof(c->col), "%s", col);
    c->paper = paper;
    c->ours = ours;
    return c;
}

static void count(const rfile_t *f, size_t *matched, size_t *counted)
{
    *matched = *counted = 0;
    for (size_t i = 0; i < f->n; i++) {
        *counted += f->cell[i].counted;
        *matched += f->cell[i].counted && f->cell[i].match;
    }
}

/* ---- plans ------------------------------------------------------------------------------- */

static int rounded_equal(double ours, double paper)
{
    if (isnan(paper) || isnan(ours)) {
        return isnan(paper) && isnan(ours);
    }
    return llround(ours * 100.0) == llround(paper * 100.0);
}

static void k_name(double k, char *buf, size_t cap)
{
    double e = log10(k);
    if (e == floor(e)) {
        snprintf(buf, cap, "K=1e%d", (int)e);
    } else {
        snprintf(buf, cap, "K=%.0f", k);
    }
}

static int run_plan(rfile_t *f, const sim_plan_spec_t *pl, int quick)
{
    for (uint32_t r = 0; r < pl->ndevices; r++) {
        for (uint32_t c = 0; c < pl->nerror; c++) {
            sim_plan_question_t q;
            sim_plan_answer_t a;
            char err[256], row[48], col[96], table[64];
            memset(&q, 0, sizeof(q));
            double alpha = pl->scale_metric ? 2.0 * pl->error[c] : pl->error[c];
            if (dpm_disp_plan_init(
                    &q.plan, pl->mechanism == DPM_MECH_ID_TUPLE_MR ? DPM_DISP_MR : DPM_DISP_ML,
                    pl->split_paper ? DPM_DISP_SPLIT_PAPER : DPM_DISP_SPLIT_CORRECT, alpha,
                    pl->confidence) != DPM_OK) {
                fprintf(stderr, "dpm-sim repro: plan '%s' refused by the planner\n", pl->name);
                return -1;
            }
            q.plan.bound = pl->bound_normal ? DPM_DISP_BOUND_NORMAL : DPM_DISP_BOUND_CHEBYSHEV;
            q.error = pl->error[c];
            q.scale_metric = pl->scale_metric;
            q.devices = pl->devices[r];
            if (sim_plan_solve(&q, &a) != 0) {
                return -1;
            }
            k_name(pl->devices[r], row, sizeof(row));
            snprintf(col, sizeof(col), "alpha=%g", pl->error[c]);
            double paper = pl->npaper ? pl->paper_eps[r * pl->nerror + c] : NAN;
            rcell_t *cell = add_cell(f, pl->name, row, col, paper, a.eps);
            if (cell == NULL) {
                return -1;
            }
            snprintf(cell->check, sizeof(cell->check), "rounded 2 decimals");
            cell->digits = 2;
            cell->counted = pl->npaper > 0;
            cell->match = rounded_equal(a.eps, paper);
            if (sim_plan_check(&q, &a, quick ? QUICK_CHECK_RUNS : CHECK_RUNS, 1000u * r + c, err,
                               sizeof(err)) != 0) {
                fprintf(stderr, "dpm-sim repro: %s\n", err);
                return -1;
            }
            if (a.checked) {
                snprintf(table, sizeof(table), "%s simulated", pl->name);
                cell =
                    add_cell(f, table, row, col, pl->confidence, (double)a.within / (double)a.runs);
                if (cell == NULL) {
                    return -1;
                }
                snprintf(cell->check, sizeof(cell->check), "coverage, binomial p>=1e-3");
                cell->digits = 3;
                cell->counted = 1;
                cell->match = a.pass;
            }
        }
    }
    return 0;
}

/* ---- campaigns ----------------------------------------------------------------------------- */

static int run_campaigns(rfile_t *f, sim_scenario_t *sc, const char *dir, unsigned threads,
                         int quick, int plot)
{
    sim_run_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.mode = sc->mode == SIM_MODE_NETWORK ? SIM_MODE_EXACT : sc->mode;
    ro.threads = threads;
    if (quick && ro.mode == SIM_MODE_INPROCESS) {
        for (uint32_t k = 0; k < sc->ndevices; k++) {
            sc->devices[k] = sc->devices[k] / 100 < 1000 ? 1000 : sc->devices[k] / 100;
        }
        sc->runs = sc->runs < 3 ? sc->runs : 3;
    }
    sim_session_t s;
    char err[512], sub[4096];
    if (sim_session_run(sc, &ro, &s, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim repro: %s: %s\n", f->name, err);
        sim_session_free(&s);
        return -1;
    }
    snprintf(sub, sizeof(sub), "%s/%s", dir, f->name);
    int st = sim_output_write(sub, sc, &ro, &s, err, sizeof(err));
    if (st != 0) {
        fprintf(stderr, "dpm-sim repro: %s\n", err);
    } else if (plot) {
        st = sim_cli_plot(SIM_PLOT_SCRIPT, sub) < 0 ? -1 : 0;
    }
    for (size_t i = 0; i < s.n && st == 0; i++) {
        const sim_result_t *r = &s.res[i];
        const sim_campaign_spec_t *spec = r->cfg.spec;
        sim_item_summary_t sm;
        char table[64], row[48], col[96];
        sim_result_summary(r, 0, r->cfg.d, &sm); /* the first pair's disparity */
        snprintf(table, sizeof(table), "%s", spec->name);
        snprintf(row, sizeof(row), "eps=%s", spec->eps_text[r->cfg.eps_index]);
        snprintf(col, sizeof(col), "%s %s: mean abs(abs(D-hat) - abs(D)), K=%" PRIu64 ", %u runs",
                 sim_mech_name(spec->mechanism), r->cfg.paper ? "paper split" : "SDK split",
                 r->devices, r->runs);
        double paper = spec->npaper ? spec->paper_mean_abs_gap_err[r->cfg.eps_index] : NAN;
        rcell_t *c = add_cell(f, table, row, col, paper, sm.paper_abs_error);
        if (c == NULL) {
            st = -1;
            break;
        }
        snprintf(c->check, sizeof(c->check), "ratio<=%g", spec->paper_tolerance);
        c->digits = -1;
        c->counted = !isnan(paper);
        c->match =
            c->counted && paper > 0.0 && sm.paper_abs_error > 0.0 &&
            fmax(sm.paper_abs_error / paper, paper / sm.paper_abs_error) <= spec->paper_tolerance;
    }
    sim_session_free(&s);
    return st;
}

/* ---- files ---------------------------------------------------------------------------------- */

static void write_cells_json(FILE *fp, const rfile_t *f)
{
    fprintf(fp, "{\"cells\": [");
    for (size_t i = 0; i < f->n; i++) {
        const rcell_t *c = &f->cell[i];
        double rel = isnan(c->paper) || isnan(c->ours) || c->paper == 0.0
                         ? NAN
                         : fabs(c->ours - c->paper) / fabs(c->paper);
        fprintf(fp, "%s\n  {\"table\": ", i ? "," : "");
        sim_json_string(fp, c->table);
        fprintf(fp, ", \"row\": ");
        sim_json_string(fp, c->row);
        fprintf(fp, ", \"col\": ");
        sim_json_string(fp, c->col);
        fprintf(fp, ", \"paper\": ");
        sim_json_number(fp, c->paper);
        fprintf(fp, ", \"ours\": ");
        sim_json_number(fp, c->ours);
        fprintf(fp, ", \"rel_err\": ");
        sim_json_number(fp, rel);
        fprintf(fp, ", \"check\": ");
        sim_json_string(fp, c->check);
        fprintf(fp, ", \"match\": %s}", !c->counted ? "null" : c->match ? "true" : "false");
    }
    fprintf(fp, "]}\n");
}

static void fmt(char *buf, size_t cap, double x, int digits)
{
    if (isnan(x)) {
        snprintf(buf, cap, "-");
    } else if (digits < 0) {
        snprintf(buf, cap, "%.3g", x);
    } else {
        snprintf(buf, cap, "%.*f", digits, x);
    }
}

/* A table's cells as a grid: rows x cols of "paper / ours". */
static void write_grid(FILE *fp, const rfile_t *f, const char *table)
{
    const char *rows[64], *cols[64];
    int nr = 0, nc = 0;
    for (size_t i = 0; i < f->n; i++) {
        const rcell_t *c = &f->cell[i];
        if (strcmp(c->table, table) != 0) {
            continue;
        }
        int r = 0, k = 0;
        while (r < nr && strcmp(rows[r], c->row) != 0) {
            r++;
        }
        while (k < nc && strcmp(cols[k], c->col) != 0) {
            k++;
        }
        if (r == nr && nr < 64) {
            rows[nr++] = c->row;
        }
        if (k == nc && nc < 64) {
            cols[nc++] = c->col;
        }
    }
    fprintf(fp, "| %s |", table);
    for (int k = 0; k < nc; k++) {
        fprintf(fp, " %s |", cols[k]);
    }
    fprintf(fp, "\n|---|");
    for (int k = 0; k < nc; k++) {
        fprintf(fp, "---|");
    }
    for (int r = 0; r < nr; r++) {
        fprintf(fp, "\n| %s |", rows[r]);
        for (int k = 0; k < nc; k++) {
            for (size_t i = 0; i < f->n; i++) {
                const rcell_t *c = &f->cell[i];
                if (strcmp(c->table, table) == 0 && strcmp(c->row, rows[r]) == 0 &&
                    strcmp(c->col, cols[k]) == 0) {
                    char p[32], o[32];
                    fmt(p, sizeof(p), c->paper, c->digits);
                    fmt(o, sizeof(o), c->ours, c->digits);
                    fprintf(fp, " %s / %s%s |", p, o,
                            !c->counted ? ""
                            : c->match  ? ""
                                        : " **MISMATCH**");
                }
            }
        }
    }
    fprintf(fp, "\n\n");
}

/* The distinct table names of a file, in order. */
static size_t tables_of(const rfile_t *f, const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < f->n; i++) {
        size_t k = 0;
        while (k < n && strcmp(names[k], f->cell[i].table) != 0) {
            k++;
        }
        if (k == n && n < cap) {
            names[n++] = f->cell[i].table;
        }
    }
    return n;
}

static void write_md(FILE *fp, const rfile_t *f, int quick)
{
    size_t matched, counted;
    const char *tables[64];
    count(f, &matched, &counted);
    fprintf(fp,
            "# %s\n\n%s\n\nGenerated by `dpm-sim repro%s` from `%s`. Cells: paper / ours. "
            "**%zu of %zu counted cells match.**\n\n",
            f->name, f->description, quick ? " --quick" : "", f->path, matched, counted);
    if (quick) {
        fprintf(fp, "**QUICK MODE: fewer simulation runs; not the reproduction.**\n\n");
    }
    if (f->is_plan_file) {
        fprintf(fp, "Planner tables: minimum eps (2 decimals, '-' = no eps reaches alpha). "
                    "'simulated' tables: the fraction of exact-mode runs of the planned "
                    "campaign with |error| <= alpha, against the confidence.\n\n");
    }
    if (f->is_sim_file) {
        fprintf(fp,
                "Simulation tables: mean over runs of abs(abs(D-hat) - abs(D)) of the first two "
                "groups, metric scale; a paper value matches within the scenario's "
                "tolerance factor. Outputs and plots: [%s/](%s/).\n\n",
                f->name, f->name);
    }
    size_t nt = tables_of(f, tables, 64);
    for (size_t t = 0; t < nt; t++) {
        fprintf(fp, "## %s\n\n", tables[t]);
        write_grid(fp, f, tables[t]);
    }
}

static int write_file_outputs(const char *dir, const rfile_t *f, int quick)
{
    char path[4096];
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof(path), "%s/%s.%s", dir, f->name, k ? "md" : "json");
        FILE *fp = fopen(path, "w");
        if (fp == NULL) {
            fprintf(stderr, "dpm-sim repro: cannot write %s\n", path);
            return -1;
        }
        if (k) {
            write_md(fp, f, quick);
        } else {
            write_cells_json(fp, f);
        }
        if (fclose(fp) != 0) {
            return -1;
        }
    }
    return 0;
}

/* ---- README ---------------------------------------------------------------------------------- */

/* dpm-repro's disparity.json: matched/counted overall and per table. */
static void readme_disparity(FILE *fp, const char *dir)
{
    char path[4096];
    jr_value_t root;
    snprintf(path, sizeof(path), "%s/disparity.json", dir);
    if (jr_parse_file(path, &root) != 0) {
        fprintf(fp,
                "| Juarez & Korolova 2022 (private disparity), dpm-repro | - | not run: "
                "`dpm-repro disparity --out %s` writes it | [disparity.md](disparity.md) "
                "|\n",
                dir);
        return;
    }
    const jr_value_t *cells = jr_get(&root, "cells");
    size_t matched = 0, counted = 0;
    for (size_t i = 0; cells != NULL && i < cells->n; i++) {
        const jr_value_t *m = jr_get(&cells->items[i], "match");
        if (m != NULL && m->kind == JR_BOOL) {
            counted++;
            matched += m->number != 0.0;
        }
    }
    fprintf(fp,
            "| Juarez & Korolova 2022 (private disparity) | dpm-repro: Tables 1-2 analytic, "
            "Table 2 empirical, Fig. 1, 2, 4, errata | %zu / %zu | "
            "[disparity.md](disparity.md) |\n",
            matched, counted);
    jr_free(&root);
}

static void readme_disparity_tables(FILE *fp, const char *dir)
{
    char path[4096];
    jr_value_t root;
    snprintf(path, sizeof(path), "%s/disparity.json", dir);
    if (jr_parse_file(path, &root) != 0) {
        return;
    }
    const jr_value_t *cells = jr_get(&root, "cells");
    const char *names[128];
    size_t ntab = 0, m[128] = {0}, c[128] = {0}, all[128] = {0};
    for (size_t i = 0; cells != NULL && i < cells->n; i++) {
        const char *t = jr_string(&cells->items[i], "table");
        const jr_value_t *mt = jr_get(&cells->items[i], "match");
        size_t k = 0;
        if (t == NULL) {
            continue;
        }
        while (k < ntab && strcmp(names[k], t) != 0) {
            k++;
        }
        if (k == ntab && ntab < 128) {
            names[ntab++] = t;
        }
        if (k < ntab) {
            all[k]++;
            if (mt != NULL && mt->kind == JR_BOOL) {
                c[k]++;
                m[k] += mt->number != 0.0;
            }
        }
    }
    fprintf(fp, "### dpm-repro disparity: cells per table ([disparity.md](disparity.md))\n\n"
                "| table | cells | counted matched |\n|---|---|---|\n");
    for (size_t k = 0; k < ntab; k++) {
        fprintf(fp, "| %s | %zu | %zu / %zu |\n", names[k], all[k], m[k], c[k]);
    }
    fprintf(fp, "\n");
    jr_free(&root);
}

static int write_readme(const char *dir, rfile_t *files, size_t nfiles, int quick)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/README.md", dir);
    FILE *fp = fopen(path, "w");
    if (fp == NULL) {
        fprintf(stderr, "dpm-sim repro: cannot write %s\n", path);
        return -1;
    }
    fprintf(fp,
            "# Paper reproductions (`make repro`)\n\n"
            "Every number the papers print that we reproduce, the paper's value beside ours. "
            "Generated by `dpm-repro disparity` (analytic tables and the simulations of "
            "spec/disparity-juarez2022.md) and `dpm-sim repro%s` (the scenario files "
            "host-sim/scenarios/paper-*.scn: the planner and the simulator on the paper's "
            "settings). Paper splits are REPRODUCTION ONLY: they do not deliver the stated "
            "eps (see disparity.md, errata); the SDK ships only the correct splits.\n\n",
            quick ? " --quick" : "");
    fprintf(fp, "| paper | reproduction | counted cells matched | details |\n|---|---|---|---|\n");
    readme_disparity(fp, dir);
    for (size_t i = 0; i < nfiles; i++) {
        size_t matched, counted;
        count(&files[i], &matched, &counted);
        fprintf(fp, "| Juarez & Korolova 2022 | dpm-sim: %s | %zu / %zu | [%s.md](%s.md) |\n",
                files[i].description, matched, counted, files[i].name, files[i].name);
    }
    fprintf(fp, "\n## Juarez & Korolova 2022: headline tables (paper / ours)\n\n");
    for (size_t i = 0; i < nfiles; i++) {
        const char *tables[64];
        size_t nt = tables_of(&files[i], tables, 64);
        fprintf(fp, "### %s ([%s.md](%s.md))\n\n", files[i].description, files[i].name,
                files[i].name);
        for (size_t t = 0; t < nt; t++) {
            if (strstr(tables[t], "simulated") == NULL) {
                write_grid(fp, &files[i], tables[t]);
            }
        }
    }
    readme_disparity_tables(fp, dir);
    return fclose(fp) == 0 ? 0 : -1;
}

/* ---- command ------------------------------------------------------------------------------- */

static int repro_one(const char *dir, const char *path, unsigned threads, int quick, int plot,
                     rfile_t *f)
{
    sim_scenario_t *sc = malloc(sizeof(*sc));
    char err[512];
    if (sc == NULL || sim_scenario_load(path, sc, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-sim repro: %s\n", sc == NULL ? "out of memory" : err);
        free(sc);
        return -1;
    }
    snprintf(f->name, sizeof(f->name), "%s", sc->name);
    snprintf(f->description, sizeof(f->description), "%s",
             sc->description[0] ? sc->description : sc->name);
    snprintf(f->path, sizeof(f->path), "%s", path);
    f->is_plan_file = sc->nplans > 0;
    f->is_sim_file = sc->ncampaigns > 0;
    int st = 0;
    for (uint32_t p = 0; p < sc->nplans && st == 0; p++) {
        st = run_plan(f, &sc->plan[p], quick);
    }
    if (st == 0 && sc->ncampaigns > 0) {
        st = run_campaigns(f, sc, dir, threads, quick, plot);
    }
    if (st == 0) {
        st = write_file_outputs(dir, f, quick);
    }
    size_t matched, counted;
    count(f, &matched, &counted);
    printf("repro %s: %zu/%zu counted cells match\n", f->name, matched, counted);
    for (size_t i = 0; i < f->n; i++) {
        const rcell_t *c = &f->cell[i];
        if (c->counted && !c->match) {
            printf("MISMATCH %s [%s][%s]: paper %.6g, ours %.6g\n", c->table, c->row, c->col,
                   c->paper, c->ours);
        }
    }
    free(sc);
    return st;
}

int sim_cmd_repro(int argc, char **argv)
{
    const char *dir = NULL, *files[MAX_SCENARIOS];
    size_t nfiles = 0;
    int quick = 0, plot = 1;
    unsigned threads = sim_cli_default_threads();
    for (int i = 1; i < argc; i++) {
        uint64_t t;
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
            dir = argv[++i];
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--no-plot") == 0) {
            plot = 0;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc &&
                   sim_cli_u64(argv[++i], &t) == 0 && t >= 1 && t <= SIM_MAX_THREADS) {
            threads = (unsigned)t;
        } else if (argv[i][0] != '-' && nfiles < MAX_SCENARIOS) {
            files[nfiles++] = argv[i];
        } else {
            nfiles = 0;
            break;
        }
    }
    if (dir == NULL || nfiles == 0) {
        fprintf(stderr, "usage: dpm-sim repro --out DIR [--quick] [--threads T] [--no-plot] "
                        "SCENARIO...\n");
        return SIM_EXIT_USAGE;
    }
    if (sim_mkdir_p(dir) != 0) {
        fprintf(stderr, "dpm-sim repro: cannot create %s\n", dir);
        return SIM_EXIT_USAGE;
    }
    rfile_t *out = calloc(nfiles, sizeof(*out));
    int st = out == NULL ? -1 : 0;
    size_t matched_all = 0, counted_all = 0;
    for (size_t i = 0; i < nfiles && st == 0; i++) {
        size_t m, c;
        st = repro_one(dir, files[i], threads, quick, plot, &out[i]);
        count(&out[i], &m, &c);
        matched_all += m;
        counted_all += c;
    }
    if (st == 0) {
        st = write_readme(dir, out, nfiles, quick);
    }
    for (size_t i = 0; out != NULL && i < nfiles; i++) {
        free(out[i].cell);
    }
    free(out);
    if (st != 0) {
        return SIM_EXIT_USAGE;
    }
    printf("dpm-sim repro: %zu/%zu counted cells match; wrote %s/README.md\n", matched_all,
           counted_all, dir);
    return matched_all == counted_all ? SIM_EXIT_OK : SIM_EXIT_CHECK;
}
