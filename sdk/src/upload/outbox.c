/* SPDX-License-Identifier: Apache-2.0 */
/* The outbox: encoded reports in a two-bank log in port storage (layout and crash-safety
 * argument in dpm/upload.h). */
#include "dpm_internal.h"

#include "core/persist.h"
#include "dpm/upload.h"

#define BANK_MAGIC 0x424F5044u /* "DPOB" little-endian */
#define BANK_VERSION 1u
#define HDR DPM_OUTBOX_BANK_HDR
#define REC_HDR DPM_OUTBOX_REC_HDR
#define REC_MARK 0xA5u
#define REC_PENDING 0xFFu
#define REC_REMOVED 0x00u
#define ID_PREFIX 2u /* 0x0A 0x10: field 1, length 16 */
#define MIN_PAYLOAD (ID_PREFIX + DPM_REPORT_ID_BYTES)

typedef char payload_fits_u16[DPM_OUTBOX_MAX_PAYLOAD <= 0xFFFFu ? 1 : -1];
typedef char payload_holds_id[DPM_OUTBOX_MAX_PAYLOAD >= MIN_PAYLOAD ? 1 : -1];

static uint32_t bank_base(const dpm_outbox_t *ob, uint32_t bank)
{
    return ob->offset + bank * ob->bank_size;
}

static uint32_t active_base(const dpm_outbox_t *ob)
{
    return bank_base(ob, ob->active);
}

/* ---- bank headers ---------------------------------------------------------------------- */

static dpm_status_t read_header(const dpm_outbox_t *ob, uint32_t bank, int *valid, uint32_t *seq)
{
    uint8_t h[HDR];
    dpm_status_t st = dpm_persist_read(ob->storage, bank_base(ob, bank), h, HDR);
    if (st == DPM_OK) {
        *valid = dpm_get_le32(h) == BANK_MAGIC && h[4] == BANK_VERSION && h[5] == 0 &&
                 dpm_get_le16(h + 6) == 0 && dpm_crc32(0, h, 12) == dpm_get_le32(h + 12);
        *seq = dpm_get_le32(h + 8);
    }
    return st;
}

static dpm_status_t write_header(const dpm_outbox_t *ob, uint32_t bank, uint32_t seq)
{
    uint8_t h[HDR];
    dpm_put_le32(h, BANK_MAGIC);
    h[4] = (uint8_t)BANK_VERSION;
    h[5] = 0;
    dpm_put_le16(h + 6, 0);
    dpm_put_le32(h + 8, seq);
    dpm_put_le32(h + 12, dpm_crc32(0, h, 12));
    return dpm_persist_write(ob->storage, bank_base(ob, bank), h, HDR);
}

/* ---- records --------------------------------------------------------------------------- */

static uint32_t record_crc(const uint8_t *rec, uint32_t len)
{
    uint8_t head[3] = {rec[0], rec[2], rec[3]};
    return dpm_crc32(dpm_crc32(0, head, sizeof(head)), rec + REC_HDR, len);
}

/* Read the record at bank offset pos of the active bank into rec (DPM_OUTBOX_RECORD_MAX
 * bytes). *kind: 0 = end of log (erased), 1 = a complete record (*len = payload bytes),
 * -1 = torn or corrupt. */
static dpm_status_t read_record(const dpm_outbox_t *ob, uint32_t pos, uint8_t *rec, int *kind,
                                uint32_t *len)
{
    uint32_t base = active_base(ob);
    *kind = -1;
    if (pos < HDR || pos > ob->bank_size - REC_HDR) {
        return DPM_OK; /* not a record position (bank_size >= HDR + REC_HDR always) */
    }
    dpm_status_t st = dpm_persist_read(ob->storage, base + pos, rec, REC_HDR);
    if (st != DPM_OK) {
        return st;
    }
    int erased = 1;
    for (uint32_t i = 0; i < REC_HDR; i++) {
        if (rec[i] != 0xFFu) {
            erased = 0;
        }
    }
    *kind = erased ? 0 : -1;
    uint32_t n = dpm_get_le16(rec + 2);
    if (erased || rec[0] != REC_MARK || n < MIN_PAYLOAD || n > DPM_OUTBOX_MAX_PAYLOAD ||
        n > ob->bank_size - pos - REC_HDR) {
        return DPM_OK;
    }
    st = dpm_persist_read(ob->storage, base + pos + REC_HDR, rec + REC_HDR, n);
    if (st == DPM_OK && record_crc(rec, n) == dpm_get_le32(rec + 4) && rec[REC_HDR] == 0x0Au &&
        rec[REC_HDR + 1] == DPM_REPORT_ID_BYTES) {
        *kind = 1;
        *len = n;
    }
    return st;
}

