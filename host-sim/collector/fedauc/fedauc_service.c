/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC phases at run time (fedauc_service.h, protocol in fedauc_phase.h): the tables, the
 * phases, the rankings and the phase of a period for the estimate. */
#include "collector/fedauc/fedauc_service.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector/fedauc/fedauc_state.h"

/* device: the uploading credential's identity (NULL: anonymous), solo: 1 when the upload counts
 * as an uploader of its own (a relay credential speaks for many devices; anonymous uploads
 * have no identity), uploaders: the distinct uploaders, counted when the phase closes. The
 * three columns came with issue 27: an older table gets them (NULL: unbound, solo). */
static const char SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS fedauc_phases (campaign_id BIGINT NOT NULL, period BIGINT NOT "
    "NULL, uploads BIGINT NOT NULL, scores BIGINT NOT NULL, closed BIGINT NOT NULL, uploaders "
    "BIGINT, PRIMARY KEY (campaign_id, period));"
    "CREATE TABLE IF NOT EXISTS fedauc_uploads (campaign_id BIGINT NOT NULL, token BYTEA NOT "
    "NULL, period BIGINT NOT NULL, received BIGINT NOT NULL, n BIGINT NOT NULL, scores BYTEA NOT "
    "NULL, report_id BYTEA, device BYTEA, solo BIGINT, PRIMARY KEY (campaign_id, token))";

static const struct {
    const char *table, *column, *type;
} ADDED[] = {{"fedauc_phases", "uploaders", "BIGINT"},
             {"fedauc_uploads", "device", "BYTEA"},
             {"fedauc_uploads", "solo", "BIGINT"}};

static void read_count(void *ctx, int nc, const sqldb_val_t *v);

/* A column of ADDED on a table made before it. 0 or -1. */
static int add_column(sqldb_t *db, int i)
{
    char sql[200];
    if (sqldb_is_pg(db)) {
        snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s", ADDED[i].table,
                 ADDED[i].column, ADDED[i].type);
        return sqldb_exec(db, sql, NULL, 0, NULL, NULL) < 0 ? -1 : 0;
    }
    int64_t have = 0;
    snprintf(sql, sizeof(sql), "SELECT COUNT(*) FROM pragma_table_info('%s') WHERE name = '%s'",
             ADDED[i].table, ADDED[i].column);
    if (sqldb_exec(db, sql, NULL, 0, read_count, &have) < 0) {
        return -1;
    }
    snprintf(sql, sizeof(sql), "ALTER TABLE %s ADD COLUMN %s %s", ADDED[i].table, ADDED[i].column,
             ADDED[i].type);
    return have > 0 || sqldb_exec(db, sql, NULL, 0, NULL, NULL) >= 0 ? 0 : -1;
}

int coll_fedauc_open(coll_fedauc_t **out, const char *url, const coll_campaigns_t *cs, char *err,
                     size_t cap)
{
    coll_fedauc_t *f = calloc(1, sizeof(*f));
    if (f == NULL || sqldb_open(&f->db, url, err, cap) != 0) {
        free(f);
        return -1;
    }
    /* in one transaction, under a lock: collectors sharing a PostgreSQL may start together */
    int failed =
        sqldb_begin(f->db) != 0 ||
        (sqldb_is_pg(f->db) &&
         sqldb_exec(f->db, "SELECT pg_advisory_xact_lock(1178944577)", NULL, 0, NULL, NULL) < 0);
    const char *stmt = SCHEMA;
    char one[512];
    while (!failed && *stmt) { /* one statement at a time (SQLite prepares one) */
        const char *e = strchr(stmt, ';');
        size_t n = e ? (size_t)(e - stmt) : strlen(stmt);
        snprintf(one, sizeof(one), "%.*s", (int)n, stmt);
        failed = sqldb_exec(f->db, one, NULL, 0, NULL, NULL) < 0;
        stmt += n + (e != NULL);
    }
    for (int i = 0; !failed && i < (int)(sizeof(ADDED) / sizeof(ADDED[0])); i++) {
        failed = add_column(f->db, i) != 0;
    }
    if (!failed) { /* the quota count of one uploader in one period */
        failed = sqldb_exec(f->db,
                            "CREATE INDEX IF NOT EXISTS fedauc_uploads_device ON fedauc_uploads "
                            "(campaign_id, period, device)",
                            NULL, 0, NULL, NULL) < 0;
    }
    if (failed || sqldb_commit(f->db) != 0) {
        snprintf(err, cap, "fedauc tables: %s", sqldb_error(f->db));
        sqldb_rollback(f->db);
        sqldb_close(f->db);
        free(f);
        return -1;
    }
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->built, NULL);
    f->cs = cs;
    *out = f;
    return 0;
}

