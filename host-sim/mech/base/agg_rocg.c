/* SPDX-License-Identifier: Apache-2.0 */
/* Per-group roc_hist sums in the vector layout of agg_rocg.h. */
#include "mech/base/agg_rocg.h"

#include <stddef.h>

uint64_t coll_rocg_len(uint32_t groups, uint32_t bins)
{
    return (uint64_t)groups * ((uint64_t)bins + 1u) * (2u * (uint64_t)bins + 1u);
}

/* Index of M[i][j], i <= j, among a group's products (c = 2B cells). */
static uint32_t tri(uint32_t i, uint32_t j, uint32_t c)
{
    return i * c - i * (i - 1u) / 2u + (j - i);
}

int coll_rocg_add_report(coll_vsums_t *v, const dpm_report_t *r, uint32_t groups)
{
    const dpm_roc_hist_report_t *h = &r->body.roc_hist;
    uint32_t B = h->bins, c = 2u * B;
    if (r->mechanism != DPM_MECH_ID_ROC_HIST || groups < 2 || B < 2 || B > DPM_MAX_BINS ||
        h->group >= groups || coll_rocg_len(groups, B) > COLL_VEC_LEN) {
        return -1;
    }
    int64_t y[2 * DPM_MAX_BINS];
    for (uint32_t b = 0; b < B; b++) {
        y[b] = h->pos[b];
        y[B + b] = h->neg[b];
    }
    uint32_t base = h->group * (B + 1u) * (2u * B + 1u), cid = r->campaign_id, p = r->period;
    int rc = coll_vsums_add(v, cid, p, base, 1);
    for (uint32_t i = 0; rc == 0 && i < c; i++) {
        rc = coll_vsums_add(v, cid, p, base + 1u + i, y[i]);
    }
    for (uint32_t i = 0; rc == 0 && i < c; i++) {
        for (uint32_t j = i; rc == 0 && j < c; j++) {
            rc = coll_vsums_add(v, cid, p, base + 1u + c + tri(i, j, c), y[i] * y[j]);
        }
    }
    return rc;
}

dpm_status_t coll_rocg_agg(const int64_t *vec, uint32_t groups, uint32_t bins,
                           dpm_roc_groups_agg_t *a)
{
    if (vec == NULL || coll_rocg_len(groups, bins) > COLL_VEC_LEN) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st = dpm_roc_groups_agg_init(a, groups, bins);
    if (st != DPM_OK) {
        return st;
    }
    uint32_t c = 2u * bins, w = (bins + 1u) * (2u * bins + 1u);
    for (uint32_t g = 0; g < groups; g++) {
        const int64_t *x = vec + (size_t)g * w;
        a->n[g] = x[0] > 0 ? (uint64_t)x[0] : 0u;
        a->reports += a->n[g];
        for (uint32_t i = 0; i < c; i++) {
            a->sum[(size_t)g * c + i] = x[1 + i];
        }
        double *m = a->m2 + (size_t)g * c * c; /* the upper triangle, as dpm_roc_groups_agg_add */
        for (uint32_t i = 0; i < c; i++) {
            for (uint32_t j = i; j < c; j++) {
                m[(size_t)i * c + j] = (double)x[1 + c + tri(i, j, c)];
            }
        }
    }
    return DPM_OK;
}
