/* SPDX-License-Identifier: Apache-2.0 */
/* `dpm-collector dap-collect` (dap_collect.h). */
#include "collector/ops/dap_collect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aggregator/dap_msg.h"
#include "aggregator/dap_collector.h"
#include "aggregator/dap_tasks.h"
#include "collector/net/https_client.h"
#include "dpm/expert/noise.h"
#include "estimate/central_sum.h"

#define ANSWER_CAP (8u << 20)

static const char USAGE[] =
    "usage: dpm-collector dap-collect --campaigns FILE --collector-key FILE --token-file FILE\n"
    "                                 --ca FILE --start UNIX --duration SECONDS [--task ID]\n"
    "                                 [--confidence C] [--wait-seconds N] [--leader URL]\n"
    "  asks the task's leader for the batch [start, start + duration) (multiples of the\n"
    "  task's time_precision), opens both aggregate shares with the collector's key and prints\n"
    "  the estimate JSON: each released sum with its exact noise interval at confidence C\n"
    "  (default 0.95). A leader still aggregating the batch (202) is asked again for up to N\n"
    "  seconds (default 30). --task: the [dap_task] id when the file has several.\n";

typedef struct {
    const char *campaigns, *key, *token, *ca, *task, *leader;
    unsigned long long start, duration, wait_s;
    double confidence;
    int have_start, have_duration;
} args_t;

static int parse(int argc, char **argv, args_t *a)
{
    memset(a, 0, sizeof(*a));
    a->confidence = 0.95;
    a->wait_s = 30;
    for (int i = 2; i < argc; i += 2) {
        const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (v == NULL) {
            fprintf(stderr, "dpm-collector dap-collect: %s needs a value\n%s", k, USAGE);
            return -1;
        }
        if (strcmp(k, "--campaigns") == 0) {
            a->campaigns = v;
        } else if (strcmp(k, "--collector-key") == 0) {
            a->key = v;
        } else if (strcmp(k, "--token-file") == 0) {
            a->token = v;
        } else if (strcmp(k, "--ca") == 0) {
            a->ca = v;
        } else if (strcmp(k, "--task") == 0) {
            a->task = v;
        } else if (strcmp(k, "--leader") == 0) {
            a->leader = v;
        } else if (strcmp(k, "--start") == 0 || strcmp(k, "--duration") == 0 ||
                   strcmp(k, "--wait-seconds") == 0) {
            unsigned long long x = strtoull(v, &end, 10);
            if (*v < '0' || *v > '9' || *end != '\0') {
                fprintf(stderr, "dpm-collector dap-collect: %s wants an integer, got '%s'\n", k, v);
                return -1;
            }
            if (k[2] == 's') {
                a->start = x;
                a->have_start = 1;
            } else if (k[2] == 'd') {
                a->duration = x;
                a->have_duration = 1;
            } else {
                a->wait_s = x;
            }
        } else if (strcmp(k, "--confidence") == 0) {
            a->confidence = strtod(v, &end);
            if (*end != '\0' || !(a->confidence > 0.0 && a->confidence < 1.0)) {
                fprintf(stderr, "dpm-collector dap-collect: --confidence wants a number in (0, "
                                "1), e.g. 0.95\n");
                return -1;
            }
        } else {
            fprintf(stderr, "dpm-collector dap-collect: unknown option '%s'\n%s", k, USAGE);
            return -1;
        }
    }
    if (!a->campaigns || !a->key || !a->token || !a->ca || !a->have_start || !a->have_duration) {
        fprintf(stderr,
                "dpm-collector dap-collect: --campaigns, --collector-key, --token-file, --ca, "
                "--start and --duration are required\n%s",
                USAGE);
        return -1;
    }
    return 0;
}

static const dap_task_spec_t *pick(const dap_tasks_t *ts, const char *id)
{
    if (id != NULL) {
        const dap_task_spec_t *t = dap_tasks_find(ts, id, strlen(id));
        if (t == NULL) {
            fprintf(stderr, "dpm-collector dap-collect: no [dap_task] with id %s\n", id);
        }
        return t;
    }
    if (ts->n != 1) {
        fprintf(stderr,
                "dpm-collector dap-collect: the file has %zu [dap_task] blocks: name one with "
                "--task ID\n",
                ts->n);
        return NULL;
    }
    return &ts->t[0];
}

static int read_token(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    int ok = f != NULL && fgets(out, (int)cap, f) != NULL;
    if (f != NULL) {
        fclose(f);
    }
    out[ok ? strcspn(out, "\r\n") : 0] = '\0';
    if (!ok || out[0] == '\0') {
        fprintf(stderr,
                "dpm-collector dap-collect: %s: want the collector's token on its first "
                "line\n",
                path);
        return -1;
    }
    return 0;
}

