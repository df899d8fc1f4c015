/* SPDX-License-Identifier: Apache-2.0 */
/* Prio3 over one field: sharding, the FLP's prove / query / decide, verification, aggregation
 * and unsharding (draft-irtf-cfrg-vdaf sections "Prio3", "FLP Specification", "Variants").
 * Included once per field by prio3_f64.c and prio3_f128.c, which define FE (the element
 * type), FE_BYTES, FE_LOG_ORDER (log2 of the generator's order), FE_P_MINUS_2, the fe_*
 * operations and PRIO3_FN(name), the name of this field's entry point (name_f64, name_f128:
 * vdaf_internal.h declares them).
 *
 * How the FLP is computed here (same results as the draft's algorithms, less memory):
 *
 *   Every circuit has one gadget, called `calls` times; wire j's polynomial takes its seed at
 *   w^0 and the j-th input of call i at w^(i+1), for w the p-th root of unity (p = wire_len;
 *   zeros after the last call). The gadget polynomial G = gadget(wire polynomials) has degree
 *   degree * (p - 1); a proof carries its values at the first gadget_len powers of W, the
 *   domain-th root of unity (W^step = w, step = domain / p).
 *
 *   Prover: the gadget is a sum over wire pairs (ParallelSum of Mul; Count's Mul is one pair)
 *   or one wire (PolyEval), so G is accumulated one pair at a time: each wire is extended from
 *   its p values to the domain's points (the values at W^(i step) are the wire's own; the
 *   cosets W^j w^i, j = 1..step-1, come from one inverse NTT and one NTT per coset), multiplied
 *   pointwise and added. Memory: O(domain + calls), never arity * p.
 *
 *   Verifier: a gadget output is G(w^(i+1)) = the proof value at index (i+1) step (always one
 *   of the transmitted ones for these circuits); the wire polynomials are evaluated at the
 *   query point t as sum_k L_k(t) * value_k with the Lagrange basis of the p-th roots,
 *   L_k(t) = w^k / p * prod_{m != k} (t - w^m), computed without division (prefix and suffix
 *   products), and likewise G(t) on the domain, after recovering the one value a degree-2
 *   gadget does not transmit from sum_m G(W^m) W^m = 0 (true for any polynomial of degree
 *   below domain - 1).
 *
 * Constant time: loops and indices depend only on the instance's shape; measurement bytes and
 * shares enter arithmetic through masks. Three decisions look at secret-derived values and are
 * public by design, each marked DPM_CT_DECLASSIFY: the XOF's rejection of a candidate >= p (it
 * says only that discarded bytes were large), a received share's "modulus overflow" (the
 * report is malformed), and the query point being a root of unity (probability below 2^-40). */

/* ---- elements in byte buffers and XOF streams ---------------------------------------------- */

static void vec_read(FE *out, const uint8_t *in, size_t n, uint64_t *bad)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = fe_load(in + i * FE_BYTES, bad);
    }
}

/* The next element of an XOF stream (the draft's next_vec): candidates >= p are skipped. */
static FE xof_fe(dpm_xof_t *x)
{
    for (;;) {
        uint8_t b[FE_BYTES];
        uint64_t bad = 0;
        dpm_xof_next(x, b, FE_BYTES);
        FE v = fe_load(b, &bad);
        DPM_CT_DECLASSIFY(bad); /* a rejected candidate is discarded */
        if (bad == 0) {
            return v;
        }
    }
}

static void xof_vec(dpm_xof_t *x, FE *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        out[i] = xof_fe(x);
    }
}

/* a^e for a public exponent given as 64-bit words, most significant first. */
static DPM_NOINLINE FE fe_pow_words(FE a, const uint64_t *e, size_t words)
{
    FE r = fe_one();
    for (size_t w = 0; w < words; w++) {
        for (int bit = 63; bit >= 0; bit--) {
            r = fe_mul(r, r);
            if ((e[w] >> bit) & 1u) { /* public exponent */
                r = fe_mul(r, a);
            }
        }
    }
    return r;
}

static FE fe_inv(FE a)
{
    return fe_pow_words(a, FE_P_MINUS_2, DPM_ARRAY_LEN(FE_P_MINUS_2));
}

/* The principal n-th root of unity gen^(GEN_ORDER / n), n = 2^log2n. */
static FE fe_root(unsigned log2n)
{
    FE r = fe_gen();
    for (unsigned i = log2n; i < FE_LOG_ORDER; i++) {
        fe_mul_to(&r, &r, &r);
    }
    return r;
}

static unsigned log2_u32(uint32_t n) /* n a power of two */
{
    unsigned k = 0;
    while ((1u << k) < n) {
        k++;
    }
    return k;
}

static uint32_t bitrev(uint32_t x, unsigned bits)
{
    uint32_t r = 0;
    for (unsigned i = 0; i < bits; i++) {
        r |= ((x >> i) & 1u) << (bits - 1u - i);
    }
    return r;
}

/* ---- number-theoretic transforms of size p (tw[k] = w^k, w the p-th root of unity) ---------- */

/* In place: y (natural order) -> sum_k y[k] w^(-ik) at position bitrev(i) (unscaled inverse). */
static DPM_NOINLINE void ntt_inverse_dif(FE *y, uint32_t p, const FE *tw)
{
    for (uint32_t len = p / 2u; len >= 1u; len /= 2u) {
        const size_t stride = p / (2u * len);
        for (FE *u = y; u < y + p; u += (size_t)2 * len) {
            fe_bfly(u, u + len); /* twiddle w^0 */
            for (uint32_t j = 1; j < len; j++) {
                fe_bfly(u + j, u + j + len);
                fe_mul_to(u + j + len, u + j + len, tw + (p - j * stride));
            }
        }
    }
}

