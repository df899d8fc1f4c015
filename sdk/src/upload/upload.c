/* SPDX-License-Identifier: Apache-2.0 */
/* dpm_upload_flush: batches from the outbox (with the count of lost reports), one POST per
 * batch (with the bearer token, if any), removal only when a BatchResponse accounts for the
 * reports or rejects them by id (returned to the app with the reasons); both messages go
 * through the SDK's one codec (dpm/expert/batch.h),
 * HTTP statuses mapped to what the app should do (dpm_upload_advice), exponential backoff with
 * jitter on the port's monotonic clock. */
#include "dpm_internal.h"

#include "dpm/expert/batch.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/http.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/outbox.h"
#include "report/batch_internal.h"
#include "upload/http_internal.h"
#include "upload/outbox_internal.h"

/* The longest Batch.lost_reports field: its tag and a 32-bit varint (dpm_batch_lost_len). */
#define LOST_FIELD_MAX 6u
/* A Reject.reason the device keeps: 47 bytes and a NUL (dpm.options; longer is refused). */
#define REASON_CAP 48u
/* The largest report's Batch field is 3 + DPM_REPORT_MAX_BYTES (a two-byte length), as
 * DPM_UPLOAD_MIN_WORK counts it. */
typedef char frame_in_min_work[DPM_REPORT_MAX_BYTES < (1u << 14) ? 1 : -1];

static int config_ok(const dpm_upload_config_t *cfg)
{
    return cfg != NULL && dpm_http_host_ok(cfg->host) && dpm_http_path_ok(cfg->path) &&
           (cfg->token == NULL || dpm_http_token_ok(cfg->token)) && cfg->max_reports >= 1 &&
           cfg->max_reports <= DPM_UPLOAD_MAX_BATCH && cfg->max_bytes >= 1 &&
           cfg->timeout_ms >= 1 && cfg->backoff_base_ms >= 1 &&
           cfg->backoff_cap_ms >= cfg->backoff_base_ms;
}

dpm_status_t dpm_upload_init(dpm_upload_t *up, const dpm_upload_config_t *cfg)
{
    if (up == NULL || !config_ok(cfg)) {
        return DPM_ERR_PARAM;
    }
    memset(up, 0, sizeof(*up));
    up->cfg = *cfg;
    up->opened = DPM_UPLOAD_OPENED;
    return DPM_OK;
}

uint64_t dpm_upload_next_attempt_ms(const dpm_upload_t *up)
{
    return up != NULL ? up->next_attempt_ms : 0;
}

dpm_status_t dpm_upload_backoff_ms(const dpm_upload_config_t *cfg, uint32_t failures,
                                   dpm_rand_t *rand, uint32_t *delay_ms)
{
    if (!config_ok(cfg) || failures == 0 || delay_ms == NULL) {
        return DPM_ERR_PARAM;
    }
    uint64_t d = cfg->backoff_base_ms;
    for (uint32_t i = 1; i < failures && d < cfg->backoff_cap_ms; i++) {
        d <<= 1; /* d < cap < 2^32 before the shift: no overflow in 64 bits */
    }
    if (d > cfg->backoff_cap_ms) {
        d = cfg->backoff_cap_ms;
    }
    uint64_t out = d;
    uint64_t u = 0;
    if (rand != NULL && dpm_uniform(rand, d + 1u, &u) == DPM_OK) {
        out = d / 2u + u; /* in [d/2, d/2 + d]: the nominal delay ±50% */
    }
    *delay_ms = out > UINT32_MAX ? UINT32_MAX : (uint32_t)out;
    return DPM_OK;
}

/* ---- batches ----------------------------------------------------------------------------- */

typedef struct {
    dpm_outbox_entry_t e[DPM_UPLOAD_MAX_BATCH];
    uint8_t gone[DPM_UPLOAD_MAX_BATCH]; /* removed while handling the response */
    uint32_t count;
    uint32_t lost;     /* Batch.lost_reports: the outbox's unacknowledged losses */
    uint32_t body_len; /* bytes of the Batch message */
} batch_t;

/* The first pending records, up to the configured count and bytes and to what fits in the
 * work buffer after the longest possible request head (`room` bytes, LOST_FIELD_MAX of them
 * kept for the loss count). A batch with reports carries the loss count too: only its answer
 * can prove that a collector took it (see dpm_upload_flush). */
