/* SPDX-License-Identifier: Apache-2.0 */
/* HPKE against RFC 9180 Appendix A.1.1 and A.2.1 (DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
 * AES-128-GCM and ChaCha20Poly1305, Base), each suite's file in its own group, step by step
 * and byte for byte: DeriveKeyPair of the ephemeral and recipient keys,
 * Encap and Decap (enc, shared_secret), the key schedule (key_schedule_context, key,
 * base_nonce, exporter_secret), every listed encryption (sequence numbers 0, 1, 2, 4, 255, 256:
 * ct from Seal, pt back from Open), every export, and the device's seal hooks fed ikmE by its
 * random source (enc and the sequence-0 ct), the plain one and the pool's (encapsulated ahead).
 * Then what must fail: every single-bit change of a ciphertext, tag, associated data, enc or info
 * fails to open and releases no plaintext; a small-order key is refused on both sides; a failing
 * random source seals nothing.
 *
 *   test_hpke_vectors    run from the repository root, or set HPKE_VECTORS to the directory */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dpm/port_hpke.h"
#include "dpm/expert/hpke.h"

#define MAX_ITEMS 64
#define MAX_HEX 256

typedef struct {
    char key[40];
    uint8_t val[MAX_HEX];
    size_t len;
    char text[64]; /* the value as written (decimal fields) */
} item_t;

static item_t items[MAX_ITEMS];
static int nitems;
static uint16_t suite_aead; /* the AEAD of the file loaded: 1 or 3 */

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static void append_hex(item_t *it, const char *s)
{
    for (; *s != '\0' && *s != '\n'; s += 2) {
        if (hexval(s[0]) < 0 || hexval(s[1]) < 0 || it->len >= MAX_HEX) {
            return;
        }
        it->val[it->len++] = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
    }
}

/* "name: value" starts an item, a line of hex continues the last one, the rest is structure. */
static void load(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s",
             getenv("HPKE_VECTORS") ? getenv("HPKE_VECTORS") : "tests/vectors/hpke", name);
    nitems = 0;
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s (run from the repository root)\n", path);
        exit(1);
    }
    char line[512];
    while (fgets(line, sizeof(line), f) != NULL) {
        char *colon = strchr(line, ':');
        if (line[0] == '#' || line[0] == '~' || line[0] == '\n') {
            continue;
        }
        if (colon != NULL && nitems < MAX_ITEMS) {
            item_t *it = &items[nitems++];
            memset(it, 0, sizeof(*it));
            size_t k = (size_t)(colon - line);
            memcpy(it->key, line, k < sizeof(it->key) - 1 ? k : sizeof(it->key) - 1);
            const char *v = colon + 1;
            while (*v == ' ') {
                v++;
            }
            snprintf(it->text, sizeof(it->text), "%s", v);
            it->text[strcspn(it->text, "\n")] = '\0';
            append_hex(it, v);
        } else if (nitems > 0) {
            append_hex(&items[nitems - 1], line);
        }
    }
    fclose(f);
}

static int setup_aes(void **state)
{
    (void)state;
    load("rfc9180_x25519_sha256_aes128gcm_base.txt");
    suite_aead = DPM_HPKE_AEAD_AES_128_GCM;
    return 0;
}

static int setup_chacha(void **state)
{
    (void)state;
    load("rfc9180_x25519_sha256_chacha20poly1305_base.txt");
    suite_aead = DPM_HPKE_AEAD_CHACHA20_POLY1305;
    return 0;
}

/* The n-th (0-based) item called key. */
static const item_t *get(const char *key, int n)
{
    for (int i = 0; i < nitems; i++) {
        if (strcmp(items[i].key, key) == 0 && n-- == 0) {
            return &items[i];
        }
    }
    return NULL;
}

static const item_t *need(const char *key, size_t len)
{
    const item_t *it = get(key, 0);
    if (it == NULL || (len != 0 && it->len != len)) {
        fail_msg("vector field %s missing or not %zu bytes", key, len);
    }
    return it;
}

