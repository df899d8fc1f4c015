/* SPDX-License-Identifier: Apache-2.0 */
/* FedAUC: the global AUC from rank contributions, in two rounds (Sun et al., "Differentially
 * Private AUC Computation in Vertical Federated Learning"; sdk/docs/fedauc.md).
 *
 * Round 1 (no ε): the device quantizes its local scores to the campaign's score_bits, puts them
 * in a uniformly random order (Fisher-Yates with unbiased draws from the device CSPRNG; the
 * permutation stays in a caller-owned buffer) and uploads them with a fresh random 16-byte
 * upload token (FedaucUpload). The collector pools the M scores of every upload, ranks them
 * (0 = lowest; tied scores share their mid-rank) and answers each upload with the DOUBLED
 * mid-ranks R = 2 r of its scores, in upload order (FedaucRankReply): ties stay integers.
 * Round 2: the device validates the reply, maps the ranks back to its examples and reports
 *     localP = sum y_i,  localSum2 = sum R_i y_i  (= 2 localSum)  and localN = n - localP
 * perturbed by one of the mechanisms below (a Report with a FedaucBody). The server sums them:
 *     AUC = (localSum - P (P - 1) / 2) / (P N),  localSum = sum localSum2 / 2,
 * the tie-aware Mann-Whitney AUC (host-sim/estimate/fedauc.h).
 *
 * What each message reveals. The upload: the device's scores (quantized) and their number n,
 * NOT which example has which score (the order is uniformly random and the permutation never
 * leaves the device) and nothing about labels: the scores are NOT protected (as in the paper,
 * where the scores are assumed non-sensitive; a server can guess labels from high scores, spec
 * Table 8). The token is 16 random bytes drawn for this upload, not an identity: it only lets
 * the reply and the report name their upload. The reply reveals the other devices' scores only
 * through this device's ranks. The report: the perturbed statistics below (ε-label-DP).
 *
 * Privacy unit: ONE example's label (label-DP), as roc_hist. Changing y_i moves localP by 1 and
 * localSum2 by R_i. Every sensitivity is computed from the ranks the device RECEIVED (after the
 * checks of dpm_fedauc_accept), never from the campaign or the server's word, so the guarantee
 * holds whatever ranks a malicious server returns (tests/stat/test_fedauc_privacy.c).
 *   fedauc_rr: each label is flipped by binary randomized response (keep probability
 *     keep / 2^32 of dpm_rr_init), ONCE per example: the flip is memoized, derived from the
 *     device secret and the example's stable id (dpm/expert/memo.h), so re-evaluating the same
 * example gives the same flip. The report holds the exact statistics of the flipped labels: ε = the
 * RR's eps_implemented per example, however many reports use the same flips. fedauc_lap: the true
 * statistics plus exact discrete Laplace noise, ε split into eps_p (on localP, sensitivity 1) and
 * eps_s = ε - eps_p (on the sum), Q16.16 integers that add up to exactly the campaign's ε (so
 * eps_implemented == ε): LOCAL  (LocalLaplace)  localSum2 + DLap(Δ / eps_s), Δ = the largest
 * received R_i; GLOBAL (GlobalLaplace) the same with Δ = 2 (M - 1), every received R_i <= 2 (M -
 * 1); ORTHOGONAL / ADAPTIVE: localP + DLap(1 / eps_p) and T = sum (n R_i - S) y_i + DLap(D /
 * eps_s),  S = sum R_i,  D = max |n R_i - S|, the integer form (T = 2 n <v', y>) of the paper's
 * orthogonal decomposition r = r̄ u + v': the server rebuilds localSum2' = (T' + S localP') / n.
 * ORTHOGONAL uses the campaign's share for eps_p; ADAPTIVE picks eps_p per device, eps_p = floor(β
 * ε) with β = S^(2/3) / (S^(2/3) + D^(2/3)) (the paper's a^(2/3) / (a^(2/3) + b^(2/3)) with a = S /
 * 2n, b = D / 2n), computed exactly in integers: the largest eps_p with eps_p^3 D^2 <= (ε -
 * eps_p)^3 S^2, clamped to [1, ε - 1] (ε in Q16.16 units). The split depends on the ranks only
 * (public), and eps_p + eps_s = ε whatever it rounds to, so no rounding can exceed ε. When D = 0
 * (all ranks equal) T is 0 for every labelling: all of ε goes to localP and T is sent without
 * noise. A sum whose sensitivity is 0 (every rank 0) is the same for every labelling and is sent
 *     without noise.
 *   Each report is charged through the ledger like every other report (dpm_device_report_fedauc,
 *   charge before perturbing): fedauc_lap spends ε per report; for fedauc_rr the ledger's count
 *   is an upper bound (the memoized flips make the true loss ε once per example and secret).
 *   Not protected: the scores (above), n, and which devices take part.
 *
 * Labels never decide whether a report is made: a device whose examples are all of one class
 * reports like any other (refusing would reveal its labels without noise, and drop the paper's
 * one-example-per-device partition). Devices without examples (n = 0) cannot upload.
 *
 * Validation of the rank reply (dpm_fedauc_accept), all before any ε is spent: the campaign,
 * mechanism, parameter hash and upload token are this upload's; exactly n ranks; M >= n and
 * M <= 2^31; every R <= 2 (M - 1); and the ranks are consistent with the device's own scores as
 * doubled mid-ranks of some pool of M scores that contains them: equal scores have equal ranks,
 * a higher score has a higher rank (so a duplicate rank is possible only between tied scores),
 * a group of k own tied scores has R >= k - 1 and R <= 2 (M - 1) - (k - 1), and two consecutive
 * groups of k and k' own scores are at least k + k' apart (their pooled groups cannot overlap).
 * fedauc_rr also refuses repeated example ids (two examples with one id would share a flip,
 * which reveals the XOR of their labels).
 *
 * Numbers (sdk/docs/fedauc.md §Device numbers): n <= DPM_FEDAUC_MAX_EXAMPLES <= 2^22 per
 * device and M <= 2^31, so R < 2^32, S and localSum2 < 2^54 (64-bit sums), n R_i < 2^54;
 * ORTHOGONAL/ADAPTIVE also need D <= 2^40 (dpm_fedauc_accept returns DPM_ERR_RANGE otherwise,
 * before any ε is spent), so |T| <= n D < 2^62 and the Laplace scale D 2^16 / eps_s fits the
 * exact sampler (numerator <= 2^56). The adaptive split compares 256-bit products (dpm_mul_u64).
 *
 * Memory: the device holds, per example, its quantized score (uint32), the permutation (uint32)
 * and a round-2 scratch word (uint64): DPM_FEDAUC_BYTES_PER_EXAMPLE = 16 bytes, in caller-owned
 * buffers (dpm_fedauc_buffers_t), plus the app's own labels (1 byte each) and, for fedauc_rr,
 * example ids (8 bytes each). 64 KB of buffers hold n = 4096 examples. Nothing is on the heap;
 * the upload and the reply stream through nanopb callbacks from and into those buffers (the
 * messages are never materialized as structs), so the stack cost does not grow with n. */
