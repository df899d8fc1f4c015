/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP aggregator at run time (dap_service.h). */
#include "collector/dap/dap_service.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggregator/dap_msg.h"
#include "collector/dap/dap_helper.h"
#include "collector/dap/dap_leader.h"
#include "aggregator/dap_tasks.h"
#include "collector/ingest/auth.h"
#include "collector/ingest/log.h"
#include "common/clock.h"
#include "common/err.h"
#include "dpm/port_posix.h"

/* The largest answer either role writes: a job's AggregationJobResp or a collection's shares. */
#define ANSWER_CAP (8u << 20)

typedef struct {
    const dap_task_spec_t *spec;
    dap_leader_t leader;
    dap_helper_t helper;
    int ready;
} task_state_t;

struct dap_service {
    dap_service_options_t o;
    dap_tasks_t *tasks;
    task_state_t st[DAP_MAX_TASKS];
    dpm_dap_hpke_key_t key;
    dpm_hpke_config_t cfg;
    dap_store_t *store;
    pthread_mutex_t mu; /* the store and rand (an aggregation job: its store calls alone) */
    dpm_posix_rng_t rng;
    dpm_rng_t port;
    dpm_rand_t rand;
    /* the job drivers */
    pthread_t driver[DAP_MAX_DRIVERS];
    uint32_t drivers_started;
    pthread_mutex_t stop_mu;
    pthread_cond_t stop_cv;
    int stopping;
};

size_t dap_service_tasks(const dap_service_t *s)
{
    return s != NULL ? s->tasks->n : 0;
}

/* The aggregators' store lock (dap_aggregator_t.lock): s->mu. */
static void service_lock(void *ctx, int on)
{
    dap_service_t *s = ctx;
    if (on) {
        pthread_mutex_lock(&s->mu);
    } else {
        pthread_mutex_unlock(&s->mu);
    }
}

int dap_service_open(dap_service_t **out, const dap_service_options_t *o, char *err, size_t cap)
{
    *out = NULL;
    if (o->role != DAP_ROLE_LEADER && o->role != DAP_ROLE_HELPER) {
        return host_fail(err, cap, "the role must be leader or helper");
    }
    if (o->hpke_key == NULL) {
        return host_fail(err, cap,
                         "--dap-hpke-key FILE is required with --role (make one with "
                         "dpm-collector dap-keygen)");
    }
    if (o->role == DAP_ROLE_LEADER && o->post == NULL) {
        return host_fail(err, cap,
                         "--role leader needs --dap-helper-token FILE and --dap-helper-ca FILE "
                         "(the bearer token it presents to the helper, the helper's CA)");
    }
    dap_service_t *s = calloc(1, sizeof(*s));
    if (s == NULL || (s->tasks = calloc(1, sizeof(*s->tasks))) == NULL) {
        free(s);
        return host_fail(err, cap, "out of memory");
    }
    s->o = *o;
    s->o.job_size = o->job_size != 0 ? o->job_size : 100u;
    s->o.poll_ms = o->poll_ms != 0 ? o->poll_ms : 200u;
    s->o.stale_s = o->stale_s != 0 ? o->stale_s : 60u;
    s->o.timeout_ms = o->timeout_ms != 0 ? o->timeout_ms : 5000u;
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->stop_mu, NULL);
    pthread_cond_init(&s->stop_cv, NULL);
    *out = s;
    if (dap_tasks_load(o->campaigns, s->tasks, err, cap) != 0) {
        return -1;
    }
    if (s->tasks->n == 0) {
        return host_fail(err, cap,
                         "%s has no [dap_task] block: --role %s serves DAP tasks (dap_tasks.h "
                         "lists their keys)",
                         o->campaigns, o->role == DAP_ROLE_LEADER ? "leader" : "helper");
    }
    if (dap_key_load(o->hpke_key, &s->key, &s->cfg, err, cap) != 0) {
        return -1;
    }
    if (dpm_posix_rng_init(&s->rng, (const uint8_t *)"dpm dap aggregator", 18) != DPM_OK) {
        return host_fail(err, cap, "the system's random source failed");
    }
    s->port = dpm_posix_rng(&s->rng);
    if (dpm_rand_init(&s->rand, &s->port) != DPM_OK) {
        return host_fail(err, cap, "the random source failed");
    }
    if (dap_store_open(&s->store, o->db_url, err, cap) != 0) {
        return -1;
    }
    const int leader = o->role == DAP_ROLE_LEADER;
    for (size_t i = 0; i < s->tasks->n; i++) {
        const dap_task_spec_t *t = &s->tasks->t[i];
        const dpm_hpke_config_t *mine = leader ? &t->t.leader_hpke : &t->t.helper_hpke;
        if (!dap_hpke_config_same(mine, &s->cfg)) {
            return host_fail(err, cap,
                             "[dap_task] at line %d: its %s_hpke_config is not the key in %s (give "
                             "this aggregator's config, as dpm-collector dap-keygen printed it)",
                             t->line, leader ? "leader" : "helper", o->hpke_key);
        }
        task_state_t *ts = &s->st[i];
        ts->spec = t;
        int rc = leader ? dap_leader_init(&ts->leader, &t->t, &s->key, t->verify_key, s->store,
                                          &t->collector, t->sensitivity, &s->rand)
                        : dap_helper_init(&ts->helper, &t->t, &s->key, t->verify_key, s->store,
                                          &t->collector, t->sensitivity, &s->rand);
        if (rc != 0) {
            return host_fail(err, cap, "[dap_task] at line %d: cannot set up its %s (memory?)",
                             t->line, leader ? "leader" : "helper");
        }
        dap_aggregator_t *agg = leader ? &ts->leader : &ts->helper;
        agg->lock = service_lock; /* aggregation jobs take s->mu for their store calls alone */
        agg->lock_ctx = s;
        ts->ready = 1;
    }
    return 0;
}