/* In place: y in bit-reversed order -> sum_k y_k w^(ik) at position i (natural order). */
static DPM_NOINLINE void ntt_forward_dit(FE *y, uint32_t p, const FE *tw)
{
    for (uint32_t len = 1; len < p; len *= 2u) {
        const size_t stride = p / (2u * len);
        for (FE *u = y; u < y + p; u += (size_t)2 * len) {
            fe_bfly(u, u + len);
            for (uint32_t j = 1; j < len; j++) {
                fe_mul_to(u + j + len, u + j + len, tw + j * stride);
                fe_bfly(u + j, u + j + len);
            }
        }
    }
}

/* ---- the circuits --------------------------------------------------------------------------- */

enum { GADGET_MUL_PAIRS, GADGET_POLY }; /* ParallelSum(Mul) (Count: one pair), PolyEval */

/* The circuits a field has: the including file sets PRIO3_ALL_CIRCUITS to 0 when all of its
 * variants are range checks with joint randomness (Field128's SumVec, Histogram and
 * MultihotCountVec), and the PolyEval gadget and the randomness-free Mul (Count) are compiled
 * out of it: dead code a device would otherwise carry. */
static int gadget_kind(const dpm_prio3_t *v)
{
    if (!PRIO3_ALL_CIRCUITS) {
        return GADGET_MUL_PAIRS;
    }
    return (v->kind == DPM_PRIO3_SUM || v->kind == DPM_PRIO3_HIGHER_DEGREE) ? GADGET_POLY
                                                                            : GADGET_MUL_PAIRS;
}

/* The circuit takes joint randomness (every range check; Count's Mul and PolyEval do not). */
static int has_joint(const dpm_prio3_t *v)
{
    return !PRIO3_ALL_CIRCUITS || v->joint_rand_len > 0;
}

/* PolyEval's polynomial at x: Sum's x^2 - x, HigherDegree's x^3 - 3x^2 + 2x = x (x-1) (x-2). */
static FE poly_gadget(const dpm_prio3_t *v, FE x)
{
    FE x2 = fe_mul(x, x);
    if (v->kind == DPM_PRIO3_SUM) {
        return fe_sub(x2, x);
    }
    FE x3 = fe_mul(x2, x);
    return fe_add(fe_sub(x3, fe_mul(fe_small(3), x2)), fe_add(x, x));
}

/* The gadget on its wires' values (the decision's consistency check). */
static FE gadget_eval(const dpm_prio3_t *v, const FE *w)
{
    if (gadget_kind(v) == GADGET_POLY) {
        return poly_gadget(v, w[0]);
    }
    FE acc = fe_zero();
    for (uint32_t c = 0; c < v->arity; c += 2u) {
        acc = fe_add(acc, fe_mul(w[c], w[c + 1u]));
    }
    return acc;
}

/* Range-checked integers (Sum, SumVec, MultihotCountVec's weight): the weights 2^l of the
 * first bits - 1 elements and max - (2^(bits-1) - 1) of the last; sum of weight * element. */
static FE range_value(const FE *m, uint32_t bits, uint64_t max)
{
    FE acc = fe_zero();
    for (uint32_t l = 0; l + 1u < bits; l++) {
        acc = fe_add(acc, fe_mul(fe_small(UINT64_C(1) << l), m[l]));
    }
    uint64_t last_weight = max - ((UINT64_C(1) << (bits - 1u)) - 1u);
    return fe_add(acc, fe_mul(fe_small(last_weight), m[bits - 1u]));
}

/* ---- prove --------------------------------------------------------------------------------- */

typedef struct {
    FE *jr, *rp, *tw, *cs, *gadget, *ext_a, *ext_b, *coef, *tmp;
} prove_work_t;

/* Extend a wire from its p values (ext[i step], i < p) to the whole domain (the cosets). */
static DPM_NOINLINE void extend_wire(const dpm_prio3_t *v, FE *ext, const prove_work_t *w)
{
    const uint32_t p = v->wire_len;
    const size_t step = v->domain / p;
    for (uint32_t i = 0; i < p; i++) {
        w->coef[i] = ext[i * step];
    }
    ntt_inverse_dif(w->coef, p, w->tw);
    for (uint32_t j = 1; j < step; j++) {
        const FE *cs = w->cs + (size_t)(j - 1u) * p;
        for (uint32_t k = 0; k < p; k++) {
            fe_mul_to(w->tmp + k, w->coef + k, cs + k);
        }
        ntt_forward_dit(w->tmp, p, w->tw);
        for (uint32_t i = 0; i < p; i++) {
            ext[i * step + j] = w->tmp[i];
        }
    }
}

/* The twiddles w^k (k < p) and coset factors W^(j bitrev(k)) / p (j = 1..step-1). */
static DPM_NOINLINE void prove_tables(const dpm_prio3_t *v, const prove_work_t *w)
{
    const uint32_t p = v->wire_len, n = v->domain;
    const size_t step = n / p;
    const unsigned logp = log2_u32(p);
    FE wn = fe_root(log2_u32(n)), wp = wn;
    for (uint32_t k = 1; k < step; k *= 2u) {
        fe_mul_to(&wp, &wp, &wp); /* w = W^step */
    }
    w->tw[0] = fe_one();
    for (uint32_t k = 1; k < p; k++) {
        fe_mul_to(w->tw + k, w->tw + k - 1u, &wp);
    }
    FE wj = fe_one();
    for (uint32_t j = 1; j < step; j++) {
        fe_mul_to(&wj, &wj, &wn);
        FE pw = fe_inv_pow2(logp);
        for (uint32_t k = 0; k < p; k++) {
            w->tmp[k] = pw; /* W^(jk) / p */
            fe_mul_to(&pw, &pw, &wj);
        }
        for (uint32_t k = 0; k < p; k++) {
            w->cs[(size_t)(j - 1u) * p + k] = w->tmp[bitrev(k, logp)];
        }
    }
}

