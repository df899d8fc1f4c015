/* SPDX-License-Identifier: Apache-2.0 */
/* `dpm-collector --check-campaigns FILE`: every campaign and [dap_task] of a campaigns file
 * validated as the servers would, each with its ε, privacy unit and trust model, then the
 * composed ε of one device taking part in all of them (mech/base/composition.h): one figure
 * across both trust models, with the two-aggregator part apart (it holds only while one
 * aggregator is honest). */
#ifndef DPM_HOST_COLLECTOR_OPS_CHECK_CAMPAIGNS_H
#define DPM_HOST_COLLECTOR_OPS_CHECK_CAMPAIGNS_H

#include "collector/ingest/campaigns.h"

/* Prints to stdout; a refusal to stderr. Returns the exit code: 0, or 2 for a file the servers
 * would refuse (cs is scratch: the campaigns are loaded into it). */
int coll_check_campaigns(const char *path, coll_campaigns_t *cs);

#endif /* DPM_HOST_COLLECTOR_OPS_CHECK_CAMPAIGNS_H */