static int count(const char *key)
{
    int n = 0;
    while (get(key, n) != NULL) {
        n++;
    }
    return n;
}

static dpm_hpke_keypair_t recipient(void)
{
    dpm_hpke_keypair_t kp;
    memcpy(kp.sk, need("skRm", 32)->val, 32);
    memcpy(kp.pk, need("pkRm", 32)->val, 32);
    return kp;
}

static void test_file_is_the_suite(void **state)
{
    (void)state;
    assert_string_equal(need("mode", 0)->text, "0");
    assert_string_equal(need("kem_id", 0)->text, "32");
    assert_string_equal(need("kdf_id", 0)->text, "1");
    assert_string_equal(need("aead_id", 0)->text,
                        suite_aead == DPM_HPKE_AEAD_AES_128_GCM ? "1" : "3");
    /* every case of the section was parsed: six encryptions, three exports */
    assert_int_equal(count("sequence number"), 6);
    assert_int_equal(count("ct"), 6);
    assert_int_equal(count("exported_value"), 3);
}

static void test_derive_keypair(void **state)
{
    (void)state;
    static const char *which[2][3] = {{"ikmE", "skEm", "pkEm"}, {"ikmR", "skRm", "pkRm"}};
    for (int i = 0; i < 2; i++) {
        const item_t *ikm = need(which[i][0], 32);
        dpm_hpke_keypair_t kp;
        assert_int_equal(dpm_hpke_derive_keypair(ikm->val, ikm->len, &kp), DPM_OK);
        assert_memory_equal(kp.sk, need(which[i][1], 32)->val, 32);
        assert_memory_equal(kp.pk, need(which[i][2], 32)->val, 32);
    }
}

static void test_encap_decap(void **state)
{
    (void)state;
    const item_t *ikm_e = need("ikmE", 32);
    uint8_t enc[32], ss[32], ss_r[32];
    assert_int_equal(dpm_hpke_encap(need("pkRm", 32)->val, ikm_e->val, ikm_e->len, enc, ss),
                     DPM_OK);
    assert_memory_equal(enc, need("enc", 32)->val, 32);
    assert_memory_equal(ss, need("shared_secret", 32)->val, 32);
    dpm_hpke_keypair_t kp = recipient();
    assert_int_equal(dpm_hpke_decap(enc, &kp, ss_r), DPM_OK);
    assert_memory_equal(ss_r, ss, 32);
}

static void test_key_schedule(void **state)
{
    (void)state;
    const item_t *info = need("info", 0);
    const size_t nk = dpm_hpke_aead_nk(suite_aead);
    dpm_hpke_ctx_t ctx;
    uint8_t ksc[65];
    assert_int_equal(dpm_hpke_key_schedule(suite_aead, need("shared_secret", 32)->val, info->val,
                                           info->len, &ctx, ksc),
                     DPM_OK);
    assert_memory_equal(ksc, need("key_schedule_context", 65)->val, 65);
    assert_memory_equal(ctx.key, need("key", nk)->val, nk);
    assert_int_equal(ctx.aead_id, suite_aead);
    assert_memory_equal(ctx.base_nonce, need("base_nonce", 12)->val, 12);
    assert_memory_equal(ctx.exporter_secret, need("exporter_secret", 32)->val, 32);
    assert_true(ctx.seq == 0);
    /* both setups reach the same context */
    dpm_hpke_ctx_t s, r;
    uint8_t enc[32];
    const item_t *ikm_e = need("ikmE", 32);
    dpm_hpke_keypair_t kp = recipient();
    assert_int_equal(
        dpm_hpke_setup_base_s(suite_aead, kp.pk, ikm_e->val, 32, info->val, info->len, enc, &s),
        DPM_OK);
    assert_int_equal(dpm_hpke_setup_base_r(suite_aead, enc, &kp, info->val, info->len, &r), DPM_OK);
    const dpm_hpke_ctx_t *both[2] = {&s, &r};
    for (int i = 0; i < 2; i++) { /* field by field: the struct has padding */
        assert_int_equal(both[i]->aead_id, suite_aead);
        assert_memory_equal(both[i]->key, ctx.key, nk);
        assert_memory_equal(both[i]->base_nonce, ctx.base_nonce, 12);
        assert_memory_equal(both[i]->exporter_secret, ctx.exporter_secret, 32);
        assert_true(both[i]->seq == 0);
    }
}

