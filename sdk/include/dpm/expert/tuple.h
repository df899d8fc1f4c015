/* SPDX-License-Identifier: Apache-2.0 */
/* Private group/performance tuples (Juarez & Korolova 2022): one report per device carries
 * its demographic group, randomized with GRR, and its local performance metrics, randomized
 * with randomized response (tuple_mr) or discrete Laplace (tuple_ml). A server (host-sim)
 * estimates per-group mean performance and the disparities between groups from many reports.
 *
 * Privacy unit: one device's whole tuple (group, metric values): local DP. Any two tuples
 * give output probabilities within a factor e^eps_implemented.
 *
 * Only privacy-correct budget splits are offered (the paper's own splits do not deliver the
 * stated ε; see README "Errata"). For a total ε and m metrics per report:
 *   tuple_mr: each metric's RR uses ε/m; the group GRR uses e^ε1 = ((1 + e^(ε/m)) / 2)^m.
 *             With m = 1 this is the corrected split ε2 = ε, ε1 = ln((1 + e^ε) / 2).
 *   tuple_ml: each metric's discrete Laplace uses ε/m (sensitivity 2 on [-1, 1]); flipped
 *             reports use the same scale (k = 2); the group GRR uses ε1 = ε/2.
 * Why it holds for m metrics: same group, the values alone: ratio <= e^ε. Output in the
 * true group vs. from another group: e^ε1 times the value terms, which for RR are (2b)^m and
 * ((1 + e^(ε/m)) / 2)^m / ... and for Laplace e^(m (ε/m) / 2) — the splits above make every
 * case <= e^ε (derivation in README, "tuple mechanisms").
 * The ε the quantized thresholds really give is computed on the device, rounded up, and
 * carried in every report (eps_implemented <= the requested ε). */
#ifndef DPM_TUPLE_H
#define DPM_TUPLE_H

#include <stdint.h>

#include "dpm/campaign.h"
#include "dpm/expert/noise.h"
#include "dpm/stats.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Configure a tuple mechanism. groups in [2, DPM_MAX_GROUPS], 1 <= nmetrics <=
 * DPM_TUPLE_MAX_METRICS with distinct valid metric ids, eps in (0, DPM_EPS_MAX].
 * DPM_ERR_PARAM for any bad argument; DPM_ERR_RANGE when ε is too small for the value grid
 * (tuple_ml: the noise must stay 32 times its scale inside int32: per-metric ε >= about
 * 2^(F+6-31); lower DPM_FRAC_BITS for smaller ε) or too large for 32-bit GRR thresholds.
 * *t is untouched on error. */
dpm_status_t dpm_tuple_init(dpm_tuple_t *t, dpm_tuple_kind_t kind, uint32_t groups,
                            const dpm_metric_t *metrics, uint32_t nmetrics, dpm_eps_t eps);

/* Perturb one device's tuple: its true group (< groups) and its metric values as exact
 * rationals in the order of t->metrics. The group is GRR-randomized; if it flipped, the
 * values are replaced by 0 (their midpoint) before randomization, so a flipped report adds
 * zero-mean noise to the wrong group. The selection is done with masks: every path draws the
 * same randomness apart from the exact samplers' own rejection loops.
 * DPM_ERR_PARAM for a bad group or ratio (den 0 or num > den); DPM_ERR_RANGE with
 * probability < 2^-45 when Laplace noise would leave int32 (nothing is emitted then: this
 * is a δ of the mechanism, documented in the README). *out untouched on error. */
dpm_status_t dpm_tuple_perturb(const dpm_tuple_t *t, dpm_rand_t *r, uint32_t group,
                               const dpm_ratio_t *values, dpm_tuple_report_t *out);

#ifdef __cplusplus
}
#endif

#endif /* DPM_TUPLE_H */
