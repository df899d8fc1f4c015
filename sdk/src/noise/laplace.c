/* SPDX-License-Identifier: Apache-2.0 */
/* The fixed-point Laplace mechanism: exact discrete Laplace noise on the value's grid, from a
 * sampler specialised once per mechanism by dpm_laplace_init.
 *
 * ---- The algorithm (the sequential definition: add_seq from FROM_START) -----------------
 * Scale t = num / den (reduced), p = exp(-1/t). It is CKS Algorithm 2 (as dpm_dlap) with its
 * uniform U in [0, num) split in two and its acceptance test reorganised:
 *   n = bitlen(num - 1); K = n - 4 and M = 4 if n > 4, else K = 0 and M = n;
 *   mA = ceil(num / 2^K) (<= 16), sigma = 2^K / num;  U = L + 2^K A, L < 2^K, A < mA.
 *   0. if fewer than 128 bits are unread, refill the source (dpm_rand_reserve_slow).
 *   1. L <- K bits, accepted with probability exp(-L / num) (step L below), else start again
 *      from 0. (K = 0: L = 0, nothing drawn.)
 *   2. S <- 1 bit.
 *   3. A <- M bits; if A >= mA, skip 8 bits (the place of its W byte) and redraw A; accept A
 *      with probability exp(-A sigma) (step A below), else redraw A. (mA = 1: A = 0, no bits.)
 *   4. V <- the number of Bernoulli(exp(-1)) successes before the first failure, a byte each
 *      as in dpm_dlap, but the bytes taken from the back of the stream (dpm_rand_t's end;
 *      the few extra bits a byte may need from the front).
 *   5. if L + 2^K A >= num: start again from 0.
 *   6. Y = floor((L + 2^K A + num V) / den); if Y = 0 and S = 1: start again from 0;
 *      Z = S ? -Y : Y.
 * Steps 1-3 read the front of the stream and step 4 its back, so the fast path can look up
 * the V bytes while it looks up the candidates: neither waits for the other's cursor. With
 * two ends, when the source is refilled decides which bits land where, so that is part of the
 * definition (step 0): the fast path needs 128 bits at hand, and the definition refills where
 * it does.
 * Step L is CKS Algorithm 1 for gamma = L / num. Trial 1, "U1 < gamma", reads U1's first 8
 * bits as a byte u: u num >= 256 L decides U1 >= gamma (trial 1 fails, K = 1: accept); else
 * the rest of U1 is compared lazily with 256 gamma - u. On success trial 2, "U2 < gamma / 2",
 * is read the same way from a byte u2 (failure: K = 2, L rejected), and on success the trials
 * go on from k = 3 (dpm_noise_bexp_from). As gamma < sigma <= 1/8, u decides ~97% of the time.
 * Step A is CKS Algorithm 1 for gamma = A sigma < 1 with all its trials sharing one uniform
 * W: K > k iff W < T_k = gamma^k / k!. These events are nested (T_k decreases) and
 * Pr[W < T_k] = gamma^k / k! = Pr[the first k trials succeed], so K has exactly the law of
 * Algorithm 1 and Pr[K odd] = exp(-gamma). W is read as a byte, then a second byte, then one
 * bit at a time, until its prefix [P, P + 2^-n) places it against T_1..T_4 (for each k:
 * below if (P + 1) 2^-n <= T_k, above if P 2^-n >= T_k): K = 1 + #{k : below} once the first
 * threshold not below is above. If W < T_4, K >= 5 and the trials go on from k = 5 with fresh
 * bits (dpm_noise_bexp_from): Algorithm 1 conditioned on K > 4. A is accepted iff K is odd.
 * T_k = a^k / (b^k k!) for gamma = a / b is compared exactly (256-bit integers, w_bits); the
 * two bytes use floor(2^16 T_k), precomputed exactly by dpm_laplace_init.
 *
 * ---- Why it is exact ------------------------------------------------------------------------
 * L, S, A and V are independent (each from fresh bits, by its own loop; every bit is read once,
 * from the front or from the back, and when a refill happens depends only on how many bits
 * were read, never on their values beyond that). L is accepted with
 * exp(-L / num) and A with exp(-A 2^K / num), both exact CKS tests as above, so (L, A) has
 * weight exp(-(L + 2^K A) / num) on [0, 2^K) x [0, mA); step 5 restricts it to
 * U = L + 2^K A < num (rejection keeps the weights, and every u < num has exactly one (L, A)):
 * Pr[U = u] is proportional to exp(-u / num) on [0, num), independently of V (Pr[V >= v] =
 * exp(-v)) and of the fair S. So X = U + num V has Pr[X = x] proportional to exp(-x / num) on
 * all of N (CKS Prop. 32), Y = floor(X / den) has Pr[Y = y] proportional to
 * exp(-y den / num) = p^y, and the fair sign with "-0" rejected gives Pr[Z = z] proportional
 * to p^|z|. No probability is ever rounded: every random decision compares random bits with
 * an exact rational or is an exact CKS Bernoulli(exp(-rational)). Each loop ends with
 * probability >= 1/2 per round (acceptances >= exp(-1), A's range at least half full); V and
 * the CKS trials are as in dpm_dlap.
 *
 * ---- The fast path (add_fast, av_fast) ------------------------------------------------------
 * dpm_laplace_add evaluates the same definition on two windows of the front, read at once, and
 * one of the back: L, u and S at fixed places, then up to two (A, W byte) candidates, and the
 * four V bytes below end, by table lookups and without branches on the common random
 * outcomes; it consumes exactly the bits the definition reads, once, at the end. The common
 * rejection of L (u shows trial 1 succeeded and u2 that trial 2 fails) and restarts (steps 5 and 6)
 * loop back to a new draw. Whenever a byte does not decide on its own (u and u2 not settling step
 * L, a W byte equal to a threshold's byte, W < T_4, a V byte in {0, 1, 2, 10, 42}, V >= 4, ...) it
 * consumes what is decided and goes on with the sequential code from that point (add_seq,
 * add_from_v): the same bits and the same decisions. 128 bits at the start of a draw (step 0) cover
 * the front's 2 windows and the back's 4 bytes without overlap (22 + 24 + 32 bits at t = 2^17); a
 * second pair of candidates is looked at only while that still holds. When num is a power of two
 * above 16 (always for the tuple mechanism, whose sensitivity is 2^(F+1)), gamma = A / 16 exactly
 * and the byte stage of step A is one lookup in a constant 4 KiB table; otherwise the four
 * thresholds are compared at once in 16-bit lanes of the mechanism's own table.
 * tests/unit/test_noise_exact.c checks the fast path against the sequential one on random and
 * scripted streams, and the tables against exact arithmetic; tests/stat checks the distribution. */