static dpm_hpke_ctx_t context(void)
{
    const item_t *info = need("info", 0);
    dpm_hpke_ctx_t ctx;
    assert_int_equal(dpm_hpke_key_schedule(suite_aead, need("shared_secret", 32)->val, info->val,
                                           info->len, &ctx, NULL),
                     DPM_OK);
    return ctx;
}

static void test_encryptions(void **state)
{
    (void)state;
    for (int i = 0; i < 6; i++) {
        const item_t *seq = get("sequence number", i), *pt = get("pt", i), *aad = get("aad", i),
                     *ct = get("ct", i);
        assert_non_null(ct);
        assert_true(ct->len == pt->len + DPM_HPKE_NT);
        dpm_hpke_ctx_t s = context(), r = context();
        s.seq = r.seq = strtoull(seq->text, NULL, 10);
        uint8_t buf[MAX_HEX], tag[DPM_HPKE_NT];
        memcpy(buf, pt->val, pt->len);
        /* the associated data in two pieces: the split must not matter */
        dpm_span_t a[2] = {{aad->val, 3}, {aad->val + 3, aad->len - 3}};
        assert_int_equal(dpm_hpke_ctx_seal(&s, a, 2, buf, pt->len, tag), DPM_OK);
        assert_memory_equal(buf, ct->val, pt->len);
        assert_memory_equal(tag, ct->val + pt->len, DPM_HPKE_NT);
        assert_true(s.seq == strtoull(seq->text, NULL, 10) + 1);
        dpm_span_t whole = {aad->val, aad->len};
        assert_int_equal(dpm_hpke_ctx_open(&r, &whole, 1, buf, pt->len, tag), DPM_OK);
        assert_memory_equal(buf, pt->val, pt->len);
    }
}

static void test_exports(void **state)
{
    (void)state;
    dpm_hpke_ctx_t ctx = context();
    for (int i = 0; i < 3; i++) {
        const item_t *xc = get("exporter_context", i), *l = get("L", i),
                     *want = get("exported_value", i);
        size_t len = strtoul(l->text, NULL, 10);
        uint8_t out[64];
        assert_true(len == want->len && len <= sizeof(out));
        assert_int_equal(dpm_hpke_ctx_export(&ctx, xc->val, xc->len, out, len), DPM_OK);
        assert_memory_equal(out, want->val, len);
    }
}

/* A random source that hands out fixed bytes (ikmE), or fails. */
typedef struct {
    const uint8_t *bytes;
    size_t len;
    int fail;
} fixed_rng_t;

static int fixed_fill(void *ctx, uint8_t *out, size_t len)
{
    fixed_rng_t *f = ctx;
    if (f->fail || len != f->len) {
        return -1;
    }
    memcpy(out, f->bytes, len);
    return 0;
}

static dpm_hpke_config_t config(void)
{
    dpm_hpke_config_t cfg = {
        7, DPM_HPKE_KEM_X25519_SHA256, DPM_HPKE_KDF_HKDF_SHA256, suite_aead, {0}};
    memcpy(cfg.public_key, need("pkRm", 32)->val, 32);
    return cfg;
}

