/* SPDX-License-Identifier: Apache-2.0 */
/* Minimal HTTP/1.1 client: a POST request writer and a strict, bounded response parser over
 * the port transport (coreHTTP transport contract: bytes moved, 0 = try later, < 0 = error). */
#include "dpm_internal.h"

#include "dpm/expert/uploader.h"
#include "dpm/expert/http.h"
#include "upload/http_internal.h"

enum { ST_STATUS, ST_HEADERS, ST_BODY, ST_DONE, ST_ERROR };

#define CONTENT_LENGTH_MAX 1000000000u
#define RETRY_AFTER_MAX 86400u /* one day: a larger Retry-After is read as this */
#define RECV_CHUNK 64u

/* ---- request --------------------------------------------------------------------------- */

static size_t bounded_len(const char *s, size_t max)
{
    size_t n = 0;
    while (n <= max && s[n] != '\0') {
        n++;
    }
    return n;
}

int dpm_http_host_ok(const char *host)
{
    if (host == NULL) {
        return 0;
    }
    size_t n = bounded_len(host, DPM_HTTP_MAX_HOST);
    if (n == 0 || n > DPM_HTTP_MAX_HOST) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        char c = host[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.' || c == '_' || c == ':' || c == '[' || c == ']';
        if (!ok) {
            return 0;
        }
    }
    return 1;
}

int dpm_http_path_ok(const char *path)
{
    if (path == NULL || path[0] != '/') {
        return 0;
    }
    size_t n = bounded_len(path, DPM_HTTP_MAX_PATH);
    if (n > DPM_HTTP_MAX_PATH) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if ((unsigned char)path[i] < 0x21u || (unsigned char)path[i] > 0x7Eu) {
            return 0;
        }
    }
    return 1;
}

