/* SPDX-License-Identifier: Apache-2.0 */
/* Prio3, the verifiable distributed aggregation function of draft-irtf-cfrg-vdaf (VERSION 18,
 * the draft after -15; tests/vectors/vdaf names the commit), for the two-aggregator mode.
 *
 * A device splits its exact measurement into SHARES additive shares with a zero-knowledge proof
 * that it is well formed (dpm_prio3_shard); each aggregator checks its share of the proof with
 * its own verification key, the aggregators combine their verifier shares into one verifier
 * message, and only then does each aggregator hold an output share it may add to its aggregate
 * share; the collector adds the aggregate shares (unshard). No aggregator alone learns
 * anything about one measurement; a malformed or dishonest report fails verification and is
 * never aggregated (DPM_ERR_VERIFY).
 *
 * Every message has the draft's encoding (field elements little-endian, seeds of 32 bytes), so
 * a report sharded here verifies in any conforming implementation (Janus, the Rust prio
 * crate) and the other way round; tests/unit/test_vdaf_vectors.c checks every byte of the
 * draft's test vectors. Variants (Prio3 over one FLP "validity circuit" each):
 *
 *   Count             Field64   measurement 0 or 1; result: the number of ones
 *   Sum               Field64   an integer in [0, max_measurement]; result: the sum
 *   SumVec            Field128  `length` integers, each in [0, max_measurement]; elementwise sums
 *   Histogram         Field128  one bucket index in [0, length); the bucket counts
 *   MultihotCountVec  Field128  `length` booleans, at most max_weight of them true; the counts
 *   SumVecMultiproof  Field64   SumVec with PROOFS independent proofs (codepoint 0xFFFFFFFF,
 *                               the draft's private-use value its test vectors use)
 *   HigherDegree      Field64   a test circuit of degree 3 (measurement 0, 1 or 2; 0xFFFFFFFF)
 *
 * Rules, as everywhere in the SDK: no heap (every buffer is the caller's, its exact size given
 * by a macro below and by the fields of dpm_prio3_t), no mutable globals, integers only.
 * Constant time: no branch and no memory index depends on a measurement, a share, a seed or
 * the verification key (tests/unit/test_constant_time.sh checks it under valgrind). The one
 * exception is each call's final verdict (the measurement is in range, the share decodes):
 * that answer is public anyway, as the returned status.
 *
 * Statuses: DPM_ERR_PARAM for a NULL pointer, a bad parameter or a measurement that does not
 * fit the variant (out of range, wrong count); DPM_ERR_BUFFER for an output or work buffer
 * smaller than its size below; DPM_ERR_PROTOCOL for a received message of the wrong length or
 * holding a value that is no field element; DPM_ERR_VERIFY when the proof or the joint
 * randomness check fails (the report is invalid: drop it, never aggregate it);
 * DPM_ERR_UNSUPPORTED when the SDK was built without DPM_VDAF. On any error every output is
 * left unchanged except the work buffer, whose contents are never meaningful between calls.
 *
 * Privacy unit: one measurement of one device (one report). Prio3 itself adds no noise: the
 * aggregators add it to their aggregate shares (the two-aggregator campaigns do), and the
 * privacy holds while at least one aggregator is honest. */
#ifndef DPM_VDAF_H
#define DPM_VDAF_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/config.h"
#include "dpm/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPM_VDAF_VERSION 18u            /* the draft's VERSION, bound into every XOF input */
#define DPM_PRIO3_SEED_BYTES 32u        /* XofTurboShake128 seeds */
#define DPM_PRIO3_NONCE_BYTES 16u       /* the report nonce */
#define DPM_PRIO3_VERIFY_KEY_BYTES 32u  /* the aggregators' shared verification key */
#define DPM_PRIO3_MAX_CTX_BYTES 65527u  /* application context: the DST must fit 65535 bytes */
#define DPM_PRIO3_MAX_MEAS_LEN 1048576u /* encoded measurement elements this code accepts */

/* Codepoints (the draft's IANA table); SumVecMultiproof and HigherDegree use the private-use
 * 0xFFFFFFFF like the draft's test vectors: pick a registered variant for deployments. */
