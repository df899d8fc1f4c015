/* SPDX-License-Identifier: Apache-2.0 */
/* What one device taking part in several campaigns may spend, by basic composition (pure ε-DP:
 * the ε of every report that depends on one device's data add up). Per campaign: the most a
 * device spends in one of its periods, floor(budget / eps_implemented) reports of
 * eps_implemented each (what the device's ledger lets through, never above the budget); over a
 * window of W seconds (the device period of dpm/device.h, one day by default): the periods of
 * each campaign in the window when their boundaries are aligned with it (ceil(W / P)), and the
 * most any W-second window can meet (ceil(W / P) + 1, a window straddling a boundary). All in
 * Q16.16 integers, exactly. Summed as each campaign states its ε, the total bounds the loss for
 * what every campaign protects at its own unit (one example's label is inside a device's tuple,
 * so a tuple campaign covers it too). For a device's whole data a campaign counts `factor` times
 * its ε: 1 where its unit is the device or one example per report; the examples one report may
 * hold (max_examples, group privacy) where its unit is one example of several in a report; 0
 * where nothing bounds it (FedAUC uploads scores in clear). The app's own cap (dpm_policy_cap_t:
 * max_eps per device period, so at most twice that in any window) bounds what a device really
 * spends whatever the campaigns ask; this is what they ask. Used by `dpm-collector
 * --check-campaigns`. */
#ifndef DPM_HOST_MECH_BASE_COMPOSITION_H
#define DPM_HOST_MECH_BASE_COMPOSITION_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/campaign.h"

typedef struct {
    uint32_t id;
    uint32_t reports;        /* reports per period: floor(budget / eps_implemented) */
    uint64_t per_period_q16; /* reports x eps_implemented */
    uint32_t period_seconds;
    uint32_t periods_aligned; /* ceil(W / P) */
    uint32_t periods_any;     /* ceil(W / P) + 1 */
    uint32_t factor;          /* the device-level multiplier (0: no device-level bound) */
} host_comp_row_t;

typedef struct {
    uint32_t window_seconds;
    uint64_t aligned_q16;    /* sum of per_period x periods_aligned */
    uint64_t any_q16;        /* sum of per_period x periods_any */
    uint64_t device_any_q16; /* sum of factor x per_period x periods_any */
    int device_bounded;      /* 0: a campaign has factor 0 (device_any_q16 then means nothing) */
} host_comp_total_t;

/* rows[i] for m[i] with its device-level factor[i] (n campaigns, each built: eps_implemented >
 * 0, period_seconds > 0) over a window of `window` seconds (0: DPM_DEVICE_PERIOD_SECONDS). 0, or
 * -1 for NULL or a campaign without a period or an implemented ε (nothing written). */
int host_composition(const dpm_mech_t *const *m, const uint32_t *factor, size_t n, uint32_t window,
                     host_comp_row_t *rows, host_comp_total_t *total);

#endif /* DPM_HOST_MECH_BASE_COMPOSITION_H */
