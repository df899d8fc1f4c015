/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP leader's work over bytes (dap_leader.h). */
#include "collector/dap/dap_leader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/share.h"
#include "dpm/expert/vdaf.h"

static int put_status(const uint8_t *id, uint8_t error, uint8_t *out, size_t cap, size_t *len)
{
    dap_upload_status_t u = {id, error};
    size_t n = 0;
    if (dap_msg_upload_status_encode(&u, out + *len, cap - *len, &n) != DPM_OK) {
        return -1;
    }
    *len += n;
    return 0;
}

void dap_leader_upload(dap_leader_t *l, const uint8_t *body, size_t len, uint64_t now_s,
                       uint8_t *out, size_t cap, size_t *out_len, dap_answer_t *a)
{
    memset(a, 0, sizeof(*a));
    *out_len = 0;
    /* framed first: a request that cannot be framed keeps nothing */
    size_t pos = 0, n = 0;
    dpm_dap_report_view_t rv;
    const char *why = NULL;
    while (pos < len) {
        if (dpm_dap_report_next(body, len, &pos, &rv, &why) != DPM_OK) {
            dap_answer_set(a, 400, "invalidMessage", "UploadRequest, report %zu: %s", n + 1,
                           why ? why : "malformed");
            return;
        }
        n++;
    }
    if (n == 0) {
        dap_answer_set(a, 400, "invalidMessage", "an UploadRequest without reports");
        return;
    }
    pos = 0;
    size_t kept = 0, k = 0;
    while (pos < len) {
        size_t at = pos;
        k++;
        (void)dpm_dap_report_next(body, len, &pos, &rv, NULL);
        uint8_t e = agg_upload_check(l->task, &rv, l->role.key.config_id, now_s, l->skew_s);
        if (e == 0) {
            int rc = dap_store_put_report(l->store, l->task->id, rv.report_id, rv.time, rv.time,
                                          body + at, pos - at);
            if (rc == DAP_STORE_FAIL) {
                /* what was kept stays kept: a retry of the whole request is answered
                 * report_replayed for those, and stores the rest */
                dap_answer_set(a, 500, NULL,
                               "storing report %zu of %zu: %s (the reports before it are "
                               "kept: send the request again)",
                               k, n, dap_store_error(l->store));
                *out_len = 0;
                return;
            }
            e = rc == DAP_STORE_REPLAY      ? DAP_REPORT_ERROR_REPORT_REPLAYED
                : rc == DAP_STORE_COLLECTED ? DAP_REPORT_ERROR_BATCH_COLLECTED
                                            : 0;
        }
        if (e != 0 && put_status(rv.report_id, e, out, cap, out_len) != 0) {
            dap_answer_set(a, 500, NULL, "the UploadErrors did not fit %zu bytes", cap);
            *out_len = 0;
            return;
        }
        kept += e == 0;
    }
    dap_answer_set(a, 200, NULL, "%zu of %zu reports kept", kept, n);
}

/* ---- aggregation jobs ------------------------------------------------------------------------ */

void dap_leader_job_free(dap_leader_job_t *j)
{
    if (j->states != NULL && j->state_bytes > 0) { /* verification states hold share data */
        memset(j->states, 0, j->cap * j->state_bytes);
    }
    free(j->req);
    free(j->ids);
    free(j->buckets);
    free(j->errors);
    free(j->states);
    memset(j, 0, sizeof(*j));
}

/* Room for `reports` reports (their ids, buckets, errors and states) and `req_bytes` bytes of
 * request; what the job holds is kept. 0, or -1 out of memory. */
