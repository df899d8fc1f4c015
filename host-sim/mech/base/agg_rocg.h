/* SPDX-License-Identifier: Apache-2.0 */
/* The stored sums of a per-group roc_hist campaign (groups = G >= 2, B bins; sdk:
 * dpm/expert/roc_hist.h), exactly what host-sim/estimate/roc_groups.h consumes: per reported group
 * g the report count n_g, the summed cells S_g (2B: pos then neg) and the sums of products
 * M_g[i][j] = sum y_i y_j over the group's reports (i <= j < 2B: M is symmetric). They live in
 * the vector sums of agg_auc.h (rows of agg_vec, written in the report's transaction), at
 *
 *   g * W                        n_g          W = 1 + 2B + B (2B + 1) = (B + 1)(2B + 1)
 *   g * W + 1 + i                S_g[i]
 *   g * W + 1 + 2B + tri(i, j)   M_g[i][j],   tri(i, j) = i (2B) - i (i - 1) / 2 + (j - i)
 *
 * so a (campaign, period, writer) holds at most G (B + 1)(2B + 1) <= COLL_VEC_LEN (8224) rows:
 * 2 groups up to 44 bins, 4 up to 31, 8 up to 21, 16 up to 15. The campaign refuses more.
 * All sums are exact int64: the campaign also refuses a cell bound (bounds.h: max_examples +
 * the noise bound) above COLL_ROCG_CELL_MAX, so one product is below 2^32 and a sum stays
 * exact for 2^31 reports.
 *
 * Grouped and ungrouped roc_hist reports are alike on the wire (group 0 is the default), so
 * the campaign decides: at validation its G goes into the stored report's grp column (0 for
 * an ungrouped campaign), and every later summing of stored reports (verify, migrations) reads
 * it back from there, without the campaigns file. */
#ifndef DPM_COLLECTOR_AGG_ROCG_H
#define DPM_COLLECTOR_AGG_ROCG_H

#include <stdint.h>

#include "mech/base/agg_auc.h"
#include "dpm/expert/report.h"
#include "estimate/roc_groups.h"

#define COLL_ROCG_CELL_MAX 65535

/* Rows of one (campaign, period) for G groups and B bins: G (B + 1)(2B + 1). */
uint64_t coll_rocg_len(uint32_t groups, uint32_t bins);

/* Add a decoded roc_hist report of a campaign with `groups` groups (>= 2) to v. 0, or -1
 * (memory, a group out of range, or a layout beyond COLL_VEC_LEN). */
int coll_rocg_add_report(coll_vsums_t *v, const dpm_report_t *r, uint32_t groups);

/* The estimator's aggregate (allocated: dpm_roc_groups_agg_free) from a campaign's summed
 * vector vec[0 .. COLL_VEC_LEN). DPM_ERR_PARAM for a layout beyond COLL_VEC_LEN,
 * DPM_ERR_BUFFER if memory runs out. */
dpm_status_t coll_rocg_agg(const int64_t *vec, uint32_t groups, uint32_t bins,
                           dpm_roc_groups_agg_t *a);

#endif /* DPM_COLLECTOR_AGG_ROCG_H */