#include "dpm_internal.h"

#include "dpm/expert/noise.h"
#include "noise/laplace_internal.h"
#include "noise/rand_internal.h"
#include "noise/sampler_internal.h"

/* ---- 256-bit integers for the exact thresholds (init and astronomically rare ties) ------- */

typedef struct {
    uint64_t w[4]; /* little-endian limbs */
} wide_t;

static void wide_set(wide_t *x, uint64_t v)
{
    x->w[0] = v;
    x->w[1] = 0;
    x->w[2] = 0;
    x->w[3] = 0;
}

/* x *= m; callers keep the product below 2^256. */
static void wide_mul(wide_t *x, uint64_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t hi;
        uint64_t lo = dpm_mul_u64(x->w[i], m, &hi);
        lo += carry;
        hi += lo < carry;
        x->w[i] = lo;
        carry = hi;
    }
}

static int wide_ge(const wide_t *a, const wide_t *b)
{
    for (int i = 3; i >= 0; i--) {
        if (a->w[i] != b->w[i]) {
            return a->w[i] > b->w[i];
        }
    }
    return 1;
}

static int wide_is_zero(const wide_t *a)
{
    return (a->w[0] | a->w[1] | a->w[2] | a->w[3]) == 0;
}

/* a -= b, for a >= b */
static void wide_sub(wide_t *a, const wide_t *b)
{
    uint64_t borrow = 0;
    for (int i = 0; i < 4; i++) {
        uint64_t d = a->w[i] - b->w[i];
        uint64_t nb = (a->w[i] < b->w[i]) | (d < borrow);
        a->w[i] = d - borrow;
        borrow = nb;
    }
}

/* a <<= 1; callers keep a below 2^255. */
static void wide_shl1(wide_t *a)
{
    for (int i = 3; i > 0; i--) {
        a->w[i] = (a->w[i] << 1) | (a->w[i - 1] >> 63);
    }
    a->w[0] <<= 1;
}

/* T_k = gamma^k / k! for gamma = a / b < 1 (a < b <= 2^56, 1 <= k <= 4) as the exact pair
 * (2^16 T_k's integer part c16, and the state of its binary expansion after 16 bits):
 * *rem = 2^16 a^k - c16 b^k k! in [0, D) with *den = D = b^k k! (< 2^229). */
static uint32_t threshold16(uint64_t a, uint64_t b, uint32_t k, wide_t *rem, wide_t *den)
{
    wide_set(rem, 1);
    wide_set(den, 1);
    for (uint32_t i = 1; i <= k; i++) {
        wide_mul(rem, a);
        wide_mul(den, b);
        wide_mul(den, i);
    }
    uint32_t q = 0; /* restoring division, 16 quotient bits: rem < den throughout */
    for (int i = 0; i < 16; i++) {
        wide_shl1(rem);
        q <<= 1;
        if (wide_ge(rem, den)) {
            wide_sub(rem, den);
            q |= 1u;
        }
    }
    return q;
}

/* ---- the tables (see noise.h for the lane layout) ------------------------------------------ */

/* Lane k (16 bits, k = 1..4) of lanes[A]: bits 0-9 hold h + 512 with h = floor(256 T_k);
 * bit 12 is set when 256 T_k is not an integer (then a W byte equal to h is a tie, else it is
 * "above"); bit 13 when 2^16 T_k is an integer. With w the W byte, subtracting w + 512 (or
 * w + 513) from every lane at once leaves bit 9 set exactly in the lanes with h >= w (h > w):
 * the lanes stay in [256, 768], so no borrow crosses a lane. */
#define LANE_E UINT64_C(0x0001000100010001)   /* 1 in each lane */
#define LANE_BIT UINT64_C(0x0200020002000200) /* bit 9 of each lane */
#define LANE_VALUE UINT64_C(0x03FF03FF03FF03FF)
#define LANE_TIE 12
#define LANE_EXACT16 13
/* An A >= mA: lane 1 always below (h = 256), lanes 2-4 never (h = 0, exact): K = 2, so the
 * candidate is rejected, with no tie. */
#define LANE_INVALID UINT64_C(0x0200020002000300)

/* The lanes for gamma = a / b (a < b); *c16 packs floor(2^16 T_k), k = 1..4. */
static uint64_t lanes_for(uint64_t a, uint64_t b, uint64_t *c16)
{
    uint64_t lanes = 0;
    *c16 = 0;
    uint64_t g = dpm_gcd_u64(a, b);
    a /= g;
    b /= g;
    for (uint32_t k = 1; k <= 4; k++) {
        wide_t rem;
        wide_t den;
        uint32_t c = a == 0 ? 0 : threshold16(a, b, k, &rem, &den);
        int exact16 = a == 0 || wide_is_zero(&rem);
        int exact8 = exact16 && (c & 0xFFu) == 0;
        uint64_t lane = (uint64_t)(c >> 8) + 512u;
        lane |= (uint64_t)!exact8 << LANE_TIE;
        lane |= (uint64_t)exact16 << LANE_EXACT16;
        lanes |= lane << (16u * (k - 1u));
        *c16 |= (uint64_t)c << (16u * (k - 1u));
    }
    return lanes;
}

