/* SPDX-License-Identifier: Apache-2.0 */
/* Shared inside sdk/src: dpm_report_encode per body kind, for callers that know the kind. */
#ifndef DPM_REPORT_INTERNAL_H
#define DPM_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/report.h"

/* dpm_report_encode for one kind of report: the same bytes and statuses, and DPM_ERR_PARAM for
 * a report of another kind. The device's report calls use them so that each call reaches its own
 * body's encoder only (its worst-case stack, make size, is its own). Defined for the kinds this
 * build has. */
dpm_status_t dpm_report_encode_tuple(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len);
dpm_status_t dpm_report_encode_roc_hist(const dpm_report_t *r, uint8_t *buf, size_t cap,
                                        size_t *len);
dpm_status_t dpm_report_encode_dpauc(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len);
dpm_status_t dpm_report_encode_ustat(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len);
dpm_status_t dpm_report_encode_fedauc(const dpm_report_t *r, uint8_t *buf, size_t cap, size_t *len);

#endif /* DPM_REPORT_INTERNAL_H */