static int job_reserve(dap_leader_job_t *j, size_t state_bytes, size_t reports, size_t req_bytes)
{
    if (reports > j->cap) {
        size_t cap = j->cap ? j->cap : 16;
        while (cap < reports) {
            cap *= 2;
        }
        void *ids = realloc(j->ids, cap * sizeof(*j->ids));
        if (ids != NULL) {
            j->ids = ids;
        }
        void *b = realloc(j->buckets, cap * sizeof(*j->buckets));
        if (b != NULL) {
            j->buckets = b;
        }
        void *e = realloc(j->errors, cap);
        if (e != NULL) {
            j->errors = e;
        }
        void *s = realloc(j->states, cap * state_bytes);
        if (s != NULL) {
            j->states = s;
        }
        if (ids == NULL || b == NULL || e == NULL || s == NULL) {
            return -1;
        }
        j->cap = cap;
        j->state_bytes = state_bytes;
    }
    if (req_bytes > j->req_cap) {
        void *r = realloc(j->req, req_bytes);
        if (r == NULL) {
            return -1;
        }
        j->req = r;
        j->req_cap = req_bytes;
    }
    return 0;
}

/* The job's stored reports as the store hands them (under its lock): copied, to be opened and
 * verified after the lock is given back. */
typedef struct {
    uint8_t *buf; /* the reports back to back */
    size_t len, cap;
    struct fetched_report {
        size_t at, len; /* its bytes: buf[at, at + len) */
        uint8_t id[DPM_DAP_REPORT_ID_BYTES];
        uint64_t bucket;
    } * r; /* one per report, in the store's order */
    size_t n, ncap;
    int failed;
} fetched_t;

static void fetched_free(fetched_t *f)
{
    if (f->buf != NULL) { /* sealed reports: nothing secret, but no reason to leave them */
        memset(f->buf, 0, f->len);
    }
    free(f->buf);
    free(f->r);
    memset(f, 0, sizeof(*f));
}

static void keep_report(void *ctx, const uint8_t id[DPM_DAP_REPORT_ID_BYTES], uint64_t bucket,
                        const uint8_t *report, size_t len)
{
    fetched_t *f = ctx;
    if (f->failed) {
        return;
    }
    if (f->n == f->ncap) {
        size_t cap = f->ncap ? 2 * f->ncap : 64;
        void *r = realloc(f->r, cap * sizeof(*f->r));
        if (r == NULL) {
            f->failed = 1;
            return;
        }
        f->r = r;
        f->ncap = cap;
    }
    if (f->len + len > f->cap) {
        size_t cap = 2 * (f->len + len);
        void *buf = realloc(f->buf, cap);
        if (buf == NULL) {
            f->failed = 1;
            return;
        }
        f->buf = buf;
        f->cap = cap;
    }
    if (len > 0) {
        memcpy(f->buf + f->len, report, len);
    }
    f->r[f->n].at = f->len;
    f->r[f->n].len = len;
    memcpy(f->r[f->n].id, id, DPM_DAP_REPORT_ID_BYTES);
    f->r[f->n].bucket = bucket;
    f->len += len;
    f->n++;
}

/* The job's reports opened and their verification started, in chunks on several threads
 * (each with a role of its own: its buffers are per-report scratch): report i's VerifyInit into
 * its own slot of `slots` (per bytes), its state into the job's, its status and code. */
typedef struct {
    dap_leader_t *l;
    const fetched_t *f;
    dap_leader_job_t *j;
    uint8_t *slots;
    size_t per, *slot_len;
    dpm_status_t *st;
    uint8_t *code;
} init_t;

static int init_chunk(void *ctx, size_t lo, size_t hi)
{
    init_t *c = ctx;
    const dpm_prio3_t *v = &c->l->task->vdaf;
    agg_role_t role;
    if (agg_role_init(&role, c->l->task, DPM_DAP_ROLE_LEADER, &c->l->role.key,
                      c->l->role.verify_key) != 0) {
        return -1;
    }
    for (size_t i = lo; i < hi; i++) {
        c->code[i] = 0;
        c->slot_len[i] = 0;
        c->st[i] =
            c->f->r[i].len + 64u + v->verifier_share_bytes > c->per
                ? DPM_ERR_BUFFER
                : agg_role_leader_init(&role, c->f->buf + c->f->r[i].at, c->f->r[i].len,
                                       c->j->states + i * v->state_bytes, c->slots + i * c->per,
                                       c->per, &c->slot_len[i], &c->code[i]);
    }
    agg_role_free(&role);
    return 0;
}

