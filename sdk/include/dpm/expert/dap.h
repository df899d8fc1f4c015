/* SPDX-License-Identifier: Apache-2.0 */
/* The Distributed Aggregation Protocol's messages (draft-ietf-ppm-dap, the version whose
 * domain separation tag is "dap-18"; tests/vectors/dap names the commit), as the two-aggregator
 * mode needs them: the task (TaskConfiguration), the report a device uploads (Report:
 * ReportMetadata, the public share, two HpkeCiphertexts), the plaintext of an input share
 * (PlaintextInputShare) and its associated data (InputShareAad). Every encoding is the draft's
 * (TLS presentation language, big-endian), so a report built here is what any DAP leader
 * (Janus, host-sim's) expects byte for byte.
 *
 * The device side builds a report in ONE caller buffer (dpm_device_dap_report_* in
 * dpm/device.h does it in the safe order): the VDAF shard writes its shares straight into their
 * places in the report, and each input share is sealed in place. The aggregator side decodes a
 * report into views of the bytes (nothing copied) and opens its input share with
 * dpm_dap_open_input_share (dpm/port_dap.h: it needs HPKE, which lives in port/tls).
 *
 * What this implementation fixes where the draft leaves a choice:
 *   - two aggregators (the leader and one helper), as DAP requires;
 *   - the device sends no report extensions (public and private lists empty);
 *   - the VDAF is one of Prio3Count, Sum, SumVec, Histogram, MultihotCountVec (their DAP
 *     configuration encodings, the draft's appendix "VDAF Configuration Encodings");
 *   - task extensions: task_interval (1), dpmetrics' central-DP extension
 *     (DPM_DAP_EXT_CENTRAL_DP, required): it binds the ε of the aggregators' noise into every
 *     input share's associated data, so a leader that tells devices one ε while the helper
 *     was configured with another makes the helper's decryption fail (the reports are
 *     dropped, not released under a weaker ε); and dpmetrics' local label randomized response
 *     (DPM_DAP_EXT_LOCAL_LABEL_RR, optional, the "hybrid"), bound the same way. Any other
 *     extension: refused (DAP: MUST NOT participate in a task with an unrecognised extension).
 *
 * Privacy units and trust model of the two ε a task can carry:
 *   - central ε (DPM_DAP_EXT_CENTRAL_DP): per device and period (the whole measurement), while
 *     at least one of the two aggregators is honest and adds its noise;
 *   - local ε0 (DPM_DAP_EXT_LOCAL_LABEL_RR): label-DP per example, which holds even if BOTH
 *     aggregators collude and read every device's shares: the device randomizes every
 *     example's label before sharding (dpm/expert/device_dap.h). The same unit as local-DP
 *     roc_hist's label part (dpm/expert/roc_hist.h). NOT protected by ε0: the scores (which
 *     bin an example falls in), hence each bin's total pos + neg, and the group (which of the
 *     groups' slots holds the examples): colluding aggregators see those exactly.
 * More on the privacy unit: dpm/device.h's two-aggregator section. */
#ifndef DPM_DAP_H
#define DPM_DAP_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/hpke.h"
#include "dpm/status.h"
#include "dpm/types.h"
#include "dpm/expert/vdaf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_DAP_TASK_ID_BYTES 32u
#define DPM_DAP_REPORT_ID_BYTES 16u
/* The draft version in its domain separation tags: the VDAF context is "dap-18" || task_id and
 * the HPKE info "dap-18 input share" || 0x01 || role. */
#define DPM_DAP_DST "dap-18"
#define DPM_DAP_CTX_BYTES (6u + DPM_DAP_TASK_ID_BYTES)
/* Roles (the draft's Role enum). */
#define DPM_DAP_ROLE_CLIENT 1u
#define DPM_DAP_ROLE_LEADER 2u
#define DPM_DAP_ROLE_HELPER 3u
/* Batch modes. */
#define DPM_DAP_BATCH_TIME_INTERVAL 1u
#define DPM_DAP_BATCH_LEADER_SELECTED 2u
/* Task extensions this code knows. */
#define DPM_DAP_EXT_TASK_INTERVAL 0x0001u
/* dpmetrics' own (not registered with IANA; the draft's registry has no private range): the
 * central noise each aggregator adds to its aggregate share, calibrated so that its noise alone
 * protects one report (one device, one period). extension_data =
 *   mechanism 1, discrete Laplace: struct { uint8 mechanism; uint32 eps_q16; }: ε-DP with
 *     ε = eps_q16 / 2^16;
 *   mechanism 2, discrete Gaussian: struct { uint8 mechanism; uint32 eps_q16; uint64 sigma2; }:
 *     integer variance parameter sigma2, rho-zCDP for the task's L2 sensitivity, and eps_q16
 *     the ε of the (ε, δ)-DP that rho gives at the task's δ (host-sim/aggregator/dap_tasks.h):
 *     what a device's ledger charges, as for mechanism 1. */
