/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP/1.1 request-head parser and response formatter (see http.h). Every index is checked
 * against the length it was given: the head comes straight from the network. */
#include "collector/ingest/http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

size_t http_head_end(const char *buf, size_t len)
{
    for (size_t i = 3; i < len; i++) {
        if (buf[i] == '\n' && buf[i - 1] == '\r' && buf[i - 2] == '\n' && buf[i - 3] == '\r') {
            return i + 1;
        }
    }
    return 0;
}

/* RFC 9110 tchar. */
static int is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        return 1;
    }
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c;
}

/* Case-insensitive comparison of s[0, n) with the NUL-terminated lower-case word w. */
static int word_is(const char *s, size_t n, const char *w)
{
    size_t wn = strlen(w);
    if (n != wn) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (lower((unsigned char)s[i]) != w[i]) {
            return 0;
        }
    }
    return 1;
}

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* Field value characters: visible ASCII, obs-text, spaces and tabs; no controls. */
static int is_value_char(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7F);
}

/* Connection: a comma-separated token list; only close and keep-alive matter. */
static void parse_connection(const char *v, size_t n, http_request_t *req)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && (is_ows(v[i]) || v[i] == ',')) {
            i++;
        }
        size_t start = i;
        while (i < n && v[i] != ',' && !is_ows(v[i])) {
            i++;
        }
        if (word_is(v + start, i - start, "close")) {
            req->keep_alive = 0;
        } else if (word_is(v + start, i - start, "keep-alive") && req->minor == 0) {
            req->keep_alive = 1;
        }
    }
}

/* Content-Length: 1*DIGIT, at most 18 digits (no overflow); repeats must agree. */
static int parse_length(const char *v, size_t n, http_request_t *req)
{
    if (n == 0 || n > 18) {
        return 400;
    }
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') {
            return 400;
        }
        x = x * 10u + (uint64_t)(v[i] - '0');
    }
    if (req->has_length && req->content_length != x) {
        return 400;
    }
    req->has_length = 1;
    req->content_length = x;
    return 0;
}

/* A header kept as text: a repeat or a value too long for its field (NUL included) is a 400,
   the same rule for every such header. */
static int keep_once(char *dst, size_t cap, int *has, const char *v, size_t vlen)
{
    if (*has || vlen >= cap) {
        return 400;
    }
    memcpy(dst, v, vlen);
    dst[vlen] = '\0';
    *has = 1;
    return 0;
}

static int parse_header(const char *name, size_t nlen, const char *v, size_t vlen,
                        http_request_t *req)
{
    if (word_is(name, nlen, "content-length")) {
        return parse_length(v, vlen, req);
    }
    if (word_is(name, nlen, "host")) {
        if (req->has_host && !req->absolute_form) {
            return 400; /* RFC 9112 §3.2: more than one Host */
        }
        req->has_host = 1;
        return 0;
    }
    if (word_is(name, nlen, "authorization")) {
        return keep_once(req->authorization, sizeof(req->authorization), &req->has_authorization, v,
                         vlen);
    }
    if (word_is(name, nlen, "dap-auth-token")) { /* DAP: Janus's other way to send a token */
        return keep_once(req->dap_auth_token, sizeof(req->dap_auth_token), &req->has_dap_auth_token,
                         v, vlen);
    }
    if (word_is(name, nlen, "dpm-task-digest")) { /* DAP: the leader's view of the task */
        return keep_once(req->task_digest, sizeof(req->task_digest), &req->has_task_digest, v,
                         vlen);
    }
    if (word_is(name, nlen, "transfer-encoding")) {
        req->has_transfer_encoding = 1;
    } else if (word_is(name, nlen, "connection")) {
        parse_connection(v, vlen, req);
    } else if (word_is(name, nlen, "content-type")) {
        return keep_once(req->content_type, sizeof(req->content_type), &req->has_content_type, v,
                         vlen);
    } else if (word_is(name, nlen, "expect")) {
        if (!word_is(v, vlen, "100-continue")) {
            return 417;
        }
        req->expect_continue = 1;
    }
    return 0;
}

