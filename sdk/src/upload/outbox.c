/* SPDX-License-Identifier: Apache-2.0 */
/* The outbox: encoded reports in a two-bank log in port storage, with a mirrored bank header,
 * recovery past damaged records and a persistent count of the reports lost to damage (layout
 * and crash-safety argument in dpm/bits/storage.h). */
#include "dpm_internal.h"

#include "core/persist.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/outbox.h"
#include "dpm/expert/report.h"
#include "upload/outbox_internal.h"

#define BANK_MAGIC 0x424F5044u /* "DPOB" little-endian */
#define BANK_VERSION 2u
#define COPY DPM_OUTBOX_HDR_COPY /* one copy of the bank header */
#define HDR DPM_OUTBOX_BANK_HDR  /* both copies: where the log starts */
#define REC_HDR DPM_OUTBOX_REC_HDR
#define REC_MARK 0xA5u
#define REC_KIND_REPORT 0x01u
#define ID_PREFIX 2u /* 0x0A 0x10: field 1, length 16 */
#define MIN_PAYLOAD (ID_PREFIX + DPM_REPORT_ID_BYTES)
#define SCAN_CHUNK 32u

/* Record header bytes. */
#define R_MARK 0u
#define R_COMMIT 1u
#define R_REMOVED 2u /* 3 bytes */
#define R_KIND 5u
#define R_LEN 6u
#define R_CRC 8u

typedef char payload_fits_u16[DPM_OUTBOX_MAX_PAYLOAD <= 0xFFFFu ? 1 : -1];
typedef char payload_holds_id[DPM_OUTBOX_MAX_PAYLOAD >= MIN_PAYLOAD ? 1 : -1];
typedef char record_header_fits[REC_HDR == R_CRC + 4u ? 1 : -1];

static uint32_t bank_base(const dpm_outbox_t *ob, uint32_t bank)
{
    return ob->offset + bank * ob->bank_size;
}

static uint32_t active_base(const dpm_outbox_t *ob)
{
    return bank_base(ob, ob->active);
}

static uint32_t add_sat(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* The since-open counts of dpm_outbox_t saturate at their width. */
static uint16_t add_sat16(uint16_t a, uint32_t b)
{
    return b >= 0xFFFFu - a ? (uint16_t)0xFFFFu : (uint16_t)(a + b);
}

/* Reports lost to damage and not yet acknowledged by a collector (damage a recovery finds is
 * compacted away at once, its losses moved into lost_base). */
static uint32_t lost_now(const dpm_outbox_t *ob)
{
    return ob->lost_base > ob->lost_acked ? ob->lost_base - ob->lost_acked : 0;
}

/* ---- bank headers ---------------------------------------------------------------------- */

typedef struct {
    int valid;     /* at least one copy is valid */
    int copies;    /* valid copies (2 when healthy) */
    int conflict;  /* two valid copies that differ: cannot come from this code */
    uint32_t seq;  /* of the valid copy */
    uint32_t lost; /* of the valid copy */
} bank_t;

static dpm_status_t read_bank(const dpm_outbox_t *ob, uint32_t bank, bank_t *b)
{
    uint8_t h[2][COPY];
    dpm_status_t st = dpm_persist_read(ob->storage, bank_base(ob, bank), h[0], sizeof(h));
    if (st != DPM_OK) {
        return st;
    }
    memset(b, 0, sizeof(*b));
    int ok[2];
    for (uint32_t c = 0; c < 2; c++) {
        const uint8_t *p = h[c];
        ok[c] = dpm_get_le32(p) == BANK_MAGIC && p[4] == BANK_VERSION && p[5] == 0 &&
                dpm_get_le16(p + 6) == 0 && dpm_crc32(0, p, COPY - 4u) == dpm_get_le32(p + 16);
        if (ok[c]) {
            b->copies++;
            b->seq = dpm_get_le32(p + 8);
            b->lost = dpm_get_le32(p + 12);
        }
    }
    b->valid = b->copies > 0;
    b->conflict = ok[0] && ok[1] && memcmp(h[0], h[1], COPY) != 0;
    return DPM_OK;
}

/* Write both copies of a bank header, the first one first: the bank becomes valid with the
 * first complete copy, the second is redundancy. */
static dpm_status_t write_bank_header(const dpm_outbox_t *ob, uint32_t bank, uint32_t seq,
                                      uint32_t lost)
{
    uint8_t h[COPY];
    dpm_put_le32(h, BANK_MAGIC);
    h[4] = (uint8_t)BANK_VERSION;
    h[5] = 0;
    dpm_put_le16(h + 6, 0);
    dpm_put_le32(h + 8, seq);
    dpm_put_le32(h + 12, lost);
    dpm_put_le32(h + 16, dpm_crc32(0, h, COPY - 4u));
    dpm_status_t st = dpm_persist_write(ob->storage, bank_base(ob, bank), h, COPY);
    if (st == DPM_OK) {
        st = dpm_persist_write(ob->storage, bank_base(ob, bank) + COPY, h, COPY);
    }
    return st;
}

/* ---- records --------------------------------------------------------------------------- */

/* The CRC covers the kind, the length and the payload; not the mark (a hint for recovery),
 * nor the commit and removal bytes, which change in place. */
static uint32_t record_crc(const uint8_t *rec, uint32_t len)
{
    return dpm_crc32(dpm_crc32(0, rec + R_KIND, 3), rec + REC_HDR, len);
}

static int rec_committed(const uint8_t *h)
{
    return h[R_COMMIT] != 0xFFu;
}

/* Removal clears three bytes at once; a record counts as removed when at least two are no
 * longer 0xFF, so damage to any one of them changes nothing, and a removal torn after its
 * first byte leaves the record pending (sent again, de-duplicated by id). */
static int rec_removed(const uint8_t *h)
{
    uint32_t cleared = 0;
    for (uint32_t i = 0; i < 3; i++) {
        cleared += h[R_REMOVED + i] != 0xFFu;
    }
    return cleared >= 2;
}

static int all_erased(const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (p[i] != 0xFFu) {
            return 0;
        }
    }
    return 1;
}

