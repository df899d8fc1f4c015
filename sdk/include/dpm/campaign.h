/* SPDX-License-Identifier: Apache-2.0 */
/* A campaign and the mechanism the device builds from it: what an app fills in (or receives
 * from the collector) and holds. dpm_device_accept_campaign / dpm_device_accept_mech
 * (dpm/device.h) check a campaign and build its dpm_mech_t; the report calls take it. The
 * mechanisms' own calls (dpm_mech_init, the samplers, the report bodies) are expert API:
 * dpm/expert/mech.h and dpm/expert/<mechanism>.h. */
#ifndef DPM_CAMPAIGN_H
#define DPM_CAMPAIGN_H

#include <stdint.h>

#include "dpm/bits/mech.h"
#include "dpm/stats.h"
#include "dpm/types.h"

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

#define DPM_CAMPAIGN_MAX_METRICS DPM_TUPLE_MAX_METRICS
/* Bin edges a campaign can hold: a build without roc_hist keeps one slot (no histogram
 * campaign can run on it, and its structs stay small). */
#if DPM_MECH_ROC_HIST
#define DPM_CAMPAIGN_MAX_EDGES (DPM_MAX_BINS - 1)
#else
#define DPM_CAMPAIGN_MAX_EDGES 1
#endif
/* dpauc thresholds a campaign can hold (one slot in a build without dpauc). */
#if DPM_MECH_DPAUC
#define DPM_CAMPAIGN_MAX_THRESHOLDS DPM_DPAUC_MAX_THRESHOLDS
#else
#define DPM_CAMPAIGN_MAX_THRESHOLDS 1
#endif

/* A campaign as the device holds it (decoded from dpm.v1.Campaign, or filled in code). */
typedef struct {
    uint32_t id;
    dpm_mech_id_t mechanism;
    dpm_eps_param_t eps;    /* ε of one report: DPM_EPS(1) */
    dpm_eps_param_t budget; /* ε a device may spend per period: DPM_EPS(4) */
    uint32_t period_seconds;
    uint32_t groups;
    uint32_t nmetrics;
    dpm_metric_t metrics[DPM_CAMPAIGN_MAX_METRICS];
    uint32_t nbins;                             /* number of bin EDGES held in bin_edges (wire:
                                                 * bin_edges_count); roc_hist has nbins + 1 bins */
    uint32_t bin_edges[DPM_CAMPAIGN_MAX_EDGES]; /* strictly increasing, Q1.31, each <= 2^31 */
    uint32_t frac_bits;
    /* dpauc, ustat_bins, ustat_tree and per-group roc_hist (wire fields 10-16) */
    uint32_t nthresholds;                             /* dpauc: N */
    uint32_t thresholds[DPM_CAMPAIGN_MAX_THRESHOLDS]; /* dpauc: strictly increasing Q1.31 */
    uint32_t calibration;                             /* dpauc: dpm_dpauc_calibration_t */
    uint32_t ustat_k;                                 /* ustat_bins: bins per score */
    uint32_t ustat_kernel;                            /* ustat_bins: dpm_ustat_kernel_t */
    uint32_t tree_depth;                              /* ustat_tree: depth */
    uint32_t tree_grr_levels;                         /* ustat_tree: levels by GRR */
    dpm_eps_param_t group_eps; /* roc_hist with groups: the group's ε (0: eps / 2) */
    /* fedauc_rr / fedauc_lap (wire: Campaign fields 20-22; 0 for other mechanisms) */
    uint32_t fedauc_variant;     /* dpm_fedauc_variant_t: LOCAL .. ADAPTIVE for fedauc_lap */
    uint32_t fedauc_p_share_q16; /* LOCAL/GLOBAL/ORTHOGONAL: share of ε on localP, Q0.16 */
    uint32_t fedauc_score_bits;  /* scores quantized to score_bits bits, 1..31 */
} dpm_campaign_t;

/* A campaign's mechanism, built and checked: what the device runs. The parameters are a union
 * over the mechanisms compiled in (the member named by campaign.mechanism is valid), so a
 * mechanism costs only the memory of the largest one in the build. */
typedef struct dpm_mech_s {
    dpm_campaign_t campaign;
    dpm_eps_t eps_implemented; /* what one report really spends (<= campaign.eps) */
    uint32_t params_hash;      /* fingerprint of the derived parameters */
    union {
#if DPM_MECH_TUPLE
        dpm_tuple_t tuple; /* tuple_mr / tuple_ml */
#endif
#if DPM_MECH_ROC_HIST
        dpm_roc_hist_t roc_hist; /* roc_hist */
#endif
#if DPM_MECH_DPAUC
        dpm_dpauc_t dpauc; /* dpauc */
#endif
#if DPM_MECH_USTAT
        dpm_ustat_bins_t ustat_bins; /* ustat_bins */
        dpm_ustat_tree_t ustat_tree; /* ustat_tree */
#endif
#if DPM_MECH_FEDAUC
        dpm_fedauc_t fedauc; /* fedauc_rr / fedauc_lap */
#endif
    } params;
} dpm_mech_t;

/* The score bins of a roc_hist mechanism (to build its dpm_score_hist_t), or NULL for NULL or
 * any other mechanism. */
const dpm_score_bins_t *dpm_mech_score_bins(const dpm_mech_t *m);

/* The dpauc mechanism of m (to build its dpm_dpauc_counts_t), or NULL for NULL or any other
 * mechanism. */
const dpm_dpauc_t *dpm_mech_dpauc(const dpm_mech_t *m);

/* Empty counts over m's thresholds. DPM_ERR_PARAM for NULL or a corrupted m. */
dpm_status_t dpm_dpauc_counts_init(dpm_dpauc_counts_t *c, const dpm_dpauc_t *m);

/* Count one example: label 0 or 1, score in Q1.31 (<= 2^31). Compares with every threshold
 * (no early exit) and selects the positive or negative counts with a mask, so its run time
 * depends on neither. DPM_ERR_PARAM for NULL, a label other than 0/1, a score above 2^31 or
 * c->n != m->n; DPM_ERR_RANGE if a total would exceed DPM_DPAUC_MAX_COUNT. c unchanged on
 * error. */
dpm_status_t dpm_dpauc_counts_add(dpm_dpauc_counts_t *c, const dpm_dpauc_t *m, uint32_t score_q31,
                                  int label);

#ifdef __cplusplus
}
#endif

#endif /* DPM_CAMPAIGN_H */
