/* SPDX-License-Identifier: Apache-2.0 */
/* A DAP client fleet for the two-aggregator process tests
 * (test_collector_dap.py), against `dpm-collector --role leader` over HTTPS. It reads the task
 * from the same campaigns file the aggregators read (its first [dap_task], a sumvec task).
 *
 *   tool_dap upload  --campaigns F --ca CA --n N [--first I] [--seed S] [--batch B] [--save FILE]
 *                    [--url BASE] (another leader than the task's) [--time UNIX] (the devices'
 *                    clock, default 1700000000: another batch)
 *       devices I .. I+N-1 report m[k] = (5 i + 3 k) mod (max + 1) through the SDK's device calls
 *       (one report each, its clock fixed: aggregator/device.h), posted in UploadRequests of B
 *       reports; --save also writes the request bytes of the last batch. Prints one JSON line:
 *       {"sent": N, "kept": K, "errors": {"report_replayed": n, ...}, "sums": [...],
 *        "batch_start": T, "time_precision": P, "status": [200, ...]}.
 *   tool_dap post    --campaigns F --ca CA --what reports|collection_jobs|aggregation_jobs|
 *                    aggregate_shares --body FILE [--token-file T] [--url BASE]
 *       POSTs a file as that message (to the leader, or BASE) and prints {"status": S, "errors":
 *       {...} (UploadErrors), "body": "first bytes"}.
 * Exit 0 when it could talk to the leader (whatever it answered), 1 otherwise, 2 on usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aggregator/dap_msg.h"
#include "aggregator/device.h"
#include "aggregator/dap_tasks.h"
#include "collector/net/https_client.h"
#include "test_rng.h"

#define CAP (8u << 20)

typedef struct {
    const char *campaigns, *ca, *save, *what, *body, *token_file, *url;
    unsigned long n, first, seed, batch, time;
} args_t;

static int usage(void)
{
    fprintf(stderr, "usage: tool_dap upload|post ... (see tests/e2e/tool_dap.c)\n");
    return 2;
}

static const char *read_token(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (f == NULL || fgets(out, (int)cap, f) == NULL) {
        if (f != NULL) {
            fclose(f);
        }
        return NULL;
    }
    fclose(f);
    out[strcspn(out, "\r\n")] = '\0';
    return out;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    uint8_t *b = malloc(CAP);
    *len = b != NULL ? fread(b, 1, CAP, f) : 0;
    fclose(f);
    return b;
}

/* Count an UploadErrors body's statuses by error into count[]; the number of statuses. */
static size_t count_errors(const uint8_t *body, size_t len, size_t count[DAP_REPORT_ERROR_MAX + 1])
{
    dap_list_t l;
    size_t pos = 0, n = 0;
    dap_upload_status_t u;
    if (len > 0 && dap_msg_upload_errors_decode(body, len, &l, NULL) == DPM_OK) {
        while (dap_msg_next_upload_status(&l, &pos, &u) == DPM_OK) {
            count[u.error <= DAP_REPORT_ERROR_MAX ? u.error : 0]++;
            n++;
        }
    }
    return n;
}

static void print_errors(const size_t count[DAP_REPORT_ERROR_MAX + 1])
{
    printf("\"errors\": {");
    const char *sep = "";
    for (size_t i = 1; i <= DAP_REPORT_ERROR_MAX; i++) {
        if (count[i] > 0) {
            printf("%s\"%s\": %zu", sep, dap_msg_report_error_name((uint8_t)i), count[i]);
            sep = ", ";
        }
    }
    printf("}");
}

static void print_head(const uint8_t *body, size_t len)
{
    printf("\"body\": \"");
    for (size_t i = 0; i < len && i < 300; i++) {
        char c = (char)body[i];
        printf("%c", c >= 32 && c < 127 && c != '"' && c != '\\' ? c : '.');
    }
    printf("\"");
}

static int post(coll_https_t *h, const char *url, const char *ctype, const char *token,
                const uint8_t *body, size_t len, uint8_t *out, coll_https_resp_t *r)
{
    coll_https_req_t q = {"POST", url, token, ctype, body, len, 10000, NULL};
    char why[400];
    if (coll_https_request(h, &q, out, CAP, r, why, sizeof(why)) != 0) {
        fprintf(stderr, "tool_dap: %s: %s\n", url, why);
        return -1;
    }
    return 0;
}

