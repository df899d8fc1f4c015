/* SPDX-License-Identifier: Apache-2.0 */
/* Exact samplers and the Laplace mechanism: known answers by enumerating every random input,
 * white-box vectors for the overflow paths, parameter and RNG-failure errors (outputs
 * untouched), the mechanism's exact privacy ratio, and a negative control showing that the
 * G-test used by tests/stat rejects a 2% scale error. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/noise.h"
#include "noise/laplace_internal.h"
#include "noise/rand_internal.h"
#include "stat_dlap.h"
#include "stat_gof.h"
#include "stat_hist.h"
#include "test_rng.h"
#include "u128_ref.h"

#define SENTINEL_U64 UINT64_C(0xA5A5A5A5A5A5A5A5)
#define SENTINEL_I64 ((int64_t)0x5A5A5A5A5A5A5A5A)
#define SENTINEL_INT 0x5A5A
#define TWO56 (UINT64_C(1) << 56)

/* ---- enumeration harness ------------------------------------------------------------------ */

/* One draw of the sampler under test; *out is its outcome as an integer. */
typedef dpm_status_t (*draw_fn)(dpm_rand_t *r, const void *arg, int64_t *out);

typedef struct {
    uint64_t num;
    uint64_t den;
} ratio_t;

static dpm_status_t draw_uniform(dpm_rand_t *r, const void *arg, int64_t *out)
{
    uint64_t v;
    dpm_status_t st = dpm_uniform(r, *(const uint64_t *)arg, &v);
    *out = (int64_t)v;
    return st;
}

static dpm_status_t draw_bernoulli(dpm_rand_t *r, const void *arg, int64_t *out)
{
    const ratio_t *p = arg;
    int b = -1;
    dpm_status_t st = dpm_bernoulli(r, p->num, p->den, &b);
    *out = b;
    return st;
}

static dpm_status_t draw_bexp(dpm_rand_t *r, const void *arg, int64_t *out)
{
    const ratio_t *p = arg;
    int b = -1;
    dpm_status_t st = dpm_bernoulli_exp(r, p->num, p->den, &b);
    *out = b;
    return st;
}

static dpm_status_t draw_dlap(dpm_rand_t *r, const void *arg, int64_t *out)
{
    const ratio_t *p = arg;
    return dpm_dlap(r, p->num, p->den, out);
}

/* Runs the sampler once for every string of `front` + 8 `back` random bits: the first `front`
 * at the front of the stream, the other bytes at its back (the last byte of the first fill,
 * then the one before it: where the Laplace mechanism takes its V bytes), 0xFF bytes
 * elsewhere. A run that read no other bits was decided by the string: counts[out - lo] counts
 * those, so Pr[out = x and decided] = counts[x - lo] / 2^(front + 8 back) EXACTLY. The other
 * runs are counted in *undecided. */
static void enumerate_ends(unsigned front, unsigned back, draw_fn fn, const void *arg, int64_t lo,
                           uint64_t *counts, size_t ncounts, uint64_t *undecided)
{
    uint8_t buf[DPM_RAND_BUF_BYTES];
    memset(counts, 0, ncounts * sizeof(*counts));
    *undecided = 0;
    for (uint64_t x = 0; x < (UINT64_C(1) << (front + 8 * back)); x++) {
        /* the padding only matters to undecided runs: ones end them fast (trials fail) */
        memset(buf, 0xFF, sizeof(buf));
        for (unsigned i = 0; i < (front + 7) / 8; i++) {
            buf[i] = (uint8_t)(x >> (8 * i));
        }
        if (front % 8 != 0) {
            buf[front / 8] |= (uint8_t)(0xFFu << (front % 8));
        }
        for (unsigned j = 0; j < back; j++) {
            buf[DPM_RAND_BUF_BYTES - 1 - j] = (uint8_t)(x >> (front + 8 * j));
        }
        script_rng_t s = {buf, sizeof(buf), 0, 0};
        dpm_rng_t port = script_rng_port(&s);
        dpm_rand_t r;
        assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
        int64_t out = 0;
        dpm_status_t st = fn(&r, arg, &out);
        int within = r.rng_calls == 0 || /* nothing read */
                     (r.rng_calls == 1 && r.cur - 8u * DPM_RAND_CARRY_BYTES <= front &&
                      DPM_RAND_END_BIT - r.end <= 8u * back);
        if (st == DPM_OK && within) {
            assert_true(out >= lo && (uint64_t)(out - lo) < ncounts);
            counts[out - lo]++;
        } else {
            (*undecided)++;
        }
    }
}

/* enumerate_ends for samplers that read the front only. */
static void enumerate(unsigned bits, draw_fn fn, const void *arg, int64_t lo, uint64_t *counts,
                      size_t ncounts, uint64_t *undecided)
{
    enumerate_ends(bits, 0, fn, arg, lo, counts, ncounts, undecided);
}

static uint32_t bit_length(uint64_t x)
{
    uint32_t n = 0;
    for (; x != 0; x >>= 1) {
        n++;
    }
    return n;
}

static uint64_t ipow(uint64_t b, uint32_t e)
{
    uint64_t v = 1;
    while (e-- > 0) {
        v *= b;
    }
    return v;
}

/* ---- the bit source ------------------------------------------------------------------------ */

/* Bit i of a byte string, low bit of byte 0 first: the stream every draw must follow. */
static uint64_t stream_bits(const uint8_t *bytes, uint64_t at, uint32_t n)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t bit = (bytes[(at + i) / 8] >> ((at + i) % 8)) & 1u;
        v |= bit << i;
    }
    return v;
}

/* Draws of every width through every entry point (public, inline, 32-bit, 64-bit, window and
 * skip, reserve) read the port's bytes as one bit string, across refills and the carry; the
 * port is called exactly when a take needs bits beyond the ones filled (reserve earlier, as
 * documented), and bits_used counts what was handed out. */
static void test_rand_stream_is_the_bytes(void **state)
{
    (void)state;
    enum { FILLS = 40 };
    static uint8_t bytes[FILLS * DPM_RAND_BUF_BYTES];
    test_rng_t t;
    test_rng_seed(&t, 404);
    for (size_t i = 0; i < sizeof(bytes); i += 8) {
        uint64_t w = test_rng_next(&t);
        for (int k = 0; k < 8; k++) {
            bytes[i + (size_t)k] = (uint8_t)(w >> (8 * k));
        }
    }
    script_rng_t s = {bytes, sizeof(bytes), 0, 0};
    dpm_rng_t port = script_rng_port(&s);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    test_rng_t pick;
    test_rng_seed(&pick, 405);
    uint64_t at = 0;
    const uint64_t limit = (uint64_t)(FILLS - 1) * DPM_RAND_BUF_BYTES * 8;
    while (at + 256 < limit) {
        uint64_t c = test_rng_next(&pick);
        uint32_t n = (uint32_t)(c % 64) + 1;
        uint64_t v = 0;
        uint32_t u32 = 0;
        /* the port has been called for exactly the fills the bits so far reached into */
        assert_int_equal(r.rng_calls, at == 0 ? 0 : (at - 1) / (DPM_RAND_BUF_BYTES * 8) + 1);
        switch ((c >> 8) % 6) {
        case 0: assert_int_equal(dpm_rand_bits(&r, n, &v), DPM_OK); break;
        case 1: assert_int_equal(dpm_rand_take_bits(&r, n, &v), DPM_OK); break;
        case 2:
            n = 32;
            assert_int_equal(dpm_rand_take32(&r, &u32), DPM_OK);
            v = u32;
            break;
        case 3:
            n = 64;
            assert_int_equal(dpm_rand_take64(&r, &v), DPM_OK);
            break;
        case 4: /* look at a window, then consume part of it */
            n = n > DPM_RAND_WINDOW_BITS ? DPM_RAND_WINDOW_BITS : n;
            if (r.end - r.cur < n) {
                uint64_t calls = r.rng_calls;
                assert_int_equal(dpm_rand_reserve_slow(&r, 128), DPM_OK);
                assert_int_equal(r.rng_calls, calls + 1); /* early, but the same bytes */
                assert_true(r.end - r.cur >= 128);
                assert_int_equal(dpm_rand_bits_used(&r), at);
            }
            v = dpm_rand_window_at(&r, r.cur) & ((UINT64_C(1) << n) - 1u);
            dpm_rand_skip(&r, n);
            break;
        default: /* reserve more than is left, consume nothing */
            assert_int_equal(dpm_rand_reserve_slow(&r, (uint32_t)(c % 128) + 1), DPM_OK);
            n = 0;
            break;
        }
        if (n != 0) {
            assert_int_equal(v, stream_bits(bytes, at, n));
            at += n;
        }
        assert_int_equal(dpm_rand_bits_used(&r), at);
        if ((c >> 8) % 6 == 4 || (c >> 8) % 6 == 5) {
            /* after an early refill the count runs ahead by one: resync the expectation */
            while (r.rng_calls > (at == 0 ? 0 : (at - 1) / (DPM_RAND_BUF_BYTES * 8) + 1)) {
                uint64_t w;
                uint32_t k = (uint32_t)(DPM_RAND_BUF_BYTES * 8 - at % (DPM_RAND_BUF_BYTES * 8));
                k = k > 57 ? 57 : k;
                assert_int_equal(dpm_rand_take_bits(&r, k, &w), DPM_OK);
                assert_int_equal(w, stream_bits(bytes, at, k));
                at += k;
            }
        }
    }
    assert_true(r.rng_calls >= FILLS - 2);
}

