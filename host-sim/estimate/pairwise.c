/* SPDX-License-Identifier: Apache-2.0 */
/* Simultaneous pairwise comparisons and the largest difference (see pairwise.h). */
#include "estimate/pairwise.h"

#include <math.h>
#include <string.h>

#include "common/prob.h"
#include "common/stream.h"

#define HIST_BINS ((uint32_t)(DPM_PAIRWISE_HIST_MAX / DPM_PAIRWISE_BIN))
#define PSD_TOL 1e-9 /* a Cholesky pivot below -PSD_TOL x its variance: not PSD */

uint32_t dpm_pairwise_index(uint32_t d, uint32_t g, uint32_t h)
{
    /* pairs (0, 1 .. d-1) come first: d - 1 of them, then (1, 2 ..), d - 2, ... */
    return g * (2u * d - g - 1u) / 2u + (h - g - 1u);
}

static int input_ok(const dpm_pairwise_in_t *in)
{
    if (in->d < 2 || in->d > DPM_PAIRWISE_MAX) {
        return 0;
    }
    for (uint32_t g = 0; g < in->d; g++) {
        if (!in->valid[g]) {
            continue;
        }
        if (!isfinite(in->est[g]) || !isfinite(in->cov[g][g]) || in->cov[g][g] < 0.0) {
            return 0;
        }
        for (uint32_t h = 0; h < in->d; h++) {
            double a = in->cov[g][h], b = in->cov[h][g];
            if (in->valid[h] && (!isfinite(a) || fabs(a - b) > 1e-12 * (fabs(a) + fabs(b)))) {
                return 0;
            }
        }
    }
    return 1;
}

/* Lower Cholesky factor of Sigma over the valid estimates (idx[0 .. n)), pivots at or below
 * PSD_TOL of their variance set to a zero column (semi-definite). 0 if Sigma is not PSD. */
static int cholesky(const dpm_pairwise_in_t *in, const uint32_t *idx, uint32_t n,
                    double L[DPM_PAIRWISE_MAX][DPM_PAIRWISE_MAX])
{
    memset(L, 0, sizeof(double) * DPM_PAIRWISE_MAX * DPM_PAIRWISE_MAX);
    for (uint32_t j = 0; j < n; j++) {
        double var = in->cov[idx[j]][idx[j]], p = var;
        for (uint32_t k = 0; k < j; k++) {
            p -= L[j][k] * L[j][k];
        }
        if (p < -PSD_TOL * var) {
            return 0;
        }
        int skip = p <= PSD_TOL * var; /* a direction with no variance of its own */
        L[j][j] = skip ? 0.0 : sqrt(p);
        for (uint32_t i = j + 1; i < n; i++) {
            double s = in->cov[idx[i]][idx[j]];
            for (uint32_t k = 0; k < j; k++) {
                s -= L[i][k] * L[j][k];
            }
            /* no variance left in j: a PSD Sigma has no covariance left with it either */
            if (skip && fabs(s) > 1e-6 * sqrt(var * in->cov[idx[i]][idx[i]])) {
                return 0;
            }
            L[i][j] = skip ? 0.0 : s / L[j][j];
        }
    }
    return 1;
}

/* The pairs: differences, sds, which have an interval. */
static void pairs_init(const dpm_pairwise_in_t *in, dpm_pairwise_t *out)
{
    uint32_t d = in->d, k = 0;
    for (uint32_t g = 0; g < d; g++) {
        for (uint32_t h = g + 1; h < d; h++, k++) {
            dpm_pairwise_pair_t *p = &out->pair[k];
            p->g = g;
            p->h = h;
            p->diff = p->sd = p->lo = p->hi = NAN;
            if (!in->valid[g] || !in->valid[h]) {
                continue;
            }
            double var = in->cov[g][g] + in->cov[h][h] - 2.0 * in->cov[g][h];
            p->diff = in->est[g] - in->est[h];
            p->sd = var > 0.0 ? sqrt(var) : 0.0;
            p->defined = var > 0.0 && isfinite(var);
            out->defined += (uint32_t)p->defined;
        }
    }
}

