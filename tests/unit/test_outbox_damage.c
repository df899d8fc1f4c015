/* SPDX-License-Identifier: Apache-2.0 */
/* The outbox under damage at rest (storage that changes bytes after they were written): a
 * populated outbox (records pending and removed, before and after a compaction) gets every
 * bit flipped and every byte set to 0x00 and 0xFF, one at a time. After reopening, every
 * undamaged pending report must still be pending exactly once and in order, the damaged one
 * counted as lost (or still pending when only its uncovered mark, commit or removal bytes
 * were hit, or not lost when it was already removed), nothing removed comes back, the count
 * survives a second open without being counted twice, and a flush delivers each pending
 * report once and reports the loss (Batch.lost_reports) until the collector acknowledges it.
 * What the test expects is worked out from the documented layout (dpm/bits/storage.h), not from
 * the outbox code. Negative controls: the same checks over weakened images (one header copy;
 * removal clearing two bytes instead of three) must find failures, and the cases the old
 * format lost (a damaged record ended the log; a damaged header reformatted) are pinned. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/persist.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/outbox.h"
#include "fake_collector.h"
#include "fake_storage.h"
#include "upload/outbox_internal.h"
#include "test_rng.h"
#include "tuple_report.h"
#include "test_figure.h"

#define EPS1 ((dpm_eps_t)65536)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define OB_OFF 32u
#define OB_SIZE (2u * DPM_OUTBOX_MIN_REGION) /* room for 8 reports and a compaction */
#define BANK (OB_SIZE / 2u)
#define MEM (OB_OFF + OB_SIZE + 32u)
#define MAXREC 32u
#define HDR DPM_OUTBOX_BANK_HDR
#define ID_AT 14u /* report id inside a record: 12-byte header, then 0x0A 0x10 */

typedef struct {
    uint8_t mem[MEM];
    fake_storage_t fs;
    dpm_storage_t st;
    dpm_outbox_t ob;
    test_rng_t trng;
    dpm_rng_t rng;
    dpm_rand_t rand;
    fake_clock_t fclk;
    dpm_clock_t clk;
    fake_collector_t fc;
    dpm_transport_t tr;
    dpm_upload_t up;
    uint8_t work[2048];
} rig_t;

static const dpm_upload_config_t upload_cfg = {
    "collector.example:8443", "/v1/reports", 4, 400, 500, 100, 1600, NULL};

static void rig_init(rig_t *r, uint64_t seed)
{
    fake_storage_init(&r->fs, r->mem, MEM, 1);
    r->st = fake_storage_port(&r->fs);
    assert_int_equal(test_rand_init(&r->rand, &r->trng, &r->rng, seed), DPM_OK);
    r->fclk.now = 1000;
    r->fclk.step = 1;
    r->clk = fake_clock_port(&r->fclk);
    fake_collector_init(&r->fc, upload_cfg.host, upload_cfg.path);
    r->tr = fake_collector_port(&r->fc);
    assert_int_equal(dpm_upload_init(&r->up, &upload_cfg), DPM_OK);
}

static uint8_t *region(rig_t *r)
{
    return r->mem + OB_OFF;
}

/* ---- the layout, read by the test -------------------------------------------------------- */

typedef struct {
    uint32_t pos, size;
    int removed;
    uint8_t id[DPM_REPORT_ID_BYTES];
} rec_t;

typedef struct {
    uint32_t active; /* bank index */
    uint32_t nrec;
    rec_t rec[MAXREC];
} layout_t;

/* Seq of a bank from its first header copy (magic, version 2, CRC of bytes 0..15), or -1. */
static int64_t bank_seq(const uint8_t *bank)
{
    if (dpm_get_le32(bank) != 0x424F5044u || bank[4] != 2 ||
        dpm_crc32(0, bank, 16) != dpm_get_le32(bank + 16)) {
        return -1;
    }
    return dpm_get_le32(bank + 8);
}

