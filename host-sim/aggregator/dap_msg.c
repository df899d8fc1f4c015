/* SPDX-License-Identifier: Apache-2.0 */
/* The aggregator-side DAP messages (dap_msg.h): a bounded reader and a counting writer, the
 * pieces on them, and every message as pieces in the draft's field order. */
#include "aggregator/dap_msg.h"

#include <string.h>

const char *dap_msg_report_error_name(uint8_t error)
{
    static const char *const names[DAP_REPORT_ERROR_MAX + 1] = {
        "reserved",          "batch_collected",        "report_replayed",
        "report_dropped",    "hpke_unknown_config_id", "hpke_decrypt_error",
        "vdaf_verify_error", "task_expired",           "invalid_message",
        "report_too_early",  "task_not_started",       "outdated_config"};
    return error <= DAP_REPORT_ERROR_MAX ? names[error] : "unknown";
}

const char *const dap_msg_media_type[DAP_MSG_TYPES] = {
    [DAP_MSG_HPKE_CONFIG_LIST] = "application/ppm-dap;message=hpke-config-list",
    [DAP_MSG_UPLOAD_REQ] = "application/ppm-dap;message=upload-req",
    [DAP_MSG_UPLOAD_ERRORS] = "application/ppm-dap;message=upload-errors",
    [DAP_MSG_AGG_JOB_INIT_REQ] = "application/ppm-dap;message=aggregation-job-init-req",
    [DAP_MSG_AGG_JOB_RESP] = "application/ppm-dap;message=aggregation-job-resp",
    [DAP_MSG_AGG_JOB_CONTINUE_REQ] = "application/ppm-dap;message=aggregation-job-continue-req",
    [DAP_MSG_AGG_SHARE_REQ] = "application/ppm-dap;message=aggregate-share-req",
    [DAP_MSG_AGG_SHARE] = "application/ppm-dap;message=aggregate-share",
    [DAP_MSG_COLLECTION_JOB_REQ] = "application/ppm-dap;message=collection-job-req",
    [DAP_MSG_COLLECTION_JOB_RESP] = "application/ppm-dap;message=collection-job-resp",
};

const char dap_msg_reason_ext_order[] = "extensions not in strictly increasing order";

int dap_msg_type_of(const char *content_type, size_t len)
{
    if (content_type == NULL) {
        return -1;
    }
    for (int i = 0; i < (int)DAP_MSG_TYPES; i++) {
        size_t n = strlen(dap_msg_media_type[i]);
        if (len >= n && memcmp(content_type, dap_msg_media_type[i], n) == 0 &&
            (len == n || content_type[n] == ';')) {
            return i;
        }
    }
    return -1;
}

/* ---- reader: every read is bounded by the input; the first failure's reason is kept ------- */

typedef struct {
    const uint8_t *p;
    size_t len, pos;
    const char *why;
} rd_t;

static int rd_fail(rd_t *r, const char *why)
{
    if (r->why == NULL) {
        r->why = why;
    }
    return 0;
}

static int rd_fixed(rd_t *r, size_t n, const uint8_t **out)
{
    if (r->why != NULL) {
        return 0;
    }
    if (r->len - r->pos < n) {
        return rd_fail(r, "truncated");
    }
    *out = r->p + r->pos;
    r->pos += n;
    return 1;
}

static int rd_uint(rd_t *r, size_t n, uint64_t *v)
{
    const uint8_t *b = NULL;
    if (!rd_fixed(r, n, &b) || b == NULL) {
        return 0;
    }
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        x = (x << 8) | b[i];
    }
    *v = x;
    return 1;
}

static int rd_u8(rd_t *r, uint8_t *v)
{
    uint64_t x = 0;
    int ok = rd_uint(r, 1, &x);
    *v = (uint8_t)x;
    return ok;
}

static int rd_u16(rd_t *r, uint16_t *v)
{
    uint64_t x = 0;
    int ok = rd_uint(r, 2, &x);
    *v = (uint16_t)x;
    return ok;
}

/* An opaque vector under an n-byte length prefix, at least min bytes long. */
static int rd_vec(rd_t *r, size_t n, size_t min, dpm_span_t *out)
{
    uint64_t l = 0;
    if (!rd_uint(r, n, &l)) {
        return 0;
    }
    if (l > r->len - r->pos) {
        return rd_fail(r, "length prefix past the end");
    }
    if (l < min) {
        return rd_fail(r, "vector shorter than its minimum");
    }
    out->p = r->p + r->pos;
    out->len = (size_t)l;
    r->pos += (size_t)l;
    return 1;
}

