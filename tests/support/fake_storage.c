/* SPDX-License-Identifier: Apache-2.0 */
#include "fake_storage.h"

#include <string.h>

void fake_storage_init(fake_storage_t *f, uint8_t *mem, uint32_t size, int flash)
{
    memset(f, 0, sizeof(*f));
    f->mem = mem;
    f->size = size;
    f->flash = flash;
    memset(mem, 0xFF, size);
}

void fake_storage_arm(fake_storage_t *f, uint64_t fail_at, fake_fail_t mode, fake_torn_t torn)
{
    f->fail_at = fail_at;
    f->mode = mode;
    f->torn = torn;
}

void fake_storage_reboot(fake_storage_t *f)
{
    f->crashed = 0;
    f->fail_at = 0;
    f->mode = FAKE_NONE;
}

static int in_range(const fake_storage_t *f, uint32_t off, size_t len)
{
    return (uint64_t)off + len <= f->size;
}

static size_t torn_prefix(const fake_storage_t *f, size_t len)
{
    if (len <= 1) {
        return 0;
    }
    switch (f->torn) {
    case FAKE_TORN_ONE: return 1;
    case FAKE_TORN_HALF: return len / 2;
    case FAKE_TORN_ALL_BUT_ONE: return len - 1;
    }
    return 0;
}

static void apply_write(fake_storage_t *f, uint32_t off, const uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        f->mem[off + i] = f->flash ? (uint8_t)(f->mem[off + i] & buf[i]) : buf[i];
    }
    f->bytes_written += len;
}

/* 1 if this operation is the armed failure (and then the fake has crashed). */
static int trip(fake_storage_t *f, size_t *applied, size_t len)
{
    f->ops++;
    if (f->fail_at == 0 || f->ops != f->fail_at) {
        return 0;
    }
    f->crashed = 1;
    *applied = f->mode == FAKE_TORN ? torn_prefix(f, len) : 0;
    return 1;
}

static int fs_read(void *ctx, uint32_t off, uint8_t *buf, size_t len)
{
    fake_storage_t *f = ctx;
    f->reads++;
    if (f->crashed || f->fail_reads || buf == NULL || !in_range(f, off, len)) {
        return -1;
    }
    memcpy(buf, f->mem + off, len);
    return 0;
}

static int fs_write(void *ctx, uint32_t off, const uint8_t *buf, size_t len)
{
    fake_storage_t *f = ctx;
    f->writes++;
    if (f->crashed || buf == NULL || !in_range(f, off, len)) {
        return -1;
    }
    size_t applied = 0;
    if (trip(f, &applied, len)) {
        apply_write(f, off, buf, applied);
        return -1;
    }
    if (f->fail_writes) {
        return -1;
    }
    apply_write(f, off, buf, len);
    return 0;
}

static int fs_erase(void *ctx, uint32_t off, size_t len)
{
    fake_storage_t *f = ctx;
    f->erases++;
    if (f->crashed || !in_range(f, off, len)) {
        return -1;
    }
    size_t applied = 0;
    if (trip(f, &applied, len)) {
        memset(f->mem + off, 0xFF, applied);
        return -1;
    }
    if (f->fail_writes) {
        return -1;
    }
    memset(f->mem + off, 0xFF, len);
    return 0;
}

dpm_storage_t fake_storage_port(fake_storage_t *f)
{
    dpm_storage_t st = {fs_read, fs_write, fs_erase, f->size, f};
    return st;
}
