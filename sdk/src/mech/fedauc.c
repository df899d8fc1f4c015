/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC on the device: configuration, round 1 (quantize, shuffle, token), the validation of a
 * rank reply, the exact rank statistics and the perturbations (see dpm/expert/fedauc.h). */
#include "dpm_internal.h"

#include "dpm/expert/fedauc.h"
#include "dpm/expert/report.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/noise.h"
#include "mech/fedauc_internal.h"
#include "mech/mech_ops.h"

#if DPM_MECH_FEDAUC

static dpm_status_t fail(const char **reason, const char *why, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = why;
    }
    return st;
}

/* ---- configuration ------------------------------------------------------------------------- */

dpm_status_t dpm_fedauc_init(dpm_fedauc_t *f, uint32_t mechanism, dpm_fedauc_variant_t variant,
                             uint32_t score_bits, uint32_t p_share_q16, dpm_eps_t eps,
                             const char **reason)
{
    if (f == NULL) {
        return fail(reason, "null argument", DPM_ERR_PARAM);
    }
    if (eps == 0 || eps > DPM_EPS_MAX_Q16) {
        return fail(reason, "epsilon out of range", DPM_ERR_PARAM);
    }
    if (score_bits < 1 || score_bits > 31) {
        return fail(reason, "fedauc needs score_bits in [1, 31]", DPM_ERR_PARAM);
    }
    dpm_fedauc_t next;
    memset(&next, 0, sizeof(next));
    next.variant = variant;
    next.score_bits = score_bits;
    next.p_share_q16 = p_share_q16;
    next.eps = eps;
    if (mechanism == DPM_MECH_ID_FEDAUC_RR) {
        if (variant != DPM_FEDAUC_VARIANT_NONE || p_share_q16 != 0) {
            return fail(reason, "fedauc_rr takes no variant and no share", DPM_ERR_PARAM);
        }
        dpm_status_t st = dpm_rr_init(&next.rr, eps);
        if (st != DPM_OK) {
            return fail(reason, "epsilon too small or too large for binary RR", st);
        }
        next.eps_implemented = next.rr.eps_implemented;
    } else if (mechanism == DPM_MECH_ID_FEDAUC_LAP) {
        if (variant < DPM_FEDAUC_LOCAL || variant > DPM_FEDAUC_ADAPTIVE) {
            return fail(reason, "fedauc_lap needs a variant (local, global, orthogonal, adaptive)",
                        DPM_ERR_PARAM);
        }
        if (variant == DPM_FEDAUC_ADAPTIVE) {
            if (p_share_q16 != 0) {
                return fail(reason, "adaptive splits epsilon per device: no share", DPM_ERR_PARAM);
            }
            if (eps < 2) {
                return fail(reason, "epsilon too small to split", DPM_ERR_PARAM);
            }
        } else {
            if (p_share_q16 == 0 || p_share_q16 >= 65536u) {
                return fail(reason, "the share of epsilon on localP must be in (0, 1)",
                            DPM_ERR_PARAM);
            }
            uint64_t eps_p = ((uint64_t)p_share_q16 * eps) >> 16;
            if (eps_p < 1 || eps - eps_p < 1) {
                return fail(reason, "epsilon too small to split", DPM_ERR_PARAM);
            }
            next.eps_p = (dpm_eps_t)eps_p;
        }
        next.eps_implemented = eps; /* eps_p + eps_s = eps exactly: no rounding */
    } else {
        return fail(reason, "not a fedauc mechanism", DPM_ERR_PARAM);
    }
    *f = next;
    return DPM_OK;
}

/* FNV-1a over little-endian 32-bit words, as mech.c. */
static uint32_t fnv_word(uint32_t h, uint32_t w)
{
    for (int i = 0; i < 4; i++) {
        h ^= (w >> (8 * i)) & 0xFFu;
        h *= 16777619u;
    }
    return h;
}

dpm_status_t dpm_fedauc_mech_init(dpm_mech_t *next, const dpm_campaign_t *c, const char **reason)
{
    if (c->nbins != 0 || c->nmetrics != 0 || c->groups != 0) {
        return fail(reason, "groups, metrics and bin edges are not used by fedauc", DPM_ERR_PARAM);
    }
    dpm_fedauc_t *f = &next->params.fedauc;
    dpm_status_t st =
        dpm_fedauc_init(f, (uint32_t)c->mechanism, (dpm_fedauc_variant_t)c->fedauc_variant,
                        c->fedauc_score_bits, c->fedauc_p_share_q16, c->eps.q16, reason);
    if (st != DPM_OK) {
        return st;
    }
    uint32_t h = 2166136261u;
    h = fnv_word(h, (uint32_t)c->mechanism);
    h = fnv_word(h, (uint32_t)f->variant);
    h = fnv_word(h, f->score_bits);
    h = fnv_word(h, f->p_share_q16);
    h = fnv_word(h, f->eps_p);
    h = fnv_word(h, f->rr.keep);
    h = fnv_word(h, f->rr.other);
    next->eps_implemented = f->eps_implemented;
    next->params_hash = fnv_word(h, f->eps_implemented);
    return DPM_OK;
}