/* One proof (the draft's prove) of the encoded measurement `meas` (bytes 0..2) with joint
 * randomness w->jr (calls elements, unused without), its wire seeds drawn from `prove` in
 * order. The proof (proof_len elements) is written encoded to out. */
static DPM_NOINLINE void prove(const dpm_prio3_t *v, const uint8_t *meas, dpm_xof_t *prove_rand,
                               uint8_t *out, const prove_work_t *w)
{
    const uint32_t p = v->wire_len, n = v->domain, calls = v->calls;
    const size_t step = n / p;
    for (uint32_t m = 0; m < n; m++) {
        w->gadget[m] = fe_zero();
    }
    if (gadget_kind(v) == GADGET_POLY) {
        FE seed = xof_fe(prove_rand);
        fe_store(out, seed);
        for (uint32_t k = 0; k < p; k++) { /* seed, the calls' inputs, zeros */
            w->ext_a[k * step] = k == 0 ? seed : k <= calls ? fe_small(meas[k - 1u]) : fe_zero();
        }
        extend_wire(v, w->ext_a, w);
        for (uint32_t m = 0; m < v->gadget_len; m++) {
            w->gadget[m] = poly_gadget(v, w->ext_a[m]);
        }
    } else {
        const int joint = has_joint(v);
        for (uint32_t i = 0; i < calls; i++) {
            w->rp[i] = fe_one();
        }
        for (uint32_t c = 0; 2u * c < v->arity; c++) {
            FE seed_a = xof_fe(prove_rand), seed_b = xof_fe(prove_rand);
            fe_store(out + (size_t)(2u * c) * FE_BYTES, seed_a);
            fe_store(out + (size_t)(2u * c + 1u) * FE_BYTES, seed_b);
            w->ext_a[0] = seed_a;
            w->ext_b[0] = seed_b;
            for (uint32_t i = 0; i < calls; i++) {
                /* Count: both inputs are the measurement. Range checks (SumVec, Histogram,
                 * MultihotCountVec): r_i^(c+1) * m and m - 1/SHARES (1: the prover holds all). */
                uint32_t e = joint ? i * v->chunk_length + c : 0u;
                uint64_t bit = e < v->meas_len ? meas[e] : 0u;
                FE m = fe_small(bit);
                FE a = m, b = m;
                if (joint) {
                    fe_mul_to(w->rp + i, w->rp + i, w->jr + i);
                    a = fe_select((uint64_t)0 - bit, w->rp[i], fe_zero()); /* bit is 0 or 1 */
                    b = fe_sub(m, fe_one());
                }
                w->ext_a[(i + 1u) * step] = a;
                w->ext_b[(i + 1u) * step] = b;
            }
            for (uint32_t k = calls + 1u; k < p; k++) {
                w->ext_a[k * step] = fe_zero();
                w->ext_b[k * step] = fe_zero();
            }
            extend_wire(v, w->ext_a, w);
            extend_wire(v, w->ext_b, w);
            /* A range check's product r^(c+1) m (m - 1) is 0 at every call (m is a bit), and
             * the padding's 0 (0 - 1) too: on w^i, i > 0, the sum stays 0 and only the seeds'
             * product is added. Count's m * m is not: every point is computed. */
            for (uint32_t m = 0; m < v->gadget_len; m++) {
                if (!joint || m == 0 || m % step != 0) { /* public: the shape */
                    FE ab;
                    fe_mul_to(&ab, w->ext_a + m, w->ext_b + m);
                    w->gadget[m] = fe_add(w->gadget[m], ab);
                }
            }
        }
    }
    uint8_t *g = out + (size_t)v->arity * FE_BYTES;
    for (uint32_t m = 0; m < v->gadget_len; m++) {
        fe_store(g + (size_t)m * FE_BYTES, w->gadget[m]);
    }
}

/* ---- shard ---------------------------------------------------------------------------------- */

static FE *fe_area(uint64_t *words)
{
    return (FE *)(void *)words;
}

/* Candidates read from an XOF at once: never more than the elements still needed, so the
 * stream is read exactly as far as the draft's next_vec reads it. */
#define XOF_BATCH 8u

/* buf[i] -= the next element of x, for n encoded elements in place; with `absorb`, each
 * element's encoding (the XOF's accepted bytes) is absorbed there too. */
static void sub_stream(uint8_t *buf, size_t n, dpm_xof_t *x, dpm_xof_t *absorb)
{
    uint8_t cand[XOF_BATCH * FE_BYTES];
    size_t i = 0;
    while (i < n) {
        size_t want = XOF_BATCH, run = 0, start = 0;
        if (n - i < want) {
            want = n - i;
        }
        dpm_xof_next(x, cand, want * FE_BYTES);
        for (size_t k = 0; k < want; k++) {
            uint64_t bad = 0;
            FE h = fe_load(cand + k * FE_BYTES, &bad);
            DPM_CT_DECLASSIFY(bad); /* a rejected candidate is discarded */
            if (bad != 0) {
                if (absorb != NULL && run > 0) {
                    dpm_xof_absorb(absorb, cand + start * FE_BYTES, run * FE_BYTES);
                }
                run = 0;
                start = k + 1u;
                continue;
            }
            uint8_t *e = buf + i * FE_BYTES;
            fe_store(e, fe_sub(fe_load(e, &bad), h)); /* our own canonical encoding */
            run++;
            i++;
        }
        if (absorb != NULL && run > 0) { /* the accepted run, in one piece */
            dpm_xof_absorb(absorb, cand + start * FE_BYTES, run * FE_BYTES);
        }
    }
}

