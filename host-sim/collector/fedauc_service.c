/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC phases at run time (fedauc_service.h, protocol in fedauc_phase.h). */
#include "collector/fedauc_service.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/fedauc_db.h"

#define TOKEN DPM_FEDAUC_TOKEN_BYTES
#define CACHE_MAX 8 /* rankings kept in memory (campaign, period) */

static const char SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS fedauc_phases (campaign_id BIGINT NOT NULL, period BIGINT NOT "
    "NULL, uploads BIGINT NOT NULL, scores BIGINT NOT NULL, closed BIGINT NOT NULL, PRIMARY KEY "
    "(campaign_id, period));"
    "CREATE TABLE IF NOT EXISTS fedauc_uploads (campaign_id BIGINT NOT NULL, token BYTEA NOT "
    "NULL, period BIGINT NOT NULL, received BIGINT NOT NULL, n BIGINT NOT NULL, scores BYTEA NOT "
    "NULL, report_id BYTEA, PRIMARY KEY (campaign_id, token))";

/* One upload's place in a ranking and what its ranks imply. */
typedef struct {
    uint8_t token[TOKEN];
    uint32_t n, off;
    uint64_t sum_rank2, maxdev;
    uint32_t max_rank2;
} tok_t;

typedef struct {
    int used;
    uint32_t campaign_id, period;
    uint32_t m;
    uint32_t *rank2; /* [m], uploads in token order, each in upload order */
    tok_t *tok;      /* [ntok], sorted by token */
    size_t ntok;
    dpm_fa_ranking_t mom;
    uint64_t age;
} ranking_t;

struct coll_fedauc {
    pthread_mutex_t mu;
    fdb_t *db;
    const coll_campaigns_t *cs;
    ranking_t cache[CACHE_MAX];
    uint64_t clock;
};

struct coll_fedauc_claim {
    uint32_t campaign_id;
    uint8_t token[TOKEN];
    uint8_t report_id[DPM_REPORT_ID_BYTES];
};

int coll_fedauc_open(coll_fedauc_t **out, const char *url, const coll_campaigns_t *cs, char *err,
                     size_t cap)
{
    coll_fedauc_t *f = calloc(1, sizeof(*f));
    if (f == NULL || fdb_open(&f->db, url, err, cap) != 0) {
        free(f);
        return -1;
    }
    const char *stmt = SCHEMA;
    char one[512];
    while (*stmt) { /* one statement at a time (SQLite prepares one) */
        const char *e = strchr(stmt, ';');
        size_t n = e ? (size_t)(e - stmt) : strlen(stmt);
        snprintf(one, sizeof(one), "%.*s", (int)n, stmt);
        if (fdb_exec(f->db, one, NULL, 0, NULL, NULL) < 0) {
            snprintf(err, cap, "fedauc tables: %s", fdb_error(f->db));
            fdb_close(f->db);
            free(f);
            return -1;
        }
        stmt += n + (e != NULL);
    }
    pthread_mutex_init(&f->mu, NULL);
    f->cs = cs;
    *out = f;
    return 0;
}

static void ranking_free(ranking_t *r)
{
    free(r->rank2);
    free(r->tok);
    memset(r, 0, sizeof(*r));
}

void coll_fedauc_close(coll_fedauc_t *f)
{
    if (f == NULL) {
        return;
    }
    for (int i = 0; i < CACHE_MAX; i++) {
        ranking_free(&f->cache[i]);
    }
    fdb_close(f->db);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* ---- phases -------------------------------------------------------------------------------- */

static int64_t period_start(const coll_campaign_t *c, uint32_t period)
{
    return c->opts.start + (int64_t)period * (int64_t)c->mech.campaign.period_seconds;
}

static int64_t deadline(const coll_campaign_t *c, uint32_t period)
{
    return period_start(c, period) + (int64_t)c->opts.fedauc.upload_seconds;
}

typedef struct {
    int found;
    int64_t uploads, scores, closed;
} phase_row_t;

static void read_phase(void *ctx, int nc, const fdb_val_t *v)
{
    phase_row_t *p = ctx;
    if (nc == 3) {
        p->found = 1;
        p->uploads = v[0].i;
        p->scores = v[1].i;
        p->closed = v[2].i;
    }
}

static int get_phase(coll_fedauc_t *f, uint32_t cid, uint32_t period, int lock, phase_row_t *p)
{
    memset(p, 0, sizeof(*p));
    fdb_val_t in[2] = {fdb_int(cid), fdb_int(period)};
    const char *sql = lock && fdb_is_pg(f->db)
                          ? "SELECT uploads, scores, closed FROM fedauc_phases WHERE campaign_id = "
                            "$1 AND period = $2 FOR UPDATE"
                          : "SELECT uploads, scores, closed FROM fedauc_phases WHERE campaign_id = "
                            "$1 AND period = $2";
    return fdb_exec(f->db, sql, in, 2, read_phase, p) < 0 ? -1 : 0;
}

/* The phase of (c, period) at now, closing it when its deadline has passed. 0 or -1. */
static int phase_now(coll_fedauc_t *f, const coll_campaign_t *c, uint32_t period, int64_t now,
                     phase_row_t *p)
{
    uint32_t cid = c->mech.campaign.id;
    if (get_phase(f, cid, period, 0, p) != 0) {
        return -1;
    }
    if (!p->found || p->closed != 0 || now < deadline(c, period)) {
        return 0;
    }
    fdb_val_t in[3] = {fdb_int(now), fdb_int(cid), fdb_int(period)};
    if (fdb_exec(f->db,
                 "UPDATE fedauc_phases SET closed = $1 WHERE campaign_id = $2 AND period = $3 AND "
                 "closed = 0",
                 in, 3, NULL, NULL) < 0) {
        return -1;
    }
    return get_phase(f, cid, period, 0, p);
}

/* ---- rankings ------------------------------------------------------------------------------ */

typedef struct {
    ranking_t *r;
    uint32_t *scores;
    size_t cap_tok;
    int bad;
} load_t;

static void load_row(void *ctx, int nc, const fdb_val_t *v)
{
    load_t *l = ctx;
    ranking_t *r = l->r;
    if (l->bad || nc != 3 || !v[0].blob || v[0].len != TOKEN || !v[2].blob ||
        v[2].len != (size_t)v[1].i * 4u || r->ntok >= l->cap_tok) {
        l->bad = 1;
        return;
    }
    tok_t *t = &r->tok[r->ntok++];
    memset(t, 0, sizeof(*t));
    memcpy(t->token, v[0].p, TOKEN);
    t->n = (uint32_t)v[1].i;
    t->off = r->m;
    const uint8_t *b = v[2].p;
    for (uint32_t i = 0; i < t->n; i++) {
        l->scores[r->m + i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
                              (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
    }
    r->m += t->n;
}

/* The ranking of a closed phase (from the cache, or ranked now). NULL on failure. */
static ranking_t *ranking(coll_fedauc_t *f, uint32_t cid, uint32_t period, const phase_row_t *p)
{
    ranking_t *oldest = &f->cache[0];
    for (int i = 0; i < CACHE_MAX; i++) {
        ranking_t *r = &f->cache[i];
        if (r->used && r->campaign_id == cid && r->period == period) {
            r->age = ++f->clock;
            return r;
        }
        if (!r->used || (oldest->used && r->age < oldest->age)) {
            oldest = r;
        }
    }
    if (p->scores <= 0 || p->scores > COLL_FEDAUC_MAX_SCORES || p->uploads <= 0) {
        return NULL;
    }
    ranking_free(oldest);
    ranking_t *r = oldest;
    load_t l = {r, malloc((size_t)p->scores * 4u), (size_t)p->uploads, 0};
    r->tok = malloc((size_t)p->uploads * sizeof(tok_t));
    r->rank2 = malloc((size_t)p->scores * 4u);
    fdb_val_t in[2] = {fdb_int(cid), fdb_int(period)};
    if (l.scores == NULL || r->tok == NULL || r->rank2 == NULL ||
        fdb_exec(f->db,
                 "SELECT token, n, scores FROM fedauc_uploads WHERE campaign_id = $1 AND period = "
                 "$2 ORDER BY token",
                 in, 2, load_row, &l) < 0 ||
        l.bad || r->m != (uint64_t)p->scores ||
        dpm_fa_rank2(l.scores, r->m, r->rank2, &r->mom) != DPM_OK) {
        free(l.scores);
        ranking_free(r);
        return NULL;
    }
    free(l.scores);
    for (size_t k = 0; k < r->ntok; k++) {
        tok_t *t = &r->tok[k];
        for (uint32_t i = 0; i < t->n; i++) {
            uint32_t R = r->rank2[t->off + i];
            t->sum_rank2 += R;
            t->max_rank2 = R > t->max_rank2 ? R : t->max_rank2;
        }
        for (uint32_t i = 0; i < t->n; i++) {
            int64_t d = (int64_t)t->n * r->rank2[t->off + i] - (int64_t)t->sum_rank2;
            uint64_t a = (uint64_t)(d < 0 ? -d : d);
            t->maxdev = a > t->maxdev ? a : t->maxdev;
        }
    }
    r->used = 1;
    r->campaign_id = cid;
    r->period = period;
    r->age = ++f->clock;
    return r;
}

static int cmp_tok(const void *k, const void *e)
{
    return memcmp(k, ((const tok_t *)e)->token, TOKEN);
}

static const tok_t *find_tok(const ranking_t *r, const uint8_t *token)
{
    return bsearch(token, r->tok, r->ntok, sizeof(tok_t), cmp_tok);
}

/* ---- endpoints ----------------------------------------------------------------------------- */

static void answer(coll_response_t *resp, int status, const char *text)
{
    coll_text_response(status, text, 0, resp);
}

typedef struct {
    int found;
    int64_t period, n;
    uint8_t scores_hash[32];
    size_t scores_len;
    uint8_t *scores;
    int has_report;
    uint8_t report_id[DPM_REPORT_ID_BYTES];
} upload_row_t;

static void read_upload(void *ctx, int nc, const fdb_val_t *v)
{
    upload_row_t *u = ctx;
    if (nc != 4) {
        return;
    }
    u->found = 1;
    u->period = v[0].i;
    u->n = v[1].i;
    if (v[2].blob) {
        u->scores = malloc(v[2].len + 1);
        if (u->scores != NULL) {
            memcpy(u->scores, v[2].p, v[2].len);
            u->scores_len = v[2].len;
        }
    }
    u->has_report = v[3].blob && v[3].len == DPM_REPORT_ID_BYTES;
    if (u->has_report) {
        memcpy(u->report_id, v[3].p, DPM_REPORT_ID_BYTES);
    }
}

static int get_upload(coll_fedauc_t *f, uint32_t cid, const uint8_t *token, upload_row_t *u)
{
    memset(u, 0, sizeof(*u));
    fdb_val_t in[2] = {fdb_int(cid), fdb_blob(token, TOKEN)};
    return fdb_exec(
               f->db,
               "SELECT period, n, scores, report_id FROM fedauc_uploads WHERE campaign_id = $1 "
               "AND token = $2",
               in, 2, read_upload, u) < 0
               ? -1
               : 0;
}

/* The upload transaction (phase row locked): 200, or the status with *why. */
static int store_upload(coll_fedauc_t *f, const coll_campaign_t *c, uint32_t period,
                        const dpm_fedauc_header_t *h, const uint8_t *blob, int64_t now,
                        const char **why)
{
    uint32_t cid = c->mech.campaign.id;
    phase_row_t p;
    upload_row_t u;
    fdb_val_t ins[2] = {fdb_int(cid), fdb_int(period)};
    if (fdb_begin(f->db) != 0 ||
        fdb_exec(f->db,
                 "INSERT INTO fedauc_phases (campaign_id, period, uploads, scores, closed) VALUES "
                 "($1, $2, 0, 0, 0) ON CONFLICT DO NOTHING",
                 ins, 2, NULL, NULL) < 0 ||
        get_phase(f, cid, period, 1, &p) != 0 || get_upload(f, cid, h->token, &u) != 0) {
        fdb_rollback(f->db);
        *why = "storage failure: nothing was stored, retry later";
        return 500;
    }
    int status = 200;
    if (u.found) {
        int same = u.period == period && u.scores_len == (size_t)h->n * 4u &&
                   memcmp(u.scores, blob, u.scores_len) == 0;
        *why = same ? "already stored" : "this upload token was used for other scores";
        status = same ? 200 : 409;
    } else if (p.closed != 0 || now >= deadline(c, period)) {
        *why = "upload phase closed: ranks are being sent for this period";
        status = 409;
    } else if ((uint64_t)p.scores + h->n > COLL_FEDAUC_MAX_SCORES) {
        *why = "upload phase full: too many scores for one ranking";
        status = 409;
    } else {
        int full = c->opts.fedauc.upload_count != 0 &&
                   (uint64_t)p.uploads + 1 >= c->opts.fedauc.upload_count;
        fdb_val_t in[6] = {fdb_int(cid),    fdb_blob(h->token, TOKEN),
                           fdb_int(period), fdb_int(now),
                           fdb_int(h->n),   fdb_blob(blob, (size_t)h->n * 4u)};
        fdb_val_t up[5] = {fdb_int(h->n), fdb_int(full ? now : 0), fdb_int(cid), fdb_int(period)};
        if (fdb_exec(f->db,
                     "INSERT INTO fedauc_uploads (campaign_id, token, period, received, n, scores) "
                     "VALUES ($1, $2, $3, $4, $5, $6)",
                     in, 6, NULL, NULL) != 1 ||
            fdb_exec(f->db,
                     "UPDATE fedauc_phases SET uploads = uploads + 1, scores = scores + $1, closed "
                     "= $2 WHERE campaign_id = $3 AND period = $4",
                     up, 4, NULL, NULL) != 1) {
            status = 500;
            *why = "storage failure: nothing was stored, retry later";
        } else {
            *why = "stored";
        }
    }
    free(u.scores);
    if (status != 200 || fdb_commit(f->db) != 0) {
        fdb_rollback(f->db);
        if (status == 200) {
            status = 500;
            *why = "storage failure: nothing was stored, retry later";
        }
    }
    return status;
}

static void post_upload(coll_fedauc_t *f, const coll_campaigns_t *cs, const uint8_t *body,
                        size_t len, int64_t now, coll_response_t *resp)
{
    dpm_fedauc_header_t h;
    uint32_t cap = len < DPM_FEDAUC_MAX_EXAMPLES ? (uint32_t)len + 1u : DPM_FEDAUC_MAX_EXAMPLES;
    uint32_t *scores = malloc((size_t)cap * 4u);
    uint8_t *blob = malloc((size_t)cap * 4u);
    char text[200];
    if (scores == NULL || blob == NULL) {
        free(scores);
        free(blob);
        coll_text_response(500, "out of memory\n", 1, resp);
        return;
    }
    const coll_campaign_t *c = NULL;
    const char *why = NULL;
    int status = 400;
    int64_t per = 0;
    if (dpm_fedauc_upload_decode(body, len, &h, scores, cap) != DPM_OK) {
        why = "malformed upload";
    } else if ((c = coll_campaigns_find(cs, h.campaign_id)) == NULL) {
        why = "unknown campaign";
        status = 404;
    } else if (!coll_fedauc_is((uint32_t)c->mech.campaign.mechanism)) {
        why = "not a FedAUC campaign";
    } else if (h.mechanism != (uint32_t)c->mech.campaign.mechanism ||
               h.params_hash != c->mech.params_hash) {
        why = "fingerprint does not match the campaign";
    } else if (h.n == 0) {
        why = "no scores";
    } else if (!c->opts.has_start || now < c->opts.start) {
        why = "campaign not started";
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
        why = why != NULL ? why : acc == 0 ? "missing upload token" : NULL;
        per = (now - c->opts.start) / (int64_t)c->mech.campaign.period_seconds;
    }
    if (why == NULL && per > UINT32_MAX) {
        why = "campaign over";
    }
    if (why == NULL) {
        pthread_mutex_lock(&f->mu);
        status = store_upload(f, c, (uint32_t)per, &h, blob, now, &why);
        pthread_mutex_unlock(&f->mu);
    }
    free(scores);
    free(blob);
    if (status == 200) {
        snprintf(text, sizeof(text), "%s: period %lld, ranks after %lld\n", why, (long long)per,
                 (long long)deadline(c, (uint32_t)per));
    } else {
        snprintf(text, sizeof(text), "%s\n", why);
    }
    answer(resp, status, text);
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
                      const uint8_t *token, int64_t now, coll_response_t *resp)
{
    const coll_campaign_t *c = coll_campaigns_find(cs, cid);
    if (c == NULL || !coll_fedauc_is((uint32_t)c->mech.campaign.mechanism)) {
        answer(resp, 404, c == NULL ? "unknown campaign\n" : "not a FedAUC campaign\n");
        return;
    }
    pthread_mutex_lock(&f->mu);
    upload_row_t u;
    phase_row_t p;
    ranking_t *r = NULL;
    const tok_t *t = NULL;
    int st = get_upload(f, cid, token, &u);
    free(u.scores);
    if (st == 0 && u.found) {
        st = phase_now(f, c, (uint32_t)u.period, now, &p);
    }
    if (st == 0 && u.found && p.closed != 0) {
        r = ranking(f, cid, (uint32_t)u.period, &p);
        t = r != NULL ? find_tok(r, token) : NULL;
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
    pthread_mutex_unlock(&f->mu);
    if (st != 0 || (u.found && p.closed != 0 && buf == NULL)) {
        answer(resp, 500, "storage failure, retry later\n");
        resp->extra = "Retry-After: 1\r\n";
    } else if (!u.found) {
        answer(resp, 404, "unknown upload token\n");
    } else if (p.closed == 0) {
        char text[120];
        snprintf(text, sizeof(text), "upload phase open: ranks after %lld\n",
                 (long long)deadline(c, (uint32_t)u.period));
        answer(resp, 409, text);
        resp->extra = "Retry-After: 1\r\n";
    } else {
        memset(resp, 0, sizeof(*resp));
        resp->status = 200;
        resp->content_type = COLL_CT_PROTOBUF;
        resp->body = buf;
        resp->len = blen;
    }
}

void coll_fedauc_request(coll_fedauc_t *f, const coll_campaigns_t *cs, const http_request_t *req,
                         const char *path, const uint8_t *body, size_t len, int64_t now,
                         coll_response_t *resp)
{
    static const char prefix[] = "/v1/fedauc/";
    uint32_t cid = 0;
    uint8_t token[TOKEN];
    const char *rest = path + sizeof(prefix) - 1;
    if (strcmp(rest, "uploads") == 0) {
        if (req->method != HTTP_POST) {
            answer(resp, 405, "method not allowed\n");
            resp->extra = "Allow: POST\r\n";
        } else if (!http_content_type_is(req, COLL_CT_PROTOBUF)) {
            answer(resp, 415, "Content-Type must be " COLL_CT_PROTOBUF "\n");
        } else if (f == NULL) {
            answer(resp, 503, "FedAUC needs the collector's store\n");
        } else {
            post_upload(f, cs, body, len, now, resp);
        }
    } else if (parse_ranks_path(rest, &cid, token) == 0) {
        if (req->method != HTTP_GET && req->method != HTTP_HEAD) {
            answer(resp, 405, "method not allowed\n");
            resp->extra = "Allow: GET, HEAD\r\n";
        } else if (f == NULL) {
            answer(resp, 503, "FedAUC needs the collector's store\n");
        } else {
            get_ranks(f, cs, cid, token, now, resp);
        }
    } else {
        answer(resp, 404, "not found\n");
    }
}

/* ---- reports ------------------------------------------------------------------------------- */

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
            return "out of memory";
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
    return NULL;
}

static const char *check_one(coll_fedauc_t *f, const coll_campaigns_t *cs, const coll_report_t *cr,
                             int64_t now, uint8_t *token)
{
    dpm_report_t rep;
    const coll_campaign_t *c = &cs->c[cr->campaign_index];
    if (dpm_report_decode(cr->raw, cr->raw_len, &rep) != DPM_OK) {
        return "malformed report";
    }
    memcpy(token, rep.body.fedauc.upload_token, TOKEN);
    upload_row_t u;
    phase_row_t p;
    if (get_upload(f, c->mech.campaign.id, token, &u) != 0) {
        return "storage failure";
    }
    free(u.scores);
    if (!u.found) {
        return "no upload with this token";
    }
    if ((uint32_t)u.period != rep.period) {
        return "period is not its upload's";
    }
    if (u.has_report && memcmp(u.report_id, rep.report_id, DPM_REPORT_ID_BYTES) != 0) {
        return "upload token already reported";
    }
    if (phase_now(f, c, rep.period, now, &p) != 0) {
        return "storage failure";
    }
    if (p.closed == 0) {
        return "ranks not sent yet";
    }
    ranking_t *r = ranking(f, c->mech.campaign.id, rep.period, &p);
    const tok_t *t = r != NULL ? find_tok(r, token) : NULL;
    if (t == NULL) {
        return "storage failure";
    }
    return check_against_ranks(c, r, t, &rep);
}

static int claim_add(coll_fedauc_claims_t *cl, uint32_t cid, const uint8_t *token,
                     const uint8_t *rid)
{
    if (cl->n == cl->cap) {
        size_t cap = cl->cap ? 2 * cl->cap : 8;
        struct coll_fedauc_claim *p = realloc(cl->c, cap * sizeof(*p));
        if (p == NULL) {
            return -1;
        }
        cl->c = p;
        cl->cap = cap;
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
        fdb_val_t in[3] = {fdb_int(cl->c[i].campaign_id), fdb_blob(cl->c[i].token, TOKEN),
                           fdb_blob(cl->c[i].report_id, DPM_REPORT_ID_BYTES)};
        (void)fdb_exec(f->db,
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
        const char *why =
            f == NULL ? "no FedAUC phases on this collector" : check_one(f, cs, r, now, tokens[i]);
        if (why != NULL && coll_batch_reject_report(b, i, why) != 0) {
            goto oom;
        }
    }
    /* claim the tokens of a batch that will be committed */
    for (size_t i = 0; any && b->rejects_total == 0 && i < n; i++) {
        const coll_report_t *r = &b->reports[i];
        if (!coll_fedauc_is(r->mechanism)) {
            continue;
        }
        fdb_val_t in[4] = {fdb_blob(r->report_id, DPM_REPORT_ID_BYTES), fdb_int(r->campaign_id),
                           fdb_blob(tokens[i], TOKEN)};
        int64_t changed = fdb_exec(f->db,
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
        if (changed < 0 || get_upload(f, r->campaign_id, tokens[i], &u) != 0) {
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

static void read_count(void *ctx, int nc, const fdb_val_t *v)
{
    if (nc == 1) {
        *(int64_t *)ctx = v[0].i;
    }
}

int coll_fedauc_period_info(coll_fedauc_t *f, const coll_campaigns_t *cs, int ci, uint32_t period,
                            int64_t now, coll_fedauc_period_t *out)
{
    memset(out, 0, sizeof(*out));
    if (f == NULL) {
        return 0;
    }
    const coll_campaign_t *c = &cs->c[ci];
    uint32_t cid = c->mech.campaign.id;
    phase_row_t p;
    int64_t reported = 0;
    fdb_val_t in[2] = {fdb_int(cid), fdb_int(period)};
    pthread_mutex_lock(&f->mu);
    int rc = phase_now(f, c, period, now, &p) != 0 ||
                     fdb_exec(f->db,
                              "SELECT COUNT(*) FROM fedauc_uploads WHERE campaign_id = $1 AND "
                              "period = $2 AND report_id IS NOT NULL",
                              in, 2, read_count, &reported) < 0
                 ? -1
                 : 0;
    if (rc == 0 && p.found) {
        out->known = 1;
        out->closed = p.closed != 0;
        out->uploads = (uint64_t)p.uploads;
        out->scores = (uint64_t)p.scores;
        out->reported = (uint64_t)reported;
        ranking_t *r = out->closed ? ranking(f, cid, period, &p) : NULL;
        if (r != NULL) {
            out->moments = r->mom;
        } else if (out->closed) {
            rc = -1;
        }
    }
    pthread_mutex_unlock(&f->mu);
    return rc;
}
