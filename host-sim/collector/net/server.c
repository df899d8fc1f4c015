/* SPDX-License-Identifier: Apache-2.0 */
/* Listener, connection threads and deadlines (see server.h). */
#include "collector/net/server.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "collector/net/conn.h"
#include "common/clock.h"

#define READ_CHUNK 16384
#define CONN_STACK_BYTES (512u * 1024u)
#define LINGER_MS 1000u         /* drain time after we close first */
#define LINGER_BYTES (1u << 20) /* and at most this much of an unwanted body */

/* What a connection is doing, in the order eviction picks them (the longest-waiting of the first
 * kind present goes): SILENT (not a byte yet), IDLE (between requests), HANDSHAKE (TLS under
 * way: a real client finishes in milliseconds, so it goes last). BUSY (mid-request) never. */
enum { SLOT_FREE, SLOT_SILENT, SLOT_IDLE, SLOT_HANDSHAKE, SLOT_BUSY };

typedef struct {
    int fd;
    int state;
    int evicted;
    uint64_t since_ms; /* when it entered its state */
    uint8_t addr[16];  /* its client key (coll_limits_addr_key: IPv4 address or IPv6 /64) */
} slot_t;

/* A TLS configuration and the connections using it (coll_server_set_tls). */
typedef struct tls_gen {
    coll_tls_t *tls;
    int refs;  /* connections that started with it */
    int owned; /* replaced by coll_server_set_tls: the server frees it (main frees the first) */
} tls_gen_t;

/* Live connections per client key, counted afresh for each accept (take_slot). */
typedef struct addr_count {
    uint8_t addr[16];
    uint32_t gen;
    uint32_t count;
} addr_count_t;

struct coll_server {
    coll_server_config_t cfg;
    int listen_fd;
    int wake[2]; /* self-pipe: coll_server_stop writes, the accept loop polls */
    uint16_t port;
    pthread_mutex_t mu;
    pthread_cond_t idle;
    pthread_cond_t freed; /* a slot was released */
    int active;
    int evicting; /* evicted connections whose threads have not exited yet */
    int hard_cap;
    slot_t *slots;        /* live connections (SLOT_FREE: unused), so stop can wake them */
    addr_count_t *counts; /* per-address counts for take_slot */
    uint32_t counts_mask, counts_gen;
    tls_gen_t *tls_now; /* what new connections use (under mu) */
};

typedef struct {
    coll_server_t *srv;
    int fd;
    int slot;
    coll_peer_t peer;
} conn_arg_t;

typedef struct {
    coll_tls_conn_t *tls;
    uint32_t request_ms;
} emit_ctx_t;

static int set_cloexec_nonblock(int fd, int nonblock)
{
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        return -1;
    }
    return nonblock ? fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) : 0;
}