typedef enum {
    DPM_PRIO3_COUNT = 1,
    DPM_PRIO3_SUM = 2,
    DPM_PRIO3_SUMVEC = 3,
    DPM_PRIO3_HISTOGRAM = 4,
    DPM_PRIO3_MULTIHOT = 5,
    DPM_PRIO3_SUMVEC_MULTIPROOF = 6,
    DPM_PRIO3_HIGHER_DEGREE = 7
} dpm_prio3_kind_t;
#define DPM_PRIO3_ID_PRIVATE 0xFFFFFFFFu

struct dpm_prio3_ops; /* the instance's field (internal) */

/* One Prio3 instance: a variant and its shape, with every derived length of the draft and
 * every buffer size. Filled by one of the dpm_prio3_*_init calls; read-only afterwards (it
 * holds no state: one instance serves any number of reports, on any number of threads). */
typedef struct {
    uint32_t id;              /* the VDAF codepoint, bound into every domain separation tag */
    uint8_t kind;             /* dpm_prio3_kind_t */
    uint8_t field_bytes;      /* 8 (Field64) or 16 (Field128): encoded size of a field element */
    uint8_t shares;           /* SHARES: aggregators, in [2, 255]; aggregator 0 is the leader */
    uint8_t proofs;           /* PROOFS: independent FLP proofs per report, in [1, 255] */
    uint32_t length;          /* SumVec, Histogram, MultihotCountVec: entries; otherwise 1 */
    uint32_t chunk_length;    /* ParallelSum chunk (SumVec, Histogram, MultihotCountVec), else 0 */
    uint32_t bits;            /* bit length of max_measurement (Sum, SumVec) or max_weight */
    uint64_t max_measurement; /* largest value of one entry (Count 1, Histogram length - 1,
                                 MultihotCountVec: the largest weight, HigherDegree 2) */
    /* the FLP (draft section "FLP Specification"); one gadget per circuit */
    uint32_t meas_len;        /* MEAS_LEN: encoded measurement, field elements */
    uint32_t output_len;      /* OUTPUT_LEN: output and aggregate share, field elements */
    uint32_t joint_rand_len;  /* JOINT_RAND_LEN per proof (0: no joint randomness) */
    uint32_t eval_output_len; /* EVAL_OUTPUT_LEN: circuit outputs before reduction */
    uint32_t arity;           /* the gadget's input wires */
    uint32_t degree;          /* the gadget's arithmetic degree */
    uint32_t calls;           /* GADGET_CALLS */
    uint32_t wire_len;        /* wire polynomial length p = next_power_of_2(calls + 1) */
    uint32_t gadget_len;      /* gadget polynomial values in a proof: degree * (p - 1) + 1 */
    uint32_t domain;          /* next_power_of_2(gadget_len): the gadget polynomial's points */
    uint32_t proof_len;       /* PROOF_LEN = arity + gadget_len, per proof */
    uint32_t verifier_len;    /* VERIFIER_LEN = arity + 2, per proof */
    uint32_t prove_rand_len;  /* PROVE_RAND_LEN = arity, per proof */
    uint32_t query_rand_len;  /* QUERY_RAND_LEN per proof */
    /* message and buffer sizes, in bytes (the macros below give the same at compile time) */
    uint32_t rand_bytes;             /* RAND_SIZE: random bytes dpm_prio3_shard consumes */
    uint32_t public_share_bytes;     /* joint randomness parts (0 without joint randomness) */
    uint32_t leader_share_bytes;     /* aggregator 0's input share */
    uint32_t helper_share_bytes;     /* each other aggregator's input share (its seed[s]) */
    uint32_t verifier_share_bytes;   /* one aggregator's verifier share */
    uint32_t verifier_message_bytes; /* the verifier message (0 without joint randomness) */
    uint32_t out_share_bytes;        /* an output share = an aggregate share */
    uint32_t state_bytes;            /* an aggregator's state between the two steps */
    uint32_t shard_work_words;       /* uint64_t words of work for dpm_prio3_shard */
    uint32_t verify_work_words;      /* ... for dpm_prio3_verify_init and _to_message */
    const struct dpm_prio3_ops *ops; /* internal: the field; NULL until an init succeeded */
} dpm_prio3_t;

