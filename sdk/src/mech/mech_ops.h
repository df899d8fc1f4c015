/* SPDX-License-Identifier: Apache-2.0 */
/* The operations each mechanism provides to the generic code (internal to sdk/src).
 *
 * A mechanism <m> is one file, mech/<m>.c, which defines inside its one `#if DPM_MECH_<X>` block
 * six operations named dpm_<m>_<op>:
 *   mech_init     dpm_mech_init's part: its own campaign checks, then next->params,
 *                 eps_implemented and params_hash (next->campaign is already *c; the checks every
 *                 campaign shares come before, the budget check after); DPM_ERR_PARAM / _RANGE
 *                 with a static *reason
 *   body_ok       1 if r's body is one dpm_report_encode writes (nothing is written otherwise)
 *   write_body    r's body as its Report field (tag, length, message), straight into the
 *                 buffer as pb_encode writes it (core/wire.h)
 *   wire_fits     1 if a decoded msg's body is the kind msg->mechanism names, well formed, and
 *                 this build holds it
 *   wire_read     that body into out->body
 *   check_report  the collector's check of r's body under m, after the header's:
 *                 DPM_ERR_PROTOCOL with *reason
 * mech/registry.c binds the wire ids to them in one list (DPM_MECHS) and is the only place that
 * names every mechanism: the dispatches below are switches it generates from that list.
 *
 * The operations are called directly, never through a table of function pointers: make size's
 * call graph charges every pointer call the deepest function whose address any table stores, so
 * a table holding put_body (nanopb's encoder below it, before the bodies were written directly)
 * made the tuple-only one-call stack 2,088 bytes against its 1,536 budget. The device's typed
 * report calls are direct as well: dpm_device_report_<m> calls dpm_mech_report_<m> (mech/<m>.c,
 * which calls dpm_<m>_perturb) and dpm_report_encode_<kind> (report.c, which calls dpm_<m>_body_ok
 * / _write_body). Those typed pieces are defined in every build: a compiled-out mechanism's file
 * defines them as refusing stubs. */

#ifndef DPM_MECH_OPS_H
#define DPM_MECH_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/wire.h"
#include "dpm.pb.h"
#include "dpm/expert/report.h"

/* ---- the dispatches (mech/registry.c) ----------------------------------------------------- */

/* Why a campaign or report of id cannot run here: for a known mechanism compiled out, a static
 * reason naming it and its switch; NULL for an id this build has or no build knows. */
const char *dpm_mech_absent_reason(dpm_mech_id_t id);

/* c->mechanism's mech_init; DPM_ERR_UNSUPPORTED naming a mechanism this build leaves out,
 * DPM_ERR_PARAM for an unknown id. */
dpm_status_t dpm_mech_init_params(dpm_mech_t *next, const dpm_campaign_t *c, const char **reason);
/* r->mechanism's body_ok (0 for a mechanism this build does not have) and write_body (its
 * Report field: tag, length, message, straight into the buffer, as pb_encode writes it). */
int dpm_mech_body_ok(const dpm_report_t *r);
void dpm_mech_write_body(dpm_wire_t *w, const dpm_report_t *r);
/* msg->mechanism's wire_fits (0 for a mechanism this build does not have) and wire_read. */
int dpm_mech_wire_fits(const dpm_v1_Report *msg);
void dpm_mech_wire_read(const dpm_v1_Report *msg, dpm_report_t *out);
/* m's check_report (DPM_ERR_PROTOCOL for a mechanism this build does not have). */
dpm_status_t dpm_mech_check_body(const dpm_mech_t *m, const dpm_report_t *r, const char **reason);

/* ---- each mechanism's operations (mech/<m>.c; defined only when it is compiled in) --------- */

#define DPM_MECH_DECLARE_OPS(m)                                                                    \
    dpm_status_t dpm_##m##_mech_init(dpm_mech_t *next, const dpm_campaign_t *c,                    \
                                     const char **reason);                                         \
    int dpm_##m##_wire_fits(const dpm_v1_Report *msg);                                             \
    void dpm_##m##_wire_read(const dpm_v1_Report *msg, dpm_report_t *out);                         \
    dpm_status_t dpm_##m##_check_report(const dpm_mech_t *mech, const dpm_report_t *r,             \
                                        const char **reason);                                      \
    /* body_ok and write_body: in every build (report.c's typed encoders call them; without the    \
     * mechanism, write_body only clears w->ok) */                                                 \
    int dpm_##m##_body_ok(const dpm_report_t *r);                                                  \
    void dpm_##m##_write_body(dpm_wire_t *w, const dpm_report_t *r);
DPM_MECH_DECLARE_OPS(tuple)
DPM_MECH_DECLARE_OPS(roc_hist)
DPM_MECH_DECLARE_OPS(dpauc)
DPM_MECH_DECLARE_OPS(ustat)  /* ustat_bins and ustat_tree */
DPM_MECH_DECLARE_OPS(fedauc) /* fedauc_rr and fedauc_lap */

/* ---- helpers of every mechanism file (mech/mech.c) ------------------------------------------- */

/* *reason = why (if reason is not NULL); returns st. */
dpm_status_t dpm_mech_fail(const char **reason, const char *why, dpm_status_t st);

/* FNV-1a over little-endian 32-bit words (and a 64-bit word as two): the parameter
 * fingerprints. Cheap, platform independent, and enough to tell parameter sets apart (a
 * consistency check, not an authenticator). */
#define DPM_FNV_INIT 2166136261u
uint32_t dpm_fnv_word(uint32_t h, uint32_t w);
uint32_t dpm_fnv_u64(uint32_t h, uint64_t w);

/* Receipts (dpm/expert/report.h). A receipt's words: campaign id, period, parameter fingerprint,
 * implemented ε, then the issuer's sequence number of the charge (32 bits: 5 words keep the
 * device's report call within its stack budget; a device's issuer issues one receipt). An
 * issuer holds the last receipt it issued and 1 while that one is outstanding (0 once used or
 * retired). */
enum { DPM_RC_CAMPAIGN, DPM_RC_PERIOD, DPM_RC_PARAMS, DPM_RC_EPS, DPM_RC_SEQ };

/* 1 if iss accepts rc for a report of m (dpm_receipt_problem is NULL). */
int dpm_receipt_ok(const dpm_mech_t *m, const dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc);
/* Issue from iss the receipt of one report of m in `period` (retires the outstanding one): it is
 * iss->issued, and a copy in *rc unless rc is NULL. */
void dpm_receipt_issue(dpm_receipt_issuer_t *iss, const dpm_mech_t *m, uint32_t period,
                       dpm_receipt_t *rc);

/* The part every report shares, after the body: st is the body's status (nothing more is drawn
 * when it failed), then the 16-byte report id (two 64-bit draws, so the order of random draws is
 * body first, then id) and the header from the mechanism; *out (the header, the body of `size`
 * bytes, zeros elsewhere) is written and iss retires the receipt only on success. */
dpm_status_t dpm_mech_report_finish(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                    const dpm_receipt_t *rc, dpm_status_t st, const void *body,
                                    size_t size, dpm_report_t *out);

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
uint64_t dpm_fedauc_upload_room(const dpm_mech_t *m, uint32_t n);

#endif /* DPM_MECH_OPS_H */