int coll_server_listen(coll_server_t **out, const coll_server_config_t *cfg, const char *addr,
                       char *err, size_t errcap)
{
    char host[128];
    const char *colon = strrchr(addr, ':');
    size_t hlen = colon ? (size_t)(colon - addr) : 0;
    if (colon == NULL || hlen == 0 || hlen >= sizeof(host) || colon[1] == '\0') {
        snprintf(err, errcap, "--listen wants HOST:PORT, e.g. 127.0.0.1:8443 (got '%s')", addr);
        return -1;
    }
    memcpy(host, addr, hlen);
    host[hlen] = '\0';
    if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {
        memmove(host, host + 1, hlen - 2);
        host[hlen - 2] = '\0';
    }
    struct addrinfo hints, *ai = NULL;
    memset(&hints, 0, sizeof(hints));
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
    int gai = getaddrinfo(host, colon + 1, &hints, &ai);
    if (gai != 0) {
        snprintf(err, errcap, "--listen %s: %s", addr, gai_strerror(gai));
        return -1;
    }
    coll_server_t *s = calloc(1, sizeof(*s));
    int hard_cap = cfg->max_conns + cfg->max_conns / 4 + 16;
    slot_t *slots = calloc((size_t)hard_cap, sizeof(slot_t));
    uint32_t ncounts = 64;
    while (ncounts < 2u * (uint32_t)hard_cap) {
        ncounts *= 2;
    }
    addr_count_t *counts = calloc(ncounts, sizeof(*counts));
    tls_gen_t *gen = calloc(1, sizeof(*gen));
    if (s == NULL || slots == NULL || counts == NULL || gen == NULL) {
        freeaddrinfo(ai);
        free(s);
        free(slots);
        free(counts);
        free(gen);
        snprintf(err, errcap, "out of memory");
        return -1;
    }
    s->cfg = *cfg;
    gen->tls = (coll_tls_t *)cfg->tls; /* main's: never freed by the server (owned 0) */
    s->tls_now = gen;
    s->slots = slots;
    s->hard_cap = hard_cap;
    s->counts = counts;
    s->counts_mask = ncounts - 1;
    for (int i = 0; i < hard_cap; i++) {
        s->slots[i].fd = -1;
    }
    s->wake[0] = s->wake[1] = -1;
    s->listen_fd = socket(ai->ai_family, SOCK_STREAM, 0);
    int one = 1;
    if (s->listen_fd < 0 || set_cloexec_nonblock(s->listen_fd, 1) != 0 ||
        setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(s->listen_fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(s->listen_fd, 1024) != 0) {
        snprintf(err, errcap, "cannot listen on %s: %s", addr, strerror(errno));
        freeaddrinfo(ai);
        coll_server_free(s);
        return -1;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage sa;
    socklen_t salen = sizeof(sa);
    getsockname(s->listen_fd, (struct sockaddr *)&sa, &salen);
    s->port = sa.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&sa)->sin6_port)
                                       : ntohs(((struct sockaddr_in *)&sa)->sin_port);
    if (pipe(s->wake) != 0 || set_cloexec_nonblock(s->wake[0], 1) != 0 ||
        set_cloexec_nonblock(s->wake[1], 1) != 0) {
        snprintf(err, errcap, "pipe: %s", strerror(errno));
        coll_server_free(s);
        return -1;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->idle, &ca);
    pthread_cond_init(&s->freed, &ca);
    pthread_condattr_destroy(&ca);
    *out = s;
    return 0;
}

uint16_t coll_server_port(const coll_server_t *s)
{
    return s->port;
}

void coll_server_stop(coll_server_t *s)
{
    char x = 1;
    ssize_t r = write(s->wake[1], &x, 1); /* async-signal-safe */
    (void)r;
}

/* ---- one connection ------------------------------------------------------------------------ */

static int emit_tls(void *ctx, const uint8_t *buf, size_t len)
{
    emit_ctx_t *e = ctx;
    return coll_tls_write_all(e->tls, buf, len, coll_now_ms() + e->request_ms) == 0 ? 0 : -1;
}

/* After we decided to close: stop sending, then read and drop what the peer still sends for
 * a moment, so that its unread request bytes do not turn our last answer into a reset. */
static void linger(int fd)
{
    shutdown(fd, SHUT_WR);
    uint64_t deadline = coll_now_ms() + LINGER_MS;
    size_t drained = 0;
    char junk[4096];
    while (drained < LINGER_BYTES) {
        uint64_t now = coll_now_ms();
        if (now >= deadline) {
            return;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(deadline - now));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return;
        }
        ssize_t n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
        if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN))) {
            return;
        }
        drained += n > 0 ? (size_t)n : 0;
    }
}

enum { SNIFF_CLOSED, SNIFF_TLS, SNIFF_PLAIN };

/* Peek at the first byte: a TLS record starts with 22 (handshake); an HTTP method with a
 * capital letter. */
static int sniff(int fd, uint64_t deadline)
{
    for (;;) {
        uint64_t now = coll_now_ms();
        if (now >= deadline) {
            return SNIFF_CLOSED;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)(deadline - now));
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return SNIFF_CLOSED;
        }
        unsigned char b;
        ssize_t n = recv(fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 1) {
            return (b >= 'A' && b <= 'Z') ? SNIFF_PLAIN : SNIFF_TLS;
        }
        if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            return SNIFF_CLOSED;
        }
    }
}

