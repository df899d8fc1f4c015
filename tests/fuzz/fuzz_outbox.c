/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: the outbox recovering from arbitrary storage contents (dpm_outbox_open, or
 * dpm_outbox_open_anchored with arbitrary anchor bytes), then iterating, reading, putting and
 * removing over it.
 * Input: byte 0 flags (bit 0 NOR-flash semantics, bit 1 a larger region, bit 2 a storage
 * fault at the operation byte 1 names, bit 3 the fault tears, bit 6 anchored), bytes 2..9
 * eight operations (low 3 bits: iterate and read all, put, put, remove the first, reopen, put
 * again an already pending report, read into a short buffer, format; the high bits pick the
 * report); anchored, the next 8 bytes are the anchor's initial bytes (its own storage, no
 * fault); the rest the region's initial bytes (0xFF beyond the input).
 * Checked beyond the sanitizers:
 *   - a report whose put returned DPM_OK is found, with its bytes, by every later iteration,
 *     across reopens (reboots) and storage faults, until a remove of it was attempted;
 *   - putting an already pending report again is DPM_OK and stores nothing new;
 *   - while nothing failed since the last open, the pending count equals what iteration
 *     finds, and every entry reads back with its CRC intact;
 *   - the outbox never stores a second copy of an id (a region may arrive with duplicates);
 *   - dpm_outbox_room promised room: put does not answer DPM_ERR_BUFFER;
 * and, anchored:
 *   - a region that reads as new (all erased) under a written anchor opens counting the erase
 *     as a loss (found_erased and lost at least 1), never as a new, silent outbox;
 *   - every DPM_OK open leaves the anchor written; the SDK writes an erased anchor once
 *     ("DPOB-ANC") and never changes a written one. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/report.h"
#include "dpm/expert/uploader.h"
#include "dpm/expert/outbox.h"
#include "fake_storage.h"
#include "fuzz_fixtures.h"

#define NREP 16

static uint8_t mem[2 * DPM_OUTBOX_MIN_REGION + 512];
static uint8_t anchor_mem[DPM_OUTBOX_ANCHOR_BYTES];
static const uint8_t ANCHOR_MARK[DPM_OUTBOX_ANCHOR_BYTES] = {'D', 'P', 'O', 'B',
                                                             '-', 'A', 'N', 'C'};

/* The anchor either stays as the input left it, or goes from erased to the SDK's mark. */
static void check_anchor(const uint8_t *initial)
{
    fuzz_check_anchor(anchor_mem, initial, ANCHOR_MARK, sizeof(anchor_mem));
}

typedef struct {
    dpm_outbox_t *ob;
    const dpm_storage_t *st, *anchor; /* anchor NULL: dpm_outbox_open */
    uint32_t region;
} opener_t;

static dpm_status_t reopen(const opener_t *o)
{
    dpm_status_t s = o->anchor == NULL
                         ? dpm_outbox_open(o->ob, o->st, 0, o->region)
                         : dpm_outbox_open_anchored(o->ob, o->st, 0, o->region, o->anchor, 0);
    if (o->anchor != NULL && s == DPM_OK && fuzz_all_erased(anchor_mem, sizeof(anchor_mem))) {
        abort(); /* an outbox exists, yet the anchor does not say so */
    }
    return s;
}

typedef struct {
    uint8_t bytes[DPM_REPORT_MAX_BYTES];
    size_t len;
    int acked;          /* put returned DPM_OK */
    int remove_tried;   /* a remove of it was attempted (it may be gone) */
} tracked_t;

static tracked_t rep[NREP];

static void make_report(int k)
{
    dpm_report_t r;
    memset(&r, 0, sizeof(r));
    memset(r.report_id, 0xC0 + k, DPM_REPORT_ID_BYTES);
    r.campaign_id = 171;
    r.mechanism = DPM_MECH_ID_TUPLE_MR;
    r.eps = 65536;
    r.body.tuple.group = (uint32_t)k % 4u;
    r.body.tuple.nmetrics = 1u + (uint32_t)k % 4u;
    for (uint32_t i = 0; i < r.body.tuple.nmetrics; i++) {
        r.body.tuple.value[i] = (k + (int)i) & 1 ? 1 : -1;
    }
    if (dpm_report_encode(&r, rep[k].bytes, sizeof(rep[k].bytes), &rep[k].len) != DPM_OK) {
        abort();
    }
}