static void shard(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len, const uint8_t *meas,
                  const uint8_t *nonce, const uint8_t *rand, const dpm_prio3_shard_out_t *out,
                  uint64_t *work)
{
    const size_t seed = DPM_PRIO3_SEED_BYTES;
    const int joint = has_joint(v);
    const uint32_t shares = v->shares;
    dpm_xof_t *xa = (dpm_xof_t *)(void *)work, *xb = xa + 1;
    FE *f = fe_area(work + (size_t)2u * DPM_VDAF_XOF_WORDS + (v->meas_len + 7u) / 8u);
    prove_work_t w;
    w.jr = f;
    w.rp = w.jr + v->calls;
    w.tw = w.rp + v->calls;
    w.cs = w.tw + v->wire_len;
    w.gadget = w.cs + (v->domain - v->wire_len);
    w.ext_a = w.gadget + v->domain;
    w.ext_b = w.ext_a + v->domain;
    w.coef = w.ext_b + v->domain;
    w.tmp = w.coef + v->wire_len;

    /* rand = for each helper its share seed (and blind), then the leader's blind, the prove seed */
    const size_t per_helper = joint ? 2u * seed : seed;
    const uint8_t *leader_blind = rand + (shares - 1u) * per_helper;
    const uint8_t *prove_seed = joint ? leader_blind + seed : leader_blind;
    uint8_t *lm = out->leader_share;
    uint8_t *lp = lm + (size_t)v->meas_len * FE_BYTES;
    const size_t proofs_len = (size_t)v->proof_len * v->proofs;

    /* The leader's measurement share: the encoded measurement minus every helper's. */
    for (uint32_t e = 0; e < v->meas_len; e++) {
        fe_store(lm + (size_t)e * FE_BYTES, fe_small(meas[e]));
    }
    for (uint32_t j = 1; j < shares; j++) {
        const uint8_t *share_seed = rand + (j - 1u) * per_helper;
        const uint8_t agg = (uint8_t)j;
        memcpy(out->helper_shares + (size_t)(j - 1u) * v->helper_share_bytes, share_seed,
               per_helper);
        dpm_xof_prio3(xa, share_seed, v->id, PRIO3_USAGE_MEAS_SHARE, ctx, ctx_len);
        dpm_xof_absorb(xa, &agg, 1);
        if (joint) { /* this helper's joint randomness part, from its blind and share */
            dpm_xof_prio3(xb, share_seed + seed, v->id, PRIO3_USAGE_JOINT_RAND_PART, ctx, ctx_len);
            dpm_xof_absorb(xb, &agg, 1);
            dpm_xof_absorb(xb, nonce, DPM_PRIO3_NONCE_BYTES);
        }
        sub_stream(lm, v->meas_len, xa, joint ? xb : NULL);
        if (joint) {
            dpm_xof_next(xb, out->public_share + j * seed, seed);
        }
    }
    uint8_t jr_seed[DPM_PRIO3_SEED_BYTES];
    if (joint) {
        const uint8_t agg = 0;
        dpm_xof_prio3(xb, leader_blind, v->id, PRIO3_USAGE_JOINT_RAND_PART, ctx, ctx_len);
        dpm_xof_absorb(xb, &agg, 1);
        dpm_xof_absorb(xb, nonce, DPM_PRIO3_NONCE_BYTES);
        dpm_xof_absorb(xb, lm, (size_t)v->meas_len * FE_BYTES);
        dpm_xof_next(xb, out->public_share, seed);
        /* the joint randomness seed from all the parts, then the joint randomness stream */
        dpm_xof_prio3(xa, dpm_prio3_zero_seed, v->id, PRIO3_USAGE_JOINT_RAND_SEED, ctx, ctx_len);
        dpm_xof_absorb(xa, out->public_share, shares * seed);
        dpm_xof_next(xa, jr_seed, seed);
        dpm_xof_prio3(xa, jr_seed, v->id, PRIO3_USAGE_JOINT_RANDOMNESS, ctx, ctx_len);
        dpm_xof_absorb(xa, &v->proofs, 1);
    }
    dpm_xof_prio3(xb, prove_seed, v->id, PRIO3_USAGE_PROVE_RANDOMNESS, ctx, ctx_len);
    dpm_xof_absorb(xb, &v->proofs, 1);
    prove_tables(v, &w);
    for (uint32_t k = 0; k < v->proofs; k++) {
        if (joint) {
            xof_vec(xa, w.jr, v->calls);
        }
        prove(v, meas, xb, lp + (size_t)k * v->proof_len * FE_BYTES, &w);
    }
    /* The leader's proofs share: the proofs minus every helper's share of them. */
    for (uint32_t j = 1; j < shares; j++) {
        const uint8_t binder[2] = {v->proofs, (uint8_t)j};
        dpm_xof_prio3(xa, rand + (j - 1u) * per_helper, v->id, PRIO3_USAGE_PROOF_SHARE, ctx,
                      ctx_len);
        dpm_xof_absorb(xa, binder, 2);
        sub_stream(lp, proofs_len, xa, NULL);
    }
    if (joint) {
        memcpy(lp + proofs_len * FE_BYTES, leader_blind, seed);
    }
    memset(jr_seed, 0, sizeof(jr_seed));
}

/* ---- query and decide ---------------------------------------------------------------------- */

/* lam[k] = L_k(t) for the N-th roots of unity (N a power of two, wN the principal N-th
 * root): w^k / N prod_{m != k} (t - w^m), without division (valid for every t). */
static DPM_NOINLINE void lagrange_at(FE t, uint32_t N, FE wN, FE *lam)
{
    FE inv_n = fe_inv_pow2(log2_u32(N));
    FE prefix = fe_one(), wk = fe_one();
    for (uint32_t k = 0; k < N; k++) { /* lam[k] = prod_{m < k} (t - w^m) */
        lam[k] = prefix;
        prefix = fe_mul(prefix, fe_sub(t, wk));
        wk = fe_mul(wk, wN);
    }
    FE w_inv = fe_one(); /* w^(N-1) = w^-1, walked down from k = N - 1 */
    for (uint32_t k = 1; k < N; k++) {
        w_inv = fe_mul(w_inv, wN);
    }
    FE suffix = fe_one(), wback = w_inv; /* w^k for k = N - 1 .. 0 */
    for (uint32_t k = N; k-- > 0;) {
        lam[k] = fe_mul(fe_mul(lam[k], suffix), fe_mul(wback, inv_n));
        suffix = fe_mul(suffix, fe_sub(t, wback));
        wback = fe_mul(wback, w_inv);
    }
}

