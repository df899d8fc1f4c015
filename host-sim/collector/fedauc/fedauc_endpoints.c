/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC's endpoints: POST /v1/fedauc/uploads and GET /v1/fedauc/{id}/ranks/{token}
 * (fedauc_phase.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/fedauc/fedauc_service.h"
#include "collector/fedauc/fedauc_state.h"

#define CT_PROTOBUF "application/x-protobuf"

/* A short text/plain answer. */
static void answer(coll_fedauc_answer_t *resp, int status, const char *text)
{
    memset(resp, 0, sizeof(*resp));
    size_t n = strlen(text);
    resp->body = malloc(n + 1);
    if (resp->body != NULL) {
        memcpy(resp->body, text, n + 1);
    }
    resp->status = status;
    resp->content_type = "text/plain";
    resp->len = resp->body != NULL ? n : 0;
    resp->close = resp->body == NULL;
}

/* Reasons of refused uploads in the reject statistics (<= 47 bytes, like a Reject.reason). */
#define LATE "fedauc upload: late (upload phase closed)"

/* Who uploads: the credential's identity (NULL: anonymous) and its quota (0: the campaign's
 * device_quota; a relay credential's own). */
typedef struct {
    const char *device;
    uint32_t quota;
} uploader_t;

static void read_count(void *ctx, int nc, const sqldb_val_t *v)
{
    if (nc == 1) {
        *(int64_t *)ctx = v[0].i;
    }
}

/* The upload transaction (phase row locked): 200, or the status with *why (and *reason for a
 * refusal). */
static int store_upload(coll_fedauc_t *f, const coll_campaign_t *c, uint32_t period,
                        const dpm_fedauc_header_t *h, const uint8_t *blob, int64_t now,
                        const uploader_t *who, const char **why, const char **reason)
{
    uint32_t cid = c->mech.campaign.id;
    phase_row_t p;
    upload_row_t u;
    int64_t mine = 0; /* this credential's uploads in the period (its quota) */
    uint32_t quota = who->quota != 0 ? who->quota : c->opts.device_quota;
    size_t dlen = who->device != NULL ? strlen(who->device) : 0;
    sqldb_val_t qin[3] = {sqldb_int(cid), sqldb_int(period), sqldb_blob(who->device, dlen)};
    sqldb_val_t ins[2] = {sqldb_int(cid), sqldb_int(period)};
    if (sqldb_begin(f->db) != 0 ||
        sqldb_exec(
            f->db,
            "INSERT INTO fedauc_phases (campaign_id, period, uploads, scores, closed) VALUES "
            "($1, $2, 0, 0, 0) ON CONFLICT DO NOTHING",
            ins, 2, NULL, NULL) < 0 ||
        fa_get_phase(f, cid, period, 1, &p) != 0 || fa_get_upload(f, cid, h->token, &u) != 0 ||
        (who->device != NULL &&
         sqldb_exec(
             f->db,
             "SELECT COUNT(*) FROM fedauc_uploads WHERE campaign_id = $1 AND period = $2 AND "
             "device = $3",
             qin, 3, read_count, &mine) < 0)) {
        sqldb_rollback(f->db);
        *why = "storage failure: nothing was stored, retry later";
        return 500;
    }
    int status = 200;
    if (u.found) {
        int same = u.period == period && u.scores_len == (size_t)h->n * 4u &&
                   memcmp(u.scores, blob, u.scores_len) == 0 && fa_same_uploader(&u, who->device);
        *why = same ? "already stored" : "this upload token was used for other scores";
        *reason = same ? NULL : "fedauc upload: token used for other scores";
        status = same ? 200 : 409;
    } else if (who->device != NULL && mine >= (int64_t)quota) {
        *why = "device quota exceeded: this credential's uploads of this period are used up";
        *reason = "fedauc upload: device quota exceeded";
        status = 409;
    } else if (p.closed != 0 || now >= fa_deadline(c, period)) {
        *why = "upload phase closed: ranks are being sent for this period";
        *reason = LATE;
        status = 409;
    } else if (!fa_ranking_fits(f, (uint64_t)p.scores + h->n, (uint64_t)p.uploads + 1u,
                                c->opts.max_examples)) {
        *why = "upload phase full: too many scores for one ranking (2^24, and half the "
               "collector's memory budget)";
        *reason = "fedauc upload: upload phase full";
        status = 409;
    } else {
        int full = c->opts.fedauc.upload_count != 0 &&
                   (uint64_t)p.uploads + 1 >= c->opts.fedauc.upload_count;
        /* a relay's uploads (and anonymous ones) each count as an uploader of their own */
        int solo = who->device == NULL || who->quota != 0;
        sqldb_val_t in[8] = {sqldb_int(cid),    sqldb_blob(h->token, TOKEN),
                             sqldb_int(period), sqldb_int(now),
                             sqldb_int(h->n),   sqldb_blob(blob, (size_t)h->n * 4u),
                             sqldb_int(solo),   sqldb_blob(who->device, dlen)};
        sqldb_val_t up[4] = {sqldb_int(h->n), sqldb_int(cid), sqldb_int(period)};
        if (sqldb_exec(f->db,
                       who->device != NULL
                           ? "INSERT INTO fedauc_uploads (campaign_id, token, period, received, n, "
                             "scores, solo, device) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
                           : "INSERT INTO fedauc_uploads (campaign_id, token, period, received, n, "
                             "scores, solo) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                       in, who->device != NULL ? 8 : 7, NULL, NULL) != 1 ||
            sqldb_exec(f->db,
                       "UPDATE fedauc_phases SET uploads = uploads + 1, scores = scores + $1 WHERE "
                       "campaign_id = $2 AND period = $3",
                       up, 3, NULL, NULL) != 1 ||
            (full && fa_close_phase(f, cid, period, now) != 0)) {
            status = 500;
            *why = "storage failure: nothing was stored, retry later";
        } else {
            *why = "stored";
        }
    }
    free(u.scores);
    if (status != 200 || sqldb_commit(f->db) != 0) {
        sqldb_rollback(f->db);
        if (status == 200) {
            status = 500;
            *why = "storage failure: nothing was stored, retry later";
        }
    }
    return status;
}

/* Count one answered upload (f->mu not held). */
static void count_upload(coll_fedauc_t *f, int status, const char *why, const char *reason)
{
    pthread_mutex_lock(&f->mu);
    coll_fedauc_stats_t *s = &f->stats;
    if (status == 200) {
        s->uploads_accepted += strcmp(why, "stored") == 0;
        s->uploads_duplicate += strcmp(why, "stored") != 0;
    } else if (reason != NULL) {
        s->uploads_rejected++;
        s->uploads_late += strcmp(reason, LATE) == 0;
    }
    pthread_mutex_unlock(&f->mu);
}

static void post_upload(coll_fedauc_t *f, const coll_campaigns_t *cs, const uint8_t *body,
                        size_t len, int64_t now, const uploader_t *who, coll_fedauc_answer_t *resp)
{
    dpm_fedauc_header_t h;
    uint32_t cap = len < DPM_FEDAUC_MAX_EXAMPLES ? (uint32_t)len + 1u : DPM_FEDAUC_MAX_EXAMPLES;
    uint32_t *scores = malloc((size_t)cap * 4u);
    uint8_t *blob = malloc((size_t)cap * 4u);
    char text[200];
    if (scores == NULL || blob == NULL) {
        free(scores);
        free(blob);
        answer(resp, 500, "out of memory\n");
        resp->close = 1;
        return;
    }
    const coll_campaign_t *c = NULL;
    const char *why = NULL, *reason = NULL;
    int status = 400;
    int64_t per = 0;
    if (dpm_fedauc_upload_decode(body, len, &h, scores, cap) != DPM_OK) {
        why = "malformed upload";
        reason = "fedauc upload: malformed";
    } else if ((c = coll_campaigns_find(cs, h.campaign_id)) == NULL) {
        why = "unknown campaign";
        reason = "fedauc upload: unknown campaign";
        status = 404;
    } else if (!coll_fedauc_is((uint32_t)c->mech.campaign.mechanism)) {
        why = "not a FedAUC campaign";
        reason = "fedauc upload: not a FedAUC campaign";
    } else if (h.mechanism != (uint32_t)c->mech.campaign.mechanism ||
               h.params_hash != c->mech.params_hash) {
        why = "fingerprint does not match the campaign";
        reason = "fedauc upload: fingerprint mismatch";
    } else if (h.n == 0) {
        why = "no scores";
        reason = "fedauc upload: no scores";
    } else if (h.n > c->opts.max_examples) {
        snprintf(text, sizeof(text), "more scores than the campaign's max_examples (%u)",
                 c->opts.max_examples);
        why = text;
        reason = "fedauc upload: more than max_examples";
    } else if (!c->opts.has_start || now < c->opts.start) {
        why = "campaign not started";
        reason = "fedauc upload: campaign not started";
        status = 409;
    } else {
        uint32_t top = 1u << c->mech.params.fedauc.score_bits;
        uint8_t acc = 0;
        for (int i = 0; i < TOKEN; i++) {
            acc |= h.token[i];
        }
        for (uint32_t i = 0; i < h.n && why == NULL; i++) {
            why = scores[i] > top ? "score above 2^score_bits" : NULL;
            blob[4 * i] = (uint8_t)scores[i];
            blob[4 * i + 1] = (uint8_t)(scores[i] >> 8);
            blob[4 * i + 2] = (uint8_t)(scores[i] >> 16);
            blob[4 * i + 3] = (uint8_t)(scores[i] >> 24);
        }
        reason = why != NULL ? "fedauc upload: score above 2^score_bits" : NULL;
        if (why == NULL && acc == 0) {
            why = "missing upload token";
            reason = "fedauc upload: missing token";
        }
        per = (now - c->opts.start) / (int64_t)c->mech.campaign.period_seconds;
    }
    if (why == NULL && per > UINT32_MAX) {
        why = "campaign over";
        reason = "fedauc upload: campaign over";
    }
    if (why == NULL) {
        pthread_mutex_lock(&f->mu);
        status = store_upload(f, c, (uint32_t)per, &h, blob, now, who, &why, &reason);
        pthread_mutex_unlock(&f->mu);
    }
    free(scores);
    free(blob);
    count_upload(f, status, why, reason);
    char out[240];
    if (status == 200) {
        snprintf(out, sizeof(out), "%s: period %lld, ranks after %lld\n", why, (long long)per,
                 (long long)fa_deadline(c, (uint32_t)per));
    } else {
        snprintf(out, sizeof(out), "%s\n", why);
    }
    answer(resp, status, out);
    resp->reject = reason;
    resp->reject_campaign = c != NULL ? c->mech.campaign.id : 0;
}

static int hexval(char ch)
{
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* "{campaign}/ranks/{32 hex}" after "/v1/fedauc/". 0 or -1. */
static int parse_ranks_path(const char *p, uint32_t *cid, uint8_t *token)
{
    uint64_t x = 0;
    size_t n = 0;
    while (p[n] >= '0' && p[n] <= '9' && n < 10) {
        x = x * 10u + (uint64_t)(p[n] - '0');
        n++;
    }
    if (n == 0 || x > UINT32_MAX || strncmp(p + n, "/ranks/", 7) != 0) {
        return -1;
    }
    p += n + 7;
    for (int i = 0; i < TOKEN; i++) {
        int hi = hexval(p[2 * i]), lo = hi < 0 ? -1 : hexval(p[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return -1;
        }
        token[i] = (uint8_t)(hi << 4 | lo);
    }
    *cid = (uint32_t)x;
    return p[2 * TOKEN] == '\0' ? 0 : -1;
}

static void get_ranks(coll_fedauc_t *f, const coll_campaigns_t *cs, uint32_t cid,
                      const uint8_t *token, int64_t now, const uploader_t *who,
                      coll_fedauc_answer_t *resp)
{
    const coll_campaign_t *c = coll_campaigns_find(cs, cid);
    if (c == NULL || !coll_fedauc_is((uint32_t)c->mech.campaign.mechanism)) {
        answer(resp, 404, c == NULL ? "unknown campaign\n" : "not a FedAUC campaign\n");
        return;
    }
    pthread_mutex_lock(&f->mu);
    upload_row_t u;
    phase_row_t p;
    memset(&p, 0, sizeof(p));
    ranking_t *r = NULL;
    const tok_t *t = NULL;
    int st = fa_get_upload(f, cid, token, &u);
    free(u.scores);
    /* another credential's token is as unknown as a token never uploaded */
    u.found = u.found && fa_same_uploader(&u, who->device);
    if (st == 0 && u.found) {
        st = fa_phase_now(f, c, (uint32_t)u.period, now, &p);
    }
    int withheld =
        st == 0 && u.found && p.closed != 0 && p.uploaders < (int64_t)c->opts.fedauc.min_uploaders;
    if (st == 0 && u.found && p.closed != 0 && !withheld) {
        r = fa_ranking(f, cid, (uint32_t)u.period, &p, token);
        t = r != NULL ? fa_find_tok(r, token) : NULL;
    }
    uint8_t *buf = NULL;
    size_t blen = 0;
    if (t != NULL) {
        dpm_fedauc_header_t h;
        memset(&h, 0, sizeof(h));
        h.campaign_id = cid;
        h.mechanism = (uint32_t)c->mech.campaign.mechanism;
        h.params_hash = c->mech.params_hash;
        memcpy(h.token, token, TOKEN);
        h.total = r->m;
        h.n = t->n;
        size_t cap = (size_t)DPM_FEDAUC_REPLY_MAX_BYTES(t->n);
        buf = malloc(cap);
        if (buf == NULL ||
            dpm_fedauc_reply_encode(&h, r->rank2 + t->off, buf, cap, &blen) != DPM_OK) {
            free(buf);
            buf = NULL;
        }
    }
    int over_budget = f->over_budget;
    pthread_mutex_unlock(&f->mu);
    if (st == 0 && u.found && p.closed != 0 && !withheld && buf == NULL && over_budget) {
        answer(resp, 503, "the ranking does not fit the memory budget now: retry later\n");
        resp->extra = "Retry-After: 1\r\n";
    } else if (st != 0 || (u.found && p.closed != 0 && !withheld && buf == NULL)) {
        answer(resp, 500, "storage failure, retry later\n");
        resp->extra = "Retry-After: 1\r\n";
    } else if (!u.found) {
        answer(resp, 404, "unknown upload token\n");
    } else if (withheld) {
        char text[200];
        snprintf(text, sizeof(text),
                 "ranks withheld: %lld distinct uploaders, fewer than the campaign's "
                 "min_uploaders (%u); no ranks for this period\n",
                 (long long)p.uploaders, c->opts.fedauc.min_uploaders);
        answer(resp, 409, text);
    } else if (p.closed == 0) {
        char text[120];
        snprintf(text, sizeof(text), "upload phase open: ranks after %lld\n",
                 (long long)fa_deadline(c, (uint32_t)u.period));
        answer(resp, 409, text);
        resp->extra = "Retry-After: 1\r\n";
    } else {
        memset(resp, 0, sizeof(*resp));
        resp->status = 200;
        resp->content_type = CT_PROTOBUF;
        resp->body = buf;
        resp->len = blen;
        pthread_mutex_lock(&f->mu);
        f->stats.rank_replies++;
        pthread_mutex_unlock(&f->mu);
    }
}

void coll_fedauc_request(coll_fedauc_t *f, const coll_campaigns_t *cs, const http_request_t *req,
                         const char *path, const uint8_t *body, size_t len, int64_t now,
                         const char *device, uint32_t quota, coll_fedauc_answer_t *resp)
{
    const uploader_t who = {device != NULL && device[0] != '\0' ? device : NULL, quota};
    static const char prefix[] = "/v1/fedauc/";
    uint32_t cid = 0;
    uint8_t token[TOKEN];
    const char *rest = path + sizeof(prefix) - 1;
    if (strcmp(rest, "uploads") == 0) {
        if (req->method != HTTP_POST) {
            answer(resp, 405, "method not allowed\n");
            resp->extra = "Allow: POST\r\n";
        } else if (!http_content_type_is(req, CT_PROTOBUF)) {
            answer(resp, 415, "Content-Type must be " CT_PROTOBUF "\n");
            resp->reject = "fedauc upload: unsupported content type";
        } else if (f == NULL) {
            answer(resp, 503, "FedAUC needs the collector's store\n");
        } else {
            post_upload(f, cs, body, len, now, &who, resp);
        }
    } else if (parse_ranks_path(rest, &cid, token) == 0) {
        if (req->method != HTTP_GET && req->method != HTTP_HEAD) {
            answer(resp, 405, "method not allowed\n");
            resp->extra = "Allow: GET, HEAD\r\n";
        } else if (f == NULL) {
            answer(resp, 503, "FedAUC needs the collector's store\n");
        } else {
            get_ranks(f, cs, cid, token, now, &who, resp);
        }
    } else {
        answer(resp, 404, "not found\n");
    }
}