typedef enum { REC_END, REC_VALID, REC_BAD } rec_kind_t;

/* Read the record at bank offset pos of the active bank into rec (DPM_OUTBOX_RECORD_MAX
 * bytes). REC_END: the header is erased (the caller checks what follows); REC_VALID: a
 * complete record, *len = payload bytes; REC_BAD: anything else. */
static dpm_status_t read_record(const dpm_outbox_t *ob, uint32_t pos, uint8_t *rec,
                                rec_kind_t *kind, uint32_t *len)
{
    *kind = REC_BAD;
    if (pos < HDR || pos > ob->bank_size - REC_HDR) {
        return DPM_OK; /* not a record position (bank_size >= HDR + REC_HDR always) */
    }
    uint32_t base = active_base(ob);
    dpm_status_t st = dpm_persist_read(ob->storage, base + pos, rec, REC_HDR);
    if (st != DPM_OK) {
        return st;
    }
    if (all_erased(rec, REC_HDR)) {
        *kind = REC_END;
        return DPM_OK;
    }
    uint32_t n = dpm_get_le16(rec + R_LEN);
    if (rec[R_KIND] != REC_KIND_REPORT || n < MIN_PAYLOAD || n > DPM_OUTBOX_MAX_PAYLOAD ||
        n > ob->bank_size - pos - REC_HDR) {
        return DPM_OK;
    }
    st = dpm_persist_read(ob->storage, base + pos + REC_HDR, rec + REC_HDR, n);
    if (st == DPM_OK && record_crc(rec, n) == dpm_get_le32(rec + R_CRC) && rec[REC_HDR] == 0x0Au &&
        rec[REC_HDR + 1] == DPM_REPORT_ID_BYTES) {
        *kind = REC_VALID;
        *len = n;
    }
    return st;
}

/* *erased = 1 if the active bank is erased from pos to its end. */
static dpm_status_t erased_from(const dpm_outbox_t *ob, uint32_t pos, int *erased)
{
    return dpm_persist_is_erased(ob->storage, active_base(ob) + pos, ob->bank_size - pos, erased);
}

/* The first valid record at or after `from` (*found = 0 if none): candidates start with the
 * mark, and must pass the CRC. */
static dpm_status_t find_record(const dpm_outbox_t *ob, uint32_t from, uint8_t *rec, uint32_t *at,
                                int *found)
{
    uint8_t chunk[SCAN_CHUNK];
    uint32_t cbase = 0, clen = 0;
    *found = 0;
    for (uint32_t q = from; q + REC_HDR <= ob->bank_size; q++) {
        if (q >= cbase + clen) {
            cbase = q;
            clen = ob->bank_size - q < SCAN_CHUNK ? ob->bank_size - q : SCAN_CHUNK;
            dpm_status_t st = dpm_persist_read(ob->storage, active_base(ob) + q, chunk, clen);
            if (st != DPM_OK) {
                return st;
            }
        }
        if (chunk[q - cbase] != REC_MARK) {
            continue;
        }
        rec_kind_t kind = REC_BAD;
        uint32_t n = 0;
        dpm_status_t st = read_record(ob, q, rec, &kind, &n);
        if (st != DPM_OK) {
            return st;
        }
        if (kind == REC_VALID) {
            *at = q;
            *found = 1;
            return DPM_OK;
        }
    }
    return DPM_OK;
}

/* Was the record whose header is h a pending report (so that damage to it is a loss)? At the
 * tail only a committed one was (an uncommitted one is an append that never returned, or
 * erased space); before a valid record, any record not removed was, and so is an unreadable
 * header there (appends never follow an unreadable record: recovery compacts first). */
static uint32_t lost_in(const uint8_t *h, int tail)
{
    if (h[R_MARK] != REC_MARK) {
        return tail ? 0u : 1u;
    }
    if (rec_removed(h) || (tail && !rec_committed(h))) {
        return 0;
    }
    return 1;
}

/* Pending reports in the damaged stretch [pos, q) followed by a valid record (first: the
 * header at pos): walk the record headers; if the walk lands exactly on q, each header counts,
 * otherwise the stretch is one record (a single damaged byte touches one record) judged by its
 * first header. */
static dpm_status_t lost_between(const dpm_outbox_t *ob, uint32_t pos, uint32_t q,
                                 const uint8_t *first, uint32_t *lost)
{
    uint8_t h[REC_HDR];
    uint32_t count = 0, p = pos;
    int ok = 1;
    while (ok && p < q) {
        ok = p + REC_HDR <= q;
        if (!ok) {
            break;
        }
        dpm_status_t st = dpm_persist_read(ob->storage, active_base(ob) + p, h, REC_HDR);
        if (st != DPM_OK) {
            return st;
        }
        uint32_t n = dpm_get_le16(h + R_LEN);
        ok = h[R_MARK] == REC_MARK && n >= MIN_PAYLOAD && n <= DPM_OUTBOX_MAX_PAYLOAD;
        if (ok) {
            count += lost_in(h, 0);
            p += REC_HDR + n;
        }
    }
    *lost = ok && p == q ? count : lost_in(first, 0);
    return DPM_OK;
}

