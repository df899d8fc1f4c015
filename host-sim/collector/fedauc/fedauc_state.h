/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to the FedAUC service (fedauc_service.h): its state and the helpers its three files
 * share (fedauc_service.c: tables, phases, rankings; fedauc_endpoints.c: uploads and rank
 * replies; fedauc_reports.c: report checks and token claims). Every helper needs f->mu held. */
#ifndef DPM_COLLECTOR_FEDAUC_STATE_H
#define DPM_COLLECTOR_FEDAUC_STATE_H

#include <pthread.h>
#include <stdint.h>

#include "collector/ingest/auth.h"
#include "collector/ingest/campaigns.h"
#include "collector/store/sqldb.h"
#include "mech/base/fedauc_phase.h"
#include "collector/ingest/limits.h"

#define TOKEN DPM_FEDAUC_TOKEN_BYTES
#define CACHE_MAX 8 /* rankings kept in memory (campaign, period) */

/* One upload's place in a ranking and what its ranks imply. */
typedef struct {
    uint8_t token[TOKEN];
    uint32_t n, off;
    uint64_t sum_rank2, maxdev;
    uint64_t tpos; /* sum max(0, n R_i - S): T of an honest report is in [-tpos, tpos] */
    uint32_t max_rank2;
} tok_t;

typedef struct {
    int used;
    uint32_t campaign_id, period;
    int64_t closed; /* when its phase closed */
    uint32_t m;
    uint32_t *rank2; /* [m], uploads in token order, each in upload order */
    tok_t *tok;      /* [ntok], sorted by token */
    size_t ntok;
    dpm_fa_ranking_t mom;
    coll_fa_influence_t influence; /* over its uploads (bounds.h) */
    coll_fedauc_dropouts_t drop;   /* for drop.reported_tokens claims (0: not made yet) */
    size_t reserved;               /* of the memory budget, while cached */
    uint64_t age;
} ranking_t;

struct coll_fedauc {
    pthread_mutex_t mu;
    sqldb_t *db;
    const coll_campaigns_t *cs; /* atomic: a reload appends (coll_fedauc_set_campaigns) */
    coll_limits_t *limits;      /* the collector's memory budget (NULL: none) */
    ranking_t cache[CACHE_MAX];
    uint64_t clock;
    coll_fedauc_stats_t stats;
    /* one ranking is built at a time, its sort without mu: who waits for it waits on built */
    int building;
    uint32_t building_cid, building_period;
    pthread_cond_t built;
    int over_budget; /* the last fa_ranking failed for the memory budget (answer 503) */
};

/* Bytes a ranking of m scores in u uploads holds while cached, and at its peak while built
 * (the scores, the sort's two index arrays, one chunk of rows read from the database). */
size_t fa_ranking_cached_bytes(uint64_t m, uint64_t u);
size_t fa_ranking_build_bytes(uint64_t m, uint64_t u, uint32_t max_examples);

/* Could a ranking of m scores in u uploads be built within the memory budget (at most half of
 * it) and COLL_FEDAUC_MAX_SCORES? */
int fa_ranking_fits(const coll_fedauc_t *f, uint64_t m, uint64_t u, uint32_t max_examples);

/* A period's row of fedauc_phases. */
typedef struct {
    int found;
    int64_t uploads, scores, closed;
    int64_t uploaders; /* distinct uploaders, set when the phase closes (-1: not counted yet) */
} phase_row_t;

/* An upload's row of fedauc_uploads (scores: heap, the caller frees). */
typedef struct {
    int found;
    int64_t period, n;
    uint8_t scores_hash[32];
    size_t scores_len;
    uint8_t *scores;
    int has_report;
    uint8_t report_id[DPM_REPORT_ID_BYTES];
    int has_device; /* 0: uploaded anonymously (--allow-anonymous-devices): bound to nobody */
    char device[COLL_IDENTITY_MAX];
} upload_row_t;

/* May a request of this identity (NULL: anonymous) use upload u? Its uploader only. */
int fa_same_uploader(const upload_row_t *u, const char *device);

/* Close the upload phase of (cid, period) at now (if still open), counting its distinct
 * uploaders. Inside the caller's transaction or alone. 0 or -1. */
int fa_close_phase(coll_fedauc_t *f, uint32_t cid, uint32_t period, int64_t now);

/* The end of period's upload phase (its start + upload_seconds). */
int64_t fa_deadline(const coll_campaign_t *c, uint32_t period);

/* The phase row (lock: FOR UPDATE on PostgreSQL, inside a transaction). 0 or -1. */
int fa_get_phase(coll_fedauc_t *f, uint32_t cid, uint32_t period, int lock, phase_row_t *p);

/* The phase of (c, period) at now, closing it when its deadline has passed. 0 or -1. */
int fa_phase_now(coll_fedauc_t *f, const coll_campaign_t *c, uint32_t period, int64_t now,
                 phase_row_t *p);

/* The ranking of a closed phase (cached, or ranked now); token (may be NULL) an upload the
 * database holds in this phase: a cached ranking without it, or of another phase row (its
 * closing time, uploads, scores), ranked a phase that retention dropped. NULL on failure
 * (f->over_budget 1: its memory is not available now). Building one releases f->mu during the
 * sort: the caller must not keep pointers into the cache across this call. */
ranking_t *fa_ranking(coll_fedauc_t *f, uint32_t cid, uint32_t period, const phase_row_t *p,
                      const uint8_t *token);

/* The upload with this token in a ranking, or NULL. */
const tok_t *fa_find_tok(const ranking_t *r, const uint8_t *token);

/* The upload row of (campaign, token) (u->found 0 if none). 0 or -1. */
int fa_get_upload(coll_fedauc_t *f, uint32_t cid, const uint8_t *token, upload_row_t *u);

#endif /* DPM_COLLECTOR_FEDAUC_STATE_H */
