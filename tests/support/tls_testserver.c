/* SPDX-License-Identifier: Apache-2.0 */
/* TLS test helpers: throw-away PKI and loopback servers in child processes. */
#include "tls_testserver.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#define PKI_SCRIPT "tests/support/tls_testpki.sh"

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* In a fresh child: die with the parent, so a crashed test leaves no server behind. */
static void child_die_with_parent(void)
{
#if defined(__linux__)
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

/* Wait for pid with a bound; returns its wait status or -1 if it is still running. */
static int wait_bounded(pid_t pid, unsigned timeout_ms)
{
    uint64_t end = now_ms() + timeout_ms;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            return status;
        }
        if (r < 0 && errno != EINTR) {
            return 0; /* not our child (any more) */
        }
        if (now_ms() >= end) {
            return -1;
        }
        sleep_ms(10);
    }
}

/* ---- PKI ---------------------------------------------------------------------------------- */

int tls_testpki_create(tls_testpki_t *pki)
{
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0') {
        tmp = "/tmp";
    }
    if (snprintf(pki->dir, sizeof(pki->dir), "%s/dpm-tls-XXXXXX", tmp) >= (int)sizeof(pki->dir) ||
        mkdtemp(pki->dir) == NULL) {
        pki->dir[0] = '\0';
        return -1;
    }
    const char *script = getenv("DPM_TLS_TESTPKI");
    if (script == NULL || script[0] == '\0') {
        script = PKI_SCRIPT;
    }
    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
        child_die_with_parent();
        execlp("bash", "bash", script, pki->dir, (char *)NULL);
        _exit(127);
    }
    int status = wait_bounded(pid, 30000);
    if (status == -1) {
        kill(pid, SIGKILL);
        (void)waitpid(pid, &status, 0);
        return -1;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

void tls_testpki_destroy(tls_testpki_t *pki)
{
    if (pki->dir[0] == '\0') {
        return;
    }
    DIR *d = opendir(pki->dir);
    if (d != NULL) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
                continue;
            }
            if (snprintf(path, sizeof(path), "%s/%s", pki->dir, e->d_name) < (int)sizeof(path)) {
                (void)unlink(path);
            }
        }
        closedir(d);
    }
    (void)rmdir(pki->dir);
    pki->dir[0] = '\0';
}

const char *tls_testpki_path(const tls_testpki_t *pki, const char *file, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s/%s", pki->dir, file);
    return n >= 0 && (size_t)n < cap ? out : NULL;
}

int tls_testpki_load(const tls_testpki_t *pki, const char *file, uint8_t *buf, size_t cap,
                     size_t *len)
{
    char path[512];
    if (tls_testpki_path(pki, file, path, sizeof(path)) == NULL || cap == 0) {
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    size_t n = 0;
    for (;;) {
        if (n == cap - 1) {
            close(fd);
            return -1; /* no room for the NUL (or the file is larger) */
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            close(fd);
            return -1;
        }
        if (r == 0) {
            break;
        }
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    *len = n + 1;
    return 0;
}

/* ---- servers ------------------------------------------------------------------------------- */

static int file_contains(const char *path, const char *needle, char *line_out, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return 0;
    }
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        if (strstr(line, needle) != NULL) {
            found = 1;
            if (line_out != NULL) {
                snprintf(line_out, cap, "%s", line);
            }
        }
    }
    fclose(f);
    return found;
}