/* The fetched reports into job j: each one's VerifyInit appended to j->req in the store's
 * order, or its own rejection kept. 0, or -1 out of memory. */
static int init_reports(dap_leader_t *l, const fetched_t *f, dap_leader_job_t *j)
{
    const dpm_prio3_t *v = &l->task->vdaf;
    size_t per = 0;
    for (size_t i = 0; i < f->n; i++) {
        per = f->r[i].len > per ? f->r[i].len : per;
    }
    per += 64u + v->verifier_share_bytes; /* a VerifyInit: the report's parts and the share */
    if (job_reserve(j, v->state_bytes, f->n, 0) != 0) { /* init_chunk writes the states */
        return -1;
    }
    j->n = 0;
    init_t c = {l,
                f,
                j,
                malloc(f->n * per + 1),
                per,
                calloc(f->n + 1, sizeof(size_t)),
                calloc(f->n + 1, sizeof(dpm_status_t)),
                calloc(f->n + 1, 1)};
    int rc = c.slots == NULL || c.slot_len == NULL || c.st == NULL || c.code == NULL ||
                     dap_aggregator_parallel(f->n, init_chunk, &c) != 0
                 ? -1
                 : 0;
    size_t req_bytes = j->req_len;
    for (size_t i = 0; i < f->n && rc == 0; i++) {
        req_bytes += c.st[i] == DPM_OK ? c.slot_len[i] : 0u;
    }
    if (rc == 0 && job_reserve(j, v->state_bytes, f->n, req_bytes) != 0) {
        rc = -1;
    }
    for (size_t i = 0; i < f->n && rc == 0; i++) {
        j->n++;
        memcpy(j->ids[i], f->r[i].id, DPM_DAP_REPORT_ID_BYTES);
        j->buckets[i] = f->r[i].bucket;
        if (c.st[i] == DPM_OK) {
            memcpy(j->req + j->req_len, c.slots + i * per, c.slot_len[i]);
            j->req_len += c.slot_len[i];
            j->sent++;
        }
        j->errors[i] = c.st[i] == DPM_OK ? 0
                       : c.code[i] != 0  ? c.code[i]
                                         : DAP_REPORT_ERROR_INVALID_MESSAGE;
    }
    free(c.slots);
    free(c.slot_len);
    free(c.st);
    free(c.code);
    return rc;
}

/* The job's reports, claimed (a new job) or taken over (a stale one), under the store's lock:
 * 1, 0 (nothing to do) or -1 (why says). */
static int fetch_job(dap_leader_t *l, uint32_t max, uint64_t now_s, uint64_t stale_s,
                     dap_leader_job_t *j, fetched_t *f, char *why, size_t whycap)
{
    int stale = dap_store_stale_job(l->store, l->task->id, now_s > stale_s ? now_s - stale_s : 0,
                                    now_s, j->id);
    int64_t got;
    if (stale == 1) {
        got = dap_store_job_reports(l->store, l->task->id, j->id, keep_report, f);
    } else if (stale == 0) {
        for (size_t k = 0; k < sizeof(j->id); k += 8) { /* a new job's id */
            uint64_t w = 0;
            if (dpm_rand_bits(l->rand, 64, &w) != DPM_OK) {
                snprintf(why, whycap, "the leader's random source failed");
                return -1;
            }
            memcpy(j->id + k, &w, 8);
        }
        got = dap_store_claim(l->store, l->task->id, j->id, max, now_s, keep_report, f);
    } else {
        got = -1;
    }
    if (got < 0 || f->failed) {
        snprintf(why, whycap, "%s",
                 f->failed ? "out of memory for a job" : dap_store_error(l->store));
        return -1;
    }
    return got > 0;
}