static rd_t rd_of(dpm_span_t s)
{
    rd_t r = {s.p, s.len, 0, NULL};
    return r;
}

static int rd_end(rd_t *r)
{
    if (r->why == NULL && r->pos != r->len) {
        return rd_fail(r, "trailing bytes");
    }
    return r->why == NULL;
}

/* ---- writer: counts everything, writes only into a buffer that holds it all -------------- */

typedef struct {
    uint8_t *p; /* NULL: count only */
    size_t cap, len;
} wr_t;

static void wr_bytes(wr_t *w, const uint8_t *b, size_t n)
{
    if (w->p != NULL && n > 0 && w->len <= w->cap && n <= w->cap - w->len) {
        memcpy(w->p + w->len, b, n);
    }
    w->len += n;
}

static void wr_uint(wr_t *w, size_t n, uint64_t v)
{
    uint8_t b[8];
    for (size_t i = 0; i < n; i++) {
        b[i] = (uint8_t)(v >> (8u * (n - 1u - i)));
    }
    wr_bytes(w, b, n);
}

static int wr_vec(wr_t *w, size_t n, size_t min, dpm_span_t s)
{
    uint64_t max = n == 1 ? 0xFFu : n == 2 ? 0xFFFFu : 0xFFFFFFFFu;
    if ((s.p == NULL && s.len > 0) || s.len < min || (uint64_t)s.len > max) {
        return 0;
    }
    wr_uint(w, n, s.len);
    wr_bytes(w, s.p, s.len);
    return 1;
}

typedef int (*put_fn)(wr_t *w, const void *m);

/* Count, then write only if everything fits: a refusal leaves buf untouched. */
static dpm_status_t encode(put_fn put, const void *m, uint8_t *buf, size_t cap, size_t *len)
{
    if (m == NULL || len == NULL || (buf == NULL && cap > 0)) {
        return DPM_ERR_PARAM;
    }
    wr_t w = {NULL, 0, 0};
    if (!put(&w, m)) {
        return DPM_ERR_PARAM;
    }
    if (w.len > cap) {
        *len = w.len;
        return DPM_ERR_BUFFER;
    }
    wr_t out = {buf, cap, 0};
    (void)put(&out, m);
    *len = out.len;
    return DPM_OK;
}

/* ---- the pieces ------------------------------------------------------------------------- */

static int get_ext(rd_t *r, void *v)
{
    dap_ext_t *e = v;
    return rd_u16(r, &e->type) && rd_vec(r, 2, 0, &e->data);
}

/* A list's content of extensions, checked to its end (and for strictly increasing types). */
static int get_ext_content(rd_t *r, dpm_span_t content, int ordered, dap_list_t *l)
{
    rd_t c = rd_of(content);
    size_t n = 0;
    uint32_t prev = 0;
    while (c.why == NULL && c.pos < c.len) {
        dap_ext_t e;
        if (!get_ext(&c, &e)) {
            break;
        }
        if (ordered && n > 0 && e.type <= prev) {
            rd_fail(&c, dap_msg_reason_ext_order);
        }
        prev = e.type;
        n++;
    }
    if (c.why != NULL) {
        return rd_fail(r, c.why);
    }
    l->bytes = content;
    l->n = n;
    return 1;
}

static int get_ext_list(rd_t *r, int ordered, dap_list_t *l)
{
    dpm_span_t content = {NULL, 0};
    return rd_vec(r, 2, 0, &content) && get_ext_content(r, content, ordered, l);
}

static int put_ext_list(wr_t *w, const dap_list_t *l, int ordered)
{
    rd_t r = {NULL, 0, 0, NULL};
    dap_list_t chk;
    if (l->bytes.p == NULL && l->bytes.len > 0) {
        return 0;
    }
    if (!get_ext_content(&r, l->bytes, ordered, &chk)) {
        return 0;
    }
    return wr_vec(w, 2, 0, l->bytes);
}

static int get_interval(rd_t *r, dap_interval_t *i)
{
    return rd_uint(r, 8, &i->start) && rd_uint(r, 8, &i->duration);
}

static void put_interval(wr_t *w, const dap_interval_t *i)
{
    wr_uint(w, 8, i->start);
    wr_uint(w, 8, i->duration);
}