static void describe(const uint8_t *reg, layout_t *L)
{
    int64_t s0 = bank_seq(reg), s1 = bank_seq(reg + BANK);
    assert_true(s0 >= 0 || s1 >= 0);
    L->active = s1 > s0 ? 1u : 0u;
    L->nrec = 0;
    const uint8_t *b = reg + L->active * BANK;
    for (uint32_t pos = HDR; pos + DPM_OUTBOX_REC_HDR <= BANK && b[pos] == 0xA5;) {
        rec_t *x = &L->rec[L->nrec++];
        assert_true(L->nrec <= MAXREC);
        x->pos = pos;
        x->size = DPM_OUTBOX_REC_HDR + dpm_get_le16(b + pos + 6);
        x->removed = (b[pos + 2] != 0xFF) + (b[pos + 3] != 0xFF) + (b[pos + 4] != 0xFF) >= 2;
        memcpy(x->id, b + pos + ID_AT, DPM_REPORT_ID_BYTES);
        pos += x->size;
    }
}

/* ---- building populated images ----------------------------------------------------------- */

static void put_one(rig_t *r)
{
    uint8_t rep[DPM_REPORT_MAX_BYTES], id[DPM_REPORT_ID_BYTES];
    size_t len = tuple_report_make(&r->rand, 7, 0, EPS1, rep, id);
    assert_true(len > 0);
    assert_int_equal(dpm_outbox_put(&r->ob, rep, len), DPM_OK);
}

/* Remove the k-th pending record (0-based). */
static void remove_nth(rig_t *r, uint32_t k)
{
    uint32_t cursor = 0;
    dpm_outbox_entry_t e;
    int found = 0;
    for (uint32_t i = 0; i <= k; i++) {
        assert_int_equal(dpm_outbox_next(&r->ob, &cursor, &e, &found), DPM_OK);
        assert_true(found);
    }
    assert_int_equal(dpm_outbox_remove(&r->ob, &e), DPM_OK);
}

/* Eight reports, three removed; compacted 1: then filled until a compaction (delivering the
 * oldest when full), one more put, two more removed (one copied by the compaction, one put
 * after it); compacted 2: filled until the compaction in steps has begun (the image holds a
 * half-copied bank B without a header), and a record ahead of the copy removed. */
static void build(rig_t *r, int compacted, uint8_t *image)
{
    rig_init(r, 10u + (uint64_t)compacted);
    assert_int_equal(dpm_outbox_open(&r->ob, &r->st, OB_OFF, OB_SIZE), DPM_OK);
    for (int i = 0; i < 8; i++) {
        put_one(r);
    }
    remove_nth(r, 0);
    remove_nth(r, 0);
    remove_nth(r, 1);
    if (compacted == 2) {
        while (!r->ob.copying) { /* delivering the oldest when full */
            if (dpm_outbox_room(&r->ob, DPM_REPORT_TUPLE_MAX)) {
                put_one(r);
            } else {
                remove_nth(r, 0);
            }
        }
        put_one(r);                                     /* one step in */
        remove_nth(r, dpm_outbox_pending(&r->ob) - 3u); /* a removed record ahead of the copy */
        assert_int_equal(r->ob.seq, 1u); /* bank B half copied, without a header yet */
    } else if (compacted) {
        uint32_t seq = r->ob.seq;
        while (r->ob.seq == seq) { /* delivering the oldest when full (a mirrored removal) */
            if (dpm_outbox_room(&r->ob, DPM_REPORT_TUPLE_MAX)) {
                put_one(r);
            } else {
                remove_nth(r, 0);
            }
        }
        put_one(r);
        remove_nth(r, 0);
        remove_nth(r, dpm_outbox_pending(&r->ob) - 2);
    }
    memcpy(image, r->mem, MEM);
}

/* ---- the checker -------------------------------------------------------------------------- */

enum {
    F_OPEN = 1,      /* reopen failed */
    F_MISSING = 2,   /* an undamaged pending report is no longer pending */
    F_EXTRA = 4,     /* something pending that should not be (removed, or twice) */
    F_LOST = 8,      /* the loss count is wrong */
    F_RECOUNT = 16,  /* a second open counts differently */
    F_DELIVERY = 32, /* a flush did not deliver each pending report once, or its loss */
    F_FOUND = 64     /* the recovery counters (damaged records, header copies) are wrong */
};
#define F_DATA (F_OPEN | F_MISSING | F_EXTRA | F_LOST | F_RECOUNT | F_DELIVERY)