static void reject_plain(int fd)
{
    static const char msg[] = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                              "Content-Length: 44\r\nConnection: close\r\n\r\n"
                              "this port speaks HTTPS (TLS) only: https://\n";
    ssize_t r = send(fd, msg, sizeof(msg) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)r;
    linger(fd);
}

static void set_state(coll_server_t *srv, int slot, int state)
{
    pthread_mutex_lock(&srv->mu);
    if (srv->slots[slot].state != state) {
        srv->slots[slot].state = state;
        srv->slots[slot].since_ms = coll_now_ms();
    }
    pthread_mutex_unlock(&srv->mu);
}

/* Serve one TLS connection until it closes. Returns 1 if we closed it after answering (the
 * caller then lingers), 0 if the peer closed or the handshake failed. */
static void tls_gen_free(tls_gen_t *g)
{
    if (g->owned) {
        coll_tls_free(g->tls);
        free(g->tls);
    }
    free(g);
}

void coll_server_set_tls(coll_server_t *s, coll_tls_t *tls)
{
    tls_gen_t *g = calloc(1, sizeof(*g));
    if (g == NULL) {
        coll_tls_free(tls);
        free(tls);
        return;
    }
    g->tls = tls;
    g->owned = 1;
    pthread_mutex_lock(&s->mu);
    tls_gen_t *old = s->tls_now;
    s->tls_now = g;
    int unused = old->refs == 0;
    pthread_mutex_unlock(&s->mu);
    if (unused) {
        tls_gen_free(old); /* else its last connection frees it (serve_tls) */
    }
}

static int serve_tls_with(coll_server_t *srv, conn_arg_t *a, uint64_t start, const coll_tls_t *tls);

/* Serve with the configuration in force at the start, held until the connection ends. */
static int serve_tls(coll_server_t *srv, conn_arg_t *a, uint64_t start)
{
    pthread_mutex_lock(&srv->mu);
    tls_gen_t *g = srv->tls_now;
    g->refs++;
    pthread_mutex_unlock(&srv->mu);
    int rc = serve_tls_with(srv, a, start, g->tls);
    pthread_mutex_lock(&srv->mu);
    int gone = --g->refs == 0 && g != srv->tls_now;
    pthread_mutex_unlock(&srv->mu);
    if (gone) {
        tls_gen_free(g);
    }
    return rc;
}