static int is_fedauc_mech(const dpm_mech_t *m)
{
    return m != NULL && dpm_fedauc_is((uint32_t)m->campaign.mechanism);
}

/* ---- round 1 ----------------------------------------------------------------------------------
 */

dpm_status_t dpm_fedauc_prepare(const dpm_mech_t *m, dpm_rand_t *r, const dpm_score_t *scores,
                                uint32_t n, const dpm_fedauc_buffers_t *b, dpm_fedauc_session_t *s)
{
    if (!is_fedauc_mech(m) || r == NULL || r->rng == NULL || b == NULL || s == NULL ||
        (scores == NULL && n != 0)) {
        return DPM_ERR_PARAM;
    }
    if (n == 0) {
        return DPM_ERR_UNDEFINED; /* no data: nothing to rank */
    }
    if (b->scores == NULL || b->perm == NULL || b->work == NULL || n > b->cap) {
        return DPM_ERR_BUFFER;
    }
    if (n > DPM_FEDAUC_MAX_EXAMPLES) {
        return DPM_ERR_RANGE;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (scores[i] > DPM_SCORE_ONE) {
            return DPM_ERR_PARAM;
        }
    }
    if (r->error != DPM_OK) {
        return r->error;
    }
    /* Fisher-Yates: position i takes a uniform one of the i + 1 entries not yet placed. */
    uint32_t *perm = b->perm;
    for (uint32_t j = 0; j < n; j++) {
        perm[j] = j;
    }
    for (uint32_t i = n - 1; i > 0; i--) {
        uint64_t k = 0;
        dpm_status_t st = dpm_uniform(r, (uint64_t)i + 1u, &k);
        if (st != DPM_OK) {
            return st;
        }
        uint32_t t = perm[i];
        perm[i] = perm[k];
        perm[k] = t;
    }
    const dpm_fedauc_t *f = &m->params.fedauc;
    for (uint32_t j = 0; j < n; j++) {
        b->scores[j] = dpm_fedauc_quantize(f, scores[perm[j]]);
    }
    dpm_fedauc_session_t next;
    memset(&next, 0, sizeof(next));
    for (uint32_t half = 0; half < 2; half++) {
        uint64_t w = 0;
        dpm_status_t st = dpm_rand_bits(r, 64, &w);
        if (st != DPM_OK) {
            return st;
        }
        for (uint32_t i = 0; i < 8; i++) {
            next.token[8u * half + i] = (uint8_t)(w >> (8u * i));
        }
    }
    next.state = DPM_FEDAUC_UPLOADED;
    next.campaign_id = m->campaign.id;
    next.params_hash = m->params_hash;
    next.mechanism = (uint32_t)m->campaign.mechanism;
    next.n = n;
    /* member by member: copying *b whole would carry the caller's padding bytes (possibly
     * uninitialised) into the session, which then differs from an equal one byte for byte */
    next.buf.scores = b->scores;
    next.buf.perm = b->perm;
    next.buf.work = b->work;
    next.buf.cap = b->cap;
    *s = next;
    return DPM_OK;
}

/* ---- round 2: the rank reply ------------------------------------------------------------------
 */