int dap_leader_job_start(dap_leader_t *l, uint32_t max, uint64_t now_s, uint64_t stale_s,
                         dap_leader_job_t *j, char *why, size_t whycap)
{
    memset(j, 0, sizeof(*j));
    dap_agg_job_init_req_t head;
    memset(&head, 0, sizeof(head)); /* verification key 0, no parameter, no extension */
    if (job_reserve(j, l->task->vdaf.state_bytes, 1, 64) != 0 ||
        dap_msg_agg_job_init_req_encode(&head, j->req, j->req_cap, &j->req_len) != DPM_OK) {
        snprintf(why, whycap, "out of memory for a job");
        dap_leader_job_free(j);
        return -1;
    }
    size_t head_len = j->req_len;
    fetched_t f;
    memset(&f, 0, sizeof(f));
    dap_aggregator_lock(l, 1);
    int got = fetch_job(l, max, now_s, stale_s, j, &f, why, whycap);
    dap_aggregator_lock(l, 0);
    /* each report opened and its proof's verification started out of the store's lock, on
     * every core (init_reports): another driver's job, an upload or a commit goes on meanwhile.
     * The order is the store's: a stale job's request is byte for byte the first one's. */
    if (got == 1 && init_reports(l, &f, j) != 0) {
        snprintf(why, whycap, "out of memory for a job");
        got = -1;
    }
    fetched_free(&f);
    if (got != 1) {
        dap_leader_job_free(j);
        return got;
    }
    if (j->sent == 0) {
        j->req_len = head_len; /* nothing for the helper */
    }
    return 1;
}

int dap_leader_job_finish(dap_leader_t *l, dap_leader_job_t *j, const uint8_t *resp, size_t len,
                          char *why, size_t whycap)
{
    const dpm_prio3_t *v = &l->task->vdaf;
    dap_list_t resps;
    memset(&resps, 0, sizeof(resps));
    const char *reason = NULL;
    if (j->sent > 0 &&
        (resp == NULL || dap_msg_agg_job_resp_decode(resp, len, &resps, &reason) != DPM_OK ||
         resps.n != j->sent)) {
        snprintf(why, whycap, "the helper's AggregationJobResp: %s",
                 reason != NULL ? reason : "not one answer per report sent");
        return -1;
    }
    dap_store_outcome_t *o = calloc(j->n + 1, sizeof(*o));
    uint8_t *shares = calloc(j->n + 1, v->out_share_bytes), *errors = calloc(j->n + 1, 1);
    int rc = -1;
    if (o == NULL || shares == NULL || errors == NULL) {
        snprintf(why, whycap, "out of memory finishing a job of %zu reports", j->n);
        goto done;
    }
    size_t pos = 0;
    for (size_t i = 0; i < j->n; i++) {
        o[i].id = j->ids[i];
        o[i].bucket = j->buckets[i];
        o[i].out_share = shares + i * v->out_share_bytes;
        o[i].error = j->errors[i];
        if (j->errors[i] != 0) {
            continue; /* never sent */
        }
        dap_verify_resp_t vr;
        if (dap_msg_next_verify_resp(&resps, &pos, &vr) != DPM_OK ||
            memcmp(vr.report_id, j->ids[i], DPM_DAP_REPORT_ID_BYTES) != 0) {
            snprintf(why, whycap, "the helper's answer %zu is for another report", i + 1);
            goto done;
        }
        uint8_t code = 0;
        if (agg_role_leader_finish(&l->role, j->states + i * v->state_bytes, &vr,
                                   shares + i * v->out_share_bytes, &code) != DPM_OK) {
            if (vr.type != DAP_VERIFY_REJECT) {
                /* the helper continued (it counted the report) with a message that does not
                 * verify here: committing would split the batch between the two; the draft
                 * abandons the job (it stays uncommitted, and is sent again) */
                snprintf(why, whycap,
                         "the helper's answer for report %zu does not verify here (%s): the job "
                         "is abandoned, nothing committed",
                         i + 1, code == DAP_REPORT_ERROR_INVALID_MESSAGE ? "malformed" : "wrong");
                goto done;
            }
            o[i].error = code != 0 ? code : DAP_REPORT_ERROR_VDAF_VERIFY_ERROR;
        }
    }
    static const uint8_t none[32] = {0}; /* the leader's own jobs carry no request digest */
    dap_aggregator_lock(l, 1);
    int st = dap_store_commit(l->store, l->task->id, j->id, none, o, j->n, v->out_share_bytes,
                              dap_vdaf_merge, (void *)v, errors);
    if (st != DAP_STORE_OK && st != DAP_STORE_ALREADY) {
        snprintf(why, whycap, "committing the job: %s", dap_store_error(l->store));
    }
    dap_aggregator_lock(l, 0);
    if (st != DAP_STORE_OK && st != DAP_STORE_ALREADY) {
        goto done;
    }
    rc = 0;
done:
    if (shares != NULL) {
        memset(shares, 0, (j->n + 1) * v->out_share_bytes);
    }
    free(o);
    free(shares);
    free(errors);
    return rc;
}

