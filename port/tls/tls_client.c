/* SPDX-License-Identifier: Apache-2.0 */
/* TLS client over any raw dpm_transport_t, on Mbed TLS 3.6 (see dpm/port_tls.h). */
#include <stddef.h>
#include <string.h>

#include "mbedtls/build_info.h"
#include "mbedtls/asn1.h"
#include "mbedtls/bignum.h"
#include "mbedtls/cipher.h"
#include "mbedtls/ecp.h"
#include "mbedtls/md.h"
#include "mbedtls/net_sockets.h" /* MBEDTLS_ERR_NET_*: error codes only, not the socket module */
#include "mbedtls/pem.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509.h"
#include "mbedtls/x509_crt.h"
#if defined(MBEDTLS_MEMORY_BUFFER_ALLOC_C)
#include "mbedtls/memory_buffer_alloc.h"
#endif
#if defined(MBEDTLS_PSA_CRYPTO_C)
#include "psa/crypto.h"
#endif

#include "dpm/port_tls.h"

/* ---- the Mbed TLS contexts inside dpm_tls_t ------------------------------------------------ */

/* They live in dpm_tls_t's opaque storage (see DPM_TLS_MBEDTLS_BYTES), which they must fit and
 * whose alignment must do for them (C99 compile-time checks: a negative array size stops the
 * build). */
typedef struct {
    mbedtls_ssl_context ssl;
    mbedtls_ssl_config conf;
    mbedtls_x509_crt ca;
    mbedtls_x509_crt own_cert; /* empty unless dpm_tls_config_t.client_cert was given */
    mbedtls_pk_context own_key;
} tls_mbedtls_t;
struct tls_mbedtls_align_probe {
    char c;
    tls_mbedtls_t t;
};
struct u64_align_probe {
    char c;
    uint64_t t;
};
typedef char tls_mbedtls_fits_in_dpm_tls_t[sizeof(tls_mbedtls_t) <= DPM_TLS_MBEDTLS_BYTES ? 1 : -1];
typedef char tls_mbedtls_aligned_in_dpm_tls_t
    [offsetof(struct tls_mbedtls_align_probe, t) <= offsetof(struct u64_align_probe, t) ? 1 : -1];

static tls_mbedtls_t *mb(dpm_tls_t *t)
{
    return (tls_mbedtls_t *)(void *)t->mbedtls_opaque.bytes;
}

static const tls_mbedtls_t *mb_const(const dpm_tls_t *t)
{
    return (const tls_mbedtls_t *)(const void *)t->mbedtls_opaque.bytes;
}

/* ---- arena ---------------------------------------------------------------------------------- */

