/* SPDX-License-Identifier: Apache-2.0 */
/* The privacy ledger: per-campaign, per-period ε spending and the device period's total under
 * the app's cap, mirrored in two storage slots, and an optional write-once anchor outside them
 * (the layout, the clock and the crash-safety argument are in dpm/expert/budget.h). */
#include "dpm_internal.h"

#include "core/persist.h"
#include "dpm/expert/budget.h"

#define LEDGER_MAGIC 0x474C5044u /* "DPLG" little-endian */
#define LEDGER_VERSION 2u
#define LEDGER_HDR 24u
#define LEDGER_ENTRY 16u
#define LEDGER_V1 1u /* SDK 0.1.0: read, never written */
#define LEDGER_V1_HDR 12u
#define LEDGER_V1_ENTRY 12u
#define LEDGER_CRC 4u
#define NEVER 0xFFFFFFFFu /* free_at of an entry that no clock finishes */

typedef char record_fits_u32[DPM_LEDGER_RECORD_MAX < 0x10000u ? 1 : -1];

/* What the anchor holds once written: "DPLG-ANC". Any other non-erased content counts as
 * written too (a damaged anchor must not make the device look new). */
static const uint8_t anchor_mark[DPM_LEDGER_ANCHOR_BYTES] = {0x44, 0x50, 0x4C, 0x47,
                                                             0x2D, 0x41, 0x4E, 0x43};

typedef struct {
    uint32_t campaign_id;
    uint32_t period;
    uint32_t spent;
    uint32_t free_at;
} ledger_entry_t;

/* A decoded record (of either version: version 1 is read into this form). */
typedef struct {
    uint32_t seq;
    uint32_t count;
    uint32_t clock;
    uint32_t period_end;
    uint32_t period_spent;
    ledger_entry_t e[DPM_LEDGER_MAX_CAMPAIGNS];
} ledger_rec_t;

/* *dst = *src up to src's entries (the struct holds room for DPM_LEDGER_MAX_CAMPAIGNS; nothing
 * reads an entry at or past count before writing it). */
static void copy_rec(ledger_rec_t *dst, const ledger_rec_t *src)
{
    dst->seq = src->seq;
    dst->count = src->count;
    dst->clock = src->clock;
    dst->period_end = src->period_end;
    dst->period_spent = src->period_spent;
    memcpy(dst->e, src->e, sizeof(src->e[0]) * src->count);
}

typedef enum {
    SLOT_ERASED,  /* every byte 0xFF */
    SLOT_GARBAGE, /* no complete record: torn write or erase, damage, or never written */
    SLOT_VALID,   /* a complete, consistent record */
    SLOT_INSANE   /* CRC-valid but impossible or of an unknown version: fail closed */
} slot_kind_t;

static uint32_t slot_base(const dpm_ledger_t *l, uint32_t slot)
{
    return l->offset + slot * l->slot_size;
}

static uint32_t add_sat(uint32_t a, uint32_t b)
{
    return a > NEVER - b ? NEVER : a + b;
}

/* Bytes of a record of `count` entries in `version` (1 or 2). */
static uint32_t record_len(uint32_t version, uint32_t count)
{
    return version == LEDGER_V1 ? LEDGER_V1_HDR + LEDGER_V1_ENTRY * count + LEDGER_CRC
                                : LEDGER_HDR + LEDGER_ENTRY * count + LEDGER_CRC;
}

/* Decode and check the content of a CRC-valid record of `count` <= MAX entries. A version 1
 * record becomes what version 2 would say without the facts it lacks: entries that never
 * finish by time, and its whole total spent in a device period whose end is not known yet. */
