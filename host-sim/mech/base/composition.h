/* SPDX-License-Identifier: Apache-2.0 */
/* What one device taking part in several campaigns and DAP tasks may spend, by basic
 * composition (the ε of every report that depends on one device's data add up; pure ε-DP,
 * but for a DAP task with discrete Gaussian noise, whose ε holds with its δ: the caller adds
 * those δs), across both trust models. Per item: the most a device spends in one of its periods,
 * floor(budget / eps) reports of eps each (what the device's ledger lets through, never above
 * the budget: a local-DP campaign's eps_implemented against its budget; a DAP task's central ε
 * once per time_precision, dpm/expert/device_dap.h); over a window of W seconds (the device
 * period of dpm/device.h, one day by default): the item's periods in the window when their
 * boundaries are aligned with it (ceil(W / P)), and the most any W-second window can meet
 * (ceil(W / P) + 1, a window straddling a boundary). All in Q16.16 integers, exactly. Summed
 * as each item states its ε, the total bounds the loss for what every item protects at its own
 * unit (one example's label is inside a device's tuple, so a tuple campaign covers it too).
 * For a device's whole data an item counts `factor` times its ε: 1 where its unit is the
 * device or one example per report; the examples one report may hold (max_examples, group
 * privacy) where its unit is one example of several in a report; 0 where nothing bounds it
 * (FedAUC uploads scores in clear). The central items' part is kept apart: it holds only while
 * one of the two aggregators is honest; if both collude, they read those measurements in clear
 * and nothing bounds the loss. The app's own cap (dpm_policy_cap_t: max_eps per device period,
 * so at most twice that in any window) bounds what a device really spends whatever the items
 * ask, charged for both models alike; this is what they ask. Used by `dpm-collector
 * --check-campaigns`. */
#ifndef DPM_HOST_MECH_BASE_COMPOSITION_H
#define DPM_HOST_MECH_BASE_COMPOSITION_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/campaign.h"

/* One campaign or DAP task as a device's ledger sees it. */
typedef struct {
    uint32_t eps_q16;        /* ε of one report, > 0 */
    uint64_t budget_q16;     /* what one period may spend, >= eps_q16 */
    uint32_t period_seconds; /* > 0 */
    uint32_t factor;         /* the device-level multiplier (0: no device-level bound) */
    int central;             /* 1: two aggregators' central noise (DAP); 0: local DP */
} host_comp_item_t;

typedef struct {
    uint32_t reports;        /* reports per period: floor(budget / eps) */
    uint64_t per_period_q16; /* reports x eps */
    uint32_t period_seconds;
    uint32_t periods_aligned; /* ceil(W / P) */
    uint32_t periods_any;     /* ceil(W / P) + 1 */
    uint32_t factor;
} host_comp_row_t;

typedef struct {
    uint64_t aligned_q16, any_q16, device_any_q16; /* see host_comp_total_t */
} host_comp_sum_t;

typedef struct {
    uint32_t window_seconds;
    uint64_t aligned_q16;    /* sum of per_period x periods_aligned */
    uint64_t any_q16;        /* sum of per_period x periods_any */
    uint64_t device_any_q16; /* sum of factor x per_period x periods_any */
    int device_bounded;      /* 0: an item has factor 0 (device_any_q16 then means nothing) */
    host_comp_sum_t central; /* the same sums over the central (two-aggregator) items alone */
} host_comp_total_t;

/* The item of a built local-DP campaign (eps_implemented, budget, period) with its
 * device-level factor. */
host_comp_item_t host_comp_item_of_mech(const dpm_mech_t *m, uint32_t factor);

/* rows[i] for item[i] (n items) over a window of `window` seconds (0:
 * DPM_DEVICE_PERIOD_SECONDS). 0, or -1 for NULL or an item with a zero ε or period or a budget
 * below its ε (nothing written). */
int host_composition(const host_comp_item_t *item, size_t n, uint32_t window, host_comp_row_t *rows,
                     host_comp_total_t *total);

#endif /* DPM_HOST_MECH_BASE_COMPOSITION_H */