/* ---- instances: DPM_OK, or DPM_ERR_PARAM naming nothing (the checks are listed) ----------- */

/* Count: shares in [2, 255]. */
dpm_status_t dpm_prio3_count_init(dpm_prio3_t *v, uint32_t shares);
/* Sum: max_measurement in [1, 2^64 - 2^32] (below Field64's modulus). */
dpm_status_t dpm_prio3_sum_init(dpm_prio3_t *v, uint32_t shares, uint64_t max_measurement);
/* SumVec: length >= 1, max_measurement >= 1, chunk_length >= 1, length * bits <= MAX_MEAS_LEN.
 * The draft recommends chunk_length near sqrt(length * bits); the proof is shortest when
 * calls + 1 = ceil(length * bits / chunk_length) + 1 just fits a power of two (2x24 entries of
 * 8 bits: chunk 26, 15 calls, proof 83 elements). */
dpm_status_t dpm_prio3_sumvec_init(dpm_prio3_t *v, uint32_t shares, uint32_t length,
                                   uint64_t max_measurement, uint32_t chunk_length);
/* Histogram: length >= 1 buckets, chunk_length >= 1. */
dpm_status_t dpm_prio3_histogram_init(dpm_prio3_t *v, uint32_t shares, uint32_t length,
                                      uint32_t chunk_length);
/* MultihotCountVec: length >= 1, max_weight in [1, length], chunk_length >= 1. */
dpm_status_t dpm_prio3_multihot_init(dpm_prio3_t *v, uint32_t shares, uint32_t length,
                                     uint32_t max_weight, uint32_t chunk_length);
/* SumVec over Field64 with `proofs` proofs (in [1, 255]; the draft's vectors use 3), codepoint
 * 0xFFFFFFFF; max_measurement below Field64's modulus as for Sum. */
dpm_status_t dpm_prio3_sumvec_multiproof_init(dpm_prio3_t *v, uint32_t shares, uint32_t proofs,
                                              uint32_t length, uint64_t max_measurement,
                                              uint32_t chunk_length);
/* HigherDegree: the draft's degree-3 test circuit x (x - 1) (x - 2), codepoint 0xFFFFFFFF. */
dpm_status_t dpm_prio3_higher_degree_init(dpm_prio3_t *v, uint32_t shares);

/* ---- the device: sharding ------------------------------------------------------------------- */

/* Where dpm_prio3_shard writes. Each length must be at least the instance's size (else
 * DPM_ERR_BUFFER); exactly that many bytes are written. public_share may be NULL when
 * public_share_bytes is 0. helper_shares holds shares - 1 input shares back to back, for
 * aggregators 1, 2, ... (each helper_share_bytes). */
typedef struct {
    uint8_t *public_share;
    size_t public_share_len;
    uint8_t *leader_share;
    size_t leader_share_len;
    uint8_t *helper_shares;
    size_t helper_shares_len;
} dpm_prio3_shard_out_t;

/* Shard one measurement (the draft's shard()): encode it, split it into shares, prove it and
 * split the proof(s).
 *   ctx, ctx_len     the application context (<= DPM_PRIO3_MAX_CTX_BYTES; NULL when 0)
 *   measurement      `count` values: Count, Sum, Histogram, HigherDegree one (0/1, the value,
 *                    the bucket index, 0..2); SumVec and SumVecMultiproof `length` values in
 *                    [0, max_measurement]; MultihotCountVec `length` values 0/1 with at most
 *                    max_measurement ones. Anything else: DPM_ERR_PARAM.
 *   nonce            DPM_PRIO3_NONCE_BYTES, unique per report (DAP: the report id)
 *   rand, rand_len   v->rand_bytes fresh random bytes from a CSPRNG (exactly)
 *   work             v->shard_work_words uint64_t words (DPM_PRIO3_SHARD_WORK_WORDS)
 * Stack: under 1 KB on Cortex-M4 (SumVec: device.cm4.prio3_*.shard.stack in make bench,
 * tests/cross/bench_vdaf_cm.c; 804 bytes in tests/results/bench.json at 4ac2abc); all
 * vectors live in `work` and `out`. Time: README "Two aggregators, part 1" (make bench,
 * device.cm4.prio3_*.shard.instructions). The measurement never leaves through any branch or
 * memory index; only its validity (the status) is public. */