static int parse_record(const uint8_t *buf, uint32_t version, uint32_t count, ledger_rec_t *r)
{
    int v1 = version == LEDGER_V1;
    uint32_t hdr = v1 ? LEDGER_V1_HDR : LEDGER_HDR;
    uint32_t entry = v1 ? LEDGER_V1_ENTRY : LEDGER_ENTRY;
    r->seq = dpm_get_le32(buf + 8);
    r->count = count;
    r->clock = v1 ? 0 : dpm_get_le32(buf + 12);
    r->period_end = v1 ? 0 : dpm_get_le32(buf + 16);
    r->period_spent = v1 ? 0 : dpm_get_le32(buf + 20);
    if (dpm_get_le16(buf + 6) != 0) {
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *p = buf + hdr + (size_t)entry * i;
        r->e[i].campaign_id = dpm_get_le32(p);
        r->e[i].period = dpm_get_le32(p + 4);
        r->e[i].spent = dpm_get_le32(p + 8);
        r->e[i].free_at = v1 ? NEVER : dpm_get_le32(p + 12);
        if (r->e[i].spent == 0) {
            return 0; /* an entry exists only after a charge of eps > 0 */
        }
        if (v1) {
            r->period_spent = add_sat(r->period_spent, r->e[i].spent);
        }
        for (uint32_t j = 0; j < i; j++) {
            if (r->e[j].campaign_id == r->e[i].campaign_id) {
                return 0;
            }
        }
    }
    return 1;
}

/* *whole = 1 if the len bytes at base end in the CRC-32 of the bytes before them. */
static dpm_status_t record_whole(const dpm_ledger_t *l, uint32_t base, uint32_t len, int *whole)
{
    *whole = 0;
    if (len > l->slot_size) {
        return DPM_OK; /* no room for the CRC: not a record */
    }
    uint32_t crc = 0;
    uint8_t stored[LEDGER_CRC];
    dpm_status_t st = dpm_persist_crc(l->storage, base, len - LEDGER_CRC, 0, &crc);
    if (st == DPM_OK) {
        st = dpm_persist_read(l->storage, base + len - LEDGER_CRC, stored, LEDGER_CRC);
    }
    *whole = st == DPM_OK && crc == dpm_get_le32(stored);
    return st;
}

/* Read and classify one slot (buf: DPM_LEDGER_RECORD_MAX bytes, which hold the record's bytes
 * for SLOT_VALID). *rec means something only for SLOT_VALID. A record whose CRC
 * fails is GARBAGE whatever its header says: a torn write and damage look alike, and both are
 * covered by the copy in the other slot (see dpm/expert/budget.h). A CRC-valid record was written
 * whole by some ledger code, so impossible content or an unknown version there is INSANE. */
static dpm_status_t read_slot(const dpm_ledger_t *l, uint32_t slot, uint8_t *buf, ledger_rec_t *rec,
                              slot_kind_t *kind)
{
    uint32_t base = slot_base(l, slot);
    dpm_status_t st = dpm_persist_read(l->storage, base, buf, LEDGER_HDR);
    if (st != DPM_OK) {
        return st;
    }
    *kind = SLOT_GARBAGE;
    if (dpm_get_le32(buf) != LEDGER_MAGIC) {
        int erased = 0;
        if (buf[0] == 0xFFu) {
            st = dpm_persist_is_erased(l->storage, base, l->slot_size, &erased);
            if (st == DPM_OK && erased) {
                *kind = SLOT_ERASED;
            }
        }
        return st;
    }
    uint32_t count = buf[5];
    int known = buf[4] == LEDGER_V1 || buf[4] == LEDGER_VERSION;
    uint32_t version = buf[4] == LEDGER_V1 ? LEDGER_V1 : LEDGER_VERSION;
    uint32_t len = record_len(version, count);
    int whole = 0;
    if (known && count <= DPM_LEDGER_MAX_CAMPAIGNS && len <= l->slot_size) {
        /* A record this code can hold: read the rest of it once and check its CRC in RAM (the
         * only way to SLOT_VALID, so buf then holds the whole record). */
        if (len > LEDGER_HDR) {
            st =
                dpm_persist_read(l->storage, base + LEDGER_HDR, buf + LEDGER_HDR, len - LEDGER_HDR);
        }
        whole = st == DPM_OK &&
                dpm_crc32(0, buf, len - LEDGER_CRC) == dpm_get_le32(buf + len - LEDGER_CRC);
    } else {
        /* possibly longer than buf: CRC-checked in chunks, never interpreted */
        st = record_whole(l, base, len, &whole);
    }
    if (st == DPM_OK && !whole && !known) {
        /* a version this code does not know: whole if its CRC sits where either known
         * layout puts it (a later version must keep one of them, see dpm/expert/budget.h) */
        st = record_whole(l, base, record_len(LEDGER_V1, count), &whole);
    }
    if (st != DPM_OK || !whole) {
        return st;
    }
    if (!known || count > DPM_LEDGER_MAX_CAMPAIGNS) {
        *kind = SLOT_INSANE; /* whole, but not ours to interpret: other firmware */
        return DPM_OK;
    }
    *kind = parse_record(buf, version, count, rec) ? SLOT_VALID : SLOT_INSANE;
    return DPM_OK;
}

