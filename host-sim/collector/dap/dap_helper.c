/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP helper's endpoints over bytes (dap_helper.h). */
#include "collector/dap/dap_helper.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aggregator/share.h"
#include "dpm/expert/vdaf.h"
#include "mbedtls/sha256.h"

void dap_answer_set(dap_answer_t *a, int status, const char *problem, const char *fmt, ...)
{
    va_list ap;
    a->status = status;
    a->problem = problem;
    va_start(ap, fmt);
    vsnprintf(a->detail, sizeof(a->detail), fmt, ap);
    va_end(ap);
}

int dap_aggregator_init(dap_aggregator_t *a, uint8_t role, const dpm_dap_task_t *t,
                        const dpm_dap_hpke_key_t *key,
                        const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES], dap_store_t *store,
                        const dpm_hpke_config_t *collector, uint64_t sensitivity, dpm_rand_t *rand)
{
    memset(a, 0, sizeof(*a));
    if (t == NULL || store == NULL || collector == NULL || rand == NULL ||
        dpm_hpke_config_check(collector, NULL) != DPM_OK ||
        agg_role_init(&a->role, t, role, key, verify_key) != 0) {
        return -1;
    }
    a->task = t;
    a->store = store;
    a->collector = *collector;
    a->sensitivity = sensitivity;
    a->rand = rand;
    a->skew_s = DAP_DEFAULT_SKEW_S;
    return 0;
}

void dap_aggregator_free(dap_aggregator_t *a)
{
    if (a != NULL && a->task != NULL) {
        agg_role_free(&a->role);
        memset(a, 0, sizeof(*a));
    }
}

void dap_aggregator_lock(const dap_aggregator_t *a, int on)
{
    if (a->lock != NULL) {
        a->lock(a->lock_ctx, on);
    }
}

/* One chunk of dap_aggregator_parallel on its thread. */
typedef struct {
    int (*fn)(void *ctx, size_t lo, size_t hi);
    void *ctx;
    size_t lo, hi;
    int rc;
} chunk_t;

static void *chunk_main(void *arg)
{
    chunk_t *c = arg;
    c->rc = c->fn(c->ctx, c->lo, c->hi);
    return NULL;
}

int dap_aggregator_parallel(size_t n, int (*fn)(void *ctx, size_t lo, size_t hi), void *ctx)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t k = cpus > 1 ? (size_t)cpus : 1u;
    k = k < DAP_MAX_WORKERS ? k : DAP_MAX_WORKERS;
    k = k < n / DAP_MIN_CHUNK ? k : (n / DAP_MIN_CHUNK > 0 ? n / DAP_MIN_CHUNK : 1u);
    chunk_t c[DAP_MAX_WORKERS];
    pthread_t th[DAP_MAX_WORKERS];
    int started[DAP_MAX_WORKERS] = {0};
    for (size_t w = 0; w < k; w++) {
        c[w] = (chunk_t){fn, ctx, n * w / k, n * (w + 1) / k, 0};
    }
    for (size_t w = 1; w < k; w++) { /* chunk 0 on this thread; one that cannot start too */
        started[w] = pthread_create(&th[w], NULL, chunk_main, &c[w]) == 0;
    }
    int rc = fn(ctx, c[0].lo, c[0].hi);
    for (size_t w = 1; w < k; w++) {
        if (started[w]) {
            pthread_join(th[w], NULL);
        } else {
            c[w].rc = fn(ctx, c[w].lo, c[w].hi);
        }
        rc = rc != 0 ? rc : c[w].rc;
    }
    return rc;
}

void dap_aggregator_collect_init(const dap_aggregator_t *a, const dap_interval_t *iv,
                                 dap_store_release_fn release, void *release_ctx,
                                 dap_store_collect_t *c)
{
    const dpm_prio3_t *v = &a->task->vdaf;
    memset(c, 0, sizeof(*c));
    c->start = iv->start;
    c->end = iv->start + iv->duration;
    c->min_batch = a->task->min_batch_size;
    c->share_bytes = v->out_share_bytes;
    c->merge = dap_vdaf_merge;
    c->merge_ctx = (void *)v;
    c->release = release;
    c->release_ctx = release_ctx;
}

int dap_answer_id(dap_answer_t *a, const uint8_t *body, size_t len, uint8_t digest[32])
{
    if (mbedtls_sha256(body, len, digest, 0) != 0) {
        dap_answer_set(a, 500, NULL, "SHA-256 failed");
        return -1;
    }
    memcpy(a->id, digest, sizeof(a->id));
    return 0;
}