static int serve_tls_with(coll_server_t *srv, conn_arg_t *a, uint64_t start, const coll_tls_t *tls)
{
    const coll_server_config_t *cfg = &srv->cfg;
    coll_tls_conn_t tc;
    if (coll_tls_accept(&tc, tls, a->fd, start + cfg->handshake_ms) != 0 ||
        coll_tls_peer_identity(&tc, a->peer.identity, sizeof(a->peer.identity)) < 0) {
        coll_counters_handshake(cfg->app->counters, 0);
        coll_tls_conn_close(&tc, 0, 0);
        return 0; /* a failed or too slow handshake, or a device certificate that does not
                   * verify: nothing of ours to protect, just close */
    }
    if (a->peer.identity[0] != '\0') {
        coll_tls_peer_fingerprint(&tc, a->peer.cert_sha256); /* for the deny list */
    }
    coll_counters_handshake(cfg->app->counters, 1);
    set_state(srv, a->slot, SLOT_IDLE);
    coll_conn_t *conn = malloc(sizeof(*conn));
    uint8_t *buf = malloc(READ_CHUNK);
    if (conn == NULL || buf == NULL) {
        free(conn);
        free(buf);
        coll_tls_conn_close(&tc, 1, coll_now_ms() + LINGER_MS);
        return 1;
    }
    emit_ctx_t ectx = {&tc, cfg->request_ms};
    coll_conn_init(conn, cfg->app, &a->peer, emit_tls, &ectx);
    uint64_t deadline = coll_now_ms() + cfg->idle_ms;
    int mid = 0;
    uint64_t answered = 0;
    int peer_closed = 0;
    while (conn->state != COLL_CONN_CLOSED) {
        int n = coll_tls_read(&tc, buf, READ_CHUNK, deadline);
        if (n == COLL_IO_TIMEOUT) {
            coll_conn_timeout(conn); /* 408 if a request was under way */
            break;
        }
        if (n <= 0) {
            peer_closed = 1;
            break;
        }
        uint64_t now = coll_now_ms();
        if (!mid) {
            set_state(srv, a->slot, SLOT_BUSY); /* a request begins: never evicted now */
        }
        coll_conn_set_time(conn, now);
        coll_conn_feed(conn, buf, (size_t)n);
        /* Deadlines only move when a request ends or a new one begins: a peer trickling
         * bytes cannot stretch a request beyond request_ms. */
        int now_mid = coll_conn_mid_request(conn);
        if (!now_mid) {
            deadline = coll_now_ms() + cfg->idle_ms;
            set_state(srv, a->slot, SLOT_IDLE);
        } else if (!mid || conn->requests != answered) {
            deadline = coll_now_ms() + cfg->request_ms;
        }
        mid = now_mid;
        answered = conn->requests;
    }
    coll_conn_free(conn);
    free(conn);
    free(buf);
    /* Nothing in progress any more: evictable before the peer can see the close, so a client
     * that reconnects at once after its answer never finds its old slot still busy. */
    set_state(srv, a->slot, SLOT_IDLE);
    coll_tls_conn_close(&tc, !peer_closed, coll_now_ms() + LINGER_MS);
    return !peer_closed;
}

static void *conn_main(void *arg)
{
    conn_arg_t *a = arg;
    coll_server_t *srv = a->srv;
    uint64_t start = coll_now_ms();
    int kind = sniff(a->fd, start + srv->cfg.handshake_ms);
    if (kind == SNIFF_TLS) {
        set_state(srv, a->slot, SLOT_HANDSHAKE);
    }
    if (kind == SNIFF_PLAIN) {
        reject_plain(a->fd);
    } else if (kind == SNIFF_TLS && serve_tls(srv, a, start)) {
        set_state(srv, a->slot, SLOT_IDLE); /* answered: lingering may be cut short */
        linger(a->fd);
    }
    /* The limits belong to the app, which main frees once the last connection has signalled
     * idle below: release them first, never after. */
    coll_limits_t *lim = srv->cfg.app->limits;
    if (lim != NULL) {
        coll_limits_release(lim, COLL_CONN_RESERVE);
        coll_limits_count(lim, &lim->st.conns_active, -1);
    }
    pthread_mutex_lock(&srv->mu);
    srv->slots[a->slot].fd = -1; /* before close: stop must never see a reused descriptor */
    srv->slots[a->slot].state = SLOT_FREE;
    if (srv->slots[a->slot].evicted) {
        srv->evicting--;
    }
    if (--srv->active == 0) {
        pthread_cond_broadcast(&srv->idle);
    }
    pthread_cond_signal(&srv->freed);
    pthread_mutex_unlock(&srv->mu);
    close(a->fd);
    free(a);
    return NULL;
}

/* ---- accept loop ----------------------------------------------------------------------------- */

/* The 16-byte form of an accepted peer's address (IPv4 as ::ffff:a.b.c.d). */
static void addr_key(const struct sockaddr_storage *sa, uint8_t out[16])
{
    memset(out, 0, 16);
    if (sa->ss_family == AF_INET6) {
        memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    } else if (sa->ss_family == AF_INET) {
        out[10] = out[11] = 0xFF;
        memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    }
}

/* The entry of addr in the open-addressing table of 2^k >= 2 hard_cap entries (an entry is
 * empty unless its generation is this call's). */