static int same_record(const ledger_rec_t *a, const ledger_rec_t *b)
{
    if (a->seq != b->seq || a->count != b->count || a->clock != b->clock ||
        a->period_end != b->period_end || a->period_spent != b->period_spent) {
        return 0;
    }
    for (uint32_t i = 0; i < a->count; i++) {
        if (a->e[i].campaign_id != b->e[i].campaign_id || a->e[i].period != b->e[i].period ||
            a->e[i].spent != b->e[i].spent || a->e[i].free_at != b->e[i].free_at) {
            return 0;
        }
    }
    return 1;
}

/* What the two slots say together. */
typedef enum {
    LOAD_OK,     /* *cur is the newest record; *cur_slot holds it; *mirrored: both slots do */
    LOAD_FRESH,  /* no record: a new region, or an interrupted initialisation or reset */
    LOAD_CORRUPT /* fail closed */
} load_result_t;

typedef struct {
    ledger_rec_t cur;
    uint32_t cur_slot;
    int mirrored;
    load_result_t res;
} load_t;

/* *same = 1 if slot B starts with a[0, len) (compared in chunks, no CRC). */
static dpm_status_t slot_b_repeats(const dpm_ledger_t *l, const uint8_t *a, uint32_t len, int *same)
{
    uint8_t b[32];
    *same = 1;
    for (uint32_t done = 0; done < len && *same;) {
        uint32_t n = len - done < sizeof(b) ? len - done : (uint32_t)sizeof(b);
        dpm_status_t st = dpm_persist_read(l->storage, slot_base(l, 1) + done, b, n);
        if (st != DPM_OK) {
            return st;
        }
        *same = memcmp(a + done, b, n) == 0;
        done += n;
    }
    return DPM_OK;
}

static dpm_status_t load(const dpm_ledger_t *l, load_t *out)
{
    uint8_t buf[DPM_LEDGER_RECORD_MAX];
    ledger_rec_t r[2];
    slot_kind_t k[2];
    dpm_status_t st = read_slot(l, 0, buf, &r[0], &k[0]);
    if (st != DPM_OK) {
        return st;
    }
    /* At rest both slots hold the same bytes: a valid A whose bytes B repeats is checked once
     * (one CRC instead of two). Anything else reads and checks B on its own. */
    int same = 0;
    if (k[0] == SLOT_VALID) {
        st = slot_b_repeats(l, buf, record_len(buf[4], r[0].count), &same);
    }
    if (st == DPM_OK && same) {
        k[1] = SLOT_VALID;
        copy_rec(&r[1], &r[0]);
    } else if (st == DPM_OK) {
        st = read_slot(l, 1, buf, &r[1], &k[1]);
    }
    if (st != DPM_OK) {
        return st;
    }
    out->res = LOAD_CORRUPT;
    out->mirrored = 0;
    if (k[0] == SLOT_INSANE || k[1] == SLOT_INSANE) {
        return DPM_OK;
    }
    if (k[0] == SLOT_VALID && k[1] == SLOT_VALID) {
        /* At rest both slots hold the same record. Mid-charge the slot written first is one
         * newer (mod 2^32) and wins. Anything else cannot come from this code. */
        uint32_t newer;
        if (same_record(&r[0], &r[1])) {
            newer = 0;
            out->mirrored = 1;
        } else if (r[1].seq - r[0].seq == 1u) {
            newer = 1;
        } else if (r[0].seq - r[1].seq == 1u) {
            newer = 0;
        } else {
            return DPM_OK;
        }
        copy_rec(&out->cur, &r[newer]);
        out->cur_slot = newer;
        out->res = LOAD_OK;
    } else if (k[0] == SLOT_VALID || k[1] == SLOT_VALID) {
        /* One copy: the other is torn (a charge or repair in flight, which had not returned)
         * or damaged. Either way this copy counts every charge that returned DPM_OK. */
        uint32_t s = k[0] == SLOT_VALID ? 0u : 1u;
        copy_rec(&out->cur, &r[s]);
        out->cur_slot = s;
        out->res = LOAD_OK;
    } else if (k[1] == SLOT_ERASED) {
        /* B erased and no record: a new region, or an initialisation or reset interrupted
         * while writing A (both write A only while B is erased). */
        out->res = LOAD_FRESH;
    }
    return DPM_OK;
}