/* One step of the log walk from pos. */
typedef enum {
    ITEM_RECORD, /* a valid record at pos; next = the position after it */
    ITEM_DAMAGE, /* a damaged stretch [pos, next) followed by a valid record */
    ITEM_END     /* the log ends at pos; tail_dirty: something not erased follows */
} item_kind_t;

typedef struct {
    item_kind_t kind;
    uint32_t next;
    uint32_t len;   /* ITEM_RECORD: payload bytes */
    uint32_t lost;  /* ITEM_DAMAGE, and ITEM_END with a damaged tail: pending reports lost */
    int tail_dirty; /* ITEM_END */
    int damaged;    /* ITEM_END: the tail is a damaged committed record (not a torn append) */
} item_t;

static dpm_status_t walk_step(const dpm_outbox_t *ob, uint32_t pos, uint8_t *rec, item_t *it)
{
    memset(it, 0, sizeof(*it));
    it->kind = ITEM_END;
    if (pos + REC_HDR > ob->bank_size) {
        int erased = 0;
        dpm_status_t st = erased_from(ob, pos, &erased);
        it->tail_dirty = !erased;
        return st;
    }
    rec_kind_t kind = REC_BAD;
    uint32_t n = 0;
    dpm_status_t st = read_record(ob, pos, rec, &kind, &n);
    if (st != DPM_OK) {
        return st;
    }
    if (kind == REC_VALID) {
        it->kind = ITEM_RECORD;
        it->len = n;
        it->next = pos + REC_HDR + n;
        return DPM_OK;
    }
    if (kind == REC_END) {
        int erased = 0;
        st = erased_from(ob, pos, &erased);
        if (st != DPM_OK || erased) {
            return st;
        }
    }
    /* Not a record: resynchronise at the next valid one. */
    uint8_t h[REC_HDR];
    memcpy(h, rec, REC_HDR);
    uint32_t q = 0;
    int found = 0;
    st = find_record(ob, pos + 1u, rec, &q, &found);
    if (st == DPM_OK && found) {
        it->kind = ITEM_DAMAGE;
        it->next = q;
        st = lost_between(ob, pos, q, h, &it->lost);
    } else if (st == DPM_OK) {
        it->tail_dirty = 1;
        it->damaged = h[R_MARK] == REC_MARK && rec_committed(h);
        it->lost = lost_in(h, 1);
    }
    return st;
}

/* ---- recovery -------------------------------------------------------------------------- */

/* Scan the active bank's log: count records, find the end, count damage and the pending
 * reports it held (*lost). */
static dpm_status_t scan(dpm_outbox_t *ob, uint32_t *damaged, uint32_t *uncommitted, uint32_t *lost)
{
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    uint32_t pos = HDR;
    ob->pending = 0;
    ob->pending_bytes = 0;
    ob->dirty = 0;
    *lost = 0;
    *damaged = 0;
    *uncommitted = 0;
    for (;;) {
        item_t it;
        dpm_status_t st = walk_step(ob, pos, rec, &it);
        if (st != DPM_OK) {
            return st;
        }
        if (it.kind == ITEM_END) {
            ob->dirty = it.tail_dirty != 0;
            *damaged += (uint32_t)it.damaged;
            *lost = add_sat(*lost, it.lost);
            break;
        }
        if (it.kind == ITEM_DAMAGE) {
            (*damaged)++;
            *lost = add_sat(*lost, it.lost);
        } else if (!rec_removed(rec)) {
            ob->pending++;
            ob->pending_bytes += REC_HDR + it.len;
            *uncommitted += (uint32_t)!rec_committed(rec);
        }
        pos = it.next;
    }
    ob->wpos = pos;
    return DPM_OK;
}

/* Copy the pending records into the other bank, then make it active by writing its header
 * (with the count of unacknowledged losses, damaged stretches included) last. Until the
 * first header copy is complete the active bank is untouched and still the one open() picks.
 * Also the repair: damaged records and torn tails stay behind, copies are written
 * committed. */
static dpm_status_t compact(dpm_outbox_t *ob)
{
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    uint32_t dst = 1u - ob->active;
    uint32_t dbase = bank_base(ob, dst);
    uint32_t q = HDR, pending = 0, lost = ob->lost_base;
    dpm_status_t st = dpm_persist_erase(ob->storage, dbase, ob->bank_size);
    for (uint32_t pos = HDR; st == DPM_OK;) {
        item_t it;
        st = walk_step(ob, pos, rec, &it);
        if (st != DPM_OK) {
            break;
        }
        if (it.kind == ITEM_END) {
            lost = add_sat(lost, it.lost);
            break;
        }
        if (it.kind == ITEM_DAMAGE) {
            lost = add_sat(lost, it.lost);
        } else if (!rec_removed(rec)) {
            rec[R_MARK] = (uint8_t)REC_MARK;
            rec[R_COMMIT] = 0x00;
            memset(rec + R_REMOVED, 0xFF, 3);
            st = dpm_persist_write(ob->storage, dbase + q, rec, REC_HDR + it.len);
            q += REC_HDR + it.len;
            pending++;
        }
        pos = it.next;
    }
    uint32_t acked = ob->lost_acked < lost ? ob->lost_acked : lost;
    if (st == DPM_OK) {
        st = write_bank_header(ob, dst, ob->seq + 1u, lost - acked);
    }
    if (st != DPM_OK) {
        ob->stale = 1;
        return st;
    }
    ob->active = dst != 0;
    ob->seq++;
    ob->wpos = q;
    ob->pending = pending;
    ob->pending_bytes = q - HDR;
    ob->dirty = 0;
    ob->lost_base = lost - acked;
    ob->lost_acked = 0;
    ob->copying = 0;
    return DPM_OK;
}

