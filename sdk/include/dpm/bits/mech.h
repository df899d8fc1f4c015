/* SPDX-License-Identifier: Apache-2.0 */
/* The layout of each mechanism's parameters (the union in dpm_mech_t) and of the report
 * inputs the device calls take (dpauc counts, a ustat example, FedAUC's buffers and session,
 * the memo). Not an API: the fields are the SDK's; an app allocates these structs (inside
 * dpm_device_t, dpm_mech_t, its report inputs) and never reads them. The functions that use
 * them are in dpm/expert/<mechanism>.h. */
#ifndef DPM_BITS_MECH_H
#define DPM_BITS_MECH_H

#include <stddef.h>
#include <stdint.h>

#include "dpm/bits/noise.h"
#include "dpm/port.h"
#include "dpm/stats.h"
#include "dpm/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- tuple --------------------------------------------------------------------------------- */

#define DPM_TUPLE_MAX_METRICS DPM_METRIC_COUNT

typedef enum {
    DPM_TUPLE_MR = 1, /* value by Harmony + binary RR: v' in {-1, +1} */
    DPM_TUPLE_ML = 2, /* value by discrete Laplace on the Q(F) grid: v' integer / 2^F */
} dpm_tuple_kind_t;

typedef struct {
    dpm_tuple_kind_t kind;
    uint32_t groups;   /* d */
    uint32_t nmetrics; /* m */
    dpm_metric_t metrics[DPM_TUPLE_MAX_METRICS];
    uint32_t frac_bits;  /* F, tuple_ml only */
    dpm_grr_t group_grr; /* over d groups */
    union {
        dpm_grr_t rr;          /* tuple_mr: per-metric binary RR */
        dpm_laplace_t lap;     /* tuple_ml: per-metric discrete Laplace, sensitivity 2^(F+1) */
    } value;                   /* by kind */
    dpm_eps_t eps;             /* requested total */
    dpm_eps_t eps_implemented; /* what the quantized parameters give, rounded up */
} dpm_tuple_t;

/* A perturbed report, ready to encode. value[i]: tuple_mr -1 or +1; tuple_ml the noised
 * value on the Q(F) grid (v = 2 * metric - 1 in [-1, 1] times 2^F, plus noise). */
typedef struct {
    uint32_t group;
    uint32_t nmetrics;
    int32_t value[DPM_TUPLE_MAX_METRICS];
} dpm_tuple_report_t;

/* ---- roc_hist ------------------------------------------------------------------------------ */

/* The L1 sensitivity of the histogram to one label change, in counts. */
#define DPM_ROC_HIST_SENSITIVITY 2u

/* The configured mechanism: public parameters only. */
typedef struct {
    dpm_score_bins_t bins;     /* the campaign's score bins */
    dpm_laplace_t lap;         /* sensitivity 2 grid units (integer counts), at eps - group_eps */
    dpm_eps_t eps;             /* requested */
    dpm_eps_t eps_implemented; /* what it really spends, Q16.16 rounded up, <= eps
                                * (== eps without groups: discrete Laplace has no rounding) */
    uint32_t groups;           /* 0: no group; >= 2: the report carries a GRR'd group */
    dpm_eps_t group_eps;       /* requested ε_g of the group's GRR (0 without groups) */
    dpm_grr_t group_grr;       /* over `groups` values at group_eps (groups >= 2 only) */
} dpm_roc_hist_t;

/* A perturbed histogram, ready to encode: pos[b] = true pos[b] + Z, likewise neg[b]. Values
 * can be negative (noise); every value is in [-INT32_MAX, INT32_MAX] (never INT32_MIN).
 * Entries >= bins are 0. */
typedef struct {
    uint32_t bins;
    int32_t pos[DPM_MAX_BINS];
    int32_t neg[DPM_MAX_BINS];
    uint32_t group; /* the reported (randomized) group; 0 without groups */
} dpm_roc_hist_report_t;

/* ---- dpauc --------------------------------------------------------------------------------- */

#define DPM_DPAUC_MAX_N DPM_DPAUC_MAX_THRESHOLDS

