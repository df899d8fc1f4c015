/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist in the two-aggregator mode: the estimator (see roc_central.h). */
#include "estimate/roc_central.h"

#include <math.h>
#include <string.h>

#include "common/prob.h"
#include "dpm/expert/noise.h"
#include "estimate/ci_flags.h"

/* sigma2 0: discrete Laplace of scale 2 max_examples / eps; else discrete Gaussian. */
static dpm_status_t params_init(dpm_roc_central_params_t *p, uint32_t groups, uint32_t bins,
                                const uint32_t *edges_q31, uint32_t max_examples, dpm_eps_t eps,
                                uint64_t sigma2, const char **why)
{
    const char *w = NULL;
    dpm_roc_central_params_t q;
    dpm_laplace_t lap;
    memset(&q, 0, sizeof(q));
    memset(&lap, 0, sizeof(lap));
    if (p == NULL) {
        w = "no parameters";
    } else if (groups < 1 || groups > DPM_ROC_CENTRAL_MAX_GROUPS) {
        w = "groups must be 1 .. 8";
    } else if (max_examples < 1 || max_examples > DPM_ROC_CENTRAL_MAX_EXAMPLES) {
        w = "max_examples must be 1 .. 255 (a device's count in one cell is an 8-bit entry)";
    } else if (sigma2 == 0 && dpm_laplace_init(&lap, 2u * (uint64_t)max_examples, eps) != DPM_OK) {
        w = "the SDK's discrete Laplace refuses this eps for sensitivity 2 x max_examples";
    } else if (sigma2 > DPM_DGAUSS_MAX_SIGMA2 || eps == 0 || eps > DPM_EPS_MAX_Q16) {
        w = "sigma2 must be 1 .. 2^30 (the SDK's discrete Gaussian) and eps in (0, DPM_EPS_MAX]";
    } else if ((sigma2 == 0
                    ? dpm_roc_params_init_central(&q.roc, bins,
                                                  (double)lap.scale_num / (double)lap.scale_den,
                                                  DPM_ROC_CENTRAL_AGGREGATORS)
                    : dpm_roc_params_init_central_gauss(&q.roc, bins, (double)sigma2,
                                                        DPM_ROC_CENTRAL_AGGREGATORS)) != DPM_OK) {
        w = "bins must be 2 .. 64";
    } else if (edges_q31 != NULL &&
               dpm_roc_params_set_edges(&q.roc, edges_q31, bins - 1u) != DPM_OK) {
        w = "edges must be bins - 1 increasing scores in [0, 1]";
    }
    if (w != NULL) {
        if (why != NULL) {
            *why = w;
        }
        return DPM_ERR_PARAM;
    }
    q.groups = groups;
    q.bins = bins;
    q.max_examples = max_examples;
    q.sensitivity = 2u * (uint64_t)max_examples;
    q.eps = eps;
    q.scale_num = lap.scale_num;
    q.scale_den = lap.scale_den;
    q.sigma2 = sigma2;
    *p = q;
    return DPM_OK;
}

dpm_status_t dpm_roc_central_params_init(dpm_roc_central_params_t *p, uint32_t groups,
                                         uint32_t bins, const uint32_t *edges_q31,
                                         uint32_t max_examples, dpm_eps_t eps, const char **why)
{
    return params_init(p, groups, bins, edges_q31, max_examples, eps, 0, why);
}

dpm_status_t dpm_roc_central_params_init_gauss(dpm_roc_central_params_t *p, uint32_t groups,
                                               uint32_t bins, const uint32_t *edges_q31,
                                               uint32_t max_examples, dpm_eps_t eps,
                                               uint64_t sigma2, const char **why)
{
    if (sigma2 == 0) {
        if (why != NULL) {
            *why = "sigma2 must be 1 .. 2^30 (the SDK's discrete Gaussian)";
        }
        return DPM_ERR_PARAM;
    }
    return params_init(p, groups, bins, edges_q31, max_examples, eps, sigma2, why);
}

dpm_status_t dpm_roc_central_params_set_local(dpm_roc_central_params_t *p, dpm_eps_t eps0,
                                              const char **why)
{
    dpm_grr_t rr;
    const char *w = NULL;
    memset(&rr, 0, sizeof(rr));
    if (p == NULL) {
        w = "no parameters";
    } else if (eps0 != 0 && dpm_rr_init(&rr, eps0) != DPM_OK) {
        w = "the SDK's randomized response refuses this eps0 (0 < eps0 <= DPM_EPS_MAX)";
    }
    if (w != NULL) {
        if (why != NULL) {
            *why = w;
        }
        return DPM_ERR_PARAM;
    }
    /* the exact flip probability the devices use: other / 2^32 is a double exactly */
    double q = eps0 == 0 ? 0.0 : ldexp((double)rr.other, -32);
    if (dpm_roc_params_set_label_flip(&p->roc, q) != DPM_OK) { /* keep > other: q < 1/2 */
        if (why != NULL) {
            *why = "randomized response with no margin (q >= 1/2)";
        }
        return DPM_ERR_PARAM;
    }
    p->local_eps = eps0;
    p->label_flip = q;
    return DPM_OK;
}

