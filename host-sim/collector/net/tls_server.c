/* SPDX-License-Identifier: Apache-2.0 */
/* Mbed TLS server configuration and deadline-bounded sessions (see tls_server.h). */
#include "collector/net/tls_server.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "mbedtls/error.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/oid.h"
#include "mbedtls/sha256.h"
#include "psa/crypto.h"

const int coll_tls_ciphersuites[] = {MBEDTLS_TLS1_3_AES_128_GCM_SHA256,
                                     MBEDTLS_TLS1_3_AES_256_GCM_SHA384,
                                     MBEDTLS_TLS1_3_CHACHA20_POLY1305_SHA256,
                                     MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
                                     MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
                                     MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
                                     MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
                                     MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
                                     MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
                                     0};

uint64_t coll_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int fail(char *err, size_t cap, const char *what, const char *path, int ret)
{
    char msg[128];
    mbedtls_strerror(ret, msg, sizeof(msg));
    snprintf(err, cap, "%s %s: %s", what, path, msg);
    return -1;
}

int coll_tls_rng_init(dpm_posix_rng_t *rng, const char *who, char *err, size_t cap)
{
    if (psa_crypto_init() != PSA_SUCCESS) {
        snprintf(err, cap, "psa_crypto_init failed");
        return -1;
    }
    dpm_status_t st = dpm_posix_rng_init(rng, (const uint8_t *)who, strlen(who));
    if (st != DPM_OK) {
        snprintf(err, cap, "cannot seed the random generator: %s", dpm_strerror(st));
        return -1;
    }
    return 0;
}

int coll_tls_init(coll_tls_t *t, const char *cert_path, const char *key_path,
                  const char *device_ca_path, char *err, size_t errcap)
{
    memset(t, 0, sizeof(*t));
    mbedtls_ssl_config_init(&t->conf);
    mbedtls_x509_crt_init(&t->cert);
    mbedtls_x509_crt_init(&t->device_ca);
    mbedtls_pk_init(&t->key);
    if (coll_tls_rng_init(&t->rng, "dpm-collector", err, errcap) != 0) {
        return -1;
    }
    int ret = mbedtls_x509_crt_parse_file(&t->cert, cert_path);
    if (ret != 0) {
        return fail(err, errcap, "cannot load certificate", cert_path, ret);
    }
    ret = mbedtls_pk_parse_keyfile(&t->key, key_path, NULL, dpm_posix_rng_f_rng, &t->rng);
    if (ret != 0) {
        return fail(err, errcap, "cannot load key", key_path, ret);
    }
    ret = mbedtls_pk_check_pair(&t->cert.pk, &t->key, dpm_posix_rng_f_rng, &t->rng);
    if (ret != 0) {
        return fail(err, errcap, "key does not match the certificate", key_path, ret);
    }
    ret = mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_SERVER, MBEDTLS_SSL_TRANSPORT_STREAM,
                                      MBEDTLS_SSL_PRESET_DEFAULT);
    if (ret != 0) {
        return fail(err, errcap, "TLS configuration", "", ret);
    }
    mbedtls_ssl_conf_min_tls_version(&t->conf, MBEDTLS_SSL_VERSION_TLS1_2);
    mbedtls_ssl_conf_max_tls_version(&t->conf, MBEDTLS_SSL_VERSION_TLS1_3);
    mbedtls_ssl_conf_ciphersuites(&t->conf, coll_tls_ciphersuites);
    mbedtls_ssl_conf_rng(&t->conf, dpm_posix_rng_f_rng, &t->rng);
    if (device_ca_path != NULL) {
        ret = mbedtls_x509_crt_parse_file(&t->device_ca, device_ca_path);
        if (ret != 0) {
            return fail(err, errcap, "cannot load device CA", device_ca_path, ret);
        }
        mbedtls_ssl_conf_ca_chain(&t->conf, &t->device_ca, NULL);
        mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_OPTIONAL);
        t->ask_device_cert = 1;
    } else {
        mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_NONE);
    }
    ret = mbedtls_ssl_conf_own_cert(&t->conf, &t->cert, &t->key);
    if (ret != 0) {
        return fail(err, errcap, "TLS certificate", cert_path, ret);
    }
    return 0;
}

void coll_tls_free(coll_tls_t *t)
{
    mbedtls_ssl_config_free(&t->conf);
    mbedtls_pk_free(&t->key);
    mbedtls_x509_crt_free(&t->cert);
    mbedtls_x509_crt_free(&t->device_ca);
    dpm_posix_rng_free(&t->rng);
    mbedtls_psa_crypto_free();
}

/* Wait until fd is ready for `events` or the deadline passes: 1 ready, 0 timeout, -1 error. */
int coll_wait_fd(int fd, short events, uint64_t deadline_ms)
{
    for (;;) {
        uint64_t now = coll_now_ms();
        if (now >= deadline_ms) {
            return 0;
        }
        uint64_t left = deadline_ms - now;
        struct pollfd p = {fd, events, 0};
        int r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (r > 0) {
            return 1; /* readable, writable, hang-up or error: the I/O call tells which */
        }
        if (r < 0 && errno != EINTR) {
            return -1;
        }
    }
}

