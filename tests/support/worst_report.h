/* SPDX-License-Identifier: Apache-2.0 */
/* The largest report each mechanism can encode (every header field and value at its widest),
 * for the tests that check the exact size macros of dpm/expert/report.h and the buffers sized from
 * them. */
#ifndef TEST_WORST_REPORT_H
#define TEST_WORST_REPORT_H

#include <stddef.h>

#include "dpm/expert/report.h"

/* Fill *rep with the widest report of mechanism id that this build encodes; returns the size its
 * macro promises (DPM_REPORT_ROC_MAX, DPM_REPORT_DPAUC_MAX, ...), 0 for a mechanism without one. */
size_t test_worst_report_of(dpm_mech_id_t id, dpm_report_t *rep);

/* The widest report of the build: the mechanism whose bound is DPM_REPORT_MAX_BYTES. Returns
 * that bound. */
size_t test_worst_report(dpm_report_t *rep);

#endif