/* A failed fill leaves nothing to read: every entry point reports the sticky error, and a
 * zeroed source (never bound) is a parameter error at every one of them. */
/* The back of the stream: bytes from just below end, downwards, while the front runs on; a
 * refill carries the unread middle before the new bytes, and the back starts again at their
 * end. bits_used counts both ends. */
static void test_rand_back_bytes(void **state)
{
    (void)state;
    static uint8_t bytes[2 * DPM_RAND_BUF_BYTES];
    for (size_t i = 0; i < sizeof(bytes); i++) {
        bytes[i] = (uint8_t)(i * 7u + 3u);
    }
    script_rng_t s = {bytes, sizeof(bytes), 0, 0};
    dpm_rng_t port = script_rng_port(&s);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    const size_t last = DPM_RAND_BUF_BYTES - 1u;
    uint64_t v;
    uint64_t front = 0;                                        /* bits taken from the front */
    uint64_t back = 0;                                         /* bytes taken from the back */
    assert_int_equal(dpm_rand_take_back_byte(&r, &v), DPM_OK); /* refills first */
    assert_int_equal(v, bytes[last - back++]);
    assert_int_equal(r.rng_calls, 1);
    assert_int_equal(dpm_rand_take_bits(&r, 8, &v), DPM_OK);
    assert_int_equal(v, bytes[front / 8]);
    front += 8;
    while (back < 6) {
        assert_int_equal(dpm_rand_take_back_byte(&r, &v), DPM_OK);
        assert_int_equal(v, bytes[last - back++]);
    }
    assert_int_equal(dpm_rand_bits_used(&r), front + 8 * back);
    /* the back window lists the next back bytes in order */
    uint64_t w = dpm_rand_back_window(&r);
    for (size_t j = 0; j < 8; j++) {
        assert_int_equal((w >> (8 * j)) & 0xFFu, bytes[last - back - j]);
    }
    /* the front reads on until 12 bytes of the middle are left, then 3 bits */
    while (r.end - r.cur >= 8u * 13) {
        assert_int_equal(dpm_rand_take_bits(&r, 8, &v), DPM_OK);
        assert_int_equal(v, bytes[front / 8]);
        front += 8;
    }
    assert_int_equal(dpm_rand_take_bits(&r, 3, &v), DPM_OK);
    assert_int_equal(v, bytes[front / 8] & 7u);
    front += 3;
    assert_int_equal(r.end - r.cur, 8u * 11 + 5);
    /* a back byte takes the top byte of the middle, without a refill */
    assert_int_equal(dpm_rand_take_back_byte(&r, &v), DPM_OK);
    assert_int_equal(v, bytes[last - back++]);
    assert_int_equal(r.rng_calls, 1);
    assert_int_equal(dpm_rand_bits_used(&r), front + 8 * back);
    /* 128 bits reserved: the unread middle (10 bytes and 5 bits) moves before the second fill */
    assert_int_equal(dpm_rand_reserve_slow(&r, 128), DPM_OK);
    assert_int_equal(r.rng_calls, 2);
    assert_int_equal(dpm_rand_bits_used(&r), front + 8 * back);
    assert_int_equal(dpm_rand_take_bits(&r, 5, &v), DPM_OK); /* the partly read byte's rest */
    assert_int_equal(v, (uint64_t)bytes[front / 8] >> 3);
    front += 5;
    while (front / 8 < DPM_RAND_BUF_BYTES - back) { /* the middle's other bytes */
        assert_int_equal(dpm_rand_take_bits(&r, 8, &v), DPM_OK);
        assert_int_equal(v, bytes[front / 8]);
        front += 8;
    }
    /* then the second fill, from its first byte at the front and its last at the back */
    assert_int_equal(dpm_rand_take_bits(&r, 8, &v), DPM_OK);
    assert_int_equal(v, bytes[DPM_RAND_BUF_BYTES]);
    assert_int_equal(dpm_rand_take_back_byte(&r, &v), DPM_OK);
    assert_int_equal(v, bytes[2 * DPM_RAND_BUF_BYTES - 1]);
    assert_int_equal(dpm_rand_bits_used(&r), front + 8 + 8 * (back + 1));
}

static void test_rand_failure_and_unbound(void **state)
{
    (void)state;
    failing_rng_t f;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(failing_rand_init(&r, &f, &port, 6, 1), DPM_OK);
    uint64_t v;
    uint32_t u;
    for (int i = 0; i < DPM_RAND_BUF_BYTES / 8; i++) {
        assert_int_equal(dpm_rand_take64(&r, &v), DPM_OK);
    }
    assert_int_equal(dpm_rand_take_bits(&r, 1, &v), DPM_ERR_RNG);
    assert_int_equal(dpm_rand_take32(&r, &u), DPM_ERR_RNG);
    assert_int_equal(dpm_rand_take64(&r, &v), DPM_ERR_RNG);
    assert_int_equal(dpm_rand_reserve_slow(&r, 8), DPM_ERR_RNG);
    assert_int_equal(dpm_rand_bits(&r, 3, &v), DPM_ERR_RNG);
    assert_int_equal(r.end, r.cur);
    assert_int_equal(r.rng_calls, 2);
    assert_int_equal(dpm_rand_bits_used(&r), (uint64_t)DPM_RAND_BUF_BYTES * 8);

    dpm_rand_t zero;
    memset(&zero, 0, sizeof(zero));
    assert_int_equal(dpm_rand_take_bits(&zero, 5, &v), DPM_ERR_PARAM);
    assert_int_equal(dpm_rand_take32(&zero, &u), DPM_ERR_PARAM);
    assert_int_equal(dpm_rand_take64(&zero, &v), DPM_ERR_PARAM);
    assert_int_equal(dpm_rand_reserve_slow(&zero, 8), DPM_ERR_PARAM);
    assert_int_equal(dpm_rand_bits(&zero, 5, &v), DPM_ERR_PARAM);
    int64_t z = SENTINEL_I64;
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, 2, DPM_EPS_ONE), DPM_OK);
    assert_int_equal(dpm_laplace_add(&m, &zero, 0, &z), DPM_ERR_PARAM);
    assert_int_equal(z, SENTINEL_I64);
}

/* ---- uniform ------------------------------------------------------------------------------ */

/* Rejection on k = bitlen(n - 1) bits: within B bits exactly floor(B / k) attempts fit, each
 * rejected by 2^k - n of its 2^k values, and every accepted value is equally likely. */
static void check_uniform_enumerated(uint64_t n, unsigned bits)
{
    uint64_t counts[64];
    uint64_t undecided;
    assert_true(n <= 64);
    enumerate(bits, draw_uniform, &n, 0, counts, n, &undecided);
    uint32_t k = bit_length(n - 1);
    uint32_t attempts = k == 0 ? 1 : bits / k;
    uint64_t want_undecided =
        k == 0 ? 0 : ipow((UINT64_C(1) << k) - n, attempts) << (bits - k * attempts);
    assert_int_equal(undecided, want_undecided);
    for (uint64_t v = 0; v < n; v++) {
        assert_int_equal(counts[v], ((UINT64_C(1) << bits) - want_undecided) / n);
    }
}

static void test_uniform_enumerated(void **state)
{
    (void)state;
    check_uniform_enumerated(3, 8); /* 85 each, 0xFF undecided */
    check_uniform_enumerated(5, 8); /* 44 each, 36 undecided */
    check_uniform_enumerated(6, 8); /* 40 each, 16 undecided */
    check_uniform_enumerated(7, 12);
    check_uniform_enumerated(33, 12);
    check_uniform_enumerated(1, 4); /* no bits at all */
    check_uniform_enumerated(2, 8);
    check_uniform_enumerated(8, 9);
}

static void test_uniform_bit_cost_and_range(void **state)
{
    (void)state;
    test_rng_t t;
    test_rng_seed(&t, 11);
    dpm_rng_t port = test_rng_port(&t);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    uint64_t v;
    /* a power of two never rejects: exactly log2(n) bits */
    assert_int_equal(dpm_uniform(&r, UINT64_C(1) << 40, &v), DPM_OK);
    assert_int_equal(dpm_rand_bits_used(&r), 40);
    assert_true(v < (UINT64_C(1) << 40));
    assert_int_equal(dpm_uniform(&r, 1, &v), DPM_OK);
    assert_int_equal(v, 0);
    assert_int_equal(dpm_rand_bits_used(&r), 40);
    /* every draw is a multiple of k bits, and the largest n works (k = 64) */
    for (int i = 0; i < 1000; i++) {
        uint64_t before = dpm_rand_bits_used(&r);
        assert_int_equal(dpm_uniform(&r, UINT64_MAX, &v), DPM_OK);
        assert_true(v < UINT64_MAX);
        assert_int_equal((dpm_rand_bits_used(&r) - before) % 64, 0);
        before = dpm_rand_bits_used(&r);
        assert_int_equal(dpm_uniform(&r, 1000, &v), DPM_OK);
        assert_true(v < 1000);
        assert_int_equal((dpm_rand_bits_used(&r) - before) % 10, 0);
    }
}

