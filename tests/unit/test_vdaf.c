/* SPDX-License-Identifier: Apache-2.0 */
/* Prio3 (dpm/expert/vdaf.h) beyond the draft's vectors (tests/vectors/test_vdaf_vectors.c):
 *
 *   fields      Field64 and Field128, both multiplication paths (the build's, and the portable
 *               32-bit one compiled here under other names), against a bit-serial reference on
 *               edge values and random ones; the generators have the draft's order;
 *   sizes       every size field of every variant equals its compile-time macro;
 *   round trip  random valid measurements of every variant, 2 to 5 aggregators, shapes the
 *               vectors do not have (chunk 1, chunk > MEAS_LEN, one bit, 64-bit values, 2 and 5
 *               proofs): sharded, verified by every aggregator, aggregated, unsharded = the sum;
 *   soundness   a dishonest client that runs the real prover on an encoding the variant does
 *               not allow (a "bit" of 2, two ones in a histogram, a false weight) is rejected by
 *               the aggregators (DPM_ERR_VERIFY), for every variant;
 *   bad input   each refused with its status, every output left as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/expert/vdaf.h"
#include "test_rng.h"
#include "vdaf/field.h"
#include "vdaf/vdaf_internal.h"
#include "vdaf_fixture.h"

/* The portable multiplication under other names (the build's is the one above). */
#undef DPM_VDAF_FIELD_H
#undef DPM_VDAF_HAVE_U128
#undef DPM_VDAF_ARMV7EM
#define DPM_VDAF_PORTABLE_MUL
#define le64_get p_le64_get
#define le64_put p_le64_put
#define ct_carry p_ct_carry
#define ct_borrow p_ct_borrow
#define ct_nonzero_mask p_ct_nonzero_mask
#define f64_add p_f64_add
#define f64_sub p_f64_sub
#define f64_neg p_f64_neg
#define f64_reduce p_f64_reduce
#define f64_mul p_f64_mul
#define f128_t p_f128_t
#define f128_make p_f128_make
#define f128_select p_f128_select
#define f128_add_raw p_f128_add_raw
#define f128_sub_raw p_f128_sub_raw
#define f128_plus_c p_f128_plus_c
#define f128_add p_f128_add
#define f128_sub p_f128_sub
#define f128_neg p_f128_neg
#define f128_canonical p_f128_canonical
#define f128_reduce8 p_f128_reduce8
#define f128_mul p_f128_mul
#define f128_mul_to p_f128_mul_to
#define f128_bfly p_f128_bfly
#define dpm_vdaf_asr_check p_dpm_vdaf_asr_check
#include "vdaf/field.h"
#undef le64_get
#undef le64_put
#undef ct_carry
#undef ct_borrow
#undef ct_nonzero_mask
#undef f64_add
#undef f64_sub
#undef f64_neg
#undef f64_reduce
#undef f64_mul
#undef f128_t
#undef f128_make
#undef f128_select
#undef f128_add_raw
#undef f128_sub_raw
#undef f128_plus_c
#undef f128_add
#undef f128_sub
#undef f128_neg
#undef f128_canonical
#undef f128_reduce8
#undef f128_mul
#undef f128_mul_to
#undef f128_bfly

/* ---- a bit-serial reference: branchy, slow and obviously right ---------------------------- */
typedef struct {
    uint64_t lo, hi;
} u128_t;

static const u128_t P128 = {UINT64_C(1), UINT64_C(0xFFFFFFFFFFFFFFE4)};
static const u128_t P64 = {UINT64_C(0xFFFFFFFF00000001), 0};

static int ge(u128_t a, u128_t b)
{
    return a.hi != b.hi ? a.hi > b.hi : a.lo >= b.lo;
}

static u128_t sub(u128_t a, u128_t b)
{
    u128_t r = {a.lo - b.lo, a.hi - b.hi - (a.lo < b.lo)};
    return r;
}

/* (a + b) mod m for a, b < m (m = P64 or P128). */
static u128_t ref_add(u128_t a, u128_t b, u128_t m)
{
    u128_t s = {a.lo + b.lo, 0};
    uint64_t c = s.lo < a.lo;
    s.hi = a.hi + b.hi + c;
    int carry = s.hi < a.hi || (s.hi == a.hi && c);
    if (m.hi == 0) { /* Field64: the sum is at most 65 bits */
        carry = s.hi != 0;
        if (carry || s.lo >= m.lo) {
            s.lo -= m.lo;
            s.hi = 0;
        }
        return s;
    }
    if (carry || ge(s, m)) {
        s = sub(s, m);
    }
    return s;
}

static u128_t ref_mul(u128_t a, u128_t b, u128_t m)
{
    u128_t r = {0, 0};
    for (int bit = 127; bit >= 0; bit--) {
        r = ref_add(r, r, m);
        uint64_t w = bit >= 64 ? b.hi : b.lo;
        if ((w >> (bit % 64)) & 1u) {
            r = ref_add(r, a, m);
        }
    }
    return r;
}

static u128_t rand_below(test_rng_t *t, u128_t m)
{
    for (;;) {
        u128_t x = {test_rng_next(t), m.hi == 0 ? 0 : test_rng_next(t)};
        if (!ge(x, m)) {
            return x;
        }
    }
}

static void check128(u128_t a, u128_t b)
{
    u128_t want_mul = ref_mul(a, b, P128), want_add = ref_add(a, b, P128);
    u128_t want_sub = (b.lo | b.hi) == 0 ? a : ref_add(a, sub(P128, b), P128);
    f128_t x = f128_make(a.lo, a.hi), y = f128_make(b.lo, b.hi);
    f128_t m1 = f128_mul(x, y), s1 = f128_add(x, y), d1 = f128_sub(x, y);
    p_f128_t px = p_f128_make(a.lo, a.hi), py = p_f128_make(b.lo, b.hi);
    p_f128_t m2 = p_f128_mul(px, py), s2 = p_f128_add(px, py), d2 = p_f128_sub(px, py);
    /* the in-memory forms (Armv7E-M assembly in the build's, C in the portable one) */
    f128_t m3, s3 = x, d3 = y;
    f128_mul_to(&m3, &x, &y);
    f128_bfly(&s3, &d3);
    p_f128_t m4, s4 = px, d4 = py;
    p_f128_mul_to(&m4, &px, &py);
    p_f128_bfly(&s4, &d4);
    if (m3.lo != m1.lo || m3.hi != m1.hi || s3.lo != s1.lo || s3.hi != s1.hi || d3.lo != d1.lo ||
        d3.hi != d1.hi || m4.lo != m2.lo || m4.hi != m2.hi || s4.lo != s2.lo || s4.hi != s2.hi ||
        d4.lo != d2.lo || d4.hi != d2.hi) {
        fail_msg("Field128 in memory: a = %016llx%016llx b = %016llx%016llx",
                 (unsigned long long)a.hi, (unsigned long long)a.lo, (unsigned long long)b.hi,
                 (unsigned long long)b.lo);
    }
    if (m1.lo != want_mul.lo || m1.hi != want_mul.hi || m2.lo != want_mul.lo ||
        m2.hi != want_mul.hi || s1.lo != want_add.lo || s1.hi != want_add.hi ||
        s2.lo != want_add.lo || s2.hi != want_add.hi || d1.lo != want_sub.lo ||
        d1.hi != want_sub.hi || d2.lo != want_sub.lo || d2.hi != want_sub.hi) {
        fail_msg("Field128: a = %016llx%016llx b = %016llx%016llx", (unsigned long long)a.hi,
                 (unsigned long long)a.lo, (unsigned long long)b.hi, (unsigned long long)b.lo);
    }
}