dpm_status_t dpm_prio3_shard(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                             const uint64_t *measurement, size_t count,
                             const uint8_t nonce[DPM_PRIO3_NONCE_BYTES], const uint8_t *rand,
                             size_t rand_len, const dpm_prio3_shard_out_t *out, uint64_t *work,
                             size_t work_words);

/* ---- the aggregators: verification, aggregation ------------------------------------------- */

/* Aggregator agg_id's first step (the draft's verify_init): decode its input share (the leader's
 * field vectors, or a helper's seed[s]) and the public share, query the proof(s) with the
 * verification key, and write
 *   verifier_share   v->verifier_share_bytes, to send to the other aggregators
 *   state            v->state_bytes, kept for dpm_prio3_verify_next (the output share, and the
 *                    joint randomness seed this aggregator computed): secret, keep it private.
 * public_share may be NULL when public_share_bytes is 0. Lengths of the received messages must
 * be exact (else DPM_ERR_PROTOCOL, as for a value >= the field's modulus). work:
 * v->verify_work_words words. A share that decodes never fails here: an invalid report shows up
 * in dpm_prio3_verifier_shares_to_message or dpm_prio3_verify_next. */
dpm_status_t dpm_prio3_verify_init(const dpm_prio3_t *v,
                                   const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES],
                                   const uint8_t *ctx, size_t ctx_len, uint32_t agg_id,
                                   const uint8_t nonce[DPM_PRIO3_NONCE_BYTES],
                                   const uint8_t *public_share, size_t public_share_len,
                                   const uint8_t *input_share, size_t input_share_len,
                                   uint8_t *state, size_t state_len, uint8_t *verifier_share,
                                   size_t verifier_share_len, uint64_t *work, size_t work_words);

/* Combine every aggregator's verifier share (v->shares of them back to back, in aggregator
 * order) into the verifier message (v->verifier_message_bytes; message may be NULL when that
 * is 0), after deciding each proof: DPM_ERR_VERIFY if one fails (the report is invalid).
 * Any aggregator may run it; work: v->verify_work_words words. */
dpm_status_t dpm_prio3_verifier_shares_to_message(const dpm_prio3_t *v, const uint8_t *ctx,
                                                  size_t ctx_len, const uint8_t *verifier_shares,
                                                  size_t verifier_shares_len, uint8_t *message,
                                                  size_t message_len, uint64_t *work,
                                                  size_t work_words);

/* An aggregator's last step (verify_next): check that the verifier message's joint randomness
 * seed is the one this aggregator computed (DPM_ERR_VERIFY otherwise: the client cheated or a
 * share was damaged) and write its output share (v->out_share_bytes). message may be NULL when
 * verifier_message_bytes is 0. */
dpm_status_t dpm_prio3_verify_next(const dpm_prio3_t *v, const uint8_t *state, size_t state_len,
                                   const uint8_t *message, size_t message_len, uint8_t *out_share,
                                   size_t out_share_len);

/* agg_share += share, elementwise in the field: adds an output share to an aggregate share, or
 * merges two aggregate shares. An aggregate share starts as v->out_share_bytes zero bytes.
 * DPM_ERR_PROTOCOL (agg_share unchanged) if either holds a value that is no field element. */
dpm_status_t dpm_prio3_aggregate(const dpm_prio3_t *v, uint8_t *agg_share, size_t agg_share_len,
                                 const uint8_t *share, size_t share_len);

/* The collector (unshard): add the v->shares aggregate shares (back to back, in aggregator
 * order) and decode the result: v->output_len counts or sums into result[0 .. result_len),
 * result_len >= output_len (else DPM_ERR_BUFFER). DPM_ERR_RANGE if a sum does not fit 64 bits
 * (more reports than the field can count: not possible with honest Field128 reports below
 * 2^64 in total). num_measurements: the number of reports aggregated (unused by these
 * variants; kept for the draft's interface). */
dpm_status_t dpm_prio3_unshard(const dpm_prio3_t *v, const uint8_t *agg_shares,
                               size_t agg_shares_len, uint64_t num_measurements, uint64_t *result,
                               size_t result_len);