/* ---- collection -------------------------------------------------------------------------------
 */

typedef struct {
    dap_leader_t *l;
    const uint8_t *body; /* the CollectionJobReq as the collector sent it */
    size_t len;
    const dap_collection_job_req_t *req;
    dap_leader_helper_fn helper;
    void *helper_ctx;
    int helper_failed; /* the release refused because of the helper (502), else this server */
    char detail[160];
} collect_t;

/* The batch's release: the helper's share asked for, the leader's noised and sealed, both in
 * the CollectionJobResp. */
static int release(void *ctx, uint8_t *agg, const dap_store_batch_t *batch, uint8_t *out,
                   size_t cap, size_t *len)
{
    collect_t *c = ctx;
    dap_leader_t *l = c->l;
    const dpm_prio3_t *v = &l->task->vdaf;
    dap_agg_share_req_t sr;
    memset(&sr, 0, sizeof(sr));
    sr.collection_job_req = *c->req;
    sr.batch_selector = c->req->query;
    sr.report_count = batch->reports;
    sr.checksum = batch->checksum;
    /* an AggregateShare: config id, enc, the sealed share with its tag, and their lengths */
    size_t hcap = v->out_share_bytes + DPM_HPKE_NENC + DPM_HPKE_NT + 16u;
    uint8_t sreq[512], *hshare = malloc(hcap);
    size_t sreq_len = 0, hlen = 0;
    dap_hpke_ct_t hct, lct;
    if (hshare == NULL ||
        dap_msg_agg_share_req_encode(&sr, sreq, sizeof(sreq), &sreq_len) != DPM_OK) {
        snprintf(c->detail, sizeof(c->detail), "the AggregateShareReq did not encode");
        free(hshare);
        return -1;
    }
    if (c->helper(c->helper_ctx, sreq, sreq_len, hshare, hcap, &hlen, c->detail,
                  sizeof(c->detail)) != 0) {
        c->helper_failed = 1;
        free(hshare);
        return -1;
    }
    if (dap_msg_agg_share_decode(hshare, hlen, &hct, NULL) != DPM_OK) {
        snprintf(c->detail, sizeof(c->detail), "its AggregateShare is malformed");
        c->helper_failed = 1;
        free(hshare);
        return -1;
    }
    uint8_t enc[DPM_HPKE_NENC];
    uint8_t *payload = malloc(v->out_share_bytes + DPM_HPKE_NT);
    dpm_status_t st = payload == NULL ? DPM_ERR_BUFFER
                                      : agg_share_release(l->task, DPM_DAP_ROLE_LEADER,
                                                          &l->collector, l->sensitivity, l->rand,
                                                          c->body, c->len, agg, enc, payload, &lct);
    if (st == DPM_OK) {
        dap_collection_job_resp_t r;
        memset(&r, 0, sizeof(r));
        r.report_count = batch->reports;
        r.interval = c->req->query.interval;
        r.leader_share = lct;
        r.helper_share = hct;
        st = dap_msg_collection_job_resp_encode(&r, out, cap, len);
    }
    free(payload);
    free(hshare);
    if (st != DPM_OK) {
        snprintf(c->detail, sizeof(c->detail), "the leader's share: %s", dpm_strerror(st));
        return -1;
    }
    return 0;
}

