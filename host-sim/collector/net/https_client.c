/* SPDX-License-Identifier: Apache-2.0 */
/* Blocking HTTPS client: URL, resolver, connect, Mbed TLS session, HTTP/1.1 response reader
 * (see https_client.h). */
#include "collector/net/https_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mbedtls/error.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/platform_util.h"

#include "collector/net/tls_server.h"
#include "common/err.h"

#define HOST_MAX 254        /* a DNS name's 253 characters and the NUL */
#define MAX_ADDRS 8         /* addresses tried per host, in the resolver's order */
#define REQ_HEAD_MAX 8192   /* our request head, the bearer token included */
#define CHUNK_LINE_MAX 1024 /* a chunk's size line, extensions included */
/* Room for the longest head line and its CR LF, plus a little so a read can top it up. */
#define READ_BUF (COLL_HTTPS_MAX_HEAD + 64)
#define SHOW_MAX 64      /* bytes of a malformed line quoted in why */
#define URL_SHOW_MAX 160 /* bytes of the URL quoted in why */

/* ---- configuration ------------------------------------------------------------------------ */

int coll_https_init(coll_https_t *c, const char *ca_path, char *err, size_t cap)
{
    memset(c, 0, sizeof(*c));
    mbedtls_ssl_config_init(&c->conf);
    mbedtls_x509_crt_init(&c->ca);
    if (ca_path == NULL || ca_path[0] == '\0') {
        snprintf(err, cap,
                 "no CA bundle given: name the PEM or DER file of the CA that issued "
                 "the server's certificate");
        return -1;
    }
    if (coll_tls_rng_init(&c->rng, "dpm-collector https client", err, cap) != 0) {
        return -1;
    }
    FILE *f = fopen(ca_path, "rb"); /* for errno's words: Mbed TLS says only "failed" */
    if (f == NULL) {
        snprintf(err, cap, "cannot open CA bundle %s: %s", ca_path, strerror(errno));
        coll_https_free(c);
        return -1;
    }
    fclose(f);
    int ret = mbedtls_x509_crt_parse_file(&c->ca, ca_path);
    if (ret != 0) {
        char msg[128];
        if (ret > 0) {
            /* A bundle Mbed TLS reads only in part would trust less than its owner thinks. */
            snprintf(msg, sizeof(msg), "%d of its certificates could not be parsed", ret);
        } else {
            mbedtls_strerror(ret, msg, sizeof(msg));
        }
        snprintf(err, cap,
                 "cannot load CA bundle %s: %s; give a PEM or DER file holding only "
                 "CA certificates",
                 ca_path, msg);
        coll_https_free(c);
        return -1;
    }
    ret = mbedtls_ssl_config_defaults(&c->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                      MBEDTLS_SSL_PRESET_DEFAULT);
    if (ret != 0) {
        char msg[128];
        mbedtls_strerror(ret, msg, sizeof(msg));
        snprintf(err, cap, "TLS client configuration: %s", msg);
        coll_https_free(c);
        return -1;
    }
    mbedtls_ssl_conf_min_tls_version(&c->conf, MBEDTLS_SSL_VERSION_TLS1_2);
    mbedtls_ssl_conf_max_tls_version(&c->conf, MBEDTLS_SSL_VERSION_TLS1_3);
    /* The server's AEAD list: a helper is a collector, so both ends agree on the same suites. */
    mbedtls_ssl_conf_ciphersuites(&c->conf, coll_tls_ciphersuites);
    mbedtls_ssl_conf_rng(&c->conf, dpm_posix_rng_f_rng, &c->rng);
    mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
    mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    return 0;
}

void coll_https_free(coll_https_t *c)
{
    mbedtls_ssl_config_free(&c->conf);
    mbedtls_x509_crt_free(&c->ca);
    dpm_posix_rng_free(&c->rng);
}

/* ---- one exchange's state and its reasons ------------------------------------------------- */

enum { EOF_NONE, EOF_NOTIFY, EOF_TCP };

typedef struct {
    char *why; /* the caller's, or none when it gave no room */
    size_t whycap;
    char none[1];
    const char *method;
    const char *url;     /* for why: printed up to its query */
    size_t url_shown;    /* its length without the query */
    char host[HOST_MAX]; /* without brackets */
    int host_v6;         /* an IPv6 literal: bracketed in Host and in why */
    uint16_t port;
    const char *path; /* in the URL: "/..." or "?..." or "" */
    size_t path_len;
    uint32_t timeout_ms;
    uint64_t start_ms;
    const char *phase; /* what a timeout interrupted */
    coll_tls_bio_t io; /* the socket and the deadline (start_ms + timeout_ms) */
    int ssl_ready;
    mbedtls_ssl_context ssl;
    char head[REQ_HEAD_MAX]; /* the request's head, made before connecting; holds the token */
    size_t head_len;
    /* coll_https_parse_response: the response's bytes, read step bytes at a time, instead of
     * the TLS session's */
    const uint8_t *src;
    size_t src_len, src_off, src_step;
    int src_notify;
    uint8_t buf[READ_BUF]; /* received, not yet consumed: buf[off, len) */
    size_t off, len;
    int eof;
} xfer_t;

/* s[0, n) quoted for why: printable ASCII as is, anything else as \xNN, at most max bytes of s
 * (then "..."); the caller's strings too, so that no CR LF of theirs splits a log line. */
static const char *quote(const char *s, size_t n, size_t max, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && i < max && o + 5 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch < 0x7F && ch != '\'') {
            out[o++] = (char)ch;
        } else {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02X", ch);
        }
    }
    if (n > max && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
    return out;
}

