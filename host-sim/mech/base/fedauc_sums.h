/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC report sums in the store's tuple-sum rows, and the estimate's JSON.
 *
 * A FedAUC report adds to its (campaign, period) the sums host-sim/estimate/fedauc.c needs
 * (dpm_fa_agg_t), in rows (metric a, group b) of the stored tuple sums (n, s, ss), so they are
 * written in the same transaction as the report and read like any other sums:
 *   (0, 0): n = sum n_k,      s = sum localP,     ss = sum Var(localP noise)        (a3)
 *   (0, 1): n = sum M,        s = sum localSum2,  ss = sum (t + S_k localP) / n_k   (sum2_frac)
 *   (1, 0): n = reports,                          ss = a0 of LOCAL/GLOBAL/RR reports
 *   (1, 1): n = reports,                          ss = a0 of ORTHOGONAL/ADAPTIVE reports
 *   (2, 0): n = reports,                          ss = a2 of ORTHOGONAL/ADAPTIVE reports
 * Both forms are summed because a stored report does not name its variant (the campaign
 * does); the estimate takes the variant's form. The variances are those dpm_fa_agg_add adds,
 * from the report's own ε, eps_p and sensitivity. */
#ifndef DPM_COLLECTOR_FEDAUC_SUMS_H
#define DPM_COLLECTOR_FEDAUC_SUMS_H

#include <stdint.h>

#include "mech/base/campaign.h"
#include "mech/base/fedauc_phase.h"
#include "common/json_write.h"

#define COLL_FEDAUC_ROWS 3 /* metrics used (width of the delta) */

/* The rows of one decoded FedAUC report. 0, or -1 if it is not a FedAUC report with examples. */
int coll_fedauc_report_rows(const dpm_report_t *rep, int64_t n[COLL_FEDAUC_ROWS][2],
                            int64_t s[COLL_FEDAUC_ROWS][2], double ss[COLL_FEDAUC_ROWS][2]);

/* Add a stored row (metric m, group g) to the sums; 0, or -1 outside the layout. */
int coll_fedauc_sums_add(coll_fedauc_sums_t *fs, uint32_t m, uint32_t g, int64_t n, int64_t s,
                         double ss);

/* The estimator's aggregate for campaign c from the sums of `reports` reports. 0, or -1 when
 * the reports name different M. */
int coll_fedauc_sums_agg(const coll_fedauc_sums_t *fs, uint64_t reports, const coll_campaign_t *c,
                         dpm_fa_agg_t *out);

/* ", \"fedauc\": {...}": the phase of the period asked for and the estimate (README). */
void coll_fedauc_json(jw_t *w, const coll_campaign_t *c, const coll_fedauc_sums_t *fs,
                      uint64_t reports, const coll_fedauc_period_t *ph, int one_period,
                      uint32_t period, double confidence);

#endif /* DPM_COLLECTOR_FEDAUC_SUMS_H */
