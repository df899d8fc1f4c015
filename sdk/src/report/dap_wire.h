/* SPDX-License-Identifier: Apache-2.0 */
/* TLS presentation language (RFC 8446 §3), as DAP and HPKE configurations use it: big-endian
 * integers and length-prefixed vectors, read through a bounds-checked cursor and written
 * through a bounded one. A cursor that fails stays failed (`bad`), so a decoder checks once
 * at the end; every read past the end yields zeros and a NULL pointer, never an access. */
#ifndef DPM_DAP_WIRE_H
#define DPM_DAP_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const uint8_t *p;
    size_t len, pos;
    int bad;
} dpm_rd_t;

typedef struct {
    uint8_t *p;
    size_t cap, pos;
    int bad;
} dpm_wr_t;

static inline dpm_rd_t dpm_rd(const uint8_t *p, size_t len)
{
    dpm_rd_t r = {p, len, 0, p == NULL && len != 0};
    return r;
}

/* The readers (sdk/src/report/dap.c): out of line, one copy for every decoder of the image. */
/* n bytes from the cursor (NULL and `bad` if fewer are left). */
const uint8_t *dpm_rd_bytes(dpm_rd_t *r, size_t n);
/* An unsigned big-endian integer of n <= 8 bytes (0 if short). */
uint64_t dpm_rd_uint(dpm_rd_t *r, size_t n);
/* A vector opaque x<lo..hi> with an n-byte length prefix: *len and its bytes (NULL if bad or
 * outside [lo, hi]). */
const uint8_t *dpm_rd_vec(dpm_rd_t *r, size_t n, uint64_t lo, uint64_t hi, size_t *len);
/* 1 if the cursor read everything exactly, without failing. */
int dpm_rd_done(const dpm_rd_t *r);

static inline dpm_wr_t dpm_wr(uint8_t *p, size_t cap)
{
    dpm_wr_t w = {p, cap, 0, p == NULL && cap != 0};
    return w;
}

/* Room for n bytes at the cursor (NULL and `bad` if there is none). */
static inline uint8_t *dpm_wr_take(dpm_wr_t *w, size_t n)
{
    if (w->bad || n > w->cap - w->pos) {
        w->bad = 1;
        return NULL;
    }
    uint8_t *at = w->p + w->pos;
    w->pos += n;
    return at;
}

static inline void dpm_wr_uint(dpm_wr_t *w, uint64_t v, size_t n)
{
    uint8_t *b = dpm_wr_take(w, n);
    for (size_t i = n; b != NULL && i-- > 0; v >>= 8) {
        b[i] = (uint8_t)v;
    }
}

static inline void dpm_wr_bytes(dpm_wr_t *w, const void *src, size_t n)
{
    uint8_t *b = dpm_wr_take(w, n);
    if (b != NULL && n != 0) {
        memcpy(b, src, n);
    }
}

/* A vector with an n-byte length prefix. */
static inline void dpm_wr_vec(dpm_wr_t *w, size_t n, const void *src, size_t len)
{
    dpm_wr_uint(w, len, n);
    dpm_wr_bytes(w, src, len);
}

#endif /* DPM_DAP_WIRE_H */
