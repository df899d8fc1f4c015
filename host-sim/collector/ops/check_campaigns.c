/* SPDX-License-Identifier: Apache-2.0 */
#include "collector/ops/check_campaigns.h"

#include <stdio.h>
#include <stdlib.h>

#include "aggregator/dap_tasks.h"
#include "collector/ingest/campaigns.h"
#include "dpm/expert/noise.h"
#include "mech/base/composition.h"
#include "mech/host_mech.h"

static void print_campaign(const coll_campaigns_t *cs, size_t i)
{
    const dpm_mech_t *m = &cs->c[i].mech;
    printf("campaign %u: %s, %u groups, %u metric(s), eps %.6f (implemented %.6f), "
           "fingerprint %08x\n",
           m->campaign.id, coll_mechanism_name(m->campaign.mechanism), m->campaign.groups,
           m->campaign.nmetrics, m->campaign.eps.q16 / 65536.0, m->eps_implemented / 65536.0,
           m->params_hash);
    printf("  privacy unit: %s; trust model: %s\n", host_privacy_unit(&m->campaign),
           host_mech_of(&m->campaign)->trust_model);
}

/* The ε0 a hybrid task's devices really give each label (the SDK's RR, rounded toward less
 * privacy loss), 0 for a task without label RR. */
static dpm_eps_t local_eps_of(const dap_task_spec_t *t)
{
    dpm_grr_t rr;
    return t->t.local_eps != 0 && dpm_rr_init(&rr, t->t.local_eps) == DPM_OK ? rr.eps_implemented
                                                                             : 0u;
}

static void print_dap_task(const dap_task_spec_t *t)
{
    const int gauss = t->t.dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN;
    printf("dap task %s: prio3 %s (length %u), central eps %.6f per report, ", t->id_b64, t->vdaf,
           t->t.vdaf.length, t->t.central_eps / 65536.0);
    if (gauss) {
        printf("discrete Gaussian: rho %.9g (zCDP, eps at delta %.3g), l2_sensitivity_sq %llu, "
               "sigma2 %llu, ",
               t->rho, t->delta, (unsigned long long)t->sensitivity,
               (unsigned long long)t->t.central_sigma2);
    } else {
        printf("sensitivity %llu, ", (unsigned long long)t->sensitivity);
    }
    printf("min_batch_size %llu, time_precision %llu s\n", (unsigned long long)t->t.min_batch_size,
           (unsigned long long)t->t.time_precision);
    printf("  privacy unit: one device's report (one per task and app period, a period of "
           "time_precision in the device's ledger: a collection over k periods holds k of a "
           "device's reports, k x eps); trust model: two aggregators (DAP, central discrete "
           "%s): %s holds while one aggregator is honest, nothing if both collude\n",
           gauss ? "Gaussian" : "Laplace", gauss ? "rho-zCDP, so (eps, delta)-DP," : "eps");
    if (local_eps_of(t) != 0) {
        printf("  hybrid: each device also flips every example's label by randomized response at "
               "local eps0 %.6f (as the SDK implements local_eps %.6f) over %u score bins before "
               "sharding: eps0 label-DP for each example even if both aggregators collude (its "
               "score, the bins' example counts and its group are not covered)\n",
               local_eps_of(t) / 65536.0, t->t.local_eps / 65536.0, t->t.local_bins);
    }
}

/* The device-level multiplier (composition.h): FedAUC uploads scores in clear; a report of
 * several examples each protected alone counts max_examples times. */
static uint32_t device_factor(const coll_campaign_t *c)
{
    const host_mech_t *hm = host_mech_of(&c->mech.campaign);
    return (hm->flags & HOST_MECH_TWO_ROUND) != 0      ? 0u
           : (hm->flags & HOST_MECH_MAX_EXAMPLES) != 0 ? c->opts.max_examples
                                                       : 1u;
}

/* A DAP task as the SDK's ledger charges it (dpm/expert/device_dap.h): its central ε once per
 * time_precision; its unit is one device's whole measurement. */
static host_comp_item_t dap_item(const dap_task_spec_t *t)
{
    uint32_t period =
        t->t.time_precision < 0xFFFFFFFFu ? (uint32_t)t->t.time_precision : 0xFFFFFFFFu;
    host_comp_item_t it = {t->t.central_eps, t->t.central_eps, period, 1u, 1};
    return it;
}

