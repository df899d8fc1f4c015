/* SPDX-License-Identifier: Apache-2.0 */
/* The one list of mechanisms. DPM_MECHS binds each wire id of this build to its file's
 * operations (mech/mech_ops.h), and every dispatch of the generic code is a switch generated from
 * it, so that each call is a direct one (make size's call graph stays exact). The name table
 * covers every id, built or not, so that errors can name a mechanism this build leaves out.
 * A new mechanism: its id in dpm/expert/mech.h, one line in DPM_MECHS (with its switch's IF_
 * macro), one in each table below, and its own mech/<m>.c. */
#include "dpm_internal.h"

#include <string.h>

#include "dpm/expert/mech.h"
#include "dpm/expert/report.h"
#include "mech/mech_ops.h"

/* IF_<X>(x): x when mechanism X is compiled in, nothing otherwise. */
#if DPM_MECH_ROC_HIST
#define IF_ROC_HIST(x) x
#else
#define IF_ROC_HIST(x)
#endif
#if DPM_MECH_DPAUC
#define IF_DPAUC(x) x
#else
#define IF_DPAUC(x)
#endif
#if DPM_MECH_FEDAUC
#define IF_FEDAUC(x) x
#else
#define IF_FEDAUC(x)
#endif
#if DPM_MECH_USTAT
#define IF_USTAT(x) x
#else
#define IF_USTAT(x)
#endif
#if DPM_MECH_TUPLE
#define IF_TUPLE(x) x
#else
#define IF_TUPLE(x)
#endif
#if DPM_MECH_TUPLE_ML
#define IF_TUPLE_ML(x) x
#else
#define IF_TUPLE_ML(x)
#endif

/* X(the case labels of its wire ids, the file's operations prefix) for every mechanism of this
 * build. */
#define DPM_MECHS(X)                                                                               \
    IF_ROC_HIST(X(case DPM_MECH_ID_ROC_HIST:, roc_hist))                                           \
    IF_DPAUC(X(case DPM_MECH_ID_DPAUC:, dpauc))                                                    \
    IF_FEDAUC(X(case DPM_MECH_ID_FEDAUC_RR : case DPM_MECH_ID_FEDAUC_LAP:, fedauc))                \
    IF_USTAT(X(case DPM_MECH_ID_USTAT_BINS : case DPM_MECH_ID_USTAT_TREE:, ustat))                 \
    IF_TUPLE(X(case DPM_MECH_ID_TUPLE_MR : IF_TUPLE_ML(case DPM_MECH_ID_TUPLE_ML:), tuple))

#define LAST_ID DPM_MECH_ID_TUPLE_ML

/* The campaign files' and the wire enum's names (lower case), every id. */
static const char *const kNames[LAST_ID + 1] = {
    [DPM_MECH_ID_ROC_HIST] = "roc_hist",     [DPM_MECH_ID_DPAUC] = "dpauc",
    [DPM_MECH_ID_FEDAUC_RR] = "fedauc_rr",   [DPM_MECH_ID_FEDAUC_LAP] = "fedauc_lap",
    [DPM_MECH_ID_USTAT_BINS] = "ustat_bins", [DPM_MECH_ID_USTAT_TREE] = "ustat_tree",
    [DPM_MECH_ID_TUPLE_MR] = "tuple_mr",     [DPM_MECH_ID_TUPLE_ML] = "tuple_ml",
};

/* The refusal of an id this build leaves out, naming it and its switch; NULL when the build has
 * it, so that a build holds only the reasons it can give. */