/* ---- the job driver ------------------------------------------------------------------------ */

static uint64_t wall_s(void)
{
    return (uint64_t)time(NULL);
}

/* Ask the helper; 0 with a 200 answer, else -1 with why ("STATUS: first line of its body"). */
static int ask_helper(dap_service_t *s, const dap_task_spec_t *t, const char *what,
                      dap_msg_type_t type, const uint8_t *req, size_t len, uint8_t *out, size_t cap,
                      size_t *out_len, char *why, size_t whycap)
{
    char url[DPM_DAP_MAX_URL + 128];
    dap_task_url(t, t->helper_url, what, url, sizeof(url));
    int status = 0;
    size_t got = 0;
    int rc = s->o.post(s->o.post_ctx, url, dap_msg_media_type[type], t->digest, req, len, out, cap,
                       &got, &status, why, whycap);
    *out_len = got;
    if (rc != 0) {
        return -1;
    }
    if (status != 200) {
        size_t k = got < 160 ? got : 160;
        char head[161];
        /* the problem document, printable */
        // cppcheck-suppress knownConditionTrueFalse ; (got is set through the post function)
        for (size_t i = 0; i < k; i++) {
            head[i] = out[i] >= 32 && out[i] < 127 ? (char)out[i] : ' ';
        }
        head[k] = '\0';
        snprintf(why, whycap, "the helper answered %d: %s", status, head);
        return -1;
    }
    return 0;
}

/* One job of task i: 1 done (committed or rejected by the leader alone), 0 no work, -1 the
 * helper failed (the job is sent again once stale). */
static int drive_one(dap_service_t *s, size_t i, uint8_t *resp)
{
    task_state_t *ts = &s->st[i];
    dap_leader_job_t j;
    char why[320];
    /* (the job's store calls take s->mu, its reports' work runs beside the other drivers') */
    int got = dap_leader_job_start(&ts->leader, s->o.job_size, wall_s(), s->o.stale_s, &j, why,
                                   sizeof(why));
    if (got <= 0) {
        if (got < 0) {
            coll_log(COLL_LOG_ERROR, "dap_job_failed", "\"task\": %s, \"error\": %s",
                     coll_log_str(ts->spec->id_b64), coll_log_str(why));
        }
        return got;
    }
    size_t rlen = 0;
    int rc = 1;
    if (j.sent > 0 && ask_helper(s, ts->spec, "aggregation_jobs", DAP_MSG_AGG_JOB_INIT_REQ, j.req,
                                 j.req_len, resp, ANSWER_CAP, &rlen, why, sizeof(why)) != 0) {
        coll_log(COLL_LOG_WARN, "dap_helper_unavailable",
                 "\"task\": %s, \"reports\": %zu, \"error\": %s, \"next\": \"the job is sent "
                 "again in %u s\"",
                 coll_log_str(ts->spec->id_b64), j.n, coll_log_str(why), s->o.stale_s);
        rc = -1;
    } else {
        int fin = dap_leader_job_finish(&ts->leader, &j, j.sent > 0 ? resp : NULL, rlen, why,
                                        sizeof(why));
        if (fin != 0) {
            coll_log(COLL_LOG_WARN, "dap_job_abandoned",
                     "\"task\": %s, \"reports\": %zu, \"error\": %s",
                     coll_log_str(ts->spec->id_b64), j.n, coll_log_str(why));
            rc = -1;
        } else {
            coll_log(COLL_LOG_DEBUG, "dap_job", "\"task\": %s, \"reports\": %zu, \"sent\": %zu",
                     coll_log_str(ts->spec->id_b64), j.n, j.sent);
        }
    }
    dap_leader_job_free(&j);
    return rc;
}

