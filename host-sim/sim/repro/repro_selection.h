/* SPDX-License-Identifier: Apache-2.0 */
/* Part of `make repro` (run by repro_disparity.c into disparity.json / disparity.md): the
 * selection-aware disparities (estimate/pairwise.h) over many simulated campaigns of populations
 * never used to build them, in dpm-sim's exact mode: tuple_mr and tuple_ml (group means) and
 * roc_hist_groups (group AUCs), groups equal, close, spread, many, unbalanced; ε from 0.1 to 16;
 * group sizes known or estimated. Per population and metric (sim/devices/selection.h):
 *   table selection_coverage (self-checks): the simultaneous intervals hold every true gap at
 *     once (two-sided binomial p >= 1e-6 against 0.95) and the interval for the largest |gap|
 *     holds the true largest at least as often (one-sided: it is conservative);
 *   table selection_old (shown): what the old output did on the same runs: the pointwise
 *     intervals read together, the largest estimate's own pointwise interval (the removed
 *     max_disparity), how often it named the truly largest pair and by how much it overstated
 *     the largest gap, beside the bootstrap stability and the largest's interval width.
 *
 * And make demo's headline AUC (.make/demo_report.py: auc_unbinned and its interval for the
 * model's AUC, unbinned_ci_total), table demo_auc: the demo's own scenario
 * (host-sim/scenarios/demo.scn, its roc_hist campaign, 200,000 devices), each draw a new
 * population (population seed: new examples, so their sampling is in it), one exact-mode run
 * each: the headline covers the model's AUC as its flags claim (repro_demo_auc_holds); shown
 * beside it, the old headline (the binned AUC's interval) and the unbinned interval at the 10
 * bins the demo had before. */
#ifndef DPM_SIM_REPRO_SELECTION_H
#define DPM_SIM_REPRO_SELECTION_H

#include <stdint.h>

#include "sim/repro/repro_cells.h"
#include "sim/run/session.h"

/* What repro_disparity passes on from its options (repro_disparity.h). */
typedef struct {
    const char *data_dir; /* host-sim/scenarios: demo.scn */
    int quick;            /* fewer runs: seconds, for tests; not the reproduction */
    int progress;         /* progress line on stderr */
    unsigned threads;
} repro_selection_opts_t;

/* The repro tables' usual session: sc in exact mode, quiet, at `threads` with the progress line
 * when `progress`. sim_session_run's result (err set on failure). */
int repro_session_exact(const sim_scenario_t *sc, unsigned threads, int progress, sim_session_t *s,
                        char *err, size_t errcap);

/* Run every population into r (tables declared here). 0, or -1 on an error (said on stderr). */
int repro_selection(const repro_selection_opts_t *o, repro_t *r);

/* The demo's headline AUC over `draws` new populations of DATA_DIR/demo.scn with `bins` uniform
 * bins (0: as shipped): how often each interval holds the model's AUC. 0, or -1 with a message
 * on stderr. tests/stat/test_demo_auc.c runs it too (fewer draws). */
typedef struct {
    uint32_t n;            /* draws */
    uint32_t headline;     /* auc_unbinned's interval for the model's AUC (unbinned_ci_total,
                            * noise + sampling + interpolation bound) holds it */
    uint32_t headline_flagged;  /* draws whose headline interval has a flag (ci_flags.h) */
    uint32_t headline_no_claim; /* of those, flags without a coverage claim */
    unsigned headline_flags;    /* every flag any draw's headline interval had */
    uint32_t old_headline; /* the binned AUC's noise + sampling interval (ci_total) holds it */
} repro_demo_auc_t;
int repro_demo_auc(const char *data_dir, uint32_t bins, uint32_t draws, unsigned threads,
                   repro_demo_auc_t *out);

/* Whether t holds its headline's claim (estimate/ci_flags.h): no draw flagged, two-sided binomial
 * p >= 1e-6 against 0.95; some flagged "at least", one-sided (coverage not below 0.95); any draw
 * without a claim fails. *p: the p-value checked. */
int repro_demo_auc_holds(const repro_demo_auc_t *t, double *p);

#endif /* DPM_SIM_REPRO_SELECTION_H */
