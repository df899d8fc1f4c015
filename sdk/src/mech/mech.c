/* SPDX-License-Identifier: Apache-2.0 */
/* The mechanism object: the checks every campaign shares, then the mechanism's own (its ops,
 * mech/registry.c), the budget check; the receipt and the report header every body shares; the
 * collector's check of a report. The mechanisms' own parts live in mech/<m>.c. */
/* dpm_receipt_unmetered is defined here (its declaration is for simulators only). */
#define DPM_SIMULATOR_API 1
#include "dpm_internal.h"

#include "dpm/expert/mech.h"
#include "dpm/expert/noise.h"
#include "dpm/expert/report.h"
#include "dpm/expert/simulator.h"
#include "mech/mech_ops.h"

dpm_status_t dpm_mech_fail(const char **reason, const char *why, dpm_status_t st)
{
    if (reason != NULL) {
        *reason = why;
    }
    return st;
}

uint32_t dpm_fnv_word(uint32_t h, uint32_t w)
{
    for (int i = 0; i < 4; i++) {
        h ^= (w >> (8 * i)) & 0xFFu;
        h *= 16777619u;
    }
    return h;
}

uint32_t dpm_fnv_u64(uint32_t h, uint64_t w)
{
    return dpm_fnv_word(dpm_fnv_word(h, (uint32_t)w), (uint32_t)(w >> 32));
}

static int edges_sorted(const dpm_campaign_t *c)
{
    for (uint32_t i = 1; i < c->nbins; i++) {
        if (c->bin_edges[i] <= c->bin_edges[i - 1]) {
            return 0;
        }
    }
    return 1;
}

dpm_status_t dpm_mech_init(dpm_mech_t *m, const dpm_campaign_t *c, const char **reason)
{
    if (m == NULL || c == NULL) {
        return dpm_mech_fail(reason, "null argument", DPM_ERR_PARAM);
    }
    if (c->eps.q16 == 0 || c->eps.q16 > DPM_EPS_MAX_Q16) {
        return dpm_mech_fail(reason, "epsilon out of range", DPM_ERR_PARAM);
    }
    if (c->nbins > DPM_CAMPAIGN_MAX_EDGES) {
        return dpm_mech_fail(reason, "too many bins", DPM_ERR_PARAM);
    }
    if (c->nthresholds > DPM_CAMPAIGN_MAX_THRESHOLDS) {
        return dpm_mech_fail(reason, "more dpauc thresholds than this build holds", DPM_ERR_PARAM);
    }
    if (!edges_sorted(c)) {
        return dpm_mech_fail(reason, "bin edges not strictly increasing", DPM_ERR_PARAM);
    }
    dpm_mech_t next;
    memset(&next, 0, sizeof(next));
    next.campaign = *c;
    dpm_status_t st = dpm_mech_init_params(&next, c, reason);
    if (st != DPM_OK) {
        return st;
    }
    if (c->budget.q16 < next.eps_implemented) {
        return dpm_mech_fail(reason, "budget smaller than one report", DPM_ERR_BUDGET);
    }
    *m = next;
    return DPM_OK;
}

/* ---- receipts and the report header ---------------------------------------------------------- */

/* The receipt m's report in `period` gets, with sequence number seq. */
static void receipt_fill(const dpm_mech_t *m, uint32_t period, uint32_t seq, uint32_t *w)
{
    w[DPM_RC_CAMPAIGN] = m->campaign.id;
    w[DPM_RC_PERIOD] = period;
    w[DPM_RC_PARAMS] = m->params_hash;
    w[DPM_RC_EPS] = m->eps_implemented;
    w[DPM_RC_SEQ] = seq;
}

void dpm_receipt_issue(dpm_receipt_issuer_t *iss, const dpm_mech_t *m, uint32_t period,
                       dpm_receipt_t *rc)
{
    uint32_t *w = iss->issued.opaque;
    receipt_fill(m, period, w[DPM_RC_SEQ] + 1u, w);
    iss->opaque = 1u;
    if (rc != NULL) {
        *rc = iss->issued;
    }
}