static int do_upload(const args_t *a, const dap_task_spec_t *spec, coll_https_t *h, uint8_t *out)
{
    agg_task_t k;
    memset(&k, 0, sizeof(k));
    memcpy(k.id, spec->t.id, sizeof(k.id));
    memcpy(k.config, spec->config, spec->config_len);
    k.config_len = spec->config_len;
    k.hpke[0] = spec->t.leader_hpke;
    k.hpke[1] = spec->t.helper_hpke;
    dpm_dap_task_t t;
    if (agg_task_decode(&k, &t) != DPM_OK || t.vdaf.kind != DPM_PRIO3_SUMVEC) {
        fprintf(stderr, "tool_dap: the first [dap_task] must be a sumvec task\n");
        return 1;
    }
    const uint32_t len = t.vdaf.length;
    const uint64_t maxv = t.vdaf.max_measurement;
    agg_device_t *d = agg_device_new(&k, &t);
    if (d != NULL && a->time != 0) {
        d->wall_s = (int64_t)a->time;
    }
    uint64_t *m = calloc(len, sizeof(*m));
    int64_t *sums = calloc(len, sizeof(*sums));
    uint8_t *req = malloc(CAP);
    if (d == NULL || m == NULL || sums == NULL || req == NULL) {
        return 1;
    }
    char url[600];
    dap_task_url(spec, a->url != NULL ? a->url : spec->leader_url, "reports", url, sizeof(url));
    size_t count[DAP_REPORT_ERROR_MAX + 1] = {0}, kept = 0, rlen = 0, in_req = 0;
    const unsigned long batch = a->batch != 0 ? a->batch : 50;
    printf("{\"status\": [");
    int rc = 0;
    for (unsigned long i = 0; i < a->n && rc == 0; i++) {
        unsigned long dev = a->first + i;
        /* a label-RR task's bins hold pos + neg <= max examples (the device flips labels within
         * a bin): each half of max */
        const uint64_t top = t.local_eps != 0 ? maxv / 2u : maxv;
        for (uint32_t j = 0; j < len; j++) {
            m[j] = (5u * dev + 3u * j) % (top + 1u);
            sums[j] += (int64_t)m[j];
        }
        test_rng_t r;
        test_rng_seed(&r, a->seed * 1000003u + dev);
        const char *why = NULL;
        if (agg_device_sumvec(d, &k, test_rng_port(&r), m, len, &why) != DPM_OK) {
            fprintf(stderr, "tool_dap: device %lu: %s\n", dev, why != NULL ? why : "refused");
            return 1;
        }
        memcpy(req + rlen, d->report, d->report_len);
        rlen += d->report_len;
        in_req++;
        if (in_req < batch && i + 1 < a->n) {
            continue;
        }
        coll_https_resp_t resp;
        if (post(h, url, dap_msg_media_type[DAP_MSG_UPLOAD_REQ], NULL, req, rlen, out, &resp) !=
            0) {
            rc = 1;
            break;
        }
        printf("%s%d", i + 1 > in_req ? ", " : "", resp.status);
        if (resp.status == 200) {
            kept += in_req - count_errors(out, resp.len, count);
        }
        if (a->save != NULL) {
            FILE *f = fopen(a->save, "wb");
            if (f == NULL || fwrite(req, 1, rlen, f) != rlen || fclose(f) != 0) {
                return 1;
            }
        }
        rlen = in_req = 0;
    }
    dpm_dap_report_view_t rv;
    uint64_t start = 0;
    if (dpm_dap_report_decode(d->report, d->report_len, &rv, NULL) == DPM_OK) {
        start = rv.time * t.time_precision; /* the draft's Time counts time_precision units */
    }
    printf("], \"sent\": %lu, \"kept\": %zu, ", a->n, kept);
    print_errors(count);
    printf(", \"batch_start\": %llu, \"time_precision\": %llu, \"sums\": [",
           (unsigned long long)start, (unsigned long long)t.time_precision);
    for (uint32_t j = 0; j < len; j++) {
        printf("%s%lld", j ? ", " : "", (long long)sums[j]);
    }
    printf("]}\n");
    agg_device_free(d);
    free(m);
    free(sums);
    free(req);
    return rc;
}

