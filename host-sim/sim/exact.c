/* SPDX-License-Identifier: Apache-2.0 */
/* Exact mode: aggregate-level sampling (see exact.h). */
#include "sim/exact.h"

#include <math.h>
#include <string.h>

#include "sim/sim_rng.h"

#define TWO32 4294967296.0
/* Device index of the exact-mode stream of a run: no real device has it. */
#define EXACT_STREAM_DEVICE UINT64_MAX

/* floor(a / b) for b > 0. */
static int64_t floor_div(int64_t a, int64_t b, int64_t *rem)
{
    int64_t q = a / b, r = a - q * b;
    if (r < 0) {
        q -= 1;
        r += b;
    }
    *rem = r;
    return q;
}

/* Sum of the kept reports' values of one block (before the Laplace noise, added per group). */
static int64_t kept_values(sim_rng_t *rng, const sim_noise_t *nz, uint64_t kept, uint32_t num,
                           uint32_t den)
{
    if (!nz->ml) {
        /* Harmony coin Bernoulli(x), then RR keeping it with b: Pr[+1] = x b + (1 - x)(1 - b) */
        double b = nz->keep_v / TWO32, nb = nz->other_v / TWO32;
        double p = ((double)num * b + (double)(den - num) * nb) / (double)den;
        uint64_t plus = sim_rng_binomial(rng, kept, p);
        return 2 * (int64_t)plus - (int64_t)kept;
    }
    /* the device's randomized rounding of v = 2x - 1 to Q(F): floor plus Bernoulli(frac) */
    int64_t rem = 0;
    int64_t scaled = (2 * (int64_t)num - (int64_t)den) * ((int64_t)1 << nz->frac_bits);
    int64_t q = floor_div(scaled, (int64_t)den, &rem);
    uint64_t up = sim_rng_binomial(rng, kept, (double)rem / (double)den);
    return (int64_t)kept * q + (int64_t)up;
}

/* Flipped reports of each source group spread uniformly over the other d - 1 groups. */
static void spread_flips(sim_rng_t *rng, uint32_t d, const uint64_t *out, uint64_t *in)
{
    for (uint32_t g = 0; g < d; g++) {
        uint64_t rest = out[g];
        uint32_t left = d - 1;
        for (uint32_t h = 0; h < d; h++) {
            if (h == g) {
                continue;
            }
            uint64_t c = left == 1 ? rest : sim_rng_binomial(rng, rest, 1.0 / left);
            in[h] += c;
            rest -= c;
            left--;
        }
    }
}

/* roc_hist: every cell's sum is its true count plus a sum of n discrete Laplace variables
 * (n = reporting devices), drawn in the devices' order: pos[0 .. B), then neg[0 .. B). */
static int exact_roc(const sim_cfg_t *cfg, uint32_t run, sim_agg_t *agg, uint64_t *words)
{
    sim_rng_t rng;
    sim_rng_init(&rng, sim_cfg_device_key(cfg, run, EXACT_STREAM_DEVICE));
    if (sim_agg_init(agg, cfg) != 0) {
        return -1;
    }
    uint32_t B = cfg->roc_mech.bins.count;
    uint64_t n = cfg->roc_devices;
    for (uint32_t b = 0; b < B; b++) {
        agg->roc.pos[b] = (int64_t)cfg->roc_pos[b] + sim_rng_dlap_sum(&rng, n, cfg->roc_scale);
    }
    for (uint32_t b = 0; b < B; b++) {
        agg->roc.neg[b] = (int64_t)cfg->roc_neg[b] + sim_rng_dlap_sum(&rng, n, cfg->roc_scale);
    }
    agg->roc.reports = n;
    if (words != NULL) {
        *words = sim_rng_words(&rng);
    }
    return 0;
}

int sim_exact_run(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run, sim_agg_t *agg,
                  uint64_t *words)
{
    if (cfg->roc) {
        return exact_roc(cfg, run, agg, words);
    }
    const sim_noise_t *nz = &cfg->noise;
    uint32_t d = cfg->d;
    uint64_t kept[SIM_MAX_GROUPS] = {0}, out[SIM_MAX_GROUPS] = {0}, in[SIM_MAX_GROUPS] = {0};
    sim_rng_t rng;
    sim_rng_init(&rng, sim_cfg_device_key(cfg, run, EXACT_STREAM_DEVICE));
    if (sim_agg_init(agg, cfg) != 0) {
        return -1;
    }
    double a = nz->keep_g / TWO32;
    for (size_t i = 0; i < pop->nblocks; i++) {
        const sim_block_t *b = &pop->block[i];
        if (!sim_cfg_participates(cfg, b)) {
            continue;
        }
        uint32_t g = (uint32_t)cfg->group_map[b->group];
        uint64_t k = sim_rng_binomial(&rng, b->count, a);
        if (nz->ml && k > (uint64_t)(INT64_MAX >> (nz->frac_bits + 2))) {
            return -1; /* kept * 2^F could leave int64 */
        }
        kept[g] += k;
        out[g] += b->count - k;
        for (uint32_t j = 0; j < cfg->nmetrics; j++) {
            uint32_t m = cfg->metrics[j] - 1u;
            sim_acc_add(&agg->m[j].sum[g], kept_values(&rng, nz, k, b->num[m], b->den[m]));
        }
    }
    spread_flips(&rng, d, out, in);
    for (uint32_t h = 0; h < d; h++) {
        for (uint32_t j = 0; j < cfg->nmetrics; j++) {
            dpm_disp_agg_t *ag = &agg->m[j];
            ag->count[h] = kept[h] + in[h];
            ag->total += kept[h] + in[h];
            if (!nz->ml) {
                uint64_t plus = sim_rng_binomial(&rng, in[h], 0.5); /* a fair coin through RR */
                sim_acc_add(&ag->sum[h], 2 * (int64_t)plus - (int64_t)in[h]);
            } else if (nz->t_kept == nz->t_flip) {
                sim_acc_add(&ag->sum[h], sim_rng_dlap_sum(&rng, kept[h] + in[h], nz->t_kept));
            } else {
                sim_acc_add(&ag->sum[h], sim_rng_dlap_sum(&rng, kept[h], nz->t_kept));
                sim_acc_add(&ag->sum[h], sim_rng_dlap_sum(&rng, in[h], nz->t_flip));
            }
        }
    }
    if (words != NULL) {
        *words = sim_rng_words(&rng);
    }
    return 0;
}