#define DPM_DAP_EXT_CENTRAL_DP 0xFF00u
#define DPM_DAP_DP_DISCRETE_LAPLACE 1u
#define DPM_DAP_DP_DISCRETE_GAUSSIAN 2u
/* dpmetrics' own too: the device applies binary randomized response to every example's label
 * before sharding (the two-aggregator "hybrid"). extension_data =
 *   struct { uint32 eps0_q16; uint16 bins; } (6 bytes): ε0 = eps0_q16 / 2^16 per example;
 * the measurement is a roc_hist-like SumVec of groups x 2 x bins counts, group-major:
 * meas[g*2*bins + j] the positives and meas[g*2*bins + bins + j] the negatives of bin j.
 * Only on a Prio3SumVec task whose length is a multiple of 2 * bins, bins >= 1 (one bin is a
 * per-group positive count; a ROC needs >= 2, which is the campaign's business, not the
 * randomizer's: RR acts on each (pos, neg) pair alone), eps0_q16 in (0, DPM_EPS_MAX_Q16] and
 * small enough for 32-bit RR thresholds (dpm_rr_init: ε0 below about 22.18). Each example
 * reports its label with probability keep / 2^32 and the other with other / 2^32 (dpm_rr_init's
 * thresholds), so the report's pos'_j + neg'_j = pos_j + neg_j: every entry stays within the
 * SumVec's range when each bin's total does (the device checks that before anything is spent),
 * and the Prio3 proof is unchanged. A collector debiases per bin: E[pos'] = P pos + Q neg
 * (P = keep / 2^32, Q = other / 2^32).
 * SDK built without DPM_DAP_LABEL_RR: a task with this extension is refused
 * (DPM_ERR_UNSUPPORTED, "unknown task extension (DPM_DAP_LABEL_RR off?)"). */
#define DPM_DAP_EXT_LOCAL_LABEL_RR 0xFF01u
/* Aggregator entries a policy can name (two aggregators, with room for a rotated key each). */
#define DPM_DAP_POLICY_MAX_AGGREGATORS 4u
/* Longest aggregator URL and task_info a device accepts (the draft allows 2^16 - 1). */
#define DPM_DAP_MAX_URL 255u
#define DPM_DAP_MAX_TASK_INFO 255u
/* Longest TaskConfiguration those bounds allow: task_info, two URLs, precision, batch size,
 * batch mode, an empty batch config, VDAF type and configuration (at most 16 bytes), and the
 * three extensions (4 + 16, 4 + 13 and 4 + 6) under their 2-byte list length. */
#define DPM_DAP_TASK_CONFIG_MAX                                                                    \
    (1u + DPM_DAP_MAX_TASK_INFO + 2u * (2u + DPM_DAP_MAX_URL) + 8u + 8u + 1u + 2u + 4u + 2u +      \
     16u + 2u + 20u + 17u + 10u)

/* A report's bytes around the VDAF messages: ReportMetadata (16 + 8 + 2), the public share's
 * length (4), and per input share config_id (1), enc<1..2^16-1> (2 + 32), payload<1..2^32-1>
 * (4) holding the sealed PlaintextInputShare (private_extensions 2, payload length 4, tag 16). */
#define DPM_DAP_METADATA_BYTES (DPM_DAP_REPORT_ID_BYTES + 8u + 2u)
#define DPM_DAP_SHARE_OVERHEAD (1u + 2u + DPM_HPKE_NENC + 4u + 2u + 4u + DPM_HPKE_NT)
#define DPM_DAP_REPORT_OVERHEAD (DPM_DAP_METADATA_BYTES + 4u + 2u * DPM_DAP_SHARE_OVERHEAD)
/* Exact bytes of a report for a VDAF shape (see dpm/expert/vdaf.h), e.g.
 *   uint8_t report[DPM_DAP_REPORT_BYTES(DPM_PRIO3_SUMVEC_SHAPE(2, 48, 8, 26))];
 * dpm_dap_report_bytes(v) gives the same at run time. */