int dap_vdaf_merge(void *ctx, uint8_t *acc, const uint8_t *add, size_t bytes)
{
    const dpm_prio3_t *v = ctx;
    return dpm_prio3_aggregate(v, acc, bytes, add, bytes) == DPM_OK ? 0 : -1;
}

/* The draft's input share validation that needs neither the key nor the proof: the task's
 * interval (report_dropped), the clock (report_too_early), public extensions (this task knows
 * none: invalid_message). The config id is the HPKE open's to check (hpke_unknown_config_id). */
static uint8_t helper_check(const dap_helper_t *h, const dap_verify_init_t *vi, uint64_t now_s)
{
    dpm_dap_report_view_t rv;
    memset(&rv, 0, sizeof(rv));
    rv.time = vi->report_share.metadata.time;
    rv.public_extensions = vi->report_share.metadata.public_ext.bytes;
    rv.share[0].config_id = vi->report_share.share.config_id;
    uint8_t e = agg_upload_check(h->task, &rv, rv.share[0].config_id, now_s, h->skew_s);
    if (e == DAP_REPORT_ERROR_REPORT_DROPPED) { /* outside the task's interval: which side */
        e = rv.time < h->task->interval_start ? DAP_REPORT_ERROR_TASK_NOT_STARTED
                                              : DAP_REPORT_ERROR_TASK_EXPIRED;
    }
    return e;
}

static int by_id(const void *a, const void *b)
{
    return memcmp(*(const uint8_t *const *)a, *(const uint8_t *const *)b, DPM_DAP_REPORT_ID_BYTES);
}

/* 1 when two VerifyInits carry the same report id (the draft: the whole job is invalid), 0 if
 * not, -1 out of memory. */
static int duplicate_ids(const dap_list_t *inits)
{
    const uint8_t **ids = malloc((inits->n + 1) * sizeof(*ids));
    if (ids == NULL) {
        return -1;
    }
    size_t pos = 0, n = 0;
    dap_verify_init_t vi;
    while (n < inits->n && dap_msg_next_verify_init(inits, &pos, &vi) == DPM_OK) {
        ids[n++] = vi.report_share.metadata.report_id;
    }
    qsort(ids, n, sizeof(*ids), by_id);
    int dup = 0;
    for (size_t i = 1; i < n && !dup; i++) {
        dup = memcmp(ids[i - 1], ids[i], DPM_DAP_REPORT_ID_BYTES) == 0;
    }
    free(ids);
    return dup;
}

/* A reject VerifyResp for report_id appended at out + *len. */
static int put_reject(const uint8_t *report_id, uint8_t error, uint8_t *out, size_t cap,
                      size_t *len)
{
    dap_verify_resp_t r;
    memset(&r, 0, sizeof(r));
    r.report_id = report_id;
    r.type = DAP_VERIFY_REJECT;
    r.report_error = error;
    size_t n = 0;
    if (dap_msg_verify_resp_encode(&r, out + *len, cap - *len, &n) != DPM_OK) {
        return -1;
    }
    *len += n;
    return 0;
}

/* The job's reports: each one's outcome and the continue response its helper step wrote. */
typedef struct {
    size_t n;
    dap_store_outcome_t *o;
    uint8_t *shares, *errors;
    const uint8_t **ids;
    size_t *resp_at, *resp_len; /* its VerifyResp inside resp (continue only) */
    uint8_t *resp;
    size_t resp_cap;
    size_t share_bytes;
} job_t;

static void job_free(job_t *j)
{
    if (j->shares != NULL) { /* output shares are secret-shared data: wiped */
        memset(j->shares, 0, j->n * j->share_bytes);
    }
    free(j->o);
    free(j->shares);
    free(j->errors);
    free(j->ids);
    free(j->resp_at);
    free(j->resp_len);
    free(j->resp);
    memset(j, 0, sizeof(*j));
}

static int job_alloc(job_t *j, size_t n, size_t share_bytes, size_t resp_cap)
{
    memset(j, 0, sizeof(*j));
    j->n = n;
    j->o = calloc(n + 1, sizeof(*j->o));
    j->shares = calloc(n + 1, share_bytes);
    j->errors = calloc(n + 1, 1);
    j->ids = calloc(n + 1, sizeof(*j->ids));
    j->resp_at = calloc(n + 1, sizeof(size_t));
    j->resp_len = calloc(n + 1, sizeof(size_t));
    j->resp = malloc(resp_cap + 1);
    j->resp_cap = resp_cap;
    j->share_bytes = share_bytes;
    if (j->o == NULL || j->shares == NULL || j->errors == NULL || j->ids == NULL ||
        j->resp_at == NULL || j->resp_len == NULL || j->resp == NULL) {
        job_free(j);
        return -1;
    }
    return 0;
}

