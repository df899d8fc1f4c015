/* SPDX-License-Identifier: Apache-2.0 */
/* The port skeleton (port_template.h): every hook of dpm/port.h, each answering "not
 * implemented" (DPM_ERR_UNSUPPORTED, a negative value) until you fill it in. The contract of
 * each hook is in sdk/include/dpm/port.h; the comments here say only what to do on this board
 * and what to return when it fails. tests/support/port_conformance.h checks the result. */
#include "port_template.h"

#include "dpm/status.h"

int template_port_init(template_port_t *p)
{
    /* Bring up the flash controller, the TRNG and the timer; 0 or < 0. */
    p->placeholder = 0;
    return 0;
}

/* ---- random: dpm_rng_t ------------------------------------------------------------------------
 * A CSPRNG (port.h): a TRNG feeding a DRBG (Mbed TLS CTR_DRBG, as port/posix and
 * port/cortex-m/ctr_drbg.c do), never a seeded PRNG. Write exactly len bytes and return 0. On
 * any failure of the source (TRNG health test, DRBG reseed) return < 0 without pretending: the
 * SDK then refuses the report with DPM_ERR_RNG and stops reporting until dpm_rand_init. */
static int template_rng_fill(void *ctx, uint8_t *out, size_t len)
{
    (void)ctx;
    (void)out;
    (void)len;
    return (int)DPM_ERR_UNSUPPORTED;
}

dpm_rng_t template_rng(template_port_t *p)
{
    dpm_rng_t r = {template_rng_fill, p};
    return r;
}

/* ---- clock: dpm_clock_t -----------------------------------------------------------------------
 * monotonic_ms: milliseconds from any origin, never going back, advancing while the SDK waits
 * (a free-running timer or the RTOS tick; widen a 32-bit counter to 64 bits across wraps). It
 * cannot fail: the SDK's upload deadlines and backoff run on it, so a clock that stands still
 * makes an upload wait for ever. The stub below never advances (the suite says so). */
static uint64_t template_monotonic_ms(void *ctx)
{
    (void)ctx;
    return 0;
}

/* wall_time_s: seconds since the Unix epoch from an RTC set by NTP/GNSS/the phone; 0, or < 0
 * while the time is not known (never a guess). A board without a wall clock sets the hook to
 * NULL in template_clock (the ledger then counts the time since power-on). */
static int template_wall_time_s(void *ctx, int64_t *out)
{
    (void)ctx;
    (void)out;
    return (int)DPM_ERR_UNSUPPORTED;
}

dpm_clock_t template_clock(template_port_t *p)
{
    dpm_clock_t c = {template_monotonic_ms, template_wall_time_s, p};
    return c;
}

/* ---- storage: dpm_storage_t -------------------------------------------------------------------
 * TEMPLATE_STORAGE_SIZE bytes addressed from 0 (map offset 0 to your partition's start). The
 * assumptions are port.h's list: read what the last write/erase left, durable and in order when
 * they return 0, erase to 0xFF, nothing outside the range touched, and 1- and 3-byte writes
 * that only clear bits over bytes already written. Wait for the flash operation to finish
 * before returning 0. Return < 0 for an offset/length outside the region (offset + len may
 * wrap: compare len with size - offset) and for any controller error; a write or erase that
 * returned < 0 may have changed any byte of its range, never one outside it. */
static int template_storage_read(void *ctx, uint32_t offset, uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)offset;
    (void)buf;
    (void)len;
    return (int)DPM_ERR_UNSUPPORTED;
}

static int template_storage_write(void *ctx, uint32_t offset, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)offset;
    (void)buf;
    (void)len;
    return (int)DPM_ERR_UNSUPPORTED;
}

/* The SDK erases whole halves of the ledger's and the outbox's regions: give it regions whose
 * halves are whole sectors (port.h), and return < 0 for a range that is not sector-aligned. */
static int template_storage_erase(void *ctx, uint32_t offset, size_t len)
{
    (void)ctx;
    (void)offset;
    (void)len;
    return (int)DPM_ERR_UNSUPPORTED;
}

dpm_storage_t template_storage(template_port_t *p)
{
    dpm_storage_t s = {template_storage_read, template_storage_write, template_storage_erase,
                       TEMPLATE_STORAGE_SIZE, p};
    return s;
}

/* ---- transport: dpm_transport_t ---------------------------------------------------------------
 * A connected stream (open it before dpm_device_flush; TLS: port/tls on top of this). Return
 * the bytes moved (> 0); 0 when nothing could move yet (wait briefly, e.g. up to a few tens of
 * ms, for the socket first: the SDK retries until its own deadline, so returning 0 at once
 * makes it spin); < 0 when the connection failed or the peer closed it (then the SDK stops
 * and the app reconnects). Never block longer than the upload's timeout_ms. */
static int32_t template_send(void *ctx, const uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    (void)len;
    return (int32_t)DPM_ERR_UNSUPPORTED;
}

static int32_t template_recv(void *ctx, uint8_t *buf, size_t len)
{
    (void)ctx;
    (void)buf;
    (void)len;
    return (int32_t)DPM_ERR_UNSUPPORTED;
}

dpm_transport_t template_transport(template_port_t *p)
{
    dpm_transport_t t = {template_send, template_recv, p};
    return t;
}

/* ---- hardware CRC (optional) -------------------------------------------------------------------
 * Only a build with DPM_CRC32_TABLE=0 calls it (delete it otherwise): zlib's crc32(crc, p, n)
 * from the CRC unit, exactly as port.h specifies (check value 0xCBF43926). It cannot report an
 * error: the SDK checks it against known values when it opens the ledger and the outbox and
 * refuses a wrong one (DPM_ERR_PARAM). The stub returns 0, which the suite and the SDK refuse. */
uint32_t dpm_port_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    (void)crc;
    (void)p;
    (void)n;
    return 0;
}
