/* SPDX-License-Identifier: Apache-2.0 */
#include "worst_report.h"

#include <string.h>

static void widest_header(dpm_report_t *rep, dpm_mech_id_t id)
{
    memset(rep, 0, sizeof(*rep));
    memset(rep->report_id, 0xFF, DPM_REPORT_ID_BYTES);
    rep->campaign_id = UINT32_MAX;
    rep->period = UINT32_MAX;
    rep->mechanism = id;
    rep->eps = UINT32_MAX;
    rep->params_hash = UINT32_MAX;
}

size_t test_worst_report_of(dpm_mech_id_t id, dpm_report_t *rep)
{
    widest_header(rep, id);
    switch (id) {
#if DPM_MECH_ROC_HIST
    case DPM_MECH_ID_ROC_HIST:
        rep->body.roc_hist.bins = DPM_MAX_BINS;
        for (uint32_t b = 0; b < DPM_MAX_BINS; b++) {
            rep->body.roc_hist.pos[b] = INT32_MAX;
            rep->body.roc_hist.neg[b] = -INT32_MAX; /* zigzag 2^32 - 3: 5 bytes */
        }
        rep->body.roc_hist.group = DPM_MAX_GROUPS - 1;
        return DPM_REPORT_ROC_MAX;
#endif
#if DPM_MECH_TUPLE
    case DPM_MECH_ID_TUPLE_ML:
        rep->body.tuple.group = UINT32_MAX;
        rep->body.tuple.nmetrics = DPM_TUPLE_MAX_METRICS;
        for (uint32_t i = 0; i < DPM_TUPLE_MAX_METRICS; i++) {
            rep->body.tuple.value[i] = -INT32_MAX;
        }
        return DPM_REPORT_TUPLE_MAX;
#endif
#if DPM_MECH_DPAUC
    case DPM_MECH_ID_DPAUC:
        rep->body.dpauc.n = DPM_DPAUC_MAX_THRESHOLDS;
        for (uint32_t i = 0; i < DPM_DPAUC_MAX_THRESHOLDS; i++) {
            rep->body.dpauc.tp[i] = INT32_MAX;
            rep->body.dpauc.fp[i] = -INT32_MAX;
            rep->body.dpauc.tn[i] = INT32_MAX;
            rep->body.dpauc.fn[i] = -INT32_MAX;
        }
        return DPM_REPORT_DPAUC_MAX;
#endif
#if DPM_MECH_USTAT
    case DPM_MECH_ID_USTAT_BINS:
        rep->body.ustat_bins.value = DPM_MAX_GRR_K - 1u;
        rep->body.ustat_bins.label = 1;
        return DPM_REPORT_USTAT_BINS_MAX;
    case DPM_MECH_ID_USTAT_TREE:
        rep->body.ustat_tree.label = 1;
        rep->body.ustat_tree.level = DPM_USTAT_MAX_DEPTH;
        rep->body.ustat_tree.row = (UINT32_C(1) << DPM_USTAT_MAX_DEPTH) - 1u;
        rep->body.ustat_tree.value = (UINT32_C(1) << DPM_USTAT_MAX_DEPTH) - 1u;
        return DPM_REPORT_USTAT_TREE_MAX;
#endif
    default: return 0;
    }
}

size_t test_worst_report(dpm_report_t *rep)
{
    for (uint32_t id = 1; id <= DPM_MECH_ID_TUPLE_ML; id++) {
        if (test_worst_report_of((dpm_mech_id_t)id, rep) == DPM_REPORT_MAX_BYTES) {
            return DPM_REPORT_MAX_BYTES;
        }
    }
    return 0;
}
