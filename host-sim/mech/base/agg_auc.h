/* SPDX-License-Identifier: Apache-2.0 */
/* The stored sums of dpauc, ustat_bins and ustat_tree: one generic vector of exact int64 sums
 * per (campaign, period), indexed by a layout that depends on the mechanism only (not on the
 * campaign), so a database's reports can be summed again without the campaigns file (verify,
 * the v2 -> v3 back-fill). Stored as rows (campaign_id, period, idx, shard, s) of agg_vec, in
 * the same transaction as the reports (store_sqlite.c, store_pg.c).
 *
 * Layout (every report adds 1 or a noised count to a few indices):
 *   dpauc       tp[i] at i, fp[i] at 128 + i, tn[i] at 256 + i, fn[i] at 384 + i
 *               (i < N <= 128, the wire's largest N)
 *   ustat_bins  count of reports with (label, value) at label * DPM_MAX_GRR_K + value
 *   ustat_tree  reports of (label, level) at label * (D + 1) + level, D = COLL_TREE_MAX_DEPTH;
 *               the sum of the Hadamard signs 1 - 2 value of reports (label, level, row) at
 *               COLL_VEC_TREE_HAD + label * 2^(D+1) + 2^level + row; the count of reports
 *               (label, level, value) at COLL_VEC_TREE_GRR + label * 2^(D+1) + 2^level + value.
 *               Both are kept for every report (a report does not say whether its level is a
 *               GRR level; the campaign does), and the estimate reads the one its level uses. */
#ifndef DPM_COLLECTOR_AGG_AUC_H
#define DPM_COLLECTOR_AGG_AUC_H

#include <stddef.h>
#include <stdint.h>

#include "mech/base/campaigns_auc.h"
#include "dpm/expert/report.h"

#define COLL_VEC_DPAUC_N 128u
#define COLL_VEC_TREE_LEVELS (COLL_TREE_MAX_DEPTH + 1u)
#define COLL_VEC_TREE_NODES (1u << (COLL_TREE_MAX_DEPTH + 1))
#define COLL_VEC_TREE_HAD 32u
#define COLL_VEC_TREE_GRR (COLL_VEC_TREE_HAD + 2u * COLL_VEC_TREE_NODES)
#define COLL_VEC_MAX3(a, b, c) ((a) > (b) ? ((a) > (c) ? (a) : (c)) : ((b) > (c) ? (b) : (c)))
#define COLL_VEC_LEN                                                                               \
    COLL_VEC_MAX3(4u * COLL_VEC_DPAUC_N, 2u * DPM_MAX_GRR_K,                                       \
                  COLL_VEC_TREE_GRR + 2u * COLL_VEC_TREE_NODES)

/* Sparse sums of one transaction (or of a whole database, for verify). */
typedef struct {
    uint32_t campaign_id, period, idx;
    int64_t sum;
} coll_vsum_t;

typedef struct {
    coll_vsum_t *e;
    size_t n, cap;
    uint32_t *slot; /* open addressing: entry index + 1, 0 empty; nslot a power of 2 */
    size_t nslot;
} coll_vsums_t;

/* sums[(campaign, period, idx)] += x. 0, or -1 if memory ran out or the sum would leave int64
 * (then unchanged). */
int coll_vsums_add(coll_vsums_t *v, uint32_t campaign_id, uint32_t period, uint32_t idx, int64_t x);
void coll_vsums_clear(coll_vsums_t *v);
void coll_vsums_free(coll_vsums_t *v);

/* Every non-zero sum of a is in b with the same value (call both ways for equality). */
int coll_vsums_within(const coll_vsums_t *a, const coll_vsums_t *b);

/* Add a decoded report of one of these mechanisms to v. 0, or -1 (memory, or a body outside
 * the layout: dpauc n > 128, a ustat value beyond DPM_MAX_GRR_K, a tree level beyond
 * COLL_TREE_MAX_DEPTH). */
int coll_vec_add_report(coll_vsums_t *v, const dpm_report_t *r);

#endif /* DPM_COLLECTOR_AGG_AUC_H */