/* The bytes of record *r, CRC included, into buf (DPM_LEDGER_RECORD_MAX): their length. */
static uint32_t encode_record(const ledger_rec_t *r, uint8_t *buf)
{
    uint32_t len = record_len(LEDGER_VERSION, r->count);
    dpm_put_le32(buf, LEDGER_MAGIC);
    buf[4] = (uint8_t)LEDGER_VERSION;
    buf[5] = (uint8_t)r->count;
    dpm_put_le16(buf + 6, 0);
    dpm_put_le32(buf + 8, r->seq);
    dpm_put_le32(buf + 12, r->clock);
    dpm_put_le32(buf + 16, r->period_end);
    dpm_put_le32(buf + 20, r->period_spent);
    for (uint32_t i = 0; i < r->count; i++) {
        uint8_t *p = buf + LEDGER_HDR + (size_t)LEDGER_ENTRY * i;
        dpm_put_le32(p, r->e[i].campaign_id);
        dpm_put_le32(p + 4, r->e[i].period);
        dpm_put_le32(p + 8, r->e[i].spent);
        dpm_put_le32(p + 12, r->e[i].free_at);
    }
    dpm_put_le32(buf + len - LEDGER_CRC, dpm_crc32(0, buf, len - LEDGER_CRC));
    return len;
}

/* Erase `slot`, write the record buf[0, len) into it and read it back. */
static dpm_status_t write_slot(const dpm_ledger_t *l, uint32_t slot, const uint8_t *buf,
                               uint32_t len)
{
    uint32_t base = slot_base(l, slot);
    dpm_status_t st = dpm_persist_erase(l->storage, base, l->slot_size);
    if (st == DPM_OK) {
        st = dpm_persist_write(l->storage, base, buf, len);
    }
    return st;
}

/* Erase `slot`, write *r into it and read it back. */
static dpm_status_t store(const dpm_ledger_t *l, uint32_t slot, const ledger_rec_t *r)
{
    uint8_t buf[DPM_LEDGER_RECORD_MAX];
    return write_slot(l, slot, buf, encode_record(r, buf));
}

/* Write *r into both slots: first the one that does not hold the newest valid record, so
 * that storage holds a complete copy of either the old or the new record at every instant.
 * The bytes are encoded (and their CRC computed) once. */
static dpm_status_t store_both(const dpm_ledger_t *l, uint32_t first, const ledger_rec_t *r)
{
    uint8_t buf[DPM_LEDGER_RECORD_MAX];
    uint32_t len = encode_record(r, buf);
    dpm_status_t st = write_slot(l, first, buf, len);
    if (st == DPM_OK) {
        st = write_slot(l, 1u - first, buf, len);
    }
    return st;
}

/* Write an empty record with seq 1 into A, then B (B must be erased). */
static dpm_status_t init_fresh(const dpm_ledger_t *l)
{
    ledger_rec_t r;
    memset(&r, 0, sizeof(r));
    r.seq = 1;
    return store_both(l, 0, &r);
}

/* ---- the anchor ------------------------------------------------------------------------ */

static dpm_status_t anchor_written(const dpm_ledger_t *l, int *written)
{
    return dpm_persist_anchor_written(l->anchor, l->anchor_offset, DPM_LEDGER_ANCHOR_BYTES,
                                      written);
}

/* Write the anchor if it is still erased (a ledger now exists in the region). */
static dpm_status_t anchor_ensure(const dpm_ledger_t *l)
{
    return dpm_persist_anchor_ensure(l->anchor, l->anchor_offset, anchor_mark, sizeof(anchor_mark));
}

/* ---- API ------------------------------------------------------------------------------- */