typedef struct {
    uint8_t ids[MAXREC][DPM_REPORT_ID_BYTES]; /* pending, in order */
    uint32_t n;
    uint32_t lost, damaged, headers;
} expect_t;

/* What damage at region offset b must leave, by the documented layout: a byte of a record's
 * CRC-covered part (kind, length, CRC, payload) destroys that record (a loss if it was
 * pending); its mark, commit and removal bytes are not covered and change nothing; a byte of
 * an active header copy is restored from the other; anything else does not matter. */
static void expect_after(const layout_t *L, uint32_t b, expect_t *x)
{
    memset(x, 0, sizeof(*x));
    uint32_t bank = b / BANK, rel = b % BANK;
    int hit = -1;
    if (bank == L->active && rel < HDR) {
        x->headers = 1;
    }
    for (uint32_t i = 0; i < L->nrec && bank == L->active; i++) {
        if (rel >= L->rec[i].pos + 5u && rel < L->rec[i].pos + L->rec[i].size) {
            hit = (int)i;
            x->damaged = 1;
            x->lost = L->rec[i].removed ? 0u : 1u;
        }
    }
    for (uint32_t i = 0; i < L->nrec; i++) {
        if (!L->rec[i].removed && (int)i != hit) {
            memcpy(x->ids[x->n++], L->rec[i].id, DPM_REPORT_ID_BYTES);
        }
    }
}

static uint32_t pending_list(dpm_outbox_t *ob, uint8_t ids[][DPM_REPORT_ID_BYTES], int *ok)
{
    uint32_t cursor = 0, n = 0;
    *ok = 1;
    for (;;) {
        dpm_outbox_entry_t e;
        int found = 0;
        if (dpm_outbox_next(ob, &cursor, &e, &found) != DPM_OK) {
            *ok = 0;
            break;
        }
        if (!found || n == MAXREC) {
            break;
        }
        memcpy(ids[n++], e.report_id, DPM_REPORT_ID_BYTES);
    }
    return n;
}

static int same_ids(uint8_t a[][DPM_REPORT_ID_BYTES], uint32_t na, uint8_t b[][DPM_REPORT_ID_BYTES],
                    uint32_t nb)
{
    return na == nb && (na == 0 || memcmp(a, b, (size_t)na * DPM_REPORT_ID_BYTES) == 0);
}

/* Reopen the damaged storage in r, check it against x, reopen again, then deliver. Returns
 * the failures (F_*). */
static int check(rig_t *r, const expect_t *x)
{
    int fail = 0, ok = 0;
    if (dpm_outbox_open(&r->ob, &r->st, OB_OFF, OB_SIZE) != DPM_OK) {
        return F_OPEN;
    }
    uint8_t got[MAXREC][DPM_REPORT_ID_BYTES];
    uint32_t n = pending_list(&r->ob, got, &ok);
    if (!ok || n != dpm_outbox_pending(&r->ob)) {
        fail |= F_OPEN;
    }
    for (uint32_t i = 0; i < x->n; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < n; j++) {
            seen += memcmp(got[j], x->ids[i], DPM_REPORT_ID_BYTES) == 0;
        }
        fail |= seen == 0 ? F_MISSING : seen > 1 ? F_EXTRA : 0;
    }
    if (n > x->n) {
        fail |= F_EXTRA;
    } else if (!fail && !same_ids(got, n, (uint8_t(*)[DPM_REPORT_ID_BYTES])x->ids, x->n)) {
        fail |= F_MISSING; /* the same reports, out of order */
    }
    dpm_outbox_stats_t s;
    assert_int_equal(dpm_outbox_stats(&r->ob, &s), DPM_OK);
    if (s.lost != x->lost || s.found_lost != x->lost) {
        fail |= F_LOST;
    }
    if (s.found_damaged != x->damaged || s.found_headers != x->headers) {
        fail |= F_FOUND;
    }
    /* a second open: repaired, nothing found again, the same count */
    if (dpm_outbox_open(&r->ob, &r->st, OB_OFF, OB_SIZE) != DPM_OK ||
        dpm_outbox_stats(&r->ob, &s) != DPM_OK || s.lost != x->lost || s.found_lost != 0 ||
        s.found_damaged != 0 || s.found_headers != 0 || s.pending != n) {
        fail |= F_RECOUNT;
    }
    /* deliver: every pending report once, the loss reported and acknowledged */
    fake_collector_init(&r->fc, upload_cfg.host, upload_cfg.path);
    assert_int_equal(dpm_upload_init(&r->up, &upload_cfg), DPM_OK);
    for (int i = 0; i < 8 && dpm_outbox_pending(&r->ob) > 0; i++) {
        dpm_upload_result_t res;
        if (dpm_upload_flush(&r->up, &r->ob, &r->tr, &r->clk, &r->rand, r->work, sizeof(r->work),
                             &res) != DPM_OK) {
            fail |= F_DELIVERY;
            break;
        }
    }
    if (r->fc.fatal || r->fc.nstored != n || r->fc.duplicates != 0 ||
        r->fc.lost_reports != x->lost || dpm_outbox_pending(&r->ob) != 0) {
        fail |= F_DELIVERY;
    }
    for (uint32_t j = 0; j < n; j++) {
        if (fake_collector_find(&r->fc, got[j]) == NULL) {
            fail |= F_DELIVERY;
        }
    }
    if (dpm_outbox_open(&r->ob, &r->st, OB_OFF, OB_SIZE) != DPM_OK ||
        dpm_outbox_stats(&r->ob, &s) != DPM_OK || s.lost != 0 || s.pending != 0) {
        fail |= F_DELIVERY;
    }
    return fail;
}