#define DPM_DAP_REPORT_BYTES(...)                                                                  \
    (DPM_DAP_REPORT_OVERHEAD + DPM_PRIO3_PUBLIC_SHARE_BYTES(__VA_ARGS__) +                         \
     DPM_PRIO3_LEADER_SHARE_BYTES(__VA_ARGS__) + DPM_PRIO3_HELPER_SHARE_BYTES(__VA_ARGS__))

/* A DAP task as the device and the aggregators see it. dpm_dap_task_decode fills it from the
 * encoded TaskConfiguration (config points into those bytes, which must outlive the task:
 * they are the associated data of every input share, used as given, never re-encoded);
 * dpm_dap_task_config_encode writes the encoding from the same fields. */
typedef struct {
    uint8_t id[DPM_DAP_TASK_ID_BYTES];
    const uint8_t *config; /* the encoded TaskConfiguration (decode only; not owned) */
    size_t config_len;
    dpm_span_t task_info;    /* 1..DPM_DAP_MAX_TASK_INFO bytes */
    dpm_span_t leader_url;   /* 1..DPM_DAP_MAX_URL ASCII bytes, "https://host[:port][/path]" */
    dpm_span_t helper_url;   /* the same for the helper */
    uint64_t time_precision; /* seconds, >= 1 */
    uint64_t min_batch_size; /* >= 1 */
    uint8_t batch_mode;      /* DPM_DAP_BATCH_* */
    dpm_prio3_t vdaf;        /* two shares; its id and shape are the vdaf_type/configuration */
    uint8_t has_interval;    /* the task_interval extension: reports only in */
    uint64_t interval_start; /* [start, start + duration), in time_precision units */
    uint64_t interval_duration;
    uint8_t dp_mechanism;    /* DPM_DAP_DP_DISCRETE_LAPLACE or _GAUSSIAN */
    dpm_eps_t central_eps;   /* ε of the central noise per report, Q16.16, > 0 */
    uint64_t central_sigma2; /* _GAUSSIAN: each aggregator's sigma2, >= 1; _LAPLACE: 0 */
    dpm_eps_t local_eps;     /* label RR ε0 per example, Q16.16; 0: none (no extension) */
    uint32_t local_bins;     /* its bins (SumVec length a multiple of 2 x bins); 0 if none */
    dpm_hpke_config_t leader_hpke, helper_hpke; /* the aggregators' keys (not in the config) */
} dpm_dap_task_t;

/* Decode a TaskConfiguration (bytes[0, len), exactly, kept by reference) for task `id` and bind
 * the aggregators' HPKE configurations (each checked with dpm_hpke_config_check: what the app
 * got from {aggregator}/hpke_config, see dpm_hpke_config_list_select). Returns DPM_OK;
 * DPM_ERR_PROTOCOL for a malformed encoding (lengths, trailing bytes, extensions not in
 * strictly increasing order, a VDAF configuration of the wrong size); DPM_ERR_UNSUPPORTED for
 * what this code does not run (another VDAF or batch mode, a VDAF the SDK was built without,
 * an unknown task extension, a task without the central-DP extension or with another noise, an
 * HPKE suite other than dpm/expert/hpke.h's, the label-RR extension in an SDK built without
 * DPM_DAP_LABEL_RR or on a variant other than SumVec); DPM_ERR_PARAM for NULL, a VDAF shape its
 * init refuses, a URL that is not https or too long, a time precision, batch size or ε of 0,
 * the same key for both aggregators, or a label-RR extension with ε0 0 or too large, bins 0 or
 * not dividing the SumVec's length into 2 x bins blocks. *t untouched on error, *reason (if
 * not NULL) names the cause. */
dpm_status_t dpm_dap_task_decode(const uint8_t id[DPM_DAP_TASK_ID_BYTES], const uint8_t *bytes,
                                 size_t len, const dpm_hpke_config_t *leader_hpke,
                                 const dpm_hpke_config_t *helper_hpke, dpm_dap_task_t *t,
                                 const char **reason);

/* Encode t's fields (all but id, config and the HPKE configurations) as a TaskConfiguration
 * into out; the label-RR extension when t->local_eps != 0 (with t->local_bins). DPM_ERR_BUFFER
 * if cap is too small (DPM_DAP_TASK_CONFIG_MAX always suffices), DPM_ERR_PARAM for NULL or
 * values dpm_dap_task_decode would refuse (local_bins != 0 without local_eps too), whatever
 * this SDK's DPM_DAP_LABEL_RR (the aggregators' side encodes tasks for any device).
 * *len = bytes written. */
