/* SPDX-License-Identifier: Apache-2.0 */
/* The store's generic part: backend choice, the group-committing writer thread, retries,
 * health, reads, and the maintenance commands (see store.h, store_backend.h). */
#include "collector/store/store.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collector/ingest/log.h"
#include "collector/store/store_backend.h"
#include "common/grow.h"
#include "mech/host_mech.h"

#define MAX_ATTEMPTS 3 /* a transaction aborted by a conflict is run again this often */

typedef struct job {
    coll_batch_t *batch;
    int done;
    int rc;
    coll_over_t over;
    int undone; /* over quota: its reports were deleted again in this transaction */
    uint64_t lost_counted, lost_over; /* its lost_reports within / beyond the cap (settle_lost) */
    struct job *next;
} job_t;

struct coll_store {
    const coll_backend_ops_t *ops;
    coll_backend_t *be;
    const coll_campaigns_t *campaigns; /* through campaigns_of: a reload appends (store.h) */
    char *url;                         /* the database, for coll_store_set_campaigns */
    coll_counters_t *counters;
    coll_deltas_t deltas; /* the writer's, reused */
    coll_quota_t *quota;  /* the writer's quota counters of one transaction, reused */
    size_t nquota, quota_cap;
    pthread_t writer;
    pthread_mutex_t mu;
    pthread_cond_t work; /* the writer waits for jobs */
    pthread_cond_t done; /* requests wait for their job */
    job_t *head, *tail;
    int stopping;
    int reader_only; /* coll_store_open_reader: no writer thread */
    unsigned long long commits, max_group, failures;
    /* health: the last failed commit (monotonic seconds) and why; corruption is sticky */
    int64_t last_failure_s;
    int corrupt;
    char last_error[160];
};

static int fail(char *err, size_t cap, const char *fmt, const char *a)
{
    snprintf(err, cap, fmt, a);
    return -1;
}

static const coll_campaigns_t *campaigns_of(const coll_store_t *s)
{
    return __atomic_load_n(&s->campaigns, __ATOMIC_ACQUIRE);
}

const char *coll_store_backend_name(const char *url, const char **target)
{
    if (url == NULL || url[0] == '\0') {
        return NULL;
    }
    if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0) {
        *target = url;
        return "postgresql";
    }
    if (strncmp(url, "sqlite:", 7) == 0) {
        *target = url + 7;
        return url[7] != '\0' ? "sqlite" : NULL;
    }
    if (strstr(url, "://") != NULL) {
        return NULL; /* another scheme: not a file name */
    }
    *target = url;
    return "sqlite";
}

static const coll_backend_ops_t *backend_for(const char *url, const char **target, char *err,
                                             size_t cap)
{
    const char *name = coll_store_backend_name(url, target);
    if (name == NULL) {
        fail(err, cap, "--db %s: want sqlite:PATH, a file name, or postgresql://[user@]host/dbname",
             url);
        return NULL;
    }
    return strcmp(name, "postgresql") == 0 ? &coll_pg_backend : &coll_sqlite_backend;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- one transaction ---------------------------------------------------------------------- */

static void reset_results(job_t *jobs)
{
    for (job_t *j = jobs; j != NULL; j = j->next) {
        coll_batch_t *b = j->batch;
        b->accepted = b->duplicates = 0;
        for (size_t i = 0; i < b->nreports; i++) {
            b->reports[i].is_new = 0;
        }
        j->over.n = 0;
        j->undone = 0;
    }
}

#define QUOTA_REASON "device quota exceeded"

/* The reject counts an over-quota batch adds: one per listed report (its campaign), the rest
 * under the first report's campaign. n of them into out[cap]. */
static size_t over_counts(const coll_batch_t *b, const coll_over_t *over, coll_reject_count_t *out,
                          size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i <= COLL_OVER_LISTED && i <= over->n; i++) {
        uint32_t cid;
        uint64_t count = 1;
        if (i == COLL_OVER_LISTED || i == over->n) {
            if (over->n <= COLL_OVER_LISTED || i != COLL_OVER_LISTED) {
                break;
            }
            cid = b->reports[0].campaign_id;
            count = over->n - COLL_OVER_LISTED;
        } else {
            cid = b->reports[over->idx[i]].campaign_id;
        }
        size_t k = 0;
        while (k < n && out[k].campaign_id != cid) {
            k++;
        }
        if (k == n) {
            if (n == cap) {
                k = n - 1;
            } else {
                out[n].campaign_id = cid;
                out[n].reason = QUOTA_REASON;
                out[n].count = 0;
                n++;
            }
        }
        out[k].count += count;
    }
    return n;
}

/* ---- quotas ------------------------------------------------------------------------------
 *
 * A batch sent with a device credential may store at most its quota of new reports per
 * (credential, campaign, period). The counters are charged once per transaction and key, after
 * every batch of the group is inserted (so a counter shared by many batches, a relay's, is
 * locked only for the end of the transaction), then each batch is checked in queue order against
 * the count before it: the first batch whose new reports would exceed the quota, and every later
 * one that would, is undone (its reports deleted again, its charge taken back) and its
 * over-quota reports rejected; the others keep theirs. That is exactly what charging batch by
 * batch would give, unless an undone batch had stored a report that a later batch of the group
 * carries too (a device resending while its first try is queued): the later batch took it for a
 * duplicate. Then the transaction is run again batch by batch ("sequential"). */

