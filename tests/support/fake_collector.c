/* SPDX-License-Identifier: Apache-2.0 */
#include "fake_collector.h"

#include <stdio.h>
#include <string.h>

#include "dpm/expert/batch.h"
#include "dpm/expert/report.h"

static uint64_t clock_now(void *ctx)
{
    fake_clock_t *c = ctx;
    uint64_t t = c->now;
    c->now += c->step;
    c->reads++;
    return t;
}

dpm_clock_t fake_clock_port(fake_clock_t *c)
{
    dpm_clock_t k = {clock_now, NULL, c};
    return k;
}

void fake_collector_init(fake_collector_t *fc, const char *host, const char *path)
{
    memset(fc, 0, sizeof(*fc));
    fc->host = host;
    fc->path = path;
    fc->after = FC_OK;
}

void fake_collector_reconnect(fake_collector_t *fc)
{
    fc->dead = 0;
    fc->silent = 0;
    fc->close_after = 0;
    fc->req_len = 0;
    fc->resp_len = 0;
    fc->resp_pos = 0;
    fc->reconnects++;
}

static void fail(fake_collector_t *fc, const char *why)
{
    if (!fc->fatal) {
        fc->fatal = 1;
        snprintf(fc->why, sizeof(fc->why), "%s", why);
    }
    fc->dead = 1;
}

const fc_report_t *fake_collector_find(const fake_collector_t *fc, const uint8_t *id)
{
    for (size_t i = 0; i < fc->nstored; i++) {
        if (memcmp(fc->stored[i].id, id, DPM_REPORT_ID_BYTES) == 0) {
            return &fc->stored[i];
        }
    }
    return NULL;
}

int fake_collector_was_rejected(const fake_collector_t *fc, const uint8_t *id)
{
    for (size_t i = 0; i < fc->nrejected; i++) {
        if (memcmp(fc->rejected[i].id, id, DPM_REPORT_ID_BYTES) == 0) {
            return 1;
        }
    }
    return 0;
}

static fc_action_t next_action(fake_collector_t *fc)
{
    if (fc->script_pos < fc->script_len) {
        return fc->script[fc->script_pos++];
    }
    if (fc->cycle && fc->script_len > 0) {
        fc->script_pos = 1;
        return fc->script[0];
    }
    return fc->after;
}

static void respond(fake_collector_t *fc, const char *head, const uint8_t *body, size_t len)
{
    /* %lu, not %zu: newlib as Debian builds it for Cortex-M has no C99 length modifiers */
    int n = snprintf((char *)fc->resp, sizeof(fc->resp), "%sContent-Length: %lu\r\n\r\n", head,
                     (unsigned long)len);
    if (n < 0 || (size_t)n + len > sizeof(fc->resp)) {
        fail(fc, "response too large for the fake");
        return;
    }
    if (len > 0) {
        memcpy(fc->resp + n, body, len);
    }
    fc->resp_len = (size_t)n + len;
    fc->resp_pos = 0;
}

/* A GET /v1/campaigns/<id> head (complete, without a body): answer it from the table. */
static void answer_campaign_get(fake_collector_t *fc, const char *head)
{
    unsigned long id = 0;
    char line[256];
    snprintf(line, sizeof(line), "\r\nHost: %s\r\n", fc->host);
    if (sscanf(head, "GET /v1/campaigns/%lu HTTP/1.1\r\n", &id) != 1 ||
        strstr(head, line) == NULL ||
        strstr(head, "\r\nAccept: application/x-protobuf\r\n") == NULL) {
        fail(fc, "bad campaign request");
        return;
    }
    fc->requests++;
    fc->campaign_gets++;
    uint32_t serve = fc->answer_with != 0 ? fc->answer_with : (uint32_t)id;
    for (size_t i = 0; i < fc->ncampaigns; i++) {
        if (fc->campaigns[i].id == serve) {
            uint8_t body[DPM_CAMPAIGN_MAX_BYTES];
            size_t n = 0;
            if (dpm_campaign_encode(&fc->campaigns[i], body, sizeof(body), &n) != DPM_OK) {
                fail(fc, "cannot encode a campaign of the table");
                return;
            }
            respond(fc, "HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n", body, n);
            return;
        }
    }
    respond(fc, "HTTP/1.1 404 Not Found\r\n", NULL, 0);
}

/* Parse the head; returns its length (through \r\n\r\n) and the Content-Length, or 0 while
 * incomplete (or when it was a campaign GET, answered here). A malformed head is fatal. */
