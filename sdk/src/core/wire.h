/* SPDX-License-Identifier: Apache-2.0 */
/* A bounded byte writer for the reports, whose layouts are fixed (the header of every report and
 * each mechanism's body): protobuf tags, varints and bytes written straight into the caller's
 * buffer, as pb_encode writes them, without nanopb's stream callback and descriptor walk (issue 32:
 * the tuple report's whole encoding in about a third of the instructions). Running past the end
 * only clears ok: the caller answers DPM_ERR_BUFFER and never uses the bytes. */
#ifndef DPM_CORE_WIRE_H
#define DPM_CORE_WIRE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *p;   /* the next byte */
    uint8_t *end; /* one past the buffer */
    int ok;       /* 0 once a byte did not fit */
} dpm_wire_t;

enum { DPM_WIRE_VARINT = 0, DPM_WIRE_FIXED32 = 5, DPM_WIRE_BYTES = 2 };

static inline dpm_wire_t dpm_wire_to(uint8_t *buf, size_t cap)
{
    dpm_wire_t w = {buf, buf + cap, 1};
    return w;
}

static inline void dpm_wire_byte(dpm_wire_t *w, uint32_t b)
{
    if (w->p < w->end) {
        *w->p++ = (uint8_t)b;
    } else {
        w->ok = 0;
    }
}

static inline void dpm_wire_varint(dpm_wire_t *w, uint32_t v)
{
    while (v >= 0x80u) {
        dpm_wire_byte(w, (v & 0x7Fu) | 0x80u);
        v >>= 7;
    }
    dpm_wire_byte(w, v);
}

/* Bytes of v as a varint. */
static inline uint32_t dpm_wire_varint_len(uint32_t v)
{
    uint32_t n = 1;
    while (v >= 0x80u) {
        v >>= 7;
        n++;
    }
    return n;
}

/* sint32's zigzag: 0, -1, 1, -2, ... -> 0, 1, 2, 3, ... (pb_encode_svarint's, for 32 bits) */
static inline uint32_t dpm_wire_zigzag(int32_t v)
{
    return v < 0 ? ~((uint32_t)v << 1) : (uint32_t)v << 1;
}

static inline void dpm_wire_tag(dpm_wire_t *w, uint32_t field, uint32_t type)
{
    dpm_wire_varint(w, field << 3 | type);
}

/* A proto3 uint32 or enum field: omitted when 0. */
static inline void dpm_wire_uint_field(dpm_wire_t *w, uint32_t field, uint32_t v)
{
    if (v != 0) {
        dpm_wire_tag(w, field, DPM_WIRE_VARINT);
        dpm_wire_varint(w, v);
    }
}

/* Bytes of a proto3 uint32 field (tag < 16: one byte) as dpm_wire_uint_field writes it. */
static inline uint32_t dpm_wire_uint_field_len(uint32_t v)
{
    return v == 0 ? 0u : 1u + dpm_wire_varint_len(v);
}

static inline void dpm_wire_varint64(dpm_wire_t *w, uint64_t v)
{
    while (v >= 0x80u) {
        dpm_wire_byte(w, (uint32_t)(v & 0x7Fu) | 0x80u);
        v >>= 7;
    }
    dpm_wire_byte(w, (uint32_t)v);
}

static inline uint32_t dpm_wire_varint64_len(uint64_t v)
{
    uint32_t n = 1;
    while (v >= 0x80u) {
        v >>= 7;
        n++;
    }
    return n;
}

/* sint64's zigzag. */
static inline uint64_t dpm_wire_zigzag64(int64_t v)
{
    return v < 0 ? ~((uint64_t)v << 1) : (uint64_t)v << 1;
}

/* A proto3 uint64 field: omitted when 0. Its bytes: dpm_wire_uint64_field_len. */
static inline void dpm_wire_uint64_field(dpm_wire_t *w, uint32_t field, uint64_t v)
{
    if (v != 0) {
        dpm_wire_tag(w, field, DPM_WIRE_VARINT);
        dpm_wire_varint64(w, v);
    }
}

static inline uint32_t dpm_wire_uint64_field_len(uint64_t v)
{
    return v == 0 ? 0u : 1u + dpm_wire_varint64_len(v);
}

/* The payload bytes of a packed repeated sint32 field of v[0, n). */
static inline uint32_t dpm_wire_packed_sint32_payload(const int32_t *v, uint32_t n)
{
    uint32_t len = 0;
    for (uint32_t i = 0; i < n; i++) {
        len += dpm_wire_varint_len(dpm_wire_zigzag(v[i]));
    }
    return len;
}

/* The whole field's bytes (tag < 16), given its payload's: omitted when empty. */
static inline uint32_t dpm_wire_packed_len(uint32_t n, uint32_t payload)
{
    return n == 0 ? 0u : 1u + dpm_wire_varint_len(payload) + payload;
}

/* A packed repeated sint32 field (omitted when empty), its payload's bytes given. */
static inline void dpm_wire_packed_sint32(dpm_wire_t *w, uint32_t field, const int32_t *v,
                                          uint32_t n, uint32_t payload)
{
    if (n == 0) {
        return;
    }
    dpm_wire_tag(w, field, DPM_WIRE_BYTES);
    dpm_wire_varint(w, payload);
    for (uint32_t i = 0; i < n; i++) {
        dpm_wire_varint(w, dpm_wire_zigzag(v[i]));
    }
}

/* A submessage field's head: its tag and its length. */
static inline void dpm_wire_message(dpm_wire_t *w, uint32_t field, uint32_t len)
{
    dpm_wire_tag(w, field, DPM_WIRE_BYTES);
    dpm_wire_varint(w, len);
}

static inline void dpm_wire_bytes(dpm_wire_t *w, const uint8_t *b, size_t n)
{
    if ((size_t)(w->end - w->p) < n) {
        w->ok = 0;
        w->p = w->end;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        w->p[i] = b[i];
    }
    w->p += n;
}

/* A proto3 fixed32 field (little-endian): omitted when 0. */
static inline void dpm_wire_fixed32_field(dpm_wire_t *w, uint32_t field, uint32_t v)
{
    if (v != 0) {
        const uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                              (uint8_t)(v >> 24)};
        dpm_wire_tag(w, field, DPM_WIRE_FIXED32);
        dpm_wire_bytes(w, b, sizeof(b));
    }
}

/* A fixed-length bytes field of n < 128 bytes (one length byte), written even when all zero,
 * as nanopb's fixed_length bytes are. Its bytes: 2 + n. */
static inline void dpm_wire_fixed_bytes_field(dpm_wire_t *w, uint32_t field, const uint8_t *b,
                                              uint32_t n)
{
    dpm_wire_tag(w, field, DPM_WIRE_BYTES);
    dpm_wire_byte(w, n);
    dpm_wire_bytes(w, b, n);
}

#endif /* DPM_CORE_WIRE_H */
