/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC reports: each checked against its upload and the ranks the collector sent, its upload
 * token claimed once (fedauc_phase.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/fedauc/fedauc_service.h"
#include "collector/fedauc/fedauc_state.h"
#include "common/grow.h"

/* A failure to look (database, memory), not a verdict on the report: the batch is answered
 * 500 (or 503) and the device sends it again; it is never a reject, which would drop it. */
static const char TRANSIENT[] = "storage failure";

struct coll_fedauc_claim {
    uint32_t campaign_id;
    uint8_t token[TOKEN];
    uint8_t report_id[DPM_REPORT_ID_BYTES];
};

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Does the report's body agree with the ranks the collector sent for its token? NULL or why. */
static const char *check_against_ranks(const coll_campaign_t *c, const ranking_t *r, const tok_t *t,
                                       const dpm_report_t *rep)
{
    const dpm_fedauc_report_t *b = &rep->body.fedauc;
    const dpm_fedauc_t *fa = &c->mech.params.fedauc;
    if (b->n != t->n || b->total != r->m) {
        return "n or M differ from the ranks sent";
    }
    if (b->sum_rank2 != t->sum_rank2) {
        return "rank sum differs from the ranks sent";
    }
    if (rep->mechanism == DPM_MECH_ID_FEDAUC_RR) {
        if (b->local_p < 0 || b->local_p > (int64_t)t->n) {
            return "localP outside [0, n]";
        }
        uint32_t *sorted = malloc((size_t)t->n * 4u + 4u);
        if (sorted == NULL) {
            return TRANSIENT;
        }
        memcpy(sorted, r->rank2 + t->off, (size_t)t->n * 4u);
        qsort(sorted, t->n, 4, cmp_u32);
        int64_t lo = 0, hi = 0;
        for (int64_t i = 0; i < b->local_p; i++) {
            lo += sorted[i];
            hi += sorted[t->n - 1 - (uint32_t)i];
        }
        free(sorted);
        return b->local_sum2 < lo || b->local_sum2 > hi
                   ? "localSum2 cannot come from the ranks sent"
                   : NULL;
    }
    uint64_t sens = 0;
    switch (fa->variant) {
    case DPM_FEDAUC_LOCAL: sens = t->max_rank2; break;
    case DPM_FEDAUC_GLOBAL: sens = 2u * ((uint64_t)r->m - 1u); break;
    default: sens = t->maxdev; break;
    }
    if (b->sensitivity != sens) {
        return "sensitivity differs from the ranks sent";
    }
    if (fa->variant == DPM_FEDAUC_ADAPTIVE &&
        b->eps_p != dpm_fedauc_adaptive_eps_p(t->sum_rank2, t->maxdev, fa->eps)) {
        return "adaptive split differs from the ranks sent";
    }
    const char *why = NULL; /* the noised values, within their noise's bounds (bounds.h) */
    return coll_bounds_fa_check(&c->bounds, b, t->tpos, &why) != 0 ? why : NULL;
}

static const char *check_one(coll_fedauc_t *f, const coll_campaigns_t *cs, const coll_report_t *cr,
                             const char *device, int64_t now, uint8_t *token)
{
    dpm_report_t rep;
    const coll_campaign_t *c = &cs->c[cr->campaign_index];
    if (dpm_report_decode(cr->raw, cr->raw_len, &rep) != DPM_OK) {
        return "malformed report";
    }
    memcpy(token, rep.body.fedauc.upload_token, TOKEN);
    upload_row_t u;
    phase_row_t p;
    if (fa_get_upload(f, c->mech.campaign.id, token, &u) != 0) {
        return TRANSIENT;
    }
    free(u.scores);
    if (!u.found || !fa_same_uploader(&u, device)) {
        return "no upload with this token"; /* another credential's token: unknown too */
    }
    if ((uint32_t)u.period != rep.period) {
        return "period is not its upload's";
    }
    if (u.has_report && memcmp(u.report_id, rep.report_id, DPM_REPORT_ID_BYTES) != 0) {
        return "upload token already reported";
    }
    if (fa_phase_now(f, c, rep.period, now, &p) != 0) {
        return TRANSIENT;
    }
    if (p.closed == 0) {
        return "ranks not sent yet";
    }
    if (p.uploaders < (int64_t)c->opts.fedauc.min_uploaders) {
        return "ranks withheld: too few uploaders";
    }
    ranking_t *r = fa_ranking(f, c->mech.campaign.id, rep.period, &p, token);
    const tok_t *t = r != NULL ? fa_find_tok(r, token) : NULL;
    if (t == NULL) {
        return TRANSIENT;
    }
    return check_against_ranks(c, r, t, &rep);
}

static int claim_add(coll_fedauc_claims_t *cl, uint32_t cid, const uint8_t *token,
                     const uint8_t *rid)
{
    if (HOST_GROW(cl->c, cl->n, cl->cap, 8) != 0) {
        return -1;
    }
    cl->c[cl->n].campaign_id = cid;
    memcpy(cl->c[cl->n].token, token, TOKEN);
    memcpy(cl->c[cl->n].report_id, rid, DPM_REPORT_ID_BYTES);
    cl->n++;
    return 0;
}

static void release_locked(coll_fedauc_t *f, coll_fedauc_claims_t *cl)
{
    for (size_t i = 0; i < cl->n; i++) {
        sqldb_val_t in[3] = {sqldb_int(cl->c[i].campaign_id), sqldb_blob(cl->c[i].token, TOKEN),
                             sqldb_blob(cl->c[i].report_id, DPM_REPORT_ID_BYTES)};
        (void)sqldb_exec(f->db,
                         "UPDATE fedauc_uploads SET report_id = NULL WHERE campaign_id = $1 AND "
                         "token = $2 AND report_id = $3",
                         in, 3, NULL, NULL);
    }
    cl->n = 0;
}

int coll_fedauc_check_batch(coll_fedauc_t *f, const coll_campaigns_t *cs, coll_batch_t *b,
                            coll_fedauc_claims_t *claims)
{
    memset(claims, 0, sizeof(*claims));
    int64_t now = (int64_t)time(NULL);
    size_t n = b->nreports;
    uint8_t(*tokens)[TOKEN] = malloc(n * TOKEN + 1);
    if (tokens == NULL) {
        return -1;
    }
    if (f != NULL) {
        pthread_mutex_lock(&f->mu);
    }
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        const coll_report_t *r = &b->reports[i];
        if (!coll_fedauc_is(r->mechanism)) {
            continue;
        }
        any = 1;
        const char *device = b->device != NULL && b->device[0] != '\0' ? b->device : NULL;
        const char *why = f == NULL ? "no FedAUC phases on this collector"
                                    : check_one(f, cs, r, device, now, tokens[i]);
        if (why == TRANSIENT || (why != NULL && coll_batch_reject_report(b, i, why) != 0)) {
            goto oom;
        }
    }
    /* claim the tokens of a batch that will be committed (without phases, f == NULL, every
     * FedAUC report was rejected above) */
    for (size_t i = 0; f != NULL && any && b->rejects_total == 0 && i < n; i++) {
        const coll_report_t *r = &b->reports[i];
        if (!coll_fedauc_is(r->mechanism)) {
            continue;
        }
        sqldb_val_t in[4] = {sqldb_blob(r->report_id, DPM_REPORT_ID_BYTES),
                             sqldb_int(r->campaign_id), sqldb_blob(tokens[i], TOKEN)};
        int64_t changed = sqldb_exec(f->db,
                                     "UPDATE fedauc_uploads SET report_id = $1 WHERE campaign_id = "
                                     "$2 AND token = $3 AND report_id IS NULL",
                                     in, 3, NULL, NULL);
        upload_row_t u;
        if (changed == 1) {
            if (claim_add(claims, r->campaign_id, tokens[i], r->report_id) != 0) {
                goto oom;
            }
            continue;
        }
        if (changed < 0 || fa_get_upload(f, r->campaign_id, tokens[i], &u) != 0) {
            goto oom;
        }
        free(u.scores);
        if (!u.has_report || memcmp(u.report_id, r->report_id, DPM_REPORT_ID_BYTES) != 0) {
            /* another report of this batch (or a concurrent one) took the token */
            if (coll_batch_reject_report(b, i, "upload token already reported") != 0) {
                goto oom;
            }
            release_locked(f, claims);
        }
    }
    if (f != NULL) {
        pthread_mutex_unlock(&f->mu);
    }
    free(tokens);
    return 0;
oom:
    if (f != NULL) {
        release_locked(f, claims);
        pthread_mutex_unlock(&f->mu);
    }
    free(tokens);
    free(claims->c);
    memset(claims, 0, sizeof(*claims));
    return -1;
}

