/* SPDX-License-Identifier: Apache-2.0 */
/* X25519 (RFC 7748): port/tls/x25519_64.h, the 64-bit-limb code port/tls/hpke.c uses where the
 * compiler has unsigned __int128, and Mbed TLS's Everest X25519, which it uses elsewhere (and
 * with DPM_X25519_PORTABLE): both against RFC 7748 §5.2's two vectors, its iterated vector
 * (1 and 1,000 iterations; the 1,000,000 one takes minutes), RFC 7748 §6.1's Diffie-Hellman
 * example, and against each other on 2,000 pseudo-random scalars and points (where both exist);
 * then the decoding rules of RFC 7748 §5 (bit 255 of a point ignored, a u-coordinate of p or more
 * taken mod p) and what must fail: a wrong vector is told apart (one bit of the scalar or the point
 * changes the result). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/port_hpke.h" /* (and so, on Cortex-M, an image linked with Mbed TLS) */
#include "mbedtls/ecdh.h"  /* with the Everest variant: everest/x25519.h */

#if defined(__SIZEOF_INT128__)
#include "../../port/tls/x25519_64.h"
#define HAVE_X25519_64 1
#endif

typedef void (*x25519_fn)(uint8_t out[32], const uint8_t k[32], const uint8_t u[32]);

static void unhex(const char *s, uint8_t out[32])
{
    for (size_t i = 0; i < 32; i++) {
        unsigned v = 0;
        if (sscanf(s + 2 * i, "%2x", &v) != 1) {
            fail_msg("bad hex in a vector");
        }
        out[i] = (uint8_t)v;
    }
}

/* Everest through Mbed TLS's context API, as port/tls/hpke.c calls it (without its refusal of
 * an all-zero result, which these inputs never give). */
static void everest(uint8_t out[32], const uint8_t k[32], const uint8_t u[32])
{
    mbedtls_x25519_context x;
    mbedtls_x25519_init(&x);
    memcpy(x.our_secret, k, 32);
    memcpy(x.peer_point, u, 32);
    size_t olen = 0;
    assert_int_equal(mbedtls_x25519_calc_secret(&x, &olen, out, 32, NULL, NULL), 0);
    assert_int_equal(olen, 32);
    mbedtls_x25519_free(&x);
}

#if defined(HAVE_X25519_64)
static void fast(uint8_t out[32], const uint8_t k[32], const uint8_t u[32])
{
    dpm_x25519_64(out, k, u);
}
#endif

static x25519_fn impls[2];
static const char *impl_names[2];
static size_t nimpls;

static int setup(void **state)
{
    (void)state;
    impls[nimpls] = everest;
    impl_names[nimpls++] = "everest";
#if defined(HAVE_X25519_64)
    impls[nimpls] = fast;
    impl_names[nimpls++] = "x25519_64";
#endif
    return 0;
}

static void expect(x25519_fn f, const char *k, const char *u, const char *want)
{
    uint8_t kb[32], ub[32], wb[32], out[32];
    unhex(k, kb);
    unhex(u, ub);
    unhex(want, wb);
    f(out, kb, ub);
    assert_memory_equal(out, wb, 32);
}

/* RFC 7748 §5.2: the two test vectors (the second's point has bit 255 set: it must be ignored) */
static void test_rfc7748_vectors(void **state)
{
    (void)state;
    for (size_t i = 0; i < nimpls; i++) {
        print_message("# %s\n", impl_names[i]);
        expect(impls[i], "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
               "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
               "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552");
        expect(impls[i], "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
               "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
               "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957");
    }
}

/* RFC 7748 §5.2: k = u = 9; k, u = X25519(k, u), k; after 1 and after 1,000 iterations (the
 * 1,000 for Everest too where there is unsigned __int128, a 64-bit machine; on the others, the
 * emulated 32-bit targets, Everest's 1,000 would take minutes: 1 there, and RFC 9180's vectors
 * in test_hpke_vectors). */
