/* SPDX-License-Identifier: Apache-2.0 */
/* The FedAUC phases at run time (protocol and choices: fedauc_phase.h): the upload and rank
 * endpoints, the checks and token claims of FedAUC reports, the phase of a period for the
 * estimate. Thread-safe (one mutex around its database connection and rank cache). */
#ifndef DPM_COLLECTOR_FEDAUC_SERVICE_H
#define DPM_COLLECTOR_FEDAUC_SERVICE_H

#include <stddef.h>
#include <stdint.h>

#include "collector/ingest/app.h"
#include "mech/base/fedauc_phase.h"
#include "collector/ingest/http.h"

/* Open on the collector's database url (creates the tables fedauc_uploads, fedauc_phases).
 * 0, or -1 with a message. */
int coll_fedauc_open(coll_fedauc_t **out, const char *url, const coll_campaigns_t *cs, char *err,
                     size_t cap);
void coll_fedauc_close(coll_fedauc_t *f);

/* Count the rankings (built and cached) against the collector's memory budget (NULL: none): a
 * period's upload phase takes at most the scores whose ranking fits half of it ("upload phase
 * full"), cached rankings are dropped (oldest first) to make room, and a ranking that still
 * does not fit is answered 503 (Retry-After) until it does. */
void coll_fedauc_set_limits(coll_fedauc_t *f, coll_limits_t *limits);

/* An answer of the FedAUC endpoints (request.c turns it into its response). */
typedef struct {
    int status;
    const char *content_type;
    uint8_t *body; /* heap, may be NULL when len == 0 */
    size_t len;
    int close;
    const char *extra; /* static header lines (Allow, Retry-After) */
    /* a refused upload (4xx): the reason for the reject statistics (static, <= 47 bytes, "fedauc
     * upload: ..."), and its campaign (0: not attributable); NULL when nothing was refused */
    const char *reject;
    uint32_t reject_campaign;
} coll_fedauc_answer_t;

/* The campaign table a reload put in force (reload.h: the same campaigns, maybe more after
 * them). */
void coll_fedauc_set_campaigns(coll_fedauc_t *f, const coll_campaigns_t *cs);

/* POST /v1/fedauc/uploads and GET /v1/fedauc/{campaign}/ranks/{token hex} (the caller has
 * checked the device credential): device is its identity ("token:NAME", "cert:CN"; NULL or ""
 * when anonymous), quota its relay quota (0: a device credential, the campaign's
 * device_quota). An upload is bound to its identity: only it may fetch the ranks and report.
 * f NULL: 503. */
void coll_fedauc_request(coll_fedauc_t *f, const coll_campaigns_t *cs, const http_request_t *req,
                         const char *path, const uint8_t *body, size_t len, int64_t now,
                         const char *device, uint32_t quota, coll_fedauc_answer_t *resp);

/* Token claims of one batch (coll_fedauc_check_batch), released by coll_fedauc_settle. */
typedef struct {
    size_t n, cap;
    struct coll_fedauc_claim *c;
} coll_fedauc_claims_t;

/* Check every FedAUC report of a decoded batch against the upload it names and the ranks
 * sent for it, rejecting the bad ones (coll_batch_reject_report); when the batch has no
 * reject, claim each report's token. f NULL: FedAUC reports are rejected. 0, or -1 (memory
 * or database: the batch must not be committed; claims already released). */
int coll_fedauc_check_batch(coll_fedauc_t *f, const coll_campaigns_t *cs, coll_batch_t *b,
                            coll_fedauc_claims_t *claims);

/* After the commit: stored 1 keeps the claims, 0 releases those this batch made. Frees. */
void coll_fedauc_settle(coll_fedauc_t *f, coll_fedauc_claims_t *claims, int stored);

/* The phase of campaign index ci's period (closing it if its deadline passed). 0 or -1. */
int coll_fedauc_period_info(coll_fedauc_t *f, const coll_campaigns_t *cs, int ci, uint32_t period,
                            int64_t now, coll_fedauc_period_t *out);

/* A copy of this process's counters (coll_fedauc_stats_t; zeros when f is NULL). */
void coll_fedauc_stats(coll_fedauc_t *f, coll_fedauc_stats_t *out);

/* After a batch's commit: count its FedAUC reports stored (is_new, status 200) and rejected
 * (its reject counts of FedAUC campaigns). */
void coll_fedauc_count_batch(coll_fedauc_t *f, const coll_campaigns_t *cs, const coll_batch_t *b);

/* Dropouts from the database, per campaign index (out[cs->n], zeroed here): uploads with no
 * report once their period's reports are closed (coll_campaign_period_check: its period, late
 * allowance and clock slack are over). 0 or -1. */
int coll_fedauc_dropouts(coll_fedauc_t *f, const coll_campaigns_t *cs, int64_t now, uint64_t *out);

#endif /* DPM_COLLECTOR_FEDAUC_SERVICE_H */