/* "METHOD URL: " (the URL up to its query), then the reason. */
static int failf(xfer_t *x, const char *fmt, ...)
{
    char m[80], u[URL_SHOW_MAX * 4 + 8];
    int n = snprintf(x->why, x->whycap,
                     "%s %s: ", quote(x->method, strlen(x->method), 16, m, sizeof(m)),
                     quote(x->url, x->url_shown, URL_SHOW_MAX, u, sizeof(u)));
    if (n >= 0 && (size_t)n < x->whycap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(x->why + n, x->whycap - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int timed_out(xfer_t *x)
{
    return failf(x,
                 "timed out %s after %llu ms (timeout_ms %u); the server is slow or not "
                 "answering: check it, or allow more time",
                 x->phase, (unsigned long long)(coll_now_ms() - x->start_ms), x->timeout_ms);
}

static int malformed(xfer_t *x, const char *what, const char *line, size_t n)
{
    char q[SHOW_MAX * 4 + 8];
    return failf(x, "malformed response: %s '%s'; is that an HTTP/1.1 server?", what,
                 quote(line, n, SHOW_MAX, q, sizeof(q)));
}

/* ---- URL ---------------------------------------------------------------------------------- */

static int url_fail(xfer_t *x, const char *what)
{
    return failf(x, "bad URL: %s", what);
}

static int parse_url(xfer_t *x)
{
    const char *u = x->url;
    x->url_shown = strcspn(u, "?#");
    if (strncasecmp(u, "https://", 8) != 0) {
        return url_fail(x, "not https:// (this client speaks only HTTPS; write https://host/...)");
    }
    const char *a = u + 8;
    size_t alen = strcspn(a, "/?#");
    const char *at = memchr(a, '@', alen);
    if (at != NULL) {
        /* quoted from after the '@' only: user information may hold a password */
        char m[80], rest[URL_SHOW_MAX * 4 + 8];
        snprintf(
            x->why, x->whycap,
            "%s https://...@%s: bad URL: user information (user@host) is not supported; "
            "send credentials as the bearer token",
            quote(x->method, strlen(x->method), 16, m, sizeof(m)),
            quote(at + 1, x->url_shown - (size_t)(at + 1 - u), URL_SHOW_MAX, rest, sizeof(rest)));
        return -1;
    }
    const char *port_s = NULL;
    size_t hlen;
    if (alen > 0 && a[0] == '[') {
        const char *close = memchr(a, ']', alen);
        if (close == NULL) {
            return url_fail(x, "'[' opens an IPv6 address that no ']' closes");
        }
        hlen = (size_t)(close - a) - 1;
        if (hlen == 0 || hlen >= sizeof(x->host)) {
            return url_fail(x, "empty or overlong IPv6 address in [ ]");
        }
        memcpy(x->host, a + 1, hlen);
        x->host[hlen] = '\0';
        struct in6_addr six;
        if (inet_pton(AF_INET6, x->host, &six) != 1) {
            return url_fail(x, "the host in [ ] is not an IPv6 address");
        }
        x->host_v6 = 1;
        const char *after = close + 1;
        if (after < a + alen) {
            if (*after != ':') {
                return url_fail(x, "only ':port' may follow the IPv6 address's ']'");
            }
            port_s = after + 1;
        }
    } else {
        const char *colon = memchr(a, ':', alen);
        hlen = colon != NULL ? (size_t)(colon - a) : alen;
        if (hlen == 0) {
            return url_fail(x, "no host (write https://host[:port]/path)");
        }
        if (hlen >= sizeof(x->host)) {
            return url_fail(x, "the host name is longer than 253 characters");
        }
        for (size_t i = 0; i < hlen; i++) {
            unsigned char ch = (unsigned char)a[i];
            if (!(ch == '-' || ch == '.' || ch == '_' || (ch >= '0' && ch <= '9') ||
                  (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) {
                return url_fail(x, "the host holds a character no host name has (letters, "
                                   "digits, '-', '.'; IPv6 addresses go in [ ])");
            }
        }
        memcpy(x->host, a, hlen);
        x->host[hlen] = '\0';
        port_s = colon != NULL ? colon + 1 : NULL;
    }
    x->port = 443;
    if (port_s != NULL) {
        size_t plen = (size_t)(a + alen - port_s);
        unsigned long p = 0;
        for (size_t i = 0; i < plen && p <= 65535; i++) {
            if (port_s[i] < '0' || port_s[i] > '9') {
                p = 0;
                break;
            }
            p = p * 10 + (unsigned long)(port_s[i] - '0');
        }
        if (plen == 0 || p == 0 || p > 65535) {
            return url_fail(x, "the port is not a number from 1 to 65535");
        }
        x->port = (uint16_t)p;
    }
    x->path = a + alen;
    x->path_len = strcspn(x->path, "#"); /* a fragment is the client's, never sent */
    for (size_t i = 0; i < x->path_len; i++) {
        unsigned char ch = (unsigned char)x->path[i];
        if (ch <= 0x20 || ch >= 0x7F) {
            return url_fail(x, "the path or query holds a space, control or non-ASCII byte: "
                               "percent-encode it");
        }
    }
    return 0;
}

/* ---- resolving, bounded by the deadline --------------------------------------------------- */

typedef struct {
    struct sockaddr_storage sa;
    socklen_t len;
} addr_t;

/* Shared by the caller and the resolver thread; the last one to let go frees it, so a caller
 * that gave up never waits for getaddrinfo and the thread never writes to freed memory. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    int done;
    int gai;
    int sys_errno; /* the thread's errno for EAI_SYSTEM (errno is per thread) */
    struct addrinfo *list;
    char host[HOST_MAX];
    char service[8];
} resolve_t;

static void resolve_release(resolve_t *q)
{
    pthread_mutex_lock(&q->mu);
    int last = --q->refs == 0;
    pthread_mutex_unlock(&q->mu);
    if (last) {
        if (q->list != NULL) {
            freeaddrinfo(q->list);
        }
        pthread_cond_destroy(&q->cv);
        pthread_mutex_destroy(&q->mu);
        free(q);
    }
}

static void *resolve_thread(void *arg)
{
    resolve_t *q = arg;
    struct addrinfo hints, *list = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int gai = getaddrinfo(q->host, q->service, &hints, &list);
    pthread_mutex_lock(&q->mu);
    q->gai = gai;
    q->sys_errno = errno;
    q->list = gai == 0 ? list : NULL;
    q->done = 1;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    resolve_release(q);
    return NULL;
}

static size_t copy_addrs(const struct addrinfo *ai, addr_t *addrs)
{
    size_t n = 0;
    for (; ai != NULL && n < MAX_ADDRS; ai = ai->ai_next) {
        if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) &&
            ai->ai_addrlen <= sizeof(addrs[n].sa)) {
            memcpy(&addrs[n].sa, ai->ai_addr, ai->ai_addrlen);
            addrs[n].len = ai->ai_addrlen;
            n++;
        }
    }
    return n;
}

/* x->host's addresses into addrs: the number found, or -1 (why set). */
static int resolve(xfer_t *x, addr_t *addrs)
{
    memset(addrs, 0, sizeof(*addrs));
    struct sockaddr_in *in4 = (struct sockaddr_in *)&addrs[0].sa;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&addrs[0].sa;
    if (!x->host_v6 && inet_pton(AF_INET, x->host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons(x->port);
        addrs[0].len = sizeof(*in4);
        return 1;
    }
    if (x->host_v6 && inet_pton(AF_INET6, x->host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(x->port);
        addrs[0].len = sizeof(*in6);
        return 1;
    }
    x->phase = "resolving the host name";
    resolve_t *q = calloc(1, sizeof(*q));
    if (q == NULL) {
        return failf(x, "out of memory resolving %s", x->host);
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* the deadline's clock (coll_now_ms) */
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    q->refs = 2;
    memcpy(q->host, x->host, sizeof(q->host));
    snprintf(q->service, sizeof(q->service), "%u", (unsigned)x->port);
    pthread_attr_t attr;
    pthread_t tid;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&tid, &attr, resolve_thread, q);
    pthread_attr_destroy(&attr);
    if (err != 0) {
        q->refs = 1;
        resolve_release(q);
        return failf(x, "cannot start a thread to resolve %s: %s", x->host, strerror(err));
    }
    struct timespec until = {(time_t)(x->io.deadline_ms / 1000u),
                             (long)(x->io.deadline_ms % 1000u) * 1000000L};
    pthread_mutex_lock(&q->mu);
    while (!q->done) {
        int w = pthread_cond_timedwait(&q->cv, &q->mu, &until);
        if (w == ETIMEDOUT) {
            break;
        }
    }
    int done = q->done, gai = q->gai, sys_errno = q->sys_errno;
    size_t n = done && gai == 0 ? copy_addrs(q->list, addrs) : 0;
    pthread_mutex_unlock(&q->mu);
    resolve_release(q);
    if (!done) {
        return timed_out(x);
    }
    if (gai != 0) {
        return failf(x, "cannot resolve host %s: %s; check the name and the resolver", x->host,
                     gai == EAI_SYSTEM ? strerror(sys_errno) : gai_strerror(gai));
    }
    if (n == 0) {
        return failf(x, "host %s has no IPv4 or IPv6 address", x->host);
    }
    return (int)n;
}

/* ---- connecting --------------------------------------------------------------------------- */

/* An address as text for the messages ("?" if it cannot be shown). */
static const char *addr_text(const addr_t *a, char *out, size_t cap)
{
    const struct sockaddr *sa = (const struct sockaddr *)&a->sa;
    const void *raw = sa->sa_family == AF_INET6
                          ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
                          : (const void *)&((const struct sockaddr_in *)sa)->sin_addr;
    if (inet_ntop(sa->sa_family, raw, out, (socklen_t)cap) == NULL) {
        snprintf(out, cap, "?");
    }
    return out;
}

/* One address: a connected non-blocking socket, or -1 with *err the errno (ETIMEDOUT: the
 * deadline passed). */
static int connect_one(const addr_t *a, uint64_t deadline_ms, int *err)
{
    const struct sockaddr *sa = (const struct sockaddr *)&a->sa;
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    int r = connect(fd, sa, a->len);
    if (r != 0 && errno == EINPROGRESS) {
        int w = coll_wait_fd(fd, POLLOUT, deadline_ms);
        int soerr = 0;
        socklen_t sl = sizeof(soerr);
        if (w == 0) {
            soerr = ETIMEDOUT;
        } else if (w < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) {
            soerr = errno;
        }
        r = soerr == 0 ? 0 : -1;
        errno = soerr;
    }
    if (r != 0) {
        *err = errno;
        close(fd);
        return -1;
    }
    /* The head and the body go out as two writes: Nagle would hold the second for an ACK. */
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static int connect_any(xfer_t *x, const addr_t *addrs, size_t n)
{
    x->phase = "connecting";
    int err = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        x->io.fd = connect_one(&addrs[i], x->io.deadline_ms, &err);
        if (x->io.fd >= 0) {
            return 0;
        }
        if (err == ETIMEDOUT && coll_now_ms() >= x->io.deadline_ms) {
            return timed_out(x);
        }
    }
    char at[INET6_ADDRSTRLEN];
    addr_text(&addrs[n - 1], at, sizeof(at));
    return failf(
        x, "cannot connect to %s port %u%s: %s; is the server running and listening there?", at,
        (unsigned)x->port, n > 1 ? " (nor to the host's other addresses)" : "", strerror(err));
}

/* ---- TLS ---------------------------------------------------------------------------------- */

/* An Mbed TLS error during the exchange: a timeout, or what failed and the library's words. */
static int tls_fail(xfer_t *x, int ret, const char *doing)
{
    if (ret == MBEDTLS_ERR_SSL_TIMEOUT) {
        return timed_out(x);
    }
    char msg[128];
    mbedtls_strerror(ret, msg, sizeof(msg));
    if (ret == MBEDTLS_ERR_NET_CONN_RESET || ret == MBEDTLS_ERR_SSL_CONN_EOF) {
        return failf(x, "%s: the server closed the connection (%s)", doing, msg);
    }
    return failf(x, "%s failed: %s (-0x%04X)", doing, msg, (unsigned)-ret);
}

static int handshake(xfer_t *x, coll_https_t *c)
{
    x->phase = "in the TLS handshake";
    mbedtls_ssl_init(&x->ssl);
    x->ssl_ready = 1;
    int ret = mbedtls_ssl_setup(&x->ssl, &c->conf);
    if (ret == 0) {
        /* The name (or IP address) the certificate must carry; also sent as SNI. */
        ret = mbedtls_ssl_set_hostname(&x->ssl, x->host);
    }
    if (ret != 0) {
        return tls_fail(x, ret, "setting up TLS");
    }
    /* Mbed TLS's callbacks: tls_server.h's, on this exchange's socket and deadline. */
    mbedtls_ssl_set_bio(&x->ssl, &x->io, coll_tls_bio_send, coll_tls_bio_recv, NULL);
    do {
        ret = mbedtls_ssl_handshake(&x->ssl);
    } while (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE);
    if (ret == 0) {
        return 0;
    }
    uint32_t flags = mbedtls_ssl_get_verify_result(&x->ssl);
    if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags != 0 && flags != (uint32_t)-1) {
        char info[512] = "";
        (void)mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
        info[sizeof(info) - 1] = '\0';
        /* one reason a line, each ending in \n: ";"-separated on one line instead */
        for (size_t i = 0; info[i] != '\0'; i++) {
            if (info[i] == '\n') {
                info[i] = info[i + 1] != '\0' ? ';' : '\0';
            }
        }
        return failf(x,
                     "the server's certificate does not verify: %s (expected host name '%s', "
                     "verify flags 0x%X); check that the CA bundle is the one that issued it "
                     "and that the certificate names the URL's host",
                     info, x->host, (unsigned)flags);
    }
    if (ret == MBEDTLS_ERR_SSL_TIMEOUT || ret == MBEDTLS_ERR_NET_CONN_RESET ||
        ret == MBEDTLS_ERR_SSL_CONN_EOF) {
        return tls_fail(x, ret, "the TLS handshake");
    }
    char msg[128];
    mbedtls_strerror(ret, msg, sizeof(msg));
    return failf(x,
                 "the TLS handshake failed: %s (-0x%04X); is that an HTTPS server speaking "
                 "TLS 1.2 or 1.3?",
                 msg, (unsigned)-ret);
}

static int write_all(xfer_t *x, const uint8_t *buf, size_t len)
{
    int ret = coll_tls_ssl_write_all(&x->ssl, buf, len);
    return ret == 0 ? 0 : tls_fail(x, ret, "sending the request");
}

/* ---- the request -------------------------------------------------------------------------- */

static int is_tchar(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

static int is_token68(unsigned char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
           (ch != '\0' && strchr("-._~+/", ch) != NULL);
}

/* Checked before connecting: what a header cannot carry would split the request. */
static int check_request(xfer_t *x, const coll_https_req_t *r)
{
    size_t m = strlen(r->method);
    for (size_t i = 0; i < m; i++) {
        if (!is_tchar((unsigned char)r->method[i])) {
            return failf(x, "the method is not an HTTP token (letters, e.g. GET, POST, PUT)");
        }
    }
    if (m == 0) {
        return failf(x, "no method (GET, POST, PUT)");
    }
    if (r->bearer != NULL) {
        /* token68 (RFC 9110 section 11.2); the token itself is never quoted */
        size_t n = strlen(r->bearer), i = 0;
        while (i < n && is_token68((unsigned char)r->bearer[i])) {
            i++;
        }
        while (i < n && r->bearer[i] == '=') {
            i++;
        }
        if (n == 0 || i != n) {
            return failf(x, "the bearer token is empty or holds a character a token cannot "
                            "(a space, a newline?); check where it was read from");
        }
    }
    for (const char *p = r->content_type; p != NULL && *p != '\0'; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7F) {
            return failf(x, "the Content-Type holds a control character");
        }
    }
    if (r->len > 0 && r->body == NULL) {
        return failf(x, "a body of %zu bytes but no body pointer", r->len);
    }
    return 0;
}

typedef struct {
    char *p;
    size_t len, cap;
    int over;
} head_out_t;

static void put(head_out_t *h, const char *s, size_t n)
{
    if (h->over || n > h->cap - h->len) {
        h->over = 1;
        return;
    }
    memcpy(h->p + h->len, s, n);
    h->len += n;
}

static void puts_(head_out_t *h, const char *s)
{
    put(h, s, strlen(s));
}

/* The request's head into x->head: 0, or -1 (why set) if it does not fit. */
static int make_head(xfer_t *x, const coll_https_req_t *r)
{
    char num[32];
    head_out_t h = {x->head, 0, sizeof(x->head), 0};
    puts_(&h, r->method);
    puts_(&h, " ");
    if (x->path_len == 0 || x->path[0] != '/') {
        puts_(&h, "/"); /* "https://h" and "https://h?q" ask for the root */
    }
    put(&h, x->path, x->path_len);
    puts_(&h, " HTTP/1.1\r\nHost: ");
    puts_(&h, x->host_v6 ? "[" : "");
    puts_(&h, x->host);
    puts_(&h, x->host_v6 ? "]" : "");
    if (x->port != 443) {
        snprintf(num, sizeof(num), ":%u", (unsigned)x->port);
        puts_(&h, num);
    }
    puts_(&h, "\r\nUser-Agent: dpm-collector\r\nAccept: */*\r\nConnection: close\r\n");
    if (r->bearer != NULL) {
        puts_(&h, "Authorization: Bearer ");
        puts_(&h, r->bearer);
        puts_(&h, "\r\n");
    }
    if (r->content_type != NULL) {
        puts_(&h, "Content-Type: ");
        puts_(&h, r->content_type);
        puts_(&h, "\r\n");
    }
    if (r->extra_headers != NULL) {
        puts_(&h, r->extra_headers);
    }
    /* A body's length always; none for a GET or HEAD without one (RFC 9110 section 8.6). */
    if (r->len > 0 || (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0)) {
        snprintf(num, sizeof(num), "Content-Length: %zu\r\n", r->len);
        puts_(&h, num);
    }
    puts_(&h, "\r\n");
    if (h.over) {
        return failf(x,
                     "the request head exceeds %u bytes (a long URL, Content-Type or bearer "
                     "token)",
                     REQ_HEAD_MAX);
    }
    x->head_len = h.len;
    return 0;
}

static int send_request(xfer_t *x, const coll_https_req_t *r)
{
    x->phase = "sending the request";
    int ret = write_all(x, (const uint8_t *)x->head, x->head_len);
    if (ret == 0 && r->len > 0) {
        ret = write_all(x, r->body, r->len);
    }
    return ret;
}

/* ---- reading the response ----------------------------------------------------------------- */

/* Up to n bytes as mbedtls_ssl_read gives them: > 0, 0 (a bare TCP close),
 * MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY, or another error. */
static int x_read(xfer_t *x, uint8_t *buf, size_t n)
{
    if (x->src == NULL) {
        return mbedtls_ssl_read(&x->ssl, buf, n);
    }
    size_t k = x->src_len - x->src_off;
    if (k == 0) {
        return x->src_notify ? MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY : 0;
    }
    k = k < n ? k : n;
    k = x->src_step > 0 && k > x->src_step ? x->src_step : k;
    k = k > INT_MAX ? INT_MAX : k;
    memcpy(buf, x->src + x->src_off, k);
    x->src_off += k;
    return (int)k;
}

/* More bytes into buf: 1 some arrived, 0 the stream ended (x->eof says how), -1 why set. */
static int fill(xfer_t *x)
{
    if (x->off > 0) {
        memmove(x->buf, x->buf + x->off, x->len - x->off);
        x->len -= x->off;
        x->off = 0;
    }
    if (x->eof != EOF_NONE) {
        return 0;
    }
    for (;;) {
        int ret = x_read(x, x->buf + x->len, sizeof(x->buf) - x->len);
        if (ret > 0) {
            x->len += (size_t)ret;
            return 1;
        }
        if (ret == 0 || ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
            x->eof = ret == 0 ? EOF_TCP : EOF_NOTIFY;
            return 0;
        }
        if (ret != MBEDTLS_ERR_SSL_WANT_READ && ret != MBEDTLS_ERR_SSL_WANT_WRITE &&
            ret != MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
            return tls_fail(x, ret, "reading the response");
        }
    }
}

/* One line ending in LF (CR LF or a bare LF) of at most max bytes with its ending, charged to
 * *budget: 1 with *line (NUL-terminated, in buf, valid until the next read) and *n, 0 the stream
 * ended before the line began, -1 why set. */
static int read_line(xfer_t *x, const char *what, size_t max, size_t *budget, char **line,
                     size_t *n)
{
    int in_head = max == COLL_HTTPS_MAX_HEAD; /* else one line of a bounded kind */
    *line = NULL;
    *n = 0;
    size_t limit = max < *budget ? max : *budget;
    for (;;) {
        uint8_t *lf = memchr(x->buf + x->off, '\n', x->len - x->off);
        size_t have = lf != NULL ? (size_t)(lf - (x->buf + x->off)) + 1 : x->len - x->off;
        if (have > limit) {
            if (in_head) {
                return failf(x, "the response's %s longer than %u bytes; refused",
                             strcmp(what, "trailer line") == 0 ? "trailers are" : "head is",
                             COLL_HTTPS_MAX_HEAD);
            }
            return malformed(x, what, (const char *)x->buf + x->off, have);
        }
        if (lf != NULL) {
            char *s = (char *)x->buf + x->off;
            size_t len = have - 1;
            if (len > 0 && s[len - 1] == '\r') {
                len--;
            }
            if (memchr(s, '\r', len) != NULL || memchr(s, '\0', len) != NULL) {
                return malformed(x, what, s, len);
            }
            s[len] = '\0';
            x->off += have;
            *budget -= have;
            *line = s;
            *n = len;
            return 1;
        }
        int f = fill(x);
        if (f < 0) {
            return -1;
        }
        if (f == 0) {
            if (x->len - x->off == 0) {
                return 0;
            }
            return malformed(x, "the response ended inside a line", (const char *)x->buf + x->off,
                             x->len - x->off);
        }
    }
}

/* Exactly n body bytes into dst: 0, or -1 (why set; ended early: truncated). */
static int read_exact(xfer_t *x, uint8_t *dst, size_t n, size_t *got)
{
    while (n > 0) {
        if (x->off == x->len) {
            /* nothing buffered: read straight into dst (the buffer is for lines) */
            int ret;
            do {
                ret = x_read(x, dst, n);
            } while (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE ||
                     ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET);
            if (ret == 0 || ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
                x->eof = ret == 0 ? EOF_TCP : EOF_NOTIFY;
                return failf(x, "the response ended after %zu body bytes, %zu short: truncated",
                             *got, n);
            }
            if (ret < 0) {
                return tls_fail(x, ret, "reading the response body");
            }
            dst += ret;
            n -= (size_t)ret;
            *got += (size_t)ret;
            continue;
        }
        size_t k = x->len - x->off < n ? x->len - x->off : n;
        memcpy(dst, x->buf + x->off, k);
        x->off += k;
        dst += k;
        n -= k;
        *got += k;
    }
    return 0;
}

typedef struct {
    int have_length, chunked;
    uint64_t length;
} framing_t;

/* A header value's digits as a number; -1 if not only digits or over 2^63. */
static int parse_u64(const char *v, size_t n, uint64_t *out)
{
    uint64_t acc = 0;
    if (n == 0 || n > 18) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i] < '0' || v[i] > '9') {
            return -1;
        }
        acc = acc * 10 + (uint64_t)(v[i] - '0');
    }
    *out = acc;
    return 0;
}

