/* SPDX-License-Identifier: Apache-2.0 */
/* The list of host mechanism modules (see host_mech.h): the only place that names them all. */
#include "mech/host_mech.h"

#include <string.h>

#include "common/err.h"

static const host_mech_t *const kModules[] = {
    &host_mech_tuple_mr,   &host_mech_tuple_ml,   &host_mech_roc_hist,  &host_mech_dpauc,
    &host_mech_ustat_bins, &host_mech_ustat_tree, &host_mech_fedauc_rr, &host_mech_fedauc_lap,
};

static const host_mech_t *by_id(dpm_mech_id_t id)
{
    for (size_t i = 0; i < sizeof(kModules) / sizeof(kModules[0]); i++) {
        if (kModules[i]->id == id) {
            return kModules[i];
        }
    }
    return NULL;
}

/* A roc_hist campaign with groups keeps its sums, bounds and estimate per group: the module
 * of its own (on the wire it is roc_hist, with the group in the report; the store's group
 * column of its reports holds the campaign's groups). */
const host_mech_t *host_mech_stored(dpm_mech_id_t id, uint32_t group)
{
    const host_mech_t *hm = by_id(id);
    return hm == &host_mech_roc_hist && group >= 2 ? &host_mech_roc_hist_groups : hm;
}

const host_mech_t *host_mech_of(const dpm_campaign_t *cp)
{
    return host_mech_stored(cp->mechanism, cp->groups);
}

int host_campaign_build(coll_campaign_t *cc, const dpm_campaign_t *c, const coll_campaign_opts_t *o,
                        char *why, size_t cap)
{
    memset(cc, 0, sizeof(*cc));
    const char *reason = "";
    if (dpm_mech_init(&cc->mech, c, &reason) != DPM_OK) {
        return host_fail(why, cap, "%s", reason);
    }
    const host_mech_t *hm = host_mech_of(c);
    if (hm == NULL) {
        return host_fail(why, cap, "no host module for mechanism %s",
                         dpm_mech_name(c->mechanism) != NULL ? dpm_mech_name(c->mechanism)
                                                             : "unknown");
    }
    /* the estimator's parameters from the mechanism's exact integers (the AUC family and
     * FedAUC: at estimate time) */
    dpm_status_t st = hm->params_init != NULL ? hm->params_init(cc) : DPM_OK;
    if (st != DPM_OK) {
        return host_fail(why, cap, "no estimator for these parameters (%s)", dpm_strerror(st));
    }
    if (coll_bounds_init(&cc->bounds, &cc->mech, o->max_examples) != 0) {
        return host_fail(why, cap, "cannot bound its reports");
    }
    if (hm->check_built != NULL && hm->check_built(cc, why, cap) != 0) {
        return -1; /* its own, more precise limit first */
    }
    const char *cap_why = coll_bounds_capacity_why(&cc->bounds);
    if (cap_why != NULL) {
        return host_fail(why, cap, "%s", cap_why);
    }
    cc->opts = *o;
    if (dpm_campaign_encode(c, cc->pb, sizeof(cc->pb), &cc->pb_len) != DPM_OK) {
        return host_fail(why, cap, "cannot encode");
    }
    return 0;
}

const char *host_privacy_unit(const dpm_campaign_t *cp)
{
    const host_mech_t *hm = host_mech_of(cp);
    return hm == NULL                     ? "unknown"
           : hm->privacy_unit_for != NULL ? hm->privacy_unit_for(cp)
                                          : hm->privacy_unit;
}

int coll_state_init(coll_campaign_state_t *st, const coll_campaign_t *c)
{
    memset(st, 0, sizeof(*st));
    const host_mech_t *hm = host_mech_of(&c->mech.campaign);
    return hm != NULL ? hm->state_init(st, c) : -1;
}