#ifndef DPM_FEDAUC_H
#define DPM_FEDAUC_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/campaign.h"
#include "dpm/expert/memo.h"
#include "dpm/expert/noise.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Configure: mechanism DPM_MECH_ID_FEDAUC_RR (3) or _LAP (4) (dpm_mech_id_t values), the
 * variant (NONE for RR, LOCAL..ADAPTIVE for LAP), score_bits in [1, 31], p_share_q16 in
 * [1, 65535] for LOCAL/GLOBAL/ORTHOGONAL (0 for RR and ADAPTIVE), eps in (0, DPM_EPS_MAX_Q16].
 * fedauc_lap needs eps_p = floor(p_share eps / 2^16) >= 1 and eps - eps_p >= 1 (ADAPTIVE:
 * eps >= 2), in Q16.16 units. DPM_ERR_PARAM with *reason for any other value, DPM_ERR_RANGE if
 * the RR thresholds cannot implement eps (dpm_rr_init). *f untouched on error. */
dpm_status_t dpm_fedauc_init(dpm_fedauc_t *f, uint32_t mechanism, dpm_fedauc_variant_t variant,
                             uint32_t score_bits, uint32_t p_share_q16, dpm_eps_t eps,
                             const char **reason);

/* ---- round 1 ------------------------------------------------------------------------------- */

#define DPM_FEDAUC_UPLOADED 0x50554146u
#define DPM_FEDAUC_REPORTED 0x50524146u

struct dpm_mech_s;

/* Quantize one Q1.31 score (<= 2^31) to score_bits: score >> (31 - score_bits), in
 * [0, 2^score_bits]. Monotone, so equal quantized scores are the ties the server mid-ranks. */
static inline uint32_t dpm_fedauc_quantize(const dpm_fedauc_t *f, dpm_score_t score)
{
    return score >> (31u - f->score_bits);
}