static void check64(uint64_t a, uint64_t b)
{
    u128_t A = {a, 0}, B = {b, 0};
    u128_t want_mul = ref_mul(A, B, P64), want_add = ref_add(A, B, P64);
    u128_t want_sub = b == 0 ? A : ref_add(A, sub(P64, B), P64);
    if (f64_mul(a, b) != want_mul.lo || p_f64_mul(a, b) != want_mul.lo ||
        f64_add(a, b) != want_add.lo || p_f64_add(a, b) != want_add.lo ||
        f64_sub(a, b) != want_sub.lo || p_f64_sub(a, b) != want_sub.lo) {
        fail_msg("Field64: a = %016llx b = %016llx", (unsigned long long)a, (unsigned long long)b);
    }
}

static void test_fields_against_reference(void **state)
{
    (void)state;
    const u128_t edges128[] = {{0, 0},
                               {1, 0},
                               {2, 0},
                               {UINT64_MAX, 0},
                               {0, 1},
                               {UINT64_MAX, UINT64_C(0x1B)}, /* 2^128 - p */
                               {0, UINT64_C(0x8000000000000000)},
                               {0, UINT64_C(0xFFFFFFFFFFFFFFE4)}, /* p - 1 */
                               {UINT64_MAX, UINT64_C(0xFFFFFFFFFFFFFFE3)},
                               {F128_GEN_LO, F128_GEN_HI}};
    const uint64_t edges64[] = {0,
                                1,
                                2,
                                UINT64_C(0xFFFFFFFF),
                                UINT64_C(0x100000000),
                                UINT64_C(0xFFFFFFFF00000000),
                                UINT64_C(0xFFFFFFFEFFFFFFFF),
                                UINT64_C(0x7FFFFFFFFFFFFFFF),
                                F64_GEN};
    const size_t n128 = sizeof(edges128) / sizeof(edges128[0]);
    const size_t n64 = sizeof(edges64) / sizeof(edges64[0]);
    for (size_t i = 0; i < n128; i++) {
        for (size_t j = 0; j < n128; j++) {
            check128(edges128[i], edges128[j]);
        }
    }
    for (size_t i = 0; i < n64; i++) {
        for (size_t j = 0; j < n64; j++) {
            check64(edges64[i], edges64[j]);
        }
    }
    test_rng_t t;
    test_rng_seed(&t, 30);
    for (int k = 0; k < 1500; k++) {
        check128(rand_below(&t, P128), rand_below(&t, P128));
        check64(rand_below(&t, P64).lo, rand_below(&t, P64).lo);
    }
    /* products that exercise the last folds: factors just below p and 2^128 - p */
    for (int k = 0; k < 200; k++) {
        u128_t a = sub(P128, (u128_t){test_rng_next(&t) & 0xFFFF, 0});
        u128_t b = {UINT64_MAX - (test_rng_next(&t) & 0xFF), UINT64_C(0x1B)};
        check128(a, sub(P128, (u128_t){1 + (test_rng_next(&t) & 0xFF), 0}));
        check128(a, b);
    }
}

/* g^(2^(k-1)) != 1 and g^(2^k) == 1: the generators have order exactly 2^32 and 2^66. */
static void test_generators_have_the_drafts_order(void **state)
{
    (void)state;
    uint64_t g = F64_GEN;
    for (int i = 0; i < 31; i++) {
        g = f64_mul(g, g);
    }
    assert_int_not_equal(g, 1);
    assert_int_equal(f64_mul(g, g), 1);
    f128_t h = f128_make(F128_GEN_LO, F128_GEN_HI);
    for (int i = 0; i < 65; i++) {
        h = f128_mul(h, h);
    }
    assert_false(h.lo == 1 && h.hi == 0);
    h = f128_mul(h, h);
    assert_true(h.lo == 1 && h.hi == 0);
    /* and they are 7^((p - 1) / 2^k) */
    u128_t e = {UINT64_C(4611686018427387897), 0}, x = {1, 0}, seven = {7, 0};
    for (int bit = 63; bit >= 0; bit--) {
        x = ref_mul(x, x, P128);
        if ((e.lo >> bit) & 1u) {
            x = ref_mul(x, seven, P128);
        }
    }
    assert_true(x.lo == F128_GEN_LO && x.hi == F128_GEN_HI);
    u128_t y = {1, 0};
    for (int bit = 31; bit >= 0; bit--) {
        y = ref_mul(y, y, P64);
        y = ref_mul(y, seven, P64); /* 2^32 - 1: every bit set */
    }
    assert_true(y.lo == F64_GEN);
}

/* ---- sizes ---------------------------------------------------------------------------------- */

typedef struct {
    int kind;
    uint32_t shares, a, b, c, d;
    uint32_t rand, pub, leader, helper, vshare, vmsg, out, state, shard_work, verify_work;
} size_row_t;

#define ROW(kind, shares, a, b, c, d, SHAPE)                                                       \
    {                                                                                              \
        kind, shares, a, b, c, d, DPM_PRIO3_RAND_BYTES(SHAPE),                                     \
            DPM_PRIO3_PUBLIC_SHARE_BYTES(SHAPE), DPM_PRIO3_LEADER_SHARE_BYTES(SHAPE),              \
            DPM_PRIO3_HELPER_SHARE_BYTES(SHAPE), DPM_PRIO3_VERIFIER_SHARE_BYTES(SHAPE),            \
            DPM_PRIO3_VERIFIER_MESSAGE_BYTES(SHAPE), DPM_PRIO3_OUT_SHARE_BYTES(SHAPE),             \
            DPM_PRIO3_STATE_BYTES(SHAPE), DPM_PRIO3_SHARD_WORK_WORDS(SHAPE),                       \
            DPM_PRIO3_VERIFY_WORK_WORDS(SHAPE)                                                     \
    }

