/* SPDX-License-Identifier: Apache-2.0 */
/* The privacy ledger: per-campaign, per-period ε spending in two A/B storage slots (the
 * layout and the crash-safety argument are in dpm/budget.h). */
#include "dpm_internal.h"

#include "core/persist.h"
#include "dpm/budget.h"

#define LEDGER_MAGIC 0x474C5044u /* "DPLG" little-endian */
#define LEDGER_VERSION 1u
#define LEDGER_HDR 12u
#define LEDGER_ENTRY 12u
#define LEDGER_CRC 4u

typedef char record_fits_u32[DPM_LEDGER_RECORD_MAX < 0x10000u ? 1 : -1];

typedef struct {
    uint32_t campaign_id;
    uint32_t period;
    uint32_t spent;
} ledger_entry_t;

/* A decoded record. */
typedef struct {
    uint32_t seq;
    uint32_t count;
    ledger_entry_t e[DPM_LEDGER_MAX_CAMPAIGNS];
} ledger_rec_t;

typedef enum {
    SLOT_ERASED,  /* every byte 0xFF */
    SLOT_GARBAGE, /* not a complete record: torn write or erase, or never written */
    SLOT_VALID,   /* a complete, consistent record */
    SLOT_INSANE   /* CRC-valid or versioned, but impossible: corruption, fail closed */
} slot_kind_t;

static uint32_t slot_base(const dpm_ledger_t *l, uint32_t slot)
{
    return l->offset + slot * l->slot_size;
}

static uint32_t record_len(uint32_t count)
{
    return LEDGER_HDR + LEDGER_ENTRY * count + LEDGER_CRC;
}

/* Read and classify one slot. *rec is filled only for SLOT_VALID. */
static dpm_status_t read_slot(const dpm_ledger_t *l, uint32_t slot, ledger_rec_t *rec,
                              slot_kind_t *kind)
{
    uint8_t buf[DPM_LEDGER_RECORD_MAX];
    uint32_t base = slot_base(l, slot);
    dpm_status_t st = dpm_persist_read(l->storage, base, buf, LEDGER_HDR);
    if (st != DPM_OK) {
        return st;
    }
    if (dpm_get_le32(buf) != LEDGER_MAGIC) {
        int erased = 0;
        *kind = SLOT_GARBAGE;
        if (buf[0] == 0xFFu) {
            st = dpm_persist_is_erased(l->storage, base, l->slot_size, &erased);
            if (st == DPM_OK && erased) {
                *kind = SLOT_ERASED;
            }
        }
        return st;
    }
    uint32_t version = buf[4];
    uint32_t count = buf[5];
    if (version == 0xFFu) { /* a write torn right after the magic */
        *kind = SLOT_GARBAGE;
        return DPM_OK;
    }
    /* Our magic with a version we do not know, or more campaigns than we can hold: written
     * by other firmware, or damaged. Falling back to the other slot could under-count, so
     * this is corruption whatever the CRC says. (A torn write cannot produce it: it leaves a
     * prefix of our own bytes, or 0xFF.) */
    if (version != LEDGER_VERSION || count > DPM_LEDGER_MAX_CAMPAIGNS) {
        *kind = SLOT_INSANE;
        return DPM_OK;
    }
    uint32_t len = record_len(count);
    if (len > l->slot_size) {
        *kind = SLOT_INSANE;
        return DPM_OK;
    }
    st = dpm_persist_read(l->storage, base + LEDGER_HDR, buf + LEDGER_HDR, len - LEDGER_HDR);
    if (st != DPM_OK) {
        return st;
    }
    if (dpm_crc32(0, buf, len - LEDGER_CRC) != dpm_get_le32(buf + len - LEDGER_CRC)) {
        *kind = SLOT_GARBAGE;
        return DPM_OK;
    }
    ledger_rec_t r;
    r.seq = dpm_get_le32(buf + 8);
    r.count = count;
    int sane = dpm_get_le16(buf + 6) == 0;
    for (uint32_t i = 0; i < count && sane; i++) {
        const uint8_t *p = buf + LEDGER_HDR + (size_t)LEDGER_ENTRY * i;
        r.e[i].campaign_id = dpm_get_le32(p);
        r.e[i].period = dpm_get_le32(p + 4);
        r.e[i].spent = dpm_get_le32(p + 8);
        if (r.e[i].spent == 0) {
            sane = 0; /* an entry exists only after a charge of eps > 0 */
        }
        for (uint32_t j = 0; j < i && sane; j++) {
            if (r.e[j].campaign_id == r.e[i].campaign_id) {
                sane = 0;
            }
        }
    }
    if (!sane) {
        *kind = SLOT_INSANE;
        return DPM_OK;
    }
    *rec = r;
    *kind = SLOT_VALID;
    return DPM_OK;
}