int dpm_http_token_ok(const char *token)
{
    if (token == NULL) {
        return 0;
    }
    size_t n = bounded_len(token, DPM_HTTP_MAX_TOKEN);
    if (n == 0 || n > DPM_HTTP_MAX_TOKEN) {
        return 0;
    }
    /* RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
    size_t i = 0;
    for (; i < n; i++) {
        char c = token[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
        if (!ok) {
            break;
        }
    }
    if (i == 0) {
        return 0;
    }
    while (i < n && token[i] == '=') {
        i++;
    }
    return i == n;
}

typedef struct {
    uint8_t *buf;
    size_t cap;
    size_t len;
    int overflow;
} appender_t;

static void append(appender_t *a, const char *s)
{
    size_t n = strlen(s);
    if (a->overflow || n > a->cap - a->len) {
        a->overflow = 1;
        return;
    }
    if (a->buf != NULL) {
        memcpy(a->buf + a->len, s, n);
    }
    a->len += n;
}

static void append_u32(appender_t *a, uint32_t v)
{
    char digits[11];
    size_t n = sizeof(digits) - 1;
    digits[n] = '\0';
    do {
        digits[--n] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0);
    append(a, digits + n);
}

/* The head of a request: a POST with a protobuf body, or a GET (content_length < 0); with a
 * bearer token unless token is NULL. */
static dpm_status_t write_head(uint8_t *buf, size_t cap, const char *host, const char *path,
                               const char *token, int64_t content_length, size_t *len)
{
    if (buf == NULL || len == NULL || !dpm_http_host_ok(host) || !dpm_http_path_ok(path) ||
        (token != NULL && !dpm_http_token_ok(token))) {
        return DPM_ERR_PARAM;
    }
    /* Two passes: measure (buf NULL), then write only if it all fits, so a buffer that is
     * too small is left untouched. */
    appender_t a = {NULL, cap, 0, 0};
    for (int pass = 0; pass < 2; pass++) {
        append(&a, content_length < 0 ? "GET " : "POST ");
        append(&a, path);
        append(&a, " HTTP/1.1\r\nHost: ");
        append(&a, host);
        if (token != NULL) {
            append(&a, "\r\nAuthorization: Bearer ");
            append(&a, token);
        }
        if (content_length < 0) {
            append(&a, "\r\nAccept: application/x-protobuf");
        } else {
            append(&a, "\r\nContent-Type: application/x-protobuf\r\nContent-Length: ");
            append_u32(&a, (uint32_t)content_length);
        }
        append(&a, "\r\nConnection: keep-alive\r\n\r\n");
        if (a.overflow) {
            return DPM_ERR_BUFFER;
        }
        if (pass == 0) {
            a.buf = buf;
            a.len = 0;
        }
    }
    *len = a.len;
    return DPM_OK;
}

dpm_status_t dpm_http_write_request(uint8_t *buf, size_t cap, const char *host, const char *path,
                                    uint32_t content_length, size_t *len)
{
    return write_head(buf, cap, host, path, NULL, content_length, len);
}

dpm_status_t dpm_http_write_post(uint8_t *buf, size_t cap, const char *host, const char *path,
                                 const char *token, uint32_t content_length, size_t *len)
{
    return write_head(buf, cap, host, path, token, content_length, len);
}

dpm_status_t dpm_http_write_get(uint8_t *buf, size_t cap, const char *host, const char *path,
                                size_t *len)
{
    return write_head(buf, cap, host, path, NULL, -1, len);
}

/* ---- response parser -------------------------------------------------------------------- */

int dpm_http_later_status(uint32_t status)
{
    return status >= 500 || status == 408 || status == 429;
}

dpm_status_t dpm_http_response_init(dpm_http_response_t *r, uint8_t *body, size_t body_cap)
{
    if (r == NULL || (body == NULL && body_cap > 0)) {
        return DPM_ERR_PARAM;
    }
    memset(r, 0, sizeof(*r));
    r->body = body;
    r->body_cap = body_cap;
    r->state = ST_STATUS;
    return DPM_OK;
}

int dpm_http_response_done(const dpm_http_response_t *r)
{
    return r != NULL && r->state == ST_DONE;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* Case-insensitive equality of s[0..n) with the lower-case literal lit. */
static int ieq(const char *s, size_t n, const char *lit)
{
    size_t i = 0;
    for (; i < n && lit[i] != '\0'; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        }
        if (c != lit[i]) {
            return 0;
        }
    }
    return i == n && lit[i] == '\0';
}

static dpm_status_t status_line(dpm_http_response_t *r, const char *s, size_t n)
{
    /* "HTTP/1.x DDD" then the end, or SP and a reason phrase (control bytes were refused). */
    if (n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') || s[8] != ' ' ||
        !is_digit(s[9]) || !is_digit(s[10]) || !is_digit(s[11]) || s[9] < '1' || s[9] > '5' ||
        (n > 12 && s[12] != ' ')) {
        return DPM_ERR_PROTOCOL;
    }
    r->status =
        (uint32_t)(s[9] - '0') * 100u + (uint32_t)(s[10] - '0') * 10u + (uint32_t)(s[11] - '0');
    r->close = s[7] == '0'; /* HTTP/1.0: no persistent connection assumed */
    r->have_length = 0;
    r->content_length = 0;
    r->retry_after_s = 0;
    r->state = ST_HEADERS;
    return DPM_OK;
}

static dpm_status_t end_of_head(dpm_http_response_t *r)
{
    if (r->status < 200) {
        /* Interim response: the real one follows. 101 would switch protocols: not ours. */
        if (r->status == 101) {
            return DPM_ERR_PROTOCOL;
        }
        r->state = ST_STATUS;
        return DPM_OK;
    }
    if (r->status == 204 || r->status == 304) {
        if (r->have_length && r->content_length != 0) {
            return DPM_ERR_PROTOCOL;
        }
        r->content_length = 0;
    } else if (!r->have_length || r->content_length > r->body_cap) {
        return DPM_ERR_PROTOCOL; /* no framing we accept, or a body we cannot hold */
    }
    r->state = r->content_length == 0 ? ST_DONE : ST_BODY;
    return DPM_OK;
}

static dpm_status_t header_line(dpm_http_response_t *r, const char *s, size_t n)
{
    if (n == 0) {
        return end_of_head(r);
    }
    if (++r->nheaders > DPM_HTTP_MAX_HEADERS || s[0] == ' ' || s[0] == '\t') {
        return DPM_ERR_PROTOCOL; /* too many, or obsolete line folding */
    }
    size_t colon = 0;
    while (colon < n && s[colon] != ':') {
        if (!is_tchar(s[colon])) {
            return DPM_ERR_PROTOCOL; /* includes whitespace before the colon */
        }
        colon++;
    }
    if (colon == 0 || colon == n) {
        return DPM_ERR_PROTOCOL;
    }
    size_t v = colon + 1, end = n;
    while (v < end && (s[v] == ' ' || s[v] == '\t')) {
        v++;
    }
    while (end > v && (s[end - 1] == ' ' || s[end - 1] == '\t')) {
        end--;
    }
    if (ieq(s, colon, "content-length")) {
        uint32_t value = 0;
        if (r->have_length || end == v || end - v > 10) {
            return DPM_ERR_PROTOCOL; /* repeated, empty, or absurdly long */
        }
        for (size_t i = v; i < end; i++) {
            if (!is_digit(s[i])) {
                return DPM_ERR_PROTOCOL;
            }
            uint64_t next = (uint64_t)value * 10u + (uint32_t)(s[i] - '0');
            if (next > CONTENT_LENGTH_MAX) {
                return DPM_ERR_PROTOCOL;
            }
            value = (uint32_t)next;
        }
        r->content_length = value;
        r->have_length = 1;
    } else if (ieq(s, colon, "retry-after")) {
        /* delta-seconds only; an HTTP date (or anything else) is ignored: the backoff holds */
        uint32_t value = 0;
        size_t i = v;
        for (; i < end && is_digit(s[i]); i++) {
            value = value * 10u + (uint32_t)(s[i] - '0');
            if (value > RETRY_AFTER_MAX) {
                value = RETRY_AFTER_MAX; /* and keep reading digits: it stays capped */
            }
        }
        r->retry_after_s = i == end && end > v ? value : 0;
    } else if (ieq(s, colon, "transfer-encoding")) {
        return DPM_ERR_PROTOCOL; /* chunked or any other coding: not supported */
    } else if (ieq(s, colon, "connection")) {
        size_t i = v;
        while (i < end) {
            size_t j = i;
            while (j < end && s[j] != ',') {
                j++;
            }
            size_t a = i, b = j;
            while (a < b && (s[a] == ' ' || s[a] == '\t')) {
                a++;
            }
            while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t')) {
                b--;
            }
            if (ieq(s + a, b - a, "close")) {
                r->close = 1;
            }
            i = j + 1;
        }
    }
    return DPM_OK;
}