static void test_seal_hook(void **state)
{
    (void)state;
    const item_t *ikm_e = need("ikmE", 32), *info = need("info", 0), *pt = get("pt", 0),
                 *aad = get("aad", 0), *ct = get("ct", 0);
    fixed_rng_t f = {ikm_e->val, ikm_e->len, 0};
    dpm_rng_t rng = {fixed_fill, &f};
    dpm_hpke_sealer_t sealer = dpm_hpke_sealer();
    dpm_hpke_config_t cfg = config();
    uint8_t buf[MAX_HEX], enc[32], tag[16];
    memcpy(buf, pt->val, pt->len);
    dpm_span_t a = {aad->val, aad->len};
    assert_int_equal(
        sealer.seal(sealer.ctx, &cfg, &rng, info->val, info->len, &a, 1, buf, pt->len, enc, tag),
        DPM_OK);
    assert_memory_equal(enc, need("enc", 32)->val, 32);
    assert_memory_equal(buf, ct->val, pt->len);
    assert_memory_equal(tag, ct->val + pt->len, 16);
    /* the aggregator's single-shot open */
    dpm_hpke_keypair_t kp = recipient();
    assert_int_equal(
        dpm_hpke_open_base(suite_aead, enc, &kp, info->val, info->len, &a, 1, buf, pt->len, tag),
        DPM_OK);
    assert_memory_equal(buf, pt->val, pt->len);
    /* negative control: the same bytes opened as the other AEAD do not authenticate */
    memcpy(buf, ct->val, pt->len);
    assert_int_equal(dpm_hpke_open_base((uint16_t)(suite_aead ^ 2u), enc, &kp, info->val, info->len,
                                        &a, 1, buf, pt->len, tag),
                     DPM_ERR_CORRUPT);
    /* a random source that fails seals nothing */
    f.fail = 1;
    assert_int_equal(
        sealer.seal(sealer.ctx, &cfg, &rng, info->val, info->len, &a, 1, buf, pt->len, enc, tag),
        DPM_ERR_RNG);
    /* an unknown suite is refused before any randomness is drawn */
    f.fail = 0;
    cfg.aead_id = 0x0002; /* AES-256-GCM */
    assert_int_equal(
        sealer.seal(sealer.ctx, &cfg, &rng, info->val, info->len, &a, 1, buf, pt->len, enc, tag),
        DPM_ERR_PARAM);
}

/* Encapsulation ahead of time: a context filled with ikmE seals the sequence-0 vector bit for
 * bit; each context serves one message; a pool without a matching context encapsulates inline
 * (same ciphertext for the same random bytes) and counts the miss; a full pool refuses to fill
 * and draws nothing. */
static void test_pool(void **state)
{
    (void)state;
    const item_t *ikm_e = need("ikmE", 32), *info = need("info", 0), *pt = get("pt", 0),
                 *aad = get("aad", 0), *ct = get("ct", 0);
    fixed_rng_t f = {ikm_e->val, ikm_e->len, 0};
    dpm_rng_t rng = {fixed_fill, &f};
    dpm_hpke_config_t cfg = config();
    dpm_hpke_encap_t slots[2];
    dpm_hpke_pool_t pool;
    assert_int_equal(dpm_hpke_pool_init(&pool, slots, 2), DPM_OK);
    assert_int_equal(dpm_hpke_pool_fill(&pool, &cfg, info->val, info->len, &rng), DPM_OK);
    assert_int_equal(dpm_hpke_pool_ready(&pool, &cfg, info->val, info->len), 1);
    assert_int_equal(dpm_hpke_pool_ready(&pool, &cfg, info->val, info->len - 1), 0);
    dpm_hpke_sealer_t sealer = dpm_hpke_pool_sealer(&pool);
    f.fail = 1; /* the seal must not draw: its context is ready */
    uint8_t buf[MAX_HEX], enc[32], tag[16];
    dpm_span_t a = {aad->val, aad->len};
    for (int round = 0; round < 2; round++) {
        memcpy(buf, pt->val, pt->len);
        memset(enc, 0, sizeof(enc));
        assert_int_equal(sealer.seal(sealer.ctx, &cfg, &rng, info->val, info->len, &a, 1, buf,
                                     pt->len, enc, tag),
                         DPM_OK);
        assert_memory_equal(enc, need("enc", 32)->val, 32);
        assert_memory_equal(buf, ct->val, pt->len);
        assert_memory_equal(tag, ct->val + pt->len, 16);
        /* round 0: from the pool; round 1: the pool is empty, inline with the same ikmE */
        assert_int_equal(pool.used, 1);
        assert_int_equal(pool.missed, (uint32_t)round);
        assert_int_equal(dpm_hpke_pool_ready(&pool, &cfg, info->val, info->len), 0);
        f.fail = 0;
    }
    /* a context made for another key or info is not used */
    dpm_hpke_config_t other = cfg;
    other.public_key[0] ^= 0x40;
    assert_int_equal(dpm_hpke_pool_fill(&pool, &other, info->val, info->len, &rng), DPM_OK);
    assert_int_equal(dpm_hpke_pool_fill(&pool, &cfg, info->val, 3, &rng), DPM_OK);
    memcpy(buf, pt->val, pt->len);
    assert_int_equal(
        sealer.seal(sealer.ctx, &cfg, &rng, info->val, info->len, &a, 1, buf, pt->len, enc, tag),
        DPM_OK);
    assert_int_equal(pool.missed, 2);
    assert_memory_equal(buf, ct->val, pt->len);
    /* full: refused, nothing drawn */
    f.fail = 1;
    assert_int_equal(dpm_hpke_pool_fill(&pool, &cfg, info->val, info->len, &rng), DPM_ERR_BUFFER);
    dpm_hpke_pool_clear(&pool);
    assert_int_equal(dpm_hpke_pool_ready(&pool, &other, info->val, info->len), 0);
    assert_int_equal(dpm_hpke_pool_fill(&pool, &cfg, info->val, info->len, &rng), DPM_ERR_RNG);
}

