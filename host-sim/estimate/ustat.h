/* SPDX-License-Identifier: Apache-2.0 */
/* Server side of ustat_bins and ustat_tree (sdk: dpm/expert/ustat.h; sdk/docs/ustat.md §Protocol 1,
 * sdk/docs/ustat.md §Protocol 2, sdk/docs/ustat.md §What to implement). Host only, doubles. The
 * collector and dpm-sim share it.
 *
 * Every estimator uses the devices' own integer thresholds: a GRR over d values keeps with
 * p = keep / 2^32 and moves to each other value with q = other / 2^32 (keep + (d - 1) other =
 * 2^32 exactly), Hadamard RR keeps its bit with p_h = keep / 2^32. So the de-biasing is exact:
 * E[c_a] = n q + (p - q) h_a for the report histogram c of n reports whose true histogram is h.
 *
 * ---- ustat_bins (Algorithm 1) ----
 * Targets are U-statistics of the QUANTIZED examples (k bins per score, simple rounding):
 *   AUC kernels: the binned AUC, sum over (positive, negative) pairs of [bin+ > bin-] + w [bin+
 *     = bin-], over n+ n-; w = tie_weight (1/2: ties count half, as roc_hist's AUC; 0: Bell et
 *     al.'s strict Eq. 7). Converges to the AUC of the scores as k grows (for continuous scores).
 *   KENDALL: tau_a of the binned pairs, (1 / C(n, 2)) sum_{i<j} sign(y_i - y_j) sign(z_i - z_j)
 *     (ties count 0: with many ties tau_a differs from tau_b).
 * AUC with the public label (kernel AUC): the two classes are separate report populations,
 *   c+ and c- their histograms, n+ n- their (exact) sizes; with h^± = (c^± - n^± q) / (p - q),
 *     AUC = sum_{a,b} K_ab h+_a h-_b / (n+ n-),  K_ab = [a > b] + w [a = b],
 *   in O(k) by prefix sums. Exactly unbiased: h+ and h- are independent and unbiased.
 * AUC with a private label and KENDALL: one report population over d = 2k or k^2 values; the
 *   symmetric U-statistic with kernel matrix A is estimated with the diagonal correction of
 *   sdk/docs/ustat.md §Closed form (pairs i = j excluded: a report is never paired with itself):
 *     U_A = 1/2 [h^T A h - sum_a c_a w_a] / C(n, 2),  w_a = (A_aa - 2q (A 1)_a + q^2 1^T A 1) /
 *     (p - q)^2, h = (c - n q 1) / (p - q),
 *   in O(d^2). KENDALL: A = sign(y - y') sign(z - z'), unbiased for tau_a. Private-label AUC:
 *   the ratio U_f / U_g of the pair kernel f ((positive, negative) pairs ordered, ties w) and the
 *   pair-count kernel g = [label != label'] (U_g C(n, 2) estimates n+ n-): each unbiased, the
 *   ratio consistent.
 * Uncertainty (conditional on the examples: the randomness is the GRR's): the estimate is a
 *   quadratic form in h, whose covariance is Sigma = [diag(n q + (p - q) h) - n q^2 1 1^T -
 *   q (p - q)(h 1^T + 1 h^T) - (p - q)^2 diag(h)] / (p - q)^2 (a sum of one multinomial draw per
 *   report); var = (grad^T Sigma grad + 1/2 tr(A Sigma A Sigma)) (the second term: the
 *   noise-times-noise part, which dominates at small ε or large k), at h, ratios by the delta
 *   method. sd and a normal interval at `confidence`; when fewer than PROB_NORMAL_MIN_EVENTS
 *   effective GRR moves carry the variance (var / jump², jump = the largest change one report
 *   moving between two values makes, (max grad - min grad) / (p - q) by the delta method), the
 *   Poisson-aware interval instead (ci_flags DPM_CI_FEW_EVENTS: at large eps a run holds a
 *   handful of moves; Kendall with k = 2 covered 0.88-0.93 with the normal one). Flags
 *   (estimate/ci_flags.h): DPM_CI_SMALL_N with small_sample; for the private-label AUC
 *   DPM_CI_CLASS_NOISE when Fieller's g of its pair count U_g exceeds 0.05. Coverage:
 *   tests/stat/test_ustat_unbiased.c, tests/stat/test_few_events.c.
 *
 * ---- ustat_tree (protocol 2, hierarchical histograms) ----
 * Per class c and level l = 1 .. depth: n_{c,l} reports on that level (the level is uniform, so
 * about n_c / depth), node estimates
 *   Hadamard level: h_{c,l} = (n_c / n_{c,l}) c_eps WHT(T_{c,l}), T_{c,l}[j] = sum of the sign
 *     (1 - 2 bit) of the reports with row j, c_eps = 1 / (2 p_h - 1);
 *   GRR level:      h_{c,l}(u) = (n_c / n_{c,l}) (count_{c,l}(u) - n_{c,l} q_l) / (p_l - q_l);
 * both unbiased given n_{c,l} >= 1 (the reports of a level are a uniform random subset), levels
 * and classes from independent draws; the root is n_c (public). Per-node variance bounds v_c =
 * max_l n_c^2 / n_{c,l} C_l with C_l = c_eps^2 (Hadamard) or q(1 - q) / (p - q)^2 + (1 - 2q) /
 * (p - q) (GRR): the spec's v = C n alpha with the observed level sizes.
 * AUC: the breadth-first traversal of sdk/docs/ustat.md §Traversal (Bell et al. Eq. 10): at node p
 * (level < depth), with h~_p = max(h_p, sqrt(a v) / 2) and tau = a sqrt(v+ v-), a node whose h~+
 * h~- < tau is discarded and contributes 1/2 (h+_{p0} + h+_{p1})(h-_{p0} + h-_{p1}) (its children's
 * sums: the decision and the value come from independent levels); otherwise it contributes h+_{p1}
 * h-_{p0} and both children are visited; a leaf contributes w h+ h- (w = tie_weight; the paper's
 * 0). AUC = total / (n+ n-), raw (it can leave [0, 1]) and clipped. Without discarding (a_mode
 * FULL) every node is visited and the estimate is exactly unbiased for the binned AUC with ties w;
 * with the threshold rule the error obeys Theorem 3, whose bound is reported (normalized: C alpha^2
 * (2n + (4a + 1) min(n+, n-) + 21 sqrt(2 n C a) / (sqrt(a) - 1)) / (n+ n-), C = max_c v_c / (n_c
 * alpha)). a: given, or chosen to minimize that bound's a-dependent part. Memory: 2^(depth + 1)
 * sums per class.
 *
 * Undefined estimates (never NaN or Inf; reason says why): no reports, an empty class (AUC),
 * fewer than 2 reports (U-statistics), a level without reports of a class (tree), an estimated
 * pair count <= 0 (private-label AUC). Small samples are flagged when sd > 0.1 (bins) or the
 * Theorem 3 root bound > 0.1 (tree), or a class has fewer than 10 reports on some level. */