/* k if id is report k's (16 bytes 0xC0 + k), else -1. */
static int our_report(const uint8_t *id)
{
    int k = id[0] - 0xC0;
    for (int i = 1; k >= 0 && k < NREP && i < DPM_REPORT_ID_BYTES; i++) {
        if (id[i] != id[0]) {
            return -1;
        }
    }
    return k >= 0 && k < NREP ? k : -1;
}

/* How often each of our report ids occurs in the region as first opened: storage written by
 * something else may hold one id twice (harmless: the collector de-duplicates); the outbox
 * itself must never write a second copy. */
static int initial_copies[NREP];

/* Iterate everything. Returns the number of entries, or -1 if the iteration stopped on a
 * storage error or a record that failed its CRC (allowed: storage we do not control).
 * copies (NREP ints, may be NULL) counts each of our ids. */
static int iterate(dpm_outbox_t *ob, int *found_rep, dpm_outbox_entry_t *first, int *copies)
{
    int n = 0;
    uint32_t cursor = 0;
    int local[NREP];
    copies = copies != NULL ? copies : local;
    memset(found_rep, 0, NREP * sizeof(int));
    memset(copies, 0, NREP * sizeof(int));
    for (;;) {
        dpm_outbox_entry_t e;
        int found = 0;
        if (dpm_outbox_next(ob, &cursor, &e, &found) != DPM_OK) {
            return -1;
        }
        if (!found) {
            return n;
        }
        int k = our_report(e.report_id);
        if (k >= 0 && ++copies[k] > 1 && copies[k] > initial_copies[k]) {
            abort(); /* the outbox stored one of our ids twice */
        }
        if (n == 0 && first != NULL) {
            *first = e;
        }
        n++;
        uint8_t buf[DPM_OUTBOX_MAX_PAYLOAD];
        dpm_status_t st = dpm_outbox_read(ob, &e, buf, sizeof(buf));
        if (st != DPM_OK) {
            if (st != DPM_ERR_CORRUPT && st != DPM_ERR_STORAGE) {
                abort();
            }
            return -1;
        }
        if (k >= 0 && rep[k].acked && e.len == rep[k].len &&
            memcmp(buf, rep[k].bytes, e.len) == 0) {
            found_rep[k] = 1;
        }
    }
}

