/* SPDX-License-Identifier: Apache-2.0 */
/* Names for people: a campaign's name and its groups' names, optional keys of the campaigns
 * file (campaigns.h), shown by the estimate JSON ("name", "group_names") and the console.
 *
 *   name = checkout model v3      1 .. 63 characters: letters, digits, space and _-.:/()+
 *   group_names = 18-29, 30-44, 45-64, 65+
 *                                 one name per group (the same characters, no comma), in
 *                                 group order 0 .. groups - 1; only for campaigns with groups
 *
 * Names are labels only: the devices never see them, they are not part of the mechanism's
 * fingerprint, and a campaign without them is shown by its id and group numbers. */
#ifndef DPM_MECH_CAMPAIGN_NAMES_H
#define DPM_MECH_CAMPAIGN_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "common/json_write.h"
#include "dpm/config.h"
#include "dpm/expert/report.h"

#define COLL_NAME_MAX 64       /* bytes of a campaign name, NUL included */
#define COLL_GROUP_NAME_MAX 32 /* bytes of a group name, NUL included */

typedef struct {
    char name[COLL_NAME_MAX]; /* "": none */
    uint32_t ngroup_names;    /* 0: none */
    char group_names[DPM_MAX_GROUPS][COLL_GROUP_NAME_MAX];
    int have_name, have_group_names;
} coll_campaign_names_t;

/* If key is "name" or "group_names": parse v into n and return 1 (*bad set when v is not
 * valid, *expect says what is; *twice set when the key was given before). Else return 0. */
int coll_names_key(const char *key, const char *v, coll_campaign_names_t *n, int *bad, int *twice,
                   const char **expect);

/* After the block: NULL, or why the names do not fit a campaign of `groups` groups. */
const char *coll_names_finish(const coll_campaign_names_t *n, uint32_t groups);

/* Writes `, "name": "..."` and `, "group_names": ["...", ...]` (JSON members), each only when
 * the campaign has it (a null would need a reason: estimate_json.h). */
void coll_names_json(jw_t *w, const coll_campaign_names_t *n);

/* A metric's name: "tpr", "fpr", "accuracy", "precision" ("unknown" otherwise), and back from
 * the n bytes at s (0: none). */
const char *host_metric_name(dpm_metric_t m);
dpm_metric_t host_metric_from_name(const char *s, size_t n);

#endif /* DPM_MECH_CAMPAIGN_NAMES_H */
