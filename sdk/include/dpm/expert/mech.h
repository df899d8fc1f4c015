/* SPDX-License-Identifier: Apache-2.0 */
/* A campaign's mechanism: what to measure and how privately, checked and built once.
 *
 * A campaign (decoded from the wire with dpm_campaign_decode in dpm/expert/report.h, or filled in
 * code) names a mechanism and its parameters; dpm_mech_init validates everything a campaign can get
 * wrong and derives the integer parameters the samplers use, the ε one report really spends
 * (implemented, rounded up, never above the request) and a fingerprint of the derived
 * parameters that every report carries and the collector re-derives. */
#ifndef DPM_MECH_H
#define DPM_MECH_H

#include <stdint.h>

#include "dpm/campaign.h"
#include "dpm/device.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Build the mechanism a campaign asks for, after checking everything a campaign can get
 * wrong: ε outside (0, DPM_EPS_MAX], an unknown or not compiled-in mechanism, groups or metrics
 * out of range or repeated, too many or unsorted bin edges, a budget smaller than one report's
 * implemented ε. roc_hist: 1 <= nbins (edges) <= DPM_MAX_BINS - 1, edges strictly increasing
 * and <= 2^31; its params_hash covers the edges, the Laplace scale and eps_implemented; groups
 * 0 (none) or 2 .. DPM_MAX_GROUPS with 0 < group_eps < eps (group_eps 0: eps / 2), and then the
 * hash covers the groups and the GRR's thresholds too. dpauc: 1 .. DPM_DPAUC_MAX_THRESHOLDS
 * thresholds, strictly increasing, <= 2^31, a known calibration, ε large enough for the count
 * range (dpm_dpauc_init). ustat_bins: a known kernel, k >= 2 with its GRR domain <=
 * DPM_MAX_GRR_K. ustat_tree: 1 <= tree_depth <= DPM_USTAT_MAX_DEPTH, tree_grr_levels <= depth
 * with 2^tree_grr_levels <= DPM_MAX_GRR_K. Their hashes cover every derived integer parameter
 * (thresholds, Laplace scale, GRR / RR thresholds) and eps_implemented. fedauc_rr /
 * fedauc_lap: the rules of dpm_fedauc_init, no groups, metrics or bin edges; the params_hash
 * covers the variant, score_bits, the share, eps_p, the RR thresholds and eps_implemented.
 * Fields a mechanism does not use are ignored. On error *m is untouched, the campaign must not
 * run, and *reason (if not NULL) is a short static English reason. DPM_ERR_UNSUPPORTED for a
 * mechanism this build does not have. */
dpm_status_t dpm_mech_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason);

/* The mechanism's name as campaign files and dpm.v1.Mechanism (lower case) spell it:
 * "roc_hist", "dpauc", "fedauc_rr", "fedauc_lap", "ustat_bins", "ustat_tree", "tuple_mr",
 * "tuple_ml". Every id has its name whether this build has the mechanism or not; NULL for
 * DPM_MECH_NONE and ids no build knows. */
const char *dpm_mech_name(dpm_mech_id_t id);

/* The id dpm_mech_name gives `name` (exact match), or DPM_MECH_NONE for NULL or a name no
 * build knows. */
dpm_mech_id_t dpm_mech_from_name(const char *name);

/* DPM_OK if the policy allows campaign c (its requested ε and budget; the implemented ε is never
 * above the requested one). DPM_ERR_POLICY otherwise, with *reason (if not NULL) saying which
 * limit. DPM_ERR_PARAM for NULL, an invalid policy (dpm_device_init's rules), or a campaign
 * whose ε or group ε is below DPM_EPS_FLOOR_Q16 (an integer meant as whole ε), with *reason. */
dpm_status_t dpm_policy_check(const dpm_policy_t *p, const dpm_campaign_t *c, const char **reason);

#ifdef __cplusplus
}
#endif

#endif /* DPM_MECH_H */
