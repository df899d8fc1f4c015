/* SPDX-License-Identifier: Apache-2.0 */
/* tuple_mr and tuple_ml: (group, performance) tuples under local DP (see dpm/expert/tuple.h). */
#include "dpm_internal.h"

#include "core/wire.h"
#include "dpm/expert/tuple.h"
#include "dpm/expert/report.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/stats.h"
#include "mech/mech_ops.h"
#include "mech/tuple_internal.h"
#include "noise/grr_internal.h"
#include "noise/xexp.h"

#define TWO31 (UINT64_C(1) << 31)
/* tuple_ml noise must stay this many scales inside int32 (tail < 2 e^-32 < 2^-45). */
#define LAP_TAIL_SCALES 32u
/* Retries of the split when rounding pushed the computed ε above the request. */
#define SPLIT_ATTEMPTS 8

static int metrics_valid(const dpm_metric_t *metrics, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (metrics[i] < DPM_METRIC_ACCURACY || metrics[i] > DPM_METRIC_PRECISION) {
            return 0;
        }
        for (uint32_t j = 0; j < i; j++) {
            if (metrics[j] == metrics[i]) {
                return 0;
            }
        }
    }
    return 1;
}

static uint32_t max3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t m = a > b ? a : b;
    m = m > c ? m : c;
    return m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
}

/* tuple_mr with per-metric RR at ε/m and e^ε1 = ((1 + e^(ε/m)) / 2)^m, aiming at `target`.
 * The implemented ε is the LDP level of the quantized thresholds (m metrics, d groups):
 *   max{ ln (b / (1-b))^m,  ln (e^ε_g (2 b)^m),  ln ((1 / (2 (1 - b)))^m / e^ε_g) }
 * with b = keep_v / 2^32, 1 - b = other_v / 2^32, e^ε_g = keep_g / other_g: the same group,
 * a report landing in the true group, and one landing in another group. */
static dpm_status_t mr_split(dpm_tuple_t *t, dpm_eps_t target)
{
    uint32_t m = t->nmetrics;
    dpm_eps_t per = target / m;
    if (per == 0) {
        return DPM_ERR_RANGE;
    }
    dpm_status_t st = dpm_rr_init(&t->value.rr, per);
    if (st != DPM_OK) {
        return st;
    }
    dpm_xf_t base = dpm_xf_half(dpm_xf_add_down(dpm_xexp_q16_down(per), dpm_xf_from_u64(1)));
    dpm_xf_t ratio = base;
    for (uint32_t i = 1; i < m; i++) {
        ratio = dpm_xf_mul_down(ratio, base);
    }
    st = dpm_grr_init_ratio(&t->group_grr, t->groups, &ratio);
    if (st != DPM_OK) {
        return st;
    }
    /* Each term is ln of a ratio of products, bounded as one number (numerator rounded up,
     * denominator down) so the sum of separately rounded logs cannot overshoot. */
    dpm_xf_t keep_v = dpm_xf_from_u64(t->value.rr.keep);
    dpm_xf_t other_v = dpm_xf_from_u64(t->value.rr.other);
    dpm_xf_t keep_g = dpm_xf_from_u64(t->group_grr.keep);
    dpm_xf_t other_g = dpm_xf_from_u64(t->group_grr.other);
    dpm_xf_t keep_v_up = keep_v, other_v_down = other_v, half_one = dpm_xf_from_u64(TWO31);
    dpm_xf_t halves = half_one;
    for (uint32_t i = 1; i < m; i++) {
        keep_v_up = dpm_xf_mul_up(keep_v_up, keep_v);
        other_v_down = dpm_xf_mul_down(other_v_down, other_v);
        halves = dpm_xf_mul_down(halves, half_one); /* exact: powers of two */
    }
    dpm_eps_t same_group = 0, into_group = 0, out_of_group = 0;
    st = dpm_xf_ln_up_q16_xf(keep_v_up, other_v_down, &same_group);
    if (st == DPM_OK) {
        st = dpm_xf_ln_up_q16_xf(dpm_xf_mul_up(keep_g, keep_v_up), dpm_xf_mul_down(other_g, halves),
                                 &into_group);
    }
    if (st == DPM_OK) {
        st = dpm_xf_ln_up_q16_xf(dpm_xf_mul_up(other_g, halves),
                                 dpm_xf_mul_down(keep_g, other_v_down), &out_of_group);
    }
    if (st != DPM_OK) {
        return st;
    }
    t->eps_implemented = max3(same_group, into_group, out_of_group);
    return DPM_OK;
}