static void print_composition(const coll_campaigns_t *cs, const dap_tasks_t *ts,
                              const host_comp_row_t *rows, const host_comp_total_t *tot)
{
    const uint32_t w = tot->window_seconds;
    printf("composition (basic: each item's eps as it states it, added up), one device in all "
           "%zu campaign(s) and %zu dap task(s), over %u s:\n",
           cs->n, ts->n, w);
    for (size_t i = 0; i < cs->n + ts->n; i++) {
        const host_comp_row_t *r = &rows[i];
        if (i < cs->n) {
            printf("  campaign %u:", cs->c[i].mech.campaign.id);
        } else {
            printf("  dap task %s:", ts->t[i - cs->n].id_b64);
        }
        printf(" at most %.6f per period of %u s (%u report(s)); %u period(s) aligned with the "
               "window, %u in any window; device-level x%u%s\n",
               r->per_period_q16 / 65536.0, r->period_seconds, r->reports, r->periods_aligned,
               r->periods_any, r->factor, r->factor == 0 ? " (no device-level bound)" : "");
    }
    printf("  total: %.6f per %u s aligned with the periods, at most %.6f in any %u s: the bound "
           "for a datum every item protects at its own unit (one example's label under tuple "
           "and roc_hist alike)\n",
           tot->aligned_q16 / 65536.0, w, tot->any_q16 / 65536.0, w);
    if (ts->n > 0) {
        printf("  of which two aggregators: %.6f aligned, at most %.6f in any %u s (local DP: "
               "%.6f, at most %.6f). That part holds while one aggregator is honest; if both "
               "collude they read those measurements in clear and nothing bounds it\n",
               tot->central.aligned_q16 / 65536.0, tot->central.any_q16 / 65536.0, w,
               (tot->aligned_q16 - tot->central.aligned_q16) / 65536.0,
               (tot->any_q16 - tot->central.any_q16) / 65536.0);
        /* what the hybrid tasks keep if both collude: their labels' eps0, added up */
        uint64_t local_any = 0;
        size_t plain = 0;
        for (size_t i = 0; i < ts->n; i++) {
            local_any += (uint64_t)local_eps_of(&ts->t[i]) * rows[cs->n + i].periods_any;
            plain += local_eps_of(&ts->t[i]) == 0;
        }
        if (local_any > 0) {
            printf("  if both aggregators collude: the hybrid tasks' labels keep at most %.6f in "
                   "any %u s (each task's local eps0 per period, added up; one example's label), "
                   "%s\n",
                   local_any / 65536.0, w,
                   plain > 0 ? "the other tasks' measurements nothing"
                             : "their scores and counts nothing");
        }
    }
    /* basic composition adds the Gaussian tasks' eps and deltas; zCDP adds their rho, tighter */
    double delta = 0.0, rho = 0.0, dmin = 1.0, eps = 0.0;
    for (size_t i = 0; i < ts->n; i++) {
        const dap_task_spec_t *t = &ts->t[i];
        const host_comp_row_t *r = &rows[cs->n + i];
        if (t->t.dp_mechanism == DPM_DAP_DP_DISCRETE_GAUSSIAN) {
            delta += t->delta * r->periods_any;
            rho += dap_task_rho(t) * r->periods_any;
            eps += (double)r->per_period_q16 * r->periods_any / 65536.0;
            dmin = t->delta < dmin ? t->delta : dmin;
        }
    }
    if (delta > 0.0) {
        printf("  with discrete Gaussian tasks these totals are (eps, delta)-DP: delta at most "
               "%.3g in any %u s (each report's delta, added up)\n",
               delta, w);
        printf("  the discrete Gaussian tasks alone, composed under zCDP (rho adds up): rho "
               "%.6f in any %u s, so eps %.6f at delta %.3g (in place of their %.6f above)\n",
               rho, w, dap_zcdp_eps(rho, dmin), dmin, eps);
    }
    if (tot->device_bounded) {
        printf("  device-level: at most %.6f in any %u s (a campaign whose unit is one example "
               "of several in a report counts max_examples times its eps)",
               tot->device_any_q16 / 65536.0, w);
        if (ts->n > 0) {
            printf("; two aggregators' part %.6f", tot->central.device_any_q16 / 65536.0);
        }
        printf("\n");
    } else {
        printf("  device-level: no bound (a FedAUC campaign uploads its scores in clear)\n");
    }
    printf("  (the app's device cap, dpm_policy_cap_t in dpm/device.h, bounds what a device "
           "really spends, charged for both trust models alike: at most max_eps per device "
           "period, twice that in any window)\n");
}

int coll_check_campaigns(const char *path, coll_campaigns_t *cs)
{
    char err[512];
    if (coll_campaigns_load(path, cs, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-collector: %s\n", err);
        return 2;
    }
    dap_tasks_t *ts = calloc(1, sizeof(*ts));
    const size_t cap = cs->n + DAP_MAX_TASKS + 1u;
    host_comp_item_t *items = calloc(cap, sizeof(*items));
    host_comp_row_t *rows = calloc(cap, sizeof(*rows));
    int rc = 0;
    if (ts == NULL || items == NULL || rows == NULL) {
        fprintf(stderr, "dpm-collector: out of memory\n");
        rc = 2;
    } else if (cs->dap_tasks > 0 && dap_tasks_load(path, ts, err, sizeof(err)) != 0) {
        fprintf(stderr, "dpm-collector: %s\n", err);
        rc = 2;
    }
    for (size_t i = 0; rc == 0 && i < cs->n; i++) {
        print_campaign(cs, i);
        items[i] = host_comp_item_of_mech(&cs->c[i].mech, device_factor(&cs->c[i]));
    }
    for (size_t i = 0; rc == 0 && i < ts->n; i++) {
        print_dap_task(&ts->t[i]);
        items[cs->n + i] = dap_item(&ts->t[i]);
    }
    host_comp_total_t tot;
    if (rc == 0 && cs->n + ts->n > 0) {
        if (host_composition(items, cs->n + ts->n, 0, rows, &tot) != 0) {
            fprintf(stderr, "dpm-collector: a campaign or task has no period or no epsilon\n");
            rc = 2;
        } else {
            print_composition(cs, ts, rows, &tot);
        }
    }
    free(ts);
    free(items);
    free(rows);
    return rc;
}
