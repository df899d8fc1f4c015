/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer target: a report as a collector (or anything else that reads SDK output)
 * receives it: dpm_report_decode, then dpm_mech_check_report against the fixed campaigns of
 * fuzz_fixtures.h. Checked beyond the sanitizers:
 *   - a decoded report whose body matches its mechanism re-encodes, and decodes back to
 *     itself;
 *   - a report that passes a mechanism's check carries that campaign's header and values in
 *     that mechanism's range (the check's own promise, re-checked here independently). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpm/expert/report.h"
#include "dpm/expert/mech.h"
#include "fuzz_fixtures.h"

static dpm_mech_t mechs[FUZZ_NCAMPAIGNS];
static int ready;

static void check_accepted(const dpm_mech_t *m, const dpm_report_t *r)
{
    if (r->campaign_id != m->campaign.id || r->mechanism != m->campaign.mechanism ||
        r->eps != m->eps_implemented || r->params_hash != m->params_hash) {
        abort();
    }
    if (m->campaign.mechanism == DPM_MECH_ID_ROC_HIST) {
        if (r->body.roc_hist.bins != m->params.roc_hist.bins.count) {
            abort();
        }
        for (uint32_t b = 0; b < r->body.roc_hist.bins; b++) {
            if (r->body.roc_hist.pos[b] == INT32_MIN || r->body.roc_hist.neg[b] == INT32_MIN) {
                abort();
            }
        }
        return;
    }
    if (r->body.tuple.group >= m->params.tuple.groups || r->body.tuple.nmetrics != m->params.tuple.nmetrics) {
        abort();
    }
    for (uint32_t i = 0; i < r->body.tuple.nmetrics; i++) {
        int32_t v = r->body.tuple.value[i];
        if ((m->params.tuple.kind == DPM_TUPLE_MR && v != 1 && v != -1) || v == INT32_MIN) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ready) {
        for (int i = 0; i < FUZZ_NCAMPAIGNS; i++) {
            dpm_campaign_t c;
            fuzz_campaign(i, &c);
            if (dpm_mech_init(&mechs[i], &c, NULL) != DPM_OK) {
                abort();
            }
        }
        ready = 1;
    }
    dpm_report_t r, back;
    memset(&r, 0, sizeof(r));
    if (dpm_report_decode(data, size, &r) != DPM_OK) {
        return 0;
    }
    /* The encoder writes the body its mechanism calls for (decode does not tie the two: the
     * check below does), so only a report whose body matches its mechanism round-trips. */
    int roc = r.mechanism == DPM_MECH_ID_ROC_HIST;
    if (roc ? r.body.roc_hist.bins >= 2 && r.body.tuple.nmetrics == 0 : r.body.roc_hist.bins == 0) {
        uint8_t wire[DPM_REPORT_MAX_BYTES];
        size_t len = 0;
        memset(&back, 0xA5, sizeof(back));
        if (dpm_report_encode(&r, wire, sizeof(wire), &len) != DPM_OK ||
            dpm_report_decode(wire, len, &back) != DPM_OK || memcmp(&r, &back, sizeof(r)) != 0) {
            abort();
        }
    }
    for (int i = 0; i < FUZZ_NCAMPAIGNS; i++) {
        const char *reason = NULL;
        dpm_status_t st = dpm_mech_check_report(&mechs[i], &r, &reason);
        if (st == DPM_OK) {
            check_accepted(&mechs[i], &r);
        } else if (st != DPM_ERR_PROTOCOL || reason == NULL) {
            abort();
        }
    }
    return 0;
}
