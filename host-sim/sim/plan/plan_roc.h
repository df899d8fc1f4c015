/* SPDX-License-Identifier: Apache-2.0 */
/* dpm-sim plan for roc_hist: "how many devices, or which ε, for |AUC error| <= x at confidence
 * c", answered from the analytic variances of the roc_hist estimator (estimate/roc.h), planned
 * with a margin and checked by simulation in exact mode with a find-K search (plan_check.h: the
 * answer is the K shown to reach c). Trust model: local DP (label-DP: each device's histogram
 * is noised on the device).
 *
 * Model: every device holds `examples` examples of one binormal(auc, base_rate) group scored as
 * in roc_sim.h, counted in `bins` uniform score bins. Expected per-device counts pos_b =
 * E pi Pr[bin b | positive], neg_b = E (1 - pi) Pr[bin b | negative] give, for K devices,
 *     var_noise = s²(ε) F / K,  s²(ε) = 2p / (1 - p)², p = e^(-ε/2)   (dpm_roc_plan_factors)
 *     var_sampling = G / K                                               (examples independent)
 * and the binned AUC of the expected counts, A_b.
 *
 * Which error (--error-kind):
 *   model (default)  AUC-hat against the model's AUC A: what a reader means by "the AUC". The
 *                    error is noise + sampling of the examples + binning; binning is a bias
 *                    b = A_b - A that no ε or K removes (if |b| >= x there is no answer: use more
 *                    bins). Target: Pr[|N(b, var_noise + var_sampling)| <= x] >= c (normal bound)
 *                    or b² + var <= (1 - c) x² (Chebyshev, on the mean square error).
 *   noise            AUC-hat against the reporting devices' own binned AUC: the mechanism's noise
 *                    only. Target: var_noise <= (x / k)², k = z_{(1+c)/2} (normal) or
 *                    1 / sqrt(1 - c) (Chebyshev).
 * Given K: the largest s² allowed, solved for p = ((v + 1) - sqrt(2v + 1)) / v, ε = -2 ln p;
 * the campaign ε is the smallest Q16.16 at or above it (sim_plan_eps_up). The margin: the same
 * with the largest sd at the design coverage (normal bound, plan_check.h) when that is smaller.
 * Given ε: the smallest K at the ε a campaign implements, the given ε rounded DOWN to Q16.16 as
 * the SDK parses it (plan_check.h); an ε that rounds to 0 is refused, not planned.
 * Check: exact mode, R runs; noise: over one realized population of K devices (two identical
 * groups), against its binned AUC; model: each run on its own freshly realized population (the
 * sampling of the examples is part of the error), against the model's AUC. */
#ifndef DPM_SIM_PLAN_ROC_H
#define DPM_SIM_PLAN_ROC_H

#include <stddef.h>
#include <stdint.h>

#include "sim/plan/plan_check.h"

typedef enum { SIM_ROC_ERROR_MODEL = 0, SIM_ROC_ERROR_NOISE = 1 } sim_roc_error_t;

typedef struct {
    double auc, base_rate; /* the score model */
    uint32_t examples, bins;
    double error, confidence;
    int bound_chebyshev;
    sim_roc_error_t kind;
    double devices; /* given K (0: plan it) */
    double eps;     /* given ε (0: plan it) */
    uint32_t runs;  /* per check (0: sim_plan_default_runs) */
} sim_roc_plan_t;

typedef struct {
    double factor;         /* F (noise) */
    double sampling;       /* G (sampling; used for the model error) */
    double auc_binned;     /* A_b: binned AUC of the model's expected counts */
    double bias;           /* model error: A_b - A (binning); noise error: 0 */
    double k;              /* the bound's multiplier (normal z or Chebyshev 1 / sqrt(1 - c)) */
    double sd_max;         /* the largest sd of AUC-hat the target allows (with the bias) */
    double eps, devices;   /* the answer at the bound (NaN: none, see none) */
    double eps_campaign;   /* the campaign's Q16.16 ε: given ε rounded down, planned ε up */
    double sd;             /* predicted sd of AUC-hat at the answer (the error's kind) */
    uint32_t runs;         /* per check */
    double design;         /* the check's design coverage c_d (plan_check.h) */
    double sd_design_max;  /* the largest sd at c_d (and the bound) */
    double design_devices; /* K with the margin (given K: that K) */
    double design_eps;     /* campaign ε with the margin (given ε: eps_campaign) */
    const char *none;      /* why there is no answer, or NULL */
    int checked;
    const char *why;
    double truth; /* the check's truth (the last check; model error: the model's AUC) */
    sim_plan_search_t search;
} sim_roc_plan_answer_t;

/* Expected per-device counts pos[b], neg[b] of the planner's model: `examples` examples of
 * binormal(auc, base_rate) scored as in roc_sim.h, in `bins` uniform score bins. */
void sim_roc_plan_model_counts(double auc, double base_rate, uint32_t examples, uint32_t bins,
                               double *pos, double *neg);
/* The largest sd with Pr[|N(b, sd²)| <= x] >= c (normal), or b² + sd² <= (1 - c) x²
 * (Chebyshev); NaN when none (|b| too large). */
double sim_roc_plan_largest_sd(double b, double x, double c, int chebyshev);
/* Predicted sd of AUC-hat (the question's error kind, without the bias) at K devices and a
 * campaign ε, from a solved answer's factors. */
double sim_roc_plan_sd(const sim_roc_plan_t *q, const sim_roc_plan_answer_t *a, double devices,
                       double eps_campaign);
/* Analytic answer, with the margin. 0 (a->none says when no ε or K reaches it), or -1 (bad
 * question; a->none says why when the given ε rounds down to 0). */
int sim_roc_plan_solve(const sim_roc_plan_t *q, sim_roc_plan_answer_t *a);
/* Runs of one check at K devices and a campaign ε (from seed): within = runs with |AUC-hat -
 * truth| <= x; *truth the last run's. Exposed for the tests. 0, or -1 with a message. */
int sim_roc_plan_check_at(const sim_roc_plan_t *q, double devices, double eps_campaign,
                          uint32_t runs, uint64_t seed, uint32_t *within, double *truth,
                          double *sum_sq, char *err, size_t errcap);
/* The find-K check of a solved answer (plan_check.h), each check's line to out (may be NULL).
 * 0, or -1 with a message. */
int sim_roc_plan_check(const sim_roc_plan_t *q, sim_roc_plan_answer_t *a, uint64_t seed, FILE *out,
                       char *err, size_t errcap);
/* `dpm-sim plan --mechanism roc_hist ...` */
int sim_cmd_plan_roc(int argc, char **argv);

#endif /* DPM_SIM_PLAN_ROC_H */
