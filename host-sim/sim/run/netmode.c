/* SPDX-License-Identifier: Apache-2.0 */
/* Network mode (see netmode.h): device clients over TLS (port/tls) posting dpm.v1.Batch bodies
 * with the SDK's HTTP/1.1 client, then the collector's estimate for the cross-check: the reports
 * the collector acknowledged are summed and estimated here with the collector's own mechanism
 * module (mech/host_mech.h), and its answer must hold the same values. */
#include "sim/run/netmode.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpm/expert/batch.h"
#include "dpm/port_posix.h"
#include "dpm/port_tls.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/http.h"
#include "dpm/expert/report.h"
#include "common/json_read.h"
#include "common/json_write.h"
#include "mech/base/est_json.h"
#include "mech/host_mech.h"
#include "sim/run/tls_conn.h"

#define HEAD_MAX 512u
#define RESPONSE_MAX 65536u
#define ESTIMATE_MAX (4u << 20)

typedef struct {
    const sim_cfg_t *cfg;
    const sim_pop_t *pop;
    const sim_net_opts_t *o;
    const uint8_t *ca;
    size_t ca_len;
    const char *token; /* "" when none */
    char host_header[80];
    uint32_t run;
    unsigned index;
    uint64_t lo, hi;
    dpm_posix_rng_t drbg;
    sim_conn_t conn;
    sim_agg_t agg;
    const coll_campaign_t *hc; /* the campaign as the collector holds it */
    coll_deltas_t sums;        /* what the acknowledged reports add to the collector's sums */
    uint64_t reports;
    int round; /* two-round mechanisms (FedAUC): 1 uploads, 2 ranks and reports; else 0 */
    int failed;
    char err[256];
} client_t;

/* Whom this client's connection reaches. */
static sim_conn_target_t target(client_t *cl)
{
    sim_conn_target_t tg = {cl->o->host, cl->o->port, cl->o->server_name,
                            cl->ca,      cl->ca_len,  &cl->drbg};
    return tg;
}

static int add_token(const client_t *cl, uint8_t *head, size_t cap, size_t *hlen)
{
    return sim_conn_add_token(cl->token, head, cap, hlen);
}

/* Post one batch until the collector answers; 200 adds the reports to the local aggregate. */
static int post_batch(client_t *cl, const uint8_t *body, size_t blen, const dpm_report_t *reps,
                      size_t n)
{
    uint8_t head[HEAD_MAX], rbody[RESPONSE_MAX];
    size_t hlen = 0;
    if (dpm_http_write_request(head, sizeof(head), cl->host_header, "/v1/reports", (uint32_t)blen,
                               &hlen) != DPM_OK ||
        add_token(cl, head, sizeof(head), &hlen) != 0) {
        snprintf(cl->err, sizeof(cl->err), "cannot write the request head");
        return -1;
    }
    const sim_conn_target_t tg = target(cl);
    dpm_http_response_t resp;
    if (sim_conn_request(&cl->conn, &tg, "POST /v1/reports", head, hlen, body, blen, rbody,
                         sizeof(rbody), 0, &resp, cl->err, sizeof(cl->err)) != 0) {
        return -1;
    }
    if (resp.status != 200) {
        snprintf(cl->err, sizeof(cl->err),
                 "POST /v1/reports answered %u (the collector's "
                 "campaigns differ from the scenario's?)",
                 resp.status);
        return -1;
    }
    const host_mech_t *hm = host_mech_of(&cl->hc->mech.campaign);
    for (size_t i = 0; i < n; i++) {
        uint32_t group = hm->stored_group != NULL ? hm->stored_group(cl->hc, &reps[i]) : 0;
        if (sim_agg_add_report(cl->cfg, &cl->agg, &reps[i]) != DPM_OK ||
            hm->delta_add(&cl->sums, &reps[i], group) != 0) {
            snprintf(cl->err, sizeof(cl->err), "a report the collector took fails our check");
            return -1;
        }
    }
    cl->reports += n;
    return 0;
}

