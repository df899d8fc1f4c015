/* SPDX-License-Identifier: Apache-2.0 */
/* Every interval of the estimate JSON says what it claims (host-sim/estimate/ci_flags.h): beside
 * an interval "K", `, "K_coverage": "nominal" | "at_least" | "none", "K_flags": [names],
 * "K_reason": null | "..."`. "nominal" is the tested 93-97 % at 95 %, "at_least" a conservative
 * interval (few randomization events, an interpolation bound that dominates, Chebyshev, a
 * variance that may err high), "none" no claim (a noisy class total, small n, no bound). One
 * writer for estimate_json.c, estimate_auc.c, estimate_rocg.c and fedauc_sums.c. */
#ifndef DPM_COLLECTOR_ESTIMATE_CI_H
#define DPM_COLLECTOR_ESTIMATE_CI_H

#include "common/json_write.h"

void coll_ci_json(jw_t *sb, const char *key, unsigned flags);

#endif /* DPM_COLLECTOR_ESTIMATE_CI_H */
