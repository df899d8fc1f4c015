/* SPDX-License-Identifier: Apache-2.0 */
/* ustat_bins and ustat_tree: Bell et al.'s protocols 1 and 2 on the device (dpm/ustat.h). */
#include "dpm_internal.h"

#include "dpm/ustat.h"

dpm_status_t dpm_ustat_quantize(uint32_t score_q31, uint32_t k, uint32_t *bin)
{
    if (bin == NULL || k < 2 || score_q31 > DPM_SCORE_ONE) {
        return DPM_ERR_PARAM;
    }
    uint64_t b = ((uint64_t)score_q31 * k) >> DPM_SCORE_FRAC_BITS; /* <= k: score 1.0 gives k */
    *bin = (uint32_t)(b - (b == k));                               /* the top bin is closed */
    return DPM_OK;
}

/* The GRR domain of a kernel with k bins per score, 0 if the kernel is unknown. */
static uint64_t bins_domain(dpm_ustat_kernel_t kernel, uint32_t k)
{
    switch (kernel) {
    case DPM_USTAT_AUC: return k;
    case DPM_USTAT_AUC_PRIVATE_LABEL: return 2u * (uint64_t)k;
    case DPM_USTAT_KENDALL: return (uint64_t)k * k;
    default: return 0;
    }
}

dpm_status_t dpm_ustat_bins_init(dpm_ustat_bins_t *m, dpm_ustat_kernel_t kernel, uint32_t k,
                                 dpm_eps_t eps)
{
    uint64_t domain = bins_domain(kernel, k);
    if (m == NULL || k < 2 || domain < 2 || domain > DPM_MAX_GRR_K || eps == 0 ||
        eps > DPM_EPS_MAX_Q16) {
        return DPM_ERR_PARAM;
    }
    dpm_ustat_bins_t next;
    memset(&next, 0, sizeof(next));
    dpm_status_t st = dpm_grr_init(&next.grr, (uint32_t)domain, eps);
    if (st != DPM_OK) {
        return st;
    }
    next.kernel = kernel;
    next.k = k;
    next.eps = eps;
    next.eps_implemented = next.grr.eps_implemented;
    *m = next;
    return DPM_OK;
}

dpm_status_t dpm_ustat_bins_perturb(const dpm_ustat_bins_t *m, dpm_rand_t *r,
                                    const dpm_ustat_example_t *ex, dpm_ustat_bins_report_t *out)
{
    if (m == NULL || r == NULL || ex == NULL || out == NULL || bins_domain(m->kernel, m->k) < 2 ||
        m->grr.k != bins_domain(m->kernel, m->k) || (ex->label != 0 && ex->label != 1) ||
        (m->kernel == DPM_USTAT_KENDALL && ex->label != 0)) {
        return DPM_ERR_PARAM;
    }
    uint32_t bin = 0, bin2 = 0;
    dpm_status_t st = dpm_ustat_quantize(ex->score, m->k, &bin);
    if (st == DPM_OK && m->kernel == DPM_USTAT_KENDALL) {
        st = dpm_ustat_quantize(ex->score2, m->k, &bin2);
    }
    if (st != DPM_OK) {
        return st;
    }
    uint32_t label = (uint32_t)ex->label;
    uint32_t x = bin;
    if (m->kernel == DPM_USTAT_AUC_PRIVATE_LABEL) {
        x = label * m->k + bin; /* no branch on the label: a multiply */
    } else if (m->kernel == DPM_USTAT_KENDALL) {
        x = bin * m->k + bin2;
    }
    dpm_ustat_bins_report_t rep;
    memset(&rep, 0, sizeof(rep));
    st = dpm_grr_perturb(&m->grr, r, x, &rep.value);
    if (st != DPM_OK) {
        return st;
    }
    rep.label = m->kernel == DPM_USTAT_AUC ? label : 0u; /* public only in the AUC kernel */
    *out = rep;
    return DPM_OK;
}