static uint32_t bit_length(uint64_t x)
{
    uint32_t n = 0;
    for (; x != 0; x >>= 1) {
        n++;
    }
    return n;
}

/* t = sensitivity / (eps / 2^16) = (sensitivity * 2^16) / eps grid units. With sensitivity
 * <= 2^40 the numerator is <= 2^56 = DPM_DLAP_MAX_NUM. Reduced once here, so the uniform draws
 * are as short as possible. */
dpm_status_t dpm_laplace_init(dpm_laplace_t *m, uint64_t sensitivity, dpm_eps_t eps)
{
    if (m == NULL || sensitivity == 0 || sensitivity > DPM_LAPLACE_MAX_SENSITIVITY || eps == 0 ||
        eps > DPM_EPS_MAX_Q16) {
        return DPM_ERR_PARAM;
    }
    dpm_laplace_t t;
    memset(&t, 0, sizeof(t));
    uint64_t num = sensitivity << DPM_EPS_FRAC_BITS;
    uint64_t g = dpm_gcd_u64(num, eps);
    t.scale_num = num / g;
    t.scale_den = eps / g;
    t.sensitivity = sensitivity;
    t.eps = eps;
    t.den_recip = UINT64_MAX / t.scale_den;
    uint32_t n = bit_length(t.scale_num - 1u);
    t.low_bits = (uint8_t)(n > DPM_LAPLACE_A_BITS ? n - DPM_LAPLACE_A_BITS : 0);
    t.a_bits = (uint8_t)(n - t.low_bits);
    uint64_t unit = UINT64_C(1) << t.low_bits;
    t.lu_bits = (uint8_t)(t.low_bits != 0 ? t.low_bits + 8u : 0u);
    t.low_mask = unit - 1u;
    /* num = 2^(low_bits + 4): gamma_A = A / 16, the constant table's */
    t.fixed16 = (uint8_t)((t.scale_num & (t.scale_num - 1u)) == 0 && t.low_bits != 0);
    t.a_count = (uint8_t)((t.scale_num + unit - 1u) >> t.low_bits);
    for (uint32_t a = 0; a < DPM_LAPLACE_A_COUNT; a++) {
        t.lanes[a] = LANE_INVALID;
        if (a < t.a_count) {
            t.lanes[a] = lanes_for((uint64_t)a << t.low_bits, t.scale_num, &t.thr16[a]);
        }
    }
    *m = t;
    return DPM_OK;
}

/* ---- the sequential definition ----------------------------------------------------------- */

#define FROM_START 0u  /* step 0 from scratch */
#define FROM_U 1u      /* L and u drawn, u not deciding step L */
#define FROM_A 2u      /* L accepted and S drawn */
#define DRAW_BITS 128u /* step 0: the unread bits a draw starts with */

/* Step L after L and u (U1's first byte) are drawn: *accept with probability exp(-L / num). */
static dpm_status_t step_l_from(const dpm_laplace_t *m, dpm_rand_t *r, uint64_t low, uint64_t u,
                                int *accept)
{
    uint64_t num = m->scale_num;
    uint64_t lhs = u * num;  /* < 2^64 */
    uint64_t rhs = low << 8; /* < 32 num */
    if (lhs >= rhs) {
        *accept = 1; /* U1 >= u / 256 >= L / num: trial 1 fails, K = 1 */
        return DPM_OK;
    }
    uint64_t d = rhs - lhs; /* U1 < L / num iff U1's remaining bits are below d / num */
    int success = 1;
    if (d < num) {
        dpm_status_t st = dpm_noise_bern_lazy(r, d, num, &success);
        if (st != DPM_OK) {
            return st;
        }
    }
    if (!success) {
        *accept = 1;
        return DPM_OK;
    }
    /* trial 2, "U2 < gamma / 2", the same way: a byte u2 first */
    uint64_t u2;
    dpm_status_t st = dpm_rand_take_bits(r, 8, &u2);
    if (st != DPM_OK) {
        return st;
    }
    lhs = u2 * num; /* u2 num >= 128 L: U2 >= u2 / 256 >= L / (2 num) */
    rhs = low << 7; /* < 16 num */
    if (lhs >= rhs) {
        *accept = 0; /* trial 2 fails: K = 2 */
        return DPM_OK;
    }
    d = rhs - lhs;
    success = 1;
    if (d < num) {
        st = dpm_noise_bern_lazy(r, d, num, &success);
        if (st != DPM_OK) {
            return st;
        }
    }
    if (!success) {
        *accept = 0;
        return DPM_OK;
    }
    return dpm_noise_bexp_from(r, low, num, 3, accept);
}

/* Step 1: L and its test (u first, from the bits at hand or drawn now). */
static dpm_status_t step_l(const dpm_laplace_t *m, dpm_rand_t *r, uint32_t from, uint64_t lu,
                           uint64_t *low, int *accept)
{
    const uint32_t kb = m->low_bits;
    if (kb == 0) {
        *low = 0;
        *accept = 1;
        return DPM_OK;
    }
    if (from == FROM_START) {
        dpm_status_t st = dpm_rand_take_bits(r, kb + 8u, &lu); /* L, then u */
        if (st != DPM_OK) {
            return st;
        }
    }
    *low = lu & ((UINT64_C(1) << kb) - 1u);
    return step_l_from(m, r, *low, lu >> kb, accept);
}

#define BELOW 1
#define ABOVE 2

