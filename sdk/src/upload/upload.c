/* SPDX-License-Identifier: Apache-2.0 */
/* dpm_upload_flush: batches from the outbox, one POST per batch, removal only on a 2xx or a
 * reject by id, exponential backoff with jitter on the port's monotonic clock. */
#include "dpm_internal.h"

#include "dpm/upload.h"
#include "upload/http_internal.h"

#define BATCH_TAG 0x0Au /* dpm.v1.Batch.reports: field 1, length-delimited */

typedef char batch_matches_proto[DPM_UPLOAD_MAX_BATCH <= 8u ? 1 : -1];

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
 * work buffer after the longest possible request head (`room` bytes). */
static dpm_status_t collect(const dpm_upload_t *up, dpm_outbox_t *ob, size_t room, batch_t *b)
{
    uint32_t cursor = 0;
    b->count = 0;
    b->body_len = 0;
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
    return DPM_OK;
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

/* ---- dpm.v1.BatchResponse: only the reject ids matter ------------------------------------ */

static int read_varint(const uint8_t *p, size_t n, size_t *i, uint64_t *v)
{
    uint64_t r = 0;
    for (uint32_t shift = 0; shift < 64; shift += 7) {
        if (*i >= n) {
            return 0;
        }
        uint8_t byte = p[(*i)++];
        r |= (uint64_t)(byte & 0x7Fu) << shift;
        if ((byte & 0x80u) == 0) {
            *v = r;
            return 1;
        }
    }
    return 0;
}

/* Read one field key and, unless it is length-delimited, skip its value. *len is the length
 * of a length-delimited value, whose bytes start at *i. 0 if malformed. */
static int next_field(const uint8_t *p, size_t n, size_t *i, uint32_t *field, uint32_t *wire,
                      size_t *len)
{
    uint64_t key = 0, v = 0;
    if (!read_varint(p, n, i, &key) || (key >> 3) == 0 || (key >> 3) > 0x1FFFFFFFu) {
        return 0;
    }
    *field = (uint32_t)(key >> 3);
    *wire = (uint32_t)(key & 7u);
    *len = 0;
    switch (*wire) {
    case 0: return read_varint(p, n, i, &v);
    case 1: v = 8; break;
    case 5: v = 4; break;
    case 2:
        if (!read_varint(p, n, i, &v) || v > n - *i) {
            return 0;
        }
        *len = (size_t)v;
        return 1;
    default: return 0;
    }
    if (v > n - *i) {
        return 0;
    }
    *i += (size_t)v;
    return 1;
}

/* Mark in b->gone the batch entries whose id a reject names. 0 if the body is malformed. */
static int match_rejects(const uint8_t *p, size_t n, batch_t *b, uint8_t *hit)
{
    size_t i = 0;
    while (i < n) {
        uint32_t field = 0, wire = 0;
        size_t len = 0;
        if (!next_field(p, n, &i, &field, &wire, &len)) {
            return 0;
        }
        if (wire != 2) {
            continue;
        }
        size_t end = i + len, j = i;
        i = end;
        if (field != 3) {
            continue; /* BatchResponse.rejects is field 3 */
        }
        while (j < end) {
            uint32_t f2 = 0, w2 = 0;
            size_t l2 = 0;
            if (!next_field(p, end, &j, &f2, &w2, &l2)) {
                return 0;
            }
            if (w2 != 2) {
                continue;
            }
            if (f2 == 1 && l2 == DPM_REPORT_ID_BYTES) { /* Reject.report_id */
                for (uint32_t k = 0; k < b->count; k++) {
                    if (memcmp(b->e[k].report_id, p + j, DPM_REPORT_ID_BYTES) == 0) {
                        hit[k] = 1;
                    }
                }
            }
            j += l2;
        }
    }
    return 1;
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
        work_cap - head_max < 3u + DPM_REPORT_MAX_BYTES) {
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
        if (resp.status >= 200 && resp.status < 300) {
            st = remove_batch(ob, &b, NULL, &res->delivered);
        } else if (resp.status >= 400 && resp.status < 500 && resp.status != 408 &&
                   resp.status != 429) {
            /* 400 is the collector's answer to rejected reports; other 4xx (e.g. 404 for an
             * unknown campaign) count too when their BatchResponse names reports of ours. */
            uint8_t hit[DPM_UPLOAD_MAX_BATCH] = {0};
            uint32_t before = res->rejected;
            if (!match_rejects(resp.body, resp.body_len, &b, hit)) {
                st = DPM_ERR_PROTOCOL;
            } else {
                st = remove_batch(ob, &b, hit, &res->rejected);
                if (st == DPM_OK && res->rejected == before) {
                    st = DPM_ERR_PROTOCOL; /* a 400 that names none of ours: no progress */
                }
            }
            network_failure = st == DPM_ERR_PROTOCOL;
        } else {
            st = resp.status >= 500 || resp.status == 408 || resp.status == 429 ? DPM_ERR_TRANSPORT
                                                                                : DPM_ERR_PROTOCOL;
            network_failure = 1;
        }
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
