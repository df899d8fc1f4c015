/* SPDX-License-Identifier: Apache-2.0 */
/* FOR SIMULATORS AND TESTS ONLY: the entry points a simulator of millions of devices needs and
 * an app must never call. Not installed (`make install` leaves it out), and it compiles only
 * with -DDPM_SIMULATOR_API, which host-sim and the tests set: an app that includes it by
 * accident stops at the #error below instead of spending privacy that nothing counts. */
#ifndef DPM_EXPERT_SIMULATOR_H
#define DPM_EXPERT_SIMULATOR_H

#ifndef DPM_SIMULATOR_API
#error                                                                                             \
    "dpm/expert/simulator.h is for simulators and tests (build with -DDPM_SIMULATOR_API); an app reports through dpm_device_report_* (dpm/device.h)"
#endif

#include <stdint.h>

#include "dpm/expert/report.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Issue from iss a receipt for one report of m in `period` that no ledger charged (retiring
 * iss's outstanding one, if any). A simulator runs millions of devices without their ledgers;
 * an app that calls this spends privacy that nothing counts. DPM_ERR_PARAM for NULL. */
dpm_status_t dpm_receipt_unmetered(dpm_receipt_issuer_t *iss, const dpm_mech_t *m, uint32_t period,
                                   dpm_receipt_t *rc);

#ifdef __cplusplus
}
#endif

#endif /* DPM_EXPERT_SIMULATOR_H */