static void test_rfc7748_iterated(void **state)
{
    (void)state;
    uint8_t after1[32], after1000[32];
    unhex("422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079", after1);
    unhex("684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51", after1000);
#if defined(__SIZEOF_INT128__)
    const int iterations = 1000;
#else
    const int iterations = 1;
#endif
    for (size_t i = 0; i < nimpls; i++) {
        uint8_t k[32] = {9}, u[32] = {9}, r[32];
        for (int it = 1; it <= iterations; it++) {
            impls[i](r, k, u);
            memcpy(u, k, 32);
            memcpy(k, r, 32);
            if (it == 1) {
                assert_memory_equal(k, after1, 32);
            }
        }
        if (iterations == 1000) {
            assert_memory_equal(k, after1000, 32);
        }
    }
}

/* RFC 7748 §6.1: both public keys and the shared secret K, both ways. */
static void test_rfc7748_dh(void **state)
{
    (void)state;
    static const char *a = "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a";
    static const char *b = "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb";
    static const char *pa = "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a";
    static const char *pb = "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f";
    static const char *k = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";
    static const char *nine = "0900000000000000000000000000000000000000000000000000000000000000";
    for (size_t i = 0; i < nimpls; i++) {
        expect(impls[i], a, nine, pa);
        expect(impls[i], b, nine, pb);
        expect(impls[i], a, pb, k);
        expect(impls[i], b, pa, k);
    }
}

#if defined(HAVE_X25519_64)
static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 11;
}

/* The two implementations agree on pseudo-random scalars and points (bit 255 clear, so that
 * Everest and the RFC agree on the input whatever Everest does with that bit), including points
 * with every limb at its largest (all 0xff but the top bit: a value above p). */
static void test_agree(void **state)
{
    (void)state;
    uint64_t s = 12345;
    for (int n = 0; n < 2000; n++) {
        uint8_t k[32], u[32], r0[32], r1[32];
        for (size_t i = 0; i < 32; i++) {
            k[i] = (uint8_t)next(&s);
            u[i] = n % 100 == 7 ? 0xffu : (uint8_t)next(&s);
        }
        u[31] &= 0x7fu;
        impls[0](r0, k, u);
        impls[1](r1, k, u);
        assert_memory_equal(r0, r1, 32);
    }
}
#endif

/* RFC 7748 §5: the top bit of a point is masked, a u-coordinate in [p, 2^255) is taken mod p
 * (p + 9 acts as 9), and a single bit of the scalar (above the clamped ones) or of the point
 * changes the result: a test that compared nothing would fail here. */
static void test_decoding_and_negative(void **state)
{
    (void)state;
    for (size_t i = 0; i < nimpls; i++) {
        uint8_t k[32], u[32], r[32], r2[32];
        unhex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4", k);
        unhex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c", u);
        impls[i](r, k, u);
        u[31] |= 0x80u;
        impls[i](r2, k, u);
        assert_memory_equal(r, r2, 32); /* bit 255 ignored */
        u[31] &= 0x7fu;
        u[0] ^= 0x04u;
        impls[i](r2, k, u);
        assert_memory_not_equal(r, r2, 32); /* one bit of the point */
        u[0] ^= 0x04u;
        k[17] ^= 0x10u;
        impls[i](r2, k, u);
        assert_memory_not_equal(r, r2, 32); /* one bit of the scalar */
        k[17] ^= 0x10u;
        k[0] ^= 0x07u; /* the clamped bits: no effect */
        impls[i](r2, k, u);
        assert_memory_equal(r, r2, 32);

        uint8_t nine[32] = {9}, p9[32], a[32], b[32]; /* p + 9 = 2^255 - 10 */
        memset(p9, 0xff, 32);
        p9[0] = 0xf6u;
        p9[31] = 0x7fu;
        impls[i](a, k, nine);
        impls[i](b, k, p9);
        assert_memory_equal(a, b, 32);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc7748_vectors),
        cmocka_unit_test(test_rfc7748_iterated),
        cmocka_unit_test(test_rfc7748_dh),
#if defined(HAVE_X25519_64) /* (without it, Everest alone: nothing to compare) */
        cmocka_unit_test(test_agree),
#endif
        cmocka_unit_test(test_decoding_and_negative),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