static dpm_status_t collect(const dpm_upload_t *up, dpm_outbox_t *ob, size_t room, batch_t *b)
{
    uint32_t cursor = 0;
    b->count = 0;
    b->lost = 0;
    b->body_len = 0;
    room -= LOST_FIELD_MAX; /* room >= the largest report's frame + LOST_FIELD_MAX (flush) */
    while (b->count < up->cfg.max_reports) {
        dpm_outbox_entry_t e;
        int found = 0;
        dpm_status_t st = dpm_outbox_next(ob, &cursor, &e, &found);
        if (st != DPM_OK) {
            return st;
        }
        if (!found) {
            break;
        }
        size_t frame = dpm_batch_frame_len(e.len);
        if ((uint64_t)b->body_len + frame > room) {
            if (b->count == 0) {
                return DPM_ERR_BUFFER; /* not even one report fits the work buffer */
            }
            break;
        }
        if (b->count > 0 && (uint64_t)b->body_len + frame > up->cfg.max_bytes) {
            break;
        }
        b->gone[b->count] = 0;
        b->e[b->count++] = e;
        b->body_len += (uint32_t)frame; /* <= room: a work buffer's size */
    }
    dpm_outbox_stats_t stats;
    dpm_status_t st = dpm_outbox_stats(ob, &stats);
    if (st == DPM_OK && b->count > 0 && stats.lost > 0) {
        b->lost = stats.lost;
        b->body_len += (uint32_t)dpm_batch_lost_len(stats.lost);
    }
    return st;
}

/* Campaign id and period of a stored report: its fields 2 and 3 (varints, absent when 0),
 * which dpm_report_encode writes after the id. */
static void peek_header(const uint8_t *p, size_t n, uint32_t *campaign, uint32_t *period)
{
    size_t i = 0;
    dpm_wire_field_t f;
    *campaign = 0;
    *period = 0;
    while (i < n && dpm_wire_field_read(p, n, &i, &f) == 0 && f.field <= 3u) {
        if (f.type == DPM_WIRE_VARINT && (f.field == 2u || f.field == 3u)) {
            *(f.field == 2u ? campaign : period) = (uint32_t)f.value;
        }
    }
}

/* Build the request in work (head, then each stored report as a Batch field), send it, and
 * read the response; its body lands in work. The head, which carries the token, is wiped from
 * work once sent (or once the request could not be built). */
static dpm_status_t exchange(const dpm_upload_t *up, dpm_outbox_t *ob, const dpm_transport_t *t,
                             const dpm_clock_t *c, uint8_t *work, size_t work_cap, const batch_t *b,
                             dpm_http_response_t *resp, int *sent)
{
    size_t pos = 0;
    dpm_status_t st = dpm_http_write_post(work, work_cap, up->cfg.host, up->cfg.path, up->cfg.token,
                                          b->body_len, &pos);
    size_t head_len = st == DPM_OK ? pos : 0;
    for (uint32_t i = 0; i < b->count && st == DPM_OK; i++) {
        st = dpm_batch_put_report_head(work, work_cap, &pos, b->e[i].len);
        if (st == DPM_OK) { /* the report's bytes straight from the outbox, after its head */
            st = dpm_outbox_read(ob, &b->e[i], work + pos, work_cap - pos);
            pos += b->e[i].len;
        }
    }
    if (st == DPM_OK) {
        st = dpm_batch_put_lost(work, work_cap, &pos, b->lost);
    }
    if (st != DPM_OK) {
        memset(work, 0, head_len);
        return st; /* nothing was sent */
    }
    *sent = 1;
    uint64_t deadline = c->monotonic_ms(c->ctx) + up->cfg.timeout_ms;
    st = dpm_http_send_all(t, c, deadline, work, pos);
    memset(work, 0, head_len);
    if (st == DPM_OK) {
        st = dpm_http_response_init(resp, work, work_cap);
    }
    if (st == DPM_OK) {
        st = dpm_http_read_response(t, c, deadline, resp);
    }
    return st;
}

/* ---- dpm.v1.BatchResponse ---------------------------------------------------------------- */

/* What the device keeps of a BatchResponse, read by dpm_batch_response_read (the codec's
 * dpm_batch_response_decode without its reason text, which the uploader never shows): the counts,
 * and for each batch entry whether a reject names it (hit[k]; the first one counts) and that
 * reject's reason. Rejects are bounded as nanopb's generated BatchResponse bounded
 * them (dpm.options): at most DPM_UPLOAD_MAX_BATCH, ids of at most 16 bytes, reasons of at
 * most 47; more is "not a collector's account of the batch". */
typedef struct {
    const batch_t *b;
    uint32_t accepted, duplicates;
    uint32_t nrejects;
    uint8_t hit[DPM_UPLOAD_MAX_BATCH];
    char reason[DPM_UPLOAD_MAX_BATCH][REASON_CAP];
} answer_t;

