/* SPDX-License-Identifier: Apache-2.0 */
/* ustat_bins and ustat_tree: Bell et al.'s protocols 1 and 2 on the device (dpm/expert/ustat.h). */
#include "dpm_internal.h"

#include "dpm/expert/report.h"
#include "dpm/expert/ustat.h"
#include "dpm/expert/noise.h"
#include "mech/mech_ops.h"

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

/* ---- ustat_bins' and ustat_tree's ops (mech/mech_ops.h) -------------------------------------- */

#if DPM_MECH_USTAT
static uint32_t grr_hash(uint32_t h, const dpm_grr_t *g)
{
    h = dpm_fnv_word(h, g->k);
    h = dpm_fnv_word(h, g->keep);
    return dpm_fnv_word(h, g->other);
}

/* ustat_bins: the kernel, k and the GRR's integer thresholds. */
static uint32_t ustat_bins_params_hash(const dpm_ustat_bins_t *m)
{
    uint32_t h = DPM_FNV_INIT;
    h = dpm_fnv_word(h, (uint32_t)DPM_MECH_ID_USTAT_BINS);
    h = dpm_fnv_word(h, (uint32_t)m->kernel);
    h = dpm_fnv_word(h, m->k);
    h = grr_hash(h, &m->grr);
    return dpm_fnv_word(h, m->eps_implemented);
}

/* ustat_tree: the depth, the GRR levels and every oracle's integer thresholds. */
static uint32_t ustat_tree_params_hash(const dpm_ustat_tree_t *m)
{
    uint32_t h = DPM_FNV_INIT;
    h = dpm_fnv_word(h, (uint32_t)DPM_MECH_ID_USTAT_TREE);
    h = dpm_fnv_word(h, m->depth);
    h = dpm_fnv_word(h, m->grr_levels);
    for (uint32_t l = 1; l <= m->grr_levels; l++) {
        h = grr_hash(h, &m->grr[l - 1]);
    }
    if (m->grr_levels < m->depth) {
        h = grr_hash(h, &m->rr);
    }
    return dpm_fnv_word(h, m->eps_implemented);
}

dpm_status_t dpm_ustat_mech_init(dpm_mech_t *next, const dpm_campaign_t *c, const char **reason)
{
    dpm_status_t st;
    if (c->mechanism == DPM_MECH_ID_USTAT_BINS) {
        if (c->ustat_kernel > DPM_USTAT_KENDALL) {
            return dpm_mech_fail(reason, "unknown ustat kernel", DPM_ERR_PARAM);
        }
        if (c->ustat_k < 2) {
            return dpm_mech_fail(reason, "ustat_bins needs k >= 2 bins", DPM_ERR_PARAM);
        }
        uint64_t k = c->ustat_k;
        uint64_t domain = c->ustat_kernel == DPM_USTAT_AUC                 ? k
                          : c->ustat_kernel == DPM_USTAT_AUC_PRIVATE_LABEL ? 2u * k
                                                                           : k * k;
        if (domain > DPM_MAX_GRR_K) {
            return dpm_mech_fail(reason,
                                 "ustat_bins k beyond this build (GRR domain above DPM_MAX_GRR_K)",
                                 DPM_ERR_PARAM);
        }
        st = dpm_ustat_bins_init(&next->params.ustat_bins, (dpm_ustat_kernel_t)c->ustat_kernel,
                                 c->ustat_k, c->eps.q16);
        next->eps_implemented = next->params.ustat_bins.eps_implemented;
        next->params_hash = ustat_bins_params_hash(&next->params.ustat_bins);
    } else {
        if (c->tree_depth == 0) {
            return dpm_mech_fail(reason, "ustat_tree needs a depth >= 1", DPM_ERR_PARAM);
        }
        if (c->tree_depth > DPM_USTAT_MAX_DEPTH) {
            return dpm_mech_fail(reason, "ustat_tree depth beyond this build (DPM_USTAT_MAX_DEPTH)",
                                 DPM_ERR_PARAM);
        }
        if (c->tree_grr_levels > c->tree_depth) {
            return dpm_mech_fail(reason, "ustat_tree GRR levels above the depth", DPM_ERR_PARAM);
        }
        if (c->tree_grr_levels > DPM_USTAT_MAX_GRR_LEVELS ||
            (UINT64_C(1) << c->tree_grr_levels) > DPM_MAX_GRR_K) {
            return dpm_mech_fail(reason, "ustat_tree GRR levels beyond this build (DPM_MAX_GRR_K)",
                                 DPM_ERR_PARAM);
        }
        st = dpm_ustat_tree_init(&next->params.ustat_tree, c->tree_depth, c->tree_grr_levels,
                                 c->eps.q16);
        next->eps_implemented = next->params.ustat_tree.eps_implemented;
        next->params_hash = ustat_tree_params_hash(&next->params.ustat_tree);
    }
    if (st != DPM_OK) {
        return dpm_mech_fail(reason,
                             st == DPM_ERR_RANGE
                                 ? "epsilon too small or too large for the mechanism"
                                 : "ustat parameters out of range",
                             st);
    }
    return DPM_OK;
}