/* Damage kind k (0..7 flip bit k, 8 set 0x00, 9 set 0xFF) at region offset b; 0 if that
 * changes nothing. */
static int damage(uint8_t *reg, uint32_t b, uint32_t k)
{
    uint8_t old = reg[b];
    reg[b] = k < 8 ? (uint8_t)(old ^ (1u << k)) : k == 8 ? 0x00 : 0xFF;
    return reg[b] != old;
}

typedef struct {
    uint32_t cases, lost, damaged_removed, uncovered, headers, elsewhere;
    uint32_t failing; /* cases with a data failure (F_DATA) */
    int first_fail;   /* the first failing case's mask, for the message */
    uint32_t first_byte, first_kind;
} tally_t;

/* Every damage to region bytes [from, to). */
/* The at-rest matrix tries every damage of every byte natively. On a Cortex-M under QEMU (130 s
 * of each core's suites) it still damages every byte, with a third of the ten damages in turn
 * (kind k of byte b when (b + k) % 3 == 0): every kind meets every byte position modulo 3. */
#ifndef DAMAGE_THIN
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define DAMAGE_THIN 3u
#else
#define DAMAGE_THIN 1u
#endif
#endif

/* Damage bytes [from, to) of the image, each of the ten ways (or those (b + k) % thin == 0). */
static void matrix(rig_t *r, const uint8_t *image, uint32_t from, uint32_t to, uint32_t thin,
                   tally_t *t)
{
    layout_t L;
    describe(image + OB_OFF, &L);
    for (uint32_t b = from; b < to; b++) {
        expect_t x;
        expect_after(&L, b, &x);
        for (uint32_t k = 0; k < 10; k++) {
            if ((b + k) % thin != 0) {
                continue;
            }
            memcpy(r->mem, image, MEM);
            if (!damage(region(r), b, k)) {
                continue;
            }
            t->cases++;
            int f = check(r, &x);
            if (f != 0 && t->first_fail == 0) {
                t->first_fail = f;
                t->first_byte = b;
                t->first_kind = k;
            }
            t->failing += (f & F_DATA) != 0;
            if (x.lost) {
                t->lost++;
            } else if (x.damaged) {
                t->damaged_removed++;
            } else if (x.headers) {
                t->headers++;
            } else if (b / BANK == L.active && b % BANK >= HDR &&
                       b % BANK < L.rec[L.nrec - 1].pos + L.rec[L.nrec - 1].size) {
                t->uncovered++;
            } else {
                t->elsewhere++;
            }
        }
    }
}

