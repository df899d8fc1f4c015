/* SPDX-License-Identifier: Apache-2.0 */
/* What the device's report calls share across their files (device.c: local DP; device_dap.c:
 * the two-aggregator mode): every charge goes through the device cap. */
#ifndef DPM_DEVICE_INTERNAL_H
#define DPM_DEVICE_INTERNAL_H

#include "dpm/device.h"

/* dpm_ledger_check of c under the device cap of d's policy (nothing spent): DPM_OK, or the
 * ledger's refusal with *why naming it (a closed period is DPM_ERR_BUDGET, as for a report). */
dpm_status_t dpm_device_ledger_check(dpm_device_t *d, const dpm_ledger_charge_t *c,
                                     const char **why);

/* dpm_ledger_spend of c under the device cap, advancing the device's ledger clock on DPM_OK.
 * Same statuses as dpm_device_ledger_check. */
dpm_status_t dpm_device_ledger_spend(dpm_device_t *d, const dpm_ledger_charge_t *c,
                                     const char **why);

/* info->spent_in_period (campaign_id's total in `period`) and info->device_spent (the device
 * period's total) after a charge; 0 where the ledger cannot say. */
void dpm_device_info_spent(dpm_device_t *d, uint32_t campaign_id, uint32_t period,
                           dpm_report_info_t *info);

#endif /* DPM_DEVICE_INTERNAL_H */
