/* SPDX-License-Identifier: Apache-2.0 */
/* PAPER REPRODUCTION ONLY: the paper's budget splits (see tuple_paper.h). */
#include "sim/devices/tuple_paper.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define Q16 65536.0

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b != 0) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Server parameters from the device's own integers. */
static dpm_status_t paper_params(tuple_paper_t *m)
{
    if (m->mech == DPM_DISP_MR) {
        return dpm_disp_params_campaign_mr(&m->params, m->groups, m->group_grr.keep,
                                           m->group_grr.other, m->value_rr.keep);
    }
    double kept = (double)m->value_lap.scale_num / (double)m->value_lap.scale_den;
    double flip = (double)m->flip_num / (double)m->flip_den;
    return dpm_disp_params_campaign_ml(&m->params, m->groups, m->group_grr.keep, m->group_grr.other,
                                       kept, flip, m->frac_bits);
}

/* Flipped-report scale k / eps2 value units = k_num 2^(F+16) / (k_den eps2_q16) grid units. */
static dpm_status_t flip_scale(tuple_paper_t *m, dpm_eps_t eps2, uint64_t k_num, uint64_t k_den)
{
    if (k_num == 0 || k_den == 0 || k_num > (UINT64_C(1) << 24) || k_den > (UINT64_C(1) << 24)) {
        return DPM_ERR_PARAM;
    }
    uint64_t num = k_num << (m->frac_bits + DPM_EPS_FRAC_BITS);
    uint64_t den = k_den * eps2;
    uint64_t g = gcd_u64(num, den);
    m->flip_num = num / g;
    m->flip_den = den / g;
    return m->flip_num <= DPM_DLAP_MAX_NUM ? DPM_OK : DPM_ERR_RANGE;
}

dpm_status_t tuple_paper_init_split(tuple_paper_t *m, dpm_disp_mech_t mech, uint32_t groups,
                                    dpm_eps_t eps1, dpm_eps_t eps2, uint64_t k_num, uint64_t k_den)
{
    if (m == NULL || (mech != DPM_DISP_MR && mech != DPM_DISP_ML)) {
        return DPM_ERR_PARAM;
    }
    tuple_paper_t next;
    memset(&next, 0, sizeof(next));
    next.mech = mech;
    next.groups = groups;
    next.frac_bits = DPM_FRAC_BITS;
    next.eps = next.k = next.eps_true = NAN;
    dpm_status_t st = dpm_grr_init(&next.group_grr, groups, eps1);
    if (st == DPM_OK && mech == DPM_DISP_MR) {
        st = dpm_rr_init(&next.value_rr, eps2);
    } else if (st == DPM_OK) {
        st = dpm_laplace_init(&next.value_lap, UINT64_C(2) << next.frac_bits, eps2);
        if (st == DPM_OK) {
            st = flip_scale(&next, eps2, k_num, k_den);
        }
        next.k = (double)k_num / (double)k_den;
    }
    if (st == DPM_OK) {
        st = paper_params(&next);
    }
    if (st == DPM_OK) {
        st = dpm_disp_params_true_ldp(&next.params, &next.eps_true);
    }
    if (st != DPM_OK) {
        return st;
    }
    next.eps1 = eps1 / Q16;
    next.eps2 = eps2 / Q16;
    snprintf(next.label, sizeof(next.label), "%s paper split (NOT the stated eps)",
             mech == DPM_DISP_MR ? "M_R" : "M_L");
    *m = next;
    return DPM_OK;
}

dpm_status_t tuple_paper_init(tuple_paper_t *m, dpm_disp_mech_t mech, uint32_t groups,
                              dpm_eps_t eps)
{
    double e = eps / Q16, e1, e2, k;
    dpm_status_t st = dpm_disp_split_eps(mech, DPM_DISP_SPLIT_PAPER, e, &e1, &e2, &k);
    if (st != DPM_OK || m == NULL) {
        return st != DPM_OK ? st : DPM_ERR_PARAM;
    }
    double e1_q16 = nearbyint(e1 * Q16);
    if (!(e1_q16 >= 1.0 && e1_q16 <= (double)DPM_EPS_MAX_Q16)) {
        return DPM_ERR_RANGE;
    }
    /* "M_L opt.": k = eps exactly (as eps2's own Q16 value), or k = 2/3 */
    uint64_t k_num = 2, k_den = 3;
    if (mech == DPM_DISP_ML && 3.0 * e >= 2.0) {
        k_num = eps;
        k_den = (uint64_t)1 << DPM_EPS_FRAC_BITS;
    }
    st = tuple_paper_init_split(m, mech, groups, (dpm_eps_t)e1_q16, eps, k_num, k_den);
    if (st == DPM_OK) {
        m->eps = e;
        snprintf(m->label, sizeof(m->label), "%s paper split (NOT the stated eps)",
                 mech == DPM_DISP_MR ? "M_R opt." : "M_L opt.");
    }
    return st;
}