/* ---- compaction in steps --------------------------------------------------------------- *
 * compact() copies the whole bank in one call: about 1,400 Cortex-M4 instructions a record,
 * 108,000 for a full 4 KB bank, paid by whichever report call found the bank's end. A healthy
 * outbox instead copies as it goes: once the active bank's free end gets short (begin_copy),
 * each append first copies at least DPM_OUTBOX_COPY_RATIO times its own record's bytes of the
 * log (copy_step), so the copy overtakes the log's end before the free end runs out, and the
 * step that reaches the end switches banks exactly as compact() does (the other bank's header
 * written last). The other bank has no valid header until then: a crash or a failed storage
 * call anywhere in between leaves the active bank the only valid one, and untouched; the RAM
 * state is dropped (recover) and the copy starts again. Anything unexpected on the way (a
 * record that is not as appends leave them) ends the stepwise copy and marks the outbox stale,
 * so recovery and compact() deal with it as before. A step does not check record CRCs: each
 * copy carries its stored CRC, so damage it copies is found by the next reader as in the
 * active bank. Removals during the copy clear the record in both banks (mirror_removal). */

/* The copy ratio R (dpm/config.h), 0 when this build compacts in one call: every use below is
 * then constant-false, and the stepwise functions are left out of the image. */
#define STEPWISE ((uint32_t)DPM_OUTBOX_COPY_RATIO)

/* A step weighs a removed record (a header read, nothing copied) at a quarter of its bytes. */
#define SKIP_WEIGHT 4u

/* What a stepwise copy still has to get through, in step-weighted bytes: the log from the copy
 * position (pending records in full, removed ones at a quarter). Counted from the bank start:
 * pending_bytes are all ahead of a copy that has not begun. */
static uint64_t copy_work(const dpm_outbox_t *ob)
{
    uint64_t used = ob->wpos - HDR;
    return ob->pending_bytes + (used - ob->pending_bytes) / SKIP_WEIGHT;
}

/* The most pending bytes (record headers included) once a record of `size` bytes is appended:
 * what a stepwise copy can always move before the free end runs out. With m = R - 1, a copy
 * of work W takes about W / m of appends, and removals while it runs leave at most that much
 * of removed copies in the new bank; at the steady state the log then holds L pending bytes
 * and L / m * 4m / (4m - 1) removed ones, and the next copy needs its W / m of free end:
 * L <= (log - 2 size) * (4m - 1) / (4m + 7), 58 % of the log for R = 4, 77 % for R = 8. A bank
 * too small for that keeps the whole log, and compact() copies it. */
static uint64_t capacity(const dpm_outbox_t *ob, uint32_t size)
{
    uint64_t log = ob->bank_size - HDR;
    if (!STEPWISE) {
        return log; /* compact() in one call: the whole log holds pending records */
    }
    const uint64_t m = STEPWISE - 1u;
    uint64_t stepwise =
        log > 2u * (uint64_t)size ? (log - 2u * (uint64_t)size) * (4u * m - 1u) / (4u * m + 7u) : 0;
    return stepwise >= size ? stepwise : log;
}

/* Time to begin a stepwise copy before appending `size` bytes: the free end would no longer
 * absorb the appends the copy takes to overtake the log's end (each append copies R times its
 * bytes while the end moves once), with two records of slack. */
static int copy_due(const dpm_outbox_t *ob, uint32_t size)
{
    uint64_t free_end = ob->bank_size - ob->wpos;
    return STEPWISE && free_end < copy_work(ob) / (STEPWISE - 1u) + 2u * (uint64_t)size;
}

static dpm_status_t begin_copy(dpm_outbox_t *ob)
{
    dpm_status_t st = dpm_persist_erase(ob->storage, bank_base(ob, 1u - ob->active), ob->bank_size);
    if (st != DPM_OK) {
        ob->stale = 1;
        return st;
    }
    ob->copying = 1;
    ob->copy_from = HDR;
    ob->copy_to = HDR;
    ob->copy_bytes = 0;
    return DPM_OK;
}

/* The header of a record as appends leave it in a healthy log ending at wpos: *n its payload
 * bytes. */
static int healthy_header(const dpm_outbox_t *ob, uint32_t pos, const uint8_t *h, uint32_t *n)
{
    *n = dpm_get_le16(h + R_LEN);
    return h[R_MARK] == REC_MARK && rec_committed(h) && h[R_KIND] == REC_KIND_REPORT &&
           *n >= MIN_PAYLOAD && *n <= DPM_OUTBOX_MAX_PAYLOAD &&
           (uint64_t)pos + REC_HDR + *n <= ob->wpos;
}

/* The copy reached the log's end: make the other bank active, as compact() does. Only if it
 * holds exactly the pending bytes: a length damaged at rest since the last recovery can make
 * the steps (which check no CRC) jump over records, and then recovery decides instead. */
static dpm_status_t finish_copy(dpm_outbox_t *ob)
{
    if (ob->copy_bytes != ob->pending_bytes) {
        ob->copying = 0;
        ob->stale = 1;
        return DPM_OK;
    }
    uint32_t dst = 1u - ob->active;
    uint32_t lost = ob->lost_base;
    uint32_t acked = ob->lost_acked < lost ? ob->lost_acked : lost;
    dpm_status_t st = write_bank_header(ob, dst, ob->seq + 1u, lost - acked);
    if (st != DPM_OK) {
        ob->stale = 1;
        return st;
    }
    ob->active = dst != 0;
    ob->seq++;
    ob->wpos = ob->copy_to; /* pending and pending_bytes stay: removals were mirrored */
    ob->lost_base = lost - acked;
    ob->lost_acked = 0;
    ob->copying = 0;
    return DPM_OK;
}

