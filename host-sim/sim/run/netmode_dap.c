/* SPDX-License-Identifier: Apache-2.0 */
/* Network mode of the two-aggregator mode (netmode_dap.h): device clients post DAP reports to
 * the leader over TLS, then one collection of their interval, opened with the collector's key. */
#include "sim/run/netmode_dap.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggregator/dap_collector.h"
#include "aggregator/dap_msg.h"
#include "aggregator/dap_tasks.h"
#include "aggregator/device.h"
#include "aggregator/task.h"
#include "sim/devices/mech.h"
#include "sim/run/tls_conn.h"

#define HEAD_MAX 1024u
#define ANSWER_MAX (1u << 20)
#define DEFAULT_WAIT_S 120u
#define LARGE_REQUEST (1u << 20) /* dpm-collector's default --max-body */

/* What every client reads (nothing of it changes while they run). */
typedef struct {
    const sim_cfg_t *cfg;
    const sim_pop_t *pop;
    const sim_net_opts_t *o;
    const dap_task_spec_t *spec;
    agg_task_t k; /* the deployed task as the devices see it (no private key) */
    dpm_dap_task_t t;
    uint8_t *ca;
    size_t ca_len;
    char host[DPM_DAP_MAX_URL + 1];      /* the Host header: the leader URL's host[:port] */
    char reports[DPM_DAP_MAX_URL + 128]; /* the paths of the task's resources on the leader */
    char collect[DPM_DAP_MAX_URL + 128];
    char token[256];
    dpm_dap_hpke_key_t key; /* the collector's */
    uint32_t run;
    int64_t wall_s;
} shared_t;

typedef struct {
    const shared_t *sh;
    unsigned index;
    uint64_t lo, hi;
    dpm_posix_rng_t drbg;
    sim_conn_t conn;
    uint64_t reports, rng_bytes;
    int failed;
    char err[320];
} client_t;

/* A POST head with the message's media type (and the token when not ""). 0 or -1. */
static int write_head(const shared_t *sh, const char *path, dap_msg_type_t type, size_t len,
                      const char *token, uint8_t *head, size_t *hlen)
{
    int n = snprintf((char *)head, HEAD_MAX,
                     "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: "
                     "%zu\r\n\r\n",
                     path, sh->host, dap_msg_media_type[type], len);
    if (n < 0 || (size_t)n >= HEAD_MAX) {
        return -1;
    }
    *hlen = (size_t)n;
    return sim_conn_add_token(token, head, HEAD_MAX, hlen);
}

/* One POST to the leader until it answers (tls_conn.h: sim_conn_request). 0 with *resp, or -1
 * with err. */
static int post(const shared_t *sh, sim_conn_t *c, dpm_posix_rng_t *drbg, const uint8_t *head,
                size_t hlen, const uint8_t *body, size_t blen, uint8_t *rbody, size_t rcap,
                dpm_http_response_t *resp, char *err, size_t cap)
{
    const sim_conn_target_t tg = {sh->o->host, sh->o->port, sh->o->server_name,
                                  sh->ca,      sh->ca_len,  drbg};
    return sim_conn_request(c, &tg, "no answer from the leader", head, hlen, body, blen, rbody,
                            rcap, 0, resp, err, cap);
}

/* One UploadRequest of n reports: every one must be kept. 0, or -1 with cl->err. */
static int upload(client_t *cl, const uint8_t *body, size_t blen, size_t n, uint8_t *rbody)
{
    const shared_t *sh = cl->sh;
    uint8_t head[HEAD_MAX];
    size_t hlen = 0;
    dpm_http_response_t resp;
    if (write_head(sh, sh->reports, DAP_MSG_UPLOAD_REQ, blen, "", head, &hlen) != 0) {
        snprintf(cl->err, sizeof(cl->err), "the request head does not fit");
        return -1;
    }
    int sent = post(sh, &cl->conn, &cl->drbg, head, hlen, body, blen, rbody, ANSWER_MAX, &resp,
                    cl->err, sizeof(cl->err));
    if (sent == 0 && resp.status != 200) {
        snprintf(cl->err, sizeof(cl->err), "POST %.160s answered %u: %.*s", sh->reports,
                 resp.status, (int)(resp.body_len < 160 ? resp.body_len : 160),
                 (const char *)rbody);
    }
    if (sent != 0 || resp.status != 200) {
        if (blen > LARGE_REQUEST) { /* a leader may close on a body above its --max-body */
            size_t k = strlen(cl->err);
            snprintf(cl->err + k, sizeof(cl->err) - k,
                     " (a request of %zu bytes: a leader refuses bodies above its --max-body, 1 "
                     "MiB by default; lower --batch)",
                     blen);
        }
        return -1;
    }
    dap_list_t l;
    dap_upload_status_t u;
    size_t pos = 0, refused = 0;
    uint8_t first = 0;
    if (resp.body_len > 0) {
        if (dap_msg_upload_errors_decode(rbody, resp.body_len, &l, NULL) != DPM_OK) {
            snprintf(cl->err, sizeof(cl->err), "the leader's UploadErrors is malformed");
            return -1;
        }
        while (dap_msg_next_upload_status(&l, &pos, &u) == DPM_OK) {
            first = refused++ == 0 ? u.error : first;
        }
    }
    if (refused > 0) {
        snprintf(cl->err, sizeof(cl->err),
                 "the leader did not keep %zu of %zu reports (the first: %s)%s", refused, n,
                 dap_msg_report_error_name(first),
                 first == DAP_REPORT_ERROR_BATCH_COLLECTED
                     ? ": this interval was collected before; give --dap-time a time in "
                       "another time_precision interval, or fresh aggregator databases"
                 : first == DAP_REPORT_ERROR_REPORT_REPLAYED
                     ? ": these devices posted before (the same scenario, seed and run make the "
                       "same report ids); give --run or --seed another value"
                     : "");
        return -1;
    }
    cl->reports += n;
    return 0;
}