/* A reject within those bounds is kept; NULL to go on, else why not (more rejects than a batch
 * holds, an id longer than a report id or a reason longer than 47 bytes: one text for the
 * three, since the uploader refuses the answer without showing it). */
static const char *take_reject(void *ctx, const uint8_t *id, size_t id_len, const uint8_t *reason,
                               size_t reason_len)
{
    answer_t *a = ctx;
    if (a->nrejects >= DPM_UPLOAD_MAX_BATCH || id_len > DPM_REPORT_ID_BYTES ||
        reason_len >= REASON_CAP) {
        return "Reject over bounds";
    }
    a->nrejects++;
    for (uint32_t k = 0; k < a->b->count && id_len == DPM_REPORT_ID_BYTES; k++) {
        if (a->hit[k] == 0 && memcmp(a->b->e[k].report_id, id, DPM_REPORT_ID_BYTES) == 0) {
            a->hit[k] = 1;
            memcpy(a->reason[k], reason, reason_len);
            a->reason[k][reason_len] = '\0';
        }
    }
    return NULL;
}

/* 1 if the response accounts for the whole batch: every report accepted or a duplicate,
 * none rejected. */
static int accounts_for(const answer_t *a, const batch_t *b)
{
    return a->nrejects == 0 && (uint64_t)a->accepted + a->duplicates == b->count;
}

/* The reject of batch entry k for the app: its id, campaign and period (read back from the
 * outbox into work, free once the answer is decoded; 0 if that read fails) and the collector's
 * reason (network bytes: anything but printable ASCII becomes '?'). */
static void record_reject(dpm_outbox_t *ob, const batch_t *b, uint32_t k, const char *reason,
                          uint8_t *work, size_t work_cap, dpm_upload_reject_t *out)
{
    memcpy(out->report_id, b->e[k].report_id, DPM_REPORT_ID_BYTES);
    out->campaign_id = 0;
    out->period = 0;
    if (dpm_outbox_read(ob, &b->e[k], work, work_cap) == DPM_OK) {
        peek_header(work, b->e[k].len, &out->campaign_id, &out->period);
    }
    size_t n = 0;
    for (; n + 1u < sizeof(out->reason) && n < REASON_CAP && reason[n] != '\0'; n++) {
        char ch = reason[n];
        if (ch < 0x20 || ch >= 0x7F) { /* bytes >= 0x80 too, signed char or not */
            ch = '?';
        }
        out->reason[n] = ch;
    }
    memset(out->reason + n, 0, sizeof(out->reason) - n);
}

/* ---- flush ------------------------------------------------------------------------------- */

/* Remove every entry of the batch; count them in *n. */
static dpm_status_t remove_batch(dpm_outbox_t *ob, batch_t *b, uint32_t *n)
{
    for (uint32_t k = 0; k < b->count; k++) {
        if (!b->gone[k]) {
            dpm_status_t st = dpm_outbox_remove(ob, &b->e[k]);
            if (st != DPM_OK) {
                return st;
            }
            b->gone[k] = 1;
            (*n)++;
        }
    }
    return DPM_OK;
}

/* 4xx answers that may reject reports by id: the others mean "later" (408, 429), "not this
 * credential" (401, 403) or "not this much" (413). */
static int rejecting_status(uint32_t status)
{
    return status >= 400 && status < 500 && status != 401 && status != 403 && status != 408 &&
           status != 413 && status != 429;
}

/* Act on a complete response to batch b: remove what it accounts for. DPM_ERR_PROTOCOL,
 * DPM_ERR_TRANSPORT or DPM_ERR_AUTH when it is a failure (retry later), outbox errors as they
 * come. A 413 is handled by the caller. */
