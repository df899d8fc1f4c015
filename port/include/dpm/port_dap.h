/* SPDX-License-Identifier: Apache-2.0 */
/* The aggregator's side of a DAP report's input shares (draft-ietf-ppm-dap, "Input Share
 * Decryption"): pick the aggregator's key by the ciphertext's config id, rebuild the
 * InputShareAad from the task and the report, OpenBase with info "dap-18 input share" || 0x01 ||
 * role, and decode the PlaintextInputShare. port/tls/dap_open.c, over dpm/port_hpke.h: the
 * same code the tests, the fuzz targets and the aggregators (host-sim) run.
 *
 * A report that fails here is dropped, never aggregated; the status says why, in the draft's
 * terms (dpm_dap_report_error maps it to its ReportError). */
#ifndef DPM_PORT_DAP_H
#define DPM_PORT_DAP_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/expert/dap.h"
#include "dpm/port_hpke.h"
#include "dpm/expert/hpke.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One HPKE key of an aggregator: the config id and AEAD its HpkeConfig announces (the KEM and
 * KDF are dpm/expert/hpke.h's), and the key pair. */
typedef struct {
    uint8_t config_id;
    uint16_t aead_id; /* DPM_HPKE_AEAD_AES_128_GCM or DPM_HPKE_AEAD_CHACHA20_POLY1305 */
    dpm_hpke_keypair_t kp;
} dpm_dap_hpke_key_t;

/* An aggregator's HPKE key from secret input keying material ikm (32 .. 64 bytes, as
 * dpm_hpke_derive_keypair), announced under config_id with AEAD aead_id, and the HpkeConfig
 * that publishes it (*cfg, if not NULL). DPM_ERR_PARAM for NULL, a bad ikm length or an AEAD
 * this code does not have; *key and *cfg are unchanged on any error. */
dpm_status_t dpm_dap_hpke_key_derive(const uint8_t *ikm, size_t ikm_len, uint8_t config_id,
                                     uint16_t aead_id, dpm_dap_hpke_key_t *key,
                                     dpm_hpke_config_t *cfg);

/* Open this aggregator's input share (role DPM_DAP_ROLE_LEADER or _HELPER) of report r of task
 * t with one of its keys[0 .. nkeys). The sealed bytes are copied into buf (cap >= the
 * ciphertext's length) and decrypted there; on DPM_OK *input_share (the VDAF input share, which
 * must have the task's exact length) and *private_ext (the encoded list of private extensions:
 * the caller validates them) point into buf. Returns:
 *   DPM_ERR_UNSUPPORTED  no key has the ciphertext's config id (DAP: hpke_unknown_config_id);
 *   DPM_ERR_CORRUPT      it does not decrypt: wrong key, damaged ciphertext, enc, tag, or any
 *                        byte of the associated data (task id, task configuration, report
 *                        metadata, public share) (DAP: hpke_decrypt_error); buf zeroed;
 *   DPM_ERR_PROTOCOL     it decrypts but is no PlaintextInputShare, or its input share has the
 *                        wrong length for the task (DAP: invalid_message);
 *   DPM_ERR_BUFFER       cap too small;  DPM_ERR_PARAM  NULL, a bad role or a task not decoded.
 * *reason (if not NULL) names the cause. */
dpm_status_t dpm_dap_open_input_share(const dpm_dap_task_t *t, uint8_t role,
                                      const dpm_dap_hpke_key_t *keys, size_t nkeys,
                                      const dpm_dap_report_view_t *r, uint8_t *buf, size_t cap,
                                      dpm_span_t *private_ext, dpm_span_t *input_share,
                                      const char **reason);

/* Encapsulate ahead, into pool p, one HPKE context for each of task t's aggregators (the
 * leader's and the helper's info differ), so that the next report of t only encrypts
 * (dpm_hpke_pool_sealer). DPM_ERR_BUFFER when p has fewer than two free slots (nothing
 * filled), dpm_hpke_pool_fill's errors otherwise. */
dpm_status_t dpm_dap_pool_fill(dpm_hpke_pool_t *p, const dpm_dap_task_t *t, const dpm_rng_t *rng);

/* The draft's ReportError for a status of dpm_dap_open_input_share or dpm_prio3_* (4
 * hpke_unknown_config_id, 5 hpke_decrypt_error, 6 vdaf_verify_error, 8 invalid_message for
 * other failures). 0 for DPM_OK. */
uint8_t dpm_dap_report_error(dpm_status_t st);

#ifdef __cplusplus
}
#endif

#endif /* DPM_PORT_DAP_H */
