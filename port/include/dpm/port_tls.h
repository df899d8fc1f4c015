/* SPDX-License-Identifier: Apache-2.0 */
/* TLS client over any raw transport (Mbed TLS 3.6 LTS).
 *
 * dpm_tls_connect() takes a connected raw byte stream (a dpm_transport_t: TCP socket, lwIP
 * connection, modem AT channel, ...), runs a TLS 1.3 handshake (TLS 1.2 accepted when the
 * server offers nothing newer) that authenticates the server against ONE pinned CA and the
 * expected host name, and hands back another dpm_transport_t with the same contract, so the
 * layers above never know whether TLS is there.
 *
 * Memory. Mbed TLS allocates (record buffers, the peer certificate chain, PSA key material).
 * On a device, dpm_tls_use_arena() makes it take ALL of it from one caller-provided static
 * buffer; nothing then reaches the system heap. The arena is Mbed TLS's own process-wide
 * allocator: it is the one piece of global state the TLS path has (the SDK itself keeps none).
 *
 * Process-wide initialisation. TLS 1.3 in Mbed TLS 3.6 runs on PSA Crypto, which must be
 * initialised with psa_crypto_init() before a handshake (Mbed TLS 3.6 docs/use-psa-crypto.md:
 * "new modules in the library, such as TLS 1.3, can be introduced with a requirement to call
 * psa_crypto_init()"; ssl.h: a handshake "may call psa_crypto_init() if a negotiation involving
 * TLS 1.3 takes place"). dpm_tls_connect() calls psa_crypto_init() itself (it is idempotent) so
 * that failures surface as a status; an app may call it earlier. PSA keeps process-wide state
 * (key slots, its own DRBG): the ephemeral (EC)DHE keys of TLS 1.3 come from PSA's generator,
 * which a device feeds through mbedtls_hardware_poll() (see dpm_mbedtls_device.h); the TLS
 * randoms and TLS 1.2 key exchange use the dpm_rng_t passed in the config. With threads, build
 * Mbed TLS with MBEDTLS_THREADING_C (the host config does).
 *
 * Order on a device: dpm_tls_use_arena() first, then anything else that touches Mbed TLS.
 *
 * Each dpm_tls_t is independent (no shared state besides the two process-wide items above);
 * one context must not be used from two threads at once. A context must not move in memory
 * between dpm_tls_connect() and dpm_tls_close(): Mbed TLS keeps pointers into it. */
#ifndef DPM_PORT_TLS_H
#define DPM_PORT_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/port.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Handshake deadline used when dpm_tls_config_t.handshake_timeout_ms is 0. */
#ifndef DPM_TLS_DEFAULT_HANDSHAKE_TIMEOUT_MS
#define DPM_TLS_DEFAULT_HANDSHAKE_TIMEOUT_MS 10000u
#endif
/* How long dpm_tls_close() keeps trying to send close_notify. */
#ifndef DPM_TLS_CLOSE_TIMEOUT_MS
#define DPM_TLS_CLOSE_TIMEOUT_MS 1000u
#endif
/* Guard against a clock that does not advance: this many consecutive "try again" polls with
 * the same clock reading end a handshake or close with DPM_ERR_TIMEOUT. A transport that waits
 * for readiness (like the posix TCP one) never gets near it. */
#ifndef DPM_TLS_MAX_POLLS_PER_TICK
#define DPM_TLS_MAX_POLLS_PER_TICK 1000000u
#endif
/* Smallest arena dpm_tls_use_arena() accepts (a TLS session needs far more: see the test
 * report of tests/unit/test_tls_client.c for measured peaks). */
#define DPM_TLS_ARENA_MIN 4096u
/* Bookkeeping Mbed TLS 3.6's buffer allocator adds to every block (its memory_header: eight
 * machine words without MBEDTLS_MEMORY_BACKTRACE). */
#define DPM_TLS_ARENA_BLOCK_OVERHEAD (8u * sizeof(size_t))

/* Closes the raw connection (e.g. the socket). ctx is dpm_tls_config_t.raw.ctx. */
typedef void (*dpm_tls_raw_close_fn)(void *ctx);