static dpm_status_t handle_response(dpm_outbox_t *ob, batch_t *b, const dpm_http_response_t *resp,
                                    answer_t *ans, uint8_t *work, size_t work_cap,
                                    dpm_upload_result_t *res)
{
    int ok2xx = resp->status >= 200 && resp->status < 300;
    if (resp->status == 401 || resp->status == 403) {
        return DPM_ERR_AUTH;
    }
    if (!ok2xx && !rejecting_status(resp->status)) {
        return dpm_http_later_status(resp->status) ? DPM_ERR_TRANSPORT : DPM_ERR_PROTOCOL;
    }
    memset(ans, 0, sizeof(*ans));
    ans->b = b;
    const char *refused;
    if (dpm_batch_response_read(resp->body, resp->body_len, &ans->accepted, &ans->duplicates,
                                take_reject, ans, &refused) != 0) {
        return DPM_ERR_PROTOCOL; /* an empty or malformed body (a proxy's own 200) proves nothing */
    }
    if (ok2xx) {
        if (!accounts_for(ans, b)) {
            return DPM_ERR_PROTOCOL; /* a 2xx that does not account for the batch */
        }
        dpm_status_t st = remove_batch(ob, b, &res->delivered);
        if (st == DPM_OK && b->lost > 0) {
            st = dpm_outbox_ack_lost(ob, b->lost);
            res->lost_reported += st == DPM_OK ? b->lost : 0u;
        }
        return st;
    }
    /* 400 is the collector's answer to rejected reports (it then stores none of the batch);
     * other 4xx (e.g. 404 for an unknown campaign) count too when their BatchResponse names
     * reports of ours. */
    uint32_t removed = 0;
    for (uint32_t k = 0; k < b->count; k++) {
        if (ans->hit[k] == 0 || b->gone[k]) {
            continue;
        }
        dpm_upload_reject_t *out = res->rejected < DPM_UPLOAD_MAX_REJECTS /* always: see more */
                                       ? &res->rejects[res->rejected]
                                       : NULL;
        if (out != NULL) { /* before the removal: its bytes are read back */
            record_reject(ob, b, k, ans->reason[k], work, work_cap, out);
        }
        dpm_status_t st = dpm_outbox_remove(ob, &b->e[k]);
        if (st != DPM_OK) {
            if (out != NULL) {
                memset(out, 0, sizeof(*out)); /* not removed: not a reject for the app */
            }
            return st;
        }
        b->gone[k] = 1;
        removed++;
        if (out != NULL) {
            res->rejected++;
        }
    }
    return removed == 0 ? DPM_ERR_PROTOCOL /* a 4xx that names none of ours */ : DPM_OK;
}

/* The next attempt after a failure: the backoff, but never before the collector's Retry-After
 * (retry_after_s, 0 if none), which counts up to backoff_cap_ms. */
static void schedule_retry(dpm_upload_t *up, const dpm_clock_t *c, dpm_rand_t *rand,
                           uint32_t retry_after_s)
{
    if (up->failures < UINT32_MAX) {
        up->failures++;
    }
    uint32_t delay = 0;
    (void)dpm_upload_backoff_ms(&up->cfg, up->failures, rand, &delay);
    uint64_t asked = (uint64_t)retry_after_s * 1000u;
    if (asked > up->cfg.backoff_cap_ms) {
        asked = up->cfg.backoff_cap_ms;
    }
    up->next_attempt_ms = c->monotonic_ms(c->ctx) + (asked > delay ? asked : delay);
}