/* ---- central DP: an aggregator's noise (the two-aggregator mode's privacy, dpm/expert/dap.h) ----
 */

/* An aggregator adds its central noise to its aggregate share before releasing it:
 * agg_share[k] += noise[k] in the field, each noise value a signed integer taken as its field
 * element (p - |z| when z < 0), for k < v->output_len (count must equal it). The noise is the
 * aggregator's secret: its sign and size steer no branch and no index. DPM_ERR_PARAM for NULL,
 * an instance not set up, a length or count of another instance; DPM_ERR_PROTOCOL (agg_share
 * unchanged) if agg_share holds a value that is no field element. */
dpm_status_t dpm_prio3_add_noise(const dpm_prio3_t *v, uint8_t *agg_share, size_t agg_share_len,
                                 const int64_t *noise, size_t count);

/* The collector, for noised shares: dpm_prio3_unshard with each sum read as the signed integer
 * its field element stands for, the one nearest zero (x, or x - p when that is nearer): a noised
 * count can be negative. DPM_ERR_RANGE if one is farther than 2^63 - 1 from zero (more than the
 * field can hold: not with honest reports and noise), DPM_ERR_BUFFER if result_len <
 * output_len, DPM_ERR_PROTOCOL for a length of another instance or a non-field value. */
dpm_status_t dpm_prio3_unshard_signed(const dpm_prio3_t *v, const uint8_t *agg_shares,
                                      size_t agg_shares_len, uint64_t num_measurements,
                                      int64_t *result, size_t result_len);

/* ---- sizes at compile time ------------------------------------------------------------------
 * Each size macro takes a shape, given by one of the DPM_PRIO3_*_SHAPE macros, e.g.
 *   uint8_t leader[DPM_PRIO3_LEADER_SHARE_BYTES(DPM_PRIO3_SUMVEC_SHAPE(2, 48, 8, 26))];
 * for a two-aggregator SumVec of 48 entries of 8 bits (max_measurement 128..255), chunk 26. The
 * runtime fields of dpm_prio3_t hold the same values (a test compares them). */
#define DPM_VDAF_CEIL_DIV(a, b) (((a) + (b)-1u) / (b))
/* Bit length of x (x < 2^32): 8 for 128..255. */
#define DPM_VDAF_BITS(x) ((x) >= 0x10000u ? 16u + DPM_VDAF_BITS16_((x) >> 16) : DPM_VDAF_BITS16_(x))
#define DPM_VDAF_BITS16_(x) ((x) >= 0x100u ? 8u + DPM_VDAF_BITS8_((x) >> 8) : DPM_VDAF_BITS8_(x))
#define DPM_VDAF_BITS8_(x) ((x) >= 0x10u ? 4u + DPM_VDAF_BITS4_((x) >> 4) : DPM_VDAF_BITS4_(x))
#define DPM_VDAF_BITS4_(x) ((x) >= 8u ? 4u : (x) >= 4u ? 3u : (x) >= 2u ? 2u : (x) >= 1u ? 1u : 0u)
/* Smallest power of two >= x, for 1 <= x <= 2^24. */
#define DPM_VDAF_NEXT_POW2(x)                                                                      \
    ((x) <= 1u         ? 1u                                                                        \
     : (x) <= 2u       ? 2u                                                                        \
     : (x) <= 4u       ? 4u                                                                        \
     : (x) <= 8u       ? 8u                                                                        \
     : (x) <= 16u      ? 16u                                                                       \
     : (x) <= 32u      ? 32u                                                                       \
     : (x) <= 64u      ? 64u                                                                       \
     : (x) <= 128u     ? 128u                                                                      \
     : (x) <= 256u     ? 256u                                                                      \
     : (x) <= 512u     ? 512u                                                                      \
     : (x) <= 1024u    ? 1024u                                                                     \
     : (x) <= 2048u    ? 2048u                                                                     \
     : (x) <= 4096u    ? 4096u                                                                     \
     : (x) <= 8192u    ? 8192u                                                                     \
     : (x) <= 16384u   ? 16384u                                                                    \
     : (x) <= 32768u   ? 32768u                                                                    \
     : (x) <= 65536u   ? 65536u                                                                    \
     : (x) <= 131072u  ? 131072u                                                                   \
     : (x) <= 262144u  ? 262144u                                                                   \
     : (x) <= 524288u  ? 524288u                                                                   \
     : (x) <= 1048576u ? 1048576u                                                                  \
     : (x) <= 2097152u ? 2097152u                                                                  \
     : (x) <= 4194304u ? 4194304u                                                                  \
     : (x) <= 8388608u ? 8388608u                                                                  \
                       : 16777216u)