/* Sleep ms unless stopping; 1 when stopping. */
static int pause_ms(dap_service_t *s, uint32_t ms)
{
    struct timespec until = host_deadline(CLOCK_REALTIME, ms);
    pthread_mutex_lock(&s->stop_mu);
    while (!s->stopping && pthread_cond_timedwait(&s->stop_cv, &s->stop_mu, &until) != ETIMEDOUT) {
    }
    int stop = s->stopping;
    pthread_mutex_unlock(&s->stop_mu);
    return stop;
}

static void *driver_main(void *arg)
{
    dap_service_t *s = arg;
    uint8_t *resp = malloc(ANSWER_CAP);
    if (resp == NULL) {
        coll_log(COLL_LOG_ERROR, "dap_driver_failed", "\"error\": \"out of memory\"");
        return NULL;
    }
    uint32_t backoff = s->o.poll_ms;
    for (;;) {
        int work = 0, failed = 0;
        for (size_t i = 0; i < s->tasks->n; i++) {
            int r;
            while ((r = drive_one(s, i, resp)) == 1) { /* drain the task while the helper answers */
                work = 1;
                pthread_mutex_lock(&s->stop_mu);
                int stop = s->stopping;
                pthread_mutex_unlock(&s->stop_mu);
                if (stop) {
                    break;
                }
            }
            failed |= r < 0;
        }
        /* a failing helper is asked again after a doubling wait (at most 30 s) */
        backoff = failed ? (backoff < 15000u ? backoff * 2u : 30000u) : s->o.poll_ms;
        if (pause_ms(s, work && !failed ? 0u : backoff)) {
            break;
        }
    }
    free(resp);
    return NULL;
}

int dap_service_start(dap_service_t *s, char *err, size_t cap)
{
    if (s->o.role != DAP_ROLE_LEADER) {
        return 0;
    }
    /* several drivers: while the helper verifies one job, the leader prepares or finishes
     * another (each claims its jobs in the store, as several leaders do) */
    const uint32_t n = s->o.drivers != 0 ? s->o.drivers : DAP_DEFAULT_DRIVERS;
    while (s->drivers_started < n && s->drivers_started < DAP_MAX_DRIVERS) {
        if (pthread_create(&s->driver[s->drivers_started], NULL, driver_main, s) != 0) {
            return host_fail(err, cap, "cannot start job driver thread %u",
                             (unsigned)s->drivers_started + 1u);
        }
        s->drivers_started++;
    }
    return 0;
}

void dap_service_close(dap_service_t *s)
{
    if (s == NULL) {
        return;
    }
    if (s->drivers_started > 0) {
        pthread_mutex_lock(&s->stop_mu);
        s->stopping = 1;
        pthread_cond_broadcast(&s->stop_cv);
        pthread_mutex_unlock(&s->stop_mu);
        for (uint32_t i = 0; i < s->drivers_started; i++) {
            pthread_join(s->driver[i], NULL);
        }
    }
    for (size_t i = 0; i < DAP_MAX_TASKS; i++) {
        if (s->st[i].ready) {
            if (s->o.role == DAP_ROLE_LEADER) {
                dap_leader_free(&s->st[i].leader);
            } else {
                dap_helper_free(&s->st[i].helper);
            }
        }
    }
    dap_store_close(s->store);
    memset(&s->key, 0, sizeof(s->key));
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->stop_mu);
    pthread_cond_destroy(&s->stop_cv);
    free(s->tasks);
    free(s);
}

/* ---- the routes ---------------------------------------------------------------------------- */

typedef enum { R_NONE, R_HPKE, R_REPORTS, R_COLLECT, R_AGG_JOB, R_AGG_SHARE } route_t;