#ifndef DPM_HOST_ESTIMATE_USTAT_H
#define DPM_HOST_ESTIMATE_USTAT_H

#include <stdint.h>

#include "dpm/config.h"
#include "dpm/status.h"
#include "dpm/expert/ustat.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_USTAT_EST_MAX_DOMAIN DPM_MAX_GRR_K
#define DPM_USTAT_EST_MAX_DEPTH DPM_USTAT_MAX_DEPTH

typedef struct {
    int defined;
    const char *reason; /* "" when defined */
    int small_sample;
    double value; /* AUC (raw: can leave [0, 1]) or tau_a (can leave [-1, 1]) */
    double value_clipped;
    double sd;           /* ustat_bins: the plug-in sd; ustat_tree: sqrt of Theorem 3's bound */
    double ci_lo, ci_hi; /* ustat_bins: value -+ z sd, or the Poisson-aware interval */
    double n_pos, n_neg; /* AUC: class sizes (exact when public, estimated when private) */
    unsigned ci_flags;   /* ustat_bins (estimate/ci_flags.h): 0 = the calibrated claim */
    double events;       /* ustat_bins: effective GRR moves, var / jump² */
} dpm_ustat_estimate_t;

/* ---- ustat_bins ---------------------------------------------------------------------------- */

typedef struct {
    dpm_ustat_kernel_t kernel;
    uint32_t k, domain; /* domain: k, 2k or k^2 */
    double p, q;        /* keep / 2^32, other / 2^32 */
} dpm_ustat_bins_params_t;