/* Round 1 for the fedauc mechanism m (dpm_mech_t from dpm_mech_init): n scores (Q1.31, the
 * app's order) become b->scores in a uniformly random order, b->perm the permutation (Fisher-
 * Yates, n - 1 draws of dpm_uniform from r: each draw's rejections are independent of its
 * value, so the run time says nothing about the permutation), then a 16-byte token from r.
 * *s is the session (state DPM_FEDAUC_UPLOADED). No ε: nothing here depends on labels.
 * Errors, *s untouched (the buffers' contents are then unspecified): DPM_ERR_PARAM (NULL, m not
 * a fedauc mechanism, a score above 2^31), DPM_ERR_UNDEFINED (n == 0: no data, nothing to
 * upload), DPM_ERR_BUFFER (n > b->cap or NULL buffers), DPM_ERR_RANGE (n >
 * DPM_FEDAUC_MAX_EXAMPLES), the sticky DPM_ERR_RNG. */
dpm_status_t dpm_fedauc_prepare(const struct dpm_mech_s *m, dpm_rand_t *r,
                                const dpm_score_t *scores, uint32_t n,
                                const dpm_fedauc_buffers_t *b, dpm_fedauc_session_t *s);

/* Header fields of an upload or a reply (the arrays stream separately). */
typedef struct {
    uint32_t campaign_id;
    uint32_t mechanism;
    uint32_t params_hash;
    uint8_t token[DPM_FEDAUC_TOKEN_BYTES];
    uint32_t total; /* reply only: M, the number of scores ranked */
    uint32_t n;     /* entries of the array */
} dpm_fedauc_header_t;

/* Encoded sizes, upper bounds: the header (campaign_id 6, mechanism 2, params_hash 5, token 18;
 * the reply adds total 6) plus the packed array (1 tag, its length varint, n varints of at most
 * DPM_FEDAUC_VARINT_LEN(bits) bytes for values below 2^bits). A quantized score is at most
 * 2^score_bits (score_bits + 1 bits); a doubled rank is below 2^32. */
#define DPM_FEDAUC_VARINT_LEN(b)                                                                   \
    ((b) <= 7u ? 1u : (b) <= 14u ? 2u : (b) <= 21u ? 3u : (b) <= 28u ? 4u : 5u)
#define DPM_FEDAUC_ARRAY_BYTES(n, bits)                                                            \
    ((n) == 0u ? 0u : 1u + DPM_FEDAUC_VARINT_LEN(32u) + (uint64_t)(n)*DPM_FEDAUC_VARINT_LEN(bits))
#define DPM_FEDAUC_UPLOAD_MAX_BYTES(n, score_bits)                                                 \
    (31u + DPM_FEDAUC_ARRAY_BYTES(n, (score_bits) + 1u))
#define DPM_FEDAUC_REPLY_MAX_BYTES(n) (37u + DPM_FEDAUC_ARRAY_BYTES(n, 32u))

/* Encode the session's upload (FedaucUpload: campaign_id, mechanism, params_hash, the token and
 * the scores in upload order) into buf. DPM_ERR_PARAM for NULL or a session not in state
 * UPLOADED, DPM_ERR_BUFFER if cap is too small (DPM_FEDAUC_UPLOAD_MAX_BYTES suffices). */
dpm_status_t dpm_fedauc_upload_encode(const dpm_fedauc_session_t *s, uint8_t *buf, size_t cap,
                                      size_t *len);

/* Server side: decode an upload into *h and scores[0, h->n), h->n <= cap. DPM_ERR_PROTOCOL
 * for malformed bytes, a token that is not 16 bytes or more than cap scores (*h and scores are
 * then unspecified). */
dpm_status_t dpm_fedauc_upload_decode(const uint8_t *buf, size_t len, dpm_fedauc_header_t *h,
                                      uint32_t *scores, uint32_t cap);

/* Server side: encode a rank reply: *h (campaign_id, mechanism, params_hash, token, total, n)
 * and the doubled ranks ranks2[0, h->n) in upload order. DPM_ERR_BUFFER if cap is too small
 * (DPM_FEDAUC_REPLY_MAX_BYTES suffices). No check of the values: a server (or a test playing
 * a malicious one) can encode anything. */
dpm_status_t dpm_fedauc_reply_encode(const dpm_fedauc_header_t *h, const uint32_t *ranks2,
                                     uint8_t *buf, size_t cap, size_t *len);

/* Decode a rank reply into *h and ranks2[0, h->n), h->n <= cap (DPM_ERR_PROTOCOL otherwise or
 * for malformed bytes). Devices use dpm_fedauc_accept, which also validates. */
dpm_status_t dpm_fedauc_reply_decode(const uint8_t *buf, size_t len, dpm_fedauc_header_t *h,
                                     uint32_t *ranks2, uint32_t cap);