typedef struct {
    FE *meas, *proof, *jr, *qr, *lam, *tw, *wires;
} query_work_t;

/* The draft's query on a measurement share and a proof share: writes the verifier share
 * (verifier_len elements) encoded to out. t^p = 1 was excluded by the caller. */
static DPM_NOINLINE void query(const dpm_prio3_t *v, FE shares_inv, const query_work_t *w,
                               uint8_t *out)
{
    const uint32_t p = v->wire_len, n = v->domain, calls = v->calls;
    const size_t step = n / p;
    const FE *pf = w->proof, *g = w->proof + v->arity; /* seeds, then gadget values */
    const FE *ms = w->meas;
    FE t = w->qr[v->query_rand_len - 1u];
    /* the circuit's output(s), reduced with the first query randomness when there are several */
    FE out_v, range = fe_zero();
    for (uint32_t i = 0; i < calls; i++) {
        range = fe_add(range, g[(i + 1u) * step]);
    }
    switch (v->kind) {
    case DPM_PRIO3_COUNT: out_v = fe_sub(g[step], ms[0]); break;
    case DPM_PRIO3_SUM:
        if (v->eval_output_len > 1u) {
            out_v = fe_zero();
            for (uint32_t l = 0; l < calls; l++) {
                out_v = fe_add(out_v, fe_mul(w->qr[l], g[(l + 1u) * step]));
            }
        } else {
            out_v = g[step];
        }
        break;
    case DPM_PRIO3_HISTOGRAM: {
        FE sum = fe_neg(shares_inv);
        for (uint32_t e = 0; e < v->meas_len; e++) {
            sum = fe_add(sum, ms[e]);
        }
        out_v = fe_add(fe_mul(w->qr[0], range), fe_mul(w->qr[1], sum));
        break;
    }
    case DPM_PRIO3_MULTIHOT: {
        FE weight = fe_zero();
        for (uint32_t e = 0; e < v->length; e++) {
            weight = fe_add(weight, ms[e]);
        }
        FE check = fe_sub(weight, range_value(ms + v->length, v->bits, v->max_measurement));
        out_v = fe_add(fe_mul(w->qr[0], range), fe_mul(w->qr[1], check));
        break;
    }
    case DPM_PRIO3_HIGHER_DEGREE: out_v = g[step]; break;
    default: out_v = range; break; /* SumVec, SumVecMultiproof */
    }
    /* G(t): complete the domain's values (a degree-2 gadget sends all but the last), then the
     * Lagrange basis of the domain at t */
    FE wn = fe_root(log2_u32(n)), wp = wn;
    for (uint32_t k = 1; k < step; k *= 2u) {
        wp = fe_mul(wp, wp); /* w = W^step */
    }
    lagrange_at(t, n, wn, w->lam);
    FE gt = fe_zero();
    if (v->gadget_len == n) {
        for (uint32_t m = 0; m < n; m++) {
            gt = fe_add(gt, fe_mul(g[m], w->lam[m]));
        }
    } else { /* gadget_len = n - 1: G(W^(n-1)) = -W sum_{m < n-1} G(W^m) W^m */
        FE wm = fe_one(), s = fe_zero();
        for (uint32_t m = 0; m + 1u < n; m++) {
            gt = fe_add(gt, fe_mul(g[m], w->lam[m]));
            s = fe_add(s, fe_mul(g[m], wm));
            wm = fe_mul(wm, wn);
        }
        FE last = fe_neg(fe_mul(wn, s));
        gt = fe_add(gt, fe_mul(last, w->lam[n - 1u]));
    }
    /* the wires at t: their seeds at w^0, the calls' inputs at w^(i+1) */
    lagrange_at(t, p, wp, w->lam);
    FE *wt = w->wires;
    for (uint32_t j = 0; j < v->arity; j++) {
        wt[j] = fe_mul(w->lam[0], pf[j]);
    }
    if (gadget_kind(v) == GADGET_POLY) {
        for (uint32_t i = 0; i < calls; i++) {
            wt[0] = fe_add(wt[0], fe_mul(w->lam[i + 1u], ms[i]));
        }
    } else if (!has_joint(v)) { /* Count: Mul(m, m) */
        wt[0] = fe_add(wt[0], fe_mul(w->lam[1], ms[0]));
        wt[1] = fe_add(wt[1], fe_mul(w->lam[1], ms[0]));
    } else {
        /* wire 2c: sum_i l_i r_i^(c+1) m, with q = l_i r_i^(c+1) carried along c; wire 2c + 1:
         * sum_i l_i (m - 1/shares) = sum_i l_i m - (sum_i l_i) / shares, the second term once
         * per wire: three multiplications an input where there were four */
        FE lsum = fe_zero();
        for (uint32_t i = 0; i < calls; i++) {
            FE r = w->jr[i], li = w->lam[i + 1u], q = fe_mul(li, r);
            lsum = fe_add(lsum, li);
            for (uint32_t c = 0; 2u * c < v->arity; c++) {
                uint32_t e = i * v->chunk_length + c;
                FE m = e < v->meas_len ? ms[e] : fe_zero();
                wt[2u * (size_t)c] = fe_add(wt[2u * (size_t)c], fe_mul(q, m));
                wt[2u * (size_t)c + 1u] = fe_add(wt[2u * (size_t)c + 1u], fe_mul(li, m));
                q = fe_mul(q, r);
            }
        }
        const FE ls = fe_mul(lsum, shares_inv);
        for (uint32_t c = 0; 2u * c < v->arity; c++) {
            wt[2u * (size_t)c + 1u] = fe_sub(wt[2u * (size_t)c + 1u], ls);
        }
    }
    fe_store(out, out_v);
    for (uint32_t j = 0; j < v->arity; j++) {
        fe_store(out + (size_t)(1u + j) * FE_BYTES, wt[j]);
    }
    fe_store(out + (size_t)(1u + v->arity) * FE_BYTES, gt);
}