/* Damage at rest while a compaction in steps is under way (its progress is in RAM): the low
 * byte of every record's length in the active bank set to every other value in turn (lengths
 * that land exactly on a later record included), its kind and high length bytes flipped bit by
 * bit, then puts
 * until the banks switch (or the outbox is full), then a reopen. Every pending report the
 * damage did not hit, and every report put since, is still pending: none is lost silently; a
 * hit pending report is lost and counted, or still pending from a good copy made before the
 * damage. The steps do not check CRCs, so a damaged length
 * can make them jump over records; the switch happens only if the copy holds exactly the
 * pending bytes, otherwise recovery decides as at open. */
static void test_damage_during_a_copy(void **state)
{
    (void)state;
    static rig_t r;
    static uint8_t image[MEM];
    build(&r, 2, image);
    const dpm_outbox_t saved = r.ob;
    layout_t L;
    describe(image + OB_OFF, &L);
    uint32_t cases = 0, failing = 0, switched = 0, first_fail = 0;
    for (uint32_t i = 0; i < L.nrec; i++) {
        for (uint32_t off = 5; off <= 7; off++) {
            for (uint32_t v = 0; v < 256u; v++) {
                uint32_t b = L.active * BANK + L.rec[i].pos + off;
                uint32_t diff = v ^ image[OB_OFF + b];
                if (diff == 0 || (off != 6u && (diff & (diff - 1u)) != 0)) {
                    continue; /* every value of the length's low byte; one-bit flips elsewhere */
                }
                memcpy(r.mem, image, MEM);
                r.ob = saved;
                region(&r)[b] = (uint8_t)v;
                expect_t x;
                expect_after(&L, b, &x);
                uint8_t fresh[32][DPM_REPORT_ID_BYTES], gone[32][DPM_REPORT_ID_BYTES];
                uint32_t nfresh = 0, ngone = 0;
                while (nfresh < 32u && ngone < 32u && r.ob.seq == saved.seq) {
                    if (!dpm_outbox_room(&r.ob, DPM_REPORT_TUPLE_MAX)) {
                        /* full: deliver the oldest (it may be the damaged one's neighbour) */
                        uint32_t cursor = 0;
                        dpm_outbox_entry_t e;
                        int found = 0;
                        if (dpm_outbox_next(&r.ob, &cursor, &e, &found) != DPM_OK || !found ||
                            dpm_outbox_remove(&r.ob, &e) != DPM_OK) {
                            break;
                        }
                        memcpy(gone[ngone++], e.report_id, DPM_REPORT_ID_BYTES);
                        continue;
                    }
                    uint8_t rep[DPM_REPORT_MAX_BYTES];
                    size_t len = tuple_report_make(&r.rand, 7, 0, EPS1, rep, fresh[nfresh]);
                    /* as the device puts its own reports: no id look-up, so no scan that
                     * would find the damage first */
                    dpm_status_t st = dpm_outbox_put_encoded(&r.ob, rep, len);
                    if (st == DPM_OK) {
                        nfresh++;
                    } else if (st != DPM_ERR_CORRUPT && st != DPM_ERR_BUFFER) {
                        break;
                    }
                }
                switched += r.ob.seq != saved.seq;
                int ok = 0, fail = dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE) != DPM_OK;
                uint8_t got[MAXREC][DPM_REPORT_ID_BYTES];
                uint32_t n = fail ? 0 : pending_list(&r.ob, got, &ok);
                (void)x.lost; /* judged below, with the hit report itself */
                for (uint32_t k = 0; k < x.n + nfresh && !fail; k++) {
                    const uint8_t *id = k < x.n ? x.ids[k] : fresh[k - x.n];
                    int seen = 0, delivered = 0;
                    for (uint32_t j = 0; j < n; j++) {
                        seen += memcmp(got[j], id, DPM_REPORT_ID_BYTES) == 0;
                    }
                    for (uint32_t j = 0; j < ngone; j++) {
                        delivered += memcmp(gone[j], id, DPM_REPORT_ID_BYTES) == 0;
                    }
                    fail = seen != (delivered ? 0 : 1);
                }
                /* the hit report, if pending: lost and counted, or (copied before the damage
                 * and the banks switched since) still pending from its good copy */
                int hit_seen = 0;
                for (uint32_t j = 0; j < n; j++) {
                    hit_seen += memcmp(got[j], L.rec[i].id, DPM_REPORT_ID_BYTES) == 0;
                }
                dpm_outbox_stats_t st;
                fail |= !ok || dpm_outbox_stats(&r.ob, &st) != DPM_OK;
                fail |= L.rec[i].removed ? hit_seen != 0 || st.lost != 0
                                         : hit_seen + st.lost != 1u || hit_seen > 1;
                first_fail = failing == 0 && fail ? b : first_fail;
                failing += (uint32_t)fail;
                cases++;
            }
        }
    }
    print_message("# damage during a compaction in steps: %u cases (kind and length bytes of %u "
                  "records), %u switched banks after it: %u fail\n",
                  cases, L.nrec, switched, failing);
    test_figure("compaction_steps.cases", cases, "cases");
    if (failing > 0) {
        fail_msg("%u of %u cases lost or duplicated a report, first at byte %u", failing, cases,
                 first_fail);
    }
    assert_true(switched > 0);
}