static int parse_request_line(const char *s, size_t n, http_request_t *req)
{
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)s[i])) {
        i++;
    }
    if (i == 0 || i >= n || s[i] != ' ') {
        return 400;
    }
    if (i == 3 && memcmp(s, "GET", 3) == 0) {
        req->method = HTTP_GET;
    } else if (i == 4 && memcmp(s, "POST", 4) == 0) {
        req->method = HTTP_POST;
    } else if (i == 4 && memcmp(s, "HEAD", 4) == 0) {
        req->method = HTTP_HEAD;
    } else {
        req->method = HTTP_OTHER;
    }
    size_t t = ++i;
    while (i < n && s[i] != ' ') {
        unsigned char c = (unsigned char)s[i];
        if (c <= 0x20 || c >= 0x7F) {
            return 400;
        }
        i++;
    }
    size_t tlen = i - t;
    if (tlen == 0 || i >= n) {
        return 400;
    }
    if (s[t] != '/') {
        /* absolute-form: scheme "://" authority [path]; the path (or "/") is the target */
        size_t k = 0;
        if (tlen > 8 && strncmp(s + t, "https://", 8) == 0) {
            k = 8;
        } else if (tlen > 7 && strncmp(s + t, "http://", 7) == 0) {
            k = 7;
        } else {
            return 400;
        }
        size_t auth = k;
        while (k < tlen && s[t + k] != '/' && s[t + k] != '?') {
            k++;
        }
        if (k == auth) {
            return 400; /* empty authority */
        }
        req->absolute_form = 1;
        req->has_host = 1;
        size_t plen = tlen - k;
        if (plen + 1 >= sizeof(req->target)) {
            return 414;
        }
        req->target[0] = '/';
        size_t at = s[t + k] == '/' ? 0 : 1; /* "https://h?x" -> "/?x" */
        memcpy(req->target + at, s + t + k, plen);
        req->target[at + plen] = '\0';
    } else {
        if (tlen >= sizeof(req->target)) {
            return 414;
        }
        memcpy(req->target, s + t, tlen);
        req->target[tlen] = '\0';
    }
    i++;
    if (n - i != 8 || memcmp(s + i, "HTTP/", 5) != 0 || s[i + 6] != '.' || s[i + 5] < '0' ||
        s[i + 5] > '9' || s[i + 7] < '0' || s[i + 7] > '9') {
        return 400;
    }
    if (s[i + 5] != '1') {
        return 505;
    }
    req->minor = s[i + 7] == '0' ? 0 : 1; /* a later 1.x is answered as 1.1 */
    req->keep_alive = req->minor == 1;
    return 0;
}

int http_parse_head(const char *buf, size_t len, http_request_t *req)
{
    memset(req, 0, sizeof(*req));
    if (len < 4 || len > HTTP_MAX_HEAD || http_head_end(buf, len) != len) {
        return 400;
    }
    size_t end = len - 2; /* the final CRLF: lines are [pos, CRLF) before it */
    size_t pos = 0;
    int nheaders = 0;
    int first = 1;
    while (pos < end) {
        size_t eol = pos;
        while (eol + 1 < len && !(buf[eol] == '\r' && buf[eol + 1] == '\n')) {
            if (buf[eol] == '\r' || buf[eol] == '\n' || buf[eol] == '\0') {
                return 400; /* bare CR/LF or NUL inside a line */
            }
            eol++;
        }
        if (eol + 1 >= len) {
            return 400;
        }
        const char *line = buf + pos;
        size_t n = eol - pos;
        if (first) {
            int st = parse_request_line(line, n, req);
            if (st != 0) {
                return st;
            }
            first = 0;
        } else {
            if (++nheaders > HTTP_MAX_HEADERS) {
                return 431;
            }
            size_t c = 0;
            while (c < n && is_tchar((unsigned char)line[c])) {
                c++;
            }
            /* obs-fold, whitespace before ':' and empty names are all rejected */
            if (c == 0 || c >= n || line[c] != ':') {
                return 400;
            }
            size_t v = c + 1;
            size_t ve = n;
            while (v < ve && is_ows(line[v])) {
                v++;
            }
            while (ve > v && is_ows(line[ve - 1])) {
                ve--;
            }
            for (size_t k = v; k < ve; k++) {
                if (!is_value_char((unsigned char)line[k])) {
                    return 400;
                }
            }
            int st = parse_header(line, c, line + v, ve - v, req);
            if (st != 0) {
                return st;
            }
        }
        pos = eol + 2;
    }
    if (first) {
        return 400;
    }
    if (req->has_transfer_encoding) {
        return 501;
    }
    if (req->minor == 1 && !req->has_host) {
        return 400; /* RFC 9112 §3.2: an HTTP/1.1 request must carry Host */
    }
    return 0;
}