/* ---- the 128-bit reference ---------------------------------------------------------------- */

#ifdef __SIZEOF_INT128__
/* u128_ref.h stands in for unsigned __int128 on 32-bit targets; where the compiler has the
 * type, the two must agree on products, shifts and divisions of random operands. */
static void test_u128_reference_matches_int128(void **state)
{
    (void)state;
    __extension__ typedef unsigned __int128 u128;
    test_rng_t t;
    test_rng_seed(&t, 128);
    for (int i = 0; i < 20000; i++) {
        uint64_t a = test_rng_next(&t), b = test_rng_next(&t), c = test_rng_next(&t);
        unsigned s = (unsigned)(test_rng_next(&t) % 128u);
        u128 na = ((u128)a << 64) | b, nd = (i & 1) ? (u128)(c | 1u) : ((u128)c << 32) | 1u;
        u128_t ra = {a, b}, rd = {(uint64_t)(nd >> 64), (uint64_t)nd};
        u128 nm = (u128)a * c, nmm = na * nd, ns = na << s;
        u128_t rm = u128_mul_64x64(a, c), rmm = u128_mul(ra, rd), rs = u128_shl(ra, s), rr;
        u128_t rq = u128_divmod(ra, rd, &rr);
        assert_true(rm.hi == (uint64_t)(nm >> 64) && rm.lo == (uint64_t)nm);
        assert_true(rmm.hi == (uint64_t)(nmm >> 64) && rmm.lo == (uint64_t)nmm);
        assert_true(rs.hi == (uint64_t)(ns >> 64) && rs.lo == (uint64_t)ns);
        assert_true(rq.hi == (uint64_t)((na / nd) >> 64) && rq.lo == (uint64_t)(na / nd));
        assert_true(rr.hi == (uint64_t)((na % nd) >> 64) && rr.lo == (uint64_t)(na % nd));
    }
}
#endif

/* ---- Bernoulli(num/den) -------------------------------------------------------------------- */

/* The lazy comparison decides 1 within B bits iff the B-bit prefix of U is below the B-bit
 * prefix of p: floor(p 2^B) strings. It decides 0 for the strings above it, and for the tie
 * too when p 2^B is an integer (the expansion ended). */
static void check_bernoulli_enumerated(uint64_t num, uint64_t den, unsigned bits)
{
    uint64_t counts[2];
    uint64_t undecided;
    ratio_t p = {num, den};
    enumerate(bits, draw_bernoulli, &p, 0, counts, 2, &undecided);
    u128_t rem;
    uint64_t floor_p = u128_divmod(u128_shl(u128_from(num), bits), u128_from(den), &rem).lo;
    uint64_t exact = u128_is_zero(rem);
    assert_int_equal(counts[1], floor_p);
    assert_int_equal(counts[0], (UINT64_C(1) << bits) - floor_p - (exact ? 0 : 1));
    assert_int_equal(undecided, exact ? 0 : 1);
}