static int cmp_quota(const void *x, const void *y)
{
    const coll_quota_t *a = x, *b = y;
    int c = strcmp(a->device, b->device);
    if (c != 0) {
        return c;
    }
    if (a->campaign_id != b->campaign_id) {
        return a->campaign_id < b->campaign_id ? -1 : 1;
    }
    return a->period < b->period ? -1 : a->period > b->period;
}

/* The counter of (device, r's campaign, r's period) in s->quota (sorted), or -1. */
static long quota_find(const coll_store_t *s, const char *device, const coll_report_t *r)
{
    coll_quota_t key = {device, r->campaign_id, r->period, 0, 0};
    const coll_quota_t *q = bsearch(&key, s->quota, s->nquota, sizeof(key), cmp_quota);
    return q != NULL ? (long)(q - s->quota) : -1;
}

/* Append the counter (device, campaign_id, period) += delta to s->quota. 0, or -1 (memory). */
static int quota_push(coll_store_t *s, const char *device, uint32_t campaign_id, uint32_t period,
                      int64_t delta)
{
    if (HOST_GROW(s->quota, s->nquota, s->quota_cap, 16) != 0) {
        return -1;
    }
    coll_quota_t *q = &s->quota[s->nquota++];
    q->device = device;
    q->campaign_id = campaign_id;
    q->period = period;
    q->delta = delta;
    q->after = 0;
    return 0;
}

static int quota_add(coll_store_t *s, const char *device, const coll_report_t *r)
{
    for (size_t i = s->nquota; i-- > 0;) { /* runs of one key: look at the last ones first */
        coll_quota_t *q = &s->quota[i];
        if (q->campaign_id == r->campaign_id && q->period == r->period &&
            strcmp(q->device, device) == 0) {
            q->delta++;
            return 0;
        }
        if (s->nquota - i > 8) {
            break;
        }
    }
    return quota_push(s, device, r->campaign_id, r->period, 1);
}

/* Merge equal keys (quota_add only looks back a little) after sorting. */
static void quota_merge(coll_store_t *s)
{
    qsort(s->quota, s->nquota, sizeof(*s->quota), cmp_quota);
    size_t k = 0;
    for (size_t i = 0; i < s->nquota; i++) {
        if (k > 0 && cmp_quota(&s->quota[k - 1], &s->quota[i]) == 0) {
            s->quota[k - 1].delta += s->quota[i].delta;
        } else {
            s->quota[k++] = s->quota[i];
        }
    }
    s->nquota = k;
}

/* Merge the counters in s->quota and charge them to the database, which sets each one's after
 * (nothing to do when there are none). 0, or -1 (database). */
static int quota_charge(coll_store_t *s)
{
    if (s->nquota == 0) {
        return 0;
    }
    quota_merge(s);
    return s->ops->charge_quotas(s->be, s->quota, s->nquota);
}

static int charged(const job_t *j)
{
    const coll_batch_t *b = j->batch;
    return coll_has_device(b) && b->rejects_total == 0 && b->accepted > 0;
}

typedef struct {
    uint32_t cid;
    uint8_t id[DPM_REPORT_ID_BYTES];
} id_key_t;

static int cmp_id(const void *x, const void *y)
{
    const id_key_t *a = x, *b = y;
    return coll_report_key_cmp(a->cid, a->id, b->cid, b->id);
}

/* Did an undone batch store a report that a later batch of [first, stop) took for a duplicate? */
static int undo_conflicts(job_t *first, const job_t *stop, const job_t *undone)
{
    const coll_batch_t *u = undone->batch;
    id_key_t *keys = malloc(u->nreports * sizeof(*keys) + 1);
    size_t n = 0;
    if (keys == NULL) {
        return 1; /* cannot tell: be safe */
    }
    for (size_t i = 0; i < u->nreports; i++) {
        if (u->reports[i].is_new) {
            keys[n].cid = u->reports[i].campaign_id;
            memcpy(keys[n].id, u->reports[i].report_id, DPM_REPORT_ID_BYTES);
            n++;
        }
    }
    qsort(keys, n, sizeof(*keys), cmp_id);
    int hit = 0;
    int after = 0;
    for (job_t *j = first; j != stop && !hit; j = j->next) {
        if (j == undone) {
            after = 1;
            continue;
        }
        const coll_batch_t *b = j->batch;
        for (size_t i = 0; after && i < b->nreports && !hit; i++) {
            id_key_t k;
            k.cid = b->reports[i].campaign_id;
            memcpy(k.id, b->reports[i].report_id, DPM_REPORT_ID_BYTES);
            hit = !b->reports[i].is_new && bsearch(&k, keys, n, sizeof(k), cmp_id) != NULL;
        }
    }
    free(keys);
    (void)first;
    return hit;
}