/* Statuses of T_1..T_4 decided: K is known (0 if not yet). */
static uint32_t k_of(const int *status)
{
    uint32_t below = 0;
    while (below < 4 && status[below] == BELOW) {
        below++;
    }
    if (below == 4) {
        return 5; /* K >= 5 */
    }
    return status[below] == ABOVE ? below + 1u : 0;
}

/* Bits beyond the first 16 of W, one at a time, against the exact T_k still undecided. Out of
 * line: its wide remainders (368 bytes on x86_64) would otherwise sit in every add_seq frame,
 * under the rest of the sampler's chain too (make size, the one-call stack). */
static DPM_NOINLINE dpm_status_t w_bits(const dpm_laplace_t *m, dpm_rand_t *r, uint64_t a_val,
                                        int *status)
{
    uint64_t a = a_val << m->low_bits;
    uint64_t b = m->scale_num;
    uint64_t g = dpm_gcd_u64(a, b);
    a /= g;
    b /= g;
    wide_t rem[4];
    wide_t den[4];
    for (uint32_t k = 0; k < 4; k++) {
        if (status[k] == 0) {
            /* W's first 16 bits equal floor(2^16 T_k): the rest of T_k is rem / den */
            (void)threshold16(a, b, k + 1u, &rem[k], &den[k]);
        }
    }
    while (k_of(status) == 0) {
        uint64_t bit;
        dpm_status_t st = dpm_rand_take_bits(r, 1, &bit);
        if (st != DPM_OK) {
            return st;
        }
        for (uint32_t k = 0; k < 4; k++) {
            if (status[k] != 0) {
                continue;
            }
            wide_shl1(&rem[k]);
            int t_bit = wide_ge(&rem[k], &den[k]);
            if (t_bit) {
                wide_sub(&rem[k], &den[k]);
            }
            if ((int)bit != t_bit) {
                status[k] = bit ? ABOVE : BELOW;
            } else if (wide_is_zero(&rem[k])) {
                status[k] = ABOVE; /* T_k's expansion ended: W >= T_k */
            }
        }
    }
    return DPM_OK;
}

/* Step A for a candidate a < mA: *accept with probability exp(-a sigma). */
static dpm_status_t step_a(const dpm_laplace_t *m, dpm_rand_t *r, uint64_t a_val, int *accept)
{
    uint64_t lanes = m->lanes[a_val];
    uint64_t c16 = m->thr16[a_val];
    int status[4];
    uint64_t w8;
    dpm_status_t st = dpm_rand_take_bits(r, 8, &w8);
    if (st != DPM_OK) {
        return st;
    }
    for (uint32_t k = 0; k < 4; k++) {
        uint64_t lane = lanes >> (16u * k);
        uint64_t h = (lane & 0x3FFu) - 512u; /* floor(256 T_k) */
        int tie = (int)((lane >> LANE_TIE) & 1u);
        status[k] = w8 < h ? BELOW : (w8 > h || !tie) ? ABOVE : 0;
    }
    uint32_t k_val = k_of(status);
    if (k_val == 0) {
        uint64_t w8b;
        st = dpm_rand_take_bits(r, 8, &w8b);
        if (st != DPM_OK) {
            return st;
        }
        uint64_t w16 = (w8 << 8) | w8b;
        for (uint32_t k = 0; k < 4; k++) {
            if (status[k] != 0) {
                continue;
            }
            uint64_t c = (c16 >> (16u * k)) & 0xFFFFu;
            int exact16 = (int)((lanes >> (16u * k + LANE_EXACT16)) & 1u);
            status[k] = w16 < c ? BELOW : (w16 > c || exact16) ? ABOVE : 0;
        }
        k_val = k_of(status);
        if (k_val == 0) {
            st = w_bits(m, r, a_val, status);
            if (st != DPM_OK) {
                return st;
            }
            k_val = k_of(status);
        }
    }
    if (k_val < 5) {
        *accept = (int)(k_val & 1u);
        return DPM_OK;
    }
    uint64_t a = a_val << m->low_bits;
    uint64_t g = dpm_gcd_u64(a, m->scale_num);
    return dpm_noise_bexp_from(r, a / g, m->scale_num / g, 5, accept);
}

/* Step 1. */
static dpm_status_t stage_a(const dpm_laplace_t *m, dpm_rand_t *r, uint64_t *a_out)
{
    if (m->a_count == 1) {
        *a_out = 0; /* A = 0 always, and exp(-0) = 1: nothing to draw */
        return DPM_OK;
    }
    for (;;) {
        uint64_t a_val;
        int accept;
        dpm_status_t st = dpm_rand_take_bits(r, m->a_bits, &a_val);
        if (st != DPM_OK) {
            return st;
        }
        if (a_val >= m->a_count) {
            st = dpm_rand_take_bits(r, 8, &a_val); /* its W byte, unused */
            if (st != DPM_OK) {
                return st;
            }
            continue;
        }
        st = step_a(m, r, a_val, &accept);
        if (st != DPM_OK) {
            return st;
        }
        if (accept) {
            *a_out = a_val;
            return DPM_OK;
        }
    }
}

/* The sequential definition from a given point of a draw to the output: the reference (from
 * FROM_START) and the fast path's fallback, entered by a tail call with what is decided packed
 * in `state` (from | S << 8) and L in lu (with u above it for FROM_U: L | u << low_bits). */
