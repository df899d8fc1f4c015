/* SPDX-License-Identifier: Apache-2.0 */
/* A FedAUC campaign through the real SDK code, for tests: K devices holding M examples in all,
 * round 1 on each device (dpm_fedauc_prepare, the upload encoded), a server that decodes every
 * upload, ranks the pool (dpm_fa_rank2) and encodes each device's reply, and the device's
 * validation of its reply (dpm_fedauc_accept). The tests then make the round 2 reports. */
#ifndef DPM_TEST_FEDAUC_FIXTURE_H
#define DPM_TEST_FEDAUC_FIXTURE_H

#include <stdint.h>

#include "dpm/dpm.h"
#include "dpm/expert/fedauc.h"
#include "estimate/fedauc.h"

typedef enum { FA_IID = 0, FA_NONIID = 1 } fa_partition_t;

typedef struct {
    uint32_t k, m;
    uint32_t *start;     /* device d holds examples [start[d], start[d + 1]) (k + 1 entries) */
    dpm_score_t *scores; /* per example, grouped by device */
    uint8_t *labels;
    uint64_t *ids;
    uint32_t *qscores, *perm; /* the devices' round 1 buffers (grouped like the examples) */
    uint64_t *work;
    dpm_fedauc_session_t *sess; /* k */
    dpm_fedauc_ranks_t *rk;     /* k */
    uint32_t *pool, *rank2;     /* the server's view, in upload order */
    uint8_t *msg;
    size_t msg_cap;
    dpm_fa_ranking_t mom;
    uint64_t upload_bytes, reply_bytes; /* summed over the devices in the last fa_fix_rounds */
} fa_fix_t;

/* Room for k devices and m examples (equal blocks: device d gets m / k, the first m % k one
 * more). 0, or -1 on out of memory. */
int fa_fix_alloc(fa_fix_t *f, uint32_t k, uint32_t m);
void fa_fix_free(fa_fix_t *f);

/* Binormal examples (negatives N(0, 1), positives N(mu, 1), mu = sqrt(2) Phi^-1(auc), label 1
 * with probability base_rate), scores = logistic of the latent value in Q1.31, ids distinct,
 * spread over the devices IID (random order) or NONIID (by score). Deterministic in seed. */
void fa_fix_binormal(fa_fix_t *f, double auc, double base_rate, fa_partition_t part,
                     uint64_t seed);

/* Round 1, the server and dpm_fedauc_accept for every device (ids: f->ids for fedauc_rr). The
 * first error, or DPM_OK. */
dpm_status_t fa_fix_rounds(fa_fix_t *f, const dpm_mech_t *m, dpm_rand_t *r);

/* Device d's buffers. */
dpm_fedauc_buffers_t fa_fix_buffers(const fa_fix_t *f, uint32_t d);

/* The true AUC of every example, with the scores quantized as the campaign quantizes them. */
double fa_fix_truth(const fa_fix_t *f, const dpm_mech_t *m);

#endif /* DPM_TEST_FEDAUC_FIXTURE_H */
