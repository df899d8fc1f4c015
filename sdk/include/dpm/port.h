/* SPDX-License-Identifier: Apache-2.0 */
/* The port interface: what the SDK needs from a platform, as function pointers that each carry
 * a context pointer. The SDK owns this contract (it lives with the SDK's headers); port/
 * implements it for POSIX, Mbed TLS and Cortex-M. Nothing is global, so many independent device
 * instances can live in one process (the simulator runs millions). A port fills these structs;
 * the SDK only calls through them.
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

/* A fixed region of persistent storage of `size` bytes, addressed by offset: raw NOR flash, a
 * file, FRAM. What the SDK assumes, and no more (the ledger and the outbox are designed and
 * tested for the rest; an integrator needs no journaling of their own):
 *  - read() returns what the last completed write() or erase() left;
 *  - write() and erase() are durable when they return 0, and land in the order they are called;
 *  - a write() or erase() interrupted by a power loss may leave ANY mix of old and new bytes in
 *    its range (a torn write): it is NOT assumed atomic;
 *  - bytes outside the range of a write() or erase() are never disturbed by it;
 *  - erase() sets its range to 0xFF (the erased state of NOR flash; a file port writes 0xFF);
 *  - the outbox commits a record with a 1-byte write and removes it with a 3-byte write, both
 *    only clearing bits in place (0xFF -> 0x00 without an erase): NOR flash without ECC words,
 *    FRAM and files allow it; flash with ECC words or a minimum program size above one byte
 *    does not.
 * On flash, give the device its region on a sector boundary and its sector size
 * (dpm_device_config_t.sector_size): the SDK lays the ledger and the outbox out on whole
 * sectors, and each erase() covers whole sectors of one half. Optional: a device without
 * storage keeps no outbox and no ledger across reboots. */
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

/* Hardware CRC (only in a build with DPM_CRC32_TABLE=0, dpm/config.h): the ledger's and the
 * outbox's CRC-32 from the port instead of a table. It must compute CRC-32 exactly as zlib's
 * crc32(crc, p, n) does (IEEE 802.3, reflected polynomial 0xEDB88320, initial value and final
 * XOR 0xFFFFFFFF, continuing from the previous result crc; 0 starts), because the records on
 * storage carry it: crc32("123456789") == 0xCBF43926. Units that compute the unreflected
 * CRC-32/MPEG-2 need their input and output bit reversal on (STM32 CRC_CR REV_IN = bytes,
 * REV_OUT) and the complements done around them. The SDK checks it against two known values
 * when it opens a ledger or an outbox (DPM_ERR_PARAM if it disagrees: storage stays
 * untouched). Called from report calls only (no interrupt context needed); not reentrant
 * with itself. */
uint32_t dpm_port_crc32(uint32_t crc, const uint8_t *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_H */
