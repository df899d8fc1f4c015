/* SPDX-License-Identifier: Apache-2.0 */
/* An aggregator's HPKE key, and opening a DAP input share with it: see dpm/port_dap.h. */
#include <string.h>

#include "dpm/port_dap.h"
#include "dpm/expert/dap.h"
#include "dpm/expert/hpke.h"
#include "mbedtls/platform_util.h"

static dpm_status_t why(const char **reason, const char *text, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = text;
    }
    return st;
}

dpm_status_t dpm_dap_hpke_key_derive(const uint8_t *ikm, size_t ikm_len, uint8_t config_id,
                                     uint16_t aead_id, dpm_dap_hpke_key_t *key,
                                     dpm_hpke_config_t *cfg)
{
    if (key == NULL || dpm_hpke_aead_nk(aead_id) == 0) {
        return DPM_ERR_PARAM;
    }
    dpm_dap_hpke_key_t k;
    memset(&k, 0, sizeof(k));
    dpm_status_t st = dpm_hpke_derive_keypair(ikm, ikm_len, &k.kp);
    if (st == DPM_OK) {
        k.config_id = config_id;
        k.aead_id = aead_id;
        if (cfg != NULL) {
            memset(cfg, 0, sizeof(*cfg));
            cfg->id = config_id;
            cfg->kem_id = DPM_HPKE_KEM_X25519_SHA256;
            cfg->kdf_id = DPM_HPKE_KDF_HKDF_SHA256;
            cfg->aead_id = aead_id;
            memcpy(cfg->public_key, k.kp.pk, DPM_HPKE_NPK);
        }
        *key = k;
    }
    mbedtls_platform_zeroize(&k, sizeof(k)); /* the secret key */
    return st;
}

dpm_status_t dpm_dap_open_input_share(const dpm_dap_task_t *t, uint8_t role,
                                      const dpm_dap_hpke_key_t *keys, size_t nkeys,
                                      const dpm_dap_report_view_t *r, uint8_t *buf, size_t cap,
                                      dpm_span_t *private_ext, dpm_span_t *input_share,
                                      const char **reason)
{
    if (t == NULL || t->config == NULL || (keys == NULL && nkeys != 0) || r == NULL ||
        buf == NULL || private_ext == NULL || input_share == NULL ||
        (role != DPM_DAP_ROLE_LEADER && role != DPM_DAP_ROLE_HELPER)) {
        return why(reason, "null argument, bad role or task not decoded", DPM_ERR_PARAM);
    }
    const int i = role == DPM_DAP_ROLE_LEADER ? 0 : 1;
    const dpm_dap_hpke_key_t *key = NULL;
    for (size_t k = 0; k < nkeys && key == NULL; k++) {
        key = keys[k].config_id == r->share[i].config_id ? &keys[k] : NULL;
    }
    if (key == NULL) {
        return why(reason, "no HPKE key with the ciphertext's config id", DPM_ERR_UNSUPPORTED);
    }
    if (dpm_hpke_aead_nk(key->aead_id) == 0) {
        return why(reason, "the key's HPKE configuration names an AEAD this code does not have",
                   DPM_ERR_PARAM);
    }
    const dpm_span_t ct = r->share[i].ciphertext;
    if (cap < ct.len) {
        return why(reason, "buffer smaller than the ciphertext", DPM_ERR_BUFFER);
    }
    if (ct.len != 0) {
        memcpy(buf, ct.p, ct.len);
    }
    uint8_t info[DPM_DAP_INFO_BYTES];
    dpm_dap_input_share_info(role, info);
    const dpm_span_t aad[3] = {
        {t->id, DPM_DAP_TASK_ID_BYTES}, {t->config, t->config_len}, r->aad_tail};
    dpm_status_t st = dpm_hpke_open_base(key->aead_id, r->share[i].enc, &key->kp, info,
                                         sizeof(info), aad, 3, buf, ct.len, r->share[i].tag);
    if (st != DPM_OK) {
        return why(reason, "input share does not decrypt",
                   st == DPM_ERR_BUFFER ? st : DPM_ERR_CORRUPT);
    }
    dpm_span_t ext, payload;
    if (dpm_dap_plaintext_decode(buf, ct.len, &ext, &payload) != DPM_OK) {
        return why(reason, "decrypted input share is no PlaintextInputShare", DPM_ERR_PROTOCOL);
    }
    const size_t want = i == 0 ? t->vdaf.leader_share_bytes : t->vdaf.helper_share_bytes;
    if (payload.len != want) {
        return why(reason, "input share has the wrong length for the task's VDAF",
                   DPM_ERR_PROTOCOL);
    }
    *private_ext = ext;
    *input_share = payload;
    return DPM_OK;
}

dpm_status_t dpm_dap_pool_fill(dpm_hpke_pool_t *p, const dpm_dap_task_t *t, const dpm_rng_t *rng)
{
    if (p == NULL || t == NULL) {
        return DPM_ERR_PARAM;
    }
    size_t free_slots = 0;
    for (size_t i = 0; i < p->nslots; i++) {
        free_slots += !p->slots[i].ready;
    }
    if (free_slots < 2) {
        return DPM_ERR_BUFFER;
    }
    uint8_t info[DPM_DAP_INFO_BYTES];
    dpm_dap_input_share_info(DPM_DAP_ROLE_LEADER, info);
    dpm_status_t st = dpm_hpke_pool_fill(p, &t->leader_hpke, info, sizeof(info), rng);
    dpm_dap_input_share_info(DPM_DAP_ROLE_HELPER, info);
    return st == DPM_OK ? dpm_hpke_pool_fill(p, &t->helper_hpke, info, sizeof(info), rng) : st;
}

uint8_t dpm_dap_report_error(dpm_status_t st)
{
    switch (st) {
    case DPM_OK: return 0;
    case DPM_ERR_UNSUPPORTED: return 4; /* hpke_unknown_config_id */
    case DPM_ERR_CORRUPT: return 5;     /* hpke_decrypt_error */
    case DPM_ERR_VERIFY: return 6;      /* vdaf_verify_error */
    default: return 8;                  /* invalid_message */
    }
}