/* Charge the quotas of the batches [first, stop) and undo those over them (see above).
 * 0, -1 (database), or 1: a conflict, run the transaction again batch by batch. */
static int settle(coll_store_t *s, job_t *first, job_t *stop)
{
    s->nquota = 0;
    for (job_t *j = first; j != stop; j = j->next) {
        const coll_batch_t *b = j->batch;
        for (size_t i = 0; charged(j) && i < b->nreports; i++) {
            if (b->reports[i].is_new && quota_add(s, b->device, &b->reports[i]) != 0) {
                return -1;
            }
        }
    }
    if (quota_charge(s) != 0) {
        return -1;
    }
    size_t nk = s->nquota;
    if (nk == 0) {
        return 0;
    }
    int64_t *before = malloc(nk * sizeof(int64_t)); /* the count before the batch at hand */
    int64_t *count = malloc(nk * sizeof(int64_t));  /* that batch's new reports per key */
    coll_quota_t *back = malloc(nk * sizeof(coll_quota_t));
    if (before == NULL || count == NULL || back == NULL) {
        free(before);
        free(count);
        free(back);
        return -1;
    }
    for (size_t k = 0; k < nk; k++) {
        before[k] = s->quota[k].after - s->quota[k].delta;
    }
    int rc = 0;
    for (job_t *j = first; j != stop && rc == 0; j = j->next) {
        coll_batch_t *b = j->batch;
        if (!charged(j)) {
            continue;
        }
        memset(count, 0, nk * sizeof(int64_t));
        for (size_t i = 0; i < b->nreports; i++) {
            const coll_report_t *r = &b->reports[i];
            long k = r->is_new ? quota_find(s, b->device, r) : -1;
            if (k < 0) {
                continue;
            }
            if (before[k] + ++count[k] > (int64_t)coll_quota_limit(campaigns_of(s), b, r)) {
                if (j->over.n < COLL_OVER_LISTED) {
                    j->over.idx[j->over.n] = i;
                }
                j->over.n++;
            }
        }
        if (j->over.n == 0) {
            for (size_t k = 0; k < nk; k++) {
                before[k] += count[k];
            }
            continue;
        }
        /* over quota: none of this batch is stored, its charge is taken back */
        if (undo_conflicts(first, stop, j)) {
            rc = 1;
            break;
        }
        size_t n = 0;
        for (size_t k = 0; k < nk; k++) {
            if (count[k] > 0) {
                back[n] = s->quota[k];
                back[n].delta = -count[k];
                n++;
            }
        }
        if (s->ops->undo_batch(s->be, b) != 0 || s->ops->charge_quotas(s->be, back, n) != 0) {
            rc = -1;
            break;
        }
        j->undone = 1;
        b->accepted = b->duplicates = 0;
        for (size_t i = 0; i < b->nreports; i++) {
            b->reports[i].is_new = 0;
        }
    }
    free(before);
    free(count);
    free(back);
    return rc;
}

/* ---- lost reports --------------------------------------------------------------------------
 *
 * Batch.lost_reports is the sender's word alone: nothing can check it. So each credential
 * (anonymous senders together as '') may add at most coll_lost_cap of them per UTC day, what it
 * may store in a day: a device cannot lose more reports than it could make. The claims are
 * counted in the quota table under campaign 0 (campaign ids start at 1) and period = the day
 * number, in the same transaction, so concurrent batches and collectors cannot both slip under
 * the cap; batches are settled in queue order like the report quotas. What a batch claims
 * beyond the cap is not added to the lost count but counted as the reject COLL_LOST_OVER_REASON
 * (campaign 0): visible in /metrics and the estimates, never silently dropped. */

#define LOST_CAMPAIGN 0u

uint64_t coll_lost_cap(const coll_campaigns_t *cs, uint32_t quota_override)
{
    uint64_t cap = 0;
    for (size_t i = 0; i < cs->n; i++) {
        const coll_campaign_t *c = &cs->c[i];
        uint64_t per_period = quota_override != 0 ? quota_override : c->opts.device_quota;
        uint64_t period = c->mech.campaign.period_seconds;
        cap += per_period * ((86400u + period - 1) / period); /* < 2^32 x 86400 x 64 */
    }
    return cap;
}

/* Does job j add its lost_reports: a batch that is stored (no rejects, within its quota). */
static int counts_lost(const job_t *j)
{
    const coll_batch_t *b = j->batch;
    return b->lost_reports > 0 && b->rejects_total == 0 && j->over.n == 0;
}

/* Charge the lost reports of every job to its credential's counter for the day of now, and
 * split each job's claim into lost_counted and lost_over. 0 or -1 (database). */