dpm_status_t dpm_dap_task_config_encode(const dpm_dap_task_t *t, uint8_t *out, size_t cap,
                                        size_t *len);

/* The host part of an aggregator URL ("https://HOST[:PORT]/..." -> "HOST[:PORT]"), what the
 * policy names aggregators by. DPM_ERR_PARAM for a URL without "https://" or an empty host. */
dpm_status_t dpm_dap_url_host(dpm_span_t url, dpm_span_t *host);

/* The ledger's campaign id for task t's participation: 0x80000000 | the first four bytes of
 * the task id (big-endian, top bit cleared). Task ids are random (DAP: globally unique), so
 * two tasks of one device share an entry with probability 2^-31; if they do, each charge
 * counts against both: stricter, never looser. */
uint32_t dpm_dap_ledger_id(const dpm_dap_task_t *t);

/* Bytes of a report of t's VDAF (DPM_DAP_REPORT_BYTES at run time). */
size_t dpm_dap_report_bytes(const dpm_prio3_t *v);

/* DPM_OK if `measurement` (count values, as dpm_prio3_shard takes them) is one the task's VDAF
 * accepts; DPM_ERR_PARAM otherwise. Constant time in the values (no branch or index on them):
 * only the verdict is public. The device checks with it BEFORE charging the ledger. */
dpm_status_t dpm_dap_measurement_check(const dpm_prio3_t *v, const uint64_t *measurement,
                                       size_t count);

/* ---- the report ------------------------------------------------------------------------- */

/* Where the parts of a report of a given VDAF lie in its buffer (offsets from its start). */
typedef struct {
    size_t bytes;        /* the whole report */
    size_t public_share; /* public share content */
    size_t public_share_len;
    size_t aad_len;        /* ReportMetadata || public_share<0..2^32-1>: report[0, aad_len) */
    size_t share[2];       /* PlaintextInputShare of the leader [0], the helper [1] */
    size_t share_len[2];   /* its bytes (private_extensions, payload), sealed in place */
    size_t input_share[2]; /* the VDAF input share inside it */
    size_t input_share_len[2];
    size_t enc[2]; /* the encapsulated key */
    size_t tag[2]; /* the AEAD tag, right after the sealed PlaintextInputShare */
} dpm_dap_layout_t;

/* The layout of a report of VDAF v. */
void dpm_dap_report_layout(const dpm_prio3_t *v, dpm_dap_layout_t *l);

/* Write everything of a report of t but the VDAF messages, the encapsulated keys and the tags
 * (which dpm_prio3_shard and the seal fill in place): ReportMetadata (id, time, no
 * extensions), the lengths and the config ids. out must hold l->bytes. */
void dpm_dap_report_frame(const dpm_dap_task_t *t, const dpm_dap_layout_t *l,
                          const uint8_t report_id[DPM_DAP_REPORT_ID_BYTES], uint64_t time,
                          uint8_t *out);

/* The HPKE info for an input share to `role` (DPM_DAP_ROLE_LEADER or _HELPER): "dap-18 input
 * share" || 0x01 || role, 20 bytes into info. */
#define DPM_DAP_INFO_BYTES 20u
void dpm_dap_input_share_info(uint8_t role, uint8_t info[DPM_DAP_INFO_BYTES]);

/* The VDAF application context: "dap-18" || task id (DPM_DAP_CTX_BYTES into ctx). */
void dpm_dap_vdaf_ctx(const dpm_dap_task_t *t, uint8_t ctx[DPM_DAP_CTX_BYTES]);

/* A report decoded into views of its bytes (the aggregator side: nothing is copied). */
typedef struct {
    const uint8_t *report_id; /* DPM_DAP_REPORT_ID_BYTES */
    uint64_t time;
    dpm_span_t public_extensions; /* the encoded Extension list (its content) */
    dpm_span_t aad_tail;          /* ReportMetadata || public_share<..>: InputShareAad's end */
    dpm_span_t public_share;
    struct {
        uint8_t config_id;
        const uint8_t *enc;    /* DPM_HPKE_NENC */
        dpm_span_t ciphertext; /* the sealed PlaintextInputShare, without the tag */
        const uint8_t *tag;    /* DPM_HPKE_NT */
    } share[2];                /* [0] leader, [1] helper */
} dpm_dap_report_view_t;

