/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC campaigns in the collector (fedauc_rr / fedauc_lap; SDK: dpm/expert/fedauc.h; server
 * estimator: host-sim/estimate/fedauc.h; sdk/docs/fedauc.md §Shared first round,
 * sdk/docs/fedauc.md §Device numbers). One evaluation per campaign period P, in two phases:
 *
 *   phase 1, uploads   POST /v1/fedauc/uploads, body dpm.v1.FedaucUpload [device]. Accepted
 *                      while period P (the period open at the collector's clock) is in its
 *                      upload phase: until start + P period + upload_seconds, or until the
 *                      campaign's upload_count uploads arrived, whichever comes first. Stored
 *                      durably (table fedauc_uploads: campaign, 16-byte token, period, n, the
 *                      scores, the credential) before the 200; the same upload sent again by
 *                      the same credential is 200 again; the same token with other scores (or
 *                      from another credential) 409; after the phase 409 "upload phase closed"
 *                      (nothing stored). Wrong fingerprint: 400 with the reason; more scores
 *                      than the campaign's max_examples: 400.
 *   the credential     an upload is bound to the identity that sent it ("token:NAME",
 *                      "cert:CN"; anonymous uploads, --allow-anonymous-devices, to nobody).
 *                      Uploads count against its quota per campaign and period (device_quota,
 *                      or a relay credential's N): one more is 409 "device quota exceeded".
 *                      Only that identity may fetch the upload's ranks (another gets 404, as
 *                      for an unknown token) and report for it ("no upload with this token").
 *   ranking            when the phase closes (count reached, or the first request after the
 *                      deadline), it is marked closed in the database (table fedauc_phases) in
 *                      a transaction that serializes with the uploads, so every collector
 *                      sharing the database ranks exactly the same uploads, and its distinct
 *                      uploaders are counted (one per device identity; each upload of a relay
 *                      credential or an anonymous one counts alone); all M scores are ranked
 *                      (dpm_fa_rank2: doubled mid-ranks, ties stay integers). A ranking's
 *                      memory is reserved from the collector's budget while it is built and
 *                      cached (fedauc_service.h); the sort runs without the service's lock.
 *   scraping           a rank reply reveals where the other uploads' scores fall between the
 *                      device's own: a probe holding every score value reads the pool's exact
 *                      histogram, so with one other uploader that device's scores exactly (the
 *                      issue 27 audit recovered 25). Ranks are therefore released only when
 *                      the phase closes with at least min_uploaders distinct uploaders
 *                      (default 10, or upload_count when smaller): a probe then reads the
 *                      pooled scores of at least min_uploaders - 1 others. Otherwise every
 *                      rank request is 409 "ranks withheld" and the period has no estimate
 *                      (phase "withheld"). Coarsened ranks were not chosen: the rank sums need
 *                      the exact ranks, and any coarsening that hides one device's scores
 *                      biases the AUC. An attacker holding min_uploaders - 1 credentials can
 *                      still isolate one device: the quota and credentials bound that.
 *   rank replies       GET /v1/fedauc/{campaign}/ranks/{token as 32 hex digits} [device]:
 *                      200 dpm.v1.FedaucRankReply | 404 unknown token (or another
 *                      credential's) | 409 while the upload phase is open (Retry-After) or
 *                      when the ranks are withheld | 503 while the ranking does not fit the
 *                      memory budget (Retry-After). Any number of times (same bytes).
 *   phase 2, reports   POST /v1/reports as for every mechanism; a FedAUC report must come from
 *                      its upload's credential, name an upload of this campaign and period,
 *                      exactly once per upload token, carry what the collector's own ranks
 *                      imply (n, M, S, the sensitivity, the adaptive split; fedauc_rr: 0 <=
 *                      localP <= n and localSum2 between the sums of the localP smallest and
 *                      largest ranks) and noised values within their noise's bounds
 *                      (bounds.h). The token is claimed (fedauc_uploads.report_id) before the
 *                      batch is committed and released if it is not: a second report for a
 *                      token is refused ("upload token already reported"), the same report
 *                      resent is a duplicate as usual.
 *   dropouts           an upload that never reports: its examples were ranked (they are part of
 *                      M) but have no statistics. The rule: the estimate is of the REPORTED
 *                      examples (M' of them). Their rank sums still count the dropouts'
 *                      examples below them: a reported example i carries d_i = (dropout
 *                      examples ranked below it) + (tied ones) / 2, which the collector knows
 *                      from its own ranking; which of them are positive it does not. So the
 *                      sum of the positives' d_i lies between the sum of the P smallest and
 *                      of the P largest d_i (P the estimated positives); the estimate takes the
 *                      middle and its interval spans both ends (dropout_bias_max: half the
 *                      width added). One silent upload of n examples moves the interval's
 *                      ends by at most about n / N and never blocks the estimate; while the
 *                      period's reports are open (reports_closed false) a missing report may
 *                      still arrive.
 *
 * Storage: the collector's own database (--db: SQLite or PostgreSQL), through a connection of
 * this module (collector/store/sqldb.h); the report sums go through the store with the report
 * (aggregate.h, fedauc_sums.c). */
#ifndef DPM_COLLECTOR_FEDAUC_PHASE_H
#define DPM_COLLECTOR_FEDAUC_PHASE_H

#include <stddef.h>
#include <stdint.h>

#include "mech/base/bounds.h"
#include "dpm/dpm.h"
#include "estimate/fedauc.h"

typedef struct coll_fedauc coll_fedauc_t;

/* COLL_FEDAUC_MAX_SCORES (bounds.h): the most scores one period of a campaign ranks. */

/* Collector-side options of a FedAUC campaign (campaign file). */
typedef struct {
    uint32_t upload_seconds; /* phase 1 length from the period's start (default period / 2) */
    uint32_t upload_count;   /* phase 1 ends at this many uploads (0: only the deadline) */
    uint32_t min_uploaders;  /* ranks are released only when at least this many distinct
                              * uploaders took part (default COLL_FEDAUC_MIN_UPLOADERS) */
} coll_fedauc_opts_t;

/* Default of min_uploaders: a rank reply reveals how the other uploads' scores fall between
 * the device's own (a probe holding every score value reads their histogram), so ranks are
 * withheld until the pool mixes at least this many uploaders (fedauc_phase.h, "scraping"). */
#define COLL_FEDAUC_MIN_UPLOADERS 10u

/* The phase of one period, as the estimate reports it. */
/* Buckets of the dropouts' summary (coll_fedauc_period_t.d_count). */
#define COLL_FEDAUC_D_BUCKETS 256

/* Dropouts of a ranking with some uploads not reported (the rule in "dropouts" above): the
 * reported examples' count and rank moments, and for each reported example i its
 * d2_i = 2 (dropout examples ranked below it) + (dropout examples tied with it), in buckets of
 * d_width doubled-rank units: bucket k counts the d2 in [k d_width, (k + 1) d_width - 1]. */
typedef struct {
    uint64_t reported_tokens; /* the claims this summary was made for */
    uint64_t drop_examples, reported_examples;
    dpm_fa_ranking_t reported_moments;
    uint64_t d_width, d2_max;
    uint64_t d_count[COLL_FEDAUC_D_BUCKETS];
} coll_fedauc_dropouts_t;

typedef struct {
    int known;                          /* 0: no upload in this period */
    int closed;                         /* upload phase over */
    int withheld;                       /* closed with fewer than min_uploaders: no ranks */
    int reports_closed;                 /* the period's reports are over (late, slack included) */
    uint64_t uploads, scores, reported; /* reported: tokens claimed by a stored report */
    uint64_t uploaders;                 /* distinct uploaders (closed only; see fedauc_phase.h) */
    dpm_fa_ranking_t moments;           /* of the ranking (closed only) */
    coll_fedauc_dropouts_t drop;        /* closed and ranked only */
    coll_fa_influence_t influence;      /* what one report can change (bounds.h) */
} coll_fedauc_period_t;

/* This process's FedAUC counters (/metrics, metrics.h; fedauc_service.h): uploads newly stored,
 * stored ones sent again, refused (late ones included) and refused as late (after the upload
 * phase closed), rank replies served (200), FedAUC reports newly stored and rejected (any
 * reason). */
typedef struct {
    uint64_t uploads_accepted, uploads_duplicate, uploads_rejected, uploads_late;
    uint64_t rank_replies;
    uint64_t reports_accepted, reports_rejected;
} coll_fedauc_stats_t;

/* The stored report sums of a FedAUC campaign (rows of the tuple sums, fedauc_sums.c). */
typedef struct {
    int on;
    int overflow; /* a stored sum did not fit int64 (never within bounds.h's capacity) */
    int64_t n[4][2], s[4][2];
    double ss[4][2];
} coll_fedauc_sums_t;

/* Is mechanism id a FedAUC one? */
int coll_fedauc_is(uint32_t mechanism);

/* FedAUC's own keys once a campaign (a campaigns file's block or a scenario's) gave its values
 * (0: not given): fedauc_lap's variant defaults to local and, but for adaptive, p_share to 0.5
 * (the paper's α); score_bits to 16. NULL, or why the values do not go together. */
const char *coll_fedauc_key_defaults(uint32_t mechanism, uint32_t *variant, uint32_t *p_share_q16,
                                     uint32_t *score_bits);

/* Defaults and cross-checks of the campaign file's FedAUC keys (variant, p_share, score_bits,
 * upload_seconds, upload_count, min_uploaders: campaign_keys.h) at the end of a block; given:
 * the mechanisms' own keys given, NULL-terminated. NULL, or the problem. */
const char *coll_fedauc_finish(dpm_campaign_t *c, coll_fedauc_opts_t *o, const char *const *given);

/* The runtime (endpoints, report checks, phase state) is in fedauc_service.h. */

#endif /* DPM_COLLECTOR_FEDAUC_PHASE_H */