/* ---- FedAUC's rounds (sim_exchange_t): uploads, then rank replies --------------------- */

/* One request, answered 200 into rbody (409: not ranked yet, and 429/503, waited out). 0 or -1
 * with cl->err. */
static int round_trip(client_t *cl, const char *what, const uint8_t *head, size_t hlen,
                      const uint8_t *body, size_t blen, uint8_t *rbody, size_t rcap, size_t *rlen)
{
    const sim_conn_target_t tg = target(cl);
    dpm_http_response_t resp;
    /* a GET of ranks answered 409: the upload phase is still open, waited out too */
    if (sim_conn_request(&cl->conn, &tg, what, head, hlen, body, blen, rbody, rcap,
                         blen == 0 ? 409u : 0u, &resp, cl->err, sizeof(cl->err)) != 0) {
        return -1;
    }
    if (resp.status != 200) {
        snprintf(cl->err, sizeof(cl->err), "%s answered %u: %.*s", what, resp.status,
                 (int)(resp.body_len < 120 ? resp.body_len : 120), (const char *)rbody);
        return -1;
    }
    *rlen = resp.body_len;
    return 0;
}

static int net_upload(void *ctx, const uint8_t *msg, size_t len)
{
    client_t *cl = ctx;
    uint8_t head[HEAD_MAX], rbody[512];
    size_t hlen = 0, rlen = 0;
    if (dpm_http_write_request(head, sizeof(head), cl->host_header, "/v1/fedauc/uploads",
                               (uint32_t)len, &hlen) != DPM_OK ||
        add_token(cl, head, sizeof(head), &hlen) != 0) {
        return -1;
    }
    return round_trip(cl, "POST /v1/fedauc/uploads", head, hlen, msg, len, rbody, sizeof(rbody) - 1,
                      &rlen);
}

static int net_ranks(void *ctx, const uint8_t *token, uint8_t *reply, size_t cap, size_t *len)
{
    client_t *cl = ctx;
    char path[96];
    int k = snprintf(path, sizeof(path), "/v1/fedauc/%u/ranks/", cl->cfg->spec->id);
    for (int i = 0; i < DPM_FEDAUC_TOKEN_BYTES; i++) {
        k += snprintf(path + k, sizeof(path) - (size_t)k, "%02x", token[i]);
    }
    uint8_t head[HEAD_MAX];
    size_t hlen = 0;
    if (dpm_http_write_get(head, sizeof(head), cl->host_header, path, &hlen) != DPM_OK ||
        add_token(cl, head, sizeof(head), &hlen) != 0) {
        return -1;
    }
    return round_trip(cl, "GET ranks", head, hlen, NULL, 0, reply, cap, len);
}

