/* SPDX-License-Identifier: Apache-2.0 */
/* The port conformance suite: what every port must pass before the SDK runs on it. Each check
 * tests one promise of the contract in sdk/include/dpm/port.h (and what the SDK does with a
 * hook that fails), and reports itself by name (e.g. "storage.erase_sets_ff") as passed,
 * failed (with the cause in words) or not run (with the reason: a fault-injection hook the port
 * does not offer). A missing hook (NULL) or one that answers "not implemented" fails its
 * checks by name; nothing crashes. Plain C (no POSIX): it runs on the host and in the
 * Cortex-M test images. port/template/README.md says how a new port uses it.
 *
 * Every hook's return value is read in one place (port_conformance.c, hook_failed), so a port
 * interface returning dpm_status_t instead of int is a one-line change there. */
#ifndef PORT_CONFORMANCE_H
#define PORT_CONFORMANCE_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/port.h"

typedef enum { DPM_PORT_PASS, DPM_PORT_FAIL, DPM_PORT_NOT_RUN } dpm_port_verdict_t;

/* Called once per check: its name, its verdict, and for FAIL / NOT_RUN the cause (else ""). */
typedef void (*dpm_port_report_fn)(void *ctx, const char *check, dpm_port_verdict_t verdict,
                                   const char *detail);

typedef struct {
    dpm_port_report_fn report; /* NULL: dpm_port_print_report (one line per check, stdout) */
    void *ctx;
    unsigned passed, failed, not_run;
} dpm_port_suite_t;

void dpm_port_suite_init(dpm_port_suite_t *s, dpm_port_report_fn report, void *ctx);
/* The default reporter: "pass     storage.erase_sets_ff" / "FAIL     name: cause" (not TAP's
 * "ok N" / "not ok N", which the test runners count). */
void dpm_port_print_report(void *ctx, const char *check, dpm_port_verdict_t verdict,
                           const char *detail);

/* A reporter that keeps every verdict (and, with print set, prints it as dpm_port_print_report
 * does), for tests that ask afterwards how a named check went. */
#define DPM_PORT_LOG_MAX 64
typedef struct {
    const char *check; /* the suite's static name */
    dpm_port_verdict_t verdict;
    char detail[240];
} dpm_port_record_t;
typedef struct {
    dpm_port_record_t rec[DPM_PORT_LOG_MAX];
    unsigned n;
    int print; /* 0: quiet (negative controls, whose FAILs are expected) */
} dpm_port_log_t;
void dpm_port_log_report(void *log, const char *check, dpm_port_verdict_t verdict,
                         const char *detail);
/* The last record of `check`, or NULL if it was not reported. */
const dpm_port_record_t *dpm_port_log_find(const dpm_port_log_t *log, const char *check);
/* Empty *log (printing if print) and make *suite report into it. */
void dpm_port_log_begin(dpm_port_log_t *log, dpm_port_suite_t *suite, int print);
/* 1 if `check` was reported with this verdict and (words != NULL) its detail contains words;
 * else 0, printing what was reported instead. */
int dpm_port_log_is(const dpm_port_log_t *log, const char *check, dpm_port_verdict_t verdict,
                    const char *words);

/* ---- storage ---------------------------------------------------------------------------------
 * The suite erases and rewrites the first 2 x DPM_PORT_CHECK_UNIT bytes of the region (or two
 * erase_unit's when larger): give it a scratch region, never one holding a ledger. */
#define DPM_PORT_CHECK_UNIT 256u

typedef struct {
    /* A power cycle: drop every cache, close and reopen the region as a reboot would, and put
     * the reopened storage in *s. 0, or < 0 (the durability check fails). Required. */
    int (*reopen)(void *ctx, dpm_storage_t *s);
    /* Optional fault injection: write buf[0, len) at offset (an erase of [offset, offset + len)
     * when buf is NULL) with a power loss in the middle of it, then come back as reopen does
     * (*s). 0 once done. NULL: the torn-write check is reported NOT RUN. */
    int (*torn)(void *ctx, dpm_storage_t *s, uint32_t offset, const uint8_t *buf, size_t len);
    void *ctx;
    uint32_t erase_unit; /* flash: erase() offsets and lengths must be multiples of it; 0: any */
} dpm_port_storage_hooks_t;

/* storage.hooks_present, storage.erase_sets_ff, storage.read_after_write,
 * storage.write_leaves_outside, storage.erase_leaves_outside, storage.bit_clearing_writes,
 * storage.ordered_and_durable, storage.torn_write_in_range. *s may be replaced by the hooks. */
void dpm_port_check_storage(dpm_port_suite_t *suite, dpm_storage_t *s,
                            const dpm_port_storage_hooks_t *h);

/* ---- random ---------------------------------------------------------------------------------- */
typedef struct {
    /* Make the port's random source fail as its hardware would (the TRNG stops, the kernel's
     * entropy fails at a reseed) and put the now failing generator in *broken. 0, or < 0 if
     * the port cannot. NULL: the failure checks are reported NOT RUN. */
    int (*fail)(void *ctx, dpm_rng_t *broken);
    void *ctx;
} dpm_port_rng_hooks_t;

/* rng.hooks_present, rng.fills_every_byte, rng.not_constant, rng.failure_reported,
 * rng.failure_refused_by_sdk (an SDK device reporting through the failed generator). */
void dpm_port_check_rng(dpm_port_suite_t *suite, const dpm_rng_t *rng,
                        const dpm_port_rng_hooks_t *h);

/* ---- clock ----------------------------------------------------------------------------------- */
/* clock.hooks_present, clock.monotonic_never_backwards, clock.monotonic_advances,
 * clock.wall_time (NULL is allowed). */
void dpm_port_check_clock(dpm_port_suite_t *suite, const dpm_clock_t *c);

/* ---- transport ------------------------------------------------------------------------------- */
typedef struct {
    /* Connect *t to a peer that accepts and then neither answers nor closes. 0 or < 0. */
    int (*open_silent)(void *ctx, dpm_transport_t *t);
    /* Connect *t to a peer that closes the connection at once. 0 or < 0. */
    int (*open_closed)(void *ctx, dpm_transport_t *t);
    void (*close)(void *ctx, dpm_transport_t *t); /* after either; may be NULL */
    void *ctx;
    uint32_t timeout_ms; /* the upload deadline the checks give the SDK; 0: 300 ms */
} dpm_port_transport_hooks_t;

/* transport.hooks_present, transport.silent_recv_is_zero, transport.closed_recv_is_error,
 * transport.upload_times_out, transport.upload_closed_is_error. c is the port's clock (the
 * SDK's deadlines run on it). */
void dpm_port_check_transport(dpm_port_suite_t *suite, const dpm_clock_t *c,
                              const dpm_port_transport_hooks_t *h);

/* ---- hardware CRC (DPM_CRC32_TABLE=0 builds) --------------------------------------------------
 */
typedef uint32_t (*dpm_port_crc32_fn)(uint32_t crc, const uint8_t *p, size_t n);
/* crc32.check_value (zlib's CRC-32 of "123456789"), crc32.continues (split input). */
void dpm_port_check_crc32(dpm_port_suite_t *suite, dpm_port_crc32_fn crc);

#endif
