/* SPDX-License-Identifier: Apache-2.0 */
/* The campaign keys each mechanism takes beyond the common ones (id, mechanism, eps, groups,
 * metrics, bins / edges, ...): the one list that the collector's campaigns file
 * (collector/ingest/campaigns.c) and dpm-sim's scenario files (sim/scenario/scenario_parse.c)
 * both read, so a key one of them takes for a mechanism is one the other takes too
 * (tests/unit/test_campaign_keys.c runs both readers over this list).
 *
 *   keys            the mechanism's own keys: both readers take them, the others refuse them
 *   collector_keys  the collector's options for this mechanism (how many examples a report may
 *                   hold, FedAUC's upload phase): the campaigns file only, never on the wire
 *
 * Every mechanism name a campaign may give is here, in dpm-sim's order. roc_hist_groups is
 * roc_hist with groups >= 2: the scenario names it, the campaigns file says `mechanism =
 * roc_hist` with `groups = G` (its_own_name is 0). */
#ifndef DPM_MECH_CAMPAIGN_KEYS_H
#define DPM_MECH_CAMPAIGN_KEYS_H

#include <stddef.h>

#include "dpm/mech.h"

/* At most this many distinct keys over all mechanisms (host_campaign_all_keys' out). */
#define HOST_CAMPAIGN_KEYS_MAX 32

typedef struct {
    const char *name;                  /* "dpauc" */
    dpm_mech_id_t id;                  /* on the wire */
    int its_own_name;                  /* 1: the campaigns file's `mechanism =` takes this name */
    const char *const *keys;           /* NULL-terminated */
    const char *const *collector_keys; /* NULL-terminated */
} host_campaign_mech_t;

/* The mechanisms, in dpm-sim's order (its "known:" list and `dpm-sim --help`). */
extern const host_campaign_mech_t host_campaign_mechs[];
extern const size_t host_campaign_nmechs;

/* The mechanism called `name`, or NULL. */
const host_campaign_mech_t *host_campaign_mech_find(const char *name);

/* Every key of every mechanism, each once, in first-seen order, appended to out[*n .. max):
 * both readers' "did you mean" candidates. collector: also the collector_keys. */
void host_campaign_all_keys(int collector, const char **out, int *n, int max);

/* 1 if the NULL-terminated list names key. */
int host_campaign_key_in(const char *const *list, const char *key);

/* m's keys (keys only), space separated, into buf ("" for none): dpm-sim's "its keys". */
const char *host_campaign_keys_text(const host_campaign_mech_t *m, char *buf, size_t cap);

/* 1 if mechanism m takes key in the reader: collector 1 for the campaigns file (keys and
 * collector_keys), 0 for a scenario (keys only). */
int host_campaign_mech_takes(const host_campaign_mech_t *m, const char *key, int collector);

#endif /* DPM_MECH_CAMPAIGN_KEYS_H */