/* Retry-After: delta-seconds or an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"); anything
 * else counts as absent. */
static uint32_t retry_after(const char *v, size_t n)
{
    uint64_t secs;
    if (parse_u64(v, n, &secs) == 0) {
        return secs > UINT32_MAX ? UINT32_MAX : (uint32_t)secs;
    }
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    char wday[4], mon[4];
    unsigned d, y, hh, mm, ss;
    int end = 0;
    if (sscanf(v, "%3[A-Za-z], %2u %3[A-Za-z] %4u %2u:%2u:%2u GMT%n", wday, &d, mon, &y, &hh, &mm,
               &ss, &end) != 7 ||
        (size_t)end != n) {
        return 0;
    }
    const char *m = strstr(months, mon);
    if (m == NULL || (m - months) % 3 != 0 || d < 1 || d > 31 || hh > 23 || mm > 59 || ss > 60) {
        return 0;
    }
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = (int)y - 1900;
    tm.tm_mon = (int)((m - months) / 3);
    tm.tm_mday = (int)d;
    tm.tm_hour = (int)hh;
    tm.tm_min = (int)mm;
    tm.tm_sec = (int)ss;
    time_t at = timegm(&tm), now = time(NULL);
    if (at == (time_t)-1 || at <= now) {
        return 0;
    }
    uint64_t delta = (uint64_t)(at - now);
    return delta > UINT32_MAX ? UINT32_MAX : (uint32_t)delta;
}

