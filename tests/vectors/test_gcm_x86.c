/* SPDX-License-Identifier: Apache-2.0 */
/* AES-128-GCM as port/tls/hpke.c runs it: Mbed TLS's GCM everywhere, and on x86-64 CPUs with
 * AES-NI and PCLMULQDQ port/tls/gcm_x86.h. Both against the GCM specification's test cases 1 to
 * 4 (McGrew and Viega, "The Galois/Counter Mode of Operation", AES-128, 96-bit IV); then, where
 * gcm_x86.h runs, against Mbed TLS on every plaintext length from 0 to 600 bytes and on 7,504
 * and 65,536 bytes (the eight-block counter loop, the four-block GHASH and every tail), with the
 * associated data cut in pieces of every size, both ways; and what must fail: one bit of key,
 * nonce, associated data or ciphertext changes the tag. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/port_hpke.h" /* (and so, on Cortex-M, an image linked with Mbed TLS) */
#include "mbedtls/gcm.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "../../port/tls/gcm_x86.h"
#define HAVE_GCM_X86 1
#endif

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
    size_t n = strlen(s) / 2;
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++) {
        unsigned v = 0;
        assert_int_equal(sscanf(s + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
    return n;
}

#if defined(HAVE_GCM_X86)
/* fast: buf in place; the associated data fed in pieces of `piece` bytes (0: whole) */
static void fast(const uint8_t key[16], const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                 size_t piece, int encrypt, uint8_t *buf, size_t len, uint8_t tag[16])
{
    dpm_gcm_x86_t g;
    dpm_gcm_x86_init(&g, key);
    for (size_t done = 0; done < aad_len;) {
        size_t k = piece == 0 || aad_len - done < piece ? aad_len - done : piece;
        dpm_gcm_x86_aad(&g, aad + done, k);
        done += k;
    }
    dpm_gcm_x86_finish(&g, nonce, encrypt, aad_len, buf, len, tag);
}
#endif

static void mbed(const uint8_t key[16], const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
                 int encrypt, uint8_t *buf, size_t len, uint8_t tag[16])
{
    mbedtls_gcm_context g;
    mbedtls_gcm_init(&g);
    assert_int_equal(mbedtls_gcm_setkey(&g, MBEDTLS_CIPHER_ID_AES, key, 128), 0);
    assert_int_equal(
        mbedtls_gcm_starts(&g, encrypt ? MBEDTLS_GCM_ENCRYPT : MBEDTLS_GCM_DECRYPT, nonce, 12), 0);
    if (aad_len > 0) {
        assert_int_equal(mbedtls_gcm_update_ad(&g, aad, aad_len), 0);
    }
    size_t olen = 0;
    if (len > 0) {
        assert_int_equal(mbedtls_gcm_update(&g, buf, len, buf, len, &olen), 0);
    }
    assert_int_equal(mbedtls_gcm_finish(&g, NULL, 0, &olen, tag, 16), 0);
    mbedtls_gcm_free(&g);
}

static int setup(void **state)
{
    (void)state;
#if defined(HAVE_GCM_X86)
    if (!dpm_gcm_x86_available()) {
        print_message("# this CPU has no AES-NI or PCLMULQDQ: hpke.c uses Mbed TLS's GCM\n");
    }
#endif
    return 0;
}

/* The specification's test cases 1-4 (AES-128, 96-bit IV), through Mbed TLS and through
 * gcm_x86.h where it runs. */
static void test_spec_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *k, *iv, *p, *a, *c, *t;
    } tc[] = {
        {"00000000000000000000000000000000", "000000000000000000000000", "", "", "",
         "58e2fccefa7e3061367f1d57a4e7455a"},
        {"00000000000000000000000000000000", "000000000000000000000000",
         "00000000000000000000000000000000", "", "0388dace60b6a392f328c2b971b2fe78",
         "ab6e47d42cec13bdf53a67b21257bddf"},
        {"feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e"
         "2449a6b525b16aedf5aa0de657ba637b391aafd255",
         "",
         "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a"
         "5aac84aa051ba30b396a0aac973d58e091473f5985",
         "4d5c2af327cd64a62cf35abd2ba6fab4"},
        {"feffe9928665731c6d6a8f9467308308", "cafebabefacedbaddecaf888",
         "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e"
         "2449a6b525b16aedf5aa0de657ba637b39",
         "feedfacedeadbeeffeedfacedeadbeefabaddad2",
         "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a"
         "5aac84aa051ba30b396a0aac973d58e091",
         "5bc94fbc3221a5db94fae95ae7121a47"},
    };
    for (size_t i = 0; i < sizeof(tc) / sizeof(tc[0]); i++) {
        uint8_t k[16], iv[12], p[64], a[32], c[64], t[16], buf[64], tag[16];
        unhex(tc[i].k, k, sizeof(k));
        unhex(tc[i].iv, iv, sizeof(iv));
        size_t pl = unhex(tc[i].p, p, sizeof(p)), al = unhex(tc[i].a, a, sizeof(a));
        unhex(tc[i].c, c, sizeof(c));
        unhex(tc[i].t, t, sizeof(t));
        memcpy(buf, p, pl);
        mbed(k, iv, a, al, 1, buf, pl, tag);
        assert_memory_equal(buf, c, pl);
        assert_memory_equal(tag, t, 16);
#if defined(HAVE_GCM_X86)
        if (dpm_gcm_x86_available()) {
            memcpy(buf, p, pl);
            fast(k, iv, a, al, 0, 1, buf, pl, tag);
            assert_memory_equal(buf, c, pl);
            assert_memory_equal(tag, t, 16);
            fast(k, iv, a, al, 7, 0, buf, pl, tag); /* and back, the associated data in pieces */
            assert_memory_equal(buf, p, pl);
            assert_memory_equal(tag, t, 16);
        }
#endif
    }
}

