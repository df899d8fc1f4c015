/* SPDX-License-Identifier: Apache-2.0 */
/* Memoized randomness: SipHash-2-4 and the persistent device secret (see dpm/expert/memo.h). */
#include "dpm_internal.h"

#include "core/persist.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/noise.h"

/* ---- SipHash-2-4 (Aumasson, Bernstein: "SipHash: a fast short-input PRF", 2012) ----------- */

static inline uint64_t rotl64(uint64_t x, unsigned b)
{
    return (x << b) | (x >> (64u - b));
}

static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) {
        v = (v << 8) | p[i];
    }
    return v;
}

typedef struct {
    uint64_t v0, v1, v2, v3;
} sip_state_t;

static inline void sip_round(sip_state_t *s)
{
    s->v0 += s->v1;
    s->v1 = rotl64(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = rotl64(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = rotl64(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = rotl64(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = rotl64(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = rotl64(s->v2, 32);
}

/* Two compression rounds per 64-bit word m. */
static inline void sip_absorb(sip_state_t *s, uint64_t m)
{
    s->v3 ^= m;
    sip_round(s);
    sip_round(s);
    s->v0 ^= m;
}

uint64_t dpm_siphash24(const uint8_t key[DPM_MEMO_KEY_BYTES], const uint8_t *msg, size_t len)
{
    uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    sip_state_t s = {k0 ^ UINT64_C(0x736f6d6570736575), k1 ^ UINT64_C(0x646f72616e646f6d),
                     k0 ^ UINT64_C(0x6c7967656e657261), k1 ^ UINT64_C(0x7465646279746573)};
    size_t whole = len & ~(size_t)7u;
    for (size_t i = 0; i < whole; i += 8) {
        sip_absorb(&s, load_le64(msg + i));
    }
    /* The last word: the 0-7 remaining bytes, little-endian, and len mod 256 in the top byte. */
    uint64_t last = (uint64_t)(len & 0xFFu) << 56;
    for (size_t i = whole; i < len; i++) {
        last |= (uint64_t)msg[i] << (8u * (i - whole));
    }
    sip_absorb(&s, last);
    s.v2 ^= 0xFFu;
    for (int i = 0; i < 4; i++) {
        sip_round(&s);
    }
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

dpm_status_t dpm_memo_prf(const dpm_memo_t *m, const uint8_t *msg, size_t len, uint64_t *out)
{
    if (m == NULL || out == NULL || (msg == NULL && len != 0) || m->opened != DPM_MEMO_OPENED) {
        return DPM_ERR_PARAM;
    }
    *out = dpm_siphash24(m->key, msg, len);
    return DPM_OK;
}

/* ---- the secret in port storage ------------------------------------------------------------ */

static const uint8_t memo_magic[4] = {'D', 'P', 'M', 'S'};
#define MEMO_VERSION 1u
#define MEMO_KEY_AT 8u
#define MEMO_CRC_AT 24u

typedef char record_layout[MEMO_CRC_AT + 4u == DPM_MEMO_RECORD_BYTES &&
                                   DPM_MEMO_RECORD_BYTES <= DPM_MEMO_MIN_REGION
                               ? 1
                               : -1];

/* 1 if rec is a record this code wrote (magic, version, reserved bytes, CRC). */
static int record_valid(const uint8_t *rec)
{
    return memcmp(rec, memo_magic, 4) == 0 && rec[4] == MEMO_VERSION && rec[5] == 0 &&
           rec[6] == 0 && rec[7] == 0 &&
           dpm_get_le32(rec + MEMO_CRC_AT) == dpm_crc32(0, rec, MEMO_CRC_AT);
}

static int all_erased(const uint8_t *rec)
{
    uint8_t acc = 0xFF;
    for (uint32_t i = 0; i < DPM_MEMO_RECORD_BYTES; i++) {
        acc &= rec[i];
    }
    return acc == 0xFF;
}

dpm_status_t dpm_memo_open(dpm_memo_t *m, const dpm_storage_t *st, uint32_t offset, uint32_t size,
                           dpm_rand_t *r)
{
    if (m == NULL || st == NULL || r == NULL || r->rng == NULL || st->read == NULL ||
        st->write == NULL || st->erase == NULL || size < DPM_MEMO_MIN_REGION ||
        !dpm_persist_in_range(st, offset, size)) {
        return DPM_ERR_PARAM;
    }
    uint8_t rec[DPM_MEMO_RECORD_BYTES];
    dpm_status_t st_read = dpm_persist_read(st, offset, rec, sizeof(rec));
    if (st_read != DPM_OK) {
        return st_read;
    }
    dpm_memo_t next;
    memset(&next, 0, sizeof(next));
    if (record_valid(rec)) {
        memcpy(next.key, rec + MEMO_KEY_AT, DPM_MEMO_KEY_BYTES);
        next.origin = DPM_MEMO_LOADED;
    } else {
        next.origin = all_erased(rec) ? DPM_MEMO_CREATED : DPM_MEMO_REPLACED;
        for (uint32_t half = 0; half < 2; half++) {
            uint64_t w = 0;
            dpm_status_t s = dpm_rand_bits(r, 64, &w);
            if (s != DPM_OK) {
                return s;
            }
            for (uint32_t i = 0; i < 8; i++) {
                next.key[8u * half + i] = (uint8_t)(w >> (8u * i));
            }
        }
        memset(rec, 0, sizeof(rec));
        memcpy(rec, memo_magic, 4);
        rec[4] = MEMO_VERSION;
        memcpy(rec + MEMO_KEY_AT, next.key, DPM_MEMO_KEY_BYTES);
        dpm_put_le32(rec + MEMO_CRC_AT, dpm_crc32(0, rec, MEMO_CRC_AT));
        dpm_status_t s = dpm_persist_erase(st, offset, size);
        if (s == DPM_OK) {
            s = dpm_persist_write(st, offset, rec, sizeof(rec));
        }
        if (s != DPM_OK) {
            return s;
        }
    }
    next.opened = DPM_MEMO_OPENED;
    *m = next;
    return DPM_OK;
}