static int copy_field(xfer_t *x, const char *name, char *dst, size_t cap, const char *v, size_t n)
{
    if (dst[0] != '\0') {
        return failf(x, "malformed response: two %s headers", name);
    }
    if (n >= cap) {
        return failf(x,
                     "the response's %s is %zu bytes, longer than the %zu this client keeps; "
                     "refused rather than cut short",
                     name, n, cap - 1);
    }
    memcpy(dst, v, n);
    dst[n] = '\0';
    return 0;
}

/* One "name: value" line of the head. */
static int header(xfer_t *x, char *line, size_t n, framing_t *f, coll_https_resp_t *resp)
{
    if (line[0] == ' ' || line[0] == '\t') {
        return malformed(x, "a header folded onto a second line (obsolete folding) at", line, n);
    }
    char *colon = memchr(line, ':', n);
    size_t nlen = colon != NULL ? (size_t)(colon - line) : 0;
    for (size_t i = 0; i < nlen; i++) {
        if (!is_tchar((unsigned char)line[i])) {
            nlen = 0;
        }
    }
    if (nlen == 0) {
        return malformed(x, "header line", line, n);
    }
    const char *v = colon + 1;
    size_t vlen = n - nlen - 1;
    while (vlen > 0 && (*v == ' ' || *v == '\t')) {
        v++;
        vlen--;
    }
    while (vlen > 0 && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t')) {
        vlen--;
    }
    for (size_t i = 0; i < vlen; i++) {
        if ((unsigned char)v[i] < 0x20 && v[i] != '\t') {
            return malformed(x, "a control character in header line", line, n);
        }
    }
    if (nlen == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
        if (f->have_length) {
            return failf(x, "malformed response: two Content-Length headers (ambiguous framing); "
                            "refused");
        }
        if (parse_u64(v, vlen, &f->length) != 0) {
            return malformed(x, "Content-Length is not a number in", line, n);
        }
        f->have_length = 1;
    } else if (nlen == 17 && strncasecmp(line, "Transfer-Encoding", 17) == 0) {
        if (f->chunked || vlen != 7 || strncasecmp(v, "chunked", 7) != 0) {
            return malformed(x, "a Transfer-Encoding other than one 'chunked' in", line, n);
        }
        f->chunked = 1;
    } else if (nlen == 12 && strncasecmp(line, "Content-Type", 12) == 0) {
        return copy_field(x, "Content-Type", resp->content_type, sizeof(resp->content_type), v,
                          vlen);
    } else if (nlen == 8 && strncasecmp(line, "Location", 8) == 0) {
        return copy_field(x, "Location", resp->location, sizeof(resp->location), v, vlen);
    } else if (nlen == 11 && strncasecmp(line, "Retry-After", 11) == 0) {
        char tmp[64]; /* v ends at the line's end, not at vlen */
        if (vlen < sizeof(tmp)) {
            memcpy(tmp, v, vlen);
            tmp[vlen] = '\0';
            resp->retry_after_s = retry_after(tmp, vlen);
        }
    }
    return 0;
}

