/* SPDX-License-Identifier: Apache-2.0 */
/* File-backed port storage. The region is one file of exactly `size` bytes. Every write is
 * atomic: the new content goes to a temporary file that is fsynced and renamed over the old
 * one, and the directory is fsynced, so a power loss leaves either the old or the new file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dpm/port_posix.h"

#define COPY_CHUNK 4096u

static int write_all(int fd, const uint8_t *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all_at(int fd, uint8_t *buf, size_t len, off_t off)
{
    while (len > 0) {
        ssize_t n = pread(fd, buf, len, off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        buf += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

static int fsync_dir_of(const char *path)
{
    char dir[DPM_POSIX_PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        strcpy(dir, ".");
    } else {
        size_t n = (size_t)(slash - path);
        memcpy(dir, path, n == 0 ? 1 : n);
        dir[n == 0 ? 1 : n] = '\0';
    }
    int fd = open(dir, O_RDONLY);
    if (fd < 0) {
        return -1;
    }
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static int in_region(const dpm_posix_storage_t *s, uint32_t offset, size_t len)
{
    return offset <= s->size && len <= (size_t)(s->size - offset);
}

/* Rewrite the file with [offset, offset+len) replaced by `data` (or by `fill` if data is NULL). */
static int replace_range(dpm_posix_storage_t *s, uint32_t offset, const uint8_t *data, size_t len,
                         uint8_t fill)
{
    int src = open(s->path, O_RDONLY);
    if (src < 0) {
        return -1;
    }
    int dst = open(s->tmp_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (dst < 0) {
        close(src);
        return -1;
    }
    uint8_t chunk[COPY_CHUNK];
    int rc = 0;
    size_t end = (size_t)offset + len; /* <= size, checked by the caller */
    for (size_t pos = 0; pos < s->size && rc == 0; pos += COPY_CHUNK) {
        size_t n = s->size - pos < COPY_CHUNK ? s->size - pos : COPY_CHUNK;
        rc = read_all_at(src, chunk, n, (off_t)pos);
        size_t lo = pos > offset ? pos : offset; /* overlap of this chunk with the range */
        size_t hi = pos + n < end ? pos + n : end;
        if (rc == 0 && lo < hi) {
            if (data != NULL) {
                memcpy(chunk + (lo - pos), data + (lo - offset), hi - lo);
            } else {
                memset(chunk + (lo - pos), fill, hi - lo);
            }
        }
        if (rc == 0) {
            rc = write_all(dst, chunk, n);
        }
    }
    if (rc == 0) {
        rc = fsync(dst);
    }
    close(src);
    if (close(dst) != 0) {
        rc = -1;
    }
    if (rc == 0) {
        rc = rename(s->tmp_path, s->path);
    }
    if (rc == 0) {
        rc = fsync_dir_of(s->path);
    } else {
        unlink(s->tmp_path);
    }
    return rc;
}

static int storage_read(void *ctx, uint32_t offset, uint8_t *buf, size_t len)
{
    dpm_posix_storage_t *s = ctx;
    if (buf == NULL || !in_region(s, offset, len)) {
        return -1;
    }
    int fd = open(s->path, O_RDONLY);
    if (fd < 0) {
        return -1;
    }
    int rc = read_all_at(fd, buf, len, (off_t)offset);
    close(fd);
    return rc;
}

static int storage_write(void *ctx, uint32_t offset, const uint8_t *buf, size_t len)
{
    dpm_posix_storage_t *s = ctx;
    if (buf == NULL || !in_region(s, offset, len)) {
        return -1;
    }
    return replace_range(s, offset, buf, len, 0);
}

static int storage_erase(void *ctx, uint32_t offset, size_t len)
{
    dpm_posix_storage_t *s = ctx;
    if (!in_region(s, offset, len)) {
        return -1;
    }
    return replace_range(s, offset, NULL, len, 0xFF);
}

dpm_status_t dpm_posix_storage_open(dpm_posix_storage_t *s, const char *path, uint32_t size)
{
    if (s == NULL || path == NULL || size == 0 ||
        strlen(path) + sizeof(".tmp") > sizeof(s->tmp_path)) {
        return DPM_ERR_PARAM;
    }
    strcpy(s->path, path);
    strcpy(s->tmp_path, path);
    strcat(s->tmp_path, ".tmp");
    s->size = size;
    unlink(s->tmp_path); /* a leftover from a crash mid-write: the old file is the truth */
    struct stat st;
    if (stat(path, &st) == 0) {
        return st.st_size == (off_t)size ? DPM_OK : DPM_ERR_STORAGE;
    }
    /* A new region starts erased. Create it under the temporary name, then rename. */
    int fd = open(s->tmp_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        return DPM_ERR_STORAGE;
    }
    uint8_t chunk[COPY_CHUNK];
    memset(chunk, 0xFF, sizeof(chunk));
    int rc = 0;
    for (uint32_t pos = 0; pos < size && rc == 0; pos += COPY_CHUNK) {
        rc = write_all(fd, chunk, size - pos < COPY_CHUNK ? size - pos : COPY_CHUNK);
    }
    if (rc == 0) {
        rc = fsync(fd);
    }
    close(fd);
    if (rc == 0) {
        rc = rename(s->tmp_path, path);
    }
    return rc == 0 && fsync_dir_of(path) == 0 ? DPM_OK : DPM_ERR_STORAGE;
}

dpm_storage_t dpm_posix_storage(dpm_posix_storage_t *s)
{
    dpm_storage_t st = {storage_read, storage_write, storage_erase, s->size, s};
    return st;
}
