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

#include "dpm/bits/sizes.h"
#include "dpm/expert/dpauc.h"
#include "dpm/expert/fedauc.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/roc_hist.h"
#include "dpm/expert/tuple.h"
#include "dpm/expert/ustat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A report before encoding. The body is a union over the mechanisms compiled in; the member
 * that mechanism names is valid. */
typedef struct {
    uint8_t report_id[DPM_REPORT_ID_BYTES];
    uint32_t campaign_id;
    uint32_t period;
    dpm_mech_id_t mechanism;
    dpm_eps_t eps; /* implemented ε spent */
    uint32_t params_hash;
    union {
#if DPM_MECH_TUPLE
        dpm_tuple_report_t tuple; /* tuple_mr / tuple_ml */
#endif
#if DPM_MECH_ROC_HIST
        dpm_roc_hist_report_t roc_hist; /* roc_hist */
#endif
#if DPM_MECH_DPAUC
        dpm_dpauc_report_t dpauc; /* dpauc */
#endif
#if DPM_MECH_USTAT
        dpm_ustat_bins_report_t ustat_bins; /* ustat_bins */
        dpm_ustat_tree_report_t ustat_tree; /* ustat_tree */
#endif
#if DPM_MECH_FEDAUC
        dpm_fedauc_report_t fedauc; /* fedauc_rr / fedauc_lap */
#endif
    } body;
} dpm_report_t;

/* Decode a dpm.v1.Campaign (its fields only: validation is dpm_mech_init). DPM_ERR_PROTOCOL
 * for bytes that are not a Campaign, or that hold more bin edges than DPM_CAMPAIGN_MAX_EDGES;
 * *reason (if not NULL) then names the problem. *out untouched on error. */
dpm_status_t dpm_campaign_decode(const uint8_t *buf, size_t len, dpm_campaign_t *out,
                                 const char **reason);
/* Encode a campaign (the collector publishes campaigns with this; tests use it too). */
dpm_status_t dpm_campaign_encode(const dpm_campaign_t *c, uint8_t *buf, size_t cap, size_t *len);

/* ---- receipts: one charge buys one report ---------------------------------------------------
 *
 * The perturbing calls below make a report only against a receipt: proof that the report's ε
 * was charged. The device's report calls (dpm/device.h) are the issuer an app uses: each charges
 * the ledger, issues ONE receipt for that charge, makes the report with it and retires it before
 * returning, so no receipt of a device outlives the call that charged it and an app never holds
 * one.
 *
 * What is guaranteed. A perturbing call accepts a receipt only if, all checked before anything
 * is drawn or written:
 *  - the issuer passed with it made it and has not seen it used: an issuer holds at most one
 *    receipt outstanding, and the receipt must equal it (campaign id, period, parameter
 *    fingerprint, implemented ε and the issuer's 32-bit sequence number of the charge, compared
 *    in constant time); using it, or issuing the next one, retires it, so a copy of a used or
 *    superseded receipt is refused (reuse), and bytes written by hand match nothing (forgery);
 *  - it was made for this mechanism: the campaign id, parameter fingerprint and ε of m (another
 *    campaign's receipt is refused);
 *  - the report is for the period the charge was for: the period is the receipt's, not an
 *    argument.
 * A refused receipt is DPM_ERR_PARAM with nothing drawn, *out and the issuer unchanged;
 * dpm_receipt_problem says which rule failed. A device's issuer lives on its report call's stack
 * (no held RAM, no CSPRNG draw), so outside a report call there is no receipt a device would
 * accept, and a device report call issues only after its ledger charge is durable.
 *
 * What is NOT guaranteed. This is an API rule, not a security boundary inside one process: code
 * that writes the SDK's private bytes (a receipt and an issuer laid out by hand, a dpm_device_t's
 * fields, the ledger's storage), or that calls the simulator-only entry point
 * (dpm/expert/simulator.h), can perturb without a charge, as it can send its raw data; no
 * in-process check stops code with arbitrary memory access. Receipts are RAM-only: a reboot forgets
 * them (the ledger charge stays). The sequence number has 32 bits: a copy kept while its issuer
 * issues 2^32 more receipts for the same campaign and period could match again (only a simulator's
 * long-lived issuer issues more than one; a device's issues one per report call).
 */
#define DPM_RECEIPT_WORDS 5u

/* A receipt: opaque (its bytes mean nothing to the app and are no ABI promise). */
typedef struct {
    uint32_t opaque[DPM_RECEIPT_WORDS];
} dpm_receipt_t;