/* The status line and headers, 1xx interim responses skipped. */
static int read_head(xfer_t *x, framing_t *f, coll_https_resp_t *resp)
{
    x->phase = "waiting for the response";
    size_t budget = COLL_HTTPS_MAX_HEAD;
    for (;;) {
        char *line;
        size_t n;
        int got = read_line(x, "status line", COLL_HTTPS_MAX_HEAD, &budget, &line, &n);
        if (got <= 0) {
            if (got == 0) {
                return failf(x, "the server closed the connection without a response");
            }
            return -1;
        }
        unsigned code = 0;
        if (n < 12 || strncmp(line, "HTTP/1.", 7) != 0 || line[7] < '0' || line[7] > '9' ||
            line[8] != ' ' || line[9] < '1' || line[9] > '5' || line[10] < '0' || line[10] > '9' ||
            line[11] < '0' || line[11] > '9' || (n > 12 && line[12] != ' ')) {
            return malformed(x, "status line (not 'HTTP/1.x NNN reason')", line, n);
        }
        code = (unsigned)(line[9] - '0') * 100u + (unsigned)(line[10] - '0') * 10u +
               (unsigned)(line[11] - '0');
        if (code == 101) {
            return malformed(x, "a protocol switch nobody asked for", line, n);
        }
        memset(f, 0, sizeof(*f));
        memset(resp, 0, sizeof(*resp));
        resp->status = (int)code;
        x->phase = "reading the response head";
        for (;;) {
            got = read_line(x, "header line", COLL_HTTPS_MAX_HEAD, &budget, &line, &n);
            if (got <= 0) {
                return got == 0 ? failf(x, "the response ended inside its head") : -1;
            }
            if (n == 0) {
                break;
            }
            if (header(x, line, n, f, resp) != 0) {
                return -1;
            }
        }
        if (code >= 200) {
            return 0;
        }
    }
}