static size_t parse_head(fake_collector_t *fc, size_t *content_length)
{
    const char *r = (const char *)fc->req;
    size_t end = 0;
    for (size_t i = 0; i + 3 < fc->req_len; i++) {
        if (memcmp(r + i, "\r\n\r\n", 4) == 0) {
            end = i + 4;
            break;
        }
    }
    if (end == 0) {
        return 0;
    }
    char head[2048];
    if (end >= sizeof(head)) {
        fail(fc, "request head too long");
        return 0;
    }
    memcpy(head, r, end);
    head[end] = '\0';
    if (strncmp(head, "GET ", 4) == 0) {
        if (fc->req_len > end) {
            fail(fc, "bytes after a GET request");
            return 0;
        }
        fc->req_len = 0; /* the whole request: no body */
        answer_campaign_get(fc, head);
        return 0;
    }
    char line[512];
    snprintf(line, sizeof(line), "POST %s HTTP/1.1\r\n", fc->path);
    if (strncmp(head, line, strlen(line)) != 0) {
        fail(fc, "bad request line");
        return 0;
    }
    snprintf(line, sizeof(line), "\r\nHost: %s\r\n", fc->host);
    int host = strstr(head, line) != NULL;
    int ctype = strstr(head, "\r\nContent-Type: application/x-protobuf\r\n") != NULL;
    int keep = strstr(head, "\r\nConnection: keep-alive\r\n") != NULL;
    const char *cl = strstr(head, "\r\nContent-Length: ");
    unsigned long v = 0;
    if (!host || !ctype || !keep || cl == NULL || sscanf(cl + 18, "%lu", &v) != 1) {
        fail(fc, "missing or wrong request header");
        return 0;
    }
    fc->authorization[0] = '\0';
    const char *auth = strstr(head, "\r\nAuthorization: ");
    if (auth != NULL) {
        auth += 17;
        size_t n = strcspn(auth, "\r");
        if (n >= sizeof(fc->authorization) || strstr(auth, "\r\nAuthorization: ") != NULL) {
            fail(fc, "Authorization too long or repeated");
            return 0;
        }
        memcpy(fc->authorization, auth, n);
        fc->authorization[n] = '\0';
    }
    *content_length = (size_t)v;
    return end;
}

/* The answer being built: BatchResponse's counts and its rejects (encoded with dpm/expert/batch.h). */
typedef struct {
    uint32_t accepted, duplicates;
    size_t rejects_count;
    struct {
        uint8_t id[DPM_REPORT_ID_BYTES];
        char reason[48];
    } rejects[8];
} fc_answer_t;

static void store(fake_collector_t *fc, const dpm_report_t *rep, const uint8_t *bytes, size_t len,
                  int reject, fc_answer_t *br)
{
    fc_report_t *list = reject ? fc->rejected : fc->stored;
    size_t *n = reject ? &fc->nrejected : &fc->nstored;
    for (size_t i = 0; i < *n; i++) {
        if (memcmp(list[i].id, rep->report_id, DPM_REPORT_ID_BYTES) == 0) {
            if (list[i].len != len || memcmp(list[i].bytes, bytes, len) != 0) {
                fail(fc, "an id arrived again with different bytes");
            }
            list[i].received++;
            fc->duplicates++;
            br->duplicates += reject ? 0 : 1;
            goto answer;
        }
    }
    if (*n == FC_MAX_REPORTS || len > DPM_REPORT_MAX_BYTES) {
        fail(fc, "fake collector full");
        return;
    }
    fc_report_t *s = &list[(*n)++];
    memcpy(s->id, rep->report_id, DPM_REPORT_ID_BYTES);
    s->campaign = rep->campaign_id;
    s->period = rep->period;
    s->eps = rep->eps;
    memcpy(s->bytes, bytes, len);
    s->len = len;
    s->received = 1;
    br->accepted += reject ? 0 : 1;
answer:
    if (reject && br->rejects_count < 8) {
        memcpy(br->rejects[br->rejects_count].id, rep->report_id, DPM_REPORT_ID_BYTES);
        char *reason = br->rejects[br->rejects_count++].reason;
        if (fc->reject_reason != NULL) {
            snprintf(reason, sizeof(br->rejects[0].reason), "%s", fc->reject_reason);
        } else {
            snprintf(reason, sizeof(br->rejects[0].reason), "campaign %u is closed",
                     (unsigned)rep->campaign_id);
        }
    }
}

/* Decode the Batch and store it; *lost = its lost_reports. Returns the number of rejected
 * reports. */