static void sift_down(uint64_t *a, size_t root, size_t end)
{
    for (size_t child = 2u * root + 1u; child < end; child = 2u * root + 1u) {
        if (child + 1u < end && a[child] < a[child + 1u]) {
            child++;
        }
        if (a[root] >= a[child]) {
            return;
        }
        uint64_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

/* In place, O(n log n) worst case, no recursion and no extra memory. */
static void heapsort_u64(uint64_t *a, size_t n)
{
    for (size_t start = n / 2u; start-- > 0;) {
        sift_down(a, start, n);
    }
    for (size_t end = n; end-- > 1;) {
        uint64_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

static int session_matches(const dpm_fedauc_session_t *s, const dpm_mech_t *m)
{
    return s->state == DPM_FEDAUC_UPLOADED && s->campaign_id == m->campaign.id &&
           s->params_hash == m->params_hash && s->mechanism == (uint32_t)m->campaign.mechanism &&
           s->n >= 1 && s->n <= s->buf.cap && s->buf.scores != NULL && s->buf.perm != NULL &&
           s->buf.work != NULL;
}

/* The device's own scores against the sorted ranks: equal ranks only for equal scores, a higher
 * rank for a higher score, and room for every pooled tie group (dpm/expert/fedauc.h). NULL if
 * consistent, else the reason. */
static const char *ranks_consistent(const uint64_t *work, const uint32_t *scores, uint32_t n,
                                    uint64_t max_rank2)
{
    uint64_t prev_rank = 0, prev_k = 0;
    uint32_t prev_score = 0;
    for (uint32_t i = 0; i < n;) {
        uint64_t rank = work[i] >> 32;
        uint32_t score = scores[(uint32_t)work[i]];
        uint32_t j = i;
        for (; j < n && (work[j] >> 32) == rank; j++) {
            if (scores[(uint32_t)work[j]] != score) {
                return "equal ranks for different scores";
            }
        }
        uint64_t k = j - i;
        if (i == 0) {
            if (rank < k - 1u) {
                return "rank too low for its tied scores";
            }
        } else {
            if (score <= prev_score) {
                return "ranks contradict the score order";
            }
            if (rank - prev_rank < k + prev_k) {
                return "ranks too close for the scores between them";
            }
        }
        if (j == n && rank + (k - 1u) > max_rank2) {
            return "rank too high for its tied scores";
        }
        prev_rank = rank;
        prev_k = k;
        prev_score = score;
        i = j;
    }
    return NULL;
}

dpm_status_t dpm_fedauc_accept(const dpm_fedauc_session_t *s, const dpm_mech_t *m,
                               const uint8_t *reply, size_t len, const uint64_t *ids,
                               dpm_fedauc_ranks_t *out, const char **reason)
{
    if (s == NULL || !is_fedauc_mech(m) || reply == NULL || out == NULL) {
        return fail(reason, "null argument or not a fedauc mechanism", DPM_ERR_PARAM);
    }
    if (!session_matches(s, m)) {
        return fail(reason, "session is not an unreported upload of this campaign", DPM_ERR_PARAM);
    }
    const uint32_t n = s->n;
    uint64_t *work = s->buf.work;
    if (m->campaign.mechanism == DPM_MECH_ID_FEDAUC_RR) {
        if (ids == NULL) {
            return fail(reason, "fedauc_rr needs the example ids", DPM_ERR_PARAM);
        }
        memcpy(work, ids, (size_t)n * sizeof(uint64_t));
        heapsort_u64(work, n);
        for (uint32_t i = 1; i < n; i++) {
            if (work[i] == work[i - 1u]) {
                return fail(reason, "repeated example id", DPM_ERR_PARAM);
            }
        }
    }
    dpm_fedauc_header_t h;
    if (dpm_fedauc_reply_decode_work(reply, len, &h, work, n) != DPM_OK) {
        return fail(reason, "malformed rank reply (or more ranks than uploaded scores)",
                    DPM_ERR_PROTOCOL);
    }
    if (h.campaign_id != s->campaign_id || h.mechanism != s->mechanism ||
        h.params_hash != s->params_hash) {
        return fail(reason, "rank reply for another campaign", DPM_ERR_PROTOCOL);
    }
    if (memcmp(h.token, s->token, DPM_FEDAUC_TOKEN_BYTES) != 0) {
        return fail(reason, "rank reply for another upload", DPM_ERR_PROTOCOL);
    }
    if (h.n != n) {
        return fail(reason, "wrong number of ranks", DPM_ERR_PROTOCOL);
    }
    if (h.total < n || h.total > DPM_FEDAUC_MAX_TOTAL) {
        return fail(reason, "total of ranked scores out of range", DPM_ERR_PROTOCOL);
    }
    const uint64_t max_rank2 = 2u * ((uint64_t)h.total - 1u);
    for (uint32_t i = 0; i < n; i++) {
        if ((work[i] >> 32) > max_rank2) {
            return fail(reason, "rank out of range", DPM_ERR_PROTOCOL);
        }
    }
    heapsort_u64(work, n);
    const char *why = ranks_consistent(work, s->buf.scores, n, max_rank2);
    if (why != NULL) {
        return fail(reason, why, DPM_ERR_PROTOCOL);
    }
    dpm_fedauc_ranks_t rk;
    memset(&rk, 0, sizeof(rk));
    rk.n = n;
    rk.total = h.total;
    rk.min_rank2 = (uint32_t)(work[0] >> 32);
    rk.max_rank2 = (uint32_t)(work[n - 1u] >> 32);
    for (uint32_t i = 0; i < n; i++) {
        rk.sum_rank2 += work[i] >> 32; /* < 2^22 * 2^32 */
    }
    uint64_t above = (uint64_t)n * rk.max_rank2 - rk.sum_rank2; /* n R_max >= S >= n R_min */
    uint64_t below = rk.sum_rank2 - (uint64_t)n * rk.min_rank2;
    rk.maxdev = above > below ? above : below;
    dpm_fedauc_variant_t v = m->params.fedauc.variant;
    if ((v == DPM_FEDAUC_ORTHOGONAL || v == DPM_FEDAUC_ADAPTIVE) &&
        rk.maxdev > DPM_FEDAUC_MAX_T_SENSITIVITY) {
        return fail(reason, "ranks too spread for the orthogonal split (n times M above 2^39)",
                    DPM_ERR_RANGE);
    }
    *out = rk;
    return DPM_OK;
}

/* ---- round 2: statistics ----------------------------------------------------------------------
 */

static int ranks_match(const dpm_fedauc_session_t *s, const dpm_fedauc_ranks_t *rk)
{
    return rk != NULL && rk->n == s->n && rk->total >= s->n;
}

static int labels_valid(const uint8_t *labels, uint32_t n)
{
    uint8_t bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        bad |= (uint8_t)(labels[i] > 1u);
    }
    return bad == 0;
}

/* Sums over the sorted work entries of the labels y(i) (0/1, masked, no branch on them). */
static dpm_status_t sums(const dpm_fedauc_session_t *s, const dpm_fedauc_ranks_t *rk,
                         const uint8_t *labels, dpm_fedauc_stats_t *out)
{
    const uint32_t n = s->n;
    dpm_fedauc_stats_t st;
    memset(&st, 0, sizeof(st));
    st.n = n;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t w = s->buf.work[i];
        uint32_t j = (uint32_t)w;
        if (j >= n || s->buf.perm[j] >= n) {
            return DPM_ERR_PARAM; /* buffers changed since round 1 */
        }
        uint64_t rank = w >> 32;
        uint64_t y = labels[s->buf.perm[j]];
        uint64_t mask = 0u - y;
        /* n R - S in [-D, D], D <= 2^40 for the variants that use T; two's complement wraps
         * exactly (|T| <= n D < 2^62 fits) */
        uint64_t dev = (uint64_t)n * rank - rk->sum_rank2;
        st.p += (uint32_t)y;
        st.sum2 += rank & mask;
        st.t = (int64_t)((uint64_t)st.t + (dev & mask));
    }
    *out = st;
    return DPM_OK;
}

dpm_status_t dpm_fedauc_stats(const dpm_fedauc_session_t *s, const dpm_fedauc_ranks_t *rk,
                              const uint8_t *labels, dpm_fedauc_stats_t *out)
{
    if (s == NULL || labels == NULL || out == NULL || s->state != DPM_FEDAUC_UPLOADED ||
        s->buf.work == NULL || s->buf.perm == NULL || !ranks_match(s, rk) ||
        !labels_valid(labels, s->n)) {
        return DPM_ERR_PARAM;
    }
    return sums(s, rk, labels, out);
}

/* ---- round 2: the perturbations
 * ------------------------------------------------------------------ */

/* u128 = {lo, hi}; products of two into 4 limbs, compared from the top. */
typedef struct {
    uint64_t lo, hi;
} u128_t;

static u128_t mul64(uint64_t a, uint64_t b)
{
    u128_t r;
    r.lo = dpm_mul_u64(a, b, &r.hi);
    return r;
}

static void mul128(u128_t a, u128_t b, uint64_t out[4])
{
    uint64_t h00, h01, h10, h11;
    uint64_t l00 = dpm_mul_u64(a.lo, b.lo, &h00);
    uint64_t l01 = dpm_mul_u64(a.lo, b.hi, &h01);
    uint64_t l10 = dpm_mul_u64(a.hi, b.lo, &h10);
    uint64_t l11 = dpm_mul_u64(a.hi, b.hi, &h11);
    out[0] = l00;
    uint64_t c = 0, s1 = h00 + l01;
    c += s1 < h00;
    s1 += l10;
    c += s1 < l10;
    out[1] = s1;
    uint64_t c2 = 0, s2 = h01 + h10;
    c2 += s2 < h01;
    s2 += l11;
    c2 += s2 < l11;
    s2 += c;
    c2 += s2 < c;
    out[2] = s2;
    out[3] = h11 + c2; /* the product fits 256 bits: no carry out */
}

static int le256(const uint64_t a[4], const uint64_t b[4])
{
    for (int i = 3; i >= 0; i--) {
        if (a[i] != b[i]) {
            return a[i] < b[i];
        }
    }
    return 1;
}

/* x^3 D^2 <= (e - x)^3 S^2, exactly (x, e < 2^27: cubes < 2^81; D <= 2^64, S < 2^64). */
static int adaptive_ok(uint64_t x, uint64_t e, u128_t s2, u128_t d2)
{
    uint64_t lhs[4], rhs[4];
    mul128(mul64(x * x, x), d2, lhs);
    mul128(mul64((e - x) * (e - x), e - x), s2, rhs);
    return le256(lhs, rhs);
}

dpm_eps_t dpm_fedauc_adaptive_eps_p(uint64_t sum_rank2, uint64_t maxdev, dpm_eps_t eps)
{
    if (maxdev == 0 || eps < 2) {
        return eps; /* T is 0 whatever the labels: everything on localP */
    }
    u128_t s2 = mul64(sum_rank2, sum_rank2), d2 = mul64(maxdev, maxdev);
    uint64_t lo = 1, hi = (uint64_t)eps - 1u;
    if (!adaptive_ok(lo, eps, s2, d2)) {
        return 1;
    }
    while (lo < hi) { /* invariant: ok(lo); the largest ok x is in [lo, hi] */
        uint64_t mid = lo + (hi - lo + 1u) / 2u;
        if (adaptive_ok(mid, eps, s2, d2)) {
            lo = mid;
        } else {
            hi = mid - 1u;
        }
    }
    return (dpm_eps_t)lo;
}

/* The PRF input of a memoized flip: "dpmRRflp" | campaign id | params_hash | id. */
static int rr_flip(const dpm_mech_t *m, const dpm_memo_t *memo, uint64_t id)
{
    static const uint8_t domain[8] = {'d', 'p', 'm', 'R', 'R', 'f', 'l', 'p'};
    uint8_t msg[24];
    memcpy(msg, domain, 8);
    for (uint32_t i = 0; i < 4; i++) {
        msg[8 + i] = (uint8_t)(m->campaign.id >> (8u * i));
        msg[12 + i] = (uint8_t)(m->params_hash >> (8u * i));
    }
    for (uint32_t i = 0; i < 8; i++) {
        msg[16 + i] = (uint8_t)(id >> (8u * i));
    }
    uint32_t u = (uint32_t)dpm_siphash24(memo->key, msg, sizeof(msg));
    return (int)(u >= m->params.fedauc.rr.keep);
}

dpm_status_t dpm_fedauc_rr_flip(const dpm_mech_t *m, const dpm_memo_t *memo, uint64_t id, int *flip)
{
    if (m == NULL || memo == NULL || flip == NULL || memo->opened != DPM_MEMO_OPENED ||
        m->campaign.mechanism != DPM_MECH_ID_FEDAUC_RR) {
        return DPM_ERR_PARAM;
    }
    *flip = rr_flip(m, memo, id);
    return DPM_OK;
}

/* value + discrete Laplace of scale sensitivity / ε_part (ε_part = eps_part / 2^16), exactly;
 * no noise for sensitivity 0 (the value is then the same for every labelling). */
static dpm_status_t noised(dpm_rand_t *r, uint64_t sensitivity, dpm_eps_t eps_part, int64_t value,
                           int64_t *out)
{
    if (sensitivity == 0) {
        *out = value;
        return DPM_OK;
    }
    uint64_t num = sensitivity << DPM_EPS_FRAC_BITS; /* <= 2^56: sensitivity <= 2^40 */
    uint64_t den = eps_part;
    uint64_t g = dpm_gcd_u64(num, den);
    return dpm_dlap_add(r, num / g, den / g, value, out);
}

dpm_status_t dpm_fedauc_perturb(const dpm_mech_t *m, dpm_rand_t *r, const dpm_fedauc_session_t *s,
                                const dpm_fedauc_ranks_t *rk, const uint8_t *labels,
                                const uint64_t *ids, const dpm_memo_t *memo,
                                dpm_fedauc_report_t *out)
{
    if (!is_fedauc_mech(m) || r == NULL || s == NULL || labels == NULL || out == NULL ||
        !session_matches(s, m) || !ranks_match(s, rk) || !labels_valid(labels, s->n)) {
        return DPM_ERR_PARAM;
    }
    const dpm_fedauc_t *f = &m->params.fedauc;
    dpm_fedauc_report_t b;
    memset(&b, 0, sizeof(b));
    memcpy(b.upload_token, s->token, DPM_FEDAUC_TOKEN_BYTES);
    b.n = s->n;
    b.total = rk->total;
    b.sum_rank2 = rk->sum_rank2;
    dpm_fedauc_stats_t st;
    if (m->campaign.mechanism == DPM_MECH_ID_FEDAUC_RR) {
        if (ids == NULL || memo == NULL || memo->opened != DPM_MEMO_OPENED) {
            return DPM_ERR_PARAM;
        }
        /* The flipped labels y'_i = y_i XOR flip(id_i), then the same exact sums. */
        memset(&st, 0, sizeof(st));
        for (uint32_t i = 0; i < s->n; i++) {
            uint64_t w = s->buf.work[i];
            uint32_t j = (uint32_t)w;
            if (j >= s->n || s->buf.perm[j] >= s->n) {
                return DPM_ERR_PARAM;
            }
            uint32_t app = s->buf.perm[j];
            uint64_t y = (uint64_t)(labels[app] ^ (uint8_t)rr_flip(m, memo, ids[app]));
            st.p += (uint32_t)y;
            st.sum2 += (w >> 32) & (0u - y);
        }
        b.local_p = st.p;
        b.local_sum2 = (int64_t)st.sum2;
        *out = b;
        return DPM_OK;
    }
    dpm_status_t res = sums(s, rk, labels, &st);
    if (res != DPM_OK) {
        return res;
    }
    const dpm_eps_t eps = f->eps_implemented;
    int64_t p = 0, sum = 0;
    if (f->variant == DPM_FEDAUC_LOCAL || f->variant == DPM_FEDAUC_GLOBAL) {
        b.sensitivity =
            f->variant == DPM_FEDAUC_LOCAL ? rk->max_rank2 : 2u * ((uint64_t)rk->total - 1u);
        b.eps_p = f->eps_p;
        res = noised(r, 1, b.eps_p, st.p, &p);
        if (res == DPM_OK) {
            res = noised(r, b.sensitivity, eps - b.eps_p, (int64_t)st.sum2, &sum);
        }
        b.local_sum2 = sum;
    } else {
        if (rk->maxdev > DPM_FEDAUC_MAX_T_SENSITIVITY) {
            return DPM_ERR_RANGE;
        }
        b.sensitivity = rk->maxdev;
        b.eps_p = rk->maxdev == 0 ? eps
                  : f->variant == DPM_FEDAUC_ORTHOGONAL
                      ? f->eps_p
                      : dpm_fedauc_adaptive_eps_p(rk->sum_rank2, rk->maxdev, eps);
        res = noised(r, 1, b.eps_p, st.p, &p);
        if (res == DPM_OK) {
            res = noised(r, b.sensitivity, eps - b.eps_p, st.t, &sum); /* D = 0: T = 0 */
        }
        b.t = sum;
    }
    if (res != DPM_OK) {
        return res;
    }
    b.local_p = p;
    *out = b;
    return DPM_OK;
}

/* ---- the collector's check of a body ------------------------------------------------------------
 */

dpm_status_t dpm_fedauc_check_body(const dpm_mech_t *m, dpm_eps_t eps, const dpm_fedauc_report_t *b,
                                   const char **reason)
{
    const dpm_fedauc_t *f = &m->params.fedauc;
    if (b->n < 1 || b->n > 4194304u) {
        return fail(reason, "examples out of range", DPM_ERR_PROTOCOL);
    }
    if (b->total < b->n || b->total > DPM_FEDAUC_MAX_TOTAL) {
        return fail(reason, "total out of range", DPM_ERR_PROTOCOL);
    }
    const uint64_t max_rank2 = 2u * ((uint64_t)b->total - 1u);
    if (b->sum_rank2 > (uint64_t)b->n * max_rank2) {
        return fail(reason, "rank sum out of range", DPM_ERR_PROTOCOL);
    }
    if (m->campaign.mechanism == DPM_MECH_ID_FEDAUC_RR) {
        if (b->sensitivity != 0 || b->eps_p != 0 || b->t != 0 || b->local_p < 0 ||
            b->local_p > (int64_t)b->n || b->local_sum2 < 0 ||
            (uint64_t)b->local_sum2 > b->sum_rank2) {
            return fail(reason, "value out of range", DPM_ERR_PROTOCOL);
        }
        return DPM_OK;
    }
    const char *bad = NULL;
    switch (f->variant) {
    case DPM_FEDAUC_LOCAL:
        if (b->sensitivity > max_rank2 || b->sensitivity * b->n < b->sum_rank2) {
            bad = "sensitivity does not match the ranks";
        }
        break;
    case DPM_FEDAUC_GLOBAL:
        if (b->sensitivity != max_rank2) {
            bad = "sensitivity does not match the ranks";
        }
        break;
    case DPM_FEDAUC_ORTHOGONAL:
    case DPM_FEDAUC_ADAPTIVE:
        if (b->sensitivity > DPM_FEDAUC_MAX_T_SENSITIVITY ||
            b->sensitivity > (uint64_t)b->n * max_rank2) {
            bad = "sensitivity does not match the ranks";
        }
        break;
    default: bad = "unknown variant";
    }
    if (bad != NULL) {
        return fail(reason, bad, DPM_ERR_PROTOCOL);
    }
    dpm_eps_t want = f->eps_p;
    if (f->variant == DPM_FEDAUC_ORTHOGONAL && b->sensitivity == 0) {
        want = eps;
    } else if (f->variant == DPM_FEDAUC_ADAPTIVE) {
        want = dpm_fedauc_adaptive_eps_p(b->sum_rank2, b->sensitivity, eps);
    }
    if (b->eps_p != want) {
        return fail(reason, "split of epsilon does not match the variant", DPM_ERR_PROTOCOL);
    }
    int uses_t = f->variant == DPM_FEDAUC_ORTHOGONAL || f->variant == DPM_FEDAUC_ADAPTIVE;
    if ((uses_t && b->local_sum2 != 0) || (!uses_t && b->t != 0)) {
        return fail(reason, "value out of range", DPM_ERR_PROTOCOL);
    }
    return DPM_OK;
}

/* ---- fedauc_rr's and fedauc_lap's ops (mech/mech_ops.h) ------------------------------------- */

int dpm_fedauc_body_ok(const dpm_report_t *r)
{
    return dpm_fedauc_is((uint32_t)r->mechanism); /* every value of the body fits its field */
}

typedef char
    fedauc_tags[dpm_v1_FedaucBody_upload_token_tag == 1 && dpm_v1_FedaucBody_n_tag == 2 &&
                        dpm_v1_FedaucBody_total_tag == 3 && dpm_v1_FedaucBody_local_p_tag == 4 &&
                        dpm_v1_FedaucBody_local_sum2_tag == 5 && dpm_v1_FedaucBody_t_tag == 6 &&
                        dpm_v1_FedaucBody_sum_rank2_tag == 7 &&
                        dpm_v1_FedaucBody_sensitivity_tag == 8 &&
                        dpm_v1_FedaucBody_eps_p_q16_tag == 9
                    ? 1
                    : -1];

/* FedaucBody as Report field 15, as pb_encode writes it (the fixed-length token always, zero
 * scalars omitted, sint64 zigzagged), straight into the buffer (core/wire.h). */
void dpm_fedauc_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    const dpm_fedauc_report_t *b = &r->body.fedauc;
    const uint64_t zz[3] = {dpm_wire_zigzag64(b->local_p), dpm_wire_zigzag64(b->local_sum2),
                            dpm_wire_zigzag64(b->t)};
    uint32_t len = 2u + DPM_FEDAUC_TOKEN_BYTES + dpm_wire_uint_field_len(b->n) +
                   dpm_wire_uint_field_len(b->total) + dpm_wire_uint64_field_len(zz[0]) +
                   dpm_wire_uint64_field_len(zz[1]) + dpm_wire_uint64_field_len(zz[2]) +
                   dpm_wire_uint64_field_len(b->sum_rank2) +
                   dpm_wire_uint64_field_len(b->sensitivity) + dpm_wire_uint_field_len(b->eps_p);
    dpm_wire_message(w, dpm_v1_Report_fedauc_tag, len);
    dpm_wire_fixed_bytes_field(w, dpm_v1_FedaucBody_upload_token_tag, b->upload_token,
                               DPM_FEDAUC_TOKEN_BYTES);
    dpm_wire_uint_field(w, dpm_v1_FedaucBody_n_tag, b->n);
    dpm_wire_uint_field(w, dpm_v1_FedaucBody_total_tag, b->total);
    dpm_wire_uint64_field(w, dpm_v1_FedaucBody_local_p_tag, zz[0]);
    dpm_wire_uint64_field(w, dpm_v1_FedaucBody_local_sum2_tag, zz[1]);
    dpm_wire_uint64_field(w, dpm_v1_FedaucBody_t_tag, zz[2]);
    dpm_wire_uint64_field(w, dpm_v1_FedaucBody_sum_rank2_tag, b->sum_rank2);
    dpm_wire_uint64_field(w, dpm_v1_FedaucBody_sensitivity_tag, b->sensitivity);
    dpm_wire_uint_field(w, dpm_v1_FedaucBody_eps_p_q16_tag, b->eps_p);
}

int dpm_fedauc_wire_fits(const dpm_v1_Report *msg)
{
    /* the token's 16 bytes are checked by the decoder (fixed length) */
    return msg->which_body == dpm_v1_Report_fedauc_tag && dpm_fedauc_is((uint32_t)msg->mechanism);
}

void dpm_fedauc_wire_read(const dpm_v1_Report *msg, dpm_report_t *out)
{
    dpm_fedauc_body_from_wire(&msg->body.fedauc, &out->body.fedauc);
}

dpm_status_t dpm_fedauc_check_report(const dpm_mech_t *m, const dpm_report_t *r,
                                     const char **reason)
{
    return dpm_fedauc_check_body(m, r->eps, &r->body.fedauc, reason);
}

dpm_status_t dpm_mech_report_fedauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                    const dpm_receipt_t *rc, const dpm_fedauc_session_t *s,
                                    const dpm_fedauc_ranks_t *rk, const uint8_t *labels,
                                    const uint64_t *ids, const dpm_memo_t *memo, dpm_report_t *out)
{
    if (m == NULL || r == NULL || out == NULL || !dpm_fedauc_is((uint32_t)m->campaign.mechanism) ||
        !dpm_receipt_ok(m, iss, rc)) {
        return DPM_ERR_PARAM;
    }
    dpm_fedauc_report_t body;
    memset(&body, 0, sizeof(body));
    dpm_status_t st = dpm_fedauc_perturb(m, r, s, rk, labels, ids, memo, &body);
    return dpm_mech_report_finish(m, r, iss, rc, st, &body, sizeof(body), out);
}