int tls_testserver_start_openssl(tls_testserver_t *s, const tls_testpki_t *pki, const char *cert,
                                 const char *key, const char *const *extra, uint32_t timeout_ms)
{
    enum { MAX_ARGS = 32 };
    char cert_path[512], key_path[512];
    memset(s, 0, sizeof(*s));
    if (tls_testpki_path(pki, cert, cert_path, sizeof(cert_path)) == NULL ||
        tls_testpki_path(pki, key, key_path, sizeof(key_path)) == NULL) {
        return -1;
    }
    const char *argv[MAX_ARGS];
    size_t argc = 0;
    static const char *const base[] = {"openssl", "s_server", "-accept", "127.0.0.1:0", "-cert"};
    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
        argv[argc++] = base[i];
    }
    argv[argc++] = cert_path;
    argv[argc++] = "-key";
    argv[argc++] = key_path;
    for (size_t i = 0; extra != NULL && extra[i] != NULL; i++) {
        if (argc >= MAX_ARGS - 1) {
            return -1;
        }
        argv[argc++] = extra[i];
    }
    argv[argc] = NULL;

    /* The log is named after a counter in the name, not the pid, so it exists before fork. */
    static unsigned serial;
    serial++;
    if (snprintf(s->log_path, sizeof(s->log_path), "%s/s_server-%u-%ld.log", pki->dir, serial,
                 (long)getpid()) >= (int)sizeof(s->log_path)) {
        return -1;
    }
    int log_fd = open(s->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (log_fd < 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(log_fd);
        return -1;
    }
    if (pid == 0) {
        child_die_with_parent();
        int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0) {
            _exit(127);
        }
        execvp("openssl", (char *const *)argv);
        _exit(127);
    }
    close(log_fd);
    s->pid = pid;

    uint64_t end = now_ms() + timeout_ms;
    char line[1024];
    while (now_ms() < end) {
        if (file_contains(s->log_path, "ACCEPT 127.0.0.1:", line, sizeof(line))) {
            const char *colon = strrchr(line, ':');
            long port = colon != NULL ? strtol(colon + 1, NULL, 10) : 0;
            if (port > 0 && port < 65536) {
                s->port = (uint16_t)port;
                return 0;
            }
            break;
        }
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            s->pid = 0; /* it exited: bad arguments? the log says */
            return -1;
        }
        sleep_ms(10);
    }
    tls_testserver_stop(s);
    return -1;
}

static int listen_loopback(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 8) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* The child side of the raw servers. Bounded: it gives up after 60 s on its own. */
static void raw_server_child(int lfd, int garbage)
{
    static const char page[] = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
                               "Content-Length: 25\r\nConnection: keep-alive\r\n\r\n"
                               "this server speaks no TLS";
    enum { MAX_CONN = 16 };
    int conns[MAX_CONN];
    int nconn = 0;
    uint64_t end = now_ms() + 60000u;
    while (now_ms() < end) {
        struct pollfd p = {lfd, POLLIN, 0};
        if (poll(&p, 1, 100) == 1 && nconn < MAX_CONN) {
            int c = accept(lfd, NULL, NULL);
            if (c >= 0) {
                conns[nconn++] = c;
                if (garbage) {
                    char buf[2048];
                    struct pollfd q = {c, POLLIN, 0};
                    ssize_t n = poll(&q, 1, 1000) == 1 ? read(c, buf, sizeof(buf)) : 0;
                    (void)n; /* the ClientHello (or nothing): either way, answer garbage */
                    n = write(c, page, sizeof(page) - 1);
                    (void)n;
                }
            }
        }
    }
    for (int i = 0; i < nconn; i++) {
        close(conns[i]);
    }
    _exit(0);
}

static int start_raw(tls_testserver_t *s, int garbage)
{
    memset(s, 0, sizeof(*s));
    uint16_t port = 0;
    int lfd = listen_loopback(&port);
    if (lfd < 0) {
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(lfd);
        return -1;
    }
    if (pid == 0) {
        child_die_with_parent();
        raw_server_child(lfd, garbage);
    }
    close(lfd); /* the child holds the listening socket; connects queue in its backlog */
    s->pid = pid;
    s->port = port;
    return 0;
}

int tls_testserver_start_garbage(tls_testserver_t *s)
{
    return start_raw(s, 1);
}

int tls_testserver_start_silent(tls_testserver_t *s)
{
    return start_raw(s, 0);
}

int tls_testserver_wait_log(const tls_testserver_t *s, const char *needle, uint32_t timeout_ms)
{
    uint64_t end = now_ms() + timeout_ms;
    do {
        if (s->log_path[0] != '\0' && file_contains(s->log_path, needle, NULL, 0)) {
            return 1;
        }
        sleep_ms(10);
    } while (now_ms() < end);
    return 0;
}

void tls_testserver_stop(tls_testserver_t *s)
{
    if (s == NULL || s->pid <= 0) {
        return;
    }
    pid_t pid = s->pid;
    s->pid = 0;
    if (kill(pid, SIGTERM) != 0) {
        (void)waitpid(pid, NULL, WNOHANG);
        return;
    }
    if (wait_bounded(pid, 1000) == -1) {
        kill(pid, SIGKILL);
        (void)wait_bounded(pid, 1000);
    }
}
