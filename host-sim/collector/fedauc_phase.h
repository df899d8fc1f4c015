/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC campaigns in the collector (fedauc_rr / fedauc_lap; SDK: dpm/fedauc.h; server
 * estimator: host-sim/estimate/fedauc.h; spec: fedauc-sun2022.md §1.4, §5). One evaluation
 * per campaign period P, in two phases:
 *
 *   phase 1, uploads   POST /v1/fedauc/uploads, body dpm.v1.FedaucUpload [device]. Accepted
 *                      while period P (the period open at the collector's clock) is in its
 *                      upload phase: until start + P period + upload_seconds, or until the
 *                      campaign's upload_count uploads arrived, whichever comes first. Stored
 *                      durably (table fedauc_uploads: campaign, 16-byte token, period, n, the
 *                      scores) before the 200; the same upload sent again is 200 again; the
 *                      same token with other scores 409; after the phase 409 "upload phase
 *                      closed" (nothing stored). Wrong fingerprint: 400 with the reason.
 *   ranking            when the phase closes (count reached, or the first request after the
 *                      deadline), it is marked closed in the database (table fedauc_phases) in
 *                      a transaction that serializes with the uploads, so every collector
 *                      sharing the database ranks exactly the same uploads; all M scores are
 *                      ranked (dpm_fa_rank2: doubled mid-ranks, ties stay integers).
 *   rank replies       GET /v1/fedauc/{campaign}/ranks/{token as 32 hex digits} [device]:
 *                      200 dpm.v1.FedaucRankReply | 404 unknown token | 409 while the upload
 *                      phase is open (Retry-After). Any number of times (same bytes).
 *   phase 2, reports   POST /v1/reports as for every mechanism; a FedAUC report must name an
 *                      upload of this campaign and period, exactly once per upload token, and
 *                      carry what the collector's own ranks imply (n, M, S, the sensitivity,
 *                      the adaptive split; fedauc_rr: 0 <= localP <= n and localSum2 between
 *                      the sums of the localP smallest and largest ranks). The token is
 *                      claimed (fedauc_uploads.report_id) before the batch is committed and
 *                      released if it is not: a second report for a token is refused
 *                      ("upload token already reported"), the same report resent is a
 *                      duplicate as usual.
 *   dropouts           a token that never asks for its ranks or never reports: its examples
 *                      are ranked (they are part of M) but have no statistics. The rank sums
 *                      need every ranked example (estimate/fedauc.h), so the estimate is then
 *                      undefined with the reason and the counts ("dropouts"); no estimate is
 *                      made from a subset whose ranks were taken among other scores.
 *
 * Storage: the collector's own database (--db: SQLite or PostgreSQL), through a connection of
 * this module (fedauc_db.h); the report sums go through the store with the report
 * (aggregate.h, fedauc_sums.c). */
#ifndef DPM_COLLECTOR_FEDAUC_PHASE_H
#define DPM_COLLECTOR_FEDAUC_PHASE_H

#include <stddef.h>
#include <stdint.h>

#include "collector/bounds.h"
#include "dpm/dpm.h"
#include "estimate/fedauc.h"

typedef struct coll_fedauc coll_fedauc_t;

/* Largest number of scores one period of a campaign ranks (the collector holds them). */
#define COLL_FEDAUC_MAX_SCORES (1u << 24)

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

/* Campaign file: the mechanism name ("fedauc_rr" / "fedauc_lap": 0 and *mech set, else -1). */
int coll_fedauc_mechanism(const char *name, dpm_mech_id_t *mech);

/* Campaign file keys variant, p_share, score_bits, upload_seconds, upload_count,
 * min_uploaders: their index 1 .. COLL_FEDAUC_KEYS if key is one of them (then *bad says
 * whether v parsed and *expect what it wants), 0 if not. */
#define COLL_FEDAUC_KEYS 6
#define COLL_FEDAUC_KEY_UPLOAD_SECONDS 4
#define COLL_FEDAUC_KEY_MIN_UPLOADERS 6
int coll_fedauc_key(const char *key, const char *v, dpm_campaign_t *c, coll_fedauc_opts_t *o,
                    int *bad, const char **expect);

/* Defaults and cross-checks at the end of a block (have: coll_fedauc_key's indices given):
 * NULL, or the problem. */
const char *coll_fedauc_finish(dpm_campaign_t *c, coll_fedauc_opts_t *o, const int *have);

/* The runtime (endpoints, report checks, phase state) is in fedauc_service.h. */

#endif /* DPM_COLLECTOR_FEDAUC_PHASE_H */
