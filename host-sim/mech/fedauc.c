/* SPDX-License-Identifier: Apache-2.0 */
/* fedauc_rr and fedauc_lap on the host (host_mech.h): two rounds (an upload phase, then ranks:
 * collector/fedauc), sums in the tuple rows (fedauc_sums.h), the estimate of
 * estimate/fedauc.h. */
#include "mech/base/est_json.h"
#include "mech/base/fedauc_sums.h"
#include "mech/host_mech.h"

static int state_init(coll_campaign_state_t *st, const coll_campaign_t *c)
{
    (void)c;
    st->fa.on = 1;
    return 0;
}

/* A FedAUC report: its rows of the tuple sums (see fedauc_sums.h). */
static int delta_add(coll_deltas_t *ds, const dpm_report_t *rep, uint32_t stored_group)
{
    (void)stored_group;
    int64_t n[COLL_FEDAUC_ROWS][2], s[COLL_FEDAUC_ROWS][2];
    double ss[COLL_FEDAUC_ROWS][2];
    coll_delta_t *d = NULL;
    if (coll_fedauc_report_rows(rep, n, s, ss) != 0 ||
        (d = coll_delta_for(ds, rep->campaign_id, rep->period, 0, COLL_FEDAUC_ROWS)) == NULL) {
        return -1;
    }
    coll_delta_t next = *d; /* all of the report or nothing */
    for (uint32_t m = 0; m < COLL_FEDAUC_ROWS; m++) {
        for (uint32_t g = 0; g < 2; g++) {
            int64_t dn = (int64_t)next.n[m][g];
            if (coll_add_i64(&dn, n[m][g]) != 0 || dn < 0 ||
                coll_add_i64(&next.s[m][g], s[m][g]) != 0) {
                return -1;
            }
            next.n[m][g] = (uint64_t)dn;
            next.ss[m][g] += ss[m][g];
        }
    }
    next.reports++;
    *d = next;
    return 0;
}

/* The ranges depend on each upload's ranks (bounds.h): the rule, not numbers. */
static void bounds_json(jw_t *w, const coll_campaign_t *c)
{
    jw_raw(w, ", \"max_examples\": %u, \"ranges\": ", c->bounds.max_examples);
    jw_str(w, c->mech.campaign.mechanism == DPM_MECH_ID_FEDAUC_RR
                  ? "localP in [0, n], localSum2 between the sums of the localP smallest "
                    "and largest ranks sent"
                  : "localP in [-k_P, n + k_P], localSum2 in [-k_S, S + k_S] or T in "
                    "[-A - k_S, A + k_S], k for delta 2^-41 at the report's own scales");
}

static void estimate_json(jw_t *w, const coll_campaign_t *c, const coll_campaign_state_t *st,
                          const host_json_ctx_t *q)
{
    host_no_metrics_json(w);
    coll_fedauc_json(w, c, &st->fa, st->reports, &st->fa_phase, q->one_period, q->period,
                     q->confidence);
}

static const char *const kCompare[] = {"fedauc.reports", "fedauc.dropouts", "fedauc.auc_unbiased",
                                       "fedauc.sd", NULL};

#define FEDAUC_MODULE(NAME, ID)                                                                    \
    {                                                                                              \
        .name = (NAME), .id = (ID), .flags = HOST_MECH_TWO_ROUND | HOST_MECH_MAX_EXAMPLES,         \
        .trust_model = "local DP for labels: the collector ranks the uploaded scores, so it sees " \
                       "them",                                                                     \
        .privacy_unit = "one example's label (label-DP); the scores are uploaded in clear",        \
        .state_init = state_init, .delta_add = delta_add, .bounds_json = bounds_json,              \
        .estimate_json = estimate_json, .compare = kCompare,                                       \
    }

const host_mech_t host_mech_fedauc_rr = FEDAUC_MODULE("fedauc_rr", DPM_MECH_ID_FEDAUC_RR);
const host_mech_t host_mech_fedauc_lap = FEDAUC_MODULE("fedauc_lap", DPM_MECH_ID_FEDAUC_LAP);