static int settle_lost(coll_store_t *s, job_t *jobs, int64_t now)
{
    uint32_t day = (uint32_t)(now / 86400);
    s->nquota = 0;
    for (job_t *j = jobs; j != NULL; j = j->next) {
        j->lost_counted = j->lost_over = 0;
        if (!counts_lost(j)) {
            continue;
        }
        const coll_batch_t *b = j->batch;
        if (quota_push(s, coll_has_device(b) ? b->device : "", LOST_CAMPAIGN, day,
                       b->lost_reports) != 0) {
            return -1;
        }
    }
    if (quota_charge(s) != 0) {
        return -1;
    }
    for (size_t k = 0; k < s->nquota; k++) { /* after -> the count before this transaction */
        s->quota[k].after -= s->quota[k].delta;
    }
    for (job_t *j = jobs; j != NULL; j = j->next) {
        if (!counts_lost(j)) {
            continue;
        }
        const coll_batch_t *b = j->batch;
        coll_quota_t key = {coll_has_device(b) ? b->device : "", LOST_CAMPAIGN, day, 0, 0};
        coll_quota_t *q = bsearch(&key, s->quota, s->nquota, sizeof(key), cmp_quota);
        int64_t cap = (int64_t)coll_lost_cap(campaigns_of(s), b->quota_override);
        int64_t room = q == NULL || q->after >= cap ? 0 : cap - q->after;
        j->lost_counted = (uint64_t)room < b->lost_reports ? (uint64_t)room : b->lost_reports;
        j->lost_over = b->lost_reports - j->lost_counted;
        if (q != NULL) {
            q->after += b->lost_reports; /* the next batch of this credential comes after it */
        }
    }
    return 0;
}

/* A batch's reject and lost-report counts. */
static int count_job(coll_store_t *s, job_t *j)
{
    coll_batch_t *b = j->batch;
    const coll_backend_ops_t *ops = s->ops;
    if (b->ncounts > 0 && ops->count_rejects(s->be, b->counts, b->ncounts) != 0) {
        return -1;
    }
    if (j->over.n > 0) {
        coll_reject_count_t extra[8];
        size_t n = over_counts(b, &j->over, extra, 8);
        if (ops->count_rejects(s->be, extra, n) != 0) {
            return -1;
        }
    }
    if (j->lost_counted > 0 &&
        ops->count_lost(s->be, coll_has_device(b) ? b->device : "", j->lost_counted) != 0) {
        return -1;
    }
    if (j->lost_over > 0) {
        coll_reject_count_t over = {0, COLL_LOST_OVER_REASON, j->lost_over};
        if (ops->count_rejects(s->be, &over, 1) != 0) {
            return -1;
        }
    }
    return 0;
}

static int insert_job(coll_store_t *s, job_t *j, int64_t now)
{
    coll_batch_t *b = j->batch;
    return b->rejects_total == 0 && b->nreports > 0 ? s->ops->insert_batch(s->be, b, now) : 0;
}

/* One attempt: every job (sequential: each batch's quota settled before the next is stored),
 * the sums of the new reports, COMMIT. 0, -1, or 1: a quota conflict (run it sequentially). */
static int attempt(coll_store_t *s, job_t *jobs, int64_t now, int sequential)
{
    coll_deltas_clear(&s->deltas);
    if (s->ops->begin(s->be) != 0) {
        return -1;
    }
    for (job_t *j = jobs; j != NULL; j = j->next) {
        if (insert_job(s, j, now) != 0) {
            return -1;
        }
        if (sequential && settle(s, j, j->next) != 0) {
            return -1;
        }
    }
    if (!sequential) {
        int rc = settle(s, jobs, NULL);
        if (rc != 0) {
            return rc;
        }
    }
    if (settle_lost(s, jobs, now) != 0) {
        return -1;
    }
    for (job_t *j = jobs; j != NULL; j = j->next) {
        if (count_job(s, j) != 0) {
            return -1;
        }
        const coll_batch_t *b = j->batch;
        for (size_t i = 0; i < b->nreports; i++) {
            if (b->reports[i].is_new && coll_deltas_add(&s->deltas, &b->reports[i]) != 0) {
                return -1; /* memory: nothing is committed */
            }
        }
    }
    if (s->deltas.n > 0 && s->ops->add_sums(s->be, &s->deltas) != 0) {
        return -1;
    }
    return s->ops->commit(s->be);
}

static int64_t mono_s(void)
{
    return (int64_t)mono_now();
}

/* Remember a failed commit for /healthz (the caller holds no lock). */
static void note_failure(coll_store_t *s, coll_be_error_t kind, const char *msg)
{
    pthread_mutex_lock(&s->mu);
    s->failures++;
    s->last_failure_s = mono_s();
    if (kind == COLL_BE_CORRUPT) {
        s->corrupt = 1;
    }
    snprintf(s->last_error, sizeof(s->last_error), "%s", msg);
    pthread_mutex_unlock(&s->mu);
}