static void test_bernoulli_enumerated(void **state)
{
    (void)state;
    const ratio_t cases[] = {
        {1, 3},
        {2, 3},
        {1, 2},
        {3, 8},
        {5, 7},
        {1, 1000},
        {999, 1000},
        {0, 5},
        {5, 5},
        {UINT64_MAX - 1, UINT64_MAX},
        {UINT64_C(1) << 63, UINT64_MAX},
        {1, UINT64_MAX},
        {(UINT64_C(1) << 63) + 1, UINT64_C(1) << 63 | 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_bernoulli_enumerated(cases[i].num, cases[i].den, 12);
    }
}

/* ---- Bernoulli(exp(-gamma)) ---------------------------------------------------------------- */

/* Sandwich: decided counts / 2^B <= Pr[x] <= (decided + undecided) / 2^B for x = 0 and 1,
 * with the undecided mass bounded so the sandwich stays narrow. */
static void check_bexp_enumerated(uint64_t num, uint64_t den, unsigned bits, double max_undecided)
{
    uint64_t counts[2];
    uint64_t undecided;
    ratio_t p = {num, den};
    enumerate(bits, draw_bexp, &p, 0, counts, 2, &undecided);
    long double total = ldexpl(1.0L, (int)bits);
    long double p1 = expl(-(long double)num / (long double)den);
    long double probs[2] = {1.0L - p1, p1};
    for (int x = 0; x < 2; x++) {
        if (!((long double)counts[x] / total <= probs[x] &&
              probs[x] <= (long double)(counts[x] + undecided) / total)) {
            fail_msg("gamma %llu/%llu: Pr[%d] = %Lg outside [%llu, %llu + %llu] / 2^%u",
                     (unsigned long long)num, (unsigned long long)den, x, probs[x],
                     (unsigned long long)counts[x], (unsigned long long)counts[x],
                     (unsigned long long)undecided, bits);
        }
    }
    assert_true((double)(undecided / total) < max_undecided);
}

static void test_bernoulli_exp_enumerated(void **state)
{
    (void)state;
    /* undecided mass: 0, 0.09%, 0.01%, 0.02%, 1.1%, 4%, 14% (one byte per unit of gamma) */
    check_bexp_enumerated(0, 1, 16, 1e-9);
    check_bexp_enumerated(1, 3, 18, 0.002);
    check_bexp_enumerated(1, 2, 18, 0.001);
    check_bexp_enumerated(1, 1, 18, 0.001);
    check_bexp_enumerated(7, 5, 18, 0.02);
    check_bexp_enumerated(5, 2, 18, 0.06);
    check_bexp_enumerated(3, 1, 18, 0.2);
    check_bexp_enumerated(UINT64_MAX - 5, UINT64_MAX, 18, 0.03); /* gamma just below 1 */
}

/* ---- discrete Laplace ---------------------------------------------------------------------- */

#define DLAP_RANGE 64

/* Same sandwich per outcome z, for every z in [-DLAP_RANGE, DLAP_RANGE). */
static void check_dlap_enumerated(uint64_t num, uint64_t den, unsigned bits, double max_undecided)
{
    static uint64_t counts[2 * DLAP_RANGE];
    uint64_t undecided;
    ratio_t p = {num, den};
    enumerate(bits, draw_dlap, &p, -DLAP_RANGE, counts, 2 * DLAP_RANGE, &undecided);
    long double total = ldexpl(1.0L, (int)bits);
    long double t = (long double)num / (long double)den;
    for (int64_t z = -DLAP_RANGE; z < DLAP_RANGE; z++) {
        long double pz = stat_dlap_pmf(t, z);
        uint64_t c = counts[z + DLAP_RANGE];
        if (!((long double)c / total <= pz && pz <= (long double)(c + undecided) / total)) {
            fail_msg("scale %llu/%llu z=%lld: count %llu/2^%u vs pmf %Lg (undecided %llu)",
                     (unsigned long long)num, (unsigned long long)den, (long long)z,
                     (unsigned long long)c, bits, pz, (unsigned long long)undecided);
        }
    }
    assert_true((double)undecided / (double)total < max_undecided);
}

static void test_dlap_enumerated(void **state)
{
    (void)state;
    /* Bernoulli(exp(-1)) takes a byte per trial, so 20 bits leave 35% to 63% of the mass
     * undecided: this bounds every z from below only. tests/stat checks the full pmf. */
    check_dlap_enumerated(1, 1, 20, 0.4);
    check_dlap_enumerated(1, 2, 20, 0.5);
    check_dlap_enumerated(3, 2, 20, 0.65);
    check_dlap_enumerated(2, 6, 20, 0.5); /* reduced to 1/3 */
    check_dlap_enumerated(5, 1, 20, 0.7);
}

/* Bit string builder for white-box vectors: the front (consumed low bit of byte 0 first) and
 * the bytes the Laplace mechanism takes from the back of the first fill (its V bytes, the
 * first at byte DPM_RAND_BUF_BYTES - 1, the next below it). */
typedef struct {
    uint8_t buf[2 * DPM_RAND_BUF_BYTES + 320]; /* V up to 300 bytes of front bits, any buffer */
    size_t nbits;
    size_t nback;
} bitstr_t;

static void push_bits(bitstr_t *b, uint64_t value, unsigned n)
{
    for (unsigned i = 0; i < n; i++, b->nbits++) {
        if ((value >> i) & 1u) {
            b->buf[b->nbits / 8] |= (uint8_t)(1u << (b->nbits % 8));
        }
    }
}

static void push_v(bitstr_t *b, uint8_t byte)
{
    b->buf[DPM_RAND_BUF_BYTES - 1u - b->nback++] = byte;
}

/* Script for scale num/den with num a power of two 2^k (so U takes exactly k bits and is never
 * rejected): U = 0, so D = 1 with no bits; then V successes of Bernoulli(exp(-1)), each one
 * byte in 43..127 (K = 3), then a byte >= 128 (K = 2: a failure, V ends), then the sign bit. */
static void dlap_script(bitstr_t *b, unsigned k, uint64_t v, int negative)
{
    memset(b, 0, sizeof(*b));
    push_bits(b, 0, k);
    for (uint64_t i = 0; i < v; i++) {
        push_bits(b, 64, 8);
    }
    push_bits(b, 200, 8);
    push_bits(b, negative ? 1 : 0, 1);
}

static dpm_status_t run_dlap_add(const bitstr_t *b, uint64_t num, uint64_t den, int64_t value,
                                 int64_t *out, uint64_t *bits_used)
{
    script_rng_t s = {b->buf, sizeof(b->buf), 0, 0};
    dpm_rng_t port = script_rng_port(&s);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    dpm_status_t st = dpm_dlap_add(&r, num, den, value, out);
    *bits_used = dpm_rand_bits_used(&r);
    return st;
}

static void test_dlap_script_fast_and_wide_paths(void **state)
{
    (void)state;
    bitstr_t b;
    int64_t out;
    uint64_t used;
    /* V = 1, 255 (64-bit path) and 256, 300 (128-bit path), scale 2^56 / 3 */
    const uint64_t vs[] = {0, 1, 255, 256, 300};
    for (size_t i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
        for (int neg = 0; neg < 2; neg++) {
            if (vs[i] == 0 && neg) {
                continue; /* "-0" is rejected and redrawn */
            }
            dlap_script(&b, 56, vs[i], neg);
            assert_int_equal(run_dlap_add(&b, TWO56, 3, 0, &out, &used), DPM_OK);
            assert_int_equal(used, 56 + 8 * vs[i] + 9);
            int64_t mag = (int64_t)u128_divmod(u128_mul_64x64(TWO56, vs[i]), u128_from(3), NULL).lo;
            assert_int_equal(out, neg ? -mag : mag);
        }
    }
    /* scale 2^56: V = 128 gives |Z| = 2^63, beyond INT64_MAX but not below INT64_MIN */
    dlap_script(&b, 56, 128, 0);
    out = SENTINEL_I64;
    assert_int_equal(run_dlap_add(&b, TWO56, 1, 0, &out, &used), DPM_ERR_RANGE);
    assert_int_equal(out, SENTINEL_I64);
    assert_int_equal(run_dlap_add(&b, TWO56, 1, INT64_MIN + 5, &out, &used), DPM_OK);
    assert_int_equal(out, 5); /* the exact sum is back in range */
    dlap_script(&b, 56, 128, 1);
    assert_int_equal(run_dlap_add(&b, TWO56, 1, 0, &out, &used), DPM_OK);
    assert_int_equal(out, INT64_MIN);
    assert_int_equal(run_dlap_add(&b, TWO56, 1, 7, &out, &used), DPM_OK);
    assert_int_equal(out, INT64_MIN + 7);
    out = SENTINEL_I64;
    assert_int_equal(run_dlap_add(&b, TWO56, 1, -1, &out, &used), DPM_ERR_RANGE);
    assert_int_equal(out, SENTINEL_I64);
    /* V = 256 at scale 2^56: |Z| = 2^64 fits no sum */
    dlap_script(&b, 56, 256, 0);
    assert_int_equal(run_dlap_add(&b, TWO56, 1, INT64_MIN, &out, &used), DPM_ERR_RANGE);
    assert_int_equal(out, SENTINEL_I64);
    /* the public dpm_dlap reduces 2^57 / 2 to 2^56 / 1 first: same bits, same answer */
    dlap_script(&b, 56, 5, 1);
    script_rng_t s = {b.buf, sizeof(b.buf), 0, 0};
    dpm_rng_t port = script_rng_port(&s);
    dpm_rand_t r;
    assert_int_equal(dpm_rand_init(&r, &port), DPM_OK);
    assert_int_equal(dpm_dlap(&r, TWO56 << 1, 2, &out), DPM_OK);
    assert_int_equal(out, -(int64_t)(5 * TWO56));
}

/* ---- the Laplace mechanism's sampler (sdk/src/noise/laplace.c) --------------------------- */

static void seeded(dpm_rand_t *r, test_rng_t *t, dpm_rng_t *port, uint64_t seed)
{
    test_rng_seed(t, seed);
    *port = test_rng_port(t);
    assert_int_equal(dpm_rand_init(r, port), DPM_OK);
}

/* Mechanisms covering its shapes: num a power of two (constant table) with den 1 or not, the
 * lanes with K = 0 and K > 0, invalid A (mA < 16), num = 1, the largest scales. */
static const struct {
    uint64_t sens;
    dpm_eps_t eps;
} LAP_SHAPES[] = {
    {UINT64_C(1) << 17, 65536},       /* t = 2^17: the benchmark */
    {UINT64_C(1) << 17, 6553},        /* 2^33 / 6553 */
    {UINT64_C(1) << 17, 655360},      /* 2^16 / 5 */
    {1, 6553},                        /* 65536 / 6553: table, den > 1 */
    {1, 65536},                       /* t = 1: num = 1, no A */
    {1, 131072},                      /* t = 1/2 */
    {2, 65536},                       /* t = 2: M = 1 */
    {10, 65536},                      /* t = 10: K = 0, lanes, mA = 10 */
    {1000, 65536},                    /* K = 6, lanes */
    {3, 7},                           /* 196608 / 7: mA = 12 */
    {17, 99991},                      /* 1114112 / 99991: mA = 9 */
    {UINT64_C(1) << 40, 1},           /* t = 2^56: sequential (L does not fit a window) */
    {(UINT64_C(1) << 40) - 1, 65535}, /* near the top, lanes */
    {5, DPM_EPS_MAX_Q16},             /* smallest scales */
};
#define N_LAP_SHAPES (sizeof(LAP_SHAPES) / sizeof(LAP_SHAPES[0]))

/* The fast path and the sequential definition on the same stream: same status, same output,
 * same bits consumed, draw after draw (over refills, early refills and every fallback). */
static void test_laplace_fast_matches_definition(void **state)
{
    (void)state;
    for (size_t c = 0; c < N_LAP_SHAPES; c++) {
        dpm_laplace_t m;
        assert_int_equal(dpm_laplace_init(&m, LAP_SHAPES[c].sens, LAP_SHAPES[c].eps), DPM_OK);
        test_rng_t t1;
        test_rng_t t2;
        dpm_rng_t p1;
        dpm_rng_t p2;
        dpm_rand_t r1;
        dpm_rand_t r2;
        seeded(&r1, &t1, &p1, 900 + c);
        seeded(&r2, &t2, &p2, 900 + c);
        int n = LAP_SHAPES[c].sens == UINT64_C(1) << 40 ? 20000 : 150000;
        for (int i = 0; i < n; i++) {
            /* values near the ends of int64 now and then: DPM_ERR_RANGE must agree too */
            int64_t value = (i % 97 == 0) ? INT64_MAX - (i % 5) : (i % 89 == 0) ? INT64_MIN + 3 : i;
            int64_t a = SENTINEL_I64;
            int64_t b = SENTINEL_I64;
            dpm_status_t sa = dpm_laplace_add(&m, &r1, value, &a);
            dpm_status_t sb = dpm_laplace_add_reference(&m, &r2, value, &b);
            if (sa != sb || a != b || dpm_rand_bits_used(&r1) != dpm_rand_bits_used(&r2)) {
                fail_msg("shape %zu draw %d: fast %d %lld (%llu bits), definition %d %lld (%llu)",
                         c, i, sa, (long long)a, (unsigned long long)dpm_rand_bits_used(&r1), sb,
                         (long long)b, (unsigned long long)dpm_rand_bits_used(&r2));
            }
        }
    }
}

/* The byte stage of step A's outcome for (A, w) when gamma = A / 16, with exact integers:
 * T_k = A^k / (16^k k!), and the byte w places W below T_k iff (w + 1) 16^k k! <= 256 A^k,
 * above iff w 16^k k! >= 256 A^k. */
static uint32_t pow2_outcome_exact(uint64_t a, uint64_t w)
{
    int status[4];
    uint64_t num = 256;
    uint64_t den = 1;
    for (int k = 1; k <= 4; k++) {
        num *= a;
        den *= 16u * (uint64_t)k;
        status[k - 1] = (w + 1) * den <= num ? 1 : w * den >= num ? 2 : 0;
    }
    int below = 0;
    while (below < 4 && status[below] == 1) {
        below++;
    }
    return below == 4 || status[below] == 0 ? 2u : (uint32_t)(below + 1) % 2u;
}

/* Entries of a packed table (two bits each, entry A | w << 4 at bits 2A of word w, as
 * laplace.c reads it) that differ from the exact outcome; counts[] gets the exact ones. */
static int pow2_table_mismatches(const uint32_t table[256], int counts[3])
{
    int bad = 0;
    for (uint64_t w = 0; w < 256; w++) {
        for (uint64_t a = 0; a < 16; a++) {
            uint32_t want = pow2_outcome_exact(a, w);
            uint32_t got = (table[w] >> (a * 2u)) & 3u;
            bad += got != want;
            counts[want]++;
        }
    }
    return bad;
}

/* The constant table of the byte stage of step A, all 4096 entries recomputed. */
static void test_laplace_pow2_table_is_exact(void **state)
{
    (void)state;
    int counts[3] = {0, 0, 0};
    assert_int_equal(pow2_table_mismatches(dpm_laplace_pow2_outcome, counts), 0);
    /* and it decides nearly always: 98.6% of (A, w) */
    assert_int_equal(counts[0] + counts[1] + counts[2], 4096);
    assert_int_equal(counts[2], 57);
    /* negative control: one entry changed (to each other value, and to the unused code 3) in
     * a copy, and the comparison must see it */
    uint32_t copy[256];
    memcpy(copy, dpm_laplace_pow2_outcome, sizeof(copy));
    for (uint32_t delta = 1; delta <= 3; delta++) {
        copy[200] = dpm_laplace_pow2_outcome[200] ^ delta << (7 * 2);
        int ignored[3] = {0, 0, 0};
        assert_int_equal(pow2_table_mismatches(copy, ignored), 1);
    }
}

/* The per-mechanism thresholds floor(2^16 T_k) and the lane bytes, against exact arithmetic
 * (small num, so 128-bit integers hold 2^16 a^4 and num^4 4!). */
static void test_laplace_thresholds_are_exact(void **state)
{
    (void)state;
    const struct {
        uint64_t sens;
        dpm_eps_t eps;
    } cases[] = {{10, 65536}, {1000, 65536}, {3, 7}, {17, 99991}, {5, 65536 * 3}, {7, 3}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        dpm_laplace_t m;
        assert_int_equal(dpm_laplace_init(&m, cases[c].sens, cases[c].eps), DPM_OK);
        assert_true(m.scale_num < (UINT64_C(1) << 24));
        for (uint32_t a = 0; a < 16; a++) {
            if (a >= m.a_count) {
                assert_true(m.lanes[a] == UINT64_C(0x0200020002000300));
                continue;
            }
            u128_t num = u128_from(1);
            u128_t den = u128_from(1);
            for (uint32_t k = 1; k <= 4; k++) {
                num = u128_mul(num, u128_shl(u128_from(a), m.low_bits));
                den = u128_mul(den, u128_from((uint64_t)m.scale_num * k));
                u128_t rem;
                uint64_t c16 = u128_divmod(u128_shl(num, 16), den, &rem).lo;
                int exact16 = u128_is_zero(rem);
                uint64_t lane = (m.lanes[a] >> (16 * (k - 1))) & 0xFFFF;
                assert_int_equal((m.thr16[a] >> (16 * (k - 1))) & 0xFFFF, (uint64_t)c16);
                assert_int_equal(lane & 0x3FF, (uint64_t)(c16 >> 8) + 512);
                assert_int_equal((lane >> 13) & 1, exact16);
                assert_int_equal((lane >> 12) & 1, !(exact16 && (c16 & 0xFF) == 0));
            }
        }
    }
}

/* Scripted streams: a bit string (low bit of byte 0 first), then a filler. */
static void lap_script_rand(dpm_rand_t *r, script_rng_t *s, dpm_rng_t *port, const bitstr_t *b)
{
    s->bytes = b->buf;
    s->len = sizeof(b->buf);
    s->pos = 0;
    s->exhausted = 0;
    *port = script_rng_port(s);
    assert_int_equal(dpm_rand_init(r, port), DPM_OK);
}

/* A fresh script that starts a draw: L (low_bits bits), the u byte 255 (step L accepts at once
 * when 255 num >= 256 L, as in every script that uses this), then the sign bit S. */
static void lap_begin(bitstr_t *b, uint64_t low, unsigned low_bits, uint64_t sign)
{
    memset(b, 0, sizeof(*b));
    push_bits(b, low, low_bits);
    push_bits(b, 255, 8);
    push_bits(b, sign, 1);
}

static void run_lap_script(const dpm_laplace_t *m, const bitstr_t *b, int64_t value,
                           dpm_status_t want_st, int64_t want, uint64_t want_bits)
{
    for (int reference = 0; reference < 2; reference++) {
        script_rng_t s;
        dpm_rng_t port;
        dpm_rand_t r;
        lap_script_rand(&r, &s, &port, b);
        int64_t out = SENTINEL_I64;
        dpm_status_t st = reference ? dpm_laplace_add_reference(m, &r, value, &out)
                                    : dpm_laplace_add(m, &r, value, &out);
        if (st != want_st || out != (want_st == DPM_OK ? want : SENTINEL_I64) ||
            dpm_rand_bits_used(&r) != want_bits) {
            fail_msg("%s: status %d out %lld bits %llu; want %d %lld %llu",
                     reference ? "definition" : "fast path", st, (long long)out,
                     (unsigned long long)dpm_rand_bits_used(&r), want_st, (long long)want,
                     (unsigned long long)want_bits);
        }
    }
}

#define T17 (UINT64_C(1) << 17)

/* Known answers at t = 2^17 (K = 13, gamma_A = A / 16), worked by hand from the definition:
 * L (13 bits), u, S, then (A, W byte) candidates at the front; V bytes at the back (push_v). T_1 =
 * A / 16, so the W byte w is above T_1 iff w >= 16 A; T_2 = A^2 / 512, below iff w < A^2 / 2 (A
 * even: exact). */
static void test_laplace_known_answers(void **state)
{
    (void)state;
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, T17, 65536), DPM_OK);
    assert_int_equal(m.low_bits, 13);
    assert_true(m.fixed16);
    bitstr_t b;

    /* L = 1234 accepted (u = 255), S = 1, A = 3 with w = 255 >= 48 (K = 1), V: 200 fails */
    lap_begin(&b, 1234, 13, 1);
    push_bits(&b, 3, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 200);
    run_lap_script(&m, &b, 7, DPM_OK, 7 - (1234 + 3 * 8192), 13 + 8 + 1 + 12 + 8);

    /* the same with V = 2 (64 and 100 succeed: K = 3 in bexp_one) and S = 0 */
    lap_begin(&b, 1234, 13, 0);
    push_bits(&b, 3, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 64);
    push_v(&b, 100);
    push_v(&b, 200);
    run_lap_script(&m, &b, 0, DPM_OK, 1234 + 3 * 8192 + 2 * (int64_t)T17, 13 + 9 + 12 + 24);

    /* A = 6, w = 40: below T_1 = 96/256, above T_2 = 18/256: K = 2, rejected; then A = 2 with
     * w = 1: below T_1 (32), T_2 = 2/256: w = 1 below (exact: 1 + 1 <= 2), T_3 = 8/(4096 6)
     * 256 = 1/12: w = 1 above: K = 3, accepted */
    lap_begin(&b, 0, 13, 0);
    push_bits(&b, 6, 4);
    push_bits(&b, 40, 8);
    push_bits(&b, 2, 4);
    push_bits(&b, 1, 8);
    push_v(&b, 255);
    run_lap_script(&m, &b, 0, DPM_OK, 2 * 8192, 13 + 9 + 24 + 8);

    /* three rejections (A = 6, w = 40) and then A = 1, w = 16 (above T_1 = 16/256, exact) */
    lap_begin(&b, 5, 13, 1);
    for (int i = 0; i < 3; i++) {
        push_bits(&b, 6, 4);
        push_bits(&b, 40, 8);
    }
    push_bits(&b, 1, 4);
    push_bits(&b, 16, 8);
    push_v(&b, 255);
    run_lap_script(&m, &b, 100, DPM_OK, 100 - (5 + 8192), 13 + 9 + 48 + 8);

    /* L = 8191 with u = 0: trial 1 succeeds (256 L >= num), u2 = 255 fails trial 2: K = 2, L
     * rejected; the next draw: L = 0, u = 0 (256 L = 0 <= 0: K = 1), S = 0, A = 0, V = 0 */
    memset(&b, 0, sizeof(b));
    push_bits(&b, 8191, 13);
    push_bits(&b, 0, 8);
    push_bits(&b, 255, 8);
    push_bits(&b, 0, 13);
    push_bits(&b, 0, 8);
    push_bits(&b, 0, 1);
    push_bits(&b, 0, 4);
    push_bits(&b, 77, 8);
    push_v(&b, 200);
    run_lap_script(&m, &b, -3, DPM_OK, -3, 29 + 13 + 9 + 12 + 8);

    /* "-0" is rejected: L = 0, S = 1, A = 0, V = 0, then the same with S = 0 and L = 9 */
    lap_begin(&b, 0, 13, 1);
    push_bits(&b, 0, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 255);
    push_bits(&b, 9, 13);
    push_bits(&b, 255, 8);
    push_bits(&b, 0, 1);
    push_bits(&b, 0, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 255);
    run_lap_script(&m, &b, 0, DPM_OK, 9, 2 * 42);

    /* DPM_ERR_RANGE from the exact sum: +|Z| past INT64_MAX, *out untouched */
    lap_begin(&b, 10, 13, 0);
    push_bits(&b, 0, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 255);
    run_lap_script(&m, &b, INT64_MAX - 9, DPM_ERR_RANGE, 0, 42);
    run_lap_script(&m, &b, INT64_MAX - 10, DPM_OK, INT64_MAX, 42);

    /* den > 1: t = 65536 / 6553 (K = 12), Y = floor(X / 6553): X = 4000 + 3 4096 -> 2 */
    dpm_laplace_t d;
    assert_int_equal(dpm_laplace_init(&d, 1, 6553), DPM_OK);
    assert_int_equal(d.low_bits, 12);
    assert_true(d.fixed16 && d.scale_den == 6553);
    lap_begin(&b, 4000, 12, 0);
    push_bits(&b, 3, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 64);
    push_v(&b, 200);
    run_lap_script(&d, &b, 0, DPM_OK, (4000 + 3 * 4096 + 65536) / 6553, 12 + 9 + 12 + 16);

    /* step 5 (t = 196608 / 7: K = 14, mA = 12): A = 12 is out of range (its byte skipped),
     * A = 11 with L = 16383 makes U = 196607 < num; L = 16383 and A = 11 is fine, so use the
     * other mechanism corner: num = 1114112 (K = 17, mA = 9), A = 8, L = 2^17 - 1 gives
     * U = 1179647 >= num: start again */
    dpm_laplace_t g;
    assert_int_equal(dpm_laplace_init(&g, 17, 99991), DPM_OK);
    assert_int_equal(g.low_bits, 17);
    assert_int_equal(g.a_count, 9);
    assert_false(g.fixed16);
    lap_begin(&b, 131071, 17, 0);
    push_bits(&b, 12, 4); /* A = 12 >= mA: skipped with its byte */
    push_bits(&b, 0, 8);
    push_bits(&b, 8, 4); /* A = 8: gamma = 8 2^17 / 1114112 = 0.94; w = 255 above T_1: K = 1 */
    push_bits(&b, 255, 8);
    push_v(&b, 200);
    push_bits(&b, 0, 17); /* the new draw: L = 0, A = 0, V = 0 */
    push_bits(&b, 255, 8);
    push_bits(&b, 0, 1);
    push_bits(&b, 0, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 200);
    run_lap_script(&g, &b, 0, DPM_OK, 0, (17 + 9 + 24 + 8) + (17 + 9 + 12 + 8));
}