void coll_fedauc_set_campaigns(coll_fedauc_t *f, const coll_campaigns_t *cs)
{
    __atomic_store_n(&f->cs, cs, __ATOMIC_RELEASE);
}

static void release(coll_fedauc_t *f, size_t bytes);

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
        release(f, f->cache[i].reserved);
        ranking_free(&f->cache[i]);
    }
    sqldb_close(f->db);
    pthread_cond_destroy(&f->built);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

/* ---- phases -------------------------------------------------------------------------------- */

static int64_t period_start(const coll_campaign_t *c, uint32_t period)
{
    return c->opts.start + (int64_t)period * (int64_t)c->mech.campaign.period_seconds;
}

int64_t fa_deadline(const coll_campaign_t *c, uint32_t period)
{
    return period_start(c, period) + (int64_t)c->opts.fedauc.upload_seconds;
}

static void read_phase(void *ctx, int nc, const sqldb_val_t *v)
{
    phase_row_t *p = ctx;
    if (nc == 4) {
        p->found = 1;
        p->uploads = v[0].i;
        p->scores = v[1].i;
        p->closed = v[2].i;
        p->uploaders = v[3].null ? -1 : v[3].i;
    }
}

int fa_get_phase(coll_fedauc_t *f, uint32_t cid, uint32_t period, int lock, phase_row_t *p)
{
    memset(p, 0, sizeof(*p));
    sqldb_val_t in[2] = {sqldb_int(cid), sqldb_int(period)};
    const char *sql = lock && sqldb_is_pg(f->db)
                          ? "SELECT uploads, scores, closed, uploaders FROM fedauc_phases WHERE "
                            "campaign_id = $1 AND period = $2 FOR UPDATE"
                          : "SELECT uploads, scores, closed, uploaders FROM fedauc_phases WHERE "
                            "campaign_id = $1 AND period = $2";
    return sqldb_exec(f->db, sql, in, 2, read_phase, p) < 0 ? -1 : 0;
}

int fa_close_phase(coll_fedauc_t *f, uint32_t cid, uint32_t period, int64_t now)
{
    /* distinct uploaders: one per credential identity, one per upload of a relay credential
     * or an anonymous one (solo) */
    sqldb_val_t in[5] = {sqldb_int(now), sqldb_int(cid), sqldb_int(period), sqldb_int(cid),
                         sqldb_int(period)};
    return sqldb_exec(
               f->db,
               "UPDATE fedauc_phases SET closed = $1, uploaders = (SELECT COUNT(DISTINCT CASE "
               "WHEN COALESCE(solo, 1) = 0 THEN device END) + COALESCE(SUM(CASE WHEN "
               "COALESCE(solo, 1) = 0 THEN 0 ELSE 1 END), 0) FROM fedauc_uploads WHERE "
               "campaign_id = $2 AND period = $3) WHERE campaign_id = $4 AND period = $5 AND "
               "closed = 0",
               in, 5, NULL, NULL) < 0
               ? -1
               : 0;
}