/* Copy records from copy_from until at least `budget` step-weighted bytes of the log are
 * behind it, or finish at the log's end. rec: DPM_OUTBOX_RECORD_MAX bytes of scratch. */
static dpm_status_t copy_step(dpm_outbox_t *ob, uint32_t budget, uint8_t *rec)
{
    uint32_t dbase = bank_base(ob, 1u - ob->active);
    for (uint32_t done = 0; done < budget && ob->copy_from < ob->wpos;) {
        uint32_t pos = ob->copy_from, n = 0;
        dpm_status_t st = dpm_persist_read(ob->storage, active_base(ob) + pos, rec, REC_HDR);
        if (st == DPM_OK && !healthy_header(ob, pos, rec, &n)) {
            ob->copying = 0; /* not as appends leave it: recovery decides */
            ob->stale = 1;
            return DPM_OK;
        }
        int removed = rec_removed(rec);
        if (st == DPM_OK && !removed) {
            st = dpm_persist_read(ob->storage, active_base(ob) + pos + REC_HDR, rec + REC_HDR, n);
            if (st == DPM_OK) {
                memset(rec + R_REMOVED, 0xFF, 3);
                st = dpm_persist_write(ob->storage, dbase + ob->copy_to, rec, REC_HDR + n);
            }
            ob->copy_to += REC_HDR + n;
            ob->copy_bytes += REC_HDR + n;
        }
        if (st != DPM_OK) {
            ob->stale = 1;
            return st;
        }
        ob->copy_from = pos + REC_HDR + n;
        done += removed ? (REC_HDR + n + SKIP_WEIGHT - 1u) / SKIP_WEIGHT : REC_HDR + n;
    }
    return ob->copy_from < ob->wpos ? DPM_OK : finish_copy(ob);
}

/* A record at pos < copy_from was removed: clear its copy too, the first copy not removed with
 * the same id and length (removals usually take the oldest reports, whose copies come first;
 * the removed copies before it cost a header read each). Not found (cannot happen to a healthy
 * outbox): the stepwise copy ends and starts again later, so no removed report comes back. */
static dpm_status_t mirror_removal(dpm_outbox_t *ob, const dpm_outbox_entry_t *e)
{
    uint32_t dbase = bank_base(ob, 1u - ob->active);
    uint8_t h[REC_HDR + MIN_PAYLOAD];
    for (uint32_t q = HDR; q < ob->copy_to;) {
        dpm_status_t st = dpm_persist_read(ob->storage, dbase + q, h, sizeof(h));
        if (st != DPM_OK) {
            ob->stale = 1;
            return st;
        }
        uint32_t n = dpm_get_le16(h + R_LEN);
        if (!rec_removed(h) && n == e->len &&
            memcmp(h + REC_HDR + ID_PREFIX, e->report_id, DPM_REPORT_ID_BYTES) == 0) {
            const uint8_t zero[3] = {0x00, 0x00, 0x00};
            st = dpm_persist_write(ob->storage, dbase + q + R_REMOVED, zero, 3);
            ob->stale = ob->stale || st != DPM_OK;
            ob->copy_bytes -= REC_HDR + n;
            return st;
        }
        q += REC_HDR + n;
    }
    ob->copying = 0;
    return DPM_OK;
}

/* Erase bank B, then bank A, then write A's header (seq 1, `lost` losses carried). */
static dpm_status_t format_region(dpm_outbox_t *ob, uint32_t lost)
{
    dpm_status_t st = dpm_persist_erase(ob->storage, bank_base(ob, 1), ob->bank_size);
    if (st == DPM_OK) {
        st = dpm_persist_erase(ob->storage, bank_base(ob, 0), ob->bank_size);
    }
    if (st == DPM_OK) {
        st = write_bank_header(ob, 0, 1, lost);
    }
    if (st == DPM_OK) {
        uint32_t damaged = 0, uncommitted = 0, found = 0;
        ob->active = 0;
        ob->seq = 1;
        ob->lost_base = lost;
        ob->lost_acked = 0;
        st = scan(ob, &damaged, &uncommitted, &found); /* an erased log: nothing found */
    }
    return st;
}

/* ---- the anchor ------------------------------------------------------------------------ */

/* What the anchor holds once written: "DPOB-ANC". Any other non-erased content counts as
 * written too (a damaged anchor must not make an erased outbox look new). */
static const uint8_t anchor_mark[DPM_OUTBOX_ANCHOR_BYTES] = {0x44, 0x50, 0x4F, 0x42,
                                                             0x2D, 0x41, 0x4E, 0x43};

/* Write the anchor if it is still erased (an outbox now exists in the region). */
static dpm_status_t anchor_ensure(const dpm_outbox_t *ob)
{
    return dpm_persist_anchor_ensure(ob->anchor, ob->anchor_offset, anchor_mark,
                                     sizeof(anchor_mark));
}

/* A region with no record and no valid header: a new region, a format interrupted before
 * A's header was complete, or (under a written anchor) an outbox that was erased, whose
 * reports count as one loss. Formatted either way, so the device goes on. */
static dpm_status_t format_fresh(dpm_outbox_t *ob)
{
    int had_outbox = 0;
    dpm_status_t st = dpm_persist_anchor_written(ob->anchor, ob->anchor_offset,
                                                 DPM_OUTBOX_ANCHOR_BYTES, &had_outbox);
    if (st == DPM_OK) {
        st = format_region(ob, had_outbox ? 1u : 0u);
    }
    if (st == DPM_OK && had_outbox) {
        ob->found_erased =
            ob->found_erased == 0xFFu ? (uint8_t)0xFFu : (uint8_t)(ob->found_erased + 1u);
        ob->found_lost = add_sat16(ob->found_lost, 1);
    }
    return st;
}