typedef enum {
    DPM_DPAUC_PUBLISHED = 0, /* ε / (4N) per count: spends ε / 2 for one label */
    DPM_DPAUC_TIGHT = 1,     /* ε / (2N) per count: spends ε for one label */
} dpm_dpauc_calibration_t;

/* Largest count one cell may hold (as roc_hist): with the noise bound below, a noised count
 * leaves int32 with probability < 2^-90 per cell. */
#define DPM_DPAUC_MAX_COUNT (UINT32_C(1) << 30)

/* The configured mechanism: public parameters only. */
typedef struct {
    uint32_t n;                           /* thresholds N, in [1, DPM_DPAUC_MAX_N] */
    uint32_t thresholds[DPM_DPAUC_MAX_N]; /* strictly increasing Q1.31, <= 2^31 */
    dpm_dpauc_calibration_t calibration;
    dpm_laplace_t lap;         /* sensitivity 4N (PUBLISHED) or 2N (TIGHT) counts, at eps */
    dpm_eps_t eps;             /* requested */
    dpm_eps_t eps_implemented; /* ε for one example's label, Q16.16 rounded up (see top) */
} dpm_dpauc_t;

/* One device's counts at the N thresholds: tp[i] = positives with score >= t_i, fp[i] =
 * negatives with score >= t_i; pos and neg are the totals (tn[i] = neg - fp[i], fn[i] = pos -
 * tp[i]). */
typedef struct {
    uint32_t n;
    uint32_t tp[DPM_DPAUC_MAX_N];
    uint32_t fp[DPM_DPAUC_MAX_N];
    uint32_t pos, neg;
} dpm_dpauc_counts_t;

/* A perturbed report, ready to encode: each of the 4N counts plus its own noise. Values are in
 * [-INT32_MAX, INT32_MAX]; entries >= n are 0. */
typedef struct {
    uint32_t n;
    int32_t tp[DPM_DPAUC_MAX_N];
    int32_t fp[DPM_DPAUC_MAX_N];
    int32_t tn[DPM_DPAUC_MAX_N];
    int32_t fn[DPM_DPAUC_MAX_N];
} dpm_dpauc_report_t;

/* ---- ustat --------------------------------------------------------------------------------- */

typedef enum {
    DPM_USTAT_AUC = 0,               /* bin over k, label public */
    DPM_USTAT_AUC_PRIVATE_LABEL = 1, /* (label, bin) over 2k */
    DPM_USTAT_KENDALL = 2,           /* (bin(x), bin(y)) over k * k */
} dpm_ustat_kernel_t;

/* Levels that may use GRR: their 2^l values must fit DPM_MAX_GRR_K. */
#define DPM_USTAT_MAX_GRR_LEVELS 16

/* One example as the device holds it. AUC kernels and ustat_tree: score and label (0 or 1);
 * KENDALL: score and score2 (label must be 0). Scores in Q1.31, <= 2^31. */
typedef struct {
    dpm_score_t score;
    int label;
    dpm_score_t score2;
} dpm_ustat_example_t;

/* ---- ustat_bins ---------------------------------------------------------------------------- */

typedef struct {
    dpm_ustat_kernel_t kernel;
    uint32_t k;                /* bins per score */
    dpm_grr_t grr;             /* over the kernel's domain: k, 2k or k * k values */
    dpm_eps_t eps;             /* requested */
    dpm_eps_t eps_implemented; /* grr.eps_implemented (<= eps) */
} dpm_ustat_bins_t;

/* A report: value in [0, grr.k), label the public class (AUC kernel; 0 otherwise). */
typedef struct {
    uint32_t value;
    uint32_t label;
} dpm_ustat_bins_report_t;

typedef struct {
    uint32_t depth;                          /* α: scores quantized to 2^depth values */
    uint32_t grr_levels;                     /* levels 1 .. grr_levels use GRR */
    dpm_grr_t grr[DPM_USTAT_MAX_GRR_LEVELS]; /* grr[l - 1] over 2^l values, l <= grr_levels */
    dpm_grr_t rr;                            /* Hadamard levels: binary RR at eps */
    dpm_eps_t eps;                           /* requested */
    dpm_eps_t eps_implemented;               /* max over the oracles in use (<= eps) */
} dpm_ustat_tree_t;

/* ---- fedauc -------------------------------------------------------------------------------- */