static size_t take_batch(fake_collector_t *fc, const uint8_t *body, size_t len, fc_answer_t *br,
                         uint64_t *lost)
{
    size_t i = 0;
    int seen_lost = 0;
    *lost = 0;
    while (i < len && !fc->fatal) {
        dpm_wire_field_t f; /* strict: only the two fields, lost_reports once and last */
        if (dpm_wire_next_field(body, len, &i, &f, NULL) != DPM_OK) {
            fail(fc, "body is not a Batch");
            return 0;
        }
        if (f.field == DPM_BATCH_FIELD_LOST && f.type == DPM_WIRE_VARINT) {
            *lost = f.value;
            if (seen_lost || *lost == 0 || *lost > UINT32_MAX || i != len ||
                br->accepted + br->duplicates + br->rejects_count == 0) {
                fail(fc, "bad Batch.lost_reports");
                return 0;
            }
            seen_lost = 1;
            fc->lost_seen += *lost;
            continue;
        }
        if (f.field != DPM_BATCH_FIELD_REPORT || f.type != DPM_WIRE_LEN) {
            fail(fc, "body is not a Batch of reports");
            return 0;
        }
        dpm_report_t rep;
        if (dpm_report_decode(f.bytes, f.len, &rep) != DPM_OK) {
            fail(fc, "a report in the batch does not decode");
            return 0;
        }
        int reject = fc->reject_campaign != 0 && rep.campaign_id == fc->reject_campaign;
        store(fc, &rep, f.bytes, f.len, reject, br);
    }
    return br->rejects_count;
}

/* 1 if the request carries the bearer token the collector wants (or it wants none). */
static int authorized(const fake_collector_t *fc)
{
    return fc->token == NULL || (strncmp(fc->authorization, "Bearer ", 7) == 0 &&
                                 strcmp(fc->authorization + 7, fc->token) == 0);
}

/* A text answer that closes the connection (dpm-collector's answers before reading a body). */
static void refuse(fake_collector_t *fc, const char *status_line, const char *extra,
                   const char *text)
{
    char head[256];
    snprintf(head, sizeof(head), "%sContent-Type: text/plain\r\nConnection: close\r\n%s",
             status_line, extra != NULL ? extra : "");
    respond(fc, head, (const uint8_t *)text, strlen(text));
    fc->close_after = 1;
}