/* Decode one Report from bytes[0, len) exactly (a DAP UploadRequest is reports back to back:
 * decode them with dpm_dap_report_next). DPM_ERR_PROTOCOL for anything malformed: a short or
 * long encoding, a vector length past its end, an enc that is not 32 bytes (the only KEM
 * supported), a payload shorter than a tag. *r untouched on error; *reason names the cause. */
dpm_status_t dpm_dap_report_decode(const uint8_t *bytes, size_t len, dpm_dap_report_view_t *r,
                                   const char **reason);

/* The next report of an UploadRequest: decodes the report at bytes[*pos ..] and advances *pos
 * past it. Same statuses (on error *pos is unchanged: the rest of the request cannot be
 * framed). */
dpm_status_t dpm_dap_report_next(const uint8_t *bytes, size_t len, size_t *pos,
                                 dpm_dap_report_view_t *r, const char **reason);

/* Decode a PlaintextInputShare (an opened input share): its private extensions (the encoded
 * list's content) and payload, views into bytes. DPM_ERR_PROTOCOL when malformed or the payload
 * is empty. */
dpm_status_t dpm_dap_plaintext_decode(const uint8_t *bytes, size_t len, dpm_span_t *private_ext,
                                      dpm_span_t *payload);

/* ---- the app's policy for this mode (dpm_policy_t.dap points at one, dpm/device.h) --------- */

/* One aggregator the app trusts: its host (as in its URL, "host[:port]", NUL-terminated, not
 * copied) and one HPKE configuration of it (repeat the host for several keys). */
typedef struct {
    const char *host;
    dpm_hpke_config_t hpke;
} dpm_dap_aggregator_t;

/* Which tasks the app takes part in: both aggregators named here (host and key), central ε at
 * most max_central_eps, min_batch_size at least min_batch_size, discrete Gaussian noise only if
 * accept_gaussian, and, if max_local_eps is set, label RR at ε0 <= max_local_eps. All zero:
 * none (the mode off). */
typedef struct dpm_dap_policy_s {
    uint32_t naggregators; /* 0 .. DPM_DAP_POLICY_MAX_AGGREGATORS */
    dpm_dap_aggregator_t aggregators[DPM_DAP_POLICY_MAX_AGGREGATORS];
    dpm_eps_param_t max_central_eps; /* DPM_EPS(x); below DPM_EPS_FLOOR_Q16: an invalid policy */
    uint64_t min_batch_size;         /* smallest min_batch_size a task may set, >= 1 */
    /* 1: also tasks with discrete Gaussian noise (DPM_DAP_DP_DISCRETE_GAUSSIAN), whose ε holds
     * with a δ > 0 the device does not see (the aggregators' campaigns file sets it, at most
     * 1e-5); 0 (the default): Laplace tasks only, pure ε. */
    uint8_t accept_gaussian;
    /* DPM_EPS_Q16(0) (the default): no requirement, tasks with or without label RR (any ε0);
     * the central ε is then the only guarantee the app asks for. DPM_EPS(x): the app requires
     * label RR with ε0 <= x, so that each label stays protected if both aggregators collude: a
     * task without the extension (ε0 infinite) or with a larger ε0 is refused. Nonzero below
     * DPM_EPS_FLOOR_Q16, or nonzero in an SDK built without DPM_DAP_LABEL_RR (no task could
     * meet it): an invalid policy. */
    dpm_eps_param_t max_local_eps;
} dpm_dap_policy_t;

/* DPM_OK if policy p allows task t: its leader and its helper are two different aggregators
 * the policy names with exactly the HPKE configuration the task binds, its central ε is at
 * most p->max_central_eps, its min_batch_size at least p->min_batch_size, its noise Laplace
 * unless p->accept_gaussian, and label RR at ε0 <= p->max_local_eps when that is set.
 * DPM_ERR_POLICY otherwise (p NULL too: no policy for the mode), with *reason (if not NULL)
 * saying which rule; DPM_ERR_PARAM for a NULL t or an invalid policy (more than
 * DPM_DAP_POLICY_MAX_AGGREGATORS entries, a NULL or empty host, an HPKE configuration
 * dpm_hpke_config_check refuses, min_batch_size 0 with aggregators named, a max_central_eps
 * below DPM_EPS_FLOOR_Q16 or a nonzero max_local_eps below it: an ε written as a plain
 * integer, see dpm_eps_param_t). */
dpm_status_t dpm_dap_policy_check(const dpm_dap_policy_t *p, const dpm_dap_task_t *t,
                                  const char **reason);

#ifdef __cplusplus
}
#endif

#endif /* DPM_DAP_H */
