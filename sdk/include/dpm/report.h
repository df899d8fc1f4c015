/* SPDX-License-Identifier: Apache-2.0 */
/* Reports and campaigns on the wire (sdk/proto/dpm.proto, encoded with nanopb, no heap).
 *
 * A campaign says what to measure and how privately; the device validates it, builds the
 * mechanism, and from then on every report carries the mechanism's fingerprint: its id, the ε
 * it really spends (implemented, rounded up) and a hash of its derived integer parameters. The
 * collector recomputes the fingerprint from its own copy of the campaign and rejects reports
 * that do not match. */
#ifndef DPM_REPORT_H
#define DPM_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/noise.h"
#include "dpm/roc_hist.h"
#include "dpm/tuple.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mechanism ids: the values of dpm.v1.Mechanism. */
typedef enum {
    DPM_MECH_NONE = 0,
    DPM_MECH_ID_ROC_HIST = 1,
    DPM_MECH_ID_DPAUC = 2,
    DPM_MECH_ID_FEDAUC_RR = 3,
    DPM_MECH_ID_FEDAUC_LAP = 4,
    DPM_MECH_ID_USTAT_BINS = 5,
    DPM_MECH_ID_USTAT_TREE = 6,
    DPM_MECH_ID_TUPLE_MR = 7,
    DPM_MECH_ID_TUPLE_ML = 8,
} dpm_mech_id_t;

#define DPM_REPORT_ID_BYTES 16
#define DPM_CAMPAIGN_MAX_METRICS DPM_TUPLE_MAX_METRICS

/* A campaign as the device holds it (decoded from dpm.v1.Campaign, or filled in code). */
typedef struct {
    uint32_t id;
    dpm_mech_id_t mechanism;
    dpm_eps_t eps;    /* ε of one report */
    dpm_eps_t budget; /* ε a device may spend per period */
    uint32_t period_seconds;
    uint32_t groups;
    uint32_t nmetrics;
    dpm_metric_t metrics[DPM_CAMPAIGN_MAX_METRICS];
    uint32_t nbins;                   /* number of bin EDGES held in bin_edges (wire:
                                       * bin_edges_count); roc_hist has nbins + 1 bins */
    uint32_t bin_edges[DPM_MAX_BINS]; /* strictly increasing, Q1.31, each <= 2^31 */
    uint32_t frac_bits;
} dpm_campaign_t;

/* A campaign's mechanism, built and checked: what the device runs. */
typedef struct {
    dpm_campaign_t campaign;
    dpm_eps_t eps_implemented; /* what one report really spends (<= campaign.eps) */
    uint32_t params_hash;      /* fingerprint of the derived parameters */
    dpm_tuple_t tuple;         /* tuple_mr / tuple_ml (zero otherwise) */
    dpm_roc_hist_t roc_hist;   /* roc_hist (zero otherwise) */
} dpm_mech_t;

/* A report before encoding. */
typedef struct {
    uint8_t report_id[DPM_REPORT_ID_BYTES];
    uint32_t campaign_id;
    uint32_t period;
    dpm_mech_id_t mechanism;
    dpm_eps_t eps; /* implemented ε spent */
    uint32_t params_hash;
    dpm_tuple_report_t tuple;       /* body of tuple_mr / tuple_ml reports */
    dpm_roc_hist_report_t roc_hist; /* body of roc_hist reports */
} dpm_report_t;

/* Largest encoded report, and of a Campaign message. The report bound is exact for what
 * dpm_report_encode writes (proto3, packed repeated fields): a header of at most 43 bytes
 * (report_id 18, campaign_id 6, period 6, mechanism 2, eps_q16 6, params_hash 5) plus the
 * largest body. roc_hist with B = DPM_MAX_BINS bins: 2 packed fields of 1 tag + the length
 * varint + B * 5 bytes (sint32 of magnitude up to 2^31 - 1), in 1 tag + a length varint;
 * B = 64: 43 + 1 + 2 + 2 * (1 + 2 + 320) = 692. Without roc_hist the tuple body bounds it
 * (80). Outbox regions and upload work buffers are sized from this, so a build without
 * roc_hist (DPM_MECH_ROC_HIST 0) or with fewer bins needs less. nanopb's dpm_v1_Report_size is
 * larger because it allows the unpacked encoding, which dpm_report_decode also accepts. */