static int get_hpke_ct(rd_t *r, dap_hpke_ct_t *c)
{
    return rd_u8(r, &c->config_id) && rd_vec(r, 2, 1, &c->enc) && rd_vec(r, 4, 1, &c->payload);
}

static int put_hpke_ct(wr_t *w, const void *m)
{
    const dap_hpke_ct_t *c = m;
    wr_uint(w, 1, c->config_id);
    return wr_vec(w, 2, 1, c->enc) && wr_vec(w, 4, 1, c->payload);
}

/* A report id (NULL: 0, nothing written). */
static int put_report_id(wr_t *w, const uint8_t *id)
{
    if (id == NULL) {
        return 0;
    }
    wr_bytes(w, id, DPM_DAP_REPORT_ID_BYTES);
    return 1;
}

static int get_metadata(rd_t *r, dap_report_metadata_t *m)
{
    return rd_fixed(r, DPM_DAP_REPORT_ID_BYTES, &m->report_id) && rd_uint(r, 8, &m->time) &&
           get_ext_list(r, 0, &m->public_ext);
}

static int put_metadata(wr_t *w, const void *v)
{
    const dap_report_metadata_t *m = v;
    if (!put_report_id(w, m->report_id)) {
        return 0;
    }
    wr_uint(w, 8, m->time);
    return put_ext_list(w, &m->public_ext, 0);
}

static int get_report_share(rd_t *r, dap_report_share_t *s)
{
    return get_metadata(r, &s->metadata) && rd_vec(r, 4, 0, &s->public_share) &&
           get_hpke_ct(r, &s->share);
}

static int put_report_share(wr_t *w, const void *v)
{
    const dap_report_share_t *s = v;
    return put_metadata(w, &s->metadata) && wr_vec(w, 4, 0, s->public_share) &&
           put_hpke_ct(w, &s->share);
}

static size_t batch_config_len(uint8_t mode, int selector)
{
    if (mode == DPM_DAP_BATCH_TIME_INTERVAL) {
        return 16u;
    }
    return selector ? DAP_BATCH_ID_BYTES : 0u;
}

/* Query (selector 0) or BatchSelector (selector 1). */
static int get_batch(rd_t *r, int selector, dap_batch_t *b)
{
    dpm_span_t config = {NULL, 0};
    dap_batch_t out = {0};
    if (!rd_u8(r, &out.batch_mode) || !rd_vec(r, 2, 0, &config)) {
        return 0;
    }
    if (out.batch_mode != DPM_DAP_BATCH_TIME_INTERVAL &&
        out.batch_mode != DPM_DAP_BATCH_LEADER_SELECTED) {
        return rd_fail(r, "unknown batch mode");
    }
    if (config.len != batch_config_len(out.batch_mode, selector)) {
        return rd_fail(r, "batch config of the wrong length for its mode");
    }
    rd_t c = rd_of(config);
    if (out.batch_mode == DPM_DAP_BATCH_TIME_INTERVAL) {
        (void)get_interval(&c, &out.interval);
    } else if (selector) {
        out.batch_id = config.p;
    }
    *b = out;
    return 1;
}

static int put_batch(wr_t *w, int selector, const dap_batch_t *b)
{
    if (b->batch_mode != DPM_DAP_BATCH_TIME_INTERVAL &&
        b->batch_mode != DPM_DAP_BATCH_LEADER_SELECTED) {
        return 0;
    }
    wr_uint(w, 1, b->batch_mode);
    wr_uint(w, 2, batch_config_len(b->batch_mode, selector));
    if (b->batch_mode == DPM_DAP_BATCH_TIME_INTERVAL) {
        put_interval(w, &b->interval);
    } else if (selector) {
        if (b->batch_id == NULL) {
            return 0;
        }
        wr_bytes(w, b->batch_id, DAP_BATCH_ID_BYTES);
    }
    return 1;
}

static int put_query(wr_t *w, const void *m)
{
    return put_batch(w, 0, m);
}

static int put_selector(wr_t *w, const void *m)
{
    return put_batch(w, 1, m);
}

static int get_collection_job_req(rd_t *r, dap_collection_job_req_t *m)
{
    size_t start = r->pos;
    if (!get_batch(r, 0, &m->query) || !rd_vec(r, 4, 0, &m->agg_param) ||
        !get_ext_list(r, 1, &m->extensions)) {
        return 0;
    }
    m->encoded.p = r->p + start;
    m->encoded.len = r->pos - start;
    return 1;
}

