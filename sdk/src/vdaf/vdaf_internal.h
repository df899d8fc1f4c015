/* SPDX-License-Identifier: Apache-2.0 */
/* Internals of the vdaf layer: TurboSHAKE128 and the draft's XOFs, and the per-field
 * implementation table behind the public dpm_prio3_* calls. */
#ifndef DPM_VDAF_INTERNAL_H
#define DPM_VDAF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/vdaf.h"

/* Marks a value computed from secrets whose disclosure is intended: a verdict the caller learns
 * anyway through the returned status (a measurement out of range, a share that is no field
 * element) or one that says nothing about what is kept (the XOF's rejection of a discarded
 * candidate). It compiles to nothing; tests/ct builds the SDK with it defined to valgrind's
 * VALGRIND_MAKE_MEM_DEFINED, so the constant-time check accepts these points and no other
 * (tests/unit/test_constant_time.sh also counts them). */
#ifndef DPM_CT_DECLASSIFY
#define DPM_CT_DECLASSIFY(x) ((void)0)
#endif

/* Whether this build has the Prio3 variant kind (a dpm_prio3_type_t): DPM_VDAF_FIELD64 keeps
 * Count and Sum, DPM_VDAF_MULTIHOT keeps MultihotCountVec. A task's decoding and a device's
 * report call refuse a variant left out with DPM_PRIO3_NOT_BUILT, the same words for both. */
static inline int dpm_prio3_variant_built(uint32_t kind)
{
    return DPM_VDAF && (kind == DPM_PRIO3_COUNT || kind == DPM_PRIO3_SUM
                            ? DPM_VDAF_FIELD64
                            : kind != DPM_PRIO3_MULTIHOT || DPM_VDAF_MULTIHOT);
}
#define DPM_PRIO3_NOT_BUILT                                                                        \
    "task's Prio3 variant not in this build (DPM_VDAF_FIELD64: Count, Sum; DPM_VDAF_MULTIHOT)"

/* ---- TurboSHAKE128 (RFC 9861) over Keccak-p[1600, 12] ------------------------------------- */
typedef struct {
    uint64_t a[25];     /* the Keccak state, lanes little-endian */
    uint32_t pos;       /* next byte of the rate (0..168) */
    uint32_t squeezing; /* 0 while absorbing */
} dpm_xof_t;

void dpm_keccak_p1600_12(uint64_t a[25]);
void dpm_tshake_init(dpm_xof_t *x);
void dpm_tshake_absorb(dpm_xof_t *x, const uint8_t *in, size_t len);
/* Pad with the domain separation byte (0x01..0x7F) and switch to squeezing. */
void dpm_tshake_finish(dpm_xof_t *x, uint8_t domain);
void dpm_tshake_squeeze(dpm_xof_t *x, uint8_t *out, size_t len);

/* ---- XofTurboShake128 (draft section "XofTurboShake128") -----------------------------------
 * The stream of TurboSHAKE128(le16(|dst|) || dst || u8(|seed|) || seed || binder, D = 1).
 * dst is given in two pieces (dst = dst_a || dst_b: Prio3's 8-byte tag, then the application
 * context) and the binder is absorbed piece by piece with dpm_xof_absorb, before the first
 * dpm_xof_next. seed_len <= 255 and dst_a_len + dst_b_len <= 65535 (the callers check). */
void dpm_xof_init(dpm_xof_t *x, const uint8_t *seed, size_t seed_len, const uint8_t *dst_a,
                  size_t dst_a_len, const uint8_t *dst_b, size_t dst_b_len);
void dpm_xof_absorb(dpm_xof_t *x, const uint8_t *binder_part, size_t len);
void dpm_xof_next(dpm_xof_t *x, uint8_t *out, size_t len);

/* The all-zero seed of the joint randomness seed's XOF (one copy for both fields). */
extern const uint8_t dpm_prio3_zero_seed[DPM_PRIO3_SEED_BYTES];

/* Prio3's use of it: dst = format_dst(0, id, usage) || ctx (8 + ctx_len bytes). */
void dpm_xof_prio3(dpm_xof_t *x, const uint8_t *seed, uint32_t id, uint16_t usage,
                   const uint8_t *ctx, size_t ctx_len);

/* ---- XofFixedKeyAes128 (draft section "XofFixedKeyAes128") ---------------------------------
 * Only Poplar1's IDPF uses it in the draft; it is here for the draft's XOF test vectors and is
 * linked only where called. The fixed key is TurboSHAKE128(le16(|dst|) || dst || binder, D =
 * 2, 16 bytes), each output block AES128(key, sigma(b)) xor sigma(b) for b = seed xor
 * le128(block index), with sigma(lo || hi) = hi || (hi xor lo). */