dpm_status_t dpm_upload_flush(dpm_upload_t *up, dpm_outbox_t *ob, const dpm_transport_t *t,
                              const dpm_clock_t *c, dpm_rand_t *rand, uint8_t *work,
                              size_t work_cap, dpm_upload_result_t *res)
{
    if (up == NULL || up->opened != DPM_UPLOAD_OPENED || ob == NULL || !dpm_outbox_is_open(ob) ||
        t == NULL || t->send == NULL || t->recv == NULL || c == NULL || c->monotonic_ms == NULL ||
        work == NULL || work_cap < DPM_UPLOAD_MIN_WORK || res == NULL) {
        return DPM_ERR_PARAM;
    }
    /* The longest head this config can produce must leave room for the largest report (its
     * Batch field: tag, length varint, report), or one large report would block the outbox. */
    size_t head_max = 0;
    dpm_status_t st = dpm_http_write_post(work, work_cap, up->cfg.host, up->cfg.path, up->cfg.token,
                                          UINT32_MAX, &head_max);
    memset(work, 0, head_max); /* the measured head carries the token */
    if (st != DPM_OK ||
        work_cap - head_max < dpm_batch_frame_len(DPM_REPORT_MAX_BYTES) + LOST_FIELD_MAX) {
        return DPM_ERR_PARAM;
    }
    memset(res, 0, sizeof(*res));
    if (up->next_attempt_ms != 0 && c->monotonic_ms(c->ctx) < up->next_attempt_ms) {
        res->deferred = 1;
        res->pending = dpm_outbox_pending(ob);
        return DPM_OK;
    }
    int network_failure = 0;
    uint32_t retry_after_s = 0;
    answer_t ans; /* what the device keeps of an answer (about 410 bytes: once per flush) */
    for (;;) {
        batch_t b;
        st = collect(up, ob, work_cap - head_max, &b);
        if (st != DPM_OK || b.count == 0) {
            break;
        }
        dpm_http_response_t resp;
        int sent = 0;
        res->http_status = 0; /* the advice reads the last exchange's status, not an earlier one */
        st = exchange(up, ob, t, c, work, work_cap, &b, &resp, &sent);
        res->requests += (uint32_t)sent;
        if (st != DPM_OK) {
            network_failure = sent;
            res->reconnect = (uint8_t)sent;
            break;
        }
        res->http_status = resp.status;
        res->reconnect = resp.close;
        if (resp.status == 413 && b.count > 1) {
            /* Too large for this collector: smaller batches, at once (no backoff). Each 413
             * halves the budget below the refused body, so this ends at one report. */
            up->cfg.max_bytes = b.body_len / 2u > 0 ? b.body_len / 2u : 1u;
            if (resp.close) {
                res->more = 1;
                break;
            }
            continue;
        }
        st = resp.status == 413 ? DPM_ERR_PROTOCOL /* even one report is too large */
                                : handle_response(ob, &b, &resp, &ans, work, work_cap, res);
        network_failure = st == DPM_ERR_PROTOCOL || st == DPM_ERR_TRANSPORT || st == DPM_ERR_AUTH;
        retry_after_s = resp.retry_after_s;
        if (st != DPM_OK) {
            break;
        }
        up->failures = 0; /* progress: the collector is reachable and answering */
        up->next_attempt_ms = 0;
        if (resp.close) {
            res->more = dpm_outbox_pending(ob) > 0;
            break; /* the server closes this connection: the app reconnects first */
        }
        if (res->rejected > 0 && res->rejected + up->cfg.max_reports > DPM_UPLOAD_MAX_REJECTS) {
            res->more = dpm_outbox_pending(ob) > 0; /* the next batch's rejects might not fit */
            break;
        }
    }
    if (network_failure) {
        schedule_retry(up, c, rand, retry_after_s);
    }
    res->pending = dpm_outbox_pending(ob);
    return st;
}

const char *dpm_upload_advice(dpm_status_t st, const dpm_upload_result_t *res)
{
    uint32_t http = res != NULL ? res->http_status : 0;
    switch (st) {
    case DPM_OK:
        if (res != NULL && res->rejected > 0) {
            return "the collector rejected reports for good (their ids and reasons are in the "
                   "result's rejects): act on each reason; do not resend them";
        }
        if (res != NULL && (res->more || res->reconnect) && res->pending > 0) {
            return "reports are still queued: flush again (reconnect first if asked to)";
        }
        if (res != NULL && res->deferred) {
            return "waiting for the retry time (dpm_upload_next_attempt_ms): nothing was sent";
        }
        return "ok";
    case DPM_ERR_AUTH:
        return http == 403 ? "the collector refuses this device's credential (HTTP 403: not a "
                             "device credential, revoked, or a token bound to another "
                             "certificate): ask for a new one; the reports stay queued"
                           : "the collector does not know this device's credential (HTTP "
                             "401): give the device a valid bearer token or client "
                             "certificate; the reports stay queued";
    case DPM_ERR_TRANSPORT:
        if (http == 429) {
            return "the collector is rate-limiting this client (HTTP 429): retry after the "
                   "backoff; nothing was lost";
        }
        if (http == 408 || http >= 500) {
            return "the collector cannot take reports now (HTTP 408 or 5xx): retry after the "
                   "backoff; nothing was lost";
        }
        return "the connection failed or closed: reconnect and retry after the backoff; "
               "nothing was lost";
    case DPM_ERR_TIMEOUT:
        return "no complete answer in time: reconnect and retry after the backoff; nothing was "
               "lost";
    case DPM_ERR_PROTOCOL:
        if (http == 413) {
            return "the collector refuses even one report as too large (HTTP 413): raise its "
                   "body limit (dpm-collector --max-body); the report stays queued";
        }
        return "the answer was not a collector's account of the batch (a wrong URL or path, "
               "a proxy, or a collector of another version): check the URL; nothing was "
               "removed, the reports stay queued";
    case DPM_ERR_STORAGE:
    case DPM_ERR_CORRUPT:
        return "the outbox's storage failed: see dpm_outbox_open; what the collector "
               "acknowledged is removed, the rest stays queued";
    case DPM_ERR_PARAM:
        return "invalid arguments or upload config (host, path, token, work buffer): nothing "
               "was sent";
    default: return dpm_strerror(st);
    }
}