/* Shapes: (shares, field_bytes, meas_len, output_len, arity, degree, calls, proofs, joint). */
#define DPM_PRIO3_COUNT_SHAPE(shares) (shares), 8u, 1u, 1u, 2u, 2u, 1u, 1u, 0u
#define DPM_PRIO3_SUM_SHAPE(shares, bits) (shares), 8u, (bits), 1u, 1u, 2u, (bits), 1u, 0u
#define DPM_PRIO3_SUMVEC_SHAPE(shares, length, bits, chunk)                                        \
    (shares), 16u, (length) * (bits), (length), 2u * (chunk), 2u,                                  \
        DPM_VDAF_CEIL_DIV((length) * (bits), (chunk)), 1u, 1u
#define DPM_PRIO3_HISTOGRAM_SHAPE(shares, length, chunk)                                           \
    (shares), 16u, (length), (length), 2u * (chunk), 2u, DPM_VDAF_CEIL_DIV((length), (chunk)), 1u, \
        1u
#define DPM_PRIO3_MULTIHOT_SHAPE(shares, length, weight_bits, chunk)                               \
    (shares), 16u, (length) + (weight_bits), (length), 2u * (chunk), 2u,                           \
        DPM_VDAF_CEIL_DIV((length) + (weight_bits), (chunk)), 1u, 1u
#define DPM_PRIO3_SUMVEC_MULTIPROOF_SHAPE(shares, proofs, length, bits, chunk)                     \
    (shares), 8u, (length) * (bits), (length), 2u * (chunk), 2u,                                   \
        DPM_VDAF_CEIL_DIV((length) * (bits), (chunk)), (proofs), 1u
#define DPM_PRIO3_HIGHER_DEGREE_SHAPE(shares) (shares), 8u, 1u, 1u, 1u, 3u, 1u, 1u, 0u

/* Derived lengths (field elements). */
#define DPM_PRIO3_WIRE_LEN_(calls) DPM_VDAF_NEXT_POW2((calls) + 1u)
#define DPM_PRIO3_GADGET_LEN_(degree, calls) ((degree) * (DPM_PRIO3_WIRE_LEN_(calls) - 1u) + 1u)
#define DPM_PRIO3_DOMAIN_(degree, calls) DPM_VDAF_NEXT_POW2(DPM_PRIO3_GADGET_LEN_(degree, calls))
#define DPM_PRIO3_PROOF_LEN_(arity, degree, calls) ((arity) + DPM_PRIO3_GADGET_LEN_(degree, calls))
#define DPM_PRIO3_JR_BYTES_(joint) ((joint) ? DPM_PRIO3_SEED_BYTES : 0u)
/* One XOF state in the work buffers, in uint64_t words (25 lanes and a position). */
#define DPM_VDAF_XOF_WORDS 26u

#define DPM_PRIO3_RAND_BYTES(...) DPM_PRIO3_RAND_BYTES_(__VA_ARGS__)
#define DPM_PRIO3_RAND_BYTES_(s, fb, meas, out, ar, deg, calls, proofs, joint)                     \
    ((joint) ? 2u * DPM_PRIO3_SEED_BYTES * (s) : DPM_PRIO3_SEED_BYTES * (s))
#define DPM_PRIO3_PUBLIC_SHARE_BYTES(...) DPM_PRIO3_PUBLIC_SHARE_BYTES_(__VA_ARGS__)
#define DPM_PRIO3_PUBLIC_SHARE_BYTES_(s, fb, meas, out, ar, deg, calls, proofs, joint)             \
    ((joint) ? DPM_PRIO3_SEED_BYTES * (s) : 0u)