static void test_every_byte_and_bit(void **state)
{
    (void)state;
    static rig_t r;
    static uint8_t image[MEM];
    tally_t t;
    memset(&t, 0, sizeof(t));
    uint32_t records = 0, removed = 0;
    for (int compacted = 0; compacted < 3; compacted++) {
        build(&r, compacted, image);
        layout_t L;
        describe(image + OB_OFF, &L);
        assert_int_equal(L.active, (uint32_t)(compacted == 1)); /* the compaction moved it */
        records += L.nrec;
        for (uint32_t i = 0; i < L.nrec; i++) {
            removed += (uint32_t)L.rec[i].removed;
        }
        matrix(&r, image, 0, OB_SIZE, DAMAGE_THIN, &t);
        if (t.first_fail != 0) {
            fail_msg("image %d: damage %u at byte %u: failures 0x%x", compacted, t.first_kind,
                     t.first_byte, t.first_fail);
        }
    }
    print_message("# outbox damage at rest: 3 images (%u records, %u removed; before, after and "
                  "in the middle of a compaction) x every bit flipped and every byte set to 0x00 "
                  "and 0xFF%s: %u cases: %u lost one pending report (counted, reported, "
                  "acknowledged), %u hit a removed record (no loss), %u hit uncovered "
                  "mark/commit/removal bytes (still pending), %u a header copy (restored), %u "
                  "elsewhere; all pass\n",
                  records, removed, DAMAGE_THIN > 1 ? " (a third of them, in turn)" : "", t.cases,
                  t.lost, t.damaged_removed, t.uncovered, t.headers, t.elsewhere);
    test_figure("at_rest.cases", t.cases, "cases");
    test_figure("at_rest.lost", t.lost, "cases");
    test_figure("at_rest.removed_hit", t.damaged_removed, "cases");
    assert_true(t.lost > 1000 && t.damaged_removed > 100 && t.uncovered > 100 && t.headers > 100);
}

/* Negative controls: the same checks must catch a weaker design (over the bytes the
 * weakening exposes: elsewhere it behaves like the real one). */
static void test_controls_weakened_images_are_caught(void **state)
{
    (void)state;
    static rig_t r;
    static uint8_t image[MEM];
    build(&r, 1, image);
    layout_t L;
    describe(image + OB_OFF, &L);
    const uint32_t active = L.active * BANK;
    /* one header copy (the old format): damage to it falls back to the stale bank */
    tally_t one;
    memset(&one, 0, sizeof(one));
    static uint8_t weak[MEM];
    memcpy(weak, image, MEM);
    memset(weak + OB_OFF + active + DPM_OUTBOX_HDR_COPY, 0xFF, DPM_OUTBOX_HDR_COPY);
    matrix(&r, weak, active, active + HDR, 1, &one);
    /* removal clearing two bytes of three: one byte set back to 0xFF resurrects a delivered
     * report, which would be sent again */
    tally_t two;
    memset(&two, 0, sizeof(two));
    memcpy(weak, image, MEM);
    uint32_t removed = 0;
    for (uint32_t i = 0; i < L.nrec; i++) {
        if (L.rec[i].removed) {
            weak[OB_OFF + active + L.rec[i].pos + 4] = 0xFF;
            matrix(&r, weak, active + L.rec[i].pos, active + L.rec[i].pos + 5, 1, &two);
            removed++;
        }
    }
    assert_true(removed >= 2);
    print_message("# negative controls: one header copy, damage to the active header: %u of %u "
                  "cases fail; removal over two bytes, damage to removed records' headers: %u "
                  "of %u cases fail (both must be > 0)\n",
                  one.failing, one.cases, two.failing, two.cases);
    test_figure("control_one_header.failing", one.failing, "cases");
    test_figure("control_one_header.cases", one.cases, "cases");
    test_figure("control_two_byte_removal.failing", two.failing, "cases");
    test_figure("control_two_byte_removal.cases", two.cases, "cases");
    assert_true(one.failing > 0);
    assert_true(two.failing > 0);
}