/* The phase of (c, period) at now, closing it when its deadline has passed. 0 or -1. */
int fa_phase_now(coll_fedauc_t *f, const coll_campaign_t *c, uint32_t period, int64_t now,
                 phase_row_t *p)
{
    uint32_t cid = c->mech.campaign.id;
    if (fa_get_phase(f, cid, period, 0, p) != 0) {
        return -1;
    }
    if (p->found && p->closed != 0 && p->uploaders < 0) {
        /* closed by an older collector: count its uploaders now (they cannot change) */
        sqldb_val_t in[4] = {sqldb_int(cid), sqldb_int(period), sqldb_int(cid), sqldb_int(period)};
        if (sqldb_exec(f->db,
                       "UPDATE fedauc_phases SET uploaders = (SELECT COUNT(DISTINCT CASE WHEN "
                       "COALESCE(solo, 1) = 0 THEN device END) + COALESCE(SUM(CASE WHEN "
                       "COALESCE(solo, 1) = 0 THEN 0 ELSE 1 END), 0) FROM fedauc_uploads WHERE "
                       "campaign_id = $1 AND period = $2) WHERE campaign_id = $3 AND period = $4",
                       in, 4, NULL, NULL) < 0) {
            return -1;
        }
        return fa_get_phase(f, cid, period, 0, p);
    }
    if (!p->found || p->closed != 0 || now < fa_deadline(c, period)) {
        return 0;
    }
    if (fa_close_phase(f, cid, period, now) != 0) {
        return -1;
    }
    return fa_get_phase(f, cid, period, 0, p);
}

/* ---- rankings ------------------------------------------------------------------------------ */

/* Scores read from the database per query while a ranking is loaded (PostgreSQL holds a whole
 * result in memory, as hex text). */
#define LOAD_CHUNK_SCORES ((uint64_t)1 << 19)

size_t fa_ranking_cached_bytes(uint64_t m, uint64_t u)
{
    return (size_t)(4u * m + sizeof(tok_t) * u);
}

static uint64_t chunk_uploads(uint32_t max_examples)
{
    uint64_t k = LOAD_CHUNK_SCORES / (max_examples > 0 ? max_examples : 1u);
    return k > 0 ? k : 1u;
}

size_t fa_ranking_build_bytes(uint64_t m, uint64_t u, uint32_t max_examples)
{
    /* + the scores (4 m), dpm_fa_rank2's idx and tmp (8 m) and radix counts (512 KiB), one
     * chunk of rows (PostgreSQL: hex text and the unescaped copy, 16 B a score, ~128 B a row) */
    uint64_t rows = chunk_uploads(max_examples);
    return fa_ranking_cached_bytes(m, u) + (size_t)(12u * m) + ((size_t)513 << 10) +
           (size_t)(16u * LOAD_CHUNK_SCORES + 128u * rows);
}

int fa_ranking_fits(const coll_fedauc_t *f, uint64_t m, uint64_t u, uint32_t max_examples)
{
    size_t budget = f->limits != NULL ? f->limits->memory_budget : 0;
    return m <= COLL_FEDAUC_MAX_SCORES &&
           (budget == 0 || fa_ranking_build_bytes(m, u, max_examples) <= budget / 2);
}

void coll_fedauc_set_limits(coll_fedauc_t *f, coll_limits_t *limits)
{
    if (f != NULL) {
        pthread_mutex_lock(&f->mu);
        f->limits = limits;
        pthread_mutex_unlock(&f->mu);
    }
}

static int reserve(coll_fedauc_t *f, size_t bytes)
{
    return f->limits == NULL || coll_limits_reserve(f->limits, bytes) == 0 ? 0 : -1;
}

static void release(coll_fedauc_t *f, size_t bytes)
{
    if (f->limits != NULL && bytes > 0) {
        coll_limits_release(f->limits, bytes);
    }
}

static void ranking_drop(coll_fedauc_t *f, ranking_t *r)
{
    release(f, r->reserved);
    ranking_free(r);
}

/* Reserve bytes, dropping cached rankings (oldest first) to make room. 0 or -1. */
static int reserve_evicting(coll_fedauc_t *f, size_t bytes)
{
    while (reserve(f, bytes) != 0) {
        ranking_t *oldest = NULL;
        for (int i = 0; i < CACHE_MAX; i++) {
            ranking_t *r = &f->cache[i];
            if (r->used && (oldest == NULL || r->age < oldest->age)) {
                oldest = r;
            }
        }
        if (oldest == NULL) {
            return -1;
        }
        ranking_drop(f, oldest);
    }
    return 0;
}