static void *client_main(void *arg)
{
    client_t *cl = arg;
    uint32_t batch = cl->o->batch;
    size_t body_cap = (size_t)batch * dpm_batch_frame_len(DPM_REPORT_MAX_BYTES);
    uint8_t *body = malloc(body_cap);
    dpm_report_t *reps = malloc((size_t)batch * sizeof(*reps));
    char who[32];
    int n = snprintf(who, sizeof(who), "dpm-sim client %u", cl->index);
    if (cl->cfg != NULL) {
        sim_agg_init(cl->cfg, &cl->agg);
    }
    if (body == NULL || reps == NULL ||
        dpm_posix_rng_init(&cl->drbg, (const uint8_t *)who, (size_t)n) != DPM_OK) {
        snprintf(cl->err, sizeof(cl->err), "client setup failed");
        cl->failed = 1;
        free(body);
        free(reps);
        return NULL;
    }
    size_t blen = 0, nrep = 0;
    for (uint64_t i = cl->lo; i < cl->hi && !cl->failed; i++) {
        const sim_block_t *b = sim_pop_find(cl->pop, i, NULL);
        uint8_t buf[DPM_REPORT_MAX_BYTES];
        size_t len = 0;
        if (!sim_cfg_participates(cl->cfg, b)) {
            continue;
        }
        sim_exchange_t x = {cl->round, net_upload, net_ranks, cl};
        dpm_status_t st =
            cl->round != 0
                ? sim_device_report_rounds(cl->cfg, b, cl->run, i, &reps[nrep], buf, &len, &x)
                : sim_device_report(cl->cfg, b, cl->run, i, &reps[nrep], buf, &len, NULL);
        if (st == DPM_ERR_RANGE || (cl->round == 1 && st == DPM_ERR_UNDEFINED)) {
            continue; /* the device sends nothing (round 1: its upload is posted) */
        }
        if (st != DPM_OK) {
            char was[sizeof(cl->err)];
            snprintf(was, sizeof(was), "%s", cl->err); /* a round's own message, if any */
            snprintf(cl->err, sizeof(cl->err), "device %" PRIu64 ": %s%s%.160s", i,
                     dpm_strerror(st), was[0] ? ": " : "", was);
            cl->failed = 1;
            break;
        }
        st = dpm_batch_put_report(body, body_cap, &blen, buf, len);
        if (st != DPM_OK) { /* cannot happen: body holds `batch` reports of the largest size */
            snprintf(cl->err, sizeof(cl->err), "device %" PRIu64 ": framing its report: %s", i,
                     dpm_strerror(st));
            cl->failed = 1;
            break;
        }
        if (++nrep == batch) {
            cl->failed = post_batch(cl, body, blen, reps, nrep) != 0;
            blen = nrep = 0;
        }
    }
    if (!cl->failed && nrep > 0) {
        cl->failed = post_batch(cl, body, blen, reps, nrep) != 0;
    }
    sim_conn_close(&cl->conn);
    dpm_posix_rng_free(&cl->drbg);
    free(body);
    free(reps);
    return NULL;
}

/* Our estimate JSON of the sums st (the collector's module, at its default confidence) against
 * the collector's answer: 0 the same at every compare path, 1 not (why says where). */
static int compare_estimates(const coll_campaign_t *hc, const coll_campaign_state_t *st,
                             const host_json_ctx_t *q, const jr_value_t *theirs, char *why,
                             size_t cap)
{
    const host_mech_t *hm = host_mech_of(&hc->mech.campaign);
    jw_t w;
    jw_buffer(&w);
    jw_raw(&w, "{\"reports\": %llu", (unsigned long long)st->reports);
    hm->estimate_json(&w, hc, st, q);
    jw_raw(&w, "}");
    size_t len = 0;
    char *text = jw_take(&w, &len);
    jr_value_t ours;
    if (text == NULL || jr_parse(text, len, &ours) != 0) {
        free(text);
        snprintf(why, cap, "cannot render our own estimate (out of memory?)");
        return 1;
    }
    free(text);
    char where[160] = "reports";
    int same = jr_path_equal(&ours, theirs, "reports", where, sizeof(where));
    for (size_t i = 0; same && hm->compare[i] != NULL; i++) {
        same = jr_path_equal(&ours, theirs, hm->compare[i], where, sizeof(where));
    }
    if (!same) {
        const jr_value_t *r = jr_get(theirs, "reports");
        snprintf(why, cap,
                 "the collector's estimate differs from ours at %s (it holds %.0f reports, we sent "
                 "%llu: was the database fresh?)",
                 where, r != NULL ? r->number : -1.0, (unsigned long long)st->reports);
    }
    jr_free(&ours);
    return !same;
}

/* GET the collector's estimate of this campaign; compare it with ours of the reports it
 * acknowledged (compare_estimates); keep the JSON in estimate_dir. 0 (and *mismatch) or -1. */