/* Open the sequence-0 vector after flipping bit `bit` of one input; 0 if it (wrongly) opens. */
static int tampered_fails(int what, size_t byte, int bit)
{
    const item_t *pt = get("pt", 0), *aad = get("aad", 0), *ct = get("ct", 0),
                 *info = need("info", 0);
    uint8_t buf[MAX_HEX], tag[16], a[64], enc[32], inf[64];
    memcpy(buf, ct->val, pt->len);
    memcpy(tag, ct->val + pt->len, 16);
    memcpy(a, aad->val, aad->len);
    memcpy(enc, need("enc", 32)->val, 32);
    memcpy(inf, info->val, info->len);
    uint8_t *target[5] = {buf, tag, a, enc, inf};
    target[what][byte] ^= (uint8_t)(1u << bit);
    dpm_hpke_keypair_t kp = recipient();
    dpm_span_t span = {a, aad->len};
    dpm_status_t st =
        dpm_hpke_open_base(suite_aead, enc, &kp, inf, info->len, &span, 1, buf, pt->len, tag);
    if (st == DPM_OK) {
        return 0;
    }
    for (size_t i = 0; i < pt->len; i++) {
        if (buf[i] != 0) {
            return 0; /* released (part of) an unauthenticated plaintext */
        }
    }
    return st == DPM_ERR_CORRUPT;
}

static void test_tampering_never_opens(void **state)
{
    (void)state;
    const size_t lens[5] = {get("pt", 0)->len, 16, get("aad", 0)->len, 32, need("info", 0)->len};
    int cases = 0;
    for (int what = 0; what < 5; what++) {
        for (size_t byte = 0; byte < lens[what]; byte++) {
            for (int bit = 0; bit < 8; bit++) {
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
                if (bit != (int)(byte % 8)) { /* a Cortex-M under QEMU: one bit of every byte */
                    continue;
                }
#endif
                if (!tampered_fails(what, byte, bit)) {
                    fail_msg("input %d byte %zu bit %d: a tampered ciphertext opened", what, byte,
                             bit);
                }
                cases++;
            }
        }
    }
    /* every bit of every input, enc's top bit too: X25519 ignores it (RFC 7748 §5), but enc
     * itself is part of the KEM context */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
    assert_int_equal(cases, 29 + 16 + 7 + 32 + 20);
#else
    assert_int_equal(cases, 8 * (29 + 16 + 7 + 32 + 20));
#endif
}