static const size_row_t SIZE_ROWS[] = {
    ROW(DPM_PRIO3_COUNT, 2, 0, 0, 0, 0, DPM_PRIO3_COUNT_SHAPE(2)),
    ROW(DPM_PRIO3_COUNT, 5, 0, 0, 0, 0, DPM_PRIO3_COUNT_SHAPE(5)),
    ROW(DPM_PRIO3_SUM, 2, 255, 0, 0, 0, DPM_PRIO3_SUM_SHAPE(2, DPM_VDAF_BITS(255u))),
    ROW(DPM_PRIO3_SUM, 3, 1337, 0, 0, 0, DPM_PRIO3_SUM_SHAPE(3, DPM_VDAF_BITS(1337u))),
    ROW(DPM_PRIO3_SUM, 2, 1, 0, 0, 0, DPM_PRIO3_SUM_SHAPE(2, 1)),
    ROW(DPM_PRIO3_SUMVEC, 2, 48, 255, 26, 0, DPM_PRIO3_SUMVEC_SHAPE(2, 48, 8, 26)),
    ROW(DPM_PRIO3_SUMVEC, 2, 72, 255, 19, 0, DPM_PRIO3_SUMVEC_SHAPE(2, 72, 8, 19)),
    ROW(DPM_PRIO3_SUMVEC, 3, 3, 32000, 7, 0,
        DPM_PRIO3_SUMVEC_SHAPE(3, 3, DPM_VDAF_BITS(32000u), 7)),
    ROW(DPM_PRIO3_SUMVEC, 2, 1000, 1, 31, 0, DPM_PRIO3_SUMVEC_SHAPE(2, 1000, 1, 31)),
    ROW(DPM_PRIO3_HISTOGRAM, 2, 100, 10, 0, 0, DPM_PRIO3_HISTOGRAM_SHAPE(2, 100, 10)),
    ROW(DPM_PRIO3_HISTOGRAM, 4, 16, 3, 0, 0, DPM_PRIO3_HISTOGRAM_SHAPE(4, 16, 3)),
    ROW(DPM_PRIO3_HISTOGRAM, 2, 1, 1, 0, 0, DPM_PRIO3_HISTOGRAM_SHAPE(2, 1, 1)),
    ROW(DPM_PRIO3_MULTIHOT, 2, 10, 2, 3, 0, DPM_PRIO3_MULTIHOT_SHAPE(2, 10, DPM_VDAF_BITS(2u), 3)),
    ROW(DPM_PRIO3_MULTIHOT, 3, 50, 50, 8, 0,
        DPM_PRIO3_MULTIHOT_SHAPE(3, 50, DPM_VDAF_BITS(50u), 8)),
    ROW(DPM_PRIO3_SUMVEC_MULTIPROOF, 2, 3, 10, 255, 9,
        DPM_PRIO3_SUMVEC_MULTIPROOF_SHAPE(2, 3, 10, 8, 9)),
    ROW(DPM_PRIO3_SUMVEC_MULTIPROOF, 3, 2, 48, 255, 26,
        DPM_PRIO3_SUMVEC_MULTIPROOF_SHAPE(3, 2, 48, 8, 26)),
    ROW(DPM_PRIO3_HIGHER_DEGREE, 2, 0, 0, 0, 0, DPM_PRIO3_HIGHER_DEGREE_SHAPE(2)),
};

static dpm_status_t init_row(dpm_prio3_t *v, int kind, uint32_t shares, uint32_t a, uint32_t b,
                             uint32_t c, uint32_t d)
{
    switch (kind) {
    case DPM_PRIO3_COUNT: return dpm_prio3_count_init(v, shares);
    case DPM_PRIO3_SUM: return dpm_prio3_sum_init(v, shares, a);
    case DPM_PRIO3_SUMVEC: return dpm_prio3_sumvec_init(v, shares, a, b, c);
    case DPM_PRIO3_HISTOGRAM: return dpm_prio3_histogram_init(v, shares, a, b);
    case DPM_PRIO3_MULTIHOT: return dpm_prio3_multihot_init(v, shares, a, b, c);
    case DPM_PRIO3_SUMVEC_MULTIPROOF:
        return dpm_prio3_sumvec_multiproof_init(v, shares, a, b, c, d);
    default: return dpm_prio3_higher_degree_init(v, shares);
    }
}

static void test_sizes_equal_the_macros(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(SIZE_ROWS) / sizeof(SIZE_ROWS[0]); i++) {
        const size_row_t *r = &SIZE_ROWS[i];
        dpm_prio3_t v;
        assert_int_equal(init_row(&v, r->kind, r->shares, r->a, r->b, r->c, r->d), DPM_OK);
        const uint32_t got[10] = {v.rand_bytes,           v.public_share_bytes,
                                  v.leader_share_bytes,   v.helper_share_bytes,
                                  v.verifier_share_bytes, v.verifier_message_bytes,
                                  v.out_share_bytes,      v.state_bytes,
                                  v.shard_work_words,     v.verify_work_words};
        const uint32_t want[10] = {r->rand, r->pub, r->leader, r->helper,     r->vshare,
                                   r->vmsg, r->out, r->state,  r->shard_work, r->verify_work};
        for (int k = 0; k < 10; k++) {
            if (got[k] != want[k]) {
                fail_msg("row %zu size %d: runtime %u, macro %u", i, k, got[k], want[k]);
            }
        }
    }
    /* the draft's own figures for one shape: Prio3SumVec_0's leader share is 2096 bytes */
    assert_int_equal(DPM_PRIO3_LEADER_SHARE_BYTES(DPM_PRIO3_SUMVEC_SHAPE(2, 10, 8, 9)), 2096);
    assert_int_equal(DPM_VDAF_BITS(255u), 8);
    assert_int_equal(DPM_VDAF_BITS(256u), 9);
    assert_int_equal(DPM_VDAF_BITS(0u), 0);
    assert_int_equal(DPM_VDAF_BITS(0xFFFFFFFFu), 32);
    assert_int_equal(DPM_VDAF_NEXT_POW2(16u), 16);
    assert_int_equal(DPM_VDAF_NEXT_POW2(17u), 32);
}

/* ---- round trips ------------------------------------------------------------------------------
 */

static const uint8_t KEY[DPM_PRIO3_VERIFY_KEY_BYTES] = {
    9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 9, 8};
static const uint8_t CTX[] = "dpmetrics test";

static size_t meas_count(const dpm_prio3_t *v)
{
    return (v->kind == DPM_PRIO3_SUMVEC || v->kind == DPM_PRIO3_SUMVEC_MULTIPROOF ||
            v->kind == DPM_PRIO3_MULTIHOT)
               ? v->length
               : 1u;
}

/* A random valid measurement and what it adds to the aggregate (output_len values). */
static void random_measurement(const dpm_prio3_t *v, test_rng_t *t, uint64_t *m, uint64_t *adds)
{
    memset(adds, 0, v->output_len * sizeof(uint64_t));
    switch (v->kind) {
    case DPM_PRIO3_COUNT:
    case DPM_PRIO3_SUM:
    case DPM_PRIO3_HIGHER_DEGREE: {
        uint64_t r = test_rng_next(t);
        /* often the extremes */
        m[0] = (r & 3u) == 0   ? 0
               : (r & 3u) == 1 ? v->max_measurement
                               : (test_rng_next(t) % (v->max_measurement + 1u));
        if (v->max_measurement == UINT64_MAX) {
            m[0] = test_rng_next(t);
        }
        adds[0] = m[0];
        break;
    }
    case DPM_PRIO3_HISTOGRAM:
        m[0] = test_rng_next(t) % v->length;
        adds[m[0]] = 1;
        break;
    case DPM_PRIO3_MULTIHOT: {
        uint64_t weight = test_rng_next(t) % (v->max_measurement + 1u);
        memset(m, 0, v->length * sizeof(uint64_t));
        for (uint64_t k = 0; k < weight; k++) {
            m[test_rng_next(t) % v->length] = 1; /* duplicates keep the weight <= max */
        }
        for (uint32_t e = 0; e < v->length; e++) {
            adds[e] = m[e];
        }
        break;
    }
    default: /* SumVec */
        for (uint32_t e = 0; e < v->length; e++) {
            uint64_t r = test_rng_next(t);
            m[e] = (r & 7u) == 0   ? v->max_measurement
                   : (r & 7u) == 1 ? 0
                                   : test_rng_next(t) % (v->max_measurement + 1u);
            adds[e] = m[e];
        }
    }
}

