/* SPDX-License-Identifier: Apache-2.0 */
/* The bit cursors of dpm_rand_t, inlined into the samplers (internal to sdk/src/noise).
 *
 * The stream: the port RNG fills buf[CARRY .. CARRY + DPM_RAND_BUF_BYTES) at a time; the unread
 * bits are [cur, end). Draws take bits from the front, in order, low bit of each byte first: a
 * draw of n bits returns the next n bits as an integer whose bit 0 is the first (the stream
 * dpm_rand_bits() has always produced: 64-bit little-endian words, low bit first). One kind of
 * draw takes whole bytes from the back instead (the Laplace mechanism's V bytes,
 * dpm_rand_take_back_byte): the byte just below end, then the one below it. Two ends let a
 * sampler look up bytes at both without waiting for one cursor to pass the other; end stays a
 * multiple of 8 while the source works. When a draw needs more bits than are unread, the
 * unread middle (< 128 bits) moves into the carry bytes just before the port's bytes and the
 * port refills those: the front runs on across fills and the back starts again at the new
 * bytes' end. Bookkeeping: bits handed out = bits_base + cur - end, rng_calls counts fill()
 * calls, and a refill happens exactly when a draw needs bits beyond the unread ones (or a
 * sampler reserves them: dpm_rand_reserve_slow).
 *
 * Invariants: cur <= end <= DPM_RAND_END_BIT. A zeroed, never bound dpm_rand_t has
 * cur == end == 0 and a failed source end == cur, so every inline fast path below finds
 * nothing to take and falls through to the out-of-line functions, which check r->rng and the
 * sticky error. */
#ifndef DPM_NOISE_RAND_INTERNAL_H
#define DPM_NOISE_RAND_INTERNAL_H

#include <stdint.h>

#include "dpm/expert/noise.h"

/* One past the last bit of the port's bytes. */
#define DPM_RAND_END_BIT (8u * (DPM_RAND_CARRY_BYTES + DPM_RAND_BUF_BYTES))

/* A single unaligned 64-bit read gives at least this many bits from any bit position. */
#define DPM_RAND_WINDOW_BITS 57u

/* Out of line (rand.c): take n bits, 1 <= n <= 64, when the fast path cannot. Checks r->rng
 * (DPM_ERR_PARAM) and the sticky error, refills when the unread bits run short. */
dpm_status_t dpm_rand_take_slow(dpm_rand_t *r, uint32_t n, uint64_t *out);

/* Out of line (rand.c): make at least n <= 128 bits unread, refilling now if fewer are left
 * (the unread middle moves to the carry). Same checks as dpm_rand_take_slow. */
dpm_status_t dpm_rand_reserve_slow(dpm_rand_t *r, uint32_t n);

/* Out of line (rand.c): dpm_rand_take_back_byte when fewer than 8 bits are unread. */
dpm_status_t dpm_rand_take_back_slow(dpm_rand_t *r, uint64_t *out);

static inline uint64_t dpm_rand_load_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

/* The next DPM_RAND_WINDOW_BITS (or more) bits of buf from bit `at`, bit 0 first; only the
 * ones below r->end are random. */
static inline uint64_t dpm_rand_window_at(const dpm_rand_t *r, uint32_t at)
{
    return dpm_rand_load_le64(r->buf + (at >> 3)) >> (at & 7u);
}

/* The next n bits, 1 <= n <= 64, as the low bits of *out. */
static inline dpm_status_t dpm_rand_take_bits(dpm_rand_t *r, uint32_t n, uint64_t *out)
{
    uint32_t cur = r->cur;
    if (n <= DPM_RAND_WINDOW_BITS && n <= r->end - cur) {
        *out = dpm_rand_window_at(r, cur) & ((UINT64_C(1) << n) - 1u);
        r->cur = cur + n;
        return DPM_OK;
    }
    return dpm_rand_take_slow(r, n, out);
}

/* The next 64 bits: a second read supplies the bits the first one's shift pushed out. */
static inline dpm_status_t dpm_rand_take64(dpm_rand_t *r, uint64_t *out)
{
    uint32_t cur = r->cur;
    if (r->end - cur < 64u) {
        return dpm_rand_take_slow(r, 64u, out);
    }
    uint32_t s = cur & 7u;
    uint64_t v = dpm_rand_window_at(r, cur);
    uint64_t next = r->buf[(cur >> 3) + 8u];
    *out = v | ((next << (63u - s)) << 1); /* s = 0: nothing to add */
    r->cur = cur + 64u;
    return DPM_OK;
}

/* The next 32 bits if they are unread (returns 1), else nothing taken (returns 0): for
 * callers that keep the refill path out of line (see dpm_rand_take32). */
static inline int dpm_rand_take32_fast(dpm_rand_t *r, uint32_t *out)
{
    uint32_t cur = r->cur;
    if (r->end - cur < 32u) {
        return 0;
    }
    *out = (uint32_t)dpm_rand_window_at(r, cur);
    r->cur = cur + 32u;
    return 1;
}

/* The next 32 bits. */
static inline dpm_status_t dpm_rand_take32(dpm_rand_t *r, uint32_t *out)
{
    if (dpm_rand_take32_fast(r, out)) {
        return DPM_OK;
    }
    uint64_t v;
    dpm_status_t st = dpm_rand_take_slow(r, 32u, &v);
    *out = (uint32_t)v;
    return st;
}

/* The next byte from the back: the one just below end. */
static inline dpm_status_t dpm_rand_take_back_byte(dpm_rand_t *r, uint64_t *out)
{
    if (r->end - r->cur >= 8u) {
        r->end -= 8u;
        *out = r->buf[r->end >> 3];
        return DPM_OK;
    }
    return dpm_rand_take_back_slow(r, out);
}

/* The 8 bytes below end (end >= 64), in the order the back hands them out: the byte just
 * below end is bits 0-7. Only the ones at or above r->cur are unread. */
static inline uint64_t dpm_rand_back_window(const dpm_rand_t *r)
{
    const uint8_t *p = r->buf + (r->end >> 3) - 8u;
    return (uint64_t)p[7] | (uint64_t)p[6] << 8 | (uint64_t)p[5] << 16 | (uint64_t)p[4] << 24 |
           (uint64_t)p[3] << 32 | (uint64_t)p[2] << 40 | (uint64_t)p[1] << 48 |
           (uint64_t)p[0] << 56;
}

/* Consume n bits already looked at through dpm_rand_window_at(r, r->cur), n <= r->end - cur. */
static inline void dpm_rand_skip(dpm_rand_t *r, uint32_t n)
{
    r->cur += n;
}

#endif /* DPM_NOISE_RAND_INTERNAL_H */
