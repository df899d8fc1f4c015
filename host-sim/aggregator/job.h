/* SPDX-License-Identifier: Apache-2.0 */
/* One aggregator's steps of a DAP aggregation job for a one-round VDAF (Prio3), as functions
 * over bytes: what the leader and the helper roles of dpm-collector will run on stored reports
 * (issue 31 item 1), with no HTTP and no storage here. The draft's "Aggregate Initialization"
 * with the VDAF draft's ping-pong messages (type, then opaque<0..2^32-1> fields):
 *
 *   leader  agg_role_leader_init: decode a stored Report, open its own input share, verify_init
 *           (aggregator 0); keep the state; write the VerifyInit the helper gets: the
 *           ReportShare (metadata, public share, the helper's encrypted share) and the payload
 *           initialize(verifier_share).
 *   helper  agg_role_helper_init: one VerifyInit: open its share, verify_init (aggregator 1),
 *           the verifier message from both verifier shares, verify_next: its output share, and
 *           the VerifyResp continue with payload finish(verifier_message). A report that fails
 *           is a VerifyResp reject with its ReportError. Committing the output share (exactly
 *           once per report id, its batch bucket not yet collected) is the caller's: it turns
 *           the response into reject(report_replayed) when that fails.
 *   leader  agg_role_leader_finish: the helper's VerifyResp for a kept state: finish(message)
 *           -> verify_next: its output share; reject -> the helper's ReportError.
 *
 * Each role holds only its own HPKE key. The network roles that will call these (HTTP,
 * storage, the job driver, collection) are not built yet; tests/unit/test_aggregator_job.c
 * drives both roles over the draft's bytes and checks them against agg_pair. */
#ifndef DPM_HOST_AGGREGATOR_JOB_H
#define DPM_HOST_AGGREGATOR_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "aggregator/dap_msg.h"
#include "dpm/expert/dap.h"
#include "dpm/port_dap.h"

/* The leader's checks of one uploaded report that need no storage and no decryption (the
 * draft's "Leader Behavior"): 0 to keep it, or the ReportError of its ReportUploadStatus:
 * outdated_config (its leader share names another HPKE config id than key_config_id),
 * report_dropped (its time outside the task's interval), report_too_early (its time more than
 * skew_s seconds after now_s), invalid_message (a public extension: this task knows none).
 * Times: the report's in time_precision units, now_s and skew_s in seconds. A replayed id and
 * a batch already collected are the storage's to refuse. */
uint8_t agg_upload_check(const dpm_dap_task_t *t, const dpm_dap_report_view_t *r,
                         uint8_t key_config_id, uint64_t now_s, uint64_t skew_s);

/* The VDAF draft's ping-pong message types. */
#define AGG_PP_INITIALIZE 0u
#define AGG_PP_CONTINUE 1u
#define AGG_PP_FINISH 2u

typedef struct {
    const dpm_dap_task_t *task; /* decoded, with its VDAF; not owned */
    uint8_t role;               /* DPM_DAP_ROLE_LEADER or DPM_DAP_ROLE_HELPER */
    dpm_dap_hpke_key_t key;     /* this aggregator's HPKE key */
    uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES];
    uint8_t ctx[DPM_DAP_CTX_BYTES];
    /* scratch */
    uint8_t *plain, *state, *vshares, *msg;
    uint8_t *pp; /* one ping-pong message: 5 + the larger of a verifier share and message */
    size_t plain_cap;
    uint64_t *work;
} agg_role_t;

/* 0, or -1 (out of memory, a task without a VDAF, a role that is neither). */
int agg_role_init(agg_role_t *r, const dpm_dap_task_t *t, uint8_t role,
                  const dpm_dap_hpke_key_t *key,
                  const uint8_t verify_key[DPM_PRIO3_VERIFY_KEY_BYTES]);
void agg_role_free(agg_role_t *r);

/* Leader: the stored Report report[0, len) -> state (v->state_bytes) and its VerifyInit
 * encoded into out[0, *out_len) (cap bytes). DPM_OK; otherwise the failing step's status and
 * *report_error its ReportError (the report is not sent; nothing written to out). */
dpm_status_t agg_role_leader_init(agg_role_t *r, const uint8_t *report, size_t len, uint8_t *state,
                                  uint8_t *out, size_t cap, size_t *out_len, uint8_t *report_error);

/* Helper: one VerifyInit -> its output share (v->out_share_bytes; *finished 1) and the
 * VerifyResp encoded into out[0, *out_len): continue with finish(verifier_message), or reject
 * with its ReportError (*finished 0). DPM_ERR_BUFFER when cap is short, DPM_ERR_PARAM for NULL;
 * a report that fails is not an error of the call (DPM_OK with a reject). */
dpm_status_t agg_role_helper_init(agg_role_t *r, const dap_verify_init_t *vi, uint8_t *out_share,
                                  int *finished, uint8_t *out, size_t cap, size_t *out_len);

/* Leader: the helper's VerifyResp for a report whose state it kept -> its output share
 * (DPM_OK), or the failing status and *report_error (the helper's own for a reject;
 * invalid_message for a malformed payload; vdaf_verify_error when the message does not check). */
dpm_status_t agg_role_leader_finish(agg_role_t *r, uint8_t *state, const dap_verify_resp_t *vr,
                                    uint8_t *out_share, uint8_t *report_error);

#endif /* DPM_HOST_AGGREGATOR_JOB_H */