/* Every acknowledged report whose removal was never attempted is there. */
static void check_durable(dpm_outbox_t *ob)
{
    int found[NREP];
    if (iterate(ob, found, NULL, NULL) < 0) {
        abort(); /* the outbox wrote everything it holds now: it must read back */
    }
    for (int k = 0; k < NREP; k++) {
        if (rep[k].acked && !rep[k].remove_tried && !found[k]) {
            abort(); /* an acknowledged report was lost */
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 10) {
        return 0;
    }
    for (int k = 0; k < NREP; k++) {
        make_report(k);
        rep[k].acked = 0;
        rep[k].remove_tried = 0;
    }
    uint8_t flags = data[0];
    uint32_t region = flags & 2u ? (uint32_t)sizeof(mem) : DPM_OUTBOX_MIN_REGION;
    int anchored = (flags & 0x40u) != 0;
    size_t skip = anchored ? 10u + DPM_OUTBOX_ANCHOR_BYTES : 10u;
    if (size < skip) {
        return 0;
    }
    fake_storage_t fs, afs;
    fake_storage_init(&fs, mem, sizeof(mem), flags & 1u);
    fake_storage_init(&afs, anchor_mem, sizeof(anchor_mem), flags & 1u);
    if (anchored) {
        memcpy(anchor_mem, data + 10, sizeof(anchor_mem));
    }
    uint8_t anchor0[DPM_OUTBOX_ANCHOR_BYTES];
    memcpy(anchor0, anchor_mem, sizeof(anchor0));
    size_t n = size - skip < sizeof(mem) ? size - skip : sizeof(mem);
    memcpy(mem, data + skip, n);
    if (flags & 4u) {
        fake_storage_arm(&fs, 1u + data[1] % 32u, flags & 8u ? FAKE_TORN : FAKE_NOT_APPLIED,
                         (fake_torn_t)((flags >> 4) % 3u));
    }
    dpm_storage_t st = fake_storage_port(&fs);
    dpm_storage_t ast = fake_storage_port(&afs);
    dpm_outbox_t ob;
    opener_t o = {&ob, &st, anchored ? &ast : NULL, region};
    int fresh_region = fuzz_all_erased(mem, region);
    dpm_status_t open = reopen(&o);
    if (anchored && fresh_region && !fuzz_all_erased(anchor0, sizeof(anchor0)) && open == DPM_OK) {
        dpm_outbox_stats_t stats;
        if (dpm_outbox_stats(&ob, &stats) != DPM_OK || stats.found_erased < 1 || stats.lost < 1) {
            abort(); /* an erased outbox under a written anchor must count its loss */
        }
    }
    /* what the region held before this run wrote anything */
    for (int k = 0; k < NREP; k++) {
        initial_copies[k] = INT_MAX; /* unknown: no duplicate check */
    }
    if (open == DPM_OK && !fs.crashed) {
        int found[NREP], copies[NREP];
        if (iterate(&ob, found, NULL, copies) >= 0) {
            memcpy(initial_copies, copies, sizeof(copies));
        }
    }
    /* in sync: opened, and no storage failure since (the count must match iteration) */
    int sync = open == DPM_OK && !fs.crashed;
    for (int i = 0; i < 8; i++) {
        uint8_t op = data[2 + i];
        int k = (op >> 3) % NREP;
        if (fs.crashed) {
            fake_storage_reboot(&fs);
            open = reopen(&o);
            sync = open == DPM_OK;
        }
        if (open != DPM_OK) {
            if (open != DPM_ERR_CORRUPT && open != DPM_ERR_STORAGE) {
                abort();
            }
            if ((op & 7u) == 7u) {
                open = dpm_outbox_format(&ob, &st, 0, region);
                sync = open == DPM_OK && !fs.crashed;
                for (int j = 0; j < NREP; j++) {
                    rep[j].acked = 0; /* a format discards everything, by contract */
                }
            }
            continue;
        }
        int found[NREP];
        dpm_outbox_entry_t first;
        int count;
        dpm_status_t s;
        switch (op & 7u) {
        case 0:
            count = iterate(&ob, found, NULL, NULL);
            if (sync && (count < 0 || (uint32_t)count != dpm_outbox_pending(&ob))) {
                abort(); /* RAM that nothing changed behind the outbox's back */
            }
            break;
        case 1:
        case 2: {
            int room = dpm_outbox_room(&ob, rep[k].len);
            s = dpm_outbox_put(&ob, rep[k].bytes, rep[k].len);
            if (s == DPM_OK) {
                rep[k].acked = 1;
                rep[k].remove_tried = 0;
            } else if (s == DPM_ERR_BUFFER && room && !fs.crashed) {
                abort(); /* room() promised room */
            } else if (s != DPM_ERR_BUFFER && s != DPM_ERR_STORAGE && s != DPM_ERR_PARAM &&
                       s != DPM_ERR_CORRUPT) {
                abort();
            }
            break;
        }
        case 3:
            if (iterate(&ob, found, &first, NULL) > 0) {
                int j = our_report(first.report_id);
                if (j >= 0) {
                    rep[j].remove_tried = 1;
                }
                (void)dpm_outbox_remove(&ob, &first);
            }
            break;
        case 4:
            open = reopen(&o);
            sync = open == DPM_OK && !fs.crashed;
            break;
        case 5:
            if (rep[k].acked && !rep[k].remove_tried && !fs.crashed) {
                uint64_t written = fs.bytes_written;
                s = dpm_outbox_put(&ob, rep[k].bytes, rep[k].len);
                if ((sync && s != DPM_OK) || (s == DPM_OK && fs.bytes_written != written)) {
                    abort(); /* putting a pending report again: DPM_OK, nothing stored */
                }
            }
            break;
        case 6:
            if (iterate(&ob, found, &first, NULL) > 0 && first.len > 0) {
                uint8_t small[DPM_OUTBOX_MAX_PAYLOAD];
                s = dpm_outbox_read(&ob, &first, small, first.len - 1u);
                if (s != DPM_ERR_BUFFER && s != DPM_ERR_STORAGE && s != DPM_ERR_CORRUPT) {
                    abort();
                }
            }
            break;
        default:
            break;
        }
        if (fs.crashed) {
            sync = 0;
        }
    }
    /* Power cycle: every acknowledged report survives. */
    fake_storage_reboot(&fs);
    check_anchor(anchor0);
    if (reopen(&o) == DPM_OK) {
        check_durable(&ob);
        check_anchor(anchor0);
    } else {
        for (int k = 0; k < NREP; k++) {
            if (rep[k].acked && !rep[k].remove_tried) {
                abort(); /* reports were acknowledged, and now the outbox will not open */
            }
        }
    }
    return 0;
}
