/* SPDX-License-Identifier: Apache-2.0 */
/* A RAM-backed dpm_storage_t for tests, with fault injection.
 *
 * Every write() and erase() is one numbered operation (1, 2, 3, ...). Arming the fake with
 * fail_at = N makes operation N fail in one of three ways, and the device "loses power" there:
 *   FAKE_NOT_APPLIED  the operation changes nothing and returns -1;
 *   FAKE_TORN         part of it is applied (see fake_torn_t), then it returns -1;
 *   FAKE_GARBAGE      its range is left holding pseudo-random bytes (seed), then it returns -1.
 * From then on the fake is "crashed": every call (reads too) returns -1 until
 * fake_storage_reboot(), which models the restart (RAM contents persist, like flash).
 *
 * flash = 1 gives NOR-flash semantics: a write can only clear bits (new = old & data), so
 * code that writes over non-erased bytes reads back something else and notices. */
#ifndef FAKE_STORAGE_H
#define FAKE_STORAGE_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/port.h"

typedef enum { FAKE_NONE, FAKE_NOT_APPLIED, FAKE_TORN, FAKE_GARBAGE } fake_fail_t;

/* How much of a torn operation lands: 1 byte, half, or all but the last byte (a 1-byte
 * operation tears to nothing); the first torn_len bytes (clipped to the operation); or a
 * pseudo-random mix (seed) of old and new bytes over the whole range. */
typedef enum {
    FAKE_TORN_ONE,
    FAKE_TORN_HALF,
    FAKE_TORN_ALL_BUT_ONE,
    FAKE_TORN_LEN,
    FAKE_TORN_MIX
} fake_torn_t;

/* One operation, as recorded in the optional log. */
typedef struct {
    uint8_t erase; /* 1: erase(), 0: write() */
    uint32_t off;
    uint32_t len;
} fake_op_t;

typedef struct {
    uint8_t *mem;
    uint32_t size;
    int flash;
    uint64_t ops;     /* write/erase operations attempted so far */
    uint64_t fail_at; /* 1-based operation that fails; 0 = none */
    fake_fail_t mode;
    fake_torn_t torn;
    uint32_t torn_len; /* FAKE_TORN_LEN */
    uint32_t seed;     /* FAKE_GARBAGE, FAKE_TORN_MIX */
    fake_op_t *oplog;  /* optional: operation i (1-based) is logged at oplog[i - 1] */
    size_t oplog_cap;
    int crashed;
    int fail_reads;  /* test hook: reads return -1 while set */
    int fail_writes; /* test hook: writes return -1 (not applied, no crash) while set */
    uint64_t writes, erases, reads;
    uint64_t bytes_written;
    uint64_t bytes_read; /* by read() calls that succeeded */
} fake_storage_t;

/* mem (size bytes) starts erased (0xFF). */
void fake_storage_init(fake_storage_t *f, uint8_t *mem, uint32_t size, int flash);
dpm_storage_t fake_storage_port(fake_storage_t *f);
/* Fail operation number fail_at (counted from the start, see ops). */
void fake_storage_arm(fake_storage_t *f, uint64_t fail_at, fake_fail_t mode, fake_torn_t torn);
/* Power comes back: the crash flag clears and the fault is disarmed. */
void fake_storage_reboot(fake_storage_t *f);

#endif