/* ---- round 2 ------------------------------------------------------------------------------- */

/* What a validated rank reply says, label-free (everything here is known to the server). */
typedef struct {
    uint32_t n;
    uint32_t total;     /* M */
    uint64_t sum_rank2; /* S = sum R_i */
    uint32_t min_rank2, max_rank2;
    uint64_t maxdev; /* D = max_i |n R_i - S| */
} dpm_fedauc_ranks_t;

/* Decode and validate the rank reply for session s of mechanism m (the checks in the header
 * above), leaving s->buf.work holding (R_i << 32 | j) sorted, for dpm_fedauc_stats and
 * dpm_mech_report_fedauc. ids: fedauc_rr's example ids in the app's order (n of them, checked
 * distinct; NULL for fedauc_lap). Returns DPM_OK and *out; DPM_ERR_PROTOCOL with *reason for a
 * reply that fails a check; DPM_ERR_PARAM with *reason for NULL, a session that is not an
 * unreported upload of m, or repeated ids; DPM_ERR_RANGE for ORTHOGONAL/ADAPTIVE when D >
 * DPM_FEDAUC_MAX_T_SENSITIVITY. *out and *s untouched on error (work is scratch). */
dpm_status_t dpm_fedauc_accept(const dpm_fedauc_session_t *s, const struct dpm_mech_s *m,
                               const uint8_t *reply, size_t len, const uint64_t *ids,
                               dpm_fedauc_ranks_t *out, const char **reason);

/* The exact statistics of the true labels (no noise): for tests and exact simulation (ε = ∞). */
typedef struct {
    uint32_t n;
    uint32_t p;    /* sum y_i */
    uint64_t sum2; /* sum R_i y_i */
    int64_t t;     /* sum (n R_i - S) y_i: exact when D <= DPM_FEDAUC_MAX_T_SENSITIVITY (every
                    * ORTHOGONAL/ADAPTIVE reply dpm_fedauc_accept passes), else mod 2^64 */
} dpm_fedauc_stats_t;

/* labels[i] in {0, 1} for the app's example i (DPM_ERR_PARAM otherwise, or for NULL). Needs
 * s->buf.work as dpm_fedauc_accept left it. Label-dependent sums use masks, not branches. */
dpm_status_t dpm_fedauc_stats(const dpm_fedauc_session_t *s, const dpm_fedauc_ranks_t *rk,
                              const uint8_t *labels, dpm_fedauc_stats_t *out);

/* A FedAUC report body (Report field 15, dpm.v1.FedaucBody). */
typedef struct {
    uint8_t upload_token[DPM_FEDAUC_TOKEN_BYTES];
    uint32_t n;
    uint32_t total;       /* M of the reply */
    int64_t local_p;      /* RR: sum of flipped labels; LAP: localP + noise */
    int64_t local_sum2;   /* RR: sum R_i y'_i; LOCAL/GLOBAL: localSum2 + noise; else 0 */
    int64_t t;            /* ORTHOGONAL/ADAPTIVE: T + noise; else 0 */
    uint64_t sum_rank2;   /* S */
    uint64_t sensitivity; /* of the noised sum: LOCAL max R, GLOBAL 2 (M - 1), ORTHO/ADAPT D;
                           * RR 0 */
    dpm_eps_t eps_p;      /* ε spent on localP (Q16.16; the rest, report ε - eps_p, on the sum);
                           * RR 0 */
} dpm_fedauc_report_t;

/* Split ε (Q16.16, >= 2) for the ADAPTIVE variant from S and D: eps_p = ε if D == 0, else
 * the largest x in [1, ε - 1] with x^3 D^2 <= (ε - x)^3 S^2 (1 if none), exactly. */
dpm_eps_t dpm_fedauc_adaptive_eps_p(uint64_t sum_rank2, uint64_t maxdev, dpm_eps_t eps);

/* fedauc_rr's memoized flip of the example with this id under mechanism m and secret memo:
 * U = the low 32 bits of SipHash-2-4(secret, "dpmRRflp" | campaign id | params_hash | id, all
 * little-endian), flipped iff U >= rr.keep (the comparison dpm_rr_perturb makes with a fresh
 * uniform), so Pr[flip] = (2^32 - keep) / 2^32 exactly for a random secret. *flip is 0 or 1.
 * DPM_ERR_PARAM for NULL, an unopened memo or m not fedauc_rr. */
dpm_status_t dpm_fedauc_rr_flip(const struct dpm_mech_s *m, const dpm_memo_t *memo, uint64_t id,
                                int *flip);

#ifdef __cplusplus
}
#endif

#endif /* DPM_FEDAUC_H */