/* Scan the active bank from its header: count records, find the end of the log. */
static dpm_status_t scan(dpm_outbox_t *ob)
{
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    uint32_t pos = HDR;
    ob->pending = 0;
    ob->pending_bytes = 0;
    ob->removed = 0;
    ob->dirty = 0;
    while (pos + REC_HDR <= ob->bank_size) {
        int kind = 0;
        uint32_t n = 0;
        dpm_status_t st = read_record(ob, pos, rec, &kind, &n);
        if (st != DPM_OK) {
            return st;
        }
        if (kind <= 0) {
            /* Erased: the end. Torn or corrupt: the end too, and never append over it. */
            ob->dirty = kind < 0;
            break;
        }
        if (rec[1] == REC_PENDING) {
            ob->pending++;
            ob->pending_bytes += REC_HDR + n;
        } else {
            ob->removed++;
        }
        pos += REC_HDR + n;
    }
    ob->wpos = pos;
    return DPM_OK;
}

/* Erase bank B, then bank A, then write A's header (seq 1). */
static dpm_status_t format_region(dpm_outbox_t *ob)
{
    dpm_status_t st = dpm_persist_erase(ob->storage, bank_base(ob, 1), ob->bank_size);
    if (st == DPM_OK) {
        st = dpm_persist_erase(ob->storage, bank_base(ob, 0), ob->bank_size);
    }
    if (st == DPM_OK) {
        st = write_header(ob, 0, 1);
    }
    if (st == DPM_OK) {
        ob->active = 0;
        ob->seq = 1;
        st = scan(ob);
    }
    return st;
}

/* Choose the active bank and scan it (open, and re-reading after a failed storage call). */
static dpm_status_t load(dpm_outbox_t *ob)
{
    int valid[2];
    uint32_t seq[2];
    for (uint32_t b = 0; b < 2; b++) {
        dpm_status_t st = read_header(ob, b, &valid[b], &seq[b]);
        if (st != DPM_OK) {
            return st;
        }
    }
    if (valid[0] && valid[1]) {
        /* After a compaction the old bank stays valid until the next one erases it: the
         * newer sequence number (mod 2^32) is the active bank. */
        ob->active = (uint32_t)(seq[1] - seq[0]) - 1u < 0x80000000u ? 1u : 0u;
    } else if (valid[0] || valid[1]) {
        ob->active = valid[0] ? 0u : 1u;
    } else {
        /* No valid bank. B entirely erased means a fresh region or an interrupted format
         * (both write bank A's header while B is erased): nothing was ever stored. */
        int erased = 0;
        dpm_status_t st =
            dpm_persist_is_erased(ob->storage, bank_base(ob, 1), ob->bank_size, &erased);
        if (st != DPM_OK) {
            return st;
        }
        return erased ? format_region(ob) : DPM_ERR_CORRUPT;
    }
    ob->seq = seq[ob->active];
    return scan(ob);
}

static int usable(const dpm_outbox_t *ob)
{
    return ob != NULL && ob->opened == DPM_OUTBOX_OPENED && ob->storage != NULL;
}

/* Re-read storage after a failed storage call, so RAM state matches what is stored. */
static dpm_status_t refresh(dpm_outbox_t *ob)
{
    if (!ob->stale) {
        return DPM_OK;
    }
    dpm_outbox_t t = *ob;
    dpm_status_t st = load(&t);
    if (st == DPM_OK) {
        t.stale = 0;
        *ob = t;
    }
    return st;
}

static dpm_status_t bind(dpm_outbox_t *t, const dpm_storage_t *storage, uint32_t offset,
                         uint32_t size)
{
    if (storage == NULL || storage->read == NULL || storage->write == NULL ||
        storage->erase == NULL || size < DPM_OUTBOX_MIN_REGION ||
        !dpm_persist_in_range(storage, offset, size)) {
        return DPM_ERR_PARAM;
    }
    memset(t, 0, sizeof(*t));
    t->storage = storage;
    t->offset = offset;
    t->bank_size = size / 2u;
    t->opened = DPM_OUTBOX_OPENED;
    return DPM_OK;
}

dpm_status_t dpm_outbox_open(dpm_outbox_t *ob, const dpm_storage_t *storage, uint32_t offset,
                             uint32_t size)
{
    dpm_outbox_t t;
    dpm_status_t st = ob == NULL ? DPM_ERR_PARAM : bind(&t, storage, offset, size);
    if (st == DPM_OK) {
        st = load(&t);
    }
    if (st == DPM_OK) {
        *ob = t;
    }
    return st;
}

dpm_status_t dpm_outbox_format(dpm_outbox_t *ob, const dpm_storage_t *storage, uint32_t offset,
                               uint32_t size)
{
    dpm_outbox_t t;
    dpm_status_t st = ob == NULL ? DPM_ERR_PARAM : bind(&t, storage, offset, size);
    if (st == DPM_OK) {
        st = format_region(&t);
    }
    if (st == DPM_OK) {
        *ob = t;
    }
    return st;
}

/* Copy the pending records into the other bank, then make it active by writing its header
 * last. Until that header is complete the active bank is untouched and still the one open()
 * picks. */
