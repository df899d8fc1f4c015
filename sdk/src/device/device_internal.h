/* SPDX-License-Identifier: Apache-2.0 */
/* What the device's report calls share across their files (device.c: local DP; device_dap.c:
 * the two-aggregator mode): every charge goes through the device cap. */
#ifndef DPM_DEVICE_INTERNAL_H
#define DPM_DEVICE_INTERNAL_H

#include "dpm/device.h"
#include "dpm/expert/budget.h"

/* dpm_ledger_check of c under the device cap of d's policy (nothing spent): DPM_OK, or the
 * ledger's refusal with *why naming it (a closed period is DPM_ERR_BUDGET, as for a report). */
dpm_status_t dpm_device_ledger_check(dpm_device_t *d, const dpm_ledger_charge_t *c,
                                     const char **why);

/* dpm_ledger_spend_totals of c under the device cap, advancing the device's ledger clock on
 * DPM_OK (*totals: what the charge left, for dpm_report_info_t). Same statuses as
 * dpm_device_ledger_check. */
dpm_status_t dpm_device_ledger_spend(dpm_device_t *d, const dpm_ledger_charge_t *c,
                                     const char **why, dpm_ledger_totals_t *totals);

/* The layout record of *lay (dpm_storage_layout of a region of `size` bytes in sectors of `unit`)
 * at offset base of s: found, or written on an erased region (or over a first write that was
 * torn while the rest stayed erased). DPM_OK; DPM_ERR_PARAM (the region was laid out for another
 * size or sector size), DPM_ERR_CORRUPT (data but no valid record), DPM_ERR_STORAGE; *why names
 * the cause. Writes only in those two cases, and never outside [base, base + record_size). */
dpm_status_t dpm_layout_open(const dpm_storage_t *s, uint32_t base, uint32_t size, uint32_t unit,
                             const dpm_storage_layout_t *lay, const char **why);

#endif /* DPM_DEVICE_INTERNAL_H */