const char *http_bearer_token(const http_request_t *req, size_t *len)
{
    if (!req->has_authorization || strlen(req->authorization) < 7 ||
        !word_is(req->authorization, 7, "bearer ")) {
        return NULL;
    }
    const char *t = req->authorization + 7;
    while (*t == ' ') {
        t++;
    }
    *len = strlen(t);
    return *len > 0 ? t : NULL;
}

static int b64val(unsigned char ch)
{
    return ch >= 'A' && ch <= 'Z'   ? ch - 'A'
           : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26
           : ch >= '0' && ch <= '9' ? ch - '0' + 52
           : ch == '+'              ? 62
           : ch == '/'              ? 63
                                    : -1;
}

/* Standard base64 (padding optional) of s into out (cap bytes, NUL-terminated): its length,
 * or -1 if s is not base64 or does not fit. */
static long b64decode(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s), o = 0;
    while (n > 0 && s[n - 1] == '=') {
        n--;
    }
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64val((unsigned char)s[i]);
        if (v < 0) {
            return -1;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            if (o + 1 >= cap) {
                return -1;
            }
            out[o++] = (char)((acc >> bits) & 0xFF);
        }
    }
    out[o] = '\0';
    return (long)o;
}

const char *http_auth_token(const http_request_t *req, char *buf, size_t cap, size_t *len)
{
    const char *bearer = http_bearer_token(req, len);
    if (bearer != NULL || !req->has_authorization) {
        return bearer;
    }
    const char *a = req->authorization;
    if (strncasecmp(a, "basic ", 6) != 0) {
        return NULL;
    }
    a += 6;
    while (*a == ' ') {
        a++;
    }
    long n = b64decode(a, buf, cap);
    char *colon = n > 0 ? memchr(buf, ':', (size_t)n) : NULL;
    if (colon == NULL || memchr(buf, '\0', (size_t)n) != NULL) {
        return NULL; /* user:password, no NUL inside */
    }
    *len = (size_t)(buf + n - (colon + 1));
    return *len > 0 ? colon + 1 : NULL;
}

int http_content_type_is(const http_request_t *req, const char *type)
{
    if (!req->has_content_type) {
        return 0;
    }
    const char *v = req->content_type;
    size_t n = 0;
    while (v[n] != '\0' && v[n] != ';' && !is_ows(v[n])) {
        n++;
    }
    for (size_t k = n; v[k] != '\0' && v[k] != ';'; k++) {
        if (!is_ows(v[k])) {
            return 0; /* "a b" is not a media type */
        }
    }
    return word_is(v, n, type);
}

const char *http_reason(int status)
{
    switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 417: return "Expectation Failed";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
    }
}

int http_format_response(int status, const char *content_type, const uint8_t *body, size_t len,
                         int keep_alive, const char *extra_headers, int head_only, uint8_t **out,
                         size_t *out_len)
{
    char head[768];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nServer: dpm-collector\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\nConnection: %s\r\n%s\r\n",
                     status, http_reason(status), content_type, len,
                     keep_alive ? "keep-alive" : "close", extra_headers ? extra_headers : "");
    if (n < 0 || (size_t)n >= sizeof(head)) {
        return -1;
    }
    if (head_only) {
        len = 0;
    }
    uint8_t *buf = malloc((size_t)n + len + 1);
    if (buf == NULL) {
        return -1;
    }
    memcpy(buf, head, (size_t)n);
    if (len > 0) {
        memcpy(buf + n, body, len);
    }
    *out = buf;
    *out_len = (size_t)n + len;
    return 0;
}
