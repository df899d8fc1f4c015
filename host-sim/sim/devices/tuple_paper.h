/* SPDX-License-Identifier: Apache-2.0 */
/* PAPER REPRODUCTION ONLY: the tuple mechanisms with the budget splits of Juarez & Korolova
 * (2022) (sdk/docs/tuple.md §Budget splits): M_R with eps1 = eps2 = eps, "M_L opt." with k != 2.
 * These splits do NOT deliver the stated ε: M_R really spends up to ε + ln 2 and M_L with k != 2
 * has no finite ε at all (sdk/docs/tuple.md §M_L and k). The SDK ships only the correct splits
 * (dpm/expert/tuple.h); this device exists so that `dpm-sim repro` can run the paper's own settings, and
 * it is labelled as such in every output. Never use it for a real campaign.
 *
 * The device is built from the SDK's public samplers (dpm_grr_*, dpm_rr_*, dpm_bernoulli,
 * dpm_laplace_*, dpm_dlap_add): GRR on the group at eps1; then M_R: Harmony coin (Bernoulli of
 * the metric, a fair coin if the group flipped) through binary RR at eps2; M_L: the metric's
 * value v = 2 metric - 1 randomized-rounded to the Q(F) grid plus discrete Laplace of scale
 * 2 / eps2 (kept reports), or 0 plus discrete Laplace of scale k / eps2 (flipped reports). The
 * server's view (params) comes from the device's own integers, so the estimates are exactly
 * unbiased for the quantized mechanism. */
#ifndef DPM_SIM_TUPLE_PAPER_H
#define DPM_SIM_TUPLE_PAPER_H

#include <stdint.h>

#include "dpm/expert/noise.h"
#include "dpm/expert/tuple.h"
#include "estimate/disparity.h"

typedef struct {
    dpm_disp_mech_t mech;
    uint32_t groups;
    dpm_grr_t group_grr;      /* GRR over the groups at eps1 */
    dpm_grr_t value_rr;       /* M_R: binary RR at eps2 */
    dpm_laplace_t value_lap;  /* M_L: kept reports, scale 2 / eps2 */
    uint64_t flip_num;        /* M_L: flipped reports, scale k / eps2 in grid units = */
    uint64_t flip_den;        /*   flip_num / flip_den (reduced) */
    uint32_t frac_bits;       /* F of the M_L value grid */
    dpm_disp_params_t params; /* the server's view, from the device's own integers */
    double eps;               /* nominal total ε (NaN for an explicit split) */
    double eps1, eps2, k;     /* nominal split (k: M_L only, NaN for M_R) */
    double eps_true;          /* the ε the quantized parameters really give; +inf: none */
    char label[80];
} tuple_paper_t;

/* The paper's split of a total eps (sdk/docs/tuple.md §Budget splits): M_R eps1 = eps2 = eps; "M_L
 * opt." eps2 = eps with k = eps, eps1 = ln(2 / eps) + eps - 1 if eps >= 2/3, else k = 2/3, eps1 =
 * ln 3 - eps / 2 (eps1 rounded to Q16.16). m->eps_true says what it really delivers. */
dpm_status_t tuple_paper_init(tuple_paper_t *m, dpm_disp_mech_t mech, uint32_t groups,
                              dpm_eps_t eps);

/* An explicit split: group GRR at eps1, value RR (M_R) or discrete Laplace of scale 2 / eps2
 * (M_L, kept reports) and k / eps2 (flipped reports), k = k_num / k_den > 0 (ignored for M_R).
 * DPM_ERR_PARAM on bad arguments, sampler init errors passed on. */
dpm_status_t tuple_paper_init_split(tuple_paper_t *m, dpm_disp_mech_t mech, uint32_t groups,
                                    dpm_eps_t eps1, dpm_eps_t eps2, uint64_t k_num, uint64_t k_den);

/* One report of a device holding (group, metric), one metric, randomness from r. DPM_ERR_PARAM
 * for a bad group or ratio (den <= 2^32), DPM_ERR_RANGE for a noised value outside int32
 * (probability < 2^-45: the device sends nothing). */
dpm_status_t tuple_paper_perturb(const tuple_paper_t *m, dpm_rand_t *r, uint32_t group,
                                 const dpm_ratio_t *metric, dpm_tuple_report_t *out);

#endif /* DPM_SIM_TUPLE_PAPER_H */