static DPM_NOINLINE dpm_status_t add_seq(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value,
                                         int64_t *out, uint64_t state, uint64_t lu)
{
    const uint32_t kb = m->low_bits;
    if (m->a_bits > DPM_LAPLACE_A_BITS || (uint32_t)m->a_count - 1u >= DPM_LAPLACE_A_COUNT ||
        kb > 56u - DPM_LAPLACE_A_BITS) {
        return DPM_ERR_PARAM; /* a corrupted mechanism: the tables would be read out of bounds */
    }
    uint32_t from = (uint32_t)(state & 3u);
    uint64_t sign = (state >> 8) & 1u;
    uint64_t low = lu & ((UINT64_C(1) << kb) - 1u); /* FROM_A */
    for (;;) {
        dpm_status_t st = from == FROM_START ? dpm_rand_reserve_slow(r, DRAW_BITS) : DPM_OK;
        if (st != DPM_OK) {
            return st;
        }
        if (from <= FROM_U) {
            int accept = 0;
            st = step_l(m, r, from, lu, &low, &accept);
            if (st == DPM_OK && !accept) {
                from = FROM_START; /* L rejected: a new draw */
                continue;
            }
        }
        if (from <= FROM_U && st == DPM_OK) {
            st = dpm_rand_take_bits(r, 1, &sign);
        }
        uint64_t a_val = 0;
        uint64_t v = 0;
        if (st == DPM_OK) {
            st = stage_a(m, r, &a_val);
        }
        if (st == DPM_OK) {
            st = dpm_noise_geometric_exp1_back(r, 0, &v);
        }
        if (st != DPM_OK) {
            return st;
        }
        from = FROM_START;
        uint64_t u = low + (a_val << kb);
        if (u >= m->scale_num) {
            continue; /* step 5 */
        }
        int huge;
        uint64_t y = dpm_noise_dlap_magnitude(u, v, m->scale_num, m->scale_den, &huge);
        if (y == 0 && sign != 0 && !huge) {
            continue; /* "-0" */
        }
        return dpm_noise_add_magnitude(value, sign != 0, y, huge, out);
    }
}

/* ---- the fast path ---------------------------------------------------------------------- */

/* Byte stage of step A when gamma = A / 16 exactly (num a power of two above 16), for the
 * 12 bits A | w << 4 of a candidate (w its W byte): 1 (K = 1 or 3: accept), 0 (K = 2 or
 * 4: reject) or 2 (the byte does not decide). Two bits an outcome, word w holding A's at bits
 * 2A and 2A + 1: 1 KiB of flash instead of a byte each (4 KiB; issue 32's 120 KiB budget),
 * for one shift more per candidate. Computed from the exact T_k = A^k / (16^k k!);
 * tests/unit/test_noise_exact.c recomputes every entry. */
const uint32_t dpm_laplace_pow2_outcome[256] = {
    0xAAAAAAA9, 0xAAA80951, 0xAA802541, 0xAA009541, 0xA8005581, 0xA0025501, 0xA0015501, 0x80095501,
    0x80055401, 0x00055401, 0x00255401, 0x00155401, 0x00155801, 0x00955001, 0x00555001, 0x00555001,
    0x00555005, 0x00555005, 0x01554005, 0x01554005, 0x01554005, 0x01554005, 0x09554005, 0x05554005,
    0x05558005, 0x05550005, 0x05550005, 0x05550005, 0x25550005, 0x15550005, 0x15550005, 0x15550005,
    0x15540015, 0x15540015, 0x15540015, 0x95540015, 0x55540015, 0x55540015, 0x55540015, 0x55540015,
    0x55580015, 0x55500015, 0x55500015, 0x55500015, 0x55500015, 0x55500015, 0x55500015, 0x55500015,
    0x55500055, 0x55500055, 0x55400055, 0x55400055, 0x55400055, 0x55400055, 0x55400055, 0x55400055,
    0x55400055, 0x55400055, 0x55400055, 0x55400055, 0x55800055, 0x55000055, 0x55000055, 0x55000055,
    0x55000155, 0x55000155, 0x55000155, 0x55000155, 0x55000155, 0x55000155, 0x55000155, 0x55000155,
    0x54000155, 0x54000155, 0x54000155, 0x54000155, 0x54000155, 0x54000155, 0x54000155, 0x54000155,
    0x54000555, 0x54000555, 0x54000555, 0x54000555, 0x58000555, 0x50000555, 0x50000555, 0x50000555,
    0x50000555, 0x50000555, 0x50000555, 0x50000555, 0x50000555, 0x50000555, 0x50000555, 0x50000555,
    0x50001555, 0x50001555, 0x40001555, 0x40001555, 0x40001555, 0x40001555, 0x40001555, 0x40001555,
    0x40001555, 0x40001555, 0x40001555, 0x40001555, 0x40001555, 0x40001555, 0x40001555, 0x40001555,
    0x80005555, 0x00005555, 0x00005555, 0x00005555, 0x00005555, 0x00005555, 0x00005555, 0x00005555,
    0x00005555, 0x00005555, 0x00005555, 0x00005555, 0x00005555, 0x00005555, 0x00005555, 0x00005555,
    0x00015555, 0x00015555, 0x00015555, 0x00015555, 0x00015555, 0x00015555, 0x00015555, 0x00015555,
    0x00015555, 0x00015555, 0x00015555, 0x00015555, 0x00015555, 0x00015555, 0x00015555, 0x00015555,
    0x00055555, 0x00055555, 0x00055555, 0x00055555, 0x00055555, 0x00055555, 0x00055555, 0x00055555,
    0x00055555, 0x00055555, 0x00055555, 0x00055555, 0x00055555, 0x00055555, 0x00055555, 0x00055555,
    0x00155555, 0x00155555, 0x00155555, 0x00155555, 0x00155555, 0x00155555, 0x00155555, 0x00155555,
    0x00155555, 0x00155555, 0x00155555, 0x00155555, 0x00155555, 0x00155555, 0x00155555, 0x00155555,
    0x00555555, 0x00555555, 0x00555555, 0x00555555, 0x00555555, 0x00555555, 0x00555555, 0x00555555,
    0x00555555, 0x00555555, 0x00555555, 0x00555555, 0x00555555, 0x00555555, 0x00555555, 0x00555555,
    0x01555555, 0x01555555, 0x01555555, 0x01555555, 0x01555555, 0x01555555, 0x01555555, 0x01555555,
    0x01555555, 0x01555555, 0x01555555, 0x01555555, 0x01555555, 0x01555555, 0x01555555, 0x01555555,
    0x05555555, 0x05555555, 0x05555555, 0x05555555, 0x05555555, 0x05555555, 0x05555555, 0x05555555,
    0x05555555, 0x05555555, 0x05555555, 0x05555555, 0x05555555, 0x05555555, 0x05555555, 0x05555555,
    0x15555555, 0x15555555, 0x15555555, 0x15555555, 0x15555555, 0x15555555, 0x15555555, 0x15555555,
    0x15555555, 0x15555555, 0x15555555, 0x15555555, 0x15555555, 0x15555555, 0x15555555, 0x15555555,
    0x55555555, 0x55555555, 0x55555555, 0x55555555, 0x55555555, 0x55555555, 0x55555555, 0x55555555,
    0x55555555, 0x55555555, 0x55555555, 0x55555555, 0x55555555, 0x55555555, 0x55555555, 0x55555555};

