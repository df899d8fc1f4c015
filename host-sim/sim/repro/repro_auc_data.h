/* SPDX-License-Identifier: Apache-2.0 */
/* Synthetic scored examples for the AUC reproductions (repro_dpauc.c, repro_ustat.c,
 * repro_auc_compare.c), as the specs prescribe for offline runs (sdk/docs/dpauc.md §Offline recipe,
 * sdk/docs/ustat.md §Offline targets): binormal scores s = sigmoid(mu_y + z), z ~ N(0, 1), mu_0 =
 * 0, mu_1 = sqrt(2) Phi^-1(AUC), with exact class sizes, in Q1.31 as a device holds them; or Beta
 * scores per class (Bell et al.'s sanity setup). Also: the exact AUC of the examples (Mann-Whitney,
 * ties 1/2), a uniform assignment to devices, and a device's random source on its own stream (the
 * SDK's dpm_rand_t over common/stream.h, as dpm-sim's devices). */
#ifndef DPM_SIM_REPRO_AUC_DATA_H
#define DPM_SIM_REPRO_AUC_DATA_H

#include <stdint.h>

#include "dpm/expert/noise.h"
#include "common/stream.h"

typedef struct {
    uint32_t n, npos;
    uint32_t *score; /* Q1.31, < 2^31 */
    uint8_t *label;  /* positives first: label[i] = i < npos */
    uint32_t *device; /* device of example i (auc_data_assign), or NULL */
} auc_data_t;

/* npos positives then nneg negatives with binormal scores of this AUC, from `seed`. 0 or -1. */
int auc_data_binormal(auc_data_t *d, uint32_t npos, uint32_t nneg, double auc, uint64_t seed);
/* Scores Beta(a1, b1) for positives and Beta(a0, b0) for negatives. 0 or -1. */
int auc_data_beta(auc_data_t *d, uint32_t npos, uint32_t nneg, double a1, double b1, double a0,
                  double b0, uint64_t seed);
void auc_data_free(auc_data_t *d);

/* The exact AUC of the scores (ties 1/2), O(n log n). NaN with an empty class. */
double auc_data_exact(const auc_data_t *d);
/* The AUC of the scores quantized to `bins` uniform bins, bin = min(bins - 1, floor(s bins)),
 * ties 1/2: the target of a binned mechanism. */
double auc_data_binned(const auc_data_t *d, uint32_t bins);

/* Assign the examples to `devices` devices: `per` each in a uniform random order when per > 0
 * (n = devices per), else uniformly at random (the FHAUC paper's parties). 0 or -1. */
int auc_data_assign(auc_data_t *d, uint32_t devices, uint32_t per, uint64_t seed);

/* A device's random source: its own stream (key) under the SDK's bit reader. */
typedef struct {
    sim_stream_t stream;
    dpm_rng_t port;
    dpm_rand_t r;
} auc_device_rand_t;

int auc_device_rand(auc_device_rand_t *d, uint64_t key);

#endif /* DPM_SIM_REPRO_AUC_DATA_H */