typedef struct {
    /* The pinned trust anchor(s): one or more CA certificates, PEM or DER. PEM must include its
     * terminating NUL in ca_len (sizeof of a string literal does; Mbed TLS requires it). The
     * lean Mbed TLS profiles (dpm_mbedtls_device_lean*.h) read DER only and refuse PEM here and
     * in client_cert/client_key (DPM_ERR_PARAM; `openssl x509 -outform der` and `openssl pkey
     * -outform der` convert). The
     * bytes are parsed (copied) during dpm_tls_connect() and not used afterwards. */
    const uint8_t *ca;
    size_t ca_len;
    /* The expected server name: sent as SNI and matched against the certificate's
     * subjectAltName DNS entries (or CN). Required: without it any certificate from the CA
     * would be accepted for any name. At most 255 characters. */
    const char *hostname;
    /* The connected raw byte stream (send/recv: bytes moved, 0 = try later, < 0 = error or
     * closed). Its per-call wait bounds how far a deadline can be overshot: keep it well below
     * handshake_timeout_ms. */
    dpm_transport_t raw;
    /* Optional. If set, the TLS context owns the raw connection from dpm_tls_connect() on: it
     * calls raw_close(raw.ctx) when the connection fails or is closed. */
    dpm_tls_raw_close_fn raw_close;
    /* CSPRNG for the TLS layer (client random, TLS 1.2 ECDHE, blinding). Must outlive the
     * session. */
    dpm_rng_t rng;
    /* Monotonic clock for the handshake and close deadlines. */
    dpm_clock_t clock;
    /* Deadline for the whole handshake, from the dpm_tls_connect() call; 0 = default. */
    uint32_t handshake_timeout_ms;
    /* Optional: the device's own certificate (chain) and private key, for a collector that
     * authenticates devices by TLS client certificate (dpm-collector --device-ca). PEM with
     * its terminating NUL counted in the length, or DER; unencrypted key (PKCS#8 or SEC1).
     * Give both or neither. They are parsed (copied into the arena) during dpm_tls_connect()
     * and kept until dpm_tls_close(): a TLS 1.3 session with an ECDSA P-256 certificate needs
     * 38,072 bytes of arena with the device config instead of 33,112
     * (tests/unit/test_mbedtls_device_config.sh). */
    const uint8_t *client_cert;
    size_t client_cert_len;
    const uint8_t *client_key;
    size_t client_key_len;
} dpm_tls_config_t;

/* Internal state of a dpm_tls_t (read it through the functions below). */
typedef enum {
    DPM_TLS_STATE_IDLE = 0, /* never connected, or all resources released */
    DPM_TLS_STATE_OPEN,     /* handshake done: the transport view works */
    DPM_TLS_STATE_BROKEN    /* a read or write failed or the peer closed; call dpm_tls_close() */
} dpm_tls_state_t;

/* Bytes reserved in dpm_tls_t for the session's Mbed TLS contexts (mbedtls_ssl_context,
 * mbedtls_ssl_config, the pinned CA's mbedtls_x509_crt and the optional client certificate and
 * key). Their real sizes depend on the Mbed TLS configuration the port was built with (2,464
 * bytes with the project's host config on x86_64, 2,096 with the device config; on 32-bit ARM
 * 1,392 and 1,148), which an app must not need to know: dpm_tls_t has the same size whatever
 * an app compiles with, and needs no Mbed TLS header. port/tls/tls_client.c fails to build if
 * the real contexts do not fit. A device short of RAM may define a smaller value for the port
 * AND the app; if the two disagree, dpm_tls_connect refuses (see dpm_tls_connect_sized), it
 * never overruns. */
#ifndef DPM_TLS_MBEDTLS_BYTES
#define DPM_TLS_MBEDTLS_BYTES (360u * sizeof(void *))
#endif

/* A TLS client session. Caller-owned; zero-initialise or let dpm_tls_connect() do it. */
typedef struct {
    union {
        uint64_t align_u64;
        void *align_ptr;
        unsigned char bytes[DPM_TLS_MBEDTLS_BYTES];
    } mbedtls_opaque; /* Mbed TLS's ssl context, ssl config and CA chain */
    dpm_transport_t raw;
    dpm_tls_raw_close_fn raw_close;
    dpm_rng_t rng;
    dpm_clock_t clock;
    dpm_tls_state_t state;
    int io_failed;         /* the raw transport reported an error or a closed peer */
    int rng_failed;        /* the dpm_rng_t failed */
    int peer_closed;       /* the peer ended the session with close_notify */
    int mbedtls_error;     /* last fatal Mbed TLS (or PSA) error, 0 if none */
    uint32_t verify_flags; /* MBEDTLS_X509_BADCERT_* of the last handshake, 0 = verified */
    dpm_status_t status;   /* outcome of the last connect/close, for dpm_tls_reason() */
} dpm_tls_t;