/* M_R: Harmony coin (fair if the group flipped), then binary RR. */
static dpm_status_t value_mr(const tuple_paper_t *m, dpm_rand_t *r, const dpm_ratio_t *x, int kept,
                             int32_t *out)
{
    int bit = 0, reported = 0;
    dpm_status_t st = kept ? dpm_bernoulli(r, x->num, x->den, &bit) : dpm_bernoulli(r, 1, 2, &bit);
    if (st == DPM_OK) {
        st = dpm_rr_perturb(&m->value_rr, r, bit, &reported);
    }
    if (st == DPM_OK) {
        *out = 2 * reported - 1;
    }
    return st;
}

/* Unbiased randomized rounding of v = 2 num / den - 1 to the Q(F) grid, as the SDK's tuple_ml
 * device does it: floor(v 2^F) plus Bernoulli(fractional part), one dpm_bernoulli draw. */
static dpm_status_t round_to_grid(dpm_rand_t *r, const dpm_ratio_t *x, uint32_t frac_bits,
                                  int64_t *out)
{
    int64_t den = (int64_t)x->den;
    int64_t scaled = (2 * (int64_t)x->num - den) * ((int64_t)1 << frac_bits);
    int64_t q = scaled / den, rem = scaled - q * den;
    if (rem < 0) { /* C division truncates toward zero: make it a floor */
        q -= 1;
        rem += den;
    }
    int up = 0;
    dpm_status_t st = dpm_bernoulli(r, (uint64_t)rem, (uint64_t)den, &up);
    if (st == DPM_OK) {
        *out = q + up;
    }
    return st;
}

/* M_L: kept reports v + Lap(2 / eps2), flipped ones 0 + Lap(k / eps2). */
static dpm_status_t value_ml(const tuple_paper_t *m, dpm_rand_t *r, const dpm_ratio_t *x, int kept,
                             int32_t *out)
{
    int64_t v = 0, noised = 0;
    dpm_status_t st;
    if (kept) {
        st = round_to_grid(r, x, m->frac_bits, &v);
        if (st == DPM_OK) {
            st = dpm_laplace_add(&m->value_lap, r, v, &noised);
        }
    } else {
        st = dpm_dlap_add(r, m->flip_num, m->flip_den, 0, &noised);
    }
    if (st == DPM_OK && (noised > INT32_MAX || noised < -INT32_MAX)) {
        st = DPM_ERR_RANGE;
    }
    if (st == DPM_OK) {
        *out = (int32_t)noised;
    }
    return st;
}

dpm_status_t tuple_paper_perturb(const tuple_paper_t *m, dpm_rand_t *r, uint32_t group,
                                 const dpm_ratio_t *metric, dpm_tuple_report_t *out)
{
    if (m == NULL || r == NULL || metric == NULL || out == NULL || group >= m->groups ||
        metric->den == 0 || metric->num > metric->den || metric->den > (UINT64_C(1) << 32)) {
        return DPM_ERR_PARAM;
    }
    dpm_tuple_report_t rep;
    memset(&rep, 0, sizeof(rep));
    dpm_status_t st = dpm_grr_perturb(&m->group_grr, r, group, &rep.group);
    if (st == DPM_OK) {
        int kept = rep.group == group;
        st = m->mech == DPM_DISP_MR ? value_mr(m, r, metric, kept, &rep.value[0])
                                    : value_ml(m, r, metric, kept, &rep.value[0]);
    }
    if (st == DPM_OK) {
        rep.nmetrics = 1;
        *out = rep;
    }
    return st;
}
