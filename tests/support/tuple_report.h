/* SPDX-License-Identifier: Apache-2.0 */
/* A small valid report for storage and upload tests: tuple_mr, one metric, a report id drawn
 * from a seeded dpm_rand_t. */
#ifndef TUPLE_REPORT_H
#define TUPLE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/noise.h"
#include "dpm/expert/report.h"

/* Encode a report of campaign/period/eps into buf (DPM_REPORT_MAX_BYTES), its id into id
 * (DPM_REPORT_ID_BYTES): its length, or 0 if drawing or encoding failed. */
size_t tuple_report_make(dpm_rand_t *r, uint32_t campaign, uint32_t period, dpm_eps_t eps,
                         uint8_t *buf, uint8_t *id);

#endif
