/* SPDX-License-Identifier: Apache-2.0 */
/* Why an interval's coverage is not the calibrated one: flags every estimator of this directory
 * sets beside an interval, with one sentence each, so that no interval leaves the server without
 * either a coverage claim the tests back or the reason there is none. Host only.
 *
 * An interval with no flag is claimed to cover its target in [93 %, 97 %] of runs at the 95 %
 * level (tests/stat/, each estimator's header names its test). A flag says which of three
 * claims holds instead:
 *   "at least nominal" (conservative, the tests check coverage >= the level):
 *     DPM_CI_FEW_EVENTS   fewer than PROB_NORMAL_MIN_EVENTS effective randomization events (an
 *                         RR flip, a GRR move, one unit of a discrete Laplace draw): the normal
 *                         interval was replaced by the Poisson-aware one (common/prob.h);
 *     DPM_CI_BOUND        an interpolation-error bound is a large part of the interval (the
 *                         bias-aware half-width exceeds z_{0.985} sd, where a bias-free estimate
 *                         would be covered more than 97 % of the time);
 *     DPM_CI_ABS_BIAS     an absolute value near 0 biases the estimate up (ECE's bins near
 *                         perfect calibration, pr_calibration.h): the interval is widened by a
 *                         bound on that bias, more than 0.1 sd;
 *     DPM_CI_CONSERVATIVE the interval is Chebyshev's from a bound on the mean squared error, or
 *                         its variance may exceed the truth enough to cover more than 97 %
 *                         (tuple_mr's plug-in second moment, dpm_ci_var_excess), or it covers
 *                         a selected quantity from intervals that hold at once (the largest
 *                         gap, estimate/pairwise.h);
 *   "none" (no coverage claim; the interval is the delta method's and may cover less):
 *     DPM_CI_CLASS_NOISE  the noise on a class (or group) total is a large part of it: Fieller's
 *                         g = z^2 (relative variance of the ratio's denominator) exceeds
 *                         DPM_CI_FIELLER_G_MAX, where the delta method's linearization of a ratio
 *                         is no longer accurate (Fieller 1954: his interval's half-width is the
 *                         delta method's over 1 - g, to first order, and shifted);
 *     DPM_CI_SMALL_N      too few reports or examples for the estimator's own approximations
 *                         (each header says its rule);
 *     DPM_CI_NO_BOUND     too few bins to bound the interpolation error. */
#ifndef DPM_HOST_ESTIMATE_CI_FLAGS_H
#define DPM_HOST_ESTIMATE_CI_FLAGS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    DPM_CI_FEW_EVENTS = 1u << 0,
    DPM_CI_BOUND = 1u << 1,
    DPM_CI_CONSERVATIVE = 1u << 2,
    DPM_CI_CLASS_NOISE = 1u << 3,
    DPM_CI_SMALL_N = 1u << 4,
    DPM_CI_NO_BOUND = 1u << 5,
    DPM_CI_ABS_BIAS = 1u << 6,
} dpm_ci_flag_t;

#define DPM_CI_FLAG_COUNT 7u
/* the flags under which no coverage is claimed */
#define DPM_CI_NO_CLAIM (DPM_CI_CLASS_NOISE | DPM_CI_SMALL_N | DPM_CI_NO_BOUND)

/* Fieller's g above which a ratio's delta-method interval is flagged (DPM_CI_CLASS_NOISE). */
#define DPM_CI_FIELLER_G_MAX 0.05

/* The JSON name of flag number i < DPM_CI_FLAG_COUNT (bit 1 << i): "few_events", "bound",
 * "conservative", "class_noise", "small_n", "no_bound", "abs_bias". NULL beyond. */
const char *dpm_ci_flag_name(unsigned i);

/* One sentence for the flags (the most serious first, the others named after it), or "" when
 * there is none. Static storage: one of a fixed set of strings. */
const char *dpm_ci_reason(unsigned flags);

/* "nominal" (no flag), "at_least" (only DPM_CI_FEW_EVENTS, DPM_CI_BOUND, DPM_CI_CONSERVATIVE)
 * or "none" (any flag of DPM_CI_NO_CLAIM). */
const char *dpm_ci_coverage(unsigned flags);

/* DPM_CI_CLASS_NOISE when z^2 sum(rel_var[i]) > DPM_CI_FIELLER_G_MAX, else 0: rel_var[i] the
 * relative variance (var / total^2) of each total the ratio's denominator multiplies (pass -1
 * for a total that is not positive: flagged). *g (optional) receives Fieller's g. */
unsigned dpm_ci_class_noise(const double *rel_var, size_t n, double z, double *g);

/* DPM_CI_CONSERVATIVE when a variance that may exceed the truth by up to `ratio` (>= 1) would
 * make a bias-free normal interval at level c cover more than 2 points above c (97 % at 95 %:
 * ratio above (z_0.985 / z_0.975)² = 1.226), else 0. */
unsigned dpm_ci_var_excess(double ratio, double c);

/* The half-width of a level-c interval (0 < c < 1) around an estimate whose error has variance
 * var (every smooth term included), whose randomization events each move it by at most jump
 * (0: no event is large enough to matter) and whose bias is at most bound in absolute value (0:
 * none). The Poisson-aware half-width (prob_events_halfwidth) when there are fewer than
 * PROB_NORMAL_MIN_EVENTS effective events (*flags |= DPM_CI_FEW_EVENTS), then widened for the
 * bias (prob_bias_aware_halfwidth with the standard deviation that half-width implies), with
 * *flags |= DPM_CI_BOUND when that widening would make a bias-free estimate covered more than 2
 * points above c (97 % at 95 %). *events (optional): var / jump^2 (infinite for jump 0). NaN
 * for a negative or NaN var. */
double dpm_ci_halfwidth(double var, double jump, double bound, double c, double *events,
                        unsigned *flags);

#ifdef __cplusplus
}
#endif

#endif /* DPM_HOST_ESTIMATE_CI_FLAGS_H */
