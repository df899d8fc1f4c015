/* SPDX-License-Identifier: Apache-2.0 */
/* Selection-aware comparisons against the truth over runs (see selection.h). */
#include "sim/devices/selection.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIE 1e-12 /* true gaps this close count as equal (a population with equal groups) */

void sim_selection_init(sim_selection_t *s, double scale)
{
    memset(s, 0, sizeof(*s));
    s->scale = scale;
    s->truth_largest = NAN;
}

static int inside(double lo, double hi, double x)
{
    return lo <= x && x <= hi;
}

void sim_selection_add(sim_selection_t *s, const dpm_pairwise_t *pw, const double *truth)
{
    if (!pw->largest_defined) {
        s->undefined++;
        return;
    }
    double top = 0.0;
    for (uint32_t k = 0; k < pw->npairs; k++) {
        top = fmax(top, fabs(truth[k]));
    }
    int sim = 1, point = 1, cand = 0, false_call = 0;
    for (uint32_t k = 0; k < pw->npairs; k++) {
        const dpm_pairwise_pair_t *p = &pw->pair[k];
        double z = pw->crit_pointwise * p->sd;
        sim &= inside(p->lo, p->hi, truth[k]);
        point &= inside(p->diff - z, p->diff + z, truth[k]);
        cand |= p->candidate && fabs(truth[k]) >= top - TIE;
        false_call |= p->distinguishable && !(p->lo > 0.0 ? truth[k] > 0.0 : truth[k] < 0.0);
    }
    const dpm_pairwise_pair_t *c = &pw->pair[pw->largest_pair];
    double z = pw->crit_pointwise * c->sd, t = truth[pw->largest_pair];
    s->runs++;
    s->simultaneous += (uint32_t)sim;
    s->pointwise_all += (uint32_t)point;
    s->largest += (uint32_t)inside(pw->largest_lo, pw->largest_hi, top);
    s->chosen_pointwise += (uint32_t)inside(c->diff - z, c->diff + z, t);
    s->right_pair += (uint32_t)(fabs(t) >= top - TIE);
    s->in_candidates += (uint32_t)cand;
    s->false_call += (uint32_t)false_call;
    s->overstatement += (pw->largest_abs - top) * s->scale;
    s->stability += pw->stability;
    s->width += (pw->largest_hi - pw->largest_lo) * s->scale;
    s->distinguishable += pw->distinguishable;
    s->truth_largest = top * s->scale;
    s->named[pw->largest_pair]++;
}

void sim_selection_summarize(const sim_selection_t *s, sim_selection_summary_t *out)
{
    double n = s->runs > 0 ? (double)s->runs : NAN;
    out->runs = s->runs;
    out->undefined = s->undefined;
    out->simultaneous = s->simultaneous / n;
    out->pointwise_all = s->pointwise_all / n;
    out->largest = s->largest / n;
    out->chosen_pointwise = s->chosen_pointwise / n;
    out->right_pair = s->right_pair / n;
    out->in_candidates = s->in_candidates / n;
    out->false_call = s->false_call / n;
    out->overstatement = s->overstatement / n;
    out->stability = s->stability / n;
    out->width = s->width / n;
    out->distinguishable = s->distinguishable / n;
    out->truth_largest = s->truth_largest;
    out->rerun_same_pair = 0.0;
    for (uint32_t k = 0; k < DPM_PAIRWISE_MAX_PAIRS; k++) {
        out->rerun_same_pair += (s->named[k] / n) * (s->named[k] / n);
    }
}

void sim_selection_json(const sim_selection_t *s, jw_t *w)
{
    sim_selection_summary_t m;
    sim_selection_summarize(s, &m);
    const char *key[] = {"simultaneous_coverage",
                         "pointwise_all_coverage",
                         "largest_coverage",
                         "chosen_pair_pointwise_coverage",
                         "right_pair",
                         "largest_in_candidates",
                         "false_distinguishable",
                         "overstatement_mean",
                         "stability_mean",
                         "rerun_same_pair",
                         "largest_width_mean",
                         "distinguishable_mean",
                         "truth_largest"};
    const double val[] = {m.simultaneous, m.pointwise_all,   m.largest,    m.chosen_pointwise,
                          m.right_pair,   m.in_candidates,   m.false_call, m.overstatement,
                          m.stability,    m.rerun_same_pair, m.width,      m.distinguishable,
                          m.truth_largest};
    jw_raw(w, "{\"runs\": %u, \"runs_undefined\": %u", m.runs, m.undefined);
    for (size_t i = 0; i < sizeof(val) / sizeof(val[0]); i++) {
        jw_raw(w, ", ");
        jw_key(w, key[i]);
        jw_num(w, val[i], 6);
    }
    jw_raw(w, "}");
}

void sim_selection_line(const sim_selection_t *s, char *buf, size_t cap)
{
    sim_selection_summary_t m;
    sim_selection_summarize(s, &m);
    snprintf(buf, cap,
             "all gaps: simultaneous cover %.0f%% (pointwise together %.0f%%); largest: right "
             "pair %.0f%%, interval cover %.0f%%",
             100.0 * m.simultaneous, 100.0 * m.pointwise_all, 100.0 * m.right_pair,
             100.0 * m.largest);
}

sim_selection_ext_t *sim_selection_ext_new(uint32_t n, const char *const *names, double scale)
{
    sim_selection_ext_t *x = n >= 1 && n <= SIM_SELECTION_FAMILIES ? calloc(1, sizeof(*x)) : NULL;
    for (uint32_t i = 0; x != NULL && i < n; i++) {
        snprintf(x->name[i], sizeof(x->name[i]), "%s", names[i]);
        sim_selection_init(&x->family[i], scale);
    }
    if (x != NULL) {
        x->n = n;
    }
    return x;
}

void sim_selection_ext_json(const sim_cfg_t *cfg, const void *ext, jw_t *w)
{
    (void)cfg;
    const sim_selection_ext_t *x = ext;
    jw_raw(w, ",\n   \"selection\": [");
    for (uint32_t i = 0; i < x->n; i++) {
        jw_raw(w, "%s{\"metric\": ", i ? ", " : "");
        jw_str(w, x->name[i]);
        jw_raw(w, ", \"all\": ");
        sim_selection_json(&x->family[i], w);
        jw_raw(w, "}");
    }
    jw_raw(w, "]");
}

const sim_selection_t *sim_selection_of(const sim_result_t *res, uint32_t family)
{
    const sim_selection_ext_t *x = res->ext;
    int ours = res->cfg.m != NULL && res->cfg.m->ext_json == sim_selection_ext_json;
    return ours && x != NULL && family < x->n ? &x->family[family] : NULL;
}