static int usable(const dpm_ledger_t *l)
{
    return l != NULL && l->opened == DPM_LEDGER_OPENED && l->storage != NULL;
}

/* Load the newest record for a charge or a query; a ledger found corrupt stays corrupt. */
static dpm_status_t load_current(dpm_ledger_t *l, load_t *ld)
{
    if (l->state != DPM_OK) {
        return DPM_ERR_CORRUPT;
    }
    dpm_status_t st = load(l, ld);
    if (st != DPM_OK) {
        return st;
    }
    if (ld->res != LOAD_OK) {
        /* open() left a valid record; none now means the storage changed underneath. */
        l->state = DPM_ERR_CORRUPT;
        return DPM_ERR_CORRUPT;
    }
    l->seq = ld->cur.seq;
    return DPM_OK;
}

static int storage_ok(const dpm_storage_t *s)
{
    return s != NULL && s->read != NULL && s->write != NULL && s->erase != NULL;
}

dpm_status_t dpm_ledger_open_anchored(dpm_ledger_t *l, const dpm_storage_t *storage,
                                      uint32_t offset, uint32_t size, const dpm_storage_t *anchor,
                                      uint32_t anchor_offset)
{
    if (l == NULL || !storage_ok(storage) || size < DPM_LEDGER_MIN_REGION ||
        !dpm_persist_in_range(storage, offset, size) || !dpm_crc32_ok()) {
        return DPM_ERR_PARAM;
    }
    if (anchor != NULL && (!storage_ok(anchor) ||
                           !dpm_persist_in_range(anchor, anchor_offset, DPM_LEDGER_ANCHOR_BYTES) ||
                           (anchor == storage && anchor_offset < offset + size &&
                            offset < anchor_offset + DPM_LEDGER_ANCHOR_BYTES))) {
        return DPM_ERR_PARAM;
    }
    dpm_ledger_t t;
    memset(&t, 0, sizeof(t));
    t.storage = storage;
    t.offset = offset;
    t.slot_size = size / 2u;
    t.anchor = anchor;
    t.anchor_offset = anchor_offset;
    t.opened = DPM_LEDGER_OPENED;
    load_t ld;
    dpm_status_t st = load(&t, &ld);
    int written = 0;
    if (st == DPM_OK) {
        st = anchor_written(&t, &written);
    }
    if (st != DPM_OK) {
        return st;
    }
    if (ld.res == LOAD_FRESH && written) {
        /* A region without a ledger on a device whose anchor says it had one: erased or
         * damaged, not new. Spending again could exceed the budget: fail closed. */
        ld.res = LOAD_CORRUPT;
    }
    if (ld.res == LOAD_FRESH) {
        st = init_fresh(&t);
        t.seq = 1;
    } else if (ld.res == LOAD_OK) {
        t.seq = ld.cur.seq;
        if (!ld.mirrored) {
            st = store(&t, 1u - ld.cur_slot, &ld.cur); /* restore the second copy */
        }
    } else {
        t.state = DPM_ERR_CORRUPT;
    }
    if (st == DPM_OK && ld.res != LOAD_CORRUPT) {
        st = anchor_ensure(&t);
    }
    if (st != DPM_OK) {
        return st;
    }
    *l = t;
    return ld.res == LOAD_CORRUPT ? DPM_ERR_CORRUPT : DPM_OK;
}

dpm_status_t dpm_ledger_open(dpm_ledger_t *l, const dpm_storage_t *storage, uint32_t offset,
                             uint32_t size)
{
    return dpm_ledger_open_anchored(l, storage, offset, size, NULL, 0);
}

/* ---- charging -------------------------------------------------------------------------- */

static dpm_status_t refuse(const char **why, const char *text, dpm_status_t st)
{
    if (why != NULL) {
        *why = text;
    }
    return st;
}

/* The ledger clock after the readings in cap: it only moves forward. */
static uint32_t clock_after(const ledger_rec_t *r, const dpm_ledger_cap_t *cap)
{
    uint32_t t = add_sat(r->clock, cap->elapsed_s);
    return cap->wall_s > t ? cap->wall_s : t;
}