uint64_t dpm_fedauc_upload_room(const dpm_mech_t *m, uint32_t n)
{
    return DPM_FEDAUC_UPLOAD_MAX_BYTES(n, m->params.fedauc.score_bits);
}

#else /* !DPM_MECH_FEDAUC: the API stays, every call says the mechanism is not built */

uint64_t dpm_fedauc_upload_room(const dpm_mech_t *m, uint32_t n)
{
    (void)m, (void)n;
    return 0;
}

int dpm_fedauc_body_ok(const dpm_report_t *r)
{
    (void)r;
    return 0;
}

void dpm_fedauc_write_body(dpm_wire_t *w, const dpm_report_t *r)
{
    (void)r;
    w->ok = 0;
}

dpm_status_t dpm_mech_report_fedauc(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                    const dpm_receipt_t *rc, const dpm_fedauc_session_t *s,
                                    const dpm_fedauc_ranks_t *rk, const uint8_t *labels,
                                    const uint64_t *ids, const dpm_memo_t *memo, dpm_report_t *out)
{
    (void)m, (void)r, (void)iss, (void)rc, (void)s, (void)rk, (void)labels, (void)ids, (void)memo,
        (void)out;
    return DPM_ERR_UNSUPPORTED;
}

dpm_status_t dpm_fedauc_init(dpm_fedauc_t *f, uint32_t mechanism, dpm_fedauc_variant_t variant,
                             uint32_t score_bits, uint32_t p_share_q16, dpm_eps_t eps,
                             const char **reason)
{
    (void)f, (void)mechanism, (void)variant, (void)score_bits, (void)p_share_q16, (void)eps;
    if (reason != NULL) {
        *reason = "mechanism not available in this build";
    }
    return DPM_ERR_UNSUPPORTED;
}