/* A job's reports through the helper's step, in chunks on several threads (each with a role of
 * its own: its buffers are per-report scratch); report i's response goes to its own slot of
 * j->resp (per bytes each), so the chunks never share a byte. */
typedef struct {
    const dap_helper_t *h;
    const dap_verify_init_t *vis; /* the job's VerifyInits, parsed */
    uint64_t now_s;
    job_t *j;
    size_t per;
} run_t;

static int run_chunk(void *ctx, size_t lo, size_t hi)
{
    run_t *c = ctx;
    const dap_helper_t *h = c->h;
    job_t *j = c->j;
    const dpm_prio3_t *v = &h->task->vdaf;
    agg_role_t role;
    if (agg_role_init(&role, h->task, DPM_DAP_ROLE_HELPER, &h->role.key, h->role.verify_key) != 0) {
        return -1;
    }
    int rc = 0;
    for (size_t i = lo; i < hi && rc == 0; i++) {
        const dap_verify_init_t *vi = &c->vis[i];
        uint8_t *share = j->shares + i * v->out_share_bytes;
        j->ids[i] = vi->report_share.metadata.report_id;
        j->o[i].id = j->ids[i];
        j->o[i].bucket = vi->report_share.metadata.time; /* time_precision units: the bucket */
        j->o[i].out_share = share;
        uint8_t code = helper_check(h, vi, c->now_s);
        if (code == 0) {
            int finished = 0;
            size_t n = 0;
            j->resp_at[i] = i * c->per;
            if (agg_role_helper_init(&role, vi, share, &finished, j->resp + j->resp_at[i], c->per,
                                     &n) != DPM_OK) {
                rc = -1;
                break;
            }
            j->resp_len[i] = n;
            if (!finished) {
                dap_verify_resp_t r;
                dap_list_t one = {{j->resp + j->resp_at[i], n}, 1};
                size_t p = 0;
                code = dap_msg_next_verify_resp(&one, &p, &r) == DPM_OK && r.report_error != 0
                           ? r.report_error
                           : DAP_REPORT_ERROR_VDAF_VERIFY_ERROR;
            }
        }
        j->o[i].error = code;
    }
    agg_role_free(&role);
    return rc;
}

/* Each VerifyInit through the helper's step: the outcomes, the continue responses. 0, or -1
 * (out of memory, or a response larger than its slot: a server error). */
static int run_reports(const dap_helper_t *h, const dap_agg_job_init_req_t *req, uint64_t now_s,
                       job_t *j, size_t per)
{
    dap_verify_init_t *vis = calloc(j->n + 1, sizeof(*vis));
    if (vis == NULL) {
        return -1;
    }
    size_t pos = 0, n = 0;
    while (n < j->n && dap_msg_next_verify_init(&req->verify_inits, &pos, &vis[n]) == DPM_OK) {
        n++;
    }
    run_t c = {h, vis, now_s, j, per};
    int rc = n == j->n ? dap_aggregator_parallel(n, run_chunk, &c) : -1;
    free(vis);
    return rc;
}

