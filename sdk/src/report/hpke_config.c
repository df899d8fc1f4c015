/* SPDX-License-Identifier: Apache-2.0 */
/* DAP's HpkeConfig and HpkeConfigList (see dpm/expert/hpke.h): what an aggregator publishes at
 * {aggregator}/hpke_config, parsed strictly. */
#include "dpm_internal.h"

#include "dpm/expert/hpke.h"
#include "report/dap_wire.h"

static dpm_status_t why(const char **reason, const char *text, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = text;
    }
    return st;
}

dpm_status_t dpm_hpke_config_check(const dpm_hpke_config_t *cfg, const char **reason)
{
    if (cfg == NULL) {
        return why(reason, "no HPKE configuration", DPM_ERR_PARAM);
    }
    if (cfg->kem_id != DPM_HPKE_KEM_X25519_SHA256) {
        return why(reason, "HPKE KEM is not DHKEM(X25519, HKDF-SHA256)", DPM_ERR_UNSUPPORTED);
    }
    if (cfg->kdf_id != DPM_HPKE_KDF_HKDF_SHA256) {
        return why(reason, "HPKE KDF is not HKDF-SHA256", DPM_ERR_UNSUPPORTED);
    }
    if (cfg->aead_id != DPM_HPKE_AEAD_AES_128_GCM &&
        cfg->aead_id != DPM_HPKE_AEAD_CHACHA20_POLY1305) {
        return why(reason, "HPKE AEAD is neither AES-128-GCM nor ChaCha20-Poly1305",
                   DPM_ERR_UNSUPPORTED);
    }
    uint8_t any = 0;
    for (size_t i = 0; i < DPM_HPKE_NPK; i++) {
        any |= cfg->public_key[i];
    }
    if (any == 0) {
        return why(reason, "HPKE public key is all zero", DPM_ERR_PARAM);
    }
    return DPM_OK;
}

/* One HpkeConfig at the cursor: its ids always, its key if it has the suite's length. */
static void read_config(dpm_rd_t *r, dpm_hpke_config_t *c, size_t *pk_len)
{
    c->id = (uint8_t)dpm_rd_uint(r, 1);
    c->kem_id = (uint16_t)dpm_rd_uint(r, 2);
    c->kdf_id = (uint16_t)dpm_rd_uint(r, 2);
    c->aead_id = (uint16_t)dpm_rd_uint(r, 2);
    const uint8_t *pk = dpm_rd_vec(r, 2, 1, 0xFFFF, pk_len);
    memset(c->public_key, 0, sizeof(c->public_key));
    if (pk != NULL && *pk_len == DPM_HPKE_NPK) {
        memcpy(c->public_key, pk, DPM_HPKE_NPK);
    }
}

dpm_status_t dpm_hpke_config_list_select(const uint8_t *bytes, size_t len, uint16_t prefer_aead,
                                         dpm_hpke_config_t *cfg, const char **reason)
{
    if (bytes == NULL || cfg == NULL) {
        return why(reason, "null argument", DPM_ERR_PARAM);
    }
    dpm_rd_t outer = dpm_rd(bytes, len);
    size_t list_len = 0;
    const uint8_t *list = dpm_rd_vec(&outer, 2, 10, 0xFFFF, &list_len);
    if (!dpm_rd_done(&outer)) {
        return why(reason, "malformed HpkeConfigList", DPM_ERR_PROTOCOL);
    }
    dpm_rd_t r = dpm_rd(list, list_len);
    uint8_t seen[32] = {0}; /* one bit per config id */
    int found = 0;          /* 1: a supported entry, 2: one with the preferred AEAD */
    dpm_hpke_config_t pick;
    memset(&pick, 0, sizeof(pick));
    while (!r.bad && r.pos < r.len) {
        dpm_hpke_config_t c;
        size_t pk_len = 0;
        read_config(&r, &c, &pk_len);
        if (r.bad) {
            break;
        }
        if (seen[c.id >> 3] & (1u << (c.id & 7u))) {
            return why(reason, "HpkeConfigList repeats a config id", DPM_ERR_PROTOCOL);
        }
        seen[c.id >> 3] |= (uint8_t)(1u << (c.id & 7u));
        const int rank = c.aead_id == prefer_aead ? 2 : 1;
        if (found < rank && pk_len == DPM_HPKE_NPK && dpm_hpke_config_check(&c, NULL) == DPM_OK) {
            pick = c;
            found = rank;
        }
    }
    if (!dpm_rd_done(&r)) {
        return why(reason, "malformed HpkeConfigList", DPM_ERR_PROTOCOL);
    }
    if (!found) {
        return why(reason, "no HPKE configuration of the supported suite", DPM_ERR_UNSUPPORTED);
    }
    *cfg = pick;
    return DPM_OK;
}

/* After list_select: strings the two share go to the first one's string section, and an
 * image without this decoder (a device picks from lists) then carries none of its own. */
dpm_status_t dpm_hpke_config_decode(const uint8_t *bytes, size_t len, dpm_hpke_config_t *cfg,
                                    const char **reason)
{
    if (bytes == NULL || cfg == NULL) {
        return why(reason, "null argument", DPM_ERR_PARAM);
    }
    dpm_rd_t r = dpm_rd(bytes, len);
    dpm_hpke_config_t c;
    size_t pk_len = 0;
    read_config(&r, &c, &pk_len);
    if (!dpm_rd_done(&r)) {
        return why(reason, "malformed HpkeConfig", DPM_ERR_PROTOCOL);
    }
    dpm_status_t st = dpm_hpke_config_check(&c, reason);
    if (st == DPM_OK && pk_len != DPM_HPKE_NPK) {
        st = why(reason, "HPKE public key length is not 32 bytes", DPM_ERR_PROTOCOL);
    }
    if (st == DPM_OK) {
        *cfg = c;
    }
    return st;
}

dpm_status_t dpm_hpke_config_encode(const dpm_hpke_config_t *cfg, uint8_t *out, size_t cap,
                                    size_t *len)
{
    if (cfg == NULL || out == NULL || len == NULL) {
        return DPM_ERR_PARAM;
    }
    if (cap < DPM_HPKE_CONFIG_BYTES) {
        return DPM_ERR_BUFFER;
    }
    dpm_wr_t w = dpm_wr(out, cap);
    dpm_wr_uint(&w, cfg->id, 1);
    dpm_wr_uint(&w, cfg->kem_id, 2);
    dpm_wr_uint(&w, cfg->kdf_id, 2);
    dpm_wr_uint(&w, cfg->aead_id, 2);
    dpm_wr_vec(&w, 2, cfg->public_key, DPM_HPKE_NPK);
    *len = w.pos;
    return DPM_OK;
}