dpm_status_t dpm_tls_use_arena(uint8_t *buf, size_t len)
{
#if defined(MBEDTLS_MEMORY_BUFFER_ALLOC_C)
    if (buf == NULL || len < DPM_TLS_ARENA_MIN) {
        return DPM_ERR_PARAM;
    }
    mbedtls_memory_buffer_alloc_init(buf, len);
    return DPM_OK;
#else
    (void)buf;
    (void)len;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_tls_arena_stats(dpm_tls_arena_stats_t *out)
{
#if defined(MBEDTLS_MEMORY_BUFFER_ALLOC_C) && defined(MBEDTLS_MEMORY_DEBUG)
    if (out == NULL) {
        return DPM_ERR_PARAM;
    }
    mbedtls_memory_buffer_alloc_cur_get(&out->used, &out->blocks);
    mbedtls_memory_buffer_alloc_max_get(&out->peak_used, &out->peak_blocks);
    out->peak_bytes = out->peak_used + out->peak_blocks * DPM_TLS_ARENA_BLOCK_OVERHEAD;
    return DPM_OK;
#else
    (void)out;
    return DPM_ERR_UNSUPPORTED;
#endif
}

dpm_status_t dpm_tls_arena_reset_peak(void)
{
#if defined(MBEDTLS_MEMORY_BUFFER_ALLOC_C) && defined(MBEDTLS_MEMORY_DEBUG)
    mbedtls_memory_buffer_alloc_max_reset();
    return DPM_OK;
#else
    return DPM_ERR_UNSUPPORTED;
#endif
}

/* ---- adapters: dpm_rng_t as f_rng, the raw transport as BIO ------------------------------- */

static int tls_rng(void *ctx, unsigned char *out, size_t len)
{
    dpm_tls_t *t = ctx;
    if (t->rng.fill(t->rng.ctx, out, len) != 0) {
        t->rng_failed = 1;
        return MBEDTLS_ERR_SSL_NO_RNG;
    }
    return 0;
}

static size_t clamp_io(size_t len)
{
    return len > (size_t)INT32_MAX ? (size_t)INT32_MAX : len;
}

/* 0 from the raw transport means "try later": Mbed TLS's WANT_READ/WANT_WRITE. A negative
 * value is remembered, so the caller learns it was the transport and not TLS that failed. */
static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
    dpm_tls_t *t = ctx;
    len = clamp_io(len);
    int32_t n = t->raw.send(t->raw.ctx, buf, len);
    if (n == 0) {
        return MBEDTLS_ERR_SSL_WANT_WRITE;
    }
    if (n < 0 || (size_t)n > len) {
        t->io_failed = 1;
        return MBEDTLS_ERR_NET_SEND_FAILED;
    }
    return (int)n;
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
    dpm_tls_t *t = ctx;
    len = clamp_io(len);
    int32_t n = t->raw.recv(t->raw.ctx, buf, len);
    if (n == 0) {
        return MBEDTLS_ERR_SSL_WANT_READ;
    }
    if (n < 0 || (size_t)n > len) {
        t->io_failed = 1;
        return MBEDTLS_ERR_NET_RECV_FAILED;
    }
    return (int)n;
}

static int is_retry(int ret)
{
    return ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE;
}

/* ---- deadlines ---------------------------------------------------------------------------- */

typedef struct {
    const dpm_clock_t *clock;
    uint64_t deadline;
    uint64_t last_tick;
    uint32_t polls_this_tick;
} deadline_t;

static void deadline_start(deadline_t *d, const dpm_clock_t *clock, uint32_t timeout_ms)
{
    d->clock = clock;
    d->last_tick = clock->monotonic_ms(clock->ctx);
    d->deadline = d->last_tick + timeout_ms;
    d->polls_this_tick = 0;
}

/* After a "try again": 1 if the deadline has passed (or the clock looks stuck). */
static int deadline_passed(deadline_t *d)
{
    uint64_t now = d->clock->monotonic_ms(d->clock->ctx);
    if (now != d->last_tick) {
        d->last_tick = now;
        d->polls_this_tick = 0;
    } else if (++d->polls_this_tick >= DPM_TLS_MAX_POLLS_PER_TICK) {
        return 1;
    }
    return now >= d->deadline;
}

/* ---- setup and teardown ----------------------------------------------------------------- */

static void release(dpm_tls_t *t)
{
    mbedtls_ssl_free(&mb(t)->ssl);
    mbedtls_ssl_config_free(&mb(t)->conf);
    mbedtls_x509_crt_free(&mb(t)->ca);
    mbedtls_x509_crt_free(&mb(t)->own_cert);
    mbedtls_pk_free(&mb(t)->own_key);
    if (t->raw_close != NULL) {
        t->raw_close(t->raw.ctx);
    }
    t->raw_close = NULL;
    t->state = DPM_TLS_STATE_IDLE;
}