dpm_status_t dpm_ustat_tree_init(dpm_ustat_tree_t *m, uint32_t depth, uint32_t grr_levels,
                                 dpm_eps_t eps)
{
    if (m == NULL || depth < 1 || depth > DPM_USTAT_MAX_DEPTH || grr_levels > depth ||
        grr_levels > DPM_USTAT_MAX_GRR_LEVELS || eps == 0 || eps > DPM_EPS_MAX_Q16 ||
        (UINT64_C(1) << grr_levels) > DPM_MAX_GRR_K) {
        return DPM_ERR_PARAM;
    }
    dpm_ustat_tree_t next;
    memset(&next, 0, sizeof(next));
    next.depth = depth;
    next.grr_levels = grr_levels;
    next.eps = eps;
    dpm_eps_t worst = 0;
    dpm_status_t st = DPM_OK;
    for (uint32_t l = 1; l <= grr_levels && st == DPM_OK; l++) {
        st = dpm_grr_init(&next.grr[l - 1], UINT32_C(1) << l, eps);
        if (st == DPM_OK && next.grr[l - 1].eps_implemented > worst) {
            worst = next.grr[l - 1].eps_implemented;
        }
    }
    if (st == DPM_OK && grr_levels < depth) {
        st = dpm_rr_init(&next.rr, eps);
        if (st == DPM_OK && next.rr.eps_implemented > worst) {
            worst = next.rr.eps_implemented;
        }
    }
    if (st != DPM_OK) {
        return st;
    }
    next.eps_implemented = worst;
    *m = next;
    return DPM_OK;
}

/* Parity of the set bits of x, without a branch. */
static uint32_t parity32(uint32_t x)
{
    x ^= x >> 16;
    x ^= x >> 8;
    x ^= x >> 4;
    x ^= x >> 2;
    x ^= x >> 1;
    return x & 1u;
}

static int tree_ok(const dpm_ustat_tree_t *m)
{
    if (m->depth < 1 || m->depth > DPM_USTAT_MAX_DEPTH || m->grr_levels > m->depth ||
        m->grr_levels > DPM_USTAT_MAX_GRR_LEVELS) {
        return 0;
    }
    for (uint32_t l = 1; l <= m->grr_levels; l++) {
        if (m->grr[l - 1].k != (UINT32_C(1) << l)) {
            return 0;
        }
    }
    return m->grr_levels == m->depth || m->rr.k == 2;
}

dpm_status_t dpm_ustat_tree_perturb(const dpm_ustat_tree_t *m, dpm_rand_t *r,
                                    const dpm_ustat_example_t *ex, dpm_ustat_tree_report_t *out)
{
    if (m == NULL || r == NULL || ex == NULL || out == NULL || !tree_ok(m) ||
        (ex->label != 0 && ex->label != 1) || ex->score > DPM_SCORE_ONE) {
        return DPM_ERR_PARAM;
    }
    uint32_t x = 0;
    dpm_status_t st = dpm_ustat_quantize(ex->score, UINT32_C(1) << m->depth, &x);
    uint64_t pick = 0, row = 0;
    if (st == DPM_OK) {
        st = dpm_uniform(r, m->depth, &pick); /* public randomness: the level */
    }
    if (st != DPM_OK) {
        return st;
    }
    dpm_ustat_tree_report_t rep;
    memset(&rep, 0, sizeof(rep));
    rep.label = (uint32_t)ex->label;
    rep.level = (uint32_t)pick + 1u;
    uint32_t node = x >> (m->depth - rep.level);
    if (rep.level <= m->grr_levels) {
        st = dpm_grr_perturb(&m->grr[rep.level - 1], r, node, &rep.value);
    } else {
        st = dpm_rand_bits(r, rep.level, &row); /* public randomness: the Hadamard row */
        int bit = 0;
        if (st == DPM_OK) {
            rep.row = (uint32_t)row;
            st = dpm_rr_perturb(&m->rr, r, (int)parity32(rep.row & node), &bit);
        }
        rep.value = (uint32_t)bit;
    }
    if (st != DPM_OK) {
        return st;
    }
    *out = rep;
    return DPM_OK;
}