static void *client_main(void *arg)
{
    client_t *cl = arg;
    const shared_t *sh = cl->sh;
    const sim_cfg_t *cfg = sh->cfg;
    char who[48];
    int wl = snprintf(who, sizeof(who), "dpm-sim dap client %u", cl->index);
    agg_device_t *d = agg_device_new(&sh->k, &sh->t);
    const uint32_t batch = sh->o->batch != 0 ? sh->o->batch : 100u;
    uint8_t *body = d != NULL ? malloc((size_t)batch * d->report_cap) : NULL;
    uint8_t *rbody = malloc(ANSWER_MAX);
    if (d == NULL || body == NULL || rbody == NULL ||
        dpm_posix_rng_init(&cl->drbg, (const uint8_t *)who, (size_t)wl) != DPM_OK) {
        snprintf(cl->err, sizeof(cl->err), "client setup failed (out of memory?)");
        cl->failed = 1;
        agg_device_free(d);
        free(body);
        free(rbody);
        return NULL;
    }
    d->wall_s = sh->wall_s;
    size_t blen = 0, n = 0;
    for (uint64_t i = cl->lo; i < cl->hi && !cl->failed; i++) {
        const sim_block_t *b = sim_pop_find(sh->pop, i, NULL);
        if (!sim_cfg_participates(cfg, b)) {
            continue;
        }
        const char *why = NULL;
        dpm_status_t st = cfg->m->dap_report(cfg, &sh->k, d, b, i, sh->run, &cl->rng_bytes, &why);
        if (st == DPM_ERR_RANGE) {
            continue; /* the device sends nothing */
        }
        if (st != DPM_OK) {
            snprintf(cl->err, sizeof(cl->err), "device %" PRIu64 ": %s: %s", i,
                     why != NULL ? why : "the SDK refused", dpm_strerror(st));
            cl->failed = 1;
            break;
        }
        memcpy(body + blen, d->report, d->report_len);
        blen += d->report_len;
        if (++n == batch) {
            cl->failed = upload(cl, body, blen, n, rbody) != 0;
            blen = n = 0;
        }
    }
    if (!cl->failed && n > 0) {
        cl->failed = upload(cl, body, blen, n, rbody) != 0;
    }
    sim_conn_close(&cl->conn);
    dpm_posix_rng_free(&cl->drbg);
    agg_device_free(d);
    free(body);
    free(rbody);
    return NULL;
}