static int too_large(xfer_t *x, const char *how, uint64_t size, size_t cap)
{
    return failf(x,
                 "the response body (%s %llu bytes) is larger than the %zu bytes the caller has "
                 "room for; refused",
                 how, (unsigned long long)size, cap);
}

static int read_chunked(xfer_t *x, uint8_t *out, size_t cap, size_t *got)
{
    size_t trailer_budget = COLL_HTTPS_MAX_HEAD;
    for (;;) {
        char *line;
        size_t n, budget = CHUNK_LINE_MAX;
        int rl = read_line(x, "chunk size line", CHUNK_LINE_MAX, &budget, &line, &n);
        if (rl <= 0) {
            return rl == 0 ? failf(x,
                                   "the response ended inside its chunked body after %zu "
                                   "bytes: truncated",
                                   *got)
                           : -1;
        }
        size_t digits = 0;
        uint64_t size = 0;
        while (digits < n && digits < 16) {
            char ch = line[digits];
            unsigned v = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                         : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                         : ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10)
                                                  : 16u;
            if (v == 16u) {
                break;
            }
            size = size * 16u + v;
            digits++;
        }
        size_t rest = digits;
        while (rest < n && (line[rest] == ' ' || line[rest] == '\t')) {
            rest++;
        }
        if (digits == 0 || (rest < n && line[rest] != ';')) {
            return malformed(x, "chunk size line", line, n);
        }
        if (size == 0) {
            break;
        }
        if (size > cap - *got) {
            return too_large(x, "chunked: at least", (uint64_t)*got + size, cap);
        }
        if (read_exact(x, out + *got, (size_t)size, got) != 0) {
            return -1;
        }
        budget = 2;
        rl = read_line(x, "no CR LF after a chunk's data, but", 2, &budget, &line, &n);
        if (rl < 0) {
            return -1;
        }
        if (rl == 0) {
            return failf(x, "the response ended after a chunk's data: truncated");
        }
        if (n != 0) {
            return malformed(x, "no CR LF after a chunk's data, but", line, n);
        }
    }
    for (;;) { /* trailers: read and ignored, up to the blank line */
        char *line;
        size_t n;
        int rl = read_line(x, "trailer line", COLL_HTTPS_MAX_HEAD, &trailer_budget, &line, &n);
        if (rl <= 0) {
            return rl == 0 ? failf(x, "the response ended inside its trailers") : -1;
        }
        if (n == 0) {
            return 0;
        }
    }
}