/* Choose the active bank, scan it, and repair what is not as a healthy outbox leaves it
 * (open, and re-reading after a failed storage call). */
static dpm_status_t recover(dpm_outbox_t *ob)
{
    bank_t b[2];
    ob->copying = 0; /* a stepwise copy starts again from the stored state */
    for (uint32_t i = 0; i < 2; i++) {
        dpm_status_t st = read_bank(ob, i, &b[i]);
        if (st != DPM_OK) {
            return st;
        }
        if (b[i].conflict) {
            return DPM_ERR_CORRUPT;
        }
    }
    if (b[0].valid && b[1].valid) {
        /* After a compaction the old bank stays valid until the next one erases it: the
         * newer sequence number (mod 2^32) is the active bank. */
        ob->active = (uint32_t)(b[1].seq - b[0].seq) - 1u < 0x80000000u;
    } else if (b[0].valid || b[1].valid) {
        ob->active = !b[0].valid;
    } else {
        /* No valid header. A new region, or a format interrupted before A's header was
         * complete, holds no record: B erased and A's log erased. Anything else is a damaged
         * outbox, never silently formatted. */
        int erased_b = 0, erased_a = 0;
        dpm_status_t st =
            dpm_persist_is_erased(ob->storage, bank_base(ob, 1), ob->bank_size, &erased_b);
        if (st == DPM_OK) {
            st = dpm_persist_is_erased(ob->storage, bank_base(ob, 0) + HDR, ob->bank_size - HDR,
                                       &erased_a);
        }
        if (st != DPM_OK) {
            return st;
        }
        return erased_a && erased_b ? format_fresh(ob) : DPM_ERR_CORRUPT;
    }
    if (ob->seq != b[ob->active].seq) {
        ob->lost_acked = 0; /* a compaction landed: it applied the acknowledgement */
    }
    ob->seq = b[ob->active].seq;
    ob->lost_base = b[ob->active].lost;
    uint32_t damaged = 0, uncommitted = 0, lost = 0;
    dpm_status_t st = scan(ob, &damaged, &uncommitted, &lost);
    if (st != DPM_OK) {
        return st;
    }
    uint32_t headers = 2u - (uint32_t)b[ob->active].copies;
    /* the repair leaves the damage behind and moves its losses into the new header (lost_base):
     * an open outbox never holds damage it has found */
    if (headers > 0 || damaged > 0 || lost > 0 || uncommitted > 0 || ob->dirty) {
        st = compact(ob);
        if (st != DPM_OK) {
            return st;
        }
        ob->stale = 0;
    }
    ob->found_lost = add_sat16(ob->found_lost, lost);
    ob->found_damaged = add_sat16(ob->found_damaged, damaged);
    ob->found_headers = add_sat16(ob->found_headers, headers);
    return DPM_OK;
}

static int usable(const dpm_outbox_t *ob)
{
    return ob != NULL && ob->storage != NULL; /* bound by open or format; all zero: not */
}

int dpm_outbox_is_open(const dpm_outbox_t *ob)
{
    return usable(ob);
}

/* Re-read storage after a failed storage call, so RAM state matches what is stored. */
static dpm_status_t refresh(dpm_outbox_t *ob)
{
    if (!ob->stale) {
        return DPM_OK;
    }
    dpm_outbox_t t = *ob;
    dpm_status_t st = recover(&t);
    if (st == DPM_OK) {
        t.stale = 0;
        *ob = t;
    }
    return st;
}

static int storage_ok(const dpm_storage_t *s)
{
    return s != NULL && s->read != NULL && s->write != NULL && s->erase != NULL;
}

static dpm_status_t bind(dpm_outbox_t *t, const dpm_storage_t *storage, uint32_t offset,
                         uint32_t size)
{
    if (!storage_ok(storage) || size < DPM_OUTBOX_MIN_REGION ||
        !dpm_persist_in_range(storage, offset, size) || !dpm_crc32_ok()) {
        return DPM_ERR_PARAM;
    }
    memset(t, 0, sizeof(*t));
    t->storage = storage;
    t->offset = offset;
    t->bank_size = size / 2u;
    return DPM_OK;
}

dpm_status_t dpm_outbox_open_anchored(dpm_outbox_t *ob, const dpm_storage_t *storage,
                                      uint32_t offset, uint32_t size, const dpm_storage_t *anchor,
                                      uint32_t anchor_offset)
{
    dpm_outbox_t t;
    dpm_status_t st = ob == NULL ? DPM_ERR_PARAM : bind(&t, storage, offset, size);
    if (st == DPM_OK && anchor != NULL &&
        (!storage_ok(anchor) ||
         !dpm_persist_in_range(anchor, anchor_offset, DPM_OUTBOX_ANCHOR_BYTES) ||
         (anchor == storage && anchor_offset < offset + size &&
          offset < anchor_offset + DPM_OUTBOX_ANCHOR_BYTES))) {
        st = DPM_ERR_PARAM;
    }
    if (st == DPM_OK) {
        t.anchor = anchor;
        t.anchor_offset = anchor_offset;
        st = recover(&t);
    }
    if (st == DPM_OK) {
        st = anchor_ensure(&t);
    }
    if (st == DPM_OK) {
        t.stale = 0;
        *ob = t;
    }
    return st;
}

dpm_status_t dpm_outbox_open(dpm_outbox_t *ob, const dpm_storage_t *storage, uint32_t offset,
                             uint32_t size)
{
    return dpm_outbox_open_anchored(ob, storage, offset, size, NULL, 0);
}

