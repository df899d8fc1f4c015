/* SPDX-License-Identifier: Apache-2.0 */
/* POST /v1/reports bodies: decode a dpm.v1.Batch, validate every report against its campaign,
 * and encode the dpm.v1.BatchResponse.
 *
 * The Batch is walked with the SDK's codec (dpm/expert/batch.h, dpm_batch_next; any number of
 * reports, bounded only by the body limit): field 1 entries are reports, field 2 (a varint) is
 * the device's lost_reports count, other fields are skipped as protobuf requires, and any
 * framing error (bad varint, a length past the end, a group wire type, a known field of the
 * wrong wire type) makes the whole batch malformed. Each report is decoded with
 * dpm_report_decode, checked with dpm_mech_check_report against the campaign it names, then
 * against the campaign's honest-report bounds (bounds.h) and its period's time window
 * (campaigns.h); an all-zero report_id (the proto3 default) is refused because the collector
 * de-duplicates on (campaign, report_id).
 *
 * Memory: a decoded report keeps only what the store and the aggregates need (coll_report_t,
 * 64 bytes for a report of at least ~35 encoded bytes) and the array is sized by a first pass
 * over the framing, so a batch costs less than three times its body.
 *
 * Batch semantics (what devices rely on):
 *   every report valid          -> 200, all committed; BatchResponse{accepted, duplicates}
 *   any report invalid          -> 400, NOTHING committed; rejects list each bad report
 *   any report names a campaign -> 404, NOTHING committed; rejects as for 400
 *     the collector does not know
 *   the batch itself malformed  -> 400, one reject with an empty id, "malformed batch"
 * A device should drop the rejected reports and send the rest again. */
#ifndef DPM_COLLECTOR_BATCH_H
#define DPM_COLLECTOR_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "collector/ingest/campaigns.h"
#include "dpm/expert/batch.h"
#include "dpm/expert/report.h"

/* Rejects listed one by one in a response; beyond this one summary entry says how many more. */
#define COLL_REJECTS_LISTED 10000
/* Distinct (campaign, reason) pairs counted per batch; the rest count as (0, "other"). */
#define COLL_BATCH_MAX_COUNTS 64

/* A validated report, compactly: the tuple values are kept, any other body is decoded again
 * from raw when it is aggregated. */
typedef struct {
    const uint8_t *raw; /* the encoded report inside the request body */
    uint32_t raw_len;
    int32_t campaign_index;
    uint8_t report_id[DPM_REPORT_ID_BYTES];
    uint32_t campaign_id;
    uint32_t period;
    uint32_t group;    /* tuple: the group; roc_hist: the campaign's groups (0: ungrouped, the
                        * stored grp column: agg_rocg.h), the reported group is in the body */
    uint8_t mechanism; /* dpm_mech_id_t; 0 for a report read back from the store (its body,
                        * in raw, names it: coll_deltas_add) */
    uint8_t nvalues;   /* tuple: values held (in columns); others: 0, the body is in raw */
    uint8_t is_new;    /* set by the store: 1 if this commit stored it, 0 if a duplicate */
    int32_t value[DPM_CAMPAIGN_MAX_METRICS];
} coll_report_t;

typedef struct {
    uint8_t id[DPM_REPORT_ID_BYTES];
    uint8_t id_len;     /* 0 when the report was too broken to name itself */
    const char *reason; /* static string */
} coll_reject_t;

typedef struct {
    uint32_t campaign_id; /* 0: not attributable to a known campaign */
    const char *reason;   /* static string */
    uint64_t count;
} coll_reject_count_t;

typedef struct {
    coll_report_t *reports;
    size_t nreports, reports_cap;
    coll_reject_t *rejects;
    size_t nrejects, rejects_cap; /* listed (at most COLL_REJECTS_LISTED) */
    size_t rejects_total;
    coll_reject_count_t counts[COLL_BATCH_MAX_COUNTS];
    size_t ncounts;
    int unknown_campaign;
    int malformed;
    uint32_t lost_reports; /* Batch.lost_reports: reports the device lost before delivery */
    /* who sent it (set by the request handler): the device credential's identity (NULL or "":
     * anonymous, no quota) and its quota per campaign and period (0: the campaign's own) */
    const char *device;
    uint32_t quota_override;
    /* set by the commit */
    uint32_t accepted;
    uint32_t duplicates;
} coll_batch_t;

/* Decode and validate body[0, len) into *b (which must be zeroed or fresh) at Unix time now
 * (for the period windows). The reports point into body, which must outlive *b. 0, or -1 if
 * memory ran out. */
int coll_batch_decode(const coll_campaigns_t *cs, const uint8_t *body, size_t len, int64_t now,
                      coll_batch_t *b);

/* Turn accepted report i into a reject (the store's quota check): the batch then stores
 * nothing. 0, or -1 if memory ran out (the reject is still counted). */
int coll_batch_reject_report(coll_batch_t *b, size_t i, const char *reason);

/* Count a request-level problem (e.g. "body too large") as a reject of one unattributed item. */
void coll_batch_count(coll_batch_t *b, uint32_t campaign_id, const char *reason, uint64_t n);

void coll_batch_free(coll_batch_t *b);

/* 200, 400 or 404 per the batch semantics above. */
int coll_batch_status(const coll_batch_t *b);

/* Encode the dpm.v1.BatchResponse into a new heap buffer. 0, or -1 if memory ran out. */
int coll_batch_response(const coll_batch_t *b, uint8_t **out, size_t *len);

#endif /* DPM_COLLECTOR_BATCH_H */