/* The hybrid (a label-RR task): what the sums count, and per score bin the debiased positives
 * and negatives with their sd (the labels' randomization, given the bin's examples, and the
 * aggregators' noise; estimate/roc_central.h debiases the same way). No interval: a bin's
 * randomization is binomial and may have few examples; the roc estimators give the intervals. */
static void print_local(const dap_task_spec_t *t, const int64_t *sums, double noise_var)
{
    dpm_grr_t rr;
    if (t->t.local_eps == 0 || dpm_rr_init(&rr, t->t.local_eps) != DPM_OK) {
        return;
    }
    const double q = (double)rr.other / 4294967296.0, d = 1.0 - 2.0 * q;
    const double cvar = noise_var * ((1.0 - q) * (1.0 - q) + q * q) / (d * d);
    const uint32_t B = t->t.local_bins, n = t->t.vdaf.output_len;
    printf(",\n \"local\": {\"local_eps\": %.6f, \"label_flip\": %.9g, \"bins\": %u,\n"
           "  \"trust_model\": \"local: holds even if both aggregators collude\",\n"
           "  \"privacy_unit\": \"one example's label (randomized response on the device); the "
           "scores, the bins' example counts and the group are not covered\",\n"
           "  \"sums_count\": \"the randomized labels: E[pos'] = (1 - q) pos + q neg per bin\",\n"
           "  \"debiased\": [",
           rr.eps_implemented / 65536.0, q, B);
    for (uint32_t j = 0; j < n; j++) { /* groups x (pos bins, neg bins) */
        const uint32_t g = j / (2u * B), k = j % (2u * B), b = k % B, pos = g * 2u * B + b;
        const double y = (double)sums[pos], v = (double)sums[pos + B];
        const double est = k < B ? ((1.0 - q) * y - q * v) / d : ((1.0 - q) * v - q * y) / d;
        const double var = q * (1.0 - q) / (d * d) * fmax(y + v, 0.0) + cvar;
        printf("%s{\"est\": %.3f, \"sd\": %.3f}", j ? ", " : "", est, sqrt(var));
    }
    printf("]}");
}

static void print_estimate(const dap_task_spec_t *t, const args_t *a, uint64_t count,
                           const int64_t *sums)
{
    const dpm_prio3_t *v = &t->t.vdaf;
    dpm_csum_noise_t law;
    uint64_t k = 0;
    const int gauss = t->t.dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN;
    int have = (gauss ? dpm_csum_noise_init_gauss(&law, t->t.central_sigma2)
                      : dpm_csum_noise_init(&law, t->sensitivity, t->t.central_eps)) == DPM_OK &&
               dpm_csum_halfwidth(&law, a->confidence, &k) == DPM_OK;
    printf("{\"task\": \"%s\", \"vdaf\": \"%s\", \"length\": %u,\n", t->id_b64, t->vdaf,
           v->output_len);
    if (gauss) {
        printf(" \"eps\": %.6f, \"rho\": %.9g, \"delta\": %.3g, \"l2_sensitivity_sq\": %llu, "
               "\"min_batch_size\": %llu,\n",
               t->t.central_eps / 65536.0, t->rho, t->delta, (unsigned long long)t->sensitivity,
               (unsigned long long)t->t.min_batch_size);
    } else {
        printf(" \"eps\": %.6f, \"sensitivity\": %llu, \"min_batch_size\": %llu,\n",
               t->t.central_eps / 65536.0, (unsigned long long)t->sensitivity,
               (unsigned long long)t->t.min_batch_size);
    }
    printf(" \"privacy_unit\": \"one device's report (one per task and app period; a batch over "
           "k of the app's periods holds up to k of a device's reports: k x eps)\",\n");
    printf(" \"trust_model\": \"two aggregators (DAP): each adds %s to its aggregate share; %s "
           "holds while one aggregator is honest, nothing if both collude\",\n",
           gauss ? "discrete Gaussian noise of sigma2 l2_sensitivity_sq / (2 rho), rho-zCDP"
                 : "discrete Laplace noise of scale sensitivity / eps",
           gauss ? "rho-zCDP ((eps, delta)-DP)" : "eps");
    printf(" \"interval\": {\"start\": %llu, \"duration\": %llu}, \"report_count\": %llu,\n",
           a->start, a->duration, (unsigned long long)count);
    printf(" \"sums\": [");
    for (uint32_t j = 0; j < v->output_len; j++) {
        printf("%s%lld", j ? ", " : "", (long long)sums[j]);
    }
    if (gauss) {
        printf("],\n \"noise\": {\"draws\": 2, \"mechanism\": \"discrete_gaussian\", "
               "\"sigma2\": %llu, \"sd\": %.6g},\n",
               (unsigned long long)t->t.central_sigma2, sqrt(law.var));
    } else {
        printf("],\n \"noise\": {\"draws\": 2, \"mechanism\": \"discrete_laplace\", \"scale\": "
               "%.6g, \"sd\": %.6g},\n",
               law.scale, sqrt(law.var));
    }
    printf(" \"confidence\": %.6g, \"halfwidth\": %llu,\n \"ci\": [", a->confidence,
           (unsigned long long)k);
    for (uint32_t j = 0; j < v->output_len; j++) {
        printf("%s[%lld, %lld]", j ? ", " : "", (long long)(sums[j] - (int64_t)k),
               (long long)(sums[j] + (int64_t)k));
    }
    printf("],\n \"ci_method\": \"%s\"",
           have ? "exact: the smallest K with Pr[|Z1 + Z2| <= K] >= confidence under the two "
                  "draws' law; it covers the batch's own exact sum (a DAP batch is every report "
                  "it counts: no sampling term)"
                : "none: the noise's law could not be computed");
    print_local(t, sums, law.var);
    printf("}\n");
}