static void test_small_order_keys(void **state)
{
    (void)state;
    /* 0 and 1 are points of small order: X25519 with them is all zero (RFC 7748 §6.1) */
    uint8_t low[2][32] = {{0}, {1}};
    const item_t *ikm_e = need("ikmE", 32);
    dpm_hpke_keypair_t kp = recipient();
    for (int i = 0; i < 2; i++) {
        uint8_t enc[32], ss[32];
        memset(ss, 0xAA, sizeof(ss));
        assert_int_equal(dpm_hpke_encap(low[i], ikm_e->val, 32, enc, ss), DPM_ERR_PARAM);
        assert_int_equal(dpm_hpke_decap(low[i], &kp, ss), DPM_ERR_CORRUPT);
    }
    /* negative control: the same calls with the vector's keys succeed */
    uint8_t enc[32], ss[32];
    assert_int_equal(dpm_hpke_encap(kp.pk, ikm_e->val, 32, enc, ss), DPM_OK);
    assert_int_equal(dpm_hpke_decap(enc, &kp, ss), DPM_OK);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    dpm_hpke_keypair_t kp;
    uint8_t ikm[65] = {0}, out[32], tag[16], buf[4] = {0};
    assert_int_equal(dpm_hpke_derive_keypair(ikm, 31, &kp), DPM_ERR_PARAM);
    assert_int_equal(dpm_hpke_derive_keypair(ikm, 65, &kp), DPM_ERR_PARAM);
    assert_int_equal(dpm_hpke_derive_keypair(NULL, 32, &kp), DPM_ERR_PARAM);
    dpm_hpke_ctx_t ctx = context();
    uint8_t info[DPM_HPKE_MAX_INFO + 1] = {0};
    assert_int_equal(dpm_hpke_key_schedule(suite_aead, out, info, sizeof(info), &ctx, NULL),
                     DPM_ERR_PARAM);
    assert_int_equal(dpm_hpke_key_schedule(0x0002, out, info, 1, &ctx, NULL), DPM_ERR_UNSUPPORTED);
    assert_int_equal(dpm_hpke_aead_nk(0x0002), 0);
    uint8_t enc[32];
    assert_int_equal(dpm_hpke_setup_base_s(0xFFFF, out, ikm, 32, info, 1, enc, &ctx),
                     DPM_ERR_UNSUPPORTED);
    assert_int_equal(dpm_hpke_ctx_export(&ctx, NULL, 0, out, 255u * 32u + 1u), DPM_ERR_PARAM);
    assert_int_equal(dpm_hpke_ctx_seal(&ctx, NULL, 1, buf, sizeof(buf), tag), DPM_ERR_PARAM);
    ctx.seq = UINT64_MAX; /* RFC 9180 §5.2: the sequence number must not wrap */
    assert_int_equal(dpm_hpke_ctx_seal(&ctx, NULL, 0, buf, sizeof(buf), tag), DPM_ERR_RANGE);
}

/* Every test on each suite's file, in one group (one TAP plan): the suite's setup loads its
 * file before each test. */
#define HPKE_TESTS(X, suite, setup)                                                                \
    X(test_file_is_the_suite, suite, setup), X(test_derive_keypair, suite, setup),                 \
        X(test_encap_decap, suite, setup), X(test_key_schedule, suite, setup),                     \
        X(test_encryptions, suite, setup), X(test_exports, suite, setup),                          \
        X(test_seal_hook, suite, setup), X(test_tampering_never_opens, suite, setup),              \
        X(test_small_order_keys, suite, setup), X(test_bad_arguments, suite, setup),               \
        X(test_pool, suite, setup)
#define ON_SUITE(f, suite, setup)                                                                  \
    {                                                                                              \
        suite " " #f, f, setup, NULL, NULL                                                         \
    }

int main(void)
{
    const struct CMUnitTest tests[] = {HPKE_TESTS(ON_SUITE, "aes128gcm", setup_aes),
                                       HPKE_TESTS(ON_SUITE, "chacha20poly1305", setup_chacha)};
    return cmocka_run_group_tests_name("hpke_vectors", tests, NULL, NULL);
}