static int put_collection_job_req(wr_t *w, const void *v)
{
    const dap_collection_job_req_t *m = v;
    return put_batch(w, 0, &m->query) && wr_vec(w, 4, 0, m->agg_param) &&
           put_ext_list(w, &m->extensions, 1);
}

static int report_error_known(uint8_t e)
{
    return e >= 1u && e <= DAP_REPORT_ERROR_MAX;
}

/* ---- list items ----------------------------------------------------------------------------- */

static int get_verify_init(rd_t *r, void *v)
{
    dap_verify_init_t *m = v;
    return get_report_share(r, &m->report_share) && rd_vec(r, 4, 1, &m->payload);
}

static int put_verify_init(wr_t *w, const void *v)
{
    const dap_verify_init_t *m = v;
    return put_report_share(w, &m->report_share) && wr_vec(w, 4, 1, m->payload);
}

static int get_verify_resp(rd_t *r, void *m)
{
    dap_verify_resp_t out = {0};
    if (!rd_fixed(r, DPM_DAP_REPORT_ID_BYTES, &out.report_id) || !rd_u8(r, &out.type)) {
        return 0;
    }
    switch (out.type) {
    case DAP_VERIFY_CONTINUE:
        if (!rd_vec(r, 4, 1, &out.payload)) {
            return 0;
        }
        break;
    case DAP_VERIFY_FINISH: break;
    case DAP_VERIFY_REJECT:
        if (!rd_u8(r, &out.report_error)) {
            return 0;
        }
        if (!report_error_known(out.report_error)) {
            return rd_fail(r, "unknown report error");
        }
        break;
    default: return rd_fail(r, "unknown verify response type");
    }
    *(dap_verify_resp_t *)m = out;
    return 1;
}

static int put_verify_resp(wr_t *w, const void *v)
{
    const dap_verify_resp_t *m = v;
    if (!put_report_id(w, m->report_id)) {
        return 0;
    }
    wr_uint(w, 1, m->type);
    switch (m->type) {
    case DAP_VERIFY_CONTINUE: return wr_vec(w, 4, 1, m->payload);
    case DAP_VERIFY_FINISH: return 1;
    case DAP_VERIFY_REJECT:
        wr_uint(w, 1, m->report_error);
        return report_error_known(m->report_error);
    default: return 0;
    }
}

static int get_verify_continue(rd_t *r, void *v)
{
    dap_verify_continue_t *m = v;
    return rd_fixed(r, DPM_DAP_REPORT_ID_BYTES, &m->report_id) && rd_vec(r, 4, 1, &m->payload);
}

static int put_verify_continue(wr_t *w, const void *v)
{
    const dap_verify_continue_t *m = v;
    return put_report_id(w, m->report_id) && wr_vec(w, 4, 1, m->payload);
}

static int get_upload_status(rd_t *r, void *m)
{
    dap_upload_status_t out;
    if (!rd_fixed(r, DPM_DAP_REPORT_ID_BYTES, &out.report_id) || !rd_u8(r, &out.error)) {
        return 0;
    }
    if (!report_error_known(out.error)) {
        return rd_fail(r, "unknown report error");
    }
    *(dap_upload_status_t *)m = out;
    return 1;
}

static int put_upload_status(wr_t *w, const void *v)
{
    const dap_upload_status_t *m = v;
    if (!report_error_known(m->error) || !put_report_id(w, m->report_id)) {
        return 0;
    }
    wr_uint(w, 1, m->error);
    return 1;
}

static int get_hpke_config(rd_t *r, void *v)
{
    dap_hpke_config_view_t *c = v;
    return rd_u8(r, &c->id) && rd_u16(r, &c->kem_id) && rd_u16(r, &c->kdf_id) &&
           rd_u16(r, &c->aead_id) && rd_vec(r, 2, 1, &c->public_key);
}

/* ---- decoding a whole message ----------------------------------------------------------- */

typedef int (*get_fn)(rd_t *r, void *item);

