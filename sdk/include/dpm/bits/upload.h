/* SPDX-License-Identifier: Apache-2.0 */
/* The uploader's configuration, state and result (dpm_device_config_t.upload, dpm_device_t,
 * dpm_device_flush). The functions are in dpm/expert/uploader.h. */
#ifndef DPM_BITS_UPLOAD_H
#define DPM_BITS_UPLOAD_H

#include <stdint.h>

#include "dpm/bits/sizes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest bearer token (dpm-collector reads Authorization values of up to 255 bytes, and
 * "Bearer " takes 7 of them). */
#define DPM_HTTP_MAX_TOKEN 248
/* Largest batch: dpm.options bounds Batch.reports (and BatchResponse.rejects) to 8. */
#define DPM_UPLOAD_MAX_BATCH 8u
/* Smallest work buffer dpm_upload_flush accepts; it also refuses a buffer whose room after
 * the longest request head (it depends on host, path and token) cannot hold one largest report
 * and the loss count (3 + DPM_REPORT_MAX_BYTES + 6). DPM_UPLOAD_MIN_WORK + 256 bytes (plus the
 * token's length) is a good size: the head, several reports and a BatchResponse with 8
 * rejects fit. */
#define DPM_UPLOAD_MIN_WORK (256u + 3u + DPM_REPORT_MAX_BYTES + 6u)
#define DPM_UPLOAD_OPENED 0x55504D44u
/* The rejects one dpm_upload_flush call returns (every one: see dpm_upload_result_t.more). */
#define DPM_UPLOAD_MAX_REJECTS DPM_UPLOAD_MAX_BATCH
/* A reject's reason, NUL included (dpm.options: Reject.reason max_size 48). */
#define DPM_UPLOAD_REASON_BYTES 48u

typedef struct {
    const char *host;         /* Host header (see dpm_http_write_request); not copied */
    const char *path;         /* request path, e.g. "/v1/reports"; not copied */
    uint32_t max_reports;     /* reports per request, 1..DPM_UPLOAD_MAX_BATCH */
    uint32_t max_bytes;       /* body bytes per request, >= 1 (a single larger report is
                                 still sent, alone) */
    uint32_t timeout_ms;      /* deadline of one request/response exchange, >= 1 */
    uint32_t backoff_base_ms; /* first retry delay, >= 1 */
    uint32_t backoff_cap_ms;  /* largest nominal delay, >= backoff_base_ms */
    /* Optional device credential (NULL: none): a bearer token, sent as "Authorization: Bearer
     * <token>" with every POST (never with dpm_campaign_get, which needs none). 1 ..
     * DPM_HTTP_MAX_TOKEN characters of RFC 6750's b64token: letters, digits, "-._~+/", then
     * optionally "=" padding; NUL-terminated. NOT copied: the uploader keeps this pointer, so
     * the token stays in the app's memory (which must outlive the uploader; the app may
     * rewrite it in place to renew it, checked again at every request). The SDK never logs
     * it, and wipes the request head that carried it from the work buffer once it is sent (the
     * TLS layer's own buffers are the port's: port/tls). Beside it, or instead, a TLS client
     * certificate (dpm_tls_config_t.client_cert); a device holding both gets a token bound to
     * its certificate's identity from the collector (README: credentials). */
    const char *token;
} dpm_upload_config_t;

/* Upload state (retry schedule). Fill with dpm_upload_init. */
typedef struct {
    dpm_upload_config_t cfg;  /* the app's config; max_bytes is lowered after a 413 */
    uint64_t next_attempt_ms; /* monotonic time before which flush does nothing; 0 = now */
    uint32_t failures;        /* consecutive failed attempts */
    uint32_t opened;
} dpm_upload_t;

/* A report the collector rejected: removed from the outbox for good (its ε was spent; it can
 * never be accepted). What to do depends on the reason (dpm-collector's reasons; README
 * "Rejected reports"):
 *   "device quota exceeded"         this credential already stored the campaign's quota of
 *                                   reports in that period (another install or device with
 *                                   the same credential?): report no more in that period
 *   "period closed"                 sent too late (the device was offline longer than the
 *                                   campaign's late window): flush sooner; nothing to resend
 *   "period not open yet"           the device's clock is ahead of the collector's: fix the
 *                                   clock before reporting again
 *   "unknown campaign"              the campaign is gone: stop reporting for it
 *   "parameter fingerprint mismatch", "mechanism mismatch", "wrong number of ...", "... out
 *   of range", "malformed report"   the device's copy of the campaign differs from the
 *                                   collector's, or the two versions do not agree: fetch the
 *                                   campaign again (dpm_campaign_get) before the next report
 * Any other reason: log it with the ids; do not retry (the report is gone). */
typedef struct {
    uint8_t report_id[DPM_REPORT_ID_BYTES]; /* as dpm_report_info_t.report_id gave it */
    uint32_t campaign_id;                   /* read back from the stored report */
    uint32_t period;
    char reason[DPM_UPLOAD_REASON_BYTES]; /* the collector's reason, NUL-terminated; bytes
                                             outside printable ASCII replaced by '?' */
} dpm_upload_reject_t;

/* What one dpm_upload_flush call did. */
typedef struct {
    uint32_t requests;      /* HTTP requests sent */
    uint32_t delivered;     /* reports removed after a 2xx */
    uint32_t rejected;      /* reports removed because the collector rejected their id: each
                               one is rejects[0 .. rejected) */
    uint32_t lost_reported; /* lost reports (Batch.lost_reports) a collector acknowledged */
    uint32_t pending;       /* reports left in the outbox */
    uint32_t http_status;   /* status of the last exchange's response, 0 if it got none */
    uint8_t deferred;       /* 1: called before dpm_upload_next_attempt_ms, nothing done */
    uint8_t reconnect;      /* 1: close and reopen the transport before the next call */
    uint8_t more;           /* 1: stopped early with reports pending so that every reject
                               fits rejects[] (or after a 413 halved the batches): call
                               again (after a reconnect if reconnect is set) */
    dpm_upload_reject_t rejects[DPM_UPLOAD_MAX_REJECTS];
} dpm_upload_result_t;

#ifdef __cplusplus
}
#endif

#endif /* DPM_BITS_UPLOAD_H */