/* One pass over the draws: the histogram of max |T| over the defined pairs and, when
 * boot != NULL, per pair the draws in which theta^ + x has its largest |difference| there. */
static void draws(const dpm_pairwise_t *out, const uint32_t *idx, uint32_t n,
                  double L[DPM_PAIRWISE_MAX][DPM_PAIRWISE_MAX], uint32_t *hist, uint32_t *boot)
{
    sim_stream_t s;
    sim_stream_init(&s, DPM_PAIRWISE_SEED);
    double inv_sd[DPM_PAIRWISE_MAX_PAIRS];
    for (uint32_t k = 0; k < out->npairs; k++) {
        inv_sd[k] = out->pair[k].defined ? 1.0 / out->pair[k].sd : 0.0;
    }
    for (uint32_t i = 0; i < DPM_PAIRWISE_DRAWS; i++) {
        double u[DPM_PAIRWISE_MAX], x[DPM_PAIRWISE_MAX] = {0.0};
        for (uint32_t j = 0; j < n; j += 2) {
            double spare;
            sim_stream_normal_pair(&s, &u[j], j + 1 < n ? &u[j + 1] : &spare);
        }
        for (uint32_t j = 0; j < n; j++) {
            double v = 0.0;
            for (uint32_t k = 0; k <= j; k++) {
                v += L[j][k] * u[k];
            }
            x[idx[j]] = v;
        }
        double tmax = 0.0, amax = -1.0;
        uint32_t kmax = 0;
        for (uint32_t k = 0; k < out->npairs; k++) {
            const dpm_pairwise_pair_t *p = &out->pair[k];
            if (!p->defined) {
                continue;
            }
            double z = x[p->g] - x[p->h], t = fabs(z) * inv_sd[k], a = fabs(p->diff + z);
            tmax = t > tmax ? t : tmax;
            if (a > amax) {
                amax = a;
                kmax = k;
            }
        }
        double b = tmax / DPM_PAIRWISE_BIN;
        hist[b < (double)HIST_BINS ? (uint32_t)b : HIST_BINS]++;
        if (boot != NULL) {
            boot[kmax]++;
        }
    }
}

/* Upper edge of the bin holding the rank-th smallest max |T| (rank 1-based); +inf if beyond
 * the histogram. */
static double hist_quantile(const uint32_t *hist, uint32_t rank)
{
    uint32_t seen = 0;
    for (uint32_t b = 0; b < HIST_BINS; b++) {
        seen += hist[b];
        if (seen >= rank) {
            return (b + 1u) * DPM_PAIRWISE_BIN;
        }
    }
    return INFINITY;
}

/* |D_k| in [L_k, U_k] when D_k is in [lo, hi]. */
static double abs_lower(double lo, double hi)
{
    return lo > 0.0 ? lo : hi < 0.0 ? -hi : 0.0;
}

static double abs_upper(double lo, double hi)
{
    return fmax(fabs(lo), fabs(hi));
}

static void largest(dpm_pairwise_t *out, const uint32_t *boot)
{
    if (out->defined != out->npairs) {
        out->largest_reason = "a pair has no interval (a group without an estimate or with no "
                              "variance): the largest over all pairs cannot be bounded";
        return;
    }
    double lo = 0.0, hi = 0.0, best = -1.0;
    for (uint32_t k = 0; k < out->npairs; k++) {
        const dpm_pairwise_pair_t *p = &out->pair[k];
        lo = fmax(lo, abs_lower(p->lo, p->hi));
        hi = fmax(hi, abs_upper(p->lo, p->hi));
        if (fabs(p->diff) > best) {
            best = fabs(p->diff);
            out->largest_pair = k;
        }
    }
    for (uint32_t k = 0; k < out->npairs; k++) {
        dpm_pairwise_pair_t *p = &out->pair[k];
        p->candidate = abs_upper(p->lo, p->hi) >= lo;
        out->candidates += (uint32_t)p->candidate;
        p->largest_share = boot != NULL ? boot[k] / (double)DPM_PAIRWISE_DRAWS : NAN;
    }
    out->largest_defined = 1;
    out->largest_reason = "";
    out->largest_abs = best;
    out->largest_lo = lo;
    out->largest_hi = hi;
    out->stability = out->pair[out->largest_pair].largest_share;
}