dpm_status_t dpm_outbox_format(dpm_outbox_t *ob, const dpm_storage_t *storage, uint32_t offset,
                               uint32_t size)
{
    dpm_outbox_t t;
    dpm_status_t st = ob == NULL ? DPM_ERR_PARAM : bind(&t, storage, offset, size);
    if (st == DPM_OK) {
        st = format_region(&t, 0);
    }
    if (st == DPM_OK) {
        *ob = t;
    }
    return st;
}

/* Find the next pending record at or after *cursor (see dpm_outbox_next). */
static dpm_status_t next_pending(dpm_outbox_t *ob, uint32_t *cursor, uint8_t *rec,
                                 dpm_outbox_entry_t *e, int *found)
{
    uint32_t pos = *cursor < HDR ? HDR : *cursor;
    *found = 0;
    while (pos < ob->wpos) {
        rec_kind_t kind = REC_BAD;
        uint32_t n = 0;
        dpm_status_t st = read_record(ob, pos, rec, &kind, &n);
        if (st != DPM_OK) {
            return st;
        }
        if (kind != REC_VALID) {
            ob->stale = 1; /* storage changed under us: end here, recover on next use */
            break;
        }
        if (!rec_removed(rec)) {
            e->pos = pos;
            e->seq = ob->seq;
            e->len = n;
            memcpy(e->report_id, rec + REC_HDR + ID_PREFIX, DPM_REPORT_ID_BYTES);
            *cursor = pos + REC_HDR + n;
            *found = 1;
            break;
        }
        pos += REC_HDR + n;
    }
    return DPM_OK;
}

/* Look for a pending record with the report's id: *match = 1 (identical bytes), -1 (the id
 * with other bytes), 0 (none). Recovers first, and again if the scan met a damaged record. */
static dpm_status_t find_id(dpm_outbox_t *ob, const uint8_t *report, size_t len, uint8_t *rec,
                            int *match)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        dpm_status_t st = refresh(ob);
        uint32_t cursor = 0;
        int found = 1;
        *match = 0;
        while (st == DPM_OK && found) {
            dpm_outbox_entry_t e;
            st = next_pending(ob, &cursor, rec, &e, &found);
            if (st == DPM_OK && found &&
                memcmp(e.report_id, report + ID_PREFIX, DPM_REPORT_ID_BYTES) == 0) {
                *match = e.len == len && memcmp(rec + REC_HDR, report, len) == 0 ? 1 : -1;
                return DPM_OK;
            }
        }
        if (st != DPM_OK || !ob->stale) {
            return st;
        }
    }
    return DPM_ERR_CORRUPT; /* the storage keeps changing underneath */
}

/* 1 if report[0, len) can be a record: its size and its leading 16-byte id field. */
static int record_shape_ok(const dpm_outbox_t *ob, const uint8_t *report, size_t len)
{
    return usable(ob) && report != NULL && len >= MIN_PAYLOAD && len <= DPM_OUTBOX_MAX_PAYLOAD &&
           report[0] == 0x0Au && report[1] == DPM_REPORT_ID_BYTES;
}

/* The decoding check stays out of line: its nanopb message (every body side by side, about
 * 2 KB) is on the stack only while an app's bytes are checked, not under the record write. */
static DPM_NOINLINE int decodes(const uint8_t *report, size_t len)
{
    dpm_report_t decoded;
    return dpm_report_decode(report, len, &decoded) == DPM_OK;
}

/* Append report[0, len) as a new record (its id checked by the caller): recover first if a
 * storage call failed, compact when the active bank has no room at its end. */
static dpm_status_t append(dpm_outbox_t *ob, const uint8_t *report, size_t len, uint8_t *rec)
{
    dpm_status_t st = refresh(ob);
    if (st != DPM_OK) {
        return st;
    }
    uint32_t size = REC_HDR + (uint32_t)len;
    if ((uint64_t)ob->pending_bytes + size > capacity(ob, size)) {
        return DPM_ERR_BUFFER;
    }
    if (STEPWISE && !ob->copying && !ob->dirty && copy_due(ob, size)) {
        st = begin_copy(ob);
    }
    if (STEPWISE && st == DPM_OK && ob->copying && !ob->dirty) {
        st = copy_step(ob, STEPWISE * size, rec);
    }
    if (st == DPM_OK && ob->stale) {
        st = refresh(ob); /* the step found what appends do not leave: recover first */
    }
    if (st == DPM_OK && (ob->dirty || (uint64_t)ob->wpos + size > ob->bank_size)) {
        st = compact(ob); /* the whole bank at once: repairs, or a copy that fell behind */
    }
    if (st != DPM_OK) {
        return st;
    }
    /* The record, then its commit byte: a record that is damaged later counts as lost only if
     * it was committed (a torn append is not a loss: put never returned DPM_OK for it). */
    rec[R_MARK] = (uint8_t)REC_MARK;
    rec[R_COMMIT] = 0xFF;
    memset(rec + R_REMOVED, 0xFF, 3);
    rec[R_KIND] = (uint8_t)REC_KIND_REPORT;
    dpm_put_le16(rec + R_LEN, (uint16_t)len);
    memcpy(rec + REC_HDR, report, len);
    dpm_put_le32(rec + R_CRC, record_crc(rec, (uint32_t)len));
    uint32_t at = active_base(ob) + ob->wpos;
    const uint8_t commit = 0x00;
    st = dpm_persist_write(ob->storage, at, rec, size);
    if (st == DPM_OK) {
        st = dpm_persist_write(ob->storage, at + R_COMMIT, &commit, 1);
    }
    if (st != DPM_OK) {
        ob->stale = 1;
        return st;
    }
    ob->wpos += size;
    ob->pending++;
    ob->pending_bytes += size;
    return DPM_OK;
}