/* tuple_ml: per-metric discrete Laplace at ε/m with sensitivity 2 (= 2^(F+1) grid units),
 * flipped reports with the same scale (k = 2), group GRR at ε/2. Implemented ε:
 *   max{ m ε_v,  ε_g + m ε_v / 2 }   (ε_v exact: the Laplace pmf has no rounding). */
static dpm_status_t ml_split(dpm_tuple_t *t, dpm_eps_t target)
{
#if !DPM_MECH_TUPLE_ML
    (void)t, (void)target;
    return DPM_ERR_UNSUPPORTED; /* not in this build: no Laplace sampler linked */
#else
    uint32_t m = t->nmetrics;
    dpm_eps_t per = target / m;
    uint64_t sensitivity = UINT64_C(2) << t->frac_bits;
    /* scale t = sensitivity 2^16 / per grid units; need LAP_TAIL_SCALES t <= int32 headroom */
    uint64_t headroom = (UINT64_C(1) << 31) - 1u - sensitivity;
    uint64_t min_per =
        (LAP_TAIL_SCALES * (sensitivity << DPM_EPS_FRAC_BITS) + headroom - 1u) / headroom;
    if (per == 0 || per < min_per) {
        return DPM_ERR_RANGE;
    }
    dpm_status_t st = dpm_laplace_init(&t->value.lap, sensitivity, per);
    if (st == DPM_OK) {
        st = dpm_grr_init(&t->group_grr, t->groups, target / 2u);
    }
    if (st != DPM_OK) {
        return st;
    }
    uint64_t half_values = ((uint64_t)m * per + 1u) / 2u;
    t->eps_implemented = max3((uint64_t)m * per, t->group_grr.eps_implemented + half_values, 0);
    return DPM_OK;
#endif
}

/* dpm_tuple_init into *next, a scratch the caller discards unless DPM_OK (so the mechanism's
 * init builds in its own scratch dpm_mech_t, not in a second dpm_tuple_t on the stack: 384
 * bytes less on the device's deepest call, make size). */
static dpm_status_t tuple_build(dpm_tuple_t *next, dpm_tuple_kind_t kind, uint32_t groups,
                                const dpm_metric_t *metrics, uint32_t nmetrics, dpm_eps_t eps)
{
    if (metrics == NULL || groups < 2 || groups > DPM_MAX_GROUPS || nmetrics == 0 ||
        nmetrics > DPM_TUPLE_MAX_METRICS || !metrics_valid(metrics, nmetrics) || eps == 0 ||
        eps > DPM_EPS_MAX_Q16 || (kind != DPM_TUPLE_MR && kind != DPM_TUPLE_ML)) {
        return DPM_ERR_PARAM;
    }
    if (kind == DPM_TUPLE_ML && !DPM_MECH_TUPLE_ML) {
        return DPM_ERR_UNSUPPORTED; /* built without tuple_ml (DPM_MECH_TUPLE_ML=0) */
    }
    memset(next, 0, sizeof(*next));
    next->kind = kind;
    next->groups = groups;
    next->nmetrics = nmetrics;
    memcpy(next->metrics, metrics, nmetrics * sizeof(metrics[0]));
    next->frac_bits = DPM_FRAC_BITS;
    next->eps = eps;
    /* Rounding up the bound can put it a few ulps above the request: aim lower until the
     * implemented ε fits. */
    dpm_eps_t target = eps;
    for (int attempt = 0; attempt < SPLIT_ATTEMPTS; attempt++) {
        dpm_status_t st = kind == DPM_TUPLE_MR ? mr_split(next, target) : ml_split(next, target);
        if (st != DPM_OK) {
            return st;
        }
        if (next->eps_implemented <= eps) {
            return DPM_OK;
        }
        dpm_eps_t over = next->eps_implemented - eps;
        if (over >= target) {
            return DPM_ERR_RANGE;
        }
        target -= over;
    }
    return DPM_ERR_RANGE;
}