/* The cases the old format got wrong, pinned. */
static void test_old_failures_pinned(void **state)
{
    (void)state;
    static rig_t r;
    static uint8_t image[MEM];
    build(&r, 0, image);
    layout_t L;
    describe(image + OB_OFF, &L);
    uint32_t first = 0;
    while (L.rec[first].removed) {
        first++;
    }
    /* one flipped bit in the first pending record's payload: the old scan ended the log there
     * and every later report was lost silently; now only that one, counted */
    memcpy(r.mem, image, MEM);
    region(&r)[L.rec[first].pos + 20] ^= 0x04;
    expect_t x;
    expect_after(&L, L.rec[first].pos + 20, &x);
    assert_int_equal(x.lost, 1);
    assert_true(x.n >= 4); /* the later reports survive */
    assert_int_equal(check(&r, &x), 0);
    /* one flipped bit in bank A's header while B is erased: the old open reformatted */
    memcpy(r.mem, image, MEM);
    region(&r)[9] ^= 0x01;
    expect_after(&L, 9, &x);
    assert_int_equal(x.lost, 0);
    assert_int_equal(check(&r, &x), 0);
}

/* The loss count persists across reboots until a collector acknowledges it with a valid
 * answer; a proxy's empty 200 or a short count acknowledges nothing. */
static void test_loss_reported_until_acknowledged(void **state)
{
    (void)state;
    static rig_t r;
    static uint8_t image[MEM];
    build(&r, 0, image);
    layout_t L;
    describe(image + OB_OFF, &L);
    memcpy(r.mem, image, MEM);
    region(&r)[L.rec[L.nrec - 1].pos + 30] ^= 0x80; /* the last record (pending) */
    assert_false(L.rec[L.nrec - 1].removed);
    uint32_t pending = 0;
    for (uint32_t i = 0; i < L.nrec; i++) {
        pending += !L.rec[i].removed;
    }
    dpm_outbox_stats_t s;
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&r.ob, &s), DPM_OK);
    assert_int_equal(s.lost, 1);
    assert_int_equal(s.found_lost, 1);
    assert_int_equal(s.pending, pending - 1);
    assert_int_equal(dpm_outbox_ack_lost(&r.ob, 2), DPM_ERR_PARAM);
    /* after a reboot: still lost, found before */
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&r.ob, &s), DPM_OK);
    assert_int_equal(s.lost, 1);
    assert_int_equal(s.found_lost, 0);
    /* answers that do not account for the batch: nothing removed, nothing acknowledged */
    static const fc_action_t bad[] = {FC_EMPTY_200, FC_GARBAGE_200, FC_SHORT_200};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        fake_collector_init(&r.fc, upload_cfg.host, upload_cfg.path);
        r.fc.after = bad[i];
        assert_int_equal(dpm_upload_init(&r.up, &upload_cfg), DPM_OK);
        dpm_upload_result_t res;
        assert_int_equal(
            dpm_upload_flush(&r.up, &r.ob, &r.tr, &r.clk, &r.rand, r.work, sizeof(r.work), &res),
            DPM_ERR_PROTOCOL);
        assert_int_equal(res.delivered + res.lost_reported, 0);
        assert_int_equal(res.requests, 1);
        assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
        assert_int_equal(dpm_outbox_stats(&r.ob, &s), DPM_OK);
        assert_int_equal(s.lost, 1);
        assert_int_equal(s.pending, pending - 1);
    }
    /* a valid answer acknowledges it, once */
    fake_collector_init(&r.fc, upload_cfg.host, upload_cfg.path);
    assert_int_equal(dpm_upload_init(&r.up, &upload_cfg), DPM_OK);
    dpm_upload_result_t res;
    uint32_t reported = 0;
    while (dpm_outbox_pending(&r.ob) > 0) {
        assert_int_equal(
            dpm_upload_flush(&r.up, &r.ob, &r.tr, &r.clk, &r.rand, r.work, sizeof(r.work), &res),
            DPM_OK);
        reported += res.lost_reported;
    }
    assert_int_equal(reported, 1);
    assert_int_equal(r.fc.lost_reports, 1);
    assert_int_equal(r.fc.lost_seen, 1); /* only the first batch carried it */
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&r.ob, &s), DPM_OK);
    assert_int_equal(s.lost, 0);
    /* losses with nothing pending: nothing is sent (no answer could prove it arrived) */
    memcpy(r.mem, image, MEM);
    for (uint32_t i = 0; i < L.nrec; i++) {
        region(&r)[L.rec[i].pos + 2] = 0x00; /* every record removed ... */
        region(&r)[L.rec[i].pos + 3] = 0x00;
    }
    region(&r)[L.rec[L.nrec - 1].pos + 2] = 0xFF; /* ... but the last, which is damaged */
    region(&r)[L.rec[L.nrec - 1].pos + 3] = 0xFF;
    region(&r)[L.rec[L.nrec - 1].pos + 30] ^= 0x80;
    assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
    assert_int_equal(dpm_outbox_stats(&r.ob, &s), DPM_OK);
    assert_int_equal(s.lost, 1);
    assert_int_equal(s.pending, 0);
    fake_collector_init(&r.fc, upload_cfg.host, upload_cfg.path);
    assert_int_equal(
        dpm_upload_flush(&r.up, &r.ob, &r.tr, &r.clk, &r.rand, r.work, sizeof(r.work), &res),
        DPM_OK);
    assert_int_equal(res.requests, 0);
}