/* Who issues receipts and knows which one is outstanding: opaque. All zero is a valid issuer
 * with nothing outstanding. */
typedef struct {
    dpm_receipt_t issued; /* the last receipt issued */
    uint32_t opaque;      /* 1 while it is outstanding */
} dpm_receipt_issuer_t;
#define DPM_RECEIPT_ISSUER_INIT                                                                    \
    {                                                                                              \
        {{0}}, 0                                                                                   \
    }

/* Why iss would refuse rc for a report of m ("receipt not issued by this issuer, or already
 * used", "receipt for another campaign", ...), or NULL if a perturbing call would accept it.
 * Reads only; "no mechanism, issuer or receipt (NULL)" for a NULL. */
const char *dpm_receipt_problem(const dpm_mech_t *m, const dpm_receipt_issuer_t *iss,
                                const dpm_receipt_t *rc);

/* Perturb one device's tuple under the campaign into *out (tuple mechanisms), for the period
 * and charge that the receipt rc names. The report id is 16 fresh random bytes from r (the device
 * CSPRNG), drawn after the body. DPM_ERR_PARAM if iss would refuse rc for m (see "receipts"
 * above: dpm_receipt_problem says why) or m is not a tuple mechanism; other errors as
 * dpm_tuple_perturb. On DPM_OK iss retires rc (used up); on error *out and iss are untouched. */
dpm_status_t dpm_mech_report_tuple(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                   const dpm_receipt_t *rc, uint32_t group,
                                   const dpm_ratio_t *values, dpm_report_t *out);

/* Perturb one device's score histogram under a roc_hist campaign into *out: the body is
 * dpm_roc_hist_perturb(&m->params.roc_hist, r, h) (its draws first), then the report id, 16
 * fresh random bytes from r. Receipt rules as dpm_mech_report_tuple; DPM_ERR_PARAM if m is not
 * a roc_hist mechanism; other errors as dpm_roc_hist_perturb. */
dpm_status_t dpm_mech_report_roc_hist(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                      const dpm_receipt_t *rc, const dpm_score_hist_t *h,
                                      dpm_report_t *out);

/* One dpauc report of the counts c (built with dpm_dpauc_counts_init/add over dpm_mech_dpauc(m)):
 * the body is dpm_dpauc_perturb's (its draws first), then the report id. Receipt rules as
 * dpm_mech_report_tuple; DPM_ERR_PARAM if m is not a dpauc mechanism; other errors as
 * dpm_dpauc_perturb. */
dpm_status_t dpm_mech_report_dpauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                   const dpm_receipt_t *rc, const dpm_dpauc_counts_t *c,
                                   dpm_report_t *out);

/* One ustat_bins report of one example (dpm_ustat_bins_perturb, then the report id). Receipt
 * rules as dpm_mech_report_tuple; DPM_ERR_PARAM if m is not ustat_bins; other errors as
 * dpm_ustat_bins_perturb. */
dpm_status_t dpm_mech_report_ustat_bins(const dpm_mech_t *m, dpm_rand_t *r,
                                        dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc,
                                        const dpm_ustat_example_t *ex, dpm_report_t *out);

/* One ustat_tree report of one example (dpm_ustat_tree_perturb, then the report id). Receipt
 * rules as dpm_mech_report_tuple; DPM_ERR_PARAM if m is not ustat_tree; other errors as
 * dpm_ustat_tree_perturb. */
dpm_status_t dpm_mech_report_ustat_tree(const dpm_mech_t *m, dpm_rand_t *r,
                                        dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc,
                                        const dpm_ustat_example_t *ex, dpm_report_t *out);

/* One per-group roc_hist report (a roc_hist campaign with groups >= 2): the body is
 * dpm_roc_hist_perturb_group(&m->params.roc_hist, r, group, h) (its draws first), then the
 * report id. dpm_mech_report_roc_hist refuses such a campaign (DPM_ERR_PARAM), and this call
 * one without groups. Receipt rules and other errors as dpm_mech_report_roc_hist. */
dpm_status_t dpm_mech_report_roc_hist_group(const dpm_mech_t *m, dpm_rand_t *r,
                                            dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc,
                                            uint32_t group, const dpm_score_hist_t *h,
                                            dpm_report_t *out);