/* Peak and current use of the Mbed TLS arena. */
typedef struct {
    size_t used;        /* bytes handed out now (payload only) */
    size_t blocks;      /* live allocations now */
    size_t peak_used;   /* highest `used` since the arena was installed or the last reset */
    size_t peak_blocks; /* highest `blocks` over the same period */
    /* peak_used + peak_blocks * DPM_TLS_ARENA_BLOCK_OVERHEAD: the peak including allocator
     * headers (an overestimate, as the two peaks need not coincide, but fragmentation is not
     * counted: size a real arena with some margin). */
    size_t peak_bytes;
} dpm_tls_arena_stats_t;

/* Route every Mbed TLS allocation to [buf, buf + len) (mbedtls_memory_buffer_alloc_init).
 * PROCESS-WIDE: it replaces Mbed TLS's calloc/free for the whole program. Call it once, before
 * any Mbed TLS use that may allocate (before psa_crypto_init() and the first dpm_tls_connect()):
 * a block allocated from the system heap and later freed into the arena aborts the program
 * (Mbed TLS checks). buf must stay valid for the rest of the program and is not touched by
 * anyone else. Not thread-safe with concurrent Mbed TLS use.
 * Sizing: measure (dpm_tls_arena_stats() on the host; tests/unit/test_mbedtls_device_config.sh
 * bisects the smallest arena that completes a session with the device config) and add margin.
 * Running out usually gives DPM_ERR_BUFFER, but Mbed TLS reports an allocation that fails
 * inside certificate signature verification as an untrusted certificate (DPM_ERR_TLS with
 * MBEDTLS_X509_BADCERT_NOT_TRUSTED), so an undersized arena can look like a wrong CA.
 * Returns DPM_OK, DPM_ERR_PARAM (NULL or len < DPM_TLS_ARENA_MIN) or DPM_ERR_UNSUPPORTED (Mbed
 * TLS built without MBEDTLS_MEMORY_BUFFER_ALLOC_C). */
dpm_status_t dpm_tls_use_arena(uint8_t *buf, size_t len);

/* Current and peak arena use. DPM_OK, DPM_ERR_PARAM (out NULL) or DPM_ERR_UNSUPPORTED (Mbed
 * TLS built without MBEDTLS_MEMORY_BUFFER_ALLOC_C or MBEDTLS_MEMORY_DEBUG, as on devices). */
dpm_status_t dpm_tls_arena_stats(dpm_tls_arena_stats_t *out);

/* Restart the peaks (to measure one session): they count again from the next allocation, which
 * includes what is already allocated. DPM_OK or DPM_ERR_UNSUPPORTED as above. */
dpm_status_t dpm_tls_arena_reset_peak(void);

/* dpm_tls_connect() passes sizeof(dpm_tls_t) as the app's compiler sees it to this, which
 * refuses a size other than the library's with DPM_ERR_PARAM, writing nothing to t: headers of
 * another dpmetrics release than the library fail cleanly instead of overrunning the app's
 * struct. */
dpm_status_t dpm_tls_connect_sized(dpm_tls_t *t, size_t t_size, const dpm_tls_config_t *cfg);