static inline uint64_t mulhi_u64(uint64_t a, uint64_t b)
{
#if defined(__SIZEOF_INT128__)
    __extension__ typedef unsigned __int128 u128;
    return (uint64_t)(((u128)a * b) >> 64);
#else
    uint64_t hi;
    (void)dpm_mul_u64(a, b, &hi);
    return hi;
#endif
}

/* floor(x / den) from the reciprocal floor((2^64 - 1) / den): the estimate is at most one
 * short (x (2^64 - den recip) / (den 2^64) < 1), and one comparison fixes it. */
static inline uint64_t div_den(const dpm_laplace_t *m, uint64_t x)
{
    uint64_t q = mulhi_u64(x, m->den_recip);
    return q + (uint64_t)(x - q * m->scale_den >= m->scale_den);
}

/* One (A, W byte) candidate from the low a_bits + 8 bits of `bits`: the byte stage of step A.
 * Returns a_val | 0x100 to accept (K = 1 or 3), a_val | 0x200 (or 0x300) when the byte does
 * not decide, a_val to reject (K = 2 or 4, or A >= mA). With the lanes (lane layout above)
 * the four thresholds are compared at once; they decrease, so the lanes with W < T_k (h > w)
 * are a prefix and K = 1 + their number. */
static DPM_ALWAYS_INLINE uint32_t candidate(const dpm_laplace_t *m, uint64_t bits, uint32_t a_bits,
                                            uint32_t fixed16)
{
    if (fixed16) { /* a_bits = 4 and gamma = A / 16 */
        uint32_t a_val = (uint32_t)bits & 0xFu;
        uint32_t outcome = dpm_laplace_pow2_outcome[(bits >> 4) & 0xFFu] >> (a_val * 2u) & 3u;
        return a_val | outcome << 8;
    }
    uint64_t a_val = bits & ((UINT64_C(1) << a_bits) - 1u);
    uint64_t w = (bits >> a_bits) & 0xFFu;
    uint64_t lanes = m->lanes[a_val];
    uint64_t v = (lanes & LANE_VALUE) - w * LANE_E;
    uint64_t gt = (v - LANE_E) & LANE_BIT;                         /* h > w: W < T_k */
    uint64_t tie = v & ~gt & (lanes >> (LANE_TIE - 9)) & LANE_BIT; /* h == w, T_k not a byte */
    uint64_t accept = (uint64_t)(gt == 0) | (uint64_t)(gt == UINT64_C(0x0000000002000200));
    uint64_t more = (uint64_t)(tie != 0) | (uint64_t)(gt == LANE_BIT);
    return (uint32_t)(a_val | accept << 8 | more << 9);
}

/* V from the V bytes with classes c0..c3 (see dpm_noise_bexp1_class), index
 * c0 | c1 << 2 | c2 << 4 | c3 << 6: bits 0-2 the number of leading successes, bit 3 set when
 * a failure ends them within the four bytes (not when a byte needs more bits, nor after four
 * successes). */
static const uint8_t v_table[256] = {
    8, 9, 0, 0, 8, 10, 0, 0, 8, 1, 0, 0,  8, 1, 0, 0, 8, 9,  0, 0, 8, 11, 0, 0,  8, 1, 0, 0, 8,
    1, 0, 0, 8, 9, 0,  0, 8, 2, 0, 0, 8,  1, 0, 0, 8, 1, 0,  0, 8, 9, 0,  0, 8,  2, 0, 0, 8, 1,
    0, 0, 8, 1, 0, 0,  8, 9, 0, 0, 8, 10, 0, 0, 8, 1, 0, 0,  8, 1, 0, 0,  8, 9,  0, 0, 8, 4, 0,
    0, 8, 1, 0, 0, 8,  1, 0, 0, 8, 9, 0,  0, 8, 2, 0, 0, 8,  1, 0, 0, 8,  1, 0,  0, 8, 9, 0, 0,
    8, 2, 0, 0, 8, 1,  0, 0, 8, 1, 0, 0,  8, 9, 0, 0, 8, 10, 0, 0, 8, 1,  0, 0,  8, 1, 0, 0, 8,
    9, 0, 0, 8, 3, 0,  0, 8, 1, 0, 0, 8,  1, 0, 0, 8, 9, 0,  0, 8, 2, 0,  0, 8,  1, 0, 0, 8, 1,
    0, 0, 8, 9, 0, 0,  8, 2, 0, 0, 8, 1,  0, 0, 8, 1, 0, 0,  8, 9, 0, 0,  8, 10, 0, 0, 8, 1, 0,
    0, 8, 1, 0, 0, 8,  9, 0, 0, 8, 3, 0,  0, 8, 1, 0, 0, 8,  1, 0, 0, 8,  9, 0,  0, 8, 2, 0, 0,
    8, 1, 0, 0, 8, 1,  0, 0, 8, 9, 0, 0,  8, 2, 0, 0, 8, 1,  0, 0, 8, 1,  0, 0,
};