static const char *method_name(dpm_pairwise_method_t m)
{
    switch (m) {
    case DPM_PAIRWISE_EXACT: return "one pair: the normal quantile";
    case DPM_PAIRWISE_MAX_T:
        return "max-|t| over all pairs (Monte Carlo of the estimates' normal law)";
    case DPM_PAIRWISE_BONFERRONI: return "Bonferroni over all pairs";
    default: return "no pair has an interval";
    }
}

dpm_status_t dpm_pairwise_compare(const dpm_pairwise_in_t *in, double confidence,
                                  dpm_pairwise_t *out)
{
    if (in == NULL || out == NULL || !(confidence > 0.0 && confidence < 1.0) || !input_ok(in)) {
        return DPM_ERR_PARAM;
    }
    memset(out, 0, sizeof(*out));
    out->confidence = confidence;
    out->d = in->d;
    out->npairs = in->d * (in->d - 1u) / 2u;
    out->crit_pointwise = prob_norm_quantile(0.5 + confidence / 2.0);
    out->largest_reason = "no pair has an interval";
    pairs_init(in, out);
    uint32_t idx[DPM_PAIRWISE_MAX], n = 0;
    for (uint32_t g = 0; g < in->d; g++) {
        if (in->valid[g]) {
            idx[n++] = g;
        }
    }
    out->method = out->defined == 0   ? DPM_PAIRWISE_NONE
                  : out->defined == 1 ? DPM_PAIRWISE_EXACT
                                      : DPM_PAIRWISE_MAX_T;
    out->crit_bonferroni =
        out->defined == 0 ? NAN
                          : prob_norm_quantile(1.0 - (1.0 - confidence) / (2.0 * out->defined));
    out->crit = out->method == DPM_PAIRWISE_NONE ? NAN : out->crit_bonferroni;
    double L[DPM_PAIRWISE_MAX][DPM_PAIRWISE_MAX];
    int psd = out->defined > 0 && cholesky(in, idx, n, L);
    uint32_t hist[HIST_BINS + 1], boot[DPM_PAIRWISE_MAX_PAIRS];
    memset(hist, 0, sizeof(hist));
    memset(boot, 0, sizeof(boot));
    if (psd) {
        draws(out, idx, n, L, hist, boot);
    }
    if (out->method == DPM_PAIRWISE_MAX_T) {
        double tail = (1.0 - confidence) * DPM_PAIRWISE_DRAWS;
        double c = psd && tail >= DPM_PAIRWISE_MIN_TAIL
                       ? hist_quantile(hist, (uint32_t)ceil(confidence * DPM_PAIRWISE_DRAWS))
                       : INFINITY;
        if (c < out->crit_bonferroni) {
            out->crit = c;
        } else {
            out->method = DPM_PAIRWISE_BONFERRONI;
        }
    }
    out->method_name = method_name(out->method);
    for (uint32_t k = 0; k < out->npairs; k++) {
        dpm_pairwise_pair_t *p = &out->pair[k];
        if (p->defined) {
            p->lo = p->diff - out->crit * p->sd;
            p->hi = p->diff + out->crit * p->sd;
            p->distinguishable = p->lo > 0.0 || p->hi < 0.0;
            out->distinguishable += (uint32_t)p->distinguishable;
        }
    }
    largest(out, psd ? boot : NULL);
    return DPM_OK;
}