/* Set up TLS on cfg->raw and run the handshake until it completes or the deadline passes.
 * t must not hold an open session (a zeroed, never-connected or closed context is fine): it
 * is overwritten. The server must present a chain to cfg->ca for cfg->hostname (verification
 * REQUIRED); the client offers TLS 1.3 and TLS 1.2, nothing older. Calls psa_crypto_init().
 * Returns:
 *   DPM_OK            connected; use dpm_tls_transport(), finish with dpm_tls_close().
 *   DPM_ERR_PARAM     t/cfg NULL, a required field missing, hostname too long, the CA
 *                     bytes do not parse (or are PEM without the terminating NUL, or PEM
 *                     at all with a lean profile: dpm_tls_mbedtls_error() is then
 *                     MBEDTLS_ERR_PEM_FEATURE_UNAVAILABLE), or a
 *                     client certificate or key is given alone, does not parse, or the key
 *                     does not belong to the certificate.
 *   DPM_ERR_TLS       the handshake failed: certificate not trusted or not for hostname
 *                     (dpm_tls_verify_flags() != 0), the peer does not speak TLS, sent a
 *                     fatal alert (e.g. it wants a client certificate, or refused ours), or
 *                     no common version/cipher suite.
 *   DPM_ERR_TIMEOUT   the deadline passed first.
 *   DPM_ERR_TRANSPORT the raw transport failed or the peer closed the stream.
 *   DPM_ERR_RNG       cfg->rng failed, or PSA could not gather entropy.
 *   DPM_ERR_BUFFER    the Mbed TLS arena (or heap) ran out.
 * On every failure the connection is closed: a TLS alert was sent when Mbed TLS could, all
 * Mbed TLS memory is released, cfg->raw_close (if set) has been called, and the context is
 * IDLE. Unlike other SDK calls, a failed connect does write t: it records why
 * (dpm_tls_reason(), dpm_tls_verify_flags(), dpm_tls_mbedtls_error()); the one exception is a
 * header/library size mismatch (DPM_ERR_PARAM, t untouched; see dpm_tls_connect_sized). */
static inline dpm_status_t dpm_tls_connect(dpm_tls_t *t, const dpm_tls_config_t *cfg)
{
    return dpm_tls_connect_sized(t, sizeof(dpm_tls_t), cfg);
}

/* The TLS session as a transport with the port contract: send returns plaintext bytes taken
 * (> 0), 0 = try again later (call again with the SAME bytes: Mbed TLS may hold a record that
 * is half sent), < 0 = error or closed; recv returns plaintext bytes (> 0), 0 = nothing yet,
 * < 0 = error, or the peer closed (close_notify or end of stream). After a negative return the
 * session is BROKEN and every further call returns < 0; finish with dpm_tls_close(). The view
 * stays valid as long as t does; on an IDLE context both calls return < 0. */
dpm_transport_t dpm_tls_transport(dpm_tls_t *t);

/* Send close_notify (trying for up to DPM_TLS_CLOSE_TIMEOUT_MS), close the raw connection
 * (raw_close, if set) and release all Mbed TLS memory of the session. Always leaves t IDLE;
 * every dpm_tls_connect() that returned DPM_OK needs exactly one dpm_tls_close(), or the
 * session's memory stays allocated in the arena. Returns DPM_OK (close_notify sent, the peer
 * had already ended the session with its own close_notify, or nothing to close),
 * DPM_ERR_TRANSPORT (the session was broken by an error, or the alert could not be sent),
 * DPM_ERR_TIMEOUT, or DPM_ERR_PARAM (t NULL). */
dpm_status_t dpm_tls_close(dpm_tls_t *t);

/* MBEDTLS_X509_BADCERT_* flags of the last handshake: 0 when the server certificate was
 * verified (or verification was not reached), e.g. MBEDTLS_X509_BADCERT_NOT_TRUSTED for an
 * unknown CA, MBEDTLS_X509_BADCERT_CN_MISMATCH for the wrong host name. 0 for t NULL. */
uint32_t dpm_tls_verify_flags(const dpm_tls_t *t);

/* One short English sentence on the outcome of the last connect or close ("ok" on success),
 * naming the most important certificate problem if verification failed. Never NULL. */
const char *dpm_tls_reason(const dpm_tls_t *t);

/* The Mbed TLS / PSA error code behind the last failure (negative), 0 if none. For logs. */
int dpm_tls_mbedtls_error(const dpm_tls_t *t);

/* Negotiated protocol ("TLSv1.3", "TLSv1.2") and cipher suite (IANA-style name, e.g.
 * "TLS1-3-AES-128-GCM-SHA256") of an open session; "none" otherwise. */
const char *dpm_tls_version(const dpm_tls_t *t);
const char *dpm_tls_ciphersuite(const dpm_tls_t *t);

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_TLS_H */