/* The exact paths a byte does not decide, forced by scripted bits, at t = 2^17. */
static void test_laplace_forced_fallbacks(void **state)
{
    (void)state;
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, T17, 65536), DPM_OK);
    bitstr_t b;

    /* u ties: L = 1000, 256 L / num = 1.953125 = 1 + 0.111101b. u = 1, then U1's next bits
     * 1 1 1 1 0 1 equal the expansion, which ends there: U1 >= gamma, trial 1 fails, L is
     * accepted after 6 more bits; a 0 as U1's first bit (below the 1) makes trial 1 succeed,
     * and trial 2's byte 255 fails: L rejected, a new draw */
    memset(&b, 0, sizeof(b));
    push_bits(&b, 1000, 13);
    push_bits(&b, 1, 8);
    push_bits(&b, 0x2F, 6); /* 1, 1, 1, 1, 0, 1: low bit first */
    push_bits(&b, 0, 1);
    push_bits(&b, 0, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 200);
    run_lap_script(&m, &b, 0, DPM_OK, 1000, 13 + 8 + 6 + 1 + 12 + 8);
    memset(&b, 0, sizeof(b));
    push_bits(&b, 1000, 13);
    push_bits(&b, 1, 8);
    push_bits(&b, 0, 1); /* U1's first bit 0 < 1: U1 below gamma, trial 1 succeeds */
    push_bits(&b, 255, 8);
    push_bits(&b, 7, 13); /* the next draw */
    push_bits(&b, 255, 8);
    push_bits(&b, 0, 1);
    push_bits(&b, 0, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 200);
    run_lap_script(&m, &b, 0, DPM_OK, 7, 13 + 8 + 1 + 8 + 42);

    /* W byte ties with T_3 = 125 / 24576 (A = 5): 256 T_3 = 1.30, 2^16 T_3 = 333.33: W's bytes
     * 1 and 77 give 333 = floor: the 256-bit path reads W's next bits against 1/3 = 0.0101..b:
     * "1" (above 0) makes W > T_3: K = 3 (below T_1 = 80/256 and T_2 = 12.5/256): accepted */
    lap_begin(&b, 0, 13, 0);
    push_bits(&b, 5, 4);
    push_bits(&b, 1, 8);
    push_bits(&b, 77, 8);
    push_bits(&b, 1, 1);
    push_v(&b, 200);
    run_lap_script(&m, &b, 0, DPM_OK, 5 * 8192, 13 + 9 + 4 + 17 + 8);
    /* "0 0": W below T_3 (whose bits are 0 1): below T_4 = 625/(65536 24) 256 too? T_4 < 1/2^8
     * and W's prefix 1/256 + ... > T_4: above T_4, so K = 4: rejected; the next candidate
     * (A = 0) is accepted */
    lap_begin(&b, 0, 13, 0);
    push_bits(&b, 5, 4);
    push_bits(&b, 1, 8);
    push_bits(&b, 77, 8);
    push_bits(&b, 0, 2);
    push_bits(&b, 0, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 200);
    run_lap_script(&m, &b, 0, DPM_OK, 0, 13 + 9 + 4 + 18 + 12 + 8);

    /* W below T_4 (A = 15: 256 T_4 = 8.24, w = 3): K >= 5, and the trials go on from 5 with
     * fresh bits: Bernoulli(1/5) reads floor(log2 5) = 2 bits at once, 11 != 00: it fails,
     * K = 5, odd: accepted */
    lap_begin(&b, 0, 13, 0);
    push_bits(&b, 15, 4);
    push_bits(&b, 3, 8);
    push_bits(&b, 3, 2);
    push_v(&b, 200);
    run_lap_script(&m, &b, 0, DPM_OK, 15 * 8192, 13 + 9 + 12 + 2 + 8);

    /* V bytes that need more bits: 42 (K = 3 iff f >= 2/3: f's first bit 1 (>= 1/2), second
     * 1 (>= 3/4 > 2/3): K = 3, a success), then 10 (K = 5 iff f < 2/3: first bit 0: a
     * success), then 200: V = 2. The bytes come from the back, f's bits from the front. */
    lap_begin(&b, 0, 13, 0);
    push_bits(&b, 0, 4);
    push_bits(&b, 255, 8);
    push_v(&b, 42);
    push_bits(&b, 3, 2);
    push_v(&b, 10);
    push_bits(&b, 0, 1);
    push_v(&b, 200);
    run_lap_script(&m, &b, 0, DPM_OK, 2 * (int64_t)T17, 13 + 9 + 12 + 8 + 2 + 8 + 1 + 8);

    /* V = 5: five successes and a failure (past the four bytes of the window) */
    lap_begin(&b, 3, 13, 1);
    push_bits(&b, 0, 4);
    push_bits(&b, 255, 8);
    for (int i = 0; i < 5; i++) {
        push_v(&b, 64);
    }
    push_v(&b, 200);
    run_lap_script(&m, &b, 0, DPM_OK, -(3 + 5 * (int64_t)T17), 13 + 9 + 12 + 48);
}

