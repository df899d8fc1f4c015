/* SPDX-License-Identifier: Apache-2.0 */
/* Buffered random bits in front of the port RNG: the out-of-line half of the bit cursor (the
 * inline half, shared by every sampler, is noise/rand_internal.h). */
#include "dpm_internal.h"

#include "dpm/expert/noise.h"
#include "noise/rand_internal.h"

dpm_status_t dpm_rand_init(dpm_rand_t *r, const dpm_rng_t *rng)
{
    if (r == NULL || rng == NULL || rng->fill == NULL) {
        return DPM_ERR_PARAM;
    }
    memset(r, 0, sizeof(*r));
    r->rng = rng;
    r->cur = DPM_RAND_END_BIT; /* empty: the first draw refills */
    r->end = DPM_RAND_END_BIT;
    r->bits_base = 0; /* cur - end = 0: nothing handed out yet */
    r->error = DPM_OK;
    return DPM_OK;
}

/* Checks shared by the slow paths: an unbound source, then the sticky error. */
static dpm_status_t ready(const dpm_rand_t *r)
{
    return r->rng == NULL ? DPM_ERR_PARAM : r->error;
}

/* Keep dpm_rand_bits_used at `used` across a move of the cursors. */
static void keep_used(dpm_rand_t *r, uint64_t used)
{
    r->bits_base = used - r->cur + r->end;
}

/* Move the unread middle (fewer than 128 bits; end is a byte boundary) into the carry bytes,
 * right before the port's bytes, and call the port for new ones. A failure leaves nothing
 * unread. */
static dpm_status_t refill(dpm_rand_t *r)
{
    uint64_t used = dpm_rand_bits_used(r);
    uint32_t first = r->cur >> 3;          /* the byte holding the next unread bit */
    uint32_t nbytes = r->end / 8u - first; /* <= 17 */
    uint32_t to = DPM_RAND_CARRY_BYTES - nbytes;
    for (uint32_t i = 0; i < nbytes; i++) {
        r->buf[to + i] = r->buf[first + i];
    }
    r->cur = 8u * to + (r->cur & 7u);
    r->end = r->cur; /* nothing unread until the fill succeeds */
    keep_used(r, used);
    r->rng_calls++;
    if (r->rng->fill(r->rng->ctx, r->buf + DPM_RAND_CARRY_BYTES, DPM_RAND_BUF_BYTES) != 0) {
        r->error = DPM_ERR_RNG;
        return DPM_ERR_RNG;
    }
    r->end = DPM_RAND_END_BIT;
    keep_used(r, used);
    return DPM_OK;
}

dpm_status_t dpm_rand_reserve_slow(dpm_rand_t *r, uint32_t n)
{
    dpm_status_t st = ready(r);
    if (st == DPM_OK && r->end - r->cur < n) {
        st = refill(r);
    }
    return st;
}

dpm_status_t dpm_rand_take_slow(dpm_rand_t *r, uint32_t n, uint64_t *out)
{
    dpm_status_t st = dpm_rand_reserve_slow(r, n);
    if (st != DPM_OK) {
        return st;
    }
    uint32_t cur = r->cur;
    uint64_t v = dpm_rand_window_at(r, cur);
    if (n > DPM_RAND_WINDOW_BITS && (cur & 7u) != 0) {
        /* the first read has 64 - (cur mod 8) bits: the rest from the next byte on */
        v |= (uint64_t)r->buf[(cur >> 3) + 8u] << (64u - (cur & 7u));
    }
    *out = n == 64u ? v : v & ((UINT64_C(1) << n) - 1u);
    r->cur = cur + n;
    return DPM_OK;
}

dpm_status_t dpm_rand_take_back_slow(dpm_rand_t *r, uint64_t *out)
{
    dpm_status_t st = dpm_rand_reserve_slow(r, 8);
    if (st != DPM_OK) {
        return st;
    }
    return dpm_rand_take_back_byte(r, out);
}

uint64_t dpm_rand_bits_used(const dpm_rand_t *r)
{
    return r->bits_base + r->cur - r->end;
}

dpm_status_t dpm_rand_bits(dpm_rand_t *r, uint32_t n, uint64_t *out)
{
    if (r == NULL || out == NULL || n == 0 || n > 64) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = ready(r);
    if (st != DPM_OK) {
        return st;
    }
    return dpm_rand_take_bits(r, n, out);
}