/* What the draw functions below return to ask dpm_laplace_add for a new draw (steps 5 and 6, a
 * refill at the start): a loop there, not a call back into it, so the stack stays bounded
 * whatever the number of rejections, at every optimization level. Not a dpm_status_t. */
#define LAP_AGAIN ((dpm_status_t)1)

/* Too few unread bits at the start of a draw: refill now and start again. */
static DPM_NOINLINE dpm_status_t add_refill(dpm_rand_t *r);

/* Step 4 went on past the V bytes of the window: finish V sequentially, then steps 5-6. */
static DPM_NOINLINE dpm_status_t add_from_v(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value,
                                            int64_t *out, uint64_t u, uint64_t state)
{
    uint64_t sign = (state >> 8) & 1u;
    uint64_t v;
    dpm_status_t st = dpm_noise_geometric_exp1_back(r, state >> 9, &v);
    if (st != DPM_OK) {
        return st;
    }
    if (u >= m->scale_num) {
        return LAP_AGAIN; /* step 5: a new draw */
    }
    int huge;
    uint64_t y = dpm_noise_dlap_magnitude(u, v, m->scale_num, m->scale_den, &huge);
    if (y == 0 && sign != 0 && !huge) {
        return LAP_AGAIN; /* "-0": a new draw */
    }
    return dpm_noise_add_magnitude(value, sign != 0, y, huge, out);
}

/* V from the four V bytes at the bottom of `bits`: v_table's entry. */
static DPM_ALWAYS_INLINE uint32_t v_bytes(uint64_t bits)
{
    uint32_t w = (uint32_t)bits;
    uint32_t q = dpm_noise_bexp1_class[w & 0xFFu];
    q |= (uint32_t)dpm_noise_bexp1_class[(w >> 8) & 0xFFu] << 2;
    q |= (uint32_t)dpm_noise_bexp1_class[(w >> 16) & 0xFFu] << 4;
    q |= (uint32_t)dpm_noise_bexp1_class[w >> 24] << 6;
    return v_table[q];
}

/* Steps 3-6 (from A) with L and S decided, on the window x of the front at cur and the back
 * window (>= 24 + 32 bits unread between them): the candidates are looked up and the V bytes
 * classified at once; the bits are consumed at the end. Anything a byte does not decide is finished
 * by add_seq or add_from_v (tail calls, so that this path needs no stack frame); a restart (steps 5
 * and 6) sets *again and the caller starts a new draw. */
static DPM_ALWAYS_INLINE dpm_status_t av_fast(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value,
                                              int64_t *out, uint64_t low, uint64_t sign,
                                              uint32_t cur, uint64_t x, uint32_t fixed16,
                                              int *again)
{
    *again = 0;
    const uint32_t ab = fixed16 ? DPM_LAPLACE_A_BITS : m->a_bits;
    const uint32_t clen = ab + 8u;
    const uint32_t kb = m->low_bits;
    uint64_t a_val = 0;
    const uint32_t vt = v_bytes(dpm_rand_back_window(r));
    if (fixed16 || m->a_count > 1) {
        for (;;) {
            uint32_t o1 = candidate(m, x, ab, fixed16);
            uint32_t o2 = candidate(m, x >> clen, ab, fixed16);
            /* the second only if the first is rejected: masks, as that is random */
            uint32_t sel = 0u - (uint32_t)((o1 >> 8) == 0);
            uint32_t o = (o1 & ~sel) | (o2 & sel);
            if (DPM_LIKELY((o >> 8) == 1u)) {
                a_val = o & 0xFu;
                cur += clen + (clen & sel);
                break;
            }
            /* two more need a window, and their 24 bits below the back's 32 (57 >= 24 + 32) */
            if ((o >> 8) != 0 || r->end - cur < 2u * clen + DPM_RAND_WINDOW_BITS) {
                /* a byte does not decide; or both rejected and the bits run short */
                cur += (o >> 8) == 0 ? 2u * clen : 0u;
                dpm_rand_skip(r, cur - r->cur);
                return add_seq(m, r, value, out, FROM_A | sign << 8, low);
            }
            cur += 2u * clen; /* both rejected: two more */
            x = dpm_rand_window_at(r, cur);
        }
    }
    uint64_t v = vt & 7u;
    dpm_rand_skip(r, cur - r->cur);
    if (DPM_UNLIKELY((vt & 8u) == 0)) { /* V >= 4, or a V byte needs more bits */
        r->end -= 8u * (uint32_t)v;
        return add_from_v(m, r, value, out, low + (a_val << kb), sign << 8 | v << 9);
    }
    r->end -= 8u * (uint32_t)v + 8u;
    uint64_t xx = low + (a_val << kb);
    if (!fixed16 && DPM_UNLIKELY(xx >= m->scale_num)) { /* fixed16: 16 A values fill num */
        *again = 1;                                     /* step 5: a new draw */
        return DPM_OK;
    }
    xx += m->scale_num * v; /* < 4 num <= 2^58 */
    uint64_t y = m->scale_den == 1 ? xx : div_den(m, xx);
    if (DPM_UNLIKELY(y == 0 && sign != 0)) {
        *again = 1; /* "-0": a new draw */
        return DPM_OK;
    }
    /* value +- y, y < 2^58: overflow iff value and +-y share a sign that the sum lacks */
    uint64_t z = (y ^ (0u - sign)) + sign;
    uint64_t sum = (uint64_t)value + z;
    if (DPM_UNLIKELY((((uint64_t)value ^ sum) & (z ^ sum)) >> 63 != 0)) {
        return DPM_ERR_RANGE;
    }
    *out = sum <= (uint64_t)INT64_MAX ? (int64_t)sum : -(int64_t)(UINT64_MAX - sum) - 1;
    return DPM_OK;
}