dpm_status_t dpm_tuple_init(dpm_tuple_t *t, dpm_tuple_kind_t kind, uint32_t groups,
                            const dpm_metric_t *metrics, uint32_t nmetrics, dpm_eps_t eps)
{
    if (t == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_tuple_t next; /* *t unchanged unless DPM_OK */
    dpm_status_t st = tuple_build(&next, kind, groups, metrics, nmetrics, eps);
    if (st == DPM_OK) {
        *t = next;
    }
    return st;
}

dpm_status_t dpm_tuple_round_to_grid(dpm_rand_t *r, const dpm_ratio_t *x, uint32_t frac_bits,
                                     int64_t *out)
{
    int64_t den = (int64_t)x->den;
    int64_t scaled = (2 * (int64_t)x->num - den) * ((int64_t)1 << frac_bits);
    int64_t q = scaled / den;
    int64_t rem = scaled - q * den;
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

static int ratio_valid(const dpm_ratio_t *x)
{
    /* den <= 2^32 keeps (2 num - den) 2^F inside int64 for F <= 30 */
    return x->den != 0 && x->num <= x->den && x->den <= (UINT64_C(1) << 32);
}

static dpm_status_t perturb_value(const dpm_tuple_t *t, dpm_rand_t *r, const dpm_ratio_t *x,
                                  uint32_t kept_mask, int32_t *out)
{
    dpm_status_t st;
    if (t->kind == DPM_TUPLE_MR) {
        /* Harmony: Bernoulli(metric) = Bernoulli((1 + v) / 2); a flipped group uses v = 0,
         * i.e. a fair coin. Both are drawn, the mask picks one. */
        int b_value = 0;
        uint64_t b_half = 0;
        int reported = 0;
        st = dpm_bernoulli(r, x->num, x->den, &b_value);
        if (st == DPM_OK) {
            st = dpm_rand_bits(r, 1, &b_half);
        }
        if (st == DPM_OK) {
            uint32_t bit = ((uint32_t)b_value & kept_mask) | ((uint32_t)b_half & ~kept_mask);
            st = dpm_rr_perturb(&t->value.rr, r, (int)bit, &reported);
        }
        if (st == DPM_OK) {
            *out = 2 * reported - 1;
        }
        return st;
    }
#if DPM_MECH_TUPLE_ML
    int64_t v = 0;
    int64_t noised = 0;
    st = dpm_tuple_round_to_grid(r, x, t->frac_bits, &v);
    if (st == DPM_OK) {
        v &= -(int64_t)(kept_mask & 1u); /* flipped: the value becomes 0 */
        st = dpm_laplace_add(&t->value.lap, r, v, &noised);
    }
    if (st == DPM_OK && (noised > INT32_MAX || noised < -INT32_MAX)) {
        st = DPM_ERR_RANGE; /* probability < 2^-45: see dpm_tuple_perturb */
    }
    if (st == DPM_OK) {
        *out = (int32_t)noised;
    }
#else
    st = DPM_ERR_UNSUPPORTED; /* never reached: no tuple_ml campaign initializes */
#endif
    return st;
}

dpm_status_t dpm_tuple_perturb(const dpm_tuple_t *t, dpm_rand_t *r, uint32_t group,
                               const dpm_ratio_t *values, dpm_tuple_report_t *out)
{
    if (t == NULL || r == NULL || values == NULL || out == NULL || group >= t->groups) {
        return DPM_ERR_PARAM;
    }
    for (uint32_t i = 0; i < t->nmetrics; i++) {
        if (!ratio_valid(&values[i])) {
            return DPM_ERR_PARAM;
        }
    }
    dpm_tuple_report_t report;
    memset(&report, 0, sizeof(report));
    dpm_status_t st = dpm_grr_perturb(&t->group_grr, r, group, &report.group);
    /* all-ones when the group was kept, without a branch on it */
    uint32_t diff = report.group ^ group;
    uint32_t kept_mask = ((diff | (0u - diff)) >> 31) - 1u;
    for (uint32_t i = 0; i < t->nmetrics && st == DPM_OK; i++) {
        st = perturb_value(t, r, &values[i], kept_mask, &report.value[i]);
    }
    if (st != DPM_OK) {
        return st;
    }
    report.nmetrics = t->nmetrics;
    *out = report;
    return DPM_OK;
}

/* ---- the tuple mechanisms' ops (mech/mech_ops.h) --------------------------------------------- */

#if DPM_MECH_TUPLE
/* report.h's bound covers the tuple body too: header, 1 tag + 1 length byte, the body. */
typedef char report_fits_tuple[43u + 2u + dpm_v1_TupleBody_size <= DPM_REPORT_MAX_BYTES ? 1 : -1];
typedef char
    values_fit[DPM_ARRAY_LEN(((dpm_v1_TupleBody *)0)->values) >= DPM_TUPLE_MAX_METRICS ? 1 : -1];

static int is_tuple(dpm_mech_id_t id)
{
    return id == DPM_MECH_ID_TUPLE_MR || (DPM_MECH_TUPLE_ML && id == DPM_MECH_ID_TUPLE_ML);
}

static uint32_t tuple_params_hash(const dpm_tuple_t *t)
{
    uint32_t h = DPM_FNV_INIT;
    h = dpm_fnv_word(h, (uint32_t)t->kind);
    h = dpm_fnv_word(h, t->groups);
    h = dpm_fnv_word(h, t->nmetrics);
    for (uint32_t i = 0; i < t->nmetrics; i++) {
        h = dpm_fnv_word(h, (uint32_t)t->metrics[i]);
    }
    h = dpm_fnv_word(h, t->group_grr.keep);
    h = dpm_fnv_word(h, t->group_grr.other);
    if (t->kind == DPM_TUPLE_MR) {
        h = dpm_fnv_word(h, t->value.rr.keep);
        h = dpm_fnv_word(h, t->value.rr.other);
    } else {
        h = dpm_fnv_word(h, t->frac_bits);
        h = dpm_fnv_u64(h, t->value.lap.scale_num);
        h = dpm_fnv_u64(h, t->value.lap.scale_den);
    }
    return dpm_fnv_word(h, t->eps_implemented);
}

dpm_status_t dpm_tuple_mech_init(dpm_mech_t *next, const dpm_campaign_t *c, const char **reason)
{
    if (c->mechanism == DPM_MECH_ID_TUPLE_ML && c->frac_bits != DPM_FRAC_BITS) {
        return dpm_mech_fail(reason, "value grid (frac_bits) differs from this build's",
                             DPM_ERR_PARAM);
    }
    dpm_tuple_kind_t kind = c->mechanism == DPM_MECH_ID_TUPLE_MR ? DPM_TUPLE_MR : DPM_TUPLE_ML;
    dpm_status_t st = /* next is dpm_mech_init's scratch: built in place */
        tuple_build(&next->params.tuple, kind, c->groups, c->metrics, c->nmetrics, c->eps.q16);
    if (st != DPM_OK) {
        return dpm_mech_fail(reason,
                             st == DPM_ERR_RANGE
                                 ? "epsilon too small or too large for the mechanism"
                                 : "groups or metrics out of range",
                             st);
    }
    next->eps_implemented = next->params.tuple.eps_implemented;
    next->params_hash = tuple_params_hash(&next->params.tuple);
    return DPM_OK;
}

int dpm_tuple_body_ok(const dpm_report_t *r)
{
    return is_tuple(r->mechanism) && r->body.tuple.nmetrics <= DPM_TUPLE_MAX_METRICS;
}

/* The field numbers written here must be those of the generated descriptor. */
typedef char
    body_tags[dpm_v1_TupleBody_group_tag == 1 && dpm_v1_TupleBody_values_tag == 2 ? 1 : -1];

/* The tuple body as Report field 10, as pb_encode writes it (proto3: group omitted when 0;
 * values packed sint32, omitted when none), straight into the buffer: a fixed layout needs no
 * descriptor walk nor stream (issue 32: a tuple report links none of nanopb's encoder, and
 * its whole encoding takes about a third of the instructions). test_tuple_encoder checks the
 * bytes against pb_encode on a random corpus. */
void dpm_tuple_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    const dpm_tuple_report_t *t = &r->body.tuple;
    uint32_t values = 0;
    for (uint32_t i = 0; i < t->nmetrics; i++) {
        values += dpm_wire_varint_len(dpm_wire_zigzag(t->value[i]));
    }
    uint32_t body = t->group == 0 ? 0u : 1u + dpm_wire_varint_len(t->group);
    body += t->nmetrics == 0 ? 0u : 1u + dpm_wire_varint_len(values) + values;
    dpm_wire_tag(w, dpm_v1_Report_tuple_tag, DPM_WIRE_BYTES);
    dpm_wire_varint(w, body);
    dpm_wire_uint_field(w, dpm_v1_TupleBody_group_tag, t->group);
    if (t->nmetrics > 0) {
        dpm_wire_tag(w, dpm_v1_TupleBody_values_tag, DPM_WIRE_BYTES);
        dpm_wire_varint(w, values);
        for (uint32_t i = 0; i < t->nmetrics; i++) {
            dpm_wire_varint(w, dpm_wire_zigzag(t->value[i]));
        }
    }
}

int dpm_tuple_wire_fits(const dpm_v1_Report *msg)
{
    return msg->which_body == dpm_v1_Report_tuple_tag && is_tuple((dpm_mech_id_t)msg->mechanism) &&
           msg->body.tuple.values_count <= DPM_TUPLE_MAX_METRICS;
}

void dpm_tuple_wire_read(const dpm_v1_Report *msg, dpm_report_t *out)
{
    const dpm_v1_TupleBody *w = &msg->body.tuple;
    out->body.tuple.group = w->group;
    out->body.tuple.nmetrics = w->values_count;
    for (uint32_t i = 0; i < w->values_count; i++) {
        out->body.tuple.value[i] = w->values[i];
    }
}

dpm_status_t dpm_tuple_check_report(const dpm_mech_t *m, const dpm_report_t *r, const char **reason)
{
    const dpm_tuple_t *t = &m->params.tuple;
    if (r->body.tuple.nmetrics != t->nmetrics) {
        return dpm_mech_fail(reason, "wrong number of values", DPM_ERR_PROTOCOL);
    }
    if (r->body.tuple.group >= t->groups) {
        return dpm_mech_fail(reason, "group out of range", DPM_ERR_PROTOCOL);
    }
    for (uint32_t i = 0; i < r->body.tuple.nmetrics; i++) {
        int32_t v = r->body.tuple.value[i];
        if ((t->kind == DPM_TUPLE_MR && v != 1 && v != -1) ||
            (t->kind == DPM_TUPLE_ML && v == INT32_MIN)) {
            return dpm_mech_fail(reason, "value out of range", DPM_ERR_PROTOCOL);
        }
    }
    return DPM_OK;
}

dpm_status_t dpm_mech_report_tuple(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                   const dpm_receipt_t *rc, uint32_t group,
                                   const dpm_ratio_t *values, dpm_report_t *out)
{
    if (m == NULL || r == NULL || out == NULL || !is_tuple(m->campaign.mechanism) ||
        !dpm_receipt_ok(m, iss, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_tuple_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_tuple_perturb(&m->params.tuple, r, group, values, &body);
    return dpm_mech_report_finish(m, r, iss, rc, st, &body, sizeof(body), out);
}

const char *dpm_tuple_input_problem(const dpm_mech_t *m, uint32_t group,
                                    const dpm_confusion_t *conf, dpm_ratio_t *values,
                                    dpm_status_t *st)
{
    *st = DPM_ERR_PARAM;
    if (group >= m->params.tuple.groups || m->params.tuple.nmetrics > DPM_TUPLE_MAX_METRICS) {
        return "group >= the campaign's groups";
    }
    for (uint32_t i = 0; i < m->params.tuple.nmetrics; i++) {
        *st = dpm_metric_ratio(conf, m->params.tuple.metrics[i], &values[i]);
        if (*st != DPM_OK) {
            return "a metric is undefined on these counts (zero denominator)";
        }
    }
    return NULL;
}

#else  /* !DPM_MECH_TUPLE: the typed entries stay and refuse */

const char *dpm_tuple_input_problem(const dpm_mech_t *m, uint32_t group,
                                    const dpm_confusion_t *conf, dpm_ratio_t *values,
                                    dpm_status_t *st)
{
    (void)m, (void)group, (void)conf, (void)values;
    *st = DPM_ERR_UNSUPPORTED;
    return dpm_mech_absent_reason(DPM_MECH_ID_TUPLE_MR);
}

int dpm_tuple_body_ok(const dpm_report_t *r)
{
    (void)r;
    return 0;
}

void dpm_tuple_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    (void)r;
    w->ok = 0;
}

dpm_status_t dpm_mech_report_tuple(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                   const dpm_receipt_t *rc, uint32_t group,
                                   const dpm_ratio_t *values, dpm_report_t *out)
{
    (void)m, (void)r, (void)iss, (void)rc, (void)group, (void)values, (void)out;
    return DPM_ERR_UNSUPPORTED;
}
#endif /* DPM_MECH_TUPLE */