dpm_status_t dpm_outbox_put(dpm_outbox_t *ob, const uint8_t *report, size_t len)
{
    if (!record_shape_ok(ob, report, len) || !decodes(report, len)) {
        return DPM_ERR_PARAM;
    }
    /* One record per id: an identical re-put is a no-op, a different one an error. This reads
     * every pending record: the price of an app's bytes, whose id the outbox cannot trust. */
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    int match = 0;
    dpm_status_t st = find_id(ob, report, len, rec, &match);
    if (st != DPM_OK || match != 0) {
        return st != DPM_OK ? st : match > 0 ? DPM_OK : DPM_ERR_PARAM;
    }
    return append(ob, report, len, rec);
}

dpm_status_t dpm_outbox_put_encoded(dpm_outbox_t *ob, const uint8_t *report, size_t len)
{
    if (!record_shape_ok(ob, report, len)) {
        return DPM_ERR_PARAM;
    }
    /* No id lookup: the SDK drew this id fresh (see outbox_internal.h), so the call reads no
     * record and costs the same whatever the outbox holds (compaction aside). */
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    return append(ob, report, len, rec);
}

int dpm_outbox_room(const dpm_outbox_t *ob, size_t len)
{
    return usable(ob) && len >= MIN_PAYLOAD && len <= DPM_OUTBOX_MAX_PAYLOAD &&
           (uint64_t)ob->pending_bytes + REC_HDR + len <= capacity(ob, REC_HDR + (uint32_t)len);
}

uint32_t dpm_outbox_pending(const dpm_outbox_t *ob)
{
    return usable(ob) ? ob->pending : 0;
}

dpm_status_t dpm_outbox_stats(const dpm_outbox_t *ob, dpm_outbox_stats_t *s)
{
    if (!usable(ob) || s == NULL) {
        return DPM_ERR_PARAM;
    }
    memset(s, 0, sizeof(*s));
    s->pending = ob->pending;
    s->lost = lost_now(ob);
    s->found_lost = ob->found_lost;
    s->found_damaged = ob->found_damaged;
    s->found_headers = ob->found_headers;
    s->found_erased = ob->found_erased;
    return DPM_OK;
}

dpm_status_t dpm_outbox_ack_lost(dpm_outbox_t *ob, uint32_t n)
{
    if (!usable(ob)) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = refresh(ob);
    if (st != DPM_OK) {
        return st;
    }
    if (n > lost_now(ob)) {
        return DPM_ERR_PARAM;
    }
    if (n == 0) {
        return DPM_OK;
    }
    ob->lost_acked += n; /* <= the total: no overflow */
    return compact(ob);  /* on failure the next compaction (or recovery) applies it */
}

dpm_status_t dpm_outbox_next(dpm_outbox_t *ob, uint32_t *cursor, dpm_outbox_entry_t *e, int *found)
{
    if (!usable(ob) || cursor == NULL || e == NULL || found == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = refresh(ob);
    if (st != DPM_OK) {
        return st;
    }
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    dpm_outbox_entry_t t;
    uint32_t c = *cursor;
    int f = 0;
    st = next_pending(ob, &c, rec, &t, &f);
    if (st == DPM_OK) {
        if (f) {
            *e = t;
        }
        *cursor = c;
        *found = f;
    }
    return st;
}

/* Re-read and check the record an entry names. */
static dpm_status_t entry_record(dpm_outbox_t *ob, const dpm_outbox_entry_t *e, uint8_t *rec)
{
    dpm_status_t st = refresh(ob);
    if (st != DPM_OK) {
        return st;
    }
    if (e->seq != ob->seq || e->pos < HDR || e->pos >= ob->wpos || e->len > ob->bank_size) {
        return DPM_ERR_PARAM;
    }
    rec_kind_t kind = REC_BAD;
    uint32_t n = 0;
    st = read_record(ob, e->pos, rec, &kind, &n);
    if (st != DPM_OK) {
        return st;
    }
    if (kind != REC_VALID) {
        ob->stale = 1;
        return DPM_ERR_CORRUPT;
    }
    if (n != e->len || memcmp(rec + REC_HDR + ID_PREFIX, e->report_id, DPM_REPORT_ID_BYTES) != 0) {
        return DPM_ERR_PARAM;
    }
    return DPM_OK;
}

dpm_status_t dpm_outbox_read(dpm_outbox_t *ob, const dpm_outbox_entry_t *e, uint8_t *buf,
                             size_t cap)
{
    if (!usable(ob) || e == NULL || buf == NULL) {
        return DPM_ERR_PARAM;
    }
    if (cap < e->len) {
        return DPM_ERR_BUFFER;
    }
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    dpm_status_t st = entry_record(ob, e, rec);
    if (st == DPM_OK) {
        memcpy(buf, rec + REC_HDR, e->len);
    }
    return st;
}

dpm_status_t dpm_outbox_remove(dpm_outbox_t *ob, const dpm_outbox_entry_t *e)
{
    if (!usable(ob) || e == NULL) {
        return DPM_ERR_PARAM;
    }
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    dpm_status_t st = entry_record(ob, e, rec);
    if (st != DPM_OK || rec_removed(rec)) {
        return st;
    }
    const uint8_t removed[3] = {0x00, 0x00, 0x00};
    st = dpm_persist_write(ob->storage, active_base(ob) + e->pos + R_REMOVED, removed, 3);
    if (st != DPM_OK) {
        ob->stale = 1;
        return st;
    }
    ob->pending--;
    ob->pending_bytes -= REC_HDR + e->len;
    return STEPWISE && ob->copying && e->pos < ob->copy_from ? mirror_removal(ob, e) : DPM_OK;
}