/* Mbed TLS codes are high-level (module) + low-level parts; either may say "out of memory". */
static int is_alloc_error(int ret)
{
    if (ret >= 0) {
        return 0;
    }
    int high = -(int)((unsigned)-ret & 0xFF80u);
    int low = -(int)((unsigned)-ret & 0x007Fu);
    return high == MBEDTLS_ERR_SSL_ALLOC_FAILED || high == MBEDTLS_ERR_X509_ALLOC_FAILED ||
           high == MBEDTLS_ERR_PK_ALLOC_FAILED || high == MBEDTLS_ERR_ECP_ALLOC_FAILED ||
           high == MBEDTLS_ERR_CIPHER_ALLOC_FAILED || high == MBEDTLS_ERR_MD_ALLOC_FAILED ||
           high == MBEDTLS_ERR_PEM_ALLOC_FAILED || low == MBEDTLS_ERR_MPI_ALLOC_FAILED ||
           low == MBEDTLS_ERR_ASN1_ALLOC_FAILED;
}

/* PEM this build cannot read. With PEM (MBEDTLS_PEM_PARSE_C): PEM without its NUL (Mbed TLS's
 * PEM reader relies on it). Without (the lean profiles: DER only, 2.5 KB less flash in make size)
 * Mbed TLS would hand PEM text to the DER parser and say only "invalid format": any PEM is
 * refused here instead, with MBEDTLS_ERR_PEM_FEATURE_UNAVAILABLE, which dpm_tls_reason turns
 * into the way to convert it. DER starts with an ASN.1 SEQUENCE (0x30); PEM has a "-----BEGIN"
 * line, perhaps after other text (openssl's "Bag Attributes", a -text dump). */
static int pem_unreadable(dpm_tls_t *t, const uint8_t *p, size_t len)
{
    static const char pem_tag[] = "-----BEGIN";
    size_t tag_len = sizeof(pem_tag) - 1u;
#if defined(MBEDTLS_PEM_PARSE_C)
    (void)t;
    return len >= tag_len && memcmp(p, pem_tag, tag_len) == 0 && p[len - 1u] != 0;
#else
    if (len == 0 || p[0] == 0x30u) {
        return 0;
    }
    for (size_t i = 0; i + tag_len <= len; i++) {
        if (memcmp(p + i, pem_tag, tag_len) == 0) {
            t->mbedtls_error = MBEDTLS_ERR_PEM_FEATURE_UNAVAILABLE;
            return 1;
        }
    }
    return 0;
#endif
}

/* Parse the pinned CA. */
static dpm_status_t parse_ca(dpm_tls_t *t, const uint8_t *ca, size_t len)
{
    if (pem_unreadable(t, ca, len)) {
        return DPM_ERR_PARAM;
    }
    int ret = mbedtls_x509_crt_parse(&mb(t)->ca, ca, len);
    t->mbedtls_error = ret < 0 ? ret : 0;
    if (ret == 0) {
        return DPM_OK;
    }
    return is_alloc_error(ret) ? DPM_ERR_BUFFER : DPM_ERR_PARAM; /* > 0: some certs failed */
}

/* The device's own certificate and key (optional), checked to belong together. */
static dpm_status_t parse_own(dpm_tls_t *t, const dpm_tls_config_t *cfg)
{
    if (cfg->client_cert == NULL) {
        return DPM_OK;
    }
    if (pem_unreadable(t, cfg->client_cert, cfg->client_cert_len) ||
        pem_unreadable(t, cfg->client_key, cfg->client_key_len)) {
        return DPM_ERR_PARAM;
    }
    int ret = mbedtls_x509_crt_parse(&mb(t)->own_cert, cfg->client_cert, cfg->client_cert_len);
    if (ret == 0) {
        ret = mbedtls_pk_parse_key(&mb(t)->own_key, cfg->client_key, cfg->client_key_len, NULL, 0,
                                   tls_rng, t);
    }
    if (ret == 0) {
        ret = mbedtls_pk_check_pair(&mb(t)->own_cert.pk, &mb(t)->own_key, tls_rng, t);
    }
    if (ret == 0) {
        ret = mbedtls_ssl_conf_own_cert(&mb(t)->conf, &mb(t)->own_cert, &mb(t)->own_key);
    }
    if (ret != 0) {
        t->mbedtls_error = ret;
        return is_alloc_error(ret) ? DPM_ERR_BUFFER : t->rng_failed ? DPM_ERR_RNG : DPM_ERR_PARAM;
    }
    return DPM_OK;
}

