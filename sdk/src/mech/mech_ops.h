/* SPDX-License-Identifier: Apache-2.0 */
/* One table of operations per mechanism (internal to sdk/src).
 *
 * Each mechanism's file (mech/<m>.c) defines, inside its one `#if DPM_MECH_<X>` block, the
 * campaign check, the fingerprint, the body's wire codec and the collector's body check, and
 * exports them as a dpm_mech_ops_t; mech/registry.c is the only list of mechanisms (id -> ops,
 * id -> name). The generic paths (dpm_mech_init, dpm_report_encode / _decode,
 * dpm_mech_check_report) find the table by id and call through it; a NULL table means "not in
 * this build", which they refuse with dpm_mech_absent_reason before anything is charged.
 *
 * The device's typed report calls do not go through the table: they call dpm_mech_report_<m>
 * (mech/<m>.c, which calls dpm_<m>_perturb) and dpm_report_encode_<kind> (report/report.c,
 * which calls dpm_<m>_put_body) directly, so make size's call graph stays exact (a pointer call
 * would cost the deepest address-taken function). Those typed pieces are declared here and
 * defined in every build: a compiled-out mechanism's file defines them as refusing stubs. */
#ifndef DPM_MECH_OPS_H
#define DPM_MECH_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pb_encode.h>

#include "dpm.pb.h"
#include "dpm/report.h"

typedef struct dpm_mech_ops {
    /* campaign -> mechanism: the mechanism's own checks, then next->params, eps_implemented and
     * params_hash (next->campaign is already *c; the generic checks and the budget are the
     * caller's). DPM_ERR_PARAM / _RANGE with a static *reason. */
    dpm_status_t (*init)(dpm_mech_t *next, const dpm_campaign_t *c, const char **reason);
    /* 1 if r's body is one dpm_report_encode writes (nothing is written otherwise) */
    int (*body_ok)(const dpm_report_t *r);
    /* writes r's body as its Report field (tag, length, message) */
    bool (*put_body)(pb_ostream_t *s, const dpm_report_t *r);
    /* 1 if msg's body is the kind msg->mechanism names, well formed, and this build holds it */
    int (*body_fits)(const dpm_v1_Report *msg);
    /* msg's body (body_fits) into out->body */
    void (*body_from_wire)(const dpm_v1_Report *msg, dpm_report_t *out);
    /* the collector's check of r's body under m (the header is checked already):
     * DPM_ERR_PROTOCOL with *reason */
    dpm_status_t (*check_body)(const dpm_mech_t *m, const dpm_report_t *r, const char **reason);
} dpm_mech_ops_t;

/* Each defined by its mechanism's file, under its switch; only mech/registry.c lists them. One
 * table may serve several ids (tuple_mr / tuple_ml, ustat_bins / _tree, fedauc_rr / _lap). */
extern const dpm_mech_ops_t dpm_mech_ops_tuple, dpm_mech_ops_roc_hist, dpm_mech_ops_dpauc,
    dpm_mech_ops_ustat, dpm_mech_ops_fedauc;

/* The ops of mechanism id, or NULL when this build does not have it (or id is unknown). */
const dpm_mech_ops_t *dpm_mech_ops_find(dpm_mech_id_t id);

/* Why a campaign or report of id cannot run here: for a known mechanism compiled out, a static
 * reason naming it and its switch; NULL for an id no build knows. */
const char *dpm_mech_absent_reason(dpm_mech_id_t id);

/* ---- helpers of every mechanism file (mech/mech.c) ------------------------------------------- */

/* *reason = why (if reason is not NULL); returns st. */
dpm_status_t dpm_mech_fail(const char **reason, const char *why, dpm_status_t st);

/* FNV-1a over little-endian 32-bit words (and a 64-bit word as two): the parameter
 * fingerprints. Cheap, platform independent, and enough to tell parameter sets apart (a
 * consistency check, not an authenticator). */
