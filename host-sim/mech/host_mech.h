/* SPDX-License-Identifier: Apache-2.0 */
/* One module per mechanism on the host: what differs per mechanism, behind one table, so the
 * collector never switches on the mechanism.
 *
 * Each module (tuple.c, roc_hist.c, roc_groups.c, auc.c, fedauc.c) defines its host_mech_t;
 * registry.c lists them. A module owns, for its campaigns:
 *   - the estimator's parameters and checks of the built campaign (params_init, check_built:
 *     host_campaign_build);
 *   - the sums an estimate reads (state_init: its part of coll_campaign_state_t, sums.h) and
 *     what a stored report adds to them (stored_group: the store's group column; delta_add);
 *   - the bounds on honest reports as JSON (bounds_json: "report_bounds"' own members);
 *   - the estimate and its JSON (estimate_json: from `, "metrics": [...]` on), and the members
 *     dpm-sim's network mode compares (compare);
 *   - what one report protects and whom the campaign trusts (the console's words).
 * roc_hist with groups >= 2 is a module of its own (roc_hist_groups): its sums, bounds and
 * estimate differ; on the wire it is roc_hist.
 *
 * Adding a mechanism: one proto message, sdk/src/mech/<m>.c, one module here with its
 * estimator in host-sim/estimate, its line in registry.c, and its tests (README.md). */
#ifndef DPM_MECH_HOST_MECH_H
#define DPM_MECH_HOST_MECH_H

#include <stdint.h>

#include "common/json_write.h"
#include "dpm/expert/report.h"
#include "mech/base/campaign.h"
#include "mech/base/sums.h"

#define HOST_MECH_TWO_ROUND 1u    /* FedAUC: an upload phase, then ranks (collector/fedauc) */
#define HOST_MECH_BINS 2u         /* takes bins / edges; "bins" in the console */
#define HOST_MECH_MAX_EXAMPLES 4u /* takes max_examples (examples one report may hold) */
#define HOST_MECH_TUPLE_VALUES 8u /* stored with its values in columns (the tuple rows) */

/* The trust model of every local-DP mechanism (the console's words). */
#define HOST_TRUST_LOCAL_DP                                                                        \
    "local DP: every report is noised on the device; the collector is not trusted with any "       \
    "device's data"

/* What an estimate's JSON needs beyond the campaign and its sums. */
typedef struct {
    double confidence; /* of the intervals, in (0, 1) */
    int one_period;    /* the query asks for one period (FedAUC writes its phase) */
    uint32_t period;   /* that period */
} host_json_ctx_t;

typedef struct host_mech {
    const char *name;           /* the campaigns file's and the estimate's name (dpm_mech_name) */
    dpm_mech_id_t id;           /* on the wire */
    unsigned flags;             /* HOST_MECH_* */
    uint32_t default_frac_bits; /* the campaign's frac_bits when the file gives none */
    const char *trust_model;
    const char *privacy_unit; /* what one report protects */
    /* NULL, or the privacy unit where it depends on the campaign (ustat_bins' kernel) */
    const char *(*privacy_unit_for)(const dpm_campaign_t *cp);
    /* the estimator's parameters (c->disp, c->roc) from c->mech's exact integers; NULL: none
     * (computed at estimate time) */
    dpm_status_t (*params_init)(coll_campaign_t *c);
    /* NULL, or checks of the built campaign beyond the mechanism's own (roc_hist_groups: its
     * cells must fit the exact per-group sums): 0, or -1 with why */
    int (*check_built)(const coll_campaign_t *c, char *why, size_t cap);
    /* empty sums for campaign c; 0, or -1 if its estimator does not initialize */
    int (*state_init)(coll_campaign_state_t *st, const coll_campaign_t *c);
    /* the store's group column for an accepted report (how it is summed: agg_rocg.h); NULL: 0 */
    uint32_t (*stored_group)(const coll_campaign_t *c, const dpm_report_t *r);
    /* add a stored report, decoded, with its group column, to a transaction's sums (sums.h);
     * needs no campaign. 0, or -1 (memory, a body outside the layout, a sum that would leave
     * int64: checked, the report then adds nothing) */
    int (*delta_add)(coll_deltas_t *ds, const dpm_report_t *rep, uint32_t stored_group);
    /* "report_bounds"' members beyond the common ones; NULL: none */
    void (*bounds_json)(jw_t *w, const coll_campaign_t *c);
    /* `, "metrics": [...]` and the mechanism's own members of the estimate */
    void (*estimate_json)(jw_t *w, const coll_campaign_t *c, const coll_campaign_state_t *st,
                          const host_json_ctx_t *q);
    /* the estimate members computed from the sums alone (not from the collector's options or
     * bounds), as paths for jr_path_equal: dpm-sim's network mode renders its own sums of the
     * reports it sent with estimate_json and checks that the collector's answer holds the same
     * values there. NULL-terminated. */
    const char *const *compare;
} host_mech_t;

/* The module of a campaign (its mechanism, and for roc_hist its groups); NULL for a mechanism
 * no module serves. */
const host_mech_t *host_mech_of(const dpm_campaign_t *cp);

/* The module that sums a stored report of wire id `id` whose group column is `group` (a
 * per-group roc_hist report stores its campaign's groups there: agg_rocg.h); NULL: none. */
const host_mech_t *host_mech_stored(dpm_mech_id_t id, uint32_t group);

/* The modules. */
extern const host_mech_t host_mech_tuple_mr, host_mech_tuple_ml, host_mech_roc_hist,
    host_mech_roc_hist_groups, host_mech_dpauc, host_mech_ustat_bins, host_mech_ustat_tree,
    host_mech_fedauc_rr, host_mech_fedauc_lap;

/* Build campaign c as both sides hold it: the mechanism exactly as a device builds it
 * (dpm_mech_init), its module's estimator parameters, the bounds on honest reports (with
 * o->max_examples), the capacity of the exact sums, the dpm.v1.Campaign a device fetches; o is
 * copied. 0, or -1 with why (a sentence without the campaign's id). The campaigns file and
 * dpm-sim's network mode build theirs with it. */
int host_campaign_build(coll_campaign_t *cc, const dpm_campaign_t *c, const coll_campaign_opts_t *o,
                        char *why, size_t cap);

/* What one report of campaign cp protects (the console's words). */
const char *host_privacy_unit(const dpm_campaign_t *cp);

/* Empty sums for campaign c (its module's state_init). 0, or -1 if its estimator does not
 * initialize or no module serves it. */
int coll_state_init(coll_campaign_state_t *st, const coll_campaign_t *c);

#endif /* DPM_MECH_HOST_MECH_H */