#if defined(HAVE_GCM_X86)
static uint64_t next(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 17;
}

/* Against Mbed TLS: lengths 0..600, 7,504 and 65,536, associated data 0..70 bytes in pieces. */
static void test_against_mbedtls(void **state)
{
    (void)state;
    if (!dpm_gcm_x86_available()) {
        skip(); /* an x86-64 CPU without them: hpke.c runs Mbed TLS's GCM, tested above */
    }
    enum { BIG = 65536 };
    uint8_t *a = malloc(BIG), *b = malloc(BIG), aad[80];
    assert_non_null(a);
    assert_non_null(b);
    uint64_t s = 99;
    for (size_t len = 0; len <= 600 + 2; len++) {
        size_t n = len <= 600 ? len : (len == 601 ? 7504 : BIG);
        uint8_t key[16], nonce[12], t1[16], t2[16];
        for (size_t i = 0; i < 16; i++) {
            key[i] = (uint8_t)next(&s);
        }
        for (size_t i = 0; i < 12; i++) {
            nonce[i] = (uint8_t)next(&s);
        }
        size_t al = len % 71;
        for (size_t i = 0; i < al; i++) {
            aad[i] = (uint8_t)next(&s);
        }
        for (size_t i = 0; i < n; i++) {
            a[i] = b[i] = (uint8_t)next(&s);
        }
        fast(key, nonce, aad, al, 1 + len % 19, 1, a, n, t1);
        mbed(key, nonce, aad, al, 1, b, n, t2);
        assert_memory_equal(a, b, n);
        assert_memory_equal(t1, t2, 16);
        fast(key, nonce, aad, al, 0, 0, a, n, t1); /* decrypt: plaintext and the same tag */
        mbed(key, nonce, aad, al, 0, b, n, t2);
        assert_memory_equal(a, b, n);
        assert_memory_equal(t1, t2, 16);
    }
    free(a);
    free(b);
}

/* One bit of key, nonce, associated data or ciphertext: another tag. */
static void test_negative(void **state)
{
    (void)state;
    if (!dpm_gcm_x86_available()) {
        skip(); /* as above */
    }
    uint8_t key[16] = {1}, nonce[12] = {2}, aad[20] = {3}, buf[300], t0[16], t[16];
    memset(buf, 5, sizeof(buf));
    fast(key, nonce, aad, sizeof(aad), 0, 0, buf, sizeof(buf), t0);
    uint8_t *what[4] = {key, nonce, aad, buf};
    const size_t at[4] = {9, 11, 19, 257};
    for (int w = 0; w < 4; w++) {
        memset(buf, 5, sizeof(buf));
        what[w][at[w]] ^= 0x20u;
        fast(key, nonce, aad, sizeof(aad), 0, 0, buf, sizeof(buf), t);
        assert_memory_not_equal(t, t0, 16);
        what[w][at[w]] ^= 0x20u;
    }
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_vectors),
#if defined(HAVE_GCM_X86) /* (elsewhere Mbed TLS's GCM alone: nothing to compare) */
        cmocka_unit_test(test_against_mbedtls),
        cmocka_unit_test(test_negative),
#endif
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