typedef struct {
    uint8_t round_keys[176]; /* the expanded fixed key (public) */
    uint8_t seed[16];
    uint64_t offset; /* bytes produced so far */
} dpm_xof_aes_t;

void dpm_xof_aes_init(dpm_xof_aes_t *x, const uint8_t seed[16], const uint8_t *dst, size_t dst_len,
                      const uint8_t *binder, size_t binder_len);
void dpm_xof_aes_next(dpm_xof_aes_t *x, uint8_t *out, size_t len);
/* AES-128 (FIPS 197) in constant time: the key schedule and one block's encryption. */
void dpm_aes128_expand(const uint8_t key[16], uint8_t round_keys[176]);
void dpm_aes128_encrypt(const uint8_t round_keys[176], const uint8_t in[16], uint8_t out[16]);

/* ---- Prio3 ------------------------------------------------------------------------------ */
#define PRIO3_USAGE_MEAS_SHARE 1u
#define PRIO3_USAGE_PROOF_SHARE 2u
#define PRIO3_USAGE_JOINT_RANDOMNESS 3u
#define PRIO3_USAGE_PROVE_RANDOMNESS 4u
#define PRIO3_USAGE_QUERY_RANDOMNESS 5u
#define PRIO3_USAGE_JOINT_RAND_SEED 6u
#define PRIO3_USAGE_JOINT_RAND_PART 7u

/* The per-field half of each public call (prio3_impl.h, instantiated as *_f64 and *_f128);
 * the public functions (prio3.c) have checked every pointer, length and the agg_id before
 * calling, and encoded the measurement (one byte per element, values 0..2) into the first
 * meas_len bytes of `meas`. Direct calls, no table of function pointers: a pointer call would
 * count the deepest of these in every indirect call of every image (.make/stack_host.py). */
#define DPM_PRIO3_FIELD_DECLS(f)                                                                   \
    void dpm_prio3_shard_##f(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,             \
                             const uint8_t *meas, const uint8_t *nonce, const uint8_t *rand,       \
                             const dpm_prio3_shard_out_t *out, uint64_t *work);                    \
    dpm_status_t dpm_prio3_verify_init_##f(                                                        \
        const dpm_prio3_t *v, const uint8_t *verify_key, const uint8_t *ctx, size_t ctx_len,       \
        uint32_t agg_id, const uint8_t *nonce, const uint8_t *public_share,                        \
        const uint8_t *input_share, uint8_t *state, uint8_t *verifier_share, uint64_t *work);      \
    dpm_status_t dpm_prio3_to_message_##f(const dpm_prio3_t *v, const uint8_t *ctx,                \
                                          size_t ctx_len, const uint8_t *verifier_shares,          \
                                          uint8_t *message, uint64_t *work);                       \
    dpm_status_t dpm_prio3_aggregate_##f(const dpm_prio3_t *v, uint8_t *agg_share,                 \
                                         const uint8_t *share);                                    \
    dpm_status_t dpm_prio3_unshard_##f(const dpm_prio3_t *v, const uint8_t *agg_shares,            \
                                       uint64_t *result);                                          \
    dpm_status_t dpm_prio3_add_noise_##f(const dpm_prio3_t *v, uint8_t *agg_share,                 \
                                         const int64_t *noise);                                    \
    dpm_status_t dpm_prio3_unshard_signed_##f(const dpm_prio3_t *v, const uint8_t *agg_shares,     \
                                              int64_t *result);
DPM_PRIO3_FIELD_DECLS(f64)
DPM_PRIO3_FIELD_DECLS(f128)

/* What dpm_prio3_t.ops points to once an instance is set up: its field. */
struct dpm_prio3_ops {
    uint8_t field_bytes;
};
extern const struct dpm_prio3_ops dpm_prio3_field64, dpm_prio3_field128;

/* Nonzero if `measurement` (v->length values for the vector variants, else one) does not fit
 * variant v: the same verdict dpm_prio3_shard reaches, without encoding. Constant time in the
 * values; the verdict is the caller's to declassify. */
uint64_t dpm_prio3_measurement_bad(const dpm_prio3_t *v, const uint64_t *measurement);

/* The sharding of an encoded measurement (the device's call after its checks): the field's. */
void dpm_prio3_shard_encoded(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                             const uint8_t *meas, const uint8_t *nonce, const uint8_t *rand,
                             const dpm_prio3_shard_out_t *out, uint64_t *work);

#endif /* DPM_VDAF_INTERNAL_H */