int coll_tls_bio_io(int fd, uint64_t deadline_ms, unsigned char *buf, size_t len, int out)
{
    int failed = out ? MBEDTLS_ERR_NET_SEND_FAILED : MBEDTLS_ERR_NET_RECV_FAILED;
    for (;;) {
        int w = coll_wait_fd(fd, out ? POLLOUT : POLLIN, deadline_ms);
        if (w == 0) {
            return MBEDTLS_ERR_SSL_TIMEOUT;
        }
        if (w < 0) {
            return failed;
        }
        ssize_t n = out ? send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT)
                        : recv(fd, buf, len, MSG_DONTWAIT);
        if (n >= 0) {
            return (int)n; /* received 0: the peer closed */
        }
        if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
            return errno == ECONNRESET || (out && errno == EPIPE) ? MBEDTLS_ERR_NET_CONN_RESET
                                                                  : failed;
        }
    }
}

int coll_tls_bio_send(void *ctx, const unsigned char *buf, size_t len)
{
    const coll_tls_bio_t *io = ctx;
    /* buf is only read from (send) */
    return coll_tls_bio_io(io->fd, io->deadline_ms, (unsigned char *)buf, len, 1);
}

int coll_tls_bio_recv(void *ctx, unsigned char *buf, size_t len)
{
    const coll_tls_bio_t *io = ctx;
    return coll_tls_bio_io(io->fd, io->deadline_ms, buf, len, 0);
}

static int io_result(int ret)
{
    return ret == MBEDTLS_ERR_SSL_TIMEOUT ? COLL_IO_TIMEOUT : COLL_IO_ERROR;
}

int coll_tls_accept(coll_tls_conn_t *c, const coll_tls_t *t, int fd, uint64_t deadline_ms)
{
    memset(c, 0, sizeof(*c));
    mbedtls_ssl_init(&c->ssl);
    c->io.fd = fd;
    c->io.deadline_ms = deadline_ms;
    if (mbedtls_ssl_setup(&c->ssl, &t->conf) != 0) {
        return COLL_IO_ERROR;
    }
    mbedtls_ssl_set_bio(&c->ssl, &c->io, coll_tls_bio_send, coll_tls_bio_recv, NULL);
    int ret;
    do {
        ret = mbedtls_ssl_handshake(&c->ssl);
    } while (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE);
    return ret == 0 ? 0 : io_result(ret);
}

int coll_tls_read(coll_tls_conn_t *c, uint8_t *buf, size_t cap, uint64_t deadline_ms)
{
    c->io.deadline_ms = deadline_ms;
    for (;;) {
        int ret = mbedtls_ssl_read(&c->ssl, buf, cap);
        if (ret > 0) {
            return ret;
        }
        if (ret == 0 || ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
            return COLL_IO_EOF;
        }
        if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
            continue; /* e.g. a post-handshake message was processed */
        }
        return io_result(ret);
    }
}

int coll_tls_ssl_write_all(mbedtls_ssl_context *ssl, const uint8_t *buf, size_t len)
{
    size_t off = 0;
    while (off < len) {
        int ret = mbedtls_ssl_write(ssl, buf + off, len - off);
        if (ret > 0) {
            off += (size_t)ret;
        } else if (ret != MBEDTLS_ERR_SSL_WANT_READ && ret != MBEDTLS_ERR_SSL_WANT_WRITE) {
            return ret;
        }
    }
    return 0;
}

int coll_tls_write_all(coll_tls_conn_t *c, const uint8_t *buf, size_t len, uint64_t deadline_ms)
{
    c->io.deadline_ms = deadline_ms;
    int ret = coll_tls_ssl_write_all(&c->ssl, buf, len);
    return ret == 0 ? 0 : io_result(ret);
}

int coll_tls_peer_identity(coll_tls_conn_t *c, char *out, size_t cap)
{
    const mbedtls_x509_crt *peer = mbedtls_ssl_get_peer_cert(&c->ssl);
    out[0] = '\0';
    if (peer == NULL) {
        return 0;
    }
    if (mbedtls_ssl_get_verify_result(&c->ssl) != 0) {
        return -1;
    }
    for (const mbedtls_x509_name *n = &peer->subject; n != NULL; n = n->next) {
        if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &n->oid) == 0 && n->val.len > 0 &&
            n->val.len + 6 < cap) {
            memcpy(out, "cert:", 5);
            for (size_t i = 0; i < n->val.len; i++) {
                unsigned char ch = n->val.p[i];
                out[5 + i] = (ch < 0x20 || ch == 0x7F) ? '?' : (char)ch;
            }
            out[5 + n->val.len] = '\0';
            return 1;
        }
    }
    return -1;
}

int coll_tls_peer_fingerprint(coll_tls_conn_t *c, uint8_t sha256[32])
{
    const mbedtls_x509_crt *peer = mbedtls_ssl_get_peer_cert(&c->ssl);
    memset(sha256, 0, 32);
    if (peer == NULL || mbedtls_sha256(peer->raw.p, peer->raw.len, sha256, 0) != 0) {
        return -1;
    }
    return 0;
}

void coll_tls_conn_close(coll_tls_conn_t *c, int notify, uint64_t deadline_ms)
{
    if (notify) {
        c->io.deadline_ms = deadline_ms;
        mbedtls_ssl_close_notify(&c->ssl);
    }
    mbedtls_ssl_free(&c->ssl);
}