void dap_helper_aggregation_job(dap_helper_t *h, const uint8_t *body, size_t len, uint64_t now_s,
                                uint8_t *out, size_t cap, size_t *out_len, dap_answer_t *a)
{
    memset(a, 0, sizeof(*a));
    *out_len = 0;
    dap_agg_job_init_req_t req;
    const char *why = NULL;
    if (dap_msg_agg_job_init_req_decode(body, len, &req, &why) != DPM_OK) {
        dap_answer_set(a, 400, "invalidMessage", "AggregationJobInitReq: %s",
                       why ? why : "malformed");
        return;
    }
    if (req.verification_key_id != 0) {
        dap_answer_set(a, 400, "invalidMessage", "verification key id %u: this task has only key 0",
                       req.verification_key_id);
        return;
    }
    if (req.agg_param.len != 0) {
        dap_answer_set(a, 400, "invalidAggregationParameter",
                       "Prio3 takes no aggregation parameter (%zu "
                       "bytes sent)",
                       req.agg_param.len);
        return;
    }
    if (req.extensions.n != 0) {
        dap_answer_set(a, 400, "unsupportedExtension",
                       "a time-interval task takes no aggregation job "
                       "extension (%zu sent)",
                       req.extensions.n);
        return;
    }
    if (req.verify_inits.n == 0) {
        dap_answer_set(a, 400, "invalidMessage", "an aggregation job without reports");
        return;
    }
    if (duplicate_ids(&req.verify_inits) != 0) {
        dap_answer_set(a, 400, "invalidMessage",
                       "a report id appears twice in this aggregation job");
        return;
    }
    uint8_t digest[32];
    if (dap_answer_id(a, body, len, digest) != 0) {
        return;
    }
    const dpm_prio3_t *v = &h->task->vdaf;
    job_t j;
    /* a continue response is 17 + 1 + 4 + 5 + the verifier message bytes: one slot each */
    const size_t per = 32u + v->verifier_message_bytes;
    if (job_alloc(&j, req.verify_inits.n, v->out_share_bytes, req.verify_inits.n * per) != 0) {
        dap_answer_set(a, 500, NULL, "out of memory for a job of %zu reports", req.verify_inits.n);
        return;
    }
    /* the reports' work out of the store's lock, on several threads: several jobs and the
     * chunks of one run at once; only the commit is serialized */
    if (run_reports(h, &req, now_s, &j, per) != 0) {
        dap_answer_set(a, 500, NULL, "a job of %zu reports failed (out of memory?)", j.n);
        job_free(&j);
        return;
    }
    dap_aggregator_lock(h, 1);
    int rc = dap_store_commit(h->store, h->task->id, a->id, digest, j.o, j.n, v->out_share_bytes,
                              dap_vdaf_merge, (void *)v, j.errors);
    if (rc != DAP_STORE_OK && rc != DAP_STORE_ALREADY) {
        dap_answer_set(a, rc == DAP_STORE_CONFLICT ? 400 : 500,
                       rc == DAP_STORE_CONFLICT ? "invalidMessage" : NULL, "%s",
                       rc == DAP_STORE_CONFLICT ? "another request under this aggregation job's id"
                                                : dap_store_error(h->store));
    }
    dap_aggregator_lock(h, 0);
    if (rc != DAP_STORE_OK && rc != DAP_STORE_ALREADY) {
        job_free(&j);
        return;
    }
    /* the response: each report's continue, or a reject with its final error (the store's:
     * a replayed or collected report is rejected although its proof checked) */
    for (size_t i = 0; i < j.n; i++) {
        if (j.errors[i] == 0 && j.o[i].error != 0) {
            /* a retry whose report once continued and now fails: answering otherwise than the
             * first time would make the two aggregators disagree on the batch */
            dap_answer_set(a, 500, NULL,
                           "report %zu of this retried job no longer verifies as it did (was the "
                           "helper's key or verification key changed?)",
                           i + 1);
            *out_len = 0;
            job_free(&j);
            return;
        }
        int bad;
        if (j.errors[i] == 0 && j.resp_len[i] > 0 && *out_len + j.resp_len[i] <= cap) {
            memcpy(out + *out_len, j.resp + j.resp_at[i], j.resp_len[i]);
            *out_len += j.resp_len[i];
            bad = 0;
        } else {
            bad = j.errors[i] == 0 || put_reject(j.ids[i], j.errors[i], out, cap, out_len) != 0;
        }
        if (bad) {
            dap_answer_set(a, 500, NULL, "the AggregationJobResp did not fit %zu bytes", cap);
            *out_len = 0;
            job_free(&j);
            return;
        }
    }
    job_free(&j);
    dap_answer_set(a, 200, NULL, "%s", rc == DAP_STORE_ALREADY ? "answered again" : "aggregated");
}

typedef struct {
    dap_helper_t *h;
    const dap_agg_share_req_t *req;
    const char *problem;
} release_t;

