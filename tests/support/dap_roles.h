/* SPDX-License-Identifier: Apache-2.0 */
/* The DAP roles' tests (test_dap_helper.c, test_dap_leader.c): a SumVec task of the aggregator
 * room (six counts up to 20, central ε 1, minimum batch 5, from a fixed seed), N + 1 reports
 * made by the SDK's device calls (report i counts (5 i + 3 k) mod 21 in entry k; want[] sums
 * the first N), and the collector's HPKE key. */
#ifndef DAP_ROLES_H
#define DAP_ROLES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aggregator/device.h"
#include "aggregator/task.h"
#include "dpm/expert/hpke.h"
#include "test_rng.h"

#define ROLES_LENGTH 6u
#define ROLES_MAXV 20u
#define ROLES_N 10u
#define ROLES_MIN_BATCH 5u
#define ROLES_SENSITIVITY 20u

typedef struct {
    agg_task_t task;
    dpm_dap_task_t t;
    uint8_t reports[ROLES_N + 1][4096];
    size_t report_len[ROLES_N + 1];
    int64_t want[ROLES_LENGTH];
    dpm_dap_hpke_key_t collector_key;
    dpm_hpke_config_t collector;
} roles_t;

static inline roles_t *roles_new(void)
{
    roles_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    dpm_prio3_t v;
    const char *why = NULL;
    assert_int_equal(dpm_prio3_sumvec_init(&v, 2, ROLES_LENGTH, ROLES_MAXV, 4), DPM_OK);
    assert_int_equal(agg_task_make(&f->task, &v, DPM_EPS_ONE, ROLES_MIN_BATCH, 91, &why), 0);
    assert_int_equal(agg_task_decode(&f->task, &f->t), DPM_OK);
    agg_device_t *dev = agg_device_new(&f->task, &f->t);
    assert_non_null(dev);
    for (uint32_t i = 0; i <= ROLES_N; i++) {
        uint64_t m[ROLES_LENGTH];
        for (uint32_t k = 0; k < ROLES_LENGTH; k++) {
            m[k] = (i * 5u + k * 3u) % (ROLES_MAXV + 1u);
            f->want[k] += i < ROLES_N ? (int64_t)m[k] : 0;
        }
        test_rng_t t;
        test_rng_seed(&t, 700u + i);
        assert_int_equal(agg_device_sumvec(dev, &f->task, test_rng_port(&t), m, ROLES_LENGTH, &why),
                         DPM_OK);
        memcpy(f->reports[i], dev->report, dev->report_len);
        f->report_len[i] = dev->report_len;
    }
    agg_device_free(dev);
    uint8_t ikm[32] = {42};
    f->collector_key.config_id = 9;
    f->collector_key.aead_id = DPM_HPKE_AEAD_AES_128_GCM;
    assert_int_equal(dpm_hpke_derive_keypair(ikm, sizeof(ikm), &f->collector_key.kp), DPM_OK);
    f->collector.id = 9;
    f->collector.kem_id = DPM_HPKE_KEM_X25519_SHA256;
    f->collector.kdf_id = DPM_HPKE_KDF_HKDF_SHA256;
    f->collector.aead_id = DPM_HPKE_AEAD_AES_128_GCM;
    memcpy(f->collector.public_key, f->collector_key.kp.pk, DPM_HPKE_NPK);
    return f;
}

/* The reports' batch bucket (they share the device's clock) and a wall clock of that bucket. */
static inline uint64_t roles_bucket(const roles_t *f)
{
    dpm_dap_report_view_t r;
    assert_int_equal(dpm_dap_report_decode(f->reports[0], f->report_len[0], &r, NULL), DPM_OK);
    return r.time;
}

static inline uint64_t roles_now(const roles_t *f)
{
    return (roles_bucket(f) + 1u) * f->t.time_precision;
}

#endif
