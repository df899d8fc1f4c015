/* SPDX-License-Identifier: Apache-2.0 */
/* make size: the RAM a device's app holds for the SDK, which keeps no globals of its own: one
 * object of each caller-owned state type, compiled with the build's configuration (e.g.
 * DPM_MECH_ROC_HIST 0), so `nm -S` reads their sizes. Never linked into firmware. Naming:
 * dpm_state_<module>_<what>, where <module> is the sdk/src folder the state belongs to. */
#include <stdint.h>

#include "dpm/budget.h"
#include "dpm/noise.h"
#include "dpm/report.h"
#include "dpm/upload.h"

/* kept between calls */
uint8_t dpm_state_mech_mech[sizeof(dpm_mech_t)];       /* one campaign's mechanism */
uint8_t dpm_state_noise_rand[sizeof(dpm_rand_t)];      /* randomness buffer */
uint8_t dpm_state_budget_ledger[sizeof(dpm_ledger_t)]; /* privacy ledger handle */
uint8_t dpm_state_upload_outbox[sizeof(dpm_outbox_t)]; /* outbox handle */
uint8_t dpm_state_upload_upload[sizeof(dpm_upload_t)]; /* upload state */
/* per report (an app may keep them on its stack instead) */
uint8_t dpm_state_report_report[sizeof(dpm_report_t)]; /* the report before encoding */
uint8_t dpm_state_report_bytes[DPM_REPORT_MAX_BYTES];  /* the encoded report */
uint8_t dpm_state_upload_work[DPM_UPLOAD_MIN_WORK];    /* dpm_upload_flush's work buffer */

#ifdef DPM_SIZE_TLS
#include "dpm/port_tls.h"
uint8_t dpm_state_tls_session[sizeof(dpm_tls_t)]; /* one TLS session (plus the arena) */
#endif