typedef struct {
    ranking_t *r;
    uint32_t *scores;
    size_t cap_tok;
    uint8_t last[TOKEN]; /* the last token read: the next chunk starts after it */
    uint64_t rows;
    int bad;
} load_t;

static void load_row(void *ctx, int nc, const sqldb_val_t *v)
{
    load_t *l = ctx;
    ranking_t *r = l->r;
    if (l->bad || nc != 3 || !v[0].blob || v[0].len != TOKEN || !v[2].blob || v[1].i < 1 ||
        v[2].len != (size_t)v[1].i * 4u || r->ntok >= l->cap_tok ||
        (uint64_t)r->m + (uint64_t)v[1].i > COLL_FEDAUC_MAX_SCORES) {
        l->bad = 1;
        return;
    }
    tok_t *t = &r->tok[r->ntok++];
    memset(t, 0, sizeof(*t));
    memcpy(t->token, v[0].p, TOKEN);
    memcpy(l->last, v[0].p, TOKEN);
    l->rows++;
    t->n = (uint32_t)v[1].i;
    t->off = r->m;
    const uint8_t *b = v[2].p;
    for (uint32_t i = 0; i < t->n; i++) {
        l->scores[r->m + i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 |
                              (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
    }
    r->m += t->n;
}

/* Every upload of the phase in token order, in chunks (keyset pagination). 0 or -1. */
static int load_uploads(coll_fedauc_t *f, uint32_t cid, uint32_t period, uint32_t max_examples,
                        load_t *l)
{
    memset(l->last, 0, TOKEN); /* stored tokens are never all zero (fedauc_endpoints.c) */
    uint64_t per = chunk_uploads(max_examples);
    for (;;) {
        uint64_t before = l->rows;
        sqldb_val_t in[4] = {sqldb_int(cid), sqldb_int(period), sqldb_blob(l->last, TOKEN),
                             sqldb_int((int64_t)per)};
        if (sqldb_exec(f->db,
                       "SELECT token, n, scores FROM fedauc_uploads WHERE campaign_id = $1 AND "
                       "period = $2 AND token > $3 ORDER BY token LIMIT $4",
                       in, 4, load_row, l) < 0 ||
            l->bad) {
            return -1;
        }
        if (l->rows - before < per) {
            return 0;
        }
    }
}

/* Ranks, per-upload statistics and the influence summary of a loaded ranking (no lock). */
static int rank_loaded(ranking_t *r, const uint32_t *scores, const coll_bounds_t *b)
{
    if (dpm_fa_rank2(scores, r->m, r->rank2, &r->mom) != DPM_OK) {
        return -1;
    }
    for (size_t k = 0; k < r->ntok; k++) {
        tok_t *t = &r->tok[k];
        for (uint32_t i = 0; i < t->n; i++) {
            uint32_t R = r->rank2[t->off + i];
            t->sum_rank2 += R;
            t->max_rank2 = R > t->max_rank2 ? R : t->max_rank2;
        }
        unsigned __int128 tpos = 0; /* n <= 2^22, R < 2^25: every term below 2^47 */
        for (uint32_t i = 0; i < t->n; i++) {
            int64_t d = (int64_t)t->n * r->rank2[t->off + i] - (int64_t)t->sum_rank2;
            uint64_t a = (uint64_t)(d < 0 ? -d : d);
            t->maxdev = a > t->maxdev ? a : t->maxdev;
            tpos += d > 0 ? (uint64_t)d : 0u;
        }
        t->tpos = tpos > UINT64_MAX ? UINT64_MAX : (uint64_t)tpos;
    }
    /* what one report of this ranking can change (bounds.h), for the estimate */
    if (b != NULL) {
        coll_fa_influence_init(&r->influence, b);
        for (size_t k = 0; k < r->ntok; k++) {
            const tok_t *t = &r->tok[k];
            (void)coll_fa_influence_add(&r->influence, b, t->n, t->sum_rank2, t->max_rank2,
                                        t->maxdev, t->tpos, r->m);
        }
    }
    memset(&r->drop, 0, sizeof(r->drop));
    r->drop.reported_tokens = UINT64_MAX; /* not made yet */
    return 0;
}

static ranking_t *cached(coll_fedauc_t *f, uint32_t cid, uint32_t period, const phase_row_t *p,
                         const uint8_t *token)
{
    for (int i = 0; i < CACHE_MAX; i++) {
        ranking_t *r = &f->cache[i];
        if (r->used && r->campaign_id == cid && r->period == period) {
            if (r->closed == p->closed && r->m == (uint64_t)p->scores &&
                r->ntok == (size_t)p->uploads && (token == NULL || fa_find_tok(r, token))) {
                r->age = ++f->clock;
                return r;
            }
            ranking_drop(f, r); /* a phase retention dropped, whose period has uploads again */
        }
    }
    return NULL;
}

ranking_t *fa_ranking(coll_fedauc_t *f, uint32_t cid, uint32_t period, const phase_row_t *p,
                      const uint8_t *token)
{
    f->over_budget = 0;
    ranking_t *hit = cached(f, cid, period, p, token);
    while (hit == NULL && f->building) { /* one build at a time: wait, then look again */
        pthread_cond_wait(&f->built, &f->mu);
        hit = cached(f, cid, period, p, token);
    }
    if (hit != NULL) {
        return hit;
    }
    if (p->scores <= 0 || p->scores > COLL_FEDAUC_MAX_SCORES || p->uploads <= 0) {
        return NULL;
    }
    const coll_campaign_t *c = coll_campaigns_find(__atomic_load_n(&f->cs, __ATOMIC_ACQUIRE), cid);
    uint32_t max_examples = c != NULL ? c->opts.max_examples : 1u;
    uint64_t m = (uint64_t)p->scores, u = (uint64_t)p->uploads;
    size_t keep = fa_ranking_cached_bytes(m, u), peak = fa_ranking_build_bytes(m, u, max_examples);
    if (reserve_evicting(f, peak) != 0) {
        f->over_budget = 1;
        return NULL;
    }
    ranking_t nr;
    memset(&nr, 0, sizeof(nr));
    load_t l = {&nr, malloc((size_t)m * 4u), (size_t)u, {0}, 0, 0};
    nr.tok = malloc((size_t)u * sizeof(tok_t));
    nr.rank2 = malloc((size_t)m * 4u);
    int ok = l.scores != NULL && nr.tok != NULL && nr.rank2 != NULL &&
             load_uploads(f, cid, period, max_examples, &l) == 0 && nr.m == m && nr.ntok == u;
    if (ok) { /* the sort and the statistics without the lock: other requests go on */
        f->building = 1;
        f->building_cid = cid;
        f->building_period = period;
        pthread_mutex_unlock(&f->mu);
        ok = rank_loaded(&nr, l.scores, c != NULL ? &c->bounds : NULL) == 0;
        pthread_mutex_lock(&f->mu);
        f->building = 0;
        pthread_cond_broadcast(&f->built);
    }
    free(l.scores);
    release(f, peak - keep); /* the build's extra; the cached part stays reserved */
    if (!ok) {
        release(f, keep);
        ranking_free(&nr);
        return NULL;
    }
    ranking_t *slot = NULL; /* a free slot, else the least recently used */
    for (int i = 0; i < CACHE_MAX; i++) {
        ranking_t *r = &f->cache[i];
        if (r->used && r->campaign_id == cid && r->period == period) {
            ranking_drop(f, r); /* built meanwhile for another phase row */
        }
    }
    for (int i = 0; i < CACHE_MAX && (slot == NULL || slot->used); i++) {
        ranking_t *r = &f->cache[i];
        if (slot == NULL || !r->used || r->age < slot->age) {
            slot = r;
        }
    }
    ranking_drop(f, slot);
    *slot = nr;
    slot->reserved = keep;
    slot->used = 1;
    slot->campaign_id = cid;
    slot->period = period;
    slot->closed = p->closed;
    slot->age = ++f->clock;
    return slot;
}

static int cmp_tok(const void *k, const void *e)
{
    return memcmp(k, ((const tok_t *)e)->token, TOKEN);
}

const tok_t *fa_find_tok(const ranking_t *r, const uint8_t *token)
{
    return bsearch(token, r->tok, r->ntok, sizeof(tok_t), cmp_tok);
}

int fa_same_uploader(const upload_row_t *u, const char *device)
{
    if (!u->has_device) {
        return 1; /* an anonymous upload (or one stored before uploads were bound) */
    }
    return device != NULL && strcmp(device, u->device) == 0;
}

static void read_upload(void *ctx, int nc, const sqldb_val_t *v)
{
    upload_row_t *u = ctx;
    if (nc != 5) {
        return;
    }
    u->has_device = v[4].blob && v[4].len > 0 && v[4].len < sizeof(u->device);
    if (u->has_device) {
        memcpy(u->device, v[4].p, v[4].len);
        u->device[v[4].len] = '\0';
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

int fa_get_upload(coll_fedauc_t *f, uint32_t cid, const uint8_t *token, upload_row_t *u)
{
    memset(u, 0, sizeof(*u));
    sqldb_val_t in[2] = {sqldb_int(cid), sqldb_blob(token, TOKEN)};
    return sqldb_exec(f->db,
                      "SELECT period, n, scores, report_id, device FROM fedauc_uploads WHERE "
                      "campaign_id = $1 AND token = $2",
                      in, 2, read_upload, u) < 0
               ? -1
               : 0;
}

static void read_count(void *ctx, int nc, const sqldb_val_t *v)
{
    if (nc == 1) {
        *(int64_t *)ctx = v[0].i;
    }
}

/* ---- dropouts -------------------------------------------------------------------------------- */

typedef struct {
    const ranking_t *r;
    uint8_t *reported; /* [ntok] */
    int bad;
} claims_t;

static void mark_claim(void *ctx, int nc, const sqldb_val_t *v)
{
    claims_t *c = ctx;
    const tok_t *t = nc == 1 && v[0].blob && v[0].len == TOKEN ? fa_find_tok(c->r, v[0].p) : NULL;
    if (t == NULL) {
        c->bad = 1; /* a claim of an upload the ranking lacks: the caller ranks again */
        return;
    }
    c->reported[t - c->r->tok] = 1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* The first index of sorted[0, n) whose value is >= v (or > v when after). */
static size_t bound_u32(const uint32_t *sorted, size_t n, uint32_t v, int after)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sorted[mid] < v || (after && sorted[mid] == v)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* r->drop for the current claims (`reported` tokens): which examples are the dropouts', and
 * where every reported example sits among them. Cached per claim count. 0 or -1. */
static int fa_dropouts(coll_fedauc_t *f, ranking_t *r, uint32_t cid, uint32_t period,
                       uint64_t reported)
{
    if (r->drop.reported_tokens == reported) {
        return 0;
    }
    coll_fedauc_dropouts_t *d = &r->drop;
    memset(d, 0, sizeof(*d));
    d->reported_tokens = UINT64_MAX;
    claims_t cl = {r, calloc(r->ntok + 1, 1), 0};
    sqldb_val_t in[2] = {sqldb_int(cid), sqldb_int(period)};
    if (cl.reported == NULL ||
        sqldb_exec(f->db,
                   "SELECT token FROM fedauc_uploads WHERE campaign_id = $1 "
                   "AND period = $2 AND report_id IS NOT NULL",
                   in, 2, mark_claim, &cl) < 0 ||
        cl.bad) {
        free(cl.reported);
        return -1;
    }
    for (size_t k = 0; k < r->ntok; k++) {
        d->drop_examples += cl.reported[k] ? 0u : r->tok[k].n;
    }
    uint32_t *drop = malloc((size_t)d->drop_examples * 4u + 4u);
    if (drop == NULL) {
        free(cl.reported);
        return -1;
    }
    size_t nd = 0;
    for (size_t k = 0; k < r->ntok; k++) {
        if (!cl.reported[k]) {
            memcpy(drop + nd, r->rank2 + r->tok[k].off, (size_t)r->tok[k].n * 4u);
            nd += r->tok[k].n;
        }
    }
    qsort(drop, nd, 4, cmp_u32);
    d->d_width = (2u * nd + 1u + COLL_FEDAUC_D_BUCKETS - 1u) / COLL_FEDAUC_D_BUCKETS;
    d->reported_moments.tie_groups = 0;
    for (size_t k = 0; k < r->ntok; k++) {
        const tok_t *t = &r->tok[k];
        for (uint32_t i = 0; cl.reported[k] && i < t->n; i++) {
            uint32_t R = r->rank2[t->off + i];
            size_t below = bound_u32(drop, nd, R, 0), upto = bound_u32(drop, nd, R, 1);
            uint64_t d2 = 2u * (uint64_t)below + (uint64_t)(upto - below);
            d->d_count[d2 / d->d_width]++;
            d->d2_max = d2 > d->d2_max ? d2 : d->d2_max;
            long double rr = (long double)R / 2.0L;
            d->reported_moments.sum_r += rr;
            d->reported_moments.sum_r2 += rr * rr;
            d->reported_examples++;
        }
    }
    d->reported_moments.m = d->reported_examples;
    d->reported_tokens = reported;
    free(drop);
    free(cl.reported);
    return 0;
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
    sqldb_val_t in[2] = {sqldb_int(cid), sqldb_int(period)};
    pthread_mutex_lock(&f->mu);
    int rc = fa_phase_now(f, c, period, now, &p) != 0 ||
                     sqldb_exec(f->db,
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
        out->uploaders = p.uploaders > 0 ? (uint64_t)p.uploaders : 0u;
        out->withheld = out->closed && p.uploaders < (int64_t)c->opts.fedauc.min_uploaders;
        out->reports_closed = coll_campaign_period_check(c, period, now) > 0;
        ranking_t *r = out->closed && !out->withheld ? fa_ranking(f, cid, period, &p, NULL) : NULL;
        if (r != NULL &&
            (out->reported >= out->uploads || fa_dropouts(f, r, cid, period, out->reported) == 0)) {
            out->moments = r->mom;
            out->influence = r->influence;
            if (out->reported < out->uploads) {
                out->drop = r->drop;
            }
        } else if (out->closed && !out->withheld) {
            rc = -1;
        }
    }
    pthread_mutex_unlock(&f->mu);
    return rc;
}

void coll_fedauc_stats(coll_fedauc_t *f, coll_fedauc_stats_t *out)
{
    memset(out, 0, sizeof(*out));
    if (f != NULL) {
        pthread_mutex_lock(&f->mu);
        *out = f->stats;
        pthread_mutex_unlock(&f->mu);
    }
}

typedef struct {
    const coll_campaigns_t *cs;
    int64_t now;
    uint64_t *out;
} dropouts_t;

static void add_dropouts(void *ctx, int nc, const sqldb_val_t *v)
{
    dropouts_t *d = ctx;
    int ci = nc == 3 ? coll_campaigns_index(d->cs, (uint32_t)v[0].i) : -1;
    if (ci >= 0 && v[1].i >= 0 && v[1].i <= (int64_t)UINT32_MAX &&
        coll_campaign_period_check(&d->cs->c[ci], (uint32_t)v[1].i, d->now) > 0) {
        d->out[ci] += (uint64_t)v[2].i;
    }
}

int coll_fedauc_dropouts(coll_fedauc_t *f, const coll_campaigns_t *cs, int64_t now, uint64_t *out)
{
    memset(out, 0, cs->n * sizeof(*out));
    if (f == NULL) {
        return 0;
    }
    dropouts_t d = {cs, now, out};
    pthread_mutex_lock(&f->mu);
    int64_t rc = sqldb_exec(f->db,
                            "SELECT campaign_id, period, COUNT(*) FROM fedauc_uploads WHERE "
                            "report_id IS NULL GROUP BY campaign_id, period",
                            NULL, 0, add_dropouts, &d);
    pthread_mutex_unlock(&f->mu);
    return rc < 0 ? -1 : 0;
}