/* The ranges dpm_report_encode accepts for an ustat_tree body (the campaign checks the rest). */
static int tree_body_ok(uint32_t label, uint32_t level, uint32_t row, uint32_t value)
{
    return label <= 1 && level >= 1 && level <= DPM_USTAT_MAX_DEPTH && (row >> level) == 0 &&
           (value >> level) == 0;
}

int dpm_ustat_body_ok(const dpm_report_t *r)
{
    const dpm_ustat_tree_report_t *u = &r->body.ustat_tree;
    return r->mechanism == DPM_MECH_ID_USTAT_BINS
               ? r->body.ustat_bins.value < DPM_MAX_GRR_K && r->body.ustat_bins.label <= 1
               : r->mechanism == DPM_MECH_ID_USTAT_TREE &&
                     tree_body_ok(u->label, u->level, u->row, u->value);
}

/* The field numbers written by hand must be those of the generated descriptors. */
typedef char
    bins_tags[dpm_v1_UstatBinsBody_value_tag == 1 && dpm_v1_UstatBinsBody_label_tag == 2 ? 1 : -1];
typedef char tree_tags[dpm_v1_UstatTreeBody_label_tag == 1 && dpm_v1_UstatTreeBody_level_tag == 2 &&
                               dpm_v1_UstatTreeBody_row_tag == 3 &&
                               dpm_v1_UstatTreeBody_value_tag == 4
                           ? 1
                           : -1];

/* UstatBinsBody (Report field 13) or UstatTreeBody (field 14), as pb_encode writes them (zero
 * fields omitted), straight into the buffer (core/wire.h). */
void dpm_ustat_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    if (r->mechanism == DPM_MECH_ID_USTAT_BINS) {
        const dpm_ustat_bins_report_t *b = &r->body.ustat_bins;
        dpm_wire_message(w, dpm_v1_Report_ustat_bins_tag,
                         dpm_wire_uint_field_len(b->value) + dpm_wire_uint_field_len(b->label));
        dpm_wire_uint_field(w, dpm_v1_UstatBinsBody_value_tag, b->value);
        dpm_wire_uint_field(w, dpm_v1_UstatBinsBody_label_tag, b->label);
        return;
    }
    const dpm_ustat_tree_report_t *u = &r->body.ustat_tree;
    dpm_wire_message(w, dpm_v1_Report_ustat_tree_tag,
                     dpm_wire_uint_field_len(u->label) + dpm_wire_uint_field_len(u->level) +
                         dpm_wire_uint_field_len(u->row) + dpm_wire_uint_field_len(u->value));
    dpm_wire_uint_field(w, dpm_v1_UstatTreeBody_label_tag, u->label);
    dpm_wire_uint_field(w, dpm_v1_UstatTreeBody_level_tag, u->level);
    dpm_wire_uint_field(w, dpm_v1_UstatTreeBody_row_tag, u->row);
    dpm_wire_uint_field(w, dpm_v1_UstatTreeBody_value_tag, u->value);
}

int dpm_ustat_wire_fits(const dpm_v1_Report *msg)
{
    if (msg->which_body == dpm_v1_Report_ustat_bins_tag) {
        return msg->mechanism == dpm_v1_Mechanism_USTAT_BINS &&
               msg->body.ustat_bins.value < DPM_MAX_GRR_K && msg->body.ustat_bins.label <= 1;
    }
    const dpm_v1_UstatTreeBody *w = &msg->body.ustat_tree;
    return msg->which_body == dpm_v1_Report_ustat_tree_tag &&
           msg->mechanism == dpm_v1_Mechanism_USTAT_TREE &&
           tree_body_ok(w->label, w->level, w->row, w->value);
}

void dpm_ustat_wire_read(const dpm_v1_Report *msg, dpm_report_t *out)
{
    if (msg->which_body == dpm_v1_Report_ustat_bins_tag) {
        out->body.ustat_bins.value = msg->body.ustat_bins.value;
        out->body.ustat_bins.label = msg->body.ustat_bins.label;
        return;
    }
    const dpm_v1_UstatTreeBody *w = &msg->body.ustat_tree;
    out->body.ustat_tree.label = w->label;
    out->body.ustat_tree.level = w->level;
    out->body.ustat_tree.row = w->row;
    out->body.ustat_tree.value = w->value;
}