/* What the two slots say together. */
typedef enum {
    LOAD_OK,     /* *cur is the newest record, in slot *cur_slot */
    LOAD_FRESH,  /* no record, and the region is new or its initialisation was interrupted */
    LOAD_CORRUPT /* fail closed */
} load_result_t;

static dpm_status_t load(const dpm_ledger_t *l, ledger_rec_t *cur, uint32_t *cur_slot,
                         load_result_t *res)
{
    ledger_rec_t r[2];
    slot_kind_t k[2];
    for (uint32_t s = 0; s < 2; s++) {
        dpm_status_t st = read_slot(l, s, &r[s], &k[s]);
        if (st != DPM_OK) {
            return st;
        }
    }
    *res = LOAD_CORRUPT;
    if (k[0] == SLOT_INSANE || k[1] == SLOT_INSANE) {
        return DPM_OK;
    }
    if (k[0] == SLOT_VALID && k[1] == SLOT_VALID) {
        /* Consecutive sequence numbers (mod 2^32), the newer one wins; anything else cannot
         * come from this code and is corruption. */
        uint32_t newer;
        if (r[1].seq - r[0].seq == 1u) {
            newer = 1;
        } else if (r[0].seq - r[1].seq == 1u) {
            newer = 0;
        } else {
            return DPM_OK;
        }
        *cur = r[newer];
        *cur_slot = newer;
        *res = LOAD_OK;
    } else if (k[0] == SLOT_VALID || k[1] == SLOT_VALID) {
        /* The other slot is erased or holds a torn write: the interrupted charge never
         * returned DPM_OK, so the valid record counts every report that exists. */
        uint32_t s = k[0] == SLOT_VALID ? 0u : 1u;
        *cur = r[s];
        *cur_slot = s;
        *res = LOAD_OK;
    } else if (k[1] == SLOT_ERASED) {
        /* B erased and no valid record: a new region, or an initialisation or reset that
         * was interrupted while writing A (both write A only while B is erased). */
        *res = LOAD_FRESH;
    }
    return DPM_OK;
}

/* Erase `slot`, write *r into it and read it back. */
static dpm_status_t store(const dpm_ledger_t *l, uint32_t slot, const ledger_rec_t *r)
{
    uint8_t buf[DPM_LEDGER_RECORD_MAX];
    uint32_t len = record_len(r->count);
    dpm_put_le32(buf, LEDGER_MAGIC);
    buf[4] = (uint8_t)LEDGER_VERSION;
    buf[5] = (uint8_t)r->count;
    dpm_put_le16(buf + 6, 0);
    dpm_put_le32(buf + 8, r->seq);
    for (uint32_t i = 0; i < r->count; i++) {
        uint8_t *p = buf + LEDGER_HDR + (size_t)LEDGER_ENTRY * i;
        dpm_put_le32(p, r->e[i].campaign_id);
        dpm_put_le32(p + 4, r->e[i].period);
        dpm_put_le32(p + 8, r->e[i].spent);
    }
    dpm_put_le32(buf + len - LEDGER_CRC, dpm_crc32(0, buf, len - LEDGER_CRC));
    uint32_t base = slot_base(l, slot);
    dpm_status_t st = dpm_persist_erase(l->storage, base, l->slot_size);
    if (st == DPM_OK) {
        st = dpm_persist_write(l->storage, base, buf, len);
    }
    return st;
}

/* Write an empty record with seq 1 into slot A (B must be erased). */
static dpm_status_t init_fresh(const dpm_ledger_t *l)
{
    ledger_rec_t r;
    memset(&r, 0, sizeof(r));
    r.seq = 1;
    return store(l, 0, &r);
}

static int usable(const dpm_ledger_t *l)
{
    return l != NULL && l->opened == DPM_LEDGER_OPENED && l->storage != NULL;
}

/* Load the newest record for a charge or a query; a ledger found corrupt stays corrupt. */
static dpm_status_t load_current(dpm_ledger_t *l, ledger_rec_t *cur, uint32_t *cur_slot)
{
    if (l->state != DPM_OK) {
        return DPM_ERR_CORRUPT;
    }
    load_result_t res;
    dpm_status_t st = load(l, cur, cur_slot, &res);
    if (st != DPM_OK) {
        return st;
    }
    if (res != LOAD_OK) {
        /* open() left a valid record; none now means the storage changed underneath. */
        l->state = DPM_ERR_CORRUPT;
        return DPM_ERR_CORRUPT;
    }
    l->seq = cur->seq;
    return DPM_OK;
}