/* Items of `get` from r's position to its end, each of at most `item` bytes (scratch). */
static int get_items_to_end(rd_t *r, get_fn get, void *item, dap_list_t *l)
{
    size_t start = r->pos, n = 0;
    while (r->why == NULL && r->pos < r->len) {
        if (!get(r, item)) {
            return 0;
        }
        n++;
    }
    if (r->why != NULL) {
        return 0;
    }
    l->bytes.p = r->p + start;
    l->bytes.len = r->len - start;
    l->n = n;
    return 1;
}

/* The end of a decoder: DPM_OK with out (size bytes) copied into m, or DPM_ERR_PROTOCOL with
 * *reason set and m untouched. */
static dpm_status_t done(rd_t *r, const char **reason, void *m, const void *out, size_t size)
{
    if (rd_end(r)) {
        memcpy(m, out, size);
        return DPM_OK;
    }
    if (reason != NULL) {
        *reason = r->why;
    }
    return DPM_ERR_PROTOCOL;
}

static dpm_status_t param(const char **reason)
{
    if (reason != NULL) {
        *reason = "NULL argument";
    }
    return DPM_ERR_PARAM;
}

#define DECODE_ARGS_OK(bytes, len, m) ((m) != NULL && ((bytes) != NULL || (len) == 0))

static dpm_status_t next(const dap_list_t *l, size_t *pos, get_fn get, void *item)
{
    if (l == NULL || pos == NULL || item == NULL || *pos > l->bytes.len ||
        (l->bytes.p == NULL && l->bytes.len > 0)) {
        return DPM_ERR_PARAM;
    }
    if (*pos == l->bytes.len) {
        return DPM_ERR_RANGE;
    }
    rd_t r = {l->bytes.p, l->bytes.len, *pos, NULL};
    if (!get(&r, item)) {
        return DPM_ERR_PROTOCOL;
    }
    *pos = r.pos;
    return DPM_OK;
}

/* ---- extension lists and HPKE configuration lists ------------------------------------------ */

typedef struct {
    const dap_ext_t *e;
    size_t n;
} ext_array_t;

static int put_ext_array(wr_t *w, const void *v)
{
    const ext_array_t *a = v;
    if (a->e == NULL && a->n > 0) {
        return 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        if (i > 0 && a->e[i].type <= a->e[i - 1].type) {
            return 0;
        }
        wr_uint(w, 2, a->e[i].type);
        if (!wr_vec(w, 2, 0, a->e[i].data)) {
            return 0;
        }
    }
    return w->len <= 0xFFFFu;
}

dpm_status_t dap_msg_ext_list_encode(const dap_ext_t *e, size_t n, uint8_t *buf, size_t cap,
                                     size_t *len)
{
    ext_array_t a = {e, n};
    return encode(put_ext_array, &a, buf, cap, len);
}

dpm_status_t dap_msg_ext_list_decode(const uint8_t *bytes, size_t len, dap_list_t *l,
                                     const char **reason)
{
    if (!DECODE_ARGS_OK(bytes, len, l)) {
        return param(reason);
    }
    rd_t r = {bytes, len, 0, NULL};
    dpm_span_t all = {bytes, len};
    dap_list_t out = {{NULL, 0}, 0};
    if (len > 0xFFFFu) {
        rd_fail(&r, "extension list longer than 2^16-1");
    } else if (get_ext_content(&r, all, 1, &out)) {
        r.pos = len;
    }
    return done(&r, reason, l, &out, sizeof(out));
}

/* Whether id is marked in seen (a bit per id), marking it. */
static int seen_before(uint8_t seen[32], uint8_t id)
{
    int was = (seen[id >> 3] >> (id & 7u)) & 1;
    seen[id >> 3] |= (uint8_t)(1u << (id & 7u));
    return was;
}

typedef struct {
    const dpm_hpke_config_t *c;
    size_t n;
} config_array_t;

static int put_config_array(wr_t *w, const void *v)
{
    const config_array_t *a = v;
    uint8_t seen[32] = {0};
    if (a->c == NULL || a->n == 0 || a->n > 0xFFFFu / DPM_HPKE_CONFIG_BYTES) {
        return 0;
    }
    wr_uint(w, 2, a->n * DPM_HPKE_CONFIG_BYTES);
    for (size_t i = 0; i < a->n; i++) {
        uint8_t one[DPM_HPKE_CONFIG_BYTES];
        size_t l = 0;
        if (seen_before(seen, a->c[i].id)) {
            return 0;
        }
        if (dpm_hpke_config_encode(&a->c[i], one, sizeof(one), &l) != DPM_OK ||
            l != DPM_HPKE_CONFIG_BYTES) {
            return 0;
        }
        wr_bytes(w, one, l);
    }
    return 1;
}