void coll_fedauc_settle(coll_fedauc_t *f, coll_fedauc_claims_t *claims, int stored)
{
    if (f != NULL && !stored && claims->n > 0) {
        pthread_mutex_lock(&f->mu);
        release_locked(f, claims);
        pthread_mutex_unlock(&f->mu);
    }
    free(claims->c);
    memset(claims, 0, sizeof(*claims));
}

void coll_fedauc_count_batch(coll_fedauc_t *f, const coll_campaigns_t *cs, const coll_batch_t *b)
{
    uint64_t stored = 0, rejected = 0;
    for (size_t i = 0; coll_batch_status(b) == 200 && i < b->nreports; i++) {
        stored += coll_fedauc_is(b->reports[i].mechanism) && b->reports[i].is_new;
    }
    for (size_t i = 0; i < b->ncounts; i++) {
        const coll_campaign_t *c = coll_campaigns_find(cs, b->counts[i].campaign_id);
        if (c != NULL && coll_fedauc_is((uint32_t)c->mech.campaign.mechanism)) {
            rejected += b->counts[i].count;
        }
    }
    if (f != NULL && (stored > 0 || rejected > 0)) {
        pthread_mutex_lock(&f->mu);
        f->stats.reports_accepted += stored;
        f->stats.reports_rejected += rejected;
        pthread_mutex_unlock(&f->mu);
    }
}
