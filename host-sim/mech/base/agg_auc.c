/* SPDX-License-Identifier: Apache-2.0 */
/* Sparse vector sums of dpauc, ustat_bins and ustat_tree reports (layout in agg_auc.h). */
#include "mech/base/agg_auc.h"

#include <stdlib.h>
#include <string.h>

static size_t hash3(uint32_t a, uint32_t b, uint32_t c)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15u ^ (uint64_t)b * 0xC2B2AE3D27D4EB4Fu ^
                 (uint64_t)c * 0x165667B19E3779F9u;
    return (size_t)(h ^ (h >> 29));
}

static long find(const coll_vsums_t *v, uint32_t cid, uint32_t period, uint32_t idx, size_t *at)
{
    size_t mask = v->nslot - 1;
    for (size_t i = hash3(cid, period, idx) & mask;; i = (i + 1) & mask) {
        uint32_t s = v->slot[i];
        if (s == 0) {
            *at = i;
            return -1;
        }
        const coll_vsum_t *e = &v->e[s - 1];
        if (e->campaign_id == cid && e->period == period && e->idx == idx) {
            *at = i; /* (set on both paths: callers may read it either way) */
            return (long)(s - 1);
        }
    }
}

static int grow(coll_vsums_t *v)
{
    size_t nslot = v->nslot ? 2 * v->nslot : 64;
    uint32_t *slot = calloc(nslot, sizeof(*slot));
    coll_vsum_t *e = realloc(v->e, nslot / 2 * sizeof(*e));
    if (slot == NULL || e == NULL || nslot / 2 > UINT32_MAX) {
        free(slot);
        if (e != NULL) {
            v->e = e;
        }
        return -1;
    }
    free(v->slot);
    v->e = e;
    v->cap = nslot / 2;
    v->slot = slot;
    v->nslot = nslot;
    for (size_t k = 0; k < v->n; k++) {
        size_t at;
        find(v, e[k].campaign_id, e[k].period, e[k].idx, &at);
        slot[at] = (uint32_t)(k + 1);
    }
    return 0;
}

int coll_vsums_add(coll_vsums_t *v, uint32_t campaign_id, uint32_t period, uint32_t idx, int64_t x)
{
    if (v->n == v->cap && grow(v) != 0) { /* load <= 1/2 */
        return -1;
    }
    size_t at;
    long i = find(v, campaign_id, period, idx, &at);
    if (i >= 0) {
        int64_t sum;
        if (__builtin_add_overflow(v->e[i].sum, x, &sum)) {
            return -1; /* checked: the caller refuses the report (bounds.h: capacity) */
        }
        v->e[i].sum = sum;
        return 0;
    }
    coll_vsum_t *e = &v->e[v->n];
    e->campaign_id = campaign_id;
    e->period = period;
    e->idx = idx;
    e->sum = x;
    v->slot[at] = (uint32_t)++v->n;
    return 0;
}

void coll_vsums_clear(coll_vsums_t *v)
{
    if (v->slot != NULL) {
        memset(v->slot, 0, v->nslot * sizeof(*v->slot));
    }
    v->n = 0;
}

void coll_vsums_free(coll_vsums_t *v)
{
    free(v->e);
    free(v->slot);
    memset(v, 0, sizeof(*v));
}

int coll_vsums_within(const coll_vsums_t *a, const coll_vsums_t *b)
{
    for (size_t k = 0; k < a->n; k++) {
        const coll_vsum_t *x = &a->e[k];
        size_t at;
        long i = b->nslot ? find(b, x->campaign_id, x->period, x->idx, &at) : -1;
        if (x->sum != (i >= 0 ? b->e[i].sum : 0)) {
            return 0;
        }
    }
    return 1;
}

static int add_dpauc(coll_vsums_t *v, const dpm_report_t *r)
{
    const dpm_dpauc_report_t *d = &r->body.dpauc;
    if (d->n < 1 || d->n > COLL_VEC_DPAUC_N || d->n > DPM_DPAUC_MAX_THRESHOLDS) {
        return -1;
    }
    const int32_t *cells[4] = {d->tp, d->fp, d->tn, d->fn};
    for (uint32_t c = 0; c < 4; c++) {
        for (uint32_t i = 0; i < d->n; i++) {
            if (coll_vsums_add(v, r->campaign_id, r->period, c * COLL_VEC_DPAUC_N + i,
                               cells[c][i]) != 0) {
                return -1;
            }
        }
    }
    return 0;
}

static int add_tree(coll_vsums_t *v, const dpm_report_t *r)
{
    const dpm_ustat_tree_report_t *t = &r->body.ustat_tree;
    if (t->label > 1 || t->level < 1 || t->level > COLL_TREE_MAX_DEPTH ||
        t->row >= (1u << t->level) || t->value >= (1u << t->level)) {
        return -1;
    }
    uint32_t node = (1u << t->level), cls = t->label * COLL_VEC_TREE_NODES;
    uint32_t cid = r->campaign_id, p = r->period;
    int rc = coll_vsums_add(v, cid, p, t->label * COLL_VEC_TREE_LEVELS + t->level, 1);
    if (rc == 0 && t->value <= 1) { /* a Hadamard level's bit (a GRR node 0/1 adds a sign too,
                                     * which the estimate of a GRR level does not read) */
        rc = coll_vsums_add(v, cid, p, COLL_VEC_TREE_HAD + cls + node + t->row,
                            1 - 2 * (int64_t)t->value);
    }
    if (rc == 0 && t->row == 0) { /* a GRR level's node (likewise unread on Hadamard levels) */
        rc = coll_vsums_add(v, cid, p, COLL_VEC_TREE_GRR + cls + node + t->value, 1);
    }
    return rc;
}

int coll_vec_add_report(coll_vsums_t *v, const dpm_report_t *r)
{
    switch (r->mechanism) {
    case DPM_MECH_ID_DPAUC: return add_dpauc(v, r);
    case DPM_MECH_ID_USTAT_BINS: {
        const dpm_ustat_bins_report_t *b = &r->body.ustat_bins;
        if (b->label > 1 || b->value >= DPM_MAX_GRR_K) {
            return -1;
        }
        return coll_vsums_add(v, r->campaign_id, r->period, b->label * DPM_MAX_GRR_K + b->value, 1);
    }
    case DPM_MECH_ID_USTAT_TREE: return add_tree(v, r);
    default: return -1;
    }
}
