/* SPDX-License-Identifier: Apache-2.0 */
/* Prio3 reports for tests: shard one measurement into heap buffers, and run a report's whole
 * verification (every aggregator's verify_init, the verifier message, every verify_next) the
 * way two or more aggregators would, saying at which step it stopped. */
#ifndef VDAF_FIXTURE_H
#define VDAF_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "common/json_read.h"
#include "dpm/expert/vdaf.h"

typedef struct {
    uint8_t nonce[DPM_PRIO3_NONCE_BYTES];
    uint8_t *public_share; /* v->public_share_bytes (at least 1 byte allocated) */
    uint8_t *leader;       /* v->leader_share_bytes */
    uint8_t *helpers;      /* (shares - 1) * v->helper_share_bytes */
} vdaf_report_t;

/* Where a report's verification stopped. */
typedef enum {
    VDAF_STEP_INIT = 1,    /* an aggregator's verify_init */
    VDAF_STEP_MESSAGE = 2, /* verifier_shares_to_message */
    VDAF_STEP_NEXT = 3,    /* an aggregator's verify_next */
    VDAF_STEP_DONE = 4     /* every aggregator holds its output share */
} vdaf_step_t;

typedef struct {
    vdaf_step_t step;
    dpm_status_t status;      /* DPM_OK when step is DONE */
    uint8_t *verifier_shares; /* shares * verifier_share_bytes (kept for the caller) */
    uint8_t message[DPM_PRIO3_SEED_BYTES];
    uint8_t *out_shares; /* shares * out_share_bytes, valid when DONE */
} vdaf_result_t;

/* Allocate r's buffers for v (abort on no memory). */
void vdaf_report_alloc(const dpm_prio3_t *v, vdaf_report_t *r);
void vdaf_report_free(vdaf_report_t *r);
/* Shard measurement[0..count) with rand = seed-derived bytes: dpm_prio3_shard's status. */
dpm_status_t vdaf_report_shard(const dpm_prio3_t *v, const uint8_t *ctx, size_t ctx_len,
                               const uint64_t *measurement, size_t count, uint64_t seed,
                               vdaf_report_t *r);

/* Verify report r with verify_key and ctx. With verifier_fault >= 0, byte verifier_fault of the
 * concatenated verifier shares is XORed with 0x01 before they are combined; with
 * message_fault >= 0, byte message_fault of the verifier message before verify_next. */
void vdaf_result_init(const dpm_prio3_t *v, vdaf_result_t *res);
void vdaf_result_free(vdaf_result_t *res);
void vdaf_verify(const dpm_prio3_t *v, const uint8_t *verify_key, const uint8_t *ctx,
                 size_t ctx_len, const vdaf_report_t *r, long verifier_fault, long message_fault,
                 vdaf_result_t *res);

/* ---- the draft's vector files (tests/vectors/vdaf) ------------------------------------------ */

/* Their directory: DPM_VDAF_VECTORS, else tests/vectors/vdaf (run from the repository root). */
const char *vdaf_vector_dir(void);
/* The bytes of a hex string value, in a new buffer (*len its length); NULL if v is not one. */
uint8_t *vdaf_hex(const jr_value_t *v, size_t *len);
/* A non-negative integer or boolean value into *out: 0, or -1. */
int vdaf_u64(const jr_value_t *v, uint64_t *out);
/* The instance a file describes (its name's variant, its parameters): the init's status, or
 * DPM_ERR_PARAM for an unknown variant. SumVecWithMultiproof is Field64 with 3 proofs, as the
 * draft's test code instantiates it. */
dpm_status_t vdaf_vector_instance(const char *name, const jr_value_t *root, dpm_prio3_t *v);

#endif