/* t^p == 1 (0 or 1): the query point is one of the wires' points (the draft's query raises). */
static uint64_t is_wire_root(FE t, uint32_t p)
{
    FE x = t;
    for (uint32_t k = 1; k < p; k *= 2u) {
        x = fe_mul(x, x);
    }
    return fe_is_one(x);
}

/* ---- verification -----------------------------------------------------------------------------
 */

static dpm_status_t verify_init(const dpm_prio3_t *v, const uint8_t *verify_key, const uint8_t *ctx,
                                size_t ctx_len, uint32_t agg_id, const uint8_t *nonce,
                                const uint8_t *public_share, const uint8_t *input_share,
                                uint8_t *state, uint8_t *verifier_share, uint64_t *work)
{
    const size_t seed = DPM_PRIO3_SEED_BYTES;
    const int joint = has_joint(v);
    const uint8_t agg = (uint8_t)agg_id;
    dpm_xof_t *xa = (dpm_xof_t *)(void *)work, *xb = xa + 1, *xc = xa + 2;
    query_work_t w;
    w.meas = fe_area(work + (size_t)3u * DPM_VDAF_XOF_WORDS);
    w.proof = w.meas + v->meas_len;
    w.jr = w.proof + v->proof_len;
    w.qr = w.jr + v->calls;
    w.lam = w.qr + v->query_rand_len;
    w.tw = w.lam + v->domain;
    w.wires = w.tw + v->wire_len;
    const size_t proofs_len = (size_t)v->proof_len * v->proofs;
    const uint8_t *blind;

    /* The measurement share: the leader's is sent, a helper's expanded from its seed. */
    if (agg_id == 0) {
        uint64_t bad = 0;
        vec_read(w.meas, input_share, v->meas_len, &bad);
        for (size_t i = 0; i < proofs_len; i++) {
            (void)fe_load(input_share + ((size_t)v->meas_len + i) * FE_BYTES, &bad);
        }
        DPM_CT_DECLASSIFY(bad); /* a malformed share: the status says it */
        if (bad != 0) {
            return DPM_ERR_PROTOCOL;
        }
        blind = input_share + ((size_t)v->meas_len + proofs_len) * FE_BYTES;
    } else {
        dpm_xof_prio3(xa, input_share, v->id, PRIO3_USAGE_MEAS_SHARE, ctx, ctx_len);
        dpm_xof_absorb(xa, &agg, 1);
        xof_vec(xa, w.meas, v->meas_len);
        blind = input_share + seed;
    }
    /* Each query point must not be a root of unity of the wires (checked before any output). */
    const uint8_t qbinder_proofs = v->proofs;
    dpm_xof_prio3(xb, verify_key, v->id, PRIO3_USAGE_QUERY_RANDOMNESS, ctx, ctx_len);
    dpm_xof_absorb(xb, &qbinder_proofs, 1);
    dpm_xof_absorb(xb, nonce, DPM_PRIO3_NONCE_BYTES);
    uint64_t root = 0;
    for (uint32_t k = 0; k < v->proofs; k++) {
        xof_vec(xb, w.qr, v->query_rand_len);
        root |= is_wire_root(w.qr[v->query_rand_len - 1u], v->wire_len);
    }
    DPM_CT_DECLASSIFY(root); /* t^p = 1: probability below 2^-40, the status says it */
    if (root != 0) {
        return DPM_ERR_VERIFY;
    }
    dpm_xof_prio3(xb, verify_key, v->id, PRIO3_USAGE_QUERY_RANDOMNESS, ctx, ctx_len);
    dpm_xof_absorb(xb, &qbinder_proofs, 1);
    dpm_xof_absorb(xb, nonce, DPM_PRIO3_NONCE_BYTES);

    uint8_t part[DPM_PRIO3_SEED_BYTES], corrected[DPM_PRIO3_SEED_BYTES];
    if (joint) {
        /* this aggregator's part from its blind and share; the seed from all the parts */
        dpm_xof_prio3(xa, blind, v->id, PRIO3_USAGE_JOINT_RAND_PART, ctx, ctx_len);
        dpm_xof_absorb(xa, &agg, 1);
        dpm_xof_absorb(xa, nonce, DPM_PRIO3_NONCE_BYTES);
        if (agg_id == 0) { /* the share's bytes as sent: canonical (vec_read), so re-encoded
                            * they are the same bytes; absorbed in one call */
            dpm_xof_absorb(xa, input_share, (size_t)v->meas_len * FE_BYTES);
        } else { /* encoded four elements at a time */
            uint8_t b[4u * FE_BYTES];
            size_t nb = 0;
            for (uint32_t e = 0; e < v->meas_len; e++) {
                fe_store(b + nb, w.meas[e]);
                nb += FE_BYTES;
                if (nb == sizeof(b) || e + 1u == v->meas_len) {
                    dpm_xof_absorb(xa, b, nb);
                    nb = 0;
                }
            }
        }
        dpm_xof_next(xa, part, seed);
        dpm_xof_prio3(xa, dpm_prio3_zero_seed, v->id, PRIO3_USAGE_JOINT_RAND_SEED, ctx, ctx_len);
        for (uint32_t j = 0; j < v->shares; j++) {
            dpm_xof_absorb(xa, j == agg_id ? part : public_share + j * seed, seed);
        }
        dpm_xof_next(xa, corrected, seed);
        dpm_xof_prio3(xa, corrected, v->id, PRIO3_USAGE_JOINT_RANDOMNESS, ctx, ctx_len);
        dpm_xof_absorb(xa, &v->proofs, 1);
    }
    if (agg_id != 0) {
        const uint8_t binder[2] = {v->proofs, agg};
        dpm_xof_prio3(xc, input_share, v->id, PRIO3_USAGE_PROOF_SHARE, ctx, ctx_len);
        dpm_xof_absorb(xc, binder, 2);
    }
    /* 1 / shares, a public constant: for a power of two (DAP's 2 aggregators) without the
     * 255 multiplications of an exponentiation to p - 2, which were a tenth of verify_init */
    FE shares_inv = (v->shares & (v->shares - 1u)) == 0 ? fe_inv_pow2(log2_u32(v->shares))
                                                        : fe_inv(fe_small(v->shares));
    const size_t vlen = (size_t)v->verifier_len * FE_BYTES;
    for (uint32_t k = 0; k < v->proofs; k++) {
        if (agg_id == 0) {
            uint64_t bad = 0; /* checked above */
            vec_read(w.proof,
                     input_share + ((size_t)v->meas_len + (size_t)k * v->proof_len) * FE_BYTES,
                     v->proof_len, &bad);
        } else {
            xof_vec(xc, w.proof, v->proof_len);
        }
        if (joint) {
            xof_vec(xa, w.jr, v->calls);
        }
        xof_vec(xb, w.qr, v->query_rand_len);
        query(v, shares_inv, &w, verifier_share + k * vlen);
    }
    if (joint) {
        memcpy(verifier_share + v->proofs * vlen, part, seed);
    }
    /* the state: the output share (the measurement share, truncated), the seed */
    uint8_t *os = state;
    if (v->kind == DPM_PRIO3_SUM) {
        fe_store(os, range_value(w.meas, v->bits, v->max_measurement));
    } else if (v->kind == DPM_PRIO3_SUMVEC || v->kind == DPM_PRIO3_SUMVEC_MULTIPROOF) {
        for (uint32_t q = 0; q < v->length; q++) {
            fe_store(os + (size_t)q * FE_BYTES,
                     range_value(w.meas + (size_t)q * v->bits, v->bits, v->max_measurement));
        }
    } else {
        for (uint32_t q = 0; q < v->output_len; q++) {
            fe_store(os + (size_t)q * FE_BYTES, w.meas[q]);
        }
    }
    if (joint) {
        memcpy(state + (size_t)v->output_len * FE_BYTES, corrected, seed);
    }
    memset(part, 0, sizeof(part));
    memset(corrected, 0, sizeof(corrected));
    return DPM_OK;
}

