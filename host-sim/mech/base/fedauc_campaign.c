/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC campaign-file keys (fedauc_phase.h; their values: campaign_keys.c), the same names and
 * defaults as dpm-sim's scenario files (host-sim/sim/devices/mech_fedauc.c): the collector then
 * builds the campaign with dpm_mech_init like every other, so its fingerprint is the devices'. */
#include "mech/base/fedauc_phase.h"

#include <string.h>

#include "mech/base/campaign_keys.h"

#define DEFAULT_SCORE_BITS 16u
#define DEFAULT_P_SHARE 32768u /* 0.5 in Q0.16: the paper's α */

int coll_fedauc_is(uint32_t mechanism)
{
    return mechanism == DPM_MECH_ID_FEDAUC_RR || mechanism == DPM_MECH_ID_FEDAUC_LAP;
}

const char *coll_fedauc_key_defaults(uint32_t mechanism, uint32_t *variant, uint32_t *p_share_q16,
                                     uint32_t *score_bits)
{
    int lap = mechanism == DPM_MECH_ID_FEDAUC_LAP;
    if (lap && *variant == 0) {
        *variant = DPM_FEDAUC_LOCAL;
    }
    if (lap && *variant == DPM_FEDAUC_ADAPTIVE && *p_share_q16 != 0) {
        return "variant adaptive takes no p_share (each device splits eps)";
    }
    if (lap && *variant != DPM_FEDAUC_ADAPTIVE && *p_share_q16 == 0) {
        *p_share_q16 = DEFAULT_P_SHARE;
    }
    if (*score_bits == 0) {
        *score_bits = DEFAULT_SCORE_BITS;
    }
    return NULL;
}

const char *coll_fedauc_finish(dpm_campaign_t *c, coll_fedauc_opts_t *o, const char *const *given)
{
    int fa = coll_fedauc_is((uint32_t)c->mechanism);
    int lap = c->mechanism == DPM_MECH_ID_FEDAUC_LAP;
    int have_upload_seconds = host_campaign_key_in(given, "upload_seconds");
    int have_min_uploaders = host_campaign_key_in(given, "min_uploaders");
    if (!fa) {
        return c->fedauc_variant || c->fedauc_p_share_q16 || c->fedauc_score_bits ||
                       o->upload_count || have_upload_seconds || have_min_uploaders
                   ? "variant, p_share, score_bits, upload_seconds, upload_count and "
                     "min_uploaders are for fedauc_rr / fedauc_lap"
                   : NULL;
    }
    if (!have_min_uploaders) {
        /* a phase closing at fewer uploads than the default (campaign files made before
         * min_uploaders) releases ranks at its count */
        o->min_uploaders = o->upload_count != 0 && o->upload_count < COLL_FEDAUC_MIN_UPLOADERS
                               ? o->upload_count
                               : COLL_FEDAUC_MIN_UPLOADERS;
    }
    if (o->upload_count != 0 && o->upload_count < o->min_uploaders) {
        return "upload_count is below min_uploaders: the phase would close with too few "
               "uploaders to release ranks (lower min_uploaders, or raise upload_count)";
    }
    if (c->groups != 0 || c->nmetrics != 0) {
        return "fedauc takes no groups or metrics";
    }
    if (!lap && (c->fedauc_variant != 0 || c->fedauc_p_share_q16 != 0)) {
        return "fedauc_rr takes no variant or p_share";
    }
    const char *why = coll_fedauc_key_defaults(c->mechanism, &c->fedauc_variant,
                                               &c->fedauc_p_share_q16, &c->fedauc_score_bits);
    if (why != NULL) {
        return why;
    }
    if (!have_upload_seconds) {
        o->upload_seconds = c->period_seconds / 2u > 0 ? c->period_seconds / 2u : 1u;
    }
    if (o->upload_seconds > c->period_seconds) {
        return "upload_seconds is longer than the period";
    }
    return NULL;
}