static void round_trip(const dpm_prio3_t *v, int reports, uint64_t seed)
{
    test_rng_t t;
    test_rng_seed(&t, seed);
    uint64_t *m = calloc(v->length + 1u, sizeof(uint64_t));
    uint64_t *adds = calloc(v->output_len, sizeof(uint64_t));
    uint64_t *want = calloc(v->output_len, sizeof(uint64_t));
    uint64_t *got = calloc(v->output_len, sizeof(uint64_t));
    uint8_t *agg = calloc(v->shares, v->out_share_bytes);
    for (int r = 0; r < reports; r++) {
        vdaf_report_t rep;
        vdaf_result_t res;
        random_measurement(v, &t, m, adds);
        for (uint32_t i = 0; i < v->output_len; i++) {
            want[i] += adds[i];
        }
        vdaf_report_alloc(v, &rep);
        assert_int_equal(
            vdaf_report_shard(v, CTX, sizeof(CTX) - 1u, m, meas_count(v), test_rng_next(&t), &rep),
            DPM_OK);
        vdaf_result_init(v, &res);
        vdaf_verify(v, KEY, CTX, sizeof(CTX) - 1u, &rep, -1, -1, &res);
        if (res.step != VDAF_STEP_DONE) {
            fail_msg("kind %d report %d: stopped at step %d (%s)", v->kind, r, res.step,
                     dpm_strerror(res.status));
        }
        for (uint32_t j = 0; j < v->shares; j++) {
            assert_int_equal(dpm_prio3_aggregate(v, agg + (size_t)j * v->out_share_bytes,
                                                 v->out_share_bytes,
                                                 res.out_shares + (size_t)j * v->out_share_bytes,
                                                 v->out_share_bytes),
                             DPM_OK);
        }
        vdaf_result_free(&res);
        vdaf_report_free(&rep);
    }
    assert_int_equal(dpm_prio3_unshard(v, agg, (size_t)v->shares * v->out_share_bytes,
                                       (uint64_t)reports, got, v->output_len),
                     DPM_OK);
    for (uint32_t i = 0; i < v->output_len; i++) {
        if (got[i] != want[i]) {
            fail_msg("kind %d: result[%u] = %llu, expected %llu", v->kind, i,
                     (unsigned long long)got[i], (unsigned long long)want[i]);
        }
    }
    free(m);
    free(adds);
    free(want);
    free(got);
    free(agg);
}

/* An aggregator's central noise (dpm_prio3_add_noise) and the collector's signed unshard: on
 * real aggregate shares of each field, signed noise of both signs and of sizes up to 2^62 in
 * each aggregator's share comes back exactly as true sum + noise_0 + noise_1, negative sums
 * included; a value beyond +-(2^63 - 1) is DPM_ERR_RANGE (Field128: the field holds it), a
 * share that is no field element is refused unchanged, and wrong lengths are refused. */
static void test_central_noise(void **state)
{
    (void)state;
    dpm_prio3_t vs[3];
    assert_int_equal(dpm_prio3_sum_init(&vs[0], 2, 1337), DPM_OK);          /* Field64 */
    assert_int_equal(dpm_prio3_count_init(&vs[1], 2), DPM_OK);              /* Field64 */
    assert_int_equal(dpm_prio3_sumvec_init(&vs[2], 2, 12, 255, 6), DPM_OK); /* Field128 */
    for (int k = 0; k < 3; k++) {
        const dpm_prio3_t *v = &vs[k];
        test_rng_t t;
        test_rng_seed(&t, 900u + (uint64_t)k);
        uint64_t *m = calloc(v->length + 1u, sizeof(uint64_t));
        uint64_t *adds = calloc(v->output_len, sizeof(uint64_t));
        int64_t *want = calloc(v->output_len, sizeof(int64_t));
        int64_t *got = calloc(v->output_len, sizeof(int64_t));
        int64_t *noise = calloc(v->output_len, sizeof(int64_t));
        uint8_t *agg = calloc(2, v->out_share_bytes);
        uint8_t *saved = calloc(1, v->out_share_bytes);
        for (int r = 0; r < 5; r++) { /* five honest reports aggregated */
            vdaf_report_t rep;
            vdaf_result_t res;
            random_measurement(v, &t, m, adds);
            for (uint32_t i = 0; i < v->output_len; i++) {
                want[i] += (int64_t)adds[i];
            }
            vdaf_report_alloc(v, &rep);
            assert_int_equal(vdaf_report_shard(v, CTX, sizeof(CTX) - 1u, m, meas_count(v),
                                               test_rng_next(&t), &rep),
                             DPM_OK);
            vdaf_result_init(v, &res);
            vdaf_verify(v, KEY, CTX, sizeof(CTX) - 1u, &rep, -1, -1, &res);
            assert_int_equal(res.step, VDAF_STEP_DONE);
            for (uint32_t j = 0; j < 2; j++) {
                assert_int_equal(
                    dpm_prio3_aggregate(v, agg + (size_t)j * v->out_share_bytes, v->out_share_bytes,
                                        res.out_shares + (size_t)j * v->out_share_bytes,
                                        v->out_share_bytes),
                    DPM_OK);
            }
            vdaf_result_free(&res);
            vdaf_report_free(&rep);
        }
        for (uint32_t j = 0; j < 2; j++) { /* each aggregator its own noise, both signs */
            for (uint32_t i = 0; i < v->output_len; i++) {
                uint64_t x = test_rng_next(&t);
                noise[i] = (int64_t)(x >> (2u + x % 62u)) * ((x & 64u) ? -1 : 1);
                if (i == 0) {
                    noise[i] = j == 0 ? -1000000 : -((int64_t)1 << 40); /* the sum below zero */
                }
                want[i] += noise[i];
            }
            assert_int_equal(dpm_prio3_add_noise(v, agg + (size_t)j * v->out_share_bytes,
                                                 v->out_share_bytes, noise, v->output_len),
                             DPM_OK);
        }
        assert_int_equal(
            dpm_prio3_unshard_signed(v, agg, 2u * v->out_share_bytes, 5, got, v->output_len),
            DPM_OK);
        for (uint32_t i = 0; i < v->output_len; i++) {
            if (got[i] != want[i]) {
                fail_msg("kind %d: result[%u] = %lld, expected %lld", v->kind, i, (long long)got[i],
                         (long long)want[i]);
            }
        }
        assert_true(got[0] < 0);
        /* lengths and counts of another instance; a result buffer too small */
        assert_int_equal(dpm_prio3_add_noise(v, agg, v->out_share_bytes - 1u, noise, v->output_len),
                         DPM_ERR_PARAM);
        assert_int_equal(dpm_prio3_add_noise(v, agg, v->out_share_bytes, noise, v->output_len + 1u),
                         DPM_ERR_PARAM);
        assert_int_equal(
            dpm_prio3_unshard_signed(v, agg, 2u * v->out_share_bytes - 1u, 5, got, v->output_len),
            DPM_ERR_PROTOCOL);
        if (v->output_len > 1) {
            assert_int_equal(dpm_prio3_unshard_signed(v, agg, 2u * v->out_share_bytes, 5, got,
                                                      v->output_len - 1u),
                             DPM_ERR_BUFFER);
        }
        /* a share holding a value >= p: refused, and left as it was */
        memset(agg, 0xFF, v->field_bytes);
        memcpy(saved, agg, v->out_share_bytes);
        assert_int_equal(dpm_prio3_add_noise(v, agg, v->out_share_bytes, noise, v->output_len),
                         DPM_ERR_PROTOCOL);
        assert_memory_equal(agg, saved, v->out_share_bytes);
        assert_int_equal(
            dpm_prio3_unshard_signed(v, agg, 2u * v->out_share_bytes, 5, got, v->output_len),
            DPM_ERR_PROTOCOL);
        if (v->field_bytes == 16u) { /* Field128 holds 2^63 + x: beyond int64, said so */
            memset(agg, 0, 2u * v->out_share_bytes);
            for (uint32_t i = 0; i < v->output_len; i++) {
                noise[i] = INT64_MAX;
            }
            assert_int_equal(dpm_prio3_add_noise(v, agg, v->out_share_bytes, noise, v->output_len),
                             DPM_OK);
            assert_int_equal(dpm_prio3_add_noise(v, agg + v->out_share_bytes, v->out_share_bytes,
                                                 noise, v->output_len),
                             DPM_OK);
            assert_int_equal(
                dpm_prio3_unshard_signed(v, agg, 2u * v->out_share_bytes, 5, got, v->output_len),
                DPM_ERR_RANGE);
            for (uint32_t i = 0; i < v->output_len; i++) { /* the extremes that fit int64 */
                noise[i] = i % 2 ? INT64_MIN + 1 : INT64_MAX;
            }
            memset(agg, 0, 2u * v->out_share_bytes);
            assert_int_equal(dpm_prio3_add_noise(v, agg, v->out_share_bytes, noise, v->output_len),
                             DPM_OK);
            assert_int_equal(
                dpm_prio3_unshard_signed(v, agg, 2u * v->out_share_bytes, 5, got, v->output_len),
                DPM_OK);
            for (uint32_t i = 0; i < v->output_len; i++) {
                assert_true(got[i] == noise[i]);
            }
            for (uint32_t i = 0; i < v->output_len; i++) { /* -2^63: added, but no int64 sum */
                noise[i] = INT64_MIN;
            }
            memset(agg, 0, 2u * v->out_share_bytes);
            assert_int_equal(dpm_prio3_add_noise(v, agg, v->out_share_bytes, noise, v->output_len),
                             DPM_OK);
            assert_int_equal(
                dpm_prio3_unshard_signed(v, agg, 2u * v->out_share_bytes, 5, got, v->output_len),
                DPM_ERR_RANGE);
        }
        free(m), free(adds), free(want), free(got), free(noise), free(agg), free(saved);
    }
}