/* Place the record in the device period of the ledger clock `now` under the length w: a
 * period that ended starts the next (aligned to w) at 0; a period not known yet (a new
 * ledger, a version 1 record) is set without clearing what it holds. A period_end of
 * 0xFFFFFFFF never ends (the clock saturates there). */
static void enter_period(ledger_rec_t *r, uint32_t now, uint32_t w)
{
    int ended = r->period_end != 0 && r->period_end != NEVER && now >= r->period_end;
    if (r->period_end == 0 || ended) {
        r->period_end = add_sat(now - now % w, w);
    }
    if (ended) {
        r->period_spent = 0;
    }
}

static int cap_valid(const dpm_ledger_cap_t *cap)
{
    return cap == NULL || (cap->max_eps != 0 && cap->period_seconds != 0);
}

/* The record after charge c under cap, from the current record cur: DPM_OK with *next, or the
 * refusal (the checks of dpm_ledger_spend, in the order it documents them). */
static dpm_status_t plan(const ledger_rec_t *cur, const dpm_ledger_charge_t *c,
                         const dpm_ledger_cap_t *cap, ledger_rec_t *next, const char **why)
{
    copy_rec(next, cur);
    uint32_t now = cur->clock;
    if (cap != NULL) {
        now = clock_after(cur, cap);
        next->clock = now;
        enter_period(next, now, cap->period_seconds);
    }
    uint32_t i = 0;
    while (i < next->count && next->e[i].campaign_id != c->campaign_id) {
        i++;
    }
    uint64_t spent = 0;
    if (i < next->count) {
        if (c->period < next->e[i].period) {
            return refuse(why, "campaign period closed: a later one was charged", DPM_ERR_PARAM);
        }
        if (c->period == next->e[i].period) {
            spent = next->e[i].spent;
        }
    }
    if (spent + c->eps > c->budget) {
        return refuse(why, "the campaign's budget for this period is spent", DPM_ERR_BUDGET);
    }
    if (cap != NULL && (uint64_t)next->period_spent + c->eps > cap->max_eps) {
        return refuse(why, "the device's cap for this period is spent", DPM_ERR_BUDGET);
    }
    if (i == next->count && next->count == DPM_LEDGER_MAX_CAMPAIGNS) {
        /* No slot: free the finished entries (their campaign periods have ended). */
        uint32_t kept = 0;
        for (uint32_t j = 0; j < next->count; j++) {
            if (next->e[j].free_at == NEVER || now < next->e[j].free_at) {
                next->e[kept++] = next->e[j];
            }
        }
        if (kept == next->count) {
            return refuse(why, "ledger full: every campaign in it has an open period",
                          DPM_ERR_LEDGER_FULL);
        }
        next->count = kept;
        i = kept;
    }
    uint32_t free_at =
        cap != NULL && c->period_seconds != 0 ? add_sat(now, c->period_seconds) : NEVER;
    if (i == next->count) {
        next->count++;
        next->e[i].campaign_id = c->campaign_id;
    } else if (spent != 0 && (next->e[i].free_at == NEVER || next->e[i].free_at > free_at)) {
        free_at = next->e[i].free_at; /* the same period: never finish sooner than before */
    }
    next->e[i].period = c->period;
    next->e[i].spent = (uint32_t)(spent + c->eps); /* <= budget, fits */
    next->e[i].free_at = free_at;
    next->period_spent = add_sat(next->period_spent, c->eps);
    next->seq++; /* mod 2^32: the consecutive-pair test in load() wraps the same way */
    return DPM_OK;
}

/* Load, plan, and (write != 0) store the charge; then *totals (if not NULL) from the record
 * written. */