#define DPM_PRIO3_LEADER_SHARE_BYTES(...) DPM_PRIO3_LEADER_SHARE_BYTES_(__VA_ARGS__)
#define DPM_PRIO3_LEADER_SHARE_BYTES_(s, fb, meas, out, ar, deg, calls, proofs, joint)             \
    ((fb) * ((meas) + DPM_PRIO3_PROOF_LEN_(ar, deg, calls) * (proofs)) + DPM_PRIO3_JR_BYTES_(joint))
#define DPM_PRIO3_HELPER_SHARE_BYTES(...) DPM_PRIO3_HELPER_SHARE_BYTES_(__VA_ARGS__)
#define DPM_PRIO3_HELPER_SHARE_BYTES_(s, fb, meas, out, ar, deg, calls, proofs, joint)             \
    (DPM_PRIO3_SEED_BYTES + DPM_PRIO3_JR_BYTES_(joint))
#define DPM_PRIO3_VERIFIER_SHARE_BYTES(...) DPM_PRIO3_VERIFIER_SHARE_BYTES_(__VA_ARGS__)
#define DPM_PRIO3_VERIFIER_SHARE_BYTES_(s, fb, meas, out, ar, deg, calls, proofs, joint)           \
    ((fb) * ((ar) + 2u) * (proofs) + DPM_PRIO3_JR_BYTES_(joint))
#define DPM_PRIO3_VERIFIER_MESSAGE_BYTES(...) DPM_PRIO3_VERIFIER_MESSAGE_BYTES_(__VA_ARGS__)
#define DPM_PRIO3_VERIFIER_MESSAGE_BYTES_(s, fb, meas, out, ar, deg, calls, proofs, joint)         \
    DPM_PRIO3_JR_BYTES_(joint)
#define DPM_PRIO3_OUT_SHARE_BYTES(...) DPM_PRIO3_OUT_SHARE_BYTES_(__VA_ARGS__)
#define DPM_PRIO3_OUT_SHARE_BYTES_(s, fb, meas, out, ar, deg, calls, proofs, joint) ((fb) * (out))
#define DPM_PRIO3_STATE_BYTES(...) DPM_PRIO3_STATE_BYTES_(__VA_ARGS__)
#define DPM_PRIO3_STATE_BYTES_(s, fb, meas, out, ar, deg, calls, proofs, joint)                    \
    ((fb) * (out) + DPM_PRIO3_JR_BYTES_(joint))
/* Work for sharding: two XOF states, the encoded measurement (a byte per element), and per
 * proof the joint randomness, its powers, the roots of unity and coset factors, the gadget
 * polynomial and two wire polynomials on the gadget's domain, and two scratch wires. */
#define DPM_PRIO3_SHARD_WORK_WORDS(...) DPM_PRIO3_SHARD_WORK_WORDS_(__VA_ARGS__)
#define DPM_PRIO3_SHARD_WORK_WORDS_(s, fb, meas, out, ar, deg, calls, proofs, joint)               \
    (2u * DPM_VDAF_XOF_WORDS + DPM_VDAF_CEIL_DIV((meas), 8u) +                                     \
     (fb) / 8u *                                                                                   \
         (2u * (calls) + 4u * DPM_PRIO3_DOMAIN_(deg, calls) + 2u * DPM_PRIO3_WIRE_LEN_(calls)))
/* Work for verify_init and verifier_shares_to_message: three XOF states, the measurement share
 * and one proof share, the joint and query randomness of one proof, the Lagrange coefficients
 * at the query point, the roots of unity and the wire evaluations. */
#define DPM_PRIO3_VERIFY_WORK_WORDS(...) DPM_PRIO3_VERIFY_WORK_WORDS_(__VA_ARGS__)
#define DPM_PRIO3_VERIFY_WORK_WORDS_(s, fb, meas, out, ar, deg, calls, proofs, joint)              \
    (3u * DPM_VDAF_XOF_WORDS +                                                                     \
     (fb) / 8u *                                                                                   \
         (2u * (meas) + 3u + DPM_PRIO3_PROOF_LEN_(ar, deg, calls) + (calls) +                      \
          DPM_PRIO3_DOMAIN_(deg, calls) + DPM_PRIO3_WIRE_LEN_(calls) + (ar)))

#ifdef __cplusplus
}
#endif

#endif /* DPM_VDAF_H */