static void test_round_trips(void **state)
{
    (void)state;
    static const struct {
        int kind;
        uint32_t shares, a, b, c, d;
    } shapes[] = {
        {DPM_PRIO3_COUNT, 2, 0, 0, 0, 0},
        {DPM_PRIO3_COUNT, 5, 0, 0, 0, 0},
        {DPM_PRIO3_SUM, 2, 1, 0, 0, 0},      /* one bit */
        {DPM_PRIO3_SUM, 3, 100000, 0, 0, 0}, /* 17 bits, a last weight != 2^16 */
        {DPM_PRIO3_SUM, 2, 0xFFFFFFFFu, 0, 0, 0},
        {DPM_PRIO3_SUMVEC, 2, 48, 255, 26, 0},  /* the campaigns' 2 x 24 shape */
        {DPM_PRIO3_SUMVEC, 3, 5, 1, 1, 0},      /* chunk 1 */
        {DPM_PRIO3_SUMVEC, 2, 4, 1000, 100, 0}, /* chunk > MEAS_LEN: one call */
        {DPM_PRIO3_SUMVEC, 4, 2, 0xFFFFFFFFu, 9, 0},
        {DPM_PRIO3_HISTOGRAM, 2, 32, 5, 0, 0},
        {DPM_PRIO3_HISTOGRAM, 3, 1, 1, 0, 0},
        {DPM_PRIO3_HISTOGRAM, 5, 17, 4, 0, 0},
        {DPM_PRIO3_MULTIHOT, 2, 12, 5, 4, 0},
        {DPM_PRIO3_MULTIHOT, 3, 6, 6, 1, 0},
        {DPM_PRIO3_SUMVEC_MULTIPROOF, 2, 2, 10, 255, 9},
        {DPM_PRIO3_SUMVEC_MULTIPROOF, 3, 5, 4, 3, 2},
        {DPM_PRIO3_HIGHER_DEGREE, 2, 0, 0, 0, 0},
        {DPM_PRIO3_HIGHER_DEGREE, 3, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        dpm_prio3_t v;
        assert_int_equal(init_row(&v, shapes[i].kind, shapes[i].shares, shapes[i].a, shapes[i].b,
                                  shapes[i].c, shapes[i].d),
                         DPM_OK);
        round_trip(&v, 6, 1000u + i);
    }
    /* Sum with the largest value Field64 can take (bits = 64): one report at a time, as two
     * such values already wrap around p */
    dpm_prio3_t v;
    assert_int_equal(dpm_prio3_sum_init(&v, 2, F64_P - 1u), DPM_OK);
    assert_int_equal(v.bits, 64);
    for (uint64_t seed = 77; seed < 81; seed++) {
        round_trip(&v, 1, seed);
    }
}

/* ---- a dishonest client ------------------------------------------------------------------------
 */

/* Shard an encoding with the real prover (the sharding code after the public call's checks,
 * which would refuse it) and verify it: an encoding the variant does not allow must end in
 * DPM_ERR_VERIFY when the verifier shares are combined; a valid one (the control) must pass. */
static void shard_encoded(const dpm_prio3_t *v, const uint8_t *enc, uint64_t seed, int valid)
{
    vdaf_report_t rep;
    vdaf_result_t res;
    test_rng_t t;
    test_rng_seed(&t, seed);
    vdaf_report_alloc(v, &rep);
    uint8_t *rand = malloc(v->rand_bytes);
    uint64_t *work = calloc(v->shard_work_words, sizeof(uint64_t));
    for (uint32_t i = 0; i < v->rand_bytes; i++) {
        rand[i] = (uint8_t)test_rng_next(&t);
    }
    memset(rep.nonce, 3, sizeof(rep.nonce));
    uint8_t *meas = (uint8_t *)(work + 2u * DPM_VDAF_XOF_WORDS);
    memcpy(meas, enc, v->meas_len);
    const dpm_prio3_shard_out_t out = {
        rep.public_share, v->public_share_bytes,
        rep.leader,       v->leader_share_bytes,
        rep.helpers,      (size_t)(v->shares - 1u) * v->helper_share_bytes};
    dpm_prio3_shard_encoded(v, CTX, sizeof(CTX) - 1u, meas, rep.nonce, rand, &out, work);
    vdaf_result_init(v, &res);
    vdaf_verify(v, KEY, CTX, sizeof(CTX) - 1u, &rep, -1, -1, &res);
    if (valid ? res.step != VDAF_STEP_DONE
              : (res.step != VDAF_STEP_MESSAGE || res.status != DPM_ERR_VERIFY)) {
        fail_msg("kind %d: a%s encoding ended at step %d with %s", v->kind,
                 valid ? " valid" : "n invalid", res.step, dpm_strerror(res.status));
    }
    vdaf_result_free(&res);
    vdaf_report_free(&rep);
    free(rand);
    free(work);
}

static void test_dishonest_clients_are_rejected(void **state)
{
    (void)state;
    dpm_prio3_t v;
    uint8_t enc[1024];
    for (uint32_t shares = 2; shares <= 3; shares++) {
        assert_int_equal(dpm_prio3_count_init(&v, shares), DPM_OK);
        enc[0] = 2; /* a count of 2 */
        shard_encoded(&v, enc, 1, 0);
        assert_int_equal(dpm_prio3_sum_init(&v, shares, 255), DPM_OK);
        memset(enc, 1, 8);
        enc[3] = 2; /* a "bit" of 2: 255 + 8 in the bits' weights */
        shard_encoded(&v, enc, 2, 0);
        assert_int_equal(dpm_prio3_sumvec_init(&v, shares, 48, 255, 26), DPM_OK);
        memset(enc, 0, v.meas_len);
        enc[200] = 1;
        shard_encoded(&v, enc, 3, 1); /* control: the same path with a valid encoding */
        enc[200] = 2;
        shard_encoded(&v, enc, 3, 0);
        assert_int_equal(dpm_prio3_histogram_init(&v, shares, 32, 5), DPM_OK);
        memset(enc, 0, v.meas_len);
        enc[4] = enc[30] = 1; /* two buckets */
        shard_encoded(&v, enc, 4, 0);
        memset(enc, 0, v.meas_len); /* no bucket */
        shard_encoded(&v, enc, 5, 0);
        assert_int_equal(dpm_prio3_multihot_init(&v, shares, 12, 5, 4), DPM_OK);
        memset(enc, 0, v.meas_len);
        enc[1] = enc[2] = 1;
        enc[12] = 1; /* weight bits say 1, the vector holds 2 */
        shard_encoded(&v, enc, 6, 0);
        assert_int_equal(dpm_prio3_sumvec_multiproof_init(&v, shares, 2, 10, 255, 9), DPM_OK);
        memset(enc, 0, v.meas_len);
        enc[79] = 2;
        shard_encoded(&v, enc, 7, 0);
    }
    /* HigherDegree accepts 0, 1, 2 and rejects 3 (its encoding is the value itself) */
    assert_int_equal(dpm_prio3_higher_degree_init(&v, 2), DPM_OK);
    enc[0] = 2;
    shard_encoded(&v, enc, 8, 1);
    enc[0] = 3;
    shard_encoded(&v, enc, 8, 0);
}

/* ---- the XOF's rejection of candidates >= p -------------------------------------------------- */

/* A Field64 candidate is >= p once in 2^32: rare in tests, routine for a fleet. This seed
 * (found by a search: bytes 0..7 = 16,541,761 little-endian, the rest 0) makes candidate 458
 * of the helper's measurement share stream of SumVecMultiproof (codepoint 0xFFFFFFFF, context
 * "rejection") >= p. The leader's share must be the measurement minus the helper's share as
 * next_vec defines it (an independent loop here: skip it, take the next), and both aggregators
 * must agree on every joint randomness part across the skipped candidate. */
static void test_xof_rejection(void **state)
{
    (void)state;
    static const uint8_t ctx[] = "rejection";
    dpm_prio3_t v;
    assert_int_equal(dpm_prio3_sumvec_multiproof_init(&v, 2, 3, 100, 255, 30), DPM_OK);
    assert_int_equal(v.meas_len, 800);
    uint8_t seed[32] = {0x41, 0x68, 0xFC, 0x00};
    /* the reference expansion */
    dpm_xof_t x;
    const uint8_t agg1 = 1;
    dpm_xof_prio3(&x, seed, DPM_PRIO3_ID_PRIVATE, PRIO3_USAGE_MEAS_SHARE, ctx, sizeof(ctx) - 1u);
    dpm_xof_absorb(&x, &agg1, 1);
    static uint64_t helper[800];
    unsigned rejected = 0, first = 0;
    for (unsigned got = 0, k = 0; got < 800; k++) {
        uint8_t b[8];
        dpm_xof_next(&x, b, 8);
        uint64_t c = 0;
        for (int i = 7; i >= 0; i--) {
            c = (c << 8) | b[i];
        }
        if (c >= F64_P) {
            first = rejected++ == 0 ? k : first;
        } else {
            helper[got++] = c;
        }
    }
    assert_int_equal(rejected, 1);
    assert_int_equal(first, 458);
    /* shard the all-zero measurement with that seed as the helper's */
    vdaf_report_t rep;
    vdaf_report_alloc(&v, &rep);
    uint8_t rand[128];
    for (unsigned i = 0; i < sizeof(rand); i++) {
        rand[i] = i < 32 ? seed[i] : (uint8_t)(i * 7u);
    }
    assert_int_equal(v.rand_bytes, sizeof(rand));
    static uint64_t work[4096], m[100];
    assert_true(v.shard_work_words <= 4096);
    memset(rep.nonce, 5, sizeof(rep.nonce));
    const dpm_prio3_shard_out_t out = {rep.public_share, v.public_share_bytes,
                                       rep.leader,       v.leader_share_bytes,
                                       rep.helpers,      v.helper_share_bytes};
    assert_int_equal(dpm_prio3_shard(&v, ctx, sizeof(ctx) - 1u, m, 100, rep.nonce, rand,
                                     sizeof(rand), &out, work, 4096),
                     DPM_OK);
    for (unsigned e = 0; e < 800; e++) { /* leader = 0 - helper (mod p) */
        uint64_t want = helper[e] == 0 ? 0 : F64_P - helper[e], got = 0;
        for (int i = 7; i >= 0; i--) {
            got = (got << 8) | rep.leader[8u * e + (unsigned)i];
        }
        if (got != want) {
            fail_msg("leader measurement share element %u: %llx, expected %llx", e,
                     (unsigned long long)got, (unsigned long long)want);
        }
    }
    vdaf_result_t res;
    vdaf_result_init(&v, &res);
    vdaf_verify(&v, KEY, ctx, sizeof(ctx) - 1u, &rep, -1, -1, &res);
    assert_int_equal(res.step, VDAF_STEP_DONE);
    uint64_t sum[100];
    uint8_t *agg = calloc(2, v.out_share_bytes);
    for (uint32_t j = 0; j < 2; j++) {
        assert_int_equal(
            dpm_prio3_aggregate(&v, agg + (size_t)j * v.out_share_bytes, v.out_share_bytes,
                                res.out_shares + (size_t)j * v.out_share_bytes, v.out_share_bytes),
            DPM_OK);
    }
    assert_int_equal(dpm_prio3_unshard(&v, agg, 2u * v.out_share_bytes, 1, sum, 100), DPM_OK);
    for (unsigned i = 0; i < 100; i++) {
        assert_int_equal(sum[i], 0);
    }
    free(agg);
    vdaf_result_free(&res);
    vdaf_report_free(&rep);
}

/* ---- bad input ------------------------------------------------------------------------------- */

static void test_instances_refuse_bad_parameters(void **state)
{
    (void)state;
    dpm_prio3_t v;
    memset(&v, 0x5A, sizeof(v));
    const dpm_prio3_t before = v;
    assert_int_equal(dpm_prio3_count_init(NULL, 2), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_count_init(&v, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_count_init(&v, 256), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sum_init(&v, 2, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sum_init(&v, 2, F64_P), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, 0, 255, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, 10, 0, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, 10, 255, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, DPM_PRIO3_MAX_MEAS_LEN, 3, 100), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_histogram_init(&v, 2, 0, 1), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_histogram_init(&v, 2, 10, 0), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_multihot_init(&v, 2, 10, 0, 2), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_multihot_init(&v, 2, 10, 11, 2), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sumvec_multiproof_init(&v, 2, 0, 10, 255, 9), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sumvec_multiproof_init(&v, 2, 256, 10, 255, 9), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_sumvec_multiproof_init(&v, 2, 3, 10, F64_P, 9), DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_higher_degree_init(&v, 0), DPM_ERR_PARAM);
    assert_memory_equal(&v, &before, sizeof(v)); /* untouched by every refusal */
    /* limits that are fine: 255 shares, the largest encoded measurement */
    assert_int_equal(dpm_prio3_count_init(&v, 255), DPM_OK);
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, DPM_PRIO3_MAX_MEAS_LEN, 1, 1024), DPM_OK);
}

