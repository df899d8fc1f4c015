/* SPDX-License-Identifier: Apache-2.0 */
/* Memoized randomness (dpm/expert/memo.h): SipHash-2-4 against the 64 reference vectors of its authors
 * (key 00..0f, message 00..len-1; the same values as OpenSSL 3's independent SIPHASH MAC,
 * `openssl mac -macopt hexkey:000102030405060708090a0b0c0d0e0f -macopt size:8 SIPHASH`, bytes
 * read little-endian), the keyed-ness a PRF needs (another key, another output; a flipped input
 * bit changes about half the output bits), and the device secret in storage: created once from
 * the CSPRNG on an erased region, loaded unchanged afterwards, replaced (and said so) when
 * damaged, untouched on every error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/dpm.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/noise.h"
#include "fake_storage.h"
#include "test_rng.h"

static const uint64_t siphash_vectors[64] = {
    UINT64_C(0x726fdb47dd0e0e31),
    UINT64_C(0x74f839c593dc67fd),
    UINT64_C(0x0d6c8009d9a94f5a),
    UINT64_C(0x85676696d7fb7e2d),
    UINT64_C(0xcf2794e0277187b7),
    UINT64_C(0x18765564cd99a68d),
    UINT64_C(0xcbc9466e58fee3ce),
    UINT64_C(0xab0200f58b01d137),
    UINT64_C(0x93f5f5799a932462),
    UINT64_C(0x9e0082df0ba9e4b0),
    UINT64_C(0x7a5dbbc594ddb9f3),
    UINT64_C(0xf4b32f46226bada7),
    UINT64_C(0x751e8fbc860ee5fb),
    UINT64_C(0x14ea5627c0843d90),
    UINT64_C(0xf723ca908e7af2ee),
    UINT64_C(0xa129ca6149be45e5),
    UINT64_C(0x3f2acc7f57c29bdb),
    UINT64_C(0x699ae9f52cbe4794),
    UINT64_C(0x4bc1b3f0968dd39c),
    UINT64_C(0xbb6dc91da77961bd),
    UINT64_C(0xbed65cf21aa2ee98),
    UINT64_C(0xd0f2cbb02e3b67c7),
    UINT64_C(0x93536795e3a33e88),
    UINT64_C(0xa80c038ccd5ccec8),
    UINT64_C(0xb8ad50c6f649af94),
    UINT64_C(0xbce192de8a85b8ea),
    UINT64_C(0x17d835b85bbb15f3),
    UINT64_C(0x2f2e6163076bcfad),
    UINT64_C(0xde4daaaca71dc9a5),
    UINT64_C(0xa6a2506687956571),
    UINT64_C(0xad87a3535c49ef28),
    UINT64_C(0x32d892fad841c342),
    UINT64_C(0x7127512f72f27cce),
    UINT64_C(0xa7f32346f95978e3),
    UINT64_C(0x12e0b01abb051238),
    UINT64_C(0x15e034d40fa197ae),
    UINT64_C(0x314dffbe0815a3b4),
    UINT64_C(0x027990f029623981),
    UINT64_C(0xcadcd4e59ef40c4d),
    UINT64_C(0x9abfd8766a33735c),
    UINT64_C(0x0e3ea96b5304a7d0),
    UINT64_C(0xad0c42d6fc585992),
    UINT64_C(0x187306c89bc215a9),
    UINT64_C(0xd4a60abcf3792b95),
    UINT64_C(0xf935451de4f21df2),
    UINT64_C(0xa9538f0419755787),
    UINT64_C(0xdb9acddff56ca510),
    UINT64_C(0xd06c98cd5c0975eb),
    UINT64_C(0xe612a3cb9ecba951),
    UINT64_C(0xc766e62cfcadaf96),
    UINT64_C(0xee64435a9752fe72),
    UINT64_C(0xa192d576b245165a),
    UINT64_C(0x0a8787bf8ecb74b2),
    UINT64_C(0x81b3e73d20b49b6f),
    UINT64_C(0x7fa8220ba3b2ecea),
    UINT64_C(0x245731c13ca42499),
    UINT64_C(0xb78dbfaf3a8d83bd),
    UINT64_C(0xea1ad565322a1a0b),
    UINT64_C(0x60e61c23a3795013),
    UINT64_C(0x6606d7e446282b93),
    UINT64_C(0x6ca4ecb15c5f91e1),
    UINT64_C(0x9f626da15c9625f3),
    UINT64_C(0xe51b38608ef25f57),
    UINT64_C(0x958a324ceb064572),
};

static void test_siphash_reference_vectors(void **state)
{
    (void)state;
    uint8_t key[16], msg[64];
    for (int i = 0; i < 16; i++) {
        key[i] = (uint8_t)i;
    }
    for (int i = 0; i < 64; i++) {
        msg[i] = (uint8_t)i;
    }
    int wrong = 0;
    for (size_t len = 0; len < 64; len++) {
        wrong += dpm_siphash24(key, msg, len) != siphash_vectors[len];
    }
    assert_int_equal(wrong, 0);
    /* the paper's worked example (Appendix A): 15 bytes -> a129ca6149be45e5 */
    assert_true(dpm_siphash24(key, msg, 15) == UINT64_C(0xa129ca6149be45e5));
    /* negative control: the checker sees a wrong key */
    key[0] ^= 1;
    assert_true(dpm_siphash24(key, msg, 15) != siphash_vectors[15]);
}

