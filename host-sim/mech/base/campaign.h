/* SPDX-License-Identifier: Apache-2.0 */
/* One campaign as the collector holds it: the mechanism exactly as a device builds it
 * (dpm_mech_init), the estimator parameters derived from its integers, the bounds on honest
 * reports, and the options only the collector uses. The campaigns file builds it
 * (collector/ingest/campaigns.h); the mechanism modules (host_mech.h) read it. */
#ifndef DPM_MECH_CAMPAIGN_H
#define DPM_MECH_CAMPAIGN_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/report.h"
#include "estimate/disparity.h"
#include "estimate/roc.h"
#include "mech/base/bounds.h"
#include "mech/base/campaign_names.h"
#include "mech/base/fedauc_phase.h"

/* Options of a campaign that only the collector uses. */
typedef struct coll_campaign_opts {
    uint32_t max_examples; /* roc_hist and dpauc (0 otherwise) */
    uint32_t device_quota;
    int has_start; /* 0 until the file or the store sets start */
    int64_t start; /* Unix seconds */
    uint32_t slack_seconds;
    uint32_t late_seconds;
    coll_fedauc_opts_t fedauc;   /* fedauc_rr / fedauc_lap: the upload phase (fedauc_phase.h) */
    coll_campaign_names_t names; /* optional names (campaign_names.h) */
} coll_campaign_opts_t;

typedef struct {
    dpm_mech_t mech;        /* the mechanism and its fingerprint (mech.campaign is the campaign) */
    dpm_disp_params_t disp; /* estimator parameters from the mechanism's exact integers */
    dpm_roc_params_t roc;   /* roc_hist: the devices' Laplace scale and bins */
    uint8_t pb[DPM_CAMPAIGN_MAX_BYTES]; /* the dpm.v1.Campaign served by GET /v1/campaigns/{id} */
    size_t pb_len;
    coll_bounds_t bounds;      /* what an honest report can hold (bounds.h) */
    coll_campaign_opts_t opts; /* quotas and time window */
} coll_campaign_t;

#endif /* DPM_MECH_CAMPAIGN_H */