/* One transaction for a group of jobs: all of them or none, retried after a conflict. */
static int commit_group(coll_store_t *s, job_t *jobs)
{
    int64_t now = (int64_t)time(NULL);
    double t0 = mono_now();
    int rc = -1;
    char msg[160] = "";
    coll_be_error_t kind = COLL_BE_FAIL;
    int sequential = 0;
    for (int k = 0; k < MAX_ATTEMPTS; k++) {
        reset_results(jobs);
        rc = attempt(s, jobs, now, sequential);
        if (rc == 0) {
            break;
        }
        if (rc == 1) { /* a quota conflict inside the group: not a failure, another way */
            s->ops->rollback(s->be);
            coll_log(COLL_LOG_INFO, "quota_rerun",
                     "\"note\": \"an over-quota batch shared a report with a later one: the "
                     "transaction runs again batch by batch\"");
            sequential = 1;
            k--;
            continue;
        }
        kind = s->ops->error(s->be, msg, sizeof(msg));
        s->ops->rollback(s->be);
        if (kind != COLL_BE_RETRY) {
            break;
        }
        coll_log(COLL_LOG_INFO, "commit_retry", "\"attempt\": %d, \"error\": %s", k + 1,
                 coll_log_str(msg));
    }
    coll_counters_commit(s->counters, mono_now() - t0, rc == 0);
    if (rc != 0) {
        reset_results(jobs);
        coll_log(COLL_LOG_ERROR, "storage_error", "\"error\": %s, \"corrupt\": %s",
                 coll_log_str(msg), kind == COLL_BE_CORRUPT ? "true" : "false");
        note_failure(s, kind, msg);
        return -1;
    }
    /* Durable now: the over-quota reports become the batch's rejects. */
    for (job_t *j = jobs; j != NULL; j = j->next) {
        coll_batch_t *b = j->batch;
        size_t listed = j->over.n < COLL_OVER_LISTED ? j->over.n : COLL_OVER_LISTED;
        // cppcheck-suppress knownConditionTrueFalse ; (over.n is filled by the store's worker)
        for (size_t i = 0; i < listed; i++) {
            coll_batch_reject_report(b, j->over.idx[i], QUOTA_REASON);
        }
        if (j->over.n > COLL_OVER_LISTED) {
            coll_batch_count(b, b->reports[0].campaign_id, QUOTA_REASON,
                             j->over.n - COLL_OVER_LISTED);
            b->rejects_total += j->over.n - COLL_OVER_LISTED;
        }
        if (j->lost_over > 0) { /* counted, not a reject of the batch: it stays 200 */
            coll_batch_count(b, 0, COLL_LOST_OVER_REASON, j->lost_over);
        }
    }
    return 0;
}