static int do_post(const args_t *a, const dap_task_spec_t *spec, coll_https_t *h, uint8_t *out)
{
    static const char *const what[] = {"reports", "collection_jobs", "aggregation_jobs",
                                       "aggregate_shares"};
    static const dap_msg_type_t type[] = {DAP_MSG_UPLOAD_REQ, DAP_MSG_COLLECTION_JOB_REQ,
                                          DAP_MSG_AGG_JOB_INIT_REQ, DAP_MSG_AGG_SHARE_REQ};
    size_t w = 0;
    while (w < 4 && strcmp(a->what, what[w]) != 0) {
        w++;
    }
    size_t len = 0;
    uint8_t *body = a->body != NULL ? read_file(a->body, &len) : NULL;
    if (w == 4 || body == NULL) {
        return usage();
    }
    char token[300], url[600];
    const char *tok =
        a->token_file != NULL ? read_token(a->token_file, token, sizeof(token)) : NULL;
    dap_task_url(spec, a->url != NULL ? a->url : spec->leader_url, what[w], url, sizeof(url));
    coll_https_resp_t r;
    int rc = post(h, url, dap_msg_media_type[type[w]], tok, body, len, out, &r);
    if (rc == 0) {
        size_t count[DAP_REPORT_ERROR_MAX + 1] = {0};
        printf("{\"status\": %d, ", r.status);
        if (w == 0 && r.status == 200) {
            count_errors(out, r.len, count);
        }
        print_errors(count);
        printf(", ");
        print_head(out, r.len);
        printf("}\n");
    }
    free(body);
    return rc != 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        return usage();
    }
    args_t a;
    memset(&a, 0, sizeof(a));
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        const char **s = strcmp(k, "--campaigns") == 0    ? &a.campaigns
                         : strcmp(k, "--ca") == 0         ? &a.ca
                         : strcmp(k, "--save") == 0       ? &a.save
                         : strcmp(k, "--what") == 0       ? &a.what
                         : strcmp(k, "--body") == 0       ? &a.body
                         : strcmp(k, "--token-file") == 0 ? &a.token_file
                         : strcmp(k, "--url") == 0        ? &a.url
                                                          : NULL;
        unsigned long *n = strcmp(k, "--n") == 0       ? &a.n
                           : strcmp(k, "--first") == 0 ? &a.first
                           : strcmp(k, "--seed") == 0  ? &a.seed
                           : strcmp(k, "--batch") == 0 ? &a.batch
                           : strcmp(k, "--time") == 0  ? &a.time
                                                       : NULL;
        if (s != NULL) {
            *s = v;
        } else if (n != NULL) {
            *n = strtoul(v, NULL, 10);
        } else {
            return usage();
        }
    }
    if (a.campaigns == NULL || a.ca == NULL) {
        return usage();
    }
    dap_tasks_t *ts = calloc(1, sizeof(*ts));
    char err[600];
    int loaded = ts != NULL && dap_tasks_load(a.campaigns, ts, err, sizeof(err)) == 0;
    if (!loaded || ts->n == 0) {
        fprintf(stderr, "tool_dap: %s\n",
                ts == NULL ? "out of memory"
                : !loaded  ? err
                           : "no [dap_task]");
        free(ts);
        return 2;
    }
    coll_https_t h;
    if (coll_https_init(&h, a.ca, err, sizeof(err)) != 0) {
        fprintf(stderr, "tool_dap: %s\n", err);
        return 2;
    }
    uint8_t *out = malloc(CAP);
    if (out == NULL) {
        return 1;
    }
    int rc = strcmp(argv[1], "upload") == 0 ? do_upload(&a, &ts->t[0], &h, out)
             : strcmp(argv[1], "post") == 0 ? do_post(&a, &ts->t[0], &h, out)
                                            : usage();
    free(out);
    free(ts);
    coll_https_free(&h);
    return rc;
}