void dap_leader_collection_job(dap_leader_t *l, const uint8_t *body, size_t len,
                               dap_leader_helper_fn helper, void *helper_ctx, uint8_t *out,
                               size_t cap, size_t *out_len, dap_answer_t *a)
{
    memset(a, 0, sizeof(*a));
    *out_len = 0;
    dap_collection_job_req_t req;
    const char *why = NULL;
    if (dap_msg_collection_job_req_decode(body, len, &req, &why) != DPM_OK) {
        dap_answer_set(a, 400, "invalidMessage", "CollectionJobReq: %s", why ? why : "malformed");
        return;
    }
    const dap_interval_t *iv = &req.query.interval;
    if (l->task->batch_mode != req.query.batch_mode) {
        dap_answer_set(a, 400, "invalidMessage", "the query's batch mode is not this task's");
        return;
    }
    if (req.query.batch_mode != DPM_DAP_BATCH_TIME_INTERVAL || iv->duration == 0 ||
        iv->duration > (uint64_t)INT64_MAX || iv->start > (uint64_t)INT64_MAX - iv->duration) {
        dap_answer_set(a, 400, "batchInvalid",
                       "the query is not a time interval of this task (its duration at least "
                       "one time_precision)");
        return;
    }
    if (req.agg_param.len != 0 || req.extensions.n != 0) {
        dap_answer_set(a, 400,
                       req.agg_param.len ? "invalidAggregationParameter" : "unsupportedExtension",
                       "Prio3 on a time-interval task takes no parameter and no extension");
        return;
    }
    collect_t c = {l, body, len, &req, helper, helper_ctx, 0, {0}};
    dap_store_collect_t sc;
    dap_aggregator_collect_init(l, iv, release, &c, &sc);
    if (dap_answer_id(a, body, len, sc.req) != 0) {
        return;
    }
    sc.wait_for_pending = 1;
    sc.release_outside = 1; /* the helper is asked with no transaction open (dap_store.h) */
    dap_store_batch_t batch;
    int rc = dap_store_collect(l->store, l->task->id, &sc, out, cap, out_len, &batch);
    switch (rc) {
    case DAP_STORE_OK:
    case DAP_STORE_ALREADY:
        dap_answer_set(a, 200, NULL, "%s %llu reports",
                       rc == DAP_STORE_OK ? "collected" : "collected before:",
                       (unsigned long long)batch.reports);
        return;
    case DAP_STORE_TOO_SMALL:
        dap_answer_set(a, 400, "invalidBatchSize",
                       "%llu reports in the batch, the task's minimum is %llu: ask again later",
                       (unsigned long long)batch.reports,
                       (unsigned long long)l->task->min_batch_size);
        return;
    case DAP_STORE_COLLECTED:
        dap_answer_set(a, 400, "batchOverlap", "part of this batch was collected by another query");
        return;
    case DAP_STORE_PENDING:
        dap_answer_set(a, 202, NULL,
                       "reports of this batch are still being aggregated: send the same request "
                       "again later (nothing collected yet)");
        return;
    case DAP_STORE_REFUSED:
        if (c.helper_failed) {
            dap_answer_set(a, 502, NULL,
                           "the helper did not give its share, nothing was released: send the "
                           "same request again (the batch is held for it). %s",
                           c.detail);
        } else {
            dap_answer_set(a, 500, NULL, "%s", c.detail);
        }
        return;
    default: dap_answer_set(a, 500, NULL, "%s", dap_store_error(l->store)); return;
    }
}
