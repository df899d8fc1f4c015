/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's campaigns, read once at start-up from a small text file.
 *
 * Format (also in the collector's --help): '#' starts a comment, blank lines are ignored,
 * every campaign is a block that starts with a line "[campaign]" followed by "key = value"
 * lines:
 *
 *   [campaign]
 *   id = 1                  required, 1 .. 4294967295, unique in the file
 *   mechanism = tuple_mr    required: tuple_mr, tuple_ml, roc_hist, or dpauc, ustat_bins,
 *                           ustat_tree (their keys: mech/base/campaigns_auc.h)
 *   eps = 1                 required: ε of one report, plain decimal (Q16.16, rounded down)
 *   budget = 1              ε a device may spend per period (default: eps)
 *   period_seconds = 86400  default 86400
 *   groups = 4              required: number of groups d, 2 .. DPM_MAX_GROUPS
 *   metrics = tpr, fpr      required: 1 .. 4 distinct of tpr, fpr, accuracy, precision
 *   frac_bits = 16          tuple_ml value grid F (default and only value: DPM_FRAC_BITS);
 *                           tuple_mr ignores it (default 0)
 *   bins = 10               roc_hist: B uniform score bins (edges k / B, Q1.31 rounded down)
 *   edges = 0.2, 0.5, 0.8   roc_hist: explicit score edges in (0, 1], strictly increasing
 *                           (one of bins / edges is required; metrics are not used)
 *   groups = 4              roc_hist (optional): per-group AUC (2 .. DPM_MAX_GROUPS; storage
 *                           bound in agg_rocg.h)
 *   group_eps = 0.5         roc_hist with groups: ε of the group's GRR (default eps / 2)
 *   mechanism = fedauc_rr | fedauc_lap   two-phase FedAUC (fedauc_phase.h); no groups/metrics
 *   score_bits = 16         fedauc: the devices' score quantization, 1 .. 31 (default 16)
 *   variant = local         fedauc_lap: local (default), global, orthogonal or adaptive
 *   p_share = 0.5           fedauc_lap but adaptive: the share of eps on localP (default 0.5)
 *   upload_seconds = 600    fedauc: the upload phase of each period, from its start (default
 *                           half the period)
 *   upload_count = 1000     fedauc: the upload phase also ends at this many uploads
 *   min_uploaders = 10      fedauc: ranks are released only for at least this many distinct
 *                           uploaders (default 10, or upload_count when smaller)
 *   max_examples = 100      roc_hist, dpauc, fedauc: examples (fedauc: scores) one device may
 *                           report (bounds.h)
 *   name = ..., group_names = a, b, ...   labels for people (campaign_names.h)
 *
 * Blocks "[dap_task]" are the two-aggregator tasks of `--role leader|helper`: skipped here and
 * counted (dap_tasks), read by aggregator/dap_tasks.h. A file may hold only those.
 *
 * Every campaign is built with dpm_mech_init, exactly as a device builds it, so a campaign the
 * collector accepts is one a device accepts, with the same mechanism fingerprint. */
#ifndef DPM_COLLECTOR_CAMPAIGNS_H
#define DPM_COLLECTOR_CAMPAIGNS_H

#include <stddef.h>
#include <stdint.h>

#include "mech/base/campaign.h"

#define COLL_MAX_CAMPAIGNS 64
#define COLL_DEFAULT_DEVICE_QUOTA 1u
#define COLL_DEFAULT_CLOCK_SLACK 300u

typedef struct {
    size_t n;
    coll_campaign_t c[COLL_MAX_CAMPAIGNS];
    size_t dap_tasks; /* [dap_task] blocks: skipped here, read by aggregator/dap_tasks.h */
} coll_campaigns_t;

/* Parse campaigns from text[0, len). Returns 0, or -1 with a message "line N: ..." in err. */
int coll_campaigns_parse(const char *text, size_t len, coll_campaigns_t *out, char *err,
                         size_t errcap);

/* Read and parse a campaigns file (at most 1 MiB). Returns 0, or -1 with a message in err. */
int coll_campaigns_load(const char *path, coll_campaigns_t *out, char *err, size_t errcap);

/* The campaign with this id, or NULL. */
const coll_campaign_t *coll_campaigns_find(const coll_campaigns_t *cs, uint32_t id);

/* Index of the campaign with this id, or -1. */
int coll_campaigns_index(const coll_campaigns_t *cs, uint32_t id);

/* Is `period` of campaign c open at Unix time now (its window widened by the slack and the
 * late allowance)? 0 yes; -1 not yet ("period not open yet"), 1 over ("period closed"). A
 * campaign without a start (has_start 0: the fuzzer, tests without a store) accepts every
 * period. */
int coll_campaign_period_check(const coll_campaign_t *c, uint32_t period, int64_t now);

/* The mechanism's name (dpm_mech_name; "unknown" for an id no build knows). */
const char *coll_mechanism_name(dpm_mech_id_t m);

#endif /* DPM_COLLECTOR_CAMPAIGNS_H */
