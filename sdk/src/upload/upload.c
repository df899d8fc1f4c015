/* SPDX-License-Identifier: Apache-2.0 */
/* dpm_upload_flush: batches from the outbox (with the count of lost reports), one POST per
 * batch, removal only when a BatchResponse accounts for the reports (decoded with nanopb),
 * exponential backoff with jitter on the port's monotonic clock. */
#include "dpm_internal.h"

#include <pb_decode.h>

#include "dpm.pb.h"
#include "dpm/upload.h"
#include "upload/http_internal.h"

#define BATCH_TAG 0x0Au   /* dpm.v1.Batch.reports: field 1, length-delimited */
#define LOST_TAG 0x10u    /* dpm.v1.Batch.lost_reports: field 2, varint */
#define LOST_FIELD_MAX 6u /* its tag and a 32-bit varint */

typedef char batch_matches_proto[DPM_UPLOAD_MAX_BATCH <= 8u ? 1 : -1];
typedef char rejects_fit_batch
    [DPM_ARRAY_LEN(((dpm_v1_BatchResponse *)0)->rejects) >= DPM_UPLOAD_MAX_BATCH ? 1 : -1];

static int config_ok(const dpm_upload_config_t *cfg)
{
    return cfg != NULL && dpm_http_host_ok(cfg->host) && dpm_http_path_ok(cfg->path) &&
           cfg->max_reports >= 1 && cfg->max_reports <= DPM_UPLOAD_MAX_BATCH &&
           cfg->max_bytes >= 1 && cfg->timeout_ms >= 1 && cfg->backoff_base_ms >= 1 &&
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

static uint32_t varint_len(uint32_t v)
{
    uint32_t n = 1;
    while (v >= 0x80u) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t put_varint(uint8_t *p, uint32_t v)
{
    size_t n = 0;
    while (v >= 0x80u) {
        p[n++] = (uint8_t)(v | 0x80u);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

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
    room -= LOST_FIELD_MAX; /* room >= 3 + DPM_REPORT_MAX_BYTES + LOST_FIELD_MAX (flush) */
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
        uint32_t frame = 1u + varint_len(e.len) + e.len;
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
        b->body_len += frame;
    }
    dpm_outbox_stats_t stats;
    dpm_status_t st = dpm_outbox_stats(ob, &stats);
    if (st == DPM_OK && b->count > 0 && stats.lost > 0) {
        b->lost = stats.lost;
        b->body_len += 1u + varint_len(stats.lost);
    }
    return st;
}

/* Build the request in work (head, then each stored report as a Batch field), send it, and
 * read the response; its body lands in work. */
static dpm_status_t exchange(const dpm_upload_t *up, dpm_outbox_t *ob, const dpm_transport_t *t,
                             const dpm_clock_t *c, uint8_t *work, size_t work_cap, const batch_t *b,
                             dpm_http_response_t *resp, int *sent)
{
    size_t pos = 0;
    dpm_status_t st =
        dpm_http_write_request(work, work_cap, up->cfg.host, up->cfg.path, b->body_len, &pos);
    for (uint32_t i = 0; i < b->count && st == DPM_OK; i++) {
        work[pos++] = (uint8_t)BATCH_TAG;
        pos += put_varint(work + pos, b->e[i].len);
        st = dpm_outbox_read(ob, &b->e[i], work + pos, work_cap - pos);
        pos += b->e[i].len;
    }
    if (b->lost > 0) {
        work[pos++] = (uint8_t)LOST_TAG;
        pos += put_varint(work + pos, b->lost);
    }
    if (st != DPM_OK) {
        return st; /* nothing was sent */
    }
    *sent = 1;
    uint64_t deadline = c->monotonic_ms(c->ctx) + up->cfg.timeout_ms;
    st = dpm_http_send_all(t, c, deadline, work, pos);
    if (st == DPM_OK) {
        st = dpm_http_response_init(resp, work, work_cap);
    }
    if (st == DPM_OK) {
        st = dpm_http_read_response(t, c, deadline, resp);
    }
    return st;
}

/* ---- dpm.v1.BatchResponse ---------------------------------------------------------------- */

/* Decode a BatchResponse body with nanopb (bounds from dpm.options). 0 if malformed. */
static int decode_response(const uint8_t *body, size_t len, dpm_v1_BatchResponse *br)
{
    pb_istream_t in = pb_istream_from_buffer(body, len);
    return pb_decode(&in, dpm_v1_BatchResponse_fields, br) && in.bytes_left == 0;
}

/* 1 if the response accounts for the whole batch: every report accepted or a duplicate,
 * none rejected. */
static int accounts_for(const dpm_v1_BatchResponse *br, const batch_t *b)
{
    return br->rejects_count == 0 && (uint64_t)br->accepted + br->duplicates == b->count;
}

/* Mark in hit the batch entries whose id a reject names. */
static void match_rejects(const dpm_v1_BatchResponse *br, const batch_t *b, uint8_t *hit)
{
    for (pb_size_t i = 0; i < br->rejects_count; i++) {
        const dpm_v1_Reject *rj = &br->rejects[i];
        for (uint32_t k = 0; k < b->count && rj->report_id.size == DPM_REPORT_ID_BYTES; k++) {
            if (memcmp(b->e[k].report_id, rj->report_id.bytes, DPM_REPORT_ID_BYTES) == 0) {
                hit[k] = 1;
            }
        }
    }
}

/* ---- flush ------------------------------------------------------------------------------- */

/* Remove the entries flagged in `which` (NULL: all); count them in *n. */
static dpm_status_t remove_batch(dpm_outbox_t *ob, batch_t *b, const uint8_t *which, uint32_t *n)
{
    for (uint32_t k = 0; k < b->count; k++) {
        if ((which == NULL || which[k]) && !b->gone[k]) {
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

/* 4xx answers that reject reports by id (408 and 429 mean "later"). */
static int rejecting_status(uint32_t status)
{
    return status >= 400 && status < 500 && status != 408 && status != 429;
}

/* Act on a complete response to batch b: remove what it accounts for. DPM_ERR_PROTOCOL or
 * DPM_ERR_TRANSPORT when it is a failure (retry later), outbox errors as they come. */
static dpm_status_t handle_response(dpm_outbox_t *ob, batch_t *b, const dpm_http_response_t *resp,
                                    dpm_v1_BatchResponse *br, dpm_upload_result_t *res)
{
    int ok2xx = resp->status >= 200 && resp->status < 300;
    if (!ok2xx && !rejecting_status(resp->status)) {
        return resp->status >= 500 || resp->status == 408 || resp->status == 429 ? DPM_ERR_TRANSPORT
                                                                                 : DPM_ERR_PROTOCOL;
    }
    if (!decode_response(resp->body, resp->body_len, br)) {
        return DPM_ERR_PROTOCOL; /* an empty or malformed body (a proxy's own 200) proves nothing */
    }
    if (ok2xx) {
        if (!accounts_for(br, b)) {
            return DPM_ERR_PROTOCOL; /* a 2xx that does not account for the batch */
        }
        dpm_status_t st = remove_batch(ob, b, NULL, &res->delivered);
        if (st == DPM_OK && b->lost > 0) {
            st = dpm_outbox_ack_lost(ob, b->lost);
            res->lost_reported += st == DPM_OK ? b->lost : 0u;
        }
        return st;
    }
    /* 400 is the collector's answer to rejected reports (it then stores none of the batch);
     * other 4xx (e.g. 404 for an unknown campaign) count too when their BatchResponse names
     * reports of ours. */
    uint8_t hit[DPM_UPLOAD_MAX_BATCH] = {0};
    uint32_t before = res->rejected;
    match_rejects(br, b, hit);
    dpm_status_t st = remove_batch(ob, b, hit, &res->rejected);
    if (st == DPM_OK && res->rejected == before) {
        st = DPM_ERR_PROTOCOL; /* a 4xx that names none of ours: no progress */
    }
    return st;
}

static void schedule_retry(dpm_upload_t *up, const dpm_clock_t *c, dpm_rand_t *rand)
{
    if (up->failures < UINT32_MAX) {
        up->failures++;
    }
    uint32_t delay = 0;
    (void)dpm_upload_backoff_ms(&up->cfg, up->failures, rand, &delay);
    up->next_attempt_ms = c->monotonic_ms(c->ctx) + delay;
}

dpm_status_t dpm_upload_flush(dpm_upload_t *up, dpm_outbox_t *ob, const dpm_transport_t *t,
                              const dpm_clock_t *c, dpm_rand_t *rand, uint8_t *work,
                              size_t work_cap, dpm_upload_result_t *res)
{
    if (up == NULL || up->opened != DPM_UPLOAD_OPENED || ob == NULL ||
        ob->opened != DPM_OUTBOX_OPENED || t == NULL || t->send == NULL || t->recv == NULL ||
        c == NULL || c->monotonic_ms == NULL || work == NULL || work_cap < DPM_UPLOAD_MIN_WORK ||
        res == NULL) {
        return DPM_ERR_PARAM;
    }
    /* The longest head this config can produce must leave room for the largest report (its
     * Batch field: tag, length varint, report), or one large report would block the outbox. */
    size_t head_max = 0;
    if (dpm_http_write_request(work, work_cap, up->cfg.host, up->cfg.path, UINT32_MAX, &head_max) !=
            DPM_OK ||
        work_cap - head_max < 3u + DPM_REPORT_MAX_BYTES + LOST_FIELD_MAX) {
        return DPM_ERR_PARAM;
    }
    memset(res, 0, sizeof(*res));
    if (up->next_attempt_ms != 0 && c->monotonic_ms(c->ctx) < up->next_attempt_ms) {
        res->deferred = 1;
        res->pending = dpm_outbox_pending(ob);
        return DPM_OK;
    }
    dpm_status_t st = DPM_OK;
    int network_failure = 0;
    dpm_v1_BatchResponse br; /* decoded answer (about 560 bytes: once per flush) */
    for (;;) {
        batch_t b;
        st = collect(up, ob, work_cap - head_max, &b);
        if (st != DPM_OK || b.count == 0) {
            break;
        }
        dpm_http_response_t resp;
        int sent = 0;
        st = exchange(up, ob, t, c, work, work_cap, &b, &resp, &sent);
        res->requests += (uint32_t)sent;
        if (st != DPM_OK) {
            network_failure = sent;
            res->reconnect = (uint8_t)sent;
            break;
        }
        res->http_status = resp.status;
        res->reconnect = resp.close;
        st = handle_response(ob, &b, &resp, &br, res);
        network_failure = st == DPM_ERR_PROTOCOL || st == DPM_ERR_TRANSPORT;
        if (st != DPM_OK) {
            break;
        }
        up->failures = 0; /* progress: the collector is reachable and answering */
        up->next_attempt_ms = 0;
        if (resp.close) {
            break; /* the server closes this connection: the app reconnects first */
        }
    }
    if (network_failure) {
        schedule_retry(up, c, rand);
    }
    res->pending = dpm_outbox_pending(ob);
    return st;
}