int coll_dap_collect_main(int argc, char **argv)
{
    args_t a;
    if (parse(argc, argv, &a) != 0) {
        return 2;
    }
    char err[600], token[300];
    dap_tasks_t *ts = calloc(1, sizeof(*ts));
    if (ts == NULL || dap_tasks_load(a.campaigns, ts, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-collector dap-collect: %s\n", ts == NULL ? "out of memory" : err);
        free(ts);
        return 2;
    }
    const dap_task_spec_t *t = pick(ts, a.task);
    dpm_dap_hpke_key_t key;
    dpm_hpke_config_t cfg;
    coll_https_t h;
    int rc = 2, https_ready = 0;
    uint8_t req[256], *out = malloc(ANSWER_CAP);
    int64_t *sums = NULL;
    size_t rlen = 0;
    if (t == NULL || out == NULL || read_token(a.token, token, sizeof(token)) != 0) {
        goto done;
    }
    if (dap_key_load(a.key, &key, &cfg, err, sizeof(err)) != 0 ||
        dap_collector_request(t, a.start, a.duration, req, sizeof(req), &rlen, err, sizeof(err)) !=
            0 ||
        coll_https_init(&h, a.ca, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-collector dap-collect: %s\n", err);
        goto done;
    }
    https_ready = 1;
    if (!dap_hpke_config_same(&cfg, &t->collector)) {
        fprintf(stderr,
                "dpm-collector dap-collect: %s is not the task's collector_hpke_config "
                "key: the shares are sealed to that one (give --collector-key the file "
                "dpm-collector dap-keygen wrote when it printed that config)\n",
                a.key);
        goto done;
    }
    char url[DPM_DAP_MAX_URL + 128];
    dap_task_url(t, a.leader != NULL ? a.leader : t->leader_url, "collection_jobs", url,
                 sizeof(url));
    coll_https_req_t q = {"POST", url,  token, dap_msg_media_type[DAP_MSG_COLLECTION_JOB_REQ],
                          req,    rlen, 10000, NULL};
    coll_https_resp_t r;
    rc = 1;
    for (unsigned long long waited_ms = 0;; waited_ms += 500) {
        if (coll_https_request(&h, &q, out, ANSWER_CAP, &r, err, sizeof(err)) != 0) {
            fprintf(stderr, "dpm-collector dap-collect: %s: %s\n", url, err);
            goto done;
        }
        if (r.status != 202 || waited_ms >= a.wait_s * 1000u) {
            break;
        }
        struct timespec pause = {0, 500000000L};
        nanosleep(&pause, NULL);
    }
    if (r.status != 200) {
        fprintf(stderr, "dpm-collector dap-collect: the leader answered %d%s: %.*s\n", r.status,
                r.status == 202 ? " (the batch is still being aggregated: run again later)" : "",
                (int)(r.len < 400 ? r.len : 400), (const char *)out);
        goto done;
    }
    uint64_t count = 0;
    sums = calloc(t->t.vdaf.output_len, sizeof(*sums));
    if (sums == NULL ||
        dap_collector_open(t, &key, req, rlen, out, r.len, &count, sums, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-collector dap-collect: %s\n", sums == NULL ? "out of memory" : err);
        goto done;
    }
    print_estimate(t, &a, count, sums);
    rc = 0;
done:
    if (https_ready) {
        coll_https_free(&h);
    }
    memset(&key, 0, sizeof(key));
    memset(token, 0, sizeof(token));
    free(sums);
    free(out);
    free(ts);
    return rc;
}