dpm_status_t dap_msg_hpke_config_list_encode(const dpm_hpke_config_t *c, size_t n, uint8_t *buf,
                                             size_t cap, size_t *len)
{
    config_array_t a = {c, n};
    return encode(put_config_array, &a, buf, cap, len);
}

dpm_status_t dap_msg_hpke_config_list_decode(const uint8_t *bytes, size_t len, dap_list_t *l,
                                             const char **reason)
{
    if (!DECODE_ARGS_OK(bytes, len, l)) {
        return param(reason);
    }
    rd_t r = {bytes, len, 0, NULL};
    dpm_span_t content = {NULL, 0};
    dap_list_t out = {{NULL, 0}, 0};
    if (rd_vec(&r, 2, 10, &content)) {
        uint8_t seen[32] = {0};
        rd_t c = rd_of(content);
        dap_hpke_config_view_t v;
        while (c.why == NULL && c.pos < c.len && get_hpke_config(&c, &v)) {
            if (seen_before(seen, v.id)) {
                rd_fail(&c, "two HPKE configurations with one id");
            }
            out.n++;
        }
        if (c.why != NULL) {
            rd_fail(&r, c.why);
        }
        out.bytes = content;
    }
    return done(&r, reason, l, &out, sizeof(out));
}

/* ---- whole messages, as pieces in the draft's order ----------------------------------------- */

static int put_init_head(wr_t *w, const void *v)
{
    const dap_agg_job_init_req_t *m = v;
    wr_uint(w, 1, m->verification_key_id);
    return wr_vec(w, 4, 0, m->agg_param) && put_ext_list(w, &m->extensions, 1);
}

static int get_init_req(rd_t *r, dap_agg_job_init_req_t *m)
{
    dap_verify_init_t item;
    return rd_u8(r, &m->verification_key_id) && rd_vec(r, 4, 0, &m->agg_param) &&
           get_ext_list(r, 1, &m->extensions) &&
           get_items_to_end(r, get_verify_init, &item, &m->verify_inits);
}

static int get_agg_job_resp(rd_t *r, dap_list_t *l)
{
    dap_verify_resp_t item;
    return get_items_to_end(r, get_verify_resp, &item, l);
}

static int put_continue_head(wr_t *w, const void *v)
{
    const dap_agg_job_continue_req_t *m = v;
    wr_uint(w, 2, m->step);
    return m->step >= 1u;
}

static int get_continue_req(rd_t *r, dap_agg_job_continue_req_t *m)
{
    dap_verify_continue_t item;
    if (!rd_u16(r, &m->step)) {
        return 0;
    }
    if (m->step == 0u) {
        return rd_fail(r, "continuation step 0");
    }
    return get_items_to_end(r, get_verify_continue, &item, &m->verify_continues);
}

static int get_upload_errors(rd_t *r, dap_list_t *l)
{
    dap_upload_status_t item;
    if (r->len % (DPM_DAP_REPORT_ID_BYTES + 1u) != 0) {
        return rd_fail(r, "length not a multiple of ReportUploadStatus");
    }
    return get_items_to_end(r, get_upload_status, &item, l);
}

static int put_agg_share_req(wr_t *w, const void *v)
{
    const dap_agg_share_req_t *m = v;
    if (!put_collection_job_req(w, &m->collection_job_req) ||
        !put_batch(w, 1, &m->batch_selector) || m->checksum == NULL) {
        return 0;
    }
    wr_uint(w, 8, m->report_count);
    wr_bytes(w, m->checksum, DAP_CHECKSUM_BYTES);
    return 1;
}

static int get_agg_share_req(rd_t *r, dap_agg_share_req_t *m)
{
    return get_collection_job_req(r, &m->collection_job_req) &&
           get_batch(r, 1, &m->batch_selector) && rd_uint(r, 8, &m->report_count) &&
           rd_fixed(r, DAP_CHECKSUM_BYTES, &m->checksum);
}

static int put_collection_job_resp(wr_t *w, const void *v)
{
    const dap_collection_job_resp_t *m = v;
    wr_uint(w, 8, m->report_count);
    put_interval(w, &m->interval);
    return put_hpke_ct(w, &m->leader_share) && put_hpke_ct(w, &m->helper_share);
}