static dpm_status_t compact(dpm_outbox_t *ob)
{
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    uint32_t dst = 1u - ob->active;
    uint32_t dbase = bank_base(ob, dst);
    dpm_status_t st = dpm_persist_erase(ob->storage, dbase, ob->bank_size);
    uint32_t q = HDR;
    for (uint32_t pos = HDR; pos < ob->wpos && st == DPM_OK;) {
        int kind = 0;
        uint32_t n = 0;
        st = read_record(ob, pos, rec, &kind, &n);
        if (st == DPM_OK && kind != 1) {
            st = DPM_ERR_CORRUPT; /* changed since it was scanned: re-read, then retry */
        }
        if (st == DPM_OK && rec[1] == REC_PENDING) {
            st = dpm_persist_write(ob->storage, dbase + q, rec, REC_HDR + n);
            q += REC_HDR + n;
        }
        pos += REC_HDR + n;
    }
    if (st == DPM_OK) {
        st = write_header(ob, dst, ob->seq + 1u);
    }
    if (st != DPM_OK) {
        ob->stale = 1;
        return st;
    }
    ob->active = dst;
    ob->seq++;
    ob->wpos = q;
    ob->pending_bytes = q - HDR;
    ob->removed = 0;
    ob->dirty = 0;
    return DPM_OK;
}

/* Find the next pending record at or after *cursor (see dpm_outbox_next). */
static dpm_status_t next_pending(dpm_outbox_t *ob, uint32_t *cursor, uint8_t *rec,
                                 dpm_outbox_entry_t *e, int *found)
{
    uint32_t pos = *cursor < HDR ? HDR : *cursor;
    *found = 0;
    while (pos < ob->wpos) {
        int kind = 0;
        uint32_t n = 0;
        dpm_status_t st = read_record(ob, pos, rec, &kind, &n);
        if (st != DPM_OK) {
            return st;
        }
        if (kind != 1) {
            ob->stale = 1; /* storage changed under us: end here, re-read on next use */
            break;
        }
        if (rec[1] == REC_PENDING) {
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

dpm_status_t dpm_outbox_put(dpm_outbox_t *ob, const uint8_t *report, size_t len)
{
    dpm_report_t decoded;
    if (!usable(ob) || report == NULL || len < MIN_PAYLOAD || len > DPM_OUTBOX_MAX_PAYLOAD ||
        report[0] != 0x0Au || report[1] != DPM_REPORT_ID_BYTES ||
        dpm_report_decode(report, len, &decoded) != DPM_OK) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = refresh(ob);
    if (st != DPM_OK) {
        return st;
    }
    /* One record per id: an identical re-put is a no-op, a different one an error. */
    uint8_t rec[DPM_OUTBOX_RECORD_MAX];
    uint32_t cursor = 0;
    int found = 1;
    while (found) {
        dpm_outbox_entry_t e;
        st = next_pending(ob, &cursor, rec, &e, &found);
        if (st != DPM_OK) {
            return st;
        }
        if (found && memcmp(e.report_id, report + ID_PREFIX, DPM_REPORT_ID_BYTES) == 0) {
            return e.len == len && memcmp(rec + REC_HDR, report, len) == 0 ? DPM_OK : DPM_ERR_PARAM;
        }
    }
    uint32_t size = REC_HDR + (uint32_t)len;
    if ((uint64_t)HDR + ob->pending_bytes + size > ob->bank_size) {
        return DPM_ERR_BUFFER;
    }
    if (ob->dirty || (uint64_t)ob->wpos + size > ob->bank_size) {
        st = compact(ob);
        if (st != DPM_OK) {
            return st;
        }
    }
    rec[0] = (uint8_t)REC_MARK;
    rec[1] = (uint8_t)REC_PENDING;
    dpm_put_le16(rec + 2, (uint16_t)len);
    memcpy(rec + REC_HDR, report, len);
    dpm_put_le32(rec + 4, record_crc(rec, (uint32_t)len));
    st = dpm_persist_write(ob->storage, active_base(ob) + ob->wpos, rec, size);
    if (st != DPM_OK) {
        ob->stale = 1;
        return st;
    }
    ob->wpos += size;
    ob->pending++;
    ob->pending_bytes += size;
    return DPM_OK;
}

int dpm_outbox_room(const dpm_outbox_t *ob, size_t len)
{
    return usable(ob) && len >= MIN_PAYLOAD && len <= DPM_OUTBOX_MAX_PAYLOAD &&
           (uint64_t)HDR + ob->pending_bytes + REC_HDR + len <= ob->bank_size;
}

uint32_t dpm_outbox_pending(const dpm_outbox_t *ob)
{
    return usable(ob) ? ob->pending : 0;
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
    int kind = 0;
    uint32_t n = 0;
    st = read_record(ob, e->pos, rec, &kind, &n);
    if (st != DPM_OK) {
        return st;
    }
    if (kind != 1) {
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
    if (st != DPM_OK || rec[1] != REC_PENDING) {
        return st;
    }
    const uint8_t removed = (uint8_t)REC_REMOVED;
    st = dpm_persist_write(ob->storage, active_base(ob) + e->pos + 1u, &removed, 1);
    if (st != DPM_OK) {
        ob->stale = 1;
        return st;
    }
    ob->pending--;
    ob->pending_bytes -= REC_HDR + e->len;
    ob->removed++;
    return DPM_OK;
}