/* A power loss at every write and erase of the acknowledgement (its compaction): the loss is
 * either still counted (sent again: an over-count the collector may see twice) or
 * acknowledged, the pending reports are all there, and the outbox opens. */
static void test_ack_power_loss(void **state)
{
    (void)state;
    static rig_t r;
    static uint8_t image[MEM];
    build(&r, 1, image);
    layout_t L;
    describe(image + OB_OFF, &L);
    uint32_t victim = 0;
    while (L.rec[victim].removed) {
        victim++;
    }
    uint32_t runs = 0, kept = 0, acked = 0;
    for (uint64_t n = 1;; n++) {
        memcpy(r.mem, image, MEM);
        region(&r)[L.active * BANK + L.rec[victim].pos + 40] ^= 0x01;
        assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
        uint32_t pending = dpm_outbox_pending(&r.ob);
        fake_storage_arm(&r.fs, r.fs.ops + n, FAKE_TORN, FAKE_TORN_HALF);
        dpm_status_t st = dpm_outbox_ack_lost(&r.ob, 1);
        int crashed = r.fs.crashed;
        fake_storage_reboot(&r.fs);
        if (!crashed) {
            assert_int_equal(st, DPM_OK);
            break;
        }
        runs++;
        dpm_outbox_stats_t s;
        assert_int_equal(dpm_outbox_open(&r.ob, &r.st, OB_OFF, OB_SIZE), DPM_OK);
        assert_int_equal(dpm_outbox_stats(&r.ob, &s), DPM_OK);
        assert_true(s.lost <= 1);
        kept += s.lost;
        acked += s.lost == 0;
        assert_int_equal(s.pending, pending);
    }
    print_message("# loss acknowledgement under power loss: %u operations torn: %u kept the "
                  "count (reported again), %u applied it\n",
                  runs, kept, acked);
    assert_true(runs >= 3 && kept > 0 && acked > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_old_failures_pinned),
        cmocka_unit_test(test_loss_reported_until_acknowledged),
        cmocka_unit_test(test_ack_power_loss),
        cmocka_unit_test(test_every_byte_and_bit),
        cmocka_unit_test(test_damage_during_a_copy),
        cmocka_unit_test(test_controls_weakened_images_are_caught),
    };
    return cmocka_run_group_tests_name("outbox_damage", tests, NULL, NULL);
}