static addr_count_t *addr_entry(coll_server_t *s, const uint8_t addr[16])
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < 16; i++) {
        h = (h ^ addr[i]) * 16777619u;
    }
    for (uint32_t i = h & s->counts_mask;; i = (i + 1) & s->counts_mask) {
        addr_count_t *e = &s->counts[i];
        if (e->gen != s->counts_gen) {
            e->gen = s->counts_gen;
            memcpy(e->addr, addr, 16);
            e->count = 0;
            return e;
        }
        if (memcmp(e->addr, addr, 16) == 0) {
            return e;
        }
    }
}

/* Is slot a a better eviction victim than slot b: from an address holding more connections
 * (a flood from a few addresses pays first, a device with one connection last), then of an
 * earlier state (silent, idle, handshaking), then waiting longer. */
static int better_victim(coll_server_t *s, const slot_t *a, uint32_t a_count, int b)
{
    if (b < 0) {
        return 1;
    }
    const slot_t *v = &s->slots[b];
    uint32_t b_count = addr_entry(s, v->addr)->count;
    if (a_count != b_count) {
        return a_count > b_count;
    }
    if (a->state != v->state) {
        return a->state < v->state;
    }
    return a->since_ms < v->since_ms;
}

/* With s->mu held: a slot for a new connection from client key addr, evicting a connection
 * without a request in progress if the soft cap is reached (*evicted = 1). -1: refuse, with
 * *why the counter to bump. */
static int take_slot(coll_server_t *s, const uint8_t addr[16], uint64_t **why, int *evicted)
{
    coll_limits_t *lim = s->cfg.app->limits;
    int free_slot = -1, victim = -1, live = 0;
    if (++s->counts_gen == 0) { /* wrapped: forget every entry for real */
        memset(s->counts, 0, (s->counts_mask + 1) * sizeof(*s->counts));
        s->counts_gen = 1;
    }
    for (int i = 0; i < s->hard_cap; i++) {
        slot_t *sl = &s->slots[i];
        if (sl->state == SLOT_FREE) {
            free_slot = free_slot < 0 ? i : free_slot;
        } else {
            addr_entry(s, sl->addr)->count++;
        }
    }
    uint32_t same = addr_entry(s, addr)->count;
    if (s->cfg.max_conns_per_addr > 0 && same >= (uint32_t)s->cfg.max_conns_per_addr) {
        *why = lim ? &lim->st.conns_refused_addr : NULL;
        return -1;
    }
    for (int i = 0; i < s->hard_cap; i++) {
        const slot_t *sl = &s->slots[i];
        if (sl->state == SLOT_FREE || sl->evicted) {
            continue; /* unused, or on its way out */
        }
        live++;
        if (sl->state != SLOT_BUSY &&
            better_victim(s, sl, addr_entry(s, sl->addr)->count, victim)) {
            victim = i;
        }
    }
    if (live >= s->cfg.max_conns) {
        if (victim < 0) {
            *why = lim ? &lim->st.conns_refused_full : NULL;
            return -1;
        }
        s->slots[victim].evicted = 1;
        s->evicting++;
        shutdown(s->slots[victim].fd, SHUT_RDWR); /* its thread sees the end and exits */
        *evicted = 1;
    }
    if (free_slot < 0) {
        *why = lim ? &lim->st.conns_refused_full : NULL;
        return -1;
    }
    return free_slot;
}

