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
    if (f->torn == FAKE_TORN_LEN) {
        return f->torn_len < len ? f->torn_len : len;
    }
    if (len <= 1) {
        return 0;
    }
    switch (f->torn) {
    case FAKE_TORN_ONE: return 1;
    case FAKE_TORN_HALF: return len / 2;
    case FAKE_TORN_ALL_BUT_ONE: return len - 1;
    case FAKE_TORN_LEN:
    case FAKE_TORN_MIX: break;
    }
    return 0;
}

/* A small deterministic byte stream (xorshift32) for garbage and mixes. */
static uint8_t noise_byte(uint32_t *s)
{
    uint32_t x = *s != 0 ? *s : 0x9E3779B9u;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *s = x;
    return (uint8_t)(x >> 24);
}

/* The value byte i of a write of `data` (or of an erase: data == NULL) leaves. */
static uint8_t new_byte(const fake_storage_t *f, uint32_t at, const uint8_t *data, size_t i)
{
    if (data == NULL) {
        return 0xFF;
    }
    return f->flash ? (uint8_t)(f->mem[at] & data[i]) : data[i];
}

static void apply(fake_storage_t *f, uint32_t off, const uint8_t *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        f->mem[off + i] = new_byte(f, off + (uint32_t)i, data, i);
    }
    if (data != NULL) {
        f->bytes_written += len;
    }
}

/* The armed failure: leave the range as the failure mode says. */
static void apply_failure(fake_storage_t *f, uint32_t off, const uint8_t *data, size_t len)
{
    uint32_t s = f->seed ^ (uint32_t)(f->ops * 0x85EBCA6Bu);
    if (f->mode == FAKE_GARBAGE) {
        for (size_t i = 0; i < len; i++) {
            f->mem[off + i] = noise_byte(&s);
        }
    } else if (f->mode == FAKE_TORN && f->torn == FAKE_TORN_MIX) {
        for (size_t i = 0; i < len; i++) {
            if (noise_byte(&s) & 1u) {
                f->mem[off + i] = new_byte(f, off + (uint32_t)i, data, i);
            }
        }
    } else if (f->mode == FAKE_TORN) {
        apply(f, off, data, torn_prefix(f, len));
    }
}

/* Count and log the operation; 1 if it is the armed failure (then the fake has crashed and
 * the range holds what the failure left). */
static int trip(fake_storage_t *f, uint32_t off, const uint8_t *data, size_t len)
{
    f->ops++;
    if (f->oplog != NULL && f->ops <= f->oplog_cap) {
        fake_op_t *o = &f->oplog[f->ops - 1];
        o->erase = data == NULL;
        o->off = off;
        o->len = (uint32_t)len;
    }
    if (f->fail_at == 0 || f->ops != f->fail_at) {
        return 0;
    }
    f->crashed = 1;
    apply_failure(f, off, data, len);
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
    f->bytes_read += len;
    return 0;
}

static int fs_write(void *ctx, uint32_t off, const uint8_t *buf, size_t len)
{
    fake_storage_t *f = ctx;
    f->writes++;
    if (f->crashed || buf == NULL || !in_range(f, off, len)) {
        return -1;
    }
    if (trip(f, off, buf, len)) {
        return -1;
    }
    if (f->fail_writes) {
        return -1;
    }
    apply(f, off, buf, len);
    return 0;
}

static int fs_erase(void *ctx, uint32_t off, size_t len)
{
    fake_storage_t *f = ctx;
    f->erases++;
    if (f->crashed || !in_range(f, off, len)) {
        return -1;
    }
    if (trip(f, off, NULL, len)) {
        return -1;
    }
    if (f->fail_writes) {
        return -1;
    }
    apply(f, off, NULL, len);
    return 0;
}

dpm_storage_t fake_storage_port(fake_storage_t *f)
{
    dpm_storage_t st = {fs_read, fs_write, fs_erase, f->size, f};
    return st;
}