/* Within `front` bits of the front and `back` bytes of the back of every string: decided
 * counts / 2^bits <= Pr[z] <= (decided + undecided) / 2^bits (bits = front + 8 back) for the
 * mechanism, at scales where a draw is short. */
static dpm_status_t draw_laplace(dpm_rand_t *r, const void *arg, int64_t *out)
{
    return dpm_laplace_add((const dpm_laplace_t *)arg, r, 0, out);
}

static void check_laplace_enumerated(uint64_t sens, dpm_eps_t eps, unsigned front, unsigned back,
                                     double max_undecided)
{
    static uint64_t counts[2 * DLAP_RANGE];
    uint64_t undecided;
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, sens, eps), DPM_OK);
    enumerate_ends(front, back, draw_laplace, &m, -DLAP_RANGE, counts, 2 * DLAP_RANGE, &undecided);
    unsigned bits = front + 8 * back;
    long double total = ldexpl(1.0L, (int)bits);
    long double t = (long double)m.scale_num / (long double)m.scale_den;
    for (int64_t z = -DLAP_RANGE; z < DLAP_RANGE; z++) {
        long double pz = stat_dlap_pmf(t, z);
        uint64_t c = counts[z + DLAP_RANGE];
        if (!((long double)c / total <= pz && pz <= (long double)(c + undecided) / total)) {
            fail_msg("mechanism %llu/%u z=%lld: count %llu/2^%u vs pmf %Lg (undecided %llu)",
                     (unsigned long long)sens, eps, (long long)z, (unsigned long long)c, bits, pz,
                     (unsigned long long)undecided);
        }
    }
    print_message("# mechanism %llu/%u: %.3f of 2^%u strings undecided\n", (unsigned long long)sens,
                  eps, (double)undecided / (double)total, bits);
    assert_true((double)undecided / (double)total < max_undecided);
}

