/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target for the collector's request path, without sockets or SQLite:
 *   1. the input as the decrypted byte stream of one connection, fed to the HTTP state machine
 *      (coll_conn_t) whole and again in input-dependent chunks: head parsing, limits, 100-
 *      continue, pipelining, routing, Batch decoding, report validation, BatchResponse,
 *      estimate queries and JSON, /metrics (the stub store below, without a database, feeds
 *      accepted reports into in-memory sums, whatever period the query asks for);
 *   2. the input as a POST body: coll_batch_decode + coll_batch_response directly;
 *   3. the input as a request head (http_parse_head) and as a campaigns file.
 * Every response the state machine emits must be a well-formed HTTP/1.1 status line.
 * Build and run: .make/fuzz.sh (clang -fsanitize=fuzzer,address,undefined). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collector/ingest/aggregate.h"
#include "collector/ingest/batch.h"
#include "collector/ingest/campaigns.h"
#include "collector/net/conn.h"
#include "collector/ingest/http.h"
#include "collector/api/request.h"

/* The campaigns of tests/e2e/test_collector.py that the seed corpus's reports belong to. */
static const char CAMPAIGNS[] = "[campaign]\nid = 171\nmechanism = tuple_mr\neps = 1\n"
                                "groups = 4\nmetrics = tpr\n"
                                "[campaign]\nid = 182\nmechanism = tuple_ml\neps = 1\n"
                                "budget = 2\ngroups = 5\nmetrics = tpr, fpr\n";

static coll_campaigns_t *g_campaigns;
static coll_aggregates_t *g_agg;
static coll_app_t g_app;

/* The store without SQLite: every valid report is new; counts go to the real aggregates. */
static int stub_commit(void *ctx, coll_batch_t *b)
{
    (void)ctx;
    coll_agg_lock(g_agg);
    b->accepted = 0;
    b->duplicates = 0;
    if (b->rejects_total == 0) {
        for (size_t i = 0; i < b->nreports; i++) {
            coll_report_t *r = &b->reports[i];
            r->is_new = 1;
            if (coll_agg_add_batch_report_locked(g_agg, r) != 0) {
                abort(); /* validation let through a report the aggregates cannot take */
            }
            b->accepted++;
        }
    }
    for (size_t i = 0; i < b->ncounts; i++) {
        coll_agg_count_reject_locked(g_agg, b->counts[i].campaign_id, b->counts[i].reason,
                                     b->counts[i].count);
    }
    coll_agg_unlock(g_agg);
    return 0;
}

static int stub_read(void *ctx, int ci, uint32_t from, uint32_t to, coll_campaign_state_t *out,
                     coll_totals_t *totals, char *err, size_t cap)
{
    (void)ctx;
    (void)from;
    (void)to;
    (void)err;
    (void)cap;
    coll_agg_snapshot(g_agg, ci, out, totals);
    return 0;
}

static int check_emit(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    if (len < 12 || memcmp(buf, "HTTP/1.1 ", 9) != 0 || buf[9] < '1' || buf[9] > '5') {
        abort();
    }
    return 0;
}

static void init(void)
{
    g_campaigns = calloc(1, sizeof(*g_campaigns));
    g_agg = calloc(1, sizeof(*g_agg));
    char err[256];
    if (g_campaigns == NULL || g_agg == NULL ||
        coll_campaigns_parse(CAMPAIGNS, sizeof(CAMPAIGNS) - 1, g_campaigns, err, sizeof(err)) ||
        coll_agg_init(g_agg, g_campaigns) != 0) {
        abort();
    }
    g_app.campaigns = g_campaigns;
    g_app.sink.commit = stub_commit;
    g_app.sink.read = stub_read;
    g_app.sink.ctx = NULL;
    g_app.max_body = 65536;
    g_app.allow_anonymous = 1; /* reach batch decoding without credentials */
    g_app.public_estimates = 1;
}

static void run_stream(const uint8_t *data, size_t size, int chunked)
{
    coll_conn_t *c = malloc(sizeof(*c));
    if (c == NULL) {
        return;
    }
    coll_conn_init(c, &g_app, NULL, check_emit, NULL);
    size_t pos = 0;
    uint32_t h = 2166136261u;
    while (pos < size && c->state != COLL_CONN_CLOSED) {
        size_t n = size - pos;
        if (chunked) {
            h = (h ^ data[pos]) * 16777619u; /* chunk sizes 1..61 picked by the input itself */
            n = n < 1 + h % 61 ? n : 1 + h % 61;
        }
        size_t used = coll_conn_feed(c, data + pos, n);
        if (used > n || (used < n && c->state != COLL_CONN_CLOSED)) {
            abort(); /* must consume everything unless it closed */
        }
        pos += used;
    }
    if (coll_conn_mid_request(c)) {
        coll_conn_timeout(c);
    }
    coll_conn_free(c);
    free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_campaigns == NULL) {
        init();
    }
    run_stream(data, size, 0);
    run_stream(data, size, 1);

    coll_batch_t b;
    memset(&b, 0, sizeof(b));
    if (coll_batch_decode(g_campaigns, data, size, 0, &b) == 0) {
        int st = coll_batch_status(&b);
        if (st != 200 && st != 400 && st != 404) {
            abort();
        }
        uint8_t *out = NULL;
        size_t n = 0;
        if (coll_batch_response(&b, &out, &n) == 0) {
            free(out);
        }
    }
    coll_batch_free(&b);

    if (size <= HTTP_MAX_HEAD) {
        http_request_t req;
        char *head = malloc(size + 1);
        if (head != NULL) {
            memcpy(head, data, size);
            size_t end = http_head_end(head, size);
            if (end > 0) {
                http_parse_head(head, end, &req);
            }
            free(head);
        }
    }
    if (size < 4096) {
        static coll_campaigns_t cs; /* large: not on the stack */
        char err[256];
        coll_campaigns_parse((const char *)data, size, &cs, err, sizeof(err));
    }
    return 0;
}
