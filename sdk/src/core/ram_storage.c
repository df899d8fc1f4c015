/* SPDX-License-Identifier: Apache-2.0 */
/* A storage in caller RAM (see dpm/ram_storage.h). */
#include "dpm_internal.h"

#include "dpm/ram_storage.h"

static int in_range(const dpm_ram_storage_t *r, uint32_t offset, size_t len)
{
    return r != NULL && r->mem != NULL && (uint64_t)offset + len <= r->size;
}

static int ram_read(void *ctx, uint32_t offset, uint8_t *buf, size_t len)
{
    dpm_ram_storage_t *r = ctx;
    if (!in_range(r, offset, len) || buf == NULL) {
        return -1;
    }
    memcpy(buf, r->mem + offset, len);
    return 0;
}

static int ram_write(void *ctx, uint32_t offset, const uint8_t *buf, size_t len)
{
    dpm_ram_storage_t *r = ctx;
    if (!in_range(r, offset, len) || buf == NULL) {
        return -1;
    }
    memcpy(r->mem + offset, buf, len);
    return 0;
}

static int ram_erase(void *ctx, uint32_t offset, size_t len)
{
    dpm_ram_storage_t *r = ctx;
    if (!in_range(r, offset, len)) {
        return -1;
    }
    memset(r->mem + offset, 0xFF, len);
    return 0;
}

dpm_storage_t dpm_ram_storage(dpm_ram_storage_t *r, uint8_t *mem, uint32_t size)
{
    dpm_storage_t s = {ram_read, ram_write, ram_erase, 0, r};
    if (r != NULL) {
        r->mem = mem; /* NULL: a storage whose every call fails */
        r->size = mem != NULL ? size : 0;
        s.size = r->size;
    }
    if (r != NULL && mem != NULL) {
        memset(mem, 0xFF, size);
    }
    return s;
}