static dpm_status_t charge_or_check(dpm_ledger_t *l, const dpm_ledger_charge_t *c,
                                    const dpm_ledger_cap_t *cap, const char **why, int write,
                                    dpm_ledger_totals_t *totals)
{
    if (!usable(l) || c == NULL || c->eps == 0 || c->budget == 0 || !cap_valid(cap)) {
        return refuse(why, "invalid ledger, charge or cap", DPM_ERR_PARAM);
    }
    load_t ld;
    dpm_status_t st = load_current(l, &ld);
    if (st != DPM_OK) {
        return refuse(why,
                      st == DPM_ERR_CORRUPT ? "ledger corrupt (see dpm_ledger_reset)"
                                            : "the ledger's storage failed",
                      st);
    }
    ledger_rec_t next;
    st = plan(&ld.cur, c, cap, &next, why);
    if (st != DPM_OK || !write) {
        return st;
    }
    st = store_both(l, 1u - ld.cur_slot, &next);
    if (st == DPM_OK) {
        l->seq = next.seq;
    }
    if (st == DPM_OK && totals != NULL) {
        for (uint32_t i = 0; i < next.count; i++) {
            if (next.e[i].campaign_id == c->campaign_id) {
                totals->campaign_spent = next.e[i].spent; /* plan set its period to c's */
            }
        }
        totals->device_spent = next.period_spent;
    }
    return refuse(why, st == DPM_OK ? NULL : "the ledger's storage failed", st);
}

dpm_status_t dpm_ledger_spend(dpm_ledger_t *l, const dpm_ledger_charge_t *c,
                              const dpm_ledger_cap_t *cap, const char **why)
{
    return charge_or_check(l, c, cap, why, 1, NULL);
}

dpm_status_t dpm_ledger_spend_totals(dpm_ledger_t *l, const dpm_ledger_charge_t *c,
                                     const dpm_ledger_cap_t *cap, const char **why,
                                     dpm_ledger_totals_t *totals)
{
    return charge_or_check(l, c, cap, why, 1, totals);
}

dpm_status_t dpm_ledger_check(dpm_ledger_t *l, const dpm_ledger_charge_t *c,
                              const dpm_ledger_cap_t *cap, const char **why)
{
    return charge_or_check(l, c, cap, why, 0, NULL);
}

dpm_status_t dpm_ledger_charge(dpm_ledger_t *l, uint32_t campaign_id, uint32_t period,
                               dpm_eps_t eps_q16, dpm_eps_t budget_q16)
{
    const dpm_ledger_charge_t c = {campaign_id, period, 0, eps_q16, budget_q16};
    return dpm_ledger_spend(l, &c, NULL, NULL);
}

dpm_status_t dpm_ledger_period_spent(dpm_ledger_t *l, const dpm_ledger_cap_t *cap, dpm_eps_t *spent)
{
    if (!usable(l) || cap == NULL || cap->period_seconds == 0 || spent == NULL) {
        return DPM_ERR_PARAM;
    }
    load_t ld;
    dpm_status_t st = load_current(l, &ld);
    if (st == DPM_OK) {
        ledger_rec_t r = ld.cur;
        enter_period(&r, clock_after(&ld.cur, cap), cap->period_seconds);
        *spent = r.period_spent;
    }
    return st;
}

dpm_status_t dpm_ledger_spent(dpm_ledger_t *l, uint32_t campaign_id, uint32_t period,
                              dpm_eps_t *spent)
{
    if (!usable(l) || spent == NULL) {
        return DPM_ERR_PARAM;
    }
    load_t ld;
    dpm_status_t st = load_current(l, &ld);
    if (st != DPM_OK) {
        return st;
    }
    dpm_eps_t s = 0;
    for (uint32_t i = 0; i < ld.cur.count; i++) {
        if (ld.cur.e[i].campaign_id == campaign_id) {
            if (period < ld.cur.e[i].period) {
                return DPM_ERR_PARAM;
            }
            if (period == ld.cur.e[i].period) {
                s = ld.cur.e[i].spent;
            }
        }
    }
    *spent = s;
    return DPM_OK;
}

dpm_status_t dpm_ledger_reset(dpm_ledger_t *l)
{
    if (!usable(l)) {
        return DPM_ERR_PARAM;
    }
    /* B first: a crash after it leaves "A anything, B erased", which is either the old
     * ledger (A still valid) or an interrupted reset that open() completes (or, with an
     * anchor, reports corrupt until the reset is repeated). */
    dpm_status_t st = dpm_persist_erase(l->storage, slot_base(l, 1), l->slot_size);
    if (st == DPM_OK) {
        st = init_fresh(l); /* A, then B */
    }
    if (st == DPM_OK) {
        st = anchor_ensure(l);
    }
    if (st == DPM_OK) {
        l->seq = 1;
        l->state = DPM_OK;
    }
    return st;
}
