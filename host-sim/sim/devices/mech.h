/* SPDX-License-Identifier: Apache-2.0 */
/* The mechanism interface of the simulator: everything dpm-sim knows about one mechanism is in
 * one module (sim/mech_<name>.c) that fills a sim_mech_t, registered by one line in
 * sim/devices/mechs.c. The farm (inprocess), exact mode, network mode, the results, the outputs and
 * replay are generic: they only call these hooks.
 *
 * A module says:
 *   check         what its scenario campaigns need (keys, groups), with defaults filled in
 *   init          how a configuration (campaign x ε) builds the device mechanism: the SDK's
 *                 dpm_mech_t (cfg->mech) from the campaign, as a device builds it, and the
 *                 server's estimator parameters from the mechanism's own integers
 *   prepare       what truth is for this population (and any per-population model)
 *   participates  which devices of the population report
 *   report        how a device's input is built from its population block (its statistics)
 *                 and turned into a report by the SDK on the device's own random stream
 *   agg_*         the server's sums of reports
 *   exact         how one run's aggregate is drawn directly, distributed as the sum of the
 *                 device reports (exact mode)
 *   estimate      how a run's aggregate becomes estimates of its items (quantities with a truth:
 *                 group means, gaps, the AUC, ...) with intervals
 *   (optional)    extra JSON / CSV outputs, a console summary, the check of a collector's own
 *                 estimate in network mode, the description of a replayed report, its keys in the
 *                 collector's campaigns file.
 *
 * State: a configuration's mechanism state lives inside sim_cfg_t (state.bytes, at most
 * SIM_STATE_BYTES) and a run's sums inside sim_agg_t (data.bytes, at most SIM_AGG_BYTES): both are
 * plain values, copied with the struct (heap memory a module allocates in prepare is shared by
 * copies and freed once by release). A module keeps its own types there, e.g.
 *     typedef struct { ... } my_state_t;
 *     static my_state_t *state(const sim_cfg_t *cfg) { return (my_state_t *)cfg->state.bytes; }
 * with a compile-time check that it fits: SIM_MECH_STATE(my_state_t, my) declares both (and
 * SIM_MECH_AGG(my_agg_t, my) the views agg_of / agg_c of a run's sums). */
#ifndef DPM_SIM_MECH_H
#define DPM_SIM_MECH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "aggregator/device.h"
#include "aggregator/task.h"
#include "mech/base/fedauc_phase.h"
#include "common/json_write.h"
#include "dpm/expert/mech.h"
#include "dpm/expert/report.h"
#include "sim/pop/population.h"
#include "sim/scenario/scenario.h"
#include "sim/pop/sim_rng.h"

#define SIM_STATE_BYTES 16384u
#define SIM_AGG_BYTES 32768u /* roc_hist_groups: per-group second moments */
#define SIM_MAX_THREADS 16u

/* C99 compile-time check (a negative array size fails). */
#define SIM_STATIC_ASSERT(cond, tag) typedef char sim_static_assert_##tag[(cond) ? 1 : -1]