/* From the mechanism's integers (dpm_ustat_bins_t: kernel, k, grr.keep, grr.other). DPM_ERR_PARAM
 * for an unknown kernel, a domain outside [2, DPM_USTAT_EST_MAX_DOMAIN] or keep + (domain - 1)
 * other != 2^32. */
dpm_status_t dpm_ustat_bins_params_init(dpm_ustat_bins_params_t *p, dpm_ustat_kernel_t kernel,
                                        uint32_t k, uint32_t keep, uint32_t other);

/* Report histograms: count[label][value] (the AUC kernel: label public), count[0][value]
 * otherwise. */
typedef struct {
    uint32_t domain;
    uint64_t reports;
    uint64_t count[2][DPM_USTAT_EST_MAX_DOMAIN];
} dpm_ustat_bins_agg_t;

dpm_status_t dpm_ustat_bins_agg_init(dpm_ustat_bins_agg_t *a, uint32_t domain);
/* One report (value < domain, label 0 or 1; label is ignored unless the params' kernel is AUC,
 * so pass the report's label field, which is 0 then). */
dpm_status_t dpm_ustat_bins_agg_add(dpm_ustat_bins_agg_t *a, const dpm_ustat_bins_params_t *p,
                                    uint32_t value, uint32_t label);
dpm_status_t dpm_ustat_bins_agg_merge(dpm_ustat_bins_agg_t *dst, const dpm_ustat_bins_agg_t *src);

/* The AUC (AUC kernels, tie weight w in [0, 1]) or Kendall's tau_a (w unused), with sd and a
 * normal interval at confidence c in (0, 1). DPM_ERR_PARAM on bad arguments; undefined
 * estimates are DPM_OK with est->defined = 0. */
dpm_status_t dpm_ustat_bins_estimate(const dpm_ustat_bins_params_t *p,
                                     const dpm_ustat_bins_agg_t *a, double tie_weight,
                                     double confidence, dpm_ustat_estimate_t *est);

/* The same target computed exactly from true (noiseless) histograms, for tests and ground
 * truth: hist[label][value] (AUC kernels: per class; KENDALL: hist[0]). */
dpm_status_t dpm_ustat_bins_exact(const dpm_ustat_bins_params_t *p, const uint64_t *hist_neg,
                                  const uint64_t *hist_pos, double tie_weight, double *value);

/* Theorem 1's variance bound for a kernel in [0, 1]: 1 / (n (1 - b)^2) + (1 + b)^2 / (2 n (n -
 * 1) (1 - b)^4) with 1 - b = p - q. */
double dpm_ustat_theorem1_bound(const dpm_ustat_bins_params_t *p, double n);

/* ---- ustat_tree ---------------------------------------------------------------------------- */

typedef struct {
    uint32_t depth, grr_levels;
    double rr_p;                            /* Hadamard levels: keep / 2^32 */
    double grr_p[DPM_USTAT_MAX_GRR_LEVELS]; /* level l: grr_p[l - 1] */
    double grr_q[DPM_USTAT_MAX_GRR_LEVELS];
} dpm_ustat_tree_params_t;

/* From the mechanism (dpm_ustat_tree_t: depth, grr_levels, rr.keep, grr[l - 1].keep / other).
 * DPM_ERR_PARAM for a depth outside [1, DPM_USTAT_EST_MAX_DEPTH], grr_levels > depth, an RR that
 * does not keep more often than it flips, or thresholds that do not sum to 2^32. */
dpm_status_t dpm_ustat_tree_params_init(dpm_ustat_tree_params_t *p, const dpm_ustat_tree_t *m);