dpm_status_t dpm_ustat_check_report(const dpm_mech_t *m, const dpm_report_t *r, const char **reason)
{
    if (m->campaign.mechanism == DPM_MECH_ID_USTAT_BINS) {
        const dpm_ustat_bins_t *u = &m->params.ustat_bins;
        if (r->body.ustat_bins.value >= u->grr.k) {
            return dpm_mech_fail(reason, "value out of range", DPM_ERR_PROTOCOL);
        }
        if (r->body.ustat_bins.label > (u->kernel == DPM_USTAT_AUC ? 1u : 0u)) {
            return dpm_mech_fail(reason, "label out of range", DPM_ERR_PROTOCOL);
        }
        return DPM_OK;
    }
    const dpm_ustat_tree_t *u = &m->params.ustat_tree;
    const dpm_ustat_tree_report_t *t = &r->body.ustat_tree;
    if (t->label > 1) {
        return dpm_mech_fail(reason, "label out of range", DPM_ERR_PROTOCOL);
    }
    if (t->level < 1 || t->level > u->depth) {
        return dpm_mech_fail(reason, "level out of range", DPM_ERR_PROTOCOL);
    }
    int grr = t->level <= u->grr_levels;
    if ((grr && (t->row != 0 || (t->value >> t->level) != 0)) ||
        (!grr && ((t->row >> t->level) != 0 || t->value > 1))) {
        return dpm_mech_fail(reason, "value out of range", DPM_ERR_PROTOCOL);
    }
    return DPM_OK;
}

dpm_status_t dpm_mech_report_ustat_bins(const dpm_mech_t *m, dpm_rand_t *r,
                                        dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc,
                                        const dpm_ustat_example_t *ex, dpm_report_t *out)
{
    if (m == NULL || r == NULL || ex == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_USTAT_BINS || !dpm_receipt_ok(m, iss, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_ustat_bins_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_ustat_bins_perturb(&m->params.ustat_bins, r, ex, &body);
    return dpm_mech_report_finish(m, r, iss, rc, st, &body, sizeof(body), out);
}

dpm_status_t dpm_mech_report_ustat_tree(const dpm_mech_t *m, dpm_rand_t *r,
                                        dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc,
                                        const dpm_ustat_example_t *ex, dpm_report_t *out)
{
    if (m == NULL || r == NULL || ex == NULL || out == NULL ||
        m->campaign.mechanism != DPM_MECH_ID_USTAT_TREE || !dpm_receipt_ok(m, iss, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_ustat_tree_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_ustat_tree_perturb(&m->params.ustat_tree, r, ex, &body);
    return dpm_mech_report_finish(m, r, iss, rc, st, &body, sizeof(body), out);
}

const char *dpm_ustat_input_problem(const dpm_mech_t *m, const dpm_ustat_example_t *ex)
{
    if (ex->score > DPM_SCORE_ONE || (ex->label != 0 && ex->label != 1)) {
        return "score above 2^31 or label not 0/1";
    }
    if (m->campaign.mechanism == DPM_MECH_ID_USTAT_BINS &&
        m->params.ustat_bins.kernel == DPM_USTAT_KENDALL &&
        (ex->score2 > DPM_SCORE_ONE || ex->label != 0)) {
        return "Kendall: score2 above 2^31 or label not 0";
    }
    return NULL;
}

#else  /* !DPM_MECH_USTAT: the typed entries stay and refuse */

const char *dpm_ustat_input_problem(const dpm_mech_t *m, const dpm_ustat_example_t *ex)
{
    (void)m, (void)ex;
    return dpm_mech_absent_reason(DPM_MECH_ID_USTAT_BINS);
}

int dpm_ustat_body_ok(const dpm_report_t *r)
{
    (void)r;
    return 0;
}

void dpm_ustat_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    (void)r;
    w->ok = 0;
}

dpm_status_t dpm_mech_report_ustat_bins(const dpm_mech_t *m, dpm_rand_t *r,
                                        dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc,
                                        const dpm_ustat_example_t *ex, dpm_report_t *out)
{
    (void)m, (void)r, (void)iss, (void)rc, (void)ex, (void)out;
    return DPM_ERR_UNSUPPORTED;
}

dpm_status_t dpm_mech_report_ustat_tree(const dpm_mech_t *m, dpm_rand_t *r,
                                        dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc,
                                        const dpm_ustat_example_t *ex, dpm_report_t *out)
{
    (void)m, (void)r, (void)iss, (void)rc, (void)ex, (void)out;
    return DPM_ERR_UNSUPPORTED;
}
#endif /* DPM_MECH_USTAT */