static int read_body(xfer_t *x, const char *method, const framing_t *f, coll_https_resp_t *resp,
                     uint8_t *out, size_t cap)
{
    x->phase = "reading the response body";
    if (f->have_length && f->chunked) {
        return failf(x, "malformed response: both Content-Length and Transfer-Encoding: chunked "
                        "(ambiguous framing); refused");
    }
    int st = resp->status;
    if (strcmp(method, "HEAD") == 0 || st == 204 || st == 304) {
        return 0; /* no body, whatever the headers say (RFC 9112 section 6.3) */
    }
    size_t got = 0;
    int ret = 0;
    if (f->chunked) {
        ret = read_chunked(x, out, cap, &got);
    } else if (f->have_length) {
        if (f->length > cap) {
            return too_large(x, "Content-Length", f->length, cap);
        }
        ret = read_exact(x, out, (size_t)f->length, &got);
    } else {
        /* delimited by the close: all that arrives until close_notify */
        for (;;) {
            size_t k = x->len - x->off;
            if (k > cap - got) {
                return too_large(x, "no length; more than", (uint64_t)cap, cap);
            }
            if (k > 0) {
                memcpy(out + got, x->buf + x->off, k);
            }
            got += k;
            x->off = x->len;
            int fl = fill(x);
            if (fl < 0) {
                return -1;
            }
            if (fl == 0) {
                break;
            }
        }
        if (x->eof != EOF_NOTIFY) {
            return failf(x,
                         "the response body has no length and the connection ended without "
                         "TLS close_notify after %zu bytes: possibly truncated; refused",
                         got);
        }
    }
    resp->len = got;
    return ret;
}