static dpm_status_t init_psa(dpm_tls_t *t)
{
#if defined(MBEDTLS_PSA_CRYPTO_C)
    psa_status_t ps = psa_crypto_init();
    if (ps != PSA_SUCCESS) {
        t->mbedtls_error = (int)ps;
        if (ps == PSA_ERROR_INSUFFICIENT_MEMORY) {
            return DPM_ERR_BUFFER;
        }
        return ps == PSA_ERROR_INSUFFICIENT_ENTROPY ? DPM_ERR_RNG : DPM_ERR_TLS;
    }
#else
    (void)t;
#endif
    return DPM_OK;
}

static dpm_status_t setup(dpm_tls_t *t, const dpm_tls_config_t *cfg)
{
    dpm_status_t st = init_psa(t);
    if (st != DPM_OK) {
        return st;
    }
    st = parse_ca(t, cfg->ca, cfg->ca_len);
    if (st != DPM_OK) {
        return st;
    }
    int ret = mbedtls_ssl_config_defaults(&mb(t)->conf, MBEDTLS_SSL_IS_CLIENT,
                                          MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
    if (ret == 0) {
        mbedtls_ssl_conf_authmode(&mb(t)->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
        mbedtls_ssl_conf_ca_chain(&mb(t)->conf, &mb(t)->ca, NULL);
        mbedtls_ssl_conf_rng(&mb(t)->conf, tls_rng, t);
#if defined(MBEDTLS_SSL_PROTO_TLS1_2)
        mbedtls_ssl_conf_min_tls_version(&mb(t)->conf, MBEDTLS_SSL_VERSION_TLS1_2);
#else /* the lean profile: TLS 1.3 only (Mbed TLS refuses a 1.2 minimum it cannot speak) */
        mbedtls_ssl_conf_min_tls_version(&mb(t)->conf, MBEDTLS_SSL_VERSION_TLS1_3);
#endif
#if defined(MBEDTLS_SSL_PROTO_TLS1_3)
        mbedtls_ssl_conf_max_tls_version(&mb(t)->conf, MBEDTLS_SSL_VERSION_TLS1_3);
#else
        mbedtls_ssl_conf_max_tls_version(&mb(t)->conf, MBEDTLS_SSL_VERSION_TLS1_2);
#endif
        st = parse_own(t, cfg);
        if (st != DPM_OK) {
            return st;
        }
        ret = mbedtls_ssl_setup(&mb(t)->ssl, &mb(t)->conf);
    }
    if (ret == 0) {
        ret = mbedtls_ssl_set_hostname(&mb(t)->ssl, cfg->hostname);
    }
    if (ret != 0) {
        t->mbedtls_error = ret;
        return is_alloc_error(ret) ? DPM_ERR_BUFFER : DPM_ERR_PARAM;
    }
    mbedtls_ssl_set_bio(&mb(t)->ssl, t, bio_send, bio_recv, NULL);
    return DPM_OK;
}

static int config_ok(const dpm_tls_config_t *cfg)
{
    int own_cert = cfg->client_cert != NULL && cfg->client_cert_len > 0;
    int own_key = cfg->client_key != NULL && cfg->client_key_len > 0;
    return cfg->ca != NULL && cfg->ca_len > 0 && cfg->hostname != NULL &&
           cfg->hostname[0] != '\0' && cfg->raw.send != NULL && cfg->raw.recv != NULL &&
           cfg->rng.fill != NULL && cfg->clock.monotonic_ms != NULL && own_cert == own_key &&
           (own_cert || (cfg->client_cert == NULL && cfg->client_key == NULL));
}

/* The status for a fatal handshake result. Verification problems first: they are what the
 * caller must see even when sending the alert afterwards failed on a closed socket. */
static dpm_status_t classify(const dpm_tls_t *t, int ret)
{
    if (t->verify_flags != 0 || ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
        return DPM_ERR_TLS;
    }
    if (t->rng_failed) {
        return DPM_ERR_RNG;
    }
    if (t->io_failed) {
        return DPM_ERR_TRANSPORT;
    }
    if (is_alloc_error(ret)) {
        return DPM_ERR_BUFFER;
    }
    if (ret == MBEDTLS_ERR_SSL_BAD_CONFIG || ret == MBEDTLS_ERR_SSL_BAD_INPUT_DATA) {
        return DPM_ERR_PARAM;
    }
    return DPM_ERR_TLS;
}

static dpm_status_t handshake(dpm_tls_t *t, uint32_t timeout_ms)
{
    deadline_t d;
    deadline_start(&d, &t->clock, timeout_ms);
    for (;;) {
        int ret = mbedtls_ssl_handshake(&mb(t)->ssl);
        if (ret == 0) {
            return DPM_OK;
        }
        if (!is_retry(ret)) {
            t->verify_flags = mbedtls_ssl_get_verify_result(&mb(t)->ssl);
            if (t->verify_flags == (uint32_t)-1) { /* verification not reached */
                t->verify_flags = 0;
            }
            t->mbedtls_error = ret;
            return classify(t, ret);
        }
        if (deadline_passed(&d)) {
            t->mbedtls_error = ret;
            return DPM_ERR_TIMEOUT;
        }
    }
}

dpm_status_t dpm_tls_connect_sized(dpm_tls_t *t, size_t t_size, const dpm_tls_config_t *cfg)
{
    if (t == NULL || t_size != sizeof(*t) || cfg == NULL) {
        return DPM_ERR_PARAM;
    }
    memset(t, 0, sizeof(*t));
    mbedtls_ssl_init(&mb(t)->ssl);
    mbedtls_ssl_config_init(&mb(t)->conf);
    mbedtls_x509_crt_init(&mb(t)->ca);
    mbedtls_x509_crt_init(&mb(t)->own_cert);
    mbedtls_pk_init(&mb(t)->own_key);
    t->raw = cfg->raw;
    t->raw_close = cfg->raw_close;
    t->rng = cfg->rng;
    t->clock = cfg->clock;
    dpm_status_t st = config_ok(cfg) ? setup(t, cfg) : DPM_ERR_PARAM;
    if (st == DPM_OK) {
        uint32_t timeout = cfg->handshake_timeout_ms != 0 ? cfg->handshake_timeout_ms
                                                          : DPM_TLS_DEFAULT_HANDSHAKE_TIMEOUT_MS;
        st = handshake(t, timeout);
    }
    t->status = st;
    if (st != DPM_OK) {
        release(t);
        return st;
    }
    t->state = DPM_TLS_STATE_OPEN;
    return DPM_OK;
}

dpm_status_t dpm_tls_close(dpm_tls_t *t)
{
    if (t == NULL) {
        return DPM_ERR_PARAM;
    }
    if (t->state == DPM_TLS_STATE_IDLE) {
        return DPM_OK;
    }
    /* A session broken by an error cannot send close_notify. One the peer ended with its own
     * close_notify still answers with ours (best effort: the peer may be gone already). */
    dpm_status_t st = t->peer_closed ? DPM_OK : DPM_ERR_TRANSPORT;
    if (t->state == DPM_TLS_STATE_OPEN || t->peer_closed) {
        deadline_t d;
        deadline_start(&d, &t->clock, DPM_TLS_CLOSE_TIMEOUT_MS);
        int ret;
        do {
            ret = mbedtls_ssl_close_notify(&mb(t)->ssl);
        } while (is_retry(ret) && !deadline_passed(&d));
        if (!t->peer_closed) {
            st = ret == 0 ? DPM_OK : is_retry(ret) ? DPM_ERR_TIMEOUT : DPM_ERR_TRANSPORT;
            t->mbedtls_error = ret;
        }
    }
    t->status = st;
    release(t);
    return st;
}

/* ---- the transport view --------------------------------------------------------------------- */

static int32_t tls_send(void *ctx, const uint8_t *buf, size_t len)
{
    dpm_tls_t *t = ctx;
    if (t->state != DPM_TLS_STATE_OPEN || (buf == NULL && len > 0)) {
        return -1;
    }
    int ret = mbedtls_ssl_write(&mb(t)->ssl, buf, clamp_io(len));
    if (ret >= 0) {
        return (int32_t)ret;
    }
    if (is_retry(ret)) {
        return 0;
    }
    t->mbedtls_error = ret;
    t->state = DPM_TLS_STATE_BROKEN;
    return -1;
}

static int32_t tls_recv(void *ctx, uint8_t *buf, size_t len)
{
    dpm_tls_t *t = ctx;
    if (t->state != DPM_TLS_STATE_OPEN || buf == NULL) {
        return -1;
    }
    int ret = mbedtls_ssl_read(&mb(t)->ssl, buf, clamp_io(len));
    if (ret > 0) {
        return (int32_t)ret;
    }
    /* A TLS 1.3 NewSessionTicket is only signalled when enabled; it is not data either way. */
    if (is_retry(ret) || ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) {
        return 0;
    }
    /* close_notify: a clean end. Anything else, including 0 (end of stream without
     * close_notify, which could be a truncation), breaks the session. */
    if (ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
        t->peer_closed = 1;
    } else {
        t->mbedtls_error = ret;
    }
    t->state = DPM_TLS_STATE_BROKEN;
    return -1;
}

dpm_transport_t dpm_tls_transport(dpm_tls_t *t)
{
    dpm_transport_t tr = {tls_send, tls_recv, t};
    return tr;
}

/* ---- diagnostics ------------------------------------------------------------------------- */

uint32_t dpm_tls_verify_flags(const dpm_tls_t *t)
{
    return t == NULL ? 0u : t->verify_flags;
}

int dpm_tls_mbedtls_error(const dpm_tls_t *t)
{
    return t == NULL ? 0 : t->mbedtls_error;
}

typedef struct {
    uint32_t flag;
    const char *text;
} flag_text_t;

/* Most important first: the first flag set names the failure. Mbed TLS 3.6 sets some flags
 * only with an option the device profiles leave out: the dates only with
 * MBEDTLS_HAVE_TIME_DATE, revocation only with CRLs (MBEDTLS_X509_CRL_PARSE_C), "skipped" only
 * on a server's side (MBEDTLS_SSL_SRV_C). Their texts are kept out of such builds (a device
 * profile's 203 bytes of flash, make size); an unexpected flag still ends in BADCERT_OTHER's
 * or the status's text. */
static const flag_text_t verify_texts[] = {
    {MBEDTLS_X509_BADCERT_NOT_TRUSTED, "server certificate not signed by the pinned CA"},
    {MBEDTLS_X509_BADCERT_CN_MISMATCH, "server certificate is not for the expected host name"},
#if defined(MBEDTLS_HAVE_TIME_DATE)
    {MBEDTLS_X509_BADCERT_EXPIRED, "server certificate (or its CA) has expired"},
    {MBEDTLS_X509_BADCERT_FUTURE, "server certificate (or its CA) is not valid yet"},
#endif
#if defined(MBEDTLS_X509_CRL_PARSE_C)
    {MBEDTLS_X509_BADCERT_REVOKED, "server certificate has been revoked"},
#endif
    {MBEDTLS_X509_BADCERT_MISSING, "server sent no certificate"},
    {MBEDTLS_X509_BADCERT_KEY_USAGE, "server certificate key usage forbids TLS server use"},
    {MBEDTLS_X509_BADCERT_EXT_KEY_USAGE, "server certificate is not for TLS server auth"},
    {MBEDTLS_X509_BADCERT_NS_CERT_TYPE, "server certificate type forbids TLS server use"},
    {MBEDTLS_X509_BADCERT_BAD_MD, "server certificate signed with an unacceptable hash"},
    {MBEDTLS_X509_BADCERT_BAD_PK, "server certificate signed with an unacceptable algorithm"},
    {MBEDTLS_X509_BADCERT_BAD_KEY, "server certificate key is unacceptable (curve or size)"},
#if defined(MBEDTLS_SSL_SRV_C)
    {MBEDTLS_X509_BADCERT_SKIP_VERIFY, "server certificate verification was skipped"},
#endif
    {MBEDTLS_X509_BADCERT_OTHER, "server certificate rejected"},
};

static const char *handshake_text(const dpm_tls_t *t)
{
    switch (t->mbedtls_error) {
    case MBEDTLS_ERR_SSL_INVALID_RECORD:
    case MBEDTLS_ERR_SSL_UNEXPECTED_MESSAGE:
    case MBEDTLS_ERR_SSL_UNEXPECTED_RECORD:
    case MBEDTLS_ERR_SSL_DECODE_ERROR: return "peer did not answer with valid TLS";
    case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE: return "server sent a fatal TLS alert";
    case MBEDTLS_ERR_SSL_BAD_PROTOCOL_VERSION: return "no common TLS version (1.2 or 1.3)";
    case MBEDTLS_ERR_SSL_HANDSHAKE_FAILURE:
        return "TLS handshake failed (no common cipher suite or group?)";
    case MBEDTLS_ERR_SSL_INVALID_MAC: return "TLS record authentication failed";
    case MBEDTLS_ERR_SSL_BAD_CERTIFICATE:
    case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED: return "server certificate rejected";
    default: return "TLS handshake failed";
    }
}

const char *dpm_tls_reason(const dpm_tls_t *t)
{
    if (t == NULL) {
        return "no TLS context";
    }
    for (size_t i = 0; i < sizeof(verify_texts) / sizeof(verify_texts[0]); i++) {
        if ((t->verify_flags & verify_texts[i].flag) != 0u) {
            return verify_texts[i].text;
        }
    }
    switch (t->status) {
    case DPM_OK: return "ok";
    case DPM_ERR_PARAM:
#if !defined(MBEDTLS_PEM_PARSE_C)
        if (t->mbedtls_error == MBEDTLS_ERR_PEM_FEATURE_UNAVAILABLE) {
            return "PEM certificate or key given, but this TLS build (lean profile) reads DER "
                   "only: convert it with openssl x509 -outform der (certificates) or openssl "
                   "pkey -outform der (keys)";
        }
#endif
        return "bad TLS configuration (missing field, unparsable CA, or host name too long)";
    case DPM_ERR_TIMEOUT: return "TLS handshake or close did not finish before the deadline";
    case DPM_ERR_TRANSPORT: return "the connection failed or the peer closed it";
    case DPM_ERR_RNG: return "the random generator failed";
    case DPM_ERR_BUFFER: return "out of Mbed TLS memory (arena too small)";
    case DPM_ERR_TLS: return handshake_text(t);
    default: return "TLS failed";
    }
}

const char *dpm_tls_version(const dpm_tls_t *t)
{
    if (t == NULL || t->state != DPM_TLS_STATE_OPEN) {
        return "none";
    }
    return mbedtls_ssl_get_version(&mb_const(t)->ssl);
}

const char *dpm_tls_ciphersuite(const dpm_tls_t *t)
{
    if (t == NULL || t->state != DPM_TLS_STATE_OPEN) {
        return "none";
    }
    return mbedtls_ssl_get_ciphersuite(&mb_const(t)->ssl);
}