static void *writer_main(void *arg)
{
    coll_store_t *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (s->head == NULL && !s->stopping) {
            pthread_cond_wait(&s->work, &s->mu);
        }
        if (s->head == NULL) {
            break; /* stopping and nothing left */
        }
        job_t *jobs = s->head;
        s->head = s->tail = NULL;
        pthread_mutex_unlock(&s->mu);

        int rc = commit_group(s, jobs);
        unsigned long long n = 0;
        pthread_mutex_lock(&s->mu);
        for (job_t *j = jobs; j != NULL;) {
            job_t *next = j->next; /* j lives on the waiter's stack: read next first */
            j->rc = rc;
            j->done = 1;
            j = next;
            n++;
        }
        s->commits++;
        if (n > s->max_group) {
            s->max_group = n;
        }
        pthread_cond_broadcast(&s->done);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int coll_store_commit(coll_store_t *s, coll_batch_t *b)
{
    job_t job;
    memset(&job, 0, sizeof(job));
    job.batch = b;
    pthread_mutex_lock(&s->mu);
    if (s->stopping || s->reader_only) {
        pthread_mutex_unlock(&s->mu);
        return -1;
    }
    /* The job lives on this stack while the worker holds it: we wait below until it is done. */
    if (s->tail != NULL) {
        s->tail->next = &job;
    } else {
        // cppcheck-suppress autoVariables
        s->head = &job;
    }
    // cppcheck-suppress autoVariables
    s->tail = &job;
    pthread_cond_signal(&s->work);
    while (!job.done) {
        pthread_cond_wait(&s->done, &s->mu);
    }
    pthread_mutex_unlock(&s->mu);
    return job.rc;
}

void coll_store_stats(coll_store_t *s, unsigned long long *commits, unsigned long long *max_group)
{
    pthread_mutex_lock(&s->mu);
    *commits = s->commits;
    *max_group = s->max_group;
    pthread_mutex_unlock(&s->mu);
}

int coll_store_health(coll_store_t *s, char *reason, size_t cap)
{
    pthread_mutex_lock(&s->mu);
    int64_t ago = mono_s() - s->last_failure_s;
    int bad = s->corrupt || (s->failures > 0 && ago < COLL_STORE_HEALTH_WINDOW_S);
    if (bad) {
        snprintf(reason, cap, "%s: a commit failed %lld s ago (%s)",
                 s->corrupt ? "database corrupt" : "storage failure", (long long)ago,
                 s->last_error);
    }
    pthread_mutex_unlock(&s->mu);
    return bad ? -1 : 0;
}

int coll_store_read(coll_store_t *s, int ci, uint32_t from, uint32_t to, coll_campaign_state_t *out,
                    coll_totals_t *totals, char *err, size_t cap)
{
    const coll_campaigns_t *cs = campaigns_of(s);
    if (out != NULL) {
        if (ci < 0 || (size_t)ci >= cs->n) {
            return fail(err, cap, "%s", "no such campaign");
        }
        const coll_campaign_t *c = &cs->c[ci];
        if (coll_state_init(out, c) != 0 ||
            s->ops->read_sums(s->be, c->mech.campaign.id, from, to, out, err, cap) != 0) {
            return -1;
        }
    }
    if (totals != NULL) {
        memset(totals, 0, sizeof(*totals));
        if (s->ops->read_totals(s->be, cs, totals, err, cap) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The serving store and the analyst's reader start alike: the backend the URL names, where in
   it (*target), and a zeroed store over the campaigns. NULL with err set otherwise. */
static coll_store_t *store_new(const char *url, coll_campaigns_t *cs, const char **target,
                               char *err, size_t errcap)
{
    const coll_backend_ops_t *ops = backend_for(url, target, err, errcap);
    if (ops == NULL) {
        return NULL;
    }
    coll_store_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        fail(err, errcap, "%s", "out of memory");
        return NULL;
    }
    s->ops = ops;
    s->campaigns = cs;
    return s;
}

int coll_store_open(coll_store_t **out, const char *url, coll_campaigns_t *cs,
                    const coll_store_options_t *opts, char *err, size_t errcap)
{
    const char *target = NULL;
    coll_store_t *s = store_new(url, cs, &target, err, errcap);
    if (s == NULL) {
        return -1;
    }
    const coll_backend_ops_t *ops = s->ops;
    s->url = malloc(strlen(url) + 1);
    if (s->url != NULL) {
        memcpy(s->url, url, strlen(url) + 1);
    } else {
        free(s);
        return fail(err, errcap, "%s", "out of memory");
    }
    s->counters = opts != NULL ? opts->counters : NULL;
    int from = -1;
    if (ops->open(&s->be, target, COLL_BE_SERVE, opts, &from, err, errcap) != 0) {
        free(s->url);
        free(s);
        return -1;
    }
    if (from >= 0 && from != ops->schema_version) {
        coll_log(COLL_LOG_WARN, "schema_migrated", "\"backend\": \"%s\", \"from\": %d, \"to\": %d",
                 ops->name, from, ops->schema_version);
    }
    if (from < 0) { /* new: said loudly, since nothing tells a new database from a replaced one */
        coll_log(COLL_LOG_WARN, "database_created",
                 "\"backend\": \"%s\", \"note\": \"a new, empty database: if this collector "
                 "stored reports before, its database was replaced; stop it and restore the "
                 "latest backup\"",
                 ops->name);
    }
    if (ops->check_campaigns(s->be, cs, (int64_t)time(NULL), err, errcap) != 0) {
        ops->close(s->be);
        free(s->url);
        free(s);
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    if (pthread_create(&s->writer, NULL, writer_main, s) != 0) {
        ops->close(s->be);
        free(s->url);
        free(s);
        return fail(err, errcap, "%s", "cannot start the writer thread");
    }
    *out = s;
    return 0;
}

int coll_store_open_reader(coll_store_t **out, const char *url, coll_campaigns_t *cs, char *err,
                           size_t errcap)
{
    const char *target = NULL;
    coll_store_t *s = store_new(url, cs, &target, err, errcap);
    if (s == NULL) {
        return -1;
    }
    const coll_backend_ops_t *ops = s->ops;
    coll_store_options_t o;
    memset(&o, 0, sizeof(o));
    o.shard = "analyst";
    s->reader_only = 1;
    int from = -1;
    if (ops->open(&s->be, target, COLL_BE_READ, &o, &from, err, errcap) != 0) {
        free(s);
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work, NULL);
    pthread_cond_init(&s->done, NULL);
    /* The campaigns file must be the one the reports were checked against: a stored campaign
     * whose fingerprint differs would be estimated with the wrong parameters. A campaign the
     * store never saw reads as empty; one without a start in the file starts when the
     * collector first saw it, as the collector has it. */
    for (size_t i = 0; i < cs->n; i++) {
        coll_campaign_t *c = &cs->c[i];
        const dpm_mech_t *m = &c->mech;
        int64_t fp[3], first_seen = -1;
        int found = ops->read_campaign(s->be, m->campaign.id, fp, &first_seen, err, errcap);
        if (found < 0) {
            coll_store_close(s);
            return -1;
        }
        if (found && (fp[0] != (int64_t)m->campaign.mechanism || fp[1] != m->eps_implemented ||
                      fp[2] != (int64_t)m->params_hash)) {
            snprintf(err, errcap,
                     "campaign %u: the database holds its reports made with other parameters "
                     "(mechanism, eps, groups or metrics) than this campaigns file gives: read it "
                     "with the campaigns file the collector served",
                     m->campaign.id);
            coll_store_close(s);
            return -1;
        }
        if (found && first_seen >= 0 && !c->opts.has_start) {
            c->opts.start = first_seen;
            c->opts.has_start = 1;
        }
    }
    *out = s;
    return 0;
}

void coll_store_close(coll_store_t *s)
{
    if (s == NULL) {
        return;
    }
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&s->mu);
    if (!s->reader_only) {
        pthread_join(s->writer, NULL);
    }
    s->ops->close(s->be);
    coll_deltas_free(&s->deltas);
    free(s->quota);
    free(s->url);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->done);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

/* ---- maintenance --------------------------------------------------------------------------- */

static int admin_open(const char *url, const coll_backend_ops_t **ops, coll_backend_t **be,
                      int *from, char *err, size_t cap)
{
    const char *target = NULL;
    *ops = backend_for(url, &target, err, cap);
    if (*ops == NULL) {
        return -1;
    }
    coll_store_options_t o;
    memset(&o, 0, sizeof(o));
    o.integrity = COLL_INTEGRITY_OFF;
    o.shard = "admin";
    int v = -1;
    if ((*ops)->open(be, target, COLL_BE_ADMIN, &o, &v, err, cap) != 0) {
        return -1;
    }
    if (from != NULL) {
        *from = v;
    }
    return 0;
}

int coll_store_set_campaigns(coll_store_t *s, coll_campaigns_t *cs, size_t added, char *err,
                             size_t cap)
{
    if (added > 0) { /* on a connection of its own: the writer's belongs to the writer thread */
        const coll_backend_ops_t *ops = NULL;
        coll_backend_t *be = NULL;
        if (admin_open(s->url, &ops, &be, NULL, err, cap) != 0) {
            return -1;
        }
        int rc = ops->check_campaigns(be, cs, (int64_t)time(NULL), err, cap);
        ops->close(be);
        if (rc != 0) {
            return -1;
        }
    }
    __atomic_store_n(&s->campaigns, cs, __ATOMIC_RELEASE);
    return 0;
}

int coll_store_backup(const char *url, const char *to, char *err, size_t cap)
{
    const char *target = NULL;
    const coll_backend_ops_t *ops = backend_for(url, &target, err, cap);
    return ops != NULL ? ops->backup(target, to, err, cap) : -1;
}

int coll_store_restore(const char *from, const char *url, char *err, size_t cap)
{
    const char *target = NULL;
    const coll_backend_ops_t *ops = backend_for(url, &target, err, cap);
    return ops != NULL ? ops->restore(from, target, err, cap) : -1;
}

int coll_store_migrate(const char *url, int *from_version, int *to_version, char *err, size_t cap)
{
    const coll_backend_ops_t *ops = NULL;
    coll_backend_t *be = NULL;
    if (admin_open(url, &ops, &be, from_version, err, cap) != 0) {
        return -1;
    }
    *to_version = ops->schema_version;
    ops->close(be);
    return 0;
}

/* The period a campaign is in at Unix time now (0 before its start). */
static uint32_t current_period(const coll_campaign_t *c, int64_t now)
{
    int64_t len = (int64_t)c->mech.campaign.period_seconds;
    if (!c->opts.has_start || now < c->opts.start || len <= 0) {
        return 0;
    }
    int64_t p = (now - c->opts.start) / len;
    return p > (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

int coll_store_retention(const char *url, coll_campaigns_t *cs, uint32_t keep, int64_t now,
                         uint64_t *reports_dropped, uint64_t *periods_dropped,
                         uint64_t *uploads_dropped, char *err, size_t cap)
{
    const coll_backend_ops_t *ops = NULL;
    coll_backend_t *be = NULL;
    *reports_dropped = *periods_dropped = *uploads_dropped = 0;
    if (keep < 1) {
        return fail(err, cap, "%s", "--keep-periods must be at least 1");
    }
    if (admin_open(url, &ops, &be, NULL, err, cap) != 0) {
        return -1;
    }
    int rc = ops->begin(be);
    for (size_t i = 0; rc == 0 && i < cs->n; i++) {
        coll_campaign_t *c = &cs->c[i];
        if (!c->opts.has_start) {
            int64_t seen = ops->first_seen(be, c->mech.campaign.id);
            if (seen < 0) {
                continue; /* never stored anything */
            }
            c->opts.start = seen;
            c->opts.has_start = 1;
        }
        uint32_t cur = current_period(c, now);
        if (cur + 1 <= keep) {
            continue;
        }
        uint32_t cutoff = cur + 1 - keep; /* keep periods cutoff .. cur */
        uint64_t r = 0, p = 0;
        rc = ops->drop_periods(be, c->mech.campaign.id, cutoff, &r, &p);
        *reports_dropped += r;
        *periods_dropped += p;
        if (rc == 0 && coll_fedauc_is((uint32_t)c->mech.campaign.mechanism)) {
            uint64_t u = 0; /* FedAUC: the period's uploads go with its reports and sums */
            rc = ops->drop_fedauc(be, c->mech.campaign.id, cutoff, &u);
            *uploads_dropped += u;
        }
    }
    if (rc == 0) {
        rc = ops->commit(be);
    }
    if (rc != 0) {
        ops->error(be, err, cap);
        ops->rollback(be);
    }
    ops->close(be);
    return rc;
}

/* verify: the sums recomputed from the reports, against the stored ones. */
typedef struct {
    coll_deltas_t fresh;
    coll_deltas_t stored; /* rebuilt from the stored rows */
    uint64_t reports;
    int bad;
} verify_t;

static void verify_report(void *ctx, const coll_report_t *r)
{
    verify_t *v = ctx;
    v->reports++;
    if (coll_deltas_add(&v->fresh, r) != 0) {
        v->bad = 1;
    }
}

/* The entry of (cid, period) in ds, made if new, whatever its layout (coll_delta_for would
 * refuse one: the stored rows do not say it); NULL if memory runs out. */
static coll_delta_t *find_delta(coll_deltas_t *ds, uint32_t cid, uint32_t period)
{
    for (size_t i = 0; i < ds->n; i++) {
        if (ds->d[i].campaign_id == cid && ds->d[i].period == period) {
            return &ds->d[i];
        }
    }
    if (HOST_GROW(ds->d, ds->n, ds->cap, 8) != 0) {
        return NULL;
    }
    coll_delta_t *d = &ds->d[ds->n++];
    memset(d, 0, sizeof(*d));
    d->campaign_id = cid;
    d->period = period;
    return d;
}

static void verify_sum(void *ctx, int kind, uint32_t cid, uint32_t period, uint32_t a, uint32_t b,
                       int64_t n, int64_t s, double ss)
{
    verify_t *v = ctx;
    coll_delta_t *d = find_delta(&v->stored, cid, period);
    if (d == NULL) {
        v->bad = 1;
        return;
    }
    if (kind == 0) {
        d->reports += (uint64_t)n;
    } else if (kind == 1 && a < DPM_CAMPAIGN_MAX_METRICS && b < DPM_MAX_GROUPS) {
        d->n[a][b] += (uint64_t)n;
        d->s[a][b] += s;
        d->ss[a][b] += ss;
    } else if (kind == 2 && a < DPM_MAX_BINS) {
        d->pos[a] += s;
        d->neg[a] += n;
    } else if (kind == 3) {
        v->bad |= coll_vsums_add(&v->stored.vec, cid, period, a, s) != 0;
    } else {
        v->bad = 1;
    }
}

static int same_delta(const coll_delta_t *f, const coll_delta_t *s)
{
    if (f->reports != s->reports || memcmp(f->n, s->n, sizeof(f->n)) != 0 ||
        memcmp(f->s, s->s, sizeof(f->s)) != 0 || memcmp(f->pos, s->pos, sizeof(f->pos)) != 0 ||
        memcmp(f->neg, s->neg, sizeof(f->neg)) != 0) {
        return 0;
    }
    for (int m = 0; m < DPM_CAMPAIGN_MAX_METRICS; m++) {
        for (int g = 0; g < DPM_MAX_GROUPS; g++) {
            double a = f->ss[m][g], b = s->ss[m][g];
            double diff = a > b ? a - b : b - a;
            if (diff > 1e-9 * (a > b ? a : b)) {
                return 0; /* sums of squares are doubles, added in another order */
            }
        }
    }
    return 1;
}

int coll_store_verify(const char *url, uint64_t *reports, char *err, size_t cap)
{
    const coll_backend_ops_t *ops = NULL;
    coll_backend_t *be = NULL;
    if (admin_open(url, &ops, &be, NULL, err, cap) != 0) {
        return -1;
    }
    verify_t *v = calloc(1, sizeof(*v));
    if (v == NULL) {
        ops->close(be);
        return fail(err, cap, "%s", "out of memory");
    }
    int rc = 0;
    if (ops->scan_reports(be, verify_report, v, err, cap) != 0 ||
        ops->scan_sums(be, verify_sum, v, err, cap) != 0) {
        rc = -1;
    } else if (v->bad) {
        rc = 1;
        fail(err, cap, "%s", "a stored report or sum row could not be read");
    } else {
        if (!coll_vsums_within(&v->fresh.vec, &v->stored.vec) ||
            !coll_vsums_within(&v->stored.vec, &v->fresh.vec)) {
            rc = 1;
            fail(err, cap, "%s",
                 "the stored vector sums (dpauc, ustat) differ from the stored "
                 "reports'");
        }
        /* every (campaign, period) of either side must match the other */
        for (int side = 0; side < 2 && rc == 0; side++) {
            coll_deltas_t *a = side ? &v->stored : &v->fresh, *b = side ? &v->fresh : &v->stored;
            for (size_t i = 0; i < a->n && rc == 0; i++) {
                coll_delta_t *x = &a->d[i];
                coll_delta_t *y = find_delta(b, x->campaign_id, x->period);
                if (y == NULL || !same_delta(side ? y : x, side ? x : y)) {
                    rc = 1;
                    snprintf(err, cap,
                             "campaign %u period %u: the stored sums (%llu reports) differ "
                             "from the stored reports' (%llu)",
                             x->campaign_id, x->period,
                             (unsigned long long)(y ? (side ? x : y)->reports : 0),
                             (unsigned long long)(side ? (y ? y->reports : 0) : x->reports));
                }
            }
        }
    }
    *reports = v->reports;
    coll_deltas_free(&v->fresh);
    coll_deltas_free(&v->stored);
    free(v);
    ops->close(be);
    return rc;
}
