/* SPDX-License-Identifier: Apache-2.0 */
/* U-statistics under local DP (Bell, Bellet, Gascón, Kulkarni, AISTATS 2020): one report per
 * example, each a randomized quantized score; a server (host-sim/estimate/ustat.h) turns many
 * reports into an AUC or Kendall's tau.
 *
 * ustat_bins (Algorithm 1, protocol 1): the device quantizes its score into k bins by simple
 * rounding, bin = min(k - 1, floor(score k)), and randomizes the bin with k-ary generalized
 * randomized response, reading the paper's Eq. (9) as plain GRR
 * (sdk/docs/ustat.md §Reading Eq. 9 as GRR): p = e^ε / (e^ε + k - 1) for the true value and
 * q = 1 / (e^ε + k - 1) for each other one, with the SDK's integer thresholds (dpm_grr_t:
 * keep / 2^32 and other / 2^32, rounded so keep / other <= e^ε; the server de-biases with
 * exactly these p and q). The campaign's kernel says what is
 * randomized:
 *   AUC                 the bin (GRR over k); the label travels in clear, as in the paper
 *                       (labels public per report).
 *                       Privacy unit: the example's SCORE (ε-LDP). The label is NOT protected.
 *   AUC_PRIVATE_LABEL   (label, bin) as one value label * k + bin (GRR over 2k).
 *                       Privacy unit: the example's (score, label) pair (ε-LDP).
 *   KENDALL             two scores x, y as bin(x) * k + bin(y) (GRR over k * k).
 *                       Privacy unit: the example's pair (x, y) (ε-LDP).
 * The GRR domain (k, 2k or k * k) must be in [2, DPM_MAX_GRR_K].
 *
 * ustat_tree (protocol 2, hierarchical histograms, sdk/docs/ustat.md §Protocol 2,
 * sdk/docs/ustat.md §Oracles): scores are quantized to d = 2^depth values, x = min(d - 1,
 * floor(score d)); the device draws one level l uniformly in 1 .. depth (the root, level 0, is
 * public: it is the number of reports) and reports its node at that level, v = x >> (depth - l),
 * through a frequency oracle:
 *   levels 1 .. grr_levels   GRR over the 2^l nodes of the level (oracle H2);
 *   deeper levels            Hadamard randomized response (oracle H1): a row j uniform in
 *                            [0, 2^l) and the bit parity(j AND v) kept with probability
 *                            keep / 2^32 (binary RR, keep / other <= e^ε).
 * The label (class) travels in clear: the paper's setting (labels public). Privacy unit: the
 * example's SCORE (ε-LDP: the level and the row are independent of the data; only the GRR value
 * or the RR bit depends on it). Every report draws fresh randomness, so reports on different
 * levels come from independent randomness (sdk/docs/ustat.md §Pitfalls); the only coupling between
 * levels is that an example reports on one level, which the server's scaling by the observed
 * reports per level accounts for.
 *
 * eps_implemented is the largest ln(keep / other) of the oracles in use, rounded up, <= ε.
 * Each report spends it; k reports of the same example spend k times it. Run time: the bin and
 * the GRR / RR draws use a fixed number of random bits and no branch on the score or the label;
 * the level and the row are public randomness (the tree branches on them). */
#ifndef DPM_USTAT_H
#define DPM_USTAT_H

#include <stdint.h>

#include "dpm/campaign.h"
#include "dpm/expert/noise.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Configure ustat_bins: kernel one of dpm_ustat_kernel_t, k >= 2 with its GRR domain (k, 2k,
 * k * k) <= DPM_MAX_GRR_K, eps in (0, DPM_EPS_MAX_Q16]. DPM_ERR_PARAM for NULL or any of these;
 * DPM_ERR_RANGE when dpm_grr_init refuses ε for this domain. *m untouched on error. */
dpm_status_t dpm_ustat_bins_init(dpm_ustat_bins_t *m, dpm_ustat_kernel_t kernel, uint32_t k,
                                 dpm_eps_t eps);

/* The bin of a Q1.31 score among k: min(k - 1, floor(score k / 2^31)). DPM_ERR_PARAM (and *bin
 * untouched) for a score above 2^31, k < 2 or NULL. */
dpm_status_t dpm_ustat_quantize(uint32_t score_q31, uint32_t k, uint32_t *bin);

/* Randomize one example (see the top of this file). Draws exactly 32 bits (one GRR). DPM_ERR_PARAM
 * for NULL, an unbound r, a corrupted m, a score above 2^31, a label other than 0/1, or (KENDALL)
 * a label other than 0; the sticky DPM_ERR_RNG. *out untouched on error. */
dpm_status_t dpm_ustat_bins_perturb(const dpm_ustat_bins_t *m, dpm_rand_t *r,
                                    const dpm_ustat_example_t *ex, dpm_ustat_bins_report_t *out);

/* ---- ustat_tree ------------------------------------------------------------------------------ */

/* A report: label (public), level in [1, depth], row (Hadamard levels; 0 on GRR levels) and
 * value (GRR: the randomized node in [0, 2^level); Hadamard: the randomized parity bit). */
typedef struct {
    uint32_t label;
    uint32_t level;
    uint32_t row;
    uint32_t value;
} dpm_ustat_tree_report_t;

/* Configure ustat_tree: 1 <= depth <= DPM_USTAT_MAX_DEPTH, 0 <= grr_levels <= depth with
 * 2^grr_levels <= DPM_MAX_GRR_K, eps in (0, DPM_EPS_MAX_Q16]. DPM_ERR_PARAM for NULL or any of
 * these; DPM_ERR_RANGE when a GRR or the RR refuses ε. *m untouched on error. */
dpm_status_t dpm_ustat_tree_init(dpm_ustat_tree_t *m, uint32_t depth, uint32_t grr_levels,
                                 dpm_eps_t eps);

/* Randomize one example's score (label 0 or 1, sent in clear). Draws the level (uniform, by
 * rejection), then on a GRR level one 32-bit GRR, on a Hadamard level `level` bits for the row
 * and one 32-bit RR. DPM_ERR_PARAM for NULL, an unbound r, a corrupted m, a score above 2^31 or
 * a label other than 0/1; the sticky DPM_ERR_RNG. *out untouched on error. */
dpm_status_t dpm_ustat_tree_perturb(const dpm_ustat_tree_t *m, dpm_rand_t *r,
                                    const dpm_ustat_example_t *ex, dpm_ustat_tree_report_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DPM_USTAT_H */