/* The batch released: the leader's view checked, this helper's noise added, sealed. */
static int release(void *ctx, uint8_t *agg, const dap_store_batch_t *batch, uint8_t *out,
                   size_t cap, size_t *len)
{
    release_t *r = ctx;
    dap_helper_t *h = r->h;
    if (batch->reports != r->req->report_count ||
        memcmp(batch->checksum, r->req->checksum, DAP_CHECKSUM_BYTES) != 0) {
        r->problem = "batchMismatch";
        return -1;
    }
    const dpm_prio3_t *v = &h->task->vdaf;
    uint8_t enc[DPM_HPKE_NENC];
    uint8_t *payload = malloc(v->out_share_bytes + DPM_HPKE_NT);
    dap_hpke_ct_t ct;
    const dap_collection_job_req_t *c = &r->req->collection_job_req;
    dpm_status_t st =
        payload == NULL
            ? DPM_ERR_BUFFER
            : agg_share_release(h->task, DPM_DAP_ROLE_HELPER, &h->collector, h->sensitivity,
                                h->rand, c->encoded.p, c->encoded.len, agg, enc, payload, &ct);
    if (st == DPM_OK) {
        st = dap_msg_agg_share_encode(&ct, out, cap, len);
    }
    free(payload);
    if (st != DPM_OK) {
        r->problem = NULL; /* a server error */
        return -1;
    }
    return 0;
}

void dap_helper_aggregate_share(dap_helper_t *h, const uint8_t *body, size_t len, uint8_t *out,
                                size_t cap, size_t *out_len, dap_answer_t *a)
{
    memset(a, 0, sizeof(*a));
    *out_len = 0;
    dap_agg_share_req_t req;
    const char *why = NULL;
    if (dap_msg_agg_share_req_decode(body, len, &req, &why) != DPM_OK) {
        dap_answer_set(a, 400, "invalidMessage", "AggregateShareReq: %s", why ? why : "malformed");
        return;
    }
    const dap_batch_t *b = &req.batch_selector, *q = &req.collection_job_req.query;
    if (b->batch_mode != h->task->batch_mode || q->batch_mode != b->batch_mode) {
        dap_answer_set(a, 400, "invalidMessage",
                       "the batch selector's and the query's batch modes must be the task's");
        return;
    }
    if (b->batch_mode != DPM_DAP_BATCH_TIME_INTERVAL || b->interval.duration == 0 ||
        b->interval.duration > (uint64_t)INT64_MAX ||
        b->interval.start > (uint64_t)INT64_MAX - b->interval.duration ||
        b->interval.start < q->interval.start ||
        b->interval.start + b->interval.duration > q->interval.start + q->interval.duration ||
        q->interval.start + q->interval.duration < q->interval.start) {
        dap_answer_set(a, 400, "batchInvalid",
                       "the batch selector is not a time interval of this task inside the "
                       "collector's query");
        return;
    }
    if (req.collection_job_req.extensions.n != 0) {
        dap_answer_set(a, 400, "unsupportedExtension",
                       "this task takes no collection job extension");
        return;
    }
    if (req.collection_job_req.agg_param.len != 0) {
        dap_answer_set(a, 400, "invalidAggregationParameter",
                       "Prio3 takes no aggregation parameter");
        return;
    }
    uint8_t digest[32];
    if (dap_answer_id(a, body, len, digest) != 0) {
        return;
    }
    release_t r = {h, &req, NULL};
    dap_store_collect_t c;
    dap_aggregator_collect_init(h, &b->interval, release, &r, &c);
    memcpy(c.req, digest, sizeof(c.req));
    dap_store_batch_t batch;
    int rc = dap_store_collect(h->store, h->task->id, &c, out, cap, out_len, &batch);
    switch (rc) {
    case DAP_STORE_OK:
    case DAP_STORE_ALREADY:
        dap_answer_set(a, 200, NULL, "%s",
                       rc == DAP_STORE_OK ? "released" : "released before: the same");
        return;
    case DAP_STORE_TOO_SMALL:
        dap_answer_set(
            a, 400, "invalidBatchSize", "%llu reports in the batch, the task's minimum is %llu",
            (unsigned long long)batch.reports, (unsigned long long)h->task->min_batch_size);
        return;
    case DAP_STORE_COLLECTED:
        dap_answer_set(a, 400, "batchOverlap",
                       "part of this batch was collected by another request");
        return;
    case DAP_STORE_REFUSED:
        if (r.problem != NULL) {
            dap_answer_set(
                a, 400, r.problem,
                "the leader counts %llu reports, this helper %llu, or their checksums differ",
                (unsigned long long)req.report_count, (unsigned long long)batch.reports);
        } else {
            dap_answer_set(a, 500, NULL, "the aggregate share could not be noised or sealed");
        }
        return;
    default: dap_answer_set(a, 500, NULL, "%s", dap_store_error(h->store)); return;
    }
}