#define DPM_FNV_INIT 2166136261u
uint32_t dpm_fnv_word(uint32_t h, uint32_t w);
uint32_t dpm_fnv_u64(uint32_t h, uint64_t w);

/* 1 if rc is an unused receipt for a report of m. */
int dpm_receipt_ok(const dpm_mech_t *m, const dpm_receipt_t *rc);

/* The part every report shares, after the body: st is the body's status (nothing more is drawn
 * when it failed), then the 16-byte report id (two 64-bit draws, so the order of random draws is
 * body first, then id) and the header from the mechanism; *out (the header, the body of `size`
 * bytes, zeros elsewhere) is written and the receipt used up only on success. */
dpm_status_t dpm_mech_report_finish(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_t *rc,
                                    dpm_status_t st, const void *body, size_t size,
                                    dpm_report_t *out);

/* ---- typed body codecs, for dpm_report_encode_<kind> (report/report.c) -------------------- */
/* Defined in every build (stubs refusing everything when the mechanism is compiled out). */
int dpm_tuple_body_ok(const dpm_report_t *r);
bool dpm_tuple_put_body(pb_ostream_t *s, const dpm_report_t *r);
int dpm_roc_hist_body_ok(const dpm_report_t *r);
bool dpm_roc_hist_put_body(pb_ostream_t *s, const dpm_report_t *r);
int dpm_dpauc_body_ok(const dpm_report_t *r);
bool dpm_dpauc_put_body(pb_ostream_t *s, const dpm_report_t *r);
int dpm_ustat_body_ok(const dpm_report_t *r); /* ustat_bins and ustat_tree */
bool dpm_ustat_put_body(pb_ostream_t *s, const dpm_report_t *r);
int dpm_fedauc_body_ok(const dpm_report_t *r); /* fedauc_rr and fedauc_lap */
bool dpm_fedauc_put_body(pb_ostream_t *s, const dpm_report_t *r);

/* A body as a length-delimited Report field `tag` (the body codecs' shared last step). */
bool dpm_mech_put_submessage(pb_ostream_t *s, uint32_t tag, const pb_msgdesc_t *fields,
                             const void *body);

/* ---- the device's input checks (device/device.c), before anything is charged ---------------- */
/* Each reads the parameters of its own mechanism, so it lives with it; defined in every build
 * (a compiled-out mechanism's device call refuses before reaching it). Each returns why the
 * inputs cannot be reported under m (DPM_ERR_PARAM), or NULL. */

/* tuple: group < the campaign's groups, then values[i] = the campaign's metric i of conf
 * (*st = DPM_ERR_UNDEFINED with its reason when one is undefined: no report, nothing spent). */
const char *dpm_tuple_input_problem(const dpm_mech_t *m, uint32_t group,
                                    const dpm_confusion_t *conf, dpm_ratio_t *values,
                                    dpm_status_t *st);
/* roc_hist: the histogram's bins and counts, and a group given (group_given) exactly when the
 * campaign has groups, below their number. */
const char *dpm_roc_hist_input_problem(const dpm_mech_t *m, int group_given, uint32_t group,
                                       const dpm_score_hist_t *h);
/* dpauc: counts some examples can give, at the campaign's thresholds (dpm_dpauc_perturb's checks,
 * without drawing). */
const char *dpm_dpauc_input_problem(const dpm_mech_t *m, const dpm_dpauc_counts_t *c);
/* ustat_bins / ustat_tree: the example's scores and label. */
const char *dpm_ustat_input_problem(const dpm_mech_t *m, const dpm_ustat_example_t *ex);
/* fedauc: the bytes an upload of n scores can take (DPM_FEDAUC_UPLOAD_MAX_BYTES at the
 * campaign's score_bits). */
size_t dpm_fedauc_upload_room(const dpm_mech_t *m, uint32_t n);

#endif /* DPM_MECH_OPS_H */