static void test_laplace_enumerated(void **state)
{
    (void)state;
    check_laplace_enumerated(1, 65536, 4, 2, 0.4);   /* t = 1: S and V only */
    check_laplace_enumerated(1, 131072, 4, 2, 0.55); /* t = 1/2 */
    check_laplace_enumerated(2, 65536, 14, 1, 0.75); /* t = 2: A (1 bit) and its W byte too */
}

/* Bit budget: the sampler reads about 54 bits a draw at t = 2^17 (no random byte wasted),
 * against ~47 for dpm_dlap with the same scale. */
static void test_laplace_bit_cost(void **state)
{
    (void)state;
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, T17, 65536), DPM_OK);
    test_rng_t t;
    dpm_rng_t port;
    dpm_rand_t r;
    seeded(&r, &t, &port, 77);
    for (int i = 0; i < 100000; i++) {
        int64_t z;
        assert_int_equal(dpm_laplace_add(&m, &r, 0, &z), DPM_OK);
    }
    double bits = (double)dpm_rand_bits_used(&r) / 100000.0;
    print_message("# mechanism t = 2^17: %.2f bits/draw\n", bits);
    assert_true(bits > 50.0 && bits < 58.0);
}

/* ---- parameter errors ---------------------------------------------------------------------- */

static void test_bad_parameters_leave_outputs(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t port;
    dpm_rand_t r;
    seeded(&r, &t, &port, 1);
    dpm_rand_t unbound;
    memset(&unbound, 0, sizeof(unbound));
    uint64_t u = SENTINEL_U64;
    int b = SENTINEL_INT;
    int64_t z = SENTINEL_I64;

    assert_int_equal(dpm_uniform(NULL, 3, &u), DPM_ERR_PARAM);
    assert_int_equal(dpm_uniform(&unbound, 3, &u), DPM_ERR_PARAM);
    assert_int_equal(dpm_uniform(&r, 0, &u), DPM_ERR_PARAM);
    assert_int_equal(dpm_uniform(&r, 3, NULL), DPM_ERR_PARAM);
    assert_int_equal(u, SENTINEL_U64);

    assert_int_equal(dpm_bernoulli(NULL, 1, 2, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli(&unbound, 1, 2, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli(&r, 1, 0, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli(&r, 0, 0, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli(&r, 3, 2, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli(&r, 1, 2, NULL), DPM_ERR_PARAM);

    assert_int_equal(dpm_bernoulli_exp(NULL, 1, 2, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli_exp(&r, 1, 0, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli_exp(&r, 4096 * 3 + 1, 3, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli_exp(&r, UINT64_MAX, 1, &b), DPM_ERR_PARAM);
    assert_int_equal(dpm_bernoulli_exp(&r, 1, 2, NULL), DPM_ERR_PARAM);
    assert_int_equal(b, SENTINEL_INT);
    assert_int_equal(dpm_bernoulli_exp(&r, 4096 * 3, 3, &b), DPM_OK); /* the limit itself */
    assert_true(b == 0 || b == 1);

    assert_int_equal(dpm_dlap(NULL, 1, 1, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dlap(&unbound, 1, 1, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dlap(&r, 0, 1, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dlap(&r, 1, 0, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dlap(&r, TWO56 + 1, 1, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dlap(&r, UINT64_MAX, 1, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dlap(&r, 1, 1, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_dlap_add(&r, TWO56 << 1, 2, 0, &z), DPM_ERR_PARAM); /* not reduced */
    assert_int_equal(dpm_dlap_add(&r, 0, 1, 0, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dlap_add(&r, 1, 0, 0, &z), DPM_ERR_PARAM);
    assert_int_equal(dpm_dlap_add(NULL, 1, 1, 0, &z), DPM_ERR_PARAM);
    assert_int_equal(z, SENTINEL_I64);
    uint64_t used = dpm_rand_bits_used(&r);
    assert_int_equal(dpm_dlap(&r, TWO56 << 1, 2, &z), DPM_OK); /* reduces to 2^56 / 1 */
    assert_int_equal(dpm_dlap(&r, 3 * TWO56, 3 * UINT64_C(1000003), &z), DPM_OK);
    assert_true(dpm_rand_bits_used(&r) > used);
}

static void test_laplace_init_errors_and_scale(void **state)
{
    (void)state;
    dpm_laplace_t m;
    memset(&m, 0x5A, sizeof(m));
    dpm_laplace_t before = m;
    assert_int_equal(dpm_laplace_init(NULL, 1, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_init(&m, 0, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_init(&m, (UINT64_C(1) << 40) + 1, DPM_EPS_ONE), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_init(&m, 1, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_init(&m, 1, DPM_EPS_MAX_Q16 + 1), DPM_ERR_PARAM);
    assert_memory_equal(&m, &before, sizeof(m));

    const struct {
        uint64_t sens;
        dpm_eps_t eps;
        uint64_t num, den;
    } kat[] = {
        {2, 65536, 2, 1},
        {1, 6553, 65536, 6553},           /* eps "0.1" */
        {3, 98304, 2, 1},                 /* 3 / 1.5 */
        {1, 1, 65536, 1},                 /* smallest eps */
        {UINT64_C(1) << 40, 1, TWO56, 1}, /* largest scale */
        {UINT64_C(1) << 40, DPM_EPS_MAX_Q16, UINT64_C(1) << 40 >> 6, 1},
        {10, 3 * 65536, 10, 3}, /* gcd(655360, 196608) = 65536 */
    };
    for (size_t i = 0; i < sizeof(kat) / sizeof(kat[0]); i++) {
        dpm_laplace_t k;
        assert_int_equal(dpm_laplace_init(&k, kat[i].sens, kat[i].eps), DPM_OK);
        assert_int_equal(k.scale_num, kat[i].num);
        assert_int_equal(k.scale_den, kat[i].den);
        assert_int_equal(k.sensitivity, kat[i].sens);
        assert_int_equal(k.eps, kat[i].eps);
    }
}

static void test_laplace_add_errors_and_range(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t port;
    dpm_rand_t r;
    seeded(&r, &t, &port, 2);
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, 1, DPM_EPS_ONE), DPM_OK);
    int64_t out = SENTINEL_I64;
    assert_int_equal(dpm_laplace_add(NULL, &r, 0, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_add(&m, NULL, 0, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_laplace_add(&m, &r, 0, NULL), DPM_ERR_PARAM);
    dpm_laplace_t bad = m;
    bad.scale_den = 0;
    assert_int_equal(dpm_laplace_add(&bad, &r, 0, &out), DPM_ERR_PARAM);
    bad = m;
    bad.scale_num = 0;
    assert_int_equal(dpm_laplace_add(&bad, &r, 0, &out), DPM_ERR_PARAM);
    bad = m;
    bad.scale_num = DPM_DLAP_MAX_NUM + 1u;
    assert_int_equal(dpm_laplace_add(&bad, &r, 0, &out), DPM_ERR_PARAM);
    /* table fields that would index or shift out of bounds (a lanes mechanism: num = 3 2^16) */
    dpm_laplace_t lanes;
    assert_int_equal(dpm_laplace_init(&lanes, 3, DPM_EPS_ONE), DPM_OK);
    assert_false(lanes.fixed16);
    bad = lanes;
    bad.a_bits = 9;
    assert_int_equal(dpm_laplace_add(&bad, &r, 0, &out), DPM_ERR_PARAM);
    bad = lanes;
    bad.low_bits = 200;
    assert_int_equal(dpm_laplace_add(&bad, &r, 0, &out), DPM_ERR_PARAM);
    bad = lanes;
    bad.a_count = 0;
    bad.lu_bits = 99; /* forces the sequential path, which checks a_count */
    assert_int_equal(dpm_laplace_add(&bad, &r, 0, &out), DPM_ERR_PARAM);
    assert_int_equal(out, SENTINEL_I64);

    /* at INT64_MAX every positive draw leaves int64; the others are value + Z <= value */
    int ranged = 0;
    int ok = 0;
    for (int i = 0; i < 200; i++) {
        out = SENTINEL_I64;
        dpm_status_t st = dpm_laplace_add(&m, &r, INT64_MAX, &out);
        if (st == DPM_ERR_RANGE) {
            assert_int_equal(out, SENTINEL_I64);
            ranged++;
        } else {
            assert_int_equal(st, DPM_OK);
            assert_true(out <= INT64_MAX && out > INT64_MAX - 100);
            ok++;
        }
        st = dpm_laplace_add(&m, &r, INT64_MIN, &out);
        assert_true(st == DPM_ERR_RANGE || (st == DPM_OK && out < INT64_MIN + 100));
    }
    assert_true(ranged > 30 && ok > 30);
}

/* ---- RNG failures -------------------------------------------------------------------------- */

static void test_rng_failure_is_sticky(void **state)
{
    (void)state;
    failing_rng_t f;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(failing_rand_init(&r, &f, &port, 3, 0), DPM_OK);
    uint64_t u = SENTINEL_U64;
    int b = SENTINEL_INT;
    int64_t z = SENTINEL_I64;
    assert_int_equal(dpm_uniform(&r, 3, &u), DPM_ERR_RNG);
    /* draws that need no bits still report the failed source */
    assert_int_equal(dpm_uniform(&r, 1, &u), DPM_ERR_RNG);
    assert_int_equal(dpm_bernoulli(&r, 0, 1, &b), DPM_ERR_RNG);
    assert_int_equal(dpm_bernoulli(&r, 1, 1, &b), DPM_ERR_RNG);
    assert_int_equal(dpm_bernoulli(&r, 1, 3, &b), DPM_ERR_RNG);
    assert_int_equal(dpm_bernoulli_exp(&r, 0, 1, &b), DPM_ERR_RNG);
    assert_int_equal(dpm_bernoulli_exp(&r, 5, 2, &b), DPM_ERR_RNG);
    assert_int_equal(dpm_dlap(&r, 1, 1, &z), DPM_ERR_RNG);
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, 2, DPM_EPS_ONE), DPM_OK);
    assert_int_equal(dpm_laplace_add(&m, &r, 10, &z), DPM_ERR_RNG);
    assert_int_equal(u, SENTINEL_U64);
    assert_int_equal(b, SENTINEL_INT);
    assert_int_equal(z, SENTINEL_I64);
}

/* The source fails in the middle of a draw: that draw and every later one fail. */
static void test_rng_failure_mid_sample(void **state)
{
    (void)state;
    failing_rng_t f;
    dpm_rng_t port;
    dpm_rand_t r;
    assert_int_equal(failing_rand_init(&r, &f, &port, 4, 3), DPM_OK);
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, 1000, DPM_EPS_ONE / 3), DPM_OK);
    int64_t z = 0;
    dpm_status_t st = DPM_OK;
    int draws = 0;
    while (st == DPM_OK) {
        z = SENTINEL_I64;
        st = dpm_laplace_add(&m, &r, 0, &z);
        draws++;
    }
    assert_int_equal(st, DPM_ERR_RNG);
    assert_int_equal(z, SENTINEL_I64);
    assert_true(draws > 10);
    assert_int_equal(r.rng_calls, 4);
    int b = SENTINEL_INT;
    assert_int_equal(dpm_bernoulli(&r, 1, 2, &b), DPM_ERR_RNG);
    assert_int_equal(b, SENTINEL_INT);
    assert_int_equal(r.rng_calls, 4); /* no retry behind the caller's back */
}

/* ---- the mechanism's exact privacy ratio ------------------------------------------------- */

/* The precision long double arithmetic really has at run time: 2^-63 on x86-64, but 2^-52
 * under valgrind, which emulates the x87 unit with 64-bit doubles. */
static long double long_double_epsilon(void)
{
    volatile long double e = 1.0L;
    while (1.0L + e / 2 != 1.0L) {
        e /= 2;
    }
    return e;
}

/* Pr[v + Z = y] / Pr[v' + Z = y] from the exact pmf with the scale the mechanism uses, for
 * v' = v + sensitivity over a window of y far past both: never above e^eps, and equal to it
 * (within long double rounding) outside [v, v'], so the scale is not wider than it needs.
 * The rounding allowance is 1e-15, or 1e4 units of the run-time precision where that is
 * coarser: plain double long double on 32-bit ARM (~2e-12), and under valgrind, which computes
 * long double in double (pmf ratios off by up to 2.8e-14; natively by 1.4e-17). */
static void check_privacy_ratio(uint64_t sens, dpm_eps_t eps)
{
    dpm_laplace_t m;
    assert_int_equal(dpm_laplace_init(&m, sens, eps), DPM_OK);
    long double t = (long double)m.scale_num / (long double)m.scale_den;
    long double bound = expl((long double)eps / 65536.0L);
    long double tol = fmaxl(1e-15L, 1e4L * long_double_epsilon());
    int64_t v = 0;
    int64_t v2 = (int64_t)sens;
    int64_t span = (int64_t)(60.0L * t) + 3 * (int64_t)sens + 10;
    int64_t step = span / 2000 + 1;
    for (int64_t y = -span; y <= v2 + span; y += step) {
        long double p1 = stat_dlap_pmf(t, y - v);
        long double p2 = stat_dlap_pmf(t, y - v2);
        if (p1 == 0.0L || p2 == 0.0L) {
            continue;
        }
        long double worst = p1 / p2 > p2 / p1 ? p1 / p2 : p2 / p1;
        assert_true(worst <= bound * (1.0L + tol));
        if (y <= v || y >= v2) {
            assert_true(worst >= bound * (1.0L - 1e-12L));
        }
    }
}

static void test_laplace_exact_pmf_privacy(void **state)
{
    (void)state;
    check_privacy_ratio(2, DPM_EPS_ONE);
    check_privacy_ratio(2, DPM_EPS_ONE / 2);
    check_privacy_ratio(1, 6553);
    check_privacy_ratio(3, 98304);
    check_privacy_ratio(65536, 65536 / 10);
    check_privacy_ratio(UINT64_C(1) << 40, 1);
    check_privacy_ratio(7, DPM_EPS_MAX_Q16);
    check_privacy_ratio(1, DPM_EPS_MAX_Q16);
}

/* ---- negative control for the goodness-of-fit machinery ---------------------------------- */

static void test_gof_rejects_wrong_scale(void **state)
{
    (void)state;
    test_rng_t t;
    dpm_rng_t port;
    dpm_rand_t r;
    seeded(&r, &t, &port, 5);
    stat_hist_t h;
    assert_int_equal(stat_hist_init(&h, -150, 1, 301), 0);
    for (int i = 0; i < 1000000; i++) {
        int64_t z;
        assert_int_equal(dpm_dlap(&r, 10, 1, &z), DPM_OK);
        stat_hist_add(&h, z);
    }
    long double right = 10.0L;
    stat_hist_expect(&h, stat_dlap_mass, &right);
    stat_gof_t g = stat_hist_gof(&h, 20.0, STAT_G);
    print_message("# G-test at the true scale 10: G = %.1f, dof %.0f, p = %.3g\n", g.statistic,
                  g.dof, g.p_value);
    assert_true(g.min_expected >= 20.0);
    assert_true(g.p_value > 1e-6);
    long double wrong = 10.2L; /* 2% too wide */
    stat_hist_expect(&h, stat_dlap_mass, &wrong);
    g = stat_hist_gof(&h, 20.0, STAT_G);
    print_message("# G-test at the wrong scale 10.2: G = %.1f, dof %.0f, p = %.3g\n", g.statistic,
                  g.dof, g.p_value);
    assert_true(g.p_value < 1e-6);
    assert_true(g.statistic > stat_chi2_isf(1e-6, g.dof));
    stat_hist_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rand_stream_is_the_bytes),
        cmocka_unit_test(test_rand_back_bytes),
        cmocka_unit_test(test_rand_failure_and_unbound),
        cmocka_unit_test(test_uniform_enumerated),
        cmocka_unit_test(test_uniform_bit_cost_and_range),
#ifdef __SIZEOF_INT128__
        cmocka_unit_test(test_u128_reference_matches_int128),
#endif
        cmocka_unit_test(test_bernoulli_enumerated),
        cmocka_unit_test(test_bernoulli_exp_enumerated),
        cmocka_unit_test(test_dlap_enumerated),
        cmocka_unit_test(test_dlap_script_fast_and_wide_paths),
        cmocka_unit_test(test_laplace_fast_matches_definition),
        cmocka_unit_test(test_laplace_pow2_table_is_exact),
        cmocka_unit_test(test_laplace_thresholds_are_exact),
        cmocka_unit_test(test_laplace_known_answers),
        cmocka_unit_test(test_laplace_forced_fallbacks),
        cmocka_unit_test(test_laplace_enumerated),
        cmocka_unit_test(test_laplace_bit_cost),
        cmocka_unit_test(test_bad_parameters_leave_outputs),
        cmocka_unit_test(test_laplace_init_errors_and_scale),
        cmocka_unit_test(test_laplace_add_errors_and_range),
        cmocka_unit_test(test_rng_failure_is_sticky),
        cmocka_unit_test(test_rng_failure_mid_sample),
        cmocka_unit_test(test_laplace_exact_pmf_privacy),
        cmocka_unit_test(test_gof_rejects_wrong_scale),
    };
    return cmocka_run_group_tests_name("noise_exact", tests, NULL, NULL);
}