static dpm_status_t to_message(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                               const uint8_t *verifier_shares, uint8_t *message, uint64_t *work)
{
    const size_t seed = DPM_PRIO3_SEED_BYTES;
    const size_t vlen = (size_t)v->verifier_len * FE_BYTES;
    dpm_xof_t *x = (dpm_xof_t *)(void *)work;
    FE *sum = fe_area(work + DPM_VDAF_XOF_WORDS);
    uint64_t bad = 0;
    for (uint32_t j = 0; j < v->shares; j++) {
        const uint8_t *s = verifier_shares + (size_t)j * v->verifier_share_bytes;
        for (size_t i = 0; i < (size_t)v->verifier_len * v->proofs; i++) {
            (void)fe_load(s + i * FE_BYTES, &bad);
        }
    }
    if (bad != 0) {
        return DPM_ERR_PROTOCOL;
    }
    int ok = 1;
    for (uint32_t k = 0; k < v->proofs; k++) {
        for (uint32_t i = 0; i < v->verifier_len; i++) {
            sum[i] = fe_zero();
        }
        for (uint32_t j = 0; j < v->shares; j++) {
            const uint8_t *s = verifier_shares + (size_t)j * v->verifier_share_bytes + k * vlen;
            for (uint32_t i = 0; i < v->verifier_len; i++) {
                sum[i] = fe_add(sum[i], fe_load(s + (size_t)i * FE_BYTES, &bad));
            }
        }
        /* decide: the circuit's output is zero and the gadget agrees with its wires at t */
        ok &= fe_is_zero(sum[0]);
        ok &= fe_equal(gadget_eval(v, sum + 1), sum[1u + v->arity]);
    }
    if (!ok) {
        return DPM_ERR_VERIFY;
    }
    if (has_joint(v)) {
        dpm_xof_prio3(x, dpm_prio3_zero_seed, v->id, PRIO3_USAGE_JOINT_RAND_SEED, ctx, ctx_len);
        for (uint32_t j = 0; j < v->shares; j++) {
            dpm_xof_absorb(
                x, verifier_shares + (size_t)j * v->verifier_share_bytes + v->proofs * vlen, seed);
        }
        dpm_xof_next(x, message, seed);
    }
    return DPM_OK;
}

/* ---- aggregation ------------------------------------------------------------------------------
 */

static dpm_status_t aggregate(const dpm_prio3_t *v, uint8_t *agg_share, const uint8_t *share)
{
    uint64_t bad = 0;
    for (uint32_t i = 0; i < v->output_len; i++) {
        (void)fe_load(agg_share + (size_t)i * FE_BYTES, &bad);
        (void)fe_load(share + (size_t)i * FE_BYTES, &bad);
    }
    DPM_CT_DECLASSIFY(bad); /* a malformed share: the status says it */
    if (bad != 0) {
        return DPM_ERR_PROTOCOL;
    }
    for (uint32_t i = 0; i < v->output_len; i++) {
        uint8_t *a = agg_share + (size_t)i * FE_BYTES;
        fe_store(a, fe_add(fe_load(a, &bad), fe_load(share + (size_t)i * FE_BYTES, &bad)));
    }
    return DPM_OK;
}