/* One gap interval: variance var, the larger unit jump of the two groups, the bias bound. */
static void gap_interval(double gap, double var, double jump, double bound, double c, double *lo,
                         double *hi, unsigned *flags)
{
    double events = 0.0;
    *flags = 0;
    double hw = dpm_ci_halfwidth(var, jump, bound, c, &events, flags);
    *lo = gap - hw;
    *hi = gap + hw;
}

/* The unit jump implied by an estimate's variance and its effective events (var / jump²). */
static double jump_of(double var, double events)
{
    return events > 0.0 && isfinite(events) ? sqrt(var / events) : 0.0;
}

dpm_status_t dpm_roc_central_estimate(const dpm_roc_central_params_t *p, const dpm_roc_agg_t *agg,
                                      double confidence, dpm_roc_central_estimate_t *est)
{
    if (p == NULL || agg == NULL || est == NULL || !(confidence > 0.0 && confidence < 1.0)) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t g = 0; g < p->groups; g++) {
        if (agg[g].bins != p->bins) {
            return DPM_ERR_PARAM;
        }
    }
    memset(est, 0, sizeof(*est));
    est->groups = p->groups;
    for (uint32_t g = 0; g < p->groups; g++) {
        if (dpm_roc_estimate(&p->roc, &agg[g], confidence, &est->group[g]) != DPM_OK) {
            return DPM_ERR_PARAM;
        }
    }
    uint32_t k = 0;
    for (uint32_t g = 0; g < p->groups; g++) {
        for (uint32_t h = g + 1; h < p->groups; h++, k++) {
            const dpm_roc_estimate_t *a = &est->group[g], *b = &est->group[h];
            dpm_roc_central_gap_t *x = &est->gap[k];
            x->g = g;
            x->h = h;
            x->defined = a->valid && b->valid;
            if (!x->defined) {
                x->gap = x->sd = x->lo = x->hi = NAN;
                x->gap_total_sd = x->total_lo = x->total_hi = NAN;
                x->gap_unbinned = x->unbinned_sd = x->unbinned_lo = x->unbinned_hi = NAN;
                x->flags = x->total_flags = x->unbinned_flags = DPM_CI_SMALL_N;
                continue;
            }
            double jump = fmax(jump_of(a->var_noise, a->events), jump_of(b->var_noise, b->events));
            double var = a->var_noise + b->var_noise;
            x->gap = a->auc_raw - b->auc_raw;
            x->sd = sqrt(var);
            gap_interval(x->gap, var, jump, 0.0, confidence, &x->lo, &x->hi, &x->flags);
            x->flags |= a->ci_flags | b->ci_flags;
            double vt = var + a->var_sampling + b->var_sampling;
            x->gap_total_sd = sqrt(vt);
            gap_interval(x->gap, vt, jump, 0.0, confidence, &x->total_lo, &x->total_hi,
                         &x->total_flags);
            x->total_flags |= a->ci_total_flags | b->ci_total_flags;
            double su = (isfinite(a->unbinned_var_sampling) ? a->unbinned_var_sampling : 0.0) +
                        (isfinite(b->unbinned_var_sampling) ? b->unbinned_var_sampling : 0.0);
            double vu = a->unbinned_var_noise + b->unbinned_var_noise + su;
            double ju = fmax(jump_of(a->unbinned_var_noise, a->unbinned_events),
                             jump_of(b->unbinned_var_noise, b->unbinned_events));
            x->gap_unbinned = a->auc_unbinned_raw - b->auc_unbinned_raw;
            x->unbinned_sd = sqrt(vu);
            gap_interval(x->gap_unbinned, vu, ju, a->unbinned_bound + b->unbinned_bound, confidence,
                         &x->unbinned_lo, &x->unbinned_hi, &x->unbinned_flags);
            x->unbinned_flags |= a->unbinned_total_flags | b->unbinned_total_flags;
        }
    }
    est->ngaps = k;
    return DPM_OK;
}

dpm_status_t dpm_roc_central_pairwise(const dpm_roc_central_estimate_t *est, double confidence,
                                      dpm_pairwise_t *out)
{
    if (est == NULL || est->groups < 2 || est->groups > DPM_ROC_CENTRAL_MAX_GROUPS) {
        return DPM_ERR_PARAM;
    }
    dpm_pairwise_in_t in;
    memset(&in, 0, sizeof(in));
    in.d = est->groups;
    for (uint32_t g = 0; g < in.d; g++) {
        const dpm_roc_estimate_t *e = &est->group[g];
        in.valid[g] = e->valid;
        in.est[g] = e->valid ? e->auc_raw : 0.0;
        in.cov[g][g] = e->valid ? e->var_noise : 0.0; /* independent groups: Sigma diagonal */
    }
    return dpm_pairwise_compare(&in, confidence, out);
}
