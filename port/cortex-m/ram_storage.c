/* SPDX-License-Identifier: Apache-2.0 */
/* dpm_storage_t over a RAM buffer. Each call is one bounds-checked copy that nothing
 * interrupts, which gives the contract's atomic writes; erase sets 0xFF like NOR flash. */
#include <string.h>

#include "dpm/port_cortex_m.h"

static int in_range(const dpm_cm_ram_storage_t *s, uint32_t offset, size_t len)
{
    return offset <= s->size && len <= (size_t)(s->size - offset);
}

static int ram_read(void *ctx, uint32_t offset, uint8_t *buf, size_t len)
{
    const dpm_cm_ram_storage_t *s = ctx;
    if (buf == NULL || !in_range(s, offset, len)) {
        return -1;
    }
    memcpy(buf, s->mem + offset, len);
    return 0;
}

static int ram_write(void *ctx, uint32_t offset, const uint8_t *buf, size_t len)
{
    dpm_cm_ram_storage_t *s = ctx;
    if (buf == NULL || !in_range(s, offset, len)) {
        return -1;
    }
    memmove(s->mem + offset, buf, len);
    return 0;
}

static int ram_erase(void *ctx, uint32_t offset, size_t len)
{
    dpm_cm_ram_storage_t *s = ctx;
    if (!in_range(s, offset, len)) {
        return -1;
    }
    memset(s->mem + offset, 0xFF, len);
    return 0;
}

int dpm_cm_ram_storage_init(dpm_cm_ram_storage_t *s, uint8_t *mem, uint32_t size)
{
    if (s == NULL || mem == NULL || size == 0) {
        return -1;
    }
    s->mem = mem;
    s->size = size;
    memset(mem, 0xFF, size);
    return 0;
}

dpm_storage_t dpm_cm_ram_storage(dpm_cm_ram_storage_t *s)
{
    dpm_storage_t st = {ram_read, ram_write, ram_erase, s->size, s};
    return st;
}
