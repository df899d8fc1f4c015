/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP messages the leader, the helper and the collector exchange (draft-ietf-ppm-dap, the
 * "dap-18" version pinned in /work/shared/ref/dap, the same as dpm/expert/dap.h), encoded and
 * decoded in the draft's TLS presentation language (big-endian integers, opaque vectors and
 * lists under the 1-, 2- or 4-byte length prefix each declares).
 *
 * The pinned draft's names: a report's verification messages are VerifyInit, VerifyResp and
 * VerifyContinue (older drafts: PrepareInit, PrepareResp, PrepareContinue); the
 * AggregationJobInitReq carries a verification_key_id and a list of aggregation job extensions
 * (the leader-selected batch id travels in one; the time-interval mode needs none, and the
 * PartialBatchSelector of older drafts is gone); every media type is
 * "application/ppm-dap;message=NAME" (dap_msg_media_type).
 *
 * Design, for a server:
 *   - a decoder takes (bytes, len), the whole HTTP body, and fills a caller-owned struct whose
 *     variable parts are dpm_span_t views into those bytes (nothing copied, no heap);
 *   - a list is a dap_list_t (its bytes and its item count), walked with its dap_msg_next_*
 *     iterator. The decoder has already walked every item: a message it accepts is well formed
 *     to its last byte, so the iterator cannot fail on it;
 *   - lists whose length is the HTTP message's (verify_inits, verify_resps, verify_continues,
 *     UploadErrors' statuses) are written as a head then item after item: encode the head
 *     (nothing for AggregationJobResp and UploadErrors), then append each item with its
 *     encoder; the result is the message (a server can stream it);
 *   - an encoder writes into (buf, cap): DPM_OK and *len the bytes written; DPM_ERR_BUFFER with
 *     *len the bytes needed (buf untouched; (NULL, 0) asks the size); DPM_ERR_PARAM for NULL or
 *     a value the draft's encoding cannot carry or forbids (with nothing written). Encoders
 *     read a dap_list_t's bytes (checked as its decoder would), never its n.
 *
 * Decoder statuses: DPM_OK, or DPM_ERR_PROTOCOL for bytes the draft does not allow (the
 * draft's invalidMessage): truncated, trailing bytes, a length prefix past the input, a vector
 * shorter than its declared minimum (enc, payloads: 1 byte; HpkeConfigList: 10), a fixed-size
 * list not a multiple of its item, an unknown BatchMode, VerifyRespType or ReportError (0,
 * reserved, and above DAP_REPORT_ERROR_MAX too), extension lists not in strictly increasing
 * order of type (*reason == dap_msg_reason_ext_order: a collection job answers invalidExtension
 * for it), two HpkeConfigs with one id, an AggregationJobContinueReq of step 0. DPM_ERR_PARAM
 * for NULL. On error the output struct is untouched and *reason (if not NULL) a static string.
 *
 * Not checked here (the caller's, with its state): distinct report ids in a job, report ids
 * matching the request's, unknown extension types, the task's batch mode, whether an interval
 * is aligned to the time precision (batchInvalid, not invalidMessage), the order of a report's
 * public extensions (a per-report invalid_message, input share validation). */
#ifndef DPM_HOST_AGGREGATOR_DAP_MSG_H
#define DPM_HOST_AGGREGATOR_DAP_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
#include "dpm/status.h"

/* ReportError (the draft's "Basic Type Definitions" and its registry). */
#define DAP_REPORT_ERROR_BATCH_COLLECTED 1u
#define DAP_REPORT_ERROR_REPORT_REPLAYED 2u
#define DAP_REPORT_ERROR_REPORT_DROPPED 3u
#define DAP_REPORT_ERROR_HPKE_UNKNOWN_CONFIG_ID 4u
#define DAP_REPORT_ERROR_HPKE_DECRYPT_ERROR 5u
#define DAP_REPORT_ERROR_VDAF_VERIFY_ERROR 6u
#define DAP_REPORT_ERROR_TASK_EXPIRED 7u
#define DAP_REPORT_ERROR_INVALID_MESSAGE 8u
#define DAP_REPORT_ERROR_REPORT_TOO_EARLY 9u
#define DAP_REPORT_ERROR_TASK_NOT_STARTED 10u
#define DAP_REPORT_ERROR_OUTDATED_CONFIG 11u
#define DAP_REPORT_ERROR_MAX 11u
/* The draft's name of a ReportError ("report_replayed"), "unknown" past DAP_REPORT_ERROR_MAX. */
const char *dap_msg_report_error_name(uint8_t error);

/* VerifyRespType. */
#define DAP_VERIFY_CONTINUE 0u
#define DAP_VERIFY_FINISH 1u
#define DAP_VERIFY_REJECT 2u

/* Batch modes are DPM_DAP_BATCH_TIME_INTERVAL (1) and DPM_DAP_BATCH_LEADER_SELECTED (2). */
#define DAP_BATCH_ID_BYTES 32u
#define DAP_CHECKSUM_BYTES 32u
/* AggregationJobExtensionType leader_selected_batch_id. */
#define DAP_AGG_JOB_EXT_BATCH_ID 1u

/* ---- media types ---------------------------------------------------------------------------- */

typedef enum {
    DAP_MSG_HPKE_CONFIG_LIST,
    DAP_MSG_UPLOAD_REQ,
    DAP_MSG_UPLOAD_ERRORS,
    DAP_MSG_AGG_JOB_INIT_REQ,
    DAP_MSG_AGG_JOB_RESP,
    DAP_MSG_AGG_JOB_CONTINUE_REQ,
    DAP_MSG_AGG_SHARE_REQ,
    DAP_MSG_AGG_SHARE,
    DAP_MSG_COLLECTION_JOB_REQ,
    DAP_MSG_COLLECTION_JOB_RESP,
    DAP_MSG_TYPES
} dap_msg_type_t;

/* The Content-Type of each message ("Protocol Message Media Type"), e.g.
 * dap_msg_media_type[DAP_MSG_AGG_JOB_INIT_REQ] is
 * "application/ppm-dap;message=aggregation-job-init-req". */
extern const char *const dap_msg_media_type[DAP_MSG_TYPES];

/* The message a Content-Type value names: exactly one of the table's strings, optionally followed
 * by further parameters (";version=18"). -1 for anything else. */
int dap_msg_type_of(const char *content_type, size_t len);

/* The reason a decoder gives for an extension list out of order. */
extern const char dap_msg_reason_ext_order[];

/* ---- the pieces ----------------------------------------------------------------------------- */

/* A list: its bytes (the content, without a length prefix) and its number of items. */
typedef struct {
    dpm_span_t bytes;
    size_t n;
} dap_list_t;

typedef struct {
    uint64_t start, duration; /* Time and Duration, in time_precision units */
} dap_interval_t;

/* HpkeCiphertext: config_id, enc<1..2^16-1>, payload<1..2^32-1>. */
typedef struct {
    uint8_t config_id;
    dpm_span_t enc, payload;
} dap_hpke_ct_t;

/* Extension, AggregationJobExtension, CollectionJobExtension: type, data<0..2^16-1>. */
typedef struct {
    uint16_t type;
    dpm_span_t data;
} dap_ext_t;

/* ReportMetadata. public_ext: Extension public_extensions<0..2^16-1> (framing checked by the
 * decoder, order not: see above). */
typedef struct {
    const uint8_t *report_id; /* DPM_DAP_REPORT_ID_BYTES */
    uint64_t time;
    dap_list_t public_ext;
} dap_report_metadata_t;

/* ReportShare: metadata, public_share<0..2^32-1>, the aggregator's encrypted input share. */
typedef struct {
    dap_report_metadata_t metadata;
    dpm_span_t public_share;
    dap_hpke_ct_t share;
} dap_report_share_t;

/* An HpkeConfig of any suite, as an HpkeConfigList carries it. */
typedef struct {
    uint8_t id;
    uint16_t kem_id, kdf_id, aead_id;
    dpm_span_t public_key; /* <1..2^16-1> */
} dap_hpke_config_view_t;

/* Query and BatchSelector: a batch mode and its config. time_interval: config is an Interval
 * (both). leader_selected: the Query's config is empty, the BatchSelector's a BatchID. */
typedef struct {
    uint8_t batch_mode;      /* DPM_DAP_BATCH_* */
    dap_interval_t interval; /* time_interval */
    const uint8_t *batch_id; /* leader_selected BatchSelector: DAP_BATCH_ID_BYTES */
} dap_batch_t;

/* ---- the messages --------------------------------------------------------------------------- */

/* VerifyInit: report_share, payload<1..2^32-1> (the leader's first verifier message). */
typedef struct {
    dap_report_share_t report_share;
    dpm_span_t payload;
} dap_verify_init_t;

/* AggregationJobInitReq: verification_key_id, agg_param<0..2^32-1>,
 * AggregationJobExtension extensions<0..2^16-1>, then VerifyInit verify_inits to its end. */
typedef struct {
    uint8_t verification_key_id;
    dpm_span_t agg_param;
    dap_list_t extensions;   /* dap_ext_t items, strictly increasing */
    dap_list_t verify_inits; /* dap_verify_init_t items (decode only) */
} dap_agg_job_init_req_t;

/* VerifyResp: report_id, type, then payload<1..2^32-1> (continue), nothing (finish) or a
 * ReportError (reject). */
typedef struct {
    const uint8_t *report_id;
    uint8_t type;         /* DAP_VERIFY_* */
    dpm_span_t payload;   /* continue */
    uint8_t report_error; /* reject: DAP_REPORT_ERROR_* */
} dap_verify_resp_t;

/* VerifyContinue: report_id, payload<1..2^32-1>. */
typedef struct {
    const uint8_t *report_id;
    dpm_span_t payload;
} dap_verify_continue_t;

/* AggregationJobContinueReq: uint16 step (>= 1), then VerifyContinue items to its end. Prio3 is
 * one round: its aggregation jobs never send one ("Aggregate Continuation"). */
typedef struct {
    uint16_t step;
    dap_list_t verify_continues; /* decode only */
} dap_agg_job_continue_req_t;

/* ReportUploadStatus (UploadErrors: these, 17 bytes each, to its end). */
typedef struct {
    const uint8_t *report_id;
    uint8_t error;
} dap_upload_status_t;

/* CollectionJobReq: Query, agg_param<0..2^32-1>, CollectionJobExtension extensions<0..2^16-1>. */
typedef struct {
    dap_batch_t query;
    dpm_span_t agg_param;
    dap_list_t extensions;
    dpm_span_t encoded; /* decode only: the message's own bytes (AggregateShareAad's part) */
} dap_collection_job_req_t;

/* AggregateShareReq: CollectionJobReq, BatchSelector, uint64 report_count, checksum[32]. */
typedef struct {
    dap_collection_job_req_t collection_job_req;
    dap_batch_t batch_selector;
    uint64_t report_count;
    const uint8_t *checksum; /* DAP_CHECKSUM_BYTES */
} dap_agg_share_req_t;

/* CollectionJobResp: uint64 report_count, Interval, the leader's and the helper's HpkeCiphertext.
 */
typedef struct {
    uint64_t report_count;
    dap_interval_t interval;
    dap_hpke_ct_t leader_share, helper_share;
} dap_collection_job_resp_t;

/* ---- encoders and decoders ------------------------------------------------------------------ */

/* An extension list's content (what dap_list_t.bytes of extensions holds) from e[0, n); types
 * must be strictly increasing. Decode: the content of a list, checked, into l. */
dpm_status_t dap_msg_ext_list_encode(const dap_ext_t *e, size_t n, uint8_t *buf, size_t cap,
                                     size_t *len);
dpm_status_t dap_msg_ext_list_decode(const uint8_t *bytes, size_t len, dap_list_t *l,
                                     const char **reason);

/* HpkeConfigList<10..2^16-1> from configs c[0, n) (n >= 1, distinct ids; each written by
 * dpm_hpke_config_encode: the supported suite only). The decoder takes any suite (the client's
 * pick is dpm_hpke_config_list_select) and walks with dap_msg_next_hpke_config. One HpkeConfig
 * alone: dpm_hpke_config_encode / dpm_hpke_config_decode (dpm/expert/hpke.h). */
dpm_status_t dap_msg_hpke_config_list_encode(const dpm_hpke_config_t *c, size_t n, uint8_t *buf,
                                             size_t cap, size_t *len);
dpm_status_t dap_msg_hpke_config_list_decode(const uint8_t *bytes, size_t len, dap_list_t *l,
                                             const char **reason);

dpm_status_t dap_msg_hpke_ct_encode(const dap_hpke_ct_t *m, uint8_t *buf, size_t cap, size_t *len);
dpm_status_t dap_msg_hpke_ct_decode(const uint8_t *bytes, size_t len, dap_hpke_ct_t *m,
                                    const char **reason);
/* AggregateShare (struct { HpkeCiphertext encrypted_aggregate_share; }: the same bytes). */
dpm_status_t dap_msg_agg_share_encode(const dap_hpke_ct_t *m, uint8_t *buf, size_t cap,
                                      size_t *len);
dpm_status_t dap_msg_agg_share_decode(const uint8_t *bytes, size_t len, dap_hpke_ct_t *m,
                                      const char **reason);

dpm_status_t dap_msg_report_metadata_encode(const dap_report_metadata_t *m, uint8_t *buf,
                                            size_t cap, size_t *len);
dpm_status_t dap_msg_report_metadata_decode(const uint8_t *bytes, size_t len,
                                            dap_report_metadata_t *m, const char **reason);
dpm_status_t dap_msg_report_share_encode(const dap_report_share_t *m, uint8_t *buf, size_t cap,
                                         size_t *len);
dpm_status_t dap_msg_report_share_decode(const uint8_t *bytes, size_t len, dap_report_share_t *m,
                                         const char **reason);

/* AggregationJobInitReq: the head (verify_inits ignored), then each VerifyInit appended. */
dpm_status_t dap_msg_agg_job_init_req_encode(const dap_agg_job_init_req_t *m, uint8_t *buf,
                                             size_t cap, size_t *len);
dpm_status_t dap_msg_verify_init_encode(const dap_verify_init_t *m, uint8_t *buf, size_t cap,
                                        size_t *len);
dpm_status_t dap_msg_agg_job_init_req_decode(const uint8_t *bytes, size_t len,
                                             dap_agg_job_init_req_t *m, const char **reason);

/* AggregationJobResp: VerifyResp items back to back. */
dpm_status_t dap_msg_verify_resp_encode(const dap_verify_resp_t *m, uint8_t *buf, size_t cap,
                                        size_t *len);
dpm_status_t dap_msg_agg_job_resp_decode(const uint8_t *bytes, size_t len, dap_list_t *resps,
                                         const char **reason);

/* AggregationJobContinueReq: the head (the step), then each VerifyContinue appended. */
dpm_status_t dap_msg_agg_job_continue_req_encode(const dap_agg_job_continue_req_t *m, uint8_t *buf,
                                                 size_t cap, size_t *len);
dpm_status_t dap_msg_verify_continue_encode(const dap_verify_continue_t *m, uint8_t *buf,
                                            size_t cap, size_t *len);
dpm_status_t dap_msg_agg_job_continue_req_decode(const uint8_t *bytes, size_t len,
                                                 dap_agg_job_continue_req_t *m,
                                                 const char **reason);

/* UploadErrors: ReportUploadStatus items back to back. */
dpm_status_t dap_msg_upload_status_encode(const dap_upload_status_t *m, uint8_t *buf, size_t cap,
                                          size_t *len);
dpm_status_t dap_msg_upload_errors_decode(const uint8_t *bytes, size_t len, dap_list_t *statuses,
                                          const char **reason);

/* Query and BatchSelector alone (they are also parts of the messages below). */
dpm_status_t dap_msg_query_encode(const dap_batch_t *m, uint8_t *buf, size_t cap, size_t *len);
dpm_status_t dap_msg_query_decode(const uint8_t *bytes, size_t len, dap_batch_t *m,
                                  const char **reason);
dpm_status_t dap_msg_batch_selector_encode(const dap_batch_t *m, uint8_t *buf, size_t cap,
                                           size_t *len);
dpm_status_t dap_msg_batch_selector_decode(const uint8_t *bytes, size_t len, dap_batch_t *m,
                                           const char **reason);

dpm_status_t dap_msg_collection_job_req_encode(const dap_collection_job_req_t *m, uint8_t *buf,
                                               size_t cap, size_t *len);
dpm_status_t dap_msg_collection_job_req_decode(const uint8_t *bytes, size_t len,
                                               dap_collection_job_req_t *m, const char **reason);
dpm_status_t dap_msg_agg_share_req_encode(const dap_agg_share_req_t *m, uint8_t *buf, size_t cap,
                                          size_t *len);
dpm_status_t dap_msg_agg_share_req_decode(const uint8_t *bytes, size_t len, dap_agg_share_req_t *m,
                                          const char **reason);
dpm_status_t dap_msg_collection_job_resp_encode(const dap_collection_job_resp_t *m, uint8_t *buf,
                                                size_t cap, size_t *len);
dpm_status_t dap_msg_collection_job_resp_decode(const uint8_t *bytes, size_t len,
                                                dap_collection_job_resp_t *m, const char **reason);

/* ---- iterators: the next item of a list a decoder accepted ----------------------------------
 * Start with *pos = 0; each call fills *item and advances *pos. DPM_ERR_RANGE at the list's end
 * (*pos == l->bytes.len); DPM_ERR_PROTOCOL if the bytes are not a well-formed item (never for a
 * list a decoder gave). */
dpm_status_t dap_msg_next_ext(const dap_list_t *l, size_t *pos, dap_ext_t *item);
dpm_status_t dap_msg_next_hpke_config(const dap_list_t *l, size_t *pos,
                                      dap_hpke_config_view_t *item);
dpm_status_t dap_msg_next_verify_init(const dap_list_t *l, size_t *pos, dap_verify_init_t *item);
dpm_status_t dap_msg_next_verify_resp(const dap_list_t *l, size_t *pos, dap_verify_resp_t *item);
dpm_status_t dap_msg_next_verify_continue(const dap_list_t *l, size_t *pos,
                                          dap_verify_continue_t *item);
dpm_status_t dap_msg_next_upload_status(const dap_list_t *l, size_t *pos,
                                        dap_upload_status_t *item);

#endif /* DPM_HOST_AGGREGATOR_DAP_MSG_H */