static void handle(fake_collector_t *fc, const uint8_t *body, size_t len)
{
    fc->requests++;
    if (!authorized(fc)) {
        fc->unauthorized++;
        refuse(fc, "HTTP/1.1 401 Unauthorized\r\n",
               "WWW-Authenticate: Bearer realm=\"dpm-collector\"\r\n",
               fc->authorization[0] ? "unknown credential\n"
                                    : "a device credential is required (client certificate or "
                                      "bearer token)\n");
        return;
    }
    if (fc->max_body != 0 && len > fc->max_body) {
        fc->too_large++;
        refuse(fc, "HTTP/1.1 413 Content Too Large\r\n", NULL, "request body too large\n");
        return;
    }
    fc_action_t a = next_action(fc);
    fc->last = a;
    fc_answer_t br;
    memset(&br, 0, sizeof(br));
    uint8_t out[1024];
    size_t out_len = 0;
    uint64_t lost = 0;
    static const uint8_t garbage[] = {0x08, 0x01, 0xFF}; /* accepted = 1, then a broken key */
    switch (a) {
    case FC_DROP_BEFORE: fc->dead = 1; return;
    case FC_TIMEOUT: fc->silent = 1; return;
    case FC_503: respond(fc, "HTTP/1.1 503 Service Unavailable\r\n", NULL, 0); return;
    case FC_BAD_400: respond(fc, "HTTP/1.1 400 Bad Request\r\n", NULL, 0); return;
    case FC_EMPTY_200: respond(fc, "HTTP/1.1 200 OK\r\n", NULL, 0); return;
    case FC_STATUS: {
        char line[300];
        snprintf(line, sizeof(line), "HTTP/1.1 %d Scripted\r\nContent-Type: text/plain\r\n%s%s",
                 fc->status, fc->status_close ? "Connection: close\r\n" : "",
                 fc->extra != NULL ? fc->extra : "");
        static const char text[] = "scripted answer\n";
        respond(fc, line, (const uint8_t *)text, sizeof(text) - 1);
        fc->close_after = fc->status_close;
        return;
    }
    case FC_GARBAGE_200: respond(fc, "HTTP/1.1 200 OK\r\n", garbage, sizeof(garbage)); return;
    case FC_RAW: {
        char line[120];
        snprintf(line, sizeof(line),
                 "HTTP/1.1 %d Scripted\r\nContent-Type: application/x-protobuf\r\n", fc->status);
        respond(fc, line, fc->raw, fc->raw_len);
        return;
    }
    case FC_CHUNKED:
        take_batch(fc, body, len, &br, &lost);
        snprintf((char *)fc->resp, sizeof(fc->resp),
                 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
        fc->resp_len = strlen((char *)fc->resp);
        fc->resp_pos = 0;
        return;
    case FC_OK:
    case FC_CLOSE_OK:
    case FC_SHORT_200:
    case FC_DROP_AFTER_STORE: break;
    }
    size_t rejected = take_batch(fc, body, len, &br, &lost);
    if (fc->fatal) {
        return;
    }
    if (a == FC_SHORT_200 && !rejected) {
        if (br.accepted > 0) {
            br.accepted--;
        } else if (br.duplicates > 0) {
            br.duplicates--;
        }
    }
    if (!rejected && (a == FC_OK || a == FC_CLOSE_OK)) {
        fc->lost_reports += lost; /* acknowledged with a valid 200: its losses are counted */
    }
    if (a == FC_DROP_AFTER_STORE) {
        fc->dead = 1;
        return;
    }
    dpm_status_t st =
        dpm_batch_response_put_counts(out, sizeof(out), &out_len, br.accepted, br.duplicates);
    for (size_t k = 0; k < br.rejects_count && st == DPM_OK; k++) {
        st = dpm_batch_response_put_reject(out, sizeof(out), &out_len, br.rejects[k].id,
                                           DPM_REPORT_ID_BYTES, br.rejects[k].reason,
                                           strlen(br.rejects[k].reason));
    }
    if (st != DPM_OK) {
        fail(fc, "cannot encode BatchResponse");
        return;
    }
    char head[160];
    int status = rejected ? (fc->reject_status != 0 ? fc->reject_status : 400) : 200;
    snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\nContent-Type: application/x-protobuf\r\n%s",
             status, status == 200 ? "OK" : "Rejected",
             a == FC_CLOSE_OK ? "Connection: close\r\n" : "");
    fc->close_after = a == FC_CLOSE_OK;
    respond(fc, head, out, out_len);
}

static int32_t fc_send(void *ctx, const uint8_t *buf, size_t len)
{
    fake_collector_t *fc = ctx;
    if (fc->dead) {
        return -1;
    }
    if (fc->resp_pos < fc->resp_len || fc->silent) {
        fail(fc, "a new request before the previous response was read");
        return -1;
    }
    size_t n = len;
    if (fc->send_max != 0 && n > fc->send_max) {
        n = fc->send_max;
    }
    if (n > sizeof(fc->req) - fc->req_len) {
        fail(fc, "request too large");
        return -1;
    }
    memcpy(fc->req + fc->req_len, buf, n);
    fc->req_len += n;
    size_t cl = 0;
    size_t head = parse_head(fc, &cl);
    if (fc->fatal) {
        return -1;
    }
    if (head != 0 && fc->req_len >= head + cl) {
        if (fc->req_len > head + cl) {
            fail(fc, "bytes after the request body");
            return -1;
        }
        uint8_t body[8192];
        memcpy(body, fc->req + head, cl);
        fc->req_len = 0;
        handle(fc, body, cl);
    }
    return (int32_t)n;
}

static int32_t fc_recv(void *ctx, uint8_t *buf, size_t len)
{
    fake_collector_t *fc = ctx;
    if (fc->dead) {
        return -1;
    }
    if (fc->silent || fc->resp_pos >= fc->resp_len) {
        return 0;
    }
    size_t n = fc->resp_len - fc->resp_pos;
    if (n > len) {
        n = len;
    }
    if (fc->recv_max != 0 && n > fc->recv_max) {
        n = fc->recv_max;
    }
    memcpy(buf, fc->resp + fc->resp_pos, n);
    fc->resp_pos += n;
    if (fc->resp_pos == fc->resp_len) {
        fc->resp_len = fc->resp_pos = 0;
        if (fc->close_after) {
            fc->dead = 1;
        }
    }
    return (int32_t)n;
}

dpm_transport_t fake_collector_port(fake_collector_t *fc)
{
    dpm_transport_t t = {fc_send, fc_recv, fc};
    return t;
}