static int read_response(xfer_t *x, uint8_t *out, size_t cap, coll_https_resp_t *resp)
{
    framing_t f;
    memset(&f, 0, sizeof(f));
    int ret = read_head(x, &f, resp);
    return ret == 0 ? read_body(x, x->method, &f, resp, out, cap) : ret;
}

/* ---- the exchange ------------------------------------------------------------------------- */

/* A new exchange for fn (the public function, named in its own failures): NULL, with why
 * saying so, when args_ok is 0 (nulls: what may have been NULL) or memory is short. The state is
 * large (the read buffer and the request head, about 17 KiB): on the heap, so that callers on
 * small thread stacks are not at risk. */
static xfer_t *xfer_new(const char *fn, int args_ok, const char *nulls, coll_https_resp_t *resp,
                        char *why, size_t whycap)
{
    if (why == NULL || whycap == 0) {
        why = NULL;
        whycap = 0;
    } else {
        why[0] = '\0';
    }
    if (!args_ok) {
        host_fail(why, whycap, "%s: a NULL %s", fn, nulls);
        return NULL;
    }
    memset(resp, 0, sizeof(*resp));
    xfer_t *x = calloc(1, sizeof(*x));
    if (x == NULL) {
        host_fail(why, whycap, "%s: out of memory", fn);
        return NULL;
    }
    x->why = why != NULL ? why : x->none;
    x->whycap = why != NULL ? whycap : sizeof(x->none);
    x->io.fd = -1;
    return x;
}

/* The end of an exchange: TLS closed (with close_notify after a success), the socket closed,
 * the head (it held the bearer token) wiped and x freed; resp cleared on failure. 0 or -1. */
static int xfer_end(xfer_t *x, int ret, coll_https_resp_t *resp)
{
    if (x->ssl_ready) {
        if (ret == 0 && x->eof == EOF_NONE) {
            (void)mbedtls_ssl_close_notify(&x->ssl); /* best effort, within the deadline */
        }
        mbedtls_ssl_free(&x->ssl);
    }
    if (x->io.fd >= 0) {
        close(x->io.fd);
    }
    mbedtls_platform_zeroize(x->head, sizeof(x->head));
    free(x);
    if (ret != 0) {
        memset(resp, 0, sizeof(*resp));
    }
    return ret == 0 ? 0 : -1;
}

int coll_https_request(coll_https_t *c, const coll_https_req_t *r, uint8_t *out, size_t cap,
                       coll_https_resp_t *resp, char *why, size_t whycap)
{
    xfer_t *x =
        xfer_new("coll_https_request",
                 c != NULL && r != NULL && resp != NULL && r->url != NULL && r->method != NULL &&
                     (out != NULL || cap == 0),
                 "client, request, URL, method, response or output buffer", resp, why, whycap);
    if (x == NULL) {
        return -1;
    }
    x->method = r->method;
    x->url = r->url;
    x->timeout_ms = r->timeout_ms;
    x->start_ms = coll_now_ms();
    x->io.deadline_ms = x->start_ms + r->timeout_ms;
    x->phase = "starting";
    addr_t addrs[MAX_ADDRS];
    int ret = parse_url(x);
    if (ret == 0) {
        ret = check_request(x, r);
    }
    if (ret == 0 && r->timeout_ms == 0) {
        ret = failf(x, "timeout_ms is 0: give the exchange a time limit");
    }
    if (ret == 0) {
        ret = make_head(x, r);
    }
    int n = ret == 0 ? resolve(x, addrs) : -1;
    ret = n > 0 ? connect_any(x, addrs, (size_t)n) : -1;
    if (ret == 0) {
        ret = handshake(x, c);
    }
    if (ret == 0) {
        ret = send_request(x, r);
    }
    if (ret == 0) {
        ret = read_response(x, out, cap, resp);
    }
    return xfer_end(x, ret, resp);
}

int coll_https_parse_response(const uint8_t *in, size_t len, size_t step, int close_notify,
                              const char *method, uint8_t *out, size_t cap, coll_https_resp_t *resp,
                              char *why, size_t whycap)
{
    xfer_t *x = xfer_new("coll_https_parse_response",
                         (in != NULL || len == 0) && method != NULL && resp != NULL &&
                             (out != NULL || cap == 0),
                         "input, method, response or output buffer", resp, why, whycap);
    if (x == NULL) {
        return -1;
    }
    static const char what[] = "(response)";
    x->method = method;
    x->url = what;
    x->url_shown = sizeof(what) - 1;
    x->src = in;
    x->src_len = len;
    x->src_step = step;
    x->src_notify = close_notify;
    return xfer_end(x, read_response(x, out, cap, resp), resp);
}
