/* SPDX-License-Identifier: Apache-2.0 */
/* TCP transport with timeouts. send/recv follow the port contract (coreHTTP): bytes moved,
 * 0 when nothing could move before the timeout (try again later), -1 on error or when the
 * peer closed the connection. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dpm/port_posix.h"

static int wait_fd(int fd, short events, uint32_t timeout_ms)
{
    struct pollfd p = {fd, events, 0};
    for (;;) {
        int n = poll(&p, 1, (int)timeout_ms);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return n; /* 1 ready, 0 timeout, -1 error */
    }
}

/* A connected socket, or -1 (*timed_out set when the address did not answer in time). */
static int connect_one(const struct addrinfo *ai, uint32_t timeout_ms, int *timed_out)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
        return -1;
    }
    int flags = fcntl(fd, F_GETFL, 0);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        close(fd);
        return -1;
    }
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
        int ready = wait_fd(fd, POLLOUT, timeout_ms);
        if (ready == 1) {
            int err = 0;
            socklen_t len = sizeof(err);
            rc = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 ? 0 : -1;
        } else if (ready == 0) {
            *timed_out = 1;
        }
    }
    if (rc != 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

dpm_status_t dpm_posix_tcp_connect(dpm_posix_tcp_t *t, const char *host, uint16_t port,
                                   uint32_t timeout_ms)
{
    if (t == NULL || host == NULL || port == 0) {
        return DPM_ERR_PARAM;
    }
    char service[8];
    (void)snprintf(service, sizeof(service), "%u", (unsigned)port);
    struct addrinfo hints;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo *list = NULL;
    if (getaddrinfo(host, service, &hints, &list) != 0) {
        return DPM_ERR_TRANSPORT;
    }
    int fd = -1, timed_out = 0;
    for (const struct addrinfo *ai = list; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = connect_one(ai, timeout_ms, &timed_out);
    }
    freeaddrinfo(list);
    if (fd < 0) {
        return timed_out ? DPM_ERR_TIMEOUT : DPM_ERR_TRANSPORT;
    }
    t->fd = fd;
    t->timeout_ms = timeout_ms;
    return DPM_OK;
}

void dpm_posix_tcp_close(dpm_posix_tcp_t *t)
{
    if (t != NULL && t->fd >= 0) {
        close(t->fd);
        t->fd = -1;
    }
}

static int32_t clamp_len(size_t len)
{
    return len > INT32_MAX ? INT32_MAX : (int32_t)len;
}

static int32_t tcp_send(void *ctx, const uint8_t *buf, size_t len)
{
    dpm_posix_tcp_t *t = ctx;
    if (t->fd < 0) {
        return -1;
    }
    int ready = wait_fd(t->fd, POLLOUT, t->timeout_ms);
    if (ready <= 0) {
        return ready == 0 ? 0 : -1;
    }
    ssize_t n = send(t->fd, buf, (size_t)clamp_len(len), MSG_NOSIGNAL);
    if (n < 0) {
        return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
    }
    return (int32_t)n;
}

static int32_t tcp_recv(void *ctx, uint8_t *buf, size_t len)
{
    dpm_posix_tcp_t *t = ctx;
    if (t->fd < 0) {
        return -1;
    }
    int ready = wait_fd(t->fd, POLLIN, t->timeout_ms);
    if (ready <= 0) {
        return ready == 0 ? 0 : -1;
    }
    ssize_t n = recv(t->fd, buf, (size_t)clamp_len(len), 0);
    if (n == 0) {
        return -1; /* orderly shutdown by the peer */
    }
    if (n < 0) {
        return (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) ? 0 : -1;
    }
    return (int32_t)n;
}

dpm_transport_t dpm_posix_tcp(dpm_posix_tcp_t *t)
{
    dpm_transport_t tr = {tcp_send, tcp_recv, t};
    return tr;
}