/* "/dap/tasks/{id}/{what}": the route and the id's span. */
static route_t parse_route(const char *path, const char **id, size_t *idlen)
{
    if (strcmp(path, "/dap/hpke_config") == 0) {
        return R_HPKE;
    }
    static const char pre[] = "/dap/tasks/";
    if (strncmp(path, pre, sizeof(pre) - 1) != 0) {
        return R_NONE;
    }
    const char *p = path + sizeof(pre) - 1;
    const char *slash = strchr(p, '/');
    if (slash == NULL) {
        return R_NONE;
    }
    *id = p;
    *idlen = (size_t)(slash - p);
    const char *what = slash + 1;
    return strcmp(what, "reports") == 0            ? R_REPORTS
           : strcmp(what, "collection_jobs") == 0  ? R_COLLECT
           : strcmp(what, "aggregation_jobs") == 0 ? R_AGG_JOB
           : strcmp(what, "aggregate_shares") == 0 ? R_AGG_SHARE
                                                   : R_NONE;
}

int dap_service_route(const dap_service_t *s, int post, const char *path)
{
    const char *id = NULL;
    size_t n = 0;
    route_t r = s != NULL ? parse_route(path, &id, &n) : R_NONE;
    if (!post || r == R_NONE || r == R_HPKE) {
        return -1;
    }
    if (r == R_COLLECT) {
        return (int)COLL_ROLE_COLLECTOR;
    }
    return r == R_REPORTS ? 0 : (int)COLL_ROLE_AGGREGATOR;
}

static void json_escaped(const char *in, char *out, size_t cap)
{
    size_t o = 0;
    for (; *in != '\0' && o + 7 < cap; in++) {
        unsigned char c = (unsigned char)*in;
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c < 32) {
            o += (size_t)snprintf(out + o, cap - o, "\\u%04x", c);
        } else {
            out[o++] = (char)c;
        }
    }
    out[o] = '\0';
}

/* A problem document (RFC 9457), the draft's type when there is one. */
static void problem(dap_http_answer_t *a, int status, const char *type, const char *detail)
{
    char esc[512], buf[900];
    json_escaped(detail, esc, sizeof(esc));
    int n = snprintf(buf, sizeof(buf), "{\"type\": \"%s%s\", \"status\": %d, \"detail\": \"%s\"}\n",
                     type != NULL ? "urn:ietf:params:ppm:dap:error:" : "about:blank",
                     type != NULL ? type : "", status, esc);
    a->status = status;
    a->content_type = "application/problem+json";
    a->body = malloc((size_t)n);
    a->len = a->body != NULL ? (size_t)n : 0;
    if (a->body != NULL) {
        memcpy(a->body, buf, (size_t)n);
    }
}

typedef struct {
    dap_service_t *s;
    const dap_task_spec_t *t;
} collect_ctx_t;

static int helper_share(void *ctx, const uint8_t *req, size_t len, uint8_t *out, size_t cap,
                        size_t *out_len, char *why, size_t whycap)
{
    collect_ctx_t *c = ctx;
    /* called by the store between a collection's two transactions (release_outside): nothing
     * of the store is held, so uploads and the job driver go on while the helper answers */
    pthread_mutex_unlock(&c->s->mu);
    int rc = ask_helper(c->s, c->t, "aggregate_shares", DAP_MSG_AGG_SHARE_REQ, req, len, out, cap,
                        out_len, why, whycap);
    pthread_mutex_lock(&c->s->mu);
    return rc;
}