#define SENTINEL 0xA5

static int all_sentinel(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i] != SENTINEL) {
            return 0;
        }
    }
    return 1;
}

/* shard(v, measurement) into sentinel-filled outputs; the status, outputs checked unchanged
 * unless it is DPM_OK */
static dpm_status_t shard_sentinel(const dpm_prio3_t *v, const uint64_t *m, size_t count,
                                   size_t rand_len, size_t shrink_leader, size_t work_words)
{
    static uint8_t pub[512], lead[16384], help[512], rand[1024];
    static uint64_t work[8192];
    const uint8_t nonce[DPM_PRIO3_NONCE_BYTES] = {1};
    memset(pub, SENTINEL, sizeof(pub));
    memset(lead, SENTINEL, sizeof(lead));
    memset(help, SENTINEL, sizeof(help));
    const dpm_prio3_shard_out_t out = {pub,  v->public_share_bytes,
                                       lead, v->leader_share_bytes - shrink_leader,
                                       help, (size_t)(v->shares - 1u) * v->helper_share_bytes};
    dpm_status_t st = dpm_prio3_shard(v, CTX, sizeof(CTX) - 1u, m, count, nonce, rand, rand_len,
                                      &out, work, work_words);
    if (st != DPM_OK) {
        assert_true(all_sentinel(pub, sizeof(pub)) && all_sentinel(lead, sizeof(lead)) &&
                    all_sentinel(help, sizeof(help)));
    }
    return st;
}