dpm_status_t dpm_fedauc_prepare(const dpm_mech_t *m, dpm_rand_t *r, const dpm_score_t *scores,
                                uint32_t n, const dpm_fedauc_buffers_t *b, dpm_fedauc_session_t *s)
{
    (void)m, (void)r, (void)scores, (void)n, (void)b, (void)s;
    return DPM_ERR_UNSUPPORTED;
}

dpm_status_t dpm_fedauc_accept(const dpm_fedauc_session_t *s, const dpm_mech_t *m,
                               const uint8_t *reply, size_t len, const uint64_t *ids,
                               dpm_fedauc_ranks_t *out, const char **reason)
{
    (void)s, (void)m, (void)reply, (void)len, (void)ids, (void)out;
    if (reason != NULL) {
        *reason = "mechanism not available in this build";
    }
    return DPM_ERR_UNSUPPORTED;
}

dpm_status_t dpm_fedauc_stats(const dpm_fedauc_session_t *s, const dpm_fedauc_ranks_t *rk,
                              const uint8_t *labels, dpm_fedauc_stats_t *out)
{
    (void)s, (void)rk, (void)labels, (void)out;
    return DPM_ERR_UNSUPPORTED;
}

dpm_eps_t dpm_fedauc_adaptive_eps_p(uint64_t sum_rank2, uint64_t maxdev, dpm_eps_t eps)
{
    (void)sum_rank2, (void)maxdev;
    return eps;
}

dpm_status_t dpm_fedauc_rr_flip(const dpm_mech_t *m, const dpm_memo_t *memo, uint64_t id, int *flip)
{
    (void)m, (void)memo, (void)id, (void)flip;
    return DPM_ERR_UNSUPPORTED;
}

#endif /* DPM_MECH_FEDAUC */
