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
    uint32_t nbins;
    uint32_t bin_edges[DPM_MAX_BINS]; /* sorted, Q1.31 */
    uint32_t frac_bits;
} dpm_campaign_t;

/* A campaign's mechanism, built and checked: what the device runs. */
typedef struct {
    dpm_campaign_t campaign;
    dpm_eps_t eps_implemented; /* what one report really spends (<= campaign.eps) */
    uint32_t params_hash;      /* fingerprint of the derived parameters */
    dpm_tuple_t tuple;         /* tuple_mr / tuple_ml */
} dpm_mech_t;

/* A report before encoding. */
typedef struct {
    uint8_t report_id[DPM_REPORT_ID_BYTES];
    uint32_t campaign_id;
    uint32_t period;
    dpm_mech_id_t mechanism;
    dpm_eps_t eps; /* implemented ε spent */
    uint32_t params_hash;
    dpm_tuple_report_t tuple;
} dpm_report_t;

/* Largest encoded report (tuple with 4 metrics), and of a Campaign message. */
#define DPM_REPORT_MAX_BYTES 80
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
 * implemented ε. On error *m is untouched, the campaign must not run, and *reason (if not
 * NULL) is a short static English reason. */
dpm_status_t dpm_mech_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason);

/* Perturb one device's tuple under the campaign into *out (tuple mechanisms). The report id
 * is 16 fresh random bytes from r (the device CSPRNG). Errors as dpm_tuple_perturb. */
dpm_status_t dpm_mech_report_tuple(const dpm_mech_t *m, dpm_rand_t *r, uint32_t period,
                                   uint32_t group, const dpm_ratio_t *values, dpm_report_t *out);

/* Encode a report into buf (DPM_REPORT_MAX_BYTES always suffice). DPM_ERR_BUFFER if cap is
 * too small, DPM_ERR_PARAM for a report that is not encodable (e.g. too many values). */
dpm_status_t dpm_report_encode(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len);

/* Decode one report. DPM_ERR_PROTOCOL for malformed bytes (wrong id length, unknown body,
 * too many values, trailing garbage). The result is NOT validated against a campaign: see
 * dpm_mech_check_report. */
dpm_status_t dpm_report_decode(const uint8_t *buf, size_t len, dpm_report_t *out);

/* Check a decoded report against the mechanism of its campaign: same campaign, mechanism,
 * implemented ε and parameter hash, values in range (tuple_mr: +-1; groups < d; the number of
 * values). DPM_ERR_PROTOCOL with *reason on mismatch. */
dpm_status_t dpm_mech_check_report(const dpm_mech_t *m, const dpm_report_t *r, const char **reason);

#ifdef __cplusplus
}
#endif

#endif /* DPM_REPORT_H */