void dap_service_request(dap_service_t *s, int post, const char *path, const char *content_type,
                         const char *task_digest, const uint8_t *body, size_t len, uint64_t now_s,
                         dap_http_answer_t *a)
{
    memset(a, 0, sizeof(*a));
    const char *id = NULL;
    size_t idlen = 0;
    route_t r = s != NULL ? parse_route(path, &id, &idlen) : R_NONE;
    const int leader = s != NULL && s->o.role == DAP_ROLE_LEADER;
    if (r == R_NONE || (leader && (r == R_AGG_JOB || r == R_AGG_SHARE)) ||
        (!leader && (r == R_REPORTS || r == R_COLLECT))) {
        problem(a, 404, NULL,
                s == NULL ? "this collector is no DAP aggregator (start it with --role)"
                          : "no such DAP resource on this aggregator (its role serves other "
                            "routes: dap_service.h)");
        return;
    }
    if (r == R_HPKE) {
        if (post) {
            problem(a, 405, NULL, "GET /dap/hpke_config");
            return;
        }
        uint8_t buf[128];
        size_t n = 0;
        if (dap_msg_hpke_config_list_encode(&s->cfg, 1, buf, sizeof(buf), &n) != DPM_OK ||
            (a->body = malloc(n)) == NULL) {
            problem(a, 500, NULL, "cannot encode the HpkeConfigList");
            return;
        }
        memcpy(a->body, buf, n);
        a->len = n;
        a->status = 200;
        a->content_type = dap_msg_media_type[DAP_MSG_HPKE_CONFIG_LIST];
        return;
    }
    if (!post) {
        problem(a, 405, NULL, "this resource takes POST");
        return;
    }
    const dap_task_spec_t *spec = dap_tasks_find(s->tasks, id, idlen);
    if (spec == NULL) {
        problem(a, 404, "unrecognizedTask",
                "no task with this id here: both aggregators must list it in their campaigns "
                "file's [dap_task] blocks");
        return;
    }
    task_state_t *ts = &s->st[spec - s->tasks->t];
    static const dap_msg_type_t want[] = {0,
                                          0,
                                          DAP_MSG_UPLOAD_REQ,
                                          DAP_MSG_COLLECTION_JOB_REQ,
                                          DAP_MSG_AGG_JOB_INIT_REQ,
                                          DAP_MSG_AGG_SHARE_REQ};
    if (content_type == NULL ||
        dap_msg_type_of(content_type, strlen(content_type)) != (int)want[r]) {
        char d[200];
        snprintf(d, sizeof(d), "send Content-Type: %s", dap_msg_media_type[want[r]]);
        problem(a, 415, NULL, d);
        return;
    }
    if ((r == R_AGG_JOB || r == R_AGG_SHARE) && task_digest != NULL &&
        strcmp(task_digest, spec->digest) != 0) {
        char d[400];
        snprintf(d, sizeof(d),
                 "the leader's parameters of this task are not this helper's (DPM-Task-Digest "
                 "%.64s, here %s): give both aggregators the same [dap_task] block, verification "
                 "key and HPKE configurations; nothing was aggregated",
                 task_digest, spec->digest);
        coll_log(COLL_LOG_ERROR, "dap_task_mismatch", "\"task\": %s, \"detail\": %s",
                 coll_log_str(spec->id_b64), coll_log_str(d));
        problem(a, 400, "invalidMessage", d);
        return;
    }
    uint8_t *out = malloc(ANSWER_CAP);
    if (out == NULL) {
        problem(a, 500, NULL, "out of memory");
        return;
    }
    size_t n = 0;
    dap_answer_t ans;
    dap_msg_type_t type = DAP_MSG_TYPES;
    collect_ctx_t cc = {s, spec};
    /* an aggregation job takes s->mu for its commit alone (dap_aggregator_t.lock): the
     * helper verifies several jobs at once */
    if (r != R_AGG_JOB) {
        pthread_mutex_lock(&s->mu);
    }
    switch (r) {
    case R_REPORTS:
        dap_leader_upload(&ts->leader, body, len, now_s, out, ANSWER_CAP, &n, &ans);
        type = DAP_MSG_UPLOAD_ERRORS;
        break;
    case R_COLLECT:
        dap_leader_collection_job(&ts->leader, body, len, helper_share, &cc, out, ANSWER_CAP, &n,
                                  &ans);
        type = DAP_MSG_COLLECTION_JOB_RESP;
        break;
    case R_AGG_JOB:
        dap_helper_aggregation_job(&ts->helper, body, len, now_s, out, ANSWER_CAP, &n, &ans);
        type = DAP_MSG_AGG_JOB_RESP;
        break;
    default:
        dap_helper_aggregate_share(&ts->helper, body, len, out, ANSWER_CAP, &n, &ans);
        type = DAP_MSG_AGG_SHARE;
        break;
    }
    if (r != R_AGG_JOB) {
        pthread_mutex_unlock(&s->mu);
    }
    if (ans.status == 200 || ans.status == 202) {
        a->status = ans.status;
        a->content_type = n > 0 ? dap_msg_media_type[type] : "text/plain";
        a->body = out;
        a->len = n;
        return;
    }
    free(out);
    if (ans.status >= 500) {
        coll_log(COLL_LOG_ERROR, "dap_failed", "\"path\": %s, \"status\": %d, \"error\": %s",
                 coll_log_str(path), ans.status, coll_log_str(ans.detail));
    }
    problem(a, ans.status, ans.problem, ans.detail);
}
