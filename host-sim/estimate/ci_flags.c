/* SPDX-License-Identifier: Apache-2.0 */
/* Interval flags (see ci_flags.h). */
#include "estimate/ci_flags.h"

#include <math.h>

#include "common/prob.h"

static const char *const NAME[DPM_CI_FLAG_COUNT] = {
    "few_events", "bound", "conservative", "class_noise", "small_n", "no_bound", "abs_bias",
};

/* In order of seriousness: what a reader must know first. */
static const struct {
    unsigned flag;
    const char *alone, *more;
} REASON[DPM_CI_FLAG_COUNT] = {
    {DPM_CI_SMALL_N, "too few reports for this estimator's approximations: no coverage claim",
     "too few reports for this estimator's approximations: no coverage claim (and more flags)"},
    {DPM_CI_CLASS_NOISE,
     "the noise on a class total is a large part of it (Fieller's g above 0.05): the "
     "delta-method interval has no coverage claim",
     "the noise on a class total is a large part of it (Fieller's g above 0.05): the "
     "delta-method interval has no coverage claim (and more flags)"},
    {DPM_CI_NO_BOUND, "too few bins to bound the interpolation error: no coverage claim",
     "too few bins to bound the interpolation error: no coverage claim (and more flags)"},
    {DPM_CI_FEW_EVENTS,
     "few randomization events: a Poisson-aware interval, coverage at least the level",
     "few randomization events: a Poisson-aware interval, coverage at least the level (and "
     "more flags)"},
    {DPM_CI_BOUND,
     "the interpolation-error bound dominates the interval: coverage at least the level, "
     "not calibrated (use more bins)",
     "the interpolation-error bound dominates the interval: coverage at least the level, "
     "not calibrated (use more bins; and more flags)"},
    {DPM_CI_ABS_BIAS,
     "some bins are within noise of perfect calibration, where |rate - midpoint| is biased up: "
     "the interval is widened by a bound on that bias, coverage at least the level (more "
     "reports or a larger eps narrow it)",
     "some bins are within noise of perfect calibration, where |rate - midpoint| is biased up: "
     "the interval is widened by a bound on that bias, coverage at least the level (more "
     "reports or a larger eps narrow it; and more flags)"},
    {DPM_CI_CONSERVATIVE,
     "conservative by construction (Chebyshev's interval from an error bound, a variance that "
     "may exceed the truth, or the largest gap's from intervals that hold at once): coverage "
     "at least the level",
     "conservative by construction (Chebyshev's interval from an error bound, a variance that "
     "may exceed the truth, or the largest gap's from intervals that hold at once): coverage "
     "at least the level (and more flags)"},
};

const char *dpm_ci_flag_name(unsigned i)
{
    return i < DPM_CI_FLAG_COUNT ? NAME[i] : NULL;
}

const char *dpm_ci_reason(unsigned flags)
{
    for (unsigned i = 0; i < DPM_CI_FLAG_COUNT; i++) {
        if (flags & REASON[i].flag) {
            return (flags & ~REASON[i].flag) != 0 ? REASON[i].more : REASON[i].alone;
        }
    }
    return "";
}

const char *dpm_ci_coverage(unsigned flags)
{
    return flags & DPM_CI_NO_CLAIM ? "none" : flags != 0 ? "at_least" : "nominal";
}

unsigned dpm_ci_class_noise(const double *rel_var, size_t n, double z, double *g)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += rel_var[i] >= 0.0 ? rel_var[i] : INFINITY; /* < 0 or NaN: a total <= 0 */
    }
    double gg = z * z * sum;
    if (g != NULL) {
        *g = gg;
    }
    return gg <= DPM_CI_FIELLER_G_MAX ? 0u : (unsigned)DPM_CI_CLASS_NOISE;
}

double dpm_ci_halfwidth(double var, double jump, double bound, double c, double *events,
                        unsigned *flags)
{
    double lambda = INFINITY;
    if (!(var >= 0.0) || !(c > 0.0 && c < 1.0)) {
        return NAN;
    }
    double h = prob_events_halfwidth(var, fabs(jump), c, &lambda);
    if (events != NULL) {
        *events = lambda;
    }
    if (lambda < PROB_NORMAL_MIN_EVENTS) {
        *flags |= DPM_CI_FEW_EVENTS;
    }
    if (bound > 0.0 && isfinite(bound)) {
        double z = prob_norm_quantile(0.5 + c / 2.0), sd = h / z;
        h = prob_bias_aware_halfwidth(sd, bound, c);
        if (sd == 0.0 || 2.0 * prob_norm_cdf(h / sd) - 1.0 > c + 0.02) {
            *flags |= DPM_CI_BOUND;
        }
    }
    return h;
}

unsigned dpm_ci_var_excess(double ratio, double c)
{
    double z = prob_norm_quantile(0.5 + c / 2.0);
    return 2.0 * prob_norm_cdf(z * sqrt(ratio > 1.0 ? ratio : 1.0)) - 1.0 > c + 0.02
               ? (unsigned)DPM_CI_CONSERVATIVE
               : 0u;
}