/* Sums per class: reports per level, and per level l the 2^l sums at sums[c][2^l + index]
 * (Hadamard levels: the signs per row; GRR levels: the counts per node). Heap-allocated. */
typedef struct {
    uint32_t depth, grr_levels;
    uint64_t reports[2];
    uint64_t level_reports[2][DPM_USTAT_EST_MAX_DEPTH + 1];
    int64_t *sums[2]; /* 2^(depth + 1) each */
} dpm_ustat_tree_agg_t;

/* DPM_ERR_PARAM for bad sizes, DPM_ERR_BUFFER if memory runs out. */
dpm_status_t dpm_ustat_tree_agg_init(dpm_ustat_tree_agg_t *a, const dpm_ustat_tree_params_t *p);
void dpm_ustat_tree_agg_free(dpm_ustat_tree_agg_t *a);
/* One report: label 0/1, level in [1, depth], row < 2^level (Hadamard) or 0 (GRR), value (bit
 * or node). DPM_ERR_PARAM otherwise. */
dpm_status_t dpm_ustat_tree_agg_add(dpm_ustat_tree_agg_t *a, uint32_t label, uint32_t level,
                                    uint32_t row, uint32_t value);
dpm_status_t dpm_ustat_tree_agg_merge(dpm_ustat_tree_agg_t *dst, const dpm_ustat_tree_agg_t *src);

typedef enum {
    DPM_USTAT_TREE_CHOOSE_A = 0, /* threshold rule, a minimizing Theorem 3's bound */
    DPM_USTAT_TREE_GIVEN_A = 1,  /* threshold rule with opts.a (> 1) */
    DPM_USTAT_TREE_FULL = 2,     /* no discarding: every node visited (unbiased, noisier) */
} dpm_ustat_tree_mode_t;

typedef struct {
    dpm_ustat_tree_mode_t mode;
    double a;          /* DPM_USTAT_TREE_GIVEN_A */
    double tie_weight; /* leaves: w h+ h- (0: the paper's strict AUC; 1/2: ties half) */
} dpm_ustat_tree_opts_t;

typedef struct {
    dpm_ustat_estimate_t est; /* value = AUC, sd = sqrt(bound) */
    double a;                 /* used (0 for FULL) */
    double v_pos, v_neg, C;   /* variance bounds, C = max v_c / (n_c depth) */
    double mse_bound;         /* Theorem 3, normalized (0 for FULL) */
    uint64_t recursed, discarded;
} dpm_ustat_tree_estimate_t;

dpm_status_t dpm_ustat_tree_estimate(const dpm_ustat_tree_params_t *p,
                                     const dpm_ustat_tree_agg_t *a,
                                     const dpm_ustat_tree_opts_t *opts,
                                     dpm_ustat_tree_estimate_t *out);

/* The node estimates of one class (2^(depth + 1) doubles, node (l, u) at h[2^l + u], the root at
 * h[1]), as the estimator uses them: for tests of unbiasedness. */
dpm_status_t dpm_ustat_tree_nodes(const dpm_ustat_tree_params_t *p, const dpm_ustat_tree_agg_t *a,
                                  uint32_t label, double *h);

/* Exact tree AUC of true per-class histograms over 2^depth values (Figure 1 / Eq. UAUC: every
 * pair counted at the node where the two scores' bits first differ; leaves w h+ h-). */
dpm_status_t dpm_ustat_tree_exact(uint32_t depth, const uint64_t *hist_neg,
                                  const uint64_t *hist_pos, double tie_weight, double *auc);

/* The kernel matrix entry A[a][b] the general ustat_bins estimate uses (private-label AUC:
 * which 0 the ordered-pair kernel f, which 1 the pair-count kernel g; Kendall: which 0), tie
 * weight w: for the collector's influence bound (host-sim/mech/auc.c). */
double dpm_ustat_bins_kernel(const dpm_ustat_bins_params_t *p, uint32_t a, uint32_t b, int which,
                             double w);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_ESTIMATE_USTAT_H */