static void start_conn(coll_server_t *s, int fd, const struct sockaddr_storage *sa)
{
    coll_limits_t *lim = s->cfg.app->limits;
    conn_arg_t *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        close(fd);
        return;
    }
    addr_key(sa, a->peer.addr);
    uint8_t key[16]; /* what the per-address cap counts: an IPv6 /64 is one client */
    coll_limits_addr_key(a->peer.addr, key);
    if (lim != NULL && coll_limits_reserve(lim, COLL_CONN_RESERVE) != 0) {
        coll_limits_count(lim, &lim->st.conns_refused_memory, 1);
        close(fd);
        free(a);
        return;
    }
    uint64_t *why = NULL;
    int evicted = 0;
    pthread_mutex_lock(&s->mu);
    int slot = take_slot(s, key, &why, &evicted);
    /* Every slot taken but some of them by evicted connections on their way out: wait for one
     * (briefly) rather than refuse; meanwhile nothing else is accepted, which slows a flood. */
    for (int tries = 0; slot < 0 && s->evicting > 0 && tries < 10; tries++) {
        struct timespec until = host_deadline(CLOCK_MONOTONIC, 10);
        pthread_cond_timedwait(&s->freed, &s->mu, &until);
        slot = take_slot(s, key, &why, &evicted);
    }
    if (slot >= 0) {
        slot_t *sl = &s->slots[slot];
        sl->fd = fd;
        sl->state = SLOT_SILENT;
        sl->evicted = 0;
        sl->since_ms = coll_now_ms();
        memcpy(sl->addr, key, 16);
        s->active++;
    }
    pthread_mutex_unlock(&s->mu);
    if (evicted && lim != NULL) {
        coll_limits_count(lim, &lim->st.conns_evicted, 1);
    }
    if (slot < 0) {
        if (lim != NULL) {
            coll_limits_release(lim, COLL_CONN_RESERVE);
            if (why != NULL) {
                coll_limits_count(lim, why, 1);
            }
        }
        close(fd); /* refused at once */
        free(a);
        return;
    }
    if (lim != NULL) {
        coll_limits_count(lim, &lim->st.conns_accepted, 1);
        coll_limits_count(lim, &lim->st.conns_active, 1);
    }
    a->srv = s;
    a->fd = fd;
    a->slot = slot;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, CONN_STACK_BYTES);
    /* Connection threads never take SIGINT/SIGTERM: only the accept loop's thread does. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    pthread_t th;
    int rc = pthread_create(&th, &attr, conn_main, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        pthread_mutex_lock(&s->mu);
        s->slots[slot].fd = -1;
        s->slots[slot].state = SLOT_FREE;
        s->active--;
        pthread_cond_signal(&s->freed);
        pthread_mutex_unlock(&s->mu);
        if (lim != NULL) {
            coll_limits_release(lim, COLL_CONN_RESERVE);
            coll_limits_count(lim, &lim->st.conns_active, -1);
        }
        close(fd);
        free(a);
    }
}

int coll_server_run(coll_server_t *s, uint32_t drain_ms)
{
    for (;;) {
        struct pollfd p[2] = {{s->listen_fd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
        int r = poll(p, 2, -1);
        if (r < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (p[1].revents != 0) {
            break;
        }
        if ((p[0].revents & POLLIN) == 0) {
            continue;
        }
        struct sockaddr_storage sa;
        socklen_t salen = sizeof(sa);
        memset(&sa, 0, sizeof(sa));
        int fd = accept(s->listen_fd, (struct sockaddr *)&sa, &salen);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                struct timespec ts = {0, 10 * 1000 * 1000}; /* out of descriptors: back off */
                nanosleep(&ts, NULL);
            }
            continue;
        }
        if (set_cloexec_nonblock(fd, 0) != 0) {
            close(fd);
            continue;
        }
        start_conn(s, fd, &sa);
    }
    /* Stop: wake every connection (their reads see end-of-file; requests in progress are
     * finished and answered first) and wait for them, bounded. */
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->hard_cap; i++) {
        if (s->slots[i].fd >= 0) {
            shutdown(s->slots[i].fd, SHUT_RD);
        }
    }
    struct timespec until = host_deadline(CLOCK_MONOTONIC, drain_ms);
    while (s->active > 0) {
        if (pthread_cond_timedwait(&s->idle, &s->mu, &until) == ETIMEDOUT) {
            break;
        }
    }
    int left = s->active;
    pthread_mutex_unlock(&s->mu);
    return left;
}

void coll_server_free(coll_server_t *s)
{
    if (s == NULL) {
        return;
    }
    if (s->listen_fd >= 0) {
        close(s->listen_fd);
    }
    if (s->wake[0] >= 0) {
        close(s->wake[0]);
        close(s->wake[1]);
    }
    free(s->slots);
    free(s->counts);
    if (s->tls_now != NULL) {
        tls_gen_free(s->tls_now);
    }
    free(s);
}