dpm_status_t dpm_ledger_open(dpm_ledger_t *l, const dpm_storage_t *storage, uint32_t offset,
                             uint32_t size)
{
    if (l == NULL || storage == NULL || storage->read == NULL || storage->write == NULL ||
        storage->erase == NULL || size < DPM_LEDGER_MIN_REGION ||
        !dpm_persist_in_range(storage, offset, size)) {
        return DPM_ERR_PARAM;
    }
    dpm_ledger_t t;
    memset(&t, 0, sizeof(t));
    t.storage = storage;
    t.offset = offset;
    t.slot_size = size / 2u;
    t.opened = DPM_LEDGER_OPENED;
    ledger_rec_t cur;
    uint32_t cur_slot = 0;
    load_result_t res;
    dpm_status_t st = load(&t, &cur, &cur_slot, &res);
    if (st != DPM_OK) {
        return st;
    }
    if (res == LOAD_FRESH) {
        st = init_fresh(&t);
        if (st != DPM_OK) {
            return st;
        }
        t.seq = 1;
    } else if (res == LOAD_CORRUPT) {
        t.state = DPM_ERR_CORRUPT;
        st = DPM_ERR_CORRUPT;
    } else {
        t.seq = cur.seq;
    }
    *l = t;
    return st;
}

dpm_status_t dpm_ledger_charge(dpm_ledger_t *l, uint32_t campaign_id, uint32_t period,
                               dpm_eps_t eps_q16, dpm_eps_t budget_q16)
{
    if (!usable(l) || eps_q16 == 0 || budget_q16 == 0) {
        return DPM_ERR_PARAM;
    }
    ledger_rec_t cur;
    uint32_t cur_slot = 0;
    dpm_status_t st = load_current(l, &cur, &cur_slot);
    if (st != DPM_OK) {
        return st;
    }
    uint32_t i = 0;
    while (i < cur.count && cur.e[i].campaign_id != campaign_id) {
        i++;
    }
    uint64_t spent = 0;
    if (i < cur.count) {
        if (period < cur.e[i].period) {
            return DPM_ERR_PARAM; /* a closed period: its spending is gone */
        }
        if (period == cur.e[i].period) {
            spent = cur.e[i].spent;
        }
    }
    if (spent + eps_q16 > budget_q16) {
        return DPM_ERR_BUDGET;
    }
    if (i == cur.count) {
        if (cur.count == DPM_LEDGER_MAX_CAMPAIGNS) {
            return DPM_ERR_BUFFER;
        }
        cur.count++;
        cur.e[i].campaign_id = campaign_id;
    }
    cur.e[i].period = period;
    cur.e[i].spent = (uint32_t)(spent + eps_q16); /* <= budget_q16, fits */
    cur.seq++; /* mod 2^32: the consecutive-pair test in load() wraps the same way */
    st = store(l, 1u - cur_slot, &cur);
    if (st == DPM_OK) {
        l->seq = cur.seq;
    }
    return st;
}

dpm_status_t dpm_ledger_spent(dpm_ledger_t *l, uint32_t campaign_id, uint32_t period,
                              dpm_eps_t *spent)
{
    if (!usable(l) || spent == NULL) {
        return DPM_ERR_PARAM;
    }
    ledger_rec_t cur;
    uint32_t cur_slot = 0;
    dpm_status_t st = load_current(l, &cur, &cur_slot);
    if (st != DPM_OK) {
        return st;
    }
    dpm_eps_t s = 0;
    for (uint32_t i = 0; i < cur.count; i++) {
        if (cur.e[i].campaign_id == campaign_id) {
            if (period < cur.e[i].period) {
                return DPM_ERR_PARAM;
            }
            if (period == cur.e[i].period) {
                s = cur.e[i].spent;
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
     * ledger (A still valid) or an interrupted reset that open() completes. */
    dpm_status_t st = dpm_persist_erase(l->storage, slot_base(l, 1), l->slot_size);
    if (st == DPM_OK) {
        st = init_fresh(l); /* erases A, writes the empty record */
    }
    if (st == DPM_OK) {
        l->seq = 1;
        l->state = DPM_OK;
    }
    return st;
}