/* The task, its fit to cfg, the paths, CA and token into sh. 0, or -1 with err. */
static int setup(shared_t *sh, dap_tasks_t *tasks, char *err, size_t errcap)
{
    const sim_net_opts_t *o = sh->o;
    if (sh->cfg->m->dap_report == NULL) {
        snprintf(err, errcap,
                 "%s: its devices send no DAP reports (network mode posts to a "
                 "dpm-collector without --dap-campaigns)",
                 sh->cfg->label);
        return -1;
    }
    if (o->dap_campaigns == NULL || o->dap_collector_key == NULL) {
        snprintf(err, errcap,
                 "%s: the two-aggregator mode's network run needs --dap-campaigns FILE (the "
                 "aggregators' campaigns file with the [dap_task]) and --dap-collector-key FILE "
                 "(the collector's key, dpm-collector dap-keygen)",
                 sh->cfg->label);
        return -1;
    }
    char why[256];
    if (dap_tasks_load(o->dap_campaigns, tasks, why, sizeof(why)) != 0) {
        snprintf(err, errcap, "--dap-campaigns %s: %s", o->dap_campaigns, why);
        return -1;
    }
    if (o->dap_task != NULL) {
        sh->spec = dap_tasks_find(tasks, o->dap_task, strlen(o->dap_task));
    } else if (tasks->n == 1) {
        sh->spec = &tasks->t[0];
    }
    if (sh->spec == NULL) {
        snprintf(err, errcap,
                 "--dap-campaigns %s: %s (it has %zu [dap_task] blocks: name one with --dap-task "
                 "ID)",
                 o->dap_campaigns, o->dap_task != NULL ? "no task with that id" : "which task?",
                 tasks->n);
        return -1;
    }
    const dap_task_spec_t *sp = sh->spec;
    if (sh->cfg->m->dap_fits(sh->cfg, &sp->t, sp->sensitivity, err, errcap) != 0) {
        return -1;
    }
    memcpy(sh->k.id, sp->t.id, sizeof(sh->k.id));
    memcpy(sh->k.config, sp->config, sp->config_len);
    sh->k.config_len = sp->config_len;
    sh->k.hpke[0] = sp->t.leader_hpke;
    sh->k.hpke[1] = sp->t.helper_hpke;
    dpm_span_t host;
    if (agg_task_decode(&sh->k, &sh->t) != DPM_OK ||
        dpm_dap_url_host(sh->t.leader_url, &host) != DPM_OK || host.len >= sizeof(sh->host)) {
        snprintf(err, errcap, "task %s: its configuration or leader URL does not decode",
                 sp->id_b64);
        return -1;
    }
    memcpy(sh->host, host.p, host.len);
    sh->host[host.len] = '\0';
    /* the resources' paths: the URL without "https://host[:port]" */
    char url[sizeof(sh->reports)];
    const size_t skip = 8u + host.len;
    dap_task_url(sp, sp->leader_url, "reports", url, sizeof(url));
    snprintf(sh->reports, sizeof(sh->reports), "%s", strlen(url) > skip ? url + skip : "/");
    dap_task_url(sp, sp->leader_url, "collection_jobs", url, sizeof(url));
    snprintf(sh->collect, sizeof(sh->collect), "%s", strlen(url) > skip ? url + skip : "/");
    if (o->host == NULL || o->ca_path == NULL ||
        sim_read_ca(o->ca_path, &sh->ca, &sh->ca_len) != 0) {
        snprintf(err, errcap, "network mode: cannot read the CA certificate %s",
                 o->ca_path ? o->ca_path : "(none)");
        return -1;
    }
    if (o->token_path == NULL || sim_read_token(o->token_path, sh->token, sizeof(sh->token)) != 0) {
        snprintf(err, errcap,
                 "network mode: the collection needs --token FILE, a collector credential of the "
                 "leader (%s unreadable or empty)",
                 o->token_path != NULL ? o->token_path : "none given");
        return -1;
    }
    dpm_hpke_config_t cfg;
    if (dap_key_load(o->dap_collector_key, &sh->key, &cfg, why, sizeof(why)) != 0) {
        snprintf(err, errcap, "--dap-collector-key %s: %s", o->dap_collector_key, why);
        return -1;
    }
    if (!dap_hpke_config_same(&cfg, &sp->collector)) {
        snprintf(err, errcap,
                 "--dap-collector-key %s is not the task's collector_hpke_config key: the shares "
                 "are sealed to that one (give the file dpm-collector dap-keygen wrote when it "
                 "printed that config)",
                 o->dap_collector_key);
        return -1;
    }
    sh->wall_s = o->dap_time != 0 ? (int64_t)o->dap_time : (int64_t)time(NULL);
    return 0;
}

/* The collection of [start, start + precision): its sums into sums, *count its reports. 0, or
 * -1 with err. */