static int collector_estimate(client_t *cl, const coll_campaign_state_t *ours,
                              const host_json_ctx_t *q, int *mismatch, char *err, size_t errcap)
{
    char path[64];
    uint8_t head[HEAD_MAX];
    size_t hlen = 0;
    uint8_t *json = malloc(ESTIMATE_MAX);
    snprintf(path, sizeof(path), "/v1/campaigns/%u/estimate", cl->cfg->spec->id);
    if (cl->cfg->m->report_rounds != NULL || cl->run != 0) { /* FedAUC: this run's ranking;
                                                              * --run R: this run's period */
        snprintf(path, sizeof(path), "/v1/campaigns/%u/estimate?period=%u", cl->cfg->spec->id,
                 cl->run);
    }
    dpm_http_response_t resp;
    const sim_conn_target_t tg = target(cl);
    if (json == NULL || sim_conn_open(&cl->conn, &tg, cl->err, sizeof(cl->err)) != 0 ||
        dpm_http_write_get(head, sizeof(head), cl->host_header, path, &hlen) != DPM_OK ||
        add_token(cl, head, sizeof(head), &hlen) != 0 ||
        dpm_http_response_init(&resp, json, ESTIMATE_MAX - 1) != DPM_OK ||
        sim_conn_exchange(&cl->conn, head, hlen, NULL, 0, &resp) != DPM_OK || resp.status != 200) {
        snprintf(err, errcap, "GET %s failed: %s", path, cl->err[0] ? cl->err : "no 200 answer");
        sim_conn_close(&cl->conn);
        free(json);
        return -1;
    }
    sim_conn_close(&cl->conn);
    if (cl->o->estimate_dir != NULL) {
        char file[4096];
        snprintf(file, sizeof(file), "%s/collector-estimate-%u.json", cl->o->estimate_dir,
                 cl->cfg->spec->id);
        FILE *f = fopen(file, "w");
        if (f != NULL) {
            fwrite(json, 1, resp.body_len, f);
            fclose(f);
        }
    }
    jr_value_t root;
    int st = jr_parse((const char *)json, resp.body_len, &root);
    free(json);
    if (st != 0) {
        snprintf(err, errcap, "the collector's estimate is not JSON");
        return -1;
    }
    char why[320] = "";
    *mismatch = compare_estimates(cl->hc, ours, q, &root, why, sizeof(why));
    if (*mismatch) {
        fprintf(stderr, "dpm-sim: campaign %u: %s\n", cl->cfg->spec->id, why);
    }
    jr_free(&root);
    return 0;
}

/* The campaign as the collector holds it, from the one our devices build and the collector's
 * defaults for what the campaigns file may add (max_examples; compare_estimates reads no value
 * that depends on them). 0, or -1 with err. */
static int build_campaign(const sim_cfg_t *cfg, coll_campaign_t *hc, char *err, size_t errcap)
{
    const dpm_campaign_t *c = &cfg->mech.campaign;
    const host_mech_t *hm = host_mech_of(c);
    coll_campaign_opts_t o;
    memset(&o, 0, sizeof(o));
    o.max_examples =
        hm != NULL && (hm->flags & HOST_MECH_MAX_EXAMPLES) ? COLL_DEFAULT_MAX_EXAMPLES : 0u;
    char why[256] = "";
    if (host_campaign_build(hc, c, &o, why, sizeof(why)) != 0) {
        snprintf(err, errcap, "network mode: campaign %u as the collector holds it: %s", c->id,
                 why);
        return -1;
    }
    return 0;
}