static void test_shard_refuses_bad_input(void **state)
{
    (void)state;
    dpm_prio3_t v;
    uint64_t m[64] = {0};
    /* measurements that do not fit, variant by variant (DPM_ERR_PARAM, nothing written) */
    assert_int_equal(dpm_prio3_count_init(&v, 2), DPM_OK);
    m[0] = 2;
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    m[0] = UINT64_MAX;
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    m[0] = 1;
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words), DPM_OK);
    assert_int_equal(dpm_prio3_sum_init(&v, 2, 1337), DPM_OK);
    m[0] = 1338;
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    m[0] = 1337;
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words), DPM_OK);
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, 10, 255, 9), DPM_OK);
    memset(m, 0, sizeof(m));
    m[9] = 256;
    assert_int_equal(shard_sentinel(&v, m, 10, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    m[9] = 255;
    assert_int_equal(shard_sentinel(&v, m, 9, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    assert_int_equal(shard_sentinel(&v, m, 11, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    assert_int_equal(shard_sentinel(&v, m, 10, v.rand_bytes, 0, v.shard_work_words), DPM_OK);
    assert_int_equal(dpm_prio3_histogram_init(&v, 2, 16, 3), DPM_OK);
    m[0] = 16;
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    m[0] = 15;
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words), DPM_OK);
    assert_int_equal(dpm_prio3_multihot_init(&v, 2, 8, 2, 3), DPM_OK);
    memset(m, 0, sizeof(m));
    m[0] = m[4] = m[7] = 1; /* weight 3 > 2 */
    assert_int_equal(shard_sentinel(&v, m, 8, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    m[7] = 2; /* not a boolean */
    assert_int_equal(shard_sentinel(&v, m, 8, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    m[7] = 0;
    assert_int_equal(shard_sentinel(&v, m, 8, v.rand_bytes, 0, v.shard_work_words), DPM_OK);
    assert_int_equal(dpm_prio3_higher_degree_init(&v, 2), DPM_OK);
    m[0] = 3;
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words), DPM_ERR_PARAM);
    /* buffers and arguments */
    assert_int_equal(dpm_prio3_histogram_init(&v, 2, 16, 3), DPM_OK);
    m[0] = 3;
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes - 1u, 0, v.shard_work_words),
                     DPM_ERR_PARAM);
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes + 1u, 0, v.shard_work_words),
                     DPM_ERR_PARAM);
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 1, v.shard_work_words), DPM_ERR_BUFFER);
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words - 1u),
                     DPM_ERR_BUFFER);
    assert_int_equal(shard_sentinel(&v, m, 1, v.rand_bytes, 0, v.shard_work_words), DPM_OK);
    static uint8_t buf[2048];
    uint8_t rand[128] = {0}, nonce[16] = {0};
    static uint64_t work[2048];
    dpm_prio3_shard_out_t out = {buf, 64, buf + 64, v.leader_share_bytes, buf + 1500, 64};
    assert_int_equal(
        dpm_prio3_shard(NULL, NULL, 0, m, 1, nonce, rand, v.rand_bytes, &out, work, 2048),
        DPM_ERR_PARAM);
    assert_int_equal(
        dpm_prio3_shard(&v, NULL, 3, m, 1, nonce, rand, v.rand_bytes, &out, work, 2048),
        DPM_ERR_PARAM); /* a context length without the context */
    assert_int_equal(dpm_prio3_shard(&v, CTX, DPM_PRIO3_MAX_CTX_BYTES + 1u, m, 1, nonce, rand,
                                     v.rand_bytes, &out, work, 2048),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_shard(&v, NULL, 0, m, 1, NULL, rand, v.rand_bytes, &out, work, 2048),
                     DPM_ERR_PARAM);
    out.public_share = NULL; /* the public share is 64 bytes here */
    assert_int_equal(
        dpm_prio3_shard(&v, NULL, 0, m, 1, nonce, rand, v.rand_bytes, &out, work, 2048),
        DPM_ERR_PARAM);
    out.public_share = buf;
    out.helper_shares_len = 63;
    assert_int_equal(
        dpm_prio3_shard(&v, NULL, 0, m, 1, nonce, rand, v.rand_bytes, &out, work, 2048),
        DPM_ERR_BUFFER);
    out.helper_shares_len = 64;
    assert_int_equal(
        dpm_prio3_shard(&v, NULL, 0, m, 1, nonce, rand, v.rand_bytes, &out, work, 2048),
        DPM_OK); /* no context at all is a valid (empty) context */
    dpm_prio3_t uninit;
    memset(&uninit, 0, sizeof(uninit));
    assert_int_equal(dpm_prio3_shard(&uninit, NULL, 0, m, 1, nonce, rand, 0, &out, work, 2048),
                     DPM_ERR_PARAM);
}