/* One complete line (CR LF stripped) of the head. */
static dpm_status_t head_line(dpm_http_response_t *r)
{
    const char *s = r->line;
    size_t n = r->line_len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20u && c != '\t') || c == 0x7Fu) {
            return DPM_ERR_PROTOCOL; /* control bytes, including a stray CR */
        }
    }
    return r->state == ST_STATUS ? status_line(r, s, n) : header_line(r, s, n);
}

dpm_status_t dpm_http_response_feed(dpm_http_response_t *r, const uint8_t *data, size_t len,
                                    size_t *used)
{
    if (r == NULL || used == NULL || (data == NULL && len > 0)) {
        return DPM_ERR_PARAM;
    }
    size_t i = 0;
    dpm_status_t st = r->state == ST_ERROR ? DPM_ERR_PROTOCOL : DPM_OK;
    while (st == DPM_OK && i < len && r->state != ST_DONE) {
        if (r->state == ST_BODY) {
            size_t want = r->content_length - r->body_len;
            size_t n = len - i < want ? len - i : want;
            memcpy(r->body + r->body_len, data + i, n);
            r->body_len += n;
            i += n;
            if (r->body_len == r->content_length) {
                r->state = ST_DONE;
            }
            continue;
        }
        char ch = (char)data[i++];
        int is_lf = ch == '\n';
        /* Refused: a head over its byte limit, a line (plus its CR) over DPM_HTTP_MAX_LINE,
         * a line not ended by CR LF (bare LF). */
        if (++r->header_bytes > DPM_HTTP_MAX_HEADER_BYTES ||
            (!is_lf && r->line_len >= DPM_HTTP_MAX_LINE + 1u) ||
            (is_lf && (r->line_len == 0 || r->line[r->line_len - 1] != '\r'))) {
            st = DPM_ERR_PROTOCOL;
        } else if (is_lf) {
            r->line_len--;
            r->line[r->line_len] = '\0';
            st = head_line(r);
            r->line_len = 0;
        } else {
            r->line[r->line_len++] = ch;
        }
    }
    if (st != DPM_OK) {
        r->state = ST_ERROR;
        return st;
    }
    *used = i;
    return DPM_OK;
}

/* ---- over the transport ----------------------------------------------------------------- */

dpm_status_t dpm_http_send_all(const dpm_transport_t *t, const dpm_clock_t *c, uint64_t deadline_ms,
                               const uint8_t *buf, size_t len)
{
    if (t == NULL || t->send == NULL || c == NULL || c->monotonic_ms == NULL ||
        (buf == NULL && len > 0)) {
        return DPM_ERR_PARAM;
    }
    size_t sent = 0;
    while (sent < len) {
        if (c->monotonic_ms(c->ctx) >= deadline_ms) {
            return DPM_ERR_TIMEOUT;
        }
        int32_t n = t->send(t->ctx, buf + sent, len - sent);
        if (n < 0 || (size_t)n > len - sent) {
            return DPM_ERR_TRANSPORT;
        }
        sent += (size_t)n;
    }
    return DPM_OK;
}

dpm_status_t dpm_http_read_response(const dpm_transport_t *t, const dpm_clock_t *c,
                                    uint64_t deadline_ms, dpm_http_response_t *r)
{
    if (t == NULL || t->recv == NULL || c == NULL || c->monotonic_ms == NULL || r == NULL) {
        return DPM_ERR_PARAM;
    }
    uint8_t chunk[RECV_CHUNK];
    while (r->state != ST_DONE) {
        if (r->state == ST_ERROR) {
            return DPM_ERR_PROTOCOL;
        }
        if (c->monotonic_ms(c->ctx) >= deadline_ms) {
            return DPM_ERR_TIMEOUT;
        }
        size_t want = sizeof(chunk);
        if (r->state == ST_BODY && r->content_length - r->body_len < want) {
            want = r->content_length - r->body_len; /* never read past our response */
        }
        int32_t n = t->recv(t->ctx, chunk, want);
        if (n < 0 || (size_t)n > want) {
            return DPM_ERR_TRANSPORT;
        }
        size_t used = 0;
        dpm_status_t st = dpm_http_response_feed(r, chunk, (size_t)n, &used);
        if (st != DPM_OK) {
            return st;
        }
        if (used != (size_t)n) {
            r->state = ST_ERROR;
            return DPM_ERR_PROTOCOL; /* bytes after the end of the response */
        }
    }
    return DPM_OK;
}