int sim_net_run(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run, const sim_net_opts_t *o,
                sim_agg_t *agg, uint64_t *reports, int *mismatch, char *err, size_t errcap)
{
    unsigned n = o->clients < 1                     ? 1
                 : o->clients > SIM_NET_MAX_CLIENTS ? SIM_NET_MAX_CLIENTS
                                                    : o->clients;
    uint8_t *ca = NULL;
    size_t ca_len = 0;
    err[0] = '\0';
    char token[256]; /* read-only while the clients run */
    if (o->host == NULL || o->ca_path == NULL || sim_read_ca(o->ca_path, &ca, &ca_len) != 0) {
        snprintf(err, errcap, "network mode: cannot read the CA certificate %s",
                 o->ca_path ? o->ca_path : "(none)");
        return -1;
    }
    if (sim_read_token(o->token_path, token, sizeof(token)) != 0) {
        snprintf(err, errcap, "network mode: cannot read a token from %s", o->token_path);
        free(ca);
        return -1;
    }
    client_t *cl = calloc(n, sizeof(*cl));
    pthread_t *tid = calloc(n, sizeof(*tid));
    int *started = calloc(n, sizeof(*started));
    coll_campaign_t *hc = calloc(1, sizeof(*hc));
    coll_campaign_state_t *sums = calloc(1, sizeof(*sums));
    int st = cl != NULL && tid != NULL && started != NULL && hc != NULL && sums != NULL ? 0 : -1;
    if (st == 0 && build_campaign(cfg, hc, err, errcap) != 0) {
        st = -1;
    }
    /* two-round mechanisms: every client uploads first, then every client reports */
    int rounds = cfg->m->report_rounds != NULL ? 2 : 1;
    for (int round = 1; round <= rounds && st == 0; round++) {
        for (unsigned i = 0; i < n && st == 0; i++) {
            cl[i].cfg = cfg;
            cl[i].pop = pop;
            cl[i].o = o;
            cl[i].ca = ca;
            cl[i].ca_len = ca_len;
            cl[i].token = token;
            cl[i].hc = hc;
            cl[i].run = run;
            cl[i].round = rounds == 2 ? round : 0;
            cl[i].index = i;
            cl[i].lo = pop->devices * i / n;
            cl[i].hi = pop->devices * (i + 1) / n;
            snprintf(cl[i].host_header, sizeof(cl[i].host_header), "%s:%u", o->server_name,
                     (unsigned)o->port);
            started[i] = pthread_create(&tid[i], NULL, client_main, &cl[i]) == 0;
            if (!started[i]) {
                client_main(&cl[i]);
            }
        }
        for (unsigned i = 0; i < n && cl != NULL && tid != NULL && started != NULL; i++) {
            if (started[i]) {
                pthread_join(tid[i], NULL);
            }
            st = st == 0 && round < rounds && cl[i].failed ? -1 : st;
            if (st != 0 && round < rounds) {
                snprintf(err, errcap, "client %u: %s", i, cl[i].err);
            }
        }
    }
    if (st == 0) {
        sim_agg_init(cfg, agg);
    }
    for (unsigned i = 0; i < n && st == 0; i++) {
        if (cl[i].failed) {
            snprintf(err, errcap, "client %u: %s", i, cl[i].err);
            st = -1;
        } else if (sim_agg_merge(cfg, agg, &cl[i].agg) != DPM_OK) {
            st = -1;
        }
        *reports += cl[i].reports;
    }
    if (st == 0 && coll_state_init(sums, hc) != 0) {
        st = -1;
    }
    for (unsigned i = 0; i < n && st == 0; i++) {
        coll_state_add_deltas(sums, &cl[i].sums, hc->mech.campaign.id);
    }
    if (st == 0 && cfg->m->net_period != NULL) { /* two rounds: the ranking our devices made */
        cfg->m->net_period(cfg, sums->reports, &sums->fa_phase);
    }
    if (st == 0) {
        /* the collector's default confidence; one period when the path asks for one */
        const int one = cfg->m->report_rounds != NULL || run != 0;
        const host_json_ctx_t q = {COLL_DEFAULT_CONFIDENCE, one, run};
        client_t probe;
        memset(&probe, 0, sizeof(probe));
        probe = cl[0];
        memset(&probe.conn, 0, sizeof(probe.conn));
        if (dpm_posix_rng_init(&probe.drbg, (const uint8_t *)"dpm-sim estimate", 16) != DPM_OK) {
            st = -1;
        } else {
            st = collector_estimate(&probe, sums, &q, mismatch, err, errcap);
            dpm_posix_rng_free(&probe.drbg);
        }
    }
    for (unsigned i = 0; i < n && cl != NULL; i++) {
        coll_deltas_free(&cl[i].sums);
    }
    free(cl);
    free(tid);
    free(started);
    free(ca);
    free(hc);
    free(sums);
    if (st != 0 && err[0] == '\0') {
        snprintf(err, errcap, "network mode failed (out of memory?)");
    }
    return st;
}