/* A module's typed view st_of(cfg) of its configuration state, checked to fit. */
#define SIM_MECH_STATE(type, tag)                                                                  \
    SIM_STATIC_ASSERT(sizeof(type) <= SIM_STATE_BYTES, tag##_state_fits);                          \
    static inline type *st_of(const sim_cfg_t *cfg)                                                \
    {                                                                                              \
        return (type *)cfg->state.bytes;                                                           \
    }

/* A module's typed views agg_of(agg) / agg_c(agg) of a run's sums, checked to fit. */
#define SIM_MECH_AGG(type, tag)                                                                    \
    SIM_STATIC_ASSERT(sizeof(type) <= SIM_AGG_BYTES, tag##_agg_fits);                              \
    static inline type *agg_of(sim_agg_t *agg)                                                     \
    {                                                                                              \
        return (type *)agg->data.bytes;                                                            \
    }                                                                                              \
    static inline const type *agg_c(const sim_agg_t *agg)                                          \
    {                                                                                              \
        return (const type *)agg->data.bytes;                                                      \
    }

/* Raw storage aligned for any of the modules' types. */
typedef union {
    unsigned char bytes[SIM_STATE_BYTES];
    uint64_t align_u64;
    double align_double;
    long double align_ld;
    void *align_ptr;
} sim_state_t;

typedef union {
    unsigned char bytes[SIM_AGG_BYTES];
    uint64_t align_u64;
    double align_double;
    long double align_ld;
    void *align_ptr;
} sim_agg_data_t;

/* One run's sums: the reports added and the mechanism's own aggregate. */
typedef struct {
    uint64_t reports; /* reports added (decoded, checked) */
    uint64_t dropped; /* devices that sent nothing (an SDK DPM_ERR_RANGE, e.g. tuple_ml overflow) */
    sim_agg_data_t data;
} sim_agg_t;

/* A quantity a configuration estimates, and its truth in the population. */
typedef struct {
    char metric[16]; /* "tpr", "auc", ... */
    char kind[16];   /* "group", "gap", "auc", "auc_binned", ... */
    char name[2 * 32 + 2];
    int g, h;     /* campaign groups it concerns (-1: none) */
    double truth; /* the value the estimate is compared with */
} sim_item_t;

/* One run's estimate of an item: value, interval, predicted standard deviation (NaN when the
 * estimator refused, e.g. an estimated group size <= 0), and the interval's flags
 * (estimate/ci_flags.h: 0 = its calibrated claim). */
typedef struct {
    double est, lo, hi, sd;
    unsigned flags;
} sim_item_run_t;

struct sim_mech;
struct sim_result;

/* One simulated configuration: a scenario campaign at one ε over one population. */
typedef struct {
    const struct sim_mech *m;
    const sim_scenario_t *sc;
    const sim_campaign_spec_t *spec;
    uint32_t campaign_index, eps_index;
    dpm_eps_t eps;
    uint64_t seed;                      /* base seed of the devices' streams (sim_cfg_device_key) */
    uint32_t d;                         /* groups measured */
    int32_t group_map[SIM_MAX_GROUPS];  /* population group -> campaign group, -1: not measured */
    uint32_t pop_group[SIM_MAX_GROUPS]; /* campaign group -> population group */
    /* init */
    dpm_mech_t mech;        /* the SDK's mechanism of the campaign (when checked) */
    int checked;            /* 1: every report passes dpm_mech_check_report(&mech) first */
    int paper;              /* 1: a paper split, REPRODUCTION ONLY (not the stated ε) */
    double eps_implemented; /* what one report spends (+inf: no finite ε) */
    char label[96];
    /* set by the caller between init and prepare (0 when not) */
    int exact_only; /* only exact-mode runs follow: prepare may draw the truth from its law */
    int progress;   /* prepare may draw a progress line on stderr (progress.h) */
    /* prepare */
    uint64_t reporting; /* devices that report */
    uint32_t nitems;
    sim_item_t *items; /* [nitems], heap (sim_cfg_release) */
    sim_state_t state; /* the module's own */
} sim_cfg_t;

/* Network mode of a two-round mechanism (FedAUC): how a device reaches the collector. Round 1:
 * upload(msg) posts the device's upload, and the hook returns DPM_ERR_UNDEFINED (no report
 * yet); round 2: the device runs round 1 again on the same stream (the same shuffle and token)
 * and ranks(token) fetches the collector's rank reply instead of the in-process server's. */
typedef struct sim_exchange {
    int round; /* 1 or 2 */
    int (*upload)(void *ctx, const uint8_t *msg, size_t len);
    int (*ranks)(void *ctx, const uint8_t *token, uint8_t *reply, size_t cap, size_t *len);
    void *ctx;
} sim_exchange_t;

typedef struct sim_mech {
    const char *name; /* the scenario's `mechanism =` */
    dpm_mech_id_t id; /* the wire id */
    const char *what; /* one line: what a device sends */

    /* Scenario campaign c (generic keys parsed, groups defaulted): check the keys this mechanism
     * needs or refuses and fill its defaults. 0, or -1 with a message and the line at fault. */
    int (*check)(const sim_scenario_t *sc, sim_campaign_spec_t *c, int *line, char *err,
                 size_t errcap);

    /* Build the configuration (cfg's generic fields are set): mech / checked / paper,
     * eps_implemented, label and the module's state. 0, or -1 with a message (a campaign the
     * SDK refuses, e.g. an ε too small). */
    int (*init)(sim_cfg_t *cfg, char *err, size_t errcap);
    /* Per population: truth, reporting, the items (sim_cfg_items). threads may split the work.
     * 0, or -1 with a message. */
    int (*prepare)(sim_cfg_t *cfg, const sim_pop_t *pop, unsigned threads, char *err,
                   size_t errcap);
    /* Free what prepare allocated beyond the items (may be NULL). */
    void (*release)(sim_cfg_t *cfg);

    /* 1 if the devices of block b report in this configuration. */
    int (*participates)(const sim_cfg_t *cfg, const sim_block_t *b);
    /* Device `device` of block b in run `run`: its statistics from the block, then the SDK's
     * report on r (its own stream). DPM_ERR_RANGE: the device sends nothing. */
    dpm_status_t (*report)(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                           uint32_t run, dpm_rand_t *r, dpm_report_t *rep);

    void (*agg_init)(const sim_cfg_t *cfg, sim_agg_t *agg);
    /* Add a decoded report (already checked against the campaign when cfg->checked).
     * DPM_ERR_PROTOCOL for a report the collector would reject. */
    dpm_status_t (*agg_add)(const sim_cfg_t *cfg, sim_agg_t *agg, const dpm_report_t *rep);
    dpm_status_t (*agg_merge)(const sim_cfg_t *cfg, sim_agg_t *dst, const sim_agg_t *src);

    /* Exact mode: one run's aggregate (agg_init'ed) drawn from rng. 0, or -1 on an overflow. */
    int (*exact)(const sim_cfg_t *cfg, const sim_pop_t *pop, sim_rng_t *rng, sim_agg_t *agg);

    /* One run's estimates of the items (out[nitems], preset to NaN); ext as made by ext_new. */
    void (*estimate)(const sim_cfg_t *cfg, const sim_agg_t *agg, uint32_t run, sim_item_run_t *out,
                     void *ext);

    /* ---- optional (NULL: none) --------------------------------------------------------- */
    /* Per-configuration results beyond the items (roc_hist: the curve and its bands). */
    void *(*ext_new)(const sim_cfg_t *cfg, uint32_t runs);
    void (*ext_free)(void *ext);
    /* `, "key": {...}` inside the configuration's object of results.json. */
    void (*ext_json)(const sim_cfg_t *cfg, const void *ext, jw_t *w);
    /* A CSV of its own: file name, header columns after the common ones, rows (each row starts
     * with `prefix`, the common columns). */
    const char *ext_csv_name;
    const char *ext_csv_header;
    void (*ext_csv)(const sim_cfg_t *cfg, const void *ext, FILE *f, const char *prefix);
    /* The console line's tail after the configuration's label (the headline numbers). */
    void (*summary)(const struct sim_result *res, char *buf, size_t cap);
    /* Network mode of a two-round mechanism: the period as our devices' uploads made it (their
     * ranking, every upload reported: `reports`), for the collector's module to estimate our
     * sums as the collector estimates its own (netmode.c). */
    void (*net_period)(const sim_cfg_t *cfg, uint64_t reports, coll_fedauc_period_t *ph);
    /* Replay: the device's statistics and its report, one line each. */
    void (*describe)(const sim_cfg_t *cfg, const sim_block_t *b, const dpm_report_t *rep, FILE *f);
    /* `dpm-sim campaigns`: the campaign's mechanism-specific keys of the collector's file. */
    void (*campaign_keys)(const sim_scenario_t *sc, const sim_campaign_spec_t *c, FILE *f);
    /* Network mode of a two-round mechanism: `report` with the rounds through x (above). */
    dpm_status_t (*report_rounds)(const sim_cfg_t *cfg, const sim_block_t *b, uint64_t device,
                                  uint32_t run, dpm_rand_t *r, dpm_report_t *rep,
                                  const sim_exchange_t *x);
    /* Inprocess mode of a mechanism whose devices send no dpm.v1 report (the two-aggregator
     * mode: DAP reports): run `run` whole in this process into agg, every device through the
     * SDK's device calls and the server side on their bytes, instead of the farm (report,
     * agg_add); *reports gets the reports made, *rng_bytes the device randomness drawn. 0, or
     * -1 with a message. */
    int (*inprocess_run)(const sim_cfg_t *cfg, const sim_pop_t *pop, uint32_t run, sim_agg_t *agg,
                         uint64_t *reports, uint64_t *rng_bytes, char *err, size_t errcap);
    /* Its network mode (sim/run/netmode_dap.h: a real leader and helper): whether a deployed
     * task t with that sensitivity measures this configuration (its VDAF, ε and sensitivity;
     * 0, or -1 with what differs); device `device` of block b in run `run`: its report for
     * task k into d, as inprocess_run makes it (*rng_bytes counts its randomness; DPM_ERR_RANGE:
     * the device sends nothing; another error with *why: a refusal); the collected sums
     * (sums[t's output length], exact sums plus both aggregators' noise) into agg. */
    int (*dap_fits)(const sim_cfg_t *cfg, const dpm_dap_task_t *t, uint64_t sensitivity, char *err,
                    size_t errcap);
    dpm_status_t (*dap_report)(const sim_cfg_t *cfg, const agg_task_t *k, agg_device_t *d,
                               const sim_block_t *b, uint64_t device, uint32_t run,
                               uint64_t *rng_bytes, const char **why);
    void (*dap_collected)(const sim_cfg_t *cfg, const int64_t *sums, sim_agg_t *agg);
} sim_mech_t;

#endif /* DPM_SIM_MECH_H */