#define DPM_REPORT_VARINT_LEN(x) ((x) < 128u ? 1u : (x) < 16384u ? 2u : 3u)
#define DPM_REPORT_ROC_FIELD_MAX (1u + DPM_REPORT_VARINT_LEN(5u * DPM_MAX_BINS) + 5u * DPM_MAX_BINS)
#define DPM_REPORT_ROC_MAX                                                                         \
    (43u + 1u + DPM_REPORT_VARINT_LEN(2u * DPM_REPORT_ROC_FIELD_MAX) +                             \
     2u * DPM_REPORT_ROC_FIELD_MAX)
#define DPM_REPORT_TUPLE_MAX 80u
#if DPM_MECH_ROC_HIST
#define DPM_REPORT_MAX_BYTES DPM_REPORT_ROC_MAX
#else
#define DPM_REPORT_MAX_BYTES DPM_REPORT_TUPLE_MAX
#endif
#define DPM_CAMPAIGN_MAX_BYTES 420

/* Decode a dpm.v1.Campaign and validate it (dpm_campaign_validate). DPM_ERR_PROTOCOL for
 * bytes that are not a Campaign; *reason (if not NULL) then names the problem. */
dpm_status_t dpm_campaign_decode(const uint8_t *buf, size_t len, dpm_campaign_t *out,
                                 const char **reason);
/* Encode a campaign (the collector publishes campaigns with this; tests use it too). */
dpm_status_t dpm_campaign_encode(const dpm_campaign_t *c, uint8_t *buf, size_t cap, size_t *len);

/* Build the mechanism a campaign asks for, after checking everything a campaign can get
 * wrong: ε outside (0, DPM_EPS_MAX], an unknown or not compiled-in mechanism, groups or metrics
 * out of range or repeated, too many or unsorted bin edges, a budget smaller than one report's
 * implemented ε. roc_hist: 1 <= nbins (edges) <= DPM_MAX_BINS - 1, edges strictly increasing
 * and <= 2^31; its params_hash covers the edges, the Laplace scale and eps_implemented. On
 * error *m is untouched, the campaign must not run, and *reason (if not NULL) is a short
 * static English reason. */
dpm_status_t dpm_mech_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason);

/* Perturb one device's tuple under the campaign into *out (tuple mechanisms). The report id
 * is 16 fresh random bytes from r (the device CSPRNG). Errors as dpm_tuple_perturb. */
dpm_status_t dpm_mech_report_tuple(const dpm_mech_t *m, dpm_rand_t *r, uint32_t period,
                                   uint32_t group, const dpm_ratio_t *values, dpm_report_t *out);

/* Perturb one device's score histogram under a roc_hist campaign into *out: the body is
 * dpm_roc_hist_perturb(&m->roc_hist, r, h) (its draws first), then the report id, 16 fresh
 * random bytes from r. DPM_ERR_PARAM if m is not a roc_hist mechanism; other errors as
 * dpm_roc_hist_perturb. *out untouched on error. */
dpm_status_t dpm_mech_report_roc_hist(const dpm_mech_t *m, dpm_rand_t *r, uint32_t period,
                                      const dpm_score_hist_t *h, dpm_report_t *out);

/* Encode a report into buf (DPM_REPORT_MAX_BYTES always suffice). The body written follows
 * r->mechanism: DPM_MECH_ID_ROC_HIST writes r->roc_hist (RocHistBody, r->roc_hist.bins values
 * in each of pos and neg), every other mechanism r->tuple (TupleBody), as before.
 * DPM_ERR_BUFFER if cap is too small, DPM_ERR_PARAM for a report that is not encodable (too
 * many values; roc_hist bins outside [2, DPM_MAX_BINS]). */
dpm_status_t dpm_report_encode(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len);

/* Decode one report. DPM_ERR_PROTOCOL for malformed bytes (wrong id length, unknown or missing
 * body, too many values, a roc_hist body whose pos and neg counts differ or are < 2, trailing
 * garbage). A TupleBody fills out->tuple, a RocHistBody out->roc_hist (bins = the number of
 * pos values); the other member is zero. The body kind is not checked against
 * out->mechanism here: see dpm_mech_check_report. */
dpm_status_t dpm_report_decode(const uint8_t *buf, size_t len, dpm_report_t *out);

/* Check a decoded report against the mechanism of its campaign: same campaign, mechanism,
 * implemented ε and parameter hash, values in range (tuple_mr: +-1; groups < d; the number of
 * values; roc_hist: bins equal to the campaign's, no INT32_MIN). DPM_ERR_PROTOCOL with
 * *reason on mismatch. */
dpm_status_t dpm_mech_check_report(const dpm_mech_t *m, const dpm_report_t *r, const char **reason);

#ifdef __cplusplus
}
#endif

#endif /* DPM_REPORT_H */