static int collect(shared_t *sh, uint64_t *count, int64_t *sums, char *err, size_t errcap)
{
    const sim_net_opts_t *o = sh->o;
    const dap_task_spec_t *sp = sh->spec;
    const uint64_t prec = sh->t.time_precision;
    const uint64_t start = (uint64_t)sh->wall_s / prec * prec;
    char why[256];
    uint8_t req[512], head[HEAD_MAX];
    size_t rlen = 0, hlen = 0;
    if (dap_collector_request(sp, start, prec, req, sizeof(req), &rlen, why, sizeof(why)) != 0 ||
        write_head(sh, sh->collect, DAP_MSG_COLLECTION_JOB_REQ, rlen, sh->token, head, &hlen) !=
            0) {
        snprintf(err, errcap, "the CollectionJobReq: %s", why);
        return -1;
    }
    uint8_t *rbody = malloc(ANSWER_MAX);
    sim_conn_t conn;
    dpm_posix_rng_t drbg;
    memset(&conn, 0, sizeof(conn));
    if (rbody == NULL ||
        dpm_posix_rng_init(&drbg, (const uint8_t *)"dpm-sim dap collector", 21) != DPM_OK) {
        free(rbody);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    const uint32_t wait_s = o->dap_wait_s != 0 ? o->dap_wait_s : DEFAULT_WAIT_S;
    dpm_http_response_t resp;
    int rc = -1;
    for (uint32_t waited_ms = 0;; waited_ms += 500u) {
        if (post(sh, &conn, &drbg, head, hlen, req, rlen, rbody, ANSWER_MAX, &resp, err, errcap) !=
            0) {
            goto done;
        }
        if (resp.status != 202 || waited_ms >= wait_s * 1000u) {
            break;
        }
        struct timespec pause = {0, 500000000L}; /* the leader's jobs still run */
        nanosleep(&pause, NULL);
    }
    if (resp.status != 200) {
        snprintf(err, errcap, "the collection of [%" PRIu64 ", +%" PRIu64 ") answered %u%s: %.*s",
                 start, prec, resp.status,
                 resp.status == 202 ? " (its reports still wait for the helper: is it up? raise "
                                      "--dap-wait)"
                                    : "",
                 (int)(resp.body_len < 240 ? resp.body_len : 240), (const char *)rbody);
        goto done;
    }
    if (dap_collector_open(sp, &sh->key, req, rlen, rbody, resp.body_len, count, sums, why,
                           sizeof(why)) != 0) {
        snprintf(err, errcap, "the leader's CollectionJobResp: %s", why);
        goto done;
    }
    rc = 0;
done:
    sim_conn_close(&conn);
    dpm_posix_rng_free(&drbg);
    free(rbody);
    return rc;
}

int sim_net_dap_run(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run,
                    const sim_net_opts_t *o, sim_agg_t *agg, uint64_t *reports, uint64_t *rng_bytes,
                    char *err, size_t errcap)
{
    unsigned n = o->clients < 1                     ? 1
                 : o->clients > SIM_NET_MAX_CLIENTS ? SIM_NET_MAX_CLIENTS
                                                    : o->clients;
    err[0] = '\0';
    shared_t *sh = calloc(1, sizeof(*sh));
    dap_tasks_t *tasks = calloc(1, sizeof(*tasks));
    client_t *cl = calloc(n, sizeof(*cl));
    pthread_t *tid = calloc(n, sizeof(*tid));
    int *started = calloc(n, sizeof(*started));
    int64_t *sums = NULL;
    int st = -1;
    if (sh == NULL || tasks == NULL || cl == NULL || tid == NULL || started == NULL) {
        snprintf(err, errcap, "out of memory");
        goto done;
    }
    sh->cfg = cfg;
    sh->pop = pop;
    sh->o = o;
    sh->run = run;
    if (setup(sh, tasks, err, errcap) != 0) {
        goto done;
    }
    for (unsigned i = 0; i < n; i++) {
        cl[i].sh = sh;
        cl[i].index = i;
        cl[i].lo = pop->devices * i / n;
        cl[i].hi = pop->devices * (i + 1) / n;
        started[i] = pthread_create(&tid[i], NULL, client_main, &cl[i]) == 0;
        if (!started[i]) {
            client_main(&cl[i]);
        }
    }
    uint64_t posted = 0;
    st = 0;
    for (unsigned i = 0; i < n; i++) {
        if (started[i]) {
            pthread_join(tid[i], NULL);
        }
        if (cl[i].failed && st == 0) {
            snprintf(err, errcap, "client %u: %s", i, cl[i].err);
            st = -1;
        }
        posted += cl[i].reports;
        *rng_bytes += cl[i].rng_bytes;
    }
    *reports += posted;
    if (st != 0) {
        goto done;
    }
    uint64_t count = 0;
    sums = calloc(sh->t.vdaf.output_len + 1u, sizeof(*sums));
    if (sums == NULL || collect(sh, &count, sums, err, errcap) != 0) {
        st = -1;
        goto done;
    }
    if (count != posted) {
        snprintf(err, errcap,
                 "the leader collected %" PRIu64 " reports of the interval, %" PRIu64
                 " were posted (other reports in it: give --dap-time another interval, or "
                 "fresh aggregator databases)",
                 count, posted);
        st = -1;
        goto done;
    }
    sim_agg_init(cfg, agg);
    cfg->m->dap_collected(cfg, sums, agg);
    agg->reports = count;
done:
    if (sh != NULL) {
        free(sh->ca);
        memset(sh, 0, sizeof(*sh)); /* the collector's private key */
    }
    free(sh);
    free(tasks);
    free(cl);
    free(tid);
    free(started);
    free(sums);
    if (st != 0 && err[0] == '\0') {
        snprintf(err, errcap, "network mode failed (out of memory?)");
    }
    return st;
}
