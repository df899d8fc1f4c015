/* SPDX-License-Identifier: Apache-2.0 */
/* roc_hist in the simulator: each device's labelled, scored examples, drawn consistently with
 * the population (population.h), and the population's true binned ROC.
 *
 * A device of a binormal group holds E examples; its block fixes npos (positives), tp (positives
 * scoring above the group's decision threshold T) and fp (negatives above T). Its examples are
 * drawn conditionally on those counts, so the ROC campaign sees the same labels and the same
 * confusion counts as the tuple campaigns:
 *   positives above T: tp draws from N(mu_i, 1) restricted to [T, inf); below: npos - tp draws
 *   restricted to (-inf, T); negatives likewise from N(0, 1) with fp above T.
 * IID groups have mu_i = mu. With a feature shift (noniid auc_sd = S) the device's mu_i =
 * mu + S z_k on the population builder's own grid z_k = -8, -7.9, ..., 8 (weights
 * exp(-z²/2)); given (npos, tp) the grid point is drawn from its exact posterior under the
 * builder's discretized law, Pr[k] ∝ w_k tpr_k^tp (1 - tpr_k)^(npos - tp), then the positives
 * as above with mu_i. This is exactly the law of drawing each device independently.
 *
 * Scores: an example with binormal score x gets s = Phi(x - T) in (0, 1) (a monotone map, so
 * the ROC is the model's; the decision threshold lands at s = 1/2). Bin b of the campaign
 * (edges e_1 < ... < e_{B-1} in Q1.31) is x in [T + Phi^-1(e_b), T + Phi^-1(e_{b+1})), so only
 * the bin of each example is drawn (inversion of the bin probabilities restricted to the side
 * of T); the device then hands the SDK the bin's lower edge as its score (dpm_score_hist_add
 * puts it in exactly that bin). Inversion with the same uniforms means a device's examples are
 * the same for any bin edges.
 *
 * A device of a population = csv(PATH) (population.h) holds the file's rows of its device: its
 * bins are those of its own scores (dpm_score_bin's rule: the number of edges <= the score in
 * Q1.31), positives then negatives, and the SDK is handed the scores themselves; nothing is
 * drawn. Its truth (binned counts, the AUC) is the data's.
 *
 * Randomness: device i of a population of K devices draws from the stream
 * sim_stream_key(sim_stream_key(population_seed ^ ROC_TAG, 0, K), 0, i) (stream.h): fixed for
 * the population, independent of the run, the campaign and the noise seed. Per device: the
 * grid draw (shifted groups only), then one uniform per example in the order tp, npos - tp,
 * fp, rest. */
#ifndef DPM_SIM_ROC_SIM_H
#define DPM_SIM_ROC_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dpm/expert/roc_hist.h"
#include "sim/pop/population.h"
#include "sim/pop/progress.h"
#include "sim/scenario/scenario.h"

#define SIM_ROC_GRID 161 /* z = -8 .. 8 step 0.1: the mixture grid of common/binormal.h */

typedef struct {
    int set;   /* a binormal group, or a group of a population = csv(...) */
    int csv;   /* the latter: a device's examples are its own rows */
    int shift; /* noniid auc_sd > 0 */
    /* cumulative bin probabilities, each row ending at 1: [0] positives >= T, [1] positives
     * < T, [2] negatives >= T, [3] negatives < T (IID, or negatives of a shifted group) */
    double cdf[4][DPM_MAX_BINS];
    /* shifted groups: per grid point, positives >= T and < T; log weight, log tpr, log(1-tpr) */
    double *grid_cdf; /* [SIM_ROC_GRID][2][bins] */
    double logw[SIM_ROC_GRID], log_tpr[SIM_ROC_GRID], log_fnr[SIM_ROC_GRID];
} sim_roc_group_t;

typedef struct {
    uint32_t bins;
    uint32_t edges[DPM_MAX_BINS - 1];
    uint32_t rep_score[DPM_MAX_BINS]; /* a score in each bin: its lower edge (0 for bin 0) */
    uint64_t base_key;                /* of the population's example streams */
    const sim_csv_t *csv;             /* population = csv(...): the file's examples */
    sim_roc_group_t group[SIM_MAX_GROUPS];
} sim_roc_model_t;