static void test_aggregators_refuse_bad_messages(void **state)
{
    (void)state;
    dpm_prio3_t v;
    assert_int_equal(dpm_prio3_histogram_init(&v, 2, 16, 3), DPM_OK);
    vdaf_report_t rep;
    vdaf_report_alloc(&v, &rep);
    uint64_t m = 7;
    assert_int_equal(vdaf_report_shard(&v, CTX, sizeof(CTX) - 1u, &m, 1, 9, &rep), DPM_OK);
    uint8_t state_buf[512], vs[512], msg[32], os[512];
    uint64_t *work = calloc(v.verify_work_words, sizeof(uint64_t));
    memset(state_buf, SENTINEL, sizeof(state_buf));
    memset(vs, SENTINEL, sizeof(vs));
#define VI(agg, pub, pub_len, in, in_len, st_len, vs_len, ww)                                      \
    dpm_prio3_verify_init(&v, KEY, CTX, sizeof(CTX) - 1u, agg, rep.nonce, pub, pub_len, in,        \
                          in_len, state_buf, st_len, vs, vs_len, work, ww)
    const size_t L = v.leader_share_bytes, H = v.helper_share_bytes, P = v.public_share_bytes;
    assert_int_equal(VI(2, rep.public_share, P, rep.helpers, H, v.state_bytes,
                        v.verifier_share_bytes, v.verify_work_words),
                     DPM_ERR_PARAM); /* no aggregator 2 */
    assert_int_equal(VI(0, rep.public_share, P - 1u, rep.leader, L, v.state_bytes,
                        v.verifier_share_bytes, v.verify_work_words),
                     DPM_ERR_PROTOCOL);
    assert_int_equal(VI(0, rep.public_share, P, rep.leader, L - 1u, v.state_bytes,
                        v.verifier_share_bytes, v.verify_work_words),
                     DPM_ERR_PROTOCOL);
    assert_int_equal(VI(1, rep.public_share, P, rep.helpers, H + 1u, v.state_bytes,
                        v.verifier_share_bytes, v.verify_work_words),
                     DPM_ERR_PROTOCOL);
    assert_int_equal(VI(0, rep.public_share, P, rep.leader, L, v.state_bytes - 1u,
                        v.verifier_share_bytes, v.verify_work_words),
                     DPM_ERR_BUFFER);
    assert_int_equal(VI(0, rep.public_share, P, rep.leader, L, v.state_bytes,
                        v.verifier_share_bytes - 1u, v.verify_work_words),
                     DPM_ERR_BUFFER);
    assert_int_equal(VI(0, rep.public_share, P, rep.leader, L, v.state_bytes,
                        v.verifier_share_bytes, v.verify_work_words - 1u),
                     DPM_ERR_BUFFER);
    /* a leader share holding p (no field element): refused as malformed */
    uint8_t *bad = malloc(L);
    memcpy(bad, rep.leader, L);
    memset(bad + 16u * 5u, 0, 16);
    bad[16u * 5u] = 1;
    memset(bad + 16u * 5u + 8u, 0xFF, 8);
    bad[16u * 5u + 8u] = 0xE4; /* p = 2^128 - 28 2^64 + 1, little-endian */
    assert_int_equal(VI(0, rep.public_share, P, bad, L, v.state_bytes, v.verifier_share_bytes,
                        v.verify_work_words),
                     DPM_ERR_PROTOCOL);
    bad[16u * 5u] = 0; /* p - 1: a field element */
    assert_true(all_sentinel(state_buf, sizeof(state_buf)) && all_sentinel(vs, sizeof(vs)));
    assert_int_equal(VI(0, rep.public_share, P, bad, L, v.state_bytes, v.verifier_share_bytes,
                        v.verify_work_words),
                     DPM_OK);
    free(bad);
    /* the verifier message's step and verify_next */
    uint8_t shares2[1024];
    assert_int_equal(dpm_prio3_verifier_shares_to_message(&v, CTX, sizeof(CTX) - 1u, shares2,
                                                          2u * v.verifier_share_bytes - 1u, msg, 32,
                                                          work, v.verify_work_words),
                     DPM_ERR_PROTOCOL);
    memset(shares2, 0xFF, sizeof(shares2)); /* every value >= p */
    assert_int_equal(dpm_prio3_verifier_shares_to_message(&v, CTX, sizeof(CTX) - 1u, shares2,
                                                          2u * v.verifier_share_bytes, msg, 32,
                                                          work, v.verify_work_words),
                     DPM_ERR_PROTOCOL);
    assert_int_equal(dpm_prio3_verifier_shares_to_message(&v, CTX, sizeof(CTX) - 1u, shares2,
                                                          2u * v.verifier_share_bytes, msg, 31,
                                                          work, v.verify_work_words),
                     DPM_ERR_BUFFER);
    memset(os, SENTINEL, sizeof(os));
    assert_int_equal(dpm_prio3_verify_next(&v, state_buf, v.state_bytes - 1u, msg, 32, os, 512),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_verify_next(&v, state_buf, v.state_bytes, msg, 31, os, 512),
                     DPM_ERR_PROTOCOL);
    assert_int_equal(
        dpm_prio3_verify_next(&v, state_buf, v.state_bytes, msg, 32, os, v.out_share_bytes - 1u),
        DPM_ERR_BUFFER);
    assert_true(all_sentinel(os, sizeof(os)));
    /* aggregate and unshard: lengths, values >= p, 64-bit overflow */
    uint8_t agg[256], share[256];
    memset(agg, 0, sizeof(agg));
    memset(share, 0xFF, sizeof(share));
    assert_int_equal(dpm_prio3_aggregate(&v, agg, v.out_share_bytes, share, v.out_share_bytes),
                     DPM_ERR_PROTOCOL);
    assert_int_equal(dpm_prio3_aggregate(&v, agg, v.out_share_bytes - 1u, agg, v.out_share_bytes),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_prio3_aggregate(&v, agg, v.out_share_bytes, agg, v.out_share_bytes + 1u),
                     DPM_ERR_PROTOCOL);
    for (size_t i = 0; i < sizeof(agg); i++) {
        assert_int_equal(agg[i], 0); /* untouched by the refusals */
    }
    uint8_t two[512];
    uint64_t result[16];
    memset(two, 0, sizeof(two));
    two[8] = 1; /* bucket 0 of share 0 holds 2^64 */
    assert_int_equal(dpm_prio3_unshard(&v, two, 2u * v.out_share_bytes, 1, result, 16),
                     DPM_ERR_RANGE);
    assert_int_equal(dpm_prio3_unshard(&v, two, 2u * v.out_share_bytes, 1, result, 15),
                     DPM_ERR_BUFFER);
    assert_int_equal(dpm_prio3_unshard(&v, two, 2u * v.out_share_bytes - 1u, 1, result, 16),
                     DPM_ERR_PROTOCOL);
    two[8] = 0;
    two[0] = 5;
    two[v.out_share_bytes + 16u] = 7;
    assert_int_equal(dpm_prio3_unshard(&v, two, 2u * v.out_share_bytes, 1, result, 16), DPM_OK);
    assert_int_equal(result[0], 5);
    assert_int_equal(result[1], 7);
    free(work);
    vdaf_report_free(&rep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields_against_reference),
        cmocka_unit_test(test_central_noise),
        cmocka_unit_test(test_generators_have_the_drafts_order),
        cmocka_unit_test(test_sizes_equal_the_macros),
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_dishonest_clients_are_rejected),
        cmocka_unit_test(test_xof_rejection),
        cmocka_unit_test(test_instances_refuse_bad_parameters),
        cmocka_unit_test(test_shard_refuses_bad_input),
        cmocka_unit_test(test_aggregators_refuse_bad_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
