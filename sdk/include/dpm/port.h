/* SPDX-License-Identifier: Apache-2.0 */
/* The port interface: everything the SDK needs from a platform, as function pointers that
 * each carry a context pointer. Nothing is global, so many independent device instances can
 * live in one process (the simulator runs millions). A port fills these structs; the SDK only
 * calls through them.
 *
 * Return conventions: functions returning int use 0 for success and a negative value for
 * failure, except transport send/recv, which follow coreHTTP: bytes moved (> 0), 0 = nothing
 * moved yet (try again later), < 0 = error or connection closed. */
#ifndef DPM_PORT_H
#define DPM_PORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Random bytes. On a device this MUST be a cryptographically secure generator (the posix port
 * uses Mbed TLS CTR_DRBG seeded from getrandom). Seeded, reproducible generators exist only in
 * tests/ and host-sim/. fill() writes exactly len bytes or returns < 0. */
typedef struct {
    int (*fill)(void *ctx, uint8_t *out, size_t len);
    void *ctx;
} dpm_rng_t;

/* Time. monotonic_ms is required and never goes backwards; wall_time_s (seconds since the
 * Unix epoch) is optional (NULL) and only labels data, it never drives retries. */
typedef struct {
    uint64_t (*monotonic_ms)(void *ctx);
    int (*wall_time_s)(void *ctx, int64_t *out);
    void *ctx;
} dpm_clock_t;

/* A fixed region of persistent storage of `size` bytes, addressed by offset. Each write() is
 * atomic: after a power loss the region holds either all of the new bytes or none of them.
 * erase() sets a range to 0xFF (the erased state of flash). Optional: a device without it
 * keeps no outbox and no ledger across reboots. */
typedef struct {
    int (*read)(void *ctx, uint32_t offset, uint8_t *buf, size_t len);
    int (*write)(void *ctx, uint32_t offset, const uint8_t *buf, size_t len);
    int (*erase)(void *ctx, uint32_t offset, size_t len);
    uint32_t size;
    void *ctx;
} dpm_storage_t;

/* A byte stream to the collector (raw TCP, or TLS layered on top by port/tls). */
typedef struct {
    int32_t (*send)(void *ctx, const uint8_t *buf, size_t len);
    int32_t (*recv)(void *ctx, uint8_t *buf, size_t len);
    void *ctx;
} dpm_transport_t;

/* Optional mutual exclusion, for apps that call one SDK context from several threads. */
typedef struct {
    void (*lock)(void *ctx);
    void (*unlock)(void *ctx);
    void *ctx;
} dpm_lock_t;

/* Optional log sink. level: 1 error, 2 warn, 3 info, 4 debug (see DPM_LOG_LEVEL). */
typedef struct {
    void (*write)(void *ctx, int level, const char *msg);
    void *ctx;
} dpm_log_t;

/* Everything a device context needs, gathered. Optional members may be zeroed. */
typedef struct {
    dpm_rng_t rng;
    dpm_clock_t clock;
    dpm_storage_t storage;
    dpm_transport_t transport;
    dpm_lock_t lock;
    dpm_log_t log;
} dpm_port_t;

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_H */
