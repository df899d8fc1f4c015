/* SPDX-License-Identifier: Apache-2.0 */
/* CRC-32 and verified storage access for the ledger and the outbox (see persist.h). */
#include "dpm_internal.h"

#include "core/persist.h"

/* Chunk for read-back and erased checks: small, on the stack. */
#define PERSIST_CHUNK 32u

uint32_t dpm_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    /* Half-byte table: 64 bytes of constants instead of 1 KiB, two lookups per byte. */
    static const uint32_t table[16] = {0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu,
                                       0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
                                       0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
                                       0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ table[crc & 0x0Fu];
        crc = (crc >> 4) ^ table[crc & 0x0Fu];
    }
    return ~crc;
}

int dpm_persist_in_range(const dpm_storage_t *st, uint32_t offset, uint32_t len)
{
    return st != NULL && (uint64_t)offset + len <= (uint64_t)st->size;
}

dpm_status_t dpm_persist_read(const dpm_storage_t *st, uint32_t offset, uint8_t *buf, size_t len)
{
    if (len == 0) {
        return DPM_OK;
    }
    return st->read(st->ctx, offset, buf, len) == 0 ? DPM_OK : DPM_ERR_STORAGE;
}

dpm_status_t dpm_persist_write(const dpm_storage_t *st, uint32_t offset, const uint8_t *buf,
                               size_t len)
{
    if (st->write(st->ctx, offset, buf, len) != 0) {
        return DPM_ERR_STORAGE;
    }
    uint8_t back[PERSIST_CHUNK];
    size_t done = 0;
    while (done < len) {
        size_t n = len - done < sizeof(back) ? len - done : sizeof(back);
        if (st->read(st->ctx, offset + (uint32_t)done, back, n) != 0 ||
            memcmp(back, buf + done, n) != 0) {
            return DPM_ERR_STORAGE;
        }
        done += n;
    }
    return DPM_OK;
}

dpm_status_t dpm_persist_erase(const dpm_storage_t *st, uint32_t offset, size_t len)
{
    return st->erase(st->ctx, offset, len) == 0 ? DPM_OK : DPM_ERR_STORAGE;
}

dpm_status_t dpm_persist_is_erased(const dpm_storage_t *st, uint32_t offset, uint32_t len,
                                   int *erased)
{
    uint8_t chunk[PERSIST_CHUNK];
    uint32_t done = 0;
    int all = 1;
    while (done < len && all) {
        uint32_t n = len - done < sizeof(chunk) ? len - done : (uint32_t)sizeof(chunk);
        if (st->read(st->ctx, offset + done, chunk, n) != 0) {
            return DPM_ERR_STORAGE;
        }
        for (uint32_t i = 0; i < n; i++) {
            if (chunk[i] != 0xFFu) {
                all = 0;
            }
        }
        done += n;
    }
    *erased = all;
    return DPM_OK;
}

dpm_status_t dpm_persist_crc(const dpm_storage_t *st, uint32_t offset, uint32_t len,
                             uint32_t crc_in, uint32_t *crc)
{
    uint8_t chunk[PERSIST_CHUNK];
    uint32_t done = 0;
    uint32_t c = crc_in;
    while (done < len) {
        uint32_t n = len - done < sizeof(chunk) ? len - done : (uint32_t)sizeof(chunk);
        if (st->read(st->ctx, offset + done, chunk, n) != 0) {
            return DPM_ERR_STORAGE;
        }
        c = dpm_crc32(c, chunk, n);
        done += n;
    }
    *crc = c;
    return DPM_OK;
}

dpm_status_t dpm_persist_anchor_written(const dpm_storage_t *anchor, uint32_t offset, uint32_t len,
                                        int *written)
{
    int erased = 1;
    dpm_status_t st = anchor == NULL ? DPM_OK : dpm_persist_is_erased(anchor, offset, len, &erased);
    *written = !erased;
    return st;
}

dpm_status_t dpm_persist_anchor_ensure(const dpm_storage_t *anchor, uint32_t offset,
                                       const uint8_t *mark, uint32_t len)
{
    int written = 1;
    dpm_status_t st = dpm_persist_anchor_written(anchor, offset, len, &written);
    if (st == DPM_OK && anchor != NULL && !written) {
        st = dpm_persist_write(anchor, offset, mark, len);
    }
    return st;
}