static int get_collection_job_resp(rd_t *r, dap_collection_job_resp_t *m)
{
    return rd_uint(r, 8, &m->report_count) && get_interval(r, &m->interval) &&
           get_hpke_ct(r, &m->leader_share) && get_hpke_ct(r, &m->helper_share);
}

/* ---- the public encoders, decoders and iterators -------------------------------------------
 * Each is a binding of a writer or reader above, declared and documented in dap_msg.h:
 * ENCODER defines dap_msg_NAME_encode (encode() over a writer), DECODER dap_msg_NAME_decode (the
 * whole input read by getter, an expression filling `out` from `r`), CODEC both, NEXT
 * dap_msg_next_NAME (next() over an item reader). */

/* T is a type: it cannot be put in parentheses. */
/* NOLINTBEGIN(bugprone-macro-parentheses) */
#define ENCODER(name, T, put)                                                                      \
    dpm_status_t dap_msg_##name##_encode(const T *m, uint8_t *buf, size_t cap, size_t *len)        \
    {                                                                                              \
        return encode(put, m, buf, cap, len);                                                      \
    }

#define DECODER(name, T, getter)                                                                   \
    dpm_status_t dap_msg_##name##_decode(const uint8_t *bytes, size_t len, T *m,                   \
                                         const char **reason)                                      \
    {                                                                                              \
        if (!DECODE_ARGS_OK(bytes, len, m)) {                                                      \
            return param(reason);                                                                  \
        }                                                                                          \
        rd_t r = {bytes, len, 0, NULL};                                                            \
        T out;                                                                                     \
        memset(&out, 0, sizeof(out));                                                              \
        (void)(getter);                                                                            \
        return done(&r, reason, m, &out, sizeof(out));                                             \
    }

#define CODEC(name, T, put, getter) ENCODER(name, T, put) DECODER(name, T, getter)

#define NEXT(name, T, get)                                                                         \
    dpm_status_t dap_msg_next_##name(const dap_list_t *l, size_t *pos, T *item)                    \
    {                                                                                              \
        return next(l, pos, get, item);                                                            \
    }
/* NOLINTEND(bugprone-macro-parentheses) */

CODEC(hpke_ct, dap_hpke_ct_t, put_hpke_ct, get_hpke_ct(&r, &out))
CODEC(agg_share, dap_hpke_ct_t, put_hpke_ct, get_hpke_ct(&r, &out))
CODEC(report_metadata, dap_report_metadata_t, put_metadata, get_metadata(&r, &out))
CODEC(report_share, dap_report_share_t, put_report_share, get_report_share(&r, &out))
CODEC(agg_job_init_req, dap_agg_job_init_req_t, put_init_head, get_init_req(&r, &out))
ENCODER(verify_init, dap_verify_init_t, put_verify_init)
ENCODER(verify_resp, dap_verify_resp_t, put_verify_resp)
DECODER(agg_job_resp, dap_list_t, get_agg_job_resp(&r, &out))
CODEC(agg_job_continue_req, dap_agg_job_continue_req_t, put_continue_head,
      get_continue_req(&r, &out))
ENCODER(verify_continue, dap_verify_continue_t, put_verify_continue)
ENCODER(upload_status, dap_upload_status_t, put_upload_status)
DECODER(upload_errors, dap_list_t, get_upload_errors(&r, &out))
CODEC(query, dap_batch_t, put_query, get_batch(&r, 0, &out))
CODEC(batch_selector, dap_batch_t, put_selector, get_batch(&r, 1, &out))
CODEC(collection_job_req, dap_collection_job_req_t, put_collection_job_req,
      get_collection_job_req(&r, &out))
CODEC(agg_share_req, dap_agg_share_req_t, put_agg_share_req, get_agg_share_req(&r, &out))
CODEC(collection_job_resp, dap_collection_job_resp_t, put_collection_job_resp,
      get_collection_job_resp(&r, &out))

NEXT(ext, dap_ext_t, get_ext)
NEXT(hpke_config, dap_hpke_config_view_t, get_hpke_config)
NEXT(verify_init, dap_verify_init_t, get_verify_init)
NEXT(verify_resp, dap_verify_resp_t, get_verify_resp)
NEXT(verify_continue, dap_verify_continue_t, get_verify_continue)
NEXT(upload_status, dap_upload_status_t, get_upload_status)
