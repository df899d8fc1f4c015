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
 * and what each of those keys' values may be (host_campaign_key_t): both readers parse a value
 * with host_campaign_key_value and word the refusal their own way ("bad KEY 'V' (want ...)" in
 * the campaigns file, "KEY must be ..., not 'V'" in a scenario).
 *
 * Every mechanism name a campaign may give is here, in dpm-sim's order. roc_hist_groups is
 * roc_hist with groups >= 2: the scenario names it, the campaigns file says `mechanism =
 * roc_hist` with `groups = G` (its_own_name is 0). roc_hist_2agg (the two-aggregator mode) is
 * dpm-sim's only so far (sim_only). */
#ifndef DPM_MECH_CAMPAIGN_KEYS_H
#define DPM_MECH_CAMPAIGN_KEYS_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/mech.h"

struct coll_campaign_opts; /* mech/base/campaign.h: coll_campaign_opts_t */

/* The collector keeps ustat_tree sums in a fixed vector (agg_auc.h): depth up to this (the
 * campaigns file's bound on depth and grr_levels). */
#define COLL_TREE_MAX_DEPTH 10

/* Every mechanism key, as host_campaign_key_at numbers them: first those both readers take (a
 * scenario keeps the line of each: sim_campaign_spec_t.keys_line[HOST_CK_...]), then the
 * collector's options. */
enum {
    HOST_CK_THRESHOLDS,
    HOST_CK_CALIBRATION,
    HOST_CK_K,
    HOST_CK_KERNEL,
    HOST_CK_DEPTH,
    HOST_CK_GRR_LEVELS,
    HOST_CK_GROUP_EPS,
    HOST_CK_VARIANT,
    HOST_CK_P_SHARE,
    HOST_CK_SCORE_BITS,
    HOST_CK_MAX_DEVICE_EXAMPLES,
    HOST_CK_NOISE,
    HOST_CK_DELTA,
    HOST_CK_LOCAL_EPS,
    HOST_CK_SCENARIO, /* the count of the keys above */
    HOST_CK_UPLOAD_SECONDS = HOST_CK_SCENARIO,
    HOST_CK_UPLOAD_COUNT,
    HOST_CK_MIN_UPLOADERS,
    HOST_CK_MAX_EXAMPLES,
    HOST_CK_COUNT
};

typedef struct {
    const char *name;                  /* "dpauc" */
    dpm_mech_id_t id;                  /* on the wire */
    int its_own_name;                  /* 1: the campaigns file's `mechanism =` takes this name */
    const char *const *keys;           /* NULL-terminated */
    const char *const *collector_keys; /* NULL-terminated */
    int sim_only; /* 1: dpm-sim only, the campaigns file refuses the name (the two-aggregator
                   * mode: its tasks will be the leader's and the helper's, issue 31) */
} host_campaign_mech_t;

/* The mechanisms, in dpm-sim's order (its "known:" list and `dpm-sim --help`). */
extern const host_campaign_mech_t host_campaign_mechs[];
extern const size_t host_campaign_nmechs;

/* The mechanism called `name`, or NULL. */
const host_campaign_mech_t *host_campaign_mech_find(const char *name);

/* The mechanisms' names, in order, into buf: "a, b, c" (last: ", "), or "a, b or c" (last:
 * " or "); its_own_only: only the names the campaigns file's `mechanism =` takes. */
const char *host_campaign_mech_names(int its_own_only, const char *last, char *buf, size_t cap);

/* 1 if the NULL-terminated list names key. */
int host_campaign_key_in(const char *const *list, const char *key);

/* m's keys (keys only), space separated, into buf ("" for none): dpm-sim's "its keys". */
const char *host_campaign_keys_text(const host_campaign_mech_t *m, char *buf, size_t cap);

/* 1 if mechanism m takes key in the reader: collector 1 for the campaigns file (keys and
 * collector_keys), 0 for a scenario (keys only). */
int host_campaign_mech_takes(const host_campaign_mech_t *m, const char *key, int collector);

/* What a key's value may be. */
typedef enum {
    HOST_KEY_INT,    /* decimal digits in [lo, hi] */
    HOST_KEY_CHOICE, /* one of choices: first + its index */
    HOST_KEY_EPS,    /* a plain decimal in (0, DPM_EPS_MAX], Q16.16 */
    HOST_KEY_SHARE,  /* a plain decimal in (0, 1), Q0.16 */
    HOST_KEY_DELTA,  /* a decimal in (0, 1e-5] (no value out: the reader keeps the double) */
} host_key_kind_t;

typedef struct {
    const char *key;
    host_key_kind_t kind;
    /* HOST_KEY_INT: the range a scenario takes (the SDK's build checks its own limits, with the
     * line, when the campaign is built) and the campaigns file's upper bound (the collector's
     * storage or the SDK's build: it says so in want; 0: hi) */
    uint32_t lo, hi, collector_hi;
    const char *const *choices; /* HOST_KEY_CHOICE, NULL-terminated */
    uint32_t first;             /* HOST_KEY_CHOICE: the value of choices[0] */
    const char *want;           /* the campaigns file's "(want ...)" */
    const char *must;           /* the scenario's "KEY must be ..." (HOST_KEY_INT: generated) */
} host_campaign_key_t;

/* Key i (HOST_CK_*), or NULL past HOST_CK_COUNT. */
const host_campaign_key_t *host_campaign_key_at(int i);

/* The key called `key` (any mechanism's own or collector key), or NULL; *index (if not NULL)
 * gets its HOST_CK_ number. */
const host_campaign_key_t *host_campaign_key_find(const char *key, int *index);

/* v as k's value: 0 with *out set, or -1 (not of the kind, or outside the range). collector: the
 * campaigns file's bounds and its integers (digits only), else a scenario's (1e3 too). */
int host_campaign_key_value(const host_campaign_key_t *k, const char *v, int collector,
                            uint32_t *out);

/* The campaigns file: value (host_campaign_key_value's) of key k into the campaign and the
 * collector's options. */
void host_campaign_key_store(const host_campaign_key_t *k, uint32_t value, dpm_campaign_t *c,
                             struct coll_campaign_opts *o);

#endif /* DPM_MECH_CAMPAIGN_KEYS_H */
