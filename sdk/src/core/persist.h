/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the two persistent stores of the SDK (the privacy ledger in sdk/src/budget
 * and the outbox in sdk/src/upload): CRC-32, little-endian field access, and storage writes
 * that are read back before they count as done. Internal: not part of the public API. */
#ifndef DPM_PERSIST_H
#define DPM_PERSIST_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/port.h"
#include "dpm/status.h"

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, as zlib's crc32): pass crc = 0 to
 * start, and the previous result to continue over more bytes. crc32("123456789") ==
 * 0xCBF43926. */
uint32_t dpm_crc32(uint32_t crc, const uint8_t *p, size_t n);

/* 1 if dpm_crc32 gives CRC-32's known values, from the start and continued (always, unless
 * the port computes it: DPM_CRC32_TABLE=0). The ledger and the outbox refuse to open
 * otherwise, before they read or write anything. */
int dpm_crc32_ok(void);

static inline uint16_t dpm_get_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t dpm_get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static inline void dpm_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void dpm_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* 1 if [offset, offset + len) of the storage lies inside the storage (no overflow), else 0. */
int dpm_persist_in_range(const dpm_storage_t *st, uint32_t offset, uint32_t len);

/* Read len bytes; DPM_ERR_STORAGE if the port fails. */
dpm_status_t dpm_persist_read(const dpm_storage_t *st, uint32_t offset, uint8_t *buf, size_t len);

/* Write len bytes, then read them back and compare: DPM_OK only if the port reported success
 * AND the storage now holds exactly these bytes (a write that silently did not land, or
 * landed on bytes that were not erased on flash, is caught here). DPM_ERR_STORAGE otherwise;
 * the range then holds unknown bytes. */
dpm_status_t dpm_persist_write(const dpm_storage_t *st, uint32_t offset, const uint8_t *buf,
                               size_t len);

/* Erase [offset, offset + len) to 0xFF. DPM_ERR_STORAGE if the port fails. */
dpm_status_t dpm_persist_erase(const dpm_storage_t *st, uint32_t offset, size_t len);

/* *crc = dpm_crc32(crc_in, the len bytes stored at offset), read in small chunks (a record
 * too long for a caller buffer is checked without copying it). DPM_ERR_STORAGE if a read
 * fails (then *crc is untouched). */
dpm_status_t dpm_persist_crc(const dpm_storage_t *st, uint32_t offset, uint32_t len,
                             uint32_t crc_in, uint32_t *crc);

/* *erased = 1 if every byte of [offset, offset + len) reads 0xFF, else 0. DPM_ERR_STORAGE if
 * a read fails (then *erased is untouched). */
dpm_status_t dpm_persist_is_erased(const dpm_storage_t *st, uint32_t offset, uint32_t len,
                                   int *erased);

/* A write-once anchor (the ledger's and the outbox's, see dpm/expert/budget.h and
 * dpm/bits/storage.h): len bytes at offset of *anchor, erased (0xFF) on a new device and written
 * once the store exists. *written = 1 if any byte is not 0xFF (a damaged anchor must not make a
 * device look new), 0 if all are, or if anchor is NULL (no anchor). DPM_ERR_STORAGE if a read
 * fails. */
dpm_status_t dpm_persist_anchor_written(const dpm_storage_t *anchor, uint32_t offset, uint32_t len,
                                        int *written);

/* Write mark (len bytes) at offset of *anchor if the anchor is still erased; never change a
 * written one. DPM_OK for a NULL anchor. DPM_ERR_STORAGE if the port fails. */
dpm_status_t dpm_persist_anchor_ensure(const dpm_storage_t *anchor, uint32_t offset,
                                       const uint8_t *mark, uint32_t len);

#endif /* DPM_PERSIST_H */