/* The four Laplace variants (dpm.v1.FedaucVariant); fedauc_rr has none. */
typedef enum {
    DPM_FEDAUC_VARIANT_NONE = 0, /* fedauc_rr */
    DPM_FEDAUC_LOCAL = 1,        /* LocalLaplace: Δ = the device's largest rank */
    DPM_FEDAUC_GLOBAL = 2,       /* GlobalLaplace: Δ = 2 (M - 1) */
    DPM_FEDAUC_ORTHOGONAL = 3,   /* one shared split of ε between localP and T */
    DPM_FEDAUC_ADAPTIVE = 4,     /* a split per device from its ranks */
} dpm_fedauc_variant_t;

#define DPM_FEDAUC_TOKEN_BYTES 16
#define DPM_FEDAUC_BYTES_PER_EXAMPLE 16u
/* Largest pool of scores a rank reply may describe: doubled ranks stay below 2^32. */
#define DPM_FEDAUC_MAX_TOTAL (UINT32_C(1) << 31)
/* Largest sensitivity of T (ORTHOGONAL/ADAPTIVE), so its Laplace scale fits the sampler. */
#define DPM_FEDAUC_MAX_T_SENSITIVITY (UINT64_C(1) << 40)

/* A campaign's FedAUC parameters, built by dpm_mech_init (public parameters only). */
typedef struct {
    dpm_fedauc_variant_t variant;
    uint32_t score_bits;       /* scores are quantized to [0, 2^score_bits] */
    uint32_t p_share_q16;      /* LOCAL/GLOBAL/ORTHOGONAL: share of ε on localP, Q0.16 */
    dpm_eps_t eps;             /* requested */
    dpm_eps_t eps_p;           /* LOCAL/GLOBAL/ORTHOGONAL: floor(p_share ε), Q16.16 */
    dpm_grr_t rr;              /* fedauc_rr: binary RR (k = 2) */
    dpm_eps_t eps_implemented; /* fedauc_rr: rr.eps_implemented; fedauc_lap: eps */
} dpm_fedauc_t;

/* The caller's memory for one upload: cap entries in each array (cap >= n). scores and perm
 * hold the session from round 1 to round 2; work is scratch for round 2. */
typedef struct {
    uint32_t *scores; /* the quantized scores in upload order */
    uint32_t *perm;   /* perm[j] = the app's index of the example uploaded at position j */
    uint64_t *work;   /* round 2: (R << 32 | j), sorted */
    uint32_t cap;
} dpm_fedauc_buffers_t;

/* One upload, from round 1 to its report. */
typedef struct {
    uint32_t state; /* DPM_FEDAUC_UPLOADED, DPM_FEDAUC_REPORTED, 0 */
    uint32_t campaign_id;
    uint32_t params_hash;
    uint32_t mechanism; /* dpm_mech_id_t */
    uint32_t n;
    uint8_t token[DPM_FEDAUC_TOKEN_BYTES];
    dpm_fedauc_buffers_t buf;
} dpm_fedauc_session_t;

/* ---- memo ---------------------------------------------------------------------------------- */

#define DPM_MEMO_KEY_BYTES 16
#define DPM_MEMO_RECORD_BYTES 28
/* The smallest region dpm_memo_open accepts (on flash: give it a whole erase sector). */
#define DPM_MEMO_MIN_REGION 32u

/* How dpm_memo_open found the secret. */
typedef enum {
    DPM_MEMO_LOADED = 1,   /* a valid record: the same secret as before */
    DPM_MEMO_CREATED = 2,  /* the region was erased: a new secret (first use) */
    DPM_MEMO_REPLACED = 3, /* the region held no valid record (damage or a torn creation): a new
                            * secret; flips made with the old one, if any, start over */
} dpm_memo_origin_t;

typedef struct {
    uint8_t key[DPM_MEMO_KEY_BYTES];
    dpm_memo_origin_t origin;
    uint32_t opened; /* DPM_MEMO_OPENED once the key is loaded or created */
} dpm_memo_t;

#define DPM_MEMO_OPENED 0x534D5044u

#ifdef __cplusplus
}
#endif

#endif /* DPM_BITS_MECH_H */