static int popcount64(uint64_t x)
{
    int n = 0;
    for (; x != 0; x &= x - 1) {
        n++;
    }
    return n;
}

/* A PRF, not a hash: the output depends on the key, and each input bit affects about half of
 * the output bits (avalanche). 24-byte inputs, the size fedauc_rr uses. */
static void test_keyed_and_avalanche(void **state)
{
    (void)state;
    test_rng_t t;
    test_rng_seed(&t, 99);
    uint64_t total = 0, n = 0;
    int same_under_other_key = 0;
    for (int trial = 0; trial < 200; trial++) {
        uint8_t key[16], key2[16], msg[24];
        for (int i = 0; i < 16; i++) {
            key[i] = (uint8_t)test_rng_next(&t);
            key2[i] = key[i];
        }
        key2[trial % 16] ^= (uint8_t)(1u << (trial % 8));
        for (int i = 0; i < 24; i++) {
            msg[i] = (uint8_t)test_rng_next(&t);
        }
        uint64_t h = dpm_siphash24(key, msg, sizeof(msg));
        same_under_other_key += h == dpm_siphash24(key2, msg, sizeof(msg));
        for (int bit = 0; bit < 192; bit++) {
            msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            total += (uint64_t)popcount64(h ^ dpm_siphash24(key, msg, sizeof(msg)));
            n++;
            msg[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
    }
    double mean = (double)total / (double)n;
    print_message("# avalanche: %.3f of 64 output bits change per flipped input bit (%llu pairs)\n",
                  mean, (unsigned long long)n);
    assert_int_equal(same_under_other_key, 0);
    /* Binomial(64, 1/2) has sd 4; over 38,400 pairs the mean is within 32 +- 0.2 (6 sd). */
    assert_true(mean > 31.8 && mean < 32.2);
}

#define REGION 256u
#define OFF 64u

typedef struct {
    uint8_t mem[REGION];
    fake_storage_t fs;
    dpm_storage_t st;
    test_rng_t t;
    dpm_rng_t rng;
    dpm_rand_t r;
} memo_fix_t;

static void fix_init(memo_fix_t *f, uint64_t seed)
{
    memset(f, 0, sizeof(*f));
    fake_storage_init(&f->fs, f->mem, REGION, 1);
    f->st = fake_storage_port(&f->fs);
    assert_int_equal(test_rand_init(&f->r, &f->t, &f->rng, seed), DPM_OK);
}

static void test_secret_created_then_loaded(void **state)
{
    (void)state;
    static memo_fix_t f;
    fix_init(&f, 5);
    dpm_memo_t m1, m2;
    assert_int_equal(dpm_memo_open(&m1, &f.st, OFF, 32, &f.r), DPM_OK);
    assert_int_equal(m1.origin, DPM_MEMO_CREATED);
    assert_int_equal(m1.opened, DPM_MEMO_OPENED);
    /* the key is the next 16 bytes of the random source */
    test_rng_t ref;
    test_rng_seed(&ref, 5);
    dpm_rng_t rport = test_rng_port(&ref);
    dpm_rand_t rr;
    assert_int_equal(dpm_rand_init(&rr, &rport), DPM_OK);
    uint8_t want[16];
    for (int half = 0; half < 2; half++) {
        uint64_t w = 0;
        assert_int_equal(dpm_rand_bits(&rr, 64, &w), DPM_OK);
        for (int i = 0; i < 8; i++) {
            want[8 * half + i] = (uint8_t)(w >> (8 * i));
        }
    }
    assert_memory_equal(m1.key, want, 16);
    /* stored: magic, version, key, CRC; the bytes around the region untouched */
    assert_memory_equal(f.mem + OFF, "DPMS\x01\0\0\0", 8);
    assert_memory_equal(f.mem + OFF + 8, want, 16);
    assert_int_equal(f.mem[OFF - 1], 0xFF);
    assert_int_equal(f.mem[OFF + 32], 0xFF);
    /* a reboot loads the same secret and draws nothing */
    uint64_t used = dpm_rand_bits_used(&f.r);
    uint64_t writes = f.fs.writes + f.fs.erases;
    assert_int_equal(dpm_memo_open(&m2, &f.st, OFF, 32, &f.r), DPM_OK);
    assert_int_equal(m2.origin, DPM_MEMO_LOADED);
    assert_memory_equal(m2.key, m1.key, 16);
    assert_int_equal(dpm_rand_bits_used(&f.r), used);
    assert_int_equal(f.fs.writes + f.fs.erases, writes);
    uint64_t a = 0, b = 0;
    const uint8_t msg[3] = {1, 2, 3};
    assert_int_equal(dpm_memo_prf(&m1, msg, 3, &a), DPM_OK);
    assert_int_equal(dpm_memo_prf(&m2, msg, 3, &b), DPM_OK);
    assert_true(a == b && a == dpm_siphash24(m1.key, msg, 3));
}

static void test_damaged_secret_is_replaced(void **state)
{
    (void)state;
    static memo_fix_t f;
    fix_init(&f, 6);
    dpm_memo_t m1, m2;
    assert_int_equal(dpm_memo_open(&m1, &f.st, OFF, 32, &f.r), DPM_OK);
    for (uint32_t at = 0; at < DPM_MEMO_RECORD_BYTES; at++) {
        memcpy(&f.mem[OFF], "DPMS", 4);
        f.mem[OFF + at] ^= 0x10; /* one damaged byte anywhere: the CRC (or magic) says so */
        assert_int_equal(dpm_memo_open(&m2, &f.st, OFF, 32, &f.r), DPM_OK);
        assert_int_equal(m2.origin, DPM_MEMO_REPLACED);
        assert_memory_not_equal(m2.key, m1.key, 16);
        m1 = m2;
        assert_int_equal(dpm_memo_open(&m2, &f.st, OFF, 32, &f.r), DPM_OK);
        assert_int_equal(m2.origin, DPM_MEMO_LOADED);
        assert_memory_equal(m2.key, m1.key, 16);
    }
}

static void test_errors_leave_everything_untouched(void **state)
{
    (void)state;
    static memo_fix_t f;
    fix_init(&f, 7);
    dpm_memo_t m, keep;
    memset(&m, 0x3C, sizeof(m));
    keep = m;
    dpm_rand_t unbound;
    memset(&unbound, 0, sizeof(unbound));
    assert_int_equal(dpm_memo_open(NULL, &f.st, OFF, 32, &f.r), DPM_ERR_PARAM);
    assert_int_equal(dpm_memo_open(&m, NULL, OFF, 32, &f.r), DPM_ERR_PARAM);
    assert_int_equal(dpm_memo_open(&m, &f.st, OFF, 32, NULL), DPM_ERR_PARAM);
    assert_int_equal(dpm_memo_open(&m, &f.st, OFF, 32, &unbound), DPM_ERR_PARAM);
    assert_int_equal(dpm_memo_open(&m, &f.st, OFF, DPM_MEMO_MIN_REGION - 1, &f.r), DPM_ERR_PARAM);
    assert_int_equal(dpm_memo_open(&m, &f.st, REGION - 16, 32, &f.r), DPM_ERR_PARAM);
    assert_int_equal(dpm_memo_open(&m, &f.st, UINT32_MAX - 8, 32, &f.r), DPM_ERR_PARAM);
    /* storage failures: a failing read, a failing write (nothing claimed) */
    f.fs.fail_reads = 1;
    assert_int_equal(dpm_memo_open(&m, &f.st, OFF, 32, &f.r), DPM_ERR_STORAGE);
    f.fs.fail_reads = 0;
    f.fs.fail_writes = 1;
    assert_int_equal(dpm_memo_open(&m, &f.st, OFF, 32, &f.r), DPM_ERR_STORAGE);
    f.fs.fail_writes = 0;
    assert_memory_equal(&m, &keep, sizeof(m));
    /* a failing random source: nothing written either */
    static memo_fix_t g;
    fix_init(&g, 8);
    failing_rng_t fr;
    dpm_rng_t frng;
    dpm_rand_t fbad;
    assert_int_equal(failing_rand_init(&fbad, &fr, &frng, 1, 0), DPM_OK);
    uint64_t ops = g.fs.writes + g.fs.erases;
    assert_int_equal(dpm_memo_open(&m, &g.st, OFF, 32, &fbad), DPM_ERR_RNG);
    assert_int_equal(g.fs.writes + g.fs.erases, ops);
    assert_memory_equal(&m, &keep, sizeof(m));
    /* prf on an unopened memo */
    uint64_t out = 0;
    assert_int_equal(dpm_memo_prf(&m, (const uint8_t *)"x", 1, &out), DPM_ERR_PARAM);
    assert_int_equal(dpm_memo_prf(NULL, (const uint8_t *)"x", 1, &out), DPM_ERR_PARAM);
}

/* A torn creation (power lost while writing the record) is replaced at the next open, and the
 * new secret then stays. */
static void test_torn_creation_recovers(void **state)
{
    (void)state;
    for (uint64_t op = 1; op <= 2; op++) { /* 1 = the erase, 2 = the write */
        static memo_fix_t f;
        fix_init(&f, 9);
        fake_storage_arm(&f.fs, op, FAKE_TORN, FAKE_TORN_HALF);
        dpm_memo_t m, m2;
        assert_int_equal(dpm_memo_open(&m, &f.st, OFF, 32, &f.r), DPM_ERR_STORAGE);
        fake_storage_reboot(&f.fs);
        assert_int_equal(dpm_memo_open(&m, &f.st, OFF, 32, &f.r), DPM_OK);
        assert_true(m.origin == DPM_MEMO_REPLACED || m.origin == DPM_MEMO_CREATED);
        assert_int_equal(dpm_memo_open(&m2, &f.st, OFF, 32, &f.r), DPM_OK);
        assert_int_equal(m2.origin, DPM_MEMO_LOADED);
        assert_memory_equal(m2.key, m.key, 16);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_siphash_reference_vectors),
        cmocka_unit_test(test_keyed_and_avalanche),
        cmocka_unit_test(test_secret_created_then_loaded),
        cmocka_unit_test(test_damaged_secret_is_replaced),
        cmocka_unit_test(test_errors_leave_everything_untouched),
        cmocka_unit_test(test_torn_creation_recovers),
    };
    return cmocka_run_group_tests_name("memo", tests, NULL, NULL);
}
