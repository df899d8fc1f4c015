/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC's rows of `dpm-sim repro auc_compare` (repro_auc_compare.h): fedauc_rr and the four
 * fedauc_lap variants (local, global, orthogonal, adaptive) on the comparison's examples and
 * device layout. Scores at 31 bits, so the server's ranking is of the examples themselves and
 * FedAUC's target is their exact AUC. Each run's aggregate is drawn with the law of the devices'
 * reports, as repro_fedauc does (fedauc_rr: every label flipped with the SDK's implemented
 * probability; fedauc_lap: each device's statistics plus the SDK's discrete Laplace draws for its
 * sensitivity and split), and estimated by host-sim/estimate/fedauc (AUC and its interval). Bytes
 * and device time: device 0's two rounds through the SDK once per variant (dpm_fedauc_prepare,
 * the upload, the server's rank reply, dpm_fedauc_accept, dpm_mech_report_fedauc, the encoded
 * report). */
#ifndef DPM_SIM_REPRO_AUC_FEDAUC_H
#define DPM_SIM_REPRO_AUC_FEDAUC_H

#include <stdint.h>

#include "sim/repro/repro_auc_data.h"

#define AUC_FA_N 5u

extern const char *const kAucFaName[AUC_FA_N];

typedef struct {
    double sq_exact, err, cover, with_ci; /* sums over runs against the exact AUC */
    uint32_t runs;
    double up_bytes, down_bytes; /* device 0: upload + report; the rank reply */
    double ns;                   /* device 0's SDK calls of both rounds, host ns */
} auc_fa_acc_t;

/* runs runs of every variant at eps over devices whose examples are idx[start[v] ..
 * start[v + 1]); acc[AUC_FA_N] zeroed here. 0, or -1 on an error (said on stderr). */
int auc_fedauc_rows(const auc_data_t *d, uint32_t devices, const uint32_t *start,
                    const uint32_t *idx, uint32_t runs, double eps, uint64_t key,
                    auc_fa_acc_t *acc);

#endif /* DPM_SIM_REPRO_AUC_FEDAUC_H */