/* A draw: L, u and S at fixed places from one window of the front and the candidates from a
 * second one, both read at once, the V bytes from the back; then av_fast. A draw starts with
 * DRAW_BITS unread (refilled early if needed: the same bytes a take would fetch, only the fill()
 * call comes earlier). */
static DPM_ALWAYS_INLINE dpm_status_t add_fast(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value,
                                               int64_t *out, uint32_t fixed16)
{
    const uint32_t kb = m->low_bits;
    const uint32_t lbits = m->lu_bits; /* L and u */
    for (;;) {
        uint32_t cur = r->cur;
        if (DPM_UNLIKELY(r->end - cur < DRAW_BITS)) {
            return add_refill(r);
        }
        uint32_t at = lbits + 1u;                     /* <= DPM_RAND_WINDOW_BITS: add_dispatch */
        uint64_t lo = dpm_rand_window_at(r, cur);     /* L, u, S */
        uint64_t x = dpm_rand_window_at(r, cur + at); /* candidates */
        uint64_t low = lo & m->low_mask;
        uint64_t sign = (lo >> lbits) & 1u;
        if (kb != 0) {
            /* step L's byte; num = 2^(kb + 4) (fixed16) makes u num >= 256 L read
             * u 2^kb >= 16 L */
            uint64_t num = m->scale_num;
            uint64_t u = (lo >> kb) & 0xFFu;
            int accept = fixed16 ? (u << kb) >= (low << 4) : u * num >= (low << 8);
            if (DPM_UNLIKELY(!accept)) {
                /* trial 1 succeeded for sure, and u2 says trial 2 fails: L is rejected
                 * (K = 2), and as L comes first that is a new draw */
                uint64_t u2 = (lo >> (kb + 8u)) & 0xFFu;
                int sure = fixed16 ? ((u + 1u) << kb) <= (low << 4) : (low << 8) - u * num >= num;
                int fail2 = fixed16 ? (u2 << kb) >= (low << 3) : u2 * num >= (low << 7);
                if (sure && fail2 && kb + 16u <= DPM_RAND_WINDOW_BITS) {
                    dpm_rand_skip(r, kb + 16u);
                    continue;
                }
                dpm_rand_skip(r, lbits);
                return add_seq(m, r, value, out, FROM_U, lo & ((UINT64_C(1) << lbits) - 1u));
            }
        }
        int again;
        dpm_status_t st = av_fast(m, r, value, out, low, sign, cur + at, x, fixed16, &again);
        if (DPM_LIKELY(!again)) {
            return st;
        }
    }
}

/* The two specialisations: num a power of two above 16 (a_bits = 4, gamma = A / 16: the
 * constant table, inlined into dpm_laplace_add) or any other (the lanes). */
static DPM_NOINLINE dpm_status_t add_general(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value,
                                             int64_t *out)
{
    if (m->a_bits > DPM_LAPLACE_A_BITS) {
        return DPM_ERR_PARAM; /* a corrupted mechanism: the lanes would be read out of bounds */
    }
    return add_fast(m, r, value, out, 0);
}

static inline dpm_status_t add_dispatch(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value,
                                        int64_t *out)
{
    if (DPM_UNLIKELY(m->lu_bits + 1u > DPM_RAND_WINDOW_BITS || m->low_bits > m->lu_bits)) {
        /* scale above 2^52 (L, u and S need more than one window), or corrupted */
        return add_seq(m, r, value, out, FROM_START, 0);
    }
    if (m->fixed16) {
        return add_fast(m, r, value, out, 1);
    }
    return add_general(m, r, value, out);
}

static DPM_NOINLINE dpm_status_t add_refill(dpm_rand_t *r)
{
    dpm_status_t st = dpm_rand_reserve_slow(r, DRAW_BITS); /* consumes nothing */
    return st == DPM_OK ? LAP_AGAIN : st;
}

/* Enough of a mechanism as dpm_laplace_init leaves it for the fast path to stay in bounds
 * (one branch; add_seq checks a_count itself before it indexes the tables). */
static inline dpm_status_t laplace_check(const dpm_laplace_t *m, const dpm_rand_t *r,
                                         const int64_t *out)
{
    if (m == NULL || r == NULL || out == NULL) {
        return DPM_ERR_PARAM;
    }
    uint32_t bad = (uint32_t)(r->rng == NULL) | (uint32_t)(m->scale_den == 0) |
                   (uint32_t)((m->scale_num - 1u) >= DPM_DLAP_MAX_NUM) |
                   (uint32_t)((m->low_bits | m->a_bits) > 56u - DPM_LAPLACE_A_BITS);
    return bad ? DPM_ERR_PARAM : r->error;
}

dpm_status_t dpm_laplace_add(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value, int64_t *out)
{
    /* an unbound or failed source has no unread bits: the refill path reports it */
    if (m == NULL || r == NULL || out == NULL ||
        ((uint32_t)(m->scale_den == 0) | (uint32_t)(m->scale_num - 1u >= DPM_DLAP_MAX_NUM))) {
        return DPM_ERR_PARAM;
    }
    dpm_status_t st;
    do {
        st = add_dispatch(m, r, value, out);
    } while (st == LAP_AGAIN);
    return st;
}

dpm_status_t dpm_laplace_add_reference(const dpm_laplace_t *m, dpm_rand_t *r, int64_t value,
                                       int64_t *out)
{
    dpm_status_t st = laplace_check(m, r, out);
    if (st != DPM_OK) {
        return st;
    }
    return add_seq(m, r, value, out, FROM_START, 0);
}