/* The model of a population's examples for these edges. 0, or -1 (out of memory, or a group
 * without binormal scores in `groups`). */
int sim_roc_model_init(sim_roc_model_t *m, const sim_scenario_t *sc, const sim_pop_t *pop,
                       const uint32_t *edges, uint32_t nedges);
void sim_roc_model_free(sim_roc_model_t *m);

/* Free a heap-allocated model and its contents and set *m to NULL (nothing if *m is NULL). */
void sim_roc_model_destroy(sim_roc_model_t **m);

/* Device `device` (in block b): its examples' bins, positives then negatives: bin[0 .. npos)
 * are the positives, bin[npos .. E) the negatives. bin holds E = npos + nneg entries. */
void sim_roc_device_bins(const sim_roc_model_t *m, const sim_block_t *b, uint64_t device,
                         uint16_t *bin);

/* Its score histogram through the SDK (dpm_score_hist_init + dpm_score_hist_add per example). */
dpm_status_t sim_roc_device_hist(const sim_roc_model_t *m, const dpm_roc_hist_t *mech,
                                 const sim_block_t *b, uint64_t device, dpm_score_hist_t *h);

/* The population's true per-bin counts over the devices whose population group has
 * include[group] != 0, by realizing every device's examples: O(devices x examples) (threads
 * split the devices; the result does not depend on them). progress (may be NULL) counts the
 * devices done. *devices gets the number of those devices. */
void sim_roc_truth_counts(const sim_roc_model_t *m, const sim_pop_t *pop, const int *include,
                          unsigned threads, sim_progress_t *progress, uint64_t *pos, uint64_t *neg,
                          uint64_t *devices);

/* The same per-bin counts drawn from their law in O(blocks x bins), whatever the number of
 * devices: in distribution exactly those of sim_roc_truth_counts, but another draw (from the
 * stream key, one stream per block), so not the counts the devices of an inprocess run hold.
 * Why it is exact: the devices of a block share (tp, fn, fp, tn), and each device draws its
 * examples' bins independently of every other device. An IID group's block therefore holds
 * count x tp independent draws from the row "positives >= T" (likewise fn, fp, tn): their bin
 * counts are Multinomial(count x tp, row), and independent multinomials add. In a shifted group
 * each device first draws its grid point k from the same posterior (it depends on tp, fn
 * only), so the devices per grid point are Multinomial(count, posterior), and given them the
 * positives at k are Multinomial(n_k x tp, row_k) (negatives do not depend on k). */
void sim_roc_truth_sample(const sim_roc_model_t *m, const sim_pop_t *pop, const int *include,
                          uint64_t key, uint64_t *pos, uint64_t *neg, uint64_t *devices);

/* A binormal population's devices as a population = csv(...) file (sim/scenario/pop_csv.h): a
 * header line, then device_id (the device index), score, label, group, prediction per example
 * of every device of the included binormal groups. The examples are sim_roc_device_bins': the
 * score is the bin's lower edge (rep_score, written to 10 decimals, so that reading it back
 * gives the same Q1.31 score and bin), the prediction its side of the decision threshold (tp,
 * fn, fp, tn). Read back with the same edges it is the same population: the same confusion
 * counts and binned counts, device by device. 0, or -1 on a write error. */
int sim_roc_write_csv(const sim_roc_model_t *m, const sim_scenario_t *sc, const sim_pop_t *pop,
                      const int *include, FILE *f);

/* For a population = csv(...): the AUC of the included groups' pooled examples with the file's
 * own scores (no binning), each device weighted by its copies in the population, ties counted
 * one half (Mann-Whitney). Otherwise: the model's own AUC over the included groups' pooled
 * examples: the probability that a
 * positive example scores above a negative one, with the scores of the model (continuous, no
 * binning, no sampling): sum over groups g, h of w+_g w-_h Phi((mu_g - T_g + T_h) / sqrt(2 +
 * sd_g^2)), weights the groups' expected positives and negatives (size x examples x base rate),
 * sd_g the feature shift's auc_sd. This is what a reader takes "the AUC" to be; the population's
 * binned AUC differs from it by the binning and by the sampling of the examples. NaN without
 * positives or negatives. */
double sim_roc_model_auc(const sim_scenario_t *sc, const sim_pop_t *pop, const int *include);

#endif /* DPM_SIM_ROC_SIM_H */
