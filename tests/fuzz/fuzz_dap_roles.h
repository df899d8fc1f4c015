/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP roles' fuzz task (fuzz_dap_helper.c, fuzz_dap_leader.c) and their seeds
 * (make_seeds.c): a SumVec of 6 counts up to 20 with central ε 1 and a minimum batch of 2
 * (aggregator/task.h, from a fixed seed), reports made by the SDK's device calls at the device's
 * fixed clock (an UploadRequest), and the leader's AggregationJobInitReq and an AggregateShareReq
 * for them, as a real leader sends them. */
#ifndef FUZZ_DAP_ROLES_H
#define FUZZ_DAP_ROLES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aggregator/dap_msg.h"
#include "aggregator/device.h"
#include "aggregator/job.h"
#include "aggregator/task.h"
#include "dpm/port_hpke.h"
#include "mbedtls/sha256.h"
#include "test_rng.h"

#define FUZZ_ROLES_LENGTH 6u
#define FUZZ_ROLES_REPORTS 3u
#define FUZZ_ROLES_SENSITIVITY 20u

/* The task. 0, or -1. */
static inline int fuzz_roles_task(agg_task_t *k, dpm_dap_task_t *t)
{
    dpm_prio3_t v;
    return dpm_prio3_sumvec_init(&v, 2, FUZZ_ROLES_LENGTH, 20, 4) == DPM_OK &&
                   agg_task_make(k, &v, DPM_EPS_ONE, 2, 97, NULL) == 0 &&
                   agg_task_decode(k, t) == DPM_OK
               ? 0
               : -1;
}

/* Report i on dev (its measurement: (i + e) mod 21 for entry e, its randomness seeded by i). */
static inline dpm_status_t fuzz_roles_report(agg_device_t *dev, const agg_task_t *k, uint32_t i)
{
    uint64_t m[FUZZ_ROLES_LENGTH];
    for (uint32_t e = 0; e < FUZZ_ROLES_LENGTH; e++) {
        m[e] = (i + e) % 21u;
    }
    test_rng_t r;
    test_rng_seed(&r, 900u + i);
    return agg_device_sumvec(dev, k, test_rng_port(&r), m, FUZZ_ROLES_LENGTH, NULL);
}

/* The collector's HPKE configuration both fuzz targets seal to (id 3, from fixed bytes). */
static inline int fuzz_roles_collector(dpm_hpke_config_t *c)
{
    static const uint8_t ikm[32] = {7};
    dpm_hpke_keypair_t kp;
    memset(c, 0, sizeof(*c));
    if (dpm_hpke_derive_keypair(ikm, sizeof(ikm), &kp) != DPM_OK) {
        return -1;
    }
    c->id = 3;
    c->kem_id = DPM_HPKE_KEM_X25519_SHA256;
    c->kdf_id = DPM_HPKE_KDF_HKDF_SHA256;
    c->aead_id = DPM_HPKE_AEAD_AES_128_GCM;
    memcpy(c->public_key, kp.pk, DPM_HPKE_NPK);
    memset(&kp, 0, sizeof(kp));
    return 0;
}

/* An UploadRequest of reports first .. first + n - 1 (as fuzz_roles_job makes them) into
 * out[0, cap). Its length, or 0. */
static inline size_t fuzz_roles_upload(const agg_task_t *k, const dpm_dap_task_t *t, uint32_t first,
                                       uint32_t n, uint8_t *out, size_t cap)
{
    agg_device_t *dev = agg_device_new(k, t);
    size_t len = 0;
    int ok = dev != NULL;
    for (uint32_t i = first; ok && i < first + n; i++) {
        ok = fuzz_roles_report(dev, k, i) == DPM_OK && dev->report_len <= cap - len;
        if (ok) {
            memcpy(out + len, dev->report, dev->report_len);
            len += dev->report_len;
        }
    }
    agg_device_free(dev);
    return ok ? len : 0;
}

/* The leader's AggregationJobInitReq for reports first .. first + n - 1 into out[0, cap)
 * (report i's measurement: (i + k) mod 21 for entry k); checksum (if not NULL) XORs the
 * SHA-256 of their ids, *bucket their batch bucket. Its length, or 0. */
static inline size_t fuzz_roles_job(const agg_task_t *k, const dpm_dap_task_t *t, uint32_t first,
                                    uint32_t n, uint8_t *out, size_t cap, uint8_t *checksum,
                                    uint64_t *bucket)
{
    agg_device_t *dev = agg_device_new(k, t);
    agg_role_t leader;
    memset(&leader, 0, sizeof(leader));
    uint8_t *state = malloc(t->vdaf.state_bytes);
    dap_agg_job_init_req_t head;
    memset(&head, 0, sizeof(head));
    size_t len = 0;
    int ok = dev != NULL && state != NULL &&
             agg_role_init(&leader, t, DPM_DAP_ROLE_LEADER, &k->key[0], k->verify_key) == 0;
    ok = ok && dap_msg_agg_job_init_req_encode(&head, out, cap, &len) == DPM_OK;
    for (uint32_t i = first; ok && i < first + n; i++) {
        dpm_dap_report_view_t rv;
        size_t add = 0;
        uint8_t code = 0;
        ok = fuzz_roles_report(dev, k, i) == DPM_OK &&
             dpm_dap_report_decode(dev->report, dev->report_len, &rv, NULL) == DPM_OK &&
             agg_role_leader_init(&leader, dev->report, dev->report_len, state, out + len,
                                  cap - len, &add, &code) == DPM_OK;
        if (ok && checksum != NULL) {
            uint8_t h[32];
            ok = mbedtls_sha256(rv.report_id, DPM_DAP_REPORT_ID_BYTES, h, 0) == 0;
            for (int b = 0; b < 32; b++) {
                checksum[b] ^= h[b];
            }
        }
        if (ok && bucket != NULL) {
            *bucket = rv.time;
        }
        len += add;
    }
    agg_role_free(&leader);
    agg_device_free(dev);
    free(state);
    return ok ? len : 0;
}

/* An AggregateShareReq for `count` reports of the batch [bucket, bucket + 1) with checksum. Its
 * length, or 0. */
static inline size_t fuzz_roles_share_req(uint64_t bucket, uint64_t count, const uint8_t *checksum,
                                          uint8_t *out, size_t cap)
{
    dap_agg_share_req_t r;
    memset(&r, 0, sizeof(r));
    r.collection_job_req.query.batch_mode = DPM_DAP_BATCH_TIME_INTERVAL;
    r.collection_job_req.query.interval.start = bucket;
    r.collection_job_req.query.interval.duration = 1;
    r.batch_selector = r.collection_job_req.query;
    r.report_count = count;
    r.checksum = checksum;
    uint8_t coll[64];
    size_t coll_len = 0, len = 0;
    if (dap_msg_collection_job_req_encode(&r.collection_job_req, coll, sizeof(coll), &coll_len) !=
        DPM_OK) {
        return 0;
    }
    r.collection_job_req.encoded.p = coll;
    r.collection_job_req.encoded.len = coll_len;
    return dap_msg_agg_share_req_encode(&r, out, cap, &len) == DPM_OK ? len : 0;
}

#endif
