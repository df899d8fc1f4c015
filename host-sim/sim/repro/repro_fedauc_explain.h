/* SPDX-License-Identifier: Apache-2.0 */
/* Why a FedAUC reproduction cell misses the paper, measured (issue 18 item 8): every counted cell
 * of `dpm-sim repro fedauc` is also run with the paper's mechanism (continuous Laplace in double
 * precision, same scales, same split, same uniforms; RR with the paper's rho in double), and for
 * each cell outside +-20% this module gives the analytic account:
 *  - per noise term (localP, localSum), the AUC variance it adds to first order (delta method,
 *    sdk/docs/fedauc.md §Delta method: dAUC = (dS - c dP) / (P N)) with continuous Laplace
 *    (2 t^2 per draw) and with the
 *    SDK's discrete Laplace (2 e^{-1/t} / (1 - e^{-1/t})^2 per draw), the dominating term and its
 *    variance-weighted median scale t;
 *  - the sampling spread of a standard deviation estimated from n runs (relative standard error
 *    1/sqrt(2 (n - 1)), normal data), and how many of those a value lies outside the +-20% band;
 *  - for RR (Table 5), the spec's analytic sd and the paper's three epochs at that eps.
 * Host-only double arithmetic: nothing here is on the device's noise path. */
#ifndef DPM_SIM_REPRO_FEDAUC_EXPLAIN_H
#define DPM_SIM_REPRO_FEDAUC_EXPLAIN_H

#include <stddef.h>
#include <stdio.h>

/* prob_dlap_var(t) / (2 t^2): below 1 everywhere, about 1 - 1/(12 t^2) for large t, and
 * 4 e^{-1/t} / (2 t^2) -> 0 as t -> 0 (NaN for t <= 0). */
double fa_dlap_var_ratio(double t);
/* Relative standard error of a standard deviation from n runs of normal data: 1/sqrt(2 (n-1)). */
double fa_sd_rel_se(unsigned n);
/* How many standard errors (x * rel_se) x lies outside [ref (1 - tol), ref (1 + tol)]; 0 inside. */
double fa_band_z(double x, double ref, double tol, double rel_se);

/* One noise term of a cell summed over the clients: coef[k] is dAUC / d(noise_k), t[k] the
 * scale of client k's draw (0: no draw). */
typedef struct {
    double var_cont; /* sum coef^2 2 t^2: the AUC variance it adds with continuous Laplace */
    double var_disc; /* sum coef^2 prob_dlap_var(t): with the SDK's discrete Laplace */
    double t_median; /* median of t weighted by coef^2 2 t^2 (the clients that carry it) */
} fa_term_t;

/* 0, or -1 out of memory (a scratch array of k entries). */
int fa_term_of(const double *coef, const double *t, size_t k, fa_term_t *out);

/* One compared cell: the paper's printed sd, ours (SDK), the paper's mechanism, and the
 * analytic terms (Laplace) or the RR references. */
typedef struct {
    char table[48], row[64], col[96]; /* as repro_cell_t */
    double paper, ours, cont;
    int laplace;        /* 1: fedauc_lap (terms[] valid); 0: fedauc_rr */
    fa_term_t terms[2]; /* localP noise, localSum noise (accurate P: no localP term) */
    double rr_sd;       /* RR: the analytic sd (sdk/docs/fedauc.md §Delta method) */
    double epochs[3];   /* Table 5: the paper's E1..E3 at this eps (NaN elsewhere) */
} fa_cell_t;

typedef struct {
    fa_cell_t *cells;
    size_t n, cap;
} fa_cells_t;

int fa_cells_add(fa_cells_t *l, const fa_cell_t *c);
void fa_cells_free(fa_cells_t *l);

/* Cells within +-tol of the paper: by ours and by the paper's mechanism. */
void fa_cells_count(const fa_cells_t *l, double tol, size_t *ours, size_t *cont);

/* Cells outside +-tol by ours whose miss has a measured cause (a verdict other than NOT
 * EXPLAINED): what `dpm-sim repro` accepts in place of a match. */
size_t fa_explained_misses(const fa_cells_t *l, double tol, unsigned runs);

/* The markdown section (every cell outside +-tol by either mechanism: its account and verdict)
 * to md, and one "EXPLAIN ..." line per such cell to log (NULL: none); runs: per cell. */
void fa_explain_write(const fa_cells_t *l, double tol, unsigned runs, int counted, FILE *md,
                      FILE *log);

#endif /* DPM_SIM_REPRO_FEDAUC_EXPLAIN_H */
