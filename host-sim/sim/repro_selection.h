/* SPDX-License-Identifier: Apache-2.0 */
/* Part of `make repro` (run by repro_disparity.c into disparity.json / disparity.md): the
 * selection-aware disparities (estimate/pairwise.h) over many simulated campaigns of populations
 * never used to build them, in dpm-sim's exact mode: tuple_mr and tuple_ml (group means) and
 * roc_hist_groups (group AUCs), groups equal, close, spread, many, unbalanced; ε from 0.5 to 8;
 * group sizes known or estimated. Per population and metric (sim/selection.h):
 *   table selection_coverage (self-checks): the simultaneous intervals hold every true gap at
 *     once (two-sided binomial p >= 1e-6 against 0.95) and the interval for the largest |gap|
 *     holds the true largest at least as often (one-sided: it is conservative);
 *   table selection_old (shown): what the old output did on the same runs: the pointwise
 *     intervals read together, the largest estimate's own pointwise interval (the removed
 *     max_disparity), how often it named the truly largest pair and by how much it overstated
 *     the largest gap, beside the bootstrap stability and the largest's interval width. */
#ifndef DPM_SIM_REPRO_SELECTION_H
#define DPM_SIM_REPRO_SELECTION_H

#include "sim/repro_cells.h"
#include "sim/repro_disparity.h"

/* Run every population into r (tables declared here). 0, or -1 on an error (said on stderr). */
int repro_selection(const repro_opts_t *o, repro_t *r);

#endif /* DPM_SIM_REPRO_SELECTION_H */