/* Round 2 of a fedauc campaign (dpm/expert/fedauc.h): the report of session s, whose rank reply
 * dpm_fedauc_accept validated into *rk (and s->buf.work), for the app's labels (n of them, 0 or
 * 1). fedauc_rr: the exact statistics of the labels flipped by dpm_fedauc_rr_flip (ids: the n
 * example ids, memo: the opened device secret); fedauc_lap: the true statistics plus discrete
 * Laplace noise, drawn from r in the order localP, then the sum (or T) (ids and memo unused,
 * may be NULL). Then the report id. Receipt rules as dpm_mech_report_tuple. Does not change *s
 * (dpm_device_report_fedauc marks it reported). DPM_ERR_PARAM for NULL, a receipt or session
 * not for m, labels outside {0, 1}, an unopened memo; DPM_ERR_UNSUPPORTED in a build without
 * fedauc (DPM_MECH_FEDAUC 0); DPM_ERR_RANGE if a noised value leaves
 * int64 (probability below 2^-90 at the largest scale: a function of the output, so it keeps
 * ε-DP); the sticky DPM_ERR_RNG. *out untouched on error. */
dpm_status_t dpm_mech_report_fedauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                    const dpm_receipt_t *rc, const dpm_fedauc_session_t *s,
                                    const dpm_fedauc_ranks_t *rk, const uint8_t *labels,
                                    const uint64_t *ids, const dpm_memo_t *memo, dpm_report_t *out);

/* Encode a report into buf (DPM_REPORT_MAX_BYTES always suffice). The body written follows
 * r->mechanism: roc_hist writes r->body.roc_hist (RocHistBody, bins values in each of pos and
 * neg, and the group), tuple_mr / tuple_ml r->body.tuple (TupleBody), dpauc r->body.dpauc
 * (DpaucBody, n values in each of tp, fp, tn, fn), ustat_bins r->body.ustat_bins, ustat_tree
 * r->body.ustat_tree, fedauc_rr / fedauc_lap r->body.fedauc (FedaucBody, field 15).
 * DPM_ERR_BUFFER if cap is too small, DPM_ERR_PARAM for a report that is not encodable (a
 * mechanism not in this build, too many values, roc_hist bins outside [2, DPM_MAX_BINS] or
 * group >= DPM_MAX_GROUPS, dpauc n outside [1, DPM_DPAUC_MAX_THRESHOLDS], ustat_bins value >=
 * DPM_MAX_GRR_K or label > 1, ustat_tree level outside [1, DPM_USTAT_MAX_DEPTH], row or value
 * >= 2^level or label > 1). */
dpm_status_t dpm_report_encode(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len);

/* Decode one report. DPM_ERR_PROTOCOL for malformed bytes (wrong id length, unknown or missing
 * body, a body this build cannot hold, too many values, a roc_hist body whose pos and neg
 * counts differ or are < 2, a dpauc body whose four lists differ in length or are empty, a
 * body outside what dpm_report_encode accepts, a body of another kind than the mechanism field
 * names, trailing garbage), and then *out is untouched. A TupleBody (mechanism tuple_mr /
 * tuple_ml) fills out->body.tuple, a RocHistBody (roc_hist) out->body.roc_hist (bins = the
 * number of pos values), a DpaucBody out->body.dpauc (n = the number of tp values), an
 * UstatBinsBody out->body.ustat_bins, an UstatTreeBody out->body.ustat_tree, a FedaucBody
 * (fedauc_rr / fedauc_lap; its token must be 16 bytes) out->body.fedauc. */
dpm_status_t dpm_report_decode(const uint8_t *buf, size_t len, dpm_report_t *out);

/* Check a decoded report against the mechanism of its campaign: same campaign, mechanism,
 * implemented ε and parameter hash, values in range (tuple_mr: +-1; groups < d; the number of
 * values; roc_hist: bins equal to the campaign's, no INT32_MIN, group < groups (0 without
 * groups); dpauc: n equal to the campaign's thresholds, no INT32_MIN; ustat_bins: value below
 * the kernel's GRR domain, label 0 or 1 for the AUC kernel and 0 otherwise; ustat_tree: label 0
 * or 1, level in [1, depth], on GRR levels row 0 and value < 2^level, on Hadamard levels row <
 * 2^level and value 0 or 1; fedauc: n >= 1, n <= total <= 2^31, sums within what n ranks below
 * 2 total allow, the sensitivity and eps_p the variant implies for them (ADAPTIVE:
 * dpm_fedauc_adaptive_eps_p of the body's S and D), RR statistics within [0, n] and [0, n 2
 * (total - 1)]). The collector additionally knows the ranks it sent and can check S and the
 * sensitivity against them. DPM_ERR_PROTOCOL with *reason on mismatch. */
dpm_status_t dpm_mech_check_report(const dpm_mech_t *m, const dpm_report_t *r, const char **reason);

#ifdef __cplusplus
}
#endif

#endif /* DPM_REPORT_H */
