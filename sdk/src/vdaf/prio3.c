/* SPDX-License-Identifier: Apache-2.0 */
/* Prio3's public calls (dpm/expert/vdaf.h): the instances and their sizes, the argument checks, the
 * encoding of measurements (field-independent: every encoded element is 0, 1 or 2), then the
 * field's implementation (prio3_impl.h, instantiated per field: direct calls chosen by the
 * instance's field size). */
#include "dpm_internal.h"

#include "dpm/expert/vdaf.h"
#include "vdaf/field.h"
#include "vdaf/vdaf_internal.h"

#if DPM_VDAF

#define MAX_BYTES 0x7FFFFFFFu /* every message and buffer size fits an int32 */

const struct dpm_prio3_ops dpm_prio3_field64 = {8}, dpm_prio3_field128 = {16};

#if !DPM_VDAF_FIELD64
/* Built without the Field64 variants (DPM_VDAF_FIELD64 0): their inits refuse, so no instance
 * has 8-byte elements and these are never reached; they keep the dispatch in one piece. */
void dpm_prio3_shard_f64(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                         const uint8_t *meas, const uint8_t *nonce, const uint8_t *rand,
                         const dpm_prio3_shard_out_t *out, uint64_t *work)
{
    (void)v, (void)ctx, (void)ctx_len, (void)meas, (void)nonce, (void)rand, (void)out, (void)work;
}
dpm_status_t dpm_prio3_verify_init_f64(const dpm_prio3_t *v, const uint8_t *verify_key,
                                       const uint8_t *ctx, size_t ctx_len, uint32_t agg_id,
                                       const uint8_t *nonce, const uint8_t *public_share,
                                       const uint8_t *input_share, uint8_t *state,
                                       uint8_t *verifier_share, uint64_t *work)
{
    (void)v, (void)verify_key, (void)ctx, (void)ctx_len, (void)agg_id, (void)nonce;
    (void)public_share, (void)input_share, (void)state, (void)verifier_share, (void)work;
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_to_message_f64(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                                      const uint8_t *verifier_shares, uint8_t *message,
                                      uint64_t *work)
{
    (void)v, (void)ctx, (void)ctx_len, (void)verifier_shares, (void)message, (void)work;
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_aggregate_f64(const dpm_prio3_t *v, uint8_t *agg_share, const uint8_t *share)
{
    (void)v, (void)agg_share, (void)share;
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_unshard_f64(const dpm_prio3_t *v, const uint8_t *agg_shares,
                                   uint64_t *result)
{
    (void)v, (void)agg_shares, (void)result;
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_add_noise_f64(const dpm_prio3_t *v, uint8_t *agg_share, const int64_t *noise)
{
    (void)v, (void)agg_share, (void)noise;
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_unshard_signed_f64(const dpm_prio3_t *v, const uint8_t *agg_shares,
                                          int64_t *result)
{
    (void)v, (void)agg_shares, (void)result;
    return DPM_ERR_UNSUPPORTED;
}
#endif

static int field128(const dpm_prio3_t *v)
{
    return v->field_bytes == 16u;
}

void dpm_prio3_shard_encoded(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                             const uint8_t *meas, const uint8_t *nonce, const uint8_t *rand,
                             const dpm_prio3_shard_out_t *out, uint64_t *work)
{
    if (field128(v)) {
        dpm_prio3_shard_f128(v, ctx, ctx_len, meas, nonce, rand, out, work);
    } else {
        dpm_prio3_shard_f64(v, ctx, ctx_len, meas, nonce, rand, out, work);
    }
}

static uint64_t next_pow2(uint64_t x)
{
    uint64_t p = 1;
    while (p < x) {
        p *= 2u;
    }
    return p;
}

static uint32_t bit_length(uint64_t x)
{
    uint32_t n = 0;
    while (n < 64u && (x >> n) != 0) {
        n++;
    }
    return n;
}

/* Fill the derived lengths and sizes from the circuit's parameters (set by the caller:
 * kind, field_bytes, shares, proofs, length, chunk_length, bits, max_measurement, meas_len,
 * output_len, joint_rand_len, eval_output_len, arity, degree, calls, the field, id). */
static dpm_status_t finish(dpm_prio3_t *out, dpm_prio3_t *v)
{
    if (v->shares < 2u || v->proofs < 1u || v->meas_len < 1u ||
        v->meas_len > DPM_PRIO3_MAX_MEAS_LEN || v->calls < 1u ||
        v->calls > DPM_PRIO3_MAX_MEAS_LEN || v->arity > 2u * DPM_PRIO3_MAX_MEAS_LEN) {
        return DPM_ERR_PARAM;
    }
    const uint64_t fb = v->field_bytes, seed = DPM_PRIO3_SEED_BYTES, fw = fb / 8u;
    const int joint = v->joint_rand_len > 0;
    const uint64_t p = next_pow2((uint64_t)v->calls + 1u);
    const uint64_t glen = (uint64_t)v->degree * (p - 1u) + 1u;
    const uint64_t n = next_pow2(glen);
    const uint64_t proof_len = v->arity + glen;
    const uint64_t qrl = 1u + (v->eval_output_len > 1u ? v->eval_output_len : 0u);
    const uint64_t jrb = joint ? seed : 0u;
    const uint64_t sizes[10] = {
        (joint ? 2u : 1u) * seed * v->shares,
        joint ? seed * v->shares : 0u,
        fb * (v->meas_len + proof_len * v->proofs) + jrb,
        seed + jrb,
        fb * (v->arity + 2u) * v->proofs + jrb,
        jrb,
        fb * v->output_len,
        fb * v->output_len + jrb,
        (uint64_t)2u * DPM_VDAF_XOF_WORDS + (v->meas_len + 7u) / 8u +
            fw * (2u * (uint64_t)v->calls + 4u * n + 2u * p),
        (uint64_t)3u * DPM_VDAF_XOF_WORDS +
            fw * (2u * (uint64_t)v->meas_len + 3u + proof_len + v->calls + n + p + v->arity)};
    for (size_t i = 0; i < DPM_ARRAY_LEN(sizes); i++) {
        if (sizes[i] > MAX_BYTES) {
            return DPM_ERR_PARAM;
        }
    }
    v->wire_len = (uint32_t)p;
    v->gadget_len = (uint32_t)glen;
    v->domain = (uint32_t)n;
    v->proof_len = (uint32_t)proof_len;
    v->verifier_len = v->arity + 2u;
    v->prove_rand_len = v->arity;
    v->query_rand_len = (uint32_t)qrl;
    v->rand_bytes = (uint32_t)sizes[0];
    v->public_share_bytes = (uint32_t)sizes[1];
    v->leader_share_bytes = (uint32_t)sizes[2];
    v->helper_share_bytes = (uint32_t)sizes[3];
    v->verifier_share_bytes = (uint32_t)sizes[4];
    v->verifier_message_bytes = (uint32_t)sizes[5];
    v->out_share_bytes = (uint32_t)sizes[6];
    v->state_bytes = (uint32_t)sizes[7];
    v->shard_work_words = (uint32_t)sizes[8];
    v->verify_work_words = (uint32_t)sizes[9];
    *out = *v;
    return DPM_OK;
}

static void base(dpm_prio3_t *v, dpm_prio3_kind_t kind, uint32_t shares,
                 const struct dpm_prio3_ops *field)
{
    memset(v, 0, sizeof(*v));
    v->kind = (uint8_t)kind;
    v->id = kind <= DPM_PRIO3_MULTIHOT ? (uint32_t)kind : DPM_PRIO3_ID_PRIVATE;
    v->field_bytes = field->field_bytes;
    v->ops = field;
    v->shares = (uint8_t)(shares > 255u ? 0u : shares); /* 0: refused by finish */
    v->proofs = 1;
    v->length = 1;
    v->eval_output_len = 1;
    v->output_len = 1;
    v->degree = 2;
}

/* ParallelSum(Mul, chunk) over meas_len elements with one joint randomness element per call. */
static void parallel_sum(dpm_prio3_t *v, uint32_t chunk_length)
{
    v->chunk_length = chunk_length;
    v->arity = 2u * chunk_length;
    v->calls = (v->meas_len + chunk_length - 1u) / chunk_length;
    v->joint_rand_len = v->calls;
}

dpm_status_t dpm_prio3_count_init(dpm_prio3_t *v, uint32_t shares)
{
    if (!DPM_VDAF_FIELD64) {
        return DPM_ERR_UNSUPPORTED; /* compiled out */
    }
    if (v == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_prio3_t t;
    base(&t, DPM_PRIO3_COUNT, shares, &dpm_prio3_field64);
    t.max_measurement = 1;
    t.bits = 1;
    t.meas_len = 1;
    t.arity = 2; /* Mul(m, m) */
    t.calls = 1;
    return finish(v, &t);
}

dpm_status_t dpm_prio3_sum_init(dpm_prio3_t *v, uint32_t shares, uint64_t max_measurement)
{
    if (!DPM_VDAF_FIELD64) {
        return DPM_ERR_UNSUPPORTED; /* compiled out */
    }
    if (v == NULL || max_measurement == 0 || max_measurement >= F64_P) {
        return DPM_ERR_PARAM;
    }
    dpm_prio3_t t;
    base(&t, DPM_PRIO3_SUM, shares, &dpm_prio3_field64);
    t.max_measurement = max_measurement;
    t.bits = bit_length(max_measurement);
    t.meas_len = t.bits;
    t.eval_output_len = t.bits;
    t.arity = 1; /* PolyEval(x^2 - x) on every bit */
    t.calls = t.bits;
    return finish(v, &t);
}

static dpm_status_t sumvec(dpm_prio3_t *v, dpm_prio3_kind_t kind, const struct dpm_prio3_ops *field,
                           uint32_t shares, uint32_t proofs, uint32_t length,
                           uint64_t max_measurement, uint32_t chunk_length)
{
    const int f128 = kind == DPM_PRIO3_SUMVEC;
    if (v == NULL || length == 0 || max_measurement == 0 || chunk_length == 0 || proofs == 0 ||
        proofs > 255u || (!f128 && max_measurement >= F64_P)) {
        return DPM_ERR_PARAM;
    }
    uint32_t bits = bit_length(max_measurement);
    if ((uint64_t)length * bits > DPM_PRIO3_MAX_MEAS_LEN || chunk_length > DPM_PRIO3_MAX_MEAS_LEN) {
        return DPM_ERR_PARAM;
    }
    dpm_prio3_t t;
    base(&t, kind, shares, field);
    t.proofs = (uint8_t)proofs;
    t.length = length;
    t.max_measurement = max_measurement;
    t.bits = bits;
    t.meas_len = length * bits;
    t.output_len = length;
    parallel_sum(&t, chunk_length);
    return finish(v, &t);
}

dpm_status_t dpm_prio3_sumvec_init(dpm_prio3_t *v, uint32_t shares, uint32_t length,
                                   uint64_t max_measurement, uint32_t chunk_length)
{
    return sumvec(v, DPM_PRIO3_SUMVEC, &dpm_prio3_field128, shares, 1, length, max_measurement,
                  chunk_length);
}

dpm_status_t dpm_prio3_sumvec_multiproof_init(dpm_prio3_t *v, uint32_t shares, uint32_t proofs,
                                              uint32_t length, uint64_t max_measurement,
                                              uint32_t chunk_length)
{
    if (!DPM_VDAF_FIELD64) {
        return DPM_ERR_UNSUPPORTED; /* compiled out */
    }
    return sumvec(v, DPM_PRIO3_SUMVEC_MULTIPROOF, &dpm_prio3_field64, shares, proofs, length,
                  max_measurement, chunk_length);
}

dpm_status_t dpm_prio3_histogram_init(dpm_prio3_t *v, uint32_t shares, uint32_t length,
                                      uint32_t chunk_length)
{
    if (v == NULL || length == 0 || length > DPM_PRIO3_MAX_MEAS_LEN || chunk_length == 0 ||
        chunk_length > DPM_PRIO3_MAX_MEAS_LEN) {
        return DPM_ERR_PARAM;
    }
    dpm_prio3_t t;
    base(&t, DPM_PRIO3_HISTOGRAM, shares, &dpm_prio3_field128);
    t.length = length;
    t.max_measurement = length - 1u;
    t.meas_len = length;
    t.output_len = length;
    t.eval_output_len = 2; /* range check, sum check */
    parallel_sum(&t, chunk_length);
    return finish(v, &t);
}

dpm_status_t dpm_prio3_multihot_init(dpm_prio3_t *v, uint32_t shares, uint32_t length,
                                     uint32_t max_weight, uint32_t chunk_length)
{
    if (!DPM_VDAF_MULTIHOT) {
        return DPM_ERR_UNSUPPORTED; /* compiled out */
    }
    if (v == NULL || length == 0 || length > DPM_PRIO3_MAX_MEAS_LEN - 32u || max_weight == 0 ||
        max_weight > length || chunk_length == 0 || chunk_length > DPM_PRIO3_MAX_MEAS_LEN) {
        return DPM_ERR_PARAM;
    }
    dpm_prio3_t t;
    base(&t, DPM_PRIO3_MULTIHOT, shares, &dpm_prio3_field128);
    t.length = length;
    t.max_measurement = max_weight;
    t.bits = bit_length(max_weight);
    t.meas_len = length + t.bits;
    t.output_len = length;
    t.eval_output_len = 2; /* range check, weight check */
    parallel_sum(&t, chunk_length);
    return finish(v, &t);
}

dpm_status_t dpm_prio3_higher_degree_init(dpm_prio3_t *v, uint32_t shares)
{
    if (!DPM_VDAF_FIELD64) {
        return DPM_ERR_UNSUPPORTED; /* compiled out */
    }
    if (v == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_prio3_t t;
    base(&t, DPM_PRIO3_HIGHER_DEGREE, shares, &dpm_prio3_field64);
    t.max_measurement = 2;
    t.meas_len = 1;
    t.arity = 1; /* PolyEval(x^3 - 3x^2 + 2x) */
    t.degree = 3;
    t.calls = 1;
    return finish(v, &t);
}

/* ---- measurements, encoded without branching on them ------------------------------------------
 */

static uint64_t lt_u64(uint64_t a, uint64_t b) /* 1 if a < b */
{
    return ct_borrow(a, b, a - b);
}

/* encode_range_checked_int: bits - 1 binary digits of `rest` and a last element saying whether
 * the last weight max - (2^(bits-1) - 1) was taken out. Returns 1 if value > max. */
/* The range check's bits of value (or only its verdict when out is NULL). */
static uint64_t range_encode(uint64_t value, uint64_t max, uint32_t bits, uint8_t *out)
{
    if (out != NULL) { /* public: the caller's choice */
        const uint64_t all_ones = (UINT64_C(1) << (bits - 1u)) - 1u;
        const uint64_t big = lt_u64(all_ones, value);
        const uint64_t rest = value - ((max - all_ones) & ((uint64_t)0 - big));
        for (uint32_t l = 0; l + 1u < bits; l++) {
            out[l] = (uint8_t)((rest >> l) & 1u);
        }
        out[bits - 1u] = (uint8_t)big;
    }
    return lt_u64(max, value);
}

/* The measurement as encoded elements (one byte each) in `m` (not written if NULL); nonzero
 * if it does not fit. */
static uint64_t encode(const dpm_prio3_t *v, const uint64_t *x, uint8_t *m)
{
    uint64_t bad = 0;
    switch (v->kind) { /* a variant compiled out has no instance: its case is left empty */
    case DPM_PRIO3_COUNT:
    case DPM_PRIO3_HIGHER_DEGREE:
        if (!DPM_VDAF_FIELD64) {
            break;
        }
        if (m != NULL) {
            m[0] = (uint8_t)(x[0] & 3u);
        }
        bad = lt_u64(v->max_measurement, x[0]);
        break;
    case DPM_PRIO3_SUM:
        if (DPM_VDAF_FIELD64) {
            bad = range_encode(x[0], v->max_measurement, v->bits, m);
        }
        break;
    case DPM_PRIO3_SUMVEC:
    case DPM_PRIO3_SUMVEC_MULTIPROOF:
        for (uint32_t q = 0; q < v->length; q++) {
            bad |= range_encode(x[q], v->max_measurement, v->bits,
                                m != NULL ? m + (size_t)q * v->bits : NULL);
        }
        break;
    case DPM_PRIO3_HISTOGRAM: /* one-hot: m[e] = (e == index) */
        for (uint32_t e = 0; m != NULL && e < v->length; e++) {
            uint64_t d = x[0] ^ e;
            m[e] = (uint8_t)(1u ^ (((d | ((uint64_t)0 - d)) >> 63) & 1u));
        }
        bad = lt_u64(v->max_measurement, x[0]);
        break;
    default: { /* MultihotCountVec: the booleans, then their number range-checked */
        if (!DPM_VDAF_MULTIHOT) {
            break;
        }
        uint64_t weight = 0;
        for (uint32_t e = 0; e < v->length; e++) {
            if (m != NULL) {
                m[e] = (uint8_t)(x[e] & 1u);
            }
            bad |= x[e] >> 1;
            weight += x[e] & 1u;
        }
        bad |= range_encode(weight, v->max_measurement, v->bits, m != NULL ? m + v->length : NULL);
        break;
    }
    }
    return bad;
}

uint64_t dpm_prio3_measurement_bad(const dpm_prio3_t *v, const uint64_t *measurement)
{
    return encode(v, measurement, NULL);
}

/* ---- the public calls -------------------------------------------------------------------------
 */

static int ctx_ok(const uint8_t *ctx, size_t ctx_len)
{
    return (ctx != NULL || ctx_len == 0) && ctx_len <= DPM_PRIO3_MAX_CTX_BYTES;
}

dpm_status_t dpm_prio3_shard(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                             const uint64_t *measurement, size_t count,
                             const uint8_t nonce[DPM_PRIO3_NONCE_BYTES], const uint8_t *rand,
                             size_t rand_len, const dpm_prio3_shard_out_t *out, uint64_t *work,
                             size_t work_words)
{
    if (v == NULL || v->ops == NULL || !ctx_ok(ctx, ctx_len) || measurement == NULL ||
        nonce == NULL || rand == NULL || rand_len != v->rand_bytes || out == NULL || work == NULL ||
        out->leader_share == NULL || out->helper_shares == NULL ||
        (v->public_share_bytes > 0 && out->public_share == NULL)) {
        return DPM_ERR_PARAM;
    }
    const int vector = v->kind == DPM_PRIO3_SUMVEC || v->kind == DPM_PRIO3_SUMVEC_MULTIPROOF ||
                       v->kind == DPM_PRIO3_MULTIHOT;
    if (count != (vector ? v->length : 1u)) {
        return DPM_ERR_PARAM;
    }
    if (out->public_share_len < v->public_share_bytes ||
        out->leader_share_len < v->leader_share_bytes ||
        out->helper_shares_len < (size_t)(v->shares - 1u) * v->helper_share_bytes ||
        work_words < v->shard_work_words) {
        return DPM_ERR_BUFFER;
    }
    uint8_t *m = (uint8_t *)(void *)(work + (size_t)2u * DPM_VDAF_XOF_WORDS);
    uint64_t bad = encode(v, measurement, m);
    DPM_CT_DECLASSIFY(bad); /* the measurement's validity: the status says it */
    if (bad != 0) {
        memset(m, 0, v->meas_len);
        return DPM_ERR_PARAM;
    }
    dpm_prio3_shard_encoded(v, ctx, ctx_len, m, nonce, rand, out, work);
    memset(m, 0, v->meas_len);
    return DPM_OK;
}

dpm_status_t dpm_prio3_verify_init(const dpm_prio3_t *v,
                                   const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES],
                                   const uint8_t *ctx, size_t ctx_len, uint32_t agg_id,
                                   const uint8_t nonce[DPM_PRIO3_NONCE_BYTES],
                                   const uint8_t *public_share, size_t public_share_len,
                                   const uint8_t *input_share, size_t input_share_len,
                                   uint8_t *state, size_t state_len, uint8_t *verifier_share,
                                   size_t verifier_share_len, uint64_t *work, size_t work_words)
{
    if (v == NULL || v->ops == NULL || verify_key == NULL || !ctx_ok(ctx, ctx_len) ||
        agg_id >= v->shares || nonce == NULL || input_share == NULL || state == NULL ||
        verifier_share == NULL || work == NULL) {
        return DPM_ERR_PARAM;
    }
    if (public_share_len != v->public_share_bytes ||
        (public_share == NULL && public_share_len > 0) ||
        input_share_len != (agg_id == 0 ? v->leader_share_bytes : v->helper_share_bytes)) {
        return DPM_ERR_PROTOCOL;
    }
    if (state_len < v->state_bytes || verifier_share_len < v->verifier_share_bytes ||
        work_words < v->verify_work_words) {
        return DPM_ERR_BUFFER;
    }
    if (field128(v)) {
        return dpm_prio3_verify_init_f128(v, verify_key, ctx, ctx_len, agg_id, nonce, public_share,
                                          input_share, state, verifier_share, work);
    }
    return dpm_prio3_verify_init_f64(v, verify_key, ctx, ctx_len, agg_id, nonce, public_share,
                                     input_share, state, verifier_share, work);
}

dpm_status_t dpm_prio3_verifier_shares_to_message(const dpm_prio3_t *v, const uint8_t *ctx,
                                                  size_t ctx_len, const uint8_t *verifier_shares,
                                                  size_t verifier_shares_len, uint8_t *message,
                                                  size_t message_len, uint64_t *work,
                                                  size_t work_words)
{
    if (v == NULL || v->ops == NULL || !ctx_ok(ctx, ctx_len) || verifier_shares == NULL ||
        work == NULL || (message == NULL && v->verifier_message_bytes > 0)) {
        return DPM_ERR_PARAM;
    }
    if (verifier_shares_len != (size_t)v->shares * v->verifier_share_bytes) {
        return DPM_ERR_PROTOCOL;
    }
    if (message_len < v->verifier_message_bytes || work_words < v->verify_work_words) {
        return DPM_ERR_BUFFER;
    }
    return field128(v) ? dpm_prio3_to_message_f128(v, ctx, ctx_len, verifier_shares, message, work)
                       : dpm_prio3_to_message_f64(v, ctx, ctx_len, verifier_shares, message, work);
}

dpm_status_t dpm_prio3_verify_next(const dpm_prio3_t *v, const uint8_t *state, size_t state_len,
                                   const uint8_t *message, size_t message_len, uint8_t *out_share,
                                   size_t out_share_len)
{
    if (v == NULL || v->ops == NULL || state == NULL || state_len != v->state_bytes ||
        out_share == NULL) {
        return DPM_ERR_PARAM;
    }
    if (message_len != v->verifier_message_bytes || (message == NULL && message_len > 0)) {
        return DPM_ERR_PROTOCOL;
    }
    if (out_share_len < v->out_share_bytes) {
        return DPM_ERR_BUFFER;
    }
    /* the joint randomness seed all aggregators derived must be the one this one computed */
    uint8_t diff = 0;
    for (uint32_t i = 0; i < v->verifier_message_bytes; i++) {
        diff |= (uint8_t)(message[i] ^ state[v->out_share_bytes + i]);
    }
    if (diff != 0) {
        return DPM_ERR_VERIFY;
    }
    memcpy(out_share, state, v->out_share_bytes);
    return DPM_OK;
}

dpm_status_t dpm_prio3_aggregate(const dpm_prio3_t *v, uint8_t *agg_share, size_t agg_share_len,
                                 const uint8_t *share, size_t share_len)
{
    if (v == NULL || v->ops == NULL || agg_share == NULL || share == NULL ||
        agg_share_len != v->out_share_bytes) {
        return DPM_ERR_PARAM;
    }
    if (share_len != v->out_share_bytes) {
        return DPM_ERR_PROTOCOL;
    }
    return field128(v) ? dpm_prio3_aggregate_f128(v, agg_share, share)
                       : dpm_prio3_aggregate_f64(v, agg_share, share);
}

/* The collector's arguments, for both unshards: DPM_OK or why not. */
static dpm_status_t unshard_args(const dpm_prio3_t *v, const uint8_t *agg_shares,
                                 size_t agg_shares_len, const void *result, size_t result_len)
{
    if (v == NULL || v->ops == NULL || agg_shares == NULL || result == NULL) {
        return DPM_ERR_PARAM;
    }
    if (agg_shares_len != (size_t)v->shares * v->out_share_bytes) {
        return DPM_ERR_PROTOCOL;
    }
    return result_len < v->output_len ? DPM_ERR_BUFFER : DPM_OK;
}

dpm_status_t dpm_prio3_unshard(const dpm_prio3_t *v, const uint8_t *agg_shares,
                               size_t agg_shares_len, uint64_t num_measurements, uint64_t *result,
                               size_t result_len)
{
    (void)num_measurements;
    dpm_status_t st = unshard_args(v, agg_shares, agg_shares_len, result, result_len);
    if (st != DPM_OK) {
        return st;
    }
    return field128(v) ? dpm_prio3_unshard_f128(v, agg_shares, result)
                       : dpm_prio3_unshard_f64(v, agg_shares, result);
}

dpm_status_t dpm_prio3_add_noise(const dpm_prio3_t *v, uint8_t *agg_share, size_t agg_share_len,
                                 const int64_t *noise, size_t count)
{
    if (v == NULL || v->ops == NULL || agg_share == NULL || noise == NULL ||
        agg_share_len != v->out_share_bytes || count != v->output_len) {
        return DPM_ERR_PARAM;
    }
    return field128(v) ? dpm_prio3_add_noise_f128(v, agg_share, noise)
                       : dpm_prio3_add_noise_f64(v, agg_share, noise);
}

dpm_status_t dpm_prio3_unshard_signed(const dpm_prio3_t *v, const uint8_t *agg_shares,
                                      size_t agg_shares_len, uint64_t num_measurements,
                                      int64_t *result, size_t result_len)
{
    (void)num_measurements;
    dpm_status_t st = unshard_args(v, agg_shares, agg_shares_len, result, result_len);
    if (st != DPM_OK) {
        return st;
    }
    return field128(v) ? dpm_prio3_unshard_signed_f128(v, agg_shares, result)
                       : dpm_prio3_unshard_signed_f64(v, agg_shares, result);
}

#else /* !DPM_VDAF: every call says the mode is not compiled in */

#define UNUSED(x) (void)(x)

dpm_status_t dpm_prio3_count_init(dpm_prio3_t *v, uint32_t shares)
{
    UNUSED(v), UNUSED(shares);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_sum_init(dpm_prio3_t *v, uint32_t shares, uint64_t max_measurement)
{
    UNUSED(v), UNUSED(shares), UNUSED(max_measurement);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_sumvec_init(dpm_prio3_t *v, uint32_t shares, uint32_t length,
                                   uint64_t max_measurement, uint32_t chunk_length)
{
    UNUSED(v), UNUSED(shares), UNUSED(length), UNUSED(max_measurement), UNUSED(chunk_length);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_histogram_init(dpm_prio3_t *v, uint32_t shares, uint32_t length,
                                      uint32_t chunk_length)
{
    UNUSED(v), UNUSED(shares), UNUSED(length), UNUSED(chunk_length);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_multihot_init(dpm_prio3_t *v, uint32_t shares, uint32_t length,
                                     uint32_t max_weight, uint32_t chunk_length)
{
    UNUSED(v), UNUSED(shares), UNUSED(length), UNUSED(max_weight), UNUSED(chunk_length);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_sumvec_multiproof_init(dpm_prio3_t *v, uint32_t shares, uint32_t proofs,
                                              uint32_t length, uint64_t max_measurement,
                                              uint32_t chunk_length)
{
    UNUSED(v), UNUSED(shares), UNUSED(proofs), UNUSED(length), UNUSED(max_measurement);
    UNUSED(chunk_length);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_higher_degree_init(dpm_prio3_t *v, uint32_t shares)
{
    UNUSED(v), UNUSED(shares);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_shard(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                             const uint64_t *measurement, size_t count,
                             const uint8_t nonce[DPM_PRIO3_NONCE_BYTES], const uint8_t *rand,
                             size_t rand_len, const dpm_prio3_shard_out_t *out, uint64_t *work,
                             size_t work_words)
{
    UNUSED(v), UNUSED(ctx), UNUSED(ctx_len), UNUSED(measurement), UNUSED(count), UNUSED(nonce);
    UNUSED(rand), UNUSED(rand_len), UNUSED(out), UNUSED(work), UNUSED(work_words);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_verify_init(const dpm_prio3_t *v,
                                   const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES],
                                   const uint8_t *ctx, size_t ctx_len, uint32_t agg_id,
                                   const uint8_t nonce[DPM_PRIO3_NONCE_BYTES],
                                   const uint8_t *public_share, size_t public_share_len,
                                   const uint8_t *input_share, size_t input_share_len,
                                   uint8_t *state, size_t state_len, uint8_t *verifier_share,
                                   size_t verifier_share_len, uint64_t *work, size_t work_words)
{
    UNUSED(v), UNUSED(verify_key), UNUSED(ctx), UNUSED(ctx_len), UNUSED(agg_id), UNUSED(nonce);
    UNUSED(public_share), UNUSED(public_share_len), UNUSED(input_share), UNUSED(input_share_len);
    UNUSED(state), UNUSED(state_len), UNUSED(verifier_share), UNUSED(verifier_share_len);
    UNUSED(work), UNUSED(work_words);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_verifier_shares_to_message(const dpm_prio3_t *v, const uint8_t *ctx,
                                                  size_t ctx_len, const uint8_t *verifier_shares,
                                                  size_t verifier_shares_len, uint8_t *message,
                                                  size_t message_len, uint64_t *work,
                                                  size_t work_words)
{
    UNUSED(v), UNUSED(ctx), UNUSED(ctx_len), UNUSED(verifier_shares), UNUSED(verifier_shares_len);
    UNUSED(message), UNUSED(message_len), UNUSED(work), UNUSED(work_words);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_verify_next(const dpm_prio3_t *v, const uint8_t *state, size_t state_len,
                                   const uint8_t *message, size_t message_len, uint8_t *out_share,
                                   size_t out_share_len)
{
    UNUSED(v), UNUSED(state), UNUSED(state_len), UNUSED(message), UNUSED(message_len);
    UNUSED(out_share), UNUSED(out_share_len);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_aggregate(const dpm_prio3_t *v, uint8_t *agg_share, size_t agg_share_len,
                                 const uint8_t *share, size_t share_len)
{
    UNUSED(v), UNUSED(agg_share), UNUSED(agg_share_len), UNUSED(share), UNUSED(share_len);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_unshard(const dpm_prio3_t *v, const uint8_t *agg_shares,
                               size_t agg_shares_len, uint64_t num_measurements, uint64_t *result,
                               size_t result_len)
{
    UNUSED(v), UNUSED(agg_shares), UNUSED(agg_shares_len), UNUSED(num_measurements);
    UNUSED(result), UNUSED(result_len);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_add_noise(const dpm_prio3_t *v, uint8_t *agg_share, size_t agg_share_len,
                                 const int64_t *noise, size_t count)
{
    UNUSED(v), UNUSED(agg_share), UNUSED(agg_share_len), UNUSED(noise), UNUSED(count);
    return DPM_ERR_UNSUPPORTED;
}
dpm_status_t dpm_prio3_unshard_signed(const dpm_prio3_t *v, const uint8_t *agg_shares,
                                      size_t agg_shares_len, uint64_t num_measurements,
                                      int64_t *result, size_t result_len)
{
    UNUSED(v), UNUSED(agg_shares), UNUSED(agg_shares_len), UNUSED(num_measurements);
    UNUSED(result), UNUSED(result_len);
    return DPM_ERR_UNSUPPORTED;
}
#endif /* DPM_VDAF */