dpm_status_t dpm_receipt_unmetered(dpm_receipt_issuer_t *iss, const dpm_mech_t *m, uint32_t period,
                                   dpm_receipt_t *rc)
{
    if (iss == NULL || m == NULL || rc == NULL) {
        return DPM_ERR_PARAM;
    }
    dpm_receipt_issue(iss, m, period, rc);
    return DPM_OK;
}

const char *dpm_receipt_problem(const dpm_mech_t *m, const dpm_receipt_issuer_t *iss,
                                const dpm_receipt_t *rc)
{
    if (m == NULL || iss == NULL || rc == NULL) {
        return "no mechanism, issuer or receipt (NULL)";
    }
    /* Constant time over the words (the sequence number is no secret, but the comparison costs
     * the same whatever the bytes). */
    uint32_t diff = iss->opaque ^ 1u;
    for (unsigned i = 0; i < DPM_RECEIPT_WORDS; i++) {
        diff |= iss->issued.opaque[i] ^ rc->opaque[i];
    }
    if (diff != 0) {
        return "receipt not issued by this issuer, or already used (one charge buys one report)";
    }
    if (rc->opaque[DPM_RC_CAMPAIGN] != m->campaign.id) {
        return "receipt for another campaign";
    }
    if (rc->opaque[DPM_RC_PARAMS] != m->params_hash ||
        rc->opaque[DPM_RC_EPS] != m->eps_implemented) {
        return "receipt for other mechanism parameters or another epsilon";
    }
    return NULL;
}

int dpm_receipt_ok(const dpm_mech_t *m, const dpm_receipt_issuer_t *iss, const dpm_receipt_t *rc)
{
    return dpm_receipt_problem(m, iss, rc) == NULL;
}

/* The body is built in its own struct rather than in a whole report: a report is 560 bytes
 * (the largest body), which every report of a simulated device zeroed and copied once more. */
dpm_status_t dpm_mech_report_finish(const dpm_mech_t *m, dpm_rand_t *r, dpm_receipt_issuer_t *iss,
                                    const dpm_receipt_t *rc, dpm_status_t st, const void *body,
                                    size_t size, dpm_report_t *out)
{
    uint8_t id[DPM_REPORT_ID_BYTES];
    for (int half = 0; half < 2 && st == DPM_OK; half++) {
        uint64_t w = 0;
        st = dpm_rand_bits(r, 64, &w);
        for (int i = 0; i < 8; i++) {
            id[half * 8 + i] = (uint8_t)(w >> (8 * i));
        }
    }
    if (st != DPM_OK) {
        return st;
    }
    memset(out, 0, sizeof(*out));
    memcpy(out->report_id, id, sizeof(id));
    out->campaign_id = m->campaign.id;
    out->period = rc->opaque[DPM_RC_PERIOD];
    out->mechanism = m->campaign.mechanism;
    out->eps = m->eps_implemented;
    out->params_hash = m->params_hash;
    memcpy(&out->body, body, size);
    iss->opaque = 0; /* used up */
    return DPM_OK;
}

/* ---- the collector's check ------------------------------------------------------------------- */

dpm_status_t dpm_mech_check_report(const dpm_mech_t *m, const dpm_report_t *r, const char **reason)
{
    if (m == NULL || r == NULL) {
        return DPM_ERR_PARAM;
    }
    const char *why = NULL;
    if (r->campaign_id != m->campaign.id) {
        why = "campaign mismatch";
    } else if (r->mechanism != m->campaign.mechanism) {
        why = "mechanism mismatch";
    } else if (r->eps != m->eps_implemented) {
        why = "epsilon mismatch";
    } else if (r->params_hash != m->params_hash) {
        why = "parameter fingerprint mismatch";
    } else {
        return dpm_mech_check_body(m, r, reason);
    }
    return dpm_mech_fail(reason, why, DPM_ERR_PROTOCOL);
}