#define ABSENT(on, what, sw) ((on) ? NULL : what " not in this build (" sw "=0)")
static const char *const kAbsent[LAST_ID + 1] = {
    [DPM_MECH_ID_ROC_HIST] = ABSENT(DPM_MECH_ROC_HIST, "roc_hist", "DPM_MECH_ROC_HIST"),
    [DPM_MECH_ID_DPAUC] = ABSENT(DPM_MECH_DPAUC, "dpauc", "DPM_MECH_DPAUC"),
    [DPM_MECH_ID_FEDAUC_RR] = ABSENT(DPM_MECH_FEDAUC, "fedauc_rr", "DPM_MECH_FEDAUC"),
    [DPM_MECH_ID_FEDAUC_LAP] = ABSENT(DPM_MECH_FEDAUC, "fedauc_lap", "DPM_MECH_FEDAUC"),
    [DPM_MECH_ID_USTAT_BINS] = ABSENT(DPM_MECH_USTAT, "ustat_bins", "DPM_MECH_USTAT"),
    [DPM_MECH_ID_USTAT_TREE] = ABSENT(DPM_MECH_USTAT, "ustat_tree", "DPM_MECH_USTAT"),
    [DPM_MECH_ID_TUPLE_MR] = ABSENT(DPM_MECH_TUPLE, "tuple_mr", "DPM_MECH_TUPLE"),
#if DPM_MECH_TUPLE /* then its own switch names it */
    [DPM_MECH_ID_TUPLE_ML] = ABSENT(DPM_MECH_TUPLE_ML, "tuple_ml", "DPM_MECH_TUPLE_ML"),
#else
    [DPM_MECH_ID_TUPLE_ML] = ABSENT(DPM_MECH_TUPLE, "tuple_ml", "DPM_MECH_TUPLE"),
#endif
};

const char *dpm_mech_name(dpm_mech_id_t id)
{
    return (uint32_t)id <= LAST_ID ? kNames[id] : NULL;
}

dpm_mech_id_t dpm_mech_from_name(const char *name)
{
    for (uint32_t id = 1; name != NULL && id <= LAST_ID; id++) {
        if (strcmp(kNames[id], name) == 0) {
            return (dpm_mech_id_t)id;
        }
    }
    return DPM_MECH_NONE;
}

const char *dpm_mech_absent_reason(dpm_mech_id_t id)
{
    return (uint32_t)id <= LAST_ID ? kAbsent[id] : NULL;
}

/* ---- the dispatches ----------------------------------------------------------------------- */

#define CASE_INIT(ids, m) ids return dpm_##m##_mech_init(next, c, reason);
dpm_status_t dpm_mech_init_params(dpm_mech_t *next, const dpm_campaign_t *c, const char **reason)
{
    switch (c->mechanism) {
        DPM_MECHS(CASE_INIT)
    default: break;
    }
    const char *absent = dpm_mech_absent_reason(c->mechanism);
    return absent != NULL ? dpm_mech_fail(reason, absent, DPM_ERR_UNSUPPORTED)
                          : dpm_mech_fail(reason, "unknown mechanism", DPM_ERR_PARAM);
}

#define CASE_BODY_OK(ids, m) ids return dpm_##m##_body_ok(r);
int dpm_mech_body_ok(const dpm_report_t *r)
{
    switch (r->mechanism) {
        DPM_MECHS(CASE_BODY_OK)
    default: return 0; /* not a mechanism of this build */
    }
}

#define CASE_WRITE_BODY(ids, m)                                                                    \
    ids dpm_##m##_write_body(w, r);                                                                \
    return;
void dpm_mech_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    switch (r->mechanism) {
        DPM_MECHS(CASE_WRITE_BODY)
    default: w->ok = 0;
    }
}

#define CASE_WIRE_FITS(ids, m) ids return dpm_##m##_wire_fits(msg);
int dpm_mech_wire_fits(const dpm_v1_Report *msg)
{
    switch ((dpm_mech_id_t)msg->mechanism) {
        DPM_MECHS(CASE_WIRE_FITS)
    default: return 0; /* a body this build cannot hold */
    }
}

#define CASE_WIRE_READ(ids, m)                                                                     \
    ids dpm_##m##_wire_read(msg, out);                                                             \
    break;
void dpm_mech_wire_read(const dpm_v1_Report *msg, dpm_report_t *out)
{
    switch ((dpm_mech_id_t)msg->mechanism) {
        DPM_MECHS(CASE_WIRE_READ)
    default: break; /* dpm_mech_wire_fits refused it */
    }
}

#define CASE_CHECK(ids, m) ids return dpm_##m##_check_report(mech, r, reason);
dpm_status_t dpm_mech_check_body(const dpm_mech_t *mech, const dpm_report_t *r, const char **reason)
{
    switch (mech->campaign.mechanism) {
        DPM_MECHS(CASE_CHECK)
    default:
        return dpm_mech_fail(reason, "mechanism not available in this build", DPM_ERR_PROTOCOL);
    }
}