/* Entry i of the sum of the v->shares aggregate shares (back to back); *bad as fe_load's. */
static FE share_sum(const dpm_prio3_t *v, const uint8_t *agg_shares, uint32_t i, uint64_t *bad)
{
    FE s = fe_zero();
    for (uint32_t j = 0; j < v->shares; j++) {
        s = fe_add(s, fe_load(agg_shares + ((size_t)j * v->output_len + i) * FE_BYTES, bad));
    }
    return s;
}

static dpm_status_t unshard(const dpm_prio3_t *v, const uint8_t *agg_shares, uint64_t *result)
{
    uint64_t bad = 0, wide = 0;
    for (int pass = 0; pass < 2; pass++) { /* check everything, then write */
        for (uint32_t i = 0; i < v->output_len; i++) {
            uint64_t x = fe_to_u64(share_sum(v, agg_shares, i, &bad), &wide);
            if (pass == 1) {
                result[i] = x;
            }
        }
        if (bad != 0) {
            return DPM_ERR_PROTOCOL;
        }
        if (wide != 0) {
            return DPM_ERR_RANGE;
        }
    }
    return DPM_OK;
}

/* ---- central noise (an aggregator's, before release) ------------------------------------------
 */

/* z as its field element without a branch on z (the noise is the aggregator's secret): |z| and
 * its negation are both computed and the sign selects. |z| <= 2^63 < p in both fields. */
static FE fe_from_signed(int64_t z)
{
    uint64_t neg = (uint64_t)0 - ((uint64_t)z >> 63); /* all ones when z < 0 */
    uint64_t mag = ((uint64_t)z ^ neg) + (neg & 1u);  /* |z|, as two's complement negates */
    FE m = fe_small(mag);
    return fe_select(neg, fe_neg(m), m);
}

static dpm_status_t add_noise(const dpm_prio3_t *v, uint8_t *agg_share, const int64_t *noise)
{
    uint64_t bad = 0;
    for (uint32_t i = 0; i < v->output_len; i++) {
        (void)fe_load(agg_share + (size_t)i * FE_BYTES, &bad);
    }
    DPM_CT_DECLASSIFY(bad); /* a malformed share: the status says it */
    if (bad != 0) {
        return DPM_ERR_PROTOCOL;
    }
    for (uint32_t i = 0; i < v->output_len; i++) {
        uint8_t *a = agg_share + (size_t)i * FE_BYTES;
        fe_store(a, fe_add(fe_load(a, &bad), fe_from_signed(noise[i])));
    }
    return DPM_OK;
}

/* The released sums are public: reading their signs may branch. */
static dpm_status_t unshard_signed(const dpm_prio3_t *v, const uint8_t *agg_shares, int64_t *result)
{
    uint64_t bad = 0;
    int range = 0;
    for (int pass = 0; pass < 2; pass++) { /* check everything, then write */
        for (uint32_t i = 0; i < v->output_len; i++) {
            FE s = share_sum(v, agg_shares, i, &bad);
            uint64_t wide_pos = 0, wide_neg = 0;
            uint64_t x = fe_to_u64(s, &wide_pos), y = fe_to_u64(fe_neg(s), &wide_neg);
            int64_t r = 0;
            if (wide_pos == 0 && x <= (uint64_t)INT64_MAX) {
                r = (int64_t)x;
            } else if (wide_neg == 0 && y <= (uint64_t)INT64_MAX) {
                r = -(int64_t)y;
            } else {
                range = 1;
            }
            if (pass == 1) {
                result[i] = r;
            }
        }
        if (bad != 0) {
            return DPM_ERR_PROTOCOL;
        }
        if (range) {
            return DPM_ERR_RANGE;
        }
    }
    return DPM_OK;
}

/* ---- the field's entry points (vdaf_internal.h) ------------------------------------------------
 */

void PRIO3_FN(dpm_prio3_shard)(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                               const uint8_t *meas, const uint8_t *nonce, const uint8_t *rand,
                               const dpm_prio3_shard_out_t *out, uint64_t *work)
{
    shard(v, ctx, ctx_len, meas, nonce, rand, out, work);
}

dpm_status_t PRIO3_FN(dpm_prio3_verify_init)(const dpm_prio3_t *v, const uint8_t *verify_key,
                                             const uint8_t *ctx, size_t ctx_len, uint32_t agg_id,
                                             const uint8_t *nonce, const uint8_t *public_share,
                                             const uint8_t *input_share, uint8_t *state,
                                             uint8_t *verifier_share, uint64_t *work)
{
    return verify_init(v, verify_key, ctx, ctx_len, agg_id, nonce, public_share, input_share, state,
                       verifier_share, work);
}

dpm_status_t PRIO3_FN(dpm_prio3_to_message)(const dpm_prio3_t *v, const uint8_t *ctx,
                                            size_t ctx_len, const uint8_t *verifier_shares,
                                            uint8_t *message, uint64_t *work)
{
    return to_message(v, ctx, ctx_len, verifier_shares, message, work);
}

dpm_status_t PRIO3_FN(dpm_prio3_aggregate)(const dpm_prio3_t *v, uint8_t *agg_share,
                                           const uint8_t *share)
{
    return aggregate(v, agg_share, share);
}

dpm_status_t PRIO3_FN(dpm_prio3_unshard)(const dpm_prio3_t *v, const uint8_t *agg_shares,
                                         uint64_t *result)
{
    return unshard(v, agg_shares, result);
}

dpm_status_t PRIO3_FN(dpm_prio3_add_noise)(const dpm_prio3_t *v, uint8_t *agg_share,
                                           const int64_t *noise)
{
    return add_noise(v, agg_share, noise);
}

dpm_status_t PRIO3_FN(dpm_prio3_unshard_signed)(const dpm_prio3_t *v, const uint8_t *agg_shares,
                                                int64_t *result)
{
    return unshard_signed(v, agg_shares, result);
}
